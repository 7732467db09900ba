"""Notebook 03's figures (ancer_lite.studies.image_figures): the companion's style, the paper's figure numbers,
names and words, and no series hidden under another."""
from __future__ import annotations

import inspect

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from figure_checks import house_style, texts  # noqa: E402, F401  (tests/ is on sys.path under pytest)
from test_image_study import fake_results  # noqa: E402  (tests/ is on sys.path under pytest)

from ancer_lite.models.small import SmallCNN  # noqa: E402
from ancer_lite.report import style  # noqa: E402
from ancer_lite.runs.profiles import get_profile  # noqa: E402
from ancer_lite.studies import image_figures as F  # noqa: E402
from ancer_lite.studies import image_study as study  # noqa: E402

QUICK = {s.name: s for s in get_profile("quick").images}


def test_names_and_numbers_follow_the_paper():
    assert F.best_figure_name("l2") == "ancer_fig02_l2_certified_accuracy"
    assert F.best_figure_name("l1") == "ancer_fig03_l1_certified_accuracy"
    # CIFAR-10 column: 6, 8, 10, 12; ImageNet column: the next number
    assert F.per_sigma_name(QUICK["digits"], "l2", "radius") == "ancer_fig06_l2_per_sigma_digits"
    assert F.per_sigma_name(QUICK["mnist"], "l2", "proxy") == "ancer_fig09_l2_proxy_per_sigma_mnist"
    assert F.per_sigma_name(QUICK["mnist"], "l1", "proxy") == "ancer_fig13_l1_proxy_per_sigma_mnist"
    assert F.per_sigma_name(QUICK["digits_cnn"], "l1", "radius") == "ancer_fig10_l1_per_sigma_digits_cnn"
    with pytest.raises(ValueError, match="norm, certificate"):
        F.per_sigma_number(QUICK["digits"], "linf", "radius")
    assert F.column_title(QUICK["digits_cnn"], "quick") == "8×8 digits (CNN), extra column"
    assert F.column_title(QUICK["mnist"], "quick") == "MNIST-5k (CNN), for ImageNet"
    assert "digits_cnn" not in F.reproduces(6, QUICK["digits_cnn"])


def test_cnn_description_matches_the_model():
    defaults = inspect.signature(SmallCNN).parameters
    channels, hidden = defaults["channels"].default, defaults["hidden"].default
    assert study.MODEL_DESCRIPTION["cnn"] == f"CNN (conv {channels[0]} → conv {channels[1]} → fc {hidden})"


def test_best_over_sigma_figure_style():
    results = {name: fake_results(sigmas=(0.25, 0.5), seed=k) for k, name in enumerate(("digits", "mnist"))}
    fig, same = F.best_over_sigma_figure(results, QUICK, "l2")
    axes = fig.axes
    assert len(axes) == 4
    for ax in axes:
        assert len(ax.get_lines()) == 3
        assert ax.get_ylim()[1] > 100 > 90 > ax.get_ylim()[0] >= -3  # accuracy in %
    labels = [ax.get_xlabel() for ax in axes]
    assert labels.count(style.radius_label("l2", "radius")) == 2 and labels.count(style.radius_label("l2", "proxy")) == 2
    words = " ".join(texts(fig))
    assert "standing in for CIFAR-10" in words and "standing in for ImageNet" in words and "ANCER Figure 2" in words
    assert "digits_cnn" not in words and "mnist" not in words
    assert style.smallest_font(fig) >= style.MIN_FONT
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["Fixed σ", "Isotropic DD", "ANCER"]
    assert min(t.get_fontsize() for t in legend.get_texts()) >= style.MIN_FONT
    assert all(len(s) == 4 for s in same)


def test_coinciding_series_stay_visible_and_are_reported():
    base = fake_results(sigmas=QUICK["digits"].sigmas_l2)
    same_as_iso = base[base.method == "isotropic"].assign(method="ancer")  # ANCER identical to Isotropic DD
    res = pd.concat([base[base.method != "ancer"], same_as_iso], ignore_index=True)
    fig, same = F.per_sigma_figure(res, QUICK["digits"], "l2", "radius")
    assert [ax.get_title() for ax in fig.axes] == ["σ = 0.12", "σ = 0.25", "σ = 0.5", "σ = 1"]
    assert {(a, b) for _, a, b in same} >= {("isotropic", "ancer")}
    for ax in fig.axes:
        lines = {line.get_label(): line for line in ax.get_lines()}
        iso, ancer, fixed = lines["Isotropic DD"], lines["ANCER"], lines["Fixed σ"]
        # the lower of two coinciding lines is wider, the upper one drawn later; markers staggered
        assert ancer.get_linewidth() > iso.get_linewidth() > fixed.get_linewidth()
        assert ancer.get_zorder() < iso.get_zorder() < fixed.get_zorder()
        assert fixed.get_linestyle() == "--"
        assert len({line.get_markevery()[0] for line in lines.values()}) == 3
    note = F.coincidence_note(same, "Figure 6")
    assert "Isotropic DD and ANCER: σ = 0.12; σ = 0.25; σ = 0.5; σ = 1." in note
    assert F.coincidence_note([], "Figure 6") == "In Figure 6, no two methods' curves lie on each other."
    three = [(0.5, "fixed", "isotropic"), (0.5, "fixed", "ancer"), (0.5, "isotropic", "ancer")]
    assert "All three methods: σ = 0.5." in F.coincidence_note(three, "Figure 6")
    best = [("digits", "radius", "fixed", "isotropic"), ("mnist", "proxy", "fixed", "isotropic")]
    assert ("Fixed σ and Isotropic DD: 8×8 digits (MLP), ℓp radius; MNIST-5k (CNN), proxy radius."
            in F.coincidence_note(best, "Figure 2"))


def test_titles_lead_with_the_data_they_were_drawn_on():
    results = {name: fake_results(sigmas=(0.25, 0.5, 1.0), seed=k) for k, name in enumerate(("digits", "mnist"))}
    fig, _ = F.best_over_sigma_figure(results, QUICK, "l1")
    assert fig._suptitle.get_text().startswith(style.titled("ANCER Figure 3", "digits", "mnist") + ":")
    fig, _ = F.per_sigma_figure(results["mnist"], QUICK["mnist"], "l2", "proxy")
    assert fig._suptitle.get_text().startswith("ANCER Figure 9 on MNIST-5k (CNN) for ImageNet:")


def test_far_reaching_ancer_proxy_panels_get_a_symlog_axis():
    grid = F.np.linspace(0, 20, 201)
    near = {"fixed": (grid < 1) * 90.0, "isotropic": (grid < 2) * 90.0, "ancer": (grid < 5) * 90.0}
    far = dict(near, ancer=(grid < 18) * 90.0)
    assert F.reach(grid, near["isotropic"]) == pytest.approx(1.9)
    assert F.linear_range(grid, near) is None  # 4.9 < 3 × 1.9
    assert F.linear_range(grid, far) == pytest.approx(1.9)
    with pytest.raises(ValueError, match="far"):
        F.linear_range(grid, far, far=1)
    with pytest.raises(ValueError, match="linear_to"):
        F.draw_methods(plt.figure().add_subplot(), grid, far, linear_to=25.0)
    # a column whose ANCER proxy radii reach ten times further: its proxy panels (only) turn symlog, and say so
    res = fake_results(sigmas=QUICK["mnist"].sigmas_l2, n=40)
    res.loc[res.method == "ancer", "radius_proxy"] *= 10
    fig, _ = F.per_sigma_figure(res, QUICK["mnist"], "l2", "proxy")
    assert [ax.get_xscale() for ax in fig.axes] == ["symlog"] * 3 and F.spread_panels(fig) == 3
    ax = fig.axes[0]
    assert ax.get_xlim()[0] == 0 and any(t.get_text() == " log →" for t in ax.texts)
    assert "3 proxy-radius panels reach so far" in F.per_sigma_caption(QUICK["mnist"], "l2", "proxy", fig=fig)
    assert "logarithmic beyond it" in F.figure_note(fig, [], "Figure 9")
    assert style.smallest_font(fig) >= style.MIN_FONT
    plain, _ = F.per_sigma_figure(res, QUICK["mnist"], "l2", "radius")
    assert F.spread_panels(plain) == 0 and F.scale_note(plain) == ""
    assert F.per_sigma_caption(QUICK["mnist"], "l2", "radius", fig=plain) == F.per_sigma_caption(QUICK["mnist"], "l2", "radius")
    digits = fake_results(sigmas=QUICK["digits"].sigmas_l2, n=40)
    digits["radius_proxy"] = digits.radius_proxy.clip(upper=digits[digits.method != "ancer"].radius.max())
    fig, _ = F.best_over_sigma_figure({"digits": digits, "mnist": res}, QUICK, "l2")
    assert [ax.get_xscale() for ax in fig.axes] == ["linear", "linear", "linear", "symlog"]
    assert "One proxy-radius panel reaches" in F.best_caption("l2", fig)
