"""Notebook 07's figures (UCAN Figures 3, 4, 5 and 7, and the claim-C9 violation), drawn in the companion's
style (`ancer_lite.report.style`): one colour and marker per method, certified accuracy in %, axes naming the
norm and the certificate, the stand-in data named under every figure, a colour bar wherever colour
encodes a value, nothing under `style.MIN_FONT`.

Each function takes computed results (no training or certification) and returns the figure; the notebook
saves it with `figures.save_fig`.
"""
from __future__ import annotations

from typing import Iterable

import matplotlib as mpl
import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..core.ucan_radii import TABLE1_ROWS
from ..evaluation.metrics import certified_accuracy
from ..methods.registry import FIXED
from ..methods.ucan import INPUT_NPG, ISOTROPIC_NPG, PATTERN_NPG, UNIVERSAL_NPG
from ..report import style
from .ucan_study import ISOTROPIC_FT
from .ucan_tables import row_title

#: the style key of each UCAN noise kind (`ucan_study.KIND_NAMES`)
KIND_STYLE = {ISOTROPIC_NPG: "ucan_isotropic", ISOTROPIC_FT: "ucan_isotropic_ft", PATTERN_NPG: "ucan_pattern",
              UNIVERSAL_NPG: "ucan_universal", INPUT_NPG: "ucan_input"}
#: the NPGs of Figure 4's rows, in the paper's order
FIGURE4_KINDS = (PATTERN_NPG, UNIVERSAL_NPG, INPUT_NPG)
#: which dataset of UCAN each quick-profile column stands for (UCAN reports MNIST, CIFAR-10 and ImageNet)
UCAN_STANDS_FOR = {"digits": "CIFAR-10", "mnist": "UCAN's MNIST"}
#: the same in a figure's title ("MNIST-5k (CNN) for MNIST", `style.titled`)
TITLE_STANDS_FOR = {"digits": "CIFAR-10", "mnist": "MNIST"}
#: how the ℓp-radius curve of an NPG is drawn beside its ALM curve (thin, dotted, sparse markers)
RADIUS_CURVE = dict(linestyle=":", linewidth=1.3, markevery=0.1, markersize=5)


def short_name(column: str) -> str:
    """A column's short name in the papers' words: "8×8 digits (MLP)" for "digits" (`style.STAND_INS`).

    Parameters
    ----------
    column : str
        A key of `style.STAND_INS`.

    Returns
    -------
    str
    """
    if column not in style.STAND_INS:
        raise ValueError(f"column must be one of {sorted(style.STAND_INS)}, got {column!r}")
    return style.STAND_INS[column][0]


def stand_in(fig: plt.Figure, columns: Iterable[str], profile: str = "quick") -> None:
    """Name the data under `fig` (`style.stand_in`) and which of UCAN's datasets each quick-profile column stands for.

    The digits stand in for CIFAR-10 as in ANCER's figures, MNIST-5k for UCAN's MNIST (where `style.STAND_INS`
    names ImageNet, ANCER's use of it); `UCAN_STANDS_FOR`.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    columns : iterable of str
        The data columns drawn.
    profile : str, default "quick"
        The profile's name, written in the caption.

    Returns
    -------
    None
    """
    columns = list(columns)
    style.stand_in(fig, *columns, profile=profile,
                   stands_for={c: UCAN_STANDS_FOR[c] for c in columns if c in UCAN_STANDS_FOR})


def _curve(ax: plt.Axes, grid: np.ndarray, radius: pd.Series, correct: pd.Series, **kw: object) -> None:
    """Plot certified accuracy (%) against `grid` for the per-input `radius` and `correct`."""
    ax.plot(grid, 100 * certified_accuracy(radius, correct, grid), **kw)


def _level(k: int, n: int) -> float:
    """The shade of the k-th of n levels (λ): from -0.5 (lightened) to 0.35 (darkened); 0 for a single level."""
    return 0.0 if n == 1 else -0.5 + 0.85 * k / (n - 1)


def _shade(color: str, level: float) -> tuple[float, float, float]:
    """`color` mixed with white (level < 0) or black (level > 0) in proportion |level|."""
    rgb = np.array(mcolors.to_rgb(color))
    mix = np.ones(3) if level < 0 else np.zeros(3)
    return tuple(float(v) for v in (1 - abs(level)) * rgb + abs(level) * mix)


def figure_title(label: str, columns: Iterable[str], what: str, profile: str = "quick", sep: str = ": ") -> str:
    """A figure's title: the paper figure on the data drawn (`style.titled`, UCAN's datasets: `TITLE_STANDS_FOR`),
    then what it shows.

    Parameters
    ----------
    label : str
        The paper figure, e.g. "UCAN Figure 4".
    columns : iterable of str
        The data columns drawn.
    what : str
        What the figure shows, after a colon.
    profile : str, default "quick"
        The profile.
    sep : str, default ": "
        Between the lead and `what` (":\n" for a narrow figure).

    Returns
    -------
    str
        "UCAN Figure 4 on 8×8 digits (MLP) for CIFAR-10, MNIST-5k (CNN) for MNIST: ...".
    """
    columns = list(columns)
    if not what.strip():
        raise ValueError(f"what must say what the figure shows (a non-empty string), got {what!r}")
    return f"{style.titled(label, *columns, profile=profile, stands_for=TITLE_STANDS_FOR)}{sep}{what}"


def pattern_maps_figure(maps: dict[str, np.ndarray], kappa: float = 1.0, iota: float = 1.0) -> plt.Figure:
    """UCAN Figure 3: the pattern-fixed σ maps (Eq. 5), one panel per pattern norm, each with its colour bar.

    Parameters
    ----------
    maps : dict of str to numpy.ndarray
        Pattern norm ("l1", "l2", "linf") -> its σ map, shape (H, W).
    kappa, iota : float, default 1.0
        κ and ι of Eq. 5 the maps were made with (for the labels).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per entry of `maps`.
    """
    fig, axes = plt.subplots(1, len(maps), figsize=(4.2 * len(maps), 3.8), squeeze=False)
    for ax, (p, sigma) in zip(axes[0], maps.items()):
        im = ax.imshow(sigma, cmap=style.SEQUENTIAL_CMAP)
        h, w = sigma.shape
        sub = {"l1": "1", "l2": "2", "linf": r"\infty"}[p]
        ax.set_title(rf"p = ${sub}$:  $\sigma \propto \kappa\,\|(a, b)\|_{{{sub}}}^{{2}} + \iota$")
        ax.grid(False)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel(f"{h}×{w} pixels, κ = {kappa:g}, ι = {iota:g}")
        style.colorbar(fig, im, ax, "σ (geometric mean 1)", shrink=0.85)
    return fig


def npg_figure(curves: dict[str, tuple[pd.DataFrame, pd.DataFrame]], lams: Iterable[float],
               kinds: tuple[str, ...] = FIGURE4_KINDS, pattern: str = "l2") -> plt.Figure:
    """UCAN Figure 4 on our data, in the paper's layout: one row per NPG (`kinds`), one column per data column.

    UCAN's Figure 4 is 3 × 3: rows (a-c) pattern-fixed, (d-f) universal, (g-i) input-dependent noise, columns its
    three datasets. Each panel overlays every λ: the NPG's certified accuracy against its ALM (solid, the NPG's
    colour, darker for larger λ) and Cohen's (Fixed σ = λ, notebook 03) against its ℓ2 radius, which is its ALM
    (grey dashed, darker for larger λ). The ℓ2-radius curves and the control of equal fine-tuning are in
    `npg_lambda_figure`. A panel without runs is hidden. Each panel has its own radius range.

    Parameters
    ----------
    curves : dict of str to (pandas.DataFrame, pandas.DataFrame)
        Column -> (UCAN results of `Study.certify_test`, with columns kind, lam, pattern, radius_proxy, correct;
        baselines of `Study.baselines`, with columns kind, lam, radius, correct).
    lams : iterable of float
        The λ drawn in every panel.
    kinds : tuple of str, default ("pattern", "universal", "input")
        The NPGs, one figure row each.
    pattern : str, default "l2"
        The pattern-fixed NPG's norm.

    Returns
    -------
    matplotlib.figure.Figure
    """
    lams = sorted(lams)
    if not lams:
        raise ValueError("lams must name at least one λ")
    unknown = [k for k in kinds if k not in KIND_STYLE or k.startswith(ISOTROPIC_NPG)]
    if unknown:
        raise ValueError(f"kinds must be NPG kinds ('pattern', 'universal', 'input'), got {unknown}")
    names = list(curves)
    fig, axes = plt.subplots(len(kinds), len(names), figsize=(4.8 * len(names) + 0.6, 3.3 * len(kinds) + 1.0),
                             squeeze=False, sharey=True)
    cohen_color = style.method("ucan_isotropic").color
    for i, kind in enumerate(kinds):
        key = KIND_STYLE[kind]
        label = style.method(key).label
        for j, name in enumerate(names):
            ax = axes[i, j]
            res, base = curves[name]
            npg = res[(res.kind == kind) & ((res.pattern == pattern) | (kind != PATTERN_NPG))]
            at = [lam for lam in lams if (npg.lam == lam).any()]
            if not at:
                ax.set_visible(False)
                continue
            cohen = base[(base.kind == FIXED) & base.lam.isin(at)]
            top = max(float(npg[npg.lam.isin(at)].radius_proxy.max()),
                      float(cohen.radius.max()) if len(cohen) else 0.0, 1e-3)
            grid = np.linspace(0, 1.05 * top, 300)
            for k, lam in enumerate(at):
                level = _level(k, len(at))
                c = cohen[cohen.lam == lam]
                if len(c):
                    _curve(ax, grid, c.radius, c.correct, **style.line(
                        "ucan_isotropic", color=_shade(cohen_color, level), label=f"Cohen, λ = {lam:g}"))
                g = npg[npg.lam == lam]
                _curve(ax, grid, g.radius_proxy, g.correct,
                       **style.line(key, color=_shade(style.method(key).color, level), label=f"λ = {lam:g}, ALM"))
            style.percent_axis(ax, label="certified accuracy (%)" if j == 0 else "")
            ax.set_title(f"({chr(ord('a') + i * len(names) + j)}) {label.replace('UCAN ', '')}, {short_name(name)}")
            if i == len(kinds) - 1:
                ax.set_xlabel(f"ALM (UCAN) or {style.radius_label('l2', 'radius')} (Cohen)")
            if j == 0:  # one legend per row: each row has its own NPG
                style.legend(ax, loc="best")
    fig.suptitle(figure_title("UCAN Figure 4", names, "the three NPGs against isotropic noise, w.r.t. the ALM",
                              sep=": " if len(names) > 1 else ":\n"))
    stand_in(fig, names)
    return fig


def npg_lambda_figure(curves: dict[str, tuple[pd.DataFrame, pd.DataFrame]], lams: Iterable[float],
                      kinds: tuple[str, ...] = FIGURE4_KINDS, pattern: str = "l2") -> plt.Figure:
    """UCAN Figure 4's dense companion: rows the NPGs (`kinds`) of each data column, columns each λ.

    A panel shows the NPG's certified accuracy against its ALM (solid) and its ℓ2 radius (dotted), Cohen's (Fixed
    σ = λ, notebook 03) against its ℓ2 radius, which is its ALM, and, where it was run, Cohen's model fine-tuned like
    the NPGs (the control of equal training). A column without runs at a λ leaves that panel empty (hidden). Each
    panel has its own radius range.

    Parameters
    ----------
    curves : dict of str to (pandas.DataFrame, pandas.DataFrame)
        Column -> (UCAN results of `Study.certify_test`, with columns kind, lam, pattern, radius, radius_proxy,
        correct; baselines of `Study.baselines`, with columns kind, lam, radius, correct).
    lams : iterable of float
        The λ, one figure column each.
    kinds : tuple of str, default ("pattern", "universal", "input")
        The NPGs, one figure row each per data column.
    pattern : str, default "l2"
        The pattern-fixed NPG's norm.

    Returns
    -------
    matplotlib.figure.Figure
    """
    lams = list(lams)
    rows = [(name, kind) for name in curves for kind in kinds]
    fig, axes = plt.subplots(len(rows), len(lams), figsize=(3.9 * len(lams) + 0.4, 2.9 * len(rows) + 0.8),
                             squeeze=False, sharey=True)
    for i, (name, kind) in enumerate(rows):
        res, base = curves[name]
        key = KIND_STYLE[kind]
        label = style.method(key).label
        for j, lam in enumerate(lams):
            ax = axes[i, j]
            sel = res[(res.kind == kind) & (res.lam == lam) & ((res.pattern == pattern) | (kind != PATTERN_NPG))]
            if sel.empty:
                ax.set_visible(False)
                continue
            cohen = base[(base.kind == FIXED) & (base.lam == lam)]
            tuned = res[(res.kind == ISOTROPIC_FT) & (res.lam == lam)]
            # each panel's own range: one NPG's very large ALM at one λ would flatten every other panel's curves
            top = max(float(sel.radius_proxy.max()), float(cohen.radius.max()) if len(cohen) else 0.0,
                      float(tuned.radius.max()) if len(tuned) else 0.0, 1e-3)
            grid = np.linspace(0, 1.05 * top, 300)
            _curve(ax, grid, cohen.radius, cohen.correct, **style.line("ucan_isotropic", label="Cohen (Fixed σ = λ)"))
            if not tuned.empty:  # the control of equal fine-tuning; its ALM is its radius
                _curve(ax, grid, tuned.radius, tuned.correct,
                       **style.line("ucan_isotropic_ft", label="Cohen, fine-tuned like the NPGs"))
            _curve(ax, grid, sel.radius_proxy, sel.correct, **style.line(key, label=f"{label}, w.r.t. ALM"))
            _curve(ax, grid, sel.radius, sel.correct,
                   **style.line(key, markers=True, label=f"{label}, w.r.t. ℓ2 radius", **RADIUS_CURVE))
            style.percent_axis(ax, label="certified accuracy (%)" if j == 0 else "")
            ax.set_title(f"{short_name(name)}, λ = {lam:g}")
            if i == len(rows) - 1 or rows[i + 1][0] != name:
                ax.set_xlabel(f"{style.radius_label('l2', 'radius')} or ALM")
            if j == 0:  # one legend per row: each row has its own NPG; where it hides the fewest points
                style.legend(ax, loc="best")
    fig.suptitle(figure_title("UCAN Figure 4 (companion)", curves,
                              "one panel per λ, with the ℓ2 radius and the control of equal fine-tuning",
                              sep=":\n"))
    stand_in(fig, curves)
    return fig


def families_figure(universality: pd.DataFrame, rows: Iterable[str], column: str, ncols: int = 4) -> plt.Figure:
    """UCAN Figure 5 on our data: one panel per Table 1 row, isotropic noise against the three NPGs.

    Each NPG's certified accuracy is drawn against its ALM (solid) and its ℓp radius (dotted); isotropic noise's
    ALM is its radius.

    Parameters
    ----------
    universality : pandas.DataFrame
        The long table of `Study.universality` (columns row, kind, radius, radius_proxy, correct) of data column
        `column`.
    rows : iterable of str
        The Table 1 rows ("noise/norm"), one panel each.
    column : str
        The data column, named under the figure.
    ncols : int, default 4
        Panels per figure row.

    Returns
    -------
    matplotlib.figure.Figure
    """
    rows = list(rows)
    nrows = int(np.ceil(len(rows) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.1 * ncols, 3.4 * nrows + 0.9), squeeze=False, sharey=True)
    for ax in axes.reshape(-1)[len(rows):]:
        ax.set_visible(False)
    for k, (ax, row) in enumerate(zip(axes.reshape(-1), rows)):
        g = universality[universality.row == row]
        grid = np.linspace(0, 1.05 * max(float(g.radius_proxy.max()), 1e-6), 300)
        for kind, gk in g.groupby("kind", sort=False):
            key = KIND_STYLE[kind]
            if kind in (ISOTROPIC_NPG, ISOTROPIC_FT):  # its ALM is its radius
                _curve(ax, grid, gk.radius, gk.correct, **style.line(key))
                continue
            _curve(ax, grid, gk.radius_proxy, gk.correct, **style.line(key, label=f"{style.method(key).label}, ALM"))
            _curve(ax, grid, gk.radius, gk.correct,
                   **style.line(key, markers=True, label=f"{style.method(key).label}, ℓp radius", **RADIUS_CURVE))
        norm = TABLE1_ROWS[row].norm
        ax.set_title(row_title(row))
        ax.set_xlabel(f"{style.radius_label(norm, 'radius')} or ALM")
        style.percent_axis(ax, label="certified accuracy (%)" if k % ncols == 0 else "")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    # two legend rows (filled column by column): ALM curves above, the ℓp-radius curve of the same NPG below
    blank = plt.Line2D([], [], linestyle="none", label=" ")
    handles, labels = [handles[0], blank] + handles[1:], [labels[0], " "] + labels[1:]
    # the title heads the legend: a suptitle and an outside legend would be laid out on top of each other
    fig.legend(handles, labels, loc="outside upper center", ncols=len(handles) // 2, frameon=False,
               fontsize=style.MIN_FONT + 1, title_fontsize=mpl.rcParams["figure.titlesize"],
               title=figure_title("UCAN Figure 5", [column],
                                  "every noise family of Table 1 against ℓ1 and ℓ∞ perturbations"))
    stand_in(fig, [column])
    return fig


def noise_examples_figure(examples: dict[str, dict[str, dict[str, np.ndarray]]], lam: float,
                          inputs: dict[str, np.ndarray]) -> plt.Figure:
    """UCAN Figure 7 on our data: per data column and noise generator, its σ map, μ map and one noisy draw.

    Each map has a colour bar. The isotropic row shows the input x where the others show σ (its σ ≡ 1, μ ≡ 0); a
    generator whose μ is identically 0 (pattern-fixed) says so in words instead of a μ map.

    Parameters
    ----------
    examples : dict of str to dict
        Column -> `ucan_tables.noise_examples` (kind -> {"sigma", "mu", "draw"}, each of shape (H, W)).
    lam : float
        The λ of the examples.
    inputs : dict of str to numpy.ndarray
        Column -> the input x, shape (H, W).

    Returns
    -------
    matplotlib.figure.Figure
        One subfigure per column.
    """
    fig = plt.figure(figsize=(7.6 * len(examples), 2.6 * max(len(e) for e in examples.values()) + 0.9))
    subfigs = np.atleast_1d(fig.subfigures(1, len(examples), wspace=0.04))
    for sub, (name, ex) in zip(subfigs, examples.items()):
        axes = sub.subplots(len(ex), 3, squeeze=False)
        sub.suptitle(short_name(name), fontsize=11)
        for i, (kind, maps) in enumerate(ex.items()):
            iso = kind == ISOTROPIC_NPG
            m = np.abs(maps["mu"]).max()
            # a map that is constant is named in words, not drawn over a colour bar that encodes nothing
            if iso:
                panels = [("input x", inputs[name], "gray", {}, "pixel value"), "isotropic:\nσ ≡ 1, μ ≡ 0",
                          ("draw x + λε", maps["draw"], "gray", {}, "pixel value")]
            else:
                mu = (("μ(x)", maps["mu"], style.DIVERGING_CMAP, dict(vmin=-m, vmax=m), "μ") if m > 0
                      else f"{style.method(KIND_STYLE[kind]).label.replace('UCAN ', '')}:\nμ ≡ 0")
                panels = [("σ(x)", maps["sigma"], style.SEQUENTIAL_CMAP, {}, "σ"), mu,
                          ("draw x + λσ⊙ε + μ", maps["draw"], "gray", {}, "pixel value")]
            first_npg = i == 1 or (i == 0 and not iso)
            for j, panel in enumerate(panels):
                ax = axes[i, j]
                ax.set_xticks([])
                ax.set_yticks([])
                ax.grid(False)
                if isinstance(panel, str):
                    ax.text(0.5, 0.5, panel, ha="center", va="center", transform=ax.transAxes)
                    for s in ax.spines.values():
                        s.set_visible(False)
                    continue
                title, img, cmap, kw, cb = panel
                im = ax.imshow(img, cmap=cmap, **kw)
                style.colorbar(sub, im, ax, cb, shrink=0.9)
                if iso or first_npg:
                    ax.set_title(title)
                if j == 0:
                    m_style = style.method(KIND_STYLE[kind])
                    ax.set_ylabel(m_style.label.replace("UCAN ", "UCAN\n"), fontsize=10, color=m_style.color)
        sub.supxlabel(f"λ = {lam:g}", fontsize=style.MIN_FONT + 1)
    fig.suptitle(figure_title("UCAN Figure 7", examples, "σ, μ and one noisy draw of each noise generator"))
    stand_in(fig, examples)
    return fig


def violation_figure(example: dict[str, object], column: str) -> plt.Figure:
    """Claim C9 (UCAN Theorem 3.2's soundness): a verified violation, drawn as x, x' and δ = x' - x.

    x' lies inside x's certified region, and UCAN's own smoothed classifier returns another class at it.

    Parameters
    ----------
    example : dict
        `ucan_tables.violation_example`'s dict (x, x_prime, delta of shape (H, W); label, top, scaled_norm, r1).
    column : str
        The data column, named under the figure.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels.
    """
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.9))
    d = np.asarray(example["delta"])
    m = float(np.abs(d).max())
    panels = [(example["x"], "gray", {}, f"x: certified class {example['label']}", "pixel value"),
              (example["x_prime"], "gray", {}, f"x': smoothed class {example['top']}", "pixel value"),
              (d, style.DIVERGING_CMAP, dict(vmin=-m, vmax=m),
               f"δ = x' − x: ‖δ ⊘ θ(x)‖₂ = {example['scaled_norm']:.2f} ≤ {example['r1']:.2f}", "δ")]
    for ax, (img, cmap, kw, title, cb) in zip(axes, panels):
        im = ax.imshow(np.asarray(img), cmap=cmap, **kw)
        ax.set_title(title)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        style.colorbar(fig, im, ax, cb, shrink=0.85)
    fig.suptitle(figure_title("UCAN claim C9", [column], "a verified violation inside the certified region"))
    stand_in(fig, [column])
    return fig
