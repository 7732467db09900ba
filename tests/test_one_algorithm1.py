"""One Algorithm 1 over every region kind and memory provenance.

ANCER Algorithm 1 (App. D) has one literal reference (`memory.algorithm1_reference`) and one fast path
(`memory.certify_stream`) for axis-aligned l1 cross-polytopes, axis-aligned l2 ellipsoids and rotated l2
ellipsoids (RANCER Eq. 5-6); `rotated_memory`'s functions are those with norm "l2", and `CertificationMemory`
is the same algorithm one input at a time. Checked here: the three give the same decisions bit for bit on random
streams of every kind; the rotated entry points are the one implementation; and a memory refuses regions of
another provenance (base model, noise, norm)."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from ancer_lite.core import memory as M
from ancer_lite.core import rotated_memory as RM
from ancer_lite.proof_checks import random_rotation

POLICIES = [M.SHRINK, M.WORST_CASE]


def random_stream(rng: np.random.Generator, n: int, num: int, p_rotated: float):
    """Centres around 3 clusters, 2-3 classes, anisotropic semi-axes, ~10% abstentions (half with zero scales);
    a Haar-random rotation with probability p_rotated (else None), a few rotated balls and diagonal +-1
    rotations (axis-aligned regions in disguise)."""
    clusters = 1.2 * rng.normal(size=(3, n))
    c = clusters[rng.integers(0, 3, num)] + 0.5 * rng.normal(size=(num, n))
    s = 0.3 * np.exp(0.6 * rng.normal(size=(num, n)))
    p = rng.integers(0, int(rng.integers(2, 4)), num)
    abstain = rng.random(num) < 0.1
    p[abstain] = M.ABSTAIN
    s[abstain & (rng.random(num) < 0.5)] = 0.0
    rotations = []
    for k in range(num):
        u = random_rotation(n, rng) if rng.random() < p_rotated else None
        if u is not None and rng.random() < 0.05:
            s[k] = s[k].mean()
        elif u is None and rng.random() < 0.1:
            u = np.diag(rng.choice([-1.0, 1.0], n))
        rotations.append(u)
    return c, p, s, rotations


def identical(got: list[M.Decision], want: list[M.Decision]) -> None:
    """Same predictions, statuses and final semi-axes, bit for bit."""
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g.prediction, g.status) == (w.prediction, w.status), (k, g, w)
        if w.scales is None:
            assert g.scales is None, k
        else:
            assert g.scales.dtype == w.scales.dtype and np.array_equal(g.scales, w.scales), (k, g.scales, w.scales)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("kind", ["l1", "l2", "l2_rotated"])
def test_one_reference_one_fast_path_every_kind(kind, policy):
    """For each region kind, the fast path (every block size) and the incremental memory give the literal
    reference's decisions bit for bit, and every branch of Algorithm 1 the policy allows occurs."""
    assert kind in M.KINDS
    norm = "l1" if kind == "l1" else "l2"
    rng = np.random.default_rng(7 + M.KINDS.index(kind) + 10 * POLICIES.index(policy))
    statuses = Counter()
    for _ in range(12):
        n = int(rng.choice([2, 3, 5]))
        c, p, s, r = random_stream(rng, n, int(rng.integers(20, 60)), 0.6 if kind == "l2_rotated" else 0.0)
        rotations = r if kind == "l2_rotated" else None
        want = M.algorithm1_reference(c, p, s, norm, policy, rotations=rotations)
        statuses.update(d.status for d in want)
        for block in (1, 7, 1024):
            identical(M.certify_stream(c, p, s, norm, policy, block, rotations=rotations), want)
        mem = M.CertificationMemory(n, norm, policy)
        got = [mem.certify(x, int(q), t, rotation=None if rotations is None else u)
               for x, q, t, u in zip(c, p, s, r)]
        identical(got, want)
        assert len(mem) == sum(d.prediction != M.ABSTAIN for d in want)
    expected = {M.KEPT, M.ABSTAIN_BASE, M.ABSTAIN_INSIDE, M.SHRUNK if policy == M.SHRINK else M.ABSTAIN_INTERSECT}
    assert expected <= set(statuses), statuses


@pytest.mark.parametrize("policy", POLICIES)
def test_rotated_entry_points_are_the_one_implementation(policy):
    """`rotated_memory`'s functions return `memory`'s decisions with norm "l2", bit for bit; without genuine
    rotations (None, identities, reflections, rotated balls) they are the axis-aligned l2 decisions."""
    rng = np.random.default_rng(3 + POLICIES.index(policy))
    for _ in range(6):
        c, p, s, r = random_stream(rng, int(rng.choice([2, 4])), 40, 0.5)
        identical(RM.certify_stream_rotated(c, p, s, r, policy), M.certify_stream(c, p, s, "l2", policy, rotations=r))
        identical(RM.algorithm1_reference_rotated(c, p, s, r, policy),
                  M.algorithm1_reference(c, p, s, "l2", policy, rotations=r))
        c, p, s, r = random_stream(rng, 3, 40, 0.0)
        want = M.certify_stream(c, p, s, "l2", policy)
        identical(RM.certify_stream_rotated(c, p, s, r, policy), want)
        identical(RM.algorithm1_reference_rotated(c, p, s, None, policy), want)


def test_rotation_matters_and_is_dropped_when_shrunk():
    """2D: a thin ellipse along the diagonal and a point off it. Axis-aligned (along x1) the ellipse contains
    the point (abstain); rotated by 45 degrees it does not, and the new region is shrunk to a ball missing it."""
    q = np.array([[1.0, -1.0], [1.0, 1.0]]) / np.sqrt(2.0)  # first column: the diagonal
    c = np.array([[0.0, 0.0], [0.9, 0.0]])
    s = np.array([[1.0, 0.1], [0.8, 0.8]])
    p = np.array([0, 1])
    axis = M.certify_stream(c, p, s, "l2")
    assert axis[1].status == M.ABSTAIN_INSIDE
    for out in (M.certify_stream(c, p, s, "l2", rotations=[q, None]),
                M.algorithm1_reference(c, p, s, "l2", rotations=[q, None])):
        assert out[1].status == M.SHRUNK and out[1].prediction == 1
        # the ball's radius is the distance to the ellipse: at least 0.9 / sqrt(2) - 0.1 (the distance to its long
        # axis minus its half-width), at most the distance 0.9 / sqrt(2) - 0.1 sqrt(1 - 0.9^2 / 2) to its boundary
        # point straight across
        assert np.all(out[1].scales == out[1].scales[0])
        assert 0.9 / np.sqrt(2) - 0.1 < out[1].scales[0] < 0.9 / np.sqrt(2) - 0.1 * np.sqrt(1 - 0.9 ** 2 / 2)


def test_rotations_are_l2_only_and_checked():
    """A rotation for an l1 region is refused (rotated regions are RANCER's l2 ellipsoids), as are a
    non-orthogonal rotation and a wrong count, naming `rotations` (or `rotation`)."""
    c, p, s = np.zeros((2, 2)), np.array([0, 1]), np.ones((2, 2))
    for fn in (M.certify_stream, M.algorithm1_reference):
        with pytest.raises(ValueError, match=r"rotations\[0\] must be None for l1"):
            fn(c, p, s, "l1", rotations=[np.eye(2), None])
        with pytest.raises(ValueError, match=r"rotations\[1\] must be orthogonal"):
            fn(c, p, s, "l2", rotations=[None, 2 * np.eye(2)])
        with pytest.raises(ValueError, match="rotations must have one entry per input"):
            fn(c, p, s, "l2", rotations=[None])
    assert M.certify_stream(c, p, s, "l1", rotations=[None, None])[1].status == M.ABSTAIN_INSIDE
    with pytest.raises(ValueError, match="rotation must be None for a l1 memory"):
        M.CertificationMemory(2, "l1").certify(c[0], 0, s[0], rotation=np.eye(2))
    with pytest.raises(ValueError, match="rotation must be orthogonal"):
        M.CertificationMemory(2, "l2").certify(c[0], 0, s[0], rotation=np.ones((2, 2)))


def test_stream_decisions_do_not_alias_the_inputs():
    """A kept region's semi-axes are the decision's own array: changing the caller's `scales` afterwards
    leaves the decisions as they were."""
    c, p, s = np.array([[0.0, 0.0], [5.0, 0.0]]), np.array([0, 1]), np.array([[1.0, 2.0], [1.0, 1.0]])
    for fn in (M.certify_stream, M.algorithm1_reference):
        out = fn(c, p, s, "l2")
        assert [d.status for d in out] == [M.KEPT, M.KEPT]
        s_before = s.copy()
        s[:] = 9.0
        assert np.array_equal(np.stack([d.scales for d in out]), s_before)
        s[:] = s_before


# ------------------------------------------------------------------------------------------------
# provenance
# ------------------------------------------------------------------------------------------------

A = M.Provenance("mnist-cnn-seed0", "gaussian", "l2", 0.25)
B = M.Provenance("mnist-cnn-seed1", "gaussian", "l2", 0.25)


def test_provenance_record_checks_its_fields():
    assert M.Provenance("m", "gaussian", "l2", 1) == M.Provenance("m", "gaussian", "l2", 1.0)
    assert M.Provenance("m", "uniform", "l1").sigma is None
    for kwargs, name in ((dict(model=""), "model"), (dict(noise=3), "noise"), (dict(norm="l3"), "norm"),
                         (dict(sigma=0.0), "sigma"), (dict(sigma=float("nan")), "sigma"), (dict(sigma=True), "sigma")):
        fields = dict(model="m", noise="gaussian", norm="l2", sigma=None) | kwargs
        with pytest.raises(ValueError, match=name):
            M.Provenance(**fields)
    with pytest.raises(AttributeError):
        A.model = "other"  # frozen


def test_memory_refuses_a_region_of_another_provenance():
    """A memory with a provenance adds regions of the same provenance (or unlabelled ones) and refuses, naming
    both provenances, a region of another model; the refused region is not added. Two overlapping regions of
    different classes from different models therefore never share a memory."""
    mem = M.CertificationMemory(2, "l2", provenance=A)
    assert mem.provenance == A
    assert mem.certify([0.0, 0.0], 0, [1.0, 1.0], provenance=A).status == M.KEPT
    with pytest.raises(ValueError) as err:
        mem.certify([0.5, 0.0], 1, [1.0, 1.0], provenance=B)
    assert str(A) in str(err.value) and str(B) in str(err.value)
    assert len(mem) == 1
    assert mem.certify([0.5, 0.0], 1, [1.0, 1.0]).status == M.ABSTAIN_INSIDE  # None: the memory's provenance
    # a memory without one takes the first region's, then refuses others
    mem = M.CertificationMemory(2, "l2")
    assert mem.provenance is None
    mem.certify([0.0, 0.0], 0, [1.0, 1.0], provenance=B)
    assert mem.provenance == B
    with pytest.raises(ValueError, match="differs"):
        mem.certify([9.0, 0.0], 1, [1.0, 1.0], provenance=A)
    # regions of unknown provenance cannot be vouched for
    mem = M.CertificationMemory(2, "l2")
    mem.certify([0.0, 0.0], 0, [1.0, 1.0])
    with pytest.raises(ValueError, match="unknown provenance"):
        mem.certify([9.0, 0.0], 1, [1.0, 1.0], provenance=A)
    # the norm must be the memory's; the type must be Provenance
    with pytest.raises(ValueError, match="provenance"):
        M.CertificationMemory(2, "l1", provenance=A)
    with pytest.raises(TypeError, match="provenance"):
        M.CertificationMemory(2, "l2", provenance="mnist")


@pytest.mark.parametrize("fn", [M.certify_stream, M.algorithm1_reference])
def test_stream_provenance(fn):
    """The stream functions take one provenance or one per input: the decisions are those without it, a stream
    mixing two provenances is refused naming both, and a provenance of another norm is refused."""
    rng = np.random.default_rng(0)
    c, p, s, _ = random_stream(rng, 3, 30, 0.0)
    want = fn(c, p, s, "l2")
    identical(fn(c, p, s, "l2", provenance=A), want)
    identical(fn(c, p, s, "l2", provenance=[A] * 30), want)
    mixed = [A] * 30
    mixed[17] = B
    with pytest.raises(ValueError, match=r"provenance\[17\]") as err:
        fn(c, p, s, "l2", provenance=mixed)
    assert str(A) in str(err.value) and str(B) in str(err.value)
    with pytest.raises(ValueError, match="provenance"):
        fn(c, p, s, "l1", provenance=A)
    with pytest.raises(ValueError, match="one entry per input"):
        fn(c, p, s, "l2", provenance=[A])
    with pytest.raises(TypeError, match="provenance"):
        fn(c, p, s, "l2", provenance="mnist")
    for rotated_fn in (RM.certify_stream_rotated, RM.algorithm1_reference_rotated):
        with pytest.raises(ValueError, match="differs"):
            rotated_fn(c, p, s, None, provenance=mixed)
