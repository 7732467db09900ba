"""RANCER's rotated-ellipsoid tools (ancer_lite.core.rotated): Eq. 5 (Intersect via K(t)), Eq. 6 (projection) and
LargestOutSubset, against the axis-aligned App. D code, brute force over t, exact tangent constructions and a
convex-solver (SLSQP) reference that does not use the module."""
from __future__ import annotations

import numpy as np
import pytest

from ancer_lite.core import geometry, rotated
from ancer_lite.proof_checks import ellipsoid_pair_value, projection_distance, random_region_pairs, random_rotation


def random_region(rng: np.random.Generator, n: int, spread: float = 1.0):
    """(centre, rotation, semi-axes) with semi-axes log-uniform in [0.2, 2]."""
    return rng.normal(size=n) * spread, random_rotation(n, rng), np.exp(rng.uniform(np.log(0.2), np.log(2.0), n))


def test_precision_and_covariance_are_inverse_and_symmetric():
    rng = np.random.default_rng(0)
    _, u, s = random_region(rng, 4)
    q, c = rotated.precision(u, s), rotated.covariance(u, s)
    np.testing.assert_allclose(q @ c, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(q, q.T, atol=1e-14)
    np.testing.assert_allclose(np.linalg.eigvalsh(q), np.sort(1 / s**2), rtol=1e-12)


@pytest.mark.parametrize("rotation, scales, name", [
    (np.array([[1.0, 0.1], [0.0, 1.0]]), np.array([1.0, 0.5]), "rotation"),    # not orthogonal
    (np.eye(2), np.array([1.0, 0.0]), "scales"),                               # degenerate semi-axis
    (np.eye(2), np.array([1.0, np.nan]), "scales"),
    (np.eye(3), np.array([1.0, 0.5]), "rotation"),                             # shape mismatch
])
def test_bad_regions_are_refused_where_they_enter(rotation, scales, name):
    """The formulas here take a region as given; one enters as a `CertifiedRegion` or through Algorithm 1's entry
    points, which refuse these regions naming the argument."""
    from ancer_lite.core import memory
    from ancer_lite.core.regions import CertifiedRegion
    with pytest.raises(ValueError, match=name):
        CertifiedRegion(np.zeros(2), scales, 1.0, "l2", 0, rotation)
    centers, preds = np.array([[0.0, 0.0], [3.0, 3.0]]), np.array([0, 1])
    with pytest.raises(ValueError, match=rf"\b{name}s?\b"):
        memory.certify_stream(centers, preds, np.array([scales, [0.5, 0.5]]), "l2", rotations=[rotation, None])
    with pytest.raises(ValueError, match=name):
        memory.CertificationMemory(2, "l2").certify(centers[0], 0, scales, rotation=rotation)


def test_contains_matches_the_quadratic_form():
    rng = np.random.default_rng(1)
    c, u, s = random_region(rng, 3)
    x = c + rng.normal(size=(1000, 3))
    q = rotated.quadratic_form(x, c, rotated.precision(u, s))
    np.testing.assert_array_equal(rotated.contains(x, c, u, s), q <= 1)


def test_identity_rotation_reduces_to_the_axis_aligned_code():
    """With U = I, Eq. 5's minimum and the projection agree with geometry's diagonal implementations (D.2, D.4)."""
    rng = np.random.default_rng(2)
    eye = np.eye(3)
    for _ in range(50):
        a, _, sa = random_region(rng, 3)
        b, _, sb = random_region(rng, 3, spread=2.0)
        t1, k1 = rotated.minimize_k(a, eye, sa, b, eye, sb)
        t2, k2 = geometry.minimize_k(a, sa, b, sb)
        assert k1 == pytest.approx(float(k2), abs=1e-12)
        expected = bool(geometry.ellipsoids_intersect(a, sa, b, sb))
        assert bool(rotated.ellipsoids_intersect(a, eye, sa, b, eye, sb)) == expected
        _, d1, _ = rotated.project_onto_ellipsoid(b - a, eye, sa)
        _, d2 = geometry.project_onto_ellipsoid(b - a, sa)
        assert d1 == pytest.approx(float(d2), rel=1e-12, abs=1e-15)


def test_eq5_literal_equals_the_fast_minimum_and_is_the_grid_minimum():
    """K(t*) from the simultaneous diagonalization equals Eq. 5 evaluated with dense inverses, and no t on a fine
    grid gives a smaller K (K is convex, Proposition 8)."""
    rng = np.random.default_rng(3)
    t_grid = np.linspace(1e-4, 1 - 1e-4, 4001)
    for _ in range(30):
        n = int(rng.integers(2, 6))
        a, ua, sa = random_region(rng, n)
        b, ub, sb = random_region(rng, n, spread=2.0)
        qa, qb = rotated.precision(ua, sa), rotated.precision(ub, sb)
        t, k = rotated.minimize_k(a, ua, sa, b, ub, sb)
        assert float(rotated.k_function(t, a, qa, b, qb)) == pytest.approx(float(k), abs=1e-10)
        grid = rotated.k_function(t_grid, a, qa, b, qb)
        assert float(k) <= grid.min() + 1e-12
        assert np.all(grid[:-2] - 2 * grid[1:-1] + grid[2:] >= -1e-12 * (1 + np.abs(grid).max()))


def test_eq5_is_invariant_under_a_common_rotation_and_translation():
    rng = np.random.default_rng(4)
    a, ua, sa = random_region(rng, 3)
    b, ub, sb = random_region(rng, 3, spread=2.0)
    g, shift = random_rotation(3, rng), rng.normal(size=3)
    _, k1 = rotated.minimize_k(a, ua, sa, b, ub, sb)
    _, k2 = rotated.minimize_k(g @ a + shift, g @ ua, sa, g @ b + shift, g @ ub, sb)
    assert float(k1) == pytest.approx(float(k2), abs=1e-10)


def test_intersect_agrees_with_a_convex_solver():
    """1 - min_t K(t) = min_x max(q_Q(x), q_R(x)) (minimax duality): Intersect is False exactly for disjoint pairs."""
    rng = np.random.default_rng(5)
    disjoint = 0
    for a, ua, sa, b, ub, sb in random_region_pairs(rng, 40, rotate=True):
        v = ellipsoid_pair_value(a, rotated.precision(ua, sa), b, rotated.precision(ub, sb))
        _, k = rotated.minimize_k(a, ua, sa, b, ub, sb)
        assert 1 - float(k) == pytest.approx(v, rel=1e-6)
        if abs(v - 1) > 1e-6:
            assert bool(rotated.ellipsoids_intersect(a, ua, sa, b, ub, sb)) == (v <= 1)
        disjoint += v > 1
    assert 5 <= disjoint <= 35   # both cases exercised


def test_separated_only_claims_disjoint_pairs_and_agrees_with_eq5():
    """`separated` (a hyperplane orthogonal to the line of the centres) is sufficient for disjointness: every
    pair it separates is disjoint by the convex solver and by Eq. 5, and Intersect's answer is Eq. 5's alone
    (min K < -K_TOL) on every pair away from tangency. Both outcomes occur."""
    rng = np.random.default_rng(11)
    separated = undecided_disjoint = 0
    for a, ua, sa, b, ub, sb in random_region_pairs(rng, 200, rotate=True):
        v = ellipsoid_pair_value(a, rotated.precision(ua, sa), b, rotated.precision(ub, sb))
        _, k = rotated.minimize_k(a, ua, sa, b, ub, sb)
        if bool(rotated.separated(a, ua, sa, b, ub, sb)):
            separated += 1
            assert v > 1 and k < -geometry.K_TOL
        elif v > 1:
            undecided_disjoint += 1                      # disjoint, but not along the line of the centres
        if abs(v - 1) > 1e-6:
            assert bool(rotated.ellipsoids_intersect(a, ua, sa, b, ub, sb)) == (not k < -geometry.K_TOL)
    assert separated >= 20 and undecided_disjoint >= 5


def test_separated_is_exact_for_balls():
    """For two balls the line of the centres is the best direction: separated iff r_a + r_b < ||b - a||."""
    rng = np.random.default_rng(12)
    for _ in range(200):
        n = int(rng.integers(2, 6))
        ra, rb = rng.uniform(0.2, 2.0, 2)
        a, b = rng.normal(size=n), rng.normal(size=n) * 2
        dist = float(np.linalg.norm(b - a))
        if abs(ra + rb - dist) < 1e-6 * dist:
            continue
        got = bool(rotated.separated(a, random_rotation(n, rng), np.full(n, ra), b, random_rotation(n, rng),
                                     np.full(n, rb)))
        assert got == (ra + rb < dist)
    # coincident centres are never separated
    assert not rotated.separated(np.zeros(2), np.eye(2), np.ones(2), np.zeros(2), np.eye(2), np.ones(2))


def test_formulas_take_the_rotation_as_given():
    """`contains` is the formula ||diag(1/s) U^T (x - c)|| <= 1 for whatever matrix it is given, and `separated`
    the support-function test of c + U diag(s) B: no orthogonality test here (`parameters.check_rotation` runs where
    a rotation enters)."""
    rng = np.random.default_rng(13)
    skew = np.array([[1.0, 0.1], [0.0, 1.0]])
    c, s = np.array([0.2, -0.1]), np.array([1.0, 0.5])
    pts = c + rng.normal(size=(500, 2))
    z = (pts - c) @ skew / s
    np.testing.assert_array_equal(rotated.contains(pts, c, skew, s), (z * z).sum(axis=1) <= 1.0)
    d = np.array([3.0, 1.0])
    h = np.linalg.norm(s * (skew.T @ d))
    assert bool(rotated.separated(c, skew, s, c + d, np.eye(2), np.full(2, 0.1))) == (h + 0.1 * np.linalg.norm(d)
                                                                                      < d @ d * (1 - 1e-9))


def tangent_pair(rng: np.random.Generator, n: int, gap: float):
    """Two rotated ellipsoids touching at one point p (opposite outward normals there), then moved apart along the
    normal by `gap` (negative: overlapping)."""
    a, ua, sa = random_region(rng, n)
    _, ub, sb = random_region(rng, n)
    qa, cov_b = rotated.precision(ua, sa), rotated.covariance(ub, sb)
    z = rng.normal(size=n)
    p = a + ua @ (sa * z / np.linalg.norm(z))                        # on the boundary of S_Q
    normal = qa @ (p - a)
    normal /= np.linalg.norm(normal)
    centre_b = p + cov_b @ normal / np.sqrt(normal @ cov_b @ normal)  # S_R's outward normal at p is -normal
    return a, ua, sa, centre_b + gap * normal, ub, sb


@pytest.mark.parametrize("gap, expected", [(0.0, True), (-1e-3, True), (1e-3, False), (-0.3, True), (0.3, False)])
def test_tangent_and_near_tangent_pairs(gap, expected):
    """Touching ellipsoids must be reported as intersecting (Intersect may only err towards True)."""
    rng = np.random.default_rng(6)
    for n in (2, 3, 5):
        for _ in range(10):
            pair = tangent_pair(rng, n, gap)
            assert bool(rotated.ellipsoids_intersect(*pair)) == expected


def test_projection_matches_slsqp_and_is_a_lower_bound():
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(2, 6))
        _, u, s = random_region(rng, n)
        y = rng.normal(size=n) * 3
        q = rotated.precision(u, s)
        ref = projection_distance(y, q)
        x, dist, lam = rotated.project_onto_ellipsoid(y, u, s)
        if ref == 0:
            assert dist == 0 and lam == 0 and np.array_equal(x, y)
            continue
        assert dist <= ref * (1 + 1e-12)                               # never larger than the true distance
        assert dist == pytest.approx(ref, rel=1e-7)
        assert float(rotated.eq6_residual(lam, y, q)) == pytest.approx(0.0, abs=1e-10)   # RANCER Eq. 6
        np.testing.assert_allclose(x, np.linalg.solve(2 * lam * q + np.eye(n), y), atol=1e-10)   # KKT
        assert float(x @ q @ x) == pytest.approx(1.0, abs=1e-10)


def test_points_inside_project_to_themselves():
    rng = np.random.default_rng(8)
    _, u, s = random_region(rng, 3)
    y = u @ (s * np.array([0.3, -0.2, 0.1]))
    x, dist, lam = rotated.project_onto_ellipsoid(y, u, s)
    assert dist == 0 and lam == 0
    np.testing.assert_array_equal(x, y)


def test_batched_calls_match_single_calls():
    rng = np.random.default_rng(9)
    regions = [random_region(rng, 3) for _ in range(6)]
    others = [random_region(rng, 3, spread=2.0) for _ in range(6)]
    stack = lambda rs, i: np.stack([r[i] for r in rs])  # noqa: E731
    a, ua, sa = (stack(regions, i) for i in range(3))
    b, ub, sb = (stack(others, i) for i in range(3))
    _, kb = rotated.minimize_k(a, ua, sa, b, ub, sb)
    _, db, _ = rotated.project_onto_ellipsoid(b - a, ua, sa)
    rb = rotated.largest_out_subset(a, ua, sa, b, sb)
    ib = rotated.ellipsoids_intersect(a, ua, sa, b, ub, sb)
    sep = rotated.separated(a, ua, sa, b, ub, sb)
    assert ib.shape == sep.shape == (6,)
    assert rotated.ellipsoids_intersect(a[0], ua[0], sa[0], b, ub, sb).shape == (6,)   # one against many
    for i in range(6):
        assert ib[i] == bool(rotated.ellipsoids_intersect(a[i], ua[i], sa[i], b[i], ub[i], sb[i]))
        assert sep[i] == bool(rotated.separated(a[i], ua[i], sa[i], b[i], ub[i], sb[i]))
        assert kb[i] == pytest.approx(float(rotated.minimize_k(a[i], ua[i], sa[i], b[i], ub[i], sb[i])[1]), abs=1e-12)
        assert db[i] == pytest.approx(float(rotated.project_onto_ellipsoid(b[i] - a[i], ua[i], sa[i])[1]), abs=1e-12)
        assert rb[i] == pytest.approx(float(rotated.largest_out_subset(a[i], ua[i], sa[i], b[i], sb[i])), abs=1e-12)


def test_largest_out_subset_ball_misses_s_q_and_fits_in_s_r():
    rng = np.random.default_rng(10)
    checked = 0
    for _ in range(60):
        n = int(rng.integers(2, 5))
        a, ua, sa = random_region(rng, n)
        b, ub, sb = random_region(rng, n, spread=2.0)
        rho = float(rotated.largest_out_subset(a, ua, sa, b, sb))
        if rotated.contains(b, a, ua, sa):
            assert rho == 0.0                                            # abstain: r lies in S_Q
            continue
        checked += 1
        assert 0 < rho <= sb.min()
        assert rho < float(rotated.distance_to_ellipsoid(b, a, ua, sa))
        g = rng.normal(size=(4000, n))
        ball = b + rho * g / np.linalg.norm(g, axis=1, keepdims=True) * rng.uniform(size=(4000, 1)) ** (1 / n)
        sphere = b + rho * g / np.linalg.norm(g, axis=1, keepdims=True)
        pts = np.concatenate([ball, sphere])
        assert not rotated.contains(pts, a, ua, sa).any()
        assert np.all(rotated.quadratic_form(pts, b, rotated.precision(ub, sb)) <= 1 + 1e-12)
    assert checked >= 20


def test_largest_out_subset_ignores_the_rotation_of_s_r_but_not_of_s_q():
    """The inner radius min_i s_i is rotation-invariant; the distance to S_Q depends on how S_Q is rotated."""
    a, b = np.zeros(2), np.array([1.5, 0.0])
    sa, sb = np.array([1.0, 0.2]), np.array([3.0, 3.0])
    quarter = np.array([[0.0, -1.0], [1.0, 0.0]])
    assert float(rotated.largest_out_subset(a, np.eye(2), sa, b, sb)) == pytest.approx(0.5, rel=1e-8)
    assert float(rotated.largest_out_subset(a, quarter, sa, b, sb)) == pytest.approx(1.3, rel=1e-8)
