"""Notebook 04's words: the formatting helpers and the Markdown findings that notebook 04 (runtime, memory growth
and test order; ANCER §6 and §7.3, Table 3) shows, each written from the computed tables.

Every function returns a string built from its inputs (timings, fits, order spreads), so the numbers in the text
are those of the run and a wording that depends on a number ("close to linear", "rises", "contradicts") is chosen
by that number.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from ..core.memory import SHRINK, WORST_CASE
from ..methods.registry import ANCER
from ..report import style
from ..runs.setups import theta_of
from . import runtime
from .image_study import METHOD_NAMES, selection_sigma

#: what the notebook calls the memory's two policies
POLICY_NAMES = {SHRINK: "shrink (ours)", WORST_CASE: "abstain (paper's worst case)"}
#: the row label of the MNIST CNN timed at the paper's budget (ANCER Table 3's setting)
PAPER_BUDGET_ROW = "mnist (paper budget)"
#: R² at or above which a fit reads "close to linear"
LINEAR_R2 = 0.95
#: a per-entry step time whose largest and smallest memory differ by less than this factor reads "flat"
FLAT_FACTOR = 1.5
#: an accuracy range over test orders (percentage points) at or above which the order effect is not negligible
NEGLIGIBLE_PP = 1.0


def parameters(model: torch.nn.Module) -> int:
    """The number of parameters of `model`.

    Parameters
    ----------
    model : torch.nn.Module
        The model.

    Returns
    -------
    int
        The sum of its parameters' element counts.
    """
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    return int(sum(p.numel() for p in model.parameters()))


def column_title(name: str) -> str:
    """A column's name as figures and prose show it ("8×8 digits (MLP)"); other labels unchanged.

    Parameters
    ----------
    name : str
        A key of `style.STAND_INS` or any other label.

    Returns
    -------
    str
        The stand-in's title, or `name`.
    """
    return style.STAND_INS[name][0] if name in style.STAND_INS else str(name)


def num(x: float, digits: int = 2) -> str:
    """`x` with `digits` significant digits, never in scientific notation (thousands separated).

    Parameters
    ----------
    x : float
        The number (0, inf and NaN are written as "%g" writes them).
    digits : int, default 2
        Significant digits, >= 1.

    Returns
    -------
    str
        E.g. num(0.012345) == "0.012", num(12345.6, 3) == "12,346".
    """
    if not isinstance(digits, (int, np.integer)) or digits < 1:
        raise ValueError(f"digits must be an integer >= 1, got {digits!r}")
    x = float(x)
    if x == 0 or not np.isfinite(x):
        return f"{x:g}"
    return f"{x:,.{max(0, digits - 1 - int(np.floor(np.log10(abs(x)))))}f}"


def bound(x: float, decimals: int, side: str) -> str:
    """`x` rounded outward for a bound, so that the words stay true: down for "≥ …" (side "lower"), up for
    "at most …" (side "upper"); R² 0.9685 is "≥ 0.968", a share of 0.15% "at most 0.2%".

    Parameters
    ----------
    x : float
        The bound's value.
    decimals : int
        Decimal places written, >= 0.
    side : {"lower", "upper"}
        Which side `x` bounds.

    Returns
    -------
    str
    """
    if side not in ("lower", "upper"):
        raise ValueError(f"side must be 'lower' or 'upper', got {side!r}")
    if not isinstance(decimals, (int, np.integer)) or decimals < 0:
        raise ValueError(f"decimals must be an integer >= 0, got {decimals!r}")
    scaled = float(x) * 10 ** decimals
    # a value that is already a whole number of units (up to float rounding) stays as it is
    near = round(scaled)
    out = near if abs(scaled - near) < 1e-9 * max(1.0, abs(scaled)) else (
        np.floor(scaled) if side == "lower" else np.ceil(scaled))
    return f"{out / 10 ** decimals:.{decimals}f}"


def duration(seconds: float) -> str:
    """A duration with three significant digits, in ms below one second and in s above.

    Parameters
    ----------
    seconds : float
        The duration, >= 0.

    Returns
    -------
    str
        E.g. "14.9 ms", "1.23 s".
    """
    if not (np.isfinite(seconds) and seconds >= 0):
        raise ValueError(f"seconds must be a finite number >= 0, got {seconds!r}")
    return f"{num(1e3 * seconds, 3)} ms" if seconds < 1 else f"{num(seconds, 3)} s"


def fits_with_readings(frame: pd.DataFrame, by: str | Sequence[str], x: str, y: str) -> pd.DataFrame:
    """`runtime.fits_by` with a `reading` column: what each intercept says about a fixed cost
    (`runtime.intercept_reading`: "positive", "zero" or "negative").

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
        `runtime.fits_by`'s table plus `reading`.
    """
    fits = runtime.fits_by(frame, by, x, y)
    fits["reading"] = [runtime.intercept_reading(f) for _, f in fits.iterrows()]
    return fits


def intercepts(fits: pd.DataFrame, names: Sequence[str]) -> str:
    """The fitted intercepts of `names` with their two-standard-error half widths, in ms.

    Parameters
    ----------
    fits : pandas.DataFrame
        A `runtime.fits_by` table indexed by column name (seconds).
    names : sequence of str
        The rows to write, in order.

    Returns
    -------
    str
        E.g. "8×8 digits (MLP): 2.5 ± 3 ms, MNIST-5k (CNN): 5.0 ± 9 ms".
    """
    missing = [n for n in names if n not in fits.index]
    if missing:
        raise ValueError(f"names must be rows of fits, got {missing} not in {list(fits.index)}")
    return ", ".join(f"{column_title(c)}: {num(1e3 * fits.loc[c, 'intercept'])} ± "
                     f"{num(2e3 * fits.loc[c, 'intercept_se'], 1)} ms" for c in names)


def linear_words(r2_min: float, close: str = "close to linear", rough: str = "only roughly linear") -> str:
    """`close` when the smallest R² reaches `LINEAR_R2`, else `rough`.

    Parameters
    ----------
    r2_min : float
        The smallest R² of the fits described.
    close, rough : str
        The two wordings.

    Returns
    -------
    str
        One of them.
    """
    if not np.isfinite(r2_min):
        raise ValueError(f"r2_min must be finite, got {r2_min!r}")
    return close if r2_min >= LINEAR_R2 else rough


# ---- Table 3 -------------------------------------------------------------------------------------------------

def budget_table(cols: Mapping[str, object], norms: Sequence[str]) -> pd.DataFrame:
    """Per column of notebook 03, its optimization budget, CERTIFY's N and the selection σ of each norm.

    Parameters
    ----------
    cols : mapping of str to image_study.Column
        The columns (anything with a `setup` ImageSetup).
    norms : sequence of str
        The norms.

    Returns
    -------
    pandas.DataFrame
        Indexed by column: iterations, samples, n and one column "sigma <norm>" per norm.
    """
    if not cols:
        raise ValueError("cols must hold at least one column, got none")
    rows = {}
    for name, col in cols.items():
        s = col.setup
        rows[name] = {"iterations": int(s.iterations), "samples": int(s.samples), "n": int(s.n),
                      **{f"sigma {n}": float(selection_sigma(s, n)) for n in norms}}
    return pd.DataFrame(rows).T.rename_axis("column")


def budget_text(budgets: pd.DataFrame, paper: Mapping[str, int], paper_inputs: int,
                paper_column: str | None = "mnist") -> str:
    """The sentence that states the timed settings: selection σ, each column's budget and the paper's.

    Parameters
    ----------
    budgets : pandas.DataFrame
        A `budget_table`.
    paper : mapping
        The paper's budget, with iterations, samples and n (`runtime.PAPER_BUDGET`).
    paper_inputs : int
        Inputs timed at the paper's budget.
    paper_column : str or None, default "mnist"
        The column also timed at the paper's budget (None: none is).

    Returns
    -------
    str
        Markdown.
    """
    sig = [c for c in budgets.columns if c.startswith("sigma ")]
    if not sig:
        raise ValueError(f"budgets must hold 'sigma <norm>' columns, got {list(budgets.columns)}")
    text = "Selection σ: " + ", ".join(
        f"{style.norm_symbol(c.split()[1], tex=False)}: σ = " + " / ".join(f"{v:g}" for v in sorted(set(budgets[c])))
        for c in sig)
    text += (". Budgets (optimization steps × noise samples per step, CERTIFY's N): " + "; ".join(
        f"**{column_title(name)}**: {int(r.iterations)} steps × {int(r.samples)} samples, N = {int(r.n):,}"
        for name, r in budgets.iterrows())
        + f"; the paper's: {paper['iterations']} × {paper['samples']}, N = {paper['n']:,}.")
    if paper_column is not None and paper_column in budgets.index:
        text += (f" The last rows time the {column_title(paper_column)} at the paper's budget on {paper_inputs} "
                 "inputs, the setting whose ratios compare with the paper's.")
    return text


def paper_ratios(table: pd.DataFrame) -> pd.DataFrame:
    """ANCER Table 3's ratios (`runtime.ratios`) per row of the paper's table.

    Parameters
    ----------
    table : pandas.DataFrame
        `runs.paper.load_table("ancer_table3")`: columns row_label, architecture, method, value.

    Returns
    -------
    pandas.DataFrame
        Indexed by "<row_label> <architecture>" ("(a) ResNet18"), columns "ANCER / Fixed σ", "ANCER / Iso DD",
        "Iso DD / Fixed σ", plus dataset and certificates (the paper's norm, where given).
    """
    missing = {"row_label", "architecture", "method", "value", "dataset"} - set(table.columns)
    if missing:
        raise ValueError(f"table lacks the columns {sorted(missing)}; expected the paper's Table 3")
    t = table.assign(row=table.row_label + " " + table.architecture)
    wide = t.pivot_table(index="row", columns="method", values="value")
    out = pd.DataFrame({row: runtime.ratios(wide.loc[[row]].T.rename(columns={row: "total"}))
                        for row in wide.index}).T
    first = t.drop_duplicates("row").set_index("row")
    out["dataset"] = first.dataset.reindex(out.index)
    certs = first.certificates if "certificates" in first else pd.Series(np.nan, index=first.index)
    out["norm"] = [c.split(";")[0] if isinstance(c, str) and c else None for c in certs.reindex(out.index)]
    return out


# ---- CERTIFY against N ----------------------------------------------------------------------------------------

def certify_fit_text(fits: pd.DataFrame, per_n: pd.DataFrame) -> str:
    """What the straight-line fits of CERTIFY's time against N say: linearity, the cost per sample, the
    intercepts (a fixed cost, none resolved, or a fit artefact) and the bound the smallest run sets.

    Parameters
    ----------
    fits : pandas.DataFrame
        `fits_with_readings(timings, "column", "n", "seconds")`, indexed by column.
    per_n : pandas.DataFrame
        `runtime.per_sample_cost` of the same timings (columns column, n, per_sample).

    Returns
    -------
    str
        Markdown.
    """
    if "reading" not in fits:
        raise ValueError("fits must carry a 'reading' column (fits_with_readings)")
    cols = list(fits.index)
    slopes = ", ".join(f"{num(1e6 * fits.loc[c, 'slope'])} µs ({column_title(c)})" for c in cols)
    readings = {r: [c for c in cols if fits.loc[c, "reading"] == r] for r in ("positive", "zero", "negative")}
    rising = [c for c in readings["negative"]
              if per_n[per_n.column == c].per_sample.iloc[-1] > per_n[per_n.column == c].per_sample.iloc[0]]
    text = [f"CERTIFY's time is {linear_words(fits.r2.min())} in N (R² ≥ {bound(fits.r2.min(), 3, 'lower')} for "
            "every model), "
            f"at a cost per noise sample of {slopes}."]
    if readings["positive"]:
        text.append(f"A fixed cost shows where the intercept is more than two standard errors above zero "
                    f"({intercepts(fits, readings['positive'])}).")
    if readings["zero"]:
        text.append(f"Where it is within two standard errors of zero ({intercepts(fits, readings['zero'])}) the fit "
                    f"resolves no fixed cost.")
    if readings["negative"]:
        why = (" The time per sample rises with N for " + ", ".join(column_title(c) for c in rising)
               + " (right panel): the time grows a little faster than linearly, so the line through the large-N "
                 "points undershoots at N = 0." if rising else " It lies beyond the noise of the fit, which a "
               "line through timings on a shared machine does not rule out.")
        text.append(f"A negative intercept ({intercepts(fits, readings['negative'])}) is no cost: it is an artefact "
                    f"of fitting a straight line.{why}")
    text.append(f"Whatever the fit says, a fixed cost cannot exceed the time of the smallest run, "
                f"N = {int(fits.x_min.min()):,}: "
                + ", ".join(f"{duration(fits.loc[c, 'y_at_x_min'])} ({column_title(c)})" for c in cols) + ".")
    return " ".join(text)


# ---- one memory step against |M| -------------------------------------------------------------------------------

def per_entry_trend(steps: pd.DataFrame) -> pd.DataFrame:
    """How the time of one memory step per entry and pixel moves from the smallest to the largest memory.

    Parameters
    ----------
    steps : pandas.DataFrame
        `runtime.memory_step_grid` rows: norm, dim, size, seconds.

    Returns
    -------
    pandas.DataFrame
        Indexed by (norm, dim): size_lo, size_hi, ns_lo, ns_hi (ns per entry and pixel at the smallest and the
        largest |M|) and ratio (ns_hi / ns_lo).
    """
    missing = {"norm", "dim", "size", "seconds"} - set(steps.columns)
    if missing:
        raise ValueError(f"steps lacks the columns {sorted(missing)}")
    rows = {}
    for key, g in steps.groupby(["norm", "dim"], sort=False):
        lo, hi = g.loc[g["size"].idxmin()], g.loc[g["size"].idxmax()]
        ns = {w: 1e9 * float(r.seconds) / (float(r["size"]) * float(key[1])) for w, r in (("lo", lo), ("hi", hi))}
        rows[key] = dict(size_lo=int(lo["size"]), size_hi=int(hi["size"]), ns_lo=ns["lo"], ns_hi=ns["hi"],
                         ratio=ns["hi"] / ns["lo"])
    out = pd.DataFrame(rows).T
    out.index.names = ["norm", "dim"]
    return out


def trend_words(trend: pd.DataFrame, flat: float = FLAT_FACTOR) -> str:
    """The per-entry trend of `per_entry_trend` in words: "flat within ×R" when every series moves by less than
    `flat`, otherwise the largest rise and the largest fall beyond it, with their values.

    Parameters
    ----------
    trend : pandas.DataFrame
        A `per_entry_trend` table.
    flat : float, default `FLAT_FACTOR`
        The factor (> 1) below which a series counts as flat.

    Returns
    -------
    str
        E.g. "not flat: from |M| = 100 to 10,000 it rises ×3.1, from 4.00 to 12.5 ns (d = 3,072, ℓ2) and falls
        ×1.8, from 24.0 to 13.0 ns (d = 64, ℓ2)".
    """
    if not (np.isfinite(flat) and flat > 1):
        raise ValueError(f"flat must be a finite number > 1, got {flat!r}")
    if trend.empty:
        raise ValueError("trend must hold at least one series, got none")
    lo, hi = int(trend.size_lo.min()), int(trend.size_hi.max())
    spread = float(np.exp(np.abs(np.log(trend.ratio.astype(float))).max()))
    if spread < flat:
        return f"flat: from |M| = {lo:,} to {hi:,} no series moves by more than ×{spread:.1f}"

    def one(key: tuple, verb: str) -> str:
        r = trend.loc[key]
        factor = r.ratio if r.ratio >= 1 else 1 / r.ratio
        return (f"{verb} ×{factor:.1f}, from {num(r.ns_lo, 3)} to {num(r.ns_hi, 3)} ns (d = {int(key[1]):,}, "
                f"{style.norm_symbol(key[0], tex=False)})")
    parts = []
    if trend.ratio.max() >= flat:
        parts.append(one(trend.ratio.astype(float).idxmax(), "rises"))
    if trend.ratio.min() <= 1 / flat:
        parts.append(one(trend.ratio.astype(float).idxmin(), "falls"))
    return f"not flat: from |M| = {lo:,} to {hi:,} it " + " and ".join(parts)


def step_caption(trend: pd.DataFrame, flat: float = FLAT_FACTOR) -> str:
    """The caption of the memory-step figure, its second half written from the measured per-entry trend.

    Parameters
    ----------
    trend : pandas.DataFrame
        A `per_entry_trend` table.
    flat : float, default `FLAT_FACTOR`
        As in `trend_words`.

    Returns
    -------
    str
        Two sentences.
    """
    dims = sorted({int(d) for d in trend.index.get_level_values("dim")})
    return ("Time of one step of the memory-based certification (Algorithm 1) against the memory size |M|, for "
            f"ellipsoids (ℓ2) and generalized cross-polytopes (ℓ1) in {len(dims)} input dimensions, and the same "
            "time per memory entry and pixel, which would be flat were the cost proportional to |M| × d; it is "
            f"{trend_words(trend, flat)}.")


def memory_step_text(fits: pd.DataFrame, steps: pd.DataFrame, memory_share: float,
                     flat: float = FLAT_FACTOR) -> str:
    """What the memory-step timings say: linear in |M|, the cost per entry and pixel, its trend with |M|, the
    largest memory's step, the intercepts and the memory's share of ANCER's time on the real test sets.

    Parameters
    ----------
    fits : pandas.DataFrame
        `fits_with_readings(steps, ["norm", "dim"], "size", "seconds")`.
    steps : pandas.DataFrame
        `runtime.memory_step_grid` rows.
    memory_share : float
        The memory's largest share (0-1) of ANCER's time per input in Table 3.
    flat : float, default `FLAT_FACTOR`
        As in `trend_words`.

    Returns
    -------
    str
        Markdown.
    """
    if not 0 <= memory_share <= 1:
        raise ValueError(f"memory_share must be a fraction in [0, 1], got {memory_share!r}")
    per_pixel = 1e9 * fits.slope / fits.index.get_level_values("dim")
    size, dim = int(steps["size"].max()), int(steps.dim.max())
    big = steps[(steps["size"] == size) & (steps.dim == dim)].set_index("norm").seconds
    neg = fits[fits.reading == "negative"]
    spread = float(per_pixel.max() / per_pixel.min())
    return (
        f"One memory step is {linear_words(fits.r2.min())} in |M| (R² ≥ {bound(fits.r2.min(), 3, 'lower')} for "
        "every norm and "
        f"dimension), as the paper says, and grows with the dimension too: the fitted slopes are "
        f"{num(per_pixel.min())}-{num(per_pixel.max())} ns per memory entry and pixel, "
        + ("roughly constant across d, so the cost is about linear in |M| × d. " if spread < 3
           else "a spread of more than 3× across d, so |M| × d is only a rough guide. ")
        + f"Per entry and pixel the measured step is {trend_words(per_entry_trend(steps), flat)} (right panel). "
        + f"A memory of {size:,} regions of d = {dim:,} costs "
        + " and ".join(f"{duration(big[n])} ({style.norm_symbol(n, tex=False)})" for n in big.index)
        + " per step. "
        + f"Of the {len(fits)} fitted intercepts, {int((fits.reading == 'zero').sum())} lie within two standard "
        f"errors of zero, {int((fits.reading == 'positive').sum())} above and {len(neg)} below"
        + (f" ({', '.join(f'{num(1e3 * a)} ms' for a in neg.intercept)}); those below are fit artefacts, not costs, "
           "which is why the figure draws the measured times and the fitted slopes, not the fitted lines. "
           if len(neg) else ". ")
        + f"At our test-set sizes the memory is at most {bound(100 * memory_share, 1, 'upper')}% of ANCER's time "
        "per input "
        "(Table 3 above).")


def memory_share(table3: Mapping[object, pd.DataFrame]) -> float:
    """The memory's largest share (0-1) of ANCER's time per input over Table 3's rows.

    Parameters
    ----------
    table3 : mapping of any to pandas.DataFrame
        `runtime.runtime_table`s with an "ancer" row.

    Returns
    -------
    float
        max over the tables of `runtime.ancer_share(t)[MEMORY]`.
    """
    if not table3:
        raise ValueError("table3 must hold at least one runtime table, got none")
    return max(float(runtime.ancer_share(t)[runtime.MEMORY]) for t in table3.values())


# ---- the test order ----------------------------------------------------------------------------------------------

def meeting_text(spread: pd.DataFrame, changed: pd.DataFrame, clear: pd.DataFrame, orders: int) -> str:
    """Whether the logged certified regions of different classes meet, why (radii, axis ratios, MaxIntersect's
    clearance) and what the stress test below asks.

    Parameters
    ----------
    spread : pandas.DataFrame
        `runtime.order_spread` of the logged runs (keys column, norm, sigma, method, policy).
    changed : pandas.DataFrame
        `runtime.order_changes(spread)`.
    clear : pandas.DataFrame
        `runtime_study.clearances` (columns column, norm, method, max_radius, max_semi_axis, max_axis_ratio,
        clearance, overlapping_pairs).
    orders : int
        Random orders per run, besides the logged one.

    Returns
    -------
    str
        Markdown.
    """
    no_meeting = int(spread.met_max.max()) == 0
    overlap = clear[clear.overlapping_pairs > 0]
    anisotropic = clear[clear.method == ANCER]
    if anisotropic.empty:
        raise ValueError("clear must hold ANCER's rows (method 'ancer'), got none")
    widest = anisotropic.loc[anisotropic.max_axis_ratio.idxmax()]
    rows = spread.reset_index()
    run = [k for k in rows.columns if k in ("column", "norm", "sigma", "method")]  # a run: its regions, any policy
    runs, pairs = len(rows[run].drop_duplicates()), ("(run, policy) pairs" if "policy" in rows else "runs")
    if no_meeting:
        text = ("**No two certified regions of different classes meet**, in any run: in the logged order Algorithm 1 "
                "keeps every certified region, so it compares every pair of regions of different classes once and "
                "finds none that meets; any other order makes the same comparisons, so the order cannot change a "
                f"result here (none of the {len(spread)} {pairs} changes over {orders + 1} orders) and the memory only "
                "costs time.")
    else:
        met = rows[rows.met_max > 0]
        where = sorted({f"{study_method(m)} on {column_title(c)}" for c, m in zip(met.column, met.method)})
        text = (f"**Certified regions of different classes meet** in {len(met[run].drop_duplicates())} of {runs} "
                f"runs (all of them {' and '.join(where)}), and the order changes the results of {len(changed)} of "
                f"the {len(spread)} {pairs}.")
    text += (f" The certified radii reach at most {bound(clear.max_radius.max(), 2, 'upper')}"
             + (", but the regions reach farther than that" if clear.max_semi_axis.max() > clear.max_radius.max()
                else "")
             + f": ANCER's longest semi-axis is up to {widest.max_axis_ratio:.0f}× its shortest "
             f"({column_title(widest.column)}, {style.norm_symbol(widest.norm, tex=False)}), ")
    if len(overlap):
        text += (f"and in {len(overlap)} of {len(clear)} runs the enclosing balls of some pairs of different classes "
                 f"overlap ({int(overlap.overlapping_pairs.sum()):,} pairs in all; the closest pair's centres are "
                 f"{clear.clearance.min():.2f}× the sum of the balls' radii apart). MaxIntersect cannot rule those "
                 "pairs out; the exact Intersect test (App. D) "
                 + ("separates every one of them. " if no_meeting else "decides. ")
                 + (f"In the other {len(clear) - len(overlap)} runs MaxIntersect alone rules out every pair. "
                    if len(clear) > len(overlap) else ""))
    else:
        text += (f"yet every pair of different classes is at least {clear.clearance.min():.2f}× the sum of their "
                 "enclosing radii apart, so MaxIntersect alone rules out every meeting. ")
    text += ("This agrees with the paper's \"low number of intersections\" but makes the order question vacuous on "
             "our data, so we ask how large the regions would have to be before the order matters: " if no_meeting
             else "We also ask what happens when regions grow: ")
    return (text + "the same logged certificates with every semi-axis **inflated** by a factor (a stress test of "
            "Algorithm 1; the inflated regions are not certificates), at the σ of notebook 03's step-size selection, "
            "in the logged order and the same random orders.")


def study_method(method: str) -> str:
    """A data-dependent method's name in prose ("ANCER", "Isotropic DD").

    Parameters
    ----------
    method : str
        A key of `image_study.METHOD_NAMES`.

    Returns
    -------
    str
        Its name.
    """
    if method not in METHOD_NAMES:
        raise ValueError(f"method must be one of {sorted(METHOD_NAMES)}, got {method!r}")
    return METHOD_NAMES[method]


def real_order_effect(stress_spread: pd.DataFrame, n_test: Mapping[str, int]) -> pd.DataFrame:
    """The stress test's uninflated runs (×1: the real certificates) in which regions of different classes meet,
    one row per (column, norm, method), both policies side by side.

    Parameters
    ----------
    stress_spread : pandas.DataFrame
        `runtime.order_spread` of `runtime_study.stress_test`, keys column, norm, method, policy, inflate (1 among
        the factors).
    n_test : mapping of str to int
        Test inputs per column.

    Returns
    -------
    pandas.DataFrame
        Columns column, norm, method, inputs, met_lo and met_hi (the fewest and most inputs meeting an earlier
        region of another class, over orders and policies), and for each policy range_<policy> (the accuracy's range
        over the orders, pp), acr_range_<policy> and acrp_range_<policy> (the ranges of ACR and ACR~); empty when no
        region meets another at ×1.
    """
    levels = stress_spread.index.names
    if "inflate" not in levels or 1 not in set(stress_spread.index.get_level_values("inflate")):
        raise ValueError("stress_spread must be indexed by inflate and hold the factor 1 (the real certificates)")
    x1 = stress_spread.xs(1, level="inflate").reset_index()
    rows = []
    for (c, n, m), g in x1.groupby(["column", "norm", "method"], sort=False):
        if g.met_max.max() == 0:
            continue
        row = dict(column=c, norm=n, method=m, inputs=int(n_test[c]), met_lo=int(g.met_min.min()),
                   met_hi=int(g.met_max.max()))
        for p in g.itertuples():
            row[f"range_{p.policy}"] = float(p.acc_range_pp)
            row[f"acr_range_{p.policy}"] = float(p.acr_max - p.acr_min)
            row[f"acrp_range_{p.policy}"] = float(p.acrp_max - p.acrp_min)
        rows.append(row)
    return pd.DataFrame(rows)


def ancer_step_note(col: object, norm: str) -> dict[str, float]:
    """ANCER's chosen step size on a column at the selection σ, relative to θ and to the largest step of its grid.

    Parameters
    ----------
    col : image_study.Column
        The column (its `setup` and `chosen` settings).
    norm : str
        "l2" or "l1".

    Returns
    -------
    dict of str to float
        step (× θ), grid_top (× θ) and times (step / grid_top).
    """
    sigma = selection_sigma(col.setup, norm)
    step = float(col.chosen[norm].of(ANCER).lr) / float(theta_of(norm, sigma))
    top = float(max(col.setup.ancer_lr_grid))
    return {"step": step, "grid_top": top, "times": step / top}


def order_summary(stress_spread: pd.DataFrame, stress: pd.DataFrame, spread: pd.DataFrame, changed: pd.DataFrame,
                  n_test: Mapping[str, int], orders: int, steps: Mapping[tuple[str, str], Mapping[str, float]],
                  certify_abstained: int, overlapping_pairs: int, threshold_pp: float = NEGLIGIBLE_PP) -> str:
    """The test-order finding: first the real certificates (×1) against ANCER §6's "almost negligible", then the
    stress test's inflated regions.

    Parameters
    ----------
    stress_spread : pandas.DataFrame
        `runtime.order_spread(stress, keys)` with keys column, norm, method, policy, inflate.
    stress : pandas.DataFrame
        `runtime_study.stress_test`'s tidy table.
    spread : pandas.DataFrame
        `runtime.order_spread` of the logged runs at every σ (`runtime_study.order_effects`).
    changed : pandas.DataFrame
        `runtime.order_changes(spread)`.
    n_test : mapping of str to int
        Test inputs per column.
    orders : int
        Random orders per run, besides the logged one.
    steps : mapping of (column, norm) to dict
        `ancer_step_note` for the (column, norm) runs whose regions meet at ×1 (ANCER's); others may be absent.
    certify_abstained : int
        CERTIFY's own abstentions over all logged runs and policies.
    overlapping_pairs : int
        Pairs of regions of different classes whose enclosing balls overlap, over all logged runs.
    threshold_pp : float, default `NEGLIGIBLE_PP`
        An accuracy range (pp) at or above which the order effect is not negligible.

    Returns
    -------
    str
        Markdown bullets.
    """
    keys = ["column", "norm", "method", "policy", "inflate"]
    real = real_order_effect(stress_spread, n_test)
    n_orders = orders + 1
    bullets = []
    if real.empty:
        bullets.append(
            f"* **With the real certificates the test order changes nothing** ({len(changed)} of {len(spread)} runs "
            f"change over {n_orders} orders): no two certified regions of different classes meet"
            + (f" ({overlapping_pairs:,} pairs have overlapping enclosing balls, but the exact test separates them)"
               if overlapping_pairs else "")
            + f"; CERTIFY's own abstentions ({certify_abstained:,} over all runs and policies) are the only ones. "
            "This matches the paper's \"almost negligible\" (ANCER §6), for a reason worth knowing: here the "
            "certified regions do not meet at all.")
    else:
        worst = real[f"range_{WORST_CASE}"].max()
        verdict = worst >= threshold_pp
        runs = list(real.groupby(["column", "method"], sort=False))
        for (c, m), g in runs:
            g = g.set_index("norm")
            norms = list(g.index)
            sym = {n: style.norm_symbol(n, tex=False) for n in norms}
            head = (f"**With the real certificates (×1) the test order is "
                    f"{'not negligible' if g[f'range_{WORST_CASE}'].max() >= threshold_pp else 'negligible'} for "
                    f"{study_method(m)} on {column_title(c)}**")
            met = " and ".join((f"{g.loc[n, 'met_lo']}" if g.loc[n, "met_lo"] == g.loc[n, "met_hi"] else
                                f"{g.loc[n, 'met_lo']}-{g.loc[n, 'met_hi']}") + f" ({sym[n]})" for n in norms)
            acc = " and ".join(f"{g.loc[n, f'range_{WORST_CASE}']:.1f} ({sym[n]})" for n in norms)
            shrink_acc = max(float(g.loc[n, f"range_{SHRINK}"]) for n in norms)
            shrink_acr = max(float(g.loc[n, f"acr_range_{SHRINK}"]) for n in norms)
            shrink_acrp = max(float(g.loc[n, f"acrp_range_{SHRINK}"]) for n in norms)
            text = (f"* {head} at the σ of notebook 03's step-size selection: its certified regions meet an earlier "
                    f"region of another class for {met} of its {int(g.inputs.iloc[0])} test inputs, depending on the "
                    f"order and policy, and under the paper's worst-case reporting (abstain on any meeting) its "
                    f"certified accuracy moves by {acc} percentage points between two of {n_orders} orders. Under our "
                    "shrink policy the certified accuracy "
                    + ("does not move (a shrunk region keeps its prediction)" if shrink_acc == 0 else
                       f"moves by up to {shrink_acc:.1f} points")
                    + f"; the ACR moves by at most {bound(shrink_acr, 3, 'upper')} and the ACR̃ by at most "
                    f"{bound(shrink_acrp, 3, 'upper')}. ")
            if (c, m) == runs[0][0]:
                text += ("**This contradicts ANCER §6**, where the effect is \"almost negligible\" given \"the low "
                         "number of intersections observed with the original certified regions\". "
                         if verdict else
                         "This agrees with ANCER §6's \"almost negligible\". ")
            notes = [steps[c, n] for n in norms if (c, n) in steps]
            if m == ANCER and notes:
                chosen = sorted({round(s["step"], 12) for s in notes})
                at = (f"{chosen[0]:.3g} θ" if len(chosen) == 1 else " and ".join(
                    f"{steps[c, n]['step']:.3g} θ ({sym[n]})" for n in norms if (c, n) in steps))
                times = sorted({round(s["times"], 12) for s in notes})
                text += (f"It rests on {column_title(c)}'s large ANCER step, chosen on the validation split at {at}, "
                         + " and ".join(f"{t:.3g}×" for t in times)
                         + f" the largest step of the grid ({notes[0]['grid_top']:g} θ); notebook 03 discusses that "
                         "choice. ")
            bullets.append(text.rstrip())
        quiet = [column_title(c) for c in dict.fromkeys(stress_spread.index.get_level_values("column"))
                 if c not in set(real.column)]
        moved = changed.reset_index()
        which = sorted({f"{study_method(m)} on {column_title(c)}" for c, m in zip(moved.column, moved.method)})
        if quiet:
            bullets.append(f"* On {' and '.join(quiet)} no two certified regions of different classes meet at ×1, for "
                           "either method: the order changes nothing there. Over every σ of notebook 03, "
                           f"{len(changed)} of {len(spread)} runs change with the order"
                           + (f", all of them {' and '.join(which)}" if which else "") + ".")
    s = stress_spread
    inflated = s[s.index.get_level_values("inflate") > 1]
    met = inflated[inflated.met_max > 0]
    if len(met):
        w = runtime.widest_order_range(stress[stress.inflate > 1], keys)
        r = w["run"]
        factors = sorted({float(f) for f in inflated.index.get_level_values("inflate")})
        first = float(met.index.get_level_values("inflate").min())
        bullets.append(
            f"* **Inflated regions** (the stress test, ×{factors[0]:g}"
            + (f"-×{factors[-1]:g}" if len(factors) > 1 else "")
            + f"; not certificates) meet in {len(met)} of {len(inflated)} inflated runs, from ×{first:g} on, and "
            f"{len(runtime.order_changes(inflated))} of them change with the order; "
            f"the order can then matter a great deal: up to {w['range_pp']:.1f} percentage points of accuracy between "
            f"two orders ({column_title(r['column'])}, {style.norm_symbol(r['norm'], tex=False)}, "
            f"{study_method(r['method'])}, ×{r['inflate']:g}, {POLICY_NAMES[r['policy']]}). Of its "
            f"{n_test[r['column']]} inputs, " + "; ".join(
                f"in the {which} order ({w[which]['accuracy']:.1f}% certified) {w[which]['kept']} keep their region, "
                f"{w[which]['shrunk']} shrink, {w[which]['abstain_inside']} abstain because their centre lies inside "
                f"an earlier region of another class and {w[which]['abstain_intersect']} because their region meets "
                "one" for which in ("best", "worst"))
            + ". A deployment whose certificates crowd each other cannot rely on the order being harmless.")
    return "\n".join(bullets)


# ---- the timing summary --------------------------------------------------------------------------------------

def timing_summary(ours: pd.DataFrame, theirs: pd.DataFrame, table3: Mapping[tuple[str, str], pd.DataFrame],
                   fits_n: pd.DataFrame, fits_m: pd.DataFrame, steps: pd.DataFrame, memory_share: float,
                   loads: Sequence[float], cores: int, paper: Mapping[str, int], norms: Sequence[str]) -> str:
    """What reproduces of ANCER Table 3 and §6's runtime remarks, written from this run's timings.

    Parameters
    ----------
    ours : pandas.DataFrame
        Our ratios (`runtime.ratios` per table), indexed by (column, norm); the row `PAPER_BUDGET_ROW` is the
        MNIST CNN at the paper's budget.
    theirs : pandas.DataFrame
        `paper_ratios` of the paper's Table 3.
    table3 : mapping of (str, str) to pandas.DataFrame
        The `runtime.runtime_table` per (column label, norm).
    fits_n : pandas.DataFrame
        CERTIFY's fits against N (`fits_with_readings`).
    fits_m : pandas.DataFrame
        The memory step's fits against |M| (`fits_with_readings`).
    steps : pandas.DataFrame
        `runtime.memory_step_grid` rows.
    memory_share : float
        The memory's largest share (0-1) of ANCER's time per input.
    loads : sequence of float
        The machine's 1-minute load averages around the timings.
    cores : int
        The machine's cores.
    paper : mapping
        The paper's budget (`runtime.PAPER_BUDGET`).
    norms : sequence of str
        The norms timed.

    Returns
    -------
    str
        Markdown: a lead sentence and bullets.
    """
    a_f, a_i = "ANCER / Fixed σ", "ANCER / Iso DD"
    quick = ours.drop(index=PAPER_BUDGET_ROW, level=0, errors="ignore")
    lines = []
    if PAPER_BUDGET_ROW in ours.index.get_level_values(0):
        b = ours.loc[PAPER_BUDGET_ROW]
        share = pd.DataFrame({n: runtime.ancer_share(table3[PAPER_BUDGET_ROW, n]) for n in norms}).T
        lo, hi = theirs[a_f].min(), theirs[a_f].max()
        inside = lo <= b[a_f].min() and b[a_f].max() <= hi
        stage_max = share.drop(columns=runtime.MEMORY).idxmax(axis=1)
        lines.append(
            f"* **At the paper's budget** (MNIST CNN, {paper['iterations']} × {paper['samples']} optimization, "
            f"N = {paper['n']:,}), ANCER costs {b[a_f].min():.2f}-{b[a_f].max():.2f}× Fixed σ "
            f"(paper, GPU: {lo:.2f}-{hi:.2f}×; ours {'inside' if inside else 'outside'} that range) and "
            f"{b[a_i].min():.2f}-{b[a_i].max():.2f}× Isotropic DD (paper: "
            f"{theirs[a_i].min():.2f}-{theirs[a_i].max():.2f}×). CERTIFY takes "
            f"{100 * share[runtime.CERTIFY].min():.0f}-{100 * share[runtime.CERTIFY].max():.0f}% of ANCER's time there"
            + (", the largest stage." if (stage_max == runtime.CERTIFY).all() else
               "; the two optimizations together take the rest."))
        if quick[a_f].min() > b[a_f].max():
            lines.append(
                f"* **At the quick budgets** (the columns' own, smaller optimizations or N) ANCER "
                f"costs {quick[a_f].min():.1f}-{quick[a_f].max():.1f}× Fixed σ, more than at "
                "the paper's budget: CERTIFY is cheap there and the optimizations dominate. The paper's \"not "
                "significant\" overhead is therefore a statement about N being large next to the optimization budget, "
                "not about ANCER alone.")
        else:
            lines.append(f"* At the quick budgets ANCER costs {quick[a_f].min():.1f}-"
                         f"{quick[a_f].max():.1f}× Fixed σ, overlapping the paper-budget ratio on this run.")
    negative = (fits_n.reading == "negative").any() if "reading" in fits_n else False
    lines.append(f"* **CERTIFY is {linear_words(fits_n.r2.min(), rough='roughly linear')} in N** "
                 f"(R² ≥ {bound(fits_n.r2.min(), 3, 'lower')}), at {num(1e6 * fits_n.slope.min())}-"
                 f"{num(1e6 * fits_n.slope.max())} µs "
                 f"per noise sample on our models; no fixed cost above {duration(fits_n.y_at_x_min.max())} (the slowest "
                 f"run at N = {int(fits_n.x_min.min()):,})"
                 + ("; the negative intercepts are fit artefacts" if negative else "") + ".")
    per_pixel = 1e9 * fits_m.slope / fits_m.index.get_level_values("dim")
    size, dim = int(steps["size"].max()), int(steps.dim.max())
    big = steps[(steps["size"] == size) & (steps.dim == dim)].seconds
    lines.append(f"* **The memory step is {linear_words(fits_m.r2.min(), 'linear', 'roughly linear')} in |M|**, as "
                 f"the paper says (R² ≥ {bound(fits_m.r2.min(), 3, 'lower')}), and grows with the dimension: "
                 f"{num(per_pixel.min())}-{num(per_pixel.max())} ns per memory entry and pixel (fitted slopes), so "
                 f"{size:,} regions of {dim:,} pixels cost {duration(big.max())} per input; at our test-set sizes the "
                 f"memory is at most {bound(100 * memory_share, 1, 'upper')}% of ANCER's time.")
    return (f"**What reproduces** (this run, CPU; the machine's 1-minute load average was {min(loads):.1f}-"
            f"{max(loads):.1f} around the timings, on {cores} cores"
            + ("; oversubscribed, so the seconds are inflated and the ratios noisy" if max(loads) > cores else "")
            + "):\n" + "\n".join(lines))
