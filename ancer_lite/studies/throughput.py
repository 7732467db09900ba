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
from ..methods.registry import OptimSettings
from ..runs.profiles import Profile
from ..runs.setups import NUM_CLASSES, QUICK_INPUT_SHAPE, build_model
from . import runtime

#: the target: CERTIFY within this factor of its bare forward passes (reported per model, not gated)
LIMIT = 1.1


@dataclass(frozen=True)
class QuickModel:
    """One quick base classifier: its name, the setup names using it, input shape and class count."""
    name: str
    setups: tuple[str, ...]
    model: torch.nn.Module
    input_shape: tuple[int, ...]
    num_classes: int

    @property
    def parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


def quick_models(profile: Profile, seed: int = 0) -> list[QuickModel]:
    """Every distinct (architecture, dataset) of `profile`'s image and RANCER columns, freshly built in
    evaluation mode (the speed of a forward pass does not depend on the trained weights)."""
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
    """Floating-point operations of one forward pass on one input of `input_shape` (2 per multiply-add of
    the matrix products and convolutions, as `torch.utils.flop_counter` counts them)."""
    counter = FlopCounterMode(display=False)
    with torch.inference_mode(), counter:
        model(torch.zeros((1, *input_shape)))
    return int(counter.get_total_flops())


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def forward_rate(model: torch.nn.Module, input_shape: tuple[int, ...], batch: int, repeats: int = 5) -> float:
    """Images per second of bare forward passes (inference mode) on batches of `batch` inputs: the
    median over `repeats` batches after one warm-up batch."""
    check_count(batch, "batch")
    check_count(repeats, "repeats")
    x = torch.rand((batch, *input_shape), generator=torch.Generator().manual_seed(0))

    def once() -> None:
        with torch.inference_mode():
            model(x).argmax(dim=1)

    once()
    return batch / _median_seconds(once, repeats)


def matmul_gflops(size: int = 1024, repeats: int = 5) -> float:
    """The best fp32 GFLOP/s of a `size` x `size` matrix product (2·size³ operations) over `repeats` runs
    on the current torch threads: the reference for the models' achieved rates."""
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
    """Seconds of fn_a and of fn_b over `pairs` back-to-back runs, alternating which goes first."""
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
    """Median of time(fn_a) / time(fn_b) over the `pairs` pairs of `paired_times`."""
    ta, tb = paired_times(fn_a, fn_b, pairs)
    return statistics.median(a / b for a, b in zip(ta, tb))


def certify_ratio(qm: QuickModel, batch: int, pairs: int, theta: float = 0.25, noise: str = "gaussian") -> float:
    """CERTIFY's sampling loop over one batch (`Smooth.sample_counts`: noise, forward, votes) against the
    bare forward pass and argmax of the same batch: `paired_ratio` over `pairs` pairs."""
    bare, sampling = _bare_and_sampling(qm, batch, theta, noise)
    return paired_ratio(sampling, bare, pairs)


def _bare_and_sampling(qm: QuickModel, batch: int, theta: float, noise: str,
                       ) -> tuple[Callable[[], None], Callable[[], None]]:
    """(bare, sampling), both run once as a warm-up: the bare forward pass and argmax of `batch` copies of one
    input, and CERTIFY's sampling loop over one batch of `batch` draws at that input."""
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
    """(draw share, CERTIFY against its floor) for one batch of `batch` draws: the standard noise of one batch drawn
    from one stream (`DrawStream` on a CPU generator, into a reused buffer, as CERTIFY's loop draws it) against the
    bare forward pass and argmax of the batch, and CERTIFY's sampling loop (`Smooth.sample_counts`) against those
    draws followed by that forward pass. Both are `paired_ratio`s over `pairs` pairs."""
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
    """Seconds per input of each method's stages at `budget` (ANCER Table 3's setting by default) for one
    input: Isotropic DD's optimization, ANCER's, and CERTIFY (Fixed σ's parameters; every method's
    CERTIFY costs the same N forward passes). Keys: runtime.ISO_OPT, runtime.ANCER_OPT, runtime.CERTIFY."""
    settings = OptimSettings(iso_iterations=budget["iterations"], iso_samples=budget["samples"],
                             ancer_iterations=budget["iterations"], ancer_samples=budget["samples"],
                             iso_lr=0.01 * theta, ancer_lr=0.01 * theta)
    x = torch.rand((1, *qm.input_shape), generator=torch.Generator().manual_seed(seed))
    t = runtime.time_stages(qm.model, x, "gaussian", theta, settings, n0, budget["n"], alpha, qm.num_classes,
                            batch, seed)
    fixed = t[(t.method == "fixed") & (t.stage == runtime.CERTIFY)].seconds.mean()
    iso = t[(t.method == "isotropic") & (t.stage == runtime.ISO_OPT)].seconds.mean()
    anc = t[(t.method == "ancer") & (t.stage == runtime.ANCER_OPT)].seconds.mean()
    return {runtime.ISO_OPT: float(iso), runtime.ANCER_OPT: float(anc), runtime.CERTIFY: float(fixed)}


def benchmark(profile: Profile, batch: int = 10_000, repeats: int = 5, pairs: int = 40,
              budget: dict[str, int] = runtime.PAPER_BUDGET, methods: bool = True, n0: int = 100) -> pd.DataFrame:
    """One row per quick model: parameters, MFLOP per image, bare images/s, achieved GFLOP/s, its fraction
    of `matmul_gflops()`, CERTIFY's ratio to the bare forwards, the draws' share of a bare forward pass
    (`draw_floor`: CERTIFY's floor is 1 + that share), CERTIFY's ratio to its draws and forwards together and,
    with `methods`, each method's seconds per input at `budget` and the ratios of those times (all measured in this
    one run)."""
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
    """The benchmark table as text, one block per model."""
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
