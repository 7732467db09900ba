"""Empirical verification of certified regions (used by notebook 02): smoothed predictions at many
points at once, and points that fill a region (a dense grid inside it plus its boundary)."""
from __future__ import annotations

import numpy as np
import torch

from ..core.base_classifier import checked_logits, eval_mode
from ..core.certify import Smooth
from ..core.noise import check_noise
from ..core.parameters import SmoothingParameters
from ..core.regions import L1, L2, contains
from ..core.validation import check_count, check_finite_array, check_finite_tensor


def smoothed_predictions(model: torch.nn.Module, points: torch.Tensor, theta: float | torch.Tensor,
                         noise: str, num: int, generator: torch.Generator | None = None,
                         rotation: torch.Tensor | None = None, chunk: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo top class of the smoothed classifier g(z) = argmax_c P(f(z + eps) = c) at each point z.

    Each point gets `num` fresh noise draws, counted by the one sampling loop (`certify.Smooth.vote_counts`, whole
    points per forward batch of about `chunk` rows).

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier f: logits of at least 2 classes, per example.
    points : torch.Tensor, shape (batch, *input_shape)
        The points z, finite.
    theta : float or torch.Tensor of shape input_shape
        The noise's scale, finite and > 0 also in float32.
    noise : str
        'gaussian' or 'uniform' (one of `noise.NOISES`).
    num : int
        Noise draws per point, an integer >= 1.
    generator : torch.Generator or None
        The random numbers' source; None: torch's global one.
    rotation : torch.Tensor, shape (n, n), or None
        An orthogonal matrix rotating the noise (RANCER), n = prod(input_shape); None: no rotation.
    chunk : int
        About how many noisy rows go through the model per forward batch.

    Returns
    -------
    top : numpy.ndarray of int64, shape (batch,)
        The top class at each point.
    frequency : numpy.ndarray of float64, shape (batch,)
        The top class's empirical frequency among the `num` draws.
    """
    check_noise(noise)
    num = check_count(num, "num")
    points = torch.as_tensor(points, dtype=torch.float32)
    if points.ndim < 2:
        raise ValueError(f"points must have shape (batch, *input_shape), got shape {tuple(points.shape)}")
    check_finite_tensor(points, "points")
    shape = tuple(points.shape[1:])
    params = SmoothingParameters.of(theta, shape, rotation)  # θ and U, checked once
    if len(points) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    with torch.no_grad(), eval_mode(model):  # the number of classes, from one point (no random numbers drawn)
        num_classes = checked_logits(model, points[:1]).shape[1]
    if num_classes < 2:
        raise ValueError(f"model must return logits of at least 2 classes, got {num_classes} output")
    per = max(1, chunk // num)  # points per forward batch
    # the points of a certified region leave the pixel box by design: any finite input
    smooth = Smooth(model, num_classes, shape, noise, batch_size=per * num, domain=None)
    gen = torch.default_generator if generator is None else generator
    counts = torch.from_numpy(smooth.vote_counts(points, params, num, generator=gen))
    return counts.argmax(1).numpy(), (counts.max(1).values.double() / num).numpy()


def region_boundary_2d(center: np.ndarray, scales: np.ndarray, norm: str, num: int = 256) -> np.ndarray:
    """Points on the boundary of a 2D axis-aligned ellipse (l2) or generalized cross-polytope (l1) around `center`.

    The ellipse's points are equally spaced in angle; the cross-polytope (a rhombus with vertices c ± s_i e_i) has its
    points equally spaced along its edges with the four vertices included exactly, so that a drawn rhombus has sharp
    corners.

    Parameters
    ----------
    center : numpy.ndarray, shape (2,)
        The region's centre c, finite.
    scales : numpy.ndarray, shape (2,)
        The semi-axes s, finite and >= 0 (0: a degenerate region, such as an abstained certificate's, drawn as a
        segment or a point).
    norm : str
        `regions.L1` or `regions.L2`.
    num : int
        The number of points, an integer >= 8 (an l1 boundary needs its four vertices).

    Returns
    -------
    numpy.ndarray of float64, shape (num, 2)
        The points; the last one repeats the first (for plotting).
    """
    if norm not in (L1, L2):
        raise ValueError(f"norm must be {L1!r} or {L2!r}, got {norm!r}")
    num = check_count(num, "num", 8)                          # an l1 boundary needs its four vertices
    center = check_finite_array(center, "center", 2)
    scales = check_finite_array(scales, "scales", 2)
    if (scales < 0).any():
        raise ValueError(f"scales (semi-axes) must be >= 0, got {scales.tolist()}")
    if norm == L2:
        t = np.linspace(0, 2 * np.pi, num)
        d = np.stack([np.cos(t), np.sin(t)], axis=1)
        d[-1] = d[0]                                          # cos(2π) is 1 only up to rounding
    else:
        u = np.linspace(0.0, 4.0, num)                       # position along the 4 edges, vertex k at u = k
        u[np.abs(u[:, None] - np.arange(5)[None]).argmin(axis=0)] = np.arange(5)
        vertices = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0], [1.0, 0.0]])
        k = np.minimum(np.floor(u).astype(int), 3)
        d = vertices[k] + (u - k)[:, None] * (vertices[k + 1] - vertices[k])
    return np.asarray(center, np.float64) + d * np.asarray(scales, np.float64)


def region_fill_2d(center: np.ndarray, scales: np.ndarray, norm: str, per_axis: int = 25,
                   boundary: int = 64, shrink: float = 1.0 - 1e-6) -> np.ndarray:
    """Points filling a 2D certified region: a dense grid over its bounding box, kept where inside, plus its boundary.

    The `boundary` points on the boundary are pulled in by `shrink` so that rounding cannot put them outside.

    Parameters
    ----------
    center : numpy.ndarray, shape (2,)
        The region's centre, finite.
    scales : numpy.ndarray, shape (2,)
        The semi-axes, finite and > 0.
    norm : str
        `regions.L1` or `regions.L2`.
    per_axis : int
        Grid points per axis, an integer >= 1.
    boundary : int
        The number of boundary points, an integer >= 7.
    shrink : float
        The factor pulling the boundary points towards the centre, in (0, 1].

    Returns
    -------
    numpy.ndarray of float64, shape (m, 2)
        The grid points inside the region, then the `boundary` points of its boundary.
    """
    per_axis = check_count(per_axis, "per_axis", 1)
    boundary = check_count(boundary, "boundary", 7)
    if isinstance(shrink, (bool, np.bool_)) or not isinstance(shrink, (int, float, np.integer, np.floating)) \
            or not 0.0 < shrink <= 1.0:
        raise ValueError(f"shrink must be a number in (0, 1] (boundary points pulled towards the centre), "
                         f"got {shrink!r}")
    c = check_finite_array(center, "center", 2)
    s = check_finite_array(scales, "scales", 2, positive=True)
    g = [np.linspace(c[i] - s[i], c[i] + s[i], per_axis) for i in range(2)]
    grid = np.stack(np.meshgrid(*g, indexing="ij"), axis=-1).reshape(-1, 2)
    grid = grid[contains(grid, c, s, norm)]
    edge = c + (region_boundary_2d(c, s, norm, boundary + 1)[:-1] - c) * shrink
    return np.concatenate([grid, edge])
