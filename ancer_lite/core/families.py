"""Noise families as objects, one class per family (the shape of tonyduan/rs4a's `src/noises/`): each samples
its unit-scale noise from an explicit torch.Generator, converts a per-coordinate standard deviation to its scale λ,
and, for ANCER's two families, gives the certificate's gap factor (Corollaries 1 and 2) and the differentiable
proxy of it that Isotropic DD and ANCER ascend (App. C, Listing 1). The radii of every family and norm are UCAN
Table 1's rows (`ucan_radii.TABLE1`), looked up by the family's name; log-volumes depend on the region's norm
only (`regions.log_volume`).

    family          density at scale λ                    ANCER certifies   UCAN Table 1 rows
    gaussian        N(0, λ² I)                            ℓ2 (Cor. 1)       ℓ1, ℓ2, ℓ∞
    uniform         U[-λ, λ]^d                            ℓ1 (Cor. 2)       (as uniform_linf)
    uniform_linf    U[-λ, λ]^d                            -                 ℓ1, ℓ∞
    laplace         ∝ exp(-||x||_1 / λ)                   -                 ℓ1
    exp_linf        ∝ exp(-||x||_∞ / λ)                   -                 ℓ1, ℓ∞
    power_law_linf  ∝ (1 + ||x||_∞ / λ)^(-a), a > d       -                 ℓ1, ℓ∞

ANCER's "uniform" and UCAN's "uniform_linf" are the same distribution under the two papers' names; both are kept so
that each paper's tables read as printed. Every code path that depends on the family reads it from `FAMILIES`
(`family(name)` checks the name): no module branches on a family's name.

Sampling is bit for bit what the package drew before the families were objects: the Gaussian and the uniform fill a
tensor with `normal_` / `uniform_(-1, 1)`, the Laplace is a difference of two exponentials, and the two ℓ∞ mixtures
draw, per sample, their Gamma variables as sums of exponentials and their cube from one row of uniforms, so that one
seeded generator fixes every draw whatever the batch size.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from scipy.special import ndtri

from .names import GAUSSIAN, L1, L2, UNIFORM
from .validation import check_choice, check_count, check_real

LAPLACE = "laplace"
EXP_LINF = "exp_linf"
UNIFORM_LINF = "uniform_linf"
POWER_LAW_LINF = "power_law_linf"

#: a - d of the power-law family when none is given (finite variance needs a - d > 2)
POWER_LAW_TAIL = 10


def power_law_exponent(d: int, a: float | None = None) -> float:
    """The exponent a of the power-law family for dimension d: `a` itself, or d + POWER_LAW_TAIL. a - d must be an
    integer > 2 (Gamma(a - d) is drawn as a sum of exponentials); a must be a real number (not a str or bool)."""
    d = check_count(d, "d")
    a = float(d + POWER_LAW_TAIL) if a is None else float(check_real(a, "a"))
    tail = a - d
    if not (math.isfinite(tail) and tail > 2 and tail == round(tail)):
        raise ValueError(f"a must be d + k for an integer k > 2 (d = {d}), got {a!r}")
    return a


def check_exponent(a: float, d: int) -> float:
    """The power-law exponent a of (1 + ||x||_∞/λ)^(-a): finite and > d (else the density is not integrable)."""
    try:
        v = float(a)
    except (TypeError, ValueError):
        raise ValueError(f"a must be a finite number > d = {d}, got {a!r}") from None
    if not math.isfinite(v) or v <= d:
        raise ValueError(f"a must be a finite number > d = {d} (the density (1 + ||x||_inf/lam)^-a is integrable "
                         f"on R^d only then), got {a!r}")
    return v


def _exponentials(u: torch.Tensor) -> torch.Tensor:
    """Standard exponentials -log(1 - U) of uniforms U in [0, 1)."""
    return -torch.log1p(-u)


class NoiseFamily:
    """One noise family. Subclasses set `name`, `scale_name` (what the scale is called: σ for the Gaussian, λ for
    the rest), `ancer_norm` (the norm ANCER certifies with it, or None), `rotation_invariant` (whether U ε has the
    family's law for every orthogonal U: the condition for RANCER's rotated certificate, Eq. 2) and implement
    `fill` (unit-scale draws into a tensor) or `sample`, and `unit_variance_lambda`."""

    name: str = ""
    scale_name: str = "lambda"
    ancer_norm: str | None = None
    rotation_invariant: bool = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    # -- sampling ------------------------------------------------------------------------------------------
    #: the numbers a fill draws in one indivisible block: fills whose sizes are multiples of it concatenate to the
    #: one sequence a single fill of their total size draws (torch's CPU uniform_ draws number by number: 1)
    draw_block = 1

    def fill(self, out: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """Fill `out` (num, *shape) with unit-scale draws in place and return it (the i.i.d.-coordinate families)."""
        raise NotImplementedError(f"{self.name} noise is drawn with sample(), not fill()")

    def sample(self, num: int, shape: tuple[int, ...], generator: torch.Generator | None = None,
               a: float | None = None, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """`num` unit-scale (λ = 1) draws of shape `shape`: (num, *shape). `a`: the power-law exponent (ignored by
        the other families). Arguments are checked by the callers (`noise.standard_noise`,
        `ucan_noise.sample_standard`)."""
        return self.fill(torch.empty((num, *shape), dtype=dtype), generator)

    def exponent(self, d: int, a: float | None = None) -> float | None:
        """The shape exponent the family needs in dimension d (the power law's a), None for the others."""
        return None

    # -- scale ---------------------------------------------------------------------------------------------
    def unit_variance_lambda(self, d: int | None = None, a: float | None = None) -> float:
        """λ such that every coordinate of the noise has variance 1 (UCAN §5.2, following RS4A's `_sigma`)."""
        raise NotImplementedError

    # -- ANCER's certificate -------------------------------------------------------------------------------
    def gap(self, p: np.ndarray) -> np.ndarray:
        """The gap factor of ANCER's certificate from lower bounds p in (1/2, 1) on the top class probability,
        taking the runner-up bound 1 - p (no clipping or checks: `regions.gap_from_lower_bound` does them)."""
        raise ValueError(f"ANCER certifies no norm with {self.name} noise (only {GAUSSIAN} and {UNIFORM})")

    def soft_gap(self, top: torch.Tensor, clamp: float) -> torch.Tensor:
        """The differentiable proxy of the gap from the two largest smoothed probabilities `top` (B, 2), which
        Isotropic DD and ANCER ascend (App. C; Listing 1)."""
        raise ValueError(f"ANCER optimizes no certificate of {self.name} noise (only {GAUSSIAN} and {UNIFORM})")


class Gaussian(NoiseFamily):
    """N(0, λ² I): ANCER's ℓ2 / ℓΣ2 family (Corollary 1: gap Φ⁻¹(p_A) with p_B = 1 - p_A), rotation invariant."""

    name, scale_name, ancer_norm, rotation_invariant = GAUSSIAN, "sigma", L2, True
    #: torch's CPU normal_ turns blocks of 16 uniforms into normals (Box-Muller, 16 at a time) and redraws the last
    #: 16 of a fill whose size is not a multiple of 16: fills of whole blocks concatenate to one sequence
    #: (`noise.DrawStream`)
    draw_block = 16

    def fill(self, out, generator=None):
        return out.normal_(generator=generator)

    def unit_variance_lambda(self, d=None, a=None):
        return 1.0

    def gap(self, p):
        return ndtri(p)

    def soft_gap(self, top, clamp):
        p = top.clamp(clamp, 1.0 - clamp)
        return 0.5 * (torch.special.ndtri(p[:, 0]) - torch.special.ndtri(p[:, 1]))


class Uniform(NoiseFamily):
    """U[-λ, λ]^d: ANCER's ℓ1 / ℓΛ1 family (Corollary 2: gap p_A - p_B = 2 p_A - 1) under the name "uniform", and
    UCAN Table 1's ℓ∞-uniform under "uniform_linf" (`ancer_norm` None there). Variance λ²/3 per coordinate."""

    scale_name = "lambda"

    def __init__(self, name: str, ancer_norm: str | None) -> None:
        self.name, self.ancer_norm = name, ancer_norm

    def fill(self, out, generator=None):
        return out.uniform_(-1.0, 1.0, generator=generator)

    def unit_variance_lambda(self, d=None, a=None):
        return math.sqrt(3.0)

    def gap(self, p):
        if self.ancer_norm is None:
            return super().gap(p)
        return 2.0 * p - 1.0

    def soft_gap(self, top, clamp):
        if self.ancer_norm is None:
            return super().soft_gap(top, clamp)
        return top[:, 0] - top[:, 1]


class Laplace(NoiseFamily):
    """∝ exp(-||x||_1 / λ), i.i.d. Laplace coordinates (variance 2 λ²), each the difference of two exponentials."""

    name = LAPLACE

    def sample(self, num, shape, generator=None, a=None, dtype=torch.float32):
        d = int(math.prod(shape))
        e = _exponentials(torch.empty((num, 2, d), dtype=torch.float64).uniform_(generator=generator))
        return (e[:, 0] - e[:, 1]).to(dtype).reshape((num, *shape))

    def unit_variance_lambda(self, d=None, a=None):
        return 1.0 / math.sqrt(2.0)


class _CubeMixture(NoiseFamily):
    """A mixture of cubes [-s, s]^d (the ℓ∞ families): per draw, the radius s from sums of exponentials, then the
    cube's d coordinates, all from one row of uniforms (so the batch size does not change the draws)."""

    def _tail(self, d: int, a: float | None) -> int:
        return 0

    def _radius(self, u: torch.Tensor, d: int, tail: int) -> torch.Tensor:
        return _exponentials(u[:, :d + 1]).sum(dim=1)

    def sample(self, num, shape, generator=None, a=None, dtype=torch.float32):
        d = int(math.prod(shape))
        tail = self._tail(d, a)
        u = torch.empty((num, d + 1 + tail + d), dtype=torch.float64).uniform_(generator=generator)
        s = self._radius(u, d, tail)
        cube = (2.0 * u[:, d + 1 + tail:] - 1.0).reshape((num, *shape))
        return (cube * s.view(num, *([1] * len(shape)))).to(dtype)

    @staticmethod
    def _dimension(d: int | None, name: str) -> int:
        if d is None:
            raise ValueError(f"d (the dimension) is required for noise {name!r}")
        return check_count(d, "d")


class ExpLinf(_CubeMixture):
    """∝ exp(-||x||_∞ / λ): s ~ Gamma(d + 1, λ); variance λ² (d + 1)(d + 2)/3 per coordinate."""

    name = EXP_LINF

    def unit_variance_lambda(self, d=None, a=None):
        d = self._dimension(d, self.name)
        return math.sqrt(3.0 / ((d + 1.0) * (d + 2.0)))


class PowerLawLinf(_CubeMixture):
    """∝ (1 + ||x||_∞ / λ)^(-a), a > d: s / λ ~ BetaPrime(d + 1, a - d), Gamma(a - d) drawn as a sum of a - d
    exponentials (so a - d is an integer, `power_law_exponent`); variance
    λ² (d + 1)(d + 2) / (3 (a - d - 1)(a - d - 2)) per coordinate when a > d + 2."""

    name = POWER_LAW_LINF

    def exponent(self, d, a=None):
        return power_law_exponent(d, a)

    def _tail(self, d, a):
        return int(round(power_law_exponent(d, a) - d))

    def _radius(self, u, d, tail):
        return _exponentials(u[:, :d + 1]).sum(dim=1) / _exponentials(u[:, d + 1:d + 1 + tail]).sum(dim=1)

    def unit_variance_lambda(self, d=None, a=None):
        d = self._dimension(d, self.name)
        if a is None:
            raise ValueError("a (the power-law exponent) is required for noise 'power_law_linf'")
        a = check_exponent(a, d)
        if a <= d + 2:
            raise ValueError(f"a must be > d + 2 = {d + 2} for the power law to have a finite variance, got {a!r}")
        return math.sqrt(3.0 * (a - d - 1.0) * (a - d - 2.0) / ((d + 1.0) * (d + 2.0)))


#: every family by name: ANCER's two (`noise.NOISES`) and UCAN Table 1's five (`ucan_radii.NOISES`)
FAMILIES: dict[str, NoiseFamily] = {f.name: f for f in (
    Gaussian(), Uniform(UNIFORM, L1), Uniform(UNIFORM_LINF, None), Laplace(), ExpLinf(), PowerLawLinf())}


def family(name: str, among: tuple[str, ...] | None = None) -> NoiseFamily:
    """The family called `name`, one of `among` (default: every family); a ValueError naming `noise` otherwise."""
    return FAMILIES[check_choice(name, "noise", tuple(FAMILIES) if among is None else among)]
