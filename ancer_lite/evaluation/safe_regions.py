"""Optimal certificates of a *base* classifier's safe set in 2D, by brute force (the blog's conceptual
Figure 2): the largest l2 ball and the largest-area axis-aligned ellipse centred at x that contain no
point of the other class.

The other class is given as the nodes of a grid of spacing h that fall in it. Both results are shrunk
by `margin` (pass 2h): when the other class's region is a union of shapes wider than h, each of its
points lies within h of one of its nodes, so a point inside the shrunk region would put a node inside
the unshrunk one (an ellipse with semi-axes (a - m, b - m) dilated by m stays inside the ellipse (a, b)).
"""
from __future__ import annotations

import numpy as np


def largest_ball(x: np.ndarray, adversarial: np.ndarray, margin: float = 0.0) -> float:
    """Radius of the largest l2 ball around x free of adversarial points (their minimum distance), less `margin`.

    Parameters
    ----------
    x : numpy.ndarray, shape (2,)
        The ball's centre.
    adversarial : numpy.ndarray, shape (m, 2)
        The other class's grid nodes, m >= 1.
    margin : float
        Subtracted from the radius (2h for a grid of spacing h, see the module's text).

    Returns
    -------
    float
        The radius.
    """
    d = np.asarray(adversarial, np.float64) - np.asarray(x, np.float64)
    if len(d) == 0:
        raise ValueError("adversarial must contain at least one point")
    return float(np.sqrt((d * d).sum(axis=1)).min()) - margin


def largest_ellipse(x: np.ndarray, adversarial: np.ndarray, max_axis: float, margin: float = 0.0,
                    num: int = 400) -> tuple[float, float]:
    """Semi-axes (a, b) of the largest-area axis-aligned ellipse around x with no adversarial point strictly inside.

    a is searched on a grid of `num` values up to max_axis: for each a, the largest feasible b is the minimum, over the
    points with |dx| < a, of |dy| / sqrt(1 - (dx/a)^2) (capped at max_axis). Both semi-axes of the best one are then
    reduced by `margin`.

    Parameters
    ----------
    x : numpy.ndarray, shape (2,)
        The ellipse's centre.
    adversarial : numpy.ndarray, shape (m, 2)
        The other class's grid nodes, m >= 1.
    max_axis : float
        The largest semi-axis tried, > 0.
    margin : float
        Subtracted from both semi-axes (2h for a grid of spacing h, see the module's text).
    num : int
        The number of values of a tried.

    Returns
    -------
    tuple of float
        (a, b), the semi-axes along the first and the second coordinate.
    """
    d = np.abs(np.asarray(adversarial, np.float64) - np.asarray(x, np.float64))
    if len(d) == 0:
        raise ValueError("adversarial must contain at least one point")
    best = (0.0, 0.0)
    for a in np.linspace(max_axis / num, max_axis, num):
        inside = d[:, 0] < a
        b = max_axis
        if inside.any():
            b = min(b, float((d[inside, 1] / np.sqrt(1.0 - (d[inside, 0] / a) ** 2)).min()))
        if a * b > best[0] * best[1]:
            best = (float(a), float(b))
    return best[0] - margin, best[1] - margin
