"""Notebook 05's study of notebook 03's columns (ANCER App. A.1-A.2, F, G.3, H and I): is ANCER's
certificate a superset of the isotropic ones, input by input?

- `shares`, `pooled_shares`, `paper_shares`: Tables 4-5, the % of test inputs where ANCER's certificate
  is the largest (`superset.superset_table` per column and certificate), beside the paper's rows;
- `average_sigma_results`, `table6`, `table6_rows`, `paper_table6`: Table 6, one averaged Σ for every
  input (App. I), its certificates kept beside notebook 03's logs (`average_sigma_path`) and reused;
- `gap_factors` / `column_gap_factors` -> `GapFactors`: Figure 14, the ℓ2 radius split into a σ-factor
  and a gap factor, and claim C5 (App. G.3);
- `spreads`: Figure 16's max σ / min σ per input; `sigma_maps`: Figure 15's inputs and parameters;
- `safe_direction`, `safe_perturbation`: Figure 5 (App. A.2), a perturbation inside ANCER's ellipsoid
  and outside Isotropic DD's ball, checked by a fresh PREDICT;
- `hessian_landscape`: Figure 4 (App. A.1), the base classifier along the input Hessian's eigenvectors;
- `claims`: the claims of App. F, G.3 and I as one table of booleans.

The figures are drawn by `superset_figures`.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..core import devices
from ..core.base_classifier import checked_logits, eval_mode
from ..core.certify import ABSTAIN, Certificate, Smooth
from ..core.files import load_array
from ..core.names import NOISE_OF
from ..core.regions import region_norm
from ..core.reproducibility import torch_threads
from ..core.stages import CERTIFY, stage
from ..evaluation import superset
from ..evaluation.image_domain import largest_in_domain, linf_radius, semi_axes_in_range
from ..evaluation.intervals import Effect, bootstrap_effect, claim_key, input_matrix, paired_effect, threshold_effect
from ..evaluation.metrics import average_certified_radius, check_correct, summary_table
from ..methods.hessian import BY_MAGNITUDE, OF_PROBABILITY, eigen_directions, input_hessian, landscape, numerical_rank
from ..methods.registry import ANCER, FIXED, ISOTROPIC
from ..models.data import DATA_DIR
from ..runs.cache import cached, read_table, write_table
from ..runs.code_keys import cache_key, code_version
from ..runs.experiment import certify_all, certify_input, optimize_thetas, run_method
from ..runs.paper import load_table
from ..runs.parallel import device_workers, map_ordered
from ..runs.profiles import Profile
from ..runs.setups import prepare, sigmas_of, theta_of
from .image_study import JOB_THREADS, METHOD_NAMES, NORMS, PAPER_MODEL, PAPER_RADII, Column, run_folder, settings_at

#: the two certificates of Tables 4-5: the l_p radius and ANCER's proxy radius (ℓΣ2 / ℓΛ1)
CERTIFICATES = {"radius": "ℓp", "radius_proxy": "proxy"}
#: App. G.3 splits the ℓ2 certificates at an initial σ = 0.25 (Figure 14); Figures 5 and 15 use it too
GAP_SIGMA = 0.25
#: App. H's Figure 16 uses an initial σ = 1.0
SPREAD_SIGMA = 1.0
#: App. H: "this ratio can be as high as 5 for some of the input points" (SmoothAdv, CIFAR-10, σ = 1.0)
PAPER_MAX_SPREAD = 5.0
#: App. F: for all networks but MACER, ANCER's anisotropic certificate is the best "in over 90%" of inputs
PAPER_PROXY_SHARE = 90.0
#: Figure 5: ‖δ‖_{Σ,2} of the drawn perturbation and the samples of the PREDICT that checks it
SAFE_LEVEL = 0.99
SAFE_N = 20_000
#: Figure 5 at a small change: the ℓ∞ budget of 8/255 under which changes of CIFAR-10 images are commonly called
#: imperceptible (Madry et al., 2018)
IMPERCEPTIBLE = 8 / 255
#: Table 6's Average Σ, two readings of "average" (see `superset.average_theta`)
AVERAGE_KINDS = ("mean", "rms")


# -- Tables 4-5 -------------------------------------------------------------------------------------
def shares(cols: dict[str, Column]) -> pd.DataFrame:
    """ANCER Tables 4-5: `superset.superset_table` for every column and both certificates.

    Parameters
    ----------
    cols : dict of str to image_study.Column
        Notebook 03's columns by name; each column's `results` holds the per-input rows of the methods fixed,
        isotropic and ancer (columns norm, sigma, idx, method, radius, radius_proxy, correct, ...).

    Returns
    -------
    pandas.DataFrame
        Columns column, certificate ("ℓp" for the radius, "proxy" for the radius_proxy, `CERTIFICATES`), norm,
        sigma (a σ or "all", pooled over σ), inputs, n_ties, pct_with_ties, pct_without_ties.
    """
    frames = [superset.superset_table(col.results, column).assign(column=name, certificate=label)
              for name, col in cols.items() for column, label in CERTIFICATES.items()]
    out = pd.concat(frames, ignore_index=True)
    return out[["column", "certificate", "norm", "sigma", "inputs", "n_ties", "pct_with_ties", "pct_without_ties"]]


def pooled_shares(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of `shares` pooled over σ, one row per (column, norm) in the columns' order.

    Parameters
    ----------
    table : pandas.DataFrame
        The output of `shares`; it must hold the pooled rows (sigma == "all") of `superset.superset_table`.

    Returns
    -------
    pandas.DataFrame
        Indexed by (column, norm), with columns inputs, lp and proxy (% of inputs where ANCER's certificate is
        the best, 0-0 ties counted as ties), lp_without_ties, proxy_without_ties (ties left out), n_ties_lp and
        n_ties_proxy.
    """
    pooled = table[table.sigma.astype(str) == "all"]
    if pooled.empty:
        raise ValueError("table must hold the pooled rows (sigma == 'all') of superset.superset_table")
    rows = []
    for (name, norm), g in pooled.groupby(["column", "norm"], sort=False):
        g = g.set_index("certificate")
        rows.append(dict(column=name, norm=norm, inputs=int(g.inputs.iloc[0]),
                         lp=g.loc["ℓp", "pct_with_ties"], proxy=g.loc["proxy", "pct_with_ties"],
                         lp_without_ties=g.loc["ℓp", "pct_without_ties"],
                         proxy_without_ties=g.loc["proxy", "pct_without_ties"],
                         n_ties_lp=int(g.loc["ℓp", "n_ties"]), n_ties_proxy=int(g.loc["proxy", "n_ties"])))
    return pd.DataFrame(rows).set_index(["column", "norm"])


def paper_shares() -> pd.DataFrame:
    """ANCER Tables 4-5 as printed: the % of inputs where ANCER's certificate is the best.

    Returns
    -------
    pandas.DataFrame
        Indexed by (dataset, model, norm), with columns lp (% of inputs where ANCER's ℓ2 / ℓ1 certificate is the
        best) and proxy (% where ANCER's ℓΣ2 / ℓΛ1 certificate is the best).
    """
    p = pd.concat([load_table("ancer_table4"), load_table("ancer_table5")], ignore_index=True)
    p["norm"] = p["norm"].str.split("_").str[0]
    out = p.pivot_table(index=["dataset", "model", "norm"], columns="metric", values="value", sort=False)
    return out.rename(columns={"superset_lp_best": "lp", "superset_aniso_best": "proxy"})[["lp", "proxy"]]


def paper_share(column: str, norm: str, certificate: str = "lp", paper: pd.DataFrame | None = None) -> tuple[float, str]:
    """The paper's share (ANCER Tables 4-5) for the row notebook 03 compares a column with.

    That row is Table 1's COHEN model for ℓ2 and Table 2's RS4A model for ℓ1 (`image_study.PAPER_MODEL`).

    Parameters
    ----------
    column : str
        The paper column: "CIFAR-10" or "ImageNet".
    norm : str
        "l2" or "l1".
    certificate : str, default "lp"
        "lp" (the ℓp certificate) or "proxy" (ℓΣ2 / ℓΛ1).
    paper : pandas.DataFrame, optional
        `paper_shares()` (read when None).

    Returns
    -------
    tuple of (float, str)
        The percentage and the row's name, "<dataset> <model>".
    """
    if certificate not in ("lp", "proxy"):
        raise ValueError(f"certificate must be 'lp' or 'proxy', got {certificate!r}")
    model = PAPER_MODEL[norm][1] if norm in PAPER_MODEL else None
    paper = paper_shares() if paper is None else paper
    if (column, model, norm) not in paper.index:
        raise ValueError(f"the paper's Tables 4-5 have no row for column={column!r}, norm={norm!r}")
    return float(paper.loc[(column, model, norm), certificate]), f"{column} {model}"


# -- Table 6 ----------------------------------------------------------------------------------------
def table6_sigma(col: Column, norm: str) -> float:
    """The σ of a column's ANCER Table 6 rows: its largest σ of `norm` (the paper: SmoothAdv at σ = 1.0).

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column; it must certify at least one σ of `norm`.
    norm : str
        "l2" or "l1".

    Returns
    -------
    float
        The largest σ of `norm` in the column's setup.
    """
    sig = sigmas_of(col.setup)[norm]
    if not sig:
        raise ValueError(f"column {col.setup.name!r} certifies no σ for norm {norm!r}")
    return float(max(sig))


def average_sigma_path(col: Column, profile: Profile, norm: str, sigma: float, kind: str, seed: int = 0) -> Path:
    """Where the Average Σ certificates (ANCER App. I, Table 6) of one (norm, σ, kind) are kept.

    The file lies beside notebook 03's run folders, named by `code_keys.cache_key` over the ANCER run it
    averages (whose folder name already hashes the model, settings, certification parameters, inputs and code),
    the code of the averaging rule and of the certification (`superset`, `experiment` and what they import) and
    the certification parameters, so that a changed input or changed code never reuses a stale file.

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column.
    profile : runs.profiles.Profile
        The profile whose n0 and alpha certify (with the column's N).
    norm : str
        "l2" or "l1".
    sigma : float
        The σ of the averaged ANCER run.
    kind : str
        One of `AVERAGE_KINDS`: "mean" or "rms" (`superset.average_theta`).
    seed : int, default 0
        The certification seed.

    Returns
    -------
    Path
        <ANCER run folder's parent>/average_sigma_<kind>-<key>.tsv.
    """
    if kind not in AVERAGE_KINDS:
        raise ValueError(f"kind must be one of {AVERAGE_KINDS}, got {kind!r}")
    folder = col.folder(norm, sigma, ANCER)
    key = cache_key(code_version("evaluation.superset", "runs.experiment"), ancer=folder.name, kind=kind, n0=profile.n0,
                    n=col.setup.n, alpha=profile.alpha, seed=seed)
    return folder.parent / f"average_sigma_{kind}-{key}.tsv"


def average_sigma_results(col: Column, profile: Profile, norm: str, sigma: float,
                          seed: int = 0) -> tuple[pd.DataFrame, list[dict]]:
    """ANCER App. I: CERTIFY every test input with one Σ, the average of ANCER's optimized Σˣ over the test set.

    Both `AVERAGE_KINDS` are certified, with the column's model and N and no memory (a fixed Θ needs none), with
    `image_study.JOB_THREADS` torch threads (CERTIFY's counts do not depend on them). The model runs on
    `profile.device` (the kept tables do not depend on it). Each kind's rows are read from `average_sigma_path`
    when that file exists, and written there otherwise.

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column, with ANCER's run at (`norm`, `sigma`).
    profile : runs.profiles.Profile
        Its n0, alpha and device are used.
    norm : str
        "l2" or "l1".
    sigma : float
        The σ of the averaged ANCER run.
    seed : int, default 0
        The certification seed.

    Returns
    -------
    rows : pandas.DataFrame
        The rows of `experiment.certify_all` (one per test input and kind, in test order within each kind), with
        method "Average Σ (<kind>)".
    timings : list of dict
        Per kind: kind, reused (read from `average_sigma_path`), seconds (of this call) and computed_seconds (when
        computed).
    """
    work = col.work
    frames, timings = [], []
    for kind in AVERAGE_KINDS:
        t0 = time.perf_counter()
        path = average_sigma_path(col, profile, norm, sigma, kind, seed)
        reused = path.exists()

        def read(path: Path) -> pd.DataFrame:
            res = read_table(path)
            if len(res) != len(work.test):
                raise ValueError(f"{path} holds {len(res)} rows for {len(work.test)} test inputs: delete it")
            return res

        def compute() -> pd.DataFrame:
            theta = superset.average_theta(col.thetas(norm, sigma, ANCER), kind)
            thetas = np.broadcast_to(theta, work.test.x.shape).astype(np.float32)
            with torch_threads(JOB_THREADS):
                res = certify_all(work.models[norm, sigma], work.test.x, work.test.y, thetas, NOISE_OF[norm],
                                  profile.n0, col.setup.n, profile.alpha, work.num_classes, seed,
                                  device=profile.device)
            return res.assign(seconds=time.perf_counter() - t0)

        res = cached(path, compute, read, write_table)
        res["correct"] = check_correct(res["correct"])
        timings.append(dict(kind=kind, reused=reused, seconds=time.perf_counter() - t0,
                            computed_seconds=float(res["seconds"].iloc[0])))
        frames.append(res.drop(columns="seconds").assign(method=f"Average Σ ({kind})"))
    return pd.concat(frames, ignore_index=True), timings


def table6(cols: dict[str, Column], profile: Profile, seed: int = 0,
           workers: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ANCER Table 6 on every column and norm at `table6_sigma`.

    Certified accuracy (%) at the paper's radii, ACR and ACR~ of Fixed σ, Isotropic DD, ANCER (notebook 03's final
    certificates) and the two Average Σ (`average_sigma_results`, one (column, norm) per task in up to `workers`
    processes; the result does not depend on `workers`). On a GPU `profile.device` the jobs run in this process
    (`parallel.device_workers`); when every Average Σ table is kept, they are read in this process.

    Parameters
    ----------
    cols : dict of str to image_study.Column
        Notebook 03's columns by name.
    profile : runs.profiles.Profile
        Its n0, alpha and device certify the Average Σ.
    seed : int, default 0
        The certification seed.
    workers : int, optional
        The most worker processes (default: `parallel.device_workers`'s).

    Returns
    -------
    table : pandas.DataFrame
        Columns column, norm, sigma, method, the radii of each column's paper dataset ("0", "0.25", ..., NaN where a
        column does not use a radius), acr, acr_proxy; see `table6_rows`.
    timings : pandas.DataFrame
        The Average Σ timings: columns column, norm, kind, reused, seconds, computed_seconds.
    """
    workers = device_workers(profile.device, workers)
    jobs = [(name, norm, table6_sigma(col, norm)) for name, col in cols.items() for norm in NORMS
            if sigmas_of(col.setup)[norm]]
    if all(average_sigma_path(cols[name], profile, norm, sigma, kind, seed).exists()
           for name, norm, sigma in jobs for kind in AVERAGE_KINDS):
        workers = 1  # every table is kept: reading them needs no worker processes
    with stage(CERTIFY):
        averaged = map_ordered(average_sigma_results, [(cols[name], profile, norm, sigma, seed)
                                                       for name, norm, sigma in jobs], workers)
    out, timings = [], []
    for (name, norm, sigma), (avg, times) in zip(jobs, averaged):
        r = cols[name].results
        ours = r[(r.norm == norm) & (r.sigma == sigma)].assign(method=lambda d: d.method.map(METHOD_NAMES))
        both = pd.concat([ours, avg], ignore_index=True)
        t = summary_table(both, PAPER_RADII[cols[name].setup.column][norm], ["method"])
        out.append(t.assign(column=name, norm=norm, sigma=sigma))
        timings += [dict(column=name, norm=norm, **tm) for tm in times]
    t = pd.concat(out, ignore_index=True)
    radii = sorted({c for c in t.columns if c not in ("column", "norm", "sigma", "method", "acr", "acr_proxy")}, key=float)
    return t[["column", "norm", "sigma", "method", *radii, "acr", "acr_proxy"]], pd.DataFrame(timings)


def table6_rows(table: pd.DataFrame, column: str, norm: str) -> pd.DataFrame:
    """One (column, norm) block of `table6`, indexed by method, with only the radii that column uses.

    Parameters
    ----------
    table : pandas.DataFrame
        The table of `table6` (columns column, norm, sigma, method, radii..., acr, acr_proxy).
    column : str
        A column's name.
    norm : str
        "l2" or "l1".

    Returns
    -------
    pandas.DataFrame
        Indexed by method, with the radii the column uses, acr and acr_proxy.
    """
    t = table[(table.column == column) & (table.norm == norm)]
    if t.empty:
        raise ValueError(f"table has no rows for column={column!r}, norm={norm!r}")
    return t.drop(columns=["column", "norm", "sigma"]).set_index("method").dropna(axis=1, how="all")


def paper_table6() -> pd.DataFrame:
    """ANCER Table 6 (SmoothAdv, CIFAR-10, σ = 1.0) as printed, in the layout of `table6`.

    Returns
    -------
    pandas.DataFrame
        One row per method (σ and Σ written as symbols), with the certified accuracy (%) at each ℓ2 radius
        (columns "0", "0.25", ...), acr and acr_proxy.
    """
    p = load_table("ancer_table6")
    col = np.where(p.metric == "certified_accuracy", p.radius.map(lambda r: f"{r:g}"), p.metric)
    out = p.assign(col=col).pivot_table(index="method", columns="col", values="value", sort=False)
    radii = sorted((c for c in out.columns if c not in ("acr", "acr_proxy")), key=float)
    out = out[[*radii, "acr", "acr_proxy"]]
    out.index = out.index.str.replace("sigma", "σ").str.replace("Sigma", "Σ")
    return out


# -- Figure 14 and claim C5 -------------------------------------------------------------------------
@dataclass(frozen=True)
class GapFactors:
    """ANCER App. G.3 (Figure 14): ANCER's and Isotropic DD's ℓ2 radii split into a σ-factor and a gap factor.

    ANCER's ℓ2 radius is min_i σᵢˣ · r(x, Σˣ) and Isotropic DD's σˣ · r(x, σˣ), with r CERTIFY's gap (before the
    memory). The arrays hold the m test inputs where both methods certify (gap > 0).

    Parameters
    ----------
    sigma_iso : numpy.ndarray, shape (m,)
        Isotropic DD's σˣ.
    sigma_min_ancer : numpy.ndarray, shape (m,)
        ANCER's min_i σᵢˣ.
    gap_iso : numpy.ndarray, shape (m,)
        Isotropic DD's gap r(x, σˣ).
    gap_ancer : numpy.ndarray, shape (m,)
        ANCER's gap r(x, Σˣ).
    inputs : int
        The test inputs considered, before keeping the m that both certify.
    """
    sigma_iso: np.ndarray
    sigma_min_ancer: np.ndarray
    gap_iso: np.ndarray
    gap_ancer: np.ndarray
    inputs: int  # test inputs considered (before keeping the m that both certify)

    @property
    def sigma_ratio(self) -> float:
        """median min σ_ANCER / median σ_Iso: the σ-factor's share of ANCER's gain.

        Returns
        -------
        float
        """
        return float(np.median(self.sigma_min_ancer) / np.median(self.sigma_iso))

    @property
    def gap_ratio(self) -> float:
        """median r(x, Σˣ) / median r(x, σˣ): the gap factor's share of ANCER's gain.

        Returns
        -------
        float
        """
        return float(np.median(self.gap_ancer) / np.median(self.gap_iso))

    @property
    def c5(self) -> bool:
        """Claim C5 (ANCER App. G.3): the gap is the larger factor of ANCER's ℓ2 gain.

        ANCER's gap is larger than Isotropic DD's and is the larger of the two factors of its ℓ2 gain (medians, as
        the vertical lines of Figure 14): `gap_ratio` > max(1, `sigma_ratio`).

        Returns
        -------
        bool
        """
        return self.gap_ratio > max(1.0, self.sigma_ratio)


def gap_factors(iso_theta: np.ndarray, iso_gap: np.ndarray, ancer_theta: np.ndarray,
                ancer_gap: np.ndarray) -> GapFactors:
    """`GapFactors` (ANCER App. G.3, Figure 14) of Isotropic DD and ANCER on the same N inputs.

    Inputs where either method abstains (gap <= 0, or NaN) are left out.

    Parameters
    ----------
    iso_theta : numpy.ndarray, shape (N, *input_shape)
        Isotropic DD's per-input parameters; isotropic (one σ per input).
    iso_gap : numpy.ndarray, shape (N,)
        Isotropic DD's CERTIFY gaps.
    ancer_theta : numpy.ndarray, shape (N, *input_shape)
        ANCER's per-input parameters, of the shape of `iso_theta`.
    ancer_gap : numpy.ndarray, shape (N,)
        ANCER's CERTIFY gaps.

    Returns
    -------
    GapFactors
        Over the m inputs both certify; at least one input must be.
    """
    ti = np.asarray(iso_theta, np.float64).reshape(len(iso_theta), -1)
    ta = np.asarray(ancer_theta, np.float64).reshape(len(ancer_theta), -1)
    gi, ga = np.asarray(iso_gap, np.float64).reshape(-1), np.asarray(ancer_gap, np.float64).reshape(-1)
    if not (len(ti) == len(ta) == len(gi) == len(ga)) or ti.shape != ta.shape:
        raise ValueError(f"iso_theta {ti.shape}, iso_gap {gi.shape}, ancer_theta {ta.shape} and ancer_gap "
                         f"{ga.shape} must describe the same N inputs")
    if not np.allclose(ti, ti[:, :1]):
        raise ValueError("iso_theta must be isotropic (one σ per input)")
    both = (np.nan_to_num(gi) > 0) & (np.nan_to_num(ga) > 0)
    if not both.any():
        raise ValueError("no input is certified by both methods (every gap is <= 0)")
    return GapFactors(ti[both, 0], ta[both].min(axis=1), gi[both], ga[both], len(gi))


def column_gap_factors(col: Column, sigma: float = GAP_SIGMA, norm: str = "l2") -> GapFactors:
    """ANCER Figure 14's factors (`gap_factors`) for one column: notebook 03's ℓ2 runs at `sigma`.

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column, with its Isotropic DD and ANCER runs at (`norm`, `sigma`).
    sigma : float, default `GAP_SIGMA`
        The ℓ2 σ (App. G.3: 0.25).
    norm : str, default "l2"
        Must be "l2": the σ-factor / gap split is App. G.3's ℓ2 certificate.

    Returns
    -------
    GapFactors
    """
    if norm != "l2":
        raise ValueError(f"the σ-factor / gap split is App. G.3's ℓ2 certificate; norm must be 'l2', got {norm!r}")
    return gap_factors(col.thetas(norm, sigma, ISOTROPIC), col.rows(norm, sigma, ISOTROPIC).gap.to_numpy(),
                       col.thetas(norm, sigma, ANCER), col.rows(norm, sigma, ANCER).gap.to_numpy())


# -- Figures 15 and 16 ------------------------------------------------------------------------------
def spreads(cols: dict[str, Column], sigma: float = SPREAD_SIGMA) -> dict[str, np.ndarray]:
    """ANCER Figure 16: max σᵢ / min σᵢ of ANCER's ℓ2 parameters for every test input of every column.

    Parameters
    ----------
    cols : dict of str to image_study.Column
        Notebook 03's columns by name, each with ANCER's ℓ2 run at `sigma`.
    sigma : float, default `SPREAD_SIGMA`
        The initial ℓ2 σ (App. H: 1.0).

    Returns
    -------
    dict of str to numpy.ndarray
        Per column, the spread of each test input, shape (N,) in test order (`superset.anisotropy`).
    """
    return {name: superset.anisotropy(col.thetas("l2", sigma, ANCER)) for name, col in cols.items()}


@dataclass(frozen=True)
class SigmaMaps:
    """ANCER Figure 15 for one column: a few test inputs with Isotropic DD's σ and ANCER's per-pixel σ.

    Parameters
    ----------
    column : str
        The column's name.
    index : numpy.ndarray, shape (k,)
        The inputs' test-set indices.
    x : numpy.ndarray, shape (k, H, W)
        The test inputs (first channel).
    sigma_iso : numpy.ndarray, shape (k,)
        Isotropic DD's σ per input.
    sigma_ancer : numpy.ndarray, shape (k, H, W)
        ANCER's per-pixel σ (first channel).
    """
    column: str
    index: np.ndarray
    x: np.ndarray
    sigma_iso: np.ndarray
    sigma_ancer: np.ndarray


def sigma_maps(col: Column, sigma: float = GAP_SIGMA, picks: int = 3) -> SigmaMaps:
    """ANCER Figure 15: `picks` test inputs spread evenly over the test set, with their ℓ2 parameters at `sigma`.

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column, with its Isotropic DD and ANCER ℓ2 runs at `sigma`.
    sigma : float, default `GAP_SIGMA`
        The ℓ2 σ.
    picks : int, default 3
        How many inputs: 1 to the number of test inputs.

    Returns
    -------
    SigmaMaps
        With k = `picks`.
    """
    x = col.work.test.x
    if not 1 <= picks <= len(x):
        raise ValueError(f"picks must be in 1..{len(x)} (the test inputs), got {picks}")
    i = np.linspace(0, len(x) - 1, picks).astype(int)
    iso, anc = col.thetas("l2", sigma, ISOTROPIC), col.thetas("l2", sigma, ANCER)
    return SigmaMaps(col.setup.name, np.asarray(col.work.test.index)[i], x[i, 0].numpy(),
                     iso[i].reshape(picks, -1)[:, 0], anc[i, 0])


def texture(thetas: np.ndarray, x: np.ndarray) -> tuple[float, float, float, float]:
    """Figure 15's maps measured: how ANCER's per-pixel σ follows the object and how smooth it is between neighbours.

    Parameters
    ----------
    thetas : numpy.ndarray, shape (N, C, H, W)
        The per-pixel σ of N test inputs, finite and > 0.
    x : numpy.ndarray, shape (N, C, H, W)
        The inputs, in [0, 1].

    Returns
    -------
    background_ratio : float
        The median over the inputs of (median σ on the background pixels, x = 0) / (median σ on the object's pixels,
        x >= 1/2); NaN when no input has both.
    neighbour_ratio : float
        The median over the inputs of the median, over pairs of adjacent pixels (along H and W), of the larger σ over
        the smaller: 1 for a smooth map.
    neighbour_corr : float
        The mean over the inputs of the correlation of log σ between adjacent pixels (NaN for a constant map): near 1
        for a smooth map, near 0 for speckle.
    largest : float
        The largest σ.
    """
    t, x = np.asarray(thetas, np.float64), np.asarray(x, np.float64)
    if t.ndim != 4 or t.shape != x.shape or t.shape[2] < 2 or t.shape[3] < 2:
        raise ValueError(f"thetas and x must both have shape (N, C, H, W) with H, W >= 2, got {t.shape} and {x.shape}")
    if not (np.isfinite(t).all() and (t > 0).all()):
        raise ValueError("thetas must be finite and > 0")
    log = np.log(t)
    back, ratio, corr = [], [], []
    for lt, xi in zip(log, x):
        bg, obj = xi <= 0.0, xi >= 0.5
        if bg.any() and obj.any():
            back.append(np.exp(np.median(lt[bg]) - np.median(lt[obj])))
        a = np.concatenate([lt[:, :, :-1].ravel(), lt[:, :-1, :].ravel()])
        b = np.concatenate([lt[:, :, 1:].ravel(), lt[:, 1:, :].ravel()])
        ratio.append(np.exp(np.median(np.abs(a - b))))
        corr.append(np.corrcoef(a, b)[0, 1] if a.std() > 0 and b.std() > 0 else np.nan)
    return (float(np.median(back)) if back else float("nan"), float(np.median(ratio)),
            float(np.nanmean(corr)) if not np.isnan(corr).all() else float("nan"), float(t.max()))


@dataclass(frozen=True)
class SigmaTexture:
    """ANCER's ℓ2 maps of one column and step measured by `texture`.

    Parameters
    ----------
    column : str
        The column's name.
    role : str
        "chosen" (notebook 03's step) or "grid's largest" (the largest step of the original grid).
    step : float
        ANCER's step, × θ.
    background_ratio, neighbour_ratio, neighbour_corr, largest : float
        As `texture` returns them.
    """
    column: str
    role: str
    step: float
    background_ratio: float
    neighbour_ratio: float
    neighbour_corr: float
    largest: float


def sigma_textures(cols: dict[str, Column], profile: Profile, seed: int = 0,
                   sigma: float = GAP_SIGMA) -> list[SigmaTexture]:
    """Figure 15's maps measured on every test input (`texture`): ANCER's ℓ2 parameters at `sigma` with the chosen
    step, and, where notebook 03's sensitivity run of the original grid's largest step is in the logs (it runs at
    each column's selection σ), with that step.

    Parameters
    ----------
    cols : dict of str to image_study.Column
        Notebook 03's columns.
    profile : runs.profiles.Profile
        The profile the logs were written with.
    seed : int, default 0
        The runs' seed.
    sigma : float, default `GAP_SIGMA`
        The ℓ2 σ.

    Returns
    -------
    list of SigmaTexture
        Per column, the grid's largest step (when in the logs and not the chosen one) before the chosen step.
    """
    out = []
    th = theta_of("l2", sigma)
    for name, col in cols.items():
        x = col.work.test.x.numpy()
        chosen = col.chosen["l2"]
        step = float(chosen.of(ANCER).lr / th)
        top = float(max(col.setup.ancer_lr_grid))
        if not np.isclose(top, step):
            folder = run_folder(col.work, col.setup, profile, chosen.changed(ANCER, lr=top * th), col.results_root,
                                "l2", sigma, ANCER, seed)
            if (folder / "final.tsv").exists():
                out.append(SigmaTexture(name, "grid's largest", top, *texture(load_array(folder / "theta.npy"), x)))
        out.append(SigmaTexture(name, "chosen", step, *texture(col.thetas("l2", sigma, ANCER), x)))
    return out


# -- Figure 5 ---------------------------------------------------------------------------------------
def safe_direction(scales: np.ndarray, level: float = SAFE_LEVEL, seed: int = 0) -> np.ndarray:
    """ANCER Figure 5 (App. A.2): a perturbation of given ‖·‖_{Σ,2} norm, largest where the semi-axes are.

    δ = c · s² ⊙ z, with z a random sign pattern, s the ellipsoid's semi-axes and c such that
    ‖δ‖_{Σ,2} = ‖δ / s‖₂ = level: δ is inside the region for level <= 1.

    Parameters
    ----------
    scales : numpy.ndarray, any shape
        The semi-axes s; non-empty, finite and > 0.
    level : float, default `SAFE_LEVEL`
        The norm ‖δ‖_{Σ,2}; > 0.
    seed : int, default 0
        Seed of the sign pattern.

    Returns
    -------
    numpy.ndarray, shape of `scales`
        δ, in float64.
    """
    s = np.asarray(scales, np.float64)
    if s.size == 0 or not np.isfinite(s).all() or (s <= 0).any():
        raise ValueError("scales must be finite and > 0")
    if not level > 0:
        raise ValueError(f"level must be > 0, got {level!r}")
    z = np.random.default_rng(seed).choice([-1.0, 1.0], size=s.size).reshape(s.shape)
    delta = s ** 2 * z
    return delta * (level / float(region_norm(delta.reshape(-1), s.reshape(-1), "l2")))


@dataclass(frozen=True)
class SafePerturbation:
    """ANCER Figure 5 (App. A.2): a test input, the perturbation δ, the PREDICT at x + δ and the checks.

    Parameters
    ----------
    column : str
        The column's name.
    test_index : int
        The input's test-set index.
    label : int
        Its true label.
    x : numpy.ndarray, shape (C, H, W)
        The test input.
    delta : numpy.ndarray, shape (C, H, W)
        The perturbation δ (`safe_direction`).
    prediction : int
        PREDICT at x + δ with ANCER's Θ and `samples` samples.
    certified : int
        ANCER's certified prediction at x.
    samples : int
        The samples of that PREDICT.
    norm_delta : float
        ‖δ‖₂.
    region_norm : float
        ‖δ‖_{Σ,2} (<= 1: inside ANCER's ellipsoid).
    iso_radius : float
        Isotropic DD's final ℓ2 radius.
    ancer_radius : float
        ANCER's final ℓ2 radius (the largest ℓ2 ball inside its ellipsoid).
    """
    column: str
    test_index: int
    label: int
    x: np.ndarray
    delta: np.ndarray
    prediction: int            # PREDICT at x + δ with ANCER's Θ and `samples` samples
    certified: int             # ANCER's certified prediction at x
    samples: int
    norm_delta: float          # ‖δ‖₂
    region_norm: float         # ‖δ‖_{Σ,2} (<= 1: inside ANCER's ellipsoid)
    iso_radius: float          # Isotropic DD's final ℓ2 radius
    ancer_radius: float        # ANCER's final ℓ2 radius (the largest ℓ2 ball inside its ellipsoid)

    @property
    def inside(self) -> bool:
        """Whether δ is inside ANCER's ellipsoid: ‖δ‖_{Σ,2} <= 1.

        Returns
        -------
        bool
        """
        return self.region_norm <= 1.0

    @property
    def outside(self) -> bool:
        """Whether δ is outside Isotropic DD's certified ball: ‖δ‖₂ > its final ℓ2 radius.

        Returns
        -------
        bool
        """
        return self.norm_delta > self.iso_radius

    @property
    def holds(self) -> bool:
        """Figure 5's claim: δ is inside ANCER's region, outside Isotropic DD's ball, and x + δ keeps the prediction.

        Returns
        -------
        bool
        """
        return self.inside and self.outside and self.prediction == self.certified


def ancer_semi_axes(col: Column, test_index: int, sigma: float = GAP_SIGMA) -> tuple[int, np.ndarray, np.ndarray]:
    """ANCER's ℓ2 parameters Θ and semi-axes s = Θ · gap at one test input (CERTIFY's ellipsoid, the certified region
    when the memory kept it).

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column, with ANCER's ℓ2 run at `sigma`.
    test_index : int
        The input's test-set index; exactly one of the column's test inputs.
    sigma : float, default `GAP_SIGMA`
        The ℓ2 σ.

    Returns
    -------
    i : int
        The input's position in the run (and in `col.work.test`).
    theta : numpy.ndarray, shape of one input
        Θ as the run stored it.
    s : numpy.ndarray of float64, shape of one input
        The semi-axes.
    """
    where = np.flatnonzero(np.asarray(col.work.test.index) == test_index)
    if len(where) != 1:
        raise ValueError(f"test_index {test_index} is not one test input of column {col.setup.name!r}")
    i = int(where[0])
    theta = col.thetas("l2", sigma, ANCER)[i]
    return i, theta, theta.astype(np.float64) * float(col.rows("l2", sigma, ANCER).gap[i])


def safe_perturbation(col: Column, profile: Profile, seed: int = 0, sigma: float = GAP_SIGMA,
                      level: float = SAFE_LEVEL, samples: int = SAFE_N) -> SafePerturbation:
    """ANCER Figure 5 (App. A.2) on the first test input both Isotropic DD and ANCER certify correctly.

    The input is the first one certified correctly by both methods (ℓ2, `sigma`, final regions) with ANCER's region
    kept by the memory (so its semi-axes are CERTIFY's): δ from `safe_direction`, and a fresh PREDICT of the
    smoothed classifier (ANCER's Θ) at x + δ, on `profile.device` (the model is moved there).

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column, with its Isotropic DD and ANCER ℓ2 runs at `sigma`.
    profile : runs.profiles.Profile
        Its alpha (of PREDICT) and device are used.
    seed : int, default 0
        Seed of δ's signs and of PREDICT's noise.
    sigma : float, default `GAP_SIGMA`
        The ℓ2 σ.
    level : float, default `SAFE_LEVEL`
        ‖δ‖_{Σ,2}.
    samples : int, default `SAFE_N`
        PREDICT's samples.

    Returns
    -------
    SafePerturbation
    """
    iso, anc = col.rows("l2", sigma, ISOTROPIC), col.rows("l2", sigma, ANCER)
    ok = np.flatnonzero(iso.correct.to_numpy(bool) & anc.correct.to_numpy(bool) & (anc.status == "kept").to_numpy())
    if not len(ok):
        raise ValueError(f"column {col.setup.name!r}: no test input is certified correctly by both methods at σ = {sigma}")
    i, theta, s = ancer_semi_axes(col, int(col.work.test.index[int(ok[0])]), sigma)
    delta = safe_direction(s, level, seed)
    x = col.work.test.x[i]
    pred = _predict_at(col, sigma, x, delta, theta, profile, seed, samples)
    return SafePerturbation(col.setup.name, int(col.work.test.index[i]), int(anc.label[i]), x.numpy(), delta,
                            int(pred), int(anc.predict[i]), samples, float(np.linalg.norm(delta)),
                            float(region_norm(delta.reshape(-1), s.reshape(-1), "l2")),
                            float(iso.radius[i]), float(anc.radius[i]))


def _predict_at(col: Column, sigma: float, x: torch.Tensor, delta: np.ndarray, theta: np.ndarray, profile: Profile,
                seed: int, samples: int) -> int:
    """PREDICT of the ℓ2 model at `sigma` smoothed with ANCER's Θ = `theta`, at x + δ (which may leave [0, 1]^d)."""
    model = col.work.models["l2", sigma]
    # x + δ is a point of the certified region, which may leave the pixel box
    smooth = Smooth(model, col.work.num_classes, tuple(x.shape), "gaussian", seed=seed,
                    device=devices.place(model, profile.device), domain=None)
    return int(smooth.predict(x + torch.from_numpy(np.asarray(delta, np.float32)), theta, samples, profile.alpha))


@dataclass(frozen=True)
class SmallPerturbation:
    """ANCER Figure 5 at a small change: the largest δ that moves no pixel by more than `cap`, inside ANCER's ℓ2
    region and the image domain, at Figure 5's input, and the PREDICT at x + δ.

    Parameters
    ----------
    column : str
        The column's name.
    test_index : int
        The input's test-set index (Figure 5's, `safe_perturbation`).
    x : numpy.ndarray, shape (C, H, W)
        The test input.
    delta : numpy.ndarray, shape (C, H, W)
        δ (`image_domain.largest_in_domain` with `cap`).
    cap : float
        The ℓ∞ budget: no pixel moves by more than it.
    prediction : int
        PREDICT at x + δ with ANCER's Θ and `samples` samples.
    certified : int
        ANCER's certified prediction at x.
    samples : int
        The samples of that PREDICT.
    norm_delta : float
        ‖δ‖₂.
    norm_inf : float
        ‖δ‖∞.
    region_norm : float
        ‖δ‖_{Σ,2}.
    iso_radius : float
        Isotropic DD's final ℓ2 radius.
    """
    column: str
    test_index: int
    x: np.ndarray
    delta: np.ndarray
    cap: float
    prediction: int
    certified: int
    samples: int
    norm_delta: float
    norm_inf: float
    region_norm: float
    iso_radius: float

    @property
    def holds(self) -> bool:
        """ANCER Figure 5's point at this change: within the ℓ∞ budget, inside ANCER's region (‖δ‖_{Σ,2} <= 1),
        outside Isotropic DD's ball (‖δ‖₂ > its radius), and x + δ keeps the certified prediction.

        Returns
        -------
        bool
        """
        return (self.norm_inf <= self.cap * (1 + 1e-9) and self.region_norm <= 1.0 and self.norm_delta > self.iso_radius
                and self.prediction == self.certified)


def small_perturbation(col: Column, safe: SafePerturbation, profile: Profile, cap: float = IMPERCEPTIBLE,
                       seed: int = 0, sigma: float = GAP_SIGMA, level: float = SAFE_LEVEL,
                       samples: int = SAFE_N) -> SmallPerturbation:
    """ANCER Figure 5 (App. A.2) at a small change: at Figure 5's input, the largest change in ℓ2 that moves no pixel by
    more than `cap` and stays inside both ANCER's region (at `level`) and [0, 1]^d, checked by a fresh PREDICT.

    If its ‖δ‖₂ exceeds Isotropic DD's radius, ANCER certifies a change within the ℓ∞ budget that Isotropic DD's ball
    does not: the paper's picture, drawn where it holds.

    Parameters
    ----------
    col : image_study.Column
        The column `safe` was drawn from.
    safe : SafePerturbation
        Figure 5's perturbation (`safe_perturbation`); its input is used.
    profile : runs.profiles.Profile
        Its alpha (of PREDICT) and device are used.
    cap : float, default `IMPERCEPTIBLE`
        The ℓ∞ budget, > 0.
    seed : int, default 0
        Seed of PREDICT's noise.
    sigma : float, default `GAP_SIGMA`
        The ℓ2 σ `safe` was drawn at.
    level : float, default `SAFE_LEVEL`
        ‖δ‖_{Σ,2} at most.
    samples : int, default `SAFE_N`
        PREDICT's samples.

    Returns
    -------
    SmallPerturbation
    """
    i, theta, s = ancer_semi_axes(col, safe.test_index, sigma)
    x = col.work.test.x[i]
    delta = largest_in_domain(x.numpy(), s, level, cap)
    pred = _predict_at(col, sigma, x, delta, theta, profile, seed, samples)
    return SmallPerturbation(col.setup.name, safe.test_index, x.numpy(), delta, float(cap), pred, safe.certified,
                             samples, float(np.linalg.norm(delta)), float(np.abs(delta).max()),
                             float(region_norm(delta.reshape(-1), s.reshape(-1), "l2")), safe.iso_radius)


@dataclass(frozen=True)
class DomainMargin:
    """Claim C3's margin on one column and norm, and what of it concerns changes of an image.

    Parameters
    ----------
    column : str
        The column's name.
    norm : str
        "l2" or "l1".
    margin : float
        ANCER's ACR̃ over Isotropic DD's, minus 1, best over σ (notebook 03's C3 margin).
    in_range : float
        The same with every semi-axis of both methods' final regions counted only up to the far edge of the pixel
        range (`image_domain.semi_axes_in_range`).
    linf : float
        ANCER's average certified ℓ∞ radius (the largest cube inside each final region, `image_domain.linf_radius`)
        over Isotropic DD's, minus 1, best over σ.
    """
    column: str
    norm: str
    margin: float
    in_range: float
    linf: float


def _run_measures(col: Column, norm: str, sigma: float, method: str) -> tuple[float, float, float]:
    """ACR̃ of one run on its final regions, ACR̃ with the semi-axes counted within the pixel range, and the average
    certified ℓ∞ radius."""
    rows = col.rows(norm, sigma, method)
    theta = col.thetas(norm, sigma, method).reshape(len(rows), -1).astype(np.float64)
    x = col.work.test.x.numpy().reshape(len(rows), -1).astype(np.float64)
    proxy = rows.radius_proxy.to_numpy(np.float64)
    correct = rows.correct.to_numpy(bool)
    in_range, linf = np.zeros(len(rows)), np.zeros(len(rows))
    for i in np.flatnonzero(correct & (proxy > 0)):
        # the final region's semi-axes: Θ's shape, scaled so that their geometric mean is the final proxy radius
        s = theta[i] * (proxy[i] / np.exp(np.log(theta[i]).mean()))
        in_range[i] = np.exp(np.log(semi_axes_in_range(x[i], s)).mean())
        linf[i] = linf_radius(s, norm)
    return tuple(average_certified_radius(v, correct) for v in (proxy, in_range, linf))


def domain_margins(cols: dict[str, Column]) -> list[DomainMargin]:
    """Claim C3 (ANCER's ACR̃ > Isotropic DD's) on every column and norm, and what of it concerns changes of an image.

    Each measure is averaged over the test inputs (0 where the prediction is wrong or abstains) and taken best over
    σ for each method, as notebook 03's tables: ACR̃; ACR̃ with every semi-axis of the final regions (Isotropic DD's
    radius, ANCER's θ · gap after the memory) counted only up to the far edge of [0, 1]
    (`image_domain.semi_axes_in_range`); and the certified ℓ∞ radius (`image_domain.linf_radius`).

    Parameters
    ----------
    cols : dict of str to image_study.Column
        Notebook 03's columns.

    Returns
    -------
    list of DomainMargin
        One per (column, norm) with results, in the columns' order and `NORMS`' order.
    """
    out = []
    for name, col in cols.items():
        for norm in NORMS:
            sigmas = sorted(col.results[col.results.norm == norm].sigma.unique())
            if not sigmas:
                continue
            best = {method: np.max([_run_measures(col, norm, sigma, method) for sigma in sigmas], axis=0)
                    for method in (ISOTROPIC, ANCER)}
            gain = [float(a / i - 1) if i > 0 else float("nan") for a, i in zip(best[ANCER], best[ISOTROPIC])]
            out.append(DomainMargin(name, norm, *gain))
    return out


# -- Figure 4 ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PlaneSlice:
    """ANCER Figure 4: f^y on the plane x + a u + b v (a, b in [-half, half]) and the certified regions cut by it.

    Parameters
    ----------
    name : str
        "(ν1, ν2)" or "(ν1, νn)".
    axes : tuple of (str, str)
        The axis labels, e.g. ("ν1", "ν2").
    a, b : numpy.ndarray, shape (R, R)
        The grids of plane coordinates.
    f : numpy.ndarray, shape (R, R)
        The softmax probability of y on the grid.
    half : float
        The half-width of the plotted square.
    iso_radius : float
        Isotropic DD's ℓ2 radius (a circle in every plane).
    ellipse : numpy.ndarray, shape (num, 2)
        ANCER's ellipsoid cut by the plane (`superset.ellipsoid_slice`).
    """
    name: str                  # "(ν1, ν2)" or "(ν1, νn)"
    axes: tuple[str, str]
    a: np.ndarray              # (R, R) grids
    b: np.ndarray
    f: np.ndarray              # (R, R) softmax probability of y
    half: float
    iso_radius: float          # Isotropic DD's ℓ2 radius (a circle in every plane)
    ellipse: np.ndarray        # (num, 2): ANCER's ellipsoid cut by the plane (`superset.ellipsoid_slice`)


@dataclass(frozen=True)
class HessianLandscape:
    """ANCER Figure 4 (App. A.1): the softplus model's landscape around one test input along Hessian eigenvectors.

    The eigenvectors are those of the input Hessian of f^y, ordered by |λ|, with the ranks that show why a ReLU
    model cannot be used.

    Parameters
    ----------
    column : str
        The softplus column, e.g. "mnist_softplus".
    test_index : int
        The input's test-set index.
    label : int
        Its true label y.
    eigenvalues : numpy.ndarray, shape (n,)
        The eigenvalues of the Hessian of f^y, in decreasing |λ|.
    rank_smooth : int
        The numerical rank of the softplus model's Hessian.
    rank_relu : int
        The numerical rank of the ReLU model's Hessian.
    num_classes : int
        The number of classes.
    iso_radius : float
        Isotropic DD's ℓ2 radius.
    ancer_axes : numpy.ndarray, shape (n,)
        ANCER's semi-axes before the memory.
    planes : tuple of PlaneSlice
        The planes (ν1, ν2) and (ν1, νn).
    """
    column: str                # the softplus column, e.g. "mnist_softplus"
    test_index: int
    label: int
    eigenvalues: np.ndarray    # (n,), the Hessian of f^y's, in decreasing |λ|
    rank_smooth: int
    rank_relu: int
    num_classes: int
    iso_radius: float
    ancer_axes: np.ndarray     # (n,) ANCER's semi-axes before the memory
    planes: tuple[PlaneSlice, ...]


def smooth_setup(col: Column, sigma: float = GAP_SIGMA):
    """The column's setup with the softplus CNN (`setups.build_model("cnn_softplus")`) at one ℓ2 σ (ANCER App. A.1).

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column.
    sigma : float, default `GAP_SIGMA`
        The only ℓ2 σ of the setup (it certifies no ℓ1 σ).

    Returns
    -------
    runs.setups.ImageSetup
        Named "<column>_softplus", with model "cnn_softplus".
    """
    return dataclasses.replace(col.setup, name=f"{col.setup.name}_softplus", model="cnn_softplus",
                               sigmas_l2=(sigma,), sigmas_l1=())


def hessian_landscape(col: Column, profile: Profile, seed: int = 0, sigma: float = GAP_SIGMA,
                      resolution: int = 121, data_dir: str | Path = DATA_DIR) -> HessianLandscape:
    """ANCER Figure 4 (App. A.1): the landscape of f^y along the input Hessian's eigenvectors around one test input.

    The input is the first test input that the softplus base classifier classifies correctly and Isotropic DD and
    ANCER (optimized for the softplus CNN with the column's chosen step sizes) both certify correctly. The landscape
    is drawn along (ν1, ν2) and (ν1, νn), the eigenvectors of the Hessian of f^y
    (`hessian.input_hessian(of="probability")`, y the true label) with the largest two and the smallest |λ|
    (`eigen_directions(order="magnitude")`), as the paper orders them, with Isotropic DD's ball and ANCER's
    ellipsoid (before the memory) cut by each plane. The softplus model is trained once (on the CPU) and cached under
    data_dir/cache/<profile>/; the optimizations, CERTIFY, the Hessians and the landscape run on `profile.device`
    (both models are moved there).

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column (its ReLU ℓ2 model at `sigma` gives `rank_relu`).
    profile : runs.profiles.Profile
        Its name (the cache), n0, alpha and device are used.
    seed : int, default 0
        Seed of training, optimization and CERTIFY.
    sigma : float, default `GAP_SIGMA`
        The ℓ2 σ.
    resolution : int, default 121
        Grid points per axis of each plane (R).
    data_dir : str or Path, default `models.data.DATA_DIR`
        Where the data and the cached model lie.

    Returns
    -------
    HessianLandscape
    """
    setup = smooth_setup(col, sigma)
    dev = devices.resolve(profile.device)
    soft = prepare(setup, seed, data_dir, cache=profile.name, device=dev).models["l2", sigma]
    test = col.work.test
    smooth = Smooth(soft, col.work.num_classes, tuple(test.x.shape[1:]), "gaussian", seed=seed, device=dev)
    settings = settings_at(col.chosen["l2"], col.setup, "l2", sigma)
    for k in range(len(test)):
        x, y = test.x[k], int(test.y[k])
        th_iso = optimize_thetas(soft, x[None], "gaussian", sigma, ISOTROPIC, settings, seed, device=dev)[0]
        th_anc = optimize_thetas(soft, x[None], "gaussian", sigma, ANCER, settings, seed, isotropic=th_iso[None],
                                 device=dev)[0]
        cert: dict[str, Certificate] = {m: certify_input(smooth, x, th, k, profile.n0, col.setup.n, profile.alpha, seed)
                                        for m, th in ((ISOTROPIC, th_iso), (ANCER, th_anc))}
        with torch.no_grad(), eval_mode(soft):
            base = int(checked_logits(soft, x[None].to(dev)).argmax())
        if base == y and all(c.prediction == y for c in cert.values()):
            break
    else:
        raise ValueError(f"column {col.setup.name!r}: no test input is classified correctly by the softplus model "
                         "and certified correctly by both methods")
    h_soft = input_hessian(soft, x, y, device=dev, of=OF_PROBABILITY)
    h_relu = input_hessian(col.work.models["l2", sigma], x, y, device=dev, of=OF_PROBABILITY)
    eigval, eigvec = eigen_directions(h_soft, order=BY_MAGNITUDE)
    r_iso = float(th_iso.reshape(-1)[0]) * cert[ISOTROPIC].gap
    s_anc = th_anc.reshape(-1).astype(np.float64) * cert[ANCER].gap
    planes = []
    for name, axes, (u, v) in (("(ν1, ν2)", ("ν1", "ν2"), (eigvec[:, 0], eigvec[:, 1])),
                               ("(ν1, νn)", ("ν1", "νn"), (eigvec[:, 0], eigvec[:, -1]))):
        ellipse = superset.ellipsoid_slice(s_anc, u, v)
        half = 1.3 * max(r_iso, float(np.abs(ellipse).max()), 0.5)
        aa, bb, f = landscape(soft, x, y, u, v, half, resolution)
        planes.append(PlaneSlice(name, axes, aa, bb, f, half, r_iso, ellipse))
    return HessianLandscape(setup.name, int(test.index[k]), y, eigval, numerical_rank(h_soft), numerical_rank(h_relu),
                            col.work.num_classes, r_iso, s_anc, tuple(planes))


# -- the claims -------------------------------------------------------------------------------------
# -- the claims with their intervals ---------------------------------------------------------------------
#: the rows of `claim_effects`: claim label -> statement, oriented so that a positive effect is the claim
EFFECT_CLAIMS = {
    "C4/proxy": f"share of inputs where ANCER's proxy certificate is the best, minus {PAPER_PROXY_SHARE:.0f}% (App. F)",
    "C4/ℓp": "share of inputs where ANCER's ℓp certificate is the best, minus the paper's lowest share (Tables 4-5)",
    "C5": "median gap ratio ANCER / Isotropic DD minus max(1, median σ ratio) (App. G.3)",
    "C6/ACR~": "ANCER's ACR~ minus Average Σ (mean)'s (App. I, Table 6)",
    "C6/ACR": "Fixed σ's ACR minus Average Σ (mean)'s (App. I, Table 6)",
}


def best_share_values(results: pd.DataFrame, norm: str, column: str) -> np.ndarray:
    """Per test input, the fraction of its σ at which ANCER's certificate is the best (ANCER Tables 4-5).

    ANCER's `column` counts as best when it is at least both baselines' (`superset.per_input`), 0-0 ties counted
    as ANCER best, as `superset_table`'s pct_with_ties. The values' mean is Tables 4-5's pooled share (every input
    has every σ).

    Parameters
    ----------
    results : pandas.DataFrame
        Per-input rows (columns norm, sigma, idx, method, correct and `column`) of the methods fixed, isotropic and
        ancer.
    norm : str
        "l2" or "l1".
    column : str
        "radius" or "radius_proxy".

    Returns
    -------
    numpy.ndarray, shape (n,)
        In idx order.
    """
    wide = superset.per_input(results[results.norm == norm], column)
    best = (wide[ANCER] >= wide[list(superset.BASELINES)].max(axis=1)).astype(float)
    return best.groupby(level="idx").mean().sort_index().to_numpy()


def c5_effect(factors: GapFactors, key: int, seed: int = 0) -> Effect:
    """Claim C5's effect (ANCER App. G.3) gap_ratio - max(1, sigma_ratio) with its bootstrap interval.

    The interval is over the inputs both methods certify, the medians recomputed in every resample
    (`GapFactors.c5`).

    Parameters
    ----------
    factors : GapFactors
        The factors of one column and σ.
    key : int
        The claim's resampling key (`intervals.claim_key`).
    seed : int, default 0
        The bootstrap seed.

    Returns
    -------
    evaluation.intervals.Effect
    """
    si, sa, gi, ga = factors.sigma_iso, factors.sigma_min_ancer, factors.gap_iso, factors.gap_ancer

    def statistic(i: np.ndarray) -> float:
        return float(np.median(ga[i]) / np.median(gi[i]) - max(1.0, np.median(sa[i]) / np.median(si[i])))

    return bootstrap_effect(statistic, len(gi), seed=seed, key=key)


def claim_effects(cols: dict[str, Column], profile: Profile, seed: int = 0,
                  paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """ANCER App. F, G.3 and I's claims (`EFFECT_CLAIMS`) with bootstrap intervals over the test inputs.

    C4 per (column, norm), pooled over σ; C5 for ℓ2 at every σ of the column (App. G.3 shows σ = 0.25 only; the
    other σ are this companion's control); C6 at `table6_sigma`, Average Σ (mean) against ANCER's ACR~ and Fixed σ's
    ACR (`average_sigma_results`, read from its cache once `table6` has run).

    Parameters
    ----------
    cols : dict of str to image_study.Column
        Notebook 03's columns by name.
    profile : runs.profiles.Profile
        The profile of the Average Σ certificates.
    seed : int, default 0
        The bootstrap and certification seed.
    paper : pandas.DataFrame, optional
        `paper_shares()` (read when None); its lowest lp share is C4/ℓp's threshold.

    Returns
    -------
    pandas.DataFrame
        One row per (column, norm, claim, σ): columns column, norm, claim, sigma (a σ or "all"), effect (an
        `Effect`) and paper (the paper's threshold or number).
    """
    paper = paper_shares() if paper is None else paper
    lp_min = float(paper["lp"].min())
    rows = []
    for name, col in cols.items():
        for norm in NORMS:
            if not sigmas_of(col.setup)[norm]:
                continue
            for claim, column, threshold in (("C4/proxy", "radius_proxy", PAPER_PROXY_SHARE), ("C4/ℓp", "radius", lp_min)):
                e = threshold_effect(best_share_values(col.results, norm, column), threshold / 100.0, seed=seed,
                                     key=claim_key(f"05/{name}/{norm}/{claim}"))
                rows.append(dict(column=name, norm=norm, claim=claim, sigma="all", effect=e, paper=f"≥ {threshold:.0f}%"))
            if norm == "l2":
                for sigma in sigmas_of(col.setup)[norm]:
                    e = c5_effect(column_gap_factors(col, sigma), claim_key(f"05/{name}/{sigma:g}/C5"), seed)
                    rows.append(dict(column=name, norm=norm, claim="C5", sigma=sigma, effect=e,
                                     paper="gap larger, σ-factors alike (σ = 0.25)"))
            sigma = table6_sigma(col, norm)
            avg, _ = average_sigma_results(col, profile, norm, sigma, seed)
            mean = avg[avg.method == "Average Σ (mean)"].reset_index(drop=True)  # test order (`certify_all`'s rows)
            if len(mean) != len(col.work.test):
                raise ValueError(f"the Average Σ certificates of {name} {norm} hold {len(mean)} rows for "
                                 f"{len(col.work.test)} test inputs")
            mean = mean.assign(idx=np.asarray(col.work.test.index))
            for claim, method, column in (("C6/ACR~", ANCER, "radius_proxy"), ("C6/ACR", FIXED, "radius")):
                e = paired_effect(input_matrix([col.rows(norm, sigma, method)], column), input_matrix([mean], column),
                                  seed=seed, key=claim_key(f"05/{name}/{norm}/{claim}"))
                rows.append(dict(column=name, norm=norm, claim=claim, sigma=sigma, effect=e, paper=""))
    return pd.DataFrame(rows)


def extra_iterations_run(col: Column, profile: Profile, norm: str, sigma: float, seed: int = 0) -> pd.DataFrame:
    """ANCER App. G.3's control on one (column, norm, σ): Isotropic DD given ANCER's iterations as well.

    Isotropic DD runs its iterations plus ANCER's (its own validation-chosen step size and samples), so that
    its optimization budget equals ANCER's (which starts from Isotropic DD's result), certified exactly as notebook
    03 certifies (same model, N0, N, α, seed, per-input streams and memory) into its own run folder
    (`image_study.run_folder` keys it by the settings), resumable and reused.

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column.
    profile : runs.profiles.Profile
        Its n0, alpha, batch_size and device certify.
    norm : str
        "l2" or "l1".
    sigma : float
        The initial σ.
    seed : int, default 0
        The optimization and certification seed.

    Returns
    -------
    pandas.DataFrame
        The final per-input rows, those of `experiment.run_method` (idx, label, predict, radius, radius_proxy,
        correct, ..., status).
    """
    base = settings_at(col.chosen[norm], col.setup, norm, sigma)
    extra = base.changed(ISOTROPIC, iterations=base.of(ISOTROPIC).iterations + base.of(ANCER).iterations)
    work = col.work
    folder = run_folder(work, col.setup, profile, extra, col.results_root, norm, sigma, ISOTROPIC, seed)
    with torch_threads(JOB_THREADS):
        return run_method(work.models[norm, sigma], work.test.x, work.test.y, work.test.index, NOISE_OF[norm],
                          theta_of(norm, sigma), ISOTROPIC, extra, folder, profile.n0, col.setup.n, profile.alpha,
                          work.num_classes, batch_size=profile.batch_size, seed=seed, device=profile.device)


def extra_iterations_effects(cols: dict[str, Column], profile: Profile, seed: int = 0,
                             workers: int | None = None) -> pd.DataFrame:
    """ANCER App. G.3's control for claim C2: ANCER's gain is not a matter of more iterations.

    The paper: "Isotropic DD + 100 more iterations" does not close ANCER's gain. On every column, ℓ2, at
    `GAP_SIGMA` (the paper's σ) and at the column's largest σ: `extra_iterations_run` in up to `workers` processes
    (the results do not depend on them), then ANCER's ACR minus that of Isotropic DD with the extra iterations
    ("C2/control"), and the extra iterations' own gain over notebook 03's Isotropic DD ("extra iterations"), each
    a paired bootstrap effect over the test inputs.

    Parameters
    ----------
    cols : dict of str to image_study.Column
        Notebook 03's columns by name.
    profile : runs.profiles.Profile
        The profile that certifies.
    seed : int, default 0
        The optimization, certification and bootstrap seed.
    workers : int, optional
        The most worker processes (default: `parallel.device_workers`'s).

    Returns
    -------
    pandas.DataFrame
        One row per (column, σ, claim): columns column, sigma, claim, effect (an `Effect`) and the three ACRs
        acr_iso, acr_iso_extra, acr_ancer.
    """
    jobs = [(name, s) for name, col in cols.items() for s in sorted({GAP_SIGMA, max(sigmas_of(col.setup)["l2"])})
            if s in sigmas_of(col.setup)["l2"]]
    workers = device_workers(profile.device, workers)
    with stage(CERTIFY):
        runs = map_ordered(extra_iterations_run, [(cols[name], profile, "l2", s, seed) for name, s in jobs], workers)
    rows = []
    for (name, s), extra in zip(jobs, runs):
        col = cols[name]
        iso, anc = col.rows("l2", s, ISOTROPIC), col.rows("l2", s, ANCER)
        acr = {k: average_certified_radius(r.radius, r.correct) for k, r in (("acr_iso", iso), ("acr_iso_extra", extra),
                                                                             ("acr_ancer", anc))}
        for claim, a, b in (("C2/control", anc, extra), ("extra iterations", extra, iso)):
            e = paired_effect(input_matrix([a], "radius"), input_matrix([b], "radius"), seed=seed,
                              key=claim_key(f"05/{name}/{s:g}/{claim}"))
            rows.append(dict(column=name, sigma=s, claim=claim, effect=e, **acr))
    return pd.DataFrame(rows)


def _median(values: np.ndarray) -> float:
    """The median, NaN for no values."""
    v = np.asarray(values, np.float64)
    return float(np.median(v)) if v.size else float("nan")


def abstention_flips(col: Column, norm: str) -> pd.DataFrame:
    """The MNIST anomaly: why ANCER's CERTIFY abstains less than Isotropic DD's.

    ANCER starts from Isotropic DD's σ and only grows it (ANCER App. C's projection onto Θ >= σ_iso), yet it
    abstains less. θ is σ for ℓ2 and the half-width λ for ℓ1; abstentions and radii are CERTIFY's, before the
    memory.

    Parameters
    ----------
    col : image_study.Column
        Notebook 03's column, with its Fixed σ, Isotropic DD and ANCER runs of `norm`.
    norm : str
        "l2" or "l1".

    Returns
    -------
    pandas.DataFrame
        One row per σ of `norm`, with columns sigma; abstain_fixed, abstain_isotropic, abstain_ancer (CERTIFY's
        abstentions); flips (the inputs where Isotropic DD abstains and ANCER certifies) and flips_correct (those of
        them ANCER certifies with the true label); medians over the flips of Isotropic DD's and ANCER's lower bounds
        p_A (p_lower_iso, p_lower_ancer), of ANCER's largest θ_i over Isotropic DD's θ (spread; ANCER's smallest θ_i
        is Isotropic DD's, by the projection) and of ANCER's median θ_i over Isotropic DD's θ (growth: how much more
        noise the typical pixel gets); growth_all (growth over all inputs); inputs; acr_gain (ANCER's ACR minus
        Isotropic DD's over all inputs) and acr_gain_flips (the part of it that the flips contribute).
    """
    rows = []
    for sigma in sigmas_of(col.setup)[norm]:
        c = {m: col.certified(norm, sigma, m) for m in (FIXED, ISOTROPIC, ANCER)}
        iso, anc = c[ISOTROPIC], c[ANCER]
        ti = col.thetas(norm, sigma, ISOTROPIC).reshape(len(iso), -1)
        ta = col.thetas(norm, sigma, ANCER).reshape(len(anc), -1)
        growth = np.median(ta, axis=1) / ti[:, 0]
        flip = ((iso.predict == ABSTAIN) & (anc.predict != ABSTAIN)).to_numpy()
        rows.append(dict(sigma=sigma, **{f"abstain_{m}": int((t.predict == ABSTAIN).sum()) for m, t in c.items()},
                         flips=int(flip.sum()), flips_correct=int((anc.predict[flip] == anc.label[flip]).sum()),
                         p_lower_iso=_median(iso.p_lower[flip]), p_lower_ancer=_median(anc.p_lower[flip]),
                         spread=_median(ta[flip].max(axis=1) / ti[flip, 0]), growth=_median(growth[flip]),
                         growth_all=float(np.median(growth)), inputs=len(iso),
                         acr_gain=float((gain := (anc.radius * anc.correct - iso.radius * iso.correct).to_numpy()).mean()),
                         acr_gain_flips=float(gain[flip].sum() / len(gain))))
    return pd.DataFrame(rows)
