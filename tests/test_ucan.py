"""UCAN's noise families (ancer_lite.core.ucan_noise), noise parameter generators, certification and soundness audit
(ancer_lite.methods.ucan) and the table helpers of notebook 07 (ancer_lite.studies.ucan_study).

Statistical tolerances: a sample mean of n i.i.d. draws with standard deviation s is asserted within 6 s/√n of its
expectation (fails by chance with probability < 1e-8 under the CLT); Monte Carlo probabilities of n Bernoulli draws
within 6 √(p(1-p)/n).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import kstest
from scipy.stats import norm as normal

from ancer_lite.core.certify import ABSTAIN, lower_confidence_bound
from ancer_lite.core.families import POWER_LAW_TAIL, power_law_exponent
from ancer_lite.core.ucan_noise import anisotropic_noise, sample_standard
from ancer_lite.core.ucan_radii import NOISES, unit_variance_lambda
from ancer_lite.methods import ucan
from ancer_lite.studies import ucan_study

# --------------------------------------------------------------------------------------------------
# noise families
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", NOISES)
def test_unit_scale_variance_matches_unit_variance_lambda(noise):
    """Per-coordinate variance of the λ = 1 draws is 1 / unit_variance_lambda² (ucan_radii's closed forms)."""
    d, n = 16, 40_000
    z = sample_standard(noise, n, (d,), torch.Generator().manual_seed(1), dtype=torch.float64)
    a = d + POWER_LAW_TAIL
    want = 1.0 / unit_variance_lambda(noise, d=d, a=a) ** 2
    sq = (z ** 2).numpy()
    # the sample of squares: mean of n*d values, correlated within a row; use row means (n independent values)
    rows = sq.mean(axis=1)
    assert abs(rows.mean() - want) <= 6 * rows.std() / math.sqrt(n), (noise, rows.mean(), want)
    assert abs(float(z.mean())) <= 6 * math.sqrt(want) / math.sqrt(n)  # centred


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("shape", [(1, 8, 8), (5,)])
def test_draws_do_not_depend_on_the_batch_size(noise, shape):
    """1,000 draws at once equal the same generator's draws in batches of 400, 400 and 200, so certification with
    any such batch size sees the same noise (for the Gaussian, torch's normal_ works in blocks of 16 numbers:
    every batch but the last holds a multiple of 16 numbers here, and the last at least 16)."""
    whole = sample_standard(noise, 1_000, shape, torch.Generator().manual_seed(3))
    g = torch.Generator().manual_seed(3)
    parts = torch.cat([sample_standard(noise, b, shape, g) for b in (400, 400, 200)])
    assert torch.equal(whole, parts)


def test_linf_families_match_their_cube_mixtures():
    """||z||_∞ = s · max_i |U_i| with s ~ Gamma(d + 1) (exp_linf) or Gamma(d + 1) / Gamma(a - d) (power law),
    against an independent NumPy simulation (two-sample Kolmogorov-Smirnov)."""
    d, n = 8, 20_000
    g = torch.Generator().manual_seed(2)
    s = sample_standard("exp_linf", n, (d,), g, dtype=torch.float64).abs().amax(dim=1).numpy()
    # ||z||_inf = s * max|U|, max of d uniforms on [0, 1] is Beta(d, 1): compare with an independent simulation
    rng = np.random.default_rng(0)
    ref = rng.gamma(d + 1, size=n) * rng.uniform(size=(n, d)).max(axis=1)
    assert kstest(s, ref).pvalue > 1e-6
    p = sample_standard("power_law_linf", n, (d,), g, dtype=torch.float64).abs().amax(dim=1).numpy()
    ref_p = rng.gamma(d + 1, size=n) / rng.gamma(POWER_LAW_TAIL, size=n) * rng.uniform(size=(n, d)).max(axis=1)
    assert kstest(p, ref_p).pvalue > 1e-6


def test_laplace_mean_absolute_value_is_one():
    n = 100_000
    z = sample_standard("laplace", n, (1,), torch.Generator().manual_seed(3), dtype=torch.float64).numpy()[:, 0]
    assert abs(np.abs(z).mean() - 1.0) <= 6 * 1.0 / math.sqrt(n)  # Var|Laplace| = 1


def test_sampling_is_repeatable_and_checked():
    a = sample_standard("exp_linf", 5, (3, 2), torch.Generator().manual_seed(4))
    b = sample_standard("exp_linf", 5, (3, 2), torch.Generator().manual_seed(4))
    assert a.shape == (5, 3, 2) and torch.equal(a, b)
    with pytest.raises(ValueError, match="noise"):
        sample_standard("cauchy", 2, (2,))
    with pytest.raises(ValueError, match="a must be d"):
        power_law_exponent(10, 11.5)
    with pytest.raises(ValueError, match="a must be d"):
        power_law_exponent(10, 12)  # tail 2: infinite variance


def test_anisotropic_noise_is_eq2():
    eps = torch.randn(4, 3)
    sigma, mu = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, 0.0, -0.5])
    assert torch.allclose(anisotropic_noise(eps, 0.3, sigma, mu), 0.3 * sigma * eps + mu)
    assert torch.allclose(anisotropic_noise(eps, 0.3, sigma), 0.3 * sigma * eps)


# --------------------------------------------------------------------------------------------------
# noise parameter generators
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", ["l1", "l2", "linf"])
def test_pattern_sigma_eq5(p):
    s = ucan.pattern_sigma((2, 7, 9), p, kappa=0.5, iota=1.0)
    assert s.shape == (2, 7, 9)
    assert math.isclose(float(np.exp(np.log(s).mean())), 1.0, rel_tol=1e-12)  # geomean 1 (§5.1)
    assert np.array_equal(s[0], s[1])  # same on every channel
    assert s[0].argmin() == 3 * 9 + 4  # the centre pixel (a, b) = (0, 0) is the smallest
    assert np.allclose(s[0], s[0][::-1, :]) and np.allclose(s[0], s[0][:, ::-1])  # symmetric
    # the ratio corner / centre is (κ ||(4, 3)||_p² + ι) / ι before rescaling
    corner = {"l1": 7.0, "l2": 5.0, "linf": 4.0}[p]
    assert math.isclose(s[0, 0, 0] / s[0, 3, 4], 0.5 * corner ** 2 + 1.0, rel_tol=1e-12)


def test_pattern_sigma_checks():
    with pytest.raises(ValueError, match="p must be"):
        ucan.pattern_sigma((1, 4, 4), "l3")
    with pytest.raises(ValueError, match="shape must be"):
        ucan.pattern_sigma((4, 4), "l2")
    with pytest.raises(ValueError, match="kappa"):
        ucan.pattern_sigma((1, 4, 4), "l2", kappa=0.0)


@pytest.mark.parametrize("kind,gamma", [("universal", 5.0), ("universal", 1.0), ("input", 1.0), ("input", 5.0)])
def test_trained_npgs_start_positive_bounded_and_near_isotropic(kind, gamma):
    torch.manual_seed(0)
    npg = ucan.build_npg(kind, (1, 6, 6), gamma=gamma, growth=2)
    x = torch.rand(3, 1, 6, 6)
    with torch.no_grad():
        sigma, mu = npg(x)
    assert sigma.shape == x.shape and mu.shape == x.shape
    assert bool((sigma > 0).all()) and bool((sigma < gamma).all())
    assert torch.allclose(sigma, torch.full_like(sigma, min(1.0, gamma / 2)), atol=0.02)
    assert float(mu.abs().max()) < 0.05
    if kind == "universal":  # the same maps for every input
        assert torch.equal(sigma[0], sigma[1]) and torch.equal(mu[0], mu[2])


def test_fixed_npg_and_checks():
    npg = ucan.build_npg("isotropic", (1, 2, 2))
    sigma, mu = npg(torch.rand(5, 1, 2, 2))
    assert torch.equal(sigma, torch.ones(5, 1, 2, 2)) and torch.equal(mu, torch.zeros(5, 1, 2, 2))
    with pytest.raises(ValueError, match="shape"):
        npg(torch.rand(5, 1, 3, 3))
    with pytest.raises(ValueError, match="sigma must be finite and > 0"):
        ucan.FixedNPG(np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="kind must be"):
        ucan.build_npg("learned", (1, 2, 2))


def test_variance_loss_raises_sigma_where_the_classifier_does_not_care():
    """UCAN §4.2's loss: with a classifier that ignores its input, only -mean(σ) moves the universal NPG, so σ
    rises towards γ."""
    torch.manual_seed(0)

    class Constant(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.b = torch.nn.Parameter(torch.zeros(2))

        def forward(self, x):
            return self.b.expand(len(x), 2)

    npg = ucan.build_npg("universal", (1, 3, 3), gamma=4.0)
    x, y = torch.rand(64, 1, 3, 3), torch.randint(0, 2, (64,))
    with torch.no_grad():
        before = float(npg(x)[0].mean())
    ucan.train_ucan(Constant(), npg, x, y, lam=0.5, epochs=5, batch_size=16)
    with torch.no_grad():
        after = float(npg(x)[0].mean())
    assert after > before + 0.5, (before, after)


# --------------------------------------------------------------------------------------------------
# certification against a closed form
# --------------------------------------------------------------------------------------------------


class Halfspace(torch.nn.Module):
    """Logits (0, s (w·z - b)) over flattened z: class 1 iff w·z > b (s large: the argmax is the half-space)."""

    def __init__(self, w: torch.Tensor, b: float, s: float = 1e4):
        super().__init__()
        self.w, self.b, self.s = w, b, s

    def forward(self, z):
        t = self.s * (z.reshape(len(z), -1) @ self.w - self.b)
        return torch.stack([torch.zeros_like(t), t], dim=1)


def test_certify_matches_the_gaussian_closed_form_with_offset():
    """With fixed σ, μ (a FixedNPG plus a shifted input), P(class 1) = Φ((w·(x + μ) - b) / (λ ||w ⊙ σ||_2)); the
    certificate's count must match it, and its region radius is Φ^-1(p_A') in θ-units."""
    w = torch.tensor([1.0, -0.5, 2.0, 0.0], dtype=torch.float32)
    sigma = np.array([[[0.5, 2.0], [1.0, 3.0]]])
    npg = ucan.FixedNPG(sigma)
    x = torch.tensor([[[0.3, 0.1], [0.2, 0.9]]])
    lam, n = 0.4, 50_000
    p = float(normal.cdf((w @ x.reshape(-1) - 0.2).item() / (lam * np.linalg.norm(w.numpy() * sigma.reshape(-1)))))
    c = ucan.certify(Halfspace(w, 0.2), npg, x, "gaussian", lam, 100, n, 0.001, 2, torch.Generator().manual_seed(5))
    top = 1 if p > 0.5 else 0
    ptop = max(p, 1 - p)
    assert c.prediction == top
    assert abs(c.count / n - ptop) <= 6 * math.sqrt(ptop * (1 - ptop) / n)
    assert math.isclose(c.p_lower, float(lower_confidence_bound(c.count, n, 0.001)))
    assert math.isclose(c.min_theta, lam * 0.5, rel_tol=1e-6)
    assert math.isclose(c.log_gm_theta, float(np.log(lam * sigma).mean()), rel_tol=1e-6)
    r, alm = ucan.row_radii("gaussian/l2", np.array([c.p_lower]), np.array([c.min_theta]),
                            np.array([c.log_gm_theta]), 4)
    assert math.isclose(float(r[0]), c.min_theta * normal.ppf(c.p_lower), rel_tol=1e-9)
    assert math.isclose(float(alm[0]), math.exp(c.log_gm_theta) * normal.ppf(c.p_lower), rel_tol=1e-9)


def test_certify_abstains_and_row_radii_zero_there():
    w = torch.tensor([1.0, 0.0])
    c = ucan.certify(Halfspace(w, 0.0), ucan.FixedNPG(np.ones((1, 1, 2))), torch.zeros(1, 1, 2), "gaussian", 1.0,
                     50, 2_000, 0.001, 2, torch.Generator().manual_seed(6))
    assert c.prediction == ABSTAIN  # the boundary passes through x: p_A = 1/2
    r, alm = ucan.row_radii("gaussian/l2", np.array([c.p_lower, 0.9]), np.array([1.0, 1.0]), np.array([0.0, 0.0]), 2)
    assert r[0] == 0 and alm[0] == 0 and math.isclose(r[1], normal.ppf(0.9))


def test_certify_and_row_radii_refuse_a_negative_scale():
    """λ <= 0 or a σ(x) < 0 gave min_theta <= 0 and a radius of -0 or NaN."""
    w, x = torch.tensor([1.0, 0.0]), torch.full((1, 1, 2), 0.3)
    args = (50, 200, 0.001, 2, torch.Generator().manual_seed(6))
    for lam in (0.0, -0.25, float("nan")):
        with pytest.raises(ValueError, match="lam"):
            ucan.certify(Halfspace(w, 0.0), ucan.FixedNPG(np.ones((1, 1, 2))), x, "gaussian", lam, *args)
    class NegativeNPG(torch.nn.Module):  # a generator gone wrong (FixedNPG itself refuses σ <= 0)
        def forward(self, z):
            return torch.tensor([1.0, -0.5]).expand_as(z), torch.zeros_like(z)

    with pytest.raises(ValueError, match="σ"):
        ucan.certify(Halfspace(w, 0.0), NegativeNPG(), x, "gaussian", 1.0, *args)
    for m, g in ((-0.5, 0.0), (np.nan, 0.0), (0.5, np.nan), (0.5, np.inf)):
        with pytest.raises(ValueError, match="min_theta"):
            ucan.row_radii("gaussian/l2", np.array([0.9]), np.array([m]), np.array([g]), 2)
    with pytest.raises(ValueError, match="p_lower"):
        ucan.row_radii("gaussian/l2", np.array([1.5]), np.array([0.5]), np.array([0.0]), 2)
    # a pixel without noise is a true, trivial certificate: radius 0
    r, alm = ucan.row_radii("gaussian/l2", np.array([0.9]), np.array([0.0]), np.array([-np.inf]), 2)
    assert r[0] == 0 and alm[0] == 0


def test_rows_of_and_row_radii_for_every_family():
    assert ucan.rows_of("gaussian") == ["gaussian/l2", "gaussian/l1", "gaussian/linf"]
    assert ucan.rows_of("power_law_linf") == ["power_law_linf/l1"]
    p = np.array([0.8])
    r, alm = ucan.row_radii("exp_linf/l1", p, np.array([0.5]), np.array([0.0]), 10)
    assert math.isclose(float(r[0]), 0.5 * 2 * 10 * 0.3) and math.isclose(float(alm[0]), 2 * 10 * 0.3)
    r, _ = ucan.row_radii("power_law_linf/l1", p, np.array([1.0]), np.array([0.0]), 10)
    assert math.isclose(float(r[0]), 2 * 10 / POWER_LAW_TAIL * 0.3)


# --------------------------------------------------------------------------------------------------
# soundness audit: a violation is found where σ(x), μ(x) jump, and none for fixed noise
# --------------------------------------------------------------------------------------------------


class JumpingMean(torch.nn.Module):
    """An input-dependent NPG whose mean offset flips sign across x_0 = 0.55: μ_0(x) = 2 tanh(-50 (x_0 - 0.55))."""

    def forward(self, x):
        mu = torch.zeros_like(x)
        mu[..., 0] = 2 * torch.tanh(-50 * (x[..., 0] - 0.55))
        return torch.ones_like(x), mu


def test_audit_finds_and_verifies_a_violation_for_input_dependent_mu():
    w = torch.tensor([1.0, 0.0])
    model, npg = Halfspace(w, 0.0, s=20.0), JumpingMean()
    x = torch.tensor([[0.5, 0.5]])
    gen = torch.Generator().manual_seed(7)
    c = ucan.certify(model, npg, x, "gaussian", 1.0, 100, 20_000, 0.001, 2, gen)
    assert c.prediction == 1  # μ_0(x) ≈ +2: class 1 with probability Φ(2.47) ≈ 0.99
    r1 = float(normal.ppf(c.p_lower))
    delta, p_soft = ucan.search_violation(model, npg, x, 1, torch.ones_like(x), r1, lam=1.0, steps=40,
                                          samples=256, generator=gen)
    assert float(delta.norm()) <= r1 * (1 + 1e-6)  # inside the certified region (θ = 1: a ball)
    assert p_soft < 0.5
    v = ucan.verify_violation(model, npg, x + delta, 1, "gaussian", 1.0, 20_000, 0.001, 2, gen)
    assert v["violation"] and v["top"] == 0 and v["p_lower_top"] > 0.5


def test_audit_search_stays_inside_the_domain():
    """C9's search inside the image domain: every point it returns lies in the box and in the certified region; a box
    that keeps x_0 <= 0.55 (where JumpingMean's μ_0 >= 0, so class 1 keeps probability >= Φ(0.55) > 1/2) leaves no
    candidate, while [0, 1] still holds the violation of the unconstrained search."""
    w = torch.tensor([1.0, 0.0])
    model, npg = Halfspace(w, 0.0, s=20.0), JumpingMean()
    x = torch.tensor([[0.5, 0.5]])
    gen = torch.Generator().manual_seed(7)
    c = ucan.certify(model, npg, x, "gaussian", 1.0, 100, 20_000, 0.001, 2, gen)
    r1 = float(normal.ppf(c.p_lower))
    for domain, found in (((0.0, 1.0), True), ((0.0, 0.55), False)):
        delta, p_soft = ucan.search_violation(model, npg, x, 1, torch.ones_like(x), r1, lam=1.0, steps=40,
                                              samples=256, generator=gen, domain=domain)
        z = x + delta
        assert float(z.min()) >= domain[0] - 1e-6 and float(z.max()) <= domain[1] + 1e-6
        assert float(delta.norm()) <= r1 * (1 + 1e-6)
        assert (p_soft < 0.5) == found
    for bad in ((1.0, 0.0), (0.0, float("nan")), (0.6, 1.0), 0.5, (0.0, 1.0, 2.0)):
        with pytest.raises(ValueError, match="domain"):
            ucan.search_violation(model, npg, x, 1, torch.ones_like(x), r1, lam=1.0, steps=1, domain=bad)


def test_audit_verifies_no_violation_for_fixed_noise():
    """Theorem 3.2 with a fixed (σ, μ): the best point the search finds keeps the certified class."""
    w = torch.tensor([1.0, 0.0])
    model = Halfspace(w, 0.0, s=20.0)
    npg = ucan.FixedNPG(np.array([[1.0, 2.0]]))
    x = torch.tensor([[1.5, 0.0]])
    gen = torch.Generator().manual_seed(8)
    c = ucan.certify(model, npg, x, "gaussian", 1.0, 100, 20_000, 0.001, 2, gen, domain=None)
    r1 = float(normal.ppf(c.p_lower))
    theta = torch.tensor([[1.0, 2.0]])
    delta, _ = ucan.search_violation(model, npg, x, 1, theta, r1, lam=1.0, steps=40, samples=256, generator=gen)
    assert float((delta / theta).norm()) <= r1 * (1 + 1e-6)
    v = ucan.verify_violation(model, npg, x + delta, 1, "gaussian", 1.0, 20_000, 0.001, 2, gen)
    assert not v["violation"] and v["top"] == 1


# --------------------------------------------------------------------------------------------------
# notebook 07's tables
# --------------------------------------------------------------------------------------------------


def _frame(method, lam, radius, proxy, correct):
    return pd.DataFrame(dict(method=method, lam=lam, radius=radius, radius_proxy=proxy, correct=correct))


def test_accuracy_rows_best_over_lambda_and_improvement():
    res = pd.concat([
        _frame("Cohen (Fixed σ)", 0.25, [0.3, 0.6, 0.0], [0.3, 0.6, 0.0], [True, True, False]),
        _frame("Cohen (Fixed σ)", 0.5, [0.1, 1.1, 0.0], [0.1, 1.1, 0.0], [True, True, False]),
        _frame("Input-dependent", 0.25, [0.2, 0.2, 2.0], [0.4, 0.4, 2.0], [True, True, True]),
    ])
    t = ucan_study.accuracy_rows(res, radii=(0.0, 0.5, 1.0))
    assert t.loc[("Cohen (Fixed σ)", "radius"), "0.5"] == pytest.approx(100 / 3)
    assert t.loc[("Cohen (Fixed σ)", "radius"), "1"] == pytest.approx(100 / 3)  # from λ = 0.5
    assert t.loc[("Cohen (Fixed σ)", "radius"), "mean"] == pytest.approx(1.2 / 3)  # best λ's ACR
    assert t.loc[("Input-dependent", "ALM"), "0"] == pytest.approx(100.0)
    imp = ucan_study.improvement_over_baseline(t, "Input-dependent", ["Cohen (Fixed σ)"])
    assert imp["0"] == pytest.approx(100 * (100 / (200 / 3) - 1))
    assert imp["1"] == pytest.approx(0.0)


def test_test_subset_spreads_evenly():
    class Col:
        class work:
            test = list(range(150))

    setup = type("S", (), {"num_test": 100})()
    pos = ucan_study.test_subset(Col, setup)
    assert len(pos) == 100 and pos[0] == 0 and pos[-1] == 149 and np.all(np.diff(pos) >= 1)
    setup.num_test = None
    assert len(ucan_study.test_subset(Col, setup)) == 150


@pytest.mark.parametrize("name", ["quick", "paper", "paper-imagenet"])
def test_every_ucan_column_extends_a_notebook03_column(name):
    from ancer_lite.runs.profiles import get_profile

    p = get_profile(name)
    images = {s.name: s for s in p.images}
    for u in p.ucan:
        assert u.column in images
        assert u.selection_lam in u.lams and all(lam in images[u.column].sigmas_l2 for lam in u.lams)
