"""The paper profile's path end to end, at toy size on the CPU (the `paper-smoke` profile): CIFAR-10 in its python-batch
format (generated here: three classes told apart by their colour) -> `ancer-certify checkpoints` (the tiny recipes'
ResNet-20s, one per norm) -> `select` -> `shard` x 2 -> `merge` (l2) -> notebook 03 executed by papermill on the
results, which must read the merged l2 runs as its own and certify the unsharded ones itself.
"""
from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import jupytext
import nbformat
import numpy as np
import papermill

from ancer_lite.models.data import CIFAR10_FOLDER, REPO_ROOT
from ancer_lite.runs.profiles import get_profile
from ancer_lite.runs.setups import checkpoint_path
from ancer_lite.tooling import cli

PROFILE = "paper-smoke"
COLOURS = np.array([[200, 40, 40], [40, 200, 40], [40, 40, 200]])


def write_cifar_batches(root: Path, per_batch: int = 60) -> None:
    """data_batch_1..5 and test_batch of `per_batch` images each, as pickled dicts of uint8 data (N, 3072) and labels
    (CIFAR-10's python format), classes 0-2 with their own mean colour plus noise."""
    folder = root / "cifar10" / CIFAR10_FOLDER
    folder.mkdir(parents=True)
    for seed, name in [(i, f"data_batch_{i}") for i in range(1, 6)] + [(9, "test_batch")]:
        rng = np.random.default_rng(seed)
        labels = rng.integers(0, 3, per_batch)
        pixels = COLOURS[labels][:, :, None] + rng.normal(0, 40, (per_batch, 3, 1024))
        data = np.clip(pixels, 0, 255).astype(np.uint8).reshape(per_batch, 3072)
        with open(folder / name, "wb") as fh:
            pickle.dump({"data": data, "labels": labels.tolist()}, fh)


def run_cli(*argv: str) -> None:
    assert cli.main(list(argv)) == 0, argv


def test_the_paper_path_from_cifar_batches_to_notebook_03(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    write_cifar_batches(data)
    setup = get_profile(PROFILE).images[0]
    common = ("--profile", PROFILE, "--data-dir", str(data))

    run_cli("checkpoints", *common)
    for norm in ("l2", "l1"):
        path = checkpoint_path(data, "cifar10", norm, 0.25)
        manifest = json.loads(Path(f"{path}.json").read_text())
        assert manifest["recipe_name"] == getattr(setup, f"recipe_{norm}") and manifest["inputs"] == 300
    run_cli("checkpoints", *common)  # nothing left to train
    assert "every checkpoint is present" in capsys.readouterr().out

    run_cli("select", *common, "--setup", "cifar10")
    for k in (0, 1):
        run_cli("shard", *common, "--setup", "cifar10", "--norm", "l2", "--sigma", "0.25", "--shard", str(k),
                "--num-shards", "2")
    run_cli("merge", *common, "--setup", "cifar10", "--norm", "l2", "--sigma", "0.25", "--num-shards", "2")

    # notebook 03 on the results, as `make all PROFILE=paper-smoke` runs it (the data folder by ANCER_DATA_DIR)
    figures = tmp_path / "figures"
    monkeypatch.setenv("ANCER_DATA_DIR", str(data))
    monkeypatch.setenv("ANCER_FIGURES_DIR", str(figures))
    source = tmp_path / "03.ipynb"
    nbformat.write(jupytext.read(REPO_ROOT / "notebooks" / "03_image_certification.py"), source)
    out = papermill.execute_notebook(str(source), str(tmp_path / "03_out.ipynb"), parameters={"profile": PROFILE},
                                     kernel_name="python3", cwd=str(REPO_ROOT / "notebooks"), progress_bar=False)
    text = "\n".join(o.get("text", "") if isinstance(o.get("text", ""), str) else "".join(o["text"])
                     for c in out.cells if c.cell_type == "code" for o in c.get("outputs", []) if "text" in o)
    # the merged l2 runs are read as the notebook's own (3 methods x the test inputs); the l1 runs it computes
    inputs = setup.num_test
    found = re.search(r"([\d,]+) \(input, model, method\) certifications: ([\d,]+) computed in this run, ([\d,]+) "
                      r"reused from the logs in \$ANCER_DATA_DIR/results/paper-smoke", text)
    assert found, text[:3000]
    total, computed, reused = (int(g.replace(",", "")) for g in found.groups())
    # l2 at σ = 0.25 merged from the shards; l2 at σ = 1.0 and l1 at σ = 0.25 certified by the notebook
    assert (total, computed, reused) == (3 * 3 * inputs, 2 * 3 * inputs, 3 * inputs)
    assert "Not run on the paper-smoke profile" in "\n".join(
        "".join(o.get("data", {}).get("text/markdown", "")) for c in out.cells for o in c.get("outputs", []))
    assert str(tmp_path) not in json.dumps([c.get("outputs", []) for c in out.cells])  # no absolute path shown
    drawn = sorted(p.name for p in figures.glob("*.png"))
    assert drawn == sorted(f"ancer_fig{n:02d}_{what}.png" for n, what in (
        (2, "l2_certified_accuracy"), (3, "l1_certified_accuracy"), (6, "l2_per_sigma_cifar10"),
        (8, "l2_proxy_per_sigma_cifar10"), (10, "l1_per_sigma_cifar10"), (12, "l1_proxy_per_sigma_cifar10"))), drawn
    assert (figures / "claims" / "03_image_certification.tsv").is_file()

