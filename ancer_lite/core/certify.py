"""Monte Carlo prediction and certification of a smoothed classifier (Cohen et al. 2019's PREDICT and
CERTIFY, with ANCER's anisotropic certificates, §4-5).

`Smooth` wraps a base classifier (a torch module returning logits) and a noise family; theta is the
per-dimension scale (sigma_i for Gaussian, lambda_i for uniform noise) or one scalar, with an optional rotation U
(RANCER §3) and mean mu (UCAN Eq. 2), given as one `parameters.SmoothingParameters` (checked where it was made) or
raw (made into one, checked once, by `Smooth`'s public methods). It is the package's one smoothed classifier: its
one counting loop (`Smooth.vote_counts`) serves PREDICT, CERTIFY (`Smooth.lower_bound`, whose bound ANCER's
`certify` and UCAN's `ucan.certify` turn into their certificates) and the verification of certified regions
(`verify`); `soft_smoothed_probabilities` is its one differentiable (soft) counterpart, which the optimizers ascend.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

import numpy as np
import torch
from scipy.stats import beta, binomtest

from . import devices, regions
from .base_classifier import blocked_forward, check_per_example, checked_logits, eval_mode, fixed_weights
from .families import FAMILIES
from .names import ABSTAIN, L1
from .noise import GAUSSIAN, NOISES, BlockDrawStream, DrawStream, check_noise, scale_noise
from .parameters import SmoothingParameters, check_rotation
from .precision import EXACT, check_precision, fast_layout, forward_precision
from .stages import CERTIFY, timed
from .validation import (
    check_choice,
    check_class_index,
    check_count,
    check_domain,
    check_finite_tensor,
    check_probability,
    check_real,
    check_shape,
)

#: Noise draws per forward batch of CERTIFY's sampling loop. Measured on 2 CPU cores (2026-11-24): the MNIST
#: SmallCNN samples 10,000 draws 2.2-2.5x faster in batches of 2,000 than in one batch of 10,000 (large
#: activations leave the caches), the 8x8 models 1.0-1.4x. Counts are the same for every batch size: the draws
#: are one sequence however they are cut (`noise.DrawStream`) and the forward passes take whole blocks of rows
#: (`base_classifier.blocked_forward`); tests/test_split_invariance.py checks batch sizes 7 to 10,000.
BATCH_SIZE = 2_000

#: where CERTIFY's noise is drawn (`Smooth`'s `draws`): "cpu", from the input's CPU streams (`noise.DrawStream`, the
#: same noise on every device, so exact-precision counts agree across devices), "device", where the model runs in
#: counter-based blocks (`noise.BlockDrawStream`: reproducible per device type, free on a GPU), or "auto": "device"
#: on CUDA, "cpu" elsewhere
AUTO, CPU, DEVICE = "auto", "cpu", "device"
DRAWS = (AUTO, CPU, DEVICE)

#: `Smooth`'s default input domain: images in [0, 1] pixel space, where the noise is added
PIXEL_DOMAIN = (0.0, 1.0)


def resolve_draws(draws: str, device: torch.device | str) -> str:
    """Where the noise of a model on `device` is drawn under the setting `draws`.

    Parameters
    ----------
    draws : str
        One of DRAWS ("auto", "cpu", "device"); ValueError naming `draws` otherwise.
    device : torch.device or str
        Where the model runs.

    Returns
    -------
    str
        CPU or DEVICE, "auto" being DEVICE on CUDA and CPU elsewhere.
    """
    draws = check_choice(draws, "draws", DRAWS)
    if draws == AUTO:
        return DEVICE if devices.is_cuda(torch.device(device)) else CPU
    return draws


def _check_alpha(alpha: float) -> float:
    """The failure probability alpha in (0, 1), given as a real number: check_probability refuses None,
    NaN and values out of range (ValueError), check_real a str that float() would parse ('0.05') or a bool."""
    value = check_probability(alpha, "alpha")
    check_real(alpha, "alpha")
    return value


def lower_confidence_bound(k: int | np.ndarray, n: int, alpha: float) -> np.ndarray:
    """One-sided (1 - alpha) Clopper-Pearson lower bound on a binomial proportion from k successes of n
    (the bound Cohen et al.'s CERTIFY uses): the alpha quantile of Beta(k, n - k + 1), 0 when k = 0.

    Parameters
    ----------
    k : int or numpy.ndarray, any shape
        Success counts: real integer-valued numbers in [0, n] (a scalar or an array).
    n : int
        The number of trials, >= 1.
    alpha : float
        The failure probability, a real number in (0, 1).

    Returns
    -------
    numpy.ndarray of float64, shape of k
        The lower bounds in [0, 1] (a 0-d array for a scalar k), 0 where k = 0.

    Raises
    ------
    ValueError
        When alpha, n or k is out of range or k is not integer-valued.
    """
    alpha = _check_alpha(alpha)
    # Validate n and k: without this, n = 0, k > n or a non-integer k silently gave NaN (which
    # certificate_from_bound then turned into a non-abstaining certificate) or a meaningless bound.
    n = check_count(n, "n")
    k = np.asarray(k)
    # dtype kind i/u/f only: a complex k would reach np.floor and fail with numpy's ufunc message
    if not (k.dtype.kind in "iuf" and np.all(np.isfinite(k)) and np.all(k == np.floor(k))
            and np.all((k >= 0) & (k <= n))):
        raise ValueError(f"k must be integer counts in [0, n] = [0, {n}], got {k!r}")
    with np.errstate(invalid="ignore"):
        out = beta.ppf(alpha, k, n - k + 1)
    return np.where(k > 0, out, 0.0)


@dataclass(frozen=True)
class Certificate:
    """What CERTIFY returns for one input. prediction is ABSTAIN (-1) when pA's bound is <= 1/2."""
    prediction: int
    p_lower: float      # Clopper-Pearson lower bound on pA
    gap: float          # Corollary 1 (Φ^-1(pA)) or Corollary 2 (2 pA - 1)
    radius: float       # enclosed l_p ball: min_i theta_i * gap (§5)
    radius_proxy: float  # gap * geometric mean of theta (§5)
    log_volume: float   # log of the certified region's volume (§5.1, Proposition 4)
    count: int          # samples (of n) that voted for the prediction
    n: int

    def as_dict(self) -> dict:
        return asdict(self)

    def region(self, center: np.ndarray | torch.Tensor, theta: float | np.ndarray | torch.Tensor, norm: str,
               rotation: np.ndarray | torch.Tensor | None = None) -> regions.CertifiedRegion:
        """The certified region this certificate states at input `center`: a `regions.CertifiedRegion` whose
        radius, proxy radius and log-volume are this certificate's.

        Parameters
        ----------
        center : numpy.ndarray or torch.Tensor, any shape
            The certified input, flattened to n values.
        theta : float, numpy.ndarray or torch.Tensor, shape () or n values in center's order
            The scales CERTIFY was run with: a number (isotropic) or one per dimension (any shape, flattened).
        norm : str
            The norm the noise certifies: "l2" for Gaussian, "l1" for uniform noise.
        rotation : numpy.ndarray or torch.Tensor, shape (n, n), optional
            RANCER's rotation U; None: an axis-aligned region.

        Returns
        -------
        regions.CertifiedRegion
            The region, with this certificate's gap and prediction (checked by the record's constructor).
        """
        c, th = regions.as_vector(center), regions.as_vector(theta)
        if th.size == 1:
            th = np.full(c.shape, th[0])
        u = rotation.detach().cpu().numpy() if isinstance(rotation, torch.Tensor) else rotation
        return regions.CertifiedRegion(c, th, self.gap, norm, self.prediction, u)


#: the unit-scale noise of a family other than ANCER's two (UCAN Table 1's, `ucan_noise.sample_standard`):
#: sampler(num, generator) returns `num` fresh draws (num, *input_shape), which the loop scales in place
Sampler = Callable[[int, "torch.Generator | None"], torch.Tensor]


def _fits(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether `shape` broadcasts to `target` without enlarging it (torch.broadcast_shapes imports sympy on its first
    call, a quarter of a second of CERTIFY's first input)."""
    return len(shape) <= len(target) and all(s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


def _in_place_ok(out: torch.Tensor, other: torch.Tensor) -> bool:
    """Whether out.op_(other) equals out op other bit for bit: the same result dtype and shape as `out`."""
    shape = tuple(other.shape) if isinstance(other, torch.Tensor) else ()
    return torch.result_type(out, other) == out.dtype and _fits(shape, tuple(out.shape))


def _times(eps: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """eps * scale, in place where that gives the same tensor."""
    return eps.mul_(scale) if _in_place_ok(eps, scale) else eps * scale


def _plus(eps: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """eps + shift, in place where that gives the same tensor (floating-point addition is commutative, so
    eps + x is x + eps bit for bit)."""
    return eps.add_(shift) if _in_place_ok(eps, shift) else eps + shift


class Smooth:
    """A smoothed classifier g(x) = argmax_c P(f(x + mu + U (theta * eps)) = c) estimated by Monte Carlo: the one
    smoothed classifier of ANCER (§4-5: per-dimension scale theta), RANCER (§3, Eq. 2: rotation U) and UCAN (Eq. 2:
    theta = lambda sigma(x) and mean mu(x)), with one counting loop (`vote_counts`) under PREDICT and CERTIFY
    (Cohen et al. 2019, Algorithms PREDICT and CERTIFY).

    Parameters
    ----------
    model : torch.nn.Module
        Maps a batch (b, *input_shape) in [0, 1] pixel space to logits (b, num_classes); it is run in evaluation
        mode (its training flags restored afterwards) and non-finite logits raise ValueError, as does a first
        forward pass that fails (a model that cannot take inputs of shape (b, *input_shape)).
    num_classes : int
        The number of classes, >= 2.
    input_shape : tuple of int
        The shape of one input.
    noise : str
        One of ANCER's families (`noise.NOISES`: "gaussian" certifies l2 / lΣ2, "uniform" l1 / lΛ1, each with its
        own gap, `regions.noise_gap`); with a `sampler`, any registered family (`families.FAMILIES`), e.g. one of
        UCAN Table 1's (`ucan_radii.NOISES`), whose certificates `ucan.certify` computes.
    batch_size : int
        Noise draws per forward batch (`BATCH_SIZE`); the counts do not depend on it.
    seed : int
        In [0, 2**64), the seed of the Smooth's own generator.
    device : str or torch.device
        Where the model classifies the draws (the noise is drawn where `draws` says).
    sampler : Sampler or None
        None (draws by `noise.DrawStream` or `noise.BlockDrawStream`, into one buffer reused across batches) or a
        callable (num, generator) -> `num` fresh unit-scale draws (num, *input_shape).
    precision : str
        The forward passes' arithmetic, one of `precision.PRECISIONS` ("exact", "tf32", "bf16"): the certificate is
        of the classifier as evaluated in it.
    draws : str
        Where the noise is drawn, one of `DRAWS` ("auto": on CUDA the device, else the CPU).
    domain : tuple of (float, float) or None
        The closed interval the inputs' values must lie in (`PIXEL_DOMAIN`, [0, 1]: images in the pixel space where
        the noise is added, so an image in 0..255 is refused rather than certified at the wrong scale), or None for
        any finite real input (toy data, points of a certified region that leave the pixel box).

    Notes
    -----
    The public methods take the smoothing parameters in one of two forms. `theta` a `SmoothingParameters` for
    inputs of input_shape (checked where it was made; `rotation` and `mean` must then be None), or raw: `theta` a
    finite scalar > 0 or a tensor of shape input_shape, finite and > 0 also in float32 (the noise's precision),
    `rotation` None or an orthogonal (n, n) matrix, n = prod(input_shape), `mean` None or a finite tensor
    broadcastable to input_shape (UCAN's mu, added to the noise), made into one `SmoothingParameters` once per
    call (`SmoothingParameters.of`, theta named by the family's scale name: "sigma", "lambda"). `x` is a real
    floating-point tensor of shape input_shape, finite, with its values in `domain`.
    """

    def __init__(self, model: torch.nn.Module, num_classes: int, input_shape: tuple[int, ...],
                 noise: str = GAUSSIAN, batch_size: int = BATCH_SIZE, seed: int = 0,
                 device: str | torch.device = "cpu", sampler: Sampler | None = None,
                 precision: str = EXACT, draws: str = AUTO,
                 domain: tuple[float, float] | None = PIXEL_DOMAIN) -> None:
        if not isinstance(model, torch.nn.Module):
            # a plain function cannot be switched to evaluation mode: a train-mode model inside it would
            # update its BatchNorm statistics and give batch-size-dependent counts
            raise ValueError(f"model must be a torch.nn.Module returning logits, got {type(model).__name__}; wrap a "
                             "function in a Module so its dropout and BatchNorm run in evaluation mode")
        self.model = model
        self._per_example_checked = False
        self.num_classes = check_count(num_classes, "num_classes", 2)
        self.input_shape = check_shape(input_shape, "input_shape")
        self.dim = int(math.prod(self.input_shape))
        if sampler is None:
            self.noise = check_noise(noise)
        elif not callable(sampler):
            raise TypeError(f"sampler must be None or a callable (num, generator) -> unit-scale draws, "
                            f"got {type(sampler).__name__}")
        else:
            self.noise = check_choice(noise, "noise", FAMILIES)
        self.sampler = sampler
        self.norm = FAMILIES[self.noise].ancer_norm  # None: a family ANCER does not certify (UCAN's certificates)
        self.batch_size = check_count(batch_size, "batch_size")
        self.device = devices.resolve(device)  # 'auto': CUDA when available; a named CUDA device must exist
        self.precision = check_precision(precision)
        self.draws = resolve_draws(draws, self.device)
        self.domain = check_domain(domain, "domain")
        seed = check_count(seed, "seed", 0)
        if seed >= 2 ** 64:  # torch.Generator.manual_seed's own error was numpy-like ("Overflow when unpacking")
            raise ValueError(f"seed must be an integer in [0, 2**64) (a torch generator seed), got {seed}")
        # on the CPU whatever the device: the streams live there (a BlockDrawStream draws its key from it)
        self.generator = torch.Generator().manual_seed(seed)

    # -- checks ---------------------------------------------------------------------------------
    def _check_x(self, x: torch.Tensor, name: str = "x", shape: tuple[int, ...] | None = None) -> torch.Tensor:
        shape = self.input_shape if shape is None else shape
        try:
            t = check_finite_tensor(x, name, shape)
        except (TypeError, RuntimeError) as e:  # torch.as_tensor's "Could not infer dtype of NoneType"
            raise ValueError(f"{name} must be a real floating-point tensor of shape {shape}, got "
                             f"{type(x).__name__} {str(x)[:40]!r}") from e
        if not t.is_floating_point():
            # an integer image (0..255) would be cast and certified as if its values were [0, 1] pixels, and a
            # complex one would lose its imaginary part
            raise ValueError(f"{name} must be a real floating-point tensor (pixels in [0, 1]), got dtype {t.dtype}")
        if self.domain is not None and t.numel():
            low, high = torch.stack(list(torch.aminmax(t))).tolist()  # one transfer for both
            if low < self.domain[0] or high > self.domain[1]:
                # each value as its own precision shows it (1 + 2**-23 in float32 reads 1.0000001, not 1)
                found = [repr(v) if t.dtype == torch.float64 else str(np.float32(v)) for v in (low, high)]
                raise ValueError(f"{name} must lie in this Smooth's domain [{self.domain[0]:g}, {self.domain[1]:g}], "
                                 f"got values from {found[0]} to {found[1]}; images must be scaled to [0, 1] pixel "
                                 "space (e.g. divide 0..255 by 255), or pass domain=None to Smooth for inputs that "
                                 "are not images (toy data, points of a certified region)")
        return t.to(self.device, torch.float32)

    def _parameters(self, theta: float | torch.Tensor | SmoothingParameters, rotation: torch.Tensor | None,
                    mean: torch.Tensor | None) -> SmoothingParameters:
        """θ, U and μ as one `SmoothingParameters` on the Smooth's device: `theta` itself when it is one (then
        `rotation` and `mean` must be None, it carries its own), else made from the three (`SmoothingParameters.of`,
        the package's one check of them)."""
        if not isinstance(theta, SmoothingParameters):
            return SmoothingParameters.of(theta, self.input_shape, rotation, mean,
                                          name=FAMILIES[self.noise].scale_name, device=self.device)
        if rotation is not None or mean is not None:
            raise ValueError("rotation and mean must be None when theta is a SmoothingParameters (it carries its own "
                             f"U and mu), got rotation {type(rotation).__name__} and mean {type(mean).__name__}")
        if tuple(theta.theta.shape) != self.input_shape:
            raise ValueError(f"theta must be SmoothingParameters of inputs of shape {self.input_shape} (this Smooth's),"
                             f" got scales of shape {tuple(theta.theta.shape)}")
        return theta.to(self.device)

    # -- the one sampling loop ------------------------------------------------------------------
    def sample_counts(self, x: torch.Tensor, theta: float | torch.Tensor | SmoothingParameters, num: int,
                      rotation: torch.Tensor | None = None, generator: torch.Generator | None = None, *,
                      mean: torch.Tensor | None = None) -> np.ndarray:
        """Class counts of f(x + mu + U (theta * eps)) over `num` noise draws (Cohen et al.'s SAMPLEUNDERNOISE;
        `vote_counts` at one point).

        Parameters
        ----------
        x : torch.Tensor, shape input_shape
            The input, real floating-point and finite.
        theta : float, torch.Tensor of shape input_shape, or SmoothingParameters
            The scales (see the class's Notes).
        num : int
            The number of draws, >= 1.
        rotation : torch.Tensor of shape (n, n), optional
            U, orthogonal (None with a SmoothingParameters theta).
        generator : torch.Generator or noise.DrawStream, optional
            Where the draws come from (None: the Smooth's own generator).
        mean : torch.Tensor, optional
            mu, broadcastable to input_shape (None with a SmoothingParameters theta).

        Returns
        -------
        numpy.ndarray of int64, shape (num_classes,)
            The votes for each class.
        """
        x = self._check_x(x)
        params = self._parameters(theta, rotation, mean)
        num = check_count(num, "num")
        gen = self.generator if generator is None else generator
        return self._counts(x.unsqueeze(0), params, num, gen)[0].cpu().numpy()

    def vote_counts(self, points: torch.Tensor, theta: float | torch.Tensor | SmoothingParameters, num: int,
                    rotation: torch.Tensor | None = None, generator: torch.Generator | None = None, *,
                    mean: torch.Tensor | None = None) -> np.ndarray:
        """Class counts of f(z + mu + U (theta * eps)) over `num` draws at each point z = points[p] (Cohen et al.'s
        SAMPLEUNDERNOISE at P points; UCAN Eq. 2's noise with theta = lambda sigma): the one Monte Carlo loop of
        the package. The P * num draws are made in order (point by point) in batches of `batch_size` rows, each
        batch scaled, rotated, shifted and classified in one forward pass; the counts do not depend on how the
        draws are cut into batches (`BATCH_SIZE`).

        Parameters
        ----------
        points : torch.Tensor, shape (P, *input_shape)
            The points, P >= 1, real floating-point and finite.
        theta : float, torch.Tensor of shape input_shape, or SmoothingParameters
            The scales (see the class's Notes).
        num : int
            Draws per point, >= 1.
        rotation : torch.Tensor of shape (n, n), optional
            U, orthogonal (None with a SmoothingParameters theta).
        generator : torch.Generator or noise.DrawStream, optional
            Where the draws come from (None: the Smooth's own generator).
        mean : torch.Tensor, optional
            mu, broadcastable to input_shape (None with a SmoothingParameters theta).

        Returns
        -------
        numpy.ndarray of int64, shape (P, num_classes)
            The votes for each class at each point.
        """
        if not isinstance(points, torch.Tensor) or points.ndim != len(self.input_shape) + 1 or points.shape[0] < 1:
            got = tuple(points.shape) if isinstance(points, torch.Tensor) else type(points).__name__
            raise ValueError(f"points must be a tensor (P, *input_shape) = (P, {', '.join(map(str, self.input_shape))})"
                             f" with P >= 1, got {got}")
        pts = self._check_x(points, "points", (points.shape[0], *self.input_shape))
        params = self._parameters(theta, rotation, mean)
        num = check_count(num, "num")
        gen = self.generator if generator is None else generator
        return self._counts(pts, params, num, gen).cpu().numpy()

    @torch.no_grad()
    def _counts(self, points: torch.Tensor, params: SmoothingParameters, num: int,
                gen: "torch.Generator | DrawStream | BlockDrawStream | None") -> torch.Tensor:
        """`vote_counts` with its arguments as checked by `Smooth`'s public methods, as a (P, num_classes) tensor on
        the Smooth's device. gen: a generator (a fresh `DrawStream` or `BlockDrawStream` over it, as `draws` says)
        or a stream that continues. The votes are added up on the device, and the logits' finiteness is checked once
        at the end, so that a GPU runs the batches without waiting for the host."""
        th, rot, mu = params.theta, params.rotation, params.mean
        p, k, shape = points.shape[0], self.num_classes, self.input_shape
        total = p * num
        counts = torch.zeros(p * k, dtype=torch.long, device=self.device)
        bad = torch.zeros((), dtype=torch.long, device=self.device)  # rows with a non-finite logit
        rows_max = min(self.batch_size, total)
        sizes = [min(self.batch_size, total - start) for start in range(0, total, self.batch_size)]
        feed = None
        if self.sampler is None:
            feed = self._feed(gen, sizes, rows_max)
        elif isinstance(gen, BlockDrawStream):
            # its draws are made on the device from its own key: a sampler cannot continue them
            raise ValueError("generator must be a torch.Generator or a DrawStream when the Smooth has a sampler (the "
                             "sampler draws from a CPU generator); a BlockDrawStream's draws are the Smooth's own "
                             "noise family's, got a BlockDrawStream")
        elif isinstance(gen, DrawStream):
            gen = gen.generator
        done = 0
        with eval_mode(self.model), forward_precision(self.precision, self.device):
            for b in sizes:
                if feed is not None:
                    eps = next(feed)
                else:
                    eps = self.sampler(b, gen)
                    if not isinstance(eps, torch.Tensor) or tuple(eps.shape) != (b, *shape):
                        got = tuple(eps.shape) if isinstance(eps, torch.Tensor) else type(eps).__name__
                        raise ValueError(f"sampler must return {b} draws of shape {(b, *shape)}, got {got}")
                    eps = eps.to(self.device)
                # scale, rotate and shift (in place where that changes nothing): theta * z, or U (theta * z); + mu
                eps = _times(eps, th) if rot is None else scale_noise(eps, th, rot)
                if mu is not None:
                    eps = _plus(eps, mu)
                # the rows of this batch belong to points done // num, ..., (done + b - 1) // num
                batch = _plus(eps, points[0] if p == 1 else
                              points.index_select(0, torch.arange(done, done + b, device=points.device) // num))
                logits = self._logits(batch)
                bad += (~torch.isfinite(logits).all(dim=1)).sum()
                votes = logits.argmax(dim=1)
                if p > 1:
                    votes += torch.arange(done, done + b, device=votes.device) // num * k
                counts.index_add_(0, votes, torch.ones_like(votes))
                done += b
        if feed is not None:
            feed.close()  # ends its drawing thread (a GPU device and CPU draws)
        if int(bad):
            raise ValueError(f"model returned non-finite logits (NaN or inf) for {int(bad)} of {total} noisy inputs; "
                             "a broken model cannot be certified (check its weights and inputs)")
        return counts.view(p, k)

    def _feed(self, gen: "torch.Generator | DrawStream | BlockDrawStream | None", sizes: list[int],
              rows_max: int) -> Iterator[torch.Tensor]:
        """The draws of one counting loop, batch by batch: from a `BlockDrawStream` on the device into one reused
        buffer, or from a `DrawStream` on the CPU (`_draw_feed`)."""
        if isinstance(gen, BlockDrawStream) or (self.draws == DEVICE and not isinstance(gen, DrawStream)):
            stream = gen if isinstance(gen, BlockDrawStream) else BlockDrawStream(self.noise, self.input_shape, gen,
                                                                                 self.device)
            buffer = torch.empty((rows_max, *self.input_shape), dtype=stream.dtype, device=self.device)
            return (stream.draw(b, out=buffer[:b]) for b in sizes)
        stream = gen if isinstance(gen, DrawStream) else DrawStream(self.noise, self.input_shape, gen)
        return _draw_feed(stream, sizes, rows_max, self.device)

    def _logits(self, batch: torch.Tensor) -> torch.Tensor:
        """f's logits on one batch, in the Smooth's precision (read back as float32). The first batch of this Smooth
        checks them (`checked_logits`) and that f is per-example; later batches' finiteness is the caller's to
        check."""
        batch = fast_layout(self.model, batch, self.precision)
        if self._per_example_checked:
            return blocked_forward(self.model, batch).float()
        try:
            logits = checked_logits(self.model, batch, self.num_classes, blocked=True).float()
        except RuntimeError as e:
            # the first forward pass of this Smooth: a model that cannot take (b, *input_shape) would raise torch's
            # own "mat1 and mat2 shapes cannot be multiplied"; running out of memory passes through
            if isinstance(e, torch.cuda.OutOfMemoryError):
                raise
            raise ValueError(f"model must take a batch of shape (b, *input_shape) = {tuple(batch.shape)} "
                             f"(input_shape = {self.input_shape}) and return logits, but its first "
                             f"forward pass failed: {type(e).__name__}: {e}") from e
        check_per_example(self.model, batch, logits, precision=self.precision)
        self._per_example_checked = True
        return logits

    # -- Cohen et al.'s PREDICT and CERTIFY -----------------------------------------------------------
    def predict(self, x: torch.Tensor, theta: float | torch.Tensor | SmoothingParameters, n: int, alpha: float,
                rotation: torch.Tensor | None = None, generator: torch.Generator | None = None, *,
                mean: torch.Tensor | None = None) -> int:
        """PREDICT (Cohen et al. 2019): the top class if a two-sided binomial test of its count against the
        runner-up's rejects equality at level alpha, else ABSTAIN.

        Parameters
        ----------
        x, theta, rotation, generator, mean
            As `sample_counts`.
        n : int
            The number of draws, >= 1.
        alpha : float
            The test's level, in (0, 1).

        Returns
        -------
        int
            The predicted class, or ABSTAIN (-1).
        """
        n = check_count(n, "n")
        alpha = _check_alpha(alpha)
        counts = self.sample_counts(x, theta, n, rotation, generator, mean=mean)
        top2 = np.argsort(counts)[::-1][:2]
        na, nb = int(counts[top2[0]]), int(counts[top2[1]])
        if binomtest(na, na + nb, 0.5).pvalue > alpha:
            return ABSTAIN
        return int(top2[0])

    def lower_bound(self, x: torch.Tensor, theta: float | torch.Tensor | SmoothingParameters, n0: int, n: int,
                    alpha: float, rotation: torch.Tensor | None = None, generator: torch.Generator | None = None, *,
                    mean: torch.Tensor | None = None) -> tuple[int, int, float]:
        """CERTIFY's Monte Carlo part (Cohen et al. 2019; UCAN Algorithm 1): n0 draws select the class c_A, n fresh
        draws count its votes n_A, and the one-sided (1 - alpha) Clopper-Pearson bound on n_A of n bounds p_A from
        below. The certificate from the bound is the caller's (`certify`: ANCER §4-5; `ucan.certify`: UCAN
        Table 1).

        Parameters
        ----------
        x, theta, rotation, mean
            As `sample_counts`.
        n0 : int
            Draws that select the class, >= 1.
        n : int
            Draws that estimate its probability, >= 1.
        alpha : float
            The bound's failure probability, in (0, 1).
        generator : torch.Generator or a pair (select, estimate) of them, optional
            The two stages' draws (`streams.certify_streams`); one generator serves both; None: the Smooth's own.

        Returns
        -------
        tuple of (int, int, float)
            (c_A, n_A, p_lower).
        """
        n0 = check_count(n0, "n0")
        n = check_count(n, "n")
        alpha = _check_alpha(alpha)
        x = self._check_x(x).unsqueeze(0)
        params = self._parameters(theta, rotation, mean)
        select, estimate = _stage_generators(self.generator if generator is None else generator)
        counts0 = self._counts(x, params, n0, select)[0].cpu().numpy()   # counts0 = SAMPLEUNDERNOISE(f, x, n0, θ)
        c_hat = int(np.argmax(counts0))                                  # ĉ_A = top index in counts0
        counts = self._counts(x, params, n, estimate)[0]                 # counts = SAMPLEUNDERNOISE(f, x, n, θ)
        count = int(counts[c_hat])                                       # n_A = counts[ĉ_A]
        return c_hat, count, float(lower_confidence_bound(count, n, alpha))  # p_A = LOWERCONFBOUND(n_A, n, 1 - α)

    @timed(CERTIFY)
    def certify(self, x: torch.Tensor, theta: float | torch.Tensor | SmoothingParameters, n0: int, n: int,
                alpha: float, rotation: torch.Tensor | None = None, generator: torch.Generator | None = None, *,
                mean: torch.Tensor | None = None) -> Certificate:
        """CERTIFY (Cohen et al. 2019) with ANCER's anisotropic certificates (§4-5): n0 draws select the class, n
        fresh draws bound p_A from below at level alpha (`lower_bound`); abstain when the bound is <= 1/2, else the
        gap of Corollary 1 (Gaussian) or Corollary 2 (uniform) and the region's radius, proxy radius and log-volume
        (`certificate_from_bound`). A mean mu shifts the noise (the certificate is of the classifier
        z -> f(z + mu)).

        Parameters
        ----------
        x, theta, n0, n, alpha, rotation, generator, mean
            As `lower_bound`.

        Returns
        -------
        Certificate
        """
        if self.norm is None:
            raise ValueError(f"noise = {self.noise!r}: ANCER certifies only {list(NOISES)} noise; UCAN's certificates "
                             "of the other families are ucan.certify's")
        params = self._parameters(theta, rotation, mean)
        c_hat, count, p_lower = self.lower_bound(x, params, n0, n, alpha, generator=generator)
        return certificate_from_bound(c_hat, p_lower, params, self.norm, count, n, noise=self.noise)


def _draw_feed(stream: DrawStream, sizes: list[int], rows_max: int,
               device: torch.device) -> Iterator[torch.Tensor]:
    """The draws of one counting loop, batch by batch (`sizes`), on `device`, in the stream's order. On the CPU they
    are drawn into one reused buffer. For a GPU a background thread draws the next batch into one of two pinned
    buffers while the GPU classifies the current one (CPU noise costs about as much as a CIFAR ResNet's forward
    pass there); a buffer is refilled only once its copy to the device has completed (a CUDA event)."""
    if device.type == "cpu":
        buffer = torch.empty((rows_max, *stream.shape), dtype=stream.dtype)
        for b in sizes:
            yield stream.draw(b, out=buffer[:b])
        return
    cuda = devices.is_cuda(device)  # another accelerator copies synchronously
    pinned = cuda and torch.cuda.is_available()
    hosts = [torch.empty((rows_max, *stream.shape), dtype=stream.dtype, pin_memory=pinned) for _ in range(2)]
    target = torch.empty((rows_max, *stream.shape), dtype=stream.dtype, device=device)
    copied: list = [None, None]  # the event recorded after each host buffer's last copy

    def fill(i: int, b: int) -> torch.Tensor:
        if copied[i % 2] is not None:
            copied[i % 2].synchronize()
        return stream.draw(b, out=hosts[i % 2][:b])

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(fill, 0, sizes[0])
        for i, b in enumerate(sizes):
            host = pending.result()
            eps = target[:b].copy_(host, non_blocking=cuda)
            if cuda:
                event = torch.cuda.Event()
                event.record(torch.cuda.current_stream(device))
                copied[i % 2] = event
            if i + 1 < len(sizes):
                pending = pool.submit(fill, i + 1, sizes[i + 1])
            yield eps


def _stage_generators(gen: "torch.Generator | tuple | list") -> tuple:
    """CERTIFY's (select, estimate) generators from a pair of them, or from one generator both stages share."""
    if isinstance(gen, (tuple, list)):
        if len(gen) != 2 or not all(isinstance(g, torch.Generator) for g in gen):
            raise TypeError(f"generator must be a torch.Generator or a pair (select, estimate) of them "
                            f"(`streams.certify_streams`), got {gen!r}")
        return gen[0], gen[1]
    if not isinstance(gen, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or a pair (select, estimate) of them, got "
                        f"{type(gen).__name__}")
    return gen, gen


def certificate_from_bound(prediction: int, p_lower: float, theta: np.ndarray | SmoothingParameters, norm: str,
                           count: int = 0, n: int = 0, rotation: np.ndarray | None = None, *,
                           noise: str | None = None) -> Certificate:
    """ANCER's certificate (§4-5) from a lower bound p_A on the top class's probability, CERTIFY's last step (Cohen
    et al. 2019): abstain when p_A <= 1/2, else the gap of Corollary 1 (Gaussian noise, Φ^-1(p_A)) or Corollary 2
    (uniform noise, 2 p_A - 1) and the certified region's enclosed radius, proxy radius and log-volume (§5,
    Proposition 4; `regions`).

    Parameters
    ----------
    prediction : int
        The class the bound is for, an index >= 0 (ABSTAIN only with p_lower <= 1/2).
    p_lower : float
        The bound, a real number in [0, 1] (not a string or bool); below 1 for l2 (Φ^-1(1) = ∞).
    theta : array_like of shape (n_dims,), or SmoothingParameters
        The per-dimension scales, finite and > 0; or the `SmoothingParameters` CERTIFY sampled with, whose scales
        and rotation are taken as checked where it was made (`rotation` must then be None).
    norm : str
        The certified norm, "l2" or "l1".
    count : int
        The votes for the prediction, in [0, n] (0: not recorded).
    n : int
        The number of draws behind the bound, >= 0 (0: not recorded).
    rotation : array_like of shape (n_dims, n_dims), optional
        RANCER's U, orthogonal (`parameters.check_rotation`, for both norms, when the certificate does not
        abstain).
    noise : str, optional
        The family CERTIFY sampled, whose gap is taken (`regions.noise_gap`); None: the family that certifies
        `norm` (`regions.gap_from_lower_bound`).

    Returns
    -------
    Certificate
    """
    # A NaN bound would pass `p_lower <= 0.5` as False and yield a non-abstaining certificate with gap 0;
    # float() would parse a string ('0.9'), and fail on None or an array with its own message
    check_real(p_lower, "p_lower")
    try:
        p_lower = float(p_lower)
    except (TypeError, ValueError):
        raise ValueError(f"p_lower must be a real number in [0, 1] (a scalar), got {p_lower!r}") from None
    if not 0.0 <= p_lower <= 1.0:
        raise ValueError(f"p_lower must be a probability in [0, 1], got {p_lower!r}")
    check_class_index(prediction, "prediction", abstain=True)
    n = check_count(n, "n", 0)  # 0: not recorded
    if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer)) or not 0 <= count <= n:
        raise ValueError(f"count must be an integer in [0, n = {n}] (the votes for the prediction), got {count!r}")
    if isinstance(theta, SmoothingParameters) and rotation is not None:
        raise ValueError("rotation must be None when theta is a SmoothingParameters (it carries its own U), got "
                         f"{type(rotation).__name__}")
    if noise is not None and FAMILIES[check_noise(noise)].ancer_norm != norm:
        raise ValueError(f"noise {noise!r} certifies {FAMILIES[noise].ancer_norm}, not norm = {norm!r}")
    if p_lower <= 0.5:
        return Certificate(ABSTAIN, p_lower, 0.0, 0.0, 0.0, -math.inf, count, n)
    if prediction == ABSTAIN:
        raise ValueError(f"prediction is ABSTAIN ({ABSTAIN}) but p_lower = {p_lower!r} > 1/2 certifies a class: "
                         "pass the class the bound is for")
    gap = float(regions.gap_from_lower_bound(p_lower, norm) if noise is None else regions.noise_gap(p_lower, noise))
    if not math.isfinite(gap):
        raise ValueError(f"p_lower = {p_lower!r} gives an infinite {norm} radius (Φ^-1(1) = ∞); a Clopper-Pearson "
                         "bound from n samples is at most alpha^(1/n) < 1")
    # the l2 radius min_i θ_i gap is the same for every U (RANCER §3): U enters the l1 radius only
    if isinstance(theta, SmoothingParameters):
        scales, u = theta.scales, theta.rotation64 if norm == L1 else None
    else:
        scales, u = _scale_vector(theta), None
        if rotation is not None:
            # a wrong-size, NaN, singular or non-orthogonal rotation would give a NaN/inf/meaningless l1 radius
            # (and an unchecked l2 one)
            check_rotation(rotation, scales.size)
            u = np.asarray(rotation, dtype=np.float64) if norm == L1 else None
    return Certificate(
        prediction=int(prediction), p_lower=float(p_lower), gap=gap,
        radius=float(regions.enclosed_radius(scales, gap, norm, u)),
        radius_proxy=float(regions.proxy_radius(scales, gap)),
        log_volume=float(regions.log_volume(scales, gap, norm)), count=count, n=n)


def _scale_vector(theta: object) -> np.ndarray:
    """`certificate_from_bound`'s raw theta as a flat float64 vector: at least one entry, finite and > 0."""
    try:
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"theta must be an array of finite numbers > 0, got {theta!r}") from None
    if th.size == 0 or not (np.isfinite(th).all() and (th > 0).all()):
        raise ValueError(f"theta must be finite and > 0 in every dimension, got {theta!r}")
    return th


def soft_smoothed_probabilities(model: torch.nn.Module, x: torch.Tensor, z: torch.Tensor, theta: torch.Tensor,
                                rotation: torch.Tensor | None = None, mean: torch.Tensor | None = None,
                                cls: int | None = None, *, fixed: bool = True, precision: str = EXACT) -> torch.Tensor:
    """The soft smoothed classifier E_eps[softmax f(x + mu + U (theta * eps))] estimated from the unit-scale draws z,
    differentiable in x, theta and mu (the reparameterization trick): the one soft counterpart of `Smooth`, which
    Isotropic DD and ANCER ascend (App. C, Listing 1, `optimize.optimize_isotropic` and `optimize.optimize_ancer`),
    RANCER with a rotation per input (§3, `rancer.optimize_rancer`) and UCAN's soundness search with
    theta = lambda sigma(x) and mu(x) (Eq. 2, `ucan.soft_smoothed_prob`). With `fixed`, f runs in evaluation mode
    with its weights fixed (no gradient for them); fixed=False runs f as the caller left it (`ucan.search_violation`
    fixes it once around its steps).

    Arguments as checked by the entry points above (and `optimize.smoothed_probabilities`); only `cls` is checked
    here, against the number of classes, which is known only once f has run.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier f.
    x : torch.Tensor, shape (B, *shape)
        The inputs, floating-point and finite.
    z : torch.Tensor, shape (B, S, *shape)
        S unit-scale draws per input.
    theta : torch.Tensor
        The scales, finite and >= 0, with x's number of dimensions, each of size 1 or x's (one scale per input, or
        per pixel).
    rotation : torch.Tensor of shape (B, n, n), optional
        One orthogonal matrix per input, n = prod(shape).
    mean : torch.Tensor, optional
        mu, finite, shaped as theta.
    cls : int, optional
        A class index (None: every class).
    fixed : bool
        Run f in evaluation mode with its weights fixed.
    precision : str
        The forward passes' arithmetic (`precision.PRECISIONS`, checked by the caller); the probabilities are float32.

    Returns
    -------
    torch.Tensor
        The estimated probabilities, shape (B, K), or of class `cls`, shape (B,).
    """
    b, s, shape = z.shape[0], z.shape[1], tuple(z.shape[2:])
    eps = z * theta.unsqueeze(1)
    if rotation is not None:
        eps = torch.einsum("bij,bsj->bsi", rotation.to(eps.dtype), eps.reshape(b, s, -1)).reshape(eps.shape)
    if mean is not None:
        eps = eps + mean.unsqueeze(1)
    # the base classifier is fixed: no dropout, BatchNorm statistics untouched, no gradient for its weights
    batch = fast_layout(model, (x.unsqueeze(1) + eps).reshape(b * s, *shape), precision)
    with forward_precision(precision, batch.device):
        if fixed:
            with eval_mode(model), fixed_weights(model):
                logits = checked_logits(model, batch, blocked=True)
        else:
            logits = checked_logits(model, batch, blocked=True)
    probs = torch.softmax(logits if precision == EXACT else logits.float(), dim=1).reshape(b, s, -1)
    if cls is None:
        return probs.mean(dim=1)
    check_class_index(cls, "cls", probs.shape[2])  # the number of classes is known only here
    return probs[:, :, cls].mean(dim=1)


_MAP_BOUNDS = {"positive": ("finite and > 0", lambda v: (v > 0) & (v < math.inf)),
               "nonnegative": ("finite and >= 0", lambda v: (v >= 0) & (v < math.inf)),
               "finite": ("finite", torch.isfinite)}


def check_input_map(t: torch.Tensor, x: torch.Tensor, name: str, bound: str) -> None:
    """A per-input or per-pixel map for the batch x (B, *shape): a tensor with x's number of dimensions, each of
    size 1 or x's, whose entries are finite and > 0 (bound "positive": a noise scale), >= 0 ("nonnegative": UCAN's
    σ(x), 0 at a pixel) or finite ("finite": a mean μ). TypeError / ValueError naming `name` otherwise (NaN fails
    every bound).

    Parameters
    ----------
    t : torch.Tensor, shape broadcasting to x's (x.ndim dimensions, each of size 1 or x's)
        The map to check.
    x : torch.Tensor, shape (B, *shape)
        The batch the map is for.
    name : str
        The argument's name, used in the error messages.
    bound : str
        One of "positive", "nonnegative", "finite".

    Raises
    ------
    TypeError
        When t is not a torch.Tensor.
    ValueError
        When t's shape does not fit x's or an entry violates the bound.
    """
    want, ok = _MAP_BOUNDS[bound]
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor with x's dimensions, got {type(t).__name__}")
    if t.ndim != x.ndim or any(a not in (1, d) for a, d in zip(t.shape, x.shape)):
        raise ValueError(f"{name} must have x's {x.ndim} dimensions, each of size 1 or x's (x: {tuple(x.shape)}), "
                         f"got shape {tuple(t.shape)}")
    v = t.detach()
    if not bool(ok(v).all()):
        raise ValueError(f"{name} must be {want}, got min {v.min().item()!r} and max {v.max().item()!r}")
