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
# # 01 — Proof sanity checks
#
# *New to randomized smoothing?* Read [00_primer](00_primer.ipynb) first; its [glossary](00_primer.ipynb#glossary)
# defines the terms used here.
#
# **What a proof check is.** A paper's proposition says that some quantity never exceeds a bound (or equals an
# expression). We cannot re-prove it here, but we can try to catch it out: build instances where the truth is
# known exactly (a half-space, whose smoothed classifier has a closed form; a classifier on a grid of boxes, whose
# smoothed scores are sums of products of one-dimensional probabilities), measure the quantity, and compare it with
# the paper's bound. A wrong statement, or a typo in a formula, shows up as a measurement beyond the bound. Every
# theoretical result the companion relies on is turned into such a **falsifiable numerical check**:
#
# | paper | results checked |
# | --- | --- |
# | ANCER (Eiras et al., TMLR 2022) | §4: Proposition 1, Theorem 1, Propositions 2-3, Corollaries 1-2; §5: Proposition 4, the ellipsoid volume, Proposition 5, enclosed balls; App. B.1: Propositions 6-7, Corollary 3 (Gaussian mixtures); App. D: Lemmas 1-4, Proposition 8, D.3-D.5 (memory-based certification) |
# | RANCER (Rumezhak et al.) | Eq. 3 (rotated certificate), Eq. 5 (intersection of rotated ellipsoids), Eq. 6 (projection), LargestOutSubset |
# | UCAN | Theorem 3.2 (Gaussian and uniform noise, with mean offsets), Corollary 3.3, Theorem C.2 / Lemma D.3 (super-ellipsoid volume) |
#
# **How to read the tables.** Each row reports what is *measured* (`value`), the `bound` it is compared with,
# the `slack` and a tolerance `tol` with its justification. For an upper bound the slack is `bound - value`, for a
# lower bound `value - bound`, for an identity `-|value - reference|`; a check **PASSes iff slack ≥ -tol**. A
# slack near 0 means the bound is *attained* (tight); a large positive slack means it holds with room to spare
# (sound but not tight). Tolerances are float64 rounding for closed forms (1e-9), finite-difference error for
# Lipschitz ratios (1e-6), the solver's accuracy for SLSQP/LP references (1e-6 / 1e-7), adaptive quadrature (1e-8),
# and 5 Monte Carlo standard errors for volumes (these constants are asserted below the imports). Base classifiers are
# chosen so that the smoothed classifier is known exactly: half-spaces
# (g = Φ(margin / ‖Σ^½ w‖) under Gaussian noise) and random "grid" classifiers (random labels on the cells of a
# random, possibly rotated, rectilinear grid), whose smoothed scores are sums of products of 1-D interval
# probabilities. The math lives in `ancer_lite/proof_checks/` (one module per paper) and `ancer_lite/core/rotated.py`; this notebook calls
# and displays.
#
#
# The seeds' typos and unsound steps that these checks found are listed, and demonstrated, in §9.

# %% tags=["parameters"]
profile = "quick"
seed = 0

# %%
import math
import time

import matplotlib.pyplot as plt
import numpy as np

from ancer_lite import proof_checks as pc
from ancer_lite.report import style
from ancer_lite.report.display import setup_notebook, timing
from ancer_lite.report.figures import draw_region, save_fig
from ancer_lite.runs.profiles import get_profile
from ancer_lite.evaluation.verify import region_boundary_2d

P = get_profile(profile)
setup_notebook(seed)
started = time.perf_counter()
results: dict[str, list] = {}
print(f"profile {P.name}: {P.mc_samples:,} Monte Carlo samples per volume estimate")
# the tolerances quoted in "How to read the tables" above
assert (pc.EXACT_TOL, pc.FD_TOL, pc.SOLVER_TOL, pc.LP_TOL, pc.QUAD_TOL, pc.MC_Z) == (1e-9, 1e-6, 1e-6, 1e-7, 1e-8, 5.0)

# %% [markdown]
# ## 1. ANCER §4 — the Lipschitz recipe
#
# **Proposition 1.** If a differentiable g : ℝⁿ → ℝ has sup_x ‖∇g(x)‖_* ≤ L, then |g(x) − g(y)| ≤ L‖x − y‖,
# where ‖·‖ is the dual norm of ‖·‖_*. *Check:* one-hidden-layer tanh networks g = vᵀtanh(Wx + b) have
# sup‖∇g‖_* ≤ Σ_j |v_j| ‖W_j‖_*; two-point ratios |g(x) − g(y)| / (L‖x − y‖) in ℓ1, ℓ2 and ℓ∞ must stay ≤ 1
# (one-unit networks reach 1 on their zero set, along the dual maximizer).
#
# **Theorem 1.** If every score g^i is L-Lipschitz under ‖·‖_*, the prediction c_A cannot change for
# ‖δ‖ ≤ (g^{c_A}(x) − max_{c≠c_A} g^c(x)) / (2L). *Check:* for linear scores the worst case over the ball is
# exact, (g_A − g_c)(x) − ρ‖C_A − C_c‖_*; it must stay ≥ 0, and it reaches 0 when C_B = −C_A.

# %% tags=["nbval-ignore-output"]
section = "ANCER §4 (Lipschitz recipe)"
results[section] = pc.run_section(section, P.mc_samples, seed)
pc.results_table(results[section])

# %% tags=["nbval-check-output"]
print("\n".join(pc.verdict_lines(results["ANCER §4 (Lipschitz recipe)"])))

# %% [markdown]
# ## 2. ANCER §4.1 — ellipsoids from Gaussian noise
#
# With g_Σ(x) = E_{ε∼N(0,Σ)}[f(x + ε)] for any f : ℝⁿ → [0, 1]:
#
# **Proposition 2.** Φ⁻¹(g_Σ) is 1-Lipschitz under ‖·‖_{Σ⁻¹,2}, i.e. |Φ⁻¹g(x) − Φ⁻¹g(y)| ≤ ‖x − y‖_{Σ,2} with
# ‖δ‖_{Σ,2} = √(δᵀΣ⁻¹δ). *Check:* two-point ratios on grid classifiers (rotated frames) and half-spaces (dense Σ),
# probing along Σ∇h (the direction that maximizes the ratio), the axes, Σ's eigenvectors and random directions.
# The half-space f* = 1[wᵀz + b ≥ 0] of the proof makes Φ⁻¹g = (wᵀx + b)/‖Σ^½w‖ linear: ratio exactly 1.
#
# **Corollary 1.** The prediction is constant on ‖δ‖_{Σ,2} ≤ ½(Φ⁻¹(p_A) − Φ⁻¹(p_B)). *Check:* for half-spaces the
# exact flip distance is r* = margin/‖Σ^½w‖ and 1 − r/r* must be ≥ 0 (it is 0: tight); for 2-D grid classifiers
# the certified ellipsoid is sampled on a 24 × 720 polar grid and the relative margin must stay ≥ 0.

# %% tags=["nbval-ignore-output"]
section = "ANCER §4.1 (ellipsoids)"
results[section] = pc.run_section(section, P.mc_samples, seed)
pc.results_table(results[section])

# %% tags=["nbval-check-output"]
print("\n".join(pc.verdict_lines(results["ANCER §4.1 (ellipsoids)"])))

# %% [markdown]
# ## 3. ANCER §4.2 — generalized cross-polytopes from uniform noise
#
# With g_Λ(x) = E_{ε∼U[−1,1]ⁿ}[f(x + Λε)]:
#
# **Proposition 3.** g_Λ is ½-Lipschitz under ‖Λx‖_∞, i.e. |g(x) − g(y)| ≤ ½‖Λ⁻¹(x − y)‖₁. *Check:* two-point
# ratios on grid classifiers (exact piecewise-polynomial scores) and axis half-spaces, for which
# g = clip((x_k − c + λ_k)/(2λ_k), 0, 1) reaches ½ exactly.
#
# **Proposition 3's proof identity** λ₁∂g/∂x₁ = 2⁻ⁿ∫_{[−1,1]^{n−1}} [f(x₁ + λ₁, x̂ + Λ̂ε̂) − f(x₁ − λ₁, x̂ + Λ̂ε̂)] dε̂
# (printed with x₁ ± 1) is compared with a finite-difference derivative.
#
# **Corollary 2.** The prediction is constant on ‖Λ⁻¹δ‖₁ ≤ p_A − p_B (tight for axis half-spaces).

# %% tags=["nbval-ignore-output"]
section = "ANCER §4.2 (generalized cross-polytopes)"
results[section] = pc.run_section(section, P.mc_samples, seed)
pc.results_table(results[section])

# %% tags=["nbval-check-output"]
print("\n".join(pc.verdict_lines(results["ANCER §4.2 (generalized cross-polytopes)"])))

# %% [markdown]
# ## 4. ANCER §5 — sizes of certified regions
#
# **Proposition 4.** V({δ : ‖Λ⁻¹δ‖₁ ≤ r}) = (2r)ⁿ/n! · ∏λ_i (for a dense positive definite Λ: (2r)ⁿ/n! · |det Λ|,
# the alternative proof). **§5.1.** V({δ : ‖δ‖_{Σ,2} ≤ r}) = rⁿπ^{n/2}/Γ(n/2 + 1) · ∏σ_i (rotation-invariant).
# *Check:* Monte Carlo in a bounding box with P.mc_samples points per case; |estimate − formula| ≤ 5 standard
# errors (the formulas are `regions.log_volume`, which the certification code uses).
#
# **Proposition 5.** (2r/n)ⁿ V(Z(Λ)) ≤ V({‖Λ⁻¹δ‖₁ ≤ r}) ≤ (2r)ⁿ V(Z(Λ)) with V(Z(Λ)) = √|ΛᵀΛ| the volume of the
# zonotope {Λu : u ∈ [0, 1]ⁿ}; both volumes are measured by Monte Carlo.
#
# **Enclosed balls (§5.1-5.2, = UCAN Corollary 3.3 for p = 1, 2).** The largest ℓp ball around x inside the
# region has radius min_i θ_i·r (for a rotated cross-polytope r / max_j ‖Λ⁻¹Uᵀe_j‖₁): its boundary lies inside
# the region and the ball 10⁻⁶ larger does not.

# %% tags=["nbval-ignore-output"]
section = "ANCER §5 (volumes)"
results[section] = pc.run_section(section, P.mc_samples, seed)
pc.results_table(results[section])

# %% tags=["nbval-check-output"]
print("\n".join(pc.verdict_lines(results["ANCER §5 (volumes)"])))

# %% [markdown]
# ## 5. ANCER App. B.1 — Gaussian mixtures, and which Lipschitz constant is right
#
# For G = Σ_i α_i N(0, Σ_i), g_G = Σ_i α_i g_{Σ_i}.
#
# **Proposition 6.** g_Σ is L-Lipschitz under ‖·‖_{Σ⁻¹,2}: |g(x) − g(y)| ≤ L‖x − y‖_{Σ,2}, printed with
# L = √(2/π) (the proof bounds E[f·uᵀs] by E|uᵀs|). For f with values in [0, 1] one can subtract ½ first
# (E[uᵀs] = 0), so the tight constant is E[(uᵀs)₊] = **1/√(2π)**, attained by a half-space at p = ½; √(2/π) is
# the tight constant of a score *difference* g^A − g^B (values of f^A − f^B in [−1, 1]).
#
# **Proposition 7.** g_G is L-Lipschitz under ‖·‖_{B⁻¹,2} with B⁻¹ = Σ_i α_i Σ_i⁻¹ (triangle inequality, Prop. 6,
# then Jensen: Σ_i α_i‖δ‖_{Σ_i,2} ≤ ‖δ‖_{B,2}). Printed with L = √(π/2).
#
# **Corollary 3.** The prediction is constant on ‖δ‖_{B,2} ≤ (g_A − g_B)/√(2π) = (g_A − g_B)/(2·√(π/2)). *Check:*
# for mixture-smoothed half-spaces the exact flip distance r* is found by bisection (the worst δ has
# wᵀδ = −ρ‖B^½w‖); the ratio certified/r* must stay ≤ 1 for the printed constant 1/√(2π), for √(π/8) (from
# Prop. 6's L) and for the tight √(π/2) (from L = 1/√(2π)). For √(π/2) the ratio must also *reach* 1 as g_A → ½
# ("Cor. 3 attained"): the certificate is attained, so no larger constant is sound. The printed constant is
# therefore sound but not tight.

# %% tags=["nbval-ignore-output"]
section = "ANCER App. B.1 (Gaussian mixtures)"
results[section] = pc.run_section(section, P.mc_samples, seed)
pc.results_table(results[section])

# %% tags=["nbval-check-output"]
print("\n".join(pc.verdict_lines(results["ANCER App. B.1 (Gaussian mixtures)"])))
constants = pc.mixture_constants()
print(constants.round(4).to_string(index=False))
assert abs(constants["radius vs Cor. 3"].iloc[2] - math.pi) < 1e-12   # exact identity, float64 rounding
# the tight certificate constant is twice the sqrt(π/8) that Prop. 6's constant gives
assert abs(constants["radius vs Cor. 3"].iloc[2] / constants["radius vs Cor. 3"].iloc[0] - 2) < 1e-12

# %% [markdown]
# ## 6. ANCER App. D — memory-based certification
#
# Algorithm 1 keeps certificates of different classes disjoint, so every geometric test may only err towards
# "they intersect" and every distance only towards smaller.
#
# * **Lemma 1 (MaxIntersect).** If ‖a − b‖_p > r_a + r_b for ℓp balls containing R_A and R_B, the regions are
#   disjoint. *Check:* the ball of radius max_i s_i contains the region; every pair declared disjoint is disjoint
#   according to an independent SLSQP (ellipsoids) or LP (cross-polytopes) solver.
# * **Lemma 2.** R_t = {t·q_A(x) + (1−t)·q_B(x) ≤ 1} satisfies R_A ∩ R_B ⊆ R_t ⊆ R_A ∪ R_B.
# * **Lemma 3.** R_t is the ellipsoid (x − m)ᵀE_t(x − m) ≤ K(t) with E_t = tA + (1−t)B, m = E_t⁻¹(tAa + (1−t)Bb)
#   and K(t) = 1 − t·aᵀAa − (1−t)·bᵀBb + mᵀE_tm = 1 − t(1−t)(b−a)ᵀBE_t⁻¹A(b−a)
#   = 1 − (b−a)ᵀ((1−t)⁻¹B⁻¹ + t⁻¹A⁻¹)⁻¹(b−a); for diagonal A, B: 1 − Σ_i (b_i − a_i)² t(1−t)A_iiB_ii/(tA_ii + (1−t)B_ii).
# * **Proposition 8.** K is convex on (0, 1), K(0) = K(1) = 1, and K(t) < 0 for some t proves R_A ∩ R_B = ∅.
#   *Checks:* second differences of K on a t-grid are ≥ 0, and 0 ≤ 1 − K(t) ≤ min(t·dᵀAd, (1−t)·dᵀBd) (d = b − a),
#   which forces K(0) = K(1) = 1; by minimax duality 1 − min_t K(t) = min_x max(q_A(x), q_B(x)), the convex-solver value v*, so
#   min K < 0 exactly when v* > 1 (disjoint).
# * **D.3.** Cross-polytopes are tested through their circumscribed ellipsoids ‖A(x − a)‖₂ ≤ 1 (‖v‖₂ ≤ ‖v‖₁).
# * **D.4.** The projection onto an ellipsoid: x* = (2λA + I)⁻¹y with Σ_i y_i²A_ii/(1 + 2λA_ii)² = 1.
#   LargestOutSubset returns the ℓp ball around b of radius min(dist_p(b, R_A)(1 − ε), min_i s_i).
# * **Lemma 4.** The ℓ2 projection of y onto {wᵀx = k} is y − (wᵀy − k)w/‖w‖².
# * **D.5.** The facet of {Σ|x_i|/s_i ≤ 1} facing y is wᵀx = 1 with w = sign(y)/s; the certified ℓ1 radius must not
#   exceed the ℓ1 distance (checked against an LP, which also supplies a witness point when it does).

# %% tags=["nbval-ignore-output"]
section = "ANCER App. D (memory-based certification)"
results[section] = pc.run_section(section, P.mc_samples, seed)
pc.results_table(results[section])

# %% tags=["nbval-check-output"]
print("\n".join(pc.verdict_lines(results["ANCER App. D (memory-based certification)"])))

# %% [markdown]
# **Figure: K(t).** For an intersecting pair K stays positive; for a disjoint pair it dips below 0 (the dip
# certifies disjointness); the rotated pair uses RANCER's Eq. 5 with dense matrices.

# %% tags=["nbval-ignore-output"]
curves = pc.k_curves()
K_STYLE = {"axis-aligned, intersecting": dict(color=style.METHODS["ancer"].color, ls="--"),
           "axis-aligned, disjoint": dict(color=style.METHODS["ancer"].color, ls="-"),
           "rotated, RANCER Eq. 5": dict(color=style.METHODS["rancer"].color, ls="-")}
fig, ax = plt.subplots(figsize=(6.4, 3.8))
for label, (t, k) in curves.items():
    ax.plot(t, k, label=f"{label}: min K = {k.min():.3f}", **K_STYLE[label])
    ax.plot(t[np.argmin(k)], k.min(), "o", color=K_STYLE[label]["color"], ms=5)
ax.axhline(0.0, color="black", lw=0.8, ls=":")
ax.set_xlabel("t")
ax.set_ylabel("K(t)")
ax.set_title("K(t) < 0 for some t iff the ellipsoids are disjoint\n(ANCER App. D.2, Prop. 8; RANCER Eq. 5)")
style.legend(ax, loc="upper center")
save_fig(fig, "ancer_fig_d_k_function", "ANCER App. D.2 (K(t), Prop. 8)",
         caption="K(t) of ANCER App. D.2 (Proposition 8) for an intersecting and a disjoint pair of axis-aligned "
                 "ellipsoids, and RANCER's Eq. 5 for a disjoint rotated pair: K is convex with K(0) = K(1) = 1, "
                 "and it dips below 0 exactly when the two ellipsoids are disjoint.");

# %% [markdown]
# **The D.5 counterexample.** y = (3, 0.001) against the cross-polytope with semi-axes s = (1, 10). The printed
# construction projects y in ℓ2 onto the facet hyperplane x₁ + 0.1·x₂ = 1 and takes the ℓ1 length of the step,
# r* = 2.0001·1.1/1.01 ≈ 2.178, but moving x₁ alone reaches the region after 2.0001: the ℓ1 ball of radius r*
# around y contains points of the region (the numbers are asserted in the next cell).

# %% tags=["nbval-check-output"]
d5 = pc.d5_counterexample_data()
print(f"printed r* = {d5['printed_radius']:.4f}, exact l1 distance = {d5['exact_radius']:.4f}, "
      f"Hölder bound = {d5['holder_radius']:.4f}")
print(f"LP nearest point of the region: ({d5['nearest'][0]:.4f}, {d5['nearest'][1]:.4f}), "
      f"inside the printed ball: {np.abs(d5['nearest'] - d5['y']).sum() < d5['printed_radius']}")
assert abs(d5["printed_radius"] - 2.0001 * 1.1 / 1.01) < 1e-12      # closed form, float64 rounding
assert abs(d5["exact_radius"] - 2.0001) < 1e-12
assert abs(d5["lp_radius"] - d5["exact_radius"]) < 1e-8             # HiGHS tolerance 1e-10
assert round(d5["printed_radius"], 3) == 2.178                        # the value quoted above

# %% tags=["nbval-ignore-output"]
y, w = d5["y"], d5["normal"]
fig, ax = plt.subplots(figsize=(7.6, 4.0))
ax.fill(*region_boundary_2d(np.zeros(2), d5["scales"], "l1").T, color=style.LEVELS[0], alpha=0.6,
        label=r"region $|x_1|/1 + |x_2|/10 \leq 1$")
draw_region(ax, y, np.full(2, d5["printed_radius"]), "l1", color=style.METHODS["ancer"].color, lw=1.8,
            label=rf"$\ell_1$ ball of the printed $r^*$ = {d5['printed_radius']:.4f}")
draw_region(ax, y, np.full(2, d5["exact_radius"]), "l1", color="black", lw=1.5, ls="--",
            label=rf"$\ell_1$ ball of the exact $\ell_1$ distance = {d5['exact_radius']:.4f}")
xs = np.linspace(-1.5, 5.5, 2)
ax.plot(xs, (1 - w[0] * xs) / w[1], color="grey", lw=0.9, ls=":", label=r"facet hyperplane $x_1 + 0.1\,x_2 = 1$")
ax.plot(*y, "ko", ms=5, label="y = (3, 0.001)")
ax.plot(*d5["projection"], "^", color=style.METHODS["ancer"].color, ms=7, label=r"$\ell_2$ projection $x^*$ (D.5)")
ax.plot(*d5["nearest"], "s", color="black", mfc="white", ms=6, label=r"nearest point of the region in $\ell_1$")
ax.annotate("the printed ball\nenters the region", xy=(0.92, 0.0), xytext=(-1.4, -2.2), fontsize=9,
            arrowprops=dict(arrowstyle="->", color="black", lw=1.0))
ax.set_xlim(-1.5, 5.5)
ax.set_ylim(-2.6, 2.6)
ax.set_xlabel(r"$x_1$")
ax.set_ylabel(r"$x_2$")
ax.set_aspect("equal")
style.legend(ax, loc="upper left", bbox_to_anchor=(1.02, 1.0))
ax.set_title("ANCER App. D.5 as printed is unsound:\nthe printed $r^*$ exceeds the $\\ell_1$ distance to the region")
save_fig(fig, "ancer_fig_d5_l1_counterexample", "ANCER App. D.5 (LargestOutSubset, l1 counterexample)",
         caption="ANCER App. D.5's printed ℓ1 radius r* (the ℓ1 length of the ℓ2 projection onto the facet "
                 "hyperplane) for y = (3, 0.001) and the cross-polytope with semi-axes (1, 10): the ℓ1 ball of "
                 "radius r* reaches into the region, while the exact ℓ1 distance stops at its nearest point.");

# %% [markdown]
# ## 7. RANCER §3 — rotated ellipsoids
#
# **Eq. 3.** With noise U ε, ε ∼ N(0, Σ̂), the certified region is √(δᵀUΣ̂⁻¹Uᵀδ) ≤ ½(Φ⁻¹(p_A) − Φ⁻¹(p_B))
# (Corollary 1 with the dense covariance UΣ̂Uᵀ; the rotation is missing from the printed formula).
#
# **Eq. 5.** Rotated ellipsoids S_Q = {(x − q)ᵀQ(x − q) ≤ 1}, S_R are disjoint iff
# K(t) = 1 − (r − q)ᵀ((1−t)⁻¹R⁻¹ + t⁻¹Q⁻¹)⁻¹(r − q) < 0 for some t ∈ (0, 1). `rotated.minimize_k` simultaneously
# diagonalizes Q⁻¹ and R⁻¹, which turns Eq. 5 into ANCER's diagonal K, and minimizes it by bisection on K'.
# *Check:* K(t*) equals Eq. 5 evaluated with dense inverses, no t on a 2001-point grid is lower, and
# 1 − K(t*) equals the SLSQP value min_x max(q_Q, q_R).
#
# **Eq. 6.** The projection of r onto S_Q solves (r − q)ᵀ(2λQ + I)⁻¹Q(2λQ + I)⁻¹(r − q) = 1 (solved in Q's
# eigenbasis); the distance must match SLSQP and Eq. 6 must vanish at the returned λ. **LargestOutSubset**: the
# ℓ2 ball around r of radius min(dist(r, S_Q)(1 − ε), min_i s_{R,i}) misses S_Q and fits in S_R.

# %% tags=["nbval-ignore-output"]
section = "RANCER §3"
results[section] = pc.run_section(section, P.mc_samples, seed)
pc.results_table(results[section])

# %% tags=["nbval-check-output"]
print("\n".join(pc.verdict_lines(results["RANCER §3"])))

# %% [markdown]
# ## 8. UCAN — anisotropic noise by transformation
#
# **Theorem 3.2.** If isotropic noise ε with scale λ certifies ‖δ‖_p ≤ R(p_A, p_B), the anisotropic noise
# ε' = σ ⊙ ε + μ certifies (Σ_i |δ'_i/σ_i|^p)^{1/p} ≤ R(p'_A, p'_B), whatever the mean offset μ. *Check:* Gaussian
# noise (p = 2, R = λ·½(Φ⁻¹p_A − Φ⁻¹p_B)) with random offsets, and uniform noise (p = 1, R = λ(p_A − p_B)); the
# candidate perturbations include a box 4× wider than the region, so a region written without |·| is caught.
#
# **Corollary 3.3.** ‖δ'‖_p ≤ min_i σ_i·R implies the guarantee (p ∈ {0.5, 1, 2, 3, ∞} checked; the radius is
# attained on the axis of the smallest σ).
#
# **Theorem C.2 / Lemma D.3.** V({Σ_i |δ_i/(σ_iR)|^{p_i} ≤ 1}) = 2^d ∏_i σ_iRΓ(1 + 1/p_i) / Γ(1 + Σ_i 1/p_i),
# i.e. (2RΓ(1 + 1/p))^d ∏σ_i / Γ(1 + d/p) for equal p: Monte Carlo (5 SE), 2-D adaptive quadrature, and
# ANCER's volumes for p = 1 and p = 2.

# %% tags=["nbval-ignore-output"]
section = "UCAN §3 and App. C-D"
results[section] = pc.run_section(section, P.mc_samples, seed)
pc.results_table(results[section])

# %% tags=["nbval-check-output"]
print("\n".join(pc.verdict_lines(results["UCAN §3 and App. C-D"])))

# %% [markdown]
# ## 9. The seeds' printed formulas, plugged into the checks
#
# **Typos and unsound steps found in the seeds.** Each numerical one is demonstrated below, where the printed form
# and the corrected one are plugged into the same check. The verdicts use three words: a printed bound or
# certificate that a check falsifies is **unsound**; a printed identity that a check falsifies **fails** (a typo in
# an equation, not a false bound); a printed bound that holds with room to spare is **sound but not tight** (the
# statement is true, a better constant exists).
#
# 1. ANCER App. D.4/D.5 (unsound): the inner ball's radius is printed `min_i B_ii`, but B is the region's matrix
#    (1/s_i² or 1/s_i); the radius is `min_i s_i`.
# 2. ANCER App. D.5 (fails as printed): the facet normal is printed `w = [-sign(y_i) A_ii]`; with k = 1 it must be `+sign(y_i) A_ii`.
# 3. ANCER App. D.5 (unsound): r* = ‖x* - y‖₁ for the ℓ2 projection x* onto the facet hyperplane can exceed the
#    true ℓ1 distance (the counterexample y = (3, 0.001), s = (1, 10) is drawn in §6), so the shrunk ℓ1 ball can
#    overlap the other region. The package uses the exact ℓ1 distance; (Σ|y_i|/s_i − 1)·min_i s_i is a sound
#    closed form.
# 4. ANCER App. B.1 constants (sound but not tight): Prop. 6 states L = √(2/π), Prop. 7 uses √(π/2) (its proof
#    also cites Prop. 2 where Prop. 6 is meant) and Corollary 3's 1/√(2π) corresponds to L = √(π/2). All three
#    propositions are true as printed, but for classifiers with values in [0, 1] the tight constant is
#    **L = 1/√(2π)** (attained by a half-space at p = ½; √(2/π) is the tight constant of the *difference*
#    g^A − g^B), so the tight mixture certificate is ‖δ‖_B ≤ √(π/2)(g_A − g_B): π times Corollary 3's radius,
#    twice the √(π/8) that Prop. 6's constant gives (both ratios are asserted in §5).
# 5. ANCER Prop. 3's proof (fails as printed): the derivative identity shifts x₁ by ±1 instead of ±λ₁ (and prints the prefactor
#    λ₁/(2λ)^n and a stray 1/∏_{j≥2}λ_j); the statement itself is right.
# 6. ANCER Listing 1 never zeroes the gradients, applies Φ⁻¹ to what it calls logits and drops Corollary 1's ½
#    (markdown only; handled in `ancer_lite/methods/optimize.py`).
# 7. ANCER Lemma 2's proof concludes x ∈ R_B from (1−t)xᵀBx ≤ 1 − t·xᵀAx ≤ 1, which does not imply xᵀBx ≤ 1;
#    the needed step is 1 − t·xᵀAx < 1 − t (as xᵀAx > 1). Proposition 4's proof writes A = rΛ⁻¹ for (rΛ)⁻¹ and
#    {rΛδ : ‖δ‖₁ ≤ r} for ‖δ‖₁ ≤ 1. D.2 cites "Theorem 8" for Proposition 8, D.1 names both balls R_B̃, D.4 says
#    "enclosing" for the inscribed ball. (Text only: the statements hold, see the checks.)
# 8. RANCER Eq. 3 drops the rotation (unsound as printed): with noise Uε the region is √(δᵀUΣ̂⁻¹Uᵀδ) ≤ r, not √(δᵀΣ̂⁻¹δ) ≤ r; §3
#    also says "smallest" ℓ2 ball where LargestOutSubset needs the largest.
# 9. UCAN Theorem 3.2 writes (Σ_i (δ'_i/σ_i)^p)^(1/p) without absolute values (unsound as printed: for p = 1
#    every δ' with negative entries would be "certified"); Corollary 3.3's proof uses ‖δ'‖_p ≤ ‖δ'/min σ‖_p, true only if min σ ≤ 1
#    (an unsound step; the step needed is ‖δ'/σ‖_p ≤ ‖δ'/min σ‖_p; the corollary itself holds); App. D says "to prove Theorem 3.2" for Theorem C.2.
# 10. (Boundary, minor.) Theorem 1, Corollaries 1-2 and UCAN Theorem 3.2 certify ‖δ‖ ≤ radius, but their proofs
#     give a strict margin only for ‖δ‖ < radius: on the boundary a tie is possible (the tight instances below
#     reach a margin of exactly 0), so the checks require margin ≥ 0, i.e. "ties allowed".
#
# Each check takes the formula under test as an argument. Below, the printed formula is plugged in next to the
# corrected one, and each form gets a verdict: **unsound** (a printed bound, certificate or proof step that the
# check falsifies), **fails** (a printed identity that the check falsifies: a typo in an equation),
# **sound but not tight** (the soundness check passes, the tightness check does not: the statement is true and a
# better constant exists), **sound and tight**, **sound** (no tightness check) or **holds** (an identity).
# Two rows are about constants that are sound but not tight: Prop. 6's √(2/π) (the supremum is 1/√(2π)) and
# Corollary 3's 1/√(2π) (its radius is π times too small). The control row plugs in a constant 1% above the
# tight √(π/2), which is not in the paper: it is unsound, so √(π/2) is the largest sound constant.

# %% tags=["nbval-ignore-output"]
typos = pc.run_typo_demos(P.mc_samples, seed)
typos

# %% tags=["nbval-check-output"]
for row in typos.to_dict("records"):
    print(f"{row['where']}: printed form {row['printed form']}; corrected form {row['corrected form']}; "
          f"as expected: {row['as expected']}")
assert typos["as expected"].all()

# %% [markdown]
# ## 10. Summary

# %% tags=["nbval-check-output"]
all_results = [r for section in pc.CHECKS for r in results[section]]
pc.sections_table({section: results[section] for section in pc.CHECKS})

# %% tags=["nbval-check-output"]
print(pc.summary_line(all_results))
assert all(r.passed for r in all_results), [r.id for r in all_results if not r.passed]
assert len(all_results) >= 20

# %% tags=["nbval-ignore-output"]
print(timing("notebook 01 (every check)", time.perf_counter() - started))
