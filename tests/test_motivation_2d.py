"""motivation_2d.py (notebook 02: ANCER Figure 1, blog Figure 2): the inputs are chosen by the stated rule, area
ratios are ratios of closed-form areas, the optimal regions of the blog's toys match their geometry and contain no
point of the other class, verification and Algorithm 1 report what they should. Synthetic regions keep it fast;
`tests/test_rancer_2d.py` covers `certify_methods` itself."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ancer_lite.core.names import ABSTAIN, NORM_OF
from ancer_lite.core.regions import CertifiedRegion
from ancer_lite.models.small import ToyClassifier
from ancer_lite.studies import motivation_2d as m2


def _region(method: str, semi_axes: tuple[float, float], noise: str = "gaussian", center=(0.0, 0.0),
            prediction: int = 0) -> CertifiedRegion:
    s = np.asarray(semi_axes, np.float64)  # `method` names the region for the reader of the test only
    return CertifiedRegion(np.asarray(center, np.float64), s, 0.0 if prediction == ABSTAIN else 1.0, NORM_OF[noise],
                           prediction)


def test_figure1_points_follow_the_rule():
    x = torch.tensor([[0.5, 0.0], [0.1, -0.1], [0.0, 1.4], [0.3, 1.5], [0.05, 0.0], [2.5, 0.0]])
    y = torch.tensor([0, 0, 1, 1, 1, 0])
    points = m2.figure1_points(x, y)
    assert list(points) == ["centre", "ring"]
    centre, ring = points["centre"], points["ring"]
    assert centre[1:] == (0, 1) and torch.equal(centre[0], x[1])    # class 0 closest to the origin (not class 1's)
    assert ring[1:] == (1, 2) and torch.equal(ring[0], x[2])        # class 1 closest to (0, 1.5)


def test_figure1_points_rejects_bad_input():
    with pytest.raises(ValueError, match="x_test"):
        m2.figure1_points(torch.zeros(3, 3), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="both class"):
        m2.figure1_points(torch.zeros(3, 2), torch.zeros(3, dtype=torch.long))


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_area_ratio_is_the_ratio_of_closed_form_areas(norm):
    noise = m2.NOISE_OF[norm]
    results = {("ring", norm): {"isotropic": _region("isotropic", (0.4, 0.4), noise),
                                "ancer": _region("ancer", (0.9, 0.3), noise)}}
    assert m2.area_ratios(results)[("ring", norm)] == pytest.approx(0.9 * 0.3 / 0.4 ** 2, rel=1e-12)
    table = m2.certificates_table(results)
    assert table["method"].tolist() == ["isotropic", "ancer"]
    area = {"l2": math.pi * 0.9 * 0.3, "l1": 2 * 0.9 * 0.3}[norm]
    assert np.exp(table["log_area"].iloc[1]) == pytest.approx(area, rel=1e-12)


def test_blog_toys_have_the_stated_geometry():
    toys = m2.blog_toys()
    probe = torch.tensor([[0.0, 0.0], [0.49, 0.0], [0.51, 0.0], [0.24, 0.0], [0.26, 0.0], [0.0, 1.49], [0.0, 1.51]])
    with torch.no_grad():
        top = toys["top"](probe).argmax(1).tolist()
        bottom = toys["bottom"](probe).argmax(1).tolist()
    assert top == [0, 0, 1, 0, 0, 0, 1]                             # half-plane x1 >= 0.5, exterior r >= 1.5
    assert bottom == [0, 0, 0, 0, 1, 0, 1]                          # peak: disc of radius 0.1 around (0.35, 0)


@pytest.fixture(scope="module")
def optimal():
    return {k: m2.optimal_regions(toy, resolution=161) for k, toy in m2.blog_toys().items()}


def test_optimal_ball_matches_the_distance_to_the_other_class(optimal):
    spacing = 2 * m2.BLOG_HALF_WIDTH / 160
    # the true distances are 0.5 (half-plane) and 0.25 (peak); the nearest grid node of the other class lies at
    # most one spacing further, and the result loses a margin of two spacings (so it is sound)
    assert 0.5 - 2 * spacing - 1e-12 <= optimal["top"]["ball"] <= 0.5 - spacing + 1e-12
    assert 0.25 - 2 * spacing - 1e-12 <= optimal["bottom"]["ball"] <= 0.25 - spacing + 1e-12
    for o in optimal.values():
        a, b = o["ellipse"]
        assert o["ratio"] == pytest.approx(a * b / o["ball"] ** 2)
        assert a * b >= o["ball"] ** 2                                # the ball is one of the ellipses searched
    assert optimal["bottom"]["ratio"] > optimal["top"]["ratio"] > 1


def test_optimal_regions_contain_no_point_of_the_other_class(optimal):
    table = m2.optimal_verification_table(m2.blog_toys(), optimal, per_axis=41)
    assert list(table.columns) == m2.VERIFICATION_COLUMNS
    assert len(table) == 4 and (table["violations"] == 0).all() and (table["points_checked"] > 100).all()
    # the check has power: the bottom ball grown past the peak contains class-1 points
    pts, bad = m2.base_classifier_violations(m2.blog_toys()["bottom"], np.zeros(2), np.full(2, 0.4), 0, 41)
    assert bad > 0 and pts > bad


def test_verification_table_flags_a_region_that_crosses_the_boundary():
    toy = ToyClassifier(halfplanes=[((1.0, 0.0), 0.5)])
    safe = _region("isotropic", (0.2, 0.2))
    crossing = _region("ancer", (0.8, 0.2))
    table = m2.verification_table({"safe": (toy, safe), "crossing": (toy, crossing)}, points_per_axis=11,
                                  n_check=200, seed=0)
    assert table["certificate"].tolist() == ["safe", "crossing"]
    assert table["violations"].tolist()[0] == 0 and table["violations"].tolist()[1] > 0


def test_memory_decisions_run_in_test_set_order():
    points = {"centre": (torch.tensor([0.0, 0.0]), 0, 7), "ring": (torch.tensor([0.0, 1.0]), 1, 3)}
    far = {("centre", "l2"): {"ancer": _region("ancer", (0.3, 0.3), prediction=0)},
           ("ring", "l2"): {"ancer": _region("ancer", (0.3, 0.3), center=(0.0, 1.0), prediction=1)}}
    assert m2.memory_decisions(points, far, "l2") == [("ring", "kept"), ("centre", "kept")]
    # regions of different classes that overlap: the later input (centre) loses its region
    near = {k: {"ancer": _region("ancer", (0.8, 0.8), center=tuple(points[k[0]][0].tolist()),
                                 prediction=points[k[0]][1])} for k in far}
    decisions = dict(m2.memory_decisions(points, near, "l2"))
    assert decisions["ring"] == "kept" and decisions["centre"] != "kept"
