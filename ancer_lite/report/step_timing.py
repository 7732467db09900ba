"""How long a cached step took when it was computed, so that a notebook that reuses it can say so
("reused from the cache (computed in 6 min 11 s)") instead of printing the "0 s" it took to read.

A *step* is a call that reads its results from cache entries (files under some folders) when they
exist and computes and writes them otherwise (e.g. `ucan_study.Study.select`). `run_step` snapshots
the entries' folders before and after the call: if the call wrote a new file or changed one's
content, the step was
computed, and its wall time is stored in a small JSON sidecar (written atomically) together with the
entries it wrote; if it changed nothing, the step was reused, and the sidecar is read back, provided
the entries it lists are still there (otherwise the time of computation is "not recorded").

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
    """The timing of one step: `seconds` it took now, whether it was `reused` from the cache, and (when
    reused) the `computed_seconds` it took when it was computed (None when not recorded)."""
    what: str
    seconds: float
    reused: bool
    computed_seconds: float | None = None

    def line(self) -> str:
        """One line for the notebook (`display.timing`)."""
        return timing(self.what, self.seconds, self.reused, self.computed_seconds)


#: files up to this size are compared by content, larger ones by modification time
HASH_LIMIT = 4 * 2**20


def _fingerprint(path: Path, size: int, mtime_ns: int) -> tuple[int, int | str]:
    if size > HASH_LIMIT:
        return size, mtime_ns
    return size, hashlib.sha1(path.read_bytes()).hexdigest()


def snapshot(folders: Iterable[str | Path], exclude: str | Path | None = None) -> dict[str, tuple[int, int | str]]:
    """Every file under `folders` (recursively; a missing folder has none) as absolute path → (size,
    content digest), leaving out files under `exclude`. Files over `HASH_LIMIT` bytes get their
    modification time instead of a digest. (By content, because a resumable log that resumes with
    nothing to do rewrites its unchanged file, e.g. `logs.ResultLog.close`.)"""
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
    """The files of `after` that are new or differ (size or content) from `before`, sorted;
    hidden temporary files (a leading '.') are left out."""
    return sorted(p for p, stat in after.items() if before.get(p) != stat and not Path(p).name.startswith("."))


def read_sidecar(sidecar: str | Path) -> float | None:
    """The recorded seconds of the computation a sidecar describes, or None when the sidecar is missing,
    unreadable, or lists an entry that no longer exists (the cache was cleared or recomputed since)."""
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
    """Record (atomically) that the step computing `entries` took `seconds`; entries are stored
    relative to the sidecar's folder, so the record stays valid when the data folder moves."""
    if not seconds >= 0:
        raise ValueError(f"seconds must be a number >= 0, got {seconds!r}")
    sidecar = Path(sidecar)
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    base = sidecar.parent.resolve()
    rel = [os.path.relpath(Path(e).resolve(), base) for e in entries]
    write_atomic(sidecar, json.dumps(dict(seconds=round(float(seconds), 3), entries=rel), indent=1) + "\n")


def run_step(what: str, compute: Callable[[], T], entries: Iterable[str | Path],
             sidecar: str | Path) -> tuple[T, StepTiming]:
    """Call `compute()` and say whether it computed or reused its cache entries (files under the
    folders `entries`): computed when it wrote or changed a file there, whose names and the wall time
    then go to `sidecar`; reused otherwise, with the time read back from `sidecar` (`read_sidecar`).
    Returns compute's result and its `StepTiming`."""
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
