"""Run settings: `quick` (the default, CPU, data that ships with installed packages) and `paper` (the
papers' settings, for users with CIFAR-10/ImageNet and a GPU). Notebooks take `profile` as a papermill
parameter and read everything else from here."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    # certification (Cohen et al.; ANCER App. E): N0 selection samples, N estimation samples, alpha
    n0: int = 100
    n: int = 100_000
    alpha: float = 0.001
    batch_size: int = 10_000
    # Monte Carlo sizes for the numerical checks of notebook 01
    mc_samples: int = 200_000
    # samples per point when notebook 02 re-estimates the smoothed prediction inside certified regions
    check_samples: int = 20_000
    # points per axis of the grid that fills each certified region in notebook 02
    check_grid: int = 25
    # notebook 03: data, models, noise levels (ANCER §7.1-7.2), test subset and validation selection
    dataset: str = "digits"
    sigmas_l2: tuple[float, ...] = (0.12, 0.25, 0.5, 1.0)
    sigmas_l1: tuple[float, ...] = (0.25, 0.5, 1.0)
    num_test: int | None = 150          # stratified subset of the test split (None: all of it)
    num_val: int = 100                  # validation inputs used to choose step sizes
    val_n: int = 10_000                 # CERTIFY's N on the validation split
    iso_lr_grid: tuple[float, ...] = (0.001, 0.01, 0.1, 1.0)    # multiples of the training theta
    ancer_lr_grid: tuple[float, ...] = (0.001, 0.01, 0.04, 0.1)
    digits_hidden: tuple[int, ...] = (64, 64)
    digits_epochs: int = 40


PROFILES = {
    "quick": Profile("quick"),
    "paper": Profile("paper", mc_samples=2_000_000, check_samples=100_000, check_grid=41, dataset="cifar10",
                     num_test=None, num_val=500),
    # ANCER §7: ImageNet with sigma in {0.25, 0.5, 1.0} for both shapes, 500 validation images
    "paper-imagenet": Profile("paper-imagenet", mc_samples=2_000_000, check_samples=100_000, check_grid=41,
                              dataset="imagenet", sigmas_l2=(0.25, 0.5, 1.0), num_test=500, num_val=100,
                              batch_size=400),
}


def get_profile(name: str) -> Profile:
    if name not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {name!r}")
    return PROFILES[name]
