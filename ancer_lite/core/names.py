"""The companion's vocabulary, each word defined once: the abstention label, the norms and the names of ANCER's two
noise families (Gaussian for ℓ2, uniform for ℓ1; App. E). UCAN's further families and norms (Table 1) are named in
`families`; the display names of methods are in `report.style`.

`NORM_OF` (ANCER's family -> the norm it certifies) and `NOISE_OF` (ANCER's norm -> the family it is certified with)
are derived from the registered families (`families.NORM_OF`, `families.NOISE_OF`) and read from there on first
use, since `families` itself is built on the words below."""
from __future__ import annotations

#: the label of an abstention (CERTIFY, PREDICT and Algorithm 1)
ABSTAIN = -1

L1, L2, LINF = "l1", "l2", "linf"
#: the norms ANCER's certificates are stated in (ellipsoids for ℓ2, generalized cross-polytopes for ℓ1)
NORMS = (L1, L2)

GAUSSIAN, UNIFORM = "gaussian", "uniform"

_DERIVED = ("NORM_OF", "NOISE_OF")


def __getattr__(name: str) -> object:
    """`NORM_OF` and `NOISE_OF`: the live maps of the registered families (`families`)."""
    if name in _DERIVED:
        from . import families
        return getattr(families, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
