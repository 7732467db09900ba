"""How much of a certified region around an image lies inside the image domain [0, 1]^d.

A certificate of randomized smoothing holds on all of ℝᵈ, but only the points of [0, 1]^d are images. ANCER's
anisotropic regions (§5) can reach far beyond the pixel range along some axes, so their volume, and the proxy
radius ACR̃ built on it, can lie mostly outside the domain. The measures here are exact for the axis-aligned regions
of ANCER (ellipsoids ‖δ / s‖₂ <= 1 and generalized cross-polytopes ‖δ / s‖₁ <= 1 with semi-axes s) and for the
isotropic balls (s = r everywhere):

- `far_edge`: each pixel's distance to the farther edge of [0, 1], the most it can move inside the domain;
- `box_inside_log10`: log10 of the fraction of the region's bounding box x ± s inside [0, 1]^d;
- `semi_axes_in_range`: each semi-axis counted only up to the far edge of [0, 1], beyond which its axis reaches no
  image: the part of ANCER's proxy radius (the semi-axes' geometric mean) made of length within the pixel range;
- `linf_radius`: the largest ℓ∞ cube around x inside a region: every change that moves no pixel by more than it is
  certified;
- `largest_in_domain`: the largest change in ℓ2 inside both an ellipsoid and [0, 1]^d, optionally with no pixel
  moved by more than a cap (an ℓ∞ budget), solved exactly as a fractional knapsack.
"""
from __future__ import annotations

import numpy as np

#: the image domain's pixel range
PIXEL_RANGE = (0.0, 1.0)


def _checked_box(x: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and s flattened, checked: x inside `PIXEL_RANGE`, s finite and > 0, of x's shape."""
    x, s = np.asarray(x, np.float64), np.asarray(s, np.float64)
    if x.shape != s.shape:
        raise ValueError(f"x {x.shape} and s {s.shape} must have the same shape")
    lo, hi = PIXEL_RANGE
    if x.size == 0 or not np.isfinite(x).all() or (x < lo).any() or (x > hi).any():
        raise ValueError(f"x must be a non-empty image with every pixel in [{lo:g}, {hi:g}]")
    if not np.isfinite(s).all() or (s <= 0).any():
        raise ValueError("s must be finite and > 0")
    return x.reshape(-1), s.reshape(-1)


def far_edge(x: np.ndarray) -> np.ndarray:
    """Each pixel's distance to the farther edge of the pixel range [0, 1]: max(x, 1 - x).

    Parameters
    ----------
    x : numpy.ndarray
        An image, every pixel in [0, 1].

    Returns
    -------
    numpy.ndarray of float64, shape of `x`
    """
    x = np.asarray(x, np.float64)
    lo, hi = PIXEL_RANGE
    if not np.isfinite(x).all() or (x < lo).any() or (x > hi).any():
        raise ValueError(f"x must have every pixel in [{lo:g}, {hi:g}]")
    return np.maximum(x - lo, hi - x)


def box_inside_log10(x: np.ndarray, s: np.ndarray) -> float:
    """log10 of the fraction of the axis-aligned box x ± s (a region's bounding box) that lies inside [0, 1]^d.

    Per pixel, the share of [x_i - s_i, x_i + s_i] inside [0, 1]; the box's fraction is their product.

    Parameters
    ----------
    x : numpy.ndarray
        The image, every pixel in [0, 1].
    s : numpy.ndarray
        The semi-axes, finite and > 0, of `x`'s shape (a ball of radius r: s = r everywhere).

    Returns
    -------
    float
        <= 0; 0 when the box lies inside the domain.
    """
    xf, sf = _checked_box(x, s)
    lo, hi = PIXEL_RANGE
    inside = np.minimum(sf, xf - lo) + np.minimum(sf, hi - xf)  # the length of [x - s, x + s] ∩ [0, 1], > 0
    return float(np.log10(inside / (2 * sf)).sum())


def semi_axes_in_range(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Each semi-axis counted only up to the far edge of the pixel range: min(sᵢ, max(xᵢ, 1 - xᵢ)).

    Beyond the far edge, the axis through x reaches no image on either side. ANCER's proxy radius
    R̃ = (Π sᵢ)^(1/d) (§5.1-5.2) is the geometric mean of the semi-axes, so the geometric mean of these is the part of
    it made of axis length within the pixel range.

    Parameters
    ----------
    x : numpy.ndarray
        The image, every pixel in [0, 1].
    s : numpy.ndarray
        The semi-axes, finite and > 0, of `x`'s shape.

    Returns
    -------
    numpy.ndarray of float64, shape of `x`
        In (0, 1]: at most s and at most the distance to the far edge.
    """
    xf, sf = _checked_box(x, s)
    return np.minimum(sf, far_edge(xf)).reshape(np.shape(x))


def linf_radius(s: np.ndarray, norm: str) -> float:
    """The largest ℓ∞ ball (cube) around the centre inside an axis-aligned region with semi-axes s: every change that
    moves no pixel by more than this is inside the region.

    The cube's farthest points are its corners ±ε: inside the ellipsoid ‖δ / s‖₂ <= 1 when ε² Σ sᵢ⁻² <= 1, inside the
    generalized cross-polytope ‖δ / s‖₁ <= 1 when ε Σ sᵢ⁻¹ <= 1 (both regions are symmetric under each axis' sign).

    Parameters
    ----------
    s : numpy.ndarray
        The semi-axes, finite and > 0 (a ball of radius r: r everywhere).
    norm : str
        "l2" (ellipsoid, ℓΣ2) or "l1" (cross-polytope, ℓΛ1).

    Returns
    -------
    float
        ε = (Σ sᵢ⁻²)^(-1/2) for "l2", (Σ sᵢ⁻¹)^(-1) for "l1".
    """
    sf = np.asarray(s, np.float64).reshape(-1)
    if sf.size == 0 or not np.isfinite(sf).all() or (sf <= 0).any():
        raise ValueError("s must be non-empty, finite and > 0")
    if norm == "l2":
        return float(np.sum(sf ** -2.0) ** -0.5)
    if norm == "l1":
        return float(1.0 / np.sum(1.0 / sf))
    raise ValueError(f"norm must be 'l2' or 'l1', got {norm!r}")


def largest_in_domain(x: np.ndarray, s: np.ndarray, level: float = 1.0, cap: float | None = None) -> np.ndarray:
    """The largest change δ (in ℓ2) inside both the ellipsoid ‖δ / s‖₂ <= `level` and the image domain [0, 1]^d,
    with no pixel moved by more than `cap` when it is given.

    Maximizing Σ δᵢ² under Σ δᵢ² / sᵢ² <= level² and |δᵢ| <= cᵢ, cᵢ = min(the distance to the far edge
    (`far_edge`), cap), is a fractional knapsack in uᵢ = δᵢ² (value uᵢ, cost uᵢ / sᵢ², at most cᵢ² each), solved
    exactly by greedy filling: the pixels are filled in decreasing sᵢ (the region's longest axes first), each moved
    by cᵢ towards the far edge of [0, 1], until the ellipsoid's budget is spent; the last pixel moves part of the way.

    Parameters
    ----------
    x : numpy.ndarray
        The image, every pixel in [0, 1].
    s : numpy.ndarray
        The ellipsoid's semi-axes, finite and > 0, of `x`'s shape.
    level : float, default 1.0
        The ellipsoid's level, > 0 (1: its boundary).
    cap : float, optional
        The largest move of one pixel (an ℓ∞ budget), > 0; None: up to the far edge.

    Returns
    -------
    numpy.ndarray of float64, shape of `x`
        δ, with x + δ in [0, 1]^d, ‖δ‖∞ <= `cap` and ‖δ / s‖₂ = `level` (or less, when every pixel has moved by
        cᵢ).
    """
    if not level > 0:
        raise ValueError(f"level must be > 0, got {level!r}")
    if cap is not None and not (np.isfinite(cap) and cap > 0):
        raise ValueError(f"cap must be a finite number > 0 or None, got {cap!r}")
    xf, sf = _checked_box(x, s)
    reach = far_edge(xf) if cap is None else np.minimum(far_edge(xf), cap)
    sign = np.where(xf - PIXEL_RANGE[0] > PIXEL_RANGE[1] - xf, -1.0, 1.0)
    order = np.argsort(-sf, kind="stable")
    cost = (reach[order] / sf[order]) ** 2              # of moving each pixel by its whole reach
    spent = np.cumsum(cost)
    full = spent <= level ** 2
    u = np.where(full, reach[order] ** 2, 0.0)
    k = int(full.sum())
    if k < len(order):                                   # the first pixel that does not fit moves part of the way
        left = level ** 2 - (spent[k - 1] if k else 0.0)
        u[k] = max(left, 0.0) * sf[order[k]] ** 2
    delta = np.zeros_like(xf)
    delta[order] = sign[order] * np.sqrt(u)
    return delta.reshape(np.shape(x))
