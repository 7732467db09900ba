"""Training base classifiers for smoothing: noise augmentation in [0, 1] pixel space, Gaussian for l2
(Cohen et al. 2019) or uniform for l1 (with RS4A's stability regularizer, the training ANCER's l1
models follow, App. E.2). Seeded; returns the trained model in eval mode."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable, Iterator

import torch
import torch.nn.functional as F

from ..core import devices
from ..core.base_classifier import checked_logits, eval_mode
from ..core.files import atomic_file
from ..core.noise import check_noise, standard_noise
from ..core.stages import TRAINING, timed
from ..core.validation import (
    check_count,
    check_finite_tensor,
    check_labels,
    check_nonnegative,
    check_path,
    check_positive,
)


@timed(TRAINING)
def train_classifier(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, noise: str | None = None,
                     scale: float = 0.0, epochs: int = 30, batch_size: int = 128, lr: float = 1e-2,
                     momentum: float = 0.9, weight_decay: float = 5e-4, stability: float = 0.0,
                     seed: int = 0, device: str | torch.device | None = None) -> torch.nn.Module:
    """Train a base classifier for smoothing: SGD with momentum and a cosine schedule on noise-augmented inputs.

    Each batch gets fresh noise in [0, 1] pixel space: Gaussian (Cohen et al. 2019) or uniform; noise=None trains on
    clean data. stability > 0 adds RS4A's stability term stability * KL(softmax f(x) || softmax f(x + eps)) to the
    noisy cross-entropy (the training ANCER's l1 models follow, App. E.2). The model is moved to `device` before its
    optimizer is made (`sgd_setup`). The batch order and the noise are drawn on the CPU from the seeded generator
    whatever the device, and each batch is then copied to the device, so that the batches and the noise are the same
    on every device.

    Parameters
    ----------
    model : torch.nn.Module
        The classifier, inputs to logits (B, num_classes).
    x : torch.Tensor, shape (N, *input_shape)
        Training inputs in [0, 1], finite.
    y : torch.Tensor, shape (N,)
        Integer class labels, >= 0 and below the model's number of outputs (checked on the first batch's logits).
    noise : str or None
        A noise name (`noise.check_noise`, e.g. 'gaussian' or 'uniform'); None: no noise.
    scale : float
        The noise's scale: σ for Gaussian, λ for uniform; finite and > 0 when noise is given.
    epochs : int
        Passes over the data, an integer >= 1.
    batch_size : int
        An integer >= 1.
    lr : float
        The initial learning rate, > 0.
    momentum : float
        SGD's momentum, finite and >= 0.
    weight_decay : float
        Finite and >= 0.
    stability : float
        The stability term's weight, finite and >= 0 (used only with noise).
    seed : int
        Seeds the batch order and the noise (`sgd_setup`).
    device : str or torch.device or None
        Where the model trains (`devices.resolve`: "auto", "cpu" or a CUDA device); None: where the model is.

    Returns
    -------
    torch.nn.Module
        The trained model, in eval mode.
    """
    if noise is not None:
        check_noise(noise)
        check_positive(scale, "scale")
    check_nonnegative(stability, "stability")
    check_labels(y, "y")
    dev = devices.place(model, device) if isinstance(model, torch.nn.Module) else None  # sgd_setup names a non-Module
    gen, opt, sched = sgd_setup(model, x, y, epochs, batch_size, lr, momentum, weight_decay, seed)
    checked = False
    model.train()
    for xb, yb in minibatches(x, y, epochs, batch_size, gen):
        # the noise on the CPU (the generator's device), added where the data lies, then the batch to the device
        xn = xb if noise is None else xb + scale * standard_noise(noise, len(xb), tuple(xb.shape[1:]), gen).to(xb.device)
        xn, yb = xn.to(dev), yb.to(dev)
        if stability > 0 and noise is not None:
            xb = xb.to(dev)
        logits = model(xn)
        if not checked:  # once: the labels against the model's number of outputs
            if logits.ndim == 2:
                check_labels(y, "y", logits.shape[1])
            checked = True
        loss = F.cross_entropy(logits, yb)
        if stability > 0 and noise is not None:
            clean = model(xb)
            loss = loss + stability * F.kl_div(F.log_softmax(logits, 1), F.log_softmax(clean, 1),
                                               log_target=True, reduction="batchmean")
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return model.eval()


def minibatches(x: torch.Tensor, y: torch.Tensor, epochs: int, batch_size: int,
                gen: torch.Generator) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """`epochs` passes over (x, y) in batches of `batch_size`, each pass in a fresh random order drawn from `gen`.

    Each pass's order is drawn lazily, so the noise a caller draws from `gen` in between keeps its place in the stream.

    Parameters
    ----------
    x : torch.Tensor, shape (N, *input_shape)
        The inputs.
    y : torch.Tensor, shape (N,)
        The labels.
    epochs : int
        The number of passes.
    batch_size : int
        The batch size (the last batch of a pass may be smaller).
    gen : torch.Generator
        The source of the orders.

    Yields
    ------
    xb : torch.Tensor, shape (b, *input_shape)
        A batch of inputs, b <= batch_size.
    yb : torch.Tensor, shape (b,)
        Their labels.
    """
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=gen)
        for start in range(0, len(x), batch_size):
            i = perm[start:start + batch_size]
            yield x[i], y[i]


def sgd_setup(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, epochs: int, batch_size: int, lr: float,
              momentum: float = 0.9, weight_decay: float = 5e-4, seed: int = 0
              ) -> tuple[torch.Generator, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    """The training recipe's checks and state: a seeded generator, torch's global seed, SGD and a cosine schedule.

    The generator is seeded with `seed` (the batch order and the noise), torch's global seed is set to `seed`, and
    the cosine schedule spans every step of `epochs` passes in batches of `batch_size`.

    Parameters
    ----------
    model : torch.nn.Module
        The classifier to train.
    x : torch.Tensor, shape (N, *input_shape)
        Training inputs, finite.
    y : torch.Tensor, shape (N,)
        One label per input.
    epochs : int
        An integer >= 1.
    batch_size : int
        An integer >= 1.
    lr : float
        The initial learning rate, > 0.
    momentum : float
        Finite and >= 0 (a NaN would train a model with NaN weights without a word).
    weight_decay : float
        Finite and >= 0.
    seed : int
        The seed.

    Returns
    -------
    gen : torch.Generator
        The seeded CPU generator.
    opt : torch.optim.Optimizer
        SGD with momentum and weight decay over the model's parameters.
    sched : torch.optim.lr_scheduler.LRScheduler
        CosineAnnealingLR over all the steps.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    check_count(epochs, "epochs")
    check_count(batch_size, "batch_size")
    check_positive(lr, "lr")
    # momentum = nan or a NaN pixel would train a model with NaN weights without a word
    check_nonnegative(momentum, "momentum")
    check_nonnegative(weight_decay, "weight_decay")
    check_finite_tensor(x, "x")
    if len(x) != len(y):
        raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    steps = epochs * ((len(x) + batch_size - 1) // batch_size)
    return gen, opt, torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)


@torch.no_grad()
def accuracy(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, noise: str | None = None,
             scale: float = 0.0, seed: int = 0) -> float:
    """Top-1 accuracy of the base classifier, on clean inputs or under one draw of noise.

    It is computed where the model is (`devices.model_device`); the noise is drawn on the CPU from a generator seeded
    with `seed`.

    Parameters
    ----------
    model : torch.nn.Module
        The classifier, inputs to logits (N, num_classes).
    x : torch.Tensor, shape (N, *input_shape)
        The inputs.
    y : torch.Tensor, shape (N,)
        One label per input.
    noise : str or None
        A noise name (`noise.check_noise`); None: clean inputs.
    scale : float
        The noise's scale, finite and > 0 when noise is given.
    seed : int
        Seeds the noise.

    Returns
    -------
    float
        The fraction of inputs classified correctly.
    """
    if noise is not None:
        check_noise(noise)
        check_positive(scale, "scale")
    if len(x) != len(y):
        raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    gen = torch.Generator().manual_seed(seed)
    xn = x if noise is None else x + scale * standard_noise(noise, len(x), tuple(x.shape[1:]), gen).to(x.device)
    dev = devices.model_device(model) if isinstance(model, torch.nn.Module) else None
    with eval_mode(model):
        pred = checked_logits(model, xn.to(dev)).argmax(1).cpu()
        return float((pred == (y.cpu() if isinstance(y, torch.Tensor) else y)).float().mean())



def model_fingerprint(model: torch.nn.Module) -> str:
    """A short hash of a model's parameters and buffers (names, shapes and values).

    Parameters
    ----------
    model : torch.nn.Module
        The model.

    Returns
    -------
    str
        The first 12 hex digits of the SHA-256 of its state dict.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:12]


def train_cached(path: str | Path, build: Callable[[], torch.nn.Module], fit: Callable[[torch.nn.Module], torch.nn.Module]) -> torch.nn.Module:
    """Load the state dict cached at `path` into build(), or train with fit(build()) and cache it (atomically).

    Delete the file to retrain.

    Parameters
    ----------
    path : str or os.PathLike
        The cache file.
    build : callable
        () -> a new torch.nn.Module.
    fit : callable
        torch.nn.Module -> the trained torch.nn.Module.

    Returns
    -------
    torch.nn.Module
        The model, in eval mode.

    Raises
    ------
    TypeError
        When build or fit is not callable or does not return a torch.nn.Module.
    """
    path = Path(check_path(path, "path"))
    for name, fn in (("build", build), ("fit", fit)):
        if not callable(fn):
            raise TypeError(f"{name} must be a callable returning a torch.nn.Module, got {type(fn).__name__}")
    model = build()
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"build must return a torch.nn.Module, got {type(model).__name__}")
    if path.exists():
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
            model.load_state_dict(state)
        except Exception as e:  # torch's message suggests weights_only=False and never names the file
            raise ValueError(f"the cached model {path} cannot be loaded into {type(model).__name__} "
                             f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); delete it to "
                             "retrain") from e
        return model.eval()
    model = fit(model)
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"fit must return a torch.nn.Module, got {type(model).__name__}")
    with atomic_file(path, "wb") as fh:
        torch.save(model.state_dict(), fh)
    return model.eval()
