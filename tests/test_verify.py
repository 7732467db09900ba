"""verify.py: boundary and filling points of 2D certified regions lie where they should (on the boundary, inside
the region), the l1 boundary keeps its vertices, and the smoothed top class of a half-space classifier far from its
boundary is the half-space's class."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from ancer_lite.core.regions import region_norm
from ancer_lite.evaluation.verify import region_boundary_2d, region_fill_2d, smoothed_predictions

CENTER, SCALES = np.array([0.3, -1.2]), np.array([0.5, 2.0])


@pytest.mark.parametrize("norm", ["l1", "l2"])
@pytest.mark.parametrize("num", [8, 9, 64, 257])
def test_boundary_points_lie_on_the_boundary_and_close_the_curve(norm, num):
    pts = region_boundary_2d(CENTER, SCALES, norm, num)
    assert pts.shape == (num, 2)
    assert np.allclose(region_norm(pts - CENTER, SCALES, norm), 1.0, atol=1e-12)
    assert np.array_equal(pts[0], pts[-1])


@pytest.mark.parametrize("num", [8, 10, 100, 256])
def test_l1_boundary_contains_the_four_vertices_exactly(num):
    pts = region_boundary_2d(CENTER, SCALES, "l1", num)
    for v in ([1, 0], [0, 1], [-1, 0], [0, -1]):
        assert (np.abs(pts - (CENTER + np.array(v) * SCALES)).max(axis=1) == 0).any(), v


def test_boundary_rejects_bad_input():
    with pytest.raises(ValueError, match="norm"):
        region_boundary_2d(CENTER, SCALES, "linf")
    with pytest.raises(ValueError, match="num"):
        region_boundary_2d(CENTER, SCALES, "l1", 5)


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_fill_points_are_inside_and_include_the_centre(norm):
    pts = region_fill_2d(CENTER, SCALES, norm, per_axis=11, boundary=40)
    assert (region_norm(pts - CENTER, SCALES, norm) <= 1.0).all()
    assert (np.abs(pts - CENTER).max(axis=1) < 1e-12).any()
    assert len(pts) > 40                               # grid nodes besides the 40 boundary points


class HalfSpace(torch.nn.Module):
    """Logits (0, 10 x_0): class 1 iff x_0 > 0."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([torch.zeros(len(x)), 10 * x[:, 0]], dim=1)


def test_smoothed_predictions_far_from_the_boundary():
    pts = torch.tensor([[2.0, 0.0], [-2.0, 5.0], [0.0, 0.0]])
    gen = torch.Generator().manual_seed(0)
    top, freq = smoothed_predictions(HalfSpace(), pts, 0.1, "gaussian", 2000, gen)
    assert top[:2].tolist() == [1, 0] and (freq[:2] == 1.0).all()
    assert 0.45 < freq[2] < 0.56                       # on the boundary: a coin flip (2000 draws, > 4 SE)
