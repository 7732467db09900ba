"""Evaluation metrics (ANCER §7): certified accuracy at a radius and as curves, ACR and the proxy ACR~.

Inputs are per-sample arrays: `radius` (0 when abstaining) and `correct` (prediction == label, False
when abstaining). Certified accuracy at R is the fraction with correct and radius >= R; at R = 0 it is
the smoothed classifier's clean accuracy. ACR = E[R_x 1(g(x) = y)]; ACR~ uses the proxy radius.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from ..core.validation import check_count, check_nonnegative


def check_correct(correct: Iterable[bool], name: str = "correct") -> np.ndarray:
    """The per-sample correctness as a bool array, accepting only bool or 0/1 values.

    A silent cast would turn the string "False" and NaN into True, so any other value is refused.

    Parameters
    ----------
    correct : array_like of bool or 0/1, any shape
        Prediction == label per sample (False when abstaining).
    name : str
        The argument's name, used in the error message.

    Returns
    -------
    numpy.ndarray of bool
        `correct`, the same shape.
    """
    c = np.asarray(correct)
    if c.dtype == bool:
        return c
    if c.dtype.kind in "iuf" or (c.dtype == object and all(
            isinstance(v, (bool, np.bool_, int, np.integer, float, np.floating)) for v in c.ravel())):
        values = c.astype(np.float64)
        if np.isin(values, (0.0, 1.0)).all():
            return values.astype(bool)
    bad = next((v for v in c.ravel() if not (isinstance(v, (bool, np.bool_)) or v in (0, 1))), None)
    raise ValueError(f"{name} must hold bool or 0/1 values only, got {bad!r} (dtype {c.dtype})")


def _float_array(values: Iterable[float] | float, name: str) -> np.ndarray:
    """`values` as a float64 array; a string or non-numeric entries raise a ValueError naming `name`."""
    if isinstance(values, (str, bytes)):  # np.asarray("0.5", float) parses it; list("0.5") spells it out
        raise ValueError(f"{name} must be numbers (radii), got the string {values!r}")
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers (radii), got {values!r}") from None


def _radius_grid(at: Iterable[float] | float, name: str = "at") -> np.ndarray:
    """Radii at which to read certified accuracy: finite and >= 0 (float64, shape as given)."""
    grid = _float_array(at, name)
    if not np.isfinite(grid).all() or (grid < 0).any():
        raise ValueError(f"{name} must be finite radii >= 0, got {at!r}")
    return grid


def _iterable(values: Iterable[float], name: str) -> Iterable[float]:
    """A sequence of radii: a string (spelt out letter by letter by list()) or a scalar is refused."""
    if isinstance(values, (str, bytes)):
        _float_array(values, name)  # raises, naming `name`
    try:
        iter(values)
    except TypeError:
        raise TypeError(f"{name} must be a list of radii, got {values!r}") from None
    return values


def _check_columns(df: pd.DataFrame, name: str, fixed: tuple[str, ...] = (), **columns: object) -> None:
    """df (argument `name`) must have the columns `fixed` and each column a keyword's value names."""
    for c in fixed:
        if c not in df.columns:
            raise ValueError(f"{name} must have a {c!r} column (columns: {list(df.columns)})")
    for arg, cols in columns.items():
        for c in (cols if isinstance(cols, list) else [cols]):
            if c not in df.columns:
                raise ValueError(f"{arg}={cols!r}: {c!r} is not a column of {name} (columns: {list(df.columns)})")


def _check_group(group: list[str], name: str = "group") -> None:
    """group must be a list of column names (TypeError otherwise)."""
    if not isinstance(group, list) or not all(isinstance(c, str) for c in group):
        raise TypeError(f"{name} must be a list of column names, got {group!r}")


def _arrays(radius: Iterable[float], correct: Iterable[bool]) -> tuple[np.ndarray, np.ndarray]:
    """radius and correct as 1-D float64 and bool arrays of equal, non-zero length, radii finite and >= 0."""
    r = _float_array(radius, "radius")
    c = check_correct(correct)
    if r.shape != c.shape or r.ndim != 1:
        raise ValueError(f"radius and correct must be 1-D arrays of equal length, got {r.shape} and {c.shape}")
    if r.size == 0:
        raise ValueError("radius must not be empty")
    if not np.isfinite(r).all() or (r < 0).any():
        raise ValueError("radius must be finite and >= 0")
    return r, c


def certified_accuracy(radius: Iterable[float], correct: Iterable[bool],
                       at: Iterable[float] | float) -> np.ndarray | float:
    """Certified accuracy at each radius of `at`: the fraction of samples that are correct with radius >= it (ANCER §7).

    At radius 0 it is the smoothed classifier's clean accuracy.

    Parameters
    ----------
    radius : array_like of float, shape (n,)
        Certified radius per sample (0 when abstaining), finite and >= 0; n >= 1.
    correct : array_like of bool or 0/1, shape (n,)
        Prediction == label per sample (False when abstaining).
    at : float or array_like of float
        A radius or radii, finite and >= 0.

    Returns
    -------
    float or numpy.ndarray of float64
        A float for a scalar `at`, else one fraction per radius (`at` flattened, shape (len(at),)).
    """
    r, c = _arrays(radius, correct)
    grid = _radius_grid(at)
    out = ((r[None, :] >= grid.reshape(-1, 1)) & c[None, :]).mean(axis=1)
    return float(out[0]) if grid.ndim == 0 else out


def certified_accuracy_curve(radius: Iterable[float], correct: Iterable[bool],
                             max_radius: float | None = None, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Certified accuracy on an even grid of radii from 0 to `max_radius`.

    Parameters
    ----------
    radius : array_like of float, shape (n,)
        Certified radius per sample (0 when abstaining), finite and >= 0; n >= 1.
    correct : array_like of bool or 0/1, shape (n,)
        Prediction == label per sample (False when abstaining).
    max_radius : float or None
        The grid's end, finite and >= 0; None: the largest radius.
    points : int
        The number of grid points, an integer >= 2 (at least the curve's two ends).

    Returns
    -------
    grid : numpy.ndarray of float64, shape (points,)
        The radii.
    accuracy : numpy.ndarray of float64, shape (points,)
        The certified accuracy at each radius of the grid.
    """
    r, c = _arrays(radius, correct)
    points = check_count(points, "points", 2)  # at least the two ends of the curve
    top = float(r.max()) if max_radius is None else check_nonnegative(max_radius, "max_radius")
    grid = np.linspace(0.0, max(top, 1e-12), points)
    return grid, certified_accuracy(r, c, grid)


def average_certified_radius(radius: Iterable[float], correct: Iterable[bool]) -> float:
    """ACR = the mean of R_x 1(g(x) = y) (Zhai et al. 2019; ANCER §7); pass proxy radii for ACR~.

    Parameters
    ----------
    radius : array_like of float, shape (n,)
        Certified (or proxy) radius per sample (0 when abstaining), finite and >= 0; n >= 1.
    correct : array_like of bool or 0/1, shape (n,)
        Prediction == label per sample (False when abstaining).

    Returns
    -------
    float
        The average certified radius.
    """
    r, c = _arrays(radius, correct)
    return float((r * c).mean())


def summary_table(results: pd.DataFrame, radii: Iterable[float], group: list[str],
                  radius_col: str = "radius", proxy_col: str = "radius_proxy") -> pd.DataFrame:
    """One row per group: certified accuracy (%) at each radius, ACR and ACR~.

    These are the columns of ANCER Tables 1-2 for one σ.

    Parameters
    ----------
    results : pandas.DataFrame
        Per-sample rows with the columns `correct`, `radius_col`, `proxy_col` and those of `group`.
    radii : iterable of float
        The radii of the certified-accuracy columns, finite and >= 0 (not a string or a scalar).
    group : list of str
        Column names of results to group by.
    radius_col : str
        The column of certified radii.
    proxy_col : str
        The column of proxy radii (for ACR~).

    Returns
    -------
    pandas.DataFrame
        One row per group (in order of first appearance): the group's columns, one column per radius named f"{r:g}"
        (certified accuracy in %), "acr" and "acr_proxy".
    """
    if not isinstance(results, pd.DataFrame):
        raise TypeError(f"results must be a pandas DataFrame, got {type(results).__name__}")
    _check_group(group)
    _check_columns(results, "results", group=group, radius_col=radius_col, proxy_col=proxy_col, fixed=("correct",))
    radii = list(_iterable(radii, "radii"))
    _radius_grid(radii, "radii")
    rows = []
    for key, df in results.groupby(group, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        acc = certified_accuracy(df[radius_col], df["correct"], radii)
        row = dict(zip(group, key))
        row.update({f"{r:g}": 100.0 * a for r, a in zip(radii, acc)})
        row["acr"] = average_certified_radius(df[radius_col], df["correct"])
        row["acr_proxy"] = average_certified_radius(df[proxy_col], df["correct"])
        rows.append(row)
    return pd.DataFrame(rows)


def best_over(table: pd.DataFrame, over: str, group: list[str]) -> pd.DataFrame:
    """The envelope the papers report: per group, the maximum of every other column over the values of `over`.

    E.g. the best over σ per radius, as in ANCER Tables 1-2.

    Parameters
    ----------
    table : pandas.DataFrame
        A table such as `summary_table`'s, with numeric value columns.
    over : str
        A column of table, the configurations to take the best of (e.g. "sigma").
    group : list of str
        Column names of table to group by.

    Returns
    -------
    pandas.DataFrame
        One row per group: the group's columns and the maximum of each column other than `over` and the group's.
    """
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    _check_group(group)
    _check_columns(table, "table", over=over, group=group)
    value_cols = [c for c in table.columns if c not in group and c != over]
    return table.groupby(group, sort=False)[value_cols].max().reset_index()


def best_curve(results: pd.DataFrame, over: str, at: Iterable[float], radius_col: str = "radius") -> np.ndarray:
    """The papers' top-1 curve (ANCER Figures 2-3): the best certified accuracy over the groups of `over` per radius.

    Parameters
    ----------
    results : pandas.DataFrame
        Non-empty per-sample rows with the columns `over`, `radius_col` and `correct`.
    over : str
        The column whose groups to take the best of (e.g. "sigma").
    at : iterable of float
        The radii, finite and >= 0 (not a string or a scalar).
    radius_col : str
        The column of certified radii.

    Returns
    -------
    numpy.ndarray of float64, shape (len(at),)
        The best certified accuracy (a fraction) at each radius.
    """
    if not isinstance(results, pd.DataFrame):
        raise TypeError(f"results must be a pandas DataFrame, got {type(results).__name__}")
    if results.empty:
        raise ValueError("results must not be empty (no rows to take the best curve of)")
    _check_columns(results, "results", over=over, radius_col=radius_col, fixed=("correct",))
    grid = _radius_grid(list(_iterable(at, "at")), "at")
    return np.max([certified_accuracy(g[radius_col], g["correct"], grid) for _, g in results.groupby(over)], axis=0)
