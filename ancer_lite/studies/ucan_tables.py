"""Notebook 07's tables and claims, computed from `ucan_study.Study` results (UCAN §5 on our data):
the timed, cached steps of a study, Tables 2-3 with UCAN's improvement rows, the headline numbers,
the paper's own rows, claim C8 (anisotropic beats isotropic at equal ALM, UCAN §5.1 and Tables 2-3),
the soundness audit's summary (claim C9), the memory-based repair's before/after table (ANCER
Algorithm 1 on UCAN's regions) and Figure 5's universality table (UCAN §5.2).

Kept apart from `ucan_study` (whose code is hashed into the cache keys of UCAN's runs), so that the way
results are tabulated can change without recomputing them.
"""
from __future__ import annotations

from typing import Callable, Iterator, TypeVar

import numpy as np
import pandas as pd

from ..core.memory import ABSTAIN_BASE, ABSTAIN_INSIDE, ABSTAIN_INTERSECT, KEPT, SHRUNK
from ..core.ucan_radii import ERRATA, TABLE1_ROWS
from ..evaluation.intervals import Effect, claim_key, input_matrix, paired_effect, proportion_effect
from ..evaluation.metrics import average_certified_radius, certified_accuracy
from ..methods.registry import FIXED
from ..methods.ucan import INPUT_NPG, ISOTROPIC_NPG, PATTERN_NPG
from ..report.step_timing import StepTiming, run_step
from ..report.style import norm_symbol
from ..runs.paper import load_table
from .ucan_study import ISOTROPIC_FT, KIND_NAMES, TABLE_RADII, Study, Variant, accuracy_rows, improvement_over_baseline

T = TypeVar("T")

#: the rows of notebook 03's baselines, as `Study.baselines` names them
BASELINES = ("Cohen (Fixed σ)", "Isotropic DD", "ANCER")
COHEN = BASELINES[0]
#: what Algorithm 1 did with a region (`memory.Decision.status`), in the order the memory table shows them
STATUSES = (KEPT, SHRUNK, ABSTAIN_BASE, ABSTAIN_INSIDE, ABSTAIN_INTERSECT)
#: UCAN's own name for its input-dependent rows ("Ours") in Tables 2-3
OURS = KIND_NAMES[INPUT_NPG]
#: the noise families as UCAN Table 1 names them
NOISE_WORDS = {"gaussian": "Gaussian", "laplace": "Laplace", "exp_linf": "exponential ℓ∞", "uniform_linf": "uniform ℓ∞",
               "power_law_linf": "power-law ℓ∞"}


def row_title(row: str) -> str:
    """A UCAN Table 1 row in the paper's words: "exponential ℓ∞ noise, ℓ1 radius" for "exp_linf/l1".

    Parameters
    ----------
    row : str
        A Table 1 row's key, "noise/norm" (`ucan_radii.TABLE1_ROWS`).

    Returns
    -------
    str
    """
    if row not in TABLE1_ROWS:
        raise ValueError(f"row must be a Table 1 row ({sorted(TABLE1_ROWS)}), got {row!r}")
    r = TABLE1_ROWS[row]
    return f"{NOISE_WORDS[r.noise]} noise, {norm_symbol(r.norm, tex=False)} radius"


def table1_errata() -> dict[str, list[str]]:
    """Which UCAN Table 1 rows `ucan_radii.ERRATA` corrects, as Table 1 keys, and the errata of whole columns.

    Errata of the text (§5), not of the table, are left out.

    Returns
    -------
    dict of str to list of str
        "radius": rows whose printed radius is wrong in all three radius columns; "alm": rows whose printed ALM
        cell is wrong; "columns": the errata of a column across rows, as `ERRATA` names them.
    """
    out: dict[str, list[str]] = {"radius": [], "alm": [], "columns": []}
    for e in ERRATA:
        key = e["row"].split(" ", 1)[0]
        if key not in TABLE1_ROWS:
            if "column" in e["row"]:
                out["columns"].append(e["row"])  # an erratum of a column across rows
            continue
        if "radius columns" in e["row"]:
            out["radius"].append(key)
        if "Alt. Lebesgue Measure" in e["row"]:
            out["alm"].append(key)
    return out


def timed(study: Study | list[Study], step: str, what: str, compute: Callable[[], T]) -> tuple[T, StepTiming]:
    """Run one cached step of a study (e.g. `study.select`), or of several studies at once (`ucan_study.select_all`),
    through `step_timing.run_step`.

    The step's cache entries are the UCAN models (cache_dir/ucan) and the columns' logs; the time of computation is
    kept in <column's results>/timings/<step>.json for one study, and in <results>/ucan/timings/<step>-<columns>.json
    for several.

    Parameters
    ----------
    study : ucan_study.Study or list (or tuple) of them
        One column's study, or the studies the step computes together (at least one).
    step : str
        A short identifier naming the sidecar file.
    what : str
        What the step does, for the timing line.
    compute : callable
        The step, called without arguments.

    Returns
    -------
    result : object
        What `compute` returned.
    timing : report.step_timing.StepTiming
        Its seconds, whether it was reused, and the computed seconds.
    """
    if not step.isidentifier():
        raise ValueError(f"step must be a short identifier (it names the sidecar file), got {step!r}")
    if not isinstance(study, (list, tuple)):
        return run_step(what, compute, entries=[study.cache_dir / "ucan", study.results_root],
                        sidecar=study.results_root / "timings" / f"{step}.json")
    studies = list(study)
    if not studies:
        raise ValueError("study must be a Study or a non-empty list of them, got an empty list")
    entries = [e for st in studies for e in (st.cache_dir / "ucan", st.results_root)]
    names = "-".join(st.column.setup.name for st in studies)
    return run_step(what, compute, entries=entries,
                    sidecar=studies[0].results_root.parent / "timings" / f"{step}-{names}.json")


# -- Tables 2-3 on our data ------------------------------------------------------------------------------
def accuracy_table(study: Study, results: pd.DataFrame) -> pd.DataFrame:
    """UCAN Tables 2-3 on one column: certified accuracy (%) at `TABLE_RADII` w.r.t. the ℓ2 radius and the ALM.

    Best over λ (σ), for notebook 03's baselines (`Study.baselines`) and UCAN's runs, with the ACR / ACR~ in
    column "mean" (`ucan_study.accuracy_rows`).

    Parameters
    ----------
    study : ucan_study.Study
        One column's study.
    results : pandas.DataFrame
        `Study.certify_test`'s per-input rows (columns method, lam, radius, radius_proxy, correct, ...).

    Returns
    -------
    pandas.DataFrame
        Indexed by (method, "w.r.t." in {"radius", "ALM"}), one column per radius ("0", "0.25", ...) and "mean".
    """
    return accuracy_rows(pd.concat([study.baselines(), results], ignore_index=True))


def improvement_rows(table: pd.DataFrame, ours: str = OURS) -> pd.DataFrame:
    """UCAN Tables 2-3's last row, "Improvement over Baseline (%)", per radius, read two ways.

    The best of `ours`' two rows over the best baseline read at its ℓ2 radius (as UCAN reads ANCER), and over ANCER
    read at its own ALM (its proxy radius). NaN where the baseline certifies nothing.

    Parameters
    ----------
    table : pandas.DataFrame
        `accuracy_table`'s table, indexed by (method, "w.r.t."), one column per radius and "mean".
    ours : str, default `OURS`
        The method compared.

    Returns
    -------
    pandas.DataFrame
        Two rows, "over the best baseline at its ℓ2 radius" and "over ANCER at its ALM (proxy radius)", one column
        per radius.
    """
    cols = [c for c in table.columns if c != "mean"]
    over_base = improvement_over_baseline(table, ours, list(BASELINES))
    best_ours = table.loc[ours, cols].max()
    with np.errstate(divide="ignore", invalid="ignore"):
        over_ancer = 100 * (best_ours / table.loc[("ANCER", "ALM"), cols] - 1)
    out = pd.DataFrame([over_base[cols], over_ancer], index=["over the best baseline at its ℓ2 radius",
                                                             "over ANCER at its ALM (proxy radius)"])
    return out.astype(float).replace([np.inf, -np.inf], np.nan)


def at_largest_radius(table: pd.DataFrame, improvement: pd.DataFrame, ours: str = OURS) -> dict[str, float]:
    """The last column of UCAN's Tables 2-3 on our data.

    Parameters
    ----------
    table : pandas.DataFrame
        `accuracy_table`'s table, indexed by (method, "w.r.t."), one column per radius and "mean".
    improvement : pandas.DataFrame
        `improvement_rows`' two rows.
    ours : str, default `OURS`
        The method compared.

    Returns
    -------
    dict of str to float
        radius (the largest radius), ours (the best of `ours`' rows there), best_baseline (at its ℓ2 radius),
        ancer_alm (ANCER at its ALM), over_baseline and over_ancer_alm (the two improvements; NaN where the
        baseline certifies nothing).
    """
    col = [c for c in table.columns if c != "mean"][-1]
    return dict(radius=float(col), ours=float(table.loc[ours, col].max()),
                best_baseline=float(table.loc[[(b, "radius") for b in BASELINES], col].max()),
                ancer_alm=float(table.loc[("ANCER", "ALM"), col]),
                over_baseline=float(improvement.iloc[0][col]), over_ancer_alm=float(improvement.iloc[1][col]))


def below_ancer_alm(improvement: pd.DataFrame) -> list[float]:
    """The radii (> 0) at which `ours` is below ANCER read at its ALM (`improvement_rows`' second row < 0).

    Parameters
    ----------
    improvement : pandas.DataFrame
        `improvement_rows`' two rows, one column per radius.

    Returns
    -------
    list of float
    """
    row = improvement.iloc[1]
    return [float(c) for c, v in row.items() if float(c) > 0 and v < 0]


#: the (method, measure) rows whose mean (ACR~ for "ALM", ACR for "radius") the notebook asserts
HEADLINE = ((COHEN, "radius"), ("ANCER", "radius"), ("ANCER", "ALM"), ("Pattern-fixed ℓ2", "ALM"),
            ("Universal", "ALM"), (OURS, "radius"), (OURS, "ALM"))


def headline(tables: dict[str, pd.DataFrame], rows: tuple[tuple[str, str], ...] = HEADLINE) -> pd.DataFrame:
    """The "mean" column (ACR, or ACR~ for the ALM rows) of `rows` in each column's UCAN table.

    Parameters
    ----------
    tables : dict of str to pandas.DataFrame
        `accuracy_table`'s table per notebook-03 column.
    rows : tuple of (str, str), default `HEADLINE`
        The (method, "w.r.t.") rows.

    Returns
    -------
    pandas.DataFrame
        Indexed by (method, "w.r.t."), one column per notebook-03 column.
    """
    return pd.DataFrame({name: [float(t.loc[k, "mean"]) for k in rows] for name, t in tables.items()},
                        index=pd.MultiIndex.from_tuples(rows, names=["method", "w.r.t."]))


#: UCAN's result tables: data set -> transcribed table (Table 2 MNIST, Table 3 CIFAR-10, Table 4 ImageNet)
PAPER_TABLES = {"MNIST": "ucan_table2", "CIFAR-10": "ucan_table3", "ImageNet": "ucan_table4"}


def paper_rows(datasets: tuple[str, ...] = tuple(PAPER_TABLES)) -> dict[str, pd.DataFrame]:
    """UCAN's own rows of Tables 2-4 (`PAPER_TABLES`) for Cohen, ANCER and "Ours" (input-dependent noise).

    Parameters
    ----------
    datasets : tuple of str, default all of `PAPER_TABLES`
        Among "MNIST", "CIFAR-10", "ImageNet".

    Returns
    -------
    dict of str to pandas.DataFrame
        Per dataset: index "<method> <metric>" (e.g. "Cohen acc"), columns the radii (Table 4's ImageNet radii are
        0-3.5, the others' 0-2.25).
    """
    unknown = [d for d in datasets if d not in PAPER_TABLES]
    if unknown:
        raise ValueError(f"datasets must be among {list(PAPER_TABLES)}, got {unknown}")
    out = {}
    for dataset in datasets:
        tab = PAPER_TABLES[dataset]
        p = load_table(tab)
        p = p[p.method.isin(["Cohen", "ANCER", "Ours"])]
        p = p.assign(row=p.method + " " + p.metric.str.replace("certified_accuracy", "acc"))
        out[dataset] = p.pivot_table(index="row", columns="radius", values="value", sort=False)
    return out


def cohen_rows_identical(rows: dict[str, pd.DataFrame]) -> bool:
    """Whether UCAN's MNIST "Cohen" row (Table 2) equals its CIFAR-10 row (Table 3) cell for cell.

    Parameters
    ----------
    rows : dict of str to pandas.DataFrame
        `paper_rows`' tables, with "MNIST" and "CIFAR-10".

    Returns
    -------
    bool
    """
    return bool(np.array_equal(rows["MNIST"].loc["Cohen acc"].to_numpy(), rows["CIFAR-10"].loc["Cohen acc"].to_numpy()))


# -- claim C8 ----------------------------------------------------------------------------------------------
def npg_name(kind: str, pattern: str) -> str:
    """An NPG's table name: "Pattern-fixed ℓ2", "Universal", ... (the pattern's norm only for the pattern-fixed NPG).

    Parameters
    ----------
    kind : str
        A kind of `ucan_study.KINDS`.
    pattern : str
        The pattern's norm ("l1", "l2", "linf"), used for "pattern".

    Returns
    -------
    str
    """
    if kind == PATTERN_NPG:
        return Variant(kind, 1.0, None, pattern).label
    return KIND_NAMES[kind]


def c8_pairs(study: Study, results: pd.DataFrame) -> Iterator[tuple[float, pd.DataFrame, pd.DataFrame, str,
                                                                   pd.DataFrame]]:
    """Claim C8's comparisons on one column (UCAN §5.1): each NPG run with Cohen's and the control's rows at its λ.

    Parameters
    ----------
    study : ucan_study.Study
        One column's study.
    results : pandas.DataFrame
        `Study.certify_test`'s per-input rows (columns kind, lam, pattern, radius, radius_proxy, correct, ...),
        with the fine-tuned isotropic control at every λ.

    Yields
    ------
    lam : float
        A λ of the study.
    cohen : pandas.DataFrame
        Cohen's rows (Fixed σ = λ, notebook 03, on the study's inputs; `Study.baselines`).
    tuned : pandas.DataFrame
        The fine-tuned isotropic control's rows (`ucan_study.ISOTROPIC_FT` at λ: Cohen's model with the NPGs'
        fine-tuning).
    npg : str
        The NPG's name (`npg_name`).
    rows : pandas.DataFrame
        The NPG's rows at λ.
    """
    base = study.baselines()
    for lam in study.setup.lams:
        cohen = base[(base.kind == FIXED) & (base.lam == lam)]
        if cohen.empty:
            raise ValueError(f"notebook 03 has no Fixed σ run at σ = λ = {lam} for column {study.column.setup.name!r}")
        at = results[results.lam == lam]
        tuned = at[at.kind == ISOTROPIC_FT]
        if tuned.empty:
            raise ValueError(f"results hold no fine-tuned isotropic run ({ISOTROPIC_FT!r}) at λ = {lam}")
        for (kind, pattern), g in at[at.kind != ISOTROPIC_FT].groupby(["kind", "pattern"], sort=False):
            yield lam, cohen, tuned, npg_name(kind, pattern), g


def claim_c8(study: Study, results: pd.DataFrame, radii: tuple[float, ...] = TABLE_RADII) -> pd.DataFrame:
    """Claim C8 (UCAN §5.1 and Tables 2-3: anisotropic noise beats isotropic noise at equal ALM) on one column.

    Per λ and NPG: whether its certified accuracy at ALM r is at least Cohen's (Fixed σ = λ) at radius r at every r
    of `radii` and above it somewhere; the same against the fine-tuned isotropic control (the NPG's gain without
    its extra training).

    Parameters
    ----------
    study : ucan_study.Study
        One column's study.
    results : pandas.DataFrame
        `Study.certify_test`'s per-input rows.
    radii : tuple of float, default `TABLE_RADII`
        The radii compared.

    Returns
    -------
    pandas.DataFrame
        One row per (λ, NPG): columns lam, npg, at_least_everywhere, above_somewhere, below_at (the radii where it
        is below), clean_gap (its clean accuracy minus Cohen's in points, when `radii` starts at 0, else NaN),
        acr_alm (its ACR~), cohen_acr, holds_fine_tuned, fine_tuned_acr and holds (at least everywhere and above
        somewhere).
    """
    rows = []
    for lam, cohen, tuned, npg, g in c8_pairs(study, results):
        c_acc = certified_accuracy(cohen.radius, cohen.correct, list(radii))
        t_acc = certified_accuracy(tuned.radius, tuned.correct, list(radii))
        acc = certified_accuracy(g.radius_proxy, g.correct, list(radii))
        rows.append(dict(lam=lam, npg=npg, at_least_everywhere=bool((acc >= c_acc).all()),
                         above_somewhere=bool((acc > c_acc).any()),
                         below_at=tuple(float(r) for r, a, c in zip(radii, acc, c_acc) if a < c),
                         clean_gap=100 * float(acc[0] - c_acc[0]) if radii[0] == 0 else float("nan"),
                         acr_alm=average_certified_radius(g.radius_proxy, g.correct),
                         cohen_acr=average_certified_radius(cohen.radius, cohen.correct),
                         holds_fine_tuned=bool((acc >= t_acc).all() and (acc > t_acc).any()),
                         fine_tuned_acr=average_certified_radius(tuned.radius, tuned.correct)))
    out = pd.DataFrame(rows)
    out["holds"] = out.at_least_everywhere & out.above_somewhere
    return out


#: claim C8 as an effect: the statement, oriented so that a positive effect is the claim; against Cohen's model
#: (the paper's comparison) and against it with the NPGs' fine-tuning (the control of equal training)
C8_STATEMENT = "NPG's ACR~ (ALM) minus Cohen's ACR at the same λ (UCAN §5.1, Tables 2-3)"
C8_FT_STATEMENT = "NPG's ACR~ (ALM) minus the ACR of Cohen's model given the NPGs' fine-tuning, at the same λ"


def c8_effects(study: Study, results: pd.DataFrame, label: str, seed: int = 0) -> pd.DataFrame:
    """Claim C8 (UCAN §5.1, Tables 2-3) with its uncertainty on one column.

    Per λ and NPG, the NPG's ACR~ (mean ALM radius times correctness) minus Cohen's ACR (Fixed σ = λ, notebook 03)
    on the same test inputs, with its paired bootstrap interval (`intervals.paired_effect`), and the same against
    the fine-tuned isotropic control.

    Parameters
    ----------
    study : ucan_study.Study
        One column's study.
    results : pandas.DataFrame
        `Study.certify_test`'s per-input rows.
    label : str
        Names the column in the bootstrap's stream key.
    seed : int, default 0
        The bootstrap seed.

    Returns
    -------
    pandas.DataFrame
        Columns lam, npg, effect and effect_fine_tuned (`Effect`s).
    """
    rows = []
    for lam, cohen, tuned, npg, g in c8_pairs(study, results):
        e = paired_effect(input_matrix([g], "radius_proxy"), input_matrix([cohen], "radius"), seed=seed,
                          key=claim_key(f"07/{label}/{lam:g}/{npg}/C8"))
        ft = paired_effect(input_matrix([g], "radius_proxy"), input_matrix([tuned], "radius"), seed=seed,
                           key=claim_key(f"07/{label}/{lam:g}/{npg}/C8/fine-tuned"))
        rows.append(dict(lam=lam, npg=npg, effect=e, effect_fine_tuned=ft))
    return pd.DataFrame(rows)


def c8_verdicts(c8: pd.DataFrame) -> pd.DataFrame:
    """Claim C8 per NPG of a column: the λ at which it holds and fails, and whether ACR~ beats Cohen's ACR at every λ.

    Parameters
    ----------
    c8 : pandas.DataFrame
        `claim_c8`'s table (columns lam, npg, holds, acr_alm, cohen_acr, ...).

    Returns
    -------
    pandas.DataFrame
        One row per NPG: columns npg, holds_at, fails_at (tuples of λ), acr_above_at_every_lam.
    """
    rows = []
    for npg, g in c8.groupby("npg", sort=False):
        rows.append(dict(npg=npg, holds_at=tuple(g.lam[g.holds]), fails_at=tuple(g.lam[~g.holds]),
                         acr_above_at_every_lam=bool((g.acr_alm > g.cohen_acr).all())))
    return pd.DataFrame(rows)


# -- claim C9: the audit and the memory-based repair -------------------------------------------------------
def audit_summary(audit: pd.DataFrame) -> dict[str, int]:
    """Counts of one soundness audit (claim C9, `Study.audit`).

    Parameters
    ----------
    audit : pandas.DataFrame
        `Study.audit`'s table (columns soft_prob, p_lower_top, verified, ...); may be empty.

    Returns
    -------
    dict of str to int
        searched (certified regions searched), candidates (soft smoothed probability of the certified class
        < 1/2), re_estimated (candidates re-estimated), verified (verified violations).
    """
    if audit.empty:
        return dict(searched=0, candidates=0, re_estimated=0, verified=0)
    return dict(searched=len(audit), candidates=int((audit.soft_prob < 0.5).sum()),
                re_estimated=int(audit.p_lower_top.notna().sum()), verified=int(audit.verified.sum()))


#: claim C9 as the claims table states it: positive would be soundness (no verified violation)
C9_STATEMENT = ("share of certified regions searched (inside [0, 1]) holding a verified violation, negated: "
                "0 if sound (Theorem 3.2 with σ(x), μ(x))")


def c9_effect(audit: pd.DataFrame) -> Effect:
    """Claim C9 (UCAN Theorem 3.2's soundness) on one audit: minus the share of searched regions with a violation.

    The share of the certified regions searched in which a violation was verified comes with its Clopper-Pearson
    interval (`intervals.proportion_effect`, at_most 0). The share is a lower bound on the regions that hold a
    violation (only the best candidates are re-estimated, and the search may miss), so "fails" (a verified
    violation) is conclusive and "within noise" (none found) is not a proof of soundness.

    Parameters
    ----------
    audit : pandas.DataFrame
        `Study.audit`'s table; it must have searched at least one certified region.

    Returns
    -------
    evaluation.intervals.Effect
    """
    counts = audit_summary(audit)
    if counts["searched"] == 0:
        raise ValueError("audit must have searched at least one certified region")
    return proportion_effect(counts["verified"], counts["searched"], 0.0, at_most=True)


def memory_rows(run_results: pd.DataFrame, after: pd.DataFrame) -> dict[str, float]:
    """Before/after ANCER's Algorithm 1 on UCAN's regions (one input-dependent run).

    Parameters
    ----------
    run_results : pandas.DataFrame
        The run's per-input rows (columns radius, radius_proxy, correct, ...).
    after : pandas.DataFrame
        `Study.memory`'s rows, one per input of the run (with status).

    Returns
    -------
    dict of str to float
        How many regions were kept / shrunk / abstained (one key per `STATUSES`), and acc_before, acc_after
        (certified accuracy, %), acr_before, acr_after (ACR, ℓ2 radius), acr_alm_before, acr_alm_after (ACR~, ALM).
    """
    if len(run_results) != len(after):
        raise ValueError(f"after must have one row per input of the run ({len(run_results)}), got {len(after)}")
    counts = after.status.value_counts()
    row: dict[str, float] = {s: int(counts.get(s, 0)) for s in STATUSES}
    for when, df in (("before", run_results), ("after", after)):
        row[f"acc_{when}"] = 100 * float(df.correct.mean())
        row[f"acr_{when}"] = average_certified_radius(df.radius, df.correct)
        row[f"acr_alm_{when}"] = average_certified_radius(df.radius_proxy, df.correct)
    return row


def memory_table(studies: dict[str, Study]) -> pd.DataFrame:
    """`memory_rows` for every input-dependent run of every study (`Study.memory`, shrink policy).

    Parameters
    ----------
    studies : dict of str to ucan_study.Study
        Studies by column name, with `certify_test` done.

    Returns
    -------
    pandas.DataFrame
        One row per (column, λ): columns column, lam and `memory_rows`' keys.
    """
    rows = []
    for name, st in studies.items():
        for v in st.runs:
            if v.kind == INPUT_NPG:
                rows.append(dict(column=name, lam=v.lam, **memory_rows(st.runs[v].results, st.memory(v))))
    return pd.DataFrame(rows)


# -- Figure 5: every noise family ----------------------------------------------------------------------------
def universality_table(universality: pd.DataFrame) -> pd.DataFrame:
    """UCAN Figure 5's runs (§5.2) summarised per Table 1 row and NPG.

    Parameters
    ----------
    universality : pandas.DataFrame
        `Study.universality`'s long table (columns row, method, radius, radius_proxy, correct, ...).

    Returns
    -------
    pandas.DataFrame
        Indexed by (row, method): columns accuracy (clean accuracy, %), acr (the row's ℓp radius) and acr_alm
        (ACR~, its ALM).
    """
    g = universality.assign(acr=universality.radius * universality.correct,
                            acr_alm=universality.radius_proxy * universality.correct)
    out = g.groupby(["row", "method"], sort=False).agg(accuracy=("correct", "mean"), acr=("acr", "mean"),
                                                     acr_alm=("acr_alm", "mean"))
    out["accuracy"] *= 100
    return out


def universality_verdicts(table: pd.DataFrame, isotropic: str = KIND_NAMES[ISOTROPIC_NPG]) -> pd.DataFrame:
    """UCAN Figure 5's reading per NPG (§5.2: "UCAN can universally amplify the certified robustness").

    Whether its ACR~ exceeds isotropic noise's in every Table 1 row, and whether its clean accuracy is below
    isotropic noise's in every row; with the fine-tuned isotropic control in the table, also whether its ACR~
    exceeds that control's (the scratch isotropic model gets no fine-tuning, the NPGs do).

    Parameters
    ----------
    table : pandas.DataFrame
        `universality_table`'s table, indexed by (row, method).
    isotropic : str, default `KIND_NAMES["isotropic"]`
        The isotropic method's name.

    Returns
    -------
    pandas.DataFrame
        Indexed by npg: columns alm_above_everywhere, accuracy_below_everywhere, rows (the Table 1 rows compared)
        and, with the control, alm_above_fine_tuned_everywhere.
    """
    wide = table.unstack("method")
    tuned = KIND_NAMES[ISOTROPIC_FT]
    rows = []
    for method in table.index.get_level_values("method").unique():
        if method in (isotropic, tuned):
            continue
        row = dict(npg=method, alm_above_everywhere=bool((wide.acr_alm[method] > wide.acr_alm[isotropic]).all()),
                   accuracy_below_everywhere=bool((wide.accuracy[method] < wide.accuracy[isotropic]).all()),
                   rows=len(wide))
        if tuned in wide.acr_alm:
            row["alm_above_fine_tuned_everywhere"] = bool((wide.acr_alm[method] > wide.acr_alm[tuned]).all())
        rows.append(row)
    return pd.DataFrame(rows).set_index("npg")


# -- Figure 7 and the C9 figure: what the noise and a violation look like -------------------------------------
def noise_examples(study: Study, lam: float, position: int = 0, pattern: str = "l2",
                   seed: int = 0) -> dict[str, dict[str, np.ndarray]]:
    """UCAN Figure 7 on one test input: the σ map, the μ map and one noisy draw per NPG.

    For isotropic noise and each NPG certified at λ = `lam` (pattern-fixed with `pattern`): σ, μ and one draw
    x + λσ ⊙ ε + μ (ε ~ N(0, I), one generator seeded by `seed`, drawn in that order); isotropic noise has σ = 1
    and μ = 0.

    Parameters
    ----------
    study : ucan_study.Study
        One column's study.
        Its `certify_test` must have run.
    lam : float
        A λ of the study.
    position : int, default 0
        The input's position in `study.x`.
    pattern : str, default "l2"
        The pattern-fixed NPG's norm.
    seed : int, default 0
        Seed of the draws.

    Returns
    -------
    dict of str to dict of str to numpy.ndarray
        kind ("isotropic", "pattern", "universal", "input") -> {"sigma", "mu", "draw"}, each float64 of shape
        (H, W) (the first channel).
    """
    import torch

    from ..methods import ucan

    if not 0 <= position < len(study.x):
        raise ValueError(f"position must index one of the {len(study.x)} test inputs, got {position!r}")
    variants = [v for v in study.runs if v.lam == lam and v.kind != ISOTROPIC_FT
                and (v.kind != PATTERN_NPG or v.pattern == pattern)]
    if not variants:
        raise ValueError(f"no NPG certified at λ = {lam!r} (certify_test() first; λ in {study.setup.lams})")
    x = study.x[position]
    gen = torch.Generator().manual_seed(seed)
    out = {ISOTROPIC_NPG: dict(sigma=torch.ones_like(x), mu=torch.zeros_like(x),
                                         draw=x + lam * torch.randn(x.shape, generator=gen))}
    for v in variants:
        sigma, mu = (t.cpu() for t in ucan.npg_maps(study.runs[v].npg, x))  # computed where the NPG is
        out[v.kind] = dict(sigma=sigma, mu=mu, draw=x + lam * sigma * torch.randn(x.shape, generator=gen) + mu)
    return {k: {m: a[0].numpy().astype(np.float64) for m, a in maps.items()} for k, maps in out.items()}


def violation_example(study: Study, audit: pd.DataFrame, variant: Variant) -> dict[str, object] | None:
    """The first verified violation of an audit (claim C9), ready to draw.

    Parameters
    ----------
    study : ucan_study.Study
        One column's study.
    audit : pandas.DataFrame
        `Study.audit`'s table for `variant`.
    variant : ucan_study.Variant
        The audited variant, in `study.runs`.

    Returns
    -------
    dict or None
        x, x_prime (x' = x + δ) and delta (δ), each of shape (H, W) (first channel); label (the certified class),
        top (the smoothed class at x'), p_lower_top, scaled_norm (‖δ ⊘ θ(x)‖₂) against r1 (the certified
        Φ⁻¹(p_A')), inside (whether x' lies in x's certified ellipsoid x + θ(x) ⊙ B(Φ⁻¹(p_A')),
        `regions.contains`) and idx. None when the audit verified no violation.
    """
    from ..core.regions import contains
    from ..methods import ucan

    hits = audit[audit.verified.astype(bool)] if not audit.empty else audit
    if hits.empty:
        return None
    row = hits.iloc[0]
    x = study.x[int(row.position)]
    x_prime = x + row.delta
    sigma = ucan.npg_maps(study.runs[variant].npg, x)[0].cpu()  # computed where the NPG is
    scales = (variant.lam * sigma).reshape(-1).double().numpy() * float(row.r1)
    inside = bool(contains(x_prime.reshape(1, -1).double().numpy(), x.reshape(-1).double().numpy(), scales, "l2")[0])
    return dict(x=x[0].numpy(), x_prime=x_prime[0].numpy(), delta=row.delta[0].numpy(), label=int(row.label),
                top=int(row.top), p_lower_top=float(row.p_lower_top), scaled_norm=float(row.scaled_norm),
                r1=float(row.r1), inside=inside, idx=int(row.idx))
