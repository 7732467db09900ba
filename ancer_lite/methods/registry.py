"""The smoothing methods, one object each, and the one registry that runs, selection, shards, the command line
and the studies iterate over.

A method says who it is (`name`, the key of logs, folders and the command line; `label`, its display name), how it
finds an input's smoothing parameters (`optimize`, from the training scale θ0 or from another method's
parameters, `start`), which stream its draws come from (`purpose`, `streams.stream`), whether its certificates go
through ANCER's memory (`memory`: Algorithm 1 keeps a data-dependent classifier sound), by which validation
objective its step size is chosen (`objective`, with the settings field it tunes, `step`), and whether its
parameters include a rotation (`rotated`: RANCER's rotated ellipsoids, certified by `runs.rancer_runs`).

    name        label          optimize                                    start       memory   step
    fixed       Fixed σ        θ0 everywhere (Cohen et al.)                -           no       -
    isotropic   Isotropic DD   one σ per input (Alfarra et al. 2020)       -           yes      iso_lr
    ancer       ANCER          a diagonal Θ per input (App. C, Listing 1)  isotropic   yes      ancer_lr
    rancer      RANCER         U and Σ̂ per input (seed 002, Algorithm 1)   isotropic   yes      (RancerSettings)

A new method is one class (a subclass of `SmoothingMethod` overriding `optimize`, and `objective` when its
selection maximizes something other than the validation ACR) and one `register` call; CONTRIBUTING.md walks
through it.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import torch

from ..core.certify import AUTO, resolve_draws
from ..core.precision import EXACT, check_precision
from ..core.streams import ANCER, ISOTROPIC, RANCER, register_purpose
from ..core.validation import check_choice, check_count, check_positive
from .optimize import input_streams, optimize_ancer, optimize_isotropic


@dataclass(frozen=True)
class OptimSettings:
    """Hyperparameters of the sample-wise optimizations of Isotropic DD and ANCER (chosen on a validation split).

    Parameters
    ----------
    iso_iterations, ancer_iterations : int
        Gradient steps of each optimization, >= 0.
    iso_lr, ancer_lr : float
        Step sizes, finite and > 0 (absolute, in pixel units).
    iso_samples, ancer_samples : int
        Monte Carlo draws per step and input, >= 1.
    kappa : float
        ANCER's weight of the ℓp radius in its relaxed objective (App. C), finite and > 0.
    chunk : int
        Inputs optimized together, >= 1 (each input draws from its own streams, so the result does not depend
        on it).
    """
    iso_iterations: int = 100
    iso_lr: float = 1e-3
    iso_samples: int = 100
    ancer_iterations: int = 100
    ancer_lr: float = 0.01
    ancer_samples: int = 100
    kappa: float = 2.0
    chunk: int = 128

    def __post_init__(self) -> None:
        for name in ("iso_iterations", "ancer_iterations"):
            check_count(getattr(self, name), name, 0)
        for name in ("iso_samples", "ancer_samples", "chunk"):
            check_count(getattr(self, name), name)
        for name in ("iso_lr", "ancer_lr", "kappa"):
            check_positive(getattr(self, name), name)


@dataclass(frozen=True)
class SmoothingMethod:
    """One smoothing method: what the registry knows of it (see the module's table).

    Parameters
    ----------
    name : str
        The method's key (logs, run folders, `--method`).
    label : str
        Its display name in tables and figures.
    purpose : str or None
        The stream purpose of its optimization's draws (one of `streams.PURPOSES`, or a new name that `register`
        makes one), None when it draws nothing.
    start : str or None
        The method whose parameters its optimization starts from (run first, its θ passed to `optimize`).
    memory : bool
        Whether its certificates go through ANCER's memory (Algorithm 1).
    step : str or None
        The `OptimSettings` field its step size is chosen in on the validation split (`runs.selection`).
    iterations : str or None
        The `OptimSettings` field of its number of optimization steps (None: it does not optimize).
    rotated : bool
        Whether its parameters include a rotation U (certified by `runs.rancer_runs`, not `experiment.run_method`).
    """
    name: str
    label: str
    purpose: str | None = None
    start: str | None = None
    memory: bool = True
    step: str | None = None
    iterations: str | None = None
    rotated: bool = False

    def optimize(self, model: torch.nn.Module, x: torch.Tensor, noise: str, theta0: float, settings: OptimSettings,
                 seed: int, keys: list[int], start: torch.Tensor | None) -> torch.Tensor:
        """The smoothing parameters θ of a chunk of inputs. A method may also take the keywords `precision` (the
        forward passes' arithmetic, `precision.PRECISIONS`) and `draws` (where its noise is drawn, for its
        `streams`); `run_optimize` passes them to one that does.

        Parameters
        ----------
        model : torch.nn.Module
            The base classifier (logits), on x's device.
        x : torch.Tensor, shape (B, *input_shape)
            The inputs, on the model's device.
        noise : str
            The noise family's name.
        theta0 : float
            The training scale (> 0).
        settings : OptimSettings
        seed : int
            The run's seed; input k's draws come from `streams.stream(seed, keys[k], self.purpose)`.
        keys : list of int, length B
            The inputs' stream keys (their dataset indices).
        start : torch.Tensor of shape (B,) or (B, *input_shape), or None
            The `start` method's parameters of the same inputs (on the CPU), None when `start` is None.

        Returns
        -------
        torch.Tensor, shape (B,) or (B, *input_shape)
            One scale per input, or one per input and dimension, finite and > 0.
        """
        raise NotImplementedError(f"method {self.name!r} has no optimize()")

    def objective(self, acr: float, acr_proxy: float, kappa: float) -> float:
        """The validation objective its step size maximizes (`runs.selection`): the validation ACR of the ℓp
        radius, unless a method says otherwise."""
        return acr

    def streams(self, noise: str, x: torch.Tensor, seed: int, keys: list[int], draws: str = AUTO) -> list:
        """One stream per input of x on its `purpose` stream (`optimize.input_streams`: a `noise.DrawStream` on the
        CPU, or with draws resolving to "device" a `noise.BlockDrawStream` on x's device)."""
        return input_streams(noise, x, seed, keys, self.purpose, draws)

    def run_optimize(self, model: torch.nn.Module, x: torch.Tensor, noise: str, theta0: float,
                     settings: OptimSettings, seed: int, keys: list[int], start: torch.Tensor | None, *,
                     precision: str = EXACT, draws: str = AUTO, **extra: object) -> torch.Tensor:
        """`optimize` in a precision and with draws made where asked: both passed on as keywords to an `optimize`
        that takes them. One that does not take them computes in exact precision and draws where its `streams`
        default puts the draws ("auto"), so it is refused another precision or draws that resolve elsewhere.

        Parameters
        ----------
        model, x, noise, theta0, settings, seed, keys, start
            As `optimize`'s.
        precision : str
            One of `precision.PRECISIONS`.
        draws : str
            One of `certify.DRAWS` ("auto", "cpu", "device"), resolved on x's device (`certify.resolve_draws`).
        **extra
            Further keywords for `optimize` (ANCER's `rotation`).

        Returns
        -------
        torch.Tensor, shape (B,) or (B, *input_shape)
            `optimize`'s parameters.
        """
        check_precision(precision)
        resolved = resolve_draws(draws, x.device)
        takes = inspect.signature(self.optimize).parameters
        wanted = {}
        for name, value, plain in (("precision", precision, precision == EXACT),
                                   ("draws", draws, resolved == resolve_draws(AUTO, x.device))):
            if name in takes:
                wanted[name] = value
            elif not plain:
                raise ValueError(f"{name} {value!r}: method {self.name!r} does not take a {name} (its optimize "
                                 f"computes in exact precision and draws where its streams' default puts them)")
        return self.optimize(model, x, noise, theta0, settings, seed, keys, start, **extra, **wanted)


@dataclass(frozen=True)
class Fixed(SmoothingMethod):
    """Cohen et al.'s CERTIFY at the training scale θ0: no optimization and no memory."""

    def optimize(self, model, x, noise, theta0, settings, seed, keys, start, *, precision=EXACT, draws=AUTO):
        return torch.full((len(x),), float(theta0))


@dataclass(frozen=True)
class Isotropic(SmoothingMethod):
    """Isotropic DD (Alfarra et al. 2020): one σ per input, by gradient ascent on σ · gap from θ0
    (`optimize.optimize_isotropic`)."""

    def optimize(self, model, x, noise, theta0, settings, seed, keys, start, *, precision=EXACT, draws=AUTO):
        return optimize_isotropic(model, x, theta0, noise, iterations=settings.iso_iterations, lr=settings.iso_lr,
                                  samples=settings.iso_samples, generator=self.streams(noise, x, seed, keys, draws),
                                  precision=precision).cpu()


@dataclass(frozen=True)
class Ancer(SmoothingMethod):
    """ANCER (App. C, Listing 1): a diagonal Θ per input, ascending the proxy radius plus κ times the ℓp radius
    from Isotropic DD's σ (`optimize.optimize_ancer`); selected by the validation mean of (R̃ + κ R) 1(correct)."""

    def optimize(self, model, x, noise, theta0, settings, seed, keys, start, rotation=None, *, precision=EXACT,
                 draws=AUTO):
        """As `SmoothingMethod.optimize`; rotation: None, or orthogonal matrices (B, n, n) on x's device for
        ANCER's objective with RANCER's rotated noise U (θ ⊙ z) (`optimize.optimize_ancer`)."""
        return optimize_ancer(model, x, start.to(x.device), noise, iterations=settings.ancer_iterations,
                              lr=settings.ancer_lr, samples=settings.ancer_samples, kappa=settings.kappa,
                              generator=self.streams(noise, x, seed, keys, draws), rotation=rotation,
                              precision=precision).cpu()

    def objective(self, acr, acr_proxy, kappa):
        return acr_proxy + kappa * acr


@dataclass(frozen=True)
class Rancer(Ancer):
    """RANCER (seed 002, Algorithm 1): the input-Hessian rotation U and per-axis scales Σ̂ clipped around Isotropic
    DD's σ, with its own settings (`rancer.RancerSettings`) and run (`runs.rancer_runs`); selected by ANCER's
    objective."""

    def optimize(self, model, x, noise, theta0, settings, seed, keys, start):
        raise NotImplementedError("RANCER's parameters include a rotation: `rancer.rancer_parameters` computes them "
                                  "and `runs.rancer_runs.run_rancer` certifies them")


#: every method by name, in the order of tables and figures
METHODS: dict[str, SmoothingMethod] = {}


def register(method: SmoothingMethod) -> SmoothingMethod:
    """Add `method` to the registry (after the others) and return it.

    Parameters
    ----------
    method : SmoothingMethod
        A method whose name is new, whose `start` is a registered method and whose `purpose` is a stream purpose.

    Returns
    -------
    SmoothingMethod
        `method` itself.
    """
    if not isinstance(method, SmoothingMethod):
        raise TypeError(f"method must be a SmoothingMethod, got {type(method).__name__} {method!r}")
    if not method.name or method.name in METHODS:
        raise ValueError(f"method.name must be a new method's name (not one of {list(METHODS)}), got {method.name!r}")
    if method.start is not None and method.start not in METHODS:
        raise ValueError(f"method.start must name a registered method ({list(METHODS)}), got {method.start!r}")
    if method.purpose is not None:
        register_purpose(method.purpose)
    METHODS[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove the method called `name` (no method may start from it)."""
    check_choice(name, "name", tuple(METHODS))
    users = [m.name for m in METHODS.values() if m.start == name]
    if users:
        raise ValueError(f"method {name!r} cannot be removed: {users} start from it")
    del METHODS[name]


def method(name: str | SmoothingMethod) -> SmoothingMethod:
    """The registered method called `name` (a SmoothingMethod is returned as it is); a ValueError naming
    `method` and the registered names otherwise."""
    if isinstance(name, SmoothingMethod):
        return name
    return METHODS[check_choice(name, "method", tuple(METHODS))]


def names(rotated: bool | None = None) -> tuple[str, ...]:
    """The registered methods' names in order; `rotated` False (True) keeps those without (with) a rotation."""
    return tuple(m.name for m in METHODS.values() if rotated is None or m.rotated == rotated)


def with_starts(wanted: list[str] | tuple[str, ...]) -> list[str]:
    """The methods to run for `wanted` (registered names), in the registry's order, with every method they start
    from added (ANCER needs Isotropic DD's θ)."""
    need = set()
    todo = [method(m).name for m in wanted]
    while todo:
        name = todo.pop()
        if name not in need:
            need.add(name)
            if METHODS[name].start is not None:
                todo.append(METHODS[name].start)
    return [m for m in METHODS if m in need]


def expand(theta: torch.Tensor, x: torch.Tensor) -> np.ndarray:
    """Per-input parameters (B,) or (B, *input_shape) as a float32 array of x's shape (B, *input_shape)."""
    t = theta.detach().cpu()
    if t.shape == (len(x),):
        t = t.view(-1, *([1] * (x.ndim - 1))).expand(tuple(x.shape))
    return t.numpy().astype(np.float32, copy=False)


register(Fixed("fixed", "Fixed σ", memory=False))
register(Isotropic("isotropic", "Isotropic DD", purpose=ISOTROPIC, step="iso_lr", iterations="iso_iterations"))
register(Ancer("ancer", "ANCER", purpose=ANCER, start="isotropic", step="ancer_lr", iterations="ancer_iterations"))
register(Rancer("rancer", "RANCER", purpose=RANCER, start="isotropic", rotated=True))
