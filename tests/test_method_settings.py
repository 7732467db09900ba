"""Each registered method's settings are one value of its own type (`SmoothingMethod.settings`), all of them held by
one `OptimSettings`: made and checked there, read by the method that owns them, and nothing else."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ancer_lite.methods import registry
from ancer_lite.methods.rancer import RancerSettings
from ancer_lite.methods.registry import AncerSettings, IsotropicSettings, OptimSettings, SmoothingMethod
from ancer_lite.runs.experiment import optimize_thetas, run_key


def test_every_method_with_a_settings_type_has_its_defaults():
    s = OptimSettings()
    assert [name for name, _ in s.methods] == [m for m in registry.names() if registry.method(m).settings]
    assert s.of("isotropic") == IsotropicSettings() and s.of("ancer") == AncerSettings()
    assert s.of("rancer") == RancerSettings()
    assert (s.of("isotropic").lr, s.of("ancer").lr, s.of("ancer").kappa) == (1e-3, 0.01, 2.0)
    assert OptimSettings({"ancer": AncerSettings()}) == s and hash(OptimSettings()) == hash(s)


def test_changed_and_with_budget_touch_only_what_they_name():
    s = OptimSettings(chunk=4).changed("ancer", lr=0.5)
    assert s.of("ancer").lr == 0.5 and s.of("isotropic") == IsotropicSettings() and s.chunk == 4
    b = s.with_budget(7, 9)
    assert [(v.iterations, v.samples) for _, v in b.methods] == [(7, 9)] * len(b.methods) and len(b.methods) == 3
    assert (b.of("ancer").lr, b.of("ancer").kappa, b.chunk) == (0.5, 2.0, 4)
    assert s.with_budget(iterations=3).of("isotropic").samples == IsotropicSettings().samples


def test_unknown_methods_and_values_of_another_type_are_refused():
    with pytest.raises(ValueError, match="methods"):
        OptimSettings({"bogus": IsotropicSettings()})
    with pytest.raises(TypeError, match="IsotropicSettings"):
        OptimSettings({"isotropic": AncerSettings()})
    with pytest.raises(ValueError, match="method must be one of"):
        OptimSettings().of("fixed")


def test_a_method_reads_only_its_own_settings(toy_classifier):
    """Isotropic DD's θ does not change with ANCER's settings; ANCER's changes with its own step."""
    model, x, _, idx = toy_classifier(4, 0)
    base = OptimSettings(chunk=4).with_budget(2, 8)
    iso = optimize_thetas(model, x, "gaussian", 0.25, "isotropic", base, keys=idx)
    other = optimize_thetas(model, x, "gaussian", 0.25, "isotropic", base.changed("ancer", lr=0.5, kappa=1.0),
                            keys=idx)
    assert np.array_equal(iso, other)
    a = optimize_thetas(model, x, "gaussian", 0.25, "ancer", base, isotropic=iso, keys=idx)
    b = optimize_thetas(model, x, "gaussian", 0.25, "ancer", base.changed("ancer", lr=0.05), isotropic=iso, keys=idx)
    assert not np.array_equal(a, b)


def test_a_method_registered_later_takes_its_defaults_and_the_key_sees_its_settings():
    """A new method with a settings type: OptimSettings made before it was registered give its defaults; made after,
    its value is part of the settings, so a run key changes with it."""

    @dataclasses.dataclass(frozen=True)
    class ToySettings:
        lr: float = 0.1

    before = OptimSettings()
    registry.register(SmoothingMethod("toy_settings", "Toy", settings=ToySettings, step="lr"))
    try:
        assert before.of("toy_settings") == ToySettings()
        after = OptimSettings()
        assert after.of("toy_settings") == ToySettings()
        changed = after.changed("toy_settings", lr=0.2)
        assert changed.of("toy_settings").lr == 0.2
        assert run_key("m", after) != run_key("m", changed)
    finally:
        registry.unregister("toy_settings")


def test_register_refuses_a_step_that_is_not_a_field_of_the_settings():
    with pytest.raises(ValueError, match="method.step"):
        registry.register(SmoothingMethod("toy_step", "Toy", settings=IsotropicSettings, step="gamma"))
    with pytest.raises(ValueError, match="method.step"):
        registry.register(SmoothingMethod("toy_step", "Toy", step="lr"))
    with pytest.raises(TypeError, match="method.settings"):
        registry.register(SmoothingMethod("toy_step", "Toy", settings=dict))
    assert "toy_step" not in registry.names()


def test_a_run_is_keyed_by_its_own_settings_and_its_starts():
    """Isotropic DD's run key does not change with ANCER's step; ANCER's changes with Isotropic DD's (its start);
    Fixed σ's with neither."""
    base = OptimSettings()
    other_ancer = base.changed("ancer", lr=0.5)
    other_iso = base.changed("isotropic", lr=0.5)
    assert run_key("m", base, method="isotropic") == run_key("m", other_ancer, method="isotropic")
    assert run_key("m", base, method="ancer") != run_key("m", other_ancer, method="ancer")
    assert run_key("m", base, method="ancer") != run_key("m", other_iso, method="ancer")
    assert run_key("m", base, method="fixed") == run_key("m", other_iso, method="fixed")
    assert base.record("isotropic") == {"isotropic": dataclasses.asdict(IsotropicSettings()), "chunk": 128}


class _Scaled(SmoothingMethod):
    """A toy method for the selection test: its start method's σ times (1 + its step)."""

    def optimize(self, model, x, noise, theta0, settings, seed, keys, start):
        return start * (1.0 + settings.of(self.name).lr)


def test_selection_searches_the_step_of_every_method_it_is_given(toy_classifier):
    """`select_settings` tunes each method of `grids` through its declared `step` field, a newly registered one too,
    and `check_selection_table` accepts the table it writes; a method whose start is not tuned is refused."""
    from ancer_lite.runs.selection import check_selection_table, select_settings

    @dataclasses.dataclass(frozen=True)
    class ScaledSettings:
        lr: float = 0.1

    model, x, y, _ = toy_classifier(6, 0)
    registry.register(_Scaled("toy_scaled", "Scaled", start="isotropic", settings=ScaledSettings, step="lr"))
    try:
        base = OptimSettings(chunk=6).with_budget(2, 8)
        grids = {"isotropic": [0.01, 0.1], "toy_scaled": [0.5, 2.0]}
        chosen, table = select_settings(model, x, y, "gaussian", 0.25, grids, base, n0=20, n=200, alpha=0.01,
                                        num_classes=3, widen=0)
        rows = table[table.method == "toy_scaled"]
        assert sorted(rows.lr_relative) == [0.5, 2.0] and rows.chosen.sum() == 1
        assert chosen.of("toy_scaled").lr == pytest.approx(0.25 * rows[rows.chosen].lr_relative.item())
        assert set(table.method) == {"isotropic", "toy_scaled"}
        check_selection_table(table, base, "t.tsv", grids=grids)
        with pytest.raises(ValueError, match="start method 'isotropic'"):
            select_settings(model, x, y, "gaussian", 0.25, {"toy_scaled": [0.5]}, base, n0=20, n=200, alpha=0.01,
                            num_classes=3)
    finally:
        registry.unregister("toy_scaled")
