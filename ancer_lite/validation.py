"""Argument checks shared by the package: every bad input raises ValueError naming the argument."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

ArrayLike = "float | np.ndarray | torch.Tensor"


def check_probability(value: float, name: str) -> float:
    """An open-interval probability such as the failure rate alpha, in (0, 1)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}") from None
    if not (0.0 < v < 1.0) or not math.isfinite(v):
        raise ValueError(f"{name} must be in the open interval (0, 1), got {value!r}")
    return v


def check_count(value: int, name: str, minimum: int = 1) -> int:
    """A sample count such as N0 or N: an integer >= minimum."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_positive(value: float, name: str) -> float:
    """A finite, strictly positive scalar."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_nonnegative(value: float, name: str) -> float:
    """A finite scalar >= 0 (a margin, a momentum, a loss weight, a radius)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) or not (
            math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def check_class_index(value: int, name: str, num_classes: int | None = None, abstain: bool = False) -> int:
    """A class label: an integer >= 0 (below num_classes when given), or ABSTAIN (-1) where `abstain`."""
    ok = (not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer))
          and value >= (-1 if abstain else 0) and (num_classes is None or value < num_classes))
    if not ok:
        want = ">= 0" if num_classes is None else f"in [0, {num_classes})"
        raise ValueError(f"{name} must be a class index {want}{' or ABSTAIN (-1)' if abstain else ''}, got {value!r}")
    return int(value)


def check_shape(shape: Sequence[int], name: str) -> tuple[int, ...]:
    """An input shape: a tuple (or list) of positive ints."""
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 1 for d in shape):
        raise ValueError(f"{name} must be a tuple of positive ints, got {shape!r}")
    return tuple(int(d) for d in shape)


def check_probabilities(p: float | np.ndarray, name: str) -> np.ndarray:
    """Probabilities (a scalar or an array) in the closed interval [0, 1], as float64; NaN is refused."""
    a = np.asarray(p, dtype=np.float64)
    if not ((a >= 0.0) & (a <= 1.0)).all():
        raise ValueError(f"{name} must be probabilities in [0, 1], got {p!r}")
    return a


def check_finite_tensor(x: torch.Tensor | np.ndarray, name: str,
                        shape: Sequence[int] | None = None) -> torch.Tensor:
    """A tensor without NaN/Inf, optionally of an exact shape."""
    t = torch.as_tensor(x)
    if shape is not None and tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(t.shape)}")
    if t.is_floating_point() and not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} must contain only finite values (found NaN or Inf)")
    return t


def check_scale(theta: float | np.ndarray | torch.Tensor, shape: Sequence[int],
                name: str = "theta") -> torch.Tensor:
    """A smoothing scale (sigma for Gaussian, lambda for uniform noise): a finite, strictly
    positive scalar, or a tensor of exactly `shape` (one value per input dimension)."""
    t = torch.as_tensor(theta, dtype=torch.float64) if not isinstance(theta, torch.Tensor) else theta
    if t.ndim == 0:
        check_positive(float(t), name)
        return torch.full(tuple(shape), float(t), dtype=torch.float32)
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} must be a scalar or have the input's shape {tuple(shape)}, "
                         f"got shape {tuple(t.shape)}")
    if not bool(torch.isfinite(t).all()) or not bool((t > 0).all()):
        raise ValueError(f"{name} must be finite and > 0 in every dimension")
    return t


def check_choice(value: str, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value
