"""The smoothing methods, one object each, and the one registry that runs, selection, shards, the command line
and the studies iterate over.

A method says who it is (`name`, the key of logs, folders and the command line; `label`, its display name), how it
finds an input's smoothing parameters (`optimize`, from the training scale θ0 or from another method's
parameters, `start`), which stream its draws come from (`purpose`, `streams.stream`), whether its certificates go
through ANCER's memory (`memory`: Algorithm 1 keeps a data-dependent classifier sound), its settings dataclass
(`settings`: one value per run, all of them in `OptimSettings`), by which validation objective its step size is
chosen (`objective`, with the field of its settings it tunes, `step`), and whether its
parameters include a rotation (`rotated`: RANCER's rotated ellipsoids, certified by `runs.rancer_runs`).

    name        label          optimize                                    start       memory   settings
    fixed       Fixed σ        θ0 everywhere (Cohen et al.)                -           no       -
    isotropic   Isotropic DD   one σ per input (Alfarra et al. 2020)       -           yes      IsotropicSettings
    ancer       ANCER          a diagonal Θ per input (App. C, Listing 1)  isotropic   yes      AncerSettings
    rancer      RANCER         U and Σ̂ per input (seed 002, Algorithm 1)   isotropic   yes      RancerSettings

A new method is one class (a subclass of `SmoothingMethod` overriding `optimize`, and `objective` when its
selection maximizes something other than the validation ACR) and one `register` call; CONTRIBUTING.md walks
through it.
"""
from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, is_dataclass, replace

import numpy as np
import torch

from ..core.certify import AUTO, resolve_draws
from ..core.precision import EXACT, check_precision
from ..core.streams import ANCER, ISOTROPIC, RANCER, register_purpose
from ..core.validation import check_choice, check_count, check_positive
from .optimize import input_streams, optimize_ancer, optimize_isotropic
from .rancer import RancerSettings

#: the names of the papers' four methods, the keys the runs and the studies' statements about those methods use (a
#: method's name is its stream purpose where it has one)
FIXED = "fixed"


@dataclass(frozen=True)
class IsotropicSettings:
    """Hyperparameters of Isotropic DD's sample-wise optimization (chosen on a validation split), and the base of
    every gradient-ascent method's settings.

    Parameters
    ----------
    iterations : int
        Gradient steps, >= 0.
    lr : float
        Step size, finite and > 0 (absolute, in pixel units).
    samples : int
        Monte Carlo draws per step and input, >= 1.
    """
    iterations: int = 100
    lr: float = 1e-3
    samples: int = 100

    def __post_init__(self) -> None:
        check_count(self.iterations, "iterations", 0)
        check_positive(self.lr, "lr")
        check_count(self.samples, "samples")


@dataclass(frozen=True)
class AncerSettings(IsotropicSettings):
    """Hyperparameters of ANCER's sample-wise optimization (App. C): Isotropic DD's, and κ.

    Parameters
    ----------
    iterations, lr, samples
        As `IsotropicSettings`' (lr's default 0.01).
    kappa : float
        The weight of the ℓp radius in the relaxed objective (App. C), finite and > 0.
    """
    lr: float = 0.01
    kappa: float = 2.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self.kappa, "kappa")


def settings_types() -> dict[str, type]:
    """The settings dataclass of each registered method that takes settings, by name, in the registry's order."""
    return {m.name: m.settings for m in METHODS.values() if m.settings is not None}


@dataclass(frozen=True)
class OptimSettings:
    """The settings of every registered method that has a settings type (`SmoothingMethod.settings`), one value
    per method, and the chunk their optimizations run in.

    Parameters
    ----------
    methods : mapping of str to settings, optional
        Settings by method name (a registered method with a settings type; the value of that type). A method not
        given takes its type's defaults. Stored as a tuple of (name, settings) pairs in the registry's order.
    chunk : int
        Inputs optimized together, >= 1 (each input draws from its own streams, so the result does not depend
        on it).
    """
    methods: Mapping[str, object] | tuple[tuple[str, object], ...] = ()
    chunk: int = 128

    def __post_init__(self) -> None:
        given = dict(self.methods)
        kinds = settings_types()
        for name, value in given.items():
            check_choice(name, "methods", tuple(kinds))
            if type(value) is not kinds[name]:
                raise TypeError(f"methods[{name!r}] must be a {kinds[name].__name__}, got {type(value).__name__} "
                                f"{value!r}")
        object.__setattr__(self, "methods", tuple((name, given.get(name, kind())) for name, kind in kinds.items()))
        check_count(self.chunk, "chunk")

    def of(self, name: str):
        """The settings of the method called `name`: the value given, or its type's defaults for a method registered
        after these settings were made.

        Parameters
        ----------
        name : str
            A registered method that has a settings type.

        Returns
        -------
        object
            That method's settings, a value of its `SmoothingMethod.settings` dataclass.

        Raises
        ------
        ValueError
            Naming the methods that have settings, when `name` is not one of them.
        """
        found = settings_types() | dict(self.methods)
        value = found[check_choice(name, "method", tuple(found))]
        return value() if isinstance(value, type) else value

    def changed(self, name: str, **changes: object) -> OptimSettings:
        """These settings with fields of method `name`'s changed (`dataclasses.replace`, checked again).

        Parameters
        ----------
        name : str
            A registered method that has a settings type.
        **changes : object
            New values of fields of that method's settings dataclass, by field name.

        Returns
        -------
        OptimSettings
            A copy with method `name`'s settings replaced; the other methods' settings and the chunk unchanged.
        """
        return replace(self, methods={**dict(self.methods), name: replace(self.of(name), **changes)})

    def record(self, method: str | None = None) -> dict:
        """A JSON-able record of these settings: {method name: its settings' fields, ..., "chunk": chunk}, of every
        method, or of `method` and the methods it starts from (all that its parameters depend on).

        Parameters
        ----------
        method : str, optional
            A registered method's name; None: every method's settings.

        Returns
        -------
        dict
            {method name: dict of its settings' fields, ..., "chunk": int}, the methods in the registry's order.
        """
        names = [name for name, _ in self.methods]
        if method is not None:
            needed = with_starts([method])
            names = [name for name in names if name in needed]
        return {**{name: asdict(self.of(name)) for name in names}, "chunk": self.chunk}

    def with_budget(self, iterations: int | None = None, samples: int | None = None) -> OptimSettings:
        """These settings with every method's `iterations` and `samples` set where given (the profiles' one budget
        for all; a method whose settings lack the field keeps them).

        Parameters
        ----------
        iterations : int, optional
            The gradient steps of every method whose settings have an `iterations` field; None: unchanged.
        samples : int, optional
            The Monte Carlo draws per step of every method whose settings have a `samples` field; None: unchanged.

        Returns
        -------
        OptimSettings
            A copy with those fields replaced (checked again); the chunk unchanged.
        """
        budget = {k: v for k, v in (("iterations", iterations), ("samples", samples)) if v is not None}
        return replace(self, methods={
            name: replace(s, **{f.name: budget[f.name] for f in fields(s) if f.name in budget})
            for name, s in self.methods})


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
    settings : type or None
        Its settings dataclass (one value per run, in `OptimSettings`; None: it takes none).
    step : str or None
        The field of its settings its step size is chosen in on the validation split (`runs.selection`).
    rotated : bool
        Whether its parameters include a rotation U (certified by `runs.rancer_runs`, not `experiment.run_method`).
    """
    name: str
    label: str
    purpose: str | None = None
    start: str | None = None
    memory: bool = True
    settings: type | None = None
    step: str | None = None
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
            Every method's settings; this method's are `settings.of(self.name)`.
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

    def objective(self, acr: float, acr_proxy: float, settings: OptimSettings) -> float:
        """The validation objective its step size maximizes (`runs.selection`): the validation ACR of the ℓp
        radius, unless a method says otherwise (from its validation ACR, ACR~ and its settings).

        Parameters
        ----------
        acr : float
            The validation ACR of the ℓp radius (mean certified radius, 0 where wrong or abstained).
        acr_proxy : float
            The validation ACR~ of the proxy radius R̃ (likewise).
        settings : OptimSettings
            Every method's settings (unused here; a method's objective may read its own).

        Returns
        -------
        float
            The value to maximize: `acr` here.
        """
        return acr

    def streams(self, noise: str, x: torch.Tensor, seed: int, keys: list[int], draws: str = AUTO) -> list:
        """One stream per input of x on its `purpose` stream (`optimize.input_streams`: a `noise.DrawStream` on the
        CPU, or with draws resolving to "device" a `noise.BlockDrawStream` on x's device).

        Parameters
        ----------
        noise : str
            The noise family's name.
        x : torch.Tensor, shape (B, *input_shape)
            The inputs, on the device the optimization runs on.
        seed : int
            The run's seed.
        keys : list of int, length B
            The inputs' stream keys (their dataset indices).
        draws : str
            "auto", "cpu" or "device" (`optimize.input_streams`).

        Returns
        -------
        list of noise.DrawStream or noise.BlockDrawStream, length B
            One stream per input, on `streams.stream(seed, keys[k], self.purpose)`.
        """
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
        """θ0 for every input: no optimization, no draws.

        Parameters
        ----------
        model, x, noise, theta0, settings, seed, keys, start
            As `SmoothingMethod.optimize` (only x's length and theta0 are used).
        precision, draws : str
            As `SmoothingMethod.run_optimize` (unused: nothing is computed or drawn).

        Returns
        -------
        torch.Tensor of float32, shape (B,)
            theta0 per input, on the CPU.
        """
        return torch.full((len(x),), float(theta0))


@dataclass(frozen=True)
class Isotropic(SmoothingMethod):
    """Isotropic DD (Alfarra et al. 2020): one σ per input, by gradient ascent on σ · gap from θ0
    (`optimize.optimize_isotropic`)."""

    def optimize(self, model, x, noise, theta0, settings, seed, keys, start, *, precision=EXACT, draws=AUTO):
        """Isotropic DD from θ0 with this method's `IsotropicSettings` (`optimize.optimize_isotropic`).

        Parameters
        ----------
        model, x, noise, theta0, settings, seed, keys, start
            As `SmoothingMethod.optimize` (start is unused: Isotropic DD starts from theta0).
        precision : str
            The forward passes' arithmetic, one of `precision.PRECISIONS`.
        draws : str
            Where the noise is drawn: "auto", "cpu" or "device" (`SmoothingMethod.streams`).

        Returns
        -------
        torch.Tensor, shape (B,)
            One σ per input, on the CPU.
        """
        s = settings.of(self.name)
        return optimize_isotropic(model, x, theta0, noise, iterations=s.iterations, lr=s.lr, samples=s.samples,
                                  generator=self.streams(noise, x, seed, keys, draws), precision=precision).cpu()


@dataclass(frozen=True)
class Ancer(SmoothingMethod):
    """ANCER (App. C, Listing 1): a diagonal Θ per input, ascending the proxy radius plus κ times the ℓp radius
    from Isotropic DD's σ (`optimize.optimize_ancer`); selected by the validation mean of (R̃ + κ R) 1(correct)."""

    def optimize(self, model, x, noise, theta0, settings, seed, keys, start, rotation=None, *, precision=EXACT,
                 draws=AUTO):
        """ANCER from Isotropic DD's σ with this method's `AncerSettings` (`optimize.optimize_ancer`).

        Parameters
        ----------
        model, x, noise, theta0, settings, seed, keys
            As `SmoothingMethod.optimize` (theta0 is unused: ANCER starts from `start`).
        start : torch.Tensor, shape (B,) or (B, *input_shape)
            Isotropic DD's parameters of the same inputs: the start and the floor of the ascent; moved to x's device.
        rotation : torch.Tensor, shape (B, n, n), optional
            Orthogonal matrices on x's device (n = prod(input_shape)) for ANCER's objective with RANCER's rotated
            noise U (θ ⊙ z); None: axis-aligned noise.
        precision : str
            The forward passes' arithmetic, one of `precision.PRECISIONS`.
        draws : str
            Where the noise is drawn: "auto", "cpu" or "device" (`SmoothingMethod.streams`).

        Returns
        -------
        torch.Tensor, shape (B, *input_shape)
            A diagonal Θ per input, on the CPU.
        """
        s = settings.of(self.name)
        return optimize_ancer(model, x, start.to(x.device), noise, iterations=s.iterations, lr=s.lr,
                              samples=s.samples, kappa=s.kappa, generator=self.streams(noise, x, seed, keys, draws),
                              rotation=rotation, precision=precision).cpu()

    def objective(self, acr, acr_proxy, settings):
        """ANCER's objective, the validation mean of (R̃ + κ R) 1(correct), with ANCER's κ (which RANCER shares).

        Parameters
        ----------
        acr, acr_proxy, settings
            As `SmoothingMethod.objective`; κ is `settings.of("ancer").kappa`.

        Returns
        -------
        float
            acr_proxy + κ · acr.
        """
        return acr_proxy + settings.of(ANCER).kappa * acr


@dataclass(frozen=True)
class Rancer(Ancer):
    """RANCER (seed 002, Algorithm 1): the input-Hessian rotation U and per-axis scales Σ̂ clipped around Isotropic
    DD's σ, with its own settings (`rancer.RancerSettings`) and run (`runs.rancer_runs`); selected by ANCER's
    objective (`rancer_runs` and `selection.select_rancer` take its settings value)."""

    def optimize(self, model, x, noise, theta0, settings, seed, keys, start):
        """Not available: RANCER's parameters include a rotation, so `rancer.rancer_parameters` computes them.

        Parameters
        ----------
        model, x, noise, theta0, settings, seed, keys, start
            As `SmoothingMethod.optimize` (unused).

        Raises
        ------
        NotImplementedError
            Always (`runs.rancer_runs.run_rancer` certifies RANCER's parameters).
        """
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
    if method.settings is not None and not (isinstance(method.settings, type) and is_dataclass(method.settings)):
        raise TypeError(f"method.settings must be None or a dataclass type, got {method.settings!r}")
    if method.step is not None and (method.settings is None
                                    or method.step not in {f.name for f in fields(method.settings)}):
        raise ValueError(f"method.step must name a field of method.settings "
                         f"({[f.name for f in fields(method.settings)] if method.settings else 'no settings'}), "
                         f"got {method.step!r}")
    if method.purpose is not None:
        register_purpose(method.purpose)
    METHODS[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove the method called `name` (no method may start from it).

    Parameters
    ----------
    name : str
        A registered method's name.

    Raises
    ------
    ValueError
        When `name` is not registered, or a registered method starts from it.
    """
    check_choice(name, "name", tuple(METHODS))
    users = [m.name for m in METHODS.values() if m.start == name]
    if users:
        raise ValueError(f"method {name!r} cannot be removed: {users} start from it")
    del METHODS[name]


def method(name: str | SmoothingMethod) -> SmoothingMethod:
    """The registered method called `name` (a SmoothingMethod is returned as it is).

    Parameters
    ----------
    name : str or SmoothingMethod
        A registered method's name, or a method.

    Returns
    -------
    SmoothingMethod
        The registered method, or `name` itself when it is a SmoothingMethod.

    Raises
    ------
    ValueError
        Naming `method` and the registered names, when `name` is not registered.
    """
    if isinstance(name, SmoothingMethod):
        return name
    return METHODS[check_choice(name, "method", tuple(METHODS))]


def names(rotated: bool | None = None) -> tuple[str, ...]:
    """The registered methods' names in order.

    Parameters
    ----------
    rotated : bool, optional
        False (True) keeps the methods without (with) a rotation; None: every method.

    Returns
    -------
    tuple of str
        The names, in the registry's order.
    """
    return tuple(m.name for m in METHODS.values() if rotated is None or m.rotated == rotated)


def with_starts(wanted: list[str] | tuple[str, ...]) -> list[str]:
    """The methods to run for `wanted` (registered names), in the registry's order, with every method they start
    from added (ANCER needs Isotropic DD's θ).

    Parameters
    ----------
    wanted : list or tuple of str
        Registered method names (or methods, as `method` takes them).

    Returns
    -------
    list of str
        The wanted methods and, transitively, the methods they start from, in the registry's order.
    """
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
    """Per-input parameters (B,) or (B, *input_shape) as a float32 array of x's shape (B, *input_shape).

    Parameters
    ----------
    theta : torch.Tensor, shape (B,) or (B, *input_shape)
        One scale per input (broadcast over its dimensions), or one per input and dimension.
    x : torch.Tensor, shape (B, *input_shape)
        The inputs, whose shape the result takes.

    Returns
    -------
    numpy.ndarray of float32, shape (B, *input_shape)
        The parameters on the CPU, per input and dimension.
    """
    t = theta.detach().cpu()
    if t.shape == (len(x),):
        t = t.view(-1, *([1] * (x.ndim - 1))).expand(tuple(x.shape))
    return t.numpy().astype(np.float32, copy=False)


register(Fixed(FIXED, "Fixed σ", memory=False))
register(Isotropic(ISOTROPIC, "Isotropic DD", purpose=ISOTROPIC, settings=IsotropicSettings, step="lr"))
register(Ancer(ANCER, "ANCER", purpose=ANCER, start=ISOTROPIC, settings=AncerSettings, step="lr"))
register(Rancer(RANCER, "RANCER", purpose=RANCER, start=ISOTROPIC, settings=RancerSettings, step="lr",
              rotated=True))
