"""Certified regions and their size measures (ANCER §4-5).

A region certified at x with smoothing scale theta (a vector over the n input dimensions) and gap r
is R = {x + delta : ||Theta^{-1} U^T delta||_p <= r}: an axis-aligned (U = I) or rotated ellipsoid for
p = 2 (Corollary 1, RANCER Eq. 3) and a generalized cross-polytope for p = 1 (Corollary 2). Its
semi-axes are s_i = r * theta_i. All functions work on the last axis and broadcast over leading ones;
sizes are computed in log space so that n = 150,528 neither overflows nor underflows.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, ndtri

from .validation import check_probabilities

L1, L2 = "l1", "l2"
NORMS = (L1, L2)


def _norm(norm: str) -> str:
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {list(NORMS)}, got {norm!r}")
    return norm


def gap_from_lower_bound(p_lower: np.ndarray | float, norm: str) -> np.ndarray:
    """The certificate's gap from a lower bound pA on the top class probability, taking the runner-up
    bound pB = 1 - pA. l2: Corollary 1, (Φ^-1(pA) - Φ^-1(pB)) / 2 = Φ^-1(pA); l1: Corollary 2,
    pA - pB = 2 pA - 1. Returns 0 where pA <= 1/2 (no certificate); p_lower must lie in [0, 1]."""
    p = check_probabilities(p_lower, "p_lower")
    if _norm(norm) == L2:
        gap = ndtri(np.clip(p, 0.5, 1.0))
    else:
        gap = 2.0 * p - 1.0
    return np.where(p > 0.5, gap, 0.0)


def semi_axes(theta: np.ndarray, gap: np.ndarray | float) -> np.ndarray:
    """s_i = gap * theta_i: the region's extent along each (rotated) axis."""
    return np.asarray(gap, dtype=np.float64)[..., None] * np.asarray(theta, dtype=np.float64).reshape(
        *np.shape(gap), -1)


def enclosed_radius(theta: np.ndarray, gap: np.ndarray | float, norm: str,
                    rotation: np.ndarray | None = None) -> np.ndarray:
    """Radius of the largest l_p ball centred at x inside the region (ANCER §5.1-5.2): min_i theta_i * gap.
    A rotation leaves this unchanged for ellipsoids. For one rotated cross-polytope
    {||Λ^-1 U^T d||_1 <= r} the l1 ball of radius rho fits iff rho * max_j ||Λ^-1 U^T e_j||_1 <= r
    (the l1 ball's vertices are ±rho e_j), so rho = r / max_j ||Λ^-1 U^T e_j||_1."""
    g = np.asarray(gap, dtype=np.float64)
    th = np.asarray(theta, dtype=np.float64).reshape(*g.shape, -1)
    if rotation is None or _norm(norm) == L2:
        return g * th.min(axis=-1)
    if th.ndim != 1:
        raise ValueError("theta must be one region's 1-D scale vector when a rotation is given")
    u = np.asarray(rotation, dtype=np.float64)
    column_l1 = np.abs(u.T / th[:, None]).sum(axis=0)  # ||Λ^-1 U^T e_j||_1 for each j
    return g / column_l1.max()


def log_geometric_mean(theta: np.ndarray) -> np.ndarray:
    """log of (prod_i theta_i)^(1/n), computed as mean(log theta)."""
    return np.log(np.asarray(theta, dtype=np.float64)).mean(axis=-1)


def proxy_radius(theta: np.ndarray, gap: np.ndarray | float) -> np.ndarray:
    """ANCER's proxy radius R~ = gap * (prod_i theta_i)^(1/n) (§5.1 for ellipsoids, §5.2 for
    generalized cross-polytopes): the n-th root of the volume up to a constant."""
    g = np.asarray(gap, dtype=np.float64)
    th = np.asarray(theta, dtype=np.float64).reshape(*g.shape, -1)
    return g * np.exp(log_geometric_mean(th))


def log_volume(theta: np.ndarray, gap: np.ndarray | float, norm: str) -> np.ndarray:
    """Natural log of the region's volume. Ellipsoid (§5.1): r^n pi^(n/2) / Γ(n/2 + 1) prod sigma_i.
    Generalized cross-polytope (Proposition 4): (2r)^n / n! prod lambda_i. Rotation leaves it unchanged.
    -inf where gap <= 0."""
    g = np.asarray(gap, dtype=np.float64)
    th = np.asarray(theta, dtype=np.float64).reshape(*g.shape, -1)
    n = th.shape[-1]
    logs = np.log(th).sum(axis=-1)
    with np.errstate(divide="ignore"):
        logr = np.log(np.where(g > 0, g, 0.0))
    if _norm(norm) == L2:
        out = n * logr + logs + 0.5 * n * math.log(math.pi) - gammaln(0.5 * n + 1.0)
    else:
        out = n * (math.log(2.0) + logr) + logs - gammaln(n + 1.0)
    return np.where(g > 0, out, -np.inf)


def region_norm(delta: np.ndarray, scales: np.ndarray, norm: str, rotation: np.ndarray | None = None) -> np.ndarray:
    """||S^-1 U^T delta||_p for displacement(s) delta (..., n) and semi-axes/scales (..., n):
    a point x + delta is in the region with semi-axes s iff this is <= 1."""
    d = np.asarray(delta, dtype=np.float64)
    if rotation is not None:
        d = d @ np.asarray(rotation, dtype=np.float64)  # row-vector form of U^T delta
    z = d / np.asarray(scales, dtype=np.float64)
    return np.sqrt((z * z).sum(axis=-1)) if _norm(norm) == L2 else np.abs(z).sum(axis=-1)


def contains(points: np.ndarray, center: np.ndarray, scales: np.ndarray, norm: str,
             rotation: np.ndarray | None = None) -> np.ndarray:
    """Membership of points (..., n) in the region centred at `center` with semi-axes `scales`."""
    return region_norm(np.asarray(points) - np.asarray(center), scales, norm, rotation) <= 1.0
