"""Datasets, all in [0, 1]-scaled tensors of shape (N, C, H, W) (or (N, 2) for the 2D toy data).

- `radial_dataset`: the 2D radially separable binary toy data of ANCER Figure 1 (generated, seeded).
- `digits_split`: scikit-learn's 8x8 digits (ships with the package), scaled to [0, 1], with a seeded
  stratified train/validation/test split: the quick profile's image data.
- `cifar10` and `imagenet_subset`: the paper profile's data in their real on-disk formats (see
  `data_paths`); missing data raises FileNotFoundError saying where to put it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"


@dataclass(frozen=True)
class Split:
    """Tensors for one split: x in [0, 1], y class indices; `index` are positions in the source dataset."""
    x: torch.Tensor
    y: torch.Tensor
    index: np.ndarray

    def __len__(self) -> int:
        return len(self.y)


def radial_dataset(n: int = 2000, seed: int = 0, boundaries: tuple[float, ...] = (1.0, 2.0),
                   margin: float = 0.1, outer: float = 2.8) -> tuple[torch.Tensor, torch.Tensor]:
    """2D binary data whose label depends only on the radius (ANCER §3, Figure 1): points uniform in the
    disc of radius `outer`, at least margin/2 away from every boundary circle, labelled 0 inside the
    first circle and alternating at each boundary (the default gives 0 | 1 | 0 bands, so that no class
    owns the unbounded exterior alone and large isotropic noise is penalized in every direction)."""
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    if list(boundaries) != sorted(boundaries) or not all(0 < b < outer for b in boundaries):
        raise ValueError("boundaries must be increasing radii inside (0, outer)")
    rng = np.random.default_rng(seed)
    pts: list[np.ndarray] = []
    have = 0
    while have < n:
        r = outer * np.sqrt(rng.random(2 * n))
        keep = np.all(np.abs(r[:, None] - np.asarray(boundaries)[None]) >= margin / 2, axis=1)
        angle = 2 * np.pi * rng.random(2 * n)
        chunk = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)[keep]
        pts.append(chunk)
        have += len(chunk)
    x = np.concatenate(pts)[:n]
    y = (np.linalg.norm(x, axis=1)[:, None] > np.asarray(boundaries)[None]).sum(axis=1) % 2
    return torch.tensor(x, dtype=torch.float32), torch.tensor(y)


def digits_split(seed: int = 0, val_fraction: float = 0.2, test_fraction: float = 0.2) -> dict[str, Split]:
    """scikit-learn's 8x8 digits scaled to [0, 1] (pixel / 16) as (N, 1, 8, 8), split into train /
    val / test, stratified by class with `seed` (sklearn.model_selection.train_test_split)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if not (0 < val_fraction < 1 and 0 < test_fraction < 1 and val_fraction + test_fraction < 1):
        raise ValueError("val_fraction and test_fraction must be in (0, 1) with a sum below 1")
    d = load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32).unsqueeze(1)
    y = torch.tensor(d.target)
    idx = np.arange(len(y))
    rest, test = train_test_split(idx, test_size=test_fraction, stratify=d.target, random_state=seed)
    train, val = train_test_split(rest, test_size=val_fraction / (1 - test_fraction),
                                  stratify=d.target[rest], random_state=seed)
    out = {}
    for name, i in (("train", train), ("val", val), ("test", test)):
        i = np.sort(i)
        out[name] = Split(x[i], y[i], i)
    return out
