"""How long a cached step took when it was computed, so that a notebook that reuses it can say so
("reused from the cache (computed in 6 min 11 s)") instead of printing the "0 s" it took to read.

A *step* is a call that reads its results from cache entries (files under some folders) when they
exist and computes and writes them otherwise (e.g. `ucan_study.Study.select`). `run_step` snapshots
the entries' folders before and after the call: if the call wrote a new file or changed one's
content, the step was computed, and its wall time is stored in a small JSON sidecar (written
atomically) together with the entries it wrote; if it changed nothing, the step was reused, and the
sidecar is read back, provided the entries it lists are still there (otherwise the time of
computation is "not recorded").

    result, t = run_step("digits: κ and γ on the validation split", study.select,
                         entries=[cache / "ucan", results / "ucan" / "digits"],
                         sidecar=results / "ucan" / "digits" / "timings" / "select.json")
    print(t.line())
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, TypeVar

from ..core.files import write_atomic
from .display import timing

T = TypeVar("T")


@dataclass(frozen=True)
class StepTiming:
    """The timing of one step.

    Parameters
    ----------
    what : str
        What the step computes.
    seconds : float
        How long it took now.
    reused : bool
        Whether it was reused from the cache.
    computed_seconds : float or None
        When reused: how long it took when it was computed; None when not recorded.
    """
    what: str
    seconds: float
    reused: bool
    computed_seconds: float | None = None

    def line(self) -> str:
        """One line for the notebook (`display.timing`).

        Returns
        -------
        str
            E.g. "digits: 12.3 s" or "digits: reused from the cache (computed in 6 min 11 s; read in 0.42 s)".
        """
        return timing(self.what, self.seconds, self.reused, self.computed_seconds)


#: files up to this size are compared by content, larger ones by modification time
HASH_LIMIT = 4 * 2**20


def _fingerprint(path: Path, size: int, mtime_ns: int) -> tuple[int, int | str]:
    """(size, content digest) of a file, or (size, modification time) above `HASH_LIMIT` bytes."""
    if size > HASH_LIMIT:
        return size, mtime_ns
    return size, hashlib.sha1(path.read_bytes()).hexdigest()


def snapshot(folders: Iterable[str | Path], exclude: str | Path | None = None) -> dict[str, tuple[int, int | str]]:
    """Every file under `folders` (recursively) with its size and content digest.

    Files are compared by content, because a resumable log that resumes with nothing to do rewrites its unchanged
    file (e.g. `logs.ResultLog.close`). Files over `HASH_LIMIT` bytes get their modification time instead of a digest.

    Parameters
    ----------
    folders : iterable of str or pathlib.Path
        The folders; a missing folder has no files.
    exclude : str or pathlib.Path or None
        A folder whose files are left out (e.g. the sidecar's).

    Returns
    -------
    dict
        Absolute path (str) -> (size, content digest or modification time in ns).
    """
    skip = Path(exclude).resolve() if exclude is not None else None
    out: dict[str, tuple[int, int]] = {}
    for folder in folders:
        folder = Path(folder)
        if not folder.is_dir():
            continue
        for root, dirs, files in os.walk(folder):
            if skip is not None and (Path(root).resolve() == skip or skip in Path(root).resolve().parents):
                dirs[:] = []
                continue
            for name in files:
                p = Path(root) / name
                try:
                    st = p.stat()
                    out[str(p.resolve())] = _fingerprint(p, st.st_size, st.st_mtime_ns)
                except FileNotFoundError:  # a temporary file replaced meanwhile
                    continue
    return out


def changed(before: dict[str, tuple[int, int | str]], after: dict[str, tuple[int, int | str]]) -> list[str]:
    """The files of `after` that are new or differ (size or content) from `before`.

    Hidden temporary files (a leading '.') are left out.

    Parameters
    ----------
    before, after : dict
        Two `snapshot`s.

    Returns
    -------
    list of str
        The paths, sorted.
    """
    return sorted(p for p, stat in after.items() if before.get(p) != stat and not Path(p).name.startswith("."))


def read_sidecar(sidecar: str | Path) -> float | None:
    """The recorded seconds of the computation a sidecar describes.

    Parameters
    ----------
    sidecar : str or pathlib.Path
        The JSON sidecar written by `write_sidecar`.

    Returns
    -------
    float or None
        The seconds; None when the sidecar is missing, unreadable, or lists an entry that does not exist (the cache
        was cleared or recomputed since the sidecar was written).
    """
    sidecar = Path(sidecar)
    try:
        record = json.loads(sidecar.read_text())
        seconds = float(record["seconds"])
        entries = [sidecar.parent / e for e in record["entries"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not all(e.exists() for e in entries) or not seconds >= 0:
        return None
    return seconds


def write_sidecar(sidecar: str | Path, seconds: float, entries: Iterable[str | Path]) -> None:
    """Record (atomically) that the step computing `entries` took `seconds`.

    Entries are stored relative to the sidecar's folder, so the record stays valid when the data folder moves.

    Parameters
    ----------
    sidecar : str or pathlib.Path
        The JSON file to write (its folder is created).
    seconds : float
        The computation's wall time, a number >= 0.
    entries : iterable of str or pathlib.Path
        The files the step wrote.
    """
    if not seconds >= 0:
        raise ValueError(f"seconds must be a number >= 0, got {seconds!r}")
    sidecar = Path(sidecar)
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    base = sidecar.parent.resolve()
    rel = [os.path.relpath(Path(e).resolve(), base) for e in entries]
    write_atomic(sidecar, json.dumps(dict(seconds=round(float(seconds), 3), entries=rel), indent=1) + "\n")


def run_step(what: str, compute: Callable[[], T], entries: Iterable[str | Path],
             sidecar: str | Path) -> tuple[T, StepTiming]:
    """Call `compute()` and say whether it computed or reused its cache entries.

    The step is computed when it wrote or changed a file under the folders `entries`; the names of those files and
    the wall time then go to `sidecar`. Otherwise it is reused, with the time of its computation read back from
    `sidecar` (`read_sidecar`).

    Parameters
    ----------
    what : str
        What the step computes, for the timing line.
    compute : callable
        () -> the step's result.
    entries : iterable of str or pathlib.Path
        At least one folder holding the step's cache entries.
    sidecar : str or pathlib.Path
        The JSON file recording the computation's time (its folder is left out of the snapshots).

    Returns
    -------
    result : object
        compute's result.
    timing : StepTiming
        The step's timing.
    """
    folders = [Path(e) for e in entries]
    if not folders:
        raise ValueError("entries must name at least one folder holding the step's cache entries")
    sidecar = Path(sidecar)
    before = snapshot(folders, exclude=sidecar.parent)
    t0 = time.perf_counter()
    result = compute()
    seconds = time.perf_counter() - t0
    written = changed(before, snapshot(folders, exclude=sidecar.parent))
    if written:
        write_sidecar(sidecar, seconds, written)
        return result, StepTiming(what, seconds, reused=False)
    return result, StepTiming(what, seconds, reused=True, computed_seconds=read_sidecar(sidecar))
