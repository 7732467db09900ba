"""Resumable runs of UCAN's Algorithm 1 over a test set: each input's certificate with θ = λ σ(x) and mean μ(x) from
a noise parameter generator (`ucan.certify`, the input's two streams keyed by its index), logged row by row, then
one UCAN Table 1 row's radii and, where σ(x) depends on the input, ANCER's Algorithm 1 (the memory) over the
certified regions.

`run_ucan` is the one certify loop of notebook 07 (`ucan_study.certify_variant`) and of the command line's
`certify-ucan`; `with_memory` is the one way from its rows to the memory, for both.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..core import devices
from ..core.certify import BATCH_SIZE, CPU
from ..core.memory import SHRINK
from ..core.names import NORMS
from ..core.precision import EXACT
from ..core.streams import certify_streams
from ..core.ucan_radii import table1_row
from ..methods import ucan
from ..models.train import model_fingerprint
from . import manifest
from .experiment import apply_memory, numerics_fields
from .logs import ANCER_COLUMNS, ResultLog, logged_indices, read_log

#: the per-input log's columns: ANCER's, then p_A' and the log geometric mean of θ = λ σ(x)
LOG_COLUMNS = ANCER_COLUMNS + ["p_lower", "log_gm_theta"]


def run_ucan(model: torch.nn.Module, npg: torch.nn.Module, noise: str, lam: float, x: torch.Tensor, y: torch.Tensor,
             idx: np.ndarray, n0: int, n: int, alpha: float, num_classes: int, folder: str | Path, identity: dict,
             seed: int = 0, batch_size: int = BATCH_SIZE, device: str | torch.device | None = None,
             a: float | None = None, row: str | None = None, *, precision: str = EXACT,
             draws: str = CPU) -> pd.DataFrame:
    """UCAN Algorithm 1 (`ucan.certify`) on every input, logged to `folder/certify.tsv` and resumed from it.

    Input k draws from its two streams `streams.certify_streams(seed, idx[k])`, so its row does not depend on the
    other inputs, their order or an interruption. The folder's manifest (`runs.manifest`, run.json) records
    `identity`, N0, N, α, the number of classes, the seed, the classifier's and the NPG's weights, the inputs, their
    labels and indices: a folder holding another run is refused (ValueError naming what differs), and a complete
    folder is reused without a write, so a finished results folder may be read-only. The torch threads are the
    caller's.

    Parameters
    ----------
    model : torch.nn.Module
        The classifier (logits).
    npg : torch.nn.Module
        The noise parameter generator x -> (σ(x), μ(x)).
    noise : str
        Its UCAN Table 1 family (`ucan_radii.NOISES`).
    lam : float
        λ, > 0.
    x : torch.Tensor, shape (N, *input_shape)
        The inputs, in [0, 1].
    y : torch.Tensor, shape (N,)
        Their labels.
    idx : numpy.ndarray of int, shape (N,)
        Their dataset indices: stream keys and log rows.
    n0, n : int
        CERTIFY's selection and estimation draws.
    alpha : float
        The Clopper-Pearson level.
    num_classes : int
        The number of classes.
    folder : str or Path
        The run folder.
    identity : dict
        JSON-able: what else determines the run (the notebook's variant, the command line's NPG record), first in
        the manifest.
    seed : int
        The certification seed.
    batch_size : int
        Noise draws per forward batch.
    device : str or torch.device or None
        Where the classifier and the NPG run (`ucan.certify`'s; None: where the classifier is).
    a : float or None
        The power-law exponent (`families.power_law_exponent`; None: d + `families.POWER_LAW_TAIL`).
    row : str or None
        The Table 1 row whose ℓp radius and ALM fill radius and radius_proxy (None: the family's first,
        `ucan.rows_of`); `with_rows` gives every row's.
    precision : str
        The classifier's forward passes' arithmetic (`precision.PRECISIONS`).
    draws : str
        Where the noise is drawn (`certify.DRAWS`, resolved on the classifier's device; `ucan.smoothed_classifier`):
        the manifest records it with the precision unless CPU draws in exact precision (`experiment.numerics_fields`).

    Returns
    -------
    pandas.DataFrame
        One row per input in the order of `idx`, columns `LOG_COLUMNS` (idx, label, predict, radius, radius_proxy,
        correct, min_sigma, time, p_lower, log_gm_theta): min_sigma is min θ, radius and radius_proxy the row's ℓp
        radius and ALM (0 where UCAN abstains).
    """
    d = int(np.prod(tuple(x.shape[1:])))
    row = ucan.rows_of(noise)[0] if row is None else table1_row(row).key
    record = dict(run="ucan", **identity, n0=n0, n=n, alpha=float(alpha), num_classes=num_classes, seed=seed,
                  model=model_fingerprint(model), npg=model_fingerprint(npg), inputs=manifest.array_digest(x),
                  labels=manifest.array_digest(np.asarray(y, np.int64)),
                  indices=manifest.array_digest(np.asarray(idx, np.int64)),
                  **numerics_fields(precision, ucan.noise_draws(noise, draws, devices.resolve(device) if device
                                                                  is not None else devices.model_device(model))))
    manifest.claim(folder, record, ("certify.tsv",))
    log_path = Path(folder) / "certify.tsv"
    order = [int(i) for i in idx]
    if set(order) <= logged_indices(log_path):
        # complete: reused without the writer's lock, so a finished results folder may be read-only
        return read_log(log_path).set_index("idx").loc[order].reset_index()
    with ResultLog(log_path, columns=LOG_COLUMNS) as log:
        for k, i in enumerate(order):
            if i in log.done:
                continue
            t0 = time.perf_counter()
            c = ucan.certify(model, npg, x[k], noise, lam, n0, n, alpha, num_classes, certify_streams(seed, i),
                             batch_size, a, device=device, precision=precision, draws=draws)
            r, alm = ucan.row_radii(row, np.array([c.p_lower]), np.array([c.min_theta]), np.array([c.log_gm_theta]),
                                    d, a)
            log.append(dict(idx=i, label=int(y[k]), predict=c.prediction, radius=float(r[0]),
                            radius_proxy=float(alm[0]), correct=int(c.prediction == int(y[k])),
                            min_sigma=c.min_theta, time=time.perf_counter() - t0, p_lower=c.p_lower,
                            log_gm_theta=c.log_gm_theta))
    return read_log(log_path).set_index("idx").loc[order].reset_index()


def with_rows(df: pd.DataFrame, noise: str, d: int) -> pd.DataFrame:
    """Long table: one row per input and UCAN Table 1 row of `noise`, with its ℓp radius and ALM.

    Parameters
    ----------
    df : pandas.DataFrame
        Per-input rows of `run_ucan` (columns p_lower, min_sigma, log_gm_theta, ...).
    noise : str
        The noise family (`ucan_radii.NOISES`).
    d : int
        The input dimension.

    Returns
    -------
    pandas.DataFrame
        The columns of `df` plus row (the Table 1 row's key), with radius (ℓp radius) and radius_proxy (ALM) of
        that row; len(df) rows per Table 1 row.
    """
    frames = []
    for row in ucan.rows_of(noise):
        r, alm = ucan.row_radii(row, df.p_lower.to_numpy(), df.min_sigma.to_numpy(), df.log_gm_theta.to_numpy(), d)
        frames.append(df.assign(row=row, radius=r, radius_proxy=alm))
    return pd.concat(frames, ignore_index=True)


def with_gap(df: pd.DataFrame, row: str, d: int, a: float | None = None) -> pd.DataFrame:
    """`run_ucan`'s rows with gap: R1 = R(p_A'; λ = 1), the Table 1 row's radius at unit scales (0 where UCAN
    abstains), by which θ(x) scales each region.

    Parameters
    ----------
    df : pandas.DataFrame
        `run_ucan`'s rows (column p_lower).
    row : str
        A Table 1 row.
    d : int
        The input dimension.
    a : float or None
        The power-law exponent, as `run_ucan`'s.

    Returns
    -------
    pandas.DataFrame
        df with the column gap.
    """
    return df.assign(gap=ucan.row_radii(row, df.p_lower.to_numpy(), np.ones(len(df)), np.zeros(len(df)), d, a)[0])


def with_memory(df: pd.DataFrame, npg: torch.nn.Module, lam: float, x: torch.Tensor, row: str,
                policy: str = SHRINK, a: float | None = None) -> pd.DataFrame:
    """ANCER Algorithm 1 (`experiment.apply_memory`) over UCAN's certified regions, in the rows' order.

    Input k's region is {x_k + δ : ||δ ⊘ θ(x_k)||_p <= R1} (UCAN Theorem 3.2) with θ(x) = λ σ(x) and R1 the row's
    radius at λ = 1 (its gap): an ℓ1 or ℓ2 region of ANCER §4-5, which the memory keeps, shrinks or abstains on.

    Parameters
    ----------
    df : pandas.DataFrame
        `run_ucan`'s rows of the inputs x, in x's order (columns predict, label, p_lower, ...).
    npg : torch.nn.Module
        The NPG they were certified with.
    lam : float
        Its λ.
    x : torch.Tensor, shape (N, *input_shape)
        The inputs.
    row : str
        A Table 1 row certifying ℓ1 or ℓ2, of the NPG's noise family.
    policy : str
        One of `memory.POLICIES`.
    a : float or None
        The power-law exponent, as `run_ucan`'s.

    Returns
    -------
    pandas.DataFrame
        df with gap (R1) and, per input, the final predict, radius (ℓp), radius_proxy (ALM), correct and status.

    Raises
    ------
    ValueError
        When the row certifies ℓ∞, whose regions the memory cannot hold.
    """
    norm = table1_row(row).norm
    if norm not in NORMS:
        raise ValueError(f"row {row!r} certifies {norm}: ANCER's memory holds l1 and l2 regions only ({list(NORMS)})")
    thetas = np.stack([(lam * ucan.npg_maps(npg, x[k])[0]).reshape(-1).double().cpu().numpy()
                       for k in range(len(df))])
    return apply_memory(with_gap(df, row, int(np.prod(tuple(x.shape[1:]))), a), x, thetas, norm, policy)
