"""Certifying a test set with a registered smoothing method (`methods.registry`: ANCER §7's Fixed σ, Isotropic DD
and ANCER, and any method without a rotation), resumably: the method's per-input parameters, Cohen et al.'s CERTIFY
with them, then ANCER's memory (Algorithm 1) for the methods that need it.

A run writes into its folder: `theta.npy` (the optimized parameters, written atomically once the
optimization is done), `certify.tsv` (one row per input, before the memory; an interrupted run resumes
from the inputs already there, with per-input seeds so the resumed result is identical) and
`final.tsv` (after Algorithm 1, in input order). Columns are ANCER's (idx label predict radius
radius_proxy correct min_sigma time) plus gap, p_lower, log_volume and, in final.tsv, status.
"""
from __future__ import annotations

import io
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch

from ..core import devices, files
from ..core.certify import AUTO, BATCH_SIZE, CPU, DEVICE, Certificate, Smooth, resolve_draws
from ..core.memory import POLICIES, SHRINK, Provenance, algorithm1
from ..core.names import ABSTAIN, NORM_OF
from ..core.noise import check_noise
from ..core.precision import EXACT, check_precision
from ..core.regions import certified_regions, enclosed_radius, log_volume, noise_gap, proxy_radius
from ..core.streams import certify_streams, input_keys
from ..core.validation import (
    check_choice,
    check_count,
    check_finite_array,
    check_path,
    check_positive,
    check_probability,
    check_real,
)
from ..methods import registry
from ..methods.rancer import RancerSettings, certify_rotated
from ..methods.registry import OptimSettings, SmoothingMethod
from ..models.train import model_fingerprint
from . import code_keys, logs, manifest

EXTRA_COLUMNS = ["gap", "p_lower", "log_volume"]


def code_version() -> str:
    """A short hash of this module's code and every package module it imports (`code_keys.code_version`):
    logs computed by other code are never reused."""
    return code_keys.code_version("runs.experiment")


def numerics_fields(precision: str = EXACT, draws: str = CPU) -> dict:
    """What a run key or run manifest records of the forward passes' precision and of where the noise was drawn:
    `precision` when it is not "exact" and `draws` when the draws were made on the model's device, nothing for
    exact precision with CPU draws (so the keys and manifests of such runs are those made without these settings).

    Parameters
    ----------
    precision : str
        One of `precision.PRECISIONS`.
    draws : str
        Where the draws were made, resolved: "cpu" or "device" (`certify.resolve_draws`).

    Returns
    -------
    dict
        Zero, one or two fields, to add to a key's parts or a manifest's record.
    """
    check_precision(precision)
    if draws == AUTO:
        raise ValueError("draws must be resolved to 'cpu' or 'device' for a key or manifest (certify.resolve_draws "
                         "on the model's device), got 'auto'")
    check_choice(draws, "draws", (CPU, DEVICE))
    fields = {} if precision == EXACT else {"precision": precision}
    return fields if draws == CPU else {**fields, "draws": draws}


def run_key(model_fingerprint: str, settings: "OptimSettings", *, method: str | None = None, precision: str = EXACT,
            draws: str = CPU, **certification: object) -> str:
    """The name of a run's log folder: a hash of everything that determines its result (model weights,
    optimization settings, certification parameters and inputs, and `code_version()`), so a changed
    setting or changed code never reuses stale logs.

    Parameters
    ----------
    model_fingerprint : str
        The base classifier's `model_fingerprint`.
    settings : OptimSettings
    method : str, optional
        The run's method: the key then covers its settings and those of the methods it starts from only
        (`OptimSettings.record`); None: every method's.
    precision : str
        The forward passes' arithmetic (`precision.PRECISIONS`): in the key unless "exact" (`numerics_fields`).
    draws : str
        Where the noise is drawn, resolved ("cpu" or "device"): in the key when "device".
    **certification
        The certification parameters and inputs.

    Returns
    -------
    str
        The key (`code_keys.cache_key`).
    """
    return code_keys.cache_key(code_version(), model=model_fingerprint, settings=settings.record(method),
                               **numerics_fields(precision, draws), **certification)


def check_method_args(noise: str, theta0: float, method: str | SmoothingMethod, settings: OptimSettings, seed: int,
                      settings_name: str = "settings") -> SmoothingMethod:
    """The arguments `optimize_thetas` and `run_method` share (checked before any work, in this order: noise,
    method, then `check_run_args`'); returns the registered method (`registry.method`), which must have no rotation
    (`runs.rancer_runs` certifies those).

    Parameters
    ----------
    noise : str
        One of ANCER's noise families (`noise.NOISES`).
    theta0 : float
        The training scale, finite and > 0.
    method : str or SmoothingMethod
        A registered method's name or the method itself (`registry.method`); ValueError when it has a rotation.
    settings : OptimSettings
        The optimization settings (TypeError otherwise, naming `settings_name`).
    seed : int
        The run's seed, an integer >= 0.
    settings_name : str, optional
        The name `settings` goes by in error messages (default "settings").

    Returns
    -------
    SmoothingMethod
        The registered method, without a rotation.
    """
    check_noise(noise)
    found = registry.method(method)
    if found.rotated:
        raise ValueError(f"method {found.name!r} has rotated parameters: `rancer_runs.run_rancer` certifies it, "
                         f"not run_method (methods here: {list(registry.names(rotated=False))})")
    check_run_args(noise, theta0, settings, seed, settings_name)
    return found


def check_run_args(noise: str, theta0: float, settings: OptimSettings, seed: int,
                   settings_name: str = "settings") -> None:
    """The arguments every method's run and `select_settings` share: noise (a noise family), theta0 (finite, > 0),
    settings (an `OptimSettings`, named `settings_name` in errors) and seed (an integer >= 0).

    Parameters
    ----------
    noise, theta0, settings, seed, settings_name : as in `check_method_args`

    Raises
    ------
    ValueError, TypeError
        Naming the first argument that fails its check.
    """
    check_noise(noise)
    check_positive(check_real(theta0, "theta0"), "theta0")
    if not isinstance(settings, OptimSettings):
        raise TypeError(f"{settings_name} must be an OptimSettings, got {type(settings).__name__} {settings!r}")
    check_count(seed, "seed", 0)


def _check_isotropic(isotropic: np.ndarray | None, x: torch.Tensor) -> None:
    """None, or Isotropic DD's parameters of the inputs: a numpy array of x's shape, finite and > 0."""
    if isotropic is None:
        return
    if not isinstance(isotropic, np.ndarray):
        raise TypeError(f"isotropic must be a numpy array of the inputs' shape {tuple(x.shape)} (an Isotropic DD "
                        f"result of optimize_thetas), got {type(isotropic).__name__}")
    if tuple(isotropic.shape) != tuple(x.shape):
        raise ValueError(f"isotropic must have the inputs' shape {tuple(x.shape)}, got {tuple(isotropic.shape)}")
    check_finite_array(isotropic, "isotropic", positive=True)


def optimize_thetas(model: torch.nn.Module, x: torch.Tensor, noise: str, theta0: float, method: str,
                    settings: OptimSettings, seed: int = 0, isotropic: np.ndarray | None = None,
                    keys: np.ndarray | list[int] | None = None, device: str | torch.device | None = None,
                    rotations: np.ndarray | None = None, *, precision: str = EXACT,
                    draws: str = AUTO) -> np.ndarray:
    """Per-input smoothing parameters of a registered method (`registry.method(method).optimize`), chunk by chunk.

    A method that starts from another's parameters (ANCER from Isotropic DD's, as in ANCER §7) starts from
    `isotropic` when given, or from a fresh run of that method. Each input draws from its own streams
    (`streams.stream(seed, key, purpose)`), so its θ is the same whatever the chunk it is optimized in, the shard
    that optimizes it, and whether its start was computed here or read from a file.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier (logits); moved to `device`.
    x : torch.Tensor, shape (N, *input_shape)
        The inputs.
    noise : str
        One of ANCER's noise families (`noise.NOISES`).
    theta0 : float
        The training scale, finite and > 0.
    method : str
        A registered method without a rotation (`registry.names(rotated=False)`).
    settings : OptimSettings
    seed : int
        >= 0.
    isotropic : numpy.ndarray of shape (N, *input_shape), optional
        The start method's parameters of the inputs (finite, > 0).
    keys : array of int, shape (N,), optional
        The inputs' stream keys (their dataset indices; default 0..N-1).
    device : str or torch.device, optional
        Where the model runs (None: the model's own device, `devices.model_device`).
    rotations : numpy.ndarray of shape (N, n, n), optional
        One orthogonal matrix per input (n = prod(input_shape)), for ANCER's objective with RANCER's rotated noise
        U (θ ⊙ z) (the matched-objective ablation of notebook 06; `optimize.optimize_ancer(rotation=...)`): θ is
        then the scales along U's columns. ANCER only.
    precision : str
        The forward passes' arithmetic, one of `precision.PRECISIONS` ("exact", "tf32", "bf16").
    draws : str
        Where the optimizations' noise is drawn: "cpu", "device" or "auto" ("device" on CUDA), each input from its
        own stream either way (`optimize.input_streams`).

    Returns
    -------
    numpy.ndarray, float32, shape (N, *input_shape)
        Each input's per-dimension scales.
    """
    found = check_method_args(noise, theta0, method, settings, seed)
    check_precision(precision)
    _check_isotropic(isotropic, x)
    if rotations is not None:
        if not isinstance(found, registry.Ancer):
            raise ValueError(f"rotations apply to method 'ancer' only, got method {found.name!r}")
        n = int(np.prod(tuple(x.shape[1:])))
        if np.shape(rotations) != (len(x), n, n):
            raise ValueError(f"rotations must have shape ({len(x)}, {n}, {n}) (one matrix per input), got "
                             f"{np.shape(rotations)}")
    keys = input_keys(keys, len(x))
    out = np.empty(tuple(x.shape), dtype=np.float32)
    dev = devices.place(model, device)
    numerics = dict(precision=precision, draws=resolve_draws(draws, dev))
    for start in range(0, len(x), settings.chunk):
        xb = x[start:start + settings.chunk].to(dev)
        kb = keys[start:start + len(xb)]
        begin = None
        if found.start is not None:
            begin = (torch.from_numpy(isotropic[start:start + len(xb)].copy()) if isotropic is not None else
                     registry.method(found.start).run_optimize(model, xb, noise, theta0, settings, seed, kb, None,
                                                               **numerics))
        extra = {} if rotations is None else {"rotation": torch.from_numpy(
            np.asarray(rotations[start:start + len(xb)], np.float32)).to(dev)}
        out[start:start + len(xb)] = registry.expand(
            found.run_optimize(model, xb, noise, theta0, settings, seed, kb, begin, **numerics, **extra), xb)
    return out


def certify_input(smooth: Smooth, x: torch.Tensor, theta: np.ndarray, key: int, n0: int, n: int, alpha: float,
                  seed: int = 0) -> Certificate:
    """CERTIFY one input with its own theta and its own two streams (`streams.certify_streams(seed, key)`: the
    selection and the estimation draws), so that a resumed, repeated, sharded or reordered run draws exactly the
    same noise for that input.

    Parameters
    ----------
    smooth : Smooth
        The smoothed classifier (model, noise family, number of classes, batch size, numerics).
    x : torch.Tensor, shape input_shape
        One input, without a batch dimension.
    theta : numpy.ndarray, float32, shape input_shape (or one scale per dimension)
        The input's per-dimension scales; converted with `torch.from_numpy`.
    key : int
        The input's stream key (its dataset index).
    n0, n : int
        CERTIFY's selection and estimation draws, >= 1.
    alpha : float
        The failure probability, in (0, 1).
    seed : int, optional
        The run's seed (>= 0), which with `key` fixes the input's streams.

    Returns
    -------
    Certificate
        The input's prediction (ABSTAIN, -1, when p_lower <= 1/2), p_lower, gap, radius, radius_proxy,
        log_volume, count and n.
    """
    return smooth.certify(x, torch.from_numpy(theta), n0, n, alpha, generator=certify_streams(seed, key))


#: the fields of a `run_record` that describe which inputs a run certified (a shard's differ from its full run's)
SUBSET_FIELDS = ("inputs", "labels", "indices", "isotropic")


def run_record(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor | np.ndarray, indices: np.ndarray | list[int],
               noise: str, theta0: float, method: str, settings: OptimSettings, n0: int, n: int, alpha: float,
               num_classes: int, seed: int = 0, isotropic: np.ndarray | None = None, *, precision: str = EXACT,
               draws: str = CPU) -> dict:
    """The manifest record (`manifest.claim`) of a `run_method` call with these arguments: the method, noise, θ0,
    settings, Cohen et al.'s CERTIFY parameters (N0, N, α), the number of classes, the seed, the model's fingerprint
    and the SHA-256 digests of the inputs, labels, indices and of ANCER's Isotropic DD start (`SUBSET_FIELDS`), and
    the precision and draws (resolved: "cpu" or "device") where they are not exact and CPU (`numerics_fields`).
    `shards.merge` writes exactly this record for a merged run, so its folder is the one `run_method` would have
    written. The arguments are taken as given (run_method checks them first).

    Parameters
    ----------
    model, x, y, indices, noise, theta0, method, settings, n0, n, alpha, num_classes, seed, isotropic
        As in `run_method`.
    precision : str, optional
        As in `run_method`; recorded unless "exact".
    draws : str, optional
        Where the draws were made, resolved ("cpu" or "device"; "auto" is refused by `numerics_fields`); recorded
        when "device".

    Returns
    -------
    dict
        Keys run ("run_method"), method, method_spec, noise, theta0, settings, n0, n, alpha, num_classes, seed,
        model, inputs, labels, indices, isotropic (None without a start) and, where they apply, precision and
        draws.
    """
    y_arr, idx_arr = np.asarray(y), np.asarray(indices)
    found = registry.method(method)
    return dict(run="run_method", method=found.name, method_spec=repr(found), noise=noise, theta0=float(theta0),
                settings=settings.record(found.name),
                n0=n0, n=n, alpha=float(alpha), num_classes=num_classes, seed=seed, model=model_fingerprint(model),
                inputs=manifest.array_digest(x), labels=manifest.array_digest(y_arr.astype(np.int64)),
                indices=manifest.array_digest(idx_arr.astype(np.int64)),
                isotropic=None if isotropic is None else manifest.array_digest(np.asarray(isotropic, np.float64)),
                **numerics_fields(precision, draws))


def check_run_inputs(x: torch.Tensor, y: torch.Tensor | np.ndarray, indices: np.ndarray | list[int],
                     num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The inputs of a run, checked before any work: one label and one dataset index per input of x.

    Parameters
    ----------
    x : torch.Tensor, shape (N, *input_shape)
    y : tensor or array of int, shape (N,)
        Class labels in [0, num_classes).
    indices : array of int, shape (N,)
        Distinct integers >= 0: the inputs' positions in their dataset, which key the log's rows and the streams.
    num_classes : int

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        y and indices as arrays.
    """
    idx_arr = np.asarray(indices)
    if idx_arr.ndim != 1 or not np.issubdtype(idx_arr.dtype, np.integer) or (idx_arr < 0).any():
        raise ValueError(f"indices must be a 1-D array of integers >= 0 (the inputs' positions in their dataset), "
                         f"got {indices!r}")
    y_arr = np.asarray(y)
    if not (np.issubdtype(y_arr.dtype, np.integer) and (y_arr >= 0).all() and (y_arr < num_classes).all()):
        raise ValueError(f"y must hold integer class labels in [0, num_classes = {num_classes}), got {y!r}")
    if not (len(x) == len(y) == len(idx_arr)):
        raise ValueError(f"x, y and indices must have one entry per input, got lengths {len(x)}, {len(y)} and "
                         f"{len(idx_arr)}")
    repeated = len(idx_arr) - len(np.unique(idx_arr))
    if repeated:
        raise ValueError(f"indices must be distinct (they key the log's rows), got {len(idx_arr)} indices with "
                         f"{repeated} repeated")
    return y_arr, idx_arr


def run_method(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, indices: np.ndarray, noise: str,
               theta0: float, method: str, settings: OptimSettings, folder: str | Path, n0: int, n: int,
               alpha: float, num_classes: int, batch_size: int = BATCH_SIZE, seed: int = 0,
               policy: str = SHRINK, isotropic: np.ndarray | None = None,
               progress: Callable[[int, int], None] | None = None,
               device: str | torch.device | None = None, *, precision: str = EXACT,
               draws: str = AUTO) -> pd.DataFrame:
    """Optimize (if needed), certify every input (resuming from certify.tsv), apply Algorithm 1 for the
    methods with a memory (`SmoothingMethod.memory`), write final.tsv and return it as a DataFrame. For a method
    with a `start` (ANCER), `isotropic` passes the start method's parameters of the same inputs.

    Every argument is checked before the folder is created or anything is written. The certificates do not depend
    on the batch size, the optimization chunk or the other inputs of the run (each input's noise comes from its own
    streams), so a run split into shards by index (`shards`) merges into this run's logs.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier (logits); moved to `device`.
    x : torch.Tensor, shape (N, *input_shape)
        The inputs.
    y : torch.Tensor or array of int, shape (N,)
        Integer labels in [0, num_classes), one per input.
    indices : array of int, shape (N,)
        Distinct integers >= 0, one per input: their dataset indices (each input's stream key, `streams`, and the
        log's row key).
    noise, theta0, method, settings, seed, isotropic : as in `optimize_thetas`
        noise a noise family; theta0 finite, > 0; settings an OptimSettings; seed an integer >= 0; isotropic of
        shape (N, *input_shape) or None (a fresh run of the start method).
    folder : str or os.PathLike
        The run folder (theta.npy, certify.tsv, final.tsv and the manifest).
    n0, n : int
        CERTIFY's selection and estimation draws, integers >= 1.
    alpha : float
        CERTIFY's failure probability, in (0, 1).
    num_classes : int
        >= 2, as in `Smooth`.
    batch_size : int, optional
        Noisy copies per forward pass, >= 1, as in `Smooth`.
    policy : str, optional
        Algorithm 1's policy, one of memory.POLICIES ("shrink", the default, or "abstain").
    progress : callable, optional
        `progress(done, total)` after each input certified in this call; None: no reports.
    device : str or torch.device, optional
        Where the model runs (None: where it is; "auto": CUDA when available); the model is moved there.
    precision : str, optional
        The forward passes' arithmetic of the optimization and CERTIFY (`precision.PRECISIONS`).
    draws : str, optional
        Where their noise is drawn ("auto", "cpu" or "device", `certify.Smooth`'s). Precision and draws are
        recorded in the folder's manifest unless exact and CPU (`numerics_fields`).

    Returns
    -------
    pandas.DataFrame
        final.tsv: one row per input, in the order of `indices`, with columns idx, label, predict, radius,
        radius_proxy, correct, min_sigma, time, gap, p_lower, log_volume and status (the memory decision's:
        kept, shrunk, abstain_base, abstain_inside or abstain_intersect; "no_memory" for a method without one).
    """
    found = check_method_args(noise, theta0, method, settings, seed)
    check_choice(policy, "policy", POLICIES)
    check_path(folder, "folder")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be None or a callable progress(done, total), got {type(progress).__name__} "
                        f"{progress!r}")
    check_count(n0, "n0")
    check_count(n, "n")
    check_probability(alpha, "alpha")
    _check_isotropic(isotropic, x)
    y_arr, idx_arr = check_run_inputs(x, y, indices, num_classes)
    dev = devices.place(model, device)
    # built before the folder is made: it checks model, num_classes, batch_size and seed
    smooth = Smooth(model, num_classes, tuple(x.shape[1:]), noise, batch_size=batch_size, seed=seed, device=dev,
                    precision=precision, draws=draws)
    folder = Path(folder)
    # the folder's manifest: a folder holding another run (other inputs, labels, indices, model, settings, N, α,
    # seed or starting point) or a replaced θ is refused instead of returning its old certificates
    record = run_record(model, x, y_arr, idx_arr, noise, theta0, method, settings, n0, n, alpha, num_classes, seed,
                        isotropic, precision=smooth.precision, draws=smooth.draws)
    stored = manifest.claim(folder, record, ("theta.npy", "certify.tsv", "final.tsv"))
    theta_path = folder / "theta.npy"
    if theta_path.exists():
        thetas = files.load_array(theta_path)
        if thetas.shape != tuple(x.shape):
            raise ValueError(f"{theta_path} holds shape {thetas.shape}, expected {tuple(x.shape)}: delete the run folder")
    else:
        thetas = optimize_thetas(model, x, noise, theta0, method, settings, seed, isotropic, keys=idx_arr, device=dev,
                                 precision=smooth.precision, draws=smooth.draws)
        with files.atomic_file(theta_path, "wb") as fh:
            np.save(fh, thetas)
    manifest.record_theta(folder, stored, record)
    norm = NORM_OF[noise]
    certify_into_log(folder / "certify.tsv", y_arr, idx_arr, thetas,
                     lambda k, idx: certify_input(smooth, x[k], thetas[k], idx, n0, n, alpha, seed), progress)
    base = logs.read_log(folder / "certify.tsv").set_index("idx").loc[[int(i) for i in indices]].reset_index()
    check_certificate_rows(base, thetas, noise, folder / "certify.tsv", labels=y_arr)
    provenance = Provenance(model=record["model"], noise=noise, norm=norm, sigma=float(theta0))
    final = (apply_memory(base, x, thetas, norm, policy, provenance) if found.memory
             else base.assign(status="no_memory"))
    write_final(folder, final)
    return final


def certify_into_log(log_path: Path, y: np.ndarray, indices: np.ndarray, thetas: np.ndarray,
                     certify_one: Callable[[int, int], Certificate],
                     progress: Callable[[int, int], None] | None = None) -> None:
    """The resumable CERTIFY loop of a run (`run_method`, `rancer_runs.run_rancer`): one row of ANCER's log columns
    (plus gap, p_lower, log_volume) per input k not yet in `log_path`, from `certify_one(k, index)`; inputs already
    logged are skipped, and a complete log is not opened for writing (a finished run folder may be read-only).
    y: the labels; indices: the inputs' dataset indices (the log's keys); thetas: the per-input scales (min_sigma).

    Parameters
    ----------
    log_path : pathlib.Path
        The log (certify.tsv), created when missing and appended to.
    y : numpy.ndarray of int, shape (N,)
        The inputs' labels.
    indices : numpy.ndarray of int, shape (N,)
        The inputs' dataset indices (the log's keys).
    thetas : numpy.ndarray, shape (N, *input_shape) or (N, n)
        The per-input scales; each row's minimum is logged as min_sigma.
    certify_one : callable
        `certify_one(k, index)` -> Certificate of input k (position in `indices`) with dataset index `index`.
    progress : callable, optional
        `progress(k + 1, N)` after input k is certified here (skipped inputs do not report); None: no reports.
    """
    if set(np.asarray(indices).tolist()) <= logs.logged_indices(log_path):
        return
    with logs.ResultLog(log_path, columns=logs.ANCER_COLUMNS + EXTRA_COLUMNS) as log:
        for k in range(len(indices)):
            idx = int(indices[k])
            if idx in log.done:
                continue
            t0 = time.perf_counter()
            cert = certify_one(k, idx)
            log.append(dict(idx=idx, label=int(y[k]), predict=cert.prediction, radius=cert.radius,
                            radius_proxy=cert.radius_proxy, correct=int(cert.prediction == int(y[k])),
                            min_sigma=float(np.min(thetas[k])), time=time.perf_counter() - t0, gap=cert.gap,
                            p_lower=cert.p_lower, log_volume=cert.log_volume))
            if progress is not None:
                progress(k + 1, len(indices))


def check_certificate_rows(base: pd.DataFrame, thetas: np.ndarray, noise: str, source: str | Path,
                           labels: np.ndarray | None = None) -> pd.DataFrame:
    """Check that a certification log read back states the certificates its numbers imply: each row's gap is its
    noise family's gap of its p_lower (`regions.noise_gap`: 0, with the prediction ABSTAIN, where p_lower <= 1/2),
    its radius the enclosed radius gap · min θ (ANCER §5; the same for RANCER's rotated ellipsoids), its proxy radius
    gap · (∏ θ)^(1/n), its log_volume the log of its region's volume (`regions.log_volume`) and its min_sigma min θ,
    for the θ the run certified with; its `correct` is predict == label and, given `labels`, its label the input's.
    Well-formed rows whose numbers were edited fail here instead of being published (the predicted class, which
    cannot be recomputed, is checked against the checksums its writer recorded: `logs.read_log`).

    Parameters
    ----------
    base : pandas.DataFrame
        The log's rows (`logs.read_log`), one per input, in the order of `thetas`.
    thetas : numpy.ndarray, shape (N, *input_shape) or (N, n)
        The scales each input was certified with.
    noise : str
        The noise family CERTIFY sampled.
    source : str or Path
        The log, named in the error.
    labels : numpy.ndarray of int, shape (N,), optional
        The inputs' labels in the dataset, in the order of `thetas`.

    Returns
    -------
    pandas.DataFrame
        `base`, unchanged.

    Raises
    ------
    ValueError
        Naming `source`, the first disagreeing input's idx, the column and the two values.
    """
    needed = ["idx", "label", "predict", "correct", "radius", "radius_proxy", "min_sigma", "gap", "p_lower"]
    missing = [c for c in needed if c not in base.columns]
    if missing:
        raise ValueError(f"{source}: the log has no column(s) {missing} (expected {needed + ['log_volume']}): it was "
                         "edited or written by another program; delete its run folder to certify again")
    if labels is not None:
        want_labels = np.asarray(labels, np.int64).reshape(-1)
        got_labels = base["label"].to_numpy(np.int64)
        wrong = got_labels != want_labels
        if wrong.any():
            k = int(np.flatnonzero(wrong)[0])
            raise ValueError(f"{source}: the row of idx {int(base['idx'].iloc[k])} holds label {int(got_labels[k])}, "
                             f"where the dataset's label of that input is {int(want_labels[k])}: the log was edited or "
                             "corrupted; delete its run folder to certify again")
    correct = base["correct"].to_numpy(bool)
    agrees = base["predict"].to_numpy(np.int64) == base["label"].to_numpy(np.int64)
    if (correct != agrees).any():
        k = int(np.flatnonzero(correct != agrees)[0])
        raise ValueError(f"{source}: the row of idx {int(base['idx'].iloc[k])} holds correct {bool(correct[k])} with "
                         f"predict {int(base['predict'].iloc[k])} and label {int(base['label'].iloc[k])}: correct must "
                         "be predict == label; the log was edited or corrupted; delete its run folder to certify again")
    th = np.asarray(thetas, np.float64).reshape(len(base), -1)
    p = base["p_lower"].to_numpy(np.float64)
    gap = np.asarray(noise_gap(p, noise), np.float64)
    expected = {"gap": gap, "radius": enclosed_radius(th, gap, NORM_OF[noise]), "radius_proxy": proxy_radius(th, gap),
                "min_sigma": th.min(axis=1)}
    if "log_volume" in base.columns:
        expected["log_volume"] = log_volume(th, gap, NORM_OF[noise])
    abstains = base["predict"].to_numpy() == ABSTAIN
    bad = abstains != (gap == 0)
    for column, want in expected.items():
        got = base[column].to_numpy(np.float64)
        wrong = ~np.isclose(got, want, rtol=1e-9, atol=1e-12)
        if (wrong | bad).any():
            k = int(np.flatnonzero(wrong | bad)[0])
            what = (f"predict {base['predict'].iloc[k]} with p_lower {float(p[k])!r}" if bad[k]
                    else f"{column} {float(got[k])!r}, where its p_lower {float(p[k])!r} and θ give "
                         f"{float(want[k])!r}")
            raise ValueError(f"{source}: the row of idx {int(base['idx'].iloc[k])} holds {what}: the log was edited or "
                             "corrupted; delete its run folder to certify again")
    return base


def apply_memory(base: pd.DataFrame, x: torch.Tensor, thetas: np.ndarray, norm: str, policy: str = SHRINK,
                 provenance: Provenance | None = None) -> pd.DataFrame:
    """Algorithm 1 over the certified inputs in their order: radius and proxy radius of each input become
    those of its final region (0 when it abstains). provenance: where the regions came from (`memory.Provenance`;
    `run_method` passes its model, noise, norm and θ0), recorded on the memory, which refuses regions of another.

    Parameters
    ----------
    base : pandas.DataFrame
        The certification log's rows (certify.tsv columns; gap, predict and label used), one per input, in the order
        of `x`.
    x : torch.Tensor, shape (N, *input_shape)
        The inputs, the regions' centres.
    thetas : numpy.ndarray, shape (N, *input_shape) or (N, n)
        The scales each input was certified with.
    norm : str
        The regions' norm, "l1" or "l2" (`names.NORM_OF[noise]`).
    policy : str, optional
        One of memory.POLICIES ("shrink", the default, or "abstain").
    provenance : Provenance, optional
        See above; None: unchecked.

    Returns
    -------
    pandas.DataFrame
        `with_decisions(base, ...)`: base's rows and columns with predict, radius, radius_proxy and correct
        replaced and a status column added.
    """
    regions = certified_regions(x, thetas, base["gap"].to_numpy(np.float64), base["predict"].to_numpy(np.int64), norm)
    return with_decisions(base, algorithm1(regions, policy, provenance=provenance))


def with_decisions(base: pd.DataFrame, decisions: list) -> pd.DataFrame:
    """The log rows `base` (one per input, in the memory's order) after Algorithm 1: each input's prediction, radius
    and proxy radius become those of its memory decision (`memory.Decision`), correct is recomputed and the
    decision's status added.

    Parameters
    ----------
    base : pandas.DataFrame
        The log rows, with a label column (other columns kept as they are), one per input.
    decisions : list of Decision
        Algorithm 1's decisions (`memory.algorithm1`), one per row of `base`, in the same order.

    Returns
    -------
    pandas.DataFrame
        A copy of `base` with predict, radius, radius_proxy and correct (bool) replaced and a status column
        (kept, shrunk, abstain_base, abstain_inside or abstain_intersect) added.
    """
    out = base.copy()
    out["predict"] = [d.prediction for d in decisions]
    out["radius"] = [d.radius for d in decisions]
    out["radius_proxy"] = [d.radius_proxy for d in decisions]
    out["correct"] = out["predict"].to_numpy() == out["label"].to_numpy()
    out["status"] = [d.status for d in decisions]
    return out


def write_final(folder: Path, final: pd.DataFrame) -> None:
    """`folder/final.tsv`: the run's rows after the memory, tab-separated, rewritten only when its text changes (a
    complete read-only run folder is reused as it is).

    Parameters
    ----------
    folder : pathlib.Path
        The run folder.
    final : pandas.DataFrame
        The rows to write, all columns, without the index.
    """
    buf = io.StringIO()
    final.to_csv(buf, sep="\t", index=False)
    files.write_if_changed(Path(folder) / "final.tsv", buf.getvalue())



def certify_all(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, thetas: np.ndarray, noise: str,
                n0: int, n: int, alpha: float, num_classes: int, seed: int = 0,
                batch_size: int = BATCH_SIZE, device: str | torch.device | None = None,
                rotations: np.ndarray | None = None, *, precision: str = EXACT, draws: str = AUTO) -> pd.DataFrame:
    """CERTIFY every input with its own parameters, without memory or log: the validation-split loop of every
    selection (`selection.select_settings`, `selection.select_rancer`). Input k draws from its streams with key k.

    Parameters
    ----------
    model : torch.nn.Module
    x : torch.Tensor, shape (N, *input_shape)
    y : tensor or array of int, shape (N,)
    thetas : numpy.ndarray, shape (N, *input_shape) or, with rotations, (N, n)
        Each input's scales (along U's columns when rotated).
    noise : str
    n0, n, alpha, num_classes, seed, batch_size, device
        As `run_method`'s.
    rotations : numpy.ndarray, shape (N, n, n), optional
        Each input's rotation U (RANCER's noise U (θ ⊙ z), `rancer.certify_rotated`).
    precision, draws : str
        As `run_method`'s (`certify.Smooth`'s).

    Returns
    -------
    pandas.DataFrame
        One row per input: predict, label, correct, radius, radius_proxy, gap.
    """
    if not len(x) == len(y) == len(thetas):
        raise ValueError(f"x, y and thetas must have one entry per input, got lengths {len(x)}, {len(y)} and "
                         f"{len(thetas)}")
    if rotations is not None and len(rotations) != len(x):
        raise ValueError(f"rotations must hold one matrix per input ({len(x)}), got {len(rotations)}")
    dev = devices.place(model, device)
    smooth = Smooth(model, num_classes, tuple(x.shape[1:]), noise, batch_size=batch_size, seed=seed, device=dev,
                    precision=precision, draws=draws)
    rows = []
    for k in range(len(x)):
        c = (certify_input(smooth, x[k], thetas[k], k, n0, n, alpha, seed) if rotations is None
             else certify_rotated(smooth, x[k], thetas[k], rotations[k], k, n0, n, alpha, seed))
        rows.append(dict(predict=c.prediction, label=int(y[k]), correct=c.prediction == int(y[k]),
                         radius=c.radius, radius_proxy=c.radius_proxy, gap=c.gap))
    return pd.DataFrame(rows)


def rancer_key(model_fingerprint: str, settings: RancerSettings, *, precision: str = EXACT, draws: str = CPU,
               **certification: object) -> str:
    """A hash of everything that determines a RANCER run or selection (model weights, settings,
    certification parameters and inputs, and the code of `rancer` and every package module it imports:
    `code_keys`), naming its cached results so that changed code or settings never reuse them.

    Parameters
    ----------
    model_fingerprint : str
        The base classifier's `model_fingerprint`.
    settings : RancerSettings
    precision, draws : str
        As `run_key`'s: in the key unless exact and "cpu" (`numerics_fields`).
    **certification
        The certification parameters and inputs.

    Returns
    -------
    str
        The key (`code_keys.cache_key`).
    """
    return code_keys.cache_key(code_keys.code_version("methods.rancer"), model=model_fingerprint,
                               settings=asdict(settings), **numerics_fields(precision, draws), **certification)
