"""The image-domain measures (`evaluation.image_domain`): closed forms, and brute force against random feasible
points."""
import numpy as np
import pytest

from ancer_lite.core.regions import region_norm
from ancer_lite.evaluation.image_domain import (
    box_inside_log10,
    far_edge,
    largest_in_domain,
    linf_radius,
    semi_axes_in_range,
)


def test_box_inside_and_far_edge_closed_forms():
    x = np.array([0.0, 1.0, 0.5, 0.2])
    assert np.allclose(far_edge(x), [1.0, 1.0, 0.5, 0.8])
    # a ball of radius 0.25: half of the axis leaves the domain at 0 and at 1, none at 0.5, [−0.05, 0.45] at 0.2
    want = np.log10(0.5) * 2 + np.log10(0.45 / 0.5)
    assert box_inside_log10(x, np.full(4, 0.25)) == pytest.approx(want)
    assert box_inside_log10(np.full(3, 0.5), np.full(3, 0.1)) == 0.0
    # a semi-axis of 10 at a pixel at 0: one twentieth of the axis is inside
    assert box_inside_log10(np.zeros(1), np.full(1, 10.0)) == pytest.approx(np.log10(1 / 20))
    with pytest.raises(ValueError, match="x must"):
        box_inside_log10(np.array([1.5]), np.ones(1))
    with pytest.raises(ValueError, match="s must"):
        box_inside_log10(np.zeros(2), np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="same shape"):
        box_inside_log10(np.zeros(2), np.ones(3))


def test_largest_in_domain_fills_the_longest_axes_first():
    x = np.array([0.0, 0.0, 1.0, 0.3, 0.5])
    s = np.array([10.0, 2.0, 5.0, 0.1, 1.0])
    d = largest_in_domain(x, s, level=1.0)
    assert np.all(x + d >= -1e-12) and np.all(x + d <= 1 + 1e-12)          # inside [0, 1]^d
    assert region_norm(d, s, "l2") == pytest.approx(1.0)                   # on the ellipsoid's boundary
    # the axes of 10, 5, 2 and 1 move all the way (cost 0.01 + 0.04 + 0.25 + 0.25), the axis of 0.1 part-way
    assert d[0] == pytest.approx(1.0) and d[2] == pytest.approx(-1.0) and d[1] == pytest.approx(1.0)
    assert d[4] == pytest.approx(0.5) and d[3] ** 2 == pytest.approx((1.0 - 0.55) * 0.1 ** 2)
    # no feasible point found at random is larger
    rng = np.random.default_rng(0)
    for _ in range(200):
        z = rng.uniform(-1, 1, 5) * far_edge(x)
        z = np.clip(x + z, 0, 1) - x
        z *= min(1.0, 1.0 / region_norm(z, s, "l2"))
        assert np.linalg.norm(z) <= np.linalg.norm(d) + 1e-9
    # a huge budget moves every pixel to its far edge
    assert np.allclose(np.abs(largest_in_domain(x, s, level=100.0)), far_edge(x))
    with pytest.raises(ValueError, match="level"):
        largest_in_domain(x, s, level=0.0)


def test_largest_in_domain_with_a_cap_is_the_largest_within_the_cube():
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, 12)
    x[:4] = 0.0
    s = np.exp(rng.normal(size=12))
    cap = 0.2
    d = largest_in_domain(x, s, level=1.0, cap=cap)
    assert np.abs(d).max() <= cap + 1e-12 and np.all(x + d >= -1e-12) and np.all(x + d <= 1 + 1e-12)
    assert region_norm(d, s, "l2") <= 1 + 1e-9
    reach = np.minimum(far_edge(x), cap)
    for _ in range(500):  # no random point of the cube, the domain and the ellipsoid is larger
        z = np.clip(x + rng.uniform(-1, 1, 12) * reach, 0, 1) - x
        z *= min(1.0, 1.0 / region_norm(z, s, "l2"))
        assert np.linalg.norm(z) <= np.linalg.norm(d) + 1e-9
    # a wide region: every pixel moves by its whole reach, the cube's corner towards the far edges
    assert np.allclose(np.abs(largest_in_domain(x, s * 100, level=1.0, cap=cap)), reach)
    with pytest.raises(ValueError, match="cap"):
        largest_in_domain(x, s, cap=0.0)


def test_semi_axes_in_range_stop_at_the_far_edge():
    x = np.array([0.0, 1.0, 0.5, 0.2])
    s = np.array([3.0, 0.4, 0.7, 0.1])
    assert np.allclose(semi_axes_in_range(x, s), [1.0, 0.4, 0.5, 0.1])
    assert semi_axes_in_range(x.reshape(2, 2), s.reshape(2, 2)).shape == (2, 2)
    with pytest.raises(ValueError, match="s must"):
        semi_axes_in_range(x, -s)


def test_linf_radius_is_the_largest_cube_inside_the_region():
    s = np.array([1.0, 2.0, 4.0])
    assert linf_radius(s, "l2") == pytest.approx((1 + 1 / 4 + 1 / 16) ** -0.5)
    assert linf_radius(s, "l1") == pytest.approx(1 / (1 + 1 / 2 + 1 / 4))
    assert linf_radius(np.full(9, 0.6), "l2") == pytest.approx(0.2)     # a ball of radius r: r / √d
    assert linf_radius(np.full(4, 0.6), "l1") == pytest.approx(0.15)    # an ℓ1 ball: r / d
    for norm in ("l2", "l1"):
        eps = linf_radius(s, norm)
        # every corner of the cube is on the region's boundary, and a slightly larger cube leaves it
        for signs in np.array(np.meshgrid(*[[-1, 1]] * 3)).T.reshape(-1, 3):
            assert region_norm(eps * signs, s, norm) == pytest.approx(1.0)
        assert region_norm(np.full(3, 1.01 * eps), s, norm) > 1
    with pytest.raises(ValueError, match="norm"):
        linf_radius(s, "linf")
    with pytest.raises(ValueError, match="s must"):
        linf_radius(np.array([1.0, 0.0]), "l2")
