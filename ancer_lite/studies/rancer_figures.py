"""Notebook 06's figures in the companion's visual language (`style`): RANCER Figure 1 (the 2D regions of
Isotropic DD, ANCER and RANCER), Figure 2 (the loss along the input Hessian's eigenvectors against its
second-order model) and Figure 3 (certified accuracy against the ℓ2 radius and the ℓΣ2 proxy radius).

Each function draws one figure from values computed elsewhere (`rancer_2d`, `rancer_study`) and returns
it; the notebook saves it with `figures.save_fig`.
"""
from __future__ import annotations

from typing import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib import patheffects
from matplotlib.colors import ListedColormap, LogNorm
from matplotlib.contour import ContourSet
from matplotlib.lines import Line2D
from matplotlib.ticker import LogLocator, NullFormatter

from ..core.regions import CertifiedRegion
from ..evaluation.metrics import certified_accuracy
from ..methods.registry import ANCER, FIXED, ISOTROPIC, RANCER
from ..report import style
from ..report.figures import draw_region, plot_landscape

#: the order in which the 2D regions are drawn and listed (the largest last, on top)
REGION_ORDER = (ISOTROPIC, ANCER, RANCER)
#: line widths of the 2D regions: Isotropic DD's ball is drawn wider than ANCER's ellipse drawn over it,
#: so that the two (nearly equal at a 45° stripe) both stay visible
REGION_WIDTH = {ISOTROPIC: 5.0, ANCER: 1.8, RANCER: 2.5}
#: the regions outlined in white, which parts them from the landscape (not ANCER's, drawn inside Isotropic DD's
#: wider outline, which the white would cover)
REGION_HALO = (ISOTROPIC, RANCER)
#: colours of the two classes of the 2D data, the dark red and blue of `style.DIVERGING_CMAP` (the landscape's map)
CLASS_COLOURS = ("#b2182b", "#2166ac")
#: the share of `style.DIVERGING_CMAP` left out of the landscape, half at each (dark) end, so that the regions'
#: lines in their method colours (`style.METHODS`: Isotropic DD's blue among them) read on both of its ends
LANDSCAPE_LIGHTEN = 0.7
#: the decision boundary (confidence 1/2) on the lightened landscape, whose middle is white
BOUNDARY_STYLE = dict(color="#444444", linestyle=(0, (4, 2)), linewidth=1.2)
#: the RANCER Figure 3 curves: radius columns and their axis labels (ℓ2 radius, ℓΣ2 proxy radius)
CURVES = (("radius", "radius"), ("radius_proxy", "proxy"))
#: the methods of Figure 3, drawn in this order (Fixed σ last: dashed, so that a curve it equals shows)
FIGURE3_ORDER = (RANCER, ANCER, ISOTROPIC, FIXED)
#: what each figure shows, after its lead naming the paper figure and the data (`style.titled`)
SUBJECTS = {"RANCER Figure 1": "the ℓ2 regions of Isotropic DD, ANCER and RANCER",
            "RANCER Figure 2": "the loss along the input Hessian's eigenvectors",
            "RANCER Figure 3": "certified accuracy against the ℓ2 and the proxy radius"}


def figure_title(label: str, *columns: str, profile: str = "quick", sep: str = ": ") -> str:
    """A figure's title: `style.titled`'s lead (the paper figure and the data drawn) and what the figure shows.

    Parameters
    ----------
    label : str
        The paper figure, a key of `SUBJECTS`.
    *columns : str
        The data drawn, keys of `style.STAND_INS`.
    profile : str, default "quick"
        The profile the figure was drawn in.
    sep : str, default ": "
        Between the lead and the subject ("\\n": on two lines, for a lead naming several columns).

    Returns
    -------
    str
        E.g. "RANCER Figure 1 on generated 2D data: the ℓ2 regions of Isotropic DD, ANCER and RANCER".
    """
    if label not in SUBJECTS:
        raise ValueError(f"label must be one of {sorted(SUBJECTS)}, got {label!r}")
    return f"{style.titled(label, *columns, profile=profile)}{sep}{SUBJECTS[label]}"


def column_title(name: str, dataset: str | None = None) -> str:
    """A column's name in the papers' words, e.g. "mnist_softplus" -> "MNIST-5k (softplus CNN)" (`style.STAND_INS`).

    Parameters
    ----------
    name : str
        The column's name.
    dataset : str, optional
        Its dataset, which names a column `style.STAND_INS` does not list.

    Returns
    -------
    str
    """
    key = stand_in_key(name, dataset)
    return style.STAND_INS[key][0]


def stand_in_key(name: str, dataset: str | None = None) -> str:
    """The `style.STAND_INS` key of a column: its own name when listed, else its dataset's.

    Parameters
    ----------
    name : str
        The column's name.
    dataset : str, optional
        Its dataset.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        When neither is a key of `style.STAND_INS`.
    """
    if name in style.STAND_INS:
        return name
    if dataset is not None and dataset in style.STAND_INS:
        return dataset
    raise ValueError(f"column {name!r} (dataset {dataset!r}) is not in style.STAND_INS {sorted(style.STAND_INS)}")


def light_landscape_cmap(lighten: float = LANDSCAPE_LIGHTEN) -> ListedColormap:
    """The middle of `style.DIVERGING_CMAP`, its darkest share `lighten` cut off at both ends: the landscape under
    the regions' lines, light red to white to light blue.

    Parameters
    ----------
    lighten : float, default `LANDSCAPE_LIGHTEN`
        The share of the colour map left out, half at each end, in [0, 1).

    Returns
    -------
    matplotlib.colors.ListedColormap
    """
    if not 0.0 <= lighten < 1.0:
        raise ValueError(f"lighten must be in [0, 1) (the share of the colour map left out), got {lighten!r}")
    half = 0.5 * lighten
    colours = plt.get_cmap(style.DIVERGING_CMAP)(np.linspace(half, 1.0 - half, 256))
    return ListedColormap(colours, name=f"{style.DIVERGING_CMAP}_light")


def _landscape(fig: plt.Figure, ax: plt.Axes, model: torch.nn.Module, center: np.ndarray,
               half_width: float) -> None:
    """The base classifier's confidence in class 1 around `center`, lightened (`light_landscape_cmap`), its decision
    boundary dashed grey (`BOUNDARY_STYLE`), with its colour bar."""
    plot_landscape(ax, model, 1, center, half_width)
    image = ax.images[-1]
    image.set_cmap(light_landscape_cmap())
    boundary = [c for c in ax.collections if isinstance(c, ContourSet)][-1]
    boundary.set_color(BOUNDARY_STYLE["color"])
    boundary.set_linestyle(BOUNDARY_STYLE["linestyle"])
    boundary.set_linewidth(BOUNDARY_STYLE["linewidth"])
    style.colorbar(fig, image, ax, "base classifier's confidence in class 1", shrink=0.85)
    ax.grid(False)


def _regions(ax: plt.Axes, center: np.ndarray, regions: Mapping[str, CertifiedRegion], with_proxy: bool) -> None:
    """Draw the ℓ2 regions of `REGION_ORDER` at `center`, labelled with their proxy radii when `with_proxy`."""
    for m in REGION_ORDER:
        r = regions[m]
        label = style.method(m).label + (rf" ($\tilde{{R}}$ = {r.radius_proxy:.3f})" if with_proxy else "")
        halo = [patheffects.withStroke(linewidth=REGION_WIDTH[m] + 2.0, foreground="white")] if m in REGION_HALO else []
        draw_region(ax, center, r.semi_axes, "l2", rotation=r.rotation,
                    **style.line(m, label=label, linestyle="-", lw=REGION_WIDTH[m], path_effects=halo))
    ax.plot(*center, "o", color="black", ms=4, label="the certified point", path_effects=[patheffects.withStroke(linewidth=3, foreground="white")])
    ax.add_line(Line2D([], [], label="decision boundary (confidence 1/2)", **BOUNDARY_STYLE))


def figure1(x: torch.Tensor, y: torch.Tensor, model: torch.nn.Module, center: torch.Tensor,
            regions: Mapping[str, CertifiedRegion], stripe_angle: float, half_width: float = 0.3,
            profile: str = "quick") -> plt.Figure:
    """RANCER Figure 1: (a) the 2D data; (b) the ℓ2 certified regions of Isotropic DD, ANCER and RANCER.

    The regions (`rancer_2d.three_regions`) are drawn at `center` over the base classifier's confidence in class 1,
    in a window of `half_width` around it.

    Parameters
    ----------
    x : torch.Tensor, shape (n, 2)
        The 2D data.
    y : torch.Tensor, shape (n,)
        Their labels, in {0, 1}.
    model : torch.nn.Module
        The base classifier.
    center : torch.Tensor, shape (2,)
        The certified point.
    regions : mapping of str to regions.CertifiedRegion
        "isotropic", "ancer" and "rancer" -> region.
    stripe_angle : float
        The stripe's direction, degrees (for the labels).
    half_width : float, default 0.3
        Half the window's width.
    profile : str, default "quick"
        The profile's name, written in the data caption (`style.stand_in`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.9))
    ax = axes[0]
    x, y = np.asarray(x), np.asarray(y)
    for k, name in ((0, "class 0"), (1, "class 1 (the stripe)")):
        ax.scatter(x[y == k, 0], x[y == k, 1], s=4, color=CLASS_COLOURS[k], label=name, rasterized=True)
    ax.set(title=f"(a) the data: a {stripe_angle:g}° stripe", xlim=(0, 1), ylim=(0, 1), aspect="equal",
           xlabel="$x_1$", ylabel="$x_2$")
    style.legend(ax, loc="upper left", markerscale=3, frameon=True)
    ax = axes[1]
    c = center.numpy()
    _landscape(fig, ax, model, c, half_width)
    _regions(ax, c, regions, with_proxy=True)
    ax.set(title="(b) ℓ2 certified regions at the stripe's centre", xlabel="$x_1$", ylabel="$x_2$")
    style.legend(ax, loc="lower right", frameon=True, framealpha=0.92)
    fig.suptitle(figure_title("RANCER Figure 1", "toy2d", profile=profile))
    style.stand_in(fig, "toy2d", profile=profile)
    return fig


def figure2(model: torch.nn.Module, center: torch.Tensor, rotation: np.ndarray, eigenvalues: np.ndarray,
            grid: tuple[np.ndarray, ...], regions: Mapping[str, CertifiedRegion], half_width: float = 0.3, arrow: float = 0.1,
            profile: str = "quick") -> plt.Figure:
    """RANCER Figure 2 at `center`: the loss along the input Hessian's eigenvectors against its second-order model.

    (a) The true cross-entropy with class 1 on the plane of the input Hessian's top two eigenvectors v1, v2, (b) its
    second-order model (RANCER Eq. 4), both on one logarithmic colour scale; (c) both along v1 and along v2 through
    the point; (d) the three certified regions with v1 and v2 drawn from the point.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier.
    center : torch.Tensor, shape (2,)
        The point.
    rotation : numpy.ndarray, shape (2, 2)
        The eigenvectors v1, v2 as columns.
    eigenvalues : numpy.ndarray, shape (2,)
        Their eigenvalues.
    grid : tuple of numpy.ndarray
        (a, b, true, quadratic) from `rancer_2d.loss_quadratic_grid`, each (m, m); the losses must be > 0.
    regions : mapping of str to regions.CertifiedRegion
        "isotropic", "ancer" and "rancer" -> region.
    half_width : float, default 0.3
        Half the window's width in (d).
    arrow : float, default 0.1
        Length of the eigenvector arrows in (d).
    profile : str, default "quick"
        The profile's name, written in the data caption (`style.stand_in`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    aa, bb, true, quad = (np.asarray(g, np.float64) for g in grid)
    both = np.concatenate([true.ravel(), quad.ravel()])
    if not (both > 0).all():
        raise ValueError("figure2 draws the loss on a logarithmic scale: the true loss and its second-order model "
                         f"must be > 0 on the grid, got a minimum of {both.min():.3g}")
    norm = LogNorm(vmin=10 ** np.floor(np.log10(both.min())), vmax=10 ** np.ceil(np.log10(both.max())))
    fig, axes = plt.subplots(2, 2, figsize=(10.5, 9.2))
    image = None
    for ax, z, title in zip(axes[0], (true, quad), ("(a) true loss", "(b) second-order model (Eq. 4)")):
        image = ax.pcolormesh(aa, bb, z, norm=norm, cmap=style.SEQUENTIAL_CMAP, shading="auto", rasterized=True)
        ax.plot(0, 0, "o", color="black", ms=4)
        ax.set(title=title, xlabel="along $v_1$", ylabel="along $v_2$", aspect="equal")
        ax.grid(False)
    style.colorbar(fig, image, list(axes[0]), "cross-entropy with class 1 (log scale)", shrink=0.85)
    ax = axes[1, 0]
    mid = aa.shape[0] // 2
    colours = {"v_1": "black", "v_2": style.LEVELS[2]}
    for k, (name, t, q) in enumerate((("v_1", true[mid, :], quad[mid, :]), ("v_2", true[:, mid], quad[:, mid]))):
        along = f"along ${name}$ ($\\lambda_{k + 1}$ = {eigenvalues[k]:.3g})"
        ax.plot(aa[mid, :], t, color=colours[name], lw=4, alpha=0.45, label=f"true, {along}")
        ax.plot(aa[mid, :], q, color=colours[name], lw=1.6, linestyle="--", label=f"second order, {along}")
    ax.set_yscale("log")
    ax.set_ylim(norm.vmin, norm.vmax)
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=12))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(lambda v, _: f"{v:g}")
    ax.set(xlabel="distance from the point along the eigenvector", ylabel="cross-entropy with class 1",
           title="(c) along each eigenvector")
    style.legend(ax, loc="upper center", frameon=True)
    ax = axes[1, 1]
    c = center.numpy()
    _landscape(fig, ax, model, c, half_width)
    _regions(ax, c, regions, with_proxy=False)
    for k, name in enumerate(("v_1", "v_2")):
        d = arrow * np.asarray(rotation, np.float64)[:, k]
        ax.annotate("", xy=(c[0] + d[0], c[1] + d[1]), xytext=(c[0], c[1]),
                    arrowprops=dict(arrowstyle="->", color="black", lw=1.5))
        ax.annotate(f"${name}$", xy=(c[0] + 1.3 * d[0], c[1] + 1.3 * d[1]), ha="center", va="center",
                    fontsize=12, path_effects=[patheffects.withStroke(linewidth=3, foreground="white")])
    ax.set(title="(d) the three regions and the eigenvectors", xlabel="$x_1$", ylabel="$x_2$")
    style.legend(ax, loc="lower right", frameon=True, framealpha=0.92)
    fig.suptitle(figure_title("RANCER Figure 2", "toy2d", profile=profile))
    style.stand_in(fig, "toy2d", profile=profile)
    return fig


def certified_accuracy_curves(results: pd.DataFrame, column: str, points: int = 241
                              ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Certified accuracy (%) of each method of `results` on one grid of radii (RANCER Figure 3).

    The grid runs from 0 to 5% past the largest certified radius of `column`.

    Parameters
    ----------
    results : pandas.DataFrame
        Per-input rows with columns method, `column` and correct.
    column : str
        The radius column: "radius" or "radius_proxy".
    points : int, default 241
        Grid points.

    Returns
    -------
    grid : numpy.ndarray, shape (points,)
    accuracy : dict of str to numpy.ndarray
        {method: accuracy (%) on the grid, shape (points,)}.
    """
    if column not in results:
        raise ValueError(f"column must be a radius column of results, got {column!r}")
    top = float((results[column] * results.correct.astype(bool)).max())
    grid = np.linspace(0.0, max(1.05 * top, 1e-6), points)
    out = {m: 100 * certified_accuracy(g[column], g.correct, grid) for m, g in results.groupby("method", sort=False)}
    return grid, out


def figure3(results: Mapping[str, pd.DataFrame], titles: Mapping[str, str], stand_ins: list[str],
            profile: str = "quick") -> plt.Figure:
    """RANCER Figure 3: certified accuracy (%) against the ℓ2 radius (top) and the ℓΣ2 proxy radius (bottom).

    One column per dataset column; markers are staggered so that equal curves all show.

    Parameters
    ----------
    results : mapping of str to pandas.DataFrame
        Per dataset column, per-input rows (columns method, radius, radius_proxy, correct) of Fixed σ, Isotropic
        DD, ANCER and RANCER (`rancer_study.all_methods`).
    titles : mapping of str to str
        Each column's title.
    stand_ins : list of str
        The `style.STAND_INS` keys named under the figure.
    profile : str, default "quick"
        The profile's name, written in the data caption (`style.stand_in`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(2, len(results), figsize=(5.2 * len(results), 8.2), squeeze=False)
    for j, (name, r) in enumerate(results.items()):
        for i, (column, certificate) in enumerate(CURVES):
            ax = axes[i, j]
            grid, acc = certified_accuracy_curves(r, column)
            step = max(len(grid) // 8, len(FIGURE3_ORDER))
            for k, m in enumerate(FIGURE3_ORDER):
                ax.plot(grid, acc[m], **style.line(m, markers=True, markevery=slice(k * step // 4, None, step)))
            ax.set(xlabel=style.radius_label("l2", certificate), title=titles[name], xlim=(0, grid[-1]))
            style.percent_axis(ax)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    order = [labels.index(style.method(m).label) for m in (FIXED, ISOTROPIC, ANCER, RANCER)]
    fig.legend([handles[k] for k in order], [labels[k] for k in order], loc="outside right center",
               ncol=1, frameon=False, fontsize=10)
    fig.suptitle(figure_title("RANCER Figure 3", *stand_ins, profile=profile, sep="\n"))
    style.stand_in(fig, *stand_ins, profile=profile)
    return fig
