"""Notebook 03's findings in words and claims rows (ancer_lite.studies.image_findings): every number in the text
comes from the inputs, and every verdict word from the effects."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from ancer_lite.evaluation.intervals import DIFFERENCE, RATIO, Effect
from ancer_lite.studies import image_findings as F
from ancer_lite.studies import image_study as study

TITLES = {"digits": "8×8 digits (MLP), for CIFAR-10", "mnist": "MNIST-5k (CNN), for ImageNet",
          "digits_cnn": "8×8 digits (CNN), extra column"}
COLUMNS = {"digits": "CIFAR-10", "mnist": "ImageNet", "digits_cnn": "CIFAR-10"}


def effect(estimate, low, high, kind=DIFFERENCE, n=150):
    return Effect(estimate=estimate, low=low, high=high, level=0.95, n=n, draws=1000, kind=kind)


def effects_like_the_run():
    """Effects shaped like the quick profile's seed-0 run (notebook 03)."""
    return {
        ("digits", "l2"): {"C1/IsoDD": effect(0.004, 0.001, 0.006), "C1/ANCER": effect(-0.014, -0.017, -0.011),
                           "C2": effect(-0.018, -0.019, -0.016), "C3": effect(0.15, 0.14, 0.16, RATIO)},
        ("digits", "l1"): {"C1/IsoDD": effect(-0.0002, -0.001, 0.001), "C1/ANCER": effect(-0.003, -0.005, 0.0002),
                           "C2": effect(-0.003, -0.004, 0.0001), "C3": effect(0.02, 0.02, 0.07, RATIO)},
        ("mnist", "l2"): {"C1/IsoDD": effect(0.070, 0.033, 0.093, n=80), "C1/ANCER": effect(-0.085, -0.235, 0.001, n=80),
                          "C2": effect(-0.155, -0.285, -0.061, n=80), "C3": effect(2.33, 1.89, 2.79, RATIO, n=80)},
        ("mnist", "l1"): {"C1/IsoDD": effect(0.034, -0.001, 0.073, n=80), "C1/ANCER": effect(0.396, 0.280, 0.516, n=80),
                          "C2": effect(0.361, 0.242, 0.485, n=80), "C3": effect(2.06, 1.49, 3.05, RATIO, n=80)},
        ("digits_cnn", "l2"): {"C1/IsoDD": effect(-0.004, -0.007, -0.001), "C1/ANCER": effect(-0.025, -0.029, -0.020),
                               "C2": effect(-0.021, -0.024, -0.017), "C3": effect(0.19, 0.17, 0.21, RATIO)},
        ("digits_cnn", "l1"): {"C1/IsoDD": effect(0.0, -0.001, 0.001), "C1/ANCER": effect(-0.023, -0.05, 0.001),
                               "C2": effect(-0.023, -0.05, 0.001), "C3": effect(0.63, 0.5, 0.8, RATIO)},
    }


def margins_like_the_run():
    return {("digits", "l2"): 0.15, ("digits", "l1"): 0.02, ("mnist", "l2"): 2.33, ("mnist", "l1"): 2.06,
            ("digits_cnn", "l2"): 0.19, ("digits_cnn", "l1"): 0.63}


def test_claim_rows_reproduce_the_notebook_formatting():
    effects = {("mnist", "l2"): {"C2": effect(-0.155, -0.285, -0.061), "C3": effect(2.33, 1.89, 2.79, RATIO)}}
    paper = {("mnist", "l2"): {"C2": 0.576, "C3": 0.605}}
    rows = F.claim_rows(effects, paper, TITLES, COLUMNS)
    assert [r["setting"] for r in rows] == ["MNIST-5k (CNN), for ImageNet, ℓ2"] * 2
    assert [r["paper"] for r in rows] == ["+0.576 (ImageNet, Table 1)", "+60% (ImageNet, Table 1)"]
    assert rows[0]["statement"] == study.CLAIMS["C2"][0] and rows[0]["verdict"] == "fails"
    assert rows[1]["notebook"] == "03_image_certification"
    scripts = F.scripts_claim_rows({"digits": {"C1/IsoDD": effect(0.04, 0.02, 0.06)}}, {"digits": [0.25]},
                                   {("digits", "l1"): {"C1/IsoDD": 0.171}}, TITLES, COLUMNS)
    assert scripts[0]["setting"] == "8×8 digits (MLP), for CIFAR-10, ℓ1, Table 2 read as λ = σ/√3 (our σ = 0.25)"
    assert scripts[0]["paper"] == "+0.171 (CIFAR-10, Table 2)"
    assert F.paper_value(1.075, RATIO) == "+108%" and F.paper_value(0.0014, DIFFERENCE) == "+0.001"


def test_where_names_the_pairs_with_an_outcome():
    verdict = F.verdicts(effects_like_the_run())
    assert F.where(verdict, "C1/IsoDD", "holds", ("digits", "digits_cnn")) == ["the MLP at ℓ2"]
    assert F.where(verdict, "C1/IsoDD", "fails", ("digits", "digits_cnn")) == ["the CNN at ℓ2"]
    assert F.where(verdict, "C1/IsoDD", "within noise", ("digits", "digits_cnn")) == ["the MLP at ℓ1", "the CNN at ℓ1"]
    with pytest.raises(ValueError, match="outcome"):
        F.where(verdict, "C2", "maybe", ("digits",))
    with pytest.raises(ValueError, match="norm"):
        F.norm_label("linf")


def test_margins_and_iso_ahead_read_the_best_tables():
    t = pd.DataFrame({"acr": [0.5, 0.52, 0.4], "acr_proxy": [0.5, 0.52, 0.78]},
                     index=["Fixed σ", "Isotropic DD", "ANCER"])
    assert F.margins({("x", "l2"): t})[("x", "l2")] == pytest.approx(0.5)
    assert F.iso_ahead({("x", "l2"): t})[("x", "l2")] == pytest.approx(0.02)
    with pytest.raises(ValueError, match="Isotropic DD's ACR~"):
        F.margins({("x", "l2"): t.assign(acr_proxy=[0.5, 0.0, 0.7])})


def test_short_notes_take_their_numbers_from_the_inputs():
    note = F.confidence_cap_note(10_000, 100_000, 0.001, 0.9993, 3.2, 3.81, quick=True)
    assert "N = 10,000 caps" in note and "0.9993" in note and "16% lower" in note and "quick profile" in note
    assert "quick profile" not in F.confidence_cap_note(10_000, 100_000, 0.001, 0.9993, 3.2, 3.81, quick=False)
    feasible = pd.DataFrame({"dataset": ["CIFAR-10", "CIFAR-10", "ImageNet", "ImageNet"],
                             "convention": ["std", "ancer_scripts"] * 2, "largest_radius": [1.0, 1.0, 0.75, 0.75],
                             "lambda_max": [1.732, 0.577, 1.732, 0.577],
                             "possible": [True, False, True, False]}).set_index(["dataset", "convention"])
    text = F.table2_reading(feasible)
    assert "σ/√3, Table 2's Fixed σ rows are impossible" in text and "radius 1 and ImageNet at 0.75, beyond λ_max = 0.577" in text
    assert "(λ_max = 1.732) they are possible" in text
    changed = {"digits": {"C2": ("within noise", "holds")}, "mnist": {}}
    text = F.reading_changes(changed, TITLES, 0.433)
    assert "8×8 digits (MLP), for CIFAR-10: C2 within noise → holds; MNIST-5k (CNN), for ImageNet: none" in text
    assert "λ = 0.433" in text
    ranges = {"l2": (0.38, 0.61, ("ImageNet", "SMOOTHADV"), ("ImageNet", "COHEN")),
              "l1": (0.17, 1.08, ("CIFAR-10", "RS4A"), ("ImageNet", "RS4A"))}
    text = F.paper_gain_note(ranges, (0.38, 0.63))
    assert "+38% (ImageNet SMOOTHADV) to +61% (ImageNet COHEN)" in text and "no row of Table 1 reaches 63%" in text
    assert "a row of Table 1 reaches 61%." in F.paper_gain_note(ranges, (0.38, 0.61))


def per_sigma(iso, ancer, sigmas=(0.25, 0.5, 1.0)):
    idx = pd.MultiIndex.from_tuples([(m, s) for m in ("Fixed σ", "Isotropic DD", "ANCER") for s in sigmas],
                                    names=["method", "sigma"])
    return pd.DataFrame({"0": [90.0] * len(sigmas) + list(iso) + list(ancer)}, index=idx)


def selection_like_the_run():
    rows = []
    for norm, (iso_acc, top, pick) in {"l2": (0.925, (1.00, 1.44), (0.73, 3.16)),
                                       "l1": (0.925, (1.29, 1.87), (0.79, 10.05))}.items():
        rows.append(dict(column="mnist", norm=norm, method="isotropic", lr_relative=0.01, acr=0.95, acr_proxy=0.95,
                         accuracy=iso_acc, eligible=True, elsewhere=float("nan"), chosen=True, widened=False))
        # l2: 3.9 θ loses accuracy at the selection σ; l1: it keeps it there but loses 10 points at another σ
        top_accuracy, top_elsewhere = (0.775, float("nan")) if norm == "l2" else (0.925, -0.1)
        for lr, (acr, proxy), accuracy, elsewhere, chosen, widened in (
                (0.1, top, 0.925, float("nan"), False, False), (0.625, (0.88, 2.2), 0.925, float("nan"), False, True),
                (1.5625, pick, 0.925, -0.025, True, True), (3.90625, (0.49, 5.1), top_accuracy, top_elsewhere, False,
                                                            True)):
            rows.append(dict(column="mnist", norm=norm, method="ancer", lr_relative=lr, acr=acr, acr_proxy=proxy,
                             accuracy=accuracy, eligible=accuracy >= iso_acc - 0.05 and not elsewhere < -0.05,
                             elsewhere=elsewhere, chosen=chosen, widened=widened))
    return pd.DataFrame(rows)


def sensitivity_like_the_run(refused_l1=80.0):
    rows = []
    for norm, sigma, refused in (("l2", 0.25, 77.5), ("l1", 0.5, refused_l1)):
        for method, lr, role, acc, acr, proxy in (("Isotropic DD", 0.01, "Isotropic DD", 96.25, 0.95, 0.95),
                                                  ("ANCER", 0.1, "grid's largest", 96.25, 1.0, 1.4),
                                                  ("ANCER", 1.5625, "chosen", 95.0, 0.74, 3.2),
                                                  ("ANCER", 3.90625, "refused", refused, 0.5, 5.0)):
            rows.append(dict(column="mnist", norm=norm, sigma=sigma, method=method, lr_relative=lr, role=role,
                             accuracy=acc, acr=acr, acr_proxy=proxy))
    return pd.DataFrame(rows, columns=list(study.SENSITIVITY_COLUMNS))


def test_radius0_cost_and_the_step_note_say_what_the_step_costs():
    tables = {("mnist", "l2"): per_sigma((96.25, 93.75, 86.25), (95.0, 91.25, 91.25)),
              ("mnist", "l1"): per_sigma((95.0, 92.5, 83.75), (65.0, 91.25, 91.25))}
    cost = F.radius0_cost(tables, 0.05)
    assert list(cost[cost.over_slack].itertuples(index=False, name=None)) == [
        ("mnist", "l1", 0.25, False, 95.0, 65.0, 30.0, True)]
    assert cost.set_index(["norm", "sigma"]).selection_sigma.loc[("l1", 0.5)]
    with pytest.raises(ValueError, match="slack"):
        F.radius0_cost(tables, 5)
    val = F.validation_trade(selection_like_the_run(), "mnist", 0.1)
    assert val["l2"] == dict(chosen=1.5625, widened=3, widened_up=3, top_acr=1.00, top_proxy=1.44, pick_acr=0.73,
                             pick_proxy=3.16,
                             pick_accuracy=0.925, iso_acr=0.95, iso_accuracy=0.925, refused=3.90625,
                             refused_accuracy=0.775, pick_elsewhere=-0.025, refused_elsewhere=[])
    assert math.isnan(val["l1"]["refused"]) and val["l1"]["refused_elsewhere"] == [(3.90625, -0.1)]
    with pytest.raises(ValueError, match="grid_top"):
        F.validation_trade(selection_like_the_run(), "mnist", 0.2)
    with pytest.raises(ValueError, match="column"):
        F.validation_trade(selection_like_the_run(), "digits", 0.1)

    sens = sensitivity_like_the_run()
    verdict = F.sensitivity_verdicts(sens, 0.05)
    assert verdict.agrees.tolist() == [True, True] and verdict.chosen_cost.tolist() == [1.25, 1.25]
    assert verdict.refused_cost.tolist() == [18.75, 16.25]
    close = F.sensitivity_verdicts(sensitivity_like_the_run(refused_l1=93.75), 0.05)
    assert close.agrees.tolist() == [True, False]                     # the refused step kept within the slack
    with pytest.raises(ValueError, match="slack"):
        F.sensitivity_verdicts(sens, 1.5)
    with pytest.raises(ValueError, match="chosen step"):
        F.sensitivity_verdicts(sens[sens.role != "chosen"], 0.05)

    below = selection_like_the_run()
    below.loc[below.lr_relative == 0.1, "widened"] = True  # a step added below a grid whose top is 0.625
    low = F.validation_trade(below, "mnist", 0.625)
    assert low["l2"]["widened"] == 4 and low["l2"]["widened_up"] == 2
    assert ("(2 widenings past the grid's largest step and 2 widenings below the grid's smallest step)"
            in F.step_note(cost, low, sens, TITLES["mnist"], "mnist", 0.05, 40))

    note = F.step_note(cost, val, sens, TITLES["mnist"], "mnist", 0.05, 40, ("C2 at ℓ2", "04's order effect"))
    assert "What rests on" not in F.step_note(cost, val, sens, TITLES["mnist"], "mnist", 0.05, 40)
    assert note.startswith("**ANCER's step on MNIST-5k (CNN), for ImageNet.** The selection chose 1.56 θ at ℓ2 (3 "
                           "widenings past the grid's largest step) and 1.56 θ at ℓ1 (3 widenings")
    assert "on the 40 validation inputs (every class alike" in note and "92.5% against 92.5% (ℓ2, σ = 0.25)" in note
    assert ("the smallest larger step refused there, 3.91 θ, kept 77.5% (ℓ2) and no larger step fell more than the "
            "slack below there (ℓ1)") in note
    assert ("so it was checked there too: the chosen step is at most 2.5 points below Isotropic DD's there (ℓ2); "
            "3.91 θ was refused there (10 points below Isotropic DD), and the chosen step is at most 2.5 points") in note
    assert ("On the test split at ℓ2, σ = 0.25, ANCER certifies 96.25% with the grid's largest step (0.1 θ; ACR 1.00, "
            "ACR̃ 1.40), 95% with the chosen step (1.56 θ; ACR 0.74, ACR̃ 3.20), 77.5% with the refused step") in note
    assert ("against Isotropic DD's 96.25% (ACR 0.95): the test split agrees with the validation split; in ACR, "
            "though, the grid's largest step (1.00) is ahead of Isotropic DD's 0.95 and the chosen step (0.74) behind "
            "it: eligibility checks the accuracy at radius 0 only") in note
    ahead = sensitivity_like_the_run().assign(acr=lambda t: t.acr.where(t.role != "chosen", 0.99))
    assert "in ACR, though" not in F.step_note(cost, val, ahead, "M", "mnist", 0.05, 40)
    assert ("it costs more than the slack: 65% for ANCER against 95% for Isotropic DD at ℓ1, σ = 0.25 (30 points)."
            in note)
    assert note.endswith("What rests on this step: C2 at ℓ2 and 04's order effect.")
    odd = F.step_note(cost, val, sensitivity_like_the_run(refused_l1=93.75), "M", "mnist", 0.05, 40)
    assert "the test split disagrees: the refused step would have kept within the slack" in odd
    calm = F.radius0_cost({("mnist", "l2"): per_sigma((93.75,) * 3, (92.0,) * 3)}, 0.05)
    assert "ANCER stays within the 5 points at radius 0" in F.step_note(calm, {"l2": val["l2"]}, sens, "M", "mnist",
                                                                         0.05, 40)
    with pytest.raises(ValueError, match="rows for column"):
        F.step_note(cost, val, sens, "M", "digits", 0.05, 40)
    trade = F.trade_bullet(val, 0.1, cost)
    assert "from 1.44 to 3.16 (ℓ2) and from 1.87 to 10.05 (ℓ1)" in trade
    assert "from 1.00 to 0.73 (Isotropic DD: 0.95)" in trade and "30 points at ℓ1, σ = 0.25 (" in trade


def test_mnist_and_digits_bullets_render_the_verdicts():
    effects, margin = effects_like_the_run(), margins_like_the_run()
    text = F.mnist_bullet(effects, margin, TITLES["mnist"], {"l2": 0.61, "l1": 1.08})
    assert text.startswith("* **MNIST-5k (CNN), for ImageNet: C3 holds for both shapes; C1 and C2 for ANCER hold for ℓ1 only.**")
    assert "+233% over Isotropic DD for ℓ2 and +206% for ℓ1, beyond the paper's rows (+61% and +108% at most)" in text
    assert "at ℓ2, C2 fails (-0.15 [-0.28, -0.06]) and C1 for ANCER is within noise" in text
    assert "(C1) holds for ℓ2 (+0.070 [+0.033, +0.093]) and is within noise for ℓ1" in text
    flipped = {**effects, ("mnist", "l1"): dict(effects["mnist", "l1"], C2=effect(-0.1, -0.2, -0.05))}
    assert "hold for neither norm" in F.mnist_bullet(flipped, margin, "M", {"l2": 0.61, "l1": 1.08})
    assert "pixel range" not in text
    text = F.mnist_bullet(effects, margin, "M", {"l2": 0.61, "l1": 1.08}, in_range={"l2": 0.008, "l1": -0.034})
    assert ("pixels the classifier ignores, and nearly all of that volume lies beyond the pixel range, where no image "
            "is: with every semi-axis of both methods counted only up to the far edge of [0, 1], the gain is +0.8% "
            "(ℓ2) and -3.4% (ℓ1) (notebook 05, Figure 5). At ℓ1") in text
    text = F.mnist_bullet(effects, margin, "M", {"l2": 0.61, "l1": 1.08}, in_range={"l2": 1.5, "l1": -0.034})
    assert "and part of that volume lies beyond the pixel range: with" in text

    ahead = {key: 0.004 if key == ("digits", "l2") else -0.004 for key in margin}
    text = F.digits_bullet(effects, margin, ahead, 0.001)
    assert "alike in C1/ANCER, C2, C3 at both norms, not in everything" in text
    assert "On both, C3 holds at both norms; C2 and C1/ANCER fail for ℓ2 and are within noise for ℓ1;" in text
    assert "ANCER's ℓ1 volume gain (C3's estimate) is +2% with the MLP and +63% with the CNN" in text
    # +15% and +19% do not differ by more than GAIN_RATIO: said among what is alike
    assert "fail for ℓ2 and are within noise for ℓ1; ANCER's ℓ2 volume gain (C3's estimate) is +15% with the MLP and " \
           "+19% with the CNN. Not alike" in text
    assert "C1/IsoDD at ℓ2 holds for the MLP (+0.004 [+0.001, +0.006]) and fails for the CNN (-0.004" in text
    assert "within 0.0040 of Fixed σ's" in text and "clamped at 0.999" in text
    assert "holds for the MLP at ℓ2; fails for the CNN at ℓ2; is within noise for the MLP at ℓ1 and the CNN at ℓ1" in text


def test_comparison_bullet_names_what_changes_with_the_data():
    effects, margin = effects_like_the_run(), margins_like_the_run()
    steps = pd.DataFrame([dict(column=c, norm=n, method=m, chosen=v) for c, n, m, v in (
        ("mnist", "l2", "ANCER", 3.90625), ("mnist", "l1", "ANCER", 3.90625), ("digits_cnn", "l2", "ANCER", 0.04),
        ("digits_cnn", "l1", "ANCER", 0.1), ("mnist", "l2", "Isotropic DD", 0.01))])
    text = F.comparison_bullet(effects, margin, steps, {"mnist": 52138, "digits_cnn": 6058},
                               {"mnist": 80, "digits_cnn": 150})
    assert "C1/ANCER at ℓ1 and C2 at ℓ1 hold on MNIST and not on the digits" in text
    assert "3.3 times the digits' or more" in text
    assert "52,138 parameters on MNIST's 28×28 images and 6,058 on the 8×8 digits" in text
    assert "3.91 θ on MNIST and 0.04 θ / 0.1 θ (ℓ2 / ℓ1) on the digits" in text and "hold 80 and 150 inputs" in text
    assert "cannot single out the data" in text and "epochs" not in text
    trained = F.comparison_bullet(effects, margin, steps, {"mnist": 52138, "digits_cnn": 6058},
                                  {"mnist": 80, "digits_cnn": 150}, epochs={"mnist": 30, "digits_cnn": 40})
    assert "on the digits, the CNN trains for 30 and 40 epochs, and the test sets hold 80 and 150 inputs" in trained
    # only verdicts that differ between MNIST and the digits MLP can tell what the CNN does: C1/ANCER at both norms
    # and C2 at l1 here; C3 holds on all three columns and says nothing
    assert ("for the verdicts that differ between MNIST and the digits MLP: with the MLP swapped for the CNN (and its "
            "budget) on the same digits, C1/ANCER at ℓ2 and C1/ANCER at ℓ1 and C2 at ℓ1 keep a verdict other than "
            "MNIST's, so the CNN alone does not produce them there.") in text
    assert "C3" not in text.split("What the columns do show")[1]
    taken = {**effects, ("digits_cnn", "l1"): {**effects["digits_cnn", "l1"], "C2": effect(0.3, 0.2, 0.4)}}
    text = F.comparison_bullet(taken, margin, steps, {"mnist": 52138, "digits_cnn": 6058},
                               {"mnist": 80, "digits_cnn": 150})
    assert "C1/ANCER at ℓ2 and C1/ANCER at ℓ1 keep a verdict other than MNIST's, so the CNN alone does not produce " \
           "them there; C2 at ℓ1 takes MNIST's verdict, so the model may account for it." in text
    same = {**effects, **{("mnist", n): effects["digits", n] for n in ("l2", "l1")}}
    text = F.comparison_bullet(same, margin, steps, {"mnist": 52138, "digits_cnn": 6058},
                               {"mnist": 80, "digits_cnn": 150})
    assert text.endswith("No verdict of C1 for ANCER, C2 or C3 differs between MNIST and the digits MLP, so swapping "
                         "the model cannot show what produces MNIST's verdicts.")


def test_certainty_steps_summary_and_seed_note():
    effects = effects_like_the_run()
    text = F.certainty_bullet(effects)
    assert "±0.121 (the MNIST column, 80 test inputs); the digits' 150 inputs give ±0.026 or less" in text
    steps = pd.DataFrame([dict(column="digits", norm="l1", position="inside", widened=1, ineligible=2),
                          dict(column="mnist", norm="l2", position="inside", widened=5, ineligible=1)])
    text = F.steps_bullet(steps, TITLES, 8, 0.05)
    assert text.startswith("* **Every step size lies inside the values tried or, at an edge, is the best eligible "
                           "one**")
    assert "where the chosen step sits at an edge" not in text
    bound = F.steps_bullet(steps.assign(position=["best eligible", "inside"]), TITLES, 8, 0.05)
    assert "where the chosen step sits at an edge of the values tried (8×8 digits (MLP), for CIFAR-10 l1), every" in bound
    assert "after at most 5 widenings (`selection.WIDEN` = 8 allowed)" in text
    assert "8×8 digits (MLP), for CIFAR-10 l1: 2, MNIST-5k (CNN), for ImageNet l2: 1 of ANCER's steps" in text
    assert "1 step sizes lie at an edge" in F.steps_bullet(steps.assign(position=["inside", "largest tried"]), TITLES, 8, 0.05)
    whole = F.summary([text, "* two"])
    assert whole.endswith("which need the paper profile.") and "\n* two\n" in whole
    with pytest.raises(ValueError, match="bullets"):
        F.summary(["no bullet"])
    seeds = {("l2", "C2"): ["fails"] * 3, ("l1", "C2"): ["within noise", "fails", "fails"]}
    text = F.seed_note(seeds, "D", [0, 1, 2], 85.0, "1 min 25 s")
    assert "same verdict on every seed for C2 (ℓ2, fails); a verdict that changes with the seed for C2 (ℓ1: within " \
           "noise, fails, fails)" in text and "cost 1 min 25 s" in text
    assert "nothing this time" in F.seed_note(seeds, "D", [0, 1, 2], 0.0, "0 s")


def test_parameter_count():
    torch = pytest.importorskip("torch")
    assert F.parameter_count(torch.nn.Linear(3, 2)) == 8
    with pytest.raises(ValueError, match="torch.nn.Module"):
        F.parameter_count(3)
