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
# # 00 — Primer: randomized smoothing from scratch
#
# This notebook is the way in for a reader who has never met randomized smoothing. It builds, on one
# two-dimensional input you can see, every idea the later notebooks use: a **base classifier**, **noise**, the
# **smoothed classifier**, Cohen et al.'s **CERTIFY** with its **Clopper-Pearson bound**, the **certified radius**,
# why the noise level **σ** should be chosen per input (**Isotropic DD**), and why it may differ per direction
# (**ANCER**). It ends with the measures the papers report (**certified accuracy**, **ACR**, **ACR̃**), the
# **memory** that keeps a per-input σ sound, and a [glossary](#glossary) of every term the notebooks use.
#
# Everything below is computed by `ancer_lite` (`ancer_lite/studies/primer.py` holds this notebook's steps); the
# toy classifiers are exact formulas, so each number can be checked against a closed form. Reading time: about
# fifteen minutes; running time: under a minute.

# %% tags=["parameters"]
profile = "quick"
seed = 0

# %%
import matplotlib.patheffects as pe
import matplotlib.pyplot as plt
import numpy as np

from ancer_lite.report import style
from ancer_lite.report.display import md, setup_notebook
from ancer_lite.report.figures import draw_region, plot_landscape, save_fig
from ancer_lite.runs.profiles import get_profile
from ancer_lite.studies import primer as pr

P = get_profile(profile)
setup_notebook(seed)
toys = pr.toy_classifiers()
X0 = np.array(pr.X0)
HALO = [pe.Stroke(linewidth=6.5, foreground="white"), pe.Normal()]  # lines stay visible on the dark landscape
BOX = dict(frameon=True, facecolor="white", framealpha=0.92)        # legends readable on any background
L2 = style.norm_symbol("l2")

# %% [markdown]
# ## 1. A classifier, an input, and noise
#
# A **base classifier** f maps an input to a class. Ours is a formula on the plane: class 1 on the half-plane
# x₁ ≥ 0.5 and beyond the circle of radius 1.5, class 0 elsewhere. The input x is the origin, of class 0, at
# distance 0.5 from the other class.
#
# **Randomized smoothing** (Cohen et al. 2019) replaces f by the **smoothed classifier** g: g(x) is the class that f
# gives most often to noisy copies x + ε of x, with ε drawn from a Gaussian of standard deviation **σ** in every
# coordinate. p_A, the probability that a noisy copy lands in g's class, decides everything that follows. We cannot
# compute p_A for a real network, but we can count: the left panel below draws a few hundred noisy copies at
# σ = 0.25 and colours each by f's vote.

# %% tags=["nbval-check-output"]
points, votes = pr.noisy_votes(toys["line and ring"], pr.X0, pr.SIGMA, 400, seed)
counts = np.bincount(votes, minlength=2)
print("votes per class:", counts.tolist())

# %% tags=["hide-input"]
md(f"Of {len(votes)} noisy copies, **{counts[0]}** land in class 0 and **{counts[1]}** in class 1: "
   f"g(x) = {int(np.argmax(counts))}, with p_A estimated at {counts.max() / len(votes):.3f}.")

# %% [markdown]
# ## 2. CERTIFY: from votes to a guarantee
#
# A certificate is a promise that g gives the same class to *every* point within a distance R of x. Cohen et al.
# prove that if p_A > ½ then g cannot change class within the ℓ2 radius **R = σ Φ⁻¹(p_A)**, where Φ⁻¹ is the
# inverse of the standard normal's distribution function (its quantile). We call Φ⁻¹(p_A) the **gap**. Since p_A is
# unknown, **CERTIFY** replaces it by a number it can trust:
#
# 1. **N0** noisy copies choose the class c_A (the most frequent vote);
# 2. **N** *fresh* copies count the votes k for c_A;
# 3. the **Clopper-Pearson** bound gives a p_A lower bound, true with probability at least 1 − **α**;
# 4. if that bound is at most ½, CERTIFY **abstains**; otherwise R = σ Φ⁻¹(lower bound).
#
# The table shows each step on our input at σ = 0.25 (the quick profile's N0, N and α). The ring is 1.5 away, six
# σ, so almost no noisy copy reaches it and the classifier acts like the half-plane alone, whose exact p_A is
# Φ(0.5 / σ) and whose exact radius is 0.5, the distance to the line: CERTIFY's radius is a little smaller, the price
# of bounding p_A from samples, and never larger (it is sound).

# %%
steps = pr.certify_once(toys["line and ring"], pr.X0, pr.SIGMA, P.n0, P.n, P.alpha, seed)
radius = float(steps.set_index("step").loc["radius σ·gap", "value"])
share = float(steps.set_index("step").loc["share k / N", "value"])
assert 0.45 < radius < pr.DISTANCE  # sound: below the distance to the other class, and close to it
steps[["step", "shown", "meaning"]]

# %% [markdown]
# The same share of votes is worth less with fewer draws: the bound must hold whatever the draws were, so it sits
# further below the share when N is small. With the share observed above:

# %%
by_n = pr.bound_versus_n(share, [100, 1_000, 10_000, 100_000], P.alpha, pr.SIGMA)
assert by_n["p_A lower bound"].is_monotonic_increasing and (by_n["p_A lower bound"] < share).all()
by_n.round(4)

# %%
fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.9))
for ax in axes:
    plot_landscape(ax, toys["line and ring"], pr.LABEL, X0, half_width=1.6)
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
style.colorbar(fig, axes[1].images[-1], list(axes), "base classifier confidence $f^0(x)$", shrink=0.85)
for c, colour in ((0, "white"), (1, "#F0E442")):
    sel = votes == c
    axes[0].scatter(points[sel, 0], points[sel, 1], s=12, color=colour, edgecolors="black", linewidths=0.4,
                    label=f"f votes {c}: {sel.sum()}")
axes[0].plot(*X0, "*", color="white", mec="black", ms=14, label="input x")
axes[0].set_title(f"(a) {len(votes)} noisy copies x + ε, σ = {pr.SIGMA}")
style.legend(axes[0], loc="lower left", **BOX)
draw_region(axes[1], X0, np.full(2, radius), "l2", lw=3.0, path_effects=HALO,
            **style.line("fixed", linestyle="-", label=f"certified {L2} ball, R = {radius:.3f}"))
axes[1].plot(*X0, "*", color="white", mec="black", ms=14, label="input x")
axes[1].set_title(f"(b) CERTIFY's ball at σ = {pr.SIGMA}, N = {P.n:,}")
style.legend(axes[1], loc="lower left", **BOX)
fig.suptitle("Primer: randomized smoothing on a 2D toy classifier (class 1: $x_1 \\geq 0.5$ and beyond radius 1.5)")
style.stand_in(fig, "toy2d", profile=P.name)
save_fig(fig, "extra_primer_fig1_smoothing_and_certify", "Primer (Cohen et al. 2019's smoothing and CERTIFY)",
         caption="A 2D toy base classifier (blue: class 0, the input's class; white line: its decision boundary). "
                 "(a) noisy copies of the input coloured by the base classifier's vote; (b) the ℓ2 ball CERTIFY "
                 "certifies for the smoothed classifier at σ = 0.25, just inside the distance 0.5 to the other class.")

# %% [markdown]
# ## 3. Which σ? The trade-off that makes σ per input worth choosing
#
# σ appears twice in R = σ Φ⁻¹(p_A): a larger σ multiplies the gap, but spreads the noise further, which lowers
# p_A. The figure certifies our input at many σ, for two classifiers: the half-plane alone, and the half-plane with
# the ring. Three things to see:
#
# * **Small σ is limited by N, not by the classifier.** When all N votes agree, the bound is α^(1/N) (the p_A at
#   which N agreeing votes out of N have probability α: p^N = α), so R can never exceed σ Φ⁻¹(α^(1/N)) (grey
#   dashes): a straight line through 0.
# * **For the half-plane alone, R settles at the distance 0.5** for every larger σ (the exact radius, dotted): a
#   linear classifier is the case Cohen et al.'s bound is tight for.
# * **With the ring, large σ is harmful**: the noise reaches class 1 on every side, p_A falls, and R collapses
#   (to an abstention at the largest σ).
#
# So the best σ depends on the input's surroundings. **Isotropic DD** (data-dependent smoothing, Alfarra et al.
# 2020) chooses, for each input, the σ that maximizes its own certified radius, by gradient ascent on a
# differentiable estimate of σ Φ⁻¹(p_A); ANCER starts from that σ.

# %%
sigmas = [0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0]
curve = pr.radius_versus_sigma({k: toys[k] for k in ("line", "line and ring")}, sigmas, P.n0, P.n, P.alpha, seed)
line = curve[curve.classifier == "line"]
ring = curve[curve.classifier == "line and ring"]
assert (curve.radius <= pr.DISTANCE).all()                            # sound at every σ
assert np.allclose(line.radius[line.sigma <= 0.1], line["N's limit"][line.sigma <= 0.1])  # N-limited
assert (line.radius[line.sigma >= 0.3] > 0.48).all()                  # the line: close to the exact 0.5
best = ring.loc[ring.radius.idxmax()]

# %% tags=["hide-input"]
md(f"With the ring, the best σ on this grid is **{best.sigma}** (R = {best.radius:.3f}); at σ = {sigmas[-1]} "
   f"CERTIFY {'abstains' if ring.radius.iloc[-1] == 0 else f'certifies only R = {ring.radius.iloc[-1]:.3f}'}.")

# %%
fig, ax = plt.subplots(figsize=(6.4, 4.4))
ax.plot(line.sigma, line.radius, **style.line("isotropic", markers=True, linestyle="-", label="half-plane alone"))
ax.plot(ring.sigma, ring.radius, **style.line("ancer", markers=True, linestyle="-", label="half-plane and ring"))
ax.plot(line.sigma, line["N's limit"], color="grey", linestyle="--", label=f"N's limit σ Φ⁻¹(α^(1/N)), N = {P.n:,}")
ax.axhline(pr.DISTANCE, color="black", linestyle=":", label="exact radius of the half-plane: 0.5")
ax.set_ylim(0, 0.6)
ax.set_xlabel("noise level σ")
ax.set_ylabel(f"certified {L2} radius R")
ax.set_title("Primer: CERTIFY's radius at x against σ (2D toy classifiers)")
style.legend(ax, loc="lower right")
style.stand_in(fig, "toy2d", profile=P.name)
save_fig(fig, "extra_primer_fig2_radius_against_sigma", "Primer (why σ is chosen per input)",
         caption="CERTIFY's ℓ2 radius at the input against the noise level σ, for a half-plane classifier (its exact "
                 "radius 0.5, dotted) and the same with a ring of the other class: small σ is limited by the number "
                 "of draws N, large σ by the other class's mass.")

# %% [markdown]
# ## 4. Anisotropy: a different σ in each direction (ANCER)
#
# A ball treats every direction alike. Near a boundary that is close in one direction only, that wastes most of the
# room: in the corridor below (class 1 where |x₁| ≥ 0.3, and beyond the ring), the other class is 0.3 away along
# x₁ but far away along x₂. **ANCER** (Eiras et al.) gives each coordinate its own σᵢ (the σᵢ are the diagonal of a
# matrix Σ, hence the name ℓΣ2), starting from Isotropic DD's σ and never going below it, and certifies an
# **ellipse** of semi-axes σᵢ × gap, the gap Φ⁻¹(p_A) as before (ANCER Corollary 1). With uniform noise, of
# half-width λᵢ in coordinate i, the region is instead a **generalized cross-polytope** (ℓΛ1: a diamond stretched
# along each axis) of semi-axes λᵢ × (2p_A − 1) (Corollary 2); notebooks 03-05 certify both. ANCER maximizes the
# region's volume: its objective is the **proxy radius**, the gap times the geometric mean of the σᵢ (the radius of
# the ball of the same volume), plus κ times the ℓ2 radius of the largest ball inside it (min σᵢ × gap).
#
# The table compares the two certificates at the corridor's centre. The ℓ2 radius barely moves, since the corridor
# is as narrow as before; the proxy radius and the area grow, because the ellipse stretches along the corridor.

# %%
regions = pr.isotropic_and_anisotropic(toys["corridor"], P.n0, P.n, P.alpha, seed)
table = pr.regions_table(regions)
iso, ani = table.set_index("method").loc["isotropic"], table.set_index("method").loc["ancer"]
assert iso["ℓ2 radius"] < pr.CORRIDOR and ani["ℓ2 radius"] < pr.CORRIDOR   # both sound against the corridor's walls
assert ani["area"] > 2 * iso["area"]
md(f"ANCER's ellipse covers **{ani['area'] / iso['area']:.1f}×** the area of Isotropic DD's ball, with a proxy radius "
   f"of {ani['proxy radius']:.3f} against {iso['proxy radius']:.3f}.")
table.round(4)

# %%
fig, ax = plt.subplots(figsize=(5.6, 5.0))
plot_landscape(ax, toys["corridor"], pr.LABEL, X0, half_width=1.6)
style.colorbar(fig, ax.images[-1], ax, "base classifier confidence $f^0(x)$", shrink=0.85)
draw_region(ax, X0, regions["ancer"].semi_axes, "l2", lw=4.0, path_effects=HALO, **style.line("ancer", linestyle="-",
            label=f"ANCER: {style.norm_symbol('l2', anisotropic=True)} ellipse, area × {ani['area'] / iso['area']:.1f}"))
draw_region(ax, X0, regions["isotropic"].semi_axes, "l2", lw=2.0, gapcolor="white",
            **style.line("isotropic", linestyle="--", label=f"Isotropic DD: {L2} ball"))
ax.plot(*X0, "*", color="white", mec="black", ms=14, label="input x")
ax.set_xlabel("$x_1$")
ax.set_ylabel("$x_2$")
ax.set_title("Primer: ball against ellipse in a corridor\n(class 1: $|x_1| \\geq 0.3$ and beyond radius 1.5)")
style.legend(ax, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1, frameon=False)
style.stand_in(fig, "toy2d", profile=P.name)
save_fig(fig, "extra_primer_fig3_ball_against_ellipse", "Primer (ANCER's idea, §3)",
         caption="In a corridor of class 0 (blue) between two half-planes of class 1, Isotropic DD's certified ℓ2 "
                 "ball is limited by the near walls in every direction; ANCER's ellipse keeps that width across the "
                 "corridor and stretches along it.")

# %% [markdown]
# ## 5. From one input to a test set: what the papers report
#
# The papers certify every input of a test set and report:
#
# * **certified accuracy at radius r**: the share of test inputs that CERTIFY classifies correctly *and* certifies
#   with a radius at least r (an abstention counts as wrong). Plotted against r, it is the papers' main curve;
#   at r = 0 it is the smoothed classifier's accuracy.
# * **ACR** (average certified radius): the mean over test inputs of the radius, counting 0 for a wrong or abstained
#   input. For anisotropic regions the radius is that of the largest ℓp ball (all δ with ‖δ‖_p ≤ r) inside
#   (min σᵢ × gap), so that the
#   methods are compared on the same ground.
# * **ACR̃** (proxy ACR): the same mean with the proxy radius, which measures volume; ANCER's gains are mostly here.
# * A **claim** in this companion is one of the papers' statements turned into an effect measured on the same test
#   inputs for two methods (e.g. ANCER's ACR minus Isotropic DD's), with a **paired bootstrap interval** (the
#   effect recomputed on many resamples of the test inputs, drawn with replacement and the same for both methods;
#   the interval holds the middle 95% of those effects) and a verdict: **holds** (the interval lies above 0),
#   **fails** (below 0) or **within noise** (it contains 0).
#
# ## 6. The memory: keeping a per-input σ sound
#
# A certificate is a statement about one smoothed classifier. Cohen et al.'s g uses the same σ everywhere; with
# Isotropic DD and ANCER each input has its own σ, so "the" smoothed classifier is a different one at each input,
# and two certificates could overlap while promising different classes — a contradiction no theorem excludes.
# ANCER's **memory** (Algorithm 1, after Alfarra et al.) certifies the test inputs in order and keeps every region
# it has granted; when a new input's region would overlap an earlier region of another class, the new certificate
# is **shrunk** until it no longer does (or, under the worst-case policy, the input **abstains**). Notebook 02 shows
# it in 2D; notebook 04 measures what it costs and how much the test order matters.
#
# ## Where to go next
#
# * `02_motivation_2d`: ANCER's Figure 1, balls against anisotropic regions on a 2D dataset, each region checked.
# * `03_image_certification`: the papers' main experiment (Tables 1-2) on images, with the claims C1-C3.
# * `01_proof_checks`: the papers' propositions as numerical checks, for the reader who wants the proofs.
# * `04_runtime` to `07_ucan`: the cost, the appendices' statistics, RANCER (rotated ellipsoids) and UCAN (other
#   noise families and generators of σ).

# %% [markdown]
# <a id="glossary"></a>
# ## Glossary
#
# Every term the notebooks use, in the order a reader meets them.
#
# | term | meaning |
# | --- | --- |
# | <a id="g-base-classifier"></a>base classifier f | the network being certified: an input to a class (it returns logits). |
# | <a id="g-smoothed-classifier"></a>smoothed classifier g | the class f gives most often to noisy copies x + ε of the input (Cohen et al. 2019). |
# | <a id="g-sigma"></a>σ, θ | the noise's scale: the Gaussian's standard deviation σ; θ is the per-coordinate scale in general (σᵢ, or λᵢ for uniform noise). |
# | <a id="g-p-a"></a>p_A | the probability that a noisy copy is classified as g's class c_A. |
# | <a id="g-n0-n"></a>N0, N | CERTIFY's draws: N0 choose the class, N fresh ones count its votes (the papers: 100 and 100,000). |
# | <a id="g-alpha"></a>α | the probability that CERTIFY's bound is wrong (0.001): each certificate holds with probability 1 − α. |
# | <a id="g-fixed-sigma"></a>Fixed σ | Cohen et al.'s smoothing with the same σ for every input (the σ the model was trained with): the baseline the data-dependent methods are compared with. |
# | <a id="g-certify"></a>CERTIFY | Cohen et al.'s procedure: N0 draws choose the class, N fresh draws bound p_A from below, and the bound gives the radius (or an abstention). |
# | <a id="g-predict"></a>PREDICT | Cohen et al.'s prediction without a certificate: the top class of N noisy votes when a binomial test at level α says it leads the runner-up, else abstain. |
# | <a id="g-clopper-pearson"></a>Clopper-Pearson bound, lower bound on p_A | the exact one-sided lower confidence bound on p_A from k votes of N: p_A exceeds it with probability at least 1 − α. |
# | <a id="g-phi-inv"></a>Φ⁻¹ | the inverse of the standard normal's distribution function: Φ⁻¹(0.5) = 0, Φ⁻¹(0.99) ≈ 2.33. |
# | <a id="g-gap"></a>gap | Φ⁻¹(p_A) for Gaussian noise (ANCER Corollary 1), 2p_A − 1 for uniform noise (Corollary 2); the region's semi-axes are θᵢ × gap. |
# | <a id="g-abstain"></a>abstain | CERTIFY's answer when the bound on p_A is at most ½: no class, radius 0 (counted as wrong). |
# | <a id="g-radius"></a>certified radius (ℓ2, ℓ1) | the radius of the largest ℓp ball inside the certified region (min θᵢ × gap). |
# | <a id="g-l-sigma-2"></a>ℓΣ2, ℓΛ1 | ANCER's regions: an axis-aligned ellipsoid (Gaussian noise with per-coordinate σᵢ) and a generalized cross-polytope (uniform noise with per-coordinate λᵢ). |
# | <a id="g-proxy-radius"></a>proxy radius | the gap times the geometric mean of the θᵢ: the radius of the ball with the region's volume (ANCER §5). |
# | <a id="g-isotropic-dd"></a>Isotropic DD | data-dependent smoothing (Alfarra et al. 2020): one σ per input, chosen by gradient ascent on its certified radius. |
# | <a id="g-ancer"></a>ANCER | per-input, per-coordinate σᵢ (or λᵢ) from Isotropic DD's σ, maximizing the proxy radius plus κ × the ℓp radius. |
# | <a id="g-kappa"></a>κ | the weight of the ℓp radius in ANCER's objective (ANCER App. C; 2 here). In UCAN (notebook 07), κ is another quantity: the pattern-fixed NPG's σ map is σ(a, b) = κ‖(a, b)‖_p² + ι, with (a, b) the pixel's offset from the image centre and ι the σ at the centre (UCAN Eq. 5); γ is the bound above the σ of the universal and input-dependent NPGs (σ = γ·sigmoid(·)). |
# | <a id="g-memory"></a>memory (Algorithm 1) | ANCER §6: earlier certified regions kept so that a new region never overlaps one of another class. |
# | <a id="g-shrink"></a>shrink policy / abstain policy | what the memory does on an overlap: shrink the new region (the default) or abstain on that input (the worst case). |
# | <a id="g-fast-path"></a>fast path | the memory's quick test that rules out most pairs of regions before the exact intersection test; a literal reference checks it. |
# | <a id="g-certified-accuracy"></a>certified accuracy | the share of test inputs certified correctly with a radius at least r. |
# | <a id="g-acr"></a>ACR, ACR̃ | the mean certified radius over test inputs (0 when wrong or abstained), and the same with the proxy radius. |
# | <a id="g-rancer"></a>RANCER | ANCER with a rotation: ellipsoids along the eigenvectors of the input Hessian, not the axes. |
# | <a id="g-ari"></a>ARI, AR̃I | RANCER's average radius improvement: RANCER's ACR (ACR̃) minus ANCER's on the same test inputs (RANCER §4.1). |
# | <a id="g-ucan"></a>UCAN, NPG, ALM | anisotropic smoothing with other noise families, whose per-pixel σ (and mean μ) come from a noise parameter generator (NPG): a fixed formula with one chosen weight (pattern-fixed) or a network trained with the classifier (universal: one map for all inputs; input-dependent: a map per input); ALM (its "alternative Lebesgue measure", UCAN Eq. 23) is the geometric mean of the σᵢ times the radius: ANCER's proxy radius for Gaussian noise. |
# | <a id="g-p-a-prime"></a>p_A' | UCAN's notation for p_A under its anisotropic noise (per-pixel σ and mean μ): the probability its anisotropic certificates use. |
# | <a id="g-paper-models"></a>COHEN, SMOOTHADV, MACER, RS4A | the training recipes of the paper's base models (rows of its tables): Gaussian noise augmentation (Cohen et al. 2019), adversarial training of the smoothed classifier (SmoothAdv, Salman et al. 2019), certified-radius maximization (MACER, Zhai et al. 2020) and noise augmentation for uniform and other noises (RS4A, Yang et al. 2020). |
# | <a id="g-quick-profile"></a>quick profile | the settings `make all` runs on a 2-core CPU: stand-in data (8×8 digits for CIFAR-10, 5,000 MNIST images for ImageNet), small models; the **paper profiles** use the papers' data, models and N. |
# | <a id="g-stand-in"></a>stand-in data | a small dataset in the role of the paper's; a figure names it in its title or footer. |
# | <a id="g-validation-split"></a>validation split | inputs set aside from training and testing, on which step sizes and other settings are chosen (never on test inputs). |
# | <a id="g-selection-sigma"></a>selection σ | the σ a method's step size is chosen at on the validation split. |
# | <a id="g-widened"></a>widened | a grid of step sizes extended past its edge because the best value sat there, until the best lies inside. |
# | <a id="g-eligible"></a>eligible | a step size that keeps validation accuracy within a stated slack of the method it starts from, at the σ where it is chosen and at every σ where it is reused; only eligible ones can be chosen. UCAN's κ and γ (notebook 07) are eligible in the same sense against the fine-tuned isotropic control, at every λ where they are reused. |
# | <a id="g-claim"></a>claim, verdict | a paper's statement measured as an effect with a paired bootstrap interval (95% of the effects over resamples of the test inputs, the same resample for both methods): holds (interval above 0), fails (below 0), or within noise (it contains 0). |
# | <a id="g-nbval"></a>nbval, checked cell | the test that re-runs every notebook (`make test`) and compares the outputs of its cells tagged `nbval-check-output` (counts, verdicts) with the committed ones; timings are in cells it does not compare. |
