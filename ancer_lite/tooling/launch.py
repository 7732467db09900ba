"""Certifying notebook 03's test set over many GPUs: one job array task per shard
on SLURM (submitit's `AutoExecutor`, one GPU per task) or on this machine (submitit's `LocalExecutor`), then a
merge into the run folders notebook 03 reads.

An `ExperimentJob` is one (setup, norm, σ) of a profile's notebook-03 experiment: the same data, models, step
sizes (`image_study.choose_norm`, chosen once on the validation split, guarded by a lock so that concurrent shards
do not all compute it) and run folders (`image_study.run_folder`) as the notebook's `certify_sigma`. Shard k of K
certifies its inputs with Fixed σ (Cohen et al.'s CERTIFY), Isotropic DD and ANCER (from the shard's Isotropic DD
θ) into `<run folder>/shards/<k>-of-<K>/` (`runs.shards`); the merge writes each run folder as `certify_sigma`
would have (ANCER Algorithm 1, the memory, over the merged certificates in test order), so the notebook then finds
complete folders and reuses them. A task that is killed, preempted or timed out resumes from its shard's
certify.tsv when it runs again (submitit requeues a `Checkpointable` task on preemption or timeout; re-running
the same shard by hand does the same).

Before anything is submitted, `estimate` measures seconds per input on a few inputs on this machine's device and
multiplies by the inputs, the σ and the methods (`Estimate.describe` says how).
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import submitit
import torch

from ..core import devices, files
from ..core.certify import Smooth
from ..core.names import NOISE_OF
from ..core.reproducibility import torch_threads
from ..methods import registry
from ..methods.registry import ISOTROPIC, OptimSettings
from ..models.data import DATA_DIR
from ..runs import shards
from ..runs.experiment import certify_input, optimize_thetas
from ..runs.profiles import ImageSetup, Profile
from ..runs.setups import Workload, prepare, sigmas_of, theta_of
from ..studies import image_study
from .tasks import RunShardTask

#: the cluster kinds `submit` knows: SLURM through submitit's AutoExecutor, or processes on this machine
CLUSTERS = ("slurm", "local")


@dataclass
class ExperimentJob:
    """One (setup, norm, σ) of a profile's notebook-03 experiment (ANCER §7.1-7.2): its three runs (Fixed σ,
    Isotropic DD, ANCER) over the setup's test inputs, in the folders `image_study.run_folder` names under
    `results` (notebook 03 reads `data/results/<profile>/`). device: where the models run; precision: the forward
    passes' arithmetic (`precision.PRECISIONS`); draws: where the noise is drawn (`certify.DRAWS`); each None for
    the profile's setting (the run folders' keys record precision and draws unless exact and CPU). Picklable (submitit sends it to the tasks): the data
    and models are loaded on first use in the process that runs it."""
    profile: Profile
    setup: ImageSetup
    norm: str
    sigma: float
    results: str
    data_dir: str = str(DATA_DIR)
    seed: int = 0
    device: str | None = None
    precision: str | None = None
    draws: str | None = None
    _work: Workload | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        norms = image_study.norms_of(self.setup)
        if self.norm not in norms:
            raise ValueError(f"norm must be one of setup {self.setup.name!r}'s norms {norms}, got {self.norm!r}")
        grid = sigmas_of(self.setup)[self.norm]
        if self.sigma not in grid:
            raise ValueError(f"sigma must be one of setup {self.setup.name!r}'s {self.norm} noise levels "
                             f"{list(grid)}, got {self.sigma!r}")
        # where the selection and the runs put the models (`image_study` reads the profile's setting); None: the
        # profile's own (quick: the CPU, whose numbers are the same bit for bit on every machine; paper: "auto")
        if self.device is None:
            self.device = self.profile.device
        self.precision = self.profile.precision if self.precision is None else self.precision
        self.draws = self.profile.draws if self.draws is None else self.draws
        self.profile = replace(self.profile, device=self.device, precision=self.precision, draws=self.draws)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_work": None}

    @property
    def name(self) -> str:
        """`<setup>/<norm>/sigma_<σ>`, as the run folders are laid out."""
        return f"{self.setup.name}/{self.norm}/sigma_{self.sigma}"

    def work(self) -> Workload:
        """The setup's data and models (`setups.prepare`, the models cached or trained under
        `<data_dir>/cache/<profile>/`, put on the device), loaded once per process."""
        if self._work is None:
            self._work = prepare(self.setup, self.seed, self.data_dir, cache=self.profile.name, device=self.device)
        return self._work

    def model(self) -> torch.nn.Module:
        """The base classifier of (norm, σ), on the device."""
        return self.work().models[self.norm, self.sigma]

    def selection_done(self) -> bool:
        """Whether the step-size table of this norm is kept already (`image_study.selection_path`)."""
        return image_study.selection_path(self.work(), self.setup, self.profile, self.results, self.norm,
                                          self.seed).exists()

    def settings(self) -> OptimSettings:
        """The step sizes notebook 03 uses for this (norm, σ): those chosen on the validation split
        (`image_study.choose_norm`, computed by the first caller while the others wait on a lock beside the table,
        then read), as multiples of this σ's θ (`image_study.settings_at`)."""
        path = image_study.selection_path(self.work(), self.setup, self.profile, self.results, self.norm, self.seed)
        with files.locked(path):
            chosen = image_study.choose_norm(self.work(), self.setup, self.profile, self.results, self.norm,
                                             self.seed)[0]
        return image_study.settings_at(chosen, self.setup, self.norm, self.sigma)

    def folders(self, settings: OptimSettings | None = None) -> dict[str, Path]:
        """Each method's run folder (`image_study.run_folder`).

        Parameters
        ----------
        settings : OptimSettings, optional
            The step sizes the folders are keyed by; None: `settings()`, those notebook 03 uses.

        Returns
        -------
        dict of str to Path
            Method name (Fixed σ, Isotropic DD, ANCER: the methods that are not rotated) -> its run folder.
        """
        settings = self.settings() if settings is None else settings
        return {m: image_study.run_folder(self.work(), self.setup, self.profile, settings, self.results, self.norm,
                                          self.sigma, m, self.seed) for m in registry.names(rotated=False)}

    def _arguments(self) -> tuple[tuple, dict]:
        work = self.work()
        settings = self.settings()
        args = (self.model(), work.test.x, work.test.y, work.test.index, NOISE_OF[self.norm],
                theta_of(self.norm, self.sigma), registry.names(rotated=False), settings, self.folders(settings))
        kw = dict(n0=self.profile.n0, n=self.setup.n, alpha=self.profile.alpha, num_classes=work.num_classes,
                  batch_size=self.profile.batch_size, seed=self.seed, device=self.device, **self.profile.numerics())
        return args, kw

    def inputs(self) -> int:
        """The number of test inputs the runs certify."""
        return len(self.work().test)

    def run_shard(self, shard: int, num_shards: int) -> dict[str, pd.DataFrame]:
        """Shard `shard` of `num_shards` of the three runs (`shards.run_methods`), with `image_study.JOB_THREADS`
        torch threads as `certify_sigma` (so the CPU arithmetic is the notebook's); resumable.

        Parameters
        ----------
        shard : int
            The shard to run (0-based), below `num_shards`.
        num_shards : int
            The number of shards, at most the number of test inputs.

        Returns
        -------
        dict of str to pandas.DataFrame
            Method name -> the shard's final.tsv rows (`shards.run_methods`).
        """
        args, kw = self._arguments()
        with torch_threads(image_study.JOB_THREADS):
            return shards.run_methods(*args, shard=shard, num_shards=num_shards, **kw)

    def merge(self, num_shards: int) -> dict[str, pd.DataFrame]:
        """Merge the shards into the run folders (`shards.merge_methods`): then `certify_sigma` reuses them.

        Parameters
        ----------
        num_shards : int
            The number of shards the runs were split into.

        Returns
        -------
        dict of str to pandas.DataFrame
            Method name -> its merged run's final.tsv rows (`shards.merge_methods`).
        """
        args, kw = self._arguments()
        with torch_threads(image_study.JOB_THREADS):
            return shards.merge_methods(*args[:-1], args[-1], num_shards, **kw)

    def check_folders(self, num_shards: int) -> None:
        """Refuse, before anything is submitted, a run folder or shard folder of this job that holds another run
        (`shards.check_slots`: ValueError naming the folder, the fields that differ and what to do). Needs the
        step sizes: call it once `selection_done`.

        Parameters
        ----------
        num_shards : int
            The number of shards to be run.

        Raises
        ------
        ValueError
            When a run folder or shard folder holds another run.
        """
        args, kw = self._arguments()
        shards.check_slots(*args, num_shards, **kw)

    def complete(self) -> bool:
        """Whether every run folder holds its final.tsv (the notebook then certifies nothing)."""
        return all((f / "final.tsv").exists() for f in self.folders().values())


class ShardTask(submitit.helpers.Checkpointable):
    """One job array task: shard `shard` of `num_shards` of an `ExperimentJob`. On preemption or timeout submitit
    requeues it (`Checkpointable`) and it resumes from the shard's certify.tsv."""

    def __init__(self, job: ExperimentJob, shard: int, num_shards: int) -> None:
        self.job, self.shard, self.num_shards = job, shard, num_shards

    def __call__(self) -> str:
        t0 = time.perf_counter()
        out = self.job.run_shard(self.shard, self.num_shards)
        return (f"{self.job.name} shard {shards.shard_name(self.shard, self.num_shards)}: "
                f"{len(next(iter(out.values())))} inputs, {time.perf_counter() - t0:.0f} s")


class SelectTask(submitit.helpers.Checkpointable):
    """The step-size selection of one (setup, norm) (`ExperimentJob.settings`), as one job before the array."""

    def __init__(self, job: ExperimentJob) -> None:
        self.job = job

    def __call__(self) -> str:
        return f"{self.job.setup.name}/{self.job.norm}: {self.job.settings()}"


@dataclass(frozen=True)
class Estimate:
    """What certifying the jobs costs: seconds per input of each method at the run's N and optimization budget,
    times the inputs, times the (norm, σ) runs; `how` says how the seconds were measured."""
    seconds_per_input: dict[str, float]
    inputs: int
    runs: int
    num_shards: int
    device: str
    how: str

    @property
    def total(self) -> float:
        """Device seconds of all the jobs together (every method, σ and input)."""
        return sum(self.seconds_per_input.values()) * self.inputs * self.runs

    def describe(self) -> str:
        """The estimate in two sentences: the numbers, then how they were obtained."""
        def secs(x: float) -> str:
            return f"{x:,.0f} s" if x >= 100 else f"{x:.3g} s"

        per = ", ".join(f"{m} {secs(s)}" for m, s in self.seconds_per_input.items())
        tasks = self.runs * self.num_shards
        return (f"cost estimate: {secs(sum(self.seconds_per_input.values()))} per input for the "
                f"{len(self.seconds_per_input)} methods ({per}) x {self.inputs} inputs x {self.runs} (norm, σ) "
                f"run(s) = {secs(self.total)} ({self.total / 3600:.2f} h) of {self.device} time in all, about "
                f"{secs(self.total / tasks)} per task over {tasks} task(s) ({self.num_shards} shard(s) per run).\n"
                f"How: {self.how}. Tasks on another device run at that device's speed: for the tasks' GPU, run the "
                "estimate on one (e.g. `srun --gpus=1 ancer-certify submit ... --dry-run`).")


def estimate(jobs: Sequence[ExperimentJob], num_shards: int, probe_inputs: int = 2, probe_n: int = 1_000,
             probe_iterations: int = 2, probe_batch: int = 16) -> Estimate:
    """Seconds per input of each method (Fixed σ, Isotropic DD, ANCER) measured on the first job's test inputs on its
    device: CERTIFY timed on the first `probe_inputs` at N0 + min(N, probe_n) draws and scaled linearly to N0 + N draws
    (after one untimed warm-up input); each optimization timed on the first min(probe_batch, chunk) inputs together
    (the run optimizes its inputs in chunks, which a GPU batches) over min(iterations, probe_iterations) steps at the
    run's samples per step, after one untimed warm-up step (the first step pays one-time costs: measured, it made
    the estimate of the quick MNIST column 25x too high), and scaled linearly to the run's iterations (step sizes do
    not change the cost, so the setup's base settings are timed and no selection is needed). Times the inputs and the
    (norm, σ) runs of `jobs`.

    Parameters
    ----------
    jobs : sequence of ExperimentJob
        The (setup, norm, σ) runs to estimate, at least one; the first is measured.
    num_shards : int
        The shards per run, for the seconds per task.
    probe_inputs : int
        The test inputs CERTIFY is timed on (at most the test set).
    probe_n : int
        The most draws (after N0) of each timed CERTIFY.
    probe_iterations : int
        The most optimization steps timed.
    probe_batch : int
        The most inputs optimized together when timed.

    Returns
    -------
    Estimate
        The seconds per input of each method, the inputs, the runs (len(jobs)), `num_shards`, the device and how
        the seconds were measured.

    Raises
    ------
    ValueError
        When `jobs` is empty.
    """
    if not jobs:
        raise ValueError("jobs must hold at least one ExperimentJob")
    job = jobs[0]
    work, model = job.work(), job.model()
    dev = devices.place(model, job.device)
    noise, theta0 = NOISE_OF[job.norm], theta_of(job.norm, job.sigma)
    count = min(probe_inputs, len(work.test))
    x = work.test.x[:count]
    keys = work.test.index[:count]
    base = image_study.base_settings(job.setup)
    n, n0 = job.setup.n, job.profile.n0
    n_probe = min(n, probe_n)
    numerics = job.profile.numerics()
    smooth = Smooth(model, work.num_classes, tuple(x.shape[1:]), noise, batch_size=job.profile.batch_size,
                    seed=job.seed, device=dev, **numerics)
    theta = np.full(tuple(x.shape), theta0, dtype=np.float32)
    certify_input(smooth, x[0], theta[0], int(keys[0]), n0, min(n_probe, 100), job.profile.alpha, job.seed)
    with torch_threads(image_study.JOB_THREADS):
        t0 = time.perf_counter()
        for k in range(count):
            certify_input(smooth, x[k], theta[k], int(keys[k]), n0, n_probe, job.profile.alpha, job.seed)
        cert = (time.perf_counter() - t0) / count * (n0 + n) / (n0 + n_probe)
        opt = {}
        batch = min(probe_batch, base.chunk, len(work.test))
        xo, ko = work.test.x[:batch], work.test.index[:batch]
        starts: dict[str, np.ndarray] = {}
        tuned = [registry.method(m) for m in registry.names(rotated=False)]
        for m in tuned:
            iterations = getattr(base.of(m.name), "iterations", 0) if m.settings is not None else 0
            steps = min(iterations, probe_iterations)
            if steps == 0:
                opt[m.name] = 0.0
                continue
            start = None if m.start is None else starts.get(m.start, np.full(tuple(xo.shape), theta0, np.float32))
            warm = base.with_budget(iterations=1)
            optimize_thetas(model, xo, noise, theta0, m.name, warm, job.seed, isotropic=start, keys=ko, device=dev,
                            **numerics)
            probe = base.with_budget(iterations=steps)
            t0 = time.perf_counter()
            starts[m.name] = optimize_thetas(model, xo, noise, theta0, m.name, probe, job.seed, isotropic=start,
                                             keys=ko, device=dev, **numerics)
            devices.synchronize(dev)
            opt[m.name] = (time.perf_counter() - t0) / batch * iterations / steps
    per = {name: seconds + cert for name, seconds in opt.items()}
    iso = base.of(ISOTROPIC)
    steps = min(iso.iterations, probe_iterations)
    how = (f"measured here on {dev} on test inputs of {job.name}: CERTIFY on {count} input(s) at N0 + N = {n0} + "
           f"{n_probe:,} draws scaled linearly to {n0} + {n:,}; Isotropic DD and ANCER on {batch} inputs together "
           f"over {steps} of {iso.iterations} steps ({iso.samples} samples each) after one warm-up step, "
           "scaled linearly; ANCER's "
           "certificates start from Isotropic DD's θ, so its cost excludes Isotropic DD's; the memory step "
           "(milliseconds per input) and the step-size selection are not counted")
    return Estimate(per, job.inputs(), len(jobs), num_shards, str(dev), how)


@dataclass(frozen=True)
class ClusterOptions:
    """Where the tasks run: "slurm" (submitit's AutoExecutor, one GPU per task: `slurm_gpus_per_node=1`) or
    "local" (submitit's LocalExecutor: processes on this machine). time: minutes per task (SLURM's --time; the
    local executor's timeout); partition, account, qos: SLURM's options (None: the cluster's defaults)."""
    cluster: str = "slurm"
    folder: str = "build/submitit"
    time: int = 240
    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    cpus_per_task: int = 4
    mem_gb: int | None = None
    max_parallel: int | None = None

    def executor(self, name: str) -> submitit.Executor:
        """The submitit executor of these options.

        Parameters
        ----------
        name : str
            The SLURM job's name (the local executor does not use it).

        Returns
        -------
        submitit.Executor
            A `LocalExecutor` ("local", with `time` as its timeout) or a SLURM `AutoExecutor` with one GPU per task and
            the options given (None ones left to the cluster).

        Raises
        ------
        ValueError
            When `cluster` is neither "slurm" nor "local".
        """
        if self.cluster == "local":
            ex = submitit.LocalExecutor(folder=self.folder)
            ex.update_parameters(timeout_min=self.time)
            return ex
        if self.cluster != "slurm":
            raise ValueError(f"cluster must be one of {list(CLUSTERS)}, got {self.cluster!r}")
        ex = submitit.AutoExecutor(folder=self.folder, cluster="slurm")
        params: dict = dict(name=name, timeout_min=self.time, slurm_gpus_per_node=1, cpus_per_task=self.cpus_per_task)
        for key, value in (("slurm_partition", self.partition), ("slurm_account", self.account),
                           ("slurm_qos", self.qos), ("mem_gb", self.mem_gb),
                           ("slurm_array_parallelism", self.max_parallel)):
            if value is not None:
                params[key] = value
        ex.update_parameters(**params)
        return ex


def add_cluster_options(p: argparse.ArgumentParser, minutes: int, clusters_default: str | None = "slurm") -> None:
    """The options of a job array (`ClusterOptions`) on a command's parser: --cluster, --partition, --account, --qos,
    --time, --cpus-per-task, --mem-gb, --max-parallel, --log-dir.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    minutes : int
        The default of --time.
    clusters_default : str or None
        The default of --cluster (None: the command runs here unless --cluster is given).
    """
    from .arguments import count

    p.add_argument("--cluster", choices=CLUSTERS, default=clusters_default,
                   help="slurm: submitit's AutoExecutor; local: submitit's LocalExecutor on this machine"
                        + ("" if clusters_default else " (default: run here, one after the other)"))
    p.add_argument("--partition", default=None, help="SLURM partition (default: the cluster's)")
    p.add_argument("--account", default=None, help="SLURM account (default: the cluster's)")
    p.add_argument("--qos", default=None, help="SLURM quality of service (default: the cluster's)")
    p.add_argument("--time", type=count(1), default=minutes, help="minutes per task (SLURM --time; local timeout)")
    p.add_argument("--cpus-per-task", type=count(1), default=4, help="CPU cores per task")
    p.add_argument("--mem-gb", type=count(1), default=None, help="memory per task in GB (default: the cluster's)")
    p.add_argument("--max-parallel", type=count(1), default=None,
                   help="at most this many array tasks at once (SLURM's %%N)")
    p.add_argument("--log-dir", type=Path, default=Path("build/submitit"), metavar="DIR",
                   help="submitit's folder of pickled tasks and logs")


def cluster_options(args: argparse.Namespace) -> ClusterOptions:
    """The `ClusterOptions` of the options `add_cluster_options` added, as parsed.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options.

    Returns
    -------
    ClusterOptions
        Their values.
    """
    return ClusterOptions(cluster=args.cluster, folder=str(args.log_dir), time=args.time, partition=args.partition,
                          account=args.account, qos=args.qos, cpus_per_task=args.cpus_per_task, mem_gb=args.mem_gb,
                          max_parallel=args.max_parallel)


def run_array(tasks: Sequence[Callable[[], object]], labels: Sequence[str], options: ClusterOptions, name: str,
              say: Callable[[str], None] = print) -> list[object]:
    """Submit `tasks` (callables without arguments, picklable) as one job array with `options`, wait for every one
    and return their results in order. A failed task is reported after the others finished, in one RuntimeError
    naming each failed task (its label and job id) with submitit's error.

    Parameters
    ----------
    tasks : sequence of callable
        The tasks, each called without arguments in its own job.
    labels : sequence of str
        One label per task, for the progress lines and the errors.
    options : ClusterOptions
        Where and how the tasks run.
    name : str
        The job's name (`ClusterOptions.executor`).
    say : callable
        Called with each progress line (default `print`).

    Returns
    -------
    list
        Each task's result, in the order of `tasks`.

    Raises
    ------
    RuntimeError
        When a task failed.
    """
    ex = options.executor(name)
    with ex.batch():
        submitted = [ex.submit(task) for task in tasks]
    say(f"submitted {len(submitted)} task(s) ({', '.join(j.job_id for j in submitted[:4])}"
        f"{', ...' if len(submitted) > 4 else ''}); waiting")
    results, errors = [], []
    for j, label in zip(submitted, labels):
        try:
            results.append(j.result())
            say(f"done: {label}")
        except Exception as e:  # submitit's FailedJobError holds the task's traceback
            results.append(None)
            errors.append(f"{label} (job {j.job_id}): {e}")
    if errors:
        raise RuntimeError(f"{len(errors)} task(s) failed; submit again to resume them from their logs:\n"
                           + "\n".join(errors))
    return results


def submit_runs(args: tuple, kwargs: dict, num_shards: int, options: ClusterOptions,
                say: Callable[[str], None] = print) -> dict[str, pd.DataFrame]:
    """`shards.run_methods(*args, **kwargs)` (args: model, x, y, indices, noise, theta0, methods, settings, folders;
    kwargs: n0, n, alpha, num_classes and optionally batch_size, seed, policy, device) as one job array of
    `num_shards` tasks (`RunShardTask`), waited for, then merged (`shards.merge_methods`): the folders then hold
    what the unsharded call writes, but the time column.

    Parameters
    ----------
    args : tuple
        `shards.run_methods`'s positional arguments, as above; x is a tensor of shape (N, C, H, W) and indices an
        array of shape (N,).
    kwargs : dict
        Its keyword arguments, as above.
    num_shards : int
        The number of tasks, at most the number of inputs.
    options, say
        As in `run_array`.

    Returns
    -------
    dict of str to pandas.DataFrame
        Method name -> its merged run's final.tsv rows (`shards.merge_methods`).

    Raises
    ------
    ValueError
        When `num_shards` exceeds the inputs or a folder holds another run (`shards.check_slots`), before any task
        is submitted.
    """
    shards.shard_range(len(args[1]), num_shards - 1, num_shards)  # num_shards <= inputs, else a clear error
    shards.check_slots(*args, num_shards, **kwargs)  # a folder holding another run: refused before any task
    run_array([RunShardTask(args, kwargs, k, num_shards) for k in range(num_shards)],
              [f"shard {shards.shard_name(k, num_shards)}" for k in range(num_shards)], options, "ancer-shards", say)
    return shards.merge_methods(*args, num_shards, **kwargs)


def plan(jobs: Sequence[ExperimentJob], num_shards: int) -> list[tuple[ExperimentJob, int]]:
    """The array's tasks, in order: (job, shard) for every job and shard.

    Parameters
    ----------
    jobs : sequence of ExperimentJob
        The (setup, norm, σ) runs.
    num_shards : int
        The shards of each run.

    Returns
    -------
    list of tuple of (ExperimentJob, int)
        len(jobs) * num_shards pairs, job by job, each job's shards in order.
    """
    return [(job, k) for job in jobs for k in range(num_shards)]


def submit(jobs: Sequence[ExperimentJob], num_shards: int, options: ClusterOptions, dry_run: bool = False,
           say: Callable[[str], None] = print, probe: bool = True) -> dict[str, dict[str, pd.DataFrame]] | None:
    """Estimate the cost (`estimate`, printed first; probe=False skips it), then: one selection job per norm whose
    step sizes are not chosen yet (waited for), one job array of `num_shards` tasks per job (`ShardTask`: one GPU
    each on SLURM), wait for every task, and merge each job (`ExperimentJob.merge`). Returns each job's final rows
    per method, or None for a dry run (the estimate and the plan printed, nothing submitted). A run folder or shard
    folder that holds another run is refused before anything is submitted (`ExperimentJob.check_folders`; for a
    norm whose step sizes are chosen by a selection job, before the array). A failed task stops the launcher with
    its error (submitit's), after the others finished; submitting again resumes every shard from its certify.tsv.

    Parameters
    ----------
    jobs : sequence of ExperimentJob
        The (setup, norm, σ) runs to certify, at least one (ValueError otherwise).
    num_shards : int
        The shards of each run, at most its number of test inputs.
    options : ClusterOptions
        Where and how the tasks run.
    dry_run : bool
        True: print the estimate and the plan and submit nothing.
    say : callable
        Called with each line of the estimate, the plan and the progress (default `print`).
    probe : bool
        False: skip the cost estimate.

    Returns
    -------
    dict of str to dict of str to pandas.DataFrame, or None
        `ExperimentJob.name` -> method name -> its merged final.tsv rows; None for a dry run.
    """
    if not jobs:
        raise ValueError("jobs must hold at least one ExperimentJob")
    tasks = plan(jobs, num_shards)
    for job in jobs:
        shards.shard_range(job.inputs(), num_shards - 1, num_shards)  # num_shards <= inputs, else a clear error
    selected = {job.name: job.selection_done() for job in jobs}  # the step sizes are chosen already
    for job in jobs:
        if selected[job.name]:
            job.check_folders(num_shards)
    if probe:
        say(estimate(jobs, num_shards).describe())
    pending = {}
    for job in jobs:
        if (job.setup.name, job.norm) not in pending and not selected[job.name]:
            pending[job.setup.name, job.norm] = job
    chosen = ", ".join("/".join(k) for k in pending) or "none: chosen already"
    say(f"plan: {len(pending)} step-size selection job(s) first ({chosen}), then one array of {len(tasks)} task(s) on "
        f"{options.cluster!r} ({num_shards} shard(s) x {len(jobs)} run(s)), logs in {options.folder}:")
    for i, (job, k) in enumerate(tasks):
        start, stop = shards.shard_range(job.inputs(), k, num_shards)
        say(f"  task {i}: {job.name} shard {shards.shard_name(k, num_shards)} (test inputs {start}..{stop - 1})")
    say(f"then merge into the run folders under {jobs[0].results}")
    if dry_run:
        return None
    if pending:
        run_array([SelectTask(job) for job in pending.values()], [f"selection {k[0]}/{k[1]}" for k in pending],
                  options, "ancer-select", say)
        for job in jobs:
            if not selected[job.name]:
                job.check_folders(num_shards)
    run_array([ShardTask(job, k, num_shards) for job, k in tasks],
              [f"{job.name} shard {shards.shard_name(k, num_shards)}" for job, k in tasks], options, "ancer-shards", say)
    out = {}
    for job in jobs:
        out[job.name] = job.merge(num_shards)
        say(f"merged {job.name}: {', '.join(str(p) for p in job.folders().values())}")
    return out
