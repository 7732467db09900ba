"""The Fashion-MNIST profile (`fmnist`): its data folder, its held-out validation split, its checkpoints' plan and a
certify run on it, on generated IDX files (Debian's dataset-fashion-mnist need not be installed)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from test_train_command import write_fmnist

from ancer_lite.models.data import FASHION_MNIST_DIR, FASHION_MNIST_VAL, fashion_mnist_folder, fashion_mnist_splits
from ancer_lite.runs.profiles import get_profile
from ancer_lite.runs.setups import checkpoint_path, missing_inputs, prepare
from ancer_lite.tooling import cli

TRAIN, TEST = FASHION_MNIST_VAL + 24, 30


@pytest.fixture()
def data(tmp_path):
    """A data folder with generated Fashion-MNIST IDX files in fashion-mnist/."""
    folder = tmp_path / "fashion-mnist"
    folder.mkdir()
    write_fmnist(folder, TRAIN, "train")
    write_fmnist(folder, TEST, "test")
    return tmp_path


def test_a_copy_in_the_data_folder_comes_before_debians(tmp_path, data):
    assert fashion_mnist_folder(tmp_path / "nothing-here") == (FASHION_MNIST_DIR, True)
    assert fashion_mnist_folder(None) == (FASHION_MNIST_DIR, True)
    assert fashion_mnist_folder(data) == (data / "fashion-mnist", False)


def test_the_validation_split_is_held_out_of_the_training_images(data):
    s = fashion_mnist_splits(data)
    assert (len(s["train"]), len(s["val"]), len(s["test"])) == (TRAIN - FASHION_MNIST_VAL, FASHION_MNIST_VAL, TEST)
    assert list(s["val"].index[[0, -1]]) == [TRAIN - FASHION_MNIST_VAL, TRAIN - 1]
    assert not set(s["train"].index) & set(s["val"].index)
    with pytest.raises(ValueError, match=f"val must be fewer than the {TRAIN} training images"):
        fashion_mnist_splits(data, val=TRAIN)


def test_missing_files_name_the_debian_package(tmp_path, monkeypatch):
    import ancer_lite.runs.setups as setups
    monkeypatch.setattr(setups, "fashion_mnist_folder", lambda d: (tmp_path / "absent", True))
    missing = missing_inputs(get_profile("fmnist"), tmp_path)
    files = [p for p, how in missing if "checkpoints" not in p.parts]
    assert len(files) == 4 and all("apt-get install dataset-fashion-mnist" in how for p, how in missing if p in files)
    assert len(missing) == 4 + 7


def test_the_profile_trains_its_checkpoints_and_certifies(data, capsys, monkeypatch):
    """The plan of `ancer-certify checkpoints --profile fmnist` (7 ResNet-18s on the held-out-free training images),
    one of them trained briefly, then prepared as notebook 03 prepares it and certified by `ancer-certify certify`."""
    from ancer_lite.tooling import checkpoints_command
    # the measurement itself is tested in test_checkpoints_command; a ResNet-18 step of batch 256 is slow on a CPU
    monkeypatch.setattr(checkpoints_command, "seconds_per_step", lambda recipe, device, precision: 1.0)
    assert cli.main(["checkpoints", "--profile", "fmnist", "--data-dir", str(data), "--dry-run"]) == 0
    out = capsys.readouterr().out
    steps = -(-(TRAIN - FASHION_MNIST_VAL) // 256) * 30  # fmnist_l2_resnet18: batch 256, 30 epochs
    assert f"30 epochs × {steps // 30:,} steps × 1.000 s" in out
    assert "7 checkpoint(s) missing" in out and "fmnist_l2_resnet18" in out and "fmnist_l1_resnet18" in out
    path = checkpoint_path(data, "fmnist", "l2", 0.25)
    assert cli.main(["train", "fmnist", "fmnist_l2_resnet18", str(path.parent.parent), "--sigma", "0.25",
                     "--data-dir", str(data), "--epochs", "1", "--max-train", "16"]) == 0
    record = json.loads(path.with_name(path.name + ".json").read_text())
    assert record["inputs"] == 16 and "held out for validation" in record["data_source"]
    setup = get_profile("fmnist").images[0]
    from dataclasses import replace
    work = prepare(replace(setup, sigmas_l2=(0.25,), sigmas_l1=(), num_test=10, num_val=5), data_dir=data)
    assert tuple(work.test.x.shape) == (10, 1, 28, 28) and list(work.test.index) == list(range(0, 30, 3))
    # the validation inputs: a class-balanced subset (`data.stratified_subset`) of the held-out tail
    assert len(work.val) == 5 and all(TRAIN - FASHION_MNIST_VAL <= i < TRAIN for i in work.val.index)
    assert len(set(work.val.y.tolist())) == 5
    with torch.no_grad():
        assert work.models["l2", 0.25](work.test.x).shape == (10, 10)
    tsv = data / "out.tsv"
    assert cli.main(["certify", "fmnist", str(path), "0.25", str(tsv), "--method", "fixed", "--max", "2", "--N", "64",
                     "--N0", "16", "--data-dir", str(data), "--device", "cpu"]) == 0
    rows = tsv.read_text().splitlines()
    assert rows[0].startswith("idx\tlabel") and len(rows) == 3
    assert np.all(np.isfinite([float(r.split("\t")[3]) for r in rows[1:]]))


def test_paper_path_page_states_the_h100_record_of_benchmarks_results():
    """The paper-path page's fmnist-on-a-GPU table is what the committed TSVs give: certified accuracy and ACR of each method
    on the 80 inputs ANCER reached (ANCER's ℓ2 proxy radius), so the table cannot drift from the record."""
    root = Path(__file__).resolve().parents[1]
    rec = root / "benchmarks" / "results" / "fmnist_h100"
    readme = (root / "docs" / "paper-path.md").read_text(encoding="utf-8")
    ancer = pd.read_csv(rec / "fmnist_l2_0.25_ancer_first80_before_memory.tsv", sep="\t")
    assert len(ancer) == 80
    runs = {"Fixed σ": ("fmnist_l2_0.25_fixed.tsv", "radius"),
            "Isotropic DD": ("fmnist_l2_0.25_isotropic.tsv", "radius"),
            "ANCER (ℓ2 proxy radius, before the memory)": (None, "radius_proxy")}
    for label, (name, column) in runs.items():
        d = ancer if name is None else pd.read_csv(rec / name, sep="\t")
        d = d[d["idx"].isin(ancer["idx"])]
        assert len(d) == 80
        r = np.where(d["correct"].astype(bool), d[column], 0.0)
        cells = " / ".join(f"{round(100 * float(np.mean(r >= t)))} %" if t else
                           f"{round(100 * float(np.mean(d['correct'].astype(bool))))} %" for t in (0, 0.5, 1.0))
        assert f"| {label} | {cells} | {r.mean():.3f} |" in readme, label
