"""UCAN's noise-generator recipes by name (`UCAN_RECIPES`): a noise parameter generator (NPG) of UCAN §4 trained
jointly with an already trained base classifier by §4.2's loss (`ucan.train_ucan`), as UCAN's code fine-tunes a
pre-trained classifier; and the record a checkpoint keeps of the NPG (`npg_record`, read back by `load_npg`).

UCAN App. I names the base classifiers only (a two-layer CNN on MNIST, Cohen et al.'s ResNet-110 on CIFAR-10,
ResNet-50 on ImageNet); the paper gives no epochs, batch size or learning rates for the NPGs. The recipes take the
values notebook 07 trains with in the paper profile (`runs.profiles`: 30 epochs of fine-tuning, the classifier by
SGD as `train.train_classifier`, the NPG by Adam) and UCAN's γ (5 for the universal NPG, 1 for the input-dependent
one, §5). σ is the noise's per-coordinate standard deviation at σ_i = 1, as for every recipe: the NPG's scale is
λ = σ · `unit_variance_lambda` (λ = σ for Gaussian noise), so that a recipe at σ fine-tunes the Cohen model trained
at that σ.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np
import torch
from torch import nn

from ..core import devices
from ..core.families import FAMILIES
from ..core.precision import EXACT
from ..core.ucan_radii import GAUSSIAN, NOISES, lambda_for_std
from ..core.validation import check_choice, check_count, check_nonnegative, check_positive, check_shape
from .ucan import INPUT_NPG, ISOTROPIC_NPG, NPG_KINDS, PATTERN_NORMS, PATTERN_NPG, UNIVERSAL_NPG, build_npg, train_ucan

#: the kinds of NPG a recipe trains (the isotropic NPG is plain Gaussian fine-tuning: `models.recipes`)
RECIPE_KINDS = tuple(k for k in NPG_KINDS if k != ISOTROPIC_NPG)
#: the key of a checkpoint's NPG record, beside Cohen et al.'s 'arch' and 'state_dict' of the classifier
NPG_KEY = "ucan_npg"

_PROFILE = ("the paper profile's notebook-07 fine-tuning (runs.profiles: 30 epochs; the classifier by SGD, batch 128, "
            "lr 1e-2, momentum 0.9, weight decay 5e-4, cosine, as train.train_classifier; the NPG by Adam, lr 1e-3; "
            "variance weight 1, §4.2's loss), as UCAN App. I gives no training values")


@dataclass(frozen=True)
class UcanRecipe:
    """A named recipe for training a UCAN noise parameter generator on a trained classifier.

    Parameters
    ----------
    name : str
        The recipe's name (a key of `UCAN_RECIPES`).
    kind : str
        The NPG, one of `RECIPE_KINDS`: "pattern" (§4.1, Eq. 5, fixed), "universal" (§4.2) or "input" (§4.3).
    epochs : int
        Passes over the training set, >= 1.
    batch_size : int
        >= 1.
    lr : float
        The classifier's initial SGD learning rate, > 0.
    npg_lr : float
        The NPG's Adam learning rate, > 0.
    variance_weight : float
        The weight of mean σ in §4.2's loss, >= 0.
    source : str
        Where each value comes from.
    gamma : float or None
        γ of the universal and input-dependent NPGs, > 0 (None for "pattern").
    kappa : float
        κ of the pattern (Eq. 5), > 0.
    pattern : str
        The pattern's norm, one of `ucan.PATTERN_NORMS`.
    growth : int
        Channels each convolution of the input-dependent NPG adds, >= 1.
    noise : str
        The noise family ε is drawn from, one of `ucan_radii.NOISES`.
    """
    name: str
    kind: str
    epochs: int
    batch_size: int
    lr: float
    npg_lr: float
    variance_weight: float
    source: str
    gamma: float | None = None
    kappa: float = 1.0
    pattern: str = "l2"
    growth: int = 4
    noise: str = GAUSSIAN

    def __post_init__(self) -> None:
        """Each field's contract (ValueError or TypeError naming the field)."""
        check_choice(self.kind, "kind", RECIPE_KINDS)
        check_count(self.epochs, "epochs")
        check_count(self.batch_size, "batch_size")
        check_positive(self.lr, "lr")
        check_positive(self.npg_lr, "npg_lr")
        check_nonnegative(self.variance_weight, "variance_weight")
        if (self.gamma is None) != (self.kind == PATTERN_NPG):
            raise ValueError(f"gamma belongs to the trained NPGs (universal, input): recipe {self.name!r} of kind "
                             f"{self.kind!r} got gamma = {self.gamma!r}")
        if self.gamma is not None:
            check_positive(self.gamma, "gamma")
        check_positive(self.kappa, "kappa")
        check_choice(self.pattern, "pattern", list(PATTERN_NORMS))
        check_count(self.growth, "growth")
        check_choice(self.noise, "noise", NOISES)
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError(f"source must say where the recipe's values come from, got {self.source!r}")

    def build_npg(self, input_shape: tuple[int, int, int]) -> nn.Module:
        """An untrained NPG of the recipe (`ucan.build_npg`; weights drawn from torch's global generator).

        Parameters
        ----------
        input_shape : tuple of int
            One input's shape (channels, height, width).

        Returns
        -------
        torch.nn.Module
            The NPG x -> (σ, μ).
        """
        return build_npg(self.kind, input_shape, gamma=self.gamma, pattern=self.pattern, kappa=self.kappa,
                         growth=self.growth)

    def exponent(self, d: int) -> float | None:
        """The noise family's shape exponent in dimension d (the power law's a), None for the other families.

        Parameters
        ----------
        d : int
            The input's dimension (its number of entries), >= 1.

        Returns
        -------
        float or None
            The power law's exponent a (d + `families.POWER_LAW_TAIL`, `families.power_law_exponent`) for the
            power-law noise; None for the families without a shape exponent.
        """
        return FAMILIES[self.noise].exponent(d)

    def lam(self, sigma: float, d: int) -> float:
        """λ of the noise whose every coordinate has standard deviation σ where the NPG's σ_i is 1.

        Parameters
        ----------
        sigma : float
            The standard deviation, finite and > 0.
        d : int
            The input's dimension.

        Returns
        -------
        float
            λ (σ itself for Gaussian noise).
        """
        return lambda_for_std(self.noise, sigma, d, self.exponent(d))

    def summary(self) -> str:
        """One line: the NPG, its parameter, the noise, the epochs and both optimizers."""
        what = (f"a pattern NPG (l{self.pattern[1:]} pattern, κ {self.kappa:g}; only the classifier trains)"
                if self.kind == PATTERN_NPG else
                f"{'a universal' if self.kind == 'universal' else 'an input-dependent'} NPG (γ {self.gamma:g}"
                f"{f', growth {self.growth}' if self.kind == 'input' else ''})")
        return (f"any dataset, fine-tunes a trained classifier (--start) with {what}, {self.noise} noise, "
                f"{self.epochs} epochs, batch {self.batch_size}, SGD lr {self.lr:g} for the classifier, Adam lr "
                f"{self.npg_lr:g} for the NPG, variance weight {self.variance_weight:g}")


UCAN_RECIPES: dict[str, UcanRecipe] = {r.name: r for r in (
    UcanRecipe("ucan_universal", UNIVERSAL_NPG, epochs=30, batch_size=128, lr=1e-2, npg_lr=1e-3, variance_weight=1.0,
               gamma=5.0, source=f"UCAN §4.2 (the universal NPG) with γ 5, UCAN's value for MNIST and CIFAR-10 (§5); "
                                 f"the training values are {_PROFILE}."),
    UcanRecipe("ucan_input", INPUT_NPG, epochs=30, batch_size=128, lr=1e-2, npg_lr=1e-3, variance_weight=1.0,
               gamma=1.0, growth=4, source=f"UCAN §4.3 and App. E (the input-dependent NPG) with γ 1 (§5) and 4 "
                                       f"channels per convolution (notebook 07's); the training values are {_PROFILE}."),
    UcanRecipe("ucan_pattern", PATTERN_NPG, epochs=30, batch_size=128, lr=1e-2, npg_lr=1e-3, variance_weight=1.0,
               kappa=1.0, pattern="l2", source=f"UCAN §4.1 (Eq. 5 with κ = ι = 1 and the l2 pattern, as its Figure 3); "
                                               f"the pattern is fixed, so only the classifier trains, by {_PROFILE}."),
    UcanRecipe("tiny_ucan_input", INPUT_NPG, epochs=2, batch_size=16, lr=1e-2, npg_lr=1e-3, variance_weight=1.0,
               gamma=1.0, growth=2, source="For tests and smoke runs, chosen here: ucan_input's NPG with 2 channels "
                                           "per convolution, 2 epochs of batches of 16."),
)}


class TrainedNpg(NamedTuple):
    """An NPG read from a checkpoint (`load_npg`), with the noise it was trained with: what `ucan.certify` takes."""
    npg: nn.Module
    noise: str
    lam: float
    a: float | None


def train_ucan_recipe(recipe: UcanRecipe, model: nn.Module, npg: nn.Module, x: torch.Tensor, y: torch.Tensor,
                      sigma: float, seed: int = 0, device: str | torch.device | None = None, *,
                      state_dir: str | Path | None = None, precision: str = EXACT,
                      progress: Callable[[int, int], None] | None = None) -> tuple[nn.Module, nn.Module]:
    """Fine-tune `model` jointly with `npg` by `recipe` at noise level σ (`ucan.train_ucan` with the recipe's values).

    Parameters
    ----------
    recipe : UcanRecipe
        The recipe.
    model : torch.nn.Module
        The trained classifier, fine-tuned in place: images (B, *input_shape) to logits.
    npg : torch.nn.Module
        The recipe's NPG (`recipe.build_npg`), trained in place.
    x : torch.Tensor, shape (N, C, H, W)
        Training images in [0, 1].
    y : torch.Tensor, shape (N,)
        Their labels.
    sigma : float
        The noise's per-coordinate standard deviation at σ_i = 1, > 0 (λ = `recipe.lam(sigma, d)`).
    seed : int
        Seeds the batch order and the noise.
    device : str or torch.device or None
        Where both train (`devices.resolve`); None: where the model is.
    state_dir : str or os.PathLike or None
        The resumable state's folder (`ucan.train_ucan`); None: not resumable.
    precision : str
        The classifier's arithmetic, one of `precision.PRECISIONS`.
    progress : callable or None
        progress(epochs_done, epochs), after each epoch.

    Returns
    -------
    model : torch.nn.Module
        The fine-tuned classifier, in eval mode.
    npg : torch.nn.Module
        The trained NPG, in eval mode.
    """
    if not isinstance(recipe, UcanRecipe):
        raise TypeError(f"recipe must be a UcanRecipe (UCAN_RECIPES[name]), got {type(recipe).__name__}")
    d = int(np.prod(x.shape[1:]))
    return train_ucan(model, npg, x, y, noise=recipe.noise, lam=recipe.lam(sigma, d), epochs=recipe.epochs,
                      batch_size=recipe.batch_size, lr=recipe.lr, npg_lr=recipe.npg_lr,
                      variance_weight=recipe.variance_weight, a=recipe.exponent(d), seed=seed, device=device,
                      precision=precision, state_dir=state_dir, progress=progress)


def npg_record(recipe: UcanRecipe, npg: nn.Module, input_shape: tuple[int, int, int], sigma: float) -> dict:
    """What a checkpoint holds of a trained NPG under `NPG_KEY`: enough to build it again and certify with it.

    Parameters
    ----------
    recipe : UcanRecipe
        The recipe it was trained by.
    npg : torch.nn.Module
        The trained NPG.
    input_shape : tuple of int
        One input's shape (C, H, W).
    sigma : float
        The noise level it was trained at.

    Returns
    -------
    dict
        The recipe's name and NPG values, the input shape, the noise, λ, a and the NPG's state dict (on the CPU).
    """
    d = int(np.prod(input_shape))
    return {"recipe": recipe.name, "kind": recipe.kind, "gamma": recipe.gamma, "kappa": recipe.kappa,
            "pattern": recipe.pattern, "growth": recipe.growth, "input_shape": [int(s) for s in input_shape],
            "noise": recipe.noise, "sigma": float(sigma), "lam": recipe.lam(sigma, d), "a": recipe.exponent(d),
            "state_dict": {k: v.detach().cpu() for k, v in npg.state_dict().items()}}


def load_npg(path: str | Path, device: str | torch.device | None = None) -> TrainedNpg:
    """The NPG of a checkpoint `ancer-certify train` wrote with a UCAN recipe, with its noise family, λ and a.

    The classifier of the same file is read by `architectures.load_checkpoint` (or `certify`'s loader for the quick
    datasets), as any Cohen et al.-format checkpoint. Read with `weights_only=True`.

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint file.
    device : str or torch.device or None
        Where the NPG is returned (`devices.resolve`); None: the CPU.

    Returns
    -------
    TrainedNpg
        (npg in eval mode, noise, λ, a): `ucan.certify(model, npg, x, noise, lam, ..., a=a)`.

    Raises
    ------
    FileNotFoundError
        When there is no such file.
    ValueError
        Naming the file, when it holds no NPG record or one that does not build.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises EOFError, RuntimeError, UnpicklingError... on damaged files
        raise ValueError(f"{path}: not a readable checkpoint ({type(e).__name__})") from e
    record = ckpt.get(NPG_KEY) if isinstance(ckpt, dict) else None
    if not isinstance(record, dict):
        raise ValueError(f"{path} holds no UCAN noise generator (no {NPG_KEY!r} entry): it is a classifier's "
                         f"checkpoint; train one with a UCAN recipe ({', '.join(UCAN_RECIPES)}) and --start")
    try:
        shape = tuple(check_shape(tuple(record["input_shape"]), "input_shape"))
        npg = build_npg(record["kind"], shape, gamma=record["gamma"], pattern=record["pattern"],
                        kappa=record["kappa"], growth=record["growth"])
        npg.load_state_dict(record["state_dict"])
        noise = check_choice(record["noise"], "noise", NOISES)
        lam = check_positive(record["lam"], "lam")
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise ValueError(f"{path}: its {NPG_KEY!r} entry does not build an NPG ({type(e).__name__}: {e})") from e
    if device is not None:
        npg.to(devices.resolve(device))
    return TrainedNpg(npg.eval(), noise, float(lam), record["a"])
