"""Smoothing noise families (ANCER §4): anisotropic Gaussian for l2/lΣ2 certificates and
anisotropic uniform for l1/lΛ1 certificates, with an optional orthogonal rotation (RANCER §3).

Conventions: noise is added in [0, 1] pixel space. For Gaussian noise theta is the per-dimension
standard deviation sigma_i (Σ = diag(sigma_i^2)); for uniform noise theta is the per-dimension
half-width lambda_i of U[-lambda_i, lambda_i] (ANCER §4.2). Results for uniform noise are reported
against the training sigma with the uniform noise of standard deviation sigma, i.e. lambda = sqrt(3) sigma,
the RS4A convention ANCER follows (App. E.2; see `uniform_lambda` on the paper's "sigma / sqrt(3)").
"""
from __future__ import annotations

import math

import torch

from .validation import check_choice, check_count, check_scale, check_shape

GAUSSIAN = "gaussian"
UNIFORM = "uniform"
NOISES = (GAUSSIAN, UNIFORM)
#: the norm each noise family certifies (Corollary 1: Gaussian -> l2 / lΣ2; Corollary 2: uniform -> l1 / lΛ1)
NORM_OF = {GAUSSIAN: "l2", UNIFORM: "l1"}


def check_noise(noise: str) -> str:
    return check_choice(noise, "noise", NOISES)


def uniform_lambda(sigma: float) -> float:
    """lambda = sqrt(3) sigma: the half-width of the uniform noise with standard deviation sigma
    (RS4A's convention, which ANCER App. E.2 says it follows to report l1 results against sigma).

    U[-lambda, lambda] has variance lambda^2 / 3. ANCER App. E.2 prints "lambda = sigma / sqrt(3)", a
    typo: its own Table 2 has Fixed sigma (sigma <= 1) certifying 71% of CIFAR-10 at l1 radius 0.75,
    while a uniform certificate's l1 radius lambda (2 pA - 1) stays below lambda <= 1/sqrt(3) = 0.577
    under the printed form."""
    return sigma * math.sqrt(3.0)


#: largest |U U^T - I| entry a rotation may have. Rounding an orthogonal matrix to float32 leaves ~1e-8
#: (measured: 2.5e-8, 1.1e-8, 6.0e-9 for n = 64, 784, 3,072); a larger deviation is a different matrix, whose
#: noise the certificate of U would misdescribe (U = 0.99996 I passed the former 1e-4 and was certified as I)
ROTATION_ATOL = 1e-6


def check_rotation(rotation: torch.Tensor | None, dim: int, atol: float = ROTATION_ATOL) -> torch.Tensor | None:
    """An orthogonal (dim x dim) matrix U such that the noise is U eps (RANCER §3), or None."""
    if rotation is None:
        return None
    dim = check_count(dim, "dim")  # a bad dim used to be reported as a bad rotation
    u = torch.as_tensor(rotation)
    if tuple(u.shape) != (dim, dim):
        raise ValueError(f"rotation must be a ({dim}, {dim}) orthogonal matrix, got shape {tuple(u.shape)}")
    u64 = u.to(torch.float64)
    if not bool(torch.isfinite(u64).all()):
        raise ValueError("rotation must contain only finite values")
    err = (u64 @ u64.T - torch.eye(dim, dtype=torch.float64)).abs().max().item()
    if err > atol:
        raise ValueError(f"rotation must be orthogonal (U U^T = I); max deviation is {err:.2e}")
    return u


def standard_noise(noise: str, num: int, shape: tuple[int, ...], generator: torch.Generator | None = None,
                   dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu",
                   out: torch.Tensor | None = None) -> torch.Tensor:
    """`num` draws of the unit-scale noise: N(0, I) or U[-1, 1]^n, shape (num, *shape); written into `out`
    (a preallocated tensor of that shape) when given."""
    check_noise(noise)
    num = check_count(num, "num")
    size = (num, *check_shape(shape, "shape"))
    if out is None:
        out = torch.empty(size, dtype=dtype, device=device)
    elif tuple(out.shape) != size:
        raise ValueError(f"out must have shape {size}, got {tuple(out.shape)}")
    if noise == GAUSSIAN:
        return out.normal_(generator=generator)
    return out.uniform_(-1.0, 1.0, generator=generator)


def scale_noise(eps: torch.Tensor, theta: torch.Tensor, rotation: torch.Tensor | None = None) -> torch.Tensor:
    """theta * eps, then rotated by U if given (eps' = U (theta * eps), RANCER Eq. 2).
    Differentiable in theta (the reparameterization trick used by Listing 1)."""
    out = eps * theta
    if rotation is not None:
        flat = out.reshape(out.shape[0], -1)
        out = (flat @ rotation.to(flat.dtype).T).reshape(out.shape)
    return out


def sample_noise(noise: str, theta: float | torch.Tensor, num: int, shape: tuple[int, ...],
                 generator: torch.Generator | None = None, rotation: torch.Tensor | None = None,
                 dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """`num` samples of the smoothing noise with scale theta (scalar or of `shape`), shape (num, *shape)."""
    check_count(num, "num")
    th = check_scale(theta, shape, "theta").to(dtype)
    rot = check_rotation(rotation, int(math.prod(shape)))
    return scale_noise(standard_noise(noise, num, shape, generator, dtype), th, rot)
