"""RANCER's rotated (non-axis-aligned) ellipsoids for memory-based certification (RANCER §3, Eq. 5-6).

A rotated certificate is the ellipsoid S = {x : (x - c)^T Q (x - c) <= 1} with the dense precision matrix
Q = U diag(1 / s_i^2) U^T, where U is the (orthogonal) rotation of the smoothing noise and s_i the semi-axes
(s = gap * sigma, RANCER Eq. 3). Regions are passed as (centre, rotation U, semi-axes s); `precision` and
`covariance` build the dense Q and Q^-1 = U diag(s_i^2) U^T for RANCER's literal formulas. Leading axes
broadcast (one region against a whole memory); the dimension n is small or moderate (dense n x n algebra).

- Intersect (RANCER Eq. 5, = ANCER Lemma 3's third form of K): two ellipsoids S_Q (centre q) and S_R
  (centre r) are disjoint iff K(t) = 1 - (r - q)^T ((1/(1-t)) R^-1 + (1/t) Q^-1)^-1 (r - q) < 0 for some
  t in (0, 1). `k_function` evaluates Eq. 5 literally; `minimize_k` finds min_t K(t) after a simultaneous
  diagonalization (W^T Q^-1 W = I, W^T R^-1 W = diag(mu)) which turns Eq. 5 into ANCER's diagonal form
  (App. D.2) with unit semi-axes for S_Q and semi-axes sqrt(mu) for S_R, solved by
  `geometry.minimize_k` (bisection on the increasing K'(t), Proposition 8).
  Before Eq. 5, `separated` tries the cheapest proof of disjointness, a hyperplane orthogonal to the line
  of the centres: the projections of the ellipsoids onto that line, intervals of half-widths
  h(v) = ||diag(s) U^T v|| (support functions), are disjoint. O(n^2) against Eq. 5's O(n^3) per pair; a
  pair it separates is disjoint, so Eq. 5 would say so too (it is exact), and only the pairs it cannot
  separate go to Eq. 5. On notebook 06's MNIST memory it separates every one of the 655 pairs the outer
  balls could not, which took Eq. 5 about 180 s.
- Projection (RANCER Eq. 6, ANCER D.4's KKT system): x* = (2 lam Q + I)^-1 y with
  y^T (2 lam Q + I)^-1 Q (2 lam Q + I)^-1 y = 1, solved in Q's eigenbasis where it is the scalar equation
  sum_i a_i y~_i^2 / (1 + 2 lam a_i)^2 = 1, a_i = 1 / s_i^2, y~ = U^T y (bisection on lam).
- LargestOutSubset: the radius of an l2 ball around r inside S_R that misses S_Q.

Soundness as in `geometry`: Intersect may only err towards "they intersect", distances only towards smaller.

The functions on regions (centre, U, s) are the papers' formulas on arrays taken as given: centres and points
finite, of shape (..., n); semi-axes finite and > 0, of shape (..., n), n >= 1; rotations (..., n, n) and
orthogonal. Those values are checked once, where a region enters the package: `regions.CertifiedRegion` for one
region, and the entry points of Algorithm 1 (`memory.algorithm1`, `memory.certify_stream`,
`memory.algorithm1_reference`, `memory.CertificationMemory.certify`, `rotated_memory`'s two), whose rotations pass
`parameters.check_rotation`, the package's one orthogonality test. The formulas write U^T for U^-1: `contains` and the projection's inside test
are those of the region {x : ||diag(1/s) U^T (x - c)|| <= 1}, while `covariance`, `separated` and `minimize_k`
describe the ellipsoid c + U diag(s) B; for an orthogonal U they are one region, and the memory widens its margins
by the deviation of a rotation that is orthogonal only to within `parameters.ORTHOGONALITY_TOL`
(`memory.DEVIATION_ABSORBED` gives the rule and its derivation).

What is checked here is not a region's value (ValueError naming the argument): `iterations` (by
`geometry.bisect`), a covariance whose factorization fails (`simultaneous_diagonalization`), and the arguments of
the dense evaluators of Eq. 5 and Eq. 6, `quadratic_form`, `k_function` and `eq6_residual`: a dense matrix, t or a
multiplier enters the package only through them, and Algorithm 1 does not call them. Their dense matrices must be
finite, of shape (..., n, n), with a positive diagonal (the O(n) necessary condition of positive definiteness; a
factorization that fails names the matrix).
"""
from __future__ import annotations

import numpy as np

from . import geometry
from .validation import check_finite_array

#: relative margin subtracted from the projection distance (the papers' "arbitrarily small epsilon")
SHRINK_MARGIN = geometry.SHRINK_MARGIN
#: min_t K(t) must be below -K_TOL to declare two ellipsoids disjoint (guards against rounding)
K_TOL = geometry.K_TOL
#: relative margin of `separated` (as in geometry.separated, the axis-aligned test)
SEPARATION_MARGIN = geometry.SEPARATION_MARGIN
#: bisection steps of the projection (Eq. 6's multiplier) where the caller does not choose them
PROJECTION_ITERATIONS = 200


def _dimension(points: np.ndarray, name: str) -> int:
    """n of an array of points (..., n), n >= 1 (the first argument that fixes it)."""
    if points.ndim == 0 or points.shape[-1] == 0:
        raise ValueError(f"{name} must have shape (..., n) with n >= 1, got shape {points.shape}")
    return points.shape[-1]


def _check_matrix(matrix: np.ndarray, name: str, n: int) -> np.ndarray:
    """A dense region matrix (precision Q or covariance Q^-1): finite, of shape (..., n, n), with a positive
    diagonal (necessary for positive definiteness; O(n^2), the full test would cost a factorization)."""
    m = check_finite_array(matrix, name)
    if m.ndim < 2 or m.shape[-2:] != (n, n):
        raise ValueError(f"{name} must have shape (..., {n}, {n}) to match the points' dimension {n}, "
                         f"got shape {m.shape}")
    diag = np.diagonal(m, axis1=-2, axis2=-1)
    if not (diag > 0).all():
        raise ValueError(f"{name} must be positive definite; its diagonal has an entry <= 0 (min {diag.min():g})")
    return m


def _scaled_gram(rotation: np.ndarray, diagonal: np.ndarray) -> np.ndarray:
    """U diag(d) U^T, batched over leading axes."""
    u = np.asarray(rotation, np.float64)
    return (u * np.asarray(diagonal, np.float64)[..., None, :]) @ np.swapaxes(u, -1, -2)


def _rotated(rotation: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """U^T v for rotations (..., n, n) and vectors (..., n), batched over leading axes."""
    return np.einsum("...ji,...j->...i", rotation, vectors)


def precision(rotation: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Q = U diag(1 / s_i^2) U^T, the matrix of the region {x : (x - c)^T Q (x - c) <= 1} (RANCER Eq. 3).

    Parameters
    ----------
    rotation : numpy.ndarray, shape (..., n, n)
        U, orthogonal.
    scales : numpy.ndarray, shape (..., n)
        The semi-axes s, finite and > 0, n >= 1.

    Returns
    -------
    numpy.ndarray, shape (..., n, n)
        Q, float64.
    """
    return _scaled_gram(rotation, 1.0 / np.asarray(scales, np.float64) ** 2)


def covariance(rotation: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Q^-1 = U diag(s_i^2) U^T (RANCER Eq. 5's R^-1 and Q^-1; for a certificate, gap^2 times the smoothing
    covariance).

    Parameters
    ----------
    rotation : numpy.ndarray, shape (..., n, n)
        U, orthogonal.
    scales : numpy.ndarray, shape (..., n)
        The semi-axes s, finite and > 0, n >= 1.

    Returns
    -------
    numpy.ndarray, shape (..., n, n)
        Q^-1, float64.
    """
    return _scaled_gram(rotation, np.asarray(scales, np.float64) ** 2)


def quadratic_form(points: np.ndarray, center: np.ndarray, q_matrix: np.ndarray) -> np.ndarray:
    """(x - c)^T Q (x - c) for points (..., n); <= 1 iff the point lies in the region.

    Parameters
    ----------
    points : numpy.ndarray, shape (..., n)
        The points x, finite.
    center : numpy.ndarray, shape (..., n)
        The centre c, finite, broadcasting against points.
    q_matrix : numpy.ndarray, shape (..., n, n)
        Q, finite and positive definite (diagonal > 0 checked).

    Returns
    -------
    numpy.ndarray of float64, shape (...)
        The quadratic forms, the leading axes broadcast.
    """
    points = check_finite_array(points, "points")
    n = _dimension(points, "points")
    center = check_finite_array(center, "center", n)
    q_matrix = _check_matrix(q_matrix, "q_matrix", n)
    d = np.asarray(points, np.float64) - np.asarray(center, np.float64)
    return np.einsum("...i,...ij,...j->...", d, np.asarray(q_matrix, np.float64), d)


def contains(points: np.ndarray, center: np.ndarray, rotation: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Membership of points in the rotated ellipsoid (RANCER Eq. 3): ||diag(1/s) U^T (x - c)||_2 <= 1.

    Parameters
    ----------
    points : numpy.ndarray, shape (..., n)
        The points x, finite.
    center : numpy.ndarray, shape (..., n)
        The centre c, finite.
    rotation : numpy.ndarray, shape (..., n, n)
        U, orthogonal.
    scales : numpy.ndarray, shape (..., n)
        The semi-axes s, finite and > 0.

    Returns
    -------
    numpy.ndarray of bool, shape (...)
        True where the point lies in the region.
    """
    d = np.asarray(points, np.float64) - np.asarray(center, np.float64)
    z = _rotated(np.asarray(rotation, np.float64), d) / np.asarray(scales, np.float64)
    return (z * z).sum(axis=-1) <= 1.0


def k_function(t: np.ndarray | float, center_q: np.ndarray, q_matrix: np.ndarray, center_r: np.ndarray,
               r_matrix: np.ndarray) -> np.ndarray:
    """RANCER Eq. 5 evaluated literally with dense inverses:
    K(t) = 1 - (r - q)^T ((1/(1-t)) R^-1 + (1/t) Q^-1)^-1 (r - q), for t in (0, 1) (array t broadcasts
    against the regions' leading axes). Reference implementation; `minimize_k` is the fast path.
    Parameters
    ----------
    t : float or numpy.ndarray, shape broadcasting against the regions' leading axes
        Every entry in the open interval (0, 1).
    center_q : numpy.ndarray, shape (..., n)
        The centre q of the first region, finite.
    q_matrix : numpy.ndarray, shape (..., n, n)
        Its matrix Q, finite and positive definite (diagonal > 0 checked; a singular matrix is named).
    center_r : numpy.ndarray, shape (..., n)
        The centre r of the second region, finite.
    r_matrix : numpy.ndarray, shape (..., n, n)
        Its matrix R, as q_matrix.

    Returns
    -------
    numpy.ndarray of float64, shape (...)
        K(t), shaped as t broadcast against the regions' leading axes.
    """
    t = check_finite_array(t, "t")
    if not ((t > 0) & (t < 1)).all():
        raise ValueError(f"t must be in the open interval (0, 1) (K is defined there), "
                         f"got values in [{t.min():g}, {t.max():g}]")
    center_q = check_finite_array(center_q, "center_q")
    n = _dimension(center_q, "center_q")
    center_r = check_finite_array(center_r, "center_r", n)
    q_matrix, r_matrix = _check_matrix(q_matrix, "q_matrix", n), _check_matrix(r_matrix, "r_matrix", n)
    t = np.asarray(t, np.float64)[..., None, None]
    q_inv = _inverse(q_matrix, "q_matrix")
    r_inv = _inverse(r_matrix, "r_matrix")
    m = r_inv / (1.0 - t) + q_inv / t
    d = np.asarray(center_r, np.float64) - np.asarray(center_q, np.float64)
    d = np.broadcast_to(d, m.shape[:-1])
    return 1.0 - np.einsum("...i,...i->...", d, np.linalg.solve(m, d[..., None])[..., 0])


def _inverse(matrix: np.ndarray, name: str) -> np.ndarray:
    try:
        return np.linalg.inv(np.asarray(matrix, np.float64))
    except np.linalg.LinAlgError:
        raise ValueError(f"{name} must be invertible (positive definite); it is singular") from None


def simultaneous_diagonalization(cov_q: np.ndarray, cov_r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W and mu with W^T cov_q W = I and W^T cov_r W = diag(mu) (cov_q = L L^T, eigh of L^-1 cov_r L^-T): the step
    that turns RANCER's Eq. 5 into ANCER's diagonal K (App. D.2).

    Parameters
    ----------
    cov_q : numpy.ndarray, shape (..., n, n)
        Symmetric positive definite (a factorization that fails raises a ValueError naming it).
    cov_r : numpy.ndarray, shape (..., n, n)
        Symmetric and finite (an eigendecomposition that fails raises a ValueError naming it).

    Returns
    -------
    w : numpy.ndarray, shape (..., n, n)
        W.
    mu : numpy.ndarray, shape (..., n)
        The generalized eigenvalues, ascending.
    """
    try:
        chol = np.linalg.cholesky(np.asarray(cov_q, np.float64))
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"cov_q must be a symmetric positive definite (..., n, n) matrix (its Cholesky "
                         f"factorization failed: {exc})") from None
    inv_l = np.linalg.inv(chol)
    c = inv_l @ np.asarray(cov_r, np.float64) @ np.swapaxes(inv_l, -1, -2)
    try:
        mu, v = np.linalg.eigh(0.5 * (c + np.swapaxes(c, -1, -2)))
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"cov_r must be a finite symmetric (..., n, n) matrix (its eigendecomposition failed: "
                         f"{exc})") from None
    return np.swapaxes(inv_l, -1, -2) @ v, mu


def minimize_k(center_q: np.ndarray, rotation_q: np.ndarray, scales_q: np.ndarray, center_r: np.ndarray,
               rotation_r: np.ndarray, scales_r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min over t in [0, 1] of RANCER's K(t) (Eq. 5), convex on (0, 1) with K(0) = K(1) = 1.

    With W^T Q^-1 W = I and W^T R^-1 W = diag(mu): ((1/(1-t)) R^-1 + (1/t) Q^-1)^-1 = W diag(t(1-t) /
    (t mu + 1 - t)) W^T, so K(t) = 1 - sum_i z_i^2 t(1-t) / (t mu_i + (1-t)) with z = W^T (r - q): ANCER's
    diagonal K (App. D.2) for semi-axes 1 and sqrt(mu).

    Parameters
    ----------
    center_q, center_r : numpy.ndarray, shape (..., n)
        The centres q and r, finite.
    rotation_q, rotation_r : numpy.ndarray, shape (..., n, n)
        The rotations, orthogonal.
    scales_q, scales_r : numpy.ndarray, shape (..., n)
        The semi-axes, finite and > 0.

    Returns
    -------
    t : numpy.ndarray, shape (...)
        The minimizer t*.
    k : numpy.ndarray, shape (...)
        K(t*).
    """
    w, mu = simultaneous_diagonalization(covariance(rotation_q, scales_q), covariance(rotation_r, scales_r))
    d = np.asarray(center_r, np.float64) - np.asarray(center_q, np.float64)
    z = np.einsum("...ji,...j->...i", w, d)
    mu = np.maximum(mu, np.finfo(np.float64).tiny)
    return geometry.minimize_k(np.zeros_like(z), np.ones_like(mu), z, np.sqrt(mu))


def separated(center_q: np.ndarray, rotation_q: np.ndarray, scales_q: np.ndarray, center_r: np.ndarray,
              rotation_r: np.ndarray, scales_r: np.ndarray) -> np.ndarray:
    """True where a hyperplane orthogonal to d = r - q separates the two rotated ellipsoids (a sufficient test of
    Eq. 5's disjointness): h_Q(d) + h_R(d) < ||d||^2 (1 - SEPARATION_MARGIN), with the support function
    h(d) = max over the region centred at 0 of <x, d> = ||diag(s) U^T d||_2 (= sqrt(d^T Q^-1 d)). The regions'
    projections onto d are then the disjoint intervals <q, d> +- h_Q(d) and <r, d> +- h_R(d), so the regions are
    disjoint. False proves nothing; O(n^2) per pair.

    Parameters
    ----------
    center_q, center_r : numpy.ndarray, shape (..., n)
        The centres q and r, finite; leading axes broadcast.
    rotation_q, rotation_r : numpy.ndarray, shape (..., n, n)
        The rotations, orthogonal.
    scales_q, scales_r : numpy.ndarray, shape (..., n)
        The semi-axes, finite and > 0.

    Returns
    -------
    numpy.ndarray of bool, shape (...)
        True where the hyperplane separates the pair.
    """
    d = np.asarray(center_r, np.float64) - np.asarray(center_q, np.float64)
    h_q = np.linalg.norm(_rotated(np.asarray(rotation_q, np.float64), d) * np.asarray(scales_q, np.float64), axis=-1)
    h_r = np.linalg.norm(_rotated(np.asarray(rotation_r, np.float64), d) * np.asarray(scales_r, np.float64), axis=-1)
    return h_q + h_r < (d * d).sum(axis=-1) * (1.0 - SEPARATION_MARGIN)


def ellipsoids_intersect(center_q: np.ndarray, rotation_q: np.ndarray, scales_q: np.ndarray,
                         center_r: np.ndarray, rotation_r: np.ndarray, scales_r: np.ndarray) -> np.ndarray:
    """Intersect for rotated ellipsoids (RANCER §3): False where the regions are proved disjoint, by the hyperplane
    of `separated` or else by min_t K(t) < -K_TOL (Eq. 5, exact: every disjoint pair has min K < 0); True ("may
    intersect") otherwise. Eq. 5 runs only on the pairs `separated` leaves.

    Parameters
    ----------
    center_q, center_r : numpy.ndarray, shape (..., n)
        The centres q and r, finite; all leading axes broadcast.
    rotation_q, rotation_r : numpy.ndarray, shape (..., n, n)
        The rotations, orthogonal.
    scales_q, scales_r : numpy.ndarray, shape (..., n)
        The semi-axes, finite and > 0.

    Returns
    -------
    numpy.ndarray of bool, shape (...)
        The broadcast leading shape: True where the pair may intersect.
    """
    cq, cr = np.asarray(center_q, np.float64), np.asarray(center_r, np.float64)
    uq, ur = np.asarray(rotation_q, np.float64), np.asarray(rotation_r, np.float64)
    sq, sr = np.asarray(scales_q, np.float64), np.asarray(scales_r, np.float64)
    batch = np.broadcast_shapes(cq.shape[:-1], uq.shape[:-2], sq.shape[:-1], cr.shape[:-1], ur.shape[:-2],
                                sr.shape[:-1])
    meets = ~separated(cq, uq, sq, cr, ur, sr)
    meets = np.broadcast_to(meets, batch).reshape(-1).copy()
    left = np.flatnonzero(meets)
    if left.size:
        def flat(a: np.ndarray, k: int) -> np.ndarray:
            return np.broadcast_to(a, batch + a.shape[a.ndim - k:]).reshape((-1,) + a.shape[a.ndim - k:])[left]
        _, k = minimize_k(flat(cq, 1), flat(uq, 2), flat(sq, 1), flat(cr, 1), flat(ur, 2), flat(sr, 1))
        meets[left] = ~(k < -K_TOL)
    return meets.reshape(batch)


def eq6_residual(lam: np.ndarray | float, y: np.ndarray, q_matrix: np.ndarray) -> np.ndarray:
    """RANCER Eq. 6 evaluated literally: y^T (2 lam Q + I)^-1 Q (2 lam Q + I)^-1 y - 1 (zero at the
    multiplier of the projection of y onto {x : x^T Q x <= 1}).
    Parameters
    ----------
    lam : float or numpy.ndarray, shape (...)
        The Lagrange multipliers, finite and >= 0, broadcasting against y's leading axes.
    y : numpy.ndarray, shape (..., n)
        The points to project, finite.
    q_matrix : numpy.ndarray, shape (..., n, n)
        Q, finite and positive definite (diagonal > 0 checked).

    Returns
    -------
    numpy.ndarray of float64, shape (...)
        The residuals, the leading axes broadcast.
    """
    lam = check_finite_array(lam, "lam")
    if (lam < 0).any():
        raise ValueError(f"lam must be >= 0 (a Lagrange multiplier), got min {lam.min():g}")
    y = check_finite_array(y, "y")
    q_matrix = _check_matrix(q_matrix, "q_matrix", _dimension(y, "y"))
    q = np.asarray(q_matrix, np.float64)
    lam = np.asarray(lam, np.float64)[..., None, None]
    x = np.linalg.solve(2.0 * lam * q + np.eye(q.shape[-1]), np.asarray(y, np.float64)[..., None])[..., 0]
    return np.einsum("...i,...ij,...j->...", x, q, x) - 1.0


def eq6_multiplier(y_eigen: np.ndarray, scales: np.ndarray,
                   iterations: int = PROJECTION_ITERATIONS) -> tuple[np.ndarray, np.ndarray]:
    """Bracket [lo, hi] of the root lam of RANCER's Eq. 6 in Q's eigenbasis, f(lam) = sum_i a_i y~_i^2 /
    (1 + 2 lam a_i)^2 - 1 with a_i = 1 / s_i^2. f decreases in lam and f(||y~ * s||_2 / 2) <= 0, so bisection from
    [0, ||y~ * s|| / 2] keeps the root inside. Points inside the ellipsoid give [0, 0].

    Parameters
    ----------
    y_eigen : numpy.ndarray, shape (..., n)
        y~ = U^T y, finite.
    scales : numpy.ndarray, shape (..., n)
        The semi-axes s, finite and > 0.
    iterations : int
        Bisection steps, an int >= 0.

    Returns
    -------
    lo, hi : numpy.ndarray, shape (...)
        The bracket.
    """
    y = np.asarray(y_eigen, np.float64)
    a = 1.0 / np.asarray(scales, np.float64) ** 2
    y, a = np.broadcast_arrays(y, a)
    hi = np.where((a * y * y).sum(axis=-1) > 1.0, 0.5 * np.sqrt((y * y / a).sum(axis=-1)), 0.0)
    return geometry.bisect(lambda mid: (a * (y / (1.0 + 2.0 * mid[..., None] * a)) ** 2).sum(axis=-1) - 1.0 > 0,
                           np.zeros(y.shape[:-1]), hi, iterations)


def project_onto_ellipsoid(y: np.ndarray, rotation: np.ndarray, scales: np.ndarray,
                           iterations: int = PROJECTION_ITERATIONS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Euclidean projection of y onto the centred rotated ellipsoid {x : x^T Q x <= 1} (RANCER Eq. 6).

    In Q's eigenbasis (y~ = U^T y) the KKT point is x~_i = y~_i / (1 + 2 lam a_i); x* = U x~. The distance is a
    certified lower bound, taken at the lower end of lam's bracket (||y - x(lam)|| grows with lam).

    Parameters
    ----------
    y : numpy.ndarray, shape (..., n)
        The points, relative to the ellipsoid's centre, finite.
    rotation : numpy.ndarray, shape (..., n, n)
        U, orthogonal.
    scales : numpy.ndarray, shape (..., n)
        The semi-axes s, finite and > 0.
    iterations : int
        Bisection steps, an int >= 0.

    Returns
    -------
    x : numpy.ndarray, shape (..., n)
        The projections x* (y for points inside).
    distance : numpy.ndarray, shape (...)
        Lower bounds on ||y - x*||_2 (0 for points inside).
    lam : numpy.ndarray, shape (...)
        The multiplier (the upper end of its bracket; 0 for points inside).
    """
    y = np.asarray(y, np.float64)
    u, s = np.asarray(rotation, np.float64), np.asarray(scales, np.float64)
    y_eig = _rotated(u, y)
    a = 1.0 / s**2
    lo, hi = eq6_multiplier(y_eig, s, iterations)
    inside = (a * y_eig * y_eig).sum(axis=-1) <= 1.0
    step_lo = y_eig * (2.0 * lo[..., None] * a) / (1.0 + 2.0 * lo[..., None] * a)  # y~ - x~(lo)
    dist = np.sqrt((step_lo * step_lo).sum(axis=-1))
    x_eig = y_eig / (1.0 + 2.0 * hi[..., None] * a)
    x_star = np.einsum("...ij,...j->...i", u, x_eig)
    return (np.where(inside[..., None], y, x_star), np.where(inside, 0.0, dist), np.where(inside, 0.0, hi))


def distance_to_ellipsoid(point: np.ndarray, center: np.ndarray, rotation: np.ndarray,
                          scales: np.ndarray) -> np.ndarray:
    """A lower bound on the l2 distance from a point to a rotated ellipsoid (RANCER Eq. 6); 0 if it is inside.

    Parameters
    ----------
    point, center : numpy.ndarray, shape (..., n)
        The points and the ellipsoid's centre, finite.
    rotation : numpy.ndarray, shape (..., n, n)
        U, orthogonal.
    scales : numpy.ndarray, shape (..., n)
        The semi-axes s, finite and > 0.

    Returns
    -------
    numpy.ndarray, shape (...)
        The distances.
    """
    y = np.asarray(point, np.float64) - np.asarray(center, np.float64)
    return project_onto_ellipsoid(y, rotation, scales)[1]


def largest_out_subset(center_q: np.ndarray, rotation_q: np.ndarray, scales_q: np.ndarray,
                       center_r: np.ndarray, scales_r: np.ndarray) -> np.ndarray:
    """LargestOutSubset(S_Q, S_R) for rotated ellipsoids (RANCER §3 with ANCER D.4): the radius of an l2 ball around
    r that misses S_Q and lies inside S_R, min(dist(r, S_Q) (1 - SHRINK_MARGIN), min_i s_R,i). The inner radius
    min_i s_i does not depend on S_R's rotation. 0 (abstain) when r lies in S_Q.

    Parameters
    ----------
    center_q, center_r : numpy.ndarray, shape (..., n)
        The centres q and r, finite.
    rotation_q : numpy.ndarray, shape (..., n, n)
        S_Q's rotation, orthogonal.
    scales_q, scales_r : numpy.ndarray, shape (..., n)
        The semi-axes, finite and > 0.

    Returns
    -------
    numpy.ndarray, shape (...)
        The radii.
    """
    dist = distance_to_ellipsoid(center_r, center_q, rotation_q, scales_q)
    return np.minimum(dist * (1.0 - SHRINK_MARGIN), geometry.inner_ball_radius(scales_r))
