"""What certification costs and what the memory's order does (ANCER §6 "Limitations", §7.3, Table 3).

- `time_stages`: seconds per input of each stage of Fixed σ, Isotropic DD and ANCER, one input at a
  time as a deployed certifier meets them (ANCER Table 3 reports the totals);
- `time_memory`: seconds per input of Algorithm 1 over a logged test set, fast path and reference loop;
- `certify_seconds_vs_n`: CERTIFY's cost against the number of noise samples N;
- `per_sample_cost`: CERTIFY's seconds per noise sample at each N (flat where the cost is linear);
- `synthetic_memory` / `time_memory_step` / `memory_step_grid`: one Algorithm 1 step against a memory
  of |M| regions (the paper says the cost is linear in |M|);
- `order_effect`: Algorithm 1 over random orders of the same certified inputs (§6: the order can change
  the result when regions intersect); `tidy`, `order_spread`, `order_changes`, `widest_order_range`
  summarize the orders;
- `max_intersect_clearance` / `enclosing_overlaps`: how far apart regions of different classes are,
  in units of their enclosing balls (MaxIntersect, App. D.1): above 1 no two can meet in any order;
- `fit_linear` / `fits_by` / `intercept_reading` / `fit_curve`: least-squares lines with R² and standard
  errors, to read the growth off the measurements without calling a negative intercept a cost;
- `ancer_share`: each stage's share of a method's time in Table 3.

Notebook 04 applies these to notebook 03's columns through `runtime_study` (this module stays below
the study layer: `rancer` imports its stage labels).
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from ..core import devices
from ..core.certify import BATCH_SIZE, Smooth
from ..core.geometry import outer_ball_radius
from ..core.memory import ABSTAIN_BASE, ABSTAIN_INSIDE, ABSTAIN_INTERSECT, KEPT, SHRINK, SHRUNK, algorithm1, decide
from ..core.noise import GAUSSIAN, check_noise
from ..core.regions import NORMS, certified_regions
from ..core.validation import check_choice, check_count
from ..evaluation.metrics import average_certified_radius, check_correct
from ..methods import registry
from ..methods.optimize import optimize_ancer, optimize_isotropic
from ..methods.rancer import RancerSettings, certify_rotated, hessian_rotation, optimize_rancer
from ..methods.registry import ANCER, FIXED, ISOTROPIC, RANCER, OptimSettings
from ..runs.experiment import apply_memory, certify_input

#: the stages of ANCER Table 3's certification procedures, in the order they run
ISO_OPT, ANCER_OPT, CERTIFY, MEMORY = "Iso DD optimization", "ANCER optimization", "CERTIFY", "memory"
STAGES = (ISO_OPT, ANCER_OPT, CERTIFY, MEMORY)
STAGES_OF = {FIXED: (CERTIFY,), ISOTROPIC: (ISO_OPT, CERTIFY, MEMORY), ANCER: STAGES}
#: RANCER's extra stages (RANCER Table 3): the input Hessian and its eigenvectors, the optimization of Σ̂
HESSIAN, RANCER_OPT = "Hessian + eigenvectors", "RANCER optimization"
RANCER_STAGES = (ISO_OPT, HESSIAN, ANCER_OPT, RANCER_OPT, CERTIFY, MEMORY)
#: the rows of a runtime table: the registry's methods, in its order
METHOD_ORDER = registry.names()
#: ANCER Table 3's setting (ANCER §7, App. E): 100 optimization steps of 100 noise samples, N = 100,000
PAPER_BUDGET = {"iterations": 100, "samples": 100, "n": 100_000}
#: the synthetic memory's semi-axes are uniform in [SYNTHETIC_SCALE / 2, SYNTHETIC_SCALE] per pixel
SYNTHETIC_SCALE = 0.05
#: one memory step is timed as the best of this many runs
STEP_REPEATS = 3
#: Algorithm 1's statuses of an input whose centre lay in, or whose region met, an earlier region of
#: another class (`memory`'s SHRUNK, ABSTAIN_INSIDE, ABSTAIN_INTERSECT)
MET = (SHRUNK, ABSTAIN_INSIDE, ABSTAIN_INTERSECT)

def _seconds(fn: Callable[[], object], device: torch.device | None = None) -> tuple[float, object]:
    """fn()'s wall time and result; on a CUDA `device`, the time until its queued work is done."""
    devices.synchronize(device)
    t0 = time.perf_counter()
    out = fn()
    devices.synchronize(device)
    return time.perf_counter() - t0, out


def time_stages(model: torch.nn.Module, x: torch.Tensor, noise: str, theta0: float, settings: OptimSettings,
                n0: int, n: int, alpha: float, num_classes: int, batch_size: int = BATCH_SIZE,
                seed: int = 0, device: str | torch.device | None = None) -> pd.DataFrame:
    """ANCER Table 3's stages, timed for each input of `x` on its own (batch of one).

    The stages are Isotropic DD's optimization from theta0, ANCER's from that result, and CERTIFY with Fixed σ's,
    Isotropic DD's and ANCER's parameters. The memory stage is timed separately by `time_memory` (it needs the
    whole test set). On a GPU each stage is timed until its queued work is done.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier.
    x : torch.Tensor, shape (B, *input_shape)
        A non-empty batch of inputs.
    noise : str
        "gaussian" or "uniform".
    theta0 : float
        The initial (Fixed σ) parameter.
    settings : methods.registry.OptimSettings
        Iterations, step sizes, samples and κ of the two optimizations.
    n0, n : int
        CERTIFY's selection and estimation samples.
    alpha : float
        The Clopper-Pearson level.
    num_classes : int
        The number of classes.
    batch_size : int, default `certify.BATCH_SIZE`
        Noise draws per forward batch.
    seed : int, default 0
        Seed of the optimizations' noise and of CERTIFY's streams.
    device : str or torch.device, optional
        Where the model runs (`devices.resolve`: "auto", "cpu" or a CUDA device; None: where the model is); the
        model is moved there.

    Returns
    -------
    pandas.DataFrame
        One row per (input, method, stage): columns input, method ("fixed", "isotropic", "ancer"), stage (of
        `STAGES`), seconds.
    """
    check_noise(noise)
    if x.ndim < 2 or len(x) == 0:
        raise ValueError(f"x must be a non-empty batch (B, *input_shape), got shape {tuple(x.shape)}")
    dev = devices.place(model, device) if isinstance(model, torch.nn.Module) else None
    smooth = Smooth(model, num_classes, tuple(x.shape[1:]), noise, batch_size=batch_size, seed=seed,
                    device=dev or "cpu")
    gen = torch.Generator().manual_seed(seed)
    s_iso, s_anc = settings.of(ISOTROPIC), settings.of(ANCER)
    rows = []
    for k in range(len(x)):
        xk = x[k:k + 1].to(dev)
        t_iso, iso = _seconds(lambda: optimize_isotropic(
            model, xk, theta0, noise, iterations=s_iso.iterations, lr=s_iso.lr, samples=s_iso.samples,
            generator=gen), dev)
        t_anc, anc = _seconds(lambda: optimize_ancer(
            model, xk, iso, noise, iterations=s_anc.iterations, lr=s_anc.lr, samples=s_anc.samples,
            kappa=s_anc.kappa, generator=gen), dev)
        thetas = {FIXED: np.full(tuple(xk.shape[1:]), theta0, np.float32),
                  ISOTROPIC: np.full(tuple(xk.shape[1:]), float(iso[0]), np.float32),
                  ANCER: anc[0].cpu().numpy()}
        rows += [dict(input=k, method=ISOTROPIC, stage=ISO_OPT, seconds=t_iso),
                 dict(input=k, method=ANCER, stage=ISO_OPT, seconds=t_iso),
                 dict(input=k, method=ANCER, stage=ANCER_OPT, seconds=t_anc)]
        for method, th in thetas.items():
            t_cert, _ = _seconds(lambda: certify_input(smooth, x[k], th, k, n0, n, alpha, seed), dev)
            rows.append(dict(input=k, method=method, stage=CERTIFY, seconds=t_cert))
    return pd.DataFrame(rows)


def time_memory(base: pd.DataFrame, x: torch.Tensor, thetas: np.ndarray, norm: str, policy: str = SHRINK,
                repeats: int = 3) -> dict[str, float]:
    """Seconds per input of ANCER's Algorithm 1 over a certified test set in its order.

    The fast path `experiment.apply_memory` is timed as the best of `repeats`, the plain reference loop
    `memory.algorithm1_reference` once.

    Parameters
    ----------
    base : pandas.DataFrame
        CERTIFY's rows before the memory, one per input in test order, with columns predict, gap, label, correct,
        radius, radius_proxy, ...
    x : torch.Tensor, shape (N, *input_shape)
        The inputs, in the order of `base`.
    thetas : numpy.ndarray, shape (N, *input_shape)
        The inputs' parameters (σ for ℓ2, λ for ℓ1).
    norm : str
        "l2" or "l1".
    policy : str, default `memory.SHRINK`
        One of `memory.POLICIES`.
    repeats : int, default 3
        Runs of the fast path (>= 1).

    Returns
    -------
    dict of str to float
        "fast" and "reference": seconds per input.
    """
    check_count(repeats, "repeats")
    if len(base) != len(x) or len(thetas) != len(x):
        raise ValueError(f"base, x and thetas must have one row per input, got {len(base)}, {len(x)}, {len(thetas)}")
    fast = min(_seconds(lambda: apply_memory(base, x, thetas, norm, policy))[0] for _ in range(repeats))
    regions = certified_regions(x, thetas, base["gap"].to_numpy(np.float64), base["predict"].to_numpy(np.int64), norm)
    ref, _ = _seconds(lambda: algorithm1(regions, policy, reference=True))
    return {"fast": fast / len(x), "reference": ref / len(x)}


def runtime_table(stages: pd.DataFrame, memory_seconds: float | dict[str, float],
                  order: Sequence[str] = STAGES) -> pd.DataFrame:
    """ANCER Table 3 (RANCER Table 3 with `order=RANCER_STAGES`) for one model: mean seconds per input of each stage.

    A stage a method does not run counts 0.

    Parameters
    ----------
    stages : pandas.DataFrame
        Per-input rows with columns method, stage, seconds (`time_stages`, `time_rancer_stages`).
    memory_seconds : float or dict of str to float
        Per-input cost of the memory, for every data-dependent method (a float) or per method (a dict).
    order : sequence of str, default `STAGES`
        The stage columns.

    Returns
    -------
    pandas.DataFrame
        Rows: the methods present, in `METHOD_ORDER`; columns: `order` and total.
    """
    t = stages.groupby(["method", "stage"]).seconds.mean().unstack("stage")
    methods = [m for m in METHOD_ORDER if m in t.index]
    t = t.reindex(index=methods, columns=list(order)).fillna(0.0)
    mem = memory_seconds if isinstance(memory_seconds, dict) else {m: float(memory_seconds) for m in methods
                                                                   if registry.method(m).memory}
    t[MEMORY] = [float(mem.get(m, 0.0)) for m in methods]
    t["total"] = t.sum(axis=1)
    return t


def ratios(table: pd.DataFrame, column: str = "total") -> dict[str, float]:
    """ANCER / Fixed σ, ANCER / Isotropic DD and Isotropic DD / Fixed σ of an ANCER Table 3.

    Parameters
    ----------
    table : pandas.DataFrame
        A Table 3 with rows fixed, isotropic, ancer (`runtime_table`) or the paper's method names ("Fixed sigma",
        "Isotropic DD", "ANCER").
    column : str, default "total"
        The column compared.

    Returns
    -------
    dict of str to float
        Keyed "ANCER / Fixed σ", "ANCER / Iso DD", "Iso DD / Fixed σ".
    """
    names = {FIXED: "Fixed sigma", ISOTROPIC: "Isotropic DD", ANCER: "ANCER"}
    v = {m: float(table.loc[m if m in table.index else names[m], column]) for m in names}
    return {"ANCER / Fixed σ": v[ANCER] / v[FIXED], "ANCER / Iso DD": v[ANCER] / v[ISOTROPIC],
            "Iso DD / Fixed σ": v[ISOTROPIC] / v[FIXED]}


def certify_seconds_vs_n(model: torch.nn.Module, x: torch.Tensor, theta: float, noise: str, ns: Sequence[int],
                         n0: int, alpha: float, num_classes: int, batch_size: int = BATCH_SIZE,
                         seed: int = 0) -> pd.DataFrame:
    """Seconds of one CERTIFY (N0 = n0 selection samples plus N) for each input and each N in `ns` (ANCER §7.3).

    One CERTIFY at the smallest N warms up first (allocations, thread pool).

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier.
    x : torch.Tensor, shape (B, *input_shape)
        The inputs.
    theta : float
        The isotropic parameter of every input.
    noise : str
        "gaussian" or "uniform".
    ns : sequence of int
        The N, each >= 1.
    n0 : int
        CERTIFY's selection samples.
    alpha : float
        The Clopper-Pearson level.
    num_classes : int
        The number of classes.
    batch_size : int, default `certify.BATCH_SIZE`
        Noise draws per forward batch.
    seed : int, default 0
        CERTIFY's seed.

    Returns
    -------
    pandas.DataFrame
        Columns n, input, seconds.
    """
    smooth = Smooth(model, num_classes, tuple(x.shape[1:]), check_noise(noise), batch_size=batch_size, seed=seed)
    th = np.full(tuple(x.shape[1:]), theta, np.float32)
    certify_input(smooth, x[0], th, 0, n0, min(ns), alpha, seed)  # warm-up (allocations, thread pool)
    rows = []
    for n in ns:
        check_count(n, "ns[...]")
        for k in range(len(x)):
            t, _ = _seconds(lambda: certify_input(smooth, x[k], th, k, n0, int(n), alpha, seed))
            rows.append(dict(n=int(n), input=k, seconds=t))
    return pd.DataFrame(rows)


def per_sample_cost(timings: pd.DataFrame, n0: int, by: str = "column") -> pd.DataFrame:
    """Summary of `certify_seconds_vs_n` rows: per group and N, the seconds and the seconds per noise sample.

    A constant per-sample cost means CERTIFY is linear in N with no fixed cost; one that falls with N reveals a
    fixed cost, one that rises a slightly faster than linear growth.

    Parameters
    ----------
    timings : pandas.DataFrame
        Rows with columns n, seconds and the group column `by`.
    n0 : int
        CERTIFY's selection samples (>= 0).
    by : str, default "column"
        The group column.

    Returns
    -------
    pandas.DataFrame
        Columns `by`, n, mean, min, max (seconds over the inputs) and per_sample (mean / (n0 + N)).
    """
    check_count(n0, "n0", 0)
    g = timings.groupby([by, "n"], sort=False).seconds
    out = pd.DataFrame({"mean": g.mean(), "min": g.min(), "max": g.max()}).reset_index()
    out["per_sample"] = out["mean"] / (n0 + out["n"])
    return out


def synthetic_memory(size: int, dim: int, rng: np.random.Generator,
                     scale: float = SYNTHETIC_SCALE) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A memory of `size` regions of class 0 and a new input of class 1 that meets none of them (ANCER §6).

    Centres are uniform in [0, 1]^dim and semi-axes uniform in [scale/2, scale] (per pixel), for the memory and
    the new input alike: every entry is of another class, so Algorithm 1 must test all of them, and with these
    sizes (the ℓ2 or ℓ1 distance between two centres is about sqrt(dim/6) or dim/3) none meets it, the common case
    the paper reports.

    Parameters
    ----------
    size : int
        Regions in the memory |M| (>= 1).
    dim : int
        Dimensions d (>= 1).
    rng : numpy.random.Generator
        The generator of centres and semi-axes.
    scale : float, default `SYNTHETIC_SCALE`
        The largest semi-axis.

    Returns
    -------
    centers : numpy.ndarray, shape (size, dim)
        The memory's centres.
    scales : numpy.ndarray, shape (size, dim)
        The memory's semi-axes.
    x : numpy.ndarray, shape (dim,)
        The new centre.
    x_scales : numpy.ndarray, shape (dim,)
        The new semi-axes.
    """
    check_count(size, "size")
    check_count(dim, "dim")
    centers = rng.uniform(0.0, 1.0, (size, dim))
    scales = rng.uniform(scale / 2, scale, (size, dim))
    return centers, scales, rng.uniform(0.0, 1.0, dim), rng.uniform(scale / 2, scale, dim)


def time_memory_step(size: int, dim: int, norm: str, rng: np.random.Generator, repeats: int = STEP_REPEATS,
                     policy: str = SHRINK) -> float:
    """Seconds (best of `repeats`) of one ANCER Algorithm 1 step against a `synthetic_memory` of `size` regions.

    The step is `memory.decide` (ANCER Algorithm 1, App. D), vectorized over the entries, timed with its entry
    checks (a few O(|M| d) passes over the memory, linear in |M| as the step itself).

    Parameters
    ----------
    size : int
        Regions in the memory.
    dim : int
        Dimensions.
    norm : str
        "l2" or "l1".
    rng : numpy.random.Generator
        The generator of the synthetic memory.
    repeats : int, default `STEP_REPEATS`
        Timed runs (>= 1).
    policy : str, default `memory.SHRINK`
        One of `memory.POLICIES`.

    Returns
    -------
    float
        Seconds.

    Raises
    ------
    RuntimeError
        If the step does not keep the region (the memory is built so that nothing meets it).
    """
    norm = check_choice(norm, "norm", NORMS)
    c, s, x, sx = synthetic_memory(size, dim, rng)
    preds = np.zeros(size, dtype=np.int64)
    best = np.inf
    for _ in range(check_count(repeats, "repeats")):
        t, d = _seconds(lambda: decide(x, 1, sx, c, preds, s, norm, policy))
        if d.status != KEPT:
            raise RuntimeError(f"synthetic memory ({size} x {dim}, {norm}) met the new region: {d.status}")
        best = min(best, t)
    return best


def fit_linear(x: Sequence[float], y: Sequence[float]) -> dict[str, float]:
    """Least-squares y = intercept + slope x, with R² and the standard errors of the intercept and the slope.

    R² is 1 - residual / total sum of squares (1 when y is constant); the standard errors are ordinary least
    squares', with residual variance SSR / (n - 2) (NaN with two points).

    Parameters
    ----------
    x : sequence of float, shape (n,)
        At least two distinct values.
    y : sequence of float, shape (n,)
        The measurements.

    Returns
    -------
    dict of str to float
        intercept, slope, r2, intercept_se, slope_se.
    """
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 2:
        raise ValueError(f"x and y must be 1-D of the same length >= 2, got {x.shape} and {y.shape}")
    if np.ptp(x) == 0:
        raise ValueError(f"x must take at least two distinct values, got {np.unique(x).tolist()}")
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (intercept + slope * x)
    total = ((y - y.mean()) ** 2).sum()
    sxx = ((x - x.mean()) ** 2).sum()
    s2 = (resid ** 2).sum() / (len(x) - 2) if len(x) > 2 else np.nan
    return {"intercept": float(intercept), "slope": float(slope),
            "r2": float(1.0 - (resid ** 2).sum() / total) if total > 0 else 1.0,
            "intercept_se": float(np.sqrt(s2 * (1.0 / len(x) + x.mean() ** 2 / sxx))),
            "slope_se": float(np.sqrt(s2 / sxx))}


def fits_by(frame: pd.DataFrame, by: str | Sequence[str], x: str, y: str) -> pd.DataFrame:
    """`fit_linear` of column `y` on column `x` for each group of `frame` (groups in order of first appearance).

    Parameters
    ----------
    frame : pandas.DataFrame
        With the columns of `by`, `x` and `y`.
    by : str or sequence of str
        The group columns.
    x, y : str
        The columns fitted.

    Returns
    -------
    pandas.DataFrame
        One row per group, indexed by the group keys, with `fit_linear`'s fields, x_min and y_at_x_min (the mean
        measured y at the smallest x: an upper bound on any fixed cost).
    """
    keys = [by] if isinstance(by, str) else list(by)
    rows = {}
    for key, g in frame.groupby(keys if len(keys) > 1 else keys[0], sort=False):
        f = fit_linear(g[x], g[y])
        lo = g[x].min()
        f.update(x_min=float(lo), y_at_x_min=float(g.loc[g[x] == lo, y].mean()))
        rows[key] = f
    out = pd.DataFrame(rows).T
    out.index.names = keys
    return out


def intercept_reading(fit: dict[str, float] | pd.Series, k: float = 2.0) -> str:
    """What a fitted intercept says about a fixed cost.

    Parameters
    ----------
    fit : dict or pandas.Series
        With intercept and intercept_se (`fit_linear`, a row of `fits_by`).
    k : float, default 2.0
        The standard errors that count as resolved (> 0).

    Returns
    -------
    str
        "positive" (more than k standard errors above 0: a fixed cost), "negative" (more than k below 0: no cost
        can be negative, so the straight line misfits, e.g. the time grows a little faster than linearly) or
        "zero" (within k standard errors of 0: no fixed cost is resolved). With a NaN standard error, the
        intercept's sign.
    """
    a, se = float(fit["intercept"]), float(fit["intercept_se"])
    if not k > 0:
        raise ValueError(f"k must be > 0, got {k!r}")
    if not np.isfinite(se):
        return "positive" if a > 0 else "negative" if a < 0 else "zero"
    return "positive" if a > k * se else "negative" if a < -k * se else "zero"


def fit_curve(fit: dict[str, float] | pd.Series, lo: float, hi: float, num: int = 100,
              positive: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The fitted line intercept + slope x on a geometric grid over [lo, hi], for plotting.

    With `positive`, values <= 0 become NaN (matplotlib leaves a gap there), so that a log axis shows the fit only
    where it is positive instead of a cliff down to a clamped tiny value.

    Parameters
    ----------
    fit : dict or pandas.Series
        With intercept and slope (`fit_linear`).
    lo, hi : float
        The grid's ends, 0 < lo < hi.
    num : int, default 100
        Grid points (>= 2).
    positive : bool, default True
        Blank the values <= 0.

    Returns
    -------
    grid : numpy.ndarray, shape (num,)
    y : numpy.ndarray, shape (num,)
    """
    if not 0 < lo < hi:
        raise ValueError(f"lo and hi must satisfy 0 < lo < hi, got {lo!r}, {hi!r}")
    grid = np.geomspace(lo, hi, check_count(num, "num", 2))
    y = float(fit["intercept"]) + float(fit["slope"]) * grid
    if positive:
        y = np.where(y > 0, y, np.nan)
    return grid, y


def memory_step_grid(sizes: Sequence[int], dims: Sequence[int], norms: Sequence[str] = NORMS,
                     seed: int = 0, repeats: int = STEP_REPEATS) -> pd.DataFrame:
    """`time_memory_step` for every (norm, dim, size) (ANCER §6: the cost is linear in |M|).

    The synthetic memories are drawn from one generator seeded with `seed`, in that loop order.

    Parameters
    ----------
    sizes : sequence of int
        Memory sizes |M|.
    dims : sequence of int
        Dimensions d.
    norms : sequence of str, default `regions.NORMS`
        Norms.
    seed : int, default 0
        The generator's seed.
    repeats : int, default `STEP_REPEATS`
        Timed runs per step.

    Returns
    -------
    pandas.DataFrame
        One row each: columns norm, dim, size, seconds.
    """
    rng = np.random.default_rng(seed)
    return pd.DataFrame([dict(norm=norm, dim=int(d), size=int(m),
                              seconds=time_memory_step(int(m), int(d), norm, rng, repeats))
                         for norm in norms for d in dims for m in sizes])


def order_effect(base: pd.DataFrame, x: torch.Tensor, thetas: np.ndarray, norm: str, orders: int = 5,
                 seed: int = 0, policy: str = SHRINK, inflate: float = 1.0) -> pd.DataFrame:
    """ANCER Algorithm 1 over the same certified inputs in several orders (ANCER §6).

    The logged order is order 0, followed by `orders` random permutations.

    Parameters
    ----------
    base : pandas.DataFrame
        CERTIFY's rows before the memory, one per input in test order, with columns predict, gap, label, correct,
        radius, radius_proxy, ...
    x : torch.Tensor, shape (N, *input_shape)
        The inputs, in the order of `base`.
    thetas : numpy.ndarray, shape (N, *input_shape)
        The inputs' parameters (σ for ℓ2, λ for ℓ1).
    norm : str
        "l2" or "l1".
    orders : int, default 5
        Random permutations (>= 0).
    seed : int, default 0
        The permutations' seed.
    policy : str, default `memory.SHRINK`
        One of `memory.POLICIES`.
    inflate : float, default 1.0
        Multiplies every region's semi-axes (finite, > 0): a stress test of how large regions must be for order to
        matter.

    Returns
    -------
    pandas.DataFrame
        One row per order: columns order, accuracy (certified at radius 0, %), acr, acr_proxy (ACR~) and the count
        of each decision status present (0 where absent).
    """
    check_count(orders, "orders", 0)
    if not (np.isfinite(inflate) and inflate > 0):
        raise ValueError(f"inflate must be a finite number > 0, got {inflate!r}")
    thetas = thetas * inflate if inflate != 1.0 else thetas
    if len(base) != len(x) or len(thetas) != len(x):
        raise ValueError(f"base, x and thetas must have one row per input, got {len(base)}, {len(x)}, {len(thetas)}")
    rng = np.random.default_rng(seed)
    rows = []
    for o in range(orders + 1):
        perm = np.arange(len(x)) if o == 0 else rng.permutation(len(x))
        out = apply_memory(base.iloc[perm].reset_index(drop=True), x[perm], thetas[perm], norm, policy)
        correct = check_correct(out["correct"])
        row = dict(order=o, accuracy=100.0 * float(correct.mean()),
                   acr=average_certified_radius(out["radius"], correct),
                   acr_proxy=average_certified_radius(out["radius_proxy"], correct))
        row.update(out["status"].value_counts().to_dict())
        rows.append(row)
    return pd.DataFrame(rows).fillna(0)


def tidy(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """`order_effect` results (with any identifying columns added) as one table.

    Parameters
    ----------
    frames : sequence of pandas.DataFrame
        At least one `order_effect` table.

    Returns
    -------
    pandas.DataFrame
        The concatenated rows, with every status column of `MET`, ABSTAIN_BASE and KEPT as an int count (0 where a
        run had none), plus met, the inputs that met an earlier region of another class (the sum over `MET`).
    """
    if not len(frames):
        raise ValueError("frames must hold at least one order_effect table, got none")
    e = pd.concat(frames, ignore_index=True)
    for status in (*MET, ABSTAIN_BASE, KEPT):
        e[status] = e[status].fillna(0).astype(int) if status in e else 0
    e["met"] = e[list(MET)].sum(axis=1)
    return e


def order_spread(effects: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per run, the spread over the orders of a `tidy` table: how much the test order changes the result.

    Parameters
    ----------
    effects : pandas.DataFrame
        A `tidy` table.
    keys : sequence of str
        The columns identifying a run.

    Returns
    -------
    pandas.DataFrame
        Indexed by `keys`: met_min, met_max, met_mean (meetings), acc_min, acc_max, acr_min, acr_max, acrp_min,
        acrp_max (ACR~) and acc_range_pp (the accuracy's range over the orders, percentage points).
    """
    out = effects.groupby(list(keys), sort=False).agg(
        met_min=("met", "min"), met_max=("met", "max"), met_mean=("met", "mean"),
        acc_min=("accuracy", "min"), acc_max=("accuracy", "max"), acr_min=("acr", "min"),
        acr_max=("acr", "max"), acrp_min=("acr_proxy", "min"), acrp_max=("acr_proxy", "max"))
    out["acc_range_pp"] = out.acc_max - out.acc_min
    return out


def order_changes(spread: pd.DataFrame, rtol: float = 1e-9) -> pd.DataFrame:
    """The runs of an `order_spread` whose accuracy, ACR, ACR~ or count of meetings differs between two orders.

    Averages over a permuted test set differ in the last bits (floating-point sums in another order), so
    accuracy, ACR and ACR~ count as changed beyond a relative `rtol` only.

    Parameters
    ----------
    spread : pandas.DataFrame
        An `order_spread` table.
    rtol : float, default 1e-9
        The relative tolerance.

    Returns
    -------
    pandas.DataFrame
        The rows of `spread` that changed.
    """
    def moved(lo: str, hi: str) -> pd.Series:
        return ~np.isclose(spread[lo], spread[hi], rtol=rtol, atol=0.0)
    return spread[moved("acc_min", "acc_max") | (spread.met_max > spread.met_min)
                  | moved("acr_min", "acr_max") | moved("acrp_min", "acrp_max")]


def widest_order_range(effects: pd.DataFrame, keys: Sequence[str]) -> dict[str, object]:
    """The run of a `tidy` table whose accuracy changes most with the order, with its best and worst orders.

    The status counts of each order say why they differ.

    Parameters
    ----------
    effects : pandas.DataFrame
        A `tidy` table.
    keys : sequence of str
        The columns identifying a run.

    Returns
    -------
    dict
        run (key column -> value), range_pp (the accuracy's range, percentage points), best and worst (each a dict
        of order, accuracy and the counts of kept, shrunk, abstain_inside, abstain_intersect, abstain_base).
    """
    spread = order_spread(effects, keys)
    run = spread.acc_range_pp.idxmax()
    run = run if isinstance(run, tuple) else (run,)
    g = effects[(effects[list(keys)] == pd.Series(dict(zip(keys, run)))).all(axis=1)]
    best, worst = g.loc[g.accuracy.idxmax()], g.loc[g.accuracy.idxmin()]
    statuses = [KEPT, *MET, ABSTAIN_BASE]
    return {"run": dict(zip(keys, run)), "range_pp": float(spread.acc_range_pp.max()),
            "best": {"order": int(best.order), "accuracy": float(best.accuracy), **{k: int(best[k]) for k in statuses}},
            "worst": {"order": int(worst.order), "accuracy": float(worst.accuracy),
                      **{k: int(worst[k]) for k in statuses}}}


def _pair_ratios(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray, norm: str):
    """Per certified region i, ‖c_i - c_j‖_p / (r_i + r_j) over later regions j of another class (r: outer ball)."""
    norm = check_choice(norm, "norm", NORMS)
    centers, scales = np.asarray(centers, np.float64), np.asarray(scales, np.float64)
    preds = np.asarray(preds)
    if centers.ndim != 2 or scales.shape != centers.shape or preds.shape != (len(centers),):
        raise ValueError(f"centers and scales must be (B, d) and preds (B,), got {centers.shape}, "
                         f"{scales.shape} and {preds.shape}")
    keep = preds >= 0
    c, p, r = centers[keep], preds[keep], outer_ball_radius(scales[keep])
    for i in range(len(c) - 1):
        other = np.flatnonzero(p[i + 1:] != p[i]) + i + 1
        if other.size:
            dist = np.linalg.norm(c[other] - c[i], ord=2 if norm == "l2" else 1, axis=1)
            yield dist / (r[i] + r[other])


def max_intersect_clearance(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray, norm: str) -> float:
    """The smallest ‖c_i - c_j‖_p / (r_i + r_j) over pairs of regions of different classes (ANCER Lemma 1, App. D.1).

    r is the enclosing ℓp ball's radius (the largest semi-axis; MaxIntersect). Above 1, MaxIntersect alone proves
    that no two regions of different classes meet; regions inflated by any factor below it cannot meet another
    class's region or contain its centre, whatever the order.

    Parameters
    ----------
    centers : numpy.ndarray, shape (B, d)
        The regions' centres, in the memory's order.
    preds : numpy.ndarray of int, shape (B,)
        Their predictions; ABSTAIN rows are skipped (they hold no region).
    scales : numpy.ndarray, shape (B, d)
        Their semi-axes.
    norm : str
        "l2" or "l1".

    Returns
    -------
    float
        inf when no two regions have different classes.
    """
    return min((float(r.min()) for r in _pair_ratios(centers, preds, scales, norm)), default=np.inf)


def enclosing_overlaps(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray, norm: str) -> int:
    """How many pairs of regions of different classes have overlapping enclosing ℓp balls (ANCER App. D.1).

    These pairs pass MaxIntersect and need the exact Intersect test.

    Parameters
    ----------
    centers : numpy.ndarray, shape (B, d)
        The regions' centres, in the memory's order.
    preds : numpy.ndarray of int, shape (B,)
        Their predictions; ABSTAIN rows are skipped (they hold no region).
    scales : numpy.ndarray, shape (B, d)
        Their semi-axes.
    norm : str
        "l2" or "l1".

    Returns
    -------
    int
    """
    return sum(int((r <= 1.0).sum()) for r in _pair_ratios(centers, preds, scales, norm))


def ancer_share(table: pd.DataFrame, method: str = ANCER) -> pd.Series:
    """Each stage's share (0-1) of `method`'s total time in a `runtime_table` (ANCER Table 3).

    Parameters
    ----------
    table : pandas.DataFrame
        A `runtime_table`.
    method : str, default "ancer"
        The row.

    Returns
    -------
    pandas.Series
        Indexed by the stage columns.
    """
    row = table.loc[method]
    return row.drop("total") / row["total"]


def time_rancer_stages(model: torch.nn.Module, x: torch.Tensor, sigma0: np.ndarray, settings: RancerSettings,
                       n0: int, n: int, alpha: float, num_classes: int, batch_size: int = BATCH_SIZE,
                       seed: int = 0, device: str | torch.device | None = None) -> pd.DataFrame:
    """RANCER Table 3's stages beyond Isotropic DD, timed for each input on its own (batch of one).

    The stages are the Hessian and its eigenvectors, the optimization of Σ̂ (from sigma0, Isotropic DD's σ) and
    CERTIFY with the rotated noise.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier.
    x : torch.Tensor, shape (B, *input_shape)
        The inputs.
    sigma0 : numpy.ndarray, shape (B,)
        Isotropic DD's σ of each input.
    settings : methods.rancer.RancerSettings
        RANCER's optimization settings.
    n0, n : int
        CERTIFY's selection and estimation samples.
    alpha : float
        The Clopper-Pearson level.
    num_classes : int
        The number of classes.
    batch_size : int, default `certify.BATCH_SIZE`
        Noise draws per forward batch.
    seed : int, default 0
        Seed of the optimization's noise and of CERTIFY's streams.
    device : str or torch.device, optional
        As `time_stages`'.

    Returns
    -------
    pandas.DataFrame
        Columns input, method ("rancer"), stage (`HESSIAN`, `RANCER_OPT`, `CERTIFY`), seconds, as `time_stages`.
    """
    dev = devices.place(model, device) if isinstance(model, torch.nn.Module) else None
    smooth = Smooth(model, num_classes, tuple(x.shape[1:]), GAUSSIAN, batch_size=batch_size, seed=seed,
                    device=dev or "cpu")
    gen = torch.Generator().manual_seed(seed)
    rows = []
    for k in range(len(x)):
        devices.synchronize(dev)
        t0 = time.perf_counter()
        u, w = hessian_rotation(model, x[k], dev)
        t1 = time.perf_counter()
        th = optimize_rancer(model, x[k:k + 1].to(dev), torch.from_numpy(u[None]).float(),
                             torch.tensor([float(sigma0[k])]), settings, torch.from_numpy(w[None]).float(), gen)
        devices.synchronize(dev)
        t2 = time.perf_counter()
        certify_rotated(smooth, x[k], th[0].cpu().numpy(), u, k, n0, n, alpha, seed)
        t3 = time.perf_counter()
        rows += [dict(input=k, method=RANCER, stage=HESSIAN, seconds=t1 - t0),
                 dict(input=k, method=RANCER, stage=RANCER_OPT, seconds=t2 - t1),
                 dict(input=k, method=RANCER, stage=CERTIFY, seconds=t3 - t2)]
    return pd.DataFrame(rows)
