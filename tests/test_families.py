"""Noise families as objects (`ancer_lite.core.families`): every family's `draw` gives the numbers of torch's own
samplers written out below (`reference_draws`), bit for bit, for every shape, dtype and batch split; its λ gives unit
variance (a closed form checked by Monte Carlo within a statistical bound); ANCER's gaps are Corollaries 1 and 2;
the lists of names are derived from the registered families; and a toy family added with one class and one
`families.register` line is sampled and certified through the public API without touching any other file."""
import math

import numpy as np
import pytest
import torch
from contrib.wide_uniform import WideUniform
from scipy.special import ndtri

from ancer_lite.core import families, names, noise, regions, ucan_noise, ucan_radii
from ancer_lite.core.certify import Smooth
from ancer_lite.core.families import FAMILIES, family
from ancer_lite.methods import ucan

ANCER = ("gaussian", "uniform")
UCAN = ("gaussian", "laplace", "exp_linf", "uniform_linf", "power_law_linf")
SHAPES = [(1,), (3,), (2, 5), (1, 4, 4)]
DTYPES = [torch.float32, torch.float64]


def reference_draws(name: str, num: int, shape: tuple, gen: torch.Generator, a=None,
                    dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The draws written out with plain torch calls: `normal_` / `uniform_(-1, 1)` filling a tensor of the dtype;
    the Laplace as the difference of two float64 exponentials; the ℓ∞ mixtures as a float64 cube [-1, 1]^d times a
    radius from sums of exponentials, all from one row of uniforms per draw; cast to the dtype."""
    d = int(math.prod(shape))
    size = (num, *shape)
    if name == "gaussian":
        return torch.empty(size, dtype=dtype).normal_(generator=gen)
    if name in ("uniform_linf", "uniform"):
        return torch.empty(size, dtype=dtype).uniform_(-1.0, 1.0, generator=gen)
    if name == "laplace":
        u = torch.empty((num, 2, d), dtype=torch.float64).uniform_(generator=gen)
        e = -torch.log1p(-u)
        return (e[:, 0] - e[:, 1]).to(dtype).reshape(size)
    tail = 0 if name == "exp_linf" else int(round((d + 10 if a is None else a) - d))
    u = torch.empty((num, d + 1 + tail + d), dtype=torch.float64).uniform_(generator=gen)
    s = (-torch.log1p(-u[:, :d + 1])).sum(dim=1)
    if name == "power_law_linf":
        s = s / (-torch.log1p(-u[:, d + 1:d + 1 + tail])).sum(dim=1)
    cube = (2.0 * u[:, d + 1 + tail:] - 1.0).reshape(size)
    return (cube * s.view(num, *([1] * len(shape)))).to(dtype)


def seeded(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# --------------------------------------------------------------------------------------------------
# the draws, bit for bit
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(FAMILIES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_draw_is_bit_identical_to_plain_torch(name, dtype):
    """`draw` into a preallocated tensor, and the public functions that call it (`noise.standard_noise` for ANCER's
    families, `ucan_noise.sample_standard` for UCAN's), give the reference draws in the tensor's dtype and leave the
    generator where the reference leaves it."""
    for shape in SHAPES:
        for seed in range(2):
            for num in (1, 7, 16, 64):
                ref_gen = seeded(seed)
                ref = reference_draws(name, num, shape, ref_gen, dtype=dtype)
                gen = seeded(seed)
                out = torch.empty((num, *shape), dtype=dtype)
                assert family(name).draw(out, gen) is out
                assert out.dtype == dtype and torch.equal(out, ref), (name, shape, seed, num)
                assert torch.equal(gen.get_state(), ref_gen.get_state())
                if name in ANCER:
                    got = noise.standard_noise(name, num, shape, seeded(seed), dtype=dtype)
                    assert torch.equal(got, ref)
                if name in UCAN:
                    got = ucan_noise.sample_standard(name, num, shape, seeded(seed), dtype=dtype)
                    assert got.dtype == dtype and torch.equal(got, ref)


SPLITS = [(64,), (16, 48), (7, 57), (1, 1, 30, 32), (33, 31)]


@pytest.mark.parametrize("name", ANCER)
@pytest.mark.parametrize("dtype", DTYPES)
def test_draw_streams_of_any_split_are_the_one_sequence(name, dtype):
    """`noise.DrawStream` in batches of any sizes gives the reference draws of their total size."""
    for shape in SHAPES:
        ref = reference_draws(name, 64, shape, seeded(5), dtype=dtype)
        for split in SPLITS:
            stream = noise.DrawStream(name, shape, seeded(5), dtype)
            assert torch.equal(torch.cat([stream.draw(k) for k in split]), ref), (name, shape, split)


@pytest.mark.parametrize("name", UCAN)
def test_sample_standard_in_any_split_is_the_one_sequence(name):
    """`ucan_noise.sample_standard` in batches one after another gives the reference draws of their total size (the
    Gaussian for batches of whole blocks of 16 numbers: d = 16 here)."""
    shapes = [(1, 4, 4)] if name == "gaussian" else SHAPES
    for shape in shapes:
        ref = reference_draws(name, 64, shape, seeded(6))
        for split in SPLITS:
            gen = seeded(6)
            got = torch.cat([ucan_noise.sample_standard(name, k, shape, gen) for k in split])
            assert torch.equal(got, ref), (name, shape, split)


def test_power_law_with_an_explicit_exponent():
    d = 6
    new = ucan_noise.sample_standard("power_law_linf", 9, (d,), seeded(4), a=d + 5)
    old = reference_draws("power_law_linf", 9, (d,), seeded(4), a=d + 5)
    assert torch.equal(new, old)
    assert family("power_law_linf").exponent(d) == d + families.POWER_LAW_TAIL
    assert family("exp_linf").exponent(d) is None


# --------------------------------------------------------------------------------------------------
# scales and certificates
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, d, a", [("gaussian", 3, None), ("laplace", 3, None), ("uniform_linf", 3, None),
                                        ("exp_linf", 3, None), ("power_law_linf", 3, 3 + 10)])
def test_unit_variance_lambda_gives_unit_variance(name, d, a):
    """λ · ε has variance 1 per coordinate: the sample variance of n draws lies within 5 standard errors of 1
    (the standard error from the sample's fourth moment)."""
    lam = ucan_radii.unit_variance_lambda(name, d=d, a=a)
    x = (lam * ucan_noise.sample_standard(name, 200_000, (d,), seeded(0), a=a)).double()
    v = x.pow(2).mean(dim=0)  # the mean is 0 by symmetry
    se = (x.pow(4).mean(dim=0) - v.pow(2)).sqrt() / math.sqrt(len(x))
    assert ((v - 1.0).abs() <= 5 * se).all(), (name, v, se)
    assert ucan_radii.lambda_for_std(name, 0.5, d, a) == pytest.approx(0.5 * lam)


def test_ancer_gaps_are_corollaries_1_and_2():
    p = np.array([0.6, 0.9, 0.999])
    assert np.array_equal(family("gaussian").gap(p), ndtri(p))
    assert np.array_equal(family("uniform").gap(p), 2.0 * p - 1.0)
    # looked up by family (regions.noise_gap) or, knowing the norm only, by the norm's family; 0 where pA <= 1/2
    q = np.array([0.3, 0.5, 0.7])
    for name, norm, gap in (("gaussian", "l2", ndtri(np.clip(q, 0.5, 1))), ("uniform", "l1", 2 * q - 1)):
        assert np.array_equal(regions.noise_gap(q, name), np.where(q > 0.5, gap, 0.0))
        assert np.array_equal(regions.gap_from_lower_bound(q, norm), regions.noise_gap(q, name))
    with pytest.raises(ValueError, match="p_lower must be < 1 for an l2 certificate"):
        regions.noise_gap(1.0, "gaussian")
    with pytest.raises(ValueError, match="noise must be one of"):
        regions.noise_gap(0.9, "laplace")
    top = torch.tensor([[0.7, 0.2], [0.999999, 1e-7]])
    clamped = top.clamp(1e-4, 1 - 1e-4)
    assert torch.equal(family("gaussian").soft_gap(top, 1e-4),
                       0.5 * (torch.special.ndtri(clamped[:, 0]) - torch.special.ndtri(clamped[:, 1])))
    assert torch.equal(family("uniform").soft_gap(top, 1e-4), top[:, 0] - top[:, 1])


def test_radii_and_gaps_share_one_formula():
    """λ Φ^-1(p) and λ (2 p - 1): Table 1's Gaussian and uniform ℓ1 radii are λ times ANCER's gaps, bit for bit."""
    p = np.random.default_rng(0).uniform(0.5, 1.0, 1000)[1:]
    for lam in (0.12, 0.5, math.sqrt(3) * 0.25, 3.0):
        assert np.array_equal(ucan_radii.gaussian_l2_radius(p, lam), lam * family("gaussian").gap(p))
        assert np.array_equal(ucan_radii.uniform_l1_radius(p, lam), lam * family("uniform").gap(p))
        assert np.array_equal(ucan_radii.uniform_l1_radius(p, lam), 2.0 * lam * (p - 0.5))


def test_families_ancer_does_not_certify_say_so():
    for name in ("laplace", "exp_linf", "uniform_linf", "power_law_linf"):
        with pytest.raises(ValueError, match="ANCER certifies no norm"):
            family(name).gap(np.array([0.9]))
        with pytest.raises(ValueError, match="ANCER optimizes no certificate"):
            family(name).soft_gap(torch.tensor([[0.9, 0.1]]), 1e-4)


# --------------------------------------------------------------------------------------------------
# the registry and the lists derived from it
# --------------------------------------------------------------------------------------------------


def test_the_lists_of_names_are_derived_from_the_families():
    assert noise.NOISES == ANCER and ucan_radii.NOISES == UCAN
    assert set(FAMILIES) == set(noise.NOISES) | set(ucan_radii.NOISES)
    assert names.NORM_OF == {"gaussian": "l2", "uniform": "l1"}
    assert list(names.NOISE_OF.items()) == [("l1", "uniform"), ("l2", "gaussian")]  # in the order of names.NORMS
    assert [r.key for r in ucan_radii.TABLE1] == [r.key for n in UCAN for r in family(n).rows]
    assert all(ucan_radii.TABLE1_ROWS[r.key] is r for r in ucan_radii.TABLE1)
    assert [n for n, f in FAMILIES.items() if f.rotation_invariant] == ["gaussian"]
    assert family("gaussian").scale_name == "sigma" and family("uniform").scale_name == "lambda"
    with pytest.raises(ValueError, match="noise"):
        family("cauchy")
    with pytest.raises(ValueError, match="noise"):
        family("laplace", among=noise.NOISES)
    with pytest.raises(ValueError, match=r"\bd\b"):
        family("exp_linf").unit_variance_lambda()


def test_register_refuses_what_would_break_the_lists():
    class Nameless(families.NoiseFamily):
        pass

    class OtherRows(families.NoiseFamily):
        name = "other_rows"
        rows = (families.Table1Row.of("gaussian", "l2", "x", families.gaussian_l2_radius),)

    class BadNorm(families.NoiseFamily):
        name, ancer_norm = "bad_norm", "linf"

    with pytest.raises(TypeError, match="fam must be a NoiseFamily"):
        families.register("gaussian")
    with pytest.raises(ValueError, match="fam.name"):
        families.register(Nameless())
    with pytest.raises(ValueError, match="fam.name"):
        families.register(family("gaussian"))
    with pytest.raises(ValueError, match="fam.rows"):
        families.register(OtherRows())
    with pytest.raises(ValueError, match="fam.ancer_norm"):
        families.register(BadNorm())
    with pytest.raises(ValueError, match="name must be one of"):
        families.unregister("cauchy")
    assert list(FAMILIES) == ["gaussian", "uniform", "laplace", "exp_linf", "uniform_linf", "power_law_linf"]


# --------------------------------------------------------------------------------------------------
# a toy family, added in one place
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def wide_uniform():
    """The toy family in the registry for one test (the one registry line), removed afterwards."""
    fam = families.register(WideUniform())
    yield fam
    families.unregister("wide_uniform")


def test_a_registered_family_shows_in_every_list_while_registered(wide_uniform):
    """The lists are live views of the registry: the names imported by name before the family was registered
    (`noise.NOISES`, `ucan_radii.NOISES` and `TABLE1`, which `methods.ucan` imported at its own import) show it,
    and stop showing it once it is removed. A norm-only lookup (`names.NOISE_OF`) keeps the norm's first family."""
    assert "wide_uniform" in noise.NOISES and "wide_uniform" in ucan_radii.NOISES
    assert noise.check_noise("wide_uniform") == "wide_uniform"
    assert names.NORM_OF["wide_uniform"] == "l1" and names.NOISE_OF["l1"] == "uniform"
    assert ucan_radii.TABLE1[-1] is wide_uniform.rows[0] and "wide_uniform/l1" in ucan_radii.TABLE1_ROWS
    assert ucan.rows_of("wide_uniform") == ["wide_uniform/l1"]
    assert ucan_radii.lambda_for_std("wide_uniform", 0.5) == pytest.approx(0.5 * math.sqrt(3.0) / 2.0)
    families.unregister("wide_uniform")
    assert "wide_uniform" not in noise.NOISES and "wide_uniform" not in ucan_radii.NOISES
    assert "wide_uniform/l1" not in ucan_radii.TABLE1_ROWS and names.NORM_OF == {"gaussian": "l2", "uniform": "l1"}
    with pytest.raises(ValueError, match="noise must be one of"):
        noise.check_noise("wide_uniform")
    families.register(wide_uniform)


def test_a_registered_family_samples_through_the_public_functions(wide_uniform):
    """Its draws are twice the uniform's from the same seed, through `standard_noise`, `DrawStream` (any split)
    and `sample_standard`; its Table 1 row is the uniform's at twice the scale."""
    shape = (2, 5)
    assert torch.equal(noise.standard_noise("wide_uniform", 9, shape, seeded(1)),
                       2.0 * noise.standard_noise("uniform", 9, shape, seeded(1)))
    stream = noise.DrawStream("wide_uniform", shape, seeded(2))
    assert torch.equal(torch.cat([stream.draw(k) for k in (3, 14, 1)]),
                       2.0 * noise.standard_noise("uniform", 18, shape, seeded(2)))
    assert torch.equal(ucan_noise.sample_standard("wide_uniform", 11, shape, seeded(3)),
                       2.0 * ucan_noise.sample_standard("uniform_linf", 11, shape, seeded(3)))
    p = np.array([0.6, 0.8, 0.99])
    assert np.array_equal(ucan_radii.isotropic_radius("wide_uniform/l1", p, 0.3),
                          ucan_radii.isotropic_radius("uniform_linf/l1", p, 0.6))


def test_a_registered_family_certifies_through_smooth(wide_uniform):
    """Smooth certifies with the toy's own gap (looked up by the family, not by the norm): with scale θ it
    classifies the same noise as the uniform with 2θ, so the counts and the bound agree, its gap is twice the
    uniform's and its region is the same ℓ1 cross-polytope (same radius)."""
    model = torch.nn.Linear(4, 3, bias=False)
    with torch.no_grad():
        model.weight.copy_(torch.eye(3, 4))  # the class is the largest of the first three coordinates
    x = torch.tensor([0.6, 0.4, 0.3, 0.5])
    args = dict(n0=64, n=2_000, alpha=0.001)
    toy = Smooth(model, 3, (4,), noise="wide_uniform", batch_size=300, seed=7).certify(x, 0.1, **args)
    uni = Smooth(model, 3, (4,), noise="uniform", batch_size=300, seed=7).certify(x, 0.2, **args)
    assert toy.prediction == uni.prediction == 0 and 0.5 < toy.p_lower < 1.0
    assert (toy.count, toy.p_lower) == (uni.count, uni.p_lower)
    assert toy.gap == 2.0 * uni.gap == float(regions.noise_gap(toy.p_lower, "wide_uniform"))
    assert toy.radius == uni.radius
    assert toy.radius == pytest.approx(float(ucan_radii.isotropic_radius("wide_uniform/l1", toy.p_lower, 0.1)),
                                       rel=1e-6)
    assert toy.radius_proxy == pytest.approx(uni.radius_proxy, rel=1e-6)
    assert toy.log_volume == pytest.approx(uni.log_volume, rel=1e-6)


def test_soft_proxy_radius_is_the_proxy_radius():
    """regions.soft_proxy_radius (the optimizers' objective term) equals regions.proxy_radius in float64, and in
    float32 the expression gap · exp(mean log θ) bit for bit."""
    gen = seeded(0)
    theta = torch.rand(5, 7, generator=gen, dtype=torch.float64) + 0.1
    gap = torch.rand(5, generator=gen, dtype=torch.float64)
    np.testing.assert_allclose(regions.soft_proxy_radius(theta, gap).numpy(),
                               regions.proxy_radius(theta.numpy(), gap.numpy()), rtol=1e-12)
    t32, g32 = theta.float(), gap.float()
    assert torch.equal(regions.soft_proxy_radius(t32, g32), g32 * torch.exp(torch.log(t32).mean(dim=1)))
