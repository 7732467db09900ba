"""Sampling the isotropic noise families of UCAN Table 1 at unit scale (λ = 1), and UCAN's anisotropic noise
ε' = λ σ ⊙ ε + μ (Eq. 2, Theorem 3.2), in [0, 1] pixel space with an explicit torch.Generator.

The families and their densities at scale λ are those of `ancer_lite.core.ucan_radii` (whose radii they certify):

    gaussian        N(0, λ² I)
    laplace         ∝ exp(-||x||_1 / λ)                 i.i.d. Laplace coordinates
    uniform_linf    U[-λ, λ]^d
    exp_linf        ∝ exp(-||x||_∞ / λ)                 a cube [-s, s]^d with s ~ Gamma(d + 1, λ), then uniform in it
    power_law_linf  ∝ (1 + ||x||_∞ / λ)^(-a), a > d    s / λ ~ BetaPrime(d + 1, a - d), then uniform in [-s, s]^d

The draws themselves are the families' (`families`, one class per family, `NoiseFamily.draw`); this module checks
the arguments and scales them. The two ℓ∞ families are the cube mixtures the radii of Table 1 are derived from (see
`families`). Gamma variables are drawn as sums of exponentials so that one seeded generator fixes every draw; the
power law therefore needs an integer tail a - d (`families.POWER_LAW_TAIL` by default, which UCAN does not state; it
must exceed 2 for a finite variance).
"""
from __future__ import annotations

import math

import torch

from .families import UCAN_NOISES, family
from .validation import check_count, check_float_dtype, check_positive, check_shape


def sample_standard(noise: str, num: int, shape: tuple[int, ...], generator: torch.Generator | None = None,
                    a: float | None = None, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """`num` draws of the isotropic noise `noise` at scale λ = 1.

    Every draw takes the same number of consecutive values from `generator` (for the mixtures: its Gamma variables
    and its cube, in one row of uniforms), so `num` draws at once equal the same draws made in smaller batches one
    after another: results do not depend on the batch size (the Gaussian, as `noise.standard_noise`, when every
    batch but the last holds a multiple of 16 numbers and the last at least 16).

    Parameters
    ----------
    noise : str
        One of UCAN's families (`ucan_radii.NOISES`: those with rows of Table 1).
    num : int
        The number of draws, an integer >= 1.
    shape : tuple of int
        One draw's shape: a tuple (or list) of positive ints.
    generator : torch.Generator or None
        The random numbers' source (None: torch's global generator).
    a : float or None
        The power-law exponent (`families.power_law_exponent`; None: d + `families.POWER_LAW_TAIL` with
        d = prod(shape)); ignored by the other families.
    dtype : torch.dtype
        A floating-point dtype (an integer dtype would round the draws).

    Returns
    -------
    torch.Tensor
        The draws, (num, *shape), on the CPU: the family's `draw` of a fresh tensor, bit for bit.
    """
    fam = family(noise, UCAN_NOISES)
    num = check_count(num, "num")
    size = (num, *check_shape(shape, "shape"))
    return fam.draw(torch.empty(size, dtype=check_float_dtype(dtype, "dtype")), generator, a)


def check_noise_maps(lam: float, sigma: torch.Tensor, mu: torch.Tensor | None, shape: tuple[int, ...]) -> None:
    """The parameters of UCAN's noise λ σ ⊙ ε + μ for draws ε of `shape`: lam a real number, finite and > 0; sigma
    finite and >= 0 everywhere and mu (None for 0) finite, each broadcastable to `shape` without enlarging it.
    One pass over sigma and one over mu (their min and max); no random numbers are drawn.

    Parameters
    ----------
    lam : float
        λ, a real number, finite and > 0.
    sigma : torch.Tensor, shape broadcastable to `shape` without enlarging it
        σ, finite and >= 0 everywhere (anything torch.as_tensor takes).
    mu : torch.Tensor or None, shape broadcastable to `shape` without enlarging it
        μ, finite everywhere; None: 0.
    shape : tuple of int
        The shape of the draws ε the noise is applied to, e.g. (num, *input_shape).

    Raises
    ------
    TypeError
        When sigma or mu is not a real tensor of numbers.
    ValueError
        When lam is out of range, or sigma or mu does not fit `shape` or is out of range.
    """
    check_positive(lam, "lam")
    shape = tuple(shape)
    for name, value in (("sigma", sigma), ("mu", mu)):
        if value is None and name == "mu":
            continue
        try:
            t = torch.as_tensor(value).detach()
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(f"{name} must be a tensor of numbers, got {type(value).__name__} {value!r}") from None
        try:
            fits = tuple(torch.broadcast_shapes(t.shape, shape)) == shape
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(f"{name} must broadcast to the noise's shape {shape}, got shape {tuple(t.shape)}")
        if t.dtype == torch.bool or t.is_complex():
            raise TypeError(f"{name} must be a real tensor, got dtype {t.dtype}")
        if t.numel():
            lo, hi = (float(v) for v in torch.aminmax(t))  # NaN propagates, and fails both comparisons below
            if not ((lo >= 0 if name == "sigma" else lo > -math.inf) and hi < math.inf):
                want = "finite and >= 0 everywhere" if name == "sigma" else "finite everywhere"
                raise ValueError(f"{name} must be {want}, got min {lo:g} and max {hi:g}")


def anisotropic_noise(eps: torch.Tensor, lam: float, sigma: torch.Tensor,
                      mu: torch.Tensor | None = None) -> torch.Tensor:
    """UCAN Eq. 2: ε' = λ σ ⊙ ε + μ for unit-scale draws ε. Differentiable in σ and μ. Arguments as checked by
    `check_noise_maps` at its callers' entry points, or as made by an NPG (`ucan.train_ucan`, whose NPGs give
    σ = γ sigmoid(h) > 0 and μ = tanh(h') by construction).

    Parameters
    ----------
    eps : torch.Tensor, shape (num, *shape)
        Unit-scale draws.
    lam : float
        λ, finite and > 0.
    sigma : torch.Tensor
        σ, finite and >= 0, shape `shape` or (num, *shape) (input-dependent σ), or broadcastable to eps.
    mu : torch.Tensor, optional
        μ, finite, shaped as sigma (None: 0).

    Returns
    -------
    torch.Tensor, shape (num, *shape)
        The noise ε'.
    """
    out = eps * (lam * sigma)
    return out if mu is None else out + mu
