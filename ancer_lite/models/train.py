"""Training base classifiers for smoothing: noise augmentation in [0, 1] pixel space, Gaussian for l2
(Cohen et al. 2019) or uniform for l1 (with RS4A's stability regularizer, the training ANCER's l1
models follow, App. E.2), a cosine or step schedule. Seeded and, with a state folder, resumable epoch by
epoch; returns the trained model in eval mode. The papers' recipes are in `recipes`."""
from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterator, Protocol

import torch
import torch.nn.functional as F

from ..core import devices
from ..core.base_classifier import checked_logits, eval_mode
from ..core.files import atomic_file
from ..core.noise import check_noise, standard_noise
from ..core.precision import EXACT, check_precision, forward_precision
from ..core.stages import TRAINING, timed
from ..core.validation import (
    check_choice,
    check_count,
    check_finite_tensor,
    check_labels,
    check_nonnegative,
    check_path,
    check_positive,
)
from .data import FolderImages

#: the learning-rate schedules: cosine annealing over every step of the run (stepped per batch), or a step schedule
#: (StepLR: the rate times gamma every step_size epochs, stepped per epoch, as Cohen et al.'s and RS4A's scripts)
COSINE, STEP = "cosine", "step"
SCHEDULES = (COSINE, STEP)
#: what the stability term compares the noisy input with: the clean input, KL(f(x) || f(x + ε)), or a second noisy
#: draw as RS4A's src/train.py (and the ANCER authors' l1 scripts) do, KL(f(x + ε1) || f(x + ε2))
CLEAN_PAIR, NOISY_PAIR = "clean", "noisy"
STABILITY_PAIRS = (CLEAN_PAIR, NOISY_PAIR)
#: data augmentation before the noise: none, or Cohen et al.'s and RS4A's CIFAR-10 transforms (a random 32 x 32 crop of
#: the image zero-padded by 4 pixels, then a horizontal flip with probability 1/2; `crop_flip`)
NO_AUGMENT, CROP_FLIP = "none", "crop_flip"
AUGMENTATIONS = (NO_AUGMENT, CROP_FLIP)
#: the file a resumable run keeps in its state folder (`save_training_state`)
STATE_FILE = "state.pt"


class Stateful(Protocol):
    """A part of a training run whose state a resumable run saves and restores: a module or an optimizer."""

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> object:
        """Restore the part, in place, from a state its `state_dict` returned (`load_training_state`).

        Parameters
        ----------
        state : dict
            The part's state, as `state_dict` returned it and `save_training_state` saved it (loaded on the CPU).

        Returns
        -------
        object
            Whatever the part's own `load_state_dict` returns (a module's: its missing and unexpected keys); unused.
        """
        ...


@timed(TRAINING)
def train_classifier(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, noise: str | None = None,
                     scale: float = 0.0, epochs: int = 30, batch_size: int = 128, lr: float = 1e-2,
                     momentum: float = 0.9, weight_decay: float = 5e-4, stability: float = 0.0,
                     seed: int = 0, device: str | torch.device | None = None, *, schedule: str = COSINE,
                     step_size: int = 30, gamma: float = 0.1, nesterov: bool = False,
                     state_dir: str | Path | None = None, precision: str = EXACT,
                     progress: Callable[[int, int], None] | None = None, stability_pair: str = CLEAN_PAIR,
                     augment: str = NO_AUGMENT) -> torch.nn.Module:
    """Train a base classifier for smoothing: SGD with momentum and a cosine or step schedule on noise-augmented inputs.

    Each batch gets fresh noise in [0, 1] pixel space: Gaussian (Cohen et al. 2019) or uniform; noise=None trains on
    clean data. stability > 0 adds a stability term to the noisy cross-entropy CE(f(x + ε1)) (the training ANCER's l1
    models follow, App. E.2): stability * KL(softmax f(x) || softmax f(x + ε1)) against the clean input
    (`stability_pair` "clean"), or stability * KL(softmax f(x + ε1) || softmax f(x + ε2)) against a second,
    independent noisy copy ("noisy": RS4A's src/train.py, whose weight is 6). `augment` "crop_flip" first crops and
    flips each image at random (`crop_flip`). The model is moved to `device` before its
    optimizer is made (`sgd_setup`). The batch order and the noise are drawn on the CPU from the seeded generator
    whatever the device, and each batch is then copied to the device, so that the batches and the noise are the same
    on every device.

    With `state_dir`, the run is resumable: after each epoch the model, optimizer, scheduler and generator states and
    the epoch number are written (atomically) to `state_dir/state.pt` (`save_training_state`), and a call that finds
    that file resumes after its last finished epoch, so that a run killed and started again ends with the model of
    an uninterrupted run bit for bit (on the same device; a state of other settings is refused, naming them).

    Parameters
    ----------
    model : torch.nn.Module
        The classifier, inputs to logits (B, num_classes).
    x : torch.Tensor or data.FolderImages, shape (N, *input_shape)
        Training inputs in [0, 1], finite; a `FolderImages` is read batch by batch (images that do not fit in memory).
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
    schedule : str
        "cosine" (over every batch of the run) or "step" (times `gamma` every `step_size` epochs).
    step_size : int
        The step schedule's period in epochs, an integer >= 1.
    gamma : float
        The step schedule's factor, finite and > 0.
    nesterov : bool
        Nesterov momentum (needs momentum > 0).
    state_dir : str or os.PathLike or None
        The folder of the resumable state; None: not resumable.
    precision : str
        The forward and backward passes' arithmetic (`precision.PRECISIONS`): "exact" (float32, TF32 off), "tf32",
        "bf16" (autocast to bfloat16 on the model's device type).
    progress : callable or None
        Called as progress(epochs_done, epochs) after each epoch (and once at the start of a resumed run).
    stability_pair : str
        What the stability term compares f(x + ε1) with: "clean" (x) or "noisy" (x + ε2, a second draw).
    augment : str
        "none" or "crop_flip" (`crop_flip`, before the noise; its draws come from the same generator).

    Returns
    -------
    torch.nn.Module
        The trained model, in eval mode.
    """
    if noise is not None:
        check_noise(noise)
        check_positive(scale, "scale")
    check_nonnegative(stability, "stability")
    check_choice(stability_pair, "stability_pair", STABILITY_PAIRS)
    check_choice(augment, "augment", AUGMENTATIONS)
    check_precision(precision)
    check_labels(y, "y")
    if state_dir is not None:
        check_path(state_dir, "state_dir")
    dev = devices.place(model, device) if isinstance(model, torch.nn.Module) else None  # sgd_setup names a non-Module
    gen, opt, sched = sgd_setup(model, x, y, epochs, batch_size, lr, momentum, weight_decay, seed, schedule=schedule,
                                step_size=step_size, gamma=gamma, nesterov=nesterov)
    start = 0
    if state_dir is not None:
        settings = {"noise": noise, "scale": float(scale) if noise is not None else None, "epochs": epochs,
                    "batch_size": batch_size, "lr": float(lr), "momentum": float(momentum),
                    "weight_decay": float(weight_decay), "stability": float(stability), "seed": seed,
                    "schedule": schedule, "step_size": step_size if schedule == STEP else None,
                    "gamma": float(gamma) if schedule == STEP else None, "nesterov": bool(nesterov),
                    "precision": precision, "data_sha256": tensors_sha256(x, y), "stability_pair": stability_pair,
                    "augment": augment}
        path = Path(state_dir) / STATE_FILE
        start = load_training_state(path, model, opt, sched, gen, settings) if path.exists() else 0
        if start and progress is not None:
            progress(start, epochs)
    checked = False
    stable = stability > 0 and noise is not None
    model.train()
    for epoch in range(start, epochs):
        for xb, yb in minibatches(x, y, 1, batch_size, gen):
            if augment == CROP_FLIP:
                xb = crop_flip(xb, gen)
            # the noise on the CPU (the generator's device), added where the data lies, then the batch to the device
            xn = xb if noise is None else xb + scale * standard_noise(noise, len(xb), tuple(xb.shape[1:]),
                                                                      gen).to(xb.device)
            xn, yb = xn.to(dev), yb.to(dev)
            if stable:
                xb = (xb if stability_pair == CLEAN_PAIR else
                      xb + scale * standard_noise(noise, len(xb), tuple(xb.shape[1:]), gen).to(xb.device)).to(dev)
            with forward_precision(precision, dev):
                logits = model(xn)
                if not checked:  # once: the labels against the model's number of outputs
                    if logits.ndim == 2:
                        check_labels(y, "y", logits.shape[1])
                    checked = True
                loss = F.cross_entropy(logits.float(), yb)
                if stable:
                    other = model(xb)  # the clean input, or the second noisy copy
                    first, second = ((logits, other) if stability_pair == NOISY_PAIR else (other, logits))
                    # F.kl_div(log q, log p) = KL(p || q): KL(f(x) || f(x + ε1)) or KL(f(x + ε1) || f(x + ε2))
                    loss = loss + stability * F.kl_div(F.log_softmax(second.float(), 1),
                                                       F.log_softmax(first.float(), 1),
                                                       log_target=True, reduction="batchmean")
            opt.zero_grad()
            with forward_precision(precision, dev):  # the backward pass in the same arithmetic
                loss.backward()
            opt.step()
            if schedule == COSINE:
                sched.step()
        if schedule == STEP:
            sched.step()
        if state_dir is not None:
            save_training_state(path, epoch + 1, model, opt, sched, gen, settings)
        if progress is not None:
            progress(epoch + 1, epochs)
    return model.eval()


def crop_flip(x: torch.Tensor, gen: torch.Generator, padding: int = 4) -> torch.Tensor:
    """Cohen et al.'s and RS4A's CIFAR-10 training transforms on a batch: each image zero-padded by `padding` pixels on
    every side, cropped back to its size at a random offset, then flipped left-right with probability 1/2
    (torchvision's RandomCrop(size, padding) and RandomHorizontalFlip), every draw from `gen`.

    Parameters
    ----------
    x : torch.Tensor, shape (B, C, H, W)
        The images.
    gen : torch.Generator
        The source of the offsets (2 per image, uniform on 0..2 padding) and flips (1 per image), drawn in that order.
    padding : int
        The padding, >= 0.

    Returns
    -------
    torch.Tensor, shape (B, C, H, W)
        The cropped and flipped images (a new tensor).
    """
    if x.ndim != 4:
        raise ValueError(f"x must be a batch of images (B, C, H, W), got shape {tuple(x.shape)}")
    padding = check_count(padding, "padding", 0)
    b, _, h, w = x.shape
    offsets = torch.randint(0, 2 * padding + 1, (b, 2), generator=gen)
    flips = torch.rand(b, generator=gen) < 0.5
    padded = F.pad(x, (padding, padding, padding, padding))
    rows = offsets[:, :1] + torch.arange(h)                                        # (B, H)
    cols = offsets[:, 1:] + torch.where(flips[:, None], torch.arange(w - 1, -1, -1), torch.arange(w))  # (B, W)
    k = torch.arange(b)[:, None, None, None]
    return padded[k, torch.arange(x.shape[1])[None, :, None, None], rows[:, None, :, None], cols[:, None, None, :]]


def tensors_sha256(*tensors: torch.Tensor | FolderImages) -> str:
    """The SHA-256 of tensors' dtypes, shapes and bytes (in C order), one after the other; of a `FolderImages`, its
    `digest` (paths, classes and file sizes) in their place.

    Parameters
    ----------
    *tensors : torch.Tensor or data.FolderImages
        Any shapes.

    Returns
    -------
    str
        64 hex digits.
    """
    h = hashlib.sha256()
    for t in tensors:
        if isinstance(t, FolderImages):
            h.update(f"FolderImages{t.shape}{t.digest()}".encode())
            continue
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"tensors_sha256 takes tensors, got {type(t).__name__}")
        h.update(f"{t.dtype}{tuple(t.shape)}".encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def save_training_state(path: str | Path, epoch: int, model: torch.nn.Module, opt: torch.optim.Optimizer,
                        sched: torch.optim.lr_scheduler.LRScheduler, gen: torch.Generator,
                        settings: dict, extra: dict[str, Stateful] | None = None) -> None:
    """Write a training run's state after `epoch` finished epochs, atomically (`files.atomic_file`).

    The file holds the epoch, the model's, optimizer's and scheduler's state dicts, the CPU generator's state, torch's
    global CPU generator's state, the run's `settings` (what `load_training_state` checks a resumed run against) and
    the state dicts of the `extra` parts a run trains beside its model (UCAN's noise generator and its optimizer).

    Parameters
    ----------
    path : str or os.PathLike
        The state file (its folder is made).
    epoch : int
        The finished epochs, >= 1.
    model : torch.nn.Module
        The model.
    opt : torch.optim.Optimizer
        Its optimizer.
    sched : torch.optim.lr_scheduler.LRScheduler
        The optimizer's schedule.
    gen : torch.Generator
        The CPU generator of the batch order and the noise.
    settings : dict
        JSON-like settings of the run (str, int, float, bool or None values).
    extra : dict of str to Stateful, optional
        Further parts of the run by name, each with `state_dict()` and `load_state_dict()`; None: none.
    """
    check_count(epoch, "epoch")
    state = {"epoch": epoch, "model": model.state_dict(), "optimizer": opt.state_dict(),
             "scheduler": sched.state_dict(), "generator": gen.get_state(), "torch_rng": torch.get_rng_state(),
             "settings": dict(settings), "extra": {name: part.state_dict() for name, part in (extra or {}).items()}}
    with atomic_file(path, "wb") as fh:
        torch.save(state, fh)


def load_training_state(path: str | Path, model: torch.nn.Module, opt: torch.optim.Optimizer,
                        sched: torch.optim.lr_scheduler.LRScheduler, gen: torch.Generator,
                        settings: dict, extra: dict[str, Stateful] | None = None) -> int:
    """Restore a training run from the state `save_training_state` wrote; returns its finished epochs.

    Parameters
    ----------
    path : str or os.PathLike
        The state file.
    model, opt, sched, gen
        The run's model, optimizer, scheduler and CPU generator, restored in place.
    settings : dict
        The resumed run's settings; the file's must be equal.
    extra : dict of str to Stateful, optional
        The run's further parts by name, restored in place; the file must hold the same names.

    Returns
    -------
    int
        The epochs the state has finished.

    Raises
    ------
    ValueError
        Naming the file, when it is not a readable training state, or naming the settings that differ.
    """
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises EOFError, RuntimeError, UnpicklingError... on damaged files
        raise ValueError(f"{path}: not a readable training state ({type(e).__name__}: "
                         f"{str(e).splitlines()[0] if str(e) else ''}); delete it to train from the start") from e
    keys = ("epoch", "model", "optimizer", "scheduler", "generator", "torch_rng", "settings")
    if not isinstance(state, dict) or any(k not in state for k in keys):
        raise ValueError(f"{path}: not a training state (expected the keys {list(keys)}); delete it to train from "
                         "the start")
    parts, held_parts = dict(extra or {}), state.get("extra", {})  # a state without "extra" has no further parts
    if sorted(held_parts) != sorted(parts):
        raise ValueError(f"{path} is the state of another kind of training run: it holds the parts "
                         f"{sorted(held_parts)} beside the model, this run trains {sorted(parts)}; delete "
                         f"{path.parent} to train from the start")
    held = state["settings"]
    diff = sorted(k for k in set(held) | set(settings) if held.get(k) != settings.get(k))
    if diff:
        shown = ", ".join(f"{k} (state: {held.get(k)!r}, now: {settings.get(k)!r})" for k in diff)
        raise ValueError(f"{path} is the state of another training run: it differs in {shown}; delete "
                         f"{path.parent} to train from the start")
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    for name, part in parts.items():
        part.load_state_dict(held_parts[name])
    gen.set_state(state["generator"])
    torch.set_rng_state(state["torch_rng"])
    return int(state["epoch"])


def minibatches(x: torch.Tensor | FolderImages, y: torch.Tensor, epochs: int, batch_size: int,
                gen: torch.Generator) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """`epochs` passes over (x, y) in batches of `batch_size`, each pass in a fresh random order drawn from `gen`.

    Each pass's order is drawn lazily, so the noise a caller draws from `gen` in between keeps its place in the stream.
    From a `data.FolderImages` each batch is decoded while the caller trains on the one before (within a pass, whose
    order is drawn already), so that reading images and training overlap.

    Parameters
    ----------
    x : torch.Tensor or data.FolderImages, shape (N, *input_shape)
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
        batches = [perm[start:start + batch_size] for start in range(0, len(x), batch_size)]
        if not isinstance(x, FolderImages):
            for i in batches:
                yield x[i], y[i]
            continue
        with ThreadPoolExecutor(1) as ahead:  # the next batch's images decoded while this one trains
            pending = ahead.submit(x.__getitem__, batches[0])
            for k, i in enumerate(batches):
                xb = pending.result()
                if k + 1 < len(batches):
                    pending = ahead.submit(x.__getitem__, batches[k + 1])
                yield xb, y[i]


def sgd_setup(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, epochs: int, batch_size: int, lr: float,
              momentum: float = 0.9, weight_decay: float = 5e-4, seed: int = 0, *, schedule: str = COSINE,
              step_size: int = 30, gamma: float = 0.1, nesterov: bool = False
              ) -> tuple[torch.Generator, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    """The training recipe's checks and state: a seeded generator, torch's global seed, SGD and its schedule.

    The generator is seeded with `seed` (the batch order and the noise), torch's global seed is set to `seed`. The
    cosine schedule spans every step of `epochs` passes in batches of `batch_size` (step it per batch); the step
    schedule multiplies the rate by `gamma` every `step_size` epochs (step it per epoch).

    Parameters
    ----------
    model : torch.nn.Module
        The classifier to train.
    x : torch.Tensor or data.FolderImages, shape (N, *input_shape)
        Training inputs, finite (a `FolderImages`' decoded images are by construction, so they are not read here).
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
    schedule : str
        One of `SCHEDULES`: "cosine" or "step".
    step_size : int
        The step schedule's period in epochs, an integer >= 1.
    gamma : float
        The step schedule's factor, finite and > 0.
    nesterov : bool
        Nesterov momentum (needs momentum > 0).

    Returns
    -------
    gen : torch.Generator
        The seeded CPU generator.
    opt : torch.optim.Optimizer
        SGD with momentum and weight decay over the model's parameters.
    sched : torch.optim.lr_scheduler.LRScheduler
        CosineAnnealingLR over all the steps, or StepLR(step_size, gamma).
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    check_count(epochs, "epochs")
    check_count(batch_size, "batch_size")
    check_positive(lr, "lr")
    # momentum = nan or a NaN pixel would train a model with NaN weights without a word
    check_nonnegative(momentum, "momentum")
    check_nonnegative(weight_decay, "weight_decay")
    check_choice(schedule, "schedule", SCHEDULES)
    check_count(step_size, "step_size")
    check_positive(gamma, "gamma")
    if not isinstance(nesterov, bool):
        raise TypeError(f"nesterov must be a bool, got {type(nesterov).__name__} {nesterov!r}")
    if nesterov and momentum == 0:
        raise ValueError("nesterov = True needs momentum > 0, got momentum = 0")
    if not isinstance(x, FolderImages):
        check_finite_tensor(x, "x")
    if len(x) != len(y):
        raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov)
    if schedule == STEP:
        return gen, opt, torch.optim.lr_scheduler.StepLR(opt, step_size, gamma)
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
