"""Repeatable runs: the one place where seeds and thread counts are set."""
from __future__ import annotations

import os
import random

import numpy as np
import torch

THREADS = 2  # the reference machine has 2 cores; fixed so that floating-point reductions repeat


def seed_everything(seed: int = 0, threads: int = THREADS) -> torch.Generator:
    """Seed Python, NumPy and torch, fix torch's thread count, prefer deterministic kernels, and
    return a torch.Generator seeded with `seed` for explicit use."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    torch.use_deterministic_algorithms(True, warn_only=True)
    return torch.Generator().manual_seed(seed)
