"""Wall time by stage of the computation, for the profile of `make all`.

The package's expensive steps are wrapped in `stage(NAME)` (or decorated with `timed(NAME)`):

==============  ==========================================================================================
training        base classifiers (`train.train_classifier`) and UCAN's noise generators (`ucan.train_ucan`)
selection       step-size and hyperparameter selection on validation inputs (everything inside it, its own
                optimizations and CERTIFY calls included)
optimization    the sample-wise optimizations of Isotropic DD, ANCER and RANCER (Hessians included)
certify         Monte Carlo CERTIFY (`certify.Smooth.certify`, `ucan.certify`)
memory          Algorithm 1 (`memory.algorithm1`, `memory.certify_stream`)
figures         rendering and saving figures (`figures.save_fig`)
==============  ==========================================================================================

The outermost stage owns the time: a CERTIFY call made while choosing step sizes counts as selection,
so the stages never overlap and their sum is at most the wall time (the rest, imports, cache reads,
tables and prose, is "other" in the pipeline's profile). The totals live in the process; when the
environment variable `ANCER_STAGES_FILE` names a file (the pipeline sets it for each notebook's
kernel), they are also written there as JSON, at most once a second while stages run and once at exit.
Nothing here changes what is computed.
"""
from __future__ import annotations

import atexit
import functools
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

TRAINING, SELECTION, OPTIMIZATION, CERTIFY, MEMORY, FIGURES = (
    "training", "selection", "optimization", "certify", "memory", "figures")
#: every stage, in the order the profile lists them
STAGES = (TRAINING, SELECTION, OPTIMIZATION, CERTIFY, MEMORY, FIGURES)
ENV_FILE = "ANCER_STAGES_FILE"
#: seconds between two writes of the stages file while stages run
WRITE_EVERY = 1.0

_seconds: dict[str, float] = {s: 0.0 for s in STAGES}
_calls: dict[str, int] = {s: 0 for s in STAGES}
_active: list[str] = []  # the running outermost stage (at most one entry)
_last_write = [0.0]

F = TypeVar("F", bound=Callable)


def check_stage(name: str) -> str:
    """`name` if it is one of `STAGES`, else a ValueError naming it and the stages.

    Parameters
    ----------
    name : str
        The stage's name.

    Returns
    -------
    str
        `name`, unchanged.
    """
    if name not in STAGES:
        raise ValueError(f"stage must be one of {list(STAGES)}, got {name!r}")
    return name


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Count the block's wall time under stage `name` (one of `STAGES`), unless another stage is already
    running, which then owns the time.

    Parameters
    ----------
    name : str
        The stage, one of `STAGES` (ValueError otherwise).

    Yields
    ------
    None
        Control, timed under `name` when no other stage is running; after the block the totals are written
        (`write`) when the last write is at least WRITE_EVERY seconds old.
    """
    check_stage(name)
    if _active:
        yield
        return
    _active.append(name)
    t0 = time.perf_counter()
    try:
        yield
    finally:
        _seconds[name] += time.perf_counter() - t0
        _calls[name] += 1
        _active.clear()
        if time.perf_counter() - _last_write[0] >= WRITE_EVERY:
            write()


def timed(name: str) -> Callable[[F], F]:
    """Decorator form of `stage`: every call of the function counts under stage `name`.

    Parameters
    ----------
    name : str
        The stage, one of `STAGES` (ValueError, when the decorator is made, otherwise).

    Returns
    -------
    callable
        The decorator: it wraps a function (keeping its name and docstring, `functools.wraps`) so that each call
        runs inside `stage(name)` and returns the function's result.
    """
    check_stage(name)

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            with stage(name):
                return fn(*args, **kwargs)
        return inner  # type: ignore[return-value]
    return wrap


def totals() -> dict[str, dict[str, float]]:
    """{stage: {"seconds": wall seconds, "calls": outermost calls}} for every stage since the last
    `reset` (or the start of the process)."""
    return {s: {"seconds": _seconds[s], "calls": _calls[s]} for s in STAGES}


def reset() -> None:
    """Set every total back to zero."""
    for s in STAGES:
        _seconds[s], _calls[s] = 0.0, 0


def write(path: str | Path | None = None) -> Path | None:
    """Write `totals()` as JSON to `path` (default: $ANCER_STAGES_FILE; nothing when neither is set),
    replacing the file atomically.

    Parameters
    ----------
    path : str, os.PathLike or None, optional
        The file to write; None: the file named by $ANCER_STAGES_FILE.

    Returns
    -------
    Path or None
        The path written; None when neither `path` nor $ANCER_STAGES_FILE is set (nothing is written).
    """
    target = path if path is not None else os.environ.get(ENV_FILE)
    if not target:
        return None
    _last_write[0] = time.perf_counter()
    target = Path(target)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(totals()), encoding="utf-8")
    os.replace(tmp, target)
    return target


def read(path: str | Path) -> dict[str, dict[str, float]]:
    """The totals written by `write` (every stage present; zeros for a missing file).

    Parameters
    ----------
    path : str or os.PathLike
        The JSON file `write` wrote; a missing file gives zeros.

    Returns
    -------
    dict of str to dict
        {stage: {"seconds": float, "calls": int}} for every stage of `STAGES`, as `totals` gives them; a stage or
        field missing from the file is 0.

    Raises
    ------
    ValueError
        When the file names a stage not in `STAGES`.
    """
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    unknown = sorted(set(data) - set(STAGES))
    if unknown:
        raise ValueError(f"{path}: unknown stages {unknown}; expected a subset of {list(STAGES)}")
    return {s: {"seconds": float(data.get(s, {}).get("seconds", 0.0)), "calls": int(data.get(s, {}).get("calls", 0))}
            for s in STAGES}


atexit.register(lambda: write() if os.environ.get(ENV_FILE) else None)
