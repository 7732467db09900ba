"""Per-input random streams: every input draws its Monte Carlo noise from its own generators, one per purpose,
seeded by the run's seed, the input's key (its index in its dataset) and the purpose:

==========  ===========================================================================================
select      CERTIFY's n0 draws that choose the class (Cohen et al.'s CERTIFY, ANCER §7, RANCER §4, UCAN Alg. 1)
estimate    CERTIFY's n fresh draws whose count bounds p_A from below (Clopper-Pearson)
isotropic   Isotropic DD's draws (Alfarra et al.; ANCER App. C), every iteration of that input's ascent
ancer       ANCER's draws (App. C, Listing 1)
rancer      RANCER's draws (Algorithm 1 of seed 002)
bootstrap   a claim's resamples of the test inputs (`evaluation.intervals`; the key is the claim's, not an input's)
==========  ===========================================================================================

A smoothing method added to the registry (`methods.registry`) names its own purpose: any other name is a purpose
registered with `register_purpose`, whose code is derived from the name, so a new method needs no line here.

UCAN's soundness search (notebook 07's audit of claim C9) draws from one generator per audit, seeded by the
run's seed: it looks for counterexamples and certifies nothing, so its draws need no per-input stream.

So an input's certificate depends on (seed, key) alone: not on the batch size, the chunk of inputs optimized
with it, the shard or process that certified it, or the order of the work. The estimation draws are
independent of the draws that chose the class and of those that optimized the input's θ (with a single stream
per input, the input certified right after optimizing its θ would bound p_A with the very noise θ was fitted
to, and the Clopper-Pearson bound would not hold).

A stream's seed is NumPy's `SeedSequence` hash of (seed, key, purpose code): 64 well-mixed bits, distinct
purposes and keys giving unrelated generators. Generators live on the CPU whatever device classifies the draws.
Drawn from them on the CPU (`noise.DrawStream`), CPU and GPU runs see the same noise; drawn where the model runs
(`noise.BlockDrawStream`, keyed by 64 bits from the CPU generator), the noise is the same on every device of a type.
Both make the draws independent of how they are cut into batches.
"""
from __future__ import annotations

import hashlib

import numpy as np
import torch

from .validation import check_choice, check_count

SELECT, ESTIMATE = "select", "estimate"
ISOTROPIC, ANCER, RANCER = "isotropic", "ancer", "rancer"
BOOTSTRAP = "bootstrap"
#: every purpose and its code in the hash: the six above, then those of registered methods (`register_purpose`);
#: a code is never reused
PURPOSES = {SELECT: 1, ESTIMATE: 2, ISOTROPIC: 3, ANCER: 4, RANCER: 5, BOOTSTRAP: 6}
#: codes of the purposes registered later start here (2^32), above every code of the six
DERIVED_CODES = 2 ** 32


def register_purpose(purpose: str) -> str:
    """Make `purpose` (a name of letters, digits and underscores) a stream purpose, with the code DERIVED_CODES
    plus the first 4 bytes of its name's SHA-256, so that its streams do not depend on the order of registration;
    a purpose already in PURPOSES keeps its code.

    Parameters
    ----------
    purpose : str
        A non-empty name of letters, digits and underscores (ValueError otherwise, and for a name whose code
        collides with another purpose's).

    Returns
    -------
    str
        `purpose`, now a key of PURPOSES.
    """
    if not isinstance(purpose, str) or not purpose or not purpose.replace("_", "a").isalnum():
        raise ValueError(f"purpose must be a non-empty name of letters, digits and underscores, got {purpose!r}")
    if purpose not in PURPOSES:
        code = DERIVED_CODES + int.from_bytes(hashlib.sha256(purpose.encode()).digest()[:4], "little")
        if code in PURPOSES.values():
            raise ValueError(f"purpose {purpose!r} hashes to the code of another purpose: choose another name")
        PURPOSES[purpose] = code
    return purpose


def stream_seed(seed: int, key: int, purpose: str) -> int:
    """The 64-bit seed of input `key`'s `purpose` stream in a run seeded by `seed`: NumPy's SeedSequence hash
    of (seed, key, PURPOSES[purpose]).

    Parameters
    ----------
    seed : int
        The run's seed, an integer >= 0 (Python or NumPy).
    key : int
        The input's key (its index in its dataset; a claim's key for "bootstrap"), an integer >= 0.
    purpose : str
        One of PURPOSES.

    Returns
    -------
    int
        The seed, in [0, 2^64).
    """
    seed = check_count(seed, "seed", 0)
    key = check_count(key, "key", 0)
    code = PURPOSES[check_choice(purpose, "purpose", tuple(PURPOSES))]
    lo, hi = np.random.SeedSequence([seed, key, code]).generate_state(2, np.uint32)
    return int(lo) | (int(hi) << 32)


def stream(seed: int, key: int, purpose: str) -> torch.Generator:
    """A fresh CPU generator for input `key`'s `purpose` stream in a run seeded by `seed` (`stream_seed`).

    Parameters
    ----------
    seed, key, purpose : as in `stream_seed`

    Returns
    -------
    torch.Generator
        A new CPU generator seeded with `stream_seed(seed, key, purpose)`.
    """
    return torch.Generator().manual_seed(stream_seed(seed, key, purpose))


def certify_streams(seed: int, key: int) -> tuple[torch.Generator, torch.Generator]:
    """CERTIFY's two streams of input `key`: (select, estimate), as `certify.Smooth.certify` takes them.

    Parameters
    ----------
    seed, key : as in `stream_seed`

    Returns
    -------
    tuple of torch.Generator
        (select, estimate): the generators of the n0 draws that choose the class and of the n draws that bound p_A.
    """
    return stream(seed, key, SELECT), stream(seed, key, ESTIMATE)


def input_keys(keys: np.ndarray | list[int] | None, count: int) -> list[int]:
    """The stream keys of `count` inputs: `keys` (integers >= 0, one per input, distinct) or 0..count-1 when None.

    Parameters
    ----------
    keys : numpy.ndarray or list of int, shape (count,), optional
        One distinct integer >= 0 per input (ValueError otherwise); None: 0, 1, ..., count - 1.
    count : int
        The number of inputs.

    Returns
    -------
    list of int, length count
        The keys, as Python ints.
    """
    if keys is None:
        return list(range(count))
    arr = np.asarray(keys)
    if arr.shape != (count,) or (count and (not np.issubdtype(arr.dtype, np.integer) or (arr < 0).any())):
        raise ValueError(f"keys must hold one integer >= 0 per input ({count}), got {keys!r}")
    if len(np.unique(arr)) != count:
        raise ValueError(f"keys must be distinct (each input has its own streams), got {count - len(np.unique(arr))} "
                         "repeated")
    return [int(k) for k in arr]
