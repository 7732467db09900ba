"""Paired bootstrap intervals and three-way verdicts (`evaluation.intervals`): exact cases, the
pairing, the envelope resampled with its σ choice, coverage of the true effect, and bad input named."""
from __future__ import annotations

import numpy as np
import pytest

from ancer_lite.evaluation import intervals as I


def test_resample_weights_are_resamples_of_the_inputs():
    w = I.resample_weights(7, 300, seed=3, key=11)
    assert w.shape == (300, 7)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    counts = w * 7
    np.testing.assert_array_equal(counts, np.round(counts))               # whole draws of each input
    assert np.array_equal(w, I.resample_weights(7, 300, seed=3, key=11))  # a function of (seed, key)
    assert not np.array_equal(w, I.resample_weights(7, 300, seed=3, key=12))
    # each input is drawn n/n = 1 time per resample on average: mean count 1 within 5 standard errors
    assert abs(counts.mean() - 1.0) < 5 * np.sqrt((1 - 1 / 7) / (300 * 7))


def test_a_constant_shift_is_known_exactly_when_paired():
    """Pairing: the inputs' spread cancels, so b + 0.2 against b has the interval [0.2, 0.2] however spread b is."""
    b = np.random.default_rng(0).exponential(1.0, size=200)
    e = I.paired_effect(b + 0.2, b)
    assert e.estimate == pytest.approx(0.2) and e.low == pytest.approx(0.2) and e.high == pytest.approx(0.2)
    assert e.verdict == I.HOLDS and e.half_width == pytest.approx(0.0, abs=1e-12)
    assert I.paired_effect(b, b + 0.2).verdict == I.FAILS
    assert I.paired_effect(b, b).verdict == I.WITHIN_NOISE and I.paired_effect(b, b).estimate == 0.0


def test_unpaired_noise_gives_within_noise():
    rng = np.random.default_rng(1)
    a, b = rng.normal(1.0, 1.0, 60), rng.normal(1.0, 1.0, 60)
    e = I.paired_effect(a, b)
    assert e.low < 0 < e.high and e.verdict == I.WITHIN_NOISE
    # the interval's half-width is about that of a normal interval for the difference of two independent means
    assert e.half_width == pytest.approx(1.96 * np.sqrt(2 / 60), rel=0.25)


def test_envelope_is_the_best_row_and_resampled():
    rng = np.random.default_rng(2)
    a = np.stack([rng.normal(0.5, 1.0, 100), rng.normal(0.6, 1.0, 100)])  # two σ of method A
    b = rng.normal(0.4, 1.0, (3, 100))
    e = I.paired_effect(a, b)
    assert e.estimate == pytest.approx(a.mean(1).max() - b.mean(1).max())
    # the resampled envelope is the max over rows in every resample: its mean is at least each fixed row's
    w = I.resample_weights(100, I.DRAWS, 0, 0)
    fixed = (w @ a[int(np.argmax(a.mean(1)))]) - (w @ b.T).max(axis=1)
    best = (w @ a.T).max(axis=1) - (w @ b.T).max(axis=1)
    assert (best >= fixed - 1e-15).all()
    lo, hi = np.quantile(best, [0.025, 0.975])
    assert (e.low, e.high) == (pytest.approx(lo), pytest.approx(hi))


def test_ratio_kind():
    b = np.random.default_rng(3).uniform(0.5, 1.5, 80)
    e = I.paired_effect(1.3 * b, b, kind=I.RATIO)
    assert (e.estimate, e.low, e.high) == (pytest.approx(0.3), pytest.approx(0.3), pytest.approx(0.3))
    assert e.text() == "+30% [+30%, +30%]"
    with pytest.raises(ValueError, match="kind 'ratio'"):
        I.paired_effect(b, np.zeros(80), kind=I.RATIO)
    # B certifies one input only: the resamples without it are unbounded gains, and the interval says so
    sparse = np.zeros(80)
    sparse[0] = 1.0
    e = I.paired_effect(np.ones(80), sparse, kind=I.RATIO)
    assert e.estimate == pytest.approx(79.0) and e.high == np.inf and e.verdict == I.HOLDS


def test_coverage_of_the_true_difference():
    """The 95% interval covers the true mean difference in about 95% of repeated test samples. 200 repetitions
    (a fixed seed each): the coverage must be >= 0.89, 3.5 binomial standard deviations below 0.95."""
    rng = np.random.default_rng(4)
    covered = 0
    for rep in range(200):
        x = rng.normal(0.0, 1.0, 100)
        a, b = x + rng.normal(0.3, 0.5, 100), x  # true effect 0.3, inputs shared (paired)
        e = I.paired_effect(a, b, seed=rep, draws=500)
        covered += e.low <= 0.3 <= e.high
    assert covered / 200 >= 0.89


def test_mean_interval():
    v = np.random.default_rng(5).exponential(2.0, 400)
    m, lo, hi = I.mean_interval(v)
    assert m == pytest.approx(v.mean()) and lo < m < hi
    assert hi - lo == pytest.approx(2 * 1.96 * v.std() / np.sqrt(400), rel=0.2)


def test_text_and_dict():
    e = I.Effect(0.1234, -0.01, 0.25, 0.95, 50, 2000)
    assert e.text() == "+0.123 [-0.010, +0.250]" and e.verdict == I.WITHIN_NOISE
    assert e.as_dict()["verdict"] == "within noise" and set(I.VERDICTS) == {"holds", "fails", "within noise"}


def test_claim_key_is_stable():
    assert I.claim_key("03/mnist/l2/C2") == 3836023629  # CRC-32: the same in every process
    assert I.claim_key("a") == I.claim_key("a") != I.claim_key("b")
    with pytest.raises(ValueError, match="label"):
        I.claim_key("")


@pytest.mark.parametrize("call, match", [
    (lambda: I.paired_effect(np.ones(3), np.ones(4)), "same test inputs"),
    (lambda: I.paired_effect(np.array([1.0, np.nan]), np.ones(2)), "a must be finite"),
    (lambda: I.paired_effect(np.ones(3), np.ones((2, 2, 3))), "b must have shape"),
    (lambda: I.paired_effect(np.ones(3), np.ones(3), kind="odds"), "kind"),
    (lambda: I.paired_effect(np.ones(3), np.ones(3), draws=10), "draws"),
    (lambda: I.paired_effect(np.ones(3), np.ones(3), level=1.0), "level"),
    (lambda: I.paired_effect("x", np.ones(3)), "a must be a real array"),
    (lambda: I.mean_interval(np.ones((2, 3))), "values must be one method"),
    (lambda: I.resample_weights(0, 10, 0, 0), "n"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_threshold_effect_shifts_the_mean_interval():
    v = (np.arange(100) % 10 == 0).astype(float)  # a 10% share
    m, lo, hi = I.mean_interval(v, seed=2, key=5)
    e = I.threshold_effect(v, 0.9, seed=2, key=5)
    assert (e.estimate, e.low, e.high) == (pytest.approx(m - 0.9), pytest.approx(lo - 0.9), pytest.approx(hi - 0.9))
    assert e.verdict == I.FAILS
    with pytest.raises(ValueError, match="threshold"):
        I.threshold_effect(v, np.nan)


def test_bootstrap_effect_of_a_median_matches_the_weights_path_for_a_mean():
    """`bootstrap_effect` resamples the same positions as `resample_weights`: for a mean, both give one interval."""
    v = np.random.default_rng(6).exponential(1.0, 90)
    e = I.bootstrap_effect(lambda i: v[i].mean(), 90, seed=1, key=2)
    m, lo, hi = I.mean_interval(v, seed=1, key=2)
    assert (e.estimate, e.low, e.high) == (pytest.approx(m), pytest.approx(lo), pytest.approx(hi))
    med = I.bootstrap_effect(lambda i: float(np.median(v[i])) - 0.5, 90)
    assert med.estimate == pytest.approx(np.median(v) - 0.5) and med.low <= med.estimate <= med.high
    with pytest.raises(ValueError, match="finite"):
        I.bootstrap_effect(lambda i: np.nan, 90)
    with pytest.raises(TypeError, match="statistic"):
        I.bootstrap_effect(3.0, 90)


def test_proportion_effect_is_clopper_pearson():
    """The exact interval: for 0 of n its upper end is 1 - (α/2)^(1/n) (closed form), for k of n it covers the true
    share in at least `level` of repeated binomial samples (exactness: conservative), and at_most flips the sign."""
    e = I.proportion_effect(0, 40, at_most=True)
    assert e.estimate == 0 and e.high == 0 and e.low == pytest.approx(-(1 - 0.025 ** (1 / 40)), rel=1e-9)
    assert e.verdict == I.WITHIN_NOISE and e.draws == 0 and e.n == 40
    assert I.proportion_effect(1, 91, at_most=True).verdict == I.FAILS  # one verified violation: not sound
    assert I.proportion_effect(9, 91, 0.05).estimate == pytest.approx(9 / 91 - 0.05)
    rng = np.random.default_rng(0)
    p, n = 0.1, 60
    covered = [(lambda e: e.low <= 0 <= e.high)(I.proportion_effect(int(k), n, p)) for k in rng.binomial(n, p, 400)]
    assert np.mean(covered) >= 0.95
    for bad in (dict(count=-1, n=5), dict(count=6, n=5), dict(count=1.5, n=5), dict(count=True, n=5)):
        with pytest.raises(ValueError, match="count"):
            I.proportion_effect(**bad)
    with pytest.raises(ValueError, match="threshold"):
        I.proportion_effect(1, 5, np.inf)
