"""rancer_2d.py (RANCER Figure 1 / Figure 2 in 2D): the stripe data is rotated as stated, the toy model is
deterministic, the second-order model of the loss is exact at the centre with a higher-order error, RANCER's
rotated region beats ANCER's axis-aligned one on a 45° stripe (and not on an axis-aligned stripe), and
every certified region keeps its prediction when the smoothed classifier is re-estimated inside it."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from ancer_lite.core.names import ABSTAIN
from ancer_lite.core.regions import CertifiedRegion
from ancer_lite.core.rotated import contains
from ancer_lite.methods.registry import AncerSettings, IsotropicSettings
from ancer_lite.models.train import accuracy, model_fingerprint
from ancer_lite.studies import rancer_2d as R


def _angle_mod_180(v: np.ndarray) -> float:
    return float(np.degrees(np.arctan2(v[1], v[0])) % 180.0)


def _angle_diff(a: float, b: float) -> float:
    """Difference of two line orientations in degrees, in [0, 90]."""
    d = abs(a - b) % 180.0
    return min(d, 180.0 - d)


def _logistic_probe(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 50) -> np.ndarray:
    """Weight vector of an L2-regularized logistic regression (with bias), fitted by Newton's method."""
    xb = np.hstack([x - x.mean(axis=0), np.ones((len(x), 1))])
    w = np.zeros(3)
    reg = l2 * np.diag([1.0, 1.0, 0.0]) * len(x)
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-xb @ w))
        grad = xb.T @ (p - y) + reg @ w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + reg + 1e-9 * np.eye(3)
        w -= np.linalg.solve(hess, grad)
    return w[:2]


@pytest.fixture(scope="module")
def toy():
    x, y = R.diagonal_dataset(2000, seed=0)
    model = R.train_toy_model(x, y, seed=0)
    x0 = R.default_point()
    return dict(x=x, y=y, model=model, x0=x0, regions=R.three_regions(model, x0))


@pytest.mark.parametrize("angle", [45.0, 30.0, 120.0])
def test_dataset_stripe_is_rotated_by_the_stated_angle(angle):
    x, y = R.diagonal_dataset(3000, seed=1, angle=angle)
    assert x.dtype == torch.float32 and y.dtype == torch.int64 and x.shape == (3000, 2)
    assert float(x.min()) >= 0.0 and float(x.max()) <= 1.0 and set(y.tolist()) == {0, 1}
    xn, yn = x.double().numpy(), y.numpy()
    # the class-1 stripe's principal axis (data-driven) is along `angle`
    inner = xn[yn == 1]
    _, vecs = np.linalg.eigh(np.cov(inner.T))
    along, normal = vecs[:, 1], vecs[:, 0]
    assert _angle_diff(_angle_mod_180(along), angle) < 3.0
    # a linear probe separating the stripe from the class-0 points on one side of it has its weight
    # vector along the stripe's normal, angle + 90°
    side = ((xn - inner.mean(axis=0)) @ normal > 0) & (yn == 0)
    keep = (yn == 1) | side
    w = _logistic_probe(xn[keep], yn[keep].astype(float))
    assert _angle_diff(_angle_mod_180(w), angle + 90.0) < 3.0
    # same seed, same data; the margin around both stripe boundaries is empty
    x2, y2 = R.diagonal_dataset(3000, seed=1, angle=angle)
    assert torch.equal(x, x2) and torch.equal(y, y2)
    dist = np.abs((xn - 0.5) @ np.array([-np.sin(np.radians(angle)), np.cos(np.radians(angle))]))
    assert np.abs(dist - R.STRIPE_HALF_WIDTH).min() >= R.STRIPE_MARGIN / 2 - 1e-6


def test_toy_model_is_deterministic_and_accurate(toy):
    x, y = toy["x"][:400], toy["y"][:400]
    a = R.train_toy_model(x, y, seed=3, epochs=3)
    b = R.train_toy_model(x, y, seed=3, epochs=3)
    c = R.train_toy_model(x, y, seed=4, epochs=3)
    assert model_fingerprint(a) == model_fingerprint(b) != model_fingerprint(c)
    assert any(isinstance(mod, torch.nn.Softplus) for mod in toy["model"].modules())
    xt, yt = R.diagonal_dataset(1000, seed=7)
    assert accuracy(toy["model"], xt, yt) > 0.99


@pytest.mark.parametrize("point", ["centre", "off_midline"])
def test_quadratic_model_is_exact_at_the_centre_with_a_higher_order_error(toy, point):
    x0 = toy["x0"] if point == "centre" else R.validation_points()[2]
    u, _ = R.hessian_rotation(toy["model"], x0)
    errors = []
    for hw in (0.05, 0.025, 0.0125):
        aa, bb, true, quad = R.loss_quadratic_grid(toy["model"], x0, 1, u[:, 0], u[:, 1], hw, resolution=21)
        assert aa.shape == bb.shape == true.shape == quad.shape == (21, 21)
        assert aa[10, 10] == 0.0 and bb[10, 10] == 0.0
        assert abs(true[10, 10] - quad[10, 10]) < 1e-12
        errors.append(np.abs(true - quad).max())
    # Taylor's remainder is O(r^3): halving the window divides the error by ~8 (>= 4 = faster than O(r^2))
    assert errors[0] / errors[1] >= 4.0 and errors[1] / errors[2] >= 4.0, errors


def test_rancer_region_is_rotated_and_larger_than_ancer(toy):
    regs = toy["regions"]
    assert [r.prediction for r in regs.values()] == [1, 1, 1]
    iso, ani, rot = regs["isotropic"], regs["ancer"], regs["rancer"]
    assert iso.rotation is None and ani.rotation is None
    # RANCER Figure 1: on a 45° stripe ANCER's axis-aligned ellipse is no better than the ball ...
    assert ani.radius_proxy < 1.15 * iso.radius_proxy
    # ... while RANCER's rotated ellipse follows the stripe
    assert rot.radius_proxy > 1.5 * ani.radius_proxy
    u = rot.rotation
    assert np.abs(u @ u.T - np.eye(2)).max() < 1e-12
    assert _angle_diff(_angle_mod_180(u[:, 0]), 135.0) < 5.0  # v1 = the stripe's normal
    assert abs(np.sin(2 * np.arctan2(u[1, 0], u[0, 0]))) > 0.9  # far from axis-aligned
    assert rot.scales[1] > 2.0 * rot.scales[0]  # longer along the stripe (v2) than across (v1)
    for r in (iso, ani):
        np.testing.assert_allclose(r.semi_axes, r.gap * r.scales)
        np.testing.assert_allclose(r.radius, r.semi_axes.min(), rtol=1e-6)
    np.testing.assert_allclose(rot.semi_axes, rot.gap * rot.scales * (1 - R.ROTATION_MARGIN))
    # RANCER's margin is part of its record: the proxy radius is that of the shrunk ellipse
    np.testing.assert_allclose(rot.radius_proxy, rot.gap * np.sqrt(rot.scales.prod()) * (1 - R.ROTATION_MARGIN),
                               rtol=1e-12)


def test_axis_aligned_stripe_control_ancer_catches_up():
    """At 0° the stripe is axis-aligned and ANCER's ellipse can follow it: the gain above is the rotation's."""
    x, y = R.diagonal_dataset(2000, seed=0, angle=0.0)
    model = R.train_toy_model(x, y, seed=0)
    regs = R.three_regions(model, R.default_point(0.0))
    assert regs["ancer"].radius_proxy > 1.5 * regs["isotropic"].radius_proxy
    assert regs["ancer"].radius_proxy > 0.9 * regs["rancer"].radius_proxy


def test_every_region_keeps_its_prediction(toy):
    for region in toy["regions"].values():
        pts = R.region_points(region, 11, 32)
        rot = np.eye(2) if region.rotation is None else region.rotation
        assert contains(pts, region.center, rot, region.semi_axes * (1 + 1e-9)).all()
        assert R.region_check(toy["model"], region, points_per_axis=11, n_check=2000, seed=1) == 1.0
    # the check has power: RANCER's ellipse stretched 1.5x across the stripe, or drawn without its rotation,
    # reaches the other class and fails it
    rot = toy["regions"]["rancer"]
    wide = dataclasses.replace(rot, scales=rot.scales * np.array([1.5, 1.0]))
    assert R.region_check(toy["model"], wide, points_per_axis=11, n_check=2000, seed=1) < 0.9
    unrotated = dataclasses.replace(rot, rotation=None)
    assert R.region_check(toy["model"], unrotated, points_per_axis=11, n_check=2000, seed=1) < 0.9


# ----------------------------------------------------------------------------------------------------------------
# certify_methods: one implementation for RANCER Figure 1 (three_regions) and ANCER Figure 1 (notebook 02)
# ----------------------------------------------------------------------------------------------------------------


def test_certify_methods_subset_gives_the_same_regions_as_three_regions(toy):
    """A method's region does not depend on which other methods are asked for (its own certification key), so
    Isotropic DD and ANCER alone reproduce three_regions' regions exactly."""
    two = R.certify_methods(toy["model"], toy["x0"], ("isotropic", "ancer"))
    assert list(two) == ["isotropic", "ancer"]
    for method, region in two.items():
        ref = toy["regions"][method]
        assert region.prediction == ref.prediction and region.gap == ref.gap and region.noise == "gaussian"
        np.testing.assert_array_equal(region.scales, ref.scales)
        np.testing.assert_array_equal(region.semi_axes, ref.semi_axes)


def test_region_log_area_closed_forms():
    c = np.zeros(2)
    ellipse = CertifiedRegion(c, np.array([0.5, 0.25]), 2.0, "l2", 1)
    rhombus = dataclasses.replace(ellipse, norm="l1")
    assert ellipse.noise == "gaussian" and rhombus.noise == "uniform"
    np.testing.assert_array_equal(ellipse.semi_axes, [1.0, 0.5])
    assert np.exp(ellipse.log_volume) == pytest.approx(np.pi * 1.0 * 0.5, rel=1e-12)     # π a b
    assert np.exp(rhombus.log_volume) == pytest.approx(2 * 1.0 * 0.5, rel=1e-12)         # 2 a b (Prop. 4, n = 2)
    assert dataclasses.replace(ellipse, prediction=ABSTAIN, gap=0.0).log_volume == -np.inf


@pytest.fixture(scope="module")
def uniform_regions(toy):
    small = dict(iterations=20, lr=0.01, samples=128)
    return R.certify_methods(toy["model"], toy["x0"], ("isotropic", "ancer"), noise="uniform", sigma0=0.03,
                             iso_settings=IsotropicSettings(**small), ancer_settings=AncerSettings(**small, kappa=2.0),
                             n=5000)


def test_certify_methods_with_uniform_noise_gives_sound_cross_polytopes(toy, uniform_regions):
    for region in uniform_regions.values():
        assert region.noise == "uniform" and region.norm == "l1" and region.prediction == 1
        np.testing.assert_allclose(region.semi_axes, region.gap * region.scales)
        # Corollary 2: the gap is p_A - p_B <= 1 and the enclosed l1 radius is min_i λ_i gap
        assert 0 < region.gap <= 1
        assert region.radius == pytest.approx(region.semi_axes.min(), rel=1e-6)
        pts, bad, freq = R.region_verification(toy["model"], region, points_per_axis=9, n_check=2000, seed=1)
        assert bad == 0 and pts > 32 and 0.5 < freq <= 1.0


def test_region_points_fill_a_cross_polytope_and_reach_its_vertices():
    region = CertifiedRegion(np.array([0.5, 0.5]), np.array([0.1, 0.05]), 0.8, "l1", 1)
    pts = R.region_points(region, 11, 32)
    z = (pts - region.center) / region.semi_axes
    assert (np.abs(z).sum(axis=1) <= 1 + 1e-12).all()
    on_edge = np.isclose(np.abs(z).sum(axis=1), 1 - 1e-6, rtol=0, atol=1e-9)
    assert on_edge.sum() == 32                                               # the boundary points, pulled in
    for v in ([1, 0], [0, 1], [-1, 0], [0, -1]):
        assert np.isclose(z[on_edge], (1 - 1e-6) * np.array(v), rtol=0, atol=1e-9).all(axis=1).any()


def test_region_verification_counts_what_region_check_measures(toy):
    region = toy["regions"]["rancer"]
    wide = dataclasses.replace(region, scales=region.scales * np.array([1.5, 1.0]))
    pts, bad, freq = R.region_verification(toy["model"], wide, points_per_axis=11, n_check=2000, seed=1)
    assert 1 - bad / pts == pytest.approx(R.region_check(toy["model"], wide, 11, 2000, seed=1), abs=1e-12)
    assert bad > 0 and 0.5 <= freq <= 1.0


def test_certify_methods_rejects_bad_input(toy):
    with pytest.raises(ValueError, match="methods"):
        R.certify_methods(toy["model"], toy["x0"], ("cohen",))
    with pytest.raises(ValueError, match="methods"):
        R.certify_methods(toy["model"], toy["x0"], ())
    with pytest.raises(ValueError, match="RANCER rotates Gaussian noise only"):
        R.certify_methods(toy["model"], toy["x0"], ("isotropic", "rancer"), noise="uniform")
    with pytest.raises(ValueError, match="noise"):
        R.certify_methods(toy["model"], toy["x0"], ("isotropic",), noise="laplace")
