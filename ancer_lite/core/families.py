"""Noise families, one class per family (the shape of tonyduan/rs4a's `src/noises/`), and the registry that every
list of noise names is derived from.

A family declares what it is: its `name`; the norm ANCER certifies with it (`ancer_norm`), with that certificate's
gap factor (`gap`) and the gap's differentiable proxy (`soft_gap`, App. C, Listing 1); its rows of UCAN Table 1
(`rows`: the isotropic radius of each adversary norm as a function of p_A and λ, and of d and a where the row needs
them); whether its law is rotation invariant (`rotation_invariant`, the condition of RANCER's Eq. 2); how it draws
its unit-scale noise (`draw`, into a preallocated tensor, in blocks of `draw_block` numbers); and its scale for unit
variance (`unit_variance_lambda`).

    family          density at scale λ                    ANCER certifies   UCAN Table 1 rows
    gaussian        N(0, λ² I)                            ℓ2 (Cor. 1)       ℓ2, ℓ1, ℓ∞
    uniform         U[-λ, λ]^d                            ℓ1 (Cor. 2)       -
    laplace         ∝ exp(-||x||_1 / λ)                   -                 ℓ1
    exp_linf        ∝ exp(-||x||_∞ / λ)                   -                 ℓ1, ℓ∞
    uniform_linf    U[-λ, λ]^d                            -                 ℓ1, ℓ∞
    power_law_linf  ∝ (1 + ||x||_∞ / λ)^(-a), a > d       -                 ℓ1

ANCER's "uniform" and UCAN's "uniform_linf" are the same distribution under the two papers' names; both are kept so
that each paper's tables read as printed. Log-volumes depend on the region's norm only (`regions.log_volume`).

Adding a family is one class and one `register` call::

    class Mine(NoiseFamily):
        name, ancer_norm = "mine", L1                   # ancer_norm None: UCAN's certificates only
        rows = (Table1Row.of("mine", L1, "Someone et al. (2024)", mine_l1_radius),)
        def draw(self, out, generator=None, a=None): ...
        def unit_variance_lambda(self, d=None, a=None): ...
        def gap(self, p): ...                           # the gap of ANCER's certificate (with an ancer_norm)

    register(Mine())

Every list of names is a view of the registered families, recomputed at each use, so a family registered later
appears in it, also where it was imported by name before: `ANCER_NOISES` (`noise.NOISES`, the families with an
`ancer_norm`), `UCAN_NOISES` (`ucan_radii.NOISES`, those with Table 1 rows), `NORM_OF` (ANCER's family -> norm),
`NOISE_OF` (norm -> the first family registered for it; `names` gives both) and `ucan_radii.TABLE1` /
`TABLE1_ROWS` (the families' rows in registration order). No module branches on a family's name.

The draws are those of torch's own samplers on an explicit generator: the Gaussian and the uniform fill the tensor
in place with `normal_` / `uniform_(-1, 1)` (in its dtype); the Laplace is a difference of two exponentials and the
two ℓ∞ mixtures draw, per sample, their Gamma variables as sums of exponentials and their cube from one row of
uniforms, in float64, cast into the tensor. One seeded generator thus fixes every draw whatever the batch size.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.special import ndtri

from .names import GAUSSIAN, L1, L2, LINF, NORMS, UNIFORM
from .validation import check_choice, check_count, check_positive, check_real

LAPLACE = "laplace"
EXP_LINF = "exp_linf"
UNIFORM_LINF = "uniform_linf"
POWER_LAW_LINF = "power_law_linf"

#: the adversary norms of UCAN Table 1's rows
TABLE1_NORMS = (L1, L2, LINF)

#: a - d of the power-law family when none is given (finite variance needs a - d > 2)
POWER_LAW_TAIL = 10

FloatOrArray = float | np.ndarray


# --------------------------------------------------------------------------------------------------
# argument checks shared by the families' radii
# --------------------------------------------------------------------------------------------------


def power_law_exponent(d: int, a: float | None = None) -> float:
    """The exponent a of the power-law family for dimension d.

    Parameters
    ----------
    d : int
        The dimension, an integer >= 1.
    a : float or None
        The exponent, a real number (not a str or bool) with a - d an integer > 2 (Gamma(a - d) is drawn as a sum
        of exponentials); None for d + `POWER_LAW_TAIL`.

    Returns
    -------
    float
        a.
    """
    d = check_count(d, "d")
    a = float(d + POWER_LAW_TAIL) if a is None else float(check_real(a, "a"))
    tail = a - d
    if not (math.isfinite(tail) and tail > 2 and tail == round(tail)):
        raise ValueError(f"a must be d + k for an integer k > 2 (d = {d}), got {a!r}")
    return a


def check_exponent(a: float, d: int) -> float:
    """The power-law exponent a of (1 + ||x||_∞/λ)^(-a), checked: finite and > d (else the density is not
    integrable on R^d).

    Parameters
    ----------
    a : float
        The exponent.
    d : int
        The dimension.

    Returns
    -------
    float
        a as a float.
    """
    try:
        v = float(a)
    except (TypeError, ValueError):
        raise ValueError(f"a must be a finite number > d = {d}, got {a!r}") from None
    if not math.isfinite(v) or v <= d:
        raise ValueError(f"a must be a finite number > d = {d} (the density (1 + ||x||_inf/lam)^-a is integrable "
                         f"on R^d only then), got {a!r}")
    return v


def check_p_a(p_a: FloatOrArray, name: str = "p_a") -> np.ndarray:
    """A lower bound p_A on the top-class probability, checked: every entry in (1/2, 1].

    A bool, str or complex value is refused (numpy would read True as 1, '0.9' as 0.9 and drop an imaginary part).

    Parameters
    ----------
    p_a : float or array_like
        The bound(s), real numbers.
    name : str
        The argument's name in the error messages.

    Returns
    -------
    numpy.ndarray
        p_a as float64, shaped as given (0-d for a number).
    """
    try:
        kind = np.asarray(p_a).dtype.kind
    except (TypeError, ValueError):
        kind = "O"
    if isinstance(p_a, (bool, np.bool_, str, bytes)) or kind in "bUSc":
        raise ValueError(f"{name} must be a number or array of numbers in (0.5, 1], got {p_a!r}")
    try:
        arr = np.asarray(p_a, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or array of numbers in (0.5, 1], got {p_a!r}") from None
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    ok = (arr > 0.5) & (arr <= 1.0)  # False for NaN
    if not ok.all():
        bad = arr[~ok].flat[0]
        raise ValueError(f"{name} must lie in (0.5, 1] (a lower bound on the top-class probability; below or at "
                         f"1/2 the smoothed classifier abstains), got {bad!r}")
    return arr


def scalar_or_array(arr: np.ndarray) -> FloatOrArray:
    """A radius as the caller gave p_A: a float for a 0-d array, the array otherwise.

    Parameters
    ----------
    arr : numpy.ndarray, any shape
        The radii, shaped as the checked p_A (0-d when p_A was a number).

    Returns
    -------
    float or numpy.ndarray
        float(arr) for a 0-d array, else `arr` itself (same shape).
    """
    return float(arr) if arr.ndim == 0 else arr


# --------------------------------------------------------------------------------------------------
# the two gaps: Φ^-1(p) (Gaussian) and 2 p - 1 (uniform)
# --------------------------------------------------------------------------------------------------


def gaussian_gap(p: np.ndarray) -> np.ndarray:
    """Φ^-1(p): ANCER Corollary 1's gap (Φ^-1(p_A) - Φ^-1(p_B)) / 2 with p_B = 1 - p_A, and Cohen et al.'s ℓ2 radius
    at λ = 1.

    Parameters
    ----------
    p : numpy.ndarray
        Probabilities in [1/2, 1] (unchecked).

    Returns
    -------
    numpy.ndarray
        Φ^-1(p), shaped as p (∞ at p = 1).
    """
    return ndtri(p)


def uniform_gap(p: np.ndarray) -> np.ndarray:
    """2 p - 1: ANCER Corollary 2's gap p_A - p_B with p_B = 1 - p_A, and the uniform ℓ1 radius 2 λ (p_A - 1/2) at
    λ = 1.

    Parameters
    ----------
    p : numpy.ndarray
        Probabilities in [1/2, 1] (unchecked).

    Returns
    -------
    numpy.ndarray
        2 p - 1, shaped as p (exact in floating point: 2 p and 1 are within a factor 2 of each other).
    """
    return 2.0 * p - 1.0


def _exponentials(u: torch.Tensor) -> torch.Tensor:
    """Standard exponentials -log(1 - U) of uniforms U in [0, 1)."""
    return -torch.log1p(-u)


# --------------------------------------------------------------------------------------------------
# the family protocol
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table1Row:
    """One row of UCAN Table 1: a family's certificate against one adversary norm.

    Parameters
    ----------
    key : str
        "noise/norm", e.g. "laplace/l1".
    noise : str
        The family's name.
    norm : str
        The adversary's norm: "l1", "l2" or "linf".
    source : str
        The row's citation.
    radius : callable
        R(p_a, lam, **params): the isotropic radius, a float for a number p_a and an array shaped as p_a otherwise;
        it checks its arguments.
    params : tuple of str
        The arguments R needs besides (p_a, lam): "d" (the dimension) and/or "a" (the power-law exponent).
    """
    key: str
    noise: str
    norm: str
    source: str
    radius: Callable[..., FloatOrArray]
    params: tuple[str, ...] = ()

    @classmethod
    def of(cls, noise: str, norm: str, source: str, radius: Callable[..., FloatOrArray],
           params: tuple[str, ...] = ()) -> Table1Row:
        """The row of family `noise` against `norm`, keyed "noise/norm" (the other parameters as the class's).

        Parameters
        ----------
        noise, norm, source, radius, params : as in `Table1Row`

        Returns
        -------
        Table1Row
            The row, its key f"{noise}/{norm}".
        """
        return cls(f"{noise}/{norm}", noise, norm, source, radius, params)


class NoiseFamily:
    """One noise family: what it is, how it draws, its scale and its certificates.

    A subclass sets the class attributes below and implements `draw` and `unit_variance_lambda`; one that ANCER
    certifies with (an `ancer_norm`) implements `gap`, and `soft_gap` for the optimizers. `register` adds an
    instance to the registry.

    Attributes
    ----------
    name : str
        The family's name, its key in `FAMILIES`.
    scale_name : str
        What its scale θ is called in messages: "sigma" for the Gaussian, "lambda" for the others.
    ancer_norm : str or None
        The norm ANCER certifies with it: "l2" (ellipsoids, Corollary 1) or "l1" (generalized cross-polytopes,
        Corollary 2); None for a family ANCER does not certify with.
    rows : tuple of Table1Row
        Its rows of UCAN Table 1, one per adversary norm (empty: none).
    rotation_invariant : bool
        Whether U ε has the family's law for every orthogonal U (RANCER's rotated certificate, Eq. 2, needs it).
    draw_block : int
        How many numbers `draw` takes from the generator in one indivisible block: draws whose sizes are multiples
        of it concatenate to the one sequence a single draw of their total size gives (`noise.DrawStream`).
        torch's CPU `uniform_` draws number by number: 1.
    """

    name: str = ""
    scale_name: str = "lambda"
    ancer_norm: str | None = None
    rows: tuple[Table1Row, ...] = ()
    rotation_invariant: bool = False
    draw_block: int = 1

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def draw(self, out: torch.Tensor, generator: torch.Generator | None = None,
             a: float | None = None) -> torch.Tensor:
        """Fill `out` with unit-scale (λ = 1) draws, in place.

        The arguments are checked by the public functions that call it (`noise.standard_noise`, `noise.DrawStream`,
        `ucan_noise.sample_standard`).

        Parameters
        ----------
        out : torch.Tensor
            A floating-point tensor (num, *shape) on the generator's device: num draws of shape `shape`.
        generator : torch.Generator or None
            The random numbers' source (None: torch's global generator).
        a : float or None
            The power-law exponent (`exponent`); ignored by the other families.

        Returns
        -------
        torch.Tensor
            `out`, shape (num, *shape).
        """
        raise NotImplementedError(f"{type(self).__name__} must implement draw()")

    def exponent(self, d: int, a: float | None = None) -> float | None:
        """The shape exponent the family needs in dimension d (the power law's a, `power_law_exponent`); None for
        the families without one.

        Parameters
        ----------
        d : int
            The dimension.
        a : float or None
            The exponent asked for (the power law's; None: its default, d + `POWER_LAW_TAIL`); ignored here.

        Returns
        -------
        float or None
            None (the families without a shape exponent).
        """
        return None

    def unit_variance_lambda(self, d: int | None = None, a: float | None = None) -> float:
        """λ such that every coordinate of the noise has variance 1 (UCAN §5.2, following RS4A's `_sigma`).

        Parameters
        ----------
        d : int or None
            The dimension (required by the ℓ∞ mixtures).
        a : float or None
            The power-law exponent (required by the power law).

        Returns
        -------
        float
            λ; a standard deviation σ is the scale σ λ.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement unit_variance_lambda()")

    def gap(self, p: np.ndarray) -> np.ndarray:
        """The gap factor of ANCER's certificate: the region {||Θ^-1 δ||_p <= gap} for the norm `ancer_norm`.

        Unchecked and unclipped (`regions.noise_gap` checks and clips).

        Parameters
        ----------
        p : numpy.ndarray
            Lower bounds in [1/2, 1] on the top class probability; the runner-up bound is 1 - p.

        Returns
        -------
        numpy.ndarray
            The gaps, shaped as p.
        """
        raise ValueError(f"ANCER certifies no norm with {self.name} noise (only {list(ANCER_NOISES)})")

    def soft_gap(self, top: torch.Tensor, clamp: float) -> torch.Tensor:
        """The differentiable proxy of the gap that Isotropic DD and ANCER ascend (App. C; Listing 1).

        Parameters
        ----------
        top : torch.Tensor
            The two largest smoothed probabilities of each input, (B, 2).
        clamp : float
            How far from 0 and 1 the probabilities are clamped where the proxy needs it.

        Returns
        -------
        torch.Tensor
            The proxy gaps, (B,).
        """
        raise ValueError(f"ANCER optimizes no certificate of {self.name} noise (only {list(ANCER_NOISES)})")


# --------------------------------------------------------------------------------------------------
# the families, each after its radii
# --------------------------------------------------------------------------------------------------


def gaussian_l2_radius(p_a: FloatOrArray, lam: float) -> FloatOrArray:
    """Table 1 row Gaussian (Cohen et al. 2019) / ℓ2: R = λ Φ^-1(p_A).

    Cohen et al. (2019) Theorem 1, R = λ/2 (Φ^-1(p_A) - Φ^-1(p_B)), with p_B = 1 - p_A; noise N(0, λ² I). Tight:
    the half-space {z : w·z <= λ Φ^-1(p_A)} (||w||_2 = 1) has p_A at x and probability exactly 1/2 at x + R w.

    Parameters
    ----------
    p_a : float or numpy.ndarray, any shape
        Lower bounds on the top-class probability, in (1/2, 1] (`check_p_a`; the radius is ∞ at 1).
    lam : float
        The noise scale λ (the Gaussian's standard deviation), a real number > 0.

    Returns
    -------
    float or numpy.ndarray
        R: a float for a number p_a, else an array of float64 shaped as p_a.
    """
    p = check_p_a(p_a)
    return scalar_or_array(check_positive(lam, "lam") * gaussian_gap(p))


def gaussian_l1_radius(p_a: FloatOrArray, lam: float) -> FloatOrArray:
    """Table 1 row Gaussian (Yang et al. 2020) / ℓ1: R = λ Φ^-1(p_A).

    The ℓ2 certificate of Cohen et al. (2019) Theorem 1 covers the ℓ1 ball of the same radius since
    ||δ||_2 <= ||δ||_1 (Yang et al. 2020 Table 1; rs4a `_certify_lp_convert`). Tight: an axis-aligned half-space
    and δ = R e_i, for which ||δ||_1 = ||δ||_2.

    Parameters
    ----------
    p_a, lam : as in `gaussian_l2_radius`

    Returns
    -------
    float or numpy.ndarray
        R, as in `gaussian_l2_radius`.
    """
    return gaussian_l2_radius(p_a, lam)


def gaussian_linf_radius(p_a: FloatOrArray, lam: float, d: int) -> FloatOrArray:
    """Table 1 row Gaussian (Yang et al. 2020) / ℓ∞: R = λ Φ^-1(p_A) / √d.

    Cohen et al. (2019) Theorem 1 moved to ℓ∞ by ||δ||_2 <= √d ||δ||_∞ (Yang et al. 2020 Table 1; rs4a
    `_certify_lp_convert`). Tight: the half-space with normal (1, ..., 1)/√d and δ = R (1, ..., 1).

    Parameters
    ----------
    p_a, lam : as in `gaussian_l2_radius`
    d : int
        The dimension, an integer >= 1.

    Returns
    -------
    float or numpy.ndarray
        R, as in `gaussian_l2_radius`.
    """
    return scalar_or_array(np.asarray(gaussian_l2_radius(p_a, lam)) / math.sqrt(check_count(d, "d")))


class Gaussian(NoiseFamily):
    """N(0, λ² I): ANCER's ℓ2 / ℓΣ2 family (Corollary 1: gap Φ^-1(p_A) with p_B = 1 - p_A), rotation invariant
    (RANCER Eq. 2), and UCAN Table 1's rows Gaussian / ℓ2 (Cohen et al. 2019), ℓ1 and ℓ∞ (Yang et al. 2020)."""

    name, scale_name, ancer_norm, rotation_invariant = GAUSSIAN, "sigma", L2, True
    rows = (Table1Row.of(GAUSSIAN, L2, "Cohen et al. (2019)", gaussian_l2_radius),
            Table1Row.of(GAUSSIAN, L1, "Yang et al. (2020)", gaussian_l1_radius),
            Table1Row.of(GAUSSIAN, LINF, "Yang et al. (2020)", gaussian_linf_radius, ("d",)))
    #: torch's CPU normal_ turns blocks of 16 uniforms into normals (Box-Muller, 16 at a time) and redraws the last
    #: 16 of a fill whose size is not a multiple of 16: fills of whole blocks concatenate to one sequence
    draw_block = 16

    def draw(self, out, generator=None, a=None):
        """Fill `out` with standard normal draws, in place (`torch.Tensor.normal_`, in out's dtype).

        Parameters
        ----------
        out, generator : as in `NoiseFamily.draw`
        a : float or None
            Ignored.

        Returns
        -------
        torch.Tensor
            `out`, shape (num, *shape).
        """
        return out.normal_(generator=generator)

    def unit_variance_lambda(self, d=None, a=None):
        """λ for unit variance: 1 (λ is the standard deviation).

        Parameters
        ----------
        d, a : as in `NoiseFamily.unit_variance_lambda`
            Ignored.

        Returns
        -------
        float
            1.0.
        """
        return 1.0

    def gap(self, p):
        """Corollary 1's gap Φ^-1(p) (`gaussian_gap`).

        Parameters
        ----------
        p : numpy.ndarray, any shape
            Lower bounds in [1/2, 1] on the top class probability (unchecked).

        Returns
        -------
        numpy.ndarray, shape of p
            Φ^-1(p) (∞ at p = 1).
        """
        return gaussian_gap(p)

    def soft_gap(self, top, clamp):
        """(Φ^-1(p_1) - Φ^-1(p_2)) / 2 of the two largest smoothed probabilities, each clamped to
        [clamp, 1 - clamp] so that Φ^-1 stays finite; differentiable.

        Parameters
        ----------
        top : torch.Tensor, shape (B, 2)
            The two largest smoothed probabilities of each input, largest first.
        clamp : float
            How far from 0 and 1 the probabilities are clamped.

        Returns
        -------
        torch.Tensor, shape (B,)
            The proxy gaps.
        """
        p = top.clamp(clamp, 1.0 - clamp)
        return 0.5 * (torch.special.ndtri(p[:, 0]) - torch.special.ndtri(p[:, 1]))


class _Cube(NoiseFamily):
    """U[-λ, λ]^d, i.i.d. uniform coordinates (variance λ²/3), filled in place by `uniform_(-1, 1)`."""

    def draw(self, out, generator=None, a=None):
        return out.uniform_(-1.0, 1.0, generator=generator)

    def unit_variance_lambda(self, d=None, a=None):
        return math.sqrt(3.0)


class Uniform(_Cube):
    """U[-λ, λ]^d under ANCER's name: its ℓ1 / ℓΛ1 family (Corollary 2: gap p_A - p_B = 2 p_A - 1). UCAN Table 1's
    rows of the same law are `UniformLinf`'s."""

    name, ancer_norm = UNIFORM, L1

    def gap(self, p):
        """Corollary 2's gap 2 p - 1 (`uniform_gap`).

        Parameters
        ----------
        p : numpy.ndarray, any shape
            Lower bounds in [1/2, 1] on the top class probability (unchecked).

        Returns
        -------
        numpy.ndarray, shape of p
            2 p - 1.
        """
        return uniform_gap(p)

    def soft_gap(self, top, clamp):
        """p_1 - p_2, the difference of the two largest smoothed probabilities; differentiable.

        Parameters
        ----------
        top : torch.Tensor, shape (B, 2)
            The two largest smoothed probabilities of each input, largest first.
        clamp : float
            Ignored (this proxy needs no clamping).

        Returns
        -------
        torch.Tensor, shape (B,)
            The proxy gaps.
        """
        return top[:, 0] - top[:, 1]


def laplace_l1_radius(p_a: FloatOrArray, lam: float) -> FloatOrArray:
    """Table 1 row Laplace (Teng et al. 2020) / ℓ1: R = -λ log(2 (1 - p_A)) = λ log(1 / (2 (1 - p_A))).

    Teng et al. (2020) Theorem 1 gives R = max{λ/2 log(p_A/p_B), -λ log(1 - p_A + p_B)} for the density
    ∝ exp(-||x||_1/λ); with p_B = 1 - p_A the second term is the larger (their difference is
    -log 2 - ½ log(p_A (1 - p_A)) >= 0). It follows from the likelihood-ratio bound
    q(z - δ)/q(z) <= exp(||δ||_1/λ): P_δ(B) <= exp(||δ||_1/λ)(1 - p_A) <= 1/2. Tight: the axis-aligned half-space
    {z_1 <= b} (a 1-D Laplace tail) and δ = R e_1 (rs4a `Laplace.certify_l1`).

    Parameters
    ----------
    p_a : float or numpy.ndarray, any shape
        Lower bounds on the top-class probability, in (1/2, 1] (the radius is ∞ at 1).
    lam : float
        The noise scale λ, a real number > 0.

    Returns
    -------
    float or numpy.ndarray
        R: a float for a number p_a, else an array of float64 shaped as p_a.
    """
    p = check_p_a(p_a)
    lam = check_positive(lam, "lam")
    with np.errstate(divide="ignore"):
        return scalar_or_array(-lam * np.log(2.0 * (1.0 - p)))


class Laplace(NoiseFamily):
    """∝ exp(-||x||_1 / λ), i.i.d. Laplace coordinates (variance 2 λ²), each the difference of two exponentials:
    UCAN Table 1's row Laplace / ℓ1 (Teng et al. 2020)."""

    name = LAPLACE
    rows = (Table1Row.of(LAPLACE, L1, "Teng et al. (2020)", laplace_l1_radius),)

    def draw(self, out, generator=None, a=None):
        """Fill `out` with unit-scale Laplace draws, in place: per draw, 2 d float64 uniforms turned into the
        difference of two standard exponentials, cast into out's dtype.

        Parameters
        ----------
        out, generator : as in `NoiseFamily.draw`
        a : float or None
            Ignored.

        Returns
        -------
        torch.Tensor
            `out`, shape (num, *shape).
        """
        num, d = out.shape[0], int(math.prod(out.shape[1:]))
        u = torch.empty((num, 2, d), dtype=torch.float64, device=out.device).uniform_(generator=generator)
        e = _exponentials(u)
        return out.copy_((e[:, 0] - e[:, 1]).reshape(out.shape))

    def unit_variance_lambda(self, d=None, a=None):
        """λ for unit variance: 1 / √2 (the variance is 2 λ²).

        Parameters
        ----------
        d, a : as in `NoiseFamily.unit_variance_lambda`
            Ignored.

        Returns
        -------
        float
            1 / √2.
        """
        return 1.0 / math.sqrt(2.0)


class _CubeMixture(NoiseFamily):
    """A mixture of cubes [-s, s]^d (the ℓ∞ families): per draw, the radius s from sums of exponentials, then the
    cube's d coordinates, all from one row of uniforms (so the batch size does not change the draws)."""

    def _tail(self, d: int, a: float | None) -> int:
        return 0

    def _radius(self, u: torch.Tensor, d: int, tail: int) -> torch.Tensor:
        return _exponentials(u[:, :d + 1]).sum(dim=1)

    def draw(self, out, generator=None, a=None):
        num, shape = out.shape[0], tuple(out.shape[1:])
        d = int(math.prod(shape))
        tail = self._tail(d, a)
        u = torch.empty((num, d + 1 + tail + d), dtype=torch.float64, device=out.device).uniform_(generator=generator)
        s = self._radius(u, d, tail)
        cube = (2.0 * u[:, d + 1 + tail:] - 1.0).reshape(out.shape)
        return out.copy_(cube * s.view(num, *([1] * len(shape))))

    @staticmethod
    def _dimension(d: int | None, name: str) -> int:
        if d is None:
            raise ValueError(f"d (the dimension) is required for noise {name!r}")
        return check_count(d, "d")


def exp_linf_l1_radius(p_a: FloatOrArray, lam: float, d: int) -> FloatOrArray:
    """Table 1 row Exp. ℓ∞ (Yang et al. 2020) / ℓ1: R = 2 d λ (p_A - 1/2), density ∝ exp(-||x||_∞/λ) on R^d.

    Yang et al. (2020) Table 1 (rs4a `ExpInf.certify_l1`, j = 0, k = 1: 2 λ gamma_factor (p - 1/2) with
    gamma_factor = d). Derivation: the density is a mixture of uniform cubes [-s, s]^d with s ~ Gamma(d + 1, λ);
    for one cube TV(U, U + δ) <= ||δ||_1/(2s), so TV <= ||δ||_1 E[1/(2s)] = ||δ||_1/(2 d λ) and p_A - TV >= 1/2.
    Sound for every classifier; not tight in general (first-order tight as p_A -> 1/2).

    Parameters
    ----------
    p_a : float or numpy.ndarray, any shape
        Lower bounds on the top-class probability, in (1/2, 1].
    lam : float
        The noise scale λ, a real number > 0.
    d : int
        The dimension, an integer >= 1.

    Returns
    -------
    float or numpy.ndarray
        R: a float for a number p_a, else an array of float64 shaped as p_a.
    """
    p = check_p_a(p_a)
    d = check_count(d, "d")
    return scalar_or_array(2.0 * d * check_positive(lam, "lam") * (p - 0.5))


def exp_linf_linf_radius(p_a: FloatOrArray, lam: float) -> FloatOrArray:
    """Table 1 row Exp. ℓ∞ (Yang et al. 2020) / ℓ∞: R = λ log(1 / (2 (1 - p_A))), density ∝ exp(-||x||_∞/λ).

    Yang et al. (2020) Table 1 (rs4a `ExpInf.certify_linf`, k = 1). Derivation: by the triangle inequality
    q(z - δ)/q(z) <= exp(||δ||_∞/λ), so P_δ(B) <= exp(||δ||_∞/λ)(1 - p_A) <= 1/2. Sound for every classifier;
    tight for d = 1 (where the noise is Laplace).

    Parameters
    ----------
    p_a : float or numpy.ndarray, any shape
        Lower bounds on the top-class probability, in (1/2, 1] (the radius is ∞ at 1).
    lam : float
        The noise scale λ, a real number > 0.

    Returns
    -------
    float or numpy.ndarray
        R: a float for a number p_a, else an array of float64 shaped as p_a.
    """
    p = check_p_a(p_a)
    lam = check_positive(lam, "lam")
    with np.errstate(divide="ignore"):
        return scalar_or_array(lam * np.log(1.0 / (2.0 * (1.0 - p))))


class ExpLinf(_CubeMixture):
    """∝ exp(-||x||_∞ / λ): s ~ Gamma(d + 1, λ); variance λ² (d + 1)(d + 2)/3 per coordinate. UCAN Table 1's rows
    Exp. ℓ∞ / ℓ1 and ℓ∞ (Yang et al. 2020)."""

    name = EXP_LINF
    rows = (Table1Row.of(EXP_LINF, L1, "Yang et al. (2020)", exp_linf_l1_radius, ("d",)),
            Table1Row.of(EXP_LINF, LINF, "Yang et al. (2020)", exp_linf_linf_radius))

    def unit_variance_lambda(self, d=None, a=None):
        """λ for unit variance: √(3 / ((d + 1)(d + 2))).

        Parameters
        ----------
        d : int
            The dimension, an integer >= 1 (required: None raises ValueError).
        a : float or None
            Ignored.

        Returns
        -------
        float
            λ.
        """
        d = self._dimension(d, self.name)
        return math.sqrt(3.0 / ((d + 1.0) * (d + 2.0)))


def uniform_l1_radius(p_a: FloatOrArray, lam: float) -> FloatOrArray:
    """Table 1 row Uniform ℓ∞ (Lee et al. 2019) / ℓ1: R = 2 λ (p_A - 1/2) = λ (2 p_A - 1), noise U[-λ, λ]^d.

    Lee et al. (2019); Yang et al. (2020) Table 1 (rs4a `Uniform.certify_l1`); ANCER Corollary 2 with equal λ_i
    (λ times `uniform_gap`). TV(U, U + δ) = 1 - prod_i (1 - |δ_i|/(2λ)) <= ||δ||_1/(2λ). Tight: the half-space
    {z_1 <= λ(2 p_A - 1)} and δ = R e_1, where the probability falls linearly to exactly 1/2. With this
    repository's convention λ = √3 σ (`ancer_lite.core.noise.uniform_lambda`).

    Parameters
    ----------
    p_a : float or numpy.ndarray, any shape
        Lower bounds on the top-class probability, in (1/2, 1].
    lam : float
        The half-width λ of the uniform noise, a real number > 0.

    Returns
    -------
    float or numpy.ndarray
        R: a float for a number p_a, else an array of float64 shaped as p_a.
    """
    p = check_p_a(p_a)
    return scalar_or_array(check_positive(lam, "lam") * uniform_gap(p))


def uniform_linf_radius(p_a: FloatOrArray, lam: float, d: int) -> FloatOrArray:
    """Table 1 row Uniform ℓ∞ (Lee et al. 2019; Yang et al. 2020) / ℓ∞: R = 2 λ (1 - (3/2 - p_A)^(1/d)).

    Yang et al. (2020) Table 1 (rs4a `Uniform.certify_linf`). Derivation: for ||δ||_∞ <= r the cubes
    [-λ, λ]^d and δ + [-λ, λ]^d overlap in at least a fraction (1 - r/(2λ))^d of their volume, so
    TV <= 1 - (1 - r/(2λ))^d and p_A - TV >= 1/2 iff (1 - r/(2λ))^d >= 3/2 - p_A. Tight: for δ = r (1, ..., 1)
    the set A = (cube \\ shifted cube) ∪ (a part of the overlap of mass p_A - 1 + (1 - r/(2λ))^d) has probability
    exactly 1/2 at x + δ when r = R. The printed form is `ucan_radii.uniform_linf_radius_printed`.

    Parameters
    ----------
    p_a : float or numpy.ndarray, any shape
        Lower bounds on the top-class probability, in (1/2, 1].
    lam : float
        The half-width λ of the uniform noise, a real number > 0.
    d : int
        The dimension, an integer >= 1.

    Returns
    -------
    float or numpy.ndarray
        R: a float for a number p_a, else an array of float64 shaped as p_a.
    """
    p = check_p_a(p_a)
    d = check_count(d, "d")
    return scalar_or_array(2.0 * check_positive(lam, "lam") * (1.0 - (1.5 - p) ** (1.0 / d)))


class UniformLinf(_Cube):
    """U[-λ, λ]^d under UCAN's name "Uniform ℓ∞": Table 1's rows Uniform ℓ∞ / ℓ1 (Lee et al. 2019) and ℓ∞
    (Lee et al. 2019; Yang et al. 2020). ANCER's certificate of the same law is `Uniform`'s."""

    name = UNIFORM_LINF
    rows = (Table1Row.of(UNIFORM_LINF, L1, "Lee et al. (2019)", uniform_l1_radius),
            Table1Row.of(UNIFORM_LINF, LINF, "Lee et al. (2019); Yang et al. (2020)", uniform_linf_radius, ("d",)))


def power_law_linf_l1_radius(p_a: FloatOrArray, lam: float, d: int, a: float) -> FloatOrArray:
    """Table 1 row Power Law ℓ∞ (Yang et al. 2020) / ℓ1: R = 2 d λ / (a - d) · (p_A - 1/2), density
    ∝ (1 + ||x||_∞/λ)^(-a) on R^d with a > d.

    Yang et al. (2020) Table 1 (rs4a `PowInf.certify_l1`: λ 2 d / (a - d) (p - 1/2)). Derivation: the density is a
    mixture of uniform cubes [-s, s]^d with s/λ ~ BetaPrime(d + 1, a - d) (mixing weight ∝ s^d (1 + s/λ)^(-a-1)),
    E[1/s] = (a - d)/(d λ), and TV <= ||δ||_1 E[1/(2s)] as for `exp_linf_l1_radius`. Sound for every classifier,
    not tight in general. The printed form is `ucan_radii.power_law_linf_l1_radius_printed`.

    Parameters
    ----------
    p_a : float or numpy.ndarray, any shape
        Lower bounds on the top-class probability, in (1/2, 1].
    lam : float
        The noise scale λ, a real number > 0.
    d : int
        The dimension, an integer >= 1.
    a : float
        The power-law exponent, a finite number > d (`check_exponent`).

    Returns
    -------
    float or numpy.ndarray
        R: a float for a number p_a, else an array of float64 shaped as p_a.
    """
    p = check_p_a(p_a)
    d = check_count(d, "d")
    a = check_exponent(a, d)
    return scalar_or_array(2.0 * d * check_positive(lam, "lam") / (a - d) * (p - 0.5))


class PowerLawLinf(_CubeMixture):
    """∝ (1 + ||x||_∞ / λ)^(-a), a > d: s / λ ~ BetaPrime(d + 1, a - d), Gamma(a - d) drawn as a sum of a - d
    exponentials (so a - d is an integer, `power_law_exponent`); variance
    λ² (d + 1)(d + 2) / (3 (a - d - 1)(a - d - 2)) per coordinate when a > d + 2. UCAN Table 1's row
    Power Law ℓ∞ / ℓ1 (Yang et al. 2020; the row as printed is wrong, `ucan_radii.ERRATA`)."""

    name = POWER_LAW_LINF
    rows = (Table1Row.of(POWER_LAW_LINF, L1, "Yang et al. (2020)", power_law_linf_l1_radius, ("d", "a")),)

    def exponent(self, d, a=None):
        """The power law's exponent a for dimension d (`power_law_exponent`).

        Parameters
        ----------
        d : int
            The dimension, an integer >= 1.
        a : float or None
            The exponent, with a - d an integer > 2; None: d + `POWER_LAW_TAIL`.

        Returns
        -------
        float
            a.
        """
        return power_law_exponent(d, a)

    def _tail(self, d, a):
        return int(round(power_law_exponent(d, a) - d))

    def _radius(self, u, d, tail):
        return _exponentials(u[:, :d + 1]).sum(dim=1) / _exponentials(u[:, d + 1:d + 1 + tail]).sum(dim=1)

    def unit_variance_lambda(self, d=None, a=None):
        """λ for unit variance: √(3 (a - d - 1)(a - d - 2) / ((d + 1)(d + 2))).

        Parameters
        ----------
        d : int
            The dimension, an integer >= 1 (required: None raises ValueError).
        a : float
            The exponent, a finite number > d + 2 (required: None raises ValueError, as does a <= d + 2, whose
            variance is infinite).

        Returns
        -------
        float
            λ.
        """
        d = self._dimension(d, self.name)
        if a is None:
            raise ValueError("a (the power-law exponent) is required for noise 'power_law_linf'")
        a = check_exponent(a, d)
        if a <= d + 2:
            raise ValueError(f"a must be > d + 2 = {d + 2} for the power law to have a finite variance, got {a!r}")
        return math.sqrt(3.0 * (a - d - 1.0) * (a - d - 2.0) / ((d + 1.0) * (d + 2.0)))


# --------------------------------------------------------------------------------------------------
# the registry and the lists derived from it
# --------------------------------------------------------------------------------------------------

#: every registered family by name, in registration order (the order of ANCER's and UCAN's lists and of Table 1)
FAMILIES: dict[str, NoiseFamily] = {}


def register(fam: NoiseFamily) -> NoiseFamily:
    """Add a family to the registry, after the others.

    Parameters
    ----------
    fam : NoiseFamily
        A family whose name is new, whose `ancer_norm` is None or one of `names.NORMS`, and whose rows are its own
        (`Table1Row.noise` its name), one per norm of `TABLE1_NORMS`.

    Returns
    -------
    NoiseFamily
        `fam` itself.
    """
    if not isinstance(fam, NoiseFamily):
        raise TypeError(f"fam must be a NoiseFamily, got {type(fam).__name__} {fam!r}")
    if not isinstance(fam.name, str) or not fam.name or fam.name in FAMILIES:
        raise ValueError(f"fam.name must be a new family's name (not one of {list(FAMILIES)}), got {fam.name!r}")
    if fam.ancer_norm is not None:
        check_choice(fam.ancer_norm, "fam.ancer_norm", NORMS)
    norms = [row.norm for row in fam.rows]
    foreign = any(not isinstance(row, Table1Row) or row.noise != fam.name for row in fam.rows)
    if foreign or len(set(norms)) != len(norms):
        raise ValueError(f"fam.rows must be Table1Rows of noise {fam.name!r}, one per norm, got {fam.rows!r}")
    for norm in norms:
        check_choice(norm, "fam.rows' norm", TABLE1_NORMS)
    FAMILIES[fam.name] = fam
    return fam


def unregister(name: str) -> NoiseFamily:
    """Remove the family called `name` from the registry.

    Parameters
    ----------
    name : str
        A registered family's name.

    Returns
    -------
    NoiseFamily
        The family removed.
    """
    return FAMILIES.pop(check_choice(name, "name", FAMILIES))


def family(name: str, among: Sequence[str] | None = None) -> NoiseFamily:
    """The registered family called `name`.

    Parameters
    ----------
    name : str
        The family's name, one of `among`.
    among : sequence of str or None
        The names allowed (e.g. `ANCER_NOISES`); None for every registered family.

    Returns
    -------
    NoiseFamily
        The family; a ValueError naming `noise` and the allowed names if `name` is not one of them.
    """
    return FAMILIES[check_choice(name, "noise", FAMILIES if among is None else among)]


class _Live:
    """A read-only container whose value `compute()` recomputes from the registry at each use."""

    def __init__(self, compute: Callable[[], tuple | dict]) -> None:
        self._compute = compute

    def __getitem__(self, key):
        return self._compute()[key]

    def __len__(self) -> int:
        return len(self._compute())

    def __iter__(self) -> Iterator:
        return iter(self._compute())

    def __repr__(self) -> str:
        return repr(self._compute())


class LiveTuple(_Live, Sequence):
    """A read-only tuple recomputed from the registry at each use: a family registered or removed later shows in
    it, also where it was imported by name. It compares equal to the tuple it currently is; `+` gives a tuple.

    Parameters
    ----------
    compute : callable
        () -> the tuple's current value.
    """

    def __contains__(self, value: object) -> bool:
        return value in self._compute()

    def __eq__(self, other: object) -> bool:
        return self._compute() == (tuple(other) if isinstance(other, LiveTuple) else other)

    __hash__ = None  # equal to a tuple that changes with the registry

    def __add__(self, other: Sequence) -> tuple:
        return self._compute() + tuple(other)

    def __radd__(self, other: Sequence) -> tuple:
        return tuple(other) + self._compute()


class LiveMapping(_Live, Mapping):
    """A read-only dict recomputed from the registry at each use (see `LiveTuple`); it compares equal to the dict
    it currently is.

    Parameters
    ----------
    compute : callable
        () -> the dict's current value.
    """


#: ANCER's noises: the families with an `ancer_norm` (`noise.NOISES`)
ANCER_NOISES = LiveTuple(lambda: tuple(n for n, f in FAMILIES.items() if f.ancer_norm is not None))
#: UCAN's noises: the families with rows of Table 1 (`ucan_radii.NOISES`)
UCAN_NOISES = LiveTuple(lambda: tuple(n for n, f in FAMILIES.items() if f.rows))
#: the norm ANCER certifies with each of its noises (`names.NORM_OF`)
NORM_OF = LiveMapping(lambda: {n: f.ancer_norm for n, f in FAMILIES.items() if f.ancer_norm is not None})
#: the family each of ANCER's norms is certified with where only the norm is known, in the order of `names.NORMS`:
#: the first registered for it (`names.NOISE_OF`)
NOISE_OF = LiveMapping(lambda: {norm: next(n for n, f in FAMILIES.items() if f.ancer_norm == norm)
                                for norm in NORMS if any(f.ancer_norm == norm for f in FAMILIES.values())})

register(Gaussian())
register(Uniform())
register(Laplace())
register(ExpLinf())
register(UniformLinf())
register(PowerLawLinf())
