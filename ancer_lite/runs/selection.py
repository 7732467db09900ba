"""One selection routine: hyperparameters chosen on a validation split, never on test inputs, with the optimum
inside the grid that was tried (a grid whose best value sits at an edge is widened beyond it, `widening_search`).

Isotropic DD's and ANCER's step sizes (`select_settings`) and RANCER's step size and upper clip
(`select_rancer`) are chosen here, each by its own method's validation objective.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Generator, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from ..core import devices
from ..core.certify import AUTO, resolve_draws
from ..core.noise import GAUSSIAN
from ..core.precision import EXACT, check_precision
from ..core.stages import SELECTION, timed
from ..core.validation import check_choice, check_count, check_grid, check_positive, check_probability
from ..evaluation.metrics import average_certified_radius
from ..methods import registry
from ..methods.rancer import RancerSettings, hessian_rotations, optimize_rancer, rancer_streams
from ..methods.registry import ANCER, OptimSettings
from .experiment import certify_all, check_run_args, optimize_thetas
from .parallel import drive

#: at most this many values are tried beyond a grid's edge (`widening_search`), per method. It leaves room: the
#: quick profile's ANCER grid ends at 0.1 θ, and on the MNIST columns ANCER's validation objective still rises
#: several widenings beyond it (notebook 03 prints how many each choice took). A choice still at an edge after
#: them is reported as such (`image_study.chosen_steps`).
WIDEN = 8
#: ANCER's step sizes that lose more than this share of validation accuracy (at radius 0) against the chosen Isotropic
#: DD solution are not eligible (`select_settings`). ANCER's per-input objective (App. C) ascends the radius of the
#: top class, whatever the label, so a large step can trade correct predictions for volume, and the validation mean
#: of (R~ + kappa R) 1(correct) can keep rising while accuracy collapses (without this rule, the search on notebook
#: 06's softplus MNIST CNN ran on to 61 θ, where ANCER classified half of the validation inputs correctly against
#: Isotropic DD's 97%). 0.05 is two of notebook 03's 40 validation inputs.
ACCURACY_SLACK = 0.05


def widening_search(grid: list[float], evaluate: Callable[[float], dict], score: Callable[[dict], float],
                    widen: int) -> dict[float, dict]:
    """Evaluate every value of `grid`; while the best one sits at an edge of what was tried, try the next
    value beyond that edge (continuing the grid's outermost ratio), at most `widen` more values.

    The search is `widening_steps`, its values evaluated here one after another (`parallel.drive`).

    Parameters
    ----------
    grid : list of float
        A non-empty list of finite numbers, > 0 when widen > 0 (it is continued geometrically); duplicates are
        evaluated once.
    evaluate : callable
        `evaluate(value)` -> dict, the row of one value (TypeError when not callable).
    score : callable
        `score(row)` -> float, larger is better (TypeError when not callable).
    widen : int
        The most values tried beyond the grid, an integer >= 0.

    Returns
    -------
    dict of float to dict
        Each value tried -> its `evaluate` row; the rows of values beyond the grid gain "widened": True. Keys are
        in the order tried (the grid sorted, then each widening).
    """
    steps = _widen(*_search_args(grid, widen, evaluate=evaluate, score=score))
    return drive(steps, lambda values: [evaluate(v) for v in values])


def widening_steps(grid: list[float], score: Callable[[dict], float],
                   widen: int) -> Generator[list[float], list[dict], dict[float, dict]]:
    """`widening_search` as a generator, for a caller that evaluates values elsewhere (in worker processes, beside
    other searches): it yields the values to evaluate (first the whole grid, then one value per widening), is sent
    their rows in the same order, and returns what `widening_search` returns. The arguments are checked here,
    before the first value is asked for.

    Parameters
    ----------
    grid, score, widen : as in `widening_search`

    Returns
    -------
    generator
        Yields lists of values, is sent lists of rows (dicts), returns the dict of each value tried -> its row.
    """
    return _widen(*_search_args(grid, widen, score=score))


def _search_args(grid: list[float], widen: int, **callables: Callable) -> tuple[list[float], Callable, int]:
    """A widening search's checked arguments (widen, then grid, then each callable, in that order): the grid's
    distinct values sorted, `score` and `widen`."""
    widen = check_count(widen, "widen", 0)
    grid = check_grid(grid, "grid", positive=widen > 0)
    for name, fn in callables.items():
        if not callable(fn):
            raise TypeError(f"{name} must be a callable, got {type(fn).__name__} {fn!r}")
    return sorted(set(grid)), callables["score"], widen


def _widen(values: list[float], score: Callable[[dict], float],
              widen: int) -> Generator[list[float], list[dict], dict[float, dict]]:
    """The generator of `widening_steps`, its arguments checked (`_search_args`)."""
    rows = dict(zip(values, (yield values)))
    for _ in range(widen):
        vals = sorted(rows)
        if len(vals) < 2:
            break
        best = max(vals, key=lambda v: score(rows[v]))
        if best == vals[0]:
            new = vals[0] * vals[0] / vals[1]
        elif best == vals[-1]:
            new = vals[-1] * vals[-1] / vals[-2]
        else:
            break
        (row,) = yield [new]
        rows[new] = {**row, "widened": True}
    return rows


def steps_at(settings: OptimSettings, theta0: float, theta: float) -> OptimSettings:
    """The step sizes of `settings`, chosen for `theta0`, as the same multiples of `theta`.

    The selection tries step sizes as multiples of θ0 at one σ; a run at another σ takes the same multiples of its
    own θ, so every optimization moves its σ by the same relative amounts (the radius's gradient in σ does not scale
    with σ, so one absolute step would be a 4× larger relative step at σ = 0.25 than at 1).

    Parameters
    ----------
    settings : OptimSettings
        Step sizes absolute for `theta0` (the `step` field of every registered method's settings).
    theta0, theta : float
        The θ the steps were chosen for and the θ of the run, finite and > 0.

    Returns
    -------
    OptimSettings
        `settings` with each method's step multiplied by theta / theta0 (`settings` itself where they are equal).
    """
    ratio = check_positive(theta, "theta") / check_positive(theta0, "theta0")
    if ratio == 1:
        return settings
    for m in map(registry.method, registry.names()):
        if m.step is not None:
            settings = settings.changed(m.name, **{m.step: getattr(settings.of(m.name), m.step) * ratio})
    return settings


@timed(SELECTION)
def select_settings(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, noise: str, theta0: float,
                    grids: Mapping[str, Sequence[float]], base: OptimSettings, n0: int, n: int,
                    alpha: float, num_classes: int, seed: int = 0, widen: int = WIDEN,
                    device: str | torch.device | None = None, *, precision: str = EXACT,
                    draws: str = AUTO, elsewhere: Sequence[tuple[torch.nn.Module, float]] = ()
                    ) -> tuple[OptimSettings, pd.DataFrame]:
    """Choose the step sizes on a validation split: each method of `grids` (in the registry's order) tries the
    multiples of theta0 its grid lists for its `SmoothingMethod.step` field, by its own objective
    (`SmoothingMethod.objective`), started from its start method's chosen solution. Isotropic DD
    maximizes the l_p radius, so its learning rate (a multiple of theta0) is the one with the largest
    validation ACR. ANCER maximizes App. C's relaxed objective R~ + kappa R, so its learning rate (a
    multiple of theta0, started from the chosen Isotropic DD solution) is the one with the largest
    validation mean of (R~ + kappa R) 1(correct) = ACR~ + kappa ACR, among the eligible ones: those whose
    validation accuracy is at least Isotropic DD's minus `ACCURACY_SLACK` (column `eligible`). When the best
    value sits at an edge of its grid, the grid is widened beyond that edge (up to `widen` values per method;
    an ineligible value beyond the best one ends the widening). The chosen steps are reused at other noise levels
    as the same multiples of their θ; `elsewhere` lists them, (model, θ) for each, and a step is then eligible only
    when, at each of them too, ANCER keeps its validation accuracy within `ACCURACY_SLACK` of its start method's
    (with the start's chosen step): the candidates are checked there from the best objective down, and the first
    that passes is chosen (column `elsewhere`: the smallest accuracy difference found there; NaN when not checked).
    When no value is eligible, the smallest tried is kept.

    Every argument below is checked before any work.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier (logits) at theta0.
    x : torch.Tensor, shape (N, *input_shape)
        The validation inputs.
    y : torch.Tensor, shape (N,)
        Their integer labels.
    noise, theta0, seed : as in `optimize_thetas`
        A noise family; finite, > 0; an integer >= 0.
    grids : mapping of str to sequence of float
        Registered, unrotated methods with a `step` -> non-empty lists of finite numbers > 0 (multiples of
        theta0); a method's start must be tuned too (the profiles tune Isotropic DD and ANCER).
    base : OptimSettings
        The settings whose step sizes are chosen (everything else, e.g. ANCER's κ, is kept).
    n0, n : int
        CERTIFY's selection and estimation draws on the validation split, integers >= 1.
    alpha : float
        CERTIFY's failure probability, in (0, 1).
    num_classes : int
        An integer >= 2.
    widen : int, optional
        The most values tried beyond each method's grid (`widening_search`), an integer >= 0.
    device : str or torch.device, optional
        Where the model runs (the optimizations and CERTIFY; `devices.resolve`: "auto", "cpu" or a CUDA device;
        None: where the model is); the model, and those of `elsewhere`, are moved there.
    precision : str, optional
        The forward passes' arithmetic of the optimizations and CERTIFY (`precision.PRECISIONS`).
    draws : str, optional
        Where their noise is drawn ("auto", "cpu" or "device").
    elsewhere : sequence of (torch.nn.Module, float), optional
        (model, θ) at each other noise level the chosen steps are reused at, θ finite and > 0 (TypeError when not
        a pair); empty: no such check.

    Returns
    -------
    OptimSettings
        `base` with the chosen steps (absolute learning rates, for theta0).
    pandas.DataFrame
        The table of scores: one row per (method, relative step) tried, methods in the registry's order and steps
        ascending, with columns method, lr_relative, acr, acr_proxy, accuracy, objective, eligible, widened,
        elsewhere and chosen (exactly one True per method).
    """
    check_run_args(noise, theta0, base, seed, "base")
    check_precision(precision)
    grids = check_step_grids(grids)
    check_count(widen, "widen", 0)
    check_count(n0, "n0")
    check_count(n, "n")
    check_probability(alpha, "alpha")
    check_count(num_classes, "num_classes", 2)
    elsewhere = list(elsewhere)
    for k, pair in enumerate(elsewhere):
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], torch.nn.Module)):
            raise TypeError(f"elsewhere[{k}] must be a (model, theta0) pair, got {type(pair).__name__} {pair!r}")
        check_positive(pair[1], f"elsewhere[{k}]'s theta0")
    dev = devices.place(model, device)
    for other, _ in elsewhere:
        devices.place(other, dev)
    numerics = dict(precision=precision, draws=resolve_draws(draws, dev))
    tuned = [registry.method(m) for m in grids]
    chosen, thetas, accuracy, rows = base, {}, {}, []
    starts: dict[tuple[int, str], tuple[np.ndarray, float]] = {}

    def reused_gap(method, settings: OptimSettings, rel: float, other: torch.nn.Module, theta: float) -> float:
        """`method`'s validation accuracy minus its start method's, both at `theta` with `other`, the start with
        its chosen step and `method` with `rel` x theta (as `select_settings` reuses them there)."""
        s = steps_at(settings, theta0, theta).changed(method.name, **{method.step: rel * theta})
        key = (id(other), method.start)
        if key not in starts:
            start = optimize_thetas(other, x, noise, theta, method.start, s, seed, device=dev, **numerics)
            res = certify_all(other, x, y, start, noise, n0, n, alpha, num_classes, seed, device=dev, **numerics)
            starts[key] = start, float(res.correct.mean())
        start, start_accuracy = starts[key]
        th = optimize_thetas(other, x, noise, theta, method.name, s, seed, isotropic=start, device=dev, **numerics)
        res = certify_all(other, x, y, th, noise, n0, n, alpha, num_classes, seed, device=dev, **numerics)
        return float(res.correct.mean()) - start_accuracy

    for method in tuned:
        floor = accuracy[method.start] - ACCURACY_SLACK if method.start in accuracy else -np.inf
        tried = {}

        def evaluate(rel: float, method=method, settings=chosen) -> dict:
            s = settings.changed(method.name, **{method.step: rel * theta0})
            th = tried[rel] = optimize_thetas(model, x, noise, theta0, method.name, s, seed,
                                              isotropic=thetas.get(method.start), device=dev, **numerics)
            res = certify_all(model, x, y, th, noise, n0, n, alpha, num_classes, seed, device=dev, **numerics)
            acr = average_certified_radius(res.radius, res.correct)
            acr_proxy = average_certified_radius(res.radius_proxy, res.correct)
            return dict(method=method.name, lr_relative=rel, acr=acr, acr_proxy=acr_proxy,
                        accuracy=float(res.correct.mean()), objective=method.objective(acr, acr_proxy, base),
                        eligible=True, widened=False)

        def score(row: dict, floor=floor) -> float:
            return row["objective"] if row["accuracy"] >= floor else -np.inf

        found = widening_search(list(grids[method.name]), evaluate, score, widen)
        for v in found:
            found[v].update(eligible=bool(found[v]["accuracy"] >= floor), elsewhere=np.nan)
        ranked = sorted((v for v in found if found[v]["eligible"]), key=lambda v: -found[v]["objective"])
        if method.start is not None and elsewhere:
            for v in ranked:
                found[v]["elsewhere"] = min(reused_gap(method, chosen, v, m, t) for m, t in elsewhere)
                if found[v]["elsewhere"] >= -ACCURACY_SLACK:
                    break
                found[v]["eligible"] = False
        eligible = [v for v in ranked if found[v]["eligible"]]
        best = eligible[0] if eligible else min(found)
        for v in sorted(found):
            rows.append((found[v], v == best))
        chosen = chosen.changed(method.name, **{method.step: best * theta0})
        thetas[method.name], accuracy[method.name] = tried[best], found[best]["accuracy"]
    table = pd.DataFrame([row for row, _ in rows])
    table["chosen"] = [flag for _, flag in rows]
    return chosen, table


def check_step_grids(grids: object, name: str = "grids") -> dict[str, list[float]]:
    """The step grids of a selection, checked: a mapping from the names of registered, unrotated methods that
    declare a `step` to non-empty lists of finite numbers > 0 (multiples of θ0), in which every method's start
    method is tuned too (its chosen solution is where the method starts).

    Parameters
    ----------
    grids : mapping of str to sequence of float
        The relative step sizes to try, by method name.
    name : str
        The argument's name in error messages.

    Returns
    -------
    dict of str to list of float
        The grids, in the registry's order.
    """
    if not isinstance(grids, Mapping) or not grids:
        raise TypeError(f"{name} must be a non-empty mapping from method names to step grids, got "
                        f"{type(grids).__name__} {grids!r}")
    tunable = tuple(m for m in registry.names(rotated=False) if registry.method(m).step is not None)
    for method in grids:
        check_choice(method, f"{name}' method", tunable)
        start = registry.method(method).start
        if start is not None and start not in grids:
            raise ValueError(f"{name} must tune {method!r}'s start method {start!r} too (its chosen solution is "
                             f"where {method!r} starts), got methods {list(grids)}")
    return {m: check_grid(grids[m], f"{name}[{m!r}]") for m in tunable if m in grids}


#: the columns of `select_settings`' table that `check_selection_table` reads
TABLE_COLUMNS = ("method", "lr_relative", "acr", "acr_proxy", "accuracy", "objective", "eligible", "elsewhere",
                 "chosen")


def refused_step(table: pd.DataFrame, method: str = ANCER, slack: float = ACCURACY_SLACK) -> pd.Series | None:
    """The smallest step of `method` larger than its chosen one that the eligibility rule refused at the selection
    σ: its validation accuracy more than `slack` below its start method's chosen step (`select_settings`).

    Parameters
    ----------
    table : pandas.DataFrame
        One selection's rows (`select_settings`' table, columns method, lr_relative, accuracy, chosen), or a
        study's rows of one column and norm.
    method : str, default "ancer"
        A registered method with a start method (`registry.SmoothingMethod.start`).
    slack : float, default `ACCURACY_SLACK`
        The rule's slack, a share of accuracy.

    Returns
    -------
    pandas.Series or None
        The refused step's row, None when no larger step was refused.
    """
    m = registry.method(method)
    if m.start is None:
        raise ValueError(f"method {method!r} starts from no other method, so no step of it is refused")
    rows, start = table[table.method == m.name], table[table.method == m.start]
    if not rows.chosen.any() or not start.chosen.any():
        raise ValueError(f"table has no chosen row of {m.name!r} and of {m.start!r}: methods {sorted(set(table.method))}")
    pick = float(rows[rows.chosen].lr_relative.iloc[0])
    floor = float(start[start.chosen].accuracy.iloc[0]) - slack
    refused = rows[(rows.accuracy < floor) & (rows.lr_relative > pick)]
    return refused.sort_values("lr_relative").iloc[0] if len(refused) else None


def _widening(grid: np.ndarray, count: int) -> tuple[list[float], list[float]]:
    """The first `count` values `widening_search` tries below and above `grid` (sorted, distinct): its outermost
    ratio continued, value by value as the search computes them."""
    below, above = [], []
    if len(grid) >= 2:
        lo, hi = [grid[1], grid[0]], [grid[-2], grid[-1]]
        for _ in range(count):
            lo.append(lo[-1] * lo[-1] / lo[-2])
            hi.append(hi[-1] * hi[-1] / hi[-2])
        below, above = lo[2:], hi[2:]
    return below, above


def _check_tried(rows: pd.DataFrame, grid: list[float], name: str, source: str) -> None:
    """The step sizes of one method's rows (`lr_relative`) are those `widening_search` tries on `grid`: each grid
    value once, and beyond its edges (rows marked widened) the grid's outermost ratio continued, without a gap."""
    tried = rows.lr_relative.to_numpy(np.float64)
    widened = rows.widened.to_numpy(bool) if "widened" in rows.columns else np.zeros(len(rows), bool)
    grid_values = np.asarray(sorted({float(v) for v in grid}), np.float64)
    below, above = _widening(grid_values, len(rows))
    beyond = np.asarray(below + above, np.float64)

    def among(value: float, values: np.ndarray) -> bool:
        return bool(np.isclose(values, value, rtol=1e-9, atol=0).any())

    for k in range(len(rows)):
        allowed = beyond if widened[k] else grid_values
        if not among(tried[k], allowed):
            what = "the widening of its grid" if widened[k] else "its grid"
            raise ValueError(f"{source}: row {int(rows.index[k])} (method {name}) holds lr_relative "
                             f"{float(tried[k])!r}, which is not a step size of {what} {list(grid_values)} (an edited "
                             "row?); delete the file to choose again")
    values = np.sort(tried)
    lo, hi = values[values < grid_values[0]][::-1], values[values > grid_values[-1]]
    contiguous = all(np.allclose(side, np.asarray(expected[:len(side)]), rtol=1e-9, atol=0)
                     for side, expected in ((lo, below), (hi, above)))
    missing = [float(v) for v in grid_values if not among(v, values)]
    if missing or len(np.unique(values)) != len(values) or not contiguous:
        raise ValueError(f"{source}: method {name}'s column lr_relative must hold each step size of its grid "
                         f"{list(grid_values)} once and the widening beyond it without a gap, got "
                         f"{[float(v) for v in values]}; delete the file to choose again")


def check_selection_table(table: pd.DataFrame, settings: OptimSettings, source: str,
                          grids: Mapping[str, Sequence[float]] | None = None) -> pd.DataFrame:
    """Check that a step-size table read back (`select_settings`' table, kept by `image_study.choose_norm`) says what
    its rule decides: for each method, its objective is the method's validation objective of its ACR and ACR~
    (`SmoothingMethod.objective`), a row is eligible exactly when its accuracy is within `ACCURACY_SLACK` of the
    start method's chosen row and its `elsewhere` difference (when checked) is too, and exactly one row is chosen, an
    eligible one with the largest objective. A torn or edited table fails here instead of choosing a step size nobody
    chose.

    Parameters
    ----------
    table : pandas.DataFrame
        The table as read, one row per (method, step size) tried.
    settings : OptimSettings
        The settings the objectives were computed with (ANCER's κ).
    source : str
        The table's file, named in the errors.
    grids : mapping of str to sequence of float, optional
        Each method's grid of step sizes (relative to θ0) the table was searched over (`check_step_grids`): every
        method of it must have rows, whose `lr_relative` are the grid's values and its widening (`widening_search`).

    Returns
    -------
    pandas.DataFrame
        `table`, unchanged.

    Raises
    ------
    ValueError
        Naming `source`, the method and what disagrees.
    """
    if not isinstance(settings, OptimSettings):
        raise TypeError(f"settings must be an OptimSettings, got {type(settings).__name__} {settings!r}")
    grids = None if grids is None else check_step_grids(grids)
    missing = [c for c in TABLE_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{source}: not a step-size table, missing columns {missing}; delete it to choose again")
    for col in ("eligible", "chosen"):
        if table[col].dtype != bool:
            raise ValueError(f"{source}: column {col!r} must hold True/False, got {table[col].dtype} values "
                             f"{sorted(map(str, table[col].unique()))[:4]}; delete the file to choose again")
    numbers = table[["lr_relative", "acr", "acr_proxy", "accuracy", "objective"]]
    if not all(np.issubdtype(t, np.number) for t in numbers.dtypes) or not np.isfinite(numbers.to_numpy()).all():
        raise ValueError(f"{source}: its numbers must be finite, got a torn or edited row; delete it to choose again")
    known = list(registry.names(rotated=False))
    unknown = [str(m) for m in table.method.unique() if str(m) not in known]
    if unknown:
        raise ValueError(f"{source}: column 'method' holds {unknown}, expected methods among {known}; delete the file "
                         "to choose again")
    wanted = list(grids or ()) + [m for m in map(str, table.method.unique()) if m not in (grids or ())]
    for name in wanted:
        start = registry.method(name).start
        for needed in (name, start):
            if needed is not None and not (table.method == needed).any():
                raise ValueError(f"{source}: no rows of method {needed!r} (expected the rows of every method chosen: "
                                 f"{sorted(set(wanted) | {start} - {None})}); delete the file to choose again")
    accuracy = {}
    for name in [m for m in known if m in set(map(str, table.method))]:
        rows, method = table[table.method == name], registry.method(str(name))
        if grids is not None and name in grids:
            _check_tried(rows, list(grids[name]), name, source)
        objective = [method.objective(a, p, settings) for a, p in zip(rows.acr, rows.acr_proxy)]
        if not np.allclose(rows.objective, objective, rtol=1e-9, atol=1e-12):
            raise ValueError(f"{source}: method {name}'s objective is not its validation objective of the acr and "
                             f"acr_proxy beside it (an edited row?); delete the file to choose again")
        floor = accuracy[method.start] - ACCURACY_SLACK if method.start in accuracy else -np.inf
        elsewhere = pd.to_numeric(rows.elsewhere, errors="coerce")
        if not (rows.eligible == ((rows.accuracy >= floor) & ~(elsewhere < -ACCURACY_SLACK))).all():
            raise ValueError(f"{source}: method {name}'s eligible column disagrees with its accuracies (the floor is "
                             f"{floor:.4g}, and {-ACCURACY_SLACK:g} at the other noise levels); delete the file to "
                             "choose again")
        chosen = rows[rows.chosen]
        best = rows[rows.eligible].objective.max() if rows.eligible.any() else None  # None: nothing eligible
        if len(chosen) != 1 or (best is not None and (not bool(chosen.eligible.iloc[0])
                                                      or chosen.objective.iloc[0] != best)):
            raise ValueError(f"{source}: method {name} must have one chosen row, an eligible one with the largest "
                             f"objective ({best}), got {len(chosen)} chosen with objective "
                             f"{list(chosen.objective)}; delete the file to choose again")
        accuracy[name] = float(chosen.accuracy.iloc[0])
    return table


@timed(SELECTION)
def select_rancer(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, sigma0: np.ndarray, theta0: float,
                  lrs: list[float], gamma2s: list[float], base: RancerSettings, n0: int, n: int, alpha: float,
                  num_classes: int, seed: int = 0, kappa: float = 2.0,
                  widen: int = WIDEN, device: str | torch.device | None = None, *, precision: str = EXACT,
                  draws: str = AUTO) -> tuple[RancerSettings, pd.DataFrame]:
    """Choose RANCER's step size (a multiple of theta0) and then, with it, its upper clip γ2 on a
    validation split (each grid widened at its edges as in `select_settings`), by the validation
    mean of (R~ + kappa R) 1(correct) (ANCER's selection objective). sigma0: Isotropic DD's σ of the
    validation inputs. The Hessian rotations are computed once.

    No run is repeated: a setting tried twice (the step-size search's γ2 is also a point of the γ2 search)
    is evaluated once, and a γ2 above one whose upper clip never changed a scale at the same step size gets
    that run's results, which it would reproduce number for number (`optimize_rancer`'s
    `report_upper_clip`). The table says which rows were computed and whether the upper clip was reached.
    device: where the Hessians, the ascent and CERTIFY run (`devices.resolve`: "auto", "cpu" or a CUDA device;
    None: where the model is), the model is moved there; precision, draws: as `select_settings`' (the ascent's and
    CERTIFY's).

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier (logits), with Gaussian noise (RANCER is l2 only).
    x : torch.Tensor, shape (N, *input_shape)
        The validation inputs.
    y : torch.Tensor, shape (N,)
        Their integer labels.
    sigma0 : numpy.ndarray, shape (N,)
        Isotropic DD's σ of the validation inputs: the clip centres.
    theta0 : float
        The training σ, which the step sizes are multiples of.
    lrs : list of float
        Step sizes relative to theta0 (finite, > 0), tried with base's γ2.
    gamma2s : list of float
        Upper clips γ2 (finite, >= 0; > 0 when widen > 0), tried with the chosen step size.
    base : RancerSettings
        Every other setting (iterations, samples, γ1, init).
    n0, n, alpha, num_classes, seed : as in `select_settings`
    kappa : float, optional
        κ of the objective ACR~ + κ ACR.
    widen : int, optional
        As in `widening_search`, per search.
    device, precision, draws : see above

    Returns
    -------
    RancerSettings
        `base` with the chosen lr (absolute, for theta0) and gamma2.
    pandas.DataFrame
        One row per setting of each search ("lr" rows first, then "gamma2", values ascending), with columns search,
        lr_relative, gamma1, gamma2, acr, acr_proxy, accuracy, objective, upper_clip_reached, computed, widened
        and chosen (True on the chosen γ2's row of the γ2 search).
    """
    check_precision(precision)
    dev = devices.place(model, device)
    draws = resolve_draws(draws, dev)
    rotations, eigen = hessian_rotations(model, x, dev)
    eigen = torch.from_numpy(eigen).float()
    runs: dict[RancerSettings, dict] = {}

    def run(settings: RancerSettings) -> dict:
        xd = x.to(dev)
        th, clipped = optimize_rancer(model, xd, torch.from_numpy(rotations).float(),
                                      torch.as_tensor(sigma0).float(), settings, eigen,
                                      rancer_streams(xd, seed, list(range(len(x))), draws), report_upper_clip=True,
                                      precision=precision)
        res = certify_all(model, x, y, th.cpu().numpy(), GAUSSIAN, n0, n, alpha, num_classes, seed, device=dev,
                          rotations=rotations, precision=precision, draws=draws)
        acr = average_certified_radius(res.radius, res.correct)
        acr_proxy = average_certified_radius(res.radius_proxy, res.correct)
        correct = res.correct.to_numpy()
        return dict(acr=acr, acr_proxy=acr_proxy, accuracy=float(correct.mean()), objective=acr_proxy + kappa * acr,
                    upper_clip_reached=clipped, computed=True)

    def evaluate(settings: RancerSettings) -> dict:
        if settings in runs:
            row = {**runs[settings], "computed": False}
        else:
            same = [r for s, r in runs.items() if replace(s, gamma2=settings.gamma2) == settings
                    and s.gamma2 < settings.gamma2 and not r["upper_clip_reached"]]
            row = {**same[0], "computed": False} if same else run(settings)
            runs[settings] = row
        return dict(lr_relative=settings.lr / theta0, gamma1=settings.gamma1, gamma2=settings.gamma2, **row,
                    widened=False)

    lr_rows = widening_search(list(lrs), lambda r: evaluate(replace(base, lr=r * theta0)),
                              lambda r: r["objective"], widen)
    lr = max(lr_rows, key=lambda v: lr_rows[v]["objective"]) * theta0
    g_rows = widening_search(list(gamma2s), lambda g: evaluate(replace(base, lr=lr, gamma2=g)),
                             lambda r: r["objective"], widen)
    gamma2 = max(g_rows, key=lambda g: g_rows[g]["objective"])
    table = pd.DataFrame([{"search": "lr", **lr_rows[v]} for v in sorted(lr_rows)]
                         + [{"search": "gamma2", **g_rows[g]} for g in sorted(g_rows)])
    table["chosen"] = (table.search == "gamma2") & (table.gamma2 == gamma2)
    return replace(base, lr=lr, gamma2=gamma2), table
