"""Run settings: `quick` (the default, CPU, data that ships with installed packages), `paper` and `paper-imagenet`
(the papers' settings, for users with CIFAR-10/ImageNet and a GPU), `fmnist` (the papers' protocol on Fashion-MNIST
at full size, for a GPU) and `paper-smoke` (the paper path at toy size, on the CPU). Notebooks take `profile` as a papermill
parameter and read everything else from here.

Notebook 03 certifies one or more `ImageSetup`s, each a column of ANCER's results: the quick profile
puts the 8x8 digits (MLP) in the place of CIFAR-10 and MNIST-5k (a small CNN) in the place of ImageNet,
plus a digits CNN so that the model's effect can be told from the image size's.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..core import devices
from ..core.certify import AUTO, BATCH_SIZE, DRAWS, resolve_draws
from ..core.names import NOISE_OF
from ..core.precision import EXACT, check_precision
from ..core.validation import check_choice, check_count, check_file_name, check_positive, check_probability
from ..methods.registry import ANCER, ISOTROPIC
from ..models.recipes import get_recipe

#: the datasets an ImageSetup may name, and its base classifiers: the quick profile's trained models, or
#: (paper profiles) Cohen-format checkpoints (`setups.prepare` and `setups.build_model` act on them)
DATASETS = ("digits", "mnist", "cifar10", "imagenet", "fmnist")
MODELS = ("mlp", "mlp_softplus", "cnn", "cnn_softplus", "checkpoint")


@dataclass(frozen=True)
class ImageSetup:
    """One dataset column of notebook 03 (ANCER §7.1-7.2): data, base classifiers, test and validation
    inputs, noise levels, certification and step-size selection."""
    name: str                           # names the result folders and figures, e.g. "digits", "mnist"
    dataset: str                        # digits | mnist | cifar10 | imagenet
    column: str                         # the paper's column it stands in for: "CIFAR-10" or "ImageNet"
    model: str = "mlp"                  # quick: "mlp", "mlp_softplus", "cnn" or "cnn_softplus", trained here; paper: checkpoints
    hidden: tuple[int, ...] = (64, 64)  # MLP hidden widths
    epochs: int = 40
    sigmas_l2: tuple[float, ...] = (0.12, 0.25, 0.5, 1.0)
    sigmas_l1: tuple[float, ...] = (0.25, 0.5, 1.0)
    num_test: int | None = 150          # stratified subset of the test split (None: all of it)
    num_val: int = 100                  # validation inputs used to choose step sizes
    n: int = 100_000                    # CERTIFY's N on the test inputs (ANCER App. E: 100,000)
    val_n: int = 10_000                 # CERTIFY's N on the validation split
    iso_lr_grid: tuple[float, ...] = (0.001, 0.01, 0.1, 1.0)    # multiples of the training theta
    ancer_lr_grid: tuple[float, ...] = (0.001, 0.01, 0.04, 0.1)
    iterations: int = 100               # optimization steps of Isotropic DD and of ANCER (the paper's)
    samples: int = 100                  # noise samples per step (the paper's)
    # checkpoint models: the recipes (`models.recipes.RECIPES`) that train a missing checkpoint of each norm
    # (`ancer-certify checkpoints`); None: the checkpoints are placed by hand
    recipe_l2: str | None = None
    recipe_l1: str | None = None

    def __post_init__(self) -> None:
        """Field contracts: name a plain file-name component (it names cache and result files: no path separator,
        not '..'); dataset one of DATASETS and model one of MODELS; hidden a tuple of widths >= 1; counts >= 1 (iterations >= 0); sigmas_l2, sigmas_l1 and the two
        step-size grids tuples (or lists) of finite numbers > 0, the grids non-empty and at least one sigma."""
        check_file_name(self.name, "name")
        check_choice(self.dataset, "dataset", DATASETS)
        check_choice(self.model, "model", MODELS)
        # a negative num_val would slice all but the last few validation inputs
        if self.num_test is not None:
            check_count(self.num_test, "num_test")
        for name in ("epochs", "num_val", "n", "val_n", "samples"):
            check_count(getattr(self, name), name)
        check_count(self.iterations, "iterations", 0)
        if not isinstance(self.hidden, (tuple, list)):
            raise TypeError(f"hidden must be a tuple of layer widths, got {type(self.hidden).__name__} {self.hidden!r}")
        for h in self.hidden:
            check_count(h, "hidden")
        for name in ("sigmas_l2", "sigmas_l1", "iso_lr_grid", "ancer_lr_grid"):
            values = getattr(self, name)
            if not isinstance(values, (tuple, list)):
                raise TypeError(f"{name} must be a tuple of numbers, got {type(values).__name__} {values!r}")
            if not values and name.endswith("_grid"):
                raise ValueError(f"{name} must hold at least one step size, got {values!r}")
            for v in values:
                check_positive(v, name)
        for norm in ("l2", "l1"):
            name = getattr(self, f"recipe_{norm}")
            if name is None:
                continue
            recipe = get_recipe(name)
            if self.model != "checkpoint":
                raise ValueError(f"recipe_{norm} trains checkpoints; setup {self.name!r} trains its {self.model!r} "
                                 f"models itself (model='checkpoint' takes recipes), got recipe_{norm} = {name!r}")
            if recipe.dataset != self.dataset or recipe.noise != NOISE_OF[norm]:
                raise ValueError(f"recipe_{norm} must train on {self.dataset} with {NOISE_OF[norm]} noise; {name!r} "
                                 f"trains on {recipe.dataset} with {recipe.noise} noise")
        if not (self.sigmas_l2 or self.sigmas_l1):
            raise ValueError(f"an ImageSetup needs at least one noise level, got sigmas_l2 = {self.sigmas_l2!r} and "
                             f"sigmas_l1 = {self.sigmas_l1!r}")

    @property
    def step_grids(self) -> dict[str, tuple[float, ...]]:
        """The relative step sizes selection tries, by method name (`selection.select_settings`' grids)."""
        return {ISOTROPIC: self.iso_lr_grid, ANCER: self.ancer_lr_grid}


@dataclass(frozen=True)
class UcanSetup:
    """One dataset column of notebook 07 (UCAN): it extends notebook 03's column `column` (its data, test inputs
    and Cohen-trained models, which the UCAN models are fine-tuned from) with the three NPGs of UCAN §4."""
    column: str                               # the notebook-03 column (ImageSetup.name) it extends
    lams: tuple[float, ...] = (0.25, 0.5)     # λ: the isotropic scale the NPG's σ multiplies (Eq. 2)
    selection_lam: float = 0.25               # λ at which κ and γ are chosen on the validation split
    epochs: int = 20                          # joint fine-tuning epochs from the Cohen model at σ = λ
    kappas: tuple[float, ...] = (0.01, 0.1, 1.0)   # pattern-fixed κ (ι = 1; Figure 3 uses κ = ι = 1)
    gammas: tuple[float, ...] = (1.0, 2.0, 5.0)    # γ of the trained NPGs (paper: 5 universal, 1 input-dependent)
    growth: int = 4                           # channels each conv of the input-dependent NPG adds
    num_test: int | None = 100                # inputs of notebook 03's test subset (every k-th; None: all)
    num_val: int = 50                         # validation inputs for κ and γ
    val_n: int = 2_000                        # CERTIFY's N on the validation inputs
    audit_steps: int = 50                     # PGD steps of the soundness search (claim C9)
    audit_samples: int = 64                   # noise draws per step
    audit_n: int = 100_000                    # N when a candidate violation is re-estimated
    audit_verify: int = 10                    # at most this many candidates verified per NPG
    universality: bool = False                # Figure 5 (all noise families of Table 1) on this column
    universality_std: float = 0.5             # per-coordinate noise std of every family (paper: 1)
    universality_n: int = 10_000
    universality_epochs: int = 20             # isotropic models from scratch (no Cohen model for most families)

    def __post_init__(self) -> None:
        if self.num_test is not None:
            check_count(self.num_test, "num_test")
        for name in ("epochs", "growth", "num_val", "val_n", "audit_steps", "audit_samples", "audit_n",
                     "universality_n", "universality_epochs"):
            check_count(getattr(self, name), name)
        check_count(self.audit_verify, "audit_verify", 0)
        for name in ("lams", "kappas", "gammas"):
            if not getattr(self, name):
                raise ValueError(f"{name} must hold at least one value, got {getattr(self, name)!r}")
            for v in getattr(self, name):
                check_positive(v, name)
        check_positive(self.selection_lam, "selection_lam")
        check_positive(self.universality_std, "universality_std")


@dataclass(frozen=True)
class Profile:
    name: str
    # certification (Cohen et al.; ANCER App. E): N0 selection samples, N estimation samples, alpha
    n0: int = 100
    n: int = 100_000
    alpha: float = 0.001
    batch_size: int = BATCH_SIZE        # noise draws per forward batch (`certify.BATCH_SIZE`)
    # Monte Carlo sizes for the numerical checks of notebook 01
    mc_samples: int = 200_000
    # samples per point when notebook 02 re-estimates the smoothed prediction inside certified regions
    check_samples: int = 20_000
    # points per axis of the grid that fills each certified region in notebook 02
    check_grid: int = 25
    # notebook 03's columns
    images: tuple[ImageSetup, ...] = field(default_factory=tuple)
    # notebook 06's columns (RANCER, l2 only): smooth-activation models, whose input Hessian is informative
    rancer: tuple[ImageSetup, ...] = field(default_factory=tuple)
    # notebook 07's columns (UCAN), each extending a column of `images`
    ucan: tuple[UcanSetup, ...] = field(default_factory=tuple)
    # where the base classifiers run (model loading, CERTIFY, the optimizations, RANCER's Hessian, UCAN's
    # generators and training): "auto" (CUDA when available, else the CPU), "cpu", or a CUDA device by name
    # (`devices.check_setting`; resolved by `devices.resolve` when used). Not part of any cache key or run manifest:
    # with CPU draws the noise is the same whatever the device, so a certificate depends on it only through the
    # model's rounding; draws made on the device are recorded (`draws` below)
    device: str = "cpu"
    # the arithmetic of the base classifiers' forward passes in CERTIFY and the optimizations (`precision.PRECISIONS`:
    # "exact", "tf32", "bf16"), and where their noise is drawn (`certify.DRAWS`: "auto" draws on the device when it
    # is a GPU, "cpu", "device"); the run keys and manifests record them unless exact with CPU draws
    precision: str = EXACT
    draws: str = AUTO

    def __post_init__(self) -> None:
        for name in ("n0", "n", "batch_size", "mc_samples", "check_samples", "check_grid"):
            check_count(getattr(self, name), name)
        check_probability(self.alpha, "alpha")
        devices.check_setting(self.device, "device")
        check_precision(self.precision, "precision")
        check_choice(self.draws, "draws", DRAWS)

    def numerics(self) -> dict:
        """The profile's `precision` and `draws` as the runs, selections and run keys take them.

        Returns
        -------
        dict
            precision, and draws resolved on the profile's device ("cpu" or "device", `certify.resolve_draws`).
        """
        return dict(precision=self.precision, draws=resolve_draws(self.draws, devices.resolve(self.device)))


# The quick profile certifies with N = 10,000 on every column (ANCER App. E: 100,000), a trade made to keep
# `make all` within 30 minutes on 2 cores: N costs time linearly and is the same for every method, so it
# moves every method's radii alike; it lowers the largest certifiable radius from 3.81 sigma to 3.20 sigma
# (alpha = 0.001, notebook 03's `confidence_cap`) and widens each Clopper-Pearson bound.
DIGITS = ImageSetup("digits", "digits", "CIFAR-10", n=10_000)
# MNIST-5k with a small CNN: a smaller optimization budget and fewer inputs, so that notebook 03 stays within
# its budget on 2 cores (CERTIFY on 784 pixels costs ~0.3 s per input at N = 10,000 on one thread). It stands in
# for ImageNet, so its l2 noise levels are the paper's ImageNet ones, σ ∈ {0.25, 0.5, 1.0} (ANCER §7.1 and
# App. G.1, Figures 7 and 9; CIFAR-10 adds 0.12), as are its l1 ones (App. G.2)
MNIST = ImageSetup("mnist", "mnist", "ImageNet", model="cnn", epochs=30, sigmas_l2=(0.25, 0.5, 1.0), num_test=80,
                   num_val=40, n=10_000, val_n=2_000, iso_lr_grid=(0.001, 0.01, 0.1),
                   ancer_lr_grid=(0.01, 0.04, 0.1), iterations=50, samples=50)
# the same CNN, budget and noise levels on the digits: against `mnist` it isolates the data, against `digits`
# the model
DIGITS_CNN = replace(MNIST, name="digits_cnn", dataset="digits", column="CIFAR-10", epochs=40, num_test=150)

# RANCER (notebook 06): the same data, budgets and step-size grids with softplus activations, at σ = 0.25
# (l2), on fewer inputs (each MNIST image needs its 784 × 784 input Hessian and its eigendecomposition) so that
# the notebook stays under 10 minutes; the MNIST model is notebook 05's Figure 4 model (same name and recipe, one
# cache file)
RANCER_DIGITS = replace(DIGITS, name="digits_softplus", model="mlp_softplus", sigmas_l2=(0.25,), sigmas_l1=(),
                        num_test=100, num_val=50)
RANCER_MNIST = replace(MNIST, name="mnist_softplus", model="cnn_softplus", sigmas_l2=(0.25,), sigmas_l1=(),
                       num_test=40, num_val=30)

# UCAN (notebook 07): digits (MLP) and MNIST-5k (CNN) at λ in {0.25, 0.5, 1.0} (1.0: the λ of UCAN §5.1's sentence on
# pattern-fixed noise, claim C8), fine-tuned from notebook 03's models, on 100 resp. 40 of notebook 03's test inputs
# so that the notebook stays under 10 minutes; Figure 5 on digits
UCAN_DIGITS = UcanSetup("digits", lams=(0.25, 0.5, 1.0), epochs=20, num_test=100, universality=True)
UCAN_MNIST = UcanSetup("mnist", lams=(0.25, 0.5, 1.0), epochs=10, num_test=40, num_val=30, audit_verify=6)

PROFILES = {
    # the quick profile runs on the CPU on every machine: its numbers are the same bit for bit everywhere
    "quick": Profile("quick", images=(DIGITS, MNIST, DIGITS_CNN), rancer=(RANCER_DIGITS, RANCER_MNIST),
                     ucan=(UCAN_DIGITS, UCAN_MNIST)),
    # ANCER §7 on CIFAR-10: ResNet-18 (l2, App. E.1) and WideResNet-40 (l1, App. E.2) checkpoints, trained by
    # `ancer-certify checkpoints --profile paper` when absent
    "paper": Profile("paper", mc_samples=2_000_000, check_samples=100_000, check_grid=41, device="auto",
                     images=(ImageSetup("cifar10", "cifar10", "CIFAR-10", model="checkpoint", num_test=None,
                                        num_val=500, recipe_l2="cifar10_l2_resnet18", recipe_l1="cifar10_l1_wrn40"),),
                     # RANCER §4: ANCER's CIFAR-10 ResNet18 (ReLU: its input Hessian has rank <= 9, see notebook 06)
                     rancer=(ImageSetup("cifar10_rancer", "cifar10", "CIFAR-10", model="checkpoint", sigmas_l2=(0.25,),
                                        sigmas_l1=(), num_test=500, num_val=100, recipe_l2="cifar10_l2_resnet18"),),
                     # UCAN §5: CIFAR-10 at Cohen et al.'s σ grid, the whole test set, unit-variance noise for Fig. 5
                     ucan=(UcanSetup("cifar10", lams=(0.12, 0.25, 0.5, 1.0), epochs=30, num_test=None, num_val=500,
                                     val_n=10_000, universality=True, universality_std=1.0),)),
    # ANCER §7: ImageNet with sigma in {0.25, 0.5, 1.0} for both shapes, 500 validation images
    "paper-imagenet": Profile("paper-imagenet", mc_samples=2_000_000, check_samples=100_000, check_grid=41,
                              batch_size=400, device="auto",
                              images=(ImageSetup("imagenet", "imagenet", "ImageNet", model="checkpoint",
                                                 sigmas_l2=(0.25, 0.5, 1.0), num_test=500, num_val=100),)),
    # Fashion-MNIST at full size, the papers' protocol on a real benchmark that installs offline (`apt-get install
    # dataset-fashion-mnist`): one-channel CIFAR ResNet-18s trained by `ancer-certify checkpoints` on the first 55,000
    # training images (the last 5,000 are held out: step sizes are chosen on 500 of them), N = 100,000 and the papers'
    # optimization budget (100 steps of 100 samples), Algorithm 1, every 10th of the 10,000 test images (1,000: the
    # whole set costs ten times as much GPU time). It stands in for the CIFAR-10 column (its radii and paper rows).
    # RANCER (notebook 06) on 200 of them at σ = 0.25 and UCAN (notebook 07) on all 1,000, as the paper profile
    "fmnist": Profile("fmnist", device="auto", images=(ImageSetup(
        "fmnist", "fmnist", "CIFAR-10", model="checkpoint", num_test=1_000, num_val=500, recipe_l2="fmnist_l2_resnet18",
        recipe_l1="fmnist_l1_resnet18"),),
        rancer=(ImageSetup("fmnist_rancer", "fmnist", "CIFAR-10", model="checkpoint", sigmas_l2=(0.25,), sigmas_l1=(),
                           num_test=200, num_val=100, recipe_l2="fmnist_l2_resnet18"),),
        ucan=(UcanSetup("fmnist", lams=(0.12, 0.25, 0.5, 1.0), epochs=30, num_test=None, num_val=500, val_n=10_000,
                        universality=True, universality_std=1.0),)),
    # The paper profile's path at toy size, on the CPU in about a minute: CIFAR-10's python batches (the real ones, or
    # generated ones in their format), checkpoints trained by the tiny recipes, step sizes chosen on the validation
    # split, sharded certification, merge and notebook 03 (tests/test_paper_path.py runs it end to end), so that a
    # broken paper path shows before GPU-hours are spent on it; its numbers say nothing about the paper's claims. Its ℓ2
    # grid holds the σ notebook 05 reads (0.25: App. G.3's gap; 1.0: Figure 16); RANCER and UCAN columns for 06-07
    "paper-smoke": Profile("paper-smoke", device="auto", images=(ImageSetup(
        "cifar10", "cifar10", "CIFAR-10", model="checkpoint", sigmas_l2=(0.25, 1.0), sigmas_l1=(0.25,), num_test=4,
        num_val=4, n=200, val_n=100, iso_lr_grid=(0.01, 0.1, 1.0), ancer_lr_grid=(0.01, 0.04, 0.1), iterations=3,
        samples=8, recipe_l2="tiny_cifar10_l2", recipe_l1="tiny_cifar10_l1"),),
        rancer=(ImageSetup("cifar10_rancer", "cifar10", "CIFAR-10", model="checkpoint", sigmas_l2=(0.25,), sigmas_l1=(),
                           num_test=3, num_val=3, n=200, val_n=100, iso_lr_grid=(0.01, 0.1, 1.0),
                           ancer_lr_grid=(0.01, 0.04, 0.1), iterations=3, samples=8, recipe_l2="tiny_cifar10_l2"),),
        ucan=(UcanSetup("cifar10", lams=(0.25,), epochs=1, kappas=(1.0,), gammas=(1.0,), num_test=4, num_val=4,
                        val_n=200, audit_steps=3, audit_samples=8, audit_n=1_000, audit_verify=1),)),
}


def get_profile(name: str) -> Profile:
    """The profile called `name` (a str, one of `PROFILES`).

    Parameters
    ----------
    name : str
        A key of `PROFILES` ("quick", "paper", "paper-imagenet", "fmnist", "paper-smoke"); TypeError when not a
        str, ValueError when unknown.

    Returns
    -------
    Profile
        `PROFILES[name]`.
    """
    if not isinstance(name, str):
        raise TypeError(f"profile name must be a str, one of {sorted(PROFILES)}, got {type(name).__name__} {name!r}")
    if name not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {name!r}")
    return PROFILES[name]
