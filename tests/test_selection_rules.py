"""The selection's two rules that its readers share: step sizes reused as multiples of θ (`steps_at`) and the
smallest larger step the eligibility rule refused (`refused_step`)."""
import math

import pandas as pd
import pytest

from ancer_lite.methods.registry import OptimSettings
from ancer_lite.runs.selection import ACCURACY_SLACK, refused_step, steps_at


def test_steps_at_keeps_the_multiples_of_theta():
    chosen = OptimSettings().changed("isotropic", lr=0.02, iterations=7).changed("ancer", lr=0.5, kappa=3.0)
    assert steps_at(chosen, 0.5, 0.5) is chosen
    for theta in (0.25, 1.0, 0.7):
        at = steps_at(chosen, 0.5, theta)
        # each step divided by its θ is the same multiple as at θ0; nothing else moves
        assert at.of("isotropic").lr / theta == pytest.approx(chosen.of("isotropic").lr / 0.5, rel=1e-12)
        assert at.of("ancer").lr / theta == pytest.approx(chosen.of("ancer").lr / 0.5, rel=1e-12)
        assert (at.of("isotropic").iterations, at.of("ancer").kappa, at.chunk) == (7, 3.0, chosen.chunk)
    # going there and back is the identity
    back = steps_at(steps_at(chosen, 0.5, 0.125), 0.125, 0.5)
    assert math.isclose(back.of("ancer").lr, chosen.of("ancer").lr) and math.isclose(back.of("isotropic").lr, chosen.of("isotropic").lr)


@pytest.mark.parametrize("name, value", [("theta0", 0.0), ("theta", -1.0), ("theta", math.nan)])
def test_steps_at_names_a_bad_theta(name, value):
    args = {"theta0": 0.5, "theta": 0.25, name: value}
    with pytest.raises(ValueError, match=name):
        steps_at(OptimSettings(), **args)


def table(rows):
    return pd.DataFrame(rows, columns=["method", "lr_relative", "accuracy", "chosen"])


def test_refused_step_is_the_smallest_larger_step_below_the_floor():
    iso = [("isotropic", 0.01, 0.9, True), ("isotropic", 0.1, 0.95, False)]   # the chosen start sets the floor
    ancer = [("ancer", 0.1, 0.9, False), ("ancer", 0.4, 0.9, True), ("ancer", 0.8, 0.86, False),
             ("ancer", 1.6, 0.8, False), ("ancer", 3.2, 0.5, False), ("ancer", 0.05, 0.1, False)]
    got = refused_step(table(iso + ancer))
    # 0.8 θ lost 4 points (within the slack of 5), 1.6 θ lost 10: the first refused; 0.05 θ lies below the choice
    assert ACCURACY_SLACK == 0.05 and got.lr_relative == 1.6 and got.accuracy == 0.8
    assert refused_step(table(iso + ancer), slack=0.03).lr_relative == 0.8
    assert refused_step(table(iso + ancer), slack=0.5) is None


def test_refused_step_names_what_it_cannot_read():
    rows = table([("isotropic", 0.01, 0.9, True), ("ancer", 0.4, 0.9, False)])
    with pytest.raises(ValueError, match="no chosen row"):
        refused_step(rows)
    with pytest.raises(ValueError, match="starts from no other method"):
        refused_step(rows, "isotropic")
    with pytest.raises(ValueError, match="method"):
        refused_step(rows, "nonesuch")
