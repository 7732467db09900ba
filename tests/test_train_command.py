"""`ancer-certify train` and what it stands on: the recipes (`models.recipes`), the step schedule, resumable training
that ends bit for bit where an uninterrupted run does, and the command's checkpoints, manifests, reruns and errors."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from ancer_lite.core.noise import uniform_lambda
from ancer_lite.methods.ucan_recipes import UCAN_RECIPES
from ancer_lite.models import train
from ancer_lite.models.architectures import load_checkpoint
from ancer_lite.models.data import FASHION_MNIST_FILES, FASHION_MNIST_VAL
from ancer_lite.models.recipes import INPUT_SHAPES, RECIPES, Recipe, get_recipe
from ancer_lite.models.small import SmallCNN
from ancer_lite.tooling.cli import main


@pytest.fixture(autouse=True)
def few_threads():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ---- the recipes -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(RECIPES))
def test_every_recipe_builds_its_model_for_its_dataset_and_says_where_it_comes_from(name):
    recipe = RECIPES[name]
    assert recipe.name == name and len(recipe.source) > 40
    torch.manual_seed(0)
    model = recipe.build().eval()
    with torch.no_grad():
        out = model(torch.rand(1, *INPUT_SHAPES[recipe.dataset]))
    assert out.shape == (1, recipe.num_classes) and torch.isfinite(out).all()
    assert recipe.scale(0.5) == (0.5 if recipe.noise == "gaussian" else pytest.approx(uniform_lambda(0.5)))
    assert name in recipe.summary() or recipe.dataset in recipe.summary()


def test_the_papers_recipes_hold_appendix_e_values():
    e1, wrn, r50 = RECIPES["cifar10_l2_resnet18"], RECIPES["cifar10_l1_wrn40"], RECIPES["imagenet_l1_resnet50"]
    assert (e1.arch, e1.noise, e1.epochs, e1.batch_size, e1.lr, e1.momentum) == (
        "cifar_resnet18", "gaussian", 120, 256, 1e-2, 0.9)
    assert (wrn.arch, wrn.noise, wrn.epochs, wrn.batch_size, wrn.lr, wrn.schedule, wrn.gamma) == (
        "wrn40", "uniform", 120, 128, 1e-2, "step", 0.1)
    assert (r50.epochs, r50.lr, r50.step_size, r50.gamma, r50.batch_size, r50.stability > 0) == (
        90, 0.1, 30, 0.1, 256, True)
    assert "E.1" in e1.source and "Cohen" in e1.source and "E.2" in wrn.source and "ANCER" in wrn.source
    # RS4A's stability term between two noisy copies for the l1 recipes; CIFAR-10's random crops and flips
    assert (wrn.stability_pair, r50.stability_pair, RECIPES["fmnist_l1_resnet18"].stability_pair) == ("noisy",) * 3
    assert (e1.augment, wrn.augment, r50.augment) == ("crop_flip", "crop_flip", "none")
    assert RECIPES["mnist_l1_cnn"].stability_pair == "clean"   # the quick profile's own models are unchanged


@pytest.mark.parametrize("field, value, match", [
    ("dataset", "svhn", "dataset"), ("arch", "wrn40", "arch"), ("noise", "laplace", "noise"),
    ("schedule", "linear", "schedule"), ("step_size", 5, "step_size"), ("source", " ", "source"),
    ("epochs", 0, "epochs"), ("stability_pair", "both", "stability_pair"), ("augment", "mixup", "augment")])
def test_a_recipe_refuses_bad_fields_naming_them(field, value, match):
    values = RECIPES["fmnist_l2_resnet18"].values() | {field: value}
    with pytest.raises(ValueError, match=match):
        Recipe(**values)
    with pytest.raises(ValueError, match="recipe"):
        get_recipe("nope")


# ---- the schedule and resumable training -------------------------------------------------------------------------

X = torch.rand(24, 1, 8, 8, generator=torch.Generator().manual_seed(0))
Y = torch.arange(24) % 3


def test_the_step_schedule_multiplies_the_rate_by_gamma_every_step_size_epochs(tmp_path):
    model = SmallCNN((1, 8, 8), 3)
    _, opt, sched = train.sgd_setup(model, X, Y, 7, 8, 0.1, schedule="step", step_size=3, gamma=0.1)
    rates = []
    for _ in range(7):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()  # no gradients: the weights stay, the scheduler sees the step it expects
        sched.step()
    assert rates == pytest.approx([0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.001])
    # train_classifier steps it once per epoch: the state after 3 epochs of step 1, gamma 0.5 holds 0.1 / 8
    train.train_classifier(model, X, Y, "gaussian", 0.25, epochs=3, batch_size=8, lr=0.1, schedule="step",
                           step_size=1, gamma=0.5, state_dir=tmp_path)
    state = torch.load(tmp_path / train.STATE_FILE, weights_only=True)
    assert state["epoch"] == 3 and state["scheduler"]["_last_lr"] == pytest.approx([0.0125])


def _run(state_dir, **kw):
    torch.manual_seed(0)
    model = SmallCNN((1, 8, 8), 3)
    args = dict(noise="uniform", scale=0.4, epochs=3, batch_size=8, lr=0.05, stability=1.0, seed=5,
                schedule="step", step_size=2, gamma=0.5, nesterov=True, state_dir=state_dir) | kw
    return train.train_classifier(model, X, Y, **args)


class Killed(Exception):
    pass


def test_a_run_killed_after_an_epoch_resumes_to_the_uninterrupted_model_bit_for_bit(tmp_path):
    whole = _run(tmp_path / "whole").state_dict()

    def kill_after_two(done, total):
        if done == 2:
            raise Killed

    with pytest.raises(Killed):
        _run(tmp_path / "killed", progress=kill_after_two)
    assert torch.load(tmp_path / "killed" / train.STATE_FILE, weights_only=True)["epoch"] == 2
    seen = []
    resumed = _run(tmp_path / "killed", progress=lambda d, t: seen.append(d)).state_dict()
    assert seen == [2, 3]
    assert all(torch.equal(whole[k], resumed[k]) for k in whole)


def test_a_run_killed_inside_an_epoch_resumes_to_the_uninterrupted_model_bit_for_bit(tmp_path, monkeypatch):
    whole = _run(tmp_path / "whole", schedule="cosine", step_size=30, gamma=0.1).state_dict()
    plain = train.minibatches
    calls = []

    def dies_in_epoch_two(*args):
        calls.append(1)
        for i, batch in enumerate(plain(*args)):
            if len(calls) == 2 and i == 1:
                raise Killed
            yield batch

    monkeypatch.setattr(train, "minibatches", dies_in_epoch_two)
    with pytest.raises(Killed):
        _run(tmp_path / "killed", schedule="cosine")
    monkeypatch.setattr(train, "minibatches", plain)
    assert torch.load(tmp_path / "killed" / train.STATE_FILE, weights_only=True)["epoch"] == 1
    resumed = _run(tmp_path / "killed", schedule="cosine").state_dict()
    assert all(torch.equal(whole[k], resumed[k]) for k in whole)
    # the same run without a state folder trains the same model
    bare = _run(None, schedule="cosine").state_dict()
    assert all(torch.equal(whole[k], bare[k]) for k in whole)


def test_a_state_of_other_settings_is_refused_naming_them(tmp_path):
    _run(tmp_path, epochs=1)
    with pytest.raises(ValueError, match=r"differs in .*seed \(state: 5, now: 6\)"):
        _run(tmp_path, epochs=1, seed=6)


def test_bf16_training_runs_on_the_cpu(tmp_path):
    model = _run(tmp_path, epochs=1, precision="bf16")
    assert all(torch.isfinite(p).all() for p in model.parameters())
    with pytest.raises(ValueError, match="precision"):
        _run(tmp_path / "other", epochs=1, precision="fp8")


# ---- the command -----------------------------------------------------------------------------------------------

def test_train_writes_a_checkpoint_certify_reads_skips_a_rerun_and_refuses_another_seed(tmp_path, capsys,
                                                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "digits", "tiny", "OUT", "--sigma", "0.25", "--max-train", "64"]) == 0
    ckpt = Path("OUT/sigma_0.25/checkpoint.pth.tar")
    record = json.loads(Path(f"{ckpt}.json").read_text())
    s = record["settings"]
    assert (s["dataset"], s["seed"], s["sigma"], s["scale"], s["max_train"], s["precision"]) == (
        "digits", 0, 0.25, 0.25, 64, "exact")
    assert s["recipe"] == RECIPES["tiny"].values() and len(s["data_sha256"]) == 64
    assert record["epochs_done"] == 2 and record["device"] == "cpu" and "torch" in record["versions"]
    assert record["wall_time_s"] > 0 and record["inputs"] == 64
    assert set(torch.load(ckpt, weights_only=True)) == {"arch", "state_dict"}
    capsys.readouterr()
    assert main(["certify", "digits", str(ckpt), "0.25", "out.tsv", "--method", "fixed", "--max", "2", "--N", "100",
                 "--N0", "10"]) == 0
    assert Path("out.tsv").read_text().count("\n") == 3
    before = ckpt.read_bytes()
    assert main(["train", "digits", "tiny", "OUT", "--sigma", "0.25", "--max-train", "64"]) == 0
    assert "skipped" in capsys.readouterr().out and ckpt.read_bytes() == before
    assert main(["train", "digits", "tiny", "OUT", "--sigma", "0.25", "--max-train", "64", "--seed", "1"]) == 1
    err = capsys.readouterr().err
    assert "differs in" in err and "seed (was 0, now 1)" in err and ckpt.read_bytes() == before


def write_fmnist(root: Path, count: int = FASHION_MNIST_VAL + 12, split: str = "train") -> None:
    """Generated Fashion-MNIST IDX files (gzipped) of `count` images of `split` (the training split needs more than
    the FASHION_MNIST_VAL images held out for validation)."""
    rng = np.random.default_rng(0)
    arrays = (rng.integers(0, 256, (count, 28, 28)), np.arange(count) % 10)
    for name, arr in zip(FASHION_MNIST_FILES[split], arrays):
        head = bytes([0, 0, 8, arr.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in arr.shape)
        (root / f"{name}.gz").write_bytes(gzip.compress(head + arr.astype(np.uint8).tobytes()))


def test_fmnist_trains_from_a_folder_of_idx_files_into_a_checkpoint_load_checkpoint_reads(tmp_path, capsys):
    (tmp_path / "fashion-mnist").mkdir()
    write_fmnist(tmp_path / "fashion-mnist")  # --data-dir is the data folder, as for certify and --profile fmnist
    out = tmp_path / "out"
    assert main(["train", "fmnist", "fmnist_l1_resnet18", str(out), "--sigma", "0.5", "--data-dir", str(tmp_path),
                 "--epochs", "1", "--max-train", "8"]) == 0
    ckpt = out / "sigma_0.5" / "checkpoint.pth.tar"
    record = json.loads(Path(f"{ckpt}.json").read_text())
    assert record["epochs_override"] == 1 and record["settings"]["recipe"]["epochs"] == 1
    assert record["settings"]["scale"] == pytest.approx(uniform_lambda(0.5))
    assert "SHA-256 not checked" in record["data_source"] and record["inputs"] == 8
    assert f"the last {FASHION_MNIST_VAL:,} held out for validation" in record["data_source"]
    model = load_checkpoint(ckpt)
    with torch.no_grad():
        assert model(torch.rand(2, 1, 28, 28)).shape == (2, 10)


def test_help_documents_every_recipe(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["train", "--help"])
    assert exit.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: ancer-certify train") and "examples:" in text
    assert "--cluster {slurm,local}" in text and "--start PATH" in text
    for recipe in RECIPES.values():
        assert recipe.name in text and recipe.arch in text
    for recipe in UCAN_RECIPES.values():
        assert f"  {recipe.name}\n" in text
    assert text.count("source: ") == len(RECIPES) + len(UCAN_RECIPES)


@pytest.mark.parametrize("argv, message", [
    (["train", "digits", "nope", "o", "--sigma", "0.25"], "argument RECIPE: invalid choice: 'nope'"),
    (["train", "digits", "cifar10_l2_resnet18", "o", "--sigma", "0.25"],
     "argument RECIPE: 'cifar10_l2_resnet18' trains on cifar10, not digits"),
    (["train", "digits", "tiny", "o", "--sigma", "0"], "argument --sigma: must be a finite number > 0, got '0'"),
    (["train", "digits", "tiny", "o", "--sigma", "0.25", "0.25"], "argument --sigma: each noise level once"),
    (["train", "digits", "tiny", "o"], "the following arguments are required: --sigma"),
    (["train", "digits", "tiny", "o", "--sigma", "0.25", "--epochs", "0"], "argument --epochs: must be an integer"),
    (["train", "cifar10", "cifar10_l2_resnet18", "o", "--sigma", "0.25", "--data-dir", "{tmp}"],
     "argument --data-dir: CIFAR-10 train data not found"),
    (["train", "fmnist", "fmnist_l2_resnet18", "o", "--sigma", "0.25", "--data-dir", "{tmp}"],
     "argument --data-dir: {tmp} has no fashion-mnist/ folder of Fashion-MNIST's IDX files"),
    (["train", "fmnist", "fmnist_l2_resnet18", "o", "--sigma", "0.25", "--data-dir", "{tmp}/empty"],
     "argument --data-dir: Fashion-MNIST train images not found"),
    (["train", "fmnist", "fmnist_l2_resnet18", "o", "--sigma", "0.25", "--data-dir", "{tmp}/direct"],
     "holds the IDX files itself"),
    (["train", "imagenet", "imagenet_l2_resnet50", "o", "--sigma", "0.25", "--data-dir", "{tmp}"],
     "argument --data-dir: image folder not found: {tmp}/imagenet/train"),
])
def test_bad_arguments_exit_2_naming_them(argv, message, tmp_path, capsys):
    (tmp_path / "empty" / "fashion-mnist").mkdir(parents=True)  # the data folder's fashion-mnist/ without its files
    (tmp_path / "direct").mkdir()
    write_fmnist(tmp_path / "direct", count=FASHION_MNIST_VAL + 1)  # the IDX files given as the data folder
    with pytest.raises(SystemExit) as exit:
        main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert exit.value.code == 2
    assert message.replace("{tmp}", str(tmp_path)) in capsys.readouterr().err
