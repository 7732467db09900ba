"""ancer_lite.studies.ucan_tables (notebook 07's tables and claims) and ancer_lite.studies.ucan_figures, on small synthetic results
whose answers follow from their construction."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from ancer_lite.core import ucan_radii
from ancer_lite.core.memory import KEPT, SHRUNK
from ancer_lite.methods import ucan
from ancer_lite.report import style
from ancer_lite.studies import ucan_figures, ucan_tables
from ancer_lite.studies.ucan_study import KIND_NAMES, UcanRun, Variant


def _frame(kind, lam, radius, proxy, correct, method=None, pattern="l2"):
    return pd.DataFrame(dict(method=method or KIND_NAMES.get(kind, kind), kind=kind, lam=lam, pattern=pattern,
                             radius=radius, radius_proxy=proxy, correct=correct))


@dataclass
class FakeStudy:
    """The parts of ucan_study.Study the table functions read."""
    base: pd.DataFrame
    lams: tuple = (0.25,)
    x: torch.Tensor | None = None
    runs: dict = field(default_factory=dict)
    cache_dir: Path = Path(".")
    results_root: Path = Path(".")

    def __post_init__(self):
        self.setup = SimpleNamespace(lams=self.lams)
        self.column = SimpleNamespace(setup=SimpleNamespace(name="toy"))

    def baselines(self):
        return self.base


def _cohen(lam, radius, correct):
    return _frame("fixed", lam, radius, radius, correct, method=ucan_tables.COHEN)


# -- Tables 2-3 ------------------------------------------------------------------------------------------------
def _table():
    """Three inputs; Cohen certifies radius 0.6 and 0.3, ANCER 0.5/ALM 1.0, ours radius 2.0 and ALM 2.0 on one."""
    res = pd.concat([
        _cohen(0.25, [0.3, 0.6, 0.0], [True, True, False]),
        _frame("isotropic", 0.25, [0.2, 0.2, 0.0], [0.2, 0.2, 0.0], [True, True, False], method="Isotropic DD"),
        _frame("ancer", 0.25, [0.5, 0.5, 0.0], [1.0, 1.0, 0.0], [True, True, False], method="ANCER"),
        _frame("input", 0.25, [0.2, 0.2, 2.0], [0.4, 0.4, 2.0], [True, True, True]),
    ])
    from ancer_lite.studies.ucan_study import accuracy_rows
    return accuracy_rows(res, radii=(0.0, 0.5, 1.0))


def test_improvement_rows_against_best_baseline_and_ancer_alm():
    t = _table()
    imp = ucan_tables.improvement_rows(t)
    # at 0: ours 100% vs best baseline 2/3 → +50%; at 0.5: ours 1/3, ANCER radius 2/3 → -50%; at 1: baseline 0 → NaN
    assert imp.iloc[0]["0"] == pytest.approx(50.0)
    assert imp.iloc[0]["0.5"] == pytest.approx(-50.0)
    assert np.isnan(imp.iloc[0]["1"])
    # ANCER at its ALM: 2/3 at 1.0, ours 1/3 → -50%
    assert imp.iloc[1]["1"] == pytest.approx(-50.0)
    assert ucan_tables.below_ancer_alm(imp) == [0.5, 1.0]
    f = ucan_tables.at_largest_radius(t, imp)
    assert f["radius"] == 1.0 and f["ours"] == pytest.approx(100 / 3) and f["best_baseline"] == 0.0
    assert f["ancer_alm"] == pytest.approx(200 / 3) and np.isnan(f["over_baseline"])


def test_headline_reads_the_mean_column():
    t = _table()
    h = ucan_tables.headline({"toy": t}, rows=((ucan_tables.COHEN, "radius"), ("Input-dependent", "ALM")))
    assert h["toy"].tolist() == pytest.approx([0.9 / 3, 2.8 / 3])


def test_paper_rows_and_the_repeated_cohen_row():
    rows = ucan_tables.paper_rows()
    assert list(rows) == ["MNIST", "CIFAR-10", "ImageNet"]
    # Table 4 (ImageNet): its own radius grid, 0-3.5 in steps of 0.5, and UCAN's ImageNet Cohen row
    assert [float(r) for r in rows["ImageNet"].columns] == [0.5 * k for k in range(8)]
    assert rows["ImageNet"].loc["Cohen acc", 0.0] == 67 and rows["ImageNet"].loc["Cohen acc", 0.5] == 49
    assert "Ours acc_alm" in rows["ImageNet"].index and "ANCER acc" in rows["ImageNet"].index
    assert list(ucan_tables.paper_rows(("MNIST",))) == ["MNIST"]
    with pytest.raises(ValueError, match="datasets must be among"):
        ucan_tables.paper_rows(("SVHN",))
    assert ucan_tables.cohen_rows_identical(rows)  # UCAN prints the same Cohen row for MNIST and CIFAR-10
    changed = {k: v.copy() for k, v in rows.items()}
    changed["MNIST"].loc["Cohen acc", changed["MNIST"].columns[0]] += 1
    assert not ucan_tables.cohen_rows_identical(changed)


# -- claim C8 ------------------------------------------------------------------------------------------------------
def test_claim_c8_holds_when_at_least_everywhere_and_above_somewhere():
    radii = (0.0, 0.5, 1.0)
    base = _cohen(0.25, [0.6, 0.6, 0.0], [True, True, False])
    res = pd.concat([
        _frame("pattern", 0.25, [0.1] * 3, [1.1, 0.6, 0.0], [True, True, False]),       # ≥ everywhere, > at 1.0
        _frame("universal", 0.25, [0.1] * 3, [0.6, 0.6, 0.0], [True, True, False]),     # equal everywhere
        _frame("input", 0.25, [0.1] * 3, [2.0, 2.0, 2.0], [True, False, False]),       # lower at 0 and 0.5
        _frame("isotropic_ft", 0.25, [0.9, 0.6, 0.0], [0.9, 0.6, 0.0], [True, True, False]),  # the control
    ])
    c8 = ucan_tables.claim_c8(FakeStudy(base), res, radii).set_index("npg")
    assert list(c8.index) == ["Pattern-fixed ℓ2", "Universal", "Input-dependent"]  # the control is no NPG
    # against the fine-tuned control (radius 0.9 and 0.6): the pattern NPG's 1.1 / 0.6 stays at least, above at 1.0
    assert c8.loc["Pattern-fixed ℓ2", "holds_fine_tuned"] and not c8.loc["Universal", "holds_fine_tuned"]
    assert c8.loc["Pattern-fixed ℓ2", "fine_tuned_acr"] == pytest.approx(1.5 / 3)
    assert c8.loc["Pattern-fixed ℓ2", "holds"] and c8.loc["Pattern-fixed ℓ2", "below_at"] == ()
    assert not c8.loc["Universal", "holds"] and c8.loc["Universal", "at_least_everywhere"]
    assert not c8.loc["Input-dependent", "holds"] and c8.loc["Input-dependent", "below_at"] == (0.0, 0.5)
    assert c8.loc["Input-dependent", "clean_gap"] == pytest.approx(100 * (1 / 3 - 2 / 3))
    assert c8.loc["Input-dependent", "acr_alm"] == pytest.approx(2 / 3)
    assert c8.loc["Input-dependent", "cohen_acr"] == pytest.approx(0.4)
    v = ucan_tables.c8_verdicts(ucan_tables.claim_c8(FakeStudy(base), res, radii)).set_index("npg")
    assert v.loc["Pattern-fixed ℓ2", "holds_at"] == (0.25,) and v.loc["Input-dependent", "fails_at"] == (0.25,)


def test_claim_c8_needs_a_cohen_run_and_the_control_at_each_lambda():
    with pytest.raises(ValueError, match="Fixed σ"):
        ucan_tables.claim_c8(FakeStudy(_cohen(0.5, [0.1], [True])), _frame("input", 0.25, [0.1], [0.1], [True]))
    with pytest.raises(ValueError, match="fine-tuned isotropic"):
        ucan_tables.claim_c8(FakeStudy(_cohen(0.25, [0.1], [True])), _frame("input", 0.25, [0.1], [0.1], [True]))


def test_c8_effects_against_cohen_and_the_fine_tuned_control():
    """Both effects are the ACR~ minus the baseline's ACR on the same inputs (paired): exact point estimates."""
    base = _cohen(0.25, [0.6, 0.6, 0.0], [True, True, False])
    res = pd.concat([_frame("pattern", 0.25, [0.1] * 3, [1.1, 0.6, 0.0], [True, True, False]).assign(idx=[0, 1, 2]),
                     _frame("isotropic_ft", 0.25, [1.0, 0.6, 0.0], [1.0, 0.6, 0.0], [True, True, False])
                     .assign(idx=[0, 1, 2])])
    e = ucan_tables.c8_effects(FakeStudy(base.assign(idx=[0, 1, 2])), res, "toy").iloc[0]
    assert e.effect.estimate == pytest.approx(1.7 / 3 - 0.4) and e.effect_fine_tuned.estimate == pytest.approx(0.1 / 3)


# -- claim C9 and the memory table ------------------------------------------------------------------------------------
def test_audit_summary_counts():
    a = pd.DataFrame(dict(soft_prob=[0.1, 0.7, 0.3], p_lower_top=[0.9, np.nan, 0.4], verified=[True, False, False]))
    assert ucan_tables.audit_summary(a) == dict(searched=3, candidates=2, re_estimated=2, verified=1)
    assert ucan_tables.audit_summary(pd.DataFrame())["searched"] == 0


def test_memory_rows_before_and_after():
    before = pd.DataFrame(dict(correct=[True, True, False, True], radius=[1.0, 2.0, 0.0, 1.0],
                               radius_proxy=[2.0, 3.0, 0.0, 1.0]))
    after = before.assign(correct=[True, True, False, False], radius=[1.0, 0.5, 0.0, 0.0],
                          radius_proxy=[2.0, 0.5, 0.0, 0.0], status=[KEPT, SHRUNK, KEPT, "abstain_inside"])
    r = ucan_tables.memory_rows(before, after)
    assert (r[KEPT], r[SHRUNK], r["abstain_inside"], r["abstain_base"]) == (2, 1, 1, 0)
    assert (r["acc_before"], r["acc_after"]) == (75.0, 50.0)
    assert r["acr_before"] == pytest.approx(1.0) and r["acr_after"] == pytest.approx(0.375)
    assert r["acr_alm_before"] == pytest.approx(1.5) and r["acr_alm_after"] == pytest.approx(0.625)
    with pytest.raises(ValueError, match="one row per input"):
        ucan_tables.memory_rows(before, after.iloc[:2])


# -- Figure 5's table -----------------------------------------------------------------------------------------------
def _universality():
    rows = []
    for row in ("gaussian/l1", "laplace/l1"):
        rows.append(_frame("isotropic", 0.5, [0.2, 0.2], [0.2, 0.2], [True, True]).assign(row=row))
        rows.append(_frame("pattern", 0.5, [0.1, 0.1], [0.6, 0.6], [True, False]).assign(row=row))
        rows.append(_frame("isotropic_ft", 0.5, [0.4, 0.4], [0.4, 0.4], [True, True]).assign(row=row))
    return pd.concat(rows, ignore_index=True)


def test_universality_table_and_verdicts():
    t = ucan_tables.universality_table(_universality())
    assert t.loc[("laplace/l1", "Pattern-fixed"), "accuracy"] == 50.0
    assert t.loc[("laplace/l1", "Pattern-fixed"), "acr_alm"] == pytest.approx(0.3)
    assert t.loc[("gaussian/l1", "Isotropic (Cohen)"), "acr"] == pytest.approx(0.2)
    v = ucan_tables.universality_verdicts(t)
    assert v.loc["Pattern-fixed", "alm_above_everywhere"] and v.loc["Pattern-fixed", "accuracy_below_everywhere"]
    assert v.loc["Pattern-fixed", "rows"] == 2 and list(v.index) == ["Pattern-fixed"]  # the control is no NPG
    assert not v.loc["Pattern-fixed", "alm_above_fine_tuned_everywhere"]  # 0.3 < the fine-tuned control's 0.4


# -- Table 1 words and errata -------------------------------------------------------------------------------------------
def test_row_titles_and_errata():
    assert ucan_tables.row_title("exp_linf/l1") == "exponential ℓ∞ noise, ℓ1 radius"
    assert len({ucan_tables.row_title(r.key) for r in ucan_radii.TABLE1}) == len(ucan_radii.TABLE1)
    with pytest.raises(ValueError, match="Table 1 row"):
        ucan_tables.row_title("exp_linf/l2")
    wrong = ucan_tables.table1_errata()
    assert "uniform_linf/linf" in wrong["radius"]  # the printed radius is undefined:
    assert np.isnan(ucan_radii.uniform_linf_radius_printed(0.9, 1.0))
    assert "gaussian/l2" not in wrong["radius"] and set(wrong["alm"]) <= set(ucan_radii.TABLE1_ROWS)
    # the ℓp-radius column's p_A (for p_A') and the PDF column run across rows; §5's text is not Table 1
    assert len(wrong["columns"]) == 2 and all("column" in c for c in wrong["columns"])


# -- timed steps -------------------------------------------------------------------------------------------------
def test_timed_records_and_rereads_the_time_of_computation(tmp_path):
    st = FakeStudy(pd.DataFrame(), cache_dir=tmp_path / "cache", results_root=tmp_path / "results" / "ucan" / "toy")

    def compute():
        f = st.results_root / "certify.tsv"
        if not f.exists():
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text("idx\n")
        return 1

    _, t = ucan_tables.timed(st, "certify_test", "toy", compute)
    assert not t.reused and (st.results_root / "timings" / "certify_test.json").exists()
    _, t2 = ucan_tables.timed(st, "certify_test", "toy", compute)
    assert t2.reused and t2.computed_seconds == pytest.approx(t.seconds, abs=1e-3)
    with pytest.raises(ValueError, match="identifier"):
        ucan_tables.timed(st, "../x", "toy", compute)


def test_timed_steps_of_several_studies_keep_one_sidecar(tmp_path):
    """A step computed for several columns at once (`ucan_study.select_all`) watches every column's folders and keeps
    its time beside them, named after the columns."""
    studies = [FakeStudy(pd.DataFrame(), cache_dir=tmp_path / "cache", results_root=tmp_path / "results" / "ucan" / n)
               for n in ("a", "b")]
    for st, name in zip(studies, ("a", "b")):
        st.column = SimpleNamespace(setup=SimpleNamespace(name=name))

    def compute():
        f = studies[1].results_root / "val.tsv"  # written under the second column only
        if not f.exists():
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text("idx\n")
        return 2

    out, t = ucan_tables.timed(studies, "select", "a, b", compute)
    assert out == 2 and not t.reused and (tmp_path / "results" / "ucan" / "timings" / "select-a-b.json").exists()
    _, t2 = ucan_tables.timed(studies, "select", "a, b", compute)
    assert t2.reused and t2.computed_seconds == pytest.approx(t.seconds, abs=1e-3)
    with pytest.raises(ValueError, match="non-empty"):
        ucan_tables.timed([], "select", "none", compute)


# -- Figure 7 and the violation -----------------------------------------------------------------------------------
def _noise_study():
    x = torch.rand(2, 1, 4, 4)
    sigma = np.linspace(0.5, 2.0, 16).reshape(1, 4, 4)
    runs = {}
    for kind in ("pattern", "universal"):
        v = Variant(kind, 0.25, 1.0)
        runs[v] = UcanRun(v, None, ucan.FixedNPG(sigma), None)
    return FakeStudy(pd.DataFrame(), x=x, runs=runs), sigma


def test_noise_examples_are_eq2_draws_in_order():
    st, sigma = _noise_study()
    ex = ucan_tables.noise_examples(st, 0.25, position=1, seed=3)
    assert list(ex) == ["isotropic", "pattern", "universal"]
    gen = torch.Generator().manual_seed(3)
    x = st.x[1]
    iso = x + 0.25 * torch.randn(x.shape, generator=gen)
    pat = x + 0.25 * torch.as_tensor(sigma, dtype=torch.float32) * torch.randn(x.shape, generator=gen)
    np.testing.assert_allclose(ex["isotropic"]["draw"], iso[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(ex["pattern"]["draw"], pat[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(ex["pattern"]["sigma"], sigma[0], rtol=1e-6)
    assert (ex["isotropic"]["sigma"] == 1).all() and (ex["universal"]["mu"] == 0).all()
    with pytest.raises(ValueError, match="position"):
        ucan_tables.noise_examples(st, 0.25, position=2)
    with pytest.raises(ValueError, match="λ"):
        ucan_tables.noise_examples(st, 0.5)


def test_violation_example_checks_membership_in_the_certified_ellipsoid():
    st, sigma = _noise_study()
    v = next(iter(st.runs))
    theta = 0.25 * torch.as_tensor(sigma, dtype=torch.float32)
    u = torch.zeros(1, 4, 4)
    u[0, 0, 0] = 1.0

    def audit(scale):
        delta = theta * u * scale  # ‖δ ⊘ θ‖₂ = scale
        return pd.DataFrame([dict(position=0, idx=7, label=1, r1=1.5, scaled_norm=scale, verified=True, top=2,
                                  p_lower_top=0.9, delta=delta)])

    inside = ucan_tables.violation_example(st, audit(1.4), v)
    assert inside["inside"] and inside["top"] == 2 and inside["delta"].shape == (4, 4)
    assert not ucan_tables.violation_example(st, audit(1.6), v)["inside"]
    assert ucan_tables.violation_example(st, audit(1.4).assign(verified=False), v) is None


# -- figures --------------------------------------------------------------------------------------------------------
@pytest.fixture
def curves():
    rng = np.random.default_rng(0)

    def res(kind, lam):
        r = rng.exponential(1.0, 30)
        return pd.DataFrame(dict(kind=kind, lam=lam, pattern="l2", radius=0.5 * r, radius_proxy=r, correct=True))

    res_all = pd.concat([res(k, lam) for k in ("pattern", "universal", "input") for lam in (0.25, 0.5)])
    base = pd.concat([res("fixed", lam).assign(radius=lambda d: d.radius_proxy) for lam in (0.25, 0.5)])
    return {"digits": (res_all, base), "mnist": (res_all, base)}


def test_figures_keep_every_font_at_least_min_font_and_name_the_data(curves):
    import matplotlib.pyplot as plt

    style.apply()
    rows = [r.key for r in ucan_radii.TABLE1 if r.norm != "l2"]
    uni = pd.concat([curves["digits"][0].assign(row=row) for row in rows]
                    + [curves["digits"][1].assign(kind="isotropic", row=row) for row in rows])
    st, _ = _noise_study()
    ex = ucan_tables.noise_examples(st, 0.25)
    figs = [ucan_figures.npg_figure(curves, (0.25, 0.5)),
            ucan_figures.families_figure(uni, rows, "digits"),
            ucan_figures.pattern_maps_figure({p: ucan.pattern_sigma((1, 8, 8), p)[0] for p in ("l1", "l2", "linf")}),
            ucan_figures.noise_examples_figure({"digits": ex}, 0.25, {"digits": st.x[0][0].numpy()})]
    figs.append(ucan_figures.npg_lambda_figure(curves, (0.25, 0.5)))
    for fig in figs:
        assert style.smallest_font(fig) >= style.MIN_FONT
        plt.close(fig)
    texts = " ".join(t.get_text() for t in figs[0].findobj(plt.Text))
    assert "standing in for CIFAR-10" in texts and "standing in for UCAN's MNIST" in texts
    assert "exponential ℓ∞ noise, ℓ1 radius" in " ".join(t.get_text() for t in figs[1].findobj(plt.Text))
    # the figures drawn on stand-in data lead their title with the paper figure on the data (style.titled)
    leads = {0: "UCAN Figure 4 on 8×8 digits (MLP) for CIFAR-10, MNIST-5k (CNN) for MNIST: ",
             3: "UCAN Figure 7 on 8×8 digits (MLP) for CIFAR-10: ",
             4: "UCAN Figure 4 (companion) on 8×8 digits (MLP) for CIFAR-10, MNIST-5k (CNN) for MNIST:\none panel "}
    for k, lead in leads.items():
        assert figs[k].get_suptitle().startswith(lead), figs[k].get_suptitle()
    # Figure 5's title heads its legend, above the panels
    assert figs[1].legends[0].get_title().get_text().startswith("UCAN Figure 5 on 8×8 digits (MLP) for CIFAR-10: ")


def test_npg_figure_is_the_papers_layout(curves):
    """UCAN Figure 4: one row per NPG, one column per data column, every λ in each panel, panels lettered row-wise."""
    import matplotlib.pyplot as plt

    style.apply()
    fig = ucan_figures.npg_figure(curves, (0.25, 0.5))
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 3 * 2
    assert [ax.get_title()[:4] for ax in axes] == ["(a) ", "(b) ", "(c) ", "(d) ", "(e) ", "(f) "]
    assert axes[0].get_title() == "(a) pattern-fixed, 8×8 digits (MLP)"
    assert axes[5].get_title() == "(f) input-dependent, MNIST-5k (CNN)"
    # two λ: an NPG curve and a Cohen curve each, darker for the larger λ
    lines = axes[0].get_lines()
    assert len(lines) == 4 and [ln.get_label() for ln in lines] == ["Cohen, λ = 0.25", "λ = 0.25, ALM",
                                                                    "Cohen, λ = 0.5", "λ = 0.5, ALM"]
    assert sum(lines[1].get_color()) > sum(lines[3].get_color())
    plt.close(fig)
    # one data column: a narrow figure, its title on two lines; an NPG with no runs leaves its panel hidden
    res, base = curves["digits"]
    fig = ucan_figures.npg_figure({"digits": (res[res.kind != "universal"], base)}, (0.25,))
    assert [ax.get_visible() for ax in fig.axes] == [True, False, True]
    assert ":\n" in fig.get_suptitle()
    plt.close(fig)
    with pytest.raises(ValueError, match="kinds"):
        ucan_figures.npg_figure(curves, (0.25,), kinds=("isotropic",))
    with pytest.raises(ValueError, match="lams"):
        ucan_figures.npg_figure(curves, ())


def test_noise_examples_figure_has_a_colour_bar_per_image():
    import matplotlib.pyplot as plt

    st, _ = _noise_study()
    ex = ucan_tables.noise_examples(st, 0.25)
    fig = ucan_figures.noise_examples_figure({"digits": ex}, 0.25, {"digits": st.x[0][0].numpy()})
    images = [ax for ax in fig.findobj(plt.Axes) if ax.images and ax.get_label() != "<colorbar>"]
    bars = [ax for ax in fig.findobj(plt.Axes) if ax.get_label() == "<colorbar>"]
    # isotropic row: x and one draw; each NPG: σ, μ (unless μ ≡ 0, then named in words), draw
    zero_mu = sum(1 for kind, maps in ex.items() if kind != "isotropic" and not abs(maps["mu"]).max() > 0)
    assert len(images) == 2 + 3 * (len(ex) - 1) - zero_mu and len(bars) == len(images)
    words = [t.get_text() for t in fig.findobj(plt.Text)]
    assert sum("μ ≡ 0" in w for w in words) == 1 + zero_mu
    plt.close(fig)
    # a pattern-fixed generator has no mean shift: its μ is named in words, with no colour bar
    ex["pattern"] = {**ex[next(k for k in ex if k != "isotropic")], "mu": np.zeros_like(ex["isotropic"]["draw"])}
    fig = ucan_figures.noise_examples_figure({"digits": ex}, 0.25, {"digits": st.x[0][0].numpy()})
    assert "pattern-fixed:\nμ ≡ 0" in [t.get_text() for t in fig.findobj(plt.Text)]
    assert len([ax for ax in fig.findobj(plt.Axes) if ax.get_label() == "<colorbar>"]) == \
        len([ax for ax in fig.findobj(plt.Axes) if ax.images and ax.get_label() != "<colorbar>"])
    plt.close(fig)


def test_stand_in_names_ucan_datasets():
    import matplotlib.pyplot as plt

    fig = plt.figure()
    ucan_figures.stand_in(fig, ["mnist"])
    assert "MNIST-5k (CNN) standing in for UCAN's MNIST" in fig._supxlabel.get_text()
    with pytest.raises(ValueError):
        ucan_figures.stand_in(fig, [])
    plt.close(fig)
