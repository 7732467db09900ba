"""A resumable RANCER run over a test set (the command line's `certify --method rancer`), in the layout of
`experiment.run_method`: RANCER's Algorithm 1 (the input-Hessian rotation U and per-axis scales Σ̂ clipped around
Isotropic DD's σ0, `methods.rancer.rancer_parameters`), Cohen et al.'s CERTIFY with the rotated noise U (Σ̂ ⊙ z)
per input from its own streams (`rancer.certify_rotated`), then ANCER's Algorithm 1 (the memory) over the rotated
ellipsoids (RANCER Eq. 5-6, `rotated_memory.certify_stream_rotated`), exactly as `rancer.certify_rancer` does.

The folder holds `theta.npy` (Σ̂, shape (N, n)), `rotations.npy` (U, (N, n, n) float64), `certify.tsv` (one row
per input before the memory, resumable) and `final.tsv` (after it, in input order), guarded by a run.json
(`manifest`). The memory needs every input's U at once, so the run is refused up front when they would take more
than `MAX_ROTATION_BYTES`.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch

from ..core import devices, files
from ..core.certify import BATCH_SIZE, Smooth
from ..core.memory import POLICIES, SHRINK
from ..core.noise import GAUSSIAN
from ..core.validation import check_choice, check_count, check_path, check_probability
from ..methods.rancer import RancerSettings, certify_rotated, rancer_parameters, rotated_memory_step
from ..models.train import model_fingerprint
from . import logs, manifest
from .experiment import certify_into_log, with_decisions, write_final

#: the most memory every input's rotation U (N x n x n float64) may take: 8 GiB
MAX_ROTATION_BYTES = 8 * 2 ** 30
RUN_FILES = ("theta.npy", "rotations.npy", "certify.tsv", "final.tsv")


def run_rancer(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, indices: np.ndarray, isotropic: np.ndarray,
               settings: RancerSettings, folder: str | Path, n0: int, n: int, alpha: float, num_classes: int,
               batch_size: int = BATCH_SIZE, seed: int = 0, policy: str = SHRINK,
               progress: Callable[[int, int], None] | None = None, device: str | torch.device | None = None,
               max_bytes: int = MAX_ROTATION_BYTES) -> pd.DataFrame:
    """RANCER (Algorithm 1 of Rumezhak et al.) on every input, CERTIFY per input resumably (certify.tsv), then
    Algorithm 1 of ANCER over the rotated ellipsoids in input order (final.tsv, returned). isotropic: Isotropic DD's
    θ of the same inputs (`run_method(..., "isotropic")`'s theta.npy), whose per-input σ0 centres RANCER's clip;
    indices: the inputs' dataset indices (their streams' keys); device: where the model runs (None: where it is).
    Columns as `run_method`'s final.tsv (ANCER's, gap, p_lower, log_volume, status)."""
    if not isinstance(settings, RancerSettings):
        raise TypeError(f"settings must be a RancerSettings, got {type(settings).__name__}")
    check_path(folder, "folder")
    check_count(n0, "n0")
    check_count(n, "n")
    check_probability(alpha, "alpha")
    check_choice(policy, "policy", POLICIES)
    idx = np.asarray(indices).astype(np.int64)
    y_arr = np.asarray(y).astype(np.int64)
    if not (len(x) == len(y_arr) == len(idx) == len(isotropic)):
        raise ValueError(f"x, y, indices and isotropic must have one entry per input, got lengths {len(x)}, "
                         f"{len(y_arr)}, {len(idx)} and {len(isotropic)}")
    dim = int(np.prod(tuple(x.shape[1:])))
    need = len(x) * dim * dim * 8
    if need > max_bytes:
        raise ValueError(f"RANCER keeps every input's {dim}x{dim} rotation for its memory step (Algorithm 1 over "
                         f"rotated ellipsoids, RANCER Eq. 5-6): {len(x)} inputs need {need / 2 ** 30:.1f} GiB, over "
                         f"the {max_bytes / 2 ** 30:.1f} GiB allowed; certify fewer inputs (--skip / --max)")
    dev = devices.place(model, device)
    folder = Path(folder)
    iso = np.asarray(isotropic, np.float64)
    record = dict(run="run_rancer", settings=asdict(settings), n0=n0, n=n, alpha=float(alpha),
                  num_classes=num_classes, seed=seed, policy=policy, model=model_fingerprint(model),
                  inputs=manifest.array_digest(x), labels=manifest.array_digest(y_arr),
                  indices=manifest.array_digest(idx), isotropic=manifest.array_digest(iso))
    stored = manifest.claim(folder, record, RUN_FILES)
    theta_path, rot_path = folder / "theta.npy", folder / "rotations.npy"
    if theta_path.exists() and rot_path.exists():
        scales, rotations = files.load_array(theta_path), files.load_array(rot_path)
    else:
        sigma0 = iso.reshape(len(x), -1)[:, 0]
        scales, rotations, _ = rancer_parameters(model, x, sigma0, settings, seed, keys=idx)
        with files.atomic_file(rot_path, "wb") as fh:
            np.save(fh, rotations)
        with files.atomic_file(theta_path, "wb") as fh:
            np.save(fh, scales)
    manifest.record_theta(folder, stored, record)
    smooth = Smooth(model, num_classes, tuple(x.shape[1:]), GAUSSIAN, batch_size=batch_size, seed=seed, device=dev)
    log_path = folder / "certify.tsv"
    certify_into_log(log_path, y_arr, idx, scales,
                     lambda k, i: certify_rotated(smooth, x[k], scales[k], rotations[k], i, n0, n, alpha, seed), progress)
    base = logs.read_log(log_path).set_index("idx").loc[idx.tolist()].reset_index()
    decisions = rotated_memory_step(x, base["predict"].to_numpy(np.int64), base["gap"].to_numpy(np.float64), scales,
                                    rotations, policy, record["model"])
    final = with_decisions(base, decisions)
    write_final(folder, final)
    return final
