"""The 2D RANCER study: why rotated anisotropic regions (RANCER Figure 1) and whether the input-Hessian
eigenvectors find the safe directions (RANCER Figure 2, §4.2).

- `diagonal_dataset`: two classes in [0, 1]^2, class 1 a thin stripe through the middle rotated by `angle`
  degrees, class 0 on both sides. The safe region of a point inside the stripe is a long thin ellipse
  along the stripe, NOT aligned with the axes: the motivating case of RANCER Figure 1, where ANCER's
  axis-aligned ellipses are no better than a ball (at 45° an axis-aligned ellipse with semi-axes a, b fits
  in a stripe of half-width h iff a^2 + b^2 <= 2 h^2, so its area is largest at a = b = h).
- `train_toy_model`: a softplus MLP (smooth, so the input Hessian is informative) trained with Gaussian
  noise augmentation.
- `certify_methods`: at one 2D point, any of Isotropic DD's ball, ANCER's axis-aligned region and RANCER's
  rotated ellipse, each optimized and certified by CERTIFY with its own noise, Gaussian (ℓ2 / ℓΣ2) or, for
  Isotropic DD and ANCER, uniform (ℓ1 / ℓΛ1); `three_regions` is RANCER Figure 1 / Figure 2d (all three,
  Gaussian), and notebook 02's ANCER Figure 1 uses Isotropic DD and ANCER with both noises.
- `loss_quadratic_grid`: the cross-entropy loss on the plane spanned by two directions (the Hessian
  eigenvectors v1, v2 in RANCER Figure 2 a-c) and its second-order Taylor model (RANCER Eq. 4).
- `region_points` / `region_predictions` / `region_check` / `region_verification`: re-estimate the smoothed
  prediction, with the region's own (rotated) noise, on a grid filling a certified region (ellipse or generalized
  cross-polytope) and on its boundary; every point should keep the certified class.

Hyper-parameters (`DEFAULT_*`) were chosen on validation points of the stripe (`validation_points`), never
on the plotted point (`default_point`); see the comments next to each.
"""
from __future__ import annotations

import copy
import math
from dataclasses import asdict, replace

import numpy as np
import torch
import torch.nn.functional as F

from ..core.base_classifier import checked_logits
from ..core.certify import Smooth
from ..core.families import FAMILIES
from ..core.names import NORM_OF
from ..core.noise import GAUSSIAN, check_noise
from ..core.regions import L1, CertifiedRegion
from ..core.streams import certify_streams
from ..evaluation.verify import region_boundary_2d, smoothed_predictions
from ..methods.hessian import input_hessian
from ..methods.optimize import input_streams, optimize_ancer, optimize_isotropic
from ..methods.rancer import (
    ROTATION_MARGIN,
    RancerSettings,
    certify_rotated,
    hessian_rotation,
    optimize_rancer,
    rancer_streams,
)
from ..methods.registry import ANCER, ISOTROPIC, RANCER, AncerSettings, IsotropicSettings
from ..models.small import MLP
from ..models.train import train_classifier

#: the stripe's default orientation (degrees from the x-axis); 45° is the worst case for ANCER
DEFAULT_ANGLE = 45.0
#: half-width of the class-1 stripe and the empty margin on each side of its two boundaries
STRIPE_HALF_WIDTH = 0.1
STRIPE_MARGIN = 0.02
CENTRE = (0.5, 0.5)

#: training: a 2-32-32-2 softplus MLP, Gaussian augmentation at sigma = 0.02 (small next to the stripe's
#: half-width 0.1), 30 epochs (as notebook 02's MLP, smaller): 100% clean accuracy on a held-out set of 1,000
#: points (data seed 1); not tuned further
DEFAULT_HIDDEN = (32, 32)
DEFAULT_TRAIN_SIGMA = 0.02
DEFAULT_EPOCHS = 30

#: Optimization settings. Chosen on `validation_points` (three stripe points, not the plotted centre) with
#: the default model (data seed 0, model seed 0), N = 20,000, by the validation mean of
#: (proxy radius + 2 radius) 1(prediction = 1) (ANCER's selection objective), one method at a time:
#: Isotropic DD lr in {0.005, 0.01, 0.02, 0.03, 0.05, 0.1} -> 0.01 (0.2448; 0.1 diverges to a huge σ whose
#: smoothed prediction is the outer class 0, scored 0); then ANCER lr in {0.0005, 0.001, 0.005, 0.02} -> 0.001
#: (0.2414, all within 0.002); then RANCER lr in {0.001, 0.002, 0.003, 0.005, 0.01, 0.03} -> 0.005 (0.3453;
#: 0.001-0.005 within 0.002, 0.03 collapses). Iterations / samples / κ follow notebook 02 (200 steps of 256
#: draws, κ = 2); γ1 = 0.5, γ2 = 2 are `RancerSettings`' defaults (a larger γ2 would only stretch RANCER's
#: ellipse further along the stripe, towards the edge of the data square). sigma0 = the training σ.
ISO_SETTINGS = IsotropicSettings(iterations=200, lr=0.01, samples=256)
ANCER_SETTINGS = AncerSettings(iterations=200, lr=0.001, samples=256, kappa=2.0)
RANCER_SETTINGS = RancerSettings(iterations=200, lr=0.005, samples=256, gamma1=0.5, gamma2=2.0)
DEFAULT_SIGMA0 = DEFAULT_TRAIN_SIGMA
#: the selection objective's weight on the l2 radius
KAPPA_SELECT = 2.0


def _unit(angle: float) -> tuple[np.ndarray, np.ndarray]:
    """The stripe's direction t = (cos a, sin a) and its normal n = (-sin a, cos a), a in degrees."""
    a = math.radians(angle)
    return np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])


def diagonal_dataset(n: int = 2000, seed: int = 0, angle: float = DEFAULT_ANGLE,
                     half_width: float = STRIPE_HALF_WIDTH,
                     margin: float = STRIPE_MARGIN) -> tuple[torch.Tensor, torch.Tensor]:
    """RANCER Figure 1's motivating data: two classes in [0, 1]^2, class 1 a thin stripe at `angle` degrees.

    Points are uniform in [0, 1]^2, labelled 1 inside the stripe |n . (x - c)| < half_width (c = (0.5, 0.5), n the
    normal of the direction at `angle` degrees) and 0 outside; points within margin/2 of either stripe boundary are
    dropped.

    Parameters
    ----------
    n : int, default 2000
        Points (>= 2).
    seed : int, default 0
        The points' seed.
    angle : float, default `DEFAULT_ANGLE`
        The stripe's direction, degrees from the x-axis.
    half_width : float, default `STRIPE_HALF_WIDTH`
        0 < half_width < 0.5.
    margin : float, default `STRIPE_MARGIN`
        The empty margin around the boundaries, 0 <= margin < half_width.

    Returns
    -------
    x : torch.Tensor of float32, shape (n, 2)
    y : torch.Tensor of int64, shape (n,)
    """
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    if not (0 < half_width < 0.5 and 0 <= margin < half_width):
        raise ValueError("need 0 < half_width < 0.5 and 0 <= margin < half_width")
    _, normal = _unit(angle)
    rng = np.random.default_rng(seed)
    pts: list[np.ndarray] = []
    have = 0
    while have < n:
        p = rng.random((2 * n, 2))
        d = np.abs((p - np.asarray(CENTRE)) @ normal)
        p = p[np.abs(d - half_width) >= margin / 2]
        pts.append(p)
        have += len(p)
    x = np.concatenate(pts)[:n]
    y = (np.abs((x - np.asarray(CENTRE)) @ normal) < half_width).astype(np.int64)
    return torch.tensor(x, dtype=torch.float32), torch.from_numpy(y)


def default_point(angle: float = DEFAULT_ANGLE) -> torch.Tensor:
    """The plotted point (RANCER Figures 1 and 2): the centre of the stripe, (0.5, 0.5), whatever the angle.

    Parameters
    ----------
    angle : float, default `DEFAULT_ANGLE`
        The stripe's direction (the centre does not depend on it).

    Returns
    -------
    torch.Tensor of float32, shape (2,)
    """
    return torch.tensor(CENTRE, dtype=torch.float32)


def validation_points(angle: float = DEFAULT_ANGLE) -> torch.Tensor:
    """Points used to choose the hyper-parameters, never the plotted point.

    Two on the stripe's mid-line 0.15 and 0.25 from the centre (on opposite sides), and one 0.15 along and 0.03
    across (off the mid-line).

    Parameters
    ----------
    angle : float, default `DEFAULT_ANGLE`
        The stripe's direction, degrees.

    Returns
    -------
    torch.Tensor of float32, shape (3, 2)
    """
    t, nrm = _unit(angle)
    c = np.asarray(CENTRE)
    pts = [c + 0.15 * t, c - 0.25 * t, c - 0.15 * t + 0.03 * nrm]
    return torch.tensor(np.stack(pts), dtype=torch.float32)


def train_toy_model(x: torch.Tensor, y: torch.Tensor, seed: int = 0, hidden: tuple[int, ...] = DEFAULT_HIDDEN,
                    sigma: float = DEFAULT_TRAIN_SIGMA, epochs: int = DEFAULT_EPOCHS, batch_size: int = 64,
                    lr: float = 0.05) -> torch.nn.Module:
    """A softplus MLP trained with Gaussian noise augmentation (`train.train_classifier`).

    Softplus is smooth, so the input Hessian of RANCER Figure 2 is informative. Deterministic given `seed` (torch is
    seeded before the model is built).

    Parameters
    ----------
    x : torch.Tensor, shape (m, 2)
        Training points.
    y : torch.Tensor of int64, shape (m,)
        Their labels, 0 or 1.
    seed : int, default 0
        The model's and the training's seed.
    hidden : tuple of int, default `DEFAULT_HIDDEN`
        Hidden layer widths.
    sigma : float, default `DEFAULT_TRAIN_SIGMA`
        The augmentation's Gaussian σ.
    epochs : int, default `DEFAULT_EPOCHS`
        Training epochs.
    batch_size : int, default 64
        Mini-batch size.
    lr : float, default 0.05
        SGD's learning rate.

    Returns
    -------
    torch.nn.Module
        The trained 2-input, 2-class MLP.
    """
    torch.manual_seed(seed)
    model = MLP((2,), 2, hidden=hidden, mean=(0.5,), std=(0.3,), activation="softplus")
    return train_classifier(model, x, y, noise=GAUSSIAN, scale=sigma, epochs=epochs, batch_size=batch_size,
                            lr=lr, seed=seed)


#: the methods `certify_methods` knows, in the order of their certification keys (the key seeds CERTIFY's noise)
METHOD_KEYS = (ISOTROPIC, ANCER, RANCER)


def certify_methods(model: torch.nn.Module, x0: torch.Tensor, methods: tuple[str, ...] = METHOD_KEYS,
                    noise: str = GAUSSIAN, sigma0: float = DEFAULT_SIGMA0,
                    iso_settings: IsotropicSettings | None = None, ancer_settings: AncerSettings | None = None,
                    rancer_settings: RancerSettings | None = None, n0: int = 100, n: int = 20_000,
                    alpha: float = 0.001, seed: int = 0, num_classes: int = 2) -> dict[str, CertifiedRegion]:
    """Optimize and certify Isotropic DD, ANCER and/or RANCER at one 2D point with `noise`.

    Isotropic DD's θ (from sigma0; Alfarra et al. 2020), ANCER's diagonal Θ (ANCER App. C, from the isotropic θ)
    and, for Gaussian noise, RANCER's Hessian rotation U with its scales (RANCER Algorithm 1, from the isotropic θ).
    Each is certified by CERTIFY with N = n samples (ANCER Corollary 1 for Gaussian, Corollary 2 for uniform noise;
    rotated noise for RANCER), its noise drawn from the streams (seed, the method's position in `METHOD_KEYS`).
    Each optimization draws from its own stream (`streams.stream(seed, 0, method)`), so a method's region does not
    depend on which other methods run (Isotropic DD and ANCER alone give `three_regions`' regions). RANCER needs
    rotation-invariant (Gaussian) noise: its certificate needs U ε to have ε's law (RANCER Eq. 2).

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier of 2D inputs.
    x0 : torch.Tensor, shape (2,)
        The point.
    methods : tuple of str, default `METHOD_KEYS`
        A non-empty subset of `METHOD_KEYS`; "rancer" only with Gaussian noise.
    noise : str, default "gaussian"
        "gaussian" (ℓ2 / ℓΣ2) or "uniform" (ℓ1 / ℓΛ1).
    sigma0 : float, default `DEFAULT_SIGMA0`
        Isotropic DD's initial θ.
    iso_settings : methods.registry.IsotropicSettings, optional
        Isotropic DD's settings; default `ISO_SETTINGS`.
    ancer_settings : methods.registry.AncerSettings, optional
        ANCER's settings; default `ANCER_SETTINGS`.
    rancer_settings : methods.rancer.RancerSettings, optional
        RANCER's settings; default `RANCER_SETTINGS`.
    n0 : int, default 100
        CERTIFY's selection samples.
    n : int, default 20_000
        CERTIFY's estimation samples N.
    alpha : float, default 0.001
        The Clopper-Pearson level.
    seed : int, default 0
        The optimization and certification seed.
    num_classes : int, default 2
        The number of classes.

    Returns
    -------
    dict of str to regions.CertifiedRegion
        {method: region} in `METHOD_KEYS` order, each for the float32 scales CERTIFY sampled with; RANCER's keeps
        `ROTATION_MARGIN` as its margin (its semi-axes, radius and area lose that fraction).
    """
    noise = check_noise(noise)
    unknown = [m for m in methods if m not in METHOD_KEYS]
    if unknown or not methods:
        raise ValueError(f"methods must be a non-empty subset of {METHOD_KEYS}, got {methods!r}")
    if RANCER in methods and not FAMILIES[noise].rotation_invariant:
        # RANCER's certificate needs U ε to have ε's law (Eq. 2): only the Gaussian's is rotation invariant
        raise ValueError(f"RANCER rotates Gaussian noise only: noise must be {GAUSSIAN!r} with 'rancer', got {noise!r}")
    iso_settings = asdict(ISO_SETTINGS if iso_settings is None else iso_settings)
    ancer_settings = asdict(ANCER_SETTINGS if ancer_settings is None else ancer_settings)
    rancer_settings = RANCER_SETTINGS if rancer_settings is None else rancer_settings
    x0 = torch.as_tensor(x0, dtype=torch.float32).reshape(2)
    xb = x0.unsqueeze(0)
    theta_iso = optimize_isotropic(model, xb, sigma0, noise, generator=input_streams(noise, xb, seed, [0], ISOTROPIC),
                                   **iso_settings)
    candidates: dict[str, tuple[np.ndarray, np.ndarray | None]] = {
        ISOTROPIC: (np.full(2, float(theta_iso[0])), None)}
    if ANCER in methods:
        theta_ani = optimize_ancer(model, xb, theta_iso, noise, generator=input_streams(noise, xb, seed, [0], ANCER),
                                   **ancer_settings)[0]
        candidates[ANCER] = (theta_ani.numpy().astype(np.float64), None)
    if RANCER in methods:
        u, eig = hessian_rotation(model, x0)
        theta_rot = optimize_rancer(model, xb, torch.from_numpy(u).float()[None], theta_iso, rancer_settings,
                                    torch.from_numpy(eig).float()[None], rancer_streams(xb, seed, [0]))[0]
        candidates[RANCER] = (theta_rot.numpy().astype(np.float64), u)
    smooth = Smooth(model, num_classes, (2,), noise, seed=seed, domain=None)  # 2-D toy data, not images
    out: dict[str, CertifiedRegion] = {}
    for key, method in enumerate(METHOD_KEYS):
        if method not in methods:
            continue
        scales, rot = candidates[method]
        theta = np.asarray(scales, np.float32)  # the scales CERTIFY samples with
        if rot is None:
            cert = smooth.certify(x0, torch.from_numpy(theta), n0, n, alpha, generator=certify_streams(seed, key))
            out[method] = cert.region(x0, theta, NORM_OF[noise])
        else:
            cert = certify_rotated(smooth, x0, theta, rot, key, n0, n, alpha, seed)
            out[method] = replace(cert.region(x0, theta, NORM_OF[noise], rot), margin=ROTATION_MARGIN)
    return out


def three_regions(model: torch.nn.Module, x0: torch.Tensor, sigma0: float = DEFAULT_SIGMA0,
                  iso_settings: IsotropicSettings | None = None, ancer_settings: AncerSettings | None = None,
                  rancer_settings: RancerSettings | None = None, n0: int = 100, n: int = 20_000,
                  alpha: float = 0.001, seed: int = 0) -> dict[str, CertifiedRegion]:
    """RANCER Figure 1 / Figure 2d at one point: Isotropic DD's, ANCER's and RANCER's certified regions.

    Isotropic DD's σ (from sigma0), ANCER's diagonal Θ (from the isotropic σ) and RANCER's Hessian rotation U with its
    scales (RANCER Algorithm 1, from the isotropic σ), each certified by CERTIFY with N = n samples (rotated noise
    for RANCER): `certify_methods` with all three methods and Gaussian noise.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier of 2D inputs.
    x0 : torch.Tensor, shape (2,)
        The point.
    sigma0 : float, default `DEFAULT_SIGMA0`
        Isotropic DD's initial σ.
    iso_settings : methods.registry.IsotropicSettings, optional
        Isotropic DD's settings; default `ISO_SETTINGS`.
    ancer_settings : methods.registry.AncerSettings, optional
        ANCER's settings; default `ANCER_SETTINGS`.
    rancer_settings : methods.rancer.RancerSettings, optional
        RANCER's settings; default `RANCER_SETTINGS`.
    n0 : int, default 100
        CERTIFY's selection samples.
    n : int, default 20_000
        CERTIFY's estimation samples N.
    alpha : float, default 0.001
        The Clopper-Pearson level.
    seed : int, default 0
        The optimization and certification seed.

    Returns
    -------
    dict of str to regions.CertifiedRegion
        "isotropic", "ancer", "rancer" -> region; RANCER's semi-axes lose `ROTATION_MARGIN`.
    """
    return certify_methods(model, x0, METHOD_KEYS, GAUSSIAN, sigma0, iso_settings, ancer_settings, rancer_settings,
                           n0, n, alpha, seed)


def validation_objective(model: torch.nn.Module, method: str, points: torch.Tensor, label: int = 1,
                         **kwargs) -> float:
    """The hyper-parameter selection objective: mean of (proxy radius + KAPPA_SELECT radius) 1(prediction = label).

    ANCER's selection objective, over `points`, of `method`'s region from `three_regions(model, point, **kwargs)`.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier of 2D inputs.
    method : str
        "isotropic", "ancer" or "rancer".
    points : torch.Tensor, shape (k, 2)
        The validation points (`validation_points`).
    label : int, default 1
        The class the points should get.
    **kwargs
        Passed to `three_regions` (settings, n, seed, ...).

    Returns
    -------
    float
    """
    regions = [three_regions(model, p, **kwargs)[method] for p in points]
    return float(np.mean([(r.radius_proxy + KAPPA_SELECT * r.radius) * (r.prediction == label) for r in regions]))


def _loss_model(model: torch.nn.Module) -> torch.nn.Module:
    """A float64 copy of `model` in eval mode, for the loss, its gradient and Hessian."""
    return copy.deepcopy(model).double().eval()


def input_gradient(model: torch.nn.Module, x: torch.Tensor, label: int) -> np.ndarray:
    """Gradient of the cross-entropy with `label` with respect to the input x, in float64 (RANCER Eq. 4's g).

    Parameters
    ----------
    model : torch.nn.Module
        The classifier.
    x : torch.Tensor, shape (n,) or any shape of n values
        The input.
    label : int
        The class of the cross-entropy.

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
    """
    m = _loss_model(model)
    v = x.detach().reshape(1, -1).to(torch.float64).requires_grad_(True)
    F.cross_entropy(checked_logits(m, v), torch.tensor([int(label)])).backward()
    return v.grad.reshape(-1).numpy()


def loss_quadratic_grid(model: torch.nn.Module, x0: torch.Tensor, label: int, u: np.ndarray, v: np.ndarray,
                        half_width: float, resolution: int = 101
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """RANCER Figure 2 (a-c): the cross-entropy on a plane through x0 and its second-order Taylor model (RANCER Eq. 4).

    The true cross-entropy L(x0 + a u + b v) with `label` and its Taylor model L(x0) + g.d + 1/2 d^T H d (g the
    input gradient, H `hessian.input_hessian`, d = a u + b v) on the grid (a, b) in [-half_width, half_width]^2, all
    in float64.

    Parameters
    ----------
    model : torch.nn.Module
        The classifier.
    x0 : torch.Tensor, shape (n,)
        The centre.
    label : int
        The class of the cross-entropy.
    u, v : numpy.ndarray, shape (n,)
        The plane's directions (the Hessian eigenvectors v1, v2 in RANCER Figure 2).
    half_width : float
        Half the grid's width.
    resolution : int, default 101
        Grid points per axis R.

    Returns
    -------
    a, b : numpy.ndarray, shape (R, R)
        The grid.
    true : numpy.ndarray, shape (R, R)
        The cross-entropy.
    quadratic : numpy.ndarray, shape (R, R)
        The Taylor model.
    """
    x = torch.as_tensor(x0).reshape(-1).to(torch.float64)
    grid = np.linspace(-half_width, half_width, resolution)
    aa, bb = np.meshgrid(grid, grid)
    d = aa.reshape(-1, 1) * np.asarray(u, np.float64).reshape(1, -1) \
        + bb.reshape(-1, 1) * np.asarray(v, np.float64).reshape(1, -1)
    m = _loss_model(model)
    with torch.no_grad():
        pts = x[None] + torch.from_numpy(d)
        target = torch.full((len(pts),), int(label))
        true = F.cross_entropy(checked_logits(m, pts), target, reduction="none").numpy()
        l0 = float(F.cross_entropy(checked_logits(m, x[None]), target[:1]))
    g = input_gradient(model, x, label)
    h = input_hessian(model, x, label)
    quad = l0 + d @ g + 0.5 * np.einsum("pi,ij,pj->p", d, h, d)
    return aa, bb, true.reshape(aa.shape), quad.reshape(aa.shape)


def region_points(region: CertifiedRegion, points_per_axis: int = 11, boundary: int = 32,
                  shrink: float = 1.0 - 1e-6) -> np.ndarray:
    """A grid filling a (possibly rotated) certified region, ellipse or generalized cross-polytope, plus its edge.

    The centre is included when points_per_axis is odd.

    Parameters
    ----------
    region : regions.CertifiedRegion
        A 2D region.
    points_per_axis : int, default 11
        Grid points per axis.
    boundary : int, default 32
        Points on the region's edge.
    shrink : float, default 1 - 1e-6
        Pulls the edge points into the region.

    Returns
    -------
    numpy.ndarray, shape (m, 2)
    """
    g = np.linspace(-1.0, 1.0, points_per_axis)
    z = np.stack(np.meshgrid(g, g, indexing="ij"), axis=-1).reshape(-1, 2)
    if region.norm == L1:
        z = z[np.abs(z).sum(axis=1) <= 1.0]
        edge = region_boundary_2d(np.zeros(2), np.ones(2), L1, boundary + 1)[:-1]
    else:
        z = z[(z * z).sum(axis=1) <= 1.0]
        t = np.linspace(0.0, 2 * np.pi, boundary, endpoint=False)
        edge = np.stack([np.cos(t), np.sin(t)], axis=1)
    z = np.concatenate([z, shrink * edge])
    rot = np.eye(2) if region.rotation is None else region.rotation
    return region.center + (z * region.semi_axes) @ rot.T


def region_predictions(model: torch.nn.Module, region: CertifiedRegion, points_per_axis: int = 11, n_check: int = 2000,
                       seed: int = 0, boundary: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """The smoothed classifier re-estimated at every point of `region_points` with the region's own noise.

    `n_check` fresh draws of the region's noise (Gaussian or uniform, with the region's scales; U (scales ⊙ z) for
    RANCER), seeded by `seed`.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier of 2D inputs.
    region : regions.CertifiedRegion
        A certified (non-abstaining) region: ellipse or generalized cross-polytope, possibly rotated.
    points_per_axis : int, default 11
        Grid points per axis filling the region.
    n_check : int, default 2000
        Fresh noise draws per point.
    seed : int, default 0
        Seed of the draws.
    boundary : int, default 32
        Points on the region's edge.

    Returns
    -------
    top : numpy.ndarray of int, shape (m,)
        The top class at each point.
    frequency : numpy.ndarray, shape (m,)
        Its frequency among the draws.
    """
    if region.abstained:
        raise ValueError("the certificate abstained: there is no region to check")
    pts = torch.from_numpy(region_points(region, points_per_axis, boundary)).float()
    rot = None if region.rotation is None else torch.tensor(region.rotation, dtype=torch.float32)  # a copy: read-only
    gen = torch.Generator().manual_seed(seed)
    return smoothed_predictions(model, pts, torch.tensor(region.scales, dtype=torch.float32), region.noise, n_check, gen,
                                rotation=rot)


def region_check(model: torch.nn.Module, region: CertifiedRegion, points_per_axis: int = 11, n_check: int = 2000,
                 seed: int = 0, boundary: int = 32) -> float:
    """The fraction of points of `region_points` at which the smoothed classifier keeps the certified prediction.

    A certificate promises 1.0 (up to Monte Carlo error near the boundary).

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier of 2D inputs.
    region : regions.CertifiedRegion
        A certified (non-abstaining) region: ellipse or generalized cross-polytope, possibly rotated.
    points_per_axis : int, default 11
        Grid points per axis filling the region.
    n_check : int, default 2000
        Fresh noise draws per point.
    seed : int, default 0
        Seed of the draws.
    boundary : int, default 32
        Points on the region's edge.

    Returns
    -------
    float
    """
    top, _ = region_predictions(model, region, points_per_axis, n_check, seed, boundary)
    return float((top == region.prediction).mean())


def region_verification(model: torch.nn.Module, region: CertifiedRegion, points_per_axis: int = 11, n_check: int = 2000,
                        seed: int = 0, boundary: int = 32) -> tuple[int, int, float]:
    """`region_predictions` summarized: points checked, violations and the smallest top-class frequency.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier of 2D inputs.
    region : regions.CertifiedRegion
        A certified (non-abstaining) region: ellipse or generalized cross-polytope, possibly rotated.
    points_per_axis : int, default 11
        Grid points per axis filling the region.
    n_check : int, default 2000
        Fresh noise draws per point.
    seed : int, default 0
        Seed of the draws.
    boundary : int, default 32
        Points on the region's edge.

    Returns
    -------
    checked : int
        The points checked.
    violations : int
        Points whose re-estimated top class is not the certified one.
    min_frequency : float
        The smallest top-class frequency, which shows the Monte Carlo margin.
    """
    top, freq = region_predictions(model, region, points_per_axis, n_check, seed, boundary)
    return len(top), int((top != region.prediction).sum()), float(freq.min())
