"""Tests for ancer_lite.core.memory: memory-based certification (ANCER Algorithm 1, App. D). The fast
`certify_stream` and the incremental `CertificationMemory` must reproduce the plain loop
`algorithm1_reference`; the final memory is checked for soundness with the convex-solver references
of tests/conftest.py; hand-made 2D cases pin each branch; one speed test (name contains `speed`)."""
from __future__ import annotations

import time
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

from ancer_lite.core import memory as M
from ancer_lite.core.geometry import SHRINK_MARGIN
from ancer_lite.core.regions import region_norm

NORMS = ["l2", "l1"]
POLICIES = [M.SHRINK, M.WORST_CASE]
BLOCKS = [1, 3, 16, 1024]


def random_stream(rng: np.random.Generator, num: int = 40):
    """A small stream with frequent intersections: dims 2-4, centres around 3 clusters, 2-3 classes,
    anisotropic semi-axes, ~15% abstaining base predictions (-1; some with zero scales, which must be
    ignored)."""
    n = int(rng.integers(2, 5))
    classes = int(rng.integers(2, 4))
    clusters = 1.5 * rng.normal(size=(3, n))
    centers = clusters[rng.integers(0, 3, num)] + 0.4 * rng.normal(size=(num, n))
    scales = 0.35 * np.exp(0.6 * rng.normal(size=(num, n)))
    preds = rng.integers(0, classes, num)
    abstain = rng.random(num) < 0.15
    preds[abstain] = M.ABSTAIN
    scales[abstain & (rng.random(num) < 0.5)] = 0.0
    return centers, preds, scales


def same_decisions(got: list[M.Decision], want: list[M.Decision]) -> None:
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g.prediction, g.status) == (w.prediction, w.status), (k, g, w)
        if w.scales is None:
            assert g.scales is None, k
        else:
            np.testing.assert_allclose(g.scales, w.scales, rtol=1e-9, atol=0, err_msg=str(k))


def region_gap(ref, ci, si, cj, sj, norm: str) -> float:
    """Reference: <= 1 iff region j meets region i (SLSQP for ellipsoids, LP for cross-polytopes)."""
    return ref.ellipsoid_gap(ci, si, cj, sj) if norm == "l2" else ref.polytope_gap(ci, si, cj, sj)


def balls_apart(ci, si, cj, sj) -> bool:
    """Both region shapes lie in the l2 ball of radius max(s) around their centre (Lemma 1's test,
    written out here so the reference does not depend on geometry.max_intersect)."""
    return float(np.linalg.norm(ci - cj)) > si.max() + sj.max()


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("norm", NORMS)
def test_stream_matches_reference(norm, policy):
    """Algorithm 1: `certify_stream` (blocked Gram pre-filter + vectorized `decide`) for several block
    sizes, and `CertificationMemory.certify` one input at a time, give exactly the decisions of the
    plain loop `algorithm1_reference`: same prediction and status, final scales to rtol 1e-9."""
    rng = np.random.default_rng(20 + 2 * NORMS.index(norm) + POLICIES.index(policy))
    statuses = Counter()
    for _ in range(25):
        c, p, s = random_stream(rng)
        want = M.algorithm1_reference(c, p, s, norm, policy)
        statuses.update(d.status for d in want)
        for block in BLOCKS:
            same_decisions(M.certify_stream(c, p, s, norm, policy, block=block), want)
        mem = M.CertificationMemory(c.shape[1], norm, policy)
        same_decisions([mem.certify(x, int(pred), sc) for x, pred, sc in zip(c, p, s)], want)
        assert len(mem) == sum(d.prediction != M.ABSTAIN for d in want)
    # the cases exercise every branch of Algorithm 1 that the policy allows
    expected = {M.KEPT, M.ABSTAIN_BASE, M.ABSTAIN_INSIDE}
    expected |= {M.SHRUNK} if policy == M.SHRINK else {M.ABSTAIN_INTERSECT}
    assert expected <= set(statuses), statuses
    assert all(statuses[k] >= 10 for k in expected), statuses


@pytest.mark.parametrize("norm", NORMS)
def test_shrink_memory_is_sound(ref, norm):
    """Algorithm 1 with LargestOutSubset (D.4/D.5): in the final memory no two regions of different
    classes intersect (reference gap >= 1 - 1e-6: shrunk balls sit 1e-9 relative inside the true
    distance, below the solvers' resolution) and no kept centre lies in another class's region;
    shrunk regions are balls no larger than the original smallest semi-axis."""
    rng = np.random.default_rng(40 + NORMS.index(norm))
    shrunk = checked = 0
    for _ in range(8):
        c, p, s = random_stream(rng)
        out = M.certify_stream(c, p, s, norm, M.SHRINK)
        kept = [(c[k], d.prediction, d.scales) for k, d in enumerate(out) if d.prediction != M.ABSTAIN]
        for k, d in enumerate(out):
            if d.status == M.SHRUNK:
                shrunk += 1
                assert np.all(d.scales == d.scales[0]) and d.scales[0] <= s[k].min()
        for i, (ci, pi, si) in enumerate(kept):
            for cj, pj, sj in kept[i + 1:]:
                if pi == pj:
                    continue
                assert region_norm(cj - ci, si, norm) > 1.0 and region_norm(ci - cj, sj, norm) > 1.0
                if balls_apart(ci, si, cj, sj):
                    continue
                checked += 1
                assert region_gap(ref, ci, si, cj, sj, norm) >= 1.0 - 1e-6, (ci, si, cj, sj)
    assert shrunk >= 20 and checked >= 50, (shrunk, checked)


@pytest.mark.parametrize("norm", NORMS)
def test_abstain_policy_abstains_on_every_intersection(ref, norm):
    """The worst-case policy (§6): an input abstains whenever its region meets (reference gap
    < 1 - 1e-3) a kept region of another class; kept inputs are never shrunk; and every abstention
    has a reason: its centre lies in such a region, or the regions (for l1 their circumscribing
    ellipsoids, D.3) come within 1e-3 of touching."""
    rng = np.random.default_rng(50 + NORMS.index(norm))
    abstained = 0
    for _ in range(8):
        c, p, s = random_stream(rng)
        out = M.certify_stream(c, p, s, norm, M.WORST_CASE)
        kept = []
        for j, d in enumerate(out):
            if p[j] == M.ABSTAIN:
                assert d.status == M.ABSTAIN_BASE
                continue
            others = [i for i in kept if p[i] != p[j]]
            if d.prediction != M.ABSTAIN:
                assert d.status == M.KEPT and d.prediction == p[j]
                np.testing.assert_array_equal(d.scales, s[j])
                for i in others:
                    if not balls_apart(c[i], s[i], c[j], s[j]):
                        assert region_gap(ref, c[i], s[i], c[j], s[j], norm) >= 1.0 - 1e-3, (i, j)
                kept.append(j)
            elif d.status == M.ABSTAIN_INSIDE:
                abstained += 1
                assert any(region_norm(c[j] - c[i], s[i], norm) <= 1.0 for i in others)
            else:
                assert d.status == M.ABSTAIN_INTERSECT
                abstained += 1
                assert any(ref.ellipsoid_gap(c[i], s[i], c[j], s[j]) <= 1.0 + 1e-3 for i in others)
    assert abstained >= 20


# --- hand-made 2D cases, one per branch of Algorithm 1 ------------------------------------------

def _memory_with_unit_region(norm: str, policy: str = M.SHRINK) -> M.CertificationMemory:
    """Memory holding one region of class 0 at the origin with semi-axes (1, 1)."""
    mem = M.CertificationMemory(2, norm, policy)
    assert mem.certify(np.zeros(2), 0, np.ones(2)).status == M.KEPT
    return mem


@pytest.mark.parametrize("norm", NORMS)
def test_abstain_when_centre_inside_earlier_region(norm):
    """Algorithm 1, first branch: x_{N+1} in R_i of another class -> ABSTAIN (and not stored)."""
    mem = M.CertificationMemory(2, norm)
    mem.certify(np.zeros(2), 0, np.array([2.0, 0.5]))
    d = mem.certify(np.array([1.5, 0.0]), 1, np.array([0.1, 0.1]))  # 1.5 / 2 <= 1
    assert (d.prediction, d.status, d.scales, d.radius) == (M.ABSTAIN, M.ABSTAIN_INSIDE, None, 0.0)
    assert len(mem) == 1


@pytest.mark.parametrize("norm", NORMS)
def test_shrink_to_ball(norm):
    """Algorithm 1, second branch with D.4/D.5: R_new (centre (3, 0), semi-axes (2.5, 3)) meets the
    unit region at the origin, so it becomes the ball of radius dist = 2 (times 1 - SHRINK_MARGIN) around
    (3, 0); with semi-axes (2.5, 0.5) the ball is capped by the smallest semi-axis instead."""
    mem = _memory_with_unit_region(norm)
    d = mem.certify(np.array([3.0, 0.0]), 1, np.array([2.5, 3.0]))
    assert (d.prediction, d.status) == (1, M.SHRUNK)
    np.testing.assert_allclose(d.scales, 2.0 * (1.0 - SHRINK_MARGIN), rtol=1e-12)
    mem = _memory_with_unit_region(norm)
    d = mem.certify(np.array([3.0, 0.0]), 1, np.array([2.5, 0.5]))
    assert d.status == M.SHRUNK and np.all(d.scales == 0.5)
    # the worst-case policy abstains instead
    d = _memory_with_unit_region(norm, M.WORST_CASE).certify(np.array([3.0, 0.0]), 1, np.array([2.5, 3.0]))
    assert (d.prediction, d.status) == (M.ABSTAIN, M.ABSTAIN_INTERSECT)


@pytest.mark.parametrize("norm", NORMS)
def test_disjoint_regions_kept(norm):
    """Algorithm 1 with Intersect (D.2/D.3): R_new (centre (3, 0), semi-axes (1.5, 5)) passes
    MaxIntersect (3 <= 1 + 5) but misses the unit region (its x-extent starts at 1.5 > 1): kept
    unchanged under both policies."""
    for policy in POLICIES:
        mem = _memory_with_unit_region(norm, policy)
        d = mem.certify(np.array([3.0, 0.0]), 1, np.array([1.5, 5.0]))
        assert (d.prediction, d.status) == (1, M.KEPT)
        np.testing.assert_array_equal(d.scales, [1.5, 5.0])
        assert len(mem) == 2


@pytest.mark.parametrize("norm", NORMS)
def test_same_class_overlap_kept(norm):
    """Algorithm 1 only compares against other classes: an overlapping region of the same class,
    even with its centre inside the stored region, is kept unchanged."""
    for policy in POLICIES:
        d = _memory_with_unit_region(norm, policy).certify(np.array([0.5, 0.0]), 0, np.array([1.0, 2.0]))
        assert (d.prediction, d.status) == (0, M.KEPT)
        np.testing.assert_array_equal(d.scales, [1.0, 2.0])


@pytest.mark.parametrize("norm", NORMS)
def test_abstain_status_names_first_reason(norm):
    """Algorithm 1 stops at the first memory entry that triggers: entry 0 (class 0) meets R_new
    without containing its centre, entry 1 (class 2) contains the centre. Worst case: abstain
    because of entry 0 (ABSTAIN_INTERSECT, as the reference loop says); shrink: ABSTAIN_INSIDE.
    (`decide` must not report ABSTAIN_INSIDE for both.)"""
    c = np.array([[0.0, 0.0], [2.0, 0.0], [1.8, 0.0]])
    s = np.array([[1.0, 1.0], [0.5, 0.5], [1.0, 1.0]])
    p = np.array([0, 2, 1])
    for policy, status in [(M.WORST_CASE, M.ABSTAIN_INTERSECT), (M.SHRINK, M.ABSTAIN_INSIDE)]:
        want = M.algorithm1_reference(c, p, s, norm, policy)
        assert want[2].status == status
        same_decisions(M.certify_stream(c, p, s, norm, policy), want)


# --- speed ----------------------------------------------------------------------------------------

def synthetic_cifar_regions(seed: int = 0, num: int = 10_000, dim: int = 3072, clustered: int = 1000,
                            per_cluster: int = 40):
    """num regions with float64 centres in [0, 1]^dim: uniform centres plus `clustered` near-duplicates
    (25 clusters, per-cluster spread 0.002-0.008 per pixel), semi-axes gap * theta with theta in
    [0.1, 0.3] and gap in [0.5, 1.5], 10 classes, 10% abstaining base predictions."""
    rng = np.random.default_rng(seed)
    centers = rng.random((num, dim))
    k = clustered // per_cluster
    idx = rng.choice(num, clustered, replace=False)
    spread = np.repeat(rng.uniform(0.002, 0.008, k), per_cluster)
    base = np.repeat(rng.uniform(0.1, 0.9, (k, dim)), per_cluster, axis=0)
    centers[idx] = np.clip(base + spread[:, None] * rng.normal(size=(clustered, dim)), 0.0, 1.0)
    scales = rng.uniform(0.5, 1.5, num)[:, None] * rng.uniform(0.1, 0.3, (num, dim))
    preds = rng.integers(0, 10, num)
    preds[rng.random(num) < 0.1] = M.ABSTAIN
    return centers, preds, scales


def test_speed_certify_stream_10k_regions_dim_3072():
    """Algorithm 1 at CIFAR-10 scale: 10,000 ellipsoids in dimension 3,072 (a few hundred of them
    intersect another class's region and get shrunk) go through `certify_stream` in under 60 s."""
    c, p, s = synthetic_cifar_regions()
    start = time.perf_counter()
    out = M.certify_stream(c, p, s, "l2", M.SHRINK)
    elapsed = time.perf_counter() - start
    counts = Counter(d.status for d in out)
    print(f"\ncertify_stream: 10,000 regions, dim 3072, l2/shrink: {elapsed:.1f} s; {dict(counts)}")
    assert len(out) == 10_000
    assert counts[M.SHRUNK] >= 200 and counts[M.ABSTAIN_INSIDE] >= 10, counts
    assert elapsed < 60.0, elapsed


# --- bad input --------------------------------------------------------------------------------------

def _good():
    rng = np.random.default_rng(0)
    return rng.random((5, 3)), np.array([0, 1, 0, M.ABSTAIN, 1]), rng.uniform(0.1, 1.0, (5, 3))


@pytest.mark.parametrize("mutate, name", [
    (lambda c, p, s: (c[0], p, s), "centers"),                      # 1-D centres
    (lambda c, p, s: (c, p, s[:, :2]), "scales"),                   # scales shape differs
    (lambda c, p, s: (c, p[:4], s), "preds"),                       # one label short
    (lambda c, p, s: (np.where(np.eye(5, 3) > 0, np.nan, c), p, s), "centers"),
    (lambda c, p, s: (np.where(np.eye(5, 3) > 0, np.inf, c), p, s), "centers"),
    (lambda c, p, s: (c, p, np.where(np.eye(5, 3) > 0, np.inf, s)), "scales"),
    (lambda c, p, s: (c, p, np.where(np.eye(5, 3) > 0, 0.0, s)), "scales"),    # zero scale
    (lambda c, p, s: (c, p, np.where(np.eye(5, 3) > 0, -1.0, s)), "scales"),   # negative scale
    (lambda c, p, s: (c, p + 0.5, s), "preds"),                     # non-integer labels
    (lambda c, p, s: (c, np.where(np.arange(len(p)) == 0, -5, p), s), "preds"),  # -5 was kept as a class
])
def test_bad_batch_input_raises(mutate, name):
    """`certify_stream` and `algorithm1_reference` reject malformed input with a ValueError naming
    the argument (wrong shapes, NaN/Inf centres or scales, non-positive scales, non-integer labels)."""
    c, p, s = mutate(*_good())
    for fn in (M.certify_stream, M.algorithm1_reference):
        with pytest.raises(ValueError, match=name):
            fn(c, p, s, "l2")


def test_bad_options_raise():
    """Unknown norm / policy, a non-positive block size and a bad memory dimension raise ValueError
    naming the argument; so do wrong-shaped or non-finite inputs to CertificationMemory.certify."""
    c, p, s = _good()
    for fn in (M.certify_stream, M.algorithm1_reference):
        with pytest.raises(ValueError, match="norm"):
            fn(c, p, s, "linf")
        with pytest.raises(ValueError, match="policy"):
            fn(c, p, s, "l2", policy="ignore")
    for block in (0, -5, 2.5):
        with pytest.raises(ValueError, match="block"):
            M.certify_stream(c, p, s, "l1", block=block)
    with pytest.raises(ValueError, match="norm"):
        M.CertificationMemory(3, "l3")
    with pytest.raises(ValueError, match="policy"):
        M.CertificationMemory(3, "l2", "maybe")
    with pytest.raises(ValueError, match="dim"):
        M.CertificationMemory(0, "l2")
    mem = M.CertificationMemory(3, "l2")
    with pytest.raises(ValueError, match="x"):
        mem.certify(np.zeros(4), 0, np.ones(3))
    with pytest.raises(ValueError, match="x"):
        mem.certify(np.array([0.0, np.nan, 0.0]), 0, np.ones(3))
    with pytest.raises(ValueError, match="scales"):
        mem.certify(np.zeros(3), 0, np.ones(2))
    with pytest.raises(ValueError, match="scales"):
        mem.certify(np.zeros(3), 0, np.array([1.0, 0.0, 1.0]))
    for pred in (1.7, -7, True, "3"):  # 1.7 would be stored as class 1, -7 as a class of its own
        with pytest.raises(ValueError, match="pred must be a class index"):
            mem.certify(np.zeros(3), pred, np.ones(3))
    assert len(mem) == 0
    # abstaining inputs may carry zero scales; they are not stored
    assert mem.certify(np.zeros(3), M.ABSTAIN, np.zeros(3)).status == M.ABSTAIN_BASE and len(mem) == 0


@pytest.mark.parametrize("scale", [1e150, 1e160, 1e200, 1e300])
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("norm", NORMS)
def test_huge_coordinates_keep_the_decisions(norm, policy, scale):
    """Algorithm 1 is invariant to scaling every centre and semi-axis by one factor. At coordinates
    beyond about 1e154 the fast path's Gram identity overflowed (inf - inf = NaN looked "far apart") and
    kept regions the reference abstains on; the geometry's squared distances overflowed too. Both now
    give the unscaled decisions, without floating-point warnings."""
    rng = np.random.default_rng(7 + NORMS.index(norm))
    for _ in range(6):
        c, p, s = random_stream(rng)
        want = M.algorithm1_reference(c, p, s, norm, policy)
        with np.errstate(all="raise"):
            for got in (M.algorithm1_reference(c * scale, p, s * scale, norm, policy),
                        M.certify_stream(c * scale, p, s * scale, norm, policy, block=16)):
                same_decisions([SimpleNamespace(prediction=d.prediction, status=d.status,
                                                scales=None if d.scales is None else d.scales / scale)
                                for d in got], want)
