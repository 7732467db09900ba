"""Metrics (ANCER §7: certified accuracy, ACR, ACR~) and per-sample TSV logs."""
import os

import numpy as np
import pandas as pd
import pytest

from ancer_lite.core import files
from ancer_lite.evaluation.metrics import (
    average_certified_radius,
    best_over,
    certified_accuracy,
    certified_accuracy_curve,
    summary_table,
)
from ancer_lite.runs import logs


def test_certified_accuracy_by_hand():
    radius = [0.0, 0.3, 0.6, 1.2, 0.0]
    correct = [False, True, True, True, True]  # first is an abstention, last correct with radius 0
    assert certified_accuracy(radius, correct, 0.0) == pytest.approx(4 / 5)
    assert np.allclose(certified_accuracy(radius, correct, [0.25, 0.5, 1.0, 2.0]), [3 / 5, 2 / 5, 1 / 5, 0])
    assert average_certified_radius(radius, correct) == pytest.approx((0.3 + 0.6 + 1.2) / 5)


def test_curve_is_monotone_and_starts_at_clean_accuracy():
    rng = np.random.default_rng(0)
    r = rng.exponential(0.5, 200)
    c = rng.random(200) < 0.8
    grid, acc = certified_accuracy_curve(r, c)
    assert acc[0] == pytest.approx(c.mean()) and (np.diff(acc) <= 0).all() and grid[-1] == pytest.approx(r.max())
    # ACR is the area under the certified-accuracy curve
    fine, acc_fine = certified_accuracy_curve(r, c, points=200_001)
    assert np.trapezoid(acc_fine, fine) == pytest.approx(average_certified_radius(r, c), rel=1e-3)


def test_summary_and_best_over_sigma():
    df = pd.DataFrame({"sigma": [0.25] * 3 + [0.5] * 3, "correct": [1, 1, 0, 1, 0, 1],
                       "radius": [0.1, 0.6, 0.0, 0.9, 0.0, 0.4], "radius_proxy": [0.2, 0.7, 0.0, 1.0, 0.0, 0.5]})
    df["correct"] = df["correct"].astype(bool)
    table = summary_table(df, [0.0, 0.5], ["sigma"])
    assert table["0.5"].tolist() == pytest.approx([100 / 3, 100 / 3])
    assert table["acr_proxy"].tolist() == pytest.approx([0.3, 0.5])
    best = best_over(table.assign(method="x"), "sigma", ["method"])
    assert best.loc[0, "0"] == pytest.approx(200 / 3) and best.loc[0, "acr"] == pytest.approx(1.3 / 3)


def test_metrics_reject_bad_input():
    with pytest.raises(ValueError, match="radius"):
        certified_accuracy([0.1, -1.0], [True, True], 0.0)
    with pytest.raises(ValueError, match="radius and correct"):
        average_certified_radius([0.1], [True, False])
    from ancer_lite.evaluation.metrics import certified_accuracy_curve

    for points in (0, -1, 2.5, "10"):  # points = 0 gave an empty curve
        with pytest.raises(ValueError, match="points must be"):
            certified_accuracy_curve([0.1, 0.2], [True, True], points=points)
    for top in (-1.0, np.nan, "abc"):
        with pytest.raises(ValueError, match="max_radius must be"):
            certified_accuracy_curve([0.1, 0.2], [True, True], max_radius=top)
    for at in (np.nan, [0.0, np.inf]):  # at = nan would give 0.0
        with pytest.raises(ValueError, match="at must be finite"):
            certified_accuracy([0.1, 0.2], [True, True], at)


def _row(i, **kw):
    row = dict(idx=i, label=i % 3, predict=i % 3, radius=0.1 * i, radius_proxy=0.2 * i, correct=True,
               min_sigma=0.25, time=0.01)
    row.update(kw)
    return row


def test_log_roundtrip_and_resume(tmp_path):
    path = tmp_path / "run" / "log.tsv"
    with logs.ResultLog(path, flush_every=2) as log:
        for i in range(5):
            log.append(_row(i))
    df = logs.read_log(path)
    assert list(df.columns[:8]) == logs.ANCER_COLUMNS and len(df) == 5
    assert df["radius"].tolist() == pytest.approx([0.1 * i for i in range(5)]) and df["correct"].all()
    again = logs.ResultLog(path)
    assert again.done == set(range(5))
    with pytest.raises(ValueError, match="idx 3"):
        again.append(_row(3))
    again.append(_row(7, predict=2, correct=False))  # label 1, predicted 2
    again.close()
    assert logs.read_log(path)["correct"].tolist() == [True] * 5 + [False]


def test_log_write_is_atomic(tmp_path, monkeypatch):
    """A crash while writing leaves the previous complete file and no temporary files."""
    path = tmp_path / "log.tsv"
    with logs.ResultLog(path, flush_every=1) as log:
        log.append(_row(0))
    before = path.read_text()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    log = logs.ResultLog(path, flush_every=1)
    with pytest.raises(OSError):
        log.append(_row(1))
    log.close = lambda: None  # the failing flush must not run again at teardown
    assert path.read_text() == before
    # no temporary files: the lock, the log and its checksums (`logs.checksum_path`)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".log.tsv.lock", "log.tsv", "log.tsv.sums"]


def test_reads_cohen_logs(tmp_path):
    path = tmp_path / "cohen.tsv"
    path.write_text("idx\tlabel\tpredict\tradius\tcorrect\ttime\n0\t3\t3\t0.52\t1\t0:00:01.2\n10\t1\t-1\t0.0\t0\t0:00:01.1\n")
    df = logs.read_log(path)
    assert df["radius_proxy"].tolist() == [0.52, 0.0] and df["correct"].tolist() == [True, False]


def test_log_rejects_bad_rows(tmp_path):
    log = logs.ResultLog(tmp_path / "x.tsv")
    with pytest.raises(ValueError, match="columns"):
        log.append({"idx": 0})
    with pytest.raises(ValueError, match="columns"):
        logs.ResultLog(tmp_path / "y.tsv", columns=["idx", "label"])
    (tmp_path / "z.tsv").write_text("a\tb\n1\t2\n")
    with pytest.raises(ValueError, match="missing columns"):
        logs.read_log(tmp_path / "z.tsv")


def test_best_curve_is_the_upper_envelope():
    df = pd.DataFrame({"sigma": [0.25, 0.25, 0.5, 0.5], "correct": [True, True, True, False],
                       "radius": [0.1, 0.3, 0.8, 0.0]})
    from ancer_lite.evaluation.metrics import best_curve
    assert best_curve(df, "sigma", [0.0, 0.2, 0.5, 1.0]).tolist() == pytest.approx([1.0, 0.5, 0.5, 0.0])


# ---- validated rows, locked writers, strict `correct`, file permissions ----------------------------

HEADER = "\t".join(logs.ANCER_COLUMNS)
GOOD = "0\t1\t1\t0.5\t0.6\t1\t0.25\t0.01"


@pytest.mark.parametrize("text, line, why", [
    (f"{HEADER}\n{GOOD}\n1\t2\t2\t0.5\n", 3, "4 fields, expected 8"),          # torn mid-row
    (f"{HEADER}\n{GOOD}\n1\t2\t2\t0.5\t0.6\t1\t0.25\t0.01", 3, "no final newline"),
    (f"{HEADER}\n{GOOD}\n1\t2\t2\t\t0.6\t1\t0.25\t0.01\n", 3, "empty field 'radius'"),
    (f"{HEADER}\n{GOOD}\n1\t2\t2\t0.5\t0.6\tFalse\t0.25\t0.01\n", 3, "correct='False' is not 0 or 1"),
    (f"{HEADER}\n{GOOD}\n1\t2\tx\t0.5\t0.6\t1\t0.25\t0.01\n", 3, "predict='x' is not an integer"),
    (f"{HEADER}\n{GOOD}\n1\t2\t2\t0.5\t0..6\t1\t0.25\t0.01\n", 3, "radius_proxy='0..6' is not a number"),
    (f"{HEADER}\n{GOOD}\n{GOOD}\n", 3, "duplicate idx 0 .first on line 2"),
])
def test_torn_or_bad_rows_are_errors_naming_file_and_line(tmp_path, text, line, why):
    """A row cut by a crash does not count as done on resume (it would give NaN in final.tsv)."""
    path = tmp_path / "certify.tsv"
    path.write_text(text)
    for load in (logs.ResultLog, logs.read_log):
        with pytest.raises(ValueError, match=rf"{path}, line {line}: .*{why}"):
            load(path)
    logs.ResultLog(tmp_path / "other.tsv").close()  # a failed load released its lock
    path.write_text(text.split("\n")[0] + "\n" + GOOD + "\n")
    with logs.ResultLog(path) as log:  # once the bad line is deleted, the log resumes
        assert log.done == {0}


def test_read_log_errors_name_the_file(tmp_path):
    missing = tmp_path / "nope.tsv"
    with pytest.raises(ValueError, match=str(missing)):
        logs.read_log(missing)
    binary = tmp_path / "bin.tsv"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match=str(binary)):
        logs.read_log(binary)


def test_append_rejects_values_that_would_not_read_back(tmp_path):
    with logs.ResultLog(tmp_path / "x.tsv") as log:
        with pytest.raises(ValueError, match="radius='abc' is not a number"):
            log.append(_row(0, radius="abc"))
        with pytest.raises(ValueError, match="correct='2' is not 0 or 1"):
            log.append(_row(1, correct=2))
        assert log.done == set()


def test_second_writer_is_refused_until_the_first_closes(tmp_path):
    """Two writers each rewrite the whole file, so one silently lost the other's rows; now the second
    is refused at once (in this process or another), and the lock dies with its holder."""
    import subprocess
    import sys

    path = tmp_path / "certify.tsv"
    first = logs.ResultLog(path)
    first.append(_row(0))
    with pytest.raises(RuntimeError, match="being written by another"):
        logs.ResultLog(path)
    code = ("import sys; from ancer_lite.runs import logs\n"
            "try:\n    logs.ResultLog(sys.argv[1])\nexcept RuntimeError as e:\n    print('refused', e)\n")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("refused")
    first.close()
    with logs.ResultLog(path) as second:
        second.append(_row(1))
    assert logs.read_log(path)["idx"].tolist() == [0, 1]
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from ancer_lite.runs import logs\n"
                               "log = logs.ResultLog(sys.argv[1]); print('held', flush=True); time.sleep(60)",
                               str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RuntimeError, match="being written"):
            logs.ResultLog(path)
    finally:
        holder.kill()
        holder.wait()
    logs.ResultLog(path).close()  # a killed writer leaves no stale lock


def test_files_get_the_usual_permissions(tmp_path):
    """mkstemp creates 0600 files; atomic writes now honour the umask like open() does."""
    old = os.umask(0o022)
    try:
        files.write_atomic(tmp_path / "a.txt", "x")
        with logs.ResultLog(tmp_path / "log.tsv") as log:
            log.append(_row(0))
    finally:
        os.umask(old)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "log.tsv").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("bad", [["False", "True"], [1.0, float("nan")], [2, 0], [None, True], ["1", "0"]])
def test_correct_must_be_bool_or_01(bad):
    """`correct` was coerced silently: the string "False" and NaN counted as correct."""
    with pytest.raises(ValueError, match="correct must hold bool or 0/1"):
        certified_accuracy([0.5, 0.5], bad, 0.0)
    with pytest.raises(ValueError, match="correct must hold bool or 0/1"):
        average_certified_radius([0.5, 0.5], pd.Series(bad, dtype=object))


def test_correct_accepts_bool_and_01():
    for good in ([True, False], [1, 0], np.array([1.0, 0.0]), pd.Series([True, False]), np.array([1, False], dtype=object)):
        assert certified_accuracy([0.5, 0.5], good, 0.0) == pytest.approx(0.5)


def test_load_array_names_a_corrupt_file(tmp_path):
    """A garbage theta.npy is named (not np.load's allow_pickle hint without the path)."""
    good = tmp_path / "theta.npy"
    np.save(good, np.arange(3.0))
    np.testing.assert_array_equal(files.load_array(good), np.arange(3.0))
    for name, content in (("garbage.npy", b"not an array at all"), ("truncated.npy", good.read_bytes()[:-8]),
                          ("pickle.npy", None)):
        path = tmp_path / name
        if content is None:
            np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        else:
            path.write_bytes(content)
        with pytest.raises(ValueError, match=name):
            files.load_array(path)
    with pytest.raises(FileNotFoundError):
        files.load_array(tmp_path / "missing.npy")


def test_a_corrupt_model_cache_is_named(tmp_path):
    """A corrupted cached model is named (not torch's UnpicklingError suggesting weights_only=False)."""
    import torch

    from ancer_lite.models.train import train_cached

    path = tmp_path / "model.pt"
    path.write_bytes(b"this is not a checkpoint")
    with pytest.raises(ValueError, match="model.pt.*delete it to retrain"):
        train_cached(path, lambda: torch.nn.Linear(2, 2), lambda m: m)
    torch.save(torch.nn.Linear(3, 2).state_dict(), path)  # another architecture's weights
    with pytest.raises(ValueError, match="cannot be loaded into Linear"):
        train_cached(path, lambda: torch.nn.Linear(2, 2), lambda m: m)


@pytest.mark.parametrize("change, why", [
    (dict(radius=float("nan")), "radius"), (dict(radius=-1.0), "radius"), (dict(radius=float("inf")), "radius"),
    (dict(radius_proxy=-0.5), "radius_proxy"), (dict(time=-1.0), "time"), (dict(min_sigma=-0.25), "min_sigma"),
    (dict(label=-5, predict=-5), "label"), (dict(predict=-7), "predict"),
    (dict(predict=-1, correct=True), "correct=1 but predict=-1"),  # an abstention marked correct
    (dict(predict=2, correct=True), "correct=1 but predict=2"), (dict(correct=False), "correct=0 but predict"),
])
def test_logs_refuse_rows_without_meaning(tmp_path, change, why):
    """NaN, negative or infinite radii, negative labels and an abstention marked correct would be logged and
    read back as results."""
    with logs.ResultLog(tmp_path / "log.tsv") as log:
        with pytest.raises(ValueError, match=why):
            log.append(_row(1, **change))
        log.append(_row(1))  # refused rows are not kept: the same input can still be logged
    good = (tmp_path / "log.tsv").read_text().splitlines()
    row = dict(zip(logs.ANCER_COLUMNS, good[1].split("\t")))
    row.update({k: str(int(v) if isinstance(v, bool) else v) for k, v in change.items()})
    (tmp_path / "bad.tsv").write_text("\n".join([good[0], "\t".join(row[c] for c in logs.ANCER_COLUMNS)]) + "\n")
    with pytest.raises(ValueError, match=f"bad.tsv, line 2: .*{why.split()[0]}"):
        logs.read_log(tmp_path / "bad.tsv")


def test_an_edited_predicted_class_is_refused_by_its_checksum(tmp_path):
    """A row whose predicted class (with correct adjusted, so the row is consistent) or p_lower was edited after the
    log was written is refused, naming the file, the idx and the column; a log without checksums (an older
    version's) is read as before."""
    path = tmp_path / "log.tsv"
    with logs.ResultLog(path) as log:
        for i in range(3):
            log.append(_row(i))
    assert logs.checksum_path(path).is_file()
    text = path.read_text()
    lines = text.split("\n")
    fields = lines[2].split("\t")  # idx 1: label 1, predict 1, correct 1
    fields[2], fields[5] = "2", "0"
    path.write_text("\n".join(lines[:2] + ["\t".join(fields)] + lines[3:]))
    with pytest.raises(ValueError, match=r"log.tsv, line 3 \(idx 1\): predict='2' is not the value its run wrote"):
        logs.read_log(path)
    with pytest.raises(ValueError, match="predict"):
        logs.ResultLog(path)
    logs.checksum_path(path).unlink()
    assert logs.read_log(path)["predict"].tolist() == [0, 2, 2]
    path.write_text(text.replace("\n1\t", "\n7\t"))  # an idx nobody wrote, with a fresh checksum file
    logs.write_checksums(path, text.split("\n")[0].split("\t"), [r.split("\t") for r in text.split("\n")[1:-1]])
    with pytest.raises(ValueError, match=r"idx 7\): the row has no checksum"):
        logs.read_log(path)
