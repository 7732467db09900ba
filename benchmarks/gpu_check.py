"""Certification throughput on one device: noise draws classified per second by
`Smooth.certify` (N0 = 100 selection draws, then N estimation draws, the input's own streams `certify_streams`)
against bare forward passes of the same model on random batches of the same size already on the device, and
their ratio, for the MNIST SmallCNN (1 x 28 x 28) and a CIFAR-10 ResNet of `models.architectures` (3 x 32 x 32), at
each batch size. CERTIFY draws its noise on the CPU (the streams' device) and copies it to the device; the
"noise" column is that CPU work alone (drawing N0 + N draws from a `noise.DrawStream`), the part a GPU cannot
speed up.

Each figure is the best of --repeats runs, after one warm-up certification (kernel selection, allocator). On a
GPU every timing waits for the device's queued work (`devices.synchronize`). Prints one table and, with --out,
writes the rows and the machine as JSON.

Usage: python benchmarks/gpu_check.py [--device auto] [--n 100000] [--batch-sizes 1000,10000] [--repeats 3]
                                      [--resnet cifar_resnet110] [--quick] [--tf32] [--out gpu_check.json]
--quick: N = 2,000, batch sizes 500 and 1,000, ResNet-20, one repeat (a smoke test, for a CPU).
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

import torch

from ancer_lite.core import devices
from ancer_lite.core.certify import Smooth
from ancer_lite.core.noise import DrawStream
from ancer_lite.core.streams import certify_streams
from ancer_lite.models.architectures import ARCHITECTURES, get_architecture
from ancer_lite.models.small import SmallCNN

N0, ALPHA, SIGMA = 100, 0.001, 0.25


def _timed(fn, dev: torch.device) -> float:
    devices.synchronize(dev)
    t0 = time.perf_counter()
    fn()
    devices.synchronize(dev)
    return time.perf_counter() - t0


def measure(name: str, model: torch.nn.Module, shape: tuple[int, ...], dev: torch.device, n: int, batch: int,
            repeats: int) -> dict:
    """One row: CERTIFY's and the bare forward passes' seconds and rates for N0 + n draws in batches of `batch`."""
    total = N0 + n
    smooth = Smooth(model, 10, shape, "gaussian", batch_size=batch, seed=0, device=dev)
    x = torch.rand(shape, generator=torch.Generator().manual_seed(0))
    smooth.certify(x, SIGMA, N0, min(n, 2 * batch), ALPHA, generator=certify_streams(0, 0))  # warm-up
    certify_s, cert = math.inf, None
    for r in range(repeats):
        def run(r: int = r) -> None:
            nonlocal cert
            cert = smooth.certify(x, SIGMA, N0, n, ALPHA, generator=certify_streams(0, 1 + r))
        certify_s = min(certify_s, _timed(run, dev))

    batches = [torch.rand(batch, *shape, device=dev) for _ in range(2)]
    sizes = [batch] * (total // batch) + ([total % batch] if total % batch else [])

    @torch.no_grad()
    def bare() -> None:
        for i, b in enumerate(sizes):
            model(batches[i % 2][:b]).argmax(dim=1)

    bare()  # warm-up (the last, partial batch's kernels too)
    bare_s = min(_timed(bare, dev) for _ in range(repeats))

    def noise() -> None:
        stream = DrawStream("gaussian", shape, torch.Generator().manual_seed(5))
        out = torch.empty((batch, *shape))
        for b in sizes:
            stream.draw(b, out=out[:b])

    noise_s = min(_timed(noise, torch.device("cpu")) for _ in range(repeats))
    return dict(model=name, params=sum(p.numel() for p in model.parameters()), input_shape=list(shape),
                batch_size=batch, draws=total, certify_s=certify_s, certify_draws_per_s=total / certify_s,
                bare_s=bare_s, bare_per_s=total / bare_s, ratio=certify_s / bare_s, noise_s=noise_s,
                noise_draws_per_s=total / noise_s, prediction=cert.prediction, count=cert.count)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="auto", help="'auto' (CUDA when available), 'cpu', 'cuda', 'cuda:N'")
    ap.add_argument("--n", type=int, default=None, help="CERTIFY's N (default 100,000; --quick: 2,000)")
    ap.add_argument("--batch-sizes", default=None, help="comma-separated (default 1000,10000; --quick: 500,1000)")
    ap.add_argument("--repeats", type=int, default=None, help="best of (default 3; --quick: 1)")
    ap.add_argument("--resnet", default=None, choices=[a for a in ARCHITECTURES if ARCHITECTURES[a] == "cifar10"],
                    help="the CIFAR-10 network (default cifar_resnet110, Cohen et al.'s; --quick: cifar_resnet20)")
    ap.add_argument("--quick", action="store_true", help="tiny settings, for a smoke test on a CPU")
    ap.add_argument("--tf32", action="store_true",
                    help="allow TF32 again (torch's default for cuDNN convolutions), to measure what the package's "
                         "full float32 on CUDA (`devices.full_float32`) costs")
    ap.add_argument("--out", default=None, help="write the rows and the machine as JSON to this path")
    args = ap.parse_args(argv)
    n = args.n or (2_000 if args.quick else 100_000)
    sizes_arg = args.batch_sizes or ("500,1000" if args.quick else "1000,10000")
    try:
        sizes = [int(s) for s in sizes_arg.split(",")]
    except ValueError:
        ap.error(f"--batch-sizes must be comma-separated integers, got {sizes_arg!r}")
    if n < 1 or any(b < 1 for b in sizes):
        ap.error(f"--n and every batch size must be >= 1, got n = {n}, batch sizes {sizes}")
    repeats = args.repeats or (1 if args.quick else 3)
    resnet = args.resnet or ("cifar_resnet20" if args.quick else "cifar_resnet110")
    try:
        dev = devices.resolve(args.device)
    except ValueError as e:
        ap.error(str(e))
    if args.tf32:
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True

    torch.manual_seed(0)
    nets = [("mnist SmallCNN", SmallCNN((1, 28, 28), 10).eval(), (1, 28, 28)),
            (f"cifar10 {resnet}", get_architecture(resnet, "cifar10").eval(), (3, 32, 32))]
    on_gpu = dev.type != "cpu"
    machine = dict(device=str(dev), name=torch.cuda.get_device_name(dev) if on_gpu else platform.processor() or "cpu",
                   torch=torch.__version__, cpu_threads=torch.get_num_threads(),
                   cudnn_tf32=bool(torch.backends.cudnn.allow_tf32) if on_gpu else None,
                   matmul_tf32=bool(torch.backends.cuda.matmul.allow_tf32) if on_gpu else None,
                   n0=N0, n=n, repeats=repeats)
    print(f"device {machine['device']} ({machine['name']}), torch {machine['torch']}, {machine['cpu_threads']} CPU "
          f"threads" + (f", TF32 conv {machine['cudnn_tf32']} / matmul {machine['matmul_tf32']}" if on_gpu else ""))
    print(f"CERTIFY: N0 = {N0:,} + N = {n:,} Gaussian draws (sigma {SIGMA}); bare: the same number of forward passes "
          f"on random batches on the device; best of {repeats}")
    rows = []
    head = (f"{'model':<24} {'params':>9} {'batch':>7} {'CERTIFY draws/s':>16} {'bare fwd/s':>12} {'ratio':>6} "
            f"{'CPU noise draws/s':>18}")
    print(head)
    print("-" * len(head))
    for name, model, shape in nets:
        model.to(dev)
        for batch in sizes:
            row = measure(name, model, shape, dev, n, batch, repeats)
            rows.append(row)
            print(f"{name:<24} {row['params']:>9,} {batch:>7,} {row['certify_draws_per_s']:>16,.0f} "
                  f"{row['bare_per_s']:>12,.0f} {row['ratio']:>6.2f} {row['noise_draws_per_s']:>18,.0f}", flush=True)
        model.to("cpu")
    print("ratio = CERTIFY's seconds / the bare forward passes' seconds (1.0: certification costs only the forward "
          "passes); CPU noise draws/s bounds CERTIFY's rate from above whatever the device")
    if args.out:
        Path(args.out).write_text(json.dumps(dict(machine=machine, rows=rows), indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
