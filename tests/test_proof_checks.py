"""The numerical proof checks of notebook 01 (ancer_lite.proof_checks): with the correct formulas every check
passes; with a deliberately wrong formula (injected through each check's `formula` argument) it fails; the
seeds' printed formulas behave as TYPO_DEMOS records. Small Monte Carlo sizes keep the file fast."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln, ndtri

from ancer_lite import proof_checks as pc
from ancer_lite.core import geometry, regions, rotated

MC = 20_000  # the quick profile uses 200,000


@pytest.fixture(scope="module")
def all_results() -> list[pc.CheckResult]:
    return pc.run_all(MC, seed=0)


def test_every_check_passes_with_the_correct_formulas(all_results):
    failed = [(r.id, r.value, r.bound, r.slack, r.tol) for r in all_results if not r.passed]
    assert not failed
    assert len(all_results) >= 20
    assert len({r.id for r in all_results}) == len(all_results), "check ids must be unique"


def test_results_report_slack_tolerance_and_reason(all_results):
    for r in all_results:
        assert r.tol >= 0 and r.tol_reason and r.measured
        assert np.isfinite([r.value, r.bound, r.slack]).all(), r.id
        assert r.passed == (r.slack >= -r.tol)
    table = pc.results_table(all_results)
    assert list(table.columns) == ["id", "result", "value", "bound", "slack", "tol", "measured", "tol_reason"]
    assert set(table["result"]) == {"PASS"}


def test_sections_table_counts_each_sections_checks(all_results):
    """The notebook's summary: one row per section, passed + failed = checks, the failing ids named."""
    from dataclasses import replace

    first, rest = all_results[:3], all_results[3:]
    broken = [replace(first[0], passed=False)] + first[1:]
    table = pc.sections_table({"a": broken, "b": rest})
    assert table.to_dict("list") == {"section": ["a", "b"], "checks": [3, len(rest)],
                                     "passed": [2, len(rest)], "failed": [1, 0], "failing": [first[0].id, ""]}


def test_checks_are_deterministic_and_order_independent():
    a = pc.check_ancer_prop2(MC, seed=3)
    pc.check_ancer_cor1(MC, seed=3)                      # running another check in between changes nothing
    b = pc.check_ancer_prop2(MC, seed=3)
    assert a == b
    assert pc.check_ancer_prop4(MC, seed=1) != pc.check_ancer_prop4(MC, seed=2)


def wrong_sigma_norm(delta: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """The Lipschitz ratio measured in sqrt(δ^T Σ δ): Σ in place of Σ^-1."""
    return np.sqrt(np.einsum("...i,ij,...j->...", delta, cov, delta))


def test_prop2_with_sigma_in_place_of_its_inverse_fails():
    """Prop. 2 measured in the wrong norm: the Lipschitz ratio exceeds 1 on some instance, so the check fails."""
    right = pc.check_ancer_prop2(MC)
    wrong = pc.check_ancer_prop2(MC, formula=wrong_sigma_norm)
    assert right.passed and right.value <= 1 + right.tol
    assert not wrong.passed and wrong.value > 1.0


WRONG_FORMULAS = {
    "Prop. 1, dual norm taken as the norm itself": (pc.check_ancer_prop1, lambda name: name),
    "Thm. 1, radius gap / L (missing 1/2)": (pc.check_ancer_theorem1, lambda gap, lip: gap / lip),
    "Prop. 2 (attained), Σ in place of Σ^-1": (pc.check_ancer_prop2_attained, wrong_sigma_norm),
    "Cor. 1, gap Φ^-1(pA) - Φ^-1(pB) (missing 1/2)": (pc.check_ancer_cor1, lambda pa, pb: ndtri(pa) - ndtri(pb)),
    "Prop. 3, norm ||Λ δ||_1 instead of ||Λ^-1 δ||_1": (pc.check_ancer_prop3, lambda d, lam: np.abs(d * lam).sum(-1)),
    "Prop. 3 proof, shift ±1": (pc.check_ancer_prop3_proof, pc.prop3_printed_shift),
    "Cor. 2, gap 2 (pA - pB)": (pc.check_ancer_cor2, lambda pa, pb: 2 * (pa - pb)),
    "Prop. 4, volume r^n / n! prod λ (missing 2^n)": (
        pc.check_ancer_prop4, lambda lam, r: r ** len(lam) * np.prod(lam) / math.factorial(len(lam))),
    "§5.1, volume without π^(n/2)": (
        pc.check_ancer_ellipsoid_volume, lambda s, r: r ** len(s) * np.prod(s) / math.exp(gammaln(len(s) / 2 + 1))),
    "Prop. 5, zonotope volume 2 |det Λ|": (pc.check_ancer_prop5, lambda m: 2 * abs(np.linalg.det(m))),
    "§5, enclosed radius max θ r": (pc.check_ancer_enclosed_radius, lambda th, gap, norm, u=None: gap * th.max()),
    "Prop. 6, L = 0.9 / sqrt(2π)": (pc.check_ancer_prop6, 0.9 * pc.L_TIGHT),
    "Prop. 6 tight, L = sqrt(2/π)": (pc.check_ancer_prop6_tight, pc.L_PROP6_PRINTED),
    "Prop. 6 difference, L = 1/sqrt(2π)": (pc.check_ancer_prop6_difference, pc.L_TIGHT),
    "Prop. 7, L = 0.3": (pc.check_ancer_prop7, 0.3),
    "Prop. 7 Jensen, B = sum α Σ (arithmetic mean)": (
        pc.check_ancer_prop7_jensen, lambda a, covs: sum(ai * c for ai, c in zip(a, covs))),
    "Cor. 3, constant 1.01 sqrt(π/2)": (pc.check_ancer_cor3_tight, 1.01 * math.sqrt(math.pi / 2)),
    "Cor. 3 attained, printed 1/sqrt(2π)": (pc.check_ancer_cor3_attained, 1 / math.sqrt(2 * math.pi)),
    "Lemma 1, outer radius = smallest semi-axis": (pc.check_ancer_lemma1, geometry.inner_ball_radius),
    "Lemma 2, combination halved": (pc.check_ancer_lemma2, lambda t, qa, qb: 0.5 * (t * qa + (1 - t) * qb)),
    "Lemma 3, Eq. 5 with t and 1 - t swapped": (
        pc.check_ancer_lemma3, lambda t, a, qa, b, qb: rotated.k_function(1 - np.asarray(t), a, qa, b, qb)),
    "Prop. 8, -K (concave)": (pc.check_ancer_prop8_convex, lambda *args: 2 - rotated.k_function(*args)),
    "Prop. 8, K(1/2) instead of min K": (
        pc.check_ancer_prop8_disjoint, lambda a, sa, b, sb: (0.5, geometry.k_function(0.5, b - a, sa, sb))),
    "D.3, always 'disjoint'": (pc.check_ancer_d3, lambda a, sa, b, sb: False),
    "D.4, distance 10% too large": (
        pc.check_ancer_d4_projection, lambda y, s: (None, 1.1 * geometry.project_onto_ellipsoid(y, s)[1])),
    "D.4/D.5, printed inner radius min_i B_ii": (pc.check_ancer_d45_largest_out_subset, pc.ancer_printed_inner_radius),
    "Lemma 4, wrong sign": (pc.check_ancer_lemma4, lambda y, w, k: y + (y @ w - k) / (w @ w) * w),
    "D.5, printed normal -sign(y) A": (pc.check_ancer_d5_hyperplane, pc.d5_printed_normal),
    "D.5, printed r* (l1 length of the l2 projection)": (pc.check_ancer_d5_sound, pc.d5_printed_radius),
    "D.5 exact, Hölder bound as the distance": (pc.check_ancer_d5_exact, pc.d5_holder_radius),
    "RANCER Eq. 3, rotation dropped": (pc.check_rancer_eq3, pc.rancer_eq3_printed_region_inv),
    "RANCER Eq. 5, rotations ignored": (
        pc.check_rancer_eq5,
        lambda a, ua, sa, b, ub, sb: rotated.minimize_k(a, np.eye(a.size), sa, b, np.eye(b.size), sb)),
    "RANCER Eq. 6, rotation ignored": (
        pc.check_rancer_eq6, lambda y, u, s: rotated.project_onto_ellipsoid(y, np.eye(y.size), s)),
    "RANCER LargestOutSubset, rotation of S_Q ignored": (
        pc.check_rancer_largest_out_subset,
        lambda a, ua, sa, b, sb: rotated.largest_out_subset(a, np.eye(a.size), sa, b, sb)),
    "UCAN Thm. 3.2 Gaussian, gap without 1/2": (pc.check_ucan_thm32_gaussian, lambda pa, pb: ndtri(pa) - ndtri(pb)),
    "UCAN Thm. 3.2 uniform, printed (no |.|)": (pc.check_ucan_thm32_uniform, pc.ucan_printed_l1_region),
    "UCAN Cor. 3.3, printed proof step": (pc.check_ucan_cor33, pc.ucan_printed_cor33_step),
    "UCAN Thm. C.2, Γ(d/p) in place of Γ(1 + d/p)": (
        pc.check_ucan_thm_c2,
        lambda s, r, p: pc.superellipsoid_volume(s, r, p) * (np.sum(1 / np.broadcast_to(p, np.shape(s))))),
    "UCAN Thm. C.2 exact, (2R)^d missing the 2": (
        pc.check_ucan_thm_c2_exact, lambda s, r, p: pc.superellipsoid_volume(s, r, p) / 2 ** len(s)),
}


@pytest.mark.parametrize("name", list(WRONG_FORMULAS))
def test_a_wrong_formula_makes_its_check_fail(name):
    check, wrong = WRONG_FORMULAS[name]
    assert check(MC).passed, "the correct formula must pass"
    assert not check(MC, formula=wrong).passed


def test_every_check_accepts_a_formula_to_test():
    import inspect
    for checks in pc.CHECKS.values():
        for check in checks:
            assert "formula" in inspect.signature(check).parameters, check.__name__


def test_typo_demos_verdicts():
    """Each printed form gets its recorded verdict and each corrected form is sound (tight where tightness is
    checked) or holds; Prop. 6 and Cor. 3 are sound but not tight, never called unsound."""
    df = pc.run_typo_demos(MC)
    assert df["as expected"].all(), df[["where", "printed form", "corrected form"]]
    assert set(df["corrected form"]) <= {pc.SOUND, pc.TIGHT, pc.HOLDS}
    assert df["printed form"].isin([pc.UNSOUND, pc.FAILS]).sum() >= 7
    loose = df[df["printed form"] == pc.LOOSE]["where"].tolist()
    assert loose == ["ANCER Prop. 6", "ANCER Prop. 7 / Cor. 3"]


def _result(passed: bool) -> pc.CheckResult:
    return pc.CheckResult("x", "m", 0.0, 0.0, 0.0 if passed else -1.0, 0.0, "r", passed)


@pytest.mark.parametrize("statement, check, tight, verdict", [
    ("bound", False, None, "unsound"), ("bound", False, True, "unsound"), ("bound", True, None, "sound"),
    ("bound", True, False, "sound but not tight"), ("bound", True, True, "sound and tight"),
    ("identity", False, None, "fails"), ("identity", True, None, "holds"),
])
def test_form_verdict_vocabulary(statement, check, tight, verdict):
    tightness = None if tight is None else _result(tight)
    assert pc.form_verdict(statement, _result(check), tightness) == verdict


def test_form_verdict_rejects_bad_input():
    with pytest.raises(ValueError, match="statement"):
        pc.form_verdict("lemma", _result(True))
    with pytest.raises(ValueError, match="identity has no tightness"):
        pc.form_verdict("identity", _result(True), _result(True))
    with pytest.raises(ValueError, match="expected"):
        pc.TypoDemo("w", "p", "c", pc.check_ancer_cor3, 1.0, "bound", "false")


def test_cor3_tight_constant_is_attained_and_printed_is_not():
    """With sqrt(π/2) the worst certified / exact flip radius reaches 1 (attained); Cor. 3's printed 1/sqrt(2π)
    reaches only 1/π (sound, not tight); 1% above sqrt(π/2) is unsound."""
    tight = pc.check_ancer_cor3_attained(MC)
    printed = pc.check_ancer_cor3_attained(MC, formula=1 / math.sqrt(2 * math.pi))
    assert tight.passed and not printed.passed
    assert printed.value == pytest.approx(1 / math.pi, rel=1e-6)
    assert pc.check_ancer_cor3(MC).passed
    assert not pc.check_ancer_cor3(MC, formula=1.01 * math.sqrt(math.pi / 2)).passed


def test_d5_counterexample_numbers():
    """y = (3, 0.001), s = (1, 10): the printed r* = 2.0001 * 1.1 / 1.01 = 2.178 exceeds the l1 distance 2.0001."""
    d = pc.d5_counterexample_data()
    assert d["printed_radius"] == pytest.approx(2.0001 * 1.1 / 1.01, rel=1e-12)
    assert d["exact_radius"] == pytest.approx(2.0001, rel=1e-12)
    assert d["lp_radius"] == pytest.approx(2.0001, rel=1e-8)
    assert np.abs(d["nearest"] / d["scales"]).sum() <= 1 + 1e-9           # a point of the region ...
    assert np.abs(d["nearest"] - d["y"]).sum() < d["printed_radius"]        # ... inside the printed l1 ball
    assert d["holder_radius"] <= d["exact_radius"]
    # the printed construction: x* on the facet hyperplane w.x = 1, r* its l1 distance from y
    assert d["normal"] @ d["projection"] == pytest.approx(1.0, rel=1e-12)
    assert np.abs(d["projection"] - d["y"]).sum() == pytest.approx(d["printed_radius"], rel=1e-12)


def test_mixture_constants():
    """Prop. 6's sqrt(2/π) is twice the tight 1/sqrt(2π); Cor. 3's 1/sqrt(2π) = 1/(2 sqrt(π/2)); the tight
    certificate constant 1/(2 L) = sqrt(π/2) is π times Cor. 3's."""
    assert pc.L_PROP6_PRINTED == pytest.approx(2 * pc.L_TIGHT)
    assert 1 / (2 * pc.L_PROP7_PRINTED) == pytest.approx(1 / math.sqrt(2 * math.pi))
    assert (1 / (2 * pc.L_TIGHT)) / (1 / math.sqrt(2 * math.pi)) == pytest.approx(math.pi)
    table = pc.mixture_constants()
    assert table["L"].tolist() == [pc.L_PROP6_PRINTED, pc.L_PROP7_PRINTED, pc.L_TIGHT]
    assert table["radius vs Cor. 3"].tolist() == pytest.approx([math.pi / 2, 1.0, math.pi], rel=1e-12)


def test_grid_scores_are_probabilities_and_match_monte_carlo():
    """The exact smoothed scores of a rotated grid classifier agree with a direct Monte Carlo estimate (5 SE)."""
    rng = np.random.default_rng(0)
    clf = pc.random_grid_classifier(rng, 2, num_classes=3, cuts=3)
    sigma = np.array([0.4, 0.9])
    x = np.array([[0.3, -0.2]])
    exact = pc.grid_gaussian_scores(clf, x, sigma)[0]
    assert exact.sum() == pytest.approx(1.0, abs=1e-12)
    eps = rng.normal(size=(200_000, 2)) * sigma @ clf.frame.T
    y = (x + eps) @ clf.frame
    cells = tuple(np.searchsorted(c, y[:, k], side="right") for k, c in enumerate(clf.cuts))
    freq = np.bincount(clf.labels[cells], minlength=3) / len(y)
    assert np.all(np.abs(freq - exact) <= 5 * np.sqrt(exact * (1 - exact) / len(y)) + 1e-12)
    lam = np.array([0.5, 0.7])
    flat = pc.random_grid_classifier(rng, 2, cuts=3, rotate=False)
    u = pc.grid_uniform_scores(flat, x, lam)[0]
    z = x + rng.uniform(-1, 1, (200_000, 2)) * lam
    cells = tuple(np.searchsorted(c, z[:, k], side="right") for k, c in enumerate(flat.cuts))
    freq = np.bincount(flat.labels[cells], minlength=flat.num_classes) / len(z)
    assert np.all(np.abs(freq - u) <= 5 * np.sqrt(u * (1 - u) / len(z)) + 1e-12)


def test_superellipsoid_volume_special_cases():
    """Thm. C.2 at p = 1 and p = 2 is ANCER's cross-polytope and ellipsoid volume; p = inf-like large p tends to
    the box volume prod 2 σ_i R."""
    s, r = np.array([0.5, 1.0, 2.0]), 1.3
    assert math.log(pc.superellipsoid_volume(s, r, 1.0)) == pytest.approx(float(regions.log_volume(s, r, "l1")))
    assert math.log(pc.superellipsoid_volume(s, r, 2.0)) == pytest.approx(float(regions.log_volume(s, r, "l2")))
    assert pc.superellipsoid_volume(s, r, 1e6) == pytest.approx(np.prod(2 * s * r), rel=1e-5)
