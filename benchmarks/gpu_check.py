"""The benchmark that keeps score on a GPU: seconds per input of ANCER's pipeline (Fixed σ CERTIFY, Isotropic DD,
ANCER) in each forward precision of the package, beside Cohen et al.'s sampling loop and the ANCER authors'
optimizers run as a user would run them, against the bare forward rate of the same network, and the GPU-hours of
ANCER's Table 3 and of one CIFAR-10 block of Table 1 that follow from them.

Models (random seeded weights, Normalize inside, `ancer_lite.models.architectures`):
  cifar_resnet18     CIFAR-10 ResNet-18 (3 x 32 x 32, 10 classes), Gaussian noise (l2), sigma = 0.25
  wrn40_2            WRN-40-2 (3 x 32 x 32, 10 classes), uniform noise (l1), lambda = sqrt(3) x 0.25
  imagenet_resnet50  torchvision's ResNet-50 (3 x 224 x 224, 1000 classes), Gaussian noise, sigma = 0.25

For each model, in this order (each after one warm-up; every clock read waits for the device's queued work):
1. bare forward passes of random batches already on the device, in each precision: exact (float32, TF32 off,
   NCHW), tf32 and bf16 (autocast) with channels_last and cuDNN's timed kernels, as `Smooth` runs them. bf16's
   rate is the limit the other rows are divided by.
2. CERTIFY (`Smooth.certify`, N0 = 100 selection draws + N estimation draws, alpha = 0.001, the input's
   `certify_streams`) in each --precisions with the noise drawn on the device (`draws="device"`), and in exact
   with the noise drawn on the CPU (`draws="cpu"`).
3. Cohen et al.'s sampling loop as a user runs it (locuslab/smoothing `code/core.py`'s `_sample_noise`, re-written
   here from its description: per batch x.repeat, randn_like * sigma, argmax of the model, counts by bincount;
   uniform noise for WRN-40-2), selection + estimation + the Clopper-Pearson bound, once in float32 with TF32 off
   and once with torch's defaults (cuDNN TF32 on, as torch ships).
4. Isotropic DD and ANCER (`methods.optimize`) for a batch of --opt-inputs inputs at --steps x --samples, in each
   --precisions with the draws made on the device (per-input `BlockDrawStream`s where the package supports it),
   and the ANCER authors' `ddsmoothing.optimization.optimize_isotropic_dds` and `ancer.optimization.optimize_ancer`
   (ddsmoothing-python / ancer-python 1.0.0, imported through `benchmarks/authors_shim.py`, from installed
   packages or wheels in --authors-wheels) with torch's defaults; skipped with "authors' code not installed" when
   they cannot be imported.
5. GPU-hours: Table 3's per-input Fixed σ (CERTIFY), Isotropic DD (its optimization + CERTIFY) and ANCER (Isotropic
   DD's and ANCER's optimizations + CERTIFY) times the paper's inputs (CIFAR-10: the 10,000 test images;
   ImageNet: the 500-image subset of §7), beside the paper's own (Quadro RTX 6000); and, for the CIFAR-10
   ResNet-18, one block of Table 1: 10,000 inputs x 4 sigma x the 3 methods, ANCER started from Isotropic DD's θ.
   Per pipeline: the package in each precision (device draws), and Cohen's loop (torch defaults) with the
   authors' optimizers. The memory step (Algorithm 1, milliseconds) and data loading are not counted.

Scaling, stated in the output: CERTIFY is timed at N0 + N draws, except ImageNet's, timed at N0 + --imagenet-n
(default 10,000) and scaled linearly to N0 + N; the optimizations are timed over --timed-steps steps (default 10)
and scaled linearly to --steps. ImageNet's optimizations use 2 inputs unless --opt-inputs is given (16 x 100
noisy 224 x 224 images with the activations kept for their backward pass: an estimated > 100 GB in float32). A
measurement that runs out of device memory is reported as such and the run goes on (so does one that fails: its
error is in its row, and the script exits with status 1 at the end); with --budget-s, measurements not started by
then are listed as skipped.

Prints one markdown table per model and one of GPU-hours; with --out writes every row, the GPU-hours, the skipped
measurements and the machine (torch, CUDA, cuDNN, GPU name, torch's TF32 defaults) as JSON.

Usage: python benchmarks/gpu_check.py [--models cifar_resnet18,wrn40_2,imagenet_resnet50] [--n 100000]
           [--imagenet-n 10000] [--steps 100] [--timed-steps 10] [--samples 100] [--opt-inputs 16]
           [--precisions exact,tf32,bf16] [--batch N] [--device auto] [--budget-s S]
           [--authors-wheels DIR] [--quick] [--out gpu_check.json]
--quick: a CPU smoke test: the CIFAR-10 ResNet-18 only, N0 = 10, N = 64, batch 32, 2 steps x 8 samples for 1
input, 1 step timed (45 s on 2 CPU cores shared with a test run); its timings mean nothing.
The default run is estimated at 3-5 minutes on one H100 (not yet measured); --budget-s bounds it.
"""
from __future__ import annotations

import argparse
import inspect
import json
import math
import platform
import sys
import time
import traceback
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import torch

from ancer_lite.core import devices
from ancer_lite.core.certify import Smooth, lower_confidence_bound
from ancer_lite.core.names import GAUSSIAN, UNIFORM
from ancer_lite.core.noise import uniform_lambda
from ancer_lite.core.precision import BF16, EXACT, PRECISIONS, forward_precision
from ancer_lite.core.streams import certify_streams
from ancer_lite.methods import optimize
from ancer_lite.models import architectures

sys.path.insert(0, str(Path(__file__).resolve().parent))
import authors_shim  # noqa: E402  (benchmarks/, beside this file)

N0, ALPHA, SIGMA = 100, 0.001, 0.25
#: the paper's Table 3 (seconds per input on a Quadro RTX 6000: Fixed σ, Isotropic DD, ANCER) and its inputs
#: (§7: the whole CIFAR-10 test set, a 500-image ImageNet subset)
MODELS = {
    "cifar_resnet18": dict(label="CIFAR-10 ResNet-18", builder="cifar_resnet18", args=(), shape=(3, 32, 32),
                           classes=10, noise=GAUSSIAN, batch=10_000, opt_inputs=16, paper=(1.6, 1.8, 2.7),
                           inputs=10_000, table1=True),
    "wrn40_2": dict(label="CIFAR-10 WRN-40-2", builder="wide_resnet", args=(40, 2), shape=(3, 32, 32), classes=10,
                    noise=UNIFORM, batch=10_000, opt_inputs=16, paper=(7.4, 9.5, 11.5), inputs=10_000, table1=False),
    "imagenet_resnet50": dict(label="ImageNet ResNet-50", builder="imagenet_resnet50", args=(), shape=(3, 224, 224),
                              classes=1000, noise=GAUSSIAN, batch=1_024, opt_inputs=2, paper=(109.5, 136.0, 147.0),
                              inputs=500, table1=False),
}
TABLE1_INPUTS, TABLE1_SIGMAS = 10_000, 4


# -- timing and torch's switches -----------------------------------------------------------------------------------
def timed(fn: Callable[[], object], dev: torch.device) -> tuple[float, object]:
    """fn's seconds, the device's queued work waited for before and after, and its result."""
    devices.synchronize(dev)
    t0 = time.perf_counter()
    out = fn()
    devices.synchronize(dev)
    return time.perf_counter() - t0, out


@contextmanager
def torch_flags(cudnn_tf32: bool, matmul_tf32: bool, benchmark: bool) -> Iterator[None]:
    """torch's TF32 and cuDNN-benchmark switches for the block, restored after it."""
    saved = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.benchmark)
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = cudnn_tf32, matmul_tf32
    torch.backends.cudnn.benchmark = benchmark
    try:
        yield
    finally:
        (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32,
         torch.backends.cudnn.benchmark) = saved


def nchw(model: torch.nn.Module) -> torch.nn.Module:
    """The model back in the default memory format (a `Smooth` outside exact leaves it channels_last)."""
    return model.to(memory_format=torch.contiguous_format)


def scale_of(noise: str) -> float:
    """The noise scale: sigma for Gaussian, the half-width lambda of the uniform noise of standard deviation sigma."""
    return SIGMA if noise == GAUSSIAN else uniform_lambda(SIGMA)


# -- Cohen et al.'s loop, as a user runs it --------------------------------------------------------------------------
@torch.no_grad()
def cohen_sample(model: torch.nn.Module, x: torch.Tensor, scale: float, num: int, batch_size: int,
                 num_classes: int, noise: str) -> np.ndarray:
    """Class counts over `num` noisy copies of x, batch by batch as Cohen et al.'s `_sample_noise` draws them."""
    counts = np.zeros(num_classes, dtype=np.int64)
    remaining = num
    while remaining > 0:
        b = min(batch_size, remaining)
        remaining -= b
        batch = x.repeat((b, 1, 1, 1))
        eps = torch.randn_like(batch) if noise == GAUSSIAN else torch.rand_like(batch) * 2 - 1
        predictions = model(batch + eps * scale).argmax(1)
        counts += torch.bincount(predictions, minlength=num_classes).cpu().numpy()
    return counts


def cohen_certify(model: torch.nn.Module, x: torch.Tensor, scale: float, n0: int, n: int, batch_size: int,
                  num_classes: int, noise: str) -> tuple[int, int, float]:
    """Cohen et al.'s CERTIFY on their loop: the top class of n0 draws, its count in n fresh ones, the bound."""
    model.eval()
    c_a = int(cohen_sample(model, x, scale, n0, batch_size, num_classes, noise).argmax())
    n_a = int(cohen_sample(model, x, scale, n, batch_size, num_classes, noise)[c_a])
    return c_a, n_a, float(lower_confidence_bound(n_a, n, ALPHA))


# -- the run ---------------------------------------------------------------------------------------------------------
class Bench:
    """The rows, the budget and the settings of one run."""

    def __init__(self, args: argparse.Namespace, dev: torch.device, defaults: dict) -> None:
        self.args, self.dev, self.defaults = args, dev, defaults
        self.start = time.perf_counter()
        self.rows: list[dict] = []
        self.skipped: list[str] = []  # past the budget
        self.unavailable: list[str] = []  # not in the package
        self.on_cuda = dev.type == "cuda"

    def allowed(self, what: str) -> bool:
        """Whether the budget lets `what` start (else it is listed as skipped)."""
        if self.args.budget_s is not None and time.perf_counter() - self.start > self.args.budget_s:
            self.skipped.append(what)
            print(f"  [budget] skipped: {what}", flush=True)
            return False
        return True

    def attempt(self, what: str, fn: Callable[[], dict | None], base: dict) -> dict | None:
        """Run one measurement: skipped past the budget; an error (out of device memory, the authors' code on
        today's torch, a failing check) is recorded in its row, with its traceback printed, instead of ending a run
        that has one chance on the device (`main` then exits with status 1)."""
        if not self.allowed(f"{base['model']}: {what}"):
            return None
        try:
            row = fn()
        except torch.cuda.OutOfMemoryError:
            row = dict(error="out of device memory")
        except Exception as e:
            traceback.print_exc()
            row = dict(error=f"{type(e).__name__}: {str(e)[:300]}", failed=True)
        finally:
            if self.on_cuda:
                torch.cuda.empty_cache()
        row = {**base, "measurement": what, **(row or {})}
        self.rows.append(row)
        print(f"  {what}: " + (row["error"] if "error" in row else
                               f"{row['s_per_input']:.4g} s/input" if row.get("s_per_input") is not None else
                               f"{row['images_per_s']:,.0f} images/s"), flush=True)
        return row


def bare_rate(model: torch.nn.Module, shape: tuple[int, ...], batch: int, dev: torch.device, precision: str,
              target_s: float) -> dict:
    """Images per second of model(batch).argmax(1) on a random batch on the device, in `precision` (channels_last
    outside exact on CUDA, as `Smooth` runs)."""
    last = dev.type == "cuda" and precision != EXACT
    fmt = torch.channels_last if last else torch.contiguous_format
    model.to(memory_format=fmt)
    xb = torch.rand(batch, *shape, device=dev).contiguous(memory_format=fmt)
    with torch.no_grad(), forward_precision(precision, dev):
        def once() -> None:
            model(xb).argmax(1)
        once()  # warm-up (cuDNN's timed kernels outside exact)
        t1, _ = timed(once, dev)
        reps = max(1, min(50, math.ceil(target_s / max(t1, 1e-9))))
        t, _ = timed(lambda: [once() for _ in range(reps)], dev)
    nchw(model)
    return dict(timed_at=f"{reps} x {batch:,} images", seconds=t, images_per_s=reps * batch / t,
                channels_last=last)


def certify_row(bench: Bench, spec: dict, model: torch.nn.Module, precision: str, draws: str, n: int,
                n_timed: int, batch: int) -> dict:
    """CERTIFY by the package's `Smooth`, timed at N0 + n_timed draws, scaled to N0 + n."""
    dev, shape, n0 = bench.dev, spec["shape"], bench.args.n0
    smooth = Smooth(nchw(model), spec["classes"], shape, spec["noise"], batch_size=batch, seed=0, device=dev,
                    precision=precision, draws=draws)
    x = torch.rand(shape, generator=torch.Generator().manual_seed(1))
    theta = scale_of(spec["noise"])
    warm = min(n_timed, batch + n_timed % batch)  # the batch shapes of the timed run (cuDNN picks kernels per shape)
    smooth.certify(x, theta, n0, warm, ALPHA, generator=certify_streams(0, 0))
    best = math.inf
    for r in range(bench.args.repeats):
        t, cert = timed(lambda r=r: smooth.certify(x, theta, n0, n_timed, ALPHA, generator=certify_streams(0, 1 + r)),
                        dev)
        best = min(best, t)
    nchw(model)
    factor = (n0 + n) / (n0 + n_timed)
    return dict(timed_at=f"N0 + N = {n0:,} + {n_timed:,}" + (f", scaled x{factor:.3g} to N = {n:,}" if factor != 1
                                                              else ""),
                seconds=best, s_per_input=best * factor, images_per_s=(n0 + n_timed) / best,
                prediction=int(cert.prediction), count=int(cert.count))


def cohen_row(bench: Bench, spec: dict, model: torch.nn.Module, flags: tuple[bool, bool, bool], n: int,
              n_timed: int, batch: int) -> dict:
    """Cohen et al.'s loop under torch's switches `flags` (cuDNN TF32, matmul TF32, cuDNN benchmark)."""
    dev, shape, n0 = bench.dev, spec["shape"], bench.args.n0
    nchw(model)
    x = torch.rand(shape, generator=torch.Generator().manual_seed(1)).to(dev)
    scale = scale_of(spec["noise"])
    warm = min(n_timed, batch + n_timed % batch)
    with torch_flags(*flags):
        cohen_certify(model, x, scale, n0, warm, batch, spec["classes"], spec["noise"])
        best = math.inf
        for _ in range(bench.args.repeats):
            t, (c_a, n_a, _) = timed(lambda: cohen_certify(model, x, scale, n0, n_timed, batch, spec["classes"],
                                                           spec["noise"]), dev)
            best = min(best, t)
    factor = (n0 + n) / (n0 + n_timed)
    return dict(timed_at=f"N0 + N = {n0:,} + {n_timed:,}" + (f", scaled x{factor:.3g} to N = {n:,}" if factor != 1
                                                              else ""),
                seconds=best, s_per_input=best * factor, images_per_s=(n0 + n_timed) / best, prediction=c_a,
                count=n_a)


def _accepts(fn: Callable, name: str) -> bool:
    return name in inspect.signature(fn).parameters


def package_opt_row(bench: Bench, spec: dict, model: torch.nn.Module, method: str, precision: str,
                    inputs: int) -> dict:
    """The package's Isotropic DD or ANCER on `inputs` inputs, timed over --timed-steps steps, scaled to --steps."""
    a, dev = bench.args, bench.dev
    noise, shape = spec["noise"], spec["shape"]
    fn = optimize.optimize_isotropic if method == "isotropic" else optimize.optimize_ancer
    x = torch.rand(inputs, *shape, generator=torch.Generator().manual_seed(2)).to(dev)
    start = torch.full((inputs,), scale_of(noise), device=dev)
    kwargs, notes = {}, []
    # the runs' own draws: one stream per input, made on the device where the package can (`input_streams`)
    streams = _accepts(optimize.input_streams, "draws")
    if not streams and _accepts(fn, "draws"):
        kwargs["draws"] = "device"
    elif not streams:
        notes.append("draws from one device generator (the package has no device draws)")

    def generator() -> object:
        if streams:
            return optimize.input_streams(noise, x, 0, list(range(inputs)), method, draws="device")
        return torch.Generator(None if "draws" in kwargs else dev).manual_seed(0)

    wrap = not _accepts(fn, "precision")
    if wrap:
        notes.append("precision set around the call (the optimizer takes no precision argument)")
    else:
        kwargs["precision"] = precision

    def run(iterations: int) -> torch.Tensor:
        gen = generator()
        with forward_precision(precision, dev) if wrap else nullcontext():
            return fn(model, x, start, noise, iterations=iterations, samples=a.samples, generator=gen, **kwargs)

    nchw(model)
    run(1)  # warm-up
    steps = min(a.timed_steps, a.steps)
    t, theta = timed(lambda: run(steps), dev)
    nchw(model)
    if not bool(torch.isfinite(theta).all()):
        notes.append("non-finite theta")
    return dict(timed_at=f"{steps} of {a.steps} steps x {a.samples} samples x {inputs} inputs", seconds=t,
                s_per_input=t * a.steps / steps / inputs, images_per_s=steps * a.samples * inputs / t,
                draws="device", notes="; ".join(notes))


def authors_opt_row(bench: Bench, spec: dict, model: torch.nn.Module, method: str, inputs: int,
                    authors: authors_shim.Authors) -> dict:
    """The authors' optimizer as their dataset loops call it, with torch's default switches."""
    a, dev = bench.args, bench.dev
    noise, shape = spec["noise"], spec["shape"]
    d = bench.defaults
    x = torch.rand(inputs, *shape, generator=torch.Generator().manual_seed(2)).to(dev)
    scale = scale_of(noise)
    model = nchw(model).eval()
    device = str(dev)

    def certificate() -> object:
        return authors.L2Certificate(inputs, device=device) if noise == GAUSSIAN else authors.L1Certificate(device)

    def run(iterations: int) -> torch.Tensor:
        if method == "isotropic":
            return authors.optimize_isotropic_dds(model, x, certificate(), 1e-4, torch.full((inputs,), scale,
                                                  device=dev), iterations, a.samples, device=device)
        return authors.optimize_ancer(model, x, certificate(), 0.04, torch.full_like(x, scale), iterations,
                                      a.samples, kappa=2.0, device=device)

    try:
        with torch_flags(d["cudnn_tf32"], d["matmul_tf32"], d["cudnn_benchmark"]):
            run(1)  # warm-up
            steps = min(a.timed_steps, a.steps)
            t, _ = timed(lambda: run(steps), dev)
    finally:
        model.zero_grad(set_to_none=True)  # ANCER's backward() fills the weights' .grad
        for p in model.parameters():
            p.requires_grad_(True)
    return dict(timed_at=f"{steps} of {a.steps} steps x {a.samples} samples x {inputs} inputs", seconds=t,
                s_per_input=t * a.steps / steps / inputs, images_per_s=steps * a.samples * inputs / t,
                draws="device (randn_like / rand_like)")


def run_model(bench: Bench, key: str, authors: authors_shim.Authors | None, authors_reason: str) -> None:
    a, dev = bench.args, bench.dev
    spec = MODELS[key]
    builder = getattr(architectures, spec["builder"], None)
    if builder is None:
        print(f"\n## {spec['label']}: skipped (ancer_lite.models.architectures has no {spec['builder']})")
        bench.unavailable.append(f"{key}: ancer_lite.models.architectures has no {spec['builder']}")
        return
    torch.manual_seed(0)
    model = builder(*spec["args"]).eval().to(dev)
    batch = a.batch or spec["batch"]
    n = a.n
    n_timed = min(n, a.imagenet_n) if key == "imagenet_resnet50" and a.imagenet_n else n
    inputs = a.opt_inputs or spec["opt_inputs"]
    params = sum(p.numel() for p in model.parameters())
    print(f"\n## {spec['label']} ({params / 1e6:.1f} M parameters, {spec['noise']} noise, scale "
          f"{scale_of(spec['noise']):.4g}, batch {batch:,})", flush=True)
    common = dict(model=key, label=spec["label"], noise=spec["noise"], batch=batch)
    d = bench.defaults
    target = 0.25 if a.quick else 1.0

    for p in PRECISIONS:
        bench.attempt(f"bare forward {p}", lambda p=p: bare_rate(model, spec["shape"], batch, dev, p, target),
                      dict(common, kind="bare", code="bare forward", precision=p, draws="-"))
    for p in a.precisions:
        bench.attempt(f"CERTIFY {p} device draws",
                      lambda p=p: certify_row(bench, spec, model, p, "device", n, n_timed, batch),
                      dict(common, kind="certify", code="package Smooth", precision=p, draws="device"))
    bench.attempt("CERTIFY exact CPU draws", lambda: certify_row(bench, spec, model, EXACT, "cpu", n, n_timed, batch),
                  dict(common, kind="certify", code="package Smooth", precision=EXACT, draws="cpu"))
    cohen_draws = "device (randn_like)" if spec["noise"] == GAUSSIAN else "device (rand_like)"
    bench.attempt("Cohen loop fp32 (TF32 off)", lambda: cohen_row(bench, spec, model, (False, False, False), n,
                                                                  n_timed, batch),
                  dict(common, kind="certify", code="Cohen et al. loop", precision="fp32, TF32 off",
                       draws=cohen_draws))
    defaults = (d["cudnn_tf32"], d["matmul_tf32"], d["cudnn_benchmark"])
    bench.attempt("Cohen loop torch defaults", lambda: cohen_row(bench, spec, model, defaults, n, n_timed, batch),
                  dict(common, kind="certify", code="Cohen et al. loop", precision=_defaults_label(d),
                       draws=cohen_draws))
    for method in ("isotropic", "ancer"):
        for p in a.precisions:
            bench.attempt(f"{method} optimization {p}",
                          lambda p=p, method=method: package_opt_row(bench, spec, model, method, p, inputs),
                          dict(common, kind=method, code="package optimize", precision=p, draws="device"))
    for method in ("isotropic", "ancer"):
        name = "ddsmoothing optimize_isotropic_dds" if method == "isotropic" else "ancer optimize_ancer"
        if authors is None:
            bench.rows.append(dict(common, kind=method, code=f"authors' {name}", precision=_defaults_label(d),
                                   measurement=f"authors' {method}", error=authors_reason))
            continue
        bench.attempt(f"authors' {method} optimization",
                      lambda method=method: authors_opt_row(bench, spec, model, method, inputs, authors),
                      dict(common, kind=method, code=f"authors' {name}", precision=_defaults_label(d)))
    model.to("cpu")
    if bench.on_cuda:
        torch.cuda.empty_cache()


def _defaults_label(d: dict) -> str:
    return f"torch defaults (cuDNN TF32 {'on' if d['cudnn_tf32'] else 'off'})"


# -- the report -------------------------------------------------------------------------------------------------------
def _fmt(v: float | None, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def model_table(rows: list[dict], key: str) -> str:
    mine = [r for r in rows if r["model"] == key]
    limit = next((r["images_per_s"] for r in mine if r["kind"] == "bare" and r["precision"] == BF16
                  and "images_per_s" in r), None)
    head = ("| measurement | code | precision | noise drawn | timed at | s / input | images/s | ÷ bare bf16 | notes |\n"
            "| --- | --- | --- | --- | --- | ---: | ---: | ---: | --- |")
    lines = [head]
    for r in mine:
        rate = r.get("images_per_s")
        frac = (f"{rate / limit:.2f}" if rate and limit and r["kind"] in ("bare", "certify") else "-")
        note = r.get("error") or r.get("notes") or ""
        lines.append(f"| {r['measurement']} | {r['code']} | {r['precision']} | {r.get('draws', '-')} | "
                     f"{r.get('timed_at', '-')} | {_fmt(r.get('s_per_input'))} | {_fmt(rate)} | {frac} | {note} |")
    return "\n".join(lines)


def _s(rows: list[dict], key: str, kind: str, code: str, precision: str, draws: str | None = None) -> float | None:
    for r in rows:
        if (r["model"] == key and r["kind"] == kind and r["code"].startswith(code) and r["precision"] == precision
                and (draws is None or r.get("draws") == draws) and r.get("s_per_input") is not None):
            return r["s_per_input"]
    return None


def gpu_hours(rows: list[dict], keys: list[str], precisions: list[str], defaults_label: str) -> list[dict]:
    """Table 3's per-input seconds and GPU-hours per model and pipeline, and Table 1's CIFAR-10 block."""
    out = []
    for key in keys:
        spec = MODELS[key]
        pipelines = [(f"package {p}", _s(rows, key, "certify", "package", p, "device"),
                      _s(rows, key, "isotropic", "package", p), _s(rows, key, "ancer", "package", p))
                     for p in precisions]
        pipelines.append(("package exact, CPU draws", _s(rows, key, "certify", "package", EXACT, "cpu"),
                          _s(rows, key, "isotropic", "package", EXACT), _s(rows, key, "ancer", "package", EXACT)))
        pipelines.append(("Cohen loop + authors' optimizers, " + defaults_label,
                          _s(rows, key, "certify", "Cohen", defaults_label),
                          _s(rows, key, "isotropic", "authors", defaults_label),
                          _s(rows, key, "ancer", "authors", defaults_label)))
        fixed, iso, anc = spec["paper"]
        # the paper's own per-input seconds: CERTIFY = Fixed σ's, the optimizations = the differences
        t1 = TABLE1_INPUTS * TABLE1_SIGMAS * (2 * fixed + anc) / 3600 if spec["table1"] else None
        out.append(dict(model=key, pipeline="paper, Table 3 (Quadro RTX 6000)", fixed_s=fixed, isotropic_s=iso,
                        ancer_s=anc, inputs=spec["inputs"], **_hours(fixed, iso, anc, spec["inputs"], t1)))
        for name, c, i, an in pipelines:
            f_s = c
            i_s = c + i if c is not None and i is not None else None
            a_s = c + i + an if None not in (c, i, an) else None
            t1 = (TABLE1_INPUTS * TABLE1_SIGMAS * (3 * c + i + an) / 3600 if spec["table1"] and None not in (c, i, an)
                  else None)
            out.append(dict(model=key, pipeline=name, fixed_s=f_s, isotropic_s=i_s, ancer_s=a_s, inputs=spec["inputs"],
                            **_hours(f_s, i_s, a_s, spec["inputs"], t1)))
    return out


def _hours(f: float | None, i: float | None, a: float | None, inputs: int, t1: float | None) -> dict:
    h = {m: (v * inputs / 3600 if v is not None else None) for m, v in (("fixed_h", f), ("isotropic_h", i),
                                                                       ("ancer_h", a))}
    return dict(h, table3_total_h=sum(h.values()) if None not in h.values() else None, table1_block_h=t1)


def hours_table(hours: list[dict]) -> str:
    lines = ["| model | pipeline | Fixed σ s/input | Isotropic DD s/input | ANCER s/input | inputs | "
             "Fixed σ GPU-h | Isotropic DD GPU-h | ANCER GPU-h | Table 1 block GPU-h |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for h in hours:
        lines.append(f"| {MODELS[h['model']]['label']} | {h['pipeline']} | {_fmt(h['fixed_s'])} | "
                     f"{_fmt(h['isotropic_s'])} | {_fmt(h['ancer_s'])} | {h['inputs']:,} | {_fmt(h['fixed_h'], 3)} | "
                     f"{_fmt(h['isotropic_h'], 3)} | {_fmt(h['ancer_h'], 3)} | {_fmt(h['table1_block_h'], 3)} |")
    return "\n".join(lines)


def _choices(text: str, name: str, ap: argparse.ArgumentParser, choices: tuple[str, ...]) -> list[str]:
    items = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in items if s not in choices]
    if not items or bad:
        ap.error(f"--{name} must be a comma-separated subset of {','.join(choices)}, got {text!r}")
    return items


def main(argv: list[str] | None = None) -> int:
    # torch's own switches, read before anything resolves a device (`devices.resolve` switches TF32 off)
    defaults = dict(cudnn_tf32=bool(torch.backends.cudnn.allow_tf32),
                    matmul_tf32=bool(torch.backends.cuda.matmul.allow_tf32),
                    cudnn_benchmark=bool(torch.backends.cudnn.benchmark))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=None, help=f"comma-separated, of {','.join(MODELS)} (default all; "
                    "--quick: cifar_resnet18)")
    ap.add_argument("--n", type=int, default=None, help="CERTIFY's N (default 100,000; --quick: 64)")
    ap.add_argument("--n0", type=int, default=None, help="CERTIFY's N0 (default 100; --quick: 10)")
    ap.add_argument("--imagenet-n", type=int, default=10_000,
                    help="ImageNet's CERTIFY is timed at this N and scaled linearly to --n (0: time at --n)")
    ap.add_argument("--steps", type=int, default=None, help="optimization steps (default 100; --quick: 2)")
    ap.add_argument("--timed-steps", type=int, default=None,
                    help="steps actually timed, scaled linearly to --steps (default 10; --quick: 1)")
    ap.add_argument("--samples", type=int, default=None, help="noise samples per input and step (default 100; "
                    "--quick: 8)")
    ap.add_argument("--opt-inputs", type=int, default=None,
                    help="inputs optimized together (default 16, ImageNet 2; --quick: 1)")
    ap.add_argument("--precisions", default=",".join(PRECISIONS), help="comma-separated, of exact,tf32,bf16")
    ap.add_argument("--batch", type=int, default=None,
                    help="CERTIFY's and the bare passes' batch (default CIFAR 10,000, ImageNet 1,024: whole blocks of the forward pass's 16 rows; --quick: 32)")
    ap.add_argument("--repeats", type=int, default=1, help="CERTIFY and Cohen's loop: best of (default 1)")
    ap.add_argument("--device", default="auto", help="'auto' (CUDA when available), 'cpu', 'cuda', 'cuda:N'")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="start no new measurement after this many seconds (the skipped ones are listed)")
    ap.add_argument("--authors-wheels", action="append", default=[],
                    help="a folder with the authors' wheels, used when the packages are not installed (repeatable)")
    ap.add_argument("--quick", action="store_true", help="a CPU smoke test (tiny settings, CIFAR ResNet-18 only)")
    ap.add_argument("--out", default=None, help="write the rows, GPU-hours and the machine as JSON to this path")
    a = ap.parse_args(argv)
    q = a.quick
    a.n = a.n if a.n is not None else (64 if q else 100_000)
    a.n0 = a.n0 if a.n0 is not None else (10 if q else N0)
    a.steps = a.steps if a.steps is not None else (2 if q else 100)
    a.timed_steps = a.timed_steps if a.timed_steps is not None else (1 if q else 10)
    a.samples = a.samples if a.samples is not None else (8 if q else 100)
    a.opt_inputs = a.opt_inputs if a.opt_inputs is not None else (1 if q else None)
    a.batch = a.batch if a.batch is not None else (32 if q else None)
    keys = _choices(a.models or ("cifar_resnet18" if q else ",".join(MODELS)), "models", ap, tuple(MODELS))
    a.precisions = _choices(a.precisions, "precisions", ap, PRECISIONS)
    for name in ("n", "n0", "steps", "timed_steps", "samples", "repeats"):
        if getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(a, name)}")
    for name in ("opt_inputs", "batch"):
        if getattr(a, name) is not None and getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(a, name)}")
    if a.imagenet_n < 0:
        ap.error(f"--imagenet-n must be >= 0, got {a.imagenet_n}")
    try:
        dev = devices.resolve(a.device)
    except ValueError as e:
        ap.error(str(e))

    on_cuda = dev.type == "cuda"
    machine = dict(device=str(dev), gpu=torch.cuda.get_device_name(dev) if on_cuda else None,
                   cpu=platform.processor() or platform.machine(), torch=torch.__version__,
                   cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version() if on_cuda else None,
                   cpu_threads=torch.get_num_threads(), python=platform.python_version(), torch_defaults=defaults)
    try:
        authors, reason = authors_shim.import_authors(a.authors_wheels), ""
    except ImportError as e:
        authors, reason = None, f"authors' code not installed ({e})"
    machine["authors_code"] = (f"{authors.origin}; patched: {', '.join(authors.patched) or 'nothing'}" if authors
                               else reason)
    settings = dict(models=keys, n0=a.n0, n=a.n, imagenet_n=a.imagenet_n, alpha=ALPHA, sigma=SIGMA, steps=a.steps,
                    timed_steps=a.timed_steps, samples=a.samples, opt_inputs=a.opt_inputs, batch=a.batch,
                    precisions=a.precisions, repeats=a.repeats, budget_s=a.budget_s, quick=q)
    print(f"# gpu_check: {machine['gpu'] or machine['cpu']} ({machine['device']}), torch {machine['torch']}, CUDA "
          f"{machine['cuda']}, cuDNN {machine['cudnn']}, {machine['cpu_threads']} CPU threads")
    print(f"torch's defaults here: cuDNN TF32 {defaults['cudnn_tf32']}, matmul TF32 {defaults['matmul_tf32']}, "
          f"cuDNN benchmark {defaults['cudnn_benchmark']}")
    print(f"authors' code: {machine['authors_code']}")
    print(f"CERTIFY: N0 = {a.n0:,}, N = {a.n:,}, alpha = {ALPHA}"
          + (f" (ImageNet timed at N = {min(a.n, a.imagenet_n):,} and scaled linearly)"
             if "imagenet_resnet50" in keys and a.imagenet_n and a.imagenet_n < a.n else "")
          + f"; optimizations: {a.steps} steps x {a.samples} samples, timed over {min(a.timed_steps, a.steps)} steps"
          + (" and scaled linearly" if a.timed_steps < a.steps else "")
          + f"; precisions {','.join(a.precisions)}" + (" (--quick: the timings mean nothing)" if q else ""),
          flush=True)

    bench = Bench(a, dev, defaults)
    for key in keys:
        if bench.allowed(f"{key}: every measurement"):
            run_model(bench, key, authors, reason)
    hours = gpu_hours(bench.rows, keys, a.precisions, _defaults_label(defaults))
    for key in keys:
        if any(r["model"] == key for r in bench.rows):
            print(f"\n### {MODELS[key]['label']}\n")
            print(model_table(bench.rows, key))
    print("\ns / input: CERTIFY at N0 + N (scaled where stated); an optimization's seconds for its batch / its inputs "
          "(scaled to --steps where stated). images/s: noisy images classified per second (optimizations: forward + "
          "backward). ÷ bare bf16: the rate over the bare bf16 forward rate, the device's limit for this model.")
    print("\n### GPU-hours (Table 3: s/input x the paper's inputs; Table 1 block: CIFAR-10 ResNet-18, "
          f"{TABLE1_INPUTS:,} inputs x {TABLE1_SIGMAS} sigma x Fixed σ, Isotropic DD, ANCER from Isotropic DD's θ)\n")
    print(hours_table(hours))
    print("\nIsotropic DD = its optimization + CERTIFY; ANCER = Isotropic DD's and ANCER's optimizations + CERTIFY "
          "(Table 3 counts the isotropic initialization); the memory step and data loading are not counted.")
    elapsed = time.perf_counter() - bench.start
    if bench.unavailable:
        print("\nnot measured: " + "; ".join(bench.unavailable))
    if bench.skipped:
        print(f"\nskipped past --budget-s {a.budget_s:g}: " + "; ".join(bench.skipped))
    failed = [f"{r['model']}: {r['measurement']}" for r in bench.rows if r.get("failed")]
    if failed:
        print(f"\nFAILED ({len(failed)}): " + "; ".join(failed))
    print(f"\ntotal {elapsed:.1f} s")
    if a.out:
        Path(a.out).write_text(json.dumps(dict(machine=machine, settings=settings, rows=bench.rows, gpu_hours=hours,
                                               skipped=bench.skipped, unavailable=bench.unavailable,
                                               elapsed_s=elapsed), indent=2) + "\n",
                               encoding="utf-8")
        print(f"wrote {a.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
