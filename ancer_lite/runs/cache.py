"""The one cache helper: a result kept in one file, named by everything that determines it (`code_keys.cache_key`),
is read back when the file exists and otherwise computed and written atomically (`core.files.atomic_file`: a
reader never sees half a file, and a failed computation or write leaves no file), so a stopped run recomputes it
and a complete cache is reused without a write (read-only folders).

Used by the selection tables of notebooks 03 and 06 (`image_study.choose_norm`, `rancer_study.choose_rancer`),
notebook 05's Average Σ certificates (`superset_study.average_sigma_results`) and notebook 07's UCAN models
(`ucan_study.train_variant`). Run folders of several files, whose inputs are verified on reuse, go through
`runs.manifest` instead; `models.train.train_cached` (a lower layer) keeps its own copy.
"""
from __future__ import annotations

from pathlib import Path
from typing import IO, Callable, TypeVar

import pandas as pd

from ..core.files import atomic_file
from ..core.validation import check_choice, check_path

T = TypeVar("T")


def cached(path: str | Path, compute: Callable[[], T], read: Callable[[Path], T],
           write: Callable[[T, IO], None], mode: str = "w") -> T:
    """`read(path)` when `path` exists; otherwise `value = compute()`, `write(value, fh)` into a temporary file
    beside `path` opened with `mode` ("w": text, UTF-8; "wb": bytes) and renamed onto it once written, and
    `value` (the computed value itself, not a read-back). Nothing is written when `compute` or `write` raises.

    Parameters
    ----------
    path : str or os.PathLike
        The cache file.
    compute : callable
        `compute()` -> value, called only when `path` does not exist (TypeError naming the argument when not
        callable).
    read : callable
        `read(path)` -> value, with `path` a pathlib.Path, called only when `path` exists (TypeError when not
        callable).
    write : callable
        `write(value, fh)`, writing `value` to the open file `fh` (TypeError when not callable).
    mode : {"w", "wb"}, optional
        How the temporary file is opened: "w" text, UTF-8 (the default); "wb" bytes.

    Returns
    -------
    T
        `read(path)` when `path` exists; otherwise the computed value (not a read-back).
    """
    path = Path(check_path(path, "path"))
    for name, fn in (("compute", compute), ("read", read), ("write", write)):
        if not callable(fn):
            raise TypeError(f"{name} must be a callable, got {type(fn).__name__} {fn!r}")
    check_choice(mode, "mode", ("w", "wb"))
    if path.exists():
        return read(path)
    value = compute()
    with atomic_file(path, mode) as fh:
        write(value, fh)
    return value


def read_table(path: str | Path) -> pd.DataFrame:
    """A table written by `write_table` (tab-separated, with a header, without the index); ValueError naming the
    file when it is empty, not text or not a table.

    Parameters
    ----------
    path : str or os.PathLike
        The table's file.

    Returns
    -------
    pandas.DataFrame
        The table, with the columns of its header row (one row per data line).
    """
    path = check_path(path, "path")
    try:
        return pd.read_csv(path, sep="\t")
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not a readable tab-separated table ({type(e).__name__}: "
                         f"{' '.join(str(e).split())[:200]}); delete it to compute it again") from None


def write_table(table: pd.DataFrame, fh: IO) -> None:
    """Write `table` (a DataFrame; TypeError otherwise) to the open text file `fh` as `read_table` reads it back:
    tab-separated, with a header, without the index.

    Parameters
    ----------
    table : pandas.DataFrame
        The table to write, any columns (TypeError when not a DataFrame).
    fh : file object
        An open text file, written from its current position.
    """
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    fh.write(table.to_csv(sep="\t", index=False))
