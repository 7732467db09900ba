"""Bad inputs to ancer_lite.core.regions, ancer_lite.core.noise and ancer_lite.core.validation raise a ValueError (or TypeError)
that names the argument, and the checks leave valid results unchanged, bit for bit."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ancer_lite.core import noise, parameters, regions, validation

NAN, INF = math.nan, math.inf
THETA4 = np.full(4, 0.5)
TWO_I = 2.0 * np.eye(4)
NAN4 = np.full((4, 4), NAN)


def _u4() -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(0).normal(size=(4, 4)))
    return q * np.sign(np.diag(r))


U4 = _u4()


def _region(**bad) -> regions.CertifiedRegion:
    """A CertifiedRegion with one field replaced."""
    return regions.CertifiedRegion(**{**dict(center=np.zeros(4), scales=THETA4, gap=1.0, norm="l2", prediction=0),
                                      **bad})

# (label, call, exception, argument name the message must contain)
CASES = [
    # regions.gap_from_lower_bound
    ("gap p_lower=1 l2", lambda: regions.gap_from_lower_bound(1.0, "l2"), ValueError, "p_lower"),
    ("gap p_lower str", lambda: regions.gap_from_lower_bound("0.9", "l2"), ValueError, "p_lower"),
    ("gap p_lower bool", lambda: regions.gap_from_lower_bound(True, "l1"), ValueError, "p_lower"),
    ("gap p_lower None", lambda: regions.gap_from_lower_bound(None, "l2"), ValueError, "p_lower"),
    # regions.semi_axes
    ("semi_axes theta<0", lambda: regions.semi_axes(-THETA4, 1.0), ValueError, "theta"),
    ("semi_axes theta nan", lambda: regions.semi_axes(np.full(4, NAN), 1.0), ValueError, "theta"),
    ("semi_axes theta str", lambda: regions.semi_axes("abc", 1.0), ValueError, "theta"),
    ("semi_axes gap<0", lambda: regions.semi_axes(THETA4, -1.0), ValueError, "gap"),
    ("semi_axes gap nan", lambda: regions.semi_axes(THETA4, NAN), ValueError, "gap"),
    ("semi_axes 2 gaps", lambda: regions.semi_axes(THETA4, np.array([1.0, 2.0])), ValueError, "gap"),
    ("semi_axes 3 gaps", lambda: regions.semi_axes(THETA4, np.array([1.0, 2.0, 3.0])), ValueError, "gap"),
    # regions.enclosed_radius
    ("enclosed theta<0", lambda: regions.enclosed_radius(-THETA4, 1.0, "l2"), ValueError, "theta"),
    ("enclosed theta nan", lambda: regions.enclosed_radius(np.full(4, NAN), 1.0, "l2"), ValueError, "theta"),
    ("enclosed theta empty", lambda: regions.enclosed_radius(np.array([]), 1.0, "l2"), ValueError, "theta"),
    ("enclosed theta str", lambda: regions.enclosed_radius("abc", 1.0, "l2"), ValueError, "theta"),
    ("enclosed gap<0", lambda: regions.enclosed_radius(THETA4, -1.0, "l2"), ValueError, "gap"),
    ("enclosed gap nan", lambda: regions.enclosed_radius(THETA4, NAN, "l2"), ValueError, "gap"),
    ("enclosed norm l3", lambda: regions.enclosed_radius(THETA4, 1.0, "l3"), ValueError, "norm"),
    ("enclosed rot 2I", lambda: regions.enclosed_radius(THETA4, 1.0, "l1", TWO_I), ValueError, "rotation"),
    ("enclosed rot 2I l2", lambda: regions.enclosed_radius(THETA4, 1.0, "l2", TWO_I), ValueError, "rotation"),
    ("enclosed rot I3", lambda: regions.enclosed_radius(THETA4, 1.0, "l1", np.eye(3)), ValueError, "rotation"),
    ("enclosed rot nan", lambda: regions.enclosed_radius(THETA4, 1.0, "l1", NAN4), ValueError, "rotation"),
    # regions.log_geometric_mean / proxy_radius / log_volume
    ("lgm theta<0", lambda: regions.log_geometric_mean(-THETA4), ValueError, "theta"),
    ("lgm theta 0", lambda: regions.log_geometric_mean(np.zeros(4)), ValueError, "theta"),
    ("lgm theta empty", lambda: regions.log_geometric_mean(np.array([])), ValueError, "theta"),
    ("lgm theta nan", lambda: regions.log_geometric_mean(np.full(4, NAN)), ValueError, "theta"),
    ("lgm theta scalar", lambda: regions.log_geometric_mean(0.5), ValueError, "theta"),
    ("proxy theta<0", lambda: regions.proxy_radius(-THETA4, 1.0), ValueError, "theta"),
    ("proxy theta 0", lambda: regions.proxy_radius(np.zeros(4), 1.0), ValueError, "theta"),
    ("proxy gap<0", lambda: regions.proxy_radius(THETA4, -1.0), ValueError, "gap"),
    ("proxy gap nan", lambda: regions.proxy_radius(THETA4, NAN), ValueError, "gap"),
    ("logvol theta<0", lambda: regions.log_volume(-THETA4, 1.0, "l2"), ValueError, "theta"),
    ("logvol theta 0", lambda: regions.log_volume(np.zeros(4), 1.0, "l2"), ValueError, "theta"),
    ("logvol theta nan", lambda: regions.log_volume(np.full(4, NAN), 1.0, "l1"), ValueError, "theta"),
    ("logvol gap nan", lambda: regions.log_volume(THETA4, NAN, "l2"), ValueError, "gap"),
    ("logvol gap inf", lambda: regions.log_volume(THETA4, INF, "l2"), ValueError, "gap"),
    ("logvol norm", lambda: regions.log_volume(THETA4, 1.0, "l3"), ValueError, "norm"),
    # regions.region_norm / contains are formulas on arrays taken as given (norm checked); a region's values are
    # checked where it enters, as a CertifiedRegion, whose contains checks its points
    ("rnorm norm", lambda: regions.region_norm(np.full(4, 0.1), THETA4, "l3"), ValueError, "norm"),
    ("contains norm", lambda: regions.contains(np.full(4, 0.1), np.zeros(4), THETA4, "l3"), ValueError, "norm"),
    ("region scales 0", lambda: _region(scales=np.zeros(4)), ValueError, "scales"),
    ("region scales<0", lambda: _region(scales=-THETA4), ValueError, "scales"),
    ("region scales nan", lambda: _region(scales=np.full(4, NAN)), ValueError, "scales"),
    ("region scales inf", lambda: _region(scales=np.full(4, INF)), ValueError, "scales"),
    ("region scales empty", lambda: _region(scales=np.array([])), ValueError, "scales"),
    ("region center inf", lambda: _region(center=np.full(4, INF)), ValueError, "center"),
    ("region center shape", lambda: _region(center=np.zeros(3)), ValueError, "center"),
    ("region rot 2I", lambda: _region(rotation=TWO_I), ValueError, "rotation"),
    ("region rot shape", lambda: _region(rotation=np.eye(3)), ValueError, "rotation"),
    ("region.contains points nan", lambda: _region().contains(np.full(4, NAN)), ValueError, "points"),
    ("region.contains points inf rows", lambda: _region().contains(np.array([[0.1] * 4, [INF] * 4])), ValueError,
     "points"),
    ("region.contains points shape", lambda: _region().contains(np.full(3, 0.1)), ValueError, "points"),
    ("region.contains points str", lambda: _region().contains("abc"), ValueError, "points"),
    # noise
    ("uniform_lambda -1", lambda: noise.uniform_lambda(-1.0), ValueError, "sigma"),
    ("uniform_lambda 0", lambda: noise.uniform_lambda(0.0), ValueError, "sigma"),
    ("uniform_lambda nan", lambda: noise.uniform_lambda(NAN), ValueError, "sigma"),
    ("uniform_lambda inf", lambda: noise.uniform_lambda(INF), ValueError, "sigma"),
    ("uniform_lambda str", lambda: noise.uniform_lambda("0.5"), ValueError, "sigma"),
    ("uniform_lambda None", lambda: noise.uniform_lambda(None), ValueError, "sigma"),
    ("check_rotation str", lambda: parameters.check_rotation("x", 4), ValueError, "rotation"),
    ("check_rotation n=0", lambda: parameters.check_rotation(torch.eye(4), 0), ValueError, "n"),
    ("check_rotation n float", lambda: parameters.check_rotation(torch.eye(4), 4.0), ValueError, "n"),
    ("check_rotation 0.99996 I", lambda: parameters.check_rotation(0.99996 * np.eye(4), 4), ValueError, "rotation"),
    ("standard_noise int dtype", lambda: noise.standard_noise("gaussian", 5, (1, 2, 2), dtype=torch.int64),
     ValueError, "dtype"),
    ("standard_noise device", lambda: noise.standard_noise("gaussian", 5, (1, 2, 2), device="tpu"), ValueError,
     "device"),
    ("standard_noise int out", lambda: noise.standard_noise("gaussian", 5, (4,), out=torch.zeros(5, 4,
                                                                                                 dtype=torch.long)),
     ValueError, "out"),
    # scale_noise takes its arguments as checked by its entry points (Smooth's methods, sample_noise)
    ("sample_noise theta<0", lambda: noise.sample_noise("gaussian", torch.tensor(-0.5), 5, (1, 2, 2)), ValueError,
     "theta"),
    ("sample_noise theta nan", lambda: noise.sample_noise("gaussian", torch.tensor(NAN), 5, (1, 2, 2)), ValueError,
     "theta"),
    ("sample_noise theta float<0", lambda: noise.sample_noise("gaussian", -0.5, 5, (1, 2, 2)), ValueError, "theta"),
    ("sample_noise theta shape", lambda: noise.sample_noise("gaussian", torch.ones(3, 1, 1), 5, (1, 2, 2)),
     ValueError, "theta"),
    ("sample_noise rot 2I f32", lambda: noise.sample_noise("gaussian", 0.5, 5, (1, 2, 2),
                                                           rotation=torch.tensor(TWO_I, dtype=torch.float32)),
     ValueError, "rotation"),
    ("sample_noise rot nan", lambda: noise.sample_noise("gaussian", 0.5, 5, (1, 2, 2),
                                                        rotation=torch.tensor(NAN4, dtype=torch.float32)), ValueError,
     "rotation"),
    ("sample_noise rot I3", lambda: noise.sample_noise("gaussian", 0.5, 5, (1, 2, 2), rotation=torch.eye(3)),
     ValueError, "rotation"),
    ("sample_noise rot str", lambda: noise.sample_noise("gaussian", 0.5, 5, (4,), rotation="eye"),
     ValueError, "rotation"),
    ("sample_noise theta str", lambda: noise.sample_noise("gaussian", "a", 5, (1, 2, 2)), ValueError, "theta"),
    ("sample_noise shape<0", lambda: noise.sample_noise("gaussian", 0.5, 5, (-1, 2)), ValueError, "shape"),
    ("sample_noise shape str", lambda: noise.sample_noise("gaussian", 0.5, 5, "abc"), ValueError, "shape"),
    ("sample_noise int dtype", lambda: noise.sample_noise("gaussian", 0.5, 5, (1, 2, 2), dtype=torch.int64),
     ValueError, "dtype"),
    ("sample_noise rot 2I", lambda: noise.sample_noise("gaussian", 0.5, 5, (4,), rotation=torch.tensor(TWO_I)),
     ValueError, "rotation"),
    # validation helpers
    ("check_probability str", lambda: validation.check_probability("0.5", "alpha"), ValueError, "alpha"),
    ("check_probability bool", lambda: validation.check_probability(True, "alpha"), ValueError, "alpha"),
    ("check_count minimum", lambda: validation.check_count(3, "n", minimum="a"), TypeError, "minimum"),
    ("check_positive bool", lambda: validation.check_positive(True, "lr"), ValueError, "lr"),
    ("check_positive str", lambda: validation.check_positive("2", "lr"), ValueError, "lr"),
    ("check_probabilities str", lambda: validation.check_probabilities("0.5", "p"), ValueError, "p"),
    ("check_probabilities bools", lambda: validation.check_probabilities(np.array([True, False]), "p"), ValueError,
     "p"),
    ("check_finite_tensor str", lambda: validation.check_finite_tensor("abc", "x"), ValueError, "x"),
    ("check_finite_tensor None", lambda: validation.check_finite_tensor(None, "x"), ValueError, "x"),
    ("check_finite_tensor shape int", lambda: validation.check_finite_tensor(torch.zeros(2), "x", 5), ValueError,
     "shape"),
    ("check_scale str", lambda: validation.check_scale("a", (2, 2)), ValueError, "theta"),
    ("check_scale None", lambda: validation.check_scale(None, (2, 2)), ValueError, "theta"),
    ("check_scale bool", lambda: validation.check_scale(True, (2, 2)), ValueError, "theta"),
    ("check_scale bool tensor", lambda: validation.check_scale(torch.tensor(True), (2, 2)), ValueError, "theta"),
    ("check_scale shape<0", lambda: validation.check_scale(0.5, (2, -1)), ValueError, "shape"),
    ("check_choice None", lambda: validation.check_choice("a", "x", None), TypeError, "choices"),
    ("check_float_dtype", lambda: validation.check_float_dtype(torch.int32), ValueError, "dtype"),
    ("check_device", lambda: validation.check_device("tpu"), ValueError, "device"),
]


@pytest.mark.parametrize("call,exc,name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_naming_the_argument(call, exc, name):
    with pytest.raises(exc, match=rf"(?<![\w.]){name}(?![\w])"):
        call()


# --------------------------------------------------------------------------------------------------
# valid inputs: same numbers as the unchecked arithmetic (bit for bit)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm", ["l1", "l2"])
@pytest.mark.parametrize("rotated", [False, True])
def test_region_norm_is_the_formula(norm, rotated):
    """region_norm (Algorithm 1's inner test) gives the plain formula's bits; contains and CertifiedRegion.contains
    (which checks its points) agree with it."""
    rng = np.random.default_rng(1)
    n = 6
    d = rng.normal(size=(7, n))
    s = rng.uniform(0.05, 2.0, size=(7, n))
    u = np.linalg.qr(rng.normal(size=(n, n)))[0] if rotated else None
    z = (d @ u if rotated else d) / s
    want = np.sqrt((z * z).sum(axis=-1)) if norm == "l2" else np.abs(z).sum(axis=-1)
    assert np.array_equal(regions.region_norm(d, s, norm, u), want)
    assert np.array_equal(regions.contains(d + 1.0, np.ones(n), s, norm, u), want <= 1.0)
    region = regions.CertifiedRegion(np.ones(n), s[0], 1.0, norm, 0, u)
    assert np.array_equal(region.contains(d[:1] + 1.0), want[:1] <= 1.0)


def test_region_sizes_same_result_as_the_formulas():
    """semi_axes, enclosed_radius, proxy_radius, log_volume and gap_from_lower_bound: unchanged arithmetic."""
    rng = np.random.default_rng(2)
    theta = rng.uniform(0.05, 1.0, size=(3, 5))
    gap = np.array([0.0, 0.4, 1.3])
    assert np.array_equal(regions.semi_axes(theta, gap), gap[:, None] * theta)
    assert np.array_equal(regions.enclosed_radius(theta, gap, "l2"), gap * theta.min(axis=-1))
    assert np.array_equal(regions.proxy_radius(theta, gap), gap * np.exp(np.log(theta).mean(axis=-1)))
    assert regions.log_volume(theta, gap, "l1")[0] == -np.inf
    assert regions.log_volume(theta[0], -1.0, "l2") == -np.inf  # gap <= 0: -inf, as documented
    assert float(regions.gap_from_lower_bound(0.9, "l1")) == 2.0 * 0.9 - 1.0
    assert float(regions.gap_from_lower_bound(1.0, "l1")) == 1.0  # l1: p_lower = 1 is a finite certificate


def test_scale_noise_same_result_and_rotation_check():
    """scale_noise: theta * eps then U; an orthogonal U rounded to float32 passes `parameters.check_rotation`,
    also at n = 784."""
    rng = np.random.default_rng(3)
    for n, dtype in ((6, torch.float64), (784, torch.float32)):
        u = torch.tensor(np.linalg.qr(rng.normal(size=(n, n)))[0], dtype=dtype)
        eps = torch.randn(50, n, dtype=dtype, generator=torch.Generator().manual_seed(0))
        theta = torch.tensor(rng.uniform(0.1, 1.0, size=n), dtype=dtype)
        assert parameters.check_rotation(u, n) <= parameters.ORTHOGONALITY_TOL
        out = noise.scale_noise(eps, theta, u)
        assert torch.equal(out, (eps * theta) @ u.to(dtype).T)
        assert torch.equal(noise.scale_noise(eps, theta), eps * theta)
    # a float theta and a per-draw theta still broadcast as before
    eps = torch.randn(5, 1, 2, 2)
    assert torch.equal(noise.scale_noise(eps, 0.5), eps * 0.5)
    assert torch.equal(noise.scale_noise(eps, torch.full((5, 1, 2, 2), 0.3)), eps * 0.3)


def test_standard_noise_into_buffer_unchanged():
    """standard_noise with out= (CERTIFY's per-batch call) draws the same numbers as before the checks."""
    buf = torch.empty(4, 3)
    a = noise.standard_noise("gaussian", 4, (3,), torch.Generator().manual_seed(5), out=buf).clone()
    b = torch.empty(4, 3).normal_(generator=torch.Generator().manual_seed(5))
    assert torch.equal(a, b)
    assert torch.equal(noise.sample_noise("uniform", 0.5, 4, (3,), torch.Generator().manual_seed(6)),
                       0.5 * torch.empty(4, 3).uniform_(-1.0, 1.0, generator=torch.Generator().manual_seed(6)))
