"""ancer_lite.report.step_timing: a cached step is timed when computed and labelled as reused, with the time it took
when computed, when it only reads its entries."""
from __future__ import annotations

import json
import time

import pytest

from ancer_lite.report.step_timing import StepTiming, changed, read_sidecar, run_step, snapshot, write_sidecar


def _cached_step(folder, calls):
    """A step that computes (sleeps, writes out.txt) when its entry is missing and reads it otherwise."""
    def compute():
        f = folder / "out.txt"
        if f.exists():
            return f.read_text()
        calls.append(1)
        time.sleep(0.05)
        f.write_text("42")
        return "42"
    return compute


def test_first_call_computes_and_records_then_reuse_reads_the_record(tmp_path):
    entries, sidecar, calls = tmp_path / "cache", tmp_path / "cache" / "timings" / "s.json", []
    entries.mkdir()
    step = _cached_step(entries, calls)
    out, t = run_step("toy", step, [entries], sidecar)
    assert out == "42" and calls == [1] and not t.reused and t.seconds >= 0.05
    record = json.loads(sidecar.read_text())
    assert record["entries"] == ["../out.txt"] and record["seconds"] == pytest.approx(t.seconds, abs=1e-3)
    out, t2 = run_step("toy", step, [entries], sidecar)
    assert out == "42" and calls == [1] and t2.reused
    assert t2.computed_seconds == pytest.approx(t.seconds, abs=1e-3)
    assert "reused from the cache (computed in" in t2.line() and t2.line().startswith("toy: ")


def test_reuse_without_a_record_says_not_recorded(tmp_path):
    (tmp_path / "out.txt").write_text("42")
    _, t = run_step("toy", _cached_step(tmp_path, []), [tmp_path], tmp_path / "timings" / "s.json")
    assert t.reused and t.computed_seconds is None and "not recorded" in t.line()


def test_record_of_entries_that_are_gone_is_not_used(tmp_path):
    sidecar = tmp_path / "t" / "s.json"
    (tmp_path / "a.pt").write_text("x")
    write_sidecar(sidecar, 12.0, [tmp_path / "a.pt"])
    assert read_sidecar(sidecar) == 12.0
    (tmp_path / "a.pt").unlink()
    assert read_sidecar(sidecar) is None
    sidecar.write_text("not json")
    assert read_sidecar(sidecar) is None
    assert read_sidecar(tmp_path / "missing.json") is None


def test_changed_sees_new_and_modified_files_but_not_temporaries(tmp_path):
    (tmp_path / "a").write_text("1")
    before = snapshot([tmp_path, tmp_path / "missing"])
    (tmp_path / "a").write_text("22")
    (tmp_path / "b").write_text("1")
    (tmp_path / ".b.tmp").write_text("1")
    names = [p.rsplit("/", 1)[1] for p in changed(before, snapshot([tmp_path]))]
    assert names == ["a", "b"]


def test_snapshot_leaves_out_the_excluded_folder(tmp_path):
    (tmp_path / "timings").mkdir()
    (tmp_path / "timings" / "s.json").write_text("{}")
    (tmp_path / "x").write_text("1")
    assert [p.rsplit("/", 1)[1] for p in snapshot([tmp_path], exclude=tmp_path / "timings")] == ["x"]


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="entries"):
        run_step("toy", lambda: 1, [], tmp_path / "s.json")
    with pytest.raises(ValueError, match="seconds"):
        write_sidecar(tmp_path / "s.json", -1.0, [])
    assert StepTiming("x", 1.0, False).line() == "x: 1.00 s"


def test_a_file_rewritten_with_the_same_content_is_not_a_change(tmp_path):
    """A resumable log rewrites its file on close even when it resumed with nothing to do."""
    f = tmp_path / "certify.tsv"
    f.write_text("idx\n1\n")
    before = snapshot([tmp_path])
    time.sleep(0.01)
    f.unlink()
    f.write_text("idx\n1\n")
    assert changed(before, snapshot([tmp_path])) == []
