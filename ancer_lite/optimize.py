"""Sample-wise optimization of the smoothing distribution.

- `optimize_isotropic`: isotropic data-dependent smoothing (Alfarra et al. 2020, "Isotropic DD"):
  per input, gradient ascent on one scale theta of the radius theta * gap(x, theta).
- `optimize_ancer`: ANCER's relaxed Eq. (1) (App. C, Listing 1): per input, Adam on a diagonal
  Theta of gap * (prod theta_i)^(1/n) + kappa * min_i theta_i * gap, projected onto theta_i >= theta_iso.

Both are batched over inputs and use the reparameterization trick (noise = theta * z, z fixed-scale),
with the gap estimated from softmax probabilities averaged over `samples` noise draws.

Departures from Listing 1, each a correction: gradients are zeroed every iteration (Listing 1 never
calls zero_grad, so Adam sees accumulated gradients); the l2 gap is (Φ^-1(p1) - Φ^-1(p2)) / 2 as in
Corollary 1 (Listing 1 drops the 1/2, which only rescales the objective) and is taken of softmax
probabilities (Listing 1 names its input `logits`; Φ^-1 of logits is meaningless); the geometric mean
is computed in log space; inputs of any shape are supported.
"""
from __future__ import annotations

import torch

from .base_classifier import checked_logits, eval_mode, fixed_weights
from .noise import GAUSSIAN, check_noise, scale_noise, standard_noise
from .stages import OPTIMIZATION, timed
from .validation import check_count, check_finite_tensor, check_positive

#: probabilities are clamped to [PROB_CLAMP, 1 - PROB_CLAMP] before Φ^-1 (Listing 1 uses 0.001)
PROB_CLAMP = 1e-3


def smoothed_probabilities(model: torch.nn.Module, x: torch.Tensor, theta: torch.Tensor, noise: str,
                           samples: int, generator: torch.Generator | None = None,
                           rotation: torch.Tensor | None = None) -> torch.Tensor:
    """Monte Carlo estimate of the smoothed soft classifier E[softmax f(x + eps)], shape (B, K),
    differentiable in theta. x: (B, *shape); theta broadcastable to x (scalar per input or per pixel);
    rotation: optional (B, n, n) orthogonal matrices."""
    b, shape = x.shape[0], tuple(x.shape[1:])
    z = standard_noise(noise, b * samples, shape, generator, x.dtype, x.device).reshape(b, samples, *shape)
    eps = z * theta.unsqueeze(1)
    if rotation is not None:
        eps = torch.einsum("bij,bsj->bsi", rotation.to(eps.dtype), eps.reshape(b, samples, -1)).reshape(eps.shape)
    # the base classifier is fixed: no dropout, BatchNorm statistics untouched, no gradient for its weights
    with eval_mode(model), fixed_weights(model):
        logits = checked_logits(model, (x.unsqueeze(1) + eps).reshape(b * samples, *shape))
    return torch.softmax(logits, dim=1).reshape(b, samples, -1).mean(dim=1)


def proxy_gap(probs: torch.Tensor, noise: str, clamp: float = PROB_CLAMP) -> torch.Tensor:
    """Differentiable gap of the top two smoothed probabilities: Corollary 1's (Φ^-1(p1) - Φ^-1(p2)) / 2
    for Gaussian noise, Corollary 2's p1 - p2 for uniform noise."""
    top = torch.topk(probs, 2, dim=1).values
    if noise == GAUSSIAN:
        p = top.clamp(clamp, 1.0 - clamp)
        return 0.5 * (torch.special.ndtri(p[:, 0]) - torch.special.ndtri(p[:, 1]))
    return top[:, 0] - top[:, 1]


def _check_inputs(x: torch.Tensor, iterations: int, lr: float, samples: int) -> None:
    check_finite_tensor(x, "x")
    if not x.is_floating_point():  # an integer x used to be blamed on theta0 (cast to x's dtype, it became 0)
        raise ValueError(f"x must be a floating-point tensor of pixel values in [0, 1], got dtype {x.dtype}")
    if x.ndim < 2:
        raise ValueError(f"x must be a batch of shape (B, *input_shape), got shape {tuple(x.shape)}")
    check_count(iterations, "iterations", 0)
    check_positive(lr, "lr")
    check_count(samples, "samples")


@timed(OPTIMIZATION)
def optimize_isotropic(model: torch.nn.Module, x: torch.Tensor, theta0: float | torch.Tensor, noise: str,
                       iterations: int = 100, lr: float = 1e-4, samples: int = 100,
                       min_theta: float = 1e-3, generator: torch.Generator | None = None) -> torch.Tensor:
    """Isotropic DD (Alfarra et al. 2020): theta_x <- theta_x + lr * d/dtheta [theta_x gap(x, theta_x)],
    clipped at min_theta, from theta0 (a scalar or one value per input). Returns theta_x of shape (B,)."""
    check_noise(noise)
    _check_inputs(x, iterations, lr, samples)
    check_positive(min_theta, "min_theta")
    b = x.shape[0]
    th0 = torch.as_tensor(theta0, dtype=x.dtype).expand(b).clone()
    if not bool(torch.isfinite(th0).all()) or not bool((th0 > 0).all()):
        raise ValueError("theta0 must be finite and > 0")
    theta = th0.requires_grad_(True)
    view = (b,) + (1,) * (x.ndim - 1)
    for _ in range(iterations):
        probs = smoothed_probabilities(model, x, theta.view(view), noise, samples, generator)
        radius = theta * proxy_gap(probs, noise)
        grad, = torch.autograd.grad(radius.sum(), theta)
        with torch.no_grad():
            theta.add_(lr * grad).clamp_(min=min_theta)
    return theta.detach()


@timed(OPTIMIZATION)
def optimize_ancer(model: torch.nn.Module, x: torch.Tensor, theta_iso: torch.Tensor, noise: str,
                   iterations: int = 100, lr: float = 0.04, samples: int = 100, kappa: float = 2.0,
                   generator: torch.Generator | None = None,
                   rotation: torch.Tensor | None = None) -> torch.Tensor:
    """ANCER (App. C, Listing 1): maximize gap * geomean(theta) + kappa * min(theta) * gap with Adam,
    projecting onto theta >= theta_iso after every step. theta_iso: (B,) isotropic solutions (or (B, *shape));
    returns Theta of x's shape. rotation (B, n, n) gives RANCER's rotated variant."""
    check_noise(noise)
    _check_inputs(x, iterations, lr, samples)
    if not (kappa >= 0):
        raise ValueError(f"kappa must be >= 0, got {kappa!r}")
    b = x.shape[0]
    th = torch.as_tensor(theta_iso, dtype=x.dtype)
    if th.shape == (b,):
        th = th.view((b,) + (1,) * (x.ndim - 1)).expand_as(x)
    if th.shape != x.shape:
        raise ValueError(f"theta_iso must have shape ({b},) or {tuple(x.shape)}, got {tuple(th.shape)}")
    if not bool(torch.isfinite(th).all()) or not bool((th > 0).all()):
        raise ValueError("theta_iso must be finite and > 0")
    floor = th.detach().clone()
    theta = floor.clone().requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=lr)
    for _ in range(iterations):
        opt.zero_grad()
        probs = smoothed_probabilities(model, x, theta, noise, samples, generator, rotation)
        gap = proxy_gap(probs, noise)
        flat = theta.reshape(b, -1)
        geomean = torch.exp(torch.log(flat).mean(dim=1))
        objective = gap * geomean + kappa * flat.min(dim=1).values * gap
        # the gradient with respect to theta alone: the base classifier's weights get no .grad (Listing 1's
        # backward() fills them on every step, ~22% of the time on the MNIST CNN, for nothing)
        theta.grad, = torch.autograd.grad(-objective.sum(), theta)
        opt.step()
        with torch.no_grad():
            torch.max(theta, floor, out=theta)
    return theta.detach()
