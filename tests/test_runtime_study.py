"""runtime_study.py over a tiny in-memory column (a `Column` whose logs are held in memory): Table 3
rows sum their stages and use the requested budget, CERTIFY is timed at every N, the order effects
cover every run, order and policy, and the clearances are those of `runtime.max_intersect_clearance`."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from ancer_lite.methods.registry import OptimSettings
from ancer_lite.models.data import Split
from ancer_lite.runs.profiles import ImageSetup
from ancer_lite.runs.setups import Workload
from ancer_lite.studies import runtime
from ancer_lite.studies import runtime_study as rts
from ancer_lite.studies.image_study import Column

PROFILE = SimpleNamespace(n0=10, alpha=0.001, batch_size=1000)
NUM = 6


class MemoryColumn(Column):
    """A Column whose CERTIFY rows and thetas are given, not read from log folders."""
    logs: dict = {}

    def certified(self, norm, sigma, method):
        return self.logs[norm, sigma, method][0]

    def thetas(self, norm, sigma, method):
        return self.logs[norm, sigma, method][1]


def _column(spacing: float = 3.0) -> MemoryColumn:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Softplus(), torch.nn.Linear(8, 3))
    x = torch.zeros(NUM, 4)
    x[:, 0] = spacing * torch.arange(NUM)
    y = torch.arange(NUM) % 2
    setup = ImageSetup(name="toy", dataset="digits", column="CIFAR-10", sigmas_l2=(0.25,), sigmas_l1=(0.5,),
                       n=100, iterations=2, samples=4)
    work = Workload("digits", 3, Split(x, y, np.arange(NUM)), Split(x, y, np.arange(NUM)),
                    {("l2", 0.25): model, ("l1", 0.5): model})
    settings = OptimSettings().with_budget(2, 4)
    col = MemoryColumn(setup, work, {"l2": settings, "l1": settings}, pd.DataFrame(), Path("."))
    base = pd.DataFrame(dict(idx=range(NUM), label=y.numpy(), predict=y.numpy(), gap=1.0, radius=1.0,
                             radius_proxy=1.0, correct=True))
    col.logs = {(n, s, m): (base, np.ones((NUM, 4))) for (n, s) in work.models for m in rts.DD_METHODS}
    return col


def test_table3_rows_sum_the_stages_and_take_the_budget():
    col = _column(spacing=0.1)  # CERTIFY's inputs in the pixel box [0, 1]
    t, memory = rts.table3_rows(col, "l2", PROFILE, inputs=2)
    assert list(t.index) == ["fixed", "isotropic", "ancer"]
    assert np.allclose(t["total"], t[list(runtime.STAGES)].sum(axis=1))
    assert t.loc["fixed", runtime.MEMORY] == 0 and t.loc["ancer", runtime.MEMORY] == memory["fast"] > 0
    assert (t.loc["ancer", [runtime.ISO_OPT, runtime.ANCER_OPT, runtime.CERTIFY]] > 0).all()
    t2, _ = rts.table3_rows(col, "l1", PROFILE, inputs=1, budget={"iterations": 1, "samples": 2, "n": 20})
    assert t2.loc["fixed", "total"] > 0
    with pytest.raises(ValueError, match="budget"):
        rts.table3_rows(col, "l2", PROFILE, inputs=1, budget={"iterations": 1})
    with pytest.raises(ValueError, match="inputs"):
        rts.table3_rows(col, "l2", PROFILE, inputs=0)


def test_with_budget_sets_both_optimizations_and_keeps_the_step_sizes():
    s = OptimSettings().changed("isotropic", lr=0.3).changed("ancer", lr=0.7)
    b = s.with_budget(7, 9)
    assert (b.of("isotropic").iterations, b.of("ancer").iterations, b.of("isotropic").samples, b.of("ancer").samples) == (7, 7, 9, 9)
    assert (b.of("isotropic").lr, b.of("ancer").lr, b.of("ancer").kappa) == (0.3, 0.7, s.of("ancer").kappa)


def test_certify_vs_n_times_every_column_n_and_input():
    t = rts.certify_vs_n({"a": _column(0.1), "b": _column(0.1)}, PROFILE, [20, 40], inputs=2)
    assert len(t) == 2 * 2 * 2 and set(t.column) == {"a", "b"} and (t.seconds > 0).all()


def test_order_effects_and_stress_cover_every_run_order_and_policy():
    cols = {"toy": _column()}
    e = rts.order_effects(cols, orders=2, workers=1)
    assert len(e) == 2 * len(rts.DD_METHODS) * 2 * 3  # (norm, σ) runs x methods x policies x orders
    assert (e.met == 0).all()  # unit regions 3 apart never meet
    st = rts.stress_test(cols, [1, 2], orders=1, workers=1)
    assert len(st) == 2 * len(rts.DD_METHODS) * 2 * 2 * 2
    assert (st[st.inflate == 1].met == 0).all() and (st[(st.inflate == 2) & (st.norm == "l2")].met > 0).all()


def test_clearances_are_those_of_the_logged_regions():
    c = rts.clearances({"toy": _column(spacing=3.0)})
    assert len(c) == 2 * len(rts.DD_METHODS)
    assert np.allclose(c.clearance, 1.5) and np.allclose(c.max_semi_axis, 1.0) and np.allclose(c.max_axis_ratio, 1.0)
    assert (c.max_radius == 1.0).all() and (c.certified == NUM).all() and (c.overlapping_pairs == 0).all()
    # unit regions 1.5 apart: the enclosing balls of neighbours of different classes overlap
    assert (rts.clearances({"toy": _column(spacing=1.5)}).overlapping_pairs == NUM - 1).all()


def test_worker_processes_return_what_the_loop_returns():
    """The runs go to spawned worker processes (default one per core) and come back in loop order, equal
    to the single-process result: random permutations are seeded per run, not per process."""
    cols = {"toy": _column(spacing=1.0)}
    one = rts.stress_test(cols, [1, 3], orders=2, workers=1)
    two = rts.stress_test(cols, [1, 3], orders=2, workers=2)
    pd.testing.assert_frame_equal(one, two)
    assert (one.met > 0).any()  # the inflated regions meet, so the orders matter
