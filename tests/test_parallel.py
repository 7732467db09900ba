"""`parallel.map_ordered` returns exactly the loop's results in task order, whatever the number of
worker processes, raises a task's exception in the caller and rejects a bad worker count; `parallel.run_plans` gives each
plan (a search whose next tasks depend on its earlier results) the outcome of running it alone. Later calls reuse the
workers, unless the caller's environment changed, a call failed or a worker died; an interrupt is the caller's. Tensors
cross the pipes without giving the pool's threads an OpenMP team."""
import math
import os
import signal
import subprocess
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from ancer_lite.core import stages
from ancer_lite.runs import parallel


def test_results_in_task_order_for_any_worker_count():
    tasks = [(float(k), 2.0) for k in range(7)]
    expected = [math.pow(*t) for t in tasks]
    assert parallel.map_ordered(math.pow, tasks, workers=1) == expected
    assert parallel.map_ordered(math.pow, tasks, workers=3) == expected
    assert parallel.map_ordered(math.pow, [], workers=2) == []
    assert len(parallel.map_ordered(os.getpid, [()] * 4, workers=2)) == 4  # tasks without arguments
    assert parallel.available_cores() >= 1


def test_task_exception_reaches_the_caller():
    with pytest.raises(ValueError, match="math domain error"):
        parallel.map_ordered(math.sqrt, [(4.0,), (-1.0,)], workers=2)


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_bad_worker_count_names_the_value(workers):
    with pytest.raises(ValueError, match=f"workers must be an integer >= 1, got {workers!r}"):
        parallel.map_ordered(math.sqrt, [(4.0,)], workers=workers)


def test_workers_leave_the_stage_file_alone(tmp_path, monkeypatch):
    """A worker must not overwrite the caller's stage profile (its atexit writes nothing)."""
    path = tmp_path / "stages.json"
    monkeypatch.setenv(stages.ENV_FILE, str(path))
    parallel.map_ordered(stages.write, [(None,), (None,)], workers=2)
    assert not path.exists()


def _pid_plan():
    (pid,) = yield [()]
    return pid


def _worker_pids(calls: int = 3) -> set[int]:
    pids = set()
    for _ in range(calls):
        pids |= set(parallel.map_ordered(os.getpid, [()] * 4, workers=2))
        pids |= set(parallel.run_plans(os.getpid, [_pid_plan(), _pid_plan()], workers=2))
    return pids


def test_later_calls_reuse_the_workers():
    """Each call would otherwise start its own two workers: three calls of each kind at least six processes."""
    parallel.shutdown_pools()
    mapped = set().union(*(parallel.map_ordered(os.getpid, [()] * 4, workers=2) for _ in range(3)))
    assert 1 <= len(mapped) <= 2 and os.getpid() not in mapped
    pids = _worker_pids()
    assert mapped <= pids and len(pids) <= 2
    assert _worker_pids(1) <= pids
    parallel.shutdown_pools()
    assert not _worker_pids(1) & pids


def test_workers_see_the_callers_current_environment(monkeypatch):
    before = _worker_pids(1)
    monkeypatch.setenv("ANCER_TEST_POOL", "changed")
    assert parallel.map_ordered(os.getenv, [("ANCER_TEST_POOL",)] * 2, workers=2) == ["changed", "changed"]
    assert not _worker_pids(1) & before


def test_a_failed_call_drops_its_workers_and_the_next_call_works():
    before = _worker_pids(1)
    with pytest.raises(ValueError, match="math domain error"):
        parallel.map_ordered(math.sqrt, [(-1.0,)] + [(4.0,)] * 20, workers=2)
    after = _worker_pids(1)
    assert not after & before
    with pytest.raises(BrokenProcessPool):
        parallel.map_ordered(os._exit, [(3,), (3,)], workers=2)
    assert not _worker_pids(1) & after
    assert parallel.map_ordered(math.sqrt, [(4.0,), (9.0,)], workers=2) == [2.0, 3.0]


def test_kept_workers_exit_when_their_caller_is_killed(tmp_path):
    caller = _caller(tmp_path, "    print(*sorted(set(map_ordered(os.getpid, [()] * 4, workers=2))), flush=True)\n"
                               "    time.sleep(600)\n")
    try:
        workers = {int(p) for p in caller.stdout.readline().split()}
        assert workers and all(_alive(p) for p in workers)
    finally:
        caller.kill()
        caller.wait()
    _assert_exit_within(workers, 30)


def test_workers_exit_when_their_caller_is_killed_while_they_start(tmp_path):
    """A caller killed while its workers still import the package: they must not start, find no parent and wait."""
    caller = _caller(tmp_path, "    print('ready', flush=True)\n"
                               "    map_ordered(time.sleep, [(600,)] * 2, workers=2)\n")
    try:
        assert caller.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        workers = set()
        while len(workers) < 2 and time.monotonic() < deadline:
            workers |= {p for p in _children(caller.pid) if "spawn_main" in _cmdline(p)}
            time.sleep(0.02)
        assert len(workers) == 2
    finally:
        caller.kill()
        caller.wait()
    _assert_exit_within(workers, 30)


def _pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _both_workers() -> set[int]:
    """The two kept workers' pids, once both have run a task (their initializer done)."""
    deadline = time.monotonic() + 60
    pids: set[int] = set()
    while len(pids) < 2 and time.monotonic() < deadline:
        pids |= set(parallel.map_ordered(_pid_after, [(0.2,)] * 2, workers=2))
    assert len(pids) == 2
    return pids


def _ignores_sigint(pid: int) -> bool:
    status = (Path("/proc") / str(pid) / "status").read_text()
    ignored = next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:"))
    return bool(int(ignored, 16) >> (signal.SIGINT - 1) & 1)


def test_an_interrupt_between_calls_leaves_the_kept_workers_running(capfd):
    """A Jupyter kernel's interrupt and its shutdown send SIGINT to the kernel's whole process group: the kept workers
    ignore it (no traceback), and the next call reuses them."""
    parallel.shutdown_pools()
    workers = _both_workers()
    for pid in workers:
        os.kill(pid, signal.SIGINT)
    time.sleep(1)
    assert all(_alive(p) and _ignores_sigint(p) for p in workers)
    assert _worker_pids(1) <= workers
    assert "KeyboardInterrupt" not in capfd.readouterr().err


def test_a_worker_killed_between_calls_is_replaced_before_the_next_call():
    parallel.shutdown_pools()
    workers = _both_workers()
    os.kill(min(workers), signal.SIGKILL)
    deadline = time.monotonic() + 30
    while (Path("/proc") / str(min(workers))).exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # until the pool has seen it die and collected it, as between two calls
    assert not (Path("/proc") / str(min(workers))).exists()
    assert parallel.map_ordered(math.sqrt, [(4.0,), (9.0,)], workers=2) == [2.0, 3.0]
    assert not _worker_pids(1) & workers


def test_an_interrupted_call_stops_its_running_workers_at_once(tmp_path):
    """Interrupted as a Jupyter kernel is (SIGINT to its process group) while its tasks run, the caller does not wait
    for them: its workers are terminated."""
    caller = _caller(tmp_path, "    pids = set()\n"
                               "    while len(pids) < 2:\n"
                               "        pids |= set(map_ordered(os.getpid, [()] * 2, workers=2))\n"
                               "    print(*sorted(pids), flush=True)\n"
                               "    try:\n"
                               "        map_ordered(time.sleep, [(600,)] * 2, workers=2)\n"
                               "    except KeyboardInterrupt:\n"
                               "        print('interrupted', flush=True)\n", start_new_session=True)
    try:
        workers = {int(p) for p in caller.stdout.readline().split()}
        assert len(workers) == 2
        time.sleep(1)  # both tasks running
        os.killpg(caller.pid, signal.SIGINT)
        assert caller.wait(timeout=30) == 0
        assert caller.stdout.read().strip() == "interrupted"
    finally:
        caller.kill()
        caller.wait()
    _assert_exit_within(workers, 30)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts this process's threads in /proc (Linux)")
def test_tensors_cross_the_pipes_without_an_openmp_team_in_the_pools_threads(tmp_path):
    """Tensors in a task's arguments and result are pickled by the caller's and the worker's main threads: the pool's
    own threads (the executor's feeder and manager) run no torch operation, so the caller gains no OpenMP thread
    besides them (libgomp would then count more threads than cores and stop spinning in every parallel region),
    and the caller's tensors are not moved into shared memory. Results equal the loop's."""
    caller = _caller(tmp_path, """
    import threading, torch
    torch.set_num_threads(2)
    x = torch.rand(2_000_000, generator=torch.Generator().manual_seed(0))
    x.add(1.0)  # this thread's own OpenMP team, started before the count
    threads, python_threads = len(os.listdir('/proc/self/task')), threading.active_count()
    out = map_ordered(torch.mul, [(x, 2.0), (x, 3.0)], workers=2)
    time.sleep(1)
    print(len(os.listdir('/proc/self/task')) - threads, threading.active_count() - python_threads,
          x.is_shared(), torch.equal(out[0], x * 2.0) and torch.equal(out[1], x * 3.0))
""")
    try:
        assert caller.wait(timeout=120) == 0
        new_threads, new_python_threads, shared, equal = caller.stdout.read().split()
    finally:
        caller.kill()
        caller.wait()
    assert int(new_threads) == int(new_python_threads) == 2  # the executor's feeder and manager threads alone
    assert (shared, equal) == ("False", "True")


def _caller(tmp_path: Path, main: str, start_new_session: bool = False) -> subprocess.Popen:
    """A Python process that runs `main` (indented code using `map_ordered`, `os`, `time`), its stdout piped; with
    `start_new_session`, in a process group of its own, as Jupyter starts a kernel."""
    script = tmp_path / "caller.py"
    script.write_text("import os, time\nfrom ancer_lite.runs.parallel import map_ordered\n"
                      "if __name__ == '__main__':\n" + main)
    return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            start_new_session=start_new_session,
                            env={**os.environ, "PYTHONPATH": str(Path(parallel.__file__).parents[2])})


def _assert_exit_within(pids: set[int], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(p) for p in pids)


def _stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state, parent id, ...); None for a process gone."""
    try:
        fields = (Path("/proc") / str(pid) / "stat").read_text().split(") ")[-1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return fields if len(fields) > 1 else None  # a process that exits while read


def _children(pid: int) -> set[int]:
    return {int(entry.name) for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and (fields := _stat(entry.name)) is not None and int(fields[1]) == pid}


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return ""


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


# -- run_plans: plans whose next tasks depend on their earlier results -------------------------------------------
def _powers(base: float, count: int):
    """A plan of two dependent steps: base**1 .. base**count, then the square root of each; returns their sum."""
    powers = yield [(base, float(k)) for k in range(1, count + 1)]
    roots = yield [(p, 0.5) for p in powers]
    return sum(roots)


def _expected(base: float, count: int) -> float:
    return sum(math.pow(math.pow(base, k), 0.5) for k in range(1, count + 1))


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_run_plans_gives_each_plan_its_loop_outcome(workers):
    plans = [_powers(2.0, 3), _powers(3.0, 1), _powers(1.5, 4)]
    assert parallel.run_plans(math.pow, plans, workers) == [_expected(2.0, 3), _expected(3.0, 1), _expected(1.5, 4)]
    assert parallel.run_plans(math.pow, [], workers) == []


@pytest.mark.parametrize("workers", [1, 2])
def test_run_plans_computes_a_task_named_by_several_plans_once(tmp_path, workers):
    """os.mkdir fails on its second call for one folder: the shared task (and the repeated one) ran once."""
    shared = str(tmp_path / "shared")

    def plan(own: str):
        first = yield [(shared,), (own,)]
        second = yield [(shared,)]
        return first + second

    outcomes = parallel.run_plans(os.mkdir, [plan(str(tmp_path / "a")), plan(str(tmp_path / "b"))], workers)
    assert outcomes == [[None, None, None]] * 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "shared"]


def test_run_plans_raises_a_task_exception_and_refuses_a_bad_step():
    def plan(step):
        yield step

    with pytest.raises(ValueError, match="math domain error"):
        parallel.run_plans(math.sqrt, [plan([(4.0,)]), plan([(-1.0,)])], workers=2)
    with pytest.raises(ValueError, match="at least one task"):
        parallel.run_plans(math.sqrt, [plan([])], workers=1)
    with pytest.raises(TypeError, match="list of task tuples"):
        parallel.run_plans(math.sqrt, [plan([4.0])], workers=2)
    with pytest.raises(ValueError, match="workers must be an integer >= 1, got 0"):
        parallel.run_plans(math.sqrt, [plan([(4.0,)])], workers=0)
