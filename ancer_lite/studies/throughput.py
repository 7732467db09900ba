"""How close the quick models come to the machine: the measurements behind `make bench`.

For each base classifier of the quick profile (`quick_models`: the digits MLP, the MNIST-5k SmallCNN, the
same CNN on the digits, and RANCER's softplus variants):

- `flops_per_image`: the forward pass's floating-point operations for one image, counted by
  `torch.utils.flop_counter` (2 per multiply-add of every matrix product and convolution; biases,
  activations and the normalization layer are not counted, so the count is a lower bound);
- `forward_rate`: bare forward passes per second at the certification batch size (inference mode, inputs
  prepared in advance, no noise), hence the achieved GFLOP/s;
- `matmul_gflops`: the reference the achieved rate is divided by, the best fp32 rate of a large square
  matrix product on the same threads (what this CPU's BLAS sustains; no model layer can beat it by much);
- `certify_ratio`: CERTIFY's sampling loop (`Smooth.sample_counts`: noise, forward, votes) against the
  bare forward pass of the same batch, as the median of back-to-back pairs with alternating order (a
  shared 2-core machine swings by +-30% within seconds, so only paired ratios are stable);
- `draw_floor`: what the noise alone costs: the batch's standard draws from one per-input stream (torch's
  MT19937 generator, `noise.DrawStream`, as CERTIFY draws them) against the bare forward pass, so `1 + draw share`
  is the lowest sampling / bare ratio any CERTIFY on these streams can reach; and CERTIFY's sampling loop against
  the draws and the bare forward pass run back to back (what the engine adds beyond the work it cannot skip);
- `method_seconds`: each certification method's time per input at the paper's budget (ANCER Table 3:
  optimization 100 steps x 100 samples, N0 = 100, N = 100,000), by `runtime.time_stages`.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch.utils.flop_counter import FlopCounterMode

from ..core.certify import Smooth
from ..core.noise import DrawStream
from ..core.validation import check_count
from ..methods.registry import ANCER, FIXED, ISOTROPIC, OptimSettings
from ..runs.profiles import Profile
from ..runs.setups import NUM_CLASSES, QUICK_INPUT_SHAPE, build_model
from . import runtime

#: the target: CERTIFY within this factor of its bare forward passes (reported per model, not gated)
LIMIT = 1.1


@dataclass(frozen=True)
class QuickModel:
    """One quick base classifier, with the setup names using it, its input shape and class count.

    Parameters
    ----------
    name : str
        "<architecture> on <dataset> <H>x<W>".
    setups : tuple of str
        The names of the profile's columns using it.
    model : torch.nn.Module
        The freshly built model, in evaluation mode.
    input_shape : tuple of int
        One input's shape (C, H, W).
    num_classes : int
        The number of classes.
    """
    name: str
    setups: tuple[str, ...]
    model: torch.nn.Module
    input_shape: tuple[int, ...]
    num_classes: int

    @property
    def parameters(self) -> int:
        """The model's number of parameters.

        Returns
        -------
        int
        """
        return sum(p.numel() for p in self.model.parameters())


def quick_models(profile: Profile, seed: int = 0) -> list[QuickModel]:
    """Every distinct (architecture, dataset) of `profile`'s image and RANCER columns, freshly built in evaluation mode.

    The speed of a forward pass does not depend on the trained weights. Each model's weights are seeded with `seed`.

    Parameters
    ----------
    profile : runs.profiles.Profile
        A profile whose columns use quick datasets only (`setups.QUICK_INPUT_SHAPE`).
    seed : int, default 0
        Torch's seed before each model is built.

    Returns
    -------
    list of QuickModel
    """
    found: dict[tuple, list[str]] = {}
    setups = {}
    for s in (*profile.images, *profile.rancer):
        if s.dataset not in QUICK_INPUT_SHAPE:
            raise ValueError(f"profile {profile.name!r} column {s.name!r} has dataset {s.dataset!r}; the benchmark "
                             f"builds quick models only ({sorted(QUICK_INPUT_SHAPE)})")
        key = (s.model, s.dataset, s.hidden)
        found.setdefault(key, []).append(s.name)
        setups.setdefault(key, s)
    out = []
    for key, names in found.items():
        s = setups[key]
        torch.manual_seed(seed)
        shape, classes = QUICK_INPUT_SHAPE[s.dataset], NUM_CLASSES[s.dataset]
        model = build_model(s, shape, classes).eval()
        out.append(QuickModel(f"{s.model} on {s.dataset} {'x'.join(map(str, shape[1:]))}", tuple(names), model,
                              shape, classes))
    return out


def flops_per_image(model: torch.nn.Module, input_shape: tuple[int, ...]) -> int:
    """Floating-point operations of one forward pass on one input, as `torch.utils.flop_counter` counts them.

    2 per multiply-add of the matrix products and convolutions; biases, activations and the normalization layer are
    not counted, so the count is a lower bound.

    Parameters
    ----------
    model : torch.nn.Module
        The model.
    input_shape : tuple of int
        One input's shape.

    Returns
    -------
    int
    """
    counter = FlopCounterMode(display=False)
    with torch.inference_mode(), counter:
        model(torch.zeros((1, *input_shape)))
    return int(counter.get_total_flops())


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    """The median wall time of `repeats` calls of fn()."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def forward_rate(model: torch.nn.Module, input_shape: tuple[int, ...], batch: int, repeats: int = 5) -> float:
    """Images per second of bare forward passes (inference mode) on batches of `batch` inputs.

    The median over `repeats` batches after one warm-up batch; inputs are prepared in advance, no noise.

    Parameters
    ----------
    model : torch.nn.Module
        The model.
    input_shape : tuple of int
        One input's shape.
    batch : int
        Inputs per batch (>= 1).
    repeats : int, default 5
        Timed batches (>= 1).

    Returns
    -------
    float
    """
    check_count(batch, "batch")
    check_count(repeats, "repeats")
    x = torch.rand((batch, *input_shape), generator=torch.Generator().manual_seed(0))

    def once() -> None:
        with torch.inference_mode():
            model(x).argmax(dim=1)

    once()
    return batch / _median_seconds(once, repeats)


def matmul_gflops(size: int = 1024, repeats: int = 5) -> float:
    """The best fp32 GFLOP/s of a `size` x `size` matrix product (2·size³ operations) over `repeats` runs.

    On the current torch threads: the reference for the models' achieved rates (what this CPU's BLAS sustains; no
    model layer can beat it by much).

    Parameters
    ----------
    size : int, default 1024
        The matrices' side (>= 1).
    repeats : int, default 5
        Timed runs (>= 1).

    Returns
    -------
    float
    """
    check_count(size, "size")
    check_count(repeats, "repeats")
    gen = torch.Generator().manual_seed(0)
    a, b = torch.rand((size, size), generator=gen), torch.rand((size, size), generator=gen)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t0)
    return 2 * size ** 3 / best / 1e9


def paired_times(fn_a: Callable[[], object], fn_b: Callable[[], object], pairs: int) -> tuple[list[float], list[float]]:
    """Seconds of fn_a and of fn_b over `pairs` back-to-back runs, alternating which goes first.

    Parameters
    ----------
    fn_a, fn_b : callable
        Called without arguments.
    pairs : int
        Runs of each (>= 1).

    Returns
    -------
    times_a : list of float, length pairs
    times_b : list of float, length pairs
    """
    check_count(pairs, "pairs")
    ta, tb = [], []
    for i in range(pairs):
        order = ((fn_a, ta), (fn_b, tb)) if i % 2 == 0 else ((fn_b, tb), (fn_a, ta))
        for fn, acc in order:
            t0 = time.perf_counter()
            fn()
            acc.append(time.perf_counter() - t0)
    return ta, tb


def paired_ratio(fn_a: Callable[[], object], fn_b: Callable[[], object], pairs: int) -> float:
    """Median of time(fn_a) / time(fn_b) over the `pairs` pairs of `paired_times`.

    A shared 2-core machine swings by ±30% within seconds, so only paired ratios are stable.

    Parameters
    ----------
    fn_a, fn_b : callable
        Called without arguments.
    pairs : int
        Pairs (>= 1).

    Returns
    -------
    float
    """
    ta, tb = paired_times(fn_a, fn_b, pairs)
    return statistics.median(a / b for a, b in zip(ta, tb))


def certify_ratio(qm: QuickModel, batch: int, pairs: int, theta: float = 0.25, noise: str = "gaussian") -> float:
    """CERTIFY's sampling loop over one batch against the bare forward pass and argmax of the same batch.

    The sampling loop is `Smooth.sample_counts` (noise, forward, votes); the ratio is `paired_ratio` over `pairs`
    pairs.

    Parameters
    ----------
    qm : QuickModel
        The base classifier.
    batch : int
        Draws per batch (>= 1).
    pairs : int
        Pairs timed.
    theta : float, default 0.25
        The noise's scale.
    noise : str, default "gaussian"
        The noise family.

    Returns
    -------
    float
    """
    bare, sampling = _bare_and_sampling(qm, batch, theta, noise)
    return paired_ratio(sampling, bare, pairs)


def _bare_and_sampling(qm: QuickModel, batch: int, theta: float, noise: str,
                       ) -> tuple[Callable[[], None], Callable[[], None]]:
    """(bare, sampling), each warmed up once: the bare forward pass of `batch` copies, and CERTIFY's loop."""
    check_count(batch, "batch")
    smooth = Smooth(qm.model, qm.num_classes, qm.input_shape, noise=noise, batch_size=batch, seed=0)
    x = torch.rand(qm.input_shape, generator=torch.Generator().manual_seed(0))
    bare_in = x.expand(batch, *qm.input_shape).contiguous()

    def bare() -> None:
        with torch.inference_mode():
            qm.model(bare_in).argmax(dim=1)

    def sampling() -> None:
        smooth.sample_counts(x, theta, batch)

    bare(), sampling()
    return bare, sampling


def draw_floor(qm: QuickModel, batch: int, pairs: int, theta: float = 0.25, noise: str = "gaussian",
               ) -> tuple[float, float]:
    """The draws' share of a bare forward pass, and CERTIFY's sampling loop against its floor, for one batch.

    The draw share is the standard noise of one batch drawn from one stream (`DrawStream` on a CPU generator, torch's
    MT19937, into a reused buffer, as CERTIFY's loop draws it) against the bare forward pass and argmax of the batch:
    1 + that share is the lowest sampling / bare ratio any CERTIFY on these streams can reach. The second ratio is
    CERTIFY's sampling loop (`Smooth.sample_counts`) against those draws followed by that forward pass (what the
    engine adds beyond the work it cannot skip). Both are `paired_ratio`s over `pairs` pairs.

    Parameters
    ----------
    qm : QuickModel
        The base classifier.
    batch : int
        Draws per batch (>= 1).
    pairs : int
        Pairs timed.
    theta : float, default 0.25
        The noise's scale.
    noise : str, default "gaussian"
        The noise family.

    Returns
    -------
    draw_share : float
    certify_vs_floor : float
    """
    bare, sampling = _bare_and_sampling(qm, batch, theta, noise)
    stream = DrawStream(noise, qm.input_shape, torch.Generator().manual_seed(1))
    buffer = torch.empty((batch, *qm.input_shape))

    def draw() -> None:
        stream.draw(batch, out=buffer)

    def floor() -> None:
        draw()
        bare()

    draw()  # warm-up
    return paired_ratio(draw, bare, pairs), paired_ratio(sampling, floor, pairs)


def method_seconds(qm: QuickModel, budget: dict[str, int] = runtime.PAPER_BUDGET, theta: float = 0.25,
                   n0: int = 100, alpha: float = 0.001, batch: int = 10_000, seed: int = 0) -> dict[str, float]:
    """Seconds per input of each method's stages at `budget` (ANCER Table 3's setting by default), for one input.

    Isotropic DD's optimization, ANCER's, and CERTIFY with Fixed σ's parameters (every method's CERTIFY costs the
    same N forward passes), by `runtime.time_stages`; both step sizes are 0.01 θ.

    Parameters
    ----------
    qm : QuickModel
        The base classifier.
    budget : dict of str to int, default `runtime.PAPER_BUDGET`
        Keys iterations, samples and n.
    theta : float, default 0.25
        The initial σ.
    n0 : int, default 100
        CERTIFY's selection samples.
    alpha : float, default 0.001
        The Clopper-Pearson level.
    batch : int, default 10_000
        Noise draws per forward batch.
    seed : int, default 0
        Seed of the input and the timing run.

    Returns
    -------
    dict of str to float
        Keys `runtime.ISO_OPT`, `runtime.ANCER_OPT`, `runtime.CERTIFY`.
    """
    settings = OptimSettings().with_budget(budget["iterations"], budget["samples"])
    settings = settings.changed(ISOTROPIC, lr=0.01 * theta).changed(ANCER, lr=0.01 * theta)
    x = torch.rand((1, *qm.input_shape), generator=torch.Generator().manual_seed(seed))
    t = runtime.time_stages(qm.model, x, "gaussian", theta, settings, n0, budget["n"], alpha, qm.num_classes,
                            batch, seed)
    fixed = t[(t.method == FIXED) & (t.stage == runtime.CERTIFY)].seconds.mean()
    iso = t[(t.method == ISOTROPIC) & (t.stage == runtime.ISO_OPT)].seconds.mean()
    anc = t[(t.method == ANCER) & (t.stage == runtime.ANCER_OPT)].seconds.mean()
    return {runtime.ISO_OPT: float(iso), runtime.ANCER_OPT: float(anc), runtime.CERTIFY: float(fixed)}


def benchmark(profile: Profile, batch: int = 10_000, repeats: int = 5, pairs: int = 40,
              budget: dict[str, int] = runtime.PAPER_BUDGET, methods: bool = True, n0: int = 100) -> pd.DataFrame:
    """The measurements behind `make bench`, one row per quick model of `profile` (all measured in this one run).

    Parameters
    ----------
    profile : runs.profiles.Profile
        The profile whose models are measured (`quick_models`).
    batch : int, default 10_000
        The certification batch size.
    repeats : int, default 5
        Timed batches of `forward_rate`.
    pairs : int, default 40
        Pairs of the paired ratios.
    budget : dict of str to int, default `runtime.PAPER_BUDGET`
        The budget of `method_seconds`.
    methods : bool, default True
        Also time each method at `budget`.
    n0 : int, default 100
        CERTIFY's selection samples.

    Returns
    -------
    pandas.DataFrame
        Columns model, columns, parameters, mflop (per image), images_per_s (bare), gflops (achieved),
        matmul_gflops, fraction_of_matmul, certify_ratio (to the bare forwards), draw_share (`draw_floor`:
        CERTIFY's floor is 1 + that share), certify_vs_floor (to its draws and forwards together) and, with
        `methods`, budget, iso_dd_s, ancer_s, certify_s (seconds per input), certify_vs_bare and
        ancer_total_vs_fixed.
    """
    peak = matmul_gflops()
    rows = []
    for qm in quick_models(profile):
        flops = flops_per_image(qm.model, qm.input_shape)
        rate = forward_rate(qm.model, qm.input_shape, batch, repeats)
        row = dict(model=qm.name, columns=", ".join(qm.setups), parameters=qm.parameters, mflop=flops / 1e6,
                   images_per_s=rate, gflops=rate * flops / 1e9, matmul_gflops=peak,
                   fraction_of_matmul=rate * flops / 1e9 / peak, certify_ratio=certify_ratio(qm, batch, pairs))
        row["draw_share"], row["certify_vs_floor"] = draw_floor(qm, batch, pairs)
        if methods:
            sec = method_seconds(qm, budget, n0=n0, batch=batch)
            row.update({"budget": f"optimization {budget['iterations']} x {budget['samples']} samples, N0 = {n0}, "
                                  f"N = {budget['n']:,}", "iso_dd_s": sec[runtime.ISO_OPT],
                        "ancer_s": sec[runtime.ANCER_OPT], "certify_s": sec[runtime.CERTIFY]})
            row["certify_vs_bare"] = sec[runtime.CERTIFY] * rate / (budget["n"] + n0)
            row["ancer_total_vs_fixed"] = (sec[runtime.ISO_OPT] + sec[runtime.ANCER_OPT] + sec[runtime.CERTIFY]) / sec[
                runtime.CERTIFY]
        rows.append(row)
    return pd.DataFrame(rows)


def report(table: pd.DataFrame, threads: int) -> str:
    """The benchmark table as text, one block per model.

    Parameters
    ----------
    table : pandas.DataFrame
        `benchmark`'s table.
    threads : int
        The torch threads it ran on.

    Returns
    -------
    str
    """
    lines = [f"torch threads {threads}; reference: fp32 1024x1024 matrix product at "
             f"{table.matmul_gflops.iloc[0]:.1f} GFLOP/s"]
    for r in table.itertuples():
        lines.append(f"{r.model} ({r.parameters:,} parameters, {r.mflop:.3f} MFLOP/image; columns {r.columns}):")
        lines.append(f"  bare forward {r.images_per_s:,.0f} images/s = {r.gflops:.2f} GFLOP/s, "
                     f"{r.fraction_of_matmul:.1%} of the matrix-product rate; CERTIFY sampling / bare forward "
                     f"{r.certify_ratio:.3f} (median of paired batches)")
        lines.append(f"  the draws alone: {r.draw_share:.1%} of the bare forward, so no CERTIFY on these streams goes "
                     f"below {1 + r.draw_share:.2f}x; CERTIFY sampling / (draws + bare forward) {r.certify_vs_floor:.3f}; "
                     f"within {LIMIT}x of the bare forwards: {'yes' if r.certify_ratio <= LIMIT else 'no'}, of the "
                     f"draws + forwards: {'yes' if r.certify_vs_floor <= LIMIT else 'no'}")
        if "certify_s" in table.columns and np.isfinite(r.certify_s):
            lines.append(f"  per input ({r.budget}): Iso DD optimization {r.iso_dd_s:.2f} s, ANCER "
                         f"optimization {r.ancer_s:.2f} s, CERTIFY (N0+N) {r.certify_s:.2f} s = "
                         f"{r.certify_vs_bare:.2f}x its bare forwards; ANCER in all "
                         f"{r.ancer_total_vs_fixed:.2f}x Fixed σ's CERTIFY")
    return "\n".join(lines)
