"""Monte Carlo prediction and certification of a smoothed classifier (Cohen et al. 2019's PREDICT and
CERTIFY, with ANCER's anisotropic certificates, §4-5).

`Smooth` wraps a base classifier (a torch module returning logits) and a noise family; theta is the
per-dimension scale (sigma_i for Gaussian, lambda_i for uniform noise) or one scalar.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
from scipy.stats import beta, binomtest

from . import regions
from .base_classifier import check_per_example, checked_logits, eval_mode
from .names import ABSTAIN, NORM_OF
from .noise import GAUSSIAN, check_noise, check_rotation, scale_noise, standard_noise
from .stages import CERTIFY, timed
from .validation import (
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
#: activations leave the caches), the 8x8 models 1.0-1.4x; counts are the same, because the draws do not
#: depend on the batch size (`noise.standard_noise`: torch's normal_ transforms blocks of 16 numbers, so
#: batches of b * d numbers, a multiple of 16, concatenate to one draw). A multiple of 16, so that this holds
#: for any input size d, except where the last batch holds fewer than 16 numbers (d * remainder < 16); for
#: images, d (64, 784, 3,072, 150,528) is itself a multiple of 16 and every batch size gives the same draws.
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
    # dtype kind i/u/f only: a complex k used to reach np.floor and fail with numpy's ufunc message
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


class Smooth:
    """A smoothed classifier g(x) = E_eps[f(x + eps)] estimated by Monte Carlo.

    model: maps a batch (b, *input_shape) in [0, 1] pixel space to logits (b, num_classes); it is run in
    evaluation mode (its training flags restored afterwards) and non-finite logits raise ValueError, as does
    a first forward pass that fails (a model that cannot take inputs of shape (b, *input_shape)).
    noise: "gaussian" (certifies l2 / lΣ2) or "uniform" (certifies l1 / lΛ1).
    seed: an int in [0, 2**64) for the Smooth's own generator.
    x (in sample_counts / predict / certify): a real floating-point tensor of shape input_shape, finite.
    theta: a finite scalar > 0 or a tensor of shape input_shape, finite and > 0 also in float32 (the noise's
    precision: values that overflow to inf or underflow to 0 there are refused).
    """

    def __init__(self, model: torch.nn.Module, num_classes: int, input_shape: tuple[int, ...],
                 noise: str = GAUSSIAN, batch_size: int = BATCH_SIZE, seed: int = 0,
                 device: str | torch.device = "cpu") -> None:
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
        self.noise = check_noise(noise)
        self.norm = NORM_OF[self.noise]
        self.batch_size = check_count(batch_size, "batch_size")
        try:
            self.device = torch.device(device)
        except (RuntimeError, TypeError) as e:  # torch's own message listed every device type it knows
            raise ValueError(f"device must be a torch device such as 'cpu' or 'cuda', got {device!r}") from e
        if self.device.type == "cuda" and not torch.cuda.is_available():
            # the first tensor on it used to raise the driver's own error, far from the cause
            raise ValueError(f"device = {str(device)!r}, but torch finds no usable CUDA device here "
                             "(torch.cuda.is_available() is False); use device='cpu'")
        seed = check_count(seed, "seed", 0)
        if seed >= 2 ** 64:  # torch.Generator.manual_seed's own error was numpy-like ("Overflow when unpacking")
            raise ValueError(f"seed must be an integer in [0, 2**64) (a torch generator seed), got {seed}")
        self.generator = torch.Generator(device=self.device).manual_seed(seed)

    # -- checks ---------------------------------------------------------------------------------
    def _check_x(self, x: torch.Tensor) -> torch.Tensor:
        try:
            t = check_finite_tensor(x, "x", self.input_shape)
        except (TypeError, RuntimeError) as e:  # torch.as_tensor's "Could not infer dtype of NoneType"
            raise ValueError(f"x must be a real floating-point tensor of shape {self.input_shape}, got "
                             f"{type(x).__name__} {str(x)[:40]!r}") from e
        if not t.is_floating_point():
            # an integer image (0..255) used to be cast and certified as if its values were [0, 1] pixels, and a
            # complex one lost its imaginary part
            raise ValueError(f"x must be a real floating-point tensor (pixels in [0, 1]), got dtype {t.dtype}")
        return t.to(self.device, torch.float32)

    def _check_theta(self, theta: float | torch.Tensor) -> torch.Tensor:
        name = "sigma" if self.noise == GAUSSIAN else "lambda"
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

    # -- sampling -------------------------------------------------------------------------------
    @torch.no_grad()
    def sample_counts(self, x: torch.Tensor, theta: float | torch.Tensor, num: int,
                      rotation: torch.Tensor | None = None,
                      generator: torch.Generator | None = None) -> np.ndarray:
        """Class counts of f(x + eps) over `num` noise draws, eps = U (theta * z) (vectorized in batches)."""
        x = self._check_x(x)
        th = self._check_theta(theta)
        num = check_count(num, "num")
        try:
            rot = check_rotation(rotation, self.dim)
        except (TypeError, RuntimeError) as e:  # torch.as_tensor's "new(): invalid data type 'str'"
            raise ValueError(f"rotation must be None or a ({self.dim}, {self.dim}) orthogonal matrix (a tensor), "
                             f"got {type(rotation).__name__} {str(rotation)[:40]!r}") from e
        gen = self.generator if generator is None else generator
        counts = torch.zeros(self.num_classes, dtype=torch.long, device=self.device)
        buffer = torch.empty((min(self.batch_size, num), *self.input_shape), device=self.device)
        remaining = num
        with eval_mode(self.model):  # f is a fixed function: no dropout, BatchNorm statistics untouched
            while remaining > 0:
                b = min(self.batch_size, remaining)
                eps = standard_noise(self.noise, b, self.input_shape, gen, out=buffer[:b])
                # scale and shift in place (no gradients here): x + theta * z, or x + U (theta * z)
                eps = eps.mul_(th) if rot is None else scale_noise(eps, th, rot, validate=False)
                try:
                    logits = checked_logits(self.model, eps.add_(x), self.num_classes)
                except RuntimeError as e:
                    # the first forward pass of this Smooth: a model that cannot take (b, *input_shape) used
                    # to raise torch's own "mat1 and mat2 shapes cannot be multiplied"; later failures (and
                    # running out of memory) are the model's own and pass through
                    if self._per_example_checked or isinstance(e, torch.cuda.OutOfMemoryError):
                        raise
                    raise ValueError(f"model must take a batch of shape (b, *input_shape) = {tuple(eps.shape)} "
                                     f"(input_shape = {self.input_shape}) and return logits, but its first "
                                     f"forward pass failed: {type(e).__name__}: {e}") from e
                if not self._per_example_checked:  # once per Smooth: f must not depend on the batch
                    check_per_example(self.model, eps, logits)
                    self._per_example_checked = True
                counts += torch.bincount(logits.argmax(dim=1), minlength=self.num_classes)
                remaining -= b
        return counts.cpu().numpy()

    # -- Cohen et al.'s PREDICT and CERTIFY -----------------------------------------------------------
    def predict(self, x: torch.Tensor, theta: float | torch.Tensor, n: int, alpha: float,
                rotation: torch.Tensor | None = None, generator: torch.Generator | None = None) -> int:
        """PREDICT: the top class if a two-sided binomial test of its count against the runner-up's
        rejects equality at level alpha, else ABSTAIN."""
        n = check_count(n, "n")
        alpha = _check_alpha(alpha)
        counts = self.sample_counts(x, theta, n, rotation, generator)
        top2 = np.argsort(counts)[::-1][:2]
        na, nb = int(counts[top2[0]]), int(counts[top2[1]])
        if binomtest(na, na + nb, 0.5).pvalue > alpha:
            return ABSTAIN
        return int(top2[0])

    @timed(CERTIFY)
    def certify(self, x: torch.Tensor, theta: float | torch.Tensor, n0: int, n: int, alpha: float,
                rotation: torch.Tensor | None = None, generator: torch.Generator | None = None) -> Certificate:
        """CERTIFY: n0 samples select the class, n fresh samples bound pA from below at level alpha,
        and the gap follows from Corollary 1 (Gaussian) or Corollary 2 (uniform). Abstains when the
        bound is <= 1/2."""
        n0 = check_count(n0, "n0")
        n = check_count(n, "n")
        alpha = _check_alpha(alpha)
        th = self._check_theta(theta)
        c_hat = int(np.argmax(self.sample_counts(x, th, n0, rotation, generator)))
        count = int(self.sample_counts(x, th, n, rotation, generator)[c_hat])
        p_lower = float(lower_confidence_bound(count, n, alpha))
        # the rotation was checked by sample_counts (check_rotation): no second O(d^3) orthogonality test
        return _certificate_from_bound(c_hat, p_lower, th.detach().cpu().numpy().reshape(-1), self.norm,
                                       count=count, n=n,
                                       rotation=None if rotation is None else np.asarray(rotation, np.float64))


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
                            check_rot: bool = False) -> Certificate:
    """`certificate_from_bound`; the rotation is checked only with check_rot (Smooth.certify has checked it)."""
    # A NaN bound used to pass `p_lower <= 0.5` as False and yield a non-abstaining certificate with gap 0;
    # a string ('0.9') was parsed by float(), None or an array failed with float()'s own message
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
    gap = float(regions.gap_from_lower_bound(p_lower, norm))
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
        # a wrong-size, NaN, singular or non-orthogonal rotation used to give a NaN/inf/meaningless l1 radius
        # (and was ignored unchecked for l2)
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
