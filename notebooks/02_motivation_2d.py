# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 02 — Why anisotropic certificates? The 2D motivation
#
# *New to randomized smoothing?* [00_primer](00_primer.ipynb) builds every idea used here on one 2D input, and its
# [glossary](00_primer.ipynb#glossary) defines each term: [smoothed
# classifier](00_primer.ipynb#g-smoothed-classifier), [σ, θ](00_primer.ipynb#g-sigma),
# [CERTIFY](00_primer.ipynb#g-certify), [p_A](00_primer.ipynb#g-p-a), [Φ⁻¹](00_primer.ipynb#g-phi-inv),
# [gap](00_primer.ipynb#g-gap), [certified radius](00_primer.ipynb#g-radius), [ℓΣ2 /
# ℓΛ1](00_primer.ipynb#g-l-sigma-2), [proxy radius](00_primer.ipynb#g-proxy-radius), [ACR,
# ACR̃](00_primer.ipynb#g-acr), [Isotropic DD](00_primer.ipynb#g-isotropic-dd), [κ](00_primer.ipynb#g-kappa),
# [N0](00_primer.ipynb#g-n0-n), [the memory](00_primer.ipynb#g-memory), [widened](00_primer.ipynb#g-widened),
# [eligible](00_primer.ipynb#g-eligible).
#
# This notebook reproduces **ANCER §3, Figure 1 (a-d)** (also the blog's Figure 1) and the blog's
# **conceptual Figure 2**, with `ancer_lite`'s own optimization and certification on the *smoothed*
# classifier, then checks every drawn certificate numerically.
#
# * A 2D binary dataset whose label depends only on the distance to the origin (radially separable),
#   and a small MLP base classifier $f$ trained on it.
# * Two test points: one near the centre of the inner disc, where the boundary's curvature makes the
#   optimal certificate nearly isotropic (Figs 1a, 1c), and one in the ring, where the boundary is
#   close in one direction only and an anisotropic region can be much larger (Figs 1b, 1d).
# * For each point and each certificate shape: the isotropic certificate optimized per input
#   (Isotropic DD, Alfarra et al. 2020) and ANCER's anisotropic one (App. C, initialized at the isotropic
#   solution): ℓ1 ball vs generalized cross-polytope (uniform noise, Corollary 2) and ℓ2 ball vs
#   ellipse (Gaussian noise, Corollary 1), certified by CERTIFY with the profile's sample sizes (below).
# * A **verification a reader can trust**: on a dense grid filling each certified region (and on its
#   boundary), the smoothed prediction is re-estimated with fresh noise; every point must keep the
#   certified class.
#
# Reading the figures: the background is the base classifier's confidence $f^y$ in the point's true
# class (blue = confident, colour bar on the right), the white line is $f$'s decision boundary. A certificate
# is a statement about the *smoothed* classifier $g_\theta$ for that input's own θ, whose decision boundary is
# not exactly $f$'s; so a region may reach slightly past the white line when smoothing moves the boundary.
#
# The logic lives in `ancer_lite/studies/motivation_2d.py` (this notebook's study) and `ancer_lite/studies/rancer_2d.py`
# (`certify_methods`, shared with notebook 06's RANCER Figure 1); this notebook calls and displays.

# %% tags=["parameters"]
profile = "quick"
seed = 0

# %%
import matplotlib.patheffects as pe
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ancer_lite.studies import motivation_2d as m2
from ancer_lite.report import style
from ancer_lite.models.data import radial_dataset
from ancer_lite.report.display import md, setup_notebook
from ancer_lite.report.figures import draw_region, plot_landscape, save_fig
from ancer_lite.models.small import MLP
from ancer_lite.runs.profiles import get_profile
from ancer_lite.models.train import accuracy, train_classifier

P = get_profile(profile)
setup_notebook(seed)

# %% tags=["hide-input"]
md(f"Profile **{P.name}**: CERTIFY with N0 = {P.n0:,}, N = {P.n:,}, α = {P.alpha}; the verification re-estimates "
   f"the smoothed prediction with {P.check_samples:,} fresh noise draws per point on a grid of {P.check_grid} "
   f"points per axis.")

# %% [markdown]
# ## Data and base classifier
#
# Labels alternate at the circles of radius 1 and 2 (class 0 | class 1 | class 0), with a margin of
# 0.1 around each circle (`data.radial_dataset`'s defaults). Two bands of class 0 on both sides of the ring mean
# that no class owns the unbounded exterior: with a single circle, huge noise would make the smoothed classifier
# predict the outer class everywhere, and the "optimal" region would degenerate into one that covers the inner
# class. The base classifier is a 2-64-64-2 MLP trained with mild Gaussian noise augmentation (σ = 0.05).

# %%
x_train, y_train = radial_dataset(3000, seed=seed)
x_test, y_test = radial_dataset(500, seed=seed + 1)
model = MLP((2,), 2, hidden=(64, 64), mean=(0.0,), std=(1.5,))
model = train_classifier(model, x_train, y_train, noise="gaussian", scale=0.05, epochs=40, batch_size=64,
                         lr=0.05, seed=seed)

# %% tags=["nbval-check-output"]
acc_train, acc_test = accuracy(model, x_train, y_train), accuracy(model, x_test, y_test)
print(f"base classifier accuracy: train {acc_train:.3f}, test {acc_test:.3f}")
assert acc_test > 0.97

# %% [markdown]
# The two test points are chosen by rule, not by looking at certificates (`motivation_2d.figure1_points`): the
# class-0 test point closest to the origin, and the class-1 test point closest to (0, 1.5) (the middle of the
# ring, where the ring's tangent is the x-axis, so that an axis-aligned ellipse can follow it).

# %% tags=["nbval-check-output"]
points = m2.figure1_points(x_test, y_test)
for name, (pt, lab, index) in points.items():
    print(f"{name}: x = ({pt[0]:.3f}, {pt[1]:.3f}), label {lab}, test index {index}")

# %% [markdown]
# ## Optimizing and certifying the four certificates per point
#
# The settings were fixed before looking at any certificate; in 2D we can afford more optimization than the
# paper's 100 iterations × 100 samples (`motivation_2d.ISO_SETTINGS`, `ANCER_SETTINGS`, rendered below). For
# uniform noise θ is the half-width λ of U[−λ, λ]. ANCER keeps θᵢ ≥ θ_iso. `rancer_2d.certify_methods` runs both
# optimizations and CERTIFY, one noise stream per method.

# %% tags=["hide-input"]
md(f"Isotropic DD starts at θ = {m2.THETA0} and runs {m2.ISO_SETTINGS.iterations} plain gradient-ascent "
   f"steps of size {m2.ISO_SETTINGS.lr} on θ·gap with {m2.ISO_SETTINGS.samples} noise samples per step; "
   f"ANCER then runs {m2.ANCER_SETTINGS.iterations} Adam steps (lr {m2.ANCER_SETTINGS.lr}, "
   f"κ = {m2.ANCER_SETTINGS.kappa:g}, {m2.ANCER_SETTINGS.samples} samples) from the isotropic solution.")

# %%
results = m2.certify_figure1(model, points, P.n0, P.n, P.alpha, seed)
m2.certificates_table(results).round(4)

# %% [markdown]
# ## Area ratios (ANCER / Isotropic DD)
#
# The area of a 2D certificate is its volume (ANCER §5.1 for the ellipse, Proposition 4 for the
# generalized cross-polytope); the ratio ANCER / Isotropic DD is exp of the difference of log-areas.

# %% tags=["nbval-check-output"]
ratios = m2.area_ratios(results)
for (name, norm), ratio in ratios.items():
    print(f"{name:7s} {norm}: area ratio ANCER / Isotropic DD = {ratio:.1f}")

# %% [markdown]
# What the figure claims, checked: at the centre the optimized anisotropic certificate is essentially
# the isotropic one (ratio within 10% of 1), while in the ring it is clearly larger (ratio above 1.2). The ring
# curves away from the tangent direction, and stretching the noise along it lowers the gap, which caps the gain.

# %%
assert all(abs(ratios["centre", n] - 1) < 0.1 for n in m2.NOISE_OF), ratios
assert all(ratios["ring", n] > 1.2 for n in m2.NOISE_OF), ratios
ring = [ratios["ring", n] for n in m2.NOISE_OF]

# %% tags=["hide-input"]
md(f"Claims hold: at the centre ANCER's region is the isotropic one (area ratios "
   f"{ratios['centre', 'l1']:.2f} for ℓ1, {ratios['centre', 'l2']:.2f} for ℓ2). The paper calls the ring's "
   f"anisotropic regions \"considerably larger\"; here the smoothed classifier allows {min(ring):.2f} to "
   f"{max(ring):.2f} times the area (ℓ1: {ratios['ring', 'l1']:.2f}, ℓ2: {ratios['ring', 'l2']:.2f}).")

# %% [markdown]
# ## Figure 1 (a-d)
#
# Isotropic DD's region is drawn dashed over ANCER's, so that both stay visible where they coincide (Figs 1a, 1c).

# %%
PANELS = {("centre", "l1"): ("ancer_fig01a_l1_centre_point", "ANCER Figure 1a"),
          ("ring", "l1"): ("ancer_fig01b_l1_ring_point", "ANCER Figure 1b"),
          ("centre", "l2"): ("ancer_fig01c_l2_centre_point", "ANCER Figure 1c"),
          ("ring", "l2"): ("ancer_fig01d_l2_ring_point", "ANCER Figure 1d")}
HALO = [pe.Stroke(linewidth=6.5, foreground="white"), pe.Normal()]   # ANCER's line stays visible on any background
ISO_LINE = dict(lw=2.0, gapcolor="white")                           # Isotropic DD: dashes with white gaps, on top
CONFIDENCE = "base classifier confidence $f^y(x)$"

for (name, norm), (fig_name, reproduces) in PANELS.items():
    pt, lab, _ = points[name]
    regions = results[name, norm]
    iso_shape, ani_shape = style.norm_symbol(norm), style.norm_symbol(norm, anisotropic=True)
    fig, ax = plt.subplots(figsize=(5.4, 5.0))
    plot_landscape(ax, model, lab, pt.numpy(), half_width=1.2)
    style.colorbar(fig, ax.images[-1], ax, CONFIDENCE, shrink=0.85)
    draw_region(ax, pt.numpy(), regions["ancer"].semi_axes, norm, path_effects=HALO, lw=4.0,
                **style.line("ancer", label=f"ANCER: {ani_shape} region (area × {ratios[name, norm]:.2f})"))
    draw_region(ax, pt.numpy(), regions["isotropic"].semi_axes, norm, **ISO_LINE,
                **style.line("isotropic", linestyle="--", label=f"Isotropic DD: {iso_shape} ball"))
    ax.plot(*pt.numpy(), "*", color="black", mec="white", ms=13, label=f"input x ({name}, class {lab})")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.set_title(f"{reproduces}: optimal {iso_shape} isotropic vs anisotropic\ncertificate, {name} input")
    style.legend(ax, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1, frameon=False)
    style.stand_in(fig, "toy2d", profile=P.name)
    save_fig(fig, fig_name, reproduces,
             caption=f"{reproduces}: the landscape of f^y around the {name} input of a toy, 2-dimensional radially "
                     f"separable dataset (blue = confident in the true label), with the boundaries of the optimized "
                     f"isotropic ({style.norm_symbol(norm, tex=False)} ball, Isotropic DD) and anisotropic "
                     f"({style.norm_symbol(norm, anisotropic=True, tex=False)}, ANCER) certificates of the smoothed "
                     f"classifier.")

# %% [markdown]
# ## The blog's conceptual Figure 2: when the isotropic certificate is uninformative
#
# The blog's Figure 2 is about the *optimal* regions of a base classifier's safe set around x = (0, 0)
# (`motivation_2d.blog_toys`). Top: the other class is a large half-plane at distance 0.5; the largest isotropic
# region borders it, which is informative. Bottom: the other class is only a small peak (a disc of radius 0.1 at
# distance 0.25 from x) inside a large safe disc of radius 1.5; the largest ℓ2 ball must stop at the peak and
# says little about the safe region, while the largest axis-aligned ellipse stretches past it. These optimal
# regions are computed exactly, by brute force over a fine grid of the other class's points
# (`motivation_2d.optimal_regions`, `ancer_lite.evaluation.safe_regions`), less a margin of two grid spacings so that they
# are sound (checked against f on a grid below).
#
# What randomized smoothing does with the same classifiers is instructive too: the smoothed classifier's
# optimized certificates (Isotropic DD and ANCER, Gaussian noise) are computed at the same x.

# %%
toys = m2.blog_toys()
x0 = np.asarray(m2.BLOG_CENTER, dtype=np.float32)
optimal = {k: m2.optimal_regions(toy) for k, toy in toys.items()}
toy_smoothed = {k: m2.certify_point(toy, x0, "gaussian", P.n0, P.n, P.alpha, seed) for k, toy in toys.items()}

# %% tags=["nbval-check-output"]
for k, o in optimal.items():
    print(f"{k:6s}: optimal ball radius {o['ball']:.2f}, optimal ellipse semi-axes ({o['ellipse'][0]:.2f}, "
          f"{o['ellipse'][1]:.2f}), area ratio {o['ratio']:.1f}; smoothed Isotropic DD radius "
          f"{toy_smoothed[k]['isotropic'].radius:.2f}")
assert optimal["bottom"]["ratio"] > optimal["top"]["ratio"] > 1 and optimal["bottom"]["ball"] < 0.3

# %%
bottom_smoothed = toy_smoothed["bottom"]["isotropic"].radius
bottom_sigma = toy_smoothed["bottom"]["isotropic"].scales[0]
assert bottom_smoothed > 0.35 + 0.1 and bottom_sigma > 0.1   # past the peak's far edge; σ above the peak's radius

# %% tags=["hide-input"]
md(f"Gaussian noise of scale σ barely sees a peak much smaller than σ: at the bottom, the smoothed classifier's "
   f"Isotropic DD certificate has radius {bottom_smoothed:.2f} (σ = {bottom_sigma:.2f}), past "
   f"the peak (radius 0.1, 0.25 to 0.45 from x) that stops the optimal ball of f at "
   f"{optimal['bottom']['ball']:.2f}. The smoothed certificates are sound for g, whose safe set covers the peak; "
   f"the conceptual picture is about f's own safe set.")

# %%
fig, axes = plt.subplots(1, 2, figsize=(9.6, 5.0))
for ax, (k, toy) in zip(axes, toys.items()):
    plot_landscape(ax, toy, 0, x0, half_width=m2.BLOG_HALF_WIDTH)
    o = optimal[k]
    draw_region(ax, x0, np.array(o["ellipse"]), "l2", path_effects=HALO, lw=4.0,
                **style.line("ancer", label=f"optimal anisotropic ({style.norm_symbol('l2', anisotropic=True)} "
                                            f"ellipse, area × {o['ratio']:.1f})"))
    draw_region(ax, x0, np.full(2, o["ball"]), "l2", **ISO_LINE,
                **style.line("isotropic", linestyle="--", label=f"optimal isotropic ({style.norm_symbol('l2')} ball)"))
    ax.plot(*x0, "*", color="black", mec="white", ms=13, label="input x")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    style.legend(ax, loc="upper center", bbox_to_anchor=(0.5, -0.13), frameon=False)
axes[0].set_title("(blog's top) the optimal isotropic certificate\nborders the decision boundary: informative")
axes[1].set_title("(blog's bottom) a small peak of another class:\nthe isotropic certificate is uninformative")
style.colorbar(fig, axes[1].images[-1], list(axes), CONFIDENCE, shrink=0.85)
fig.suptitle("Blog Figure 2: optimal certificates of a base classifier f")
fig.supxlabel("analytic 2D base classifiers (no training data) · optimal regions by brute force on a "
              f"{m2.BLOG_RESOLUTION}×{m2.BLOG_RESOLUTION} grid", fontsize=style.MIN_FONT + 0.5, color="#444444")
save_fig(fig, "blog_fig02_conceptual_isotropic_uninformative", "Blog Figure 2 (conceptual)",
         caption="Conceptual examples of optimal certificates of a base classifier: (top) the optimal isotropic "
                 "certificate borders a large adversary region; (bottom) a degenerate case in which the isotropic "
                 "certificate is uninformative, as most of the region around the input is safe except for a small "
                 "peak of another class, while the optimal ellipse stretches past it.");

# %% [markdown]
# ## Verification: does every point inside every certified region keep the prediction?
#
# For each smoothed certificate above, a grid fills the region (plus points on its boundary, pulled in by 10⁻⁶
# of the semi-axes), and at each point the smoothed classifier $g_\theta$ (the same θ and noise as the
# certificate) is re-estimated with fresh noise (`rancer_2d.region_verification`). A violation is a point whose
# Monte Carlo top class differs from the certified class. The certificate holds with probability ≥ 1 − α per
# input, and the smallest top-class frequency is printed so that a reader can judge the Monte Carlo margin. The
# optimal regions of the conceptual figure are checked against the base classifier itself
# (`motivation_2d.base_classifier_violations`).

# %%
entries = {f"{name}/{norm}/{method}": (model, region)
           for (name, norm), regions in results.items() for method, region in regions.items()}
entries.update({f"blog-{k}/l2/smoothed-{method}": (toys[k], region)
                for k, regions in toy_smoothed.items() for method, region in regions.items()})
verification = pd.concat([m2.verification_table(entries, P.check_grid, P.check_samples, seed),
                          m2.optimal_verification_table(toys, optimal, P.check_grid)], ignore_index=True)
verification

# %% tags=["nbval-check-output"]
total_points, total_violations = int(verification.points_checked.sum()), int(verification.violations.sum())
print(f"certified regions checked: {len(verification)}; grid points checked: {total_points}; "
      f"violations: {total_violations}")
assert total_violations == 0

# %% [markdown]
# ## Memory-based certification of the two inputs (Algorithm 1)
#
# The data-dependent classifier is only sound once regions of different classes are kept disjoint.
# The two Figure 1 inputs are certified in test-set order through Algorithm 1 with ANCER's regions, for each
# shape (`motivation_2d.memory_decisions`).

# %% tags=["nbval-check-output"]
for norm in m2.NOISE_OF:
    print(norm, [f"{name}: {status}" for name, status in m2.memory_decisions(points, results, norm)])
