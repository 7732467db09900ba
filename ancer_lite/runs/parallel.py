"""Independent CPU-bound tasks over worker processes, results in task order.

Algorithm 1 (`memory.certify_stream`) is single-threaded numpy; notebook 04 runs it over hundreds of
(run, test order, inflation) combinations, each self-contained and seeded by its own arguments, so the
combinations can run in separate processes and return exactly what a loop would. `map_ordered` does
that with fresh ("spawn") processes, which never inherit a half-initialized OpenMP or torch state from
the caller (a forked Jupyter kernel can hang in its first parallel region).

Torch's float results can depend on its intra-op thread count (measured: ANCER's optimized Θ on the
MNIST CNN and Isotropic DD's θ on the digits MLP differ in the last bits between 1 and 2 threads, and an
optimization carries such differences into its result). A task whose result depends on it runs its work
under `torch_threads(n)` itself, so that it computes the same in a worker or in the caller's loop, and
the result depends on neither `workers` nor the machine's core count. One thread per worker is also the
faster split on 2 cores: torch draws Gaussian noise on one thread and the quick models' small layers gain
little from a second one, while a second process doubles both.

On a GPU (a profile whose `device` resolves to CUDA) the jobs run in this process instead (`device_workers`):
the GPU does the work, and one process keeps one CUDA context.

Workers leave the stage profile to the caller (they drop `ANCER_STAGES_FILE`), so the caller should
wrap the call in the stage it belongs to.
"""
from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

import torch

from ..core import devices
from ..core.stages import ENV_FILE
from ..core.validation import check_count


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def _worker_init() -> None:
    os.environ.pop(ENV_FILE, None)  # the caller's stage owns the time; a worker must not overwrite its file


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


def device_workers(device: str | torch.device | None, workers: int | None = None) -> int | None:
    """The worker processes for jobs whose models run on `device` (a profile's setting, `devices.resolve`): `workers`
    as given (None: one per core) on the CPU, and 1 on a CUDA device, where the jobs run one after another in this
    process on the one GPU (worker processes would each start a CUDA context and queue on the same chip). device
    None: the CPU. A CUDA device that is not usable here raises ValueError naming it.

    Parameters
    ----------
    device : str, torch.device or None
        The jobs' device setting ("cpu", "auto", "cuda:0", ...; `devices.resolve`); None: the CPU.
    workers : int, optional
        The worker processes for CPU jobs; None: one per core (`map_ordered`'s default).

    Returns
    -------
    int or None
        1 when `device` resolves to a non-CPU (CUDA) device, otherwise `workers` as given (for `map_ordered`).
    """
    if device is not None and devices.resolve(device).type != "cpu":
        return 1
    return workers


def map_ordered(fn: Callable[..., Any], tasks: Sequence[tuple], workers: int | None = None) -> list[Any]:
    """[fn(*t) for t in tasks], computed in up to `workers` processes (default: `available_cores()`; 1 runs
    the loop in this process). `fn` must be a module-level function and the tasks picklable; a
    task's exception is raised here. Tasks are handed out in their order (put the longest first), and the
    results come back in it. The result never depends on `workers`.

    Parameters
    ----------
    fn : callable
        A module-level (picklable) function, called as `fn(*t)`.
    tasks : sequence of tuple
        One argument tuple per call, picklable.
    workers : int, optional
        The most processes to use, >= 1 (capped at the number of tasks); None: `available_cores()`.

    Returns
    -------
    list
        `fn(*t)` for each task, in task order.
    """
    if workers is None:
        workers = available_cores()
    check_count(workers, "workers")
    tasks = list(tasks)
    workers = min(workers, len(tasks))
    if workers <= 1:
        return [fn(*t) for t in tasks]
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_worker_init) as pool:
        return list(pool.map(fn, *zip(*tasks)))
