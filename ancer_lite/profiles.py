"""Run settings: `quick` (the default, CPU, data that ships with installed packages) and `paper` (the
papers' settings, for users with CIFAR-10/ImageNet and a GPU). Notebooks take `profile` as a papermill
parameter and read everything else from here."""
from __future__ import annotations

from dataclasses import dataclass, field


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
    extra: dict = field(default_factory=dict)


PROFILES = {
    "quick": Profile("quick"),
    "paper": Profile("paper", mc_samples=2_000_000, check_samples=100_000, check_grid=41),
}


def get_profile(name: str) -> Profile:
    if name not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {name!r}")
    return PROFILES[name]
