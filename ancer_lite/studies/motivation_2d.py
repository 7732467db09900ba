"""ANCER §3, Figure 1 (a-d) and the blog's conceptual Figure 2 in 2D (notebook 02): why anisotropic certificates.

- `figure1_points`: the two test inputs of Figure 1, chosen by rule (the class-0 point closest to the origin, the
  class-1 point closest to the middle of the ring at (0, 1.5)).
- `certify_point` / `certify_figure1`: at each input, Isotropic DD and ANCER with uniform noise (ℓ1 ball vs generalized
  cross-polytope, ANCER Corollary 2) and Gaussian noise (ℓ2 ball vs ellipse, Corollary 1), optimized and
  certified by `rancer_2d.certify_methods`; `certificates_table` and `area_ratios` report them.
- `blog_toys` and `optimal_regions`: the blog's Figure 2, two analytic base classifiers and the *optimal* (largest)
  ℓ2 ball and axis-aligned ellipse inside each one's safe set, by brute force (`safe_regions`);
  `base_classifier_violations` / `optimal_verification_table` check them against the base classifier itself.
- `verification_table`: every smoothed certificate re-checked on a grid filling it (`rancer_2d.region_verification`).
- `memory_decisions`: the Figure 1 inputs certified in test-set order through ANCER's Algorithm 1.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from ..core.memory import algorithm1
from ..core.names import L2, NOISE_OF
from ..core.regions import CertifiedRegion
from ..evaluation.safe_regions import largest_ball, largest_ellipse
from ..evaluation.verify import region_fill_2d
from ..methods.registry import ANCER, ISOTROPIC, AncerSettings, IsotropicSettings
from ..models.small import ToyClassifier
from .rancer_2d import certify_methods, region_verification

#: the two methods of Figure 1; each norm's certificate shape: ℓ1 ↔ uniform noise (Cor. 2), ℓ2 ↔ Gaussian (Cor. 1)
METHODS = (ISOTROPIC, ANCER)
#: Optimization settings, fixed before looking at any certificate (in 2D we can afford more than the paper's 100
#: iterations x 100 samples): Isotropic DD from θ = THETA0, 200 gradient-ascent steps of size 0.02 on θ·gap with 512
#: noise samples per step; ANCER 200 Adam steps (lr 0.01, κ = 2, 512 samples) from the isotropic solution, keeping
#: θ_i >= θ_iso. For uniform noise θ is the half-width λ of U[-λ, λ].
THETA0 = 0.05
ISO_SETTINGS = IsotropicSettings(iterations=200, lr=0.02, samples=512)
ANCER_SETTINGS = AncerSettings(iterations=200, lr=0.01, samples=512, kappa=2.0)
#: where Figure 1's ring input is sought: the middle of the class-1 ring on the y-axis, where the ring's tangent is
#: the x-axis (so that an axis-aligned ellipse can follow it)
RING_TARGET = (0.0, 1.5)
#: the blog's Figure 2: the input x = 0, the window and grid on which the optimal regions are computed
BLOG_CENTER = (0.0, 0.0)
BLOG_HALF_WIDTH = 1.6
BLOG_RESOLUTION = 641


def figure1_points(x_test: torch.Tensor, y_test: torch.Tensor) -> dict[str, tuple[torch.Tensor, int, int]]:
    """ANCER Figure 1's two test inputs, chosen by rule, never by their certificates.

    "centre" is the class-0 test point closest to the origin, "ring" the class-1 test point closest to
    `RING_TARGET`.

    Parameters
    ----------
    x_test : torch.Tensor, shape (m, 2)
        The test points.
    y_test : torch.Tensor, shape (m,)
        Their labels; both class 0 and class 1 must occur.

    Returns
    -------
    dict of str to (torch.Tensor, int, int)
        {name: (x of shape (2,), label, index in the test set)} for "centre" and "ring".
    """
    x_test = torch.as_tensor(x_test)
    y_test = torch.as_tensor(y_test)
    if x_test.ndim != 2 or x_test.shape[1] != 2 or len(y_test) != len(x_test):
        raise ValueError(f"x_test must be (m, 2) with one label each, got {tuple(x_test.shape)} and {len(y_test)} labels")
    if not ((y_test == 0).any() and (y_test == 1).any()):
        raise ValueError("the test set needs points of both class 0 and class 1")
    inf = torch.tensor(math.inf)
    i_centre = int(torch.argmin(torch.where(y_test == 0, x_test.norm(dim=1), inf)))
    i_ring = int(torch.argmin(torch.where(y_test == 1, (x_test - torch.tensor(RING_TARGET)).norm(dim=1), inf)))
    return {name: (x_test[i], int(y_test[i]), i) for name, i in (("centre", i_centre), ("ring", i_ring))}


def certify_point(model: torch.nn.Module, x: torch.Tensor, noise: str, n0: int, n: int, alpha: float,
                  seed: int = 0) -> dict[str, CertifiedRegion]:
    """Isotropic DD and ANCER at one 2D input (ANCER Figure 1): `rancer_2d.certify_methods`.

    Both are optimized with `ISO_SETTINGS` / `ANCER_SETTINGS` from θ = `THETA0` and certified with CERTIFY.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier of 2D inputs.
    x : torch.Tensor, shape (2,)
        The input.
    noise : str
        "gaussian" (ℓ2 ball vs ellipse, Corollary 1) or "uniform" (ℓ1 ball vs generalized cross-polytope,
        Corollary 2).
    n0, n : int
        CERTIFY's selection and estimation samples.
    alpha : float
        The Clopper-Pearson level.
    seed : int, default 0
        The optimization and certification seed.

    Returns
    -------
    dict of str to regions.CertifiedRegion
        {"isotropic": region, "ancer": region}.
    """
    return certify_methods(model, x, METHODS, noise, THETA0, ISO_SETTINGS, ANCER_SETTINGS, n0=n0, n=n, alpha=alpha,
                           seed=seed)


def certify_figure1(model: torch.nn.Module, points: dict[str, tuple[torch.Tensor, int, int]], n0: int, n: int,
                    alpha: float, seed: int = 0) -> dict[tuple[str, str], dict[str, CertifiedRegion]]:
    """ANCER Figure 1: `certify_point` at each input of `points` for each norm of `names.NOISE_OF`.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier of 2D inputs.
    points : dict of str to (torch.Tensor, int, int)
        `figure1_points`: name -> (x of shape (2,), label, index in the test set).
    n0, n : int
        CERTIFY's selection and estimation samples.
    alpha : float
        The Clopper-Pearson level.
    seed : int, default 0
        The optimization and certification seed.

    Returns
    -------
    dict of (str, str) to dict of str to regions.CertifiedRegion
        {(point name, norm): {"isotropic": region, "ancer": region}}.
    """
    return {(name, norm): certify_point(model, x, noise, n0, n, alpha, seed)
            for name, (x, _, _) in points.items() for norm, noise in NOISE_OF.items()}


def certificates_table(results: dict[tuple[str, str], dict[str, CertifiedRegion]]) -> pd.DataFrame:
    """One row per certificate of `certify_figure1` (ANCER Figure 1).

    Parameters
    ----------
    results : dict of (str, str) to dict of str to regions.CertifiedRegion
        `certify_figure1`'s certificates: (point name, norm) -> {"isotropic": region, "ancer": region}.

    Returns
    -------
    pandas.DataFrame
        Columns point, norm, method, prediction, theta_1, theta_2 (θ), gap, radius (the ℓp radius of the largest
        ball inside the region), radius_proxy (ANCER's proxy radius) and log_area (the log of the region's area).
    """
    rows = []
    for (name, norm), regions in results.items():
        for method, r in regions.items():
            rows.append(dict(point=name, norm=norm, method=method, prediction=r.prediction, theta_1=r.scales[0],
                             theta_2=r.scales[1], gap=r.gap, radius=r.radius, radius_proxy=r.radius_proxy,
                             log_area=r.log_volume))
    return pd.DataFrame(rows)


def area_ratios(results: dict[tuple[str, str], dict[str, CertifiedRegion]]) -> dict[tuple[str, str], float]:
    """Area of ANCER's region over the area of Isotropic DD's, per (point, norm).

    The exp of the difference of the log-areas (ANCER §5.1 for ellipses, Proposition 4 for generalized
    cross-polytopes).

    Parameters
    ----------
    results : dict of (str, str) to dict of str to regions.CertifiedRegion
        `certify_figure1`'s certificates: (point name, norm) -> {"isotropic": region, "ancer": region}.

    Returns
    -------
    dict of (str, str) to float
    """
    return {key: float(np.exp(r[ANCER].log_volume - r[ISOTROPIC].log_volume)) for key, r in results.items()}


def blog_toys() -> dict[str, ToyClassifier]:
    """The blog's Figure 2, as analytic base classifiers around x = 0.

    Class 0 is x's class; both classify as class 1 everything beyond radius 1.5. "top": the other class is a large
    half-plane at distance 0.5, which the largest isotropic region borders. "bottom": the other class is a small
    peak, a disc of radius 0.1 at distance 0.25 from x, inside the large safe disc; the largest ℓ2 ball must stop
    at the peak.

    Returns
    -------
    dict of str to models.small.ToyClassifier
        "top" and "bottom".
    """
    return {"top": ToyClassifier(halfplanes=[((1.0, 0.0), 0.5)], exteriors=[((0.0, 0.0), 1.5)]),
            "bottom": ToyClassifier(discs=[((0.35, 0.0), 0.1)], exteriors=[((0.0, 0.0), 1.5)])}


def optimal_regions(model: torch.nn.Module, center: tuple[float, float] = BLOG_CENTER, label: int = 0,
                    half_width: float = BLOG_HALF_WIDTH, resolution: int = BLOG_RESOLUTION) -> dict[str, object]:
    """The blog's Figure 2: the largest ℓ2 ball and axis-aligned ellipse around `center` free of the other class.

    The ellipse is the one of largest area. Both are found by brute force (`safe_regions`) over the nodes of a
    resolution x resolution grid on center ± half_width that `model` does not assign to `label`, less two grid
    spacings so that they are sound.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier of 2D inputs (e.g. a `blog_toys` entry).
    center : tuple of (float, float), default `BLOG_CENTER`
        The input x.
    label : int, default 0
        x's class.
    half_width : float, default `BLOG_HALF_WIDTH`
        Half the grid's width; also the ellipse's largest semi-axis.
    resolution : int, default `BLOG_RESOLUTION`
        Grid nodes per axis (>= 3).

    Returns
    -------
    dict
        "ball": the ball's radius; "ellipse": its semi-axes (a, b); "ratio": ellipse area / ball area.
    """
    if resolution < 3:
        raise ValueError(f"resolution must be >= 3, got {resolution}")
    c = np.asarray(center, np.float64)
    lin = np.linspace(-half_width, half_width, resolution)
    grid = c + np.stack(np.meshgrid(lin, lin), axis=-1).reshape(-1, 2)
    with torch.no_grad():
        other = grid[model(torch.tensor(grid, dtype=torch.float32)).argmax(1).numpy() != label]
    margin = 2 * (lin[1] - lin[0])
    r = largest_ball(c, other, margin=margin)
    a, b = largest_ellipse(c, other, max_axis=half_width, margin=margin)
    return {"ball": r, "ellipse": (a, b), "ratio": a * b / r ** 2}


def base_classifier_violations(model: torch.nn.Module, center: np.ndarray, semi_axes: np.ndarray, label: int,
                               per_axis: int) -> tuple[int, int]:
    """Check an ℓ2 region against the base classifier itself (no noise) on `verify.region_fill_2d`'s grid.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier of 2D inputs.
    center : numpy.ndarray, shape (2,)
        The region's centre.
    semi_axes : numpy.ndarray, shape (2,)
        The axis-aligned ellipse's semi-axes.
    label : int
        The class every point should get.
    per_axis : int
        Grid points per axis.

    Returns
    -------
    checked : int
        The points checked.
    wrong : int
        The points not classified as `label`.
    """
    pts = torch.tensor(region_fill_2d(center, semi_axes, L2, per_axis=per_axis), dtype=torch.float32)
    with torch.no_grad():
        wrong = int((model(pts).argmax(1) != label).sum())
    return len(pts), wrong


VERIFICATION_COLUMNS = ["certificate", "points_checked", "violations", "min_top_frequency"]


def optimal_verification_table(toys: dict[str, torch.nn.Module], optimal: dict[str, dict[str, object]],
                               per_axis: int, center: tuple[float, float] = BLOG_CENTER,
                               label: int = 0) -> pd.DataFrame:
    """`base_classifier_violations` for the optimal ball and ellipse of each blog toy (`optimal_regions`).

    In the columns of `verification_table`; the base classifier has no Monte Carlo error: top frequency 1.

    Parameters
    ----------
    toys : dict of str to torch.nn.Module
        `blog_toys`.
    optimal : dict of str to dict
        `optimal_regions` per toy.
    per_axis : int
        Grid points per axis.
    center : tuple of (float, float), default `BLOG_CENTER`
        The input x.
    label : int, default 0
        x's class.

    Returns
    -------
    pandas.DataFrame
        `VERIFICATION_COLUMNS`: certificate ("blog-<toy>/l2/optimal-<ball|ellipse> (base f)"), points_checked,
        violations, min_top_frequency.
    """
    rows = []
    for k, o in optimal.items():
        for kind, axes in (("ball", np.full(2, o["ball"])), ("ellipse", np.asarray(o["ellipse"]))):
            pts, bad = base_classifier_violations(toys[k], np.asarray(center, np.float64), axes, label, per_axis)
            rows.append([f"blog-{k}/l2/optimal-{kind} (base f)", pts, bad, 1.0])
    return pd.DataFrame(rows, columns=VERIFICATION_COLUMNS)


def verification_table(entries: dict[str, tuple[torch.nn.Module, CertifiedRegion]], points_per_axis: int, n_check: int,
                       seed: int = 0, boundary: int = 64) -> pd.DataFrame:
    """Re-check every smoothed certificate of `entries` with `rancer_2d.region_verification`.

    Parameters
    ----------
    entries : dict of str to (torch.nn.Module, regions.CertifiedRegion)
        {name: (model, region)}.
    points_per_axis : int
        Grid points per axis filling each region.
    n_check : int
        Fresh noise draws per point.
    seed : int, default 0
        Seed of the draws.
    boundary : int, default 64
        Points on each region's edge.

    Returns
    -------
    pandas.DataFrame
        `VERIFICATION_COLUMNS`, one row per certificate: certificate, points_checked, violations (points whose
        re-estimated smoothed top class is not the certified one) and min_top_frequency.
    """
    rows = []
    for name, (model, region) in entries.items():
        pts, bad, freq = region_verification(model, region, points_per_axis, n_check, seed, boundary)
        rows.append([name, pts, bad, freq])
    return pd.DataFrame(rows, columns=VERIFICATION_COLUMNS)


def memory_decisions(points: dict[str, tuple[torch.Tensor, int, int]],
                     results: dict[tuple[str, str], dict[str, CertifiedRegion]], norm: str,
                     method: str = ANCER) -> list[tuple[str, str]]:
    """ANCER Algorithm 1 (`memory.algorithm1`) over the Figure 1 inputs' certified regions in test-set order.

    Parameters
    ----------
    points : dict of str to (torch.Tensor, int, int)
        `figure1_points`: name -> (x of shape (2,), label, index in the test set).
    results : dict of (str, str) to dict of str to regions.CertifiedRegion
        `certify_figure1`'s certificates: (point name, norm) -> {"isotropic": region, "ancer": region}.
    norm : str
        "l2" or "l1".
    method : str, default "ancer"
        Whose regions.

    Returns
    -------
    list of (str, str)
        (point name, status) in test-set order.
    """
    order = sorted(points, key=lambda name: points[name][2])
    regions = [results[name, norm][method] for name in order]
    decisions = algorithm1(regions)
    return [(name, d.status) for name, d in zip(order, decisions)]
