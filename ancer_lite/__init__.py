"""ancer_lite: the math behind the ANCER companion notebooks (anisotropic randomized smoothing).

Eight layers, bottom to top, each importing only those below it (`tests/test_layering.py`): `core` (noise,
the smoothed classifier's PREDICT and CERTIFY, certified regions, App. D geometry, Algorithm 1), `models`,
`methods` (Isotropic DD, ANCER, RANCER, UCAN), `evaluation`, `runs`, `report`, `studies` (one per notebook)
and `tooling`; `proof_checks` holds notebook 01's checks. The names below are the public API of `core`.
"""
from .core.certify import ABSTAIN, Certificate, Smooth, certificate_from_bound, lower_confidence_bound
from .core.noise import GAUSSIAN, UNIFORM, sample_noise, uniform_lambda

__all__ = ["ABSTAIN", "Certificate", "Smooth", "certificate_from_bound", "lower_confidence_bound",
           "GAUSSIAN", "UNIFORM", "sample_noise", "uniform_lambda"]
__version__ = "0.1.0"
