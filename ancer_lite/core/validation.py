"""Argument checks shared by the package: every bad input raises ValueError naming the argument."""
from __future__ import annotations

import math
import os
from typing import Sequence

import numpy as np
import torch

ArrayLike = "float | np.ndarray | torch.Tensor"


def check_probability(value: float, name: str) -> float:
    """An open-interval probability such as the failure rate alpha, in (0, 1), given as a number (a str or a
    bool, which float() would convert, is refused).

    Parameters
    ----------
    value : float
        The value to check.
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    float
        The value as a float.
    """
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ValueError(f"{name} must be a number in (0, 1), got {type(value).__name__} {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}") from None
    if not (0.0 < v < 1.0) or not math.isfinite(v):
        raise ValueError(f"{name} must be in the open interval (0, 1), got {value!r}")
    return v


def check_count(value: int, name: str, minimum: int = 1) -> int:
    """A sample count such as N0 or N: an integer >= minimum (itself an integer).

    Parameters
    ----------
    value : int
        The value to check: a Python or NumPy integer (not a bool); ValueError otherwise.
    name : str
        The argument's name, used in the error message.
    minimum : int, default 1
        The smallest allowed value (TypeError when it is not an integer).

    Returns
    -------
    int
        The value as a Python int.
    """
    if isinstance(minimum, (bool, np.bool_)) or not isinstance(minimum, (int, np.integer)):
        raise TypeError(f"minimum must be an integer (the smallest allowed {name}), got {minimum!r}")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_positive(value: float, name: str) -> float:
    """A finite, strictly positive scalar, given as a number (a str or a bool, which float() would convert, is
    refused).

    Parameters
    ----------
    value : float
        The value to check.
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    float
        The value as a float.
    """
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ValueError(f"{name} must be a finite number > 0, got {type(value).__name__} {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_nonnegative(value: float, name: str) -> float:
    """A finite scalar >= 0 (a margin, a momentum, a loss weight, a radius).

    Parameters
    ----------
    value : float
        The value to check: a Python or NumPy int or float (not a bool).
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    float
        The value as a float.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) or not (
            math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def check_class_index(value: int, name: str, num_classes: int | None = None, abstain: bool = False) -> int:
    """A class label: an integer >= 0 (below num_classes when given), or ABSTAIN (-1) where `abstain`.

    Parameters
    ----------
    value : int
        The label: a Python or NumPy integer (not a bool).
    name : str
        The argument's name, used in the error message.
    num_classes : int, optional
        The number of classes, an exclusive upper bound; None: no upper bound.
    abstain : bool, default False
        Whether ABSTAIN (-1) is allowed.

    Returns
    -------
    int
        The label as a Python int.
    """
    ok = (not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer))
          and value >= (-1 if abstain else 0) and (num_classes is None or value < num_classes))
    if not ok:
        want = ">= 0" if num_classes is None else f"in [0, {num_classes})"
        raise ValueError(f"{name} must be a class index {want}{' or ABSTAIN (-1)' if abstain else ''}, got {value!r}")
    return int(value)


def check_shape(shape: Sequence[int], name: str) -> tuple[int, ...]:
    """An input shape: a tuple (or list) of positive ints.

    Parameters
    ----------
    shape : tuple or list of int
        The shape to check: Python or NumPy integers >= 1 (not bools).
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    tuple of int
        The shape as a tuple of Python ints.
    """
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 1 for d in shape):
        raise ValueError(f"{name} must be a tuple of positive ints, got {shape!r}")
    return tuple(int(d) for d in shape)


def check_probabilities(p: float | np.ndarray, name: str) -> np.ndarray:
    """Probabilities (a scalar or an array) in the closed interval [0, 1], as float64; NaN is refused, and so are
    values that are not real numbers (a str such as '0.9', a bool, None, complex).

    Parameters
    ----------
    p : float or numpy.ndarray, any shape
        The probabilities (integer or floating-point numbers).
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    numpy.ndarray of float64, shape of p
        The probabilities (0-d for a scalar).
    """
    raw = np.asarray(p) if not isinstance(p, (str, bytes)) else None
    if raw is None or raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be probabilities (real numbers) in [0, 1], got {type(p).__name__} {p!r}")
    a = np.asarray(raw, dtype=np.float64)
    if not ((a >= 0.0) & (a <= 1.0)).all():
        raise ValueError(f"{name} must be probabilities in [0, 1], got {p!r}")
    return a


def check_finite_tensor(x: torch.Tensor | np.ndarray, name: str,
                        shape: Sequence[int] | None = None) -> torch.Tensor:
    """A tensor without NaN/Inf, optionally of an exact shape (a sequence of ints).

    Parameters
    ----------
    x : torch.Tensor or numpy.ndarray, any shape
        The values (anything torch.as_tensor takes); an integer tensor has no NaN/Inf to check.
    name : str
        The argument's name, used in the error message.
    shape : sequence of int, optional
        The exact shape x must have; None: any shape.

    Returns
    -------
    torch.Tensor, shape of x
        torch.as_tensor(x): x itself for a tensor (its dtype and device kept).
    """
    try:
        t = torch.as_tensor(x)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(f"{name} must be a tensor or array of numbers, got {type(x).__name__} "
                         f"{str(x)[:60]!r}") from None
    if shape is not None and not hasattr(shape, "__iter__"):
        raise ValueError(f"shape must be a tuple of ints (the expected shape of {name}), got {shape!r}")
    if shape is not None and tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(t.shape)}")
    if t.is_floating_point() and not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} must contain only finite values (found NaN or Inf)")
    return t


def check_domain(domain: object, name: str = "domain") -> tuple[float, float] | None:
    """An input domain: None (any finite real input) or a pair (low, high) of finite real numbers with low < high,
    returned as a tuple of floats.

    Parameters
    ----------
    domain : tuple of (float, float) or None
        The closed interval every input value must lie in, or None for no bound.
    name : str
        The argument's name in the error message.

    Returns
    -------
    tuple of (float, float) or None
        (low, high), or None.
    """
    if domain is None:
        return None
    bad = ValueError(f"{name} must be None or a pair (low, high) of finite real numbers with low < high, e.g. "
                     f"(0.0, 1.0), got {type(domain).__name__} {domain!r}")
    if isinstance(domain, (str, bytes, dict)) or not hasattr(domain, "__len__") or len(domain) != 2:
        raise bad
    try:
        low, high = (float(check_real(v, name)) for v in domain)
    except (TypeError, ValueError):
        raise bad from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise bad
    return low, high


def check_scale(theta: float | np.ndarray | torch.Tensor, shape: Sequence[int],
                name: str = "theta") -> torch.Tensor:
    """A smoothing scale (sigma for Gaussian, lambda for uniform noise): a finite, strictly
    positive scalar, or a tensor of exactly `shape` (one value per input dimension). A bool, str or None theta is
    refused.

    Parameters
    ----------
    theta : float, numpy.ndarray or torch.Tensor, shape () or `shape`
        The scale: a number, or one value per input dimension (in the input's units, e.g. pixels in [0, 1]).
    shape : tuple of int
        The input's shape, positive ints.
    name : str, default "theta"
        The argument's name, used in the error message.

    Returns
    -------
    torch.Tensor, shape `shape`
        A float32 tensor filled with the scalar; for a tensor theta, theta itself; for an array, theta as a
        float64 tensor.
    """
    check_shape(shape, "shape")
    if isinstance(theta, (bool, np.bool_, str, bytes)) or theta is None or (
            isinstance(theta, torch.Tensor) and theta.dtype == torch.bool):
        raise ValueError(f"{name} must be a finite number > 0 or a tensor of shape {tuple(shape)}, "
                         f"got {type(theta).__name__} {theta!r}")
    try:
        t = torch.as_tensor(theta, dtype=torch.float64) if not isinstance(theta, torch.Tensor) else theta
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(f"{name} must be a finite number > 0 or an array of numbers of shape {tuple(shape)}, "
                         f"got {type(theta).__name__} {str(theta)[:60]!r}") from None
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
    """One of `choices` (a sequence of the allowed values).

    Parameters
    ----------
    value : str
        The value to check.
    name : str
        The argument's name, used in the error message.
    choices : sequence of str
        The allowed values (TypeError when it is neither a container nor iterable).

    Returns
    -------
    str
        `value`, unchanged.
    """
    if not hasattr(choices, "__contains__") and not hasattr(choices, "__iter__"):
        raise TypeError(f"choices must be a sequence of the allowed values of {name}, got {choices!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def check_path(value: object, name: str) -> object:
    """A file-system path: a str or os.PathLike (TypeError naming the argument otherwise). Returned unchanged.

    Parameters
    ----------
    value : object
        The path to check.
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    str or os.PathLike
        `value`, unchanged.
    """
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), got {type(value).__name__} {value!r}")
    return value


def check_file_name(value: object, name: str) -> str:
    """A plain file-name component used to build a file or folder name (e.g. a setup's name): a non-empty str
    without a path separator or NUL, and not '.' or '..', so that it cannot point outside its folder.

    Parameters
    ----------
    value : object
        The name to check (TypeError when it is not a str, ValueError when it is not a plain name).
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    str
        `value`, unchanged.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str (a plain file name), got {type(value).__name__} {value!r}")
    if value in ("", ".", "..") or any(sep in value for sep in ("/", "\\", "\0", os.sep, os.altsep or "/")):
        raise ValueError(f"{name} must be a plain file name (non-empty, no path separator, not '.' or '..'), "
                         f"got {value!r}")
    return value


def check_seed(value: object, name: str = "seed") -> int:
    """A random seed: an integer in [0, 2**32), what numpy's and scikit-learn's generators accept.

    Parameters
    ----------
    value : object
        The seed: a Python or NumPy integer (not a bool).
    name : str, default "seed"
        The argument's name, used in the error message.

    Returns
    -------
    int
        The seed as a Python int.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not 0 <= value < 2 ** 32:
        raise ValueError(f"{name} must be an integer in [0, 2**32), got {value!r}")
    return int(value)


def check_finite_array(value: object, name: str, last_axis: int | None = None,
                       positive: bool = False) -> np.ndarray:
    """A real numpy array without NaN/Inf (a point, a centre, a matrix), as float64; with `last_axis`, of
    shape (..., last_axis); with `positive`, every entry > 0 (semi-axes, scales). One O(size) pass.

    Parameters
    ----------
    value : object, any shape
        The values (anything np.asarray can convert to float64).
    name : str
        The argument's name, used in the error message.
    last_axis : int, optional
        The required length of the last axis (a 0-d array is refused); None: any shape.
    positive : bool, default False
        Whether every entry must be > 0.

    Returns
    -------
    numpy.ndarray of float64, shape of value
        The values.
    """
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real array, got {type(value).__name__} {str(value)[:60]!r}") from None
    if last_axis is not None and (a.ndim == 0 or a.shape[-1] != last_axis):
        raise ValueError(f"{name} must have shape (..., {last_axis}) (one entry per dimension), got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite (found NaN or Inf)")
    if positive and not (a > 0).all():
        raise ValueError(f"{name} must be > 0 everywhere, got min {a.min():g}")
    return a


def check_real(value: object, name: str) -> object:
    """A real number given as a number, not as a bool, str, bytes or complex, which float() and numpy convert
    without a word ('1' -> 1.0, True -> 1.0, 0.9+0.5j -> 0.9 with a warning): TypeError naming the argument.
    Returned unchanged; the range check is separate (e.g. `families.power_law_exponent`'s a = d + k).

    Parameters
    ----------
    value : object
        The value to check (None is refused too).
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    object
        `value`, unchanged.
    """
    if isinstance(value, (bool, np.bool_, str, bytes, complex, np.complexfloating)) or value is None:
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    return value


def check_labels(y: object, name: str = "y", num_classes: int | None = None) -> torch.Tensor:
    """Class labels: a 1-D integer torch tensor (not bool or float) with every entry >= 0, and below num_classes
    when given. Returned unchanged. One pass (min and max).

    Parameters
    ----------
    y : torch.Tensor, shape (N,)
        The labels.
    name : str, default "y"
        The argument's name, used in the error message.
    num_classes : int, optional
        The number of classes, an exclusive upper bound on the labels; None: no upper bound.

    Returns
    -------
    torch.Tensor, shape (N,)
        `y`, unchanged.
    """
    if not isinstance(y, torch.Tensor) or y.ndim != 1 or y.dtype == torch.bool or y.is_floating_point() \
            or y.is_complex():
        got = f"{y.dtype} tensor of shape {tuple(y.shape)}" if isinstance(y, torch.Tensor) else type(y).__name__
        raise ValueError(f"{name} must be a 1-D integer tensor of class labels, got a {got}")
    if y.numel():
        lo, hi = (int(v) for v in torch.aminmax(y))
        if lo < 0 or (num_classes is not None and hi >= num_classes):
            want = ">= 0" if num_classes is None else f"in [0, {num_classes})"
            raise ValueError(f"{name} must hold class labels {want}, got labels from {lo} to {hi}")
    return y


def check_grid(values: object, name: str, positive: bool = True) -> list:
    """A grid of values to try (step sizes, clip widths): a non-empty iterable (not a str) of finite real numbers
    (not bools), each > 0 where `positive`. Returns the values as a list, unchanged (an iterator is consumed).

    Parameters
    ----------
    values : iterable of float
        The grid (TypeError for a str, bytes, dict or a non-iterable; ValueError when empty or a value is bad).
    name : str
        The argument's name, used in the error message.
    positive : bool, default True
        Whether every value must be > 0.

    Returns
    -------
    list
        The values, in their order, unchanged.
    """
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a non-empty list of numbers, got {type(values).__name__} {values!r}")
    vals = list(values)
    if not vals:
        raise ValueError(f"{name} must be a non-empty list of numbers, got {values!r}")
    for v in vals:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not math.isfinite(v) or (positive and not v > 0):
            want = "finite numbers > 0" if positive else "finite numbers"
            raise ValueError(f"{name} must hold {want}, got {v!r} in {values!r}")
    return vals


def check_float_dtype(dtype: object, name: str = "dtype") -> torch.dtype:
    """A floating-point torch dtype (torch.float32, torch.float64, ...): noise drawn or scaled in an integer dtype
    would be rounded (or torch has no kernel for it).

    Parameters
    ----------
    dtype : object
        The dtype to check.
    name : str, default "dtype"
        The argument's name, used in the error message.

    Returns
    -------
    torch.dtype
        `dtype`, unchanged.
    """
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise ValueError(f"{name} must be a floating-point torch dtype (e.g. torch.float32), got {dtype!r}")
    return dtype


def check_device(device: object, name: str = "device") -> torch.device:
    """A torch device (a torch.device, or a string such as 'cpu' or 'cuda:0'), as torch.device.

    Parameters
    ----------
    device : object
        The device: anything torch.device accepts (its availability is not checked).
    name : str, default "device"
        The argument's name, used in the error message.

    Returns
    -------
    torch.device
        torch.device(device).
    """
    try:
        return torch.device(device)
    except (RuntimeError, TypeError, ValueError):  # torch's own message lists every device type it knows
        raise ValueError(f"{name} must be a torch device such as 'cpu' or 'cuda', got {device!r}") from None
