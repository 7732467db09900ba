"""Bad inputs to UCAN's modules (`ucan`, `ucan_noise`, `ucan_radii`) raise a ValueError or TypeError naming the
argument (every public function's bad inputs: tests/test_bad_input_table.py), and the checks leave the valid
paths unchanged."""
import math

import numpy as np
import pytest
import torch

from ancer_lite.core import families, ucan_noise, ucan_radii
from ancer_lite.methods import ucan

NAN = float("nan")
SHAPE = (1, 2, 2)


def tiny_model(out: int = 3) -> torch.nn.Module:
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, out))
    with torch.no_grad():
        m[1].weight.mul_(0.1)
        m[1].bias.zero_()
        m[1].bias[0] = 3.0
    return m.eval()


def fixed_npg() -> ucan.FixedNPG:
    return ucan.FixedNPG(np.ones(SHAPE))


def gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


X = torch.full(SHAPE, 0.5)
X8, Y8 = torch.rand(8, *SHAPE, generator=torch.Generator().manual_seed(1)), torch.arange(8) % 3


def radius(**kw):
    return ucan_radii.gaussian_l2_radius(**(dict(p_a=0.9, lam=1.0) | kw))


def standard(**kw):
    return ucan_noise.sample_standard(**(dict(noise="laplace", num=5, shape=SHAPE) | kw))


def universal(**kw):
    return ucan.UniversalNPG(**(dict(input_shape=SHAPE, gamma=5.0, widths=(4, 4, 4, 4)) | kw)).maps()


def train(**kw):
    base = dict(model=tiny_model(), npg=ucan.UniversalNPG(SHAPE, widths=(4, 4, 4, 4)), x=X8.clone(), y=Y8.clone(),
                epochs=1, batch_size=4)
    return ucan.train_ucan(**(base | kw))


def counts(**kw):
    base = dict(model=tiny_model(), x=X.clone(), sigma=torch.ones(SHAPE), mu=torch.zeros(SHAPE), noise="gaussian",
                lam=0.5, num=50, num_classes=3, generator=gen())
    return ucan.sample_counts(**(base | kw))


def row_radii(**kw):
    base = dict(row="gaussian/linf", p_lower=np.array([0.9, 0.4]), min_theta=np.array([0.5, 0.5]),
                log_gm_theta=np.log(np.array([0.6, 0.6])), d=4)
    return ucan.row_radii(**(base | kw))


def search(**kw):
    base = dict(model=tiny_model(), npg=fixed_npg(), x=X.clone(), cls=0, theta=torch.full(SHAPE, 0.5), r1=0.5, steps=3,
                samples=8, generator=gen())
    return ucan.search_violation(**(base | kw))


def soft(**kw):
    base = dict(model=tiny_model(), npg=fixed_npg(), x=X.clone(), cls=0, noise="gaussian", lam=0.5,
                eps=torch.randn(8, *SHAPE, generator=gen()))
    return ucan.soft_smoothed_prob(**(base | kw))


def verify(**kw):
    base = dict(model=tiny_model(), npg=fixed_npg(), x_prime=X.clone(), cls=0, noise="gaussian", lam=0.5, n=100,
                alpha=0.01, num_classes=3, generator=gen())
    return ucan.verify_violation(**(base | kw))


CASES = [
    # ucan_radii
    ("p_a", lambda: radius(p_a="0.9")),
    ("p_a", lambda: radius(p_a=np.array([0.9 + 0.5j]))),
    ("p_a", lambda: radius(p_a=np.array(["0.9"]))),
    ("lam", lambda: radius(lam="1")),
    ("lam", lambda: radius(lam=True)),
    ("lam", lambda: ucan_radii.isotropic_radius("uniform_linf/linf", 0.9, "0.5", d=4)),
    ("std", lambda: ucan_radii.lambda_for_std("gaussian", "0.5")),
    # ucan_noise
    ("a", lambda: families.power_law_exponent(4, "x")),
    ("a", lambda: families.power_law_exponent(4, True)),
    ("shape", lambda: standard(shape=(-1, 2))),
    ("shape", lambda: standard(shape=5)),
    ("shape", lambda: standard(shape=(1.5, 2))),
    ("dtype", lambda: standard(dtype=torch.int64)),
    ("dtype", lambda: standard(noise="gaussian", dtype=torch.int64)),
    ("dtype", lambda: standard(dtype="float32")),
    # anisotropic_noise takes its maps as checked by the entry points: sample_counts, soft_smoothed_prob
    ("lam", lambda: counts(lam=-1.5)),
    ("lam", lambda: counts(lam=math.inf)),
    ("sigma", lambda: counts(sigma=torch.full(SHAPE, NAN))),
    ("sigma", lambda: counts(sigma=torch.full(SHAPE, math.inf))),
    ("sigma", lambda: counts(sigma="abc")),
    ("sigma", lambda: counts(sigma=torch.ones(2, 5, *SHAPE))),  # would enlarge the draws
    ("mu", lambda: counts(mu=torch.zeros(3))),
    ("mu", lambda: counts(mu=torch.full(SHAPE, -math.inf))),
    ("eps", lambda: soft(eps=[[0.0]])),
    # ucan: NPGs
    ("shape", lambda: ucan.pattern_sigma((1.5, 4, 4), "l2")),
    ("shape", lambda: ucan.pattern_sigma(("a", 4, 4), "l2")),
    ("shape", lambda: ucan.pattern_sigma((True, 4, 4), "l2")),
    ("shape", lambda: ucan.pattern_sigma(5, "l2")),
    ("sigma", lambda: ucan.FixedNPG(np.array([]))),
    ("sigma", lambda: ucan.FixedNPG("abc")),
    ("sigma", lambda: ucan.FixedNPG("1.0")),
    ("widths", lambda: universal(widths=(0, 4, 4, 4))),
    ("widths", lambda: universal(widths=(-1, 4, 4, 4))),
    ("widths", lambda: universal(widths=(4, 4, 4))),
    ("input_shape", lambda: universal(input_shape=(0, 2, 2))),
    ("input_shape", lambda: universal(input_shape=(-1, 2, 2))),
    ("input_shape", lambda: universal(input_shape=None)),
    ("input_shape", lambda: ucan.InputDependentNPG((0, 2, 2), growth=2)(torch.full((1, *SHAPE), 0.5))),
    ("pattern", lambda: ucan.build_npg("pattern", SHAPE, pattern="l3")),
    ("input_shape", lambda: ucan.build_npg("isotropic", (-1, 2, 2))),
    ("input_shape", lambda: ucan.build_npg("isotropic", (0, 2, 2))),
    # ucan: training
    ("y", lambda: train(y=torch.tensor([0, 1, 2, 0, 1, 2, 0, 9]))),
    ("y", lambda: train(y=torch.tensor([0, 1, 2, 0, 1, 2, 0, -1]))),
    ("y", lambda: train(y=Y8.float())),
    ("y", lambda: train(y=Y8.numpy())),
    ("npg", lambda: train(npg=None)),
    # ucan: certification
    ("lam", lambda: counts(lam=-1.0)),
    ("lam", lambda: counts(lam=0.0)),
    ("lam", lambda: counts(lam=NAN)),
    ("batch_size", lambda: counts(batch_size=0)),
    ("batch_size", lambda: counts(batch_size=-1)),
    ("num", lambda: counts(num=0)),
    ("sigma", lambda: counts(sigma=-torch.ones(SHAPE))),
    ("sigma", lambda: counts(sigma=torch.ones(3))),
    ("mu", lambda: counts(mu=torch.full(SHAPE, NAN))),
    ("npg", lambda: ucan.npg_maps(None, X.clone())),
    ("min_theta", lambda: row_radii(min_theta=np.array([5.0, 5.0]))),
    ("p_lower", lambda: row_radii(p_lower=np.array([0.9, 0.4, 0.8]))),
    ("noise", lambda: ucan.rows_of("bogus")),
    ("noise", lambda: ucan.rows_of(None)),
    # ucan: soundness audit
    ("r1", lambda: search(r1=-1.0)),
    ("r1", lambda: search(r1=NAN)),
    ("cls", lambda: search(cls=7)),
    ("cls", lambda: search(cls=-1)),
    ("samples", lambda: search(samples=0)),
    ("theta", lambda: search(theta=-torch.full(SHAPE, 0.5))),
    ("theta", lambda: search(theta=torch.full((3,), 0.5))),
    ("lam", lambda: search(lam=0.0)),
    ("cls", lambda: soft(cls=7)),
    ("lam", lambda: soft(lam=-1.0)),
    ("cls", lambda: verify(cls=7)),
    ("n", lambda: verify(n=0)),
    ("lam", lambda: verify(lam=-1.0)),
    ("lam", lambda: verify(lam=0.0)),
    ("alpha", lambda: verify(alpha=1.0)),
    ("batch_size", lambda: verify(batch_size=0)),
    ("x_prime", lambda: verify(x_prime=torch.full(SHAPE, NAN))),
]


@pytest.mark.parametrize("name,call", CASES, ids=[f"{i}-{name}" for i, (name, _) in enumerate(CASES)])
def test_bad_input_raises_naming_the_argument(name, call):
    with pytest.raises((ValueError, TypeError), match=rf"(?<![\w.]){name}(?![\w])"):
        call()


def test_bad_counts_draw_nothing():
    """sample_counts checks its arguments before the first draw: a refused call leaves the generator untouched."""
    g = gen()
    with pytest.raises(ValueError, match="sigma"):
        counts(sigma=-torch.ones(SHAPE), generator=g)
    assert torch.equal(g.get_state(), gen().get_state())


# --------------------------------------------------------------------------------------------------
# the valid paths are unchanged
# --------------------------------------------------------------------------------------------------


def test_anisotropic_noise_is_eq2_exactly():
    eps = torch.randn(6, 2, 3, generator=gen())
    sigma, mu = torch.rand(2, 3, generator=gen()) + 0.1, torch.randn(2, 3, generator=gen())
    ref = eps * (0.3 * sigma) + mu
    assert torch.equal(ucan_noise.anisotropic_noise(eps, 0.3, sigma, mu), ref)
    assert torch.equal(ucan_noise.anisotropic_noise(eps, 0.3, sigma), eps * (0.3 * sigma))
    # per-draw σ (input-dependent NPG) and σ = 0 (a pixel without noise) are valid
    per_draw = sigma.expand(6, 2, 3).clone()
    per_draw[0, 0, 0] = 0.0
    assert torch.equal(ucan_noise.anisotropic_noise(eps, 0.3, per_draw, mu), eps * (0.3 * per_draw) + mu)


def test_certify_counts_equal_the_checked_sample_counts():
    """certify (which skips sample_counts' checks after its own) draws exactly what the public sample_counts
    draws for the same generator: n0 selection draws, then n estimation draws."""
    model, npg = tiny_model(), fixed_npg()
    x = torch.full(SHAPE, 0.2)
    c = ucan.certify(model, npg, x, "laplace", 2.0, 30, 250, 0.01, 3, torch.Generator().manual_seed(4), batch_size=64)
    g = torch.Generator().manual_seed(4)
    sigma, mu = ucan.npg_maps(npg, x)
    sel = ucan.sample_counts(model, x, sigma, mu, "laplace", 2.0, 30, 3, g, batch_size=64)
    est = ucan.sample_counts(model, x, sigma, mu, "laplace", 2.0, 250, 3, g, batch_size=64)
    assert c.count == int(est[int(np.argmax(sel))])


def test_soft_smoothed_prob_is_the_formula_exactly():
    model, npg = tiny_model(), fixed_npg()
    eps = torch.randn(8, *SHAPE, generator=gen())
    p = ucan.soft_smoothed_prob(model, npg, X, 1, "gaussian", 0.5, eps)
    ref = torch.softmax(model(X.unsqueeze(0) + eps * (0.5 * torch.ones(1, *SHAPE))), dim=1)[:, 1].mean()
    assert torch.equal(p, ref)


def test_row_radii_accepts_equal_thetas_up_to_rounding():
    """θ_i all equal: min θ = geomean θ up to the rounding of the log-mean, which must not be refused."""
    for lam in (0.12, 0.25, 0.5, 1.0 / 3.0, 2.7):
        theta = (lam * torch.ones(3 * 32 * 32).double())
        m, g = float(theta.min()), float(torch.log(theta).mean())
        r, alm = ucan.row_radii("gaussian/l2", np.array([0.9]), np.array([m]), np.array([g]), theta.numel())
        assert math.isclose(float(r[0]), float(alm[0]), rel_tol=1e-12)


def test_train_ucan_accepts_labels_not_covering_every_class():
    """The label check compares the largest label with the model's outputs: labels {0, 1} with 3 outputs train."""
    model, npg = train(y=torch.tensor([0, 1, 1, 0, 1, 0, 0, 1]))
    assert all(bool(torch.isfinite(p).all()) for p in model.parameters())
