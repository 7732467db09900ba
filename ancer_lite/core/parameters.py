"""The smoothing parameters of one input: the scales θ, an optional rotation U and an optional mean μ of the noise
μ + U (θ ⊙ ε) (ANCER §4: θ = σ or λ per dimension; RANCER §3, Eq. 2: U; UCAN Eq. 2: μ(x) and θ = λ σ(x)).

`SmoothingParameters` is checked once, where it is made (`SmoothingParameters.of`): every function below it —
CERTIFY's counting loop, the certificates, the regions — takes it as given. A rotation is checked by
`check_rotation`, the package's one orthogonality test, against its one tolerance `ORTHOGONALITY_TOL`; the deviation
it measured travels with the value (`SmoothingParameters.deviation`), so that a consumer whose soundness depends on
U^T = U^-1 (Algorithm 1's distances, RANCER's stated region) can widen its margin by it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from .validation import check_count, check_finite_tensor, check_real, check_scale, check_shape

#: the largest entry of |U U^T - I| (computed in float64) of a matrix accepted as a rotation. Rounding an
#: orthogonal matrix to float32 leaves about 1e-8 (measured: 2.5e-8, 1.1e-8, 6.0e-9 for n = 64, 784, 3,072), which
#: must pass, since CERTIFY samples in float32; a matrix further from orthogonal is another matrix, whose noise a
#: certificate stated with U would misdescribe (0.99996 I deviates by 8e-5 and is not I). Consumers whose soundness
#: needs U^-1 = U^T to more digits scale their margins with the measured deviation instead of a stricter tolerance.
ORTHOGONALITY_TOL = 1e-6


def orthogonality_deviation(rotation: np.ndarray | torch.Tensor) -> float:
    """max |U U^T - I| over the entries, computed in float64 (O(n^3)); inf when U has a non-finite entry.

    Parameters
    ----------
    rotation : array_like or torch.Tensor, shape (n, n)
        A real square matrix.

    Returns
    -------
    float
        The deviation of U from orthogonality.
    """
    if isinstance(rotation, torch.Tensor):
        u = rotation.detach().to("cpu", torch.float64).numpy()
    else:
        u = np.asarray(rotation, dtype=np.float64)
    if not np.isfinite(u).all():
        return math.inf
    return float(np.abs(u @ u.T - np.eye(u.shape[0])).max())


def check_rotation(rotation: object, n: int, name: str = "rotation") -> float:
    """Check that `rotation` is an orthogonal (n, n) matrix: real, finite, and U U^T = I within `ORTHOGONALITY_TOL`.
    The package's one orthogonality test, made once where a rotation enters (`SmoothingParameters.of`, the memory's
    regions, RANCER's U).

    Parameters
    ----------
    rotation : array_like or torch.Tensor, shape (n, n)
        The matrix to check.
    n : int
        The number of input dimensions.
    name : str
        The argument's name in the error message.

    Returns
    -------
    float
        The measured deviation max |U U^T - I| (<= ORTHOGONALITY_TOL).

    Raises
    ------
    ValueError
        Naming `name`, with the expected shape or the deviation found.
    """
    n = check_count(n, "n")  # first, so that a bad n is not reported as a bad rotation
    if isinstance(rotation, torch.Tensor):
        shape, ok = tuple(rotation.shape), rotation.is_floating_point()
    else:
        try:
            a = np.asarray(rotation)
        except (TypeError, ValueError):
            a = np.asarray(None)
        shape, ok = a.shape, a.dtype.kind in "iuf"
    if not ok or shape != (n, n):
        got = f"shape {shape}" if ok else f"{type(rotation).__name__} {str(rotation)[:60]!r}"
        raise ValueError(f"{name} must be a real ({n}, {n}) orthogonal matrix, got {got}")
    err = orthogonality_deviation(rotation)
    if not math.isfinite(err):
        raise ValueError(f"{name} must contain only finite values (found NaN or Inf)")
    if err > ORTHOGONALITY_TOL:
        raise ValueError(f"{name} must be orthogonal (U U^T = I within {ORTHOGONALITY_TOL:g}); its largest deviation "
                         f"is {err:.2e} (re-orthogonalize it, e.g. with np.linalg.qr)")
    return err


def check_rotations(rotations: object, b: int, n: int, name: str = "rotation") -> float:
    """Check a batch of b rotations, one per input (RANCER's U per input, the optimizers' `rotation`): a
    floating-point torch tensor (b, n, n) whose matrices each pass `check_rotation` (O(b n^3), one matrix at a time:
    a float64 copy of the whole batch can take gigabytes).

    Parameters
    ----------
    rotations : torch.Tensor, shape (b, n, n)
        The matrices to check.
    b : int
        The number of inputs.
    n : int
        The number of input dimensions.
    name : str
        The argument's name in the error messages (matrix k is named ``name[k]``).

    Returns
    -------
    float
        The largest deviation max |U U^T - I| over the batch (<= ORTHOGONALITY_TOL).

    Raises
    ------
    TypeError
        When `rotations` is not a torch tensor.
    ValueError
        Naming `name` (or ``name[k]``), with the expected shape or the deviation found.
    """
    if not isinstance(rotations, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape ({b}, {n}, {n}) (one orthogonal matrix per input), "
                        f"got {type(rotations).__name__}")
    if tuple(rotations.shape) != (b, n, n):
        raise ValueError(f"{name} must have shape ({b}, {n}, {n}) (one orthogonal matrix per input), "
                         f"got {tuple(rotations.shape)}")
    return max((check_rotation(rotations[k].detach(), n, f"{name}[{k}]") for k in range(b)), default=0.0)


@dataclass(frozen=True, eq=False)
class Rotation:
    """An orthogonal matrix U checked once by `check_rotation` (made by `of`), kept with the deviation it measured, so
    that a record given it (`regions.CertifiedRegion`, Algorithm 1's memory entries) takes it without a second
    O(n^3) check.

    Attributes
    ----------
    matrix : numpy.ndarray, shape (n, n)
        U in float64, read-only.
    deviation : float
        max |U U^T - I| of U as given (<= ORTHOGONALITY_TOL).
    """
    matrix: np.ndarray
    deviation: float

    @classmethod
    def of(cls, rotation: "np.ndarray | torch.Tensor | Rotation", n: int, name: str = "rotation") -> "Rotation":
        """Check `rotation` (`check_rotation`) and keep it as a read-only float64 copy; a `Rotation` of n dimensions
        is returned as it is.

        Parameters
        ----------
        rotation : array_like, torch.Tensor or Rotation, shape (n, n)
            The matrix.
        n : int
            The number of input dimensions.
        name : str
            The argument's name in error messages.

        Returns
        -------
        Rotation
        """
        if isinstance(rotation, Rotation):
            if rotation.matrix.shape != (n, n):
                raise ValueError(f"{name} must be a real ({n}, {n}) orthogonal matrix, got a Rotation of shape "
                                 f"{rotation.matrix.shape}")
            return rotation
        deviation = check_rotation(rotation, n, name)
        if isinstance(rotation, torch.Tensor):
            u = rotation.detach().to("cpu", torch.float64).numpy().copy()
        else:
            u = np.array(rotation, dtype=np.float64)
        u.setflags(write=False)
        return cls(u, deviation)


@dataclass(frozen=True, eq=False)
class SmoothingParameters:
    """θ, U and μ of the noise μ + U (θ ⊙ ε) for inputs of one shape, checked once by `of`.

    Attributes
    ----------
    theta : torch.Tensor, shape input_shape
        The per-dimension scales (σ for Gaussian noise, λ for uniform), float32, finite and > 0 (>= 0 where the
        value was made with ``zero_ok``: UCAN's λ σ(x) vanishes where σ(x) does).
    rotation : torch.Tensor of shape (n, n), or None
        U, float32, orthogonal within `ORTHOGONALITY_TOL` (n = prod(input_shape)); None for axis-aligned noise.
    mean : torch.Tensor, or None
        μ, float32, finite, broadcastable to input_shape; None for centred noise.
    deviation : float
        max |U U^T - I| of the rotation as given (0 without one).
    given64 : numpy.ndarray of shape (n, n), or None
        U as given, in float64, when it was given in another precision than float32 (a float64 matrix: the noise
        samples with its float32 rounding, the certificate states the region of U as given); None otherwise.
    """
    theta: torch.Tensor
    rotation: torch.Tensor | None = None
    mean: torch.Tensor | None = None
    deviation: float = 0.0
    given64: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def of(cls, theta: float | np.ndarray | torch.Tensor, input_shape: Sequence[int],
           rotation: np.ndarray | torch.Tensor | None = None, mean: torch.Tensor | None = None, *,
           name: str = "theta", device: str | torch.device = "cpu", zero_ok: bool = False) -> "SmoothingParameters":
        """Check θ, U and μ for inputs of `input_shape` and keep them as float32 tensors on `device`.

        Parameters
        ----------
        theta : float, array_like or torch.Tensor
            One scale for every dimension, or one per dimension (shape input_shape); finite and > 0 also in
            float32 (>= 0 with `zero_ok`).
        input_shape : tuple of int
            The shape of one input.
        rotation : array_like or torch.Tensor of shape (n, n), optional
            An orthogonal matrix (`check_rotation`).
        mean : torch.Tensor, optional
            A finite tensor broadcastable to input_shape.
        name : str
            θ's name in error messages (the family's scale name: "sigma", "lambda").
        device : str or torch.device
            Where the tensors are kept.
        zero_ok : bool
            Accept scales of 0 (noise-free dimensions).

        Returns
        -------
        SmoothingParameters
        """
        shape = check_shape(tuple(input_shape) if isinstance(input_shape, list) else input_shape, "input_shape")
        theta32 = _scales(theta, shape, name, zero_ok).to(device)
        deviation, rot, given64 = 0.0, None, None
        if rotation is not None:
            deviation = check_rotation(rotation, math.prod(shape))
            rot = torch.as_tensor(rotation).to(device, torch.float32)
            if isinstance(rotation, torch.Tensor):
                if rotation.dtype != torch.float32:
                    given64 = rotation.detach().to("cpu", torch.float64).numpy()
            elif np.asarray(rotation).dtype != np.float32:
                given64 = np.asarray(rotation, dtype=np.float64)
        return cls(theta32, rot, _mean(mean, shape, device), deviation, given64)

    def to(self, device: str | torch.device) -> "SmoothingParameters":
        """The same parameters with their tensors on `device`: itself when they are there already (no check: the
        values were checked where they were made).

        Parameters
        ----------
        device : str or torch.device
            Where the tensors are to be.

        Returns
        -------
        SmoothingParameters
        """
        device = torch.device(device)
        if self.theta.device == device:
            return self
        moved = [None if t is None else t.to(device) for t in (self.theta, self.rotation, self.mean)]
        return SmoothingParameters(*moved, self.deviation, self.given64)

    @property
    def scales(self) -> np.ndarray:
        """θ as a flat float64 vector, shape (n,): the region's scales (semi-axes per unit of gap)."""
        return self.theta.detach().to("cpu", torch.float64).numpy().reshape(-1)

    @property
    def rotation64(self) -> np.ndarray | None:
        """U as a float64 array, shape (n, n), or None: as given (`given64`), else the float32 U in float64."""
        if self.rotation is None or self.given64 is not None:
            return self.given64
        return self.rotation.detach().to("cpu", torch.float64).numpy()


def _scales(theta: object, shape: tuple[int, ...], name: str, zero_ok: bool) -> torch.Tensor:
    """θ as a float32 tensor of `shape`: finite and > 0 (>= 0 with zero_ok) after the cast to float32."""
    check_real(theta, name)  # a bool, str, complex or None scale
    if zero_ok:
        t = check_finite_tensor(theta, name)
        if t.ndim == 0:
            t = t.expand(shape)
        if tuple(t.shape) != shape:
            raise ValueError(f"{name} must be a scalar or have the input's shape {shape}, got shape {tuple(t.shape)}")
        t32 = t.to(torch.float32)
        if not bool((t32 >= 0).all()) or not bool(torch.isfinite(t32).all()):
            raise ValueError(f"{name} must be finite and >= 0 in float32 in every dimension")
        return t32
    try:
        t = check_scale(theta, shape, name)
    except RuntimeError as e:  # torch.full's "value cannot be converted to type float without overflow"
        raise ValueError(f"{name} must be finite and > 0 in float32 (the noise's precision, at most "
                         f"{torch.finfo(torch.float32).max:.4g}), got {theta!r}") from e
    t32 = t.to(torch.float32)
    if not (bool(torch.isfinite(t32).all()) and bool((t32 > 0).all())):
        if isinstance(theta, (int, float, np.number)) or getattr(theta, "ndim", None) == 0:
            # one value, > 0 and below float32's largest (check_scale, torch.full): it underflows
            raise ValueError(f"{name} must be finite and > 0 in float32 (the noise's precision), but {name} = "
                             f"{theta!r} underflows to 0 when cast to float32")
        how = "overflow to inf" if bool(torch.isinf(t32).any()) else "underflow to 0"
        raise ValueError(f"{name} must be finite and > 0 in float32 (the noise's precision), but values of {name} in "
                         f"[{float(t.min()):.4g}, {float(t.max()):.4g}] {how} when cast to float32")
    return t32


def _mean(mean: object, shape: tuple[int, ...], device: str | torch.device) -> torch.Tensor | None:
    """μ as a float32 tensor broadcastable to `shape`, or None."""
    if mean is None:
        return None
    if not isinstance(mean, torch.Tensor):
        raise TypeError(f"mean must be None or a tensor broadcastable to {shape}, got {type(mean).__name__}")
    fits = len(mean.shape) <= len(shape) and all(s in (1, t) for s, t in zip(reversed(mean.shape), reversed(shape)))
    if not fits or not mean.is_floating_point():
        raise ValueError(f"mean must be a real floating-point tensor broadcastable to {shape}, got shape "
                         f"{tuple(mean.shape)} and dtype {mean.dtype}")
    check_finite_tensor(mean, "mean")
    return mean.to(device, torch.float32)
