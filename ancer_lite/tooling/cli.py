"""The command line, `ancer-certify` (also `python -m ancer_lite`).

- `certify DATASET CHECKPOINT SIGMA OUTFILE`: Cohen et al.'s `certify.py` (same positional order, --batch --skip
  --max --N0 --N --alpha) for Fixed σ (Cohen et al.'s CERTIFY), Isotropic DD, ANCER (each data-dependent method
  followed by ANCER's Algorithm 1, the memory) or RANCER (rotated ellipsoids, its memory by RANCER Eq. 5-6). It
  writes OUTFILE in ANCER's TSV format (idx label predict radius radius_proxy correct min_sigma time, then gap,
  p_lower, log_volume, status: the certificates after the memory), resumably: the per-input CERTIFY rows go to a
  work folder `OUTFILE.work/` (one `run_method` folder per method, each guarded by its run.json) and OUTFILE is
  written once every input is certified, with a manifest `OUTFILE.json` beside it (checkpoint SHA-256, every
  setting, package versions, device).
- `select`, `shard`, `merge`, `submit`: notebook 03's experiment of a profile split into shards (`launch`), run
  one by one, on this machine's processes or as a SLURM job array, merged into the folders the notebook reads.
- `certify-ucan DATASET CHECKPOINT OUTFILE`: UCAN's Algorithm 1 with a noise parameter generator `train` trained
  (a UCAN recipe), resumable, its input-dependent certificates through ANCER's memory (`ucan_command`).
- `train DATASET RECIPE OUTDIR --sigma S ...`: the papers' base classifiers from a named recipe, one Cohen-format
  checkpoint per σ, resumable (`train_command`).
- `checkpoints --profile P`: every checkpoint a profile needs and lacks, trained with its setups' recipes after a
  cost estimate (`checkpoints_command`).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata
import json
import os
import platform
import sys
import textwrap
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import torch

from ..core import devices, files
from ..core.base_classifier import checked_logits, eval_mode
from ..core.certify import AUTO, BATCH_SIZE, CPU, DEVICE, DRAWS, resolve_draws
from ..core.memory import POLICIES, SHRINK
from ..core.names import NOISE_OF
from ..core.precision import EXACT, PRECISIONS
from ..core.reproducibility import torch_threads
from ..methods import registry
from ..methods.rancer import RancerSettings
from ..methods.registry import ANCER, ISOTROPIC, RANCER, AncerSettings, IsotropicSettings, OptimSettings
from ..models.architectures import load_checkpoint
from ..models.data import DATA_DIR, FolderImages, Split, cifar10, digits_split, fashion_mnist_splits, mnist5k_split
from ..models.small import ACTIVATIONS, MLP, SmallCNN
from ..runs import rancer_runs, shards
from ..runs.experiment import numerics_fields
from ..runs.profiles import PROFILES, ImageSetup, Profile
from ..runs.setups import NUM_CLASSES, sigmas_of, theta_of
from ..studies.image_study import selection_sigma
from . import checkpoints_command, launch, train_command, ucan_command
from .arguments import DATASETS, HelpFormatter, certify_options
from .arguments import count as _count
from .arguments import device as _device
from .arguments import fraction as _fraction
from .arguments import max_inputs as _max
from .arguments import nonnegative as _nonnegative
from .arguments import positive as _positive
from .arguments import probability as _probability

PROG = "ancer-certify"


def package_version() -> str:
    """The installed ancer_lite's version (its distribution metadata; "unknown" when it is not installed)."""
    try:
        return importlib.metadata.version("ancer_lite")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


QUICK = {"digits": digits_split, "mnist": mnist5k_split}
NORMS = tuple(NOISE_OF)
#: the settings of a certify run that determine its rows (a shard or a re-run with others is refused); the batch
#: size and the device do not (every input's noise comes from its own streams, `core.streams`). The precision and
#: where the draws are made determine them too: OUTFILE.json's arguments record them unless exact with CPU draws
#: (`experiment.numerics_fields`), so a manifest without them describes an exact run with CPU draws
GUARDED = ("dataset", "checkpoint", "sigma", "norm", "method", "split", "skip", "max", "N0", "N", "alpha", "seed",
           "policy", "data_dir", "iterations", "samples", "iso_lr", "ancer_lr", "kappa", "chunk", "rancer_lr",
           "gamma1", "gamma2", "activation")
_defaults = OptimSettings()
_iso_defaults, _ancer_defaults = _defaults.of(ISOTROPIC), _defaults.of(ANCER)
_rancer_defaults = RancerSettings()



def _wrap(text: str) -> str:
    """A description wrapped at 100 columns (the formatter keeps it as written, for the examples' sake)."""
    return textwrap.fill(text, 100)


def _existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    return path


# ---- the parser ---------------------------------------------------------------------------------------------

CERTIFY_EXAMPLE = """\
examples:
  # ANCER on CIFAR-10 at sigma = 0.25 (l2), every 10th test image, the paper's N = 100,000:
  ancer-certify certify cifar10 data/checkpoints/cifar10/l2/sigma_0.25/checkpoint.pth.tar 0.25 \\
      out/cifar10_ancer_0.25.tsv --method ancer --skip 10 --batch 1000
  # Fixed sigma (Cohen et al.'s CERTIFY) on the quick digits with a cached quick model, 20 inputs:
  ancer-certify certify digits data/cache/quick/<model>.pt 0.25 out/digits.tsv --method fixed --max 20 --N 10000
  # the same run in 4 shards (e.g. SLURM array tasks), then merged:
  for k in 0 1 2 3; do ancer-certify certify ... --shard $k --num-shards 4; done
  ancer-certify merge --outfile out/cifar10_ancer_0.25.tsv --num-shards 4
"""

PROFILE_EXAMPLE = """\
examples:
  ancer-certify select --profile paper --setup cifar10 --norm l2
  ancer-certify shard --profile paper --setup cifar10 --norm l2 --sigma 0.25 --shard 0 --num-shards 8
  ancer-certify merge --profile paper --setup cifar10 --norm l2 --sigma 0.25 --num-shards 8
  ancer-certify submit --profile paper --setup cifar10 --num-shards 8 --cluster slurm --partition gpu --time 600
"""


MERGE_EXAMPLE = """\
examples:
  # notebook 03's runs of one (setup, norm, σ), after `ancer-certify shard ... --num-shards 8` for every shard:
  ancer-certify merge --profile paper --setup cifar10 --norm l2 --sigma 0.25 --num-shards 8
  # a certify run, after `ancer-certify certify ... out/cifar10.tsv --shard K --num-shards 4` for K = 0..3:
  ancer-certify merge --outfile out/cifar10.tsv --num-shards 4
"""


def _profile_options(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--profile", choices=sorted(PROFILES), required=required,
                   help="the profile whose notebook-03 experiment to run (`ancer_lite.runs.profiles`)")
    p.add_argument("--setup", required=required, metavar="NAME",
                   help="one of the profile's notebook-03 columns (`ImageSetup.name`), e.g. cifar10 or digits")
    p.add_argument("--results", type=Path, default=None, metavar="DIR",
                   help="the results folder notebook 03 reads (default: DATA_DIR/results/<profile>)")
    p.add_argument("--data-dir", type=Path, default=DATA_DIR, metavar="DIR",
                   help="the data folder: datasets, checkpoints/<dataset>/<norm>/sigma_<σ>/, cache/")
    p.add_argument("--seed", type=_count(0), default=0, help="the run seed (notebook 03's `seed`)")
    p.add_argument("--device", type=_device, default=None,
                   help="where the models run: auto, cpu, cuda or cuda:N (default: the profile's setting)")
    _numerics_options(p, None)


PRECISION_HELP = ("the arithmetic of the base classifier's forward passes in CERTIFY and the optimizations: exact "
                  "(float32, TF32 off), tf32 (CUDA matrix products in TF32), bf16 (autocast to bfloat16); the "
                  "certificates are of the classifier evaluated so")
DRAWS_HELP = ("where the noise of CERTIFY and the optimizations is drawn: cpu (the same draws on every device), "
              "device (where the model runs: reproducible per device type), auto (device on CUDA, else cpu)")


def _numerics_options(p: argparse.ArgumentParser, default: str | None = EXACT) -> None:
    """--precision and --draws (`precision.PRECISIONS`, `certify.DRAWS`); default None: the profile's settings."""
    p.add_argument("--precision", choices=PRECISIONS, default=default,
                   help=PRECISION_HELP + ("" if default else " (default: the profile's setting)"))
    p.add_argument("--draws", choices=DRAWS, default=AUTO if default else None,
                   help=DRAWS_HELP + ("" if default else " (default: the profile's setting)"))


def build_parser() -> argparse.ArgumentParser:
    """The `ancer-certify` parser with its eight subcommands."""
    ap = argparse.ArgumentParser(
        prog=PROG, formatter_class=HelpFormatter,
        description=_wrap("Randomized-smoothing certification with Fixed σ (Cohen et al.'s CERTIFY), Isotropic DD, "
                          "ANCER and RANCER, per input and resumable, and notebook 03's experiment sharded over "
                          "GPUs (a SLURM job array or local processes) and merged."),
        epilog="Run `ancer-certify COMMAND --help` for each command's options and examples.\n\n" + CERTIFY_EXAMPLE)
    ap.add_argument("--version", action="version", version=f"ancer_lite {package_version()}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser(
        "certify", formatter_class=HelpFormatter, epilog=CERTIFY_EXAMPLE,
        help="certify a dataset with one method (Cohen et al.'s certify.py, ANCER's TSV)",
        description=_wrap("Certify inputs of DATASET with the base classifier CHECKPOINT at noise level SIGMA and "
                          "write one row per input to OUTFILE (ANCER's columns idx label predict radius "
                          "radius_proxy correct min_sigma time, then gap p_lower log_volume status). Isotropic DD, "
                          "ANCER and RANCER optimize a per-input θ and apply ANCER's Algorithm 1 (the memory) in "
                          "input order, so OUTFILE is written once every input is certified; the per-input CERTIFY "
                          "rows are kept in OUTFILE.work/ and a stopped run resumes from them. OUTFILE.json records "
                          "the checkpoint's SHA-256, every setting, the package versions and the device. Each "
                          "input's noise comes from its own streams (seed, dataset index), so the rows do not "
                          "depend on --batch, --shard or the device's batching."))
    c.add_argument("dataset", choices=DATASETS, metavar="DATASET",
                   help=f"one of {', '.join(DATASETS)} (cifar10 / imagenet from --data-dir as the paper profile "
                        "reads them; fmnist from --data-dir/fashion-mnist when it exists, else Debian's "
                        "dataset-fashion-mnist folder; digits / mnist: the quick profile's seeded splits, shipped with the packages)")
    c.add_argument("checkpoint", type=_existing_file, metavar="CHECKPOINT",
                   help="the base classifier: a Cohen-format {'arch', 'state_dict'} checkpoint (cifar10, "
                        "imagenet), or for digits / mnist a state dict of the quick MLP or CNN (the files of "
                        "data/cache/<profile>/)")
    c.add_argument("sigma", type=_positive, metavar="SIGMA",
                   help="the noise level σ the model was trained with: Gaussian std (l2) or uniform std (l1, whose "
                        "half-width is λ = √3 σ)")
    c.add_argument("outfile", type=Path, metavar="OUTFILE", help="the TSV to write")
    c.add_argument("--method", choices=registry.names(), default=ANCER,
                   help="fixed: Cohen et al.'s CERTIFY at σ; isotropic: Isotropic DD + memory; ancer: ANCER from "
                        "Isotropic DD's θ + memory; rancer: RANCER from Isotropic DD's θ + rotated memory (l2)")
    c.add_argument("--norm", choices=NORMS, default="l2",
                   help="l2: Gaussian noise, ℓ2 / ℓΣ2 certificates; l1: uniform noise, ℓ1 / ℓΛ1 certificates")
    certify_options(c)
    c.add_argument("--split", choices=("test", "val"), default="test",
                   help="test: the test set (cifar10: test_batch; imagenet: val/); val: the inputs step sizes are "
                        "chosen on (cifar10: the training batches; imagenet: train/; fmnist: the last 5,000 training images, "
                        "held out of training; digits/mnist: the seeded validation split)")
    c.add_argument("--data-dir", type=Path, default=DATA_DIR, metavar="DIR",
                   help="where cifar10/, imagenet/ and (optionally) fashion-mnist/ are")
    c.add_argument("--seed", type=_count(0), default=0,
                   help="the run seed of every input's streams (and of the digits / mnist split)")
    c.add_argument("--device", type=_device, default=devices.AUTO, help="where the model runs")
    _numerics_options(c)
    c.add_argument("--threads", type=_count(1), default=None,
                   help="torch's CPU threads (default: torch's own; 1 reproduces notebook 03's CPU arithmetic, "
                        "`image_study.JOB_THREADS`, bit for bit)")
    c.add_argument("--policy", choices=POLICIES, default=SHRINK,
                   help="Algorithm 1's policy when regions of different classes intersect")
    g = c.add_argument_group("optimization (Isotropic DD, ANCER App. C, RANCER Algorithm 1)")
    g.add_argument("--iterations", type=_count(0), default=_iso_defaults.iterations,
                   help="gradient steps of each optimization")
    g.add_argument("--samples", type=_count(1), default=_iso_defaults.samples, help="noise draws per step")
    g.add_argument("--iso-lr", type=_positive, default=_iso_defaults.lr, help="Isotropic DD's step size")
    g.add_argument("--ancer-lr", type=_positive, default=_ancer_defaults.lr, help="ANCER's step size")
    g.add_argument("--kappa", type=_positive, default=_ancer_defaults.kappa, help="ANCER's κ (weight of the min term)")
    g.add_argument("--chunk", type=_count(1), default=_defaults.chunk, help="inputs optimized together")
    g.add_argument("--rancer-lr", type=_positive, default=_rancer_defaults.lr, help="RANCER's step size")
    g.add_argument("--gamma1", type=_fraction, default=_rancer_defaults.gamma1,
                   help="RANCER's lower clip σ0 (1 - γ1)")
    g.add_argument("--gamma2", type=_nonnegative, default=_rancer_defaults.gamma2,
                   help="RANCER's upper clip σ0 (1 + γ2)")
    g.add_argument("--activation", choices=sorted(ACTIVATIONS), default="relu",
                   help="the activation of a quick state-dict CHECKPOINT (not stored in it)")
    s = c.add_argument_group("sharding (run a range of the inputs; merge with `ancer-certify merge --outfile`)")
    s.add_argument("--shard", type=_count(0), default=None, metavar="K", help="run shard K (0-based) only")
    s.add_argument("--num-shards", type=_count(1), default=None, metavar="M", help="the number of shards")

    sel = sub.add_parser(
        "select", formatter_class=HelpFormatter, epilog=PROFILE_EXAMPLE,
        help="choose notebook 03's step sizes of a profile's setup once (before the shards)",
        description=_wrap("Choose the Isotropic DD and ANCER step sizes of a profile's notebook-03 setup on its "
                          "validation split (`image_study.choose_norm`), once per norm, into the results folder the "
                          "notebook reads; shards and the notebook then read the table. Concurrent callers wait on "
                          "a lock and compute it once."))
    _profile_options(sel)
    sel.add_argument("--norm", choices=NORMS, action="append", default=None,
                     help="a norm to choose (repeat; default: every norm of the setup)")

    sh = sub.add_parser(
        "shard", formatter_class=HelpFormatter, epilog=PROFILE_EXAMPLE,
        help="run one shard of notebook 03's experiment of a profile's setup, norm and σ",
        description=_wrap("Certify shard K of M of notebook 03's test inputs (contiguous ranges in test order) with "
                          "Fixed σ, Isotropic DD and ANCER (from the shard's Isotropic DD θ) for the (setup, norm, "
                          "σ) model, with the step sizes notebook 03 chooses (computed first if needed, once) into "
                          "<run folder>/shards/K-of-M/ of the run folders the notebook reads. Resumable: a stopped "
                          "shard run again continues from its certify.tsv."))
    _profile_options(sh)
    sh.add_argument("--norm", choices=NORMS, required=True, help="the noise's norm")
    sh.add_argument("--sigma", type=_positive, required=True, help="the noise level, one of the setup's")
    sh.add_argument("--shard", type=_count(0), required=True, metavar="K", help="the shard to run (0-based)")
    sh.add_argument("--num-shards", type=_count(1), required=True, metavar="M", help="the number of shards")

    mg = sub.add_parser(
        "merge", formatter_class=HelpFormatter, epilog=MERGE_EXAMPLE,
        help="merge the shards of a (setup, norm, σ) or of a certify run",
        description=_wrap("Check the shards (their manifests agree with the full run on every setting; every input "
                          "in exactly one shard, each shard complete) and join them into the run folders, which "
                          "then hold byte for byte what one unsharded run writes (but the time column), Algorithm 1 "
                          "(the memory) applied over the merged certificates in test order. Either --outfile (a "
                          "certify run's) or --profile/--setup/--norm/--sigma (notebook 03's)."))
    mg.add_argument("--num-shards", type=_count(1), required=True, metavar="M", help="the number of shards")
    mg.add_argument("--outfile", type=Path, default=None,
                    help="merge the certify run of OUTFILE (its settings are read from OUTFILE.json)")
    _profile_options(mg, required=False)
    mg.add_argument("--norm", choices=NORMS, default=None, help="the noise's norm")
    mg.add_argument("--sigma", type=_positive, default=None, help="the noise level, one of the setup's")
    mg.add_argument("--threads", type=_count(1), default=None,
                    help="torch's CPU threads for a certify run's merge (default: torch's own)")

    sb = sub.add_parser(
        "submit", formatter_class=HelpFormatter, epilog=PROFILE_EXAMPLE,
        help="shard notebook 03's experiment over a SLURM job array (or local processes), wait, merge",
        description=_wrap("Print a cost estimate (seconds per input measured here on a few inputs, times inputs, σ "
                          "and methods) and the plan, then submit one step-size selection job per norm not chosen "
                          "yet, one job array task per (norm, σ, shard) through submitit (SLURM: one GPU per task; "
                          "local: processes on this machine), wait for them and merge every (norm, σ). Tasks are "
                          "requeued on preemption or timeout and resume from their logs; submitting again resumes "
                          "unfinished shards."))
    _profile_options(sb)
    sb.add_argument("--norm", choices=NORMS, action="append", default=None,
                    help="a norm to certify (repeat; default: every norm of the setup)")
    sb.add_argument("--sigma", type=_positive, nargs="+", default=None,
                    help="the noise levels to certify (default: every σ of the setup's grid for each norm)")
    sb.add_argument("--num-shards", type=_count(1), required=True, metavar="M", help="shards per (norm, σ)")
    launch.add_cluster_options(sb, 240)
    sb.add_argument("--dry-run", action="store_true", help="print the estimate and the plan, submit nothing")
    sb.add_argument("--no-estimate", action="store_true", help="skip the cost estimate")
    ucan_command.add_parser(sub)
    train_command.add_parser(sub)
    checkpoints_command.add_parser(sub)
    for name, p in sub.choices.items():
        p.set_defaults(command_parser=p)  # the subcommand's parser, whose errors name its usage
    return ap


# ---- certify ---------------------------------------------------------------------------------------------------

def load_split(dataset: str, split: str, data_dir: str | Path, seed: int) -> Split:
    """Every input of a dataset's split, as `Split` (x in [0, 1], labels, dataset indices): cifar10 test / train
    (`data.cifar10`), fmnist's test / held-out validation / training images (`data.fashion_mnist_splits`), digits and
    mnist's seeded splits. ImageNet is loaded by `load_inputs` (image by image).

    Parameters
    ----------
    dataset : str
        One of "cifar10", "fmnist", "digits", "mnist" (`DATASETS` but imagenet); another name raises ValueError.
    split : str
        "test": the test set; "val": the inputs step sizes are chosen on (cifar10: the training batches; fmnist: the
        held-out validation images; digits / mnist: the seeded validation split); any other value reads cifar10's
        training batches, and "train" the training images of fmnist, digits and mnist.
    data_dir : str or Path
        The data folder holding cifar10/ (and, optionally, fashion-mnist/); digits and mnist do not read it.
    seed : int
        The seed of the digits / mnist splits; the other datasets ignore it.

    Returns
    -------
    Split
        The whole split: x of shape (N, C, H, W) in [0, 1], y of shape (N,), index of shape (N,).
    """
    if dataset in QUICK:
        return QUICK[dataset](seed)[split]
    if dataset == "cifar10":
        return cifar10(Path(data_dir) / "cifar10", "test" if split == "test" else "train")
    if dataset == "fmnist":  # val: the training images held out of the models' training
        return fashion_mnist_splits(data_dir)[split]
    raise ValueError(f"dataset must be one of {list(DATASETS)}, got {dataset!r}")


def positions(count: int, skip: int, max_: int) -> list[int]:
    """Cohen et al.'s selection: every `skip`-th position i of the split, with i < max_ (-1: no limit).

    Parameters
    ----------
    count : int
        The number of inputs of the split.
    skip : int
        The step between chosen positions (>= 1).
    max_ : int
        The positions must be below it; -1 (any negative value): no limit.

    Returns
    -------
    list of int
        The chosen positions 0, skip, 2 skip, ... below min(count, max_).
    """
    stop = count if max_ < 0 else min(count, max_)
    return list(range(0, stop, skip))


def load_inputs(dataset: str, split: str, data_dir: str | Path, seed: int, skip: int, max_: int) -> Split:
    """The inputs a certify run certifies: `positions` of the split, with their dataset indices (the streams' keys).
    ImageNet: torchvision's ImageFolder of `<data_dir>/imagenet/val` (test) or `train` (val), Resize(256) +
    CenterCrop(224) as Cohen et al. (`data.imagenet_subset`), only the chosen images read.

    Parameters
    ----------
    dataset, split, data_dir, seed
        As in `load_split`; dataset may also be "imagenet".
    skip, max_ : int
        As in `positions`.

    Returns
    -------
    Split
        The chosen inputs: x of shape (n, C, H, W) in [0, 1] (imagenet: (n, 3, 224, 224)), y of shape (n,), and index
        of shape (n,), their positions in the split.

    Raises
    ------
    FileNotFoundError
        When the ImageNet folder does not exist.
    """
    if dataset == "imagenet":
        folder = Path(data_dir) / "imagenet" / ("val" if split == "test" else "train")
        if not folder.is_dir():
            raise FileNotFoundError(f"ImageNet folder not found: {folder} (ImageFolder layout, one sub-folder per "
                                    "class wnid; see the README's paper profile)")
        images = FolderImages(folder)
        pos = positions(len(images), skip, max_)
        return Split(images[pos], images.targets[pos], np.asarray(pos, np.int64))
    whole = load_split(dataset, split, data_dir, seed)
    pos = positions(len(whole), skip, max_)
    return Split(whole.x[pos], whole.y[pos], np.asarray(whole.index)[pos])


def load_model(dataset: str, checkpoint: str | Path, input_shape: tuple[int, ...],
               activation: str = "relu") -> torch.nn.Module:
    """The base classifier: `architectures.load_checkpoint` (Cohen et al.'s format) for cifar10 / imagenet; for
    digits / mnist a state dict of the quick MLP or CNN (`models.small`; what `train.train_cached` saves), its
    layer widths read from the tensors' shapes, or {'arch', 'state_dict'} holding one.

    Parameters
    ----------
    dataset : str
        One of `DATASETS`; digits and mnist read a quick model, the others a Cohen-format checkpoint.
    checkpoint : str or Path
        The checkpoint file.
    input_shape : tuple of int
        The shape of one input, (C, H, W), which the quick models are built for (the others ignore it).
    activation : str
        The activation of a quick model (one of `models.small.ACTIVATIONS`; not stored in its state dict).

    Returns
    -------
    torch.nn.Module
        The base classifier, on the CPU, in eval mode.

    Raises
    ------
    ValueError
        For a quick dataset, when the file is not a readable state dict of the quick MLP or CNN or does not load
        into one for inputs of `input_shape`.
    """
    if dataset not in QUICK:
        return load_checkpoint(checkpoint, dataset)
    try:
        state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    except Exception as e:
        first = str(e).splitlines()[0][:200] if str(e) else ""
        if "weights_only" in str(e):  # torch's advice to load with weights_only=False, which this command never does
            first = "not a file torch.save wrote, or one holding more than tensors"
        raise ValueError(f"{checkpoint}: not a readable torch state dict ({type(e).__name__}: {first})") from e
    if isinstance(state, Mapping) and "state_dict" in state:
        state = state["state_dict"]
    if not isinstance(state, Mapping) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{checkpoint}: expected a state dict of the quick MLP or CNN (parameter names to tensors)")
    weights = [(k, v) for k, v in state.items() if k.startswith("net.") and k.endswith(".weight")]
    weights.sort(key=lambda kv: int(kv[0].split(".")[1]))
    convs = [v for _, v in weights if v.ndim == 4]
    linears = [v for _, v in weights if v.ndim == 2]
    if not linears:
        raise ValueError(f"{checkpoint}: no linear layer 'net.<i>.weight' found; the quick models are "
                         f"`models.small.MLP` and `SmallCNN` (keys: {sorted(state)[:6]})")
    classes = int(linears[-1].shape[0])
    if convs:
        model = SmallCNN(input_shape, classes, channels=tuple(int(v.shape[0]) for v in convs),
                         hidden=int(linears[0].shape[0]), activation=activation)
    else:
        model = MLP(input_shape, classes, hidden=tuple(int(v.shape[0]) for v in linears[:-1]), activation=activation)
    try:
        model.load_state_dict(state)
    except RuntimeError as e:
        detail = " ".join(str(e).split())  # torch puts the size mismatches on the lines after its first
        raise ValueError(f"{checkpoint} does not load into {type(model).__name__} for inputs of shape {input_shape}: "
                         f"{detail[:600]}") from e
    return model.eval()


def work_folder(outfile: Path) -> Path:
    """A certify run's work folder: `OUTFILE.work/`, one run folder per method.

    Parameters
    ----------
    outfile : Path
        The TSV the run writes.

    Returns
    -------
    Path
        `OUTFILE.work` in OUTFILE's folder.
    """
    return outfile.parent / f"{outfile.name}.work"


def manifest_path(outfile: Path) -> Path:
    """A certify run's manifest: `OUTFILE.json`.

    Parameters
    ----------
    outfile : Path
        The TSV the run writes.

    Returns
    -------
    Path
        `OUTFILE.json` in OUTFILE's folder.
    """
    return outfile.parent / f"{outfile.name}.json"


def check_outfile(outfile: Path, checkpoint: Path) -> None:
    """Refuse, before any work, an OUTFILE the run could not write or would write over an input: OUTFILE an
    existing directory, OUTFILE or what the run writes beside it (`manifest_path`, `work_folder`) the checkpoint
    itself, OUTFILE a file of another run (`run_holding`), a manifest, work folder, method folder or lock file
    (`files.lock_path`) beside it of the wrong kind (a directory for a file, or the reverse), or a folder to write
    in that is not writable.

    Parameters
    ----------
    outfile : Path
        The TSV the run writes.
    checkpoint : Path
        The base classifier's file, which must stay as it is.

    Raises
    ------
    ValueError
        Naming OUTFILE and the file or folder concerned.
    """
    if outfile.is_dir():
        raise ValueError(f"OUTFILE {outfile} is a directory; name the TSV file to write (e.g. {outfile / 'out.tsv'})")
    model = checkpoint.resolve()
    for written in (outfile, manifest_path(outfile), work_folder(outfile)):
        if written.resolve() == model:
            raise ValueError(f"OUTFILE {outfile} would overwrite the checkpoint {checkpoint} (the run writes "
                             f"{written}); choose another OUTFILE")
    owner = run_holding(outfile)
    if owner is not None:
        raise ValueError(f"OUTFILE {outfile} is a file of another run ({owner}); writing it would overwrite that "
                         "run's results: choose another OUTFILE")
    kinds = [(manifest_path(outfile), "its manifest", "a file", Path.is_file),
             (work_folder(outfile), "its work folder", "a directory", Path.is_dir),
             (files.lock_path(outfile), "its lock file", "a file", Path.is_file)]
    kinds += [(work_folder(outfile) / m, "its method folder", "a directory", Path.is_dir) for m in registry.names()]
    for path, what, expected, right in kinds:
        if (path.exists() or path.is_symlink()) and not right(path):
            raise ValueError(f"OUTFILE {outfile}: {what} {path} is not {expected}; move it away or choose another "
                             "OUTFILE")
    folder = outfile.resolve().parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"OUTFILE {outfile}: its folder {folder} is not a writable directory")


def run_holding(path: Path) -> str | None:
    """The run a file belongs to, named, or None: a folder above it that is a run folder (it holds a `run.json`,
    `runs.manifest`) or a certify run's work folder (`X.work` beside a manifest `X.json`), or the file itself a
    certify run's manifest (a JSON object with the run's "arguments", as `read_manifest` wants, or a certify-ucan
    run's, `ucan_command`).

    Parameters
    ----------
    path : Path
        The file (which need not exist).

    Returns
    -------
    str or None
        What holds it (the run folder, or the manifest's run), or None.
    """
    resolved = path.resolve()
    for folder in resolved.parents:
        if (folder / "run.json").is_file():
            return f"it is inside the run folder {folder}, which holds {folder / 'run.json'}"
        if folder.name.endswith(".work") and manifest_path(folder.parent / folder.name[:-5]).is_file():
            return (f"it is inside the work folder {folder} of the certify run "
                    f"{manifest_path(folder.parent / folder.name[:-5])}")
    if resolved.suffix == ".json" and resolved.is_file():
        try:
            held = json.loads(resolved.read_text(encoding="utf-8"))
        except (ValueError, OSError):  # not JSON, not text, unreadable: not a manifest
            return None
        if isinstance(held, dict) and isinstance(held.get("arguments"), dict) and (
                held.get("command") == "certify-ucan" or all(k in held["arguments"] for k in GUARDED)):
            return f"it is the manifest of the certify run of {resolved.parent / resolved.stem}"
    return None


def writer_of(outfile: Path) -> contextlib.AbstractContextManager[None]:
    """Hold OUTFILE's lock (`files.lock_path`: `.<OUTFILE>.lock` beside it) for the block: a second certify or merge
    of the same OUTFILE waits for the first, saying so, then resumes from its results instead of computing them
    again.

    Parameters
    ----------
    outfile : Path
        The TSV the run writes.

    Returns
    -------
    contextlib.AbstractContextManager
        The lock (`files.locked`), held while its block runs.
    """
    return files.locked(outfile, waiting=f"{PROG}: another run is writing {outfile} (lock {files.lock_path(outfile)} "
                                         "is held); waiting for it to finish")


def read_manifest(path: Path) -> dict:
    """A certify run's OUTFILE.json, read back: a JSON object with the run's "arguments" (ValueError naming the file
    otherwise, e.g. a manifest cut short by a kill).

    Parameters
    ----------
    path : Path
        The manifest, OUTFILE.json.

    Returns
    -------
    dict
        The manifest's JSON object; its "arguments" hold every `GUARDED` setting, each of the type and in the range
        the parser allows (`MANIFEST_CHECKS`), as does its "batch" when present.

    Raises
    ------
    ValueError
        Naming the file: not JSON text, lacking the run's "arguments", or holding a value the parser would refuse.
    """
    try:
        held = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} is not a readable run manifest ({e}); delete it (and {path.name[:-5]}.work/ if "
                         "it describes another run) to start again") from None
    if not isinstance(held, dict) or not isinstance(held.get("arguments"), dict) or any(
            k not in held["arguments"] for k in GUARDED):
        raise ValueError(f"{path} is not a certify run's manifest: it lacks the run's 'arguments' ({', '.join(GUARDED)})"
                         "; delete it to start again")
    values = [(f"arguments.{k}", held["arguments"][k], MANIFEST_CHECKS[k]) for k in MANIFEST_CHECKS
              if k in held["arguments"]]
    if "batch" in held:
        values.append(("batch", held["batch"], (int, _count(1))))
    for field, value, (kind, check) in values:
        allowed = (int, float) if kind is float else kind
        if isinstance(value, bool) or not isinstance(value, allowed):
            raise ValueError(f"{path}: {field} must be {JSON_KINDS[kind]}, got {value!r}; the manifest was edited: "
                             "delete it to start again")
        try:
            if callable(check):
                check(str(value))
            elif check is not None and value not in check:
                raise argparse.ArgumentTypeError(f"must be one of {list(check)}, got {value!r}")
        except argparse.ArgumentTypeError as e:
            raise ValueError(f"{path}: {field} {e}; the manifest was edited: delete it to start again") from None
    return held


def _registered(text: str) -> str:
    """A registered method's name (`registry.names()`, read when called: methods registered later count)."""
    if text not in registry.names():
        raise argparse.ArgumentTypeError(f"must be one of {list(registry.names())}, got {text!r}")
    return text


#: how `read_manifest` checks each argument a manifest records: the JSON type of its value and the parser's own check
#: (a type function, or the choices; None: any string)
MANIFEST_CHECKS = {
    "dataset": (str, DATASETS), "checkpoint": (str, None), "sigma": (float, _positive), "norm": (str, NORMS),
    "method": (str, _registered), "split": (str, ("test", "val")), "skip": (int, _count(1)), "max": (int, _max),
    "N0": (int, _count(1)), "N": (int, _count(1)), "alpha": (float, _probability), "seed": (int, _count(0)),
    "policy": (str, POLICIES), "data_dir": (str, None), "iterations": (int, _count(0)), "samples": (int, _count(1)),
    "iso_lr": (float, _positive), "ancer_lr": (float, _positive), "kappa": (float, _positive),
    "chunk": (int, _count(1)), "rancer_lr": (float, _positive), "gamma1": (float, _fraction),
    "gamma2": (float, _nonnegative), "activation": (str, sorted(ACTIVATIONS)), "precision": (str, PRECISIONS),
    "draws": (str, (CPU, DEVICE)),
}
JSON_KINDS = {int: "a JSON integer", float: "a JSON number", str: "a JSON string"}


def _versions() -> dict[str, str]:
    import pandas
    import scipy

    return {"ancer_lite": package_version(), "torch": torch.__version__, "numpy": np.__version__,
            "scipy": scipy.__version__, "pandas": pandas.__version__, "python": platform.python_version()}


def _arguments(args: argparse.Namespace) -> dict:
    """The guarded settings of a certify run, JSON-able (paths absolute)."""
    out = {}
    for name in GUARDED:
        value = getattr(args, name)
        out[name] = str(Path(value).resolve()) if isinstance(value, Path) else value
    return out


def _progress(method: str, done: int, total: int) -> None:
    if done == total or done % max(1, total // 10) == 0:
        print(f"  {method}: {done}/{total} inputs certified", file=sys.stderr, flush=True)


class CertifyRun:
    """A `certify` invocation: its inputs, model, settings and folders."""

    def __init__(self, args: argparse.Namespace, device: torch.device) -> None:
        self.args, self.device = args, device
        self.split = load_inputs(args.dataset, args.split, args.data_dir, args.seed, args.skip, args.max)
        if len(self.split) == 0:
            raise ValueError(f"no inputs selected: --skip {args.skip} --max {args.max} over the {args.split} split")
        shape = tuple(int(d) for d in self.split.x.shape[1:])
        self.model = load_model(args.dataset, args.checkpoint, shape, args.activation)
        self.num_classes = NUM_CLASSES[args.dataset]
        devices.place(self.model, device)
        try:  # before OUTFILE.json or OUTFILE.work/ exist: a broken model leaves nothing that refuses the rerun
            with torch.no_grad(), eval_mode(self.model):
                checked_logits(self.model, self.split.x[:1].to(device, torch.float32), self.num_classes)
        except (ValueError, RuntimeError) as e:
            raise ValueError(f"{args.checkpoint}: the model fails on the first input of {args.dataset} "
                             f"({type(e).__name__}: {' '.join(str(e).split())[:400]})") from e
        self.noise, self.theta0 = NOISE_OF[args.norm], theta_of(args.norm, args.sigma)
        self.settings = OptimSettings(
            {ISOTROPIC: IsotropicSettings(args.iterations, args.iso_lr, args.samples),
             ANCER: AncerSettings(args.iterations, args.ancer_lr, args.samples, args.kappa),
             RANCER: RancerSettings(iterations=args.iterations, lr=args.rancer_lr, samples=args.samples,
                                      gamma1=args.gamma1, gamma2=args.gamma2)}, args.chunk)
        self.precision, self.draws = args.precision, resolve_draws(args.draws, device)
        self.work = work_folder(args.outfile)
        self.method = registry.method(args.method)
        self.folders = {m: self.work / m for m in registry.names()}

    def manifest(self) -> dict:
        """OUTFILE.json's content: the guarded arguments (with the precision and the resolved draws unless exact and
        CPU, `experiment.numerics_fields`), the checkpoint's SHA-256, the inputs, the settings, the package versions
        and the device."""
        a = self.args
        arguments = {**_arguments(a), **numerics_fields(self.precision, self.draws)}
        return {"command": "certify", "arguments": arguments, "batch": a.batch,
                "checkpoint_sha256": files.file_sha256(a.checkpoint), "noise": self.noise, "theta0": self.theta0,
                "inputs": len(self.split), "indices_sha256": hashlib.sha256(
                    np.asarray(self.split.index, np.int64).tobytes()).hexdigest(),
                "settings": self.settings.record(), "work": self.work.name, "device": str(self.device),
                "versions": _versions()}

    def claim(self) -> dict:
        """Write OUTFILE.json, or check that the one there describes this run (ValueError naming the settings that
        differ)."""
        record = self.manifest()
        path = manifest_path(self.args.outfile)
        if path.exists():
            held = read_manifest(path)
            was, now = held["arguments"], record["arguments"]
            # the checkpoint counts by its SHA-256 (below), not its path; the data folder only where it is read
            ignored = {"checkpoint"} | ({"data_dir"} if self.args.dataset in QUICK else set())
            diff = [f"arguments.{k}" for k in sorted((set(was) | set(now)) - ignored) if was.get(k) != now.get(k)]
            diff += [k for k in ("checkpoint_sha256", "indices_sha256") if held.get(k) != record[k]]
            if diff:
                raise ValueError(f"{path} describes another run: it differs in {', '.join(diff)}; choose another "
                                 f"OUTFILE, or delete {path} and {self.work} to start again")
        files.write_atomic(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
        return record

    def _common(self) -> dict:
        a = self.args
        return dict(n0=a.N0, n=a.N, alpha=a.alpha, num_classes=self.num_classes, batch_size=a.batch, seed=a.seed,
                    policy=a.policy, device=self.device, precision=self.precision, draws=self.draws)

    def run(self, shard: int | None = None, num_shards: int | None = None) -> Path:
        """Certify (every input, or one shard) and return the folder whose final.tsv holds the method's rows.

        Parameters
        ----------
        shard : int, optional
            The shard to run (0-based); None: every input. RANCER (rotated methods) refuses a shard (ValueError).
        num_shards : int, optional
            The number of shards; None when `shard` is None.

        Returns
        -------
        Path
            The method's run folder, or with a shard the shard's folder (`shards.shard_folder`).
        """
        a, s = self.args, self.split
        if self.method.rotated:
            if shard is not None:
                raise ValueError(f"--method {a.method} is not sharded: its Hessian rotations stay in one process")
            start = self.method.start
            shards.run_methods(self.model, s.x, s.y, s.index, self.noise, self.theta0, [start], self.settings,
                               {start: self.folders[start]}, progress=_progress, **self._common())
            iso = files.load_array(self.folders[start] / "theta.npy")
            c = self._common()
            rancer_runs.run_rancer(self.model, s.x, s.y, s.index, iso, self.settings.of(a.method),
                                   self.folders[a.method], c["n0"], c["n"], c["alpha"], c["num_classes"],
                                   batch_size=c["batch_size"], seed=c["seed"], policy=c["policy"],
                                   progress=lambda d, t: _progress(a.method, d, t), device=self.device,
                                   precision=c["precision"], draws=c["draws"])
            return self.folders[a.method]
        shards.run_methods(self.model, s.x, s.y, s.index, self.noise, self.theta0, [a.method], self.settings,
                           self.folders, shard=shard, num_shards=num_shards, progress=_progress, **self._common())
        return (self.folders[a.method] if shard is None
                else shards.shard_folder(self.folders[a.method], shard, num_shards))

    def merge(self, num_shards: int) -> Path:
        """Merge the shards of the method's runs (`shards.merge_methods`); returns the method's folder.

        Parameters
        ----------
        num_shards : int
            The number of shards the run was split into.

        Returns
        -------
        Path
            The method's run folder, holding the merged final.tsv.

        Raises
        ------
        ValueError
            For a rotated method (RANCER), which is never sharded.
        """
        a, s = self.args, self.split
        if self.method.rotated:
            raise ValueError(f"--method {a.method} is not sharded, so there is nothing to merge")
        shards.merge_methods(self.model, s.x, s.y, s.index, self.noise, self.theta0, [a.method], self.settings,
                             self.folders, num_shards, **self._common())
        return self.folders[a.method]

    def publish(self, folder: Path) -> None:
        """Copy the method's final.tsv to OUTFILE (atomically) and record its SHA-256 in OUTFILE.json.

        Parameters
        ----------
        folder : Path
            The run folder whose final.tsv to publish (what `run` or `merge` returns).
        """
        text = (folder / "final.tsv").read_text(encoding="utf-8")
        files.write_if_changed(self.args.outfile, text)
        path = manifest_path(self.args.outfile)
        record = read_manifest(path)
        record["outfile_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        files.write_atomic(path, json.dumps(record, indent=1, sort_keys=True) + "\n")


def _summary(outfile: Path) -> str:
    import pandas as pd

    df = pd.read_csv(outfile, sep="\t")
    return (f"{len(df)} inputs: certified accuracy at radius 0 {100 * df.correct.mean():.1f}%, mean radius "
            f"{df.radius.where(df.correct.astype(bool), 0).mean():.4g}, mean proxy radius "
            f"{df.radius_proxy.where(df.correct.astype(bool), 0).mean():.4g} -> {outfile}")


def certify_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`certify`: Cohen et al.'s CERTIFY for Fixed σ, Isotropic DD or ANCER (+ ANCER Algorithm 1, the memory) or
    RANCER, every input or one shard; OUTFILE written when every input is certified.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed `certify` arguments.
    parser : argparse.ArgumentParser
        The `certify` parser, whose `error` reports bad arguments (exit status 2).

    Returns
    -------
    int
        The exit status, 0.
    """
    if (args.shard is None) != (args.num_shards is None):
        parser.error("argument --shard/--num-shards: give both or neither")
    if args.shard is not None and args.shard >= args.num_shards:
        parser.error(f"argument --shard: must be below --num-shards = {args.num_shards}, got {args.shard}")
    chosen = registry.method(args.method)
    if chosen.rotated and args.norm != "l2":
        parser.error(f"argument --norm: {chosen.label} certifies l2 (Gaussian noise) only, got {args.norm!r}")
    if chosen.rotated and args.shard is not None:
        parser.error(f"argument --shard: --method {args.method} is not sharded (its Hessian rotations stay in one "
                     "process)")
    args.outfile = Path(args.outfile)
    try:
        check_outfile(args.outfile, Path(args.checkpoint))
    except ValueError as e:
        parser.error(f"argument OUTFILE: {e}")
    device = _resolve(args.device, parser)
    if args.shard is not None:  # the shards of one run work side by side, each in its own folder
        return _certify(args, parser, device)
    with writer_of(args.outfile):
        return _certify(args, parser, device)


def _certify(args: argparse.Namespace, parser: argparse.ArgumentParser, device: torch.device) -> int:
    run = CertifyRun(args, device)
    if args.shard is not None:
        count = len(run.split)
        if args.num_shards > count:
            parser.error(f"argument --num-shards: {args.num_shards} exceeds the {count} selected inputs")
    run.claim()
    with torch_threads(args.threads):
        folder = run.run(args.shard, args.num_shards)
    if args.shard is not None:
        print(f"shard {shards.shard_name(args.shard, args.num_shards)} of {args.outfile} done ({folder}); when every "
              f"shard is: {PROG} merge --outfile {args.outfile} --num-shards {args.num_shards}")
        return 0
    run.publish(folder)
    print(_summary(args.outfile))
    return 0


def _resolve(device: str, parser: argparse.ArgumentParser) -> torch.device:
    try:
        return devices.resolve(device)
    except ValueError as e:
        parser.error(f"argument --device: {e}")


# ---- select, shard, merge, submit -------------------------------------------------------------------------------

def _profile(args: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[Profile, ImageSetup]:
    profile = PROFILES[args.profile]
    setups = {s.name: s for s in profile.images}
    if args.setup not in setups:
        parser.error(f"argument --setup: {args.setup!r} is not one of profile {args.profile!r}'s notebook-03 setups "
                     f"{sorted(setups)}")
    if args.results is None:
        args.results = Path(args.data_dir) / "results" / profile.name
    results = Path(args.results)
    folder = results
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        parser.error(f"argument --results: {results} is not a directory ({folder} is a file); name the results "
                     "folder")
    if args.device is not None:
        _resolve(args.device, parser)
    return profile, setups[args.setup]


def _job(args: argparse.Namespace, parser: argparse.ArgumentParser, norm: str, sigma: float) -> launch.ExperimentJob:
    profile, setup = _profile(args, parser)
    grid = sigmas_of(setup)[norm]
    if not grid:
        parser.error(f"argument --norm: setup {setup.name!r} certifies no {norm} noise level")
    if sigma not in grid:
        parser.error(f"argument --sigma: {sigma:g} is not one of setup {setup.name!r}'s {norm} noise levels "
                     f"{list(grid)}")
    return launch.ExperimentJob(profile, setup, norm, sigma, str(args.results), str(args.data_dir), args.seed,
                                args.device, args.precision, args.draws)


def _norms(args: argparse.Namespace, setup: ImageSetup, parser: argparse.ArgumentParser) -> list[str]:
    have = [n for n in NORMS if sigmas_of(setup)[n]]
    wanted = have if args.norm is None else list(dict.fromkeys(args.norm))
    for n in wanted:
        if n not in have:
            parser.error(f"argument --norm: setup {setup.name!r} certifies no {n} noise level (it has {have})")
    return wanted


def select_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`select`: notebook 03's step sizes (Isotropic DD, ANCER) of each norm, chosen on the validation split.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed `select` arguments.
    parser : argparse.ArgumentParser
        The `select` parser, whose `error` reports bad arguments (exit status 2).

    Returns
    -------
    int
        The exit status, 0.
    """
    _, setup = _profile(args, parser)
    for norm in _norms(args, setup, parser):
        sigma = selection_sigma(setup, norm)
        s = _job(args, parser, norm, sigma).settings()
        steps = ", ".join(f"{m.label} {m.step} {getattr(s.of(m.name), m.step):.4g}"
                          for m in map(registry.method, registry.names(rotated=False)) if m.step is not None)
        print(f"{setup.name} {norm}: {steps} at σ = {sigma:g}, the "
              f"same multiples of θ at every σ (kept under {args.results / setup.name})")
    return 0


def shard_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`shard`: one shard of notebook 03's three runs of a (setup, norm, σ) (`launch.ShardTask`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed `shard` arguments.
    parser : argparse.ArgumentParser
        The `shard` parser, whose `error` reports bad arguments (exit status 2).

    Returns
    -------
    int
        The exit status, 0.
    """
    if args.shard >= args.num_shards:
        parser.error(f"argument --shard: must be below --num-shards = {args.num_shards}, got {args.shard}")
    job = _job(args, parser, args.norm, args.sigma)
    if args.num_shards > job.inputs():
        parser.error(f"argument --num-shards: {args.num_shards} exceeds the setup's {job.inputs()} test inputs")
    print(launch.ShardTask(job, args.shard, args.num_shards)())
    return 0


def merge_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`merge`: the shards of a certify run (--outfile) or of a (setup, norm, σ), then ANCER's Algorithm 1.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed `merge` arguments.
    parser : argparse.ArgumentParser
        The `merge` parser, whose `error` reports bad arguments (exit status 2).

    Returns
    -------
    int
        The exit status, 0.
    """
    if args.outfile is not None:
        given = [f"--{n.replace('_', '-')}" for n in ("profile", "setup", "norm", "sigma") if getattr(args, n)]
        if given:
            parser.error(f"argument --outfile: not allowed with {', '.join(given)} (merge a certify run or a "
                         "profile's (setup, norm, σ), not both)")
        return _merge_certify(Path(args.outfile), args.num_shards, args.device, parser, args.threads,
                              args.precision, args.draws)
    missing = [f"--{n}" for n in ("profile", "setup", "norm", "sigma") if getattr(args, n) is None]
    if missing:
        parser.error(f"the following arguments are required without --outfile: {', '.join(missing)}")
    job = _job(args, parser, args.norm, args.sigma)
    out = job.merge(args.num_shards)
    for method, folder in job.folders().items():
        df = out[method]
        print(f"{job.name} {method}: {len(df)} inputs, certified accuracy at radius 0 "
              f"{100 * df.correct.mean():.1f}% -> {folder}")
    return 0


def _merge_certify(outfile: Path, num_shards: int, device: str | None, parser: argparse.ArgumentParser,
                   threads: int | None = None, precision: str | None = None, draws: str | None = None) -> int:
    path = manifest_path(outfile)
    if not path.exists():
        parser.error(f"argument --outfile: {path} not found (run `{PROG} certify ... {outfile} --shard K "
                     "--num-shards M` first)")
    stored = read_manifest(path)
    values = dict(stored["arguments"])
    values["checkpoint"] = Path(values["checkpoint"])
    values["data_dir"] = Path(values["data_dir"])
    # the run's own precision and draws (a manifest without them: exact, CPU draws) unless given
    values["precision"] = precision or values.get("precision", EXACT)
    values["draws"] = draws or values.get("draws", CPU)
    args = argparse.Namespace(**values, outfile=outfile, batch=stored.get("batch", BATCH_SIZE),
                              device=device or devices.AUTO, shard=None, num_shards=None, threads=threads)
    try:
        check_outfile(outfile, args.checkpoint)
    except ValueError as e:
        parser.error(f"argument --outfile: {e}")
    with writer_of(outfile):
        run = CertifyRun(args, _resolve(args.device, parser))
        run.claim()
        with torch_threads(threads):
            run.publish(run.merge(num_shards))
    print(_summary(outfile))
    return 0


def submit_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`submit`: the estimate, then a job array of every (norm, σ, shard) through submitit, waited for, merged.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed `submit` arguments.
    parser : argparse.ArgumentParser
        The `submit` parser, whose `error` reports bad arguments (exit status 2).

    Returns
    -------
    int
        The exit status, 0.
    """
    _, setup = _profile(args, parser)
    jobs = []
    for norm in _norms(args, setup, parser):
        grid = sigmas_of(setup)[norm]
        jobs += [_job(args, parser, norm, s) for s in grid if args.sigma is None or s in args.sigma]
    if args.sigma is not None:
        have = sorted({s for n in _norms(args, setup, parser) for s in sigmas_of(setup)[n]})
        bad = [s for s in args.sigma if s not in have]
        if bad:
            parser.error(f"argument --sigma: {', '.join(f'{s:g}' for s in bad)} not among setup {setup.name!r}'s "
                         f"noise levels {have} of the norm(s) {_norms(args, setup, parser)}")
    options = launch.cluster_options(args)
    launch.submit(jobs, args.num_shards, options, dry_run=args.dry_run, probe=not args.no_estimate)
    return 0


COMMANDS = {"certify": certify_command, "select": select_command, "shard": shard_command, "merge": merge_command,
            "submit": submit_command, "certify-ucan": ucan_command.run, "train": train_command.run,
            "checkpoints": checkpoints_command.run}


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` (default: sys.argv[1:]) and run the command; returns the exit status (argparse exits with 2 on
    bad arguments, naming them; a failure while running prints the error and returns 1).

    Parameters
    ----------
    argv : sequence of str, optional
        The command's arguments; None: sys.argv[1:].

    Returns
    -------
    int
        The exit status: 0 on success, 1 when the command fails (ValueError, FileNotFoundError, RuntimeError or
        OSError, printed to stderr).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args, args.command_parser)
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        print(f"{PROG} {args.command}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a path that cannot be read or written: named, with the system's reason
        where = e.filename if e.filename is not None else "a file"
        print(f"{PROG} {args.command}: error: cannot use {where}: {e.strerror or e} (expected a readable, writable "
              "path of the right kind)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
