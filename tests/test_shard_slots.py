"""The folders of a sharded run checked before anything is submitted (`shards.check_slots`): a shard folder or run
folder holding another run is refused with one error naming the folder, the fields that differ and what to do,
instead of every task failing on it after the others ran (`launch.submit_runs`, `ancer-certify submit`); and a
merge killed while writing leaves a temporary file that the successful rerun removes."""
import dataclasses
import json
import shutil

import pytest

from ancer_lite.methods.registry import OptimSettings
from ancer_lite.runs import profiles, shards
from ancer_lite.runs.profiles import ImageSetup, get_profile
from ancer_lite.runs.setups import prepare
from ancer_lite.studies.image_study import METHODS
from ancer_lite.tooling import launch
from ancer_lite.tooling.cli import main

SETTINGS = OptimSettings(chunk=4).with_budget(2, 4)
KW = dict(n0=10, n=100, alpha=0.01, num_classes=3, batch_size=64, seed=0)


@pytest.fixture(scope="module")
def run(toy_classifier, tmp_path_factory):
    """Two shards of the three methods on 6 toy inputs, each shard run (not merged)."""
    model, x, y, idx = toy_classifier(6)
    root = tmp_path_factory.mktemp("two")
    args = (model, x, y, idx, "gaussian", 0.25, METHODS, SETTINGS, {m: root / m for m in METHODS})
    for k in range(2):
        shards.run_methods(*args, shard=k, num_shards=2, **KW)
    return args, root


def copy_of(run, tmp_path):
    args, root = run
    shutil.copytree(root, tmp_path / "run")
    return (*args[:-1], {m: tmp_path / "run" / m for m in METHODS})


def test_this_runs_folders_pass(run, tmp_path):
    args = copy_of(run, tmp_path)
    shards.check_slots(*args, 2, **KW)  # the shards of this run: resumed, not refused
    shards.check_slots(*args, 3, **KW)  # slots not made yet
    shards.merge_methods(*args, 2, **KW)
    shards.check_slots(*args, 2, **KW)  # the merged folders hold this run too


def test_another_runs_shard_folder_is_named_before_any_task_is_submitted(run, tmp_path):
    args = copy_of(run, tmp_path)
    slot = shards.shard_folder(args[-1]["isotropic"], 1, 2)
    shutil.rmtree(slot)
    shutil.copytree(shards.shard_folder(args[-1]["isotropic"], 0, 2), slot)  # shard 0's run in shard 1's slot
    options = launch.ClusterOptions(cluster="local", folder=str(tmp_path / "submitit"), time=5)
    said = []
    with pytest.raises(ValueError) as info:
        launch.submit_runs(args, KW, 2, options, say=said.append)
    message = str(info.value)
    assert message.startswith(f"{slot} (shard 1-of-2 of the isotropic run) holds another run: its run.json differs "
                              "in indices, inputs, labels (indices held '")
    assert message.endswith("; delete that folder to run it afresh, or choose another output folder")
    assert said == [] and not (tmp_path / "submitit").exists()  # nothing submitted


def test_the_differing_setting_is_named_with_both_values(run, tmp_path):
    args = copy_of(run, tmp_path)
    path = shards.shard_folder(args[-1]["ancer"], 0, 2) / "run.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "n": 250}))
    with pytest.raises(ValueError, match=r"0-of-2 of the ancer run\) holds another run: its run\.json differs in n "
                                         r"\(n held 250, this run's 100\); delete that folder"):
        shards.check_slots(*args, 2, **KW)


def test_an_isotropic_start_not_written_yet_is_not_compared(run, tmp_path):
    """ANCER's record holds its Isotropic DD start's digest, known only once that θ is written."""
    args = copy_of(run, tmp_path)
    shards.shard_folder(args[-1]["isotropic"], 1, 2).joinpath("theta.npy").unlink()
    shards.check_slots(*args, 2, **KW)
    shards.shard_folder(args[-1]["isotropic"], 0, 2).joinpath("theta.npy").write_bytes(
        shards.shard_folder(args[-1]["isotropic"], 1, 2).joinpath("run.json").read_bytes())
    with pytest.raises(ValueError, match=r"isotropic/shards/0-of-2/theta\.npy is not a readable NumPy array file"):
        shards.check_slots(*args, 2, **KW)  # a start that is not an array is named


def test_a_runs_files_without_a_manifest_are_named(run, tmp_path):
    args = copy_of(run, tmp_path)
    (args[-1]["fixed"] / "certify.tsv").write_text("idx\n")
    with pytest.raises(ValueError, match=r"fixed \(the fixed run\) holds certify\.tsv but no run\.json, so what they "
                                         r"were computed from is unknown; delete that folder"):
        shards.check_slots(*args, 2, **KW)


def test_a_killed_merges_temporary_file_is_gone_after_the_rerun(run, tmp_path):
    args = copy_of(run, tmp_path)
    folder = args[-1]["fixed"]  # holds its shards only
    stale = folder / ".certify.tsv.q7x2ab_c.tmp"  # what a merge killed while writing certify.tsv leaves
    stale.write_text("idx\tlabel\n10\t")
    other = folder / ".notes.txt.q7x2ab_c.tmp"  # another file's temporary
    other.write_text("")
    shards.merge_methods(*args, 2, **KW)
    assert not stale.exists() and other.exists()
    stale.write_text("idx\t")  # killed again, then merged again: certify.tsv unchanged, the temporary removed
    shards.merge_methods(*args, 2, **KW)
    assert not stale.exists()
    assert sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp")) == [other.name]


SETUP = ImageSetup("digits", "digits", "CIFAR-10", hidden=(8,), epochs=1, sigmas_l2=(0.25,), sigmas_l1=(),
                   num_test=10, num_val=4, n=100, val_n=50, iso_lr_grid=(0.01,), ancer_lr_grid=(0.04,),
                   iterations=2, samples=4)
PROFILE = dataclasses.replace(get_profile("quick"), name="tiny_slots", n0=10, batch_size=100, images=(SETUP,))


def test_submit_names_the_shard_folder_holding_another_run_without_a_traceback(tmp_path, monkeypatch, capsys):
    """`ancer-certify submit` with another run's folder in a shard slot: one error line before anything is
    submitted (the tasks used to fail one by one, each with submitit's traceback, and the launcher said to submit
    again, which could not help)."""
    prepare(SETUP, seed=0, data_dir=tmp_path, cache=PROFILE.name)
    monkeypatch.setitem(profiles.PROFILES, PROFILE.name, PROFILE)
    results = tmp_path / "results"
    common = ["--profile", PROFILE.name, "--setup", "digits", "--data-dir", str(tmp_path), "--results", str(results)]
    assert main(["shard", *common, "--norm", "l2", "--sigma", "0.25", "--shard", "0", "--num-shards", "2"]) == 0
    (fixed,) = (results / "digits" / "l2" / "sigma_0.25").glob("fixed-*")
    shutil.copytree(fixed / "shards" / "0-of-2", fixed / "shards" / "1-of-2")
    capsys.readouterr()
    assert main(["submit", *common, "--num-shards", "2", "--cluster", "local", "--no-estimate",
                 "--log-dir", str(tmp_path / "submitit")]) == 1
    out, err = capsys.readouterr()
    assert err.startswith(f"ancer-certify submit: error: {fixed / 'shards' / '1-of-2'} (shard 1-of-2 of the fixed "
                          "run) holds another run: its run.json differs in indices, inputs, labels")
    assert err.count("\n") == 1 and "Traceback" not in err and "submit again" not in err
    assert "submitted" not in out and not (tmp_path / "submitit").exists()
