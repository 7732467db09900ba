"""UCAN (seed 003) §4, App. E-F: the three noise parameter generators (NPGs), training a classifier jointly with
its NPG, UCAN's certification (Algorithm 1) for every row of Table 1, and the soundness audit of input-dependent
noise.

An NPG maps a batch of inputs x to per-dimension scale multipliers σ > 0 and mean offsets μ, both of x's shape;
the smoothing noise is ε' = λ σ ⊙ ε + μ with ε from an isotropic family at unit scale (Eq. 2). Theorem 3.2
certifies {δ : ||δ ⊘ σ||_p <= R(p_A'; λ)} = {δ : ||δ ⊘ θ||_p <= R(p_A'; 1)} with θ = λ σ, because every radius
of Table 1 is linear in λ. We work with θ: the ℓp radius (Corollary 3.3) is min θ · R1 and the ALM (Eq. 23) is
geomean(θ) · R1, with R1 = R(p_A'; λ = 1). For Gaussian noise these are ANCER's radius and proxy radius.

Details UCAN leaves open, chosen here (and stated in notebook 07):
- σ = γ · sigmoid(h) for the trained NPGs, positive and below γ (the printed output γ tanh(h) can be negative,
  while Theorem 3.2 needs σ_i > 0), with the last bias set so that σ starts at min(1, γ/2) (isotropic noise
  when γ >= 2); μ = tanh(h') (pixel units, as x lies in [0, 1]), starting at 0.
- Universal NPG (§4.2): two fixed-input MLP generators (one for σ, one for μ), each of 5 linear layers with
  LeakyReLU(0.2) after the first 4 (the GAN generator the paper adapts), input the constant 1.
- Input-dependent NPG (§4.3, App. E): two dense blocks of 4 3x3 convolutions with LeakyReLU(0.2), each conv fed
  the concatenation of all earlier feature maps, then a 3x3 conv to the image's channels; μ = G_μ(x),
  σ = G_σ(x + μ) (cascaded, Figure 2b).
- Training (§4.2 loss): cross-entropy of the classifier on x + ε' minus `variance_weight` · mean(σ) (the paper's
  weight is 1), classifier by SGD as `train.train_classifier`, the NPG by Adam.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..core import devices
from ..core.base_classifier import eval_mode, fixed_weights
from ..core.certify import (
    ABSTAIN,
    BATCH_SIZE,
    CPU,
    PIXEL_DOMAIN,
    Smooth,
    lower_confidence_bound,
    resolve_draws,
    soft_smoothed_probabilities,
)
from ..core.families import ANCER_NOISES, power_law_exponent
from ..core.names import NORMS
from ..core.parameters import SmoothingParameters
from ..core.precision import EXACT, check_precision, forward_precision
from ..core.regions import CertifiedRegion, as_vector
from ..core.stages import CERTIFY, TRAINING, timed
from ..core.ucan_noise import anisotropic_noise, check_noise_maps, sample_standard
from ..core.ucan_radii import GAUSSIAN, NOISES, POWER_LAW_LINF, TABLE1, isotropic_radius, table1_row
from ..core.validation import (
    check_choice,
    check_class_index,
    check_count,
    check_finite_tensor,
    check_labels,
    check_nonnegative,
    check_path,
    check_positive,
    check_probabilities,
    check_probability,
    check_scale,
    check_shape,
)
from ..models.train import STATE_FILE, load_training_state, minibatches, save_training_state, sgd_setup, tensors_sha256

PATTERN_NORMS = {"l1": 1.0, "l2": 2.0, "linf": math.inf}
#: the soundness search stays within a relative 1e-4 of the certified boundary, so its points are inside in float32
INSIDE_MARGIN = 1e-4
#: `row_radii` refuses min_theta > exp(log_gm_theta) beyond this relative rounding slack (equal θ_i give equality)
THETA_TOLERANCE = 1e-6
#: the kinds of noise parameter generator (NPG): isotropic (σ = 1, μ = 0: Cohen et al.'s noise), pattern-fixed (§4.1),
#: universal (§4.2) and input-dependent (§4.3)
ISOTROPIC_NPG, PATTERN_NPG, UNIVERSAL_NPG, INPUT_NPG = "isotropic", "pattern", "universal", "input"
NPG_KINDS = (ISOTROPIC_NPG, PATTERN_NPG, UNIVERSAL_NPG, INPUT_NPG)


# --------------------------------------------------------------------------------------------------
# pattern-fixed NPG (§4.1, Eq. 5)
# --------------------------------------------------------------------------------------------------


def pattern_sigma(shape: tuple[int, ...], p: str, kappa: float = 1.0, iota: float = 1.0) -> np.ndarray:
    """UCAN Eq. 5: the pattern-fixed σ(a, b) = κ ||(a, b)||_p² + ι over the pixel grid, with geometric mean 1.

    (a, b) is the pixel's offset from the image centre in pixels (the centre of an even-sized image lies between
    pixels); σ is the same on every channel, then rescaled so that the geometric mean is 1 (§5.1: "(∏σ_i)^(1/d) = 1.0").

    Parameters
    ----------
    shape : tuple of int
        (channels, height, width), three ints >= 1 (a tuple or list).
    p : str
        The norm of the offset, one of PATTERN_NORMS ("l1", "l2", "linf").
    kappa : float
        κ, finite and > 0.
    iota : float
        ι, finite and > 0.

    Returns
    -------
    numpy.ndarray of float64, shape (channels, height, width)
        σ, > 0, with geometric mean 1.

    Raises
    ------
    ValueError
        Naming the argument that is out of range.
    """
    check_choice(p, "p", list(PATTERN_NORMS))
    check_positive(kappa, "kappa")
    check_positive(iota, "iota")
    if len(check_shape(shape, "shape")) != 3:
        raise ValueError(f"shape must be (channels, height, width), got {tuple(shape)!r}")
    c, h, w = (int(s) for s in shape)
    b, a = np.meshgrid(np.arange(h) - (h - 1) / 2.0, np.arange(w) - (w - 1) / 2.0, indexing="ij")
    pv = PATTERN_NORMS[p]
    dist = np.maximum(np.abs(a), np.abs(b)) if math.isinf(pv) else (np.abs(a) ** pv + np.abs(b) ** pv) ** (1 / pv)
    sigma = kappa * dist ** 2 + iota
    sigma = sigma / math.exp(float(np.log(sigma).mean()))
    return np.broadcast_to(sigma, (c, h, w)).astype(np.float64).copy()


# --------------------------------------------------------------------------------------------------
# NPG modules: forward(x) -> (sigma, mu), each of x's shape
# --------------------------------------------------------------------------------------------------


class FixedNPG(nn.Module):
    """A constant σ map and μ = 0: isotropic noise (σ = 1) or the pattern-fixed NPG (UCAN §4.1).

    No parameters: σ is a float32 buffer, which moves with the module.

    Parameters
    ----------
    sigma : numpy.ndarray or torch.Tensor, shape input_shape
        σ, one number per input dimension: a non-empty array of numbers, finite and > 0 (as float32).

    Raises
    ------
    ValueError
        When sigma is not an array of numbers, is empty, or is not finite and > 0 in every dimension.
    """

    def __init__(self, sigma: np.ndarray | torch.Tensor) -> None:
        super().__init__()
        try:
            if isinstance(sigma, (str, bytes)):
                raise TypeError
            s = torch.as_tensor(np.asarray(sigma, dtype=np.float32))
        except (TypeError, ValueError):
            raise ValueError(f"sigma must be an array of finite numbers > 0, got {type(sigma).__name__} "
                             f"{str(sigma)[:60]!r}") from None
        if s.numel() == 0:
            raise ValueError("sigma must hold at least one value (one per input dimension), got an empty array")
        if not bool(torch.isfinite(s).all()) or not bool((s > 0).all()):
            raise ValueError("sigma must be finite and > 0 in every dimension")
        self.register_buffer("sigma", s)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """σ and μ for a batch.

        Parameters
        ----------
        x : torch.Tensor, shape (B, *input_shape)
            The inputs; only their shape is used.

        Returns
        -------
        sigma : torch.Tensor, shape (B, *input_shape)
            The constant σ, expanded to x's shape.
        mu : torch.Tensor, shape (B, *input_shape)
            Zeros like x.

        Raises
        ------
        ValueError
            When x's shape is not (B, *input_shape).
        """
        if tuple(x.shape[1:]) != tuple(self.sigma.shape):
            raise ValueError(f"x must have shape (batch, {', '.join(map(str, self.sigma.shape))}), "
                             f"got {tuple(x.shape)}")
        s = self.sigma.expand_as(x)
        return s, torch.zeros_like(x)


def _sigma_bias(gamma: float) -> float:
    """The bias b with γ sigmoid(b) = min(1, γ/2): where σ = γ sigmoid(h) starts when h's other terms are 0."""
    start = min(1.0, gamma / 2.0)
    return math.log(start / (gamma - start))


class _FixedInputGenerator(nn.Module):
    """5 linear layers, LeakyReLU(0.2) after the first 4, from the constant 1 to d outputs (UCAN §4.2)."""

    def __init__(self, d: int, widths: tuple[int, ...], bias: float) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        prev = 1
        for w in widths:
            layers += [nn.Linear(prev, w), nn.LeakyReLU(0.2)]
            prev = w
        last = nn.Linear(prev, d)
        nn.init.normal_(last.weight, std=1e-3)  # start from a (nearly) constant map
        nn.init.constant_(last.bias, bias)
        self.net = nn.Sequential(*layers, last)

    def forward(self) -> torch.Tensor:
        return self.net(torch.ones(1, 1, device=self.net[0].weight.device))[0]


class UniversalNPG(nn.Module):
    """UCAN §4.2: one σ map and one μ map for the whole dataset, from two fixed-input generators.

    Each generator is 5 linear layers with LeakyReLU(0.2) after the first 4, from the constant 1 to one value h per
    input dimension; σ = γ sigmoid(h) lies between 0 and γ and starts near min(1, γ/2), μ = tanh(h') lies between -1
    and 1 and starts near 0.

    Parameters
    ----------
    input_shape : tuple of int
        The shape of one input, a tuple (or list) of positive ints.
    gamma : float
        γ, the bound on σ, finite and > 0.
    widths : tuple of int
        The 4 hidden layers' widths, 4 positive ints.

    Raises
    ------
    ValueError
        Naming the argument that is out of range.
    """

    def __init__(self, input_shape: tuple[int, ...], gamma: float = 5.0,
                 widths: tuple[int, ...] = (32, 64, 128, 256)) -> None:
        super().__init__()
        self.input_shape = check_shape(input_shape, "input_shape")
        d = math.prod(self.input_shape)
        if len(check_shape(widths, "widths")) != 4:
            raise ValueError(f"widths must give the 4 hidden layers of the 5-layer generator, got {widths!r}")
        self.gamma = check_positive(gamma, "gamma")
        self.g_sigma = _FixedInputGenerator(d, widths, _sigma_bias(self.gamma))
        self.g_mu = _FixedInputGenerator(d, widths, 0.0)

    def maps(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The dataset's σ and μ maps, differentiable in the generators' parameters.

        Returns
        -------
        sigma : torch.Tensor, shape input_shape
            σ = γ sigmoid(h), between 0 and γ.
        mu : torch.Tensor, shape input_shape
            μ = tanh(h'), between -1 and 1.
        """
        sigma = self.gamma * torch.sigmoid(self.g_sigma()).view(self.input_shape)
        return sigma, torch.tanh(self.g_mu()).view(self.input_shape)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """σ and μ for a batch: `maps`, the same for every input.

        Parameters
        ----------
        x : torch.Tensor, shape (B, *input_shape)
            The inputs; only their shape is used.

        Returns
        -------
        sigma : torch.Tensor, shape (B, *input_shape)
            `maps`' σ, expanded to x's shape.
        mu : torch.Tensor, shape (B, *input_shape)
            `maps`' μ, expanded to x's shape.
        """
        sigma, mu = self.maps()
        return sigma.expand_as(x), mu.expand_as(x)


class _DenseBlock(nn.Module):
    """App. E: 4 convolutions with LeakyReLU(0.2), each fed every earlier feature map, then a conv to the output."""

    def __init__(self, channels: int, growth: int, bias: float) -> None:
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(channels + k * growth, growth, 3, padding=1) for k in range(4))
        self.out = nn.Conv2d(channels + 4 * growth, channels, 3, padding=1)
        nn.init.normal_(self.out.weight, std=1e-3)
        nn.init.constant_(self.out.bias, bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        feats = [x]
        for conv in self.convs:
            feats.append(F.leaky_relu(conv(torch.cat(feats, 1)), 0.2))
        return self.out(torch.cat(feats, 1))


class InputDependentNPG(nn.Module):
    """UCAN §4.3: μ = G_μ(x), σ = G_σ(x + μ) (cascaded), two dense-block generators of the same architecture.

    Each generator (App. E) is a dense block of 4 3x3 convolutions with LeakyReLU(0.2), each fed every earlier feature
    map, then a 3x3 convolution to the image's channels; σ = γ sigmoid(·) lies between 0 and γ and starts near
    min(1, γ/2), μ = tanh(·) lies between -1 and 1 and starts near 0.

    Parameters
    ----------
    input_shape : tuple of int
        (channels, height, width), three positive ints.
    gamma : float
        γ, the bound on σ, finite and > 0.
    growth : int
        The channels each convolution of a dense block adds, an integer >= 1.

    Raises
    ------
    ValueError
        Naming the argument that is out of range.
    """

    def __init__(self, input_shape: tuple[int, ...], gamma: float = 1.0, growth: int = 8) -> None:
        super().__init__()
        self.input_shape = check_shape(input_shape, "input_shape")
        if len(self.input_shape) != 3:
            raise ValueError(f"input_shape must be (channels, height, width), got {input_shape!r}")
        self.gamma = check_positive(gamma, "gamma")
        c = self.input_shape[0]
        self.g_mu = _DenseBlock(c, check_count(growth, "growth"), 0.0)
        self.g_sigma = _DenseBlock(c, growth, _sigma_bias(self.gamma))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """μ(x) and σ(x + μ(x)) for a batch of images.

        Parameters
        ----------
        x : torch.Tensor, shape (B, channels, H, W)
            The images (the convolutions keep H and W).

        Returns
        -------
        sigma : torch.Tensor, shape (B, channels, H, W)
            σ = γ sigmoid(G_σ(x + μ)), between 0 and γ.
        mu : torch.Tensor, shape (B, channels, H, W)
            μ = tanh(G_μ(x)), between -1 and 1.
        """
        mu = torch.tanh(self.g_mu(x))
        return self.gamma * torch.sigmoid(self.g_sigma(x + mu)), mu


def build_npg(kind: str, input_shape: tuple[int, ...], gamma: float | None = None, pattern: str = "l2",
              kappa: float = 1.0, growth: int = 8) -> nn.Module:
    """An NPG of one of the kinds NPG_KINDS (UCAN §4.1-4.3), with the paper's defaults.

    Parameters
    ----------
    kind : str
        One of NPG_KINDS: "isotropic" (σ = 1, μ = 0: Cohen et al.), "pattern" (Eq. 5 with ι = 1 and `kappa`),
        "universal" (§4.2) or "input" (input-dependent, §4.3).
    input_shape : tuple of int
        The shape of one input, a tuple (or list) of positive ints; (channels, height, width) for "pattern" and
        "input".
    gamma : float or None
        γ for "universal" and "input", finite and > 0; None: the paper's, 5 for "universal" (its value for MNIST and
        CIFAR-10) and 1 for "input". Ignored by the other kinds.
    pattern : str
        For "pattern": the norm of Eq. 5, one of PATTERN_NORMS ("l1", "l2", "linf"); ignored by the other kinds.
    kappa : float
        For "pattern": κ of Eq. 5, finite and > 0; ignored by the other kinds.
    growth : int
        For "input": the channels per convolution, an integer >= 1; ignored by the other kinds.

    Returns
    -------
    torch.nn.Module
        The NPG x -> (σ, μ): a FixedNPG ("isotropic", "pattern"), a UniversalNPG or an InputDependentNPG.

    Raises
    ------
    ValueError
        Naming the argument that is out of range.
    """
    check_choice(kind, "kind", NPG_KINDS)
    check_shape(input_shape, "input_shape")
    if kind == ISOTROPIC_NPG:
        return FixedNPG(np.ones(input_shape))
    if kind == PATTERN_NPG:
        check_choice(pattern, "pattern", list(PATTERN_NORMS))
        return FixedNPG(pattern_sigma(input_shape, pattern, kappa=kappa))
    if kind == UNIVERSAL_NPG:
        return UniversalNPG(input_shape, gamma=5.0 if gamma is None else gamma)
    return InputDependentNPG(input_shape, gamma=1.0 if gamma is None else gamma, growth=growth)


def _place(model: nn.Module, npg: nn.Module, device: str | torch.device | None) -> torch.device | None:
    """Move the classifier to `device` (None: leave it where it is) and the NPG beside it; return that device (None
    for a classifier that is no nn.Module, which the callers' own checks then name)."""
    if not isinstance(model, nn.Module):
        return None if device is None else devices.resolve(device)
    dev = devices.place(model, device)
    if isinstance(npg, nn.Module):
        devices.place(npg, dev)
    return dev


# --------------------------------------------------------------------------------------------------
# training (§4.2 loss), jointly for classifier and NPG
# --------------------------------------------------------------------------------------------------


@timed(TRAINING)
def train_ucan(model: nn.Module, npg: nn.Module, x: torch.Tensor, y: torch.Tensor, noise: str = GAUSSIAN,
               lam: float = 0.25, epochs: int = 30, batch_size: int = 128, lr: float = 1e-2, npg_lr: float = 1e-3,
               variance_weight: float = 1.0, a: float | None = None, seed: int = 0,
               device: str | torch.device | None = None, *, precision: str = EXACT,
               state_dir: str | Path | None = None,
               progress: Callable[[int, int], None] | None = None) -> tuple[nn.Module, nn.Module]:
    """UCAN §4.2's loss, minimised jointly over the classifier and its NPG; seeded, returns both in eval mode.

    L = CE(f(x + λ σ ⊙ ε + μ), y) - variance_weight · mean_i σ_i is minimised over the classifier (SGD, momentum 0.9,
    weight decay 5e-4, cosine schedule, as `train.train_classifier`) and the NPG (Adam), with fresh noise every
    batch. With a FixedNPG (no trainable parameters) this is plain noise-augmented training. The batch order and the
    noise are drawn on the CPU from the seeded generator whatever the device, and each batch is copied to the device,
    so they are the same on every device. The classifier's forward and backward passes run in `precision`; the NPG's
    σ and μ stay in float32.

    With `state_dir` the run resumes as `train.train_classifier`'s does: after each epoch the classifier, the NPG,
    both optimizers, the schedule and the generators are written to `state_dir/state.pt`
    (`train.save_training_state`), and a call that finds that file resumes after its last finished epoch, so that a
    run killed and started again ends with the models of an uninterrupted run bit for bit (on the same device; a
    state of other settings is refused, naming them).

    Parameters
    ----------
    model : torch.nn.Module
        The classifier f, trained in place: a batch (B, *input_shape) -> logits (B, num_classes).
    npg : torch.nn.Module
        The NPG, x -> (σ, μ) each of x's shape; its trainable parameters, if any, are trained in place.
    x : torch.Tensor, shape (N, *input_shape)
        The training inputs, finite.
    y : torch.Tensor, shape (N,)
        A 1-D integer tensor of class labels >= 0, below the model's number of outputs (compared at the first batch,
        once the model's output is known).
    noise : str
        The family of ε, one of `ucan_radii.NOISES`.
    lam : float
        λ, finite and > 0.
    epochs : int
        The number of passes over the data, an integer >= 1 (as `train.sgd_setup`).
    batch_size : int
        An integer >= 1 (as `train.sgd_setup`).
    lr : float
        The classifier's initial learning rate, > 0 (as `train.sgd_setup`).
    npg_lr : float
        The NPG's Adam learning rate, finite and > 0 (checked only when the NPG has trainable parameters).
    variance_weight : float
        The weight of mean_i σ_i in the loss, finite and >= 0 (the paper's is 1).
    a : float or None
        The power-law exponent (`families.power_law_exponent`; None: d + `families.POWER_LAW_TAIL`); ignored by the
        other families.
    seed : int
        The seed of the batch order, the noise and torch's global generator (as `train.sgd_setup`).
    device : str or torch.device, optional
        Where the classifier and the NPG train (`devices.resolve`: "auto", "cpu" or a CUDA device; None: where the
        classifier is); both are moved there before their optimizers are made.
    precision : str
        The classifier's arithmetic (`precision.PRECISIONS`): "exact" (float32, TF32 off), "tf32" or "bf16".
    state_dir : str or os.PathLike or None
        The folder of the resumable state; None: not resumable.
    progress : callable or None
        Called as progress(epochs_done, epochs) after each epoch (and once at the start of a resumed run).

    Returns
    -------
    model : torch.nn.Module
        The trained classifier, in eval mode.
    npg : torch.nn.Module
        The trained NPG, in eval mode.

    Raises
    ------
    TypeError
        When model or npg is not a torch.nn.Module.
    ValueError
        Naming the argument that is out of range (x and y must also have the same length).
    """
    check_positive(lam, "lam")
    check_nonnegative(variance_weight, "variance_weight")
    if not isinstance(npg, nn.Module):
        raise TypeError(f"npg must be an nn.Module (a noise parameter generator x -> (sigma, mu)), "
                        f"got {type(npg).__name__}")
    check_labels(y, "y")
    check_precision(precision)
    if state_dir is not None:
        check_path(state_dir, "state_dir")
    dev = _place(model, npg, device)
    first = True
    gen, opt, sched = sgd_setup(model, x, y, epochs, batch_size, lr, seed=seed)
    npg_params = [p for p in npg.parameters() if p.requires_grad]
    npg_opt = torch.optim.Adam(npg_params, lr=check_positive(npg_lr, "npg_lr")) if npg_params else None
    shape = tuple(x.shape[1:])
    start = 0
    if state_dir is not None:
        settings = {"loss": "UCAN §4.2", "npg": type(npg).__name__, "noise": noise, "lam": float(lam),
                    "epochs": epochs, "batch_size": batch_size, "lr": float(lr), "npg_lr": float(npg_lr),
                    "variance_weight": float(variance_weight), "a": None if a is None else float(a), "seed": seed,
                    "precision": precision, "data_sha256": tensors_sha256(x, y)}
        parts = {"npg": npg} | ({"npg_optimizer": npg_opt} if npg_opt is not None else {})
        path = Path(state_dir) / STATE_FILE
        start = load_training_state(path, model, opt, sched, gen, settings, parts) if path.exists() else 0
        if start and progress is not None:
            progress(start, epochs)
    model.train()
    npg.train()
    for epoch in range(start, epochs):
        for xb, yb in minibatches(x, y, 1, batch_size, gen):
            xb, yb = xb.to(dev), yb.to(dev)
            sigma, mu = npg(xb)
            eps = sample_standard(noise, len(xb), shape, gen, a=a).to(dev)  # drawn on the CPU (the generator's)
            with forward_precision(precision, dev):
                logits = model(xb + anisotropic_noise(eps, lam, sigma, mu))  # lam checked above, σ and μ an NPG's
                if first:  # once: the labels against the model's number of outputs
                    if logits.ndim == 2:
                        check_labels(y, "y", logits.shape[1])
                    first = False
                loss = F.cross_entropy(logits.float(), yb)
            if npg_opt is not None:
                loss = loss - variance_weight * sigma.mean()
                npg_opt.zero_grad()
            opt.zero_grad()
            with forward_precision(precision, dev):  # the backward pass in the same arithmetic
                loss.backward()
            opt.step()
            sched.step()
            if npg_opt is not None:
                npg_opt.step()
        if state_dir is not None:
            save_training_state(path, epoch + 1, model, opt, sched, gen, settings, parts)
        if progress is not None:
            progress(epoch + 1, epochs)
    return model.eval(), npg.eval()


# --------------------------------------------------------------------------------------------------
# certification (UCAN Algorithm 1; Cohen et al.'s CERTIFY with the anisotropic noise)
# --------------------------------------------------------------------------------------------------


def sample_counts(model: nn.Module, x: torch.Tensor, sigma: torch.Tensor, mu: torch.Tensor, noise: str, lam: float,
                  num: int, num_classes: int, generator: torch.Generator, batch_size: int = BATCH_SIZE,
                  a: float | None = None, device: str | torch.device | None = None, *,
                  precision: str = EXACT, domain: tuple[float, float] | None = PIXEL_DOMAIN) -> np.ndarray:
    """Class counts of f(x + λ σ ⊙ ε + μ) over `num` draws of the unit-scale noise (UCAN Eq. 2; Cohen et al.'s
    SAMPLEUNDERNOISE), counted by the package's one sampling loop (`certify.Smooth.vote_counts`, θ = λ σ and mean μ
    as one `SmoothingParameters`).

    Parameters
    ----------
    model : nn.Module
        The base classifier f.
    x : torch.Tensor
        The input, finite.
    sigma : torch.Tensor
        σ, finite and >= 0, of x's shape (or broadcastable to it).
    mu : torch.Tensor or None
        μ, finite, of x's shape (or broadcastable to it); None for 0.
    noise : str
        One of `ucan_radii.NOISES`.
    lam : float
        λ, finite and > 0.
    num : int
        The number of draws, >= 1.
    num_classes : int
        The model's number of classes, >= 2.
    generator : torch.Generator or None
        The draws' source (None: torch's global one).
    batch_size : int
        Draws per forward batch, >= 1.
    a : float, optional
        The power-law exponent (`families.power_law_exponent`).
    device : str or torch.device, optional
        Where the model classifies the draws (as `smoothed_classifier`'s); x, sigma and mu are copied there, the
        draws are made on the CPU.
    precision : str
        The forward passes' arithmetic, one of `precision.PRECISIONS` ("exact", "tf32", "bf16").
    domain : tuple of (float, float) or None
        The interval x's values must lie in (`certify.Smooth`'s: [0, 1] pixels by default; None: any finite x).

    Returns
    -------
    numpy.ndarray of int64, shape (num_classes,)
        The votes for each class.
    """
    num = check_count(num, "num")
    check_count(batch_size, "batch_size")
    check_noise_maps(lam, sigma, mu, (1, *x.shape))
    smooth = smoothed_classifier(model, num_classes, x, noise, batch_size, a, device, precision=precision,
                                 domain=domain)
    x, sigma, mu = (_to(t, smooth.device) for t in (x, sigma, mu))
    full = (1, *x.shape)  # σ and μ broadcast to x's shape (check_noise_maps), as one value per pixel
    theta = torch.broadcast_to(lam * torch.as_tensor(sigma), full)[0]
    mean = None if mu is None else torch.broadcast_to(torch.as_tensor(mu), full)[0]
    params = SmoothingParameters.of(theta, x.shape, mean=mean, name="lam * sigma", device=smooth.device, zero_ok=True)
    return smooth.vote_counts(x.unsqueeze(0), params, num, generator=_generator(generator))[0]


def _to(t: object, device: torch.device) -> object:
    """A tensor copied to `device` (itself when it is there); anything else as it is."""
    return t.to(device) if isinstance(t, torch.Tensor) else t


def noise_draws(noise: str, draws: str, device: torch.device | str) -> str:
    """Where UCAN's draws of `noise` are made under the setting `draws` for a model on `device`.

    Parameters
    ----------
    noise : str
        One of `ucan_radii.NOISES`.
    draws : str
        One of `certify.DRAWS`.
    device : torch.device or str
        Where the model runs.

    Returns
    -------
    str
        "cpu" or "device": `certify.resolve_draws`'s for a family the Smooth's own streams draw
        (`families.ANCER_NOISES`), "cpu" for the others (drawn by `ucan_noise.sample_standard`, whatever `draws`
        says: a setting for the families that have device streams).
    """
    resolved = resolve_draws(draws, device)
    return resolved if noise in ANCER_NOISES else CPU


def smoothed_classifier(model: nn.Module, num_classes: int, x: torch.Tensor, noise: str,
                        batch_size: int = BATCH_SIZE, a: float | None = None,
                        device: str | torch.device | None = None, *, precision: str = EXACT,
                        domain: tuple[float, float] | None = PIXEL_DOMAIN, draws: str = CPU) -> Smooth:
    """UCAN's smoothed classifier g'(x) = argmax_c P(f(x + λ σ ⊙ ε + μ) = c) (Eq. 2) as a `certify.Smooth`.

    The Smooth takes inputs of x's shape; its standard noise ε is Table 1's family `noise` at unit scale, and
    θ = λ σ(x) and μ(x) are given per call. A family ANCER also draws (`families.ANCER_NOISES`: the Gaussian) comes
    from the Smooth's own streams, on the CPU (the draws of `ucan_noise.sample_standard`, bit for bit) or, with
    `draws` resolving to "device", on the model's device (`noise.BlockDrawStream`); the others from
    `ucan_noise.sample_standard` (power-law exponent `a`) on the CPU, copied to the device.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier f (as `certify.Smooth`'s model).
    num_classes : int
        The number of classes, >= 2.
    x : torch.Tensor, shape input_shape
        An input; only its shape is used.
    noise : str
        One of `ucan_radii.NOISES`.
    batch_size : int
        Noise draws per forward batch, >= 1.
    a : float or None
        The power-law exponent (`families.power_law_exponent`; None: d + `families.POWER_LAW_TAIL`); ignored by the
        other families.
    device : str or torch.device, optional
        Where the model classifies the draws (`devices.resolve`: "auto", "cpu" or a CUDA device; None: where the model
        is); the model is moved there.
    precision : str
        The forward passes' arithmetic, one of `precision.PRECISIONS` (`certify.Smooth`'s).
    domain : tuple of (float, float) or None
        The interval the inputs' values must lie in (`certify.Smooth`'s; None: any finite input).
    draws : str
        Where the draws are made, one of `certify.DRAWS` ("auto": on CUDA the device, else the CPU); a family without
        device streams is drawn on the CPU whatever it says (`noise_draws`).

    Returns
    -------
    certify.Smooth
        The smoothed classifier over inputs of x's shape.

    Raises
    ------
    ValueError
        When noise is not one of `ucan_radii.NOISES`, or as `certify.Smooth` for the other arguments.
    """
    check_choice(noise, "noise", NOISES)
    shape = tuple(x.shape)
    dev = devices.place(model, device) if isinstance(model, nn.Module) else devices.resolve(device or "cpu")
    if noise in ANCER_NOISES:
        return Smooth(model, num_classes, shape, noise, batch_size, device=dev, precision=precision, domain=domain,
                      draws=draws)
    return Smooth(model, num_classes, shape, noise, batch_size, device=dev,
                  sampler=lambda num, gen: sample_standard(noise, num, shape, gen, a=a), precision=precision,
                  domain=domain, draws=CPU)


def _generator(generator: torch.Generator | None) -> torch.Generator:
    """The generator UCAN's draws come from: torch's global one when None (as `ucan_noise.sample_standard` draws)."""
    return torch.default_generator if generator is None else generator


@dataclass(frozen=True)
class UcanCertificate:
    """UCAN Algorithm 1's output for one input.

    Attributes
    ----------
    prediction : int
        The selected class ĉ_A, or ABSTAIN (-1) when p_A' <= 1/2.
    p_lower : float
        p_A', the Clopper-Pearson lower bound on the probability of ĉ_A.
    count : int
        The votes for ĉ_A among the n draws.
    n : int
        The number of draws behind the bound.
    min_theta : float
        The minimum of θ = λ σ(x), the scales the certificate scales by.
    log_gm_theta : float
        The log geometric mean of θ (-inf where some θ_i is 0).
    noise : str or None
        The Table 1 family it was certified with (`certify` records it); None when not recorded.
    """
    prediction: int
    p_lower: float
    count: int
    n: int
    min_theta: float
    log_gm_theta: float
    noise: str | None = None  # the Table 1 family it was certified with (`certify` records it)

    def region(self, center: np.ndarray | torch.Tensor, theta: np.ndarray | torch.Tensor, row: str,
               a: float | None = None) -> CertifiedRegion:
        """The region this certificate states for Table 1 row `row` (UCAN Theorem 3.2).

        The region is {x + δ : ||δ ⊘ θ||_p <= R1}, with θ = λ σ(x) the scales the certificate was computed with and
        R1 = R(p_A'; λ = 1) the row's radius, as a `regions.CertifiedRegion` with gap R1, whose radius is the ℓp radius
        min θ · R1 (Corollary 3.3) and whose proxy radius is the ALM geomean(θ) · R1 (Eq. 23) that `row_radii` gives. An
        abstaining certificate gives the region with gap 0 and prediction ABSTAIN.

        Parameters
        ----------
        center : numpy.ndarray or torch.Tensor, shape input_shape
            The certified input x, finite; any shape holding its n values.
        theta : numpy.ndarray or torch.Tensor, shape input_shape
            θ = λ σ(x), n values in center's order, finite and > 0 everywhere (a pixel without noise has no region of
            positive volume); its minimum and log geometric mean must be the certificate's (relative tolerance 1e-6).
        row : str
            A Table 1 key certifying ℓ1 or ℓ2 (a CertifiedRegion is an ℓ1 or ℓ2 region, ANCER §4-5; the ℓ∞ rows'
            certificates are `ucan_radii.anisotropic_certificate`), of the noise the certificate was computed with when
            it records one.
        a : float or None
            The power-law exponent (`families.power_law_exponent`; None: n + `families.POWER_LAW_TAIL`); used by the
            power-law row only.

        Returns
        -------
        regions.CertifiedRegion
            The region centred at x with scales θ, gap R1, the row's norm and the certificate's prediction.

        Raises
        ------
        ValueError
            When row is not a Table 1 key, is a row of another noise, or certifies ℓ∞; when theta is not the
            certificate's; or when center or theta is out of range (`regions.CertifiedRegion`).
        """
        r = table1_row(row)
        if self.noise is not None and r.noise != self.noise:
            raise ValueError(f"row must be a Table 1 row of the noise this certificate was computed with "
                             f"({self.noise!r}), got {row!r} (noise {r.noise!r})")
        if r.norm not in NORMS:
            raise ValueError(f"row must certify one of {list(NORMS)} for a CertifiedRegion, got {row!r} ({r.norm}); "
                             "use ucan_radii.anisotropic_certificate for its certificate")
        c, th = as_vector(center), as_vector(theta)
        if th.size and np.isfinite(th).all() and (th > 0).all() and not (
                math.isclose(float(th.min()), self.min_theta, rel_tol=1e-6)
                and math.isclose(float(np.log(th).mean()), self.log_gm_theta, rel_tol=1e-6, abs_tol=1e-9)):
            raise ValueError(f"theta must be the θ = λ σ(x) this certificate was computed with (min "
                             f"{self.min_theta:g}, log geometric mean {self.log_gm_theta:g}), got min "
                             f"{float(th.min()):g}, log geometric mean {float(np.log(th).mean()):g}")
        if self.prediction == ABSTAIN:
            return CertifiedRegion(c, th, 0.0, r.norm, ABSTAIN)
        if r.noise == POWER_LAW_LINF:
            a = power_law_exponent(c.size, a)
        gap = float(isotropic_radius(row, self.p_lower, 1.0, d=c.size, a=a))
        return CertifiedRegion(c, th, gap, r.norm, self.prediction)


def npg_maps(npg: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """σ(x) and μ(x) of one input x, without gradients, with the NPG in evaluation mode.

    Computed where the NPG is (`devices.model_device`; x is copied there), and returned there.

    Parameters
    ----------
    npg : torch.nn.Module
        A callable NPG x -> (σ, μ) (an nn.Module).
    x : torch.Tensor, shape input_shape
        One input, without a batch axis.

    Returns
    -------
    sigma : torch.Tensor, shape input_shape
        σ(x).
    mu : torch.Tensor, shape input_shape
        μ(x).

    Raises
    ------
    TypeError
        When npg is not callable.
    """
    if not callable(npg):
        raise TypeError(f"npg must be a noise parameter generator (an nn.Module x -> (sigma, mu)), "
                        f"got {type(npg).__name__}")
    if isinstance(npg, nn.Module) and isinstance(x, torch.Tensor):
        x = x.to(devices.model_device(npg))
    with torch.no_grad(), eval_mode(npg):
        sigma, mu = npg(x.unsqueeze(0))
    return sigma[0], mu[0]


def _checked_maps(npg: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`npg_maps`, refusing a σ(x) < 0 or a non-finite σ(x) or μ(x) (an NPG gone wrong)."""
    sigma, mu = npg_maps(npg, x)
    if not (bool(torch.isfinite(sigma).all()) and bool((sigma >= 0).all()) and bool(torch.isfinite(mu).all())):
        raise ValueError("the NPG must give a finite σ(x) >= 0 and a finite μ(x) at every pixel of x; got σ in "
                         f"[{float(sigma.min()):g}, {float(sigma.max()):g}]")
    return sigma, mu


@timed(CERTIFY)
def certify(model: nn.Module, npg: nn.Module, x: torch.Tensor, noise: str, lam: float, n0: int, n: int,
            alpha: float, num_classes: int, generator: torch.Generator, batch_size: int = BATCH_SIZE,
            a: float | None = None, device: str | torch.device | None = None, *,
            precision: str = EXACT, domain: tuple[float, float] | None = PIXEL_DOMAIN,
            draws: str = CPU) -> UcanCertificate:
    """UCAN Algorithm 1 (multi-class as Cohen et al.): the certificate of the smoothed classifier g' at x.

    μ, σ come from the NPG at x; n0 draws select ĉ_A, n fresh draws give the Clopper-Pearson lower bound p_A' at level
    alpha (`certify.Smooth.lower_bound`, the two-stage test ANCER's CERTIFY runs, here with θ = λ σ(x), mean μ(x) and
    Table 1's family); ABSTAIN when p_A' <= 1/2. The draws are made where `draws` says (`smoothed_classifier`).

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier f.
    npg : torch.nn.Module
        The NPG x -> (σ, μ); σ(x) must be finite and >= 0 and μ(x) finite.
    x : torch.Tensor, shape input_shape
        The input, finite, with its values in `domain`.
    noise : str
        Table 1's family, one of `ucan_radii.NOISES`.
    lam : float
        λ, finite and > 0.
    n0 : int
        Draws that select the class, >= 1.
    n : int
        Draws that estimate its probability, >= 1.
    alpha : float
        The bound's failure probability, in (0, 1).
    num_classes : int
        The number of classes, >= 2.
    generator : torch.Generator or a pair (select, estimate) of them, or None
        The two stages' draws (`streams.certify_streams`); one generator serves both; None: torch's global one.
    batch_size : int
        Noise draws per forward batch, >= 1.
    a : float or None
        The power-law exponent (`families.power_law_exponent`; None: d + `families.POWER_LAW_TAIL`); ignored by the
        other families.
    device : str or torch.device, optional
        Where the classifier and the NPG run (`devices.resolve`: "auto", "cpu" or a CUDA device; None: where the
        classifier is); both are moved there and x is copied there.
    precision : str
        The forward passes' arithmetic, one of `precision.PRECISIONS` (the certificate is of the classifier evaluated
        in it).
    domain : tuple of (float, float) or None
        The interval x's values must lie in (`certify.Smooth`'s: [0, 1] pixels by default; None: any finite x).
    draws : str
        Where the draws are made, one of `certify.DRAWS` (`smoothed_classifier`'s; "cpu" by default).

    Returns
    -------
    UcanCertificate
        The prediction (ĉ_A, or ABSTAIN), p_A', the votes for ĉ_A of n, the minimum and log geometric mean of
        θ = λ σ(x), and `noise`.

    Raises
    ------
    ValueError
        Naming the argument that is out of range, or when the NPG's σ(x) is not finite and >= 0 or μ(x) not finite.
    """
    check_precision(precision)
    check_probability(alpha, "alpha")
    check_positive(lam, "lam")
    check_finite_tensor(x, "x")  # a NaN pixel is the input's fault, not the model's
    check_count(n0, "n0")
    check_count(n, "n")
    check_count(batch_size, "batch_size")
    dev = _place(model, npg, device)
    x = x.to(dev)
    sigma, mu = _checked_maps(npg, x)
    smooth = smoothed_classifier(model, num_classes, x, noise, batch_size, a, dev, precision=precision,
                                 domain=domain, draws=draws)
    params = SmoothingParameters.of(lam * sigma, x.shape, mean=mu, name="lam * sigma", device=smooth.device,
                                    zero_ok=True)  # θ = λ σ(x) vanishes where σ(x) does
    c_hat, count, p_lower = smooth.lower_bound(x, params, n0, n, alpha, generator=_generator(generator))
    theta = (lam * sigma.double()).reshape(-1)
    return UcanCertificate(c_hat if p_lower > 0.5 else ABSTAIN, p_lower, count, int(n), float(theta.min()),
                           float(torch.log(theta).mean()), noise)


def row_radii(row: str, p_lower: np.ndarray, min_theta: np.ndarray, log_gm_theta: np.ndarray, d: int,
              a: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Table 1 row `row`'s ℓp radius min θ · R1 (Corollary 3.3) and ALM geomean(θ) · R1 (Eq. 23), per input.

    R1 = R(p_A'; λ = 1); both are 0 where p_A' <= 1/2 (abstain).

    Parameters
    ----------
    row : str
        A Table 1 key ("noise/norm", e.g. "gaussian/l2").
    p_lower : numpy.ndarray, shape (m,)
        p_A' per input, in [0, 1]. p_lower, min_theta and log_gm_theta have matching shapes (one entry per input).
    min_theta : numpy.ndarray, shape (m,)
        The minimum of θ = λ σ(x) per input, finite and >= 0, with min_theta <= exp(log_gm_theta) (a minimum cannot
        exceed the geometric mean; relative tolerance THETA_TOLERANCE).
    log_gm_theta : numpy.ndarray, shape (m,)
        The log geometric mean of θ per input, not NaN and below +inf (-inf: a pixel without noise, radius 0).
    d : int
        The input dimension, an integer >= 1; used by the rows whose radius depends on it.
    a : float or None
        The power-law exponent (`families.power_law_exponent`; None: d + `families.POWER_LAW_TAIL`); used by the
        power-law row only.

    Returns
    -------
    radius : numpy.ndarray of float64, shape (m,)
        The ℓp radius min θ · R1.
    alm : numpy.ndarray of float64, shape (m,)
        The ALM geomean(θ) · R1.

    Raises
    ------
    ValueError
        When row is not a Table 1 key, the shapes do not match, or a value is out of range.
    """
    p = check_probabilities(p_lower, "p_lower")
    m, g = np.asarray(min_theta, dtype=np.float64), np.asarray(log_gm_theta, dtype=np.float64)
    try:
        np.broadcast_shapes(p.shape, m.shape, g.shape)
    except ValueError:
        raise ValueError("p_lower, min_theta and log_gm_theta must have matching shapes (one entry per input), got "
                         f"shapes {p.shape}, {m.shape} and {g.shape}") from None
    # θ = λ σ(x) >= 0: a pixel without noise (σ = 0, log geomean -inf) certifies radius 0, which is true
    if not (np.isfinite(m).all() and (m >= 0).all() and not np.isnan(g).any() and (g < np.inf).all()):
        raise ValueError("min_theta must be finite and >= 0 and log_gm_theta below +inf (θ = λ σ(x) >= 0), "
                         f"got min_theta {min_theta!r}, log_gm_theta {log_gm_theta!r}")
    if (m > np.exp(g) * (1.0 + THETA_TOLERANCE)).any():
        raise ValueError("min_theta must be <= exp(log_gm_theta) (the minimum of θ cannot exceed its geometric "
                         f"mean), got min_theta {min_theta!r}, log_gm_theta {log_gm_theta!r}")
    ok = p > 0.5
    r1 = np.zeros_like(p)
    if row.startswith(POWER_LAW_LINF):
        a = power_law_exponent(d, a)
    if ok.any():
        r1[ok] = np.asarray(isotropic_radius(row, p[ok], 1.0, d=d, a=a), dtype=np.float64)
    return m * r1, np.exp(g) * r1


def rows_of(noise: str) -> list[str]:
    """The Table 1 rows (keys) that a noise family certifies.

    Parameters
    ----------
    noise : str
        One of `ucan_radii.NOISES`.

    Returns
    -------
    list of str
        The rows' keys ("noise/norm"), in Table 1's order.

    Raises
    ------
    ValueError
        When noise is not one of `ucan_radii.NOISES`.
    """
    check_choice(noise, "noise", NOISES)
    return [r.key for r in TABLE1 if r.noise == noise]


# --------------------------------------------------------------------------------------------------
# soundness audit (claim C9): search a certified region for a point whose own smoothed prediction differs
# --------------------------------------------------------------------------------------------------


def soft_smoothed_prob(model: nn.Module, npg: nn.Module, x: torch.Tensor, cls: int, noise: str, lam: float,
                       eps: torch.Tensor, *, precision: str = EXACT) -> torch.Tensor:
    """Differentiable Monte Carlo estimate of E[softmax f(x + λ σ(x) ⊙ ε + μ(x))]_cls over the draws `eps`, with
    σ and μ recomputed at x (UCAN's g' at x, Eq. 2), through the one soft smoothed classifier
    (`certify.soft_smoothed_probabilities`). The NPG's maps are made here and checked here
    (`ucan_noise.check_noise_maps`), at every x `search_violation` visits.

    Parameters
    ----------
    model : nn.Module
        The base classifier f (run as the caller left it).
    npg : nn.Module
        The NPG, x -> (σ(x), μ(x)); σ(x) must be finite and >= 0, μ(x) finite.
    x : torch.Tensor
        The input.
    cls : int
        A class index of the model's outputs.
    noise : str
        The family eps was drawn from (one of `ucan_radii.NOISES`).
    lam : float
        λ, finite and > 0.
    eps : torch.Tensor, shape (S, *x.shape)
        Unit-scale draws.
    precision : str
        The classifier's forward passes' arithmetic, one of `precision.PRECISIONS` (checked by the caller,
        `search_violation`); the NPG runs in float32.

    Returns
    -------
    torch.Tensor, shape ()
        The estimated probability of `cls`.
    """
    sigma, mu = npg(x.unsqueeze(0))
    if not isinstance(eps, torch.Tensor):
        raise TypeError(f"eps must be a torch.Tensor of unit-scale draws, got {type(eps).__name__}")
    check_noise_maps(lam, sigma, mu, tuple(eps.shape))
    # the one soft smoothed classifier, at the single input x with θ = λ σ(x) and mean μ(x)
    return soft_smoothed_probabilities(model, x.unsqueeze(0), eps.unsqueeze(0), lam * sigma, None, mu, cls,
                                       fixed=False, precision=precision)[0]


def search_violation(model: nn.Module, npg: nn.Module, x: torch.Tensor, cls: int, theta: torch.Tensor, r1: float,
                     noise: str = GAUSSIAN, lam: float = 0.25, steps: int = 50, samples: int = 64,
                     generator: torch.Generator | None = None,
                     device: str | torch.device | None = None,
                     domain: tuple[float, float] | None = None, *,
                     precision: str = EXACT) -> tuple[torch.Tensor, float]:
    """Search UCAN Theorem 3.2's certified region at x for a point of low soft smoothed probability of `cls`.

    Projected gradient descent on the soft smoothed probability of `cls` over the certified region
    {x + θ ⊙ u : ||u||_2 <= r1} (Theorem 3.2's ellipsoid, θ = λ σ(x) at the certified x), in the whitened coordinates
    u where the projection is exact (onto the radius r1 (1 - INSIDE_MARGIN)). The smoothed classifier at each
    candidate uses its own σ, μ (input-dependent NPG). The classifier and the NPG run in evaluation mode with their
    weights fixed.

    With a `domain` (low, high), e.g. (0, 1) for images in pixel space, the search stays in the region's part inside
    the box, x + δ in [low, high]^n. Each step clips u to the box first, then scales it onto the ball; x itself lies
    in the box, so the box holds u = 0 and both steps (clipping moves every u_i towards 0, scaling moves u towards 0)
    keep the point in both sets. This is a feasible projection, not the Euclidean one onto the intersection: the
    search is a heuristic, and every reported point is inside both.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier f.
    npg : torch.nn.Module
        The NPG x -> (σ, μ), evaluated at every candidate; σ must be finite and >= 0 and μ finite there
        (`soft_smoothed_prob`).
    x : torch.Tensor, shape input_shape
        The certified input.
    cls : int
        A class index >= 0 of the model's outputs.
    theta : float or torch.Tensor, shape input_shape
        θ = λ σ(x) at the certified x, finite and > 0: a scalar or of x's shape.
    r1 : float
        The radius of the ball in u, R1 = R(p_A'; λ = 1), finite and >= 0.
    noise : str
        The family of the draws, one of `ucan_radii.NOISES`.
    lam : float
        λ, finite and > 0.
    steps : int
        The gradient steps, an integer >= 1 (each of length 2.5 r1 / steps in u).
    samples : int
        Noise draws per step, an integer >= 1.
    generator : torch.Generator or None
        The draws' source (None: torch's global generator); the draws are made on the CPU (the generator's device).
    device : str or torch.device, optional
        Where the classifier and the NPG run (`devices.resolve`: "auto", "cpu" or a CUDA device; None: where the
        classifier is); both are moved there, x and theta copied there.
    domain : tuple of (float, float) or None
        The box (low, high), two finite numbers low < high with x inside [low, high]; None: no box.
    precision : str
        The classifier's forward passes' arithmetic, one of `precision.PRECISIONS`.

    Returns
    -------
    delta : torch.Tensor, shape input_shape
        The best perturbation found, δ = θ ⊙ u, on x's device (with a domain, x + δ lies in [low, high]).
    prob : float
        Its soft probability of `cls` (an estimate from `samples` draws: `verify_violation` decides).

    Raises
    ------
    ValueError
        Naming the argument that is out of range.
    """
    check_precision(precision)
    check_count(steps, "steps")
    check_count(samples, "samples")
    check_class_index(cls, "cls")
    check_scale(theta, tuple(x.shape), "theta")
    check_nonnegative(r1, "r1")
    check_positive(lam, "lam")
    if domain is not None:
        low, high = _check_domain(domain, x)
    home = x.device
    dev = _place(model, npg, device)
    x, theta = _to(x, dev), _to(theta, dev)
    u = torch.zeros_like(x)
    if domain is not None:  # the box [low, high] for x + θ ⊙ u, in u's coordinates (θ > 0)
        u_low, u_high = (low - x) / theta, (high - x) / theta
    best, best_p = torch.zeros_like(x), float("inf")
    step = 2.5 * r1 / steps
    r_in = r1 * (1.0 - INSIDE_MARGIN)  # stay strictly inside despite float32 rounding
    with eval_mode(model), eval_mode(npg), fixed_weights(model), fixed_weights(npg):
        for _ in range(steps):
            u.requires_grad_(True)
            eps = sample_standard(noise, samples, tuple(x.shape), generator).to(dev)
            prob = soft_smoothed_prob(model, npg, x + theta * u, cls, noise, lam, eps, precision=precision)
            with forward_precision(precision, dev):  # the backward pass in the same arithmetic
                (grad,) = torch.autograd.grad(prob, u)
            with torch.no_grad():
                if prob.item() < best_p:
                    best_p, best = prob.item(), (theta * u).detach().clone()
                g = grad / grad.norm().clamp_min(1e-12)
                u = u.detach() - step * g
                if domain is not None:
                    u = torch.minimum(torch.maximum(u, u_low), u_high)
                norm = u.norm()
                if norm > r_in:
                    u = u * (r_in / norm)
    if domain is not None:  # x + θ ⊙ u is in the box up to rounding: make x + δ land in it
        best = (x + best).clamp(low, high) - x
    return best.to(home), best_p


def _check_domain(domain: tuple[float, float], x: torch.Tensor) -> tuple[float, float]:
    """`search_violation`'s box: two finite numbers low < high with x inside [low, high]."""
    try:
        low, high = (float(v) for v in domain)
    except (TypeError, ValueError):
        raise ValueError(f"domain must be a pair (low, high) of numbers, got {domain!r}") from None
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"domain must be a pair of finite numbers low < high, got {domain!r}")
    if float(x.min()) < low or float(x.max()) > high:
        raise ValueError(f"domain {domain!r} must contain x (x spans [{float(x.min()):.4g}, {float(x.max()):.4g}])")
    return low, high


def verify_violation(model: nn.Module, npg: nn.Module, x_prime: torch.Tensor, cls: int, noise: str, lam: float,
                     n: int, alpha: float, num_classes: int, generator: torch.Generator,
                     batch_size: int = BATCH_SIZE, device: str | torch.device | None = None, *,
                     precision: str = EXACT) -> dict:
    """Re-estimate UCAN's smoothed classifier at x' with its own σ(x'), μ(x') from n draws.

    The result holds the top class, its count, the Clopper-Pearson lower bound on its probability, and whether the
    violation is established at level alpha (top class != cls with lower bound > 1/2, so cls cannot be g'(x')). The
    draws are made on the CPU; x' need not lie in the pixel box.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier f.
    npg : torch.nn.Module
        The NPG x -> (σ, μ); σ(x') must be finite and >= 0 and μ(x') finite.
    x_prime : torch.Tensor, shape input_shape
        The point x', finite.
    cls : int
        The class to refute, in [0, num_classes).
    noise : str
        Table 1's family, one of `ucan_radii.NOISES`.
    lam : float
        λ, finite and > 0.
    n : int
        The number of draws, an integer >= 1.
    alpha : float
        The bound's failure probability, in (0, 1).
    num_classes : int
        The number of classes, >= 2.
    generator : torch.Generator or None
        The draws' source (None: torch's global generator).
    batch_size : int
        Noise draws per forward batch, an integer >= 1.
    device : str or torch.device, optional
        Where the classifier and the NPG run (as `certify`'s); x' is copied there.
    precision : str
        The forward passes' arithmetic (as `certify`'s).

    Returns
    -------
    dict
        top (int): the top class; top_count (int): its votes; cls_count (int): the votes for cls; n (int): the number
        of draws; p_lower_top (float): the lower bound on the top class's probability; violation (bool): whether the
        violation is established.

    Raises
    ------
    ValueError
        Naming the argument that is out of range, or when the NPG's σ(x') is not finite and >= 0 or μ(x') not finite.
    """
    check_precision(precision)
    check_class_index(cls, "cls", check_count(num_classes, "num_classes"))
    check_count(n, "n")
    check_count(batch_size, "batch_size")
    check_probability(alpha, "alpha")
    check_positive(lam, "lam")
    check_finite_tensor(x_prime, "x_prime")
    dev = _place(model, npg, device)
    x_prime = x_prime.to(dev)
    sigma, mu = _checked_maps(npg, x_prime)
    # x' = x + δ leaves the pixel box where `search_violation` had no domain, and by rounding where it had one
    smooth = smoothed_classifier(model, num_classes, x_prime, noise, batch_size, device=dev, precision=precision,
                                 domain=None)
    params = SmoothingParameters.of(lam * sigma, x_prime.shape, mean=mu, name="lam * sigma", device=smooth.device,
                                    zero_ok=True)
    counts = smooth.vote_counts(x_prime.unsqueeze(0), params, n, generator=_generator(generator))[0]
    top = int(np.argmax(counts))
    p_lower = float(lower_confidence_bound(int(counts[top]), n, alpha))
    return dict(top=top, top_count=int(counts[top]), cls_count=int(counts[cls]), n=int(n), p_lower_top=p_lower,
                violation=bool(top != cls and p_lower > 0.5))
