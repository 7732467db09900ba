"""Base classifiers. Every model maps inputs in [0, 1] pixel space to logits; input normalization
lives inside the model (a `Normalize` first layer), so smoothing noise is always added in pixel space."""
from __future__ import annotations

import math
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn


class Normalize(nn.Module):
    """(x - mean) / std per channel (dimension 1), or per feature for flat inputs."""

    def __init__(self, mean: Sequence[float], std: Sequence[float]) -> None:
        super().__init__()
        if len(mean) != len(std) or any(s <= 0 for s in std):
            raise ValueError("mean and std must have equal length and std must be > 0")
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = (1, -1) + (1,) * (x.ndim - 2)
        return (x - self.mean.view(shape)) / self.std.view(shape)


#: the models' activations: ReLU, or softplus (smooth, so the network has a Hessian everywhere)
ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "softplus": nn.Softplus}


class MLP(nn.Module):
    """A small fully connected classifier for flat or image inputs (flattened after normalization)."""

    def __init__(self, input_shape: Sequence[int], num_classes: int, hidden: Sequence[int] = (256, 256),
                 mean: Sequence[float] = (0.5,), std: Sequence[float] = (0.25,), activation: str = "relu") -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.input_shape = tuple(input_shape)
        dim = int(math.prod(self.input_shape))
        layers: list[nn.Module] = [Normalize(mean, std), nn.Flatten()]
        for h in hidden:
            layers += [nn.Linear(dim, h), ACTIVATIONS[activation]()]
            dim = h
        layers.append(nn.Linear(dim, num_classes))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class ToyClassifier(nn.Module):
    """An analytic 2D two-class base classifier for conceptual figures (blog Figure 2): class 1 inside
    any of the `discs` (centre, radius), outside any of the `exteriors` (centre, radius) or beyond any
    of the `halfplanes` (w, b: w.x >= b); class 0 elsewhere. Returns logits [0, k * score] where the
    score (a signed distance) is > 0 exactly in class 1's region."""

    def __init__(self, discs: Sequence[tuple[Sequence[float], float]] = (),
                 exteriors: Sequence[tuple[Sequence[float], float]] = (),
                 halfplanes: Sequence[tuple[Sequence[float], float]] = (), sharpness: float = 200.0) -> None:
        super().__init__()
        if not discs and not exteriors and not halfplanes:
            raise ValueError("give at least one disc, exterior or half-plane")

        def buffers(name: str, items: Sequence[tuple[Sequence[float], float]]) -> None:
            self.register_buffer(f"{name}_c", torch.tensor([c for c, _ in items], dtype=torch.float32).reshape(-1, 2))
            self.register_buffer(f"{name}_r", torch.tensor([r for _, r in items], dtype=torch.float32))

        buffers("disc", discs)
        buffers("ext", exteriors)
        buffers("half", halfplanes)
        self.sharpness = float(sharpness)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = []
        if len(self.disc_r):
            scores.append(self.disc_r - torch.cdist(x, self.disc_c))
        if len(self.ext_r):
            scores.append(torch.cdist(x, self.ext_c) - self.ext_r)
        if len(self.half_r):
            scores.append((x @ self.half_c.T - self.half_r) / self.half_c.norm(dim=1))
        score = torch.cat(scores, dim=1).max(dim=1).values
        return torch.stack([torch.zeros_like(score), self.sharpness * score], dim=1)




class _InputGradConv(torch.autograd.Function):
    """conv2d(x, weight, bias) whose backward gives the input's gradient alone (the weights and bias must not
    require one): the transposed convolution written as one matrix product Wᵀ ∂y followed by one strided
    addition per kernel offset. For a convolution with one input channel, such as `SmallCNN`'s first, oneDNN's
    backward is several times slower than this on this project's CPU (one thread: 50.7 ms for 1,250 MNIST
    images); the gradient differs from oneDNN's by float rounding (relative 1e-7). Differentiable twice
    (its backward is made of differentiable operations)."""

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
    """A two-convolution classifier for the quick image datasets (8x8 digits, 28x28 MNIST-5k)."""

    def __init__(self, input_shape: Sequence[int], num_classes: int, channels: Sequence[int] = (8, 16),
                 hidden: int = 64, mean: Sequence[float] = (0.5,), std: Sequence[float] = (0.25,),
                 activation: str = "relu") -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        if len(input_shape) != 3 or not all(int(d) >= 1 for d in input_shape):
            raise ValueError(f"input_shape must be (channels, height, width), got {tuple(input_shape)!r}")
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
        """Logits (B, num_classes) of inputs (B, C, H, W) in [0, 1] pixel space. When only the input needs
        a gradient (the sample-wise optimizations run the model with its weights fixed,
        `base_classifier.fixed_weights`), a first convolution with one input channel back-propagates
        through `_InputGradConv`, which makes a forward and backward pass of the MNIST CNN about 1.5x
        faster; training (weights with gradients) and sampling without autograd use `self.net` as it is."""
        first = self.net[1]
        if not (torch.is_grad_enabled() and x.requires_grad and first.in_channels == 1 and first.groups == 1
                and first.dilation == (1, 1) and not first.weight.requires_grad
                and (first.bias is None or not first.bias.requires_grad)):
            return self.net(x)
        h = _InputGradConv.apply(self.net[0](x), first.weight, first.bias, first.stride, first.padding)
        for layer in self.net[2:]:
            h = layer(h)
        return h
