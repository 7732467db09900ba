"""Notebook 04's figures in the companion's style (`style`): ANCER Table 3 by stage beside the paper's ratios,
CERTIFY's cost against N (§7.3), one memory step against |M| (§6) and the test-order effect of the memory (§6).

Each function draws from the tables notebook 04 computes and returns the figure; the notebook saves it with
`report.figures.save_fig` under the name, paper reference and caption given here.
"""
from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from ..core.memory import SHRINK, WORST_CASE
from ..methods.registry import ANCER, FIXED, ISOTROPIC
from ..report import style
from . import runtime
from .runtime_findings import column_title

#: each stage in the colour of the method it belongs to; CERTIFY in Fixed σ's grey (Fixed σ is CERTIFY alone)
STAGE_COLOR = {runtime.ISO_OPT: style.METHODS[ISOTROPIC].color, runtime.ANCER_OPT: style.METHODS[ANCER].color,
               runtime.CERTIFY: "#BBBBBB", runtime.MEMORY: "#000000"}
#: one colour and marker per column (models, not methods: none of the method colours)
COLUMN_COLORS = ("#332288", "#AA4499", "#999933", "#882255", "#44AA99")
COLUMN_MARKERS = "oDs^v"
#: how each norm's series is drawn in the memory figures
NORM_LOOK = {"l2": dict(marker="o", ls="-"), "l1": dict(marker="s", ls="--", mfc="white")}
#: the ratios of the Table 3 figure's right panel and how they are drawn
RATIO_LOOK = {"ANCER / Fixed σ": dict(marker="o", color="#000000", ms=7),
              "ANCER / Iso DD": dict(marker="D", color="#000000", mfc="white", ms=6)}
SHORT = {FIXED: "Fixed σ", ISOTROPIC: "Iso DD", ANCER: "ANCER"}

TABLE3_NAME = "ancer_tab03_runtime_by_stage"
TABLE3_REPRODUCES = "ANCER Table 3 (runtime per input, by stage, with the paper's ratios)"
TABLE3_CAPTION = ("Average certification time per input of Fixed σ, Isotropic DD and ANCER (including the isotropic "
                  "initialization step), split into the sample-wise optimizations, CERTIFY and the memory-based step, "
                  "per column and norm; the label above a bar is its total relative to Fixed σ. The last panel sets "
                  "our ratios ANCER / Fixed σ and ANCER / Isotropic DD beside the paper's Table 3 (GPU).")


def table3_figure(table3: Mapping[tuple[str, str], pd.DataFrame], timed: Mapping[str, tuple[str, int, int, int]],
                  budgets: pd.DataFrame, ours: pd.DataFrame, theirs: pd.DataFrame, profile: str = "quick",
                  ncols: int = 3) -> plt.Figure:
    """ANCER Table 3 by stage, one panel per timed budget with both norms, and a panel of ratios beside the paper's.

    Parameters
    ----------
    table3 : mapping of (str, str) to pandas.DataFrame
        `runtime.runtime_table` per (budget label, norm).
    timed : mapping of str to tuple
        Per budget label: (column, iterations, samples, N).
    budgets : pandas.DataFrame
        `runtime_findings.budget_table` (the selection σ per column and norm).
    ours : pandas.DataFrame
        Our `runtime.ratios`, indexed by (budget label, norm).
    theirs : pandas.DataFrame
        `runtime_findings.paper_ratios`.
    profile : str, default "quick"
        The profile (names the data).
    ncols : int, default 3
        Panels per row (>= 2); the ratio panel fills the rest of the last row.

    Returns
    -------
    matplotlib.figure.Figure
        At most ceil((budgets + 1) / ncols) rows of `ncols` panels.
    """
    if ncols < 2:
        raise ValueError(f"ncols must be >= 2, got {ncols!r}")
    labels = list(timed)
    if not labels:
        raise ValueError("timed must hold at least one budget, got none")
    norms = list(dict.fromkeys(n for (_, n) in table3))
    nrows = len(labels) // ncols + 1
    fig = plt.figure(figsize=(3.7 * ncols, 3.6 * nrows + 0.6))
    grid = fig.add_gridspec(nrows, ncols)
    gap = 0.8  # between the norms' groups of bars
    for i, label in enumerate(labels):
        ax = fig.add_subplot(grid[i // ncols, i % ncols])
        name, iters, samples, n = timed[label]
        ticks, names = [], []
        for j, norm in enumerate(norms):
            t = table3[label, norm]
            x = j * (len(t) + gap) + np.arange(len(t))
            bottom = np.zeros(len(t))
            for stage in runtime.STAGES:
                ax.bar(x, t[stage], bottom=bottom, color=STAGE_COLOR[stage], width=0.75, edgecolor="white",
                       linewidth=0.5)
                bottom += t[stage].to_numpy()
            for k, m in enumerate(t.index):
                if m != FIXED:
                    ax.text(x[k], t.loc[m, "total"], f"{t.loc[m, 'total'] / t.loc[FIXED, 'total']:.1f}×",
                            ha="center", va="bottom", fontsize=style.MIN_FONT + 0.5)
            ticks += list(x)
            names += [SHORT.get(m, m) for m in t.index]
            sigma = budgets.loc[name, f"sigma {norm}"]
            ax.text(x.mean(), -0.2, f"{style.norm_symbol(norm)}, σ = {sigma:g}", transform=ax.get_xaxis_transform(),
                    ha="center", va="top", fontsize=9)
        ax.set_xticks(ticks, names, fontsize=style.MIN_FONT + 0.5, rotation=35, ha="right", rotation_mode="anchor")
        ax.set_ylim(0, 1.15 * max(float(table3[label, norm]["total"].max()) for norm in norms))
        ax.grid(axis="x", visible=False)
        budget = "paper's budget" if "paper" in label else "quick budget"
        ax.set_title(f"{column_title(name)}\n{budget}:\n{iters}×{samples} steps, N = {n:,}", fontsize=9.5)
        if i % ncols == 0:
            ax.set_ylabel("seconds per input")
    k = len(labels) % ncols
    ax = fig.add_subplot(grid[nrows - 1, k:])
    ratio_panel(ax, ours, theirs)
    thin = max(float(t[runtime.MEMORY].max() / t["total"].max()) for t in table3.values())
    stage_label = {**{s: s for s in runtime.STAGES}, runtime.MEMORY: f"memory (≤ {100 * thin:.1f}% of a bar)"}
    columns = list(dict.fromkeys(timed[label][0] for label in labels))
    # the title rides on the legend: a figure legend outside the axes and a suptitle would overlap
    fig.legend(handles=[Patch(color=STAGE_COLOR[s], label=stage_label[s]) for s in runtime.STAGES],
               loc="outside upper center", ncols=len(runtime.STAGES), frameon=False, fontsize=9,
               title=style.titled("ANCER Table 3", *columns, profile=profile) + ": seconds per input by stage",
               title_fontsize=11)
    style.stand_in(fig, *columns, profile=profile, extra="CPU, one input at a time; paper: GPU")
    return fig


def ratio_rows(ours: pd.DataFrame, theirs: pd.DataFrame) -> pd.DataFrame:
    """The rows of the Table 3 figure's ratio panel, top to bottom: the paper's, then ours at the paper's budget,
    then ours at the quick budgets.

    Parameters
    ----------
    ours : pandas.DataFrame
        Our `runtime.ratios`, indexed by (budget label, norm).
    theirs : pandas.DataFrame
        `runtime_findings.paper_ratios`.

    Returns
    -------
    pandas.DataFrame
        Columns label, source ("paper" or "ours") and the two ratios of `RATIO_LOOK`.
    """
    rows = []
    for row, r in theirs.iterrows():
        norm = r.get("norm")
        what = style.norm_symbol(norm, tex=False) if isinstance(norm, str) and norm else r.get("dataset", "")
        rows.append(dict(label=f"paper {row}, {what}", source="paper", **{k: r[k] for k in RATIO_LOOK}))
    labels = list(dict.fromkeys(ours.index.get_level_values(0)))
    labels = [lab for lab in labels if "paper" in lab] + [lab for lab in labels if "paper" not in lab]
    for lab in labels:
        for norm, r in ours.loc[lab].iterrows():
            name = lab.replace(" (paper budget)", "")
            budget = ", paper's budget" if "paper" in lab else ""
            rows.append(dict(label=f"{column_title(name)}{budget}, {style.norm_symbol(norm, tex=False)}",
                             source="ours", **{k: r[k] for k in RATIO_LOOK}))
    return pd.DataFrame(rows)


def ratio_panel(ax: plt.Axes, ours: pd.DataFrame, theirs: pd.DataFrame) -> None:
    """Draw our Table 3 ratios beside the paper's on `ax` (log scale; the paper's range of ANCER / Fixed σ shaded).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel.
    ours, theirs : pandas.DataFrame
        As in `ratio_rows`.
    """
    rows = ratio_rows(ours, theirs)
    y = np.arange(len(rows))[::-1]
    lead = next(iter(RATIO_LOOK))
    lo, hi = theirs[lead].min(), theirs[lead].max()
    ax.axvspan(lo, hi, color=style.METHODS[ANCER].color, alpha=0.15, lw=0,
               label=f"paper's {lead}: {lo:.2f}-{hi:.2f}")
    paper_rows = y[rows.source.to_numpy() == "paper"]
    ax.axhspan(paper_rows.min() - 0.5, paper_rows.max() + 0.5, color="#DDDDDD", alpha=0.6, lw=0)
    for what, look in RATIO_LOOK.items():
        ax.plot(rows[what], y, ls="none", label=what, **look)
    for yy, v in zip(y, rows[lead]):
        ax.annotate(f"{v:.2f}×", (v, yy), xytext=(7, 0), textcoords="offset points", va="center",
                    fontsize=style.MIN_FONT + 0.5)
    ax.axvline(1, color="#777777", lw=1)
    ax.set_xscale("log")
    top = float(np.nanmax(rows[list(RATIO_LOOK)].to_numpy(float)))
    ax.set_xlim(0.9, 2.2 * top)
    ax.xaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(y, rows.label, fontsize=style.MIN_FONT + 1)
    ax.yaxis.tick_right()
    ax.tick_params(axis="y", length=0)
    ax.set_ylim(y.min() - 0.6, y.max() + 0.6)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("time relative to the other method (log scale)")
    ax.set_title("ratios of the totals: ours (CPU) and the paper's (GPU, grey)", fontsize=9.5)
    style.legend(ax, loc="upper right")


CERTIFY_NAME = "ancer_sec73_certify_time_vs_n"
CERTIFY_REPRODUCES = "ANCER §7.3 (CERTIFY cost against N)"
CERTIFY_CAPTION = ("Time of one CERTIFY against the number of noise samples N, with least-squares lines, and the time "
                   "per noise sample, which is flat where the cost is linear in N.")


def certify_vs_n_figure(per_n: pd.DataFrame, fits: pd.DataFrame, n_grid: Sequence[int],
                        profile: str = "quick") -> plt.Figure:
    """CERTIFY's time against N per column (left, with the fitted lines where positive) and per noise sample (right).

    Parameters
    ----------
    per_n : pandas.DataFrame
        `runtime.per_sample_cost` rows (column, n, mean, min, max, per_sample).
    fits : pandas.DataFrame
        `runtime.fits_by(timings, "column", "n", "seconds")`, indexed by column.
    n_grid : sequence of int
        The N timed.
    profile : str, default "quick"
        The profile (names the data).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels.
    """
    columns = list(fits.index)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.5, 4.3))
    for i, name in enumerate(columns):
        color, marker = COLUMN_COLORS[i % len(COLUMN_COLORS)], COLUMN_MARKERS[i % len(COLUMN_MARKERS)]
        g = per_n[per_n.column == name]
        ax.errorbar(g.n, g["mean"], yerr=[g["mean"] - g["min"], g["max"] - g["mean"]], fmt=marker, color=color,
                    ms=6, capsize=2, label=column_title(name))
        ax.plot(*runtime.fit_curve(fits.loc[name], min(n_grid), max(n_grid)), "-", color=color, lw=1.2)
        ax2.plot(g.n, 1e6 * g.per_sample, marker=marker, color=color, ms=6, label=column_title(name))
        ax2.axhline(1e6 * fits.loc[name, "slope"], color=color, ls=":", lw=1.2)
    ax.set(xscale="log", yscale="log", xlabel="N (noise samples)", ylabel="seconds per CERTIFY",
           title="CERTIFY's time (bars: min-max over inputs;\nlines: least-squares a + bN where positive)")
    ax2.set(xscale="log", yscale="log", xlabel="N (noise samples)", ylabel="µs per noise sample, time / (N0 + N)",
            title="time per sample (dotted: the fitted slope b)")
    ax2.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax2.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax2.yaxis.set_minor_formatter(NullFormatter())
    style.legend(ax, loc="upper left")
    fig.suptitle(style.titled("ANCER §7.3", *columns, profile=profile) + ": CERTIFY's cost against N", fontsize=11)
    style.stand_in(fig, *columns, profile=profile,
                   extra=f"{style.norm_symbol('l2', tex=False)} models at the selection σ, CPU")
    return fig


STEP_NAME = "ancer_sec6_memory_step_vs_size"
STEP_REPRODUCES = "ANCER §6 (memory step cost against memory size)"


def memory_step_figure(steps: pd.DataFrame, fits: pd.DataFrame, profile: str = "quick") -> plt.Figure:
    """One Algorithm 1 step against |M| per norm and dimension (left) and per memory entry and pixel (right).

    Parameters
    ----------
    steps : pandas.DataFrame
        `runtime.memory_step_grid` rows (norm, dim, size, seconds).
    fits : pandas.DataFrame
        `runtime.fits_by(steps, ["norm", "dim"], "size", "seconds")`.
    profile : str, default "quick"
        The profile.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels.
    """
    dims = sorted({int(d) for d in steps.dim})
    norms = list(dict.fromkeys(steps.norm))
    sizes = sorted({int(m) for m in steps["size"]})
    color = dict(zip(dims, [style.LEVELS[int(k)] for k in np.linspace(0, len(style.LEVELS) - 1, len(dims)).round()]))
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.5, 4.3))
    for (norm, d), g in steps.groupby(["norm", "dim"], sort=False):
        look = dict(color=color[d], ms=6, lw=1.2, **NORM_LOOK[norm])
        ax.plot(g["size"], 1e3 * g.seconds, **look)
        ax2.plot(g["size"], 1e9 * g.seconds / (g["size"] * d), **look)
        ax2.axhline(1e9 * fits.loc[(norm, d), "slope"] / d, color=color[d], lw=1, ls=":")
    m = np.array([sizes[0], sizes[-1]], float)
    ref = 0.25e3 * steps[steps["size"] == m[-1]].seconds.min() * m / m[-1]  # a slope-1 guide below the data
    ax.plot(m, ref, color="#777777", lw=1, ls=":")
    ax.annotate("∝ |M|", (np.sqrt(m.prod()), np.sqrt(ref.prod())), textcoords="offset points", xytext=(4, -16),
                color="#555555", fontsize=style.MIN_FONT + 1)
    ax.set(xscale="log", yscale="log", xlabel="|M| (regions of another class in memory)", ylabel="ms per step",
           title="one Algorithm 1 step (measured)")
    ax2.set(xscale="log", xlabel="|M| (regions of another class in memory)", ylabel="ns per entry and pixel",
            title="step time / (|M| d)\n(dotted: the fitted slope b / d)")
    ax2.set_ylim(0, 1.15 * ax2.get_ylim()[1])
    handles = ([Line2D([], [], color=color[d], lw=4, label=f"d = {d:,}") for d in dims]
               + [Line2D([], [], color="#333333", label=style.norm_symbol(n) + " regions", **NORM_LOOK[n])
                  for n in norms])
    style.legend(ax, handles=handles, loc="upper left", ncols=2)
    fig.suptitle("ANCER §6 on synthetic memories: one memory step against the memory size", fontsize=11)
    fig.supxlabel(f"synthetic memories: random regions in d = {', '.join(f'{d:,}' for d in dims)} dimensions "
                  f"(8×8 digits, MNIST, CIFAR-10 sizes) · {profile} profile · CPU", fontsize=style.MIN_FONT + 0.5,
                  color="#444444")
    return fig


ORDER_NAME = "ancer_sec6_memory_order_effect"
#: the characters per line of the order figure's sentence on the real certificates, under its title (within its width)
TITLE_WIDTH = 120
#: the panels' rows: (what, policy, y label)
ORDER_ROWS = (("met", SHRINK, "inputs meeting another\nclass's region (%)"),
              ("acc_range_pp", SHRINK, "accuracy range over\norders, shrink (pp)"),
              ("acc_range_pp", WORST_CASE, "accuracy range over\norders, abstain (pp)"))
#: x offsets that keep the four series at one factor apart
DODGE = {(ISOTROPIC, "l2"): 0.94, (ANCER, "l2"): 0.98, (ISOTROPIC, "l1"): 1.02, (ANCER, "l1"): 1.06}


def inflation_words(factors: Sequence[float]) -> str:
    """What the order figure's x axis shows, in words: the real certificates (×1) and the stress factors.

    Parameters
    ----------
    factors : sequence of float
        The inflation factors drawn.

    Returns
    -------
    str
        E.g. "the real certificates (×1) and the same regions inflated ×2-×8 (a stress test)".
    """
    fs = sorted(float(f) for f in factors)
    if not fs or any(not (np.isfinite(f) and f > 0) for f in fs):
        raise ValueError(f"factors must be finite numbers > 0, at least one, got {list(factors)!r}")
    inflated = [f for f in fs if f != 1]
    real = "the real certificates (×1)" if 1 in fs else ""
    stress = ""
    if inflated:
        span = f"×{inflated[0]:g}" if len(inflated) == 1 else f"×{inflated[0]:g}-×{inflated[-1]:g}"
        stress = f"the same regions inflated {span} (a stress test; not certificates)"
    return " and ".join(p for p in (real, stress) if p)


def order_reproduces(factors: Sequence[float]) -> str:
    """The order figure's paper reference, naming what is drawn.

    Parameters
    ----------
    factors : sequence of float
        The inflation factors drawn.

    Returns
    -------
    str
        E.g. "ANCER §6 (test-order effect of the memory: the real certificates (×1) and ...)".
    """
    return f"ANCER §6 (test-order effect of the memory: {inflation_words(factors)})"


def real_effect_words(spread: pd.DataFrame, n_test: Mapping[str, int], tex: bool = False) -> str:
    """The largest test-order effect of the real certificates (×1), in words, with where it occurs.

    Parameters
    ----------
    spread : pandas.DataFrame
        `runtime.order_spread` of `runtime_study.stress_test`, keys column, norm, method, policy, inflate; columns
        met_max (the most inputs meeting an earlier region of another class, over the orders) and acc_range_pp.
    n_test : mapping of str to int
        Test inputs per column.
    tex : bool, default False
        Norm symbols as matplotlib mathtext (a figure's title) or plain Unicode (a caption).

    Returns
    -------
    str
        E.g. "with the real certificates (×1), up to 58 of 80 test inputs (MNIST-5k (CNN), ANCER ℓ1) meet an earlier
        region of another class, and the certified accuracy between orders does not move under the shrink policy and
        moves by up to 13.8 pp under abstention (MNIST-5k (CNN), ANCER ℓ1)"; "" when ×1 is not among the factors.
    """
    inflate = spread.index.get_level_values("inflate").to_numpy(float)
    real = spread[inflate == 1].droplevel("inflate")
    if real.empty:
        return ""

    def where(key: tuple) -> str:
        column, norm, method = key
        return f"{column_title(column)}, {style.METHODS[method].label} {style.norm_symbol(norm, tex=tex)}"

    met = real.xs(SHRINK, level="policy").met_max
    share = met / np.array([n_test[c] for c in met.index.get_level_values("column")], float)
    top = share.idxmax()
    if met[top] == 0:
        meets = "no test input meets an earlier region of another class"
    else:
        meets = (f"up to {met[top]:.0f} of {n_test[top[0]]} test inputs ({where(top)}) meet an earlier region of "
                 "another class")
    shrink, abstain = (real.xs(p, level="policy").acc_range_pp for p in (SHRINK, WORST_CASE))
    top = abstain.idxmax()

    def moves(pp: float, policy: str) -> str:
        return f"moves by up to {pp:.1f} pp {policy}" if pp > 0 else f"does not move {policy}"

    return (f"with the real certificates (×1), {meets}, and the certified accuracy between orders "
            f"{moves(shrink.max(), 'under the shrink policy')} and {moves(abstain[top], 'under abstention')}"
            + (f" ({where(top)})" if abstain[top] > 0 else ""))


def order_caption(factors: Sequence[float], real: str = "") -> str:
    """The order figure's caption.

    Parameters
    ----------
    factors : sequence of float
        The inflation factors drawn.
    real : str, default ""
        `real_effect_words` of the figure's data: the effect of the real certificates, said after the first sentence.

    Returns
    -------
    str
        One or two sentences.
    """
    return ("The impact of the order in which inputs are certified: how many inputs meet an earlier region of another "
            "class, and how far the certified accuracy moves between test orders, under the shrink policy and the "
            f"paper's worst-case abstention, for {inflation_words(factors)}."
            + (f" {real[0].upper()}{real[1:]}." if real else ""))


def order_title(columns: Sequence[str], factors: Sequence[float], profile: str = "quick", real: str = "") -> str:
    """The order figure's title: the data (`style.titled`), what the inflation axis shows and, when given, the
    effect of the real certificates.

    Parameters
    ----------
    columns : sequence of str
        The data columns drawn.
    factors : sequence of float
        The inflation factors drawn.
    profile : str, default "quick"
        The profile.
    real : str, default ""
        `real_effect_words` of the figure's data, from the third line on (wrapped at TITLE_WIDTH characters).

    Returns
    -------
    str
        Two lines, and those of `real`.
    """
    return (style.titled("ANCER §6", *columns, profile=profile) + "\ntest-order effect of the memory for "
            + inflation_words(factors) + "".join(f"\n{line}" for line in textwrap.wrap(real[:1].upper() + real[1:],
                                                                                       TITLE_WIDTH)))


def order_effect_figure(spread: pd.DataFrame, n_test: Mapping[str, int], orders: int,
                        profile: str = "quick") -> plt.Figure:
    """The test-order effect per column (panels' columns): meetings and accuracy ranges against the inflation.

    Parameters
    ----------
    spread : pandas.DataFrame
        `runtime.order_spread` of `runtime_study.stress_test`, keys column, norm, method, policy, inflate.
    n_test : mapping of str to int
        Test inputs per column.
    orders : int
        Random orders per run (besides the logged one).
    profile : str, default "quick"
        The profile.

    Returns
    -------
    matplotlib.figure.Figure
        `ORDER_ROWS` rows of panels, one column per data column.
    """
    s = spread.sort_index()
    columns = list(dict.fromkeys(spread.index.get_level_values("column")))
    norms = list(dict.fromkeys(spread.index.get_level_values("norm")))
    methods = list(dict.fromkeys(spread.index.get_level_values("method")))
    factors = sorted({float(f) for f in spread.index.get_level_values("inflate")})
    fig, axes = plt.subplots(len(ORDER_ROWS), len(columns), figsize=(max(10.0, 3.3 * len(columns)), 8.4), sharex=True,
                             sharey="row", squeeze=False)
    for j, name in enumerate(columns):
        for i, (what, policy, ylabel) in enumerate(ORDER_ROWS):
            ax = axes[i, j]
            if 1 in factors:
                ax.axvspan(0.85, 1.15, color="#E8E8E8", lw=0, zorder=0)
            for norm in norms:
                for method in methods:
                    g = s.loc[(name, norm, method, policy)]
                    x = g.index.to_numpy(float) * DODGE.get((method, norm), 1.0)
                    look = dict(color=style.METHODS[method].color, **NORM_LOOK[norm], ms=5, lw=1.3,
                                label=f"{style.METHODS[method].label}, {style.norm_symbol(norm)}")
                    if what == "met":
                        y = 100 * g.met_mean / n_test[name]
                        ax.errorbar(x, y, yerr=[y - 100 * g.met_min / n_test[name],
                                                100 * g.met_max / n_test[name] - y], capsize=2, **look)
                    else:
                        ax.plot(x, g[what], **look)
            style.percent_axis(ax, label=ylabel if j == 0 else "")
            if i == 0:
                ax.set_title(f"{column_title(name)} ({n_test[name]} test inputs)", fontsize=9.5)
                if 1 in factors:
                    ax.text(1.0, 1.0, "real\ncertificates", transform=ax.get_xaxis_transform(), ha="center",
                            va="top", fontsize=style.MIN_FONT, color="#444444")
            if i == len(ORDER_ROWS) - 1:
                ax.set(xscale="log", xlabel="semi-axes multiplied by")
                ax.set_xticks(factors, [f"×{f:g}" for f in factors])
                ax.xaxis.set_minor_formatter(NullFormatter())
    handles, labels = axes[0, 0].get_legend_handles_labels()
    # the title rides on the legend: a figure legend outside the axes and a suptitle would overlap
    fig.legend(handles, labels, loc="outside upper center", ncols=4, frameon=False, fontsize=9,
               title=order_title(columns, factors, profile, real_effect_words(spread, n_test, tex=True)),
               title_fontsize=11)
    style.stand_in(fig, *columns, profile=profile, extra=f"bars: min-max over the logged and {orders} random orders")
    return fig
