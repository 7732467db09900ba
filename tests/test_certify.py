"""Soundness of Monte Carlo PREDICT / CERTIFY (ancer_lite.core.certify) against closed forms.

The base classifiers are linear two-class models, for which the smoothed classifier is known exactly:

* Gaussian noise N(0, Σ), Σ = diag(sigma_i^2), f(x) = 1[w.x + b >= 0]: w.(x + eps) + b ~ N(m, s^2) with
  m = w.x + b and s = ||Σ^½ w||_2, so p = Φ(m / s) and Corollary 1's exact gap is Φ^-1(p) = m / s. The
  certified ellipsoid {||δ||_{Σ,2} <= r} reaches furthest towards the boundary at δ* = -r Σ w / s, where
  w.δ* = -r s: it stays on the safe side iff r * s <= m, i.e. iff r <= the exact gap.
* Uniform noise U[-lambda_i, lambda_i], f(x) = 1[x_1 >= c]: p = clip((x_1 - c + lambda_1) / (2 lambda_1), 0, 1),
  Corollary 2's exact gap is 2p - 1, and the cross-polytope {||Λ^-1 δ||_1 <= r} reaches furthest towards the
  boundary at its vertex -r lambda_1 e_1: it is safe iff lambda_1 * r <= x_1 - c, i.e. iff r <= 2p - 1.
* Rotated noise U (theta * z): the same with Σ replaced by U Θ² U^T (s = ||Θ U^T w||_2).

The statistical tests are seeded (deterministic) and their tolerances are several binomial standard errors.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import beta, binom, binomtest, norm

from ancer_lite.core import regions
from ancer_lite.core.certify import ABSTAIN, BATCH_SIZE, Smooth, certificate_from_bound, lower_confidence_bound
from ancer_lite.models.small import SmallCNN

# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------


class LinearTwoClass(torch.nn.Module):
    """logits = [0, w.x + b]: class 1 iff w.x + b >= 0 (argmax of a tie returns class 0, a null event)."""

    def __init__(self, w: np.ndarray, b: float) -> None:
        super().__init__()
        self.w = torch.as_tensor(np.asarray(w, dtype=np.float64).reshape(-1))
        self.b = float(b)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = x.reshape(x.shape[0], -1).to(torch.float64) @ self.w + self.b
        return torch.stack([torch.zeros_like(s), s], dim=1).to(torch.float32)


def random_orthogonal(n: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-random orthogonal matrix (QR of a Gaussian matrix with the sign fix)."""
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return q * np.sign(np.diag(r))


def reference_lcb(k: int, n: int, alpha: float) -> float:
    """One-sided (1 - alpha) Clopper-Pearson bound = lower end of the two-sided (1 - 2 alpha) exact CI."""
    return binomtest(int(k), n).proportion_ci(confidence_level=1 - 2 * alpha, method="exact").low


def exact_overcertification_rate(p1: float, n0: int, n: int, alpha: float) -> float:
    """Exact probability that CERTIFY on a two-class problem with P(class 1) = p1 returns a class c with a
    bound pA_lower > max(p_c, 1/2), i.e. a wrong class or a gap larger than the exact one.
    Selection: class 1 iff its count among n0 exceeds class 0's (np.argmax breaks ties towards 0)."""
    k0 = np.arange(n0 + 1)
    p_select1 = binom.pmf(k0, n0, p1)[k0 > n0 - k0].sum()
    k = np.arange(n + 1)
    lcb = np.where(k > 0, beta.ppf(alpha, k, n - k + 1), 0.0)
    rate = 0.0
    for p_sel, p_c in ((p_select1, p1), (1.0 - p_select1, 1.0 - p1)):
        rate += p_sel * binom.pmf(k, n, p_c)[lcb > max(p_c, 0.5)].sum()
    return float(rate)


def p_lower_window(p: float, n: int, alpha: float, k_se: float = 5.0) -> tuple[float, float]:
    """Where the Clopper-Pearson bound from n samples lands with overwhelming probability: the estimate is
    within k_se binomial standard errors SE = sqrt(p(1-p)/n) of p, and the bound sits about z_(1-alpha) SE
    below it (plus an O(1/n) Clopper-Pearson correction, covered by the 2/n slack)."""
    se = math.sqrt(p * (1 - p) / n)
    z = norm.ppf(1 - alpha)
    return p - (z + k_se) * se - 2.0 / n, p - (z - k_se) * se + 2.0 / n


# --------------------------------------------------------------------------------------------------
# Corollary 1: Gaussian noise, ellipsoids
# --------------------------------------------------------------------------------------------------


def gaussian_instance(seed: int, t_range=(0.5, 2.5)):
    """A random linear problem with anisotropic sigma and exact gap |m|/s = t (either side of the boundary)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 21))
    sigma = rng.uniform(0.05, 1.0, n)
    w = rng.normal(size=n)
    x = rng.uniform(0.0, 1.0, n)
    s = float(np.linalg.norm(sigma * w))
    t = float(rng.uniform(*t_range)) * (1 if rng.random() < 0.5 else -1)
    b = t * s - float(w @ x)
    return n, sigma, w, b, x, s


@pytest.mark.parametrize("rotated", [False, True])
def test_gaussian_certified_ellipsoid_never_crosses_linear_boundary(rotated):
    """Corollary 1 soundness: over 40 random instances (alpha = 1e-4, so a union bound leaves < 0.4% chance
    of any legitimate failure) the certified (rotated) ellipsoid's worst point stays on the predicted side:
    gap * ||Θ U^T w|| <= |margin|, and that worst point is on the region's boundary (region_norm = 1)."""
    alpha = 1e-4
    certified = 0
    for seed in range(40):
        n, sigma, w, b, x, s = gaussian_instance(seed)
        rng = np.random.default_rng(1000 + seed)
        u = random_orthogonal(n, rng) if rotated else None
        # the exact noise std of w.eps with eps = U (sigma * z): ||sigma * (U^T w)||
        s = float(np.linalg.norm(sigma * (u.T @ w))) if rotated else s
        margin = float(w @ x + b)
        true_class = int(margin >= 0)
        smooth = Smooth(LinearTwoClass(w, b), 2, (n,), noise="gaussian", seed=seed)
        cert = smooth.certify(torch.tensor(x, dtype=torch.float32), torch.tensor(sigma), 100, 2000, alpha,
                              rotation=None if u is None else torch.tensor(u))
        if cert.prediction == ABSTAIN:
            assert cert.gap == 0.0
            continue
        certified += 1
        assert cert.prediction == true_class
        assert cert.gap > 0
        assert cert.gap * s <= abs(margin) + 1e-9, (seed, cert.gap, abs(margin) / s)
        # the worst point of the ellipsoid {||Θ^-1 U^T δ||_2 <= gap}: δ* = -sign(m) gap U Θ² U^T w / s
        cov_w = (u @ (sigma**2 * (u.T @ w))) if rotated else sigma**2 * w
        delta = -np.sign(margin) * cert.gap * cov_w / s
        assert regions.region_norm(delta, cert.gap * sigma, "l2", u) == pytest.approx(1.0, rel=1e-9)
        assert np.sign(w @ (x + delta) + b) in (np.sign(margin), 0.0)
    assert certified >= 35  # p >= Φ(0.5) = 0.69 with N = 2000 is certifiable: the test is not vacuous


@pytest.mark.parametrize("t", [0.3, 0.9, 1.6])
def test_gaussian_gap_matches_exact_with_large_n(t):
    """Corollary 1 with N = 10^6: the certified gap Φ^-1(pA_lower) lies in the window implied by the
    binomial standard error SE = sqrt(p(1-p)/N) around pA_lower ~ p - z_(1-alpha) SE (5 SE either way),
    i.e. within ~0.01 of the exact gap Φ^-1(p) = margin / ||Σ^½ w||, and never above it."""
    rng = np.random.default_rng(7)
    n = 12
    sigma = rng.uniform(0.05, 1.0, n)
    w = rng.normal(size=n)
    x = rng.uniform(0.0, 1.0, n)
    s = float(np.linalg.norm(sigma * w))
    b = t * s - float(w @ x)
    N, alpha = 1_000_000, 1e-3
    p = norm.cdf(t)
    smooth = Smooth(LinearTwoClass(w, b), 2, (n,), batch_size=250_000, seed=3)
    cert = smooth.certify(torch.tensor(x, dtype=torch.float32), torch.tensor(sigma), 100, N, alpha)
    lo, hi = p_lower_window(p, N, alpha)
    assert cert.prediction == 1
    assert lo <= cert.p_lower <= hi
    assert norm.ppf(lo) <= cert.gap <= min(norm.ppf(hi), t)
    assert abs(cert.gap - t) <= t - norm.ppf(lo) < 0.02
    # certificate bookkeeping (§5): enclosed l2 radius, proxy radius, log volume
    assert cert.radius == pytest.approx(cert.gap * sigma.min(), rel=1e-6)
    assert cert.radius_proxy == pytest.approx(cert.gap * np.exp(np.log(sigma).mean()), rel=1e-6)
    assert cert.log_volume == pytest.approx(
        float(regions.log_volume(sigma, cert.gap, "l2")), rel=1e-6)
    assert cert.n == N and abs(cert.count / N - p) <= 5 * math.sqrt(p * (1 - p) / N)


def test_rotated_gaussian_gap_matches_rotated_closed_form():
    """Rotated Corollary 1 (noise U Θ z, covariance U Θ² U^T): with N = 10^6 the gap matches
    Φ^-1(Φ(m / ||Θ U^T w||)) and is far from the unrotated closed form m / ||Θ w||, so the rotation is used."""
    rng = np.random.default_rng(11)
    n = 10
    sigma = np.geomspace(0.05, 1.0, n)
    u = random_orthogonal(n, rng)
    w = u[:, 0] + 0.1 * rng.normal(size=n)  # mostly along U e_1, the direction with the smallest sigma
    x = rng.uniform(0.0, 1.0, n)
    s_rot = float(np.linalg.norm(sigma * (u.T @ w)))
    s_axis = float(np.linalg.norm(sigma * w))
    t = 1.2
    b = t * s_rot - float(w @ x)
    N, alpha = 1_000_000, 1e-3
    smooth = Smooth(LinearTwoClass(w, b), 2, (n,), batch_size=250_000, seed=5)
    cert = smooth.certify(torch.tensor(x, dtype=torch.float32), torch.tensor(sigma), 100, N, alpha,
                          rotation=torch.tensor(u))
    lo, hi = p_lower_window(norm.cdf(t), N, alpha)
    assert norm.ppf(lo) <= cert.gap <= t
    assert abs(t * s_rot / s_axis - t) > 0.5  # the unrotated answer would be far off
    assert cert.radius == pytest.approx(cert.gap * sigma.min(), rel=1e-6)  # rotation-invariant for l2


def test_gaussian_overcertification_rate_is_at_most_alpha():
    """Corollary 1 + Clopper-Pearson: over 4000 seeded CERTIFY runs (n0 = 20, N = 100, alpha = 0.1, p = 0.8)
    the rate of over-certification (wrong class, or gap > exact gap Φ^-1(p)) is <= alpha + 3 SE, and agrees
    within 4 SE with its exact value under the binomial model (~0.080), so it is neither inflated nor ~0."""
    n, n0, N, alpha, trials = 8, 20, 100, 0.1, 4000
    rng = np.random.default_rng(21)
    sigma = rng.uniform(0.1, 1.0, n)
    w = rng.normal(size=n)
    x = rng.uniform(0.0, 1.0, n)
    s = float(np.linalg.norm(sigma * w))
    p = 0.8
    exact_gap = norm.ppf(p)
    b = exact_gap * s - float(w @ x)
    smooth = Smooth(LinearTwoClass(w, b), 2, (n,), seed=123)
    xt, st = torch.tensor(x, dtype=torch.float32), torch.tensor(sigma)
    over = 0
    for _ in range(trials):
        c = smooth.certify(xt, st, n0, N, alpha)
        over += c.prediction != ABSTAIN and (c.prediction != 1 or c.gap > exact_gap)
    rate = over / trials
    exact = exact_overcertification_rate(p, n0, N, alpha)
    assert exact <= alpha
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / trials), rate
    assert abs(rate - exact) <= 4 * math.sqrt(exact * (1 - exact) / trials), (rate, exact)


# --------------------------------------------------------------------------------------------------
# Corollary 2: uniform noise, generalized cross-polytopes
# --------------------------------------------------------------------------------------------------


class AxisBoundary(torch.nn.Module):
    """f(x) = 1[v.x >= c] for a unit vector v (v = e_1: the axis-aligned boundary x_1 >= c)."""

    def __init__(self, v: np.ndarray, c: float) -> None:
        super().__init__()
        self.inner = LinearTwoClass(v, -c)

    def forward(self, x):
        return self.inner(x)


def uniform_instance(seed: int):
    """Random lambda (anisotropic) and x with exact p = (x_1 - c + lambda_1) / (2 lambda_1) in [0.02, 0.98]
    away from 1/2 (exact gap |2p - 1| in [0.3, 0.96])."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 21))
    lam = rng.uniform(0.05, 1.0, n)
    x = rng.uniform(0.0, 1.0, n)
    p = float(rng.uniform(0.65, 0.98)) if rng.random() < 0.5 else float(rng.uniform(0.02, 0.35))
    c = x[0] + lam[0] - 2 * lam[0] * p
    return n, lam, x, c, p


@pytest.mark.parametrize("rotated", [False, True])
def test_uniform_certified_cross_polytope_never_crosses_boundary(rotated):
    """Corollary 2 soundness: over 40 random instances (alpha = 1e-4) the certified generalized
    cross-polytope {||Λ^-1 U^T δ||_1 <= gap} keeps its vertex nearest the boundary on the predicted side:
    lambda_1 * gap <= |x_1 - c| (boundary v.x >= c with v = e_1, or v = U e_1 when rotated)."""
    alpha = 1e-4
    certified = 0
    for seed in range(40):
        n, lam, x, c, p = uniform_instance(seed)
        u = random_orthogonal(n, np.random.default_rng(2000 + seed)) if rotated else np.eye(n)
        v = u[:, 0]
        x = x + (x[0] - v @ x) * v if rotated else x  # keep v.x = x_1 so that p is unchanged
        margin = float(v @ x - c)  # x_1 - c
        assert (margin + lam[0]) / (2 * lam[0]) == pytest.approx(p)
        true_class = int(margin >= 0)
        smooth = Smooth(AxisBoundary(v, c), 2, (n,), noise="uniform", seed=seed, domain=None)
        cert = smooth.certify(torch.tensor(x, dtype=torch.float32), torch.tensor(lam), 100, 2000, alpha,
                              rotation=torch.tensor(u) if rotated else None)
        if cert.prediction == ABSTAIN:
            continue
        certified += 1
        assert cert.prediction == true_class
        exact_gap = abs(2 * p - 1)
        assert lam[0] * cert.gap <= abs(margin) + 1e-9, (seed, cert.gap, exact_gap)
        assert cert.gap <= exact_gap + 1e-9
        # the vertex -sign(m) gap lambda_1 v lies on the region's boundary and on the predicted side
        vertex = -np.sign(margin) * cert.gap * lam[0] * v
        assert regions.region_norm(vertex, cert.gap * lam, "l1", u if rotated else None) == pytest.approx(1.0)
        assert np.sign(v @ (x + vertex) - c) in (np.sign(margin), 0.0)
    assert certified >= 35


@pytest.mark.parametrize("p", [0.6, 0.75, 0.95])
def test_uniform_gap_matches_exact_with_large_n(p):
    """Corollary 2 with N = 10^6: gap = 2 pA_lower - 1 lies within the binomial-SE window (5 SE) below the
    exact gap 2p - 1 (so |gap - exact| < 0.01), and the cross-polytope then touches the boundary
    x_1 = c at most: lambda_1 * gap <= x_1 - c."""
    rng = np.random.default_rng(17)
    n = 9
    lam = rng.uniform(0.05, 1.0, n)
    x = rng.uniform(0.0, 1.0, n)
    c = x[0] + lam[0] - 2 * lam[0] * p
    N, alpha = 1_000_000, 1e-3
    e1 = np.eye(n)[0]
    smooth = Smooth(AxisBoundary(e1, c), 2, (n,), noise="uniform", batch_size=250_000, seed=9)
    cert = smooth.certify(torch.tensor(x, dtype=torch.float32), torch.tensor(lam), 100, N, alpha)
    lo, hi = p_lower_window(p, N, alpha)
    exact_gap = 2 * p - 1
    assert cert.prediction == 1
    assert 2 * lo - 1 <= cert.gap <= min(2 * hi - 1, exact_gap)
    assert exact_gap - cert.gap < 0.01
    assert lam[0] * cert.gap <= x[0] - c + 1e-9
    assert cert.radius == pytest.approx(cert.gap * lam.min(), rel=1e-6)
    assert cert.log_volume == pytest.approx(float(regions.log_volume(lam, cert.gap, "l1")), rel=1e-6)


def test_uniform_overcertification_rate_is_at_most_alpha():
    """Corollary 2 + Clopper-Pearson: 4000 seeded CERTIFY runs (n0 = 20, N = 100, alpha = 0.1, p = 0.7):
    the over-certification rate (wrong class or gap > 2p - 1) is <= alpha + 3 SE and within 4 SE of its
    exact binomial value (~0.072)."""
    n, n0, N, alpha, trials = 6, 20, 100, 0.1, 4000
    rng = np.random.default_rng(31)
    lam = rng.uniform(0.1, 1.0, n)
    x = rng.uniform(0.0, 1.0, n)
    p = 0.7
    c = x[0] + lam[0] - 2 * lam[0] * p
    exact_gap = 2 * p - 1
    smooth = Smooth(AxisBoundary(np.eye(n)[0], c), 2, (n,), noise="uniform", seed=321)
    xt, lt = torch.tensor(x, dtype=torch.float32), torch.tensor(lam)
    over = 0
    for _ in range(trials):
        cert = smooth.certify(xt, lt, n0, N, alpha)
        over += cert.prediction != ABSTAIN and (cert.prediction != 1 or cert.gap > exact_gap + 1e-12)
    rate = over / trials
    exact = exact_overcertification_rate(p, n0, N, alpha)
    assert exact <= alpha
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / trials), rate
    assert abs(rate - exact) <= 4 * math.sqrt(exact * (1 - exact) / trials), (rate, exact)


# --------------------------------------------------------------------------------------------------
# the Clopper-Pearson bound
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n,alpha", [(1, 0.05), (10, 0.1), (100, 0.001), (1000, 0.05), (100_000, 0.001)])
def test_lower_confidence_bound_matches_scipy_exact_interval(n, alpha):
    """The one-sided (1 - alpha) Clopper-Pearson bound equals the lower end of scipy's two-sided
    (1 - 2 alpha) exact interval, for k = 0, 1, ..., n (and vectorized over k)."""
    ks = sorted({0, 1, n // 3, n // 2, n - 1, n} & set(range(n + 1)))
    got = lower_confidence_bound(np.array(ks), n, alpha)
    want = [reference_lcb(k, n, alpha) for k in ks]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert float(lower_confidence_bound(0, n, alpha)) == 0.0
    assert float(lower_confidence_bound(n, n, alpha)) == pytest.approx(alpha ** (1 / n), rel=1e-9)
    assert np.all(np.diff(got) >= 0) and np.all(np.asarray(got) < np.array(ks) / n + 1e-15)


@pytest.mark.parametrize("p,n,alpha", [(0.3, 50, 0.05), (0.9, 200, 0.1), (0.55, 1000, 0.01)])
def test_lower_confidence_bound_coverage_by_simulation(p, n, alpha):
    """Coverage: over 20000 seeded binomial draws, P(bound > p) <= alpha + 3 SE, and it matches the exact
    sum_k Bin(k; n, p) 1[bound(k) > p] within 4 SE."""
    trials = 20_000
    ks = np.random.default_rng(5).binomial(n, p, size=trials)
    rate = float(np.mean(lower_confidence_bound(ks, n, alpha) > p))
    k = np.arange(n + 1)
    exact = float(binom.pmf(k, n, p)[lower_confidence_bound(k, n, alpha) > p].sum())
    assert exact <= alpha
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / trials)
    assert abs(rate - exact) <= 4 * math.sqrt(max(exact * (1 - exact), 1e-4) / trials)


# --------------------------------------------------------------------------------------------------
# PREDICT, abstention, bookkeeping
# --------------------------------------------------------------------------------------------------


def test_predict_abstains_on_coin_flip_and_answers_clear_cases():
    """PREDICT (Cohen et al.): on a classifier with g(x) = (1/2, 1/2) exactly (x on a linear boundary) it
    abstains in >= 1 - alpha - 3 SE of 300 runs; far from the boundary it always returns the right class."""
    n = 6
    w = np.eye(n)[0]
    smooth = Smooth(LinearTwoClass(w, 0.0), 2, (n,), seed=4, domain=None)
    sigma = torch.full((n,), 0.5)
    on_boundary = torch.zeros(n)
    alpha, trials = 0.05, 300
    abstain = sum(smooth.predict(on_boundary, sigma, 200, alpha) == ABSTAIN for _ in range(trials))
    assert abstain / trials >= 1 - alpha - 3 * math.sqrt(alpha * (1 - alpha) / trials)
    for cls, x1 in ((1, 1.5), (0, -1.5)):  # p = Φ(3) = 0.9987 for the true class
        x = torch.zeros(n)
        x[0] = x1
        assert all(smooth.predict(x, sigma, 200, alpha) == cls for _ in range(20))


def test_certify_abstains_on_coin_flip():
    """CERTIFY abstains (gap 0, radius 0, log volume -inf) when pA_lower <= 1/2, as on a 50/50 classifier."""
    n = 4
    smooth = Smooth(LinearTwoClass(np.eye(n)[0], 0.0), 2, (n,), noise="uniform", seed=8)
    cert = smooth.certify(torch.zeros(n), 0.3, 50, 5000, 0.01)
    assert cert.prediction == ABSTAIN
    assert cert.p_lower <= 0.5 and cert.gap == 0.0 and cert.radius == 0.0
    assert cert.log_volume == -math.inf
    assert cert.n == 5000 and 0 < cert.count < 5000


@pytest.mark.parametrize("noise", ["gaussian", "uniform"])
def test_counts_do_not_depend_on_the_batch_size(noise):
    """Class counts of a small CNN under 10,000 draws are identical whatever the batch (BATCH_SIZE, one batch,
    uneven batches): the draws concatenate (`noise.standard_noise`), and each sample's prediction is its own."""
    torch.manual_seed(0)
    model = SmallCNN((1, 8, 8), 10).eval()
    x = torch.rand(1, 8, 8)
    counts = [Smooth(model, 10, (1, 8, 8), noise, batch_size=b).sample_counts(
        x, 0.5, 10_000, generator=torch.Generator().manual_seed(5)) for b in (BATCH_SIZE, 10_000, 3_000, 16)]
    assert len(np.unique(counts[0])) > 2  # several classes drawn: the comparison is not trivial
    for c in counts[1:]:
        np.testing.assert_array_equal(c, counts[0])


def test_certify_is_deterministic_given_seed():
    """Same seed -> identical certificate; a different seed -> (almost surely) different counts."""
    n = 5
    model = LinearTwoClass(np.ones(n), -2.0)
    x = torch.full((n,), 0.5)
    a = Smooth(model, 2, (n,), seed=1).certify(x, 0.4, 10, 1000, 0.01)
    b = Smooth(model, 2, (n,), seed=1).certify(x, 0.4, 10, 1000, 0.01)
    assert a == b
    # counts are Bin(1000, ~0.7): two seeds may tie by chance (~3%), five distinct seeds all tying cannot
    others = {Smooth(model, 2, (n,), seed=s).certify(x, 0.4, 10, 1000, 0.01).count for s in range(2, 7)}
    assert len(others | {a.count}) > 1
    # an explicit generator is used instead of the Smooth's own: same generator seed -> same result
    g1, g2 = torch.Generator().manual_seed(99), torch.Generator().manual_seed(99)
    d1 = Smooth(model, 2, (n,), seed=1).certify(x, 0.4, 10, 1000, 0.01, generator=g1)
    d2 = Smooth(model, 2, (n,), seed=5).certify(x, 0.4, 10, 1000, 0.01, generator=g2)
    assert d1 == d2


def test_certificate_from_bound_closed_forms():
    """certificate_from_bound: l2 gap Φ^-1(pA), l1 gap 2pA - 1, radius min theta * gap, proxy radius
    gap * geometric mean(theta); abstains at pA_lower = 1/2 exactly."""
    theta = np.array([0.2, 0.5, 1.0, 0.8])
    c2 = certificate_from_bound(1, 0.9, theta, "l2")
    assert c2.gap == pytest.approx(norm.ppf(0.9), rel=1e-12)
    assert c2.radius == pytest.approx(0.2 * norm.ppf(0.9), rel=1e-12)
    assert c2.radius_proxy == pytest.approx(norm.ppf(0.9) * 0.08 ** 0.25, rel=1e-12)
    c1 = certificate_from_bound(0, 0.9, theta, "l1")
    assert c1.gap == pytest.approx(0.8, rel=1e-12) and c1.prediction == 0
    assert c1.radius == pytest.approx(0.16, rel=1e-12)
    assert certificate_from_bound(1, 0.5, theta, "l2").prediction == ABSTAIN
    assert certificate_from_bound(1, 0.5, theta, "l1").gap == 0.0


@pytest.mark.parametrize("args, match", [
    ((0, 1.0, np.array([0.5, 0.5]), "l2"), "infinite l2 radius"),          # was: radius inf
    ((0, 0.9, np.array([-0.5, 0.5]), "l2"), "theta must be finite and > 0"),  # was: radius -0.64
    ((0, 0.9, np.array([0.5, np.nan]), "l1"), "theta must be finite and > 0"),
    ((-1, 0.9, np.array([0.5, 0.5]), "l2"), "ABSTAIN"),                      # was: an abstention with radius 0.64
    ((1.7, 0.9, np.array([0.5, 0.5]), "l2"), "prediction must be a class index"),
    ((-7, 0.9, np.array([0.5, 0.5]), "l2"), "prediction must be a class index"),
    ((True, 0.9, np.array([0.5, 0.5]), "l2"), "prediction must be a class index"),
    ((0, 0.9, np.array([0.5, 0.5]), "l2", 150, 100), "count must be an integer in"),   # was: stored as given
    ((0, 0.9, np.array([0.5, 0.5]), "l2", -5, 100), "count must be an integer in"),
    ((0, 0.9, np.array([0.5, 0.5]), "l2", 1.5, 100), "count must be an integer in"),
    ((0, 0.9, np.array([0.5, 0.5]), "l2", 90, -1), "n must be an integer"),
])
def test_certificate_from_bound_refuses_meaningless_input(args, match):
    """Each of these gave a certificate; now each names what is wrong."""
    with pytest.raises(ValueError, match=match):
        certificate_from_bound(*args)
    # what stays valid: p_lower = 1 is a finite l1 certificate, and p_lower <= 1/2 abstains for any class
    assert certificate_from_bound(0, 1.0, np.array([0.5, 0.5]), "l1").radius == pytest.approx(0.5)
    assert certificate_from_bound(ABSTAIN, 0.3, np.array([0.5, 0.5]), "l2").prediction == ABSTAIN
    assert certificate_from_bound(np.int64(2), 0.9, np.array([0.5, 0.5]), "l2").prediction == 2


def test_certify_multidimensional_input_with_rotation():
    """Images (c, h, w): theta of the input's shape and a (chw x chw) rotation act on the flattened input;
    the Gaussian gap is still bounded by the rotated closed form m / ||Θ U^T w||."""
    shape = (1, 2, 3)
    n = 6
    rng = np.random.default_rng(3)
    sigma = rng.uniform(0.1, 0.6, n)
    u = random_orthogonal(n, rng)
    w = rng.normal(size=n)
    x = rng.uniform(0, 1, n)
    s = float(np.linalg.norm(sigma * (u.T @ w)))
    b = 1.5 * s - float(w @ x)
    smooth = Smooth(LinearTwoClass(w, b), 2, shape, seed=0, batch_size=1000)
    cert = smooth.certify(torch.tensor(x, dtype=torch.float32).reshape(shape),
                          torch.tensor(sigma).reshape(shape), 100, 20_000, 0.001, rotation=torch.tensor(u))
    assert cert.prediction == 1
    assert 1.5 - 0.1 < cert.gap <= 1.5
