"""Intersection tests and projections for memory-based certification (ANCER Appendix D).

Regions are axis-aligned: an ellipsoid {x : sum_i ((x_i - c_i) / s_i)^2 <= 1} (l2) or a generalized
cross-polytope {x : sum_i |x_i - c_i| / s_i <= 1} (l1), given by a centre c and semi-axes s. In the
paper's notation the ellipsoid's matrix is A = diag(1 / s_i^2) and the cross-polytope's is
A = diag(1 / s_i). Every function broadcasts over leading axes (one region against a whole memory).

Soundness: each test may only err towards "they intersect" and each distance only towards smaller,
because Algorithm 1 relies on "no intersection" and "distance" to keep certificates disjoint.

The functions are App. D's formulas on arrays taken as given: centres and points finite, of shape (..., n) with
n >= 1, semi-axes (`scales`) finite and > 0 of the same last axis n, ball radii finite and >= 0, leading axes
broadcasting. Those values are checked once, where a region enters the package: `regions.CertifiedRegion` for
one region, and the entry points of Algorithm 1 (`memory.algorithm1` on regions, `memory.decide`,
`memory.CertificationMemory.certify`, `memory.certify_stream`, `memory.algorithm1_reference` and `rotated_memory`'s
two), which then run the tests
here over every pair of regions without checking them again. What is checked here costs O(1) per call (the
choice of `norm`; `iterations`, checked by `bisect`) or is not a region's value (`bisect`'s brackets, the t of
`k_function`): ValueError naming the argument.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .regions import L2, check_norm
from .validation import check_count, check_finite_array

#: relative margin subtracted from a projection distance: the paper's "arbitrarily small epsilon" (D.4, D.5)
SHRINK_MARGIN = 1e-9
#: K(t) must be below -K_TOL to declare two ellipsoids disjoint (guards against rounding)
K_TOL = 1e-10
#: relative margin by which the centres' squared distance must exceed the support half-widths in
#: `separated` (float64 rounding of the sums is ~n * 1e-16 relative, far below it)
SEPARATION_MARGIN = 1e-9
#: relative margin (of 1 + the sum in K) by which K's value or its convexity bound must clear the level before
#: `k_falls_below` stops a pair's bisection early; closer pairs run the whole bisection
CERTAIN_MARGIN = 1e-9


# --------------------------------------------------------------------------------------------------
# ball radii and MaxIntersect (D.1)
# --------------------------------------------------------------------------------------------------

def outer_ball_radius(scales: np.ndarray) -> np.ndarray:
    """Radius of the l_p ball (p = 2 for ellipsoids, 1 for cross-polytopes) around the centre that contains the
    region: the largest semi-axis (MaxIntersect's ball, Lemma 1, D.1).

    Parameters
    ----------
    scales : numpy.ndarray, shape (..., n)
        The semi-axes, finite and > 0, n >= 1.

    Returns
    -------
    numpy.ndarray, shape (...)
        max_i s_i, float64.
    """
    return np.asarray(scales, dtype=np.float64).max(axis=-1)


def inner_ball_radius(scales: np.ndarray) -> np.ndarray:
    """Radius of the largest l_p ball around the centre inside the region: the smallest semi-axis (LargestOutSubset's
    bound, D.4, D.5; they print it as min_i B_ii, a typo: B_ii is 1/s_i^2 or 1/s_i, not the semi-axis).

    Parameters
    ----------
    scales : numpy.ndarray, shape (..., n)
        The semi-axes, finite and > 0, n >= 1.

    Returns
    -------
    numpy.ndarray, shape (...)
        min_i s_i, float64.
    """
    return np.asarray(scales, dtype=np.float64).min(axis=-1)


def _unit(*arrays: np.ndarray) -> np.ndarray:
    """Per leading index, the largest magnitude in the arrays' last axes (1 where all are 0), shaped to
    divide them: the l2 tests below are scale invariant, and dividing by it keeps squares of huge
    coordinates (beyond about 1e154) from overflowing to inf, which would hide an intersection."""
    m = np.max([np.abs(a).max(axis=-1) for a in np.broadcast_arrays(*arrays)], axis=0)
    return np.where(m > 0, m, 1.0)[..., None]


def max_intersect(center_a: np.ndarray, radius_a: np.ndarray, center_b: np.ndarray,
                  radius_b: np.ndarray, norm: str) -> np.ndarray:
    """MaxIntersect (Lemma 1, D.1): False iff ||a - b||_p > r_a + r_b, which proves the l_p balls, and so the
    regions they contain, are disjoint. True means "may intersect".

    Parameters
    ----------
    center_a, center_b : numpy.ndarray, shape (..., n)
        The balls' centres, finite.
    radius_a, radius_b : float or numpy.ndarray, shape (...)
        The balls' radii, finite and >= 0, broadcasting with the centres' leading axes.
    norm : str
        "l2" or "l1" (checked).

    Returns
    -------
    numpy.ndarray of bool, shape (...)
        True where the balls may meet.
    """
    d = np.asarray(center_a, np.float64) - np.asarray(center_b, np.float64)
    if check_norm(norm) == L2:
        u = _unit(d)
        dist = np.sqrt(((d / u) ** 2).sum(axis=-1)) * u[..., 0]
    else:
        dist = np.abs(d).sum(axis=-1)
    return ~(dist > np.asarray(radius_a) + np.asarray(radius_b))


# --------------------------------------------------------------------------------------------------
# bisection and Intersect for ellipsoids (D.2) and cross-polytopes (D.3)
# --------------------------------------------------------------------------------------------------

def bisect(root_above: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray,
           iterations: int) -> tuple[np.ndarray, np.ndarray]:
    """Bisection of the brackets [lo, hi]: up to `iterations` halvings, each keeping the upper half where
    `root_above(mid)` is True (lo = mid) and the lower half elsewhere (hi = mid); the root finder of D.2 (min K,
    Proposition 8) and D.4 (the projection's multiplier). It stops as soon as a halving changes no bracket: a
    halving depends only on (lo, hi), so every later one would change nothing either, and the result is that of
    all `iterations` halvings, bit for bit (in floating point a bracket stops shrinking once lo and hi are
    neighbouring numbers: in notebook 04's stress test after 57 halvings on average for the projection, budgeted
    200, and 55 for min K, budgeted 60). Its brackets are not a region's values, so it checks them (O(size of the
    brackets) per call, against O(iterations x size) for the halvings).

    Parameters
    ----------
    root_above : callable
        mid (an array of the brackets' shape) -> bool array of that shape: True where the root lies above mid.
    lo, hi : numpy.ndarray, shape (...)
        The brackets, real, of one shape, without NaN (an infinite end is accepted), lo <= hi elementwise.
    iterations : int
        The most halvings, an int >= 0.

    Returns
    -------
    lo, hi : numpy.ndarray, shape (...)
        The final brackets.
    """
    _check_bisect(root_above, lo, hi, iterations)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        up = root_above(mid)
        new_lo, new_hi = np.where(up, mid, lo), np.where(up, hi, mid)
        if np.array_equal(new_lo, lo) and np.array_equal(new_hi, hi):
            break
        lo, hi = new_lo, new_hi
    return lo, hi


def _check_bisect(root_above: object, lo: object, hi: object, iterations: int) -> None:
    if not callable(root_above):
        raise TypeError(f"root_above must be a callable (mid -> bool array), got {type(root_above).__name__}")
    check_count(iterations, "iterations", 0)
    arrays = {}
    for name, value in (("lo", lo), ("hi", hi)):
        try:
            arrays[name] = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a real array, got {type(value).__name__}") from None
        if np.isnan(arrays[name]).any():
            raise ValueError(f"{name} must not contain NaN (a bracket end)")
    a, b = arrays["lo"], arrays["hi"]
    if a.shape != b.shape:
        raise ValueError(f"lo and hi must have one shape, got {a.shape} and {b.shape}")
    if not (a <= b).all():
        i = np.flatnonzero(~(a <= b).reshape(-1))[0]
        raise ValueError(f"lo must be <= hi elementwise (a bracket [lo, hi]), got lo = {a.reshape(-1)[i]:g} > "
                         f"hi = {b.reshape(-1)[i]:g} at flat index {i}")


def k_function(t: np.ndarray, diff: np.ndarray, scales_a: np.ndarray, scales_b: np.ndarray) -> np.ndarray:
    """K(t) of Lemma 3 in its diagonal form (D.2): 1 - sum_i d_i^2 t(1-t) A_ii B_ii / (t A_ii + (1-t) B_ii)
    with A_ii = 1/sa_i^2, B_ii = 1/sb_i^2, which simplifies to 1 - sum_i d_i^2 t(1-t) / (t sb_i^2 + (1-t) sa_i^2).
    t is checked (it is no region's value); the rest is taken as given.

    Parameters
    ----------
    t : float or numpy.ndarray, shape (...)
        Points of [0, 1], broadcasting against the leading axes of diff.
    diff : numpy.ndarray, shape (..., n)
        The centres' difference b - a, finite.
    scales_a, scales_b : numpy.ndarray, shape (..., n)
        The two ellipsoids' semi-axes, finite and > 0.

    Returns
    -------
    numpy.ndarray, shape (...)
        K(t), float64.
    """
    tt = check_finite_array(t, "t")
    if not ((tt >= 0.0) & (tt <= 1.0)).all():
        raise ValueError(f"t must lie in [0, 1], got min {tt.min():g}, max {tt.max():g}")
    try:
        np.broadcast_shapes(tt.shape, np.shape(diff)[:-1])
    except ValueError:
        raise ValueError(f"t must broadcast against the leading axes of diff {np.shape(diff)[:-1]}, got shape "
                         f"{tt.shape}") from None
    t = tt[..., None]
    va, vb = np.asarray(scales_a, np.float64) ** 2, np.asarray(scales_b, np.float64) ** 2
    return 1.0 - _k_sum(t, _k_denominator(t, va, vb), np.asarray(diff, np.float64) ** 2)


# D.2's K(t) = 1 - sum_i d_i^2 t(1-t) / den_i(t), den_i(t) = t vb_i + (1-t) va_i (vb = sb^2, va = sa^2), in parts
# shared by `k_function`, `minimize_k` and `k_falls_below`; t has a trailing axis of length 1 against the n axis
def _k_denominator(t: np.ndarray, va: np.ndarray, vb: np.ndarray) -> np.ndarray:
    return t * vb + (1.0 - t) * va


def _k_sum(t: np.ndarray, den: np.ndarray, d2: np.ndarray) -> np.ndarray:
    return (d2 * (t * (1.0 - t)) / den).sum(axis=-1)


def _k_slope(t: np.ndarray, den: np.ndarray, d2: np.ndarray, va: np.ndarray, vb: np.ndarray) -> np.ndarray:
    # K'(t): d/dt [t(1-t) / (t vb + (1-t) va)] = (va (1-t)^2 - vb t^2) / (t vb + (1-t) va)^2
    return -(d2 * (va * (1.0 - t) ** 2 - vb * t * t) / (den * den)).sum(axis=-1)


def _k_derivative(t: np.ndarray, d2: np.ndarray, va: np.ndarray, vb: np.ndarray) -> np.ndarray:
    t = t[..., None]
    return _k_slope(t, _k_denominator(t, va, vb), d2, va, vb)


def minimize_k(center_a: np.ndarray, scales_a: np.ndarray, center_b: np.ndarray, scales_b: np.ndarray,
               iterations: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """min_{t in [0,1]} K(t) (Proposition 8, D.2; K is convex on (0,1) with K(0) = K(1) = 1) by bisection on
    K'(t), which is increasing. K is invariant to scaling the centres' difference and both regions' semi-axes by
    one factor, so they are divided by their largest magnitude first (squares of coordinates near 1e155 and beyond
    would otherwise overflow and hide an intersection).

    Parameters
    ----------
    center_a, center_b : numpy.ndarray, shape (..., n)
        The ellipsoids' centres, finite.
    scales_a, scales_b : numpy.ndarray, shape (..., n)
        Their semi-axes, finite and > 0.
    iterations : int
        Bisection steps, an int >= 0 (0 gives t* = 1/2).

    Returns
    -------
    t : numpy.ndarray, shape (...)
        The minimizer t*.
    k : numpy.ndarray, shape (...)
        K(t*).
    """
    diff = np.asarray(center_b, np.float64) - np.asarray(center_a, np.float64)
    sa, sb = np.asarray(scales_a, np.float64), np.asarray(scales_b, np.float64)
    unit = _unit(diff, sa, sb)
    diff, sa, sb = diff / unit, sa / unit, sb / unit
    d2 = diff * diff
    va = sa ** 2
    vb = sb ** 2
    lead = np.broadcast_shapes(d2.shape, va.shape, vb.shape)[:-1]
    lo, hi = bisect(lambda mid: ~(_k_derivative(mid, d2, va, vb) > 0), np.zeros(lead), np.ones(lead), iterations)
    t = 0.5 * (lo + hi)
    return t, k_function(t, diff, sa, sb)


def k_falls_below(center_a: np.ndarray, scales_a: np.ndarray, center_b: np.ndarray, scales_b: np.ndarray,
                  level: float = -K_TOL, iterations: int = 60) -> np.ndarray:
    """Whether min_{t in [0,1]} K(t) < level (D.2, Proposition 8; with level = -K_TOL, Intersect's "disjoint"): the
    answer of `minimize_k` (K(t*) < level), computed with `minimize_k`'s bisection, which stops for a pair as soon
    as its answer is certain. At each midpoint m of the bracket [lo, hi] that holds the minimizer, K(m) and K'(m)
    give two certificates: K(m) < level is a point below the level; and since K is convex, min K >= K(m) +
    min(K'(m)(lo - m), K'(m)(hi - m)) (the tangent at m over the bracket), so a bound above the level rules every
    t out. Either must clear the level by CERTAIN_MARGIN (1 + the sum in K(m)); a pair that never does (min K
    within rounding of the level) gets `minimize_k`'s K(t*) < level after the same halvings, bit for bit. A pair
    well inside or well apart is answered after a few halvings instead of about 55.

    Parameters
    ----------
    center_a, scales_a, center_b, scales_b : numpy.ndarray, shape (..., n)
        The two ellipsoids, as in `ellipsoids_intersect`.
    level : float, default -K_TOL
        The level K is compared with.
    iterations : int, default 60
        The most halvings, as in `minimize_k`.

    Returns
    -------
    numpy.ndarray of bool, shape (...)
        The broadcast leading shape: True where min K < level.
    """
    check_count(iterations, "iterations", 0)
    diff = np.asarray(center_b, np.float64) - np.asarray(center_a, np.float64)
    diff, sa, sb = np.broadcast_arrays(diff, np.asarray(scales_a, np.float64), np.asarray(scales_b, np.float64))
    lead = diff.shape[:-1]
    diff, sa, sb = (v.reshape(-1, v.shape[-1]) for v in (diff, sa, sb))
    unit = _unit(diff, sa, sb)
    diff, sa, sb = diff / unit, sa / unit, sb / unit
    d2, va, vb = diff * diff, sa ** 2, sb ** 2
    below = np.zeros(len(diff), dtype=bool)
    pending = np.arange(len(diff))  # pairs not answered yet, and their brackets
    lo, hi = np.zeros(len(diff)), np.ones(len(diff))
    final = []  # (pairs, brackets) whose bracket stopped shrinking undecided
    for _ in range(iterations):
        if not pending.size:
            break
        mid = 0.5 * (lo + hi)
        t = mid[:, None]
        den = _k_denominator(t, va, vb)
        slope, total = _k_slope(t, den, d2, va, vb), _k_sum(t, den, d2)
        k, margin = 1.0 - total, CERTAIN_MARGIN * (1.0 + total)
        witness = k < level - margin
        bound = k + np.minimum(slope * (lo - mid), slope * (hi - mid)) > level + margin
        up = ~(slope > 0)
        new_lo, new_hi = np.where(up, mid, lo), np.where(up, hi, mid)
        stopped = (new_lo == lo) & (new_hi == hi) & ~witness & ~bound
        below[pending[witness]] = True
        if stopped.any():
            final.append((pending[stopped], lo[stopped], hi[stopped]))
        keep = ~(witness | bound | stopped)
        pending, lo, hi = pending[keep], new_lo[keep], new_hi[keep]
        d2, va, vb = d2[keep], va[keep], vb[keep]
    final.append((pending, lo, hi))
    for pairs, lo, hi in final:
        if pairs.size:
            below[pairs] = k_function(0.5 * (lo + hi), diff[pairs], sa[pairs], sb[pairs]) < level
    return below.reshape(lead)


def separated(center_a: np.ndarray, scales_a: np.ndarray, center_b: np.ndarray, scales_b: np.ndarray) -> np.ndarray:
    """True where a hyperplane orthogonal to d = b - a separates two axis-aligned ellipsoids (a sufficient test of
    D.2's disjointness): h_a(d) + h_b(d) < ||d||^2 (1 - SEPARATION_MARGIN), with the support function h(d) = max
    over the centred region of <x, d> = ||s * d||_2. The regions' projections onto d are then the disjoint
    intervals <a, d> +- h_a(d) and <b, d> +- h_b(d). False proves nothing. O(n) per pair; scale invariant, so
    computed after dividing by the largest magnitude.

    Parameters
    ----------
    center_a, center_b : numpy.ndarray, shape (..., n)
        The ellipsoids' centres, finite.
    scales_a, scales_b : numpy.ndarray, shape (..., n)
        Their semi-axes, finite and > 0.

    Returns
    -------
    numpy.ndarray of bool, shape (...)
        True where the hyperplane separates the pair.
    """
    diff = np.asarray(center_b, np.float64) - np.asarray(center_a, np.float64)
    sa, sb = np.asarray(scales_a, np.float64), np.asarray(scales_b, np.float64)
    unit = _unit(diff, sa, sb)
    diff, sa, sb = diff / unit, sa / unit, sb / unit
    h_a = np.sqrt(((sa * diff) ** 2).sum(axis=-1))
    h_b = np.sqrt(((sb * diff) ** 2).sum(axis=-1))
    return h_a + h_b < (diff * diff).sum(axis=-1) * (1.0 - SEPARATION_MARGIN)


def ellipsoids_intersect(center_a: np.ndarray, scales_a: np.ndarray, center_b: np.ndarray,
                         scales_b: np.ndarray) -> np.ndarray:
    """Intersect for axis-aligned ellipsoids (D.2): False iff some t in (0,1) has K(t) < -K_TOL, which proves the
    ellipsoids disjoint (Lemma 2, Lemma 3, Proposition 8); True ("may intersect") otherwise. The O(n) hyperplane
    test `separated` runs first and the bisection on K (`k_falls_below`) only on the pairs it leaves. D.2's test is
    exact, so every pair `separated` proves disjoint has min K < 0: the shortcut changes no answer beyond rounding
    (checked on notebook 04's order and stress tests, 304 runs of Algorithm 1 over six test orders: identical
    results); nor does `k_falls_below`'s early answer (the same tests at today's sizes, 172 runs over six test
    orders, 1,032 passes of Algorithm 1: identical tables).

    Parameters
    ----------
    center_a, center_b : numpy.ndarray, shape (..., n)
        The ellipsoids' centres, finite; leading axes broadcast.
    scales_a, scales_b : numpy.ndarray, shape (..., n)
        Their semi-axes, finite and > 0.

    Returns
    -------
    numpy.ndarray of bool, shape (...)
        The broadcast leading shape: True where the pair may intersect.
    """
    a, b = np.asarray(center_a, np.float64), np.asarray(center_b, np.float64)
    sa, sb = np.asarray(scales_a, np.float64), np.asarray(scales_b, np.float64)
    batch = np.broadcast_shapes(a.shape[:-1], sa.shape[:-1], b.shape[:-1], sb.shape[:-1])
    meets = np.broadcast_to(~separated(a, sa, b, sb), batch).reshape(-1).copy()
    left = np.flatnonzero(meets)
    if left.size:
        def flat(v: np.ndarray) -> np.ndarray:
            return np.broadcast_to(v, batch + v.shape[-1:]).reshape(-1, v.shape[-1])[left]
        meets[left] = ~k_falls_below(flat(a), flat(sa), flat(b), flat(sb), -K_TOL)
    return meets.reshape(batch)


def cross_polytopes_intersect(center_a: np.ndarray, scales_a: np.ndarray, center_b: np.ndarray,
                              scales_b: np.ndarray) -> np.ndarray:
    """Intersect for generalized cross-polytopes (D.3): tests the circumscribing ellipsoids {||A(x - a)||_2 <= 1}
    (a superset because ||v||_2 <= ||v||_1); False only if those are disjoint.

    Parameters
    ----------
    center_a, center_b : numpy.ndarray, shape (..., n)
        The cross-polytopes' centres, finite; leading axes broadcast.
    scales_a, scales_b : numpy.ndarray, shape (..., n)
        Their semi-axes, finite and > 0.

    Returns
    -------
    numpy.ndarray of bool, shape (...)
        True where the pair may intersect.
    """
    return ellipsoids_intersect(center_a, scales_a, center_b, scales_b)


def intersect(center_a: np.ndarray, scales_a: np.ndarray, center_b: np.ndarray, scales_b: np.ndarray,
              norm: str) -> np.ndarray:
    """Intersect(R_a, R_b) for the region shape of `norm` (D.2 for l2, D.3 for l1).

    Parameters
    ----------
    center_a, center_b : numpy.ndarray, shape (..., n)
        The regions' centres, finite; leading axes broadcast.
    scales_a, scales_b : numpy.ndarray, shape (..., n)
        Their semi-axes, finite and > 0.
    norm : str
        "l2" or "l1" (checked).

    Returns
    -------
    numpy.ndarray of bool, shape (...)
        True where the pair may intersect.
    """
    if check_norm(norm) == L2:
        return ellipsoids_intersect(center_a, scales_a, center_b, scales_b)
    return cross_polytopes_intersect(center_a, scales_a, center_b, scales_b)


# --------------------------------------------------------------------------------------------------
# distances and LargestOutSubset (D.4, D.5)
# --------------------------------------------------------------------------------------------------

def project_onto_ellipsoid(y: np.ndarray, scales: np.ndarray, iterations: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean projection of y onto the centred ellipsoid {x : sum (x_i/s_i)^2 <= 1} (D.4's KKT system):
    x* = (I + 2 lambda A)^-1 y with f(lambda) = sum y_i^2 A_ii / (1 + 2 lambda A_ii)^2 - 1 = 0. With
    mu = 2 lambda, x*_i = y_i s_i^2 / (s_i^2 + mu); f is decreasing in mu and f(||y * s||_2) <= 0, so
    bisection brackets the root. The distance is a certified lower bound (taken at the bracket's lower end;
    ||y - x(mu)|| grows with mu).

    Parameters
    ----------
    y : numpy.ndarray, shape (..., n)
        The points, relative to the ellipsoid's centre, finite.
    scales : numpy.ndarray, shape (..., n)
        The semi-axes, finite and > 0.
    iterations : int
        Bisection steps, an int >= 0.

    Returns
    -------
    x : numpy.ndarray, shape (..., n)
        The projections (y for points inside).
    distance : numpy.ndarray, shape (...)
        Lower bounds on ||y - x*||_2 (0 for points inside).
    """
    y = np.asarray(y, np.float64)
    v = np.asarray(scales, np.float64) ** 2
    y, v = np.broadcast_arrays(y, v)
    inside = ((y * y) / v).sum(axis=-1) <= 1.0
    root = np.sqrt(v)
    # inside points get the bracket [0, 0], which is already final (their result is y and 0 whatever it is)
    hi = np.where(inside, 0.0, np.sqrt((y * y * v).sum(axis=-1)))
    lo, hi = bisect(lambda mid: ((y * root / (v + mid[..., None])) ** 2).sum(axis=-1) - 1.0 > 0,
                    np.zeros(y.shape[:-1]), hi, iterations)
    x_lo = y * v / (v + lo[..., None])
    dist = np.sqrt(((y - x_lo) ** 2).sum(axis=-1))
    x_star = y * v / (v + hi[..., None])
    return np.where(inside[..., None], y, x_star), np.where(inside, 0.0, dist)


def l1_distance_to_cross_polytope(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Exact l1 distance from y to the centred generalized cross-polytope {x : sum |x_i| / s_i <= 1} (D.5's
    distance, computed exactly).

    Moving coordinate i towards 0 by u costs u in l1 and lowers sum |x_i| / s_i by u / s_i, so the
    cheapest way to remove the excess e = sum |y_i| / s_i - 1 spends the budget on the smallest s_i
    first (a fractional knapsack, solved greedily and exactly). This replaces D.5's construction,
    which measures the l1 length of an l2 projection onto the facet hyperplane and can exceed the true
    l1 distance (unsound; see tests/test_geometry.py and notebook 01).

    Parameters
    ----------
    y : numpy.ndarray, shape (..., n)
        The points, relative to the cross-polytope's centre, finite.
    scales : numpy.ndarray, shape (..., n)
        The semi-axes, finite and > 0.

    Returns
    -------
    numpy.ndarray, shape (...)
        The l1 distances (0 for points inside).
    """
    y = np.abs(np.asarray(y, np.float64))
    s = np.asarray(scales, np.float64)
    y, s = np.broadcast_arrays(y, s)
    excess = (y / s).sum(axis=-1) - 1.0
    order = np.argsort(s, axis=-1, kind="stable")
    ys = np.take_along_axis(y, order, axis=-1)
    ss = np.take_along_axis(s, order, axis=-1)
    cap = np.cumsum(ys / ss, axis=-1)                    # excess removable by zeroing the first k coordinates
    k = np.argmax(cap >= excess[..., None], axis=-1)     # first coordinate that finishes the job
    spent_before = np.cumsum(ys, axis=-1) - ys           # l1 cost of zeroing coordinates before k
    cap_before = cap - ys / ss
    idx = k[..., None]
    dist = (np.take_along_axis(spent_before, idx, -1)[..., 0]
            + (excess - np.take_along_axis(cap_before, idx, -1)[..., 0]) * np.take_along_axis(ss, idx, -1)[..., 0])
    return np.where(excess > 0, dist, 0.0)


def paper_l1_projection_radius(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """D.5 as printed (with the sign of w corrected): project y in l2 onto the facet hyperplane
    sum_i sign(y_i) A_ii x_i = 1 (Lemma 4) and return the l1 length of the step. Kept to show that it
    can overestimate the l1 distance; Algorithm 1 uses `l1_distance_to_cross_polytope` instead.

    Parameters
    ----------
    y : numpy.ndarray, shape (..., n)
        The points, relative to the cross-polytope's centre, finite.
    scales : numpy.ndarray, shape (..., n)
        The semi-axes, finite and > 0.

    Returns
    -------
    numpy.ndarray, shape (...)
        The l1 lengths of the steps.
    """
    y = np.asarray(y, np.float64)
    w = np.sign(y) / np.asarray(scales, np.float64)
    step = ((w * y).sum(axis=-1) - 1.0) / (w * w).sum(axis=-1)
    return np.abs(step[..., None] * w).sum(axis=-1)


def distance_to_region(point: np.ndarray, center: np.ndarray, scales: np.ndarray, norm: str) -> np.ndarray:
    """A lower bound on the l_p distance (p = 2 or 1) from a point to a region (D.4 for ellipsoids, D.5 computed
    exactly for cross-polytopes); 0 if it is inside.

    Parameters
    ----------
    point, center : numpy.ndarray, shape (..., n)
        The points and the regions' centres, finite; leading axes broadcast.
    scales : numpy.ndarray, shape (..., n)
        The regions' semi-axes, finite and > 0.
    norm : str
        "l2" or "l1" (checked).

    Returns
    -------
    numpy.ndarray, shape (...)
        The distances, float64.
    """
    y = np.asarray(point, np.float64) - np.asarray(center, np.float64)
    if check_norm(norm) == L2:
        u = _unit(y, scales)  # the distance scales linearly: compute it in units of u (no overflow)
        return project_onto_ellipsoid(y / u, np.asarray(scales, np.float64) / u)[1] * u[..., 0]
    return l1_distance_to_cross_polytope(y, scales)


def largest_out_subset(center_a: np.ndarray, scales_a: np.ndarray, center_b: np.ndarray,
                       scales_b: np.ndarray, norm: str) -> np.ndarray:
    """LargestOutSubset(R_a, R_b) (D.4 for ellipsoids, D.5 for cross-polytopes): the radius of an l_p ball around b
    inside R_b that misses R_a, min(dist_p(b, R_a) (1 - SHRINK_MARGIN), smallest semi-axis of R_b). The caller must
    abstain instead when b lies in R_a (the radius is then 0).

    Parameters
    ----------
    center_a, center_b : numpy.ndarray, shape (..., n)
        The regions' centres, finite; leading axes broadcast.
    scales_a, scales_b : numpy.ndarray, shape (..., n)
        Their semi-axes, finite and > 0.
    norm : str
        "l2" or "l1" (checked).

    Returns
    -------
    numpy.ndarray, shape (...)
        The radii, float64.
    """
    dist = distance_to_region(center_b, center_a, scales_a, norm)
    return np.minimum(dist * (1.0 - SHRINK_MARGIN), inner_ball_radius(scales_b))
