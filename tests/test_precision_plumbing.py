"""The `precision` and `draws` settings carried from the command line and the profiles down to the optimizers'
forward passes and noise draws, and recorded in run keys and manifests only where they are not exact with CPU
draws (so today's keys and manifests stay as they are)."""
import dataclasses
import json

import numpy as np
import pytest
import torch

from ancer_lite.core.noise import BlockDrawStream, DrawStream
from ancer_lite.core.streams import stream
from ancer_lite.methods import registry, ucan
from ancer_lite.methods.optimize import (
    input_streams,
    optimize_ancer,
    optimize_isotropic,
    resolve_draws,
    smoothed_probabilities,
)
from ancer_lite.methods.rancer import RancerSettings, optimize_rancer, rancer_streams
from ancer_lite.methods.registry import OptimSettings, SmoothingMethod
from ancer_lite.runs.experiment import numerics_fields, rancer_key, run_key, run_method, run_record
from ancer_lite.runs.profiles import ImageSetup, Profile, get_profile
from ancer_lite.runs.setups import prepare
from ancer_lite.tooling.cli import main


def tiny_model(seed=0, d=6, k=3):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(d, k)).eval()


X = torch.rand(3, 6, generator=torch.Generator().manual_seed(0))
KEYS = [4, 9, 11]


def iso(model, x, keys, draws="auto", **kw):
    return optimize_isotropic(model, x, 0.25, "gaussian", iterations=5, lr=0.05, samples=32,
                              generator=input_streams("gaussian", x, 0, keys, "isotropic", draws), **kw)


def anc(model, x, start, keys, draws="auto", **kw):
    return optimize_ancer(model, x, start, "gaussian", iterations=5, lr=0.05, samples=32,
                          generator=input_streams("gaussian", x, 0, keys, "ancer", draws), **kw)


# ---- the optimizers ---------------------------------------------------------------------------------------------

def test_exact_is_the_default_bit_for_bit_and_bf16_stays_close():
    model = tiny_model()
    # the default: one CPU DrawStream per input on its stream, exact precision
    plain = optimize_isotropic(model, X, 0.25, "gaussian", iterations=5, lr=0.05, samples=32,
                               generator=[DrawStream("gaussian", (6,), stream(0, k, "isotropic")) for k in KEYS])
    exact = iso(model, X, KEYS, precision="exact")
    assert torch.equal(plain, exact) and torch.equal(exact, iso(model, X, KEYS, "cpu"))
    half = iso(model, X, KEYS, precision="bf16")
    assert bool(torch.isfinite(half).all()) and torch.allclose(half, exact, rtol=0.05)
    a_exact, a_half = anc(model, X, exact, KEYS), anc(model, X, exact, KEYS, precision="bf16")
    assert torch.equal(a_exact, anc(model, X, exact, KEYS, "cpu", precision="exact"))
    assert bool(torch.isfinite(a_half).all()) and torch.allclose(a_half, a_exact, rtol=0.05)
    # the setting reaches the forward passes: bf16 probabilities are not float32's
    gen = [torch.Generator().manual_seed(0) for _ in range(2)]
    p = [smoothed_probabilities(model, X, torch.full((3, 1), 0.25), "gaussian", 16, g, precision=prec)
         for g, prec in zip(gen, ("exact", "bf16"))]
    assert not torch.equal(p[0], p[1]) and torch.allclose(p[0], p[1], atol=0.02)


def test_rancer_in_bf16_is_finite_and_close():
    model = tiny_model()
    rot = torch.eye(6).expand(3, 6, 6).clone()
    settings = RancerSettings(iterations=4, lr=0.05, samples=32)
    out = [optimize_rancer(model, X, rot, torch.full((3,), 0.25), settings, generator=rancer_streams(X, 0, KEYS),
                           precision=p) for p in ("exact", "bf16")]
    assert bool(torch.isfinite(out[1]).all()) and torch.allclose(out[0], out[1], rtol=0.05)


@pytest.mark.parametrize("call", [
    lambda: iso(tiny_model(), X, KEYS, precision="fp8"),
    lambda: anc(tiny_model(), X, torch.full((3,), 0.25), KEYS, precision="fp16"),
    lambda: smoothed_probabilities(tiny_model(), X, torch.full((3, 1), 0.25), "gaussian", 4, precision="half"),
    lambda: input_streams("gaussian", X, 0, KEYS, "isotropic", draws="gpu"),
])
def test_bad_settings_are_refused_naming_them(call):
    with pytest.raises(ValueError, match="precision|draws"):
        call()


def test_device_draws_do_not_depend_on_the_batch():
    """draws="device": one BlockDrawStream per input (here on the CPU), so an input's θ is the same optimized with
    the others or alone under the same key."""
    streams = input_streams("gaussian", X, 0, KEYS, "isotropic", draws="device")
    assert all(isinstance(s, BlockDrawStream) and s.device == X.device for s in streams)
    assert all(isinstance(s, DrawStream) for s in input_streams("gaussian", X, 0, KEYS, "isotropic"))
    model = tiny_model()
    together = iso(model, X, KEYS, "device")
    alone = torch.cat([iso(model, X[k:k + 1], [KEYS[k]], "device") for k in range(3)])
    assert torch.equal(together, alone)
    a_together = anc(model, X, together, KEYS, "device")
    a_alone = torch.cat([anc(model, X[k:k + 1], together[k:k + 1], [KEYS[k]], "device") for k in range(3)])
    assert torch.equal(a_together, a_alone)
    assert resolve_draws("auto", torch.device("cpu")) == "cpu" and resolve_draws("auto", "cuda:0") == "device"


def test_registry_passes_the_settings_and_refuses_them_to_a_method_without():
    model = tiny_model()
    settings = OptimSettings().changed("isotropic", iterations=3, samples=16)
    method = registry.method("isotropic")
    got = method.run_optimize(model, X, "gaussian", 0.25, settings, 0, KEYS, None, precision="bf16", draws="device")
    want = optimize_isotropic(model, X, 0.25, "gaussian", iterations=3, lr=settings.of("isotropic").lr, samples=16,
                              generator=input_streams("gaussian", X, 0, KEYS, "isotropic", "device"),
                              precision="bf16")
    assert torch.equal(got, want)

    @dataclasses.dataclass(frozen=True)
    class Plain(SmoothingMethod):
        def optimize(self, model, x, noise, theta0, settings, seed, keys, start):
            return torch.full((len(x),), float(theta0))

    plain = Plain("plain", "Plain")
    assert plain.run_optimize(model, X, "gaussian", 0.25, settings, 0, KEYS, None, draws="cpu").shape == (3,)
    with pytest.raises(ValueError, match="precision 'bf16'"):
        plain.run_optimize(model, X, "gaussian", 0.25, settings, 0, KEYS, None, precision="bf16")
    with pytest.raises(ValueError, match="draws 'device'"):
        plain.run_optimize(model, X, "gaussian", 0.25, settings, 0, KEYS, None, draws="device")


def test_ucan_takes_the_precision():
    model = tiny_model()
    assert ucan.smoothed_classifier(model, 3, X[0], "gaussian", precision="bf16").precision == "bf16"
    with pytest.raises(ValueError, match="precision"):
        ucan.verify_violation(model, lambda x: (torch.ones_like(x), torch.zeros_like(x)), X[0], 0, "gaussian", 0.25,
                              10, 0.01, 3, torch.Generator(), precision="fp8")


# ---- profiles, keys and manifests ----------------------------------------------------------------------------

def test_profile_checks_its_settings():
    assert (get_profile("quick").precision, get_profile("quick").draws) == ("exact", "auto")
    assert get_profile("quick").numerics() == {"precision": "exact", "draws": "cpu"}
    with pytest.raises(ValueError, match="precision must be one of .*'fp8'"):
        Profile("x", precision="fp8")
    with pytest.raises(ValueError, match="draws must be one of .*'gpu'"):
        Profile("x", draws="gpu")


def test_keys_of_exact_cpu_runs_are_unchanged_and_others_differ():
    settings = OptimSettings()
    parts = dict(n0=10, n=100, alpha=0.001, seed=0, idx=[1, 2, 3])
    plain = run_key("abc", settings, **parts)
    assert run_key("abc", settings, precision="exact", draws="cpu", **parts) == plain
    others = {run_key("abc", settings, precision=p, draws=d, **parts)
              for p, d in (("bf16", "cpu"), ("tf32", "cpu"), ("exact", "device"), ("bf16", "device"))}
    assert len(others) == 4 and plain not in others
    rs = RancerSettings()
    assert rancer_key("abc", rs, **parts) == rancer_key("abc", rs, precision="exact", draws="cpu", **parts)
    assert rancer_key("abc", rs, precision="bf16", **parts) != rancer_key("abc", rs, **parts)
    assert numerics_fields() == {} and numerics_fields("bf16", "device") == {"precision": "bf16", "draws": "device"}
    with pytest.raises(ValueError, match="resolved"):
        numerics_fields("exact", "auto")


def test_run_records_and_folders_keep_the_settings_apart(tmp_path):
    model = tiny_model()
    y, idx = np.array([0, 1, 2]), np.array([4, 9, 11])
    args = (model, X, y, idx, "gaussian", 0.25, "fixed", OptimSettings(), 10, 50, 0.01, 3)
    assert run_record(*args) == run_record(*args, precision="exact", draws="cpu")
    assert run_record(*args, precision="bf16")["precision"] == "bf16"
    run = (model, X, torch.as_tensor(y), idx, "gaussian", 0.25, "fixed", OptimSettings(), tmp_path / "run", 10, 50,
           0.01, 3)
    run_method(*run, batch_size=25)
    assert "precision" not in json.loads((tmp_path / "run" / "run.json").read_text())
    with pytest.raises(ValueError, match="holds another run: it differs in precision"):
        run_method(*run, batch_size=25, precision="bf16")
    with pytest.raises(ValueError, match="differs in draws"):
        run_method(*run, batch_size=25, draws="device")
    run_method(*run, batch_size=25, draws="cpu")  # the same run: reused


# ---- the command line -------------------------------------------------------------------------------------------

SETUP = ImageSetup("digits", "digits", "CIFAR-10", hidden=(8,), epochs=1, sigmas_l2=(0.25,), sigmas_l1=(),
                   num_test=10, num_val=4, n=200, val_n=100, iso_lr_grid=(0.01,), ancer_lr_grid=(0.04,),
                   iterations=2, samples=4)
CERTIFY = ["--max", "4", "--N0", "10", "--N", "50", "--batch", "25", "--device", "cpu", "--threads", "1",
           "--method", "fixed"]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    prepare(SETUP, seed=0, data_dir=root, cache="tiny")
    return next((root / "cache" / "tiny").glob("*_l2_sigma0.25_seed0.pt"))


@pytest.mark.parametrize("argv, message", [
    (["--precision", "fp8"], "argument --precision: invalid choice: 'fp8'"),
    (["--draws", "gpu"], "argument --draws: invalid choice: 'gpu'"),
])
def test_cli_refuses_bad_settings(argv, message, tmp_path, capsys):
    (tmp_path / "ck.pt").write_bytes(b"")
    for command in (["certify", "digits", str(tmp_path / "ck.pt"), "0.25", str(tmp_path / "o.tsv")],
                    ["select", "--profile", "quick", "--setup", "digits"]):
        with pytest.raises(SystemExit) as exit:
            main(command + argv)
        assert exit.value.code == 2 and message in capsys.readouterr().err


def test_certify_records_the_settings_and_refuses_to_resume_with_others(checkpoint, tmp_path, capsys):
    out = tmp_path / "o.tsv"
    assert main(["certify", "digits", str(checkpoint), "0.25", str(out), *CERTIFY]) == 0
    arguments = json.loads((tmp_path / "o.tsv.json").read_text())["arguments"]
    assert "precision" not in arguments and "draws" not in arguments  # an exact, CPU-draws manifest as before
    assert main(["certify", "digits", str(checkpoint), "0.25", str(out), *CERTIFY, "--precision", "exact",
                 "--draws", "cpu"]) == 0
    capsys.readouterr()
    assert main(["certify", "digits", str(checkpoint), "0.25", str(out), *CERTIFY, "--precision", "bf16"]) == 1
    assert "describes another run: it differs in arguments.precision" in capsys.readouterr().err
    assert main(["certify", "digits", str(checkpoint), "0.25", str(out), *CERTIFY, "--draws", "device"]) == 1
    assert "arguments.draws" in capsys.readouterr().err


def test_a_bf16_certify_run_in_shards_merges_with_its_settings(checkpoint, tmp_path, capsys):
    out = tmp_path / "h.tsv"
    for k in range(2):
        assert main(["certify", "digits", str(checkpoint), "0.25", str(out), *CERTIFY, "--precision", "bf16",
                     "--draws", "device", "--shard", str(k), "--num-shards", "2"]) == 0
    arguments = json.loads((tmp_path / "h.tsv.json").read_text())["arguments"]
    assert arguments["precision"] == "bf16" and arguments["draws"] == "device"
    assert main(["merge", "--outfile", str(out), "--num-shards", "2", "--device", "cpu"]) == 0
    assert len(out.read_text().splitlines()) == 5
    capsys.readouterr()
    assert main(["merge", "--outfile", str(out), "--num-shards", "2", "--device", "cpu", "--precision",
                 "exact"]) == 1
    assert "arguments.precision" in capsys.readouterr().err
