"""The paper profile's path through notebook 03 (ANCER §7 on CIFAR-10), on generated fixtures in the
real on-disk formats: torchvision's CIFAR-10 python batches and Cohen-format checkpoints, with a tiny N."""
import dataclasses

import numpy as np
import pytest
import torch
from test_datasets import TEST_SIZE, make_cifar10

from ancer_lite.core.names import NOISE_OF
from ancer_lite.methods.registry import OptimSettings
from ancer_lite.models.architectures import get_architecture
from ancer_lite.runs.experiment import run_method
from ancer_lite.runs.profiles import get_profile
from ancer_lite.runs.setups import checkpoint_path, prepare, theta_of

SETUP = dataclasses.replace(get_profile("paper").images[0], sigmas_l2=(0.25,), sigmas_l1=(0.5,), num_test=4,
                            num_val=3, n=100)
PROFILE = dataclasses.replace(get_profile("paper"), n0=10, batch_size=100, images=(SETUP,))


def write_checkpoints(data_dir, dataset="cifar10", arch="cifar_resnet20"):
    """Cohen et al.'s format: Sequential(NormalizeLayer, net) saved as {'arch', 'state_dict'} with '1.' keys."""
    for norm, sigmas in (("l2", SETUP.sigmas_l2), ("l1", SETUP.sigmas_l1)):
        for sigma in sigmas:
            torch.manual_seed(int(100 * sigma))
            net = get_architecture(arch, dataset)[1]
            path = checkpoint_path(data_dir, dataset, norm, sigma)
            path.parent.mkdir(parents=True)
            torch.save({"arch": arch, "state_dict": {f"1.{k}": v for k, v in net.state_dict().items()}}, path)


def test_paper_profile_end_to_end_on_fixtures(tmp_path):
    make_cifar10(tmp_path / "cifar10")
    write_checkpoints(tmp_path)
    work = prepare(SETUP, seed=0, data_dir=tmp_path)
    assert work.dataset == "cifar10" and work.num_classes == 10 and len(work.models) == 2
    k = TEST_SIZE // 4  # every k-th test image, as Cohen et al. subsample
    assert work.test.x.shape[1:] == (3, 32, 32) and work.test.index.tolist() == [0, k, 2 * k, 3 * k]
    assert len(work.val) == 3 and float(work.test.x.max()) <= 1.0
    settings = OptimSettings(chunk=2).with_budget(2, 4)
    x, y, idx = work.test.x[:2], work.test.y[:2], work.test.index[:2]
    for (norm, sigma), model in work.models.items():
        iso = None
        for method in ("fixed", "isotropic", "ancer"):
            folder = tmp_path / "results" / norm / method
            df = run_method(model, x, y, idx, NOISE_OF[norm], theta_of(norm, sigma), method, settings, folder,
                            PROFILE.n0, SETUP.n, PROFILE.alpha, work.num_classes, batch_size=PROFILE.batch_size,
                            isotropic=iso)
            if method == "isotropic":
                iso = np.load(folder / "theta.npy")
            assert len(df) == 2 and (folder / "final.tsv").is_file()
            assert np.isfinite(df.radius).all() and (df.radius >= 0).all()


def test_paper_profile_says_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="checkpoints"):
        prepare(SETUP, data_dir=tmp_path)
    write_checkpoints(tmp_path)
    with pytest.raises(FileNotFoundError, match="make data"):
        prepare(SETUP, data_dir=tmp_path)
