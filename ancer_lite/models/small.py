"""Base classifiers. Every model maps inputs in [0, 1] pixel space to logits; input normalization
lives inside the model (a `Normalize` first layer), so smoothing noise is always added in pixel space."""
from __future__ import annotations

import math
import numbers
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..core.validation import check_count, check_positive, check_shape


def _finite_real(v: object) -> bool:
    """Whether v is a finite real number (not a bool)."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def _finite_numbers(values: object, length: int | None = None) -> bool:
    """Whether `values` is a sequence (not a str) of finite real numbers, non-empty or of exactly `length`."""
    return (not isinstance(values, (str, bytes)) and hasattr(values, "__len__") and hasattr(values, "__iter__")
            and (len(values) > 0 if length is None else len(values) == length) and all(map(_finite_real, values)))


def _check_numbers(values: Sequence[float], name: str) -> None:
    """A non-empty sequence of finite real numbers (ValueError naming `name` otherwise)."""
    if not _finite_numbers(values):
        raise ValueError(f"{name} must be a non-empty sequence of finite numbers, got {values!r}")


class Normalize(nn.Module):
    """Input normalization (x - mean) / std per channel (dimension 1), or per feature for flat inputs.

    Parameters
    ----------
    mean : sequence of float
        Finite numbers, one per channel (or feature); a single entry applies to every channel.
    std : sequence of float
        Finite numbers > 0, as many as `mean`.
    """

    def __init__(self, mean: Sequence[float], std: Sequence[float]) -> None:
        super().__init__()
        _check_numbers(mean, "mean")
        _check_numbers(std, "std")
        if len(mean) != len(std) or any(s <= 0 for s in std):
            raise ValueError("mean and std must have equal length and std must be > 0")
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The normalized inputs.

        Parameters
        ----------
        x : torch.Tensor, shape (B, C, ...) or (B, F)
            Inputs in [0, 1] pixel space, C (or F) matching `mean` or `mean` of one entry.

        Returns
        -------
        torch.Tensor
            (x - mean) / std, the shape of x.
        """
        shape = (1, -1) + (1,) * (x.ndim - 2)
        return (x - self.mean.view(shape)) / self.std.view(shape)


#: the models' activations: ReLU, or softplus (smooth, so the network has a Hessian everywhere)
ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "softplus": nn.Softplus}


class MLP(nn.Module):
    """A small fully connected classifier for flat or image inputs (flattened after normalization).

    Parameters
    ----------
    input_shape : sequence of int
        One input's shape, positive ints.
    num_classes : int
        The number of logits, an integer >= 2.
    hidden : sequence of int
        The hidden layers' widths, a tuple (or list) of integers >= 1.
    mean, std : sequence of float
        The normalization constants (see `Normalize`).
    activation : str
        One of `ACTIVATIONS`.
    """

    def __init__(self, input_shape: Sequence[int], num_classes: int, hidden: Sequence[int] = (256, 256),
                 mean: Sequence[float] = (0.5,), std: Sequence[float] = (0.25,), activation: str = "relu") -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        check_shape(input_shape, "input_shape")
        check_count(num_classes, "num_classes", 2)
        _check_widths(hidden, "hidden")
        self.input_shape = tuple(input_shape)
        dim = int(math.prod(self.input_shape))
        layers: list[nn.Module] = [Normalize(mean, std), nn.Flatten()]
        for h in hidden:
            layers += [nn.Linear(dim, h), ACTIVATIONS[activation]()]
            dim = h
        layers.append(nn.Linear(dim, num_classes))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of inputs in [0, 1] pixel space.

        Parameters
        ----------
        x : torch.Tensor, shape (B, *input_shape)
            The inputs.

        Returns
        -------
        torch.Tensor, shape (B, num_classes)
            The logits.
        """
        return self.net(x)


def _check_widths(widths: Sequence[int], name: str) -> None:
    """Layer widths: a tuple (or list) of integers >= 1."""
    if not isinstance(widths, (tuple, list)):
        raise ValueError(f"{name} must be a tuple of layer widths (integers >= 1), got {widths!r}")
    for w in widths:
        check_count(w, name)


class ToyClassifier(nn.Module):
    """An analytic 2D two-class base classifier for conceptual figures (blog Figure 2).

    Class 1 lies inside any of the `discs`, outside any of the `exteriors` or beyond any of the `halfplanes`; class 0
    elsewhere (at least one disc, exterior or half-plane must be given). The logits are [0, k * score], where the
    score (a signed distance) is > 0 exactly in class 1's region.

    Parameters
    ----------
    discs : sequence of (centre, radius)
        Discs of class 1: centres of 2 finite coordinates, radii finite and >= 0.
    exteriors : sequence of (centre, radius)
        Discs whose exteriors are class 1: centres of 2 finite coordinates, radii finite and >= 0.
    halfplanes : sequence of (w, b)
        Half-planes w.x >= b of class 1: normals w of 2 finite coordinates, w != 0, offsets b finite.
    sharpness : float
        The logits' scale k, a finite number > 0.
    """

    def __init__(self, discs: Sequence[tuple[Sequence[float], float]] = (),
                 exteriors: Sequence[tuple[Sequence[float], float]] = (),
                 halfplanes: Sequence[tuple[Sequence[float], float]] = (), sharpness: float = 200.0) -> None:
        super().__init__()
        if not discs and not exteriors and not halfplanes:
            raise ValueError("give at least one disc, exterior or half-plane")
        check_positive(sharpness, "sharpness")
        for name, items in (("discs", discs), ("exteriors", exteriors), ("halfplanes", halfplanes)):
            for item in items:
                if not isinstance(item, (tuple, list)) or len(item) != 2:
                    raise ValueError(f"{name} must hold (centre, radius) or (w, b) pairs, got {item!r}")
                c, r = item
                if not _finite_numbers(c, 2):
                    raise ValueError(f"{name} must have 2-D points of 2 finite coordinates, got {c!r}")
                if name == "halfplanes":
                    if c[0] == 0 and c[1] == 0:
                        raise ValueError(f"halfplanes must have a non-zero normal w, got {c!r}")
                    if not _finite_real(r):
                        raise ValueError(f"halfplanes must have a finite offset b, got {r!r}")
                elif not (_finite_real(r) and r >= 0):
                    raise ValueError(f"{name} must have radii that are finite and >= 0, got {r!r}")

        def buffers(name: str, items: Sequence[tuple[Sequence[float], float]]) -> None:
            self.register_buffer(f"{name}_c", torch.tensor([c for c, _ in items], dtype=torch.float32).reshape(-1, 2))
            self.register_buffer(f"{name}_r", torch.tensor([r for _, r in items], dtype=torch.float32))

        buffers("disc", discs)
        buffers("ext", exteriors)
        buffers("half", halfplanes)
        self.sharpness = float(sharpness)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits [0, k * score] of 2D points.

        Parameters
        ----------
        x : torch.Tensor, shape (B, 2)
            The points.

        Returns
        -------
        torch.Tensor, shape (B, 2)
            The logits of class 0 (always 0) and class 1 (k times the signed distance into class 1's region).
        """
        scores = []
        if len(self.disc_r):
            scores.append(self.disc_r - torch.cdist(x, self.disc_c))
        if len(self.ext_r):
            scores.append(torch.cdist(x, self.ext_c) - self.ext_r)
        if len(self.half_r):
            scores.append((x @ self.half_c.T - self.half_r) / self.half_c.norm(dim=1))
        score = torch.cat(scores, dim=1).max(dim=1).values
        return torch.stack([torch.zeros_like(score), self.sharpness * score], dim=1)




# The weights and bias must not require a gradient. The backward is the transposed convolution written as one
# matrix product Wᵀ ∂y followed by one strided addition per kernel offset. For a convolution with one input
# channel, such as `SmallCNN`'s first, oneDNN's backward is several times slower than this on this project's CPU
# (one thread: 50.7 ms for 1,250 MNIST images); the gradient differs from oneDNN's by float rounding (relative
# 1e-7). Differentiable twice (its backward is made of differentiable operations).
class _InputGradConv(torch.autograd.Function):
    """conv2d(x, weight, bias) whose backward gives the input's gradient alone (weights fixed)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                stride: tuple[int, int], padding: tuple[int, int]) -> torch.Tensor:
        ctx.save_for_backward(weight)
        ctx.geometry = (tuple(x.shape[-2:]), stride, padding)
        return F.conv2d(x, weight, bias, stride, padding)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        weight, = ctx.saved_tensors
        (h, w), (sh, sw), (ph, pw) = ctx.geometry
        c_out, c_in, kh, kw = weight.shape
        b, _, ho, wo = grad.shape
        # every (input channel, kernel offset)'s contribution: (c_in, kh, kw, B, Ho, Wo), one matrix product
        parts = (weight.reshape(c_out, -1).T @ grad.transpose(0, 1).reshape(c_out, -1)).reshape(c_in, kh, kw, b, ho, wo)
        out = grad.new_zeros(c_in, b, max(h + 2 * ph, sh * (ho - 1) + kh), max(w + 2 * pw, sw * (wo - 1) + kw))
        for i in range(kh):
            for j in range(kw):
                out[:, :, i:i + sh * (ho - 1) + 1:sh, j:j + sw * (wo - 1) + 1:sw] += parts[:, i, j]
        return out[:, :, ph:ph + h, pw:pw + w].transpose(0, 1), None, None, None, None


class SmallCNN(nn.Module):
    """A two-convolution classifier for the quick image datasets (8x8 digits, 28x28 MNIST-5k).

    Normalize, then each of `channels` a 3x3 convolution of stride 2 and padding 1 (each spatial size becomes
    ceil(size / 2)) with an activation, then a hidden linear layer of width `hidden` and the output layer.

    Parameters
    ----------
    input_shape : sequence of int
        (channels, height, width), positive ints.
    num_classes : int
        The number of logits, an integer >= 2.
    channels : sequence of int
        The convolutions' output channels, a tuple (or list) of integers >= 1.
    hidden : int
        The hidden layer's width, an integer >= 1.
    mean, std : sequence of float
        The normalization constants (see `Normalize`).
    activation : str
        One of `ACTIVATIONS`.
    """

    def __init__(self, input_shape: Sequence[int], num_classes: int, channels: Sequence[int] = (8, 16),
                 hidden: int = 64, mean: Sequence[float] = (0.5,), std: Sequence[float] = (0.25,),
                 activation: str = "relu") -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        if len(check_shape(input_shape, "input_shape")) != 3:
            raise ValueError(f"input_shape must be (channels, height, width), got {tuple(input_shape)!r}")
        check_count(num_classes, "num_classes", 2)
        _check_widths(channels, "channels")
        check_count(hidden, "hidden")
        self.input_shape = tuple(int(d) for d in input_shape)
        act = ACTIVATIONS[activation]
        c, h, w = self.input_shape
        layers: list[nn.Module] = [Normalize(mean, std)]
        for c_out in channels:
            # 3x3, stride 2, padding 1: each spatial size becomes ceil(size / 2)
            layers += [nn.Conv2d(c, c_out, kernel_size=3, stride=2, padding=1), act()]
            c, h, w = c_out, (h + 1) // 2, (w + 1) // 2
        layers += [nn.Flatten(), nn.Linear(c * h * w, hidden), act(), nn.Linear(hidden, num_classes)]
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of inputs in [0, 1] pixel space.

        When only the input needs a gradient (the sample-wise optimizations run the model with its weights fixed,
        `base_classifier.fixed_weights`), a first convolution with one input channel back-propagates through
        `_InputGradConv`, which makes a forward and backward pass of the MNIST CNN about 1.5x faster; training (weights
        with gradients) and sampling without autograd use `self.net` as it is.

        Parameters
        ----------
        x : torch.Tensor, shape (B, C, H, W)
            The inputs, (C, H, W) = input_shape.

        Returns
        -------
        torch.Tensor, shape (B, num_classes)
            The logits.
        """
        first = self.net[1]
        if not (torch.is_grad_enabled() and x.requires_grad and first.in_channels == 1 and first.groups == 1
                and first.dilation == (1, 1) and not first.weight.requires_grad
                and (first.bias is None or not first.bias.requires_grad)):
            return self.net(x)
        h = _InputGradConv.apply(self.net[0](x), first.weight, first.bias, first.stride, first.padding)
        for layer in self.net[2:]:
            h = layer(h)
        return h
