"""`ancer-certify train DATASET RECIPE OUTDIR --sigma S [...]`: the papers' base classifiers from a dataset and a named
recipe (`models.recipes.RECIPES`), one per noise level σ, resumable; with a UCAN recipe
(`methods.ucan_recipes.UCAN_RECIPES`) and `--start`, a noise parameter generator trained jointly with each σ's trained
classifier, both written to one checkpoint (the NPG under `ucan_recipes.NPG_KEY`, read back by `ucan_recipes.load_npg`).

For each σ it writes `OUTDIR/sigma_<S>/checkpoint.pth.tar` (Cohen et al.'s {'arch', 'state_dict'}: `certify` and
`architectures.load_checkpoint` read it) and `checkpoint.pth.tar.json` (the recipe and each of its values, the seed, σ
and the noise's scale, the training data's SHA-256, the package versions, the device, the precision, the epochs done
and the wall time). The training state is kept after every epoch in `OUTDIR/sigma_<S>/train.work/`, so that a
stopped run started again resumes after its last finished epoch and ends with the model an uninterrupted run gives,
bit for bit on the same device. A finished σ is skipped when run again with the same settings and refused, naming
the settings that differ, with others. With `--cluster` the σ grid trains as one submitit job array, a task per σ.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import platform
import sys
import textwrap
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Iterator

import numpy as np
import submitit
import torch

from ..core import devices, files
from ..core.precision import EXACT, PRECISIONS
from ..methods.ucan_recipes import NPG_KEY, UCAN_RECIPES, UcanRecipe, npg_record, train_ucan_recipe
from ..models.data import (
    DATA_DIR,
    FASHION_MNIST_COPY,
    FASHION_MNIST_DIR,
    FASHION_MNIST_FILES,
    FASHION_MNIST_VAL,
    FolderImages,
    Split,
    fashion_mnist,
    hold_out,
    imagenet_subset,
)
from ..models.recipes import INPUT_SHAPES, QUICK_ARCHITECTURES, RECIPES, Recipe
from ..models.recipes import train_recipe as run_recipe
from ..models.small import SmallCNN
from ..models.train import tensors_sha256
from . import launch
from .arguments import HelpFormatter
from .arguments import count as _count
from .arguments import device as _device
from .arguments import positive as _positive

#: the datasets `train` reads
TRAIN_DATASETS = tuple(INPUT_SHAPES)
#: the datasets whose classifiers are the quick models (`models.small`), saved as bare state dicts
QUICK_DATASETS = ("digits", "mnist")
#: the files a σ's folder holds
CHECKPOINT, WORK = "checkpoint.pth.tar", "train.work"
#: the settings that determine a trained model: a finished σ run again with others is refused, naming them
GUARDED = ("dataset", "recipe", "seed", "sigma", "scale", "max_train", "precision", "data_sha256", "start_sha256")
#: every recipe `train` runs by name: the classifiers' and UCAN's noise generators'
ALL_RECIPES: dict[str, Recipe | UcanRecipe] = {**RECIPES, **UCAN_RECIPES}



def recipes_help(width: int = 100) -> str:
    """Every recipe's name, values and source, as the help's epilog.

    Parameters
    ----------
    width : int
        The text's width in columns.

    Returns
    -------
    str
        One paragraph per recipe.
    """
    lines = ["recipes (σ: the noise's std in [0, 1] pixel space; uniform noise has half-width λ = √3 σ; the UCAN "
             "recipes, ucan_*, need --start):"]
    for r in ALL_RECIPES.values():
        lines.append(f"  {r.name}")
        lines += textwrap.wrap(r.summary() + ".", width, initial_indent="      ", subsequent_indent="      ")
        lines += textwrap.wrap("source: " + r.source, width, initial_indent="      ", subsequent_indent="      ")
    return "\n".join(lines)


TRAIN_EXAMPLE = """\
examples:
  # ANCER's l2 CIFAR-10 ResNet-18s (App. E.1) at three noise levels, on a GPU:
  ancer-certify train cifar10 cifar10_l2_resnet18 data/checkpoints/cifar10/l2 --sigma 0.25 0.5 1.0 --device cuda
  # then certify one of them:
  ancer-certify certify cifar10 data/checkpoints/cifar10/l2/sigma_0.25/checkpoint.pth.tar 0.25 out/c.tsv
  # UCAN's input-dependent noise generator (§4.3) fine-tuned with each of those classifiers:
  ancer-certify train cifar10 ucan_input data/checkpoints/cifar10/ucan_input --sigma 0.25 0.5 1.0 \
      --start data/checkpoints/cifar10/l2 --device cuda
  # the same σ grid as a SLURM job array, one GPU task per σ (requeued tasks resume from their last epoch):
  ancer-certify train cifar10 cifar10_l2_resnet18 data/checkpoints/cifar10/l2 --sigma 0.25 0.5 1.0 --device cuda \
      --cluster slurm --partition gpu --time 720
  # a smoke run on 64 digits:
  ancer-certify train digits tiny out/tiny --sigma 0.25 --max-train 64
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the `train` subcommand to an `ancer-certify` subparsers object.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        What `ArgumentParser.add_subparsers` returned.

    Returns
    -------
    argparse.ArgumentParser
        The `train` parser.
    """
    t = sub.add_parser(
        "train", formatter_class=HelpFormatter, epilog=TRAIN_EXAMPLE + "\n" + recipes_help(),
        help="train the papers' base classifiers (or UCAN's noise generators on them) from a dataset and a named "
             "recipe, one per σ (resumable)",
        description=textwrap.fill(
            "Train a base classifier of RECIPE on DATASET's training images for each noise level σ, with the "
            "recipe's noise augmentation (Gaussian for l2, uniform for l1) and optimizer, and write "
            "OUTDIR/sigma_<S>/checkpoint.pth.tar in Cohen et al.'s format (what `certify` reads) with a manifest "
            "checkpoint.pth.tar.json beside it (the recipe and its values, seed, σ and the noise's scale, the data's "
            "SHA-256, package versions, device, precision, epochs done, wall time). The training state is kept after "
            "every epoch in OUTDIR/sigma_<S>/train.work/: a stopped run started again resumes after its last "
            "finished epoch and ends with the model of an uninterrupted run (bit for bit on the same device). A "
            "finished σ is skipped when run again with the same settings and refused, naming the settings that "
            "differ, with others. A UCAN recipe (ucan_*) fine-tunes the classifier of --start at each σ jointly with "
            "a noise parameter generator of UCAN §4 (its loss, §4.2) and writes both to the checkpoint: the "
            f"classifier as above (certify reads it), the generator under '{NPG_KEY}' "
            "(ancer_lite.methods.ucan_recipes.load_npg reads it).", 100))
    t.add_argument("dataset", choices=TRAIN_DATASETS, metavar="DATASET",
                   help=f"one of {', '.join(TRAIN_DATASETS)}: cifar10 from --data-dir/cifar10 (the python batches); "
                        "imagenet from the ImageFolder --data-dir/imagenet/train, read batch by batch as it trains "
                        "(Resize 256, CenterCrop 224; with --max-train N, that many images spread evenly over the "
                        "ImageFolder order, held in memory); fmnist from the IDX files in --data-dir/"
                        f"{FASHION_MNIST_COPY} (default {FASHION_MNIST_DIR}, whose files are checked against their "
                        "pinned SHA-256; another folder's are not, and the data's SHA-256 goes to the manifest; the last "
                        f"{FASHION_MNIST_VAL:,} training images are held out as the validation split); digits and mnist: the quick "
                        "profile's training split of --seed (certify them with the same --seed)")
    t.add_argument("recipe", choices=sorted(ALL_RECIPES), metavar="RECIPE",
                   help=f"one of {', '.join(ALL_RECIPES)} (listed below), for DATASET (the UCAN recipes for any)")
    t.add_argument("outdir", type=Path, metavar="OUTDIR", help="the folder of the sigma_<S>/ folders")
    t.add_argument("--sigma", type=_positive, nargs="+", required=True, metavar="S",
                   help="the noise levels σ (the noise's standard deviation), one model each")
    t.add_argument("--seed", type=_count(0), default=0,
                   help="seeds the initial weights, the batch order and the noise (and the digits / mnist split)")
    t.add_argument("--data-dir", type=Path, default=None, metavar="DIR",
                   help=f"the data folder, as for `certify` and the profiles: cifar10 / imagenet read its cifar10/ and "
                        f"imagenet/ (default {DATA_DIR}); fmnist reads the four IDX files of its {FASHION_MNIST_COPY}/ "
                        f"(default: Debian's {FASHION_MNIST_DIR})")
    t.add_argument("--device", type=_device, default=devices.AUTO, help="where the model trains")
    t.add_argument("--precision", choices=PRECISIONS, default=EXACT,
                   help="the arithmetic of the forward and backward passes: exact (float32, TF32 off), tf32, bf16 "
                        "(autocast to bfloat16 on any device)")
    t.add_argument("--epochs", type=_count(1), default=None, metavar="N",
                   help="train N epochs instead of the recipe's (the manifest says so; the schedule spans N)")
    t.add_argument("--max-train", type=_count(1), default=None, metavar="N",
                   help="train on the first N training images only (smoke tests)")
    t.add_argument("--start", type=Path, default=None, metavar="PATH",
                   help="UCAN recipes only: the trained classifiers to fine-tune, a folder holding "
                        "sigma_<S>/checkpoint.pth.tar for each --sigma (the OUTDIR of a `train` run of a classifier "
                        "recipe), or one checkpoint file for a single σ")
    g = t.add_argument_group("job array (one task per σ, through submitit; default: train here, one σ after the other)")
    launch.add_cluster_options(g, 24 * 60, None)
    return t


def fmnist_source(data_dir: Path, parser: argparse.ArgumentParser) -> Path:
    """The folder of Fashion-MNIST's IDX files in the data folder `data_dir`: `<data_dir>/fashion-mnist`, the folder
    `certify` and `--profile fmnist` read (`data.fashion_mnist_folder`). A `data_dir` without that folder is refused
    through `parser` (exit 2), naming the folder of IDX files when it is one itself.

    Parameters
    ----------
    data_dir : pathlib.Path
        `--data-dir` as given.
    parser : argparse.ArgumentParser
        The parser whose `error` reports a refusal.

    Returns
    -------
    pathlib.Path
        `<data_dir>/fashion-mnist`.
    """
    folder = Path(data_dir) / FASHION_MNIST_COPY
    if folder.is_dir():
        return folder
    direct = [name for name in FASHION_MNIST_FILES["train"] if (Path(data_dir) / f"{name}.gz").is_file()]
    hint = (f"; {data_dir} holds the IDX files itself: give the folder above it after moving them into "
            f"{FASHION_MNIST_COPY}/, or leave --data-dir out for Debian's {FASHION_MNIST_DIR}") if direct else \
        f" (leave --data-dir out for Debian's {FASHION_MNIST_DIR})"
    parser.error(f"argument --data-dir: {data_dir} has no {FASHION_MNIST_COPY}/ folder of Fashion-MNIST's IDX files, "
                 f"the folder certify and --profile fmnist read{hint}")


def load_training(dataset: str, data_dir: Path | None, seed: int, max_train: int | None) -> tuple[Split, str]:
    """The training images of `dataset` and where they came from.

    Parameters
    ----------
    dataset : str
        One of `TRAIN_DATASETS`.
    data_dir : pathlib.Path or None
        See the `--data-dir` option; None: the dataset's default folder.
    seed : int
        The quick datasets' split seed.
    max_train : int or None
        Keep the first `max_train` images (ImageNet: that many, spread evenly); None: every image.

    Returns
    -------
    split : Split
        x float32 (N, *INPUT_SHAPES[dataset]) in [0, 1] (ImageNet without `max_train`: a `data.FolderImages`, read
        batch by batch), y (N,).
    source : str
        Where they were read from.
    """
    from .cli import load_split

    if dataset == "imagenet":
        root = Path(data_dir or DATA_DIR) / "imagenet"
        if max_train is not None:
            return imagenet_subset(root, "train", max_train), f"{root}/train (every k-th of ImageFolder order)"
        images = FolderImages(root / "train")
        return (Split(images, images.targets, np.arange(len(images))),
                f"{root}/train (every image, read batch by batch as it trains)")
    if dataset == "fmnist":
        folder = Path(data_dir) if data_dir is not None else FASHION_MNIST_DIR
        pinned = folder.resolve() == FASHION_MNIST_DIR.resolve()
        split = fashion_mnist(folder, "train") if pinned else fashion_mnist(folder, "train", sha256=None)
        split, _ = hold_out(split, FASHION_MNIST_VAL, str(folder))  # the held-out validation images: never trained on
        source = (f"{folder} ({'pinned SHA-256 checked' if pinned else 'not the package folder: SHA-256 not checked'}"
                  f"; the first {len(split):,} training images, the last {FASHION_MNIST_VAL:,} held out for validation)")
    elif dataset == "cifar10":
        folder = Path(data_dir or DATA_DIR)
        split, source = load_split(dataset, "train", folder, seed), f"{folder / 'cifar10'} (training batches)"
    else:
        split, source = load_split(dataset, "train", DATA_DIR, seed), f"{dataset} training split of seed {seed}"
    if max_train is not None and max_train < len(split):
        split = Split(split.x[:max_train], split.y[:max_train], np.asarray(split.index)[:max_train])
    return split, source


def versions() -> dict[str, str]:
    """The versions of the package, torch, numpy and Python.

    Returns
    -------
    dict of str to str
        "ancer_lite" ("unknown" when not installed), "torch", "numpy", "python".
    """
    try:
        own = importlib.metadata.version("ancer_lite")
    except importlib.metadata.PackageNotFoundError:
        own = "unknown"
    return {"ancer_lite": own, "torch": torch.__version__, "numpy": np.__version__,
            "python": platform.python_version()}


def sigma_folder(outdir: Path, sigma: float) -> Path:
    """The folder of one noise level's checkpoint, manifest and training state.

    Parameters
    ----------
    outdir : pathlib.Path
        The command's OUTDIR.
    sigma : float
        The noise level.

    Returns
    -------
    pathlib.Path
        `OUTDIR/sigma_<S>`, S as Python prints the float (0.25, 1.0), as `runs.setups.checkpoint_path` names it.
    """
    return Path(outdir) / f"sigma_{sigma}"


class TrainTask(submitit.helpers.Checkpointable):
    """One job array task: train (or resume, or skip) one σ's model (`train_sigma`). Requeued on preemption or
    timeout, it resumes after the last epoch its training state kept.

    Parameters
    ----------
    recipe : Recipe or UcanRecipe
        The recipe, epochs overridden already.
    sigma : float
        The noise level.
    data : pathlib.Path or None
        The folder `load_training` reads (None: the dataset's default).
    options : argparse.Namespace
        What `train_sigma` reads of `train`'s options: outdir, dataset, seed, device, max_train, precision, epochs.
    start : pathlib.Path or None
        A UCAN recipe's trained classifier; None for a classifier recipe.
    """

    def __init__(self, recipe: Recipe | UcanRecipe, sigma: float, data: Path | None, options: argparse.Namespace,
                 start: Path | None = None) -> None:
        self.recipe, self.sigma, self.data, self.options, self.start = recipe, sigma, data, options, start

    def __call__(self) -> str:
        o = self.options
        split, source = load_training(o.dataset, self.data, o.seed, o.max_train)
        outcome = train_sigma(self.recipe, split, source, self.sigma, o, devices.resolve(o.device), self.start)
        return f"σ = {self.sigma:g}: {outcome} -> {sigma_folder(o.outdir, self.sigma) / CHECKPOINT}"


def start_model(dataset: str, path: Path, input_shape: tuple[int, ...]) -> tuple[torch.nn.Module, str]:
    """The trained classifier a UCAN recipe fine-tunes, read as `certify` reads it (`cli.load_model`), and its arch.

    Parameters
    ----------
    dataset : str
        One of `TRAIN_DATASETS`.
    path : pathlib.Path
        Its checkpoint: Cohen et al.'s {'arch', 'state_dict'}, or a quick model's state dict.
    input_shape : tuple of int
        One input's shape.

    Returns
    -------
    model : torch.nn.Module
        The classifier, in eval mode on the CPU.
    arch : str
        The checkpoint's 'arch', or for a quick model's bare state dict "small_cnn" or "mlp".
    """
    from .cli import load_model

    model = load_model(dataset, path, input_shape)
    held = torch.load(path, map_location="cpu", weights_only=True)
    arch = held.get("arch") if isinstance(held, dict) else None
    return model, arch if isinstance(arch, str) else ("small_cnn" if isinstance(model, SmallCNN) else "mlp")


def start_checkpoints(start: Path, sigmas: list[float], parser: argparse.ArgumentParser) -> dict[float, Path]:
    """Each σ's trained classifier under `--start`: `start/sigma_<S>/checkpoint.pth.tar`, or the file `start` itself
    for a single σ; a missing one is refused through `parser` (exit 2), naming it.

    Parameters
    ----------
    start : pathlib.Path
        `--start` as given.
    sigmas : list of float
        The noise levels.
    parser : argparse.ArgumentParser
        The parser whose `error` reports a refusal.

    Returns
    -------
    dict of float to pathlib.Path
        σ to its checkpoint file.
    """
    if start.is_file():
        if len(sigmas) != 1:
            parser.error(f"argument --start: {start} is one checkpoint file, which fits a single σ; give the folder "
                         f"of sigma_<S>/{CHECKPOINT} for the {len(sigmas)} noise levels")
        return {sigmas[0]: start}
    found = {s: sigma_folder(start, s) / CHECKPOINT for s in sigmas}
    missing = [str(p) for p in found.values() if not p.is_file()]
    if missing:
        parser.error(f"argument --start: no trained classifier at {', '.join(missing)} (train it first with a "
                     f"classifier recipe into {start}, or give a checkpoint file for a single σ)")
    return found


def _differences(held: dict, now: dict) -> list[str]:
    """The guarded settings that differ, each with both values."""
    out = []
    for key in GUARDED:
        was, new = held.get(key), now.get(key)
        if key == "recipe" and isinstance(was, dict) and isinstance(new, dict):
            out += [f"recipe.{k} (was {was.get(k)!r}, now {new.get(k)!r})" for k in sorted(set(was) | set(new))
                    if k != "source" and was.get(k) != new.get(k)]
        elif was != new:
            out.append(f"{key} (was {was!r}, now {new!r})")
    return out


@contextlib.contextmanager
def _exclusive(folder: Path) -> Iterator[None]:
    """Hold `folder`'s lock for the block; another run training the same σ is refused."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with files.locked(folder, wait=False):
            yield
    except BlockingIOError:
        raise ValueError(f"another run is training {folder.parent} (the lock of {folder} is held)") from None


def train_sigma(recipe: Recipe | UcanRecipe, split: Split, source: str, sigma: float, args: argparse.Namespace,
                device: torch.device, start: Path | None = None) -> str:
    """Train (or resume, or skip) one σ's model and write its checkpoint and manifest.

    Parameters
    ----------
    recipe : Recipe or UcanRecipe
        The recipe, epochs overridden already.
    split : Split
        The training images.
    source : str
        Where they came from.
    sigma : float
        The noise level.
    args : argparse.Namespace
        The parsed `train` options.
    device : torch.device
        Where it trains.
    start : pathlib.Path or None
        A UCAN recipe's trained classifier (its checkpoint file); None for a classifier recipe.

    Returns
    -------
    str
        "trained", "resumed" or "skipped".

    Raises
    ------
    ValueError
        Naming the settings that differ, when the folder holds another run's checkpoint or training state.
    """
    folder = sigma_folder(args.outdir, sigma)
    ckpt, work = folder / CHECKPOINT, folder / WORK
    manifest = folder / f"{CHECKPOINT}.json"
    ucan = isinstance(recipe, UcanRecipe)
    shape = tuple(split.x.shape[1:])
    settings = {"dataset": args.dataset, "recipe": asdict(recipe), "seed": args.seed, "sigma": sigma,
                "scale": recipe.lam(sigma, int(np.prod(shape))) if ucan else recipe.scale(sigma),
                "max_train": args.max_train, "precision": args.precision,
                "data_sha256": tensors_sha256(split.x, split.y),
                "start_sha256": files.file_sha256(start) if ucan else None}
    for path, what in ((manifest, "checkpoint"), (work / "settings.json", "training state")):
        if not path.exists():
            continue
        try:
            held = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{path} is not readable ({e}); delete {folder} to train σ = {sigma:g} again") from None
        diff = _differences(held.get("settings", {}), settings)
        if diff:
            raise ValueError(f"{folder} holds the {what} of another run: it differs in {', '.join(diff)}; choose "
                             f"another OUTDIR, or delete {folder} to train again")
        if what == "checkpoint" and ckpt.exists() and held.get("checkpoint_sha256") == files.file_sha256(ckpt):
            return "skipped"
    with _exclusive(work):
        files.write_atomic(work / "settings.json", json.dumps({"settings": settings}, indent=1, sort_keys=True) + "\n")
        resumed = (work / "state.pt").exists()
        if ucan:
            model, arch = start_model(args.dataset, start, shape)
            torch.manual_seed(args.seed)  # the NPG's initial weights: drawn after the classifier is read
            npg = recipe.build_npg(shape)
        else:
            torch.manual_seed(args.seed)
            model, arch = recipe.build(), recipe.arch
        began = time.perf_counter()

        def progress(done: int, total: int) -> None:
            print(f"  σ = {sigma:g}: epoch {done}/{total} ({time.perf_counter() - began:.1f} s)", file=sys.stderr,
                  flush=True)

        if ucan:
            model, npg = train_ucan_recipe(recipe, model, npg, split.x, split.y, sigma, seed=args.seed, device=device,
                                           state_dir=work, precision=args.precision, progress=progress)
        else:
            model = run_recipe(recipe, model, split.x, split.y, sigma, seed=args.seed, device=device, state_dir=work,
                               precision=args.precision, progress=progress)
        wall = time.perf_counter() - began
        state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        payload = {"arch": arch, "state_dict": state} | ({NPG_KEY: npg_record(recipe, npg, shape, sigma)}
                                                          if ucan else {})
        with files.atomic_file(ckpt, "wb") as fh:
            torch.save(payload, fh)
        bare = args.dataset in QUICK_DATASETS if ucan else recipe.arch in QUICK_ARCHITECTURES
        form = "bare network state dict" if bare else "Sequential(Normalize, net) state dict"
        record = {"command": "train", "settings": settings, "recipe_name": recipe.name,
                  "recipe_source": recipe.source, "epochs": recipe.epochs,
                  "epochs_override": args.epochs, "noise": recipe.noise, "data_source": source,
                  "inputs": len(split), "device": str(device), "versions": versions(),
                  "epochs_done": recipe.epochs, "wall_time_s": round(wall, 3), "resumed": resumed,
                  "checkpoint_format": form + (f", the noise generator under '{NPG_KEY}'" if ucan else ""),
                  "checkpoint_sha256": files.file_sha256(ckpt)} | ({"start": str(start)} if ucan else {})
        files.write_atomic(manifest, json.dumps(record, indent=1, sort_keys=True) + "\n")
    return "resumed" if resumed else "trained"


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`train`: each σ's model of the recipe, resumable; finished σ skipped.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options (`add_parser`).
    parser : argparse.ArgumentParser
        The `train` parser, whose errors name its usage.

    Returns
    -------
    int
        The exit status, 0.
    """
    recipe = ALL_RECIPES[args.recipe]
    ucan = isinstance(recipe, UcanRecipe)
    if ucan and args.start is None:
        parser.error(f"argument --start: the UCAN recipe {recipe.name!r} fine-tunes trained classifiers; give the "
                     f"folder of their sigma_<S>/{CHECKPOINT} (the OUTDIR of a `train` run of a classifier recipe)")
    if not ucan and args.start is not None:
        parser.error(f"argument --start: only the UCAN recipes ({', '.join(UCAN_RECIPES)}) start from a trained "
                     f"classifier; {recipe.name!r} trains from random weights")
    if not ucan and recipe.dataset != args.dataset:
        fitting = sorted(r.name for r in RECIPES.values() if r.dataset == args.dataset)
        parser.error(f"argument RECIPE: {recipe.name!r} trains on {recipe.dataset}, not {args.dataset} (recipes for "
                     f"{args.dataset}: {', '.join(fitting) or 'none'})")
    if len(set(args.sigma)) != len(args.sigma):
        parser.error(f"argument --sigma: each noise level once, got {' '.join(f'{s:g}' for s in args.sigma)}")
    if args.outdir.exists() and not args.outdir.is_dir():
        parser.error(f"argument OUTDIR: {args.outdir} exists and is not a directory")
    starts = start_checkpoints(args.start, args.sigma, parser) if ucan else {}
    try:  # a job array's tasks resolve the device where they run (a login node may have no GPU)
        device = devices.resolve(args.device) if args.cluster is None else None
    except ValueError as e:
        parser.error(f"argument --device: {e}")
    if args.epochs is not None:
        recipe = replace(recipe, epochs=args.epochs)
    source_dir = args.data_dir
    if args.dataset == "fmnist" and args.data_dir is not None:
        source_dir = fmnist_source(args.data_dir, parser)
    try:
        split, source = load_training(args.dataset, source_dir, args.seed, args.max_train)
    except FileNotFoundError as e:
        parser.error(f"argument --data-dir: {e}")
    print(f"{recipe.name}: {recipe.summary()}; {len(split)} training images from {source}", file=sys.stderr)
    if args.cluster is not None:
        options = argparse.Namespace(outdir=args.outdir, dataset=args.dataset, seed=args.seed, device=args.device,
                                     max_train=args.max_train, precision=args.precision, epochs=args.epochs)
        tasks = [TrainTask(recipe, sigma, source_dir, options, starts.get(sigma)) for sigma in args.sigma]
        for line in launch.run_array(tasks, [f"σ = {sigma:g}" for sigma in args.sigma], launch.cluster_options(args),
                                     "ancer-train"):
            print(line, flush=True)
        return 0
    for sigma in args.sigma:
        outcome = train_sigma(recipe, split, source, sigma, args, device, starts.get(sigma))
        folder = sigma_folder(args.outdir, sigma)
        if outcome == "skipped":
            print(f"σ = {sigma:g}: skipped, {folder / CHECKPOINT} is done with these settings")
        else:
            print(f"σ = {sigma:g}: {outcome} -> {folder / CHECKPOINT}")
    return 0
