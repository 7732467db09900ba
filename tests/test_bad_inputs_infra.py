"""Bad inputs of models, train, data, logs, setups and profiles raise a ValueError or TypeError naming the argument;
valid inputs behave as before (same weights, same logs accepted)."""
from __future__ import annotations

import pickle
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch import nn

from ancer_lite.core import files
from ancer_lite.models import data, train
from ancer_lite.models import small as models
from ancer_lite.runs import logs, profiles, setups

NAN, INF = float("nan"), float("inf")
GOOD_ROW = dict(idx=5, label=1, predict=1, radius=0.5, radius_proxy=0.6, correct=1, min_sigma=0.25, time=0.01)
HEADER = "\t".join(logs.ANCER_COLUMNS)
X8 = torch.rand(8, 1, 2, 2, generator=torch.Generator().manual_seed(1))
Y8 = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])


def tiny() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(4, 3))


MODEL_CASES = [
    ("MLP", dict(input_shape=(1, 2, 2), num_classes=3, hidden=(4,), std=(NAN,)), "std"),
    ("MLP", dict(input_shape=(1, 2, 2), num_classes=3, hidden=(4,), mean=(NAN,)), "mean"),
    ("MLP", dict(input_shape=(1, 2, 2), num_classes=0, hidden=(4,)), "num_classes"),
    ("MLP", dict(input_shape=(1, 2, 2), num_classes=1, hidden=(4,)), "num_classes"),
    ("MLP", dict(input_shape=(1, 2, 2), num_classes=-1, hidden=(4,)), "num_classes"),
    ("MLP", dict(input_shape=(1, 2, 2), num_classes=2.5, hidden=(4,)), "num_classes"),
    ("MLP", dict(input_shape=(0, 2, 2), num_classes=3, hidden=(4,)), "input_shape"),
    ("MLP", dict(input_shape=(-1,), num_classes=3, hidden=(4,)), "input_shape"),
    ("MLP", dict(input_shape="ab", num_classes=3, hidden=(4,)), "input_shape"),
    ("MLP", dict(input_shape=(1, 2, 2), num_classes=3, hidden=(0,)), "hidden"),
    ("MLP", dict(input_shape=(1, 2, 2), num_classes=3, hidden=(-2,)), "hidden"),
    ("MLP", dict(input_shape=(1, 2, 2), num_classes=3, hidden=(2.5,)), "hidden"),
    ("SmallCNN", dict(input_shape=(1.5, 8, 8), num_classes=10), "input_shape"),
    ("SmallCNN", dict(input_shape=(1, 8, 8), num_classes=10, channels=(0, 16)), "channels"),
    ("SmallCNN", dict(input_shape=(1, 8, 8), num_classes=10, channels=(-1, 16)), "channels"),
    ("SmallCNN", dict(input_shape=(1, 8, 8), num_classes=10, hidden=0), "hidden"),
    ("SmallCNN", dict(input_shape=(1, 8, 8), num_classes=0), "num_classes"),
    ("Normalize", dict(mean=(0.5,), std=(NAN,)), "std"),
    ("Normalize", dict(mean=(INF,), std=(0.25,)), "mean"),
    ("ToyClassifier", dict(discs=[((0.0, 0.0), 1.0)], sharpness=-1.0), "sharpness"),
    ("ToyClassifier", dict(discs=[((0.0, 0.0), 1.0)], sharpness=NAN), "sharpness"),
    ("ToyClassifier", dict(discs=[((0.0, 0.0), -1.0)]), "discs"),
    ("ToyClassifier", dict(discs=[((0.0, 0.0, 0.0), 1.0)]), "discs"),
    ("ToyClassifier", dict(halfplanes=[((0.0, 0.0), 1.0)]), "halfplanes"),
]


@pytest.mark.parametrize("cls, kwargs, name", MODEL_CASES)
def test_models_refuse_bad_arguments(cls, kwargs, name):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        getattr(models, cls)(**kwargs)


def test_models_draw_the_same_initial_weights_as_plain_layers():
    """The checks draw nothing: the weights are those of the same layers created in the same order."""
    torch.manual_seed(0)
    mlp = models.MLP((1, 2, 2), 3, hidden=(4, 5))
    torch.manual_seed(0)
    ref = [nn.Linear(4, 4), nn.Linear(4, 5), nn.Linear(5, 3)]
    assert all(torch.equal(a, b) for a, b in zip(mlp.parameters(), (p for m in ref for p in m.parameters())))
    torch.manual_seed(1)
    cnn = models.SmallCNN((1, 8, 8), 10)
    torch.manual_seed(1)
    ref = [nn.Conv2d(1, 8, 3, 2, 1), nn.Conv2d(8, 16, 3, 2, 1), nn.Linear(16 * 2 * 2, 64), nn.Linear(64, 10)]
    assert all(torch.equal(a, b) for a, b in zip(cnn.parameters(), (p for m in ref for p in m.parameters())))
    toy = models.ToyClassifier(halfplanes=[((1.0, 0.0), 0.5)], exteriors=[((0.0, 0.0), 1.5)])
    assert toy(torch.tensor([[1.0, 0.0]])).argmax(1).item() == 1


def _train(**kw):
    args = dict(model=models.MLP((1, 2, 2), 3, hidden=(4,)), x=X8.clone(), y=Y8.clone(), noise="gaussian", scale=0.25,
                epochs=1, batch_size=4) | kw
    return train.train_classifier(**args)


TRAIN_CASES = [
    (lambda: _train(y=torch.tensor([0, 1, 2, 0, 1, 2, 0, 9])), "y"),
    (lambda: _train(y=Y8.float()), "y"),
    (lambda: _train(y=-Y8), "y"),
    (lambda: _train(model=None), "model"),
    (lambda: train.accuracy(tiny(), X8, Y8, "gaussian", -1.0), "scale"),
    (lambda: train.accuracy(tiny(), X8, Y8, "gaussian", NAN), "scale"),
    (lambda: train.accuracy(tiny(), X8, Y8, "bogus", 0.25), "noise"),
    (lambda: train.accuracy(tiny(), X8, Y8[:5]), "y"),
    (lambda: train.model_fingerprint(None), "model"),
]


@pytest.mark.parametrize("call, name", TRAIN_CASES)
def test_training_refuses_bad_arguments(call, name):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        call()


@pytest.mark.parametrize("kw, name", [(dict(build=None), "build"), (dict(fit=lambda m: None), "fit"),
                                      (dict(build=lambda: None), "build"), (dict(path=None), "path")])
def test_train_cached_refuses_bad_arguments(tmp_path, kw, name):
    args = dict(path=tmp_path / "m.pt", build=tiny, fit=lambda m: m) | kw
    with pytest.raises(TypeError, match=rf"\b{name}\b"):
        train.train_cached(**args)


def test_train_classifier_label_check_draws_nothing():
    """The label check (once, on the first batch) draws nothing: the weights equal those of the same recipe run
    by hand (sgd_setup, minibatches, one noise draw per batch) without any check."""
    import torch.nn.functional as F

    from ancer_lite.core.noise import standard_noise

    torch.manual_seed(0)
    got = _train(model=models.MLP((1, 2, 2), 3, hidden=(4,)), seed=3, epochs=2)
    torch.manual_seed(0)
    model = models.MLP((1, 2, 2), 3, hidden=(4,))
    gen, opt, sched = train.sgd_setup(model, X8, Y8, 2, 4, 1e-2, seed=3)
    model.train()
    for xb, yb in train.minibatches(X8, Y8, 2, 4, gen):
        loss = F.cross_entropy(model(xb + 0.25 * standard_noise("gaussian", len(xb), (1, 2, 2), gen)), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    assert train.model_fingerprint(got) == train.model_fingerprint(model)


def _cifar(tmp_path, content):
    folder = tmp_path / data.CIFAR10_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_batch").write_bytes(content)
    return tmp_path


DATA_CASES = [
    (lambda tmp: data.radial_dataset(n=20, seed=-1), "seed"),
    (lambda tmp: data.radial_dataset(n=20, boundaries=()), "boundaries"),
    (lambda tmp: data.radial_dataset(n=20, margin=10.0), "margin"),
    (lambda tmp: data.radial_dataset(n=20, outer=NAN), "outer"),
    (lambda tmp: data.digits_split(val_fraction="0.2"), "val_fraction"),
    (lambda tmp: data.digits_split(val_fraction=None), "val_fraction"),
    (lambda tmp: data.digits_split(val_fraction=1e-4), "val_fraction"),
    (lambda tmp: data.digits_split(test_fraction=1e-4), "test_fraction"),
    (lambda tmp: data.digits_split(seed=-1), "seed"),
    (lambda tmp: data.digits_split(seed=1.5), "seed"),
    (lambda tmp: data.digits_split(seed="a"), "seed"),
    (lambda tmp: data.mnist5k_split(seed=-1), "seed"),
    (lambda tmp: data.cifar10(_cifar(tmp, b"\x00\x01not a pickle")), "test_batch"),
    (lambda tmp: data.cifar10(_cifar(tmp, pickle.dumps({"data": np.zeros((2, 3072), np.uint8), "labels": [0, 99]}))),
     "test_batch"),
    (lambda tmp: data.cifar10(None), "root"),
    (lambda tmp: data.imagenet_subset(tmp, count="2"), "count"),
    (lambda tmp: data.imagenet_subset(tmp, count=1.5), "count"),
]


@pytest.mark.parametrize("call, name", DATA_CASES)
def test_data_refuses_bad_arguments(tmp_path, call, name):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        call(tmp_path)


def test_digits_split_sizes_unchanged():
    s = data.digits_split(0)
    assert [len(s[k]) for k in ("train", "val", "test")] == [1077, 360, 360]


@pytest.mark.parametrize("change, name", [
    (dict(radius=NAN), "radius"), (dict(radius=-1.0), "radius"), (dict(radius=INF), "radius"),
    (dict(label=-5), "label"), (dict(predict=-7), "predict"), (dict(time=-1.0), "time"),
    (dict(min_sigma=-1.0), "min_sigma"), (dict(radius_proxy=0.1), "radius_proxy")])
def test_result_log_refuses_out_of_range_rows(tmp_path, change, name):
    with logs.ResultLog(tmp_path / "a.tsv") as log:
        with pytest.raises(ValueError, match=rf"\b{name}\b.*must"):
            log.append({**GOOD_ROW, **change})


@pytest.mark.parametrize("row, name", [("0\t1\t1\tnan\t0.6\t1\t0.25\t0.01", "radius"),
                                       ("0\t1\t1\t-1\t0.6\t1\t0.25\t0.01", "radius"),
                                       ("0\t-5\t-7\t0.5\t0.6\t0\t0.25\t0.01", "label"),
                                       ("0\t1\t1\t0.5\t0.1\t1\t0.25\t0.01", "radius_proxy")])
def test_read_log_refuses_out_of_range_rows(tmp_path, row, name):
    path = tmp_path / "a.tsv"
    path.write_text(f"{HEADER}\n{row}\n")
    with pytest.raises(ValueError, match=rf"a\.tsv, line 2: {name}\b.*must"):
        logs.read_log(path)


def test_logs_accept_a_proxy_radius_rounded_below_the_radius(tmp_path):
    """An isotropic certificate's geometric mean exp(mean(log s)) can fall an ulp below min s: still valid."""
    radius = 0.2915343251011105
    with logs.ResultLog(tmp_path / "a.tsv") as log:
        log.append({**GOOD_ROW, "radius": radius, "radius_proxy": radius * (1 - 4e-16)})
    assert len(logs.read_log(tmp_path / "a.tsv")) == 1


@pytest.mark.parametrize("call, name", [
    (lambda tmp: files.write_atomic(tmp / "w.txt", b"bytes"), "text"),
    (lambda tmp: files.write_atomic(tmp / "w.txt", None), "text"),
    (lambda tmp: files.write_atomic(None, "x"), "path"),
    (lambda tmp: files.atomic_file(None).__enter__(), "path"),
    (lambda tmp: files.load_array(None), "path"),
    (lambda tmp: logs.read_log(None), "path"),
    (lambda tmp: logs.ResultLog(None), "path"),
])
def test_logs_refuse_non_paths(tmp_path, call, name):
    with pytest.raises(TypeError, match=rf"\b{name}\b"):
        call(tmp_path)


SETUP = profiles.ImageSetup("t", "digits", "CIFAR-10", hidden=(4,), epochs=1, sigmas_l2=(0.25,), sigmas_l1=(),
                            num_test=10, num_val=5)


@pytest.mark.parametrize("field, value", [("sigmas_l2", 0.25), ("hidden", (0,)), ("hidden", (-1,)), ("name", "../x"),
                                          ("name", "a/b"), ("name", ""), ("name", ".."), ("iso_lr_grid", ()),
                                          ("ancer_lr_grid", ())])
def test_image_setup_refuses_bad_fields(field, value):
    with pytest.raises((ValueError, TypeError), match=rf"\b{field}\b"):
        replace(SETUP, **{field: value})


def test_every_defined_profile_is_accepted():
    for name in profiles.PROFILES:
        profile = profiles.get_profile(name)
        for setup in profile.images + profile.rancer:
            assert replace(setup) == setup


@pytest.mark.parametrize("call, name", [
    (lambda tmp: profiles.get_profile(["quick"]), "profile"),
    (lambda tmp: setups.theta_of("l2", -1.0), "sigma"),
    (lambda tmp: setups.theta_of("l2", NAN), "sigma"),
    (lambda tmp: setups.theta_of("l2", 0.0), "sigma"),
    (lambda tmp: setups.theta_of("l2", "abc"), "sigma"),
    (lambda tmp: setups.theta_of("l1", "abc"), "sigma"),
    (lambda tmp: setups.checkpoint_path(tmp, "cifar10", "l3", 0.25), "norm"),
    (lambda tmp: setups.checkpoint_path(tmp, "cifar10", "l2", -1.0), "sigma"),
    (lambda tmp: setups.checkpoint_path(tmp, "../../etc", "l2", 0.25), "dataset"),
    (lambda tmp: setups.missing_inputs("paper", tmp), "profile"),
    (lambda tmp: setups.missing_inputs(None, tmp), "profile"),
    (lambda tmp: setups.missing_inputs(profiles.get_profile("paper"), None), "data_dir"),
    (lambda tmp: setups.prepare(None, 0, tmp), "setup"),
    (lambda tmp: setups.prepare(SETUP, 0, None), "data_dir"),
    (lambda tmp: setups.prepare(SETUP, 0, tmp, cache=5), "cache"),
    (lambda tmp: setups.prepare(SETUP, 0, tmp, cache="../x"), "cache"),
    (lambda tmp: setups.build_model(SETUP, (1, 8, 8), 0), "num_classes"),
    (lambda tmp: setups.build_model(SETUP, (1, 8, 8), 1), "num_classes"),
])
def test_setups_refuse_bad_arguments(tmp_path, call, name):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        call(tmp_path)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_valid_setup_helpers_unchanged(tmp_path):
    assert setups.theta_of("l2", 0.25) == 0.25
    assert setups.theta_of("l1", 0.5) == pytest.approx(0.5 * 3 ** 0.5)
    assert setups.checkpoint_path(tmp_path, "cifar10", "l2", 0.25) == \
        tmp_path / "checkpoints" / "cifar10" / "l2" / "sigma_0.25" / "checkpoint.pth.tar"
