"""runtime.py: stage timing structure, Table 3 assembly and ratios, linear fits, the synthetic memory
(nothing meets the new region, every entry is tested), and the order effect (order 0 is Algorithm 1
in the logged order; a permutation gives the same per-input decisions when nothing intersects, and
can change them when regions do)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from ancer_lite.core.memory import WORST_CASE
from ancer_lite.methods.registry import OptimSettings
from ancer_lite.runs.experiment import apply_memory
from ancer_lite.runs.paper import load_table
from ancer_lite.studies import runtime


def _model(dim: int = 4, classes: int = 3) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(dim, 16), torch.nn.Softplus(), torch.nn.Linear(16, classes))


def test_time_stages_times_every_stage_of_every_method():
    x = torch.rand(2, 4)
    settings = OptimSettings().with_budget(2, 8)
    t = runtime.time_stages(_model(), x, "gaussian", 0.25, settings, n0=10, n=100, alpha=0.001, num_classes=3)
    assert (t.seconds > 0).all()
    got = {(m, s) for m, s in t[["method", "stage"]].itertuples(index=False)}
    want = {(m, s) for m, stages in runtime.STAGES_OF.items() for s in stages if s != runtime.MEMORY}
    assert got == want
    assert (t.groupby(["method", "stage"]).size() == len(x)).all()
    # ANCER's initialization is Isotropic DD's optimization of the same input: the same measured time
    iso = t[(t.stage == runtime.ISO_OPT)].pivot(index="input", columns="method", values="seconds")
    np.testing.assert_array_equal(iso["isotropic"], iso["ancer"])


def test_runtime_table_sums_the_stages_each_method_uses_and_ratios():
    rows = [dict(input=0, method=m, stage=s, seconds=1.0 + i)
            for m, stages in runtime.STAGES_OF.items() for i, s in enumerate(stages) if s != runtime.MEMORY]
    t = runtime.runtime_table(pd.DataFrame(rows), memory_seconds=0.5)
    assert list(t.index) == ["fixed", "isotropic", "ancer"]
    assert t.loc["fixed", "total"] == 1.0  # CERTIFY only, no memory
    assert t.loc["isotropic", "total"] == pytest.approx(1.0 + 2.0 + 0.5)
    assert t.loc["ancer", "total"] == pytest.approx(1.0 + 2.0 + 3.0 + 0.5)
    r = runtime.ratios(t)
    assert r["ANCER / Fixed σ"] == pytest.approx(6.5) and r["ANCER / Iso DD"] == pytest.approx(6.5 / 3.5)


def test_paper_ratios_are_the_printed_ones():
    p = load_table("ancer_table3").pivot_table(index="row_label", columns="method", values="value")
    got = {row: runtime.ratios(p.loc[[row]].T.rename(columns={row: "total"}))["ANCER / Fixed σ"] for row in p.index}
    assert got == pytest.approx({"(a)": 2.7 / 1.6, "(b)": 11.5 / 7.4, "(c)": 147.0 / 109.5})
    assert [round(v, 2) for v in got.values()] == [1.69, 1.55, 1.34]  # the 1.69x, 1.55x, 1.34x


def test_fit_linear_recovers_a_line_and_reports_r2():
    x = np.array([1.0, 2.0, 3.0, 10.0])
    f = runtime.fit_linear(x, 0.5 + 2.0 * x)
    assert f["intercept"] == pytest.approx(0.5) and f["slope"] == pytest.approx(2.0) and f["r2"] == pytest.approx(1.0)
    assert runtime.fit_linear(x, x ** 3)["r2"] < 1.0
    with pytest.raises(ValueError, match="same length"):
        runtime.fit_linear([1.0], [2.0])


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_synthetic_memory_step_keeps_the_region_and_tests_every_entry(norm):
    rng = np.random.default_rng(0)
    c, s, x, sx = runtime.synthetic_memory(500, 64, rng)
    assert c.shape == s.shape == (500, 64) and ((s >= 0.025) & (s <= 0.05)).all()
    # the closest entry is farther than the sum of the two outer radii: MaxIntersect rules all out
    dist = np.linalg.norm(c - x, ord=2 if norm == "l2" else 1, axis=1)
    assert dist.min() > s.max(axis=1).max() + sx.max()
    assert runtime.time_memory_step(500, 64, norm, np.random.default_rng(1), repeats=2) > 0


def test_certify_seconds_vs_n_rows():
    t = runtime.certify_seconds_vs_n(_model(), torch.rand(2, 4), 0.25, "gaussian", [50, 200], 10, 0.001, 3)
    assert list(t.n) == [50, 50, 200, 200] and (t.seconds > 0).all()


def _two_class_stream(spacing: float, num: int = 8):
    """Inputs on a line, alternating classes, spacing apart; unit semi-axes (gap 1, theta 1)."""
    x = torch.zeros(num, 2)
    x[:, 0] = spacing * torch.arange(num)
    base = pd.DataFrame(dict(idx=range(num), label=[k % 2 for k in range(num)], predict=[k % 2 for k in range(num)],
                             gap=1.0, radius=1.0, radius_proxy=1.0, correct=True))
    return base, x, np.ones((num, 2))


def test_order_zero_is_algorithm1_in_the_logged_order():
    base, x, th = _two_class_stream(1.5)
    e = runtime.order_effect(base, x, th, "l2", orders=2, seed=0)
    ref = apply_memory(base, x, th, "l2")
    assert e.loc[0, "acr"] == pytest.approx(float((ref.radius * ref.correct).mean()))
    assert e.loc[0, "shrunk"] == (ref.status == "shrunk").sum() > 0


def test_order_cannot_matter_when_no_regions_meet():
    base, x, th = _two_class_stream(3.0)  # unit balls 3 apart: no two meet
    e = runtime.order_effect(base, x, th, "l2", orders=4, seed=0)
    assert (e.acr == e.acr[0]).all() and (e.kept == len(x)).all()
    # inflated to radius 2, neighbours meet (A-B, B-C) but A and C do not: with A or C first two
    # inputs are kept (B abstains), with B first only B is kept, so the order changes the accuracy
    base, x, th = _two_class_stream(3.0, num=3)
    e2 = runtime.order_effect(base, x, th, "l2", orders=10, seed=0, policy=WORST_CASE, inflate=2.0)
    assert e2.loc[0, "kept"] == 2 and set(e2.kept) == {1, 2}
    assert set(e2.accuracy.round(6)) == {round(100 / 3, 6), round(200 / 3, 6)}


def test_order_effect_rejects_bad_input():
    base, x, th = _two_class_stream(3.0)
    with pytest.raises(ValueError, match="inflate"):
        runtime.order_effect(base, x, th, "l2", inflate=0.0)
    with pytest.raises(ValueError, match="one row per input"):
        runtime.order_effect(base.iloc[:3], x, th, "l2")
    with pytest.raises(ValueError, match="orders"):
        runtime.order_effect(base, x, th, "l2", orders=-1)
    with pytest.raises(ValueError, match="policy"):
        runtime.order_effect(base, x, th, "l2", policy="maybe")


def test_fit_linear_standard_errors_match_scipy():
    from scipy.stats import linregress
    rng = np.random.default_rng(0)
    x = np.array([1e3, 3e3, 1e4, 3e4, 1e5] * 3)
    y = 0.002 + 2e-5 * x + rng.normal(0, 1e-3, len(x))
    f, ref = runtime.fit_linear(x, y), linregress(x, y)
    assert f["slope"] == pytest.approx(ref.slope) and f["intercept"] == pytest.approx(ref.intercept)
    assert f["slope_se"] == pytest.approx(ref.stderr) and f["intercept_se"] == pytest.approx(ref.intercept_stderr)
    assert np.isnan(runtime.fit_linear([1.0, 2.0], [1.0, 3.0])["intercept_se"])
    with pytest.raises(ValueError, match="distinct"):
        runtime.fit_linear([2.0, 2.0, 2.0], [1.0, 2.0, 3.0])


def test_intercept_reading_compares_the_intercept_with_its_standard_error():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    e = np.array([1.0, -1.0, -1.0, 1.0])  # orthogonal to 1 and x: the fit's intercept is exactly a
    for a, want in [(0.0, "zero"), (5.0, "positive"), (-5.0, "negative"), (0.2, "zero")]:
        f = runtime.fit_linear(x, a + 2.0 * x + 0.1 * e)
        assert f["intercept"] == pytest.approx(a, abs=1e-12)
        assert runtime.intercept_reading(f) == want
    assert runtime.intercept_reading(runtime.fit_linear(x, 0.2 + 2.0 * x + 0.1 * e), k=0.5) == "positive"
    with pytest.raises(ValueError, match="k must"):
        runtime.intercept_reading({"intercept": 1.0, "intercept_se": 0.1}, k=0.0)


def test_fits_by_fits_each_group_and_bounds_the_fixed_cost_by_the_smallest_run():
    df = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 3, "x": [1.0, 2.0, 4.0] * 2,
                       "y": [1.0, 2.0, 4.0, 3.0, 5.0, 9.0]})
    f = runtime.fits_by(df, "g", "x", "y")
    assert list(f.index) == ["a", "b"]
    assert f.loc["a", "slope"] == pytest.approx(1.0) and f.loc["b", "intercept"] == pytest.approx(1.0)
    assert f.loc["b", "y_at_x_min"] == 3.0 and f.loc["b", "x_min"] == 1.0
    two = runtime.fits_by(df.assign(h=[0, 0, 0, 1, 1, 1]), ["g", "h"], "x", "y")
    assert list(two.index) == [("a", 0), ("b", 1)] and two.index.names == ["g", "h"]


def test_fit_curve_leaves_gaps_where_the_line_is_not_positive():
    x, y = runtime.fit_curve({"intercept": -1.0, "slope": 1.0}, 0.5, 4.0, num=8)
    assert x[0] == pytest.approx(0.5) and x[-1] == pytest.approx(4.0)
    assert np.isnan(y[x <= 1.0]).all() and np.allclose(y[x > 1.0], x[x > 1.0] - 1.0)
    assert not np.isnan(runtime.fit_curve({"intercept": -1.0, "slope": 1.0}, 0.5, 4.0, positive=False)[1]).any()
    with pytest.raises(ValueError, match="lo and hi"):
        runtime.fit_curve({"intercept": 0.0, "slope": 1.0}, 2.0, 1.0)


def test_per_sample_cost_summarizes_each_n():
    t = pd.DataFrame({"column": ["a"] * 4, "n": [100, 100, 900, 900], "seconds": [1.0, 3.0, 5.0, 5.0]})
    p = runtime.per_sample_cost(t, n0=100)
    assert list(p.n) == [100, 900]
    assert list(p["mean"]) == [2.0, 5.0] and list(p["min"]) == [1.0, 5.0] and list(p["max"]) == [3.0, 5.0]
    assert list(p.per_sample) == pytest.approx([2.0 / 200, 5.0 / 1000])


def test_memory_step_grid_times_every_combination():
    g = runtime.memory_step_grid([10, 20], [4, 8], ["l2"], seed=0, repeats=1)
    assert list(zip(g.dim, g["size"])) == [(4, 10), (4, 20), (8, 10), (8, 20)] and (g.seconds > 0).all()


def test_tidy_fills_missing_statuses_and_counts_meetings():
    a = pd.DataFrame([dict(order=0, accuracy=50.0, acr=0.1, acr_proxy=0.2, kept=3, shrunk=1)])
    b = pd.DataFrame([dict(order=0, accuracy=40.0, acr=0.1, acr_proxy=0.2, kept=2, abstain_inside=2)])
    e = runtime.tidy([a.assign(run="a"), b.assign(run="b")])
    assert list(e.met) == [1, 2] and list(e.abstain_intersect) == [0, 0] and list(e.abstain_base) == [0, 0]
    assert e.shrunk.dtype.kind == "i"
    with pytest.raises(ValueError, match="frames"):
        runtime.tidy([])


def test_order_spread_and_widest_range_read_the_orders():
    base, x, th = _two_class_stream(3.0, num=3)
    e = runtime.tidy([runtime.order_effect(base, x, th, "l2", orders=10, seed=0, policy=WORST_CASE, inflate=2.0)
                      .assign(run="inflated"),
                      runtime.order_effect(base, x, th, "l2", orders=10, seed=0, policy=WORST_CASE).assign(run="as is")])
    sp = runtime.order_spread(e, ["run"])
    assert sp.loc["inflated", "acc_range_pp"] == pytest.approx(100 / 3) and sp.loc["as is", "acc_range_pp"] == 0
    assert list(runtime.order_changes(sp).index) == ["inflated"]
    # last-bit differences of a sum taken in another order are no change
    noisy = sp.assign(acr_max=sp.acr_min * (1 + 1e-14), acrp_max=sp.acrp_min * (1 + 1e-14))
    assert list(runtime.order_changes(noisy).index) == ["inflated"]
    assert list(runtime.order_changes(sp.assign(acr_max=sp.acr_min + 0.01)).index) == ["inflated", "as is"]
    w = runtime.widest_order_range(e, ["run"])
    assert w["run"] == {"run": "inflated"} and w["range_pp"] == pytest.approx(100 / 3)
    assert w["best"]["kept"] == 2 and w["worst"]["kept"] == 1
    assert w["best"]["accuracy"] - w["worst"]["accuracy"] == pytest.approx(w["range_pp"])
    assert w["worst"]["abstain_intersect"] + w["worst"]["abstain_inside"] == 2


def _clearance_brute_force(c, p, s, norm):
    best = np.inf
    for i in range(len(c)):
        for j in range(len(c)):
            if p[i] >= 0 and p[j] >= 0 and p[i] != p[j]:
                d = np.abs(c[i] - c[j]).sum() if norm == "l1" else np.sqrt(((c[i] - c[j]) ** 2).sum())
                best = min(best, d / (s[i].max() + s[j].max()))
    return best


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_max_intersect_clearance_is_the_smallest_distance_over_enclosing_radii(norm):
    rng = np.random.default_rng(1)
    c, s = rng.uniform(0, 1, (12, 5)), rng.uniform(0.01, 0.3, (12, 5)) * (3.0 if norm == "l1" else 1.0)
    p = rng.integers(-1, 3, 12)
    got = runtime.max_intersect_clearance(c, p, s, norm)
    assert got == pytest.approx(_clearance_brute_force(c, p, s, norm))
    # pairs whose enclosing balls overlap: a brute-force count over unordered pairs of different classes
    ratio = [[np.linalg.norm(c[i] - c[j], ord=2 if norm == "l2" else 1) / (s[i].max() + s[j].max())
              for j in range(i + 1, 12) if p[i] >= 0 and p[j] >= 0 and p[i] != p[j]] for i in range(12)]
    want = sum(r <= 1.0 for row in ratio for r in row)
    assert runtime.enclosing_overlaps(c, p, s, norm) == want > 0
    assert runtime.max_intersect_clearance(c, np.zeros(12, int), s, norm) == np.inf  # one class: nothing to meet
    with pytest.raises(ValueError, match="norm"):
        runtime.max_intersect_clearance(c, p, s, "linf")
    with pytest.raises(ValueError, match=r"\(B, d\)"):
        runtime.max_intersect_clearance(c, p[:3], s, norm)


def test_no_order_meets_below_the_clearance_and_some_meet_above_it():
    base, x, th = _two_class_stream(3.0)  # unit semi-axes 3 apart: clearance 3 / (1 + 1) = 1.5
    preds = base.predict.to_numpy()
    assert runtime.max_intersect_clearance(x.numpy(), preds, th, "l2") == pytest.approx(1.5)
    below = runtime.tidy([runtime.order_effect(base, x, th, "l2", orders=4, inflate=1.45)])
    above = runtime.tidy([runtime.order_effect(base, x, th, "l2", orders=4, inflate=1.55)])
    assert (below.met == 0).all() and (above.met > 0).all()


def test_ancer_share_is_each_stage_over_the_total():
    rows = [dict(input=0, method=m, stage=s, seconds=1.0 + i)
            for m, stages in runtime.STAGES_OF.items() for i, s in enumerate(stages) if s != runtime.MEMORY]
    t = runtime.runtime_table(pd.DataFrame(rows), memory_seconds=0.5)
    share = runtime.ancer_share(t)
    assert share.sum() == pytest.approx(1.0) and share[runtime.CERTIFY] == pytest.approx(3.0 / 6.5)
