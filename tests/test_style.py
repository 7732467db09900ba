"""The companion's visual language (ancer_lite.report.style), the notebook display helpers
(ancer_lite.report.display) and the figure helper's inline display and index (ancer_lite.report.figures)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from ancer_lite.report import display, figures, style  # noqa: E402


def test_each_method_has_its_own_colour_and_marker():
    # Fixed σ and UCAN's isotropic baseline are the same method (Cohen et al.'s fixed noise)
    keys = [k for k in style.METHODS if k != "ucan_isotropic"]
    colours = [style.METHODS[k].color for k in keys]
    markers = [style.METHODS[k].marker for k in keys]
    assert len(set(colours)) == len(keys)
    assert len(set(markers)) == len(keys)
    assert style.METHODS["ucan_isotropic"].color == style.METHODS["fixed"].color


def test_unknown_method_names_the_argument():
    with pytest.raises(ValueError, match="method must be one of .* got 'ancr'"):
        style.line("ancr")


def test_radius_labels_name_norm_and_certificate():
    assert style.radius_label("l2", tex=False) == "ℓ2 radius"
    assert style.radius_label("l2", "proxy", tex=False) == "ℓΣ2 proxy radius"
    assert style.radius_label("l1", "proxy", tex=False) == "ℓΛ1 proxy radius"
    assert style.radius_label("linf", tex=False) == "ℓ∞ radius"
    assert style.radius_label("l2", "proxy") == r"$\ell^{\Sigma}_{2}$ proxy radius"
    with pytest.raises(ValueError, match="certificate must be"):
        style.radius_label("l2", "volume")
    with pytest.raises(ValueError, match="anisotropic certificates exist for norm 'l1' and 'l2' only"):
        style.norm_symbol("linf", anisotropic=True)


def test_stand_in_caption_names_the_replaced_dataset():
    assert style.data_caption("digits") == "8×8 digits (MLP) standing in for CIFAR-10 · quick profile"
    assert style.data_caption("mnist") == "MNIST-5k (CNN) standing in for ImageNet · quick profile"
    assert style.data_caption("cifar10", "paper") == "CIFAR-10 · paper profile"
    assert style.data_caption("mnist", stands_for="MNIST") == "MNIST-5k (CNN) standing in for MNIST · quick profile"
    with pytest.raises(ValueError, match="column must be one of"):
        style.data_caption("svhn")


def test_stand_in_override_must_name_a_drawn_column():
    fig = plt.figure()
    style.stand_in(fig, "digits", "mnist", stands_for={"mnist": "MNIST"})
    assert fig._supxlabel.get_text() == ("8×8 digits (MLP) standing in for CIFAR-10 | MNIST-5k (CNN) standing in "
                                         "for MNIST · quick profile")
    with pytest.raises(ValueError, match="stands_for names columns not drawn"):
        style.stand_in(fig, "digits", stands_for={"mnist": "MNIST"})
    plt.close(fig)


def test_styled_figure_has_no_text_under_the_minimum_size():
    style.apply()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot([0, 1], [0, 100], **style.line("ancer", markers=True))
    ax.plot([0, 1], [0, 90], **style.line("fixed"))
    style.percent_axis(ax)
    ax.set_xlabel(style.radius_label("l2"))
    style.legend(ax)
    style.stand_in(fig, "digits")
    assert style.smallest_font(fig) >= style.MIN_FONT
    assert ax.get_ylabel() == "certified accuracy (%)"
    lo, hi = ax.get_ylim()
    assert lo < 0 < 100 < hi
    plt.close(fig)


def test_inline_png_is_deterministic_and_not_shown_outside_a_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("ANCER_FIGURES_DIR", str(tmp_path))
    monkeypatch.delenv("ANCER_NOTEBOOK", raising=False)
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    assert figures.inline_png(fig) == figures.inline_png(fig)
    assert figures.inline_png(fig)[:8] == b"\x89PNG\r\n\x1a\n"
    assert figures.show_inline(fig) is False  # pytest is no Jupyter kernel
    saved = figures.save_fig(fig, "extra_test_figure", "nothing", caption="a test")
    assert [p.name for p in saved] == ["extra_test_figure.pdf", "extra_test_figure.png"]
    assert "/" not in repr(saved)
    assert not plt.fignum_exists(fig.number)  # closed after saving


def test_figure_index_keeps_captions_and_reads_old_indices(tmp_path, monkeypatch):
    monkeypatch.setenv("ANCER_FIGURES_DIR", str(tmp_path))
    monkeypatch.setenv("ANCER_NOTEBOOK", "99_test")
    fig, _ = plt.subplots()
    figures.save_fig(fig, "extra_cap", "ANCER Figure 1", caption="What it shows.")
    df = figures.read_index(tmp_path / "index.tsv")
    assert df.loc[0, "caption"] == "What it shows."
    assert "What it shows." in figures.write_index_readme(tmp_path).read_text()
    old = tmp_path / "old.tsv"
    old.write_text("name\tnotebook\treproduces\nextra_a\t01_x\tANCER Figure 2\n")
    assert figures.read_index(old).loc[0, "caption"] == ""
    bad = tmp_path / "bad.tsv"
    bad.write_text("just some text\n")
    with pytest.raises(ValueError, match="bad.tsv: figure index lacks the columns"):
        figures.read_index(bad)


@pytest.mark.parametrize("seconds, text", [(0.4211, "0.42 s"), (12.34, "12.3 s"), (371, "6 min 11 s"),
                                           (3725, "1 h 02 min")])
def test_format_seconds(seconds, text):
    assert display.format_seconds(seconds) == text


def test_timing_labels_reused_results_with_their_computation_time():
    assert display.timing("digits", 371, reused=False) == "digits: 6 min 11 s"
    line = display.timing("digits", 0.01, reused=True, computed_seconds=371)
    assert line == "digits: reused from the cache (computed in 6 min 11 s; read in 0.01 s)"
    assert "not recorded" in display.timing("digits", 0.01, reused=True)
    with pytest.raises(ValueError, match="seconds must be a finite number >= 0, got -1"):
        display.format_seconds(-1)


def test_titled_names_the_data_a_figure_was_drawn_on():
    assert style.titled("ANCER Figure 2", "digits", "mnist") == \
        "ANCER Figure 2 on 8×8 digits (MLP) for CIFAR-10, MNIST-5k (CNN) for ImageNet"
    assert style.titled("UCAN Figure 4", "mnist", stands_for={"mnist": "MNIST"}) == "UCAN Figure 4 on MNIST-5k (CNN) for MNIST"
    assert style.titled("ANCER Figure 2", "cifar10", profile="paper") == "ANCER Figure 2 on CIFAR-10"
    assert style.titled("ANCER Figure 2", "digits_cnn") == "ANCER Figure 2 on 8×8 digits (CNN)"
    with pytest.raises(ValueError, match="label"):
        style.titled("", "digits")
    with pytest.raises(ValueError, match="column"):
        style.titled("ANCER Figure 2", "cifar100")
    with pytest.raises(ValueError, match="at least one column"):
        style.titled("ANCER Figure 2")


def test_mathtext_letters_are_set_in_an_italic_font():
    """Figures' symbols ($x_1$, $\\ell$) come out italic: matplotlib's font cache knows the environment's own fonts
    (the Makefile keeps the cache beside the environment, MPLCONFIGDIR); a cache built by an environment since
    deleted sets them upright, and every figure changes."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.mathtext import MathTextParser

    glyphs = MathTextParser("path").parse("$x$", prop=FontProperties(size=10))[3]
    fonts = [g[0].fname.rsplit("/", 1)[-1] for g in glyphs]
    assert fonts and all("Oblique" in f or "Italic" in f for f in fonts), fonts
