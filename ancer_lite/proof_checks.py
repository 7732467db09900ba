"""Falsifiable numerical checks of the theory behind ANCER, RANCER and UCAN (notebook 01).

Every check function takes `mc_samples` (the Monte Carlo budget, from `profiles.Profile.mc_samples`) and
`seed`, draws its own random instances from a generator keyed by (seed, check id) so that results do not
depend on the order in which checks run, and returns a `CheckResult`: what was measured, the value, the
bound it is compared with, the slack (bound - value for an upper bound, value - bound for a lower bound,
-|value - reference| for an equality), the tolerance and why, and PASS/FAIL (PASS iff slack >= -tol).

Each check also takes one keyword argument, `formula`, the formula under test, defaulting to the correct
(or corrected) one. Passing a paper's printed formula, or a deliberately wrong one, must make the check
FAIL: `TYPO_DEMOS` lists the seeds' typos found this way and `tests/test_proof_checks.py` injects wrong
formulas. Base classifiers are chosen so that the smoothed classifier is known in closed form:

- half-spaces f(z) = 1[w.z + b >= 0]: under N(0, Σ), g = Φ((w.x + b) / ||Σ^½ w||) (the extremal f* of
  Prop. 2's proof); under U[-λ, λ] with w = e_k, g = clip((x_k - c + λ_k) / (2 λ_k), 0, 1);
- random rectilinear "grid" classifiers (each cell of a random grid, in a possibly rotated frame V, gets
  a random class): g^c = sum over cells of class c of a product of 1-D interval probabilities, exact for
  N(0, V diag(σ²) V^T) and for axis-aligned U[-λ, λ].

References for App. D and RANCER are independent of `geometry` and `rotated`: SLSQP for the ellipsoid
problems (convex QCQPs), HiGHS linear programs for the cross-polytope ones.
"""
from __future__ import annotations

import math
import zlib
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np
import pandas as pd
from scipy.integrate import quad
from scipy.optimize import linprog, minimize
from scipy.special import gammaln, ndtr, ndtri

from . import geometry, regions, rotated

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
#: a point on a region's boundary computed in float64 may evaluate to 1 + a few ulps: "outside" means > 1 + this
CONTACT_TOL = 1e-12
#: Monte Carlo z-score tolerance: |estimate - formula| <= 5 standard errors (two-sided p ~ 6e-7 per case)
MC_Z = 5.0


@dataclass(frozen=True)
class CheckResult:
    """One numerical check: PASS iff slack >= -tol."""
    id: str
    measured: str
    value: float
    bound: float
    slack: float
    tol: float
    tol_reason: str
    passed: bool

    def as_dict(self) -> dict:
        d = asdict(self)
        d["result"] = "PASS" if self.passed else "FAIL"
        return d


def _upper(cid: str, measured: str, value: float, bound: float, tol: float, reason: str) -> CheckResult:
    """A check of value <= bound (slack = bound - value)."""
    slack = float(bound) - float(value)
    return CheckResult(cid, measured, float(value), float(bound), slack, tol, reason, bool(slack >= -tol))


def _lower(cid: str, measured: str, value: float, bound: float, tol: float, reason: str) -> CheckResult:
    """A check of value >= bound (slack = value - bound)."""
    slack = float(value) - float(bound)
    return CheckResult(cid, measured, float(value), float(bound), slack, tol, reason, bool(slack >= -tol))


def _close(cid: str, measured: str, value: float, reference: float, tol: float, reason: str) -> CheckResult:
    """A check of value == reference within tol (slack = -|value - reference|)."""
    slack = -abs(float(value) - float(reference))
    return CheckResult(cid, measured, float(value), float(reference), slack, tol, reason, bool(slack >= -tol))


def _rng(seed: int, cid: str) -> np.random.Generator:
    """A generator keyed by (seed, check id): checks are independent of the order they run in."""
    return np.random.default_rng([int(seed), zlib.crc32(cid.encode())])


def _size(mc_samples: int, divisor: int, lo: int, hi: int) -> int:
    """An instance count derived from the Monte Carlo budget, clipped to [lo, hi]."""
    return int(min(hi, max(lo, mc_samples // divisor)))


def _nanmax(a: np.ndarray) -> float:
    a = np.asarray(a, np.float64)
    return float(np.nanmax(a)) if np.any(np.isfinite(a)) else float("nan")


# --------------------------------------------------------------------------------------------------
# random instances
# --------------------------------------------------------------------------------------------------


def random_rotation(n: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-random orthogonal matrix (QR of a Gaussian matrix with the sign fix)."""
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return q * np.sign(np.diag(r))


def random_covariance(n: int, rng: np.random.Generator, lo: float = 0.2, hi: float = 2.0) -> np.ndarray:
    """U diag(s^2) U^T with Haar U and log-uniform s in [lo, hi]."""
    u = random_rotation(n, rng)
    s = np.exp(rng.uniform(math.log(lo), math.log(hi), n))
    return (u * s**2) @ u.T


def unit_sphere(num: int, n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """Random points with ||u||_p = 1 (p may be np.inf): generalized-Gaussian directions, normalized."""
    if np.isinf(p):
        u = rng.uniform(-1.0, 1.0, (num, n))
        return u / np.abs(u).max(axis=1, keepdims=True)
    g = rng.gamma(1.0 / p, size=(num, n)) ** (1.0 / p) * rng.choice([-1.0, 1.0], (num, n))
    return g / lp_norm(g, p)[:, None]


def uniform_ball(num: int, n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """Uniform points in the unit l_p ball, p in {1, 2} (direction times U^(1/n))."""
    return unit_sphere(num, n, p, rng) * rng.uniform(size=(num, 1)) ** (1.0 / n)


def lp_norm(v: np.ndarray, p: float) -> np.ndarray:
    """||v||_p over the last axis (p = np.inf allowed; p < 1 gives the quasi-norm (sum |v|^p)^(1/p))."""
    a = np.abs(np.asarray(v, np.float64))
    return a.max(axis=-1) if np.isinf(p) else (a**p).sum(axis=-1) ** (1.0 / p)


# --------------------------------------------------------------------------------------------------
# base classifiers with exact smoothed scores
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GridClassifier:
    """A random piecewise-constant classifier: the cells of a rectilinear grid (cut positions per axis, in
    the frame V, i.e. in coordinates V^T z) carry random labels in {0, ..., num_classes - 1}."""
    cuts: tuple[np.ndarray, ...]
    labels: np.ndarray
    frame: np.ndarray
    num_classes: int

    @property
    def dim(self) -> int:
        return len(self.cuts)


def random_grid_classifier(rng: np.random.Generator, n: int, num_classes: int = 3, cuts: int = 3,
                           span: float = 2.0, rotate: bool = True) -> GridClassifier:
    """Cuts uniform in [-span, span] per axis, i.i.d. uniform labels, a Haar-random frame if `rotate`."""
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
    """Exact g^c(x) = P(f(x + eps) = c), eps ~ N(0, V diag(sigma^2) V^T) with V the grid's frame."""
    s = np.asarray(sigma, np.float64)
    return _grid_scores(clf, x, lambda k, y, lo, hi: _gauss_interval((lo - y) / s[k], (hi - y) / s[k]))


def grid_uniform_scores(clf: GridClassifier, x: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Exact g^c(x) = P(f(x + Λ eps) = c), eps ~ U[-1, 1]^n (axis-aligned grids only); lam_k = 0 fixes
    coordinate k (no smoothing along it)."""
    if not np.allclose(clf.frame, np.eye(clf.dim)):
        raise ValueError("uniform smoothing scores need an axis-aligned grid (frame = I)")
    lam = np.asarray(lam, np.float64)
    return _grid_scores(clf, x, lambda k, y, lo, hi: _uniform_interval(y, float(lam[k]), lo, hi))


def halfspace_gaussian_scores(w: np.ndarray, b: float, x: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """[1 - g, g] with g = Φ((w.x + b) / sqrt(w^T Σ w)) for f = 1[w.z + b >= 0] under N(0, Σ)."""
    z = (np.asarray(x, np.float64) @ w + b) / math.sqrt(float(w @ cov @ w))
    return np.stack([ndtr(-z), ndtr(z)], axis=-1)


def halfspace_uniform_scores(k: int, c: float, x: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """[1 - g, g] with g = clip((x_k - c + λ_k) / (2 λ_k), 0, 1) for f = 1[z_k >= c] under U[-λ, λ]."""
    g = np.clip((np.asarray(x, np.float64)[..., k] - c + lam[k]) / (2.0 * lam[k]), 0.0, 1.0)
    return np.stack([1.0 - g, g], axis=-1)


def top_two(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(c_A, p_A, p_B): the top class, its score and the runner-up's score, per row."""
    order = np.argsort(-scores, axis=-1, kind="stable")
    ca = order[..., 0]
    pa = np.take_along_axis(scores, ca[..., None], -1)[..., 0]
    pb = np.take_along_axis(scores, order[..., 1:2], -1)[..., 0]
    return ca, pa, pb


def margin_of(scores: np.ndarray, ca: np.ndarray | int) -> np.ndarray:
    """g_cA - max_{c != cA} g_c for each row (positive iff cA is still the strict top class)."""
    ca = np.broadcast_to(np.asarray(ca), scores.shape[:-1])
    top = np.take_along_axis(scores, ca[..., None], -1)[..., 0]
    others = np.where(np.eye(scores.shape[-1], dtype=bool)[ca], -np.inf, scores).max(axis=-1)
    return top - others


# --------------------------------------------------------------------------------------------------
# Lipschitz ratios by finite differences
# --------------------------------------------------------------------------------------------------


def fd_gradient(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of fn: (m, n) -> (m, q), returned as (m, q, n)."""
    n = x.shape[-1]
    steps = np.eye(n) * h
    plus = fn((x[:, None, :] + steps).reshape(-1, n)).reshape(x.shape[0], n, -1)
    minus = fn((x[:, None, :] - steps).reshape(-1, n)).reshape(x.shape[0], n, -1)
    return np.swapaxes((plus - minus) / (2.0 * h), 1, 2)


def lipschitz_ratios(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray, directions: np.ndarray,
                     norm: Callable[[np.ndarray], np.ndarray], steps: tuple[float, ...]) -> np.ndarray:
    """Two-point Lipschitz ratios |fn(x + s d) - fn(x - s d)| / norm(2 s d) for points x (m, n), directions
    (m, D, n) and each step s: array (m, D, len(steps), q); NaN where fn is NaN or d = 0."""
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


def _probit(scores: np.ndarray, clip: float = 1e-4) -> np.ndarray:
    """Φ^-1(g), NaN where g is within `clip` of 0 or 1 (there float64 cannot resolve a step of 1e-4)."""
    return np.where((scores > clip) & (scores < 1.0 - clip), ndtri(np.clip(scores, clip, 1.0 - clip)), np.nan)


def _pairwise_differences(scores: np.ndarray) -> np.ndarray:
    """g^a - g^b for all class pairs a < b."""
    k = scores.shape[-1]
    ia, ib = np.triu_indices(k, 1)
    return scores[..., ia] - scores[..., ib]


@dataclass(frozen=True)
class SmoothedInstance:
    """A Gaussian-smoothed classifier: its exact scores x -> (g^c(x))_c, the matrix `cov` of its certificate norm
    ||δ|| = sqrt(δ^T cov^-1 δ) (Σ for one Gaussian, B for a mixture) and the points where it is probed."""
    kind: str
    scores: Callable[[np.ndarray], np.ndarray]
    cov: np.ndarray
    points: np.ndarray


def gaussian_instances(rng: np.random.Generator, points: int) -> list[SmoothedInstance]:
    """Random grid classifiers in rotated frames (n = 2, 3) and half-spaces with dense Σ (n = 2, 3, 5),
    the latter evaluated at points including exact boundary points (where Prop. 6's bound is attained)."""
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
    """Directions to probe at each point: the maximizer Σ ∇h of ∇h.δ over the certificate-norm ball for each
    quantity h (from a finite-difference gradient), the coordinate axes, Σ's eigenvectors and two random
    ones; each scaled to Euclidean length sqrt(trace(Σ) / n)."""
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
    """max over instances, points, probe directions and steps of the two-point Lipschitz ratio of
    quantity(scores) in norm(δ, cov), per instance kind."""
    out: dict[str, float] = {}
    for inst in instances:
        fn = lambda z, i=inst: quantity(i.scores(z))  # noqa: E731
        d = _probe_directions(inst, fn, rng)
        r = lipschitz_ratios(fn, inst.points, d, lambda v, c=inst.cov: norm(v, c), steps)
        out[inst.kind] = max(out.get(inst.kind, -np.inf), _nanmax(r))
    return out


def sigma_norm(delta: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """||δ||_{Σ,2} = sqrt(δ^T Σ^-1 δ), the norm of ANCER's ellipsoid certificates (§4.1)."""
    return np.sqrt(np.einsum("...i,...i->...", delta, np.linalg.solve(cov, delta.T).T))


# --------------------------------------------------------------------------------------------------
# ANCER §4: Proposition 1, Theorem 1
# --------------------------------------------------------------------------------------------------

NORM_P = {"l1": 1.0, "l2": 2.0, "linf": np.inf}
DUAL = {"l1": "linf", "l2": "l2", "linf": "l1"}


def dual_norm_name(name: str) -> str:
    """The dual of l1 is l_inf, of l2 is l2, of l_inf is l1 (Hölder)."""
    return DUAL[name]


def _dual_maximizer(grad: np.ndarray, name: str) -> np.ndarray:
    """A unit-||.||_name vector d maximizing grad.d (so grad.d = ||grad||_dual); 0 where grad = 0."""
    if name == "l2":
        length = np.linalg.norm(grad, axis=-1, keepdims=True)
        return grad / np.where(length > 0, length, 1.0)
    if name == "linf":
        return np.sign(grad)
    k = np.abs(grad).argmax(axis=-1)
    return np.eye(grad.shape[-1])[k] * np.sign(np.take_along_axis(grad, k[..., None], -1))


def check_ancer_prop1(mc_samples: int, seed: int = 0, *,
                      formula: Callable[[str], str] = dual_norm_name) -> CheckResult:
    """ANCER Prop. 1: sup ||∇g||_* <= L implies |g(x) - g(y)| <= L ||x - y|| (||.|| the dual of ||.||_*).

    g = v^T tanh(W x + b) has ∇g = W^T (v ⊙ sech^2) so sup ||∇g||_* <= L = sum_j |v_j| ||W_j||_*, with
    ||.||_* = formula(name). One-unit nets attain L at w.x + b = 0 along the dual maximizer."""
    cid = "ANCER Prop. 1"
    rng = _rng(seed, cid)
    points = _size(mc_samples, 200, 50, 4000)
    worst = -np.inf
    for name, p in NORM_P.items():
        dual_p = NORM_P[formula(name)]
        for units in (1, 1, 4, 16):
            n = int(rng.integers(2, 6))
            w, b, v = rng.normal(size=(units, n)), rng.normal(size=units), rng.normal(size=units)
            bound = float((np.abs(v) * lp_norm(w, dual_p)).sum())
            g = lambda z: (np.tanh(z @ w.T + b) @ v)[:, None]  # noqa: E731
            x = rng.normal(size=(points, n))
            x[: points // 2] -= ((x[: points // 2] @ w[0] + b[0]) / (w[0] @ w[0]))[:, None] * w[0]
            grad = fd_gradient(g, x)[:, 0, :]
            dirs = np.concatenate([_dual_maximizer(grad, name)[:, None, :], rng.normal(size=(points, 2, n))], 1)
            r = lipschitz_ratios(g, x, dirs, lambda d: lp_norm(d, p), (1e-4, 0.5))
            worst = max(worst, _nanmax(r) / bound)
    return _upper(cid, "max over tanh nets, l1/l2/linf, points, directions of |g(x)-g(y)| / (L ||x-y||)",
                  worst, 1.0, FD_TOL, "central differences at step 1e-4 (rounding ~1e-12, truncation ~1e-8)")


def theorem1_radius(gap: np.ndarray, lipschitz: float) -> np.ndarray:
    """Theorem 1's certified radius (g_cA - max_{c != cA} g_c) / (2 L)."""
    return gap / (2.0 * lipschitz)


def check_ancer_theorem1(mc_samples: int, seed: int = 0, *,
                         formula: Callable[[np.ndarray, float], np.ndarray] = theorem1_radius) -> CheckResult:
    """ANCER Thm. 1: if every g^i is L-Lipschitz under ||.||_*, argmax is constant on ||δ|| <= gap / (2L).

    Linear scores g^c(x) = C_c.x + b_c have L = max_c ||C_c||_* and the exact worst case over the ball of
    radius ρ is min_c [(g_A - g_c)(x) - ρ ||C_A - C_c||_*]; it is >= 0 and attains 0 when C_B = -C_A."""
    cid = "ANCER Thm. 1"
    rng = _rng(seed, cid)
    num = _size(mc_samples, 200, 50, 4000)
    worst = np.inf
    for name in NORM_P:
        dual_p = NORM_P[DUAL[name]]
        for antipodal in (False, True):
            k, n = 4, int(rng.integers(2, 6))
            c = rng.normal(size=(num, k, n))
            if antipodal:
                c[:, 1] = -c[:, 0]
            bias = rng.normal(size=(num, k))
            x = rng.normal(size=(num, n))
            scores = np.einsum("mkn,mn->mk", c, x) + bias
            ca, pa, pb = top_two(scores)
            lip = lp_norm(c, dual_p).max(axis=1)
            rho = formula(pa - pb, lip)
            ca_row = np.take_along_axis(c, ca[:, None, None], 1)
            worst_case = (pa[:, None] - scores) - rho[:, None] * lp_norm(ca_row - c, dual_p)
            worst_case[np.arange(num), ca] = np.inf
            worst = min(worst, float((worst_case.min(axis=1) / (pa - pb)).min()))
    return _lower(cid, "min over linear K-class scores (l1/l2/linf) of the exact worst-case margin / gap "
                  "on the certified ball", worst, 0.0, EXACT_TOL, "closed form, float64 rounding")


# --------------------------------------------------------------------------------------------------
# ANCER §4.1: Proposition 2, Corollary 1 (and RANCER Eq. 3 / UCAN Thm 3.2 for Gaussians)
# --------------------------------------------------------------------------------------------------


def check_ancer_prop2(mc_samples: int, seed: int = 0, *,
                      formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = sigma_norm) -> CheckResult:
    """ANCER Prop. 2: Φ^-1(g_Σ) is 1-Lipschitz, |Φ^-1 g(x) - Φ^-1 g(y)| <= ||x - y||_{Σ,2}, measured by
    two-point ratios in the norm `formula(δ, Σ)` on random grid classifiers and half-spaces."""
    cid = "ANCER Prop. 2"
    rng = _rng(seed, cid)
    ratio = max_lipschitz_ratio(gaussian_instances(rng, _size(mc_samples, 1000, 30, 2000)), _probit, formula, rng)
    return _upper(cid, f"max ratio |Φ^-1 g(x) - Φ^-1 g(y)| / ||x - y||_Σ,2 (grids {ratio['grid']:.4f}, "
                  f"half-spaces {ratio['half-space']:.6f})", max(ratio.values()), 1.0, FD_TOL,
                  "two-point ratios of closed forms; Φ^-1 only where 1e-4 < g < 1 - 1e-4")


def check_ancer_prop2_attained(mc_samples: int, seed: int = 0, *,
                               formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = sigma_norm) -> CheckResult:
    """ANCER Prop. 2 is tight: for the half-space f* of its proof Φ^-1(g) = (w.x + b) / ||Σ^½ w|| is linear
    with ratio exactly 1 along Σ w."""
    cid = "ANCER Prop. 2 (f* attains L = 1)"
    rng = _rng(seed, cid)
    halfspaces = [i for i in gaussian_instances(rng, _size(mc_samples, 1000, 30, 2000)) if i.kind == "half-space"]
    ratio = max_lipschitz_ratio(halfspaces, _probit, formula, rng)["half-space"]
    return _close(cid, "max ratio for half-spaces f* = 1[w.z + b >= 0]", ratio, 1.0, FD_TOL,
                  "linear Φ^-1∘g: rounding only")


def gaussian_gap(pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """Corollary 1's gap ½ (Φ^-1(p_A) - Φ^-1(p_B))."""
    return 0.5 * (ndtri(pa) - ndtri(pb))


def _disk(radial: int = 24, angular: int = 720) -> np.ndarray:
    """A polar grid of the closed unit disk in R^2 (boundary included), shape (radial * angular, 2)."""
    r = np.linspace(1.0 / radial, 1.0, radial)
    a = np.linspace(0.0, 2 * np.pi, angular, endpoint=False)
    return (r[:, None, None] * np.stack([np.cos(a), np.sin(a)], -1)[None]).reshape(-1, 2)


def _l1_disk(radial: int = 24, angular: int = 720) -> np.ndarray:
    """The same polar grid pushed onto the unit l1 ball (vertices included)."""
    d = _disk(radial, angular)
    return d / np.maximum(np.abs(d).sum(axis=1, keepdims=True), 1e-300) * np.linalg.norm(d, axis=1, keepdims=True)


def grid_margin_in_region(scores: Callable[[np.ndarray], np.ndarray], x: np.ndarray,
                          region_points: np.ndarray) -> float:
    """min over the sampled region points δ of g_cA(x + δ) - max_{c != cA} g_c(x + δ), relative to the same
    margin at x (1 = unchanged, 0 = a tie, < 0 = the prediction changed)."""
    ca, pa, pb = top_two(scores(x[None]))
    return float(margin_of(scores(x[None] + region_points), ca[0]).min() / (pa[0] - pb[0]))


def halfspace_worst_margin(w: np.ndarray, margin: float, region_inv: np.ndarray, radius: float) -> float:
    """1 - radius * sqrt(w^T M^-1 w) / margin: the normalized exact worst case of w.(x + δ) + b over the region
    {δ^T M δ <= radius^2} (region_inv = M^-1); >= 0 iff the region stays on the safe side."""
    return 1.0 - radius * math.sqrt(float(w @ region_inv @ w)) / margin


def _gaussian_certificate_margins(rng: np.random.Generator, num: int, gap: Callable,
                                  region_inv: Callable[[np.ndarray, np.ndarray], np.ndarray],
                                  rotate: bool = True, offset: bool = False, lam: float = 1.0) -> tuple[float, float]:
    """Worst margins of a Gaussian certificate {δ^T M δ <= (λ gap)^2}, M^-1 = region_inv(U, σ), for the noise
    λ U diag(σ) ε + μ, ε ~ N(0, I) (U Haar-random if `rotate`, else I; a random mean offset μ if `offset`):
    exact for half-spaces (normalized 1 - r / r*, 0 = tight) and sampled densely for 2-D grid classifiers
    (relative margin, see grid_margin_in_region)."""
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
    """A point x of [-2, 2]^2 (in the grid's frame) whose runner-up score p_B exceeds `floor` (None if `tries`
    draws miss): where p_B underflows to 0 in float64, Φ^-1(p_B) = -inf and the radius would be an artefact."""
    for _ in range(tries):
        x = rng.uniform(-2.0, 2.0, 2) @ frame.T
        _, pa, pb = top_two(scores(x[None]))
        if pb[0] > floor:
            return x, pa, pb
    return None


def ellipsoid_region_inv(rotation: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """M^-1 = U diag(σ^2) U^T: the certificate {δ^T U diag(σ^-2) U^T δ <= r^2} of noise U diag(σ) ε."""
    return (rotation * sigma**2) @ rotation.T


def check_ancer_cor1(mc_samples: int, seed: int = 0, *,
                     formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = gaussian_gap) -> CheckResult:
    """ANCER Cor. 1: argmax g_Σ is constant on ||δ||_{Σ,2} <= ½ (Φ^-1(p_A) - Φ^-1(p_B)) (tight for half-spaces)."""
    cid = "ANCER Cor. 1"
    rng = _rng(seed, cid)
    hs, grid = _gaussian_certificate_margins(rng, _size(mc_samples, 10_000, 8, 60), formula, ellipsoid_region_inv)
    return _lower(cid, f"worst margin on the certified ellipsoid: half-spaces exact 1 - r/r* = {hs:.2e} "
                  f"(0 = tight), grids sampled relative margin {grid:.2e}", min(hs, grid), 0.0, EXACT_TOL,
                  "closed forms; grid region sampled on a 24 x 720 polar grid")


def rancer_eq3_region_inv(rotation: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """RANCER Eq. 3 corrected: the region is sqrt(δ^T U Σ^-1 U^T δ) <= r, so M^-1 = U Σ U^T."""
    return ellipsoid_region_inv(rotation, sigma)


def rancer_eq3_printed_region_inv(rotation: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """RANCER Eq. 3 as printed: sqrt(δ^T Σ^-1 δ) <= r, i.e. the unrotated ellipsoid (U dropped)."""
    return np.diag(sigma**2)


def check_rancer_eq3(mc_samples: int, seed: int = 0, *,
                     formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = rancer_eq3_region_inv) -> CheckResult:
    """RANCER Eq. 3: smoothing with U ε, ε ~ N(0, Σ), certifies {sqrt(δ^T U Σ^-1 U^T δ) <= ½(Φ^-1 p_A - Φ^-1 p_B)}."""
    cid = "RANCER Eq. 3"
    rng = _rng(seed, cid)
    hs, grid = _gaussian_certificate_margins(rng, _size(mc_samples, 10_000, 8, 60), gaussian_gap, formula)
    return _lower(cid, f"worst margin on the rotated certified ellipsoid: half-spaces exact {hs:.2e}, "
                  f"grids (rotated frames) sampled {grid:.2e}", min(hs, grid), 0.0, EXACT_TOL,
                  "closed forms; grid region sampled on a 24 x 720 polar grid")


# --------------------------------------------------------------------------------------------------
# ANCER §4.2: Proposition 3, Corollary 2 (and UCAN Thm 3.2 for uniform noise)
# --------------------------------------------------------------------------------------------------


def lambda_l1_norm(delta: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """||δ||_{Λ,1} = ||Λ^-1 δ||_1, whose dual is ||Λ x||_inf (Prop. 3)."""
    return np.abs(delta / lam).sum(axis=-1)


def _uniform_instances(rng: np.random.Generator, points: int):
    """(scores, λ, points, kind): 2-D/3-D axis-aligned grid classifiers and axis half-spaces under U[-λ, λ]."""
    out = []
    for n, num in ((2, 4), (3, 3)):
        for _ in range(num):
            clf = random_grid_classifier(rng, n, cuts=3 if n == 2 else 2, rotate=False)
            lam = np.exp(rng.uniform(math.log(0.2), math.log(1.5), n))
            out.append((lambda z, c=clf, l=lam: grid_uniform_scores(c, z, l), lam, rng.uniform(-2.5, 2.5, (points, n)),
                        "grid"))
    for n in (2, 4):
        lam = np.exp(rng.uniform(math.log(0.2), math.log(1.5), n))
        k, c = int(rng.integers(n)), float(rng.normal())
        x = rng.normal(size=(points, n))
        x[:, k] = c + rng.uniform(-0.9, 0.9, points) * lam[k]          # inside the linear ramp
        out.append((lambda z, k=k, c=c, l=lam: halfspace_uniform_scores(k, c, z, l), lam, x, "half-space"))
    return out


def check_ancer_prop3(mc_samples: int, seed: int = 0, *,
                      formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = lambda_l1_norm) -> CheckResult:
    """ANCER Prop. 3: g_Λ is ½-Lipschitz, |g(x) - g(y)| <= ½ ||Λ^-1 (x - y)||_1 (attained by half-spaces)."""
    cid = "ANCER Prop. 3"
    rng = _rng(seed, cid)
    worst: dict[str, float] = {}
    for scores, lam, x, kind in _uniform_instances(rng, _size(mc_samples, 1000, 30, 2000)):
        n = x.shape[1]
        dirs = np.concatenate([np.diag(lam), rng.normal(size=(3, n)) * lam])
        r = lipschitz_ratios(scores, x, np.broadcast_to(dirs, (x.shape[0],) + dirs.shape),
                             lambda d, l=lam: formula(d, l), (1e-4, 0.3))
        worst[kind] = max(worst.get(kind, -np.inf), _nanmax(r))
    return _upper(cid, f"max ratio |g(x) - g(y)| / ||Λ^-1(x - y)||_1 (grids {worst['grid']:.4f}, half-spaces "
                  f"{worst['half-space']:.6f}: attained)", max(worst.values()), 0.5, FD_TOL,
                  "two-point ratios of piecewise-polynomial closed forms")


def prop3_shift(lam1: float) -> float:
    """Prop. 3's proof, corrected: λ1 ∂g/∂x1 = 2^-n ∫ [f(x1 + λ1, ·) - f(x1 - λ1, ·)] (shift ±λ1)."""
    return lam1


def prop3_printed_shift(lam1: float) -> float:
    """Prop. 3's proof as printed: f(x1 + 1, ·) - f(x1 - 1, ·) (shift ±1)."""
    return 1.0


def check_ancer_prop3_proof(mc_samples: int, seed: int = 0, *,
                            formula: Callable[[float], float] = prop3_shift) -> CheckResult:
    """ANCER Prop. 3's proof identity λ1 ∂g/∂x1 = ½ [ĝ(x1 + λ1) - ĝ(x1 - λ1)], ĝ the smoothing over the other
    coordinates with x1 fixed (= 2^-n ∫_{[-1,1]^(n-1)} [f(x1 + λ1, x̂ + Λ̂ε̂) - f(x1 - λ1, ·)] dε̂)."""
    cid = "ANCER Prop. 3 (proof identity)"
    rng = _rng(seed, cid)
    points = _size(mc_samples, 1000, 30, 2000)
    worst = 0.0
    for _ in range(6):
        n = int(rng.integers(2, 4))
        clf = random_grid_classifier(rng, n, cuts=3, rotate=False)
        lam = np.exp(rng.uniform(math.log(0.2), math.log(0.8), n))
        x = rng.uniform(-2.5, 2.5, (points, n))
        kinks = np.concatenate([clf.cuts[0] - lam[0], clf.cuts[0] + lam[0]])
        x = x[np.abs(x[:, :1] - kinks[None]).min(axis=1) > 1e-3]           # g is C^1 in x1 away from kinks
        lhs = lam[0] * fd_gradient(lambda z: grid_uniform_scores(clf, z, lam), x, 1e-6)[..., 0]
        shift, fixed = formula(lam[0]) * np.eye(n)[0], np.concatenate([[0.0], lam[1:]])
        rhs = 0.5 * (grid_uniform_scores(clf, x + shift, fixed) - grid_uniform_scores(clf, x - shift, fixed))
        worst = max(worst, float(np.abs(lhs - rhs).max()))
    return _upper(cid, "max |λ1 ∂g/∂x1 - ½[ĝ(x1 + shift) - ĝ(x1 - shift)]| over grid classifiers",
                  worst, 0.0, FD_TOL, "central differences (step 1e-6) of a piecewise-quadratic function")


def uniform_gap(pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """Corollary 2's gap p_A - p_B."""
    return pa - pb


def cross_polytope_region(delta: np.ndarray, scale: np.ndarray, radius: float) -> np.ndarray:
    """||δ / scale||_1 <= radius (ANCER Cor. 2 with scale = λ; UCAN Thm 3.2, p = 1, with scale = σ)."""
    return np.abs(delta / scale).sum(axis=-1) <= radius * (1 + 1e-12)


def ucan_printed_l1_region(delta: np.ndarray, scale: np.ndarray, radius: float) -> np.ndarray:
    """UCAN Thm 3.2 as printed for p = 1: (sum_i (δ_i / σ_i)^p)^(1/p) <= R without absolute values."""
    return (delta / scale).sum(axis=-1) <= radius * (1 + 1e-12)


def _uniform_certificate_margins(rng: np.random.Generator, num: int, gap: Callable, region: Callable,
                                 lam_iso: float = 1.0) -> tuple[float, float]:
    """Worst margins of a uniform-noise certificate: noise λ_iso * σ ⊙ U[-1, 1] (Λ = λ_iso σ), region
    region(δ, σ, R) with R = λ_iso * gap(p_A, p_B) (ANCER: λ_iso = 1, σ = λ). Half-spaces: exact normalized
    worst case over candidate points; grids: sampled min margin. Candidates: the cross-polytope's polar grid
    and vertices plus a box grid 4x wider (to expose unbounded regions)."""
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


def check_ancer_cor2(mc_samples: int, seed: int = 0, *,
                     formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = uniform_gap) -> CheckResult:
    """ANCER Cor. 2: argmax g_Λ is constant on ||Λ^-1 δ||_1 <= p_A - p_B (tight for axis half-spaces)."""
    cid = "ANCER Cor. 2"
    rng = _rng(seed, cid)
    hs, grid = _uniform_certificate_margins(rng, _size(mc_samples, 10_000, 8, 60), formula, cross_polytope_region)
    return _lower(cid, f"worst margin on the certified cross-polytope: axis half-spaces exact {hs:.2e} (0 = tight), "
                  f"grids sampled {grid:.2e}", min(hs, grid), 0.0, EXACT_TOL,
                  "closed forms; region sampled on a polar grid with its vertices")


# --------------------------------------------------------------------------------------------------
# ANCER §5: volumes (Prop. 4, Prop. 5, §5.1), enclosed balls
# --------------------------------------------------------------------------------------------------


def mc_volume(member: Callable[[np.ndarray], np.ndarray], half_widths: np.ndarray, num: int,
              rng: np.random.Generator, center: np.ndarray | None = None) -> tuple[float, float]:
    """Monte Carlo volume of a set inside the box center ± half_widths: (estimate, standard error)."""
    hw = np.asarray(half_widths, np.float64)
    c = np.zeros_like(hw) if center is None else center
    pts = c + rng.uniform(-1.0, 1.0, (num, hw.size)) * hw
    frac = float(member(pts).mean())
    box = float(np.prod(2.0 * hw))
    return frac * box, box * math.sqrt(max(frac * (1 - frac), 1.0 / num) / num)


def cross_polytope_volume(lam: np.ndarray, r: float) -> float:
    """ANCER Prop. 4: V({||Λ^-1 δ||_1 <= r}) = (2r)^n / n! prod λ_i (computed by regions.log_volume)."""
    return float(np.exp(regions.log_volume(np.asarray(lam), r, regions.L1)))


def check_ancer_prop4(mc_samples: int, seed: int = 0, *,
                      formula: Callable[[np.ndarray, float], float] = cross_polytope_volume) -> CheckResult:
    """ANCER Prop. 4 (both proofs): the generalized cross-polytope's volume, for diagonal Λ (n = 2..5) and a
    dense positive definite Λ (alternative proof, volume (2r)^n / n! |det Λ|), against Monte Carlo."""
    cid = "ANCER Prop. 4"
    rng = _rng(seed, cid)
    z = 0.0
    for n in (2, 3, 4, 5):
        lam, r = rng.uniform(0.2, 2.0, n), float(rng.uniform(0.5, 2.0))
        est, se = mc_volume(lambda p: np.abs(p / lam).sum(axis=1) <= r, r * lam, mc_samples, rng)
        z = max(z, abs(est - formula(lam, r)) / se)
        mat = random_covariance(n, rng, 0.3, 1.5)                              # dense positive definite Λ
        eig = np.linalg.eigvalsh(mat)
        est, se = mc_volume(lambda p: np.abs(np.linalg.solve(mat, p.T)).sum(axis=0) <= r,
                            r * np.abs(mat).max(axis=1), mc_samples, rng)
        z = max(z, abs(est - formula(eig, r)) / se)            # |det Λ| = prod of eigenvalues
    return _upper(cid, "max |MC volume - (2r)^n/n! |det Λ|| / SE over diagonal and dense Λ, n = 2..5",
                  z, MC_Z, 0.0, f"{MC_Z:.0f} Monte Carlo standard errors")


def ellipsoid_volume(sigma: np.ndarray, r: float) -> float:
    """ANCER §5.1: V({||δ||_{Σ,2} <= r}) = r^n π^(n/2) / Γ(n/2 + 1) prod σ_i (regions.log_volume)."""
    return float(np.exp(regions.log_volume(np.asarray(sigma), r, regions.L2)))


def check_ancer_ellipsoid_volume(mc_samples: int, seed: int = 0, *,
                                 formula: Callable[[np.ndarray, float], float] = ellipsoid_volume) -> CheckResult:
    """ANCER §5.1 (RANCER §4.1): the ellipsoid volume, axis-aligned and rotated, against Monte Carlo."""
    cid = "ANCER §5.1 (ellipsoid volume)"
    rng = _rng(seed, cid)
    z = 0.0
    for n in (2, 3, 4, 5):
        sigma, r, u = rng.uniform(0.2, 2.0, n), float(rng.uniform(0.5, 2.0)), random_rotation(n, rng)
        est, se = mc_volume(lambda p: regions.contains(p, 0.0, r * sigma, regions.L2, u), np.full(n, r * sigma.max()),
                            mc_samples, rng)
        z = max(z, abs(est - formula(sigma, r)) / se)
    return _upper(cid, "max |MC volume - r^n π^(n/2)/Γ(n/2+1) prod σ| / SE, rotated ellipsoids, n = 2..5",
                  z, MC_Z, 0.0, f"{MC_Z:.0f} Monte Carlo standard errors")


def zonotope_volume(generator: np.ndarray) -> float:
    """ANCER Prop. 5: V(Z(Λ)) = sqrt(|Λ^T Λ|) = |det Λ| for Z(Λ) = {Λ u : u in [0, 1]^n}."""
    return float(math.sqrt(abs(np.linalg.det(generator.T @ generator))))


def check_ancer_prop5(mc_samples: int, seed: int = 0, *,
                      formula: Callable[[np.ndarray], float] = zonotope_volume) -> CheckResult:
    """ANCER Prop. 5: (2r/n)^n V(Z(Λ)) <= V({||Λ^-1 δ||_1 <= r}) <= (2r)^n V(Z(Λ)), with the zonotope volume
    and the generalized cross-polytope's volume both measured by Monte Carlo (dense Λ, n = 2..4)."""
    cid = "ANCER Prop. 5"
    rng = _rng(seed, cid)
    z, margin = 0.0, np.inf
    for n in (2, 3, 4):
        mat, r = random_covariance(n, rng, 0.3, 1.5), float(rng.uniform(0.5, 2.0))   # Λ^-1 positive definite
        pos, neg = np.clip(mat, 0, None).sum(axis=1), np.clip(mat, None, 0).sum(axis=1)
        est, se = mc_volume(lambda p: np.all(np.abs(np.linalg.solve(mat, p.T) - 0.5) <= 0.5, axis=0),
                            0.5 * (pos - neg), mc_samples, rng, 0.5 * (pos + neg))
        vz = formula(mat)
        z = max(z, abs(est - vz) / se)
        vol, se1 = mc_volume(lambda p: np.abs(np.linalg.solve(mat, p.T)).sum(axis=0) <= r,
                             r * np.abs(mat).max(axis=1), mc_samples, rng)
        lower, upper = (2 * r / n) ** n * vz, (2 * r) ** n * vz
        margin = min(margin, (vol + MC_Z * se1) / lower - 1.0, upper / (vol - MC_Z * se1) - 1.0)
    value = max(z / MC_Z - 1.0, -margin)
    return _upper(cid, f"zonotope MC z-score max {z:.2f} (<= {MC_Z:.0f}) and smallest relative room of the MC "
                  f"volume (± {MC_Z:.0f} SE) inside the bounds {margin:.3f} (>= 0); "
                  f"value = max(z/{MC_Z:.0f} - 1, -room)",
                  value, 0.0, 0.0, f"{MC_Z:.0f} Monte Carlo standard errors")


def check_ancer_enclosed_radius(mc_samples: int, seed: int = 0, *,
                                formula: Callable[..., np.ndarray] = regions.enclosed_radius) -> CheckResult:
    """ANCER §5.1-5.2 (and UCAN Cor. 3.3 for p = 1, 2): the largest l_p ball around x inside the certified
    region has radius min_i θ_i r (for a rotated cross-polytope r / max_j ||Λ^-1 U^T e_j||_1): every point of
    the ball's boundary (l1 vertices included) is inside, and the ball 1e-6 larger is not."""
    cid = "ANCER §5 (enclosed l_p ball)"
    rng = _rng(seed, cid)
    num = _size(mc_samples, 100, 100, 5000)
    bad, cases = 0, 0
    for norm, p in ((regions.L2, 2.0), (regions.L1, 1.0)):
        for rotate in (False, True):
            for _ in range(10):
                n = int(rng.integers(2, 6))
                theta, gap = rng.uniform(0.2, 2.0, n), float(rng.uniform(0.3, 2.0))
                u = random_rotation(n, rng) if rotate else None
                rho = float(formula(theta, gap, norm, u))
                axes = np.eye(n) if u is None or norm == regions.L1 else u.T    # where the ball touches
                boundary = np.concatenate([unit_sphere(num, n, p, rng), axes, -axes])
                inside = regions.region_norm(rho * boundary, gap * theta, norm, u) <= 1 + 1e-12
                outside = regions.region_norm(rho * (1 + 1e-6) * boundary, gap * theta, norm, u) > 1
                bad += int((~inside).sum()) + int(not outside.any())
                cases += 1
    return _upper(cid, f"points of the enclosed ball's boundary outside the region, plus non-maximal radii "
                  f"({cases} regions: l2/l1, axis-aligned/rotated)", bad, 0, 0, "exact counting")


# --------------------------------------------------------------------------------------------------
# ANCER App. B.1: Gaussian mixtures (Prop. 6, Prop. 7, Cor. 3)
# --------------------------------------------------------------------------------------------------

#: Lipschitz constants of g_Σ under ||.||_{Σ^-1,2}: as printed in Prop. 6, as used in Prop. 7 / Cor. 3,
#: and the tight one for classifiers f : R^n -> [0, 1] (E[(u.s)_+] = 1/sqrt(2π)).
L_PROP6_PRINTED = math.sqrt(2.0 / math.pi)
L_PROP7_PRINTED = math.sqrt(math.pi / 2.0)
L_TIGHT = 1.0 / math.sqrt(2.0 * math.pi)


def check_ancer_prop6(mc_samples: int, seed: int = 0, *, formula: float = L_PROP6_PRINTED) -> CheckResult:
    """ANCER Prop. 6: g_Σ is L-Lipschitz under ||.||_{Σ^-1,2} with L = formula (printed sqrt(2/π)): max two-point
    ratio |g(x) - g(y)| / ||x - y||_{Σ,2} over grid classifiers and half-spaces."""
    cid = "ANCER Prop. 6"
    rng = _rng(seed, cid)
    instances = gaussian_instances(rng, _size(mc_samples, 1000, 30, 2000))
    ratio = max_lipschitz_ratio(instances, lambda s: s, sigma_norm, rng)
    return _upper(cid, f"max ratio |g(x) - g(y)| / ||x - y||_Σ,2 (grids {ratio['grid']:.4f}, half-spaces "
                  f"{ratio['half-space']:.6f} = 1/sqrt(2π) = {L_TIGHT:.6f}) vs L = {formula:.6f}",
                  max(ratio.values()), formula, FD_TOL, "two-point ratios of closed forms")


def check_ancer_prop6_tight(mc_samples: int, seed: int = 0, *, formula: float = L_TIGHT) -> CheckResult:
    """ANCER Prop. 6, tight constant: for f with values in [0, 1], sup ||Σ^½ ∇g|| = E[(u.s)_+] = 1/sqrt(2π),
    attained by the half-space at p = ½ (Prop. 6's sqrt(2/π) = E|u.s| is the constant for [-1, 1]-valued f)."""
    cid = "ANCER Prop. 6 (tight L = 1/sqrt(2π))"
    rng = _rng(seed, cid)
    instances = gaussian_instances(rng, _size(mc_samples, 1000, 30, 2000))
    ratio = max_lipschitz_ratio(instances, lambda s: s, sigma_norm, rng)
    return _close(cid, f"max ratio over grids ({ratio['grid']:.4f}) and half-spaces (attains) vs L = {formula:.6f}",
                  max(ratio.values()), formula, FD_TOL, "two-point ratios of closed forms")


def check_ancer_prop6_difference(mc_samples: int, seed: int = 0, *, formula: float = L_PROP6_PRINTED) -> CheckResult:
    """The score difference g^a - g^b (values of f^a - f^b in [-1, 1]) is sqrt(2/π)-Lipschitz under
    ||.||_{Σ^-1,2}, attained by a two-class half-space: where Prop. 6's constant is the tight one."""
    cid = "ANCER Prop. 6 (score difference, L = sqrt(2/π))"
    rng = _rng(seed, cid)
    ratio = max_lipschitz_ratio(gaussian_instances(rng, _size(mc_samples, 1000, 30, 2000)), _pairwise_differences,
                                sigma_norm, rng)
    return _close(cid, f"max ratio of g^a - g^b over grids ({ratio['grid']:.4f}) and half-spaces (attains) vs "
                  f"{formula:.6f}", max(ratio.values()), formula, FD_TOL, "two-point ratios of closed forms")


def mixture_instances(rng: np.random.Generator, points: int) -> list[SmoothedInstance]:
    """Gaussian mixtures sum_i α_i N(0, Σ_i) (K = 2, 3) smoothing grid classifiers (Σ_i sharing the grid's frame)
    and half-spaces (dense Σ_i); cov is B with B^-1 = sum_i α_i Σ_i^-1 (Prop. 7's norm ||δ||_{B,2})."""
    out = []
    for i in range(8):
        k = 2 + i % 2
        alpha = rng.dirichlet(np.ones(k))
        n = 2 if i < 4 else int(rng.integers(2, 5))
        if i < 4:
            clf = random_grid_classifier(rng, n, cuts=3)
            sig = np.exp(rng.uniform(math.log(0.2), math.log(1.5), (k, n)))
            covs = [(clf.frame * s**2) @ clf.frame.T for s in sig]
            fn = lambda z, c=clf, s=sig, a=alpha: sum(  # noqa: E731
                ai * grid_gaussian_scores(c, z, si) for ai, si in zip(a, s))
            x = rng.uniform(-2.5, 2.5, (points, n)) @ clf.frame.T
        else:
            covs = [random_covariance(n, rng) for _ in range(k)]
            w, b = rng.normal(size=n), float(rng.normal())
            fn = lambda z, w=w, b=b, c=covs, a=alpha: sum(  # noqa: E731
                ai * halfspace_gaussian_scores(w, b, z, ci) for ai, ci in zip(a, c))
            x = rng.normal(size=(points, n))
            x[: points // 2] -= ((x[: points // 2] @ w + b) / (w @ w))[:, None] * w
        out.append(SmoothedInstance("grid" if i < 4 else "half-space", fn, mixture_norm_matrix(alpha, covs), x))
    return out


def check_ancer_prop7(mc_samples: int, seed: int = 0, *, formula: float = L_PROP7_PRINTED,
                      cid: str = "ANCER Prop. 7") -> CheckResult:
    """ANCER Prop. 7: g_G is L-Lipschitz under ||.||_{B^-1,2}, B^-1 = sum α_i Σ_i^-1, L = formula (printed
    sqrt(π/2)): max two-point ratio over mixture-smoothed grid classifiers and half-spaces."""
    rng = _rng(seed, "ANCER Prop. 7")
    ratio = max_lipschitz_ratio(mixture_instances(rng, _size(mc_samples, 1000, 30, 2000)), lambda s: s, sigma_norm, rng)
    return _upper(cid, f"max ratio |g_G(x) - g_G(y)| / ||x - y||_B,2 over mixtures (grids {ratio['grid']:.4f}, "
                  f"half-spaces {ratio['half-space']:.4f}) vs L = {formula:.6f}", max(ratio.values()), formula,
                  FD_TOL, "two-point ratios of closed forms")


def check_ancer_prop7_tight(mc_samples: int, seed: int = 0, *, formula: float = L_TIGHT) -> CheckResult:
    """Prop. 7 with Prop. 6's tight constant: the proof's chain (triangle inequality, Prop. 6, Jensen) gives
    L = 1/sqrt(2π) for mixtures too."""
    return check_ancer_prop7(mc_samples, seed, formula=formula, cid="ANCER Prop. 7 (tight L = 1/sqrt(2π))")


def mixture_norm_matrix(alpha: np.ndarray, covs: list[np.ndarray]) -> np.ndarray:
    """B with B^-1 = sum_i α_i Σ_i^-1 (Prop. 7): the matrix of the mixture certificate's norm ||δ||_{B,2}."""
    return np.linalg.inv(sum(a * np.linalg.inv(c) for a, c in zip(alpha, covs)))


def check_ancer_prop7_jensen(mc_samples: int, seed: int = 0, *,
                             formula: Callable[[np.ndarray, list], np.ndarray] = mixture_norm_matrix) -> CheckResult:
    """ANCER Prop. 7's Jensen step: sum_i α_i ||δ||_{Σ_i,2} <= ||δ||_{B,2} with B = formula(α, Σ_i)."""
    cid = "ANCER Prop. 7 (Jensen step)"
    rng = _rng(seed, cid)
    worst = -np.inf
    for _ in range(20):
        n, k = int(rng.integers(2, 6)), int(rng.integers(2, 5))
        alpha, covs = rng.dirichlet(np.ones(k)), [random_covariance(n, rng) for _ in range(k)]
        delta = rng.normal(size=(_size(mc_samples, 100, 100, 20_000), n))
        lhs = sum(a * sigma_norm(delta, c) for a, c in zip(alpha, covs))
        rhs = sigma_norm(delta, formula(alpha, covs))
        worst = max(worst, float((lhs / rhs).max()))
    return _upper(cid, "max sum α_i ||δ||_Σi,2 / ||δ||_B,2 over random mixtures and δ", worst, 1.0, EXACT_TOL,
                  "closed form, float64 rounding")


def mixture_flip_radius(w: np.ndarray, margin: float, alpha: np.ndarray, covs: list[np.ndarray],
                        b_mat: np.ndarray) -> float:
    """Exact ||.||_{B,2} distance at which the mixture-smoothed half-space flips: the worst δ of norm ρ has
    w.δ = -ρ ||B^½ w||, and g_G = sum_i α_i Φ((m - ρ ||B^½ w||) / ||Σ_i^½ w||) crosses ½ (bisection)."""
    sb = math.sqrt(float(w @ b_mat @ w))
    sd = np.array([math.sqrt(float(w @ c @ w)) for c in covs])
    lo, hi = 0.0, margin / sb          # g_G(hi) = sum α_i Φ(0) = ½
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        g = float((alpha * ndtr((margin - mid * sb) / sd)).sum())
        lo, hi = (mid, hi) if g > 0.5 else (lo, mid)
    return hi


def check_ancer_cor3(mc_samples: int, seed: int = 0, *, formula: float = 1.0 / math.sqrt(2 * math.pi),
                     cid: str = "ANCER Cor. 3") -> CheckResult:
    """ANCER Cor. 3 (mixture certificate): ||δ||_{B,2} <= formula * (g_A - g_B) keeps the prediction. Printed
    constant 1/sqrt(2π) (L = sqrt(π/2)); sqrt(π/8) from Prop. 6 (L = sqrt(2/π)); tight sqrt(π/2) (L = 1/sqrt(2π)).
    Measured: max certified / exact flip radius over mixture-smoothed half-spaces (exact worst case)."""
    rng = _rng(seed, "ANCER Cor. 3")
    worst = 0.0
    for i in range(_size(mc_samples, 200, 100, 4000)):
        n, k = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        alpha, covs = rng.dirichlet(np.ones(k)), [random_covariance(n, rng) for _ in range(k)]
        b_mat = mixture_norm_matrix(alpha, covs)
        w = rng.normal(size=n)
        margin = float(np.exp(rng.uniform(-8, 1))) * math.sqrt(float(w @ b_mat @ w))  # includes g_A -> ½
        ga = float((alpha * ndtr(margin / np.sqrt([w @ c @ w for c in covs]))).sum())
        worst = max(worst, formula * (2 * ga - 1) / mixture_flip_radius(w, margin, alpha, covs, b_mat))
    return _upper(cid, f"max certified radius / exact flip radius over mixture-smoothed half-spaces (constant "
                  f"{formula:.6f})", worst, 1.0, EXACT_TOL, "closed form and 200-step bisection")


def check_ancer_cor3_prop6(mc_samples: int, seed: int = 0, *, formula: float = math.sqrt(math.pi / 8)) -> CheckResult:
    """Cor. 3 with Prop. 6's constant (L = sqrt(2/π), certificate sqrt(π/8) (g_A - g_B))."""
    return check_ancer_cor3(mc_samples, seed, formula=formula, cid="ANCER Cor. 3 via Prop. 6 (sqrt(π/8))")


def check_ancer_cor3_tight(mc_samples: int, seed: int = 0, *, formula: float = math.sqrt(math.pi / 2)) -> CheckResult:
    """Cor. 3 with the tight constant (L = 1/sqrt(2π), certificate sqrt(π/2) (g_A - g_B)); the ratio approaches 1
    as g_A -> ½, so no larger constant is sound."""
    return check_ancer_cor3(mc_samples, seed, formula=formula, cid="ANCER Cor. 3 tight (sqrt(π/2))")


# --------------------------------------------------------------------------------------------------
# references for App. D and RANCER (independent of geometry.py and rotated.py)
# --------------------------------------------------------------------------------------------------


def ellipsoid_pair_value(center_a: np.ndarray, q_a: np.ndarray, center_b: np.ndarray, q_b: np.ndarray) -> float:
    """v* = min_x max((x-a)^T A (x-a), (x-b)^T B (x-b)) by SLSQP on (x, τ) (a convex QCQP); the ellipsoids
    intersect iff v* <= 1. Several starts; the best feasible value is returned (an upper bound on v*)."""
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
    """min ||x - y||_2 s.t. x^T Q x <= 1 by SLSQP (from the radial projection of y); 0 inside."""
    if float(y @ q @ y) <= 1.0:
        return 0.0
    x0 = y / math.sqrt(float(y @ q @ y))
    res = minimize(lambda x: float((x - y) @ (x - y)), x0, jac=lambda x: 2 * (x - y), method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda x: 1.0 - float(x @ q @ x), "jac": lambda x: -2 * q @ x}],
                   options={"ftol": 1e-15, "maxiter": 1000})
    x = res.x / max(1.0, math.sqrt(float(res.x @ q @ res.x)))            # exactly feasible
    return float(min(np.linalg.norm(x - y), np.linalg.norm(x0 - y)))


def polytope_pair_value(center_a: np.ndarray, s_a: np.ndarray, center_b: np.ndarray, s_b: np.ndarray) -> float:
    """τ* = min_x max(sum |x - a| / s_a, sum |x - b| / s_b) by linear programming; intersect iff τ* <= 1."""
    n = center_a.size
    eye, zero, zc = np.eye(n), np.zeros((n, n)), np.zeros((n, 1))
    # variables (x, u, v, τ): u >= |x - a|, v >= |x - b|, sum u / s_a <= τ, sum v / s_b <= τ
    a_ub = np.block([[eye, -eye, zero, zc], [-eye, -eye, zero, zc], [eye, zero, -eye, zc], [-eye, zero, -eye, zc],
                     [np.zeros((1, n)), (1 / s_a)[None], np.zeros((1, n)), -np.ones((1, 1))],
                     [np.zeros((1, 2 * n)), (1 / s_b)[None], -np.ones((1, 1))]])
    b_ub = np.concatenate([center_a, -center_a, center_b, -center_b, [0.0, 0.0]])
    cost = np.zeros(3 * n + 1)
    cost[-1] = 1.0
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=[(None, None)] * n + [(0, None)] * (2 * n + 1), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    return float(res.fun)


def l1_nearest_point(y: np.ndarray, scales: np.ndarray) -> tuple[float, np.ndarray]:
    """(exact l1 distance, nearest point) from y to {x : sum |x_i| / s_i <= 1} by linear programming."""
    n = y.size
    eye, zero = np.eye(n), np.zeros((n, n))
    a_ub = np.block([[eye, -eye, zero], [-eye, -eye, zero], [eye, zero, -eye], [-eye, zero, -eye],
                     [np.zeros((1, 2 * n)), (1 / scales)[None]]])
    b_ub = np.concatenate([y, -y, np.zeros(2 * n), [1.0]])
    cost = np.concatenate([np.zeros(n), np.ones(n), np.zeros(n)])
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=[(None, None)] * n + [(0, None)] * (2 * n), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    return float(res.fun), res.x[:n]


def random_region_pairs(rng: np.random.Generator, num: int, rotate: bool = False) -> list[tuple]:
    """(a, U_a, s_a, b, U_b, s_b) with n = 2..4, semi-axes log-uniform in [0.2, 2] and centre distances spread
    so that both intersecting and disjoint pairs occur (U = I unless `rotate`)."""
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


# --------------------------------------------------------------------------------------------------
# ANCER App. D: Lemmas 1-4, Prop. 8, D.3-D.5
# --------------------------------------------------------------------------------------------------


def check_ancer_lemma1(mc_samples: int, seed: int = 0, *,
                       formula: Callable[[np.ndarray], np.ndarray] = geometry.outer_ball_radius) -> CheckResult:
    """ANCER Lemma 1 (MaxIntersect, D.1): the l_p ball of radius formula(s) (the largest semi-axis) contains the
    region, and ||a - b||_p > r_a + r_b implies the regions are disjoint (checked by SLSQP / LP)."""
    cid = "ANCER Lemma 1"
    rng = _rng(seed, cid)
    bad, disjoint = 0, 0
    num = _size(mc_samples, 2000, 20, 300)
    for norm, p in ((regions.L2, 2.0), (regions.L1, 1.0)):
        for a, _, sa, b, _, sb in random_region_pairs(rng, num):
            n = a.size
            pts = uniform_ball(200, n, p, rng) * sa
            bad += int((lp_norm(np.concatenate([pts, np.diag(sa), -np.diag(sa)]), p) > formula(sa) * (1 + 1e-12)).sum())
            if not geometry.max_intersect(a, formula(sa), b, formula(sb), norm):
                disjoint += 1
                value = (ellipsoid_pair_value(a, np.diag(sa**-2.0), b, np.diag(sb**-2.0)) if norm == regions.L2
                         else polytope_pair_value(a, sa, b, sb))
                bad += int(value <= 1.0)
    return _upper(cid, f"region points outside the outer ball + pairs declared disjoint that intersect "
                  f"({disjoint} of {2 * num} pairs declared disjoint)", bad, 0, 0, "exact counting")


def _dense_pair(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centres a, b and dense precision matrices A, B of a random rotated pair."""
    a, ua, sa, b, ub, sb = random_region_pairs(rng, 1, rotate=True)[0]
    return a, rotated.precision(ua, sa), b, rotated.precision(ub, sb)


def lemma2_combination(t: np.ndarray, qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
    """Lemma 2's convex combination t q_A(x) + (1 - t) q_B(x) of the two quadratic forms."""
    return t * qa + (1 - t) * qb


def check_ancer_lemma2(mc_samples: int, seed: int = 0, *,
                       formula: Callable[..., np.ndarray] = lemma2_combination) -> CheckResult:
    """ANCER Lemma 2: R_t = {formula(t, q_A(x), q_B(x)) <= 1} satisfies R_A ∩ R_B ⊆ R_t ⊆ R_A ∪ R_B, t in [0, 1]."""
    cid = "ANCER Lemma 2"
    rng = _rng(seed, cid)
    bad = 0
    for _ in range(20):
        a, qa_m, b, qb_m = _dense_pair(rng)
        x = a + (b - a) * rng.uniform(-0.5, 1.5, (mc_samples // 20, 1)) + rng.normal(size=(mc_samples // 20, a.size))
        t = rng.uniform(size=len(x))
        qa, qb = rotated.quadratic_form(x, a, qa_m), rotated.quadratic_form(x, b, qb_m)
        in_t = formula(t, qa, qb) <= 1
        bad += int(((qa <= 1) & (qb <= 1) & ~in_t).sum() + (in_t & (qa > 1) & (qb > 1)).sum())
    return _upper(cid, "sampled points violating R_A ∩ R_B ⊆ R_t ⊆ R_A ∪ R_B (dense A, B)", bad, 0, 0,
                  "exact counting")


def k_forms(t: float, a: np.ndarray, qa: np.ndarray, b: np.ndarray, qb: np.ndarray,
            third: Callable[..., np.ndarray] = rotated.k_function) -> np.ndarray:
    """The three printed forms of K(t) (App. D.2): 1 - t a'Aa - (1-t) b'Bb + m'E_t m;
    1 - t(1-t)(b-a)' B E_t^-1 A (b-a); 1 - (b-a)' ((1/(1-t)) B^-1 + (1/t) A^-1)^-1 (b-a)."""
    e = t * qa + (1 - t) * qb
    m = np.linalg.solve(e, t * qa @ a + (1 - t) * qb @ b)
    d = b - a
    return np.array([1 - t * a @ qa @ a - (1 - t) * b @ qb @ b + m @ e @ m,
                     1 - t * (1 - t) * d @ qb @ np.linalg.solve(e, qa @ d),
                     float(third(t, a, qa, b, qb))])


def check_ancer_lemma3(mc_samples: int, seed: int = 0, *,
                       formula: Callable[..., np.ndarray] = rotated.k_function) -> CheckResult:
    """ANCER Lemma 3: t q_A(x) + (1-t) q_B(x) - 1 = (x-m)^T E_t (x-m) - K(t), the three forms of K(t) agree
    (the third evaluated by `formula`, default Eq. 5 literally), and for diagonal A, B they equal the
    diagonal form (geometry.k_function)."""
    cid = "ANCER Lemma 3"
    rng = _rng(seed, cid)
    worst = 0.0
    for i in range(40):
        a, qa, b, qb = _dense_pair(rng)
        if i % 2:
            qa, qb = np.diag(np.diag(qa)), np.diag(np.diag(qb))
        t = float(rng.uniform(0.01, 0.99))
        ks = k_forms(t, a, qa, b, qb, formula)
        x = rng.normal(size=(50, a.size)) * 2 + a
        e = t * qa + (1 - t) * qb
        m = np.linalg.solve(e, t * qa @ a + (1 - t) * qb @ b)
        lhs = t * rotated.quadratic_form(x, a, qa) + (1 - t) * rotated.quadratic_form(x, b, qb) - 1
        rhs = rotated.quadratic_form(x, m, e) - ks[0]
        scale = 1 + np.abs(lhs).max() + np.abs(ks).max()
        worst = max(worst, float(np.abs(lhs - rhs).max() / scale), float(np.ptp(ks) / scale))
        if i % 2:
            kd = float(geometry.k_function(t, b - a, np.diag(qa) ** -0.5, np.diag(qb) ** -0.5))
            worst = max(worst, abs(kd - ks[2]) / scale)
    return _upper(cid, "max relative discrepancy between the identity's sides and between the forms of K(t)",
                  worst, 0.0, EXACT_TOL, "float64 linear algebra on O(1)-conditioned matrices")


def check_ancer_prop8_convex(mc_samples: int, seed: int = 0, *,
                             formula: Callable[..., np.ndarray] = rotated.k_function) -> CheckResult:
    """ANCER Prop. 8 / D.2 (Ros et al.): K is convex on (0, 1) and K(0) = K(1) = 1, the latter through the exact
    squeeze 0 <= 1 - K(t) <= min(t d'Ad, (1-t) d'Bd) (d = b - a; from (tB^-1 + (1-t)A^-1)^-1 <= A / (1-t) and
    <= B / t), checked on a 2001-point t-grid for dense A, B."""
    cid = "ANCER Prop. 8 (K convex, K(0) = K(1) = 1)"
    rng = _rng(seed, cid)
    t = np.linspace(1e-9, 1 - 1e-9, 2001)
    worst = 0.0
    for _ in range(_size(mc_samples, 4000, 20, 200)):
        a, qa, b, qb = _dense_pair(rng)
        k = formula(t, a, qa, b, qb)
        d = b - a
        scale = 1 + np.abs(k).max()
        concavity = -(k[:-2] - 2 * k[1:-1] + k[2:]).min()
        upper = np.minimum(t * (d @ qa @ d), (1 - t) * (d @ qb @ d))
        squeeze = max(float((k - 1).max()), float(((1 - k) - upper).max()))
        worst = max(worst, float(concavity) / scale, squeeze / scale)
    return _upper(cid, "max(relative concavity of K on a 2001-point t-grid, violation of 0 <= 1 - K(t) <= "
                  "min(t d'Ad, (1-t) d'Bd))", worst, 0.0, EXACT_TOL, "float64 rounding (relative to 1 + max|K|)")


def check_ancer_prop8_disjoint(mc_samples: int, seed: int = 0, *,
                               formula: Callable[..., tuple] = geometry.minimize_k) -> CheckResult:
    """ANCER Prop. 8 / D.2: min_t K(t) (geometry.minimize_k, diagonal form) satisfies 1 - min K = v*, the
    convex-solver value min_x max(q_A, q_B) (minimax duality), so K(t*) < 0 iff the ellipsoids are disjoint."""
    cid = "ANCER Prop. 8 (K* < 0 iff disjoint)"
    rng = _rng(seed, cid)
    worst, disjoint, pairs = 0.0, 0, random_region_pairs(rng, _size(mc_samples, 2000, 20, 300))
    for a, _, sa, b, _, sb in pairs:
        _, kmin = formula(a, sa, b, sb)
        v = ellipsoid_pair_value(a, np.diag(sa**-2.0), b, np.diag(sb**-2.0))
        worst = max(worst, abs(v - (1 - float(kmin))) / max(1.0, v))
        disjoint += int(v > 1)
    return _upper(cid, f"max |v* - (1 - min K)| / max(1, v*) ({disjoint} of {len(pairs)} pairs disjoint)",
                  worst, 0.0, SOLVER_TOL, "SLSQP reference, ftol 1e-15")


def check_ancer_d3(mc_samples: int, seed: int = 0, *,
                   formula: Callable[..., np.ndarray] = geometry.cross_polytopes_intersect) -> CheckResult:
    """ANCER App. D.3: Intersect for cross-polytopes through the circumscribed ellipsoids ||A(x - a)||_2 <= 1
    only returns False for disjoint cross-polytopes (LP reference)."""
    cid = "ANCER App. D.3"
    rng = _rng(seed, cid)
    bad, declared = 0, 0
    pairs = random_region_pairs(rng, _size(mc_samples, 1000, 40, 600))
    for a, _, sa, b, _, sb in pairs:
        if not formula(a, sa, b, sb):
            declared += 1
            bad += int(polytope_pair_value(a, sa, b, sb) <= 1.0)
    return _upper(cid, f"cross-polytope pairs declared disjoint that intersect ({declared} of {len(pairs)} declared)",
                  bad, 0, 0, "exact counting (LP margin 1e-10)")


def check_ancer_d4_projection(mc_samples: int, seed: int = 0, *,
                              formula: Callable[..., tuple] = geometry.project_onto_ellipsoid) -> CheckResult:
    """ANCER App. D.4: the KKT projection x* = (2λA + I)^-1 y with f(λ) = 0 gives the l2 distance to the
    ellipsoid (geometry.project_onto_ellipsoid vs SLSQP; a lower bound, accurate to the solver)."""
    cid = "ANCER App. D.4 (projection)"
    rng = _rng(seed, cid)
    worst = 0.0
    for a, _, sa, b, _, _ in random_region_pairs(rng, _size(mc_samples, 2000, 20, 300)):
        y = b - a
        ref = projection_distance(y, np.diag(sa**-2.0))
        if ref > 0:
            _, dist = formula(y, sa)
            worst = max(worst, abs(float(dist) - ref) / ref)
    return _upper(cid, "max relative |distance - SLSQP distance| over points outside", worst, 0.0, SOLVER_TOL,
                  "SLSQP reference, ftol 1e-15")


def ancer_inner_radius(scales: np.ndarray, norm: str) -> np.ndarray:
    """D.4/D.5 corrected: the largest l_p ball around the centre inside the region has radius min_i s_i."""
    return geometry.inner_ball_radius(scales)


def ancer_printed_inner_radius(scales: np.ndarray, norm: str) -> np.ndarray:
    """D.4/D.5 as printed: min_i B_ii with B_ii = 1/s_i^2 (ellipsoid) or 1/s_i (cross-polytope)."""
    return (1.0 / np.asarray(scales) ** (2 if norm == regions.L2 else 1)).min(axis=-1)


def check_ancer_d45_largest_out_subset(mc_samples: int, seed: int = 0, *,
                                       formula: Callable[[np.ndarray, str], np.ndarray] = ancer_inner_radius
                                       ) -> CheckResult:
    """ANCER App. D.4/D.5 LargestOutSubset: the l_p ball around b of radius min(dist_p(b, R_A)(1 - ε), formula(s_B))
    misses R_A and lies inside R_B (l2: ellipsoids, D.4; l1: cross-polytopes with the exact l1 distance, D.5)."""
    cid = "ANCER App. D.4/D.5 (LargestOutSubset)"
    rng = _rng(seed, cid)
    bad, used = 0, 0
    per = _size(mc_samples, 200, 100, 5000)
    for norm, p in ((regions.L2, 2.0), (regions.L1, 1.0)):
        for a, _, sa, b, _, sb in random_region_pairs(rng, _size(mc_samples, 4000, 20, 200)):
            dist = float(geometry.distance_to_region(b, a, sa, norm))
            if dist <= 0:
                continue
            used += 1
            rho = min(dist * (1 - geometry.SHRINK_MARGIN), float(formula(sb, norm)))
            n = a.size
            ball = b + rho * np.concatenate([uniform_ball(per, n, p, rng), unit_sphere(per, n, p, rng),
                                             np.eye(n), -np.eye(n)])
            bad += int((regions.region_norm(ball - a, sa, norm) <= 1).sum()
                       + (regions.region_norm(ball - b, sb, norm) > 1 + CONTACT_TOL).sum())
    return _upper(cid, f"ball points inside R_A or outside R_B ({used} pairs with b outside R_A, l2 and l1)",
                  bad, 0, 0, f"exact counting; the ball touches R_B by design ('outside': > 1 + {CONTACT_TOL:g})")


def hyperplane_projection(y: np.ndarray, w: np.ndarray, k: float) -> np.ndarray:
    """ANCER Lemma 4: the l2 projection of y onto {w.x = k} is y - (w.y - k) w / ||w||^2."""
    return y - (y @ w - k) / (w @ w) * w


def check_ancer_lemma4(mc_samples: int, seed: int = 0, *,
                       formula: Callable[..., np.ndarray] = hyperplane_projection) -> CheckResult:
    """ANCER Lemma 4: x* lies on the hyperplane and no sampled point of the hyperplane is closer to y."""
    cid = "ANCER Lemma 4"
    rng = _rng(seed, cid)
    worst = 0.0
    for _ in range(50):
        n = int(rng.integers(2, 6))
        y, w, k = rng.normal(size=n) * 2, rng.normal(size=n), float(rng.normal())
        x = formula(y, w, k)
        z = rng.normal(size=(mc_samples // 50, n)) * 3
        z = z - ((z @ w - k) / (w @ w))[:, None] * w                      # points of the hyperplane
        closer = np.linalg.norm(x - y) - np.linalg.norm(z - y, axis=1).min()
        worst = max(worst, abs(float(x @ w - k)) / np.linalg.norm(w), float(closer))
    return _upper(cid, "max(|w.x* - k| / ||w||, ||x* - y|| - min over sampled hyperplane points ||z - y||)",
                  worst, 0.0, EXACT_TOL, "closed form, float64 rounding")


def d5_normal(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """D.5 corrected: the facet of {sum |x_i| / s_i <= 1} facing y is w.x = 1 with w = sign(y) / s = sign(y_i) A_ii."""
    return np.sign(y) / scales


def d5_printed_normal(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """D.5 as printed: w = [-sign(y_i) A_ii], k = 1."""
    return -np.sign(y) / scales


def check_ancer_d5_hyperplane(mc_samples: int, seed: int = 0, *,
                              formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = d5_normal) -> CheckResult:
    """ANCER App. D.5: the hyperplane w.x = 1 passes through the facet vertices sign(y_i) e_i / A_ii, supports the
    cross-polytope (w.x <= 1 on it) and separates y (w.y > 1)."""
    cid = "ANCER App. D.5 (facet hyperplane)"
    rng = _rng(seed, cid)
    worst = 0.0
    for _ in range(50):
        n = int(rng.integers(2, 6))
        s = np.exp(rng.uniform(math.log(0.2), math.log(2.0), n))
        y = rng.normal(size=n) * 3
        y *= 1.5 / max(np.abs(y / s).sum(), 1e-12) if np.abs(y / s).sum() < 1.5 else 1.0   # outside
        w = formula(y, s)
        vertices = np.diag(np.sign(y) * s)
        body = uniform_ball(mc_samples // 50, n, 1.0, rng) * s
        worst = max(worst, float(np.abs(vertices @ w - 1).max()), float((body @ w - 1).max()), float(1 - y @ w))
    return _upper(cid, "max(|w.v - 1| over facet vertices, max w.x - 1 over the polytope, 1 - w.y)", worst, 0.0,
                  EXACT_TOL, "closed form, float64 rounding")


def d5_radius(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """D.5 corrected: the exact l1 distance to the cross-polytope (geometry.l1_distance_to_cross_polytope)."""
    return geometry.l1_distance_to_cross_polytope(y, scales)


def d5_printed_radius(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """D.5 as printed (sign of w fixed): r* = ||x* - y||_1 for the l2 projection x* of y onto the facet hyperplane."""
    return geometry.paper_l1_projection_radius(y, scales)


def d5_holder_radius(y: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """A sound closed form for D.5: the l1 distance to the facet hyperplane, (w.y - 1) / ||w||_inf =
    (sum |y_i| / s_i - 1) min_i s_i (Hölder), a lower bound on the l1 distance to the polytope."""
    return np.maximum((np.abs(y) / scales).sum(axis=-1) - 1.0, 0.0) * np.asarray(scales).min(axis=-1)


#: ANCER D.5's counterexample: y = (3, 0.001) against the cross-polytope with semi-axes (1, 10)
D5_COUNTEREXAMPLE = (np.array([3.0, 0.001]), np.array([1.0, 10.0]))


def _d5_cases(rng: np.random.Generator, num: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The counterexample plus random points outside random cross-polytopes (n = 2..5)."""
    cases = [D5_COUNTEREXAMPLE]
    for _ in range(num):
        n = int(rng.integers(2, 6))
        s = np.exp(rng.uniform(math.log(0.1), math.log(10.0), n))
        y = rng.normal(size=n) * s * rng.uniform(0.5, 3.0)
        cases.append((y, s))
    return [(y, s) for y, s in cases if np.abs(y / s).sum() > 1]


def check_ancer_d5_sound(mc_samples: int, seed: int = 0, *,
                         formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = d5_radius) -> CheckResult:
    """ANCER App. D.5 soundness: an l1 ball of radius formula(y, s) around y must miss the cross-polytope, i.e. the
    radius must not exceed the exact l1 distance (LP); if it does, the LP's nearest point is a witness."""
    cid = "ANCER App. D.5 (l1 radius sound)"
    rng = _rng(seed, cid)
    worst, witnesses = -np.inf, 0
    for y, s in _d5_cases(rng, _size(mc_samples, 1000, 40, 1000)):
        exact, nearest = l1_nearest_point(y, s)
        r = float(formula(y, s))
        worst = max(worst, (r - exact) / exact)
        witnesses += int(np.abs(nearest - y).sum() < r and np.abs(nearest / s).sum() <= 1 + 1e-9)
    return _upper(cid, f"max (radius - exact l1 distance) / distance; {witnesses} balls contain a point of the "
                  "region (incl. y = (3, 0.001), s = (1, 10))", worst, 0.0, LP_TOL, "HiGHS LP, tolerances 1e-10")


def check_ancer_d5_exact(mc_samples: int, seed: int = 0, *,
                         formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = d5_radius) -> CheckResult:
    """geometry.l1_distance_to_cross_polytope (the package's D.5) equals the LP's exact l1 distance, and the
    Hölder closed form (sum |y_i|/s_i - 1) min s_i never exceeds it."""
    cid = "ANCER App. D.5 (exact l1 distance)"
    rng = _rng(seed, cid)
    worst = 0.0
    for y, s in _d5_cases(rng, _size(mc_samples, 1000, 40, 1000)):
        exact, _ = l1_nearest_point(y, s)
        worst = max(worst, abs(float(formula(y, s)) - exact) / exact, float(d5_holder_radius(y, s)) / exact - 1)
    return _upper(cid, "max(|distance - LP| / LP, Hölder bound / LP - 1)", worst, 0.0, LP_TOL,
                  "HiGHS LP, tolerances 1e-10")


# --------------------------------------------------------------------------------------------------
# RANCER §3: Eq. 5, Eq. 6, LargestOutSubset for rotated ellipsoids
# --------------------------------------------------------------------------------------------------


def check_rancer_eq5(mc_samples: int, seed: int = 0, *,
                     formula: Callable[..., tuple] = rotated.minimize_k) -> CheckResult:
    """RANCER Eq. 5: 1 - min_t K(t) (rotated.minimize_k) equals the convex-solver value v* = min_x max(q_Q, q_R),
    so K(t*) < 0 iff the rotated ellipsoids are disjoint; K(t*) matches Eq. 5 evaluated literally and no point
    of a 2001-point t-grid is lower."""
    cid = "RANCER Eq. 5"
    rng = _rng(seed, cid)
    worst, disjoint = 0.0, 0
    pairs = random_region_pairs(rng, _size(mc_samples, 2000, 20, 300), rotate=True)
    grid = np.linspace(1e-4, 1 - 1e-4, 2001)
    for a, ua, sa, b, ub, sb in pairs:
        qa, qb = rotated.precision(ua, sa), rotated.precision(ub, sb)
        t, kmin = formula(a, ua, sa, b, ub, sb)
        v = ellipsoid_pair_value(a, qa, b, qb)
        literal = float(rotated.k_function(t, a, qa, b, qb))
        below = float(kmin) - float(rotated.k_function(grid, a, qa, b, qb).min())
        worst = max(worst, abs(v - (1 - float(kmin))) / max(1.0, v), abs(literal - float(kmin)), below)
        disjoint += int(v > 1)
    return _upper(cid, f"max(|v* - (1 - K*)| / max(1, v*), |Eq. 5 at t* - K*|, K* - grid min) "
                  f"({disjoint} of {len(pairs)} pairs disjoint)", worst, 0.0, SOLVER_TOL, "SLSQP reference, ftol 1e-15")


def check_rancer_eq6(mc_samples: int, seed: int = 0, *,
                     formula: Callable[..., tuple] = rotated.project_onto_ellipsoid) -> CheckResult:
    """RANCER Eq. 6: its root λ gives the projection onto a rotated ellipsoid: the distance matches SLSQP (and is
    a lower bound) and Eq. 6 evaluated literally at λ vanishes."""
    cid = "RANCER Eq. 6"
    rng = _rng(seed, cid)
    worst = 0.0
    for a, ua, sa, b, _, _ in random_region_pairs(rng, _size(mc_samples, 2000, 20, 300), rotate=True):
        y, q = b - a, rotated.precision(ua, sa)
        ref = projection_distance(y, q)
        if ref > 0:
            _, dist, lam = formula(y, ua, sa)
            residual = float(rotated.eq6_residual(lam, y, q))
            worst = max(worst, abs(float(dist) - ref) / ref, abs(residual), float(dist) / ref - 1 - 1e-12)
    return _upper(cid, "max(|distance - SLSQP| / SLSQP, |Eq. 6 residual at λ|)", worst, 0.0, SOLVER_TOL,
                  "SLSQP reference, ftol 1e-15")


def check_rancer_largest_out_subset(mc_samples: int, seed: int = 0, *,
                                    formula: Callable[..., np.ndarray] = rotated.largest_out_subset) -> CheckResult:
    """RANCER LargestOutSubset: the l2 ball around r of the returned radius misses S_Q and lies inside S_R."""
    cid = "RANCER LargestOutSubset"
    rng = _rng(seed, cid)
    bad, used = 0, 0
    per = _size(mc_samples, 200, 100, 5000)
    for a, ua, sa, b, ub, sb in random_region_pairs(rng, _size(mc_samples, 2000, 20, 300), rotate=True):
        rho = float(formula(a, ua, sa, b, sb))
        if rho <= 0:
            continue
        used += 1
        n = a.size
        ball = b + rho * np.concatenate([uniform_ball(per, n, 2.0, rng), unit_sphere(per, n, 2.0, rng)])
        inside_q = rotated.quadratic_form(ball, a, rotated.precision(ua, sa)) <= 1
        outside_r = rotated.quadratic_form(ball, b, rotated.precision(ub, sb)) > 1 + CONTACT_TOL
        bad += int(inside_q.sum() + outside_r.sum())
    return _upper(cid, f"ball points inside S_Q or outside S_R ({used} pairs with r outside S_Q)", bad, 0, 0,
                  f"exact counting; the ball touches S_R by design ('outside': > 1 + {CONTACT_TOL:g})")


# --------------------------------------------------------------------------------------------------
# UCAN: Theorem 3.2, Corollary 3.3, Theorem C.2
# --------------------------------------------------------------------------------------------------


def check_ucan_thm32_gaussian(mc_samples: int, seed: int = 0, *,
                              formula: Callable[[np.ndarray, np.ndarray], np.ndarray] = gaussian_gap) -> CheckResult:
    """UCAN Thm. 3.2 (Gaussian, p = 2): noise λ σ ⊙ ε + μ, ε ~ N(0, I), certifies ||δ'/σ||_2 <= λ ½(Φ^-1 p_A -
    Φ^-1 p_B) whatever the mean offset μ (tight for half-spaces)."""
    cid = "UCAN Thm. 3.2 (Gaussian, p = 2)"
    rng = _rng(seed, cid)
    hs, grid = _gaussian_certificate_margins(rng, _size(mc_samples, 10_000, 8, 60), formula,
                                             ellipsoid_region_inv, rotate=False, offset=True, lam=0.7)
    return _lower(cid, f"worst margin with mean offsets μ: half-spaces exact {hs:.2e} (0 = tight), grids sampled "
                  f"{grid:.2e}", min(hs, grid), 0.0, EXACT_TOL, "closed forms; region sampled on a polar grid")


def check_ucan_thm32_uniform(mc_samples: int, seed: int = 0, *,
                             formula: Callable[..., np.ndarray] = cross_polytope_region) -> CheckResult:
    """UCAN Thm. 3.2 (uniform, p = 1): noise λ σ ⊙ U[-1, 1] certifies (sum_i |δ'_i / σ_i|^p)^(1/p) <= R with the
    isotropic R = 2λ(p_A - ½) (binary) = λ (p_A - p_B); region predicate = formula(δ', σ, R)."""
    cid = "UCAN Thm. 3.2 (uniform, p = 1)"
    rng = _rng(seed, cid)
    hs, grid = _uniform_certificate_margins(rng, _size(mc_samples, 10_000, 8, 60), uniform_gap, formula, lam_iso=0.7)
    return _lower(cid, f"worst margin over the region: axis half-spaces exact {hs:.2e} (0 = tight), grids sampled "
                  f"{grid:.2e}", min(hs, grid), 0.0, EXACT_TOL, "closed forms; region sampled on polar and box grids")


def ucan_cor33_step(delta: np.ndarray, sigma: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Cor. 3.3's proof step, corrected: ||δ'/σ||_p <= ||δ' / min σ||_p (lhs, rhs)."""
    return lp_norm(delta / sigma, p), lp_norm(delta / sigma.min(), p)


def ucan_printed_cor33_step(delta: np.ndarray, sigma: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Cor. 3.3's proof step as printed: ||δ'||_p <= ||δ' / min σ||_p (true only when min σ <= 1)."""
    return lp_norm(delta, p), lp_norm(delta / sigma.min(), p)


def check_ucan_cor33(mc_samples: int, seed: int = 0, *,
                     formula: Callable[[np.ndarray, np.ndarray, float], tuple] = ucan_cor33_step) -> CheckResult:
    """UCAN Cor. 3.3: ||δ'||_p <= min σ_i R implies ||δ'/σ||_p <= R (p in {0.5, 1, 2, 3, inf}); the proof's step
    formula(δ', σ, p) must hold for all δ', and the radius min σ R is attained on the axis of the smallest σ."""
    cid = "UCAN Cor. 3.3"
    rng = _rng(seed, cid)
    worst = -np.inf
    for p in (0.5, 1.0, 2.0, 3.0, np.inf):
        for _ in range(8):
            n = int(rng.integers(2, 7))
            sigma, r = np.exp(rng.uniform(math.log(0.3), math.log(3.0), n)), float(rng.uniform(0.2, 2.0))
            dirs = np.concatenate([unit_sphere(mc_samples // 80, n, p, rng), np.eye(n)])
            delta = min(sigma) * r * dirs
            lhs, rhs = formula(delta, sigma, p)
            worst = max(worst, float((lp_norm(delta / sigma, p) / r).max()) - 1.0, float((lhs - rhs).max()))
    return _upper(cid, "max(||δ'/σ||_p / R - 1 on the sphere ||δ'||_p = min σ R, proof step lhs - rhs); "
                  "0 = attained", worst, 0.0, EXACT_TOL, "closed form, float64 rounding")


def superellipsoid_volume(sigma: np.ndarray, r: float, p: np.ndarray | float) -> float:
    """UCAN Thm. C.2 / Lemma D.3: V({sum_i |δ_i / (σ_i R)|^(p_i) <= 1}) = 2^d prod_i σ_i R Γ(1 + 1/p_i) /
    Γ(1 + sum_i 1/p_i) (= (2RΓ(1 + 1/p))^d prod σ_i / Γ(1 + d/p) for equal p_i)."""
    sigma = np.asarray(sigma, np.float64)
    p = np.broadcast_to(np.asarray(p, np.float64), sigma.shape)
    log_v = (np.log(2 * sigma * r) + gammaln(1 + 1 / p)).sum() - gammaln(1 + (1 / p).sum())
    return float(np.exp(log_v))


UCAN_C2_CASES = ((2, 0.5), (3, 0.5), (2, 1.0), (4, 1.0), (2, 2.0), (5, 2.0), (3, 3.0), (4, 4.0), (3, (0.5, 1.5, 3.0)))


def check_ucan_thm_c2(mc_samples: int, seed: int = 0, *,
                      formula: Callable[..., float] = superellipsoid_volume) -> CheckResult:
    """UCAN Thm. C.2 (and Lemma D.3 with mixed p_i): the super-ellipsoid volume against Monte Carlo."""
    cid = "UCAN Thm. C.2 (Monte Carlo)"
    rng = _rng(seed, cid)
    z = 0.0
    for d, p in UCAN_C2_CASES:
        sigma, r = rng.uniform(0.3, 2.0, d), float(rng.uniform(0.5, 2.0))
        pv = np.broadcast_to(np.asarray(p, np.float64), (d,))
        est, se = mc_volume(lambda x: (np.abs(x / (sigma * r)) ** pv).sum(axis=1) <= 1, sigma * r, mc_samples, rng)
        z = max(z, abs(est - formula(sigma, r, p)) / se)
    return _upper(cid, f"max |MC volume - formula| / SE over (d, p) = {UCAN_C2_CASES}", z, MC_Z, 0.0,
                  f"{MC_Z:.0f} Monte Carlo standard errors")


def check_ucan_thm_c2_exact(mc_samples: int, seed: int = 0, *,
                            formula: Callable[..., float] = superellipsoid_volume) -> CheckResult:
    """UCAN Thm. C.2 in closed form: against 2-D quadrature (4 ∫ c2 (1 - (x/c1)^p1)^(1/p2) dx) for p in
    [0.3, 6], and equal to ANCER's volumes for p = 1 (Prop. 4) and p = 2 (§5.1) in d = 1..50."""
    cid = "UCAN Thm. C.2 (quadrature, = ANCER for p = 1, 2)"
    rng = _rng(seed, cid)
    worst = 0.0
    for _ in range(20):
        c, p = rng.uniform(0.3, 2.0, 2), np.exp(rng.uniform(math.log(0.3), math.log(6.0), 2))
        area = 4 * quad(lambda x: c[1] * max(0.0, 1 - (x / c[0]) ** p[0]) ** (1 / p[1]), 0, c[0],
                        epsabs=0, epsrel=1e-12, limit=200)[0]
        worst = max(worst, abs(formula(c, 1.0, p) / area - 1))
    for d in (1, 2, 5, 20, 50):
        sigma, r = rng.uniform(0.3, 2.0, d), float(rng.uniform(0.5, 2.0))
        for p, norm in ((1.0, regions.L1), (2.0, regions.L2)):
            ancer = float(regions.log_volume(sigma, r, norm))
            worst = max(worst, abs(math.log(formula(sigma, r, p)) - ancer) / max(1.0, abs(ancer)))
    return _upper(cid, "max relative error vs adaptive quadrature and vs ANCER's log-volumes", worst, 0.0, 1e-8,
                  "quadrature epsrel 1e-12 (1e-8 allows for the integrable endpoint singularity when p < 1)")


# --------------------------------------------------------------------------------------------------
# registry, typo demonstrations, figures' data
# --------------------------------------------------------------------------------------------------

#: every check, grouped by paper section, in the order the notebook presents them
CHECKS: dict[str, tuple[Callable[..., CheckResult], ...]] = {
    "ANCER §4 (Lipschitz recipe)": (check_ancer_prop1, check_ancer_theorem1),
    "ANCER §4.1 (ellipsoids)": (check_ancer_prop2, check_ancer_prop2_attained, check_ancer_cor1),
    "ANCER §4.2 (generalized cross-polytopes)": (check_ancer_prop3, check_ancer_prop3_proof, check_ancer_cor2),
    "ANCER §5 (volumes)": (check_ancer_prop4, check_ancer_ellipsoid_volume, check_ancer_prop5,
                           check_ancer_enclosed_radius),
    "ANCER App. B.1 (Gaussian mixtures)": (check_ancer_prop6, check_ancer_prop6_tight, check_ancer_prop6_difference,
                                           check_ancer_prop7, check_ancer_prop7_tight, check_ancer_prop7_jensen,
                                           check_ancer_cor3,
                                           check_ancer_cor3_prop6, check_ancer_cor3_tight),
    "ANCER App. D (memory-based certification)": (check_ancer_lemma1, check_ancer_lemma2, check_ancer_lemma3,
                                                  check_ancer_prop8_convex, check_ancer_prop8_disjoint, check_ancer_d3,
                                                  check_ancer_d4_projection, check_ancer_d45_largest_out_subset,
                                                  check_ancer_lemma4, check_ancer_d5_hyperplane, check_ancer_d5_sound,
                                                  check_ancer_d5_exact),
    "RANCER §3": (check_rancer_eq3, check_rancer_eq5, check_rancer_eq6, check_rancer_largest_out_subset),
    "UCAN §3 and App. C-D": (check_ucan_thm32_gaussian, check_ucan_thm32_uniform, check_ucan_cor33,
                             check_ucan_thm_c2, check_ucan_thm_c2_exact),
}


def run_section(section: str, mc_samples: int, seed: int = 0) -> list[CheckResult]:
    """Run the checks of one section with the correct formulas."""
    return [check(mc_samples, seed) for check in CHECKS[section]]


def run_all(mc_samples: int, seed: int = 0) -> list[CheckResult]:
    """Run every check with the correct formulas."""
    return [r for section in CHECKS for r in run_section(section, mc_samples, seed)]


def results_table(results: list[CheckResult]) -> pd.DataFrame:
    """One row per check: id, what is measured, value, bound, slack, tolerance (and why), PASS/FAIL."""
    cols = ["id", "measured", "value", "bound", "slack", "tol", "tol_reason", "result"]
    return pd.DataFrame([r.as_dict() for r in results])[cols]


def verdict_lines(results: list[CheckResult]) -> list[str]:
    """'PASS  <id>' per check: the deterministic part of the results (for regression-checked output)."""
    return [f"{'PASS' if r.passed else 'FAIL'}  {r.id}" for r in results]


def summary_line(results: list[CheckResult]) -> str:
    """'checks: N, passed: P, failed: F'."""
    passed = sum(r.passed for r in results)
    return f"checks: {len(results)}, passed: {passed}, failed: {len(results) - passed}"


@dataclass(frozen=True)
class TypoDemo:
    """A seed's printed formula, plugged into its check (expected to FAIL unless `expect_printed_pass`, for a
    constant that is sound but loose), next to the corrected formula (expected to PASS)."""
    where: str
    printed: str
    corrected: str
    check: Callable[..., CheckResult]
    printed_formula: object
    expect_printed_pass: bool = False


TYPO_DEMOS: tuple[TypoDemo, ...] = (
    TypoDemo("ANCER App. D.4/D.5", "inner radius min_i B_ii (B_ii = 1/s_i^2 or 1/s_i)", "min_i s_i",
             check_ancer_d45_largest_out_subset, ancer_printed_inner_radius),
    TypoDemo("ANCER App. D.5", "w = [-sign(y_i) A_ii], k = 1", "w = [+sign(y_i) A_ii], k = 1",
             check_ancer_d5_hyperplane, d5_printed_normal),
    TypoDemo("ANCER App. D.5", "r* = l1 length of the l2 projection onto the facet hyperplane",
             "exact l1 distance (or the Hölder bound (sum|y_i|/s_i - 1) min s_i)", check_ancer_d5_sound,
             d5_printed_radius),
    TypoDemo("ANCER Prop. 3 (proof)", "λ1 ∂g/∂x1 = 2^-n ∫ [f(x1 + 1, ·) - f(x1 - 1, ·)]", "shift x1 ± λ1",
             check_ancer_prop3_proof, prop3_printed_shift),
    TypoDemo("ANCER Prop. 6", "L = sqrt(2/π) (sound, loose by 2 for [0,1]-valued f)", "L = 1/sqrt(2π) (tight)",
             check_ancer_prop6_tight, L_PROP6_PRINTED),
    TypoDemo("ANCER Prop. 7 / Cor. 3", "L = sqrt(π/2), certificate (g_A - g_B) / sqrt(2π) (sound, π x too small)",
             "L = 1/sqrt(2π), certificate sqrt(π/2) (g_A - g_B)", check_ancer_cor3_tight, 1.0 / math.sqrt(2 * math.pi),
             expect_printed_pass=True),
    TypoDemo("ANCER Cor. 3 (falsification)", "a constant 1% above sqrt(π/2)", "sqrt(π/2) is the largest sound one",
             check_ancer_cor3_tight, 1.01 * math.sqrt(math.pi / 2)),
    TypoDemo("RANCER Eq. 3", "sqrt(δ^T Σ^-1 δ) <= r (rotation U dropped)", "sqrt(δ^T U Σ^-1 U^T δ) <= r",
             check_rancer_eq3, rancer_eq3_printed_region_inv),
    TypoDemo("UCAN Thm. 3.2", "(sum_i (δ'_i/σ_i)^p)^(1/p) <= R (no absolute values; p = 1)",
             "(sum_i |δ'_i/σ_i|^p)^(1/p) <= R", check_ucan_thm32_uniform, ucan_printed_l1_region),
    TypoDemo("UCAN Cor. 3.3 (proof)", "||δ'||_p <= ||δ'/min σ||_p (needs min σ <= 1)", "||δ'/σ||_p <= ||δ'/min σ||_p",
             check_ucan_cor33, ucan_printed_cor33_step),
)


def run_typo_demos(mc_samples: int, seed: int = 0) -> pd.DataFrame:
    """Each typo's check with the printed and with the corrected formula, and whether both behave as expected."""
    rows = []
    for demo in TYPO_DEMOS:
        printed = demo.check(mc_samples, seed, formula=demo.printed_formula)
        corrected = demo.check(mc_samples, seed)
        rows.append({"where": demo.where, "printed": demo.printed, "corrected": demo.corrected, "check": corrected.id,
                     "printed result": "PASS" if printed.passed else "FAIL", "printed slack": printed.slack,
                     "corrected result": "PASS" if corrected.passed else "FAIL", "corrected slack": corrected.slack,
                     "as expected": printed.passed == demo.expect_printed_pass and corrected.passed})
    return pd.DataFrame(rows)


def k_curves(num: int = 400) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """K(t) on (0, 1) for an intersecting and a disjoint axis-aligned pair (App. D.2, diagonal form) and a
    disjoint rotated pair (RANCER Eq. 5, dense form): {label: (t, K(t))}."""
    t = np.linspace(1e-3, 1 - 1e-3, num)
    sa, sb = np.array([1.0, 0.4]), np.array([0.5, 1.2])
    out = {}
    for label, b in (("axis-aligned, intersecting", np.array([1.2, 0.8])),
                     ("axis-aligned, disjoint", np.array([1.6, 1.3]))):
        out[label] = (t, geometry.k_function(t, np.broadcast_to(b, (num, 2)), sa, sb))
    u = random_rotation(2, np.random.default_rng(3))
    qa, qb = rotated.precision(np.eye(2), sa), rotated.precision(u, sb)
    out["rotated, RANCER Eq. 5"] = (t, rotated.k_function(t, np.zeros(2), qa, np.array([1.3, 1.0]), qb))
    return out


def d5_counterexample_data() -> dict[str, object]:
    """The D.5 counterexample: region semi-axes, point y, the printed r*, the exact l1 distance and the nearest
    point (a point of the region inside the printed l1 ball)."""
    y, s = D5_COUNTEREXAMPLE
    exact, nearest = l1_nearest_point(y, s)
    return {"y": y, "scales": s, "printed_radius": float(d5_printed_radius(y, s)),
            "exact_radius": float(d5_radius(y, s)), "lp_radius": exact, "nearest": nearest,
            "holder_radius": float(d5_holder_radius(y, s))}
