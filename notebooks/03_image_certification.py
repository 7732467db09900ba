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
# and the proxy radius, best over σ) and the per-σ Figures 6, 8, 10, 12 (and, with ImageNet, 7, 9, 11, 13).
#
# For each noise level σ a base classifier is trained with noise augmentation, then every test input
# is certified three ways, all at the paper's settings N0 = 100, N = 100,000, α = 0.001:
# * **Fixed σ**: CERTIFY with the training σ (Cohen et al. 2019; Yang et al. 2020 for ℓ1).
# * **Isotropic DD**: σ optimized per input (Alfarra et al. 2020), then CERTIFY, then the memory.
# * **ANCER**: a per-pixel Θ optimized per input from the Isotropic DD solution (App. C), then CERTIFY,
#   then the memory (Algorithm 1). Its ℓp radius is the largest ℓp ball inside its region.
#
# **Profiles.** `quick` (default) runs on scikit-learn's 8×8 digits with small MLPs on a CPU: the
# paper's σ grid, its certification settings and its optimization budget (100 iterations × 100
# samples), but a seeded stratified subset of 150 of the 360 test digits, so that the notebook stays
# under 10 minutes on 2 cores (3 methods × 7 models × 150 inputs = 3,150 certifications at N = 100,000).
# `paper` runs CIFAR-10 and `paper-imagenet` the ImageNet subset, with the papers' models from Cohen-format
# checkpoints under `data/checkpoints/<dataset>/<norm>/sigma_<σ>/checkpoint.pth.tar`; they need the data
# and, realistically, a GPU (`make 03_image_certification PROFILE=paper`).
#
# For uniform noise, σ is the noise's standard deviation and the half-width is λ = √3·σ (RS4A's
# convention; ANCER App. E.2 prints λ = σ/√3, which its own Table 2 contradicts, see the README).

# %% tags=["parameters"]
profile = "quick"
seed = 0

# %%
import hashlib
import json
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ancer_lite.data import DATA_DIR
from ancer_lite.experiment import METHODS, OptimSettings, run_method, select_settings
from ancer_lite.figures import save_fig
from ancer_lite.metrics import best_curve, best_over, certified_accuracy, summary_table
from ancer_lite.paper import load_table
from ancer_lite.profiles import get_profile
from ancer_lite.reproducibility import seed_everything
from ancer_lite.setups import NOISE_OF_NORM as NOISE
from ancer_lite.setups import prepare, sigmas_of, theta_of
from ancer_lite.train import accuracy, model_fingerprint

P = get_profile(profile)
seed_everything(seed)
SIGMAS = sigmas_of(P)
RADII = {"l2": [0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5], "l1": [0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0]}
if P.dataset == "imagenet":
    RADII["l2"] = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
METHOD_NAMES = {"fixed": "Fixed σ", "isotropic": "Isotropic DD", "ancer": "ANCER"}
RESULTS = DATA_DIR / "results" / P.name


# %% [markdown]
# ## Data and base classifiers
#
# Digits: 1,797 images of 8×8 pixels, scaled from 0..16 to [0, 1], split 60/20/20 into train /
# validation / test, stratified by class with `seed` (`ancer_lite.data.digits_split`). The certified
# test inputs are a stratified subset of the test split drawn with the same seed; the validation split
# is only used to choose step sizes.
#
# One MLP (64-64 hidden units, normalization inside) per noise family and σ, trained for 40 epochs with
# fresh noise each batch: Gaussian noise of std σ (Cohen et al.) for ℓ2, uniform noise of half-width
# √3·σ with RS4A's stability term (weight 1) for ℓ1. Models are cached under `data/cache/`; delete the
# folder to retrain. (`ancer_lite.setups.prepare`; the paper profiles load CIFAR-10 / ImageNet and
# checkpoints instead, and stop here with the list of missing files if they are absent.)

# %%
work = prepare(P, seed)
models, num_classes = work.models, work.num_classes
x_test, y_test, idx_test = work.test.x, work.test.y, work.test.index
x_val, y_val = work.val.x, work.val.y

# %%
# NBVAL_CHECK_OUTPUT
print(f"{work.dataset}: certified test inputs {len(x_test)}, per class (first 10) "
      f"{np.bincount(y_test.numpy(), minlength=num_classes)[:10].tolist()}; validation inputs {len(x_val)}")
for (norm, sigma), m in models.items():
    th = theta_of(norm, sigma)
    print(f"{norm} σ={sigma:<4}: validation accuracy clean {accuracy(m, x_val, y_val):.3f}, "
          f"under one draw of the training noise {accuracy(m, x_val, y_val, NOISE[norm], th, seed):.3f}")

# %% [markdown]
# ## Choosing the step sizes on the validation split
#
# The sample-wise optimizations are sensitive to their step sizes, so they are chosen on validation
# inputs, never on the test inputs, once per noise family at the middle σ (ℓ2: σ = 0.25, ℓ1: σ = 0.5)
# and reused for every σ as multiples of the training θ. Iterations and samples are the paper's (100
# and 100). Isotropic DD's learning rate maximizes the validation ACR (its objective is the ℓp radius);
# ANCER's maximizes the validation mean of App. C's relaxed objective, ACR̃ + κ·ACR with κ = 2. The
# validation inputs are certified with N = 10,000 to keep this affordable.

# %%
base = OptimSettings()
chosen, selection = {}, []
for norm, sigma_sel in (("l2", 0.25), ("l1", 0.5)):
    th = theta_of(norm, sigma_sel)
    chosen[norm], table = select_settings(models[norm, sigma_sel], x_val, y_val, NOISE[norm], th,
                                          list(P.iso_lr_grid), list(P.ancer_lr_grid), base, P.n0, P.val_n,
                                          P.alpha, num_classes, seed)
    selection.append(table.assign(norm=norm, sigma=sigma_sel))
selection = pd.concat(selection, ignore_index=True)
selection.round(4)

# %%
# NBVAL_CHECK_OUTPUT
for norm in chosen:
    s = selection[(selection.norm == norm) & selection.chosen]
    print(norm, "chosen learning rates (× θ):", dict(zip(s.method, s.lr_relative)))

# %% [markdown]
# ## Certifying the test inputs
#
# Each (noise, σ, method) run writes its logs under `data/results/<profile>/`, in a folder named by a
# hash of everything that determines it (model weights, settings, certification parameters), so a
# changed setting never reuses stale logs and an interrupted run resumes where it stopped.

# %%
# NBVAL_IGNORE_OUTPUT
t_start = time.perf_counter()
frames, timings, reused = [], [], 0
for (norm, sigma), model in models.items():
    th = theta_of(norm, sigma)
    settings = chosen[norm]
    key = json.dumps(dict(model=model_fingerprint(model), settings=settings.__dict__, n0=P.n0, n=P.n,
                          alpha=P.alpha, seed=seed, idx=idx_test.tolist()), sort_keys=True)
    tag = hashlib.sha256(key.encode()).hexdigest()[:10]
    iso_theta = None
    for method in METHODS:
        t0 = time.perf_counter()
        folder = RESULTS / work.dataset / norm / f"sigma_{sigma}" / f"{method}-{tag}"
        if (folder / "certify.tsv").exists():
            reused += len(pd.read_csv(folder / "certify.tsv", sep="\t"))
        df = run_method(model, x_test, y_test, idx_test, NOISE[norm], th, method, settings, folder, P.n0, P.n,
                        P.alpha, num_classes, batch_size=P.batch_size, seed=seed, isotropic=iso_theta)
        if method == "isotropic":
            iso_theta = np.load(folder / "theta.npy")
        timings.append(dict(norm=norm, sigma=sigma, method=method, seconds=time.perf_counter() - t0,
                            mean_time_per_input=float(df["time"].mean())))
        frames.append(df.assign(norm=norm, sigma=sigma, method=method))
results = pd.concat(frames, ignore_index=True)
print(f"{len(results)} (input, model, method) certifications: {len(results) - reused} computed in this run, "
      f"{reused} reused from the logs in {RESULTS}; {time.perf_counter() - t_start:.0f} s")
pd.DataFrame(timings).round(3)

# %% [markdown]
# Algorithm 1's decisions (kept, shrunk to a ball, abstained because the input lies in another class's
# region, or abstained by CERTIFY itself). Digits are far apart relative to their certified regions,
# so intersections are rare.

# %%
# NBVAL_CHECK_OUTPUT
print(results[results.method != "fixed"].groupby(["norm", "method", "status"]).size().unstack(fill_value=0))

# %% [markdown]
# ## Per-σ results (the rows behind Figures 6, 8, 10, 12)

# %%
# NBVAL_IGNORE_OUTPUT
per_sigma = {norm: summary_table(results[results.norm == norm], RADII[norm], ["method", "sigma"]) for norm in RADII}
per_sigma["l2"].round(3)

# %%
# NBVAL_IGNORE_OUTPUT
per_sigma["l1"].round(3)

# %% [markdown]
# ## Tables 1 and 2: best over σ, beside the paper
#
# As in the paper, each entry is the best over σ of that column (certified accuracy at each radius,
# ACR, ACR̃). The paper's rows are CIFAR-10 (ImageNet for `paper-imagenet`; Table 1: models trained as in
# Cohen et al.; Table 2: RS4A). On digits the numbers are not expected to match; the comparison is about
# which claims hold.

# %%
def best_table(norm):
    t = best_over(per_sigma[norm], "sigma", ["method"])
    t["method"] = t["method"].map(METHOD_NAMES)
    return t.set_index("method")


PAPER_DATASET = "ImageNet" if work.dataset == "imagenet" else "CIFAR-10"


def paper_rows(table, model):
    p = load_table(table)
    p = p[(p.dataset == PAPER_DATASET) & (p.model == model)]
    out = {}
    for method, g in p.groupby("method", sort=False):
        row = {f"{r:g}": v for r, v in g[g.metric == "certified_accuracy"][["radius", "value"]].itertuples(index=False)}
        row["acr"] = float(g[g.metric == "acr"].value.iloc[0])
        row["acr_proxy"] = float(g[g.metric == "acr_proxy"].value.iloc[0])
        out[method] = row
    return pd.DataFrame(out).T


ours = {norm: best_table(norm) for norm in RADII}
theirs = {"l2": paper_rows("ancer_table1", "COHEN"), "l1": paper_rows("ancer_table2", "RS4A")}

# %%
# NBVAL_CHECK_OUTPUT
for norm, title in (("l2", "Table 1 (ℓ2 / ℓΣ2)"), ("l1", "Table 2 (ℓ1 / ℓΛ1)")):
    print(f"{title}: certified accuracy (%) at radius, best over σ — {work.dataset} (ours)")
    print(ours[norm][[f"{r:g}" for r in RADII[norm]]].round(0).astype(int).to_string())
    print()

# %%
# NBVAL_IGNORE_OUTPUT
for norm in RADII:
    both = pd.concat({f"{work.dataset} (ours)": ours[norm], f"{PAPER_DATASET} (paper)": theirs[norm]}, axis=0)
    display(both.round(3))

# %% [markdown]
# ## The paper's claims, checked on digits

# %%
def claims(norm):
    t = ours[norm]
    rel = t.loc["ANCER", "acr_proxy"] / t.loc["Isotropic DD", "acr_proxy"] - 1
    return {
        "sample-wise beats Fixed σ in ACR (Isotropic DD)": bool(t.loc["Isotropic DD", "acr"] > t.loc["Fixed σ", "acr"]),
        "sample-wise beats Fixed σ in ACR (ANCER)": bool(t.loc["ANCER", "acr"] > t.loc["Fixed σ", "acr"]),
        "ANCER's ℓp ACR >= Isotropic DD's": bool(t.loc["ANCER", "acr"] >= t.loc["Isotropic DD", "acr"]),
        "ANCER's ACR~ > Isotropic DD's": bool(t.loc["ANCER", "acr_proxy"] > t.loc["Isotropic DD", "acr_proxy"]),
    }, rel


paper_margin = {}
for norm, table in (("l2", "ancer_table1"), ("l1", "ancer_table2")):
    p = load_table(table)
    p = p[p.metric == "acr_proxy"].pivot_table(index=["dataset", "model"], columns="method", values="value")
    paper_margin[norm] = (p["ANCER"] / p["Isotropic DD"] - 1)

# %%
# NBVAL_CHECK_OUTPUT
for norm in RADII:
    c, rel = claims(norm)
    for k, v in c.items():
        print(f"{norm}: {k}: {v}")
    lo, hi = paper_margin[norm].min(), paper_margin[norm].max()
    print(f"{norm}: ANCER's ACR~ over Isotropic DD's: {100 * rel:+.0f}% on {work.dataset}; paper: {100 * lo:+.0f}% to {100 * hi:+.0f}%")

# %% [markdown]
# The paper's text gives the ℓ2 margin as "between 38% and 63%"; its own Table 1 gives 37.6% to 60.5%
# (printed above from `data/paper/`).
#
# **In words** (the next cell prints the verdicts from the numbers above, and fails if the numbers
# change in a way that would contradict this paragraph). On digits the ordering the paper reports does
# not carry over for the ℓp certificates: the validation split already showed that larger optimization
# steps lower the certified ℓp radius (the Monte Carlo surrogate that Isotropic DD and ANCER ascend, with
# 100 samples and probabilities clamped at 0.999, disagrees with the radius CERTIFY grants at
# N = 100,000), so the chosen Isotropic DD steps are the smallest of the grid and its ℓp ACR is within
# Monte Carlo noise of Fixed σ; ANCER trades a little ℓp ACR for a larger region. What does reproduce is
# the anisotropic claim: ANCER's regions are larger in volume (ACR̃) than Isotropic DD's, for both
# shapes, though by a smaller margin than on CIFAR-10. Digits are a 64-dimensional problem with small
# MLPs, so this is a statement about the method on this data, not a contradiction of the paper's
# CIFAR-10/ImageNet numbers, which need the paper profile.

# %%
# NBVAL_CHECK_OUTPUT
verdicts = {norm: claims(norm)[0] for norm in RADII}
for norm, c in verdicts.items():
    held = [k for k, v in c.items() if v]
    print(f"{norm}: {len(held)} of {len(c)} claims hold on {work.dataset}: {'; '.join(held)}")
if P.name == "quick":  # the paragraph above describes the quick profile's outcome
    assert all(verdicts[n]["ANCER's ACR~ > Isotropic DD's"] for n in RADII)

# %% [markdown]
# Regression anchors for the headline numbers (best over σ), with an absolute tolerance of 0.01 in
# pixel units, far above the run-to-run variation on one machine (none: everything is seeded) and
# above what rounding on another CPU can move.

# %%
ANCHORS = {("l2", "Fixed σ", "acr"): 0.511, ("l2", "Isotropic DD", "acr"): 0.509, ("l2", "ANCER", "acr"): 0.489,
           ("l2", "ANCER", "acr_proxy"): 0.584, ("l1", "Fixed σ", "acr"): 0.457, ("l1", "Isotropic DD", "acr"): 0.457,
           ("l1", "ANCER", "acr"): 0.454, ("l1", "ANCER", "acr_proxy"): 0.468}
if P.name == "quick":
    for (norm, method, col), want in ANCHORS.items():
        got = float(ours[norm].loc[method, col])
        assert abs(got - want) < 0.01, (norm, method, col, got, want)
    print("headline ACR / ACR~ within 0.01 of the recorded values")

# %% [markdown]
# ## Figures 2 and 3: certified accuracy against the ℓp radius and the proxy radius (best over σ)

# %%
COLORS = {"fixed": "tab:gray", "isotropic": "tab:blue", "ancer": "tab:red"}


COLUMN = "ImageNet" if work.dataset == "imagenet" else "CIFAR-10"
ON = "" if work.dataset != "digits" else ", on digits"
for norm, fig_no, reproduces in (("l2", "02", f"ANCER Figure 2 ({COLUMN} column{ON})"),
                                 ("l1", "03", f"ANCER Figure 3 ({COLUMN} column{ON})")):
    sub = results[results.norm == norm]
    fig, axes = plt.subplots(2, 1, figsize=(5, 7))
    for ax, column, label in ((axes[0], "radius", f"{norm} radius"),
                              (axes[1], "radius_proxy", f"{'ℓΣ2' if norm == 'l2' else 'ℓΛ1'} proxy radius")):
        grid = np.linspace(0, float(sub[column].max()) * 1.05 + 1e-9, 300)
        for method in METHODS:
            ax.plot(grid, best_curve(sub[sub.method == method], "sigma", grid, column), color=COLORS[method],
                    label=METHOD_NAMES[method])
        ax.set_xlabel(label)
        ax.set_ylabel("certified accuracy")
        ax.legend()
    axes[0].set_title(f"{work.dataset}, {norm}: best over σ")
    save_fig(fig, f"ancer_fig{fig_no}_{norm}_certified_accuracy_{work.dataset}", reproduces)
    plt.show()
    plt.close(fig)

# %% [markdown]
# ## Figures 6, 8, 10, 12: per σ

# %%
# CIFAR-10 (and its digits stand-in): Figures 6, 8, 10, 12; ImageNet: Figures 7, 9, 11, 13
SHIFT = 1 if work.dataset == "imagenet" else 0
PER_SIGMA = [(norm, column, f"{no + SHIFT:02d}") for norm, column, no in
             (("l2", "radius", 6), ("l2", "radius_proxy", 8), ("l1", "radius", 10), ("l1", "radius_proxy", 12))]
for norm, column, fig_no in PER_SIGMA:
    reproduces = f"ANCER Figure {int(fig_no)}{ON}"
    sigmas = SIGMAS[norm]
    fig, axes = plt.subplots(1, len(sigmas), figsize=(3.2 * len(sigmas), 3.2), sharey=True)
    for ax, sigma in zip(axes, sigmas):
        sub = results[(results.norm == norm) & (results.sigma == sigma)]
        grid = np.linspace(0, float(sub[column].max()) * 1.05 + 1e-9, 300)
        for method in METHODS:
            g = sub[sub.method == method]
            ax.plot(grid, certified_accuracy(g[column], g["correct"], grid), color=COLORS[method], label=METHOD_NAMES[method])
        ax.set_title(f"σ = {sigma}")
        ax.set_xlabel(column.replace("_", " "))
    axes[0].set_ylabel("certified accuracy")
    axes[0].legend(fontsize=8)
    kind = "proxy_per_sigma" if column == "radius_proxy" else "per_sigma"
    save_fig(fig, f"ancer_fig{fig_no}_{norm}_{kind}_{work.dataset}", reproduces)
    plt.show()
    plt.close(fig)

# %% [markdown]
# Figures 7, 9, 11 and 13 are the ImageNet counterparts: `make 03_image_certification
# PROFILE=paper-imagenet` writes them from the ImageNet subset (`data/imagenet`) and checkpoints; the
# quick profile does not produce them.
