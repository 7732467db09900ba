"""rancer_study.py and selection.select_rancer: the paper's tables read as printed (ACR x 100 rescaled, which
the text's ARI confirms), ARI / AR̃I as differences of ACRs, claim C7's booleans, and the validation
selection returning the settings its table marks as chosen."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch

from ancer_lite.core.regions import CertifiedRegion
from ancer_lite.methods import rancer
from ancer_lite.runs import selection
from ancer_lite.runs.logs import read_log
from ancer_lite.runs.paper import load_table
from ancer_lite.runs.profiles import ImageSetup, get_profile
from ancer_lite.runs.setups import prepare
from ancer_lite.studies import image_study, rancer_study


def test_paper_tables_rescale_the_acr_consistently_with_the_text_ari():
    t1, t2 = rancer_study.paper_tables()
    assert list(t1.index) == ["Fixed σ", "Isotropic DD", "ANCER", "RANCER"]
    assert t1.loc["RANCER", "acr"] == pytest.approx(0.53) and t2.loc["RANCER", "acr_proxy"] == pytest.approx(0.80)
    assert t1.loc["RANCER", "0.25"] == 81 and t2.loc["RANCER", "0.25"] == 82
    ari = load_table("rancer_ari_text").set_index("metric").value
    # the text's ARI is the difference of the (rescaled) ACRs, to the printed precision
    assert ari["ari"] == pytest.approx(t1.loc["RANCER", "acr"] - t1.loc["ANCER", "acr"], abs=0.005)
    assert ari["ari_proxy"] == pytest.approx(t2.loc["RANCER", "acr_proxy"] - t2.loc["ANCER", "acr_proxy"], abs=0.005)


def _results(rancer_radius: float, rancer_proxy: float) -> pd.DataFrame:
    rows = []
    for m, (r, p) in {"fixed": (0.3, 0.3), "isotropic": (0.4, 0.4), "ancer": (0.5, 0.7),
                      "rancer": (rancer_radius, rancer_proxy)}.items():
        for k in range(4):
            rows.append(dict(idx=k, label=1, predict=1 if k < 3 else 0, radius=r, radius_proxy=p, correct=k < 3,
                             method=m))
    return pd.DataFrame(rows)


def test_improvement_is_the_difference_of_average_certified_radii():
    gain = rancer_study.improvement(_results(0.4, 1.1))
    assert gain["ARI"] == pytest.approx(0.75 * (0.4 - 0.5)) and gain["ARI~"] == pytest.approx(0.75 * (1.1 - 0.7))


def test_claims_follow_the_numbers():
    c = rancer_study.claims(_results(0.4, 1.1))
    assert c == {"C7/ARI: RANCER's ACR > ANCER's": False, "C7/ARI~: RANCER's ACR~ > ANCER's": True,
                 "C7/curves: RANCER >= ANCER at every l2 radius": False,
                 "C7/curves: RANCER >= ANCER at every proxy radius": True}
    assert all(rancer_study.claims(_results(0.6, 1.1)).values())


def test_tables_use_rancers_radii():
    t1, t2 = rancer_study.tables(_results(0.6, 1.1))
    assert list(t1.columns) == ["0.25", "0.5", "0.75", "1", "1.25", "1.5", "acr"]
    assert t1.loc["RANCER", "0.5"] == 75.0 and t1.loc["ANCER", "0.75"] == 0.0 and t2.loc["ANCER", "0.5"] == 75.0


def test_select_rancer_returns_the_settings_its_table_marks():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Softplus(), torch.nn.Linear(8, 2))
    x = torch.rand(4, 3)
    y = model(x).argmax(1)
    base = rancer.RancerSettings(iterations=3, samples=8)
    settings, table = selection.select_rancer(model, x, y, np.full(4, 0.2), 0.2, [1.0, 10.0], [0.5, 2.0], base,
                                           n0=20, n=200, alpha=0.01, num_classes=2, widen=0)
    assert table.chosen.sum() == 1
    pick = table[table.chosen].iloc[0]
    assert settings.gamma2 == pick.gamma2 and settings.lr == pytest.approx(pick.lr_relative * 0.2)
    assert set(table.search) == {"lr", "gamma2"}
    lr_rows = table[table.search == "lr"]
    assert settings.lr == pytest.approx(0.2 * lr_rows.loc[lr_rows.objective.idxmax(), "lr_relative"])


def test_acr_values_read_the_two_tables():
    t1, t2 = rancer_study.tables(_results(0.4, 1.1))
    v = rancer_study.acr_values(t1, t2)
    assert v["RANCER ACR"] == pytest.approx(0.75 * 0.4) and v["RANCER ACR~"] == pytest.approx(0.75 * 1.1)
    assert v["ANCER ACR"] == pytest.approx(0.75 * 0.5) and v["ANCER ACR~"] == pytest.approx(0.75 * 0.7)


def test_first_axis_angle_is_the_axis_direction_modulo_180():
    for deg in (0.0, 30.0, 135.0, 179.0):
        a = np.radians(deg)
        u = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        assert rancer_study.first_axis_angle(u) == pytest.approx(deg)
        assert rancer_study.first_axis_angle(-u) == pytest.approx(deg)  # an axis has no sign
    with pytest.raises(ValueError, match="rotation must be a 2 x 2 matrix"):
        rancer_study.first_axis_angle(np.eye(3))


def _region(method: str, proxy: float, angle: float | None = None):
    from ancer_lite.core.regions import CertifiedRegion
    rot = None
    if angle is not None:
        a = np.radians(angle)
        rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return CertifiedRegion(np.zeros(2), np.full(2, proxy), 1.0, "l2", 1, rot)  # radius = proxy radius = proxy


def test_toy_claims_compare_the_axis_with_the_stripes_normal_and_the_radii():
    regions = {"isotropic": _region("isotropic", 0.10), "ancer": _region("ancer", 0.11),
               "rancer": _region("rancer", 0.20, angle=136.0)}
    assert all(rancer_study.toy_claims(regions, 45.0).values())
    # the normal of a 45° stripe is 135°; an axis 3° past 180° from it is still within 5°
    regions["rancer"] = _region("rancer", 0.20, angle=-47.0)
    assert all(rancer_study.toy_claims(regions, 45.0).values())
    regions["rancer"] = _region("rancer", 0.15, angle=45.0)
    c = list(rancer_study.toy_claims(regions, 45.0).values())
    assert c == [False, False, True]


def test_quadratic_error_is_relative_to_the_range_of_the_true_loss():
    g = np.linspace(-1, 1, 21)
    a, b = np.meshgrid(g, g)
    true = a ** 2 + b ** 2
    quad = true + 0.1 * np.abs(a) ** 3
    e = rancer_study.quadratic_error(a, b, true, quad, near=0.5)
    assert e["window"] == pytest.approx(0.1 / 2.0)
    assert e["near"] == pytest.approx(0.1 * 0.5 ** 3 / (2 * 0.5 ** 2))
    with pytest.raises(ValueError, match="one shape"):
        rancer_study.quadratic_error(a, b, true, quad[:3], near=0.5)
    with pytest.raises(ValueError, match="leaves no grid point"):
        rancer_study.quadratic_error(a + 5, b, true, quad, near=0.5)


def test_cost_ratios_divide_by_each_columns_ancer():
    t = pd.DataFrame({"total": [1.0, 2.0, 3.0, 10.0, 20.0, 50.0]},
                     index=pd.MultiIndex.from_product([["a", "b"], ["fixed", "ancer", "rancer"]],
                                                      names=["column", "method"]))
    r = rancer_study.cost_ratios(t)
    assert r["a", "rancer"] == pytest.approx(1.5) and r["b", "rancer"] == pytest.approx(2.5)
    assert r["b", "ancer"] == 1.0
    assert rancer_study.cost_ratios(t.loc["a"])["fixed"] == pytest.approx(0.5)


def test_paper_runtime_is_table3_with_our_names():
    p = rancer_study.paper_runtime()
    assert list(p.index) == ["Fixed σ", "Isotropic DD", "ANCER", "RANCER"]
    assert p["RANCER"] / p["ANCER"] > 1  # the paper: RANCER is the slowest


def test_sensitivity_table_and_claims():
    def rows(radius: float, proxy: float) -> pd.DataFrame:
        return pd.DataFrame(dict(radius=[radius, radius], radius_proxy=[proxy, proxy], correct=[True, False],
                                 min_sigma=[0.1, 0.3]))
    t = rancer_study.sensitivity_table({"eigen_fixed": rows(0.0, 0.01), "eigen_init": rows(0.2, 1.0),
                                        "iso": rows(0.3, 1.5)})
    assert t.loc["iso", "accuracy"] == 50.0 and t.loc["iso", "acr_proxy"] == pytest.approx(0.75)
    assert t.loc["eigen_init", "median_min_sigma"] == pytest.approx(0.2)
    assert all(rancer_study.sensitivity_claims(t).values())
    t.loc["eigen_init", "acr_proxy"] = 2.0
    assert list(rancer_study.sensitivity_claims(t).values()) == [False, True]


def test_with_paper_stacks_our_columns_and_the_papers_rows():
    t1, _ = rancer_study.tables(_results(0.6, 1.1))
    paper1, _ = rancer_study.paper_tables()
    out = rancer_study.with_paper({"digits_softplus": t1}, paper1, {"digits_softplus": "8×8 digits"})
    assert list(out.index.names) == ["data", "method"]
    assert out.loc[("8×8 digits", "RANCER"), "0.5"] == 75.0
    assert out.loc[("the paper: CIFAR-10, ResNet18", "RANCER"), "acr"] == pytest.approx(0.53)


def test_logged_certify_seconds_sums_the_time_column():
    class Col:  # the two attributes the function reads
        results = pd.DataFrame(dict(time=[0.5, 1.25, 2.0]))

        class setup:
            name = "digits_softplus"
    assert rancer_study.logged_certify_seconds(Col()) == pytest.approx(3.75)
    Col.results = pd.DataFrame(dict(radius=[1.0]))
    with pytest.raises(ValueError, match="no 'time' column"):
        rancer_study.logged_certify_seconds(Col())


def test_study_steps_say_whether_they_were_computed_or_reused(tmp_path):
    from ancer_lite.runs.profiles import get_profile

    study = rancer_study.Study(get_profile("quick"), tmp_path, seed=0)

    def compute():
        out = tmp_path / "digits_softplus" / "result.tsv"
        if not out.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("a\n1\n")
        return out.read_text()

    assert study.step("digits: a cached step", compute, "digits_softplus", "step") == "a\n1\n"
    assert study.step("digits: a cached step", compute, "digits_softplus", "step") == "a\n1\n"
    first, second = study.timings
    assert not first.reused and second.reused
    assert second.computed_seconds == pytest.approx(first.seconds, abs=1e-3)
    assert rancer_study.timing_sidecar(tmp_path, "digits_softplus", "step").exists()


def test_figure2_findings_read_the_axes_and_the_scales():
    """RANCER §4.2's sentence on a stripe at 45°: v1 along the stripe with the larger scale is the paper's reading;
    v1 across it with the smaller scale (what the 2D study finds) fails both parts but keeps the axes."""
    def region(v1_deg: float, scales: tuple[float, float]) -> CertifiedRegion:
        a = np.radians(v1_deg)
        u = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        return CertifiedRegion(np.zeros(2), np.array(scales), 1.0, "l2", 0, rotation=u)

    paper = list(rancer_study.figure2_findings(region(45.0, (0.3, 0.1)), 45.0).values())
    found = list(rancer_study.figure2_findings(region(135.0, (0.03, 0.13)), 45.0).values())
    off_axes = list(rancer_study.figure2_findings(region(20.0, (0.3, 0.1)), 45.0).values())
    assert paper == [True, True, True] and found == [False, False, True] and off_axes == [False, True, False]
    with pytest.raises(ValueError, match="rotated 2D region"):
        rancer_study.figure2_findings(CertifiedRegion(np.zeros(2), np.ones(2), 1.0, "l2", 0), 45.0)


def test_ablation_separates_the_rotation_from_the_objective():
    """Four arms on the same inputs: each effect is one arm minus another (paired, exact point estimates), the table's
    ACR and ACR~ are the arms' own, and arms over other inputs are refused."""
    def arm(radius, proxy, correct, method=None):
        return pd.DataFrame(dict(idx=[3, 4, 5], radius=radius, radius_proxy=proxy, correct=correct,
                                 **({"method": method} if method else {})))

    results = pd.concat([arm([0.2, 0.2, 0.0], [0.3, 0.3, 0.0], [True, True, False], "ancer"),
                         arm([0.1, 0.3, 0.0], [0.6, 0.9, 0.0], [True, True, False], "rancer")])
    arms = {"ancer": arm([0.2, 0.3, 0.0], [0.5, 0.6, 0.0], [True, True, False]),
            "rancer": arm([0.1, 0.1, 0.0], [0.4, 0.4, 0.0], [True, True, False])}
    table, effects = rancer_study.ablation(results, arms, "toy")
    assert table.loc["RANCER", "acr_proxy"] == pytest.approx(0.5) and table.loc["ANCER", "acr"] == pytest.approx(0.4 / 3)
    got = {(r.claim, r.measure): r.effect.estimate for r in effects.itertuples()}
    assert got["C7/rotation", "ACR~"] == pytest.approx((1.1 - 0.6) / 3)        # ANCER's objective, rotated - not
    assert got["C7/objective", "ACR~"] == pytest.approx((1.5 - 1.1) / 3)       # both rotated, RANCER's - ANCER's
    assert got["C7/objective (axis-aligned)", "ACR"] == pytest.approx((0.2 - 0.4) / 3)
    assert len(effects) == 2 * len(rancer_study.ABLATION_EFFECTS)
    with pytest.raises(ValueError, match="same test inputs"):
        rancer_study.ablation(results, {**arms, "rancer": arms["rancer"].assign(idx=[3, 5, 4])}, "toy")


def test_ablation_arms_end_to_end(tmp_path):
    """The two new arms on a tiny softplus column: one row per test input in test order, through RANCER's rotated
    CERTIFY and memory (the memory only shrinks a region), cached (a second call reads the same rows)."""
    setup = ImageSetup("digits_softplus", "digits", "CIFAR-10", model="mlp_softplus", hidden=(8,), epochs=1,
                       sigmas_l2=(0.25,), sigmas_l1=(), num_test=10, num_val=4, n=200, val_n=100,
                       iso_lr_grid=(0.01,), ancer_lr_grid=(0.01,), iterations=2, samples=4)
    profile = dataclasses.replace(get_profile("quick"), name="t", n0=10, batch_size=100, images=(setup,))
    work = prepare(setup, 0, data_dir=tmp_path, cache="t")
    chosen, _ = image_study.choose_step_sizes(work, setup, profile, tmp_path / "results")
    res, _, _ = image_study.certify_setup(work, setup, profile, chosen, tmp_path / "results")
    col = image_study.Column(setup, work, chosen, res, tmp_path / "results")
    settings = rancer.RancerSettings(iterations=2, samples=4, lr=0.01)
    for objective in ("ancer", "rancer"):
        rows = rancer_study.ablation_arm(col, profile, settings, tmp_path / "results", objective)
        assert list(rows.idx) == work.test.index.tolist() and len(rows) == 10
        folder = rancer_study.ablation_folder(col, profile, settings, tmp_path / "results", objective)
        before = read_log(folder / "certify.tsv").set_index("idx").loc[rows.idx.tolist()]
        assert (rows.radius.to_numpy() <= before.radius.to_numpy() + 1e-12).all()
        again = rancer_study.ablation_arm(col, profile, settings, tmp_path / "results", objective)
        pd.testing.assert_frame_equal(rows, again)
    with pytest.raises(ValueError, match="objective"):
        rancer_study.ablation_arm(col, profile, settings, tmp_path / "results", "both")
