"""Resumable runs of smoothing with rotated noise over a test set, in the layout of `experiment.run_method`: per-input
scales Σ̂ and rotations U, Cohen et al.'s CERTIFY with the noise U (Σ̂ ⊙ z) per input from its own streams
(`rancer.certify_rotated`), then ANCER's Algorithm 1 (the memory) over the rotated ellipsoids (RANCER Eq. 5-6,
`rancer.rotated_memory_step`).

`run_rotated` is the one pipeline: the command line's `certify --method rancer` and notebook 06's RANCER runs
(`run_rancer`: RANCER's Algorithm 1, the input-Hessian rotation and scales clipped around Isotropic DD's σ0,
`rancer.rancer_parameters`) and its matched-objective ablation (other scales and rotations) all go through it.

A run folder holds `theta.npy` (Σ̂, shape (N, n)), `rotations.npy` (U, (N, n, n) float64), `certify.tsv` (one row per
input before the memory, resumable) and `final.tsv` (after it, in input order), guarded by a run.json (`manifest`)
that records what determines them and the SHA-256 of θ and U. The memory needs every input's U at once, so a run is
refused up front when they would take more than `MAX_ROTATION_BYTES`.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch

from ..core import devices, files
from ..core.certify import AUTO, BATCH_SIZE, Smooth
from ..core.memory import POLICIES, SHRINK
from ..core.noise import GAUSSIAN
from ..core.precision import EXACT
from ..core.streams import input_keys
from ..core.validation import check_choice, check_count, check_finite_array, check_path, check_probability
from ..methods.rancer import RancerSettings, certify_rotated, rancer_parameters, rotated_memory_step
from ..models.train import model_fingerprint
from . import logs, manifest
from .experiment import (
    certify_into_log,
    check_certificate_rows,
    check_run_inputs,
    numerics_fields,
    with_decisions,
    write_final,
)

#: the most memory every input's rotation U (N x n x n float64) may take: 8 GiB
MAX_ROTATION_BYTES = 8 * 2 ** 30
RUN_FILES = ("theta.npy", "rotations.npy", "certify.tsv", "final.tsv")
#: the files whose SHA-256 the manifest records once they are written: the parameters
PARAMETER_FILES = ("theta.npy", "rotations.npy")

Parameters = Callable[[], tuple[np.ndarray, np.ndarray]]


def run_rotated(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor | np.ndarray, indices: np.ndarray,
                parameters: Parameters, record: dict, folder: str | Path, n0: int, n: int, alpha: float,
                num_classes: int, batch_size: int = BATCH_SIZE, seed: int = 0, policy: str = SHRINK,
                progress: Callable[[int, int], None] | None = None, device: str | torch.device | None = None,
                max_bytes: int = MAX_ROTATION_BYTES, *, precision: str = EXACT,
                draws: str = AUTO) -> pd.DataFrame:
    """Certify every input with its rotated Gaussian noise, resumably, then ANCER's Algorithm 1 over the rotated
    ellipsoids (RANCER Eq. 5-6) in input order.

    Every argument is checked before the folder is claimed or anything is computed.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier (logits); moved to `device`.
    x : torch.Tensor, shape (N, *input_shape)
    y : array of int, shape (N,)
        Labels in [0, num_classes).
    indices : array of int, shape (N,)
        Distinct dataset indices >= 0: the log's keys and each input's stream key.
    parameters : callable
        () -> (scales (N, n) finite and > 0, rotations (N, n, n) orthogonal), n = prod(input_shape); called only
        when the folder does not hold them yet.
    record : dict
        What determines the parameters (JSON-able: method, settings, digests of their inputs); stored in the folder's
        manifest with the certification's own settings, so that a folder of another run is refused.
    folder : str or os.PathLike
    n0, n : int
        CERTIFY's selection and estimation draws, >= 1.
    alpha : float
        In (0, 1).
    num_classes : int
        >= 2.
    batch_size : int
        Draws per forward pass, >= 1.
    seed : int
        >= 0.
    policy : str
        One of `memory.POLICIES`.
    progress : callable, optional
        progress(done, total) after each certified input.
    device : str or torch.device, optional
        Where the model runs (None: where it is).
    max_bytes : int
        The most memory the rotations may take.
    precision : str
        CERTIFY's forward passes' arithmetic (`precision.PRECISIONS`; `parameters` computes its own, which the caller
        gives with the same setting).
    draws : str
        Where CERTIFY's noise is drawn ("auto", "cpu" or "device", `certify.Smooth`'s); both are recorded in the
        manifest unless exact and CPU (`experiment.numerics_fields`).

    Returns
    -------
    pandas.DataFrame
        One row per input in input order, `run_method`'s final.tsv columns (ANCER's, gap, p_lower, log_volume,
        status).
    """
    check_path(folder, "folder")
    check_count(n0, "n0")
    check_count(n, "n")
    check_probability(alpha, "alpha")
    check_choice(policy, "policy", POLICIES)
    check_count(num_classes, "num_classes", 2)
    check_count(batch_size, "batch_size")
    check_count(seed, "seed", 0)
    check_count(max_bytes, "max_bytes")
    if not callable(parameters):
        raise TypeError(f"parameters must be a callable () -> (scales, rotations), got {type(parameters).__name__}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be None or a callable progress(done, total), got {type(progress).__name__}")
    y_arr, idx = check_run_inputs(x, y, indices, num_classes)
    dim = int(np.prod(tuple(x.shape[1:])))
    need = len(x) * dim * dim * 8
    if need > max_bytes:
        raise ValueError(f"max_bytes: every input's {dim}x{dim} rotation is kept for the memory step (Algorithm 1 over "
                         f"rotated ellipsoids, RANCER Eq. 5-6): {len(x)} inputs need {need:,} bytes "
                         f"({need / 2 ** 30:.3g} GiB), over the {max_bytes:,} allowed; certify fewer inputs "
                         f"(--skip / --max)")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"folder must be a directory (a run folder), got the file {folder}")
    dev = devices.place(model, device)
    smooth = Smooth(model, num_classes, tuple(x.shape[1:]), GAUSSIAN, batch_size=batch_size, seed=seed, device=dev,
                    precision=precision, draws=draws)
    full = dict(record, n0=n0, n=n, alpha=float(alpha), num_classes=num_classes, seed=seed, policy=policy,
                model=model_fingerprint(model), inputs=manifest.array_digest(x),
                labels=manifest.array_digest(y_arr.astype(np.int64)),
                indices=manifest.array_digest(idx.astype(np.int64)), **numerics_fields(smooth.precision, smooth.draws))
    stored = manifest.claim(folder, full, RUN_FILES)
    theta_path, rot_path = folder / "theta.npy", folder / "rotations.npy"
    if theta_path.exists() and rot_path.exists():
        scales, rotations = files.load_array(theta_path), files.load_array(rot_path)
    else:
        scales, rotations = parameters()
        scales, rotations = np.asarray(scales, np.float32), np.asarray(rotations, np.float64)
        if scales.size != len(x) * dim:
            raise ValueError(f"parameters must give scales of shape ({len(x)}, {dim}) (one per input dimension), got "
                             f"{scales.shape}")
        scales = scales.reshape(len(x), dim)
        check_finite_array(scales, "scales", positive=True)
        if rotations.shape != (len(x), dim, dim):
            raise ValueError(f"parameters must give rotations of shape ({len(x)}, {dim}, {dim}), got {rotations.shape}")
        with files.atomic_file(rot_path, "wb") as fh:
            np.save(fh, rotations)
        with files.atomic_file(theta_path, "wb") as fh:
            np.save(fh, scales)
    manifest.record_theta(folder, stored, full, PARAMETER_FILES)
    log_path = folder / "certify.tsv"
    certify_into_log(log_path, y_arr, idx, scales,
                     lambda k, i: certify_rotated(smooth, x[k], scales[k], rotations[k], i, n0, n, alpha, seed), progress)
    base = logs.read_log(log_path).set_index("idx").loc[idx.tolist()].reset_index()
    check_certificate_rows(base, scales, GAUSSIAN, log_path, labels=y_arr)
    decisions = rotated_memory_step(x, base["predict"].to_numpy(np.int64), base["gap"].to_numpy(np.float64), scales,
                                    rotations, policy, full["model"])
    final = with_decisions(base, decisions)
    write_final(folder, final)
    return final


def run_rancer(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, indices: np.ndarray, isotropic: np.ndarray,
               settings: RancerSettings, folder: str | Path, n0: int, n: int, alpha: float, num_classes: int,
               batch_size: int = BATCH_SIZE, seed: int = 0, policy: str = SHRINK,
               progress: Callable[[int, int], None] | None = None, device: str | torch.device | None = None,
               max_bytes: int = MAX_ROTATION_BYTES,
               rotations: tuple[np.ndarray, np.ndarray] | None = None,
               keys: np.ndarray | None = None, *, precision: str = EXACT, draws: str = AUTO) -> pd.DataFrame:
    """RANCER (Algorithm 1 of Rumezhak et al.) on every input through `run_rotated`.

    Parameters
    ----------
    isotropic : numpy.ndarray, shape (N,) or (N, *input_shape)
        The per-input σ0 that centres RANCER's clip (Isotropic DD's θ of the same inputs, `run_method(...,
        "isotropic")`'s theta.npy, whose first value per input is used), finite and > 0.
    settings : RancerSettings
    rotations : (numpy.ndarray, numpy.ndarray), optional
        The inputs' `rancer.hessian_rotations` (U (N, n, n) and eigenvalues (N, n)) when already computed.
    keys : array of int, shape (N,), optional
        The stream keys of RANCER's optimization draws (`rancer.rancer_streams`), recorded in the manifest; default
        `indices`, the keys of CERTIFY's draws. Notebook 06 keys them by the inputs' positions.
    precision, draws : str
        The forward passes' arithmetic and where the noise is drawn, of RANCER's ascent (`rancer.rancer_parameters`)
        and of CERTIFY (`run_rotated`).
    model, x, y, indices, folder, n0, n, alpha, num_classes, batch_size, seed, policy, progress, device, max_bytes
        As `run_rotated`'s.

    Returns
    -------
    pandas.DataFrame
        `run_rotated`'s rows.
    """
    if not isinstance(settings, RancerSettings):
        raise TypeError(f"settings must be a RancerSettings, got {type(settings).__name__}")
    iso = np.asarray(isotropic, np.float64)
    if not len(x) == len(y) == len(indices) == len(iso):
        raise ValueError(f"x, y, indices and isotropic must have one entry per input, got lengths {len(x)}, "
                         f"{len(y)}, {len(indices)} and {len(iso)}")
    check_finite_array(iso, "isotropic", positive=True)
    sigma0 = iso.reshape(len(x), -1)[:, 0]
    keys = np.asarray(indices) if keys is None else np.asarray(input_keys(keys, len(x)))
    record = dict(run="run_rancer", settings=asdict(settings), isotropic=manifest.array_digest(iso),
                  keys=manifest.array_digest(keys.astype(np.int64)))

    def parameters() -> tuple[np.ndarray, np.ndarray]:
        scales, rot, _ = rancer_parameters(model, x, sigma0, settings, seed, rotations=rotations, keys=keys,
                                           device=device, precision=precision, draws=draws)
        return scales, rot

    return run_rotated(model, x, y, indices, parameters, record, folder, n0, n, alpha, num_classes,
                       batch_size=batch_size, seed=seed, policy=policy, progress=progress, device=device,
                       max_bytes=max_bytes, precision=precision, draws=draws)
