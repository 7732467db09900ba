"""Smoothing noise families (ANCER §4): anisotropic Gaussian for l2/lΣ2 certificates and
anisotropic uniform for l1/lΛ1 certificates, with an optional orthogonal rotation (RANCER §3).

Conventions: noise is added in [0, 1] pixel space. For Gaussian noise theta is the per-dimension
standard deviation sigma_i (Σ = diag(sigma_i^2)); for uniform noise theta is the per-dimension
half-width lambda_i of U[-lambda_i, lambda_i] (ANCER §4.2). Results for uniform noise are reported
against the training sigma with the uniform noise of standard deviation sigma, i.e. lambda = sqrt(3) sigma,
RS4A's convention (App. E.2 says ANCER follows it; ANCER's released l1 scripts use lambda = sigma / sqrt(3)
instead, see `uniform_lambda` and `UNIFORM_CONVENTIONS`).
"""
from __future__ import annotations

import math

import torch

from .families import ANCER_NOISES, FAMILIES
from .names import GAUSSIAN, UNIFORM  # noqa: F401 (ANCER's family names, read as noise.GAUSSIAN and noise.UNIFORM)
from .parameters import check_rotation
from .validation import (
    check_choice,
    check_count,
    check_device,
    check_float_dtype,
    check_positive,
    check_scale,
    check_shape,
)

#: ANCER's noise families, the registered families with an `ancer_norm` (a live view, `families.ANCER_NOISES`);
#: the norm each certifies is `names.NORM_OF` (Corollary 1: Gaussian -> l2 / lΣ2; Corollary 2: uniform -> l1 / lΛ1)
NOISES = ANCER_NOISES


def check_noise(noise: str) -> str:
    """One of ANCER's noise families.

    Parameters
    ----------
    noise : str
        The family's name, one of `NOISES`.

    Returns
    -------
    str
        `noise`; a ValueError naming `noise` and the allowed names otherwise.
    """
    return check_choice(noise, "noise", NOISES)


#: the two readings of a nominal "sigma" of uniform noise U[-lambda, lambda], as lambda / sigma: "std", sigma is the
#: noise's standard deviation, lambda = sqrt(3) sigma (RS4A's code: `Uniform._sigma()` = 3**-0.5 in
#: src/noises/noises.py; this companion); "ancer_scripts", lambda = sigma / sqrt(3)
#: (ANCER App. E.2 as printed, and the authors' released l1 training scripts, `lam = sigma * (3 ** -0.5)`, and
#: certification script, `args.sigma *= (3**-0.5)` for Fixed sigma). Both certify the l1 radius lambda (2 pA - 1).
STD, ANCER_SCRIPTS = "std", "ancer_scripts"
UNIFORM_CONVENTIONS = {STD: math.sqrt(3.0), ANCER_SCRIPTS: 1.0 / math.sqrt(3.0)}


def uniform_lambda(sigma: float, convention: str = STD) -> float:
    """The half-width lambda of the uniform noise of nominal scale sigma: sqrt(3) sigma under "std" (the noise's
    standard deviation is sigma; RS4A's convention, the companion's everywhere), sigma / sqrt(3) under
    "ancer_scripts" (`UNIFORM_CONVENTIONS`).

    U[-lambda, lambda] has variance lambda^2 / 3. ANCER App. E.2 prints "lambda = sigma / sqrt(3)" and cites RS4A,
    whose code has sigma = lambda / sqrt(3); the authors' released scripts implement the printed form. That form
    cannot have produced the paper's Table 2 on its stated grid sigma <= 1 (§7.2): Fixed sigma certifies 71% of
    CIFAR-10 at l1 radius 0.75, while a uniform certificate's radius lambda (2 pA - 1) stays below
    lambda <= 1/sqrt(3) = 0.577 (notebook 03 checks every row, `image_study.table2_feasibility`). The companion
    therefore uses "std"; results compared with Table 2 state both (`image_study.matched_lambda`).

    Parameters
    ----------
    sigma : float
        The nominal scale, a finite number > 0 (a str or bool is refused).
    convention : str, default "std"
        A key of UNIFORM_CONVENTIONS: "std" or "ancer_scripts".

    Returns
    -------
    float
        lambda, in the units of sigma.
    """
    check_positive(sigma, "sigma")
    check_choice(convention, "convention", tuple(UNIFORM_CONVENTIONS))
    return sigma * UNIFORM_CONVENTIONS[convention]


def standard_noise(noise: str, num: int, shape: tuple[int, ...], generator: torch.Generator | None = None,
                   dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu",
                   out: torch.Tensor | None = None) -> torch.Tensor:
    """`num` draws of the unit-scale noise of one of ANCER's families (N(0, I), U[-1, 1]^n, ...).

    Parameters
    ----------
    noise : str
        One of `NOISES`.
    num : int
        The number of draws, an integer >= 1.
    shape : tuple of int
        One draw's shape, positive ints.
    generator : torch.Generator or None
        The random numbers' source (None: torch's global generator), on the device the draws are made on.
    dtype : torch.dtype
        A floating-point dtype (used when out is None).
    device : torch.device or str
        Where the draws are made (used when out is None).
    out : torch.Tensor or None
        A preallocated floating-point tensor (num, *shape) to write the draws into.

    Returns
    -------
    torch.Tensor
        The draws, (num, *shape): `out` when given. The family's `draw` of the tensor, bit for bit.
    """
    check_noise(noise)
    num = check_count(num, "num")
    size = (num, *check_shape(shape, "shape"))
    if out is None:
        out = torch.empty(size, dtype=check_float_dtype(dtype), device=check_device(device))
    elif not isinstance(out, torch.Tensor) or tuple(out.shape) != size:
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(f"out must have shape {size}, got {got}")
    elif not out.is_floating_point():
        raise ValueError(f"out must be a floating-point tensor, got dtype {out.dtype}")
    return FAMILIES[noise].draw(out, generator)


class DrawStream:
    """The unit-scale draws of one of ANCER's families from one generator, as one sequence.

    Draws taken in batches of any sizes are the draws one batch of their total size would give, so a count does
    not depend on the batch size. A family draws in indivisible blocks of numbers (`NoiseFamily.draw_block`: 16
    for torch's normal_): a batch whose size is not a whole number of blocks draws up to the next block and keeps
    the rows it did not use for the next batch. With one draw of d numbers and a block dividing d (every image
    size here), no row is ever kept and the draws are those of `standard_noise` on the same generator, bit for bit.

    Parameters
    ----------
    noise : str
        One of `NOISES`.
    shape : tuple of int
        One draw's shape, positive ints.
    generator : torch.Generator or None
        The random numbers' source (None: torch's global generator). Draws are made where it lives (the CPU for
        `streams.stream`).
    dtype : torch.dtype
        A floating-point dtype.
    """

    def __init__(self, noise: str, shape: tuple[int, ...], generator: torch.Generator | None = None,
                 dtype: torch.dtype = torch.float32) -> None:
        self.family = FAMILIES[check_noise(noise)]
        self.shape = check_shape(shape, "shape")
        self.generator = generator
        self.dtype = check_float_dtype(dtype)
        dim = int(math.prod(self.shape))
        self.block = self.family.draw_block // math.gcd(dim, self.family.draw_block)  # rows per whole block
        self.carry: torch.Tensor | None = None  # rows drawn and not yet used (fewer than `block`)

    def draw(self, num: int, out: torch.Tensor | None = None) -> torch.Tensor:
        """The next `num` draws.

        Parameters
        ----------
        num : int
            The number of draws.
        out : torch.Tensor or None
            A preallocated tensor (num, *shape) to write them into.

        Returns
        -------
        torch.Tensor
            The draws, (num, *shape): `out` when given.
        """
        kept = 0 if self.carry is None else len(self.carry)
        if kept == 0 and num % self.block == 0:  # whole blocks: fill in place (the only case when 16 | d)
            if out is None:
                out = torch.empty((num, *self.shape), dtype=self.dtype)
            return self.family.draw(out, self.generator)
        rows = -(-max(num - kept, 0) // self.block) * self.block
        fresh = self.family.draw(torch.empty((rows, *self.shape), dtype=self.dtype), self.generator)
        pool = fresh if kept == 0 else torch.cat([self.carry, fresh])
        self.carry = pool[num:].clone()
        if out is None:
            return pool[:num]
        return out.copy_(pool[:num])


#: rows per block of a `BlockDrawStream`: every block of this many draws comes from its own generator
BLOCK_ROWS = 1_000
_MASK64 = (1 << 64) - 1


def block_seed(key: int, index: int) -> int:
    """The 64-bit seed of block `index` of the stream keyed `key`: SplitMix64's output function (Steele et al. 2014)
    at key + (index + 1) * 0x9E3779B97F4A7C15, so that neighbouring blocks and neighbouring keys get unrelated
    seeds.

    Parameters
    ----------
    key : int
        The stream's key, an integer >= 0 (64 bits).
    index : int
        The block's index, an integer >= 0.

    Returns
    -------
    int
        The seed, in [0, 2^64).
    """
    z = (key + (index + 1) * 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


class BlockDrawStream:
    """The unit-scale draws of one of ANCER's families as one sequence drawn where the model runs, in fixed blocks.

    Block j of `rows` draws is drawn by a generator on `device` seeded `block_seed(key, j)` (a counter-based stream:
    block j does not depend on blocks 0..j-1 having been drawn), so draws taken in batches of any sizes are the
    draws one batch of their total size would give, on that device; the key is 64 bits drawn from the CPU generator
    the stream is made from (`streams.stream`), so the draws are a function of (seed, input, purpose), and a
    generator that serves several streams gives each its own key. Devices draw differently (CUDA's Philox, the CPU's
    Mersenne Twister): the draws are reproducible per device type, not across devices (`DrawStream` is).

    Parameters
    ----------
    noise : str
        One of `NOISES`.
    shape : tuple of int
        One draw's shape, positive ints.
    generator : torch.Generator or None
        The CPU generator the key is drawn from (None: torch's global generator).
    device : torch.device or str
        Where the draws are made.
    dtype : torch.dtype
        A floating-point dtype.
    rows : int
        Draws per block (`BLOCK_ROWS`).
    """

    def __init__(self, noise: str, shape: tuple[int, ...], generator: torch.Generator | None = None,
                 device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32, rows: int = BLOCK_ROWS) -> None:
        self.family = FAMILIES[check_noise(noise)]
        self.shape = check_shape(shape, "shape")
        self.dtype = check_float_dtype(dtype)
        self.device = torch.device(check_device(device))
        self.rows = check_count(rows, "rows")
        lo, hi = torch.randint(0, 2 ** 32, (2,), generator=generator, dtype=torch.int64).tolist()
        self.key = lo | (hi << 32)
        self.position = 0  # draws taken so far
        self.block_generator = torch.Generator(self.device)
        self.cached: tuple[int, torch.Tensor] | None = None  # (index, draws) of the last block read in part

    def _block(self, index: int, out: torch.Tensor | None = None) -> torch.Tensor:
        if out is None:
            if self.cached is not None and self.cached[0] == index:
                return self.cached[1]
            out = torch.empty((self.rows, *self.shape), dtype=self.dtype, device=self.device)
        return self.family.draw(out, self.block_generator.manual_seed(block_seed(self.key, index)))

    def draw(self, num: int, out: torch.Tensor | None = None) -> torch.Tensor:
        """The next `num` draws.

        Parameters
        ----------
        num : int
            The number of draws.
        out : torch.Tensor or None
            A preallocated contiguous tensor (num, *shape) on the stream's device to write them into.

        Returns
        -------
        torch.Tensor
            The draws, (num, *shape): `out` when given.
        """
        if out is None:
            out = torch.empty((num, *self.shape), dtype=self.dtype, device=self.device)
        start, end, done = self.position, self.position + num, 0
        while done < num:
            index, offset = divmod(start + done, self.rows)
            take = min(self.rows - offset, num - done)
            if offset == 0 and take == self.rows:  # a whole block: drawn in place
                self._block(index, out[done:done + take])
            else:
                block = self._block(index)
                self.cached = (index, block)
                out[done:done + take].copy_(block[offset:offset + take])
            done += take
        self.position = end
        return out


def scale_noise(eps: torch.Tensor, theta: torch.Tensor, rotation: torch.Tensor | None = None) -> torch.Tensor:
    """theta * eps, then rotated by U if given: eps' = U (theta * eps), RANCER Eq. 2 (ANCER §4 without U).
    Differentiable in theta (the reparameterization trick used by Listing 1). Arguments as checked by its callers'
    entry points (`certify.Smooth`'s methods, `sample_noise`).

    Parameters
    ----------
    eps : torch.Tensor, shape (num, *shape)
        Unit-scale draws.
    theta : float or torch.Tensor
        The scales, finite and > 0, broadcasting to eps without changing its shape.
    rotation : torch.Tensor of shape (n, n), optional
        An orthogonal matrix, n = prod(shape).

    Returns
    -------
    torch.Tensor, shape (num, *shape)
        The scaled (and rotated) noise.
    """
    out = eps * theta
    if rotation is not None:
        flat = out.reshape(out.shape[0], -1)
        out = (flat @ rotation.to(flat.dtype).T).reshape(out.shape)
    return out


def sample_noise(noise: str, theta: float | torch.Tensor, num: int, shape: tuple[int, ...],
                 generator: torch.Generator | None = None, rotation: torch.Tensor | None = None,
                 dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """`num` samples of the smoothing noise U (theta * eps) of one of ANCER's families (§4; RANCER Eq. 2 with U).

    Parameters
    ----------
    noise : str
        One of `NOISES`.
    theta : float or torch.Tensor
        The scale, finite and > 0: a number, or one value per dimension (shape `shape`).
    num : int
        The number of samples, >= 1.
    shape : tuple of int
        One sample's shape, positive ints.
    generator : torch.Generator, optional
        The random numbers' source (None: torch's global generator).
    rotation : array_like or torch.Tensor of shape (n, n), optional
        An orthogonal matrix, n = prod(shape) (`parameters.check_rotation`).
    dtype : torch.dtype
        A floating-point dtype.

    Returns
    -------
    torch.Tensor, shape (num, *shape)
        The samples.
    """
    check_count(num, "num")
    shape = check_shape(shape, "shape")
    check_float_dtype(dtype)
    th = check_scale(theta, shape, "theta").to(dtype)
    if rotation is not None:
        check_rotation(rotation, math.prod(shape))
        rotation = torch.as_tensor(rotation)
    return scale_noise(standard_noise(noise, num, shape, generator, dtype), th, rotation)
