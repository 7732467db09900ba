"""Run folders verify on reuse: `run_method` called again on a folder refuses
other inputs, labels, indices, model, settings, N, α, seed or starting point, a replaced θ and a folder of
unknown origin, naming what differs; the same run is reused and a stopped one resumes."""
import json

import numpy as np
import pandas as pd
import pytest
import torch

from ancer_lite.methods.registry import OptimSettings
from ancer_lite.models.small import MLP
from ancer_lite.runs import manifest
from ancer_lite.runs.experiment import run_method

SETTINGS = OptimSettings(chunk=4).with_budget(2, 8)
KW = dict(n0=10, n=100, alpha=0.01, num_classes=3, seed=1)


@pytest.fixture(scope="module")
def toy(toy_classifier):
    return toy_classifier(4, 0)


def run(toy, folder, method="isotropic", **changes):
    model, x, y, idx = toy
    args = dict(model=model, x=x, y=y, indices=idx, noise="gaussian", theta0=0.25, method=method, settings=SETTINGS,
                folder=folder, **KW)
    return run_method(**{**args, **changes})


def test_the_same_run_is_reused_and_the_manifest_records_theta(tmp_path, toy):
    first = run(toy, tmp_path)
    held = json.loads((tmp_path / "run.json").read_text())
    assert held["theta_sha256"] == manifest.file_digest(tmp_path / "theta.npy")
    assert held["method"] == "isotropic" and held["n"] == KW["n"]
    pd.testing.assert_frame_equal(first, run(toy, tmp_path))
    # the memory policy is applied to the logged certificates on every call, so it may change
    run(toy, tmp_path, policy="abstain")


@pytest.mark.parametrize("change, named", [
    (lambda t: dict(x=t[1] + 0.01), "inputs"),
    (lambda t: dict(y=(t[2] + 1) % 3), "labels"),
    (lambda t: dict(indices=t[3] + 10), "indices"),
    (lambda t: dict(n=101), "n"),
    (lambda t: dict(alpha=0.05), "alpha"),
    (lambda t: dict(theta0=0.5), "theta0"),
    (lambda t: dict(seed=2), "seed"),
    (lambda t: dict(settings=OptimSettings(chunk=4).changed("isotropic", iterations=3, samples=8)), "settings"),
    (lambda t: dict(model=MLP((1, 3, 3), 3, hidden=(8,))), "model"),
])
def test_another_run_on_the_same_folder_is_refused(tmp_path, toy, change, named):
    run(toy, tmp_path)
    before = (tmp_path / "final.tsv").read_bytes()
    with pytest.raises(ValueError, match=rf"holds another run: it differs in .*\b{named}\b"):
        run(toy, tmp_path, **change(toy))
    assert (tmp_path / "final.tsv").read_bytes() == before  # nothing rewritten


def test_another_starting_point_for_ancer_is_refused(tmp_path, toy):
    iso = np.full(tuple(toy[1].shape), 0.25)
    run(toy, tmp_path, method="ancer", isotropic=iso)
    with pytest.raises(ValueError, match="isotropic"):
        run(toy, tmp_path, method="ancer", isotropic=iso * 1.5)


def test_a_replaced_theta_is_refused(tmp_path, toy):
    """Without the check, a θ scaled by 2 would scale every radius in final.tsv."""
    run(toy, tmp_path)
    theta = np.load(tmp_path / "theta.npy")
    np.save(tmp_path / "theta.npy", 2 * theta)
    with pytest.raises(ValueError, match="is not the θ this run wrote"):
        run(toy, tmp_path)


def test_a_folder_without_a_manifest_is_refused(tmp_path, toy):
    np.save(tmp_path / "theta.npy", np.full(tuple(toy[1].shape), 0.25))
    with pytest.raises(ValueError, match="no run.json"):
        run(toy, tmp_path)


def test_a_run_stopped_before_theta_was_recorded_resumes(tmp_path, toy):
    full = run(toy, tmp_path / "full")
    stopped = tmp_path / "stopped"
    run(toy, stopped)
    held = json.loads((stopped / "run.json").read_text())
    held.pop("theta_sha256")  # stopped after writing θ, before recording its hash
    (stopped / "run.json").write_text(json.dumps(held))
    (stopped / "certify.tsv").unlink()
    (stopped / "final.tsv").unlink()
    cols = ["idx", "label", "predict", "radius", "radius_proxy", "correct", "gap", "p_lower"]
    pd.testing.assert_frame_equal(full[cols], run(toy, stopped)[cols])
    assert "theta_sha256" in json.loads((stopped / "run.json").read_text())


def test_an_unreadable_manifest_is_an_error_naming_it(tmp_path, toy):
    run(toy, tmp_path)
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(ValueError, match="run.json is not a readable run manifest"):
        run(toy, tmp_path)


def test_array_digest_is_exact():
    a = np.arange(6.0).reshape(2, 3)
    assert manifest.array_digest(a) == manifest.array_digest(torch.from_numpy(a.copy()))
    assert manifest.array_digest(a) != manifest.array_digest(a.reshape(3, 2))  # shape
    assert manifest.array_digest(a) != manifest.array_digest(a.astype(np.float32))  # dtype
    b = a.copy()
    b[1, 2] = np.nextafter(b[1, 2], 10)
    assert manifest.array_digest(a) != manifest.array_digest(b)  # one ulp


def test_the_memory_records_where_its_regions_came_from(tmp_path, toy, monkeypatch):
    """run_method's Algorithm 1 runs on a memory that knows its model (the weights' fingerprint), noise, norm and
    θ0 (`memory.Provenance`), so it would refuse regions of another classifier."""
    from ancer_lite.core.memory import Provenance
    from ancer_lite.models.train import model_fingerprint
    from ancer_lite.runs import experiment

    seen = []
    original = experiment.algorithm1

    def recording(*args, **kwargs):
        seen.append(kwargs.get("provenance"))
        return original(*args, **kwargs)

    monkeypatch.setattr(experiment, "algorithm1", recording)
    run(toy, tmp_path)
    assert seen == [Provenance(model=model_fingerprint(toy[0]), noise="gaussian", norm="l2", sigma=0.25)]
