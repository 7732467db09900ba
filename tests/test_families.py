"""Noise families as objects (issue "One engine", item 1): each family draws exactly what the package drew when the
families were string branches (references below, written out), its λ gives unit variance (a closed form checked
by Monte Carlo within a statistical bound), and ANCER's gaps are Corollaries 1 and 2."""
import math

import numpy as np
import pytest
import torch
from scipy.special import ndtri

from ancer_lite.core import families, noise, regions, ucan_noise, ucan_radii
from ancer_lite.core.families import FAMILIES, family

UCAN = ("gaussian", "laplace", "exp_linf", "uniform_linf", "power_law_linf")


def reference_draws(name: str, num: int, shape: tuple, gen: torch.Generator, a=None) -> torch.Tensor:
    """The sampling code before the families were classes (`ucan_noise.sample_standard`'s branches)."""
    d = int(math.prod(shape))
    size = (num, *shape)
    if name == "gaussian":
        return torch.empty(size).normal_(generator=gen)
    if name in ("uniform_linf", "uniform"):
        return torch.empty(size).uniform_(-1.0, 1.0, generator=gen)
    if name == "laplace":
        u = torch.empty((num, 2, d), dtype=torch.float64).uniform_(generator=gen)
        e = -torch.log1p(-u)
        return (e[:, 0] - e[:, 1]).float().reshape(size)
    tail = 0 if name == "exp_linf" else int(round((d + 10 if a is None else a) - d))
    u = torch.empty((num, d + 1 + tail + d), dtype=torch.float64).uniform_(generator=gen)
    s = (-torch.log1p(-u[:, :d + 1])).sum(dim=1)
    if name == "power_law_linf":
        s = s / (-torch.log1p(-u[:, d + 1:d + 1 + tail])).sum(dim=1)
    cube = (2.0 * u[:, d + 1 + tail:] - 1.0).reshape(size)
    return (cube * s.view(num, *([1] * len(shape)))).float()


@pytest.mark.parametrize("name", UCAN)
@pytest.mark.parametrize("shape", [(3,), (1, 4, 4)])
def test_draws_are_bit_identical_to_the_branches(name, shape):
    for seed in range(3):
        for num in (1, 7, 64):
            new = ucan_noise.sample_standard(name, num, shape, torch.Generator().manual_seed(seed))
            old = reference_draws(name, num, shape, torch.Generator().manual_seed(seed))
            assert torch.equal(new, old), (name, shape, seed, num)


def test_power_law_with_an_explicit_exponent():
    d = 6
    new = ucan_noise.sample_standard("power_law_linf", 9, (d,), torch.Generator().manual_seed(4), a=d + 5)
    old = reference_draws("power_law_linf", 9, (d,), torch.Generator().manual_seed(4), a=d + 5)
    assert torch.equal(new, old)
    assert family("power_law_linf").exponent(d) == d + families.POWER_LAW_TAIL
    assert family("exp_linf").exponent(d) is None


@pytest.mark.parametrize("name", ["gaussian", "uniform"])
def test_ancer_families_fill_as_before(name):
    for seed in range(3):
        new = noise.standard_noise(name, 33, (2, 5), torch.Generator().manual_seed(seed))
        old = reference_draws(name, 33, (2, 5), torch.Generator().manual_seed(seed))
        assert torch.equal(new, old)


@pytest.mark.parametrize("name, d, a", [("gaussian", 3, None), ("laplace", 3, None), ("uniform_linf", 3, None),
                                        ("exp_linf", 3, None), ("power_law_linf", 3, 3 + 10)])
def test_unit_variance_lambda_gives_unit_variance(name, d, a):
    """λ · ε has variance 1 per coordinate: the sample variance of n draws lies within 5 standard errors of 1
    (the standard error from the sample's fourth moment)."""
    lam = ucan_radii.unit_variance_lambda(name, d=d, a=a)
    x = (lam * ucan_noise.sample_standard(name, 200_000, (d,), torch.Generator().manual_seed(0), a=a)).double()
    v = x.pow(2).mean(dim=0)  # the mean is 0 by symmetry
    se = (x.pow(4).mean(dim=0) - v.pow(2)).sqrt() / math.sqrt(len(x))
    assert ((v - 1.0).abs() <= 5 * se).all(), (name, v, se)
    assert ucan_radii.lambda_for_std(name, 0.5, d, a) == pytest.approx(0.5 * lam)


def test_ancer_gaps_are_corollaries_1_and_2():
    p = np.array([0.6, 0.9, 0.999])
    assert np.array_equal(family("gaussian").gap(p), ndtri(p))
    assert np.array_equal(family("uniform").gap(p), 2.0 * p - 1.0)
    # regions.gap_from_lower_bound reads them by norm, 0 where pA <= 1/2
    q = np.array([0.3, 0.5, 0.7])
    assert np.array_equal(regions.gap_from_lower_bound(q, "l2"), np.where(q > 0.5, ndtri(np.clip(q, 0.5, 1)), 0.0))
    assert np.array_equal(regions.gap_from_lower_bound(q, "l1"), np.where(q > 0.5, 2 * q - 1, 0.0))
    top = torch.tensor([[0.7, 0.2], [0.999999, 1e-7]])
    clamped = top.clamp(1e-4, 1 - 1e-4)
    assert torch.equal(family("gaussian").soft_gap(top, 1e-4),
                       0.5 * (torch.special.ndtri(clamped[:, 0]) - torch.special.ndtri(clamped[:, 1])))
    assert torch.equal(family("uniform").soft_gap(top, 1e-4), top[:, 0] - top[:, 1])


def test_families_ancer_does_not_certify_say_so():
    for name in ("laplace", "exp_linf", "uniform_linf", "power_law_linf"):
        with pytest.raises(ValueError, match="ANCER certifies no norm"):
            family(name).gap(np.array([0.9]))
        with pytest.raises(ValueError, match="ANCER optimizes no certificate"):
            family(name).soft_gap(torch.tensor([[0.9, 0.1]]), 1e-4)


def test_the_table_of_families():
    assert set(FAMILIES) == set(noise.NOISES) | set(ucan_radii.NOISES)
    assert [n for n, f in FAMILIES.items() if f.rotation_invariant] == ["gaussian"]
    assert {n: f.ancer_norm for n, f in FAMILIES.items() if f.ancer_norm} == {"gaussian": "l2", "uniform": "l1"}
    assert family("gaussian").scale_name == "sigma" and family("uniform").scale_name == "lambda"
    with pytest.raises(ValueError, match="noise"):
        family("cauchy")
    with pytest.raises(ValueError, match="noise"):
        family("laplace", among=noise.NOISES)
    with pytest.raises(ValueError, match=r"\bd\b"):
        family("exp_linf").unit_variance_lambda()


def test_soft_proxy_radius_is_the_proxy_radius():
    """regions.soft_proxy_radius (the optimizers' objective term) equals regions.proxy_radius in float64 and gives
    the objective the optimizers computed inline before, bit for bit in float32."""
    gen = torch.Generator().manual_seed(0)
    theta = torch.rand(5, 7, generator=gen, dtype=torch.float64) + 0.1
    gap = torch.rand(5, generator=gen, dtype=torch.float64)
    np.testing.assert_allclose(regions.soft_proxy_radius(theta, gap).numpy(),
                               regions.proxy_radius(theta.numpy(), gap.numpy()), rtol=1e-12)
    t32, g32 = theta.float(), gap.float()
    assert torch.equal(regions.soft_proxy_radius(t32, g32), g32 * torch.exp(torch.log(t32).mean(dim=1)))
