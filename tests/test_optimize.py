"""Isotropic DD and ANCER optimization (ANCER §6, App. C, Listing 1) on base classifiers whose
smoothed behaviour is known in closed form."""
import math

import numpy as np
import pytest
import torch
from scipy.stats import norm as normal

from ancer_lite import Smooth
from ancer_lite.methods.optimize import optimize_ancer, optimize_isotropic, proxy_gap, smoothed_probabilities


class Linear2(torch.nn.Module):
    """Two-class linear classifier: logits [0, k (w.x + b)]; k large makes it a hard classifier."""

    def __init__(self, w, b, k=1.0):
        super().__init__()
        self.w = torch.as_tensor(w, dtype=torch.float32)
        self.b, self.k = float(b), float(k)

    def forward(self, x):
        z = self.k * (x.reshape(x.shape[0], -1) @ self.w + self.b)
        return torch.stack([torch.zeros_like(z), z], dim=1)


def test_proxy_gap_matches_corollaries():
    """Corollary 1: (Φ^-1(p1) - Φ^-1(p2)) / 2; Corollary 2: p1 - p2, for the top two probabilities."""
    probs = torch.tensor([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]], dtype=torch.float64)
    want_l2 = 0.5 * (normal.ppf([0.7, 0.5]) - normal.ppf([0.2, 0.3]))
    assert np.allclose(proxy_gap(probs, "gaussian").numpy(), want_l2, atol=1e-12)
    assert np.allclose(proxy_gap(probs, "uniform").numpy(), [0.5, 0.2], atol=1e-12)


def test_smoothed_probability_closed_form():
    """A hard linear classifier smoothed with N(0, diag(sigma^2)) has p = Φ(margin / ||Σ^½ w||)."""
    g = torch.Generator().manual_seed(0)
    w = torch.tensor([1.0, -2.0, 0.5])
    model = Linear2(w, -0.2, k=1e4)
    x = torch.tensor([[0.6, 0.1, 0.3]])
    sigma = torch.tensor([[0.3, 0.1, 0.5]])
    p = smoothed_probabilities(model, x, sigma, "gaussian", 200_000, g)[0, 1].item()
    margin = float(x[0] @ w - 0.2)
    exact = normal.cdf(margin / float(torch.linalg.norm(sigma[0] * w)))
    assert abs(p - exact) < 4 * math.sqrt(exact * (1 - exact) / 200_000)


def test_reparameterized_gradient_matches_finite_difference():
    """With the noise held fixed, d/dtheta of the Monte Carlo estimate equals its finite difference
    (the reparameterization trick of Listing 1)."""
    model = Linear2(torch.tensor([1.0, -1.0, 2.0, 0.5]), 0.1, k=3.0)
    x = torch.tensor([[0.2, 0.4, 0.1, 0.9]], dtype=torch.float64)
    model.w = model.w.double()
    theta = torch.tensor([[0.3, 0.2, 0.4, 0.25]], dtype=torch.float64, requires_grad=True)

    def f(th):
        return smoothed_probabilities(model, x, th, "gaussian", 500, torch.Generator().manual_seed(1))[0, 1]

    f(theta).backward()
    h = 1e-6
    for i in range(4):
        e = torch.zeros_like(theta)
        e[0, i] = h
        fd = (f(theta.detach() + e) - f(theta.detach() - e)).item() / (2 * h)
        assert abs(theta.grad[0, i].item() - fd) < 1e-6


def test_ancer_respects_projection_and_zero_iterations():
    """App. C: Theta stays >= theta_iso (the projection); zero iterations return theta_iso."""
    model = Linear2(torch.ones(6), -1.5, k=5.0)
    x = torch.rand(3, 6, generator=torch.Generator().manual_seed(0))
    iso = torch.tensor([0.2, 0.3, 0.25])
    same = optimize_ancer(model, x, iso, "gaussian", iterations=0)
    assert torch.equal(same, iso[:, None].expand(3, 6))
    out = optimize_ancer(model, x, iso, "gaussian", iterations=20, lr=0.05, samples=64,
                         generator=torch.Generator().manual_seed(1))
    assert out.shape == x.shape
    assert bool((out >= iso[:, None] - 1e-7).all())


@pytest.mark.parametrize("noise", ["gaussian", "uniform"])
def test_ancer_grows_the_safe_directions(noise):
    """A boundary orthogonal to e_1 leaves every other direction safe: ANCER should widen Theta along
    them (anisotropy), and the certified proxy radius should exceed the isotropic one."""
    n = 8
    w = torch.zeros(n)
    w[0] = 1.0
    model = Linear2(w, -0.3, k=50.0)
    x = torch.full((1, n), 0.5)
    x[0, 0] = 0.6  # margin 0.3 along e_1
    iso = torch.tensor([0.1])
    theta = optimize_ancer(model, x, iso, noise, iterations=60, lr=0.02, samples=128, kappa=2.0,
                           generator=torch.Generator().manual_seed(0))[0]
    assert theta[1:].mean() > 2 * theta[0]
    smooth = Smooth(model, 2, (n,), noise, seed=0)
    aniso = smooth.certify(x[0], theta, 100, 20_000, 0.001)
    isotropic = smooth.certify(x[0], float(iso), 100, 20_000, 0.001)
    assert aniso.prediction == isotropic.prediction == 1
    assert aniso.radius_proxy > 1.5 * isotropic.radius_proxy


def test_isotropic_dd_increases_the_radius_and_respects_floor():
    """Alfarra et al.: gradient ascent on theta * gap raises the certified radius from a too-small
    start (the Φ^-1 clamp caps the gap, so the radius grows with theta until the gap is unclamped)."""
    model = Linear2(torch.tensor([1.0, 1.0]), -1.0, k=1e3)
    x = torch.tensor([[0.8, 0.8]])  # margin 0.6 along (1, 1)
    theta = optimize_isotropic(model, x, 0.02, "gaussian", iterations=50, lr=0.01, samples=256,
                               min_theta=0.01, generator=torch.Generator().manual_seed(0))
    assert theta.shape == (1,) and theta.item() >= 0.01
    smooth = Smooth(model, 2, (2,), "gaussian", seed=0)
    before = smooth.certify(x[0], 0.02, 100, 20_000, 0.001).radius
    after = smooth.certify(x[0], theta.item(), 100, 20_000, 0.001).radius
    assert after > 2 * before


@pytest.mark.parametrize("kwargs, name", [
    (dict(iterations=-1), "iterations"), (dict(lr=0.0), "lr"), (dict(samples=0), "samples"),
])
def test_optimizers_reject_bad_settings(kwargs, name):
    model = Linear2(torch.ones(2), 0.0)
    x = torch.rand(2, 2)
    with pytest.raises(ValueError, match=name):
        optimize_ancer(model, x, torch.tensor([0.1, 0.1]), "gaussian", **kwargs)
    with pytest.raises(ValueError, match=name):
        optimize_isotropic(model, x, 0.1, "gaussian", **kwargs)


def test_optimizers_reject_bad_theta_and_input():
    model = Linear2(torch.ones(2), 0.0)
    x = torch.rand(2, 2)
    with pytest.raises(ValueError, match="theta_iso"):
        optimize_ancer(model, x, torch.tensor([0.1, -0.1]), "gaussian")
    with pytest.raises(ValueError, match="theta_iso"):
        optimize_ancer(model, x, torch.ones(3), "gaussian")
    with pytest.raises(ValueError, match="theta0"):
        optimize_isotropic(model, x, float("nan"), "gaussian")
    with pytest.raises(ValueError, match="x"):
        optimize_ancer(model, torch.tensor([[0.1, float("inf")]]), torch.tensor([0.1]), "gaussian")
    with pytest.raises(ValueError, match="noise"):
        optimize_ancer(model, x, torch.tensor([0.1, 0.1]), "laplace")
