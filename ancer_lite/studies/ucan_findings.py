"""Notebook 07's findings in words and its claim rows (UCAN against ANCER, on our data).

Every function takes computed results (tables of `ucan_tables`, studies of `ucan_study`, effects of
`evaluation.intervals`) and returns Markdown, or the rows of the claims table, so that the notebook shows the
words first and every number in them is read from the computation. Nothing here trains, certifies or reads a
cache.
"""
from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from ..evaluation.intervals import Effect
from ..methods.ucan import INPUT_NPG, UNIVERSAL_NPG
from ..report import claims
from ..runs.selection import ACCURACY_SLACK
from .ucan_figures import short_name
from .ucan_study import KIND_NAMES, TABLE_RADII
from .ucan_tables import C8_FT_STATEMENT, C8_STATEMENT, C9_STATEMENT, COHEN, row_title

#: the notebook whose claims these are
NOTEBOOK = "07_ucan"
#: the claim labels of notebook 07 per comparison (`c8_claim_rows`, `c9_claim_rows`)
C8_CLAIMS = (("C8", "effect", C8_STATEMENT), ("C8/fine-tuned", "effect_fine_tuned", C8_FT_STATEMENT))
#: the difference (ACR~, ALM) between before and after Algorithm 1 within which a run whose certificates Algorithm 1
#: left alone counts as unchanged: the σ maps are recomputed in float32 for the memory, so the ALM moves in its
#: last digits
MEMORY_ALM_TOL = 1e-3


def pct(value: float) -> str:
    """An improvement in percent as UCAN's Tables print it ("+142.5%"), or why there is none.

    Parameters
    ----------
    value : float
        The improvement in % (NaN where the baseline certifies nothing).

    Returns
    -------
    str
        "+12.3%" / "-4.0%", or "undefined (the baseline certifies nothing)" for NaN.
    """
    return "undefined (the baseline certifies nothing)" if np.isnan(value) else f"{value:+.1f}%"


def _listing(values: Iterable[float]) -> str:
    """Numbers as "0.25, 0.5, 1" (the `:g` format)."""
    return ", ".join(f"{v:g}" for v in values)


# -- claim rows ---------------------------------------------------------------------------------------------------
def c8_paper(npg: str, lam: float) -> str:
    """The paper's word on one C8 comparison: §5.1 on pattern-fixed noise at λ = 1.0 (Figure 4, no number printed).

    Parameters
    ----------
    npg : str
        The NPG's table name (`ucan_tables.npg_name`, e.g. "Pattern-fixed ℓ2").
    lam : float
        The λ compared.

    Returns
    -------
    str
        "strictly above Cohen (§5.1, Figure 4)" for a pattern-fixed NPG at λ = 1, else "" (the paper says nothing).
    """
    return "strictly above Cohen (§5.1, Figure 4)" if npg.startswith("Pattern") and lam == 1 else ""


def c8_claim_rows(c8_effects: Mapping[str, pd.DataFrame]) -> list[dict]:
    """The claims-table rows of claim C8: per column, λ and NPG, against Cohen ("C8") and the fine-tuned control.

    Parameters
    ----------
    c8_effects : mapping of str to pandas.DataFrame
        Column -> `ucan_tables.c8_effects`' table (columns lam, npg, effect, effect_fine_tuned).

    Returns
    -------
    list of dict
        `claims.claim_row`s: every "C8" row (columns in order, then each table's rows), then every "C8/fine-tuned".
    """
    return [claims.claim_row(label, f"{short_name(name)}, {r.npg}, λ = {r.lam:g}", statement,
                             getattr(r, field), c8_paper(r.npg, r.lam), NOTEBOOK)
            for label, field, statement in C8_CLAIMS
            for name, t in c8_effects.items() for r in t.itertuples()]


def c9_claim_rows(c9_effects: Mapping[tuple[str, str], Effect], lam: float) -> list[dict]:
    """The claims-table rows of claim C9 (the input-dependent certificate is sound) and its control.

    Parameters
    ----------
    c9_effects : mapping of (str, str) to Effect
        (column, NPG kind "input" or "universal") -> `ucan_tables.c9_effect` of its audit.
    lam : float
        The λ the audits searched at.

    Returns
    -------
    list of dict
        `claims.claim_row`s: "C9" for the input-dependent NPG (the paper: sound, Theorem 3.2), "C9/control" for the
        universal NPG, in the mapping's order.
    """
    for name, kind in c9_effects:
        if kind not in (INPUT_NPG, UNIVERSAL_NPG):
            raise ValueError(f"c9_effects' kinds must be 'input' or 'universal', got {kind!r} for column {name!r}")
    return [claims.claim_row("C9" if kind == INPUT_NPG else "C9/control",
                             f"{short_name(name)}, {KIND_NAMES[kind]}, λ = {lam:g}", C9_STATEMENT, e,
                             "sound (Theorem 3.2)" if kind == INPUT_NPG else "", NOTEBOOK)
            for (name, kind), e in c9_effects.items()]


def record_claims(c8_effects: Mapping[str, pd.DataFrame], c9_effects: Mapping[tuple[str, str], Effect],
                  lam: float) -> pd.DataFrame:
    """Write notebook 07's claims (C8, C8/fine-tuned, then C9 and its control) to `claims.claims_path("07_ucan")`.

    Parameters
    ----------
    c8_effects : mapping of str to pandas.DataFrame
        As for `c8_claim_rows`.
    c9_effects : mapping of (str, str) to Effect
        As for `c9_claim_rows`.
    lam : float
        The λ of the audits.

    Returns
    -------
    pandas.DataFrame
        The claims table written (`claims.record_claims`).
    """
    return claims.record_claims(c8_claim_rows(c8_effects) + c9_claim_rows(c9_effects, lam), NOTEBOOK)


# -- the columns and the selection --------------------------------------------------------------------------------
def columns_markdown(studies: Mapping[str, object]) -> str:
    """One bullet per data column: its test inputs, dimension, N, the λ of the NPGs and the σ of the baselines.

    Parameters
    ----------
    studies : mapping of str to ucan_study.Study
        Column -> its study (read: x, d, setup.lams, column.setup.n, column.setup.sigmas_l2).

    Returns
    -------
    str
        Markdown.
    """
    return "\n".join(f"* **{short_name(name)}** (`{name}`): {len(st.x)} test inputs, d = {st.d}, "
                     f"N = {st.column.setup.n:,}, λ ∈ {{{_listing(st.setup.lams)}}}; baselines at "
                     f"σ ∈ {{{_listing(st.column.setup.sigmas_l2)}}}" for name, st in studies.items())


def grids_markdown(setups: Mapping[str, object], widen: int) -> str:
    """The grids of κ and γ searched on the validation split, on how many inputs for each column, and how they
    widen.

    Parameters
    ----------
    setups : mapping of str to runs.profiles.UcanSetup
        Column -> its setup (kappas, gammas, selection_lam, lams, num_val, val_n), in the notebook's order.
    widen : int
        How many values a grid is continued beyond an edge (`ucan_study.UCAN_WIDEN`).

    Returns
    -------
    str
        Markdown; one paragraph per column when the columns search different grids.
    """
    if not setups:
        raise ValueError("setups must name at least one column")
    items = list(setups.items())
    grid = lambda s: (tuple(s.kappas), tuple(s.gammas), s.selection_lam, tuple(s.lams))  # noqa: E731
    if len({grid(s) for _, s in items}) > 1:
        return "\n\n".join(f"**{short_name(name)}.** " + grids_markdown({name: s}, widen) for name, s in items)
    setup = items[0][1]
    inputs = (f"{setup.num_val} validation inputs with N = {setup.val_n:,}" if len(items) == 1 else
              "; ".join(f"{s.num_val} validation inputs with N = {s.val_n:,} ({short_name(name)})"
                        for name, s in items))
    others = [lam for lam in setup.lams if lam != setup.selection_lam]
    reuse = (f" The chosen κ and γ are reused at λ ∈ {{{_listing(others)}}}, which the objective at λ = "
             f"{setup.selection_lam:g} does not see, so a value is eligible only where its validation accuracy at "
             f"radius 0 stays within {100 * ACCURACY_SLACK:g} points of the fine-tuned isotropic control's at each of "
             f"them (checked from the best ACR̃ down; column `elsewhere`: the smallest difference found, in points)."
             if others else "")
    return (f"Grids: κ ∈ {{{_listing(setup.kappas)}}}, γ ∈ {{{_listing(setup.gammas)}}}, "
            f"at λ = {setup.selection_lam:g} on {inputs}. When the "
            f"best value sits at an edge of a grid, the grid is continued geometrically beyond that edge (up to "
            f"{widen} more values, `selection.widening_search`, the one selection routine of the package)." + reuse)


def _per_column(setups: Mapping[str, object], attr: str, fmt: str = "{:,}") -> str:
    """One setting of every column: the value when all columns share it, else "v (column), …"."""
    values = {name: getattr(s, attr) for name, s in setups.items()}
    if len(set(values.values())) == 1:
        return fmt.format(next(iter(values.values())))
    return ", ".join(f"{fmt.format(v)} ({short_name(name)})" for name, v in values.items())


def audit_settings_markdown(setups: Mapping[str, object], alpha: float) -> str:
    """The soundness search's settings (claim C9), per column where they differ.

    Parameters
    ----------
    setups : mapping of str to runs.profiles.UcanSetup
        Column -> its setup (selection_lam, audit_steps, audit_samples, audit_verify, audit_n).
    alpha : float
        CERTIFY's α, also the verification's.

    Returns
    -------
    str
        Markdown.
    """
    if not setups:
        raise ValueError("setups must name at least one column")
    return (f"Search at λ = {_per_column(setups, 'selection_lam', '{:g}')}: {_per_column(setups, 'audit_steps')} steps "
            f"of {_per_column(setups, 'audit_samples')} draws; at most {_per_column(setups, 'audit_verify')} "
            f"candidates re-estimated per NPG with N = {_per_column(setups, 'audit_n')} at α = {alpha:g}.")


# -- Figure 4 and claim C8 --------------------------------------------------------------------------------------
def figure4_markdown(c8: Mapping[str, pd.DataFrame], pattern_npg: str = "Pattern-fixed ℓ2",
                     paper_lam: float = 1.0) -> str:
    """What Figure 4 shows against UCAN §5.1's reading of it, per row of the figure (NPG) and data column.

    §5.1: pattern-fixed noise is "strictly above" the isotropic baseline at λ = 1.0 on every dataset, and the
    universal and input-dependent NPGs "significantly boost" certified accuracy. Ours: whether each NPG's certified
    accuracy at ALM r is at least Cohen's at radius r at every r of the radius grid and above somewhere
    (`ucan_tables.claim_c8`'s "holds"), at each λ.

    Parameters
    ----------
    c8 : mapping of str to pandas.DataFrame
        Column -> `ucan_tables.claim_c8`'s table (columns lam, npg, holds, below_at).
    pattern_npg : str, default "Pattern-fixed ℓ2"
        The pattern-fixed NPG drawn in Figure 4.
    paper_lam : float, default 1.0
        The λ of §5.1's sentence.

    Returns
    -------
    str
        Markdown: one bullet per NPG of Figure 4.
    """
    npgs = (pattern_npg, KIND_NAMES[UNIVERSAL_NPG], KIND_NAMES[INPUT_NPG])
    lines = []
    for npg in npgs:
        parts = []
        for name, t in c8.items():
            g = t[t.npg == npg]
            if g.empty:
                continue
            holds = [lam for lam, h in zip(g.lam, g.holds) if h]
            parts.append(f"{short_name(name)}: at or above Cohen at every ALM and above somewhere at λ ∈ "
                         f"{{{_listing(holds)}}} of {{{_listing(g.lam)}}}" if holds else
                         f"{short_name(name)}: at no λ at or above Cohen at every ALM")
        lines.append(f"* **{npg}**: " + "; ".join(parts) + ".")
    at_paper = {name: t[(t.npg == pattern_npg) & (t.lam == paper_lam)] for name, t in c8.items()}
    at_paper = {name: bool(g.holds.iloc[0]) for name, g in at_paper.items() if not g.empty}
    if at_paper:
        agree = [short_name(n) for n, h in at_paper.items() if h]
        disagree = [short_name(n) for n, h in at_paper.items() if not h]
        verdict = ("reproduces on " + " and ".join(agree) if agree else "") + \
                  ("; " if agree and disagree else "") + \
                  ("does not reproduce on " + " and ".join(disagree) if disagree else "")
        lines.append(f"\nUCAN §5.1's sentence, pattern-fixed noise strictly above the baseline at λ = {paper_lam:g}, "
                     f"{verdict}. The curves are compared on UCAN's radius grid (0 to {max(TABLE_RADII):g}); the "
                     "ℓ2-radius curves and the control of equal fine-tuning are in the companion figure below.")
    return "\n".join(lines)


def paper_side_markdown(paper_rows: Mapping[str, pd.DataFrame], tables: Mapping[str, pd.DataFrame],
                        largest: float) -> str:
    """UCAN's numbers at the largest radius of Tables 2-3 beside ours.

    Parameters
    ----------
    paper_rows : mapping of str to pandas.DataFrame
        Dataset -> `ucan_tables.paper_rows`' table (rows "Ours acc_alm", "Cohen acc"; one column per radius).
    tables : mapping of str to pandas.DataFrame
        Column -> `ucan_tables.accuracy_table`.
    largest : float
        The largest radius of the tables.

    Returns
    -------
    str
        Markdown.
    """
    col = f"{largest:g}"
    return ("**The paper's side.** §5.1 says pattern-fixed noise is \"strictly above\" Cohen at λ = 1.0 on every "
            f"dataset (Figure 4, no numbers printed); Tables 2-3 at the largest radius, {largest:g} (input-dependent "
            "w.r.t. the ALM against the printed Cohen row): "
            + "; ".join(f"{dataset} {rows.loc['Ours acc_alm', largest]:.0f}% against {rows.loc['Cohen acc', largest]:.0f}%"
                        for dataset, rows in paper_rows.items())
            + f". **Ours** at radius {largest:g} (input-dependent w.r.t. the ALM against Cohen best over σ): "
            + "; ".join(f"{short_name(name)} {t.loc[('Input-dependent', 'ALM'), col]:.1f}% against "
                        f"{t.loc[(COHEN, 'radius'), col]:.1f}%" for name, t in tables.items()) + ".")


# -- the audit (claim C9) and the memory ------------------------------------------------------------------------
def violation_markdown(example: Mapping[str, object], column: str, alpha: float) -> str:
    """The drawn violation of claim C9 in words.

    Parameters
    ----------
    example : mapping
        `ucan_tables.violation_example`'s dict (idx, inside, top, p_lower_top, label).
    column : str
        The data column.
    alpha : float
        The Clopper-Pearson level of the re-estimation.

    Returns
    -------
    str
        Markdown.
    """
    return (f"Test input {example['idx']} of `{column}`: x' lies inside x's certified region: **{example['inside']}**; "
            f"at x' UCAN's smoothed classifier returns class {example['top']} with probability ≥ "
            f"{example['p_lower_top']:.3f} (Clopper-Pearson, α = {alpha:g}), where x is certified as class "
            f"{example['label']}.")


def violation_after_memory_markdown(stored: pd.DataFrame, audit: pd.DataFrame) -> str:
    """What the memory-based classifier answers at the first verified violation x' of an audit (the one drawn).

    Parameters
    ----------
    stored : pandas.DataFrame
        `Study.memory`'s rows of the audited run, one per input in test order (columns status, radius: the ℓ2
        radius of the final region, a ball when shrunk).
    audit : pandas.DataFrame
        `Study.audit`'s table of that run (columns position, idx, label, top, delta_l2, verified).

    Returns
    -------
    str
        Markdown: whether x' lies in x's stored region (kept: the certified ellipsoid; shrunk: a ball of the final
        radius) and so gets x's class.
    """
    hits = audit[audit.verified.astype(bool)] if not audit.empty else audit
    if hits.empty:
        raise ValueError("audit must hold a verified violation")
    v = hits.iloc[0]
    position = int(v.position)
    if not 0 <= position < len(stored):
        raise ValueError(f"stored must hold the audited run's {position + 1}+ inputs, got {len(stored)} rows")
    status, radius = str(stored.status.iloc[position]), float(stored.radius.iloc[position])
    lead = f"The drawn x' (test input {int(v.idx)}, certified class {int(v.label)}, UCAN's class at x' {int(v.top)}): "
    if status == "kept":
        return (lead + "Algorithm 1 **kept** x's certified region, so x' lies in a stored region and the memory-based "
                f"classifier answers it with x's class {int(v.label)}.")
    if status == "shrunk":
        inside = float(v.delta_l2) <= radius
        return (lead + f"Algorithm 1 **shrank** x's region to an ℓ2 ball of radius {radius:.3f}; x' lies at ℓ2 distance "
                f"{float(v.delta_l2):.3f}, " + ("inside it, so the memory-based classifier answers it with x's class "
                                               f"{int(v.label)}." if inside else
                                               "outside it, so x's stored region no longer vouches for x'."))
    return lead + f"x **abstains** under Algorithm 1 ({status}), so x' is not answered from x's region."


def memory_changes(memory_table: pd.DataFrame) -> pd.DataFrame:
    """What Algorithm 1 changed in each run of `ucan_tables.memory_table`: counts of certificates, not differences
    of means (a recomputed ALM moves in its last digits when nothing changed).

    Parameters
    ----------
    memory_table : pandas.DataFrame
        `ucan_tables.memory_table`'s table (columns column, lam, kept, shrunk, abstain_base, abstain_inside,
        abstain_intersect, acc_before, acc_after, acr_alm_before, acr_alm_after).

    Returns
    -------
    pandas.DataFrame
        Columns column, lam, regions (inputs of the run), shrunk, abstained (inputs Algorithm 1 made abstain:
        inside or meeting another class's region; the base classifier's own abstentions are not changes), changed
        (shrunk + abstained), keeps_half (ACR~ after ≥ half of before), acc_drop (certified accuracy, points),
        acr_alm_before, acr_alm_after.
    """
    need = {"column", "lam", "kept", "shrunk", "abstain_base", "abstain_inside", "abstain_intersect", "acc_before",
            "acc_after", "acr_alm_before", "acr_alm_after"}
    missing = sorted(need - set(memory_table.columns))
    if missing:
        raise ValueError(f"memory_table must have ucan_tables.memory_table's columns; missing {missing}")
    t = memory_table
    abstained = t.abstain_inside + t.abstain_intersect
    return pd.DataFrame(dict(column=t.column, lam=t.lam,
                             regions=t.kept + t.shrunk + t.abstain_base + abstained,
                             shrunk=t.shrunk, abstained=abstained, changed=t.shrunk + abstained,
                             keeps_half=t.acr_alm_after >= 0.5 * t.acr_alm_before,
                             acc_drop=t.acc_before - t.acc_after,
                             acr_alm_before=t.acr_alm_before, acr_alm_after=t.acr_alm_after)).reset_index(drop=True)


def memory_line(row: object) -> str:
    """One run of `memory_changes` as the notebook prints it.

    Parameters
    ----------
    row : namedtuple
        A row of `memory_changes` (from `itertuples`).

    Returns
    -------
    str
        "digits  λ = 0.25: Algorithm 1 changes 69 of 100 certificates (69 shrunk, 0 made to abstain); ...".
    """
    return (f"{row.column:7s} λ = {row.lam}: Algorithm 1 changes {int(row.changed)} of {int(row.regions)} "
            f"certificates ({int(row.shrunk)} shrunk, {int(row.abstained)} made to abstain); "
            f"keeps at least half the ACR~: {bool(row.keeps_half)}; "
            f"certified accuracy drops by at most 2 points: {bool(row.acc_drop <= 2)}")


def memory_markdown(memory_table: pd.DataFrame) -> str:
    """The memory-based repair in the summary: per run, the certificates changed and ACR~ and accuracy before/after.

    Parameters
    ----------
    memory_table : pandas.DataFrame
        `ucan_tables.memory_table`'s table.

    Returns
    -------
    str
        Markdown.
    """
    ch = memory_changes(memory_table)
    t = memory_table.reset_index(drop=True)
    lines = [f"  * {short_name(r.column)}, λ = {r.lam:g}: {int(r.changed)} of {int(r.regions)} certificates changed "
             f"({int(r.shrunk)} shrunk, {int(r.abstained)} made to abstain), ACR̃ {t.acr_alm_before[i]:.2f} → "
             f"{t.acr_alm_after[i]:.2f}, certified accuracy {t.acc_before[i]:.1f}% → {t.acc_after[i]:.1f}%"
             for i, r in enumerate(ch.itertuples())]
    touched = int((ch.changed > 0).sum())
    return ("* **Memory-based repair.** ANCER's Algorithm 1 over UCAN's input-dependent regions makes the classifier "
            "sound in ANCER's sense (§6); it shrinks a region that meets an earlier region of another class and makes "
            f"an input inside one abstain. It changes certificates in {touched} of the {len(ch)} runs:\n"
            + "\n".join(lines)
            + "\n\n  It does not make the certificates of UCAN's g' sound: it certifies a different, stateful classifier.")


# -- the summary ------------------------------------------------------------------------------------------------
def table1_markdown(wrong: Mapping[str, list[str]], n_rows: int) -> str:
    """UCAN Table 1 in the summary: the errata of whole columns, how many rows' radii are right as printed apart
    from those, which rows and ALM cells are wrong.

    Parameters
    ----------
    wrong : mapping of str to list of str
        `ucan_tables.table1_errata()`: "radius" and "alm" -> the Table 1 keys corrected; "columns" (optional) -> the
        errata of whole columns.
    n_rows : int
        The number of Table 1 rows.

    Returns
    -------
    str
        Markdown.
    """
    if len(wrong["radius"]) > n_rows:
        raise ValueError(f"n_rows ({n_rows}) must be at least the {len(wrong['radius'])} wrong radius rows")
    columns = list(wrong.get("columns", []))
    lead = (f"Apart from {len(columns)} errata that run down a column ({'; '.join(columns)}: the notebook's errata "
            "table above), " if columns else "")
    return (f"* **Table 1.** {lead}{n_rows - len(wrong['radius'])} of the {n_rows} rows' radii are right as printed; "
            "wrong in all three radius columns: "
            + " and ".join(row_title(k) for k in wrong["radius"])
            + " (the printed uniform ℓ∞ radius is the square root of a negative number; the printed power-law radius "
              f"drops d and is unsound for a > 2d). {len(wrong['alm'])} ALM cells ("
            + " and ".join(row_title(k) for k in wrong["alm"])
            + ") and §5's ALM root are wrong too. Every correct row is tested by Monte Carlo against its source "
              "(`tests/test_ucan_radii.py`).")


def headline_markdown(facts: Mapping[str, Mapping[str, float]], improvements: Mapping[str, pd.DataFrame],
                      paper_imp: Mapping[str, float], grid_n: int) -> str:
    """UCAN's headline (the last row and column of Tables 2-3) on our data, read two ways.

    Parameters
    ----------
    facts : mapping of str to mapping
        Column -> `ucan_tables.at_largest_radius`.
    improvements : mapping of str to pandas.DataFrame
        Column -> `ucan_tables.improvement_rows` (first row over the best baseline at its ℓ2 radius, second over
        ANCER at its ALM).
    paper_imp : mapping of str to float
        Dataset -> UCAN's printed improvement at the largest radius (%).
    grid_n : int
        The radii > 0 of the grid.

    Returns
    -------
    str
        Markdown. The closing sentence counts the (column, radius) pairs where both improvements are defined, those
        where the one over ANCER at its ALM is at most the one over the best baseline, and those where it is negative.
    """
    from .ucan_tables import below_ancer_alm

    lines = []
    n_both = n_smaller = n_negative = 0
    for name, f in facts.items():
        imp = improvements[name]
        below = below_ancer_alm(imp)
        both = imp.iloc[0].notna() & imp.iloc[1].notna()
        n_both += int(both.sum())
        n_smaller += int((imp.iloc[1][both] <= imp.iloc[0][both] + 1e-9).sum())
        n_negative += int((imp.iloc[1][both] < 0).sum())
        lines.append(f"  * {short_name(name)}: {f['ours']:.1f}% at radius {f['radius']:g} against "
                     f"{f['best_baseline']:.1f}% for the best baseline at its ℓ2 radius, improvement "
                     f"{pct(f['over_baseline'])}; against ANCER at its ALM ({f['ancer_alm']:.1f}%) "
                     f"{pct(f['over_ancer_alm'])}, and below ANCER at its ALM at {len(below)} of the {grid_n} radii > 0 "
                     "of the grid" + (f" ({_listing(below)})" if below else "") + ".")
    return ("* **UCAN's headline (Tables 2-3) reproduces in form, not in substance.** The input-dependent NPG at the "
            f"largest radius of the tables (paper: {', '.join(f'{pct(v)} on {ds}' for ds, v in paper_imp.items())}):\n"
            + "\n".join(lines)
            + "\n\n  UCAN Table 3 compares its ALM accuracy with ANCER's ℓ2-radius accuracy; read against ANCER's own "
              f"ALM (its proxy radius), the improvement is at most the one UCAN's way at {n_smaller} of the {n_both} "
              f"(column, radius) pairs where both are defined, and negative at {n_negative}; and these certificates "
              "are not sound (C9 below).")


def universal_markdown(tables: Mapping[str, pd.DataFrame], gammas: Mapping[str, float],
                       sigmas: Mapping[str, np.ndarray]) -> str:
    """The universal NPG in the summary: its ACR~ against Cohen's ACR, its ℓ2 ACR, and the shape of its σ.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Column -> `ucan_tables.accuracy_table`.
    gammas : mapping of str to float
        Column -> the universal NPG's γ.
    sigmas : mapping of str to numpy.ndarray
        Column -> the universal NPG's σ map (it does not depend on x; Figure 7's).

    Returns
    -------
    str
        Markdown. The share of pixels with σ_i < γ/10 and σ_i > γ/2 is counted from `sigmas`.
    """
    uni = {name: (float(t.loc[("Universal", "ALM"), "mean"]), float(t.loc[("Universal", "radius"), "mean"]),
                  float(t.loc[(COHEN, "radius"), "mean"])) for name, t in tables.items()}
    shape = []
    for name, s in sigmas.items():
        s = np.asarray(s, dtype=float).reshape(-1)
        g = float(gammas[name])
        shape.append(f"{int((s < g / 10).sum())} of {s.size} pixels below γ/10 and {int((s > g / 2).sum())} above "
                     f"γ/2 ({name})")
    return (f"* **The universal NPG** (γ = {', '.join(f'{g:g} on {name}' for name, g in gammas.items())}, "
            "chosen on the validation split; the paper uses 5) has ACR̃ "
            + ", ".join(f"{a:.2f} ({name})" for name, (a, _, _) in uni.items()) + " against Cohen's ACR "
            + ", ".join(f"{c:.2f}" for _, (_, _, c) in uni.items()) + ", but an ℓ2 ACR of only "
            + ", ".join(f"{r:.3f}" for _, (_, r, _) in uni.items())
            + ": its σ has " + "; ".join(shape) + ", as Figure 7 draws, and the ℓ2 radius is set by the smallest σ_i, "
              "so its region is a thin, long ellipsoid.")


def gamma_reuse_markdown(clean: Mapping[tuple[str, str, float], float], gammas: Mapping[tuple[str, str], float],
                         selection_lam: float, selections: Mapping[str, pd.DataFrame]) -> str:
    """γ (and the pattern-fixed NPG's κ) chosen at one λ and reused at every λ: the values the selection refused
    (`ucan_study.Study.select`) and the (column, NPG, λ) whose certified accuracy at radius 0 on the test inputs is
    still < 50%.

    Parameters
    ----------
    clean : mapping of (str, str, float) to float
        (column, NPG kind, λ) -> certified accuracy at radius 0 (%), for the universal and input-dependent NPGs.
    gammas : mapping of (str, str) to float
        (column, NPG kind) -> its γ.
    selection_lam : float
        The λ at which γ was chosen.
    selections : mapping of str to pandas.DataFrame
        Column -> `Study.select`'s table (columns kind, param, value, elsewhere, eligible).

    Returns
    -------
    str
        Markdown.
    """
    symbol = {"kappa": "κ", "gamma": "γ"}
    refused = [f"{short_name(name)}, {KIND_NAMES[r.kind]} {symbol[r.param]} = {r.value:g} ({r.elsewhere:+.1f} points)"
               for name, t in selections.items() for r in t.itertuples() if not r.eligible]
    collapsed = [f"{short_name(name)}, {KIND_NAMES[kind]} (γ = {gammas[name, kind]:g}) at λ = {lam:g}: {acc:.1f}%"
                 for (name, kind, lam), acc in clean.items() if acc < 50]
    return (f"* **γ is chosen once, at λ = {selection_lam:g}, and reused at every λ** (UCAN fixes γ per dataset). "
            "An NPG's σ is below γ and, for the input-dependent NPG, close to it (geomean σ(x) / γ in the C9 bullet), "
            "so its noise's scale is about γλ, and a γ that pays at the selection λ can drown the input at a larger "
            "one. The selection refuses such a γ, and by the same rule a pattern-fixed κ (its validation accuracy at "
            f"another λ more than {100 * ACCURACY_SLACK:g} points below the fine-tuned isotropic control's there): "
            + ("; ".join(refused) if refused else "it refused none") + ". On the test inputs, certified accuracy at "
            "radius 0 is below 50% for " + ("; ".join(collapsed) if collapsed else "no NPG at any λ") + ".")


def c8_markdown(c8: Mapping[str, pd.DataFrame], tables: Mapping[str, pd.DataFrame],
                min_sigma: Mapping[str, float], pattern_npg: str = "Pattern-fixed ℓ2") -> str:
    """Claim C8 in the summary: the pattern-fixed NPG's curve against Cohen's per λ, the ACR~ against the ACR, and
    the pattern-fixed ℓ2 radius.

    Parameters
    ----------
    c8 : mapping of str to pandas.DataFrame
        Column -> `ucan_tables.claim_c8`.
    tables : mapping of str to pandas.DataFrame
        Column -> `ucan_tables.accuracy_table`.
    min_sigma : mapping of str to float
        Column -> the smallest σ_i of the pattern at the chosen κ.
    pattern_npg : str, default "Pattern-fixed ℓ2"
        The pattern-fixed NPG read.

    Returns
    -------
    str
        Markdown; the (column, NPG, λ) whose ACR~ is not above Cohen's ACR are named, and the pattern-fixed ℓ2 ACR is
        called "below" or "not below" Cohen's from the numbers.
    """
    lines = []
    for name, table in c8.items():
        for r in table[table.npg == pattern_npg].itertuples():
            verdict = ("at or above Cohen at every ALM of the grid and above somewhere" if r.holds else
                       f"below Cohen at ALM {_listing(r.below_at)}" if r.below_at else "never above Cohen")
            lines.append(f"  * {short_name(name)}, λ = {r.lam:g}: {verdict} "
                         f"(clean accuracy {r.clean_gap:+.1f} points against Cohen's)")
    not_above = [f"{short_name(name)} {r.npg} at λ = {r.lam:g}" for name, t in c8.items()
                 for r in t.itertuples() if not r.acr_alm > r.cohen_acr]
    pat = {name: (float(t.loc[(pattern_npg, "radius"), "mean"]), float(t.loc[(COHEN, "radius"), "mean"]))
           for name, t in tables.items()}
    below = all(p < c for p, c in pat.values())
    return (f"* **Claim C8** (anisotropic beats isotropic at equal ALM), {pattern_npg.replace('P', 'p', 1)} NPG:\n"
            + "\n".join(lines)
            + f"\n\n  Every NPG's ACR̃ exceeds Cohen's ACR at the same λ: **{not not_above}**"
            + (f" (not: {'; '.join(not_above)})" if not_above else "")
            + ". The trained NPGs raise geomean(σ), so their curves can cross Cohen's at the same λ (lower at small "
              f"radii, higher at large ones; Figure 4). The {pattern_npg.split()[0].lower()} ℓ2 *radius* is "
            + ("below" if below else "not below everywhere") + " Cohen's (ACR "
            + ", ".join(f"{p:.2f} against {c:.2f} on {n}" for n, (p, c) in pat.items())
            + "): its smallest σ_i, the centre's, is " + ", ".join(f"{m:.2f} ({n})" for n, m in min_sigma.items())
            + " at the chosen κ (Figure 3).")


def c8_control_markdown(c8: Mapping[str, pd.DataFrame], c8_effects: Mapping[str, pd.DataFrame],
                        pattern_npg: str = "Pattern-fixed ℓ2", paper_lam: float = 1.0) -> str:
    """Claim C8 against the control of equal fine-tuning in the summary: the control's ACR, the verdicts' counts, and
    the pattern-fixed NPG's effects at the paper's λ.

    Parameters
    ----------
    c8 : mapping of str to pandas.DataFrame
        Column -> `ucan_tables.claim_c8` (columns lam, fine_tuned_acr).
    c8_effects : mapping of str to pandas.DataFrame
        Column -> `ucan_tables.c8_effects` (columns lam, npg, effect, effect_fine_tuned).
    pattern_npg : str, default "Pattern-fixed ℓ2"
        The NPG whose effects are quoted.
    paper_lam : float, default 1.0
        The λ of UCAN §5.1.

    Returns
    -------
    str
        Markdown.
    """
    counts = pd.Series([r.effect_fine_tuned.verdict for t in c8_effects.values() for r in t.itertuples()]).value_counts()
    ft_acr = {name: t.groupby("lam").fine_tuned_acr.first() for name, t in c8.items()}
    at_paper = [f"{short_name(name)}: against Cohen {r.effect.text()} ({r.effect.verdict}), against the fine-tuned "
                f"control {r.effect_fine_tuned.text()} ({r.effect_fine_tuned.verdict})"
                for name, t in c8_effects.items() for r in t.itertuples() if r.npg == pattern_npg and r.lam == paper_lam]
    return ("* **Claim C8 against the control of equal fine-tuning.** Cohen's model fine-tuned exactly as the NPGs are "
            "reaches an ACR of " + "; ".join(f"{', '.join(f'{v:.2f}' for v in acr)} ({short_name(name)}, "
                                             f"λ = {_listing(acr.index)})" for name, acr in ft_acr.items())
            + f". Of the {int(counts.sum())} (column, NPG, λ) comparisons of ACR̃ against it, "
            + ", ".join(f"{int(counts.get(v, 0))} {v}" for v in ("holds", "fails", "within noise"))
            + f". At the paper's λ = {paper_lam:.1f}, {pattern_npg.replace('P', 'p', 1)} noise's ACR̃ minus the ACR: "
            + "; ".join(at_paper) + ".")


def c9_markdown(audit_counts: Mapping[tuple[str, str], Mapping[str, int]], audit_n: int, alpha: float,
                gamma_ratio: Mapping[str, float]) -> str:
    """Claim C9 in the summary: the audit's counts per column, the universal control, and the σ(x) / γ ratio.

    Parameters
    ----------
    audit_counts : mapping of (str, str) to mapping
        (column, "input" or "universal") -> `ucan_tables.audit_summary`.
    audit_n : int
        The N of the re-estimation.
    alpha : float
        Its Clopper-Pearson level.
    gamma_ratio : mapping of str to float
        Column -> geomean σ(x) / γ of the input-dependent NPG at the audit's λ.

    Returns
    -------
    str
        Markdown; the heading says "not sound" when a violation was verified in some column, else that none was
        found (which does not prove soundness).
    """
    names = list(dict.fromkeys(name for name, _ in audit_counts))
    inp = {name: audit_counts[name, INPUT_NPG] for name in names}
    found = any(s["verified"] > 0 for s in inp.values())
    head = ("the input-dependent certificate is not sound." if found else
            "no violation of the input-dependent certificate was verified (which does not prove it sound).")
    return (f"* **Claim C9: {head}** The search drove the soft smoothed probability of the certified class below 1/2 in "
            + ", ".join(f"{s['candidates']} of the {s['searched']} certified regions searched ({name})"
                        for name, s in inp.items())
            + f", and re-estimation with N = {audit_n:,} verified "
            + ", ".join(f"{s['verified']} of {s['re_estimated']} ({name})" for name, s in inp.items())
            + " as points where UCAN's own smoothed classifier returns another class with probability > 1/2 "
              f"(α = {alpha:g}), inside the region certified for x. The universal NPG, to which Theorem 3.2 applies, "
              "gives "
            + ", ".join(f"{audit_counts[name, 'universal']['verified']} ({name})" for name in names
                        if (name, UNIVERSAL_NPG) in audit_counts)
            + ". Figure 7 shows the mechanism: geomean σ(x) / γ = "
            + ", ".join(f"{g:.3f} ({name})" for name, g in gamma_ratio.items())
            + ", i.e. σ(x) ≈ γ nearly everywhere (σ(x) < γ), and μ(x) is a high-contrast copy of the digit: an "
              "unsmoothed network carries the class through the noise, and the certificate does not account for how "
              "μ changes with x.")


def figure5_markdown(verdicts: pd.DataFrame, column: str, std: float) -> str:
    """UCAN Figure 5 on one column in the summary: which NPGs beat isotropic noise in every Table 1 row.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        `ucan_tables.universality_verdicts` (indexed by NPG; columns alm_above_everywhere,
        accuracy_below_everywhere, rows, alm_above_fine_tuned_everywhere).
    column : str
        The data column.
    std : float
        The per-coordinate standard deviation of the noise.

    Returns
    -------
    str
        Markdown.
    """
    def which(flag: str) -> str:
        names = [n for n in verdicts.index if verdicts.loc[n, flag]]
        return ", ".join(names) if names else "no NPG"

    return (f"* **Figure 5** ({short_name(column)}, noise std {std:g} instead of UCAN's 1): in every one of the "
            f"{int(verdicts.rows.iloc[0])} Table 1 rows, a larger ACR̃ than isotropic noise for "
            + which("alm_above_everywhere") + " (UCAN: \"UCAN can universally amplify the certified robustness\"); "
            + "a lower clean accuracy than isotropic noise in every row for " + which("accuracy_below_everywhere")
            + ". Against isotropic noise given the NPGs' fine-tuning (the control of equal training), a larger ACR̃ in "
              "every row for " + which("alm_above_fine_tuned_everywhere") + ".")
