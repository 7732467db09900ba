"""The one certified-region record (`regions.CertifiedRegion`): its measures against closed forms
and brute force, CERTIFY's certificate, Algorithm 1's decision and RANCER-2D's regions stated through it, and every
bad field named."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from ancer_lite.core.certify import Smooth, certificate_from_bound
from ancer_lite.core.memory import certify_stream
from ancer_lite.core.names import ABSTAIN
from ancer_lite.core.regions import CertifiedRegion
from ancer_lite.methods import ucan


def _rotation(angle: float) -> np.ndarray:
    return np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])


def test_measures_match_closed_forms():
    r = CertifiedRegion(np.zeros(3), np.array([0.1, 0.2, 0.4]), 1.5, "l2", 2)
    np.testing.assert_allclose(r.semi_axes, [0.15, 0.3, 0.6])
    assert r.radius == pytest.approx(0.15) and r.radius_proxy == pytest.approx(1.5 * 0.2)  # gm of (.1,.2,.4) = .2
    # ellipsoid volume (ANCER §5.1): 4/3 π a b c
    assert math.exp(r.log_volume) == pytest.approx(4 / 3 * math.pi * 0.15 * 0.3 * 0.6, rel=1e-12)
    l1 = dataclasses.replace(r, norm="l1")
    # generalized cross-polytope (Proposition 4): 2^n / n! prod s_i
    assert math.exp(l1.log_volume) == pytest.approx(8 / 6 * 0.15 * 0.3 * 0.6, rel=1e-12)
    assert l1.noise == "uniform" and r.noise == "gaussian" and r.dimension == 3 and not r.abstained


def test_membership_matches_brute_force_for_every_kind():
    gen = np.random.default_rng(0)
    center = np.array([0.3, -0.2])
    for norm, rotation in (("l2", None), ("l1", None), ("l2", _rotation(0.7))):
        r = CertifiedRegion(center, np.array([0.5, 0.1]), 0.8, norm, 1, rotation)
        pts = center + gen.uniform(-0.5, 0.5, size=(4000, 2))
        z = (pts - center) @ (np.eye(2) if rotation is None else rotation) / r.semi_axes
        inside = (np.sqrt((z * z).sum(1)) if norm == "l2" else np.abs(z).sum(1)) <= 1.0
        np.testing.assert_array_equal(r.contains(pts), inside)
        assert 0 < inside.sum() < len(pts)
        # the enclosed ℓp ball is inside: points at radius * (1 - 1e-9) along every axis direction
        dirs = np.concatenate([np.eye(2), -np.eye(2)])
        assert r.contains(center + r.radius * (1 - 1e-9) * dirs).all()


def test_margin_shrinks_every_measure():
    u = _rotation(0.3)
    r = CertifiedRegion(np.zeros(2), np.array([0.2, 0.5]), 1.0, "l2", 0, u)
    m = dataclasses.replace(r, margin=1e-4)
    np.testing.assert_allclose(m.semi_axes, r.semi_axes * (1 - 1e-4), rtol=1e-15)
    assert m.radius == pytest.approx(r.radius * (1 - 1e-4), rel=1e-14)
    assert m.log_volume == pytest.approx(r.log_volume + 2 * math.log(1 - 1e-4), rel=1e-12)


def test_abstention_has_no_region():
    r = CertifiedRegion(np.zeros(2), np.ones(2), 0.0, "l2", ABSTAIN)
    assert r.abstained and r.radius == 0.0 and r.radius_proxy == 0.0 and r.log_volume == -math.inf
    assert not r.contains(np.zeros((3, 2))).any()


def test_record_is_a_private_read_only_copy():
    scales = np.array([0.1, 0.2])
    r = CertifiedRegion(np.zeros(2), scales, 1.0, "l2", 0)
    scales[0] = 5.0
    assert r.scales[0] == 0.1
    with pytest.raises(ValueError):
        r.scales[0] = 1.0


@pytest.mark.parametrize("field, value, match", [
    ("center", np.zeros((2, 2)), "center"), ("center", np.array([np.nan, 0.0]), "center"),
    ("scales", np.array([0.1, 0.0]), "scales"), ("scales", np.ones(3), "scales"),
    ("gap", -0.5, "gap"), ("gap", math.inf, "gap"), ("norm", "linf", "norm"),
    ("prediction", 1.5, "prediction"), ("prediction", ABSTAIN, "abstains"),
    ("rotation", np.ones((2, 2)), "rotation"), ("rotation", np.eye(3), "rotation"),
    ("margin", 1.0, "margin"), ("margin", -0.1, "margin"), ("margin", True, "margin"),
])
def test_bad_fields_are_named(field, value, match):
    good = dict(center=np.zeros(2), scales=np.ones(2), gap=1.0, norm="l2", prediction=0)
    with pytest.raises(ValueError, match=match):
        CertifiedRegion(**{**good, field: value})


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_a_certificate_states_its_region(norm):
    theta = np.array([0.3, 0.1, 0.2, 0.25])
    cert = certificate_from_bound(3, 0.93, theta, norm, count=93, n=100)
    region = cert.region(torch.zeros(2, 2), torch.from_numpy(theta), norm)
    assert region.prediction == 3 and region.gap == cert.gap and region.norm == norm
    assert (region.radius, region.radius_proxy, region.log_volume) == (cert.radius, cert.radius_proxy,
                                                                       cert.log_volume)
    iso = certificate_from_bound(1, 0.8, np.full(4, 0.5), norm).region(np.zeros(4), 0.5, norm)
    np.testing.assert_array_equal(iso.scales, np.full(4, 0.5))
    assert certificate_from_bound(ABSTAIN, 0.4, theta, norm).region(np.zeros(4), theta, norm).abstained


def test_smooth_certify_region_is_certificates():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2)).eval()
    with torch.no_grad():
        model[0].weight.copy_(torch.tensor([[1.0, 0.0], [-1.0, 0.0]]))
        model[0].bias.zero_()
    x, theta = torch.tensor([0.4, 0.0]), torch.tensor([0.2, 0.6])
    cert = Smooth(model, 2, (2,), seed=0).certify(x, theta, 100, 2000, 0.001)
    region = cert.region(x, theta, "l2")
    assert cert.prediction == 0 and region.radius == cert.radius and region.log_volume == cert.log_volume


def test_algorithm1_decision_states_its_region():
    x = np.array([[0.0, 0.0], [0.25, 0.0], [5.0, 5.0]])
    axes = np.array([[0.2, 0.2], [0.2, 0.2], [0.3, 0.1]])
    decisions = certify_stream(x, np.array([0, 1, ABSTAIN]), axes, "l2")
    regions = [d.region for d in decisions]
    for d, r, c in zip(decisions, regions, x):
        assert np.array_equal(r.center, c) and r.norm == "l2"
        # the decision's radii are the final ellipsoid's: its smallest semi-axis and their geometric mean
        axes = np.zeros(2) if r.abstained else r.semi_axes
        assert d.radius == pytest.approx(axes.min(), rel=1e-12)
        assert d.radius_proxy == pytest.approx(np.exp(np.log(axes).mean()) if axes.min() > 0 else 0.0, rel=1e-12)
    assert regions[2].abstained and not regions[0].abstained
    # Algorithm 1 keeps the regions of the two classes apart: no point of the second is in the first
    if not regions[1].abstained:
        probe = regions[1].center + regions[1].semi_axes * np.array([[-1, 0], [-0.7, 0.7], [0, 1]]) * (1 - 1e-9)
        assert regions[1].contains(probe).all() and not regions[0].contains(probe).any()


@pytest.mark.parametrize("noise, row", [("gaussian", "gaussian/l2"), ("laplace", "laplace/l1"),
                                        ("gaussian", "gaussian/l1")])
def test_a_ucan_certificate_states_its_region(noise, row):
    """UCAN Theorem 3.2 through the one record: its radius and proxy radius are `row_radii`'s ℓp radius
    (Corollary 3.3) and ALM (Eq. 23)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(6, 3)).eval()
    with torch.no_grad():
        model[1].weight.mul_(0.1)
        model[1].bias.copy_(torch.tensor([2.0, 0.0, 0.0]))
    sigma = torch.tensor([[0.5, 1.0, 1.5], [1.0, 0.75, 1.25]]).reshape(1, 2, 3)
    npg = ucan.FixedNPG(sigma.numpy())  # σ(x) = sigma, μ = 0
    x = torch.full((1, 2, 3), 0.3)
    lam = 0.4
    cert = ucan.certify(model, npg, x, noise, lam, 20, 400, 0.01, 3, torch.Generator().manual_seed(1))
    assert cert.prediction == 0
    theta = lam * sigma.double()
    region = cert.region(x, theta, row)
    lp, alm = ucan.row_radii(row, np.array([cert.p_lower]), np.array([cert.min_theta]),
                             np.array([cert.log_gm_theta]), 6)
    assert region.norm == row.split("/")[1]
    assert region.radius == pytest.approx(float(lp[0]), rel=1e-12)
    assert region.radius_proxy == pytest.approx(float(alm[0]), rel=1e-12)
    with pytest.raises(ValueError, match="theta must be the θ"):
        cert.region(x, 2 * theta, row)
    if noise == "gaussian":
        with pytest.raises(ValueError, match="row must certify"):
            cert.region(x, theta, "gaussian/linf")
    # a row of another noise family would state another region: refused, both families named
    other = "laplace/l1" if noise == "gaussian" else "gaussian/l2"
    with pytest.raises(ValueError, match=f"computed with \\('{noise}'\\)"):
        cert.region(x, theta, other)

