"""Notebook 07's study of one column (UCAN §5 on our data): train the three NPGs with their classifiers (fine-tuned
from notebook 03's Cohen models), choose κ and γ on the validation split, certify the test inputs with UCAN's
Algorithm 1, tabulate certified accuracy against the ℓ2 radius and the ALM beside Cohen / Isotropic DD / ANCER
(notebook 03's logs of the same inputs), Figure 5's noise families, claims C8 and C9 and the memory-based repair.

Models are cached under data/cache/<profile>/ucan/ and per-input logs under data/results/<profile>/ucan/, each
named by a hash of everything that determines it (the code of the UCAN modules and the torch thread count
included), and resumable.

Every variant's training and certification, and every audit, is an independent job that runs with `JOB_THREADS`
torch threads wherever it runs (`parallel`: a float result of training depends on the thread count), so the
study's steps hand their jobs to worker processes, one per core (`workers`), and compute exactly what their loop
would. Workers leave the stage profile to the caller: `select` counts as SELECTION, `certify_test` as CERTIFY
and `universality` as TRAINING, each with the training and certification its jobs do.
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Sequence

import numpy as np
import pandas as pd
import torch

from ..core import devices
from ..core.certify import BATCH_SIZE, CPU
from ..core.families import FAMILIES
from ..core.memory import SHRINK
from ..core.names import NOISE_OF
from ..core.precision import EXACT
from ..core.reproducibility import torch_threads
from ..core.stages import CERTIFY, SELECTION, TRAINING, stage, timed
from ..core.ucan_radii import GAUSSIAN, NOISES, lambda_for_std
from ..core.validation import check_count
from ..evaluation.metrics import average_certified_radius, certified_accuracy
from ..methods import ucan
from ..methods.registry import ANCER, FIXED, ISOTROPIC
from ..methods.ucan import INPUT_NPG, ISOTROPIC_NPG, NPG_KINDS, PATTERN_NPG, UNIVERSAL_NPG
from ..models.architectures import get_architecture
from ..models.data import DATA_DIR, PIXEL_DOMAIN, Split, cifar10, fashion_mnist_splits, stratified_subset
from ..models.train import model_fingerprint
from ..report import style
from ..runs.cache import cached
from ..runs.code_keys import cache_key, code_version
from ..runs.experiment import numerics_fields
from ..runs.parallel import Plan, device_workers, map_ordered, run_plans
from ..runs.profiles import Profile, UcanSetup
from ..runs.selection import ACCURACY_SLACK, widening_steps
from ..runs.setups import QUICK_DATA, build_model
from ..runs.ucan_runs import run_ucan, with_memory, with_rows
from .image_study import JOB_THREADS, Column

#: UCAN Tables 2-3's radii (and ALM levels)
TABLE_RADII = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25)
#: how far float32 rounding of x + δ may leave the image domain and still count as inside it (`Study.audit`)
DOMAIN_ATOL = 1e-6
#: values `Study.select` may add beyond an edge of the κ / γ grids (`selection.widening_search`, geometric: γ grid
#: {1, 2, 5} continues with 12.5, 31.25): with the setup's grids alone, the universal and input-dependent γ = 5 is
#: the largest γ tried on both quick columns while their ACR~ still rises; `Study.edges` says where a choice still
#: sits at an edge after widening
UCAN_WIDEN = 2
#: the control of equal fine-tuning: isotropic noise (Cohen's) whose classifier gets the same
#: fine-tuning as the NPG variants (`setup.epochs` from the same start), so that an NPG's gain over it is not its
#: extra training
ISOTROPIC_FT = "isotropic_ft"
#: the study's variant kinds: UCAN's generators (`ucan.NPG_KINDS`) and the fine-tuned isotropic control
KINDS = NPG_KINDS + (ISOTROPIC_FT,)
#: the table name of each variant kind (`report.style`, the one table of method names)
KIND_NAMES = {kind: style.method(f"ucan_{kind}").short or style.method(f"ucan_{kind}").label for kind in KINDS}


def _key(**parts: object) -> str:
    """A cached UCAN model's or run's name: a `cache_key` over this module's code and imports, threads, `parts`."""
    return cache_key(code_version("studies.ucan_study"), threads=JOB_THREADS, **parts)


@dataclass(frozen=True)
class Variant:
    """One UCAN smoothing configuration: NPG kind, its parameter, the pattern's norm, the noise family and λ.

    Parameters
    ----------
    kind : str
        One of `KINDS`: an NPG kind of `ucan.NPG_KINDS` ("isotropic", "pattern", "universal", "input") or
        `ISOTROPIC_FT`, the fine-tuned isotropic control.
    lam : float
        λ, the isotropic scale the NPG's σ multiplies (UCAN Eq. 2); > 0.
    param : float, optional
        κ for "pattern", γ for "universal" and "input"; None for the isotropic kinds.
    pattern : str, default "l2"
        The pattern's norm ("l1", "l2" or "linf"), for "pattern".
    noise : str, default "gaussian"
        The noise family (UCAN Table 1, `ucan_radii.NOISES`).
    """
    kind: str
    lam: float
    param: float | None = None
    pattern: str = "l2"
    noise: str = GAUSSIAN

    @property
    def label(self) -> str:
        """The variant's table name: `KIND_NAMES[kind]`, followed by the pattern's norm (ℓ1, ℓ2, ℓ∞) for "pattern".

        Returns
        -------
        str
        """
        name = KIND_NAMES[self.kind]
        if self.kind == PATTERN_NPG:
            name += f" ℓ{self.pattern[1:].replace('inf', '∞')}"
        return name

    def build_npg(self, shape: tuple[int, ...], growth: int = 8) -> torch.nn.Module:
        """An untrained NPG of this variant (`ucan.build_npg`).

        `ISOTROPIC_FT` builds the isotropic NPG (σ = 1, μ = 0: only the classifier is fine-tuned); "pattern" uses κ =
        `param` (1.0 when None) and the variant's pattern; "universal" and "input" use γ = `param`.

        Parameters
        ----------
        shape : tuple of int
            The input shape (C, H, W).
        growth : int, default 8
            Channels each convolution of the input-dependent NPG adds.

        Returns
        -------
        torch.nn.Module
            The NPG, mapping x of shape (B, *shape) to (σ, μ) of that shape.
        """
        if self.kind == ISOTROPIC_FT:  # σ = 1, μ = 0: only the classifier is fine-tuned
            return ucan.build_npg(ISOTROPIC_NPG, shape)
        if self.kind == PATTERN_NPG:
            return ucan.build_npg(PATTERN_NPG, shape, pattern=self.pattern, kappa=self.param or 1.0)
        return ucan.build_npg(self.kind, shape, gamma=self.param, growth=growth)


def training_split(column: Column, seed: int = 0) -> Split:
    """The training split of a column's dataset: the quick datasets' own split, CIFAR-10's training set, or
    Fashion-MNIST's training images without its held-out validation split.

    Parameters
    ----------
    column : image_study.Column
        Notebook 03's column; its dataset must be digits, MNIST-5k, CIFAR-10 or Fashion-MNIST.
    seed : int, default 0
        The quick datasets' split seed.

    Returns
    -------
    models.data.Split
        x of shape (N, *input_shape), y of shape (N,).
    """
    dataset = column.setup.dataset
    if dataset in QUICK_DATA:
        return QUICK_DATA[dataset](seed)["train"]
    if dataset == "cifar10":
        return cifar10(DATA_DIR / "cifar10", "train")
    if dataset == "fmnist":  # the training images the checkpoints were trained on (the validation split held out)
        return fashion_mnist_splits(DATA_DIR)["train"]
    raise ValueError(f"UCAN training needs the digits, MNIST-5k, CIFAR-10 or Fashion-MNIST training set, got dataset "
                     f"{dataset!r}")


def train_variant(column: Column, setup: UcanSetup, variant: Variant, cache_dir: str | Path, seed: int = 0,
                  start: torch.nn.Module | None = None,
                  device: str | torch.device | None = None) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The classifier and NPG of one variant, trained by `ucan.train_ucan` (UCAN §4.2) and cached.

    With `start` the classifier is fine-tuned from it for `setup.epochs`, as UCAN's code starts from a pre-trained
    classifier; without, it is trained from scratch for `setup.universality_epochs`. Initial weights are seeded by
    the variant, so a run does not depend on what ran before it. Trains with `image_study.JOB_THREADS` torch
    threads. The cache name (under cache_dir/ucan/) leaves the device out: the noise is drawn on the CPU whatever
    the device, so the weights differ only by the device's rounding. The training state is kept after every epoch
    in a `.work` folder beside the cache file (`ucan.train_ucan`'s `state_dir`), so that a run stopped while training
    resumes after its last finished epoch to the same weights; the folder is removed once the cache file is written.

    Parameters
    ----------
    column : image_study.Column
        Notebook 03's column (data, test inputs, number of classes, model kind).
    setup : runs.profiles.UcanSetup
        Notebook 07's setup of the column (epochs, growth).
    variant : Variant
        The variant to train.
    cache_dir : str or Path
        The profile's cache folder.
    seed : int, default 0
        The training seed.
    start : torch.nn.Module, optional
        A trained classifier: notebook 03's Cohen model at σ = λ, or UCAN Figure 5's isotropic model of the same
        family.
    device : str or torch.device, optional
        Where the classifier and the NPG train and are returned (a `devices.resolve` setting: "auto", "cpu" or a
        CUDA device; None: where `start` is, else the CPU).

    Returns
    -------
    model : torch.nn.Module
        The classifier, in eval mode.
    npg : torch.nn.Module
        The NPG, in eval mode.
    """
    shape = tuple(column.work.test.x.shape[1:])
    num_classes = column.work.num_classes
    epochs = setup.epochs if start is not None else setup.universality_epochs
    init_seed = int(hashlib.sha256(json.dumps(dict(variant=asdict(variant), seed=seed), sort_keys=True)
                                   .encode()).hexdigest()[:8], 16)  # independent of the code version
    with torch.random.fork_rng():
        torch.manual_seed(init_seed)
        npg = variant.build_npg(shape, setup.growth)
        model = copy.deepcopy(start) if start is not None else _fresh_model(column, shape, num_classes)
    key = _key(variant=asdict(variant), start=model_fingerprint(model), epochs=epochs, growth=setup.growth,
               seed=seed, npg_init=model_fingerprint(npg))
    path = Path(cache_dir) / "ucan" / f"{column.setup.name}_{variant.kind}_{variant.noise}_lam{variant.lam:.4g}-{key}.pt"

    def read(path: Path) -> None:
        state = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"])
        npg.load_state_dict(state["npg"])

    work = path.with_suffix(".work")

    def compute() -> None:
        train = training_split(column, seed)
        d = int(np.prod(shape))
        a = FAMILIES[variant.noise].exponent(d)
        with torch_threads(JOB_THREADS):
            ucan.train_ucan(model, npg, train.x, train.y, noise=variant.noise, lam=variant.lam, epochs=epochs, a=a,
                            seed=seed, device=device, state_dir=work)

    def write(_: None, fh: IO) -> None:
        torch.save({"model": model.state_dict(), "npg": npg.state_dict()}, fh)

    cached(path, compute, read, write, mode="wb")  # the weights are loaded into, or trained in, model and npg
    shutil.rmtree(work, ignore_errors=True)
    dev = devices.place(model, device)  # a cached state was loaded where the model was built
    devices.place(npg, dev)
    return model.eval(), npg.eval()


def _fresh_model(column: Column, shape: tuple[int, ...], num_classes: int) -> torch.nn.Module:
    """An untrained classifier of the column's kind (paper profile: Cohen et al.'s ResNet-110, UCAN App. I)."""
    if column.setup.model == "checkpoint":
        return get_architecture("cifar_resnet110", column.setup.dataset)
    return build_model(column.setup, shape, num_classes)


def test_subset(column: Column, setup: UcanSetup) -> np.ndarray:
    """Positions, in notebook 03's test subset, of the inputs notebook 07 certifies: `setup.num_test` spread evenly.

    Parameters
    ----------
    column : image_study.Column
        Notebook 03's column.
    setup : runs.profiles.UcanSetup
        Its num_test (None: every input).

    Returns
    -------
    numpy.ndarray of int, shape (k,)
        Increasing positions.
    """
    total = len(column.work.test)
    if setup.num_test is None or setup.num_test >= total:
        return np.arange(total)
    return np.unique(np.round(np.linspace(0, total - 1, setup.num_test)).astype(int))


def certify_variant(model: torch.nn.Module, npg: torch.nn.Module, variant: Variant, x: torch.Tensor, y: torch.Tensor,
                    idx: np.ndarray, n0: int, n: int, alpha: float, num_classes: int, folder: str | Path,
                    seed: int = 0, batch_size: int = BATCH_SIZE,
                    device: str | torch.device | None = None, *, precision: str = EXACT,
                    draws: str = CPU) -> pd.DataFrame:
    """UCAN Algorithm 1 on every input, with a resumable log folder/certify.tsv (`ucan_runs.run_ucan` with
    `image_study.JOB_THREADS` torch threads, the variant recorded in the folder's manifest).

    The two streams of each input are keyed by its idx (`streams.certify_streams`). A folder holding another run is
    refused (ValueError naming what differs), and a complete folder is reused without a write, so a finished results
    folder may be read-only. The folder's name and manifest leave the device out.

    Parameters
    ----------
    model : torch.nn.Module
        The classifier.
    npg : torch.nn.Module
        The NPG of `variant`.
    variant : Variant
        Its noise family and λ are used.
    x : torch.Tensor, shape (N, *input_shape)
        The inputs.
    y : torch.Tensor, shape (N,)
        Their labels.
    idx : numpy.ndarray of int, shape (N,)
        Their indices: stream keys and log rows.
    n0, n : int
        CERTIFY's selection and estimation samples.
    alpha : float
        The Clopper-Pearson level.
    num_classes : int
        The number of classes.
    folder : str or Path
        The run folder.
    seed : int, default 0
        The certification seed.
    batch_size : int, default `certify.BATCH_SIZE`
        Noise draws per forward batch.
    device : str or torch.device, optional
        Where the classifier and the NPG run (`ucan.certify`'s; None: where the classifier is).
    precision : str
        The classifier's forward passes' arithmetic (`ucan.certify`'s, `precision.PRECISIONS`).
    draws : str
        Where the noise is drawn (`ucan.certify`'s, `certify.DRAWS`).

    Returns
    -------
    pandas.DataFrame
        One row per input in the order of `idx`, columns `ucan_runs.LOG_COLUMNS` (idx, label, predict, radius,
        radius_proxy, correct, min_sigma, time, p_lower, log_gm_theta); radius and radius_proxy are the ℓp radius and
        ALM of the family's first UCAN Table 1 row.
    """
    d = int(np.prod(tuple(x.shape[1:])))
    with torch_threads(JOB_THREADS):
        return run_ucan(model, npg, variant.noise, variant.lam, x, y, idx, n0, n, alpha, num_classes, folder,
                        dict(variant=asdict(variant)), seed, batch_size, device, FAMILIES[variant.noise].exponent(d),
                        precision=precision, draws=draws)


@dataclass
class UcanRun:
    """One variant's trained models and test certificates (`Study.certify_test`).

    Parameters
    ----------
    variant : Variant
        The variant.
    model : torch.nn.Module
        Its classifier.
    npg : torch.nn.Module
        Its NPG.
    results : pandas.DataFrame
        Its per-input rows (`certify_variant`'s columns).
    """
    variant: Variant
    model: torch.nn.Module
    npg: torch.nn.Module
    results: pd.DataFrame


class Study:
    """Notebook 07 on one column (UCAN §5): selection, test certification, baselines, tables and claims.

    `select()` chooses κ and γ on the validation split, `certify_test()` fills `runs` (the test certification of
    every variant), `baselines()` reads notebook 03's logs of the same inputs.

    Parameters
    ----------
    column : image_study.Column
        Notebook 03's column.
    setup : runs.profiles.UcanSetup
        Notebook 07's setup of the column.
    profile : runs.profiles.Profile
        Its n0, alpha, batch_size and device certify.
    cache_dir : str or Path
        The profile's model cache (models under cache_dir/ucan/).
    results_root : str or Path
        The profile's results folder (logs under results_root/ucan/<column>/).
    seed : int, default 0
        The training and certification seed.

    Attributes
    ----------
    shape : tuple of int
        The input shape; `d` its size.
    positions : numpy.ndarray of int, shape (k,)
        `test_subset`'s positions; x (k, *shape), y (k,) and idx (k,) are those test inputs.
    selection : pandas.DataFrame or None
        `select`'s table, once it ran.
    chosen : dict of str to float
        The chosen κ ("pattern") and γ ("universal", "input").
    runs : dict of Variant to UcanRun
        The test certifications of `certify_test`.
    """

    def __init__(self, column: Column, setup: UcanSetup, profile: Profile, cache_dir: str | Path,
                 results_root: str | Path, seed: int = 0) -> None:
        self.column, self.setup, self.profile, self.seed = column, setup, profile, seed
        self.cache_dir, self.results_root = Path(cache_dir), Path(results_root) / "ucan" / column.setup.name
        self.shape = tuple(column.work.test.x.shape[1:])
        self.d = int(np.prod(self.shape))
        self.positions = test_subset(column, setup)
        test = column.work.test
        self.x, self.y, self.idx = test.x[self.positions], test.y[self.positions], test.index[self.positions]
        self.selection: pd.DataFrame | None = None
        self.chosen: dict[str, float] = {}
        self.runs: dict[Variant, UcanRun] = {}

    # -- training and certification ------------------------------------------------------------------
    def model(self, variant: Variant, scratch: bool = False) -> tuple[torch.nn.Module, torch.nn.Module]:
        """The trained classifier and NPG of a variant (`train_variant`).

        Gaussian variants start from notebook 03's Cohen model at σ = λ; with `scratch` (UCAN Figure 5) the isotropic
        variant is trained from scratch and the others start from it. Either way the NPG variants and the fine-tuned
        isotropic control (`ISOTROPIC_FT`) are fine-tuned from their start for `setup.epochs`; the isotropic baseline
        (Cohen's model, or Figure 5's scratch model) is not.

        Parameters
        ----------
        variant : Variant
            The variant.
        scratch : bool, default False
            Train the isotropic start from scratch (UCAN Figure 5).

        Returns
        -------
        model : torch.nn.Module
            The classifier, on `profile.device`.
        npg : torch.nn.Module
            The NPG, on `profile.device`.
        """
        if not scratch:
            start = self.column.work.models.get(("l2", variant.lam)) if variant.noise == NOISE_OF["l2"] else None
        elif variant.kind == ISOTROPIC_NPG:
            start = None
        else:
            start = self.model(Variant(ISOTROPIC_NPG, variant.lam, None, "l2", variant.noise), scratch=True)[0]
        return train_variant(self.column, self.setup, variant, self.cache_dir, self.seed, start,
                             device=self.profile.device)

    def _certify(self, variant: Variant, x: torch.Tensor, y: torch.Tensor, idx: np.ndarray, n: int,
                 split: str) -> tuple[torch.nn.Module, torch.nn.Module, pd.DataFrame]:
        """A variant's classifier, NPG and per-input rows (`certify_variant`) on one split's inputs."""
        model, npg = self.model(variant, scratch=split == "universality")
        numerics = self.profile.numerics()  # the draws of a family without device streams are the CPU's
        numerics["draws"] = ucan.noise_draws(variant.noise, numerics["draws"], devices.resolve(self.profile.device))
        key = _key(model=model_fingerprint(model), npg=model_fingerprint(npg), variant=asdict(variant), n0=self.profile.n0,
                   n=n, alpha=self.profile.alpha, seed=self.seed, idx=[int(i) for i in idx],
                   **numerics_fields(**numerics))
        folder = self.results_root / f"{split}-{variant.kind}-{variant.noise}-lam{variant.lam}-{key}"
        df = certify_variant(model, npg, variant, x, y, idx, self.profile.n0, n, self.profile.alpha,
                             self.column.work.num_classes, folder, self.seed, self.profile.batch_size,
                             device=self.profile.device, **numerics)
        return model, npg, df

    def select(self, workers: int | None = None, widen: int = UCAN_WIDEN) -> pd.DataFrame:
        """Choose κ (pattern-fixed, ℓ2) and γ (universal, input-dependent) at `selection_lam`, on `setup.num_val`
        class-balanced inputs of the validation split (`data.stratified_subset`).

        The value with the largest validation ACR~ (mean ALM over correctly certified inputs, the quantity UCAN's Tables
        2-3 integrate) is chosen by the one selection routine, `selection.widening_search`, with up to `widen` values
        beyond an edge of a grid (rows added by widening follow the grid's rows in the table). Ties go to the earlier
        grid value. κ and γ are reused at every λ of `setup.lams` (`variants`), so a value is eligible only where, at
        each λ other than `selection_lam`, its validation accuracy at radius 0 stays within `selection.ACCURACY_SLACK`
        of the fine-tuned isotropic control's at that λ (at `selection_lam` the objective itself counts only correctly
        certified inputs): the values are checked from the best ACR~ down and the first that passes is chosen (the
        smallest value tried when none passes). Each value at each λ is trained and certified as its own job, once;
        the three kinds' searches (`_kind_plan`) and the controls share up to `workers` processes
        (`parallel.run_plans`), so that one kind's widening and checks run beside another's. The table is the same for
        any `workers`. `select_all` does this for several studies in one pool. Counted as stage SELECTION. Sets
        `chosen` and `selection`.

        Parameters
        ----------
        workers : int, optional
            The most worker processes (default one per core; the result does not depend on it).
        widen : int, default `UCAN_WIDEN`
            The most values beyond an edge of a grid (>= 0; 0: the setup's grids as they are).

        Returns
        -------
        pandas.DataFrame
            One row per value tried: columns kind, param ("kappa" or "gamma"), value, accuracy (%), acr, acr_alm
            (ACR~), gm_sigma (geomean σ / λ), elsewhere (the smallest accuracy difference to the control at the other
            λ, in points; NaN where not checked), eligible and chosen (bool).
        """
        return select_all([self], workers, widen)[0]

    def validation(self) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
        """The validation inputs κ and γ are chosen on: `setup.num_val` class-balanced inputs of the validation split
        (`data.stratified_subset`, seeded by the study's seed).

        Returns
        -------
        x : torch.Tensor, shape (num_val, *shape)
        y : torch.Tensor, shape (num_val,)
        idx : numpy.ndarray of int, shape (num_val,)
            The inputs' dataset indices.
        """
        val = stratified_subset(self.column.work.val, self.setup.num_val, self.seed)
        return val.x, val.y, val.index

    def _grids(self) -> tuple[tuple[str, tuple[float, ...]], ...]:
        """(kind, values tried at `selection_lam`) of `select`'s three searches, in the table's order."""
        return ((PATTERN_NPG, self.setup.kappas), (UNIVERSAL_NPG, self.setup.gammas),
                (INPUT_NPG, self.setup.gammas))

    def _selection_plans(self, widen: int) -> list[tuple[float, Plan]]:
        """`select`'s plans (`parallel.run_plans`; tasks (study, variant)), each with its cost rank: one search per
        kind of `_grids` (`_kind_plan`), in that order, then, with another λ to check, the controls there, started at
        once (every check compares with them)."""
        lams = [lam for lam in self.setup.lams if lam != self.setup.selection_lam]
        plans = [(_JOB_COST[kind], self._kind_plan(kind, values, widen, lams)) for kind, values in self._grids()]
        if lams:
            plans.append((_JOB_COST[ISOTROPIC_FT], _steps(self, [Variant(ISOTROPIC_FT, lam) for lam in lams])))
        return plans

    def _selected(self, found: list) -> pd.DataFrame:
        """`select`'s table from the outcomes of `_selection_plans` (in their order); sets `chosen` and
        `selection`."""
        grids = self._grids()
        found = {kind: outcome for (kind, _), outcome in zip(grids, found)}
        # the table's rows: every grid value in the grids' order, then the widened values, kind by kind
        rows = [row for kind, _ in grids for row in found[kind][0]] + [row for kind, _ in grids for row in found[kind][1]]
        gaps = {(kind, value): gap for kind, _ in grids for value, gap in found[kind][3].items()}

        def eligible(kind: str, value: float) -> bool:  # not checked elsewhere: eligible
            return gaps.get((kind, value), 0.0) >= -100 * ACCURACY_SLACK

        best = {}
        for kind, _ in grids:
            ranked = found[kind][2]
            passed = [v for v in ranked if eligible(kind, v)]
            best[kind] = passed[0] if passed else min(ranked)
        table = pd.DataFrame(rows)
        table["elsewhere"] = [gaps.get((kind, value), math.nan) for kind, value in zip(table.kind, table.value)]
        table["eligible"] = [eligible(kind, value) for kind, value in zip(table.kind, table.value)]
        chosen = [table.index[(table.kind == kind) & (table.value == value)][0] for kind, value in best.items()]
        picked = table.loc[chosen]
        self.chosen = dict(zip(picked.kind, picked.value))
        table["chosen"] = table.index.isin(chosen)
        self.selection = table
        return table

    def _kind_plan(self, kind: str, values: tuple[float, ...], widen: int, lams: list[float]) -> Plan:
        """One kind's search for `select`, as a plan of `parallel.run_plans` whose tasks are (study, variant).

        Its grid at `selection_lam`, widened by `selection.widening_steps`; then its values from the best ACR~ down,
        each at every λ of `lams` beside the fine-tuned isotropic controls there, until one keeps the controls'
        validation accuracy at radius 0 within `selection.ACCURACY_SLACK` at each of them. Models trained here are
        the ones `certify_test` reuses for the chosen values.

        Returns
        -------
        generator
            Returns (the grid's rows in the grid's order, the widened values' rows in the order tried, the values
            from the largest ACR~ down (ties in the grid's order, then the widened values'), and {value: the
            smallest difference over `lams` between its accuracy and the control's, in points} for the values
            checked).
        """
        lam0 = self.setup.selection_lam
        steps = widening_steps(list(values), lambda row: row["acr_alm"], widen)
        scored: dict[float, dict] = {}
        tried, grid_rows = None, None
        ask = next(steps)
        while tried is None:
            variants = [Variant(kind, lam0, value) for value in ask]
            frames = yield [(self, v) for v in variants]
            for v, df in zip(variants, frames):
                scored[v.param] = _selection_row(v, df)
            if grid_rows is None:  # one row per grid entry, as given (a repeated value repeats its row)
                grid_rows = [scored[value] for value in values]
            try:
                ask = steps.send([scored[value] for value in ask])
            except StopIteration as stop:
                tried = stop.value
        widened = [scored[value] for value in tried if value not in values]
        # largest ACR~ first; ties in the grid's order, then the widened values' (a stable sort)
        ranked = sorted(list(values) + [t for t in tried if t not in values], key=lambda t: -tried[t]["acr_alm"])
        gaps: dict[float, float] = {}
        for value in ranked if lams else ():
            frames = yield ([(self, Variant(ISOTROPIC_FT, lam)) for lam in lams]
                            + [(self, Variant(kind, lam, value)) for lam in lams])
            control, checked = frames[:len(lams)], frames[len(lams):]
            gaps[value] = min(100 * float(df.correct.mean()) - 100 * float(c.correct.mean())
                              for df, c in zip(checked, control))
            if gaps[value] >= -100 * ACCURACY_SLACK:
                break
        return grid_rows, widened, ranked, gaps

    def edges(self) -> dict[str, bool]:
        """Per kind of `select`'s table, whether the chosen κ or γ is the smallest or the largest value tried.

        The values tried are the grid and its widened values; a choice at an edge means the optimum may lie beyond.
        `select` must have run.

        Returns
        -------
        dict of str to bool
            Keyed by "pattern", "universal" and "input".
        """
        if self.selection is None:
            raise ValueError("call select() first")
        out = {}
        for kind, g in self.selection.groupby("kind", sort=False):
            chosen = float(g.value[g.chosen].iloc[0])
            out[kind] = bool(len(g) > 1 and chosen in (float(g.value.min()), float(g.value.max())))
        return out

    def _certify_all(self, variants: list[Variant], x: torch.Tensor, y: torch.Tensor, idx: np.ndarray, n: int,
                     split: str, workers: int | None = None) -> list[pd.DataFrame]:
        """`_certify` of every variant in up to `workers` processes (here on a GPU): their rows in order."""
        workers = device_workers(self.profile.device, workers)
        order = sorted(range(len(variants)), key=lambda j: -_JOB_COST[variants[j].kind])
        done = map_ordered(_certify_job, [(self, variants[j], x, y, idx, n, split) for j in order], workers)
        out = dict(zip(order, done))
        return [out[j] for j in range(len(variants))]

    def variants(self) -> list[Variant]:
        """What the test inputs are certified with (`select` must have run).

        The three patterns at `selection_lam`, the ℓ2 pattern at the other λ, universal and input-dependent at every λ
        (chosen κ, γ), and the fine-tuned isotropic control at every λ.

        Returns
        -------
        list of Variant
        """
        if not self.chosen:
            raise ValueError("call select() first: κ and γ are chosen on the validation split")
        out = []
        for lam in self.setup.lams:
            pats = ("l1", "l2", "linf") if lam == self.setup.selection_lam else ("l2",)
            out += [Variant(PATTERN_NPG, lam, self.chosen[PATTERN_NPG], p) for p in pats]
            out += [Variant(kind, lam, self.chosen[kind]) for kind in (UNIVERSAL_NPG, INPUT_NPG)]
            out.append(Variant(ISOTROPIC_FT, lam))
        return out

    def certify_test(self, workers: int | None = None) -> pd.DataFrame:
        """Certify the test inputs with every variant of `variants` (N of notebook 03's column), UCAN Algorithm 1.

        The variants train and certify in up to `workers` processes (stage CERTIFY, their training included); their
        models are then read back from the cache into `runs`. `certify_tests` does this for several studies in one
        pool.

        Parameters
        ----------
        workers : int, optional
            The most worker processes (default one per core; the result does not depend on it).

        Returns
        -------
        pandas.DataFrame
            Per-input rows of `certify_variant` (`ucan_runs.LOG_COLUMNS`) with columns method (the variant's label), kind, lam,
            pattern.
        """
        return certify_tests([self], workers)[0]

    def _read_test(self) -> pd.DataFrame:
        """`certify_test`'s rows, every variant's run read back from the cache (trained and certified already) into
        `runs`."""
        frames = []
        for variant in self.variants():
            model, npg, df = self._certify(variant, self.x, self.y, self.idx, self.column.setup.n, "test")
            self.runs[variant] = UcanRun(variant, model, npg, df)
            frames.append(df.assign(method=variant.label, kind=variant.kind, lam=variant.lam, pattern=variant.pattern))
        return pd.concat(frames, ignore_index=True)

    # -- notebook 03's baselines on the same inputs ---------------------------------------------------------
    def baselines(self) -> pd.DataFrame:
        """Cohen (Fixed σ), Isotropic DD and ANCER (ℓ2, after ANCER's Algorithm 1) from notebook 03's logs.

        The rows are restricted to the inputs certified here; their ALM is the proxy radius (= the radius for the
        isotropic methods).

        Returns
        -------
        pandas.DataFrame
            Notebook 03's per-input rows (`image_study.Column.results`: idx, norm, sigma, radius, radius_proxy,
            correct, ...) with method ("Cohen (Fixed σ)", "Isotropic DD", "ANCER"), kind (notebook 03's method name)
            and lam (= σ).
        """
        r = self.column.results
        r = r[(r.norm == "l2") & r.idx.isin([int(i) for i in self.idx])]
        names = {FIXED: "Cohen (Fixed σ)", ISOTROPIC: "Isotropic DD", ANCER: "ANCER"}
        return r.assign(method=r.method.map(names), kind=r.method, lam=r.sigma)

    # -- Figure 5: every noise family of Table 1 ------------------------------------------------------------
    def universality(self, workers: int | None = None) -> pd.DataFrame:
        """UCAN §5.2 / Figure 5 on this column: every noise family of UCAN Table 1.

        For each noise family, λ is set for the per-coordinate std `setup.universality_std` (UCAN: variance 1), and
        isotropic, fine-tuned isotropic, pattern-fixed (ℓ2), universal and input-dependent noise are each trained from
        scratch and certified with `setup.universality_n` samples. In up to `workers` processes (stage TRAINING, their
        certification included): the isotropic models first, then the variants that start from them.

        Parameters
        ----------
        workers : int, optional
            The most worker processes (default one per core; the result does not depend on it).

        Returns
        -------
        pandas.DataFrame
            Long table (`ucan_runs.with_rows`): one row per input, variant and Table 1 row of its family, with columns noise,
            kind, method (`KIND_NAMES`) and lam.
        """
        x, y, idx = self.x, self.y, self.idx
        runs = []
        for noise in NOISES:
            a = FAMILIES[noise].exponent(self.d)
            lam = lambda_for_std(noise, self.setup.universality_std, d=self.d, a=a)
            runs += [Variant(kind, lam, self.chosen.get(kind), "l2", noise)
                     for kind in (ISOTROPIC_NPG, ISOTROPIC_FT, PATTERN_NPG, UNIVERSAL_NPG, INPUT_NPG)]
        with stage(TRAINING):
            first = [v for v in runs if v.kind == ISOTROPIC_NPG]
            done = dict(zip(first, self._certify_all(first, x, y, idx, self.setup.universality_n, "universality",
                                                     workers)))
            rest = [v for v in runs if v.kind != ISOTROPIC_NPG]
            done.update(zip(rest, self._certify_all(rest, x, y, idx, self.setup.universality_n, "universality",
                                                    workers)))
        frames = [with_rows(done[v], v.noise, self.d).assign(noise=v.noise, kind=v.kind, method=KIND_NAMES[v.kind],
                                                             lam=v.lam) for v in runs]
        return pd.concat(frames, ignore_index=True)

    # -- claim C9: soundness of input-dependent noise, and the memory-based repair -----------------------------
    def audit(self, variant: Variant, max_inputs: int | None = None) -> pd.DataFrame:
        """Claim C9 (UCAN Theorem 3.2's soundness): search each certified region for a point predicted otherwise.

        Every correctly certified test input's region (Theorem 3.2's ellipsoid with σ(x)) is searched, within the image
        domain [0, 1] (`data.PIXEL_DOMAIN`, `ucan.search_violation(domain=...)`), for a point x' whose own smoothed
        prediction (σ(x'), μ(x')) is another class; the best candidates (soft probability of the certified class
        < 1/2, lowest first, at most `setup.audit_verify`) are verified with `setup.audit_n` draws. Runs with
        `image_study.JOB_THREADS` torch threads (`audit_all` runs several audits at once). The variant must be in
        `runs` (`certify_test`).

        Parameters
        ----------
        variant : Variant
            A variant of `runs`.
        max_inputs : int, optional
            Search at most this many certified inputs (default all).

        Returns
        -------
        pandas.DataFrame
            One row per searched input: columns position, idx, label, r1 (the Gaussian ℓ2 R1), alm, soft_prob,
            delta_l2, scaled_norm (‖δ / θ‖₂), in_domain (x' in the image domain, up to `DOMAIN_ATOL`), delta (a
            tensor of the input's shape), verified, top, p_lower_top (the verification's, for the candidates).
        """
        with torch_threads(JOB_THREADS):
            return self._audit(variant, max_inputs)

    def _audit(self, variant: Variant, max_inputs: int | None) -> pd.DataFrame:
        """`audit` without the thread setting."""
        run = self.runs[variant]
        df = run.results
        gen = torch.Generator().manual_seed(self.seed + 7)
        rows = []
        certified = [k for k in range(len(df)) if df.correct.iloc[k] and df.predict.iloc[k] >= 0]
        for k in certified[:max_inputs]:
            x = self.x[k]
            sigma, _ = ucan.npg_maps(run.npg, x)
            theta = variant.lam * sigma.cpu()  # beside x and δ (the search copies them to the device)
            r1 = float(ucan.row_radii("gaussian/l2", np.array([df.p_lower.iloc[k]]), np.array([1.0]),
                                      np.array([0.0]), self.d)[0][0])
            delta, p_soft = ucan.search_violation(run.model, run.npg, x, int(df.predict.iloc[k]), theta, r1,
                                                  variant.noise, variant.lam, self.setup.audit_steps,
                                                  self.setup.audit_samples, gen, device=self.profile.device,
                                                  domain=PIXEL_DOMAIN, precision=self.profile.precision)
            x_prime = x + delta
            rows.append(dict(position=k, idx=int(df.idx.iloc[k]), label=int(df.label.iloc[k]), r1=r1,
                             alm=float(df.radius_proxy.iloc[k]), soft_prob=p_soft,
                             delta_l2=float(delta.norm()), scaled_norm=float((delta / theta).norm()),
                             in_domain=bool(float(x_prime.min()) >= PIXEL_DOMAIN[0] - DOMAIN_ATOL
                                            and float(x_prime.max()) <= PIXEL_DOMAIN[1] + DOMAIN_ATOL),
                             delta=delta))
        out = pd.DataFrame(rows)
        out["verified"] = False
        out["top"] = -1
        out["p_lower_top"] = np.nan
        if out.empty:
            return out
        cand = out[out.soft_prob < 0.5].sort_values("soft_prob").head(self.setup.audit_verify)
        vgen = torch.Generator().manual_seed(self.seed + 11)
        for i, row in cand.iterrows():
            x_prime = self.x[int(row.position)] + row.delta
            v = ucan.verify_violation(run.model, run.npg, x_prime, int(row.label), variant.noise, variant.lam,
                                      self.setup.audit_n, self.profile.alpha, self.column.work.num_classes, vgen,
                                      self.profile.batch_size, device=self.profile.device,
                                      precision=self.profile.precision)
            out.loc[i, ["verified", "top", "p_lower_top"]] = [v["violation"], v["top"], v["p_lower_top"]]
        return out

    def memory(self, variant: Variant, policy: str = SHRINK) -> pd.DataFrame:
        """ANCER Algorithm 1 (`experiment.apply_memory`) over this variant's certified regions, in test order.

        The regions are the ellipsoids x + θ(x) ⊙ B(Φ^-1(p_A')), θ(x) = λ σ(x), with the ℓ2 norm.

        Parameters
        ----------
        variant : Variant
            A variant of `runs`.
        policy : str, default `memory.SHRINK`
            One of `memory.POLICIES`.

        Returns
        -------
        pandas.DataFrame
            The variant's per-input rows with gap, and per input the final predict, radius (ℓ2), radius_proxy (ALM),
            correct and status.
        """
        run = self.runs[variant]
        return with_memory(run.results, run.npg, variant.lam, self.x, "gaussian/l2", policy)


def _selection_row(variant: Variant, df: pd.DataFrame) -> dict:
    """One row of `Study.select`'s table: validation accuracy (%), ACR, ACR~ (ALM) and geomean σ / λ."""
    return dict(kind=variant.kind, param="kappa" if variant.kind == PATTERN_NPG else "gamma", value=variant.param,
                accuracy=100 * df.correct.mean(), acr=average_certified_radius(df.radius, df.correct),
                acr_alm=average_certified_radius(df.radius_proxy, df.correct),
                gm_sigma=float(np.exp(df.log_gm_theta.mean())) / variant.lam)


#: relative cost of a variant's job by NPG kind (input-dependent NPGs train and evaluate a network per draw), so
#: that the slowest jobs are handed out first
_JOB_COST = {INPUT_NPG: 3, UNIVERSAL_NPG: 2, PATTERN_NPG: 1, ISOTROPIC_NPG: 1, ISOTROPIC_FT: 1}


def _certify_job(study: Study, variant: Variant, x: torch.Tensor, y: torch.Tensor, idx: np.ndarray, n: int,
                 split: str) -> pd.DataFrame:
    """One variant's training (or cached model) and certification, in a worker process."""
    return study._certify(variant, x, y, idx, n, split)[2]


def _select_job(study: Study, variant: Variant) -> pd.DataFrame:
    """One variant's training (or cached model) and certification on the study's validation inputs: a task of
    `select_all`'s plans."""
    x, y, idx = study.validation()
    return _certify_job(study, variant, x, y, idx, study.setup.val_n, "val")


def _test_job(study: Study, variant: Variant) -> pd.DataFrame:
    """One variant's training (or cached model) and certification on the study's test inputs (`certify_tests`)."""
    return _certify_job(study, variant, study.x, study.y, study.idx, study.column.setup.n, "test")


def certify_tests(studies: Sequence[Study], workers: int | None = None) -> list[pd.DataFrame]:
    """`Study.certify_test` of every study, all their variants in one pool of up to `workers` processes
    (`parallel.map_ordered`), the costliest first (input-dependent NPGs, then universal ones, then the rest; the larger
    images first). Each study's rows are those `certify_test` gives it alone. Counted as stage CERTIFY (the variants'
    training included).

    Parameters
    ----------
    studies : sequence of Study
        The columns' studies, each selected (`select` or `select_all`); each gets `runs`.
    workers : int, optional
        The most worker processes (default one per core; one on a GPU, `parallel.device_workers`).

    Returns
    -------
    list of pandas.DataFrame
        Each study's rows (`Study.certify_test`), in the order of `studies`.
    """
    jobs = [(st, variant) for st in studies for variant in st.variants()]
    for st in studies:
        workers = device_workers(st.profile.device, workers)
    jobs.sort(key=lambda job: (-_JOB_COST[job[1].kind], -job[0].d))  # stable: each study's variants in order
    with stage(CERTIFY):
        map_ordered(_test_job, jobs, workers)
    return [st._read_test() for st in studies]


def _steps(study: Study, variants: list[Variant]) -> Plan:
    """A plan of one step: the variants' jobs, nothing returned (`Study.select` starts its controls with it)."""
    yield [(study, v) for v in variants]


@timed(SELECTION)
def select_all(studies: Sequence[Study], workers: int | None = None, widen: int = UCAN_WIDEN) -> list[pd.DataFrame]:
    """`Study.select` of every study, all their searches in one pool of up to `workers` processes
    (`parallel.run_plans`): the costliest searches (input-dependent γ, then universal, then κ, then the controls;
    the larger images first) are handed out first, and one column's searches fill the cores another's dependent
    steps leave idle. Each study's table and choice are those `select` gives it alone. Counted as stage SELECTION.

    Parameters
    ----------
    studies : sequence of Study
        The columns' studies; each gets `chosen` and `selection`.
    workers : int, optional
        The most worker processes (default one per core; one on a GPU, `parallel.device_workers`).
    widen : int, default `UCAN_WIDEN`
        The most values beyond an edge of a grid, >= 0.

    Returns
    -------
    list of pandas.DataFrame
        Each study's selection table (`Study.select`), in the order of `studies`.
    """
    widen = check_count(widen, "widen", 0)
    ranked, counts = [], []
    for i, st in enumerate(studies):
        plans = st._selection_plans(widen)
        ranked += [(-cost, -st.d, i, j, plan) for j, (cost, plan) in enumerate(plans)]
        counts.append(len(plans))
        workers = device_workers(st.profile.device, workers)
    ranked.sort(key=lambda r: r[:4])
    outcomes = dict(zip([(i, j) for _, _, i, j, _ in ranked], run_plans(_select_job, [r[4] for r in ranked], workers)))
    return [st._selected([outcomes[i, j] for j in range(count)]) for i, (st, count) in enumerate(zip(studies, counts))]


def _audit_job(study: Study, variant: Variant) -> pd.DataFrame:
    """`Study.audit` of one (study, variant), in a worker process."""
    return study.audit(variant)


def audit_all(audits: list[tuple[Study, Variant]], workers: int | None = None) -> list[pd.DataFrame]:
    """`Study.audit` (claim C9) of every (study, variant), in the order given.

    In up to `workers` processes (`parallel.map_ordered`; the result does not depend on `workers`); in this process
    when a study's `profile.device` is a GPU (`parallel.device_workers`).

    Parameters
    ----------
    audits : list of (Study, Variant)
        Each variant must have its test certification done (`Study.certify_test`).
    workers : int, optional
        The most worker processes.

    Returns
    -------
    list of pandas.DataFrame
        `Study.audit`'s table per entry of `audits`.
    """
    missing = [(st.column.setup.name, v) for st, v in audits if v not in st.runs]
    if missing:
        raise ValueError(f"audits need each variant certified on the test inputs first (certify_test), missing {missing}")
    for st, _ in audits:
        workers = device_workers(st.profile.device, workers)
    return map_ordered(_audit_job, list(audits), workers)


def accuracy_rows(results: pd.DataFrame, radii=TABLE_RADII, group: str = "method") -> pd.DataFrame:
    """UCAN Tables 2-3's rows: certified accuracy (%) at `radii` w.r.t. the ℓ2 radius and w.r.t. the ALM.

    Each is the best over λ within each group (as UCAN Tables 2-3 and ANCER Table 1 report best over σ), with the
    ACR and ACR~ (the mean; also best over λ).

    Parameters
    ----------
    results : pandas.DataFrame
        Per-input rows with columns `group`, lam, radius, radius_proxy, correct.
    radii : sequence of float, default `TABLE_RADII`
        The radii (and ALM levels).
    group : str, default "method"
        The column naming a row of the table.

    Returns
    -------
    pandas.DataFrame
        Indexed by (method, "w.r.t." in {"radius", "ALM"}), with one column per radius ("0", "0.25", ...) and mean
        (ACR for "radius", ACR~ for "ALM").
    """
    rows = []
    for name, g in results.groupby(group, sort=False):
        for measure, col in (("radius", "radius"), ("ALM", "radius_proxy")):
            best = np.max([certified_accuracy(gl[col], gl.correct, list(radii)) for _, gl in g.groupby("lam")], axis=0)
            acr = max(average_certified_radius(gl[col], gl.correct) for _, gl in g.groupby("lam"))
            rows.append({"method": name, "w.r.t.": measure, **{f"{r:g}": 100 * v for r, v in zip(radii, best)},
                         "mean": acr})
    return pd.DataFrame(rows).set_index(["method", "w.r.t."])


def improvement_over_baseline(table: pd.DataFrame, ours: str, baselines: list[str]) -> pd.Series:
    """UCAN's "Improvement over Baseline (%)" per radius (Tables 2-3).

    100 (best of our two rows / best baseline row - 1), the baselines read w.r.t. the ℓ2 radius (as UCAN Tables 2-3
    read ANCER); inf or NaN where the best baseline is 0.

    Parameters
    ----------
    table : pandas.DataFrame
        `accuracy_rows`' table, indexed by (method, "w.r.t.").
    ours : str
        The method whose two rows ("radius", "ALM") count.
    baselines : list of str
        The baseline methods.

    Returns
    -------
    pandas.Series
        Indexed by the radius columns (all but "mean").
    """
    cols = [c for c in table.columns if c != "mean"]
    best_ours = table.loc[ours, cols].max()
    best_base = table.loc[[(b, "radius") for b in baselines], cols].max()
    with np.errstate(divide="ignore", invalid="ignore"):
        return 100 * (best_ours / best_base - 1)
