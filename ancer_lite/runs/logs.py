"""Per-sample certification logs: tab-separated with a header.

The columns are a superset of ANCER's (idx label predict radius radius_proxy correct min_sigma time),
so pandas reads them by name; Cohen et al.'s 6-column logs (idx label predict radius correct time) load
too. The file on disk is always complete: every write goes to a temporary file that replaces it
atomically, and a run that stops resumes from the indices already logged. Rows are validated when a
log is read or resumed (a torn or edited row is an error naming the file and line, never a "done"
input), and one process at a time may write a log (a lock file beside it). A `ResultLog` also keeps, beside
the log, a checksum of each row's values that no later check can recompute (`CHECKSUM_COLUMNS`: the label,
the predicted class, correct and p_lower; `checksum_path`), which `read_log` verifies; a log without one
(written by an older version, or by hand) is read as before.
"""
from __future__ import annotations

import hashlib
import io
import math
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pandas as pd

from ..core.files import lock_path, locked, write_atomic, write_if_changed
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


#: the columns of a log row whose values cannot be recomputed from the others and the run's θ, so their writer records
#: a checksum of each (`checksum_path`); radius, radius_proxy, gap, min_sigma and log_volume follow from p_lower and θ
#: (`experiment.check_certificate_rows`), and time is a measurement
CHECKSUM_COLUMNS = ("label", "predict", "correct", "p_lower")


def checksum_path(path: str | Path) -> Path:
    """The checksum file of the log at `path`: `<log>.sums` beside it, one line per row (its idx, then a short
    SHA-256 of each of the row's `CHECKSUM_COLUMNS` values), written before the log itself.

    Parameters
    ----------
    path : str or os.PathLike
        The log.

    Returns
    -------
    Path
    """
    path = Path(check_path(path, "path"))
    return path.with_name(path.name + ".sums")


def _digest(idx: str, column: str, value: str) -> str:
    return hashlib.sha256(f"{idx}\t{column}\t{value}".encode("utf-8")).hexdigest()[:12]


def _checksum_text(columns: list[str], rows: list[list[str]]) -> str:
    checked = [c for c in CHECKSUM_COLUMNS if c in columns]
    at = columns.index("idx")
    lines = ["\t".join(["idx", *checked])]
    for fields in rows:
        lines.append("\t".join([fields[at], *(_digest(fields[at], c, fields[columns.index(c)]) for c in checked)]))
    return "\n".join(lines) + "\n"


def write_checksums(path: str | Path, columns: list[str], rows: list[list[str]]) -> None:
    """Write the checksum file (`checksum_path`) of the log at `path` holding `rows` (each a list of field texts,
    one per column of `columns`), atomically and only when its text changes (a complete read-only folder is left as
    it is); written before the log, so a log never holds a row without one.

    Parameters
    ----------
    path : str or os.PathLike
        The log.
    columns : list of str
        The log's header.
    rows : list of list of str
        The log's rows, as written.
    """
    write_if_changed(checksum_path(path), _checksum_text(list(columns), rows))


def _read_checksums(path: Path) -> tuple[list[str], dict[str, list[str]]] | None:
    """The columns and per-idx digests of the log's checksum file; None when there is none."""
    sums = checksum_path(path)
    if not sums.exists():
        return None
    try:
        lines = sums.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{sums}: cannot read the checksums of {path.name} ({err}); delete the run folder to "
                         "certify again") from err
    header = lines[0].split("\t")
    if header[:1] != ["idx"] or not set(header[1:]) <= set(CHECKSUM_COLUMNS) or lines[-1] != "":
        raise ValueError(f"{sums}: not the checksum file of {path.name} (expected a header idx "
                         f"{' '.join(CHECKSUM_COLUMNS)} and complete lines); delete the run folder to certify again")
    digests = {}
    for line in lines[1:-1]:
        fields = line.split("\t")
        if len(fields) != len(header):
            raise ValueError(f"{sums}: a line of {len(fields)} fields, expected {len(header)}; delete the run folder "
                             "to certify again")
        digests[fields[0]] = fields[1:]
    return header[1:], digests


def _check_sums(path: Path, columns: list[str], rows: list[list[str]]) -> None:
    """Each row's `CHECKSUM_COLUMNS` values against the checksums their writer recorded (when it recorded any):
    ValueError naming the log, the row's line and idx and the column that differs."""
    held = _read_checksums(path)
    if held is None:
        return
    checked, digests = held
    at = columns.index("idx")
    for lineno, fields in enumerate(rows, start=2):
        idx = fields[at]
        where = f"{path}, line {lineno} (idx {idx})"
        if idx not in digests:
            raise ValueError(f"{where}: the row has no checksum in {checksum_path(path)}, so it is not a row its run "
                             "wrote (an edited idx?). Delete that line to recompute the input.")
        for column, digest in zip(checked, digests[idx]):
            if column in columns and _digest(idx, column, fields[columns.index(column)]) != digest:
                raise ValueError(f"{where}: {column}={fields[columns.index(column)]!r} is not the value its run "
                                 f"wrote (its checksum in {checksum_path(path)} differs): the log was edited or "
                                 "corrupted. Delete that line to recompute the input.")


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
    _check_sums(path, columns, rows)
    return columns, rows


def read_log(path: str | Path) -> pd.DataFrame:
    """Read a log by column name. Cohen-format logs gain radius_proxy = radius (isotropic) and an empty
    min_sigma; `correct` becomes bool. Every row is validated; errors name the file and line.

    Parameters
    ----------
    path : str or os.PathLike
        The log (TypeError otherwise).

    Returns
    -------
    pandas.DataFrame
        One row per logged input, in file order, with the file's columns (at least idx, label, predict, radius,
        correct, time; radius_proxy and min_sigma added for a Cohen-format log), correct as bool.
    """
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
    read-only folder is reused as it is.

    Parameters
    ----------
    path : str or os.PathLike
        The certification log, which need not exist.

    Returns
    -------
    set of int
        The logged idx values (validated by `read_log`); empty when there is no file.
    """
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
        # one writer at a time: a second (another process, or a second ResultLog in this one) fails at once instead
        # of silently losing rows when both rewrite the file; the kernel releases the lock if the process dies
        self._lock: ExitStack | None = ExitStack()
        try:
            self._lock.enter_context(locked(self.path, wait=False))
        except BlockingIOError:
            self._lock = None
            raise RuntimeError(f"{self.path} is being written by another ResultLog (lock {lock_path(self.path)} is "
                               "held); wait for that run to finish, or stop it, before writing this log") from None
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
        consistent with predict == label, radius_proxy >= radius); ValueError naming the column otherwise.

    Parameters
    ----------
    row : dict
        Column name -> value, exactly the log's columns; its idx must not be logged yet (ValueError otherwise).
        Written with repr() for floats, 0/1 for bools and str() for the rest.
    """
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
        write_checksums(self.path, self.columns, self._rows)  # first: every row the log holds has its checksum
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
            self._lock.close()  # releases the flock
            self._lock = None

    def __enter__(self) -> "ResultLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
