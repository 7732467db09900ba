"""UCAN's noise generators trained as the classifiers are: `ucan.train_ucan` resumes after a kill to the models of an
uninterrupted run bit for bit, the UCAN recipes (`methods.ucan_recipes`), and `ancer-certify train` with a UCAN recipe
and `--start`, whose checkpoint holds the fine-tuned classifier (read as any other) and the NPG (`load_npg`)."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch

from ancer_lite.methods import ucan
from ancer_lite.methods.ucan_recipes import NPG_KEY, RECIPE_KINDS, UCAN_RECIPES, UcanRecipe, load_npg
from ancer_lite.models import train
from ancer_lite.models.recipes import INPUT_SHAPES
from ancer_lite.tooling.cli import load_model, main


@pytest.fixture(autouse=True)
def few_threads():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


X = torch.rand(24, 1, 6, 6, generator=torch.Generator().manual_seed(0))
Y = torch.arange(24) % 3


class Killed(Exception):
    pass


def _run(state_dir, kind="universal", **kw):
    """A classifier and an NPG of `kind`, trained by §4.2's loss from seeded initial weights."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(36, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    npg = ucan.build_npg(kind, (1, 6, 6), gamma=2.0, growth=2)
    args = dict(noise="laplace", lam=0.5, epochs=3, batch_size=8, seed=3, state_dir=state_dir) | kw
    model, npg = ucan.train_ucan(model, npg, X, Y, **args)
    return {**{f"model.{k}": v for k, v in model.state_dict().items()},
            **{f"npg.{k}": v for k, v in npg.state_dict().items()}}


def _same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("kind", ["universal", "input", "pattern"])
def test_a_ucan_run_killed_after_an_epoch_resumes_to_the_uninterrupted_models_bit_for_bit(tmp_path, kind):
    whole = _run(tmp_path / "whole", kind)

    def kill_after_two(done, total):
        if done == 2:
            raise Killed

    with pytest.raises(Killed):
        _run(tmp_path / "killed", kind, progress=kill_after_two)
    state = torch.load(tmp_path / "killed" / train.STATE_FILE, weights_only=True)
    # the trained NPGs keep their Adam state beside the classifier's; the fixed pattern has none
    assert state["epoch"] == 2 and sorted(state["extra"]) == (["npg"] if kind == "pattern" else ["npg", "npg_optimizer"])
    seen = []
    resumed = _run(tmp_path / "killed", kind, progress=lambda d, t: seen.append(d))
    assert seen == [2, 3]
    assert _same(whole, resumed)
    assert _same(whole, _run(None, kind))  # the state folder changes nothing
    # and the NPG did train: its state differs from the initial one
    torch.manual_seed(0)
    torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(36, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    fresh = ucan.build_npg(kind, (1, 6, 6), gamma=2.0, growth=2).state_dict()
    assert any(not torch.equal(fresh[k], whole[f"npg.{k}"]) for k in fresh) == (kind != "pattern")


def test_a_ucan_state_of_other_settings_or_parts_is_refused_naming_them(tmp_path):
    _run(tmp_path, epochs=1)
    with pytest.raises(ValueError, match=r"differs in .*lam \(state: 0\.5, now: 0\.25\)"):
        _run(tmp_path, epochs=1, lam=0.25)
    with pytest.raises(ValueError, match=r"differs in .*npg \(state: 'UniversalNPG', now: 'InputDependentNPG'\)"):
        _run(tmp_path, "input", epochs=1)
    # a state holding parts this run does not train (a classifier-only run reading a UCAN state)
    model = torch.nn.Linear(2, 2)
    gen, opt, sched = train.sgd_setup(model, torch.zeros(4, 2), torch.zeros(4, dtype=torch.long), 1, 2, 0.1)
    train.save_training_state(tmp_path / "s.pt", 1, model, opt, sched, gen, {}, {"npg": torch.nn.Linear(1, 1)})
    with pytest.raises(ValueError, match=r"s\.pt is the state of another kind of training run: it holds the parts "
                                         r"\['npg'\] beside the model, this run trains \[\]"):
        train.load_training_state(tmp_path / "s.pt", model, opt, sched, gen, {})


def test_bf16_ucan_training_runs_on_the_cpu_and_keeps_the_npg_in_float32():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(36, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    npg = ucan.build_npg("input", (1, 6, 6), growth=2)
    model, npg = ucan.train_ucan(model, npg, X, Y, lam=0.5, epochs=1, batch_size=8, precision="bf16")
    assert all(torch.isfinite(p).all() and p.dtype == torch.float32 for p in [*model.parameters(), *npg.parameters()])
    with torch.no_grad():
        sigma, mu = npg(X[:2])
    assert sigma.dtype == mu.dtype == torch.float32


# ---- the recipes -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(UCAN_RECIPES))
def test_every_ucan_recipe_builds_its_npg_for_every_dataset_and_says_where_it_comes_from(name):
    recipe = UCAN_RECIPES[name]
    assert recipe.name == name and recipe.kind in RECIPE_KINDS and len(recipe.source) > 40
    for shape in set(INPUT_SHAPES.values()) - {INPUT_SHAPES["imagenet"]}:
        torch.manual_seed(0)
        with torch.no_grad():
            sigma, mu = recipe.build_npg(shape)(torch.rand(2, *shape))
        assert sigma.shape == mu.shape == (2, *shape) and (sigma > 0).all()
        # λ makes every coordinate's std σ where the NPG's σ_i is 1: σ itself for the recipes' Gaussian noise
        assert recipe.lam(0.25, int(np.prod(shape))) == pytest.approx(0.25)


def test_the_ucan_recipes_hold_the_papers_gammas():
    assert UCAN_RECIPES["ucan_universal"].gamma == 5.0 and UCAN_RECIPES["ucan_input"].gamma == 1.0  # UCAN §5
    assert UCAN_RECIPES["ucan_pattern"].gamma is None and UCAN_RECIPES["ucan_pattern"].kappa == 1.0  # Figure 3
    with pytest.raises(ValueError, match="gamma belongs to the trained NPGs"):
        UcanRecipe("p", "pattern", 1, 4, 0.01, 0.001, 1.0, "a test", gamma=1.0)


# ---- the command -----------------------------------------------------------------------------------------------

def test_train_with_a_ucan_recipe_fine_tunes_each_sigmas_classifier_and_writes_both_into_one_checkpoint(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "digits", "tiny", "CLS", "--sigma", "0.25", "0.5", "--max-train", "48"]) == 0
    argv = ["train", "digits", "tiny_ucan_input", "UCAN", "--sigma", "0.25", "0.5", "--max-train", "48",
            "--start", "CLS"]
    assert main(argv) == 0
    for sigma in (0.25, 0.5):
        ckpt = Path(f"UCAN/sigma_{sigma}/checkpoint.pth.tar")
        record = json.loads(Path(f"{ckpt}.json").read_text())
        start = Path(f"CLS/sigma_{sigma}/checkpoint.pth.tar")
        assert record["start"] == str(start) and record["settings"]["scale"] == sigma
        assert record["settings"]["recipe"] == asdict(UCAN_RECIPES["tiny_ucan_input"])
        assert len(record["settings"]["start_sha256"]) == 64 and record["epochs_done"] == 2
        held = torch.load(ckpt, weights_only=True)
        assert set(held) == {"arch", "state_dict", NPG_KEY} and held["arch"] == "small_cnn"
        # the classifier reads as any other and was fine-tuned from its start; the NPG reads back with its noise
        model, before = load_model("digits", ckpt, (1, 8, 8)), load_model("digits", start, (1, 8, 8))
        assert any(not torch.equal(a, b) for a, b in zip(model.state_dict().values(), before.state_dict().values()))
        npg, noise, lam, a = load_npg(ckpt)
        assert (type(npg).__name__, noise, lam, a) == ("InputDependentNPG", "gaussian", sigma, None)
        # the same run in the API: the same weights bit for bit
        recipe = UCAN_RECIPES["tiny_ucan_input"]
        torch.manual_seed(0)
        api_npg = recipe.build_npg((1, 8, 8))
        from ancer_lite.methods.ucan_recipes import train_ucan_recipe
        from ancer_lite.tooling.train_command import load_training
        split, _ = load_training("digits", None, 0, 48)
        api_model, api_npg = train_ucan_recipe(recipe, before, api_npg, split.x, split.y, sigma)
        assert all(torch.equal(v, api_npg.state_dict()[k]) for k, v in npg.state_dict().items())
        assert all(torch.equal(v, api_model.state_dict()[k]) for k, v in model.state_dict().items())
        # and certifies with UCAN's Algorithm 1
        cert = ucan.certify(model, npg, split.x[0], noise, lam, 10, 100, 0.01, 10, torch.Generator().manual_seed(0))
        assert cert.n == 100
    capsys.readouterr()
    before = Path("UCAN/sigma_0.25/checkpoint.pth.tar").read_bytes()
    assert main(argv) == 0 and capsys.readouterr().out.count("skipped") == 2
    # a changed start classifier is another run: refused, naming it
    assert main(["train", "digits", "tiny", "CLS", "--sigma", "0.25", "--max-train", "40"]) == 1
    Path("CLS/sigma_0.25/checkpoint.pth.tar").write_bytes(Path("CLS/sigma_0.5/checkpoint.pth.tar").read_bytes())
    assert main(argv) == 1
    assert "start_sha256 (was '" in capsys.readouterr().err
    assert Path("UCAN/sigma_0.25/checkpoint.pth.tar").read_bytes() == before


def test_a_killed_ucan_command_resumes_to_the_uninterrupted_checkpoint(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "digits", "tiny", "CLS", "--sigma", "0.25", "--max-train", "32"]) == 0
    argv = ["train", "digits", "tiny_ucan_input", "{out}", "--sigma", "0.25", "--max-train", "32", "--start", "CLS"]
    assert main([a.replace("{out}", "WHOLE") for a in argv]) == 0
    plain = ucan.minibatches
    calls = []

    def dies_in_epoch_two(*args):
        calls.append(1)
        for i, batch in enumerate(plain(*args)):
            if len(calls) == 2 and i == 1:
                raise Killed
            yield batch

    monkeypatch.setattr(ucan, "minibatches", dies_in_epoch_two)
    with pytest.raises(Killed):
        main([a.replace("{out}", "KILLED") for a in argv])
    monkeypatch.setattr(ucan, "minibatches", plain)
    assert not Path("KILLED/sigma_0.25/checkpoint.pth.tar").exists()
    assert main([a.replace("{out}", "KILLED") for a in argv]) == 0
    assert "resumed" in capsys.readouterr().out
    whole = torch.load("WHOLE/sigma_0.25/checkpoint.pth.tar", weights_only=True)
    killed = torch.load("KILLED/sigma_0.25/checkpoint.pth.tar", weights_only=True)
    for part in ("state_dict", NPG_KEY):
        a, b = whole[part], killed[part]
        a, b = (a["state_dict"], b["state_dict"]) if part == NPG_KEY else (a, b)
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("argv, message", [
    (["train", "digits", "ucan_input", "o", "--sigma", "0.25"], "argument --start: the UCAN recipe 'ucan_input'"),
    (["train", "digits", "tiny", "o", "--sigma", "0.25", "--start", "{tmp}"],
     "argument --start: only the UCAN recipes"),
    (["train", "digits", "ucan_input", "o", "--sigma", "0.25", "--start", "{tmp}"],
     "argument --start: no trained classifier at {tmp}/sigma_0.25/checkpoint.pth.tar"),
    (["train", "digits", "ucan_input", "o", "--sigma", "0.25", "0.5", "--start", "{tmp}/one.pt"],
     "argument --start: {tmp}/one.pt is one checkpoint file, which fits a single σ"),
])
def test_bad_ucan_arguments_exit_2_naming_them(argv, message, tmp_path, capsys):
    (tmp_path / "one.pt").write_bytes(b"x")
    with pytest.raises(SystemExit) as exit:
        main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert exit.value.code == 2
    assert message.replace("{tmp}", str(tmp_path)) in capsys.readouterr().err



def test_a_ucan_recipe_on_cifar10_keeps_the_cohen_format_and_certifies_through_load_checkpoint(tmp_path, capsys):
    """The paper path's format: a CIFAR-10 classifier (Sequential(Normalize, net), arch from --start) fine-tuned with a
    universal NPG; `load_checkpoint` reads the classifier, `load_npg` the NPG, and UCAN's Algorithm 1 certifies with
    both. Generated CIFAR-10 batches."""
    from test_paper_path import write_cifar_batches

    from ancer_lite.models.architectures import load_checkpoint

    write_cifar_batches(tmp_path, per_batch=8)
    data = ["--data-dir", str(tmp_path), "--max-train", "16", "--epochs", "1", "--sigma", "0.5"]
    assert main(["train", "cifar10", "tiny_cifar10_l2", str(tmp_path / "cls"), *data]) == 0
    assert main(["train", "cifar10", "ucan_universal", str(tmp_path / "ucan"), *data, "--start",
                 str(tmp_path / "cls")]) == 0
    ckpt = tmp_path / "ucan" / "sigma_0.5" / "checkpoint.pth.tar"
    held = torch.load(ckpt, weights_only=True)
    assert held["arch"] == "cifar_resnet20" and "0.mean" in held["state_dict"]
    record = json.loads(Path(f"{ckpt}.json").read_text())
    assert record["settings"]["recipe"]["epochs"] == 1 and record["settings"]["recipe"]["kind"] == "universal"
    assert "Sequential(Normalize, net) state dict, the noise generator under 'ucan_npg'" == record["checkpoint_format"]
    model = load_checkpoint(ckpt, "cifar10")
    npg, noise, lam, a = load_npg(ckpt)
    assert (type(npg).__name__, noise, lam, a) == ("UniversalNPG", "gaussian", 0.5, None)
    x = torch.rand(3, 32, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        sigma, mu = npg(x.unsqueeze(0))
    assert sigma.shape == mu.shape == (1, 3, 32, 32) and float(sigma.max()) < 5.0  # γ = 5 bounds σ
    cert = ucan.certify(model, npg, x, noise, lam, 10, 50, 0.01, 10, torch.Generator().manual_seed(1))
    assert cert.n == 50 and 0 <= cert.count <= 50
    assert cert.min_theta == pytest.approx(lam * float(sigma.min()), rel=1e-6)
