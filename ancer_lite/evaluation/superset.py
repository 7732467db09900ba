"""Per-input comparisons of ANCER with the isotropic certificates (ANCER App. F, G.3, H, I):

- `superset_table`: the share of test inputs where ANCER's certificate is at least as large as both
  Fixed σ's and Isotropic DD's (Tables 4-5), in the l_p radius and in the proxy radius, with the inputs
  where all three are 0 counted as ties or left out (the paper does not say which; both are shown);
- `average_theta`: the non-data-dependent "Average Σ" of App. I (Table 6), the mean of ANCER's
  per-input parameters over the test set, in two forms (mean of σ, root mean of σ²);
- `anisotropy`: max σ_i / min σ_i of each input's ANCER parameters (Figure 16);
- `ellipsoid_slice`: the 2D cut of an axis-aligned ellipsoid by the plane through its centre spanned
  by two orthonormal directions (Figure 4's drawn regions).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.validation import check_count, check_finite_array
from ..methods.registry import ANCER, FIXED, ISOTROPIC

BASELINES = (FIXED, ISOTROPIC)


def per_input(results: pd.DataFrame, column: str) -> pd.DataFrame:
    """Each method's certificate per input: one row per (norm, sigma, idx) and one column per method.

    A wrong or abstaining prediction certifies nothing, so its value is 0, as in the certified-accuracy metrics.

    Parameters
    ----------
    results : pandas.DataFrame
        Per-input rows with the columns "norm", "sigma", "idx", "method", "correct" and `column`, holding the
        methods fixed, isotropic and ancer, each certifying the same inputs.
    column : str
        The column to compare (e.g. "radius", "radius_proxy").

    Returns
    -------
    pandas.DataFrame
        Indexed by (norm, sigma, idx), one column per method: `column` where correct, else 0.
    """
    value = results[column].where(results["correct"].astype(bool), 0.0)
    wide = results.assign(_v=value).pivot_table(index=["norm", "sigma", "idx"], columns="method", values="_v")
    missing = [m for m in (*BASELINES, ANCER) if m not in wide.columns]
    if missing:
        raise ValueError(f"results must hold the methods fixed, isotropic and ancer; missing {missing}")
    if wide.isna().any().any():
        raise ValueError("results must certify the same inputs with every method (some (norm, sigma, idx) lack one)")
    return wide


def superset_table(results: pd.DataFrame, column: str = "radius") -> pd.DataFrame:
    """ANCER Tables 4-5: the % of inputs whose ANCER certificate is at least as large as Fixed σ's and Isotropic DD's.

    Per (norm, sigma) and pooled over sigma ("all"), the share of inputs with ANCER's `column` >= max(Fixed σ's,
    Isotropic DD's), once counting the inputs where all three are 0 (ties) and once leaving them out (the paper does
    not say which).

    Parameters
    ----------
    results : pandas.DataFrame
        Per-input rows as for `per_input`.
    column : str
        The column to compare: "radius" (the l_p radius) or the proxy radius column.

    Returns
    -------
    pandas.DataFrame
        One row per (norm, sigma) and per (norm, "all"), with the columns norm, sigma, inputs, n_ties (the inputs
        where all three are 0), pct_with_ties and pct_without_ties (NaN when every input is a tie).
    """
    wide = per_input(results, column)
    best = wide[ANCER] >= wide[list(BASELINES)].max(axis=1)
    zero = (wide[[ANCER, *BASELINES]] == 0).all(axis=1)
    frame = pd.DataFrame({"best": best, "zero": zero}).reset_index()
    rows = []
    for (norm, sigma), g in list(frame.groupby(["norm", "sigma"])) + [((n, "all"), g) for n, g in frame.groupby("norm")]:
        kept = g[~g.zero]
        rows.append(dict(norm=norm, sigma=sigma, inputs=len(g), n_ties=int(g.zero.sum()),
                         pct_with_ties=100.0 * g.best.mean(),
                         pct_without_ties=100.0 * kept.best.mean() if len(kept) else float("nan")))
    return pd.DataFrame(rows)


def average_theta(thetas: np.ndarray, kind: str = "mean") -> np.ndarray:
    """ANCER App. I's non-data-dependent "Average Σ" (Table 6): ANCER's per-input parameters averaged over inputs.

    The average is taken over the test set, in one of two forms (`kind`).

    Parameters
    ----------
    thetas : numpy.ndarray, shape (N, *input_shape)
        Per-input parameters σ, finite and > 0.
    kind : str
        "mean": the mean of σ; "rms": the root mean of σ² (the average covariance Σ² taken back to a scale).

    Returns
    -------
    numpy.ndarray of float64, shape input_shape
        The average parameters.
    """
    t = np.asarray(thetas, np.float64)
    if t.ndim < 2 or not np.isfinite(t).all() or (t <= 0).any():
        raise ValueError(f"thetas must be finite, > 0 and of shape (N, *input_shape), got shape {t.shape}")
    if kind == "mean":
        return t.mean(axis=0)
    if kind == "rms":
        return np.sqrt((t * t).mean(axis=0))
    raise ValueError(f"kind must be 'mean' or 'rms', got {kind!r}")


def anisotropy(thetas: np.ndarray) -> np.ndarray:
    """max_i σ_i / min_i σ_i of each input's ANCER parameters (ANCER Figure 16): 1 for an isotropic distribution.

    Parameters
    ----------
    thetas : numpy.ndarray, shape (N, *input_shape)
        Per-input parameters σ, finite and > 0 (as for `average_theta`).

    Returns
    -------
    numpy.ndarray of float64, shape (N,)
        Each input's ratio, >= 1.
    """
    # the contract of `average_theta` (finite, > 0, one row per input)
    t = check_finite_array(thetas, "thetas", positive=True)
    if t.ndim < 2:
        raise ValueError(f"thetas must be finite, > 0 and of shape (N, *input_shape), got shape {t.shape}")
    flat = t.reshape(len(t), -1)
    return flat.max(axis=1) / flat.min(axis=1)


def ellipsoid_slice(scales: np.ndarray, u: np.ndarray, v: np.ndarray, num: int = 256) -> np.ndarray:
    """The 2D cut of an axis-aligned ellipsoid by the plane through its centre spanned by u and v (ANCER Figure 4).

    The cut is {a u + b v : sum_i ((a u_i + b v_i) / s_i)^2 <= 1}, in (a, b) coordinates the ellipse
    [a b] M [a b]^T = 1 with M = [[u'Du, u'Dv], [u'Dv, v'Dv]], D = diag(1 / s^2).

    Parameters
    ----------
    scales : numpy.ndarray, shape (d,) or any shape of d entries
        The ellipsoid's semi-axes s, finite and > 0.
    u, v : numpy.ndarray, d entries each
        Orthonormal directions, finite.
    num : int
        The number of boundary points, an integer >= 2.

    Returns
    -------
    numpy.ndarray of float64, shape (num, 2)
        Points (a, b) on the ellipse's boundary; the last one repeats the first (up to rounding).
    """
    num = check_count(num, "num", 2)
    s, u, v = (check_finite_array(a, name).reshape(-1) for a, name in ((scales, "scales"), (u, "u"), (v, "v")))
    if not (s.shape == u.shape == v.shape) or (s <= 0).any():
        raise ValueError("scales, u and v must have one entry per dimension, with scales > 0")
    if abs(u @ v) > 1e-8 or abs(u @ u - 1) > 1e-8 or abs(v @ v - 1) > 1e-8:
        raise ValueError("u and v must be orthonormal")
    d = 1.0 / s ** 2
    m = np.array([[u @ (d * u), u @ (d * v)], [u @ (d * v), v @ (d * v)]])
    w, q = np.linalg.eigh(m)
    t = np.linspace(0.0, 2.0 * np.pi, num)
    circle = np.stack([np.cos(t) / np.sqrt(w[0]), np.sin(t) / np.sqrt(w[1])])
    return (q @ circle).T
