"""Numerical checks of the ANCER paper (seed 000; the poster, seed 001, states the same results).

- §4: Prop. 1 (dual-norm Lipschitz bound) and Thm. 1 (certified radius gap / 2L);
- §4.1: Prop. 2 (Φ^-1 g_Σ is 1-Lipschitz; tight for half-spaces) and Cor. 1 (the ellipsoid certificate);
- §4.2: Prop. 3 (g_Λ is ½-Lipschitz; the proof's shift ±λ1 against the printed ±1) and Cor. 2 (the generalized
  cross-polytope certificate);
- §5: Prop. 4 (cross-polytope volume, both proofs), §5.1's ellipsoid volume, Prop. 5 (zonotope bounds) and the
  largest l_p ball inside a certified region (§5.1-5.2);
- App. B.1: Prop. 6 (printed sqrt(2/π), tight 1/sqrt(2π), score differences), Prop. 7 (printed, tight, the Jensen
  step) and Cor. 3 (printed, via Prop. 6, tight constants; the tight one attained) for Gaussian mixtures;
- App. D: Lemmas 1-4, Prop. 8 (K convex; K* < 0 iff disjoint), D.3, D.4 (projection), D.4/D.5 LargestOutSubset
  (printed inner radius min B_ii against min s_i) and D.5 (facet hyperplane sign, l1 radius: printed, exact,
  Hölder);

plus the data of notebook 01's App. D figures (`k_curves`, `d5_counterexample_data`).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy.optimize import linprog
from scipy.special import ndtr

from ..core import geometry, regions, rotated
from .common import (
    CONTACT_TOL,
    EXACT_TOL,
    FD_TOL,
    LP_TOL,
    MC_Z,
    SOLVER_TOL,
    CheckResult,
    SmoothedInstance,
    at_least,
    at_most,
    check_stream,
    close_to,
    cross_polytope_region,
    ellipsoid_pair_value,
    ellipsoid_region_inv,
    fd_gradient,
    finite_max,
    gaussian_certificate_margins,
    gaussian_gap,
    gaussian_instances,
    grid_gaussian_scores,
    grid_uniform_scores,
    halfspace_gaussian_scores,
    halfspace_uniform_scores,
    instance_count,
    lipschitz_ratios,
    lp_norm,
    max_lipschitz_ratio,
    mc_volume,
    pairwise_differences,
    probit_scores,
    projection_distance,
    random_covariance,
    random_grid_classifier,
    random_region_pairs,
    random_rotation,
    sigma_norm,
    top_two,
    uniform_ball,
    uniform_certificate_margins,
    uniform_gap,
    unit_sphere,
)

__all__ = [
    "NORM_P", "DUAL", "dual_norm_name", "check_ancer_prop1", "theorem1_radius", "check_ancer_theorem1",
    "check_ancer_prop2", "check_ancer_prop2_attained", "check_ancer_cor1", "lambda_l1_norm", "check_ancer_prop3",
    "prop3_shift", "prop3_printed_shift", "check_ancer_prop3_proof", "check_ancer_cor2", "cross_polytope_volume",
    "check_ancer_prop4", "ellipsoid_volume", "check_ancer_ellipsoid_volume", "zonotope_volume", "check_ancer_prop5",
    "check_ancer_enclosed_radius", "L_PROP6_PRINTED", "L_PROP7_PRINTED", "L_TIGHT", "check_ancer_prop6",
    "check_ancer_prop6_tight", "check_ancer_prop6_difference", "mixture_instances", "check_ancer_prop7",
    "check_ancer_prop7_tight", "mixture_norm_matrix", "check_ancer_prop7_jensen", "mixture_flip_radius",
    "CERTIFICATE_ATTAINED_TOL", "cor3_worst_ratio", "check_ancer_cor3", "check_ancer_cor3_prop6",
    "check_ancer_cor3_tight", "check_ancer_cor3_attained", "polytope_pair_value",
    "l1_nearest_point", "check_ancer_lemma1", "lemma2_combination", "check_ancer_lemma2", "k_forms",
    "check_ancer_lemma3", "check_ancer_prop8_convex", "check_ancer_prop8_disjoint", "check_ancer_d3",
    "check_ancer_d4_projection", "ancer_inner_radius", "ancer_printed_inner_radius",
    "check_ancer_d45_largest_out_subset", "hyperplane_projection", "check_ancer_lemma4", "d5_normal",
    "d5_printed_normal", "check_ancer_d5_hyperplane", "d5_radius", "d5_printed_radius", "d5_holder_radius",
    "D5_COUNTEREXAMPLE", "check_ancer_d5_sound", "check_ancer_d5_exact", "k_curves", "d5_counterexample_data",
]


# --------------------------------------------------------------------------------------------------
# ANCER §4: Proposition 1, Theorem 1
# --------------------------------------------------------------------------------------------------


NORM_P = {"l1": 1.0, "l2": 2.0, "linf": np.inf}
DUAL = {"l1": "linf", "l2": "l2", "linf": "l1"}


def dual_norm_name(name: str) -> str:
    """The dual norm's name (Hölder), ANCER Prop. 1: the dual of l1 is linf, of l2 is l2, of linf is l1.

    Parameters
    ----------
    name : str
        "l1", "l2" or "linf".

    Returns
    -------
    str
    """
    return DUAL[name]


def _dual_maximizer(grad: np.ndarray, name: str) -> np.ndarray:
    """A unit-‖.‖_name vector d maximizing grad.d (so grad.d = ‖grad‖_dual); 0 where grad = 0."""
    if name == "l2":
        length = np.linalg.norm(grad, axis=-1, keepdims=True)
        return grad / np.where(length > 0, length, 1.0)
    if name == "linf":
        return np.sign(grad)
    k = np.abs(grad).argmax(axis=-1)
    return np.eye(grad.shape[-1])[k] * np.sign(np.take_along_axis(grad, k[..., None], -1))


def check_ancer_prop1(mc_samples: int, seed: int = 0, *,
                      formula: Callable[[str], str] = dual_norm_name) -> CheckResult:
    """ANCER Prop. 1: sup ‖∇g‖_* <= L implies |g(x) - g(y)| <= L ‖x - y‖ (‖.‖ the dual of ‖.‖_*).

    g = v^T tanh(W x + b) has ∇g = W^T (v ⊙ sech²), so sup ‖∇g‖_* <= L = sum_j |v_j| ‖W_j‖_*, with ‖.‖_* =
    formula(name). One-unit nets attain L at w.x + b = 0 along the dual maximizer. Measured: the largest
    |g(x) - g(y)| / (L ‖x - y‖) over tanh nets, ℓ1/ℓ2/ℓ∞, points and directions (<= 1).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (str) -> str, keyword-only, default `dual_norm_name`
        The name of the dual norm of a norm name.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 1"
    rng = check_stream(seed, cid)
    points = instance_count(mc_samples, 200, 50, 4000)
    worst = -np.inf
    for name, p in NORM_P.items():
        dual_p = NORM_P[formula(name)]
        for units in (1, 1, 4, 16):
            n = int(rng.integers(2, 6))
            w, b, v = rng.normal(size=(units, n)), rng.normal(size=units), rng.normal(size=units)
            bound = float((np.abs(v) * lp_norm(w, dual_p)).sum())
            g = lambda z: (np.tanh(z @ w.T + b) @ v)[:, None]  # noqa: E731
            x = rng.normal(size=(points, n))
            x[: points // 2] -= ((x[: points // 2] @ w[0] + b[0]) / (w[0] @ w[0]))[:, None] * w[0]
            grad = fd_gradient(g, x)[:, 0, :]
            dirs = np.concatenate([_dual_maximizer(grad, name)[:, None, :], rng.normal(size=(points, 2, n))], 1)
            r = lipschitz_ratios(g, x, dirs, lambda d: lp_norm(d, p), (1e-4, 0.5))
            worst = max(worst, finite_max(r) / bound)
    return at_most(cid, "max over tanh nets, l1/l2/linf, points, directions of |g(x)-g(y)| / (L ||x-y||)",
                  worst, 1.0, FD_TOL, "central differences at step 1e-4 (rounding ~1e-12, truncation ~1e-8)")


def theorem1_radius(gap: np.ndarray, lipschitz: float) -> np.ndarray:
    """ANCER Theorem 1's certified radius (g_cA - max_{c != cA} g_c) / (2 L).

    Parameters
    ----------
    gap : numpy.ndarray
        The score gaps g_cA - max_{c != cA} g_c.
    lipschitz : float or numpy.ndarray
        The Lipschitz constant L of every score, broadcast against `gap`.

    Returns
    -------
    numpy.ndarray, shape of `gap`
    """
    return gap / (2.0 * lipschitz)


def check_ancer_theorem1(mc_samples: int, seed: int = 0, *,
                         formula: Callable[[np.ndarray, float], np.ndarray] = theorem1_radius) -> CheckResult:
    """ANCER Thm. 1: if every g^i is L-Lipschitz under ‖.‖_*, argmax is constant on ‖δ‖ <= gap / (2L).

    Linear scores g^c(x) = C_c.x + b_c have L = max_c ‖C_c‖_* and the exact worst case over the ball of radius ρ is
    min_c [(g_A - g_c)(x) - ρ ‖C_A - C_c‖_*]; it is >= 0 and attains 0 when C_B = -C_A. Measured: the smallest
    exact worst-case margin / gap over linear 4-class scores (ℓ1/ℓ2/ℓ∞) (>= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (gap, L) -> radius, keyword-only, default `theorem1_radius`
        The certified radius, arrays of shape (m,).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Thm. 1"
    rng = check_stream(seed, cid)
    num = instance_count(mc_samples, 200, 50, 4000)
    worst = np.inf
    for name in NORM_P:
        dual_p = NORM_P[DUAL[name]]
        for antipodal in (False, True):
            k, n = 4, int(rng.integers(2, 6))
            c = rng.normal(size=(num, k, n))
            if antipodal:
                c[:, 1] = -c[:, 0]
            bias = rng.normal(size=(num, k))
            x = rng.normal(size=(num, n))
            scores = np.einsum("mkn,mn->mk", c, x) + bias
            ca, pa, pb = top_two(scores)
            lip = lp_norm(c, dual_p).max(axis=1)
            rho = formula(pa - pb, lip)
            ca_row = np.take_along_axis(c, ca[:, None, None], 1)
            worst_case = (pa[:, None] - scores) - rho[:, None] * lp_norm(ca_row - c, dual_p)
            worst_case[np.arange(num), ca] = np.inf
            worst = min(worst, float((worst_case.min(axis=1) / (pa - pb)).min()))
    return at_least(cid, "min over linear K-class scores (l1/l2/linf) of the exact worst-case margin / gap "
                  "on the certified ball", worst, 0.0, EXACT_TOL, "closed form, float64 rounding")


# --------------------------------------------------------------------------------------------------
# ANCER §4.1: Proposition 2, Corollary 1
# --------------------------------------------------------------------------------------------------


def check_ancer_prop2(mc_samples: int, seed: int = 0, *,
                      formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = sigma_norm) -> CheckResult:
    """ANCER Prop. 2: Φ^-1(g_Σ) is 1-Lipschitz, |Φ^-1 g(x) - Φ^-1 g(y)| <= ‖x - y‖_{Σ,2}.

    Measured by two-point ratios (`common.max_lipschitz_ratio`) in the norm formula(δ, Σ) on random grid
    classifiers and half-spaces; Φ^-1 only where 1e-4 < g < 1 - 1e-4 (<= 1).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (δ, Σ) -> norm, keyword-only, default `common.sigma_norm`
        The norm of δ of shape (k, n) under Σ of shape (n, n): (k,).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 2"
    rng = check_stream(seed, cid)
    ratio = max_lipschitz_ratio(gaussian_instances(rng, instance_count(mc_samples, 1000, 30, 2000)), probit_scores, formula, rng)
    return at_most(cid, f"max ratio |Φ^-1 g(x) - Φ^-1 g(y)| / ||x - y||_Σ,2 (grids {ratio['grid']:.4f}, "
                  f"half-spaces {ratio['half-space']:.6f})", max(ratio.values()), 1.0, FD_TOL,
                  "two-point ratios of closed forms; Φ^-1 only where 1e-4 < g < 1 - 1e-4")


def check_ancer_prop2_attained(mc_samples: int, seed: int = 0, *,
                               formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = sigma_norm) -> CheckResult:
    """ANCER Prop. 2 is tight: the half-space f* of its proof attains L = 1.

    Φ^-1(g) = (w.x + b) / ‖Σ^½ w‖ is linear, with ratio exactly 1 along Σ w. Measured: the largest ratio over
    half-spaces f* = 1[w.z + b >= 0] (= 1).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (δ, Σ) -> norm, keyword-only, default `common.sigma_norm`
        The norm of δ of shape (k, n) under Σ of shape (n, n): (k,).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 2 (f* attains L = 1)"
    rng = check_stream(seed, cid)
    halfspaces = [i for i in gaussian_instances(rng, instance_count(mc_samples, 1000, 30, 2000)) if i.kind == "half-space"]
    ratio = max_lipschitz_ratio(halfspaces, probit_scores, formula, rng)["half-space"]
    return close_to(cid, "max ratio for half-spaces f* = 1[w.z + b >= 0]", ratio, 1.0, FD_TOL,
                  "linear Φ^-1∘g: rounding only")


def check_ancer_cor1(mc_samples: int, seed: int = 0, *,
                     formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = gaussian_gap) -> CheckResult:
    """ANCER Cor. 1: argmax g_Σ is constant on ‖δ‖_{Σ,2} <= ½ (Φ^-1(p_A) - Φ^-1(p_B)) (tight for half-spaces).

    Measured: the worst margin on the certified ellipsoid (`common.gaussian_certificate_margins`): exact 1 - r/r* for
    half-spaces (0 = tight), a sampled relative margin on a 24 x 720 polar grid for grid classifiers (>= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (p_A, p_B) -> gap, keyword-only, default `common.gaussian_gap`
        The certified gap.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Cor. 1"
    rng = check_stream(seed, cid)
    hs, grid = gaussian_certificate_margins(rng, instance_count(mc_samples, 10_000, 8, 60), formula, ellipsoid_region_inv)
    return at_least(cid, f"worst margin on the certified ellipsoid: half-spaces exact 1 - r/r* = {hs:.2e} "
                  f"(0 = tight), grids sampled relative margin {grid:.2e}", min(hs, grid), 0.0, EXACT_TOL,
                  "closed forms; grid region sampled on a 24 x 720 polar grid")


# --------------------------------------------------------------------------------------------------
# ANCER §4.2: Proposition 3, Corollary 2
# --------------------------------------------------------------------------------------------------


def lambda_l1_norm(delta: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """‖δ‖_{Λ,1} = ‖Λ^-1 δ‖_1, whose dual is ‖Λ x‖_∞ (ANCER Prop. 3).

    Parameters
    ----------
    delta : numpy.ndarray, shape (..., n)
        The vectors.
    lam : numpy.ndarray, shape (n,)
        The diagonal of Λ (> 0).

    Returns
    -------
    numpy.ndarray, shape (...)
    """
    return np.abs(delta / lam).sum(axis=-1)


def _uniform_instances(rng: np.random.Generator, points: int):
    """(scores, λ, points, kind): 2-D/3-D axis-aligned grid classifiers and axis half-spaces under U[-λ, λ]."""
    out = []
    for n, num in ((2, 4), (3, 3)):
        for _ in range(num):
            clf = random_grid_classifier(rng, n, cuts=3 if n == 2 else 2, rotate=False)
            lam = np.exp(rng.uniform(math.log(0.2), math.log(1.5), n))
            out.append((lambda z, c=clf, l=lam: grid_uniform_scores(c, z, l), lam, rng.uniform(-2.5, 2.5, (points, n)),
                        "grid"))
    for n in (2, 4):
        lam = np.exp(rng.uniform(math.log(0.2), math.log(1.5), n))
        k, c = int(rng.integers(n)), float(rng.normal())
        x = rng.normal(size=(points, n))
        x[:, k] = c + rng.uniform(-0.9, 0.9, points) * lam[k]          # inside the linear ramp
        out.append((lambda z, k=k, c=c, l=lam: halfspace_uniform_scores(k, c, z, l), lam, x, "half-space"))
    return out


def check_ancer_prop3(mc_samples: int, seed: int = 0, *,
                      formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = lambda_l1_norm) -> CheckResult:
    """ANCER Prop. 3: g_Λ is ½-Lipschitz, |g(x) - g(y)| <= ½ ‖Λ^-1 (x - y)‖_1 (attained by half-spaces).

    Measured: the largest two-point ratio |g(x) - g(y)| / formula(x - y, λ) over axis-aligned grid classifiers and
    axis half-spaces under uniform noise (<= ½).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (δ, λ) -> norm, keyword-only, default `lambda_l1_norm`
        The norm of δ of shape (k, n) for λ of shape (n,): (k,).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 3"
    rng = check_stream(seed, cid)
    worst: dict[str, float] = {}
    for scores, lam, x, kind in _uniform_instances(rng, instance_count(mc_samples, 1000, 30, 2000)):
        n = x.shape[1]
        dirs = np.concatenate([np.diag(lam), rng.normal(size=(3, n)) * lam])
        r = lipschitz_ratios(scores, x, np.broadcast_to(dirs, (x.shape[0],) + dirs.shape),
                             lambda d, l=lam: formula(d, l), (1e-4, 0.3))
        worst[kind] = max(worst.get(kind, -np.inf), finite_max(r))
    return at_most(cid, f"max ratio |g(x) - g(y)| / ||Λ^-1(x - y)||_1 (grids {worst['grid']:.4f}, half-spaces "
                  f"{worst['half-space']:.6f}: attained)", max(worst.values()), 0.5, FD_TOL,
                  "two-point ratios of piecewise-polynomial closed forms")


def prop3_shift(lam1: float) -> float:
    """ANCER Prop. 3's proof, corrected: λ1 ∂g/∂x1 = 2^-n ∫ [f(x1 + λ1, ·) - f(x1 - λ1, ·)] (shift ±λ1).

    Parameters
    ----------
    lam1 : float
        λ1.

    Returns
    -------
    float
        The shift, λ1.
    """
    return lam1


def prop3_printed_shift(lam1: float) -> float:
    """ANCER Prop. 3's proof as printed: f(x1 + 1, ·) - f(x1 - 1, ·) (shift ±1).

    Parameters
    ----------
    lam1 : float
        λ1 (unused: the printed shift is 1).

    Returns
    -------
    float
        1.0.
    """
    return 1.0


def check_ancer_prop3_proof(mc_samples: int, seed: int = 0, *,
                            formula: Callable[[float], float] = prop3_shift) -> CheckResult:
    """ANCER Prop. 3's proof identity λ1 ∂g/∂x1 = ½ [ĝ(x1 + λ1) - ĝ(x1 - λ1)].

    ĝ is the smoothing over the other coordinates with x1 fixed (= 2^-n ∫_{[-1,1]^(n-1)} [f(x1 + λ1, x̂ + Λ̂ε̂) -
    f(x1 - λ1, ·)] dε̂). Measured: the largest |λ1 ∂g/∂x1 - ½[ĝ(x1 + shift) - ĝ(x1 - shift)]| over grid classifiers,
    away from g's kinks in x1 (<= 0, to central-difference accuracy).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (λ1) -> shift, keyword-only, default `prop3_shift`
        The shift of the proof's difference (`prop3_printed_shift`: 1).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 3 (proof identity)"
    rng = check_stream(seed, cid)
    points = instance_count(mc_samples, 1000, 30, 2000)
    worst = 0.0
    for _ in range(6):
        n = int(rng.integers(2, 4))
        clf = random_grid_classifier(rng, n, cuts=3, rotate=False)
        lam = np.exp(rng.uniform(math.log(0.2), math.log(0.8), n))
        x = rng.uniform(-2.5, 2.5, (points, n))
        kinks = np.concatenate([clf.cuts[0] - lam[0], clf.cuts[0] + lam[0]])
        x = x[np.abs(x[:, :1] - kinks[None]).min(axis=1) > 1e-3]           # g is C^1 in x1 away from kinks
        lhs = lam[0] * fd_gradient(lambda z: grid_uniform_scores(clf, z, lam), x, 1e-6)[..., 0]
        shift, fixed = formula(lam[0]) * np.eye(n)[0], np.concatenate([[0.0], lam[1:]])
        rhs = 0.5 * (grid_uniform_scores(clf, x + shift, fixed) - grid_uniform_scores(clf, x - shift, fixed))
        worst = max(worst, float(np.abs(lhs - rhs).max()))
    return at_most(cid, "max |λ1 ∂g/∂x1 - ½[ĝ(x1 + shift) - ĝ(x1 - shift)]| over grid classifiers",
                  worst, 0.0, FD_TOL, "central differences (step 1e-6) of a piecewise-quadratic function")


def check_ancer_cor2(mc_samples: int, seed: int = 0, *,
                     formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = uniform_gap) -> CheckResult:
    """ANCER Cor. 2: argmax g_Λ is constant on ‖Λ^-1 δ‖_1 <= p_A - p_B (tight for axis half-spaces).

    Measured: the worst margin on the certified cross-polytope (`common.uniform_certificate_margins`): exact for axis
    half-spaces (0 = tight), sampled on a polar grid with its vertices for grid classifiers (>= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (p_A, p_B) -> gap, keyword-only, default `common.uniform_gap`
        The certified gap.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Cor. 2"
    rng = check_stream(seed, cid)
    hs, grid = uniform_certificate_margins(rng, instance_count(mc_samples, 10_000, 8, 60), formula, cross_polytope_region)
    return at_least(cid, f"worst margin on the certified cross-polytope: axis half-spaces exact {hs:.2e} (0 = tight), "
                  f"grids sampled {grid:.2e}", min(hs, grid), 0.0, EXACT_TOL,
                  "closed forms; region sampled on a polar grid with its vertices")


# --------------------------------------------------------------------------------------------------
# ANCER §5: volumes (Prop. 4, Prop. 5, §5.1), enclosed balls
# --------------------------------------------------------------------------------------------------


def cross_polytope_volume(lam: np.ndarray, r: float) -> float:
    """ANCER Prop. 4: V({‖Λ^-1 δ‖_1 <= r}) = (2r)^n / n! prod λ_i (computed by `regions.log_volume`).

    Parameters
    ----------
    lam : numpy.ndarray, shape (n,)
        The λ_i (> 0).
    r : float
        The radius.

    Returns
    -------
    float
    """
    return float(np.exp(regions.log_volume(np.asarray(lam), r, regions.L1)))


def check_ancer_prop4(mc_samples: int, seed: int = 0, *,
                      formula: Callable[[np.ndarray, float], float] = cross_polytope_volume) -> CheckResult:
    """ANCER Prop. 4 (both proofs): the generalized cross-polytope's volume against Monte Carlo.

    For diagonal Λ (n = 2..5) and a dense positive definite Λ (the alternative proof, volume (2r)^n / n! |det Λ|,
    formula called with Λ's eigenvalues). Measured: the largest |MC volume - formula| / SE (<= `common.MC_Z`).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (λ, r) -> volume, keyword-only, default `cross_polytope_volume`
        The volume, λ of shape (n,).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 4"
    rng = check_stream(seed, cid)
    z = 0.0
    for n in (2, 3, 4, 5):
        lam, r = rng.uniform(0.2, 2.0, n), float(rng.uniform(0.5, 2.0))
        est, se = mc_volume(lambda p: np.abs(p / lam).sum(axis=1) <= r, r * lam, mc_samples, rng)
        z = max(z, abs(est - formula(lam, r)) / se)
        mat = random_covariance(n, rng, 0.3, 1.5)                              # dense positive definite Λ
        eig = np.linalg.eigvalsh(mat)
        est, se = mc_volume(lambda p: np.abs(np.linalg.solve(mat, p.T)).sum(axis=0) <= r,
                            r * np.abs(mat).max(axis=1), mc_samples, rng)
        z = max(z, abs(est - formula(eig, r)) / se)            # |det Λ| = prod of eigenvalues
    return at_most(cid, "max |MC volume - (2r)^n/n! |det Λ|| / SE over diagonal and dense Λ, n = 2..5",
                  z, MC_Z, 0.0, f"{MC_Z:.0f} Monte Carlo standard errors")


def ellipsoid_volume(sigma: np.ndarray, r: float) -> float:
    """ANCER §5.1: V({‖δ‖_{Σ,2} <= r}) = r^n π^(n/2) / Γ(n/2 + 1) prod σ_i (`regions.log_volume`).

    Parameters
    ----------
    sigma : numpy.ndarray, shape (n,)
        The σ_i (> 0).
    r : float
        The radius.

    Returns
    -------
    float
    """
    return float(np.exp(regions.log_volume(np.asarray(sigma), r, regions.L2)))


def check_ancer_ellipsoid_volume(mc_samples: int, seed: int = 0, *,
                                 formula: Callable[[np.ndarray, float], float] = ellipsoid_volume) -> CheckResult:
    """ANCER §5.1 (RANCER §4.1): the ellipsoid volume, axis-aligned and rotated, against Monte Carlo.

    Measured: the largest |MC volume - formula| / SE over rotated ellipsoids, n = 2..5 (<= `common.MC_Z`).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (σ, r) -> volume, keyword-only, default `ellipsoid_volume`
        The volume, σ of shape (n,).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER §5.1 (ellipsoid volume)"
    rng = check_stream(seed, cid)
    z = 0.0
    for n in (2, 3, 4, 5):
        sigma, r, u = rng.uniform(0.2, 2.0, n), float(rng.uniform(0.5, 2.0)), random_rotation(n, rng)
        est, se = mc_volume(lambda p: regions.contains(p, 0.0, r * sigma, regions.L2, u), np.full(n, r * sigma.max()),
                            mc_samples, rng)
        z = max(z, abs(est - formula(sigma, r)) / se)
    return at_most(cid, "max |MC volume - r^n π^(n/2)/Γ(n/2+1) prod σ| / SE, rotated ellipsoids, n = 2..5",
                  z, MC_Z, 0.0, f"{MC_Z:.0f} Monte Carlo standard errors")


def zonotope_volume(generator: np.ndarray) -> float:
    """ANCER Prop. 5: V(Z(Λ)) = sqrt(|Λ^T Λ|) = |det Λ| for Z(Λ) = {Λ u : u in [0, 1]^n}.

    Parameters
    ----------
    generator : numpy.ndarray, shape (n, n)
        Λ.

    Returns
    -------
    float
    """
    return float(math.sqrt(abs(np.linalg.det(generator.T @ generator))))


def check_ancer_prop5(mc_samples: int, seed: int = 0, *,
                      formula: Callable[[np.ndarray], float] = zonotope_volume) -> CheckResult:
    """ANCER Prop. 5: (2r/n)^n V(Z(Λ)) <= V({‖Λ^-1 δ‖_1 <= r}) <= (2r)^n V(Z(Λ)).

    The zonotope's volume and the generalized cross-polytope's volume are both measured by Monte Carlo (dense Λ,
    n = 2..4). Measured: max(z / MC_Z - 1, -room), z the zonotope's largest Monte Carlo z-score and room the smallest
    relative room of the cross-polytope's Monte Carlo volume (± MC_Z standard errors) inside the bounds (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (Λ) -> volume, keyword-only, default `zonotope_volume`
        The zonotope's volume, Λ of shape (n, n).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 5"
    rng = check_stream(seed, cid)
    z, margin = 0.0, np.inf
    for n in (2, 3, 4):
        mat, r = random_covariance(n, rng, 0.3, 1.5), float(rng.uniform(0.5, 2.0))   # Λ^-1 positive definite
        pos, neg = np.clip(mat, 0, None).sum(axis=1), np.clip(mat, None, 0).sum(axis=1)
        est, se = mc_volume(lambda p: np.all(np.abs(np.linalg.solve(mat, p.T) - 0.5) <= 0.5, axis=0),
                            0.5 * (pos - neg), mc_samples, rng, 0.5 * (pos + neg))
        vz = formula(mat)
        z = max(z, abs(est - vz) / se)
        vol, se1 = mc_volume(lambda p: np.abs(np.linalg.solve(mat, p.T)).sum(axis=0) <= r,
                             r * np.abs(mat).max(axis=1), mc_samples, rng)
        lower, upper = (2 * r / n) ** n * vz, (2 * r) ** n * vz
        margin = min(margin, (vol + MC_Z * se1) / lower - 1.0, upper / (vol - MC_Z * se1) - 1.0)
    value = max(z / MC_Z - 1.0, -margin)
    return at_most(cid, f"zonotope MC z-score max {z:.2f} (<= {MC_Z:.0f}) and smallest relative room of the MC "
                  f"volume (± {MC_Z:.0f} SE) inside the bounds {margin:.3f} (>= 0); "
                  f"value = max(z/{MC_Z:.0f} - 1, -room)",
                  value, 0.0, 0.0, f"{MC_Z:.0f} Monte Carlo standard errors")


def check_ancer_enclosed_radius(mc_samples: int, seed: int = 0, *,
                                formula: Callable[..., np.ndarray] = regions.enclosed_radius) -> CheckResult:
    """ANCER §5.1-5.2 (and UCAN Cor. 3.3 for p = 1, 2): the largest ℓp ball around x inside the certified region.

    Its radius is min_i θ_i r (for a rotated cross-polytope r / max_j ‖Λ^-1 U^T e_j‖_1): every point of the ball's
    boundary (ℓ1 vertices included) is inside, and the ball 1e-6 larger is not. Measured: boundary points outside
    the region plus non-maximal radii, over ℓ2/ℓ1, axis-aligned and rotated regions (exact counting, <= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (θ, gap, norm, U) -> radius, keyword-only, default `regions.enclosed_radius`
        The enclosed radius, θ of shape (n,), U of shape (n, n) or None.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER §5 (enclosed l_p ball)"
    rng = check_stream(seed, cid)
    num = instance_count(mc_samples, 100, 100, 5000)
    bad, cases = 0, 0
    for norm, p in ((regions.L2, 2.0), (regions.L1, 1.0)):
        for rotate in (False, True):
            for _ in range(10):
                n = int(rng.integers(2, 6))
                theta, gap = rng.uniform(0.2, 2.0, n), float(rng.uniform(0.3, 2.0))
                u = random_rotation(n, rng) if rotate else None
                rho = float(formula(theta, gap, norm, u))
                axes = np.eye(n) if u is None or norm == regions.L1 else u.T    # where the ball touches
                boundary = np.concatenate([unit_sphere(num, n, p, rng), axes, -axes])
                inside = regions.region_norm(rho * boundary, gap * theta, norm, u) <= 1 + 1e-12
                outside = regions.region_norm(rho * (1 + 1e-6) * boundary, gap * theta, norm, u) > 1
                bad += int((~inside).sum()) + int(not outside.any())
                cases += 1
    return at_most(cid, f"points of the enclosed ball's boundary outside the region, plus non-maximal radii "
                  f"({cases} regions: l2/l1, axis-aligned/rotated)", bad, 0, 0, "exact counting")


# --------------------------------------------------------------------------------------------------
# ANCER App. B.1: Gaussian mixtures (Prop. 6, Prop. 7, Cor. 3)
# --------------------------------------------------------------------------------------------------


#: Lipschitz constants of g_Σ under ||.||_{Σ^-1,2}: as printed in Prop. 6, as used in Prop. 7 / Cor. 3,
#: and the tight one for classifiers f : R^n -> [0, 1] (E[(u.s)_+] = 1/sqrt(2π)).
L_PROP6_PRINTED = math.sqrt(2.0 / math.pi)
L_PROP7_PRINTED = math.sqrt(math.pi / 2.0)
L_TIGHT = 1.0 / math.sqrt(2.0 * math.pi)
#: how close to 1 the worst certified / exact flip radius must come for Cor. 3's constant to count as attained
CERTIFICATE_ATTAINED_TOL = 1e-6


def check_ancer_prop6(mc_samples: int, seed: int = 0, *, formula: float = L_PROP6_PRINTED) -> CheckResult:
    """ANCER Prop. 6: g_Σ is L-Lipschitz under ‖.‖_{Σ^-1,2} with L = formula (printed sqrt(2/π)).

    Measured: the largest two-point ratio |g(x) - g(y)| / ‖x - y‖_{Σ,2} over grid classifiers and half-spaces
    (half-spaces reach 1/sqrt(2π)) (<= L).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : float, keyword-only, default `L_PROP6_PRINTED`
        The Lipschitz constant L.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 6"
    rng = check_stream(seed, cid)
    instances = gaussian_instances(rng, instance_count(mc_samples, 1000, 30, 2000))
    ratio = max_lipschitz_ratio(instances, lambda s: s, sigma_norm, rng)
    return at_most(cid, f"max ratio |g(x) - g(y)| / ||x - y||_Σ,2 (grids {ratio['grid']:.4f}, half-spaces "
                  f"{ratio['half-space']:.6f} = 1/sqrt(2π) = {L_TIGHT:.6f}) vs L = {formula:.6f}",
                  max(ratio.values()), formula, FD_TOL, "two-point ratios of closed forms")


def check_ancer_prop6_tight(mc_samples: int, seed: int = 0, *, formula: float = L_TIGHT) -> CheckResult:
    """ANCER Prop. 6, tight constant: for f with values in [0, 1], sup ‖Σ^½ ∇g‖ = E[(u.s)_+] = 1/sqrt(2π).

    Attained by the half-space at p = ½; Prop. 6's sqrt(2/π) = E|u.s| is the constant for [-1, 1]-valued f.
    Measured: the largest ratio over grids and half-spaces (= L).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : float, keyword-only, default `L_TIGHT`
        The Lipschitz constant L.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 6 (tight L = 1/sqrt(2π))"
    rng = check_stream(seed, cid)
    instances = gaussian_instances(rng, instance_count(mc_samples, 1000, 30, 2000))
    ratio = max_lipschitz_ratio(instances, lambda s: s, sigma_norm, rng)
    return close_to(cid, f"max ratio over grids ({ratio['grid']:.4f}) and half-spaces (attains) vs L = {formula:.6f}",
                  max(ratio.values()), formula, FD_TOL, "two-point ratios of closed forms")


def check_ancer_prop6_difference(mc_samples: int, seed: int = 0, *, formula: float = L_PROP6_PRINTED) -> CheckResult:
    """ANCER Prop. 6 for a score difference: g^a - g^b is sqrt(2/π)-Lipschitz under ‖.‖_{Σ^-1,2}.

    f^a - f^b has values in [-1, 1]; a two-class half-space attains the constant: where Prop. 6's constant is the
    tight one. Measured: the largest ratio of g^a - g^b over grids and half-spaces (= L).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : float, keyword-only, default `L_PROP6_PRINTED`
        The Lipschitz constant L.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 6 (score difference, L = sqrt(2/π))"
    rng = check_stream(seed, cid)
    ratio = max_lipschitz_ratio(gaussian_instances(rng, instance_count(mc_samples, 1000, 30, 2000)), pairwise_differences,
                                sigma_norm, rng)
    return close_to(cid, f"max ratio of g^a - g^b over grids ({ratio['grid']:.4f}) and half-spaces (attains) vs "
                  f"{formula:.6f}", max(ratio.values()), formula, FD_TOL, "two-point ratios of closed forms")


def mixture_instances(rng: np.random.Generator, points: int) -> list[SmoothedInstance]:
    """Gaussian-mixture-smoothed instances for ANCER Prop. 7: sum_i α_i N(0, Σ_i), K = 2, 3 components.

    Four grid classifiers (n = 2, Σ_i sharing the grid's frame) and four half-spaces (n = 2..4, dense Σ_i, half the
    points on the boundary); cov is B with B^-1 = sum_i α_i Σ_i^-1 (Prop. 7's norm ‖δ‖_{B,2}).

    Parameters
    ----------
    rng : numpy.random.Generator
        The check's generator.
    points : int
        Points per instance.

    Returns
    -------
    list of common.SmoothedInstance
    """
    out = []
    for i in range(8):
        k = 2 + i % 2
        alpha = rng.dirichlet(np.ones(k))
        n = 2 if i < 4 else int(rng.integers(2, 5))
        if i < 4:
            clf = random_grid_classifier(rng, n, cuts=3)
            sig = np.exp(rng.uniform(math.log(0.2), math.log(1.5), (k, n)))
            covs = [(clf.frame * s**2) @ clf.frame.T for s in sig]
            fn = lambda z, c=clf, s=sig, a=alpha: sum(  # noqa: E731
                ai * grid_gaussian_scores(c, z, si) for ai, si in zip(a, s))
            x = rng.uniform(-2.5, 2.5, (points, n)) @ clf.frame.T
        else:
            covs = [random_covariance(n, rng) for _ in range(k)]
            w, b = rng.normal(size=n), float(rng.normal())
            fn = lambda z, w=w, b=b, c=covs, a=alpha: sum(  # noqa: E731
                ai * halfspace_gaussian_scores(w, b, z, ci) for ai, ci in zip(a, c))
            x = rng.normal(size=(points, n))
            x[: points // 2] -= ((x[: points // 2] @ w + b) / (w @ w))[:, None] * w
        out.append(SmoothedInstance("grid" if i < 4 else "half-space", fn, mixture_norm_matrix(alpha, covs), x))
    return out


def check_ancer_prop7(mc_samples: int, seed: int = 0, *, formula: float = L_PROP7_PRINTED,
                      cid: str = "ANCER Prop. 7") -> CheckResult:
    """ANCER Prop. 7: g_G is L-Lipschitz under ‖.‖_{B^-1,2}, B^-1 = sum α_i Σ_i^-1, L = formula (printed sqrt(π/2)).

    Measured: the largest two-point ratio over mixture-smoothed grid classifiers and half-spaces
    (`mixture_instances`) (<= L). The generator is keyed by "ANCER Prop. 7" whatever `cid`.

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : float, keyword-only, default `L_PROP7_PRINTED`
        The Lipschitz constant L.
    cid : str, keyword-only, default "ANCER Prop. 7"
        The result's id.

    Returns
    -------
    common.CheckResult
    """
    rng = check_stream(seed, "ANCER Prop. 7")
    ratio = max_lipschitz_ratio(mixture_instances(rng, instance_count(mc_samples, 1000, 30, 2000)), lambda s: s, sigma_norm, rng)
    return at_most(cid, f"max ratio |g_G(x) - g_G(y)| / ||x - y||_B,2 over mixtures (grids {ratio['grid']:.4f}, "
                  f"half-spaces {ratio['half-space']:.4f}) vs L = {formula:.6f}", max(ratio.values()), formula,
                  FD_TOL, "two-point ratios of closed forms")


def check_ancer_prop7_tight(mc_samples: int, seed: int = 0, *, formula: float = L_TIGHT) -> CheckResult:
    """ANCER Prop. 7 with Prop. 6's tight constant: the proof's chain gives L = 1/sqrt(2π) for mixtures too.

    The chain is the triangle inequality, Prop. 6 and Jensen; `check_ancer_prop7` with L = formula.

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : float, keyword-only, default `L_TIGHT`
        The Lipschitz constant L.

    Returns
    -------
    common.CheckResult
    """
    return check_ancer_prop7(mc_samples, seed, formula=formula, cid="ANCER Prop. 7 (tight L = 1/sqrt(2π))")


def mixture_norm_matrix(alpha: np.ndarray, covs: list[np.ndarray]) -> np.ndarray:
    """B with B^-1 = sum_i α_i Σ_i^-1 (ANCER Prop. 7): the matrix of the mixture certificate's norm ‖δ‖_{B,2}.

    Parameters
    ----------
    alpha : numpy.ndarray, shape (K,)
        The mixture weights.
    covs : list of numpy.ndarray, each shape (n, n)
        The components' covariances Σ_i.

    Returns
    -------
    numpy.ndarray, shape (n, n)
    """
    return np.linalg.inv(sum(a * np.linalg.inv(c) for a, c in zip(alpha, covs)))


def check_ancer_prop7_jensen(mc_samples: int, seed: int = 0, *,
                             formula: Callable[[np.ndarray, list], np.ndarray] = mixture_norm_matrix) -> CheckResult:
    """ANCER Prop. 7's Jensen step: sum_i α_i ‖δ‖_{Σ_i,2} <= ‖δ‖_{B,2} with B = formula(α, Σ_i).

    Measured: the largest sum α_i ‖δ‖_{Σ_i,2} / ‖δ‖_{B,2} over random mixtures and δ (<= 1).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (α, covs) -> B, keyword-only, default `mixture_norm_matrix`
        The mixture's norm matrix B of shape (n, n).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 7 (Jensen step)"
    rng = check_stream(seed, cid)
    worst = -np.inf
    for _ in range(20):
        n, k = int(rng.integers(2, 6)), int(rng.integers(2, 5))
        alpha, covs = rng.dirichlet(np.ones(k)), [random_covariance(n, rng) for _ in range(k)]
        delta = rng.normal(size=(instance_count(mc_samples, 100, 100, 20_000), n))
        lhs = sum(a * sigma_norm(delta, c) for a, c in zip(alpha, covs))
        rhs = sigma_norm(delta, formula(alpha, covs))
        worst = max(worst, float((lhs / rhs).max()))
    return at_most(cid, "max sum α_i ||δ||_Σi,2 / ||δ||_B,2 over random mixtures and δ", worst, 1.0, EXACT_TOL,
                  "closed form, float64 rounding")


def mixture_flip_radius(w: np.ndarray, margin: float, alpha: np.ndarray, covs: list[np.ndarray],
                        b_mat: np.ndarray) -> float:
    """The exact ‖.‖_{B,2} distance at which a mixture-smoothed half-space flips (ANCER Cor. 3).

    The worst δ of norm ρ has w.δ = -ρ ‖B^½ w‖, and g_G = sum_i α_i Φ((m - ρ ‖B^½ w‖) / ‖Σ_i^½ w‖) crosses ½; ρ is
    found by 200 bisection steps.

    Parameters
    ----------
    w : numpy.ndarray, shape (n,)
        The half-space's normal.
    margin : float
        m = w.x + b at x (> 0).
    alpha : numpy.ndarray, shape (K,)
        The mixture weights.
    covs : list of numpy.ndarray, each shape (n, n)
        The covariances Σ_i.
    b_mat : numpy.ndarray, shape (n, n)
        B (`mixture_norm_matrix`).

    Returns
    -------
    float
    """
    sb = math.sqrt(float(w @ b_mat @ w))
    sd = np.array([math.sqrt(float(w @ c @ w)) for c in covs])
    lo, hi = 0.0, margin / sb          # g_G(hi) = sum α_i Φ(0) = ½
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        g = float((alpha * ndtr((margin - mid * sb) / sd)).sum())
        lo, hi = (mid, hi) if g > 0.5 else (lo, mid)
    return hi


def cor3_worst_ratio(mc_samples: int, seed: int, formula: float) -> float:
    """The largest certified / exact flip radius over mixture-smoothed half-spaces for ANCER Cor. 3's certificate.

    The certificate is ‖δ‖_{B,2} <= formula (g_A - g_B), the exact worst case per instance `mixture_flip_radius`.
    The instances (n = 1..4, K = 1..3 components) include margins down to e^-8 ‖B^½ w‖, i.e. g_A -> ½, where a tight
    constant's ratio approaches 1. The generator is keyed by "ANCER Cor. 3".

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget; it sets the number of instances.
    seed : int
        The notebook's seed.
    formula : float
        The certificate's constant.

    Returns
    -------
    float
    """
    rng = check_stream(seed, "ANCER Cor. 3")
    worst = 0.0
    for i in range(instance_count(mc_samples, 200, 100, 4000)):
        n, k = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        alpha, covs = rng.dirichlet(np.ones(k)), [random_covariance(n, rng) for _ in range(k)]
        b_mat = mixture_norm_matrix(alpha, covs)
        w = rng.normal(size=n)
        margin = float(np.exp(rng.uniform(-8, 1))) * math.sqrt(float(w @ b_mat @ w))  # includes g_A -> ½
        ga = float((alpha * ndtr(margin / np.sqrt([w @ c @ w for c in covs]))).sum())
        worst = max(worst, formula * (2 * ga - 1) / mixture_flip_radius(w, margin, alpha, covs, b_mat))
    return worst


def check_ancer_cor3(mc_samples: int, seed: int = 0, *, formula: float = 1.0 / math.sqrt(2 * math.pi),
                     cid: str = "ANCER Cor. 3") -> CheckResult:
    """ANCER Cor. 3 (mixture certificate), soundness: ‖δ‖_{B,2} <= formula (g_A - g_B) keeps the prediction.

    The printed constant is 1/sqrt(2π) (L = sqrt(π/2)); Prop. 6 gives sqrt(π/8) (L = sqrt(2/π)); the tight one is
    sqrt(π/2) (L = 1/sqrt(2π)). Measured: `cor3_worst_ratio` (<= 1).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : float, keyword-only, default 1/sqrt(2π)
        The certificate's constant.
    cid : str, keyword-only, default "ANCER Cor. 3"
        The result's id.

    Returns
    -------
    common.CheckResult
    """
    worst = cor3_worst_ratio(mc_samples, seed, formula)
    return at_most(cid, f"max certified radius / exact flip radius over mixture-smoothed half-spaces (constant "
                  f"{formula:.6f})", worst, 1.0, EXACT_TOL, "closed form and 200-step bisection")


def check_ancer_cor3_prop6(mc_samples: int, seed: int = 0, *, formula: float = math.sqrt(math.pi / 8)) -> CheckResult:
    """ANCER Cor. 3 with Prop. 6's constant: L = sqrt(2/π), certificate sqrt(π/8) (g_A - g_B).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : float, keyword-only, default sqrt(π/8)
        The certificate's constant.

    Returns
    -------
    common.CheckResult
    """
    return check_ancer_cor3(mc_samples, seed, formula=formula, cid="ANCER Cor. 3 via Prop. 6 (sqrt(π/8))")


def check_ancer_cor3_tight(mc_samples: int, seed: int = 0, *, formula: float = math.sqrt(math.pi / 2)) -> CheckResult:
    """ANCER Cor. 3 with the tight constant: L = 1/sqrt(2π), certificate sqrt(π/2) (g_A - g_B).

    The ratio approaches 1 as g_A -> ½, so no larger constant is sound.

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : float, keyword-only, default sqrt(π/2)
        The certificate's constant.

    Returns
    -------
    common.CheckResult
    """
    return check_ancer_cor3(mc_samples, seed, formula=formula, cid="ANCER Cor. 3 tight (sqrt(π/2))")


def check_ancer_cor3_attained(mc_samples: int, seed: int = 0, *, formula: float = math.sqrt(math.pi / 2)) -> CheckResult:
    """ANCER Cor. 3, tightness: with the constant `formula` the worst certified / exact flip radius reaches 1.

    I.e. the certificate (`cor3_worst_ratio`) is attained and no larger constant is sound. True for sqrt(π/2); the
    printed 1/sqrt(2π) is sound but reaches only 1/π. The sampled margins reach e^-8 ‖B^½w‖, where the ratio's
    deficit is O(margin²) ~ 1e-7 (tolerance `CERTIFICATE_ATTAINED_TOL`).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : float, keyword-only, default sqrt(π/2)
        The certificate's constant.

    Returns
    -------
    common.CheckResult
    """
    worst = cor3_worst_ratio(mc_samples, seed, formula)
    return close_to("ANCER Cor. 3 attained (sqrt(π/2))", f"max certified radius / exact flip radius (constant "
                  f"{formula:.6f}) vs 1 (attained as g_A -> ½)", worst, 1.0, CERTIFICATE_ATTAINED_TOL,
                  "sampled margins reach e^-8 ||B^½w||, where the ratio's deficit is O(margin²) ~ 1e-7")


# --------------------------------------------------------------------------------------------------
# linear-program references for App. D (independent of geometry.py)
# --------------------------------------------------------------------------------------------------


def polytope_pair_value(center_a: np.ndarray, s_a: np.ndarray, center_b: np.ndarray, s_b: np.ndarray) -> float:
    """τ* = min_x max(sum |x - a| / s_a, sum |x - b| / s_b) by linear programming (HiGHS; ANCER App. D reference).

    The cross-polytopes intersect iff τ* <= 1. Independent of `geometry`.

    Parameters
    ----------
    center_a : numpy.ndarray, shape (n,)
        a.
    s_a : numpy.ndarray, shape (n,)
        A's semi-axes.
    center_b : numpy.ndarray, shape (n,)
        b.
    s_b : numpy.ndarray, shape (n,)
        B's semi-axes.

    Returns
    -------
    float
    """
    n = center_a.size
    eye, zero, zc = np.eye(n), np.zeros((n, n)), np.zeros((n, 1))
    # variables (x, u, v, τ): u >= |x - a|, v >= |x - b|, sum u / s_a <= τ, sum v / s_b <= τ
    a_ub = np.block([[eye, -eye, zero, zc], [-eye, -eye, zero, zc], [eye, zero, -eye, zc], [-eye, zero, -eye, zc],
                     [np.zeros((1, n)), (1 / s_a)[None], np.zeros((1, n)), -np.ones((1, 1))],
                     [np.zeros((1, 2 * n)), (1 / s_b)[None], -np.ones((1, 1))]])
    b_ub = np.concatenate([center_a, -center_a, center_b, -center_b, [0.0, 0.0]])
    cost = np.zeros(3 * n + 1)
    cost[-1] = 1.0
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=[(None, None)] * n + [(0, None)] * (2 * n + 1), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    return float(res.fun)


def l1_nearest_point(y: np.ndarray, scales: np.ndarray) -> tuple[float, np.ndarray]:
    """The exact ℓ1 distance and nearest point from y to {x : sum |x_i| / s_i <= 1}, by linear programming (HiGHS).

    Parameters
    ----------
    y : numpy.ndarray, shape (n,)
        The point.
    scales : numpy.ndarray, shape (n,)
        The cross-polytope's semi-axes s.

    Returns
    -------
    distance : float
    nearest : numpy.ndarray, shape (n,)
    """
    n = y.size
    eye, zero = np.eye(n), np.zeros((n, n))
    a_ub = np.block([[eye, -eye, zero], [-eye, -eye, zero], [eye, zero, -eye], [-eye, zero, -eye],
                     [np.zeros((1, 2 * n)), (1 / scales)[None]]])
    b_ub = np.concatenate([y, -y, np.zeros(2 * n), [1.0]])
    cost = np.concatenate([np.zeros(n), np.ones(n), np.zeros(n)])
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=[(None, None)] * n + [(0, None)] * (2 * n), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    return float(res.fun), res.x[:n]


# --------------------------------------------------------------------------------------------------
# ANCER App. D: Lemmas 1-4, Prop. 8, D.3-D.5
# --------------------------------------------------------------------------------------------------


def check_ancer_lemma1(mc_samples: int, seed: int = 0, *,
                       formula: Callable[[np.ndarray], np.ndarray] = geometry.outer_ball_radius) -> CheckResult:
    """ANCER Lemma 1 (MaxIntersect, App. D.1): the ℓp ball of radius formula(s) contains the region.

    formula(s) is the largest semi-axis; and ‖a - b‖_p > r_a + r_b implies the regions are disjoint (checked by
    SLSQP for ellipsoids, LP for cross-polytopes). Measured: region points outside the outer ball plus pairs
    declared disjoint that intersect (exact counting, <= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (s) -> radius, keyword-only, default `geometry.outer_ball_radius`
        The outer ball's radius, s of shape (n,).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Lemma 1"
    rng = check_stream(seed, cid)
    bad, disjoint = 0, 0
    num = instance_count(mc_samples, 2000, 20, 300)
    for norm, p in ((regions.L2, 2.0), (regions.L1, 1.0)):
        for a, _, sa, b, _, sb in random_region_pairs(rng, num):
            n = a.size
            pts = uniform_ball(200, n, p, rng) * sa
            bad += int((lp_norm(np.concatenate([pts, np.diag(sa), -np.diag(sa)]), p) > formula(sa) * (1 + 1e-12)).sum())
            if not geometry.max_intersect(a, formula(sa), b, formula(sb), norm):
                disjoint += 1
                value = (ellipsoid_pair_value(a, np.diag(sa**-2.0), b, np.diag(sb**-2.0)) if norm == regions.L2
                         else polytope_pair_value(a, sa, b, sb))
                bad += int(value <= 1.0)
    return at_most(cid, f"region points outside the outer ball + pairs declared disjoint that intersect "
                  f"({disjoint} of {2 * num} pairs declared disjoint)", bad, 0, 0, "exact counting")


def _dense_pair(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centres a, b and dense precision matrices A, B of a random rotated pair."""
    a, ua, sa, b, ub, sb = random_region_pairs(rng, 1, rotate=True)[0]
    return a, rotated.precision(ua, sa), b, rotated.precision(ub, sb)


def lemma2_combination(t: np.ndarray, qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
    """ANCER Lemma 2's convex combination t q_A(x) + (1 - t) q_B(x) of the two quadratic forms.

    Parameters
    ----------
    t : numpy.ndarray
        Weights in [0, 1].
    qa, qb : numpy.ndarray
        q_A(x) and q_B(x), of t's shape.

    Returns
    -------
    numpy.ndarray
    """
    return t * qa + (1 - t) * qb


def check_ancer_lemma2(mc_samples: int, seed: int = 0, *,
                       formula: Callable[..., np.ndarray] = lemma2_combination) -> CheckResult:
    """ANCER Lemma 2: R_t = {formula(t, q_A(x), q_B(x)) <= 1} satisfies R_A ∩ R_B ⊆ R_t ⊆ R_A ∪ R_B, t in [0, 1].

    Measured: sampled points violating the inclusions, dense A, B (exact counting, <= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (t, q_A, q_B) -> q_t, keyword-only, default `lemma2_combination`
        The combined quadratic form.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Lemma 2"
    rng = check_stream(seed, cid)
    bad = 0
    for _ in range(20):
        a, qa_m, b, qb_m = _dense_pair(rng)
        x = a + (b - a) * rng.uniform(-0.5, 1.5, (mc_samples // 20, 1)) + rng.normal(size=(mc_samples // 20, a.size))
        t = rng.uniform(size=len(x))
        qa, qb = rotated.quadratic_form(x, a, qa_m), rotated.quadratic_form(x, b, qb_m)
        in_t = formula(t, qa, qb) <= 1
        bad += int(((qa <= 1) & (qb <= 1) & ~in_t).sum() + (in_t & (qa > 1) & (qb > 1)).sum())
    return at_most(cid, "sampled points violating R_A ∩ R_B ⊆ R_t ⊆ R_A ∪ R_B (dense A, B)", bad, 0, 0,
                  "exact counting")


def k_forms(t: float, a: np.ndarray, qa: np.ndarray, b: np.ndarray, qb: np.ndarray,
            third: Callable[..., np.ndarray] = rotated.k_function) -> np.ndarray:
    """The three printed forms of K(t) (ANCER App. D.2), for a dense pair.

    1 - t a'Aa - (1-t) b'Bb + m'E_t m; 1 - t(1-t)(b-a)' B E_t^-1 A (b-a); 1 - (b-a)' ((1/(1-t)) B^-1 + (1/t) A^-1)^-1
    (b-a), the third evaluated by `third`.

    Parameters
    ----------
    t : float
        In (0, 1).
    a : numpy.ndarray, shape (n,)
        A's centre.
    qa : numpy.ndarray, shape (n, n)
        A's precision matrix.
    b : numpy.ndarray, shape (n,)
        B's centre.
    qb : numpy.ndarray, shape (n, n)
        B's precision matrix.
    third : callable, default `rotated.k_function`
        (t, a, A, b, B) -> K(t), the third form.

    Returns
    -------
    numpy.ndarray, shape (3,)
    """
    e = t * qa + (1 - t) * qb
    m = np.linalg.solve(e, t * qa @ a + (1 - t) * qb @ b)
    d = b - a
    return np.array([1 - t * a @ qa @ a - (1 - t) * b @ qb @ b + m @ e @ m,
                     1 - t * (1 - t) * d @ qb @ np.linalg.solve(e, qa @ d),
                     float(third(t, a, qa, b, qb))])


def check_ancer_lemma3(mc_samples: int, seed: int = 0, *,
                       formula: Callable[..., np.ndarray] = rotated.k_function) -> CheckResult:
    """ANCER Lemma 3: t q_A(x) + (1-t) q_B(x) - 1 = (x-m)^T E_t (x-m) - K(t), and the three forms of K(t) agree.

    The third form is evaluated by `formula` (default RANCER Eq. 5 literally); for diagonal A, B they also equal the
    diagonal form (`geometry.k_function`). Measured: the largest relative discrepancy between the identity's sides
    and between the forms of K(t) (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (t, a, A, b, B) -> K(t), keyword-only, default `rotated.k_function`
        K(t) of a dense pair.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Lemma 3"
    rng = check_stream(seed, cid)
    worst = 0.0
    for i in range(40):
        a, qa, b, qb = _dense_pair(rng)
        if i % 2:
            qa, qb = np.diag(np.diag(qa)), np.diag(np.diag(qb))
        t = float(rng.uniform(0.01, 0.99))
        ks = k_forms(t, a, qa, b, qb, formula)
        x = rng.normal(size=(50, a.size)) * 2 + a
        e = t * qa + (1 - t) * qb
        m = np.linalg.solve(e, t * qa @ a + (1 - t) * qb @ b)
        lhs = t * rotated.quadratic_form(x, a, qa) + (1 - t) * rotated.quadratic_form(x, b, qb) - 1
        rhs = rotated.quadratic_form(x, m, e) - ks[0]
        scale = 1 + np.abs(lhs).max() + np.abs(ks).max()
        worst = max(worst, float(np.abs(lhs - rhs).max() / scale), float(np.ptp(ks) / scale))
        if i % 2:
            kd = float(geometry.k_function(t, b - a, np.diag(qa) ** -0.5, np.diag(qb) ** -0.5))
            worst = max(worst, abs(kd - ks[2]) / scale)
    return at_most(cid, "max relative discrepancy between the identity's sides and between the forms of K(t)",
                  worst, 0.0, EXACT_TOL, "float64 linear algebra on O(1)-conditioned matrices")


def check_ancer_prop8_convex(mc_samples: int, seed: int = 0, *,
                             formula: Callable[..., np.ndarray] = rotated.k_function) -> CheckResult:
    """ANCER Prop. 8 / App. D.2 (Ros et al.): K is convex on (0, 1) and K(0) = K(1) = 1.

    K(0) = K(1) = 1 through the exact squeeze 0 <= 1 - K(t) <= min(t d'Ad, (1-t) d'Bd) (d = b - a; from
    (tB^-1 + (1-t)A^-1)^-1 <= A / (1-t) and <= B / t), checked on a 2001-point t-grid for dense A, B. Measured: the
    larger of K's relative concavity and the squeeze's violation (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (t, a, A, b, B) -> K(t), keyword-only, default `rotated.k_function`
        K on an array of t, of a dense pair.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 8 (K convex, K(0) = K(1) = 1)"
    rng = check_stream(seed, cid)
    t = np.linspace(1e-9, 1 - 1e-9, 2001)
    worst = 0.0
    for _ in range(instance_count(mc_samples, 4000, 20, 200)):
        a, qa, b, qb = _dense_pair(rng)
        k = formula(t, a, qa, b, qb)
        d = b - a
        scale = 1 + np.abs(k).max()
        concavity = -(k[:-2] - 2 * k[1:-1] + k[2:]).min()
        upper = np.minimum(t * (d @ qa @ d), (1 - t) * (d @ qb @ d))
        squeeze = max(float((k - 1).max()), float(((1 - k) - upper).max()))
        worst = max(worst, float(concavity) / scale, squeeze / scale)
    return at_most(cid, "max(relative concavity of K on a 2001-point t-grid, violation of 0 <= 1 - K(t) <= "
                  "min(t d'Ad, (1-t) d'Bd))", worst, 0.0, EXACT_TOL, "float64 rounding (relative to 1 + max|K|)")


def check_ancer_prop8_disjoint(mc_samples: int, seed: int = 0, *,
                               formula: Callable[..., tuple] = geometry.minimize_k) -> CheckResult:
    """ANCER Prop. 8 / App. D.2: 1 - min_t K(t) = v*, so K(t*) < 0 iff the ellipsoids are disjoint.

    v* is the convex-solver value min_x max(q_A, q_B) (minimax duality; `common.ellipsoid_pair_value`). Measured: the
    largest |v* - (1 - min K)| / max(1, v*) (<= 0, to the SLSQP reference's accuracy).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (a, s_a, b, s_b) -> (t*, K*), keyword-only, default `geometry.minimize_k`
        min_t K(t) of an axis-aligned pair (diagonal form).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Prop. 8 (K* < 0 iff disjoint)"
    rng = check_stream(seed, cid)
    worst, disjoint, pairs = 0.0, 0, random_region_pairs(rng, instance_count(mc_samples, 2000, 20, 300))
    for a, _, sa, b, _, sb in pairs:
        _, kmin = formula(a, sa, b, sb)
        v = ellipsoid_pair_value(a, np.diag(sa**-2.0), b, np.diag(sb**-2.0))
        worst = max(worst, abs(v - (1 - float(kmin))) / max(1.0, v))
        disjoint += int(v > 1)
    return at_most(cid, f"max |v* - (1 - min K)| / max(1, v*) ({disjoint} of {len(pairs)} pairs disjoint)",
                  worst, 0.0, SOLVER_TOL, "SLSQP reference, ftol 1e-15")


def check_ancer_d3(mc_samples: int, seed: int = 0, *,
                   formula: Callable[..., np.ndarray] = geometry.cross_polytopes_intersect) -> CheckResult:
    """ANCER App. D.3: Intersect for cross-polytopes through the circumscribed ellipsoids ‖A(x - a)‖_2 <= 1.

    It only returns False for disjoint cross-polytopes (LP reference). Measured: pairs declared disjoint that
    intersect (exact counting, <= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (a, s_a, b, s_b) -> bool, keyword-only, default `geometry.cross_polytopes_intersect`
        Whether the cross-polytopes may intersect.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER App. D.3"
    rng = check_stream(seed, cid)
    bad, declared = 0, 0
    pairs = random_region_pairs(rng, instance_count(mc_samples, 1000, 40, 600))
    for a, _, sa, b, _, sb in pairs:
        if not formula(a, sa, b, sb):
            declared += 1
            bad += int(polytope_pair_value(a, sa, b, sb) <= 1.0)
    return at_most(cid, f"cross-polytope pairs declared disjoint that intersect ({declared} of {len(pairs)} declared)",
                  bad, 0, 0, "exact counting (LP margin 1e-10)")


def check_ancer_d4_projection(mc_samples: int, seed: int = 0, *,
                              formula: Callable[..., tuple] = geometry.project_onto_ellipsoid) -> CheckResult:
    """ANCER App. D.4: the KKT projection x* = (2λA + I)^-1 y with f(λ) = 0 gives the ℓ2 distance to the ellipsoid.

    `geometry.project_onto_ellipsoid` against SLSQP (a lower bound, accurate to the solver). Measured: the largest
    relative |distance - SLSQP distance| over points outside (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (y, s) -> (x*, distance), keyword-only, default `geometry.project_onto_ellipsoid`
        The projection of y onto the ellipsoid.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER App. D.4 (projection)"
    rng = check_stream(seed, cid)
    worst = 0.0
    for a, _, sa, b, _, _ in random_region_pairs(rng, instance_count(mc_samples, 2000, 20, 300)):
        y = b - a
        ref = projection_distance(y, np.diag(sa**-2.0))
        if ref > 0:
            _, dist = formula(y, sa)
            worst = max(worst, abs(float(dist) - ref) / ref)
    return at_most(cid, "max relative |distance - SLSQP distance| over points outside", worst, 0.0, SOLVER_TOL,
                  "SLSQP reference, ftol 1e-15")


def ancer_inner_radius(scales: np.ndarray, norm: str) -> np.ndarray:
    """ANCER App. D.4/D.5 corrected: the largest ℓp ball around the centre inside the region has radius min_i s_i.

    Parameters
    ----------
    scales : numpy.ndarray, shape (..., n)
        The semi-axes s.
    norm : str
        "l2" or "l1" (the radius is the same).

    Returns
    -------
    numpy.ndarray, shape (...)
    """
    return geometry.inner_ball_radius(scales)


def ancer_printed_inner_radius(scales: np.ndarray, norm: str) -> np.ndarray:
    """ANCER App. D.4/D.5 as printed: min_i B_ii with B_ii = 1/s_i² (ellipsoid) or 1/s_i (cross-polytope).

    Parameters
    ----------
    scales : numpy.ndarray, shape (..., n)
        The semi-axes s.
    norm : str
        "l2" or "l1".

    Returns
    -------
    numpy.ndarray, shape (...)
    """
    return (1.0 / np.asarray(scales) ** (2 if norm == regions.L2 else 1)).min(axis=-1)


def check_ancer_d45_largest_out_subset(mc_samples: int, seed: int = 0, *,
                                       formula: Callable[[np.ndarray, str], np.ndarray] = ancer_inner_radius
                                       ) -> CheckResult:
    """ANCER App. D.4/D.5 LargestOutSubset: the ball around b misses R_A and lies inside R_B.

    The ℓp ball around b has radius min(dist_p(b, R_A)(1 - ε), formula(s_B)) (ℓ2: ellipsoids, D.4; ℓ1:
    cross-polytopes with the exact ℓ1 distance, D.5). Measured: ball points inside R_A or outside R_B (exact
    counting; the ball touches R_B by design, "outside" is > 1 + `common.CONTACT_TOL`) (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (s, norm) -> radius, keyword-only, default `ancer_inner_radius`
        The inner radius (`ancer_printed_inner_radius`: printed).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER App. D.4/D.5 (LargestOutSubset)"
    rng = check_stream(seed, cid)
    bad, used = 0, 0
    per = instance_count(mc_samples, 200, 100, 5000)
    for norm, p in ((regions.L2, 2.0), (regions.L1, 1.0)):
        for a, _, sa, b, _, sb in random_region_pairs(rng, instance_count(mc_samples, 4000, 20, 200)):
            dist = float(geometry.distance_to_region(b, a, sa, norm))
            if dist <= 0:
                continue
            used += 1
            rho = min(dist * (1 - geometry.SHRINK_MARGIN), float(formula(sb, norm)))
            n = a.size
            ball = b + rho * np.concatenate([uniform_ball(per, n, p, rng), unit_sphere(per, n, p, rng),
                                             np.eye(n), -np.eye(n)])
            bad += int((regions.region_norm(ball - a, sa, norm) <= 1).sum()
                       + (regions.region_norm(ball - b, sb, norm) > 1 + CONTACT_TOL).sum())
    return at_most(cid, f"ball points inside R_A or outside R_B ({used} pairs with b outside R_A, l2 and l1)",
                  bad, 0, 0, f"exact counting; the ball touches R_B by design ('outside': > 1 + {CONTACT_TOL:g})")


def hyperplane_projection(y: np.ndarray, w: np.ndarray, k: float) -> np.ndarray:
    """ANCER Lemma 4: the ℓ2 projection of y onto {w.x = k} is y - (w.y - k) w / ‖w‖².

    Parameters
    ----------
    y : numpy.ndarray, shape (n,)
        The point.
    w : numpy.ndarray, shape (n,)
        The hyperplane's normal.
    k : float
        Its offset.

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    return y - (y @ w - k) / (w @ w) * w


def check_ancer_lemma4(mc_samples: int, seed: int = 0, *,
                       formula: Callable[..., np.ndarray] = hyperplane_projection) -> CheckResult:
    """ANCER Lemma 4: x* lies on the hyperplane and no sampled point of the hyperplane is closer to y.

    Measured: max(|w.x* - k| / ‖w‖, ‖x* - y‖ - the smallest ‖z - y‖ over sampled hyperplane points z) (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (y, w, k) -> x*, keyword-only, default `hyperplane_projection`
        The projection.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER Lemma 4"
    rng = check_stream(seed, cid)
    worst = 0.0
    for _ in range(50):
        n = int(rng.integers(2, 6))
        y, w, k = rng.normal(size=n) * 2, rng.normal(size=n), float(rng.normal())
        x = formula(y, w, k)
        z = rng.normal(size=(mc_samples // 50, n)) * 3
        z = z - ((z @ w - k) / (w @ w))[:, None] * w                      # points of the hyperplane
        closer = np.linalg.norm(x - y) - np.linalg.norm(z - y, axis=1).min()
        worst = max(worst, abs(float(x @ w - k)) / np.linalg.norm(w), float(closer))
    return at_most(cid, "max(|w.x* - k| / ||w||, ||x* - y|| - min over sampled hyperplane points ||z - y||)",
                  worst, 0.0, EXACT_TOL, "closed form, float64 rounding")


def d5_normal(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """ANCER App. D.5 corrected: the facet of {sum |x_i| / s_i <= 1} facing y is w.x = 1, w = sign(y) / s.

    w_i = sign(y_i) A_ii.

    Parameters
    ----------
    y : numpy.ndarray, shape (n,)
        A point outside the cross-polytope.
    scales : numpy.ndarray, shape (n,)
        The cross-polytope's semi-axes s (A_ii = 1 / s_i).

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    return np.sign(y) / scales


def d5_printed_normal(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """ANCER App. D.5 as printed: w = [-sign(y_i) A_ii], k = 1.

    Parameters
    ----------
    y : numpy.ndarray, shape (n,)
        A point outside the cross-polytope.
    scales : numpy.ndarray, shape (n,)
        The cross-polytope's semi-axes s (A_ii = 1 / s_i).

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    return -np.sign(y) / scales


def check_ancer_d5_hyperplane(mc_samples: int, seed: int = 0, *,
                              formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = d5_normal) -> CheckResult:
    """ANCER App. D.5: the hyperplane w.x = 1 through the facet vertices supports the cross-polytope and separates y.

    It passes through the facet vertices sign(y_i) e_i / A_ii, w.x <= 1 on the cross-polytope and w.y > 1.
    Measured: max(|w.v - 1| over facet vertices, max w.x - 1 over the polytope, 1 - w.y) (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (y, s) -> w, keyword-only, default `d5_normal`
        The facet normal (`d5_printed_normal`: printed).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER App. D.5 (facet hyperplane)"
    rng = check_stream(seed, cid)
    worst = 0.0
    for _ in range(50):
        n = int(rng.integers(2, 6))
        s = np.exp(rng.uniform(math.log(0.2), math.log(2.0), n))
        y = rng.normal(size=n) * 3
        y *= 1.5 / max(np.abs(y / s).sum(), 1e-12) if np.abs(y / s).sum() < 1.5 else 1.0   # outside
        w = formula(y, s)
        vertices = np.diag(np.sign(y) * s)
        body = uniform_ball(mc_samples // 50, n, 1.0, rng) * s
        worst = max(worst, float(np.abs(vertices @ w - 1).max()), float((body @ w - 1).max()), float(1 - y @ w))
    return at_most(cid, "max(|w.v - 1| over facet vertices, max w.x - 1 over the polytope, 1 - w.y)", worst, 0.0,
                  EXACT_TOL, "closed form, float64 rounding")


def d5_radius(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """ANCER App. D.5 corrected: the exact ℓ1 distance to the cross-polytope (`geometry.l1_distance_to_cross_polytope`).

    Parameters
    ----------
    y : numpy.ndarray, shape (n,)
        A point outside the cross-polytope.
    scales : numpy.ndarray, shape (n,)
        The cross-polytope's semi-axes s (A_ii = 1 / s_i).

    Returns
    -------
    numpy.ndarray
        A scalar array.
    """
    return geometry.l1_distance_to_cross_polytope(y, scales)


def d5_printed_radius(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """ANCER App. D.5 as printed (sign of w fixed): r* = ‖x* - y‖_1, x* the ℓ2 projection of y onto the facet plane.

    Parameters
    ----------
    y : numpy.ndarray, shape (n,)
        A point outside the cross-polytope.
    scales : numpy.ndarray, shape (n,)
        The cross-polytope's semi-axes s (A_ii = 1 / s_i).

    Returns
    -------
    numpy.ndarray
        A scalar array.
    """
    return geometry.paper_l1_projection_radius(y, scales)


def d5_holder_radius(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """A sound closed form for ANCER App. D.5: the ℓ1 distance to the facet hyperplane (Hölder).

    (w.y - 1) / ‖w‖_∞ = (sum |y_i| / s_i - 1) min_i s_i, a lower bound on the ℓ1 distance to the polytope (0 inside).

    Parameters
    ----------
    y : numpy.ndarray, shape (n,)
        A point outside the cross-polytope.
    scales : numpy.ndarray, shape (n,)
        The cross-polytope's semi-axes s (A_ii = 1 / s_i).

    Returns
    -------
    numpy.ndarray
        A scalar array.
    """
    return np.maximum((np.abs(y) / scales).sum(axis=-1) - 1.0, 0.0) * np.asarray(scales).min(axis=-1)


#: ANCER D.5's counterexample: y = (3, 0.001) against the cross-polytope with semi-axes (1, 10)
D5_COUNTEREXAMPLE = (np.array([3.0, 0.001]), np.array([1.0, 10.0]))


def _d5_cases(rng: np.random.Generator, num: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The counterexample plus random points outside random cross-polytopes (n = 2..5)."""
    cases = [D5_COUNTEREXAMPLE]
    for _ in range(num):
        n = int(rng.integers(2, 6))
        s = np.exp(rng.uniform(math.log(0.1), math.log(10.0), n))
        y = rng.normal(size=n) * s * rng.uniform(0.5, 3.0)
        cases.append((y, s))
    return [(y, s) for y, s in cases if np.abs(y / s).sum() > 1]


def check_ancer_d5_sound(mc_samples: int, seed: int = 0, *,
                         formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = d5_radius) -> CheckResult:
    """ANCER App. D.5 soundness: an ℓ1 ball of radius formula(y, s) around y must miss the cross-polytope.

    I.e. the radius must not exceed the exact ℓ1 distance (LP); if it does, the LP's nearest point is a witness.
    The cases include `D5_COUNTEREXAMPLE`. Measured: the largest (radius - exact ℓ1 distance) / distance (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (y, s) -> radius, keyword-only, default `d5_radius`
        The ℓ1 radius (`d5_printed_radius`: printed).

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER App. D.5 (l1 radius sound)"
    rng = check_stream(seed, cid)
    worst, witnesses = -np.inf, 0
    for y, s in _d5_cases(rng, instance_count(mc_samples, 1000, 40, 1000)):
        exact, nearest = l1_nearest_point(y, s)
        r = float(formula(y, s))
        worst = max(worst, (r - exact) / exact)
        witnesses += int(np.abs(nearest - y).sum() < r and np.abs(nearest / s).sum() <= 1 + 1e-9)
    return at_most(cid, f"max (radius - exact l1 distance) / distance; {witnesses} balls contain a point of the "
                  "region (incl. y = (3, 0.001), s = (1, 10))", worst, 0.0, LP_TOL, "HiGHS LP, tolerances 1e-10")


def check_ancer_d5_exact(mc_samples: int, seed: int = 0, *,
                         formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = d5_radius) -> CheckResult:
    """ANCER App. D.5: the package's ℓ1 distance (`geometry.l1_distance_to_cross_polytope`) equals the LP's exact one.

    And the Hölder closed form (sum |y_i|/s_i - 1) min s_i (`d5_holder_radius`) never exceeds it. Measured:
    max(|distance - LP| / LP, Hölder bound / LP - 1) (<= 0).

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`); it sets the sample and instance counts.
    seed : int, default 0
        The notebook's seed; the check's generator is keyed by (seed, check id) (`common.check_stream`).
    formula : callable (y, s) -> radius, keyword-only, default `d5_radius`
        The ℓ1 distance.

    Returns
    -------
    common.CheckResult
    """
    cid = "ANCER App. D.5 (exact l1 distance)"
    rng = check_stream(seed, cid)
    worst = 0.0
    for y, s in _d5_cases(rng, instance_count(mc_samples, 1000, 40, 1000)):
        exact, _ = l1_nearest_point(y, s)
        worst = max(worst, abs(float(formula(y, s)) - exact) / exact, float(d5_holder_radius(y, s)) / exact - 1)
    return at_most(cid, "max(|distance - LP| / LP, Hölder bound / LP - 1)", worst, 0.0, LP_TOL,
                  "HiGHS LP, tolerances 1e-10")


# --------------------------------------------------------------------------------------------------
# figures' data (notebook 01, App. D)
# --------------------------------------------------------------------------------------------------


def k_curves(num: int = 400) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Notebook 01's App. D figure data: K(t) on (0, 1) for three fixed pairs of ellipses.

    An intersecting and a disjoint axis-aligned pair (ANCER App. D.2, diagonal form) and a disjoint rotated pair
    (RANCER Eq. 5, dense form).

    Parameters
    ----------
    num : int, default 400
        Points of t.

    Returns
    -------
    dict of str to (numpy.ndarray, numpy.ndarray)
        {label: (t, K(t))}, each of shape (num,).
    """
    t = np.linspace(1e-3, 1 - 1e-3, num)
    sa, sb = np.array([1.0, 0.4]), np.array([0.5, 1.2])
    out = {}
    for label, b in (("axis-aligned, intersecting", np.array([1.2, 0.8])),
                     ("axis-aligned, disjoint", np.array([1.6, 1.3]))):
        out[label] = (t, geometry.k_function(t, np.broadcast_to(b, (num, 2)), sa, sb))
    u = random_rotation(2, np.random.default_rng(3))
    qa, qb = rotated.precision(np.eye(2), sa), rotated.precision(u, sb)
    out["rotated, RANCER Eq. 5"] = (t, rotated.k_function(t, np.zeros(2), qa, np.array([1.3, 1.0]), qb))
    return out


def d5_counterexample_data() -> dict[str, object]:
    """Notebook 01's figure data of the ANCER App. D.5 counterexample (`D5_COUNTEREXAMPLE`).

    Returns
    -------
    dict
        y, scales (the region's semi-axes), normal (the facet normal w, facet w.x = 1) and projection (the ℓ2
        projection x* of y onto it, the printed construction), each of shape (2,); printed_radius (the printed
        r* = ‖x* - y‖_1), exact_radius (closed form) and lp_radius (LP), the exact ℓ1 distance; nearest (the nearest
        point of the region, shape (2,): a point inside the printed ℓ1 ball); holder_radius (the Hölder bound).
    """
    y, s = D5_COUNTEREXAMPLE
    exact, nearest = l1_nearest_point(y, s)
    w = d5_normal(y, s)
    return {"y": y, "scales": s, "normal": w, "projection": hyperplane_projection(y, w, 1.0),
            "printed_radius": float(d5_printed_radius(y, s)), "exact_radius": float(d5_radius(y, s)),
            "lp_radius": exact, "nearest": nearest, "holder_radius": float(d5_holder_radius(y, s))}
