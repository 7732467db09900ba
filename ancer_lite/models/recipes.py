"""The papers' training recipes for the base classifiers, by name (`RECIPES`), and `train_recipe` to run one.

A recipe is the dataset, the architecture, the noise (Gaussian for l2 certificates, uniform for l1), the optimizer
and its schedule; each says in its `source` where every value comes from: ANCER App. E (E.1 for the l2 ResNet-18
on CIFAR-10, E.2 for the l1 WideResNet-40 and ResNet-50), the ANCER authors' training scripts
(MotasemAlfarra/ANCER `scripts/train_l1_models/`, which follow RS4A's `src/train.py`), Cohen et al.'s `code/train.py`
(locuslab/smoothing) where the paper is silent, or this companion's own choice (Fashion-MNIST and the quick data,
which no paper trains on).

Conventions shared by every recipe:

- σ is the noise's standard deviation in [0, 1] pixel space: Gaussian noise of std σ, or uniform noise on
  [-λ, λ] with λ = √3 σ (`noise.uniform_lambda`; the ANCER scripts' printed λ = σ / √3 is their other convention).
- The stability term is `train.train_classifier`'s: CE(f(x + ε1)) + stability × KL(f(x + ε1) || f(x + ε2)) between
  two independent noisy draws, as the RS4A and ANCER l1 scripts compute it (`stability_pair` "noisy", the papers'
  l1 recipes), or × KL(f(x) || f(x + ε1)) against the clean input ("clean": the quick profile's own models).
- CIFAR-10's recipes crop and flip each training image at random before the noise (`augment` "crop_flip", as
  Cohen et al.'s and RS4A's data loaders do). ImageNet's take the images as the loader holds them (a fixed resize
  and centre crop): the scripts' random resized crops are not applied.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import torch

from ..core.families import FAMILIES
from ..core.names import GAUSSIAN, UNIFORM
from ..core.precision import EXACT
from ..core.validation import check_choice, check_count, check_nonnegative, check_positive
from .architectures import ARCHITECTURES, NUM_CLASSES, get_architecture
from .small import SmallCNN
from .train import (
    AUGMENTATIONS,
    CLEAN_PAIR,
    COSINE,
    CROP_FLIP,
    NO_AUGMENT,
    NOISY_PAIR,
    SCHEDULES,
    STABILITY_PAIRS,
    STEP,
    train_classifier,
)

#: every dataset a recipe trains on and one image's shape (channels, height, width), as the loaders return it
INPUT_SHAPES: dict[str, tuple[int, int, int]] = {
    "cifar10": (3, 32, 32),
    "imagenet": (3, 224, 224),
    "fmnist": (1, 28, 28),
    "digits": (1, 8, 8),
    "mnist": (1, 28, 28),
}
#: the quick data's architectures (`models.small`), built for the dataset's shape; their checkpoints hold the bare
#: network's state dict, which `ancer-certify certify` reads for digits and mnist
QUICK_ARCHITECTURES = ("small_cnn",)
#: the noise of each recipe: Gaussian for l2 certificates, uniform for l1
NOISES = (GAUSSIAN, UNIFORM)

_COHEN = "Cohen et al.'s code/train.py (locuslab/smoothing)"
_ANCER_WRN = "the ANCER authors' scripts/train_l1_models/train_wideresnet_cifar10.py (following RS4A's src/train.py)"
_ANCER_R50 = "the ANCER authors' scripts/train_l1_models/train_resnet50_imagenet.py (following RS4A's src/train.py)"


@dataclass(frozen=True)
class Recipe:
    """A named training recipe of a base classifier.

    Parameters
    ----------
    name : str
        The recipe's name (a key of `RECIPES`).
    dataset : str
        The dataset it trains on, one of `INPUT_SHAPES`.
    arch : str
        An architecture of `architectures.ARCHITECTURES` built for `dataset`, or one of `QUICK_ARCHITECTURES`.
    noise : str
        "gaussian" (l2) or "uniform" (l1, scale λ = √3 σ).
    epochs : int
        Passes over the training set, >= 1.
    batch_size : int
        >= 1.
    lr : float
        The initial learning rate, > 0.
    momentum : float
        SGD's momentum, >= 0.
    weight_decay : float
        >= 0.
    schedule : str
        "cosine" (over every batch of the run) or "step" (times `gamma` every `step_size` epochs).
    step_size : int or None
        The step schedule's period in epochs (None for cosine).
    gamma : float or None
        The step schedule's factor (None for cosine).
    stability : float
        The stability term's weight, >= 0 (0: plain noise augmentation).
    nesterov : bool
        Nesterov momentum.
    source : str
        Where each value comes from.
    stability_pair : str
        What the stability term compares the noisy input with: "clean" or "noisy" (`train.STABILITY_PAIRS`).
    augment : str
        "none" or "crop_flip" (`train.AUGMENTATIONS`).
    """
    name: str
    dataset: str
    arch: str
    noise: str
    epochs: int
    batch_size: int
    lr: float
    momentum: float
    weight_decay: float
    schedule: str
    step_size: int | None
    gamma: float | None
    stability: float
    nesterov: bool
    source: str
    stability_pair: str = CLEAN_PAIR
    augment: str = NO_AUGMENT

    def __post_init__(self) -> None:
        """Each field's contract (ValueError or TypeError naming the field)."""
        check_choice(self.dataset, "dataset", list(INPUT_SHAPES))
        if self.arch not in QUICK_ARCHITECTURES:
            check_choice(self.arch, "arch", list(ARCHITECTURES) + list(QUICK_ARCHITECTURES))
            if ARCHITECTURES[self.arch] != self.dataset:
                raise ValueError(f"arch {self.arch!r} is built for dataset {ARCHITECTURES[self.arch]!r}, not "
                                 f"{self.dataset!r}")
        elif self.dataset not in ("digits", "mnist"):
            raise ValueError(f"arch {self.arch!r} is for the quick datasets digits and mnist, not {self.dataset!r}")
        check_choice(self.noise, "noise", NOISES)
        check_count(self.epochs, "epochs")
        check_count(self.batch_size, "batch_size")
        check_positive(self.lr, "lr")
        check_nonnegative(self.momentum, "momentum")
        check_nonnegative(self.weight_decay, "weight_decay")
        check_choice(self.schedule, "schedule", SCHEDULES)
        if self.schedule == STEP:
            check_count(self.step_size, "step_size")
            check_positive(self.gamma, "gamma")
        elif self.step_size is not None or self.gamma is not None:
            raise ValueError(f"step_size and gamma belong to the step schedule; the cosine schedule takes None, got "
                             f"step_size = {self.step_size!r}, gamma = {self.gamma!r}")
        check_nonnegative(self.stability, "stability")
        check_choice(self.stability_pair, "stability_pair", STABILITY_PAIRS)
        check_choice(self.augment, "augment", AUGMENTATIONS)
        if not isinstance(self.nesterov, bool):
            raise TypeError(f"nesterov must be a bool, got {type(self.nesterov).__name__} {self.nesterov!r}")
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError(f"source must say where the recipe's values come from, got {self.source!r}")

    @property
    def input_shape(self) -> tuple[int, int, int]:
        """One input's shape (channels, height, width) on the recipe's dataset."""
        return INPUT_SHAPES[self.dataset]

    @property
    def num_classes(self) -> int:
        """The number of classes of the recipe's dataset."""
        return NUM_CLASSES.get(self.dataset, 10)

    def scale(self, sigma: float) -> float:
        """The scale λ of the recipe's noise family whose standard deviation is σ (σ for Gaussian noise, √3 σ for
        uniform).

        Parameters
        ----------
        sigma : float
            The noise's standard deviation, finite and > 0.

        Returns
        -------
        float
            The `scale` `train.train_classifier` takes.
        """
        check_positive(sigma, "sigma")
        return float(sigma) * FAMILIES[self.noise].unit_variance_lambda()  # λ of the noise whose std is σ

    def build(self) -> torch.nn.Module:
        """A randomly initialized model of the recipe (drawn from torch's global generator).

        Returns
        -------
        torch.nn.Module
            Images in [0, 1] of shape (B, *input_shape) to logits (B, num_classes).
        """
        if self.arch == "small_cnn":
            return SmallCNN(self.input_shape, self.num_classes)
        return get_architecture(self.arch, self.dataset)

    def values(self) -> dict:
        """Every field, JSON-able.

        Returns
        -------
        dict
            Field name to value.
        """
        return asdict(self)

    def summary(self) -> str:
        """One line: dataset, arch, noise, epochs, batch, lr, momentum, weight decay, schedule, stability."""
        sched = (f"step x{self.gamma:g} every {self.step_size} epochs" if self.schedule == STEP
                 else "cosine")
        pair = "two noisy copies" if self.stability_pair == NOISY_PAIR else "clean against noisy"
        extra = f", stability {self.stability:g} ({pair})" if self.stability else ""
        extra += ", random crops and flips" if self.augment == CROP_FLIP else ""
        return (f"{self.dataset}, {self.arch}, {self.noise} noise, {self.epochs} epochs, batch {self.batch_size}, "
                f"SGD lr {self.lr:g} momentum {self.momentum:g}{' (Nesterov)' if self.nesterov else ''} weight decay "
                f"{self.weight_decay:g}, {sched}{extra}")


RECIPES: dict[str, Recipe] = {r.name: r for r in (
    Recipe("cifar10_l2_resnet18", "cifar10", "cifar_resnet18", GAUSSIAN, epochs=120, batch_size=256, lr=1e-2,
           momentum=0.9, weight_decay=1e-4, schedule=STEP, step_size=30, gamma=0.1, stability=0.0, nesterov=False,
           source="ANCER App. E.1: 120 epochs, batch 256, SGD lr 1e-2, momentum 0.9, Gaussian augmentation at σ. "
                  f"E.1 names no schedule or weight decay: the step schedule (x0.1 every 30 epochs) and weight decay "
                  f"1e-4 are {_COHEN}'s defaults, whose procedure E.1 says it follows, as are the random crops "
                  "(padding 4) and horizontal flips of its CIFAR-10 loader.", augment=CROP_FLIP),
    Recipe("cifar10_l1_wrn40", "cifar10", "wrn40", UNIFORM, epochs=120, batch_size=128, lr=1e-2, momentum=0.9,
           weight_decay=1e-4, schedule=STEP, step_size=30, gamma=0.1, stability=6.0, nesterov=True,
           source="ANCER App. E.2: WideResNet-40 with RS4A's stability loss, 120 epochs, batch 128, SGD lr 1e-2, "
                  f"momentum 0.9, step schedule with γ 0.1. The step size 30 epochs, weight decay 1e-4, Nesterov "
                  f"momentum and the stability weight 6.0 between two noisy copies are from {_ANCER_WRN}; the random "
                  "crops (padding 4) and flips are RS4A's CIFAR-10 training loader's (src/datasets.py).",
           stability_pair=NOISY_PAIR, augment=CROP_FLIP),
    Recipe("imagenet_l1_resnet50", "imagenet", "resnet50", UNIFORM, epochs=90, batch_size=256, lr=0.1, momentum=0.9,
           weight_decay=1e-4, schedule=STEP, step_size=30, gamma=0.1, stability=6.0, nesterov=True,
           source="ANCER App. E.2: ResNet-50 from scratch with the stability loss, 90 epochs, lr 0.1 times 0.1 "
                  f"after each 30 epochs, batch 256. Momentum 0.9, weight decay 1e-4, Nesterov momentum and the "
                  f"stability weight 6.0 are from {_ANCER_R50} (whose argument defaults, 120 epochs, batch 128 and "
                  "lr 0.01, differ from the text, which is followed here); the stability term between two noisy "
                  "copies, as there.", stability_pair=NOISY_PAIR),
    Recipe("imagenet_l2_resnet50", "imagenet", "resnet50", GAUSSIAN, epochs=90, batch_size=256, lr=0.1, momentum=0.9,
           weight_decay=1e-4, schedule=STEP, step_size=30, gamma=0.1, stability=0.0, nesterov=False,
           source="ANCER App. E.1 certifies Cohen et al.'s released ResNet-50s; this is their recipe, "
                  f"{_COHEN}'s defaults and its README's ImageNet command: 90 epochs, batch 256, SGD lr 0.1 times 0.1 "
                  "every 30 epochs, momentum 0.9, weight decay 1e-4, Gaussian augmentation at σ."),
    Recipe("fmnist_l2_resnet18", "fmnist", "fmnist_resnet18", GAUSSIAN, epochs=30, batch_size=256, lr=1e-2,
           momentum=0.9, weight_decay=1e-4, schedule=COSINE, step_size=None, gamma=None, stability=0.0,
           nesterov=False,
           source="No paper trains on Fashion-MNIST; chosen here: the CIFAR ResNet-18 with a one-channel stem, "
                  "cifar10_l2_resnet18's optimizer (batch 256, SGD lr 1e-2, momentum 0.9, weight decay 1e-4) for 30 "
                  "epochs with a cosine schedule."),
    Recipe("fmnist_l1_resnet18", "fmnist", "fmnist_resnet18", UNIFORM, epochs=30, batch_size=128, lr=1e-2,
           momentum=0.9, weight_decay=1e-4, schedule=COSINE, step_size=None, gamma=None, stability=6.0,
           nesterov=True,
           source="No paper trains on Fashion-MNIST; chosen here: the CIFAR ResNet-18 with a one-channel stem, "
                  "cifar10_l1_wrn40's optimizer and stability weight (batch 128, SGD lr 1e-2, Nesterov momentum "
                  "0.9, weight decay 1e-4, stability 6.0 between two noisy copies) for 30 epochs with a cosine "
                  "schedule.", stability_pair=NOISY_PAIR),
    Recipe("mnist_l2_cnn", "mnist", "small_cnn", GAUSSIAN, epochs=30, batch_size=128, lr=0.05, momentum=0.9,
           weight_decay=5e-4, schedule=COSINE, step_size=None, gamma=None, stability=0.0, nesterov=False,
           source="The quick profile's MNIST-5k models (runs.profiles.MNIST, runs.setups): SmallCNN, 30 epochs, "
                  "batch 128, SGD lr 0.05, momentum 0.9, weight decay 5e-4, cosine schedule; chosen by this "
                  "companion."),
    Recipe("mnist_l1_cnn", "mnist", "small_cnn", UNIFORM, epochs=30, batch_size=128, lr=0.05, momentum=0.9,
           weight_decay=5e-4, schedule=COSINE, step_size=None, gamma=None, stability=1.0, nesterov=False,
           source="The quick profile's MNIST-5k l1 models (runs.profiles.MNIST, runs.setups): mnist_l2_cnn's "
                  "optimizer with the stability weight 1.0; chosen by this companion."),
    Recipe("tiny_cifar10_l2", "cifar10", "cifar_resnet20", GAUSSIAN, epochs=4, batch_size=32, lr=0.05, momentum=0.9,
           weight_decay=5e-4, schedule=COSINE, step_size=None, gamma=None, stability=0.0, nesterov=False,
           source="For tests and smoke runs of the paper path (the paper-smoke profile), chosen here: Cohen et "
                  "al.'s CIFAR ResNet-20 with Gaussian augmentation, 4 epochs of batches of 32, the quick profile's "
                  "SGD (lr 0.05, momentum 0.9, weight decay 5e-4, cosine)."),
    Recipe("tiny_cifar10_l1", "cifar10", "cifar_resnet20", UNIFORM, epochs=4, batch_size=32, lr=0.05, momentum=0.9,
           weight_decay=5e-4, schedule=COSINE, step_size=None, gamma=None, stability=1.0, nesterov=False,
           source="For tests and smoke runs of the paper path (the paper-smoke profile), chosen here: "
                  "tiny_cifar10_l2 with uniform noise and the quick profile's stability weight 1.0."),
    Recipe("tiny", "digits", "small_cnn", GAUSSIAN, epochs=2, batch_size=16, lr=0.05, momentum=0.9,
           weight_decay=5e-4, schedule=COSINE, step_size=None, gamma=None, stability=0.0, nesterov=False,
           source="For tests and smoke runs, chosen here: the quick SmallCNN on the 8x8 digits, 2 epochs of batches "
                  "of 16, the quick profile's SGD (lr 0.05, momentum 0.9, weight decay 5e-4, cosine)."),
)}


def get_recipe(name: str) -> Recipe:
    """The recipe of that name.

    Parameters
    ----------
    name : str
        A key of `RECIPES`.

    Returns
    -------
    Recipe
        The recipe.
    """
    check_choice(name, "recipe", list(RECIPES))
    return RECIPES[name]


def train_recipe(recipe: Recipe, model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, sigma: float,
                 seed: int = 0, device: str | torch.device | None = None, *, state_dir: str | Path | None = None,
                 precision: str = EXACT, progress: Callable[[int, int], None] | None = None) -> torch.nn.Module:
    """Train `model` by `recipe` at noise level σ (`train.train_classifier` with the recipe's values).

    Parameters
    ----------
    recipe : Recipe
        The recipe.
    model : torch.nn.Module
        The model to train (`recipe.build()`), images (B, *recipe.input_shape) to logits.
    x : torch.Tensor, shape (N, *recipe.input_shape)
        Training images in [0, 1].
    y : torch.Tensor, shape (N,)
        Their labels.
    sigma : float
        The noise's standard deviation, > 0 (the scale is `recipe.scale(sigma)`).
    seed : int
        Seeds the batch order and the noise.
    device : str or torch.device or None
        Where it trains (`devices.resolve`); None: where the model is.
    state_dir : str or os.PathLike or None
        The resumable state's folder (`train.train_classifier`); None: not resumable.
    precision : str
        One of `precision.PRECISIONS`.
    progress : callable or None
        progress(epochs_done, epochs), after each epoch.

    Returns
    -------
    torch.nn.Module
        The trained model, in eval mode.
    """
    if not isinstance(recipe, Recipe):
        raise TypeError(f"recipe must be a Recipe (get_recipe(name) for a name), got {type(recipe).__name__}")
    if tuple(x.shape[1:]) != recipe.input_shape:
        raise ValueError(f"x must hold images of shape {recipe.input_shape} for recipe {recipe.name!r} "
                         f"({recipe.dataset}), got {tuple(x.shape[1:])}")
    extra = {} if recipe.schedule == COSINE else {"step_size": recipe.step_size, "gamma": recipe.gamma}
    return train_classifier(model, x, y, noise=recipe.noise, scale=recipe.scale(sigma), epochs=recipe.epochs,
                            batch_size=recipe.batch_size, lr=recipe.lr, momentum=recipe.momentum,
                            weight_decay=recipe.weight_decay, stability=recipe.stability, seed=seed, device=device,
                            schedule=recipe.schedule, nesterov=recipe.nesterov, state_dir=state_dir,
                            precision=precision, progress=progress, stability_pair=recipe.stability_pair,
                            augment=recipe.augment, **extra)
