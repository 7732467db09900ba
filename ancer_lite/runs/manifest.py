"""Run folders that know what they hold: a `run.json` beside a run's files records everything that determines
them (method, settings, certification parameters, seed, the model's weights, the inputs, their labels and
indices) and the SHA-256 of the optimized parameters θ it wrote. Calling a run again on the same folder with
other inputs, settings or model, or after θ was replaced, is refused with the differences named, instead of
returning the old certificates.

A folder is claimed before any work: its manifest is written first (settings only), θ next, then the
manifest again with θ's hash, each write atomic; a run stopped in between resumes, and a folder holding a
run's files without a manifest (made by hand or by an older version) is refused.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import torch

from ..core.files import write_atomic

MANIFEST = "run.json"
THETA_HASH = "theta_sha256"


def array_digest(a: np.ndarray | torch.Tensor) -> str:
    """SHA-256 (hex) of an array's dtype, shape and bytes: equal exactly when the arrays are identical.

    Parameters
    ----------
    a : numpy.ndarray or torch.Tensor, any shape and dtype
        The array; a tensor is detached and copied to the CPU, anything else goes through `numpy.asarray`.

    Returns
    -------
    str
        64 hex digits.
    """
    arr = a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
    arr = np.ascontiguousarray(arr)
    h = hashlib.sha256(f"{arr.dtype.str}{arr.shape}".encode())
    h.update(arr.tobytes())
    return h.hexdigest()


def file_digest(path: str | Path) -> str:
    """SHA-256 (hex) of a file's bytes.

    Parameters
    ----------
    path : str or os.PathLike
        An existing file.

    Returns
    -------
    str
        64 hex digits.
    """
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _canonical(record: dict) -> dict:
    """The record as JSON would give it back (tuples as lists, keys as strings), for comparison."""
    return json.loads(json.dumps(record, sort_keys=True, default=str))


def claim(folder: str | Path, record: dict, files: tuple[str, ...]) -> dict | None:
    """Claim `folder` for the run described by `record` (JSON-able settings and digests) before any work.

    Returns the stored manifest when the folder already holds this run (to resume or reuse it), None when
    the folder is new (its manifest is then written). Raises ValueError naming the folder and every setting
    that differs when the folder holds another run, or when it holds any of the run's `files` without a
    manifest (made by hand, or by a version of the package that wrote none).

    Parameters
    ----------
    folder : str or os.PathLike
        The run folder; created (with its parents) when new.
    record : dict
        The run's settings and digests (e.g. `experiment.run_record`); JSON-able, with str() for other values.
    files : tuple of str
        The names of the run's files in the folder (e.g. "theta.npy", "certify.tsv", "final.tsv").

    Returns
    -------
    dict or None
        The stored manifest (the record as JSON gives it back, with the θ hash when one was recorded), or None
        for a new folder.
    """
    folder = Path(folder)
    path = folder / MANIFEST
    expected = _canonical(record)
    if path.exists():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ValueError(f"{path} is not a readable run manifest ({e}); delete the run folder {folder}") from e
        held = {k: v for k, v in stored.items() if k != THETA_HASH}
        if held != expected:
            keys = sorted(set(held) | set(expected))
            diff = [k for k in keys if held.get(k) != expected.get(k)]
            raise ValueError(f"the run folder {folder} holds another run: it differs in {', '.join(diff)} "
                             f"(held {[held.get(k) for k in diff]}, asked {[expected.get(k) for k in diff]}); use "
                             f"another folder or delete this one")
        return stored
    present = [name for name in files if (folder / name).exists()]
    if present:
        raise ValueError(f"the run folder {folder} holds {', '.join(present)} but no {MANIFEST}, so what they were "
                         f"computed from is unknown; delete the folder to recompute it")
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(expected, indent=1, sort_keys=True) + "\n")
    return None


def record_theta(folder: str | Path, stored: dict | None, record: dict,
                 theta_file: str | tuple[str, ...] = "theta.npy") -> None:
    """Record the hash of the parameter file(s) the run wrote, or check it against the one recorded: parameters
    replaced after the run (which would change every certificate in its logs) are refused with a ValueError.

    Parameters
    ----------
    folder : str or os.PathLike
    stored : dict or None
        What `claim` returned.
    record : dict
        The run's record (as given to `claim`).
    theta_file : str or tuple of str
        The parameter file, or several (θ and a rotation): one hash of them all, in order.
    """
    folder = Path(folder)
    names = (theta_file,) if isinstance(theta_file, str) else tuple(theta_file)
    digests = [file_digest(folder / name) for name in names]
    digest = digests[0] if len(digests) == 1 else hashlib.sha256("".join(digests).encode()).hexdigest()
    if stored is not None and THETA_HASH in stored:
        if stored[THETA_HASH] != digest:
            shown = " and ".join(str(folder / name) for name in names)
            what = "is not the θ" if len(names) == 1 else "are not the parameters"
            raise ValueError(f"{shown} {what} this run wrote (its SHA-256 differs from the one in "
                             f"{folder / MANIFEST}); delete the run folder to recompute it")
        return
    write_atomic(folder / MANIFEST, json.dumps({**_canonical(record), THETA_HASH: digest}, indent=1,
                                               sort_keys=True) + "\n")
