"""Numbers reported in the papers, transcribed as tidy CSV tables.

The CSV files live in ``data/paper/`` at the repository root (see ``data/paper/README.md``
for the provenance of every file and the meaning of every column). Each file holds one
table of one paper in long format: one row per printed number.

Example::

    >>> from ancer_lite.runs.paper import paper_value
    >>> paper_value("ancer_table1", dataset="CIFAR-10", model="COHEN", method="ANCER",
    ...             metric="certified_accuracy", radius=0.5)
    77.0
"""

from __future__ import annotations

import math
from numbers import Real
from pathlib import Path
from typing import Any

import pandas as pd

from ..core.files import REPO_ROOT

__all__ = ["PAPER_DIR", "COMMON_COLUMNS", "list_tables", "load_table", "paper_value"]

#: Folder holding the transcribed tables (``<repo>/data/paper``).
PAPER_DIR: Path = REPO_ROOT / "data" / "paper"

#: Columns every table has, in this order (extra columns follow them).
COMMON_COLUMNS: tuple[str, ...] = (
    "paper",
    "table",
    "dataset",
    "model",
    "method",
    "sigma",
    "metric",
    "radius",
    "value",
    "unit",
)

# Columns read as numbers; every other column is read as text (empty cells become NaN).
_NUMERIC_COLUMNS: dict[str, str] = {"sigma": "float64", "radius": "float64", "value": "float64"}


def list_tables() -> list[str]:
    """Return the names of the available tables (CSV file stems), sorted.

    Returns:
        Names such as ``"ancer_table1"`` or ``"rancer_ari_text"``, usable with
        :func:`load_table` and :func:`paper_value`.
    """
    return sorted(p.stem for p in PAPER_DIR.glob("*.csv"))


def _normalise_name(name: str) -> str:
    """Strip an optional ``.csv`` suffix from a table name."""
    return name[: -len(".csv")] if name.endswith(".csv") else name


def load_table(name: str) -> pd.DataFrame:
    """Load one transcribed table.

    Parameters
    ----------
    name : str
        A table name from :func:`list_tables` (a trailing ``.csv`` is accepted).

    Returns
    -------
    pandas.DataFrame
        The table in long format, one row per printed number: the columns of `COMMON_COLUMNS` (paper, table,
        dataset, model, method, sigma, metric, radius, value, unit) followed by the file's extra columns.
        ``sigma``, ``radius`` and ``value`` are floats (NaN where the cell is empty, i.e. not applicable);
        ``table`` is a nullable integer (``<NA>`` where empty); all other columns are strings (NaN where empty).

    Raises
    ------
    ValueError
        If ``name`` is not one of the available tables.
    """
    stem = _normalise_name(name)
    available = list_tables()
    if stem not in available:
        raise ValueError(
            f"load_table: unknown table name={name!r}; available names: {', '.join(available)}"
        )
    path = PAPER_DIR / f"{stem}.csv"
    header = pd.read_csv(path, nrows=0).columns
    dtypes: dict[str, Any] = {c: _NUMERIC_COLUMNS.get(c, str) for c in header}
    if "table" in header:
        dtypes["table"] = "Int64"
    return pd.read_csv(path, dtype=dtypes, keep_default_na=False, na_values=[""])


def _matches(series: pd.Series, wanted: Any) -> pd.Series:
    """Boolean mask of the entries of ``series`` equal to ``wanted``.

    ``None`` (or NaN) matches empty cells; numbers are compared with a small tolerance,
    so ``radius=0.5`` matches a cell printed as ``0.50``; strings match exactly.
    """
    if wanted is None or (isinstance(wanted, float) and math.isnan(wanted)):
        return series.isna()
    if isinstance(wanted, Real) and not isinstance(wanted, bool):
        numeric = pd.to_numeric(series, errors="coerce").astype("float64")
        return (numeric - float(wanted)).abs().le(1e-9).fillna(False).astype(bool)
    return series.astype(object).eq(wanted).fillna(False).astype(bool)


def paper_value(table: str, **filters: Any) -> float:
    """Return the single value of ``table`` selected by column filters.

    Parameters
    ----------
    table : str
        A table name from :func:`list_tables`.
    **filters : object
        ``column=value`` pairs; a row is kept when every column equals the given
        value (``None`` selects empty cells, numbers are compared with tolerance).

    Returns
    -------
    float
        The ``value`` of the only matching row.

    Raises
    ------
    ValueError
        If the table or a filter column is unknown, or if zero or more than one
        rows match (the message says how many matched).
    """
    df = load_table(table)
    unknown = [c for c in filters if c not in df.columns]
    if unknown:
        raise ValueError(
            f"paper_value: unknown column(s) {unknown} for table {table!r}; "
            f"columns: {', '.join(df.columns)}"
        )
    mask = pd.Series(True, index=df.index)
    for col, wanted in filters.items():
        mask &= _matches(df[col], wanted)
    hits = df[mask]
    if len(hits) != 1:
        raise ValueError(
            f"paper_value: expected exactly one row of {table!r} matching {filters}, "
            f"found {len(hits)}"
        )
    return float(hits["value"].iloc[0])
