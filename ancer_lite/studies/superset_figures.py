"""Notebook 05's figures in the companion's style (`style`): ANCER Figures 4 and 5 (App. A.1-A.2),
14 (App. G.3), 15 and 16 (App. H), drawn from the results of `superset_study`.

Each function returns a matplotlib Figure with the data named under it (`style.stand_in`); the
notebook saves it with `figures.save_fig`.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import patheffects
from matplotlib.colors import LogNorm, TwoSlopeNorm
from matplotlib.ticker import MaxNLocator

from ..methods.registry import ANCER, ISOTROPIC
from ..report import style
from .superset_findings import DomainCheck, figure5_holds
from .superset_study import GapFactors, HessianLandscape, SafePerturbation, SigmaMaps, SmallPerturbation

#: Figure 5 draws δ on this fixed symmetric scale (pixel intensity; images live in [0, 1]), so that
#: the size of δ reads against the image's own range
DELTA_SCALE = 1.0
L2, L2_SIGMA = style.norm_symbol("l2"), style.norm_symbol("l2", anisotropic=True)
_HALO = [patheffects.withStroke(linewidth=3.6, foreground="white")]


def display_name(column: str) -> str:
    """A column's name in the papers' words: "mnist" -> "MNIST-5k (CNN)" (`style.STAND_INS`).

    Parameters
    ----------
    column : str
        A column's name, or one with a dataset prefix of `style.STAND_INS` (see `data_column`).

    Returns
    -------
    str
    """
    return style.STAND_INS[data_column(column)][0]


def data_column(column: str) -> str:
    """The `style.STAND_INS` key naming a column's data: the column itself, or its dataset prefix.

    A paper-profile "cifar10_softplus" is CIFAR-10.

    Parameters
    ----------
    column : str
        A column's name; it or its prefix before the first "_" must be a key of `style.STAND_INS`.

    Returns
    -------
    str
    """
    if column in style.STAND_INS:
        return column
    prefix = column.split("_")[0]
    if prefix in style.STAND_INS:
        return prefix
    raise ValueError(f"column {column!r} names no data of style.STAND_INS ({sorted(style.STAND_INS)})")


def stands_for(columns) -> dict[str, str]:
    """The datasets that `columns` stand in for where that differs from `style.STAND_INS`: a softplus twin stands in
    for what the column it twins stands in for ("mnist_softplus": notebook 03's MNIST column stands in for ImageNet).

    Parameters
    ----------
    columns : iterable of str
        Column names (`data_column`).

    Returns
    -------
    dict of str to str
        By `data_column` key; empty when every column stands in for its `STAND_INS` dataset.
    """
    out = {}
    for c in columns:
        key, twin = data_column(c), c.removesuffix("_softplus")
        if c.endswith("_softplus") and twin in style.STAND_INS and style.STAND_INS[twin][1] is not None:
            if style.STAND_INS[twin][1] != style.STAND_INS[key][1]:
                out[key] = style.STAND_INS[twin][1]
    return out


def _stand_in(fig: plt.Figure, columns, profile: str, extra: str = "") -> None:
    """Write the data caption of `columns` (by their `data_column`, each once) along the bottom of `fig`."""
    columns = list(columns)
    style.stand_in(fig, *dict.fromkeys(data_column(c) for c in columns), profile=profile, extra=extra,
                   stands_for=stands_for(columns))


def _title(label: str, columns, profile: str) -> str:
    """`style.titled`'s lead for `columns` (by their `data_column`, each once)."""
    columns = list(columns)
    return style.titled(label, *dict.fromkeys(data_column(c) for c in columns), profile=profile,
                        stands_for=stands_for(columns))


def _clean(ax: plt.Axes) -> None:
    """Hide an image axis' ticks and grid, keeping its frame."""
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(True)


def landscape_figure(land: HessianLandscape, profile: str = "quick") -> plt.Figure:
    """ANCER Figure 4 (App. A.1): f^y around one input on two planes of eigenvectors of the Hessian of f^y.

    The planes are (ν1, ν2) and (ν1, νn) of the eigenvectors of the Hessian of f^y (by |λ|), with Isotropic DD's ℓ2
    ball and ANCER's ℓΣ2 ellipsoid cut by each plane, and f^y = 1/2 dashed.

    Parameters
    ----------
    land : superset_study.HessianLandscape
        The landscape (`superset_study.hessian_landscape`).
    profile : str, default "quick"
        The profile's name, written in the data caption (`style.stand_in`).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per plane.
    """
    fig, axes = plt.subplots(1, len(land.planes), figsize=(4.6 * len(land.planes) + 1.2, 4.9), squeeze=False)
    axes = axes[0]
    t = np.linspace(0, 2 * np.pi, 256)
    image = None
    for ax, plane, letter in zip(axes, land.planes, "abcdefgh"):
        h = plane.half
        image = ax.imshow(plane.f, extent=(-h, h, -h, h), origin="lower", cmap=style.SEQUENTIAL_CMAP, vmin=0, vmax=1)
        if plane.f.min() < 0.5 < plane.f.max():
            ax.contour(plane.a, plane.b, plane.f, levels=[0.5], colors="white", linewidths=1.6, linestyles="--")
        ax.plot(plane.iso_radius * np.cos(t), plane.iso_radius * np.sin(t), path_effects=_HALO, lw=2.2,
                **style.line(ISOTROPIC, label=f"Isotropic DD: {L2} ball"))
        ax.plot(plane.ellipse[:, 0], plane.ellipse[:, 1], path_effects=_HALO, lw=2.2,
                **style.line(ANCER, label=f"ANCER: {L2_SIGMA} ellipsoid (slice)"))
        ax.set_xlabel(f"distance along {plane.axes[0]} (ℓ2)")
        ax.set_ylabel(f"distance along {plane.axes[1]} (ℓ2)")
        which = "largest two |λ|" if plane.axes[1] == "ν2" else "largest and smallest |λ|"
        ax.set_title(f"({letter}) {plane.axes[0]} and {plane.axes[1]}: {which}")
        ax.set_aspect("equal")
        ax.grid(False)
    style.colorbar(fig, image, list(axes), r"$f^y$: base classifier's probability of the true class $y$", shrink=0.85)
    handles, labels = axes[0].get_legend_handles_labels()
    handles.append(plt.Line2D([], [], color="#444444", ls="--", lw=1.6))
    labels.append("$f^y = 1/2$")
    fig.legend(handles, labels, loc="outside right upper", frameon=False)
    fig.suptitle(f"{_title('ANCER Figure 4', [land.column], profile)}\nlandscape of $f^y$ along eigenvectors of the "
                 f"Hessian of $f^y$ (test input #{land.test_index}, label {land.label})")
    _stand_in(fig, [land.column], profile)
    return fig


def perturbation_figure(p: SafePerturbation, profile: str = "quick", domain: DomainCheck | None = None) -> plt.Figure:
    """ANCER Figure 5 (App. A.2): x, δ and x + δ, with δ inside ANCER's ℓΣ2 region and outside Isotropic DD's ℓ2 ball.

    x and x + δ share the grey scale of pixel intensities [0, 1]; δ is drawn on the fixed symmetric scale
    ±`DELTA_SCALE` (values beyond either range saturate, marked by the colour bars' arrows). With `domain`, a second
    row draws how far ANCER's semi-axes overshoot the pixel range (semi-axis over the distance to the far edge of
    [0, 1], log scale) and the largest change inside both ANCER's region and [0, 1]^d, and the title says whether
    the paper's point holds (`superset_findings.figure5_holds`).

    Parameters
    ----------
    p : superset_study.SafePerturbation
        The perturbation (`superset_study.safe_perturbation`); x and δ of shape (C, H, W).
    profile : str, default "quick"
        The profile's name, written in the data caption (`style.stand_in`).
    domain : superset_findings.DomainCheck, optional
        `superset_findings.domain_check` at the same input.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels, or six with `domain`.
    """
    rows = 1 if domain is None else 2
    fig, axes = plt.subplots(rows, 3, figsize=(10.8, 3.9 * rows + (0.5 if domain is not None else 0)), squeeze=False)
    x = p.x[0]
    grey = dict(cmap="gray", vmin=0.0, vmax=1.0)

    def change(row: int, d: np.ndarray, what: str, prediction: str) -> None:
        shown = axes[row, 1].imshow(d, cmap=style.DIVERGING_CMAP, vmin=-DELTA_SCALE, vmax=DELTA_SCALE)
        pixels = axes[row, 2].imshow(x + d, **grey)
        axes[row, 1].set_title(what)
        axes[row, 2].set_title(prediction)
        out_d = np.abs(d).max() > DELTA_SCALE
        out_x = (x + d).min() < -1e-9 or (x + d).max() > 1 + 1e-9
        style.colorbar(fig, shown, axes[row, 1], r"$\delta_i$ (pixel intensity)", extend="both" if out_d else "neither",
                       shrink=0.8)
        style.colorbar(fig, pixels, axes[row, 2], "pixel intensity", extend="both" if out_x else "neither", shrink=0.8)

    axes[0, 0].imshow(x, **grey)
    axes[0, 0].set_title(f"x: test input #{p.test_index}, label {p.label}")
    change(0, p.delta.reshape(p.x.shape)[0],
           rf"δ: $\|\delta\|_2$ = {p.norm_delta:.2f}, $\|\delta\|_{{\Sigma,2}}$ = {p.region_norm:.2f}",
           f"x + δ: predicted {p.prediction} (N = {p.samples:,})")
    lead = _title("ANCER Figure 5", [p.column], profile)
    what = (f"a change inside ANCER's {L2_SIGMA} region, outside Isotropic DD's {L2} ball (radius {p.iso_radius:.2f})")
    if domain is None:
        fig.suptitle(f"{lead}\n{what}")
    else:
        ratio = np.log10(domain.ratio[0])
        norm = TwoSlopeNorm(vcenter=0.0, vmin=min(float(ratio.min()), -0.01), vmax=max(float(ratio.max()), 0.01))
        over = axes[1, 0].imshow(ratio, cmap="PuOr_r", norm=norm)
        axes[1, 0].set_title(f"ANCER's semi-axis / max(x, 1 − x):\n> 1 on {domain.overshoot} of {domain.pixels} pixels")
        style.colorbar(fig, over, axes[1, 0], "log10 of the ratio", shrink=0.8)
        change(1, domain.delta[0], f"largest δ inside the region and [0, 1]^d:\n‖δ‖₂ = {domain.norm_delta:.2f}",
               f"x + δ (inside [0, 1]^d):\n{domain.moved} pixels moved to the far edge")
        verdict = "holds" if figure5_holds(p, domain) else "fails here"
        fig.suptitle(f"{lead}, δ built as the paper builds it: the paper's point {verdict}\n(top) {what}: "
                     f"‖δ‖₂ = {p.norm_delta:.2f}; (bottom) most of ANCER's region lies outside the pixel range [0, 1]")
    for ax in axes.ravel():
        _clean(ax)
    _stand_in(fig, [p.column], profile)
    return fig


def small_perturbation_figure(p: SmallPerturbation, profile: str = "quick") -> plt.Figure:
    """ANCER Figure 5 (App. A.2) at a small change: x, δ and x + δ, with δ the largest change that moves no pixel by
    more than `p.cap` inside ANCER's ℓΣ2 region and [0, 1]^d (`superset_study.small_perturbation`).

    x and x + δ share the grey scale of pixel intensities [0, 1]; δ is drawn on the symmetric scale ±`p.cap` (its
    own budget: on Figure 5's scale of the whole pixel range it would not show).

    Parameters
    ----------
    p : superset_study.SmallPerturbation
        The change; x and δ of shape (C, H, W).
    profile : str, default "quick"
        The profile's name, written in the data caption (`style.stand_in`).

    Returns
    -------
    matplotlib.figure.Figure
        Three panels.
    """
    fig, axes = plt.subplots(1, 3, figsize=(10.8, 4.4))
    x, d = p.x[0], p.delta.reshape(p.x.shape)[0]
    grey = dict(cmap="gray", vmin=0.0, vmax=1.0)
    budget = f"{p.cap * 255:.0f}/255"
    axes[0].imshow(x, **grey)
    axes[0].set_title(f"x: test input #{p.test_index}")
    shown = axes[1].imshow(d, cmap=style.DIVERGING_CMAP, vmin=-p.cap, vmax=p.cap)
    axes[1].set_title(f"δ: every pixel within ±{budget}\n"
                      rf"$\|\delta\|_2$ = {p.norm_delta:.2f}, $\|\delta\|_{{\Sigma,2}}$ = {p.region_norm:.2f}")
    style.colorbar(fig, shown, axes[1], rf"$\delta_i$ (pixel intensity, ±{budget})", shrink=0.8)
    pixels = axes[2].imshow(x + d, **grey)
    axes[2].set_title(f"x + δ: predicted {p.prediction}\n(N = {p.samples:,})")
    style.colorbar(fig, pixels, axes[2], "pixel intensity", shrink=0.8)
    for ax in axes:
        _clean(ax)
    verdict = "holds" if p.holds else "fails"
    fig.suptitle(f"{_title('ANCER Figure 5', [p.column], profile)}, at a small change: the paper's point {verdict}\n"
                 f"a change of at most {budget} per pixel inside ANCER's {L2_SIGMA} region, outside Isotropic DD's "
                 f"{L2} ball (radius {p.iso_radius:.2f})")
    _stand_in(fig, [p.column], profile)
    return fig


def gap_factor_figure(factors: dict[str, GapFactors], sigma: float, profile: str = "quick") -> plt.Figure:
    """ANCER Figure 14 (App. G.3): histograms of the σ-factor and of the gap factor of the ℓ2 radius.

    The σ-factor is σˣ of Isotropic DD and min σᵢˣ of ANCER, the gap factor r(x, σˣ) and r(x, Σˣ), over the test
    inputs both certify; dashed: medians. Isotropic DD is drawn filled and ANCER as an outline, so that neither
    hides the other.

    Parameters
    ----------
    factors : dict of str to superset_study.GapFactors
        Per column (`superset_study.column_gap_factors`).
    sigma : float
        The initial ℓ2 σ of the factors (for the title).
    profile : str, default "quick"
        The profile's name, written in the data caption (`style.stand_in`).

    Returns
    -------
    matplotlib.figure.Figure
        Two rows (σ-factor, gap factor), one column per entry of `factors`.
    """
    fig, axes = plt.subplots(2, len(factors), figsize=(4.3 * len(factors), 6.6), squeeze=False)
    for j, (name, g) in enumerate(factors.items()):
        for ax, (a, b) in zip(axes[:, j], ((g.sigma_iso, g.sigma_min_ancer), (g.gap_iso, g.gap_ancer))):
            lo, hi = min(a.min(), b.min()), max(a.max(), b.max())
            bins = np.linspace(lo, hi if hi > lo else lo + 1e-6, 26)
            ax.hist(a, bins, color=style.method(ISOTROPIC).color, alpha=0.35, label="Isotropic DD")
            ax.hist(b, bins, histtype="step", lw=2.0, color=style.method(ANCER).color, label="ANCER")
            ax.axvline(np.median(a), color=style.method(ISOTROPIC).color, ls=(0, (4, 2)), lw=2.0)
            ax.axvline(np.median(b), color=style.method(ANCER).color, ls=(0, (1.5, 1.5)), lw=2.0)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes[0, j].set_title(f"{display_name(name)}: {len(g.gap_iso)} of {g.inputs} inputs")
        axes[0, j].set_xlabel("σ-factor: σˣ (Isotropic DD), min σᵢˣ (ANCER)")
        axes[1, j].set_xlabel("gap factor: r(x, σˣ), r(x, Σˣ)")
    for ax in axes[:, 0]:
        ax.set_ylabel("test inputs")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    handles += [plt.Line2D([], [], color=style.method(ISOTROPIC).color, ls=(0, (4, 2)), lw=2.0),
                plt.Line2D([], [], color=style.method(ANCER).color, ls=(0, (1.5, 1.5)), lw=2.0)]
    labels += ["median, Isotropic DD", "median, ANCER"]
    fig.legend(handles, labels, loc="outside right upper", frameon=False)
    fig.suptitle(f"{_title('ANCER Figure 14', factors, profile)}\nℓ2 radius = σ-factor × gap factor, split for "
                 f"Isotropic DD and ANCER (initial σ = {sigma:g})")
    _stand_in(fig, factors, profile)
    return fig


def sigma_map_figure(maps: list[SigmaMaps], sigma: float, profile: str = "quick") -> plt.Figure:
    """ANCER Figure 15 (App. H): test inputs x (top), Isotropic DD's σ (middle) and ANCER's per-pixel σ (bottom).

    Each row of each column has its own colour scale: Isotropic DD's σ (one value per image, also written on it) on
    a linear scale over the images shown, ANCER's per-pixel σ on a log scale from its smallest value to its 99th
    percentile (larger values saturate), so that neither row is one flat patch on the other's scale.

    Parameters
    ----------
    maps : list of superset_study.SigmaMaps
        Per column (`superset_study.sigma_maps`): x and ANCER's σ of shape (k, H, W), Isotropic DD's σ (k,).
    sigma : float
        The initial ℓ2 σ (for the title).
    profile : str, default "quick"
        The profile's name, written in the data caption (`style.stand_in`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    picks = max(len(m.index) for m in maps)
    fig = plt.figure(figsize=(4.9 * len(maps), 6.0))
    subs = fig.subfigures(1, len(maps), wspace=0.02, squeeze=False)[0]
    for sub, m in zip(subs, maps):
        axes = sub.subplots(3, picks, squeeze=False)
        iso_lo, iso_hi = float(m.sigma_iso.min()), float(m.sigma_iso.max())
        pad = max(0.05 * iso_hi, 1e-6) if iso_hi - iso_lo < 1e-3 * max(iso_hi, 1e-12) else 0.0
        iso_norm = dict(vmin=iso_lo - pad, vmax=iso_hi + pad)
        lo = float(m.sigma_ancer.min())
        hi = max(float(np.percentile(m.sigma_ancer, 99)), lo * (1 + 1e-3))
        log = LogNorm(vmin=lo, vmax=hi)
        iso_image = image = None
        for k in range(len(m.index)):
            axes[0, k].imshow(m.x[k], cmap="gray", vmin=0, vmax=1)
            iso_image = axes[1, k].imshow(np.full_like(m.sigma_ancer[k], m.sigma_iso[k]), cmap=style.SEQUENTIAL_CMAP,
                                          **iso_norm)
            axes[1, k].text(0.5, 0.5, f"σ = {m.sigma_iso[k]:.3g}", transform=axes[1, k].transAxes, ha="center",
                            va="center", fontsize=style.MIN_FONT + 1, path_effects=_HALO)
            image = axes[2, k].imshow(m.sigma_ancer[k], norm=log, cmap=style.SEQUENTIAL_CMAP)
            axes[0, k].set_title(f"#{int(m.index[k])}")
            for r in range(3):
                _clean(axes[r, k])
        for r, label in enumerate(("x", "σ (Isotropic DD)", "Σ (ANCER)")):
            axes[r, 0].set_ylabel(label)
        style.colorbar(sub, iso_image, list(axes[1, :]), r"$\sigma$ (Isotropic DD)", shrink=0.9)
        extend = "max" if m.sigma_ancer.max() > hi else "neither"
        bar = style.colorbar(sub, image, list(axes[2, :]), r"$\sigma_i$ (ANCER, log)", extend=extend, shrink=0.9)
        ticks = np.geomspace(lo, hi, 4)
        bar.ax.minorticks_off()
        bar.set_ticks(ticks, labels=[f"{t:.2g}" for t in ticks])
        sub.suptitle(display_name(m.column))
    fig.suptitle(f"{_title('ANCER Figure 15', [m.column for m in maps], profile)}\noptimized ℓ2 smoothing "
                 f"parameters per pixel (initial σ = {sigma:g}); test inputs by index; one colour scale per row")
    _stand_in(fig, [m.column for m in maps], profile)
    return fig


def anisotropy_figure(spread: dict[str, np.ndarray], sigma: float, profile: str = "quick") -> plt.Figure:
    """ANCER Figure 16 (App. H): the distribution of max σᵢ / min σᵢ of ANCER's parameters over the test inputs.

    Dashed: the median.

    Parameters
    ----------
    spread : dict of str to numpy.ndarray
        Per column, the spread of each test input, shape (N,) (`superset_study.spreads`).
    sigma : float
        The initial ℓ2 σ (for the title).
    profile : str, default "quick"
        The profile's name, written in the data caption (`style.stand_in`).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per column.
    """
    fig, axes = plt.subplots(1, len(spread), figsize=(4.3 * len(spread), 3.8), squeeze=False)
    for ax, (name, r) in zip(axes[0], spread.items()):
        ax.hist(r, 26, color=style.method(ANCER).color, alpha=0.85)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        med = float(np.median(r))
        ax.axvline(med, color="black", ls="--", lw=1.6, label=f"median {med:.2f}")
        ax.set_xlabel("max σᵢ / min σᵢ of ANCER's Σˣ")
        ax.set_title(f"{display_name(name)}: {len(r)} inputs")
        style.legend(ax, loc="best")
    axes[0, 0].set_ylabel("test inputs")
    fig.suptitle(f"{_title('ANCER Figure 16', spread, profile)}\nhow anisotropic ANCER's ℓ2 parameters are "
                 f"(initial σ = {sigma:g})")
    _stand_in(fig, spread, profile)
    return fig
