"""Every public function raises a clear error on a bad argument: the table of `tests/bad_input_cases.py` calls
each function once with valid keyword arguments (which must succeed), then once per case with ONE argument
replaced by a bad value. A clear error is a ValueError, TypeError or FileNotFoundError / PermissionError (or
another OSError naming the path) whose message names the argument (the case's regex) and says what was
expected or what was wrong (`DESCRIPTIVE`). Every call is made with torch, numpy and random seeded at 0 and
one torch thread; a call that does not return within 20 s fails (a bad value must not loop forever)."""
from __future__ import annotations

import random
import re

import numpy as np
import pytest
import torch
from bad_input_cases import CASES, build_tree, resolve

CALLS = list(dict.fromkeys(case.call for case in CASES))

#: words that say what was expected or what was wrong
DESCRIPTIVE = re.compile(r"must|expect|got\b|should|need|not found|missing|invalid|is not|not an? |out of|only|"
                         r"require|cannot|incomplete|empty|does not exist|no such|Is a directory|File exists|"
                         r"not a |differ|already|duplicate|holds|\buse\b|at most|at least|gives an", re.I)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """The folder of the files the cases read and write (`build_tree`, `Tmp`)."""
    folder = tmp_path_factory.mktemp("bad_inputs")
    build_tree(folder)
    return folder


@pytest.fixture(scope="module", autouse=True)
def one_thread_no_stage_file():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("ANCER_STAGES_FILE", raising=False)
        yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def seeded():
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)


def test_table_is_complete():
    assert len(CASES) == 1200
    assert len(CALLS) == 172
    assert len({call.name for call in CALLS}) == len(CALLS)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("call", CALLS, ids=[call.name for call in CALLS])
def test_baseline_call_succeeds(call, root):
    call.fn(**call.kwargs(root))


@pytest.mark.timeout(20)
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_argument_raises_a_clear_error(case, root):
    kwargs = case.call.kwargs(root)
    with pytest.raises(case.error) as info:
        kwargs[case.arg] = resolve(case.bad, root)  # a value refused when it is made counts as refused
        case.call.fn(**kwargs)
    err = info.value
    message = str(err)
    assert type(err) is case.error, f"{type(err).__name__}: {message}"
    assert isinstance(err, (ValueError, TypeError, OSError)) and not isinstance(err, KeyError)
    assert re.search(case.pattern, message), f"the message does not name {case.arg!r}: {message}"
    assert DESCRIPTIVE.search(message), f"the message does not say what was expected: {message}"
