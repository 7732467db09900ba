"""`ancer-certify certify-ucan`: UCAN's Algorithm 1 with the NPG `train` wrote, per input from its own streams (each row
equals `ucan.certify` with `streams.certify_streams(seed, index)` and UCAN Table 1's radius), its input-dependent
certificates through ANCER's Algorithm 1 (equal to the literal reference loop over `UcanCertificate.region`s),
resumable after a kill to the rows of an uninterrupted run, and refusing other settings and wrong rows by name."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from ancer_lite.core.memory import algorithm1
from ancer_lite.core.streams import certify_streams
from ancer_lite.core.ucan_radii import isotropic_radius
from ancer_lite.methods import ucan
from ancer_lite.methods.ucan_recipes import NPG_KEY, UCAN_RECIPES, load_npg, npg_record
from ancer_lite.tooling import ucan_command
from ancer_lite.tooling.cli import load_inputs, load_model, main

SHAPE = (1, 8, 8)
FAST = ["--max", "12", "--N0", "20", "--N", "400", "--alpha", "0.01", "--batch", "64", "--threads", "1"]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """A digits classifier fine-tuned with an input-dependent NPG by `train` (tiny_ucan_input, σ 0.5), and the same
    classifier beside a universal NPG at its initial weights (written as `train` writes one)."""
    root = tmp_path_factory.mktemp("ucan")
    threads = torch.get_num_threads()
    try:
        assert main(["train", "digits", "tiny", str(root / "CLS"), "--sigma", "0.5", "--max-train", "600"]) == 0
        assert main(["train", "digits", "tiny_ucan_input", str(root / "UCAN"), "--sigma", "0.5", "--max-train", "600",
                     "--start", str(root / "CLS")]) == 0
    finally:
        torch.set_num_threads(threads)
    inputs = root / "UCAN" / "sigma_0.5" / "checkpoint.pth.tar"
    held = torch.load(inputs, weights_only=True)
    torch.manual_seed(0)
    recipe = UCAN_RECIPES["ucan_universal"]
    universal = root / "universal.pth.tar"
    torch.save({"arch": held["arch"], "state_dict": held["state_dict"],
                NPG_KEY: npg_record(recipe, recipe.build_npg(SHAPE), SHAPE, 0.5)}, universal)
    return {"input": inputs, "universal": universal, "classifier": root / "CLS" / "sigma_0.5" / "checkpoint.pth.tar"}


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t")


def _reference(checkpoint: Path, row: str, memory: bool) -> pd.DataFrame:
    """Each input's certificate by `ucan.certify` from its own streams, its region for `row`, and the literal
    Algorithm 1 over them (when `memory`)."""
    model = load_model("digits", checkpoint, SHAPE)
    npg, noise, lam, a = load_npg(checkpoint)
    split = load_inputs("digits", "test", ".", 0, 1, 12)
    out, regions = [], []
    for k, i in enumerate(split.index):
        c = ucan.certify(model, npg, split.x[k], noise, lam, 20, 400, 0.01, 10, certify_streams(0, int(i)), 64, a)
        theta = (lam * ucan.npg_maps(npg, split.x[k])[0]).double().numpy()
        r1 = float(isotropic_radius(row, c.p_lower, 1.0, d=64)) if c.prediction >= 0 else 0.0
        out.append(dict(idx=int(i), predict=c.prediction, p_lower=c.p_lower, gap=r1, radius=theta.min() * r1,
                        radius_proxy=np.exp(np.log(theta).mean()) * r1))
        if memory:
            regions.append(c.region(split.x[k], theta, row))
    df = pd.DataFrame(out)
    if memory:
        decisions = algorithm1(regions, reference=True)
        df["predict"] = [d.prediction for d in decisions]
        df["radius"] = [d.radius for d in decisions]
        df["radius_proxy"] = [d.radius_proxy for d in decisions]
        df["status"] = [d.status for d in decisions]
    df["correct"] = (df.predict.to_numpy() == split.y.numpy()).astype(int)
    return df


def test_an_input_dependent_npg_certifies_each_input_by_ucan_algorithm_1_through_the_memory(checkpoints, tmp_path,
                                                                                            capsys):
    out = tmp_path / "input.tsv"
    assert main(["certify-ucan", "digits", str(checkpoints["input"]), str(out), *FAST]) == 0
    assert "memory on" in capsys.readouterr().out
    got, want = _read(out), _reference(checkpoints["input"], "gaussian/l2", memory=True)
    assert list(got.columns) == ucan_command.COLUMNS and len(got) == 12
    # enough certified inputs, of enough classes, for the comparison to mean something
    assert (got.predict >= 0).sum() >= 6 and got.predict[got.predict >= 0].nunique() >= 3
    for column in ("idx", "predict", "correct", "status"):
        assert got[column].tolist() == want[column].tolist(), column
    for column in ("p_lower", "gap", "radius", "radius_proxy"):
        np.testing.assert_allclose(got[column], want[column], rtol=1e-9, atol=1e-12, err_msg=column)
    record = json.loads((tmp_path / "input.tsv.json").read_text())
    assert record["memory_applied"] and record["noise"] == "gaussian" and record["lam"] == 0.5
    assert len(record["checkpoint_sha256"]) == 64 and len(record["outfile_sha256"]) == 64


def test_without_the_memory_the_rows_are_table_1s_radii_of_each_certificate(checkpoints, tmp_path, capsys):
    out = tmp_path / "plain.tsv"
    assert main(["certify-ucan", "digits", str(checkpoints["input"]), str(out), *FAST, "--memory", "off",
                 "--row", "gaussian/l1"]) == 0
    got, want = _read(out), _reference(checkpoints["input"], "gaussian/l1", memory=False)
    assert set(got.status) == {"no_memory"} and got.predict.tolist() == want.predict.tolist()
    for column in ("gap", "radius", "radius_proxy"):
        np.testing.assert_allclose(got[column], want[column], rtol=1e-9, atol=1e-12, err_msg=column)


def test_a_universal_npg_needs_no_memory_and_may_certify_linf(checkpoints, tmp_path, capsys):
    out = tmp_path / "universal.tsv"
    assert main(["certify-ucan", "digits", str(checkpoints["universal"]), str(out), *FAST,
                 "--row", "gaussian/linf"]) == 0
    got, want = _read(out), _reference(checkpoints["universal"], "gaussian/linf", memory=False)
    assert set(got.status) == {"no_memory"} and "memory off" in capsys.readouterr().out
    np.testing.assert_allclose(got.radius, want.radius, rtol=1e-9, atol=1e-12)


class Killed(Exception):
    pass


def test_a_killed_run_resumes_to_the_rows_of_an_uninterrupted_one(checkpoints, tmp_path, monkeypatch, capsys):
    whole, killed = tmp_path / "whole.tsv", tmp_path / "killed.tsv"
    assert main(["certify-ucan", "digits", str(checkpoints["input"]), str(whole), *FAST]) == 0
    plain, calls = ucan.certify, []

    def dies_at_the_seventh(*args, **kwargs):
        calls.append(1)
        if len(calls) == 7:
            raise Killed
        return plain(*args, **kwargs)

    monkeypatch.setattr(ucan, "certify", dies_at_the_seventh)
    with pytest.raises(Killed):
        main(["certify-ucan", "digits", str(checkpoints["input"]), str(killed), *FAST, "--batch", "50"])
    assert not killed.exists()
    monkeypatch.setattr(ucan, "certify", plain)
    assert main(["certify-ucan", "digits", str(checkpoints["input"]), str(killed), *FAST, "--batch", "50"]) == 0
    a, b = _read(whole).drop(columns="time"), _read(killed).drop(columns="time")
    pd.testing.assert_frame_equal(a, b)  # the batch size does not change a row either


@pytest.mark.parametrize("extra, code, message", [
    (["--row", "laplace/l1"], 2, "argument --row: the NPG of"),
    (["--row", "gaussian/linf"], 2, "ANCER's memory holds l1 and l2 regions only"),
    (["--memory", "on", "--row", "gaussian/linf"], 2, "ANCER's memory holds l1 and l2 regions only"),
])
def test_a_row_the_npg_or_the_memory_cannot_certify_is_refused_naming_it(checkpoints, tmp_path, capsys, extra, code,
                                                                         message):
    out = tmp_path / "x.tsv"
    with pytest.raises(SystemExit) as e:
        main(["certify-ucan", "digits", str(checkpoints["input"]), str(out), *FAST, *extra])
    assert e.value.code == code and message in capsys.readouterr().err and not out.exists()


def test_other_settings_a_classifier_without_npg_and_a_missing_file_are_refused(checkpoints, tmp_path, capsys):
    out = tmp_path / "run.tsv"
    assert main(["certify-ucan", "digits", str(checkpoints["input"]), str(out), *FAST]) == 0
    before = out.read_bytes()
    assert main(["certify-ucan", "digits", str(checkpoints["input"]), str(out), *FAST, "--N", "300"]) == 1
    assert "describes another run: it differs in arguments.N" in capsys.readouterr().err
    assert out.read_bytes() == before
    for other in ("run.tsv.json", "run.tsv.work/ucan/x.tsv"):  # its manifest and work folder are not OUTFILEs
        with pytest.raises(SystemExit) as e:
            main(["certify-ucan", "digits", str(checkpoints["input"]), str(tmp_path / other), *FAST])
        assert e.value.code == 2 and "is a file of another run" in capsys.readouterr().err
    assert main(["certify-ucan", "digits", str(checkpoints["classifier"]), str(tmp_path / "c.tsv"), *FAST]) == 1
    assert "holds no UCAN noise generator" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["certify-ucan", "digits", str(tmp_path / "none.pt"), str(tmp_path / "n.tsv")])
    assert e.value.code == 2 and "argument CHECKPOINT: no such file" in capsys.readouterr().err


# ---- where the noise is drawn ------------------------------------------------------------------------------------

def test_the_gaussian_from_the_smooths_own_streams_is_sample_standards_bit_for_bit():
    """UCAN's Gaussian drawn by the Smooth's streams (CPU draws) gives the votes of `ucan_noise.sample_standard`'s
    draws at any batch size."""
    from ancer_lite.core.certify import Smooth
    from ancer_lite.core.ucan_noise import sample_standard

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    x, theta = torch.rand(1, 8, 8), 0.3 + torch.rand(1, 8, 8)
    for batch in (7, 64, 500):
        ours = ucan.smoothed_classifier(model, 4, x, "gaussian", batch)
        theirs = Smooth(model, 4, SHAPE, "gaussian", batch,
                        sampler=lambda num, gen: sample_standard("gaussian", num, SHAPE, gen))
        assert ours.sampler is None and ours.draws == "cpu"
        a = ours.vote_counts(x[None], theta, 999, generator=torch.Generator().manual_seed(5))
        b = theirs.vote_counts(x[None], theta, 999, generator=torch.Generator().manual_seed(5))
        assert a.tolist() == b.tolist() and a.sum() == 999


def test_device_draws_run_the_block_streams_on_the_cpu_too_and_other_families_stay_on_the_cpu():
    """draws="device" takes the GPU's path (`noise.BlockDrawStream`) on whatever device the model is, here the CPU,
    independent of the batch size; a family without device streams is drawn on the CPU whatever draws says."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 4))
    npg = ucan.build_npg("input", SHAPE, growth=2)
    x = torch.rand(*SHAPE, generator=torch.Generator().manual_seed(1))
    certs = [ucan.certify(model, npg, x, "gaussian", 0.5, 20, 600, 0.01, 4, certify_streams(0, 3), batch,
                          draws="device") for batch in (48, 600)]
    assert certs[0] == certs[1] and certs[0].n == 600
    assert ucan.smoothed_classifier(model, 4, x, "gaussian", draws="device").draws == "device"
    assert ucan.noise_draws("gaussian", "auto", "cpu") == "cpu" and ucan.noise_draws("gaussian", "device", "cpu") == "device"
    assert [ucan.noise_draws("laplace", d, "cpu") for d in ("auto", "cpu", "device")] == ["cpu"] * 3
    laplace = ucan.smoothed_classifier(model, 4, x, "laplace", draws="device")
    assert laplace.draws == "cpu" and laplace.sampler is not None
    with pytest.raises(ValueError, match="draws must be one of"):
        ucan.noise_draws("laplace", "gpu", "cpu")


def test_certify_ucan_records_device_draws_and_keeps_them_apart_from_cpu_draws(checkpoints, tmp_path, capsys):
    out = tmp_path / "device.tsv"
    assert main(["certify-ucan", "digits", str(checkpoints["input"]), str(out), *FAST, "--draws", "device"]) == 0
    assert json.loads((tmp_path / "device.tsv.json").read_text())["arguments"]["draws"] == "device"
    run = json.loads((tmp_path / "device.tsv.work" / "ucan" / "run.json").read_text())
    assert run["draws"] == "device"
    cpu = tmp_path / "cpu.tsv"
    assert main(["certify-ucan", "digits", str(checkpoints["input"]), str(cpu), *FAST]) == 0
    assert "draws" not in json.loads((tmp_path / "cpu.tsv.work" / "ucan" / "run.json").read_text())
    device_rows, cpu_rows = _read(out), _read(cpu)
    assert device_rows.idx.tolist() == cpu_rows.idx.tolist()
    assert not np.array_equal(device_rows.p_lower, cpu_rows.p_lower)  # other draws, other counts
    assert main(["certify-ucan", "digits", str(checkpoints["input"]), str(out), *FAST]) == 1  # auto: the CPU here
    assert "differs in arguments.draws" in capsys.readouterr().err
