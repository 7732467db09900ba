"""The input Hessian of a base classifier's loss and the landscape along its eigenvectors (ANCER
Figure 4, §7.3; RANCER's rotation uses the same eigenvectors).

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

from .base_classifier import checked_logits, eval_mode
from .validation import check_class_index


def input_hessian(model: torch.nn.Module, x: torch.Tensor, label: int | None = None) -> np.ndarray:
    """Hessian (n x n, float64) of the cross-entropy of model(x) with `label` (default: the predicted
    class, as RANCER prescribes) with respect to the flattened input x (one input, shape input_shape)."""
    shape = tuple(x.shape)
    flat = x.detach().reshape(-1).to(torch.float64)
    m = copy.deepcopy(model).double().eval()  # float64 for the second derivatives; the model is untouched
    with torch.no_grad():
        logits = checked_logits(m, flat.view(1, *shape))
    if label is None:
        label = int(logits.argmax(1))
    else:
        check_class_index(label, "label", logits.shape[1])
    target = torch.tensor([int(label)])

    def loss(v: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(checked_logits(m, v.view(1, *shape)), target)

    h = torch.autograd.functional.hessian(loss, flat, vectorize=True).detach().numpy()
    return 0.5 * (h + h.T)


def numerical_rank(h: np.ndarray, rtol: float = 1e-8) -> int:
    """Number of eigenvalues of the symmetric h above rtol times the largest in magnitude."""
    w = np.abs(np.linalg.eigvalsh(h))
    return int((w > rtol * w.max()).sum()) if w.max() > 0 else 0


def eigen_directions(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues in decreasing order and the matching unit eigenvectors as columns (ν1 first)."""
    w, v = np.linalg.eigh(h)
    order = np.argsort(w)[::-1]
    return w[order], v[:, order]


@torch.no_grad()
def landscape(model: torch.nn.Module, x: torch.Tensor, label: int, u: np.ndarray, v: np.ndarray,
              half_width: float, resolution: int = 121) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """f^label(x + a u + b v), the softmax probability of `label`, on a square grid of (a, b) in
    [-half_width, half_width]^2. Returns (a grid, b grid, probabilities), each (resolution, resolution)."""
    g = np.linspace(-half_width, half_width, resolution)
    aa, bb = np.meshgrid(g, g)
    d = aa.reshape(-1, 1) * np.asarray(u).reshape(1, -1) + bb.reshape(-1, 1) * np.asarray(v).reshape(1, -1)
    pts = x.reshape(1, -1) + torch.from_numpy(d.astype(np.float32))
    with eval_mode(model):
        probs = torch.softmax(checked_logits(model, pts.view(-1, *x.shape)), dim=1)[:, label]
    return aa, bb, probs.numpy().reshape(aa.shape)
