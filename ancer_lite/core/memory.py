"""Memory-based certification of data-dependent smoothed classifiers (ANCER Algorithm 1, App. D).

Each certified input arrives with its prediction and region (centre x, semi-axes s; ellipsoid for l2,
generalized cross-polytope for l1). Algorithm 1 compares it with every earlier region in memory that
predicts another class:
  - if x lies in such a region: ABSTAIN;
  - else if MaxIntersect and Intersect say the regions may meet: shrink the new region to
    LargestOutSubset, an l_p ball around x that misses the other region.
The "abstain" policy is the paper's worst-case reporting (§6): abstain whenever the new region meets,
or its centre lies in, a region of another class. Abstained inputs are not added to the memory.

`certify_stream` is the fast path (blocked Gram-matrix pre-filter, then Algorithm 1 on the few
candidates, vectorized over them); `algorithm1_reference` is the plain loop it must agree with.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import geometry
from .names import ABSTAIN
from .regions import check_norm, region_norm
from .stages import MEMORY, timed
from .validation import check_class_index, check_count

SHRINK, WORST_CASE = "shrink", "abstain"
POLICIES = (SHRINK, WORST_CASE)
# statuses of a decision
KEPT, SHRUNK, ABSTAIN_BASE, ABSTAIN_INSIDE, ABSTAIN_INTERSECT = "kept", "shrunk", "abstain_base", "abstain_inside", "abstain_intersect"


@dataclass(frozen=True)
class Decision:
    """Algorithm 1's output for one input: final prediction, final semi-axes and what happened."""
    prediction: int
    scales: np.ndarray | None
    status: str

    @property
    def radius(self) -> float:
        """Enclosed l_p ball radius of the final region (0 when abstaining)."""
        return 0.0 if self.scales is None else float(self.scales.min())

    @property
    def radius_proxy(self) -> float:
        """Geometric mean of the final semi-axes, i.e. ANCER's proxy radius (0 when abstaining)."""
        return 0.0 if self.scales is None else float(np.exp(np.log(self.scales).mean()))


def _check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {list(POLICIES)}, got {policy!r}")
    return policy


def decide(x: np.ndarray, pred: int, scales: np.ndarray, mem_centers: np.ndarray, mem_preds: np.ndarray,
           mem_scales: np.ndarray, norm: str, policy: str = SHRINK, *, validate: bool = True) -> Decision:
    """Algorithm 1 for one input against memory entries given in memory order (all entries, or any
    subset that contains every entry whose region may meet the new one). Vectorized over the entries.

    x: a finite vector of d >= 1 entries; pred: a class index >= 0 or ABSTAIN (-1); scales: d finite semi-axes,
    > 0 unless pred is ABSTAIN; mem_centers, mem_scales: finite (m, d) arrays, mem_scales > 0 where the entry's
    label is not ABSTAIN; mem_preds: m integer labels >= -1; norm in NORMS; policy in POLICIES. validate=False
    skips these checks (O(m d), a few passes over the memory) for inputs already checked, as `certify_stream`
    and `CertificationMemory` do per input."""
    if validate:  # checks only: the arrays below are used as given, so valid inputs give the same numbers
        _check_decide(x, pred, scales, mem_centers, mem_preds, mem_scales, norm, policy)
    if pred == ABSTAIN:
        return Decision(ABSTAIN, None, ABSTAIN_BASE)
    x = np.asarray(x, np.float64)
    scales = np.asarray(scales, np.float64)
    other = np.flatnonzero(np.asarray(mem_preds) != pred)
    if other.size == 0:
        return Decision(pred, scales, KEPT)
    c, s = mem_centers[other], mem_scales[other]
    inside = region_norm(x - c, s, norm, validate=False) <= 1.0  # x in R_i
    if policy == SHRINK and inside.any():
        return Decision(ABSTAIN, None, ABSTAIN_INSIDE)
    # geometry's own checks are skipped (validate=False): the inputs were checked once, by `_check_decide`
    # or by the caller that passes validate=False here
    may = geometry.max_intersect(x, geometry.outer_ball_radius(scales, validate=False), c,
                                 geometry.outer_ball_radius(s, validate=False), norm, validate=False)
    hits = np.flatnonzero(may)
    if hits.size:
        hits = hits[geometry.intersect(x, scales, c[hits], s[hits], norm, validate=False)]
    if policy == WORST_CASE and (hits.size or inside.any()):
        # Algorithm 1 stops at the FIRST entry (memory order) that contains x or meets the region, so
        # the status must name that entry's reason; testing "inside" on all entries first reported
        # abstain_inside where the reference loop reports abstain_intersect (fixed; see
        # tests/test_memory.py::test_abstain_status_names_first_reason).
        first_inside = np.flatnonzero(inside)[0] if inside.any() else len(inside)
        first_hit = hits[0] if hits.size else len(inside)
        return Decision(ABSTAIN, None, ABSTAIN_INSIDE if first_inside <= first_hit else ABSTAIN_INTERSECT)
    if hits.size == 0:
        return Decision(pred, scales, KEPT)
    # shrink in memory order; once the region is a ball, re-test each later hit against the ball
    dist = geometry.distance_to_region(x, c[hits], s[hits], norm, validate=False) * (1.0 - geometry.SHRINK_MARGIN)
    current = scales
    for k, i in enumerate(hits):
        if current is not scales:
            ball_meets = (geometry.max_intersect(x, current[0], c[i], geometry.outer_ball_radius(s[i], validate=False),
                                                 norm, validate=False)
                          and geometry.intersect(x, current, c[i], s[i], norm, validate=False))
            if not ball_meets:
                continue
        radius = min(dist[k], geometry.inner_ball_radius(current, validate=False))
        current = np.full_like(scales, radius)
    return Decision(pred, current, SHRUNK)


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
    """The memory M of Algorithm 1, growing as inputs are certified one at a time."""

    def __init__(self, dim: int, norm: str, policy: str = SHRINK) -> None:
        check_count(dim, "dim")  # a bool dim (True = 1) used to be accepted
        self.dim, self.norm, self.policy = int(dim), check_norm(norm), _check_policy(policy)
        self._centers = np.empty((0, self.dim))
        self._scales = np.empty((0, self.dim))
        self._preds = np.empty(0, dtype=np.int64)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def _append(self, x: np.ndarray, pred: int, scales: np.ndarray) -> None:
        if self._size == len(self._preds):  # amortized growth
            cap = max(16, 2 * self._size)
            self._centers = np.resize(self._centers, (cap, self.dim))
            self._scales = np.resize(self._scales, (cap, self.dim))
            self._preds = np.resize(self._preds, cap)
        self._centers[self._size], self._scales[self._size], self._preds[self._size] = x, scales, pred
        self._size += 1

    def certify(self, x: np.ndarray, pred: int, scales: np.ndarray) -> Decision:
        """Algorithm 1 for a new input: decide, and add it to the memory unless it abstains."""
        x = _row(x, self.dim, "x")
        scales = _row(scales, self.dim, "scales")
        check_class_index(pred, "pred", abstain=True)
        if pred != ABSTAIN and not (scales > 0).all():
            raise ValueError("scales must be > 0 in every dimension for a non-abstaining prediction")
        n = self._size
        d = decide(x, int(pred), scales, self._centers[:n], self._preds[:n], self._scales[:n],
                   self.norm, self.policy, validate=False)
        if d.prediction != ABSTAIN:
            self._append(x, d.prediction, d.scales)
        return d


def _row(v: np.ndarray, dim: int, name: str) -> np.ndarray:
    try:
        a = np.asarray(v, np.float64).reshape(-1)
    except (TypeError, ValueError):  # 'abc' used to fail with numpy's "could not convert string to float"
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
    # a non-integer label (1.5, NaN) used to be truncated silently by astype
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
    if (p < ABSTAIN).any():  # pred = -5 used to be kept as a class of its own
        raise ValueError(f"{pn} must be class indices >= 0 or ABSTAIN ({ABSTAIN}), got {int(p.min())}")
    if not np.isfinite(c).all():
        raise ValueError(f"{cn} must be finite (found NaN or Inf)")
    if not np.isfinite(s).all():
        raise ValueError(f"{sn} must be finite (found NaN or Inf)")
    positive = s > 0  # index by the labels only where some semi-axis is <= 0 (no copy of s otherwise)
    if not positive.all() and not positive[p != ABSTAIN].all():
        raise ValueError(f"{sn} must be > 0 for every non-abstaining prediction")
    return c, p, s


def algorithm1_reference(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray, norm: str,
                         policy: str = SHRINK) -> list[Decision]:
    """Algorithm 1 exactly as printed, one memory entry at a time (the slow reference)."""
    c, p, s = _check_batch(centers, preds, scales)
    check_norm(norm), _check_policy(policy)
    memory: list[tuple[np.ndarray, int, np.ndarray]] = []
    out = []
    for x, pred, sc in zip(c, p, s):
        if pred == ABSTAIN:
            out.append(Decision(ABSTAIN, None, ABSTAIN_BASE))
            continue
        region, status = sc, KEPT
        for ci, pi, si in memory:
            if pi == pred:
                continue
            if region_norm(x - ci, si, norm, validate=False) <= 1.0:
                status = ABSTAIN_INSIDE
                break
            # inputs checked once by _check_batch above: geometry's per-call checks are skipped
            if (geometry.max_intersect(x, geometry.outer_ball_radius(region, validate=False), ci,
                                       geometry.outer_ball_radius(si, validate=False), norm, validate=False)
                    and geometry.intersect(x, region, ci, si, norm, validate=False)):
                if policy == WORST_CASE:
                    status = ABSTAIN_INTERSECT
                    break
                radius = geometry.largest_out_subset(ci, si, x, region, norm, validate=False)
                region, status = np.full_like(sc, radius), SHRUNK
        if status in (ABSTAIN_INSIDE, ABSTAIN_INTERSECT):
            out.append(Decision(ABSTAIN, None, status))
        else:
            memory.append((x, int(pred), region))
            out.append(Decision(int(pred), region, status))
    return out


@timed(MEMORY)
def certify_stream(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray, norm: str,
                   policy: str = SHRINK, block: int = 1024) -> list[Decision]:
    """Algorithm 1 over inputs certified in the given order, with the same decisions as
    `algorithm1_reference` but fast: a blocked Gram matrix finds the pairs whose outer l2 balls meet
    (a sound pre-filter for both norms since ||v||_1 >= ||v||_2), and `decide` runs on those only."""
    c, p, s = _check_batch(centers, preds, scales)
    check_norm(norm), _check_policy(policy)
    # block <= 0 used to fail obscurely (range() step 0) or silently return [] (negative step)
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"block must be a positive int, got {block!r}")
    num = c.shape[0]
    outer = np.where(p != ABSTAIN, s.max(axis=1), 0.0)
    with np.errstate(over="ignore"):
        sq = (c * c).sum(axis=1)  # may overflow to inf: handled below
    # final regions as decided so far; abstained inputs are never in memory
    final_scales = s.copy()
    in_memory = np.zeros(num, dtype=bool)
    out: list[Decision] = []
    for start in range(0, num, block):
        stop = min(num, start + block)
        with np.errstate(over="ignore", invalid="ignore"):
            gram = c[start:stop] @ c[:stop].T
            d2 = sq[start:stop, None] + sq[None, :stop] - 2.0 * gram
            reach = (outer[start:stop, None] + outer[None, :stop]) ** 2
            slack = 1e-9 * (sq[start:stop, None] + sq[None, :stop]) + 1e-12
            maybe = d2 <= reach + slack
        # Huge coordinates overflow the Gram identity (inf - inf = NaN, so the pair looked far apart and
        # an overlapping region was kept): such pairs go to the exact tests of `decide` instead.
        maybe |= ~(np.isfinite(d2) & np.isfinite(reach) & np.isfinite(slack))
        for j in range(start, stop):
            cand = np.flatnonzero(maybe[j - start, :j] & in_memory[:j] & (p[:j] != p[j]))
            d = decide(c[j], int(p[j]), s[j], c[cand], p[cand], final_scales[cand], norm, policy,
                       validate=False)  # all checked once by _check_batch above
            out.append(d)
            if d.prediction != ABSTAIN:
                in_memory[j] = True
                final_scales[j] = d.scales
    return out
