"""RANCER's entry points to memory-based certification (ANCER Algorithm 1, App. D, as adapted by RANCER §3
"Memory-Based Certification", Eq. 5-6) for l2 memories mixing axis-aligned and rotated ellipsoids.

A region is (centre c, rotation U, semi-axes s): {x : ||diag(1/s) U^T (x - c)||_2 <= 1}, with U = None for
an axis-aligned ellipsoid. There is one Algorithm 1 for every region kind, in `memory` (`memory.algorithm1_reference`,
the literal loop, and `memory.certify_stream`, the fast path, with the per-kind pair tests and the Gram-matrix
pre-filter); the functions here are those with norm = "l2". A memory without genuine rotations gets exactly
`memory.certify_stream(..., "l2")`'s decisions. Both return `memory.Decision`s, views of the final
`regions.CertifiedRegion`s: a kept region is its input ellipsoid (semi-axes along U's columns, with U), a shrunk one
the ball of its radius. Both are entry points: their arguments
are checked once, as `memory`'s (rotations by `parameters.check_rotation`, within `parameters.ORTHOGONALITY_TOL`,
with the margins widened by the measured deviation as `memory.DEVIATION_ABSORBED` states).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import memory
from .memory import SHRINK, Decision, Provenance
from .regions import L2
from .stages import MEMORY, timed

__all__ = ["algorithm1_reference_rotated", "certify_stream_rotated"]


def algorithm1_reference_rotated(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray,
                                 rotations: Sequence[np.ndarray | None] | np.ndarray | None,
                                 policy: str = SHRINK, *,
                                 provenance: Provenance | Sequence[Provenance] | None = None) -> list[Decision]:
    """ANCER Algorithm 1 with RANCER's Intersect / LargestOutSubset (Eq. 5-6), exactly as printed: each input is
    compared with every earlier non-abstained region of another class, in memory order (the slow reference for
    `certify_stream_rotated`; `memory.algorithm1_reference` with norm "l2").

    Parameters
    ----------
    centers : numpy.ndarray, shape (num, n)
        The inputs, finite.
    preds : numpy.ndarray of int, shape (num,)
        Their predictions, class indices >= 0 or -1 (abstain).
    scales : numpy.ndarray, shape (num, n)
        Their regions' semi-axes (along U's columns), finite, > 0 unless abstaining.
    rotations : sequence of (numpy.ndarray of shape (n, n) or None), or None
        One entry per input: None (axis-aligned) or U, orthogonal within `parameters.ORTHOGONALITY_TOL` (the region
        {x : ||diag(1/s) U^T (x - c)||_2 <= 1}); None: every region axis-aligned.
    policy : str
        memory.SHRINK or memory.WORST_CASE.
    provenance : Provenance or sequence of Provenance, optional
        As in `memory.certify_stream`.

    Returns
    -------
    list of memory.Decision
        One per input, in order.
    """
    return memory.algorithm1_reference(centers, preds, scales, L2, policy, rotations=rotations, provenance=provenance)


@timed(MEMORY)
def certify_stream_rotated(centers: np.ndarray, preds: np.ndarray, scales: np.ndarray,
                           rotations: Sequence[np.ndarray | None] | np.ndarray | None,
                           policy: str = SHRINK, *,
                           provenance: Provenance | Sequence[Provenance] | None = None) -> list[Decision]:
    """ANCER Algorithm 1 with RANCER's Eq. 5-6 over inputs certified in the given order, with exactly the
    decisions of `algorithm1_reference_rotated` (same arguments): `memory.certify_stream` with norm "l2" (Gram
    pre-filter on the outer l2 balls, then the pair tests over the candidates).

    Parameters
    ----------
    centers : numpy.ndarray, shape (num, n)
        The inputs, finite.
    preds : numpy.ndarray of int, shape (num,)
        Their predictions, class indices >= 0 or -1 (abstain).
    scales : numpy.ndarray, shape (num, n)
        Their regions' semi-axes (along U's columns), finite, > 0 unless abstaining.
    rotations : sequence of (numpy.ndarray of shape (n, n) or None), or None
        One entry per input: None (axis-aligned) or U, orthogonal within `parameters.ORTHOGONALITY_TOL` (the region
        {x : ||diag(1/s) U^T (x - c)||_2 <= 1}); None: every region axis-aligned.
    policy : str
        memory.SHRINK or memory.WORST_CASE.
    provenance : Provenance or sequence of Provenance, optional
        As in `memory.certify_stream`.

    Returns
    -------
    list of memory.Decision
        One per input, in order.
    """
    return memory.certify_stream(centers, preds, scales, L2, policy, rotations=rotations, provenance=provenance)
