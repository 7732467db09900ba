"""Notebook 03's per-column study on a tiny digits setup: step-size selection, certification of every
(norm, sigma, method), reuse of logs and selection tables, and the best-over-sigma tables and claims."""
import dataclasses

import numpy as np
import pytest

from ancer_lite import image_study as study
from ancer_lite.experiment import METHODS
from ancer_lite.profiles import ImageSetup, get_profile
from ancer_lite.setups import prepare

SETUP = ImageSetup("digits", "digits", "CIFAR-10", hidden=(8,), epochs=1, sigmas_l2=(0.25,), sigmas_l1=(0.5,),
                   num_test=10, num_val=4, n=200, val_n=100, iso_lr_grid=(0.01, 0.1), ancer_lr_grid=(0.01,),
                   iterations=2, samples=4)
PROFILE = dataclasses.replace(get_profile("quick"), n0=10, batch_size=100, images=(SETUP,))


def test_study_end_to_end_and_reuse(tmp_path):
    work = prepare(SETUP, seed=0, data_dir=tmp_path, cache="t")
    assert len(work.test) == 10 and len(work.val) == 4 and set(work.models) == {("l2", 0.25), ("l1", 0.5)}
    chosen, table = study.choose_step_sizes(work, SETUP, PROFILE, tmp_path / "results")
    assert set(chosen) == {"l2", "l1"} and table.chosen.sum() == 4
    for norm, theta in (("l2", 0.25), ("l1", 0.5 * 3 ** 0.5)):
        pick = table[(table.norm == norm) & table.chosen].set_index("method").lr_relative
        assert chosen[norm].iso_lr == pytest.approx(pick["isotropic"] * theta)
        assert chosen[norm].ancer_lr == pytest.approx(pick["ancer"] * theta)
    files = sorted((tmp_path / "results" / "digits").glob("selection-*.tsv"))
    assert len(files) == 2
    stamps = [f.stat().st_mtime_ns for f in files]

    calls = []
    res, timings, reused = study.certify_setup(work, SETUP, PROFILE, chosen, tmp_path / "results", 0, calls.append)
    assert reused == 0 and sum(calls) == len(res) == 2 * len(METHODS) * 10 and len(timings) == 6
    again_chosen, _ = study.choose_step_sizes(work, SETUP, PROFILE, tmp_path / "results")
    assert again_chosen == chosen and [f.stat().st_mtime_ns for f in files] == stamps  # reused, not recomputed
    calls.clear()
    res2, _, reused = study.certify_setup(work, SETUP, PROFILE, chosen, tmp_path / "results", 0, calls.append)
    assert reused == len(res) and sum(calls) == len(res)
    assert np.array_equal(res2.radius.to_numpy(), res.radius.to_numpy())

    for norm in ("l2", "l1"):
        best = study.best_table(res, SETUP, norm)
        assert list(best.index) == ["Fixed σ", "Isotropic DD", "ANCER"]
        radii = study.PAPER_RADII["CIFAR-10"][norm]
        assert [c for c in best.columns if c not in ("acr", "acr_proxy")] == [f"{r:g}" for r in radii]
        verdict = study.claims(best)
        assert len(verdict) == 4 and all(isinstance(v, bool) for v in verdict.values())
        margin = study.proxy_margin(best)
        assert verdict["C3: ANCER's ACR~ > Isotropic DD's"] == (margin > 0 or (np.isinf(margin)))
        paper = study.paper_rows(norm, "CIFAR-10")
        assert list(paper.index) == ["Fixed sigma", "Isotropic DD", "ANCER"] and "acr_proxy" in paper.columns
