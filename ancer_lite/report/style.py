"""The companion's one visual language: a colour and marker per method, certified accuracy in %,
axis labels that name the norm and the certificate, the stand-in data named on every figure, colour
bars wherever colour encodes a value, and nothing under 8 pt at slide size.

Every notebook figure is drawn through these helpers, so that a figure copied onto a slide looks like
its neighbours. Usage::

    from ancer_lite.report import style
    style.apply()                                   # once per notebook (done by `style.setup_notebook`)
    fig, ax = plt.subplots()
    ax.plot(r, 100 * acc, **style.line("ancer"))    # colour, marker, label of ANCER
    style.percent_axis(ax)                          # y axis: "certified accuracy (%)", 0-100
    ax.set_xlabel(style.radius_label("l2", "proxy"))  # "ℓΣ2 proxy radius"
    style.stand_in(fig, "digits")                   # "8×8 digits (MLP) standing in for CIFAR-10 · quick profile"

The palette is Okabe and Ito's colour-blind-safe set (Okabe & Ito 2008, "Color Universal Design"),
with a darker olive in place of its yellow, which is unreadable as a line on white.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.ticker import PercentFormatter

from ..methods import registry
from ..methods.registry import ANCER, FIXED, ISOTROPIC, RANCER

#: the smallest font size anywhere in a figure (points, at the figure's saved size)
MIN_FONT = 8.0


@dataclass(frozen=True)
class MethodStyle:
    """How one method looks in every figure of the companion, and what tables call it: `label` in legends and
    tables; `short`, where set, in a table whose columns are already one paper's methods (UCAN's kinds)."""
    label: str
    color: str
    marker: str
    linestyle: str = "-"
    short: str | None = None


#: One entry per method of the three papers. Keys are the package's method names (`registry.METHODS`, whose labels
#: these are, "average_sigma", and UCAN's noise-parameter-generator kinds prefixed with "ucan_").
METHODS: dict[str, MethodStyle] = {
    FIXED: MethodStyle(registry.method(FIXED).label, "#555555", "o", "--"),
    ISOTROPIC: MethodStyle(registry.method(ISOTROPIC).label, "#0072B2", "s"),
    ANCER: MethodStyle(registry.method(ANCER).label, "#D55E00", "^"),
    RANCER: MethodStyle(registry.method(RANCER).label, "#009E73", "D"),
    "average_sigma": MethodStyle("Average Σ", "#8F7F00", "v", ":"),
    "ucan_isotropic": MethodStyle("Isotropic (Cohen)", "#555555", "o", "--"),
    "ucan_isotropic_ft": MethodStyle("Isotropic (Cohen), fine-tuned", "#8C8C8C", "h", "-.", short="Isotropic, fine-tuned"),
    "ucan_pattern": MethodStyle("UCAN pattern-fixed", "#E69F00", "P", short="Pattern-fixed"),
    "ucan_universal": MethodStyle("UCAN universal", "#56B4E9", "X", short="Universal"),
    "ucan_input": MethodStyle("UCAN input-dependent", "#CC79A7", "*", short="Input-dependent"),
}

#: sequential colours for series that differ by a level (σ, λ, N, dimension), light to dark
LEVELS = ("#9ecae1", "#4292c6", "#2171b5", "#08519c", "#08306b")
#: colour maps: a value with a natural zero (σ, |δ|) and a signed value (landscape, μ)
SEQUENTIAL_CMAP = "viridis"
DIVERGING_CMAP = "RdBu"

#: The quick profile's stand-in data: what each column is and which paper dataset it replaces.
#: The softplus twins are notebook 06's RANCER columns, and RANCER evaluates CIFAR-10 only; where a twin is read beside
#: its ReLU column (notebook 05), the figure passes `stands_for` with the twin's dataset.
STAND_INS: dict[str, tuple[str, str | None]] = {
    "digits": ("8×8 digits (MLP)", "CIFAR-10"),
    "digits_cnn": ("8×8 digits (CNN)", None),
    "mnist": ("MNIST-5k (CNN)", "ImageNet"),
    "digits_softplus": ("8×8 digits (softplus MLP)", "CIFAR-10"),
    "mnist_softplus": ("MNIST-5k (softplus CNN)", "CIFAR-10"),
    "toy2d": ("generated 2D data", None),
    "cifar10": ("CIFAR-10", None),
    "imagenet": ("ImageNet", None),
}

_NORM_SUB = {"l1": "1", "l2": "2", "linf": "∞"}


def apply() -> None:
    """Set matplotlib's defaults for the companion: readable sizes (nothing under `MIN_FONT`), light
    grids, tight layout, and a modest resolution for the PNG shown inline in the notebooks."""
    mpl.rcParams.update({
        "figure.dpi": 80,            # inline PNG: small notebooks; saved PNGs use save_fig's dpi
        "savefig.dpi": 150,
        "figure.constrained_layout.use": True,
        "font.size": 10,
        "axes.titlesize": 10,
        "axes.labelsize": 10,
        "xtick.labelsize": 9,
        "ytick.labelsize": 9,
        "legend.fontsize": 8.5,
        "legend.title_fontsize": 9,
        "figure.titlesize": 11,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "lines.linewidth": 1.8,
        "lines.markersize": 5,
        "image.cmap": SEQUENTIAL_CMAP,
        "svg.hashsalt": "ancer",
    })


#: the style of a registered method that has no entry in `METHODS`: black, its registry label
OTHER = MethodStyle("", "#000000", "x", "-.")


def method(key: str) -> MethodStyle:
    """The style of method `key`: its entry of `METHODS`, or for another registered method (`registry.METHODS`)
    `OTHER` under the method's label.

    Parameters
    ----------
    key : str
        A key of `METHODS` or a registered method's name (`registry.METHODS`).

    Returns
    -------
    MethodStyle
        The method's label, colour, marker and line style.

    Raises
    ------
    ValueError
        When `key` is neither.
    """
    if key in METHODS:
        return METHODS[key]
    if key in registry.METHODS:
        return MethodStyle(registry.method(key).label, OTHER.color, OTHER.marker, OTHER.linestyle)
    raise ValueError(f"method must be one of {sorted(METHODS)} or a registered method, got {key!r}")


def line(key: str, markers: bool = False, **overrides: object) -> dict:
    """Keyword arguments for `ax.plot` / `ax.step` drawing method `key` (colour, line style, label;
    markers when `markers`). `overrides` win (e.g. label=..., alpha=...).

    Parameters
    ----------
    key : str
        The method, as `method` takes it.
    markers : bool
        Whether to add the method's marker.
    **overrides : object
        Further or replacing keyword arguments for `ax.plot`.

    Returns
    -------
    dict
        {"color", "linestyle", "label"[, "marker"]} updated with `overrides`.
    """
    m = method(key)
    kw: dict = {"color": m.color, "linestyle": m.linestyle, "label": m.label}
    if markers:
        kw["marker"] = m.marker
    kw.update(overrides)
    return kw


def points(key: str, **overrides: object) -> dict:
    """Keyword arguments for `ax.scatter` drawing method `key`.

    Parameters
    ----------
    key : str
        The method, as `method` takes it.
    **overrides : object
        Further or replacing keyword arguments for `ax.scatter` (they win).

    Returns
    -------
    dict
        {"color", "marker", "label"} updated with `overrides`.
    """
    m = method(key)
    kw: dict = {"color": m.color, "marker": m.marker, "label": m.label}
    kw.update(overrides)
    return kw


def percent_axis(ax: plt.Axes, axis: str = "y", label: str = "certified accuracy (%)",
                 limits: tuple[float, float] | None = (0, 100)) -> None:
    """Label `axis` as a percentage. Plot the values in % (100 × fraction); this sets the label, the
    limits (0-100 by default, a little margin kept) and a "%"-free tick format.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to format, in place.
    axis : str
        "x" or "y".
    label : str
        The axis label.
    limits : tuple of (float, float), optional
        The axis range in %, widened by 2 % of its span on each side; None: the limits are left as they are.

    Raises
    ------
    ValueError
        When `axis` is neither "x" nor "y".
    """
    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(PercentFormatter(xmax=100, decimals=0, symbol=""))
    target.set_label_text(label)
    if limits is not None:
        lo, hi = limits
        pad = 0.02 * (hi - lo)
        (ax.set_ylim if axis == "y" else ax.set_xlim)(lo - pad, hi + pad)


def norm_symbol(norm: str, anisotropic: bool = False, tex: bool = True) -> str:
    """The norm's symbol: ℓ2, ℓ1, ℓ∞, and with `anisotropic` ANCER's ℓΣ2 (ellipsoid) and ℓΛ1
    (generalized cross-polytope). With `tex` (for figures) as matplotlib mathtext, e.g.
    r"$\\ell^{\\Sigma}_2$"; otherwise plain Unicode (for tables and prose).

    Parameters
    ----------
    norm : str
        "l1", "l2" or "linf".
    anisotropic : bool
        Whether to give ANCER's anisotropic symbol (norm "l1" or "l2" only).
    tex : bool
        Whether to return matplotlib mathtext (True) or plain Unicode (False).

    Returns
    -------
    str
        The symbol, e.g. "ℓ2", "ℓΣ2", "ℓΛ1", "ℓ∞", or its mathtext.

    Raises
    ------
    ValueError
        For another norm, or `anisotropic` with "linf".
    """
    if norm not in _NORM_SUB:
        raise ValueError(f"norm must be one of {sorted(_NORM_SUB)}, got {norm!r}")
    if anisotropic and norm not in ("l1", "l2"):
        raise ValueError(f"anisotropic certificates exist for norm 'l1' and 'l2' only, got {norm!r}")
    shape = ("Σ" if norm == "l2" else "Λ") if anisotropic else ""
    if not tex:
        return "ℓ" + shape + _NORM_SUB[norm]
    sub = {"l1": "1", "l2": "2", "linf": r"\infty"}[norm]
    sup = {"Σ": r"^{\Sigma}", "Λ": r"^{\Lambda}", "": ""}[shape]
    return rf"$\ell{sup}_{{{sub}}}$"


def radius_label(norm: str, certificate: str = "radius", tex: bool = True) -> str:
    """Axis label naming the norm and the certificate:
    certificate="radius" → "ℓ2 radius" (the largest ℓp ball inside the certified region);
    "proxy" → "ℓΣ2 proxy radius" / "ℓΛ1 proxy radius" (ANCER §5);
    "alm" → "ALM, ℓ2 (UCAN's average margin)" for norm l2.

    Parameters
    ----------
    norm : str
        "l1", "l2" or "linf" ("l1" or "l2" for "proxy"), as `norm_symbol` takes it.
    certificate : str
        "radius", "proxy" or "alm".
    tex : bool
        Whether the norm's symbol is matplotlib mathtext (True) or plain Unicode (False), as in `norm_symbol`.

    Returns
    -------
    str
        The axis label.

    Raises
    ------
    ValueError
        For another certificate, or a norm `norm_symbol` refuses.
    """
    if certificate == "radius":
        return f"{norm_symbol(norm, tex=tex)} radius"
    if certificate == "proxy":
        return f"{norm_symbol(norm, anisotropic=True, tex=tex)} proxy radius"
    if certificate == "alm":
        return f"ALM, {norm_symbol(norm, tex=tex)} (UCAN's average margin)"
    raise ValueError(f"certificate must be 'radius', 'proxy' or 'alm', got {certificate!r}")


def data_caption(column: str, profile: str = "quick", stands_for: str | None = None) -> str:
    """The data a figure shows, named: "8×8 digits (MLP) standing in for CIFAR-10 · quick profile".
    `stands_for` overrides the dataset of `STAND_INS` that the column stands in for (UCAN reports MNIST,
    for which notebook 07's MNIST-5k stands in, where ANCER's figures use it for ImageNet).

    Parameters
    ----------
    column : str
        A key of `STAND_INS`.
    profile : str
        The profile the figure was drawn in; only "quick" names the dataset stood in for.
    stands_for : str, optional
        The dataset the column stands in for; None: its `STAND_INS` entry (which may be None: no "standing in").

    Returns
    -------
    str
        "<data>[ standing in for <dataset>] · <profile> profile".

    Raises
    ------
    ValueError
        When `column` is not a key of `STAND_INS`.
    """
    if column not in STAND_INS:
        raise ValueError(f"column must be one of {sorted(STAND_INS)}, got {column!r}")
    what, default = STAND_INS[column]
    stands_for = default if stands_for is None else stands_for
    text = f"{what} standing in for {stands_for}" if stands_for and profile == "quick" else what
    return f"{text} · {profile} profile"


def stand_in(fig: plt.Figure, *columns: str, profile: str = "quick", extra: str = "",
             stands_for: Mapping[str, str] | None = None) -> None:
    """Write the data caption (one or more columns, joined by " | ") along the bottom of `fig`;
    `stands_for` maps a column to the dataset it stands in for where that differs from `STAND_INS`.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, captioned in place (its `supxlabel`, at `MIN_FONT` + 0.5 pt).
    *columns : str
        The data columns drawn (at least one), keys of `STAND_INS`.
    profile : str
        The profile the figure was drawn in, as in `data_caption`.
    extra : str
        Text appended after the profile (" · <extra>"); "": none.
    stands_for : mapping of str to str, optional
        Per column (one of `columns`), the dataset it stands in for; None: every column's `STAND_INS` entry.

    Raises
    ------
    ValueError
        With no column, or when `stands_for` names a column not drawn.
    """
    if not columns:
        raise ValueError("stand_in needs at least one column name")
    stands_for = dict(stands_for or {})
    unknown = sorted(set(stands_for) - set(columns))
    if unknown:
        raise ValueError(f"stands_for names columns not drawn: {unknown}; the figure's columns are {list(columns)}")
    text = " | ".join(data_caption(c, profile, stands_for.get(c)).rsplit(" · ", 1)[0] for c in columns) \
        + f" · {profile} profile"
    if extra:
        text += f" · {extra}"
    fig.supxlabel(text, fontsize=MIN_FONT + 0.5, color="#444444")


def titled(label: str, *columns: str, profile: str = "quick", stands_for: Mapping[str, str] | None = None) -> str:
    """A figure title's lead that names the data it was drawn on, so a cropped figure still says it: "ANCER
    Figure 2 on 8×8 digits (MLP) for CIFAR-10, MNIST-5k (CNN) for ImageNet". `label` is the paper's figure
    ("ANCER Figure 2"); `columns` are `STAND_INS` keys; `stands_for` as in `stand_in`. Paper profiles (real data)
    name the data without "for".

    Parameters
    ----------
    label : str
        The paper figure this one reproduces, non-empty.
    *columns : str
        The data columns drawn (at least one), keys of `STAND_INS`.
    profile : str
        The profile the figure was drawn in ("quick": stand-ins).
    stands_for : mapping of str to str, optional
        Per column, the dataset it stands in for where that differs from `STAND_INS`.

    Returns
    -------
    str
        "<label> on <data>[, <data>…]".
    """
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"label must name the paper figure (a non-empty string), got {label!r}")
    if not columns:
        raise ValueError("titled needs at least one column name")
    stands_for = dict(stands_for or {})
    data = []
    for c in columns:
        text = data_caption(c, profile, stands_for.get(c)).rsplit(" · ", 1)[0]
        data.append(text.replace(" standing in for ", " for "))
    return f"{label} on {', '.join(data)}"


def colorbar(fig: plt.Figure, mappable: mpl.cm.ScalarMappable, ax: plt.Axes | list, label: str,
             **kwargs: object) -> mpl.colorbar.Colorbar:
    """A labelled colour bar for `mappable` beside `ax` (an Axes or a list of Axes).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure the bar is added to.
    mappable : matplotlib.cm.ScalarMappable
        What the colours encode (an image, a scatter's collection, ...).
    ax : matplotlib.axes.Axes or list of Axes
        The axes the bar takes its room from.
    label : str
        The bar's label, naming the value it encodes; must not be empty.
    **kwargs : object
        Further keyword arguments for `Figure.colorbar`.

    Returns
    -------
    matplotlib.colorbar.Colorbar
        The labelled colour bar.
    """
    if not label:
        raise ValueError("a colour bar needs a label naming the value it encodes")
    cb = fig.colorbar(mappable, ax=ax, **kwargs)
    cb.set_label(label)
    return cb


def legend(ax: plt.Axes, **kwargs: object):
    """A legend with the companion's sizes (never under `MIN_FONT`).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes whose legend is drawn.
    **kwargs : object
        Keyword arguments for `ax.legend`; by default fontsize is the larger of `MIN_FONT` and the numeric
        rcParams["legend.fontsize"] (8.5 when that is a name such as "small") and frameon is False.

    Returns
    -------
    matplotlib.legend.Legend
        The legend.
    """
    kwargs.setdefault("fontsize", max(MIN_FONT, mpl.rcParams["legend.fontsize"]
                                      if isinstance(mpl.rcParams["legend.fontsize"], (int, float)) else 8.5))
    kwargs.setdefault("frameon", False)
    return ax.legend(**kwargs)


def smallest_font(fig: plt.Figure) -> float:
    """The smallest font size (points) of any visible text in `fig` (for checks of `MIN_FONT`).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, drawn first (`fig.canvas.draw`) so that every text exists.

    Returns
    -------
    float
        The smallest size among its visible, non-blank texts; inf when it has none.
    """
    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in fig.findobj(mpl.text.Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes) if sizes else float("inf")
