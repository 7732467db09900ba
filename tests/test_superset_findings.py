"""Notebook 05's findings (`superset_findings`): the words come from the numbers given, the claim rows are the
claims file's, the verdicts are the intervals', and the image-domain measures of Figure 5 match closed forms."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from ancer_lite.core.regions import region_norm
from ancer_lite.evaluation.image_domain import box_inside_log10, far_edge
from ancer_lite.evaluation.intervals import Effect
from ancer_lite.report import claims
from ancer_lite.studies import superset_findings as sf
from ancer_lite.studies import superset_study as ss

NAMES = {"digits": "8×8 digits (MLP)", "mnist": "MNIST-5k (CNN)", "digits_cnn": "8×8 digits (CNN)"}


def effect(estimate: float, half: float = 0.01, n: int = 80) -> Effect:
    return Effect(estimate, estimate - half, estimate + half, 0.95, n, 100)


def pooled_table() -> pd.DataFrame:
    rows = {("digits", "l1"): (52, 33, 80, 72), ("digits", "l2"): (28, 8, 88, 84), ("mnist", "l1"): (46, 42, 64, 61),
            ("mnist", "l2"): (25, 19, 81, 80), ("digits_cnn", "l1"): (60, 47, 88, 84),
            ("digits_cnn", "l2"): (40, 17, 86, 81)}
    t = pd.DataFrame([dict(column=c, norm=n, lp=v[0], lp_without_ties=v[1], proxy=v[2], proxy_without_ties=v[3],
                           inputs=80) for (c, n), v in rows.items()])
    return t.set_index(["column", "norm"])


def effects_table() -> pd.DataFrame:
    rows = []
    for col in NAMES:
        for norm in ss.NORMS:
            rows.append(dict(column=col, norm=norm, claim="C4/proxy", sigma="all", effect=effect(-0.1), paper="≥ 90%"))
            rows.append(dict(column=col, norm=norm, claim="C4/ℓp", sigma="all",
                             effect=effect(0.0 if norm == "l1" else -0.2), paper="≥ 50%"))
            if norm == "l2":
                for sigma in (0.25, 1.0):
                    rows.append(dict(column=col, norm=norm, claim="C5", sigma=sigma,
                                     effect=effect(0.0 if (col, sigma) == ("mnist", 1.0) else -0.1),
                                     paper="gap larger, σ-factors alike (σ = 0.25)"))
            for claim in ("C6/ACR~", "C6/ACR"):
                e = effect(0.0) if (col, norm, claim) == ("digits", "l1", "C6/ACR~") else effect(0.5)
                rows.append(dict(column=col, norm=norm, claim=claim, sigma=1.0, effect=e, paper=""))
    return pd.DataFrame(rows)


def control_table() -> pd.DataFrame:
    return pd.DataFrame([dict(column=c, sigma=s, claim=k, acr_iso=1.0, acr_iso_extra=1.0, acr_ancer=1.0,
                              effect=effect(0.0 if (c, s) == ("mnist", 1.0) else -0.1) if k == "C2/control"
                              else effect(0.02 if (c, s) == ("mnist", 1.0) else -0.1, 0.005))
                         for c in NAMES for s in (0.25, 1.0) for k in ("C2/control", "extra iterations")])


def table6_table() -> pd.DataFrame:
    zero = {("mnist", "l2"), ("mnist", "l1"), ("digits_cnn", "l1")}
    rows = []
    for col in NAMES:
        for norm in ss.NORMS:
            for method, acc, acr in (("Fixed σ", 38.0, 0.1), ("Isotropic DD", 37.0, 0.1), ("ANCER", 35.0, 0.2),
                                     ("Average Σ (mean)", 0.0 if (col, norm) in zero else 28.0, 0.05),
                                     ("Average Σ (rms)", 0.0 if (col, norm) == ("mnist", "l2") else 28.0, 0.05)):
                rows.append({"column": col, "norm": norm, "sigma": 1.0, "method": method, "0": acc, "0.25": acc / 2,
                             "acr": acr, "acr_proxy": acr})
    return pd.DataFrame(rows)


# -- helpers --------------------------------------------------------------------------------------
def test_pct_and_the_interval_verdicts():
    pooled = pooled_table()
    assert sf.pct(pooled, "mnist", "l2", "proxy") == "81%"
    with pytest.raises(ValueError, match="no row"):
        sf.pct(pooled, "cifar", "l2", "proxy")
    with pytest.raises(ValueError, match="key"):
        sf.pct(pooled, "mnist", "l2", "volume")
    eff = effects_table()
    assert sf.holding(eff, "C4/proxy") == "0 of 6 (fails on 6)"
    assert sf.holding(eff, "C4/ℓp") == "0 of 6 (within noise on 3, fails on 3)"
    assert sf.holding(eff, "C6/ACR~") == "5 of 6 (within noise on 1)"
    assert sf.holding(eff, "C6/ACR") == "6 of 6"
    assert sf.holding(eff, "C5", "columns", sigma=0.25) == "0 of 3 columns (fails on 3)"
    assert list(sf.verdicts(eff, "C5", column="mnist")) == ["fails", "within noise"]
    assert list(sf.verdicts(eff, "C5", sigma=0.25)) == ["fails"] * 3
    with pytest.raises(ValueError, match="claim must be one of"):
        sf.verdicts(eff, "C9")
    with pytest.raises(ValueError, match="not a column"):
        sf.verdicts(eff, "C5", model="cnn")
    with pytest.raises(ValueError, match="no row"):
        sf.holding(eff, "C5", column="cifar")
    with pytest.raises(ValueError, match="norm"):
        sf.norm_name("linf")


def test_claim_rows_are_the_claims_files_rows():
    eff, ctl = effects_table(), control_table()
    ctl = ctl[ctl.claim == "C2/control"]
    rows = sf.claim_rows(eff, ctl, NAMES)
    assert len(rows) == len(eff) + len(ctl)
    first = rows[0]
    assert first == claims.claim_row("C4/proxy", "8×8 digits (MLP), ℓ2" if eff.norm[0] == "l2" else "8×8 digits (MLP), ℓ1",
                                     ss.EFFECT_CLAIMS["C4/proxy"], eff.effect[0], "≥ 90%", sf.NOTEBOOK)
    settings = [r["setting"] for r in rows]
    assert "MNIST-5k (CNN), ℓ2, σ = 0.25" in settings and "MNIST-5k (CNN), ℓ1, σ = 1" in settings
    control = [r for r in rows if r["claim"] == "C2/control"]
    assert {r["statement"] for r in control} == {sf.CONTROL_STATEMENT} and {r["paper"] for r in control} == {sf.CONTROL_PAPER}
    assert control[0]["setting"] == "8×8 digits (MLP), ℓ2, σ = 0.25"
    assert all(r["verdict"] == r_eff.verdict for r, r_eff in zip(rows, list(eff.effect) + list(ctl.effect)))
    with pytest.raises(ValueError, match="names lacks"):
        sf.claim_rows(eff, ctl, {"digits": "x"})


def test_effect_mismatches_compare_the_estimates_with_the_tables():
    pooled = pooled_table()
    t6 = table6_table()
    g = ss.GapFactors(np.ones(3), np.ones(3), np.ones(3), np.full(3, 0.9), 3)  # gap ratio 0.9: C5 = -0.1
    rows = [dict(column="mnist", norm="l2", claim="C4/proxy", sigma="all", effect=effect(0.81 - 0.9), paper="≥ 90%"),
            dict(column="mnist", norm="l2", claim="C5", sigma=0.25, effect=effect(-0.1), paper=""),
            dict(column="mnist", norm="l2", claim="C6/ACR~", sigma=1.0, effect=effect(0.2 - 0.05), paper=""),
            dict(column="mnist", norm="l2", claim="C6/ACR", sigma=1.0, effect=effect(0.1 - 0.05), paper="")]
    assert sf.effect_mismatches(pd.DataFrame(rows), pooled, {"mnist": g}, t6) == []
    rows[2]["effect"] = effect(0.3)
    bad = sf.effect_mismatches(pd.DataFrame(rows), pooled, {"mnist": g}, t6)
    assert len(bad) == 1 and "C6/ACR~" in bad[0]


# -- Figure 5 and the image domain ----------------------------------------------------------------
def test_domain_check_counts_the_overshooting_axes():
    x = np.zeros((1, 2, 2))
    x[0, 0, 0] = 1.0
    s = np.array([[[0.3, 5.0], [20.0, 0.9]]])
    d = sf.domain_check(x, s, iso_radius=0.4)
    assert d.pixels == 4 and d.overshoot == 2 and d.overshoot_share == 0.5 and d.overshoot_iso == 0
    assert d.log10_box == pytest.approx(box_inside_log10(x, s))
    assert d.log10_box_iso == pytest.approx(4 * np.log10(0.5))
    assert d.semi_axis_max == 20.0 and d.semi_axis_median == pytest.approx(2.95)
    assert d.delta.shape == x.shape and np.allclose(d.ratio, s / far_edge(x))
    assert d.region_norm == pytest.approx(ss.SAFE_LEVEL) and d.norm_delta == pytest.approx(np.linalg.norm(d.delta))
    assert d.moved == 2  # the axes of 20 and 5 reach the far edge, the budget ends on the axis of 0.9
    with pytest.raises(ValueError, match="iso_radius"):
        sf.domain_check(x, s, iso_radius=0.0)


def safe_of(norm_delta: float, holds: bool = True) -> ss.SafePerturbation:
    x = np.zeros((1, 2, 2), np.float32)
    return ss.SafePerturbation("mnist", 28, 3, x, np.zeros((1, 2, 2)), 3 if holds else 4, 3, 20_000, norm_delta,
                               0.99, 0.48, 0.39)


MARGINS = {"l2": ss.DomainMargin("mnist", "l2", 2.334, 0.008, 0.32),
           "l1": ss.DomainMargin("mnist", "l1", 3.324, -0.034, 2.0)}


def test_margin_words_say_where_the_gain_lies():
    text = sf.margin_words(MARGINS)
    assert "+233.4% (ℓ2), +332.4% (ℓ1) above Isotropic DD's" in text and "+0.8% (ℓ2), -3.4% (ℓ1)" in text
    assert "nearly all of the gain is axis length beyond the pixel range, where the regions hold no image." in text
    assert "+32.0% (ℓ2), +200.0% (ℓ1) larger on average" in text and "less than the ACR̃ says" in text
    inside = {"l2": ss.DomainMargin("mnist", "l2", 0.5, 0.3, -0.1)}
    text = sf.margin_words(inside)
    assert "nearly all of the gain is axis length within the pixel range" not in text and "differs from" in text
    assert "still certify larger" not in text
    with pytest.raises(ValueError, match="at least one"):
        sf.margin_words({})
    digits = [ss.DomainMargin("digits", n, 0.022, 0.021, 0.0207) for n in ss.NORMS]
    text = sf.domain_margin_text(digits + list(MARGINS.values()), NAMES)
    assert text.splitlines()[0] == ("* **8×8 digits (MLP)**: the three measures agree within 0.1 points at each norm: "
                                    "its regions' gain lies within the pixel range.")
    assert text.splitlines()[1] == ("* **MNIST-5k (CNN)**: ℓ2: ACR̃ +233.4%, with the axes counted within [0, 1] +0.8%, "
                                    "certified ℓ∞ radius +32.0%; ℓ1: ACR̃ +332.4%, with the axes counted within [0, 1] "
                                    "-3.4%, certified ℓ∞ radius +200.0%; nearly all of the gain is axis length beyond "
                                    "the pixel range, where the regions hold no image.")
    cnn = [ss.DomainMargin("digits_cnn", "l1", 0.358, 0.331, 0.306)]
    assert sf.domain_margin_text(cnn, NAMES).endswith("nearly all of the gain is axis length within the pixel range.")
    assert "part of the gain is axis length beyond the pixel range, part within it" in sf.margin_words(inside)
    table = sf.domain_margin_table(digits, NAMES)
    assert table.loc[("8×8 digits (MLP)", "ℓ2"), "ACR̃ (%)"] == 2.2 and table.shape == (2, 3)


def test_texture_text_reads_the_step_and_the_structure():
    top = ss.SigmaTexture("mnist", "grid's largest", 0.1, 1.36, 1.18, 0.55, 1.8)
    pick = ss.SigmaTexture("mnist", "chosen", 1.5625, 1.54, 1.86, 0.39, 16.6)
    digits = ss.SigmaTexture("digits", "chosen", 0.001, 1.04, 1.01, 0.37, 0.339)
    text = sf.texture_text([digits, top, pick], NAMES)
    assert ("* **MNIST-5k (CNN)**: grid's largest step 0.1 θ: background σ 1.36× the object's, adjacent pixels' σ "
            "1.18× apart (correlation of their log σ 0.55), largest σ 1.8; chosen step 1.5625 θ") in text
    assert ("With the larger step (chosen, 15.6× the grid's largest one), adjacent pixels' σ are further apart and "
            "less correlated.") in text and "weak: on no column" in text
    assert text.endswith("Where the chosen step lies beyond the grid's largest (MNIST-5k (CNN)), the maps are rougher "
                         "than at the grid's largest step (neighbours further apart and less correlated): the speckle "
                         "grows with the step.")
    assert "* **8×8 digits (MLP)**: chosen step 0.001 θ" in text and "With the larger step" not in text.splitlines()[2]
    digits_top = ss.SigmaTexture("digits", "grid's largest", 0.1, 1.71, 1.23, 0.39, 3.07)
    text = sf.texture_text([digits_top, digits], NAMES)
    assert ("With the larger step (grid's largest, 100× the chosen one), adjacent pixels' σ are further apart and "
            "more correlated.") in text and "speckle" not in text
    smooth = ss.SigmaTexture("mnist", "chosen", 1.5625, 3.0, 1.1, 0.7, 16.6)
    text = sf.texture_text([top, smooth], NAMES)
    assert "closer and more correlated" in text and "that structure is clear" in text and "speckle" not in text
    cifar = ss.SigmaTexture("mnist", "chosen", 1.0, float("nan"), 1.1, 0.7, 2.0)
    text = sf.texture_text([cifar], NAMES)
    assert "no input with both background and object pixels" in text and "is not measured here" in text


def small_of(delta: np.ndarray, prediction: int = 3) -> ss.SmallPerturbation:
    s = np.full(delta.shape, 0.2)
    return ss.SmallPerturbation("mnist", 28, np.zeros_like(delta), delta, 8 / 255, prediction, 3, 20_000,
                                float(np.linalg.norm(delta)), float(np.abs(delta).max()),
                                float(region_norm(delta.reshape(-1), s.reshape(-1), "l2")), 0.05)


def test_small_perturbation_findings_render_the_check():
    corner = small_of(np.full((1, 2, 2), 8 / 255))
    assert corner.holds and not small_of(np.full((1, 2, 2), 8 / 255), prediction=4).holds
    text = sf.small_perturbation_findings("MNIST-5k (CNN)", corner)
    assert text.startswith("**At a small change, Figure 5's picture holds.**")
    assert "0.031 (8/255)" in text and "‖δ‖₂ = 0.06 against Isotropic DD's radius 0.05" in text
    assert "All 4 pixels move by the whole budget" in text and "contains that whole cube" in text
    part = small_of(np.array([[[8 / 255, 0.0], [0.0, 0.0]]]))
    assert not part.holds and "fails too" in sf.small_perturbation_findings("MNIST-5k (CNN)", part)
    assert "contains that whole cube" not in sf.small_perturbation_findings("MNIST-5k (CNN)", part)
    assert "holds here" in sf.small_figure_caption(corner) and "8/255" in sf.small_figure_caption(corner)


def test_perturbation_findings_say_whether_figure5_holds():
    x = np.zeros((1, 2, 2))
    wide = sf.domain_check(x, np.full((1, 2, 2), 8.0), 0.48)
    small = sf.domain_check(np.full((1, 2, 2), 0.5), np.full((1, 2, 2), 0.1), 0.05)
    assert not sf.figure5_holds(safe_of(24.13), wide)
    assert sf.figure5_holds(safe_of(0.6), small) and not sf.figure5_holds(safe_of(0.6, holds=False), small)
    text = sf.perturbation_findings("MNIST-5k (CNN)", safe_of(24.13), wide, MARGINS)
    assert text.startswith("**Figure 5's claim fails here, with δ built as the paper builds it.**")
    assert "‖δ‖₂ = 24.13 against that ball's radius 0.48" in text and "+233.4% (ℓ2)" in text
    assert "On 4 of 4 pixels (100%)" in text and "10^-5 lies inside" in text
    assert sf.perturbation_findings("MNIST-5k (CNN)", safe_of(0.6), small, MARGINS).startswith(
        "**Figure 5's claim holds")
    caption = sf.figure5_caption(safe_of(24.13), wide, 1.0)
    assert "fails here" in caption and "above 1 on 100% of the pixels" in caption


# -- the words ------------------------------------------------------------------------------------
def test_short_texts_render_their_inputs():
    paper = ss.paper_shares()
    text = sf.paper_shares_text(paper)
    assert "50% (CIFAR-10 MACER) to 100% (CIFAR-10 RS4A)" in text and "90-100%" in text and "row is 69%" in text
    assert "σ = 1, ℓ2 only" in sf.table6_intro(1.0)
    assert "σ = 0.25 as in the paper" in sf.gap_factor_intro(0.25)
    g = ss.GapFactors(np.ones(3), np.full(3, 1.02), np.ones(3), np.full(3, 0.5), 4)
    assert sf.factors_text({"mnist": g}, NAMES) == ("* **MNIST-5k (CNN)**: median min σ_ANCER / median σ_Iso = 1.02, "
                                                    "median gap ANCER / Isotropic DD = 0.50 (3 of 4 inputs)")
    assert "median 2.0, 90th percentile 2.8, largest 3.0" in sf.spread_text({"mnist": np.array([1.0, 2.0, 3.0])}, NAMES)
    assert "K − 1 = 9" in sf.landscape_intro(10) and "σ = 0.25 model" in sf.landscape_intro(10, 0.25)
    with pytest.raises(ValueError, match="num_classes"):
        sf.landscape_intro(1)
    ctl = control_table()
    text = sf.control_text(ctl[ctl.claim == "C2/control"], ctl[ctl.claim == "extra iterations"], NAMES)
    assert "MNIST-5k (CNN) σ = 1: +0.000 [-0.010, +0.010] (within noise)" in text
    assert "MNIST-5k (CNN) σ = 1: +0.020 [+0.015, +0.025] (holds)" in text
    t6 = table6_table()
    text = sf.table6_findings(t6, ss.paper_table6(), NAMES)
    assert "the paper's Average Σ certifies 29% against Fixed σ's 45%" in text
    assert "MNIST-5k (CNN) ℓ2 0.00% against 38.00%" in text and "8×8 digits (MLP) ℓ1 28.00% against 38.00%" in text
    assert ("certified, even at radius 0, by the averaged Σ (mean) on MNIST-5k (CNN) ℓ2, MNIST-5k (CNN) ℓ1, "
            "8×8 digits (CNN) ℓ1; the averaged Σ (rms) on MNIST-5k (CNN) ℓ2") in text
    assert sf.collapse_words(t6[t6.method != "Average Σ (rms)"], NAMES).count("averaged Σ") == 1
    assert sf.collapse_words(t6.assign(**{"0": 1.0}), NAMES) == ""
    eff = effects_table()
    assert sf.c5_text(eff[eff.claim == "C5"], NAMES).endswith("It holds at 0 of 6 (column, σ) pairs.")


def test_summary_and_meaning_render_the_numbers_and_the_interval_verdicts():
    pooled, paper, eff, t6 = pooled_table(), ss.paper_shares(), effects_table(), table6_table()
    factors = {n: ss.GapFactors(np.ones(3), np.full(3, 1.01), np.ones(3), np.full(3, 0.9), 3) for n in NAMES}
    spread = {"digits": np.full(4, 1.2), "mnist": np.full(4, 35.0), "digits_cnn": np.full(4, 1.4)}
    same = {"l2": (94.0, "ImageNet COHEN"), "l1": (97.0, "ImageNet RS4A")}
    text = sf.summary_text(pooled, paper, eff, t6, factors, spread, NAMES, "mnist", same)
    assert "On MNIST-5k (CNN) ANCER's proxy certificate is the best on 81% (ℓ2) and 64% (ℓ1)" in text
    assert "the proxy claim (C4/proxy, ≥ 90%) holds on 0 of 6 (column, norm) pairs (fails on 6)" in text
    assert "the ℓp claim (C4/ℓp, ≥ 50%) on 0 of 6 (column, norm) pairs (within noise on 3, fails on 3)" in text
    assert "(C6/ACR~) on 5 of 6 (column, norm) pairs (within noise on 1)" in text
    assert ("even at radius 0, by the averaged Σ (mean) on MNIST-5k (CNN) ℓ2, MNIST-5k (CNN) ℓ1, 8×8 digits (CNN) ℓ1; "
            "the averaged Σ (rms) on MNIST-5k (CNN) ℓ2.") in text
    assert "C5 (Figure 14)** at the paper's σ = 0.25 holds on 0 of 3 columns (fails on 3)" in text
    assert "True" not in text and "False" not in text  # one verdict system: no yes/no column
    flips = pd.DataFrame([dict(column=c, norm=n, sigma=s, growth_all=5.2 if s == 1.0 else 9.0)
                          for c in NAMES for n in ss.NORMS for s in (0.25, 1.0)]).set_index(["column", "norm"])
    floors = {("mnist", "l2"): (2.28, 0.99), ("mnist", "l1"): (14.8, 2.16), ("digits_cnn", "l1"): (2.21, 1.73)}
    meaning = sf.meaning_text(pooled, paper, same, t6, ss.paper_table6(), eff, control_table(), factors, spread,
                              flips, NAMES, floors)
    assert "smallest per-pixel θ is 2.28 (ℓ2) and 14.80 (ℓ1), 2.3× and 6.9× Isotropic DD's median θ" in meaning
    assert "on 8×8 digits (CNN) ℓ1 its smallest per-pixel θ, 2.21, is 1.3× Isotropic DD's median θ (1.73)" in meaning
    assert "it certifies 0.00% (ℓ2) and 0.00% (ℓ1) of the test inputs even at radius 0" in meaning
    assert "the paper's Average Σ keeps 29% (its Fixed σ 45%, ANCER 44%)" in meaning
    assert "median pixel 5.2× (ℓ2) and 5.2× (ℓ1)" in meaning and "large ANCER step" in meaning
    assert "8×8 digits (CNN): 28.00% against 38.00% (ℓ2), 0.00% against 38.00% (ℓ1)" in meaning
    assert "not above the averaged Σ's on 8×8 digits (MLP) ℓ1 (C6/ACR~ within noise)" in meaning
    assert "within 1%" in meaning and "C5 at σ = 0.25: fails, fails, fails" in meaning
    assert "the gap effect (C5) is within noise; App. G.3's control" in meaning and "+0.020 [+0.015, +0.025] (holds)" in meaning
    assert "loses accuracy" not in meaning and "(C4/proxy, by its 95% interval: " in meaning
    assert "median max σ / min σ 35.0" in meaning and "(median 1.2, 1.4)" in meaning
    assert "reproduces" not in meaning and "dramatically" not in meaning
    with pytest.raises(ValueError, match="table6 holds 0 rows"):
        sf.radius0(t6, "cifar", "l2", "ANCER")


class StubColumn:
    """The parts of `image_study.Column` that `averaged_floor` and `perturbation_semi_axes` read."""

    def __init__(self, iso: np.ndarray, ancer: np.ndarray, gap: np.ndarray, index: list[int]):
        self.theta = {"isotropic": iso, "ancer": ancer}
        self.gap = gap
        self.work = SimpleNamespace(test=SimpleNamespace(index=index))
        self.setup = SimpleNamespace(name="stub")

    def thetas(self, norm, sigma, method):
        return self.theta[method]

    def rows(self, norm, sigma, method):
        return pd.DataFrame({"gap": self.gap})


def test_averaged_floor_and_the_semi_axes_of_figure5():
    iso = np.broadcast_to(np.array([1.0, 2.0, 3.0])[:, None, None, None], (3, 1, 2, 2)).copy()
    ancer = iso * np.array([[[[1.0, 5.0], [1.0, 1.0]]], [[[1.0, 1.0], [5.0, 1.0]]], [[[1.0, 1.0], [1.0, 1.0]]]])
    col = StubColumn(iso, ancer, np.array([0.5, 1.0, 2.0]), [7, 8, 9])
    lo, med = sf.averaged_floor(col, "l2", 1.0)
    assert med == 2.0 and lo == pytest.approx(2.0)  # pixel (1, 1): the mean of 1, 2 and 3
    with pytest.raises(ValueError, match="norm"):
        sf.averaged_floor(col, "linf", 1.0)
    s = ancer[1] * 1.0
    delta = ss.safe_direction(s, ss.SAFE_LEVEL, 0)
    safe = ss.SafePerturbation("stub", 8, 0, np.zeros((1, 2, 2), np.float32), delta, 0, 0, 10, float(np.linalg.norm(delta)),
                               float(region_norm(delta.reshape(-1), s.reshape(-1), "l2")), 0.1, 0.1)
    assert np.allclose(sf.perturbation_semi_axes(col, safe), s)
    with pytest.raises(ValueError, match="another column or σ"):
        sf.perturbation_semi_axes(StubColumn(iso, ancer, np.array([0.5, 3.0, 2.0]), [7, 8, 9]), safe)
    with pytest.raises(ValueError, match="not one test input"):
        sf.perturbation_semi_axes(StubColumn(iso, ancer, np.ones(3), [1, 2, 3]), safe)
