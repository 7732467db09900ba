"""Notebook 06's findings in words and its claim rows: each function takes values computed by `rancer_study` and
`rancer_2d` (and shown in the notebook) and returns the Markdown the reader sees, or the rows of
`figures/claims/06_rancer.tsv`. Every number in a sentence comes from the arguments, and where a sentence reads a
number (larger, smaller, within noise, reached or not), the word is chosen from that number.

Usage in notebook 06::

    md(rancer_findings.figure2_reading(findings, regions["rancer"].scales, v1_angle, stripe_angle, fit, near, hw))
    rows = rancer_findings.c7_rows(c7, TITLES, paper_gain) + rancer_findings.ablation_rows(abl, TITLES)
    claims.record_claims(rows, rancer_findings.NOTEBOOK)
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pandas as pd

from ..evaluation.intervals import FAILS, HOLDS, VERDICTS, Effect
from ..methods.registry import ANCER, ISOTROPIC, RANCER
from ..report import claims
from .rancer_study import C7_EFFECTS

#: the notebook whose claims these are
NOTEBOOK = "06_rancer"
#: claim C7's effects (`rancer_study.C7_EFFECTS`) and their key in the paper's text (`rancer_ari_text`)
PAPER_KEY = {"C7/ARI": "ari", "C7/ARI~": "ari_proxy"}
#: how a single change of the ablation is named in the words (`rancer_study.ABLATION_ARMS`)
SINGLE_CHANGES = {"C7/rotation": ("ANCER's objective, rotated", "the rotation (ANCER's objective kept)"),
                  "C7/objective (axis-aligned)": ("RANCER's objective, axis-aligned",
                                                  "RANCER's objective (neither rotated)")}
#: a second-order model's largest error, as a share of the loss's range, from which it is called a poor fit
POOR_FIT = 0.2


def _check_verdict(verdict: str, name: str) -> None:
    if verdict not in VERDICTS:
        raise ValueError(f"{name} must be one of {VERDICTS}, got {verdict!r}")


def compared(verdict: str, larger: str = "larger than", smaller: str = "smaller than",
             neither: str = "not distinguishable from") -> str:
    """The word for a comparison with a verdict: `larger` when it holds, `smaller` when it fails, `neither` within
    noise.

    Parameters
    ----------
    verdict : str
        "holds", "fails" or "within noise" (`intervals.Effect.verdict`).
    larger, smaller, neither : str
        The words for each verdict.

    Returns
    -------
    str
    """
    _check_verdict(verdict, "verdict")
    return larger if verdict == HOLDS else smaller if verdict == FAILS else neither


def listed(items: list[str]) -> str:
    """Items in a sentence: "a", "a and b", "a, b and c".

    Parameters
    ----------
    items : list of str
        At least one.

    Returns
    -------
    str
    """
    if not items:
        raise ValueError("items must hold at least one item")
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# ---------------------------------------------------------------------------------------------------
# The introduction and the 2D example (RANCER Figures 1-2)
# ---------------------------------------------------------------------------------------------------

def printed_objective_log10(n: int, scale: float) -> float:
    """log10 of the printed objective's √(∏ Σ̂_jj) (RANCER Algorithm 1) for `n` scales all equal to `scale`.

    Parameters
    ----------
    n : int
        The number of scales (the input's dimension), >= 1.
    scale : float
        Each scale, > 0.

    Returns
    -------
    float
        n / 2 · log10(scale).
    """
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer (the number of scales), got {n!r}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    return 0.5 * int(n) * math.log10(scale)


def introduction_numbers(n: int, scale: float, margin: float, sigmas: Mapping[str, float]) -> str:
    """The introduction's numbers: the printed objective for `n` scales of `scale` against float32's smallest
    positive number, the rotation margin and the σ of each column.

    Parameters
    ----------
    n : int
        The number of scales (MNIST: 784).
    scale : float
        Each scale.
    margin : float
        `rancer.ROTATION_MARGIN`.
    sigmas : mapping of str to float
        Column title -> the σ its model is trained and certified at.

    Returns
    -------
    str
        Markdown.
    """
    if not sigmas:
        raise ValueError("sigmas must name at least one column")
    tiny = float(np.log10(np.finfo(np.float32).smallest_subnormal))
    return (f"For n = {n} scales of {scale:g} the printed objective's √(∏ Σ̂_jj) is "
            f"10^{printed_objective_log10(n, scale):.0f}, far below float32's smallest positive number (~10^{tiny:.0f}). "
            f"The rotation margin is {margin:g}; the models are trained and certified at "
            f"σ = {', '.join(f'{s:g}' for s in sigmas.values())} ({', '.join(sigmas)}).")


def figure2_reading(findings: Mapping[str, bool], scales: np.ndarray, v1_angle: float, stripe_angle: float,
                    fit: Mapping[str, float], near: float, half_window: float) -> str:
    """What RANCER Figure 2 shows of §4.2's sentence ("v1 points to the safe direction ... v1 will become larger and
    v2 shorter"), and how far the second-order model holds.

    Parameters
    ----------
    findings : mapping of str to bool
        `rancer_study.figure2_findings`, in its order: v1 along the stripe, the scale along v1 the larger, the
        eigenvectors the stripe's axes.
    scales : numpy.ndarray, shape (2,)
        RANCER's optimized scales along v1 and v2.
    v1_angle : float
        v1's direction, degrees (`rancer_study.first_axis_angle`).
    stripe_angle : float
        The stripe's direction, degrees.
    fit : mapping of str to float
        `rancer_study.quadratic_error`: "near" and "window", the model's largest error over the loss's range.
    near, half_window : float
        The distances `fit` was measured within.

    Returns
    -------
    str
        Markdown.
    """
    if len(findings) != 3:
        raise ValueError(f"findings must be rancer_study.figure2_findings' three statements, got {len(findings)}")
    first, second, axes = (bool(v) for v in findings.values())
    s1, s2 = (float(v) for v in scales)
    normal = (stripe_angle + 90.0) % 180.0
    if axes and not first and not second and s2 > s1:
        text = (f"The sentence is reversed here. v1 lies at {v1_angle:.1f}°, across the stripe (its normal is at "
                f"{normal:g}°): the largest curvature of the loss is the *unsafe* direction, where the loss rises "
                f"fastest. The optimization makes the scale along v2 **{s2 / s1:.1f}×** that along v1 ({s2:.3f} "
                f"against {s1:.3f}): the region stretches along v2, the stripe's direction. What holds is weaker and "
                "is what RANCER needs: the eigenvectors are the stripe's axes, so a rotation by them lets the "
                "optimization find the long axis; which eigenvector is safe is decided by the optimization, not by "
                "the order of the eigenvalues.")
    else:
        parts = list(findings)
        text = (f"v1 lies at {v1_angle:.1f}° (the stripe's normal is at {normal:g}°) and the optimized scales are "
                f"{s1:.3f} along v1 and {s2:.3f} along v2: " + "; ".join(
                    f"{p} {'holds' if v else 'fails'}" for p, v in zip(parts, (first, second, axes))) + ".")
    if fit["near"] >= POOR_FIT:
        text += (f" The second-order model is a local one (its error falls like r³, "
                 f"`tests/test_rancer_2d.py`): already within {near:g} of the point its largest error is "
                 f"{fit['near']:.2f} of the loss's range there, ")
    else:
        text += (f" The second-order model fits near the point (within {near:g} its largest error is "
                 f"{fit['near']:.2f} of the loss's range there), ")
    window = "comparable to" if fit["window"] >= 0.5 else "a fraction of"
    text += (f"and over the window (±{half_window:g}) {fit['window']:.2f}, {window} the loss's own variation "
             "(panel (c) shows both along each eigenvector). The eigenvectors can choose the axes; the lengths must "
             "come from the optimization, not from the eigenvalues, which is what §4.5 below finds as well.")
    return text


# ---------------------------------------------------------------------------------------------------
# Table 3 and claim C7
# ---------------------------------------------------------------------------------------------------

def runtime_summary(ratios: pd.Series, paper: pd.Series, table: pd.DataFrame, dims: Mapping[str, int],
                    titles: Mapping[str, str], device: str = "cpu") -> str:
    """RANCER's cost per input against ANCER's, beside the paper's (RANCER Table 3).

    Parameters
    ----------
    ratios : pandas.Series
        `rancer_study.cost_ratios` of `table`, indexed (column, method).
    paper : pandas.Series
        `rancer_study.paper_runtime`: seconds per input by method name ("ANCER", "RANCER").
    table : pandas.DataFrame
        The stacked `rancer_study.runtime_table`s, indexed (column, method), with a "Hessian + eigenvectors" column.
    dims : mapping of str to int
        Column -> the input's dimension n.
    titles : mapping of str to str
        Column -> its title.
    device : str, default "cpu"
        Where the timings ran (the profile's device).

    Returns
    -------
    str
        Markdown.
    """
    names = list(dims)
    where = "this CPU" if device == "cpu" else f"this machine (device {device!r})"
    return ("RANCER costs " + " and ".join(f"**{ratios[name, RANCER]:.2f}×** ({titles[name]}, n = {dims[name]:,})"
                                           for name in names)
            + f" ANCER per input on {where}; the paper reports **{paper['RANCER'] / paper['ANCER']:.2f}×** on a GPU. "
            "Its extra stages grow with the input's dimension n: the Hessian has n² entries and its "
            "eigendecomposition costs O(n³), the rotated CERTIFY multiplies every noise draw by the n × n matrix U, "
            f"and the rotated memory stores an n × n matrix per input (n = {3 * 32 * 32:,} on CIFAR-10). Here the "
            "Hessian stage takes " + " and ".join(
                f"{table.loc[(name, RANCER), 'Hessian + eigenvectors']:.3f} s ({titles[name]})" for name in names)
            + " per input.")


def c7_rows(c7: Mapping[str, Mapping[str, Effect]], titles: Mapping[str, str],
            paper_gain: Mapping[str, float]) -> list[dict]:
    """Claim C7's rows of the claims table (`claims.claim_row`): ARI and AR̃I per column, beside the paper's.

    Parameters
    ----------
    c7 : mapping of str to mapping of str to Effect
        Column -> `rancer_study.claim_effects` ("C7/ARI", "C7/ARI~" -> Effect).
    titles : mapping of str to str
        Column -> its title.
    paper_gain : mapping of str to float
        The paper's text: "ari" and "ari_proxy" (CIFAR-10, ResNet18).

    Returns
    -------
    list of dict
        One row per column and claim, in that order, each claim in the words of `rancer_study.C7_EFFECTS`.
    """
    return [claims.claim_row(claim, f"{titles[name]}, ℓ2", C7_EFFECTS[claim][0], e,
                             f"{paper_gain[PAPER_KEY[claim]]:+.3f} (CIFAR-10, ResNet18)", NOTEBOOK)
            for name, found in c7.items() for claim, e in found.items()]


def c7_table(c7: Mapping[str, Mapping[str, Effect]], titles: Mapping[str, str],
             paper_gain: Mapping[str, float]) -> pd.DataFrame:
    """Claim C7's effects as a table: column, claim, effect [95% interval], half-width, n, verdict, the paper's value.

    Parameters
    ----------
    c7, titles, paper_gain
        As in `c7_rows`.

    Returns
    -------
    pandas.DataFrame
    """
    return pd.DataFrame([{"column": titles[name], "claim": claim, "effect [95% interval]": e.text(),
                          "half-width": e.half_width, "n": e.n, "verdict": e.verdict,
                          "paper": paper_gain[PAPER_KEY[claim]]}
                         for name, found in c7.items() for claim, e in found.items()])


def ablation_rows(ablations: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]], titles: Mapping[str, str]) -> list[dict]:
    """The matched-objective ablation's rows of the claims table (no paper value: the ablation is not in the paper).

    Parameters
    ----------
    ablations : mapping of str to (pandas.DataFrame, pandas.DataFrame)
        Column -> `rancer_study.ablation`'s (arm table, effects with claim, measure, statement, effect).
    titles : mapping of str to str
        Column -> its title.

    Returns
    -------
    list of dict
        One row per column and effect, in that order, claimed as "<claim> (<measure>)".
    """
    return [claims.claim_row(f"{r.claim} ({r.measure})", f"{titles[name]}, ℓ2", r.statement, r.effect, "", NOTEBOOK)
            for name, (_, eff) in ablations.items() for r in eff.itertuples()]


def ablation_effects(ablations: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]]
                     ) -> dict[str, dict[tuple[str, str], Effect]]:
    """The ablation's effects by column and (claim, measure).

    Parameters
    ----------
    ablations : mapping of str to (pandas.DataFrame, pandas.DataFrame)
        As in `ablation_rows`.

    Returns
    -------
    dict
        Column -> {(claim, measure): Effect}.
    """
    return {name: {(r.claim, r.measure): r.effect for r in e.itertuples()} for name, (_, e) in ablations.items()}


def ablation_summary(ablations: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]], titles: Mapping[str, str]) -> str:
    """One bullet per column: what the rotation does with ANCER's objective kept, what RANCER's objective does with
    the noise rotated in both, each effect with its interval and verdict, and ACR̃ by arm.

    Parameters
    ----------
    ablations : mapping of str to (pandas.DataFrame, pandas.DataFrame)
        As in `ablation_rows`; the arm table has an acr_proxy column, indexed by arm.
    titles : mapping of str to str
        Column -> its title.

    Returns
    -------
    str
        Markdown.
    """
    ab = ablation_effects(ablations)
    lines = []
    for name, (t, _) in ablations.items():
        rot, obj = ab[name]["C7/rotation", "ACR~"], ab[name]["C7/objective", "ACR~"]
        rot2, obj2 = ab[name]["C7/rotation", "ACR"], ab[name]["C7/objective", "ACR"]
        lines.append(f"* **{titles[name]}**: the rotation with ANCER's objective changes ACR̃ by {rot.text(2)} "
                     f"({rot.verdict}) and ACR by {rot2.text(2)} ({rot2.verdict}); RANCER's objective instead of "
                     f"ANCER's, both rotated, changes ACR̃ by {obj.text(2)} ({obj.verdict}) and ACR by {obj2.text(2)} "
                     f"({obj2.verdict}). ACR̃ by arm: "
                     + ", ".join(f"{arm} {t.loc[arm, 'acr_proxy']:.2f}" for arm in t.index) + ".")
    return "\n".join(lines)


def rotation_reading(verdicts: Mapping[str, str], titles: Mapping[str, str]) -> str:
    """What the rotation does to ANCER's regions (ACR̃, ANCER's objective kept) on each column, and whether the
    columns agree.

    Parameters
    ----------
    verdicts : mapping of str to str
        Column -> the verdict of the ablation's "C7/rotation" effect on ACR̃.
    titles : mapping of str to str
        Column -> its title.

    Returns
    -------
    str
        Markdown.
    """
    for name, v in verdicts.items():
        _check_verdict(v, f"verdicts[{name!r}]")
    does = {name: compared(v, "enlarges them", "shrinks them", "does not measurably change them")
            for name, v in verdicts.items()}
    agree = len(set(verdicts.values())) == 1
    text = ("The columns agree on the rotation. " if agree else "The columns disagree on the rotation. ") + \
        "With ANCER's objective kept, rotating the noise by the Hessian's eigenvectors changes ANCER's regions " \
        "(ACR̃): it " + "; it ".join(f"{does[n]} on {titles[n]}" for n in verdicts) + "."
    if verdicts.get("mnist_softplus") == FAILS:
        text += (" One reading, not tested here: on MNIST ANCER's axis-aligned frame is the pixels themselves, and "
                 "its σ grows on the background pixels the classifier ignores (notebook 05, Figure 15), which a frame "
                 "of eigenvectors mixes with the pixels that matter.")
    if not agree:
        text += " The rotation is not a gain in itself; C7's sign on each column follows from both changes together."
    return text


# ---------------------------------------------------------------------------------------------------
# "In words": claim C7 column by column
# ---------------------------------------------------------------------------------------------------

def toy_bullet(gain: float, proxy_radii: Mapping[str, float], checks: Mapping[str, float],
               toy_claims: Mapping[str, bool]) -> str:
    """The 2D example in one bullet (RANCER Figure 1).

    Parameters
    ----------
    gain : float
        RANCER's proxy radius over ANCER's.
    proxy_radii : mapping of str to float
        "isotropic", "ancer" -> the region's proxy radius.
    checks : mapping of str to float
        Method -> the share of the region's points keeping the prediction (`rancer_2d.region_check`).
    toy_claims : mapping of str to bool
        `rancer_study.toy_claims`.

    Returns
    -------
    str
        Markdown.
    """
    least = min(checks.values())
    kept = ("every point of each region keeps the prediction" if least == 1.0
            else f"at least {100 * least:.0f}% of each region's points keep the prediction")
    text = (f"* **In 2D (Figure 1)** RANCER's rotated ellipse has **{gain:.1f}×** ANCER's proxy radius, every region "
            f"checked by re-estimating the smoothed prediction on a grid filling it ({kept})")
    if all(toy_claims.values()):
        text += (": the Hessian's eigenvectors align with the stripe, and ANCER's axis-aligned ellipse has only "
                 f"{proxy_radii[ANCER] / proxy_radii[ISOTROPIC]:.2f}× Isotropic DD's ball's proxy radius.")
    else:
        text += "; not every 2D check above holds."
    return text


def upper_clip_evidence(selection: pd.DataFrame) -> dict:
    """What RANCER's validation search says of its upper clip σ0 (1 + γ2): the γ2 tried (the γ2 search's rows, by
    γ2), each one's validation ACR̃ and whether its clip was reached, the chosen γ2, and the smallest γ2 tried above
    the chosen one whose clip no scale reached (nothing capped the axes there).

    Parameters
    ----------
    selection : pandas.DataFrame
        `rancer_study.choose_rancer`'s table: columns search, gamma2, acr, acr_proxy, upper_clip_reached, chosen.

    Returns
    -------
    dict
        gamma2s, acr_proxy, reached (tuples, by γ2), gamma2 and its acr_proxy (the chosen), free_gamma2 and
        free_acr_proxy (NaN when no such γ2 was tried), and binds: whether lifting the clip raised the validation
        ACR̃ (False when no free γ2 was tried).
    """
    need = {"search", "gamma2", "acr_proxy", "upper_clip_reached", "chosen"}
    if not need <= set(selection.columns):
        raise ValueError(f"selection must have columns {sorted(need)}, got {sorted(selection.columns)}")
    g = selection[selection.search == "gamma2"].sort_values("gamma2")
    if int(g.chosen.sum()) != 1:
        raise ValueError(f"selection must choose exactly one γ2 row, got {int(g.chosen.sum())}")
    chosen = g[g.chosen].iloc[0]
    free = g[(g.gamma2 > chosen.gamma2) & ~g.upper_clip_reached.astype(bool)]
    nan = float("nan")
    free_gamma2 = float(free.gamma2.iloc[0]) if len(free) else nan
    free_acr_proxy = float(free.acr_proxy.iloc[0]) if len(free) else nan
    return dict(gamma2s=tuple(float(v) for v in g.gamma2), acr_proxy=tuple(float(v) for v in g.acr_proxy),
                reached=tuple(bool(v) for v in g.upper_clip_reached), gamma2=float(chosen.gamma2),
                chosen_acr_proxy=float(chosen.acr_proxy), chosen_reached=bool(chosen.upper_clip_reached),
                free_gamma2=free_gamma2, free_acr_proxy=free_acr_proxy,
                binds=bool(len(free)) and free_acr_proxy > float(chosen.acr_proxy))


def upper_clip_reading(evidence: Mapping) -> str:
    """Whether RANCER's upper clip σ0 (1 + γ2) explains a smaller ACR̃ than ANCER's (whose Θ has no upper bound),
    read from the validation search (`upper_clip_evidence`).

    Parameters
    ----------
    evidence : mapping
        `upper_clip_evidence`.

    Returns
    -------
    str
        Markdown, one or two sentences.
    """
    tried = listed([f"{g:g}" for g in evidence["gamma2s"]])
    values = ", ".join(f"{v:.2f}" for v in evidence["acr_proxy"])
    not_reached = [f"{g:g}" for g, r in zip(evidence["gamma2s"], evidence["reached"]) if not r]
    reach = ("the clip reached at every one" if not not_reached
             else f"no scale reached the clip at γ2 = {listed(not_reached)}")
    text = (f"Is RANCER's upper clip σ0 (1 + γ2) the cause of its smaller ACR̃ (ANCER's Θ has no upper bound)? The "
            f"validation search "
            f"tried γ2 = {tried} (validation ACR̃ {values}; {reach}) and chose γ2 = {evidence['gamma2']:g}.")
    g, free = evidence["gamma2"], evidence["free_gamma2"]
    if not evidence["chosen_reached"]:
        text += (f" At the chosen γ2 = {g:g} no scale reached the clip: it capped nothing, so it does not explain "
                 "the smaller ACR̃.")
    elif math.isnan(free):
        text += (f" The clip was reached at the chosen γ2 = {g:g} and no looser clip that no scale reached was tried: "
                 "whether the clip explains the smaller ACR̃ is not tested here.")
    elif not evidence["binds"]:
        lower = "lower" if evidence["free_acr_proxy"] < evidence["chosen_acr_proxy"] else "no higher"
        text += (f" At γ2 = {free:g} nothing capped the axes, and the validation ACR̃ was {lower} "
                 f"({evidence['free_acr_proxy']:.2f} against {evidence['chosen_acr_proxy']:.2f} at γ2 = {g:g}): the "
                 "upper clip does not explain the smaller ACR̃.")
    else:
        text += (f" At γ2 = {free:g} nothing capped the axes and the validation ACR̃ rose to "
                 f"{evidence['free_acr_proxy']:.2f} (from {evidence['chosen_acr_proxy']:.2f} at γ2 = {g:g}), but the "
                 "selection objective ACR̃ + 2·ACR preferred the clipped run: the clip costs ACR̃ by the objective's "
                 "choice.")
    return text


def single_changes_reading(arms: pd.DataFrame, effects: Mapping[tuple[str, str], Effect]) -> str:
    """Each of RANCER's two changes alone against ANCER's ACR̃ (the ablation's arms that change one thing).

    Parameters
    ----------
    arms : pandas.DataFrame
        `rancer_study.ablation`'s arm table (acr_proxy column, indexed by arm).
    effects : mapping of (str, str) to Effect
        `ablation_effects` of the column.

    Returns
    -------
    str
        Markdown, one sentence.
    """
    parts = []
    for claim, (arm, words) in SINGLE_CHANGES.items():
        e = effects[claim, "ACR~"]
        parts.append(f"{words} gives {arms.loc[arm, 'acr_proxy']:.2f} ({e.text(2)}, {e.verdict})")
    verdicts = {effects[claim, "ACR~"].verdict for claim in SINGLE_CHANGES}
    lead = ("each of RANCER's two changes alone already loses ACR̃" if verdicts == {FAILS}
            else "RANCER's two changes, each alone")
    return f"In the ablation, against ANCER's ACR̃ of {arms.loc['ANCER', 'acr_proxy']:.2f}, {lead}: " + \
        "; ".join(parts) + "."


def column_bullet(title: str, acr: Mapping[str, float], c7: Mapping[str, Effect], paper_gain: Mapping[str, float],
                  gamma1: float, lower_share: float, clip: Mapping, arms: pd.DataFrame,
                  effects: Mapping[tuple[str, str], Effect]) -> str:
    """Claim C7 on one column in one bullet: RANCER's proxy and ℓ2 certificates against ANCER's with their
    intervals and verdicts beside the paper's, and, where C7 fails, what the notebook's numbers say of why.

    Parameters
    ----------
    title : str
        The column's title.
    acr : mapping of str to float
        `rancer_study.acr_values`.
    c7 : mapping of str to Effect
        `rancer_study.claim_effects` ("C7/ARI", "C7/ARI~").
    paper_gain : mapping of str to float
        The paper's "ari" and "ari_proxy".
    gamma1 : float
        RANCER's lower clip γ1.
    lower_share : float
        The share of test inputs whose smallest scale sits at the lower clip (`rancer_study.lower_clip_share`).
    clip : mapping
        `upper_clip_evidence` of the column's validation search.
    arms : pandas.DataFrame
        The ablation's arm table of the column.
    effects : mapping of (str, str) to Effect
        `ablation_effects` of the column.

    Returns
    -------
    str
        Markdown.
    """
    proxy, l2 = c7["C7/ARI~"], c7["C7/ARI"]
    text = (f"* **{title}**: RANCER's **proxy** certificate is {compared(proxy.verdict)} ANCER's (ACR̃ "
            f"{acr['RANCER ACR~']:.2f} vs "
            f"{acr['ANCER ACR~']:.2f}; AR̃I = {proxy.text(2)}, C7 {proxy.verdict}; the paper: "
            f"{paper_gain['ari_proxy']:+.3f}) and its **ℓ2** certificate is {compared(l2.verdict)} ANCER's (ACR "
            f"{acr['RANCER ACR']:.2f} vs {acr['ANCER ACR']:.2f}; ARI = {l2.text(2)}, C7 {l2.verdict}; the paper: "
            f"{paper_gain['ari']:+.3f}).")
    if l2.verdict == FAILS:
        text += (f" The ℓ2 radius is set by the smallest axis, and RANCER's clip lets Σ̂ fall to σ0 (1 − γ1) = "
                 f"{1 - gamma1:g} σ0: the smallest scale sits at that floor for {100 * lower_share:.0f}% of the test "
                 "inputs, which ANCER's projection onto Θ ≥ σ0 never allows.")
    if proxy.verdict == FAILS:
        text += " " + upper_clip_reading(clip) + " " + single_changes_reading(arms, effects)
    return text


def sensitivity_bullet(acr_proxy: pd.DataFrame, small_eigenvalues: Mapping[str, float], titles: Mapping[str, str],
                       floor: float) -> str:
    """RANCER §4.5 in one bullet: Σ̂ = |Λ| without optimization and Σ̂⁰ = |Λ| optimized against Σ̂⁰ = σ0.

    Parameters
    ----------
    acr_proxy : pandas.DataFrame
        ACR̃ by column (rows) and initialization (columns "eigen_fixed", "eigen_init", "iso").
    small_eigenvalues : mapping of str to float
        Column -> the share of eigenvalue magnitudes below `floor` (`rancer_study.small_eigenvalue_share`).
    titles : mapping of str to str
        Column -> its title.
    floor : float
        The smallest scale (`rancer.MIN_SCALE`).

    Returns
    -------
    str
        Markdown.
    """
    a = acr_proxy
    return ("* **§4.5**: Σ̂ = |Λ| without optimization certifies "
            + ("almost nothing" if (a.eigen_fixed < 0.1 * a.iso).all() else "less than Σ̂⁰ = σ0")
            + " (ACR̃ " + ", ".join(f"{a.eigen_fixed[n]:.3f} on {titles[n]}" for n in a.index)
            + "): the eigenvalues are not scales. The paper says it \"oversmooths\" (scales too large); here "
            + ", ".join(f"{100 * small_eigenvalues[n]:.0f}% ({titles[n]})" for n in a.index)
            + f" of the eigenvalue magnitudes lie below the floor {floor:g}, so it "
            + ("undersmooths" if min(small_eigenvalues[n] for n in a.index) > 0.5 else "mostly does not oversmooth either")
            + ". Σ̂⁰ = |Λ| then optimized certifies "
            + ("less than" if (a.eigen_init < a.iso).all() else "not always less than")
            + " the paper's Σ̂⁰ = σ0 (ACR̃ "
            + ", ".join(f"{a.eigen_init[n]:.2f} vs {a.iso[n]:.2f}" for n in a.index) + ").")


def caveats(sigmas: Mapping[str, float], test_sizes: Mapping[str, int]) -> str:
    """The notebook's caveats: one σ, small test sets, softplus models instead of the paper's ReLU ResNet18.

    Parameters
    ----------
    sigmas : mapping of str to float
        Column title -> its σ.
    test_sizes : mapping of str to int
        Column title -> its number of test inputs.

    Returns
    -------
    str
        Markdown.
    """
    return (f"Caveats: one σ ({', '.join(f'{s:g}' for s in sigmas.values())}), small test sets ("
            + ", ".join(f"{n} {title}" for title, n in test_sizes.items())
            + " test inputs, for the notebook's time budget) and softplus models trained here rather than the paper's "
            "ReLU ResNet18 (whose input Hessian has rank ≤ K − 1 = 9 for K = 10 classes).")
