"""ancer_lite.studies.ucan_findings (notebook 07's words and claim rows) on small tables whose sentences follow from
their numbers."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from ancer_lite.evaluation.intervals import Effect
from ancer_lite.report import claims
from ancer_lite.studies import ucan_findings as uf
from ancer_lite.studies import ucan_tables


def _effect(estimate, half=0.05, n=100):
    return Effect(estimate, estimate - half, estimate + half, 0.95, n, 1000)


@pytest.fixture
def c8_effects():
    t = pd.DataFrame(dict(lam=[0.25, 1.0], npg=["Pattern-fixed ℓ2", "Pattern-fixed ℓ2"],
                          effect=[_effect(0.2), _effect(-0.01)], effect_fine_tuned=[_effect(0.1), _effect(-0.2)]))
    u = pd.DataFrame(dict(lam=[1.0], npg=["Universal"], effect=[_effect(0.5)], effect_fine_tuned=[_effect(0.0)]))
    return {"digits": t, "mnist": u}


@pytest.fixture
def c9_effects():
    return {("digits", "input"): _effect(-0.1, 0.04, 91), ("digits", "universal"): _effect(0.0, 0.0, 96)}


def test_pct_and_c8_paper():
    assert uf.pct(142.54) == "+142.5%" and uf.pct(-4.0) == "-4.0%"
    assert uf.pct(float("nan")).startswith("undefined")
    assert uf.c8_paper("Pattern-fixed ℓ2", 1.0) == "strictly above Cohen (§5.1, Figure 4)"
    assert uf.c8_paper("Pattern-fixed ℓ2", 0.5) == "" and uf.c8_paper("Universal", 1.0) == ""


def test_claim_rows_are_the_notebooks_rows(c8_effects, c9_effects):
    # the rows as notebook 07 built them before they moved here, written out
    want = [claims.claim_row(label, f"{uf.short_name(name)}, {r.npg}, λ = {r.lam:g}", statement, getattr(r, field),
                             "strictly above Cohen (§5.1, Figure 4)" if r.npg.startswith("Pattern") and r.lam == 1
                             else "", "07_ucan")
            for label, field, statement in (("C8", "effect", ucan_tables.C8_STATEMENT),
                                            ("C8/fine-tuned", "effect_fine_tuned", ucan_tables.C8_FT_STATEMENT))
            for name, t in c8_effects.items() for r in t.itertuples()]
    assert uf.c8_claim_rows(c8_effects) == want
    rows = uf.c9_claim_rows(c9_effects, 0.25)
    assert [r["claim"] for r in rows] == ["C9", "C9/control"]
    assert rows[0]["setting"] == "8×8 digits (MLP), Input-dependent, λ = 0.25"
    assert rows[0]["paper"] == "sound (Theorem 3.2)" and rows[1]["paper"] == ""
    assert rows[0]["verdict"] == "fails" and rows[1]["verdict"] == "within noise"
    with pytest.raises(ValueError, match="kinds"):
        uf.c9_claim_rows({("digits", "pattern"): _effect(0.0)}, 0.25)


def test_record_claims_writes_c8_then_c9(c8_effects, c9_effects, tmp_path, monkeypatch):
    monkeypatch.setenv("ANCER_FIGURES_DIR", str(tmp_path))
    table = uf.record_claims(c8_effects, c9_effects, 0.25)
    assert list(table.claim) == ["C8"] * 3 + ["C8/fine-tuned"] * 3 + ["C9", "C9/control"]
    written = (tmp_path / "claims" / "07_ucan.tsv").read_text()
    assert written == table.to_csv(sep="\t", index=False, float_format="%.6g")


def test_columns_and_grids_markdown():
    st = SimpleNamespace(x=[0] * 40, d=784, setup=SimpleNamespace(lams=(0.25, 0.5, 1.0)),
                         column=SimpleNamespace(setup=SimpleNamespace(n=10_000, sigmas_l2=(0.25, 0.5))))
    text = uf.columns_markdown({"mnist": st})
    assert text == ("* **MNIST-5k (CNN)** (`mnist`): 40 test inputs, d = 784, N = 10,000, λ ∈ {0.25, 0.5, 1}; "
                    "baselines at σ ∈ {0.25, 0.5}")
    setup = SimpleNamespace(kappas=(0.1, 1.0), gammas=(1.0, 5.0), selection_lam=0.25, num_val=50, val_n=2000,
                            lams=(0.25, 0.5, 1.0))
    text = uf.grids_markdown({"digits": setup}, 2)
    assert text.startswith("Grids: κ ∈ {0.1, 1}, γ ∈ {1, 5}, at λ = 0.25 on 50 validation inputs with N = 2,000.")
    assert "up to 2 more values" in text
    assert "reused at λ ∈ {0.5, 1}, which the objective at λ = 0.25 does not see, so a value is eligible only where " \
           "its validation accuracy at radius 0 stays within 5 points of the fine-tuned isotropic control's at each " \
           "of them" in text
    assert "reused" not in uf.grids_markdown({"digits": SimpleNamespace(**{**vars(setup), "lams": (0.25,)})}, 2)
    mnist = SimpleNamespace(**{**vars(setup), "num_val": 30})
    both = uf.grids_markdown({"digits": setup, "mnist": mnist}, 2)
    assert ("on 50 validation inputs with N = 2,000 (8×8 digits (MLP)); 30 validation inputs with N = 2,000 "
            "(MNIST-5k (CNN)).") in both
    apart = uf.grids_markdown({"digits": setup, "mnist": SimpleNamespace(**{**vars(mnist), "kappas": (1.0,)})}, 2)
    assert apart.startswith("**8×8 digits (MLP).** Grids: κ ∈ {0.1, 1}")
    assert "**MNIST-5k (CNN).** Grids: κ ∈ {1}," in apart
    with pytest.raises(ValueError, match="setups"):
        uf.grids_markdown({}, 2)
    audit = dict(audit_steps=50, audit_samples=64, audit_n=100_000)
    digits = SimpleNamespace(**vars(setup), **audit, audit_verify=10)
    mnist_audit = SimpleNamespace(**{**vars(digits), "audit_verify": 6})
    assert uf.audit_settings_markdown({"digits": digits, "mnist": mnist_audit}, 0.001) == (
        "Search at λ = 0.25: 50 steps of 64 draws; at most 10 (8×8 digits (MLP)), 6 (MNIST-5k (CNN)) candidates "
        "re-estimated per NPG with N = 100,000 at α = 0.001.")
    with pytest.raises(ValueError, match="setups"):
        uf.audit_settings_markdown({}, 0.001)


def _c8(rows):
    out = pd.DataFrame(rows, columns=["lam", "npg", "holds", "below_at", "clean_gap", "acr_alm", "cohen_acr",
                                      "fine_tuned_acr"])
    return out


def test_figure4_markdown_reads_the_verdicts():
    c8 = {"digits": _c8([(0.25, "Pattern-fixed ℓ2", False, (0.0,), -1.0, 0.6, 0.5, 0.5),
                         (1.0, "Pattern-fixed ℓ2", True, (), 2.0, 0.6, 0.4, 0.4),
                         (1.0, "Universal", False, (0.0, 0.25), -3.0, 1.1, 0.4, 0.4)]),
          "mnist": _c8([(1.0, "Pattern-fixed ℓ2", False, (0.5,), 0.0, 2.0, 1.2, 1.2)])}
    text = uf.figure4_markdown(c8)
    assert "* **Pattern-fixed ℓ2**: 8×8 digits (MLP): at or above Cohen at every ALM and above somewhere at λ ∈ {1} " \
           "of {0.25, 1}; MNIST-5k (CNN): at no λ" in text
    assert "* **Universal**: 8×8 digits (MLP): at no λ" in text
    assert "reproduces on 8×8 digits (MLP); does not reproduce on MNIST-5k (CNN)." in text


def _table(rows):
    """An accuracy table: rows (method, w.r.t.) -> (accuracy at 0 and 2.25, mean)."""
    idx = pd.MultiIndex.from_tuples([r[:2] for r in rows], names=["method", "w.r.t."])
    return pd.DataFrame([r[2:] for r in rows], index=idx, columns=["0", "2.25", "mean"])


@pytest.fixture
def tables():
    return {"digits": _table([("Cohen (Fixed σ)", "radius", 99.0, 0.0, 0.505),
                              ("Pattern-fixed ℓ2", "radius", 98.0, 0.0, 0.33),
                              ("Universal", "radius", 96.0, 0.0, 0.078), ("Universal", "ALM", 96.0, 0.0, 1.128),
                              ("Input-dependent", "ALM", 91.0, 19.0, 1.45)])}


def test_paper_side_and_universal_markdown(tables):
    paper = {"MNIST": pd.DataFrame({2.25: [94.0, 4.0]}, index=["Ours acc_alm", "Cohen acc"])}
    text = uf.paper_side_markdown(paper, tables, 2.25)
    assert "MNIST 94% against 4%" in text and "8×8 digits (MLP) 19.0% against 0.0%." in text
    sigma = np.full((8, 8), 4.0)
    sigma[0, :3] = 0.1
    text = uf.universal_markdown(tables, {"digits": 5.0}, {"digits": sigma})
    assert "γ = 5 on digits" in text and "ACR̃ 1.13 (digits) against Cohen's ACR 0.51" in text
    assert "ℓ2 ACR of only 0.078" in text
    assert "3 of 64 pixels below γ/10 and 61 above γ/2 (digits)" in text


def test_c8_markdown_names_the_exceptions_and_the_radius_comparison(tables):
    c8 = {"digits": _c8([(0.25, "Pattern-fixed ℓ2", False, (0.0,), -1.0, 0.6, 0.5, 0.5),
                         (0.5, "Input-dependent", False, (0.0,), -1.0, 0.3, 0.4, 0.4)])}
    text = uf.c8_markdown(c8, tables, {"digits": 0.54})
    assert "  * 8×8 digits (MLP), λ = 0.25: below Cohen at ALM 0 (clean accuracy -1.0 points against Cohen's)" in text
    assert "at the same λ: **False** (not: 8×8 digits (MLP) Input-dependent at λ = 0.5)." in text
    assert "ℓ2 *radius* is below Cohen's (ACR 0.33 against 0.51 on digits)" in text and "0.54 (digits)" in text
    c8["digits"] = c8["digits"].iloc[:1]
    assert "at the same λ: **True**." in uf.c8_markdown(c8, tables, {"digits": 0.54})


def test_c8_control_markdown_counts_the_verdicts(c8_effects):
    c8 = {"digits": _c8([(0.25, "Pattern-fixed ℓ2", True, (), 0, 0.6, 0.5, 0.51),
                         (1.0, "Pattern-fixed ℓ2", True, (), 0, 0.6, 0.5, 0.07)])}
    text = uf.c8_control_markdown(c8, c8_effects)
    assert "reaches an ACR of 0.51, 0.07 (8×8 digits (MLP), λ = 0.25, 1)" in text
    assert "Of the 3 (column, NPG, λ) comparisons of ACR̃ against it, 1 holds, 1 fails, 1 within noise." in text
    assert "8×8 digits (MLP): against Cohen -0.010 [-0.060, +0.040] (within noise)" in text


def test_c9_markdown_heading_follows_the_counts():
    counts = {("digits", "input"): dict(searched=91, candidates=91, re_estimated=10, verified=8),
              ("digits", "universal"): dict(searched=96, candidates=59, re_estimated=10, verified=0)}
    text = uf.c9_markdown(counts, 100_000, 0.001, {"digits": 0.9996})
    assert text.startswith("* **Claim C9: the input-dependent certificate is not sound.**")
    assert "91 of the 91 certified regions searched (digits)" in text and "verified 8 of 10 (digits)" in text
    assert "gives 0 (digits)" in text and "1.000 (digits)" in text and "N = 100,000" in text
    counts["digits", "input"]["verified"] = 0
    assert "no violation of the input-dependent certificate was verified" in uf.c9_markdown(counts, 10, 0.001, {})


def _memory(**over):
    row = dict(column="mnist", lam=1.0, kept=40, shrunk=0, abstain_base=0, abstain_inside=0, abstain_intersect=0,
               acc_before=10.0, acr_before=3.571, acr_alm_before=3.6920001, acc_after=10.0, acr_after=3.571,
               acr_alm_after=3.6919998)
    row.update(over)
    return row


def test_memory_changes_count_certificates_not_differences():
    table = pd.DataFrame([_memory(), _memory(column="digits", lam=0.25, kept=24, shrunk=69, abstain_base=7,
                                             acc_before=91.0, acc_after=91.0, acr_alm_before=1.452,
                                             acr_alm_after=0.869, abstain_inside=0)])
    ch = uf.memory_changes(table)
    # the first run's ACR~ moved in its last digits, yet no certificate changed
    assert table.acr_alm_after[0] < table.acr_alm_before[0]
    assert list(ch.changed) == [0, 69] and list(ch.regions) == [40, 100] and list(ch.keeps_half) == [True, True]
    lines = [uf.memory_line(r) for r in ch.itertuples()]
    assert lines[0] == ("mnist   λ = 1.0: Algorithm 1 changes 0 of 40 certificates (0 shrunk, 0 made to abstain); "
                        "keeps at least half the ACR~: True; certified accuracy drops by at most 2 points: True")
    assert "changes 69 of 100 certificates (69 shrunk, 0 made to abstain)" in lines[1]
    text = uf.memory_markdown(table)
    assert "It changes certificates in 1 of the 2 runs:" in text
    assert "  * MNIST-5k (CNN), λ = 1: 0 of 40 certificates changed (0 shrunk, 0 made to abstain), ACR̃ 3.69 → 3.69" \
        in text
    with pytest.raises(ValueError, match="missing"):
        uf.memory_changes(table.drop(columns="shrunk"))


def test_violation_after_memory_markdown():
    audit = pd.DataFrame(dict(position=[0, 1], idx=[34, 35], label=[6, 1], top=[4, 2], delta_l2=[2.0, 1.0],
                              verified=[True, True]))
    kept = pd.DataFrame(dict(status=["kept", "kept"], radius=[1.0, 1.0]))
    assert "**kept** x's certified region" in uf.violation_after_memory_markdown(kept, audit)
    assert "test input 34, certified class 6, UCAN's class at x' 4" in uf.violation_after_memory_markdown(kept, audit)
    shrunk = kept.assign(status="shrunk", radius=[2.5, 1.0])
    assert "inside it, so the memory-based classifier answers it with x's class 6." in \
        uf.violation_after_memory_markdown(shrunk, audit)
    assert "outside it" in uf.violation_after_memory_markdown(shrunk.assign(radius=[1.5, 1.0]), audit)
    assert "**abstains**" in uf.violation_after_memory_markdown(kept.assign(status="abstain_inside"), audit)
    with pytest.raises(ValueError, match="verified"):
        uf.violation_after_memory_markdown(kept, audit.assign(verified=False))


def test_violation_markdown():
    ex = dict(idx=34, inside=True, top=4, p_lower_top=0.99512, label=6)
    assert uf.violation_markdown(ex, "digits", 0.001) == (
        "Test input 34 of `digits`: x' lies inside x's certified region: **True**; at x' UCAN's smoothed classifier "
        "returns class 4 with probability ≥ 0.995 (Clopper-Pearson, α = 0.001), where x is certified as class 6.")


def test_table1_and_gamma_reuse_markdown():
    text = uf.table1_markdown({"radius": ["uniform_linf/linf"], "alm": ["laplace/l1", "power_law_linf/l1"]}, 9)
    assert text.startswith("* **Table 1.** 8 of the 9 rows' radii are right as printed; wrong in all three radius "
                           "columns: uniform ℓ∞ noise, ℓ∞ radius (")
    both = uf.table1_markdown({"radius": [], "alm": [], "columns": ["all rows (column ℓp Radius)", "PDF column"]}, 9)
    assert both.startswith("* **Table 1.** Apart from 2 errata that run down a column (all rows (column ℓp Radius); "
                           "PDF column: the notebook's errata table above), 9 of the 9 rows' radii are right")
    assert "2 ALM cells (Laplace noise, ℓ1 radius and power-law ℓ∞ noise, ℓ1 radius)" in text
    with pytest.raises(ValueError, match="n_rows"):
        uf.table1_markdown({"radius": ["a", "b"], "alm": []}, 1)
    clean = {("mnist", "input", 0.25): 90.0, ("mnist", "input", 0.5): 0.0}
    selection = pd.DataFrame(dict(kind=["input", "input", "universal", "pattern"],
                                  param=["gamma", "gamma", "gamma", "kappa"], value=[12.5, 5.0, 5.0, 1.0],
                                  elsewhere=[-62.5, -1.0, 0.0, -30.0], eligible=[False, True, True, False]))
    text = uf.gamma_reuse_markdown(clean, {("mnist", "input"): 5.0}, 0.25, {"mnist": selection})
    assert "chosen once, at λ = 0.25" in text
    assert "more than 5 points below the fine-tuned isotropic control's there): MNIST-5k (CNN), Input-dependent " \
           "γ = 12.5 (-62.5 points); MNIST-5k (CNN), Pattern-fixed κ = 1 (-30.0 points)." in text
    assert "below 50% for MNIST-5k (CNN), Input-dependent (γ = 5) at λ = 0.5: 0.0%." in text
    text = uf.gamma_reuse_markdown({("mnist", "input", 0.25): 90.0}, {("mnist", "input"): 12.5}, 0.25,
                                   {"mnist": selection.assign(eligible=True)})
    assert "there): it refused none." in text and "below 50% for no NPG at any λ." in text


def test_headline_markdown_words_follow_the_improvements():
    facts = {"mnist": dict(radius=2.25, ours=50.0, best_baseline=12.5, ancer_alm=80.0, over_baseline=300.0,
                           over_ancer_alm=-37.5)}
    imp = pd.DataFrame([[0.0, 300.0], [-5.0, -37.5]], columns=["0.25", "2.25"])
    text = uf.headline_markdown(facts, {"mnist": imp}, {"MNIST": 142.5}, 9)
    assert "(paper: +142.5% on MNIST)" in text
    assert "improvement +300.0%; against ANCER at its ALM (80.0%) -37.5%, and below ANCER at its ALM at 2 of the 9 " \
           "radii > 0 of the grid (0.25, 2.25)." in text
    assert "the improvement is at most the one UCAN's way at 2 of the 2 (column, radius) pairs where both are " \
           "defined, and negative at 2;" in text
    imp = pd.DataFrame([[0.0, 30.0, np.nan], [5.0, 20.0, 1.0]], columns=["0.25", "2", "2.25"])
    assert "at 1 of the 2 (column, radius) pairs where both are defined, and negative at 0;" in \
        uf.headline_markdown(facts, {"mnist": imp}, {}, 9)


def test_figure5_markdown():
    v = pd.DataFrame(dict(alm_above_everywhere=[True, False], accuracy_below_everywhere=[False, True], rows=[9, 9],
                          alm_above_fine_tuned_everywhere=[False, False]),
                     index=pd.Index(["Pattern-fixed", "Input-dependent"], name="npg"))
    text = uf.figure5_markdown(v, "digits", 0.5)
    assert "(8×8 digits (MLP), noise std 0.5 instead of UCAN's 1): in every one of the 9 Table 1 rows, a larger ACR̃ " \
           "than isotropic noise for Pattern-fixed (" in text
    assert "lower clean accuracy than isotropic noise in every row for Input-dependent." in text
    assert text.endswith("a larger ACR̃ in every row for no NPG.")
