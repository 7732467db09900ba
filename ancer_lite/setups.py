"""What notebook 03 certifies under each profile: the test and validation inputs and one base
classifier per (norm, sigma).

- digits (quick): scikit-learn's digits, a stratified test subset, MLPs trained here with noise
  augmentation (Gaussian for l2; uniform with RS4A's stability term for l1) and cached.
- cifar10 / imagenet (paper): the papers' data in their on-disk formats (`data.cifar10`,
  `data.imagenet_subset`) and Cohen-format checkpoints at
  `<data_dir>/checkpoints/<dataset>/<norm>/sigma_<sigma>/checkpoint.pth.tar`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import train_test_split

from .architectures import load_checkpoint
from .data import DATA_DIR, Split, cifar10, digits_split, imagenet_subset
from .models import MLP
from .noise import uniform_lambda
from .profiles import Profile
from .train import train_cached, train_classifier

NOISE_OF_NORM = {"l2": "gaussian", "l1": "uniform"}
NUM_CLASSES = {"digits": 10, "cifar10": 10, "imagenet": 1000}


@dataclass
class Workload:
    dataset: str
    num_classes: int
    test: Split
    val: Split
    models: dict[tuple[str, float], torch.nn.Module]


def theta_of(norm: str, sigma: float) -> float:
    """The smoothing scale for a training sigma: sigma (Gaussian, l2) or lambda = sqrt(3) sigma (uniform, l1)."""
    if norm not in NOISE_OF_NORM:
        raise ValueError(f"norm must be one of {list(NOISE_OF_NORM)}, got {norm!r}")
    return sigma if norm == "l2" else uniform_lambda(sigma)


def sigmas_of(profile: Profile) -> dict[str, tuple[float, ...]]:
    return {"l2": profile.sigmas_l2, "l1": profile.sigmas_l1}


def checkpoint_path(data_dir: Path, dataset: str, norm: str, sigma: float) -> Path:
    return Path(data_dir) / "checkpoints" / dataset / norm / f"sigma_{sigma}" / "checkpoint.pth.tar"


def _every_kth(split: Split, count: int | None) -> Split:
    """Cohen et al.'s test subsets: every k-th input with k = len // count."""
    if count is None or count >= len(split):
        return split
    keep = np.arange(0, len(split), len(split) // count)[:count]
    return Split(split.x[keep], split.y[keep], split.index[keep])


def prepare(profile: Profile, seed: int = 0, data_dir: str | Path = DATA_DIR) -> Workload:
    """Load (or train and cache) everything the profile certifies. Missing data or checkpoints raise
    FileNotFoundError naming every expected path."""
    data_dir = Path(data_dir)
    if profile.dataset == "digits":
        return _prepare_digits(profile, seed, data_dir)
    if profile.dataset not in ("cifar10", "imagenet"):
        raise ValueError(f"profile.dataset must be digits, cifar10 or imagenet, got {profile.dataset!r}")
    wanted = {(norm, s): checkpoint_path(data_dir, profile.dataset, norm, s)
              for norm, sig in sigmas_of(profile).items() for s in sig}
    missing = [str(p) for p in wanted.values() if not p.is_file()]
    if missing:
        raise FileNotFoundError("Cohen-format checkpoints ({'arch', 'state_dict'}) are needed at:\n  " + "\n  ".join(missing))
    if profile.dataset == "cifar10":
        test = _every_kth(cifar10(data_dir / "cifar10", "test"), profile.num_test)
        train = cifar10(data_dir / "cifar10", "train")
        tail = slice(len(train) - profile.num_val, len(train))
        val = Split(train.x[tail], train.y[tail], train.index[tail])
    else:
        test = imagenet_subset(data_dir / "imagenet", "val", profile.num_test or 500)
        val = imagenet_subset(data_dir / "imagenet", "train", profile.num_val)
    models = {key: load_checkpoint(path, profile.dataset).eval() for key, path in wanted.items()}
    return Workload(profile.dataset, NUM_CLASSES[profile.dataset], test, val, models)


def _prepare_digits(profile: Profile, seed: int, data_dir: Path) -> Workload:
    splits = digits_split(seed)
    test = splits["test"]
    if profile.num_test is not None and profile.num_test < len(test):
        keep, _ = train_test_split(np.arange(len(test)), train_size=profile.num_test,
                                   stratify=test.y.numpy(), random_state=seed)
        keep = np.sort(keep)
        test = Split(test.x[keep], test.y[keep], test.index[keep])
    val = splits["val"]
    val = Split(val.x[:profile.num_val], val.y[:profile.num_val], val.index[:profile.num_val])
    train = splits["train"]
    models = {}
    for norm, sigmas in sigmas_of(profile).items():
        for sigma in sigmas:
            th = theta_of(norm, sigma)

            def fit(model: torch.nn.Module, th: float = th, norm: str = norm) -> torch.nn.Module:
                return train_classifier(model, train.x, train.y, noise=NOISE_OF_NORM[norm], scale=th,
                                        epochs=profile.digits_epochs, lr=0.05,
                                        stability=1.0 if norm == "l1" else 0.0, seed=seed)

            path = data_dir / "cache" / profile.name / f"digits_{norm}_sigma{sigma}_seed{seed}.pt"
            models[norm, sigma] = train_cached(path, lambda: MLP((1, 8, 8), 10, hidden=profile.digits_hidden), fit)
    return Workload("digits", 10, test, val, models)
