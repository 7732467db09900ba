"""The one figure helper: every figure goes to figures/<name>.pdf and .png with deterministic
metadata (no timestamps or version strings), so rerunning a notebook reproduces the files byte for
byte. Names say which paper figure they reproduce, e.g. `ancer_fig01c_l2_isotropic_vs_anisotropic`.

When a notebook runs under `make all` (ANCER_NOTEBOOK set), the figure is also recorded in
figures/index.tsv (name, notebook, paper figure), from which figures/README.md is generated.
"""
from __future__ import annotations

import io
import os
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from ..core.files import REPO_ROOT, write_atomic  # noqa: E402
from ..core.stages import FIGURES, timed  # noqa: E402
from ..evaluation.verify import region_boundary_2d  # noqa: E402

INDEX_COLUMNS = ["name", "notebook", "reproduces", "caption"]
#: resolution of the PNG shown inline in executed notebooks (the saved PNG uses save_fig's `dpi`)
INLINE_DPI = 80
_NAME = re.compile(r"^(ancer|rancer|ucan|blog|extra)_[a-z0-9_]+$")


class SavedFigure(list):
    """The written paths [pdf, png] of a figure, shown as their names only.

    A notebook cell that ends with `save_fig(...)` thus never prints an absolute path.

    Parameters
    ----------
    paths : list of pathlib.Path
        [pdf, png].
    """

    def __repr__(self) -> str:
        return "saved " + ", ".join(p.name for p in self)

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # IPython's display
        printer.text(repr(self))


def figures_dir() -> Path:
    """Where figures go: figures/ at the repository root, or $ANCER_FIGURES_DIR.

    The paper profile sets it to figures/paper.

    Returns
    -------
    pathlib.Path
        The folder (not created).
    """
    return Path(os.environ.get("ANCER_FIGURES_DIR", REPO_ROOT / "figures"))


@timed(FIGURES)
def save_fig(fig: plt.Figure, name: str, reproduces: str, caption: str = "", dpi: int = 150,
             show: bool = True, close: bool = True) -> SavedFigure:
    """Write `fig` as <name>.pdf and <name>.png in `figures_dir()`, with deterministic metadata, and show it.

    With `show`, inside a Jupyter kernel, the figure is displayed in the output of the calling cell as a PNG at
    `INLINE_DPI`, so that executed notebooks show every figure they save. When `ANCER_NOTEBOOK` is set (under
    `make all`), the figure is recorded in the folder's index.tsv (name, notebook, paper figure, caption).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    name : str
        The files' stem, '<paper>_<figNN...>_<what>' in lowercase snake_case with paper in
        ancer/rancer/ucan/blog/extra, e.g. "ancer_fig01c_l2_isotropic_vs_anisotropic".
    reproduces : str
        The paper figure or table it corresponds to, e.g. "ANCER Figure 1c" (not blank).
    caption : str
        One or two sentences saying what the figure shows (used by figures/README.md and the site's gallery).
    dpi : int
        The saved PNG's resolution.
    show : bool
        Whether to display the figure inline.
    close : bool
        Whether to close the figure afterwards.

    Returns
    -------
    SavedFigure
        The written paths [pdf, png].
    """
    if not _NAME.match(name):
        raise ValueError(f"name must look like '<paper>_<figNN...>_<what>' in lowercase snake_case "
                         f"(paper in ancer/rancer/ucan/blog/extra), got {name!r}")
    if not reproduces.strip():
        raise ValueError("reproduces must name the paper figure or table this corresponds to")
    out = figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    pdf, png = out / f"{name}.pdf", out / f"{name}.png"
    with matplotlib.rc_context({"svg.hashsalt": "ancer", "pdf.compression": 6}):
        fig.savefig(pdf, metadata={"Creator": None, "Producer": None, "CreationDate": None}, bbox_inches="tight")
        fig.savefig(png, metadata={"Software": None}, dpi=dpi, bbox_inches="tight")
    notebook = os.environ.get("ANCER_NOTEBOOK")
    if notebook:
        _record(out / "index.tsv", name, notebook, reproduces, caption.strip())
    if show:
        show_inline(fig)
    if close:
        plt.close(fig)
    return SavedFigure([pdf, png])


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the notebook requirements
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def inline_png(fig: plt.Figure, dpi: int | None = None) -> bytes:
    """`fig` as PNG bytes, with no timestamp or version metadata.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    dpi : int or None
        The resolution; None: `INLINE_DPI`.

    Returns
    -------
    bytes
        The PNG file's content.
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi or INLINE_DPI, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def show_inline(fig: plt.Figure) -> bool:
    """Display `fig` in the current cell's output when running inside a Jupyter kernel.

    The figure is shown as a deterministic PNG at `INLINE_DPI`, independent of the matplotlib backend.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.

    Returns
    -------
    bool
        Whether it was displayed.
    """
    if not _in_kernel():
        return False
    from IPython.display import Image, display

    display(Image(data=inline_png(fig)))
    return True


def read_index(index: Path) -> pd.DataFrame:
    """figures/index.tsv as a table with `INDEX_COLUMNS`.

    An index without a caption column gets empty captions.

    Parameters
    ----------
    index : pathlib.Path
        The index file, tab-separated, with at least the columns name, notebook and reproduces.

    Returns
    -------
    pandas.DataFrame
        The rows with `INDEX_COLUMNS`; an empty table when the file does not exist.
    """
    if not index.exists():
        return pd.DataFrame(columns=INDEX_COLUMNS)
    try:
        df = pd.read_csv(index, sep="\t", dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ValueError(f"{index}: not a tab-separated figure index ({err})") from err
    missing = [c for c in ("name", "notebook", "reproduces") if c not in df.columns]
    if missing:
        raise ValueError(f"{index}: figure index lacks the columns {missing}; expected {INDEX_COLUMNS}")
    if "caption" not in df.columns:
        df["caption"] = ""
    return df[INDEX_COLUMNS]


def _record(index: Path, name: str, notebook: str, reproduces: str, caption: str = "") -> None:
    df = read_index(index)
    df = df[df["name"] != name]
    df = pd.concat([df, pd.DataFrame([[name, notebook, reproduces, caption]], columns=INDEX_COLUMNS)])
    write_atomic(index, df.sort_values("name").to_csv(sep="\t", index=False))


def write_index_readme(directory: Path | None = None) -> Path:
    """Write figures/README.md: each figure file, the notebook that makes it and the paper figure it reproduces.

    Parameters
    ----------
    directory : pathlib.Path or None
        The figures folder holding index.tsv; None: `figures_dir()`.

    Returns
    -------
    pathlib.Path
        The README's path.
    """
    directory = directory or figures_dir()
    df = read_index(directory / "index.tsv")
    lines = ["# Figures", "",
             "Generated by `make all` from `figures/index.tsv`; every figure is written as PDF and PNG by",
             "`ancer_lite.report.figures.save_fig`.", "",
             "| figure | notebook | reproduces | what it shows |", "| --- | --- | --- | --- |"]
    for r in df.sort_values(["notebook", "name"]).itertuples():
        lines.append(f"| `{r.name}` ([pdf]({r.name}.pdf), [png]({r.name}.png)) | `notebooks/{r.notebook}.py` "
                     f"| {r.reproduces} | {r.caption} |")
    path = directory / "README.md"
    write_atomic(path, "\n".join(lines) + "\n")
    return path


def plot_landscape(ax: plt.Axes, model: torch.nn.Module, label: int, center: np.ndarray, half_width: float,
                   resolution: int = 200) -> None:
    """Draw the base classifier's confidence f^y around `center`, with its decision boundary f^y = 1/2 in white.

    Blue is confident in `label`, as in ANCER Figure 1.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    model : torch.nn.Module
        A 2D base classifier: (B, 2) points to logits (B, num_classes).
    label : int
        The class y whose softmax confidence is drawn.
    center : numpy.ndarray, shape (2,)
        The view's centre.
    half_width : float
        Half the side of the square view.
    resolution : int
        Grid points per axis.
    """
    import numpy as np
    import torch

    c = np.asarray(center, dtype=np.float64)
    g = [np.linspace(c[i] - half_width, c[i] + half_width, resolution) for i in range(2)]
    xx, yy = np.meshgrid(*g)
    pts = torch.tensor(np.stack([xx.ravel(), yy.ravel()], axis=1), dtype=torch.float32)
    with torch.no_grad():
        conf = torch.softmax(model(pts), dim=1)[:, label].numpy().reshape(xx.shape)
    ax.imshow(conf, extent=(g[0][0], g[0][-1], g[1][0], g[1][-1]), origin="lower", cmap="RdBu",
              vmin=0, vmax=1, interpolation="bilinear")
    ax.contour(xx, yy, conf, levels=[0.5], colors="white", linewidths=2)
    ax.set_aspect("equal")


def draw_region(ax: plt.Axes, center: np.ndarray, scales: np.ndarray, norm: str,
                rotation: np.ndarray | None = None, **style) -> None:
    """Draw the outline of a 2D certified region: an ellipse (l2) or a generalized cross-polytope (l1).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    center : numpy.ndarray, shape (2,)
        The region's centre.
    scales : numpy.ndarray, shape (2,)
        The semi-axes, >= 0.
    norm : str
        `regions.L1` or `regions.L2`.
    rotation : numpy.ndarray, shape (2, 2), or None
        An orthogonal U: the semi-axes lie along its columns (RANCER); None: axis-aligned.
    **style
        Passed to `ax.plot`.
    """
    c = np.asarray(center, dtype=np.float64)
    pts = region_boundary_2d(np.zeros_like(c), scales, norm)
    if rotation is not None:
        pts = pts @ np.asarray(rotation, dtype=np.float64).T
    ax.plot(pts[:, 0] + c[0], pts[:, 1] + c[1], **style)
