"""RANCER (Rumezhak, Eiras, Torr, Bibi): rotated anisotropic l2 certification, Algorithm 1 and §3-4.5.

Per input x: (1) H = the input Hessian of the cross-entropy with the predicted label at x;
(2) U = the eigenvectors of H; (3) per-axis scales Σ̂ (one per eigenvector), initialized at Isotropic
DD's σ0 and improved by gradient ascent, each step clipped to [σ0 (1 - γ1), σ0 (1 + γ2)]; then CERTIFY
with noise U (Σ̂ ⊙ z), z ~ N(0, I). The certificate is the rotated ellipsoid
{δ : ||diag(1 / (gap Σ̂)) U^T δ||_2 <= 1}: l2 radius gap · min Σ̂, proxy radius gap · (∏ Σ̂)^(1/n).
Its memory step is `memory.algorithm1` over the rotated ellipsoids (RANCER Eq. 5-6).

Departures from the paper, each a correction:
- The objective. Algorithm 1 prints R(Σ̂) = 1/2 sqrt(∏_j Σ̂_jj) (Φ^-1(E_A) - Φ^-1(E_B)). The square root of a
  product of n scales is neither a radius nor the n-th root of a volume: for n = 784 and scales of ~0.3 it
  is ~1e-205 (underflow in float32), and its gradient vanishes with it. RANCER §4.1 ranks regions by the
  proxy radius R̃ = r (∏ Σ̂_jj)^(1/n), so we ascend gap · (∏ Σ̂_jj)^(1/n) (ANCER's objective without its
  κ · min term), computed in log space. The update is the printed plain gradient step, then the clip.
- Σ̂ as scales. Algorithm 1 samples ε̂ ~ N(0, Σ̂) (Σ̂ a covariance), while Eq. 3 and the proxy radius use
  Σ̂_jj as per-axis scales; we use scales (standard deviations) throughout, the reading under which
  Eq. 3 is a valid certificate (notebook 01 checks Eq. 3 both ways).
- The Hessian's label is the predicted class (as the paper prescribes; the true label is unknown at
  certification time). A ReLU network's input Hessian has rank <= K - 1 (see `hessian`), so U is then
  arbitrary beyond K - 1 directions: RANCER needs a smooth activation, and we use softplus models.

Initialization variants of RANCER §4.5 (`INITS`): "iso" (Σ̂⁰ = σ0, the paper's choice), "eigen_fixed"
(Σ̂ = |Λ|, no optimization) and "eigen_init" (Σ̂⁰ = |Λ|, then optimized and clipped around the training σ
instead of σ0, i.e. without Isotropic DD). Scales are floored at MIN_SCALE (an eigenvalue can be 0).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..core import devices
from ..core.certify import AUTO, Certificate, Smooth, resolve_draws, soft_smoothed_probabilities
from ..core.families import FAMILIES
from ..core.memory import Provenance, algorithm1
from ..core.names import L2
from ..core.noise import GAUSSIAN
from ..core.parameters import check_rotations
from ..core.precision import EXACT, check_precision, forward_precision
from ..core.regions import certified_regions, soft_proxy_radius
from ..core.stages import OPTIMIZATION, timed
from ..core.streams import RANCER, certify_streams, input_keys
from ..core.validation import check_count, check_finite_tensor, check_nonnegative, check_positive
from .hessian import eigen_directions, input_hessian
from .optimize import PROB_CLAMP, Draws, check_batch, input_streams, unit_draws

#: the smallest per-axis scale RANCER may use (an eigenvalue of H can be 0 or tiny)
MIN_SCALE = 1e-3
INITS = ("iso", "eigen_fixed", "eigen_init")


@dataclass(frozen=True)
class RancerSettings:
    """Algorithm 1's hyper-parameters (the paper gives none of them; chosen on the validation split).
    iterations: an int >= 0; lr: finite, > 0; samples: an int >= 1; gamma1: a number in [0, 1); gamma2: a
    finite number >= 0; init: one of INITS."""
    iterations: int = 100
    lr: float = 0.1
    samples: int = 100
    gamma1: float = 0.5   # lower clip: sigma0 (1 - gamma1)
    gamma2: float = 2.0   # upper clip: sigma0 (1 + gamma2)
    init: str = "iso"

    def __post_init__(self) -> None:
        check_count(self.iterations, "iterations", 0)
        check_positive(self.lr, "lr")
        check_count(self.samples, "samples")
        check_nonnegative(self.gamma1, "gamma1")  # a number (a string such as '0.5' is refused), not NaN
        if not 0.0 <= self.gamma1 < 1.0:
            raise ValueError(f"gamma1 must lie in [0, 1) so that the lower clip sigma0 (1 - gamma1) is > 0, "
                             f"got {self.gamma1!r}")
        check_nonnegative(self.gamma2, "gamma2")
        if self.init not in INITS:
            raise ValueError(f"init must be one of {list(INITS)}, got {self.init!r}")


def hessian_rotation(model: torch.nn.Module, x: torch.Tensor,
                     device: str | torch.device | None = None) -> tuple[np.ndarray, np.ndarray]:
    """RANCER Algorithm 1, lines 1-2: U (n x n, float64, orthogonal; columns = eigenvectors of the input
    Hessian of the cross-entropy with the predicted class, by decreasing eigenvalue) and the eigenvalues.
    The eigendecomposition is NumPy's, on the CPU.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier (a smooth activation such as softplus; see the module's departures).
    x : torch.Tensor, shape input_shape
        One finite input without a batch dimension; n = x.numel().
    device : str or torch.device, optional
        Where the Hessian is computed (`hessian.input_hessian`: "auto", "cpu" or a CUDA device); None: the
        model's device.

    Returns
    -------
    rotation : numpy.ndarray of float64, shape (n, n)
        U, orthogonal to rounding: its columns are the Hessian's unit eigenvectors by decreasing eigenvalue.
    eigenvalues : numpy.ndarray of float64, shape (n,)
        The matching eigenvalues, in decreasing order."""
    w, v = eigen_directions(input_hessian(model, x, device=device))
    q, r = np.linalg.qr(v)  # eigh's vectors are orthogonal to ~1e-15; QR makes it exact to rounding
    return q * np.sign(np.diag(r)), w


def optimize_rancer(model: torch.nn.Module, x: torch.Tensor, rotation: torch.Tensor, sigma0: torch.Tensor,
                    settings: RancerSettings, eigenvalues: torch.Tensor | None = None,
                    generator: Draws = None, *,
                    report_upper_clip: bool = False,
                    precision: str = EXACT) -> torch.Tensor | tuple[torch.Tensor, bool]:
    """RANCER Algorithm 1, lines 3-9, batched over inputs: per-axis scales in U's coordinates, ascending the proxy
    radius gap · (∏ Σ̂)^(1/n) (see the module's departures) with each step clipped to [σ0 (1 - γ1), σ0 (1 + γ2)].
    The arguments are checked here, once (the rotations by `parameters.check_rotations`); the steps take them as
    given. Runs where x is (the model must be there too; `rancer_parameters` puts both on its `device`): rotation,
    sigma0 and eigenvalues are copied there, and the scales are returned there.

    With `report_upper_clip`, also returns whether the upper clip σ0 (1 + γ2) changed any scale at any
    step. When it did not, every larger γ2 (the rest of the settings, the inputs and the generator's
    state the same) follows the same trajectory number for number: the clip is then the identity at
    every step (`selection.select_rancer` uses this to skip such runs).

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier f.
    x : torch.Tensor, shape (B, *shape)
        A floating-point batch, B >= 1, finite.
    rotation : torch.Tensor, shape (B, n, n)
        U per input, orthogonal, n = prod(shape).
    sigma0 : torch.Tensor, shape (B,)
        The clip centres, finite and > 0 (Isotropic DD's σ for "iso", the training σ for the eigen variants).
    settings : RancerSettings
        Algorithm 1's hyper-parameters.
    eigenvalues : torch.Tensor of shape (B, n), optional
        The Hessians' eigenvalues, finite; needed by the eigen variants.
    generator : torch.Generator or list of noise.DrawStream or noise.BlockDrawStream, optional
        One generator, or one stream per input (`rancer_streams`: each input's own stream).
    report_upper_clip : bool
        Also return whether the upper clip acted.
    precision : str
        The forward passes' arithmetic, one of `precision.PRECISIONS` ("exact", "tf32", "bf16"); the scales stay
        float32.

    Returns
    -------
    torch.Tensor of shape (B, n), or (torch.Tensor, bool)
        The scales (and whether the upper clip acted).
    """
    if not isinstance(settings, RancerSettings):
        raise TypeError(f"settings must be a RancerSettings, got {type(settings).__name__}")
    check_precision(precision)
    check_batch(x)
    b, n = x.shape[0], int(np.prod(x.shape[1:]))
    check_rotations(rotation, b, n)
    if isinstance(sigma0, (str, bytes)):
        raise ValueError(f"sigma0 must hold {b} finite numbers > 0, got the string {sigma0!r}")
    try:
        s0 = torch.as_tensor(sigma0, dtype=x.dtype).reshape(-1).to(x.device)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(f"sigma0 must hold {b} finite numbers > 0, got {sigma0!r}") from None
    if s0.shape != (b,) or not bool(torch.isfinite(s0).all()) or not bool((s0 > 0).all()):
        raise ValueError(f"sigma0 must hold {b} finite values > 0, got shape {tuple(s0.shape)}")
    lo = (s0 * (1.0 - settings.gamma1)).clamp(min=MIN_SCALE)[:, None]
    hi = (s0 * (1.0 + settings.gamma2))[:, None]
    if settings.init == "iso":
        theta = s0[:, None].expand(b, n).clone()
    else:
        if not isinstance(eigenvalues, torch.Tensor) or tuple(eigenvalues.shape) != (b, n):
            raise ValueError(f"init={settings.init!r} needs eigenvalues of shape ({b}, {n})")
        check_finite_tensor(eigenvalues, "eigenvalues")
        theta = eigenvalues.to(x.device, x.dtype).abs().clamp(min=MIN_SCALE).clone()
        if settings.init == "eigen_fixed":
            return (theta, False) if report_upper_clip else theta
    rot = rotation.to(x.device, x.dtype)
    theta.requires_grad_(True)
    upper_clipped = False
    gap_of = FAMILIES[GAUSSIAN].soft_gap
    for _ in range(settings.iterations):
        z = unit_draws(GAUSSIAN, x, settings.samples, generator)
        probs = soft_smoothed_probabilities(model, x, z, theta.view(x.shape), rot, precision=precision)
        objective = soft_proxy_radius(theta, gap_of(torch.topk(probs, 2, dim=1).values, PROB_CLAMP))
        with forward_precision(precision, x.device):  # the backward pass in the same arithmetic
            grad, = torch.autograd.grad(objective.sum(), theta)
        with torch.no_grad():
            theta.add_(settings.lr * grad)
            if report_upper_clip and not upper_clipped:
                upper_clipped = bool((theta > hi).any())
            torch.maximum(torch.minimum(theta, hi), lo, out=theta)
    return (theta.detach(), upper_clipped) if report_upper_clip else theta.detach()


def hessian_rotations(model: torch.nn.Module, x: torch.Tensor,
                      device: str | torch.device | None = None) -> tuple[np.ndarray, np.ndarray]:
    """`hessian_rotation` for every input of x: rotations (N, n, n) and eigenvalues (N, n).

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier, as in `hessian_rotation`.
    x : torch.Tensor, shape (N, *input_shape)
        The inputs, finite; n = prod(input_shape).
    device : str or torch.device, optional
        As `hessian_rotation`'s, resolved once before the first Hessian (`devices.resolve`); None: the model's
        device.

    Returns
    -------
    rotations : numpy.ndarray of float64, shape (N, n, n)
        Each input's U (`hessian_rotation`).
    eigenvalues : numpy.ndarray of float64, shape (N, n)
        Each input's eigenvalues, in decreasing order."""
    if device is not None:
        device = devices.resolve(device)  # once, and a bad name fails before the first Hessian
    pairs = [hessian_rotation(model, x[k], device) for k in range(len(x))]
    return np.stack([u for u, _ in pairs]), np.stack([w for _, w in pairs])


def rancer_streams(x: torch.Tensor, seed: int, keys: list[int], draws: str = AUTO) -> list:
    """One Gaussian stream per input of x on its RANCER stream (`streams.stream(seed, key, "rancer")`).

    Parameters
    ----------
    x : torch.Tensor, shape (B, *shape)
        The inputs, on the device the ascent runs on.
    seed : int
        The run's seed.
    keys : list of int, length B
        The inputs' stream keys.
    draws : str
        "cpu", "device" or "auto" (`optimize.input_streams`).

    Returns
    -------
    list of noise.DrawStream or noise.BlockDrawStream
        One stream per input.
    """
    return input_streams(GAUSSIAN, x, seed, keys, RANCER, draws)


@timed(OPTIMIZATION)
def rancer_parameters(model: torch.nn.Module, x: torch.Tensor, sigma0: np.ndarray, settings: RancerSettings,
                      seed: int = 0, chunk: int = 32,
                      rotations: tuple[np.ndarray, np.ndarray] | None = None,
                      keys: np.ndarray | list[int] | None = None,
                      device: str | torch.device | None = None, *, precision: str = EXACT,
                      draws: str = AUTO) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """RANCER Algorithm 1 for every input of x: returns (scales (N, n), rotations (N, n, n) float64,
    eigenvalues (N, n)), NumPy arrays on the CPU.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier (a smooth activation, see the module's departures); moved to `device`.
    x : torch.Tensor, shape (N, *input_shape)
        The inputs, finite; n = prod(input_shape). Each chunk is copied to `device`.
    sigma0 : numpy.ndarray, shape (N,)
        The clip centres, finite and > 0 (see `optimize_rancer`).
    settings : RancerSettings
        Algorithm 1's hyper-parameters.
    seed : int
        The run's seed, for the inputs' RANCER streams (`rancer_streams`).
    chunk : int
        Inputs optimized at once, >= 1.
    rotations : tuple of (numpy.ndarray of shape (N, n, n), numpy.ndarray of shape (N, n)), optional
        The inputs' (rotations, eigenvalues) from `hessian_rotations` when already computed; None: computed here.
    keys : numpy.ndarray or list of int, length N, optional
        The inputs' stream keys, each input drawing from its own stream whatever its chunk; None: 0..N-1.
    device : str or torch.device, optional
        Where the Hessians and the ascent run (`devices.resolve`: "auto", "cpu" or a CUDA device); None: where the
        model is.
    precision : str
        The forward passes' arithmetic (`optimize_rancer`).
    draws : str
        Where the noise is drawn: "auto", "cpu" or "device" (`optimize.input_streams`).

    Returns
    -------
    scales : numpy.ndarray of float32, shape (N, n)
        The per-axis scales Σ̂ in U's coordinates.
    rotations : numpy.ndarray of float64, shape (N, n, n)
        The rotations U (as given, or computed by `hessian_rotations`).
    eigenvalues : numpy.ndarray, shape (N, n)
        The Hessians' eigenvalues (as given, or computed by `hessian_rotations`)."""
    check_precision(precision)
    s0 = np.asarray(sigma0, np.float64).reshape(-1)
    if s0.shape != (len(x),):
        raise ValueError(f"sigma0 must hold one value per input ({len(x)}), got shape {s0.shape}")
    check_count(chunk, "chunk")
    keys = input_keys(keys, len(x))
    dev = devices.place(model, device)
    draws = resolve_draws(draws, dev)
    rotations, eigenvalues = hessian_rotations(model, x, dev) if rotations is None else rotations
    scales = np.empty(eigenvalues.shape, np.float32)
    for start in range(0, len(x), chunk):
        sl = slice(start, start + chunk)
        xb = x[sl].to(dev)
        scales[sl] = optimize_rancer(model, xb, torch.from_numpy(rotations[sl]).float(),
                                     torch.from_numpy(s0[sl]).float(), settings,
                                     torch.from_numpy(eigenvalues[sl]).float(),
                                     rancer_streams(xb, seed, keys[sl], draws), precision=precision).cpu().numpy()
    return scales, rotations, eigenvalues


#: relative margin taken off RANCER's semi-axes: CERTIFY samples with U in float32 (U rounded at ~6e-8
#: relative), while the region is stated with the float64 U; 1e-4 covers the resulting change of the
#: ellipsoid (at most ~ cond(Σ̂) · sqrt(n) · 6e-8 relative, < 1e-5 for the clipped Σ̂ and n <= 3,072)
ROTATION_MARGIN = 1e-4


def certify_rotated(smooth: Smooth, x: torch.Tensor, scales: np.ndarray, rotation: np.ndarray, key: int, n0: int,
                    n: int, alpha: float, seed: int = 0) -> Certificate:
    """CERTIFY one input with noise U (Σ̂ ⊙ z), from its streams (seed, key) like `experiment.certify_input`.

    Parameters
    ----------
    smooth : certify.Smooth
        The smoothed classifier (Gaussian noise for RANCER's l2 certificates).
    x : torch.Tensor, shape input_shape
        One input without a batch dimension; n = x.numel().
    scales : numpy.ndarray, x.numel() values (e.g. shape (n,))
        The per-axis scales Σ̂ in U's coordinates, finite and > 0 (checked by CERTIFY); reshaped to x's shape and
        cast to float32.
    rotation : numpy.ndarray, shape (n, n)
        U, orthogonal (cast to float32 for sampling).
    key : int
        The input's stream key, >= 0 (`streams.certify_streams`).
    n0, n, alpha
        As `certify.Smooth.certify`: selection draws, estimation draws, the bound's failure probability.
    seed : int
        The run's seed (`streams.certify_streams`).

    Returns
    -------
    certify.Certificate
        CERTIFY's certificate for x (prediction ABSTAIN (-1) when pA's bound is <= 1/2)."""
    if not isinstance(smooth, Smooth):
        raise TypeError(f"smooth must be a certify.Smooth, got {type(smooth).__name__}")
    check_count(key, "key", 0)
    size, dim = np.size(scales), int(np.prod(tuple(x.shape)))
    if size != dim:
        raise ValueError(f"scales must hold one value per input dimension (x has {dim}), got {size}")
    theta = torch.from_numpy(np.asarray(scales, np.float32).reshape(tuple(x.shape)))
    return smooth.certify(x, theta, n0, n, alpha, rotation=torch.from_numpy(np.asarray(rotation)).float(),
                          generator=certify_streams(seed, key))


def rotated_memory_step(x: torch.Tensor, preds: np.ndarray, gaps: np.ndarray, scales: np.ndarray,
                        rotations: np.ndarray, policy: str, model: str) -> list:
    """ANCER's Algorithm 1 over RANCER's rotated ellipsoids in input order (RANCER Eq. 5-6,
    `memory.algorithm1`): input k's region has centre x[k], rotation rotations[k] and semi-axes scales[k] * gaps[k],
    less ROTATION_MARGIN (`regions.certified_regions`).

    Parameters
    ----------
    x : torch.Tensor, shape (N, *input_shape)
        The inputs, the regions' centres, in memory order; n = prod(input_shape).
    preds : numpy.ndarray of int, shape (N,)
        The CERTIFY predictions (ABSTAIN = -1).
    gaps : numpy.ndarray, shape (N,)
        Their certificates' gaps, finite and >= 0 (0 where they abstain).
    scales : numpy.ndarray, shape (N, n)
        The per-axis scales Σ̂ in each input's U coordinates.
    rotations : numpy.ndarray, shape (N, n, n)
        Each input's orthogonal U.
    policy : str
        One of `memory.POLICIES` ("shrink" or "abstain").
    model : str
        The classifier's fingerprint, recorded as the regions' provenance (Gaussian ℓ2 certificates; σ0 differs
        by input).

    Returns
    -------
    list of memory.Decision, length N
        The memory's decisions, one per input, in input order."""
    regions = certified_regions(x, scales, gaps, np.asarray(preds, np.int64), L2, rotations, ROTATION_MARGIN)
    return algorithm1(regions, policy, provenance=Provenance(model=model, noise=GAUSSIAN, norm=L2))
