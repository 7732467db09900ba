"""`ancer-certify checkpoints` (`tooling.checkpoints_command`), the setups' recipes (`ImageSetup.recipe_l2/_l1`) and
the data folder's environment variable (`models.data.data_dir_from`, `shown_path`)."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from test_paper_path import write_cifar_batches

from ancer_lite.models.data import DATA_DIR, DATA_DIR_VARIABLE, REPO_ROOT, data_dir_from, shown_path
from ancer_lite.models.recipes import get_recipe
from ancer_lite.runs.profiles import ImageSetup, Profile, get_profile
from ancer_lite.runs.setups import checkpoint_path
from ancer_lite.tooling import checkpoints_command as cc
from ancer_lite.tooling import cli


def test_plan_lists_each_missing_checkpoint_once_with_its_recipe(tmp_path):
    paper = get_profile("paper")
    todo = cc.plan(paper, tmp_path)
    setup = paper.images[0]
    # notebook 03's grid; RANCER's column shares its l2 σ = 0.25 checkpoint, listed once
    assert [(t.norm, t.sigma) for t in todo] == [("l2", s) for s in setup.sigmas_l2] + [("l1", s) for s in setup.sigmas_l1]
    assert {t.recipe.name for t in todo} == {"cifar10_l2_resnet18", "cifar10_l1_wrn40"}
    assert all(t.path == checkpoint_path(tmp_path, "cifar10", t.norm, t.sigma) for t in todo)
    # a user's own checkpoint is used as it is
    mine = checkpoint_path(tmp_path, "cifar10", "l2", 0.5)
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"user's")
    assert mine not in [t.path for t in cc.plan(paper, tmp_path)] and len(cc.plan(paper, tmp_path)) == len(todo) - 1
    # ImageNet's setups name no recipe: listed, with none
    assert all(t.recipe is None for t in cc.plan(get_profile("paper-imagenet"), tmp_path))


def test_the_estimate_is_steps_times_the_measured_step(monkeypatch):
    recipe = get_recipe("tiny_cifar10_l2")
    monkeypatch.setattr(cc, "seconds_per_step", lambda r, device, precision: 0.5 if r is recipe else 1.0)
    todo = [cc.Planned(Path(f"x{s}"), "cifar10", "l2", s, recipe) for s in (0.25, 0.5)]
    lines, total = cc.estimate(todo, {"cifar10": 1000}, None, torch.device("cpu"), "exact")
    steps = math.ceil(1000 / recipe.batch_size) * recipe.epochs
    assert total == pytest.approx(2 * steps * 0.5) and len(lines) == 2 and f"{recipe.epochs} epochs" in lines[0]
    _, total3 = cc.estimate(todo[:1], {"cifar10": 1000}, 3, torch.device("cpu"), "exact")
    assert total3 == pytest.approx(math.ceil(1000 / recipe.batch_size) * 3 * 0.5)


def test_seconds_per_step_is_measured_on_the_recipes_model():
    t = cc.seconds_per_step(replace(get_recipe("tiny_cifar10_l2"), batch_size=4), torch.device("cpu"))
    assert 0 < t < 30


def test_dry_run_prints_the_plan_and_missing_data_stops_before_training(tmp_path, capsys):
    common = ["checkpoints", "--profile", "paper-smoke", "--data-dir", str(tmp_path)]
    assert cli.main(common) == 2  # no CIFAR-10 here: every missing batch file named, nothing trained
    err = capsys.readouterr().err
    assert "data_batch_1" in err and "test_batch" in err and not (tmp_path / "checkpoints").exists()
    write_cifar_batches(tmp_path, per_batch=8)
    assert cli.main(common + ["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "3 checkpoint(s) missing" in out and "tiny_cifar10_l2" in out and "tiny_cifar10_l1" in out
    assert "total: about" in out and not (tmp_path / "checkpoints").exists()


def test_a_profile_without_recipes_names_each_checkpoint_to_place_by_hand(tmp_path, capsys):
    assert cli.main(["checkpoints", "--profile", "paper-imagenet", "--data-dir", str(tmp_path), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert err.count("no recipe trains it") == 6 and "imagenet/l2/sigma_0.25" in err


def test_setups_check_their_recipes():
    base = dict(name="c", dataset="cifar10", column="CIFAR-10", model="checkpoint")
    ImageSetup(**base, recipe_l2="cifar10_l2_resnet18", recipe_l1="cifar10_l1_wrn40")
    with pytest.raises(ValueError, match="recipe_l2 must train on cifar10 with gaussian noise"):
        ImageSetup(**base, recipe_l2="cifar10_l1_wrn40")
    with pytest.raises(ValueError, match="recipe_l1 must train on cifar10"):
        ImageSetup(**base, recipe_l1="fmnist_l1_resnet18")
    with pytest.raises(ValueError, match="recipe"):
        ImageSetup(**base, recipe_l2="no_such_recipe")
    with pytest.raises(ValueError, match="model='checkpoint' takes recipes"):
        ImageSetup("d", "digits", "CIFAR-10", recipe_l2="tiny")
    assert isinstance(get_profile("paper-smoke"), Profile)


def test_the_data_folder_comes_from_the_environment(tmp_path):
    assert data_dir_from({}) == REPO_ROOT / "data"
    assert data_dir_from({DATA_DIR_VARIABLE: str(tmp_path)}) == tmp_path.resolve()
    for bad in ("", "  ", str(tmp_path / "absent")):
        with pytest.raises(ValueError, match=f"{DATA_DIR_VARIABLE} must name an existing folder"):
            data_dir_from({DATA_DIR_VARIABLE: bad})
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match=repr(str(tmp_path / "file"))):
        data_dir_from({DATA_DIR_VARIABLE: str(tmp_path / "file")})


def test_shown_paths_are_never_absolute(tmp_path):
    assert shown_path(REPO_ROOT / "data" / "results" / "quick") == "data/results/quick"
    assert shown_path(DATA_DIR / "results" / "paper") in ("data/results/paper", f"${DATA_DIR_VARIABLE}/results/paper")
    assert shown_path(tmp_path / "elsewhere" / "x.tsv") == "x.tsv"


def test_a_job_array_trains_what_training_here_trains(tmp_path, capsys):
    """--cluster local: one submitit task per checkpoint, each the same checkpoint, bit for bit, as training here."""
    here, there = tmp_path / "here", tmp_path / "there"
    for root in (here, there):
        write_cifar_batches(root, per_batch=12)
    common = ["--profile", "paper-smoke", "--epochs", "1", "--max-train", "24", "--device", "cpu"]
    assert cli.main(["checkpoints", "--data-dir", str(here), *common]) == 0
    assert cli.main(["checkpoints", "--data-dir", str(there), *common, "--cluster", "local",
                     "--log-dir", str(tmp_path / "submitit"), "--time", "10"]) == 0
    out = capsys.readouterr().out
    assert out.count("done: cifar10") == 3 and "submitted 3 task(s)" in out
    for norm, sigma in (("l2", 0.25), ("l2", 1.0), ("l1", 0.25)):
        a, b = (torch.load(checkpoint_path(root, "cifar10", norm, sigma), weights_only=True) for root in (here, there))
        assert a["arch"] == b["arch"] == "cifar_resnet20"
        assert all(torch.equal(a["state_dict"][k], b["state_dict"][k]) for k in a["state_dict"])
