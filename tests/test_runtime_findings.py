"""Notebook 04's words and figures (ancer_lite.studies.runtime_findings, runtime_figures): the numbers in each
sentence come from the tables given, the wording follows the numbers, bad input is refused, and the figures
draw what their captions say."""
from __future__ import annotations

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from figure_checks import house_style, texts  # noqa: E402, F401  (tests/ is on sys.path under pytest)

from ancer_lite.core.memory import SHRINK, WORST_CASE  # noqa: E402
from ancer_lite.methods.registry import OptimSettings  # noqa: E402
from ancer_lite.report import style  # noqa: E402
from ancer_lite.runs.paper import load_table  # noqa: E402
from ancer_lite.runs.profiles import get_profile  # noqa: E402
from ancer_lite.runs.setups import theta_of  # noqa: E402
from ancer_lite.studies import runtime  # noqa: E402
from ancer_lite.studies import runtime_figures as RF  # noqa: E402
from ancer_lite.studies import runtime_findings as F  # noqa: E402
from ancer_lite.studies.image_study import selection_sigma  # noqa: E402

QUICK = {s.name: s for s in get_profile("quick").images}
NORMS = ("l2", "l1")
PAPER_ROW = F.PAPER_BUDGET_ROW


# ---- formatting ----------------------------------------------------------------------------------------------

def test_num_and_duration():
    assert F.num(0.012345) == "0.012"
    assert F.num(12345.6, 3) == "12,346"
    assert F.num(2.5012) == "2.5"
    assert F.num(0) == "0" and F.num(float("inf")) == "inf"
    assert F.duration(0.0149143) == "14.9 ms"
    assert F.duration(1.234) == "1.23 s"
    with pytest.raises(ValueError, match="digits"):
        F.num(1.0, 0)
    with pytest.raises(ValueError, match="seconds"):
        F.duration(-1.0)


def test_parameters_and_column_title():
    assert F.parameters(torch.nn.Linear(3, 2)) == 8
    with pytest.raises(ValueError, match="torch.nn.Module"):
        F.parameters("model")
    assert F.column_title("mnist") == "MNIST-5k (CNN)"
    assert F.column_title("elsewhere") == "elsewhere"


def test_linear_words():
    assert F.linear_words(0.99) == "close to linear"
    assert F.linear_words(0.9) == "only roughly linear"
    with pytest.raises(ValueError, match="r2_min"):
        F.linear_words(float("nan"))


# ---- CERTIFY against N -----------------------------------------------------------------------------------------

def certify_timings(intercepts: dict[str, float], slopes: dict[str, float], noise: float = 0.0):
    rng = np.random.default_rng(0)
    rows = []
    for c in intercepts:
        for n in (1_000, 3_000, 10_000, 30_000, 100_000):
            for _ in range(3):
                rows.append(dict(column=c, n=n, seconds=intercepts[c] + slopes[c] * n + noise * rng.normal()))
    return pd.DataFrame(rows)


def test_intercepts_and_certify_fit_text():
    t = certify_timings({"digits": 4e-3, "mnist": 0.0}, {"digits": 1e-6, "mnist": 1e-5}, noise=1e-5)
    fits = F.fits_with_readings(t, "column", "n", "seconds")
    assert fits.loc["digits", "reading"] == "positive"
    text = F.certify_fit_text(fits, runtime.per_sample_cost(t, 100))
    assert "close to linear in N" in text
    assert f"{F.num(1e6 * fits.loc['mnist', 'slope'])} µs (MNIST-5k (CNN))" in text
    assert "A fixed cost shows where the intercept is more than two standard errors above zero (8×8 digits (MLP): 4.0" \
        in text
    assert "N = 1,000:" in text and F.duration(fits.loc["mnist", "y_at_x_min"]) in text
    with pytest.raises(ValueError, match="names must be rows"):
        F.intercepts(fits, ["cifar"])
    with pytest.raises(ValueError, match="reading"):
        F.certify_fit_text(fits.drop(columns="reading"), runtime.per_sample_cost(t, 100))


# ---- memory steps ----------------------------------------------------------------------------------------------

def memory_steps(ns_per_entry_pixel):
    """norm, dim, size, seconds with the given ns per entry and pixel at each size (a function of size)."""
    rows = []
    for norm in NORMS:
        for d in (64, 784, 3_072):
            for m in (100, 300, 1_000, 3_000, 10_000):
                rows.append(dict(norm=norm, dim=d, size=m, seconds=1e-9 * ns_per_entry_pixel(norm, d, m) * m * d))
    return pd.DataFrame(rows)


def test_trend_words_follow_the_measured_ratio():
    flat = memory_steps(lambda norm, d, m: 10.0)
    assert F.trend_words(F.per_entry_trend(flat)).startswith("flat: from |M| = 100 to 10,000 no series moves")
    assert "flat" in F.step_caption(F.per_entry_trend(flat))
    # d = 3,072, l2: from 4 to 12.5 ns; d = 64, l2: from 24 to 13 ns
    table = {(3_072, 100): 4.0, (3_072, 10_000): 12.5, (64, 100): 24.0, (64, 10_000): 13.0}
    steps = memory_steps(lambda norm, d, m: table.get((d, m), 10.0) if norm == "l2" else 10.0)
    trend = F.per_entry_trend(steps)
    assert trend.loc[("l2", 3_072), "ratio"] == pytest.approx(12.5 / 4.0)
    words = F.trend_words(trend)
    assert words.startswith("not flat")
    assert "rises ×3.1, from 4.00 to 12.5 ns (d = 3,072, ℓ2)" in words
    assert "falls ×1.8, from 24.0 to 13.0 ns (d = 64, ℓ2)" in words
    caption = F.step_caption(trend)
    assert "flat were the cost proportional" in caption and "rises ×3.1" in caption
    with pytest.raises(ValueError, match="flat"):
        F.trend_words(trend, flat=1.0)
    with pytest.raises(ValueError, match="steps lacks"):
        F.per_entry_trend(steps.drop(columns="dim"))


def test_memory_step_text():
    steps = memory_steps(lambda norm, d, m: 10.0 if norm == "l2" else 5.0)
    fits = F.fits_with_readings(steps, ["norm", "dim"], "size", "seconds")
    text = F.memory_step_text(fits, steps, 0.016)
    assert "close to linear in |M|" in text
    assert "the fitted slopes are 5.0-10 ns per memory entry and pixel" in text
    assert "A memory of 10,000 regions of d = 3,072 costs 307 ms (ℓ2) and 154 ms (ℓ1) per step." in text
    assert "at most 1.6% of ANCER's time" in text
    with pytest.raises(ValueError, match="memory_share"):
        F.memory_step_text(fits, steps, 1.6)


# ---- Table 3 ---------------------------------------------------------------------------------------------------

def stage_table(iso, ancer, certify, memory=0.0):
    t = pd.DataFrame(0.0, index=["fixed", "isotropic", "ancer"], columns=list(runtime.STAGES))
    t[runtime.CERTIFY] = certify
    t.loc["isotropic", runtime.ISO_OPT] = t.loc["ancer", runtime.ISO_OPT] = iso
    t.loc["ancer", runtime.ANCER_OPT] = ancer
    t.loc[["isotropic", "ancer"], runtime.MEMORY] = memory
    t["total"] = t.sum(axis=1)
    return t


@pytest.fixture
def table3():
    cols = {name: SimpleNamespace(setup=QUICK[name]) for name in ("digits", "mnist", "digits_cnn")}
    budgets = F.budget_table(cols, NORMS)
    tables, timed = {}, {}
    for name in cols:
        for norm in NORMS:
            tables[name, norm] = stage_table(0.08, 0.1, 0.01 if "digits" in name else 0.1, 0.001)
        s = QUICK[name]
        timed[name] = (name, s.iterations, s.samples, s.n)
    for norm in NORMS:
        tables[PAPER_ROW, norm] = stage_table(0.4, 0.5, 0.9, 0.008)
    timed[PAPER_ROW] = ("mnist", 100, 100, 100_000)
    ours = pd.DataFrame({k: runtime.ratios(t) for k, t in tables.items()}).T
    ours.index.names = ["column", "norm"]
    return SimpleNamespace(tables=tables, timed=timed, budgets=budgets, ours=ours,
                           theirs=F.paper_ratios(load_table("ancer_table3")))


def test_budget_table_and_text(table3):
    b = table3.budgets
    assert list(b.index) == ["digits", "mnist", "digits_cnn"]
    assert b.loc["mnist", "n"] == QUICK["mnist"].n
    text = F.budget_text(b, runtime.PAPER_BUDGET, 2)
    assert text.startswith(f"Selection σ: ℓ2: σ = {b['sigma l2'].iloc[0]:g}")
    assert f"**MNIST-5k (CNN)**: {QUICK['mnist'].iterations} steps × {QUICK['mnist'].samples} samples" in text
    assert "the paper's: 100 × 100, N = 100,000." in text
    assert text.endswith("at the paper's budget on 2 inputs, the setting whose ratios compare with the paper's.")
    assert "paper's budget on" not in F.budget_text(b, runtime.PAPER_BUDGET, 2, paper_column=None)
    with pytest.raises(ValueError, match="sigma"):
        F.budget_text(b.drop(columns=["sigma l2", "sigma l1"]), runtime.PAPER_BUDGET, 2)


def test_memory_share(table3):
    # the digits' quick rows: 1 ms of memory in 191 ms; the paper budget's: 8 ms in 1.808 s
    assert F.memory_share(table3.tables) == pytest.approx(0.001 / (0.08 + 0.1 + 0.01 + 0.001))
    with pytest.raises(ValueError, match="table3"):
        F.memory_share({})


def test_paper_ratios_match_the_paper():
    theirs = F.paper_ratios(load_table("ancer_table3"))
    assert theirs.loc["(a) ResNet18", "ANCER / Fixed σ"] == pytest.approx(2.7 / 1.6)
    assert theirs.loc["(c) ResNet50", "ANCER / Iso DD"] == pytest.approx(147.0 / 136.0)
    assert theirs.loc["(a) ResNet18", "norm"] == "l2" and theirs.loc["(b) WideResNet40", "norm"] == "l1"
    assert theirs.loc["(c) ResNet50", "dataset"] == "ImageNet"
    with pytest.raises(ValueError, match="Table 3"):
        F.paper_ratios(pd.DataFrame({"value": [1.0]}))


def test_timing_summary(table3):
    t = certify_timings({"digits": 4e-3}, {"digits": 1e-6})
    fits_n = F.fits_with_readings(t, "column", "n", "seconds")
    steps = memory_steps(lambda norm, d, m: 10.0)
    fits_m = F.fits_with_readings(steps, ["norm", "dim"], "size", "seconds")
    text = F.timing_summary(table3.ours, table3.theirs, table3.tables, fits_n, fits_m, steps, 0.016, [1.6, 3.2],
                            2, runtime.PAPER_BUDGET, NORMS)
    b = table3.ours.loc[PAPER_ROW, "ANCER / Fixed σ"]
    assert f"ANCER costs {b.min():.2f}-{b.max():.2f}× Fixed σ (paper, GPU: 1.34-1.69×; ours outside" in text
    assert "oversubscribed" in text and "on 2 cores" in text
    assert "At the quick budgets" in text
    assert "10,000 regions of 3,072 pixels cost" in text


def test_table3_figure_has_at_most_six_panels_and_the_papers_ratios(table3):
    fig = RF.table3_figure(table3.tables, table3.timed, table3.budgets, table3.ours, table3.theirs)
    assert len(fig.axes) <= 6
    words = " ".join(texts(fig))
    assert "paper (a) ResNet18, ℓ2" in words and "paper (c) ResNet50, ImageNet" in words
    assert "MNIST-5k (CNN), paper's budget, ℓ1" in words
    assert fig.legends[0].get_title().get_text().startswith("ANCER Table 3 on 8×8 digits (MLP) for CIFAR-10")
    assert style.smallest_font(fig) >= style.MIN_FONT
    rows = RF.ratio_rows(table3.ours, table3.theirs)
    assert list(rows.source[:3]) == ["paper"] * 3 and rows.label[3].startswith("MNIST-5k (CNN), paper's budget")


# ---- the test order --------------------------------------------------------------------------------------------

def stress_table(meet_x1: bool = True):
    """A tidy stress table: columns mnist and digits, ANCER meeting at x1 on mnist when `meet_x1`."""
    rows = []
    for c, n_inputs in (("mnist", 80), ("digits", 150)):
        for norm in NORMS:
            for method in ("isotropic", "ancer"):
                for policy in (SHRINK, WORST_CASE):
                    for f in (1, 2, 8):
                        for order in range(3):
                            met = 0
                            acc = 50.0
                            acr = 0.5
                            if f > 1 and c == "digits" and norm == "l2":
                                met = 40 + 10 * order
                                acc = 90.0 - 30 * order if policy == SHRINK else 50.0
                            if meet_x1 and c == "mnist" and method == "ancer":
                                met = {"l2": (23, 49, 30), "l1": (43, 60, 50)}[norm][order]
                                if policy == WORST_CASE:
                                    acc = {"l2": (40.0, 73.75, 50.0), "l1": (50.0, 68.75, 60.0)}[norm][order]
                                else:
                                    acr = 0.5 + 0.01 * order
                            rows.append(dict(column=c, norm=norm, method=method, policy=policy, inflate=f,
                                             order=order, accuracy=acc, acr=acr, acr_proxy=acr, met=met, kept=n_inputs - met,
                                             shrunk=met if policy == SHRINK else 0, abstain_inside=0,
                                             abstain_intersect=met if policy == WORST_CASE else 0, abstain_base=0))
    return pd.DataFrame(rows)


KEYS = ["column", "norm", "method", "policy", "inflate"]
N_TEST = {"mnist": 80, "digits": 150}


def logged(meet: bool):
    e = stress_table(meet)
    e = e[e.inflate == 1].drop(columns="inflate").assign(sigma=0.25)
    spread = runtime.order_spread(e, ["column", "norm", "sigma", "method", "policy"])
    return spread, runtime.order_changes(spread)


def test_real_order_effect():
    s = runtime.order_spread(stress_table(), KEYS)
    real = F.real_order_effect(s, N_TEST).set_index("norm")
    assert list(real.index) == ["l2", "l1"] and (real.column == "mnist").all() and (real.method == "ancer").all()
    assert real.loc["l2", "met_hi"] == 49 and real.loc["l1", "met_lo"] == 43
    assert real.loc["l2", f"range_{WORST_CASE}"] == pytest.approx(33.75)
    assert real.loc["l1", f"range_{SHRINK}"] == 0
    assert F.real_order_effect(runtime.order_spread(stress_table(False), KEYS), N_TEST).empty
    with pytest.raises(ValueError, match="inflate"):
        F.real_order_effect(s.xs(2, level="inflate"), N_TEST)


def test_order_summary_leads_with_the_real_certificates_and_the_contradiction():
    stress = stress_table()
    s = runtime.order_spread(stress, KEYS)
    spread, changed = logged(True)
    steps = {("mnist", n): {"step": 1.2, "grid_top": 0.1, "times": 12.0} for n in NORMS}
    text = F.order_summary(s, stress, spread, changed, N_TEST, 2, steps, 19, 13_089)
    first = text.splitlines()[0]
    assert first.startswith("* **With the real certificates (×1) the test order is not negligible for ANCER on "
                            "MNIST-5k (CNN)**")
    assert "23-49 (ℓ2) and 43-60 (ℓ1) of its 80 test inputs" in first
    assert "moves by 33.8 (ℓ2) and 18.8 (ℓ1) percentage points between two of 3 orders" in first
    assert "**This contradicts ANCER §6**" in first and "almost negligible" in first
    assert "large ANCER step" in first and "at 1.2 θ, 12×" in first and "12× the largest step of the grid (0.1 θ)" in first
    assert "the certified accuracy does not move (a shrunk region keeps its prediction); the ACR moves by at most " \
        "0.020 and the ACR̃ by at most 0.020." in first
    assert "On 8×8 digits (MLP) no two certified regions" in text
    assert "**Inflated regions** (the stress test, ×2-×8; not certificates) meet in 16 of 32 inflated runs, from ×2 " \
        "on, and 16 of them change with the order" in text
    assert "up to 60.0 percentage points" in text and "×2" in text.splitlines()[-1]
    # a small range reads negligible and agrees with the paper
    calm = stress.copy()
    calm.loc[(calm.inflate == 1) & (calm.policy == WORST_CASE), "accuracy"] = 50.0
    text = F.order_summary(runtime.order_spread(calm, KEYS), calm, spread, changed, N_TEST, 2, steps, 19, 0)
    assert "is negligible for ANCER" in text and "agrees with ANCER §6" in text


def test_order_summary_without_meetings():
    stress = stress_table(False)
    spread, changed = logged(False)
    text = F.order_summary(runtime.order_spread(stress, KEYS), stress, spread, changed, N_TEST, 2, {}, 19, 32)
    assert text.startswith("* **With the real certificates the test order changes nothing** (0 of 16 runs change "
                           "over 3 orders)")
    assert "(32 pairs have overlapping enclosing balls" in text and "(19 over all runs" in text


def test_meeting_text():
    spread, changed = logged(True)
    clear = pd.DataFrame([dict(column="mnist", norm="l2", method="ancer", max_radius=2.78, max_semi_axis=68.7,
                               max_axis_ratio=136.7, clearance=0.04, overlapping_pairs=8546),
                          dict(column="digits", norm="l1", method="ancer", max_radius=0.86, max_semi_axis=0.93,
                               max_axis_ratio=1.18, clearance=6.17, overlapping_pairs=0)])
    text = F.meeting_text(spread, changed, clear, 2)
    assert text.startswith("**Certified regions of different classes meet** in 2 of 8 runs (all of them ANCER on "
                           "MNIST-5k (CNN)), and the order changes the results of 4 of the 16 (run, policy) pairs.")
    assert "up to 137× its shortest (MNIST-5k (CNN), ℓ2)" in text
    assert "in 1 of 2 runs the enclosing balls" in text and "8,546 pairs" in text
    quiet, none = logged(False)
    assert F.meeting_text(quiet, none, clear, 2).startswith("**No two certified regions of different classes meet**")
    with pytest.raises(ValueError, match="ANCER"):
        F.meeting_text(spread, changed, clear.assign(method="isotropic"), 2)


def test_ancer_step_note():
    setup = QUICK["mnist"]
    th = theta_of("l1", selection_sigma(setup, "l1"))
    col = SimpleNamespace(setup=setup, chosen={"l1": OptimSettings().changed("ancer", lr=2.0 * th)})
    note = F.ancer_step_note(col, "l1")
    assert note["step"] == pytest.approx(2.0)
    assert note["grid_top"] == max(setup.ancer_lr_grid)
    assert note["times"] == pytest.approx(2.0 / max(setup.ancer_lr_grid))


def test_order_figure_names_what_it_shows():
    s = runtime.order_spread(stress_table(), KEYS)
    assert RF.inflation_words((1, 2, 4, 8)) == ("the real certificates (×1) and the same regions inflated ×2-×8 "
                                                "(a stress test; not certificates)")
    assert RF.inflation_words((2,)) == "the same regions inflated ×2 (a stress test; not certificates)"
    assert "real certificates (×1)" in RF.order_reproduces((1, 2)) and "×1" in RF.order_caption((1, 2))
    with pytest.raises(ValueError, match="factors"):
        RF.inflation_words(())
    fig = RF.order_effect_figure(s, N_TEST, 2)
    title = fig.legends[0].get_title().get_text()
    real = RF.real_effect_words(s, N_TEST, tex=True)
    assert "ANCER $\\ell_{1}$" in real and "ANCER ℓ1" in RF.real_effect_words(s, N_TEST)
    assert title == RF.order_title(["mnist", "digits"], (1, 2, 8), real=real)
    assert " ".join(title.splitlines()[2:]) == real[0].upper() + real[1:]
    assert max(len(line) for line in title.splitlines()[2:]) <= RF.TITLE_WIDTH
    assert title.startswith("ANCER §6 on MNIST-5k (CNN) for ImageNet, 8×8 digits (MLP) for CIFAR-10")
    assert "real certificates (×1)" in title and "inflated ×2-×8" in title
    assert style.smallest_font(fig) >= style.MIN_FONT


def test_other_figures_draw():
    t = certify_timings({"digits": 4e-3, "mnist": 1e-3}, {"digits": 1e-6, "mnist": 1e-5}, noise=1e-5)
    fits = F.fits_with_readings(t, "column", "n", "seconds")
    fig = RF.certify_vs_n_figure(runtime.per_sample_cost(t, 100), fits, (1_000, 100_000))
    assert fig._suptitle.get_text().startswith("ANCER §7.3 on 8×8 digits (MLP) for CIFAR-10")
    assert style.smallest_font(fig) >= style.MIN_FONT
    steps = memory_steps(lambda norm, d, m: 10.0)
    fig = RF.memory_step_figure(steps, F.fits_with_readings(steps, ["norm", "dim"], "size", "seconds"))
    assert "synthetic memories" in fig._suptitle.get_text()
    assert style.smallest_font(fig) >= style.MIN_FONT


def test_real_effect_words_quote_the_largest_effect_of_the_real_certificates():
    s = runtime.order_spread(stress_table(), KEYS)
    flat = s.reset_index()
    one = flat[flat.inflate == 1]
    met = one[one.policy == SHRINK].assign(share=lambda d: d.met_max / d.column.map(N_TEST))
    top = met.loc[met.share.idxmax()]
    abstain = one[one.policy == WORST_CASE].acc_range_pp.max()
    words = RF.real_effect_words(s, N_TEST)
    assert words.startswith("with the real certificates (×1), ")
    assert (f"up to {top.met_max:.0f} of {N_TEST[top.column]} test inputs" in words if top.met_max > 0
            else "no test input meets" in words)
    shrink = one[one.policy == SHRINK].acc_range_pp.max()
    assert (f"moves by up to {shrink:.1f} pp under the shrink policy" if shrink > 0
            else "does not move under the shrink policy") in words
    assert (f"moves by up to {abstain:.1f} pp under abstention" if abstain > 0
            else "does not move under abstention") in words
    assert RF.order_caption((1, 2), words).endswith(" With the real certificates (×1), " + words.split("(×1), ")[1]
                                                    + ".")
    # without x1 among the factors there is nothing to say
    assert RF.real_effect_words(s[s.index.get_level_values("inflate") != 1], N_TEST) == ""
    quiet = s.assign(met_max=0, acc_range_pp=0.0)
    assert RF.real_effect_words(quiet, N_TEST) == ("with the real certificates (×1), no test input meets an earlier "
                                                   "region of another class, and the certified accuracy between orders "
                                                   "does not move under the shrink policy and does not move under "
                                                   "abstention")


def test_bounds_are_rounded_outward():
    assert F.bound(0.9685, 3, "lower") == "0.968" and F.bound(0.15, 1, "upper") == "0.2"
    assert F.bound(0.1, 1, "upper") == "0.1" and F.bound(0.3, 1, "lower") == "0.3"  # exact values stay
    assert F.bound(2.0001, 2, "upper") == "2.01" and F.bound(0.0, 3, "lower") == "0.000"
    with pytest.raises(ValueError, match="side"):
        F.bound(1.0, 2, "up")
    with pytest.raises(ValueError, match="decimals"):
        F.bound(1.0, -1, "lower")
