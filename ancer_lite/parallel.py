"""Independent CPU-bound tasks over worker processes, results in task order.

Algorithm 1 (`memory.certify_stream`) is single-threaded numpy; notebook 04 runs it over hundreds of
(run, test order, inflation) combinations, each self-contained and seeded by its own arguments, so the
combinations can run in separate processes and return exactly what a loop would. `map_ordered` does
that with fresh ("spawn") processes, which never inherit a half-initialized OpenMP or torch state from
the caller (a forked Jupyter kernel can hang in its first parallel region).

Workers leave the stage profile to the caller (they drop `ANCER_STAGES_FILE`), so the caller should
wrap the call in the stage it belongs to.
"""
from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from .stages import ENV_FILE


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def _worker_init() -> None:
    os.environ.pop(ENV_FILE, None)  # the caller's stage owns the time; a worker must not overwrite its file


def map_ordered(fn: Callable[..., Any], tasks: Sequence[tuple], workers: int | None = None) -> list[Any]:
    """[fn(*t) for t in tasks], computed in up to `workers` processes (default: `available_cores()`; 1 runs
    the loop in this process). `fn` must be a module-level function and the tasks picklable; a task's
    exception is raised here. The result never depends on `workers`."""
    if workers is None:
        workers = available_cores()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    tasks = list(tasks)
    workers = min(workers, len(tasks))
    if workers <= 1:
        return [fn(*t) for t in tasks]
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_worker_init) as pool:
        return list(pool.map(fn, *zip(*tasks)))
