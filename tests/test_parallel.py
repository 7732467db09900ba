"""`parallel.map_ordered` returns exactly the loop's results in task order, whatever the number of
worker processes, raises a task's exception in the caller and rejects a bad worker count."""
import math

import pytest

from ancer_lite.core import stages
from ancer_lite.runs import parallel


def test_results_in_task_order_for_any_worker_count():
    tasks = [(float(k), 2.0) for k in range(7)]
    expected = [math.pow(*t) for t in tasks]
    assert parallel.map_ordered(math.pow, tasks, workers=1) == expected
    assert parallel.map_ordered(math.pow, tasks, workers=3) == expected
    assert parallel.map_ordered(math.pow, [], workers=2) == []
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


def test_torch_threads_sets_the_count_for_the_block_and_restores_it():
    import torch
    before = torch.get_num_threads()
    with parallel.torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError, match="inside"):
        with parallel.torch_threads(1):
            assert torch.get_num_threads() == 1
            raise RuntimeError("inside")
    assert torch.get_num_threads() == before  # restored after an exception too
    with parallel.torch_threads(None):
        assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads must be an integer >= 1, got 0"):
        with parallel.torch_threads(0):
            pass
