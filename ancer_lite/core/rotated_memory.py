"""Memory-based certification for l2 memories of axis-aligned and rotated ellipsoids (ANCER Algorithm 1,
App. D, as adapted by RANCER §3 "Memory-Based Certification").

A region is (centre c, rotation U, semi-axes s): {x : ||diag(1/s) U^T (x - c)||_2 <= 1}, with U = None for
an axis-aligned ellipsoid. The two kinds may be mixed in one memory. Algorithm 1 is unchanged except for
the tests on a pair of regions:
  - inside (x in R_i): `regions.region_norm` for an axis-aligned R_i, `rotated.contains` for a rotated one;
  - MaxIntersect: the outer l2 balls of radius max(s) (rotation invariant, `geometry.max_intersect`);
  - Intersect: `geometry.ellipsoids_intersect` (ANCER D.2) when both regions are axis-aligned, RANCER's
    Eq. 5 via `rotated.ellipsoids_intersect` (U = I standing in for an axis-aligned partner) otherwise,
    after its O(n^2) separating-hyperplane test (`rotated.separated`);
  - LargestOutSubset: an l2 ball around x missing R_i, of radius min(dist(x, R_i) (1 - SHRINK_MARGIN),
    inner radius of the current region) with the distance from ANCER D.4 (`geometry.largest_out_subset`)
    or RANCER Eq. 6 (`rotated.largest_out_subset`). The shrunk region is a ball, so its rotation is dropped.
In every pair test the new input's region comes first and the memory entry second, in both implementations.

A rotation that is diagonal with entries +-1 (the identity, reflections), or any rotation of a ball
(all semi-axes equal), describes an axis-aligned region exactly; such regions take the axis-aligned code,
so a memory without genuine rotations gets exactly `memory.certify_stream`'s decisions.

`algorithm1_reference_rotated` is the literal loop; `certify_stream_rotated` is the fast path (Gram-matrix
pre-filter on outer balls, then the tests over the candidates: vectorized for axis-aligned entries, one
rotated entry at a time) and must return the same decisions.
Both return `memory.Decision`s; a kept region reports its input semi-axes (along U's columns), a shrunk one
the ball's radius in every entry.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import geometry, memory, rotated
from .memory import ABSTAIN, ABSTAIN_BASE, ABSTAIN_INSIDE, ABSTAIN_INTERSECT, KEPT, SHRINK, SHRUNK, WORST_CASE, Decision
from .regions import L2, region_norm
from .stages import MEMORY, timed

#: max |U U^T - I| accepted for a rotation. Stricter than rotated.ORTHOGONALITY_TOL (1e-8): the tests and
#: the projection treat U^T as U^-1, so a deviation eps changes distances by ~eps/2 relative, which must
#: stay well below geometry.SHRINK_MARGIN (1e-9) for the shrunk balls to be sound.
ORTHOGONALITY_TOL = 1e-12
#: rows of the Gram-matrix pre-filter computed at once
_BLOCK = 1024

__all__ = ["algorithm1_reference_rotated", "certify_stream_rotated", "ORTHOGONALITY_TOL"]


# ------------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------------

def _check_rotation(u, n: int, k: int) -> np.ndarray:
    try:
        a = np.asarray(u, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"rotations[{k}] must be None or a real ({n}, {n}) matrix: {exc}") from None
    if a.shape != (n, n):
        raise ValueError(f"rotations[{k}] must be None or have shape ({n}, {n}), got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"rotations[{k}] must be finite (found NaN or Inf)")
    err = float(np.abs(a @ a.T - np.eye(n)).max())
    if err > ORTHOGONALITY_TOL:
        raise ValueError(f"rotations[{k}] must be orthogonal (U U^T = I within {ORTHOGONALITY_TOL:g}); "
                         f"max deviation is {err:.2e} (re-orthogonalize it, e.g. with np.linalg.qr)")
    return a


def _is_axis_aligned(u: np.ndarray, s: np.ndarray) -> bool:
    """True when (U, s) describes an axis-aligned ellipsoid with semi-axes s exactly: U diagonal with
    entries +-1 (then (U^T d)_i^2 = d_i^2), or all semi-axes equal (a ball, any U)."""
    if s.size and s.max() == s.min():
        return True
    d = np.diag(u)
    return bool(np.count_nonzero(u - np.diag(d)) == 0 and np.all(np.abs(d) == 1.0))


def _check_inputs(centers, preds, scales, rotations, policy):
    """Validate everything; returns (c, p, s, rot_index, rot_stack): rot_index[j] = -1 for an axis-aligned
    region, else the index of its rotation in rot_stack (k, n, n)."""
    c, p, s = memory._check_batch(centers, preds, scales)
    memory._check_policy(policy)
    num, n = c.shape
    rot_index = np.full(num, -1, dtype=np.int64)
    stack: list[np.ndarray] = []
    if rotations is None:
        return c, p, s, rot_index, np.empty((0, n, n))
    if isinstance(rotations, (str, bytes)) or not isinstance(rotations, (Sequence, np.ndarray)):
        raise ValueError(f"rotations must be a sequence with one entry (None or an ({n}, {n}) orthogonal "
                         f"matrix) per input, got {type(rotations).__name__}")
    if len(rotations) != num:
        raise ValueError(f"rotations must have one entry per input ({num}), got {len(rotations)}")
    for k, u in enumerate(rotations):
        if u is None:
            continue
        a = _check_rotation(u, n, k)
        if p[k] != ABSTAIN and not _is_axis_aligned(a, s[k]):
            rot_index[k] = len(stack)
            stack.append(a)
    return c, p, s, rot_index, (np.stack(stack) if stack else np.empty((0, n, n)))


# ------------------------------------------------------------------------------------------------
# the reference: Algorithm 1 one memory entry at a time
# ------------------------------------------------------------------------------------------------

# The pair tests below call geometry / regions with validate=False: `_check_inputs` checked every centre,
# scale and rotation once, and their per-call checks would cost as much as the tests (1.9x the reference).

def _pair_intersect(x, sx, ux, ci, si, ui) -> bool:
    """Intersect(new region, memory entry): D.2 for two axis-aligned regions, RANCER Eq. 5 otherwise."""
    if ux is None and ui is None:
        return bool(geometry.ellipsoids_intersect(x, sx, ci, si, validate=False))
    eye = np.eye(x.size)
    return bool(rotated.ellipsoids_intersect(x, eye if ux is None else ux, sx, ci, eye if ui is None else ui, si,
                                             assume_orthogonal=True))


def algorithm1_reference_rotated(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray,
                                 rotations: Sequence[np.ndarray | None] | np.ndarray | None,
                                 policy: str = SHRINK) -> list[Decision]:
    """ANCER Algorithm 1 with RANCER's Intersect / LargestOutSubset, exactly as printed: each input is
    compared with every earlier non-abstained region of another class, in memory order (the slow
    reference for `certify_stream_rotated`).

    centers, scales: (num, n); preds: (num,) integer labels, -1 = abstain; rotations: one entry per
    input, None (axis-aligned) or an (n, n) orthogonal U (region {x : ||U^T (x - c) / s||_2 <= 1});
    None for all axis-aligned. policy: memory.SHRINK or memory.WORST_CASE."""
    c, p, s, rot_index, stack = _check_inputs(centers, preds, scales, rotations, policy)
    mem: list[tuple[np.ndarray, int, np.ndarray, np.ndarray | None]] = []
    out: list[Decision] = []
    for j in range(c.shape[0]):
        x, pred, sc = c[j], int(p[j]), s[j]
        if pred == ABSTAIN:
            out.append(Decision(ABSTAIN, None, ABSTAIN_BASE))
            continue
        region, u_region = sc, (stack[rot_index[j]] if rot_index[j] >= 0 else None)
        status = KEPT
        for ci, pi, si, ui in mem:
            if pi == pred:
                continue
            inside = (region_norm(x - ci, si, L2, validate=False) <= 1.0 if ui is None
                      else bool(rotated.contains(x, ci, ui, si, assume_orthogonal=True)))
            if inside:
                status = ABSTAIN_INSIDE
                break
            if (geometry.max_intersect(x, geometry.outer_ball_radius(region, validate=False), ci,
                                       geometry.outer_ball_radius(si, validate=False), L2, validate=False)
                    and _pair_intersect(x, region, u_region, ci, si, ui)):
                if policy == WORST_CASE:
                    status = ABSTAIN_INTERSECT
                    break
                radius = (geometry.largest_out_subset(ci, si, x, region, L2, validate=False) if ui is None
                          else rotated.largest_out_subset(ci, ui, si, x, region, assume_orthogonal=True))
                region, u_region, status = np.full_like(sc, radius), None, SHRUNK  # a ball: no rotation
        if status in (ABSTAIN_INSIDE, ABSTAIN_INTERSECT):
            out.append(Decision(ABSTAIN, None, status))
        else:
            mem.append((x, pred, region, u_region))
            out.append(Decision(pred, region.copy(), status))
    return out


# ------------------------------------------------------------------------------------------------
# the fast path
# ------------------------------------------------------------------------------------------------

def _decide(x, sx, ux, c, s, stack, r_idx, policy) -> Decision | tuple[np.ndarray, str]:
    """Algorithm 1 for one input (region (x, sx, ux), ux None if axis-aligned) against the candidate
    memory entries of other classes, in memory order: centres c (m, n), semi-axes s (m, n), rotation
    stack[r_idx[j]] for entry j, or r_idx[j] = -1 for an axis-aligned entry (U = I stands in for it where
    a pair test needs a rotation). The axis-aligned entries are tested vectorized; the rotated ones one
    at a time on views of `stack` (each test is O(n^2) or more, and gathering their (n, n) rotations
    would copy more memory than the tests read). Returns (final semi-axes, status) or the abstaining
    status."""
    m, n = c.shape
    rotated_mask = r_idx >= 0
    rt = np.flatnonzero(rotated_mask)
    ax = np.flatnonzero(~rotated_mask)
    inside = np.zeros(m, dtype=bool)
    if ax.size:
        inside[ax] = region_norm(x - c[ax], s[ax], L2, validate=False) <= 1.0
    if rt.size:
        inside[rt] = [bool(rotated.contains(x, c[j], stack[r_idx[j]], s[j], assume_orthogonal=True)) for j in rt]
    if policy == SHRINK and inside.any():
        return ABSTAIN_INSIDE
    may = geometry.max_intersect(x, geometry.outer_ball_radius(sx, validate=False), c,
                                 geometry.outer_ball_radius(s, validate=False), L2, validate=False)
    meets = np.zeros(m, dtype=bool)
    eye = np.eye(n)
    i = np.flatnonzero(may & ~rotated_mask)
    if i.size:
        if ux is None:  # both axis-aligned: D.2
            meets[i] = geometry.ellipsoids_intersect(x, sx, c[i], s[i], validate=False)
        else:  # Eq. 5 with U = I for the axis-aligned entries
            meets[i] = rotated.ellipsoids_intersect(x, ux, sx, c[i], eye, s[i], assume_orthogonal=True)
    i = np.flatnonzero(may & rotated_mask)
    if i.size:
        uq = eye if ux is None else ux
        meets[i] = [bool(rotated.ellipsoids_intersect(x, uq, sx, c[j], stack[r_idx[j]], s[j], assume_orthogonal=True))
                    for j in i]
    hits = np.flatnonzero(meets)
    if policy == WORST_CASE:
        if not (hits.size or inside.any()):
            return sx, KEPT
        # Algorithm 1 stops at the first entry in memory order that contains x or meets the region
        first_inside = np.flatnonzero(inside)[0] if inside.any() else m
        first_hit = hits[0] if hits.size else m
        return ABSTAIN_INSIDE if first_inside <= first_hit else ABSTAIN_INTERSECT
    if hits.size == 0:
        return sx, KEPT
    # distances from x to each hit region (D.4 or Eq. 6), shrunk by the margin
    dist = np.empty(hits.size)
    h_rt = rotated_mask[hits]
    if (~h_rt).any():
        k = hits[~h_rt]
        dist[~h_rt] = geometry.distance_to_region(x, c[k], s[k], L2, validate=False)
    if h_rt.any():
        k = hits[h_rt]
        dist[h_rt] = [float(rotated.distance_to_ellipsoid(x, c[j], stack[r_idx[j]], s[j], assume_orthogonal=True))
                      for j in k]
    dist = dist * (1.0 - geometry.SHRINK_MARGIN)
    # shrink in memory order; once the region is a ball, re-test each later hit against the ball
    current = sx
    for k, i in enumerate(hits):
        if current is not sx:
            ball_meets = bool(geometry.max_intersect(x, current[0], c[i], geometry.outer_ball_radius(s[i], validate=False),
                                                     L2, validate=False))
            if ball_meets:
                ball_meets = (bool(geometry.ellipsoids_intersect(x, current, c[i], s[i], validate=False))
                              if not rotated_mask[i]
                              else bool(rotated.ellipsoids_intersect(x, eye, current, c[i], stack[r_idx[i]], s[i],
                                                                     assume_orthogonal=True)))
            if not ball_meets:
                continue
        current = np.full_like(sx, np.minimum(dist[k], geometry.inner_ball_radius(current, validate=False)))
    return current, SHRUNK


@timed(MEMORY)
def certify_stream_rotated(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray,
                           rotations: Sequence[np.ndarray | None] | np.ndarray | None,
                           policy: str = SHRINK) -> list[Decision]:
    """Algorithm 1 over inputs certified in the given order, with exactly the decisions of
    `algorithm1_reference_rotated` (same arguments): a blocked Gram matrix finds the earlier inputs whose
    outer l2 balls (radius max s, rotation invariant) may meet the new one's; the inside / Intersect /
    LargestOutSubset tests then run over those candidates (vectorized over the axis-aligned ones)."""
    c, p, s, rot_index, stack = _check_inputs(centers, preds, scales, rotations, policy)
    num, n = c.shape
    outer = np.where(p != ABSTAIN, s.max(axis=1), 0.0)  # input semi-axes bound the final ones
    with np.errstate(over="ignore"):
        sq = (c * c).sum(axis=1)
    final_scales = s.copy()
    final_rot = rot_index.copy()  # -1 once shrunk to a ball
    in_memory = np.zeros(num, dtype=bool)
    out: list[Decision] = []
    for start in range(0, num, _BLOCK):
        stop = min(num, start + _BLOCK)
        with np.errstate(over="ignore", invalid="ignore"):
            d2 = sq[start:stop, None] + sq[None, :stop] - 2.0 * (c[start:stop] @ c[:stop].T)
            reach = (outer[start:stop, None] + outer[None, :stop]) ** 2
            slack = 1e-9 * (sq[start:stop, None] + sq[None, :stop]) + 1e-12  # Gram identity rounding
            maybe = d2 <= reach + slack
        maybe |= ~(np.isfinite(d2) & np.isfinite(reach) & np.isfinite(slack))  # overflow: test exactly
        for j in range(start, stop):
            if p[j] == ABSTAIN:
                out.append(Decision(ABSTAIN, None, ABSTAIN_BASE))
                continue
            cand = np.flatnonzero(maybe[j - start, :j] & in_memory[:j] & (p[:j] != p[j]))
            ux = stack[rot_index[j]] if rot_index[j] >= 0 else None
            if cand.size == 0:
                res = (s[j], KEPT)
            else:
                res = _decide(c[j], s[j], ux, c[cand], final_scales[cand], stack, final_rot[cand], policy)
            if isinstance(res, str):
                out.append(Decision(ABSTAIN, None, res))
                continue
            region, status = res
            in_memory[j] = True
            final_scales[j] = region
            if status == SHRUNK:
                final_rot[j] = -1
            out.append(Decision(int(p[j]), region.copy(), status))
    return out
