"""ancer_lite.core.geometry's formulas take regions as given: what they still check (the choice of norm, iterations,
bisect's brackets, the t of K) raises a ValueError/TypeError naming the argument, the region values they take as
given are refused where they enter (Algorithm 1's entry points, `CertifiedRegion`), and valid edge cases (radius 0,
t in {0, 1}, 0 iterations, points inside, infinite bracket ends) are accepted."""
from __future__ import annotations

import numpy as np
import pytest

from ancer_lite.core import geometry as G
from ancer_lite.core import memory as M
from ancer_lite.core.regions import CertifiedRegion

NAN = float("nan")
CA, CB, SA, SB = np.zeros(4), np.full(4, 2.0), np.full(4, 0.5), np.full(4, 0.5)
Y = np.full(4, 2.0)


CASES = [
    # (call, argument the message must name)
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
    (lambda: G.minimize_k(CA, SA, CB, SB, -1), "iterations"),
    (lambda: G.minimize_k(CA, SA, CB, SB, 2.5), "iterations"),
    (lambda: G.project_onto_ellipsoid(Y, SA, -1), "iterations"),
    (lambda: G.project_onto_ellipsoid(Y, SA, 1.5), "iterations"),
    (lambda: G.distance_to_region(CB, CA, SA, "l3"), "norm"),
    (lambda: G.largest_out_subset(CA, SA, CB, SB, "l3"), "norm"),
    (lambda: G.intersect(CA, SA, CB, SB, "l3"), "norm"),
]


@pytest.mark.parametrize("call, name", CASES)
def test_bad_input_raises_naming_the_argument(call, name):
    with pytest.raises((ValueError, TypeError), match=rf"(?<![\w.]){name}(?![\w])"):
        call()


def _decide(**bad):
    kw = dict(x=CB, pred=1, scales=SB, mem_centers=CA[None], mem_preds=np.array([0]), mem_scales=SA[None], norm="l2")
    return M.decide(**{**kw, **bad})


def _stream(**bad):
    kw = dict(centers=np.stack([CA, CB]), preds=np.array([0, 1]), scales=np.stack([SA, SB]), norm="l1")
    return M.certify_stream(**{**kw, **bad})


def _region(**bad):
    return CertifiedRegion(**{**dict(center=CA, scales=SA, gap=1.0, norm="l2", prediction=0), **bad})


# the values that the formulas take as given (a centre, a point, semi-axes, leading axes that do not broadcast), each
# refused where a region enters: (call, argument the message must name)
ENTRY_CASES = [
    *[(lambda v=v: _decide(scales=v), "scales") for v in (-SB, np.zeros(4), np.full(4, NAN),
                                                           np.array([0.5, np.inf, 0.5, 0.5]), np.array([]),
                                                           np.float64(0.5), np.full(5, 0.5))],
    *[(lambda v=v: _decide(mem_scales=v), "mem_scales") for v in (-SA[None], np.zeros((1, 4)), np.full((2, 4), 0.5))],
    *[(lambda v=v: _decide(x=v), "x") for v in (np.full(4, NAN), np.full(4, -np.inf), np.full(3, 2.0), "abc")],
    (lambda: _decide(mem_centers=np.full((1, 4), NAN)), "mem_centers"),
    (lambda: _decide(mem_centers=np.zeros((3, 4)), mem_preds=np.zeros(3, int)), "mem_scales"),
    *[(lambda v=v: _stream(scales=v), "scales") for v in (-np.stack([SA, SB]), np.zeros((2, 4)), np.full((2, 3), 0.5))],
    *[(lambda v=v: _stream(centers=v), "centers") for v in (np.full((2, 4), NAN), np.full((2, 4), -np.inf))],
    *[(lambda v=v: _region(scales=v), "scales") for v in (-SA, np.zeros(4), np.full(4, NAN), np.array([]))],
    *[(lambda v=v: _region(center=v), "center") for v in (np.full(4, NAN), np.zeros((2, 2)))],
    (lambda: _region().contains(np.full(4, NAN)), "points"),
    (lambda: _region().contains(np.zeros(3)), "points"),
]


@pytest.mark.parametrize("call, name", ENTRY_CASES)
def test_values_taken_as_given_are_refused_where_they_enter(call, name):
    with pytest.raises((ValueError, TypeError), match=rf"(?<![\w.]){name}(?![\w])"):
        call()


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
