"""Notebook 03's figures in the companion's style (`style`): ANCER Figures 2-3 (top-1 certified accuracy,
best over σ, against the ℓp radius and the proxy radius, one column per dataset) and the per-σ
Figures 6-13 (App. G: one panel per training σ).

Every figure draws Fixed σ, Isotropic DD and ANCER with their companion colour and marker, certified
accuracy in %, x axes naming the norm and the certificate, and the data named underneath. Curves that
coincide stay visible: ANCER is drawn first as a wide line, Isotropic DD over it as a narrower one, and
Fixed σ dashed on top, with markers at staggered radii (`draw_methods`). A proxy-radius panel where ANCER's
curve reaches far beyond the other methods' (`FAR`) gets a symmetric-log x axis, linear up to their reach
(`linear_range`), so that their curves are not squeezed against the left edge; captions say so (`scale_note`).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FixedFormatter, FixedLocator, MaxNLocator, NullLocator

from ..methods import registry
from ..methods.registry import ANCER, FIXED, ISOTROPIC
from ..report import style
from ..runs.profiles import ImageSetup
from ..runs.setups import sigmas_of
from .image_study import accuracy_curves, coinciding, radius_grid

#: ANCER Figures 2 (ℓ2 / ℓΣ2) and 3 (ℓ1 / ℓΛ1): best over σ
BEST_FIGURES = {"l2": 2, "l1": 3}
#: ANCER App. G's per-σ figures of the CIFAR-10 column per (norm, certificate); the ImageNet column's
#: figure is the next number (Figures 6/7 ℓ2, 8/9 ℓΣ2, 10/11 ℓ1, 12/13 ℓΛ1)
PER_SIGMA_FIGURES = {("l2", "radius"): 6, ("l2", "proxy"): 8, ("l1", "radius"): 10, ("l1", "proxy"): 12}
#: how each method's line is layered so that coinciding curves stay visible (drawn in this order)
LAYERS = {ANCER: dict(linewidth=3.6, zorder=2), ISOTROPIC: dict(linewidth=2.2, zorder=3),
          FIXED: dict(linewidth=1.5, zorder=4)}
#: what `LAYERS` means, for captions
LAYERS_NOTE = ("Where curves coincide, the wide ANCER line shows beneath the narrower Isotropic DD line and the "
               "dashed Fixed σ line lies on top.")
#: markers per curve, staggered between methods
MARKS_PER_CURVE = 8
#: curves on average closer than this (percentage points of certified accuracy, about a line's width
#: at slide size) lie on each other; `coincidence_note` names them
COINCIDE_TOL = 1.0
#: a proxy-radius panel gets a symmetric-log x axis when ANCER's curve reaches beyond this many times the largest
#: radius the other methods certify (`linear_range`), so that their curves are not squeezed against the left edge
FAR = 3.0
#: the share of such a panel's width given to its linear part, [0, the other methods' reach]
LINEAR_SHARE = 0.55
#: radii drawn in the linear part of such a panel, on top of the panel's own grid
LINEAR_POINTS = 300


def best_figure_name(norm: str) -> str:
    """File name of ANCER Figure 2 (ℓ2) or 3 (ℓ1).

    Parameters
    ----------
    norm : str
        "l2" or "l1".

    Returns
    -------
    str
        E.g. "ancer_fig02_l2_certified_accuracy".
    """
    if norm not in BEST_FIGURES:
        raise ValueError(f"norm must be one of {list(BEST_FIGURES)}, got {norm!r}")
    return f"ancer_fig{BEST_FIGURES[norm]:02d}_{norm}_certified_accuracy"


def per_sigma_number(setup: ImageSetup, norm: str, certificate: str) -> int:
    """ANCER's figure number (App. G, Figures 6-13) for the per-σ curves of `setup`'s paper column.

    Parameters
    ----------
    setup : runs.profiles.ImageSetup
        Notebook 03's column (its paper column is "CIFAR-10" or "ImageNet").
    norm : str
        "l2" or "l1".
    certificate : str
        "radius" (the ℓp radius) or "proxy" (ℓΣ2 / ℓΛ1).

    Returns
    -------
    int
        `PER_SIGMA_FIGURES`' number, plus 1 for the ImageNet column.
    """
    if (norm, certificate) not in PER_SIGMA_FIGURES:
        raise ValueError(f"(norm, certificate) must be one of {list(PER_SIGMA_FIGURES)}, got {(norm, certificate)!r}")
    return PER_SIGMA_FIGURES[norm, certificate] + (1 if setup.column == "ImageNet" else 0)


def per_sigma_name(setup: ImageSetup, norm: str, certificate: str) -> str:
    """File name of a per-σ figure (ANCER Figures 6-13), e.g. ancer_fig08_l2_proxy_per_sigma_digits.

    Parameters
    ----------
    setup : runs.profiles.ImageSetup
        Notebook 03's column (its paper column is "CIFAR-10" or "ImageNet").
    norm : str
        "l2" or "l1".
    certificate : str
        "radius" (the ℓp radius) or "proxy" (ℓΣ2 / ℓΛ1).

    Returns
    -------
    str
    """
    kind = "proxy_per_sigma" if certificate == "proxy" else "per_sigma"
    return f"ancer_fig{per_sigma_number(setup, norm, certificate):02d}_{norm}_{kind}_{setup.name}"


def column_title(setup: ImageSetup, profile: str) -> str:
    """A panel title naming the data: "8×8 digits (MLP), for CIFAR-10" (quick profile), else the paper's dataset.

    A quick-profile column that stands in for no paper dataset is "<data>, extra column"; a checkpoint column is
    named by its paper column.

    Parameters
    ----------
    setup : runs.profiles.ImageSetup
        Notebook 03's column (its paper column is "CIFAR-10" or "ImageNet").
    profile : str
        The profile's name.

    Returns
    -------
    str
    """
    what, stands_for = style.STAND_INS.get(setup.name, (setup.column, None))
    if profile != "quick" or setup.model == "checkpoint":
        return setup.column
    return f"{what}, for {stands_for}" if stands_for else f"{what}, extra column"


def reach(grid: np.ndarray, curve: np.ndarray) -> float:
    """The largest radius of `grid` at which `curve` certifies some accuracy (0 when it certifies none).

    Parameters
    ----------
    grid : numpy.ndarray, shape (m,)
        The radii, increasing.
    curve : numpy.ndarray, shape (m,)
        Certified accuracy (%) on the grid.

    Returns
    -------
    float
    """
    grid, curve = np.asarray(grid, dtype=float), np.asarray(curve, dtype=float)
    if grid.shape != curve.shape:
        raise ValueError(f"grid and curve must have the same shape, got {grid.shape} and {curve.shape}")
    positive = np.flatnonzero(curve > 0)
    return float(grid[positive[-1]]) if positive.size else 0.0


def linear_range(grid: np.ndarray, curves: dict[str, np.ndarray], far: float = FAR) -> float | None:
    """Where a panel's x axis should turn logarithmic: the largest radius the methods other than ANCER certify,
    when ANCER's curve reaches beyond `far` times it; else None (a linear axis).

    Parameters
    ----------
    grid : numpy.ndarray, shape (m,)
        The radii, increasing.
    curves : dict of str to numpy.ndarray
        {method: certified accuracy (%) on the grid}; it must hold "ancer" and at least one other method.
    far : float, default `FAR`
        How many times further ANCER must reach, > 1.

    Returns
    -------
    float or None
    """
    if not far > 1:
        raise ValueError(f"far must be > 1, got {far!r}")
    if ANCER not in curves or len(curves) < 2:
        raise ValueError(f"curves must hold 'ancer' and another method, got {sorted(curves)}")
    others = max(reach(grid, c) for m, c in curves.items() if m != ANCER)
    return others if others > 0 and reach(grid, curves[ANCER]) > far * others else None


def _spread_axis(ax: plt.Axes, linear_to: float, top: float) -> None:
    """A symmetric-log x axis on `ax` from 0 to `top`: linear up to `linear_to` (marked by a dotted line) over
    `LINEAR_SHARE` of the width, logarithmic beyond, with ticks at round radii."""
    decades = np.log10(top / linear_to)
    # matplotlib gives the linear part linscale / (1 - 1/e) decades of width
    linscale = decades * LINEAR_SHARE / (1 - LINEAR_SHARE) * (1 - 1 / np.e)
    ax.set_xscale("symlog", linthresh=linear_to, linscale=linscale)
    linear = [v for v in MaxNLocator(nbins=3, steps=[1, 2, 2.5, 5, 10]).tick_values(0, linear_to)
              if 0 <= v <= linear_to * 1.001]
    logs = [m * 10.0 ** k for k in range(int(np.floor(np.log10(linear_to))), int(np.ceil(np.log10(top))) + 1)
            for m in (1, 2, 5) if linear_to * 1.6 < m * 10.0 ** k <= top]
    ticks = linear + logs
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FixedFormatter([f"{v:g}" for v in ticks]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.axvline(linear_to, color="#888888", linestyle=":", linewidth=1.0, zorder=1)
    ax.text(linear_to, 0.985, " log →", transform=ax.get_xaxis_transform(), ha="left", va="top",
            fontsize=style.MIN_FONT, color="#555555")


def draw_methods(ax: plt.Axes, grid: np.ndarray, curves: dict[str, np.ndarray], linear_to: float | None = None) -> None:
    """Draw certified accuracy (%) per method on `ax` in the companion's style, layered by `LAYERS`.

    No series hides another; each curve gets about `MARKS_PER_CURVE` markers at radii staggered between methods.
    With `linear_to`, the x axis is linear up to that radius and logarithmic beyond it (`linear_range`), and the
    markers are spaced evenly along each drawn line.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel.
    grid : numpy.ndarray, shape (m,)
        The radii.
    curves : dict of str to numpy.ndarray
        {method: certified accuracy (%) on the grid, shape (m,)}; methods of `LAYERS`.
    linear_to : float, optional
        Where the x axis turns logarithmic, in (0, grid[-1]); None: a linear axis.

    Returns
    -------
    None
    """
    top = float(grid[-1])
    if linear_to is not None and not 0 < linear_to < top:
        raise ValueError(f"linear_to must lie in (0, {top:g}) (the grid's last radius), got {linear_to!r}")
    step = max(1, len(grid) // MARKS_PER_CURVE)
    for k, method in enumerate(m for m in LAYERS if m in curves):
        if linear_to is None:
            every = ((k * step) // len(LAYERS), step)
        else:
            every = (k / (len(LAYERS) * MARKS_PER_CURVE), 1 / MARKS_PER_CURVE)
        ax.plot(grid, curves[method], markevery=every, markersize=6.5, markeredgecolor="white",
                markeredgewidth=0.8,
                **style.line(method, markers=True, **LAYERS[method]))
    style.percent_axis(ax)
    ax.set_xlim(0, top)
    if linear_to is not None:
        _spread_axis(ax, linear_to, top)


def _draw_panel(ax: plt.Axes, res: pd.DataFrame, norm: str, certificate: str,
                sigma: float | None = None) -> dict[str, np.ndarray]:
    """Draw one panel's curves (best over σ, or at `sigma`) on `ax`; a proxy-radius panel where ANCER reaches far
    beyond the other methods gets a symmetric-log x axis (`linear_range`), drawn on a grid refined in its linear
    part. Returns the curves on the panel's own grid (`radius_grid`), which `coinciding` compares."""
    grid = radius_grid(res, certificate)
    curves = accuracy_curves(res, norm, certificate, grid, sigma=sigma)
    linear_to = linear_range(grid, curves) if certificate == "proxy" else None
    if linear_to is None:
        draw_methods(ax, grid, curves)
    else:
        fine = np.union1d(grid, np.linspace(0.0, linear_to * 1.05, LINEAR_POINTS))
        draw_methods(ax, fine, accuracy_curves(res, norm, certificate, fine, sigma=sigma), linear_to)
    return curves


def spread_panels(fig: plt.Figure) -> int:
    """How many of `fig`'s panels have a symmetric-log x axis (`draw_methods` with `linear_to`).

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Returns
    -------
    int
    """
    return sum(ax.get_xscale() == "symlog" for ax in fig.axes)


def scale_note(fig: plt.Figure) -> str:
    """The sentence a caption adds when some of `fig`'s panels have a symmetric-log x axis ("" when none).

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Returns
    -------
    str
    """
    count = spread_panels(fig)
    if not count:
        return ""
    return (f"{'One proxy-radius panel reaches' if count == 1 else f'{count} proxy-radius panels reach'} so far with "
            f"ANCER (more than {FAR:g} times the largest radius Fixed σ and Isotropic DD certify) that "
            f"{'its' if count == 1 else 'their'} x axis is linear only up to that radius (dotted line, "
            f"{LINEAR_SHARE:.0%} of the width) and logarithmic beyond it (\"log →\"): the other methods' curves stay "
            "readable and ANCER's tail stays in view.")


def _legend(fig: plt.Figure, ax: plt.Axes) -> None:
    """One legend for `fig`, from `ax`'s lines, in the registry's order of methods."""
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(style.method(m).label) for m in registry.names() if style.method(m).label in labels]
    fig.legend([handles[i] for i in order], [labels[i] for i in order], loc="outside right upper",
               frameon=False, fontsize=max(style.MIN_FONT, 10))


def best_over_sigma_figure(results: dict[str, pd.DataFrame], setups: dict[str, ImageSetup], norm: str,
                           profile: str = "quick") -> tuple[plt.Figure, list[tuple[str, str, str, str]]]:
    """ANCER Figure 2 (norm "l2") or 3 ("l1"): top-1 certified accuracy, best over σ, one column per dataset.

    Against the ℓp radius (top row) and the proxy radius (bottom row).

    Parameters
    ----------
    results : dict of str to pandas.DataFrame
        Per column, notebook 03's per-input rows (columns norm, sigma, method, radius, radius_proxy, correct, ...).
    setups : dict of str to runs.profiles.ImageSetup
        The columns' setups, by name.
    norm : str
        "l2" or "l1".
    profile : str, default "quick"
        The profile's name.

    Returns
    -------
    figure : matplotlib.figure.Figure
    same : list of (str, str, str, str)
        The coinciding curves (`COINCIDE_TOL`) as (column, certificate, method, method).
    """
    names = list(results)
    fig, axes = plt.subplots(2, len(names), figsize=(3.9 * len(names) + 0.6, 7.4), squeeze=False,
                             layout="constrained")
    same = []
    for j, name in enumerate(names):
        res = results[name][results[name].norm == norm]
        for i, certificate in enumerate(("radius", "proxy")):
            curves = _draw_panel(axes[i, j], res, norm, certificate)
            axes[i, j].set_xlabel(style.radius_label(norm, certificate))
            if j:
                axes[i, j].set_ylabel("")
            same += [(name, certificate, a, b) for a, b in coinciding(curves, COINCIDE_TOL)]
        axes[0, j].set_title(column_title(setups[name], profile))
    fig.suptitle(f"{style.titled(f'ANCER Figure {BEST_FIGURES[norm]}', *names, profile=profile)}:\ntop-1 certified "
                 f"accuracy (best over σ) against the {style.radius_label(norm, 'radius')} and the "
                 f"{style.radius_label(norm, 'proxy')}")
    _legend(fig, axes[0, 0])
    style.stand_in(fig, *names, profile=profile)
    return fig, same


def per_sigma_figure(results: pd.DataFrame, setup: ImageSetup, norm: str, certificate: str,
                     profile: str = "quick") -> tuple[plt.Figure, list[tuple[float, str, str]]]:
    """ANCER Figures 6-13 (App. G) for one column: certified accuracy per training σ.

    Against the ℓp radius (`certificate` "radius") or the proxy radius ("proxy"), one panel per training σ (the σ
    that also initializes Isotropic DD and ANCER).

    Parameters
    ----------
    results : pandas.DataFrame
        The column's per-input rows (columns norm, sigma, method, radius, radius_proxy, correct, ...).
    setup : runs.profiles.ImageSetup
        The column's setup; it must certify at least one σ of `norm`.
    norm : str
        "l2" or "l1".
    certificate : str
        "radius" (the ℓp radius) or "proxy" (ℓΣ2 / ℓΛ1).
    profile : str, default "quick"
        The profile's name.

    Returns
    -------
    figure : matplotlib.figure.Figure
    same : list of (float, str, str)
        The coinciding curves (`COINCIDE_TOL`) as (σ, method, method).
    """
    sigmas = sigmas_of(setup)[norm]
    if not sigmas:
        raise ValueError(f"setup {setup.name!r} certifies no σ for norm {norm!r}")
    res = results[results.norm == norm]
    fig, axes = plt.subplots(1, len(sigmas), figsize=(3.1 * len(sigmas) + 0.6, 3.9), sharey=True, squeeze=False,
                             layout="constrained")
    same = []
    for ax, sigma in zip(axes[0], sigmas):
        curves = _draw_panel(ax, res[res.sigma == sigma], norm, certificate, sigma=sigma)
        ax.set_title(f"σ = {sigma:g}")
        ax.set_xlabel(style.radius_label(norm, certificate))
        same += [(sigma, a, b) for a, b in coinciding(curves, COINCIDE_TOL)]
    for ax in axes[0, 1:]:
        ax.set_ylabel("")
    no = per_sigma_number(setup, norm, certificate)
    fig.suptitle(f"{style.titled(f'ANCER Figure {no}', setup.name, profile=profile)}:\ncertified accuracy against "
                 f"the {style.radius_label(norm, certificate)}, per training σ")
    _legend(fig, axes[0, 0])
    style.stand_in(fig, setup.name, profile=profile)
    return fig, same


def best_caption(norm: str, fig: plt.Figure | None = None) -> str:
    """The gallery caption of ANCER Figure 2 or 3.

    Parameters
    ----------
    norm : str
        "l2" or "l1".
    fig : matplotlib.figure.Figure, optional
        The figure drawn; when some of its panels have a symmetric-log x axis, the caption says so (`scale_note`).

    Returns
    -------
    str
    """
    return _with_scale(f"Top-1 certified accuracy (best over σ) of Fixed σ, Isotropic DD and ANCER against the "
                       f"{style.radius_label(norm, 'radius', tex=False)} (top) and the "
                       f"{style.radius_label(norm, 'proxy', tex=False)} (bottom), one column per dataset. {LAYERS_NOTE}",
                       fig)


def _with_scale(text: str, fig: plt.Figure | None) -> str:
    """`text`, followed by `scale_note(fig)` when `fig` is given and has a symmetric-log panel."""
    note = scale_note(fig) if fig is not None else ""
    return f"{text} {note}" if note else text


def per_sigma_caption(setup: ImageSetup, norm: str, certificate: str, profile: str = "quick",
                      fig: plt.Figure | None = None) -> str:
    """The gallery caption of a per-σ figure (ANCER Figures 6-13).

    Parameters
    ----------
    setup : runs.profiles.ImageSetup
        Notebook 03's column (its paper column is "CIFAR-10" or "ImageNet").
    norm : str
        "l2" or "l1".
    certificate : str
        "radius" (the ℓp radius) or "proxy" (ℓΣ2 / ℓΛ1).
    profile : str, default "quick"
        The profile's name.
    fig : matplotlib.figure.Figure, optional
        The figure drawn; when some of its panels have a symmetric-log x axis, the caption says so (`scale_note`).

    Returns
    -------
    str
    """
    return _with_scale(f"Certified accuracy against the {style.radius_label(norm, certificate, tex=False)} per "
                       f"training σ (also Isotropic DD's starting σ, whose result starts ANCER), on "
                       f"{style.data_caption(setup.name, profile)}. {LAYERS_NOTE}", fig)


def reproduces(number: int, setup: ImageSetup | None = None, profile: str = "quick") -> str:
    """The figure index's "reproduces" entry: "ANCER Figure 6", with the data when it stands in for the paper's.

    E.g. "ANCER Figure 6 (8×8 digits (CNN), extra column; quick profile)"; without a setup, "(stand-in data; quick
    profile)".

    Parameters
    ----------
    number : int
        ANCER's figure number.
    setup : runs.profiles.ImageSetup, optional
        The column drawn.
    profile : str, default "quick"
        The profile's name.

    Returns
    -------
    str
    """
    text = f"ANCER Figure {number}"
    if profile == "quick":
        text += f" ({column_title(setup, profile)}; quick profile)" if setup is not None else " (stand-in data; quick profile)"
    return text


def coincidence_note(same: list[tuple], where: str) -> str:
    """Sentences naming the curves that lie on each other (`COINCIDE_TOL`) in a figure, grouped by the methods involved.

    Parameters
    ----------
    same : list of tuple
        The second value of `best_over_sigma_figure` ((column, certificate, method, method)) or of
        `per_sigma_figure` ((σ, method, method)).
    where : str
        Names the figure.

    Returns
    -------
    str
    """
    if not same:
        return f"In {where}, no two methods' curves lie on each other."
    panels: dict[tuple, list[tuple[str, str]]] = {}
    for *place, a, b in same:
        panels.setdefault(tuple(place), []).append((a, b))
    groups: dict[str, list[str]] = {}
    for place, pairs in panels.items():
        if len(place) == 1:  # per σ
            label = f"σ = {place[0]:g}"
        else:  # (column, certificate)
            name, certificate = place
            label = f"{style.STAND_INS.get(name, (name,))[0]}, {'ℓp' if certificate == 'radius' else 'proxy'} radius"
        what = ("all three methods" if len(pairs) == 3 else
                ", and ".join(f"{style.method(a).label} and {style.method(b).label}" for a, b in pairs))
        groups.setdefault(what, []).append(label)
    text = " ".join(f"{what[0].upper() + what[1:]}: {'; '.join(places)}." for what, places in groups.items())
    return (f"In {where}, curves that lie on each other (on average at most {COINCIDE_TOL:g} percentage point "
            f"apart where either is above 0) are drawn so that all show. {text}")


def figure_note(fig: plt.Figure, same: list[tuple], where: str) -> str:
    """What the reader is told under a figure: the curves that lie on each other (`coincidence_note`) and, when
    some panels have a symmetric-log x axis, why (`scale_note`).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure drawn.
    same : list of tuple
        The coinciding curves the figure function returned.
    where : str
        Names the figure.

    Returns
    -------
    str
    """
    return _with_scale(coincidence_note(same, where), fig)
