"""Numerical checks of UCAN (seed 003, universally amplifying randomized smoothing):

- Thm. 3.2, Gaussian noise (p = 2): the anisotropic certificate for noise λ σ ⊙ ε + μ, whatever the mean offset μ;
- Thm. 3.2, uniform noise (p = 1): the region (sum_i |δ'_i / σ_i|^p)^(1/p) <= R (the printed form has no
  absolute values);
- Cor. 3.3: ||δ'||_p <= min σ_i R implies ||δ'/σ||_p <= R, and the proof's step (printed ||δ'||_p <= ||δ'/min σ||_p,
  corrected ||δ'/σ||_p <= ||δ'/min σ||_p);
- Thm. C.2 (and Lemma D.3 with mixed p_i): the super-ellipsoid volume, by Monte Carlo, by quadrature, and equal to
  ANCER's volumes for p = 1, 2.

The enclosed-ball radius of Cor. 3.3 for p = 1, 2 is also checked with ANCER §5 (`ancer.check_ancer_enclosed_radius`).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy.integrate import quad
from scipy.special import gammaln

from ..core import regions
from .common import (
    EXACT_TOL,
    MC_Z,
    QUAD_TOL,
    CheckResult,
    at_least,
    at_most,
    check_stream,
    cross_polytope_region,
    ellipsoid_region_inv,
    gaussian_certificate_margins,
    gaussian_gap,
    instance_count,
    lp_norm,
    mc_volume,
    uniform_certificate_margins,
    uniform_gap,
    unit_sphere,
)

__all__ = [
    "ucan_printed_l1_region", "check_ucan_thm32_gaussian", "check_ucan_thm32_uniform", "ucan_cor33_step",
    "ucan_printed_cor33_step", "check_ucan_cor33", "superellipsoid_volume", "UCAN_C2_CASES", "check_ucan_thm_c2",
    "check_ucan_thm_c2_exact",
]


# --------------------------------------------------------------------------------------------------
# UCAN: Theorem 3.2, Corollary 3.3, Theorem C.2
# --------------------------------------------------------------------------------------------------


def ucan_printed_l1_region(delta: np.ndarray, scale: np.ndarray, radius: float) -> np.ndarray:
    """UCAN Thm 3.2 as printed for p = 1: (sum_i (δ_i / σ_i)^p)^(1/p) <= R without absolute values.

    Parameters
    ----------
    delta : numpy.ndarray, shape (..., n)
        The offsets δ'.
    scale : numpy.ndarray, shape (n,)
        σ.
    radius : float
        R (with a relative slack of 1e-12).

    Returns
    -------
    numpy.ndarray of bool, shape (...)
    """
    return (delta / scale).sum(axis=-1) <= radius * (1 + 1e-12)


def check_ucan_thm32_gaussian(mc_samples: int, seed: int = 0, *,
                              formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = gaussian_gap) -> CheckResult:
    """UCAN Thm. 3.2 (Gaussian, p = 2): noise λ σ ⊙ ε + μ certifies ‖δ'/σ‖_2 <= λ ½(Φ^-1 p_A - Φ^-1 p_B).

    ε ~ N(0, I), whatever the mean offset μ (tight for half-spaces); λ = 0.7. Measured: the worst margin with mean
    offsets (`common.gaussian_certificate_margins`): exact for half-spaces (0 = tight), sampled on a polar grid for
    grid classifiers (>= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (p_A, p_B) -> gap, keyword-only, default `common.gaussian_gap`
        The certified gap (before λ).

    Returns
    -------
    common.CheckResult
    """
    cid = "UCAN Thm. 3.2 (Gaussian, p = 2)"
    rng = check_stream(seed, cid)
    hs, grid = gaussian_certificate_margins(rng, instance_count(mc_samples, 10_000, 8, 60), formula,
                                             ellipsoid_region_inv, rotate=False, offset=True, lam=0.7)
    return at_least(cid, f"worst margin with mean offsets μ: half-spaces exact {hs:.2e} (0 = tight), grids sampled "
                  f"{grid:.2e}", min(hs, grid), 0.0, EXACT_TOL, "closed forms; region sampled on a polar grid")


def check_ucan_thm32_uniform(mc_samples: int, seed: int = 0, *,
                             formula: Callable[..., np.ndarray] = cross_polytope_region) -> CheckResult:
    """UCAN Thm. 3.2 (uniform, p = 1): noise λ σ ⊙ U[-1, 1] certifies (sum_i |δ'_i / σ_i|^p)^(1/p) <= R.

    R is the isotropic radius 2λ(p_A - ½) (binary) = λ (p_A - p_B); λ = 0.7. Measured: the worst margin over the
    region (`common.uniform_certificate_margins`): exact for axis half-spaces (0 = tight), sampled on polar and box
    grids for grid classifiers (>= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (δ', σ, R) -> bool, keyword-only, default `common.cross_polytope_region`
        The region predicate, δ' of shape (k, n) -> (k,) (`ucan_printed_l1_region`: printed).

    Returns
    -------
    common.CheckResult
    """
    cid = "UCAN Thm. 3.2 (uniform, p = 1)"
    rng = check_stream(seed, cid)
    hs, grid = uniform_certificate_margins(rng, instance_count(mc_samples, 10_000, 8, 60), uniform_gap, formula, lam_iso=0.7)
    return at_least(cid, f"worst margin over the region: axis half-spaces exact {hs:.2e} (0 = tight), grids sampled "
                  f"{grid:.2e}", min(hs, grid), 0.0, EXACT_TOL, "closed forms; region sampled on polar and box grids")


def ucan_cor33_step(delta: np.ndarray, sigma: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """UCAN Cor. 3.3's proof step, corrected: ‖δ'/σ‖_p <= ‖δ' / min σ‖_p.

    Parameters
    ----------
    delta : numpy.ndarray, shape (k, n)
        The offsets δ'.
    sigma : numpy.ndarray, shape (n,)
        σ.
    p : float
        The norm; np.inf allowed, p < 1 a quasi-norm.

    Returns
    -------
    lhs, rhs : numpy.ndarray, shape (k,)
        The step's sides.
    """
    return lp_norm(delta / sigma, p), lp_norm(delta / sigma.min(), p)


def ucan_printed_cor33_step(delta: np.ndarray, sigma: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """UCAN Cor. 3.3's proof step as printed: ‖δ'‖_p <= ‖δ' / min σ‖_p (true only when min σ <= 1).

    Parameters
    ----------
    delta : numpy.ndarray, shape (k, n)
        The offsets δ'.
    sigma : numpy.ndarray, shape (n,)
        σ.
    p : float
        The norm; np.inf allowed, p < 1 a quasi-norm.

    Returns
    -------
    lhs, rhs : numpy.ndarray, shape (k,)
        The step's sides.
    """
    return lp_norm(delta, p), lp_norm(delta / sigma.min(), p)


def check_ucan_cor33(mc_samples: int, seed: int = 0, *,
                     formula: Callable[[np.ndarray, np.ndarray, float], tuple] = ucan_cor33_step) -> CheckResult:
    """UCAN Cor. 3.3: ‖δ'‖_p <= min σ_i R implies ‖δ'/σ‖_p <= R (p in {0.5, 1, 2, 3, ∞}).

    The proof's step formula(δ', σ, p) must hold for all δ', and the radius min σ R is attained on the axis of the
    smallest σ. Measured: max(‖δ'/σ‖_p / R - 1 on the sphere ‖δ'‖_p = min σ R, proof step lhs - rhs); 0 = attained
    (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (δ', σ, p) -> (lhs, rhs), keyword-only, default `ucan_cor33_step`
        The proof step's sides (`ucan_printed_cor33_step`: printed).

    Returns
    -------
    common.CheckResult
    """
    cid = "UCAN Cor. 3.3"
    rng = check_stream(seed, cid)
    worst = -np.inf
    for p in (0.5, 1.0, 2.0, 3.0, np.inf):
        for _ in range(8):
            n = int(rng.integers(2, 7))
            sigma, r = np.exp(rng.uniform(math.log(0.3), math.log(3.0), n)), float(rng.uniform(0.2, 2.0))
            dirs = np.concatenate([unit_sphere(mc_samples // 80, n, p, rng), np.eye(n)])
            delta = min(sigma) * r * dirs
            lhs, rhs = formula(delta, sigma, p)
            worst = max(worst, float((lp_norm(delta / sigma, p) / r).max()) - 1.0, float((lhs - rhs).max()))
    return at_most(cid, "max(||δ'/σ||_p / R - 1 on the sphere ||δ'||_p = min σ R, proof step lhs - rhs); "
                  "0 = attained", worst, 0.0, EXACT_TOL, "closed form, float64 rounding")


def superellipsoid_volume(sigma: np.ndarray, r: float, p: np.ndarray | float) -> float:
    """UCAN Thm. C.2 / Lemma D.3: the volume of the super-ellipsoid {sum_i |δ_i / (σ_i R)|^(p_i) <= 1}.

    V = 2^d prod_i σ_i R Γ(1 + 1/p_i) / Γ(1 + sum_i 1/p_i) (= (2RΓ(1 + 1/p))^d prod σ_i / Γ(1 + d/p) for equal p_i),
    computed in log space.

    Parameters
    ----------
    sigma : numpy.ndarray, shape (d,)
        σ.
    r : float
        R.
    p : float or numpy.ndarray, shape (d,)
        The exponents p_i (one for all, or one each).

    Returns
    -------
    float
    """
    sigma = np.asarray(sigma, np.float64)
    p = np.broadcast_to(np.asarray(p, np.float64), sigma.shape)
    log_v = (np.log(2 * sigma * r) + gammaln(1 + 1 / p)).sum() - gammaln(1 + (1 / p).sum())
    return float(np.exp(log_v))


UCAN_C2_CASES = ((2, 0.5), (3, 0.5), (2, 1.0), (4, 1.0), (2, 2.0), (5, 2.0), (3, 3.0), (4, 4.0), (3, (0.5, 1.5, 3.0)))


def check_ucan_thm_c2(mc_samples: int, seed: int = 0, *,
                      formula: Callable[..., float] = superellipsoid_volume) -> CheckResult:
    """UCAN Thm. C.2 (and Lemma D.3 with mixed p_i): the super-ellipsoid volume against Monte Carlo.

    Over the (d, p) of `UCAN_C2_CASES`. Measured: the largest |MC volume - formula| / SE (<= `common.MC_Z`).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (σ, R, p) -> volume, keyword-only, default `superellipsoid_volume`
        The volume.

    Returns
    -------
    common.CheckResult
    """
    cid = "UCAN Thm. C.2 (Monte Carlo)"
    rng = check_stream(seed, cid)
    z = 0.0
    for d, p in UCAN_C2_CASES:
        sigma, r = rng.uniform(0.3, 2.0, d), float(rng.uniform(0.5, 2.0))
        pv = np.broadcast_to(np.asarray(p, np.float64), (d,))
        est, se = mc_volume(lambda x: (np.abs(x / (sigma * r)) ** pv).sum(axis=1) <= 1, sigma * r, mc_samples, rng)
        z = max(z, abs(est - formula(sigma, r, p)) / se)
    return at_most(cid, f"max |MC volume - formula| / SE over (d, p) = {UCAN_C2_CASES}", z, MC_Z, 0.0,
                  f"{MC_Z:.0f} Monte Carlo standard errors")


def check_ucan_thm_c2_exact(mc_samples: int, seed: int = 0, *,
                            formula: Callable[..., float] = superellipsoid_volume) -> CheckResult:
    """UCAN Thm. C.2 in closed form: against 2-D quadrature, and equal to ANCER's volumes for p = 1, 2.

    The quadrature is 4 ∫ c2 (1 - (x/c1)^p1)^(1/p2) dx for p in [0.3, 6]; ANCER's volumes are Prop. 4 (p = 1) and
    §5.1 (p = 2) in d = 1..50. Measured: the largest relative error against adaptive quadrature and against ANCER's
    log-volumes (<= 0, within 1e-8: quadrature epsrel 1e-12, with room for the integrable endpoint singularity when
    p < 1).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (σ, R, p) -> volume, keyword-only, default `superellipsoid_volume`
        The volume.

    Returns
    -------
    common.CheckResult
    """
    cid = "UCAN Thm. C.2 (quadrature, = ANCER for p = 1, 2)"
    rng = check_stream(seed, cid)
    worst = 0.0
    for _ in range(20):
        c, p = rng.uniform(0.3, 2.0, 2), np.exp(rng.uniform(math.log(0.3), math.log(6.0), 2))
        area = 4 * quad(lambda x: c[1] * max(0.0, 1 - (x / c[0]) ** p[0]) ** (1 / p[1]), 0, c[0],
                        epsabs=0, epsrel=1e-12, limit=200)[0]
        worst = max(worst, abs(formula(c, 1.0, p) / area - 1))
    for d in (1, 2, 5, 20, 50):
        sigma, r = rng.uniform(0.3, 2.0, d), float(rng.uniform(0.5, 2.0))
        for p, norm in ((1.0, regions.L1), (2.0, regions.L2)):
            ancer = float(regions.log_volume(sigma, r, norm))
            worst = max(worst, abs(math.log(formula(sigma, r, p)) - ancer) / max(1.0, abs(ancer)))
    return at_most(cid, "max relative error vs adaptive quadrature and vs ANCER's log-volumes", worst, 0.0, QUAD_TOL,
                  f"quadrature epsrel 1e-12 ({QUAD_TOL:g} allows for the integrable endpoint singularity when p < 1)")
