"""Per-sample certification logs: tab-separated with a header.

The columns are a superset of ANCER's (idx label predict radius radius_proxy correct min_sigma time),
so pandas reads them by name; Cohen et al.'s 6-column logs (idx label predict radius correct time) load
too. The file on disk is always complete: every write goes to a temporary file that replaces it
atomically, and a run that stops resumes from the indices already logged.
"""
from __future__ import annotations

import math
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator

import pandas as pd

ANCER_COLUMNS = ["idx", "label", "predict", "radius", "radius_proxy", "correct", "min_sigma", "time"]
COHEN_COLUMNS = ["idx", "label", "predict", "radius", "correct", "time"]


@contextmanager
def atomic_file(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file beside `path` and, if the block succeeds, fsync it and os.replace it onto
    `path`; on any error the temporary file is removed and `path` is left as it was."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_atomic(path: str | Path, text: str) -> None:
    """Write text to path atomically (see `atomic_file`)."""
    with atomic_file(path) as fh:
        fh.write(text)


def _format(v: Any) -> str:
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        return "nan" if math.isnan(v) else repr(v)
    return str(v)


def read_log(path: str | Path) -> pd.DataFrame:
    """Read a log by column name. Cohen-format logs gain radius_proxy = radius (isotropic) and an empty
    min_sigma; `correct` becomes bool."""
    df = pd.read_csv(path, sep="\t")
    missing = [c for c in COHEN_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: not a certification log, missing columns {missing}")
    if "radius_proxy" not in df.columns:
        df["radius_proxy"] = df["radius"]
    if "min_sigma" not in df.columns:
        df["min_sigma"] = float("nan")
    df["correct"] = df["correct"].astype(int).astype(bool)
    return df


class ResultLog:
    """A resumable per-sample log. Rows are buffered and the whole file is rewritten atomically every
    `flush_every` rows and on close, so an interrupted run loses at most that many rows and never
    leaves a torn file. `done` holds the indices already logged (resume by skipping them)."""

    def __init__(self, path: str | Path, columns: list[str] | None = None, flush_every: int = 20) -> None:
        self.path = Path(path)
        self.flush_every = int(flush_every)
        if self.path.exists():
            existing = pd.read_csv(self.path, sep="\t", dtype=str, keep_default_na=False)
            self.columns = list(existing.columns)
            if columns is not None and list(columns) != self.columns:
                raise ValueError(f"columns {columns} differ from the existing log's {self.columns} at {self.path}")
            self._rows = existing.values.tolist()
        else:
            if columns is None:
                columns = ANCER_COLUMNS
            missing = [c for c in ANCER_COLUMNS if c not in columns]
            if missing:
                raise ValueError(f"columns must include ANCER's columns; missing {missing}")
            self.columns = list(columns)
            self._rows = []
        idx = self.columns.index("idx")
        self.done = {int(r[idx]) for r in self._rows}
        self._pending = 0

    def append(self, row: dict[str, Any]) -> None:
        """Add one sample's row (a dict with exactly the log's columns)."""
        if set(row) != set(self.columns):
            raise ValueError(f"row must have exactly the columns {self.columns}, got {sorted(row)}")
        if int(row["idx"]) in self.done:
            raise ValueError(f"idx {row['idx']} is already in {self.path}")
        self._rows.append([_format(row[c]) for c in self.columns])
        self.done.add(int(row["idx"]))
        self._pending += 1
        if self._pending >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        lines = ["\t".join(self.columns)] + ["\t".join(r) for r in self._rows]
        write_atomic(self.path, "\n".join(lines) + "\n")
        self._pending = 0

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> "ResultLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
