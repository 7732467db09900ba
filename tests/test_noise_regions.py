"""Smoothing noise (ancer_lite.core.noise, ANCER §4) and certified regions and their sizes (ancer_lite.core.regions,
ANCER §5 and Proposition 4), checked against closed forms."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.special import gammaln
from scipy.stats import norm

from ancer_lite.core import regions
from ancer_lite.core.noise import GAUSSIAN, UNIFORM, sample_noise, scale_noise, standard_noise, uniform_lambda
from ancer_lite.core.parameters import ORTHOGONALITY_TOL, check_rotation

IMAGENET_DIM = 3 * 224 * 224  # 150,528


def random_orthogonal(n: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-random orthogonal matrix (QR of a Gaussian matrix with the sign fix)."""
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return q * np.sign(np.diag(r))


def random_l1_sphere(num: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Points with ||v||_1 = 1: random signs times a uniform point of the simplex."""
    e = rng.exponential(size=(num, n))
    return e / e.sum(axis=1, keepdims=True) * rng.choice([-1.0, 1.0], size=(num, n))


def random_l2_sphere(num: int, n: int, rng: np.random.Generator) -> np.ndarray:
    g = rng.normal(size=(num, n))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


# --------------------------------------------------------------------------------------------------
# noise (§4): moments, the sigma <-> lambda convention, rotation, determinism
# --------------------------------------------------------------------------------------------------

NUM = 200_000


def test_gaussian_noise_moments_per_dimension():
    """§4.1: N(0, diag(theta^2)): per-dimension sample mean ~ 0 (5 SE = 5 theta / sqrt(N)) and variance
    ~ theta^2 (5 SE = 5 theta^2 sqrt(2 / N))."""
    theta = torch.tensor([0.05, 0.1, 0.25, 0.5, 1.0, 2.0], dtype=torch.float64)
    eps = sample_noise(GAUSSIAN, theta, NUM, (6,), torch.Generator().manual_seed(0), dtype=torch.float64)
    assert eps.shape == (NUM, 6)
    mean, var = eps.mean(0), eps.var(0)
    assert torch.all(mean.abs() <= 5 * theta / math.sqrt(NUM))
    assert torch.all((var - theta**2).abs() <= 5 * theta**2 * math.sqrt(2 / NUM))


def test_uniform_noise_moments_and_support_per_dimension():
    """§4.2: U[-lambda_i, lambda_i]: |eps_i| <= lambda_i, mean ~ 0 (5 SE), variance ~ lambda_i^2 / 3 with
    SE = sqrt(Var(eps^2) / N), Var(eps^2) = lambda^4 (1/5 - 1/9) = 4 lambda^4 / 45."""
    lam = torch.tensor([0.05, 0.1, 0.25, 0.5, 1.0, 2.0], dtype=torch.float64)
    eps = sample_noise(UNIFORM, lam, NUM, (6,), torch.Generator().manual_seed(1), dtype=torch.float64)
    assert torch.all(eps.abs() <= lam)
    assert torch.all(eps.abs().max(0).values >= 0.999 * lam)  # the support is the whole interval
    sd = lam / math.sqrt(3)
    assert torch.all(eps.mean(0).abs() <= 5 * sd / math.sqrt(NUM))
    var_se = torch.sqrt(4 * lam**4 / 45 / NUM)
    assert torch.all((eps.pow(2).mean(0) - lam**2 / 3).abs() <= 5 * var_se)


def test_uniform_lambda_gives_standard_deviation_sigma():
    """uniform_lambda(sigma) is the half-width of the uniform noise with standard deviation sigma (RS4A's
    convention for reporting l1 results against sigma): lambda^2 / 3 = sigma^2, checked also empirically."""
    for sigma in (0.12, 0.25, 0.5, 1.0):
        lam = uniform_lambda(sigma)
        assert lam**2 / 3 == pytest.approx(sigma**2, rel=1e-12)
        eps = sample_noise(UNIFORM, lam, NUM, (2,), torch.Generator().manual_seed(2), dtype=torch.float64)
        assert float(eps.std()) == pytest.approx(sigma, rel=0.01)


@pytest.mark.parametrize("noise", [GAUSSIAN, UNIFORM])
def test_rotated_noise_covariance(noise):
    """RANCER's rotated noise eps = U (theta * z): empirical covariance matches U diag(theta^2 v) U^T
    (v = 1 for Gaussian, 1/3 for uniform), entrywise within 6 standard errors."""
    n = 5
    rng = np.random.default_rng(3)
    u = random_orthogonal(n, rng)
    theta = np.array([0.1, 0.3, 0.5, 1.0, 2.0])
    eps = sample_noise(noise, torch.tensor(theta), NUM, (n,), torch.Generator().manual_seed(4),
                       rotation=torch.tensor(u), dtype=torch.float64).numpy()
    v = 1.0 if noise == GAUSSIAN else 1.0 / 3.0
    cov = u @ np.diag(v * theta**2) @ u.T
    emp = eps.T @ eps / NUM
    # SE of a product-moment estimate: sqrt(Var(e_i e_j) / N) <= sqrt(3 cov_ii cov_jj / N) for these laws
    se = np.sqrt(3 * np.outer(np.diag(cov), np.diag(cov)) / NUM)
    assert np.all(np.abs(emp - cov) <= 6 * se)
    # and it is not the unrotated covariance
    assert np.abs(emp - np.diag(v * theta**2)).max() > 20 * se.max()


def test_scale_noise_applies_theta_then_rotation_exactly():
    """scale_noise(eps, theta, U) = U (theta * eps) on flattened inputs (here images (1, 2, 3))."""
    rng = np.random.default_rng(5)
    u = random_orthogonal(6, rng)
    eps = torch.tensor(rng.normal(size=(4, 1, 2, 3)))
    theta = torch.tensor(rng.uniform(0.1, 1.0, size=(1, 2, 3)))
    out = scale_noise(eps, theta, torch.tensor(u))
    want = (u @ (theta.reshape(-1).numpy() * eps.reshape(4, -1).numpy()).T).T.reshape(4, 1, 2, 3)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(scale_noise(eps, theta).numpy(), (eps * theta).numpy(), rtol=0, atol=0)


@pytest.mark.parametrize("noise", [GAUSSIAN, UNIFORM])
def test_noise_is_deterministic_given_seed(noise):
    """Seeded generators reproduce the same draws; different seeds give different draws; a scalar theta
    broadcasts to the input shape."""
    a = sample_noise(noise, 0.5, 10, (2, 3), torch.Generator().manual_seed(7))
    b = sample_noise(noise, 0.5, 10, (2, 3), torch.Generator().manual_seed(7))
    c = sample_noise(noise, 0.5, 10, (2, 3), torch.Generator().manual_seed(8))
    assert a.shape == (10, 2, 3)
    assert torch.equal(a, b) and not torch.equal(a, c)
    z = standard_noise(noise, 10, (2, 3), torch.Generator().manual_seed(7))
    assert torch.allclose(a, 0.5 * z)


def test_check_rotation_accepts_orthogonal_matrices():
    """check_rotation (the package's one orthogonality test) accepts orthogonal matrices, as arrays or tensors, also
    rounded to float32 (a deviation of ~1e-8), and returns the deviation it measured, within ORTHOGONALITY_TOL."""
    u = random_orthogonal(4, np.random.default_rng(0))
    assert check_rotation(u, 4) < 1e-14
    assert check_rotation(torch.tensor(u), 4) < 1e-14
    assert check_rotation(torch.tensor(u, dtype=torch.float32), 4) <= ORTHOGONALITY_TOL
    big = random_orthogonal(784, np.random.default_rng(1))  # an MNIST-sized U rounded to float32 still passes
    assert 0 < check_rotation(torch.tensor(big, dtype=torch.float32), 784) < 1e-7
    with pytest.raises(ValueError, match="rotation must be orthogonal"):
        check_rotation(0.99996 * np.eye(4), 4)  # 4e-5 from I: another matrix


# --------------------------------------------------------------------------------------------------
# gaps (Corollaries 1-2)
# --------------------------------------------------------------------------------------------------


def test_gap_from_lower_bound_closed_forms():
    """Corollary 1: gap = (Φ^-1(pA) - Φ^-1(1 - pA)) / 2 = Φ^-1(pA); Corollary 2: gap = pA - (1 - pA) = 2pA - 1;
    both 0 where pA <= 1/2 (no certificate), and vectorized."""
    p = np.array([0.0, 0.2, 0.5, 0.5000001, 0.6, 0.9, 0.999])
    l2 = regions.gap_from_lower_bound(p, "l2")
    l1 = regions.gap_from_lower_bound(p, "l1")
    pos = p > 0.5
    np.testing.assert_allclose(l2[pos], 0.5 * (norm.ppf(p[pos]) - norm.ppf(1 - p[pos])), rtol=1e-12)
    np.testing.assert_allclose(l1[pos], p[pos] - (1 - p[pos]), rtol=1e-9)
    assert np.all(l2[~pos] == 0) and np.all(l1[~pos] == 0)
    assert float(regions.gap_from_lower_bound(0.8413447460685429, "l2")) == pytest.approx(1.0, rel=1e-12)
    for bad in (1.5, -0.1, np.nan, [0.7, 1.2]):  # not probabilities in [0, 1]
        with pytest.raises(ValueError, match="p_lower must be probabilities"):
            regions.gap_from_lower_bound(bad, "l2")


# --------------------------------------------------------------------------------------------------
# region membership
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm_name", ["l1", "l2"])
@pytest.mark.parametrize("rotated", [False, True])
def test_region_norm_and_contains(norm_name, rotated):
    """A point x + U (s * v) has region norm ||v||_p, so it is in {||S^-1 U^T δ||_p <= 1} iff ||v||_p <= 1;
    in particular the vertices/axis points x ± s_i U e_i lie exactly on the boundary."""
    n = 7
    rng = np.random.default_rng(10)
    u = random_orthogonal(n, rng) if rotated else np.eye(n)
    s = rng.uniform(0.05, 2.0, n)
    x = rng.normal(size=n)
    p = 1 if norm_name == "l1" else 2
    v = rng.normal(size=(500, n))
    v *= rng.uniform(0.5, 1.5, (500, 1)) / np.linalg.norm(v, ord=p, axis=1, keepdims=True)  # ||v||_p in [0.5, 1.5]
    pts = x + (s * v) @ u.T
    rot = u if rotated else None
    np.testing.assert_allclose(regions.region_norm(pts - x, s, norm_name, rot),
                               np.linalg.norm(v, ord=p, axis=1), rtol=1e-10)
    inside = regions.contains(pts, x, s, norm_name, rot)
    assert inside.shape == (500,)
    np.testing.assert_array_equal(inside, np.linalg.norm(v, ord=p, axis=1) <= 1.0)
    assert 0 < inside.sum() < 500
    axis_pts = x + np.concatenate([s[:, None] * u.T, -s[:, None] * u.T])  # rows: x ± s_i U e_i
    np.testing.assert_allclose(regions.region_norm(axis_pts - x, s, norm_name, rot), 1.0, rtol=1e-12)
    assert not regions.contains(x + 1.001 * s[0] * u[:, 0], x, s, norm_name, rot)
    if rotated:  # without the rotation the same point is measured differently
        assert not np.allclose(regions.region_norm(axis_pts - x, s, norm_name), 1.0)


def test_semi_axes():
    """The region's semi-axes are gap * theta_i, broadcasting a vector of gaps over leading axes."""
    theta = np.array([0.1, 0.2, 0.4])
    np.testing.assert_allclose(regions.semi_axes(theta, 2.0), [0.2, 0.4, 0.8])
    np.testing.assert_allclose(regions.semi_axes(np.tile(theta, (2, 1)), np.array([1.0, 3.0])),
                               [[0.1, 0.2, 0.4], [0.3, 0.6, 1.2]])


# --------------------------------------------------------------------------------------------------
# enclosed l_p balls (§5.1-5.2)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm_name", ["l1", "l2"])
@pytest.mark.parametrize("rotated", [False, True])
def test_enclosed_ball_is_inside_region(norm_name, rotated):
    """§5.1-5.2: the enclosed l_p ball of radius rho = enclosed_radius(...) lies inside the region (points on
    its sphere and its vertices ±rho e_j), and rho is the largest such: (1 + 1e-6) rho pokes out.
    Axis-aligned (both norms) and rotated ellipsoids: rho = min_i theta_i * gap."""
    n = 9
    rng = np.random.default_rng(20 + rotated)
    theta = rng.uniform(0.05, 1.0, n)
    gap = 0.7
    u = random_orthogonal(n, rng) if rotated else None
    rho = float(regions.enclosed_radius(theta, gap, norm_name, u))
    if not (rotated and norm_name == "l1"):
        assert rho == pytest.approx(theta.min() * gap, rel=1e-12)
    s = gap * theta
    sphere = random_l1_sphere(5000, n, rng) if norm_name == "l1" else random_l2_sphere(5000, n, rng)
    vertices = np.concatenate([np.eye(n), -np.eye(n)])
    pts = rho * np.concatenate([sphere, vertices])
    r = regions.region_norm(pts, s, norm_name, u)
    assert np.all(r <= 1 + 1e-12)
    # tightness: the worst boundary point of the ball touches the region's boundary
    if norm_name == "l1":  # the l1 ball's worst points are its vertices (convexity)
        assert r[-2 * n:].max() == pytest.approx(1.0, rel=1e-12)
        j = int(np.argmax(r[-2 * n:]))
        assert regions.region_norm((1 + 1e-6) * rho * vertices[j], s, norm_name, u) > 1
    else:  # the l2 ball touches the ellipsoid along its shortest axis U e_argmin
        k = int(np.argmin(theta))
        axis = u[:, k] if rotated else np.eye(n)[k]
        assert regions.region_norm(rho * axis, s, "l2", u) == pytest.approx(1.0, rel=1e-12)
        assert regions.region_norm((1 + 1e-6) * rho * axis, s, "l2", u) > 1


def test_enclosed_l1_ball_of_rotated_cross_polytope_closed_form():
    """Rotated generalized cross-polytope: rho = gap / max_j ||Λ^-1 U^T e_j||_1, which can differ from
    min lambda * gap. 2-D check: a 45-degree rotated l1 ball of radius g (lambda = 1) is the square
    |d_1|, |d_2| <= g / sqrt(2), whose largest inscribed l1 ball has radius g / sqrt(2)."""
    c = 1 / math.sqrt(2)
    u = np.array([[c, -c], [c, c]])
    assert float(regions.enclosed_radius(np.ones(2), 0.8, "l1", u)) == pytest.approx(0.8 * c, rel=1e-12)
    # n-D: brute-force max over the l1 ball's vertices with region_norm (an independent code path)
    rng = np.random.default_rng(30)
    n = 12
    lam = rng.uniform(0.05, 1.0, n)
    u = random_orthogonal(n, rng)
    gap = 0.4
    rho = float(regions.enclosed_radius(lam, gap, "l1", u))
    worst = regions.region_norm(np.eye(n), lam, "l1", u).max()
    assert rho == pytest.approx(gap / worst, rel=1e-12)
    assert rho < lam.min() * gap  # the rotation does matter here


# --------------------------------------------------------------------------------------------------
# proxy radius and volume (§5.1, §5.2, Proposition 4)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm_name", ["l1", "l2"])
def test_log_volume_small_n_closed_forms(norm_name):
    """Ellipse area pi r^2 s1 s2 and ellipsoid volume 4/3 pi r^3 s1 s2 s3 (§5.1); Proposition 4's
    (2r)^n / n! prod lambda_i: the diamond 2 r^2 l1 l2 and octahedron 4/3 r^3 l1 l2 l3."""
    r = 0.7
    t2, t3 = np.array([0.3, 2.0]), np.array([0.3, 2.0, 0.9])
    if norm_name == "l2":
        want2, want3 = math.pi * r**2 * t2.prod(), 4 / 3 * math.pi * r**3 * t3.prod()
    else:
        want2, want3 = 2 * r**2 * t2.prod(), 4 / 3 * r**3 * t3.prod()
    assert math.exp(regions.log_volume(t2, r, norm_name)) == pytest.approx(want2, rel=1e-12)
    assert math.exp(regions.log_volume(t3, r, norm_name)) == pytest.approx(want3, rel=1e-12)


@pytest.mark.parametrize("norm_name", ["l1", "l2"])
def test_log_volume_monte_carlo(norm_name):
    """The volume of a rotated 4-D region by Monte Carlo (hit fraction of its bounding box, 200k seeded
    points) matches exp(log_volume) within 5 binomial SE: volume is rotation-invariant."""
    rng = np.random.default_rng(40)
    n, gap = 4, 0.5
    theta = np.array([0.2, 0.5, 1.0, 1.5])
    u = random_orthogonal(n, rng)
    s = gap * theta
    half = np.full(n, s.max())  # the region lies in the ball of radius max s_i
    pts = rng.uniform(-half, half, size=(200_000, n))
    frac = regions.contains(pts, np.zeros(n), s, norm_name, u).mean()
    box = float(np.prod(2 * half))
    vol = math.exp(regions.log_volume(theta, gap, norm_name))
    q = vol / box
    assert abs(frac - q) <= 5 * math.sqrt(q * (1 - q) / 200_000)


@pytest.mark.parametrize("norm_name", ["l1", "l2"])
def test_proxy_radius_and_log_volume_at_imagenet_scale(norm_name):
    """§5 at n = 150,528: proxy radius R~ = gap * (prod theta)^(1/n) is finite, equals theta * gap for
    constant theta (the isotropic certified radius) and lies in [min, max] theta * gap; log_volume is finite
    and equals n log R~ + log V(unit l_p ball), with log V = (n/2) log pi - lgamma(n/2 + 1) for l2 and
    n log 2 - lgamma(n + 1) for l1 (computed with math.lgamma)."""
    n = IMAGENET_DIM
    gap = 0.9
    const = np.full(n, 0.25)
    assert float(regions.proxy_radius(const, gap)) == pytest.approx(0.25 * gap, rel=1e-12)
    theta = np.random.default_rng(50).uniform(0.01, 1.0, n)
    proxy = float(regions.proxy_radius(theta, gap))
    assert math.isfinite(proxy) and theta.min() * gap < proxy < theta.max() * gap
    assert proxy == pytest.approx(gap * math.exp(np.log(theta).sum() / n), rel=1e-12)
    log_unit = (0.5 * n * math.log(math.pi) - math.lgamma(0.5 * n + 1) if norm_name == "l2"
                else n * math.log(2) - math.lgamma(n + 1))
    for th in (const, theta):
        lv = float(regions.log_volume(th, gap, norm_name))
        assert math.isfinite(lv)
        want = n * math.log(float(regions.proxy_radius(th, gap))) + log_unit
        assert lv == pytest.approx(want, rel=1e-10)
    # the same via scipy's gammaln on an (images, 3, 224, 224)-shaped batch flattened per image
    batch = np.stack([const, theta])
    lv = regions.log_volume(batch, np.array([gap, gap]), norm_name)
    assert lv.shape == (2,) and np.all(np.isfinite(lv))
    if norm_name == "l2":
        assert lv[0] == pytest.approx(n * math.log(0.25 * gap) + 0.5 * n * math.log(math.pi)
                                      - gammaln(0.5 * n + 1), rel=1e-10)


@pytest.mark.parametrize("norm_name", ["l1", "l2"])
def test_log_volume_scaling(norm_name):
    """The volume scales as r^n in the gap and as prod theta_i: log V(theta, k r) - log V(theta, r) = n log k
    and log V(c theta, r) - log V(theta, r) = n log c; it is -inf (and the proxy radius 0) without a gap."""
    for n in (3, 1000, IMAGENET_DIM):
        theta = np.random.default_rng(n).uniform(0.1, 1.0, n)
        base = float(regions.log_volume(theta, 0.5, norm_name))
        assert float(regions.log_volume(theta, 1.5, norm_name)) - base == pytest.approx(n * math.log(3), rel=1e-9)
        assert float(regions.log_volume(2 * theta, 0.5, norm_name)) - base == pytest.approx(n * math.log(2),
                                                                                          rel=1e-9)
    assert regions.log_volume(np.ones(4), 0.0, norm_name) == -np.inf
    assert float(regions.proxy_radius(np.ones(4), 0.0)) == 0.0


def test_l2_volume_dominates_l1_volume_for_same_scales():
    """The cross-polytope ||Λ^-1 δ||_1 <= r sits inside the ellipsoid ||Λ^-1 δ||_2 <= r, so its volume is
    smaller (ratio n! / ... grows fast); both share the proxy radius."""
    theta = np.random.default_rng(60).uniform(0.1, 1.0, 50)
    assert regions.log_volume(theta, 0.8, "l1") < regions.log_volume(theta, 0.8, "l2")
