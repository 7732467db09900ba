"""Base classifiers. Every model maps inputs in [0, 1] pixel space to logits; input normalization
lives inside the model (a `Normalize` first layer), so smoothing noise is always added in pixel space."""
from __future__ import annotations

import math
from typing import Sequence

import torch
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


class MLP(nn.Module):
    """A small fully connected classifier for flat or image inputs (flattened after normalization)."""

    def __init__(self, input_shape: Sequence[int], num_classes: int, hidden: Sequence[int] = (256, 256),
                 mean: Sequence[float] = (0.5,), std: Sequence[float] = (0.25,)) -> None:
        super().__init__()
        self.input_shape = tuple(input_shape)
        dim = int(math.prod(self.input_shape))
        layers: list[nn.Module] = [Normalize(mean, std), nn.Flatten()]
        for h in hidden:
            layers += [nn.Linear(dim, h), nn.ReLU()]
            dim = h
        layers.append(nn.Linear(dim, num_classes))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)
