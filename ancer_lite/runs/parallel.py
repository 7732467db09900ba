"""Independent CPU-bound tasks over worker processes, results in task order.

Algorithm 1 (`memory.certify_stream`) is single-threaded numpy; notebook 04 runs it over hundreds of
(run, test order, inflation) combinations, each self-contained and seeded by its own arguments, so the
combinations can run in separate processes and return exactly what a loop would. `map_ordered` does
that with fresh ("spawn") processes, which never inherit a half-initialized OpenMP or torch state from
the caller (a forked Jupyter kernel can hang in its first parallel region).

Torch's float results can depend on its intra-op thread count (measured: ANCER's optimized Θ on the
MNIST CNN and Isotropic DD's θ on the digits MLP differ in the last bits between 1 and 2 threads, and an
optimization carries such differences into its result). A task whose result depends on it runs its work
under `reproducibility.torch_threads(n)` itself, so that it computes the same in a worker or in the caller's loop, and
the result depends on neither `workers` nor the machine's core count. One thread per worker is also the
faster split on 2 cores: torch draws Gaussian noise on one thread and the quick models' small layers gain
little from a second one, while a second process doubles both.

`run_plans` does the same for searches whose next jobs depend on their earlier results (notebook 07's choice of
κ and γ: a grid, then values beyond its edge, then checks at other λ): each search is a plan, and the ready jobs
of every plan share one pool, so that one search's dependent steps run beside another's instead of leaving a core
idle; each plan sees the loop's results.

On a GPU (a profile whose `device` resolves to CUDA) the jobs run in this process instead (`device_workers`):
the GPU does the work, and one process keeps one CUDA context.

Workers leave the stage profile to the caller (they drop `ANCER_STAGES_FILE`), so the caller should
wrap the call in the stage it belongs to.

The pool outlives the call: starting a worker costs it the package's import (torch, pandas: about 5 s on the 2-core
machine, both cores busy), which a notebook calling `map_ordered` or `run_plans` five to ten times would otherwise
pay at every call. A later call with the same worker count, working folder, import path and environment reuses the
workers; another combination replaces them (`shutdown_pools`), since spawned workers keep those of their start. A
call that fails cancels its queued tasks, waits for its running ones and drops the pool; a call interrupted
(KeyboardInterrupt) stops its workers at once. The workers ignore SIGINT: a Jupyter kernel's interrupt and its
shutdown both send it to the kernel's whole process group, which would kill workers waiting between two calls (with
a traceback each) and leave the next call a broken pool; the caller's KeyboardInterrupt stops them instead. A kept
pool that lost a worker between calls (killed from outside) is replaced before the next call's tasks are handed
out. The workers run each task from its arguments alone, as before within one call, so reuse changes no result.

A task's arguments and its result cross the pipes as bytes, pickled and unpickled by this process's main thread and
the worker's (`_encode`, `_run_encoded`), never by the pool's own threads. The executor pickles what it sends in a
feeder thread and unpickles what it receives in a manager thread, and both live as long as the kept pool; a tensor
pickled there can start a parallel operation (moving it into shared memory is a copy), which gives that thread an
OpenMP team of its own. libgomp then counts more threads than cores and stops spinning at the end of a parallel
region (its throttled wait), so every small parallel operation of the caller sleeps and is woken instead. Measured on
2 cores with notebook 06's columns loaded through a kept pool: a 40-input forward and backward pass of the MNIST CNN
took 0.084-0.096 s while that pool was alive and 0.033-0.041 s after `shutdown_pools` (about 3,800 voluntary context
switches against 7), and a two-thread input Hessian 0.041-0.051 s against 0.026 s. Pickled by value, the caller's
tensors also stay in its own memory instead of being moved into shared memory.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
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
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is the caller's (`_kept_pool` stops the workers)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()


def _exit_with_parent(parent: multiprocessing.process.BaseProcess) -> None:
    """A kept worker waits for the caller's next call, so it must not outlive the caller: a kernel killed before
    its pool was shut down (a forced restart) leaves no worker waiting. Waits on the parent's sentinel, a pipe the
    caller opened before the worker started, so a caller that dies while its worker is still importing is seen too."""
    parent.join()
    os._exit(0)


#: the kept worker pool (at most one), under what its workers inherited when they started (`_pool_key`)
_POOLS: dict[tuple, ProcessPoolExecutor] = {}


def _encode(value: Any) -> bytes:
    """`value` pickled by value in the calling thread (tensors included: no shared memory, no file descriptors)."""
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _run_encoded(fn: Callable[..., Any], args: bytes) -> bytes:
    """In a worker: `fn(*args)` with `args` unpickled and the result pickled in the worker's main thread."""
    return _encode(fn(*pickle.loads(args)))


def _submit(pool: ProcessPoolExecutor, fn: Callable[..., Any], task: tuple) -> Future:
    """`fn(*task)` handed to `pool`, its arguments pickled here; the future's result is the pickled result
    (`pickle.loads` it in the caller's thread)."""
    return pool.submit(_run_encoded, fn, _encode(task))


def _pool_key(workers: int) -> tuple:
    return workers, os.getcwd(), tuple(sys.path), tuple(sorted(os.environ.items()))


def shutdown_pools(now: bool = False) -> None:
    """Stop the worker processes kept for later `map_ordered` / `run_plans` calls: their queued tasks cancelled and
    their running ones waited for, or, with `now`, the workers terminated at once. They also stop when this process
    exits.

    Parameters
    ----------
    now : bool, default False
        Terminate the workers instead of waiting for the tasks they are running.
    """
    while _POOLS:
        _, pool = _POOLS.popitem()
        if now:
            for process in _processes(pool):
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def _processes(pool: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    """The pool's worker processes (the executor keeps them by pid; none before its first task). The executor marks
    itself broken (`_broken`) once its manager thread has seen a worker die."""
    return list((getattr(pool, "_processes", None) or {}).values())


@contextmanager
def _kept_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """The kept pool of `workers` spawned processes for the caller's environment (started when there is none, or
    when a worker of the kept one has died since its last call): on an error inside the block, its queued tasks are
    cancelled and it is dropped; on an interruption, its workers are terminated."""
    key = _pool_key(workers)
    if key in _POOLS and (getattr(_POOLS[key], "_broken", False)
                          or not all(process.is_alive() for process in _processes(_POOLS[key]))):
        shutdown_pools(now=True)
    if key not in _POOLS:
        shutdown_pools()
        _POOLS[key] = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                          initializer=_worker_init)
    try:
        yield _POOLS[key]
    except KeyboardInterrupt:
        shutdown_pools(now=True)
        raise
    except BaseException:
        shutdown_pools()
        raise


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
    with _kept_pool(workers) as pool:
        futures = [_submit(pool, fn, t) for t in tasks]
        return [pickle.loads(f.result()) for f in futures]


#: a plan of `run_plans`: yields lists of task tuples, is sent each list's results, returns its outcome
Plan = Generator[list[tuple], list[Any], Any]


def run_plans(fn: Callable[..., Any], plans: Sequence[Plan], workers: int | None = None) -> list[Any]:
    """Drive `plans` whose next tasks depend on the results of their earlier ones, with every plan's ready tasks
    in one pool of up to `workers` processes, so that one plan's dependent steps run beside another's.

    A plan is a generator: it yields a list of task tuples, receives the list `[fn(*t) for t in tasks]` (in its
    order) once every one of them is done, and so on until it returns its outcome. A task equal to one already
    handed out (by any plan) is computed once and its result shared, so that plans may name a common task (a
    control both need). Each plan's steps, tasks and outcome are those of running the plans one after another in
    this process, which is what happens with one worker; only the wall time depends on `workers`.

    Parameters
    ----------
    fn : callable
        A module-level (picklable) function, called as `fn(*t)`.
    plans : sequence of generator
        Fresh generators, each yielding non-empty lists of task tuples, hashable (equal tuples are one task) and
        picklable.
    workers : int, optional
        The most processes to use, >= 1; None: `available_cores()`; 1 runs every task in this process.

    Returns
    -------
    list
        Each plan's outcome (its return value), in the order of `plans`.
    """
    if workers is None:
        workers = available_cores()
    check_count(workers, "workers")
    plans = list(plans)
    outcomes: list[Any] = [None] * len(plans)
    if workers <= 1:
        done: dict[tuple, Any] = {}
        for i, plan in enumerate(plans):
            outcomes[i] = _drive_in_process(fn, plan, done)
        return outcomes
    with _kept_pool(workers) as pool:
        futures: dict[tuple, Future] = {}
        results: dict[tuple, Any] = {}  # a finished task's result, unpickled once (plans naming it share it)
        waiting: dict[int, list[tuple]] = {}  # plan -> the tasks of its current step

        def result(t: tuple) -> Any:
            if t not in results:
                results[t] = pickle.loads(futures[t].result())
            return results[t]

        def advance(i: int, step_results: list[Any] | None) -> None:
            try:
                tasks = next(plans[i]) if step_results is None else plans[i].send(step_results)
            except StopIteration as stop:
                outcomes[i] = stop.value
                waiting.pop(i, None)
                return
            tasks = _check_step(tasks)
            for t in tasks:
                if t not in futures:
                    futures[t] = _submit(pool, fn, t)
            waiting[i] = tasks

        for i in range(len(plans)):
            advance(i, None)
        while waiting:
            ready = [i for i, tasks in waiting.items() if all(futures[t].done() for t in tasks)]
            if not ready:  # every waiting plan has a task still running or queued
                wait({futures[t] for tasks in waiting.values() for t in tasks if not futures[t].done()},
                     return_when=FIRST_COMPLETED)
                continue
            for i in ready:
                advance(i, [result(t) for t in waiting[i]])
    return outcomes


def _check_step(tasks: object) -> list[tuple]:
    """One step of a plan: a non-empty list of task tuples (TypeError / ValueError otherwise)."""
    if not isinstance(tasks, list) or not all(isinstance(t, tuple) for t in tasks):
        raise TypeError(f"a plan must yield a list of task tuples, got {tasks!r}")
    if not tasks:
        raise ValueError("a plan must yield at least one task per step, got an empty list")
    return tasks


def _drive_in_process(fn: Callable[..., Any], plan: Plan, done: dict[tuple, Any]) -> Any:
    """One plan of `run_plans` in this process, its tasks computed once each (`done` is shared by the plans)."""
    def compute(tasks: list[tuple]) -> list[Any]:
        for t in _check_step(tasks):
            if t not in done:
                done[t] = fn(*t)
        return [done[t] for t in tasks]
    return drive(plan, compute)


def drive(plan: Generator[Any, Any, Any], compute: Callable[[Any], Any]) -> Any:
    """Run a generator step by step in this process: send it `compute(step)` for each step it yields, until it
    returns (the one loop behind `run_plans` with one worker and `selection.widening_search`).

    Parameters
    ----------
    plan : generator
        A fresh generator.
    compute : callable
        `compute(step)` -> what the generator is sent for that step.

    Returns
    -------
    object
        The generator's return value.
    """
    results = None
    while True:
        try:
            step = plan.send(results)
        except StopIteration as stop:
            return stop.value
        results = compute(step)
