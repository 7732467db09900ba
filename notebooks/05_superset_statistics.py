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
# # 05 — Is ANCER's certificate a superset? Per-input statistics
#
# *New to randomized smoothing?* [00_primer](00_primer.ipynb) builds every idea used here on one 2D input, and its
# [glossary](00_primer.ipynb#glossary) defines each term (p_A, gap, ℓΣ2 / ℓΛ1, proxy radius, ACR, ACR̃, κ, N0, the memory, widened, eligible).
#
# Reproduces **ANCER App. A.1-A.2, F, G.3, H and I** on notebook 03's columns (quick profile: 8×8
# digits with an MLP standing in for CIFAR-10, MNIST-5k with a small CNN standing in for ImageNet, and
# the digits with that CNN):
# * **Tables 4-5** (App. F): the share of test inputs where ANCER's certificate is at least as large
#   as both Fixed σ's and Isotropic DD's, in the ℓp radius and in the proxy radius;
# * **Table 6** (App. I): the non-data-dependent "Average Σ" certified without optimization, beside
#   Fixed σ, Isotropic DD and ANCER;
# * **Figure 14** (App. G.3): where ANCER's ℓ2 gain comes from, the σ-factor against the gap factor
#   (claim C5);
# * **Figure 15** (App. H): per-pixel Σ maps; **Figure 16** (App. H): the spread max σ / min σ;
# * **Figure 5** (App. A.2): an input and a perturbation inside ANCER's region but outside Isotropic
#   DD's ball, checked;
# * **Figure 4** (App. A.1): the base classifier along the eigenvectors of the Hessian of f^y (by |λ|, as
#   the paper), with the Isotropic DD ball and the ANCER ellipsoid cut by that plane (a smooth-activation model).
#
# It reads notebook 03's logs (`data/results/<profile>/`): nothing is recomputed when notebook 03 has
# run with the same code; only Table 6's Average Σ certificates and Figure 4's smooth model are new.
# The computations live in `ancer_lite.studies.superset_study` (and `superset`), the figures in
# `ancer_lite.studies.superset_figures`.

# %% tags=["parameters"]
profile = "quick"
seed = 0

# %%
import numpy as np
import pandas as pd
from IPython.display import display

from ancer_lite.report import claims, style
from ancer_lite.studies import superset_figures as figs
from ancer_lite.studies import superset_study as ss
from ancer_lite.models.data import DATA_DIR
from ancer_lite.report.display import md, setup_notebook, timing
from ancer_lite.report.figures import save_fig
from ancer_lite.studies.image_study import load_columns
from ancer_lite.runs.paper import load_table
from ancer_lite.runs.profiles import get_profile

P = get_profile(profile)
setup_notebook(seed)
cols = load_columns(P, DATA_DIR / "results" / P.name, seed)
NAME = {name: figs.display_name(name) for name in cols}

# %%
# NBVAL_CHECK_OUTPUT
for name, col in cols.items():
    print(f"{name}: {len(col.results)} per-input results read ({col.results.run.nunique()} runs)")

# %% [markdown]
# ## Tables 4 and 5: how often is ANCER's certificate the largest?
#
# For each test input and each σ, ANCER "is the best" when its certified radius is at least the larger
# of Fixed σ's and Isotropic DD's (a wrong or abstaining prediction certifies radius 0). The paper
# does not say how it counts inputs where all three certify nothing (0-0 ties): we show the share with
# them counted as ties and with them left out. The proxy radius of the isotropic certificates is their
# ℓp radius. The paper's rows are per training method, pooled over σ; ours are pooled over σ too.

# %%
share = ss.shares(cols)
pooled = ss.pooled_shares(share)
paper = ss.paper_shares()

# %%
# NBVAL_CHECK_OUTPUT
print("% of test inputs where ANCER is the best, pooled over σ (with 0-0 ties | without)")
for (name, norm), r in pooled.iterrows():
    print(f"{name:10s} {norm}: ℓp {r.lp:3.0f} | {r.lp_without_ties:3.0f}   "
          f"proxy {r.proxy:3.0f} | {r.proxy_without_ties:3.0f}   ({int(r.inputs)} (input, σ) pairs)")

# %% [markdown]
# The paper's Tables 4 (ℓ2 / ℓΣ2) and 5 (ℓ1 / ℓΛ1), % of the test set where ANCER is the best:

# %%
# NBVAL_IGNORE_OUTPUT
paper.rename(columns={"lp": "ℓp (%)", "proxy": "proxy (%)"})

# %% [markdown]
# Ours per σ (the pooled rows above are the "all" rows):

# %%
# NBVAL_IGNORE_OUTPUT
share.pivot_table(index=["column", "norm", "sigma"], columns="certificate",
                  values=["pct_with_ties", "pct_without_ties", "n_ties"], sort=False).round(1)

# %%
lo, hi = paper.lp.idxmin(), paper.lp.idxmax()
not_macer = paper.drop(index="MACER", level="model")
md(f"**The paper's shares**, from its Tables 4-5: ANCER's ℓp certificate is the best on "
   f"{paper.lp.min():.0f}% ({lo[0]} {lo[1]}) to {paper.lp.max():.0f}% ({hi[0]} {hi[1]}) of the test set, its "
   f"proxy certificate on {not_macer.proxy.min():.0f}-{not_macer.proxy.max():.0f}% for every model but MACER, "
   f"whose row is {paper.loc['CIFAR-10', 'MACER', 'l2'].proxy:.0f}% (App. F: \"superior in over "
   f"{ss.PAPER_PROXY_SHARE:.0f}% of the test set samples\" for all but MACER).")

# %% [markdown]
# ## Table 6: the non-data-dependent Average Σ

# %%
p6 = ss.paper_table6()
md(f"App. I certifies every test input with one Σ, the average of ANCER's optimized Σˣ over the test "
   f"set, to show that anisotropy needs to be data-dependent. \"Average\" is ambiguous for a scale; we "
   f"show the mean of σ and the root mean of σ² (the average variance). The certificates are ordinary "
   f"(Cohen et al.'s CERTIFY with a fixed Θ, no memory needed), at the largest σ of each norm and with "
   f"notebook 03's N (the paper: SmoothAdv on CIFAR-10 at σ = {load_table('ancer_table6').sigma.max():g}, ℓ2 only).")

# %%
t6, t6_timing = ss.table6(cols, P, seed)

# %%
# NBVAL_IGNORE_OUTPUT
print("Average Σ certificates:")
for r in t6_timing.itertuples():
    print(timing(f"  {r.column} {r.norm} ({r.kind})", r.seconds, r.reused, r.computed_seconds))

# %%
# NBVAL_IGNORE_OUTPUT
for (name, norm), t in t6.groupby(["column", "norm"], sort=False):
    md(f"**{NAME[name]}, {style.norm_symbol(norm, tex=False)}** (σ = {t.sigma.iloc[0]:g}): certified "
       f"accuracy (%) at {style.radius_label(norm, tex=False)}, ACR and ACR~")
    display(ss.table6_rows(t6, name, norm).round(2))

# %% [markdown]
# The paper's Table 6 (SmoothAdv, CIFAR-10, certified accuracy in % at the ℓ2 radius):

# %%
# NBVAL_IGNORE_OUTPUT
p6

# %% [markdown]
# ## Figure 14: where does ANCER's ℓ2 certificate gain? The σ-factor against the gap factor

# %%
md(f"ANCER's ℓ2 radius is min_i σᵢˣ · r(x, Σˣ), Isotropic DD's σˣ · r(x, σˣ) (App. G.3). The paper "
   f"finds the σ-factors alike and ANCER's gap r larger: the gain comes from a smoothing distribution "
   f"better aligned with the decision boundaries (claim C5). ANCER's σ is projected onto σᵢ ≥ σ_iso after "
   f"every step (App. C), so min σ_ANCER ≥ σ_iso by construction. Histograms over the test inputs that "
   f"both methods certify (ℓ2, σ = {ss.GAP_SIGMA:g} as in the paper, CERTIFY's gap before the memory); "
   f"dashed lines are medians. Unlike the paper, our Isotropic DD does not get extra iterations to "
   f"match ANCER's total budget.")

# %%
factors = {name: ss.column_gap_factors(col) for name, col in cols.items()}
save_fig(figs.gap_factor_figure(factors, ss.GAP_SIGMA, P.name), "ancer_fig14_sigma_and_gap_factors",
         "ANCER Figure 14 (App. G.3)",
         caption=f"Histograms of the two factors of the ℓ2 certificate at σ = {ss.GAP_SIGMA:g}: the σ-factor "
                 "(σˣ of Isotropic DD, min σᵢˣ of ANCER) and the gap r(x, ·); dashed lines are medians.")

# %%
md("\n".join(f"* **{NAME[n]}**: median min σ_ANCER / median σ_Iso = {g.sigma_ratio:.2f}, median gap "
             f"ANCER / Isotropic DD = {g.gap_ratio:.2f} ({len(g.gap_iso)} of {g.inputs} inputs)"
             for n, g in factors.items()))

# %%
# NBVAL_CHECK_OUTPUT
for name, g in factors.items():
    print(f"{name}: C5 (the gap is the larger factor of ANCER's ℓ2 gain): {g.c5}")

# %% [markdown]
# ## Figures 15 and 16: what the optimized Σ looks like

# %%
md(f"Figure 15: three test inputs per column, Isotropic DD's σ (one value per image) and ANCER's "
   f"per-pixel σ (ℓ2, σ = {ss.GAP_SIGMA:g}), on one colour scale per column (the paper finds ANCER's large σ on the "
   f"pixels least related to the class, mostly background). Figure 16: the ratio max σ / min σ of ANCER's parameters over the test "
   f"set (ℓ2, σ = {ss.SPREAD_SIGMA:g}, as in the paper, which reports ratios \"as high as "
   f"{ss.PAPER_MAX_SPREAD:g}\" on CIFAR-10).")

# %%
maps = [ss.sigma_maps(col) for col in cols.values()]
save_fig(figs.sigma_map_figure(maps, ss.GAP_SIGMA, P.name), "ancer_fig15_sigma_maps", "ANCER Figure 15 (App. H)",
         caption=f"Test inputs x (top) and the optimized ℓ2 smoothing parameters at σ = {ss.GAP_SIGMA:g}: σ of "
                 "Isotropic DD (middle) and the per-pixel Σ of ANCER (bottom); one colour scale per column.")

# %%
spread = ss.spreads(cols)
save_fig(figs.anisotropy_figure(spread, ss.SPREAD_SIGMA, P.name), "ancer_fig16_anisotropy_ratio",
         "ANCER Figure 16 (App. H)",
         caption=f"Distribution of the maximum over the minimum of ANCER's σˣ at each test input "
                 f"(ℓ2, initial σ = {ss.SPREAD_SIGMA:g}); dashed: the median.")

# %%
md("\n".join(f"* **{NAME[n]}**: max σ / min σ over {len(r)} test inputs: median {np.median(r):.1f}, "
             f"90th percentile {np.percentile(r, 90):.1f}, largest {r.max():.1f}" for n, r in spread.items())
   + f"\n\n(the paper, CIFAR-10: \"as high as {ss.PAPER_MAX_SPREAD:g}\")")

# %% [markdown]
# ## Figure 5: a perturbation inside ANCER's region but outside Isotropic DD's ball

# %%
name5 = "mnist" if "mnist" in cols else next(iter(cols))
md(f"For the first {NAME[name5]} test input that both methods certify correctly (ℓ2, σ = {ss.GAP_SIGMA:g}, "
   f"final regions after the memory, ANCER's kept as certified), δ = c · s² ⊙ z with z a random sign "
   f"pattern, s ANCER's semi-axes and c set so that ‖δ‖_Σ,2 = {ss.SAFE_LEVEL:g}: δ is largest where Σ is. "
   f"The next cells check that δ is inside ANCER's region and outside Isotropic DD's ball, and "
   f"re-estimate the smoothed prediction (ANCER's Θ) at x + δ with N = {ss.SAFE_N:,} fresh samples. "
   f"The figure draws δ on a fixed symmetric scale of ±{figs.DELTA_SCALE:g} (the whole pixel range), "
   f"and x, x + δ on the pixel range [0, 1]; the certificate holds on all of ℝⁿ, so x + δ may leave "
   f"[0, 1] (such pixels saturate).")

# %%
safe = ss.safe_perturbation(cols[name5], P, seed)
save_fig(figs.perturbation_figure(safe, P.name), "ancer_fig05_perturbation_inside_ancer_region",
         f"ANCER Figure 5 (App. A.2; {NAME[name5]} instead of CIFAR-10)",
         caption=f"A test image x and x + δ, a change that is not inside Isotropic DD's certified ℓ2 ball but is "
                 f"covered by ANCER's anisotropic certificate; δ drawn on the fixed scale ±{figs.DELTA_SCALE:g}.")

# %%
md(f"{NAME[name5]} test input #{safe.test_index} (label {safe.label}): ‖δ‖₂ = {safe.norm_delta:.2f}, "
   f"Isotropic DD's radius {safe.iso_radius:.2f}, ANCER's ℓ2 radius {safe.ancer_radius:.2f} (the largest "
   f"ℓ2 ball inside its ellipsoid); ‖δ‖_Σ,2 = {safe.region_norm:.2f}.")

# %%
# NBVAL_CHECK_OUTPUT
print(f"{name5} test input #{safe.test_index} (label {safe.label})")
print(f"inside ANCER's region: {safe.inside}; outside Isotropic DD's ball: {safe.outside}; "
      f"smoothed prediction at x + δ (N = {safe.samples:,}): {safe.prediction} (certified {safe.certified})")
assert safe.holds

# %% [markdown]
# ## Figure 4: the base classifier along the eigenvectors of the Hessian of f^y

# %%
K = cols[name5].work.num_classes
md(f"ANCER Figure 4 (App. A.1) plots f^y around one input along the eigenvectors of the Hessian of f^y with "
   f"respect to the input, y the true label of an input the base classifier classifies correctly, ordered by "
   f"the absolute value of their eigenvalues: the plane (ν1, ν2) of the two largest |λ| (the highest curvature) "
   f"and the plane (ν1, νn) of the largest and the smallest |λ|. We compute exactly that Hessian "
   f"(`hessian.input_hessian(of=\"probability\")`) and order (`eigen_directions(order=\"magnitude\")`). "
   f"(RANCER's rotation, notebook 06, uses the Hessian of the cross-entropy −log f^y ordered by signed λ: another "
   f"matrix and another order.) A ReLU network is piecewise linear, so the Hessian of f^y = softmax(Jx + b)_y "
   f"is Jᵀ ∇²p_y J, of rank at most K − 1 = {K - 1}: all but {K - 1} of its eigenvectors carry no information "
   f"(checked below for the column's ReLU CNN). The figure therefore uses the same CNN with softplus "
   f"activations, trained like the ℓ2 σ = {ss.GAP_SIGMA:g} model (`setups.build_model(\"cnn_softplus\")`), and "
   f"Isotropic DD and ANCER optimized for it with the column's chosen step sizes, on the first test input that "
   f"the base classifier classifies correctly and both methods certify correctly. The regions drawn are the "
   f"slices of Isotropic DD's ball and ANCER's ellipsoid (before the memory) by the plane "
   f"(`superset.ellipsoid_slice`); dashed is f^y = 1/2.")

# %%
# the softplus twin is trained here like the column's own models: a column of checkpoints has none
land = None if cols[name5].setup.model == "checkpoint" else ss.hessian_landscape(cols[name5], P, seed)
if land is None:
    md(f"Not drawn on the {P.name} profile: its columns certify given ReLU checkpoints, and this companion trains "
       "no softplus twin of a checkpoint.")
else:
    save_fig(figs.landscape_figure(land, P.name), "ancer_fig04_hessian_landscape",
             f"ANCER Figure 4 (App. A.1; {figs.display_name(land.column)} instead of CIFAR-10)",
             caption="The landscape of f^y around a test input along two pairs of eigenvectors of the Hessian of f^y "
                     "(ordered by |λ|), with Isotropic DD's ℓ2 ball and ANCER's ℓΣ2 ellipsoid cut by each plane.")

# %%
# NBVAL_CHECK_OUTPUT
if land is not None:
    print(f"{name5} test input #{land.test_index} (label {land.label}, the first certified correctly by both methods): "
          f"rank of the Hessian of f^y {land.rank_relu} for the ReLU CNN (at most {land.num_classes - 1}), "
          f"{land.rank_smooth} of {len(land.eigenvalues)} for the softplus CNN")
    assert land.rank_relu <= land.num_classes - 1 < land.rank_smooth

# %%
md("" if land is None else f"Softplus CNN: Isotropic DD radius {land.iso_radius:.3f}; ANCER's semi-axes {land.ancer_axes.min():.3f} to "
   f"{land.ancer_axes.max():.3f}; eigenvalues of the Hessian of f^y by |λ|: λ1 = {land.eigenvalues[0]:.3g}, "
   f"λ2 = {land.eigenvalues[1]:.3g}, λn = {land.eigenvalues[-1]:.3g}.")

# %% [markdown]
# ## App. G.3's control: Isotropic DD with ANCER's iterations
#
# ANCER starts from Isotropic DD's result and optimizes further, so it spends more iterations. App. G.3 controls
# for that with an "Isotropic DD + 100 more iterations" run; here Isotropic DD gets ANCER's iterations on top of its
# own (its own validation-chosen step size), at the paper's σ = 0.25 and at each column's largest σ (ℓ2), and is
# certified exactly as notebook 03 certifies. If the extra iterations explained ANCER's ℓ2 gain (C2), ANCER's ACR
# minus this run's would be within noise.

# %%
control = ss.extra_iterations_effects(cols, P, seed)

# %%
# NBVAL_IGNORE_OUTPUT
control.assign(**{"effect [95% interval]": [e.text() for e in control.effect],
                  "verdict": [e.verdict for e in control.effect]}).drop(columns="effect").round(3)

# %%
# NBVAL_CHECK_OUTPUT
for r in control.itertuples():
    print(f"{r.column} σ = {r.sigma:g}: {r.claim}: {r.effect.verdict}")

# %%
ctl = control[control.claim == "C2/control"]
extra = control[control.claim == "extra iterations"]
md("* **ANCER against Isotropic DD with ANCER's iterations** (ℓ2 ACR difference, 95% interval): "
   + "; ".join(f"{NAME[r.column]} σ = {r.sigma:g}: {r.effect.text(3)} ({r.effect.verdict})" for r in ctl.itertuples())
   + ".\n* **What the extra iterations give Isotropic DD itself**: "
   + "; ".join(f"{NAME[r.column]} σ = {r.sigma:g}: {r.effect.text(3)} ({r.effect.verdict})" for r in extra.itertuples())
   + ".")

# %% [markdown]
# ## The MNIST anomaly: why does ANCER abstain less than the σ it starts from?
#
# On MNIST at the largest σ, ANCER's CERTIFY never abstains while Isotropic DD's abstains on several inputs,
# although ANCER starts from Isotropic DD's σ and only grows it (App. C projects onto Θ ≥ σ_iso). The table
# counts CERTIFY's abstentions (before the memory) per σ and follows the inputs where Isotropic DD abstains
# and ANCER certifies ("flips"): their lower bounds on p_A, how much noise ANCER adds (its largest and its median
# scale over Isotropic DD's, θ = σ for ℓ2 and the half-width λ for ℓ1), whether ANCER certifies the true label,
# and how much of ANCER's ACR gain over Isotropic DD at that σ they carry.

# %%
flips = pd.concat({(n, norm): ss.abstention_flips(cols[n], norm) for n in cols for norm in ss.NORMS},
                  names=["column", "norm", "row"]).droplevel("row")

# %%
# NBVAL_IGNORE_OUTPUT
flips.round(3)

# %%
# NBVAL_CHECK_OUTPUT
for r in flips.reset_index().itertuples():
    print(f"{r.column} {r.norm} σ = {r.sigma:g}: CERTIFY abstains {r.abstain_fixed} / {r.abstain_isotropic} / "
          f"{r.abstain_ancer} (Fixed σ / Isotropic DD / ANCER); flips {r.flips}, {r.flips_correct} with the true label")

# %%
# the findings below are written about the quick profile's MNIST column
if "mnist" not in cols:
    md(f"The findings on the flips are written about the quick profile's MNIST column; the {P.name} profile's "
       "counts are in the table above.")
else:
    m = flips.loc["mnist"].set_index("sigma", append=True)
    top = {norm: m.loc[norm].iloc[-1] for norm in ss.NORMS}  # the largest σ of each norm (Series: counts as floats)
    n_flips = {norm: (int(top[norm].flips), int(top[norm].flips_correct)) for norm in ss.NORMS}
    if P.name == "quick":
        assert all(top[n].abstain_ancer == 0 and top[n].flips == top[n].abstain_isotropic > 0 for n in ss.NORMS)
        assert top["l2"].name == top["l1"].name  # the same largest σ for both norms
        assert all(top[n].p_lower_iso < 0.5 < top[n].p_lower_ancer for n in ss.NORMS)
        assert all(top[n].flips_correct < top[n].flips for n in ss.NORMS)
        # the flips add to ANCER's ACR, but most of its difference from Isotropic DD is on inputs both certify
        assert all(0 < top[n].acr_gain_flips < abs(top[n].acr_gain - top[n].acr_gain_flips) for n in ss.NORMS)
    abstains = {method: int(m[f"abstain_{method}"].sum()) for method in ("isotropic", "ancer")}
    acc0 = {(norm, method): 100 * float(cols["mnist"].certified(norm, top[norm].name, method).correct.mean())
            for norm in ss.NORMS for method in ("isotropic", "ancer")}  # CERTIFY's, before the memory
    if P.name == "quick":
        assert all(acc0[n, "ancer"] > acc0[n, "isotropic"] for n in ss.NORMS)
    md("\n".join([
        f"* **What decides it.** At σ = {top['l2'].name:g} the {n_flips['l2'][0]} (ℓ2) and {n_flips['l1'][0]} (ℓ1) MNIST "
        f"inputs on which Isotropic DD abstains have a lower bound p_A of {top['l2'].p_lower_iso:.2f} and "
        f"{top['l1'].p_lower_iso:.2f} (median; CERTIFY abstains below 1/2): they sit between two classes. ANCER keeps "
        f"Isotropic DD's σ on the pixels that matter and grows it elsewhere, up to {top['l2'].spread:.0f}× (ℓ2) and "
        f"{top['l1'].spread:.0f}× (ℓ1), the median pixel {top['l2'].growth:.1f}× and {top['l1'].growth:.1f}×. Under that "
        f"much noise the votes gather on one class and p_A's bound rises to {top['l2'].p_lower_ancer:.2f} and "
        f"{top['l1'].p_lower_ancer:.2f}: the abstentions vanish. Over all σ and both norms, ANCER's CERTIFY abstains on "
        f"{abstains['ancer']} and Isotropic DD's on {abstains['isotropic']} (input, σ) pairs.",
        f"* **It is not better classification.** The class they gather on is the true label on only "
        f"{n_flips['l2'][1]} of {n_flips['l2'][0]} (ℓ2) and {n_flips['l1'][1]} of {n_flips['l1'][0]} (ℓ1) of "
        "these inputs: ANCER's objective (App. C) ascends the radius of whichever class is on top, without the label, "
        "so on an ambiguous input more noise buys a confident, often wrong, certificate. Certified accuracy at radius "
        "0 counts the correct ones, which is why ANCER's accuracy at radius 0 exceeds Isotropic DD's at that σ: "
        f"{acc0['l2', 'ancer']:.2f}% against {acc0['l2', 'isotropic']:.2f}% (ℓ2), {acc0['l1', 'ancer']:.2f}% against "
        f"{acc0['l1', 'isotropic']:.2f}% (ℓ1).",
        f"* **Nor is it the ACR.** The flips add {top['l2'].acr_gain_flips:.3f} to ANCER's ℓ2 ACR at that σ, whose "
        f"difference from Isotropic DD's is {top['l2'].acr_gain:+.3f} ({top['l1'].acr_gain_flips:.3f} and "
        f"{top['l1'].acr_gain:+.3f} for ℓ1, CERTIFY's radii before the memory): most of the difference is on inputs both "
        "certify. By σ, ANCER's ACR minus Isotropic DD's is "
        + "; ".join(f"{'ℓ2' if norm == 'l2' else 'ℓ1'}: " + ", ".join(
            f"{v:+.3f} (σ = {sig:g})" for sig, v in m.loc[norm, "acr_gain"].items()) for norm in ss.NORMS)
        + " (Figures 7 and 11 of notebook 03).",
    ]))

# %% [markdown]
# ## The claims, checked
#
# Each claim per column and norm, from the numbers above (shares rounded to the nearest percent, as the
# paper's tables are); the paragraphs after the table say which reproduce.

# %%
verdict = ss.claims(pooled, t6, factors, paper)

# %%
# NBVAL_CHECK_OUTPUT
for r in verdict.itertuples():
    print(f"{r.column} {r.norm}: {r.claim}: {r.holds}")

# %% [markdown]
# ### The same claims with their uncertainty
#
# Each claim as an effect with a bootstrap 95% interval over the test inputs (`ancer_lite.evaluation.intervals`;
# paired where two methods are compared, the inputs resampled together): the share of inputs where ANCER's
# certificate is the best minus the paper's threshold (C4), the median gap ratio minus the larger of 1 and the
# median σ ratio (C5), and ANCER's ACR~ and Fixed σ's ACR minus Average Σ's (C6). A claim **holds** when its
# interval lies above 0, **fails** below 0, and is **within noise** when it contains 0. C5 is shown at every σ
# of the ℓ2 grid: the paper shows σ = 0.25 only, the other σ are this companion's control.

# %%
effects = ss.claim_effects(cols, P, seed, paper)
for r in effects.itertuples():  # each estimate is the point estimate the booleans above were computed from
    e = r.effect
    if r.claim.startswith("C4"):
        share = pooled.loc[(r.column, r.norm), "proxy" if r.claim == "C4/proxy" else "lp"] / 100
        assert abs(e.estimate - (share - float(r.paper.strip("≥ %")) / 100)) < 1e-9
    elif r.claim == "C5" and r.sigma == ss.GAP_SIGMA:
        g = factors[r.column]
        assert abs(e.estimate - (g.gap_ratio - max(1.0, g.sigma_ratio))) < 1e-9
    elif r.claim.startswith("C6"):
        a = t6.set_index(["column", "norm", "method"])
        better, metric = ("ANCER", "acr_proxy") if r.claim == "C6/ACR~" else ("Fixed σ", "acr")
        want = a.loc[(r.column, r.norm, better), metric] - a.loc[(r.column, r.norm, "Average Σ (mean)"), metric]
        assert abs(e.estimate - want) < 1e-9
claim_table = claims.record_claims([claims.claim_row(
    r.claim, f"{NAME[r.column]}, {'ℓ2' if r.norm == 'l2' else 'ℓ1'}" + ("" if r.sigma == "all" else f", σ = {r.sigma:g}"),
    ss.EFFECT_CLAIMS[r.claim], r.effect, r.paper, "05_superset_statistics") for r in effects.itertuples()]
    + [claims.claim_row("C2/control", f"{NAME[r.column]}, ℓ2, σ = {r.sigma:g}",
                        "ANCER's ACR minus Isotropic DD's with ANCER's iterations added (App. G.3)", r.effect,
                        "ANCER ahead (App. G.3)", "05_superset_statistics") for r in ctl.itertuples()],
    "05_superset_statistics")

# %%
# NBVAL_IGNORE_OUTPUT
effects.assign(**{"effect [95% interval]": [e.text() for e in effects.effect],
                  "half-width": [e.half_width for e in effects.effect], "n": [e.n for e in effects.effect],
                  "verdict": [e.verdict for e in effects.effect]}).drop(columns="effect").round(3)

# %%
# NBVAL_CHECK_OUTPUT
for r in effects.itertuples():
    print(f"{r.column} {r.norm} σ = {r.sigma}: {r.claim}: {r.effect.verdict}")

# %%
c5 = effects[effects.claim == "C5"]
md("**C5 at every σ** (ℓ2; median gap ratio minus max(1, median σ ratio), 95% interval): "
   + "; ".join(f"{NAME[n]}: " + ", ".join(f"σ = {r.sigma:g} {r.effect.text(2)} ({r.effect.verdict})"
                                         for r in g.itertuples()) for n, g in c5.groupby("column", sort=False))
   + f". It holds at {int((c5.effect.map(lambda e: e.verdict) == 'holds').sum())} of {len(c5)} (column, σ) pairs.")

# %% [markdown]
# ### In words

# %%
def pct(name, norm, key):
    return f"{pooled.loc[(name, norm), key]:.0f}%"


def holding(claim):
    v = verdict[verdict.claim == claim]
    return f"{int(v.holds.sum())} of {len(v)}"


others = [n for n in cols if n != name5]
same = {norm: ss.paper_share(cols[name5].setup.column, norm, "lp", paper) for norm in ss.NORMS}
avg = t6.set_index(["column", "norm", "method"])
md("\n".join([
    f"* **Superset (Tables 4-5).** On {NAME[name5]} ANCER's proxy certificate is the best on {pct(name5, 'l2', 'proxy')} "
    f"(ℓ2) and {pct(name5, 'l1', 'proxy')} (ℓ1) of the inputs (the paper: {not_macer.proxy.min():.0f}-"
    f"{not_macer.proxy.max():.0f}% for all but MACER); its ℓp certificate on {pct(name5, 'l2', 'lp')} (ℓ2) and "
    f"{pct(name5, 'l1', 'lp')} (ℓ1), against {same['l2'][0]:.0f}% and {same['l1'][0]:.0f}% in the paper's rows of "
    f"the models notebook 03 compares with ({same['l2'][1]}, {same['l1'][1]}), and "
    f"{paper.lp.min():.0f}-{paper.lp.max():.0f}% over all its rows. "
    + " ".join(f"On {NAME[n]} the proxy certificate wins on {pct(n, 'l2', 'proxy')} / {pct(n, 'l1', 'proxy')} "
               f"(ℓ2 / ℓ1), the ℓp certificate on {pct(n, 'l2', 'lp')} / {pct(n, 'l1', 'lp')} "
               f"({pct(n, 'l2', 'lp_without_ties')} / {pct(n, 'l1', 'lp_without_ties')} without 0-0 ties)."
               for n in others)
    + f" The proxy claim holds on {holding(ss.PROXY_CLAIM)} (column, norm) pairs, the ℓp claim on "
    f"{holding(ss.lp_claim(paper.lp.min()))}.",
    f"* **Average Σ (Table 6)**: one averaged Σ certifies less ACR~ than ANCER and less ACR than Fixed σ on "
    f"{holding(ss.AVERAGE_CLAIM)} (column, norm) pairs; on {NAME[name5]} ℓ1 it certifies "
    f"{avg.loc[(name5, 'l1', 'Average Σ (mean)'), '0']:.1f}% of the inputs even at radius 0 (ANCER: "
    f"{avg.loc[(name5, 'l1', 'ANCER'), '0']:.1f}%).",
    f"* **C5 (Figure 14)** holds on {holding(ss.C5_CLAIM)} columns: the median min σ_ANCER / σ_Iso is "
    + ", ".join(f"{g.sigma_ratio:.2f}" for g in factors.values())
    + " and the median gap ratio ANCER / Isotropic DD "
    + ", ".join(f"{g.gap_ratio:.2f}" for g in factors.values())
    + f" ({', '.join(NAME[n] for n in factors)}).",
    "* **Figure 16**: the median max σ / min σ is "
    + ", ".join(f"{np.median(r):.1f} on {NAME[n]}" for n, r in spread.items())
    + f" (the paper: as high as {ss.PAPER_MAX_SPREAD:g} on CIFAR-10).",
]))

# %% [markdown]
# **What this means** (quick profile; the asserts below fail if the statements stop being true).
# On MNIST ANCER's proxy certificate is the largest of the three on most test inputs but not, as in the paper,
# on every one: the step size chosen on the validation split grows σ so far that ANCER loses accuracy at the
# smaller σ (notebook 03, Figure 7), and an input ANCER misclassifies certifies nothing. Its ℓp certificate is the
# largest less often than in the paper's rows of the same training, and on the digits (MLP and CNN) the ℓ2
# certificate is the largest on fewer inputs than in any of the paper's rows — as notebook
# 03's tables suggested (ANCER's ℓp ACR is below Isotropic DD's there). The Average Σ result of App. I
# reproduces on MNIST, dramatically: the σ that ANCER puts on one input's insensitive pixels is wrong for
# another input, so anisotropy has to be data-dependent. On the digits, where ANCER's σ barely moves from
# the isotropic start, an averaged Σ is close to each input's own, and where the claim fails there it
# fails by less than 0.01 in ACR and ACR~ (a near-tie, not a reversal). C5 does not reproduce at the paper's
# σ = 0.25: ANCER's smallest σ equals Isotropic DD's σ at the median, within 3% (by construction it cannot be
# smaller), and ANCER's gap is smaller at the median, on every column. At MNIST's largest σ, where ANCER's
# accuracy at radius 0 is ahead (the section above), the gap effect is within noise and so is App. G.3's
# control (ANCER's ℓ2 ACR against Isotropic DD's with ANCER's iterations added); the extra iterations give
# Isotropic DD itself a small gain there. On MNIST ANCER's σ spans a wider range within an image than the paper
# reports for CIFAR-10; on the digits it barely moves from the isotropic start.

# %%
if P.name == "quick":
    def of(claim, **where):
        v = verdict[verdict.claim == claim]
        for k, val in where.items():
            v = v[v[k] == val]
        return v.holds

    assert ((pooled.loc["mnist"].proxy > 50) & (pooled.loc["mnist"].proxy < 100)).all()
    # ANCER loses accuracy (CERTIFY's, at radius 0) against Isotropic DD at MNIST's smallest σ, for both norms
    assert all(cols["mnist"].certified(n, m.loc[n].index[0], "ancer").correct.mean()
               < cols["mnist"].certified(n, m.loc[n].index[0], "isotropic").correct.mean() for n in ss.NORMS)
    assert not of(ss.PROXY_CLAIM, column="mnist").any()
    assert all(pooled.loc[("mnist", norm), "lp"] < same[norm][0] for norm in ss.NORMS)
    assert all(pooled.loc[(n, "l2"), "lp"] < paper.lp.min() for n in ("digits", "digits_cnn"))
    assert of(ss.AVERAGE_CLAIM, column="mnist").all()
    for r in verdict[(verdict.claim == ss.AVERAGE_CLAIM) & ~verdict.holds].itertuples():
        a, anc, fixed = (avg.loc[(r.column, r.norm, m)] for m in ("Average Σ (mean)", "ANCER", "Fixed σ"))
        assert r.column != "mnist" and a.acr_proxy - anc.acr_proxy < 0.01 and a.acr - fixed.acr < 0.01
    assert not of(ss.C5_CLAIM).any() and all(abs(g.sigma_ratio - 1) < 0.03 for g in factors.values())
    assert all(g.gap_ratio <= 1 for g in factors.values())
    c5_at = {(r.column, r.sigma): r.effect.verdict for r in c5.itertuples()}
    top_mnist = max(s for n, s in c5_at if n == "mnist")
    assert all(v == "fails" for (n, s), v in c5_at.items() if s == ss.GAP_SIGMA)
    assert c5_at["mnist", top_mnist] == "within noise"
    ctl_mnist = ctl[(ctl.column == "mnist") & (ctl.sigma == top_mnist)].effect.iloc[0]
    extra_mnist = extra[(extra.column == "mnist") & (extra.sigma == top_mnist)].effect.iloc[0]
    assert ctl_mnist.verdict == "within noise" and extra_mnist.verdict == "holds" and extra_mnist.estimate < 0.05
    assert np.median(spread["mnist"]) > ss.PAPER_MAX_SPREAD
    assert max(np.median(spread[n]) for n in ("digits", "digits_cnn")) < 2
    print("the paragraph above matches the computed values")
