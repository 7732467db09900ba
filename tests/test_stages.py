"""The stage profile adds wall time per stage, gives nested work to the outermost stage, survives a
round trip through its file and rejects unknown stage names."""
import json

import pytest

from ancer_lite.core import stages


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.delenv(stages.ENV_FILE, raising=False)
    stages.reset()
    yield
    stages.reset()


class FakeClock:
    """time.perf_counter that only moves when told to."""
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_outermost_stage_owns_nested_time(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(stages.time, "perf_counter", clock)
    with stages.stage(stages.CERTIFY):
        clock.now += 2.0
    with stages.stage(stages.SELECTION):
        clock.now += 1.0
        with stages.stage(stages.CERTIFY):  # counted as selection
            clock.now += 3.0
    t = stages.totals()
    assert t["certify"] == {"seconds": 2.0, "calls": 1}
    assert t["selection"] == {"seconds": 4.0, "calls": 1}
    assert all(t[s]["calls"] == 0 for s in ("training", "optimization", "memory", "figures"))


def test_stage_is_released_when_the_block_raises():
    with pytest.raises(RuntimeError):
        with stages.stage(stages.MEMORY):
            raise RuntimeError("boom")
    with stages.stage(stages.FIGURES):
        pass
    assert stages.totals()["memory"]["calls"] == 1 and stages.totals()["figures"]["calls"] == 1


def test_timed_decorator_keeps_the_function():
    @stages.timed(stages.TRAINING)
    def fit(a, b=2):
        """doc"""
        return a + b

    assert fit(1, b=3) == 4 and fit.__name__ == "fit" and fit.__doc__ == "doc"
    assert stages.totals()["training"]["calls"] == 1


def test_unknown_stage_names_the_value():
    with pytest.raises(ValueError, match="stage must be one of .* got 'warmup'"):
        with stages.stage("warmup"):
            pass
    with pytest.raises(ValueError, match="got 'warmup'"):
        stages.timed("warmup")


def test_file_round_trip_and_environment(tmp_path, monkeypatch):
    assert stages.write() is None  # no file named: nothing written
    path = tmp_path / "stages.json"
    monkeypatch.setenv(stages.ENV_FILE, str(path))
    with stages.stage(stages.OPTIMIZATION):  # the first stage to end writes the file
        pass
    assert path.exists() and stages.read(path)["optimization"]["calls"] == 1
    assert stages.read(tmp_path / "absent.json")["certify"] == {"seconds": 0.0, "calls": 0}
    (tmp_path / "bad.json").write_text(json.dumps({"warmup": {"seconds": 1, "calls": 1}}))
    with pytest.raises(ValueError, match="unknown stages \\['warmup'\\]"):
        stages.read(tmp_path / "bad.json")
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary left beside it


def test_instrumented_entry_points():
    """The package's expensive steps are the ones the profile names (one wrapper each)."""
    from ancer_lite.core import certify, memory, rotated_memory
    from ancer_lite.methods import optimize, rancer, ucan
    from ancer_lite.models import train
    from ancer_lite.report import figures
    from ancer_lite.runs import selection
    from ancer_lite.studies.ucan_study import select_all
    for fn in (certify.Smooth.certify, selection.select_settings, figures.save_fig, memory.certify_stream, memory.algorithm1,
               optimize.optimize_isotropic, optimize.optimize_ancer, rancer.rancer_parameters, selection.select_rancer,
               rotated_memory.certify_stream_rotated, train.train_classifier, ucan.train_ucan, ucan.certify,
               select_all):
        assert hasattr(fn, "__wrapped__"), fn.__qualname__
