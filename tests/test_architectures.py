"""The paper profile's base classifiers: shapes, sizes, normalization inside, and checkpoints in
Cohen et al.'s format (Sequential(parameter-free NormalizeLayer, net), optionally DataParallel) and ours."""
from __future__ import annotations

import argparse
import copy
from pathlib import Path

import pytest
import torch
from torch import nn

from ancer_lite.models.architectures import ARCHITECTURES, DATASET_STATS, NUM_CLASSES, get_architecture, load_checkpoint
from ancer_lite.models.small import Normalize

# published sizes: ResNet-20 0.27M and ResNet-110 1.7M (He et al. 2016), ResNet-18 11.2M (CIFAR head),
# WRN-40-2 2.2M (Zagoruyko & Komodakis 2016), ResNet-50 25.6M (torchvision)
EXPECTED_PARAMS = {"cifar_resnet20": 0.27e6, "cifar_resnet110": 1.7e6, "cifar_resnet18": 11.2e6,
                   "wrn40": 2.2e6, "resnet50": 25.6e6, "fmnist_resnet18": 11.2e6}
# ResNet-50 has a global average pool: 64x64 inputs keep its tests fast; 224x224 is checked once
SIDE = {"cifar10": 32, "imagenet": 64, "fmnist": 28}


class CohenNormalizeLayer(nn.Module):
    """Cohen et al.'s NormalizeLayer: mean/std held as plain tensors, so it adds no state_dict keys."""

    def __init__(self, mean, std) -> None:
        super().__init__()
        self.means, self.sds = torch.tensor(mean), torch.tensor(std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.means.view(1, -1, 1, 1)) / self.sds.view(1, -1, 1, 1)


def randomize_batchnorm(model: nn.Module, seed: int = 0) -> nn.Module:
    """Non-default BN statistics and affine parameters, so that a loader that skipped them would show."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(0.1 * torch.randn(m.num_features, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(m.num_features, generator=gen))
                m.weight.copy_(1 + 0.1 * torch.randn(m.num_features, generator=gen))
                m.bias.copy_(0.1 * torch.randn(m.num_features, generator=gen))
    return model.eval()


def batch(dataset: str, side: int | None = None, seed: int = 0) -> torch.Tensor:
    side = side or SIDE[dataset]
    channels = len(DATASET_STATS[dataset][0])
    return torch.rand(2, channels, side, side, generator=torch.Generator().manual_seed(seed))


@pytest.fixture(scope="module")
def models() -> dict[str, nn.Module]:
    """One model of each architecture, built once (ResNet-50 takes about a second to initialize)."""
    torch.manual_seed(0)
    return {arch: get_architecture(arch, dataset).eval() for arch, dataset in ARCHITECTURES.items()}


@pytest.fixture(scope="module")
def source_resnet20() -> nn.Module:
    torch.manual_seed(1)
    return randomize_batchnorm(get_architecture("cifar_resnet20", "cifar10"))


def save(path: Path, arch: str, state: dict[str, torch.Tensor], **extra) -> Path:
    torch.save({"arch": arch, "state_dict": state, **extra}, path)
    return path


# ---- the architectures ------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", list(ARCHITECTURES))
def test_logits_shape_size_and_normalization_inside(models, arch):
    model, dataset = models[arch], ARCHITECTURES[arch]
    assert isinstance(model, nn.Sequential) and isinstance(model[0], Normalize)
    mean, std = DATASET_STATS[dataset]
    assert torch.allclose(model[0].mean, torch.tensor(mean)) and torch.allclose(model[0].std, torch.tensor(std))
    n_params = sum(p.numel() for p in model.parameters())
    assert n_params == pytest.approx(EXPECTED_PARAMS[arch], rel=0.03)
    x = batch(dataset)
    with torch.no_grad():
        out = model(x)
        assert out.shape == (2, NUM_CLASSES[dataset])
        assert torch.isfinite(out).all()
        # the Normalize buffers are used: changing them changes the logits, and undoing it restores them
        saved = model[0].mean.clone()
        model[0].mean.add_(0.2)
        try:
            assert not torch.allclose(model(x), out)
        finally:
            model[0].mean.copy_(saved)
        assert torch.equal(model(x), out)


def test_resnet50_on_imagenet_resolution(models):
    with torch.no_grad():
        assert models["resnet50"](batch("imagenet", side=224)).shape == (2, 1000)


def test_cohen_module_names():
    keys = set(get_architecture("cifar_resnet110", "cifar10")[1].state_dict())
    for key in ("conv1.weight", "bn1.running_var", "layer1.0.conv1.weight", "layer1.17.bn2.bias",
                "layer2.0.downsample.0.weight", "layer2.0.downsample.1.running_mean", "layer3.17.conv2.weight",
                "fc.weight", "fc.bias"):
        assert key in keys
    assert not any("layer1.0.downsample" in k or k.startswith("layer4") for k in keys)
    assert get_architecture("cifar_resnet20", "cifar10")[1].fc.in_features == 64
    wrn = set(get_architecture("wrn40", "cifar10")[1].state_dict())  # RS4A's names
    assert {"conv1.weight", "block1.layer.0.convShortcut.weight", "block3.layer.5.bn2.running_mean",
            "bn1.weight", "fc.bias"} <= wrn
    r18 = get_architecture("cifar_resnet18", "cifar10")[1]
    assert r18.conv1.kernel_size == (3, 3) and r18.conv1.out_channels == 64 and r18.fc.in_features == 512
    assert [len(getattr(r18, f"layer{i}")) for i in range(1, 5)] == [2, 2, 2, 2]


@pytest.mark.parametrize("arch, dataset, match", [
    ("resnet18", "cifar10", "arch"), ("cifar_resnet20", "mnist", "dataset"),
    ("resnet50", "cifar10", "built for"), ("wrn40", "imagenet", "built for")])
def test_get_architecture_rejects_bad_names(arch, dataset, match):
    with pytest.raises(ValueError, match=match) as err:
        get_architecture(arch, dataset)
    if match != "built for":  # the message lists the choices
        assert "cifar10" in str(err.value) or "cifar_resnet20" in str(err.value)


# ---- checkpoints ------------------------------------------------------------------------------------

def test_cohen_checkpoint_cifar_resnet20(tmp_path, source_resnet20):
    cohen = nn.Sequential(CohenNormalizeLayer(*DATASET_STATS["cifar10"]), source_resnet20[1])
    state = cohen.state_dict()
    assert all(k.startswith("1.") for k in state) and "1.conv1.weight" in state
    optimizer = torch.optim.SGD(cohen.parameters(), lr=0.1, momentum=0.9)
    path = save(tmp_path / "checkpoint.pth.tar", "cifar_resnet20", state, epoch=90,
                optimizer=optimizer.state_dict())  # as Cohen et al.'s train.py saves it
    loaded = load_checkpoint(path)
    assert not loaded.training and isinstance(loaded[0], Normalize)
    x = batch("cifar10")
    with torch.no_grad():
        assert torch.equal(loaded(x), source_resnet20(x))
        assert torch.equal(loaded(x), cohen(x))


def test_cohen_checkpoint_resnet50_dataparallel(tmp_path, models):
    source = randomize_batchnorm(copy.deepcopy(models["resnet50"]))  # a copy: building one takes ~1 s
    state = {f"1.module.{k}": v for k, v in source[1].state_dict().items()}  # Sequential(norm, DataParallel(net))
    loaded = load_checkpoint(save(tmp_path / "resnet50.pth.tar", "resnet50", state))
    assert loaded[0].mean.tolist() == pytest.approx(DATASET_STATS["imagenet"][0])
    x = batch("imagenet")
    with torch.no_grad():
        assert torch.equal(loaded(x), source(x))


def test_own_format_round_trip_keeps_normalization(tmp_path):
    torch.manual_seed(3)
    source = randomize_batchnorm(get_architecture("wrn40", "cifar10"))
    with torch.no_grad():
        source[0].mean.fill_(0.5)
        source[0].std.fill_(0.25)
    state = source.state_dict()
    assert {"0.mean", "0.std", "1.conv1.weight"} <= set(state)
    loaded = load_checkpoint(save(tmp_path / "ours.pt", "wrn40", state), dataset="cifar10")
    assert torch.equal(loaded[0].mean, source[0].mean) and torch.equal(loaded[0].std, source[0].std)
    x = batch("cifar10")
    with torch.no_grad():
        assert torch.equal(loaded(x), source(x))


def test_checkpoint_without_num_batches_tracked_loads(tmp_path, source_resnet20):
    """Checkpoints saved before PyTorch 0.4.1 have no BatchNorm num_batches_tracked."""
    state = {f"1.{k}": v for k, v in source_resnet20[1].state_dict().items() if "num_batches_tracked" not in k}
    loaded = load_checkpoint(save(tmp_path / "old.pth.tar", "cifar_resnet20", state))
    x = batch("cifar10")
    with torch.no_grad():
        assert torch.equal(loaded(x), source_resnet20(x))


def test_bare_network_keys_load(tmp_path, source_resnet20):
    """A state_dict of the bare network (no Sequential index, as ANCER's own scripts save) also loads."""
    loaded = load_checkpoint(save(tmp_path / "bare.pt", "cifar_resnet20", source_resnet20[1].state_dict()))
    x = batch("cifar10")
    with torch.no_grad():
        assert torch.equal(loaded(x), source_resnet20(x))


def test_missing_checkpoint_file(tmp_path):
    path = tmp_path / "nowhere" / "checkpoint.pth.tar"
    with pytest.raises(FileNotFoundError, match="nowhere"):
        load_checkpoint(path)


@pytest.fixture
def resnet20_state(source_resnet20) -> dict[str, torch.Tensor]:
    return {f"1.{k}": v for k, v in source_resnet20[1].state_dict().items()}


@pytest.mark.parametrize("drop", ["arch", "state_dict"])
def test_checkpoint_missing_keys(tmp_path, resnet20_state, drop):
    ckpt = {"arch": "cifar_resnet20", "state_dict": resnet20_state}
    del ckpt[drop]
    torch.save(ckpt, tmp_path / "c.pt")
    with pytest.raises(ValueError, match=f"lacks key.*'{drop}'"):
        load_checkpoint(tmp_path / "c.pt")


def test_bare_state_dict_is_not_a_checkpoint(tmp_path, resnet20_state):
    torch.save(resnet20_state, tmp_path / "bare.pt")
    with pytest.raises(ValueError, match="'arch'"):
        load_checkpoint(tmp_path / "bare.pt")


def test_checkpoint_unknown_arch(tmp_path, resnet20_state):
    with pytest.raises(ValueError, match="unknown arch 'resnet56'.*cifar_resnet110"):
        load_checkpoint(save(tmp_path / "c.pt", "resnet56", resnet20_state))


def test_checkpoint_wrong_arch_lists_missing_keys(tmp_path, resnet20_state):
    with pytest.raises(ValueError, match=r"missing keys: layer1\.3\.") as err:
        load_checkpoint(save(tmp_path / "c.pt", "cifar_resnet110", resnet20_state))
    assert "and " in str(err.value)  # more than a few: the message is cut short


def test_checkpoint_shape_mismatch(tmp_path, resnet20_state):
    state = dict(resnet20_state)
    state["1.fc.weight"] = torch.zeros(100, 64)
    state["1.fc.bias"] = torch.zeros(100)
    with pytest.raises(ValueError, match=r"shape mismatches.*fc\.weight \(100, 64\) vs \(10, 64\)"):
        load_checkpoint(save(tmp_path / "c.pt", "cifar_resnet20", state))


def test_checkpoint_unexpected_keys(tmp_path, resnet20_state):
    state = {**resnet20_state, "1.extra.weight": torch.zeros(3)}
    with pytest.raises(ValueError, match=r"unexpected keys: extra\.weight"):
        load_checkpoint(save(tmp_path / "c.pt", "cifar_resnet20", state))
    state = {**resnet20_state, "0.means": torch.zeros(3)}  # not our Normalize's buffers
    with pytest.raises(ValueError, match="normalization layer"):
        load_checkpoint(save(tmp_path / "d.pt", "cifar_resnet20", state))


def test_checkpoint_dataset_must_fit_arch(tmp_path, resnet20_state):
    with pytest.raises(ValueError, match="built for dataset 'cifar10'"):
        load_checkpoint(save(tmp_path / "c.pt", "cifar_resnet20", resnet20_state), dataset="imagenet")


def test_checkpoint_with_pickled_objects_needs_trust(tmp_path, resnet20_state):
    path = save(tmp_path / "c.pt", "cifar_resnet20", resnet20_state, args=argparse.Namespace(lr=0.1))
    with pytest.raises(ValueError, match="trusted=True") as err:
        load_checkpoint(path)
    assert "argparse.Namespace" in str(err.value)
    assert isinstance(load_checkpoint(path, trusted=True), nn.Sequential)


def test_unreadable_checkpoint(tmp_path):
    for content in ("not a checkpoint", "hello"):  # read as a bad pickle / as a legacy file
        (tmp_path / "c.pt").write_text(content)
        with pytest.raises(ValueError, match="not a readable torch checkpoint"):
            load_checkpoint(tmp_path / "c.pt", trusted=False)
