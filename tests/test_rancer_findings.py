"""rancer_findings.py (notebook 06's words and claim rows): every number in a sentence comes from the inputs, the
words that read a number follow it (larger / smaller / within noise, the clip reached or not), and the claim rows are
the claims table's."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ancer_lite.evaluation.intervals import Effect
from ancer_lite.report import claims
from ancer_lite.studies import rancer_findings as F
from ancer_lite.studies import rancer_study

TITLES = {"digits_softplus": "8×8 digits (softplus MLP)", "mnist_softplus": "MNIST-5k (softplus CNN)"}
PAPER_GAIN = {"ari": 0.0673, "ari_proxy": 0.0792}


def effect(estimate: float, low: float, high: float, n: int = 40) -> Effect:
    return Effect(estimate, low, high, 0.95, n, 1000)


HOLDS, FAILS, NOISE = effect(0.5, 0.2, 0.8), effect(-1.5, -2.4, -0.6), effect(-0.03, -0.12, 0.05)


def selection(gamma2s, acr_proxy, reached, chosen) -> pd.DataFrame:
    """A `choose_rancer` table: one lr row, then the γ2 search."""
    rows = [dict(search="lr", lr_relative=1.0, gamma2=2.0, acr=0.8, acr_proxy=1.7, upper_clip_reached=True,
                 chosen=False)]
    rows += [dict(search="gamma2", lr_relative=10.0, gamma2=g, acr=0.8, acr_proxy=a, upper_clip_reached=r,
                  chosen=g == chosen) for g, a, r in zip(gamma2s, acr_proxy, reached)]
    return pd.DataFrame(rows)


#: notebook 06's MNIST γ2 search (quick profile): a larger, unreached clip lowered the validation ACR̃
MNIST = selection((0.5, 2.0, 8.0, 32.0), (1.9452, 2.1716, 2.1985, 2.1514), (True, True, True, False), 8.0)


def arms(ancer=3.173, rotated=1.877, axis_aligned=1.516, rancer=1.673) -> pd.DataFrame:
    return pd.DataFrame({"acr_proxy": [ancer, rotated, axis_aligned, rancer], "acr": [0.62, 0.46, 0.55, 0.59]},
                        index=["ANCER", "ANCER's objective, rotated", "RANCER's objective, axis-aligned", "RANCER"])


def ablation_effects(rotation: Effect = FAILS, axis_aligned: Effect = FAILS) -> pd.DataFrame:
    rows = []
    for claim in rancer_study.ABLATION_EFFECTS:
        for measure in ("ACR", "ACR~"):
            e = {"C7/rotation": rotation, "C7/objective (axis-aligned)": axis_aligned}.get(claim, NOISE)
            rows.append(dict(claim=claim, measure=measure, statement=rancer_study.ABLATION_EFFECTS[claim][0],
                             effect=e))
    return pd.DataFrame(rows)


def test_words_follow_the_verdict():
    assert F.compared("holds") == "larger than" and F.compared("fails") == "smaller than"
    assert F.compared("within noise") == "not distinguishable from"
    with pytest.raises(ValueError, match="verdict must be one of"):
        F.compared("maybe")
    assert F.listed(["a"]) == "a" and F.listed(["a", "b", "c"]) == "a, b and c"
    with pytest.raises(ValueError, match="items must hold"):
        F.listed([])


def test_the_printed_objective_underflows_float32_on_mnist():
    assert F.printed_objective_log10(784, 0.3) == pytest.approx(0.5 * 784 * np.log10(0.3))
    text = F.introduction_numbers(784, 0.3, 1e-4, {TITLES["digits_softplus"]: 0.25, TITLES["mnist_softplus"]: 0.5})
    assert text == ("For n = 784 scales of 0.3 the printed objective's √(∏ Σ̂_jj) is 10^-205, far below float32's "
                    "smallest positive number (~10^-45). The rotation margin is 0.0001; the models are trained and "
                    "certified at σ = 0.25, 0.5 (8×8 digits (softplus MLP), MNIST-5k (softplus CNN)).")
    with pytest.raises(ValueError, match="n must be a positive integer"):
        F.printed_objective_log10(0, 0.3)
    with pytest.raises(ValueError, match="scale must be > 0"):
        F.printed_objective_log10(784, 0.0)


def test_figure2_reading_says_reversed_only_when_it_is():
    keys = ["v1 along", "v1 larger", "axes"]
    fit = {"near": 0.53, "window": 0.99}
    text = F.figure2_reading(dict(zip(keys, (False, False, True))), np.array([0.032, 0.133]), 134.9, 45.0, fit,
                             0.05, 0.15)
    assert text.startswith("The sentence is reversed here. v1 lies at 134.9°")
    assert "**4.2×**" in text and "(0.133 against 0.032)" in text
    assert "already within 0.05 of the point its largest error is 0.53" in text
    assert "over the window (±0.15) 0.99, comparable to the loss's own variation" in text
    # the paper's sentence holding is not called reversed; a good fit is not called poor
    text = F.figure2_reading(dict(zip(keys, (True, True, True))), np.array([0.2, 0.1]), 45.0, 45.0,
                             {"near": 0.05, "window": 0.3}, 0.05, 0.15)
    assert "reversed" not in text and "v1 along holds; v1 larger holds; axes holds" in text
    assert "fits near the point" in text and "a fraction of the loss's own variation" in text
    with pytest.raises(ValueError, match="three statements"):
        F.figure2_reading({"a": True}, np.array([0.1, 0.2]), 0.0, 45.0, fit, 0.05, 0.15)


def test_runtime_summary_reads_the_tables():
    index = pd.MultiIndex.from_tuples([(c, m) for c in TITLES for m in ("ancer", "rancer")], names=["column", "method"])
    table = pd.DataFrame({"Hessian + eigenvectors": [0.0, 0.009, 0.0, 0.226], "total": [1.0, 1.82, 1.0, 1.96]},
                         index=index)
    ratios = rancer_study.cost_ratios(table)
    paper = pd.Series({"ANCER": 7.65, "RANCER": 19.1})
    text = F.runtime_summary(ratios, paper, table, {"digits_softplus": 64, "mnist_softplus": 784}, TITLES)
    assert text.startswith("RANCER costs **1.82×** (8×8 digits (softplus MLP), n = 64) and **1.96×** (MNIST-5k "
                           "(softplus CNN), n = 784) ANCER per input on this CPU; the paper reports **2.50×** on a GPU.")
    assert "0.009 s (8×8 digits (softplus MLP)) and 0.226 s (MNIST-5k (softplus CNN)) per input." in text
    assert "on this machine (device 'cuda')" in F.runtime_summary(ratios, paper, table, {"digits_softplus": 64},
                                                                   TITLES, device="cuda")


def test_claim_rows_are_the_claims_tables():
    c7 = {name: {"C7/ARI": NOISE, "C7/ARI~": FAILS} for name in TITLES}
    rows = F.c7_rows(c7, TITLES, PAPER_GAIN)
    assert [(r["claim"], r["setting"]) for r in rows] == [
        ("C7/ARI", "8×8 digits (softplus MLP), ℓ2"), ("C7/ARI~", "8×8 digits (softplus MLP), ℓ2"),
        ("C7/ARI", "MNIST-5k (softplus CNN), ℓ2"), ("C7/ARI~", "MNIST-5k (softplus CNN), ℓ2")]
    assert rows[1] == claims.claim_row("C7/ARI~", "8×8 digits (softplus MLP), ℓ2",
                                       rancer_study.C7_EFFECTS["C7/ARI~"][0], FAILS, "+0.079 (CIFAR-10, ResNet18)",
                                       "06_rancer")
    table = F.c7_table(c7, TITLES, PAPER_GAIN)
    assert list(table.verdict) == ["within noise", "fails"] * 2 and list(table.paper) == [0.0673, 0.0792] * 2
    abl = {name: (arms(), ablation_effects()) for name in TITLES}
    rows = F.ablation_rows(abl, TITLES)
    assert len(rows) == 2 * 2 * len(rancer_study.ABLATION_EFFECTS)
    assert rows[0]["claim"] == "C7/rotation (ACR)" and rows[1]["claim"] == "C7/rotation (ACR~)"
    assert all(r["paper"] == "" and r["notebook"] == "06_rancer" for r in rows)


def test_ablation_summary_and_the_rotations_reading():
    abl = {"digits_softplus": (arms(0.55, 0.81, 0.73, 1.79), ablation_effects(rotation=HOLDS)),
           "mnist_softplus": (arms(), ablation_effects())}
    text = F.ablation_summary(abl, TITLES)
    lines = text.split("\n")
    assert len(lines) == 2
    assert lines[0].startswith("* **8×8 digits (softplus MLP)**: the rotation with ANCER's objective changes ACR̃ by "
                               "+0.50 [+0.20, +0.80] (holds)")
    assert lines[1].endswith("ACR̃ by arm: ANCER 3.17, ANCER's objective, rotated 1.88, RANCER's objective, "
                             "axis-aligned 1.52, RANCER 1.67.")
    text = F.rotation_reading({"digits_softplus": "holds", "mnist_softplus": "fails"}, TITLES)
    assert text.startswith("The columns disagree on the rotation.")
    assert "it enlarges them on 8×8 digits (softplus MLP); it shrinks them on MNIST-5k (softplus CNN)." in text
    assert "background pixels" in text
    text = F.rotation_reading({"digits_softplus": "holds", "mnist_softplus": "holds"}, TITLES)
    assert text.startswith("The columns agree") and "background pixels" not in text
    with pytest.raises(ValueError, match=r"verdicts\['mnist_softplus'\] must be one of"):
        F.rotation_reading({"mnist_softplus": "yes"}, TITLES)


def test_the_upper_clip_is_not_the_cause_when_a_free_clip_certified_less():
    ev = F.upper_clip_evidence(MNIST)
    assert ev["gamma2s"] == (0.5, 2.0, 8.0, 32.0) and ev["gamma2"] == 8.0 and ev["free_gamma2"] == 32.0
    assert ev["reached"] == (True, True, True, False) and not ev["binds"]
    text = F.upper_clip_reading(ev)
    assert ("tried γ2 = 0.5, 2, 8 and 32 (validation ACR̃ 1.95, 2.17, 2.20, 2.15; no scale reached the clip at "
            "γ2 = 32) and chose γ2 = 8.") in text
    assert text.endswith("At γ2 = 32 nothing capped the axes, and the validation ACR̃ was lower (2.15 against 2.20 "
                         "at γ2 = 8): the upper clip does not explain the smaller ACR̃.")


def test_the_upper_clip_readings_other_cases():
    # a free clip certified more: the clip binds, and the objective chose it
    ev = F.upper_clip_evidence(selection((2.0, 8.0, 32.0), (2.0, 2.1, 2.4), (True, True, False), 8.0))
    assert ev["binds"]
    assert "rose to 2.40 (from 2.10 at γ2 = 8), but the selection objective" in F.upper_clip_reading(ev)
    # no looser clip tried: untested
    ev = F.upper_clip_evidence(selection((2.0, 8.0), (2.0, 2.1), (True, True), 8.0))
    assert np.isnan(ev["free_gamma2"]) and not ev["binds"]
    assert "the clip reached at every one" in F.upper_clip_reading(ev)
    assert F.upper_clip_reading(ev).endswith("is not tested here.")
    # the chosen clip never reached: it capped nothing
    ev = F.upper_clip_evidence(selection((2.0, 8.0, 32.0), (2.0, 2.1, 2.1), (True, False, False), 8.0))
    assert "At the chosen γ2 = 8 no scale reached the clip: it capped nothing" in F.upper_clip_reading(ev)
    with pytest.raises(ValueError, match="selection must have columns"):
        F.upper_clip_evidence(MNIST.drop(columns="upper_clip_reached"))
    with pytest.raises(ValueError, match="exactly one γ2 row"):
        F.upper_clip_evidence(MNIST.assign(chosen=False))


def test_column_bullet_explains_a_failure_from_its_numbers():
    acr = {"RANCER ACR": 0.587, "RANCER ACR~": 1.673, "ANCER ACR": 0.621, "ANCER ACR~": 3.173}
    eff = F.ablation_effects({"m": (arms(), ablation_effects())})["m"]
    text = F.column_bullet(TITLES["mnist_softplus"], acr, {"C7/ARI": NOISE, "C7/ARI~": FAILS}, PAPER_GAIN, 0.5, 0.65,
                           F.upper_clip_evidence(MNIST), arms(), eff)
    assert text.startswith("* **MNIST-5k (softplus CNN)**: RANCER's **proxy** certificate is smaller than ANCER's "
                           "(ACR̃ 1.67 vs 3.17; AR̃I = -1.50 [-2.40, -0.60], C7 fails; the paper: +0.079) and its "
                           "**ℓ2** certificate is not distinguishable from ANCER's (ACR 0.59 vs 0.62;")
    assert "floor" not in text  # the ℓ2 verdict is within noise: no explanation of a failure
    assert "the upper clip does not explain the smaller ACR̃" in text
    assert text.endswith("In the ablation, against ANCER's ACR̃ of 3.17, each of RANCER's two changes alone already "
                         "loses ACR̃: the rotation (ANCER's objective kept) gives 1.88 (-1.50 [-2.40, -0.60], fails); "
                         "RANCER's objective (neither rotated) gives 1.52 (-1.50 [-2.40, -0.60], fails).")
    text = F.column_bullet(TITLES["digits_softplus"], acr, {"C7/ARI": FAILS, "C7/ARI~": HOLDS}, PAPER_GAIN, 0.5, 0.93,
                           F.upper_clip_evidence(MNIST), arms(), eff)
    assert "proxy** certificate is larger than ANCER's" in text
    assert "σ0 (1 − γ1) = 0.5 σ0: the smallest scale sits at that floor for 93% of the test inputs" in text
    assert "upper clip" not in text


def test_toy_sensitivity_and_caveats_bullets():
    text = F.toy_bullet(2.08, {"isotropic": 0.0860, "ancer": 0.0874}, {"isotropic": 1.0, "ancer": 1.0, "rancer": 0.98},
                        {"a": True, "b": True})
    assert "**2.1×** ANCER's proxy radius" in text and "at least 98% of each region's points" in text
    assert text.endswith("ANCER's axis-aligned ellipse has only 1.02× Isotropic DD's ball's proxy radius.")
    text = F.toy_bullet(2.0, {"isotropic": 1, "ancer": 1}, {"x": 1.0}, {"a": False})
    assert text.endswith("(every point of each region keeps the prediction); not every 2D check above holds.")
    acr = pd.DataFrame({"eigen_fixed": [0.003, 0.002], "eigen_init": [1.61, 1.31], "iso": [1.87, 1.63]},
                       index=list(TITLES))
    text = F.sensitivity_bullet(acr, {"digits_softplus": 0.71, "mnist_softplus": 0.83}, TITLES, 0.001)
    assert "certifies almost nothing (ACR̃ 0.003 on 8×8 digits (softplus MLP), 0.002 on MNIST-5k" in text
    assert "71% (8×8 digits (softplus MLP)), 83% (MNIST-5k (softplus CNN)) of the eigenvalue magnitudes" in text
    assert "so it undersmooths" in text and text.endswith("(ACR̃ 1.61 vs 1.87, 1.31 vs 1.63).")
    text = F.sensitivity_bullet(acr.assign(eigen_fixed=[1.0, 1.0], eigen_init=[2.0, 1.0]),
                                {"digits_softplus": 0.2, "mnist_softplus": 0.3}, TITLES, 0.001)
    assert "certifies less than Σ̂⁰ = σ0" in text and "mostly does not oversmooth either" in text
    assert "not always less than" in text
    assert F.caveats({"a": 0.25, "b": 0.25}, {"a": 100, "b": 40}) == (
        "Caveats: one σ (0.25, 0.25), small test sets (100 a, 40 b test inputs, for the notebook's time budget) and "
        "softplus models trained here rather than the paper's ReLU ResNet18 (whose input Hessian has rank ≤ K − 1 = 9 "
        "for K = 10 classes).")
