"""One smoothed classifier: `certify.Smooth` holds the package's one Monte Carlo counting loop
(`Smooth.vote_counts`) under PREDICT, CERTIFY (`Smooth.lower_bound`), UCAN's CLASSIFYSAMPLES and CERTIFY and the
verification of regions; `certify.soft_smoothed_probabilities` is the one soft (differentiable) smoothed classifier
under the optimizers, RANCER and UCAN's soundness search. Each former loop is checked here against a literal,
one-shot reference of its formula (all draws at once, no batching, no in-place arithmetic)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from ancer_lite.core.certify import Smooth, soft_smoothed_probabilities
from ancer_lite.core.noise import scale_noise, standard_noise
from ancer_lite.core.ucan_noise import sample_standard
from ancer_lite.evaluation.verify import smoothed_predictions
from ancer_lite.methods import optimize, ucan

SHAPE = (1, 4, 4)
D = 16


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def net(k: int = 3, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Flatten(), nn.Linear(D, 12), nn.Tanh(), nn.Linear(12, k))


def rotation(seed: int) -> torch.Tensor:
    q, _ = torch.linalg.qr(torch.randn(D, D, generator=gen(seed), dtype=torch.float64))
    return q.float()


def reference_counts(model: nn.Module, centres: torch.Tensor, eps: torch.Tensor, k: int) -> np.ndarray:
    """Votes of f at centres + eps, row by row (centres already repeated per draw), as a (rows, k) one-hot sum."""
    with torch.no_grad():
        votes = model(centres + eps).argmax(1)
    return torch.nn.functional.one_hot(votes, k).numpy()


@pytest.mark.parametrize("noise", ["gaussian", "uniform"])
@pytest.mark.parametrize("rotated", [False, True])
@pytest.mark.parametrize("batch_size", [1, 16, 48, 2000])
def test_sample_counts_is_the_one_shot_formula(noise, rotated, batch_size):
    """counts of f(x + mu + U (theta * z)) for z drawn all at once equal the batched loop's (16 | batch * d)."""
    model, x, theta = net(), torch.rand(SHAPE, generator=gen(1)), torch.rand(SHAPE, generator=gen(2)) + 0.1
    mu = torch.rand(SHAPE, generator=gen(3)) - 0.5
    rot = rotation(4) if rotated else None
    num = 96
    got = Smooth(model, 3, SHAPE, noise, batch_size).sample_counts(x, theta, num, rot, gen(5), mean=mu)
    z = standard_noise(noise, num, SHAPE, gen(5))
    want = reference_counts(model, x.expand(num, *SHAPE), scale_noise(z, theta, rot) + mu, 3).sum(0)
    assert np.array_equal(got, want)


def test_mean_is_a_shift_of_the_input():
    """x = 0 with mean mu draws and classifies exactly the points of x = mu without a mean."""
    model, theta, mu = net(), torch.full(SHAPE, 0.3), torch.rand(SHAPE, generator=gen(1))
    sm = Smooth(model, 3, SHAPE)
    a = sm.sample_counts(torch.zeros(SHAPE), theta, 500, generator=gen(2), mean=mu)
    b = sm.sample_counts(mu, theta, 500, generator=gen(2))
    assert np.array_equal(a, b)


@pytest.mark.parametrize("batch_size", [1, 7, 30, 10_000])
def test_vote_counts_at_many_points_is_point_by_point(batch_size):
    """P points share one stream point by point: vote_counts equals P sample_counts calls on one generator
    (uniform noise: every draw takes one number per coordinate, whatever the batch size)."""
    model = net()
    pts = torch.rand(5, *SHAPE, generator=gen(1))
    sm = Smooth(model, 3, SHAPE, "uniform", batch_size)
    got = sm.vote_counts(pts, 0.4, 30, generator=gen(2))
    g = gen(2)
    want = np.stack([Smooth(model, 3, SHAPE, "uniform", 1000).sample_counts(p, 0.4, 30, generator=g) for p in pts])
    assert got.shape == (5, 3) and np.array_equal(got, want)


def test_smoothed_predictions_is_the_one_shot_formula():
    model = net(4)
    pts = torch.rand(9, *SHAPE, generator=gen(1))
    theta, rot, num = torch.rand(SHAPE, generator=gen(2)) + 0.2, rotation(3), 40
    top, freq = smoothed_predictions(model, pts, theta, "gaussian", num, gen(4), rot, chunk=3 * num)
    z = standard_noise("gaussian", 9 * num, SHAPE, gen(4))  # 3 points per batch: 3 * 40 * 16 numbers, 16 | that
    counts = reference_counts(model, pts.repeat_interleave(num, 0), scale_noise(z, theta, rot), 4)
    counts = counts.reshape(9, num, 4).sum(1)
    assert np.array_equal(top, counts.argmax(1)) and np.array_equal(freq, counts.max(1) / num)


@pytest.mark.parametrize("noise", ["gaussian", "laplace", "exp_linf", "uniform_linf", "power_law_linf"])
def test_ucan_counts_go_through_smooth(noise):
    """UCAN's CLASSIFYSAMPLES (x + lambda sigma * eps + mu) is the Smooth with theta = lambda sigma and mean mu,
    and equals the one-shot formula for every family of Table 1."""
    model, x = net(), torch.rand(SHAPE, generator=gen(1))
    sigma, mu, lam, num = torch.rand(SHAPE, generator=gen(2)) + 0.5, 0.1 * torch.rand(SHAPE, generator=gen(3)), 0.5, 64
    got = ucan.sample_counts(model, x, sigma, mu, noise, lam, num, 3, gen(4), batch_size=10)
    eps = sample_standard(noise, num, SHAPE, gen(4))
    want = reference_counts(model, x.expand(num, *SHAPE), eps * (lam * sigma) + mu, 3).sum(0)
    assert np.array_equal(got, want)
    smooth = ucan.smoothed_classifier(model, 3, x, noise, batch_size=10)
    assert np.array_equal(smooth.sample_counts(x, lam * sigma, num, generator=gen(4), mean=mu), got)


def test_ucan_certify_is_the_smooths_lower_bound():
    model, npg = net(), ucan.FixedNPG(torch.rand(SHAPE, generator=gen(1)) + 0.5)
    x = torch.rand(SHAPE, generator=gen(2))
    c = ucan.certify(model, npg, x, "laplace", 0.5, 20, 300, 0.01, 3, gen(3), batch_size=64)
    sigma, mu = ucan.npg_maps(npg, x)
    smooth = ucan.smoothed_classifier(model, 3, x, "laplace", batch_size=64)
    c_hat, count, p_lower = smooth.lower_bound(x, 0.5 * sigma, 20, 300, 0.01, generator=gen(3), mean=mu)
    assert (c.count, c.p_lower) == (count, p_lower) and c.prediction in (c_hat, -1)


def test_certify_is_lower_bound_plus_the_certificate():
    model, x, theta = net(), torch.rand(SHAPE, generator=gen(1)), torch.full(SHAPE, 0.2)
    cert = Smooth(model, 3, SHAPE, seed=3).certify(x, theta, 30, 400, 0.01)
    c_hat, count, p_lower = Smooth(model, 3, SHAPE, seed=3).lower_bound(x, theta, 30, 400, 0.01)
    assert (cert.count, cert.p_lower) == (count, p_lower) and cert.prediction in (c_hat, -1)


def test_soft_smoothed_probabilities_is_the_formula():
    model, b, s = net(), 3, 11
    x = torch.rand(b, *SHAPE, generator=gen(1))
    z = torch.randn(b, s, *SHAPE, generator=gen(2))
    theta = (torch.rand(b, *SHAPE, generator=gen(3)) + 0.1).requires_grad_(True)
    mu = 0.1 * torch.rand(b, *SHAPE, generator=gen(4))
    rot = torch.stack([rotation(5 + i) for i in range(b)])
    p = soft_smoothed_probabilities(model, x, z, theta, rot, mu)
    eps = torch.einsum("bij,bsj->bsi", rot, (z * theta.unsqueeze(1)).reshape(b, s, -1)).reshape(z.shape)
    ref = torch.softmax(model((x.unsqueeze(1) + eps + mu.unsqueeze(1)).reshape(b * s, *SHAPE)), 1).reshape(b, s, -1)
    assert torch.allclose(p, ref.mean(1), atol=1e-6, rtol=0)
    assert torch.equal(soft_smoothed_probabilities(model, x, z, theta, rot, mu, cls=2), p[:, 2])
    (grad,) = torch.autograd.grad(p[:, 0].sum(), theta)
    assert torch.isfinite(grad).all() and grad.abs().sum() > 0
    assert all(q.grad is None for q in model.parameters())  # fixed weights: no gradient for the base classifier


def test_optimize_and_ucan_use_the_soft_function():
    model, x = net(), torch.rand(2, *SHAPE, generator=gen(1))
    theta = torch.full((2, 1, 1, 1), 0.3)
    p = optimize.smoothed_probabilities(model, x, theta, "gaussian", 9, gen(2))
    z = standard_noise("gaussian", 18, SHAPE, gen(2)).reshape(2, 9, *SHAPE)
    assert torch.equal(p, soft_smoothed_probabilities(model, x, z, theta))
    npg = ucan.FixedNPG(torch.rand(SHAPE, generator=gen(3)) + 0.5)
    eps = torch.randn(9, *SHAPE, generator=gen(4))
    q = ucan.soft_smoothed_prob(model, npg, x[0], 1, "gaussian", 0.5, eps)
    sigma, mu = npg(x[0].unsqueeze(0))
    assert torch.equal(q, soft_smoothed_probabilities(model, x[:1], eps.unsqueeze(0), 0.5 * sigma, None, mu, 1,
                                                      fixed=False)[0])


def test_bad_arguments_name_themselves():
    model, x = net(), torch.rand(SHAPE)
    sm = Smooth(model, 3, SHAPE)
    with pytest.raises(ValueError, match="points"):
        sm.vote_counts(x, 0.3, 10)  # one input, not a batch of points
    with pytest.raises(ValueError, match="points"):
        sm.vote_counts(torch.full((2, *SHAPE), float("nan")), 0.3, 10)
    with pytest.raises(ValueError, match="mean"):
        sm.sample_counts(x, 0.3, 10, mean=torch.zeros(3, 4, 4))
    with pytest.raises(ValueError, match="mean"):
        sm.sample_counts(x, 0.3, 10, mean=torch.full(SHAPE, float("inf")))
    with pytest.raises(TypeError, match="sampler"):
        Smooth(model, 3, SHAPE, sampler="normal")
    bad = Smooth(model, 3, SHAPE, "laplace", sampler=lambda num, g: torch.zeros(num, 16))
    with pytest.raises(ValueError, match="sampler"):
        bad.sample_counts(x, 0.3, 10)
    with pytest.raises(ValueError, match="noise"):
        Smooth(model, 3, SHAPE, "cauchy", sampler=lambda num, g: torch.zeros(num, *SHAPE))
    with pytest.raises(ValueError, match="ucan.certify"):
        Smooth(model, 3, SHAPE, "laplace", sampler=lambda num, g: torch.zeros(num, *SHAPE)).certify(x, 0.3, 5, 10, 0.1)
    # the soft function takes its arguments as checked by its entry points, which name them
    z = torch.randn(1, 4, *SHAPE)
    with pytest.raises(ValueError, match="theta"):
        optimize.smoothed_probabilities(model, x[None], -torch.ones(1, 1, 1, 1), "gaussian", 4, gen(0))
    with pytest.raises(ValueError, match="rotation"):
        optimize.smoothed_probabilities(model, x[None], torch.ones(1, 1, 1, 1), "gaussian", 4, gen(0),
                                        2 * torch.eye(D)[None])
    with pytest.raises(TypeError, match="eps"):
        ucan.soft_smoothed_prob(model, ucan.FixedNPG(np.ones(SHAPE)), x, 0, "gaussian", 0.5, z[0].numpy())
    with pytest.raises(ValueError, match="cls"):  # the number of classes is known only once f has run
        soft_smoothed_probabilities(model, x[None], z, torch.ones(1, 1, 1, 1), cls=3)
