"""Overhead of Monte Carlo certification: CERTIFY at N0 = 100, N = 100,000 for a small MLP, against the
same number of bare forward passes (same batch size, inputs prepared in advance, no noise).

Usage: python benchmarks/bench_certify.py [--repeats 5] [--max-ratio 1.2]
Prints both times and their ratio (median over repeats); exits 1 if the ratio exceeds --max-ratio.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from ancer_lite import Smooth
from ancer_lite.models import MLP


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n0", type=int, default=100)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--batch-size", type=int, default=10_000)
    ap.add_argument("--max-ratio", type=float, default=1.2)
    args = ap.parse_args()

    torch.manual_seed(0)
    shape, classes = (1, 8, 8), 10  # the digits profile's input
    model = MLP(shape, classes, hidden=(256, 256)).eval()
    smooth = Smooth(model, classes, shape, noise="gaussian", batch_size=args.batch_size, seed=0)
    x = torch.rand(shape)
    total = args.n0 + args.n
    batch = x.expand(args.batch_size, *shape).contiguous()

    @torch.no_grad()
    def bare() -> None:
        left = total
        while left > 0:
            b = min(args.batch_size, left)
            model(batch[:b]).argmax(dim=1)
            left -= b

    def certify() -> None:
        smooth.certify(x, 0.25, args.n0, args.n, 0.001)

    bare(), certify()  # warm-up
    t_bare, t_cert = [], []
    for _ in range(args.repeats):
        for fn, acc in ((bare, t_bare), (certify, t_cert)):
            t0 = time.perf_counter()
            fn()
            acc.append(time.perf_counter() - t0)
    mb, mc = statistics.median(t_bare), statistics.median(t_cert)
    ratio = mc / mb
    print(f"threads={torch.get_num_threads()} model=MLP{shape}->256->256->{classes} batch={args.batch_size}")
    print(f"bare forward passes ({total:,}): {mb:.3f} s (median of {args.repeats})")
    print(f"certify N0={args.n0}, N={args.n:,}:    {mc:.3f} s (median of {args.repeats})")
    print(f"ratio certify / bare: {ratio:.3f} (limit {args.max_ratio})")
    return 0 if ratio <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
