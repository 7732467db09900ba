"""Tests for ancer_lite.core.rotated_memory: ANCER Algorithm 1 with RANCER's rotated ellipsoids (Eq. 5-6), for l2
memories mixing axis-aligned and rotated regions. The fast `certify_stream_rotated` must reproduce the literal
loop `algorithm1_reference_rotated`; without rotations both must reproduce `memory.certify_stream`; final
memories are checked for soundness by brute-force sampling; decisions are invariant to rotating the whole
configuration; hand-made 2D cases pin the use of the rotation and of the shrunk ball."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from ancer_lite.core import memory as M
from ancer_lite.core.rotated_memory import algorithm1_reference_rotated, certify_stream_rotated
from ancer_lite.proof_checks import random_rotation

POLICIES = [M.SHRINK, M.WORST_CASE]
IMPLEMENTATIONS = [algorithm1_reference_rotated, certify_stream_rotated]


def random_stream(rng: np.random.Generator, n: int, num: int, p_rotated: float = 0.6):
    """Centres around 3 clusters, 2-3 classes, anisotropic semi-axes, ~10% abstaining base predictions
    (half of them with zero scales), rotations: Haar-random with probability p_rotated, else None, with a few
    identities, reflections and rotated balls (which are axis-aligned in disguise)."""
    classes = int(rng.integers(2, 4))
    clusters = 1.2 * rng.normal(size=(3, n))
    centers = clusters[rng.integers(0, 3, num)] + 0.5 * rng.normal(size=(num, n))
    scales = 0.3 * np.exp(0.6 * rng.normal(size=(num, n)))
    preds = rng.integers(0, classes, num)
    abstain = rng.random(num) < 0.1
    preds[abstain] = M.ABSTAIN
    scales[abstain & (rng.random(num) < 0.5)] = 0.0
    rotations = []
    for k in range(num):
        u = random_rotation(n, rng) if rng.random() < p_rotated else None
        kind = rng.random()
        if u is not None and kind < 0.05:
            scales[k] = scales[k].mean()                      # a rotated ball
        elif u is None and kind < 0.1:
            u = np.diag(rng.choice([-1.0, 1.0], n))           # identity or a reflection
        rotations.append(u)
    return centers, preds, scales, rotations


def same_decisions(got: list[M.Decision], want: list[M.Decision], rtol: float = 1e-12) -> None:
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g.prediction, g.status) == (w.prediction, w.status), (k, g, w)
        if w.scales is None:
            assert g.scales is None, k
        else:
            np.testing.assert_allclose(g.scales, w.scales, rtol=rtol, atol=0, err_msg=str(k))


def final_regions(centers, rotations, decisions):
    """(centre, rotation or None, semi-axes, class) of every region left in the memory."""
    out = []
    for c, u, d in zip(centers, rotations, decisions):
        if d.prediction == M.ABSTAIN:
            continue
        out.append((c, None if d.status == M.SHRUNK else u, d.scales, d.prediction))
    return out


def membership(points: np.ndarray, c, u, s) -> np.ndarray:
    """Points in {x : ||U^T (x - c) / s||_2 <= 1}, written out here (no ancer_lite geometry)."""
    d = points - c
    if u is not None:
        d = d @ u                                             # rows of U^T (x - c)
    return ((d / s) ** 2).sum(axis=1) <= 1.0


def classes_covering(points, regions) -> np.ndarray:
    """For each point, the number of distinct classes whose regions contain it."""
    labels = sorted({r[3] for r in regions})
    hit = np.zeros((len(labels), len(points)), dtype=bool)
    for c, u, s, y in regions:
        hit[labels.index(y)] |= membership(points, c, u, s)
    return hit.sum(axis=0)


STATUS_SEEDS = range(4)


@pytest.mark.parametrize("policy", POLICIES)
def test_fast_path_matches_reference(policy):
    """Random mixed streams (n in {2, 3, 5}, 30-80 inputs): `certify_stream_rotated` gives exactly the
    decisions of `algorithm1_reference_rotated`, and every branch of Algorithm 1 the policy allows occurs,
    including shrinks against rotated memory regions and kept rotated regions."""
    statuses = Counter()
    rotated_kept = rotated_shrunk = 0
    for seed in STATUS_SEEDS:
        for n in (2, 3, 5):
            rng = np.random.default_rng(1000 * seed + n)
            c, p, s, r = random_stream(rng, n, int(rng.integers(30, 81)))
            want = algorithm1_reference_rotated(c, p, s, r, policy)
            same_decisions(certify_stream_rotated(c, p, s, r, policy), want)
            statuses.update(d.status for d in want)
            is_rot = [u is not None and not np.array_equal(np.abs(u), np.eye(n)) for u in r]
            rotated_kept += sum(d.status == M.KEPT and q for d, q in zip(want, is_rot))
            rotated_shrunk += sum(d.status == M.SHRUNK and q for d, q in zip(want, is_rot))
    print(policy, dict(statuses))
    expected = {M.KEPT, M.ABSTAIN_BASE, M.ABSTAIN_INSIDE}
    expected |= {M.SHRUNK} if policy == M.SHRINK else {M.ABSTAIN_INTERSECT}
    assert all(statuses[k] >= 5 for k in expected), statuses
    assert rotated_kept > 0
    if policy == M.SHRINK:
        assert rotated_shrunk > 0


@pytest.mark.parametrize("policy", POLICIES)
def test_axis_aligned_memory_matches_ancer(policy):
    """With every rotation None, the identity or a reflection (diag of +-1), both implementations give
    `memory.certify_stream`'s decisions (and `memory.algorithm1_reference`'s) on the same inputs."""
    for seed in range(3):
        for n in (2, 3, 5):
            rng = np.random.default_rng(50 + 7 * seed + n)
            c, p, s, _ = random_stream(rng, n, 50, p_rotated=0.0)
            r = [None if rng.random() < 0.4 else np.diag(rng.choice([-1.0, 1.0], n)) for _ in range(50)]
            want = M.certify_stream(c, p, s, "l2", policy)
            same_decisions(M.algorithm1_reference(c, p, s, "l2", policy), want)
            same_decisions(algorithm1_reference_rotated(c, p, s, r, policy), want)
            same_decisions(certify_stream_rotated(c, p, s, r, policy), want)
            same_decisions(certify_stream_rotated(c, p, s, None, policy), want)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("policy", POLICIES)
def test_final_memory_is_sound_by_sampling(n, policy):
    """No sampled point lies in two final regions of different predicted classes (kept: the ellipsoid,
    shrunk: the ball of the final radius, abstained: none). Points: 200k uniform in a box around all
    regions plus 100k uniform in the final regions' bounding balls. The same points do show overlaps between
    the input regions, so the check is not vacuous."""
    overlapping_inputs = 0
    for seed in range(3):
        rng = np.random.default_rng(300 + 10 * seed + n)
        c, p, s, r = random_stream(rng, n, 60)
        decisions = certify_stream_rotated(c, p, s, r, policy)
        regions = final_regions(c, r, decisions)
        assert len(regions) > 10
        reach = s.max(axis=1, keepdims=True)
        lo, hi = (c - reach).min(axis=0), (c + reach).max(axis=0)
        pts = [rng.uniform(lo, hi, size=(200_000, n))]
        per = 100_000 // len(regions) + 1
        for cf, _, sf, _ in regions:
            g = rng.normal(size=(per, n))
            g *= (rng.random(per) ** (1 / n) / np.linalg.norm(g, axis=1))[:, None]
            pts.append(cf + sf.max() * g)
        pts = np.concatenate(pts)
        assert (classes_covering(pts, regions) <= 1).all()
        kept_inputs = [(ci, ui, si, int(pi)) for ci, ui, si, pi in zip(c, r, s, p) if pi != M.ABSTAIN]
        overlapping_inputs += int((classes_covering(pts, kept_inputs) > 1).sum())
    assert overlapping_inputs > 1000


@pytest.mark.parametrize("policy", POLICIES)
def test_rotating_the_configuration_keeps_the_decisions(policy):
    """x -> Q x for one orthogonal Q (a rotation or a reflection): centres c -> Q c, region rotations
    U -> Q U and None -> Q. The regions map onto each other, so the decisions do not change (the
    rotated copies of axis-aligned regions take the Eq. 5 / Eq. 6 code instead of D.2 / D.4)."""
    for seed in range(3):
        for n in (2, 3, 5):
            rng = np.random.default_rng(700 + 10 * seed + n)
            c, p, s, r = random_stream(rng, n, 50)
            q = random_rotation(n, rng)
            want = certify_stream_rotated(c, p, s, r, policy)
            got = certify_stream_rotated(c @ q.T, p, s, [q if u is None else q @ u for u in r], policy)
            same_decisions(got, want, rtol=1e-8)


def _thin_diagonal_ellipse(angle: float, long: float = 2.0, short: float = 0.1):
    u = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return u, np.array([long, short])


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_rotation_decides_intersection(impl):
    """A thin ellipse at the origin (semi-axes 2 and 0.1) rotated by 45 degrees reaches the later region at
    (1.6, 1.6) of another class: that input is shrunk to the ball of radius 1.6 sqrt(2) - 2 (its distance to
    the ellipse's tip (sqrt 2, sqrt 2)), or abstains under WORST_CASE. Rotated by -45 degrees, or left
    axis-aligned, the same ellipse is far from it and both regions are kept."""
    u_plus, s_thin = _thin_diagonal_ellipse(np.pi / 4)
    u_minus, _ = _thin_diagonal_ellipse(-np.pi / 4)
    centers = np.array([[0.0, 0.0], [1.6, 1.6]])
    scales = np.array([s_thin, [0.5, 0.8]])
    preds = np.array([0, 1])
    for policy in POLICIES:
        d = impl(centers, preds, scales, [u_plus, None], policy)
        assert d[0].status == M.KEPT
        if policy == M.SHRINK:
            assert d[1].status == M.SHRUNK
            # (1.6, 1.6) lies on the major axis beyond the tip, so the tip is its nearest point
            np.testing.assert_allclose(d[1].scales, np.full(2, 1.6 * np.sqrt(2) - 2.0), rtol=1e-8)
        else:
            assert d[1].status == M.ABSTAIN_INTERSECT
        for u_other in (u_minus, None):
            d = impl(centers, preds, scales, [u_other, None], policy)
            assert [x.status for x in d] == [M.KEPT, M.KEPT]
            np.testing.assert_array_equal(d[1].scales, scales[1])


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_shrunk_region_is_a_ball(impl):
    """Input 1 (class 1, rotated) is shrunk against input 0; input 2 (class 0) meets input 1's original
    rotated ellipse but not its ball, so it is kept; input 3 (class 0) has its centre inside the original
    ellipse only, so it is kept too, and input 4 (class 0) lies inside the ball and abstains."""
    u, s_long = _thin_diagonal_ellipse(np.pi / 4, long=3.0, short=0.6)
    centers = np.array([[-1.0, 0.0], [0.0, 0.0], [2.0, 2.0], [1.5, 1.5], [0.1, 0.0]])
    scales = np.array([[0.5, 0.5], s_long, [0.4, 0.4], [0.1, 0.2], [0.05, 0.05]])
    preds = np.array([0, 1, 0, 0, 0])
    d = impl(centers, preds, scales, [None, u, None, u, None], M.SHRINK)
    assert [x.status for x in d] == [M.KEPT, M.SHRUNK, M.KEPT, M.KEPT, M.ABSTAIN_INSIDE]
    np.testing.assert_allclose(d[1].scales, [0.5, 0.5], rtol=1e-8)  # the ball misses the disc at (-1, 0)
    assert d[1].scales[0] < 0.5


def _bad_inputs():
    n = 3
    rng = np.random.default_rng(9)
    c, p, s, _ = random_stream(rng, n, 6, p_rotated=0.0)
    p[:] = np.arange(6) % 2
    s[:] = 0.3
    r = [random_rotation(n, rng) for _ in range(6)]
    shear = np.eye(n)
    shear[0, 1] = 1e-5
    nearly = r[0] + 1e-5
    return c, p, s, r, [
        (lambda c, p, s, r: (c, p, s, r[:2] + [shear] + r[3:], M.SHRINK), r"rotations\[2\]"),   # not orthogonal
        (lambda c, p, s, r: (c, p, s, [nearly] + r[1:], M.SHRINK), r"rotations\[0\]"),         # only to ~1e-5
        (lambda c, p, s, r: (c, p, s, r[:1] + [np.eye(2)] + r[2:], M.SHRINK), r"rotations\[1\]"),  # wrong shape
        (lambda c, p, s, r: (c, p, s, r[:3] + [np.full((n, n), np.nan)] + r[4:], M.SHRINK), r"rotations\[3\]"),
        (lambda c, p, s, r: (c, p, s, r[:5], M.SHRINK), "rotations"),                           # wrong length
        (lambda c, p, s, r: (c, p, s, "identity", M.SHRINK), "rotations"),
        (lambda c, p, s, r: (c, p, s, r[:4] + [[["a"] * n] * n] + r[5:], M.SHRINK),
         r"rotations\[4\]"),
        (lambda c, p, s, r: (c[:, :2], p, s, r, M.SHRINK), "scales"),                          # shapes differ
        (lambda c, p, s, r: (c[0], p, s, r, M.SHRINK), "centers"),
        (lambda c, p, s, r: (c, p[:4], s, r, M.SHRINK), "preds"),
        (lambda c, p, s, r: (c, p + 0.5, s, r, M.SHRINK), "preds"),
        (lambda c, p, s, r: (c, p, np.where(np.arange(6)[:, None] == 2, 0.0, s), r, M.SHRINK), "scales"),
        (lambda c, p, s, r: (c, p, -s, r, M.SHRINK), "scales"),
        (lambda c, p, s, r: (np.where(np.arange(6)[:, None] == 1, np.inf, c), p, s, r, M.SHRINK), "centers"),
        (lambda c, p, s, r: (c, p, s, r, "shrink-ish"), "policy"),
    ]


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_bad_input_raises(impl):
    """Bad arguments raise ValueError naming the argument; the valid original input passes, and scales of
    abstaining inputs (-1) may be 0."""
    c, p, s, r, cases = _bad_inputs()
    impl(c, p, s, r, M.SHRINK)
    p2, s2 = p.copy(), s.copy()
    p2[2], s2[2] = M.ABSTAIN, 0.0
    assert impl(c, p2, s2, r, M.SHRINK)[2].status == M.ABSTAIN_BASE
    for make, name in cases:
        with pytest.raises(ValueError, match=name):
            impl(*make(c.copy(), p.copy(), s.copy(), list(r)))


# ------------------------------------------------------------------------------------------------------------------
# rotations orthogonal only to within parameters.ORTHOGONALITY_TOL (memory.DEVIATION_ABSORBED)
# ------------------------------------------------------------------------------------------------------------------

def exact_form(c, u, s):
    """(centre, W, t) with W orthogonal to rounding and the region {x : ||diag(1/s) U^T (x - c)||_2 <= 1} equal to
    {x : ||diag(1/t) W^T (x - c)||_2 <= 1}, for any invertible U: the eigendecomposition of its precision matrix
    U diag(1/s^2) U^T, computed here without the memory's shortcut U^-1 = U^T."""
    if u is None:
        return c, np.eye(len(c)), s
    a, w = np.linalg.eigh((u / s**2) @ u.T)
    return c, w, 1.0 / np.sqrt(a)


def assert_exactly_disjoint(regions) -> int:
    """Every two final regions of different classes are disjoint, by exact tests on their exact forms: the distance
    from a ball's centre to the other region (a lower bound, RANCER Eq. 6 in an orthogonal basis) is at least the
    ball's radius, and two ellipsoids are proved disjoint by Eq. 5. Returns the number of pairs checked."""
    from ancer_lite.core import rotated
    forms = [(exact_form(c, u, s), u is None and s.max() == s.min(), y) for c, u, s, y in regions]
    pairs = 0
    for i, (fi, ball_i, yi) in enumerate(forms):
        for (fj, ball_j, yj) in forms[:i]:
            if yi == yj:
                continue
            pairs += 1
            if ball_i or ball_j:
                (cb, _, sb), other = (fi, fj) if ball_i else (fj, fi)
                assert float(rotated.distance_to_ellipsoid(cb, *other)) >= sb[0], (i, fi, fj)
            else:
                assert not rotated.ellipsoids_intersect(*fi, *fj), (i, fi, fj)
    return pairs


def nearly_orthogonal(u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """U rounded to float32, or perturbed by about 3e-8 per entry: orthogonal to within ~1e-8 to 1e-6."""
    if rng.random() < 0.5:
        return u.astype(np.float32)
    return u + 3e-8 * rng.normal(size=u.shape)


@pytest.mark.parametrize("policy", POLICIES)
def test_nearly_orthogonal_rotations_are_accepted_and_sound(policy):
    """Rotations orthogonal only to within 1e-8 to 1e-6 (float32-rounded or perturbed), which the memory widens
    (n eps > DEVIATION_ABSORBED): accepted by every entry point, the fast path equals the reference and the memory
    one input at a time, and the final regions are disjoint by exact tests that do not take U^T for U^-1."""
    from ancer_lite.core.parameters import ORTHOGONALITY_TOL, orthogonality_deviation
    deviations, pairs = [], 0
    for seed in range(3):
        for n in (2, 3, 5):
            rng = np.random.default_rng(900 + 10 * seed + n)
            c, p, s, r = random_stream(rng, n, 40)
            r = [None if u is None else nearly_orthogonal(u, rng) for u in r]
            deviations += [orthogonality_deviation(u) for u in r if u is not None and u.dtype == np.float64
                           and not np.array_equal(np.abs(u), np.eye(n))]
            want = algorithm1_reference_rotated(c, p, s, r, policy)
            same_decisions(certify_stream_rotated(c, p, s, r, policy), want, rtol=0)
            mem = M.CertificationMemory(n, "l2", policy)
            same_decisions([mem.certify(c[k], p[k], s[k], rotation=r[k]) for k in range(len(c))], want, rtol=0)
            r64 = [None if u is None else np.asarray(u, np.float64) for u in r]
            pairs += assert_exactly_disjoint(final_regions(c, r64, want))
    assert 1e-8 < min(deviations) and max(deviations) <= ORTHOGONALITY_TOL
    assert pairs > 500


def _sheared_pair(h: float = 2e-7, rho: float = 5e-7):
    """A thin ellipse A (semi-axes 1 and 1e-3, centre 0) with the rotation U = [[1, 0.9e-6], [0, 1]] (deviation
    0.9e-6) and a ball B of radius rho whose centre lies h below A's lowest point at x_0 = 0.99. A is the region
    {x : ||diag(1/s) U^T x|| <= 1}, sheared by 0.9e-6 x_0 against the ellipsoid U diag(s) B^2 that Eq. 5 and the
    support function take: B meets A but not that ellipsoid."""
    eps, s = 0.9e-6, np.array([1.0, 1e-3])
    u = np.array([[1.0, eps], [0.0, 1.0]])
    x0 = 0.99
    bottom = -eps * x0 - s[1] * np.sqrt(1 - x0**2)                # A's lowest point at x_0
    return u, s, np.array([x0, bottom - h]), np.full(2, rho)


@pytest.mark.parametrize("policy", POLICIES)
def test_widened_margins_keep_a_sheared_region_sound(policy):
    """The pair of `_sheared_pair`: tested as the ellipsoid U diag(s) B^2 (U^T taken for U^-1) the ball would be
    kept beside A; the memory's widened tests (DEVIATION_ABSORBED) see that it meets A and shrink it (abstain under
    WORST_CASE), in either order, and the final regions are disjoint by exact tests."""
    from ancer_lite.core import rotated
    u, s, cb, sb = _sheared_pair()
    a = np.zeros(2)
    assert rotated.contains(cb + np.array([0.0, 3e-7]), a, u, s)                  # B's top point lies in A
    assert not rotated.contains(cb, a, u, s)                                      # B's centre does not
    assert not rotated.ellipsoids_intersect(a, u, s, cb, np.eye(2), sb)          # U diag(s) B^2 misses B
    for order in ((0, 1), (1, 0)):
        centers, scales, rots = np.array([a, cb])[list(order)], np.array([s, sb])[list(order)], [u, None]
        rots = [rots[k] for k in order]
        for impl in IMPLEMENTATIONS:
            d = impl(centers, np.array([0, 1]), scales, rots, policy)
            assert d[0].status == M.KEPT
            assert d[1].status == (M.SHRUNK if policy == M.SHRINK else M.ABSTAIN_INTERSECT), (order, d[1])
            assert_exactly_disjoint(final_regions(centers, rots, d))


def test_deviation_beyond_the_tolerance_is_refused():
    """A rotation 1e-5 from orthogonal is refused by every entry point, naming the argument."""
    rng = np.random.default_rng(11)
    u = random_rotation(3, rng)
    bad = u @ np.diag([1.0, 1.0, 1.0 + 1e-5])                                # U U^T - I has an entry ~1e-5
    c, p, s = rng.normal(size=(2, 3)), np.array([0, 1]), np.full((2, 3), 0.3)
    for impl in IMPLEMENTATIONS:
        with pytest.raises(ValueError, match=r"rotations\[1\] must be orthogonal"):
            impl(c, p, s, [u, bad])
    with pytest.raises(ValueError, match=r"^rotation must be orthogonal"):
        M.CertificationMemory(3, "l2").certify(c[0], 0, s[0], rotation=bad)
