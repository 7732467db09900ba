"""Smoothing parameters as one checked value (`parameters.SmoothingParameters`: θ, U, μ), checked once where it is
made: `Smooth`'s methods and `certificate_from_bound` take it as given and give, bit for bit, what they give for the
raw values; the package's one orthogonality test (`parameters.check_rotation`) and its batched form."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from ancer_lite.core.certify import Smooth, certificate_from_bound
from ancer_lite.core.parameters import ORTHOGONALITY_TOL, SmoothingParameters, check_rotation, check_rotations
from ancer_lite.core.streams import certify_streams

SHAPE = (1, 2, 2)
N = 4


def net() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(N, 3))


def orth(n: int, seed: int = 0) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return q * np.sign(np.diag(r))


X = torch.tensor([[[0.2, 0.7], [0.4, 0.1]]])
THETA = torch.tensor([[[0.3, 0.5], [0.7, 0.4]]])
MU = torch.full(SHAPE, 0.05)


@pytest.mark.parametrize("noise", ["gaussian", "uniform"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_smooth_takes_checked_parameters_as_the_raw_values(noise, dtype):
    """certify, lower_bound, vote_counts, sample_counts and predict give the same numbers for the raw θ, U, μ and
    for one SmoothingParameters made of them (a float64 U: the certificate states the region of U as given)."""
    u = torch.from_numpy(orth(N).astype(dtype))
    sm = Smooth(net(), 3, SHAPE, noise, batch_size=7)
    params = SmoothingParameters.of(THETA, SHAPE, u, MU)
    raw = sm.certify(X, THETA, 10, 200, 0.01, u, certify_streams(0, 1), mean=MU)
    assert sm.certify(X, params, 10, 200, 0.01, generator=certify_streams(0, 1)) == raw
    assert (sm.lower_bound(X, params, 10, 200, 0.01, generator=certify_streams(0, 1))
            == sm.lower_bound(X, THETA, 10, 200, 0.01, u, certify_streams(0, 1), mean=MU))
    pts = torch.rand(3, *SHAPE, generator=torch.Generator().manual_seed(2))
    assert np.array_equal(sm.vote_counts(pts, params, 20, generator=torch.Generator().manual_seed(3)),
                          sm.vote_counts(pts, THETA, 20, u, torch.Generator().manual_seed(3), mean=MU))
    assert np.array_equal(sm.sample_counts(X, params, 30, generator=torch.Generator().manual_seed(4)),
                          sm.sample_counts(X, THETA, 30, u, torch.Generator().manual_seed(4), mean=MU))
    assert (sm.predict(X, params, 50, 0.1, generator=torch.Generator().manual_seed(5))
            == sm.predict(X, THETA, 50, 0.1, u, torch.Generator().manual_seed(5), mean=MU))
    bound = certificate_from_bound(raw.prediction, raw.p_lower, params, sm.norm, raw.count, raw.n, noise=noise)
    assert bound == raw
    assert certificate_from_bound(raw.prediction, raw.p_lower, THETA.numpy(), sm.norm, raw.count, raw.n,
                                  rotation=u.numpy()) == raw


def test_parameters_with_a_separate_rotation_or_mean_are_refused():
    sm = Smooth(net(), 3, SHAPE)
    params = SmoothingParameters.of(0.5, SHAPE)
    with pytest.raises(ValueError, match="rotation and mean must be None"):
        sm.sample_counts(X, params, 10, torch.eye(N))
    with pytest.raises(ValueError, match="rotation and mean must be None"):
        sm.certify(X, params, 10, 20, 0.1, mean=MU)
    with pytest.raises(ValueError, match="theta must be SmoothingParameters of inputs of shape"):
        sm.sample_counts(X, SmoothingParameters.of(0.5, (1, 4)), 10)
    with pytest.raises(ValueError, match="rotation must be None"):
        certificate_from_bound(0, 0.9, params, "l2", rotation=np.eye(N))
    with pytest.raises(ValueError, match="noise 'gaussian' certifies l2, not norm"):
        certificate_from_bound(0, 0.9, params, "l1", noise="gaussian")


def test_zero_scales_only_where_made_so():
    """UCAN's θ = λ σ(x) may vanish at a pixel (zero_ok); a scale of 0 is refused otherwise, and an ANCER
    certificate of such parameters is refused (its region would be flat)."""
    theta = torch.tensor([[[0.0, 0.5], [0.5, 0.5]]])
    with pytest.raises(ValueError, match="sigma must be finite and > 0"):
        SmoothingParameters.of(theta, SHAPE, name="sigma")
    params = SmoothingParameters.of(theta, SHAPE, zero_ok=True)
    assert torch.equal(params.theta, theta)
    with pytest.raises(ValueError, match="theta"):
        certificate_from_bound(0, 0.9, params, "l2")
    with pytest.raises(ValueError, match="lam . sigma must be finite and >= 0"):
        SmoothingParameters.of(-theta, SHAPE, name="lam * sigma", zero_ok=True)


def test_one_orthogonality_test_and_its_tolerance():
    """check_rotation: U U^T = I within ORTHOGONALITY_TOL = 1e-6 (float32 rounding, ~1e-8, passes; 0.99996 I does
    not); check_rotations checks a batch matrix by matrix and names the one that fails."""
    u = orth(64, 1)
    assert check_rotation(u, 64) < 1e-13
    assert 0 < check_rotation(torch.from_numpy(u).float(), 64) < 1e-7 < ORTHOGONALITY_TOL
    with pytest.raises(ValueError, match="rotation must be orthogonal"):
        check_rotation(0.99996 * np.eye(4), 4)
    with pytest.raises(ValueError, match=r"^U must be a real \(4, 4\)"):
        check_rotation(np.eye(3), 4, "U")
    with pytest.raises(ValueError, match="^n must"):
        check_rotation(np.eye(3), 0)
    batch = torch.from_numpy(np.stack([orth(N, 0), orth(N, 1)])).float()
    assert check_rotations(batch, 2, N) <= ORTHOGONALITY_TOL
    batch[1] *= 2
    with pytest.raises(ValueError, match=r"rotation\[1\] must be orthogonal"):
        check_rotations(batch, 2, N)
    with pytest.raises(ValueError, match=r"rotation must have shape \(3, 4, 4\)"):
        check_rotations(batch, 3, N)
    with pytest.raises(TypeError, match="rotation must be a torch.Tensor"):
        check_rotations(batch.numpy(), 2, N)


def test_parameters_move_to_the_smooth_device_once():
    params = SmoothingParameters.of(0.5, SHAPE, orth(N), MU)
    assert params.to("cpu") is params
    assert params.deviation < 1e-13 and params.rotation.dtype == torch.float32
    assert np.array_equal(params.rotation64, orth(N))  # a float64 U is kept as given for the certificate
    assert params.scales.dtype == np.float64 and params.scales.shape == (N,)
