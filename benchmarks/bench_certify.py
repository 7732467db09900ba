"""Overhead of Monte Carlo certification: CERTIFY at N0 = 100, N = 100,000 for small MLPs on the digits
input (1 x 8 x 8), against the same number of bare forward passes (same batch size, inputs prepared in
advance, no noise), plus the time of generating the noise alone.

CERTIFY's only work beyond the forward passes is drawing the noise (and counting votes); the noise
costs the same for every model with this input size, so its share shrinks as the model grows. Both
widths are reported; the --max-ratio limit applies to the 512-wide MLP (64-512-512-10, 0.3M
parameters). On a shared 2-core machine timings swing by +-30% within seconds, so whole runs are only
reported (medians). The gated figure times one batch of CERTIFY's sampling loop (`Smooth.sample_counts` with
batch_size samples: noise, forward, votes) and one bare batch, back to back and alternating the order, --pairs
times, and divides the fastest sampling batch by the fastest bare batch: what each costs when nothing else on the
machine gets in the way (the estimator `timeit` recommends). The median of the paired ratios is reported beside it:
on this VM it ranged over 1.08-1.33 in 13 runs of one afternoon (4 above 1.2), the ratio of the minima over
1.088-1.272 in 9 (1 above 1.2: a run whose fastest bare batch was unusually fast).

It then reports, for every base classifier of the quick profile (`ancer_lite.studies.throughput`): its FLOP count,
bare forward throughput (images/s and achieved GFLOP/s, and their fraction of the rate of a large fp32
matrix product on the same threads), CERTIFY's sampling loop against its bare forward passes, and each
method's seconds per input at the paper's budget (optimization 100 x 100 samples, N0 = 100, N = 100,000),
all measured in this one run, and the noise floor: the draws' share of the bare forward pass and CERTIFY against
draws + forwards (`throughput.draw_floor`). Last, the same two ratios for ANCER's CIFAR-10 ResNet-18 (untrained
weights: the speed of a forward pass does not depend on them; batch 128, a multiple of the 16-row blocks), where the
forward pass dominates the draws. These figures are reported, not gated: see the README's "Performance".

Usage: python benchmarks/bench_certify.py [--repeats 11] [--pairs 200] [--max-ratio 1.2] [--quick-pairs 20]
                                          [--no-quick-models] [--paper-pairs 4]
"""
from __future__ import annotations

import argparse
import statistics
import sys

import torch

from ancer_lite import Smooth
from ancer_lite.core.noise import standard_noise
from ancer_lite.models.architectures import get_architecture
from ancer_lite.models.small import MLP
from ancer_lite.runs.profiles import get_profile
from ancer_lite.studies import runtime, throughput


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--n0", type=int, default=100)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--batch-size", type=int, default=10_000)
    ap.add_argument("--max-ratio", type=float, default=1.2)
    ap.add_argument("--quick-pairs", type=int, default=20, help="paired batches per quick model")
    ap.add_argument("--quick-batch", type=int, default=get_profile("quick").batch_size,
                    help="the quick models' batch (default: the quick profile's certification batch)")
    ap.add_argument("--no-quick-models", action="store_true", help="skip the quick models' report")
    ap.add_argument("--paper-pairs", type=int, default=4, help="paired batches for the CIFAR-10 ResNet-18 (0: skip)")
    args = ap.parse_args()

    shape, classes = (1, 8, 8), 10
    total = args.n0 + args.n
    x = torch.rand(shape, generator=torch.Generator().manual_seed(0))
    gen = torch.Generator().manual_seed(1)
    buffer = torch.empty((args.batch_size, *shape))

    def noise_only() -> None:
        left = total
        while left > 0:
            b = min(args.batch_size, left)
            standard_noise("gaussian", b, shape, gen, out=buffer[:b])
            left -= b

    t_noise = min(throughput.paired_times(noise_only, lambda: None, 7)[0])
    print(f"threads={torch.get_num_threads()}, input {shape}, batch {args.batch_size}")
    print(f"drawing {total:,} Gaussian noise samples alone: {t_noise:.3f} s (min of 7)")
    status = 0
    for width in (256, 512):
        torch.manual_seed(0)
        model = MLP(shape, classes, hidden=(width, width)).eval()
        smooth = Smooth(model, classes, shape, noise="gaussian", batch_size=args.batch_size, seed=0)
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

        @torch.no_grad()
        def bare_batch() -> None:
            model(batch).argmax(dim=1)

        def sampling_batch() -> None:
            smooth.sample_counts(x, 0.25, args.batch_size)

        bare(), certify()  # warm-up
        t_bare, t_cert = throughput.paired_times(bare, certify, args.repeats)
        b_bare, b_cert = throughput.paired_times(bare_batch, sampling_batch, args.pairs)
        paired = statistics.median(c / b for c, b in zip(b_cert, b_bare))
        ratio = min(b_cert) / min(b_bare)
        gated = width == 512
        print(f"MLP 64-{width}-{width}-10: certify N0={args.n0}, N={args.n:,}: median {statistics.median(t_cert):.3f} s; "
              f"{total:,} bare forward passes: median {statistics.median(t_bare):.3f} s (over {args.repeats})")
        print(f"  per batch of {args.batch_size:,}: sampling {statistics.median(b_cert) * 1e3:.1f} ms, bare "
              f"{statistics.median(b_bare) * 1e3:.1f} ms (medians of {args.pairs}); fastest sampling / fastest bare "
              f"{ratio:.3f}" + (f" (limit {args.max_ratio})" if gated else " (reported)")
              + f"; median of the paired ratios {paired:.3f} (reported)")
        if gated and ratio > args.max_ratio:
            status = 1
    if status:
        print("\nthe gated ratio exceeded its limit: the quick models' report is left for a passing attempt")
    elif not args.no_quick_models:
        print("\nThe quick profile's base classifiers (reported, not gated):")
        table = throughput.benchmark(get_profile("quick"), batch=args.quick_batch, pairs=args.quick_pairs, n0=args.n0,
                                     budget={**runtime.PAPER_BUDGET, "n": args.n})
        print(throughput.report(table, torch.get_num_threads()))
    if not status and args.paper_pairs:
        torch.manual_seed(0)
        net = throughput.QuickModel("ResNet-18 on CIFAR-10 32x32", (), get_architecture("cifar_resnet18", "cifar10").eval(),
                                    (3, 32, 32), 10)
        ratio = throughput.certify_ratio(net, 128, args.paper_pairs)
        share, versus_floor = throughput.draw_floor(net, 128, args.paper_pairs)
        print(f"\n{net.name} (ANCER's CIFAR-10 model, {net.parameters:,} parameters, "
              f"{throughput.flops_per_image(net.model, net.input_shape) / 1e6:,.0f} MFLOP/image; batch 128): the draws "
              f"alone {share:.2%} of the bare forward; CERTIFY sampling / bare forward {ratio:.3f} (median of "
              f"{args.paper_pairs} paired batches), / (draws + bare forward) {versus_floor:.3f}; within "
              f"{throughput.LIMIT}x of the bare forwards: {'yes' if ratio <= throughput.LIMIT else 'no'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
