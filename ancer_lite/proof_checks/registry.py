"""Notebook 01's registry of checks, their runners and the seeds' typo demonstrations (no statement
is checked here):

- `CHECKS`: every check of `ancer`, `rancer` and `ucan`, grouped by paper section, in the order the notebook
  presents them; `run_section` / `run_all` run them with the correct formulas;
- `results_table`, `verdict_lines`, `summary_line`: how results are reported; `mixture_constants`: ANCER App. B.1's
  Lipschitz constants side by side;
- `TYPO_DEMOS` / `run_typo_demos`: each seed's printed formula plugged into its check (ANCER, RANCER, UCAN), with a
  verdict in honest words (`form_verdict`): a falsified printed bound is "unsound", a falsified printed identity
  "fails", a printed bound that holds but is loose "sound but not tight".
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from .ancer import (
    L_PROP6_PRINTED,
    L_PROP7_PRINTED,
    L_TIGHT,
    ancer_printed_inner_radius,
    check_ancer_cor1,
    check_ancer_cor2,
    check_ancer_cor3,
    check_ancer_cor3_attained,
    check_ancer_cor3_prop6,
    check_ancer_cor3_tight,
    check_ancer_d3,
    check_ancer_d4_projection,
    check_ancer_d5_exact,
    check_ancer_d5_hyperplane,
    check_ancer_d5_sound,
    check_ancer_d45_largest_out_subset,
    check_ancer_ellipsoid_volume,
    check_ancer_enclosed_radius,
    check_ancer_lemma1,
    check_ancer_lemma2,
    check_ancer_lemma3,
    check_ancer_lemma4,
    check_ancer_prop1,
    check_ancer_prop2,
    check_ancer_prop2_attained,
    check_ancer_prop3,
    check_ancer_prop3_proof,
    check_ancer_prop4,
    check_ancer_prop5,
    check_ancer_prop6,
    check_ancer_prop6_difference,
    check_ancer_prop6_tight,
    check_ancer_prop7,
    check_ancer_prop7_jensen,
    check_ancer_prop7_tight,
    check_ancer_prop8_convex,
    check_ancer_prop8_disjoint,
    check_ancer_theorem1,
    d5_printed_normal,
    d5_printed_radius,
    prop3_printed_shift,
)
from .common import CheckResult
from .rancer import (
    check_rancer_eq3,
    check_rancer_eq5,
    check_rancer_eq6,
    check_rancer_largest_out_subset,
    rancer_eq3_printed_region_inv,
)
from .ucan import (
    check_ucan_cor33,
    check_ucan_thm32_gaussian,
    check_ucan_thm32_uniform,
    check_ucan_thm_c2,
    check_ucan_thm_c2_exact,
    ucan_printed_cor33_step,
    ucan_printed_l1_region,
)

__all__ = [
    "CHECKS", "run_section", "run_all", "results_table", "sections_table", "verdict_lines", "summary_line", "mixture_constants", "BOUND", "IDENTITY",
    "UNSOUND", "FAILS", "LOOSE", "TIGHT", "SOUND", "HOLDS", "VERDICTS", "form_verdict", "TypoDemo", "TYPO_DEMOS",
    "run_typo_demos",
]


# --------------------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------------------


#: every check, grouped by paper section, in the order the notebook presents them
CHECKS: dict[str, tuple[Callable[..., CheckResult], ...]] = {
    "ANCER §4 (Lipschitz recipe)": (check_ancer_prop1, check_ancer_theorem1),
    "ANCER §4.1 (ellipsoids)": (check_ancer_prop2, check_ancer_prop2_attained, check_ancer_cor1),
    "ANCER §4.2 (generalized cross-polytopes)": (check_ancer_prop3, check_ancer_prop3_proof, check_ancer_cor2),
    "ANCER §5 (volumes)": (check_ancer_prop4, check_ancer_ellipsoid_volume, check_ancer_prop5,
                           check_ancer_enclosed_radius),
    "ANCER App. B.1 (Gaussian mixtures)": (check_ancer_prop6, check_ancer_prop6_tight, check_ancer_prop6_difference,
                                           check_ancer_prop7, check_ancer_prop7_tight, check_ancer_prop7_jensen,
                                           check_ancer_cor3, check_ancer_cor3_prop6, check_ancer_cor3_tight,
                                           check_ancer_cor3_attained),
    "ANCER App. D (memory-based certification)": (check_ancer_lemma1, check_ancer_lemma2, check_ancer_lemma3,
                                                  check_ancer_prop8_convex, check_ancer_prop8_disjoint, check_ancer_d3,
                                                  check_ancer_d4_projection, check_ancer_d45_largest_out_subset,
                                                  check_ancer_lemma4, check_ancer_d5_hyperplane, check_ancer_d5_sound,
                                                  check_ancer_d5_exact),
    "RANCER §3": (check_rancer_eq3, check_rancer_eq5, check_rancer_eq6, check_rancer_largest_out_subset),
    "UCAN §3 and App. C-D": (check_ucan_thm32_gaussian, check_ucan_thm32_uniform, check_ucan_cor33,
                             check_ucan_thm_c2, check_ucan_thm_c2_exact),
}


def run_section(section: str, mc_samples: int, seed: int = 0) -> list[CheckResult]:
    """Run the checks of one section of `CHECKS` with the correct formulas (notebook 01).

    Parameters
    ----------
    section : str
        A key of `CHECKS`, e.g. "ANCER §4.1 (ellipsoids)".
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`).
    seed : int, default 0
        The notebook's seed.

    Returns
    -------
    list of common.CheckResult
        In the section's order.
    """
    return [check(mc_samples, seed) for check in CHECKS[section]]


def run_all(mc_samples: int, seed: int = 0) -> list[CheckResult]:
    """Run every check of `CHECKS` with the correct formulas, section by section in the notebook's order.

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`).
    seed : int, default 0
        The notebook's seed.

    Returns
    -------
    list of common.CheckResult
    """
    return [r for section in CHECKS for r in run_section(section, mc_samples, seed)]


#: the columns of `results_table`: the short ones first, the two long texts last (so that a wrapped table keeps the
#: numbers of a row together)
RESULT_COLUMNS = ["id", "result", "value", "bound", "slack", "tol", "measured", "tol_reason"]


def results_table(results: list[CheckResult]) -> pd.DataFrame:
    """One row per check: id, PASS/FAIL, value, bound, slack, tolerance, what is measured and why that tolerance.

    Parameters
    ----------
    results : list of common.CheckResult
        The checks' results.

    Returns
    -------
    pandas.DataFrame
        Columns `RESULT_COLUMNS`: id, result, value, bound, slack, tol, measured, tol_reason.
    """
    cols = RESULT_COLUMNS
    return pd.DataFrame([r.as_dict() for r in results])[cols]


def sections_table(results: dict[str, list[CheckResult]]) -> pd.DataFrame:
    """One row per section: its checks, how many pass and fail, and the ids of the failing ones (the notebook's
    summary, without repeating every check's row).

    Parameters
    ----------
    results : dict of str to list of common.CheckResult
        Each section's results, in the order to show.

    Returns
    -------
    pandas.DataFrame
        Columns section, checks, passed, failed, failing (comma-separated ids, "" when none).
    """
    rows = [{"section": name, "checks": len(rs), "passed": sum(r.passed for r in rs),
             "failed": sum(not r.passed for r in rs), "failing": ", ".join(r.id for r in rs if not r.passed)}
            for name, rs in results.items()]
    return pd.DataFrame(rows, columns=["section", "checks", "passed", "failed", "failing"])


def verdict_lines(results: list[CheckResult]) -> list[str]:
    """'PASS  <id>' (or 'FAIL  <id>') per check: the deterministic part of the results, for regression-checked output.

    Parameters
    ----------
    results : list of common.CheckResult
        The checks' results.

    Returns
    -------
    list of str
    """
    return [f"{'PASS' if r.passed else 'FAIL'}  {r.id}" for r in results]


def summary_line(results: list[CheckResult]) -> str:
    """'checks: N, passed: P, failed: F'.

    Parameters
    ----------
    results : list of common.CheckResult
        The checks' results.

    Returns
    -------
    str
    """
    passed = sum(r.passed for r in results)
    return f"checks: {len(results)}, passed: {passed}, failed: {len(results) - passed}"


def mixture_constants() -> pd.DataFrame:
    """ANCER App. B.1's Lipschitz constants of g_Σ under ‖.‖_{Σ^-1,2}, side by side.

    Prop. 6's printed sqrt(2/π), Prop. 7 / Cor. 3's sqrt(π/2) and the tight 1/sqrt(2π) for f with values in [0, 1];
    with the certificate constant 1/(2L) of ‖δ‖_{B,2} <= (g_A - g_B) / (2L) and its radius relative to Cor. 3's
    printed 1/sqrt(2π).

    Returns
    -------
    pandas.DataFrame
        Three rows; columns "Lipschitz constant L" (its name), "L", "certificate constant 1/(2L)" and
        "radius vs Cor. 3".
    """
    table = pd.DataFrame({
        "Lipschitz constant L": ["sqrt(2/π) (Prop. 6 as printed)", "sqrt(π/2) (Prop. 7, Cor. 3 as printed)",
                                 "1/sqrt(2π) (tight for f in [0, 1])"],
        "L": [L_PROP6_PRINTED, L_PROP7_PRINTED, L_TIGHT],
    })
    table["certificate constant 1/(2L)"] = 1 / (2 * table["L"])
    table["radius vs Cor. 3"] = table["certificate constant 1/(2L)"] * math.sqrt(2 * math.pi)
    return table


# --------------------------------------------------------------------------------------------------
# typo demonstrations
# --------------------------------------------------------------------------------------------------


#: what a printed form states: a bound (an inequality, a certificate, a region, a step of a proof that bounds)
#: or an identity (an equation or construction that is either right or wrong)
BOUND, IDENTITY = "bound", "identity"
#: verdicts on a form: a bound that a check falsifies is unsound; an identity that a check falsifies fails; a bound
#: that holds is sound, and with a tightness check "sound and tight" or "sound but not tight"; an identity holds
UNSOUND, FAILS, LOOSE, TIGHT, SOUND, HOLDS = ("unsound", "fails", "sound but not tight",
                                              "sound and tight", "sound", "holds")
VERDICTS = (UNSOUND, FAILS, LOOSE, TIGHT, SOUND, HOLDS)


def form_verdict(statement: str, check: CheckResult, tightness: CheckResult | None = None) -> str:
    """The verdict on one form of a statement, in honest words (`VERDICTS`).

    A bound that its check falsifies is "unsound"; an identity that its check falsifies "fails"; a bound that holds
    is "sound", and with a tightness check "sound and tight" or "sound but not tight"; an identity that holds
    "holds".

    Parameters
    ----------
    statement : str
        `BOUND` or `IDENTITY`.
    check : common.CheckResult
        The soundness check of a bound, or the check of the identity itself.
    tightness : common.CheckResult, optional
        For a bound only: the check that the bound is attained.

    Returns
    -------
    str
        One of `VERDICTS`.
    """
    if statement not in (BOUND, IDENTITY):
        raise ValueError(f"statement must be {BOUND!r} or {IDENTITY!r}, got {statement!r}")
    if statement == IDENTITY:
        if tightness is not None:
            raise ValueError("an identity has no tightness check")
        return HOLDS if check.passed else FAILS
    if not check.passed:
        return UNSOUND
    if tightness is None:
        return SOUND
    return TIGHT if tightness.passed else LOOSE


@dataclass(frozen=True)
class TypoDemo:
    """A seed's printed formula (or, as a control, a deliberately wrong one) in its check, beside the corrected one.

    Parameters
    ----------
    where : str
        The paper and the statement, e.g. "ANCER App. D.5".
    printed : str
        The printed form, in words.
    corrected : str
        The corrected form, in words.
    check : callable
        The check (mc_samples, seed, *, formula) -> common.CheckResult.
    printed_formula : object
        The printed form, passed to the check as `formula`.
    statement : str
        Whether the form is a bound or an identity (`BOUND` or `IDENTITY`).
    expected : str
        The verdict the printed form should get (one of `VERDICTS`).
    tightness : callable, optional
        A check that a bound is attained, with the check's signature.
    corrected_formula : object, optional
        Passed to both checks for the corrected form (None: the checks' own defaults).
    """
    where: str
    printed: str
    corrected: str
    check: Callable[..., CheckResult]
    printed_formula: object
    statement: str
    expected: str
    tightness: Callable[..., CheckResult] | None = None
    corrected_formula: object = None

    def __post_init__(self) -> None:
        if self.statement not in (BOUND, IDENTITY):
            raise ValueError(f"statement must be {BOUND!r} or {IDENTITY!r}, got {self.statement!r}")
        if self.expected not in VERDICTS:
            raise ValueError(f"expected must be one of {VERDICTS}, got {self.expected!r}")


TYPO_DEMOS: tuple[TypoDemo, ...] = (
    TypoDemo("ANCER App. D.4/D.5", "inner radius min_i B_ii (B_ii = 1/s_i^2 or 1/s_i)", "min_i s_i",
             check_ancer_d45_largest_out_subset, ancer_printed_inner_radius, BOUND, UNSOUND),
    TypoDemo("ANCER App. D.5", "w = [-sign(y_i) A_ii], k = 1", "w = [+sign(y_i) A_ii], k = 1",
             check_ancer_d5_hyperplane, d5_printed_normal, IDENTITY, FAILS),
    TypoDemo("ANCER App. D.5", "r* = l1 length of the l2 projection onto the facet hyperplane",
             "exact l1 distance (or the Hölder bound (sum|y_i|/s_i - 1) min s_i)", check_ancer_d5_sound,
             d5_printed_radius, BOUND, UNSOUND),
    TypoDemo("ANCER Prop. 3 (proof)", "λ1 ∂g/∂x1 = 2^-n ∫ [f(x1 + 1, ·) - f(x1 - 1, ·)]", "shift x1 ± λ1",
             check_ancer_prop3_proof, prop3_printed_shift, IDENTITY, FAILS),
    TypoDemo("ANCER Prop. 6", "L = sqrt(2/π) (2x the tight constant for [0,1]-valued f)", "L = 1/sqrt(2π)",
             check_ancer_prop6, L_PROP6_PRINTED, BOUND, LOOSE, tightness=check_ancer_prop6_tight,
             corrected_formula=L_TIGHT),
    TypoDemo("ANCER Prop. 7 / Cor. 3", "L = sqrt(π/2), certificate (g_A - g_B) / sqrt(2π) (radius π x too small)",
             "L = 1/sqrt(2π), certificate sqrt(π/2) (g_A - g_B)", check_ancer_cor3, 1.0 / math.sqrt(2 * math.pi),
             BOUND, LOOSE, tightness=check_ancer_cor3_attained, corrected_formula=math.sqrt(math.pi / 2)),
    TypoDemo("ANCER Cor. 3 (control, not in the paper)", "a constant 1% above sqrt(π/2)",
             "sqrt(π/2), the largest sound constant", check_ancer_cor3_tight, 1.01 * math.sqrt(math.pi / 2), BOUND,
             UNSOUND, tightness=check_ancer_cor3_attained),
    TypoDemo("RANCER Eq. 3", "sqrt(δ^T Σ^-1 δ) <= r (rotation U dropped)", "sqrt(δ^T U Σ^-1 U^T δ) <= r",
             check_rancer_eq3, rancer_eq3_printed_region_inv, BOUND, UNSOUND),
    TypoDemo("UCAN Thm. 3.2", "(sum_i (δ'_i/σ_i)^p)^(1/p) <= R (no absolute values; p = 1)",
             "(sum_i |δ'_i/σ_i|^p)^(1/p) <= R", check_ucan_thm32_uniform, ucan_printed_l1_region, BOUND, UNSOUND),
    TypoDemo("UCAN Cor. 3.3 (proof)", "||δ'||_p <= ||δ'/min σ||_p (needs min σ <= 1)", "||δ'/σ||_p <= ||δ'/min σ||_p",
             check_ucan_cor33, ucan_printed_cor33_step, BOUND, UNSOUND),
)


def run_typo_demos(mc_samples: int, seed: int = 0) -> pd.DataFrame:
    """Each of `TYPO_DEMOS`' checks (and tightness checks) with the printed and with the corrected formula.

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`).
    seed : int, default 0
        The notebook's seed.

    Returns
    -------
    pandas.DataFrame
        One row per demo: columns where, printed, "printed form" (its verdict, `form_verdict`), corrected,
        "corrected form", check and "tightness check" (ids), "printed slack", "corrected slack" and "as expected"
        (the printed form got its expected verdict while the corrected one is sound, sound and tight where a
        tightness check exists, or holds).
    """
    rows = []
    for demo in TYPO_DEMOS:
        fixed = {} if demo.corrected_formula is None else {"formula": demo.corrected_formula}
        printed = demo.check(mc_samples, seed, formula=demo.printed_formula)
        corrected = demo.check(mc_samples, seed, **fixed)
        printed_tight = corrected_tight = None
        if demo.tightness is not None:
            printed_tight = demo.tightness(mc_samples, seed, formula=demo.printed_formula)
            corrected_tight = demo.tightness(mc_samples, seed, **fixed)
        printed_verdict = form_verdict(demo.statement, printed, printed_tight)
        corrected_verdict = form_verdict(demo.statement, corrected, corrected_tight)
        good = HOLDS if demo.statement == IDENTITY else (SOUND if demo.tightness is None else TIGHT)
        rows.append({"where": demo.where, "printed": demo.printed, "printed form": printed_verdict,
                     "corrected": demo.corrected, "corrected form": corrected_verdict, "check": corrected.id,
                     "tightness check": "" if corrected_tight is None else corrected_tight.id,
                     "printed slack": printed.slack, "corrected slack": corrected.slack,
                     "as expected": printed_verdict == demo.expected and corrected_verdict == good})
    return pd.DataFrame(rows)
