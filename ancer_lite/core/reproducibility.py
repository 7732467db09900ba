"""Repeatable runs: the one place where seeds, thread counts and instruction-set pins are set."""
from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch

from .validation import check_count

THREADS = 2  # the reference machine has 2 cores; fixed so that floating-point reductions repeat

#: Environment variables that make every numerical library take its AVX2 code paths, so that results are
#: the same number for number on any x86-64 machine with AVX2, with or without AVX-512. Without them, torch's
#: vectorized kernels, oneDNN's convolutions, MKL's matrix products and NumPy's / OpenBLAS's kernels pick
#: AVX-512 variants where the CPU has them, whose results differ in the last bits; Isotropic DD's and
#: ANCER's sample-wise optimizations magnify those bits (measured 2026-11-25 on an AMD EPYC with AVX-512:
#: the MNIST column's ℓ2 Isotropic DD ACR came out 1.191 instead of 1.204). Each library reads its
#: variable when it loads, so they must be set before Python starts: the Makefile exports exactly these
#: (`tests/test_reproducibility.py` keeps the two lists equal), and `instruction_set_pins` reports them.
ISA_PINS: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",                          # torch's own vectorized kernels
    "ONEDNN_MAX_CPU_ISA": "AVX2",                           # convolutions (oneDNN)
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",                      # matrix products and LAPACK (MKL, inside torch)
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",  # NumPy's dispatched kernels
    "OPENBLAS_CORETYPE": "Haswell",                         # NumPy's / SciPy's BLAS and LAPACK (OpenBLAS)
}


def instruction_set_pins() -> dict[str, bool]:
    """Which of `ISA_PINS` hold in this process's environment (variable -> set to the pinned value).
    Where one does not (a kernel started outside `make`), results can differ from the committed notebooks
    in the last bits on AVX-512 machines, and the notebooks' anchors may then fail."""
    return {k: os.environ.get(k) == v for k, v in ISA_PINS.items()}


def seed_everything(seed: int = 0, threads: int = THREADS) -> torch.Generator:
    """Seed Python, NumPy and torch, fix torch's thread count, prefer deterministic kernels, and
    return a torch.Generator seeded with `seed` for explicit use.

    Parameters
    ----------
    seed : int, default 0
        The seed of Python's `random`, NumPy's global generator, torch's global generator and the returned one.
    threads : int, default THREADS (2)
        torch's intra-op thread count; also OMP_NUM_THREADS when that variable is not set yet.

    Returns
    -------
    torch.Generator
        A new CPU generator seeded with `seed`.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    torch.use_deterministic_algorithms(True, warn_only=True)
    return torch.Generator().manual_seed(seed)


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the block with torch's intra-op thread count set to `threads` (None: leave it as it is), and
    restore the previous count after.

    Parameters
    ----------
    threads : int or None
        The intra-op thread count for the block, >= 1; None: leave it as it is.

    Yields
    ------
    None
        Once, with the count set (a context manager).
    """
    if threads is None:
        yield
        return
    check_count(threads, "threads")
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
