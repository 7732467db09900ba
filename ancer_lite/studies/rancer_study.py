"""Notebook 06's study (RANCER §4): RANCER's hyper-parameters chosen on the validation split, RANCER
certified on the test inputs beside notebook 03's three methods on the same smooth model, RANCER
Tables 1-2 (ℓ2 and proxy certified accuracy at RANCER's radii), ARI / AR̃I, §4.5's initializations,
Table 3 (seconds per input) and claim C7; and the checks of the 2D example of Figures 1-2.

Fixed σ, Isotropic DD and ANCER come from `image_study` (the same logs and code as notebook 03);
RANCER's results are cached under results_root/<setup>/l2/sigma_<σ>/rancer-<key>/ with a key that
hashes everything that determines them (`experiment.rancer_key`).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..core.certify import AUTO
from ..core.files import load_array
from ..core.memory import algorithm1
from ..core.precision import EXACT
from ..core.regions import CertifiedRegion, certified_regions
from ..core.validation import check_choice
from ..evaluation.intervals import Effect, claim_key, input_matrix, paired_effect
from ..evaluation.metrics import average_certified_radius, check_correct, summary_table
from ..methods.hessian import input_hessian, numerical_rank
from ..methods.rancer import MIN_SCALE, ROTATION_MARGIN, RancerSettings, hessian_rotations, rancer_parameters
from ..methods.registry import ANCER, FIXED, ISOTROPIC, RANCER
from ..models.train import model_fingerprint
from ..report import style
from ..report.step_timing import StepTiming, run_step
from ..runs import manifest, rancer_runs
from ..runs.cache import cached, read_table, write_table
from ..runs.experiment import optimize_thetas, rancer_key
from ..runs.logs import read_log
from ..runs.paper import load_table
from ..runs.profiles import Profile
from ..runs.selection import select_rancer
from ..runs.setups import theta_of
from . import runtime
from .image_study import Column, load_columns
from .runtime import time_rancer_stages

#: RANCER is an l2 method; its columns certify one σ
NORM = "l2"
#: the radii of RANCER Tables 1 (l2) and 2 (proxy)
PAPER_RADII = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5)
METHODS = (FIXED, ISOTROPIC, ANCER, RANCER)
METHOD_NAMES = {m: style.method(m).label for m in METHODS}
PAPER_NAMES = {"Fixed sigma": "Fixed σ", "Isotropic DD": "Isotropic DD", "ANCER": "ANCER", "RANCER": "RANCER"}

#: The Hessian rotations and eigenvalues (`rancer.hessian_rotations`) computed in this process, keyed by
#: `rotation_key`: (the fingerprint of the column's model, "<column>:<split>:<number of inputs>"). `rotations`
#: fills it (or the cache it is given); `clear_rotations` empties it (an entry holds N n² float64 values).
ROTATION_CACHE: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
SPLITS = ("test", "val")


def sigma_of(col: Column) -> float:
    """The training σ of a RANCER column: the first (its only) σ of `setup.sigmas_l2`.

    Parameters
    ----------
    col : Column
        A column of `profile.rancer`, loaded by `image_study.load_columns`.

    Returns
    -------
    float
        The σ of the column's ℓ2 model.
    """
    return float(col.setup.sigmas_l2[0])


def rotation_key(col: Column, split: str = "test") -> tuple[str, str]:
    """The key of a split's rotations in a rotation cache: (the model's fingerprint, "<column>:<split>:<N>").

    Parameters
    ----------
    col : Column
        The column (its ℓ2 model at `sigma_of(col)` and its splits).
    split : str, default "test"
        "test" or "val" (ValueError otherwise).

    Returns
    -------
    tuple of (str, str)
        The model's fingerprint and "<column>:<split>:<N>", N the split's number of inputs.
    """
    check_choice(split, "split", SPLITS)
    model = col.work.models[NORM, sigma_of(col)]
    return model_fingerprint(model), f"{col.setup.name}:{split}:{len(getattr(col.work, split).x)}"


def rotations(col: Column, split: str = "test",
              cache: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] | None = None,
              ) -> tuple[np.ndarray, np.ndarray]:
    """The Hessian rotations and eigenvalues of every input of a split (RANCER Algorithm 1's rotation step).

    They are computed once and kept in `cache` under `rotation_key`: they are the costly part of RANCER and shared by
    its variants; slice for a prefix. The Hessians are computed where the column's model is (`load_columns` put it on
    the profile's device).

    Parameters
    ----------
    col : Column
        The column (its ℓ2 model and its splits).
    split : str, default "test"
        "test" or "val".
    cache : dict, optional
        A rotation cache, `rotation_key` -> (rotations, eigenvalues); None: `ROTATION_CACHE`, this process's
        (TypeError when not a dict).

    Returns
    -------
    numpy.ndarray, shape (N, n, n)
        Per input, the orthogonal U whose columns are the input Hessian's eigenvectors by decreasing eigenvalue
        (N inputs of the split, n values per input).
    numpy.ndarray, shape (N, n)
        The eigenvalues, in the same order.
    """
    cache = ROTATION_CACHE if cache is None else cache
    if not isinstance(cache, dict):
        raise TypeError(f"cache must be None or a dict (a rotation cache), got {type(cache).__name__}")
    key = rotation_key(col, split)
    if key not in cache:
        cache[key] = hessian_rotations(col.work.models[NORM, sigma_of(col)], getattr(col.work, split).x)
    return cache[key]


def clear_rotations(cache: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] | None = None) -> None:
    """Forget every rotation kept in `cache` (default `ROTATION_CACHE`), e.g. after a column's models changed
    in place, or to free memory; `rotations` recomputes them on the next call.

    Parameters
    ----------
    cache : dict, optional
        A rotation cache (as in `rotations`); None: `ROTATION_CACHE` (TypeError when not a dict).
    """
    cache = ROTATION_CACHE if cache is None else cache
    if not isinstance(cache, dict):
        raise TypeError(f"cache must be None or a dict (a rotation cache), got {type(cache).__name__}")
    cache.clear()


def iso_sigma_val(col: Column, seed: int = 0, *, precision: str = EXACT, draws: str = AUTO) -> np.ndarray:
    """Isotropic DD's σ of the validation inputs (with the column's chosen step size), RANCER's σ0.

    Parameters
    ----------
    col : Column
        The column (its ℓ2 model, validation split and chosen ℓ2 settings).
    seed : int, default 0
        The optimization's seed.
    precision, draws : str, optional
        The optimization's (`experiment.optimize_thetas`).

    Returns
    -------
    numpy.ndarray, shape (N_val,)
        The optimized isotropic σ of each validation input.
    """
    model = col.work.models[NORM, sigma_of(col)]
    th = optimize_thetas(model, col.work.val.x, "gaussian", theta_of(NORM, sigma_of(col)), ISOTROPIC,
                         col.chosen[NORM], seed, precision=precision, draws=draws)
    return th.reshape(len(th), -1)[:, 0]


def base_settings(col: Column) -> RancerSettings:
    """Algorithm 1 with the column's optimization budget (iterations x samples).

    Parameters
    ----------
    col : Column
        The column (its setup's `iterations` and `samples`).

    Returns
    -------
    RancerSettings
        The default settings with that budget.
    """
    return RancerSettings(iterations=col.setup.iterations, samples=col.setup.samples)


def selection_path(col: Column, profile: Profile, lrs: tuple[float, ...], gamma2s: tuple[float, ...],
                   results_root: str | Path, seed: int = 0) -> Path:
    """Where `choose_rancer` caches its selection table: results_root/<setup>/rancer-selection-<key>.tsv.

    The key covers the model's fingerprint, the budget, the grids, the column's chosen ℓ2 settings, N0, the
    validation N, α, the seed, the validation indices and the numerics.

    Parameters
    ----------
    col : Column
        The column.
    profile : Profile
        N0, α and the numerics.
    lrs : tuple of float
        RANCER's step sizes tried, multiples of σ.
    gamma2s : tuple of float
        The upper clips γ2 tried.
    results_root : str or Path
        The results folder.
    seed : int, default 0
        The selection's seed.

    Returns
    -------
    Path
        The table's path (the file may not exist yet).
    """
    model = col.work.models[NORM, sigma_of(col)]
    key = rancer_key(model_fingerprint(model), base_settings(col), lrs=lrs, gamma2s=gamma2s, iso=col.chosen[NORM],
                     n0=profile.n0, n=col.setup.val_n, alpha=profile.alpha, seed=seed,
                     idx=col.work.val.index.tolist(), **profile.numerics())
    return Path(results_root) / col.setup.name / f"rancer-selection-{key}.tsv"


def choose_rancer(col: Column, profile: Profile, lrs: tuple[float, ...], gamma2s: tuple[float, ...],
                  results_root: str | Path, seed: int = 0) -> tuple[RancerSettings, pd.DataFrame]:
    """RANCER's step size (multiples of σ) and upper clip γ2, chosen on the validation split by
    `selection.select_rancer`; the table is cached under results_root/<setup>/rancer-selection-<key>.tsv.

    The model runs on `profile.device` (it is moved there; the key leaves the device out).

    Parameters
    ----------
    col, profile, lrs, gamma2s, results_root, seed : as in `selection_path`

    Returns
    -------
    RancerSettings
        `base_settings(col)` with the chosen lr (absolute: lr_relative × σ) and gamma2.
    pandas.DataFrame
        `select_rancer`'s table: one row per setting of each search, columns search, lr_relative, gamma1, gamma2, acr,
        acr_proxy, accuracy, objective, upper_clip_reached, computed, widened and chosen.
    """
    model = col.work.models[NORM, sigma_of(col)]
    base = base_settings(col)
    path = selection_path(col, profile, lrs, gamma2s, results_root, seed)
    th0 = theta_of(NORM, sigma_of(col))

    def compute() -> pd.DataFrame:
        return select_rancer(model, col.work.val.x, col.work.val.y,
                             iso_sigma_val(col, seed, **profile.numerics()), th0, list(lrs),
                             list(gamma2s), base, profile.n0, col.setup.val_n, profile.alpha, col.work.num_classes,
                             seed, device=profile.device, **profile.numerics())[1]

    table = cached(path, compute, read_table, write_table)
    pick = table[table.chosen].iloc[0]
    return replace(base, lr=float(pick.lr_relative) * th0, gamma2=float(pick.gamma2)), table


def run_folder(col: Column, profile: Profile, settings: RancerSettings, results_root: str | Path, seed: int = 0,
               count: int | None = None) -> Path:
    """The cache folder of a RANCER run (see `run_rancer`).

    results_root/<setup>/l2/sigma_<σ>/rancer-<key>, the key covering the model, `settings`, the column's chosen ℓ2
    settings, N0, N, α, the seed, the test indices used and the numerics.

    Parameters
    ----------
    col : Column
        The column.
    profile : Profile
        N0, α and the numerics.
    settings : RancerSettings
        The run's settings.
    results_root : str or Path
        The results folder.
    seed : int, default 0
        The run's seed.
    count : int, optional
        The run's first `count` test inputs; None: all of them.

    Returns
    -------
    Path
        The run's folder (it may not exist yet).
    """
    model = col.work.models[NORM, sigma_of(col)]
    key = rancer_key(model_fingerprint(model), settings, iso=col.chosen[NORM], n0=profile.n0, n=col.setup.n,
                     alpha=profile.alpha, seed=seed, idx=col.work.test.index[:count].tolist(), **profile.numerics())
    return Path(results_root) / col.setup.name / NORM / f"sigma_{sigma_of(col)}" / f"rancer-{key}"


def time_rotated_memory(col: Column, profile: Profile, settings: RancerSettings, results_root: str | Path,
                        seed: int = 0) -> float:
    """Seconds per input of RANCER's memory step (`memory.algorithm1` over RANCER's rotated ellipsoids) over the
    whole test set of a RANCER run, from its cached CERTIFY results.

    Parameters
    ----------
    col, profile, settings, results_root, seed : as in `run_folder`
        The run on all the test inputs (`run_rancer`, computed when not cached).

    Returns
    -------
    float
        The wall time of one `algorithm1` call over the test set, divided by its number of inputs.
    """
    r = run_rancer(col, profile, settings, results_root, seed)
    folder = run_folder(col, profile, settings, results_root, seed)
    scales = load_array(folder / "theta.npy").astype(np.float64)
    rot, _ = rotations(col, "test")
    preds = read_log(folder / "certify.tsv").set_index("idx").loc[r.idx.tolist()].predict.to_numpy(np.int64)
    regions = certified_regions(col.work.test.x, scales, r.gap.to_numpy(), preds, NORM, rot, ROTATION_MARGIN)
    t0 = time.perf_counter()
    algorithm1(regions)
    return (time.perf_counter() - t0) / len(r)


def run_rancer(col: Column, profile: Profile, settings: RancerSettings, results_root: str | Path, seed: int = 0,
               count: int | None = None) -> pd.DataFrame:
    """RANCER on the first `count` test inputs (all by default) through `rancer_runs.run_rancer`.

    Algorithm 1 from Isotropic DD's σ of notebook 03's log (init "iso") or from the eigenvalues around the training σ
    (the eigen variants), rotated CERTIFY and the rotated memory, in the run folder `run_folder`. The Hessians
    (`rotations`, computed once per column), the ascent and CERTIFY run on `profile.device` (the model is moved there;
    the folder does not depend on it). RANCER's optimization draws are keyed by the inputs' positions in the test
    split, its CERTIFY draws by their dataset indices.

    Parameters
    ----------
    col : Column
        The column (its ℓ2 model, test split and Isotropic DD run).
    profile : Profile
        N0, α, the batch size, the device and the numerics.
    settings : RancerSettings
        The run's settings (`settings.init` picks the start).
    results_root : str or Path
        The results folder.
    seed : int, default 0
        The run's seed.
    count : int, optional
        The number of leading test inputs; None: all of them.

    Returns
    -------
    pandas.DataFrame
        One row per input in test order, final.tsv's columns (idx, label, predict, radius, radius_proxy, correct,
        min_sigma, time, gap, p_lower, log_volume, status).
    """
    model = col.work.models[NORM, sigma_of(col)]
    x, y, idx = col.work.test.x[:count], col.work.test.y[:count], col.work.test.index[:count]
    if settings.init == "iso":
        sigma0 = col.thetas(NORM, sigma_of(col), ISOTROPIC).reshape(len(col.work.test.x), -1)[:len(x), 0]
    else:
        sigma0 = np.full(len(x), theta_of(NORM, sigma_of(col)))
    rot_all, eig_all = rotations(col, "test")
    return rancer_runs.run_rancer(model, x, y, idx, sigma0, settings, run_folder(col, profile, settings, results_root,
                                                                                 seed, count),
                                  profile.n0, col.setup.n, profile.alpha, col.work.num_classes,
                                  batch_size=profile.batch_size, seed=seed, device=profile.device,
                                  rotations=(rot_all[:len(x)], eig_all[:len(x)]), keys=np.arange(len(x)),
                                  **profile.numerics())


def all_methods(col: Column, rancer_rows: pd.DataFrame) -> pd.DataFrame:
    """Per-input rows of the four methods (after their memories) on the same test inputs.

    Parameters
    ----------
    col : Column
        The column: its Fixed σ, Isotropic DD and ANCER rows at `sigma_of(col)`.
    rancer_rows : pandas.DataFrame
        RANCER's rows (`run_rancer`) on the same test inputs.

    Returns
    -------
    pandas.DataFrame
        Columns idx, label, predict, radius, radius_proxy, correct (bool) and method, the methods in `METHODS` order.
    """
    frames = [col.rows(NORM, sigma_of(col), m)[["idx", "label", "predict", "radius", "radius_proxy", "correct"]]
              .assign(method=m) for m in (FIXED, ISOTROPIC, ANCER)]
    frames.append(rancer_rows[["idx", "label", "predict", "radius", "radius_proxy", "correct"]].assign(method=RANCER))
    out = pd.concat(frames, ignore_index=True)
    out["correct"] = check_correct(out["correct"])
    return out


def tables(results: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """RANCER Table 1 (certified accuracy at l2 radii, ACR) and Table 2 (at proxy radii, ACR~) for our
    results, one row per method (display names).

    Parameters
    ----------
    results : pandas.DataFrame
        `all_methods`' rows (columns method, correct, radius, radius_proxy).

    Returns
    -------
    pandas.DataFrame
        Table 1, indexed by method (`METHOD_NAMES`): one column per radius of `PAPER_RADII` named f"{r:g}"
        (certified accuracy at ℓ2 radii, %) and acr.
    pandas.DataFrame
        Table 2, likewise at proxy radii, with acr_proxy.
    """
    t = summary_table(results, PAPER_RADII, ["method"])
    t2 = summary_table(results, PAPER_RADII, ["method"], radius_col="radius_proxy")
    t["method"], t2["method"] = t["method"].map(METHOD_NAMES), t2["method"].map(METHOD_NAMES)
    cols = [f"{r:g}" for r in PAPER_RADII]
    return t.set_index("method")[cols + ["acr"]], t2.set_index("method")[cols + ["acr_proxy"]]


def paper_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """RANCER Tables 1-2 as printed (CIFAR-10, ResNet18). The ACR columns are printed as 27, 25, 46, 53
    (no unit); ARI = 0.0673 = 0.53 - 0.46 in the text shows they are ACR x 100, so they are divided by 100."""
    out = []
    for name, accuracy, metric in (("rancer_table1", "certified_accuracy", "acr"),
                                   ("rancer_table2", "certified_accuracy_proxy", "acr_proxy")):
        p = load_table(name)
        rows = {}
        for method, g in p.groupby("method", sort=False):
            acc = g[g.metric == accuracy]
            row = {f"{float(r):g}": v for r, v in zip(acc.radius, acc.value)}
            row[metric] = float(g[g.metric == metric].value.iloc[0]) / 100
            rows[PAPER_NAMES[method]] = row
        out.append(pd.DataFrame(rows).T)
    return out[0], out[1]


def improvement(results: pd.DataFrame) -> dict[str, float]:
    """RANCER §4.1's ARI and AR̃I: the mean over test inputs of RANCER's (proxy) radius times 1(correct)
    minus ANCER's, i.e. ACR_RANCER - ACR_ANCER and ACR~_RANCER - ACR~_ANCER.

    Parameters
    ----------
    results : pandas.DataFrame
        `all_methods`' rows; RANCER's and ANCER's must cover the same inputs (idx) in the same order (ValueError
        otherwise).

    Returns
    -------
    dict of str to float
        {"ARI": ..., "ARI~": ...}.
    """
    r, a = results[results.method == RANCER], results[results.method == ANCER]
    if list(r.idx) != list(a.idx):
        raise ValueError("RANCER's and ANCER's rows must cover the same inputs in the same order")
    return {"ARI": average_certified_radius(r.radius, r.correct) - average_certified_radius(a.radius, a.correct),
            "ARI~": average_certified_radius(r.radius_proxy, r.correct)
            - average_certified_radius(a.radius_proxy, a.correct)}


#: claim C7's two effects (RANCER §4.1): label -> (statement, per-input column)
C7_EFFECTS = {"C7/ARI": ("RANCER's ACR > ANCER's (ARI > 0)", "radius"),
              "C7/ARI~": ("RANCER's ACR~ > ANCER's (AR̃I > 0)", "radius_proxy")}


def claim_effects(results: pd.DataFrame, label: str, seed: int = 0) -> dict[str, Effect]:
    """Claim C7's ARI and AR̃I (`improvement`) on one column's per-input results, each with its paired
    bootstrap interval over the test inputs (`intervals.paired_effect`; one σ, so no envelope).

    Parameters
    ----------
    results : pandas.DataFrame
        Per-input rows (method, idx, correct, radius, radius_proxy; RANCER's and ANCER's rows on the same inputs).
    label : str
        Names the column in the bootstrap's stream key.
    seed : int, default 0
        The bootstrap's seed.

    Returns
    -------
    dict of str to Effect
        {"C7/ARI": Effect, "C7/ARI~": Effect}, their estimates `improvement`'s.
    """
    r, a = results[results.method == RANCER], results[results.method == ANCER]
    return {claim: paired_effect(input_matrix([r], column), input_matrix([a], column), seed=seed,
                                 key=claim_key(f"06/{label}/{claim}"))
            for claim, (_, column) in C7_EFFECTS.items()}


def claims(results: pd.DataFrame) -> dict[str, bool]:
    """Claim C7 (RANCER beats ANCER): ARI > 0 and AR̃I > 0, and RANCER's certified accuracy is at least
    ANCER's at every radius of Table 1 / Table 2.

    Parameters
    ----------
    results : pandas.DataFrame
        `all_methods`' rows.

    Returns
    -------
    dict of str to bool
        The four statements (ARI, ARI~, the ℓ2 curves, the proxy curves) -> whether each holds.
    """
    t1, t2 = tables(results)
    gain = improvement(results)
    return {"C7/ARI: RANCER's ACR > ANCER's": gain["ARI"] > 0,
            "C7/ARI~: RANCER's ACR~ > ANCER's": gain["ARI~"] > 0,
            "C7/curves: RANCER >= ANCER at every l2 radius": bool((t1.loc["RANCER"] >= t1.loc["ANCER"]).all()),
            "C7/curves: RANCER >= ANCER at every proxy radius": bool((t2.loc["RANCER"] >= t2.loc["ANCER"]).all())}


# -- the matched-objective ablation ---------------------------------------------------------------------------------
#: the four arms: (objective, rotated) -> name. ANCER's objective (App. C): gap · geomean θ + κ · min θ · gap by Adam,
#: θ >= Isotropic DD's σ; RANCER's (Algorithm 1): the proxy radius alone by clipped gradient ascent in
#: [σ0 (1 - γ1), σ0 (1 + γ2)]. Rotated: the noise is U (θ ⊙ z) with U the input Hessian's eigenvectors (RANCER), else
#: θ ⊙ z. ANCER and RANCER are the two diagonal arms; C7 compares them, changing both at once.
ABLATION_ARMS = {(ANCER, False): "ANCER", (ANCER, True): "ANCER's objective, rotated",
                 (RANCER, False): "RANCER's objective, axis-aligned", (RANCER, True): "RANCER"}
#: the effects the ablation separates: label -> (statement, arm A, arm B); each is A minus B on the same inputs
ABLATION_EFFECTS = {
    "C7/rotation": ("rotating the noise by the Hessian's eigenvectors, ANCER's objective kept", (ANCER, True),
                    (ANCER, False)),
    "C7/rotation (RANCER's objective)": ("rotating the noise, RANCER's objective kept", (RANCER, True),
                                         (RANCER, False)),
    "C7/objective": ("RANCER's objective instead of ANCER's, the noise rotated in both", (RANCER, True),
                     (ANCER, True)),
    "C7/objective (axis-aligned)": ("RANCER's objective instead of ANCER's, neither rotated", (RANCER, False),
                                    (ANCER, False)),
}


def ablation_folder(col: Column, profile: Profile, settings: RancerSettings, results_root: str | Path,
                    objective: str, seed: int = 0) -> Path:
    """The cache folder of one off-diagonal ablation arm (`ablation_arm`).

    results_root/<setup>/l2/sigma_<σ>/ablation-<objective>-<key>, the key covering the model, `settings`, the column's
    chosen ℓ2 settings, the arm, N0, N, α, the seed, the test indices and the numerics.

    Parameters
    ----------
    col, profile, settings, results_root, objective, seed : as in `ablation_arm`

    Returns
    -------
    Path
        The arm's folder (it may not exist yet).
    """
    model = col.work.models[NORM, sigma_of(col)]
    key = rancer_key(model_fingerprint(model), settings, iso=col.chosen[NORM], arm=objective, n0=profile.n0,
                     n=col.setup.n, alpha=profile.alpha, seed=seed, idx=col.work.test.index.tolist(),
                     **profile.numerics())
    return Path(results_root) / col.setup.name / NORM / f"sigma_{sigma_of(col)}" / f"ablation-{objective}-{key}"


def ablation_arm(col: Column, profile: Profile, settings: RancerSettings, results_root: str | Path, objective: str,
                 seed: int = 0) -> pd.DataFrame:
    """One of the two new arms of the ablation on the column's test inputs, with the same inputs, streams, CERTIFY
    and memory as the others.

    "ancer": ANCER's objective with RANCER's rotation (`experiment.optimize_thetas(..., rotations=U)`, from Isotropic
    DD's σ with the column's chosen ANCER settings, ANCER's streams); "rancer": RANCER's objective without rotation
    (`rancer.rancer_parameters` with U = I and RANCER's chosen `settings`, RANCER's streams). Both are certified by
    `rancer_runs.run_rotated` (rotated CERTIFY, Algorithm 1 over rotated ellipsoids; U = I is the axis-aligned case)
    in `ablation_folder`. The model runs on `profile.device`.

    Parameters
    ----------
    col : Column
        The column (its ℓ2 model, test split, chosen settings and Isotropic DD run).
    profile : Profile
        N0, α, the batch size, the device and the numerics.
    settings : RancerSettings
        RANCER's chosen settings (`choose_rancer`).
    results_root : str or Path
        The results folder.
    objective : str
        "ancer" or "rancer" (ValueError otherwise).
    seed : int, default 0
        The run's seed.

    Returns
    -------
    pandas.DataFrame
        `rancer_runs.run_rotated`'s rows: one per test input in test order, final.tsv's columns.
    """
    check_choice(objective, "objective", (ANCER, RANCER))
    model = col.work.models[NORM, sigma_of(col)]
    x, y, idx = col.work.test.x, col.work.test.y, col.work.test.index
    iso = col.thetas(NORM, sigma_of(col), ISOTROPIC)

    def parameters() -> tuple[np.ndarray, np.ndarray]:
        n = int(np.prod(tuple(x.shape[1:])))
        if objective == ANCER:
            rot, _ = rotations(col, "test")
            scales = optimize_thetas(model, x, "gaussian", theta_of(NORM, sigma_of(col)), ANCER, col.chosen[NORM],
                                     seed, isotropic=iso, keys=idx, device=profile.device,
                                     rotations=rot, **profile.numerics()).reshape(len(x), -1)
        else:
            rot = np.repeat(np.eye(n)[None], len(x), axis=0)  # writable: torch refuses read-only arrays
            scales, _, _ = rancer_parameters(model, x, iso.reshape(len(x), -1)[:, 0], settings, seed,
                                             rotations=(rot, np.zeros((len(x), n))), device=profile.device,
                                             **profile.numerics())
        return scales, rot

    record = dict(run="ablation", arm=objective, settings=asdict(settings), ancer=asdict(col.chosen[NORM]),
                  isotropic=manifest.array_digest(np.asarray(iso, np.float64)))
    return rancer_runs.run_rotated(model, x, y, idx, parameters, record,
                                   ablation_folder(col, profile, settings, results_root, objective, seed), profile.n0,
                                   col.setup.n, profile.alpha, col.work.num_classes, batch_size=profile.batch_size,
                                   seed=seed, device=profile.device, **profile.numerics())


def ablation(results: pd.DataFrame, arms: Mapping[str, pd.DataFrame], label: str,
             seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The matched-objective ablation on one column.

    Parameters
    ----------
    results : pandas.DataFrame
        `all_methods`' rows: ANCER's and RANCER's are used.
    arms : mapping of str to pandas.DataFrame
        The two other arms' rows (`ablation_arm`), keyed by objective ("ancer", "rancer"); every arm must cover the
        same test inputs in the same order (ValueError otherwise).
    label : str
        Names the column in the bootstrap's stream key.
    seed : int, default 0
        The bootstrap's seed.

    Returns
    -------
    pandas.DataFrame
        A table per arm, indexed by arm (`ABLATION_ARMS`' names): columns objective, rotated, accuracy (certified
        accuracy at radius 0, %), acr and acr_proxy.
    pandas.DataFrame
        One row per `ABLATION_EFFECTS` claim and measure ("ACR", "ACR~"): columns claim, measure, statement and
        effect (its paired bootstrap `Effect`).
    """
    rows = {(ANCER, False): results[results.method == ANCER], (RANCER, True): results[results.method == RANCER],
            (ANCER, True): arms[ANCER], (RANCER, False): arms[RANCER]}
    order = list(rows[(ANCER, False)].idx)
    if any(list(r.idx) != order for r in rows.values()):
        raise ValueError("every arm must cover the same test inputs in the same order")
    table = pd.DataFrame([dict(arm=name, objective=obj, rotated=rot, accuracy=100 * float(check_correct(r.correct).mean()),
                               acr=average_certified_radius(r.radius, r.correct),
                               acr_proxy=average_certified_radius(r.radius_proxy, r.correct))
                          for (obj, rot), name in ABLATION_ARMS.items() for r in [rows[obj, rot]]]).set_index("arm")
    effects = []
    for claim, (statement, a, b) in ABLATION_EFFECTS.items():
        for measure, column in (("ACR", "radius"), ("ACR~", "radius_proxy")):
            e = paired_effect(input_matrix([rows[a]], column), input_matrix([rows[b]], column), seed=seed,
                              key=claim_key(f"06/{label}/{claim}/{measure}"))
            effects.append(dict(claim=claim, measure=measure, statement=statement, effect=e))
    return table, pd.DataFrame(effects)


def acr_values(table1: pd.DataFrame, table2: pd.DataFrame) -> dict[str, float]:
    """RANCER's and ANCER's ACR (Table 1) and ACR~ (Table 2), keyed "RANCER ACR", "RANCER ACR~",
    "ANCER ACR", "ANCER ACR~".

    Parameters
    ----------
    table1, table2 : pandas.DataFrame
        `tables`' two tables (index with "RANCER" and "ANCER"; columns acr and acr_proxy).

    Returns
    -------
    dict of str to float
        The four values.
    """
    return {f"{m} ACR": float(table1.loc[m, "acr"]) for m in ("RANCER", "ANCER")} | \
        {f"{m} ACR~": float(table2.loc[m, "acr_proxy"]) for m in ("RANCER", "ANCER")}


# ---------------------------------------------------------------------------------------------------
# The study: the columns, RANCER's selection and runs, each step timed (reused from the cache or not)
# ---------------------------------------------------------------------------------------------------

def timing_sidecar(results_root: str | Path, column: str, step: str) -> Path:
    """Where the time a cached step of a column took when it was computed is recorded
    (`step_timing.run_step`): results_root/<column>/timings/<step>.json.

    Parameters
    ----------
    results_root : str or Path
        The results folder.
    column : str
        The column's name.
    step : str
        The step's name.

    Returns
    -------
    Path
        The sidecar's path.
    """
    return Path(results_root) / column / "timings" / f"{step}.json"


@dataclass
class Study:
    """Notebook 06's image study on the columns of `profile.rancer`: notebook 03's Fixed σ, Isotropic DD
    and ANCER (`columns`), RANCER's validation choice (`chosen`, its `selection` table) and the per-input
    rows of the four methods (`results`, `all_methods`). `timings` says for every cached step whether it
    was computed now or reused, and how long it took when it was computed."""
    profile: Profile
    results_root: Path
    seed: int
    columns: dict[str, Column] = field(default_factory=dict)
    chosen: dict[str, RancerSettings] = field(default_factory=dict)
    selection: dict[str, pd.DataFrame] = field(default_factory=dict)
    results: dict[str, pd.DataFrame] = field(default_factory=dict)
    timings: list[StepTiming] = field(default_factory=list)

    def step(self, what: str, compute, column: str | Sequence[str], name: str):
        """Run a cached step of `column` (its files under results_root/<column>; several columns: the step's
        timing is kept under the first), record its timing.

        Parameters
        ----------
        what : str
            What the step computes, for the timing line.
        compute : callable
            () -> the step's result.
        column : str or sequence of str
            The column (or columns) whose folders hold the step's cache entries.
        name : str
            The step's name (`timing_sidecar`).

        Returns
        -------
        object
            compute's result; its `StepTiming` is appended to `timings`.
        """
        names = [column] if isinstance(column, str) else list(column)
        out, t = run_step(what, compute, [self.results_root / c for c in names],
                          timing_sidecar(self.results_root, names[0], name))
        self.timings.append(t)
        return out

    def rancer_rows(self, name: str, settings: RancerSettings, count: int | None = None) -> pd.DataFrame:
        """`run_rancer` on column `name` with `settings` (the first `count` test inputs), timed.

        Parameters
        ----------
        name : str
            A column of `columns`.
        settings : RancerSettings
            The run's settings.
        count : int, optional
            The number of leading test inputs; None: all of them.

        Returns
        -------
        pandas.DataFrame
            `run_rancer`'s rows.
        """
        col = self.columns[name]
        folder = run_folder(col, self.profile, settings, self.results_root, self.seed, count)
        inputs = len(col.work.test.x) if count is None else min(count, len(col.work.test.x))
        what = f"{name}: RANCER (init {settings.init}) on {inputs} test inputs"
        return self.step(what, lambda: run_rancer(col, self.profile, settings, self.results_root, self.seed, count),
                         name, folder.name)

    def ablation(self, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The matched-objective ablation (`ablation`) on column `name`: its two new arms (`ablation_arm`, timed and
        cached) beside ANCER's and RANCER's rows.

        Parameters
        ----------
        name : str
            A column of `columns` (with its `chosen` settings and `results`).

        Returns
        -------
        tuple of (pandas.DataFrame, pandas.DataFrame)
            `ablation`'s table per arm and table of effects.
        """
        col = self.columns[name]
        arms = {objective: self.step(f"{name}: {ABLATION_ARMS[objective, objective == ANCER]}",
                                     lambda objective=objective: ablation_arm(col, self.profile, self.chosen[name],
                                                                              self.results_root, objective, self.seed),
                                     name, ablation_folder(col, self.profile, self.chosen[name], self.results_root,
                                                           objective, self.seed).name)
                for objective in (ANCER, RANCER)}
        return ablation(self.results[name], arms, name, self.seed)

    def sensitivity(self, count: int) -> pd.DataFrame:
        """RANCER §4.5 (`sensitivity_table`) for every column on its first `count` test inputs, with the
        column as the outer index level.

        Parameters
        ----------
        count : int
            The number of leading test inputs of each run (one run per initialization "eigen_fixed", "eigen_init",
            "iso", with the column's chosen settings).

        Returns
        -------
        pandas.DataFrame
            Indexed by (column, init): `sensitivity_table`'s columns.
        """
        out = {}
        for name in self.columns:
            runs = {init: self.rancer_rows(name, replace(self.chosen[name], init=init), count)
                    for init in ("eigen_fixed", "eigen_init", "iso")}
            out[name] = sensitivity_table(runs)
        return pd.concat(out, names=["column"])


def run_study(profile: Profile, results_root: str | Path, seed: int, lrs: tuple[float, ...],
              gamma2s: tuple[float, ...]) -> Study:
    """Notebook 06's study: for each column of `profile.rancer`, notebook 03's three methods
    (`image_study.load_columns`), RANCER's step size and γ2 on the validation split (`choose_rancer`) and
    RANCER on the test inputs (`run_rancer`); every step reuses its cached results when they exist.

    Parameters
    ----------
    profile : Profile
        The profile (its `rancer` columns, N0, α, device, numerics).
    results_root : str or Path
        The results folder.
    seed : int
        The seed of the data, training, selections and runs.
    lrs, gamma2s : as in `choose_rancer`

    Returns
    -------
    Study
        With `columns`, `chosen`, `selection` and `results` (`all_methods`' rows) per column, and the steps' timings.
    """
    study = Study(profile, Path(results_root), seed)
    names = [setup.name for setup in profile.rancer]
    # every column's jobs at once, so that they run side by side (`load_columns` runs one job per process)
    study.columns.update(study.step(f"{', '.join(names)}: Fixed σ, Isotropic DD and ANCER (notebook 03's procedure)",
                                    lambda: load_columns(profile, results_root, seed, setups=profile.rancer),
                                    names, "notebook03_methods"))
    for name, col in study.columns.items():
        path = selection_path(col, profile, lrs, gamma2s, results_root, seed)
        study.chosen[name], study.selection[name] = study.step(
            f"{name}: RANCER's step size and γ2 on the validation split",
            lambda: choose_rancer(col, profile, lrs, gamma2s, results_root, seed), name, path.stem)
        study.results[name] = all_methods(col, study.rancer_rows(name, study.chosen[name]))
    return study


def sensitivity_table(runs: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """RANCER §4.5's table from `run_rancer` rows per initialization.

    The initializations: "eigen_fixed": Σ̂ = |Λ| without optimization, "eigen_init": Σ̂⁰ = |Λ| then optimized,
    "iso": Σ̂⁰ = σ0.

    Parameters
    ----------
    runs : mapping of str to pandas.DataFrame
        `run_rancer`'s rows (columns correct, radius, radius_proxy, min_sigma) by initialization.

    Returns
    -------
    pandas.DataFrame
        Indexed by init: columns accuracy (certified accuracy at radius 0, %), acr, acr_proxy (ACR~) and
        median_min_sigma (the median over inputs of the smallest per-axis scale).
    """
    rows = []
    for init, r in runs.items():
        correct = check_correct(r.correct)
        rows.append(dict(init=init, accuracy=100 * float(correct.mean()), acr=average_certified_radius(r.radius, correct),
                         acr_proxy=average_certified_radius(r.radius_proxy, correct),
                         median_min_sigma=float(np.median(r.min_sigma))))
    return pd.DataFrame(rows).set_index("init")


def sensitivity_claims(table: pd.DataFrame) -> dict[str, bool]:
    """RANCER §4.5's findings in one column's `sensitivity_table`: the paper's choice Σ̂⁰ = σ0 has the
    largest ACR~ of the three initializations, and Σ̂ = |Λ| (no optimization) certifies less than it.

    Parameters
    ----------
    table : pandas.DataFrame
        One column's `sensitivity_table` (index init with "iso" and "eigen_fixed"; column acr_proxy).

    Returns
    -------
    dict of str to bool
        The two statements -> whether each holds.
    """
    return {"the paper's choice (Σ̂⁰ = σ0) has the largest ACR~ of the three": table.acr_proxy.idxmax() == "iso",
            "Σ̂ = |Λ| certifies less than it": bool(table.acr_proxy["eigen_fixed"] < table.acr_proxy["iso"])}


def small_eigenvalue_share(col: Column, count: int | None = None, floor: float = MIN_SCALE) -> float:
    """The share of the input Hessian's eigenvalues with |λ| < `floor` (RANCER's smallest scale) over the
    first `count` test inputs: the axes along which Σ̂ = |Λ| sits at the floor.

    Parameters
    ----------
    col : Column
        The column (`rotations` of its test split).
    count : int, optional
        The number of leading test inputs; None: all of them.
    floor : float, default `rancer.MIN_SCALE`
        The threshold on |λ|.

    Returns
    -------
    float
        The share, in [0, 1].
    """
    _, eig = rotations(col, "test")
    return float((np.abs(eig[:count]) < floor).mean())


def hessian_rank(col: Column, k: int = 0) -> tuple[int, int]:
    """(numerical rank, size) of the input Hessian of the column's model at its k-th test input (a ReLU
    network's has rank <= K - 1, a softplus one's is full).

    Parameters
    ----------
    col : Column
        The column (its ℓ2 model and test split).
    k : int, default 0
        The test input's position.

    Returns
    -------
    tuple of (int, int)
        The Hessian's numerical rank (`hessian.numerical_rank`) and its size n (the input's number of values).
    """
    h = input_hessian(col.work.models[NORM, sigma_of(col)], col.work.test.x[k])
    return numerical_rank(h), len(h)



def runtime_table(col: Column, profile: Profile, settings: RancerSettings, results_root: str | Path, seed: int = 0,
                  count: int = 3) -> pd.DataFrame:
    """RANCER Table 3 for one column: mean seconds per input of each stage (`runtime.RANCER_STAGES`) and
    the total.

    For Fixed σ, Isotropic DD, ANCER (`runtime.time_stages`) and RANCER (Isotropic DD's optimization, then
    `runtime.time_rancer_stages`), each timed one input at a time on the first `count` test inputs; the memory is
    timed over the whole test set (`memory.algorithm1` for RANCER). The model runs on `profile.device`.

    Parameters
    ----------
    col : Column
        The column.
    profile : Profile
        N0, α, the batch size and the device.
    settings : RancerSettings
        RANCER's settings (`choose_rancer`'s).
    results_root : str or Path
        The results folder (RANCER's run, for the memory's timing).
    seed : int, default 0
        The seed of the timed runs.
    count : int, default 3
        The number of leading test inputs timed.

    Returns
    -------
    pandas.DataFrame
        Indexed by method ("fixed", "isotropic", "ancer", "rancer"): one column per stage of `runtime.RANCER_STAGES`
        and total (seconds per input; 0 for a stage a method does not run).
    """
    sigma = sigma_of(col)
    model, x = col.work.models[NORM, sigma], col.work.test.x[:count]
    stages = runtime.time_stages(model, x, "gaussian", theta_of(NORM, sigma), col.chosen[NORM], profile.n0,
                                 col.setup.n, profile.alpha, col.work.num_classes, profile.batch_size, seed,
                                 device=profile.device)
    iso = col.thetas(NORM, sigma, ISOTROPIC).reshape(len(col.work.test.x), -1)[:count, 0]
    extra = time_rancer_stages(model, x, iso, settings, profile.n0, col.setup.n, profile.alpha,
                               col.work.num_classes, profile.batch_size, seed, device=profile.device)
    iso_rows = stages[(stages.method == ISOTROPIC) & (stages.stage == runtime.ISO_OPT)].assign(method=RANCER)
    memory = runtime.time_memory(col.certified(NORM, sigma, ANCER), col.work.test.x,
                                 col.thetas(NORM, sigma, ANCER), NORM)["fast"]
    rot_memory = time_rotated_memory(col, profile, settings, results_root, seed)
    return runtime.runtime_table(pd.concat([stages, extra, iso_rows]),
                                 {ISOTROPIC: memory, ANCER: memory, RANCER: rot_memory},
                                 order=runtime.RANCER_STAGES)


def cost_ratios(table: pd.DataFrame) -> pd.Series:
    """Each method's total seconds per input over ANCER's (a `runtime_table`, rows by method, or several
    stacked with an outer "column" level: each divided by its own column's ANCER).

    Parameters
    ----------
    table : pandas.DataFrame
        A `runtime_table` (index method), or several with index (column, method); column total.

    Returns
    -------
    pandas.Series
        The ratios, with `table`'s index.
    """
    if isinstance(table.index, pd.MultiIndex):
        ancer = table.xs(ANCER, level="method").total
        return table.total / ancer.reindex(table.index, level=0)
    return table.total / float(table.loc[ANCER, "total"])


def paper_runtime() -> pd.Series:
    """RANCER Table 3 as printed: seconds per input on an RTX 2080, by method (our display names)."""
    t = load_table("rancer_table3").set_index("method").value.astype(float)
    return t.rename(index=PAPER_NAMES)


# ---------------------------------------------------------------------------------------------------
# The 2D example (RANCER Figures 1-2)
# ---------------------------------------------------------------------------------------------------

def first_axis_angle(rotation: np.ndarray) -> float:
    """The direction of the first column of a 2 x 2 rotation (RANCER's axis of the largest Hessian
    eigenvalue) in degrees from the x-axis, in [0, 180) (an axis has no sign).

    Parameters
    ----------
    rotation : numpy.ndarray, shape (2, 2)
        The rotation (ValueError for another shape).

    Returns
    -------
    float
        The angle in degrees, in [0, 180).
    """
    u = np.asarray(rotation, np.float64)
    if u.shape != (2, 2):
        raise ValueError(f"rotation must be a 2 x 2 matrix, got shape {u.shape}")
    return float(np.degrees(np.arctan2(u[1, 0], u[0, 0])) % 180.0)


def toy_claims(regions: Mapping[str, CertifiedRegion], stripe_angle: float, tolerance: float = 5.0, gain: float = 1.5,
               parity: float = 0.15) -> dict[str, bool]:
    """RANCER Figure 1's story at the stripe's centre (`rancer_2d.three_regions`).

    RANCER's first axis (largest Hessian eigenvalue) lies within `tolerance` degrees of the stripe's normal, RANCER's
    proxy radius exceeds `gain` times ANCER's, and ANCER's is within `parity` (relative) of Isotropic DD's.

    Parameters
    ----------
    regions : mapping of str to CertifiedRegion
        "isotropic", "ancer" and "rancer" -> region (`rancer_2d.three_regions`).
    stripe_angle : float
        The stripe's direction, in degrees from the x-axis (its normal is 90° more).
    tolerance : float, default 5.0
        Degrees.
    gain : float, default 1.5
        The factor RANCER's proxy radius must exceed ANCER's by.
    parity : float, default 0.15
        The relative margin of ANCER's proxy radius over Isotropic DD's.

    Returns
    -------
    dict of str to bool
        The three statements (with their numbers) -> whether each holds.
    """
    normal = (stripe_angle + 90.0) % 180.0
    off = abs(first_axis_angle(regions[RANCER].rotation) - normal)
    off = min(off, 180.0 - off)
    iso, anc, ran = (regions[m].radius_proxy for m in (ISOTROPIC, ANCER, RANCER))
    return {f"RANCER's first axis (largest Hessian eigenvalue) within {tolerance:g}° of the stripe's normal "
            f"({normal:g}°)": bool(off < tolerance),
            f"RANCER's proxy radius over {gain:g}x ANCER's": bool(ran > gain * anc),
            f"ANCER's proxy radius within {100 * parity:g}% of Isotropic DD's": bool(anc < (1 + parity) * iso)}


def figure2_findings(region: CertifiedRegion, stripe_angle: float, tolerance: float = 5.0) -> dict[str, bool]:
    """RANCER Figure 2's sentence, §4.2, tested on RANCER's 2D region at the stripe's centre.

    The sentence: "the first eigenvector v1 points to the safe potential direction to expand. During optimization
    vector v1 will become larger and v2 shorter". The region is `rancer_2d.three_regions`' (its rotation's columns are
    v1, v2 by decreasing eigenvalue of the loss Hessian, its scales the optimized lengths along them). Tested: whether
    v1 lies within `tolerance` degrees of the stripe's direction (the safe one), whether the optimized scale along v1
    exceeds that along v2, and whether the eigenvectors are the stripe's axes at all (v1 within `tolerance` of its
    direction or of its normal).

    Parameters
    ----------
    region : CertifiedRegion
        RANCER's region, with a 2 x 2 rotation and scales of shape (2,) (ValueError otherwise).
    stripe_angle : float
        The stripe's direction, in degrees from the x-axis.
    tolerance : float, default 5.0
        Degrees.

    Returns
    -------
    dict of str to bool
        The three statements -> whether each holds.
    """
    if region.rotation is None or region.rotation.shape != (2, 2):
        raise ValueError("region must be a rotated 2D region (RANCER's), with a 2 x 2 rotation")
    along = stripe_angle % 180.0
    v1 = first_axis_angle(region.rotation)

    def off(a: float, b: float) -> float:
        d = abs(a - b) % 180.0
        return min(d, 180.0 - d)

    s1, s2 = (float(v) for v in region.scales)
    return {"v1 (largest eigenvalue) points along the stripe, the safe direction (the paper's sentence)":
                bool(off(v1, along) < tolerance),
            "the optimization makes the scale along v1 larger than along v2 (the paper's sentence)": bool(s1 > s2),
            "v1 and v2 are the stripe's axes (its normal and its direction, in some order)":
                bool(min(off(v1, along), off(v1, along + 90.0)) < tolerance)}


def quadratic_error(a: np.ndarray, b: np.ndarray, true: np.ndarray, quadratic: np.ndarray,
                    near: float) -> dict[str, float]:
    """How well the second-order model fits the loss (RANCER Figure 2, `rancer_2d.loss_quadratic_grid` grids).

    max |true - quadratic| over the range of the true loss, within `near` of the point (|a|, |b| <= near) and over the
    whole window.

    Parameters
    ----------
    a, b : numpy.ndarray, shape (R, R)
        The grid's coordinates along the plane's two directions.
    true : numpy.ndarray, shape (R, R)
        The loss.
    quadratic : numpy.ndarray, shape (R, R)
        Its second-order Taylor model. All four of one shape (ValueError otherwise).
    near : float
        The half-width of the neighbourhood; ValueError when it holds no grid point.

    Returns
    -------
    dict of str to float
        {"near": ..., "window": ...}: "near", max |true - quadratic| over the grid points within `near` divided by the
        range (max - min) of `true` there; "window", the same over the whole grid.
    """
    a, b, true, quadratic = (np.asarray(v, np.float64) for v in (a, b, true, quadratic))
    if not a.shape == b.shape == true.shape == quadratic.shape:
        raise ValueError(f"a, b, true and quadratic must have one shape, got {a.shape}, {b.shape}, {true.shape}, "
                         f"{quadratic.shape}")
    inside = (np.abs(a) <= near) & (np.abs(b) <= near)
    if not inside.any():
        raise ValueError(f"near = {near!r} leaves no grid point around the point")
    err = np.abs(true - quadratic)
    return {"near": float(err[inside].max() / np.ptp(true[inside])), "window": float(err.max() / np.ptp(true))}


def lower_clip_share(col: Column, profile: Profile, settings: RancerSettings, results_root: str | Path,
                     seed: int = 0, rtol: float = 1e-3) -> float:
    """The share of a RANCER run's test inputs (init "iso") whose smallest per-axis scale sits at the lower
    clip σ0 (1 - γ1) (within a relative `rtol`; σ0 = the input's Isotropic DD σ).

    These are the inputs whose ℓ2 radius, set by the smallest axis, RANCER's clip let fall below Isotropic DD's scale.
    The clip is taken as max(σ0 (1 - γ1), `rancer.MIN_SCALE`).

    Parameters
    ----------
    col, profile, results_root, seed : as in `run_rancer`
        The run on all the test inputs (computed when not cached).
    settings : RancerSettings
        The run's settings; `settings.init` must be "iso" (ValueError otherwise).
    rtol : float, default 1e-3
        The relative tolerance above the clip.

    Returns
    -------
    float
        The share, in [0, 1].
    """
    if settings.init != "iso":
        raise ValueError(f"settings.init must be 'iso' (clipped around Isotropic DD's σ0), got {settings.init!r}")
    run_rancer(col, profile, settings, results_root, seed)
    scales = load_array(run_folder(col, profile, settings, results_root, seed) / "theta.npy").astype(np.float64)
    sigma0 = col.thetas(NORM, sigma_of(col), ISOTROPIC).reshape(len(col.work.test.x), -1)[:, 0]
    low = np.maximum(sigma0 * (1.0 - settings.gamma1), MIN_SCALE)
    return float((scales.reshape(len(scales), -1).min(axis=1) <= low * (1.0 + rtol)).mean())


def with_paper(ours: Mapping[str, pd.DataFrame], paper: pd.DataFrame, titles: Mapping[str, str],
               paper_title: str = "the paper: CIFAR-10, ResNet18") -> pd.DataFrame:
    """One table of our columns' rows (keyed by column, shown under `titles`) and the paper's rows, with
    the data as the outer index level.

    Parameters
    ----------
    ours : mapping of str to pandas.DataFrame
        Our tables (e.g. `tables`'), indexed by method, by column name.
    paper : pandas.DataFrame
        The paper's table (`paper_tables`'), indexed by method.
    titles : mapping of str to str
        The title of each column name of `ours`.
    paper_title : str, default "the paper: CIFAR-10, ResNet18"
        The paper's rows' title.

    Returns
    -------
    pandas.DataFrame
        The tables stacked, index (data, method), data being the titles.
    """
    parts = {titles[name]: t for name, t in ours.items()}
    parts[paper_title] = paper
    return pd.concat(parts, names=["data", "method"])


def logged_certify_seconds(col: Column) -> float:
    """The CERTIFY seconds that notebook 03's logs of a column record (the `time` of every input, method
    and σ): what certifying took when it was computed, without the optimizations (which are not logged).

    Parameters
    ----------
    col : Column
        The column (its `results` need a `time` column; ValueError otherwise).

    Returns
    -------
    float
        The sum of `time` over the column's results.
    """
    if "time" not in col.results:
        raise ValueError(f"column {col.setup.name!r}: its results have no 'time' column")
    return float(col.results["time"].sum())
