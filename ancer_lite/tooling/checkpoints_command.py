"""`ancer-certify checkpoints --profile P`: train every base-classifier checkpoint a profile's notebooks need and lack.

A paper profile's checkpoint setups (`profiles.ImageSetup` with model="checkpoint") read one Cohen-format checkpoint per
(norm, σ) at `<data_dir>/checkpoints/<dataset>/<norm>/sigma_<S>/checkpoint.pth.tar` (`setups.checkpoint_path`). This
command lists the missing ones, prints what training them costs (seconds per SGD step measured here on the recipe's
model and batch, times the steps of its epochs) and trains them with the setups' recipes (`ImageSetup.recipe_l2`,
`recipe_l1`) through `train_command.train_sigma`: resumable, with a manifest beside each checkpoint. A user's own
checkpoint at that path is used as it is, never overwritten. With --cluster the checkpoints train as one submitit job
array (SLURM, one GPU per task, or local processes), one task per checkpoint. `make all PROFILE=paper` runs it before
the notebooks.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from ..core import devices
from ..core.names import NOISE_OF
from ..core.precision import EXACT, PRECISIONS
from ..models.data import fashion_mnist_folder
from ..models.recipes import Recipe, get_recipe, train_recipe
from ..runs.profiles import PROFILES, Profile, get_profile
from ..runs.setups import checkpoint_path, describe_missing, missing_inputs, sigmas_of
from . import launch
from .arguments import HelpFormatter
from .arguments import count as _count
from .arguments import device as _device
from .train_command import TrainTask, load_training, train_sigma

#: the datasets whose checkpoints this command trains (ImageNet's are read batch by batch, `data.FolderImages`)
TRAINABLE = ("cifar10", "fmnist", "imagenet")


@dataclass(frozen=True)
class Planned:
    """One missing checkpoint: where it goes, its dataset, norm and σ, and the recipe that trains it (None: none)."""
    path: Path
    dataset: str
    norm: str
    sigma: float
    recipe: Recipe | None


def plan(profile: Profile, data_dir: str | Path) -> list[Planned]:
    """Every checkpoint of the profile's checkpoint setups (notebook 03's and RANCER's columns) that is absent.

    Parameters
    ----------
    profile : Profile
        The profile.
    data_dir : str or os.PathLike
        The data folder.

    Returns
    -------
    list of Planned
        One per missing path (a path two setups share once), in the profile's order.
    """
    out: dict[Path, Planned] = {}
    for setup in (*profile.images, *profile.rancer):
        if setup.model != "checkpoint":
            continue
        for norm, sigmas in sigmas_of(setup).items():
            name = getattr(setup, f"recipe_{norm}")
            for sigma in sigmas:
                path = checkpoint_path(Path(data_dir), setup.dataset, norm, sigma)
                if path.exists() or path in out:
                    continue
                out[path] = Planned(path, setup.dataset, norm, sigma, None if name is None else get_recipe(name))
    return list(out.values())


def seconds_per_step(recipe: Recipe, device: torch.device, precision: str = EXACT) -> float:
    """The wall time of one SGD step of `recipe` here: its model, a batch of its size, its noise and loss.

    Measured as the time of three steps less that of one (so the first step's set-up is not counted), on random
    images of the recipe's shape.

    Parameters
    ----------
    recipe : Recipe
        The recipe.
    device : torch.device
        Where it trains.
    precision : str
        One of `precision.PRECISIONS`.

    Returns
    -------
    float
        Seconds per step, > 0.
    """
    g = torch.Generator().manual_seed(0)
    times = []
    for steps in (1, 3):
        x = torch.rand(steps * recipe.batch_size, *recipe.input_shape, generator=g)
        y = torch.randint(0, recipe.num_classes, (len(x),), generator=g)
        one = replace(recipe, epochs=1)
        torch.manual_seed(0)
        model = one.build()
        began = time.perf_counter()
        train_recipe(one, model, x, y, 0.25, device=device, precision=precision)
        devices.synchronize(device)
        times.append(time.perf_counter() - began)
    step = (times[1] - times[0]) / 2
    return step if step > 0 else times[1] / 3  # a noisy machine: the three steps' mean


def format_duration(seconds: float) -> str:
    """Seconds as "3 h 05 min", "12 min" or "40 s".

    Parameters
    ----------
    seconds : float
        The duration, >= 0.

    Returns
    -------
    str
        Hours and minutes from an hour, else minutes from a minute, else seconds (rounded).
    """
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def estimate(todo: list[Planned], images: dict[str, int], epochs: int | None, device: torch.device,
             precision: str) -> tuple[list[str], float]:
    """What training `todo` costs here: one line per checkpoint and the total in seconds.

    Parameters
    ----------
    todo : list of Planned
        Checkpoints with a recipe.
    images : dict of str to int
        The number of training images of each dataset.
    epochs : int or None
        The epochs (None: each recipe's).
    device : torch.device
        Where they train.
    precision : str
        The arithmetic.

    Returns
    -------
    lines : list of str
        One per checkpoint: recipe, σ, steps and time.
    total : float
        Seconds, all of them.
    """
    per_step: dict[str, float] = {}
    lines, total = [], 0.0
    for item in todo:
        r = item.recipe
        if r.name not in per_step:
            per_step[r.name] = seconds_per_step(r, device, precision)
        n_epochs = epochs or r.epochs
        steps = math.ceil(images[item.dataset] / r.batch_size) * n_epochs
        cost = steps * per_step[r.name]
        total += cost
        lines.append(f"  {item.dataset} {item.norm} σ = {item.sigma:g}: {r.name}, {n_epochs} epochs × "
                     f"{math.ceil(images[item.dataset] / r.batch_size):,} steps × {per_step[r.name]:.3f} s = "
                     f"{format_duration(cost)}")
    return lines, total


PROFILE_EXAMPLE = """\
examples:
  # what the paper profile lacks and what training it costs on this machine, nothing trained:
  ancer-certify checkpoints --profile paper --dry-run
  # train them on a GPU in bf16 (then `make all PROFILE=paper` finds them):
  ancer-certify checkpoints --profile paper --device cuda --precision bf16
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the `checkpoints` subcommand to an `ancer-certify` subparsers object.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        What `ArgumentParser.add_subparsers` returned.

    Returns
    -------
    argparse.ArgumentParser
        The `checkpoints` parser.
    """
    p = sub.add_parser(
        "checkpoints", formatter_class=HelpFormatter, epilog=PROFILE_EXAMPLE,
        help="train every checkpoint a profile needs and lacks, with its recipes (cost estimate first)",
        description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("--profile", choices=sorted(PROFILES), required=True, help="the profile")
    p.add_argument("--data-dir", type=Path, default=None, metavar="DIR",
                   help="the data folder (datasets; checkpoints/<dataset>/<norm>/sigma_<S>/ are written there); "
                        "default: models.data.DATA_DIR")
    p.add_argument("--device", type=_device, default=devices.AUTO, help="where the models train")
    p.add_argument("--precision", choices=PRECISIONS, default=EXACT,
                   help="the arithmetic of the forward and backward passes (train's --precision)")
    p.add_argument("--seed", type=_count(0), default=0, help="seeds the initial weights, batch order and noise")
    p.add_argument("--epochs", type=_count(1), default=None, metavar="N",
                   help="train N epochs instead of each recipe's (recorded in each manifest)")
    p.add_argument("--max-train", type=_count(1), default=None, metavar="N",
                   help="train on the first N training images only (smoke runs)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and the estimate, train nothing")
    g = p.add_argument_group("job array (one task per checkpoint, through submitit; default: train here)")
    launch.add_cluster_options(g, 24 * 60, None)
    return p


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`checkpoints`: the profile's missing checkpoints, estimated, then trained.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options (`add_parser`).
    parser : argparse.ArgumentParser
        The parser, whose errors name its usage.

    Returns
    -------
    int
        0 when every checkpoint is present at the end (or --dry-run), 2 when some have no recipe.
    """
    from ..models.data import DATA_DIR

    profile = get_profile(args.profile)
    data_dir = Path(args.data_dir) if args.data_dir is not None else DATA_DIR
    todo = plan(profile, data_dir)
    if not todo:
        print(f"profile {profile.name!r}: every checkpoint is present under {data_dir / 'checkpoints'}")
        return 0
    handless = [t for t in todo if t.recipe is None or t.dataset not in TRAINABLE]
    trainable = [t for t in todo if t not in handless]
    data_missing = [(p, how) for p, how in missing_inputs(profile, data_dir) if "checkpoints" not in p.parts]
    if data_missing and trainable:
        print(describe_missing(profile, data_missing), file=sys.stderr)
        print(f"and then {len(trainable)} checkpoint(s) trained from them:", *(f"  {t.path}" for t in trainable),
              sep="\n", file=sys.stderr)
        return 2
    try:
        device = devices.resolve(args.device)
    except ValueError as e:
        parser.error(f"argument --device: {e}")
    # fmnist: the IDX files of <data_dir>/fashion-mnist when present, else Debian's (`data.fashion_mnist_folder`)
    sources = {d: data_dir if d != "fmnist" else fashion_mnist_folder(data_dir)[0] for d in TRAINABLE}
    splits = {d: load_training(d, sources[d], args.seed, args.max_train) for d in sorted({t.dataset for t in trainable})}
    print(f"profile {profile.name!r}: {len(todo)} checkpoint(s) missing under {data_dir / 'checkpoints'}")
    if trainable:
        lines, total = estimate(trainable, {d: len(s) for d, (s, _) in splits.items()}, args.epochs, device,
                                args.precision)
        print(f"training {len(trainable)} of them on {device} ({args.precision}), measured here:", *lines,
              f"  total: about {format_duration(total)}", sep="\n", flush=True)
    for t in handless:
        why = ("no recipe trains it (place the checkpoint there by hand)" if t.recipe is None else
               f"{t.dataset} training is not supported here")
        print(f"  {t.path}: {NOISE_OF[t.norm]} noise, σ = {t.sigma:g}: {why}", file=sys.stderr)
    if args.dry_run:
        return 0

    def options(t: Planned) -> argparse.Namespace:  # what train_sigma reads of `ancer-certify train`'s options
        return argparse.Namespace(outdir=t.path.parent.parent, dataset=t.dataset, seed=args.seed, device=args.device,
                                  max_train=args.max_train, precision=args.precision, epochs=args.epochs)

    recipes = [t.recipe if args.epochs is None else replace(t.recipe, epochs=args.epochs) for t in trainable]
    if args.cluster is not None:
        tasks = [TrainTask(r, t.sigma, sources[t.dataset], options(t)) for t, r in zip(trainable, recipes)]
        done = launch.run_array(tasks, [f"{t.dataset} {t.norm} σ = {t.sigma:g}" for t in trainable],
                                launch.cluster_options(args), "ancer-train")
        for t, line in zip(trainable, done):
            print(f"{t.dataset} {t.norm} {line}", flush=True)
        return 2 if handless else 0
    for t, recipe in zip(trainable, recipes):
        split, source = splits[t.dataset]
        outcome = train_sigma(recipe, split, source, t.sigma, options(t), device)
        print(f"{t.dataset} {t.norm} σ = {t.sigma:g}: {outcome} -> {t.path}", flush=True)
    return 2 if handless else 0
