"""CONTRIBUTING.md's walkthrough of a new smoothing method, proven: the toy method of `tests/contrib/grid_sigma.py`
(one class) registered with one `registry.register` line certifies through the public API (`run_method`, with
ANCER's memory), shards and their merge, the command line and the figures' style, touching no other file."""
import dataclasses

import numpy as np
import pandas as pd
import pytest
from contrib.grid_sigma import GridSigma
from scipy.stats import norm

from ancer_lite.methods import registry
from ancer_lite.methods.registry import OptimSettings
from ancer_lite.report import style
from ancer_lite.runs import shards
from ancer_lite.runs.experiment import optimize_thetas, run_method
from ancer_lite.runs.profiles import ImageSetup
from ancer_lite.runs.setups import prepare
from ancer_lite.tooling.cli import main

THETA0 = 0.25
GRID = (0.5, 1.0, 2.0)
CERTIFY = dict(n0=20, n=400, alpha=0.01, num_classes=3, batch_size=200)


@pytest.fixture
def grid_method():
    """The toy method in the registry for one test (the registry line of the walkthrough), removed afterwards."""
    method = registry.register(GridSigma("grid_sigma", "Grid σ", purpose="grid_sigma", grid=GRID))
    yield method
    registry.unregister("grid_sigma")


def test_the_registry_lists_it_and_only_while_registered(grid_method):
    assert "grid_sigma" in registry.names(rotated=False)
    assert registry.method("grid_sigma") is grid_method
    assert style.method("grid_sigma").label == "Grid σ"
    registry.unregister("grid_sigma")
    assert "grid_sigma" not in registry.names()
    with pytest.raises(ValueError, match="method must be one of"):
        registry.method("grid_sigma")
    registry.register(grid_method)


def test_its_parameters_lie_on_its_grid_and_do_not_depend_on_the_chunk(grid_method, toy_classifier):
    """Each input's σ is one of the grid's multiples of θ0, the same for every pixel, and the same whatever the
    chunk the input is optimized in (each input draws from its own stream)."""
    model, x, _, idx = toy_classifier(6, 3)
    one = optimize_thetas(model, x, "gaussian", THETA0, "grid_sigma", OptimSettings(chunk=1), keys=idx)
    four = optimize_thetas(model, x, "gaussian", THETA0, "grid_sigma", OptimSettings(chunk=4), keys=idx)
    assert np.array_equal(one, four)
    per_input = one.reshape(len(x), -1)
    assert (per_input == per_input[:, :1]).all()
    assert set(np.round(per_input[:, 0] / THETA0, 6)) <= set(GRID)


def test_run_method_certifies_it_with_the_memory(grid_method, toy_classifier, tmp_path):
    """run_method: Cohen et al.'s radius σ Φ⁻¹(p_lower) with the method's σ before the memory; the memory (the
    method declares one) shrinks or keeps every certificate, never enlarges one."""
    model, x, y, idx = toy_classifier(8, 0)
    final = run_method(model, x, y, idx, "gaussian", THETA0, "grid_sigma", OptimSettings(), tmp_path / "run",
                       **CERTIFY)
    base = pd.read_csv(tmp_path / "run" / "certify.tsv", sep="\t").set_index("idx").loc[idx]
    theta = np.load(tmp_path / "run" / "theta.npy").reshape(len(x), -1)[:, 0]
    certified = base.predict.to_numpy() >= 0
    assert certified.any()
    expected = theta[certified] * norm.ppf(base.p_lower.to_numpy()[certified])
    assert np.allclose(base.radius.to_numpy()[certified], expected, rtol=1e-6)
    assert "no_memory" not in set(final.status)
    assert (final.radius.to_numpy() <= base.radius.to_numpy() + 1e-12).all()


def test_shards_merge_into_the_unsharded_run(grid_method, toy_classifier, tmp_path):
    model, x, y, idx = toy_classifier(6, 0)
    whole = run_method(model, x, y, idx, "gaussian", THETA0, "grid_sigma", OptimSettings(), tmp_path / "whole",
                       **CERTIFY)
    folders = {"grid_sigma": tmp_path / "sharded"}
    for k in range(2):
        shards.run_methods(model, x, y, idx, "gaussian", THETA0, ["grid_sigma"], OptimSettings(), folders, shard=k,
                           num_shards=2, **CERTIFY)
    merged = shards.merge_methods(model, x, y, idx, "gaussian", THETA0, ["grid_sigma"], OptimSettings(), folders, 2,
                                  **CERTIFY)["grid_sigma"]
    assert merged.drop(columns="time").equals(whole.drop(columns="time"))


def test_the_command_line_certifies_it(grid_method, tmp_path, capsys):
    setup = ImageSetup("digits", "digits", "CIFAR-10", hidden=(8,), epochs=1, sigmas_l2=(THETA0,), sigmas_l1=(),
                       num_test=10, num_val=4, n=200, val_n=100, iso_lr_grid=(0.01,), ancer_lr_grid=(0.04,),
                       iterations=2, samples=4)
    prepare(setup, seed=0, data_dir=tmp_path, cache="tiny")
    checkpoint = next((tmp_path / "cache" / "tiny").glob("*_l2_sigma0.25_seed0.pt"))
    out = tmp_path / "grid.tsv"
    args = ["certify", "digits", str(checkpoint), str(THETA0), str(out), "--method", "grid_sigma", "--max", "4",
            "--N0", "10", "--N", "200", "--batch", "100", "--device", "cpu", "--threads", "1"]
    assert main(args) == 0
    rows = pd.read_csv(out, sep="\t")
    assert len(rows) == 4 and "no_memory" not in set(rows.status)
    theta = np.load(tmp_path / "grid.tsv.work" / "grid_sigma" / "theta.npy").reshape(4, -1)
    assert set(np.round(theta[:, 0] / THETA0, 6)) <= set(GRID)


def test_register_refuses_a_taken_name_or_an_unknown_start():
    with pytest.raises(ValueError, match="method.name"):
        registry.register(GridSigma("ancer", "ANCER again"))
    with pytest.raises(ValueError, match="method.start"):
        registry.register(dataclasses.replace(GridSigma("grid2", "Grid 2"), start="nowhere"))
    with pytest.raises(TypeError, match="SmoothingMethod"):
        registry.register("grid_sigma")
    with pytest.raises(ValueError, match="start from it"):
        registry.unregister("isotropic")
