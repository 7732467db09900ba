"""ancer_lite: the math behind the ANCER companion notebooks (anisotropic randomized smoothing).

Modules: noise (smoothing families), certify (Monte Carlo PREDICT/CERTIFY), regions (certified
regions, radii and volumes), geometry (App. D intersection tests and projections), memory
(Algorithm 1), optimize (Isotropic DD and ANCER), metrics, logs, models, paper (the papers' tables).
"""
from .certify import ABSTAIN, Certificate, Smooth, certificate_from_bound, lower_confidence_bound
from .noise import GAUSSIAN, UNIFORM, sample_noise, uniform_lambda

__all__ = ["ABSTAIN", "Certificate", "Smooth", "certificate_from_bound", "lower_confidence_bound",
           "GAUSSIAN", "UNIFORM", "sample_noise", "uniform_lambda"]
__version__ = "0.1.0"
