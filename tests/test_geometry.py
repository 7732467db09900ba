"""Tests for ancer_lite.core.geometry (ANCER App. D.1-D.5) and the region volumes of ancer_lite.core.regions,
against independent references: SLSQP / Lagrange-dual and LP solvers (tests/conftest.py), dense
matrix algebra, grid searches and Monte Carlo. Random cases are seeded and small (dims 1-6)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln

from ancer_lite.core import geometry as G
from ancer_lite.core.regions import log_volume, region_norm

NUM_CASES = 300
#: Ellipsoid intersection is compared only when scaling R_a by 1 -+ TANGENT_MARGIN gives the same
#: reference answer, i.e. when the reference value v* is not within TANGENT_MARGIN of 1.
TANGENT_MARGIN = 1e-3


def pair_cases(seed: int, count: int = NUM_CASES):
    """Random pairs (a, sa, b, sb) of axis-aligned regions in dims 1-6, cycling through five kinds:
    general position, b inside R_a (also inside the cross-polytope: ||u||_1 < 1), identical centres,
    very elongated (semi-axes from 1e-2 to 1e1, ratios up to 1e3) and thin needles near each other."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        n = int(rng.integers(1, 7))
        kind = ("general", "inside", "identical", "elongated", "needles")[k % 5]
        if kind in ("elongated", "needles"):
            sa, sb = np.exp(rng.uniform(math.log(1e-2), math.log(10.0), (2, n)))
        else:
            sa, sb = np.exp(rng.uniform(-1.0, 1.0, (2, n)))
        a = rng.normal(size=n)
        if kind == "inside":
            u = rng.normal(size=n)
            u *= rng.uniform(0.0, 0.95) / np.abs(u).sum()
            b = a + sa * u
        elif kind == "identical":
            b = a.copy()
        else:
            u = rng.normal(size=n)
            reach = sa.max() + sb.max() if kind != "needles" else sa.min() + sb.min() + sa.max()
            b = a + u / np.linalg.norm(u) * rng.uniform(0.0, 1.2) * reach
        yield kind, a, sa, b, sb


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_max_intersect_never_rules_out_intersecting_regions(ref, norm):
    """Lemma 1 (D.1): MaxIntersect may only say False for disjoint regions. Reference: SLSQP for
    ellipsoids, LP for cross-polytopes. Also checks it is not vacuous (says False sometimes) and that
    it broadcasts (one region against a stacked memory gives the per-pair answers)."""
    intersecting = ruled_out = 0
    rows = []
    for _, a, sa, b, sb in pair_cases(1):
        gap = ref.ellipsoid_gap(a, sa, b, sb) if norm == "l2" else ref.polytope_gap(a, sa, b, sb)
        verdict = bool(G.max_intersect(a, G.outer_ball_radius(sa), b, G.outer_ball_radius(sb), norm))
        if gap <= 1.0 - 1e-9:
            intersecting += 1
            assert verdict, (a, sa, b, sb, gap)
        ruled_out += not verdict
        if a.size == 3:
            rows.append((a, sa, b, sb, verdict))
    assert intersecting > 100 and ruled_out > 20
    # broadcasting: the first dim-3 region against all other dim-3 regions at once
    a, sa = rows[0][0], rows[0][1]
    cb, sb = np.stack([r[2] for r in rows]), np.stack([r[3] for r in rows])
    batch = G.max_intersect(a, G.outer_ball_radius(sa), cb, G.outer_ball_radius(sb), norm)
    single = [bool(G.max_intersect(a, G.outer_ball_radius(sa), c, G.outer_ball_radius(s), norm))
              for c, s in zip(cb, sb)]
    assert batch.tolist() == single


def test_max_intersect_is_the_ball_test():
    """Lemma 1 (D.1) on explicit numbers: False iff ||a - b||_p > r_a + r_b (l2 and l1 differ)."""
    a, b = np.zeros(2), np.array([3.0, 4.0])  # ||.||_2 = 5, ||.||_1 = 7
    assert not G.max_intersect(a, 2.0, b, 2.9, "l2")
    assert G.max_intersect(a, 2.0, b, 3.0, "l2")  # touching balls: "may intersect"
    assert G.max_intersect(a, 3.0, b, 3.0, "l2")
    assert not G.max_intersect(a, 3.0, b, 3.0, "l1")
    assert G.max_intersect(a, 3.0, b, 4.0, "l1")


def test_ellipsoids_intersect_matches_convex_solver(ref):
    """D.2 (Lemmas 2-3, Proposition 8): Intersect for ellipsoids, min_t K(t) >= 0, is exact. Compared
    with the SLSQP reference away from tangency (|v* - 1| > TANGENT_MARGIN, see module constant) on
    general, centre-inside, identical-centre, elongated and needle-like pairs; batch = per-pair."""
    agree = {True: 0, False: 0}
    skipped = 0
    kinds_seen = set()
    for kind, a, sa, b, sb in pair_cases(2):
        v = ref.ellipsoid_gap(a, sa, b, sb)
        if abs(v - 1.0) <= TANGENT_MARGIN:
            skipped += 1
            continue
        got = bool(G.ellipsoids_intersect(a, sa, b, sb))
        assert got == (v < 1.0), (kind, a, sa, b, sb, v)
        assert got == bool(G.ellipsoids_intersect(b, sb, a, sa))  # symmetric
        if kind in ("inside", "identical"):
            assert got
        agree[got] += 1
        kinds_seen.add(kind)
    assert agree[True] > 80 and agree[False] > 80 and skipped < 15
    assert kinds_seen == {"general", "inside", "identical", "elongated", "needles"}


def test_ellipsoids_intersect_near_tangency(ref):
    """D.2 is exact up to K_TOL, so it must also be right close to tangency. Scaling R_a's semi-axes by
    kappa divides the reference value v* by kappa exactly, so each random pair is rescaled to
    v* = 1 -+ delta with delta log-uniform in [1e-6, 1e-2] (the reference is accurate to 1e-8)."""
    rng = np.random.default_rng(14)
    checked = 0
    for kind, a, sa, b, sb in pair_cases(15):
        v = ref.ellipsoid_gap(a, sa, b, sb)
        if v < 1e-3:
            continue  # a lies in R_b: no rescaling of R_a reaches tangency
        delta = 10.0 ** rng.uniform(-6.0, -2.0)
        target = 1.0 - delta if checked % 2 else 1.0 + delta
        got = bool(G.ellipsoids_intersect(a, sa * v / target, b, sb))
        assert got == (target < 1.0), (kind, a, sa * v / target, b, sb, target)
        checked += 1
    assert checked > 150


def test_ellipsoids_intersect_explicit_cases():
    """D.2 on hand-made pairs: crossing needles meet although neither centre lies in the other region;
    parallel needles 0.03 apart are disjoint although MaxIntersect (D.1) cannot tell; and a batch."""
    a, sa = np.zeros(2), np.array([10.0, 0.01])
    assert G.ellipsoids_intersect(a, sa, np.array([5.0, 5.0]), np.array([0.01, 10.0]))
    b, sb = np.array([0.0, 0.05]), np.array([10.0, 0.01])
    assert G.max_intersect(a, 10.0, b, 10.0, "l2")
    assert not G.ellipsoids_intersect(a, sa, b, sb)
    # touching unit discs at distance 2 (K(1/2) = 0 exactly): "may intersect"
    assert G.ellipsoids_intersect(np.zeros(2), np.ones(2), np.array([2.0, 0.0]), np.ones(2))
    assert not G.ellipsoids_intersect(np.zeros(2), np.ones(2), np.array([2.001, 0.0]), np.ones(2))
    # batch: parallel needles 0.05 apart (disjoint), 0.015 apart (overlapping), concentric
    batch = G.ellipsoids_intersect(a, sa, np.stack([b, np.array([5.0, 0.015]), a]), np.stack([sb, sb, sb]))
    assert batch.tolist() == [False, True, True]


def test_separated_is_sufficient_and_leaves_intersect_unchanged():
    """The hyperplane orthogonal to the line of the centres (`separated`) only ever separates disjoint pairs
    (min_t K(t) < -K_TOL, D.2's exact test), and Intersect with it tried first answers as min K alone on
    every case of pair_cases; it separates some pairs and leaves disjoint ones (the needles) to D.2."""
    separated = left_disjoint = 0
    for kind, a, sa, b, sb in pair_cases(3):
        _, k = G.minimize_k(a, sa, b, sb)
        eq5 = not (k < -G.K_TOL)
        assert bool(G.ellipsoids_intersect(a, sa, b, sb)) == eq5, (kind, a, sa, b, sb)
        if G.separated(a, sa, b, sb):
            separated += 1
            assert not eq5, (kind, a, sa, b, sb)
        elif not eq5:
            left_disjoint += 1
    assert separated > 30 and left_disjoint > 10
    # balls: separated iff r_a + r_b < ||b - a||; coincident centres never
    assert G.separated(np.zeros(3), np.full(3, 1.0), np.array([2.001, 0, 0]), np.full(3, 1.0))
    assert not G.separated(np.zeros(3), np.full(3, 1.0), np.array([1.999, 0, 0]), np.full(3, 1.0))
    assert not G.separated(np.zeros(3), np.ones(3), np.zeros(3), np.ones(3))
    # scale invariant, also where squares overflow
    huge = 1e200
    assert G.separated(np.zeros(2), np.full(2, huge), np.array([2.001 * huge, 0]), np.full(2, huge))
    assert G.ellipsoids_intersect(np.zeros(2), np.full(2, huge), np.array([1.999 * huge, 0]), np.full(2, huge))


def test_cross_polytopes_intersect_is_sound(ref):
    """D.3: Intersect for generalized cross-polytopes (via circumscribing ellipsoids) may only say
    False when the polytopes are disjoint (LP reference), and it does say False on some pairs."""
    said_false = 0
    for _, a, sa, b, sb in pair_cases(3):
        if not G.cross_polytopes_intersect(a, sa, b, sb):
            said_false += 1
            assert ref.polytope_gap(a, sa, b, sb) > 1.0 - 1e-9, (a, sa, b, sb)
    assert said_false > 40


def test_project_onto_ellipsoid_matches_convex_solver(ref):
    """D.4 (KKT / secular equation): the projection distance matches the SLSQP reference to rel 1e-6,
    never exceeds it (the reference is taken at a feasible point, so it bounds the true distance from
    above; the code must return a lower bound, up to rounding: 1e-12 relative), the point lies on the boundary, and the batch
    version equals the per-point one."""
    rng = np.random.default_rng(4)
    ys, ss, dists = [], [], []
    for k in range(NUM_CASES):
        n = int(rng.integers(1, 7))
        lo = math.log(1e-2) if k % 3 == 0 else -1.0
        s = np.exp(rng.uniform(lo, 1.0, n))
        y = rng.normal(size=n) * s * rng.uniform(1.0, 4.0) * (1.0 + 1e-6)
        if (y / s) @ (y / s) <= 1.0:
            y = y / np.linalg.norm(y / s) * rng.uniform(1.001, 3.0)
        x_star, dist = G.project_onto_ellipsoid(y, s)
        expected = ref.ellipsoid_gap(y, np.ones(n), np.zeros(n), s)
        assert dist <= expected * (1 + 1e-12), (y, s, dist, expected)  # up to rounding
        assert dist == pytest.approx(expected, rel=1e-6)
        assert np.linalg.norm(x_star / s) == pytest.approx(1.0, abs=1e-9)
        assert np.linalg.norm(y - x_star) == pytest.approx(dist, rel=1e-6)
        if n == 4:
            ys.append(y), ss.append(s), dists.append(dist)
    _, batch = G.project_onto_ellipsoid(np.stack(ys), np.stack(ss))
    np.testing.assert_allclose(batch, dists, rtol=1e-12)


def test_project_onto_ellipsoid_inside_points():
    """D.4: points inside (or on) the ellipsoid project to themselves at distance 0."""
    rng = np.random.default_rng(5)
    for _ in range(100):
        n = int(rng.integers(1, 7))
        s = np.exp(rng.uniform(-2.0, 2.0, n))
        y = rng.normal(size=n)
        y = y / np.linalg.norm(y / s) * rng.uniform(0.0, 1.0)
        x_star, dist = G.project_onto_ellipsoid(y, s)
        assert dist == 0.0
        np.testing.assert_array_equal(x_star, y)
    assert G.project_onto_ellipsoid(np.zeros(3), np.ones(3))[1] == 0.0


def test_l1_distance_matches_linear_program(ref):
    """D.5 replacement: `l1_distance_to_cross_polytope` (greedy fractional knapsack) equals the LP
    l1 distance to {x : sum |x_i| / s_i <= 1} within 1e-7 and the exact dual value; inside gives 0."""
    rng = np.random.default_rng(6)
    outside = 0
    for k in range(NUM_CASES):
        n = int(rng.integers(1, 7))
        s = np.exp(rng.uniform(math.log(1e-2) if k % 2 else -1.0, 1.0, n))
        y = rng.normal(size=n) * s * rng.uniform(0.2, 4.0)
        if k % 7 == 0:
            y[rng.integers(n)] = 0.0  # zero coordinates
        got = float(G.l1_distance_to_cross_polytope(y, s))
        lp = ref.l1_distance_lp(y, s)
        assert abs(got - lp) <= 1e-7 * max(1.0, lp), (y, s, got, lp)
        assert got == pytest.approx(ref.l1_distance_dual(y, s), rel=1e-12, abs=1e-14)
        if np.abs(y / s).sum() <= 1.0:
            assert got == 0.0
        else:
            outside += 1
    assert outside > 100


def test_paper_l1_projection_radius_overestimates_distance(ref):
    """D.5 as printed is unsound: its radius (l1 length of the l2 step onto the facet hyperplane,
    Lemma 4) exceeds the true l1 distance for y = (3, 0.001), s = (1, 10), so its l1 ball around b
    would reach into R_a. This is why the package uses the exact `l1_distance_to_cross_polytope`."""
    y, s = np.array([3.0, 0.001]), np.array([1.0, 10.0])
    exact = float(G.l1_distance_to_cross_polytope(y, s))
    paper = float(G.paper_l1_projection_radius(y, s))
    assert exact == pytest.approx(2.0001, rel=1e-12)
    assert exact == pytest.approx(ref.l1_distance_lp(y, s), abs=1e-9)
    assert paper == pytest.approx(2.0001 / 1.01 * 1.1, rel=1e-12)  # = 2.178...
    assert paper > exact * 1.08
    # a point of the paper's l1 ball around y lies inside the cross-polytope
    witness = y - np.array([paper * 0.999, 0.0])
    assert np.abs(y - witness).sum() < paper and region_norm(witness, s, "l1") <= 1.0


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_largest_out_subset_misses_a_and_fits_in_b(ref, norm):
    """D.4 (l2) / D.5 (l1): LargestOutSubset(R_a, R_b) is an l_p ball around b that lies inside R_b
    (radius <= smallest semi-axis) and misses R_a (radius < a certified lower bound on the distance
    from b to R_a: the Lagrange dual for ellipsoids, the exact LP dual for cross-polytopes), and it
    is as large as allowed (tight to 1e-6)."""
    capped = 0
    for _, a, sa, b, sb in pair_cases(9):
        if region_norm(b - a, sa, norm) <= 1.0:
            continue  # b in R_a: Algorithm 1 abstains before calling LargestOutSubset
        r = float(G.largest_out_subset(a, sa, b, sb, norm))
        if norm == "l2":
            lower = ref.ellipsoid_gap_dual(b, np.ones_like(b), a, sa)  # <= true l2 distance
            dist = ref.ellipsoid_gap(b, np.ones_like(b), a, sa)
        else:
            lower = dist = ref.l1_distance_dual(b - a, sa)  # exact l1 distance
        assert 0.0 < r < lower, (a, sa, b, sb, r, lower)
        assert r <= sb.min()
        # the ball's extreme points in R_b's norm stay inside R_b
        offsets = r * np.vstack([np.eye(b.size), -np.eye(b.size)])
        assert (region_norm(offsets, sb, norm) <= 1.0).all()
        assert r == pytest.approx(min(dist, sb.min()), rel=1e-6)
        capped += sb.min() < dist
    assert capped > 10


def _dense_k_forms(t, a, sa, b, sb):
    """K(t) of Lemma 3 / D.2 with dense matrices A = diag(1/sa^2), B = diag(1/sb^2): the m'E_t m form,
    the t(1-t) d'B E_t^-1 A d form and the ((1/(1-t)) B^-1 + (1/t) A^-1)^-1 form."""
    A, B = np.diag(1.0 / sa ** 2), np.diag(1.0 / sb ** 2)
    E = t * A + (1 - t) * B
    m = np.linalg.solve(E, t * A @ a + (1 - t) * B @ b)
    d = b - a
    k1 = 1 - t * a @ A @ a - (1 - t) * b @ B @ b + m @ E @ m
    k2 = 1 - t * (1 - t) * d @ B @ np.linalg.solve(E, A @ d)
    k3 = 1 - d @ np.linalg.solve(np.linalg.inv(B) / (1 - t) + np.linalg.inv(A) / t, d)
    scale = 1 + t * a @ A @ a + (1 - t) * b @ B @ b  # size of the cancelling terms in k1
    return k1, k2, k3, scale


def test_k_function_matches_dense_forms():
    """Lemma 3 / D.2: the diagonal K(t) of `k_function` equals the three matrix forms of K(t)."""
    rng = np.random.default_rng(10)
    for _ in range(NUM_CASES):
        n = int(rng.integers(1, 7))
        sa, sb = np.exp(rng.uniform(-1.5, 1.5, (2, n)))
        a, b = rng.normal(size=(2, n))
        t = rng.uniform(0.01, 0.99)
        k = float(G.k_function(t, b - a, sa, sb))
        k1, k2, k3, scale = _dense_k_forms(t, a, sa, b, sb)
        assert k == pytest.approx(k1, abs=1e-10 * scale)
        assert k == pytest.approx(k2, rel=1e-10, abs=1e-12)
        assert k == pytest.approx(k3, rel=1e-10, abs=1e-12)
    # K(0) = K(1) = 1, and t broadcasts over a memory of regions
    d, sa, sb = rng.normal(size=(5, 3)), np.ones((5, 3)), 2 * np.ones((5, 3))
    np.testing.assert_allclose(G.k_function(np.zeros(5), d, sa, sb), 1.0)
    np.testing.assert_allclose(G.k_function(np.ones(5), d, sa, sb), 1.0)


def test_k_function_is_convex():
    """D.2 (Ros et al. 2002; Gilitschenski & Hanebeck 2012): K is convex on (0, 1); checked by second
    differences on a grid, including elongated regions."""
    rng = np.random.default_rng(11)
    t = np.linspace(1e-3, 1 - 1e-3, 999)
    h = t[1] - t[0]
    for _ in range(NUM_CASES):
        n = int(rng.integers(1, 7))
        sa, sb = np.exp(rng.uniform(math.log(1e-2), math.log(10.0), (2, n)))
        d = rng.normal(size=n) * 3
        k = G.k_function(t, np.broadcast_to(d, (t.size, n)), sa, sb)
        second = (k[2:] - 2 * k[1:-1] + k[:-2]) / h ** 2
        assert second.min() >= -1e-6 * (1.0 + np.abs(k).max()), second.min()


def _rescaled_to(a, sa, b, sb, target):
    """The pair with both semi-axes scaled so that min K = target exactly (in real arithmetic): scaling both by f
    divides the sum in K by f^2, so min K = 1 - (1 - min K_1) / f^2."""
    _, k1 = G.minimize_k(a, sa, b, sb)
    f = np.sqrt((1.0 - k1) / (1.0 - target))[..., None]
    return a, sa * f, b, sb * f


def test_k_falls_below_answers_as_minimize_k():
    """`k_falls_below` stops a pair's bisection once a point below the level or the convexity bound above it is
    certain; its answers must be `minimize_k`'s K(t*) < level for every pair, also within 1e-16 of the level (where
    it runs the whole bisection), in a batch and alone."""
    rng = np.random.default_rng(31)
    answers = []
    for n in (1, 3, 64, 784):
        a, b = rng.normal(size=(2, 60, n))
        sa, sb = np.exp(rng.uniform(-3.0, 1.0, (2, 60, n)))
        b[:10] = a[:10]  # identical centres: K = 1 everywhere
        for level in (-G.K_TOL, 0.0, 0.5):
            cases = [(np.inf, (a, sa, b, sb))]
            for delta in (1e-16, 1e-12, 1e-9, 1e-6, 1e-3, 1e-1):
                target = level + delta * np.where(rng.random(60) < 0.5, -1.0, 1.0)
                cases.append((delta, _rescaled_to(a[10:], sa[10:], b[10:], sb[10:], target[10:])))
            for delta, (ca, csa, cb, csb) in cases:
                _, k = G.minimize_k(ca, csa, cb, csb)
                assert (np.abs(k - level) <= 2 * delta + 1e-12).all()  # the rescaled pairs lie that near the level
                got = G.k_falls_below(ca, csa, cb, csb, level)
                np.testing.assert_array_equal(got, k < level)
                assert all(G.k_falls_below(ca[i], csa[i], cb[i], csb[i], level) == got[i] for i in range(0, len(ca), 7))
                if delta <= 1e-9:
                    answers.extend(got)
    assert 0.3 < np.mean(answers) < 0.7  # within 1e-9 of the level, both answers about equally often


def test_k_falls_below_is_certain_early_away_from_the_level(monkeypatch):
    """Pairs far apart (min K far below 0) or overlapping deeply (min K near 1) are answered by the certificates
    during the halvings: the fallback after the last halving (K at the final bracket, `k_function`) is never
    reached for them, while a pair given no halving reaches it."""
    rng = np.random.default_rng(32)
    a = rng.normal(size=(200, 16))
    sa, sb = np.exp(rng.uniform(-1.0, 0.0, (2, 200, 16)))
    far = a + 50.0
    close = a + 1e-3 * rng.normal(size=a.shape)
    fallbacks = []
    k_function = G.k_function
    monkeypatch.setattr(G, "k_function", lambda t, *args: fallbacks.append(np.size(t)) or k_function(t, *args))
    assert G.k_falls_below(a, sa, far, sb).all()
    assert not G.k_falls_below(a, sa, close, sb).any()
    assert not G.k_falls_below(a, sa, a, sb).any()
    assert fallbacks == []
    assert not G.k_falls_below(a, sa, a, sb, iterations=0).any()  # no halving: K(1/2) = 1
    assert fallbacks == [200]


def test_minimize_k_matches_grid_search():
    """Proposition 8 / D.2: `minimize_k` (bisection on K') finds min_{t in [0,1]} K(t): its value is
    no larger than a dense grid minimum and its t is close to the grid argmin; batch = per-pair."""
    rng = np.random.default_rng(12)
    grid = np.linspace(0.0, 1.0, 20001)
    cases = []
    for _ in range(NUM_CASES):
        n = int(rng.integers(1, 7))
        sa, sb = np.exp(rng.uniform(-2.0, 2.0, (2, n)))
        a, b = rng.normal(size=(2, n))
        t_star, k_star = G.minimize_k(a, sa, b, sb)
        k_grid = G.k_function(grid, np.broadcast_to(b - a, (grid.size, n)), sa, sb)
        assert 0.0 <= t_star <= 1.0
        assert k_star <= k_grid.min() + 1e-12
        # minimize_k evaluates K in rescaled units (overflow-safe), so it agrees to rounding only
        assert k_star == pytest.approx(float(G.k_function(t_star, b - a, sa, sb)), rel=1e-13, abs=1e-15)
        assert abs(t_star - grid[k_grid.argmin()]) <= 1e-3 or k_grid.max() - k_grid.min() < 1e-6
        if n == 3:
            cases.append((a, sa, b, sb, float(k_star)))
    _, k_batch = G.minimize_k(*(np.stack([c[i] for c in cases]) for i in range(4)))
    np.testing.assert_allclose(k_batch, [c[4] for c in cases], rtol=1e-12, atol=1e-15)
    # identical centres: K = 1 everywhere
    assert G.minimize_k(np.ones(3), np.ones(3), np.ones(3), 2 * np.ones(3))[1] == pytest.approx(1.0)


@pytest.mark.parametrize("norm", ["l2", "l1"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_log_volume_matches_monte_carlo(norm, n):
    """§5.1 (ellipsoid volume) and Proposition 4 (cross-polytope volume (2r)^n / n! prod theta_i):
    `log_volume` matches hit-or-miss Monte Carlo in the bounding box. 4 * 10^6 samples give a
    relative standard error (SE) below 0.25% (asserted; the worst case is the 4-D cross-polytope,
    which fills 1/24 of its box); the tolerance is 5 SE, at most 1.25% in volume."""
    rng = np.random.default_rng(100 + n + (norm == "l1"))
    theta = np.exp(rng.uniform(-1.0, 1.0, n))
    gap = rng.uniform(0.5, 2.0)
    s = gap * theta
    chunks, chunk = 4, 1_000_000
    hits = sum(int((region_norm(rng.uniform(-1.0, 1.0, (chunk, n)) * s, s, norm) <= 1.0).sum())
               for _ in range(chunks))
    frac = hits / (chunks * chunk)
    rel_se = math.sqrt((1 - frac) / (frac * chunks * chunk))
    assert rel_se < 0.0025
    mc = math.log(frac) + float(np.log(2 * s).sum())
    assert float(log_volume(theta, gap, norm)) == pytest.approx(mc, abs=5 * rel_se)


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_log_volume_finite_at_imagenet_dimension(norm):
    """§5: at n = 150528 (ImageNet) the log volume stays finite and equals the closed form computed
    independently with math.lgamma; doubling the gap adds n log 2; gap 0 gives -inf."""
    n = 150528
    theta = 0.25 + 0.01 * np.random.default_rng(13).random(n)
    got = float(log_volume(theta, 1.0, norm))
    logs = float(np.log(theta).sum())
    if norm == "l2":
        expected = logs + 0.5 * n * math.log(math.pi) - math.lgamma(0.5 * n + 1)
    else:
        expected = n * math.log(2.0) + logs - math.lgamma(n + 1)
    assert math.isfinite(got)
    assert got == pytest.approx(expected, rel=1e-12)
    assert float(log_volume(theta, 2.0, norm)) - got == pytest.approx(n * math.log(2.0), rel=1e-12)
    assert float(log_volume(theta, 0.0, norm)) == -math.inf
    assert gammaln(n + 1.0) == pytest.approx(math.lgamma(n + 1), rel=1e-14)



def _full_bisection(root_above, lo, hi, iterations):
    """The plain loop that `geometry.bisect` replaced: every one of `iterations` halvings."""
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        up = root_above(mid)
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    return lo, hi


def test_bisect_stops_early_with_the_full_loops_result_bit_for_bit(monkeypatch):
    """Stopping once a halving changes no bracket gives exactly the numbers of all the halvings, for the three
    bisections that use it (ellipsoid projection, Eq. 6's multiplier, Proposition 8's min K; each called once with
    `geometry.bisect`, once with the plain loop in its place), on regions whose scales span four orders of
    magnitude; the projection does stop early (its brackets meet long before the 200 halvings budgeted), and
    giving inside points the bracket [0, 0] changes none of its results."""
    from ancer_lite.core import rotated

    rng = np.random.default_rng(3)
    y = rng.normal(size=(300, 16)) * 10.0 ** rng.uniform(-1, 1, size=(300, 1))
    s = 10.0 ** rng.uniform(-2, 2, size=(300, 16))
    c = rng.normal(size=(300, 16))
    inside = ((y * y) / s**2).sum(axis=-1) <= 1.0
    assert 0 < inside.sum() < 300

    def run():
        return (*G.project_onto_ellipsoid(y, s), *rotated.eq6_multiplier(y, s), *G.minimize_k(np.zeros(16), s[0], c, s))

    halvings, real = [], G.bisect

    def counted(root_above, lo, hi, iterations):
        calls = []
        out = real(lambda mid: calls.append(1) or root_above(mid), lo, hi, iterations)
        halvings.append((len(calls), iterations))
        return out

    monkeypatch.setattr(G, "bisect", counted)
    early = run()
    assert halvings[0][0] < 100 <= halvings[0][1]  # the projection
    monkeypatch.setattr(G, "bisect", _full_bisection)
    full = run()
    assert all(np.array_equal(e, f) for e, f in zip(early, full))
    # the projection as it was, bisecting inside points too (their results are y and 0 either way)
    v = s * s
    lo, hi = _full_bisection(lambda mid: ((y * np.sqrt(v) / (v + mid[..., None])) ** 2).sum(axis=-1) - 1.0 > 0,
                             np.zeros(300), np.sqrt((y * y * v).sum(axis=-1)), 200)
    assert np.array_equal(early[0], np.where(inside[:, None], y, y * v / (v + hi[:, None])))
    assert np.array_equal(early[1], np.where(inside, 0.0, np.sqrt(((y - y * v / (v + lo[:, None])) ** 2).sum(axis=-1))))
