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
# [glossary](00_primer.ipynb#glossary) defines each term (p_A, gap, ℓΣ2 / ℓΛ1, proxy radius, ACR, ACR̃, κ, N0, the memory, widened, eligible).
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
# nbval does not compare, and every sentence that quotes a timing is written from the timings of the
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

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from ancer_lite.studies import image_study as study
from ancer_lite.studies import runtime
from ancer_lite.report import style
from ancer_lite.studies import runtime_study as rts
from ancer_lite.models.data import DATA_DIR
from ancer_lite.report.display import md, setup_notebook
from ancer_lite.report.figures import save_fig
from ancer_lite.core.memory import SHRINK, WORST_CASE
from ancer_lite.runs.paper import load_table
from ancer_lite.runs.profiles import get_profile

P = get_profile(profile)
setup_notebook(seed)
RESULTS = DATA_DIR / "results" / P.name
cols = study.load_columns(P, RESULTS, seed)
NORMS = ("l2", "l1")
POLICY_NAMES = {SHRINK: "shrink (ours)", WORST_CASE: "abstain (paper's worst case)"}


def parameters(model):
    return sum(p.numel() for p in model.parameters())


def column_title(name):
    return style.STAND_INS[name][0] if name in style.STAND_INS else name


def num(x, digits=2):
    """x with `digits` significant digits, never in scientific notation."""
    if x == 0 or not np.isfinite(x):
        return f"{x:g}"
    return f"{x:,.{max(0, digits - 1 - int(np.floor(np.log10(abs(x)))))}f}"


def duration(seconds):
    return f"{num(1e3 * seconds, 3)} ms" if seconds < 1 else f"{num(seconds, 3)} s"


# %%
# NBVAL_CHECK_OUTPUT
for name, col in cols.items():
    s = col.setup
    model = col.work.models["l2", study.selection_sigma(s, "l2")]
    print(f"{name}: {len(col.results)} per-input results read; {type(model).__name__} with "
          f"{parameters(model):,} parameters on {col.work.test.x[0].numel()} pixels; N = {s.n:,}, "
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
# * **memory**: Algorithm 1 over the column's whole test set in its logged order (the fast path), per
#   input. A memory as large as the paper's would cost more (see below).

# %%
PAPER = runtime.PAPER_BUDGET
budget_lines = [f"**{column_title(name)}**: {col.setup.iterations} steps × {col.setup.samples} samples, "
                f"N = {col.setup.n:,}" for name, col in cols.items()]
md("Selection σ: " + ", ".join(f"{style.norm_symbol(n, tex=False)}: σ = " + " / ".join(
    f"{v:g}" for v in sorted({study.selection_sigma(c.setup, n) for c in cols.values()})) for n in NORMS)
   + ". Budgets (optimization steps × noise samples per step, CERTIFY's N): " + "; ".join(budget_lines)
   + f"; the paper's: {PAPER['iterations']} × {PAPER['samples']}, N = {PAPER['n']:,}."
   + (f" The last rows time the MNIST CNN at the paper's budget on {paper_budget_inputs} inputs, the "
      "setting whose ratios compare with the paper's." if "mnist" in cols else ""))

# %%
# NBVAL_IGNORE_OUTPUT
loads = [os.getloadavg()[0]]  # the machine's 1-minute load average around each timing
table3, memory_cost, timed = {}, {}, {}
for name, col in cols.items():
    for norm in NORMS:
        table3[name, norm], memory_cost[name, norm] = rts.table3_rows(col, norm, P, timing_inputs, seed)
        timed[name] = (name, col.setup.iterations, col.setup.samples, col.setup.n)
if "mnist" in cols:
    for norm in NORMS:
        table3["mnist (paper budget)", norm], _ = rts.table3_rows(cols["mnist"], norm, P, paper_budget_inputs,
                                                                  seed, PAPER)
    timed["mnist (paper budget)"] = ("mnist", PAPER["iterations"], PAPER["samples"], PAPER["n"])
loads.append(os.getloadavg()[0])
table3_all = pd.concat(table3, names=["column", "norm", "method"])
print("seconds per input (mean over the timed inputs)")
table3_all.round(4)

# %% [markdown]
# The ratios, ours beside the paper's (Table 3: (a) ResNet18, ℓ2 on CIFAR-10; (b) WideResNet40, ℓ1
# on CIFAR-10; (c) ResNet50, ImageNet):

# %%
# NBVAL_IGNORE_OUTPUT
ours = pd.DataFrame({key: runtime.ratios(t) for key, t in table3.items()}).T
ours.index.names = ["column", "norm"]
paper3 = load_table("ancer_table3").assign(row=lambda d: d.row_label + " " + d.architecture)
paper3 = paper3.pivot_table(index="row", columns="method", values="value")
theirs = pd.DataFrame({row: runtime.ratios(paper3.loc[[row]].T.rename(columns={row: "total"}))
                       for row in paper3.index}).T
print("ours (this CPU):")
print(ours.round(2).to_string())
print("\npaper (GPU):")
print(theirs.round(2).to_string())

# %% [markdown]
# A stacked bar per column and norm shows where the time goes. Each optimization is drawn in the colour
# of the method it belongs to, CERTIFY in Fixed σ's grey (Fixed σ is CERTIFY alone); the label above a
# bar is its total relative to Fixed σ.

# %%
# NBVAL_IGNORE_OUTPUT
STAGE_COLOR = {runtime.ISO_OPT: style.METHODS["isotropic"].color, runtime.ANCER_OPT: style.METHODS["ancer"].color,
               runtime.CERTIFY: "#BBBBBB", runtime.MEMORY: "#000000"}
budgets = list(timed)
fig, axes = plt.subplots(len(NORMS), len(budgets), figsize=(2.6 * len(budgets), 6.0), sharey="col",
                         squeeze=False)
for j, label in enumerate(budgets):
    name, iters, samples, n = timed[label]
    for i, norm in enumerate(NORMS):
        ax, t = axes[i, j], table3[label, norm]
        bottom = np.zeros(len(t))
        for stage in runtime.STAGES:
            ax.bar(range(len(t)), t[stage], bottom=bottom, color=STAGE_COLOR[stage], width=0.7,
                   edgecolor="white", linewidth=0.5)
            bottom += t[stage].to_numpy()
        for k, m in enumerate(t.index):
            ax.text(k, t.loc[m, "total"], f"{t.loc[m, 'total'] / t.loc['fixed', 'total']:.1f}×",
                    ha="center", va="bottom", fontsize=style.MIN_FONT + 0.5)
        ax.set_xticks(range(len(t)), [style.METHODS[m].label.replace("Isotropic DD", "Iso DD") for m in t.index])
        ax.margins(y=0.15)
        ax.grid(axis="x", visible=False)
        if i == 0:
            budget = "paper's budget" if "paper" in label else "quick budget"
            ax.set_title(f"{column_title(name)}\n{budget}:\n{iters}×{samples} steps, N = {n:,}", fontsize=9.5)
        if j == 0:
            sigma = study.selection_sigma(cols[name].setup, norm)
            ax.set_ylabel(f"{style.norm_symbol(norm)}, σ = {sigma}\nseconds per input")
thin = max(float(t[runtime.MEMORY].max() / t["total"].max()) for t in table3.values())
stage_label = {**{s_: s_ for s_ in runtime.STAGES}, runtime.MEMORY: f"memory (≤ {100 * thin:.1f}% of a bar)"}
fig.legend(handles=[Patch(color=STAGE_COLOR[s_], label=stage_label[s_]) for s_ in runtime.STAGES],
           loc="outside upper center", ncols=len(runtime.STAGES), frameon=False, fontsize=9)
style.stand_in(fig, *cols, extra="CPU, one input at a time")
save_fig(fig, "ancer_tab03_runtime_by_stage", "ANCER Table 3 (runtime per input, by stage)",
         caption="Average certification time per input of Fixed σ, Isotropic DD and ANCER (including the "
                 "isotropic initialization step), split into the sample-wise optimizations, CERTIFY and the "
                 "memory-based step; the label above each bar is its total relative to Fixed σ.")

# %% [markdown]
# ## How CERTIFY's cost grows with N
#
# One CERTIFY draws N0 samples to pick the class and N more to bound p_A, in batches: the work is
# N0 + N forward passes, so the time should be a fixed cost plus a slope in N. The right panel divides
# each time by N0 + N: a per-sample cost that falls with N reveals a fixed cost, one that rises shows
# growth slightly faster than linear (which a straight-line fit turns into a negative intercept).

# %%
md(f"Here N0 = {P.n0:,} and the batches hold up to {P.batch_size:,} samples; {n_inputs} inputs are timed "
   f"at each N in {', '.join(f'{n:,}' for n in n_grid)}, with each column's model at the ℓ2 selection σ.")

# %%
# NBVAL_IGNORE_OUTPUT
by_n = rts.certify_vs_n(cols, P, n_grid, n_inputs, "l2", seed)
loads.append(os.getloadavg()[0])
per_n = runtime.per_sample_cost(by_n, P.n0)
fits_n = runtime.fits_by(by_n, "column", "n", "seconds")
fits_n["reading"] = [runtime.intercept_reading(f) for _, f in fits_n.iterrows()]
show = pd.DataFrame({"intercept (ms)": 1e3 * fits_n.intercept, "± 2 s.e. (ms)": 2e3 * fits_n.intercept_se,
                     "µs per sample": 1e6 * fits_n.slope, "R²": fits_n.r2,
                     f"time at N = {min(n_grid):,} (ms)": 1e3 * fits_n.y_at_x_min, "intercept reads": fits_n.reading})
print(show.round(4).to_string())

# %%
# NBVAL_IGNORE_OUTPUT
# one colour and marker per column (models, not methods: none of the method colours)
COLUMN_COLORS = ("#332288", "#AA4499", "#999933", "#882255", "#44AA99")
LOOK = {c: (COLUMN_COLORS[i % 5], "oDs^v"[i % 5]) for i, c in enumerate(cols)}
fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.9))
for name in cols:
    color, marker = LOOK[name]
    g = per_n[per_n.column == name]
    ax.errorbar(g.n, g["mean"], yerr=[g["mean"] - g["min"], g["max"] - g["mean"]], fmt=marker, color=color,
                ms=6, capsize=2, label=column_title(name))
    ax.plot(*runtime.fit_curve(fits_n.loc[name], min(n_grid), max(n_grid)), "-", color=color, lw=1.2)
    ax2.plot(g.n, 1e6 * g.per_sample, marker=marker, color=color, ms=6, label=column_title(name))
    ax2.axhline(1e6 * fits_n.loc[name, "slope"], color=color, ls=":", lw=1.2)
ax.set(xscale="log", yscale="log", xlabel="N (noise samples)", ylabel="seconds per CERTIFY",
       title="CERTIFY's time (bars: min-max over inputs;\nlines: least-squares a + bN where positive)")
ax2.set(xscale="log", yscale="log", xlabel="N (noise samples)", ylabel="µs per noise sample, time / (N0 + N)",
        title="time per sample (dotted: the fitted slope b)")
ax2.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
ax2.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
ax2.yaxis.set_minor_formatter(NullFormatter())
style.legend(ax, loc="upper left")
style.stand_in(fig, *cols, extra=f"{style.norm_symbol('l2', tex=False)} models at the selection σ, CPU")
save_fig(fig, "ancer_sec73_certify_time_vs_n", "ANCER §7.3 (CERTIFY cost against N)",
         caption="Time of one CERTIFY against the number of noise samples N, with least-squares lines, and the "
                 "time per noise sample, which is flat where the cost is linear in N.")

# %%
# NBVAL_IGNORE_OUTPUT
slopes = ", ".join(f"{num(1e6 * fits_n.loc[c, 'slope'])} µs ({column_title(c)})" for c in cols)
readings = {r: [c for c in cols if fits_n.loc[c, "reading"] == r] for r in ("positive", "zero", "negative")}


def intercepts(names):
    return ", ".join(f"{column_title(c)}: {num(1e3 * fits_n.loc[c, 'intercept'])} ± "
                     f"{num(2e3 * fits_n.loc[c, 'intercept_se'], 1)} ms" for c in names)


rising = [c for c in readings["negative"]
          if per_n[per_n.column == c].per_sample.iloc[-1] > per_n[per_n.column == c].per_sample.iloc[0]]
text = [f"CERTIFY's time is {'close to linear' if fits_n.r2.min() >= 0.95 else 'only roughly linear'} in N "
        f"(R² ≥ {fits_n.r2.min():.3f} for every model), at a cost per noise sample of {slopes}."]
if readings["positive"]:
    text.append(f"A fixed cost shows where the intercept is more than two standard errors above zero "
                f"({intercepts(readings['positive'])}).")
if readings["zero"]:
    text.append(f"Where it is within two standard errors of zero ({intercepts(readings['zero'])}) the fit "
                f"resolves no fixed cost.")
if readings["negative"]:
    why = (" The time per sample rises with N for " + ", ".join(column_title(c) for c in rising)
           + " (right panel): the time grows a little faster than linearly, so the line through the large-N "
             "points undershoots at N = 0." if rising else " It lies beyond the noise of the fit, which a "
           "line through timings on a shared machine does not rule out.")
    text.append(f"A negative intercept ({intercepts(readings['negative'])}) is no cost: it is an artefact of "
                f"fitting a straight line.{why}")
text.append(f"Whatever the fit says, a fixed cost cannot exceed the time of the smallest run, N = {min(n_grid):,}: "
            + ", ".join(f"{duration(fits_n.loc[c, 'y_at_x_min'])} ({column_title(c)})" for c in cols) + ".")
md(" ".join(text))

# %% [markdown]
# ## How one memory step grows with |M|
#
# One step of Algorithm 1 compares a new region with every region of another class in memory:
# "inside" (is x in R_i?), MaxIntersect (do the enclosing balls meet?) and, for the pairs that may,
# the exact Intersect and LargestOutSubset. We time `memory.decide`, which does this vectorized over
# the entries, against synthetic memories of |M| regions of another class (centres uniform in the unit
# cube, small semi-axes, so that MaxIntersect rules every entry out: the common case, the paper observes
# few intersections).

# %%
md(f"Semi-axes are uniform in [{runtime.SYNTHETIC_SCALE / 2:g}, {runtime.SYNTHETIC_SCALE:g}] per pixel; "
   f"|M| ∈ {{{', '.join(f'{m:,}' for m in memory_sizes)}}}, d ∈ {{{', '.join(f'{d:,}' for d in memory_dims)}}}; "
   f"each step is the best of {runtime.STEP_REPEATS} runs.")

# %%
# NBVAL_IGNORE_OUTPUT
steps = runtime.memory_step_grid(memory_sizes, memory_dims, NORMS, seed)
loads.append(os.getloadavg()[0])
fits_m = runtime.fits_by(steps, ["norm", "dim"], "size", "seconds")
fits_m["reading"] = [runtime.intercept_reading(f) for _, f in fits_m.iterrows()]
fits_m["ns per entry and pixel"] = 1e9 * fits_m.slope / fits_m.index.get_level_values("dim")
print(pd.DataFrame({"µs per entry": 1e6 * fits_m.slope, "ns per entry and pixel": fits_m["ns per entry and pixel"],
                    "intercept (ms)": 1e3 * fits_m.intercept, "± 2 s.e. (ms)": 2e3 * fits_m.intercept_se,
                    "R²": fits_m.r2, "intercept reads": fits_m.reading}).round(4).to_string())

# %%
# NBVAL_IGNORE_OUTPUT
DIM_COLOR = dict(zip(memory_dims, [style.LEVELS[int(k)] for k in
                                   np.linspace(0, len(style.LEVELS) - 1, len(memory_dims)).round()]))
NORM_LOOK = {"l2": dict(marker="o", ls="-"), "l1": dict(marker="s", ls="--", mfc="white")}
fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.9))
for (norm, d), g in steps.groupby(["norm", "dim"], sort=False):
    look = dict(color=DIM_COLOR[d], ms=6, lw=1.2, **NORM_LOOK[norm])
    ax.plot(g["size"], 1e3 * g.seconds, **look)
    ax2.plot(g["size"], 1e9 * g.seconds / (g["size"] * d), **look)
    ax2.axhline(1e9 * fits_m.loc[(norm, d), "slope"] / d, color=DIM_COLOR[d], lw=1, ls=":")
m = np.array([min(memory_sizes), max(memory_sizes)], float)
ref = 0.25e3 * steps[steps["size"] == m[-1]].seconds.min() * m / m[-1]  # a slope-1 guide below the data
ax.plot(m, ref, color="#777777", lw=1, ls=":")
ax.annotate("∝ |M|", (np.sqrt(m.prod()), np.sqrt(ref.prod())), textcoords="offset points", xytext=(4, -16),
            color="#555555",
            fontsize=style.MIN_FONT + 1)
ax.set(xscale="log", yscale="log", xlabel="|M| (regions of another class in memory)", ylabel="ms per step",
       title="one Algorithm 1 step (measured)")
ax2.set(xscale="log", xlabel="|M| (regions of another class in memory)", ylabel="ns per entry and pixel",
        title="step time / (|M| d)\n(dotted: the fitted slope b / d)")
ax2.set_ylim(0, 1.15 * ax2.get_ylim()[1])
handles = ([Line2D([], [], color=DIM_COLOR[d], lw=4, label=f"d = {d:,}") for d in memory_dims]
           + [Line2D([], [], color="#333333", label=style.norm_symbol(n) + " regions", **NORM_LOOK[n]) for n in NORMS])
style.legend(ax, handles=handles, loc="upper left", ncols=2)
fig.supxlabel(f"synthetic memories: random regions in d = {', '.join(f'{d:,}' for d in memory_dims)} dimensions "
              f"(8×8 digits, MNIST, CIFAR-10 sizes) · {P.name} profile · CPU", fontsize=style.MIN_FONT + 0.5,
              color="#444444")
save_fig(fig, "ancer_sec6_memory_step_vs_size", "ANCER §6 (memory step cost against memory size)",
         caption="Time of one step of the memory-based certification (Algorithm 1) against the memory size |M|, "
                 "for ellipsoids (ℓ2) and generalized cross-polytopes (ℓ1) in three input dimensions, and the same "
                 "time per memory entry and pixel, flat where the cost is linear in |M| × d.")

# %% [markdown]
# The real test sets, for scale: Algorithm 1 over each column's ANCER run (selection σ), per input,
# with the fast path (`memory.certify_stream`: a Gram-matrix pre-filter, then `decide` on the few
# candidates) and with the plain loop over memory entries as Algorithm 1 prints it
# (`memory.algorithm1_reference`); the two give identical decisions (tests/test_memory.py).

# %%
# NBVAL_IGNORE_OUTPUT
pd.DataFrame(memory_cost).T.rename_axis(["column", "norm"]).mul(1e3).round(3).add_suffix(" (ms per input)")

# %%
# NBVAL_IGNORE_OUTPUT
per_pixel = fits_m["ns per entry and pixel"]
big = steps[(steps["size"] == max(memory_sizes)) & (steps.dim == max(memory_dims))].set_index("norm").seconds
neg = fits_m[fits_m.reading == "negative"]
mem_share = max(float(runtime.ancer_share(t)[runtime.MEMORY]) for t in table3.values())
md(f"One memory step is {'close to linear' if fits_m.r2.min() >= 0.95 else 'only roughly linear'} in |M| "
   f"(R² ≥ {fits_m.r2.min():.3f} for every norm and dimension), as the paper says, and grows with the dimension "
   f"too: {num(per_pixel.min())}-{num(per_pixel.max())} ns per memory entry and pixel, "
   + ("roughly constant across d, so the cost is about linear in |M| × d. " if per_pixel.max() / per_pixel.min() < 3
      else "a spread of more than 3× across d, so |M| × d is only a rough guide. ")
   + f"A memory of {max(memory_sizes):,} regions of d = {max(memory_dims):,} costs "
   + " and ".join(f"{duration(big[n])} ({style.norm_symbol(n, tex=False)})" for n in NORMS if n in big.index)
   + " per step. "
   + f"Of the {len(fits_m)} fitted intercepts, {int((fits_m.reading == 'zero').sum())} lie within two standard "
   f"errors of zero, {int((fits_m.reading == 'positive').sum())} above and {len(neg)} below"
   + (f" ({', '.join(f'{num(1e3 * a)} ms' for a in neg.intercept)}); those below are fit artefacts, not costs, "
      "which is why the figure draws the measured times and the fitted slopes, not the fitted lines. "
      if len(neg) else ". ")
   + f"At our test-set sizes the memory is at most {100 * mem_share:.1f}% of ANCER's time per input (Table 3 above).")

# %% [markdown]
# ## Does the order of the test inputs matter?
#
# Algorithm 1 keeps the first of two intersecting regions of different classes and shrinks (or, in the
# paper's worst-case reporting, abstains on) the later one, so the order of the test set can change
# the results. The per-input certificates do not depend on the order (each input's noise is seeded by
# its index), so we re-run only Algorithm 1 over the logged CERTIFY results: the logged order and
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

# %%
# NBVAL_CHECK_OUTPUT
print("Algorithm 1 over the logged order and", orders, "random orders; runs = (norm, σ, method) runs;")
print("certify_abstained = inputs on which CERTIFY itself abstained (summed over runs); met = inputs")
print("whose centre lay in, or whose region met, an earlier region of another class")
print(runs.to_string())
print(f"\nruns whose accuracy, ACR, ACR~ or count of meetings changes with the order: {len(changed)} of {len(spread)}")
print("\nper column and norm, over σ and method: the largest certified radius and semi-axis, the largest ratio")
print("of an input's longest to shortest semi-axis, the smallest MaxIntersect clearance (distance between two")
print("regions' centres of different classes / sum of their enclosing radii; > 1: they cannot meet), and the")
print("pairs of different classes whose enclosing balls overlap (summed over runs; the exact test decides them)")
print(clear.groupby(["column", "norm"], sort=False).agg(
    max_radius=("max_radius", "max"), max_semi_axis=("max_semi_axis", "max"),
    max_axis_ratio=("max_axis_ratio", "max"), clearance=("clearance", "min"),
    overlapping_pairs=("overlapping_pairs", "sum")).round(2).to_string())

# %%
no_meeting = int(spread.met_max.max()) == 0
# with no meeting in the logged order every pair of regions of different classes was compared once and none
# met; any other order makes the same comparisons, so no result can change
assert not no_meeting or len(changed) == 0, "no region met another, yet a result changed with the order"
overlap = clear[clear.overlapping_pairs > 0]
anisotropic = clear[clear.method == "ancer"]
widest = anisotropic.loc[anisotropic.max_axis_ratio.idxmax()]
text = ("**No two certified regions of different classes meet**, in any run: in the logged order Algorithm 1 keeps "
        "every certified region, so it compares every pair of regions of different classes once and finds none that "
        "meets; any other order makes the same comparisons, so the order cannot change a result here (none of the "
        f"{len(spread)} runs changes over {orders + 1} orders) and the memory only costs time." if no_meeting else
        f"**Certified regions of different classes meet** in {int((spread.met_max > 0).sum())} of {len(spread)} runs, "
        f"and the order changes the results of {len(changed)} runs.")
text += (f" The certified radii reach at most {clear.max_radius.max():.2f}"
         + (", but the regions reach farther than that" if clear.max_semi_axis.max() > clear.max_radius.max() else "")
         + f": ANCER's longest semi-axis is up to {widest.max_axis_ratio:.0f}× its shortest "
         f"({column_title(widest.column)}, {style.norm_symbol(widest.norm, tex=False)}), ")
if len(overlap):
    text += (f"and in {len(overlap)} of {len(clear)} runs the enclosing balls of some pairs of different classes overlap "
             f"({int(overlap.overlapping_pairs.sum()):,} pairs in all; the closest pair's centres are "
             f"{clear.clearance.min():.2f}× the sum of the balls' radii apart). MaxIntersect cannot rule those pairs "
             "out; the exact Intersect test (App. D) " + ("separates every one of them. " if no_meeting else "decides. ")
             + (f"In the other {len(clear) - len(overlap)} runs MaxIntersect alone rules out every pair. "
                if len(clear) > len(overlap) else ""))
else:
    text += (f"yet every pair of different classes is at least {clear.clearance.min():.2f}× the sum of their enclosing "
             "radii apart, so MaxIntersect alone rules out every meeting. ")
text += ("This agrees with the paper's \"low number of intersections\" but makes the order question vacuous on our "
         "data, so we ask how large the regions would have to be before the order matters: " if no_meeting else
         "We also ask what happens when regions grow: ")
md(text + "the same logged certificates with every semi-axis **inflated** by a factor (a stress test of Algorithm 1; "
   "the inflated regions are not certificates), at the σ of notebook 03's step-size selection, in the logged "
   "order and the same random orders.")

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

# %%
# NBVAL_CHECK_OUTPUT
print("inputs meeting another class's region (min-max over the orders) and the accuracy range (pp)")
print(s.unstack("inflate")[["met_min", "met_max", "acc_range_pp"]].round(1).to_string())

# %%
n_test = {name: len(col.work.test.x) for name, col in cols.items()}
s_sorted = s.sort_index()
METHOD_LOOK = {m: dict(color=style.METHODS[m].color) for m in rts.DD_METHODS}
NORM_LINE = {"l2": dict(marker="o", ls="-"), "l1": dict(marker="s", ls="--", mfc="white")}
DODGE = {("isotropic", "l2"): 0.94, ("ancer", "l2"): 0.98, ("isotropic", "l1"): 1.02, ("ancer", "l1"): 1.06}
rows_ = [("met", SHRINK, "inputs meeting another\nclass's region (%)"),
         ("acc_range_pp", SHRINK, "accuracy range over\norders, shrink (pp)"),
         ("acc_range_pp", WORST_CASE, "accuracy range over\norders, abstain (pp)")]
fig, axes = plt.subplots(len(rows_), len(cols), figsize=(3.3 * len(cols), 8.0), sharex=True, sharey="row",
                         squeeze=False)
for j, name in enumerate(cols):
    for i, (what, policy, ylabel) in enumerate(rows_):
        ax = axes[i, j]
        for norm in NORMS:
            for method in rts.DD_METHODS:
                g = s_sorted.loc[(name, norm, method, policy)]
                x = g.index.to_numpy(float) * DODGE[method, norm]
                look = dict(**METHOD_LOOK[method], **NORM_LINE[norm], ms=5, lw=1.3,
                            label=f"{style.METHODS[method].label}, {style.norm_symbol(norm)}")
                if what == "met":
                    y = 100 * g.met_mean / n_test[name]
                    ax.errorbar(x, y, yerr=[y - 100 * g.met_min / n_test[name], 100 * g.met_max / n_test[name] - y],
                                capsize=2, **look)
                else:
                    ax.plot(x, g[what], **look)
        style.percent_axis(ax, label=ylabel if j == 0 else "")
        if i == 0:
            ax.set_title(f"{column_title(name)} ({n_test[name]} test inputs)", fontsize=9.5)
        if i == len(rows_) - 1:
            ax.set(xscale="log", xlabel="semi-axes inflated by")
            ax.set_xticks(inflate_factors, [f"×{f_:g}" for f_ in inflate_factors])
            ax.xaxis.set_minor_formatter(plt.NullFormatter())
handles, labels = axes[0, 0].get_legend_handles_labels()
fig.legend(handles, labels, loc="outside upper center", ncols=4, frameon=False, fontsize=9)
style.stand_in(fig, *cols, extra=f"bars: min-max over the logged and {orders} random orders")
save_fig(fig, "ancer_sec6_memory_order_effect", "ANCER §6 (test-order effect of the memory, regions inflated)",
         caption="The impact of the order in which inputs are certified: how many inputs meet an earlier region of "
                 "another class, and how far the certified accuracy moves between test orders, when the logged "
                 "certified regions are inflated; under the shrink policy and the paper's worst-case abstention.")

# %% [markdown]
# ## In words
#
# The timing claims are written from the timings of this run (the cell's output is not compared by nbval:
# another machine gives other seconds); the order claims are exact counts.

# %%
# NBVAL_IGNORE_OUTPUT
quick = ours.drop(index="mnist (paper budget)", level=0, errors="ignore")
lines = []
if "mnist (paper budget)" in ours.index.get_level_values(0):
    b = ours.loc["mnist (paper budget)"]
    share = pd.DataFrame({n: runtime.ancer_share(table3["mnist (paper budget)", n]) for n in NORMS}).T
    lo, hi = theirs["ANCER / Fixed σ"].min(), theirs["ANCER / Fixed σ"].max()
    inside = lo <= b["ANCER / Fixed σ"].min() and b["ANCER / Fixed σ"].max() <= hi
    stage_max = share.drop(columns=runtime.MEMORY).idxmax(axis=1)
    lines.append(
        f"* **At the paper's budget** (MNIST CNN, {PAPER['iterations']} × {PAPER['samples']} optimization, "
        f"N = {PAPER['n']:,}), ANCER costs {b['ANCER / Fixed σ'].min():.2f}-{b['ANCER / Fixed σ'].max():.2f}× Fixed σ "
        f"(paper, GPU: {lo:.2f}-{hi:.2f}×; ours {'inside' if inside else 'outside'} that range) and "
        f"{b['ANCER / Iso DD'].min():.2f}-{b['ANCER / Iso DD'].max():.2f}× Isotropic DD (paper: "
        f"{theirs['ANCER / Iso DD'].min():.2f}-{theirs['ANCER / Iso DD'].max():.2f}×). CERTIFY takes "
        f"{100 * share[runtime.CERTIFY].min():.0f}-{100 * share[runtime.CERTIFY].max():.0f}% of ANCER's time there"
        + (", the largest stage." if (stage_max == runtime.CERTIFY).all() else
           "; the two optimizations together take the rest."))
    if quick["ANCER / Fixed σ"].min() > b["ANCER / Fixed σ"].max():
        lines.append(
            f"* **At the quick budgets** (the columns' own, smaller optimizations or N) ANCER "
            f"costs {quick['ANCER / Fixed σ'].min():.1f}-{quick['ANCER / Fixed σ'].max():.1f}× Fixed σ, more than at "
            "the paper's budget: CERTIFY is cheap there and the optimizations dominate. The paper's \"not "
            "significant\" overhead is therefore a statement about N being large next to the optimization budget, "
            "not about ANCER alone.")
    else:
        lines.append(f"* At the quick budgets ANCER costs {quick['ANCER / Fixed σ'].min():.1f}-"
                     f"{quick['ANCER / Fixed σ'].max():.1f}× Fixed σ, overlapping the paper-budget ratio on this run.")
lines.append(f"* **CERTIFY is {'close to linear' if fits_n.r2.min() >= 0.95 else 'roughly linear'} in N** "
             f"(R² ≥ {fits_n.r2.min():.3f}), at {num(1e6 * fits_n.slope.min())}-{num(1e6 * fits_n.slope.max())} µs per "
             f"noise sample on our models; no fixed cost above {duration(fits_n.y_at_x_min.max())} (the slowest run at "
             f"N = {min(n_grid):,})" + ("; the negative intercepts are fit artefacts" if len(readings["negative"]) else "")
             + ".")
lines.append(f"* **The memory step is {'linear' if fits_m.r2.min() >= 0.95 else 'roughly linear'} in |M|**, as the "
             f"paper says (R² ≥ {fits_m.r2.min():.3f}), and grows with the dimension: {num(per_pixel.min())}-"
             f"{num(per_pixel.max())} ns per memory entry and pixel, so {max(memory_sizes):,} regions of "
             f"{max(memory_dims):,} pixels cost {duration(big.max())} per input; at our test-set sizes the memory is at most "
             f"{100 * mem_share:.1f}% of ANCER's time.")
cores = os.cpu_count()
md(f"**What reproduces** (this run, CPU; the machine's 1-minute load average was {min(loads):.1f}-{max(loads):.1f} "
   f"around the timings, on {cores} cores"
   + ("; oversubscribed, so the seconds are inflated and the ratios noisy" if max(loads) > cores else "")
   + "):\n" + "\n".join(lines))

# %%
stress_changes = runtime.order_changes(s)
w = runtime.widest_order_range(stress, skeys)
first = s[s.met_max > 0].index.get_level_values("inflate")
md(("* **The order of the test set changes nothing on our data**" if no_meeting and len(changed) == 0
    else "* **The order of the test set changes results on our data**")
   + f" ({len(changed)} of {len(spread)} runs change, over {orders + 1} orders each)"
   + (", because no two certified regions of different classes meet"
      + (f" ({int(overlap.overlapping_pairs.sum()):,} pairs have overlapping enclosing balls, but the exact test "
         "separates them)" if len(overlap) else "")
      + f"; CERTIFY's own abstentions ({int(runs.certify_abstained.sum()):,} over all runs and policies) are the only "
      "ones. This matches the paper's \"almost negligible\" for its data, for a reason worth knowing: here the "
      "certified regions do not meet at all." if no_meeting else ".")
   + f" Inflated by ×{first.min():g} or more they meet ({len(stress_changes)} of {len(s)} stress runs change "
   f"with the order), and then the order can matter a great deal: up to {w['range_pp']:.1f} percentage points of "
   f"accuracy between two orders ({column_title(w['run']['column'])}, {style.norm_symbol(w['run']['norm'], tex=False)}, "
   f"{study.METHOD_NAMES[w['run']['method']]}, ×{w['run']['inflate']:g}, {POLICY_NAMES[w['run']['policy']]}). Of its "
   f"{n_test[w['run']['column']]} inputs, " + "; ".join(
       f"in the {which} order ({w[which]['accuracy']:.1f}% certified) {w[which]['kept']} keep their region, "
       f"{w[which]['shrunk']} shrink, {w[which]['abstain_inside']} abstain because their centre lies inside an earlier "
       f"region of another class and {w[which]['abstain_intersect']} because their region meets one"
       for which in ("best", "worst"))
   + ". A deployment whose certificates crowd each other cannot rely on the order being harmless.")
