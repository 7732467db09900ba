"""The primer's steps (`studies.primer`, notebook 00) against closed forms: on the half-plane toy p_A = Φ(0.5 / σ)
exactly, so CERTIFY's share must agree with it within a binomial bound and its radius must stay below the exact 0.5;
the bound table is the Clopper-Pearson bound; the N-limit is the bound of N votes out of N."""
import numpy as np
import pytest
import torch
from scipy.stats import binom, norm

from ancer_lite.core.certify import lower_confidence_bound
from ancer_lite.studies import primer as pr

N0, N, ALPHA = 100, 20_000, 0.001


def test_toys_put_the_input_in_class_0_at_the_stated_distances():
    toys = pr.toy_classifiers()
    probes = torch.tensor([[0.0, 0.0], [0.49, 0.0], [0.51, 0.0], [0.0, 1.49], [0.0, 1.51], [-0.31, 0.0]])
    with torch.no_grad():
        got = {k: m(probes).argmax(1).tolist() for k, m in toys.items()}
    assert got["line"] == [0, 0, 1, 0, 0, 0]
    assert got["line and ring"] == [0, 0, 1, 0, 1, 0]
    assert got["corridor"] == [0, 1, 1, 0, 1, 1]


@pytest.mark.parametrize("sigma", [0.2, 0.5])
def test_certify_once_agrees_with_the_half_planes_closed_form(sigma):
    steps = pr.certify_once(pr.toy_classifiers()["line"], pr.X0, sigma, N0, N, ALPHA, seed=3).set_index("step")
    exact = norm.cdf(pr.DISTANCE / sigma)
    k = int(steps.loc["count k", "value"])
    lo, hi = binom.ppf(1e-6, N, exact), binom.ppf(1 - 1e-6, N, exact)  # a 1e-6 two-sided binomial range
    assert steps.loc["class c_A", "value"] == 0 and lo <= k <= hi
    p = float(steps.loc["p_A lower bound", "value"])
    assert p == pytest.approx(float(lower_confidence_bound(k, N, ALPHA)), rel=1e-12)
    assert float(steps.loc["radius σ·gap", "value"]) == pytest.approx(sigma * norm.ppf(p), rel=1e-6)
    assert 0.45 < float(steps.loc["radius σ·gap", "value"]) < pr.DISTANCE
    assert steps.loc["count k", "shown"] == f"{k:,}"


def test_bound_versus_n_is_clopper_pearson_and_abstains_at_one_half():
    t = pr.bound_versus_n(0.9, [10, 1000], ALPHA, 0.25)
    assert list(t.k) == [9, 900]
    assert t["p_A lower bound"].tolist() == pytest.approx([float(lower_confidence_bound(9, 10, ALPHA)),
                                                          float(lower_confidence_bound(900, 1000, ALPHA))])
    assert t.radius.iloc[0] == (0.0 if t["p_A lower bound"].iloc[0] <= 0.5 else pytest.approx(
        0.25 * norm.ppf(t["p_A lower bound"].iloc[0])))
    assert pr.bound_versus_n(0.55, [20], ALPHA, 0.25).radius.iloc[0] == 0.0
    with pytest.raises(ValueError, match="share"):
        pr.bound_versus_n(0.0, [10], ALPHA, 0.25)


def test_radius_versus_sigma_is_limited_by_n_then_by_the_line():
    t = pr.radius_versus_sigma({"line": pr.toy_classifiers()["line"]}, [0.05, 0.3], N0, N, ALPHA)
    limit = norm.ppf(ALPHA ** (1 / N))
    assert t["N's limit"].tolist() == pytest.approx([0.05 * limit, 0.3 * limit])
    assert t.radius.iloc[0] == pytest.approx(0.05 * limit)            # all N votes agree at σ = 0.05
    assert 0.45 < t.radius.iloc[1] < pr.DISTANCE


def test_regions_table_measures_the_ball_and_the_ellipse():
    regions = pr.isotropic_and_anisotropic(pr.toy_classifiers()["corridor"], N0, N, ALPHA)
    t = pr.regions_table(regions).set_index("method")
    for method, r in regions.items():
        assert t.loc[method, "area"] == pytest.approx(np.pi * np.prod(r.semi_axes))
        assert t.loc[method, "ℓ2 radius"] == pytest.approx(min(r.scales) * r.gap)
        assert t.loc[method, "proxy radius"] == pytest.approx(np.exp(np.mean(np.log(r.scales))) * r.gap)
    assert t.loc["isotropic", "σ1"] == t.loc["isotropic", "σ2"]
    assert (t["ℓ2 radius"] < pr.CORRIDOR).all() and t.loc["ancer", "area"] > 2 * t.loc["isotropic", "area"]
