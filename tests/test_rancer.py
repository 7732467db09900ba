"""rancer.py: Hessian rotation (orthogonal, diagonalizes H), Algorithm 1's clipping and initializations,
rotated CERTIFY (identity rotation = axis-aligned CERTIFY, draw for draw) and the soundness of the rotated
certificate against a half-space classifier, whose smoothed probability is known in closed form."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import norm as normal

from ancer_lite.core.certify import Smooth
from ancer_lite.methods import rancer
from ancer_lite.methods.hessian import input_hessian
from ancer_lite.methods.registry import OptimSettings
from ancer_lite.runs import rancer_runs, selection
from ancer_lite.runs.experiment import certify_input, optimize_thetas


def _softplus_net(dim: int = 5, classes: int = 3) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(dim, 12), torch.nn.Softplus(), torch.nn.Linear(12, classes))


def _random_rotation(n: int, seed: int) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def test_hessian_rotation_is_orthogonal_and_diagonalizes_the_hessian():
    model, x = _softplus_net(), torch.rand(5)
    u, w = rancer.hessian_rotation(model, x)
    assert np.abs(u @ u.T - np.eye(5)).max() < 1e-12
    assert (np.diff(w) <= 0).all()
    np.testing.assert_allclose(u @ np.diag(w) @ u.T, input_hessian(model, x), atol=1e-10)


def test_settings_reject_bad_values():
    with pytest.raises(ValueError, match="gamma1"):
        rancer.RancerSettings(gamma1=1.0)
    with pytest.raises(ValueError, match="gamma2"):
        rancer.RancerSettings(gamma2=-0.1)
    with pytest.raises(ValueError, match="init"):
        rancer.RancerSettings(init="random")
    with pytest.raises(ValueError, match="lr"):
        rancer.RancerSettings(lr=0.0)


def test_optimization_stays_in_the_clip_range_and_initializations():
    model, x = _softplus_net(), torch.rand(3, 5)
    rot = torch.from_numpy(np.stack([_random_rotation(5, k) for k in range(3)])).float()
    s0 = torch.tensor([0.1, 0.2, 0.3])
    settings = rancer.RancerSettings(iterations=20, lr=50.0, samples=16, gamma1=0.3, gamma2=0.5)
    th = rancer.optimize_rancer(model, x, rot, s0, settings, generator=torch.Generator().manual_seed(0))
    lo, hi = (s0 * 0.7)[:, None], (s0 * 1.5)[:, None]
    assert ((th >= lo - 1e-7) & (th <= hi + 1e-7)).all()
    assert ((th - lo).abs() < 1e-6).any() or ((th - hi).abs() < 1e-6).any()  # a large step reaches the clip
    same = rancer.optimize_rancer(model, x, rot, s0, rancer.RancerSettings(iterations=0))
    np.testing.assert_array_equal(same.numpy(), s0[:, None].expand(3, 5).numpy())
    eig = torch.tensor([[2.0, -0.5, 1e-6, 0.0, 0.3]] * 3)
    fixed = rancer.optimize_rancer(model, x, rot, s0, rancer.RancerSettings(init="eigen_fixed"), eig)
    np.testing.assert_allclose(fixed[0].numpy(), [2.0, 0.5, rancer.MIN_SCALE, rancer.MIN_SCALE, 0.3])
    with pytest.raises(ValueError, match="eigenvalues"):
        rancer.optimize_rancer(model, x, rot, s0, rancer.RancerSettings(init="eigen_init"))
    with pytest.raises(ValueError, match="rotation"):
        rancer.optimize_rancer(model, x, rot[:2], s0, settings)


def test_an_upper_clip_never_reached_means_every_larger_gamma2_gives_the_same_scales():
    model, x = _softplus_net(), torch.rand(3, 5)
    rot = torch.from_numpy(np.stack([_random_rotation(5, k) for k in range(3)])).float()
    s0 = torch.tensor([0.1, 0.2, 0.3])

    def run(lr: float, gamma2: float) -> tuple[torch.Tensor, bool]:
        settings = rancer.RancerSettings(iterations=15, lr=lr, samples=16, gamma1=0.3, gamma2=gamma2)
        return rancer.optimize_rancer(model, x, rot, s0, settings, generator=torch.Generator().manual_seed(1),
                                      report_upper_clip=True)

    reached = {}
    for lr in (0.5, 50.0):
        runs = {g: run(lr, g) for g in (0.01, 0.5, 2.0, 8.0, 1e6)}
        reached[lr] = [clipped for _, clipped in runs.values()]
        for g, (th, clipped) in runs.items():
            if not clipped:
                assert (th < (s0 * (1 + g))[:, None]).all()
                for g2, (th2, _) in runs.items():
                    if g2 > g:
                        np.testing.assert_array_equal(th2.numpy(), th.numpy())  # number for number
    assert reached[0.5][0] and not reached[0.5][-1]  # both cases occur, so the test exercises both
    assert reached[50.0][0]
    plain = rancer.optimize_rancer(model, x, rot, s0, rancer.RancerSettings(iterations=15, lr=0.5, samples=16,
                                                                            gamma1=0.3, gamma2=2.0),
                                   generator=torch.Generator().manual_seed(1))
    np.testing.assert_array_equal(plain.numpy(), run(0.5, 2.0)[0].numpy())  # reporting changes nothing


def test_selection_reuses_only_runs_it_would_repeat_number_for_number(monkeypatch):
    """select_rancer's table (with its reused rows) equals the table of a search that runs every row."""
    model, x = _softplus_net(), torch.rand(6, 5)
    y = model(x).argmax(1)
    sigma0 = np.full(6, 0.2, np.float32)
    base = rancer.RancerSettings(iterations=8, samples=16, gamma1=0.5, gamma2=0.5)
    args = (model, x, y, sigma0, 0.2, [0.3, 1.0, 3.0], [0.05, 0.5, 4.0], base, 20, 200, 0.001, 3)
    _, table = selection.select_rancer(*args)
    assert not table.computed.all() and (~table.upper_clip_reached).any()
    optimize = rancer.optimize_rancer
    calls = []

    def counting(*a, **k):
        calls.append(a[4])
        return optimize(*a, **k)

    monkeypatch.setattr(selection, "optimize_rancer", counting)
    _, again = selection.select_rancer(*args)
    assert len(calls) == int(table.computed.sum()) == len(set(calls))
    # every row recomputed from scratch, without the reuse
    rot, eig = rancer.hessian_rotations(model, x)
    for row in table.itertuples():
        settings = rancer.RancerSettings(**{**base.__dict__, "lr": row.lr_relative * 0.2, "gamma2": row.gamma2})
        gen = rancer.rancer_streams(x, 0, list(range(6)))  # each input's own stream, as select_rancer draws
        th = optimize(model, x, torch.from_numpy(rot).float(), torch.as_tensor(sigma0), settings,
                      torch.from_numpy(eig).float(), gen).numpy()
        smooth = Smooth(model, 3, (5,), seed=0)
        certs = [rancer.certify_rotated(smooth, x[k], th[k], rot[k], k, 20, 200, 0.001, 0) for k in range(6)]
        correct = np.array([c.prediction == int(y[k]) for k, c in enumerate(certs)])
        assert row.acr == float((np.array([c.radius for c in certs]) * correct).mean())
        assert row.acr_proxy == float((np.array([c.radius_proxy for c in certs]) * correct).mean())
    pd.testing.assert_frame_equal(table, again)


def test_identity_rotation_certifies_exactly_like_the_axis_aligned_noise():
    model, x = _softplus_net(), torch.rand(5)
    theta = np.linspace(0.1, 0.3, 5).astype(np.float32)
    smooth = Smooth(model, 3, (5,), "gaussian", batch_size=500)
    a = rancer.certify_rotated(smooth, x, theta, np.eye(5), key=7, n0=50, n=2_000, alpha=0.001)
    b = certify_input(smooth, x, theta, key=7, n0=50, n=2_000, alpha=0.001)
    assert (a.prediction, a.count, a.radius, a.radius_proxy) == (b.prediction, b.count, b.radius, b.radius_proxy)


def test_ancer_objective_with_an_identity_rotation_is_ancer():
    """The matched-objective ablation's rotated ANCER arm (`optimize_thetas(rotations=...)`): U = I draws the very
    same noise (U (θ ⊙ z) = θ ⊙ z exactly), so θ is ANCER's number for number; another U gives other scales, still
    >= Isotropic DD's σ (ANCER's projection); rotations are refused for other methods or of the wrong shape."""
    model, x = _softplus_net(), torch.rand(4, 5)
    settings = OptimSettings().changed("isotropic", iterations=3, samples=8).changed("ancer", iterations=4, samples=8)
    iso = optimize_thetas(model, x, "gaussian", 0.25, "isotropic", settings, seed=3, keys=[5, 6, 7, 8])
    plain = optimize_thetas(model, x, "gaussian", 0.25, "ancer", settings, seed=3, isotropic=iso, keys=[5, 6, 7, 8])
    eye = optimize_thetas(model, x, "gaussian", 0.25, "ancer", settings, seed=3, isotropic=iso, keys=[5, 6, 7, 8],
                          rotations=np.broadcast_to(np.eye(5), (4, 5, 5)))
    assert np.array_equal(plain, eye)
    rot = np.stack([_random_rotation(5, k) for k in range(4)])
    turned = optimize_thetas(model, x, "gaussian", 0.25, "ancer", settings, seed=3, isotropic=iso, keys=[5, 6, 7, 8],
                             rotations=rot)
    assert not np.array_equal(turned, plain) and (turned >= iso - 1e-7).all()
    with pytest.raises(ValueError, match="rotations apply to method 'ancer'"):
        optimize_thetas(model, x, "gaussian", 0.25, "isotropic", settings, rotations=rot)
    with pytest.raises(ValueError, match="rotations must have shape"):
        optimize_thetas(model, x, "gaussian", 0.25, "ancer", settings, isotropic=iso, rotations=rot[:2])


class _HalfSpace(torch.nn.Module):
    """Logits (0, w.x - b): class 1 iff w.x >= b."""

    def __init__(self, w: np.ndarray, b: float) -> None:
        super().__init__()
        self.w, self.b = torch.from_numpy(w).float(), float(b)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = x.reshape(len(x), -1) @ self.w - self.b
        return torch.stack([torch.zeros_like(s), 50.0 * s], dim=1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rotated_certificate_is_sound_for_a_half_space(seed, tmp_path):
    """For f = 1[w.x >= b] and noise U (Σ̂ ⊙ z), p_A = Φ(m / ||Σ̂ U^T w||) with m = w.x - b, and the
    certified ellipsoid {||diag(1/(gap Σ̂)) U^T δ|| <= 1} moves w.x by at most gap ||Σ̂ U^T w||:
    soundness means gap ||Σ̂ U^T w|| <= m for every certified input, with the margin taken off."""
    rng = np.random.default_rng(seed)
    n = 4
    w = rng.standard_normal(n)
    w /= np.linalg.norm(w)
    x = torch.from_numpy(rng.uniform(0, 1, (6, n))).float()
    model = _HalfSpace(w, b=float(x.numpy().dot(w).min()) - 0.3)
    rotations = np.stack([_random_rotation(n, seed * 10 + k) for k in range(len(x))])
    scales = rng.uniform(0.05, 0.4, (len(x), n)).astype(np.float32)
    y = torch.ones(len(x), dtype=torch.long)
    out = rancer_runs.run_rotated(model, x, y, np.arange(len(x)), lambda: (scales, rotations), {}, tmp_path / "run",
                                  n0=100, n=20_000, alpha=0.001, num_classes=2)
    assert (out.predict == 1).all() and (out.status == "kept").all()  # one class: the memory keeps all
    margin = x.numpy() @ w - model.b
    for k in range(len(x)):
        spread = np.linalg.norm(scales[k].astype(np.float64) * (rotations[k].T @ w))
        reach = out.gap[k] * (1 - rancer.ROTATION_MARGIN) * spread
        assert reach <= margin[k]
        # and not vacuous: the bound is close to the exact radius Φ^-1(p_A) spread = margin
        assert reach > 0.8 * margin[k] or normal.cdf(margin[k] / spread) > 0.9999
