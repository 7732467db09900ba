"""`ancer-certify certify-ucan DATASET CHECKPOINT OUTFILE`: UCAN's Algorithm 1 with the noise parameter generator (NPG)
that `ancer-certify train` trained with a UCAN recipe, per input and resumable, in ANCER's TSV format.

The checkpoint holds both the classifier (read as `certify` reads it, `cli.load_model`) and the NPG with its noise
family and λ (`ucan_recipes.load_npg`). Each input is certified with θ = λ σ(x) and mean μ(x) from its own streams
(`runs.ucan_runs.run_ucan`, rows kept in `OUTFILE.work/ucan/` so a stopped run resumes), and its region is the
chosen UCAN Table 1 row's (`--row`). An input-dependent NPG (`ucan_input`) makes σ depend on x, and such
certificates are not sound by themselves (notebook 07's claim C9 finds verified counterexamples inside them), so by
default its regions go through ANCER's Algorithm 1, the memory (`ucan_runs.with_memory`); a universal or pattern NPG
(`ucan_universal`, `ucan_pattern`) uses one σ for every input and needs none. OUTFILE.json records the checkpoint's
SHA-256, every setting, the package versions and the device, and refuses a rerun with other settings.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..core import devices, files
from ..core.certify import AUTO, DRAWS
from ..core.memory import POLICIES, SHRINK
from ..core.names import NORMS
from ..core.precision import EXACT, PRECISIONS
from ..core.reproducibility import torch_threads
from ..core.ucan_radii import TABLE1_ROWS, table1_row
from ..methods import ucan
from ..methods.ucan_recipes import UCAN_RECIPES, load_npg
from ..models.data import DATA_DIR
from ..runs.setups import NUM_CLASSES
from ..runs.ucan_runs import run_ucan, with_gap, with_memory
from .arguments import DATASETS, HelpFormatter, certify_options
from .arguments import count as _count
from .arguments import device as _device

#: --memory: "auto" applies ANCER's Algorithm 1 where σ depends on the input (an input-dependent NPG)
MEMORY = ("auto", "on", "off")
#: the settings that determine OUTFILE's rows: a rerun with others is refused
GUARDED = ("dataset", "split", "skip", "max", "N0", "N", "alpha", "seed", "row", "memory", "policy", "data_dir",
           "activation", "precision", "draws")
#: OUTFILE's columns: ANCER's, then R1 (the row's radius at λ = 1), p_A', log geomean θ and the memory's status
COLUMNS = ["idx", "label", "predict", "radius", "radius_proxy", "correct", "min_sigma", "time", "gap", "p_lower",
           "log_gm_theta", "status"]

EXAMPLE = """\
examples:
  # UCAN's input-dependent NPG trained on the CIFAR-10 classifiers (ancer-certify train cifar10 ucan_input ...),
  # every 10th test image, through ANCER's memory (the default for an input-dependent NPG):
  ancer-certify certify-ucan cifar10 data/checkpoints/cifar10/ucan_input/sigma_0.25/checkpoint.pth.tar \\
      out/cifar10_ucan_input_0.25.tsv --skip 10 --batch 1000
  # a universal NPG on the quick digits, 20 inputs, with UCAN Table 1's l2 row:
  ancer-certify certify-ucan digits UCAN/sigma_0.5/checkpoint.pth.tar out/digits_ucan.tsv --max 20 --N 10000
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the `certify-ucan` subcommand to `ancer-certify`'s subparsers and return its parser.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of `ancer-certify`'s parser (`cli.build_parser`).

    Returns
    -------
    argparse.ArgumentParser
        The `certify-ucan` parser.
    """
    c = sub.add_parser(
        "certify-ucan", formatter_class=HelpFormatter, epilog=EXAMPLE,
        help="certify a dataset with UCAN's noise generator from `train` (UCAN Algorithm 1, ANCER's TSV)",
        description=textwrap.fill(
            "Certify inputs of DATASET with the classifier and the noise parameter generator (NPG) of CHECKPOINT, "
            f"which `ancer-certify train` writes with a UCAN recipe ({', '.join(UCAN_RECIPES)}), by UCAN's "
            "Algorithm 1 (θ = λ σ(x), mean μ(x), the NPG's noise family and λ) and write one row per input to "
            "OUTFILE: ANCER's columns idx label predict radius radius_proxy correct min_sigma time, where radius is "
            "the --row's ℓp radius min θ · R1 (UCAN Cor. 3.3) and radius_proxy its ALM geomean(θ) · R1 (Eq. 23), "
            "then gap (R1), p_lower, log_gm_theta and status. An input-dependent NPG's certificates go through "
            "ANCER's Algorithm 1 (the memory) by default: without it they are not sound (notebook 07, claim C9). "
            "Rows are kept in OUTFILE.work/ and a stopped run resumes from them; OUTFILE.json records the "
            "checkpoint's SHA-256 and every setting.", 100))
    c.add_argument("dataset", choices=DATASETS, metavar="DATASET",
                   help=f"one of {', '.join(DATASETS)}, read as `certify` reads it")
    c.add_argument("checkpoint", type=Path, metavar="CHECKPOINT",
                   help="a checkpoint `ancer-certify train DATASET ucan_* ... --start ...` wrote (the classifier and "
                        "its NPG under 'ucan_npg')")
    c.add_argument("outfile", type=Path, metavar="OUTFILE", help="the TSV to write")
    c.add_argument("--row", choices=sorted(TABLE1_ROWS), default=None, metavar="ROW",
                   help="the UCAN Table 1 row (noise/norm) whose radius and ALM OUTFILE holds, of the NPG's noise "
                        f"family (default: the family's first; one of {', '.join(TABLE1_ROWS)})")
    c.add_argument("--memory", choices=MEMORY, default="auto",
                   help="ANCER's Algorithm 1 over the certified regions (l1 / l2 rows): auto = on for an "
                        "input-dependent NPG, off for a universal or pattern one")
    c.add_argument("--policy", choices=POLICIES, default=SHRINK,
                   help="the memory's policy when regions of different classes intersect")
    certify_options(c)
    c.add_argument("--split", choices=("test", "val"), default="test", help="as `certify`'s")
    c.add_argument("--data-dir", type=Path, default=DATA_DIR, metavar="DIR", help="as `certify`'s")
    c.add_argument("--seed", type=_count(0), default=0, help="the run seed of every input's streams")
    c.add_argument("--device", type=_device, default=devices.AUTO, help="where the classifier and the NPG run")
    c.add_argument("--precision", choices=PRECISIONS, default=EXACT,
                   help="the classifier's forward passes' arithmetic (the certificate is of the classifier as "
                        "evaluated in it)")
    c.add_argument("--draws", choices=DRAWS, default=AUTO,
                   help="where the Gaussian is drawn: device = on the model's device (counter-based streams per "
                        "input, reproducible per device), cpu = on the CPU (the same rows on every device), auto = "
                        "device on CUDA; UCAN's other families are drawn on the CPU")
    c.add_argument("--threads", type=_count(1), default=None, help="torch's CPU threads (default: torch's own)")
    c.add_argument("--activation", default="relu", help="the activation of a quick (digits / mnist) classifier")
    return c


def _arguments(args: argparse.Namespace) -> dict:
    """The guarded settings, JSON-able (the data folder absolute, and only where it is read)."""
    out = {name: getattr(args, name) for name in GUARDED}
    out["data_dir"] = None if args.dataset in ("digits", "mnist") else str(Path(args.data_dir).resolve())
    return out


def _claim(path: Path, record: dict) -> None:
    """Write OUTFILE.json, or check that the one there describes this run (ValueError naming what differs)."""
    if path.exists():
        try:
            held = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise ValueError(f"{path} is not a readable run manifest ({e}); delete it to start again") from None
        if not isinstance(held, dict) or held.get("command") != "certify-ucan":
            raise ValueError(f"{path} is not the manifest of a certify-ucan run; choose another OUTFILE")
        was, now = held.get("arguments", {}), record["arguments"]
        diff = [f"arguments.{k}" for k in GUARDED if was.get(k) != now.get(k)]
        diff += [k for k in ("checkpoint_sha256", "indices_sha256") if held.get(k) != record[k]]
        if diff:
            raise ValueError(f"{path} describes another run: it differs in {', '.join(diff)}; choose another OUTFILE, "
                             f"or delete {path} and {path.name[:-5]}.work/ to start again")
    files.write_atomic(path, json.dumps(record, indent=1, sort_keys=True) + "\n")


def final_rows(df: pd.DataFrame, npg: torch.nn.Module, lam: float, x: torch.Tensor, row: str, memory: bool,
               policy: str = SHRINK, a: float | None = None) -> pd.DataFrame:
    """OUTFILE's rows from `run_ucan`'s: R1 as gap, and the memory's decisions where it applies.

    Parameters
    ----------
    df : pandas.DataFrame
        `ucan_runs.run_ucan`'s rows (computed with `row`), in x's order.
    npg : torch.nn.Module
        The NPG.
    lam : float
        Its λ.
    x : torch.Tensor, shape (N, *input_shape)
        The inputs.
    row : str
        The Table 1 row.
    memory : bool
        Whether ANCER's Algorithm 1 runs over the regions (status "no_memory" otherwise).
    policy : str
        The memory's policy.
    a : float or None
        The power-law exponent.

    Returns
    -------
    pandas.DataFrame
        `COLUMNS`.
    """
    if memory:
        out = with_memory(df, npg, lam, x, row, policy, a)
    else:
        out = with_gap(df, row, int(np.prod(tuple(x.shape[1:]))), a).assign(status="no_memory")
    out["correct"] = out["correct"].astype(int)
    return out[COLUMNS]


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`certify-ucan`: UCAN Algorithm 1 with a trained NPG on every selected input, then the row's radii and the
    memory; OUTFILE written when every input is certified.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed `certify-ucan` arguments.
    parser : argparse.ArgumentParser
        The `certify-ucan` parser, whose `error` reports bad arguments (exit status 2).

    Returns
    -------
    int
        The exit status, 0.
    """
    from .cli import check_outfile, load_inputs, load_model, manifest_path, work_folder, writer_of

    if not Path(args.checkpoint).is_file():
        parser.error(f"argument CHECKPOINT: no such file: {str(args.checkpoint)!r}")
    args.outfile = Path(args.outfile)
    try:
        check_outfile(args.outfile, Path(args.checkpoint))
    except ValueError as e:
        parser.error(f"argument OUTFILE: {e}")
    try:
        device = devices.resolve(args.device)
    except (ValueError, RuntimeError) as e:
        parser.error(f"argument --device: {e}")
    trained = load_npg(args.checkpoint)
    rows = ucan.rows_of(trained.noise)
    row = rows[0] if args.row is None else args.row
    if row not in rows:
        parser.error(f"argument --row: the NPG of {args.checkpoint} was trained with {trained.noise} noise, which "
                     f"certifies the rows {rows}, got {row!r}")
    data_dependent = isinstance(trained.npg, ucan.InputDependentNPG)
    memory = args.memory == "on" or (args.memory == "auto" and data_dependent)
    norm = table1_row(row).norm
    if memory and norm not in NORMS:
        parser.error(f"argument --row: ANCER's memory holds l1 and l2 regions only, and {row!r} certifies {norm}; "
                     "choose an l1 / l2 row, or --memory off (an input-dependent NPG's certificates are then not "
                     "guarded by the memory)")
    args.row = row
    args.draws = ucan.noise_draws(trained.noise, args.draws, device)
    with writer_of(args.outfile):
        split = load_inputs(args.dataset, args.split, args.data_dir, args.seed, args.skip, args.max)
        if len(split) == 0:
            raise ValueError(f"no inputs selected: --skip {args.skip} --max {args.max} over the {args.split} split")
        shape = tuple(int(s) for s in split.x.shape[1:])
        model = load_model(args.dataset, args.checkpoint, shape, args.activation)
        devices.place(model, device)
        trained.npg.to(device)
        try:
            with torch.no_grad():
                ucan.npg_maps(trained.npg, split.x[0])
        except RuntimeError as e:
            raise ValueError(f"{args.checkpoint}: its NPG does not take inputs of {args.dataset}'s shape {shape} "
                             f"({' '.join(str(e).split())[:300]})") from e
        record = {"command": "certify-ucan", "arguments": _arguments(args),
                  "checkpoint_sha256": files.file_sha256(args.checkpoint),
                  "indices_sha256": hashlib.sha256(np.asarray(split.index, np.int64).tobytes()).hexdigest(),
                  "noise": trained.noise, "lam": trained.lam, "a": trained.a,
                  "npg": type(trained.npg).__name__, "inputs": len(split), "memory_applied": memory,
                  "device": str(device)}
        path = manifest_path(args.outfile)
        _claim(path, record)
        identity = {"checkpoint_sha256": record["checkpoint_sha256"], "row": row}
        with torch_threads(args.threads):
            df = run_ucan(model, trained.npg, trained.noise, trained.lam, split.x, split.y, split.index, args.N0,
                          args.N, args.alpha, NUM_CLASSES[args.dataset],
                          work_folder(args.outfile) / "ucan", identity, args.seed, args.batch, device, trained.a,
                          row, precision=args.precision, draws=args.draws)
            final = final_rows(df, trained.npg, trained.lam, split.x, row, memory, args.policy, trained.a)
        buf = io.StringIO()
        final.to_csv(buf, sep="\t", index=False)
        files.write_if_changed(args.outfile, buf.getvalue())
        record["outfile_sha256"] = hashlib.sha256(buf.getvalue().encode("utf-8")).hexdigest()
        files.write_atomic(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    certified = final.correct.astype(bool)
    print(f"{len(final)} inputs ({trained.noise} drawn on the {'CPU' if args.draws == 'cpu' else device.type}, "
          f"λ = {trained.lam:g}, row {row}, memory "
          f"{'on' if memory else 'off'}): certified accuracy at radius 0 {100 * certified.mean():.1f}%, mean ℓp radius "
          f"{final.radius.where(certified, 0).mean():.4g}, mean ALM {final.radius_proxy.where(certified, 0).mean():.4g}"
          f" -> {args.outfile}")
    return 0
