"""Sharded certification: K shards, run as submitit's local job array or one by one
(a killed shard resumed), merge into exactly the folders of one unsharded run (theta.npy, run.json byte for byte;
certify.tsv and final.tsv but the time column), for Fixed σ, Isotropic DD and ANCER; a merge with a missing
shard, a missing or doubled index, or a shard run with other settings fails naming it."""
import json
import os
import shutil

import numpy as np
import pytest
import torch

from ancer_lite.methods.registry import OptimSettings
from ancer_lite.models.small import MLP
from ancer_lite.runs import logs, shards
from ancer_lite.studies.image_study import METHODS
from ancer_lite.tooling import launch

SETTINGS = OptimSettings(chunk=4).with_budget(2, 8)
KW = dict(n0=20, n=300, alpha=0.01, num_classes=10, batch_size=128, seed=3)


@pytest.fixture(scope="module")
def toy():
    """A seeded MLP on 8x8 inputs and 9 inputs labelled by its predictions, dataset indices with gaps."""
    torch.manual_seed(0)
    model = MLP((1, 8, 8), 10, hidden=(16,)).eval()
    x = torch.rand(9, 1, 8, 8, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        y = model(x).argmax(1)
    return model, x, y, np.array([100, 101, 103, 104, 110, 111, 112, 120, 121])


def args_of(toy, root):
    model, x, y, idx = toy
    return (model, x, y, idx, "gaussian", 0.25, METHODS, SETTINGS, {m: root / m for m in METHODS})


@pytest.fixture(scope="module")
def unsharded(toy, tmp_path_factory):
    root = tmp_path_factory.mktemp("full")
    shards.run_methods(*args_of(toy, root), **KW)
    return root


def lines_without_time(path):
    rows = [r.split("\t") for r in path.read_text().splitlines()]
    t = rows[0].index("time")
    return [r[:t] + r[t + 1:] for r in rows]


def assert_same_run(a, b):
    """The folders of every method hold the same run: θ and manifest byte for byte, the logs but their times."""
    for m in METHODS:
        for name in ("theta.npy", "run.json"):
            assert (a / m / name).read_bytes() == (b / m / name).read_bytes(), (m, name)
        for name in ("certify.tsv", "final.tsv"):
            assert lines_without_time(a / m / name) == lines_without_time(b / m / name), (m, name)


def test_shard_ranges_cover_every_input_once():
    assert shards.shard_ranges(9, 4) == [(0, 3), (3, 5), (5, 7), (7, 9)]
    assert shards.shard_ranges(4, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    with pytest.raises(ValueError, match="num_shards = 5 exceeds the run's 4 inputs"):
        shards.shard_range(4, 0, 5)
    with pytest.raises(ValueError, match="shard must be in"):
        shards.shard_range(9, 4, 4)


def test_four_shards_on_submitits_local_executor_merge_to_the_unsharded_run(toy, unsharded, tmp_path):
    """One job array of 4 tasks (processes started by submitit's LocalExecutor), waited for and merged."""
    root = tmp_path / "run"
    options = launch.ClusterOptions(cluster="local", folder=str(tmp_path / "submitit"), time=5)
    said = []
    merged = launch.submit_runs(args_of(toy, root), KW, 4, options, say=said.append)
    assert sorted(p.name for p in (root / "ancer" / "shards").iterdir()) == [f"{k}-of-4" for k in range(4)]
    assert_same_run(unsharded, root)
    assert set(merged) == set(METHODS) and len(merged["ancer"]) == 9
    assert any(s.startswith("submitted 4 task(s)") for s in said)


def test_a_killed_shard_resumes_and_the_merge_is_the_unsharded_run(toy, unsharded, tmp_path):
    root = tmp_path / "run"
    for k in range(3):
        shards.run_methods(*args_of(toy, root), shard=k, num_shards=3, **KW)
    # shard 1 killed after one input: its log holds the header and one row, no final.tsv
    for m in METHODS:
        folder = shards.shard_folder(root / m, 1, 3)
        log = folder / "certify.tsv"
        log.write_text("\n".join(log.read_text().splitlines()[:2]) + "\n")
        (folder / "final.tsv").unlink()
    with pytest.raises(ValueError, match=r"missing indices \[110, 111\].*1-of-3 should hold"):
        shards.merge_methods(*args_of(toy, root), 3, **KW)
    shards.run_methods(*args_of(toy, root), shard=1, num_shards=3, **KW)  # re-run: resumes from its log
    shards.merge_methods(*args_of(toy, root), 3, **KW)
    assert_same_run(unsharded, root)
    shards.merge_methods(*args_of(toy, root), 3, **KW)  # merging again changes nothing
    assert_same_run(unsharded, root)


@pytest.fixture(scope="module")
def three_shards(toy, tmp_path_factory):
    root = tmp_path_factory.mktemp("three")
    for k in range(3):
        shards.run_methods(*args_of(toy, root), shard=k, num_shards=3, **KW)
    return root


def broken(three_shards, tmp_path):
    root = tmp_path / "run"
    shutil.copytree(three_shards, root)
    return root


def test_merge_names_a_missing_shard(toy, three_shards, tmp_path):
    root = broken(three_shards, tmp_path)
    shutil.rmtree(shards.shard_folder(root / "fixed", 2, 3))
    with pytest.raises(ValueError, match=r"shard 2-of-3 is missing"):
        shards.merge_methods(*args_of(toy, root), 3, **KW)
    assert not (root / "fixed" / "run.json").exists()  # nothing written


def test_merge_names_a_doubled_index(toy, three_shards, tmp_path):
    root = broken(three_shards, tmp_path)
    first = (shards.shard_folder(root / "fixed", 0, 3) / "certify.tsv").read_text().splitlines()[1]
    log = shards.shard_folder(root / "fixed", 1, 3) / "certify.tsv"
    log.write_text(log.read_text() + first + "\n")
    # as if shard 1 had certified idx 100 too (its checksums hold the row): the merge names the doubled index
    lines = log.read_text().splitlines()
    logs.write_checksums(log, lines[0].split("\t"), [line.split("\t") for line in lines[1:]])
    with pytest.raises(ValueError, match=r"indices held by more than one shard: 100 in 0-of-3 and 1-of-3"):
        shards.merge_methods(*args_of(toy, root), 3, **KW)
    assert not (root / "fixed" / "certify.tsv").exists()


def test_merge_names_a_mismatched_manifest(toy, three_shards, tmp_path):
    root = broken(three_shards, tmp_path)
    path = shards.shard_folder(root / "fixed", 1, 3) / "run.json"
    held = json.loads(path.read_text())
    path.write_text(json.dumps({**held, "n": 250}))
    with pytest.raises(ValueError, match=r"shard 1-of-3 .* field 'n' is 250, the run's is 300"):
        shards.merge_methods(*args_of(toy, root), 3, **KW)
    # a shard certified on other inputs at its indices
    model, x, y, idx = toy
    other = x.clone()
    other[3] *= 0.99  # still in [0, 1]
    shutil.rmtree(root / "fixed" / "shards" / "1-of-3")
    shards.run_shard(model, other, y, idx, "gaussian", 0.25, "fixed", SETTINGS, root / "fixed", 1, 3, **KW)
    with pytest.raises(ValueError, match=r"shard 1-of-3 .* other inputs than the run's at its indices \[104, 110, 111\]"):
        shards.merge_methods(*args_of(toy, root), 3, **KW)


def test_run_methods_needs_the_isotropic_folder_for_ancer(toy, tmp_path):
    model, x, y, idx = toy
    with pytest.raises(ValueError, match=r"folders must name a folder for \['isotropic'\]"):
        shards.run_methods(model, x, y, idx, "gaussian", 0.25, ["ancer"], SETTINGS, {"ancer": tmp_path}, **KW)
    with pytest.raises(ValueError, match="give both shard and num_shards"):
        shards.run_methods(model, x, y, idx, "gaussian", 0.25, ["fixed"], SETTINGS, {"fixed": tmp_path}, shard=1,
                           **KW)


def test_slurm_tasks_ask_for_one_gpu_each(tmp_path, monkeypatch):
    """The SLURM executor's parameters (submitit checks that `srun` exists: a stand-in on PATH)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    options = launch.ClusterOptions(cluster="slurm", folder=str(tmp_path / "logs"), time=720, partition="gpu",
                                    account="acct", mem_gb=32, max_parallel=8)
    params = options.executor("ancer-shards")._executor.parameters
    assert params["gpus_per_node"] == 1 and params["partition"] == "gpu" and params["account"] == "acct"
    assert params["time"] == 720 and params["mem"] == "32GB" and params["array_parallelism"] == 8
    with pytest.raises(ValueError, match="cluster must be one of"):
        launch.ClusterOptions(cluster="pbs").executor("x")
