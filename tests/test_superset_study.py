"""Notebook 05's study (ANCER App. A.1-A.2, F, G.3, H, I) and its figures: closed forms and hand-made
cases for the pure parts, and one tiny digits column (trained and certified here) end to end."""
import dataclasses

import numpy as np
import pandas as pd
import pytest

from ancer_lite.core.regions import region_norm
from ancer_lite.report import style
from ancer_lite.runs.paper import load_table
from ancer_lite.runs.profiles import ImageSetup, get_profile
from ancer_lite.runs.setups import prepare
from ancer_lite.studies import image_study
from ancer_lite.studies import superset_figures as figs
from ancer_lite.studies import superset_findings as findings
from ancer_lite.studies import superset_study as study

SETUP = ImageSetup("digits", "digits", "CIFAR-10", hidden=(32,), epochs=8, sigmas_l2=(0.25,), sigmas_l1=(0.5,),
                   num_test=12, num_val=4, n=400, val_n=100, iso_lr_grid=(0.01,), ancer_lr_grid=(0.04,),
                   iterations=3, samples=8)
PROFILE = dataclasses.replace(get_profile("quick"), name="t", n0=20, batch_size=200, images=(SETUP,))


# -- pure parts ---------------------------------------------------------------------------------------
def test_gap_factors_split_the_l2_radius():
    rng = np.random.default_rng(0)
    n = 9
    iso = np.broadcast_to(rng.uniform(0.2, 0.4, (n, 1, 1, 1)), (n, 1, 2, 2)).copy()
    anc = iso * rng.uniform(1.0, 3.0, (n, 1, 2, 2))
    g_iso, g_anc = rng.uniform(0.1, 2.0, n), rng.uniform(0.1, 2.0, n)
    g_iso[2], g_anc[5] = 0.0, np.nan  # abstentions leave the split
    f = study.gap_factors(iso, g_iso, anc, g_anc)
    keep = np.setdiff1d(np.arange(n), [2, 5])
    assert f.inputs == n and len(f.gap_iso) == len(keep)
    # the ℓ2 radii are the products of the factors: σ r for Isotropic DD, min σᵢ r for ANCER
    assert np.allclose(f.sigma_iso * f.gap_iso, iso.reshape(n, -1)[keep, 0] * g_iso[keep])
    assert np.allclose(f.sigma_min_ancer * f.gap_ancer, anc.reshape(n, -1)[keep].min(1) * g_anc[keep])
    assert f.sigma_ratio == pytest.approx(np.median(f.sigma_min_ancer) / np.median(f.sigma_iso))
    assert f.c5 == (f.gap_ratio > max(1.0, f.sigma_ratio))
    with pytest.raises(ValueError, match="isotropic"):
        study.gap_factors(anc, g_iso, anc, g_anc)
    with pytest.raises(ValueError, match="same N"):
        study.gap_factors(iso, g_iso[:-1], anc, g_anc)
    with pytest.raises(ValueError, match="both"):
        study.gap_factors(iso, np.zeros(n), anc, g_anc)


def test_c5_compares_the_gap_with_the_sigma_factor():
    one = np.ones(3)
    assert study.GapFactors(one, one, one, 2 * one, 3).c5            # larger gap, same σ
    assert not study.GapFactors(one, 3 * one, one, 2 * one, 3).c5    # the σ-factor grows more
    assert not study.GapFactors(one, one, one, 0.9 * one, 3).c5      # smaller gap


def test_texture_of_hand_made_maps():
    x = np.zeros((2, 1, 4, 4))
    x[:, :, 1:3, 1:3] = 1.0                        # a 2×2 object on a background at 0
    smooth = np.where(x > 0, 1.0, 2.0)             # σ 2 on the background, 1 on the object
    back, ratio, corr, largest = study.texture(smooth, x)
    assert back == 2.0 and largest == 2.0
    assert ratio == 1.0                            # most adjacent pairs are equal: the median ratio is 1
    checker = np.exp(0.5 * (-1.0) ** np.add.outer(np.arange(4), np.arange(4)))[None, None].repeat(2, 0)
    back, ratio, corr, _ = study.texture(checker, x)
    assert ratio == pytest.approx(np.e) and corr == pytest.approx(-1.0)  # every neighbour e× apart, anti-correlated
    # neither background nor object
    assert np.isnan(study.texture(np.ones((1, 1, 2, 2)), np.full((1, 1, 2, 2), 0.3))[0])
    assert np.isnan(study.texture(np.ones((1, 1, 2, 2)), np.zeros((1, 1, 2, 2)))[2])       # a constant map
    with pytest.raises(ValueError, match="shape"):
        study.texture(np.ones((1, 2, 2)), np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match="> 0"):
        study.texture(np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 2, 2)))


def test_safe_direction_is_on_the_ellipsoid_and_follows_sigma_squared():
    s = np.exp(np.random.default_rng(1).normal(size=(1, 4, 4)))
    d = study.safe_direction(s, 0.99, seed=3)
    assert d.shape == s.shape
    assert region_norm(d.reshape(-1), s.reshape(-1), "l2") == pytest.approx(0.99)
    ratio = np.abs(d) / s ** 2
    assert np.allclose(ratio, ratio.flat[0])  # |δᵢ| ∝ sᵢ²
    assert np.allclose(study.safe_direction(s, 0.5, seed=3), 0.5 / 0.99 * d)
    for bad in (np.zeros(3), np.array([1.0, np.inf])):
        with pytest.raises(ValueError, match="scales"):
            study.safe_direction(bad)
    with pytest.raises(ValueError, match="level"):
        study.safe_direction(s, 0.0)


def _results(radii: dict[str, list[float]], proxy_factor: float) -> pd.DataFrame:
    frames = [pd.DataFrame(dict(norm="l2", sigma=0.25, idx=np.arange(len(r)), method=m, radius=r,
                                radius_proxy=np.asarray(r) * (proxy_factor if m == "ancer" else 1.0), correct=True))
              for m, r in radii.items()]
    return pd.concat(frames, ignore_index=True)


def test_pooled_shares_match_superset_table():
    res = _results({"fixed": [0.1, 0.5, 0.0, 0.3], "isotropic": [0.2, 0.1, 0.0, 0.3], "ancer": [0.3, 0.2, 0.0, 0.1]}, 4.0)
    cols = {"a": image_study.Column(SETUP, None, {}, res, None)}
    t = study.shares(cols)
    assert set(t.certificate) == {"ℓp", "proxy"} and set(t.sigma.astype(str)) == {"0.25", "all"}
    p = study.pooled_shares(t).loc[("a", "l2")]
    assert p["lp"] == pytest.approx(50.0)            # inputs 0 and the 0-0 tie 2
    assert p["lp_without_ties"] == pytest.approx(100 / 3)
    assert p["proxy"] == pytest.approx(100.0) and p["n_ties_lp"] == 1
    with pytest.raises(ValueError, match="pooled"):
        study.pooled_shares(t[t.sigma.astype(str) != "all"])


def test_paper_tables_are_the_transcribed_ones():
    p = study.paper_shares()
    raw = pd.concat([load_table("ancer_table4"), load_table("ancer_table5")])
    assert len(p) == raw.groupby(["dataset", "model"]).ngroups
    assert p.loc[("CIFAR-10", "MACER", "l2"), "lp"] == raw[(raw.model == "MACER") & (raw.metric == "superset_lp_best")].value.item()
    assert p["lp"].min() == raw[raw.metric == "superset_lp_best"].value.min()
    for norm, model in (("l2", "COHEN"), ("l1", "RS4A")):  # the rows notebook 03 compares with
        value, row = study.paper_share("ImageNet", norm, paper=p)
        assert row == f"ImageNet {model}" and value == p.loc[("ImageNet", model, norm), "lp"]
    with pytest.raises(ValueError, match="certificate"):
        study.paper_share("ImageNet", "l2", "area")
    with pytest.raises(ValueError, match="no row"):
        study.paper_share("MNIST", "l2")
    t6 = study.paper_table6()
    raw6 = load_table("ancer_table6")
    assert list(t6.index) == ["Fixed σ", "Isotropic DD", "ANCER", "Average Σ"]
    assert t6.loc["Average Σ", "acr_proxy"] == raw6[(raw6.method == "Average Sigma") & (raw6.metric == "acr_proxy")].value.item()
    assert t6.loc["ANCER", "0.5"] == raw6[(raw6.method == "ANCER") & (raw6.radius == 0.5)].value.item()
    assert list(t6.columns)[-2:] == ["acr", "acr_proxy"]


# -- one tiny column end to end -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def column(tmp_path_factory):
    root = tmp_path_factory.mktemp("superset")
    work = prepare(SETUP, 0, data_dir=root, cache="t")
    chosen, _ = image_study.choose_step_sizes(work, SETUP, PROFILE, root / "results")
    res, _, _ = image_study.certify_setup(work, SETUP, PROFILE, chosen, root / "results")
    return image_study.Column(SETUP, work, chosen, res, root / "results"), root


def test_table6_adds_the_average_sigma_rows(column):
    col, _ = column
    t, timing = study.table6({"digits": col}, PROFILE)
    assert len(timing) == 4 and not timing.reused.any() and (timing.computed_seconds > 0).all()
    again, timing = study.table6({"digits": col}, PROFILE)  # read back from the kept certificates
    assert timing.reused.all() and again.equals(t)
    block = study.table6_rows(t, "digits", "l1")
    assert list(block.columns) == [f"{r:g}" for r in image_study.PAPER_RADII["CIFAR-10"]["l1"]] + ["acr", "acr_proxy"]
    with pytest.raises(ValueError, match="no rows"):
        study.table6_rows(t, "mnist", "l2")
    assert set(zip(t.norm, t.sigma)) == {("l2", 0.25), ("l1", 0.5)}
    assert list(t[t.norm == "l2"].method) == ["Fixed σ", "Isotropic DD", "ANCER", "Average Σ (mean)", "Average Σ (rms)"]
    acc = t[[f"{r:g}" for r in image_study.PAPER_RADII["CIFAR-10"]["l2"]]][t.norm == "l2"].to_numpy()
    assert ((0 <= acc) & (acc <= 100)).all() and (np.diff(acc, axis=1) <= 0).all()  # decreasing in the radius
    # a constant Σ certifies with proxy radius = geometric-mean scale × gap >= min scale × gap = ℓ2 radius
    avg = t[t.method.str.startswith("Average")]
    assert (avg.acr_proxy >= avg.acr - 1e-12).all()


def test_figures_of_a_tiny_column(column):
    col, root = column
    factors = {"digits": study.column_gap_factors(col)}
    spread = study.spreads({"digits": col}, sigma=0.25)
    assert (spread["digits"] >= 1).all() and len(spread["digits"]) == SETUP.num_test
    textures = study.sigma_textures({"digits": col}, PROFILE)
    assert [t.role for t in textures] == ["chosen"]  # the grid's largest step has no run here (no sensitivity study)
    assert textures[0].largest == pytest.approx(float(col.thetas("l2", 0.25, "ancer").max()))
    maps = study.sigma_maps(col, picks=2)
    assert maps.x.shape == maps.sigma_ancer.shape == (2, 8, 8) and maps.sigma_iso.shape == (2,)
    assert (maps.sigma_ancer >= maps.sigma_iso[:, None, None] * (1 - 1e-5)).all()  # ANCER's σ ≥ the isotropic start
    with pytest.raises(ValueError, match="picks"):
        study.sigma_maps(col, picks=0)
    safe = study.safe_perturbation(col, PROFILE, samples=2000)
    assert safe.inside and safe.region_norm == pytest.approx(study.SAFE_LEVEL)
    assert safe.outside == (safe.norm_delta > safe.iso_radius)
    land = study.hessian_landscape(col, PROFILE, resolution=21, data_dir=root)
    assert land.rank_relu <= land.num_classes - 1 < land.rank_smooth
    assert [p.name for p in land.planes] == ["(ν1, ν2)", "(ν1, νn)"] and land.planes[0].f.shape == (21, 21)
    assert np.all(np.diff(np.abs(land.eigenvalues)) <= 0)  # by |λ|, as ANCER App. A.1 orders them
    domain = findings.domain_check(safe.x, findings.perturbation_semi_axes(col, safe), safe.iso_radius)
    assert domain.pixels == 64 and domain.region_norm <= study.SAFE_LEVEL + 1e-9
    small = study.small_perturbation(col, safe, PROFILE, samples=2000)
    assert small.test_index == safe.test_index and small.norm_inf <= small.cap * (1 + 1e-9)
    assert small.region_norm <= study.SAFE_LEVEL + 1e-9 and small.iso_radius == safe.iso_radius
    assert (small.x + small.delta).min() >= -1e-9 and (small.x + small.delta).max() <= 1 + 1e-9
    assert small.holds == (small.norm_delta > small.iso_radius and small.prediction == small.certified)
    for fig in (figs.landscape_figure(land), figs.perturbation_figure(safe), figs.perturbation_figure(safe, domain=domain),
                figs.small_perturbation_figure(small),
                figs.gap_factor_figure(factors, 0.25), figs.sigma_map_figure([maps, maps], 0.25),
                figs.anisotropy_figure(spread, 0.25)):
        assert style.smallest_font(fig) >= style.MIN_FONT
        assert "8×8 digits" in fig.get_supxlabel()
        assert fig.get_suptitle().startswith("ANCER Figure ") and " on 8×8 digits" in fig.get_suptitle()
        figs.plt.close(fig)


def test_domain_margins_start_from_notebook_03s_c3_margin(column):
    col, _ = column
    margins = study.domain_margins({"digits": col})
    assert [(m.column, m.norm) for m in margins] == [("digits", "l2"), ("digits", "l1")]
    for m in margins:
        # the ACR~ margin is notebook 03's (best over σ of each method)
        assert m.margin == pytest.approx(image_study.proxy_margin(image_study.best_table(col.results, SETUP, m.norm)))
        assert np.isfinite(m.in_range) and np.isfinite(m.linf)
    # a column whose every region is within the pixel range: the capped measure is the ACR~ itself
    wide = dataclasses.replace(col, results=col.results.assign(radius_proxy=col.results.radius_proxy * 1e-3))
    for m, w in zip(margins, study.domain_margins({"digits": wide})):
        assert w.in_range == pytest.approx(w.margin) and w.margin == pytest.approx(m.margin)


def test_figure_names_and_colour_bars(column):
    col, _ = column
    assert figs.display_name("mnist_softplus") == "MNIST-5k (softplus CNN)"
    assert figs.data_column("cifar10_softplus") == "cifar10"
    # a softplus twin stands in for what its column stands in for (notebook 03: MNIST for ImageNet)
    assert figs.stands_for(["mnist_softplus"]) == {"mnist_softplus": "ImageNet"}
    assert figs.stands_for(["digits_softplus", "digits_cnn", "mnist"]) == {}
    with pytest.raises(ValueError, match="STAND_INS"):
        figs.data_column("nothing")
    fig = figs.sigma_map_figure([study.sigma_maps(col, picks=3)], 0.25)
    labels = [a.get_ylabel() for a in fig.findobj(figs.plt.Axes)]
    # each row's colour bar names the value it encodes
    assert r"$\sigma_i$ (ANCER, log)" in labels and r"$\sigma$ (Isotropic DD)" in labels
    figs.plt.close(fig)


def test_claim_effects_flips_and_the_extra_iterations_control(column):
    """Issue "Claims" on the tiny column: the effects' estimates are the point estimates of the tables, the
    abstention counts are CERTIFY's, and the App. G.3 control certifies a run of its own with ANCER's iterations."""
    col, _ = column
    cols = {"digits": col}
    study.table6(cols, PROFILE)
    eff = study.claim_effects(cols, PROFILE)
    assert set(eff.claim) == set(study.EFFECT_CLAIMS)
    pooled = study.pooled_shares(study.shares(cols))
    for r in eff[eff.claim == "C4/proxy"].itertuples():
        assert r.effect.estimate == pytest.approx(pooled.loc[("digits", r.norm), "proxy"] / 100 - 0.9)
    c5 = eff[eff.claim == "C5"].iloc[0]
    g = study.column_gap_factors(col, c5.sigma)
    assert c5.effect.estimate == pytest.approx(g.gap_ratio - max(1.0, g.sigma_ratio))

    flips = study.abstention_flips(col, "l2")
    certified = {m: col.certified("l2", 0.25, m) for m in ("isotropic", "ancer")}
    assert flips.abstain_isotropic.iloc[0] == (certified["isotropic"].predict == -1).sum()
    assert flips.flips.iloc[0] == ((certified["isotropic"].predict == -1) & (certified["ancer"].predict != -1)).sum()
    assert flips.acr_gain.iloc[0] == pytest.approx(
        (certified["ancer"].radius * certified["ancer"].correct).mean()
        - (certified["isotropic"].radius * certified["isotropic"].correct).mean())

    control = study.extra_iterations_effects(cols, PROFILE, workers=1)
    assert list(control.sigma.unique()) == [0.25] and set(control.claim) == {"C2/control", "extra iterations"}
    extra = study.extra_iterations_run(col, PROFILE, "l2", 0.25)  # read back from its own folder
    assert len(extra) == SETUP.num_test
    row = control[control.claim == "C2/control"].iloc[0]
    assert row.acr_iso_extra == pytest.approx((extra.radius * extra.correct).mean())
    assert row.effect.estimate == pytest.approx(row.acr_ancer - row.acr_iso_extra)
