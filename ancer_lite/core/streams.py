"""Per-input random streams: every certified input draws its Monte Carlo noise from its own generator, seeded by
the run's seed and the input's key (its index in its dataset, or its position), so that a resumed, repeated,
reordered or parallel run draws exactly the same noise for that input (Cohen et al.'s CERTIFY as used by ANCER
§7, RANCER §4 and UCAN Algorithm 1). The formula is written here once; every run and study takes its
per-input generator from `input_generator`.
"""
from __future__ import annotations

import torch

from .validation import check_count

#: the multiplier that separates the streams of two seeds: seed s and key k give s * INPUT_STRIDE + k, so two
#: runs' streams coincide only for keys >= INPUT_STRIDE apart (a prime, larger than any test set certified)
INPUT_STRIDE = 1_000_003


def input_seed(seed: int, key: int) -> int:
    """The seed of input `key`'s stream in a run seeded by `seed`: seed * INPUT_STRIDE + key.

    seed, key: integers >= 0 (Python or NumPy integers; the result is computed in Python's exact integers),
    whose stream seed must stay below 2**64 (what torch.Generator.manual_seed accepts)."""
    seed = check_count(seed, "seed", 0)
    key = check_count(key, "key", 0)
    value = seed * INPUT_STRIDE + key
    if value >= 2 ** 64:  # torch's own error was "Overflow when unpacking long", naming neither argument
        raise ValueError(f"seed * {INPUT_STRIDE} + key must be < 2**64 (a torch generator seed), got seed {seed} "
                         f"and key {key}")
    return value


def input_generator(seed: int, key: int) -> torch.Generator:
    """A fresh CPU generator for input `key` of a run seeded by `seed`, seeded by `input_seed(seed, key)`:
    the noise stream of that input's CERTIFY, the same in every run, resumed or not. seed, key: integers >= 0."""
    return torch.Generator().manual_seed(input_seed(seed, key))
