"""The command line `ancer-certify`, called in-process through `cli.main`: `certify`
reproduces notebook 03's logs of the same settings (`image_study.certify_sigma`) and, sharded, merges into the
same OUTFILE; `select` / `shard` / `merge` of a profile's setup fill the run folders the notebook then reuses;
`submit --dry-run` prints the estimate and the plan; every command documents itself, and bad arguments exit with
status 2 naming them."""
import dataclasses
import json

import pytest

from ancer_lite.methods.registry import OptimSettings
from ancer_lite.models.data import Split, digits_split
from ancer_lite.runs import profiles
from ancer_lite.runs.profiles import ImageSetup, get_profile
from ancer_lite.runs.setups import Workload, prepare
from ancer_lite.studies import image_study
from ancer_lite.studies.image_study import METHODS
from ancer_lite.tooling.cli import main

SETUP = ImageSetup("digits", "digits", "CIFAR-10", hidden=(8,), epochs=1, sigmas_l2=(0.25,), sigmas_l1=(),
                   num_test=10, num_val=4, n=200, val_n=100, iso_lr_grid=(0.01,), ancer_lr_grid=(0.04,),
                   iterations=2, samples=4)
PROFILE = dataclasses.replace(get_profile("quick"), name="tiny", n0=10, batch_size=100, images=(SETUP,))
SETTINGS = OptimSettings().with_budget(2, 4).changed("isotropic", lr=0.01).changed("ancer", lr=0.02)
CERTIFY = ["--max", "12", "--N0", "10", "--N", "200", "--alpha", "0.001", "--batch", "100", "--iterations", "2",
           "--samples", "4", "--iso-lr", "0.01", "--ancer-lr", "0.02", "--device", "cpu", "--threads", "1"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The tiny setup's data and trained model (cached under <root>/cache/tiny/) and the model's state-dict file."""
    root = tmp_path_factory.mktemp("data")
    work = prepare(SETUP, seed=0, data_dir=root, cache="tiny")
    checkpoint = next((root / "cache" / "tiny").glob("*_l2_sigma0.25_seed0.pt"))
    return root, work, checkpoint


def without_time(text):
    rows = [r.split("\t") for r in text.splitlines()]
    t = rows[0].index("time")
    return [r[:t] + r[t + 1:] for r in rows]


@pytest.fixture(scope="module")
def notebook_runs(data, tmp_path_factory):
    """Notebook 03's `certify_sigma` on the first 12 inputs of the digits test split (what `--max 12` certifies)."""
    _, work, _ = data
    full = digits_split(0)["test"]
    test = Split(full.x[:12], full.y[:12], full.index[:12])
    work12 = Workload(work.dataset, work.num_classes, test, work.val, work.models)
    results = tmp_path_factory.mktemp("notebook")
    frame, _, _ = image_study.certify_sigma(work12, SETUP, PROFILE, SETTINGS, results, "l2", 0.25)
    return {m: results / frame[frame.method == m].run.iloc[0] for m in METHODS}


@pytest.mark.parametrize("method", METHODS)
def test_certify_reproduces_notebook_03(data, notebook_runs, tmp_path, capsys, method):
    _, _, checkpoint = data
    out = tmp_path / f"{method}.tsv"
    assert main(["certify", "digits", str(checkpoint), "0.25", str(out), "--method", method, *CERTIFY]) == 0
    assert without_time(out.read_text()) == without_time((notebook_runs[method] / "final.tsv").read_text())
    work = tmp_path / f"{method}.tsv.work" / method
    assert (work / "theta.npy").read_bytes() == (notebook_runs[method] / "theta.npy").read_bytes()
    record = json.loads((tmp_path / f"{method}.tsv.json").read_text())
    assert record["arguments"]["method"] == method and record["arguments"]["N"] == 200
    assert len(record["checkpoint_sha256"]) == 64 and record["versions"]["torch"] and record["device"] == "cpu"
    assert "12 inputs" in capsys.readouterr().out
    # run again: everything is reused, the file is the same
    before = out.read_text()
    assert main(["certify", "digits", str(checkpoint), "0.25", str(out), "--method", method, *CERTIFY]) == 0
    assert out.read_text() == before
    # another setting on the same OUTFILE is refused, naming it
    assert main(["certify", "digits", str(checkpoint), "0.25", str(out), "--method", method, *CERTIFY,
                 "--seed", "1"]) == 1
    assert "arguments.seed" in capsys.readouterr().err


def test_certify_in_shards_merges_to_the_unsharded_outfile(data, notebook_runs, tmp_path, capsys):
    _, _, checkpoint = data
    out = tmp_path / "ancer.tsv"
    for k in range(3):
        assert main(["certify", "digits", str(checkpoint), "0.25", str(out), "--method", "ancer", *CERTIFY,
                     "--shard", str(k), "--num-shards", "3"]) == 0
    assert not out.exists() and "merge --outfile" in capsys.readouterr().out
    assert main(["merge", "--outfile", str(out), "--num-shards", "3", "--threads", "1"]) == 0
    assert without_time(out.read_text()) == without_time((notebook_runs["ancer"] / "final.tsv").read_text())


def test_profile_select_shard_merge_fill_the_notebooks_folders(data, tmp_path, monkeypatch, capsys):
    root, work, _ = data
    monkeypatch.setitem(profiles.PROFILES, "tiny", PROFILE)
    results = tmp_path / "results"
    common = ["--profile", "tiny", "--setup", "digits", "--data-dir", str(root), "--results", str(results)]
    assert main(["select", *common]) == 0
    assert "Isotropic DD lr" in capsys.readouterr().out
    for k in range(2):
        assert main(["shard", *common, "--norm", "l2", "--sigma", "0.25", "--shard", str(k), "--num-shards", "2"]) == 0
    assert main(["merge", *common, "--norm", "l2", "--sigma", "0.25", "--num-shards", "2"]) == 0
    # the notebook's own call finds every run complete and certifies nothing
    chosen, _ = image_study.choose_step_sizes(work, SETUP, PROFILE, results)
    frame, _, reused = image_study.certify_sigma(work, SETUP, PROFILE, chosen["l2"], results, "l2", 0.25)
    assert reused == len(frame) == 3 * len(work.test)
    # and its logs are those of an unsharded run
    other = tmp_path / "unsharded"
    image_study.choose_step_sizes(work, SETUP, PROFILE, other)
    alone, _, _ = image_study.certify_sigma(work, SETUP, PROFILE, chosen["l2"], other, "l2", 0.25)
    for run in sorted(set(frame.run)):
        assert (results / run / "run.json").read_bytes() == (other / run / "run.json").read_bytes()
        for name in ("certify.tsv", "final.tsv"):
            assert without_time((results / run / name).read_text()) == without_time((other / run / name).read_text())
    # the launcher's dry run: the estimate and the plan, nothing submitted
    assert main(["submit", *common, "--num-shards", "2", "--cluster", "local", "--dry-run"]) == 0
    said = capsys.readouterr().out
    assert "cost estimate:" in said and "How: measured here on cpu" in said and "task 1: digits/l2/sigma_0.25 shard 1-of-2" in said


@pytest.mark.parametrize("command", [None, "certify", "select", "shard", "merge", "submit"])
def test_every_command_documents_itself(command, capsys):
    with pytest.raises(SystemExit) as exit:
        main([command, "--help"] if command else ["--help"])
    assert exit.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: ancer-certify") and "examples:" in text
    assert "default:" in text or command is None


BAD = [
    (["certify", "cifar10", "no-such.pth", "0.25", "o.tsv"], "argument CHECKPOINT: no such file: 'no-such.pth'"),
    (["certify", "digits", "{ck}", "0", "o.tsv"], "argument SIGMA: must be a finite number > 0, got '0'"),
    (["certify", "digits", "{ck}", "0.25", "o.tsv", "--N", "0"], "argument --N: must be an integer >= 1, got '0'"),
    (["certify", "digits", "{ck}", "0.25", "o.tsv", "--alpha", "1.5"],
     "argument --alpha: must be a number in (0, 1), got '1.5'"),
    (["certify", "digits", "{ck}", "0.25", "o.tsv", "--method", "cohen"], "argument --method: invalid choice: 'cohen'"),
    (["certify", "svhn", "{ck}", "0.25", "o.tsv"], "argument DATASET: invalid choice: 'svhn'"),
    (["certify", "digits", "{ck}", "0.25", "o.tsv", "--device", "gpu"],
     "argument --device: must be 'auto', 'cpu', 'cuda' or 'cuda:N', got 'gpu'"),
    (["certify", "digits", "{ck}", "0.25", "o.tsv", "--shard", "4", "--num-shards", "4"],
     "argument --shard: must be below --num-shards = 4, got 4"),
    (["certify", "digits", "{ck}", "0.25", "o.tsv", "--shard", "1"], "argument --shard/--num-shards: give both"),
    (["certify", "digits", "{ck}", "0.25", "o.tsv", "--method", "rancer", "--norm", "l1"],
     "argument --norm: RANCER certifies l2"),
    (["shard", "--profile", "quick", "--setup", "nope", "--norm", "l2", "--sigma", "0.25", "--shard", "0",
      "--num-shards", "2"], "argument --setup: 'nope' is not one of profile 'quick'"),
    (["shard", "--profile", "quick", "--setup", "digits", "--norm", "l2", "--sigma", "0.3", "--shard", "0",
      "--num-shards", "2"], "argument --sigma: 0.3 is not one of setup 'digits''s l2 noise levels"),
    (["shard", "--profile", "quick", "--setup", "digits", "--norm", "l2", "--sigma", "0.25", "--shard", "2",
      "--num-shards", "2"], "argument --shard: must be below --num-shards = 2, got 2"),
    (["merge", "--num-shards", "2"], "required without --outfile: --profile, --setup, --norm, --sigma"),
    (["merge", "--num-shards", "2", "--outfile", "o.tsv", "--profile", "quick"],
     "argument --outfile: not allowed with --profile"),
    (["merge", "--num-shards", "2", "--outfile", "o.tsv"], "argument --outfile: o.tsv.json not found"),
    (["submit", "--profile", "nope", "--setup", "x", "--num-shards", "2"], "argument --profile: invalid choice: 'nope'"),
    (["submit", "--profile", "quick", "--setup", "digits", "--num-shards", "0"],
     "argument --num-shards: must be an integer >= 1, got '0'"),
    (["submit", "--profile", "quick", "--setup", "digits", "--num-shards", "2", "--sigma", "0.3"],
     "argument --sigma: 0.3 not among setup 'digits''s noise levels"),
    (["frobnicate"], "argument COMMAND: invalid choice: 'frobnicate'"),
    # OUTFILE is checked before any work: never the checkpoint, never a directory, in a folder it can write
    (["certify", "digits", "{ck}", "0.25", "ck.pt"], "argument OUTFILE: OUTFILE ck.pt would overwrite the checkpoint"),
    (["certify", "digits", "{ck}", "0.25", "ck"], "argument OUTFILE: OUTFILE ck would overwrite the checkpoint "
                                                 "ck.json (the run writes ck.json)"),
    (["certify", "digits", "{ck}", "0.25", "sub"], "argument OUTFILE: OUTFILE sub is a directory"),
    (["certify", "digits", "{ck}", "0.25", "ck.pt/o.tsv"], "argument OUTFILE: OUTFILE ck.pt/o.tsv: its folder"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a[:1] + [m.split(":")[0]]) for a, m in BAD])
def test_bad_arguments_exit_2_naming_them(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ck.pt").write_bytes(b"")
    (tmp_path / "sub").mkdir()
    if argv[-1] == "ck":  # a checkpoint named like the manifest of OUTFILE "ck"
        (tmp_path / "ck.pt").rename(tmp_path / "ck.json")
        argv = [a.replace("{ck}", "ck.json") for a in argv]
    with pytest.raises(SystemExit) as exit:
        main([a.replace("{ck}", "ck.pt") for a in argv])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "usage: ancer-certify" in err
    assert sorted(p.name for p in tmp_path.iterdir()) in (["ck.pt", "sub"], ["ck.json", "sub"])  # nothing written


def test_a_second_writer_of_one_outfile_waits_for_the_first(tmp_path, capsys):
    """Two runs of one OUTFILE (certify, merge) take turns on its lock: the second says it waits, then goes on."""
    import fcntl
    import os
    import threading

    from ancer_lite.tooling.cli import writer_of

    out = tmp_path / "o.tsv"
    order = []
    with writer_of(out):
        def run_second():
            with writer_of(out):
                order.append("second")

        second = threading.Thread(target=run_second)
        second.start()
        second.join(0.5)
        assert second.is_alive()  # waiting on the lock the first holds
        order.append("first")
    second.join(5)
    assert order == ["first", "second"]
    assert f"another run is writing {out}" in capsys.readouterr().err
    fd = os.open(tmp_path / ".o.tsv.lock", os.O_RDWR)  # released: a third writer gets it at once
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)


TINY = ["--max", "3", "--N0", "10", "--N", "50", "--alpha", "0.01", "--batch", "100", "--device", "cpu",
        "--threads", "1", "--method", "fixed"]


def _certify(checkpoint, out, *extra):
    return main(["certify", "digits", str(checkpoint), "0.25", str(out), *TINY, *extra])


def test_a_broken_model_is_named_and_leaves_nothing_behind(data, tmp_path, capsys):
    """A checkpoint that loads but fails on the first input (another number of classes, NaN weights) is refused
    naming the file, before OUTFILE.json or OUTFILE.work/ exist, so the corrected rerun is not refused."""
    import torch

    _, _, checkpoint = data
    state = torch.load(checkpoint, weights_only=True)
    last = max((k for k in state if k.endswith(".weight")), key=lambda k: int(k.split(".")[1]))
    three = dict(state, **{last: state[last][:3], last[:-6] + "bias": state[last[:-6] + "bias"][:3]})
    nan = {k: torch.full_like(v, float("nan")) if k == last else v for k, v in state.items()}
    out = tmp_path / "o.tsv"
    for name, bad, words in (("three.pt", three, "shape (batch, num_classes) = (1, 10), got (1, 3)"),
                             ("nan.pt", nan, "non-finite logits")):
        torch.save(bad, tmp_path / name)
        assert _certify(tmp_path / name, out) == 1
        err = capsys.readouterr().err
        assert f"{tmp_path / name}: the model fails on the first input" in err and words in err
        assert not (tmp_path / "o.tsv.json").exists() and not (tmp_path / "o.tsv.work").exists()
    assert _certify(checkpoint, out) == 0


def test_unreadable_checkpoints_and_manifests_are_named(data, tmp_path, capsys):
    import torch

    _, _, checkpoint = data
    (tmp_path / "bytes.pt").write_bytes(bytes(range(256)) * 4)
    assert _certify(tmp_path / "bytes.pt", tmp_path / "a.tsv") == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'bytes.pt'}: not a readable torch state dict" in err and "weights_only" not in err
    state = torch.load(checkpoint, weights_only=True)
    first = min((k for k in state if k.endswith(".weight")), key=lambda k: int(k.split(".")[1]))
    torch.save(dict(state, **{first: torch.zeros(state[first].shape[0], 16)}), tmp_path / "small.pt")
    assert _certify(tmp_path / "small.pt", tmp_path / "b.tsv") == 1
    assert "size mismatch" in capsys.readouterr().err
    out = tmp_path / "c.tsv"
    for text in ('{"arguments": {"dataset": "dig', "{}"):
        (tmp_path / "c.tsv.json").write_text(text)
        assert _certify(checkpoint, out) == 1
        assert f"{tmp_path / 'c.tsv.json'} is not" in capsys.readouterr().err
        assert main(["merge", "--outfile", str(out), "--num-shards", "2"]) == 1
        assert f"{tmp_path / 'c.tsv.json'} is not" in capsys.readouterr().err


def test_a_finished_run_is_reused_from_another_data_dir_or_checkpoint_path(data, tmp_path, capsys):
    """What determines the rows is compared, not how they were reached: the checkpoint's SHA-256 (not its path), and
    --data-dir only for datasets read from it (the digits are not)."""
    import shutil

    _, _, checkpoint = data
    out = tmp_path / "o.tsv"
    assert _certify(checkpoint, out) == 0
    first = out.read_text()
    copy = tmp_path / "copy.pt"
    shutil.copy(checkpoint, copy)
    assert _certify(copy, out, "--data-dir", str(tmp_path)) == 0
    assert out.read_text() == first
    capsys.readouterr()


def test_check_outfile_refuses_the_files_of_another_run(tmp_path):
    """OUTFILE inside another run's folder (a run.json above it, or a work folder beside its manifest), another
    run's manifest, or beside a manifest, work folder or lock of the wrong kind is refused naming the path."""
    from ancer_lite.tooling import cli

    ck = tmp_path / "model.pt"
    ck.write_bytes(b"x")
    run = tmp_path / "a.tsv.work" / "fixed"
    run.mkdir(parents=True)
    (run / "run.json").write_text("{}")
    arguments = {k: 1 for k in cli.GUARDED}
    (tmp_path / "a.tsv.json").write_text(json.dumps({"arguments": arguments}))
    for target, words in ((run / "certify.tsv", "inside the run folder"), (run / "run.json", "inside the run folder"),
                          (tmp_path / "a.tsv.work" / "x.tsv", "inside the work folder"),
                          (tmp_path / "a.tsv.json", "is the manifest")):
        with pytest.raises(ValueError, match=words):
            cli.check_outfile(target, ck)
    (tmp_path / "b.tsv.json").mkdir()
    with pytest.raises(ValueError, match="its manifest .*b.tsv.json is not a file"):
        cli.check_outfile(tmp_path / "b.tsv", ck)
    (tmp_path / "c.tsv.work").write_text("x")
    with pytest.raises(ValueError, match="its work folder .*c.tsv.work is not a directory"):
        cli.check_outfile(tmp_path / "c.tsv", ck)
    cli.check_outfile(tmp_path / "d.tsv", ck)  # a new OUTFILE


def test_read_manifest_checks_the_arguments_as_the_command_line(tmp_path):
    """A manifest's recorded arguments are checked with the command line's own checks, naming the file and field."""
    from ancer_lite.tooling import cli

    args = cli.build_parser().parse_args(["certify", "digits", __file__, "0.25", str(tmp_path / "o.tsv")])
    arguments = {k: (str(v) if k in ("checkpoint", "data_dir") else v) for k, v in vars(args).items()
                 if k in cli.GUARDED}
    path = tmp_path / "o.tsv.json"
    for change, words in (({"N": "200"}, "arguments.N must be a JSON integer"), ({"N": 0}, "arguments.N must be an "
                          "integer >= 1"), ({"method": "nope"}, "arguments.method must be one of"),
                          ({"sigma": True}, "arguments.sigma must be a JSON number")):
        path.write_text(json.dumps({"arguments": {**arguments, **change}, "batch": 10}))
        with pytest.raises(ValueError, match=f"o.tsv.json: {words}"):
            cli.read_manifest(path)
    path.write_text(json.dumps({"arguments": arguments, "batch": 0}))
    with pytest.raises(ValueError, match="o.tsv.json: batch must be an integer >= 1"):
        cli.read_manifest(path)
    path.write_text(json.dumps({"arguments": arguments, "batch": 10}))
    assert cli.read_manifest(path)["batch"] == 10
