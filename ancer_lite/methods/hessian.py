"""The input Hessian of a base classifier and the landscape along its eigenvectors: of the cross-entropy
(RANCER Algorithm 1's rotation, RANCER Eq. 4) or of the class probability f^y itself (ANCER Figure 4,
App. A.1, whose eigenvectors are ordered by |λ|, `eigen_directions(order="magnitude")`).

For a network with piecewise-linear activations (ReLU) the logits are locally linear in the input,
so the Hessian of the cross-entropy is J^T (diag(p) - p p^T) J with J the (K x n) logit Jacobian: its
rank is at most K - 1 (K classes), and its eigenvectors beyond the first K - 1 carry no information.
A smooth activation (softplus) gives the Hessian full rank, which is why Figure 4 needs one.
"""
from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F

from ..core import devices
from ..core.base_classifier import checked_logits, eval_mode
from ..core.reproducibility import torch_threads
from ..core.validation import check_class_index, check_count, check_finite_tensor, check_nonnegative, check_positive

#: how far h may be from its transpose (relative to its largest entry) and still count as symmetric
#: (`input_hessian` returns an exactly symmetric matrix; eigh reads one triangle only)
SYMMETRY_RTOL = 1e-8


#: what `input_hessian` differentiates: the cross-entropy -log f^y (RANCER) or the probability f^y (ANCER Figure 4)
OF_LOSS, OF_PROBABILITY = "loss", "probability"


def input_hessian(model: torch.nn.Module, x: torch.Tensor, label: int | None = None,
                  device: str | torch.device | None = None, of: str = OF_LOSS) -> np.ndarray:
    """Hessian (n x n, float64) with respect to the flattened input x (one input, shape input_shape) of
    `of`: "loss", the cross-entropy -log f^y(x) (RANCER Algorithm 1), or "probability", the softmax
    probability f^y(x) itself (ANCER App. A.1, Figure 4), where y is `label` (default: the predicted class,
    as RANCER prescribes; ANCER's Figure 4 takes the true label of a correctly classified x). On the CPU it is
    computed on one torch thread (the caller's count restored after), so that it does not depend on that count.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier, mapping (B, *input_shape) to logits (B, K); it is copied to float64, the model
        itself is left untouched and stays where it is.
    x : torch.Tensor, shape input_shape
        One finite input without a batch dimension (pixels in [0, 1] for the image data sets); n = x.numel().
    label : int, optional
        The class y, a class index of the model; None: the class the model predicts at x.
    device : str or torch.device, optional
        Where the Hessian is computed (`devices.resolve`: "auto", "cpu" or a CUDA device); the float64 copy of
        the model goes there. None: where the model is.
    of : str
        `OF_LOSS` ("loss", the cross-entropy -log f^y(x)) or `OF_PROBABILITY` ("probability", f^y(x)).

    Returns
    -------
    numpy.ndarray of float64, shape (n, n)
        The exactly symmetric Hessian with respect to the flattened x, a NumPy array on the CPU.

    Raises
    ------
    ValueError
        If `of` is neither "loss" nor "probability", or x is not finite.
    TypeError
        If model is not a torch module."""
    _check_model(model)
    check_finite_tensor(x, "x")
    if of not in (OF_LOSS, OF_PROBABILITY):
        raise ValueError(f"of must be {OF_LOSS!r} (the cross-entropy) or {OF_PROBABILITY!r} (f^y), got {of!r}")
    dev = devices.resolve(device) if device is not None else (
        devices.model_device(model) if isinstance(model, torch.nn.Module) else None)
    shape = tuple(x.shape)
    flat = x.detach().reshape(-1).to(dev, torch.float64)
    m = copy.deepcopy(model).double().eval()  # float64 for the second derivatives; the model is untouched
    if dev is not None:
        m.to(dev)
    with torch.no_grad():
        logits = checked_logits(m, flat.view(1, *shape))
    if label is None:
        label = int(logits.argmax(1))
    else:
        check_class_index(label, "label", logits.shape[1])
    target = torch.tensor([int(label)], device=flat.device)

    def loss(v: torch.Tensor) -> torch.Tensor:
        logits = checked_logits(m, v.view(1, *shape))
        if of == OF_PROBABILITY:
            return torch.softmax(logits, dim=1)[0, target[0]]
        return F.cross_entropy(logits, target)

    # on the CPU, one thread: the result then does not depend on the caller's thread count, and a second thread
    # gains nothing here (the n double backward passes run as thousands of small per-example operations: 0.15 s on
    # one thread and on two for notebook 06's MNIST CNN)
    with torch_threads(1 if flat.device.type == "cpu" else None):
        h = torch.autograd.functional.hessian(loss, flat, vectorize=True).detach().cpu().numpy()
    return 0.5 * (h + h.T)


def _check_model(model: torch.nn.Module) -> None:
    if not (callable(model) and hasattr(model, "double")):
        raise TypeError(f"model must be a torch.nn.Module (it is copied to float64), got {type(model).__name__}")


def _check_symmetric(h: np.ndarray, name: str = "h") -> np.ndarray:
    """A finite, non-empty, square and symmetric 2-D matrix (up to SYMMETRY_RTOL of its largest entry)."""
    a = np.asarray(h)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square 2-D matrix, got shape {a.shape}")
    if a.dtype.kind not in "iufc":
        raise ValueError(f"{name} must be a numeric matrix, got dtype {a.dtype}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must contain only finite values (found NaN or Inf)")
    asym = float(np.abs(a - a.conj().T).max())
    if asym > SYMMETRY_RTOL * float(np.abs(a).max()):
        raise ValueError(f"{name} must be symmetric (only one triangle would be read); max |h - h^T| is {asym:.3g}")
    return a


def numerical_rank(h: np.ndarray, rtol: float = 1e-8) -> int:
    """Number of eigenvalues of the symmetric h above rtol times the largest in magnitude.

    Parameters
    ----------
    h : numpy.ndarray, shape (n, n)
        A finite, square, symmetric, non-empty matrix (e.g. from `input_hessian`).
    rtol : float
        Finite, >= 0: the threshold on |eigenvalue| relative to the largest |eigenvalue|.

    Returns
    -------
    int
        The number of eigenvalues whose magnitude exceeds rtol times the largest magnitude; 0 when h is zero."""
    _check_symmetric(h)
    check_nonnegative(rtol, "rtol")
    w = np.abs(np.linalg.eigvalsh(h))
    return int((w > rtol * w.max()).sum()) if w.max() > 0 else 0


#: `eigen_directions` orders: by signed value (RANCER: the largest curvature of the loss first) or by |λ|
#: (ANCER App. A.1: "ordered in descending order of the absolute value of the respective eigenvalues")
BY_VALUE, BY_MAGNITUDE = "value", "magnitude"


def eigen_directions(h: np.ndarray, order: str = BY_VALUE) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues and the matching unit eigenvectors as columns (ν1 first), in decreasing order of the
    eigenvalue (`order="value"`, RANCER) or of its absolute value (`order="magnitude"`, ANCER App. A.1's
    Figure 4, where ν1, ν2 are the largest |λ| and νn the smallest); ties in reverse of eigh's order.

    Parameters
    ----------
    h : numpy.ndarray, shape (n, n)
        A finite, square, symmetric, non-empty matrix (e.g. from `input_hessian`).
    order : str
        `BY_VALUE` ("value": decreasing eigenvalue) or `BY_MAGNITUDE` ("magnitude": decreasing |eigenvalue|).

    Returns
    -------
    eigenvalues : numpy.ndarray, shape (n,)
        The eigenvalues of h in the chosen order.
    eigenvectors : numpy.ndarray, shape (n, n)
        The matching unit eigenvectors as columns: column i belongs to eigenvalues[i]."""
    _check_symmetric(h)
    if order not in (BY_VALUE, BY_MAGNITUDE):
        raise ValueError(f"order must be {BY_VALUE!r} or {BY_MAGNITUDE!r}, got {order!r}")
    w, v = np.linalg.eigh(h)
    key = w if order == BY_VALUE else np.abs(w)
    idx = np.argsort(key)[::-1]
    return w[idx], v[:, idx]


@torch.no_grad()
def landscape(model: torch.nn.Module, x: torch.Tensor, label: int, u: np.ndarray, v: np.ndarray,
              half_width: float, resolution: int = 121) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """f^label(x + a u + b v), the softmax probability of `label`, on a square grid of (a, b) in
    [-half_width, half_width]^2. The model is run where it is (`devices.model_device`); the grid is built on
    the CPU.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier, mapping (B, *input_shape) to logits (B, K); run in eval mode.
    x : torch.Tensor, shape input_shape
        One finite input without a batch dimension, the centre of the grid.
    label : int
        A class index of the model, whose softmax probability is evaluated.
    u, v : numpy.ndarray, x.numel() entries each (e.g. shape (n,))
        Finite directions in the flattened input space (e.g. eigenvectors from `eigen_directions`), reshaped to
        x's shape.
    half_width : float
        Finite, > 0: the grid spans [-half_width, half_width] in a and in b (input units, the scale of x).
    resolution : int
        The number of grid points along each axis, >= 2.

    Returns
    -------
    a_grid, b_grid : numpy.ndarray of float64, shape (resolution, resolution)
        The coefficients a (varying along columns) and b (varying along rows), as `numpy.meshgrid` gives them.
    probabilities : numpy.ndarray, shape (resolution, resolution), of the logits' dtype
        f^label(x + a u + b v) at each grid point, NumPy arrays on the CPU."""
    check_finite_tensor(x, "x")
    for name, d in (("u", u), ("v", v)):
        a = np.asarray(d)
        if a.size != x.numel() or a.dtype.kind not in "iuf" or not np.isfinite(a).all():
            raise ValueError(f"{name} must hold x.numel() = {x.numel()} finite numbers, "
                             f"got {a.size} of dtype {a.dtype}")
    check_positive(half_width, "half_width")
    check_count(resolution, "resolution", 2)
    check_class_index(label, "label")  # and below the number of classes, once the model has given its logits
    g = np.linspace(-half_width, half_width, resolution)
    aa, bb = np.meshgrid(g, g)
    d = aa.reshape(-1, 1) * np.asarray(u).reshape(1, -1) + bb.reshape(-1, 1) * np.asarray(v).reshape(1, -1)
    pts = x.detach().cpu().reshape(1, -1) + torch.from_numpy(d.astype(np.float32))
    dev = devices.model_device(model) if isinstance(model, torch.nn.Module) else None
    with eval_mode(model):  # where the model is; the grid is built on the CPU
        logits = checked_logits(model, pts.view(-1, *x.shape).to(dev))
        check_class_index(label, "label", logits.shape[1])
        probs = torch.softmax(logits, dim=1)[:, label]
    return aa, bb, probs.cpu().numpy().reshape(aa.shape)
