"""One device setting, end to end, on the CPU: `core.devices` (resolve, place, the
profile's setting), the profiles' device field, the device left out of every cache key, the entry points that take a
device refusing a bad one by name, CPU results unchanged by an explicit device="cpu", and no module but
core/devices.py spelling a CUDA device. The GPU's own checks are tests/test_gpu.py."""
import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

import ancer_lite
from ancer_lite.core import devices
from ancer_lite.models.data import Split
from ancer_lite.models.small import MLP
from ancer_lite.runs.profiles import PROFILES, Profile, get_profile

PACKAGE = Path(ancer_lite.__file__).resolve().parent


@pytest.fixture
def no_cuda(monkeypatch):
    """torch sees no GPU here, whatever the machine."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


@pytest.fixture
def one_gpu(monkeypatch):
    """torch reports one GPU (only resolve()'s bookkeeping runs: nothing is put on it); TF32 allowed, as torch's
    default for convolutions, and restored after the test."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    before = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True
    yield
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = before


# -- resolve -------------------------------------------------------------------------------------------------------
def test_auto_is_cpu_without_cuda(no_cuda):
    assert devices.resolve() == torch.device("cpu")
    assert devices.resolve("auto") == torch.device("cpu")
    assert devices.resolve(None) == torch.device("cpu")


def test_auto_is_cuda_with_cuda(one_gpu):
    """A CUDA device comes back with its index (so that it equals a model's parameters' device), and TF32 off."""
    assert devices.resolve("auto") == torch.device("cuda", 0)
    assert devices.resolve(None) == torch.device("cuda", 0)
    assert devices.resolve("cuda") == torch.device("cuda", 0)
    assert devices.resolve("cuda:0") == torch.device("cuda", 0)
    assert not torch.backends.cudnn.allow_tf32 and not torch.backends.cuda.matmul.allow_tf32


def test_cpu_leaves_tf32_alone(one_gpu):
    devices.resolve("cpu")
    assert torch.backends.cudnn.allow_tf32


def test_named_devices_resolve_to_themselves():
    assert devices.resolve("cpu") == torch.device("cpu")
    assert devices.resolve(torch.device("cpu")) == torch.device("cpu")


@pytest.mark.parametrize("bad", ["gpu", "CUDA!", "cuda:x", "", "auto:0", 1.5, ["cpu"], object()])
def test_bad_device_names_are_refused_by_name(bad):
    with pytest.raises(ValueError, match=r"device must be 'auto' or a torch device"):
        devices.resolve(bad)


@pytest.mark.parametrize("name", ["cuda", "cuda:0", "cuda:3"])
def test_cuda_without_cuda_names_the_value(no_cuda, name):
    with pytest.raises(ValueError, match=rf"device = '{name}', but torch finds no usable CUDA device"):
        devices.resolve(name)


def test_cuda_index_beyond_the_devices_is_refused(one_gpu):
    with pytest.raises(ValueError, match=r"device = 'cuda:2', but torch finds 1 CUDA device"):
        devices.resolve("cuda:2")


# -- place, model_device, synchronize -----------------------------------------------------------------------------
def test_place_none_leaves_the_model_where_it_is():
    model = MLP((1, 2, 2), 3, hidden=(4,))
    before = [p.data_ptr() for p in model.parameters()]
    assert devices.place(model, None) == torch.device("cpu")
    assert [p.data_ptr() for p in model.parameters()] == before


def test_place_cpu_is_a_no_op_on_a_cpu_model():
    model = MLP((1, 2, 2), 3, hidden=(4,))
    before = [p.data_ptr() for p in model.parameters()]
    assert devices.place(model, "cpu") == torch.device("cpu")
    assert [p.data_ptr() for p in model.parameters()] == before


def test_place_refuses_a_cuda_device_without_cuda(no_cuda):
    with pytest.raises(ValueError, match="device = 'cuda'"):
        devices.place(MLP((1, 2, 2), 3, hidden=(4,)), "cuda")


def test_model_device_of_buffer_only_and_empty_modules():
    class Buffered(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", torch.zeros(2))

    assert devices.model_device(Buffered()) == torch.device("cpu")
    assert devices.model_device(torch.nn.ReLU()) == torch.device("cpu")


def test_synchronize_is_a_no_op_off_cuda(monkeypatch):
    """synchronize(None) and the CPU return None without waiting on CUDA (torch.cuda.synchronize would raise here);
    a CUDA device is waited for, that device and no other."""
    def no_cuda_wait(device=None):
        raise AssertionError(f"torch.cuda.synchronize({device!r}) called off CUDA")

    monkeypatch.setattr(torch.cuda, "synchronize", no_cuda_wait)
    for device in (None, "cpu", torch.device("cpu")):
        assert devices.synchronize(device) is None
    waited = []
    monkeypatch.setattr(torch.cuda, "synchronize", waited.append)
    assert devices.synchronize("cuda:1") is None
    assert devices.synchronize(torch.device("cuda", 0)) is None
    assert waited == [torch.device("cuda", 1), torch.device("cuda", 0)]


# -- the profile's setting ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("good", ["auto", "cpu", "cuda", "cuda:0", "cuda:12"])
def test_check_setting_accepts(good):
    assert devices.check_setting(good) == good


@pytest.mark.parametrize("bad", ["gpu", "CUDA", "cuda:", "cuda:-1", "cuda:0:1", " cpu", "mps", 0, None,
                                 torch.device("cpu")])
def test_check_setting_refuses_by_name(bad):
    with pytest.raises(ValueError, match=r"device must be 'auto', 'cpu', 'cuda' or 'cuda:N'"):
        devices.check_setting(bad)


def test_profiles_device_field(no_cuda):
    assert Profile("x").device == "cpu"
    assert get_profile("quick").device == "cpu"  # the quick profile runs on the CPU everywhere, bit for bit
    assert {name: p.device for name, p in PROFILES.items() if name != "quick"} == {
        name: "auto" for name in PROFILES if name != "quick"}
    # checked as a string, resolved only when used: a CUDA profile can be built on a CPU machine
    assert Profile("x", device="cuda:1").device == "cuda:1"
    with pytest.raises(ValueError, match=r"device must be 'auto', 'cpu', 'cuda' or 'cuda:N' \(a str\), got str 'gpu'"):
        Profile("x", device="gpu")
    with pytest.raises(ValueError, match="got NoneType None"):
        Profile("x", device=None)


def test_device_is_in_no_cache_key():
    """The selection table's and the run folders' names are the same whatever the profile's device."""
    from ancer_lite.methods.registry import OptimSettings
    from ancer_lite.runs.profiles import DIGITS
    from ancer_lite.runs.setups import Workload, sigmas_of
    from ancer_lite.studies import image_study

    torch.manual_seed(0)
    model = MLP((1, 8, 8), 10, hidden=(4,))
    split = Split(torch.rand(3, 1, 8, 8), torch.tensor([0, 1, 2]), np.arange(3))
    # one model per (norm, σ) of the setup: the selection's key covers those it reuses its steps at
    work = Workload("digits", 10, split, split, {(norm, s): model for norm, sig in sigmas_of(DIGITS).items()
                                                 for s in sig})
    cpu, auto = get_profile("quick"), dataclasses.replace(get_profile("quick"), device="auto")
    assert image_study.selection_path(work, DIGITS, cpu, "r", "l2") == image_study.selection_path(
        work, DIGITS, auto, "r", "l2")
    settings = OptimSettings()
    assert image_study.run_folder(work, DIGITS, cpu, settings, "r", "l2", 0.25, "ancer") == image_study.run_folder(
        work, DIGITS, auto, settings, "r", "l2", 0.25, "ancer")


def test_device_workers(one_gpu):
    from ancer_lite.runs.parallel import device_workers

    assert device_workers("cpu", 4) == 4
    assert device_workers(None, None) is None
    assert device_workers("cuda", 4) == 1
    assert device_workers("auto", None) == 1


def test_device_workers_refuses_cuda_without_cuda(no_cuda):
    from ancer_lite.runs.parallel import device_workers

    assert device_workers("auto", 3) == 3
    with pytest.raises(ValueError, match="device = 'cuda'"):
        device_workers("cuda", 3)


# -- entry points refuse a bad device before any work -------------------------------------------------------------
def test_load_checkpoint_on_a_device(tmp_path, no_cuda):
    from ancer_lite.models.architectures import get_architecture, load_checkpoint

    torch.manual_seed(0)
    net = get_architecture("cifar_resnet20", "cifar10")
    path = tmp_path / "checkpoint.pth.tar"
    torch.save({"arch": "cifar_resnet20", "state_dict": net.state_dict()}, path)
    model = load_checkpoint(path, device="cpu")
    assert devices.model_device(model) == torch.device("cpu") and not model.training
    for a, b in zip(model.state_dict().values(), net.state_dict().values()):
        assert torch.equal(a, b)
    with pytest.raises(ValueError, match="device = 'cuda'"):
        load_checkpoint(path, device="cuda")
    with pytest.raises(ValueError, match="got 'tpu0'"):
        load_checkpoint(path, device="tpu0")


def test_prepare_refuses_a_cuda_device_before_training(tmp_path, no_cuda):
    from ancer_lite.runs.profiles import DIGITS
    from ancer_lite.runs.setups import prepare

    with pytest.raises(ValueError, match="device = 'cuda'"):
        prepare(DIGITS, data_dir=tmp_path, device="cuda")
    assert not (tmp_path / "cache").exists()


def test_method_entry_points_refuse_a_cuda_device_without_cuda(no_cuda):
    from ancer_lite.methods import hessian, rancer, ucan
    from ancer_lite.models.train import train_classifier

    torch.manual_seed(0)
    model = MLP((1, 2, 2), 3, hidden=(4,))
    x = torch.rand(2, 1, 2, 2)
    with pytest.raises(ValueError, match="device = 'cuda'"):
        train_classifier(model, x, torch.tensor([0, 1]), epochs=1, device="cuda")
    with pytest.raises(ValueError, match="device = 'cuda'"):
        hessian.input_hessian(model, x[0], device="cuda")
    with pytest.raises(ValueError, match="device = 'cuda'"):
        rancer.hessian_rotations(model, x, device="cuda")
    npg = ucan.build_npg("isotropic", (1, 2, 2))
    with pytest.raises(ValueError, match="device = 'cuda'"):
        ucan.certify(model, npg, x[0], "gaussian", 0.25, 10, 20, 0.01, 3, torch.Generator(), device="cuda")


# -- an explicit device="cpu" computes what the default did ------------------------------------------------------
def test_training_on_the_cpu_is_unchanged_by_device():
    from ancer_lite.models.train import train_classifier

    x = torch.rand(40, 1, 3, 3, generator=torch.Generator().manual_seed(1))
    y = torch.arange(40) % 3
    out = []
    for device in (None, "cpu", "auto" if not torch.cuda.is_available() else "cpu"):
        torch.manual_seed(0)
        model = MLP((1, 3, 3), 3, hidden=(8,))
        train_classifier(model, x, y, "uniform", 0.5, epochs=2, batch_size=16, stability=1.0, seed=4, device=device)
        out.append(torch.cat([p.detach().reshape(-1) for p in model.parameters()]))
    assert torch.equal(out[0], out[1]) and torch.equal(out[0], out[2])


def test_ucan_training_and_certify_on_the_cpu_are_unchanged_by_device():
    from ancer_lite.core.streams import certify_streams
    from ancer_lite.methods import ucan

    x = torch.rand(24, 1, 4, 4, generator=torch.Generator().manual_seed(2))
    y = torch.arange(24) % 3
    weights, certs = [], []
    for device in (None, "cpu"):
        torch.manual_seed(0)
        model, npg = MLP((1, 4, 4), 3, hidden=(8,)), ucan.build_npg("universal", (1, 4, 4))
        ucan.train_ucan(model, npg, x, y, lam=0.25, epochs=1, batch_size=8, seed=1, device=device)
        weights.append(torch.cat([p.detach().reshape(-1) for p in [*model.parameters(), *npg.parameters()]]))
        certs.append(ucan.certify(model, npg, x[0], "gaussian", 0.25, 10, 200, 0.01, 3, certify_streams(0, 5),
                                  device=device))
    assert torch.equal(weights[0], weights[1])
    assert certs[0] == certs[1]


def test_hessian_on_the_cpu_is_unchanged_by_device():
    from ancer_lite.methods.hessian import input_hessian

    torch.manual_seed(0)
    model = MLP((1, 2, 2), 3, hidden=(6,), activation="softplus")
    x = torch.rand(1, 2, 2)
    assert np.array_equal(input_hessian(model, x), input_hessian(model, x, device="cpu"))


# -- no hard-coded CUDA device ------------------------------------------------------------------------------------
def _cuda_spellings(path: Path) -> list[str]:
    """Where a module spells a CUDA device: a string literal that is a device name ('cuda', 'cuda:1'), or a
    `.cuda()` call (which moves a tensor to the GPU whatever the setting)."""
    import re

    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(
                r"\s*cuda(:\d+)?\s*", node.value):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cuda":
            found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: .cuda()")
    return found


def test_no_module_but_devices_spells_a_cuda_device():
    spelled = [hit for path in sorted(PACKAGE.rglob("*.py")) if path != PACKAGE / "core" / "devices.py"
               for hit in _cuda_spellings(path)]
    assert spelled == [], "a CUDA device is chosen by the device setting (core/devices.py), not in code:\n" + \
        "\n".join(spelled)


def test_the_spelling_check_finds_what_it_looks_for():
    assert _cuda_spellings(PACKAGE / "core" / "devices.py")  # the one module allowed to spell it does
