"""Notebook 03's findings in words and its claims table rows (ANCER §7.1-7.2 on the image columns).

Every function here turns numbers that `image_study` computed into Markdown or into rows of the claims table
(`report.claims`); none computes a certificate. The notebook shows the words first and folds the call.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from ..evaluation.intervals import FAILS, HOLDS, RATIO, VERDICTS, WITHIN_NOISE, Effect
from ..methods.registry import ANCER, FIXED, ISOTROPIC
from ..report import claims, style
from ..runs.selection import ACCURACY_SLACK, refused_step
from .image_study import CLAIMS, METHOD_NAMES, SELECTION_SIGMA

#: the notebook whose claims these are
NOTEBOOK = "03_image_certification"
#: a verdict as a verb
IS = {HOLDS: "holds", FAILS: "fails", WITHIN_NOISE: "is within noise"}
#: how the findings name the quick profile's columns
MODEL = {"digits": "the MLP", "digits_cnn": "the CNN", "mnist": "MNIST"}
#: the findings of the quick profile that rest on ANCER's step chosen on the MNIST column
MNIST_RESTS_ON = ("the claims C1-C3 on this column (below)", "notebook 05's Average Σ and Figure 5",
                  "notebook 04's order effect of the memory")
#: two volume gains (ANCER's ACR~ over Isotropic DD's) "differ" when the larger is more than this many times the
#: smaller
GAIN_RATIO = 2.0


def norm_label(norm: str) -> str:
    """The norm as prose writes it: "ℓ2" or "ℓ1".

    Parameters
    ----------
    norm : str
        "l2" or "l1".

    Returns
    -------
    str
    """
    if norm not in ("l2", "l1"):
        raise ValueError(f"norm must be 'l2' or 'l1', got {norm!r}")
    return style.norm_symbol(norm, tex=False)


def paper_value(value: float, kind: str) -> str:
    """The paper's number for a claim as the claims table prints it: "+61%" for a ratio, "+0.395" for a difference.

    Parameters
    ----------
    value : float
        The paper's effect (`image_study.paper_claim_effects`).
    kind : str
        The effect's kind, "ratio" or "difference".

    Returns
    -------
    str
    """
    return f"{value:+.0%}" if kind == RATIO else f"{value:+.3f}"


def claim_rows(effects: Mapping[tuple[str, str], Mapping[str, Effect]],
               paper_effects: Mapping[tuple[str, str], Mapping[str, float]], titles: Mapping[str, str],
               columns: Mapping[str, str]) -> list[dict]:
    """The claims table's rows of C1-C3 on every (column, norm), beside the paper's Table 1 (ℓ2) or 2 (ℓ1).

    Parameters
    ----------
    effects : mapping of (str, str) to mapping of str to Effect
        {(column, norm): {claim: effect}} (`image_study.claim_effects`), in the order the rows are written.
    paper_effects : mapping of (str, str) to mapping of str to float
        {(column, norm): {claim: the paper's effect}} (`image_study.paper_claim_effects`).
    titles : mapping of str to str
        Per column, its title in words (`image_figures.column_title`).
    columns : mapping of str to str
        Per column, the paper dataset it stands in for ("CIFAR-10" or "ImageNet").

    Returns
    -------
    list of dict
        `claims.claim_row` rows, setting "<title>, ℓ2" and paper "<effect> (<dataset>, Table <1 or 2>)".
    """
    return [claims.claim_row(
        claim, f"{titles[name]}, {norm_label(norm)}", CLAIMS[claim][0], e,
        paper_value(paper_effects[name, norm][claim], e.kind)
        + f" ({columns[name]}, Table {1 if norm == 'l2' else 2})", NOTEBOOK)
        for (name, norm), found in effects.items() for claim, e in found.items()]


def scripts_claim_rows(scripts_effects: Mapping[str, Mapping[str, Effect]],
                       scripts_sigmas: Mapping[str, Sequence[float]],
                       paper_effects: Mapping[tuple[str, str], Mapping[str, float]], titles: Mapping[str, str],
                       columns: Mapping[str, str]) -> list[dict]:
    """The claims table's rows of C1-C3 at ℓ1 with Table 2 read as λ = σ/√3 (ANCER's scripts).

    Parameters
    ----------
    scripts_effects : mapping of str to mapping of str to Effect
        {column: {claim: effect}} on the σ in that reading's range, in the order the rows are written.
    scripts_sigmas : mapping of str to sequence of float
        Per column, our σ in that range (`image_study.matched_sigmas`).
    paper_effects : mapping of (str, str) to mapping of str to float
        {(column, norm): {claim: the paper's effect}}; the "l1" entries are used.
    titles : mapping of str to str
        Per column, its title in words.
    columns : mapping of str to str
        Per column, the paper dataset it stands in for.

    Returns
    -------
    list of dict
        `claims.claim_row` rows, setting "<title>, ℓ1, Table 2 read as λ = σ/√3 (our σ = ...)".
    """
    return [claims.claim_row(
        claim, f"{titles[name]}, ℓ1, Table 2 read as λ = σ/√3 (our σ = {', '.join(f'{v:g}' for v in scripts_sigmas[name])})",
        CLAIMS[claim][0], e,
        paper_value(paper_effects[name, "l1"][claim], e.kind) + f" ({columns[name]}, Table 2)", NOTEBOOK)
        for name, found in scripts_effects.items() for claim, e in found.items()]


def verdicts(effects: Mapping[tuple[str, str], Mapping[str, Effect]]) -> dict[tuple[str, str], dict[str, str]]:
    """Each claim's verdict per (column, norm).

    Parameters
    ----------
    effects : mapping of (str, str) to mapping of str to Effect
        {(column, norm): {claim: effect}}.

    Returns
    -------
    dict of (str, str) to dict of str to str
        {(column, norm): {claim: "holds", "fails" or "within noise"}}.
    """
    return {key: {c: e.verdict for c, e in found.items()} for key, found in effects.items()}


def margins(best: Mapping[tuple[str, str], pd.DataFrame]) -> dict[tuple[str, str], float]:
    """ANCER's ACR~ over Isotropic DD's, minus 1, per (column, norm) best-over-σ table.

    Parameters
    ----------
    best : mapping of (str, str) to pandas.DataFrame
        {(column, norm): `image_study.best_table`} (rows "Isotropic DD", "ANCER"; column acr_proxy).

    Returns
    -------
    dict of (str, str) to float
    """
    out = {}
    for key, t in best.items():
        iso, ancer = float(t.loc[METHOD_NAMES[ISOTROPIC], "acr_proxy"]), float(t.loc[METHOD_NAMES[ANCER], "acr_proxy"])
        if iso <= 0:
            raise ValueError(f"best[{key!r}] has Isotropic DD's ACR~ {iso!r}; a relative gain needs it > 0")
        out[key] = ancer / iso - 1.0
    return out


def iso_ahead(best: Mapping[tuple[str, str], pd.DataFrame]) -> dict[tuple[str, str], float]:
    """Isotropic DD's ℓp ACR minus Fixed σ's per (column, norm) best-over-σ table.

    Parameters
    ----------
    best : mapping of (str, str) to pandas.DataFrame
        {(column, norm): `image_study.best_table`} (rows "Fixed σ", "Isotropic DD"; column acr).

    Returns
    -------
    dict of (str, str) to float
    """
    return {key: float(t.loc[METHOD_NAMES[ISOTROPIC], "acr"] - t.loc[METHOD_NAMES[FIXED], "acr"])
            for key, t in best.items()}


def where(verdict: Mapping[tuple[str, str], Mapping[str, str]], claim: str, outcome: str, names: Iterable[str],
          norms: Sequence[str] = ("l2", "l1"), models: Mapping[str, str] | None = None) -> list[str]:
    """The (column, norm) pairs among `names` where `claim` has the verdict `outcome`, in words.

    Parameters
    ----------
    verdict : mapping of (str, str) to mapping of str to str
        {(column, norm): {claim: verdict}} (`verdicts`).
    claim : str
        A claim of `image_study.CLAIMS`, e.g. "C1/IsoDD".
    outcome : str
        "holds", "fails" or "within noise".
    names : iterable of str
        The columns to look at, in order.
    norms : sequence of str, default ("l2", "l1")
        The norms to look at, in order.
    models : mapping of str to str, optional
        How each column is named (default `MODEL`).

    Returns
    -------
    list of str
        E.g. ["the MLP at ℓ2", "the CNN at ℓ1"].
    """
    if outcome not in VERDICTS:
        raise ValueError(f"outcome must be one of {list(VERDICTS)}, got {outcome!r}")
    models = MODEL if models is None else models
    return [f"{models[n]} at {norm_label(m)}" for n in names for m in norms if verdict[n, m][claim] == outcome]


def confidence_cap_note(n: int, n_full: int, alpha: float, p_n: float, gap_n: float, gap_full: float,
                        quick: bool) -> str:
    """What a smaller N costs in certified ℓ2 radius, whatever the method.

    Parameters
    ----------
    n, n_full : int
        The column's N and the paper's.
    alpha : float
        CERTIFY's α.
    p_n : float
        The largest lower confidence bound on p_A that N samples can give (`image_study.confidence_cap`).
    gap_n, gap_full : float
        Φ⁻¹ of that bound at N and at the paper's N.
    quick : bool
        Whether the profile is the quick one (it says why it uses the smaller N).

    Returns
    -------
    str
    """
    if not gap_full > 0:
        raise ValueError(f"gap_full must be > 0, got {gap_full!r}")
    return (f"With α = {alpha:g}, N = {n:,} caps CERTIFY's lower confidence bound on p_A at {p_n:.4f} (all N "
            f"samples voting for the top class), i.e. an ℓ2 gap Φ⁻¹(p_A) ≤ {gap_n:.2f}, against {gap_full:.2f} at the "
            f"paper's N = {n_full:,}: the largest certifiable ℓ2 radius σ·Φ⁻¹(p_A) is {1 - gap_n / gap_full:.0%} lower, "
            f"at every σ and for every method alike."
            + (f" The quick profile certifies every column at N = {n:,} to keep `make all` within its 30-minute budget "
               "on 2 cores (README, 'Performance')." if quick else ""))


def table2_reading(feasible: pd.DataFrame) -> str:
    """Which reading of σ for uniform noise Table 2's Fixed σ rows allow, in words.

    Parameters
    ----------
    feasible : pandas.DataFrame
        `image_study.table2_feasibility`'s table indexed by (dataset, convention), with rows ("CIFAR-10" and
        "ImageNet") × ("std", "ancer_scripts") and columns largest_radius, lambda_max, possible.

    Returns
    -------
    str
        The verdict of each reading ("possible" / "impossible"), from `possible`.
    """
    by = feasible
    scripts = by.xs("ancer_scripts", level="convention").possible
    std = by.xs("std", level="convention").possible

    def verdict(ok: pd.Series) -> str:
        return "possible" if ok.all() else "impossible" if not ok.any() else "possible for some datasets only"

    return (f"Read as the scripts' λ = σ/√3, Table 2's Fixed σ rows are {verdict(scripts)} on §7.2's grid: CIFAR-10 "
            f"certifies inputs at radius {by.loc[('CIFAR-10', 'std'), 'largest_radius']:g} and ImageNet at "
            f"{by.loc[('ImageNet', 'std'), 'largest_radius']:g}, {'beyond' if not scripts.any() else 'against'} λ_max = "
            f"{by.loc[('CIFAR-10', 'ancer_scripts'), 'lambda_max']:.3f}. Read as λ = √3·σ (λ_max = "
            f"{by.loc[('CIFAR-10', 'std'), 'lambda_max']:.3f}) they are {verdict(std)}. So either the table was made at "
            "λ = √3·σ, or the scripts were run with nominal σ three times larger (σ_scripts = 3·σ_ours for the same λ) "
            "than §7.2 says; the paper does not say which. The companion keeps λ = √3·σ, and compares with Table 2 "
            "under both readings below: our ℓ1 table best over those of our σ whose λ lies in the paper grid's λ range "
            "under each reading (`image_study.matched_lambda`).")


def reading_changes(changed: Mapping[str, Mapping[str, tuple[str, str]]], titles: Mapping[str, str],
                    smallest_lambda: float) -> str:
    """Which ℓ1 verdicts change with the reading of σ (λ = √3·σ → λ = σ/√3), and why that range favours some methods.

    Parameters
    ----------
    changed : mapping of str to mapping of str to (str, str)
        {column: {claim: (verdict at λ = √3·σ, verdict at λ = σ/√3)}} for the claims whose verdict changes.
    titles : mapping of str to str
        Per column, its title in words.
    smallest_lambda : float
        The half-width λ of our smallest σ in the scripts' range.

    Returns
    -------
    str
    """
    return ("Which ℓ1 verdicts depend on the reading of σ (λ = √3·σ → λ = σ/√3): "
            + "; ".join(f"{titles[name]}: " + (", ".join(f"{c} {a} → {b}" for c, (a, b) in d.items()) or "none")
                        for name, d in changed.items())
            + ". The scripts' range holds only our smallest σ, whose λ is small: Fixed σ's radius stays below λ = "
            f"{smallest_lambda:.3f} there (Corollary 2), while the data-dependent methods optimize θ from that λ and "
            "may grow it, so a comparison at small λ can favour them. A Table 2 comparison of ℓ1 claims is therefore "
            "only as firm as the reading of σ behind it.")


def paper_gain_note(ranges: Mapping[str, tuple[float, float, Sequence[str], Sequence[str]]],
                    text_range: tuple[float, float]) -> str:
    """How much larger ANCER's ACR~ is than Isotropic DD's in the paper: its tables' rows against §7.1's words.

    Parameters
    ----------
    ranges : mapping of str to (float, float, sequence of str, sequence of str)
        Per norm ("l2", "l1"), `image_study.paper_range`: the smallest and largest gain and the row of each.
    text_range : (float, float)
        The range §7.1's text gives for ℓ2 (`image_study.PAPER_TEXT_PROXY_GAIN["l2"]`).

    Returns
    -------
    str
        Says whether a row of Table 1 reaches the text's upper end (rounded to whole percent, as printed).
    """
    lo2, hi2, row_lo2, row_hi2 = ranges["l2"]
    lo1, hi1, row_lo1, row_hi1 = ranges["l1"]
    text_lo, text_hi = text_range
    reached = round(100 * hi2) >= round(100 * text_hi)
    return (f"How much larger, in the paper: ANCER's ACR̃ over Isotropic DD's is {lo2:+.0%} ({' '.join(row_lo2)}) to "
            f"{hi2:+.0%} ({' '.join(row_hi2)}) in Table 1's rows (ℓΣ2) and {lo1:+.0%} ({' '.join(row_lo1)}) to "
            f"{hi1:+.0%} ({' '.join(row_hi1)}) in Table 2's (ℓΛ1). §7.1's text says \"between {text_lo:.0%} and "
            f"{text_hi:.0%}\"; "
            + (f"a row of Table 1 reaches {text_hi:.0%}." if reached
               else f"no row of Table 1 reaches {text_hi:.0%}, so we compare with the table."))


def radius0_cost(tables: Mapping[tuple[str, str], pd.DataFrame], slack: float) -> pd.DataFrame:
    """ANCER's certified accuracy at radius 0 against Isotropic DD's, per (column, norm, σ), beside the selection's
    slack.

    Parameters
    ----------
    tables : mapping of (str, str) to pandas.DataFrame
        {(column, norm): `image_study.per_sigma_table(..., names=True)`}: certified accuracy (%) with a column "0",
        indexed by (method display name, σ).
    slack : float
        The largest share of accuracy ANCER may lose against Isotropic DD to be eligible
        (`runs.selection.ACCURACY_SLACK`), in [0, 1).

    Returns
    -------
    pandas.DataFrame
        Columns column, norm, sigma, selection_sigma (whether the step was chosen at this σ), isotropic, ancer (%),
        cost (Isotropic DD's minus ANCER's, percentage points) and over_slack (cost > 100·slack).
    """
    if not (isinstance(slack, (int, float)) and 0 <= slack < 1):
        raise ValueError(f"slack must be a share in [0, 1), got {slack!r}")
    rows = []
    for (name, norm), t in tables.items():
        if "0" not in t.columns:
            raise ValueError(f"tables[{(name, norm)!r}] has no column '0' (certified accuracy at radius 0)")
        iso, ancer = t.loc[METHOD_NAMES[ISOTROPIC], "0"], t.loc[METHOD_NAMES[ANCER], "0"]
        for sigma in iso.index:
            cost = float(iso.loc[sigma] - ancer.loc[sigma])
            rows.append(dict(column=name, norm=norm, sigma=float(sigma),
                             selection_sigma=bool(math.isclose(sigma, SELECTION_SIGMA[norm])),
                             isotropic=float(iso.loc[sigma]), ancer=float(ancer.loc[sigma]), cost=cost,
                             over_slack=bool(cost > 100 * slack + 1e-9)))
    return pd.DataFrame(rows, columns=["column", "norm", "sigma", "selection_sigma", ISOTROPIC, ANCER, "cost",
                                       "over_slack"])


def validation_trade(selection: pd.DataFrame, column: str, grid_top: float,
                     slack: float = ACCURACY_SLACK) -> dict[str, dict[str, float]]:
    """What ANCER's chosen step did on the validation split against the top of its original grid, per norm.

    Parameters
    ----------
    selection : pandas.DataFrame
        `image_study.choose_all`'s table (columns column, norm, method, lr_relative, chosen, eligible, widened, acr,
        acr_proxy, accuracy).
    column : str
        The column, e.g. "mnist".
    grid_top : float
        The largest ANCER step of the column's original grid (× θ); it must be among the steps tried.
    slack : float, default `runs.selection.ACCURACY_SLACK`
        The eligibility rule's slack (a share of accuracy).

    Returns
    -------
    dict of str to dict of str to float
        Per norm: chosen (× θ), widened (how many steps were added beyond the grid), widened_up (how many of them lie
        past the grid's largest step; the others lie below its smallest), top_acr / top_proxy (ANCER's
        validation ACR and ACR~ at `grid_top`), pick_acr / pick_proxy / pick_accuracy (at the chosen step),
        iso_acr / iso_accuracy (Isotropic DD's chosen step), refused / refused_accuracy (the smallest larger step
        the eligibility rule refused at the selection σ, and its validation accuracy; NaN when none was tried),
        pick_elsewhere (the chosen step's smallest accuracy difference to Isotropic DD at the other σ, as a share;
        NaN when not checked) and refused_elsewhere (the (step, difference) pairs that kept the slack at the selection
        σ but not at another σ).
    """
    rows = selection[selection.column == column]
    if rows.empty:
        raise ValueError(f"selection has no rows for column {column!r}; it has {sorted(set(selection.column))}")
    out = {}
    for norm, g in rows.groupby("norm", sort=False):
        ancer, iso = g[g.method == ANCER], g[g.method == ISOTROPIC]
        top = ancer[ancer.lr_relative.map(lambda v: math.isclose(v, grid_top))]
        if len(top) != 1:
            raise ValueError(f"grid_top {grid_top!r} is not one of ANCER's steps tried for {column} {norm}: "
                             f"{sorted(ancer.lr_relative)}")
        pick, iso_pick, top = ancer[ancer.chosen].iloc[0], iso[iso.chosen].iloc[0], top.iloc[0]
        floor = float(iso_pick.accuracy) - slack
        refused = refused_step(g, ANCER, slack)
        gaps = pd.to_numeric(ancer.elsewhere, errors="coerce") if "elsewhere" in ancer else pd.Series(math.nan,
                                                                                                        ancer.index)
        away = ancer[(gaps < -slack) & (ancer.accuracy >= floor)]
        widened = ancer[ancer.widened.astype(bool)]
        out[norm] = dict(chosen=float(pick.lr_relative), widened=len(widened),
                         widened_up=int((widened.lr_relative > grid_top).sum()), top_acr=float(top.acr),
                         top_proxy=float(top.acr_proxy), pick_acr=float(pick.acr), pick_proxy=float(pick.acr_proxy),
                         pick_accuracy=float(pick.accuracy), iso_acr=float(iso_pick.acr),
                         iso_accuracy=float(iso_pick.accuracy),
                         refused=math.nan if refused is None else float(refused.lr_relative),
                         refused_accuracy=math.nan if refused is None else float(refused.accuracy),
                         pick_elsewhere=float(gaps[pick.name]),
                         refused_elsewhere=[(float(r.lr_relative), float(gaps[i])) for i, r in away.iterrows()])
    return out


def _widenings(count: int) -> str:
    """"1 widening", "4 widenings"."""
    return f"{count} widening{'' if count == 1 else 's'}"


def _where_widened(v: Mapping[str, float]) -> str:
    """"(inside its grid)", "(4 widenings past the grid's largest step)", "(1 widening below the grid's smallest
    step)" or both, from `validation_trade`'s counts for one norm."""
    up, down = v["widened_up"], v["widened"] - v["widened_up"]
    if not v["widened"]:
        return "(inside its grid)"
    return "(" + " and ".join([f"{_widenings(up)} past the grid's largest step"] * bool(up)
                              + [f"{_widenings(down)} below the grid's smallest step"] * bool(down)) + ")"


def _points(v: float) -> str:
    """A percentage or a number of percentage points as the prose prints it: 93.75, 80, 13.75."""
    return f"{v:.4g}"


def sensitivity_verdicts(sensitivity: pd.DataFrame, slack: float) -> pd.DataFrame:
    """Whether the test split agrees with the validation split's choice of ANCER's step, per column and norm.

    Parameters
    ----------
    sensitivity : pandas.DataFrame
        `image_study.step_sensitivity`'s table.
    slack : float
        `runs.selection.ACCURACY_SLACK`, a share in [0, 1).

    Returns
    -------
    pandas.DataFrame
        Columns column, norm, sigma, chosen_cost and refused_cost (Isotropic DD's certified accuracy at radius 0
        minus ANCER's with that step, percentage points; NaN when no step was refused) and agrees: the chosen step
        costs at most 100·slack and the refused one (when tried) more.
    """
    if not (isinstance(slack, (int, float)) and 0 <= slack < 1):
        raise ValueError(f"slack must be a share in [0, 1), got {slack!r}")
    rows = []
    for (column, norm), g in sensitivity.groupby(["column", "norm"], sort=False):
        by = g.set_index("role").accuracy
        if "Isotropic DD" not in by.index or "chosen" not in by.index:
            raise ValueError(f"sensitivity must hold Isotropic DD's and the chosen step's rows for {(column, norm)}")
        chosen = float(by["Isotropic DD"] - by["chosen"])
        refused = float(by["Isotropic DD"] - by["refused"]) if "refused" in by.index else math.nan
        allowed = 100 * slack + 1e-9
        rows.append(dict(column=column, norm=norm, sigma=float(g.sigma.iloc[0]), chosen_cost=chosen,
                         refused_cost=refused, agrees=bool(chosen <= allowed and (math.isnan(refused)
                                                                                  or refused > allowed))))
    return pd.DataFrame(rows, columns=["column", "norm", "sigma", "chosen_cost", "refused_cost", "agrees"])


def _acr_split(by: pd.DataFrame, steps: Sequence[str]) -> str:
    """", but in ACR …" when some of ANCER's `steps` are ahead of Isotropic DD's ACR and the chosen one is not; else
    "" (the sensitivity rows `by`, indexed by role)."""
    iso = by.loc["Isotropic DD", "acr"]
    ahead = [r for r in steps if by.loc[r, "acr"] > iso]
    if "chosen" not in steps or by.loc["chosen", "acr"] >= iso or not ahead:
        return ""
    acrs = ", ".join(f"{by.loc[r, 'acr']:.2f}" for r in ahead)
    return (f"; in ACR, though, the {' and the '.join(ahead)} step{'s' if len(ahead) > 1 else ''} ({acrs}) "
            f"{'are' if len(ahead) > 1 else 'is'} ahead of Isotropic DD's {iso:.2f} and the chosen step "
            f"({by.loc['chosen', 'acr']:.2f}) behind it: eligibility checks the accuracy at radius 0 only, and among "
            "eligible steps the selection follows ANCER's own objective (App. C), not the ACR")


def step_note(cost: pd.DataFrame, val: Mapping[str, Mapping[str, float]], sensitivity: pd.DataFrame, title: str,
              column: str, slack: float, validation_inputs: int, rests_on: Sequence[str] = ()) -> str:
    """What ANCER's chosen step on one column does on the test split, said where the selection is shown: the step
    and how it was chosen, the sensitivity run at the selection σ (`image_study.step_sensitivity`) with a verdict on
    whether the test split agrees with the validation split's choice, and the cost at radius 0 at the other σ.

    Parameters
    ----------
    cost : pandas.DataFrame
        `radius0_cost`'s table (every column; the rows of `column` are used).
    val : mapping of str to mapping of str to float
        `validation_trade` for `column`, per norm.
    sensitivity : pandas.DataFrame
        `image_study.step_sensitivity`'s table (the rows of `column` are used).
    title : str
        The column's title in words.
    column : str
        The column, e.g. "mnist".
    slack : float
        `runs.selection.ACCURACY_SLACK`, a share in [0, 1).
    validation_inputs : int
        How many validation inputs the selection certified.
    rests_on : sequence of str, default ()
        The findings that rest on this step; none named when empty.

    Returns
    -------
    str
        Markdown; whether the test split agrees with the choice is `sensitivity_verdicts`'.
    """
    rows, sens = cost[cost.column == column], sensitivity[sensitivity.column == column]
    if rows.empty or sens.empty:
        raise ValueError(f"cost and sensitivity must have rows for column {column!r}")
    allowed = 100 * slack
    lines = [f"**ANCER's step on {title}.** The selection chose "
             + " and ".join(f"{v['chosen']:.3g} θ at {norm_label(n)} {_where_widened(v)}" for n, v in val.items())
             + f". Eligibility (`selection.ACCURACY_SLACK`: at most {_points(allowed)} points of accuracy below "
             f"Isotropic DD's) is checked on the {validation_inputs} validation inputs (every class alike, `data.stratified_subset`) at "
             "the selection σ, where ANCER "
             "kept " + " and ".join(f"{_points(100 * v['pick_accuracy'])}% against {_points(100 * v['iso_accuracy'])}% "
                                    f"({norm_label(n)}, σ = {SELECTION_SIGMA[n]:g})" for n, v in val.items())
             + "; " + " and ".join(
                 f"the smallest larger step refused there, {v['refused']:.3g} θ, kept "
                 f"{_points(100 * v['refused_accuracy'])}% ({norm_label(n)})" if not math.isnan(v["refused"])
                 else f"no larger step fell more than the slack below there ({norm_label(n)})"
                 for n, v in val.items()) + "."]
    checked = {n: v for n, v in val.items() if not math.isnan(v["pick_elsewhere"])}
    if checked:
        lines.append("The step is reused at the other σ as the same multiple of θ, so it was checked there too: "
                     + "; ".join(
                         (", ".join(f"{step:.3g} θ was refused there ({_points(-100 * gap)} points below Isotropic DD)"
                                    for step, gap in v["refused_elsewhere"]) + ", and " if v["refused_elsewhere"]
                          else "")
                         + ("the chosen step is at or above Isotropic DD's accuracy at every other σ"
                            if v["pick_elsewhere"] >= 0 else f"the chosen step is at most "
                            f"{_points(-100 * v['pick_elsewhere'])} points below Isotropic DD's there")
                         + f" ({norm_label(n)})" for n, v in checked.items()) + ".")
    verdict = sensitivity_verdicts(sens, slack).set_index("norm")
    for norm, g in sens.groupby("norm", sort=False):
        by, v = g.set_index("role"), verdict.loc[norm]
        steps = [r for r in ("grid's largest", "chosen", "refused") if r in by.index]
        said = ", ".join(f"{_points(by.loc[r, 'accuracy'])}% with the {r} step ({by.loc[r, 'lr_relative']:.3g} θ; "
                         f"ACR {by.loc[r, 'acr']:.2f}, ACR̃ {by.loc[r, 'acr_proxy']:.2f})" for r in steps)
        agree = ("agrees with the validation split" if v.agrees else
                 "disagrees: the chosen step costs more than the slack" if v.chosen_cost > allowed + 1e-9 else
                 "disagrees: the refused step would have kept within the slack")
        lines.append(f"On the test split at {norm_label(norm)}, σ = {v.sigma:g}, ANCER certifies {said} at radius 0, "
                     f"against Isotropic DD's {_points(by.loc['Isotropic DD', 'accuracy'])}% "
                     f"(ACR {by.loc['Isotropic DD', 'acr']:.2f}): the test split {agree}"
                     + _acr_split(by, steps) + ".")
    over = rows[rows.over_slack & ~rows.selection_sigma]
    lines.append("At the other σ, where the step is reused as a multiple of θ, "
                 + ("it costs more than the slack: " + "; ".join(
                     f"{_points(r.ancer)}% for ANCER against {_points(r.isotropic)}% for Isotropic DD at "
                     f"{norm_label(r.norm)}, σ = {r.sigma:g} ({_points(r.cost)} points)" for r in over.itertuples())
                    if len(over) else f"ANCER stays within the {_points(allowed)} points at radius 0 "
                    f"(the table above)") + ".")
    if rests_on:
        lines.append(f"What rests on this step: {', '.join(rests_on[:-1])}{' and ' if len(rests_on) > 1 else ''}"
                     f"{rests_on[-1]}.")
    return " ".join(lines)


def _in_range_words(margin: Mapping[tuple[str, str], float], in_range: Mapping[str, float] | None,
                    column: str) -> str:
    """", and …" on how much of C3's margin remains with the semi-axes counted within the pixel range; "" without."""
    if not in_range:
        return ""
    norms = [n for n in ("l2", "l1") if n in in_range]
    mostly = all(abs(in_range[n]) < 0.1 * margin[column, n] for n in norms if margin[column, n] > 0)
    return ((", and nearly all of that volume lies beyond the pixel range, where no image is" if mostly else
             ", and part of that volume lies beyond the pixel range")
            + ": with every semi-axis of both methods counted only up to the far edge of [0, 1], the gain is "
            + " and ".join(f"{in_range[n]:+.1%} ({norm_label(n)})" for n in norms)
            + " (notebook 05, Figure 5)")


def mnist_bullet(effects: Mapping[tuple[str, str], Mapping[str, Effect]], margin: Mapping[tuple[str, str], float],
                 title: str, paper_hi: Mapping[str, float], column: str = "mnist",
                 in_range: Mapping[str, float] | None = None) -> str:
    """The findings' bullet on the column standing in for ImageNet: C1-C3 at both norms, with their intervals.

    Parameters
    ----------
    effects : mapping of (str, str) to mapping of str to Effect
        {(column, norm): {claim: effect}}.
    margin : mapping of (str, str) to float
        `margins`.
    title : str
        The column's title in words.
    paper_hi : mapping of str to float
        Per norm, the largest gain among the paper's rows (`image_study.paper_range`).
    column : str, default "mnist"
    in_range : mapping of str to float, optional
        Per norm, C3's margin with every semi-axis counted only up to the far edge of [0, 1]
        (`superset_study.domain_margins`); said beside the margin when given.

    Returns
    -------
    str
    """
    e2, e1 = effects[column, "l2"], effects[column, "l1"]
    c3 = {n: effects[column, n]["C3"].verdict for n in ("l2", "l1")}
    both = f"C3 {IS[c3['l2']]} for both shapes" if c3["l2"] == c3["l1"] else \
        f"C3 {IS[c3['l2']]} for ℓ2 and {IS[c3['l1']]} for ℓ1"
    ancer = {n: (effects[column, n]["C1/ANCER"].verdict, effects[column, n]["C2"].verdict) for n in ("l2", "l1")}
    held = [n for n, v in ancer.items() if v == (HOLDS, HOLDS)]
    lead = ("C1 and C2 for ANCER hold for " + (" and ".join(norm_label(n) for n in held) + (" only" if len(held) == 1
                                                                                                  else ""))
            if held else "C1 and C2 for ANCER hold for neither norm")
    beyond = "beyond" if all(margin[column, n] > paper_hi[n] for n in ("l2", "l1")) else "against"
    return (f"* **{title}: {both}; {lead}.** At the step size that maximizes ANCER's own objective on the validation "
            f"split, its regions are far larger in volume (C3): ACR̃ {margin[column, 'l2']:+.0%} over Isotropic DD for ℓ2 "
            f"and {margin[column, 'l1']:+.0%} for ℓ1, {beyond} the paper's rows ({paper_hi['l2']:+.0%} and "
            f"{paper_hi['l1']:+.0%} at most): on a 784-pixel image with a blank background, ANCER can grow σ on many "
            f"pixels the classifier ignores{_in_range_words(margin, in_range, column)}"
            f". At ℓ1, C2 (ANCER's ℓp ACR at least Isotropic DD's) {IS[e1['C2'].verdict]} "
            f"({e1['C2'].text(2)}) and C1 (ANCER's over Fixed σ's) {IS[e1['C1/ANCER'].verdict]} "
            f"({e1['C1/ANCER'].text(2)}); at ℓ2, C2 {IS[e2['C2'].verdict]} ({e2['C2'].text(2)}) and C1 for ANCER "
            f"{IS[e2['C1/ANCER'].verdict]} ({e2['C1/ANCER'].text(2)}). Isotropic DD's own gain over Fixed σ (C1) "
            f"{IS[e2['C1/IsoDD'].verdict]} for ℓ2 ({e2['C1/IsoDD'].text(3)}) and {IS[e1['C1/IsoDD'].verdict]} for ℓ1 "
            f"({e1['C1/IsoDD'].text(3)}).")


def trade_bullet(val: Mapping[str, Mapping[str, float]], grid_top: float, cost: pd.DataFrame,
                 column: str = "mnist") -> str:
    """The findings' bullet on why ANCER's ℓ2 ACR falls behind Isotropic DD's on the column: its step trades radius
    for volume on the validation split, and costs accuracy at radius 0 on the test split.

    Parameters
    ----------
    val : mapping of str to mapping of str to float
        `validation_trade` for `column`.
    grid_top : float
        The largest ANCER step of the original grid (× θ).
    cost : pandas.DataFrame
        `radius0_cost`'s table.
    column : str, default "mnist"

    Returns
    -------
    str
    """
    steps = sorted({v["chosen"] for v in val.values()})
    over = cost[(cost.column == column) & cost.over_slack]
    test = ("" if over.empty else
            " On the test split the step also costs certified accuracy at radius 0 beyond the selection's slack: "
            + " and ".join(f"{_points(r.cost)} points at {norm_label(r.norm)}, σ = {r.sigma:g}" for r in over.itertuples())
            + " (\"What ANCER's chosen step costs on the test split\", above).")
    return ("* **Why ANCER's ℓ2 ACR falls behind on MNIST: its objective buys volume with ℓp radius.** ANCER's step "
            "size is chosen, like every other, by its own objective on the validation split (ACR̃ + κ·ACR, App. C), "
            "widened past the grid until the best value lies inside. On MNIST that objective kept rising for "
            + " and ".join(f"{_widenings(v['widened'])} ({norm_label(n)})" for n, v in val.items())
            + f", from the grid's largest step {grid_top:g} θ to {' and '.join(f'{s:.3g} θ' for s in steps)}: between "
            "the two, ANCER's validation ACR̃ grows "
            + " and ".join(f"from {v['top_proxy']:.2f} to {v['pick_proxy']:.2f} ({norm_label(n)})" for n, v in val.items())
            + ", while its ℓp ACR falls "
            + " and ".join(f"from {v['top_acr']:.2f} to {v['pick_acr']:.2f} (Isotropic DD: {v['iso_acr']:.2f})"
                           for v in val.values())
            + ". ANCER's ℓp radius is its smallest σ times the gap factor (App. G.3): ANCER keeps every σ at least "
            "Isotropic DD's, and growing the other σ can lower p_A and with it the gap, as the falling ACR shows "
            "here (on inputs where Isotropic DD abstains it can also raise p_A: notebook 05's flips)." + test
            + " The paper gives no ANCER step size; the grid's own range (up to the largest step above) trades less "
            "radius for less volume.")


def digits_bullet(effects: Mapping[tuple[str, str], Mapping[str, Effect]], margin: Mapping[tuple[str, str], float],
                  ahead: Mapping[tuple[str, str], float], clamp: float,
                  names: Sequence[str] = ("digits", "digits_cnn"), ratio: float = GAIN_RATIO) -> str:
    """The findings' bullet on the two digits columns: what the MLP and the CNN share, where they part, and why
    Isotropic DD barely moves.

    Parameters
    ----------
    effects : mapping of (str, str) to mapping of str to Effect
        {(column, norm): {claim: effect}}.
    margin : mapping of (str, str) to float
        `margins`.
    ahead : mapping of (str, str) to float
        `iso_ahead`.
    clamp : float
        The optimizers' probability clamp (`methods.optimize.PROB_CLAMP`): probabilities are clamped at 1 − clamp.
    names : sequence of str, default ("digits", "digits_cnn")
        The MLP's and the CNN's digits columns.
    ratio : float, default `GAIN_RATIO`
        Two volume gains differ when the larger is more than `ratio` times the smaller.

    Returns
    -------
    str
        Alike: the claims with the same verdict on both columns at both norms; not alike: the (claim, norm) whose
        verdicts differ, with both effects, and the norms whose volume gains differ by more than `ratio`.
    """
    mlp, cnn = names
    norms = ("l2", "l1")
    verdict = verdicts({key: effects[key] for key in effects if key[0] in names})
    claims_ = list(effects[mlp, "l2"])
    alike = [c for c in claims_ if all(verdict[mlp, n][c] == verdict[cnn, n][c] for n in norms)]
    shared = []
    for group in (("C3",), ("C2", "C1/ANCER"), ("C1/IsoDD",)):
        group = tuple(c for c in group if c in alike)
        if not group:
            continue
        words = {n: {verdict[mlp, n][c] for c in group} for n in norms}
        if any(len(v) > 1 for v in words.values()):
            shared += [f"{c} {_verb(verdict[mlp, 'l2'][c], 1)} for ℓ2 and {_verb(verdict[mlp, 'l1'][c], 1)} for ℓ1"
                       for c in group]
            continue
        w2, w1 = (next(iter(words[n])) for n in norms)
        what = " and ".join(group)
        shared.append(f"{what} {_verb(w2, len(group))} at both norms" if w2 == w1
                      else f"{what} {_verb(w2, len(group))} for ℓ2 and {_verb(w1, len(group))} for ℓ1")
    apart = []
    for n in norms:
        a, b = margin[mlp, n], margin[cnn, n]
        lo, hi = sorted((abs(a), abs(b)))
        gain = f"ANCER's {norm_label(n)} volume gain (C3's estimate) is {a:+.0%} with the MLP and {b:+.0%} with the CNN"
        (apart if hi > ratio * lo else shared).append(gain)
    for n in norms:
        for c in claims_:
            ea, eb = effects[mlp, n][c], effects[cnn, n][c]
            if ea.verdict != eb.verdict:
                digits = 0 if ea.kind == RATIO else 3
                apart.append(f"{c} at {norm_label(n)} {IS[ea.verdict]} for the MLP ({ea.text(digits)}) and "
                             f"{IS[eb.verdict]} for the CNN ({eb.text(digits)})")
    iso = "; ".join(f"{IS[o]} for {' and '.join(where(verdict, 'C1/IsoDD', o, names))}"
                    for o in IS if where(verdict, "C1/IsoDD", o, names))
    lead = (f"alike in {', '.join(alike)} at both norms, not in everything" if apart and alike
            else "alike in every verdict and volume gain" if not apart else "alike in no claim's verdicts")
    return (f"* **8×8 digits, with the MLP or with the CNN architecture of the MNIST column: {lead}.** "
            + (f"On both, {'; '.join(shared)}. " if shared else "")
            + (f"Not alike: {'; '.join(apart)}. " if apart else "")
            + "Isotropic DD's ℓp ACR is within "
            f"{max(abs(ahead[name, n]) for name in names for n in norms):.4f} of Fixed σ's on every digits row, and C1 "
            f"for Isotropic DD {iso}: paired over the same inputs, even differences of a few thousandths are resolved, "
            "because a tiny step moves every input's radius the same way. The chosen Isotropic DD steps are tiny "
            "because on the validation split larger steps lowered the certified ℓp radius (the Monte Carlo surrogate "
            "that Isotropic DD and ANCER ascend, with few samples and probabilities clamped at "
            f"{1 - clamp:g}, disagrees with the radius CERTIFY grants), and ANCER trades a little ℓp ACR for volume.")


def _verb(outcome: str, count: int) -> str:
    """A verdict as the verb of `count` claims: "fails" / "fail", "is within noise" / "are within noise"."""
    if count == 1:
        return IS[outcome]
    return {HOLDS: "hold", FAILS: "fail", WITHIN_NOISE: "are within noise"}[outcome]


def comparison_bullet(effects: Mapping[tuple[str, str], Mapping[str, Effect]],
                      margin: Mapping[tuple[str, str], float], steps: pd.DataFrame, parameters: Mapping[str, int],
                      test_inputs: Mapping[str, int], names: Sequence[str] = ("mnist", "digits_cnn", "digits"),
                      epochs: Mapping[str, int] | None = None) -> str:
    """The findings' bullet on what the MNIST / digits CNN comparison can and cannot tell apart.

    Parameters
    ----------
    effects : mapping of (str, str) to mapping of str to Effect
        {(column, norm): {claim: effect}}.
    margin : mapping of (str, str) to float
        `margins`.
    steps : pandas.DataFrame
        `image_study.chosen_steps` (columns column, norm, method, chosen).
    parameters : mapping of str to int
        Per column, the base classifier's number of parameters.
    test_inputs : mapping of str to int
        Per column, the number of certified test inputs.
    names : sequence of str, default ("mnist", "digits_cnn", "digits")
        The MNIST CNN's, the digits CNN's and the digits MLP's columns.
    epochs : mapping of str to int, optional
        Per column, the training epochs (named when the two CNN columns differ).

    Returns
    -------
    str
    """
    big, small, mlp = names
    ancer = steps[steps.method == METHOD_NAMES[ANCER]].set_index(["column", "norm"]).chosen

    def held(name: str) -> list[str]:
        return [f"{c} at {norm_label(n)}" for n in ("l2", "l1") for c in ("C1/ANCER", "C2")
                if effects[name, n][c].verdict == HOLDS]

    def step_text(name: str) -> str:
        values = [float(ancer[name, n]) for n in ("l2", "l1")]
        if math.isclose(values[0], values[1]):
            return f"{values[0]:.3g} θ"
        return f"{values[0]:.3g} θ / {values[1]:.3g} θ (ℓ2 / ℓ1)"

    only_big = [h for h in held(big) if h not in held(small)]
    times = min(margin[big, n] / margin[small, n] for n in ("l2", "l1") if margin[small, n] > 0)
    # only a verdict that differs between MNIST and the digits MLP can show what the swap to the CNN does: whether the
    # CNN on the digits takes MNIST's verdict
    differ = [(c, n) for c in ("C1/ANCER", "C2", "C3") for n in ("l2", "l1")
              if effects[big, n][c].verdict != effects[mlp, n][c].verdict]
    taken = [f"{c} at {norm_label(n)}" for c, n in differ if effects[small, n][c].verdict == effects[big, n][c].verdict]
    kept = [f"{c} at {norm_label(n)}" for c, n in differ if effects[small, n][c].verdict != effects[big, n][c].verdict]
    swap = []
    if kept:
        one = len(kept) == 1
        swap.append(f"{' and '.join(kept)} {'keeps' if one else 'keep'} a verdict other than MNIST's, so the CNN alone "
                    f"does not produce {'it' if one else 'them'} there")
    if taken:
        one = len(taken) == 1
        swap.append(f"{' and '.join(taken)} {'takes' if one else 'take'} MNIST's verdict, so the model may account for "
                    f"{'it' if one else 'them'}")
    return ("* **What the MNIST and digits CNN columns can and cannot tell apart.** They share the CNN's architecture, "
            "N and optimization budget. "
            + (f"{' and '.join(only_big)} {_verb(HOLDS, len(only_big))} on MNIST and not on the digits, and "
               if only_big else "")
            + f"ANCER's volume gain on MNIST is {times:.1f} times the digits' or more at both norms "
            f"({margin[big, 'l2']:+.0%} / {margin[big, 'l1']:+.0%} against {margin[small, 'l2']:+.0%} / "
            f"{margin[small, 'l1']:+.0%} for ℓ2 / ℓ1). But more than the images differs: the CNN has "
            f"{parameters[big]:,} parameters on MNIST's 28×28 images and {parameters[small]:,} on the 8×8 digits (its "
            f"dense layer grows with the image), ANCER's step chosen on validation is {step_text(big)} on MNIST and "
            f"{step_text(small)} on the digits, "
            + (f"the CNN trains for {epochs[big]} and {epochs[small]} epochs, "
               if epochs and epochs[big] != epochs[small] else "")
            + f"and the test sets hold {test_inputs[big]} and {test_inputs[small]} "
            "inputs. So the comparison cannot single out the data: image, model size and ANCER's step change together. "
            + (f"What the columns do show, for the verdicts that differ between MNIST and the digits MLP: with the MLP "
               f"swapped for the CNN (and its budget) on the same digits, {'; '.join(swap)}." if differ
               else "No verdict of C1 for ANCER, C2 or C3 differs between MNIST and the digits MLP, so swapping the "
               "model cannot show what produces MNIST's verdicts."))


def certainty_bullet(effects: Mapping[tuple[str, str], Mapping[str, Effect]], widest_column: str = "mnist",
                     others: Sequence[str] = ("digits", "digits_cnn")) -> str:
    """The findings' bullet on how wide the intervals of the ACR differences are.

    Parameters
    ----------
    effects : mapping of (str, str) to mapping of str to Effect
        {(column, norm): {claim: effect}}.
    widest_column : str, default "mnist"
        The column with the widest interval (fewest test inputs).
    others : sequence of str, default ("digits", "digits_cnn")
        The columns with more test inputs.

    Returns
    -------
    str
    """
    def widest(names: Iterable[str]) -> float:
        return max(e.half_width for (name, _), found in effects.items() if name in names
                   for c, e in found.items() if c != "C3")

    return (f"* **How sure**: the widest interval of an ACR difference is ±{widest([widest_column]):.3f} (the MNIST "
            f"column, {effects[widest_column, 'l2']['C2'].n} test inputs); the digits' "
            f"{effects[others[0], 'l2']['C2'].n} inputs give ±{widest(others):.3f} or less.")


def steps_bullet(steps: pd.DataFrame, titles: Mapping[str, str], widen: int, slack: float) -> str:
    """The findings' bullet on where the chosen step sizes lie and how many steps were not eligible.

    Parameters
    ----------
    steps : pandas.DataFrame
        `image_study.chosen_steps` (columns column, norm, position, widened, ineligible).
    titles : mapping of str to str
        Per column, its title in words.
    widen : int
        `runs.selection.WIDEN`.
    slack : float
        `runs.selection.ACCURACY_SLACK`.

    Returns
    -------
    str
    """
    edge = steps[steps.position.isin(["smallest tried", "largest tried"])]
    bound = steps[steps.position == "best eligible"]
    lead = ("Every step size lies inside the values tried or, at an edge, is the best eligible one" if edge.empty
            else f"{len(edge)} step sizes lie at an edge of the values tried, the objective still rising there")
    return (f"* **{lead}** (the table above), after at most {_widenings(int(steps.widened.max()))} "
            f"(`selection.WIDEN` = {widen} allowed); "
            + (", ".join(f"{titles[r.column]} {r.norm}: {r.ineligible}" for r in steps[steps.ineligible > 0].itertuples())
               or "none")
            + f" of ANCER's steps tried lost more than {100 * slack:.0f} percentage points of validation accuracy "
            "against Isotropic DD, at the selection σ or at another σ where the step is reused, and were not eligible"
            + ("" if bound.empty else "; where the chosen step sits at an edge of the values tried ("
               + ", ".join(f"{titles[r.column]} {r.norm}" for r in bound.itertuples())
               + "), every step of a higher objective was refused, so the rule bounds the choice, not the values "
               "tried")
            + ".")


def summary(bullets: Sequence[str]) -> str:
    """The findings as one Markdown list, with the closing caveat that they are about these data and models.

    Parameters
    ----------
    bullets : sequence of str
        The bullets ("* ..."), in order.

    Returns
    -------
    str
    """
    if not bullets or not all(isinstance(b, str) and b.startswith("* ") for b in bullets):
        raise ValueError("bullets must be a non-empty sequence of Markdown bullets starting with '* '")
    return "\n".join([*bullets, "", "This is a statement about the method on these data and models, not a "
                      "contradiction of the paper's CIFAR-10 / ImageNet numbers, which need the paper profile."])


def seed_note(seed_verdicts: Mapping[tuple[str, str], Sequence[str]], title: str, seeds: Sequence[int],
              seconds: float, seconds_text: str) -> str:
    """Which verdicts stay the same over the training seeds, in words.

    Parameters
    ----------
    seed_verdicts : mapping of (str, str) to sequence of str
        {(norm, claim): the verdict on each seed}.
    title : str
        The column's title in words.
    seeds : sequence of int
        The seeds, in order.
    seconds : float
        What the extra seeds cost (0 when their logs were reused).
    seconds_text : str
        `seconds` as text (`report.display.format_seconds`).

    Returns
    -------
    str
    """
    stable = [f"{c} ({norm_label(n)}, {v[0]})" for (n, c), v in seed_verdicts.items() if len(set(v)) == 1]
    moving = [f"{c} ({norm_label(n)}: {', '.join(v)})" for (n, c), v in seed_verdicts.items() if len(set(v)) > 1]
    return (f"On {title}, over seeds {', '.join(str(v) for v in seeds)}: the same verdict on every seed for "
            f"{', '.join(stable) or 'no claim'}; a verdict that changes with the seed for {', '.join(moving) or 'no claim'}. "
            "A verdict that changes with the seed is not one the paper's single-seed tables could settle either. The "
            f"extra seeds cost {seconds_text if seconds else 'nothing this time (their logs were reused)'} of `make all`.")


def parameter_count(model) -> int:
    """The number of parameters of a torch model.

    Parameters
    ----------
    model : torch.nn.Module

    Returns
    -------
    int
    """
    if not hasattr(model, "parameters"):
        raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    return int(sum(p.numel() for p in model.parameters()))
