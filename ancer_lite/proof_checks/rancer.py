"""Numerical checks of RANCER (seed 002, non-axis-aligned anisotropic certification), §3:

- Eq. 3: smoothing with U ε, ε ~ N(0, Σ), certifies the rotated ellipsoid sqrt(δ^T U Σ^-1 U^T δ) <= r (the
  printed sqrt(δ^T Σ^-1 δ) drops U);
- Eq. 5: Intersect for general ellipsoids, 1 - min_t K(t) against a convex-solver reference;
- Eq. 6: the projection onto a rotated ellipsoid (distance against SLSQP, the equation's residual at its root);
- LargestOutSubset for rotated ellipsoids.

RANCER §4.1's ellipsoid volume is checked with ANCER §5.1 (`ancer.check_ancer_ellipsoid_volume`, rotated
ellipsoids).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..core import rotated
from .common import (
    CONTACT_TOL,
    EXACT_TOL,
    SOLVER_TOL,
    CheckResult,
    at_least,
    at_most,
    check_stream,
    ellipsoid_pair_value,
    ellipsoid_region_inv,
    gaussian_certificate_margins,
    gaussian_gap,
    instance_count,
    projection_distance,
    random_region_pairs,
    uniform_ball,
    unit_sphere,
)

__all__ = [
    "rancer_eq3_region_inv", "rancer_eq3_printed_region_inv", "check_rancer_eq3", "check_rancer_eq5",
    "check_rancer_eq6", "check_rancer_largest_out_subset",
]


# --------------------------------------------------------------------------------------------------
# RANCER Eq. 3 (rotated Gaussian certificate)
# --------------------------------------------------------------------------------------------------


def rancer_eq3_region_inv(rotation: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """RANCER Eq. 3 corrected: the region is sqrt(δ^T U Σ^-1 U^T δ) <= r, so M^-1 = U Σ U^T.

    Parameters
    ----------
    rotation : numpy.ndarray, shape (n, n)
        U.
    sigma : numpy.ndarray, shape (n,)
        The scales σ (Σ = diag(σ²)).

    Returns
    -------
    numpy.ndarray, shape (n, n)
        M^-1.
    """
    return ellipsoid_region_inv(rotation, sigma)


def rancer_eq3_printed_region_inv(rotation: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """RANCER Eq. 3 as printed: sqrt(δ^T Σ^-1 δ) <= r, i.e. the unrotated ellipsoid (U dropped).

    Parameters
    ----------
    rotation : numpy.ndarray, shape (n, n)
        U.
    sigma : numpy.ndarray, shape (n,)
        The scales σ (Σ = diag(σ²)).

    Returns
    -------
    numpy.ndarray, shape (n, n)
        M^-1 = diag(σ²).
    """
    return np.diag(sigma**2)


def check_rancer_eq3(mc_samples: int, seed: int = 0, *,
                     formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = rancer_eq3_region_inv) -> CheckResult:
    """RANCER Eq. 3: smoothing with U ε, ε ~ N(0, Σ), certifies {sqrt(δ^T U Σ^-1 U^T δ) <= ½(Φ^-1 p_A - Φ^-1 p_B)}.

    Measured: the worst margin on the rotated certified ellipsoid (`common.gaussian_certificate_margins`): exact for
    half-spaces, sampled on a 24 x 720 polar grid for grid classifiers in rotated frames (>= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (U, σ) -> M^-1, keyword-only, default `rancer_eq3_region_inv`
        The region's inverse matrix, of shape (n, n).

    Returns
    -------
    common.CheckResult
    """
    cid = "RANCER Eq. 3"
    rng = check_stream(seed, cid)
    hs, grid = gaussian_certificate_margins(rng, instance_count(mc_samples, 10_000, 8, 60), gaussian_gap, formula)
    return at_least(cid, f"worst margin on the rotated certified ellipsoid: half-spaces exact {hs:.2e}, "
                  f"grids (rotated frames) sampled {grid:.2e}", min(hs, grid), 0.0, EXACT_TOL,
                  "closed forms; grid region sampled on a 24 x 720 polar grid")


# --------------------------------------------------------------------------------------------------
# RANCER §3: Eq. 5, Eq. 6, LargestOutSubset for rotated ellipsoids
# --------------------------------------------------------------------------------------------------


def check_rancer_eq5(mc_samples: int, seed: int = 0, *,
                     formula: Callable[..., tuple] = rotated.minimize_k) -> CheckResult:
    """RANCER Eq. 5: 1 - min_t K(t) equals the convex-solver value v* = min_x max(q_Q, q_R).

    So K(t*) < 0 iff the rotated ellipsoids are disjoint; K(t*) also matches Eq. 5 evaluated literally and no point of
    a 2001-point t-grid is lower. Measured: max(|v* - (1 - K*)| / max(1, v*), |Eq. 5 at t* - K*|, K* - grid min)
    (<= 0, to the SLSQP reference's accuracy).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (a, U_a, s_a, b, U_b, s_b) -> (t*, K*), keyword-only, default `rotated.minimize_k`
        min_t K(t) of a rotated pair.

    Returns
    -------
    common.CheckResult
    """
    cid = "RANCER Eq. 5"
    rng = check_stream(seed, cid)
    worst, disjoint = 0.0, 0
    pairs = random_region_pairs(rng, instance_count(mc_samples, 2000, 20, 300), rotate=True)
    grid = np.linspace(1e-4, 1 - 1e-4, 2001)
    for a, ua, sa, b, ub, sb in pairs:
        qa, qb = rotated.precision(ua, sa), rotated.precision(ub, sb)
        t, kmin = formula(a, ua, sa, b, ub, sb)
        v = ellipsoid_pair_value(a, qa, b, qb)
        literal = float(rotated.k_function(t, a, qa, b, qb))
        below = float(kmin) - float(rotated.k_function(grid, a, qa, b, qb).min())
        worst = max(worst, abs(v - (1 - float(kmin))) / max(1.0, v), abs(literal - float(kmin)), below)
        disjoint += int(v > 1)
    return at_most(cid, f"max(|v* - (1 - K*)| / max(1, v*), |Eq. 5 at t* - K*|, K* - grid min) "
                  f"({disjoint} of {len(pairs)} pairs disjoint)", worst, 0.0, SOLVER_TOL, "SLSQP reference, ftol 1e-15")


def check_rancer_eq6(mc_samples: int, seed: int = 0, *,
                     formula: Callable[..., tuple] = rotated.project_onto_ellipsoid) -> CheckResult:
    """RANCER Eq. 6: its root λ gives the projection onto a rotated ellipsoid.

    The distance matches SLSQP (and is a lower bound) and Eq. 6 evaluated literally at λ vanishes. Measured:
    max(|distance - SLSQP| / SLSQP, |Eq. 6 residual at λ|, distance / SLSQP - 1) (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (y, U, s) -> (x*, distance, λ), keyword-only, default `rotated.project_onto_ellipsoid`
        The projection of y onto the rotated ellipsoid.

    Returns
    -------
    common.CheckResult
    """
    cid = "RANCER Eq. 6"
    rng = check_stream(seed, cid)
    worst = 0.0
    for a, ua, sa, b, _, _ in random_region_pairs(rng, instance_count(mc_samples, 2000, 20, 300), rotate=True):
        y, q = b - a, rotated.precision(ua, sa)
        ref = projection_distance(y, q)
        if ref > 0:
            _, dist, lam = formula(y, ua, sa)
            residual = float(rotated.eq6_residual(lam, y, q))
            worst = max(worst, abs(float(dist) - ref) / ref, abs(residual), float(dist) / ref - 1 - 1e-12)
    return at_most(cid, "max(|distance - SLSQP| / SLSQP, |Eq. 6 residual at λ|)", worst, 0.0, SOLVER_TOL,
                  "SLSQP reference, ftol 1e-15")


def check_rancer_largest_out_subset(mc_samples: int, seed: int = 0, *,
                                    formula: Callable[..., np.ndarray] = rotated.largest_out_subset) -> CheckResult:
    """RANCER LargestOutSubset: the ℓ2 ball around r of the returned radius misses S_Q and lies inside S_R.

    Measured: ball points inside S_Q or outside S_R (exact counting; the ball touches S_R by design, "outside" is
    > 1 + `common.CONTACT_TOL`) (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (a, U_a, s_a, b, s_b) -> radius, keyword-only, default `rotated.largest_out_subset`
        The ball's radius (<= 0: none).

    Returns
    -------
    common.CheckResult
    """
    cid = "RANCER LargestOutSubset"
    rng = check_stream(seed, cid)
    bad, used = 0, 0
    per = instance_count(mc_samples, 200, 100, 5000)
    for a, ua, sa, b, ub, sb in random_region_pairs(rng, instance_count(mc_samples, 2000, 20, 300), rotate=True):
        rho = float(formula(a, ua, sa, b, sb))
        if rho <= 0:
            continue
        used += 1
        n = a.size
        ball = b + rho * np.concatenate([uniform_ball(per, n, 2.0, rng), unit_sphere(per, n, 2.0, rng)])
        inside_q = rotated.quadratic_form(ball, a, rotated.precision(ua, sa)) <= 1
        outside_r = rotated.quadratic_form(ball, b, rotated.precision(ub, sb)) > 1 + CONTACT_TOL
        bad += int(inside_q.sum() + outside_r.sum())
    return at_most(cid, f"ball points inside S_Q or outside S_R ({used} pairs with r outside S_Q)", bad, 0, 0,
                  f"exact counting; the ball touches S_R by design ('outside': > 1 + {CONTACT_TOL:g})")
