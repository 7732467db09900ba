"""`Smooth`'s input domain: images are certified in [0, 1] pixel space, where the noise is added, so an input
outside `domain` (a float image in 0..255) is refused with an error naming the argument, the values found, the
domain and the remedy, instead of being certified with another radius; values at 0 and 1 are inside, and
domain=None takes any finite input (the 2-D studies, the points of a certified region that `verify` evaluates)."""
import numpy as np
import pytest
import torch
from torch import nn

from ancer_lite.core.certify import PIXEL_DOMAIN, Smooth
from ancer_lite.evaluation.verify import smoothed_predictions
from ancer_lite.methods import ucan

SHAPE = (1, 4, 4)


def model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(16, 3)).eval()


def image() -> torch.Tensor:
    return torch.rand(SHAPE, generator=torch.Generator().manual_seed(1))


def test_the_default_domain_is_the_pixel_box():
    assert PIXEL_DOMAIN == (0.0, 1.0) and Smooth(model(), 3, SHAPE).domain == (0.0, 1.0)


@pytest.mark.parametrize("call", ["certify", "predict", "sample_counts", "lower_bound"])
def test_an_image_in_0_255_is_refused_naming_x_its_range_and_the_remedy(call):
    smooth = Smooth(model(), 3, SHAPE, seed=0)
    x = image() * 255
    args = {"certify": (0.25, 10, 100, 0.01), "predict": (0.25, 100, 0.01), "sample_counts": (0.25, 100),
            "lower_bound": (0.25, 10, 100, 0.01)}[call]
    with pytest.raises(ValueError) as info:
        getattr(smooth, call)(x, *args)
    message = str(info.value)
    assert message.startswith("x must lie in this Smooth's domain [0, 1]")
    assert f"got values from {np.float32(float(x.min()))!s} to {np.float32(float(x.max()))!s}" in message
    assert "divide 0..255 by 255" in message and "domain=None" in message


def test_vote_counts_names_points():
    points = torch.stack([image(), image() - 0.5])
    low, high = np.float32(float(points.min())), np.float32(float(points.max()))
    with pytest.raises(ValueError) as info:
        Smooth(model(), 3, SHAPE).vote_counts(points, 0.25, 10)
    assert str(info.value).startswith(f"points must lie in this Smooth's domain [0, 1], got values from {low!s} to {high!s};")
    assert low < 0


def test_values_at_the_domain_bounds_are_inside():
    x = image()
    x[0, 0, 0], x[0, 0, 1] = 0.0, 1.0
    Smooth(model(), 3, SHAPE).certify(x, 0.25, 10, 100, 0.01)
    with pytest.raises(ValueError, match=r"got values from 0\.0 to 1\.0000001;"):
        Smooth(model(), 3, SHAPE).certify(x + torch.where(x == 1.0, 1.2e-7, 0.0), 0.25, 10, 100, 0.01)
    with pytest.raises(ValueError, match=r"got values from -1e-300 to 1\.0;"):  # float64: no rounding to 0
        Smooth(model(), 3, SHAPE).certify(torch.where(x == 0.0, -1e-300, x.double()), 0.25, 10, 100, 0.01)


def test_domain_none_takes_any_finite_input_and_the_numbers_do_not_change():
    """The domain is a check only: an input inside it gets the same certificate with or without it."""
    x = image()
    inside = Smooth(model(), 3, SHAPE, seed=0).certify(x, 0.25, 10, 200, 0.01)
    unbounded = Smooth(model(), 3, SHAPE, seed=0, domain=None)
    assert unbounded.certify(x, 0.25, 10, 200, 0.01) == inside
    unbounded.certify(x * 255, 0.25, 10, 200, 0.01)
    Smooth(model(), 3, SHAPE, domain=(-1.0, 1.0)).certify(2 * x - 1, 0.25, 10, 100, 0.01)


@pytest.mark.parametrize("domain", [(1.0, 0.0), (0.0, float("nan")), "01", (0.0,), (True, 1.0)])
def test_a_bad_domain_is_refused(domain):
    with pytest.raises(ValueError, match=r"^domain must be None or a pair \(low, high\)"):
        Smooth(model(), 3, SHAPE, domain=domain)


def test_verification_points_may_leave_the_pixel_box():
    """`verify` evaluates points x + δ of a certified region, which leave [0, 1] near its faces."""
    points = torch.stack([image() + 0.3, image() - 0.3])
    top, frequency = smoothed_predictions(model(), points, 0.25, "gaussian", 50, torch.Generator().manual_seed(2))
    assert top.shape == (2,) and ((0 <= frequency) & (frequency <= 1)).all()


def test_ucan_refuses_an_image_in_0_255_unless_told_the_domain():
    npg = ucan.FixedNPG(np.full(SHAPE, 0.5))
    x = image() * 255
    with pytest.raises(ValueError, match=r"^x must lie in this Smooth's domain \[0, 1\]"):
        ucan.certify(model(), npg, x, "gaussian", 1.0, 10, 100, 0.01, 3, torch.Generator().manual_seed(3))
    ucan.certify(model(), npg, x, "gaussian", 1.0, 10, 100, 0.01, 3, torch.Generator().manual_seed(3), domain=None)
