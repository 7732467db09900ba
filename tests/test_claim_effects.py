"""The studies' claims with intervals: each estimate equals the point estimate the tables compute,
and the verdicts follow the intervals, on synthetic per-input results."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ancer_lite.evaluation.intervals import HOLDS, RATIO
from ancer_lite.studies import image_study, rancer_study, superset_study
from ancer_lite.studies.superset_study import GapFactors


def _results(n: int = 60, seed: int = 0) -> pd.DataFrame:
    """Per-input rows of three methods at two σ for both norms; ANCER's proxy radius far above, its ℓp radius
    equal to Isotropic DD's, Isotropic DD's slightly above Fixed σ's."""
    rng = np.random.default_rng(seed)
    rows = []
    for norm in ("l2", "l1"):
        for sigma in (0.25, 0.5):
            base = rng.uniform(0.0, 1.0, n)
            correct = rng.uniform(size=n) < 0.8
            for method, radius, proxy in (("fixed", base, base), ("isotropic", base + 0.01, base + 0.01),
                                          ("ancer", base + 0.01, 3 * base + 0.5)):
                rows.append(pd.DataFrame(dict(norm=norm, sigma=sigma, method=method, idx=np.arange(n)[::-1],
                                              correct=correct[::-1], radius=radius[::-1],
                                              radius_proxy=proxy[::-1])))
    return pd.concat(rows, ignore_index=True)


def test_image_claims_match_the_best_over_sigma_table():
    res = _results()
    effects = image_study.claim_effects(res, "l2", "toy")
    assert set(effects) == set(image_study.CLAIMS)
    r = res[res.norm == "l2"]
    acr = {m: max((g.radius * g.correct).mean() for _, g in r[r.method == m].groupby("sigma")) for m in
           ("fixed", "isotropic", "ancer")}
    proxy = {m: max((g.radius_proxy * g.correct).mean() for _, g in r[r.method == m].groupby("sigma")) for m in
             ("isotropic", "ancer")}
    assert effects["C1/IsoDD"].estimate == pytest.approx(acr["isotropic"] - acr["fixed"])
    assert effects["C2"].estimate == pytest.approx(acr["ancer"] - acr["isotropic"])
    assert effects["C3"].kind == RATIO and effects["C3"].estimate == pytest.approx(proxy["ancer"] / proxy["isotropic"] - 1)
    assert effects["C3"].verdict == HOLDS and effects["C1/IsoDD"].verdict == HOLDS  # a shift on every input
    assert effects["C2"].estimate == pytest.approx(0.0) and effects["C2"].verdict == "within noise"


def test_image_claims_refuse_a_missing_method():
    res = _results()
    with pytest.raises(ValueError, match="no fixed rows"):
        image_study.claim_effects(res[res.method != "fixed"], "l2", "toy")


def test_rancer_c7_effects_are_the_improvements():
    res = _results()
    r = res[(res.norm == "l2") & (res.sigma == 0.25) & (res.method != "fixed")].replace({"isotropic": "rancer"})
    eff = rancer_study.claim_effects(r, "toy")
    gain = rancer_study.improvement(r)
    assert eff["C7/ARI"].estimate == pytest.approx(gain["ARI"]) and eff["C7/ARI~"].estimate == pytest.approx(gain["ARI~"])
    assert eff["C7/ARI~"].verdict == "fails"  # RANCER (the isotropic rows here) has the far smaller proxy radius


def test_best_share_values_average_to_the_pooled_share():
    res = _results()
    v = superset_study.best_share_values(res, "l2", "radius_proxy")
    table = superset_study.superset.superset_table(res[res.norm == "l2"], "radius_proxy")
    assert v.mean() * 100 == pytest.approx(float(table[table.sigma.astype(str) == "all"].pct_with_ties.iloc[0]))


def test_c5_effect_is_gap_factors_claim():
    rng = np.random.default_rng(3)
    m = 80
    si = rng.uniform(0.2, 0.3, m)
    g = GapFactors(si, si * rng.uniform(1.0, 1.02, m), rng.uniform(0.5, 1.5, m), rng.uniform(0.8, 2.0, m), m)
    e = superset_study.c5_effect(g, key=1)
    assert e.estimate == pytest.approx(g.gap_ratio - max(1.0, g.sigma_ratio))
    assert (e.verdict == HOLDS) == (e.low > 0) and g.c5 == (e.estimate > 0)
