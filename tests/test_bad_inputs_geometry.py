"""Bad inputs to ancer_lite.core.geometry raise a ValueError/TypeError naming the argument, and the
checks change no result: validate=True and validate=False (what Algorithm 1's loops in memory.py pass)
give the same numbers, bit for bit, and valid edge cases (radius 0, t in {0, 1}, 0 iterations, points
inside, huge coordinates, infinite bracket ends) are still accepted."""
from __future__ import annotations

import numpy as np
import pytest

from ancer_lite.core import geometry as G

NAN = float("nan")
CA, CB, SA, SB = np.zeros(4), np.full(4, 2.0), np.full(4, 0.5), np.full(4, 0.5)
Y = np.full(4, 2.0)


def _pair(**bad):
    kw = dict(center_a=CA, scales_a=SA, center_b=CB, scales_b=SB)
    kw.update(bad)
    return kw


PAIR_FUNCTIONS = [G.separated, G.ellipsoids_intersect, G.cross_polytopes_intersect, G.minimize_k,
                  lambda **kw: G.intersect(**kw, norm="l2"), lambda **kw: G.intersect(**kw, norm="l1"),
                  lambda **kw: G.largest_out_subset(**kw, norm="l2"),
                  lambda **kw: G.largest_out_subset(**kw, norm="l1")]
PAIR_BAD = [("scales_a", -SA), ("scales_a", np.zeros(4)), ("scales_a", np.full(4, NAN)), ("scales_b", -SB),
            ("scales_b", np.array([0.5, np.inf, 0.5, 0.5])), ("scales_b", np.array([])), ("center_a", np.full(4, NAN)),
            ("center_b", np.full(4, -np.inf)), ("center_b", np.full(3, 2.0)), ("scales_a", np.full(5, 0.5)),
            ("center_a", "abc"), ("scales_b", np.float64(0.5))]

CASES = [
    # (call, argument the message must name)
    *[(lambda f=f, a=a, v=v: f(**_pair(**{a: v})), a) for f in PAIR_FUNCTIONS for a, v in PAIR_BAD],
    # leading axes that do not broadcast
    (lambda: G.ellipsoids_intersect(CA, SA, np.zeros((3, 4)), np.full((2, 4), 0.5)), "scales_b"),
    (lambda: G.outer_ball_radius(np.array([])), "scales"),
    (lambda: G.outer_ball_radius(-SA), "scales"),
    (lambda: G.outer_ball_radius(np.full(4, NAN)), "scales"),
    (lambda: G.outer_ball_radius(np.float64(0.5)), "scales"),
    (lambda: G.inner_ball_radius(np.array([])), "scales"),
    (lambda: G.inner_ball_radius(-SA), "scales"),
    (lambda: G.inner_ball_radius(np.array([[0.5, 0.5], [0.5, 0.0]])), "scales"),
    (lambda: G.max_intersect(CA, -1.0, CB, 1.0, "l2"), "radius_a"),
    (lambda: G.max_intersect(CA, NAN, CB, 1.0, "l2"), "radius_a"),
    (lambda: G.max_intersect(CA, 1.0, CB, np.array([1.0, -1.0]), "l1"), "radius_b"),
    (lambda: G.max_intersect(CA, 1.0, np.zeros((3, 4)), np.ones(2), "l2"), "radius_b"),
    (lambda: G.max_intersect(np.full(4, NAN), 1.0, CB, 1.0, "l2"), "center_a"),
    (lambda: G.max_intersect(CA, 1.0, np.full(3, 2.0), 1.0, "l2"), "center_b"),
    (lambda: G.max_intersect(CA, 1.0, CB, 1.0, "l3"), "norm"),
    (lambda: G.bisect(lambda m: m < 0.3, np.zeros(1), np.ones(1), -1), "iterations"),
    (lambda: G.bisect(lambda m: m < 0.3, np.zeros(1), np.ones(1), 1.5), "iterations"),
    (lambda: G.bisect(lambda m: m < 0.3, np.full(1, 2.0), np.ones(1), 60), "lo"),
    (lambda: G.bisect(lambda m: m < 0.3, np.full(1, NAN), np.ones(1), 60), "lo"),
    (lambda: G.bisect(lambda m: m < 0.3, np.zeros(1), np.full(1, NAN), 60), "hi"),
    (lambda: G.bisect(lambda m: m < 0.3, np.zeros(2), np.ones(3), 60), "hi"),
    (lambda: G.bisect(None, np.zeros(1), np.ones(1), 60), "root_above"),
    (lambda: G.k_function(1.5, CB - CA, SA, SB), "t"),
    (lambda: G.k_function(-0.1, CB - CA, SA, SB), "t"),
    (lambda: G.k_function(NAN, CB - CA, SA, SB), "t"),
    (lambda: G.k_function(np.full(3, 0.5), np.ones((2, 4)), SA, SB), "t"),
    (lambda: G.k_function(0.5, CB - CA, np.zeros(4), SB), "scales_a"),
    (lambda: G.k_function(0.5, CB - CA, SA, -SB), "scales_b"),
    (lambda: G.k_function(0.5, np.full(3, 2.0), SA, SB), "diff"),
    (lambda: G.k_function(0.5, np.full(4, np.inf), SA, SB), "diff"),
    (lambda: G.minimize_k(CA, SA, CB, SB, -1), "iterations"),
    (lambda: G.minimize_k(CA, SA, CB, SB, 2.5), "iterations"),
    (lambda: G.project_onto_ellipsoid(Y, np.zeros(4)), "scales"),
    (lambda: G.project_onto_ellipsoid(Y, -SA), "scales"),
    (lambda: G.project_onto_ellipsoid(np.full(4, NAN), SA), "y"),
    (lambda: G.project_onto_ellipsoid(np.full(3, 2.0), SA), "scales"),
    (lambda: G.project_onto_ellipsoid(Y, SA, -1), "iterations"),
    (lambda: G.project_onto_ellipsoid(Y, SA, 1.5), "iterations"),
    (lambda: G.l1_distance_to_cross_polytope(Y, -SA), "scales"),
    (lambda: G.l1_distance_to_cross_polytope(Y, np.zeros(4)), "scales"),
    (lambda: G.l1_distance_to_cross_polytope(np.full(4, NAN), SA), "y"),
    (lambda: G.paper_l1_projection_radius(Y, np.zeros(4)), "scales"),
    (lambda: G.paper_l1_projection_radius(np.full(4, np.inf), SA), "y"),
    *[(lambda norm=norm: G.distance_to_region(CB, CA, -SA, norm), "scales") for norm in ("l2", "l1")],
    *[(lambda norm=norm: G.distance_to_region(np.full(4, NAN), CA, SA, norm), "point") for norm in ("l2", "l1")],
    *[(lambda norm=norm: G.distance_to_region(CB, np.zeros(3), SA, norm), "center") for norm in ("l2", "l1")],
    (lambda: G.distance_to_region(CB, CA, SA, "l3"), "norm"),
    (lambda: G.largest_out_subset(CA, SA, CB, SB, "l3"), "norm"),
    (lambda: G.intersect(CA, SA, CB, SB, "l3"), "norm"),
]


@pytest.mark.parametrize("call, name", CASES)
def test_bad_input_raises_naming_the_argument(call, name):
    with pytest.raises((ValueError, TypeError), match=rf"(?<![\w.]){name}(?![\w])"):
        call()


def _valid_cases(seed: int = 0):
    """Random valid pairs (one region against a small memory), in dims 1-8, some of them at 1e200."""
    rng = np.random.default_rng(seed)
    for trial in range(40):
        n, m = int(rng.integers(1, 9)), int(rng.integers(1, 6))
        mag = 1e200 if trial % 7 == 0 else 10.0 ** rng.uniform(-3, 3)
        a, b = rng.normal(size=n) * mag, rng.normal(size=(m, n)) * mag
        sa, sb = np.exp(rng.uniform(-3, 3, n)) * mag, np.exp(rng.uniform(-3, 3, (m, n))) * mag
        if trial % 5 == 0:
            b = a + sa * rng.uniform(-0.3, 0.3, (m, n))  # b inside R_a
        yield a, sa, b, sb, rng.uniform(0.0, 1.0, m)


def _calls(a, sa, b, sb, t):
    ra, rb = G.outer_ball_radius(sa), G.outer_ball_radius(sb)
    return [(G.outer_ball_radius, (sb,)), (G.inner_ball_radius, (sb,)),
            *[(G.max_intersect, (a, ra, b, rb, norm)) for norm in ("l2", "l1")],
            (G.k_function, (t, b - a, sa, sb)), (G.minimize_k, (a, sa, b, sb)), (G.minimize_k, (a, sa, b, sb, 0)),
            (G.separated, (a, sa, b, sb)), (G.ellipsoids_intersect, (a, sa, b, sb)),
            (G.cross_polytopes_intersect, (a, sa, b, sb)),
            *[(G.intersect, (a, sa, b, sb, norm)) for norm in ("l2", "l1")],
            (G.project_onto_ellipsoid, (b - a, sa)), (G.project_onto_ellipsoid, (b - a, sb, 0)),
            (G.l1_distance_to_cross_polytope, (b - a, sb)), (G.paper_l1_projection_radius, (b - a, sb)),
            *[(G.distance_to_region, (b, a, sa, norm)) for norm in ("l2", "l1")],
            *[(G.largest_out_subset, (a, sa, b, sb, norm)) for norm in ("l2", "l1")],
            *[(G.largest_out_subset, (b[0], sb[0], a, sa, norm)) for norm in ("l2", "l1")]]


def _same(x, y) -> bool:
    if isinstance(x, tuple):
        return len(x) == len(y) and all(_same(u, v) for u, v in zip(x, y))
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y, equal_nan=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # squares of 1e200 overflow in the direct projections
def test_validate_false_gives_the_same_numbers_bit_for_bit():
    """The hot path (validate=False, as memory.py's Algorithm 1 calls it) and the checked path agree exactly
    on valid inputs, including regions at 1e200 where squares overflow."""
    count = 0
    for case in _valid_cases():
        for fn, args in _calls(*case):
            assert _same(fn(*args), fn(*args, validate=False)), (fn.__name__, args)
            count += 1
    assert count == 40 * 22


def test_valid_edge_cases_are_accepted():
    """Inputs at the edge of the contract still give their results: a ball of radius 0, t = 0 and t = 1,
    0 iterations, a point inside, an empty batch, a bracket [lo, lo] or with an infinite end."""
    assert G.max_intersect(CA, 0.0, CA, 0.0, "l2")
    assert not G.max_intersect(CA, 0.0, CB, 0.0, "l1")
    np.testing.assert_array_equal(G.k_function(np.array([0.0, 1.0]), np.ones((2, 4)), SA, SB), [1.0, 1.0])
    assert G.minimize_k(CA, SA, CB, SB, 0)[0] == 0.5
    x, dist = G.project_onto_ellipsoid(np.full(4, 0.1), SA, 0)
    assert dist == 0.0 and np.array_equal(x, np.full(4, 0.1))
    assert G.distance_to_region(CA, CA, SA, "l1") == 0.0
    assert G.ellipsoids_intersect(CA, SA, np.zeros((0, 4)), np.ones((0, 4))).shape == (0,)
    lo, hi = G.bisect(lambda m: m < 0.3, np.full(2, 0.5), np.full(2, 0.5), 60)
    assert np.array_equal(lo, [0.5, 0.5]) and np.array_equal(hi, [0.5, 0.5])
    lo, hi = G.bisect(lambda m: m < 0.3, np.zeros(1), np.full(1, np.inf), 60)
    assert lo[0] == 0.0 and hi[0] == np.inf


def test_bisect_checks_do_not_change_its_result():
    """bisect (validated on every call, also inside minimize_k and the projections) returns the brackets of
    the plain halving loop."""
    lo0, hi0 = np.zeros(5), np.linspace(0.5, 3.0, 5)
    lo, hi = G.bisect(lambda m: m < 0.3, lo0, hi0, 60)
    want_lo, want_hi = lo0, hi0
    for _ in range(60):
        mid = 0.5 * (want_lo + want_hi)
        up = mid < 0.3
        want_lo, want_hi = np.where(up, mid, want_lo), np.where(up, want_hi, mid)
    assert np.array_equal(lo, want_lo) and np.array_equal(hi, want_hi)
