"""Monte Carlo prediction and certification of a smoothed classifier (Cohen et al. 2019's PREDICT and
CERTIFY, with ANCER's anisotropic certificates, §4-5).

`Smooth` wraps a base classifier (a torch module returning logits) and a noise family; theta is the
per-dimension scale (sigma_i for Gaussian, lambda_i for uniform noise) or one scalar, with an optional rotation U
(RANCER §3) and mean mu (UCAN Eq. 2). It is the package's one smoothed classifier: its one counting loop
(`Smooth.vote_counts`) serves PREDICT, CERTIFY (`Smooth.lower_bound`, whose bound ANCER's `certify` and UCAN's
`ucan.certify` turn into their certificates) and the verification of certified regions (`verify`);
`soft_smoothed_probabilities` is its one differentiable (soft) counterpart, which the optimizers ascend.
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
from .base_classifier import check_per_example, checked_logits, eval_mode, fixed_weights
from .families import FAMILIES
from .names import ABSTAIN
from .noise import GAUSSIAN, NOISES, DrawStream, check_noise, check_rotation, check_rotation_fast, scale_noise
from .stages import CERTIFY, timed
from .validation import (
    check_choice,
    check_class_index,
    check_count,
    check_finite_tensor,
    check_probability,
    check_real,
    check_scale,
    check_shape,
)

#: Noise draws per forward batch of CERTIFY's sampling loop. Measured on 2 CPU cores (2026-11-24): the MNIST
#: SmallCNN samples 10,000 draws 2.2-2.5x faster in batches of 2,000 than in one batch of 10,000 (large
#: activations leave the caches), the 8x8 models 1.0-1.4x. Counts are the same for every batch size: the draws
#: are one sequence however they are cut (`noise.DrawStream`) and the forward passes take whole blocks of rows
#: (`base_classifier.blocked_forward`); tests/test_split_invariance.py checks batch sizes 7 to 10,000.
BATCH_SIZE = 2_000


def _check_alpha(alpha: float) -> float:
    """The failure probability alpha in (0, 1), given as a real number: check_probability refuses None,
    NaN and values out of range (ValueError), check_real a str that float() would parse ('0.05') or a bool."""
    value = check_probability(alpha, "alpha")
    check_real(alpha, "alpha")
    return value


def lower_confidence_bound(k: int | np.ndarray, n: int, alpha: float) -> np.ndarray:
    """One-sided (1 - alpha) Clopper-Pearson lower bound on a binomial proportion from k successes of n
    (the bound Cohen et al.'s CERTIFY uses): the alpha quantile of Beta(k, n - k + 1), 0 when k = 0.
    k: real integer-valued counts in [0, n] (a scalar or an array); n: an int >= 1; alpha in (0, 1)."""
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
        """The certified region this certificate states at input `center` (any shape, flattened to n values) for
        the scales `theta` CERTIFY was run with (a number, or n values in center's order) and the `norm` the noise
        certifies ("l2" for Gaussian, "l1" for uniform noise; rotation: RANCER's U, (n, n)): a
        `regions.CertifiedRegion` whose radius, proxy radius and log-volume are this certificate's."""
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
    theta = lambda sigma(x) and mean mu(x)), with one counting loop (`vote_counts`) under PREDICT and CERTIFY.

    model: maps a batch (b, *input_shape) in [0, 1] pixel space to logits (b, num_classes); it is run in
    evaluation mode (its training flags restored afterwards) and non-finite logits raise ValueError, as does
    a first forward pass that fails (a model that cannot take inputs of shape (b, *input_shape)).
    noise: one of ANCER's families (`noise.NOISES`: "gaussian" certifies l2 / lΣ2, "uniform" l1 / lΛ1, each with
    its own gap, `regions.noise_gap`); with a `sampler`, any registered family (`families.FAMILIES`), e.g. one of
    UCAN Table 1's (`ucan_radii.NOISES`), whose certificates `ucan.certify` computes.
    seed: an int in [0, 2**64) for the Smooth's own generator.
    device: where the model classifies the draws (the draws themselves are made on the CPU, see `_counts`).
    sampler: None (draws by `noise.DrawStream`, into one buffer reused across batches) or a `Sampler`
    callable (num, generator) -> `num` fresh unit-scale draws (num, *input_shape).
    x (in sample_counts / predict / certify): a real floating-point tensor of shape input_shape, finite.
    theta: a finite scalar > 0 or a tensor of shape input_shape, finite and > 0 also in float32 (the noise's
    precision: values that overflow to inf or underflow to 0 there are refused).
    mean: None or a finite tensor broadcastable to input_shape (UCAN's mu, added to the noise).
    """

    def __init__(self, model: torch.nn.Module, num_classes: int, input_shape: tuple[int, ...],
                 noise: str = GAUSSIAN, batch_size: int = BATCH_SIZE, seed: int = 0,
                 device: str | torch.device = "cpu", sampler: Sampler | None = None) -> None:
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
        seed = check_count(seed, "seed", 0)
        if seed >= 2 ** 64:  # torch.Generator.manual_seed's own error was numpy-like ("Overflow when unpacking")
            raise ValueError(f"seed must be an integer in [0, 2**64) (a torch generator seed), got {seed}")
        # on the CPU whatever the device: the draws are made there (`_counts`), the same noise on every device
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
        return t.to(self.device, torch.float32)

    def _check_theta(self, theta: float | torch.Tensor) -> torch.Tensor:
        name = FAMILIES[self.noise].scale_name
        check_real(theta, name)  # a bool, str, complex or None scale (True was taken as 1.0)
        try:
            t = check_scale(theta, self.input_shape, name)
        except RuntimeError as e:  # torch.full's "value cannot be converted to type float without overflow"
            raise ValueError(f"{name} must be finite and > 0 in float32 (the noise's precision, at most "
                             f"{torch.finfo(torch.float32).max:.4g}), got {theta!r}") from e
        th = t.to(self.device, torch.float32)
        if th is theta:  # a float32 tensor on the device, checked by check_scale: nothing was cast
            return th
        # the cast to float32 can overflow to inf (refused by torch.full above for a scalar) or underflow to 0
        if isinstance(theta, (int, float, np.number)) or getattr(theta, "ndim", None) == 0:
            # a scalar: check_scale filled th with its one value, in float32 (an O(1) check)
            if np.float32(float(theta)) == 0:
                raise ValueError(f"{name} must be finite and > 0 in float32 (the noise's precision), but "
                                 f"{name} = {theta!r} underflows to 0 when cast to float32")
        elif not (bool(torch.isfinite(th).all()) and bool((th > 0).all())):
            # a tensor cast here (float64, or from another device): one O(d) pass, as the cast itself
            how = "overflow to inf" if bool(torch.isinf(th).any()) else "underflow to 0"
            raise ValueError(f"{name} must be finite and > 0 in float32 (the noise's precision), but values of "
                             f"{name} in [{float(t.min()):.4g}, {float(t.max()):.4g}] {how} when cast to float32")
        return th

    def _check_rotation(self, rotation: torch.Tensor | None) -> torch.Tensor | None:
        try:
            u = check_rotation(rotation, self.dim)
            return None if u is None else u.to(self.device)  # checked where it is, used where the noise is scaled
        except (TypeError, RuntimeError) as e:  # torch.as_tensor's "new(): invalid data type 'str'"
            raise ValueError(f"rotation must be None or a ({self.dim}, {self.dim}) orthogonal matrix (a tensor), "
                             f"got {type(rotation).__name__} {str(rotation)[:40]!r}") from e

    def _check_mean(self, mean: torch.Tensor | None) -> torch.Tensor | None:
        if mean is None:
            return None
        if not isinstance(mean, torch.Tensor):
            raise TypeError(f"mean must be None or a tensor broadcastable to {self.input_shape}, "
                            f"got {type(mean).__name__}")
        if not _fits(tuple(mean.shape), self.input_shape) or not mean.is_floating_point():
            raise ValueError(f"mean must be a real floating-point tensor broadcastable to {self.input_shape}, "
                             f"got shape {tuple(mean.shape)} and dtype {mean.dtype}")
        check_finite_tensor(mean, "mean")
        return mean.to(self.device, torch.float32)

    # -- the one sampling loop ------------------------------------------------------------------
    def sample_counts(self, x: torch.Tensor, theta: float | torch.Tensor, num: int,
                      rotation: torch.Tensor | None = None, generator: torch.Generator | None = None, *,
                      mean: torch.Tensor | None = None) -> np.ndarray:
        """Class counts of f(x + mu + U (theta * eps)) over `num` noise draws (`vote_counts` at one point)."""
        x = self._check_x(x)
        th = self._check_theta(theta)
        num = check_count(num, "num")
        rot = self._check_rotation(rotation)
        mu = self._check_mean(mean)
        gen = self.generator if generator is None else generator
        return self._counts(x.unsqueeze(0), th, num, rot, mu, gen)[0].cpu().numpy()

    def vote_counts(self, points: torch.Tensor, theta: float | torch.Tensor, num: int,
                    rotation: torch.Tensor | None = None, generator: torch.Generator | None = None, *,
                    mean: torch.Tensor | None = None, validate: bool = True) -> np.ndarray:
        """Class counts (P, num_classes) of f(z + mu + U (theta * eps)) over `num` draws at each point z = points[p]
        (Cohen et al.'s CLASSIFYSAMPLES; UCAN Eq. 2's noise with theta = lambda sigma): the one Monte Carlo loop of
        the package. The P * num draws are made in order (point by point) in batches of `batch_size` rows, each
        batch scaled, rotated, shifted and classified in one forward pass; the counts do not depend on how the
        draws are cut into batches (`BATCH_SIZE`).

        points: (P, *input_shape), P >= 1, finite floating-point; theta, rotation, mean as `sample_counts`;
        num an integer >= 1. validate=False skips these checks and casts, for callers that made their own
        (`ucan`, whose theta may be 0 at a pixel, and `verify`): theta and mean are then used as given (any
        dtype; a tensor broadcastable to input_shape), points as well."""
        gen = self.generator if generator is None else generator
        if not validate:
            return self._counts(points, theta, num, rotation, mean, gen).cpu().numpy()
        if not isinstance(points, torch.Tensor) or points.ndim != len(self.input_shape) + 1 or points.shape[0] < 1:
            got = tuple(points.shape) if isinstance(points, torch.Tensor) else type(points).__name__
            raise ValueError(f"points must be a tensor (P, *input_shape) = (P, {', '.join(map(str, self.input_shape))})"
                             f" with P >= 1, got {got}")
        pts = self._check_x(points, "points", (points.shape[0], *self.input_shape))
        th = self._check_theta(theta)
        num = check_count(num, "num")
        rot = self._check_rotation(rotation)
        mu = self._check_mean(mean)
        return self._counts(pts, th, num, rot, mu, gen).cpu().numpy()

    @torch.no_grad()
    def _counts(self, points: torch.Tensor, th: torch.Tensor, num: int, rot: torch.Tensor | None,
                mu: torch.Tensor | None, gen: "torch.Generator | DrawStream | None") -> torch.Tensor:
        """`vote_counts` after its checks, as a (P, num_classes) tensor on the Smooth's device. gen: a generator
        (a fresh `DrawStream` over it) or a DrawStream that continues. The draws are made on the CPU (where the
        package's streams live) and copied to the device, so that every device classifies the same noise."""
        p, k, shape = points.shape[0], self.num_classes, self.input_shape
        total = p * num
        counts = torch.zeros((p, k), dtype=torch.long, device=self.device)
        rows_max = min(self.batch_size, total)
        sizes = [min(self.batch_size, total - start) for start in range(0, total, self.batch_size)]
        feed = None
        if self.sampler is None:
            stream = gen if isinstance(gen, DrawStream) else DrawStream(self.noise, shape, gen)
            feed = _draw_feed(stream, sizes, rows_max, self.device)
        elif isinstance(gen, DrawStream):
            gen = gen.generator
        done = 0
        with eval_mode(self.model):  # f is a fixed function: no dropout, BatchNorm statistics untouched
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
                eps = _times(eps, th) if rot is None else scale_noise(eps, th, rot, validate=False)
                if mu is not None:
                    eps = _plus(eps, mu)
                if p == 1:
                    batch = _plus(eps, points[0])
                else:  # the rows of this batch belong to points done // num, ..., (done + b - 1) // num
                    rows = torch.arange(done, done + b, device=points.device) // num
                    batch = _plus(eps, points.index_select(0, rows))
                votes = self._logits(batch).argmax(dim=1)
                if p == 1:
                    counts[0] += torch.bincount(votes, minlength=k)
                else:
                    first = done // num
                    span = (done + b - 1) // num - first + 1
                    counts[first:first + span] += torch.bincount((rows - first) * k + votes,
                                                                 minlength=span * k).view(span, k)
                done += b
        if feed is not None:
            feed.close()  # ends its drawing thread (a GPU device)
        return counts

    def _logits(self, batch: torch.Tensor) -> torch.Tensor:
        """f's checked logits on one batch; the first batch of this Smooth also checks that f is per-example."""
        try:
            logits = checked_logits(self.model, batch, self.num_classes, blocked=True)
        except RuntimeError as e:
            # the first forward pass of this Smooth: a model that cannot take (b, *input_shape) used
            # to raise torch's own "mat1 and mat2 shapes cannot be multiplied"; later failures (and
            # running out of memory) are the model's own and pass through
            if self._per_example_checked or isinstance(e, torch.cuda.OutOfMemoryError):
                raise
            raise ValueError(f"model must take a batch of shape (b, *input_shape) = {tuple(batch.shape)} "
                             f"(input_shape = {self.input_shape}) and return logits, but its first "
                             f"forward pass failed: {type(e).__name__}: {e}") from e
        if not self._per_example_checked:  # once per Smooth: f must not depend on the batch
            check_per_example(self.model, batch, logits)
            self._per_example_checked = True
        return logits

    # -- Cohen et al.'s PREDICT and CERTIFY -----------------------------------------------------------
    def predict(self, x: torch.Tensor, theta: float | torch.Tensor, n: int, alpha: float,
                rotation: torch.Tensor | None = None, generator: torch.Generator | None = None, *,
                mean: torch.Tensor | None = None) -> int:
        """PREDICT: the top class if a two-sided binomial test of its count against the runner-up's
        rejects equality at level alpha, else ABSTAIN."""
        n = check_count(n, "n")
        alpha = _check_alpha(alpha)
        counts = self.sample_counts(x, theta, n, rotation, generator, mean=mean)
        top2 = np.argsort(counts)[::-1][:2]
        na, nb = int(counts[top2[0]]), int(counts[top2[1]])
        if binomtest(na, na + nb, 0.5).pvalue > alpha:
            return ABSTAIN
        return int(top2[0])

    def lower_bound(self, x: torch.Tensor, theta: float | torch.Tensor, n0: int, n: int, alpha: float,
                    rotation: torch.Tensor | None = None, generator: torch.Generator | None = None, *,
                    mean: torch.Tensor | None = None, validate: bool = True) -> tuple[int, int, float]:
        """CERTIFY's Monte Carlo part (Cohen et al.; UCAN Algorithm 1): n0 draws select the class c, n fresh draws
        count its votes, and the one-sided Clopper-Pearson bound at level alpha bounds p_c from below. Returns
        (c, count, p_lower); the certificate from the bound is the caller's (`certify`: ANCER §4-5; `ucan.certify`:
        UCAN Table 1). Arguments as `certify`; validate=False as `vote_counts` (n0, n, alpha still checked)."""
        n0 = check_count(n0, "n0")
        n = check_count(n, "n")
        alpha = _check_alpha(alpha)
        gen = self.generator if generator is None else generator
        if validate:
            x = self._check_x(x)
            th = self._check_theta(theta)
            rot = self._check_rotation(rotation)
            mu = self._check_mean(mean)
        else:
            th, rot, mu = theta, rotation, mean
        select, estimate = _stage_generators(gen)
        c_hat = int(np.argmax(self._counts(x.unsqueeze(0), th, n0, rot, mu, select)[0].cpu().numpy()))
        count = int(self._counts(x.unsqueeze(0), th, n, rot, mu, estimate)[0, c_hat])
        return c_hat, count, float(lower_confidence_bound(count, n, alpha))

    @timed(CERTIFY)
    def certify(self, x: torch.Tensor, theta: float | torch.Tensor, n0: int, n: int, alpha: float,
                rotation: torch.Tensor | None = None, generator: torch.Generator | None = None, *,
                mean: torch.Tensor | None = None) -> Certificate:
        """CERTIFY: n0 samples select the class, n fresh samples bound pA from below at level alpha
        (`lower_bound`), and the gap follows from Corollary 1 (Gaussian) or Corollary 2 (uniform). Abstains when
        the bound is <= 1/2. A mean mu shifts the noise (the certificate is of the classifier z -> f(z + mu))."""
        n0 = check_count(n0, "n0")
        n = check_count(n, "n")
        alpha = _check_alpha(alpha)
        th = self._check_theta(theta)
        if self.norm is None:
            raise ValueError(f"noise = {self.noise!r}: ANCER certifies only {list(NOISES)} noise; UCAN's certificates "
                             "of the other families are ucan.certify's")
        c_hat, count, p_lower = self.lower_bound(x, th, n0, n, alpha, rotation, generator, mean=mean)
        # the rotation was checked by lower_bound (check_rotation): no second O(d^3) orthogonality test
        return _certificate_from_bound(c_hat, p_lower, th.detach().cpu().numpy().reshape(-1), self.norm,
                                       count=count, n=n,
                                       rotation=None if rotation is None else _as_float64(rotation), noise=self.noise)


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


def _as_float64(matrix: "torch.Tensor | np.ndarray") -> np.ndarray:
    """A matrix (a tensor on any device, or an array) as a float64 NumPy array."""
    if isinstance(matrix, torch.Tensor):
        return matrix.detach().cpu().to(torch.float64).numpy()
    return np.asarray(matrix, np.float64)


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


def certificate_from_bound(prediction: int, p_lower: float, theta: np.ndarray, norm: str,
                           count: int = 0, n: int = 0, rotation: np.ndarray | None = None) -> Certificate:
    """Turn a lower bound on pA into ANCER's certificate quantities (§4-5); abstain when p_lower <= 1/2.
    prediction: the class the bound is for (an index >= 0; ABSTAIN only with p_lower <= 1/2); p_lower: a real
    number in [0, 1] (not a string or bool); theta: the finite, positive per-dimension scales; rotation: None
    or a (d, d) orthogonal matrix, d = theta.size (checked like `noise.check_rotation`, for both norms,
    when the certificate does not abstain)."""
    return _certificate_from_bound(prediction, p_lower, theta, norm, count, n, rotation, check_rot=True)


def _certificate_from_bound(prediction: int, p_lower: float, theta: np.ndarray, norm: str, count: int = 0,
                            n: int = 0, rotation: np.ndarray | None = None,
                            check_rot: bool = False, noise: str | None = None) -> Certificate:
    """`certificate_from_bound`; the rotation is checked only with check_rot (Smooth.certify has checked it). The
    gap is the family `noise`'s (`regions.noise_gap`), or, without one, that of the family that certifies `norm`."""
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
    if p_lower <= 0.5:
        return Certificate(ABSTAIN, p_lower, 0.0, 0.0, 0.0, -math.inf, count, n)
    if prediction == ABSTAIN:
        raise ValueError(f"prediction is ABSTAIN ({ABSTAIN}) but p_lower = {p_lower!r} > 1/2 certifies a class: "
                         "pass the class the bound is for")
    gap = float(regions.gap_from_lower_bound(p_lower, norm) if noise is None else regions.noise_gap(p_lower, noise))
    if not math.isfinite(gap):
        raise ValueError(f"p_lower = {p_lower!r} gives an infinite {norm} radius (Φ^-1(1) = ∞); a Clopper-Pearson "
                         "bound from n samples is at most alpha^(1/n) < 1")
    try:
        theta = np.asarray(theta, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"theta must be an array of finite numbers > 0, got {theta!r}") from None
    if theta.size == 0 or not (np.isfinite(theta).all() and (theta > 0).all()):
        raise ValueError(f"theta must be finite and > 0 in every dimension, got {theta!r}")
    if check_rot and rotation is not None:
        # a wrong-size, NaN, singular or non-orthogonal rotation would give a NaN/inf/meaningless l1 radius
        # (and an unchecked l2 one)
        try:
            u = np.asarray(rotation, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"rotation must be None or a ({theta.size}, {theta.size}) orthogonal matrix, "
                             f"got {rotation!r}") from None
        check_rotation(torch.from_numpy(u), theta.size)
    return Certificate(
        prediction=int(prediction), p_lower=float(p_lower), gap=gap,
        radius=float(regions.enclosed_radius(theta, gap, norm, rotation)),
        radius_proxy=float(regions.proxy_radius(theta, gap)),
        log_volume=float(regions.log_volume(theta, gap, norm)), count=count, n=n)


def soft_smoothed_probabilities(model: torch.nn.Module, x: torch.Tensor, z: torch.Tensor, theta: torch.Tensor,
                                rotation: torch.Tensor | None = None, mean: torch.Tensor | None = None,
                                cls: int | None = None, *, fixed: bool = True, validate: bool = True) -> torch.Tensor:
    """The soft smoothed classifier E_eps[softmax f(x + mu + U (theta * eps))] estimated from the unit-scale draws z,
    differentiable in x, theta and mu (the reparameterization trick): the one soft counterpart of `Smooth`, which
    Isotropic DD and ANCER ascend (App. C, Listing 1, through `optimize.smoothed_probabilities`), RANCER with a
    rotation per input (§3) and UCAN's soundness search with theta = lambda sigma(x) and mu(x) (Eq. 2,
    `ucan.soft_smoothed_prob`). With `fixed`, f runs in evaluation mode with its weights fixed (no gradient for
    them); fixed=False runs f as the caller left it (`ucan.search_violation` fixes it once around its steps).

    x: a floating-point batch (B, *shape), finite; z: draws (B, S, *shape); theta: finite and >= 0, x's number of
    dimensions, each of size 1 or x's (one scale per input, or per pixel); rotation: None or (B, n, n) orthogonal
    matrices, n = prod(shape) (`noise.check_rotation_fast`); mean: None or finite, shaped as theta; cls: None for
    every class, shape (B, K), or a class index, shape (B,). validate=False skips the checks (the optimizers'
    inner loops, whose callers made them once)."""
    if validate:
        _check_soft_arguments(x, z, theta, rotation, mean)
    b, s, shape = z.shape[0], z.shape[1], tuple(z.shape[2:])
    eps = z * theta.unsqueeze(1)
    if rotation is not None:
        eps = torch.einsum("bij,bsj->bsi", rotation.to(eps.dtype), eps.reshape(b, s, -1)).reshape(eps.shape)
    if mean is not None:
        eps = eps + mean.unsqueeze(1)
    # the base classifier is fixed: no dropout, BatchNorm statistics untouched, no gradient for its weights
    batch = (x.unsqueeze(1) + eps).reshape(b * s, *shape)
    if fixed:
        with eval_mode(model), fixed_weights(model):
            logits = checked_logits(model, batch, blocked=True)
    else:
        logits = checked_logits(model, batch, blocked=True)
    probs = torch.softmax(logits, dim=1).reshape(b, s, -1)
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
    every bound)."""
    want, ok = _MAP_BOUNDS[bound]
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor with x's dimensions, got {type(t).__name__}")
    if t.ndim != x.ndim or any(a not in (1, d) for a, d in zip(t.shape, x.shape)):
        raise ValueError(f"{name} must have x's {x.ndim} dimensions, each of size 1 or x's (x: {tuple(x.shape)}), "
                         f"got shape {tuple(t.shape)}")
    v = t.detach()
    if not bool(ok(v).all()):
        raise ValueError(f"{name} must be {want}, got min {v.min().item()!r} and max {v.max().item()!r}")


def _check_soft_arguments(x: torch.Tensor, z: torch.Tensor, theta: torch.Tensor, rotation: torch.Tensor | None,
                          mean: torch.Tensor | None) -> None:
    """`soft_smoothed_probabilities`' checks."""
    for name, t in (("x", x), ("z", z), ("theta", theta)):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            got = f"dtype {t.dtype}" if isinstance(t, torch.Tensor) else type(t).__name__
            raise TypeError(f"{name} must be a floating-point torch.Tensor, got {got}")
    if x.ndim < 2 or x.shape[0] < 1:
        raise ValueError(f"x must be a batch (B, *shape) with B >= 1, got shape {tuple(x.shape)}")
    check_finite_tensor(x.detach(), "x")
    if z.ndim != x.ndim + 1 or z.shape[0] != x.shape[0] or z.shape[2:] != x.shape[1:] or z.shape[1] < 1:
        raise ValueError(f"z must hold draws (B, S, *shape) = ({x.shape[0]}, S, {', '.join(map(str, x.shape[1:]))}) "
                         f"with S >= 1, got shape {tuple(z.shape)}")
    check_input_map(theta, x, "theta", "nonnegative")
    if mean is not None:
        check_input_map(mean, x, "mean", "finite")
    if rotation is not None:
        n = int(math.prod(x.shape[1:]))
        if not isinstance(rotation, torch.Tensor) or tuple(rotation.shape) != (x.shape[0], n, n):
            got = tuple(rotation.shape) if isinstance(rotation, torch.Tensor) else type(rotation).__name__
            raise ValueError(f"rotation must be None or ({x.shape[0]}, {n}, {n}) orthogonal matrices, got {got}")
        for k, u in enumerate(rotation):
            check_rotation_fast(u, n, f"rotation[{k}]")
