"""UCAN Table 1 (ancer_lite.core.ucan_radii): each radius against its source by Monte Carlo or closed form, the
anisotropic transform of Theorem 3.2 / Corollary 3.3, the ALM (Eq. 23), the printed-vs-correct errata and input checks.

Monte Carlo tolerance. A half-space classifier f(z) = 1[w·z <= b] is calibrated on n noise draws with b the
empirical p_A-quantile of w·ε; its smoothed probability at x + δ is F(b - w·δ), F the CDF of w·ε. By the DKW
inequality (Massart's constant), sup_t |F_n(t) - F(t)| <= TOL_DKW with probability >= 1 - 2 exp(-2 n TOL_DKW²)
= 1 - BETA, for every threshold at once, so the classifier's true p_A lies within TOL = TOL_DKW + 1/n of the
target and every estimated probability within TOL of the truth. "Does not flip" is asserted as F_n >= 1/2 - TOL at
the boundary of R(p_A - TOL) (the radius certified from a valid lower bound); "flips just beyond" (tight rows) as
F_n < 1/2 - TOL at 1.05 R(p_A + TOL), i.e. the true probability is below 1/2. Each Monte Carlo assertion fails by
chance with probability <= BETA = 1e-6.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm as normal

from ancer_lite import proof_checks
from ancer_lite.core import noise as repo_noise
from ancer_lite.core import regions
from ancer_lite.core import ucan_radii as U

N_MC = 400_000
BETA = 1e-6
TOL_DKW = math.sqrt(math.log(2.0 / BETA) / (2.0 * N_MC))  # ~0.0043
TOL = TOL_DKW + 1.0 / N_MC
KAPPA = 1.05  # "just beyond the radius"


# --------------------------------------------------------------------------------------------------
# noise samplers (the isotropic families of Table 1) and the half-space Monte Carlo
# --------------------------------------------------------------------------------------------------


def sample(noise: str, n: int, d: int, lam: float, rng: np.random.Generator, a: float | None = None) -> np.ndarray:
    """n draws of the isotropic noise of scale lam in R^d. The ℓ∞ families are drawn as mixtures of uniform cubes
    [-s, s]^d: exp(-||x||_∞/λ) with s ~ Gamma(d + 1, λ), (1 + ||x||_∞/λ)^-a with s/λ ~ BetaPrime(d + 1, a - d)
    (checked against the laws of ||x||_∞ in test_samplers_match_their_laws)."""
    if noise == U.GAUSSIAN:
        return lam * rng.standard_normal((n, d))
    if noise == U.LAPLACE:
        return rng.laplace(0.0, lam, (n, d))
    if noise == U.UNIFORM_LINF:
        return rng.uniform(-lam, lam, (n, d))
    if noise == U.EXP_LINF:
        return rng.uniform(-1.0, 1.0, (n, d)) * rng.gamma(d + 1.0, lam, (n, 1))
    if noise == U.POWER_LAW_LINF:
        t = rng.gamma(d + 1.0, 1.0, (n, 1)) / rng.gamma(a - d, 1.0, (n, 1))
        return rng.uniform(-1.0, 1.0, (n, d)) * t * lam
    raise AssertionError(noise)


def worst_direction(norm: str, d: int, w: np.ndarray) -> np.ndarray:
    """The unit-norm δ direction maximizing w·δ over the unit ball of `norm` (the adversary's best move against
    the half-space with normal w)."""
    if norm == U.L1:
        k = int(np.argmax(np.abs(w)))
        e = np.zeros(d)
        e[k] = np.sign(w[k])
        return e
    if norm == U.L2:
        return w / np.linalg.norm(w)
    return np.sign(w)


def halfspace_probabilities(eps: np.ndarray, w: np.ndarray, p_a: float, shifts: list[float]) -> list[float]:
    """Calibrate b = empirical p_a-quantile of w·ε and return the estimated P(w·(δ + ε) <= b) for w·δ in shifts."""
    proj = np.sort(eps @ w)
    b = np.quantile(proj, p_a)
    return [np.searchsorted(proj, b - s, side="right") / proj.size for s in shifts]


def mc_sound_and_tight(row: str, noise: str, d: int, lam: float, p_a: float, w: np.ndarray, seed: int,
                       a: float | None = None, tight: bool = False, kappa: float = KAPPA) -> tuple[float, float]:
    """Estimated smoothed probabilities at δ on the boundary of R(p_a - TOL) (worst direction for the row's norm)
    and at kappa R(p_a + TOL); asserts no flip, and a flip when `tight`."""
    rng = np.random.default_rng(seed)
    eps = sample(noise, N_MC, d, lam, rng, a)
    direction = worst_direction(U.table1_row(row).norm, d, w)
    r_lo = U.isotropic_radius(row, p_a - TOL, lam, d=d, a=a)
    r_hi = U.isotropic_radius(row, p_a + TOL, lam, d=d, a=a)
    inside, beyond = halfspace_probabilities(eps, w, p_a, [r_lo * (w @ direction), kappa * r_hi * (w @ direction)])
    assert inside >= 0.5 - TOL, f"{row}: smoothed prediction flips inside the radius ({inside:.4f})"
    if tight:
        assert beyond < 0.5 - TOL, f"{row}: no flip at {kappa} R ({beyond:.4f}), radius not tight"
    return inside, beyond


def axis(d: int, k: int = 0) -> np.ndarray:
    e = np.zeros(d)
    e[k] = 1.0
    return e


def diagonal(d: int) -> np.ndarray:
    return np.ones(d) / math.sqrt(d)


# --------------------------------------------------------------------------------------------------
# Table 1 registry and the samplers the Monte Carlo relies on
# --------------------------------------------------------------------------------------------------


def test_table1_has_the_nine_rows_and_increasing_positive_radii():
    assert [r.key for r in U.TABLE1] == [
        "gaussian/l2", "gaussian/l1", "gaussian/linf", "laplace/l1", "exp_linf/l1", "exp_linf/linf",
        "uniform_linf/l1", "uniform_linf/linf", "power_law_linf/l1"]
    grid = np.linspace(0.51, 0.999, 50)
    for row in U.TABLE1:
        r = U.isotropic_radius(row.key, grid, 0.8, d=5, a=9.0)
        assert r.shape == grid.shape and (r > 0).all() and (np.diff(r) > 0).all(), row.key
    # closed-form spot values (λ = 1, p_A = 0.8, d = 4, a = 10)
    expect = {"gaussian/l2": normal.ppf(0.8), "gaussian/l1": normal.ppf(0.8), "gaussian/linf": normal.ppf(0.8) / 2,
              "laplace/l1": math.log(2.5), "exp_linf/l1": 2.4, "exp_linf/linf": math.log(2.5),
              "uniform_linf/l1": 0.6, "uniform_linf/linf": 2 * (1 - 0.7 ** 0.25), "power_law_linf/l1": 0.4}
    for key, value in expect.items():
        assert U.isotropic_radius(key, 0.8, 1.0, d=4, a=10.0) == pytest.approx(value, rel=1e-12), key



def test_table1_is_built_from_the_families_rows():
    """Each row is its family's (`families`), with the same fields as the table states them: the radius function is
    the one this module names, its source and the extra arguments it takes."""
    want = [("gaussian/l2", "Cohen et al. (2019)", U.gaussian_l2_radius, ()),
            ("gaussian/l1", "Yang et al. (2020)", U.gaussian_l1_radius, ()),
            ("gaussian/linf", "Yang et al. (2020)", U.gaussian_linf_radius, ("d",)),
            ("laplace/l1", "Teng et al. (2020)", U.laplace_l1_radius, ()),
            ("exp_linf/l1", "Yang et al. (2020)", U.exp_linf_l1_radius, ("d",)),
            ("exp_linf/linf", "Yang et al. (2020)", U.exp_linf_linf_radius, ()),
            ("uniform_linf/l1", "Lee et al. (2019)", U.uniform_l1_radius, ()),
            ("uniform_linf/linf", "Lee et al. (2019); Yang et al. (2020)", U.uniform_linf_radius, ("d",)),
            ("power_law_linf/l1", "Yang et al. (2020)", U.power_law_linf_l1_radius, ("d", "a"))]
    assert [(r.key, r.source, r.radius, r.params) for r in U.TABLE1] == want
    for row in U.TABLE1:
        assert (row.noise, row.norm) == tuple(row.key.split("/"))
        assert row in U.FAMILIES[row.noise].rows and U.table1_row(row.key) is row
    assert U.NOISES == tuple(dict.fromkeys(r.noise for r in U.TABLE1))

def test_samplers_match_their_laws():
    """E||x||_∞: exp ℓ∞ noise has ||x||_∞ ~ Gamma(d, λ) (mean d λ); power law ||x||_∞/λ ~ BetaPrime(d, a - d)
    (mean d/(a - d - 1)); uniform cube: d/(d + 1) λ. Each within 6 standard errors."""
    rng = np.random.default_rng(11)
    d, lam, a = 3, 0.7, 9.0
    for noise, mean in ((U.EXP_LINF, d * lam), (U.POWER_LAW_LINF, lam * d / (a - d - 1)),
                        (U.UNIFORM_LINF, lam * d / (d + 1))):
        m = np.abs(sample(noise, 200_000, d, lam, rng, a)).max(axis=1)
        assert abs(m.mean() - mean) < 6 * m.std() / math.sqrt(m.size), noise


def test_unit_variance_lambda_gives_unit_variance():
    """UCAN §5.2 sets λ for unit variance: the Monte Carlo per-coordinate variance is 1 within 6 standard errors."""
    rng = np.random.default_rng(12)
    d, a = 3, 12.0  # a - d > 4: finite fourth moment, so the variance estimate has a standard error
    for noise in U.NOISES:
        lam = U.unit_variance_lambda(noise, d=d, a=a)
        v = (sample(noise, 200_000, d, lam, rng, a) ** 2).mean(axis=1)  # per-draw mean over coordinates
        assert abs(v.mean() - 1.0) < 6 * v.std() / math.sqrt(v.size), noise


def test_lambda_for_std_matches_the_repository_convention():
    for sigma in (0.12, 0.5, 1.0, 2.0):
        assert U.lambda_for_std(U.UNIFORM_LINF, sigma) == pytest.approx(repo_noise.uniform_lambda(sigma))
        assert U.lambda_for_std(U.GAUSSIAN, sigma) == pytest.approx(sigma)
        assert U.lambda_for_std(U.LAPLACE, sigma) == pytest.approx(sigma / math.sqrt(2))


# --------------------------------------------------------------------------------------------------
# each row against its source
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("row", ["gaussian/l2", "gaussian/l1", "gaussian/linf"])
def test_gaussian_rows_are_tight_for_the_worst_half_space(row):
    """Cohen et al. Theorem 1 and its ℓ1/ℓ∞ corollaries: for the half-space {w·z <= λ ||w||_2 Φ^-1(p_A)} the
    smoothed probability at x + δ is Φ(Φ^-1(p_A) - w·δ / (λ ||w||_2)) (closed form). The worst δ of norm R (axis for
    ℓ1, diagonal for ℓ∞, w for ℓ2, with w chosen as the worst normal) gives exactly 1/2; 1.05 R flips; random δ on
    the norm sphere never flip."""
    d, lam = 6, 0.8
    rng = np.random.default_rng(1)
    norm = U.table1_row(row).norm
    w = {U.L1: axis(d), U.L2: rng.standard_normal(d), U.LINF: diagonal(d)}[norm]
    w = w / np.linalg.norm(w)
    direction = worst_direction(norm, d, w)
    for p_a in (0.55, 0.7, 0.9, 0.999):
        r = U.isotropic_radius(row, p_a, lam, d=d)
        prob = lambda delta: normal.cdf(normal.ppf(p_a) - (delta @ w) / lam)  # noqa: E731
        assert prob(r * direction) == pytest.approx(0.5, abs=1e-12)
        assert prob(KAPPA * r * direction) < 0.5 - 1e-3
        dirs = rng.standard_normal((2000, d))
        dirs /= np.linalg.norm(dirs, ord=U.P_OF_NORM[norm], axis=1, keepdims=True)
        assert (prob(r * dirs) >= 0.5 - 1e-12).all()


def test_laplace_l1_monte_carlo_sound_and_tight():
    """Teng et al. Theorem 1 (binary): -λ log(2(1 - p_A)); tight for the axis half-space and δ = R e_1; sound for
    the diagonal half-space."""
    mc_sound_and_tight("laplace/l1", U.LAPLACE, 3, 0.7, 0.8, axis(3), seed=21, tight=True)
    mc_sound_and_tight("laplace/l1", U.LAPLACE, 3, 0.7, 0.8, diagonal(3), seed=22)


def test_exp_linf_l1_monte_carlo_sound():
    """Yang et al. Table 1: 2 d λ (p_A - 1/2) never flips (axis and diagonal half-spaces, p_A = 0.6 and 0.9), and
    near p_A = 1/2 it is nearly tight: the axis half-space flips at 1.1 R (measured: 0.5003 at R, 0.490 at 1.1 R)."""
    mc_sound_and_tight("exp_linf/l1", U.EXP_LINF, 4, 0.5, 0.6, axis(4), seed=31, tight=True, kappa=1.1)
    mc_sound_and_tight("exp_linf/l1", U.EXP_LINF, 4, 0.5, 0.9, axis(4), seed=32)
    for p_a, seed in ((0.6, 41), (0.9, 42)):
        mc_sound_and_tight("exp_linf/l1", U.EXP_LINF, 4, 0.5, p_a, diagonal(4), seed=seed)


def test_exp_linf_linf_monte_carlo_sound_and_tight_in_one_dimension():
    """Yang et al. Table 1: λ log(1/(2(1 - p_A))) never flips for the diagonal half-space in d = 3 and is tight in
    d = 1, where the noise is Laplace."""
    mc_sound_and_tight("exp_linf/linf", U.EXP_LINF, 3, 0.6, 0.8, diagonal(3), seed=43)
    mc_sound_and_tight("exp_linf/linf", U.EXP_LINF, 1, 0.6, 0.8, axis(1), seed=44, tight=True)


def test_uniform_l1_monte_carlo_sound_and_tight():
    """Lee et al. / Yang et al.: 2 λ (p_A - 1/2); tight for the axis half-space, sound for the diagonal one."""
    for p_a, seed in ((0.8, 51), (0.95, 52)):
        mc_sound_and_tight("uniform_linf/l1", U.UNIFORM_LINF, 3, 1.2, p_a, axis(3), seed=seed, tight=True)
        mc_sound_and_tight("uniform_linf/l1", U.UNIFORM_LINF, 3, 1.2, p_a, diagonal(3), seed=seed + 10)


def uniform_linf_worst_set(z: np.ndarray, r: float, lam: float, p_a: float) -> np.ndarray:
    """The worst-case set against δ = r (1, ..., 1) for U[-λ, λ]^d: the part of the cube outside the shifted cube,
    plus the slab {z_1 <= t} of the overlap [r - λ, λ]^d with mass p_A - 1 + q, q = (1 - r/(2λ))^d."""
    d = z.shape[1]
    q = (1.0 - r / (2.0 * lam)) ** d
    t = (r - lam) + (2.0 * lam - r) * (p_a - 1.0 + q) / q
    in_cube = (np.abs(z) <= lam).all(axis=1)
    in_overlap = (z >= r - lam).all(axis=1) & (z <= lam).all(axis=1)
    return in_cube & (~in_overlap | (z[:, 0] <= t))


def test_uniform_linf_monte_carlo_tight_for_the_worst_set_and_printed_form_undefined():
    """Yang et al. Table 1: 2 λ (1 - (3/2 - p_A)^(1/d)). For the worst-case set (which has exactly p_A at x) the
    probability at x + R (1, ..., 1) is 1/2 and at 1.05 R below 1/2 (Hoeffding, TOL); the diagonal half-space never
    flips. The printed 2 λ (1 - sqrt(1/2 - p_A)) is NaN for every p_A in (1/2, 1]."""
    d, lam, p_a = 3, 1.0, 0.9
    rng = np.random.default_rng(61)
    eps = sample(U.UNIFORM_LINF, N_MC, d, lam, rng)
    r = U.uniform_linf_radius(p_a, lam, d)
    for radius, flips in ((r, False), (KAPPA * r, True)):
        at_x = uniform_linf_worst_set(eps, radius, lam, p_a).mean()
        shifted = uniform_linf_worst_set(eps + radius, radius, lam, p_a).mean()
        assert abs(at_x - p_a) <= TOL
        assert (shifted < 0.5 - TOL) if flips else (shifted >= 0.5 - TOL)
    mc_sound_and_tight("uniform_linf/linf", U.UNIFORM_LINF, d, lam, p_a, diagonal(d), seed=62)
    grid = np.linspace(0.5001, 1.0, 101)
    assert np.isnan(U.uniform_linf_radius_printed(grid, lam)).all()
    correct = U.uniform_linf_radius(grid, lam, d)
    assert np.isfinite(correct).all() and (correct > 0).all() and (correct < 2 * lam).all()


def test_power_law_l1_monte_carlo_sound_and_printed_form_unsound():
    """Yang et al. Table 1: 2 d λ/(a - d) (p_A - 1/2) never flips (and flips at 1.1 R for the axis half-space
    near p_A = 1/2); the printed 2 α λ/(α - 1) (p_A - 1/2), with α
    read as the exponent a, certifies a δ (axis, from the valid lower bound p_A - TOL) where the true smoothed
    probability is below 1/2; read literally (PDF exponent 1/α > d) it is negative."""
    d, lam, a, p_a = 2, 1.0, 8.0, 0.6
    # nearly tight near p_A = 1/2 (measured: 0.5028 at R, 0.493 at 1.1 R)
    mc_sound_and_tight("power_law_linf/l1", U.POWER_LAW_LINF, d, lam, p_a, axis(d), seed=71, a=a, tight=True,
                       kappa=1.1)
    mc_sound_and_tight("power_law_linf/l1", U.POWER_LAW_LINF, d, lam, p_a, diagonal(d), seed=72, a=a)
    rng = np.random.default_rng(73)
    eps = sample(U.POWER_LAW_LINF, N_MC, d, lam, rng, a)
    printed = U.power_law_linf_l1_radius_printed(p_a - TOL, lam, alpha=a)
    assert printed / U.power_law_linf_l1_radius(p_a - TOL, lam, d, a) == pytest.approx(a * (a - d) / (d * (a - 1)))
    (prob,) = halfspace_probabilities(eps, axis(d), p_a, [printed])
    assert prob < 0.5 - TOL, f"printed power-law radius not refuted ({prob:.4f})"
    alpha = 0.9 / d  # 1/α > d: the printed density is integrable
    assert U.power_law_linf_l1_radius_printed(p_a, lam, alpha) < 0


# --------------------------------------------------------------------------------------------------
# Theorem 3.2 / Corollary 3.3: the anisotropic transform
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf])
def test_anisotropic_region_is_the_isotropic_ball_mapped_by_diag_sigma(p):
    rng = np.random.default_rng(81)
    sigma = np.exp(rng.normal(0.0, 0.7, (2, 3, 4)))  # image-shaped
    radius = 0.9
    u = rng.standard_normal((5000, 2, 3, 4))
    u *= radius * rng.uniform(0.5, 1.5, (5000, 1, 1, 1)) / np.linalg.norm(u.reshape(5000, -1), ord=p, axis=1)[
        :, None, None, None]
    iso = np.linalg.norm(u.reshape(5000, -1), ord=p, axis=1) <= radius
    assert 0.2 < iso.mean() < 0.8
    assert (U.in_anisotropic_region(sigma * u, sigma, radius, p) == iso).all()
    # the scaled norm of σ ⊙ u is the norm of u
    assert U.anisotropic_scaled_norm(sigma * u[0], sigma, p) == pytest.approx(np.linalg.norm(u[0].ravel(), ord=p))


def test_anisotropic_lp_radius_is_the_largest_enclosed_ball():
    """Corollary 3.3: every δ with ||δ||_p <= min σ R is certified, and (1 + 1e-9) min σ R e_argmin is not."""
    rng = np.random.default_rng(82)
    sigma, radius = np.exp(rng.normal(0.0, 0.5, 7)), 1.3
    rp = U.anisotropic_lp_radius(sigma, radius)
    assert rp == pytest.approx(sigma.min() * radius)
    for p in (1.0, 2.0, math.inf):
        dirs = rng.standard_normal((4000, 7))
        dirs /= np.linalg.norm(dirs, ord=p, axis=1, keepdims=True)
        assert U.in_anisotropic_region(rp * (1 - 1e-12) * dirs, sigma, radius, p).all()
        assert not U.in_anisotropic_region((1 + 1e-9) * rp * axis(7, int(sigma.argmin())), sigma, radius, p)


@pytest.mark.parametrize("row", ["gaussian/l2", "gaussian/l1", "gaussian/linf"])
def test_anisotropic_gaussian_closed_form(row):
    """Theorem 3.2 for noise λ σ ⊙ N(0, I) + μ and a half-space w: P at x + δ is Φ(Φ^-1(p_A') - w·δ/(λ||σ ⊙ w||_2)).
    On the region's boundary max w·δ is R max|σ w| (ℓ1), R ||σ ⊙ w||_2 (ℓ2), R ||σ ⊙ w||_1 (ℓ∞), so the
    prediction never flips, and for ℓ2 the boundary point R σ ⊙ (σ ⊙ w)/||σ ⊙ w|| gives exactly 1/2."""
    rng = np.random.default_rng(83)
    norm = U.table1_row(row).norm
    for _ in range(20):
        d = int(rng.integers(2, 9))
        sigma, w, lam = np.exp(rng.normal(0, 0.6, d)), rng.standard_normal(d), 0.5
        p_a = float(rng.uniform(0.55, 0.999))
        r = U.anisotropic_certificate(row, p_a, sigma, lam).radius
        sw = sigma * w
        worst = {U.L1: np.abs(sw).max(), U.L2: np.linalg.norm(sw), U.LINF: np.abs(sw).sum()}[norm] * r
        assert normal.cdf(normal.ppf(p_a) - worst / (lam * np.linalg.norm(sw))) >= 0.5 - 1e-12
        if norm == U.L2:
            delta = r * sigma * sw / np.linalg.norm(sw)
            assert U.anisotropic_scaled_norm(delta, sigma, 2) == pytest.approx(r)
            assert normal.cdf(normal.ppf(p_a) - (delta @ w) / (lam * np.linalg.norm(sw))) == pytest.approx(0.5)


@pytest.mark.parametrize("noise,row", [(U.UNIFORM_LINF, "uniform_linf/l1"), (U.LAPLACE, "laplace/l1")])
def test_anisotropic_monte_carlo_tight_on_each_axis(noise, row):
    """Theorem 3.2 for non-Gaussian noise λ σ ⊙ ε: with f = 1[z_k <= b] calibrated to p_A', δ = σ_k R e_k (on the
    boundary of {||δ ⊘ σ||_1 <= R}) does not flip and 1.05 σ_k R e_k does, on the widest and the narrowest axis;
    so the isotropic radius R itself is not certified along the narrowest axis (σ_min < 1): Corollary 3.3's
    min σ_i R is needed."""
    d, lam, p_a = 3, 0.8, 0.85
    sigma = np.array([0.5, 2.0, 1.0])
    rng = np.random.default_rng(84)
    eps = sigma * sample(noise, N_MC, d, lam, rng)
    r_lo = U.anisotropic_certificate(row, p_a - TOL, sigma, lam).radius
    r_hi = U.anisotropic_certificate(row, p_a + TOL, sigma, lam).radius
    for k in (int(sigma.argmax()), int(sigma.argmin())):
        inside, beyond = halfspace_probabilities(eps, axis(d, k), p_a, [sigma[k] * r_lo, KAPPA * sigma[k] * r_hi])
        assert U.in_anisotropic_region(sigma[k] * r_lo * axis(d, k), sigma, r_lo, 1)
        assert inside >= 0.5 - TOL and beyond < 0.5 - TOL
    (iso,) = halfspace_probabilities(eps, axis(d, int(sigma.argmin())), p_a, [r_lo])
    assert iso < 0.5 - TOL


# --------------------------------------------------------------------------------------------------
# Alternative Lebesgue Measure
# --------------------------------------------------------------------------------------------------


def test_alm_equals_radius_for_unit_sigma_and_is_a_scaled_geometric_mean():
    rng = np.random.default_rng(91)
    assert U.alternative_lebesgue_measure(np.ones(10), 0.7) == pytest.approx(0.7)
    for _ in range(10):
        d = int(rng.integers(1, 50))
        sigma, radius, c = np.exp(rng.normal(0, 1, d)), float(rng.uniform(0.1, 3)), float(rng.uniform(0.1, 10))
        alm = U.alternative_lebesgue_measure(sigma, radius)
        assert U.alternative_lebesgue_measure(c * sigma, radius) == pytest.approx(c * alm)  # degree-1 homogeneous
        assert U.alternative_lebesgue_measure(rng.permutation(sigma), radius) == pytest.approx(alm)
        assert alm == pytest.approx(np.prod(sigma) ** (1 / d) * radius)
        assert alm == pytest.approx(float(regions.proxy_radius(sigma, radius)))
        assert sigma.min() * radius <= alm * (1 + 1e-12) and alm <= sigma.max() * radius * (1 + 1e-12)


@pytest.mark.parametrize("p", [1.0, 2.0, math.inf])
def test_alm_is_the_dth_root_of_the_region_volume_up_to_a_constant(p):
    """Theorem C.2 (Eq. 22): V(σ, R) / V(1, 1) = (prod σ_i) R^d = ALM^d."""
    rng = np.random.default_rng(92)
    for d in (1, 2, 5, 12):
        sigma, radius = rng.uniform(0.3, 2.0, d), float(rng.uniform(0.3, 2.0))
        ratio = proof_checks.superellipsoid_volume(sigma, radius, p) / proof_checks.superellipsoid_volume(
            np.ones(d), 1.0, p)
        assert ratio ** (1 / d) == pytest.approx(U.alternative_lebesgue_measure(sigma, radius), rel=1e-10)


def test_alm_is_finite_for_imagenet_size_and_printed_pth_root_is_not():
    d = 3 * 224 * 224
    sigma = np.full(d, 1.5)
    assert U.alternative_lebesgue_measure(sigma, 0.4) == pytest.approx(0.6)
    rng = np.random.default_rng(93)
    log_s = rng.normal(0.5, 1.0, d)
    with np.errstate(over="ignore"):
        assert not np.isfinite(np.prod(np.exp(log_s)))  # the product itself overflows
    assert U.alternative_lebesgue_measure(np.exp(log_s), 0.4) == pytest.approx(0.4 * math.exp(log_s.mean()))
    assert U.alternative_lebesgue_measure_printed(sigma, 0.4, 2) == math.inf
    # the printed §5 (Metrics) form gives c^(d/p) R, not c R, for σ_i = c
    assert U.alternative_lebesgue_measure_printed(np.full(4, 2.0), 1.0, 2) == pytest.approx(4.0)
    assert U.alternative_lebesgue_measure(np.full(4, 2.0), 1.0) == pytest.approx(2.0)


def test_printed_alm_columns_differ_by_the_stated_factors():
    rng = np.random.default_rng(94)
    sigma = np.exp(rng.normal(0, 0.5, 6))
    for p_a in (0.6, 0.8, 0.99):
        correct = U.anisotropic_certificate("laplace/l1", p_a, sigma, 0.7).alm
        assert correct > 0 and U.laplace_l1_alm_printed(sigma, p_a, 0.7) == pytest.approx(-correct)
        printed_r = U.power_law_linf_l1_radius_printed(p_a, 0.7, 9.0)
        assert U.power_law_linf_l1_alm_printed(sigma, p_a, 0.7, 9.0) == pytest.approx(
            2 * U.alternative_lebesgue_measure(sigma, printed_r))


def test_anisotropic_certificate_columns():
    sigma = np.array([0.5, 1.0, 2.0, 4.0])
    cert = U.anisotropic_certificate("exp_linf/l1", 0.7, sigma, 0.3)
    r = U.exp_linf_l1_radius(0.7, 0.3, 4)  # d is sigma.size
    assert (cert.norm, cert.p) == ("l1", 1.0)
    assert cert.radius == pytest.approx(r) and cert.lp_radius == pytest.approx(0.5 * r)
    assert cert.alm == pytest.approx(r * math.sqrt(2))  # (0.5 · 1 · 2 · 4)^(1/4)
    batch = U.anisotropic_certificate("gaussian/l2", np.array([0.6, 0.9]), sigma, 1.0)
    assert batch.alm.shape == (2,) and batch.lp_radius == pytest.approx(0.5 * batch.radius)


# --------------------------------------------------------------------------------------------------
# errata and input checks
# --------------------------------------------------------------------------------------------------


def test_errata_are_documented_and_every_printed_function_is_listed():
    listed = set()
    for entry in U.ERRATA:
        assert {"row", "printed", "correct", "why"} <= set(entry) and all(entry[k] for k in ("row", "printed",
                                                                                              "correct", "why"))
        for key in ("printed_function", "correct_function"):
            if entry.get(key):
                assert callable(getattr(U, entry[key])), entry[key]
                listed.add(entry[key])
    printed = {name for name in dir(U) if name.endswith("_printed") and callable(getattr(U, name))}
    assert printed and printed <= listed
    for name in printed:
        assert "PRINTED" in getattr(U, name).__doc__


def _bad_calls():
    s = np.ones(3)
    return [
        (lambda: U.gaussian_l2_radius(0.5, 1.0), "p_a"),
        (lambda: U.laplace_l1_radius(0.3, 1.0), "p_a"),
        (lambda: U.uniform_l1_radius(1.2, 1.0), "p_a"),
        (lambda: U.uniform_l1_radius(np.array([0.7, np.nan]), 1.0), "p_a"),
        (lambda: U.uniform_l1_radius("high", 1.0), "p_a"),
        (lambda: U.uniform_l1_radius(True, 1.0), "p_a"),
        (lambda: U.uniform_l1_radius([], 1.0), "p_a"),
        (lambda: U.gaussian_l2_radius(0.8, 0.0), "lam"),
        (lambda: U.gaussian_l2_radius(0.8, math.inf), "lam"),
        (lambda: U.gaussian_linf_radius(0.8, 1.0, 0), "d"),
        (lambda: U.uniform_linf_radius(0.8, 1.0, 2.5), "d"),
        (lambda: U.power_law_linf_l1_radius(0.8, 1.0, 4, 4.0), "a must"),
        (lambda: U.power_law_linf_l1_radius_printed(0.8, 1.0, 1.0), "alpha"),
        (lambda: U.isotropic_radius("gaussian/l3", 0.8, 1.0), "row must"),
        (lambda: U.isotropic_radius("exp_linf/l1", 0.8, 1.0), "needs d"),
        (lambda: U.unit_variance_lambda("cauchy"), "noise must"),
        (lambda: U.unit_variance_lambda(U.EXP_LINF), "d"),
        (lambda: U.unit_variance_lambda(U.POWER_LAW_LINF, d=3, a=5.0), "d \\+ 2"),
        (lambda: U.lambda_for_std(U.GAUSSIAN, -1.0), "std"),
        (lambda: U.alternative_lebesgue_measure(np.array([1.0, 0.0]), 1.0), "sigma"),
        (lambda: U.alternative_lebesgue_measure(np.array([1.0, np.nan]), 1.0), "sigma"),
        (lambda: U.alternative_lebesgue_measure(np.array([]), 1.0), "sigma"),
        (lambda: U.alternative_lebesgue_measure(s, -0.1), "radius"),
        (lambda: U.anisotropic_lp_radius(-s, 1.0), "sigma"),
        (lambda: U.in_anisotropic_region(np.ones(4), s, 1.0, 2), "delta must have shape"),
        (lambda: U.in_anisotropic_region(np.ones((5, 2)), s, 1.0, 2), "delta must have shape"),
        (lambda: U.in_anisotropic_region(np.array([1.0, np.inf, 0.0]), s, 1.0, 2), "delta"),
        (lambda: U.in_anisotropic_region(np.ones(3), s, 1.0, 0.5), "p must"),
        (lambda: U.in_anisotropic_region(np.ones(3), s, 1.0, "l7"), "p must"),
        (lambda: U.in_anisotropic_region(np.ones(3), s, np.array([1.0, 2.0]), 2), "radius"),
        (lambda: U.anisotropic_certificate("laplace/l1", 0.4, s, 1.0), "p_a"),
    ]


@pytest.mark.parametrize("case", range(len(_bad_calls())))
def test_bad_inputs_raise_value_error_naming_the_argument(case):
    call, match = _bad_calls()[case]
    with pytest.raises(ValueError, match=match):
        call()


def test_boundary_inputs_are_accepted():
    """p_A = 1 is allowed (infinite radius where the noise has unbounded support)."""
    assert U.gaussian_l2_radius(1.0, 1.0) == math.inf and U.laplace_l1_radius(1.0, 1.0) == math.inf
    assert U.uniform_l1_radius(1.0, 0.5) == pytest.approx(0.5)
    assert U.in_anisotropic_region(np.zeros(3), np.ones(3), 0.0, "linf")
    assert U.anisotropic_scaled_norm(np.zeros((2, 3)), np.ones(3), 3).tolist() == [0.0, 0.0]
