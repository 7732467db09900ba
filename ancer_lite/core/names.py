"""The companion's vocabulary, each word defined once: the abstention label, the norms, the noise families of
ANCER (Gaussian for ℓ2, uniform for ℓ1; App. E) and the map between them. UCAN's further families and norms
(Table 1) are in `ucan_radii`; the display names of methods are in `report.style`."""
from __future__ import annotations

#: the label of an abstention (CERTIFY, PREDICT and Algorithm 1)
ABSTAIN = -1

L1, L2, LINF = "l1", "l2", "linf"
#: the norms ANCER's certificates are stated in (ellipsoids for ℓ2, generalized cross-polytopes for ℓ1)
NORMS = (L1, L2)

GAUSSIAN, UNIFORM = "gaussian", "uniform"
#: the norm each of ANCER's noise families certifies, and the family each norm is certified with
NORM_OF = {GAUSSIAN: L2, UNIFORM: L1}
NOISE_OF = {L1: UNIFORM, L2: GAUSSIAN}
