"""Memory-based certification of data-dependent smoothed classifiers: ANCER Algorithm 1 (App. D), over every
region kind the package certifies, with RANCER's pair tests for rotated ellipsoids (RANCER §3, Eq. 5-6).

Each certified input arrives with its prediction and region, of one of three kinds (`KINDS`):
  - "l1": an axis-aligned generalized cross-polytope {x : sum_i |x_i - c_i| / s_i <= 1} (ANCER, Corollary 2);
  - "l2": an axis-aligned ellipsoid {x : ||diag(1/s) (x - c)||_2 <= 1} (ANCER, Corollary 1);
  - "l2_rotated": a rotated ellipsoid {x : ||diag(1/s) U^T (x - c)||_2 <= 1}, U orthogonal (RANCER Eq. 3).
A memory holds regions of one norm; an l2 memory may mix axis-aligned and rotated ellipsoids. Algorithm 1
compares the new region with every earlier region in memory that predicts another class:
  - if x lies in such a region: ABSTAIN;
  - else if MaxIntersect and Intersect say the regions may meet: shrink the new region to
    LargestOutSubset, an l_p ball around x that misses the other region (a ball: its rotation is dropped).
The "abstain" policy is the paper's worst-case reporting (§6): abstain whenever the new region meets,
or its centre lies in, a region of another class. Abstained inputs are not added to the memory.

The pair tests, per kind of the memory entry R_i (the new input's region first, the entry second):
  - inside (x in R_i): `regions.region_norm` (axis-aligned), `rotated.contains` (rotated);
  - MaxIntersect: the outer l_p balls of radius max(s) (rotation invariant, `geometry.max_intersect`, Lemma 1);
  - Intersect: `geometry.intersect` (D.2 for l2, D.3 for l1) when both regions are axis-aligned, RANCER's Eq. 5
    via `rotated.ellipsoids_intersect` (U = I standing in for an axis-aligned partner) otherwise;
  - LargestOutSubset: min(dist(x, R_i) (1 - SHRINK_MARGIN), inner radius of the current region), with the
    distance of ANCER D.4/D.5 (`geometry.distance_to_region`) or RANCER Eq. 6 (`rotated.distance_to_ellipsoid`).
A rotation that is diagonal with entries +-1, or any rotation of a ball (all semi-axes equal), describes an
axis-aligned ellipsoid exactly; such regions take the axis-aligned tests. A rotation is accepted within
`parameters.ORTHOGONALITY_TOL` of orthogonal; the tests take U^T for U^-1, and a region whose rotation deviates
by more than rounding is tested with margins widened by the deviation (`DEVIATION_ABSORBED` states the rule).

Where values are checked: once, at the entry points `algorithm1` (on `regions.CertifiedRegion`s, each checked
where it was made: the path from CERTIFY's certificates to the memory), `algorithm1_reference`, `certify_stream`
(and `rotated_memory`'s two, which are these), `decide` and `CertificationMemory` (its constructor and `certify`):
ValueError (TypeError for a provenance of another type) naming the argument. A rotation is checked there by
`parameters.check_rotation`, the package's one orthogonality test. The pair tests then run `geometry`'s,
`rotated`'s and `regions.region_norm`'s formulas over every pair of regions on those values as given.

One literal reference and one fast path, for every kind: `algorithm1_reference` is the plain loop over the
memory; `certify_stream` finds the candidates with a blocked Gram-matrix pre-filter on the outer l2 balls (sound
for both norms since ||v||_1 >= ||v||_2), then runs Algorithm 1 over them (`decide`'s core, vectorized over the
axis-aligned entries, one rotated entry at a time); both give the same decisions, bit for bit.
`CertificationMemory` is the same Algorithm 1 one input at a time. `rotated_memory` keeps RANCER's entry points.
Every entry point returns `Decision`s, each its final `regions.CertifiedRegion` (the one record of a region) and its
status: `algorithm1` returns the record it was given for a kept region; the array entry points make one from the
values they checked (a rotation kept as the `parameters.Rotation` checked at entry, not checked again).

Provenance: a memory's regions must all come from one base model, noise (σ) and norm, or two streams could keep
overlapping regions of different classes. `Provenance` records them; `CertificationMemory` and the stream
functions take one (optional, None = unchecked) and refuse, with a ValueError naming both, a region whose
provenance differs.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import geometry, rotated
from .names import ABSTAIN, L1, L2
from .parameters import Rotation
from .regions import CertifiedRegion, check_norm, region_norm
from .stages import MEMORY, timed
from .validation import check_class_index, check_count

SHRINK, WORST_CASE = "shrink", "abstain"
POLICIES = (SHRINK, WORST_CASE)
# statuses of a decision
KEPT, SHRUNK, ABSTAIN_BASE, ABSTAIN_INSIDE, ABSTAIN_INTERSECT = ("kept", "shrunk", "abstain_base", "abstain_inside",
                                                                 "abstain_intersect")
#: the region kinds of a memory entry: axis-aligned cross-polytope, axis-aligned ellipsoid, rotated ellipsoid
L1_POLYTOPE, L2_ELLIPSOID, L2_ROTATED = L1, L2, "l2_rotated"
KINDS = (L1_POLYTOPE, L2_ELLIPSOID, L2_ROTATED)
#: The largest kappa = n eps that the pair tests absorb, for a rotation U of n dimensions that
#: `parameters.check_rotation` accepted with the deviation eps = max |U U^T - I| <= ORTHOGONALITY_TOL (1e-6). The
#: tests take U^T for U^-1. Since a row of the symmetric U U^T - I sums to at most n eps, ||U U^T - I||_2 <= kappa
#: and U's singular values lie in [sqrt(1 - kappa), sqrt(1 + kappa)]. With G = U^T U and B the unit ball, the region
#: R = {x : ||diag(1/s) U^T (x - c)||_2 <= 1} is c + U G^-1 diag(s) B, and:
#:   (a) the inside test ||diag(1/s) U^T (x - c)||_2 <= 1 is R's own, exact;
#:   (b) Eq. 6's distance, computed in U^T's coordinates (D~ = min over R of ||U^T (y - x)||), bounds the true one
#:       D >= D~ / sigma_max(U) >= D~ / sqrt(1 + kappa) >= D~ (1 - kappa / 2);
#:   (c) R lies in c + U diag((1 + delta) s) B, the ellipsoid whose support function ||diag(s) U^T d|| and covariance
#:       U diag(s^2) U^T `rotated.separated` and Eq. 5 use, for delta = (max s / min s) kappa / (1 - kappa), since
#:       ||diag(1/s) G^-1 diag(s)||_2 <= 1 + (max s / min s) ||G^-1 - I||_2 <= 1 + delta; and in the ball of radius
#:       max s / sigma_min(U) <= max s / sqrt(1 - kappa) <= (1 + delta) max s around c (MaxIntersect, the Gram
#:       pre-filter);
#:   (d) the ball of radius (1 - kappa) min s around c lies in R (R's inner radius is min s / sigma_max(U)).
#: So a region whose kappa exceeds DEVIATION_ABSORBED is tested with the semi-axes (1 + delta) s (MaxIntersect,
#: Intersect, the pre-filter), a distance to it is shrunk by kappa instead of SHRINK_MARGIN (kappa / 2 for (b), the
#: other half, more than SHRINK_MARGIN / 2, for rounding), and, as the region being shrunk, its inner radius is
#: (1 - kappa) min s. Up to DEVIATION_ABSORBED (= SHRINK_MARGIN) the tests are those of an orthogonal U: (b) is then
#: at most half of SHRINK_MARGIN, the other half left for rounding, and (c) moves the extents by at most
#: (max s / min s) kappa relative, left, like rounding, to the tests' margins. Every rotation with n eps <= 1e-9 is
#: thus tested exactly as an orthogonal one, no number changed: float64 orthogonalizations (eps ~ 1e-15, kappa ~ 1e-12
#: at n = 784) and every deviation up to 1e-12 in n <= 1,000 dimensions. kappa >= 1/2 (n >= 500,000) is refused.
DEVIATION_ABSORBED = geometry.SHRINK_MARGIN
#: rows of the Gram-matrix pre-filter computed at once (`certify_stream`'s default block)
BLOCK = 1024


@dataclass(frozen=True, eq=False)
class Decision:
    """Algorithm 1's output for one input: its final region and what happened to it (a view of the region).

    Attributes
    ----------
    region : regions.CertifiedRegion
        The final region, centred at the input: the region as given when kept (with its rotation), the ℓp ball
        LargestOutSubset left when shrunk (semi-axes with gap 1, no rotation; the centre only, gap 0 with the class,
        when that ball has radius 0), an abstaining record (gap 0) when abstaining.
    status : str
        KEPT, SHRUNK, ABSTAIN_BASE, ABSTAIN_INSIDE or ABSTAIN_INTERSECT.
    """
    region: CertifiedRegion
    status: str

    @property
    def prediction(self) -> int:
        """The final prediction: the class certified, or ABSTAIN (-1)."""
        return self.region.prediction

    @property
    def scales(self) -> np.ndarray | None:
        """The final region's semi-axes, shape (n,) (`CertifiedRegion.semi_axes`); None when abstaining."""
        return None if self.region.abstained else self.region.semi_axes

    @property
    def radius(self) -> float:
        """The radius of the largest ℓp ball inside the final region (`CertifiedRegion.radius`); 0 when abstaining."""
        return self.region.radius

    @property
    def radius_proxy(self) -> float:
        """ANCER's proxy radius of the final region (`CertifiedRegion.radius_proxy`); 0 when abstaining."""
        return self.region.radius_proxy


def _final(center: np.ndarray, pred: int, semi_axes: np.ndarray | None, norm: str,
           rotation: Rotation | None = None) -> CertifiedRegion:
    """The `CertifiedRegion` of a final region given by its semi-axes (gap 1), or an abstaining record when
    `semi_axes` is None or `pred` is ABSTAIN. A ball of radius 0 (LargestOutSubset's, when the distance to another
    class's region rounds to 0) is the centre only: gap 0 with the class."""
    if semi_axes is None or pred == ABSTAIN:
        return CertifiedRegion(center, np.ones_like(center), 0.0, norm, ABSTAIN)
    if not (semi_axes > 0).all():
        return CertifiedRegion(center, np.ones_like(center), 0.0, norm, int(pred))
    return CertifiedRegion(center, semi_axes, 1.0, norm, int(pred), rotation)


def _decisions(c: np.ndarray, p: np.ndarray, outcomes: list, norm: str, given) -> list[Decision]:
    """The `Decision`s of Algorithm 1's outcomes (final semi-axes or None, status) per input j: a kept region and an
    input that abstained before the memory are `given(j)`, the region as it entered."""
    out = []
    for j, (axes, status) in enumerate(outcomes):
        region = given(j) if status in (KEPT, ABSTAIN_BASE) else _final(c[j], int(p[j]), axes, norm)
        out.append(Decision(region, status))
    return out


@dataclass(frozen=True)
class Provenance:
    """Where a memory's regions came from: the base model, the smoothing noise, the norm
    of the certificates and, where one σ describes the noise, σ. Algorithm 1 (ANCER App. D) keeps the regions
    of one classifier disjoint; regions of two classifiers must not share a memory.

    model, noise: non-empty strings (a model name or cache key; a noise family, e.g. "gaussian"); norm: one of
    NORMS; sigma: None or a finite number > 0."""
    model: str
    noise: str
    norm: str
    sigma: float | None = None

    def __post_init__(self) -> None:
        for name in ("model", "noise"):
            v = getattr(self, name)
            if not isinstance(v, str) or not v:
                raise ValueError(f"{name} must be a non-empty string, got {v!r}")
        check_norm(self.norm)
        s = self.sigma
        if s is not None:
            if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, float, np.integer, np.floating)) \
                    or not (math.isfinite(s) and s > 0):
                raise ValueError(f"sigma must be None or a finite number > 0, got {s!r}")
            object.__setattr__(self, "sigma", float(s))


def _check_provenance(provenance: object, norm: str, name: str = "provenance") -> Provenance | None:
    """None, or a `Provenance` whose norm is `norm` (the regions' norm)."""
    if provenance is None:
        return None
    if not isinstance(provenance, Provenance):
        raise TypeError(f"{name} must be None or a memory.Provenance, got {type(provenance).__name__}")
    if provenance.norm != norm:
        raise ValueError(f"{name} {provenance} is for {provenance.norm} regions, but the memory holds {norm} regions")
    return provenance


def _differs(new: Provenance, old: Provenance, new_name: str, old_name: str) -> ValueError:
    return ValueError(f"{new_name} {new} differs from {old_name} {old}: regions of different base models, noises "
                      f"or norms cannot share one memory (Algorithm 1 keeps one classifier's regions disjoint)")


def _check_stream_provenance(provenance: object, norm: str, num: int) -> Provenance | None:
    """The stream's provenance: None, one `Provenance`, or one per input, all equal (ValueError naming the
    first two that differ)."""
    if provenance is None or isinstance(provenance, Provenance):
        return _check_provenance(provenance, norm)
    if isinstance(provenance, (str, bytes)) or not isinstance(provenance, Sequence):
        raise TypeError(f"provenance must be None, a memory.Provenance or a sequence of one per input, got "
                        f"{type(provenance).__name__}")
    if len(provenance) != num:
        raise ValueError(f"provenance must have one entry per input ({num}), got {len(provenance)}")
    first = None
    for k, prov in enumerate(provenance):
        _check_provenance(prov, norm, f"provenance[{k}]")
        if prov is None:
            raise ValueError(f"provenance[{k}] must be a memory.Provenance (or pass provenance=None), got None")
        if first is None:
            first = prov
        elif prov != first:
            raise _differs(prov, first, f"provenance[{k}]", "provenance[0]")
    return first


def _check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {list(POLICIES)}, got {policy!r}")
    return policy


# ------------------------------------------------------------------------------------------------
# rotations
# ------------------------------------------------------------------------------------------------

class _Rotation(NamedTuple):
    """A genuine rotation of a region in memory (checked) with its widening (`DEVIATION_ABSORBED`): U as float64,
    grow = 1 + delta, the factor on the region's semi-axes in MaxIntersect, Intersect and the pre-filter, and
    kappa = n eps (0 when absorbed), the margin of a distance to the region and the shrink of its inner radius."""
    u: np.ndarray
    grow: float
    kappa: float


def _widened(rotation: Rotation, s: np.ndarray, name: str) -> _Rotation:
    """The `_Rotation` of a checked U in the region of semi-axes s (n values > 0)."""
    u, deviation = rotation.matrix, rotation.deviation
    kappa = s.size * deviation
    if kappa <= DEVIATION_ABSORBED:
        return _Rotation(u, 1.0, 0.0)
    if kappa >= 0.5:
        raise ValueError(f"{name} must be orthogonal to within 0.5 / n = {0.5 / s.size:.2e} in {s.size} dimensions "
                         f"(its deviation {deviation:.2e} allows no sound margin); re-orthogonalize it, e.g. with "
                         f"np.linalg.qr")
    return _Rotation(u, 1.0 + float(s.max() / s.min()) * kappa / (1.0 - kappa), kappa)


def _is_axis_aligned(u: np.ndarray, s: np.ndarray) -> bool:
    """True when (U, s) describes an axis-aligned ellipsoid with semi-axes s exactly: U diagonal with
    entries +-1 (then (U^T d)_i^2 = d_i^2), or all semi-axes equal (a ball, any U)."""
    if s.size and s.max() == s.min():
        return True
    d = np.diag(u)
    return bool(np.count_nonzero(u - np.diag(d)) == 0 and np.all(np.abs(d) == 1.0))


def _check_rotations(rotations, p: np.ndarray, s: np.ndarray, norm: str) -> tuple[np.ndarray | None, list, list]:
    """(rot_index, stack, checked): rot_index[j] = index in stack (of `_Rotation`s) of input j's genuine rotation, -1
    for an axis-aligned region, rot_index None when no region is rotated (the axis-aligned code throughout);
    checked[j] = input j's `parameters.Rotation` or None."""
    num, n = s.shape
    if rotations is None:
        return None, [], [None] * num
    if isinstance(rotations, (str, bytes)) or not isinstance(rotations, (Sequence, np.ndarray)):
        raise ValueError(f"rotations must be a sequence with one entry (None or an ({n}, {n}) orthogonal "
                         f"matrix) per input, got {type(rotations).__name__}")
    if len(rotations) != num:
        raise ValueError(f"rotations must have one entry per input ({num}), got {len(rotations)}")
    rot_index = np.full(num, -1, dtype=np.int64)
    stack: list[_Rotation] = []
    checked: list[Rotation | None] = [None] * num
    for k, u in enumerate(rotations):
        if u is None:
            continue
        if norm != L2:
            raise ValueError(f"rotations[{k}] must be None for {norm} regions: rotated regions are l2 ellipsoids "
                             f"(RANCER), got a matrix")
        checked[k] = Rotation.of(u, n, f"rotations[{k}]")
        if p[k] != ABSTAIN and not _is_axis_aligned(checked[k].matrix, s[k]):
            rot_index[k] = len(stack)
            stack.append(_widened(checked[k], s[k], f"rotations[{k}]"))
    return (rot_index if stack else None), stack, checked


# ------------------------------------------------------------------------------------------------
# the pair tests, per region kind (u = None: axis-aligned; the new region first, the memory entry second)
# ------------------------------------------------------------------------------------------------
# They run geometry's, rotated's and regions' formulas on the values checked at the entry points. A rotated entry is
# a `_Rotation` (None: axis-aligned), whose widening they apply where `DEVIATION_ABSORBED` says.

def _grow(rot: _Rotation | None) -> float | None:
    """The factor on a region's semi-axes in the tests, None when there is none."""
    return None if rot is None or rot.grow == 1.0 else rot.grow


def _grown(s, rot: _Rotation | None):
    """The semi-axes s as MaxIntersect and Intersect take them for a region of rotation `rot`."""
    grow = _grow(rot)
    return s if grow is None else s * grow


def _outer(s, rot: _Rotation | None):
    """The radius of the l_p ball around the centre that holds the region (s, rot) (MaxIntersect, Lemma 1)."""
    return geometry.outer_ball_radius(_grown(s, rot))


def _inner(s, rot: _Rotation | None):
    """The radius of an l_p ball around the centre inside the region (s, rot) (LargestOutSubset's bound)."""
    r = geometry.inner_ball_radius(s)
    return r if rot is None or rot.kappa == 0.0 else r * (1.0 - rot.kappa)


def _shrink(rot: _Rotation | None) -> float:
    """1 - the margin of a distance to the region of rotation `rot` (LargestOutSubset)."""
    return 1.0 - (geometry.SHRINK_MARGIN if rot is None or rot.kappa == 0.0 else rot.kappa)


def _inside(x, c, s, rot, norm: str):
    """x in R = (c, s, rot): `region_norm` (axis-aligned; c, s may be a batch), `rotated.contains` (one entry)."""
    if rot is None:
        return region_norm(x - c, s, norm) <= 1.0
    return bool(rotated.contains(x, c, rot.u, s))


def _meets(x, sx, rx, c, s, rot, norm: str, eye):
    """Intersect((x, sx, rx), (c, s, rot)): D.2/D.3 when both are axis-aligned (c, s may be a batch), RANCER Eq. 5
    otherwise with eye (= I) for an axis-aligned partner (c, s a batch only when rot is None)."""
    if rx is None and rot is None:
        return geometry.intersect(x, sx, c, s, norm)
    return rotated.ellipsoids_intersect(x, eye if rx is None else rx.u, _grown(sx, rx), c,
                                        eye if rot is None else rot.u, _grown(s, rot))


def _distance(x, c, s, rot, norm: str):
    """LargestOutSubset's distance from x to R = (c, s, rot) (c, s a batch when rot is None), before its margin."""
    if rot is None:
        return geometry.distance_to_region(x, c, s, norm)
    return float(rotated.distance_to_ellipsoid(x, c, rot.u, s))


def _may_meet(x, radius, c, s, norm: str, grow=None):
    """MaxIntersect of the ball of `radius` around x and the outer balls of the entries (c, s), their radii
    multiplied by `grow` (None: by nothing; else a number or one per entry)."""
    outer = geometry.outer_ball_radius(s)
    return geometry.max_intersect(x, radius, c, outer if grow is None else outer * grow, norm)


# ------------------------------------------------------------------------------------------------
# the fast path's core: Algorithm 1 for one input against candidate entries
# ------------------------------------------------------------------------------------------------

def _algorithm1_step(x, sx, rx, c, s, r_idx, stack, norm: str, policy: str) -> tuple[np.ndarray | None, str]:
    """Algorithm 1 for one input (x, semi-axes sx, `_Rotation` rx or None) against memory entries of other classes
    given in memory order, all of them or a subset holding every entry whose region may meet the new one:
    centres c (m, n), semi-axes s (m, n), rotation stack[r_idx[j]] of entry j (r_idx[j] = -1, or r_idx None for
    all, when axis-aligned). Axis-aligned entries are tested vectorized; rotated ones one at a time (each test is
    O(n^2) or more, and gathering their (n, n) rotations would copy more memory than the tests read).
    Returns (final semi-axes, status), the semi-axes None when abstaining."""
    m, n = c.shape
    rt = np.flatnonzero(r_idx >= 0) if r_idx is not None else ()
    eye = np.eye(n) if (rx is not None or len(rt)) else None
    grow = None  # the entries' factors on their outer radii, None when none is widened
    if not len(rt):
        inside = _inside(x, c, s, None, norm)
    else:
        rotated_mask = r_idx >= 0
        ax = np.flatnonzero(~rotated_mask)
        inside = np.zeros(m, dtype=bool)
        if ax.size:
            inside[ax] = _inside(x, c[ax], s[ax], None, norm)
        inside[rt] = [_inside(x, c[j], s[j], stack[r_idx[j]], norm) for j in rt]
        factors = [stack[r_idx[j]].grow for j in rt]
        if any(f != 1.0 for f in factors):
            grow = np.ones(m)
            grow[rt] = factors
    if policy == SHRINK and inside.any():
        return None, ABSTAIN_INSIDE
    may = _may_meet(x, _outer(sx, rx), c, s, norm, grow)
    if not len(rt):
        hits = np.flatnonzero(may)
        if hits.size:
            hits = hits[_meets(x, sx, rx, c[hits], s[hits], None, norm, eye)]
    else:
        meets = np.zeros(m, dtype=bool)
        i = np.flatnonzero(may & ~rotated_mask)
        if i.size:
            meets[i] = _meets(x, sx, rx, c[i], s[i], None, norm, eye)
        i = np.flatnonzero(may & rotated_mask)
        if i.size:
            meets[i] = [bool(_meets(x, sx, rx, c[j], s[j], stack[r_idx[j]], norm, eye)) for j in i]
        hits = np.flatnonzero(meets)
    if policy == WORST_CASE and (hits.size or inside.any()):
        # Algorithm 1 stops at the FIRST entry (memory order) that contains x or meets the region, so the status
        # names that entry's reason (tests/test_memory.py::test_abstain_status_names_first_reason).
        first_inside = np.flatnonzero(inside)[0] if inside.any() else m
        first_hit = hits[0] if hits.size else m
        return None, (ABSTAIN_INSIDE if first_inside <= first_hit else ABSTAIN_INTERSECT)
    if hits.size == 0:
        return sx, KEPT
    # distances from x to each hit region (D.4/D.5 or Eq. 6), shrunk by their margins
    if not len(rt):
        dist = _distance(x, c[hits], s[hits], None, norm) * (1.0 - geometry.SHRINK_MARGIN)
    else:
        dist = np.empty(hits.size)
        shrink = np.full(hits.size, 1.0 - geometry.SHRINK_MARGIN)
        h_rt = rotated_mask[hits]
        if (~h_rt).any():
            k = hits[~h_rt]
            dist[~h_rt] = _distance(x, c[k], s[k], None, norm)
        if h_rt.any():
            rots = [stack[r_idx[j]] for j in hits[h_rt]]
            dist[h_rt] = [_distance(x, c[j], s[j], r, norm) for j, r in zip(hits[h_rt], rots)]
            shrink[h_rt] = [_shrink(r) for r in rots]
        dist = dist * shrink
    # shrink in memory order; once the region is a ball, re-test each later hit against the ball
    current = sx
    for k, i in enumerate(hits):
        if current is not sx:
            rot = stack[r_idx[i]] if len(rt) and r_idx[i] >= 0 else None
            if not (_may_meet(x, current[0], c[i], s[i], norm, _grow(rot))
                    and _meets(x, current, None, c[i], s[i], rot, norm, eye)):
                continue
        current = np.full_like(sx, np.minimum(dist[k], _inner(current, rx if current is sx else None)))
    return current, SHRUNK


def decide(x: np.ndarray, pred: int, scales: np.ndarray, mem_centers: np.ndarray, mem_preds: np.ndarray,
           mem_scales: np.ndarray, norm: str, policy: str = SHRINK) -> Decision:
    """ANCER Algorithm 1 (App. D) for one input with an axis-aligned region against memory entries given in
    memory order (all entries, or any subset that contains every entry whose region may meet the new one).
    Vectorized over the entries. An entry point: its arguments are checked (a few O(m d) passes over the memory).

    Parameters
    ----------
    x : numpy.ndarray, shape (d,)
        The new input, finite, d >= 1.
    pred : int
        Its class index >= 0, or ABSTAIN (-1).
    scales : numpy.ndarray, shape (d,)
        Its region's semi-axes, finite, > 0 unless pred is ABSTAIN.
    mem_centers, mem_scales : numpy.ndarray, shape (m, d)
        The entries' centres and semi-axes, finite; mem_scales > 0 where the entry's label is not ABSTAIN.
    mem_preds : numpy.ndarray of int, shape (m,)
        The entries' labels, >= -1.
    norm : str
        One of NORMS.
    policy : str
        One of POLICIES.

    Returns
    -------
    Decision
    """
    _check_decide(x, pred, scales, mem_centers, mem_preds, mem_scales, norm, policy)
    x = np.asarray(x, np.float64)
    if pred == ABSTAIN:
        return Decision(_final(x, ABSTAIN, None, norm), ABSTAIN_BASE)
    scales = np.asarray(scales, np.float64)
    other = np.flatnonzero(np.asarray(mem_preds) != pred)
    if other.size == 0:
        return Decision(_final(x, pred, scales, norm), KEPT)
    region, status = _algorithm1_step(x, scales, None, mem_centers[other], mem_scales[other], None, (), norm, policy)
    return Decision(_final(x, pred, region, norm), status)


def _check_decide(x, pred, scales, mem_centers, mem_preds, mem_scales, norm, policy) -> None:
    """`decide`'s checks (ValueError naming the argument)."""
    check_norm(norm), _check_policy(policy)
    check_class_index(pred, "pred", abstain=True)
    x_shape = np.shape(x)
    x = _row(x, np.size(x), "x")
    if len(x_shape) != 1 or x.size == 0:
        raise ValueError(f"x must be a finite 1-D vector with at least 1 entry, got shape {x_shape}")
    scales = _row(scales, np.size(scales), "scales")
    c, p, s = _check_batch(mem_centers, mem_preds, mem_scales, names=("mem_centers", "mem_preds", "mem_scales"))
    if not x.size == scales.size == c.shape[1]:
        raise ValueError(f"x, scales and mem_centers must have the same dimension d (shapes (d,), (d,) and (m, d)), "
                         f"got shapes {x_shape}, {scales.shape} and {c.shape}")
    if pred != ABSTAIN and not (scales > 0).all():
        raise ValueError(f"scales must be > 0 in every dimension for a non-abstaining prediction, got min "
                         f"{float(scales.min())!r}")


class CertificationMemory:
    """The memory M of ANCER Algorithm 1 (App. D), growing as inputs are certified one at a time; an l2 memory
    may hold rotated ellipsoids (RANCER §3). With a `Provenance` (given here, or taken from the first region
    added with one), it refuses regions of another base model, noise or norm."""

    def __init__(self, dim: int, norm: str, policy: str = SHRINK, *, provenance: Provenance | None = None) -> None:
        check_count(dim, "dim")  # a bool dim (True = 1) is refused
        self.dim, self.norm, self.policy = int(dim), check_norm(norm), _check_policy(policy)
        self._provenance = _check_provenance(provenance, self.norm)
        self._centers = np.empty((0, self.dim))
        self._scales = np.empty((0, self.dim))
        self._preds = np.empty(0, dtype=np.int64)
        self._rot = np.empty(0, dtype=np.int64)  # index in self._stack, -1 for an axis-aligned region
        self._stack: list[_Rotation] = []
        self._size = 0

    def __len__(self) -> int:
        return self._size

    @property
    def provenance(self) -> Provenance | None:
        """Where every region of the memory came from (None: not recorded)."""
        return self._provenance

    def _append(self, x: np.ndarray, pred: int, scales: np.ndarray, rot: int) -> None:
        if self._size == len(self._preds):  # amortized growth
            cap = max(16, 2 * self._size)
            self._centers = np.resize(self._centers, (cap, self.dim))
            self._scales = np.resize(self._scales, (cap, self.dim))
            self._preds = np.resize(self._preds, cap)
            self._rot = np.resize(self._rot, cap)
        self._centers[self._size], self._scales[self._size], self._preds[self._size] = x, scales, pred
        self._rot[self._size] = rot
        self._size += 1

    def certify(self, x: np.ndarray, pred: int, scales: np.ndarray, *, rotation: np.ndarray | None = None,
                provenance: Provenance | None = None) -> Decision:
        """ANCER Algorithm 1 (App. D) for a new input: decide, and add it to the memory unless it abstains. An entry
        point: every argument is checked here.

        Parameters
        ----------
        x : numpy.ndarray, shape (dim,)
            The input, finite.
        pred : int
            Its class index >= 0, or ABSTAIN.
        scales : numpy.ndarray, shape (dim,)
            Its region's semi-axes, finite, > 0 unless pred is ABSTAIN.
        rotation : numpy.ndarray, shape (dim, dim), optional
            None (axis-aligned) or, for an l2 memory, U (the region {y : ||diag(1/s) U^T (y - x)||_2 <= 1}, RANCER
            Eq. 3), orthogonal within `parameters.ORTHOGONALITY_TOL` (the margins widen by its deviation,
            `DEVIATION_ABSORBED`).
        provenance : Provenance, optional
            None (the memory's) or the region's, which must equal the memory's (ValueError naming both otherwise).

        Returns
        -------
        Decision
        """
        x = _row(x, self.dim, "x")
        scales = _row(scales, self.dim, "scales")
        check_class_index(pred, "pred", abstain=True)
        if pred != ABSTAIN and not (scales > 0).all():
            raise ValueError("scales must be > 0 in every dimension for a non-abstaining prediction")
        rx = checked = None
        if rotation is not None:
            if self.norm != L2:
                raise ValueError(f"rotation must be None for a {self.norm} memory: rotated regions are l2 "
                                 f"ellipsoids (RANCER), got a matrix")
            checked = Rotation.of(rotation, self.dim)
            if pred != ABSTAIN and not _is_axis_aligned(checked.matrix, scales):
                rx = _widened(checked, scales, "rotation")
        prov = _check_provenance(provenance, self.norm)
        if prov is not None:
            if self._provenance is None and self._size:
                raise ValueError(f"provenance {prov} cannot be checked: the memory holds {self._size} regions of "
                                 f"unknown provenance (give the memory its provenance when creating it)")
            if self._provenance is not None and prov != self._provenance:
                raise _differs(prov, self._provenance, "provenance", "the memory's provenance")
        n = self._size
        if pred == ABSTAIN:
            return Decision(_final(x, ABSTAIN, None, self.norm), ABSTAIN_BASE)
        other = np.flatnonzero(self._preds[:n] != pred)
        if other.size == 0:
            region, status = scales, KEPT
        else:
            r_idx = self._rot[other] if self._stack else None
            region, status = _algorithm1_step(x, scales, rx, self._centers[other], self._scales[other], r_idx,
                                              self._stack, self.norm, self.policy)
        if region is None:
            return Decision(_final(x, ABSTAIN, None, self.norm), status)
        rot = -1
        if rx is not None and status != SHRUNK:
            rot = len(self._stack)
            self._stack.append(rx)
        self._append(x, int(pred), region, rot)
        if prov is not None and self._provenance is None:
            self._provenance = prov
        return Decision(_final(x, int(pred), region, self.norm, checked if status == KEPT else None), status)


def _row(v: np.ndarray, dim: int, name: str) -> np.ndarray:
    try:
        a = np.asarray(v, np.float64).reshape(-1)
    except (TypeError, ValueError):  # a message naming the argument, not numpy's
        raise ValueError(f"{name} must be a finite vector with {dim} entries, got {v!r}") from None
    if a.shape != (dim,):
        raise ValueError(f"{name} must be a finite vector with {dim} entries, got shape {np.shape(v)}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be a finite vector (found NaN or Inf)")
    return a


def _check_batch(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray,
                 names: tuple[str, str, str] = ("centers", "preds", "scales")) -> tuple[np.ndarray, ...]:
    cn, pn, sn = names  # the arguments' names in the caller's signature
    try:
        c = np.asarray(centers, np.float64)
        s = np.asarray(scales, np.float64)
    except (TypeError, ValueError):  # numpy's "could not convert string to float" named neither
        raise ValueError(f"{cn} and {sn} must be (num, dim) arrays of finite numbers, got {type(centers).__name__} "
                         f"and {type(scales).__name__}") from None
    p_raw = np.asarray(preds)
    # a non-integer label (1.5, NaN) would be truncated silently by astype
    if p_raw.size and not (np.issubdtype(p_raw.dtype, np.integer)
                           or (np.issubdtype(p_raw.dtype, np.floating) and np.isfinite(p_raw).all()
                               and (p_raw == np.round(p_raw)).all())):
        raise ValueError(f"{pn} must be integer class labels (-1 = abstain), got dtype {p_raw.dtype}")
    p = p_raw.astype(np.int64)
    if c.ndim != 2:
        raise ValueError(f"{cn} must have shape (num, dim), got {c.shape}")
    if s.shape != c.shape:
        raise ValueError(f"{sn} must have the shape of {cn} {c.shape}, got {s.shape}")
    if p.shape != (c.shape[0],):
        raise ValueError(f"{pn} must have shape ({c.shape[0]},), got {p.shape}")
    if (p < ABSTAIN).any():  # pred = -5 would be kept as a class of its own
        raise ValueError(f"{pn} must be class indices >= 0 or ABSTAIN ({ABSTAIN}), got {int(p.min())}")
    if not np.isfinite(c).all():
        raise ValueError(f"{cn} must be finite (found NaN or Inf)")
    if not np.isfinite(s).all():
        raise ValueError(f"{sn} must be finite (found NaN or Inf)")
    positive = s > 0  # index by the labels only where some semi-axis is <= 0 (no copy of s otherwise)
    if not positive.all() and not positive[p != ABSTAIN].all():
        raise ValueError(f"{sn} must be > 0 for every non-abstaining prediction")
    return c, p, s


def _check_stream(centers, preds, scales, norm, policy, rotations, provenance, block=BLOCK):
    """The stream functions' checks, in this order: arrays, norm, policy, block, rotations, provenance; returns
    (c, p, s, rot_index, stack, checked) (`_check_rotations`)."""
    c, p, s = _check_batch(centers, preds, scales)
    check_norm(norm), _check_policy(policy)
    # block <= 0 would fail obscurely (range() step 0) or silently return [] (negative step)
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"block must be a positive int, got {block!r}")
    rot_index, stack, checked = _check_rotations(rotations, p, s, norm)
    _check_stream_provenance(provenance, norm, c.shape[0])
    return c, p, s, rot_index, stack, checked


def algorithm1_reference(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray, norm: str,
                         policy: str = SHRINK, *, rotations: Sequence[np.ndarray | None] | np.ndarray | None = None,
                         provenance: Provenance | Sequence[Provenance] | None = None) -> list[Decision]:
    """ANCER Algorithm 1 (App. D) exactly as printed, one memory entry at a time (the slow reference), for every
    region kind: each input is compared with every earlier non-abstained region of another class, in memory
    order, with the pair tests of its kind (RANCER Eq. 5-6 where a region is rotated). An entry point: every
    argument is checked once here.

    Parameters
    ----------
    centers : numpy.ndarray, shape (num, n)
        The inputs, finite, n >= 1.
    preds : numpy.ndarray of int, shape (num,)
        Their CERTIFY predictions, class indices >= 0 or ABSTAIN (-1).
    scales : numpy.ndarray, shape (num, n)
        Their regions' semi-axes, finite, > 0 unless abstaining.
    norm : str
        One of NORMS: "l1" (cross-polytopes) or "l2" (ellipsoids).
    policy : str
        One of POLICIES.
    rotations : sequence of (numpy.ndarray of shape (n, n) or None), optional
        One entry per input: None (axis-aligned) or, for l2, U (the region {x : ||diag(1/s) U^T (x - c)||_2 <= 1},
        RANCER Eq. 3), orthogonal within `parameters.ORTHOGONALITY_TOL` (`parameters.check_rotation`; the margins
        widen by its deviation, `DEVIATION_ABSORBED`). None: every region axis-aligned.
    provenance : Provenance or sequence of Provenance, optional
        The stream's `Provenance`, or one per input (all equal; ValueError naming two that differ); None: unchecked.

    Returns
    -------
    list of Decision
        One per input, in order.
    """
    c, p, s, rot_index, stack, checked = _check_stream(centers, preds, scales, norm, policy, rotations, provenance)
    return _decisions(c, p, _reference(c, p, s, rot_index, stack, norm, policy), norm,
                      lambda j: _final(c[j], int(p[j]), s[j], norm, checked[j]))


def _reference(c: np.ndarray, p: np.ndarray, s: np.ndarray, rot_index: np.ndarray | None, stack: list, norm: str,
               policy: str) -> list[tuple[np.ndarray | None, str]]:
    """`algorithm1_reference`'s loop over inputs as its entry points checked them: centres c (num, n), predictions
    p (num,), semi-axes s (num, n), rotations as `_check_rotations` returns them; per input, its final semi-axes
    (None when abstaining) and status."""
    eye = np.eye(c.shape[1]) if stack else None
    memory: list[tuple[np.ndarray, int, np.ndarray, _Rotation | None]] = []
    out = []
    for j in range(c.shape[0]):
        x, pred, sc = c[j], int(p[j]), s[j]
        if pred == ABSTAIN:
            out.append((None, ABSTAIN_BASE))
            continue
        region = sc
        r_region = stack[rot_index[j]] if rot_index is not None and rot_index[j] >= 0 else None
        status = KEPT
        for ci, pi, si, ri in memory:
            if pi == pred:
                continue
            if _inside(x, ci, si, ri, norm):
                status = ABSTAIN_INSIDE
                break
            if (_may_meet(x, _outer(region, r_region), ci, si, norm, _grow(ri))
                    and _meets(x, region, r_region, ci, si, ri, norm, eye)):
                if policy == WORST_CASE:
                    status = ABSTAIN_INTERSECT
                    break
                # LargestOutSubset (D.4/D.5, Eq. 6): a ball around x that misses R_i, inside the current region
                radius = np.minimum(_distance(x, ci, si, ri, norm) * _shrink(ri), _inner(region, r_region))
                region, r_region, status = np.full_like(sc, radius), None, SHRUNK  # a ball: no rotation
        if status in (ABSTAIN_INSIDE, ABSTAIN_INTERSECT):
            out.append((None, status))
        else:
            memory.append((x, pred, region, r_region))
            out.append((region, status))
    return out


def _gram_candidates(c: np.ndarray, p: np.ndarray, s: np.ndarray, block: int, grow: np.ndarray | None = None):
    """The pre-filter of `certify_stream`: yields (start, stop, maybe) per block of rows, maybe[j - start, i]
    False only where inputs j and i < stop have outer l2 balls (radius max s, times grow[j] for a widened rotation
    (`DEVIATION_ABSORBED`; grow None: none), 0 for an abstention; rotation invariant, and sound for l1 since
    ||v||_1 >= ||v||_2) proved apart by the Gram identity ||c_j - c_i||^2 = |c_j|^2 + |c_i|^2 - 2 <c_j, c_i> (with a
    slack for its rounding)."""
    num = c.shape[0]
    outer = np.where(p != ABSTAIN, s.max(axis=1), 0.0)  # input semi-axes bound the final ones
    if grow is not None:
        outer = outer * grow
    with np.errstate(over="ignore"):
        sq = (c * c).sum(axis=1)  # may overflow to inf: handled below
    for start in range(0, num, block):
        stop = min(num, start + block)
        with np.errstate(over="ignore", invalid="ignore"):
            gram = c[start:stop] @ c[:stop].T
            d2 = sq[start:stop, None] + sq[None, :stop] - 2.0 * gram
            reach = (outer[start:stop, None] + outer[None, :stop]) ** 2
            slack = 1e-9 * (sq[start:stop, None] + sq[None, :stop]) + 1e-12
            maybe = d2 <= reach + slack
        # Huge coordinates overflow the Gram identity (inf - inf = NaN, so the pair looked far apart and
        # an overlapping region was kept): such pairs go to the exact tests instead.
        maybe |= ~(np.isfinite(d2) & np.isfinite(reach) & np.isfinite(slack))
        yield start, stop, maybe


@timed(MEMORY)
def certify_stream(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray, norm: str,
                   policy: str = SHRINK, block: int = BLOCK, *,
                   rotations: Sequence[np.ndarray | None] | np.ndarray | None = None,
                   provenance: Provenance | Sequence[Provenance] | None = None) -> list[Decision]:
    """ANCER Algorithm 1 (App. D; RANCER Eq. 5-6 for rotated regions) over inputs certified in the given order,
    with exactly the decisions of `algorithm1_reference` (same arguments) but fast: a blocked Gram matrix finds
    the earlier inputs whose outer l2 balls may meet the new one's, and Algorithm 1 runs on those only
    (vectorized over the axis-aligned ones). An entry point: every argument is checked once here.

    Parameters
    ----------
    centers : numpy.ndarray, shape (num, n)
        The inputs, finite, n >= 1.
    preds : numpy.ndarray of int, shape (num,)
        Their CERTIFY predictions, class indices >= 0 or ABSTAIN (-1).
    scales : numpy.ndarray, shape (num, n)
        Their regions' semi-axes, finite, > 0 unless abstaining.
    norm : str
        One of NORMS: "l1" (cross-polytopes) or "l2" (ellipsoids).
    policy : str
        One of POLICIES.
    block : int
        Rows of the Gram matrix computed at once, an int >= 1.
    rotations : sequence of (numpy.ndarray of shape (n, n) or None), optional
        One entry per input: None (axis-aligned) or, for l2, U (the region {x : ||diag(1/s) U^T (x - c)||_2 <= 1},
        RANCER Eq. 3), orthogonal within `parameters.ORTHOGONALITY_TOL` (`parameters.check_rotation`; the margins
        widen by its deviation, `DEVIATION_ABSORBED`). None: every region axis-aligned.
    provenance : Provenance or sequence of Provenance, optional
        The stream's `Provenance`, or one per input (all equal; ValueError naming two that differ); None: unchecked.

    Returns
    -------
    list of Decision
        One per input, in order.
    """
    c, p, s, rot_index, stack, checked = _check_stream(centers, preds, scales, norm, policy, rotations, provenance,
                                                       block)
    return _decisions(c, p, _stream(c, p, s, rot_index, stack, norm, policy, block), norm,
                      lambda j: _final(c[j], int(p[j]), s[j], norm, checked[j]))


def _stream(c: np.ndarray, p: np.ndarray, s: np.ndarray, rot_index: np.ndarray | None, stack: list, norm: str,
            policy: str, block: int) -> list[tuple[np.ndarray | None, str]]:
    """`certify_stream`'s Gram pre-filter and Algorithm 1 over inputs as its entry points checked them (arguments and
    outcomes as `_reference`'s; block: rows of the Gram matrix at once)."""
    num = c.shape[0]
    # final regions as decided so far; abstained inputs are never in memory
    final_scales = s.copy()
    final_rot = None if rot_index is None else rot_index.copy()  # -1 once shrunk to a ball
    in_memory = np.zeros(num, dtype=bool)
    grow = None  # the inputs' factors on their outer radii, None when no rotation is widened
    if any(r.grow != 1.0 for r in stack):
        grow = np.ones(num)
        rows = np.flatnonzero(rot_index >= 0)
        grow[rows] = [stack[k].grow for k in rot_index[rows]]
    out: list[tuple[np.ndarray | None, str]] = []
    for start, stop, maybe in _gram_candidates(c, p, s, block, grow):
        for j in range(start, stop):
            if p[j] == ABSTAIN:
                out.append((None, ABSTAIN_BASE))
                continue
            cand = np.flatnonzero(maybe[j - start, :j] & in_memory[:j] & (p[:j] != p[j]))
            if cand.size == 0:
                region, status = s[j], KEPT
            else:
                rx = stack[rot_index[j]] if rot_index is not None and rot_index[j] >= 0 else None
                region, status = _algorithm1_step(c[j], s[j], rx, c[cand], final_scales[cand],
                                                  None if final_rot is None else final_rot[cand], stack, norm, policy)
            if region is None:
                out.append((None, status))
                continue
            in_memory[j] = True
            final_scales[j] = region
            if status == SHRUNK and final_rot is not None:
                final_rot[j] = -1
            out.append((region, status))
    return out


def _region_arrays(regions: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, list, str]:
    """Algorithm 1's input arrays from checked `CertifiedRegion`s: (centres (num, n), predictions (num,), semi-axes
    (num, n), rot_index, stack, norm), the rotations with the deviation each region measured (no second check)."""
    if isinstance(regions, (str, bytes, CertifiedRegion)) or not isinstance(regions, Sequence):
        raise TypeError(f"regions must be a sequence of regions.CertifiedRegion, got {type(regions).__name__}")
    if not regions:
        raise ValueError("regions must hold at least one CertifiedRegion, got an empty sequence")
    first = regions[0]
    for k, r in enumerate(regions):
        if not isinstance(r, CertifiedRegion):
            raise TypeError(f"regions[{k}] must be a regions.CertifiedRegion, got {type(r).__name__}")
        if r.dimension != first.dimension or r.norm != first.norm:
            raise ValueError(f"regions[{k}] must be a {first.norm} region in {first.dimension} dimensions like "
                             f"regions[0], got a {r.norm} region in {r.dimension}")
        if r.rotation is not None and r.norm != L2:
            raise ValueError(f"regions[{k}] must be axis-aligned: Algorithm 1's tests take rotated l2 ellipsoids "
                             f"(RANCER) only, got a rotated {r.norm} region")
    c = np.stack([r.center for r in regions])
    p = np.array([r.prediction for r in regions], dtype=np.int64)
    s = np.stack([np.ones(r.dimension) if r.abstained else r.semi_axes for r in regions])
    rot_index = np.full(len(regions), -1, dtype=np.int64)
    stack: list[_Rotation] = []
    for k, r in enumerate(regions):
        if r.rotation is not None and not r.abstained and not _is_axis_aligned(r.rotation, s[k]):
            rot_index[k] = len(stack)
            stack.append(_widened(Rotation(r.rotation, r.deviation), s[k], f"regions[{k}].rotation"))
    return c, p, s, (rot_index if stack else None), stack, first.norm


@timed(MEMORY)
def algorithm1(regions: Sequence[CertifiedRegion], policy: str = SHRINK, *, reference: bool = False,
               block: int = BLOCK, provenance: Provenance | Sequence[Provenance] | None = None) -> list[Decision]:
    """ANCER Algorithm 1 (App. D; RANCER Eq. 5-6 for rotated ellipsoids) over certified regions in the order given:
    the package's path from CERTIFY's certificates (`certify.Certificate.region`) to the memory's decisions. Each
    region's semi-axes gap θ (1 - margin), rotation and measured deviation are taken as its record checked them.

    Parameters
    ----------
    regions : sequence of regions.CertifiedRegion, length num >= 1
        The inputs' certified regions, one norm and dimension n; rotated ones only for l2.
    policy : str
        One of POLICIES.
    reference : bool
        Run the literal loop over the memory (`algorithm1_reference`) instead of the fast path (`certify_stream`);
        the decisions are the same, bit for bit.
    block : int
        Rows of the fast path's Gram matrix computed at once, >= 1.
    provenance : Provenance or sequence of Provenance, optional
        The regions' `Provenance` (as in `certify_stream`); None: unchecked.

    Returns
    -------
    list of Decision
        One per region, in order: its final region (the given `CertifiedRegion` itself when kept or abstained before
        the memory) and status.
    """
    c, p, s, rot_index, stack, norm = _region_arrays(regions)
    _check_policy(policy)
    if not isinstance(reference, (bool, np.bool_)):
        raise TypeError(f"reference must be a bool, got {type(reference).__name__} {reference!r}")
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"block must be a positive int, got {block!r}")
    _check_stream_provenance(provenance, norm, len(regions))
    outcomes = (_reference(c, p, s, rot_index, stack, norm, policy) if reference
                else _stream(c, p, s, rot_index, stack, norm, policy, block))
    return _decisions(c, p, outcomes, norm, regions.__getitem__)
