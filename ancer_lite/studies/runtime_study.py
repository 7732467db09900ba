"""Notebook 04's measurements over notebook 03's columns (ANCER §6 "Limitations", §7.3, Table 3): the
columns' models, chosen step sizes and logged certificates (`image_study.Column`) fed to the timing and
order-effect primitives of `runtime`.

`runtime` itself stays free of the study layer (RANCER's module imports its stage labels); this module
is where a column's setup is read: the σ of notebook 03's step-size selection, its noise and budget.

- `table3_rows`: ANCER Table 3 (seconds per input by stage) for one column and norm, optionally at the
  paper's budget (`runtime.PAPER_BUDGET`), and the memory's cost on the column's test set;
- `certify_vs_n`: CERTIFY's seconds against N for every column;
- `order_effects` / `stress_test`: Algorithm 1 over random test orders, on the logged certificates and
  on inflated ones;
- `clearances`: how far apart the logged regions of different classes are (`runtime.max_intersect_clearance`).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..core.memory import POLICIES
from ..core.names import NOISE_OF
from ..core.regions import semi_axes
from ..core.stages import MEMORY, stage
from ..methods.registry import ANCER, ISOTROPIC
from ..runs.parallel import map_ordered
from ..runs.profiles import Profile
from ..runs.setups import theta_of
from . import runtime
from .image_study import Column, selection_sigma

#: the data-dependent methods, whose certificates go through Algorithm 1
DD_METHODS = (ISOTROPIC, ANCER)


def table3_rows(col: Column, norm: str, profile: Profile, inputs: int, seed: int = 0,
                budget: Mapping[str, int] | None = None) -> tuple[pd.DataFrame, dict[str, float]]:
    """ANCER Table 3 for one column and norm, with the memory's cost on the column's test set.

    The column's model at the selection σ and its chosen step sizes; the first `inputs` test inputs are timed one
    at a time (`runtime.time_stages`), the memory over the whole logged ANCER run at that σ
    (`runtime.time_memory`). With `budget` the optimizations and CERTIFY use that budget instead of the column's.

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column.
    norm : str
        "l2" or "l1".
    profile : runs.profiles.Profile
        Its n0, alpha and batch_size certify.
    inputs : int
        Test inputs timed (>= 1).
    seed : int, default 0
        The timing runs' seed.
    budget : mapping of str to int, optional
        Keys iterations, samples and n, e.g. `runtime.PAPER_BUDGET`.

    Returns
    -------
    table : pandas.DataFrame
        `runtime.runtime_table`: rows the methods, columns the stages and total (seconds per input).
    memory : dict of str to float
        The memory's seconds per input: "fast" and "reference".
    """
    if inputs < 1:
        raise ValueError(f"inputs must be >= 1, got {inputs!r}")
    s = col.setup
    sigma = selection_sigma(s, norm)
    settings, n = col.chosen[norm], s.n
    if budget is not None:
        missing = {"iterations", "samples", "n"} - set(budget)
        if missing:
            raise ValueError(f"budget must give iterations, samples and n, got {dict(budget)!r}")
        settings, n = settings.with_budget(budget["iterations"], budget["samples"]), budget["n"]
    stages = runtime.time_stages(col.work.models[norm, sigma], col.work.test.x[:inputs], NOISE_OF[norm],
                                 theta_of(norm, sigma), settings, profile.n0, n, profile.alpha,
                                 col.work.num_classes, profile.batch_size, seed)
    memory = runtime.time_memory(col.certified(norm, sigma, ANCER), col.work.test.x,
                                 col.thetas(norm, sigma, ANCER), norm)
    return runtime.runtime_table(stages, memory["fast"]), memory


def certify_vs_n(cols: Mapping[str, Column], profile: Profile, ns: Sequence[int], inputs: int,
                 norm: str = "l2", seed: int = 0) -> pd.DataFrame:
    """`runtime.certify_seconds_vs_n` for each column's model at the selection σ of `norm` (ANCER §7.3).

    Parameters
    ----------
    cols : mapping of str to image_study.Column
        Notebook 03's columns by name.
    profile : runs.profiles.Profile
        Its n0, alpha and batch_size certify.
    ns : sequence of int
        The N.
    inputs : int
        The first `inputs` test inputs of each column are timed.
    norm : str, default "l2"
        "l2" or "l1".
    seed : int, default 0
        CERTIFY's seed.

    Returns
    -------
    pandas.DataFrame
        Columns n, input, seconds, column.
    """
    out = []
    for name, col in cols.items():
        sigma = selection_sigma(col.setup, norm)
        t = runtime.certify_seconds_vs_n(col.work.models[norm, sigma], col.work.test.x[:inputs],
                                         theta_of(norm, sigma), NOISE_OF[norm], ns, profile.n0,
                                         profile.alpha, col.work.num_classes, profile.batch_size, seed)
        out.append(t.assign(column=name))
    return pd.concat(out, ignore_index=True)


def order_effects(cols: Mapping[str, Column], orders: int, seed: int = 0,
                  policies: Sequence[str] = POLICIES, workers: int | None = None) -> pd.DataFrame:
    """`runtime.order_effect` (ANCER §6) for every column, logged (norm, σ), data-dependent method and policy.

    The runs are independent and each seeds its own orders, so they go to `workers` processes
    (`parallel.map_ordered`) with the same result as one loop. Counted as stage MEMORY.

    Parameters
    ----------
    cols : mapping of str to image_study.Column
        Notebook 03's columns by name.
    orders : int
        Random orders per run (besides the logged one).
    seed : int, default 0
        Seed of the orders.
    policies : sequence of str, default `memory.POLICIES`
        The memory's policies.
    workers : int, optional
        The most worker processes (default one per core).

    Returns
    -------
    pandas.DataFrame
        One `runtime.tidy` table with columns column, norm, sigma, method, policy.
    """
    tasks, labels = [], []
    for name, col in cols.items():
        for (norm, sigma) in col.work.models:
            for method in DD_METHODS:
                base, th = col.certified(norm, sigma, method), col.thetas(norm, sigma, method)
                for policy in policies:
                    tasks.append((base, col.work.test.x, th, norm, orders, seed, policy))
                    labels.append(dict(column=name, norm=norm, sigma=sigma, method=method, policy=policy))
    with stage(MEMORY):
        effects = map_ordered(runtime.order_effect, tasks, workers)
    return runtime.tidy([e.assign(**label) for e, label in zip(effects, labels)])


def stress_test(cols: Mapping[str, Column], factors: Sequence[float], orders: int, seed: int = 0,
                norms: Sequence[str] = ("l2", "l1"), policies: Sequence[str] = POLICIES,
                workers: int | None = None) -> pd.DataFrame:
    """`runtime.order_effect` (ANCER §6) with every semi-axis inflated by each of `factors`.

    At each column's selection σ, for both data-dependent methods and every policy. The inflated regions are not
    certificates. Runs in `workers` processes as `order_effects` does.

    Parameters
    ----------
    cols : mapping of str to image_study.Column
        Notebook 03's columns by name.
    factors : sequence of float
        The inflation factors (finite, > 0).
    orders : int
        Random orders per run (besides the logged one).
    seed : int, default 0
        Seed of the orders.
    norms : sequence of str, default ("l2", "l1")
        The norms.
    policies : sequence of str, default `memory.POLICIES`
        The memory's policies.
    workers : int, optional
        The most worker processes (default one per core).

    Returns
    -------
    pandas.DataFrame
        One `runtime.tidy` table with columns column, norm, method, policy, inflate.
    """
    tasks, labels = [], []
    for name, col in cols.items():
        for norm in norms:
            sigma = selection_sigma(col.setup, norm)
            for method in DD_METHODS:
                base, th = col.certified(norm, sigma, method), col.thetas(norm, sigma, method)
                for factor in factors:
                    for policy in policies:
                        tasks.append((base, col.work.test.x, th, norm, orders, seed, policy, factor))
                        labels.append(dict(column=name, norm=norm, method=method, policy=policy, inflate=factor))
    with stage(MEMORY):
        effects = map_ordered(runtime.order_effect, tasks, workers)
    return runtime.tidy([e.assign(**label) for e, label in zip(effects, labels)])


def clearances(cols: Mapping[str, Column]) -> pd.DataFrame:
    """How far apart the logged regions of different classes are (ANCER App. D.1), per column, (norm, σ) and method.

    For every column, logged (norm, σ) and data-dependent method, from CERTIFY's regions before Algorithm 1:
    regions of different classes cannot meet, in any order, when `runtime.max_intersect_clearance` exceeds 1, and
    inflated regions cannot meet below it; `runtime.enclosing_overlaps` counts the pairs whose enclosing balls
    overlap (which only the exact Intersect test can rule out).

    Parameters
    ----------
    cols : mapping of str to image_study.Column
        Notebook 03's columns by name.

    Returns
    -------
    pandas.DataFrame
        Columns column, norm, sigma, method, certified (inputs), max_radius (the largest certified ℓp radius,
        CERTIFY's), max_semi_axis (the enclosing ball's radius), max_axis_ratio (the largest ratio of an input's
        longest to its shortest semi-axis), clearance and overlapping_pairs.
    """
    rows = []
    for name, col in cols.items():
        centers = col.work.test.x.reshape(len(col.work.test.x), -1).double().numpy()
        for (norm, sigma) in col.work.models:
            for method in DD_METHODS:
                base, th = col.certified(norm, sigma, method), col.thetas(norm, sigma, method)
                preds = base["predict"].to_numpy(np.int64)
                ok = preds >= 0
                scales = np.ones_like(centers)
                scales[ok] = semi_axes(th.reshape(len(th), -1).astype(np.float64)[ok],
                                       base["gap"].to_numpy(np.float64)[ok])
                rows.append(dict(column=name, norm=norm, sigma=sigma, method=method,
                                 certified=int(ok.sum()),
                                 max_radius=float(base["radius"].max()),
                                 max_semi_axis=float(scales[ok].max()) if ok.any() else 0.0,
                                 max_axis_ratio=float((scales[ok].max(axis=1) / scales[ok].min(axis=1)).max())
                                 if ok.any() else 1.0,
                                 clearance=runtime.max_intersect_clearance(centers, preds, scales, norm),
                                 overlapping_pairs=runtime.enclosing_overlaps(centers, preds, scales, norm)))
    return pd.DataFrame(rows)
