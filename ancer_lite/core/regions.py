"""Certified regions and their size measures (ANCER §4-5).

A region certified at x with smoothing scale theta (a vector over the n input dimensions) and gap r
is R = {x + delta : ||Theta^{-1} U^T delta||_p <= r}: an axis-aligned (U = I) or rotated ellipsoid for
p = 2 (Corollary 1, RANCER Eq. 3) and a generalized cross-polytope for p = 1 (Corollary 2). Its
semi-axes are s_i = r * theta_i. All functions work on the last axis and broadcast over leading ones;
sizes are computed in log space so that n = 150,528 neither overflows nor underflows.

Where values are checked (ValueError naming the argument): one region enters the package as a `CertifiedRegion`,
which checks every field once (a rotation by `parameters.check_rotation`, the package's one orthogonality test)
and whose `contains` checks its points; Algorithm 1's memory checks its regions at its own entry points (`memory`).
The membership formulas `region_norm` and `contains` are kernels on arrays taken as given (only `norm`, an O(1)
choice, is checked): delta, points and center finite, scales finite and > 0 with at least one entry on the last
axis, all broadcasting, rotation an orthogonal (n, n) matrix. The size measures take theta / scales finite and > 0
with at least one entry on the last axis, gap finite and >= 0 (log_volume: finite; gap <= 0 gives -inf) of
theta's leading shape, norm in NORMS, and check them (O(size), no rotation check except `enclosed_radius`'s of a
rotation it is given).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch
from scipy.special import gammaln

from .families import FAMILIES
from .names import ABSTAIN, L1, L2, NOISE_OF, NORMS
from .noise import check_noise
from .parameters import Rotation, check_rotation
from .validation import check_class_index, check_finite_array, check_probabilities


def check_norm(norm: str) -> str:
    """`norm` if it is one of `NORMS` ("l1", "l2"), else a ValueError naming it.

    Parameters
    ----------
    norm : str
        The norm to check.

    Returns
    -------
    str
        `norm`, unchanged.
    """
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {list(NORMS)}, got {norm!r}")
    return norm


def _theta(theta: np.ndarray, name: str = "theta") -> np.ndarray:
    """theta (or scales) as float64: finite, > 0, at least one entry (one pass each)."""
    th = check_finite_array(theta, name, positive=True)
    if th.size == 0:
        raise ValueError(f"{name} must have at least one entry (one per dimension), got shape {th.shape}")
    return th


def _gap(gap: np.ndarray | float, nonnegative: bool = True) -> np.ndarray:
    g = check_finite_array(gap, "gap")
    if nonnegative and (g < 0).any():
        raise ValueError(f"gap must be >= 0 (0: no certificate), got min {g.min():g}")
    return g


def _theta_gap(theta: np.ndarray, gap: np.ndarray | float, nonnegative: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Checked (theta reshaped to (*gap.shape, n), gap): theta's leading axes must be gap's."""
    g = _gap(gap, nonnegative)
    th = _theta(theta)
    if th.shape[:g.ndim] != g.shape:  # 2 gaps for one 4-dim theta would split it into two 2-dim regions
        raise ValueError(f"theta must have gap's shape {g.shape} as its leading axes (one region per gap), got "
                         f"theta of shape {th.shape}")
    return th.reshape(*g.shape, -1), g


def _rotation(rotation: np.ndarray, n: int) -> np.ndarray:
    """A rotation as float64: an orthogonal (n, n) matrix by `parameters.check_rotation`."""
    check_rotation(rotation, n)
    return np.asarray(rotation, dtype=np.float64)


def noise_gap(p_lower: np.ndarray | float, noise: str) -> np.ndarray:
    """The gap of ANCER's certificate with one of its noise families, from lower bounds p_A on the top class
    probability, taking the runner-up bound p_B = 1 - p_A: the family's `gap` (Gaussian: Corollary 1,
    (Φ^-1(p_A) - Φ^-1(p_B)) / 2 = Φ^-1(p_A); uniform: Corollary 2, p_A - p_B = 2 p_A - 1).

    Parameters
    ----------
    p_lower : float or array_like
        The bounds, real numbers in [0, 1]; below 1 where the family's gap is infinite at 1 (the Gaussian's:
        Φ^-1(1) = ∞, an unbounded region).
    noise : str
        One of ANCER's noise families (`noise.NOISES`).

    Returns
    -------
    numpy.ndarray
        The gaps, float64, shaped as p_lower: 0 where p_A <= 1/2 (no certificate).
    """
    fam = FAMILIES[check_noise(noise)]
    p = check_probabilities(p_lower, "p_lower")
    gap = np.where(p > 0.5, fam.gap(np.clip(p, 0.5, 1.0)), 0.0)
    if not np.isfinite(gap).all():
        raise ValueError(f"p_lower must be < 1 for an {fam.ancer_norm} certificate of {noise} noise: 1 gives an "
                         f"infinite {fam.ancer_norm} radius (a Clopper-Pearson bound from n samples is at most "
                         f"alpha^(1/n) < 1), got {p_lower!r}")
    return gap


def gap_from_lower_bound(p_lower: np.ndarray | float, norm: str) -> np.ndarray:
    """`noise_gap` for callers that know the norm only: the gap of the family ANCER certifies `norm` with
    (`names.NOISE_OF`: Gaussian for l2, uniform for l1).

    Parameters
    ----------
    p_lower : float or array_like
        Lower bounds on the top class probability, real numbers in [0, 1] (below 1 for l2).
    norm : str
        One of `NORMS`.

    Returns
    -------
    numpy.ndarray
        The gaps, float64, shaped as p_lower: 0 where p_A <= 1/2.
    """
    return noise_gap(p_lower, NOISE_OF[check_norm(norm)])


def semi_axes(theta: np.ndarray, gap: np.ndarray | float) -> np.ndarray:
    """s_i = gap * theta_i: the region's extent along each (rotated) axis.

    Parameters
    ----------
    theta : numpy.ndarray, shape (*gap.shape, n) (any shape whose leading axes are gap's)
        The smoothing scales, finite and > 0; the axes after gap's are flattened to the n dimensions.
    gap : float or numpy.ndarray, shape (...)
        The certificates' gaps, finite and >= 0, one per region.

    Returns
    -------
    numpy.ndarray of float64, shape (*gap.shape, n)
        The semi-axes.
    """
    th, g = _theta_gap(theta, gap)
    return g[..., None] * th


def enclosed_radius(theta: np.ndarray, gap: np.ndarray | float, norm: str,
                    rotation: np.ndarray | None = None) -> np.ndarray:
    """Radius of the largest l_p ball centred at x inside the region (ANCER §5.1-5.2): min_i theta_i * gap.
    A rotation leaves this unchanged for ellipsoids. For one rotated cross-polytope
    {||Λ^-1 U^T d||_1 <= r} the l1 ball of radius rho fits iff rho * max_j ||Λ^-1 U^T e_j||_1 <= r
    (the l1 ball's vertices are ±rho e_j), so rho = r / max_j ||Λ^-1 U^T e_j||_1.

    Parameters
    ----------
    theta : numpy.ndarray, shape (*gap.shape, n)
        The smoothing scales, finite and > 0, with gap's shape as their leading axes; one region's 1-D vector (n,)
        when a rotation is given for norm "l1".
    gap : float or numpy.ndarray, shape (...)
        The gaps, finite and >= 0.
    norm : str
        One of `NORMS`: "l2" (ellipsoid) or "l1" (generalized cross-polytope).
    rotation : numpy.ndarray, shape (n, n), optional
        U, an orthogonal matrix (checked for both norms by `parameters.check_rotation`, O(n^3)); None: an
        axis-aligned region.

    Returns
    -------
    numpy.ndarray of float64, shape gap.shape
        The enclosed radii, in the units of theta (per-dimension pixel units for images).
    """
    check_norm(norm)
    th, g = _theta_gap(theta, gap)
    if rotation is not None:
        _rotation(rotation, th.shape[-1])
    if rotation is None or norm == L2:
        return g * th.min(axis=-1)
    if th.ndim != 1:
        raise ValueError("theta must be one region's 1-D scale vector when a rotation is given")
    u = np.asarray(rotation, dtype=np.float64)
    column_l1 = np.abs(u.T / th[:, None]).sum(axis=0)  # ||Λ^-1 U^T e_j||_1 for each j
    return g / column_l1.max()


def log_geometric_mean(theta: np.ndarray) -> np.ndarray:
    """log of (prod_i theta_i)^(1/n), computed as mean(log theta).

    Parameters
    ----------
    theta : numpy.ndarray, shape (..., n)
        The scales, finite and > 0, n >= 1.

    Returns
    -------
    numpy.ndarray of float64, shape (...)
        The log geometric means over the last axis.
    """
    th = _theta(theta)
    if th.ndim == 0:
        raise ValueError("theta must have a last axis of n >= 1 scales, got a scalar")
    return np.log(th).mean(axis=-1)


def proxy_radius(theta: np.ndarray, gap: np.ndarray | float) -> np.ndarray:
    """ANCER's proxy radius R~ = gap * (prod_i theta_i)^(1/n) (§5.1 for ellipsoids, §5.2 for
    generalized cross-polytopes): the n-th root of the volume up to a constant.

    Parameters
    ----------
    theta : numpy.ndarray, shape (*gap.shape, n)
        The smoothing scales, finite and > 0, with gap's shape as their leading axes.
    gap : float or numpy.ndarray, shape (...)
        The gaps, finite and >= 0.

    Returns
    -------
    numpy.ndarray of float64, shape gap.shape
        The proxy radii.
    """
    th, g = _theta_gap(theta, gap)
    return g * np.exp(np.log(th).mean(axis=-1))


def soft_proxy_radius(theta: torch.Tensor, gap: torch.Tensor) -> torch.Tensor:
    """`proxy_radius` of a batch, differentiable in theta and gap (torch): gap · exp(mean_i log θ_i) for scales
    theta (B, n) > 0 and gaps (B,). The term of the objective that Isotropic DD's and ANCER's optimizers ascend (App. C,
    Listing 1) and RANCER's, whose printed objective we correct to it (`rancer`); unchecked, for their inner loops.

    Parameters
    ----------
    theta : torch.Tensor, shape (B, n)
        The scales, > 0.
    gap : torch.Tensor, shape (B,)
        The (soft) gaps.

    Returns
    -------
    torch.Tensor, shape (B,)
        The proxy radii, differentiable in theta and gap.
    """
    return gap * torch.exp(torch.log(theta).mean(dim=1))


def log_volume(theta: np.ndarray, gap: np.ndarray | float, norm: str) -> np.ndarray:
    """Natural log of the region's volume. Ellipsoid (§5.1): r^n pi^(n/2) / Γ(n/2 + 1) prod sigma_i.
    Generalized cross-polytope (Proposition 4): (2r)^n / n! prod lambda_i. Rotation leaves it unchanged.
    -inf where gap <= 0.

    Parameters
    ----------
    theta : numpy.ndarray, shape (*gap.shape, n)
        The smoothing scales, finite and > 0, with gap's shape as their leading axes.
    gap : float or numpy.ndarray, shape (...)
        The gaps r, finite (any sign).
    norm : str
        One of `NORMS`: "l2" (ellipsoid) or "l1" (generalized cross-polytope).

    Returns
    -------
    numpy.ndarray of float64, shape gap.shape
        The natural log-volumes, -inf where gap <= 0.
    """
    check_norm(norm)
    th, g = _theta_gap(theta, gap, nonnegative=False)
    n = th.shape[-1]
    logs = np.log(th).sum(axis=-1)
    with np.errstate(divide="ignore"):
        logr = np.log(np.where(g > 0, g, 0.0))
    if norm == L2:
        out = n * logr + logs + 0.5 * n * math.log(math.pi) - gammaln(0.5 * n + 1.0)
    else:
        out = n * (math.log(2.0) + logr) + logs - gammaln(n + 1.0)
    return np.where(g > 0, out, -np.inf)


def region_norm(delta: np.ndarray, scales: np.ndarray, norm: str, rotation: np.ndarray | None = None) -> np.ndarray:
    """||S^-1 U^T delta||_p (ANCER Corollaries 1-2, RANCER Eq. 3): a point x + delta is in the region with semi-axes
    s (and rotation U) iff this is <= 1. Arrays taken as given; `norm` is checked.

    Parameters
    ----------
    delta : numpy.ndarray, shape (..., n)
        Displacements from the centre, finite.
    scales : numpy.ndarray, shape (..., n)
        The semi-axes s, finite and > 0, broadcasting against delta.
    norm : str
        One of `NORMS`.
    rotation : numpy.ndarray, shape (n, n), optional
        U, orthogonal; None for an axis-aligned region.

    Returns
    -------
    numpy.ndarray, shape (...)
        The norms, float64.
    """
    check_norm(norm)
    d, s = np.asarray(delta, dtype=np.float64), np.asarray(scales, dtype=np.float64)
    if rotation is not None:
        d = d @ np.asarray(rotation, dtype=np.float64)  # row-vector form of U^T delta
    z = d / s
    return np.sqrt((z * z).sum(axis=-1)) if norm == L2 else np.abs(z).sum(axis=-1)


def contains(points: np.ndarray, center: np.ndarray, scales: np.ndarray, norm: str,
             rotation: np.ndarray | None = None) -> np.ndarray:
    """Membership of points in the region centred at `center` with semi-axes `scales` (`region_norm` <= 1). Arrays
    taken as given; `norm` is checked (`CertifiedRegion.contains` is the checked form for one region).

    Parameters
    ----------
    points : numpy.ndarray, shape (..., n)
        The points, finite.
    center : numpy.ndarray, shape (..., n)
        The centre, finite, broadcasting against points.
    scales : numpy.ndarray, shape (..., n)
        The semi-axes, finite and > 0.
    norm : str
        One of `NORMS`.
    rotation : numpy.ndarray, shape (n, n), optional
        U, orthogonal; None for an axis-aligned region.

    Returns
    -------
    numpy.ndarray of bool, shape (...)
        True where the point lies in the region.
    """
    delta = np.asarray(points) - np.asarray(center)  # subtracted in their own dtype
    return region_norm(delta, scales, norm, rotation) <= 1.0


def as_vector(values: np.ndarray | torch.Tensor | float) -> np.ndarray:
    """`values` (a NumPy array, a torch tensor on any device, or a number) as a flat float64 vector; the records'
    constructors (`Certificate.region`, `UcanCertificate.region`) take their centres and scales through it.

    Parameters
    ----------
    values : numpy.ndarray, torch.Tensor or float, any shape
        The values; a tensor is detached and copied to the CPU.

    Returns
    -------
    numpy.ndarray of float64, shape (values.size,)
        The values, flattened in C order.
    """
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu()
    return np.asarray(values, np.float64).reshape(-1)


@dataclass(frozen=True, eq=False)
class CertifiedRegion:
    """One certified region, the package's one record of it:
    R = {center + delta : ||Θ^-1 U^T delta||_p <= gap (1 - margin)}, with Θ = diag(scales) and U = rotation (I when
    None). ANCER Corollary 1 (p = 2, gap Φ^-1(p_A)) and Corollary 2 (p = 1, gap 2 p_A - 1) for axis-aligned Θ;
    RANCER Eq. 3 for the rotated ellipsoid; Algorithm 1 (ANCER App. D) returns its final regions as scales with
    gap 1. Every input the region is built from is checked once here; its measures are computed from the stored
    fields, so a record can never disagree with itself.

    center: the certified input, finite, shape (n,); scales: the smoothing scales θ (σ, or the half-widths λ of
    U[-λ, λ]; in U's coordinates when rotated), finite and > 0, shape (n,); gap: finite and >= 0 (0 when the
    certificate abstains; 0 with a class for a region of its centre only, which Algorithm 1's LargestOutSubset leaves
    when the centre lies on another class's boundary to rounding); norm: "l1" or "l2"; prediction: a class index
    >= 0, or ABSTAIN (-1) with gap 0;
    rotation: None or an orthogonal (n, n) matrix (`parameters.check_rotation`, whose measured deviation
    max |U U^T - I| the record keeps as `deviation`, 0 without a rotation; a `parameters.Rotation` is taken as checked,
    and the record holds its read-only matrix); margin: in [0, 1), a relative shrink of
    every semi-axis that the region's user asks for (RANCER's ROTATION_MARGIN for a rotation known to rounding), 0
    for the region CERTIFY states.

    The measures are properties: `semi_axes`, `radius` (the enclosed ℓp ball, §5.1-5.2), `radius_proxy` (§5),
    `log_volume` (§5.1, Proposition 4) and the membership test `contains`. An abstention has radius and proxy
    radius 0 and log-volume -inf, and contains nothing; a region of gap 0 with a class has the same measures and
    contains its centre."""
    center: np.ndarray
    scales: np.ndarray
    gap: float
    norm: str
    prediction: int
    rotation: np.ndarray | Rotation | None = None
    margin: float = 0.0
    deviation: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        center = check_finite_array(self.center, "center")
        if center.ndim != 1 or center.size == 0:
            raise ValueError(f"center must be one input as a vector of n >= 1 numbers, got shape {center.shape}")
        scales = _theta(self.scales, "scales")
        if scales.shape != center.shape:
            raise ValueError(f"scales must hold one value per dimension of center (shape {center.shape}), got shape "
                             f"{scales.shape}")
        gap = float(_gap(self.gap))
        check_norm(self.norm)
        prediction = check_class_index(self.prediction, "prediction", abstain=True)
        if prediction == ABSTAIN and gap != 0.0:
            raise ValueError(f"prediction {prediction} and gap {gap!r} disagree: a certificate that abstains "
                             f"(prediction ABSTAIN = {ABSTAIN}) has gap 0")
        rotation, deviation = None, 0.0
        if self.rotation is not None:  # a parameters.Rotation is taken as checked; a matrix is checked here
            checked = Rotation.of(self.rotation, center.size)
            rotation, deviation = checked.matrix, checked.deviation
        margin = self.margin
        if isinstance(margin, (bool, np.bool_)) or not isinstance(margin, (int, float, np.integer, np.floating)) \
                or not 0.0 <= margin < 1.0:
            raise ValueError(f"margin must be a number in [0, 1) (a relative shrink of the semi-axes), got {margin!r}")
        for name, value in (("center", center), ("scales", scales)):
            value = value.copy()  # a copy nobody else holds, read-only: the record cannot change after its checks
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        for name, value in (("rotation", rotation), ("gap", gap), ("prediction", prediction),
                            ("margin", float(margin)), ("deviation", deviation)):
            object.__setattr__(self, name, value)

    @property
    def dimension(self) -> int:
        """n, the number of input dimensions."""
        return int(self.center.size)

    @property
    def abstained(self) -> bool:
        """Whether CERTIFY (or Algorithm 1) abstained: then there is no region."""
        return self.prediction == ABSTAIN

    @property
    def noise(self) -> str:
        """The ANCER noise family whose certificate this norm is (Gaussian for ℓ2, uniform for ℓ1)."""
        return NOISE_OF[self.norm]

    def _shrunk_gap(self) -> float:
        return self.gap if self.margin == 0.0 else self.gap * (1.0 - self.margin)

    @property
    def semi_axes(self) -> np.ndarray:
        """gap θ_i (1 - margin), shape (n,): the region's extent along each (rotated) axis (the semi-axes Algorithm 1
        takes)."""
        axes = semi_axes(self.scales, self.gap)
        return axes if self.margin == 0.0 else axes * (1.0 - self.margin)

    @property
    def radius(self) -> float:
        """The radius of the largest ℓp ball centred at `center` inside the region (`enclosed_radius`); 0 when
        abstaining."""
        rotation = self.rotation if self.norm == L1 else None  # an ellipsoid's radius does not depend on it
        return float(enclosed_radius(self.scales, self._shrunk_gap(), self.norm, rotation))

    @property
    def radius_proxy(self) -> float:
        """ANCER's proxy radius gap (1 - margin) (prod θ_i)^(1/n) (`proxy_radius`); 0 when abstaining."""
        return float(proxy_radius(self.scales, self._shrunk_gap()))

    @property
    def log_volume(self) -> float:
        """The natural log of the region's volume (`log_volume`); -inf when abstaining."""
        return float(log_volume(self.scales, self._shrunk_gap(), self.norm))

    def contains(self, points: np.ndarray) -> np.ndarray:
        """Whether each of `points` lies in the region (all False when abstaining).

        Parameters
        ----------
        points : array_like, shape (..., n)
            The points, finite (checked).

        Returns
        -------
        numpy.ndarray of bool, shape (...)
        """
        pts = check_finite_array(points, "points", last_axis=self.dimension)
        if self.abstained:
            return np.zeros(pts.shape[:-1], dtype=bool)
        if self.gap == 0.0:  # the centre only
            return (pts == self.center).all(axis=-1)
        return contains(pts, self.center, self.semi_axes, self.norm, self.rotation)


def certified_regions(centers: np.ndarray | torch.Tensor, thetas: np.ndarray, gaps: np.ndarray, preds: np.ndarray,
                      norm: str, rotations: np.ndarray | None = None, margin: float = 0.0) -> list[CertifiedRegion]:
    """The certified regions of a run's inputs, one `CertifiedRegion` each: input k's region has centre centers[k],
    scales thetas[k], gap gaps[k] and prediction preds[k] (CERTIFY's, ABSTAIN with gap 0), in `norm`, rotated by
    rotations[k] (RANCER Eq. 3) and shrunk by `margin`: what Algorithm 1 takes (`memory.algorithm1`).

    Parameters
    ----------
    centers : numpy.ndarray or torch.Tensor, shape (N, *input_shape) or (N, n)
        The inputs.
    thetas : numpy.ndarray, shape (N, *input_shape) or (N, n)
        Their smoothing scales, finite and > 0.
    gaps : numpy.ndarray, shape (N,)
        Their certificates' gaps, finite and >= 0 (0 exactly where they abstain).
    preds : numpy.ndarray of int, shape (N,)
        Their CERTIFY predictions (ABSTAIN = -1).
    norm : str
        One of NORMS.
    rotations : numpy.ndarray of shape (N, n, n), optional
        One orthogonal U per input.
    margin : float
        A relative shrink of every semi-axis, in [0, 1).

    Returns
    -------
    list of CertifiedRegion, length N
    """
    if isinstance(centers, torch.Tensor):
        centers = centers.detach().cpu().double().numpy()
    num = len(preds)
    for name, value in (("centers", centers), ("thetas", thetas), ("gaps", gaps)) + (
            () if rotations is None else (("rotations", rotations),)):
        if len(value) != num:
            raise ValueError(f"{name} must hold one entry per input (preds has {num}), got {len(value)}")
    c = np.asarray(centers, np.float64).reshape(num, -1)
    th = np.asarray(thetas, np.float64).reshape(num, -1)
    g = np.asarray(gaps, np.float64).reshape(num)
    p = np.asarray(preds).reshape(num)
    return [CertifiedRegion(c[k], th[k], g[k], norm, p[k], None if rotations is None else rotations[k], margin)
            for k in range(num)]
