"""Algorithm 1 on certified regions (`memory.algorithm1`): the package's one path from CERTIFY's certificates to the
memory. Its decisions are those of the array entry points (`certify_stream`, `algorithm1_reference`) on the regions'
semi-axes, bit for bit, for every region kind and policy; a lone region keeps CERTIFY's certificate."""
import numpy as np
import pytest
import torch

from ancer_lite.core import memory, parameters
from ancer_lite.core.certify import Smooth
from ancer_lite.core.names import ABSTAIN, L1, L2
from ancer_lite.core.regions import CertifiedRegion, certified_regions, region_norm


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x.prediction, x.status) == (y.prediction, y.status)
        assert (x.scales is None) == (y.scales is None)
        if x.scales is not None:
            assert np.array_equal(x.scales, y.scales)


def _stream(num=90, n=16, seed=0):
    rng = np.random.default_rng(seed)
    centers = 0.3 * rng.random((num, n))
    thetas = 0.5 + rng.random((num, n))
    preds = rng.integers(-1, 3, num)
    gaps = np.where(preds >= 0, 0.2 + rng.random(num), 0.0)
    return centers, thetas, gaps, preds


@pytest.mark.parametrize("norm", [L2, L1])
@pytest.mark.parametrize("policy", memory.POLICIES)
def test_regions_give_the_array_paths_decisions(norm, policy):
    centers, thetas, gaps, preds = _stream()
    regions = certified_regions(centers, thetas, gaps, preds, norm)
    axes = np.where(preds[:, None] != ABSTAIN, gaps[:, None] * thetas, 1.0)
    fast = memory.algorithm1(regions, policy)
    _same(fast, memory.certify_stream(centers, preds, axes, norm, policy))
    _same(memory.algorithm1(regions, policy, reference=True),
          memory.algorithm1_reference(centers, preds, axes, norm, policy))
    _same(fast, memory.algorithm1(regions, policy, block=7))
    if norm == L2:  # the stream is dense enough to exercise the pair tests
        assert {d.status for d in fast} >= {memory.ABSTAIN_BASE, memory.KEPT} and len({d.status for d in fast}) >= 3


@pytest.mark.parametrize("policy", memory.POLICIES)
def test_rotated_regions_with_a_margin(policy):
    num, n, margin = 40, 9, 1e-4
    centers, thetas, gaps, preds = _stream(num, n, seed=3)
    rng = np.random.default_rng(4)
    rots = np.stack([np.linalg.qr(rng.standard_normal((n, n)))[0] for _ in range(num)])
    regions = certified_regions(centers, thetas, gaps, preds, L2, rots, margin)
    axes = np.where(preds[:, None] != ABSTAIN, gaps[:, None] * thetas * (1.0 - margin), 1.0)
    for r, a, p in zip(regions, axes, preds):
        if p != ABSTAIN:
            assert np.array_equal(r.semi_axes, a)
    _same(memory.algorithm1(regions, policy), memory.certify_stream(centers, preds, axes, L2, policy,
                                                                     rotations=list(rots)))
    _same(memory.algorithm1(regions, policy, reference=True),
          memory.algorithm1_reference(centers, preds, axes, L2, policy, rotations=list(rots)))


def test_a_certificate_reaches_algorithm1_as_its_region():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 3))
    smooth = Smooth(model, 3, (1, 4, 4), seed=0)
    x = torch.rand(1, 4, 4)
    theta = 0.2 + 0.3 * torch.rand(1, 4, 4)
    cert = smooth.certify(x, theta, 50, 500, 0.01)
    assert cert.prediction != ABSTAIN
    (decision,) = memory.algorithm1([cert.region(x, theta, L2)])
    assert decision.status == memory.KEPT
    assert decision.radius == pytest.approx(cert.radius, rel=1e-12)
    assert decision.radius_proxy == pytest.approx(cert.radius_proxy, rel=1e-12)


def _region(norm=L2, n=4, pred=0, rotation=None):
    return CertifiedRegion(np.zeros(n), np.ones(n), 1.0, norm, pred, rotation)


@pytest.mark.parametrize("regions, error, words", [
    ([], ValueError, "regions must hold at least one"),
    ("abc", TypeError, "regions must be a sequence"),
    (_region(), TypeError, "regions must be a sequence"),
    ([_region(), np.zeros(4)], TypeError, "regions[1] must be a regions.CertifiedRegion"),
    ([_region(), _region(n=5)], ValueError, "regions[1] must be a l2 region in 4 dimensions"),
    ([_region(), _region(norm=L1)], ValueError, "regions[1] must be a l2 region"),
    ([_region(norm=L1, rotation=np.eye(4)[::-1].copy())], ValueError, "regions[0] must be axis-aligned"),
])
def test_bad_regions_are_named(regions, error, words):
    with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")):
        memory.algorithm1(regions)


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(policy="keep"), ValueError, "policy"),
    (dict(reference=1), TypeError, "reference must be a bool"),
    (dict(block=0), ValueError, "block must be a positive int"),
    (dict(provenance="model"), (TypeError, ValueError), "provenance"),
])
def test_bad_arguments_are_named(kwargs, error, words):
    with pytest.raises(error, match=words):
        memory.algorithm1([_region()], **kwargs)


def test_certified_regions_checks_lengths():
    centers, thetas, gaps, preds = _stream(5, 3)
    with pytest.raises(ValueError, match="gaps must hold one entry per input"):
        certified_regions(centers, thetas, gaps[:4], preds, L2)
    with pytest.raises(ValueError, match="prediction .* and gap .* disagree"):
        certified_regions(centers, thetas, np.ones(5), np.full(5, ABSTAIN), L2)


@pytest.mark.parametrize("reference", [False, True])
def test_algorithm1_returns_certified_regions(reference, monkeypatch):
    """Algorithm 1 takes and returns `CertifiedRegion`s: a kept region (and one CERTIFY abstained on) is the record
    given, rotation included; a shrunk one is the ℓ2 ball LargestOutSubset leaves (gap 1, no rotation), which misses
    every kept region of another class; an abstention is an abstaining record at the input. No rotation is checked a
    second time, on either path."""
    num, n = 40, 9
    centers, thetas, gaps, preds = _stream(num, n, seed=5)
    rng = np.random.default_rng(6)
    rots = np.stack([np.linalg.qr(rng.standard_normal((n, n)))[0] for _ in range(num)])
    thetas = 0.3 * thetas  # regions that meet often enough to be shrunk
    regions = certified_regions(centers, thetas, gaps, preds, L2, rots)
    axes = np.where(preds[:, None] != ABSTAIN, gaps[:, None] * thetas, 1.0)
    calls = []
    measure = parameters.orthogonality_deviation
    monkeypatch.setattr(parameters, "orthogonality_deviation", lambda u: calls.append(u) or measure(u))
    decisions = memory.algorithm1(regions, reference=reference)
    assert not calls  # the regions' rotations were checked where the regions were made
    entry = memory.algorithm1_reference if reference else memory.certify_stream
    arrays = entry(centers, preds, axes, L2, rotations=list(rots))
    assert len(calls) == num  # the array path checks each rotation once, where it enters
    _same(decisions, arrays)
    statuses = {d.status for d in decisions}
    assert {memory.KEPT, memory.SHRUNK, memory.ABSTAIN_BASE, memory.ABSTAIN_INSIDE} <= statuses
    for d, a, r, c in zip(decisions, arrays, regions, centers):
        assert isinstance(d.region, CertifiedRegion) and np.array_equal(d.region.center, c)
        if d.status in (memory.KEPT, memory.ABSTAIN_BASE):
            assert d.region is r
            if d.status == memory.KEPT:
                assert np.array_equal(a.region.rotation, r.rotation) and a.region.deviation == r.deviation
        elif d.status == memory.SHRUNK:
            assert d.region.rotation is None and d.region.gap == 1.0 and np.ptp(d.region.semi_axes) == 0.0
        else:
            assert d.region.abstained and d.radius == 0.0 and d.scales is None
    kept = [d.region for d in decisions if not d.region.abstained]
    for k, region in enumerate(kept):  # the final regions of different classes do not meet at their centres' probes
        for other in kept[:k]:
            if other.prediction != region.prediction:
                assert not other.contains(region.center)


@pytest.mark.parametrize("reference", [False, True])
def test_a_shrink_to_nothing_keeps_the_prediction_at_the_centre_only(reference):
    """An input outside another class's region by rounding (its ℓ2 distance to the region computes to 0): Algorithm 1
    shrinks its region to the ball of radius 0, the centre only. The prediction stands, certified at the centre
    only: radius, proxy radius and semi-axes 0, log-volume -inf, and the region contains its centre and nothing
    else."""
    s = np.array([0.292, 0.218])
    x = np.array([-0.023468936091616314, 0.2172947376953181])
    assert region_norm(x, s, L2) > 1.0  # outside the first region: not inside it
    centers, preds, axes = np.stack([np.zeros(2), x]), np.array([0, 1]), np.stack([s, np.full(2, 0.5)])
    regions = certified_regions(centers, axes, np.ones(2), preds, L2)
    for decisions in (memory.algorithm1(regions, reference=reference),
                      (memory.algorithm1_reference if reference else memory.certify_stream)(centers, preds, axes, L2)):
        d = decisions[1]
        assert (d.status, d.prediction, d.radius, d.radius_proxy) == (memory.SHRUNK, 1, 0.0, 0.0)
        assert np.array_equal(d.scales, np.zeros(2)) and d.region.log_volume == -np.inf
        assert d.region.contains(np.stack([x, x + 1e-12, np.zeros(2)])).tolist() == [True, False, False]
