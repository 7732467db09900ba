"""Per-sample certification logs: tab-separated with a header.

The columns are a superset of ANCER's (idx label predict radius radius_proxy correct min_sigma time),
so pandas reads them by name; Cohen et al.'s 6-column logs (idx label predict radius correct time) load
too. The file on disk is always complete: every write goes to a temporary file that replaces it
atomically, and a run that stops resumes from the indices already logged. Rows are validated when a
log is read or resumed (a torn or edited row is an error naming the file and line, never a "done"
input), and one process at a time may write a log (a lock file beside it).
"""
from __future__ import annotations

import fcntl
import io
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from ..core.files import write_atomic
from ..core.validation import check_count, check_path

ANCER_COLUMNS = ["idx", "label", "predict", "radius", "radius_proxy", "correct", "min_sigma", "time"]
COHEN_COLUMNS = ["idx", "label", "predict", "radius", "correct", "time"]


def _format(v: Any) -> str:
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        return "nan" if math.isnan(v) else repr(v)
    return str(v)


INT_COLUMNS = ("idx", "label", "predict")
FLOAT_COLUMNS = ("radius", "radius_proxy", "min_sigma", "time", "gap", "p_lower", "log_volume")


#: the smallest value each integer column may hold (predict: -1 = abstain)
INT_MINIMUM = {"idx": 0, "label": 0, "predict": -1}
#: the range [lo, hi] of each number column, never NaN or +inf: radii, gaps, scales and times are finite and
#: >= 0, p_lower a probability, log_volume any number below +inf (an abstention's is -inf)
_NONNEGATIVE = (0.0, math.inf, "finite and >= 0")
FLOAT_RANGE = {"radius": _NONNEGATIVE, "radius_proxy": _NONNEGATIVE, "min_sigma": _NONNEGATIVE, "time": _NONNEGATIVE,
               "gap": _NONNEGATIVE, "p_lower": (0.0, 1.0, "a probability"),
               "log_volume": (-math.inf, math.inf, "below +inf")}


def _problem(column: str, value: str) -> str | None:
    """Why one field of a log row is invalid, or None. Empty fields are never valid; numbers must lie in
    their column's range (a NaN, negative or infinite radius is refused)."""
    if value == "":
        return f"empty field {column!r}"
    if column in INT_COLUMNS:
        try:
            v = int(value)
        except ValueError:
            return f"{column}={value!r} is not an integer"
        if v < INT_MINIMUM[column]:
            return f"{column}={value!r} is below {INT_MINIMUM[column]} (it must be >= {INT_MINIMUM[column]})"
    elif column == "correct":
        if value not in ("0", "1"):
            return f"correct={value!r} is not 0 or 1"
    elif column in FLOAT_COLUMNS:
        try:
            v = float(value)
        except ValueError:
            return f"{column}={value!r} is not a number"
        lo, hi, what = FLOAT_RANGE[column]
        if not lo <= v <= hi or v == math.inf:  # NaN fails the comparison
            return f"{column}={value!r} is outside its range (it must be {what})"
    return None


#: the relative rounding slack of radius_proxy >= radius (a geometric mean of equal scales, exp(mean(log)), can
#: fall a few ulps below their minimum)
PROXY_RTOL = 1e-9


def _row_problem(columns: list[str], fields: list[str]) -> str | None:
    """Why a row's fields contradict each other, or None: `correct` means predict == label, so an abstention
    (predict = -1) is never correct; the proxy radius (a geometric mean of the scales times the gap) is never
    below the l_p radius (their minimum times the gap), up to rounding (`PROXY_RTOL`)."""
    if "radius_proxy" in columns and "radius" in columns:
        radius, proxy = fields[columns.index("radius")], fields[columns.index("radius_proxy")]
        if float(proxy) < float(radius) * (1.0 - PROXY_RTOL):
            return f"radius_proxy={proxy} is below radius={radius} (the proxy radius must be >= the l_p radius)"
    if not {"label", "predict", "correct"} <= set(columns):
        return None
    label, predict, correct = (fields[columns.index(c)] for c in ("label", "predict", "correct"))
    if correct == "1" and predict != label:
        return f"correct=1 but predict={predict} differs from label={label}"
    if correct == "0" and predict == label:
        return f"correct=0 but predict={predict} equals label={label}"
    return None


def _parse_rows(path: Path, text: str, float_columns: bool = True) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a log file's text, every row checked: exactly one field per column, no
    empty field, integers and 0/1 where expected, no duplicate idx, and a final newline (a file cut
    mid-row by a crash has none). Errors name the file and line."""
    lines = text.split("\n")
    if not text.endswith("\n"):
        raise ValueError(f"{path}, line {len(lines)}: the last row is incomplete (no final newline; the run "
                         "was cut off while writing?). Delete that line to recompute the input.")
    lines = lines[:-1]
    if not lines or not lines[0]:
        raise ValueError(f"{path}: empty file, expected a tab-separated header")
    columns = lines[0].split("\t")
    if "idx" not in columns:
        raise ValueError(f"{path}: not a certification log, the header has no 'idx' column: {columns}")
    seen: dict[int, int] = {}
    rows = []
    for lineno, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        where = f"{path}, line {lineno}"
        if len(fields) != len(columns):
            raise ValueError(f"{where}: {len(fields)} fields, expected {len(columns)} ({', '.join(columns)}); "
                             "the row is torn or edited. Delete that line to recompute the input.")
        for col, value in zip(columns, fields):
            if not float_columns and col in FLOAT_COLUMNS and value != "":
                continue
            why = _problem(col, value)
            if why:
                raise ValueError(f"{where}: {why}. Delete that line to recompute the input.")
        why = _row_problem(columns, fields)
        if why:
            raise ValueError(f"{where}: {why}. Delete that line to recompute the input.")
        idx = int(fields[columns.index("idx")])
        if idx in seen:
            raise ValueError(f"{where}: duplicate idx {idx} (first on line {seen[idx]})")
        seen[idx] = lineno
        rows.append(fields)
    return columns, rows


def read_log(path: str | Path) -> pd.DataFrame:
    """Read a log by column name. Cohen-format logs gain radius_proxy = radius (isotropic) and an empty
    min_sigma; `correct` becomes bool. Every row is validated; errors name the file and line. path: a str or
    os.PathLike (TypeError otherwise)."""
    path = Path(check_path(path, "path"))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: cannot read the certification log ({err})") from err
    header = text.split("\n", 1)[0].split("\t")
    missing = [c for c in COHEN_COLUMNS if c not in header]
    if missing:
        raise ValueError(f"{path}: not a certification log, missing columns {missing}")
    # Cohen et al.'s time column is "h:mm:ss.s", so numbers are only checked in our own logs
    _parse_rows(path, text, float_columns="radius_proxy" in header)
    df = pd.read_csv(io.StringIO(text), sep="\t")  # the text already read and validated, not the file again
    if "radius_proxy" not in df.columns:
        df["radius_proxy"] = df["radius"]
    if "min_sigma" not in df.columns:
        df["min_sigma"] = float("nan")
    df["correct"] = df["correct"].astype(bool)  # validated: 0 or 1
    return df


def logged_indices(path: str | Path) -> set[int]:
    """The `idx` values already in the certification log at `path` (none if there is no log yet), read without
    the writer's lock: a caller opens a `ResultLog` only when inputs are left to certify, so a complete log in a
    read-only folder is reused as it is."""
    path = Path(check_path(path, "path"))
    if not path.exists():
        return set()
    return {int(i) for i in read_log(path)["idx"]}


class ResultLog:
    """A resumable per-sample log. Rows are buffered and the whole file is rewritten atomically every
    `flush_every` rows and on close, so an interrupted run loses at most that many rows and never
    leaves a torn file. `done` holds the indices already logged (resume by skipping them). path: a str or
    os.PathLike (TypeError otherwise)."""

    def __init__(self, path: str | Path, columns: list[str] | None = None, flush_every: int = 20) -> None:
        self.path = Path(check_path(path, "path"))
        self.flush_every = check_count(flush_every, "flush_every")
        self._lock = _acquire_lock(self.path)
        try:
            if self.path.exists():
                existing_columns, self._rows = _parse_rows(self.path, self.path.read_text(encoding="utf-8"))
                self.columns = existing_columns
                if columns is not None and list(columns) != self.columns:
                    raise ValueError(f"columns {columns} differ from the existing log's {self.columns} at {self.path}")
            else:
                if columns is None:
                    columns = ANCER_COLUMNS
                missing = [c for c in ANCER_COLUMNS if c not in columns]
                if missing:
                    raise ValueError(f"columns must include ANCER's columns; missing {missing}")
                self.columns = list(columns)
                self._rows = []
        except BaseException:
            self._release()
            raise
        idx = self.columns.index("idx")
        self.done = {int(r[idx]) for r in self._rows}
        self._pending = 0

    def append(self, row: dict[str, Any]) -> None:
        """Add one sample's row (a dict with exactly the log's columns). Values must lie in their column's range
        (radius, radius_proxy, min_sigma, time finite and >= 0, label >= 0, predict >= -1, correct 0 or 1 and
        consistent with predict == label, radius_proxy >= radius); ValueError naming the column otherwise."""
        if set(row) != set(self.columns):
            raise ValueError(f"row must have exactly the columns {self.columns}, got {sorted(row)}")
        if int(row["idx"]) in self.done:
            raise ValueError(f"idx {row['idx']} is already in {self.path}")
        fields = [_format(row[c]) for c in self.columns]
        for col, value in zip(self.columns, fields):
            why = _problem(col, value)
            if why is None and ("\t" in value or "\n" in value):
                why = f"{col}={value!r} holds a tab or newline"
            if why:
                raise ValueError(f"row for idx {row['idx']}: {why}")
        why = _row_problem(self.columns, fields)
        if why:
            raise ValueError(f"row for idx {row['idx']}: {why}")
        self._rows.append(fields)
        self.done.add(int(row["idx"]))
        self._pending += 1
        if self._pending >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        if self._lock is None:
            raise ValueError(f"{self.path}: the log is closed")
        lines = ["\t".join(self.columns)] + ["\t".join(r) for r in self._rows]
        write_atomic(self.path, "\n".join(lines) + "\n")
        self._pending = 0

    def close(self) -> None:
        """Write what is buffered and release the log for other writers."""
        if self._lock is None:
            return
        try:
            self.flush()
        finally:
            self._release()

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor releases the flock
            self._lock = None

    def __enter__(self) -> "ResultLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _acquire_lock(path: Path) -> int:
    """An exclusive, non-blocking flock on `.<name>.lock` beside the log: a second writer (another
    process, or a second ResultLog in this one) fails at once instead of silently losing rows when both
    rewrite the file. The kernel releases the lock if the process dies."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.parent / f".{path.name}.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise RuntimeError(f"{path} is being written by another ResultLog (lock {lock_path} is held); wait "
                           "for that run to finish, or stop it, before writing this log") from None
    return fd
