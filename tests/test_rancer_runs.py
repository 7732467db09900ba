"""rancer_runs.run_rancer, the resumable RANCER run over a test set, on six inputs of a small softplus model: the
folder's files (θ, orthogonal rotations, certify.tsv and final.tsv with one row per input in input order), the same
certificates as CERTIFY and the rotated memory compute in memory, reuse of a finished folder without recomputing, resumption of an
interrupted run to the rows of an uninterrupted one, refusal of another run's folder, a memory step that never
enlarges a certificate, and bad arguments refused before any file is written."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from ancer_lite.core.memory import ABSTAIN_BASE, ABSTAIN_INSIDE, KEPT, SHRUNK
from ancer_lite.core.names import ABSTAIN
from ancer_lite.methods import rancer
from ancer_lite.runs import logs, rancer_runs
from ancer_lite.runs.rancer_runs import RUN_FILES, run_rancer

SETTINGS = rancer.RancerSettings(iterations=2, samples=8)
N0, N, ALPHA, CLASSES = 16, 64, 0.01, 3
# the inputs' first coordinate (the others are 0.5), Isotropic DD's σ0 and dataset indices, chosen so that the memory
# keeps, shrinks and abstains: a class-1 region in the stripe, two wide class-0 regions that meet it (shrunk), an
# input on the stripe's edge (abstain_base) and a class-1 input inside a shrunk class-0 region (abstain_inside)
FIRST = (0.5, 0.2, 0.4501, 0.9, 0.8, 0.54)
SIGMA0 = (0.01, 0.5, 0.01, 0.05, 0.5, 0.002)
INDICES = (7, 3, 11, 0, 5, 2)


def _stripe_model(k: float = 100.0, a: float = 0.4, b: float = 0.6, threshold: float = 5.0) -> torch.nn.Module:
    """A smooth (softplus) 3-class classifier of 1x2x2 inputs: class 1 on the stripe |x_0 - (a + b) / 2| < ~0.05
    (a softplus hump of height k (b - a) / 2 over the threshold), class 0 elsewhere; class 2 never wins."""
    first, second = torch.nn.Linear(4, 3), torch.nn.Linear(3, 3)
    with torch.no_grad():
        first.weight.zero_()
        first.weight[:, 0] = k
        first.bias.copy_(torch.tensor([-k * a, -k * (a + b) / 2, -k * b]))
        second.weight.zero_()
        second.weight[1] = torch.tensor([1.0, -2.0, 1.0])
        second.bias.copy_(torch.tensor([0.0, -threshold, -10.0]))
    return torch.nn.Sequential(torch.nn.Flatten(), first, torch.nn.Softplus(), second).eval()


def _case() -> dict:
    """run_rancer's arguments but the folder: the stripe model, its six inputs labelled with its predictions, their
    indices and Isotropic DD's θ (σ0 per input, as run_method's theta.npy)."""
    x = torch.full((len(FIRST), 1, 2, 2), 0.5)
    x[:, 0, 0, 0] = torch.tensor(FIRST)
    model = _stripe_model()
    with torch.no_grad():
        y = model(x).argmax(1)
    isotropic = np.repeat(np.array(SIGMA0)[:, None], 4, axis=1)
    return dict(model=model, x=x, y=y, indices=np.array(INDICES), isotropic=isotropic, settings=SETTINGS, n0=N0,
                n=N, alpha=ALPHA, num_classes=CLASSES, seed=0)


def _snapshot(folder) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """A finished run: (folder, the frame run_rancer returned)."""
    folder = tmp_path_factory.mktemp("rancer") / "run"
    return folder, run_rancer(**_case(), folder=folder)


def test_the_folder_holds_theta_rotations_and_one_row_per_input_in_order(done):
    """theta.npy is (N, n) within Algorithm 1's clip around each σ0; rotations.npy is (N, n, n) float64 and orthogonal;
    certify.tsv and final.tsv hold one row per input, in input order (not index order), final.tsv the returned rows."""
    folder, final = done
    assert {"run.json", *RUN_FILES} <= {p.name for p in folder.iterdir()}
    theta, rotations = np.load(folder / "theta.npy"), np.load(folder / "rotations.npy")
    assert theta.shape == (len(FIRST), 4)
    s0 = np.array(SIGMA0)[:, None]
    assert (theta >= np.maximum(s0 * (1 - SETTINGS.gamma1), rancer.MIN_SCALE) * (1 - 1e-6)).all()
    assert (theta <= s0 * (1 + SETTINGS.gamma2) * (1 + 1e-6)).all()
    assert rotations.shape == (len(FIRST), 4, 4) and rotations.dtype == np.float64
    eye = np.broadcast_to(np.eye(4), rotations.shape)
    np.testing.assert_allclose(rotations @ rotations.transpose(0, 2, 1), eye, atol=1e-6)
    certify = logs.read_log(folder / "certify.tsv")
    assert certify["idx"].tolist() == list(INDICES)
    assert certify["label"].tolist() == _case()["y"].tolist()
    np.testing.assert_allclose(certify["min_sigma"], theta.min(axis=1), rtol=1e-6)
    written = pd.read_csv(folder / "final.tsv", sep="\t")
    assert written["idx"].tolist() == final["idx"].tolist() == list(INDICES)
    assert written.columns.tolist() == final.columns.tolist()
    np.testing.assert_allclose(written["radius"], final["radius"], rtol=1e-12)
    assert written["status"].tolist() == final["status"].tolist()


def test_the_memory_never_enlarges_a_certificate_and_abstentions_have_radius_0(done):
    """Per input, the final radius and proxy radius are at most certify.tsv's; the final prediction is CERTIFY's or an
    abstention; an abstention has radius 0; a kept region is CERTIFY's less ROTATION_MARGIN; the case exercises
    every status of the memory."""
    folder, final = done
    certify = logs.read_log(folder / "certify.tsv").set_index("idx").loc[list(INDICES)]
    assert set(final["status"]) == {KEPT, SHRUNK, ABSTAIN_BASE, ABSTAIN_INSIDE}
    assert (final["radius"].to_numpy() <= certify["radius"].to_numpy()).all()
    assert (final["radius_proxy"].to_numpy() <= certify["radius_proxy"].to_numpy()).all()
    predict = final["predict"].to_numpy()
    assert ((predict == certify["predict"].to_numpy()) | (predict == ABSTAIN)).all()
    abstain = predict == ABSTAIN
    assert final.loc[abstain, "status"].str.startswith("abstain").all()
    assert (final.loc[abstain, ["radius", "radius_proxy"]].to_numpy() == 0).all()
    assert (certify.loc[final["status"].to_numpy() == ABSTAIN_BASE, "predict"] == ABSTAIN).all()
    kept = (final["status"] == KEPT).to_numpy()
    np.testing.assert_allclose(final.loc[kept, "radius"], certify.loc[kept, "radius"] * (1 - rancer.ROTATION_MARGIN),
                               rtol=1e-6)
    shrunk = (final["status"] == SHRUNK).to_numpy()
    assert (final.loc[shrunk, "radius"].to_numpy() < certify.loc[shrunk, "radius"].to_numpy() / 2).all()
    assert (final["correct"] == (final["predict"] == final["label"])).all()


def test_it_computes_what_rancer_parameters_certify_and_the_memory_compute(done):
    """θ and U are rancer_parameters' for the same inputs, σ0 and stream keys; certify.tsv's rows are
    `certify_rotated`'s certificates of each input from its streams, and final.tsv's predictions, radii and statuses
    are the rotated memory's decisions over them (`rotated_memory_step`), computed here in memory."""
    from ancer_lite.core.certify import Smooth
    from ancer_lite.models.train import model_fingerprint

    folder, final = done
    case = _case()
    theta, rotations = np.load(folder / "theta.npy"), np.load(folder / "rotations.npy")
    scales, rots, _ = rancer.rancer_parameters(case["model"], case["x"], np.array(SIGMA0), SETTINGS, 0,
                                               keys=case["indices"])
    np.testing.assert_array_equal(theta, scales)
    np.testing.assert_array_equal(rotations, rots)
    smooth = Smooth(case["model"], CLASSES, (1, 2, 2), "gaussian", seed=0)
    certs = [rancer.certify_rotated(smooth, case["x"][k], theta[k], rotations[k], int(case["indices"][k]), N0, N, ALPHA,
                                    0) for k in range(len(FIRST))]
    certify = logs.read_log(folder / "certify.tsv")
    assert certify["predict"].tolist() == [c.prediction for c in certs]
    np.testing.assert_array_equal(certify["radius"], [c.radius for c in certs])
    np.testing.assert_array_equal(certify["gap"], [c.gap for c in certs])
    decisions = rancer.rotated_memory_step(case["x"], np.array([c.prediction for c in certs]),
                                           np.array([c.gap for c in certs]), theta, rotations, "shrink",
                                           model_fingerprint(case["model"]))
    assert final["predict"].tolist() == [d.prediction for d in decisions]
    assert final["status"].tolist() == [d.status for d in decisions]
    np.testing.assert_allclose(final["radius"], [d.radius for d in decisions], rtol=1e-12, atol=0)
    np.testing.assert_allclose(final["radius_proxy"], [d.radius_proxy for d in decisions], rtol=1e-12, atol=0)


def test_a_second_call_reuses_the_folder(done, monkeypatch):
    """Calling again with the same arguments returns the same rows without optimizing or certifying anything, and
    leaves every file of the folder byte for byte as it was."""
    folder, final = done
    before = _snapshot(folder)

    def refuse(*args, **kwargs):
        raise AssertionError("a finished run recomputed")

    monkeypatch.setattr(rancer_runs, "rancer_parameters", refuse)
    monkeypatch.setattr(rancer_runs, "certify_rotated", refuse)
    again = run_rancer(**_case(), folder=folder)
    pd.testing.assert_frame_equal(again, final)
    assert _snapshot(folder) == before


class Interrupted(Exception):
    pass


@pytest.mark.parametrize("how", ["progress_raises", "rows_deleted"])
def test_an_interrupted_run_resumes_to_the_rows_of_an_uninterrupted_one(done, tmp_path, monkeypatch, how):
    """A run stopped after 3 of its 6 inputs (a progress callback raising, or certify.tsv's last rows and final.tsv
    deleted) certifies only the 3 inputs left when called again, and ends with the rows of an uninterrupted run in
    another folder (all but the timing column)."""
    folder = tmp_path / "run"
    if how == "progress_raises":
        def progress(k, total):
            assert total == len(FIRST)
            if k == 3:
                raise Interrupted

        with pytest.raises(Interrupted):
            run_rancer(**_case(), folder=folder, progress=progress)
        assert not (folder / "final.tsv").exists()
    else:
        run_rancer(**_case(), folder=folder)
        lines = (folder / "certify.tsv").read_text().splitlines(keepends=True)
        (folder / "certify.tsv").write_text("".join(lines[:1 + 3]))
        (folder / "final.tsv").unlink()
    assert logs.read_log(folder / "certify.tsv")["idx"].tolist() == list(INDICES[:3])
    certified = []
    certify_rotated = rancer_runs.certify_rotated

    def counting(smooth, x, scales, rotation, key, *args):
        certified.append(key)
        return certify_rotated(smooth, x, scales, rotation, key, *args)

    monkeypatch.setattr(rancer_runs, "certify_rotated", counting)
    resumed = run_rancer(**_case(), folder=folder)
    assert certified == list(INDICES[3:])
    pd.testing.assert_frame_equal(resumed.drop(columns="time"), done[1].drop(columns="time"))


@pytest.mark.parametrize("change, differs", [
    (dict(seed=1), "seed"),
    (dict(settings=rancer.RancerSettings(iterations=3, samples=8)), "settings"),
    (dict(n=32), "n"),
    (dict(alpha=0.05), "alpha"),
    (dict(policy="abstain"), "policy"),
    (dict(isotropic=np.full((len(FIRST), 4), 0.1)), "isotropic"),
    (dict(indices=np.array(INDICES) + 1), "indices"),
])
def test_the_folder_of_another_run_is_refused(done, change, differs):
    """The finished folder is refused, with the differing setting named, to a run with another seed, setting or
    inputs; its files are left as they were."""
    folder, _ = done
    before = _snapshot(folder)
    with pytest.raises(ValueError, match=rf"holds another run: it differs in {differs}\b"):
        run_rancer(**{**_case(), **change}, folder=folder)
    assert _snapshot(folder) == before


def test_a_folder_of_run_files_without_a_manifest_is_refused(tmp_path):
    """A folder holding a run's files but no run.json (what they were computed from is unknown) is refused."""
    folder = tmp_path / "run"
    folder.mkdir()
    np.save(folder / "theta.npy", np.ones((len(FIRST), 4)))
    with pytest.raises(ValueError, match="holds theta.npy but no run.json"):
        run_rancer(**_case(), folder=folder)
    assert [p.name for p in folder.iterdir()] == ["theta.npy"]


@pytest.mark.parametrize("bad, error, match", [
    (dict(policy="nope"), ValueError, "policy must be one of"),
    (dict(n0=0), ValueError, "n0 must be an integer >= 1"),
    (dict(n=0), ValueError, "n must be an integer >= 1"),
    (dict(alpha=1.5), ValueError, "alpha must be in the open interval"),
    (dict(alpha="0.01"), ValueError, "alpha must be a number"),
    (dict(folder=None), TypeError, "folder must be a path"),
    (dict(settings=dict(iterations=2)), TypeError, "settings must be a RancerSettings"),
    (dict(indices=np.array(INDICES[:5])), ValueError, "must have one entry per input"),
    (dict(max_bytes=100), ValueError, "max_bytes: every input's 4x4 rotation"),
    (dict(device="gpu"), ValueError, "device must be 'auto' or a torch device"),
    (dict(num_classes=1), ValueError, "num_classes"),
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(indices=np.array([7, 7, 11, 0, 5, 2])), ValueError, "indices must be distinct"),
    (dict(y=np.array([0, 1, 0, 5, 0, 1])), ValueError, r"y must hold integer class labels in \[0, num_classes = 3\)"),
    (dict(isotropic=np.array([0.01, 0.5, 0.0, 0.05, 0.5, 0.002])), ValueError, "isotropic must be > 0"),
])
def test_bad_arguments_are_refused_before_any_file_is_written(tmp_path, bad, error, match):
    """A bad argument raises an error naming it, and the run folder is not created."""
    folder = tmp_path / "run"
    with pytest.raises(error, match=match):
        run_rancer(**{**_case(), "folder": folder, **bad})
    assert not folder.exists() and not any(tmp_path.iterdir())


def test_replaced_rotations_are_refused(done, tmp_path):
    """The manifest records the SHA-256 of θ and U together: a finished folder whose rotations.npy was replaced is
    refused instead of certifying with the other U."""
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(done[0], folder)
    rot = np.load(folder / "rotations.npy")
    np.save(folder / "rotations.npy", rot[:, :, ::-1].copy())
    with pytest.raises(ValueError, match="are not the parameters this run wrote"):
        run_rancer(**_case(), folder=folder)


def test_a_file_in_place_of_the_folder_is_refused(tmp_path):
    path = tmp_path / "run"
    path.write_text("not a folder")
    with pytest.raises(ValueError, match="folder must be a directory"):
        run_rancer(**_case(), folder=path)
