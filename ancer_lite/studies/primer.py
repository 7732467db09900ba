"""The primer (notebook 00): randomized smoothing from scratch, on one 2D input a student can see.

The base classifiers are analytic toys (`toy_classifiers`). Around the input x = 0 of the first, the other class is
the half-plane x1 >= 0.5 (and everything beyond radius 1.5: the blog's "top" toy, `motivation_2d.blog_toys`). Its
line has a closed form that makes every step checkable: with Gaussian noise of scale σ and the half-plane alone,
p_A = Φ(0.5 / σ) exactly, so Cohen et al.'s radius σ Φ⁻¹(p_A) is exactly the distance 0.5 to the line, whatever σ.
The last, a corridor |x1| < 0.3 inside the same ring, is close to the other class in one direction only: where an
anisotropic region can be far larger than a ball (ANCER §3).

- `noisy_votes`: draws of x + σ ε and the base classifier's vote on each (the smoothed classifier, estimated).
- `certify_once`: CERTIFY's steps on x (Cohen et al. 2019, Algorithm "CERTIFY"): the class from N0 draws, its count
  among N fresh draws, the Clopper-Pearson lower bound on p_A, the gap Φ⁻¹(p_A) and the radius σ × gap.
- `bound_versus_n`: how the lower bound, and with it the radius, depends on N for one observed share.
- `radius_versus_sigma`: CERTIFY's radius at each σ, beside the exact radius of the half-plane alone and the
  largest radius N draws can give, σ Φ⁻¹(α^(1/N)) (all N votes for the class).
- `isotropic_and_anisotropic` / `regions_table`: Isotropic DD's ball and ANCER's ellipse at x
  (`motivation_2d.certify_point`), with their σ, gap, ℓ2 radius, proxy radius and area.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from scipy.stats import norm as normal

from ..core.certify import Smooth, lower_confidence_bound
from ..core.names import GAUSSIAN
from ..core.regions import CertifiedRegion
from ..core.streams import SELECT, certify_streams, stream
from ..core.validation import check_count, check_positive, check_probability
from ..models.small import ToyClassifier
from .motivation_2d import blog_toys, certify_point

#: the input, its class, and the distance from it to the other class's half-plane
X0 = (0.0, 0.0)
LABEL = 0
DISTANCE = 0.5
#: the noise scale of the first sections
SIGMA = 0.25
#: half the corridor's width (`toy_classifiers`' "corridor")
CORRIDOR = 0.3


def toy_classifiers() -> dict[str, ToyClassifier]:
    """The primer's base classifiers around x = 0.

    Returns
    -------
    dict of str to models.small.ToyClassifier
        "line": class 1 on the half-plane x1 >= 0.5 only (p_A has a closed form); "line and ring": the same and
        everything beyond radius 1.5 (`motivation_2d.blog_toys`' "top"), so that large noise reaches class 1 on
        every side; "corridor": class 1 where |x1| >= 0.3 and beyond radius 1.5.
    """
    return {"line": ToyClassifier(halfplanes=[((1.0, 0.0), DISTANCE)]), "line and ring": blog_toys()["top"],
            "corridor": ToyClassifier(halfplanes=[((1.0, 0.0), CORRIDOR), ((-1.0, 0.0), CORRIDOR)],
                                      exteriors=[((0.0, 0.0), 1.5)])}


def _smooth(model: torch.nn.Module, seed: int) -> Smooth:
    return Smooth(model, 2, (2,), GAUSSIAN, seed=seed, domain=None)  # 2-D points, not images


def noisy_votes(model: torch.nn.Module, x: tuple[float, float], sigma: float, n: int,
                seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Draws of x + σ ε (ε standard normal) and the base classifier's class for each: what the smoothed classifier
    counts (Cohen et al. 2019, Eq. 1).

    Parameters
    ----------
    model : torch.nn.Module
        A 2D base classifier, (B, 2) points to logits (B, 2).
    x : tuple of float
        The input, 2 coordinates.
    sigma : float
        The noise's standard deviation, > 0.
    n : int
        The draws, >= 1.
    seed : int
        Seeds the draws (CERTIFY's selection stream of input 0).

    Returns
    -------
    points : numpy.ndarray, shape (n, 2)
        The noisy copies of x.
    votes : numpy.ndarray, shape (n,)
        The base classifier's class for each.
    """
    sigma = check_positive(sigma, "sigma")
    n = check_count(n, "n")
    eps = torch.randn(n, 2, generator=stream(seed, 0, SELECT))
    points = torch.tensor(x, dtype=torch.float32) + sigma * eps
    with torch.no_grad():
        votes = model(points).argmax(1)
    return points.numpy(), votes.numpy()


def certify_once(model: torch.nn.Module, x: tuple[float, float], sigma: float, n0: int, n: int, alpha: float,
                 seed: int = 0) -> pd.DataFrame:
    """CERTIFY's steps on one input (Cohen et al. 2019): guess the class from n0 draws, count it among n fresh draws,
    bound p_A from below (Clopper-Pearson, level 1 - alpha), then the gap Φ⁻¹(p_A) and the ℓ2 radius σ × gap.

    Parameters
    ----------
    model : torch.nn.Module
        A 2D base classifier.
    x : tuple of float
        The input.
    sigma : float
        The noise's standard deviation, > 0.
    n0, n : int
        The selection and estimation draws, >= 1.
    alpha : float
        The bound's error probability, in (0, 1).
    seed : int
        The certification seed (the input's CERTIFY streams).

    Returns
    -------
    pandas.DataFrame
        One row per step: step, value, shown (the value as a reader reads it: counts whole, the rest to 4 decimals)
        and what the value is.
    """
    check_probability(alpha, "alpha")
    cert = _smooth(model, seed).certify(torch.tensor(x), sigma, n0, n, alpha, generator=certify_streams(seed, 0))
    rows = [("class c_A", cert.prediction, f"the most frequent class among N0 = {n0:,} noisy copies"),
            ("count k", cert.count, f"votes for c_A among N = {n:,} fresh noisy copies"),
            ("share k / N", cert.count / n, "the estimate of p_A, the smoothed classifier's probability of c_A"),
            ("p_A lower bound", cert.p_lower, f"Clopper-Pearson: p_A is at least this with probability {1 - alpha}"),
            ("gap Φ⁻¹(p_A)", cert.gap, "the bound on the standard normal's scale (Cohen et al.'s Theorem 1)"),
            ("radius σ·gap", cert.radius, f"no perturbation of ℓ2 norm below it changes g's class (σ = {sigma})")]
    shown = [f"{v:,}" if isinstance(v, int) else f"{v:.4f}" for _, v, _ in rows]  # before pandas makes them floats
    table = pd.DataFrame(rows, columns=["step", "value", "meaning"])
    table.insert(2, "shown", shown)
    return table


def bound_versus_n(share: float, ns: list[int], alpha: float, sigma: float) -> pd.DataFrame:
    """The Clopper-Pearson lower bound on p_A, and the radius it gives, for the same observed share k / N at several N.

    Parameters
    ----------
    share : float
        The observed share of votes for the class, in (0, 1].
    ns : list of int
        The numbers of draws N, each >= 1.
    alpha : float
        The bound's error probability, in (0, 1).
    sigma : float
        The noise's standard deviation, > 0.

    Returns
    -------
    pandas.DataFrame
        Columns N, k, p_A lower bound, radius (0 where the bound is at most 1/2: CERTIFY abstains).
    """
    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must be in (0, 1], got {share!r}")
    rows = []
    for n in ns:
        k = int(round(share * check_count(n, "N")))
        p = float(lower_confidence_bound(k, n, alpha))
        rows.append({"N": n, "k": k, "p_A lower bound": p, "radius": sigma * normal.ppf(p) if p > 0.5 else 0.0})
    return pd.DataFrame(rows)


def radius_versus_sigma(models: dict[str, torch.nn.Module], sigmas: list[float], n0: int, n: int, alpha: float,
                        seed: int = 0) -> pd.DataFrame:
    """CERTIFY's ℓ2 radius at x = `X0` for each σ and base classifier, beside the half-plane's exact radius and the
    most that N draws can certify.

    With the half-plane alone p_A = Φ(d / σ), so σ Φ⁻¹(p_A) = d (`DISTANCE`) for every σ. N draws all voting for the
    class give the bound α^(1/N) and so at most σ Φ⁻¹(α^(1/N)): small σ is limited by N, not by the classifier.

    Parameters
    ----------
    models : dict of str to torch.nn.Module
        Named 2D base classifiers (`toy_classifiers`).
    sigmas : list of float
        The noise levels, each > 0.
    n0, n : int
        CERTIFY's selection and estimation draws.
    alpha : float
        The bound's error probability.
    seed : int
        The certification seed.

    Returns
    -------
    pandas.DataFrame
        Columns sigma, classifier, radius (CERTIFY's; 0 when it abstains), exact p_A (the half-plane alone), exact
        radius and N's limit.
    """
    rows = []
    x = torch.tensor(X0)
    limit_gap = normal.ppf(float(lower_confidence_bound(n, n, alpha)))
    for name, model in models.items():
        smooth = _smooth(model, seed)
        for s in sigmas:
            s = check_positive(s, "sigma")
            cert = smooth.certify(x, s, n0, n, alpha, generator=certify_streams(seed, 0))
            rows.append({"sigma": s, "classifier": name, "radius": max(cert.radius, 0.0),
                         "line alone: exact p_A": float(normal.cdf(DISTANCE / s)), "line alone: exact radius": DISTANCE,
                         "N's limit": s * limit_gap})
    return pd.DataFrame(rows)


def isotropic_and_anisotropic(model: torch.nn.Module, n0: int, n: int, alpha: float,
                              seed: int = 0) -> dict[str, CertifiedRegion]:
    """Isotropic DD's ℓ2 ball and ANCER's ellipse at x = `X0` (`motivation_2d.certify_point`, Gaussian noise).

    Parameters
    ----------
    model : torch.nn.Module
        A 2D base classifier.
    n0, n : int
        CERTIFY's selection and estimation draws.
    alpha : float
        The bound's error probability.
    seed : int
        The optimization and certification seed.

    Returns
    -------
    dict of str to regions.CertifiedRegion
        {"isotropic": ball, "ancer": ellipse}.
    """
    return certify_point(model, torch.tensor(X0), GAUSSIAN, n0, n, alpha, seed)


def regions_table(regions: dict[str, CertifiedRegion]) -> pd.DataFrame:
    """Each region's σ per axis, gap, ℓ2 radius (the largest ball inside: min σ × gap), proxy radius (gap × the
    geometric mean of σ, ANCER §5) and area (π × the product of the semi-axes).

    Parameters
    ----------
    regions : dict of str to regions.CertifiedRegion
        `isotropic_and_anisotropic`.

    Returns
    -------
    pandas.DataFrame
        One row per method.
    """
    rows = []
    for method, r in regions.items():
        scales = np.asarray(r.scales, dtype=np.float64)
        rows.append({"method": method, "σ1": scales[0], "σ2": scales[1], "gap": r.gap, "ℓ2 radius": r.radius,
                     "proxy radius": r.radius_proxy, "area": float(np.pi * np.prod(r.semi_axes))})
    return pd.DataFrame(rows)
