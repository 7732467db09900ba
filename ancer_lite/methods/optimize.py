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

import math

import numpy as np
import torch

from ..core.certify import AUTO, DEVICE, check_input_map, resolve_draws, soft_smoothed_probabilities
from ..core.families import FAMILIES
from ..core.noise import BlockDrawStream, DrawStream, check_noise, standard_noise
from ..core.parameters import check_rotations
from ..core.precision import EXACT, check_precision, forward_precision
from ..core.regions import soft_proxy_radius
from ..core.stages import OPTIMIZATION, timed
from ..core.streams import stream
from ..core.validation import check_count, check_finite_tensor, check_nonnegative, check_positive, check_probabilities

#: probabilities are clamped to [PROB_CLAMP, 1 - PROB_CLAMP] before Φ^-1 (Listing 1 uses 0.001)
PROB_CLAMP = 1e-3


def smoothed_probabilities(model: torch.nn.Module, x: torch.Tensor, theta: torch.Tensor, noise: str,
                           samples: int, generator: Draws = None,
                           rotation: torch.Tensor | None = None, *, precision: str = EXACT) -> torch.Tensor:
    """Monte Carlo estimate of the soft smoothed classifier E[softmax f(x + U (theta * eps))], differentiable in
    theta (App. C, Listing 1's reparameterization): `samples` unit-scale draws per input of `noise`
    (`unit_draws`), through the one soft smoothed classifier (`certify.soft_smoothed_probabilities`). The
    optimizers run the same computation on arguments they checked once (`optimize_isotropic`, `optimize_ancer`,
    `rancer.optimize_rancer`).

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier f.
    x : torch.Tensor, shape (B, *shape)
        A floating-point batch, B >= 1, finite.
    theta : torch.Tensor
        The scales, finite and > 0, with x's number of dimensions, each of size 1 or x's (one scale per input, or
        per pixel).
    noise : str
        One of `noise.NOISES`.
    samples : int
        Draws per input, >= 1.
    generator : torch.Generator or list of noise.DrawStream or noise.BlockDrawStream, optional
        One generator, or one stream per input (`Draws`, `input_streams`).
    rotation : torch.Tensor of shape (B, n, n), optional
        One orthogonal matrix per input, n = prod(shape) (`parameters.check_rotations`).
    precision : str
        The forward passes' arithmetic, one of `precision.PRECISIONS` ("exact", "tf32", "bf16").

    Returns
    -------
    torch.Tensor, shape (B, K)
        The estimated class probabilities.
    """
    check_precision(precision)
    check_batch(x)
    check_input_map(theta, x, "theta", "positive")
    check_noise(noise)
    check_count(samples, "samples")
    if rotation is not None:
        check_rotations(rotation, x.shape[0], math.prod(x.shape[1:]))
    return soft_smoothed_probabilities(model, x, unit_draws(noise, x, samples, generator), theta, rotation,
                                       precision=precision)


#: what the optimizers draw their noise from: one generator for the whole batch, or one stream per input, a
#: `noise.DrawStream` (drawn on the CPU) or a `noise.BlockDrawStream` (drawn on the inputs' device), on the input's
#: own stream `streams.stream(seed, key, purpose)`: the input's θ then depends on its key alone, not on the other
#: inputs optimized beside it (`input_streams`)
Draws = "torch.Generator | list[DrawStream] | list[BlockDrawStream] | None"


def unit_draws(noise: str, x: torch.Tensor, samples: int, generator: Draws) -> torch.Tensor:
    """`samples` unit-scale draws per input of x.

    Parameters
    ----------
    noise : str
        One of `noise.NOISES` (used with a generator; a stream carries its own family).
    x : torch.Tensor, shape (B, *shape)
        The inputs.
    samples : int
        Draws per input, >= 1.
    generator : torch.Generator or list of noise.DrawStream or noise.BlockDrawStream, optional
        One generator (B * samples draws in order), or one stream per input: a DrawStream draws on the CPU (its
        draws are copied to x's device), a BlockDrawStream where it was made (x's device, `input_streams`: no copy).

    Returns
    -------
    torch.Tensor, shape (B, samples, *shape)
        The draws, on x's device, in x's dtype.
    """
    b, shape = x.shape[0], tuple(x.shape[1:])
    if isinstance(generator, (list, tuple)):
        if len(generator) != b or not all(isinstance(s, (DrawStream, BlockDrawStream)) for s in generator):
            raise ValueError(f"generator must be a torch.Generator or one noise.DrawStream or noise.BlockDrawStream "
                             f"per input ({b}), got {len(generator)} entries")
        z = torch.stack([s.draw(samples) for s in generator])
        return z.to(x.device, x.dtype)
    if generator is not None and generator.device != x.device:  # a CPU generator for inputs on another device
        return standard_noise(noise, b * samples, shape, generator, x.dtype).reshape(b, samples, *shape).to(x.device)
    return standard_noise(noise, b * samples, shape, generator, x.dtype, x.device).reshape(b, samples, *shape)


def input_streams(noise: str, x: torch.Tensor, seed: int, keys: list[int], purpose: str,
                  draws: str = AUTO) -> list[DrawStream] | list[BlockDrawStream]:
    """One stream per input of x, on its stream (seed, key, purpose) (`streams.stream`).

    Parameters
    ----------
    noise : str
        One of `noise.NOISES`.
    x : torch.Tensor, shape (B, *shape)
        The inputs (their shape and device).
    seed : int
        The run's seed.
    keys : list of int, length B
        The inputs' stream keys.
    purpose : str
        The draws' purpose (`streams.PURPOSES`).
    draws : str
        Where the draws are made (`resolve_draws` on x's device): "cpu", a `noise.DrawStream` per input (the same
        draws on every device); "device", a `noise.BlockDrawStream` per input on x's device (reproducible per device
        type, independent of the batch's other inputs).

    Returns
    -------
    list of noise.DrawStream or noise.BlockDrawStream
        One stream per key.
    """
    shape = tuple(x.shape[1:])
    if resolve_draws(draws, x.device) == DEVICE:
        return [BlockDrawStream(noise, shape, stream(seed, k, purpose), device=x.device) for k in keys]
    return [DrawStream(noise, shape, stream(seed, k, purpose)) for k in keys]


def proxy_gap(probs: torch.Tensor, noise: str, clamp: float = PROB_CLAMP) -> torch.Tensor:
    """Differentiable gap of the top two smoothed probabilities: Corollary 1's (Φ^-1(p1) - Φ^-1(p2)) / 2
    for Gaussian noise, Corollary 2's p1 - p2 for uniform noise (the family's `soft_gap`, which the optimizers
    call on the probabilities they made).

    Parameters
    ----------
    probs : torch.Tensor, shape (B, K)
        Probabilities in [0, 1], K >= 2 classes.
    noise : str
        One of `noise.NOISES`.
    clamp : float
        In (0, 0.5): the probabilities are clamped to [clamp, 1 - clamp] before Φ^-1.

    Returns
    -------
    torch.Tensor, shape (B,)
        The gaps.
    """
    check_noise(noise)
    if not isinstance(probs, torch.Tensor):
        raise TypeError(f"probs must be a torch.Tensor of shape (B, K), got {type(probs).__name__}")
    if probs.ndim != 2 or probs.shape[1] < 2:
        raise ValueError(f"probs must have shape (B, K) with K >= 2 classes, got shape {tuple(probs.shape)}")
    check_probabilities(probs.detach().cpu(), "probs")
    if not check_positive(clamp, "clamp") < 0.5:
        raise ValueError(f"clamp must be in (0, 0.5), got {clamp!r}")
    return FAMILIES[noise].soft_gap(torch.topk(probs, 2, dim=1).values, clamp)


def check_batch(x: torch.Tensor) -> None:
    """A batch x for the optimizers: a floating-point torch tensor (B, *input_shape) with B >= 1, without NaN/Inf.

    Parameters
    ----------
    x : torch.Tensor, shape (B, *input_shape)
        The batch.

    Raises
    ------
    TypeError
        When x is not a tensor.
    ValueError
        Naming x, with what was expected.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor batch of shape (B, *input_shape), got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"x must be a batch of shape (B, *input_shape), got shape {tuple(x.shape)}")
    if x.shape[0] < 1:
        raise ValueError(f"x must hold at least one input, got shape {tuple(x.shape)}")
    if not x.is_floating_point():  # theta0 cast to an integer dtype would become 0
        raise ValueError(f"x must be a floating-point tensor of pixel values in [0, 1], got dtype {x.dtype}")
    check_finite_tensor(x, "x")


def _check_inputs(x: torch.Tensor, iterations: int, lr: float, samples: int) -> None:
    check_batch(x)
    check_count(iterations, "iterations", 0)
    check_positive(lr, "lr")
    check_count(samples, "samples")


def _start_tensor(value: float | torch.Tensor, name: str, x: torch.Tensor) -> torch.Tensor:
    """`value` (a number, an array or a tensor; not a bool or a string) as a tensor of x's dtype."""
    if isinstance(value, (bool, np.bool_, str, bytes)) or (
            isinstance(value, (torch.Tensor, np.ndarray)) and str(value.dtype) in ("torch.bool", "bool")):
        raise TypeError(f"{name} must be a number or a tensor of one value per input, got {value!r}")
    try:
        t = torch.as_tensor(value, dtype=x.dtype, device=x.device)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{name} must be a number or a tensor of one value per input, got {value!r}") from None
    return t


@timed(OPTIMIZATION)
def optimize_isotropic(model: torch.nn.Module, x: torch.Tensor, theta0: float | torch.Tensor, noise: str,
                       iterations: int = 100, lr: float = 1e-4, samples: int = 100,
                       min_theta: float = 1e-3, generator: Draws = None, *,
                       precision: str = EXACT) -> torch.Tensor:
    """Isotropic DD (Alfarra et al. 2020): theta_x <- theta_x + lr * d/dtheta [theta_x gap(x, theta_x)],
    clipped at min_theta, from theta0 (a scalar or one value per input). The arguments are checked here, once; the
    steps take them as given.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier f.
    x : torch.Tensor, shape (B, *shape)
        A floating-point batch, B >= 1, finite.
    theta0 : float or torch.Tensor of shape (B,)
        The start, finite and > 0 (not a bool).
    noise : str
        One of `noise.NOISES`.
    iterations : int
        Gradient steps, >= 0.
    lr : float
        The step size, finite and > 0.
    samples : int
        Draws per input and step, >= 1.
    min_theta : float
        The clip, finite and > 0.
    generator : torch.Generator or list of noise.DrawStream or noise.BlockDrawStream, optional
        One generator, or one stream per input (`input_streams`, `Draws`).
    precision : str
        The forward passes' arithmetic, one of `precision.PRECISIONS` ("exact", "tf32", "bf16"); θ stays float32.

    Returns
    -------
    torch.Tensor, shape (B,)
        theta_x per input.
    """
    check_precision(precision)
    check_noise(noise)
    _check_inputs(x, iterations, lr, samples)
    check_positive(min_theta, "min_theta")
    b = x.shape[0]
    t0 = _start_tensor(theta0, "theta0", x)
    if tuple(t0.shape) not in ((), (1,), (b,)):
        raise ValueError(f"theta0 must be a number or have shape ({b},) (one value per input), "
                         f"got shape {tuple(t0.shape)}")
    th0 = t0.expand(b).clone()
    if not bool(torch.isfinite(th0).all()) or not bool((th0 > 0).all()):
        raise ValueError(f"theta0 must be finite and > 0, got {theta0!r}")
    theta = th0.requires_grad_(True)
    view = (b,) + (1,) * (x.ndim - 1)
    gap_of = FAMILIES[noise].soft_gap
    for _ in range(iterations):
        probs = soft_smoothed_probabilities(model, x, unit_draws(noise, x, samples, generator), theta.view(view),
                                            precision=precision)
        radius = theta * gap_of(torch.topk(probs, 2, dim=1).values, PROB_CLAMP)
        with forward_precision(precision, x.device):  # the backward pass in the same arithmetic
            grad, = torch.autograd.grad(radius.sum(), theta)
        with torch.no_grad():
            theta.add_(lr * grad).clamp_(min=min_theta)
    return theta.detach()


@timed(OPTIMIZATION)
def optimize_ancer(model: torch.nn.Module, x: torch.Tensor, theta_iso: torch.Tensor, noise: str,
                   iterations: int = 100, lr: float = 0.04, samples: int = 100, kappa: float = 2.0,
                   generator: Draws = None,
                   rotation: torch.Tensor | None = None, *, precision: str = EXACT) -> torch.Tensor:
    """ANCER (App. C, Listing 1): maximize gap * geomean(theta) + kappa * min(theta) * gap with Adam,
    projecting onto theta >= theta_iso after every step; a rotation per input gives RANCER's rotated variant. The
    arguments are checked here, once (the rotations by `parameters.check_rotations`); the steps take them as given.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier f.
    x : torch.Tensor, shape (B, *shape)
        A floating-point batch, B >= 1, finite.
    theta_iso : torch.Tensor of shape (B,) or (B, *shape)
        The isotropic solutions, finite and > 0: the start and the floor.
    noise : str
        One of `noise.NOISES`.
    iterations : int
        Adam steps, >= 0.
    lr : float
        Adam's learning rate, finite and > 0.
    samples : int
        Draws per input and step, >= 1.
    kappa : float
        The weight of the min term, finite and >= 0.
    generator : torch.Generator or list of noise.DrawStream or noise.BlockDrawStream, optional
        As `optimize_isotropic`'s.
    rotation : torch.Tensor of shape (B, n, n), optional
        One orthogonal matrix per input, n = prod(shape).
    precision : str
        As `optimize_isotropic`'s.

    Returns
    -------
    torch.Tensor, shape (B, *shape)
        Theta per input and dimension.
    """
    check_precision(precision)
    check_noise(noise)
    _check_inputs(x, iterations, lr, samples)
    check_nonnegative(kappa, "kappa")
    b = x.shape[0]
    if rotation is not None:
        check_rotations(rotation, b, math.prod(x.shape[1:]))
    th = _start_tensor(theta_iso, "theta_iso", x)
    if th.shape == (b,):
        th = th.view((b,) + (1,) * (x.ndim - 1)).expand_as(x)
    if th.shape != x.shape:
        raise ValueError(f"theta_iso must have shape ({b},) or {tuple(x.shape)}, got {tuple(th.shape)}")
    if not bool(torch.isfinite(th).all()) or not bool((th > 0).all()):
        raise ValueError("theta_iso must be finite and > 0")
    floor = th.detach().clone()
    theta = floor.clone().requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=lr)
    gap_of = FAMILIES[noise].soft_gap
    for _ in range(iterations):
        opt.zero_grad()
        probs = soft_smoothed_probabilities(model, x, unit_draws(noise, x, samples, generator), theta, rotation,
                                            precision=precision)
        gap = gap_of(torch.topk(probs, 2, dim=1).values, PROB_CLAMP)
        flat = theta.reshape(b, -1)
        objective = soft_proxy_radius(flat, gap) + kappa * flat.min(dim=1).values * gap
        # the gradient with respect to theta alone: the base classifier's weights get no .grad (Listing 1's
        # backward() fills them on every step, ~22% of the time on the MNIST CNN, for nothing)
        with forward_precision(precision, x.device):  # the backward pass in the same arithmetic
            theta.grad, = torch.autograd.grad(-objective.sum(), theta)
        opt.step()
        with torch.no_grad():
            torch.max(theta, floor, out=theta)
    return theta.detach()
