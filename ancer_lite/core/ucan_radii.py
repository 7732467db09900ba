"""UCAN Table 1: binary-case certified radii for isotropic noise, their anisotropic versions (UCAN Theorem 3.2,
Appendix B Theorem B.1, Corollary 3.3) and the Alternative Lebesgue Measure (UCAN Eq. 23, Algorithm 1 line 7).

Conventions. p_A is a lower bound on the top-class probability under the noise and p_B = 1 - p_A (Table 1 is the
binary case); a certificate exists only for p_A in (1/2, 1]. lam (λ) is the scale of the isotropic noise, as in
Table 1 and Yang et al. (2020, "Randomized smoothing of all shapes and sizes", RS4A): Gaussian N(0, λ² I), Laplace
density ∝ exp(-||x||_1 / λ), "Exp. ℓ∞" density ∝ exp(-||x||_∞ / λ), "Uniform ℓ∞" U[-λ, λ]^d, "Power Law ℓ∞"
density ∝ (1 + ||x||_∞ / λ)^(-a). The anisotropic noise multiplies the scale of dimension i by σ_i > 0 (UCAN Eq. 2,
ε' = σ ⊙ ε + μ), and Theorem 3.2 certifies the region {δ : ||δ ⊘ σ||_p <= R(p_A')}, where R is the isotropic
radius function of the same row and p_A' the top-class probability under the anisotropic noise. The mean offset μ
does not enter the certificate. Every function refuses (ValueError or TypeError naming the argument) a p_a outside
(1/2, 1] or given as a bool, str or complex value, and a lam that is not a real number > 0 (a bool or str included).

UCAN §5.2 sets λ so that every coordinate of the noise has variance 1 (following RS4A); this repository reports
uniform noise against its standard deviation σ, i.e. λ = √3 σ (`ancer_lite.core.noise.uniform_lambda`).
`unit_variance_lambda` and `lambda_for_std` give λ for each family.

Table layout. The seed is a plain-text extraction of Table 1 in which the multi-row "Distribution" and "PDF" cells
are stacked on consecutive lines, so they do not line up with the per-row "Adv." and radius cells. The nine radius
rows, read with their adversary, are (keys of `TABLE1_ROWS`):

    gaussian/l2     λ Φ^-1(p_A)                  Gaussian, Cohen et al. (2019)
    gaussian/l1     λ Φ^-1(p_A)                  Gaussian, Yang et al. (2020)
    gaussian/linf   λ Φ^-1(p_A) / √d             Gaussian, Yang et al. (2020)
    laplace/l1      -λ log(2 (1 - p_A))          Laplace, Teng et al. (2020)
    exp_linf/l1     2 d λ (p_A - 1/2)            Exp. ℓ∞, Yang et al. (2020)
    exp_linf/linf   λ log(1 / (2 (1 - p_A)))     Exp. ℓ∞, Yang et al. (2020)
    uniform_linf/l1 2 λ (p_A - 1/2)              Uniform ℓ∞, Lee et al. (2019)
    uniform_linf/linf (printed wrong, see ERRATA)
    power_law_linf/l1 (printed wrong, see ERRATA)

The extraction prints the label "Laplace, Teng et al. (2020)" on the third line (ℓ∞, λ Φ^-1(p_A)/√d). That radius
is the Gaussian ℓ2 radius moved to ℓ∞ by ||δ||_2 <= √d ||δ||_∞ (tight for Gaussian noise); for Laplace noise of
scale λ the same expression is only RS4A's high-dimensional approximation to the ℓ∞ radius
(rs4a `Laplace.certify_linf(mode='approx')`), not a proven bound (RS4A certifies Laplace/ℓ∞ by a numerically
integrated table). This module reads the line as Gaussian/ℓ∞, the reading under which the printed radius is a
proven (and tight) certificate; a Laplace/ℓ∞ radius is not implemented.

Sources of the correct forms: Cohen et al. (2019) Theorem 1; Teng et al. (2020) Theorem 1; Lee et al. (2019) and
Yang et al. (2020) Table 1, whose reference implementation is tonyduan/rs4a `src/noises/noises.py` (`Uniform`,
`ExpInf`, `PowInf`). Each row is its family's (`families`: the radius functions stand next to their family's class
and are read here under the same names, `gaussian_l2_radius`, ...); each radius is re-derived in its docstring.
`TABLE1` and `TABLE1_ROWS` are built from the registered families' rows. `ERRATA` lists the rows printed wrong.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .families import (  # noqa: F401 (Table 1's radius functions and names, read as ucan_radii.<name>)
    EXP_LINF,
    FAMILIES,
    LAPLACE,
    POWER_LAW_LINF,
    UCAN_NOISES,
    UNIFORM_LINF,
    FloatOrArray,
    LiveMapping,
    LiveTuple,
    Table1Row,
    check_p_a,
    exp_linf_l1_radius,
    exp_linf_linf_radius,
    gaussian_l1_radius,
    gaussian_l2_radius,
    gaussian_linf_radius,
    laplace_l1_radius,
    power_law_linf_l1_radius,
    scalar_or_array,
    uniform_l1_radius,
    uniform_linf_radius,
)
from .names import GAUSSIAN, L1, L2, LINF  # noqa: F401 (GAUSSIAN: read as ucan_radii.GAUSSIAN)
from .validation import check_positive

#: UCAN's noises: the registered families with rows of Table 1 (a live view, `families.UCAN_NOISES`)
NOISES = UCAN_NOISES

#: the exponent p of each adversary's norm
P_OF_NORM = {L1: 1.0, L2: 2.0, LINF: math.inf}


# --------------------------------------------------------------------------------------------------
# argument checks (ValueError naming the argument and what was expected)
# --------------------------------------------------------------------------------------------------


def _check_sigma(sigma: np.ndarray | float, name: str = "sigma") -> np.ndarray:
    """Per-dimension scale multipliers: a non-empty float64 array, finite and > 0 everywhere."""
    try:
        s = np.asarray(sigma, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of finite numbers > 0, got {sigma!r}") from None
    if s.ndim == 0:
        s = s.reshape(1)
    if s.size == 0:
        raise ValueError(f"{name} must have at least one dimension's value, got an empty array")
    if not np.isfinite(s).all() or not (s > 0).all():
        raise ValueError(f"{name} must be finite and > 0 in every dimension")
    return s


def _check_radius(radius: FloatOrArray, name: str = "radius") -> np.ndarray:
    try:
        r = np.asarray(radius, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number >= 0, got {radius!r}") from None
    if np.isnan(r).any() or (r < 0).any():
        raise ValueError(f"{name} must be >= 0 (inf allowed for p_A = 1), got {radius!r}")
    return r


def _check_p(p: float | str) -> float:
    """An ℓ_p exponent p >= 1 (float or math.inf) or a norm name 'l1', 'l2', 'linf'."""
    if isinstance(p, str):
        if p not in P_OF_NORM:
            raise ValueError(f"p must be a number >= 1, inf, or one of {list(P_OF_NORM)}, got {p!r}")
        return P_OF_NORM[p]
    try:
        v = float(p)
    except (TypeError, ValueError):
        raise ValueError(f"p must be a number >= 1, inf, or one of {list(P_OF_NORM)}, got {p!r}") from None
    if isinstance(p, bool) or math.isnan(v) or v < 1:
        raise ValueError(f"p must be >= 1 (an ℓ_p norm), got {p!r}")
    return v


def _check_noise(noise: str) -> str:
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {list(NOISES)}, got {noise!r}")
    return noise


# --------------------------------------------------------------------------------------------------
# Table 1: the families' rows (radii in `families`) and the printed forms of the rows printed wrong
# --------------------------------------------------------------------------------------------------


def uniform_linf_radius_printed(p_a: FloatOrArray, lam: float) -> FloatOrArray:
    """Table 1 row Uniform ℓ∞ / ℓ∞ AS PRINTED: 2 λ (1 - sqrt(1/2 - p_A)) (all three radius columns).

    The radicand 1/2 - p_A is negative for every p_A in (1/2, 1], so the printed radius is undefined: this returns
    NaN there. (A lost root index d, as elsewhere in the extraction, does not help: the radicand stays negative.)
    The correct radius, 2 λ (1 - (3/2 - p_A)^(1/d)), is `uniform_linf_radius`.

    Parameters
    ----------
    p_a : float or numpy.ndarray, any shape
        Lower bounds on the top-class probability, in (1/2, 1].
    lam : float
        The noise scale λ, a real number > 0.

    Returns
    -------
    float or numpy.ndarray
        The printed radius, NaN for every valid p_a: a float for a number p_a, else an array of float64 shaped as p_a.
    """
    p = check_p_a(p_a)
    with np.errstate(invalid="ignore"):
        return scalar_or_array(2.0 * check_positive(lam, "lam") * (1.0 - np.sqrt(0.5 - p)))


def power_law_linf_l1_radius_printed(p_a: FloatOrArray, lam: float, alpha: float) -> FloatOrArray:
    """Table 1 row Power Law ℓ∞ / ℓ1 AS PRINTED: 2 α λ / (α - 1) · (p_A - 1/2), with the PDF printed as
    ∝ 1 / (1 + ||·||_∞)^(1/α).

    Wrong under either reading of α. Read literally (exponent 1/α), the density is integrable on R^d only for
    1/α > d, i.e. α < 1/d <= 1, where the printed radius is negative. Read as RS4A's exponent a (α = a > d), it
    drops the dimension: the printed/correct ratio is a (a - d) / (d (a - 1)), > 1 whenever a > 2d (e.g. 3.4 for
    d = 2, a = 8), and a Monte Carlo half-space counterexample then lies inside the printed radius. The correct
    radius, 2 d λ / (a - d) · (p_A - 1/2), is `power_law_linf_l1_radius`.

    Parameters
    ----------
    p_a : float or numpy.ndarray, any shape
        Lower bounds on the top-class probability, in (1/2, 1].
    lam : float
        The noise scale λ, a real number > 0.
    alpha : float
        The printed α, a finite number other than 1 (ValueError otherwise).

    Returns
    -------
    float or numpy.ndarray
        The printed radius: a float for a number p_a, else an array of float64 shaped as p_a.
    """
    p = check_p_a(p_a)
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a finite number other than 1, got {alpha!r}") from None
    if not math.isfinite(alpha) or alpha == 1.0:
        raise ValueError(f"alpha must be a finite number other than 1, got {alpha!r}")
    return scalar_or_array(2.0 * alpha * check_positive(lam, "lam") / (alpha - 1.0) * (p - 0.5))


#: UCAN Table 1's radius rows (correct forms): the registered families' rows, in registration order (a live view)
TABLE1 = LiveTuple(lambda: tuple(row for fam in FAMILIES.values() for row in fam.rows))
#: the rows of `TABLE1` by key ("noise/norm"; a live view)
TABLE1_ROWS = LiveMapping(lambda: {row.key: row for row in TABLE1})


def table1_row(key: str) -> Table1Row:
    """The Table 1 row with this key ('noise/norm', e.g. 'laplace/l1').

    Parameters
    ----------
    key : str
        A key of `TABLE1_ROWS` (ValueError naming the keys otherwise).

    Returns
    -------
    Table1Row
        The row.
    """
    if key not in TABLE1_ROWS:
        raise ValueError(f"row must be one of {list(TABLE1_ROWS)}, got {key!r}")
    return TABLE1_ROWS[key]


def isotropic_radius(row: str, p_a: FloatOrArray, lam: float, d: int | None = None,
                     a: float | None = None) -> FloatOrArray:
    """Table 1 column "ℓp Radius for Iso. RS" for the row with key `row`; d and a are required by the rows that
    use them (see `Table1Row.params`).

    Parameters
    ----------
    row : str
        A key of `TABLE1_ROWS` ('noise/norm', e.g. 'laplace/l1').
    p_a : float or numpy.ndarray, any shape
        Lower bounds on the top-class probability, in (1/2, 1].
    lam : float
        The isotropic noise's scale λ, a real number > 0.
    d : int, optional
        The dimension, an integer >= 1; required by the rows whose params include "d" (ValueError when None),
        ignored by the others.
    a : float, optional
        The power-law exponent (> d); required by the power-law row, ignored by the others.

    Returns
    -------
    float or numpy.ndarray
        The radius R: a float for a number p_a, else an array of float64 shaped as p_a.
    """
    r = table1_row(row)
    extra = {"d": d, "a": a}
    kwargs = {}
    for name in r.params:
        if extra[name] is None:
            raise ValueError(f"row {row!r} needs {name} (got None)")
        kwargs[name] = extra[name]
    return r.radius(p_a, lam, **kwargs)


# --------------------------------------------------------------------------------------------------
# noise scale for unit variance (UCAN §5.2 / RS4A) and for a given standard deviation (repo convention)
# --------------------------------------------------------------------------------------------------


def unit_variance_lambda(noise: str, d: int | None = None, a: float | None = None) -> float:
    """λ such that every coordinate of the isotropic noise has variance 1 (UCAN §5.2, following RS4A's `_sigma`).

    Per-coordinate variance as a function of λ:
      gaussian        N(0, λ²)                           λ²                          -> λ = 1
      laplace         ∝ exp(-||x||_1/λ)                  2 λ²                        -> λ = 1/√2
      uniform_linf    U[-λ, λ]^d                         λ²/3                        -> λ = √3
      exp_linf        ∝ exp(-||x||_∞/λ)                  λ² (d + 1)(d + 2)/3         -> λ = √(3 / ((d + 1)(d + 2)))
      power_law_linf  ∝ (1 + ||x||_∞/λ)^(-a), a > d + 2  λ² (d + 1)(d + 2) / (3 (a - d - 1)(a - d - 2))
                                                          -> λ = √(3 (a - d - 1)(a - d - 2) / ((d + 1)(d + 2)))
    (The ℓ∞ families are mixtures of cubes [-s, s]^d, so the variance is E[s²]/3 with s ~ Gamma(d + 1, λ), resp.
    s/λ ~ BetaPrime(d + 1, a - d).) d is required for the ℓ∞ families and a for the power law.

    Parameters
    ----------
    noise : str
        One of `NOISES` (UCAN's families).
    d : int, optional
        The dimension, an integer >= 1; required for exp_linf and power_law_linf, ignored by the others.
    a : float, optional
        The power-law exponent, > d + 2; required for power_law_linf, ignored by the others.

    Returns
    -------
    float
        λ; a standard deviation σ is the scale σ λ.
    """
    return FAMILIES[_check_noise(noise)].unit_variance_lambda(d, a)


def lambda_for_std(noise: str, std: float, d: int | None = None, a: float | None = None) -> float:
    """λ such that every coordinate of the noise has standard deviation `std`: std · `unit_variance_lambda`.
    For uniform noise this is the repository's λ = √3 σ (`ancer_lite.core.noise.uniform_lambda`).

    Parameters
    ----------
    noise, d, a : as in `unit_variance_lambda`
    std : float
        The per-coordinate standard deviation, a real number > 0.

    Returns
    -------
    float
        λ = std · unit_variance_lambda(noise, d, a).
    """
    return check_positive(std, "std") * unit_variance_lambda(noise, d, a)


# --------------------------------------------------------------------------------------------------
# anisotropic certificate (Theorem 3.2 / B.1, Corollary 3.3) and the ALM (Eq. 23, Algorithm 1)
# --------------------------------------------------------------------------------------------------


def _check_delta(delta: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    try:
        dl = np.asarray(delta, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"delta must be an array of numbers, got {delta!r}") from None
    k = sigma.ndim
    if dl.shape[dl.ndim - k:] != sigma.shape or dl.ndim < k:
        raise ValueError(f"delta must have shape {sigma.shape} or (..., {', '.join(map(str, sigma.shape))}) to "
                         f"match sigma, got {dl.shape}")
    if not np.isfinite(dl).all():
        raise ValueError("delta must contain only finite values")
    return dl


def anisotropic_scaled_norm(delta: np.ndarray, sigma: np.ndarray, p: float | str) -> FloatOrArray:
    """||δ ⊘ σ||_p = (sum_i |δ_i/σ_i|^p)^(1/p) over sigma's axes (trailing axes of delta; leading axes batch):
    the quantity UCAN Theorem 3.2 (Eq. 19) bounds by R. The absolute values are missing in the printed statement
    (see `ancer_lite.proof_checks.ucan_printed_l1_region`).

    Parameters
    ----------
    delta : numpy.ndarray, shape (..., *sigma.shape)
        The perturbations δ, finite; the leading axes are a batch.
    sigma : numpy.ndarray, any shape (a number is one dimension)
        The per-dimension scale multipliers σ, finite and > 0, at least one entry; d = sigma.size.
    p : float or str
        The norm's exponent: a number >= 1, math.inf, or one of "l1", "l2", "linf".

    Returns
    -------
    float or numpy.ndarray of float64, shape (...)
        The scaled norms: a float for one δ (delta of sigma's shape), else an array over delta's leading axes.
    """
    s = _check_sigma(sigma)
    dl = _check_delta(delta, s)
    pv = _check_p(p)
    z = np.abs(dl / s).reshape(*dl.shape[:dl.ndim - s.ndim], -1)
    if math.isinf(pv):
        out = z.max(axis=-1)
    elif pv == 1.0:
        out = z.sum(axis=-1)
    else:
        m = z.max(axis=-1, keepdims=True)  # scale out the largest entry so that z**p cannot overflow
        safe = np.where(m > 0, m, 1.0)
        out = (safe[..., 0] * ((z / safe) ** pv).sum(axis=-1) ** (1.0 / pv)) * (m[..., 0] > 0)
    return scalar_or_array(np.asarray(out))


def in_anisotropic_region(delta: np.ndarray, sigma: np.ndarray, radius: float, p: float | str) -> bool | np.ndarray:
    """Whether x + δ lies in the region UCAN Theorem 3.2 certifies: ||δ ⊘ σ||_p <= R, with R the isotropic radius
    of the row evaluated at the anisotropic noise's p_A'. The region is diag(σ) applied to the isotropic ℓ_p ball
    of radius R.

    Parameters
    ----------
    delta, sigma, p : as in `anisotropic_scaled_norm`
    radius : float
        R, a single number >= 0 (inf allowed).

    Returns
    -------
    bool or numpy.ndarray of bool, shape (...)
        A bool for one δ, else an array over delta's leading axes.
    """
    r_arr = _check_radius(radius)
    if r_arr.ndim != 0:
        raise ValueError(f"radius must be a single number >= 0 for one region, got shape {r_arr.shape}")
    r = float(r_arr)
    inside = np.asarray(anisotropic_scaled_norm(delta, sigma, p)) <= r
    return bool(inside) if inside.ndim == 0 else inside


def anisotropic_lp_radius(sigma: np.ndarray, radius: FloatOrArray) -> FloatOrArray:
    """UCAN Corollary 3.3 (Eq. 4) and Table 1 column "ℓp Radius for Ani. RS": R' = min_i σ_i · R, the radius of the
    largest ℓ_p ball (same p as the row) inside {||δ ⊘ σ||_p <= R}; attained on the axis of the smallest σ_i.

    Parameters
    ----------
    sigma : numpy.ndarray, any shape (a number is one dimension)
        The per-dimension scale multipliers σ, finite and > 0, at least one entry; d = sigma.size.
    radius : float or numpy.ndarray, any shape
        The isotropic radius R of the row at p_A', >= 0 (inf allowed, for p_A' = 1).

    Returns
    -------
    float or numpy.ndarray
        R': a float for a number radius, else an array of float64 shaped as radius.
    """
    return scalar_or_array(float(_check_sigma(sigma).min()) * _check_radius(radius))


def alternative_lebesgue_measure(sigma: np.ndarray, radius: FloatOrArray) -> FloatOrArray:
    """UCAN Eq. 23 / Algorithm 1 line 7 and Table 1 column "Alt. Lebesgue Measure": ALM = (prod_i σ_i)^(1/d) · R.

    The d-th root of the certified region's volume (Theorem C.2, Eq. 22) with the constant
    (2 Γ(1 + 1/p))^d / Γ(1 + d/p) removed. Computed as exp(mean(log σ)) · R, so d = 150,528 neither overflows
    nor underflows. Equals R when every σ_i = 1, and is ANCER's proxy radius (`ancer_lite.core.regions.proxy_radius`).
    UCAN §5 (Metrics) prints the root as p-th (`alternative_lebesgue_measure_printed`); see ERRATA.

    Parameters
    ----------
    sigma : numpy.ndarray, any shape (a number is one dimension)
        The per-dimension scale multipliers σ, finite and > 0, at least one entry; d = sigma.size.
    radius : float or numpy.ndarray, any shape
        The isotropic radius R of the row at p_A', >= 0 (inf allowed, for p_A' = 1).

    Returns
    -------
    float or numpy.ndarray
        The ALM: a float for a number radius, else an array of float64 shaped as radius.
    """
    s = _check_sigma(sigma)
    return scalar_or_array(math.exp(float(np.log(s).mean())) * _check_radius(radius))


def alternative_lebesgue_measure_printed(sigma: np.ndarray, radius: FloatOrArray, p: float | str) -> FloatOrArray:
    """UCAN §5 "Metrics" AS PRINTED: the ball radius in Acc(ALM) is (prod_i σ_i)^(1/p) · R (p-th root), which
    contradicts Eq. 23 and Algorithm 1 (d-th root). For σ_i = c it is c^(d/p) R instead of c R, so it is not
    homogeneous of degree 1 in σ and overflows to inf for image-sized d (here computed in log space, then
    exponentiated as printed).

    Parameters
    ----------
    sigma, radius : as in `alternative_lebesgue_measure`
    p : float or str
        The norm's exponent: a number >= 1, math.inf, or one of "l1", "l2", "linf".

    Returns
    -------
    float or numpy.ndarray
        The printed measure (inf where it overflows): a float for a number radius, else an array of float64
        shaped as radius.
    """
    s = _check_sigma(sigma)
    pv = _check_p(p)
    with np.errstate(over="ignore"):
        return scalar_or_array(np.exp(np.log(s).sum() / pv) * _check_radius(radius))


def laplace_l1_alm_printed(sigma: np.ndarray, p_a: FloatOrArray, lam: float) -> FloatOrArray:
    """Table 1 row Laplace / ℓ1, column "Alt. Lebesgue Measure" AS PRINTED: (prod_i σ_i λ log(2(1 - p_A')))^(1/d),
    i.e. (prod σ_i)^(1/d) · λ log(2 (1 - p_A')). The minus sign of the row's own radius -λ log(2(1 - p_A)) is
    dropped, so the printed value is negative (-ALM) for every p_A' in (1/2, 1). Correct:
    `alternative_lebesgue_measure(sigma, laplace_l1_radius(p_a, lam))`.

    Parameters
    ----------
    sigma : numpy.ndarray, any shape (a number is one dimension)
        The per-dimension scale multipliers σ, finite and > 0, at least one entry; d = sigma.size.
    p_a : float or numpy.ndarray, any shape
        Lower bounds p_A' on the top-class probability under the anisotropic noise, in (1/2, 1].
    lam : float
        The noise scale λ, a real number > 0.

    Returns
    -------
    float or numpy.ndarray
        The printed ALM (<= 0): a float for a number p_a, else an array of float64 shaped as p_a.
    """
    return scalar_or_array(-np.asarray(alternative_lebesgue_measure(sigma, laplace_l1_radius(p_a, lam))))


def power_law_linf_l1_alm_printed(sigma: np.ndarray, p_a: FloatOrArray, lam: float, alpha: float) -> FloatOrArray:
    """Table 1 row Power Law ℓ∞ / ℓ1, column "Alt. Lebesgue Measure" AS PRINTED:
    2 (prod_i σ_i · 2 α λ/(α - 1) (p_A - 1/2))^(1/d) = 2 · (prod σ_i)^(1/d) · R_printed. The leading 2 is already
    inside the row's radius 2 α λ/(α - 1)(p_A - 1/2), so the printed ALM is twice the ALM of its own radius column
    (besides inheriting that radius's error). Correct: `alternative_lebesgue_measure(sigma,
    power_law_linf_l1_radius(p_a, lam, d, a))`.

    Parameters
    ----------
    sigma : numpy.ndarray, any shape (a number is one dimension)
        The per-dimension scale multipliers σ, finite and > 0, at least one entry; d = sigma.size.
    p_a : float or numpy.ndarray, any shape
        Lower bounds p_A' on the top-class probability under the anisotropic noise, in (1/2, 1].
    lam : float
        The noise scale λ, a real number > 0.
    alpha : float
        The printed α, a finite number other than 1.

    Returns
    -------
    float or numpy.ndarray
        The printed ALM: a float for a number p_a, else an array of float64 shaped as p_a.
    """
    return scalar_or_array(2.0 * np.asarray(alternative_lebesgue_measure(
        sigma, power_law_linf_l1_radius_printed(p_a, lam, alpha))))


@dataclass(frozen=True)
class AnisotropicCertificate:
    """The anisotropic certificate of one Table 1 row: the region {δ : ||δ ⊘ σ||_p <= radius} (Theorem 3.2), the
    enclosed ℓ_p radius min σ_i · radius (Corollary 3.3) and the ALM (Eq. 23)."""
    row: str
    norm: str
    p: float
    radius: FloatOrArray
    lp_radius: FloatOrArray
    alm: FloatOrArray


def anisotropic_certificate(row: str, p_a: FloatOrArray, sigma: np.ndarray, lam: float,
                            a: float | None = None) -> AnisotropicCertificate:
    """Table 1's three anisotropic columns for the row with key `row`, from p_A' (the top-class probability lower
    bound under the anisotropic noise λ σ ⊙ ε + μ): "Anisotropic Guarantee" ||δ ⊘ σ||_p <= R(p_A'),
    "ℓp Radius for Ani. RS" min σ_i R(p_A') and "Alt. Lebesgue Measure" (prod σ_i)^(1/d) R(p_A'). The dimension d
    of the d-dependent rows is sigma.size.

    Parameters
    ----------
    row : str
        A key of `TABLE1_ROWS` ('noise/norm', e.g. 'laplace/l1').
    p_a : float or numpy.ndarray, any shape
        Lower bounds p_A' on the top-class probability under the anisotropic noise, in (1/2, 1].
    sigma : numpy.ndarray, any shape (a number is one dimension)
        The per-dimension scale multipliers σ, finite and > 0, at least one entry; d = sigma.size.
    lam : float
        The noise's scale λ, a real number > 0.
    a : float, optional
        The power-law exponent (> d); required by the power-law row, ignored by the others.

    Returns
    -------
    AnisotropicCertificate
        The row, its norm and exponent p, the radius R(p_A'), the enclosed ℓ_p radius min σ_i R and the ALM, each a
        float for a number p_a, else an array shaped as p_a.
    """
    s = _check_sigma(sigma)
    r = table1_row(row)
    radius = isotropic_radius(row, p_a, lam, d=s.size, a=a)
    return AnisotropicCertificate(row=row, norm=r.norm, p=P_OF_NORM[r.norm], radius=radius,
                                  lp_radius=anisotropic_lp_radius(s, radius),
                                  alm=alternative_lebesgue_measure(s, radius))


# --------------------------------------------------------------------------------------------------
# errata of UCAN Table 1 (and the ALM metric) found while implementing it
# --------------------------------------------------------------------------------------------------

#: Each entry: row (Table 1 row key / section), printed, correct, why, and the functions implementing both forms.
ERRATA: list[dict[str, str]] = [
    {
        "row": "uniform_linf/linf (all three radius columns)",
        "printed": "2 λ (1 - sqrt(1/2 - p_A))",
        "correct": "2 λ (1 - (3/2 - p_A)^(1/d))",
        "why": "The radicand 1/2 - p_A is negative for every p_A in (1/2, 1], so the printed radius is undefined. "
               "Lee et al. (2019) / Yang et al. (2020) Table 1 (rs4a Uniform.certify_linf): the shifted cubes "
               "overlap in a fraction (1 - r/(2λ))^d, so p_A - (1 - (1 - r/(2λ))^d) >= 1/2 iff "
               "(1 - r/(2λ))^d >= 3/2 - p_A; tight for the worst-case set.",
        "printed_function": "uniform_linf_radius_printed",
        "correct_function": "uniform_linf_radius",
    },
    {
        "row": "power_law_linf/l1 (PDF and all three radius columns)",
        "printed": "PDF ∝ 1/(1 + ||·||_∞)^(1/α); R = 2 α λ/(α - 1) (p_A - 1/2)",
        "correct": "PDF ∝ (1 + ||x||_∞/λ)^(-a), a > d; R = 2 d λ/(a - d) (p_A - 1/2)",
        "why": "Yang et al. (2020) Table 1 (rs4a PowInf.certify_l1), re-derived from the mixture of uniform cubes "
               "with s/λ ~ BetaPrime(d + 1, a - d), E[1/s] = (a - d)/(d λ). The printed radius has no d: with the "
               "printed exponent 1/α the density is integrable only for α < 1/d, where the printed radius is "
               "negative; with α read as a (> d) it is a (a - d)/(d (a - 1)) times the correct radius, > 1 for "
               "a > 2d, and unsound there (Monte Carlo counterexample in tests/test_ucan_radii.py).",
        "printed_function": "power_law_linf_l1_radius_printed",
        "correct_function": "power_law_linf_l1_radius",
    },
    {
        "row": "power_law_linf/l1 (column Alt. Lebesgue Measure)",
        "printed": "2 (prod_i σ_i · 2 α λ/(α - 1) (p_A - 1/2))^(1/d)",
        "correct": "(prod_i σ_i)^(1/d) · R(p_A'), R = 2 d λ/(a - d) (p_A' - 1/2)",
        "why": "ALM = (prod σ_i)^(1/d) R (Eq. 23, Algorithm 1); the factor 2 is already inside the row's radius, so "
               "the printed ALM is twice the ALM of the printed radius (on top of the radius erratum).",
        "printed_function": "power_law_linf_l1_alm_printed",
        "correct_function": "alternative_lebesgue_measure",
    },
    {
        "row": "laplace/l1 (column Alt. Lebesgue Measure)",
        "printed": "(prod_i σ_i λ log(2 (1 - p_A')))^(1/d)",
        "correct": "-(prod_i σ_i)^(1/d) λ log(2 (1 - p_A')) = (prod_i σ_i)^(1/d) λ log(1/(2 (1 - p_A')))",
        "why": "The row's own radius is -λ log(2(1 - p_A)) (Teng et al. 2020 Theorem 1, binary case); the ALM drops "
               "the minus sign, which makes it negative for every p_A' in (1/2, 1).",
        "printed_function": "laplace_l1_alm_printed",
        "correct_function": "alternative_lebesgue_measure",
    },
    {
        "row": "§5 Metrics (Acc(ALM)) and §5.1 text",
        "printed": "||δ||_p <= (prod_i σ_i)^(1/p) R",
        "correct": "(prod_i σ_i)^(1/d) R",
        "why": "Eq. 23, Algorithm 1 line 7 and Table 1 define the ALM with the d-th root (the d-th root of the "
               "region's volume up to a constant, Theorem C.2). The p-th root is not homogeneous of degree 1 in σ "
               "(σ_i = c gives c^(d/p) R) and overflows for image-sized d.",
        "printed_function": "alternative_lebesgue_measure_printed",
        "correct_function": "alternative_lebesgue_measure",
    },
    {
        "row": "all rows (column ℓp Radius for Ani. RS)",
        "printed": "min_i σ_i · R(p_A)",
        "correct": "min_i σ_i · R(p_A')",
        "why": "Corollary 3.3 bounds the region of Theorem 3.2, whose radius is evaluated at p_A', the probability "
               "under the anisotropic noise (as the neighbouring Anisotropic Guarantee and ALM columns write); the "
               "isotropic p_A belongs to a different smoothed classifier. Notational, but taking p_A from an "
               "isotropic run would be unsound.",
        "printed_function": "",
        "correct_function": "anisotropic_lp_radius",
    },
    {
        "row": "PDF column (gaussian/l1, laplace/l1, exp_linf rows)",
        "printed": "Gaussian (Yang): ∝ exp(-½||δ||_1²); Laplace: ∝ exp(-½||δ||_1); Exp. ℓ∞: ∝ exp(-½||δ||_1); no λ",
        "correct": "Gaussian: ∝ exp(-||x||_2²/(2λ²)); Laplace: ∝ exp(-||x||_1/λ); Exp. ℓ∞: ∝ exp(-||x||_∞/λ)",
        "why": "The radii printed in these rows are those of these densities (Cohen et al. 2019; Teng et al. 2020; "
               "Yang et al. 2020 Table 1 / rs4a Gaussian, Laplace, ExpInf). A density ∝ exp(-||x||_1/(2λ)) would be "
               "Laplace of scale 2λ (radius twice the printed one), and the printed 'Exp. ℓ∞' density is the "
               "Laplace one. May partly be an artefact of the text extraction.",
        "printed_function": "",
        "correct_function": "",
    },
]
