"""Sharding a certification run: the inputs of one `experiment.run_method` run,
in input order, are cut into K contiguous shards (ranges of positions, as Cohen et al.'s `--skip/--max` certify a
range of a dataset); each shard is certified on its own (another process, machine or SLURM array task) into
`<folder>/shards/<k>-of-<K>/`, and `merge` joins them into `<folder>` exactly as one unsharded run would have
written it.

This holds because an input's θ (Isotropic DD, ANCER App. C) and its CERTIFY draws (Cohen et al.'s CERTIFY) come
from its own streams (`core.streams`, keyed by the run seed and the input's dataset index) and do not depend on
the batch size, the optimization chunk or the other inputs: a shard's `theta.npy` rows and `certify.tsv` rows are
the full run's rows of its inputs. Only ANCER's memory (Algorithm 1) depends on every input, in test order; a
merge therefore joins θ and the CERTIFY rows, and lets `run_method` apply Algorithm 1 over the merged certificates
and write `final.tsv`. The merged folder (theta.npy, certify.tsv, run.json, final.tsv) is byte-for-byte the
unsharded run's, except the `time` column (a measurement).

A merge checks before it writes anything: every shard's manifest (`run.json`) agrees with the full run on every
setting but the subset digests (`experiment.SUBSET_FIELDS`), and on those for its own inputs; its θ is the one it
wrote; and the shards' logged indices together are the run's indices, none missing and none in two shards. Every
error names the shard and the field or the indices.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from ..core import devices, files
from ..core.certify import AUTO, BATCH_SIZE
from ..core.memory import SHRINK
from ..core.precision import EXACT
from ..core.validation import check_count, check_path
from ..methods import registry
from ..methods.optimize import resolve_draws
from ..methods.registry import OptimSettings
from . import logs, manifest
from .experiment import EXTRA_COLUMNS, SUBSET_FIELDS, run_method, run_record

#: the sub-folder of a run folder that holds its shards
SHARDS = "shards"
#: the files a run folder holds (what `manifest.claim` guards)
RUN_FILES = ("theta.npy", "certify.tsv", "final.tsv")


def shard_range(count: int, shard: int, num_shards: int) -> tuple[int, int]:
    """The positions [start, stop) of shard `shard` (0-based) of `num_shards` over `count` inputs: contiguous
    ranges whose lengths differ by at most one, the longer ones first. count >= 1, 1 <= num_shards <= count,
    0 <= shard < num_shards (ValueError naming the argument otherwise).

    Parameters
    ----------
    count : int
        The run's number of inputs, >= 1.
    shard : int
        The shard, 0-based, in [0, num_shards).
    num_shards : int
        The number of shards, in [1, count].

    Returns
    -------
    (int, int)
        start and stop: the shard holds positions start..stop-1 of the run's inputs.
    """
    check_count(count, "count")
    check_count(num_shards, "num_shards")
    if num_shards > count:
        raise ValueError(f"num_shards = {num_shards} exceeds the run's {count} inputs: every shard must hold at "
                         "least one input")
    check_count(shard, "shard", 0)
    if shard >= num_shards:
        raise ValueError(f"shard must be in [0, num_shards = {num_shards}), got {shard}")
    base, extra = divmod(count, num_shards)
    start = shard * base + min(shard, extra)
    return start, start + base + (1 if shard < extra else 0)


def shard_ranges(count: int, num_shards: int) -> list[tuple[int, int]]:
    """Every shard's `shard_range`, in order: together they cover positions 0..count-1 once.

    Parameters
    ----------
    count, num_shards : as in `shard_range`

    Returns
    -------
    list of (int, int)
        num_shards (start, stop) pairs, shard 0 first.
    """
    return [shard_range(count, k, num_shards) for k in range(check_count(num_shards, "num_shards"))]


def shard_name(shard: int, num_shards: int) -> str:
    """`<shard>-of-<num_shards>`: a shard's folder name and how errors name it.

    Parameters
    ----------
    shard, num_shards : int
        As in `shard_range` (not checked here).

    Returns
    -------
    str
        E.g. "0-of-4".
    """
    return f"{shard}-of-{num_shards}"


def shard_folder(folder: str | Path, shard: int, num_shards: int) -> Path:
    """Where shard `shard` of `num_shards` of the run in `folder` keeps its run: `<folder>/shards/<k>-of-<K>/`.

    Parameters
    ----------
    folder : str or os.PathLike
        The full run's folder.
    shard, num_shards : int
        As in `shard_range` (not checked here).

    Returns
    -------
    pathlib.Path
        The shard's run folder (which need not exist).
    """
    check_path(folder, "folder")
    return Path(folder) / SHARDS / shard_name(shard, num_shards)


def _check_lengths(x: torch.Tensor, y: torch.Tensor | np.ndarray, indices: np.ndarray | Sequence[int]) -> np.ndarray:
    idx = np.asarray(indices)
    if not (len(x) == len(y) == len(idx)):
        raise ValueError(f"x, y and indices must have one entry per input, got lengths {len(x)}, {len(y)} and "
                         f"{len(idx)}")
    return idx


def _shard_isotropic(isotropic: np.ndarray | None, count: int, start: int, stop: int) -> np.ndarray | None:
    """ANCER's Isotropic DD start for the shard: the full run's (count rows, sliced) or the shard's own rows."""
    if isotropic is None:
        return None
    iso = np.asarray(isotropic)
    if len(iso) == count:
        return iso[start:stop]
    if len(iso) == stop - start:
        return iso
    raise ValueError(f"isotropic must hold the full run's {count} rows or the shard's {stop - start}, got {len(iso)}")


def run_shard(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, indices: np.ndarray, noise: str,
              theta0: float, method: str, settings: OptimSettings, folder: str | Path, shard: int, num_shards: int,
              n0: int, n: int, alpha: float, num_classes: int, batch_size: int = BATCH_SIZE, seed: int = 0,
              policy: str = SHRINK, isotropic: np.ndarray | None = None,
              progress: Callable[[int, int], None] | None = None,
              device: str | torch.device | None = None, *, precision: str = EXACT,
              draws: str = AUTO) -> pd.DataFrame:
    """Shard `shard` of `num_shards` of the run `run_method(model, x, y, indices, ..., folder, ...)`: `run_method` on
    the inputs of `shard_range(len(x), shard, num_shards)` into `shard_folder(folder, shard, num_shards)`, resumable
    like any run (a killed shard re-run resumes from its certify.tsv). x, y, indices: the FULL run's inputs; the
    arguments are run_method's. isotropic (ANCER): the full run's Isotropic DD θ or the shard's rows of it (run the
    isotropic shard first, as `run_methods` does). Returns the shard's rows (its own final.tsv, whose memory step
    saw the shard's inputs only: `merge` recomputes it over all of them).

    Parameters
    ----------
    model : torch.nn.Module
        As in `run_method`.
    x : torch.Tensor, shape (N, *input_shape)
        The full run's inputs.
    y : torch.Tensor, shape (N,)
        The full run's labels.
    indices : numpy.ndarray of int, shape (N,)
        The full run's dataset indices (ValueError when x, y and indices differ in length).
    noise, theta0, method, settings, folder, n0, n, alpha, num_classes, batch_size, seed, policy, progress, device
        As in `run_method`; folder is the full run's (the shard runs in `shard_folder(folder, shard, num_shards)`).
    shard, num_shards : int
        As in `shard_range`, over N inputs.
    isotropic : numpy.ndarray, shape (N, *input_shape) or (stop - start, *input_shape), optional
        See above; None: no start given (as in `run_method`).
    precision, draws : str, optional
        As in `run_method`.

    Returns
    -------
    pandas.DataFrame
        The shard's final.tsv rows (columns idx, label, predict, radius, radius_proxy, correct, min_sigma,
        time, gap, p_lower, log_volume, status), one per input of the shard, in input order.
    """
    idx = _check_lengths(x, y, indices)
    start, stop = shard_range(len(x), shard, num_shards)
    return run_method(model, x[start:stop], y[start:stop], idx[start:stop], noise, theta0, method, settings,
                      shard_folder(folder, shard, num_shards), n0, n, alpha, num_classes, batch_size=batch_size,
                      seed=seed, policy=policy, isotropic=_shard_isotropic(isotropic, len(x), start, stop),
                      progress=progress, device=device, precision=precision, draws=draws)


def _canonical(record: dict) -> dict:
    return json.loads(json.dumps(record, sort_keys=True, default=str))


def _few(values: Sequence[object], limit: int = 10) -> str:
    values = list(values)
    shown = ", ".join(map(str, values[:limit]))
    return f"[{shown}{', ...' if len(values) > limit else ''}] ({len(values)} in all)"


def _held_record(folder: Path, name: str) -> dict:
    """The manifest in `folder` (which must exist) of the shard or run `name`, as JSON; ValueError naming the file."""
    path = folder / manifest.MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{name}: {path} is not a readable run manifest ({e})") from e


def _differing(held: dict, expected: dict, skip: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The fields, in order, where a stored manifest and a run's record differ, but those in `skip` and θ's hash."""
    return [field for field in sorted(set(held) | set(expected))
            if field not in skip and field != manifest.THETA_HASH and held.get(field) != expected.get(field)]


def _read_shard(folder: Path, name: str, expected: dict) -> tuple[dict, list[str], list[str]]:
    """A shard's manifest (checked against the full run's record but for the subset fields), the header and the row
    lines of its certify.tsv (validated by `logs.read_log`)."""
    path = folder / manifest.MANIFEST
    if not path.exists():
        raise ValueError(f"shard {name} is missing: {path} does not exist (run that shard first)")
    held = _held_record(folder, f"shard {name}")
    diff = _differing(held, expected, set(SUBSET_FIELDS))
    if diff:
        field = diff[0]
        raise ValueError(f"shard {name} ({folder}) was run with other settings than this merge: its field "
                         f"{field!r} is {held.get(field)!r}, the run's is {expected.get(field)!r}")
    if manifest.THETA_HASH not in held or not (folder / "theta.npy").exists():
        raise ValueError(f"shard {name} ({folder}) is incomplete: it has no θ yet (rerun the shard; it resumes)")
    log_path = folder / "certify.tsv"
    if not log_path.exists():
        raise ValueError(f"shard {name} ({folder}) is incomplete: it has no certify.tsv yet (rerun the shard; it "
                         "resumes)")
    logs.read_log(log_path)  # every row validated, errors name the file and line
    lines = log_path.read_text(encoding="utf-8").split("\n")[:-1]
    return held, lines[0].split("\t"), lines[1:]


def merge(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, indices: np.ndarray, noise: str, theta0: float,
          method: str, settings: OptimSettings, folder: str | Path, num_shards: int, n0: int, n: int, alpha: float,
          num_classes: int, batch_size: int = BATCH_SIZE, seed: int = 0, policy: str = SHRINK,
          isotropic: np.ndarray | None = None, device: str | torch.device | None = None, *, precision: str = EXACT,
          draws: str = AUTO) -> pd.DataFrame:
    """Join the `num_shards` shards of the run `run_method(model, x, y, indices, ..., folder, ...)` (every argument
    as in that call; isotropic: the FULL run's Isotropic DD θ for ANCER, i.e. the merged isotropic run's theta.npy)
    into `folder`, then apply ANCER's Algorithm 1 (memory) over the merged certificates in test order through
    `run_method`, which writes final.tsv; returns final.tsv as a DataFrame.

    Checked before anything is written (ValueError naming the shard and the field or the indices): every shard's
    run.json agrees with the full run's `run_record` on every setting but the subset fields, and on those with the
    run's inputs, labels, indices and Isotropic DD start at the shard's indices; its θ has the SHA-256 it recorded;
    the indices its certify.tsv holds, over all shards, are the run's indices, none missing (incomplete shards) and
    none held by two shards. Then written, each file atomically: run.json (the full run's record, as
    `manifest.claim`), theta.npy (the shards' θ in input order), certify.tsv (the shards' rows in input order),
    run.json with θ's SHA-256; `run_method` then finds the run complete, certifies nothing and writes final.tsv.
    precision, draws: the run's (`run_method`'s; a shard run with others is refused, its manifest records them).

    Parameters
    ----------
    model, x, y, indices, noise, theta0, method, settings, folder, n0, n, alpha, num_classes, batch_size, seed, policy
        As in `run_method`, for the full run (x of shape (N, *input_shape), y and indices of shape (N,)).
    num_shards : int
        The number of shards the run was cut into, 1 <= num_shards <= N.
    isotropic : numpy.ndarray, shape (N, *input_shape), optional
        See above; None for a method without a start.
    device, precision, draws
        As in `run_method`.

    Returns
    -------
    pandas.DataFrame
        The merged run's final.tsv rows (columns idx, label, predict, radius, radius_proxy, correct, min_sigma,
        time, gap, p_lower, log_volume, status), one per input, in input order.
    """
    idx = _check_lengths(x, y, indices).astype(np.int64)
    check_path(folder, "folder")
    folder = Path(folder)
    check_count(num_shards, "num_shards")
    ranges = shard_ranges(len(x), num_shards)
    if isotropic is not None and len(isotropic) != len(x):
        raise ValueError(f"isotropic must hold the full run's {len(x)} rows (the merged Isotropic DD θ), got "
                         f"{len(isotropic)}")
    y_arr = np.asarray(y).astype(np.int64)
    draws = resolve_draws(draws, devices.place(model, device))
    record = run_record(model, x, y_arr, idx, noise, theta0, method, settings, n0, n, alpha, num_classes, seed,
                        isotropic, precision=precision, draws=draws)
    expected = _canonical(record)
    position = {int(i): p for p, i in enumerate(idx)}
    columns = logs.ANCER_COLUMNS + EXTRA_COLUMNS
    shards, holders = [], {}
    for k in range(num_shards):
        name = shard_name(k, num_shards)
        sf = shard_folder(folder, k, num_shards)
        held, header, rows = _read_shard(sf, name, expected)
        if header != columns:
            raise ValueError(f"shard {name}: {sf / 'certify.tsv'} has the columns {header}, expected {columns}")
        logged = [int(r.split("\t", 1)[0]) for r in rows]
        for i in logged:
            holders.setdefault(i, []).append(name)
        shards.append((k, name, sf, held, rows, logged))
    unexpected = [i for i in holders if i not in position]
    doubled = {i: names for i, names in holders.items() if len(names) > 1}
    missing = [int(i) for i in idx if int(i) not in holders]
    if unexpected or doubled or missing:
        parts = []
        if missing:
            owners = sorted({shard_name(next(k for k, (a, b) in enumerate(ranges) if a <= position[i] < b), num_shards)
                             for i in missing})
            parts.append(f"missing indices {_few(missing)}, which shard(s) {', '.join(owners)} should hold (rerun "
                         "them: they resume)")
        if doubled:
            parts.append("indices held by more than one shard: " + "; ".join(
                f"{i} in {' and '.join(names)}" for i, names in list(doubled.items())[:10])
                + (f" ({len(doubled)} in all)" if len(doubled) > 10 else ""))
        if unexpected:
            parts.append(f"indices that are not the run's {_few(unexpected)}")
        raise ValueError(f"the shards of {folder} do not hold the run's {len(idx)} indices once each: "
                         + "; ".join(parts))
    theta = None
    lines: list[tuple[int, str]] = []
    for k, name, sf, held, rows, logged in shards:
        pos = np.array(sorted(position[i] for i in logged), dtype=np.int64)
        subset = dict(inputs=manifest.array_digest(x[torch.from_numpy(pos)] if isinstance(x, torch.Tensor) else x[pos]),
                      labels=manifest.array_digest(y_arr[pos]), indices=manifest.array_digest(idx[pos]),
                      isotropic=None if isotropic is None else manifest.array_digest(
                          np.asarray(isotropic, np.float64)[pos]))
        for field in SUBSET_FIELDS:
            if held.get(field) != subset[field]:
                raise ValueError(f"shard {name} ({sf}) was run on other {field} than the run's at its indices "
                                 f"{_few([int(idx[p]) for p in pos], 5)}: its manifest's {field!r} digest differs")
        if manifest.file_digest(sf / "theta.npy") != held[manifest.THETA_HASH]:
            raise ValueError(f"shard {name}: {sf / 'theta.npy'} is not the θ that shard wrote (its SHA-256 differs "
                             f"from the one in {sf / manifest.MANIFEST}); rerun the shard in a fresh folder")
        part = files.load_array(sf / "theta.npy")
        if part.shape != (len(pos), *tuple(x.shape[1:])):
            raise ValueError(f"shard {name}: {sf / 'theta.npy'} holds shape {part.shape}, expected "
                             f"{(len(pos), *tuple(x.shape[1:]))}")
        if theta is None:
            theta = np.empty(tuple(x.shape), dtype=part.dtype)
        theta[pos] = part
        lines += [(position[i], row) for i, row in zip(logged, rows)]
    buf = io.BytesIO()
    np.save(buf, theta)
    theta_bytes = buf.getvalue()
    # the main folder: claimed with the full run's record (refused if it holds another run), then θ and the rows
    stored = manifest.claim(folder, record, RUN_FILES)
    theta_path = folder / "theta.npy"
    if theta_path.exists() and stored is not None and manifest.THETA_HASH in stored:
        if theta_path.read_bytes() != theta_bytes:
            raise ValueError(f"{theta_path} already holds a θ other than the shards' (a run made another way?); "
                             f"delete {folder}'s theta.npy, certify.tsv, final.tsv and run.json to merge")
    if not theta_path.exists() or theta_path.read_bytes() != theta_bytes:
        with files.atomic_file(theta_path, "wb") as fh:
            fh.write(theta_bytes)
    ordered = [row for _, row in sorted(lines)]
    text = "\n".join(["\t".join(columns)] + ordered) + "\n"
    # the shards' rows were verified against their checksums (`logs.read_log`); the merged log gets its own
    logs.write_checksums(folder / "certify.tsv", columns, [row.split("\t") for row in ordered])
    files.write_if_changed(folder / "certify.tsv", text)
    manifest.record_theta(folder, stored, record)
    return run_method(model, x, y, idx, noise, theta0, method, settings, folder, n0, n, alpha, num_classes,
                      batch_size=batch_size, seed=seed, policy=policy, isotropic=isotropic, device=device,
                      precision=precision, draws=draws)


def _short(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def check_slots(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, indices: np.ndarray, noise: str,
                theta0: float, methods: Sequence[str], settings: OptimSettings, folders: Mapping[str, str | Path],
                num_shards: int, n0: int, n: int, alpha: float, num_classes: int, batch_size: int = BATCH_SIZE,
                seed: int = 0, policy: str = SHRINK, device: str | torch.device | None = None, *,
                precision: str = EXACT, draws: str = AUTO) -> None:
    """Refuse, before any shard runs, a folder that `run_methods` in `num_shards` shards and `merge_methods` would
    refuse after the work: a shard folder `shard_folder(folders[method], k, num_shards)` or a run folder
    `folders[method]` that holds another run (its run.json differs from this run's record) or a run's files without
    a run.json. A folder that does not exist yet, or holds this run (to resume or reuse), passes. ANCER's record
    includes the digest of its Isotropic DD start, which is compared only where the start's theta.npy is written
    already. Takes `merge_methods`' arguments.

    Parameters
    ----------
    model, x, y, indices, noise, theta0, methods, settings, folders, n0, n, alpha, num_classes, seed, device
        As `merge_methods`' (the FULL run's inputs).
    num_shards : int
        The number of shards, 1 <= num_shards <= len(x).
    batch_size, policy
        As `merge_methods`'; no manifest records them, so they are not checked.
    precision, draws : str
        As `merge_methods`'.

    Raises
    ------
    ValueError
        Naming the folder, what it holds (the fields that differ, with the held and this run's values) and what to
        do (delete it, or choose another output folder).
    """
    idx = _check_lengths(x, y, indices).astype(np.int64)
    y_arr = np.asarray(y).astype(np.int64)
    # where the tasks will run, without moving the model (it is sent to them as it is)
    resolved = resolve_draws(draws, devices.model_device(model) if device is None else devices.resolve(device))
    ranges = shard_ranges(len(x), num_shards)
    order = methods_in_order(methods)
    missing = [m for m in order if m not in folders]
    if missing:
        raise ValueError(f"folders must name a folder for {missing} (ANCER starts from Isotropic DD's θ)")
    slots = [(None, 0, len(x))] + [(k, a, b) for k, (a, b) in enumerate(ranges)]
    for method in order:
        start = registry.method(method).start
        for k, a, b in slots:
            where = Path(folders[method]) if k is None else shard_folder(folders[method], k, num_shards)
            what = f"the {method} run" if k is None else f"shard {shard_name(k, num_shards)} of the {method} run"
            if not (where / manifest.MANIFEST).exists():
                present = [name for name in RUN_FILES if (where / name).exists()]
                if present:
                    raise ValueError(f"{where} ({what}) holds {', '.join(present)} but no {manifest.MANIFEST}, so "
                                     "what they were computed from is unknown; delete that folder to run it afresh, "
                                     "or choose another output folder")
                continue
            iso, skip = None, set()
            if start is not None:
                start_theta = (Path(folders[start]) if k is None else shard_folder(folders[start], k, num_shards)) \
                    / "theta.npy"
                if start_theta.exists():
                    iso = files.load_array(start_theta)
                else:
                    skip.add("isotropic")
            record = _canonical(run_record(model, x[a:b], y_arr[a:b], idx[a:b], noise, theta0, method, settings, n0,
                                           n, alpha, num_classes, seed, iso, precision=precision, draws=resolved))
            held = _held_record(where, what)
            diff = _differing(held, record, skip)
            if diff:
                shown = "; ".join(f"{f} held {_short(held.get(f))}, this run's {_short(record.get(f))}" for f in diff)
                raise ValueError(f"{where} ({what}) holds another run: its {manifest.MANIFEST} differs in "
                                 f"{', '.join(diff)} ({shown}); delete that folder to run it afresh, or choose "
                                 "another output folder")


def methods_in_order(methods: Sequence[str]) -> list[str]:
    """The methods to run (registered, without a rotation), in the registry's order, with every method one of them
    starts from added (ANCER needs Isotropic DD's θ: `registry.with_starts`).

    Parameters
    ----------
    methods : sequence of str
        Names of registered methods without a rotation (ValueError otherwise).

    Returns
    -------
    list of str
        The methods and their starts, each once, in the registry's order.
    """
    for m in methods:
        if m not in registry.names(rotated=False):
            raise ValueError(f"methods must be among {list(registry.names(rotated=False))}, got {m!r}")
    return registry.with_starts(list(methods))


def run_methods(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, indices: np.ndarray, noise: str,
                theta0: float, methods: Sequence[str], settings: OptimSettings, folders: Mapping[str, str | Path],
                n0: int, n: int, alpha: float, num_classes: int, batch_size: int = BATCH_SIZE, seed: int = 0,
                policy: str = SHRINK, shard: int | None = None, num_shards: int | None = None,
                progress: Callable[[str, int, int], None] | None = None,
                device: str | torch.device | None = None, *, precision: str = EXACT,
                draws: str = AUTO) -> dict[str, pd.DataFrame]:
    """Fixed σ (Cohen et al.'s CERTIFY), Isotropic DD and ANCER (memory: ANCER Algorithm 1) on the same inputs, each
    into its folder `folders[method]`, with ANCER started from Isotropic DD's θ as ANCER §7 (and notebook 03's
    `certify_sigma`) does: Isotropic DD runs first (added when only ANCER is asked), ANCER reads its theta.npy.
    With `shard` and `num_shards`, only that shard runs (`run_shard`; ANCER reads the isotropic shard's θ).
    progress(method, done, total) is called after each certified input; precision, draws: `run_method`'s. Returns
    each method's final.tsv rows.

    Parameters
    ----------
    model, x, y, indices, noise, theta0, settings, n0, n, alpha, num_classes, batch_size, seed, policy, device
        As in `run_method` (x of shape (N, *input_shape), y and indices of shape (N,); with shards, the FULL run's).
    methods : sequence of str
        As in `methods_in_order`.
    folders : mapping of str to str or os.PathLike
        Each method's run folder; every method of `methods_in_order(methods)` needs one (ValueError otherwise).
    shard, num_shards : int, optional
        As in `run_shard`; both or neither (ValueError otherwise). None: the whole run.
    progress : callable, optional
        See above; None: no reports.
    precision, draws : str, optional
        See above.

    Returns
    -------
    dict of str to pandas.DataFrame
        Method name -> its final.tsv rows (columns idx, label, predict, radius, radius_proxy, correct, min_sigma,
        time, gap, p_lower, log_volume, status; the shard's rows only, with a shard), in `methods_in_order` order.
    """
    order = methods_in_order(methods)
    missing = [m for m in order if m not in folders]
    if missing:
        raise ValueError(f"folders must name a folder for {missing} (ANCER starts from Isotropic DD's θ)")
    if (shard is None) != (num_shards is None):
        raise ValueError(f"give both shard and num_shards or neither, got shard={shard!r}, num_shards={num_shards!r}")
    out: dict[str, pd.DataFrame] = {}
    starts: dict[str, np.ndarray] = {}
    for method in order:
        tick = None if progress is None else (lambda done, total, m=method: progress(m, done, total))
        kw = dict(batch_size=batch_size, seed=seed, policy=policy, isotropic=starts.get(registry.method(method).start),
                  progress=tick, device=device, precision=precision, draws=draws)
        if shard is None:
            out[method] = run_method(model, x, y, indices, noise, theta0, method, settings, folders[method], n0, n,
                                     alpha, num_classes, **kw)
            where = Path(folders[method])
        else:
            out[method] = run_shard(model, x, y, indices, noise, theta0, method, settings, folders[method], shard,
                                    num_shards, n0, n, alpha, num_classes, **kw)
            where = shard_folder(folders[method], shard, num_shards)
        if any(registry.method(m).start == method for m in order):
            starts[method] = files.load_array(where / "theta.npy")
    return out


def merge_methods(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, indices: np.ndarray, noise: str,
                  theta0: float, methods: Sequence[str], settings: OptimSettings, folders: Mapping[str, str | Path],
                  num_shards: int, n0: int, n: int, alpha: float, num_classes: int, batch_size: int = BATCH_SIZE,
                  seed: int = 0, policy: str = SHRINK,
                  device: str | torch.device | None = None, *, precision: str = EXACT,
                  draws: str = AUTO) -> dict[str, pd.DataFrame]:
    """`merge` for every method of `run_methods` (Isotropic DD first, then ANCER from the merged Isotropic DD θ):
    the folders then hold what `run_methods` without shards writes. precision, draws: `run_method`'s.

    Parameters
    ----------
    model, x, y, indices, noise, theta0, settings, n0, n, alpha, num_classes, batch_size, seed, policy, device
        As in `merge` (the FULL run's inputs).
    methods, folders : as in `run_methods`
    num_shards : int
        As in `merge`.
    precision, draws : str, optional
        See above.

    Returns
    -------
    dict of str to pandas.DataFrame
        Method name -> its merged run's final.tsv rows (columns idx, label, predict, radius, radius_proxy,
        correct, min_sigma, time, gap, p_lower, log_volume, status), in `methods_in_order` order.
    """
    order = methods_in_order(methods)
    missing = [m for m in order if m not in folders]
    if missing:
        raise ValueError(f"folders must name a folder for {missing} (ANCER starts from Isotropic DD's θ)")
    out: dict[str, pd.DataFrame] = {}
    starts: dict[str, np.ndarray] = {}
    for method in order:
        out[method] = merge(model, x, y, indices, noise, theta0, method, settings, folders[method], num_shards, n0, n,
                            alpha, num_classes, batch_size=batch_size, seed=seed, policy=policy,
                            isotropic=starts.get(registry.method(method).start), device=device,
                            precision=precision, draws=draws)
        if any(registry.method(m).start == method for m in order):
            starts[method] = files.load_array(Path(folders[method]) / "theta.npy")
    return out
