"""rancer_figures.py (RANCER Figures 1-3 in the companion's style): column titles in the papers' words,
certified-accuracy curves that match the metric, every method in its own style, a colour bar wherever
colour encodes a value, nothing under the minimum font size, and a clear error for a loss the log
scale cannot show."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from figure_checks import house_style  # noqa: E402, F401  (tests/ is on sys.path under pytest)

from ancer_lite.core.regions import CertifiedRegion  # noqa: E402
from ancer_lite.evaluation.metrics import certified_accuracy  # noqa: E402
from ancer_lite.report import style  # noqa: E402
from ancer_lite.studies import rancer_figures as F  # noqa: E402


def test_column_titles_are_the_papers_words():
    assert F.column_title("mnist_softplus") == "MNIST-5k (softplus CNN)"
    assert F.column_title("digits_softplus") == "8×8 digits (softplus MLP)"
    assert F.column_title("cifar10_rancer", "cifar10") == "CIFAR-10"
    assert F.stand_in_key("cifar10_rancer", "cifar10") == "cifar10"
    with pytest.raises(ValueError, match="not in style.STAND_INS"):
        F.column_title("svhn_softplus", "svhn")


def _results(rng: np.random.Generator, n: int = 30) -> pd.DataFrame:
    frames = []
    for k, m in enumerate(("fixed", "isotropic", "ancer", "rancer")):
        r = rng.uniform(0, 1 + k, n)
        frames.append(pd.DataFrame(dict(method=m, radius=r, radius_proxy=1.5 * r, correct=rng.random(n) < 0.8)))
    return pd.concat(frames, ignore_index=True)


def test_curves_are_the_certified_accuracy_in_percent():
    res = _results(np.random.default_rng(0))
    grid, acc = F.certified_accuracy_curves(res, "radius_proxy")
    top = float((res.radius_proxy * res.correct).max())
    assert grid[0] == 0 and grid[-1] == pytest.approx(1.05 * top)
    g = res[res.method == "ancer"]
    assert np.allclose(acc["ancer"], 100 * certified_accuracy(g.radius_proxy, g.correct, grid))
    with pytest.raises(ValueError, match="column must be a radius column"):
        F.certified_accuracy_curves(res, "volume")


def test_figure3_styles_every_method_and_names_its_axes():
    res = {"digits_softplus": _results(np.random.default_rng(1)), "mnist_softplus": _results(np.random.default_rng(2))}
    fig = F.figure3(res, {n: F.column_title(n) for n in res}, ["digits_softplus", "mnist_softplus"])
    assert style.smallest_font(fig) >= style.MIN_FONT
    axes = fig.axes
    assert [a.get_xlabel() for a in axes[:2]] == [style.radius_label("l2")] * 2
    assert [a.get_xlabel() for a in axes[2:]] == [style.radius_label("l2", "proxy")] * 2
    assert axes[0].get_title() == "8×8 digits (softplus MLP)" and axes[0].get_ylabel() == "certified accuracy (%)"
    for line in axes[0].get_lines():
        key = next(k for k in ("fixed", "isotropic", "ancer", "rancer") if style.method(k).label == line.get_label())
        assert line.get_color() == style.method(key).color and line.get_marker() == style.method(key).marker
    # markers are staggered: no two methods put a marker at the same grid point
    starts = [line.get_markevery().start for line in axes[0].get_lines()]
    assert len(set(starts)) == len(starts)
    assert "standing in for" in fig.get_supxlabel()


def _toy():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Softplus(), torch.nn.Linear(8, 2)).eval()


def _regions() -> dict[str, CertifiedRegion]:
    c = np.array([0.5, 0.5])
    a = np.radians(45.0)
    u = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return {"isotropic": CertifiedRegion(c, np.full(2, 0.08), 1.0, "l2", 1),
            "ancer": CertifiedRegion(c, np.array([0.08, 0.07]), 1.0, "l2", 1),
            "rancer": CertifiedRegion(c, np.array([0.08, 0.3]), 1.0, "l2", 1, u)}


def test_figures_1_and_2_have_colour_bars_and_readable_text():
    model, x0 = _toy(), torch.tensor([0.5, 0.5])
    x = torch.rand(50, 2, generator=torch.Generator().manual_seed(0))
    y = (x[:, 0] > x[:, 1]).long()
    fig = F.figure1(x, y, model, x0, _regions(), 45.0)
    assert style.smallest_font(fig) >= style.MIN_FONT
    labels = [a.get_ylabel() for a in fig.axes]
    assert "base classifier's confidence in class 1" in labels  # the landscape's colour bar
    legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert [s.split(" (")[0] for s in legend[:3]] == ["Isotropic DD", "ANCER", "RANCER"]
    g = np.linspace(-0.1, 0.1, 11)
    aa, bb = np.meshgrid(g, g)
    true, quad = 0.01 + aa ** 2, 0.01 + 0.5 * aa ** 2
    fig = F.figure2(model, x0, np.eye(2), np.array([2.0, 0.1]), (aa, bb, true, quad), _regions())
    assert style.smallest_font(fig) >= style.MIN_FONT
    labels = [a.get_ylabel() for a in fig.axes]
    assert "cross-entropy with class 1 (log scale)" in labels
    assert fig.axes[2].get_yscale() == "log"
    assert len(fig.axes[2].get_yticks()) >= 3  # readable ticks, not two
    with pytest.raises(ValueError, match="must be > 0 on the grid"):
        F.figure2(model, x0, np.eye(2), np.array([2.0, 0.1]), (aa, bb, true, quad - 0.02), _regions())


def test_figure_titles_lead_with_the_paper_figure_and_the_data():
    assert F.figure_title("RANCER Figure 1", "toy2d") == \
        "RANCER Figure 1 on generated 2D data: the ℓ2 regions of Isotropic DD, ANCER and RANCER"
    assert F.figure_title("RANCER Figure 3", "digits_softplus", "mnist_softplus").startswith(
        "RANCER Figure 3 on 8×8 digits (softplus MLP) for CIFAR-10, MNIST-5k (softplus CNN) for CIFAR-10: ")
    with pytest.raises(ValueError, match="label must be one of"):
        F.figure_title("RANCER Figure 9", "toy2d")
    res = {"digits_softplus": _results(np.random.default_rng(1))}
    fig = F.figure3(res, {n: F.column_title(n) for n in res}, ["digits_softplus"])
    assert fig.get_suptitle() == F.figure_title("RANCER Figure 3", "digits_softplus", sep="\n")
    assert fig.get_suptitle().split("\n")[0] == style.titled("RANCER Figure 3", "digits_softplus")
    model, x0 = _toy(), torch.tensor([0.5, 0.5])
    x = torch.rand(20, 2, generator=torch.Generator().manual_seed(0))
    fig = F.figure1(x, (x[:, 0] > x[:, 1]).long(), model, x0, _regions(), 45.0)
    assert fig.get_suptitle().startswith(style.titled("RANCER Figure 1", "toy2d"))


def test_the_landscape_is_light_enough_for_every_region_line():
    """Every colour of the landscape's map is far (in luminance) from each region's line colour, so that Isotropic
    DD's blue ring reads on the landscape's blue end, and RANCER's green on both ends."""
    from matplotlib.colors import to_rgb

    def luminance(rgb) -> float:
        return float(np.dot([0.2126, 0.7152, 0.0722], np.asarray(rgb)[:3]))

    cmap = F.light_landscape_cmap()
    ends = [cmap(0.0), cmap(1.0)]
    for m in F.REGION_ORDER:
        line = luminance(to_rgb(style.method(m).color))
        assert all(luminance(c) - line > 0.25 for c in ends), m
    # the full map's dark blue end is what hid Isotropic DD's ring
    full = plt.get_cmap(style.DIVERGING_CMAP)
    assert luminance(full(1.0)) - luminance(to_rgb(style.method("isotropic").color)) < 0.25
    assert F.light_landscape_cmap(0.0)(1.0) == pytest.approx(full(1.0))
    with pytest.raises(ValueError, match="lighten must be in"):
        F.light_landscape_cmap(1.0)


def test_the_landscape_draws_its_boundary_dashed_and_lists_it():
    model, x0 = _toy(), torch.tensor([0.5, 0.5])
    x = torch.rand(20, 2, generator=torch.Generator().manual_seed(0))
    fig = F.figure1(x, (x[:, 0] > x[:, 1]).long(), model, x0, _regions(), 45.0)
    ax = fig.axes[1]
    assert ax.images[-1].get_cmap().name == f"{style.DIVERGING_CMAP}_light"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[-1] == "decision boundary (confidence 1/2)"
