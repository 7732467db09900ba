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
# # 04 — What does certification cost? Runtime, memory growth and test order
#
# *New to randomized smoothing?* [00_primer](00_primer.ipynb) builds every idea used here on one 2D input, and its
# [glossary](00_primer.ipynb#glossary) defines each term: [smoothed
# classifier](00_primer.ipynb#g-smoothed-classifier), [σ, θ](00_primer.ipynb#g-sigma),
# [CERTIFY](00_primer.ipynb#g-certify), [p_A](00_primer.ipynb#g-p-a), [Φ⁻¹](00_primer.ipynb#g-phi-inv),
# [gap](00_primer.ipynb#g-gap), [certified radius](00_primer.ipynb#g-radius), [ℓΣ2 /
# ℓΛ1](00_primer.ipynb#g-l-sigma-2), [proxy radius](00_primer.ipynb#g-proxy-radius), [ACR,
# ACR̃](00_primer.ipynb#g-acr), [Isotropic DD](00_primer.ipynb#g-isotropic-dd), [κ](00_primer.ipynb#g-kappa),
# [N0](00_primer.ipynb#g-n0-n), [the memory](00_primer.ipynb#g-memory), [certified
# accuracy](00_primer.ipynb#g-certified-accuracy), [fast path](00_primer.ipynb#g-fast-path), [shrink / abstain
# policy](00_primer.ipynb#g-shrink), [quick profile](00_primer.ipynb#g-quick-profile), [selection
# σ](00_primer.ipynb#g-selection-sigma), [RANCER](00_primer.ipynb#g-rancer), [Fixed σ](00_primer.ipynb#g-fixed-sigma),
# [nbval, checked cell](00_primer.ipynb#g-nbval).
#
# Reproduces **ANCER §7.3, Table 3** (the average certification time per input of Fixed σ, Isotropic
# DD and ANCER) with the breakdown by stage that the paper does not print, and measures the costs and
# caveats that **ANCER §6 ("Limitations of ANCER")** states in words:
# * how CERTIFY's cost grows with the number of noise samples N;
# * how one step of the memory (Algorithm 1) grows with the memory size |M| and the input dimension;
#   the paper speaks of a "linear runtime dependency on memory size";
# * how much the order in which inputs are certified changes the results, and how often regions
#   intersect at all (the paper: "almost negligible", given "the low number of intersections").
#
# It uses notebook 03's columns (quick profile: the 8×8 digits with a 64-64 MLP, MNIST-5k with a small
# CNN, the digits with the same CNN): models, chosen step sizes and logs are reused, nothing is
# re-certified when notebook 03 has run with the same code. Timings are taken here, in one run, on this
# machine's CPU (2 threads, shared with other work, so they are noisy); they go in cells whose output
# nbval (the test that re-runs every notebook and compares the outputs of its checked cells) does not compare,
# and every sentence that quotes a timing is written from the timings of the
# run. The paper timed an NVIDIA Quadro RTX 6000 GPU: compare ratios, not seconds.
#
# RANCER's runtime row (RANCER Table 3) follows in notebook 06.

# %% tags=["parameters"]
profile = "quick"
seed = 0
timing_inputs = 5           # test inputs timed one at a time for Table 3, per column and norm
paper_budget_inputs = 2     # inputs timed for the MNIST CNN at the paper's budget (runtime.PAPER_BUDGET)
n_grid = (1_000, 3_000, 10_000, 30_000, 100_000)  # N for CERTIFY's cost
n_inputs = 3                # inputs timed at each N
memory_sizes = (100, 300, 1_000, 3_000, 10_000)   # |M| for one memory step
memory_dims = (64, 784, 3_072)                    # digits, MNIST, CIFAR-10
orders = 5                  # random test orders for Algorithm 1, besides the logged one
inflate_factors = (1, 2, 4, 8)  # stress test: semi-axes multiplied by these

# %%
import os

import pandas as pd

from ancer_lite.studies import image_study as study
from ancer_lite.studies import runtime
from ancer_lite.studies import runtime_figures as figs
from ancer_lite.studies import runtime_findings as findings
from ancer_lite.studies import runtime_study as rts
from ancer_lite.models.data import DATA_DIR
from ancer_lite.report.display import md, setup_notebook
from ancer_lite.report.figures import save_fig
from ancer_lite.runs.paper import load_table
from ancer_lite.runs.profiles import get_profile

P = get_profile(profile)
setup_notebook(seed)
RESULTS = DATA_DIR / "results" / P.name
cols = study.load_columns(P, RESULTS, seed)
NORMS = ("l2", "l1")

# %% tags=["nbval-check-output"]
for name, col in cols.items():
    s = col.setup
    model = col.work.models["l2", study.selection_sigma(s, "l2")]
    print(f"{name}: {len(col.results)} per-input results read; {type(model).__name__} with "
          f"{findings.parameters(model):,} parameters on {col.work.test.x[0].numel()} pixels; N = {s.n:,}, "
          f"optimization {s.iterations} steps x {s.samples} samples")

# %% [markdown]
# ## Table 3: seconds per input, by stage
#
# Each column's models at the σ where notebook 03 chose the step sizes, with those step sizes. The
# first `timing_inputs` test inputs are processed **one at a time**, as a certifier meets them (a batch
# of one; notebook 03 optimizes many inputs together, which is faster per input). Stages:
# * **Iso DD optimization**: Isotropic DD's gradient ascent on σ (used by Isotropic DD, and by ANCER as
#   its initialization, as in the paper's Table 3, "including the isotropic initialization step");
# * **ANCER optimization**: ANCER's Adam steps on the per-pixel Θ;
# * **CERTIFY**: N0 + N forward passes under noise (the same N for all three methods);
# * **memory**: Algorithm 1 over the column's whole test set in its logged order (the
#   [fast path](00_primer.ipynb#g-fast-path)), per
#   input. A memory as large as the paper's would cost more (see below).

# %%
PAPER = runtime.PAPER_BUDGET
budgets = findings.budget_table(cols, NORMS)

# %% tags=["hide-input"]
md(findings.budget_text(budgets, PAPER, paper_budget_inputs, "mnist"))

# %% tags=["nbval-ignore-output"]
loads = [os.getloadavg()[0]]  # the machine's 1-minute load average around each timing
table3, memory_cost, timed = {}, {}, {}
for name, col in cols.items():
    for norm in NORMS:
        table3[name, norm], memory_cost[name, norm] = rts.table3_rows(col, norm, P, timing_inputs, seed)
        timed[name] = (name, col.setup.iterations, col.setup.samples, col.setup.n)
if "mnist" in cols:
    for norm in NORMS:
        table3[findings.PAPER_BUDGET_ROW, norm], _ = rts.table3_rows(cols["mnist"], norm, P, paper_budget_inputs,
                                                                     seed, PAPER)
    timed[findings.PAPER_BUDGET_ROW] = ("mnist", PAPER["iterations"], PAPER["samples"], PAPER["n"])
loads.append(os.getloadavg()[0])
table3_all = pd.concat(table3, names=["column", "norm", "method"])
print("seconds per input (mean over the timed inputs)")
table3_all.round(4)

# %% [markdown]
# The ratios, ours beside the paper's (Table 3: (a) ResNet18, ℓ2 on CIFAR-10; (b) WideResNet40, ℓ1
# on CIFAR-10; (c) ResNet50, ImageNet):

# %% tags=["nbval-ignore-output"]
ours = pd.DataFrame({key: runtime.ratios(t) for key, t in table3.items()}).T
ours.index.names = ["column", "norm"]
theirs = findings.paper_ratios(load_table("ancer_table3"))
print("ours (this CPU):")
print(ours.round(2).to_string())
print("\npaper (GPU):")
print(theirs.round(2).to_string())

# %% [markdown]
# One panel per column and budget, both norms side by side, shows where the time goes: a stacked bar per
# method, each optimization in the colour of the method it belongs to, CERTIFY in Fixed σ's grey (Fixed σ is
# CERTIFY alone); the label above a bar is its total relative to Fixed σ. The last panel sets the ratios of
# the totals beside the paper's Table 3 (grey rows; the shaded band is the paper's range of ANCER / Fixed σ).

# %% tags=["nbval-ignore-output"]
fig = figs.table3_figure(table3, timed, budgets, ours, theirs, P.name)
save_fig(fig, figs.TABLE3_NAME, figs.TABLE3_REPRODUCES, caption=figs.TABLE3_CAPTION)

# %% [markdown]
# ## How CERTIFY's cost grows with N
#
# One CERTIFY draws N0 samples to pick the class and N more to bound p_A, in batches: the work is
# N0 + N forward passes, so the time should be a fixed cost plus a slope in N. The right panel divides
# each time by N0 + N: a per-sample cost that falls with N reveals a fixed cost, one that rises shows
# growth slightly faster than linear (which a straight-line fit turns into a negative intercept).

# %% tags=["hide-input"]
md(f"Here N0 = {P.n0:,} and the batches hold up to {P.batch_size:,} samples; {n_inputs} inputs are timed "
   f"at each N in {', '.join(f'{n:,}' for n in n_grid)}, with each column's model at the ℓ2 selection σ.")

# %% tags=["nbval-ignore-output"]
by_n = rts.certify_vs_n(cols, P, n_grid, n_inputs, "l2", seed)
loads.append(os.getloadavg()[0])
per_n = runtime.per_sample_cost(by_n, P.n0)
fits_n = findings.fits_with_readings(by_n, "column", "n", "seconds")
show = pd.DataFrame({"intercept (ms)": 1e3 * fits_n.intercept, "± 2 s.e. (ms)": 2e3 * fits_n.intercept_se,
                     "µs per sample": 1e6 * fits_n.slope, "R²": fits_n.r2,
                     f"time at N = {min(n_grid):,} (ms)": 1e3 * fits_n.y_at_x_min, "intercept reads": fits_n.reading})
print(show.round(4).to_string())

# %% tags=["nbval-ignore-output"]
fig = figs.certify_vs_n_figure(per_n, fits_n, n_grid, P.name)
save_fig(fig, figs.CERTIFY_NAME, figs.CERTIFY_REPRODUCES, caption=figs.CERTIFY_CAPTION)

# %% tags=["nbval-ignore-output", "hide-input"]
md(findings.certify_fit_text(fits_n, per_n))

# %% [markdown]
# ## How one memory step grows with |M|
#
# One step of Algorithm 1 compares a new region with every region of another class in memory:
# "inside" (is x in R_i?), MaxIntersect (do the enclosing balls meet?) and, for the pairs that may,
# the exact Intersect and LargestOutSubset. We time `memory.decide`, which does this vectorized over
# the entries, against synthetic memories of |M| regions of another class (centres uniform in the unit
# cube, small semi-axes, so that MaxIntersect rules every entry out: the common case, the paper observes
# few intersections).

# %% tags=["hide-input"]
md(f"Semi-axes are uniform in [{runtime.SYNTHETIC_SCALE / 2:g}, {runtime.SYNTHETIC_SCALE:g}] per pixel; "
   f"|M| ∈ {{{', '.join(f'{m:,}' for m in memory_sizes)}}}, d ∈ {{{', '.join(f'{d:,}' for d in memory_dims)}}}; "
   f"each step is the best of {runtime.STEP_REPEATS} runs.")

# %% tags=["nbval-ignore-output"]
steps = runtime.memory_step_grid(memory_sizes, memory_dims, NORMS, seed)
loads.append(os.getloadavg()[0])
fits_m = findings.fits_with_readings(steps, ["norm", "dim"], "size", "seconds")
print(pd.DataFrame({"µs per entry": 1e6 * fits_m.slope,
                    "ns per entry and pixel": 1e9 * fits_m.slope / fits_m.index.get_level_values("dim"),
                    "intercept (ms)": 1e3 * fits_m.intercept, "± 2 s.e. (ms)": 2e3 * fits_m.intercept_se,
                    "R²": fits_m.r2, "intercept reads": fits_m.reading}).round(4).to_string())
print("\nper entry and pixel, from the smallest to the largest memory (ns):")
print(findings.per_entry_trend(steps).round(2).to_string())

# %% tags=["nbval-ignore-output"]
fig = figs.memory_step_figure(steps, fits_m, P.name)
save_fig(fig, figs.STEP_NAME, figs.STEP_REPRODUCES, caption=findings.step_caption(findings.per_entry_trend(steps)))

# %% [markdown]
# The real test sets, for scale: Algorithm 1 over each column's ANCER run (selection σ), per input,
# with the [fast path](00_primer.ipynb#g-fast-path) (`memory.certify_stream`: a pre-filter that computes the
# distances between the new region's centre and every stored one at once, from their inner products, and rules out
# the pairs whose enclosing balls are apart; then `decide` on the few candidates) and with the plain loop over memory
# entries as Algorithm 1 prints it
# (`memory.algorithm1_reference`); the two give identical decisions (tests/test_memory.py).

# %% tags=["nbval-ignore-output"]
pd.DataFrame(memory_cost).T.rename_axis(["column", "norm"]).mul(1e3).round(3).add_suffix(" (ms per input)")

# %% tags=["nbval-ignore-output", "hide-input"]
md(findings.memory_step_text(fits_m, steps, findings.memory_share(table3)))

# %% [markdown]
# ## Does the order of the test inputs matter?
#
# Algorithm 1 keeps the first of two intersecting regions of different classes and shrinks (or, in the
# paper's worst-case reporting, abstains on) the later one ([shrink and abstain policies](00_primer.ipynb#g-shrink)),
# so the order of the test set can change the results. The per-input certificates do not depend on the order
# (each input's noise is seeded by its index), so we re-run only Algorithm 1 over the logged CERTIFY results: the logged order and
# `orders` random permutations, for every column, norm, σ and data-dependent method, under our policy
# (shrink) and the paper's worst case (abstain on any intersection).

# %%
effects = rts.order_effects(cols, orders, seed)
keys = ["column", "norm", "sigma", "method", "policy"]
spread = runtime.order_spread(effects, keys)
changed = runtime.order_changes(spread)
runs = effects[effects.order == 0].groupby(["column", "policy"], sort=False).agg(
    runs=("met", "size"), certify_abstained=("abstain_base", "sum"), met_logged_order=("met", "sum"))
runs["met_any_order"] = spread.groupby(["column", "policy"], sort=False).met_max.sum()
clear = rts.clearances(cols)

# %% [markdown]
# The first table counts, per column and policy, the (norm, σ, method) runs, the inputs on which CERTIFY itself
# abstained (`certify_abstained`, summed over runs) and the inputs whose centre lay in, or whose region met, an
# earlier region of another class, in the logged order (`met_logged_order`) and in each run's order with the most
# meetings (`met_any_order`), summed over runs. The
# second, per column and norm over σ and method: the largest certified radius and semi-axis, the largest ratio of
# an input's longest to shortest semi-axis, the smallest MaxIntersect clearance (distance between two regions'
# centres of different classes / sum of their enclosing radii; > 1: they cannot meet), and the pairs of different
# classes whose enclosing balls overlap (summed over runs; the exact test decides them).

# %% tags=["nbval-check-output"]
print(f"Algorithm 1 over the logged order and {orders} random orders")
print(runs.to_string())
print(f"\nruns whose accuracy, ACR, ACR~ or count of meetings changes with the order: {len(changed)} of {len(spread)}")
print()
print(clear.groupby(["column", "norm"], sort=False).agg(
    max_radius=("max_radius", "max"), max_semi_axis=("max_semi_axis", "max"),
    max_axis_ratio=("max_axis_ratio", "max"), clearance=("clearance", "min"),
    overlapping_pairs=("overlapping_pairs", "sum")).round(2).to_string())

# %%
# with no meeting in the logged order every pair of regions of different classes was compared once and none
# met; any other order makes the same comparisons, so no result can change
assert int(spread.met_max.max()) > 0 or len(changed) == 0, "no region met another, yet a result changed with the order"

# %% tags=["hide-input"]
md(findings.meeting_text(spread, changed, clear, orders))

# %%
stress = rts.stress_test(cols, inflate_factors, orders, seed, NORMS)
skeys = ["column", "norm", "method", "policy", "inflate"]
s = runtime.order_spread(stress, skeys)
# regions inflated by f can meet another class's only if f reaches the run's MaxIntersect clearance
at_selection = clear[[sigma == study.selection_sigma(cols[c].setup, n)
                      for c, n, sigma in zip(clear.column, clear.norm, clear.sigma)]]
bound = at_selection.set_index(["column", "norm", "method"]).clearance
assert all(r.inflate >= bound[r.column, r.norm, r.method] * (1 - 1e-9)
           for r in s[s.met_max > 0].reset_index().itertuples()), "a region met another below its clearance"
# the stress test's x1 runs are the logged runs at the selection σ: the same meetings and accuracies
if 1 in inflate_factors:
    logged = spread.reset_index()
    logged = logged[[sig == study.selection_sigma(cols[c].setup, n)
                     for c, n, sig in zip(logged.column, logged.norm, logged.sigma)]]
    x1 = s.xs(1, level="inflate").reset_index()
    both = logged.merge(x1, on=["column", "norm", "method", "policy"], suffixes=("", "_x1"))
    assert len(both) == len(x1) and (both.met_max == both.met_max_x1).all() and (both.met_min == both.met_min_x1).all()
    assert ((both.acc_range_pp - both.acc_range_pp_x1).abs() < 1e-9).all()

# %% tags=["nbval-check-output"]
print("inputs meeting another class's region (min-max over the orders) and the accuracy range (pp)")
print(s.unstack("inflate")[["met_min", "met_max", "acc_range_pp"]].round(1).to_string())

# %% [markdown]
# The figure reads left to right from the real certificates (×1, shaded) to the stress test's inflated
# regions; the top row counts the inputs that meet an earlier region of another class, the two rows below
# how far the certified accuracy moves between test orders under each policy.

# %% tags=["nbval-ignore-output"]
n_test = {name: len(col.work.test.x) for name, col in cols.items()}
fig = figs.order_effect_figure(s, n_test, orders, P.name)
save_fig(fig, figs.ORDER_NAME, figs.order_reproduces(inflate_factors),
         caption=figs.order_caption(inflate_factors, figs.real_effect_words(s, n_test)))

# %% [markdown]
# ## In words
#
# First the test order, with the real certificates and then inflated ones (their counts are those of the tables
# above, which nbval compares); then the timings, written from the timings of this run (not compared: another
# machine gives other seconds).

# %% tags=["hide-input"]
ancer_steps = {(c, n): findings.ancer_step_note(col, n) for c, col in cols.items() for n in NORMS}

# %% tags=["hide-input"]
md(findings.order_summary(s, stress, spread, changed, n_test, orders, ancer_steps,
                          int(runs.certify_abstained.sum()), int(clear.overlapping_pairs.sum())))

# %% tags=["nbval-ignore-output", "hide-input"]
md(findings.timing_summary(ours, theirs, table3, fits_n, fits_m, steps, findings.memory_share(table3), loads,
                           os.cpu_count(), PAPER, NORMS))
