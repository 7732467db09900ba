"""Metrics (ANCER §7: certified accuracy, ACR, ACR~) and per-sample TSV logs."""
import os

import numpy as np
import pandas as pd
import pytest

from ancer_lite import logs
from ancer_lite.metrics import (average_certified_radius, best_over, certified_accuracy,
                                certified_accuracy_curve, summary_table)


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
    again.append(_row(7, correct=False))
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
    assert path.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["log.tsv"]


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
    from ancer_lite.metrics import best_curve
    assert best_curve(df, "sigma", [0.0, 0.2, 0.5, 1.0]).tolist() == pytest.approx([1.0, 0.5, 0.5, 0.0])
