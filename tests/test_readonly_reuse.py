"""A complete results folder is reused without writing to it: the certification runners
of notebooks 03 (`experiment.run_method`) and 07 (`ucan_study.certify_variant`) take the log's writer lock and
rewrite final.tsv only when something is left to compute, so a finished, read-only folder (shared, archived)
gives its results back. The tests run as any user (root ignores file modes), so "read-only" is enforced by
refusing every opening for writing below the folder, as the kernel would."""
import builtins
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ancer_lite.core import files
from ancer_lite.methods.registry import OptimSettings
from ancer_lite.methods.ucan import FixedNPG
from ancer_lite.runs import logs
from ancer_lite.runs.experiment import run_method
from ancer_lite.studies.ucan_study import Variant, certify_variant

SETTINGS = OptimSettings(chunk=4).with_budget(2, 8)
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


@pytest.fixture
def read_only(monkeypatch):
    """Make `folder` read-only for the rest of the test: any open for writing below it raises PermissionError."""
    def seal(folder: Path) -> None:
        root = str(folder.resolve())
        real_os_open, real_open = os.open, builtins.open

        def inside(path) -> bool:
            try:
                return str(Path(os.fspath(path)).resolve()).startswith(root)
            except TypeError:
                return False

        def os_open(path, flags, *args, **kwargs):
            if flags & WRITE_FLAGS and inside(path):
                raise PermissionError(13, "Permission denied (read-only test folder)", os.fspath(path))
            return real_os_open(path, flags, *args, **kwargs)

        def open_(file, mode="r", *args, **kwargs):
            if any(c in mode for c in "wax+") and not isinstance(file, int) and inside(file):
                raise PermissionError(13, "Permission denied (read-only test folder)", os.fspath(file))
            return real_open(file, mode, *args, **kwargs)

        monkeypatch.setattr(os, "open", os_open)
        monkeypatch.setattr(builtins, "open", open_)
    return seal


@pytest.fixture(scope="module")
def toy(toy_classifier):
    return toy_classifier(5, 20)


def test_the_seal_refuses_writes(tmp_path, read_only):
    """The fixture does what the tests rely on: a log cannot be opened for writing in a sealed folder."""
    read_only(tmp_path)
    with pytest.raises(PermissionError):
        logs.ResultLog(tmp_path / "certify.tsv")
    with pytest.raises(PermissionError):
        files.write_atomic(tmp_path / "final.tsv", "x\n")


@pytest.mark.parametrize("method", ["fixed", "isotropic", "ancer"])
def test_run_method_reuses_a_complete_read_only_folder(tmp_path, toy, read_only, method):
    model, x, y, idx = toy
    args = (model, x, y, idx, "gaussian", 0.25, method, SETTINGS, tmp_path / "run")
    kw = dict(n0=10, n=200, alpha=0.01, num_classes=3, seed=2)
    first = run_method(*args, **kw)
    before = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()}
    read_only(tmp_path / "run")
    again = run_method(*args, **kw)
    pd.testing.assert_frame_equal(first, again)
    assert {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()} == before


def test_run_method_still_needs_to_write_when_inputs_are_missing(tmp_path, toy, read_only):
    """An incomplete read-only folder is an error naming the file, not a silent partial result."""
    model, x, y, idx = toy
    kw = dict(n0=10, n=200, alpha=0.01, num_classes=3, seed=2)
    run_method(model, x, y, idx, "gaussian", 0.25, "fixed", SETTINGS, tmp_path / "run", **kw)
    log = tmp_path / "run" / "certify.tsv"
    log.write_text("\n".join(log.read_text().splitlines()[:3]) + "\n")  # interrupted after 2 of 5 inputs
    read_only(tmp_path / "run")
    with pytest.raises(PermissionError, match="certify.tsv"):
        run_method(model, x, y, idx, "gaussian", 0.25, "fixed", SETTINGS, tmp_path / "run", **kw)


def test_certify_variant_reuses_a_complete_read_only_folder(tmp_path, toy, read_only):
    model, x, y, idx = toy
    npg = FixedNPG(np.ones((1, 3, 3), dtype=np.float32)).eval()
    args = (model, npg, Variant("isotropic", 0.25), x, y, idx, 10, 200, 0.01, 3, tmp_path / "ucan")
    first = certify_variant(*args, seed=1)
    before = (tmp_path / "ucan" / "certify.tsv").read_bytes()
    read_only(tmp_path / "ucan")
    again = certify_variant(*args, seed=1)
    pd.testing.assert_frame_equal(first, again)
    assert (tmp_path / "ucan" / "certify.tsv").read_bytes() == before


def test_write_if_changed(tmp_path):
    path = tmp_path / "a.tsv"
    assert files.write_if_changed(path, "x\n") is True
    assert files.write_if_changed(path, "x\n") is False
    assert files.write_if_changed(path, "y\n") is True and path.read_text() == "y\n"
    with pytest.raises(TypeError, match="text"):
        files.write_if_changed(path, b"z")


def test_logged_indices(tmp_path):
    path = tmp_path / "certify.tsv"
    assert logs.logged_indices(path) == set()
    with logs.ResultLog(path) as log:
        for i in (3, 7):
            log.append(dict(idx=i, label=0, predict=0, radius=0.5, radius_proxy=0.5, correct=1, min_sigma=0.25,
                            time=0.0))
    assert logs.logged_indices(path) == {3, 7}
