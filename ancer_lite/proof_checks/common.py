"""Machinery shared by the ANCER, RANCER and UCAN checks (it checks no statement by itself).

- results: `CheckResult`, its constructors `at_most` / `at_least` / `close_to`, the tolerances, `check_stream` (a
  generator keyed by (seed, check id)) and `instance_count` (instance counts from the Monte Carlo budget);
- random instances: Haar rotations, covariances, points on / in l_p balls;
- base classifiers whose smoothed scores are exact (rectilinear "grid" classifiers and half-spaces, under
  Gaussian and axis-aligned uniform noise) and Lipschitz ratios of smoothed instances by finite differences
  (ANCER Prop. 2 and Prop. 6);
- the worst-margin machinery of Gaussian certificates (ANCER Cor. 1, RANCER Eq. 3, UCAN Thm. 3.2 for p = 2) and
  of uniform-noise certificates (ANCER Cor. 2, UCAN Thm. 3.2 for p = 1);
- Monte Carlo volumes (ANCER §5, UCAN Thm. C.2);
- SLSQP references for ellipsoid pairs and projections and the random region pairs they are run on (ANCER
  App. D, RANCER Eq. 5-6), independent of `geometry` and `rotated`.
"""
from __future__ import annotations

import math
import zlib
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np
from scipy.optimize import minimize
from scipy.special import ndtr, ndtri

__all__ = [
    "EXACT_TOL", "FD_TOL", "SOLVER_TOL", "LP_TOL", "QUAD_TOL", "CONTACT_TOL", "MC_Z", "CheckResult", "random_rotation",
    "random_covariance", "unit_sphere", "uniform_ball", "lp_norm", "GridClassifier", "random_grid_classifier",
    "grid_gaussian_scores", "grid_uniform_scores", "halfspace_gaussian_scores", "halfspace_uniform_scores",
    "top_two", "margin_of", "fd_gradient", "lipschitz_ratios", "SmoothedInstance", "gaussian_instances",
    "max_lipschitz_ratio", "sigma_norm", "gaussian_gap", "grid_margin_in_region", "halfspace_worst_margin",
    "ellipsoid_region_inv", "uniform_gap", "cross_polytope_region", "mc_volume", "ellipsoid_pair_value",
    "projection_distance", "random_region_pairs", "at_most", "at_least", "close_to", "check_stream", "instance_count",
    "finite_max", "probit_scores", "pairwise_differences", "gaussian_certificate_margins", "uniform_certificate_margins",
]


# --------------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------------


#: tolerance for quantities computed in closed form (float64 rounding, a few hundred ulps of O(1) values)
EXACT_TOL = 1e-9
#: tolerance for two-point Lipschitz ratios at step 1e-4 (rounding ~1e-12 / 1e-4, truncation ~1e-8)
FD_TOL = 1e-6
#: tolerance for SLSQP references (ftol 1e-15 on squared quantities; observed agreement ~1e-9)
SOLVER_TOL = 1e-6
#: tolerance for HiGHS linear-program references (primal/dual feasibility 1e-10)
LP_TOL = 1e-7
#: tolerance for adaptive-quadrature references (epsrel 1e-12; room for an integrable endpoint singularity, p < 1)
QUAD_TOL = 1e-8
#: a point on a region's boundary computed in float64 may evaluate to 1 + a few ulps: "outside" means > 1 + this
CONTACT_TOL = 1e-12
#: Monte Carlo z-score tolerance: |estimate - formula| <= 5 standard errors (two-sided p ~ 6e-7 per case)
MC_Z = 5.0


@dataclass(frozen=True)
class CheckResult:
    """One numerical check of notebook 01: PASS iff slack >= -tol.

    Parameters
    ----------
    id : str
        The check's id.
    measured : str
        What was measured.
    value : float
        The measured value.
    bound : float
        The bound (or reference) it is compared with.
    slack : float
        bound - value for an upper bound, value - bound for a lower bound, -|value - reference| for an equality.
    tol : float
        The tolerance.
    tol_reason : str
        Why that tolerance.
    passed : bool
        slack >= -tol.
    """
    id: str
    measured: str
    value: float
    bound: float
    slack: float
    tol: float
    tol_reason: str
    passed: bool

    def as_dict(self) -> dict:
        """The result's fields as a dict, with result "PASS" or "FAIL" added.

        Returns
        -------
        dict
        """
        d = asdict(self)
        d["result"] = "PASS" if self.passed else "FAIL"
        return d


def at_most(cid: str, measured: str, value: float, bound: float, tol: float, reason: str) -> CheckResult:
    """A check of value <= bound (slack = bound - value).

    Parameters
    ----------
    cid : str
        The check's id.
    measured : str
        What was measured.
    value : float
        The measured value.
    bound : float
        The upper bound.
    tol : float
        The tolerance.
    reason : str
        Why that tolerance.

    Returns
    -------
    CheckResult
    """
    slack = float(bound) - float(value)
    return CheckResult(cid, measured, float(value), float(bound), slack, tol, reason, bool(slack >= -tol))


def at_least(cid: str, measured: str, value: float, bound: float, tol: float, reason: str) -> CheckResult:
    """A check of value >= bound (slack = value - bound).

    Parameters
    ----------
    cid : str
        The check's id.
    measured : str
        What was measured.
    value : float
        The measured value.
    bound : float
        The lower bound.
    tol : float
        The tolerance.
    reason : str
        Why that tolerance.

    Returns
    -------
    CheckResult
    """
    slack = float(value) - float(bound)
    return CheckResult(cid, measured, float(value), float(bound), slack, tol, reason, bool(slack >= -tol))


def close_to(cid: str, measured: str, value: float, reference: float, tol: float, reason: str) -> CheckResult:
    """A check of value == reference within tol (slack = -|value - reference|).

    Parameters
    ----------
    cid : str
        The check's id.
    measured : str
        What was measured.
    value : float
        The measured value.
    reference : float
        The reference value.
    tol : float
        The tolerance.
    reason : str
        Why that tolerance.

    Returns
    -------
    CheckResult
    """
    slack = -abs(float(value) - float(reference))
    return CheckResult(cid, measured, float(value), float(reference), slack, tol, reason, bool(slack >= -tol))


def check_stream(seed: int, cid: str) -> np.random.Generator:
    """A generator keyed by (seed, check id), so that checks are independent of the order they run in.

    Parameters
    ----------
    seed : int
        The notebook's seed.
    cid : str
        The check's id (hashed by CRC-32).

    Returns
    -------
    numpy.random.Generator
    """
    return np.random.default_rng([int(seed), zlib.crc32(cid.encode())])


def instance_count(mc_samples: int, divisor: int, lo: int, hi: int) -> int:
    """An instance count derived from the Monte Carlo budget: mc_samples // divisor, clipped to [lo, hi].

    Parameters
    ----------
    mc_samples : int
        The Monte Carlo budget (`profiles.Profile.mc_samples`).
    divisor : int
        Samples per instance.
    lo, hi : int
        The clipping range.

    Returns
    -------
    int
    """
    return int(min(hi, max(lo, mc_samples // divisor)))


def finite_max(a: np.ndarray) -> float:
    """The largest value of `a`, NaN ignored; NaN when no value is finite.

    Parameters
    ----------
    a : numpy.ndarray, any shape
        The values.

    Returns
    -------
    float
    """
    a = np.asarray(a, np.float64)
    return float(np.nanmax(a)) if np.any(np.isfinite(a)) else float("nan")


# --------------------------------------------------------------------------------------------------
# random instances
# --------------------------------------------------------------------------------------------------


def random_rotation(n: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-random orthogonal matrix (QR of a Gaussian matrix with the sign fix).

    Parameters
    ----------
    n : int
        The dimension.
    rng : numpy.random.Generator
        The check's generator (`check_stream`).

    Returns
    -------
    numpy.ndarray, shape (n, n)
    """
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return q * np.sign(np.diag(r))


def random_covariance(n: int, rng: np.random.Generator, lo: float = 0.2, hi: float = 2.0) -> np.ndarray:
    """A random covariance U diag(s²) U^T with Haar U and log-uniform s in [lo, hi].

    Parameters
    ----------
    n : int
        The dimension.
    rng : numpy.random.Generator
        The check's generator (`check_stream`).
    lo, hi : float, default 0.2, 2.0
        The range of the scales s.

    Returns
    -------
    numpy.ndarray, shape (n, n)
    """
    u = random_rotation(n, rng)
    s = np.exp(rng.uniform(math.log(lo), math.log(hi), n))
    return (u * s**2) @ u.T


def unit_sphere(num: int, n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """Random points with ‖u‖_p = 1: generalized-Gaussian directions, normalized.

    Parameters
    ----------
    num : int
        Points.
    n : int
        The dimension.
    p : float
        The norm; np.inf allowed.
    rng : numpy.random.Generator
        The check's generator (`check_stream`).

    Returns
    -------
    numpy.ndarray, shape (num, n)
    """
    if np.isinf(p):
        u = rng.uniform(-1.0, 1.0, (num, n))
        return u / np.abs(u).max(axis=1, keepdims=True)
    g = rng.gamma(1.0 / p, size=(num, n)) ** (1.0 / p) * rng.choice([-1.0, 1.0], (num, n))
    return g / lp_norm(g, p)[:, None]


def uniform_ball(num: int, n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """Uniform points in the unit ℓp ball, p in {1, 2} (direction times U^(1/n)).

    Parameters
    ----------
    num : int
        Points.
    n : int
        The dimension.
    p : float
        1 or 2.
    rng : numpy.random.Generator
        The check's generator (`check_stream`).

    Returns
    -------
    numpy.ndarray, shape (num, n)
    """
    return unit_sphere(num, n, p, rng) * rng.uniform(size=(num, 1)) ** (1.0 / n)


def lp_norm(v: np.ndarray, p: float) -> np.ndarray:
    """‖v‖_p over the last axis.

    Parameters
    ----------
    v : numpy.ndarray, shape (..., n)
        The vectors.
    p : float
        The norm; np.inf allowed; p < 1 gives the quasi-norm (sum |v|^p)^(1/p).

    Returns
    -------
    numpy.ndarray, shape (...)
    """
    a = np.abs(np.asarray(v, np.float64))
    return a.max(axis=-1) if np.isinf(p) else (a**p).sum(axis=-1) ** (1.0 / p)


# --------------------------------------------------------------------------------------------------
# base classifiers with exact smoothed scores
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GridClassifier:
    """A random piecewise-constant classifier on the cells of a rectilinear grid in a frame V.

    The cuts are positions per axis in the frame V, i.e. in coordinates V^T z; the cells carry random labels in
    {0, ..., num_classes - 1}. Its smoothed scores are exact (`grid_gaussian_scores`, `grid_uniform_scores`).

    Parameters
    ----------
    cuts : tuple of numpy.ndarray
        Per axis k, the sorted cut positions, shape (c_k,).
    labels : numpy.ndarray of int, shape (c_1 + 1, ..., c_n + 1)
        Each cell's class.
    frame : numpy.ndarray, shape (n, n)
        The orthogonal frame V.
    num_classes : int
        The number of classes K.
    """
    cuts: tuple[np.ndarray, ...]
    labels: np.ndarray
    frame: np.ndarray
    num_classes: int

    @property
    def dim(self) -> int:
        """The input dimension n.

        Returns
        -------
        int
        """
        return len(self.cuts)


def random_grid_classifier(rng: np.random.Generator, n: int, num_classes: int = 3, cuts: int = 3,
                           span: float = 2.0, rotate: bool = True) -> GridClassifier:
    """A random `GridClassifier`: cuts uniform in [-span, span] per axis, i.i.d. uniform labels.

    Parameters
    ----------
    rng : numpy.random.Generator
        The check's generator (`check_stream`).
    n : int
        The dimension.
    num_classes : int, default 3
        The number of classes.
    cuts : int, default 3
        Cuts per axis.
    span : float, default 2.0
        The cuts' range.
    rotate : bool, default True
        A Haar-random frame; the identity otherwise.

    Returns
    -------
    GridClassifier
    """
    c = tuple(np.sort(rng.uniform(-span, span, cuts)) for _ in range(n))
    labels = rng.integers(0, num_classes, size=(cuts + 1,) * n)
    frame = random_rotation(n, rng) if rotate else np.eye(n)
    return GridClassifier(c, labels, frame, num_classes)


def _gauss_interval(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Φ(hi) - Φ(lo), accurate in both tails."""
    return np.where(lo > 0, ndtr(-lo) - ndtr(-hi), ndtr(hi) - ndtr(lo))


def _uniform_interval(y: np.ndarray, lam: float, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """P(y + lam * U[-1, 1] in [lo, hi)); lam = 0 gives the indicator of the cell containing y."""
    if lam == 0:
        return ((y >= lo) & (y < hi)).astype(np.float64)
    return np.clip(np.minimum(hi, y + lam) - np.maximum(lo, y - lam), 0.0, None) / (2.0 * lam)


def _grid_scores(clf: GridClassifier, x: np.ndarray, interval: Callable) -> np.ndarray:
    """sum over cells of class c of prod_k P(coordinate k in the cell's interval), shape (m, K)."""
    y = np.asarray(x, np.float64).reshape(-1, clf.dim) @ clf.frame   # rows of V^T x
    joint = np.ones((y.shape[0], 1))
    for k, cuts in enumerate(clf.cuts):
        edges = np.concatenate([[-np.inf], cuts, [np.inf]])
        pk = interval(k, y[:, k:k + 1], edges[None, :-1], edges[None, 1:])
        joint = (joint[:, :, None] * pk[:, None, :]).reshape(y.shape[0], -1)
    onehot = np.eye(clf.num_classes)[clf.labels.ravel()]
    return joint @ onehot


def grid_gaussian_scores(clf: GridClassifier, x: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Exact g^c(x) = P(f(x + ε) = c), ε ~ N(0, V diag(σ²) V^T) with V the grid's frame.

    Parameters
    ----------
    clf : GridClassifier
        The base classifier f, of dimension n and K classes.
    x : numpy.ndarray, shape (m, n) (or any shape of m·n values)
        The points.
    sigma : numpy.ndarray, shape (n,)
        The noise's scales along V's columns.

    Returns
    -------
    numpy.ndarray, shape (m, K)
    """
    s = np.asarray(sigma, np.float64)
    return _grid_scores(clf, x, lambda k, y, lo, hi: _gauss_interval((lo - y) / s[k], (hi - y) / s[k]))


def grid_uniform_scores(clf: GridClassifier, x: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Exact g^c(x) = P(f(x + Λ ε) = c), ε ~ U[-1, 1]^n, for axis-aligned grids only.

    Parameters
    ----------
    clf : GridClassifier
        The base classifier f, of dimension n and K classes; its frame must be the identity.
    x : numpy.ndarray, shape (m, n)
        The points.
    lam : numpy.ndarray, shape (n,)
        The half-widths λ; λ_k = 0 fixes coordinate k (no smoothing along it).

    Returns
    -------
    numpy.ndarray, shape (m, K)
    """
    if not np.allclose(clf.frame, np.eye(clf.dim)):
        raise ValueError("uniform smoothing scores need an axis-aligned grid (frame = I)")
    lam = np.asarray(lam, np.float64)
    return _grid_scores(clf, x, lambda k, y, lo, hi: _uniform_interval(y, float(lam[k]), lo, hi))


def halfspace_gaussian_scores(w: np.ndarray, b: float, x: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """[1 - g, g] with g = Φ((w.x + b) / sqrt(w^T Σ w)) for f = 1[w.z + b >= 0] under N(0, Σ) (ANCER Prop. 2's f*).

    Parameters
    ----------
    w : numpy.ndarray, shape (n,)
        The half-space's normal.
    b : float
        Its offset.
    x : numpy.ndarray, shape (..., n)
        The points.
    cov : numpy.ndarray, shape (n, n)
        The noise's covariance Σ.

    Returns
    -------
    numpy.ndarray, shape (..., 2)
    """
    z = (np.asarray(x, np.float64) @ w + b) / math.sqrt(float(w @ cov @ w))
    return np.stack([ndtr(-z), ndtr(z)], axis=-1)


def halfspace_uniform_scores(k: int, c: float, x: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """[1 - g, g] with g = clip((x_k - c + λ_k) / (2 λ_k), 0, 1) for f = 1[z_k >= c] under U[-λ, λ].

    Parameters
    ----------
    k : int
        The coordinate the half-space cuts.
    c : float
        The threshold.
    x : numpy.ndarray, shape (..., n)
        The points.
    lam : numpy.ndarray, shape (n,)
        The half-widths λ (λ_k > 0).

    Returns
    -------
    numpy.ndarray, shape (..., 2)
    """
    g = np.clip((np.asarray(x, np.float64)[..., k] - c + lam[k]) / (2.0 * lam[k]), 0.0, 1.0)
    return np.stack([1.0 - g, g], axis=-1)


def top_two(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The top class, its score and the runner-up's score, per row.

    Parameters
    ----------
    scores : numpy.ndarray, shape (..., K)
        Class scores, K >= 2.

    Returns
    -------
    ca : numpy.ndarray of int, shape (...)
        The top class c_A (the first on ties).
    pa : numpy.ndarray, shape (...)
        Its score p_A.
    pb : numpy.ndarray, shape (...)
        The runner-up's score p_B.
    """
    order = np.argsort(-scores, axis=-1, kind="stable")
    ca = order[..., 0]
    pa = np.take_along_axis(scores, ca[..., None], -1)[..., 0]
    pb = np.take_along_axis(scores, order[..., 1:2], -1)[..., 0]
    return ca, pa, pb


def margin_of(scores: np.ndarray, ca: np.ndarray | int) -> np.ndarray:
    """g_cA - max_{c != cA} g_c for each row: positive iff cA is still the strict top class.

    Parameters
    ----------
    scores : numpy.ndarray, shape (..., K)
        Class scores.
    ca : numpy.ndarray of int or int
        The class c_A, broadcast to shape (...).

    Returns
    -------
    numpy.ndarray, shape (...)
    """
    ca = np.broadcast_to(np.asarray(ca), scores.shape[:-1])
    top = np.take_along_axis(scores, ca[..., None], -1)[..., 0]
    others = np.where(np.eye(scores.shape[-1], dtype=bool)[ca], -np.inf, scores).max(axis=-1)
    return top - others


# --------------------------------------------------------------------------------------------------
# Lipschitz ratios by finite differences
# --------------------------------------------------------------------------------------------------


def fd_gradient(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of fn.

    Parameters
    ----------
    fn : callable
        (m, n) -> (m, q).
    x : numpy.ndarray, shape (m, n)
        The points.
    h : float, default 1e-6
        The step.

    Returns
    -------
    numpy.ndarray, shape (m, q, n)
    """
    n = x.shape[-1]
    steps = np.eye(n) * h
    plus = fn((x[:, None, :] + steps).reshape(-1, n)).reshape(x.shape[0], n, -1)
    minus = fn((x[:, None, :] - steps).reshape(-1, n)).reshape(x.shape[0], n, -1)
    return np.swapaxes((plus - minus) / (2.0 * h), 1, 2)


def lipschitz_ratios(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray, directions: np.ndarray,
                     norm: Callable[[np.ndarray], np.ndarray], steps: tuple[float, ...]) -> np.ndarray:
    """Two-point Lipschitz ratios |fn(x + s d) - fn(x - s d)| / norm(2 s d) (ANCER Prop. 2 and Prop. 6).

    Parameters
    ----------
    fn : callable
        (k, n) -> (k, q).
    x : numpy.ndarray, shape (m, n)
        The points.
    directions : numpy.ndarray, shape (m, D, n)
        Directions d per point.
    norm : callable
        (k, n) -> (k,), the norm of the steps.
    steps : tuple of float
        The steps s.

    Returns
    -------
    numpy.ndarray, shape (m, D, len(steps), q)
        NaN where fn is NaN or d = 0.
    """
    m, num_d, n = directions.shape
    out = []
    for s in steps:
        d = directions * s
        diff = fn((x[:, None, :] + d).reshape(-1, n)) - fn((x[:, None, :] - d).reshape(-1, n))
        den = norm((2.0 * d).reshape(-1, n))
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.abs(diff) / np.where(den > 0, den, np.nan)[:, None]
        out.append(r.reshape(m, num_d, -1))
    return np.stack(out, axis=2)


def probit_scores(scores: np.ndarray, clip: float = 1e-4) -> np.ndarray:
    """Φ^-1(g), NaN where g is within `clip` of 0 or 1 (there float64 cannot resolve a step of 1e-4).

    Parameters
    ----------
    scores : numpy.ndarray, any shape
        Scores g in [0, 1].
    clip : float, default 1e-4
        The margin from 0 and 1.

    Returns
    -------
    numpy.ndarray, shape of `scores`
    """
    return np.where((scores > clip) & (scores < 1.0 - clip), ndtri(np.clip(scores, clip, 1.0 - clip)), np.nan)


def pairwise_differences(scores: np.ndarray) -> np.ndarray:
    """g^a - g^b for all class pairs a < b.

    Parameters
    ----------
    scores : numpy.ndarray, shape (..., K)
        Class scores.

    Returns
    -------
    numpy.ndarray, shape (..., K (K - 1) / 2)
        In the order of `numpy.triu_indices(K, 1)`.
    """
    k = scores.shape[-1]
    ia, ib = np.triu_indices(k, 1)
    return scores[..., ia] - scores[..., ib]


@dataclass(frozen=True)
class SmoothedInstance:
    """A Gaussian-smoothed classifier with exact scores, probed for Lipschitz ratios (ANCER Prop. 2 and Prop. 6).

    Parameters
    ----------
    kind : str
        "grid" or "half-space".
    scores : callable
        x of shape (m, n) -> (g^c(x))_c of shape (m, K).
    cov : numpy.ndarray, shape (n, n)
        The matrix of its certificate norm ‖δ‖ = sqrt(δ^T cov^-1 δ) (Σ for one Gaussian, B for a mixture).
    points : numpy.ndarray, shape (m, n)
        The points where it is probed.
    """
    kind: str
    scores: Callable[[np.ndarray], np.ndarray]
    cov: np.ndarray
    points: np.ndarray


def gaussian_instances(rng: np.random.Generator, points: int) -> list[SmoothedInstance]:
    """Random Gaussian-smoothed instances for the Lipschitz checks (ANCER Prop. 2 and Prop. 6).

    Grid classifiers in rotated frames (n = 2, 3) and half-spaces with dense Σ (n = 2, 3, 5), the latter evaluated at
    points including exact boundary points (a quarter of them, where Prop. 6's bound is attained).

    Parameters
    ----------
    rng : numpy.random.Generator
        The check's generator (`check_stream`).
    points : int
        Points per instance.

    Returns
    -------
    list of SmoothedInstance
    """
    out = []
    for n, num in ((2, 4), (3, 3)):
        for _ in range(num):
            clf = random_grid_classifier(rng, n, cuts=3 if n == 2 else 2)
            sigma = np.exp(rng.uniform(math.log(0.2), math.log(1.5), n))
            cov = (clf.frame * sigma**2) @ clf.frame.T
            x = rng.uniform(-2.5, 2.5, (points, n)) @ clf.frame.T
            out.append(SmoothedInstance("grid", lambda z, c=clf, s=sigma: grid_gaussian_scores(c, z, s), cov, x))
    for n in (2, 3, 5):
        for _ in range(2):
            cov = random_covariance(n, rng)
            w = rng.normal(size=n)
            b = float(rng.normal())
            x = rng.normal(size=(points, n))
            x[: points // 4] -= ((x[: points // 4] @ w + b) / (w @ w))[:, None] * w   # on the boundary
            out.append(SmoothedInstance("half-space", lambda z, w=w, b=b, c=cov: halfspace_gaussian_scores(w, b, z, c),
                                        cov, x))
    return out


def _probe_directions(inst: SmoothedInstance, quantity: Callable[[np.ndarray], np.ndarray],
                      rng: np.random.Generator) -> np.ndarray:
    """Probe directions per point: Σ ∇h per quantity, the axes, Σ's eigenvectors and two random ones."""
    x = inst.points
    n = x.shape[1]
    grad = np.nan_to_num(fd_gradient(quantity, x))                  # (m, q, n)
    best = grad @ inst.cov                                             # Σ ∇h (Σ symmetric)
    _, vecs = np.linalg.eigh(inst.cov)
    fixed = np.concatenate([np.eye(n), vecs.T, rng.normal(size=(2, n))])
    d = np.concatenate([best, np.broadcast_to(fixed, (x.shape[0],) + fixed.shape)], axis=1)
    length = np.linalg.norm(d, axis=-1, keepdims=True)
    scale = math.sqrt(np.trace(inst.cov) / n)
    return np.where(length > 0, d / np.where(length > 0, length, 1.0) * scale, 0.0)


def max_lipschitz_ratio(instances: list[SmoothedInstance], quantity: Callable[[np.ndarray], np.ndarray],
                        norm: Callable[[np.ndarray, np.ndarray], np.ndarray], rng: np.random.Generator,
                        steps: tuple[float, ...] = (1e-4, 0.3)) -> dict[str, float]:
    """The largest two-point Lipschitz ratio of quantity(scores) in norm(δ, cov), per instance kind.

    The max is over instances, points, probe directions (the maximizer Σ ∇h of ∇h.δ over the certificate-norm ball
    for each quantity h, the coordinate axes, Σ's eigenvectors and two random ones, each of Euclidean length
    sqrt(trace(Σ) / n)) and steps.

    Parameters
    ----------
    instances : list of SmoothedInstance
        The instances (`gaussian_instances`).
    quantity : callable
        Scores (m, K) -> (m, q), e.g. `probit_scores` or `pairwise_differences`.
    norm : callable
        (δ of shape (k, n), cov of shape (n, n)) -> (k,), e.g. `sigma_norm`.
    rng : numpy.random.Generator
        The check's generator (`check_stream`).
    steps : tuple of float, default (1e-4, 0.3)
        The steps.

    Returns
    -------
    dict of str to float
        {kind: largest ratio}.
    """
    out: dict[str, float] = {}
    for inst in instances:
        fn = lambda z, i=inst: quantity(i.scores(z))  # noqa: E731
        d = _probe_directions(inst, fn, rng)
        r = lipschitz_ratios(fn, inst.points, d, lambda v, c=inst.cov: norm(v, c), steps)
        out[inst.kind] = max(out.get(inst.kind, -np.inf), finite_max(r))
    return out


def sigma_norm(delta: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """‖δ‖_{Σ,2} = sqrt(δ^T Σ^-1 δ), the norm of ANCER's ellipsoid certificates (§4.1).

    Parameters
    ----------
    delta : numpy.ndarray, shape (k, n)
        The vectors.
    cov : numpy.ndarray, shape (n, n)
        Σ.

    Returns
    -------
    numpy.ndarray, shape (k,)
    """
    return np.sqrt(np.einsum("...i,...i->...", delta, np.linalg.solve(cov, delta.T).T))


# --------------------------------------------------------------------------------------------------
# Gaussian certificates: ANCER Cor. 1, RANCER Eq. 3, UCAN Thm. 3.2 (p = 2)
# --------------------------------------------------------------------------------------------------


def gaussian_gap(pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """ANCER Corollary 1's gap ½ (Φ^-1(p_A) - Φ^-1(p_B)).

    Parameters
    ----------
    pa, pb : numpy.ndarray
        The top and runner-up scores, of one shape.

    Returns
    -------
    numpy.ndarray
    """
    return 0.5 * (ndtri(pa) - ndtri(pb))


def _disk(radial: int = 24, angular: int = 720) -> np.ndarray:
    """A polar grid of the closed unit disk in R^2 (boundary included), shape (radial * angular, 2)."""
    r = np.linspace(1.0 / radial, 1.0, radial)
    a = np.linspace(0.0, 2 * np.pi, angular, endpoint=False)
    return (r[:, None, None] * np.stack([np.cos(a), np.sin(a)], -1)[None]).reshape(-1, 2)


def _l1_disk(radial: int = 24, angular: int = 720) -> np.ndarray:
    """The same polar grid pushed onto the unit ℓ1 ball (vertices included)."""
    d = _disk(radial, angular)
    return d / np.maximum(np.abs(d).sum(axis=1, keepdims=True), 1e-300) * np.linalg.norm(d, axis=1, keepdims=True)


def grid_margin_in_region(scores: Callable[[np.ndarray], np.ndarray], x: np.ndarray,
                          region_points: np.ndarray) -> float:
    """The smallest relative margin of the top class over sampled points of a region.

    min over the sampled region points δ of g_cA(x + δ) - max_{c != cA} g_c(x + δ), relative to the same margin at x
    (1 = unchanged, 0 = a tie, < 0 = the prediction changed).

    Parameters
    ----------
    scores : callable
        Points (m, n) -> scores (m, K).
    x : numpy.ndarray, shape (n,)
        The centre.
    region_points : numpy.ndarray, shape (k, n)
        Offsets δ sampling the region.

    Returns
    -------
    float
    """
    ca, pa, pb = top_two(scores(x[None]))
    return float(margin_of(scores(x[None] + region_points), ca[0]).min() / (pa[0] - pb[0]))


def halfspace_worst_margin(w: np.ndarray, margin: float, region_inv: np.ndarray, radius: float) -> float:
    """The normalized exact worst case of w.(x + δ) + b over the region {δ^T M δ <= radius²}.

    1 - radius sqrt(w^T M^-1 w) / margin: >= 0 iff the region stays on the safe side.

    Parameters
    ----------
    w : numpy.ndarray, shape (n,)
        The half-space's normal.
    margin : float
        w.x + b at the centre (> 0).
    region_inv : numpy.ndarray, shape (n, n)
        M^-1.
    radius : float
        The certified radius.

    Returns
    -------
    float
    """
    return 1.0 - radius * math.sqrt(float(w @ region_inv @ w)) / margin


def gaussian_certificate_margins(rng: np.random.Generator, num: int, gap: Callable,
                                  region_inv: Callable[[np.ndarray, np.ndarray], np.ndarray],
                                  rotate: bool = True, offset: bool = False, lam: float = 1.0) -> tuple[float, float]:
    """Worst margins of a Gaussian certificate (ANCER Cor. 1, RANCER Eq. 3, UCAN Thm. 3.2 for p = 2).

    The certificate is {δ^T M δ <= (λ gap)²}, M^-1 = region_inv(U, σ), for the noise λ U diag(σ) ε + μ,
    ε ~ N(0, I) (U Haar-random if `rotate`, else I; a random mean offset μ if `offset`). Half-spaces give the exact
    normalized worst case 1 - r / r* (0 = tight), 2-D grid classifiers a densely sampled relative margin
    (`grid_margin_in_region`); grid points whose runner-up score underflows are skipped.

    Parameters
    ----------
    rng : numpy.random.Generator
        The check's generator (`check_stream`).
    num : int
        Instances (even ones are 2-D and include a grid classifier).
    gap : callable
        (p_A, p_B) -> the gap under test, e.g. `gaussian_gap`.
    region_inv : callable
        (U of shape (n, n), σ of shape (n,)) -> M^-1 of shape (n, n), e.g. `ellipsoid_region_inv`.
    rotate : bool, default True
        Random rotations U.
    offset : bool, default False
        Random mean offsets μ.
    lam : float, default 1.0
        The isotropic scale λ.

    Returns
    -------
    halfspace : float
        The smallest half-space margin (>= 0 when sound).
    grid : float
        The smallest grid margin (> 0 when sound).
    """
    halfspace, grid = np.inf, np.inf
    for i in range(num):
        n = 2 if i % 2 == 0 else int(rng.integers(3, 6))
        u = random_rotation(n, rng) if rotate else np.eye(n)
        sigma = np.exp(rng.uniform(math.log(0.2), math.log(2.0), n))
        cov = lam**2 * (u * sigma**2) @ u.T
        mu = rng.normal(size=n) * 0.5 if offset else np.zeros(n)
        w, x = rng.normal(size=n), rng.normal(size=n)
        m = float(rng.uniform(0.05, 4.0)) * math.sqrt(float(w @ cov @ w))     # p = Φ(m / ||Σ^½ w||) <= Φ(4)
        b = m - float(w @ (x + mu))
        p = halfspace_gaussian_scores(w, b, (x + mu)[None], cov)[0, 1]
        halfspace = min(halfspace, halfspace_worst_margin(w, m, region_inv(u, sigma), lam * float(gap(p, 1 - p))))
        if n == 2:
            clf = random_grid_classifier(rng, 2, cuts=3, rotate=rotate)
            sc = lambda z, c=clf, s=sigma * lam, mu=mu: grid_gaussian_scores(c, z + mu, s)  # noqa: E731
            found = _resolvable_point(rng, sc, clf.frame)
            if found is None:
                continue
            x, pa, pb = found
            radius = lam * float(gap(pa[0], pb[0]))
            chol = np.linalg.cholesky(region_inv(clf.frame, sigma))
            grid = min(grid, grid_margin_in_region(sc, x, radius * _disk() @ chol.T))
    return halfspace, grid


def _resolvable_point(rng: np.random.Generator, scores: Callable[[np.ndarray], np.ndarray], frame: np.ndarray,
                      floor: float = 1e-6, tries: int = 50) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A point of [-2, 2]^2 (grid frame) whose runner-up score exceeds `floor`, or None after `tries`."""
    for _ in range(tries):
        x = rng.uniform(-2.0, 2.0, 2) @ frame.T
        _, pa, pb = top_two(scores(x[None]))
        if pb[0] > floor:
            return x, pa, pb
    return None


def ellipsoid_region_inv(rotation: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """M^-1 = U diag(σ²) U^T: the certificate {δ^T U diag(σ^-2) U^T δ <= r²} of noise U diag(σ) ε.

    Parameters
    ----------
    rotation : numpy.ndarray, shape (n, n)
        U.
    sigma : numpy.ndarray, shape (n,)
        σ.

    Returns
    -------
    numpy.ndarray, shape (n, n)
    """
    return (rotation * sigma**2) @ rotation.T


# --------------------------------------------------------------------------------------------------
# uniform-noise certificates: ANCER Cor. 2, UCAN Thm. 3.2 (p = 1)
# --------------------------------------------------------------------------------------------------


def uniform_gap(pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """ANCER Corollary 2's gap p_A - p_B.

    Parameters
    ----------
    pa, pb : numpy.ndarray
        The top and runner-up scores, of one shape.

    Returns
    -------
    numpy.ndarray
    """
    return pa - pb


def cross_polytope_region(delta: np.ndarray, scale: np.ndarray, radius: float) -> np.ndarray:
    """Membership in ‖δ / scale‖_1 <= radius (ANCER Cor. 2 with scale = λ; UCAN Thm 3.2, p = 1, with scale = σ).

    Parameters
    ----------
    delta : numpy.ndarray, shape (..., n)
        The offsets.
    scale : numpy.ndarray, shape (n,)
        The scales.
    radius : float
        The radius (with a relative slack of 1e-12).

    Returns
    -------
    numpy.ndarray of bool, shape (...)
    """
    return np.abs(delta / scale).sum(axis=-1) <= radius * (1 + 1e-12)


def uniform_certificate_margins(rng: np.random.Generator, num: int, gap: Callable, region: Callable,
                                 lam_iso: float = 1.0) -> tuple[float, float]:
    """Worst margins of a uniform-noise certificate (ANCER Cor. 2, UCAN Thm. 3.2 for p = 1).

    The noise is λ_iso σ ⊙ U[-1, 1] (Λ = λ_iso σ), the region region(δ, σ, R) with R = λ_iso gap(p_A, p_B) (ANCER:
    λ_iso = 1, σ = λ). Half-spaces: the exact normalized worst case over candidate points; grids: the sampled
    smallest margin. Candidates: the cross-polytope's polar grid and vertices plus a box grid 4x wider (to expose
    unbounded regions).

    Parameters
    ----------
    rng : numpy.random.Generator
        The check's generator (`check_stream`).
    num : int
        Instances (2-D).
    gap : callable
        (p_A, p_B) -> the gap under test, e.g. `uniform_gap`.
    region : callable
        (δ of shape (k, 2), σ of shape (2,), R) -> membership of shape (k,), e.g. `cross_polytope_region`.
    lam_iso : float, default 1.0
        The isotropic scale.

    Returns
    -------
    halfspace : float
        The smallest half-space margin (>= 0 when sound).
    grid : float
        The smallest grid margin (> 0 when sound).
    """
    halfspace, grid = np.inf, np.inf
    box = np.stack(np.meshgrid(*(np.linspace(-4, 4, 121),) * 2), -1).reshape(-1, 2)
    for _ in range(num):
        sigma = np.exp(rng.uniform(math.log(0.2), math.log(1.5), 2))
        lam = lam_iso * sigma
        k, c = int(rng.integers(2)), float(rng.normal())
        x = rng.normal(size=2)
        x[k] = c + rng.uniform(0.05, 0.95) * lam[k]
        p = halfspace_uniform_scores(k, c, x[None], lam)[0, 1]
        radius = lam_iso * float(gap(p, 1 - p))
        cand = np.concatenate([radius * _l1_disk() * sigma, radius * box * sigma])
        cand = cand[region(cand, sigma, radius)]
        worst_z = (x[k] + cand[:, k]).min() if len(cand) else x[k]
        halfspace = min(halfspace, (worst_z - c) / (x[k] - c))
        clf = random_grid_classifier(rng, 2, cuts=3, rotate=False)
        sc = lambda z, c=clf, l=lam: grid_uniform_scores(c, z, l)  # noqa: E731
        x = rng.uniform(-2.0, 2.0, 2)
        _, pa, pb = top_two(sc(x[None]))
        radius = lam_iso * float(gap(pa[0], pb[0]))
        cand = np.concatenate([radius * _l1_disk() * sigma, radius * box * sigma])
        cand = cand[region(cand, sigma, radius)]
        grid = min(grid, grid_margin_in_region(sc, x, cand) if len(cand) else np.inf)
    return halfspace, grid


# --------------------------------------------------------------------------------------------------
# Monte Carlo volumes: ANCER §5, UCAN Thm. C.2
# --------------------------------------------------------------------------------------------------


def mc_volume(member: Callable[[np.ndarray], np.ndarray], half_widths: np.ndarray, num: int,
              rng: np.random.Generator, center: np.ndarray | None = None) -> tuple[float, float]:
    """Monte Carlo volume of a set inside the box center ± half_widths (ANCER §5, UCAN Thm. C.2).

    Parameters
    ----------
    member : callable
        Points (num, n) -> membership (num,) of bool.
    half_widths : numpy.ndarray, shape (n,)
        The box's half-widths.
    num : int
        Samples.
    rng : numpy.random.Generator
        The check's generator (`check_stream`).
    center : numpy.ndarray, shape (n,), optional
        The box's centre (default the origin).

    Returns
    -------
    estimate : float
    standard_error : float
        From the binomial variance, at least that of one hit in `num`.
    """
    hw = np.asarray(half_widths, np.float64)
    c = np.zeros_like(hw) if center is None else center
    pts = c + rng.uniform(-1.0, 1.0, (num, hw.size)) * hw
    frac = float(member(pts).mean())
    box = float(np.prod(2.0 * hw))
    return frac * box, box * math.sqrt(max(frac * (1 - frac), 1.0 / num) / num)


# --------------------------------------------------------------------------------------------------
# references for ANCER App. D and RANCER (independent of geometry.py and rotated.py)
# --------------------------------------------------------------------------------------------------


def ellipsoid_pair_value(center_a: np.ndarray, q_a: np.ndarray, center_b: np.ndarray, q_b: np.ndarray) -> float:
    """v* = min_x max((x-a)^T A (x-a), (x-b)^T B (x-b)) by SLSQP on (x, τ), a convex QCQP (ANCER App. D reference).

    The ellipsoids intersect iff v* <= 1. Several starts; the best feasible value is returned (an upper bound on v*).
    Independent of `geometry`.

    Parameters
    ----------
    center_a : numpy.ndarray, shape (n,)
        a.
    q_a : numpy.ndarray, shape (n, n)
        A, positive definite.
    center_b : numpy.ndarray, shape (n,)
        b.
    q_b : numpy.ndarray, shape (n, n)
        B, positive definite.

    Returns
    -------
    float
    """
    def qa(x):
        d = x - center_a
        return float(d @ q_a @ d)

    def qb(x):
        d = x - center_b
        return float(d @ q_b @ d)

    cons = [{"type": "ineq", "fun": lambda z: z[-1] - qa(z[:-1]),
             "jac": lambda z: np.append(-2 * q_a @ (z[:-1] - center_a), 1.0)},
            {"type": "ineq", "fun": lambda z: z[-1] - qb(z[:-1]),
             "jac": lambda z: np.append(-2 * q_b @ (z[:-1] - center_b), 1.0)}]
    best = np.inf
    for t in (0.5, 0.25, 0.75):
        x0 = (1 - t) * center_a + t * center_b
        res = minimize(lambda z: z[-1], np.append(x0, max(qa(x0), qb(x0))), jac=lambda z: np.eye(z.size)[-1],
                       constraints=cons, method="SLSQP", options={"ftol": 1e-15, "maxiter": 1000})
        best = min(best, max(qa(res.x[:-1]), qb(res.x[:-1])))
    return best


def projection_distance(y: np.ndarray, q: np.ndarray) -> float:
    """min ‖x - y‖_2 s.t. x^T Q x <= 1 by SLSQP, from the radial projection of y (ANCER App. D, RANCER reference).

    Parameters
    ----------
    y : numpy.ndarray, shape (n,)
        The point.
    q : numpy.ndarray, shape (n, n)
        Q, positive definite.

    Returns
    -------
    float
        0 inside the ellipsoid.
    """
    if float(y @ q @ y) <= 1.0:
        return 0.0
    x0 = y / math.sqrt(float(y @ q @ y))
    res = minimize(lambda x: float((x - y) @ (x - y)), x0, jac=lambda x: 2 * (x - y), method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda x: 1.0 - float(x @ q @ x), "jac": lambda x: -2 * q @ x}],
                   options={"ftol": 1e-15, "maxiter": 1000})
    x = res.x / max(1.0, math.sqrt(float(res.x @ q @ res.x)))            # exactly feasible
    return float(min(np.linalg.norm(x - y), np.linalg.norm(x0 - y)))


def random_region_pairs(rng: np.random.Generator, num: int, rotate: bool = False) -> list[tuple]:
    """Random pairs of ellipsoids (ANCER App. D, RANCER Eq. 5-6), both intersecting and disjoint pairs.

    n = 2..4, semi-axes log-uniform in [0.2, 2] and centre distances spread so that both intersecting and disjoint
    pairs occur.

    Parameters
    ----------
    rng : numpy.random.Generator
        The check's generator (`check_stream`).
    num : int
        Pairs.
    rotate : bool, default False
        Haar-random rotations U; the identity otherwise.

    Returns
    -------
    list of tuple
        (a, U_a, s_a, b, U_b, s_b): centres of shape (n,), rotations (n, n), semi-axes (n,).
    """
    out = []
    for _ in range(num):
        n = int(rng.integers(2, 5))
        sa, sb = np.exp(rng.uniform(math.log(0.2), math.log(2.0), (2, n)))
        a = rng.normal(size=n)
        direction = rng.normal(size=n)
        b = a + direction / np.linalg.norm(direction) * rng.uniform(0.1, 1.6) * (sa.max() + sb.max())
        ua, ub = (random_rotation(n, rng), random_rotation(n, rng)) if rotate else (np.eye(n), np.eye(n))
        out.append((a, ua, sa, b, ub, sb))
    return out
