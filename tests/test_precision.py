"""The precision setting (`core.precision`) and noise drawn where the model runs (`noise.BlockDrawStream`,
`Smooth(draws="device")`), on the CPU: the same code paths a GPU takes, with the CPU's arithmetic and generators.

- CERTIFY stays sound in every precision: on linear classifiers whose smoothed probability is known in closed form
  (exact) or measured to within 1e-3 (the classifier as evaluated in bf16), over-certification stays <= alpha.
- Block draws: any cut of a stream into batches gives the same draws; block j is the family's draw from the seed
  SplitMix64 gives (checked against SplitMix64's published first output); counts do not depend on the batch size.
- Exact precision with CPU draws is today's CERTIFY, bit for bit.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import norm

from ancer_lite.core import precision as prec
from ancer_lite.core.base_classifier import check_per_example
from ancer_lite.core.certify import Smooth
from ancer_lite.core.families import FAMILIES
from ancer_lite.core.names import ABSTAIN
from ancer_lite.core.noise import BLOCK_ROWS, BlockDrawStream, block_seed
from ancer_lite.core.streams import certify_streams, stream


class Linear2(torch.nn.Module):
    """f(x) = [0, w.x + b] computed by an nn.Linear in the input's dtype, so that autocast evaluates it in bf16."""

    def __init__(self, w: np.ndarray, b: float) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(len(w), 1)
        with torch.no_grad():
            self.lin.weight.copy_(torch.tensor(w, dtype=torch.float32)[None])
            self.lin.bias.fill_(b)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.lin(x.reshape(x.shape[0], -1))
        return torch.cat([torch.zeros_like(s), s], dim=1)


# -- the setting ------------------------------------------------------------------------------------------------

def test_check_precision_names_the_argument_and_choices():
    assert [prec.check_precision(p) for p in prec.PRECISIONS] == ["exact", "tf32", "bf16"]
    with pytest.raises(ValueError, match=r"precision.*exact.*tf32.*bf16.*'fp16'"):
        prec.check_precision("fp16")
    with pytest.raises(ValueError, match="precision"):
        Smooth(torch.nn.Flatten(), 2, (2,), precision="float32")
    with pytest.raises(ValueError, match="draws"):
        Smooth(torch.nn.Flatten(), 2, (2,), draws="gpu")


@pytest.mark.parametrize("p", prec.PRECISIONS)
def test_forward_precision_sets_and_restores_torch_flags(p):
    before = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.benchmark)
    with prec.forward_precision(p, torch.device("cpu")):
        assert torch.backends.cudnn.allow_tf32 is (p == prec.TF32)
        assert torch.backends.cuda.matmul.allow_tf32 is (p == prec.TF32)
        assert torch.is_autocast_enabled("cpu") is (p == prec.BF16)
        assert torch.backends.cudnn.benchmark is before[2]  # timed kernels only on CUDA
    assert (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.benchmark) == before
    with pytest.raises(RuntimeError), prec.forward_precision(p, torch.device("cpu")):  # restored on error too
        raise RuntimeError
    assert torch.backends.cudnn.allow_tf32 is before[0]


def test_bf16_changes_the_arithmetic_and_exact_is_todays_certify():
    """bf16 evaluates the model in bfloat16 (its logits differ from float32's in the third digit); exact with CPU
    draws gives the counts of the default Smooth bit for bit, and tf32 equals exact on the CPU (no TF32 there)."""
    rng = np.random.default_rng(0)
    model = Linear2(rng.normal(size=64), 0.1)
    x = torch.tensor(rng.uniform(size=64), dtype=torch.float32)
    z = torch.rand(500, 64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        exact = model(z)
        with prec.forward_precision(prec.BF16, torch.device("cpu")):
            low = model(z).float()
    assert 1e-4 < float((low - exact).abs().max()) < 0.2
    default = Smooth(model, 2, (64,), batch_size=300).vote_counts(x[None], 0.5, 3000, generator=stream(0, 1, "select"))
    for p in (prec.EXACT, prec.TF32):
        smooth = Smooth(model, 2, (64,), batch_size=300, precision=p, draws="cpu")
        got = smooth.vote_counts(x[None], 0.5, 3000, generator=stream(0, 1, "select"))
        np.testing.assert_array_equal(got, default)


# -- block draws ------------------------------------------------------------------------------------------------

def test_block_seed_is_splitmix64():
    """block_seed(key, j) is SplitMix64's (j + 1)-th output from state `key`: from state 0 the published first outputs
    are 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4 (Vigna's splitmix64.c)."""
    assert block_seed(0, 0) == 0xE220A8397B1DCDAF
    assert block_seed(0, 1) == 0x6E789E6AA1B965F4
    seeds = {block_seed(k, j) for k in (1, 2, 2 ** 63) for j in range(2000)}
    assert len(seeds) == 6000 and all(0 <= s < 2 ** 64 for s in seeds)


@pytest.mark.parametrize("noise", ["gaussian", "uniform"])
def test_block_draws_do_not_depend_on_how_they_are_cut(noise):
    """Random cuts (single rows, partial blocks, whole blocks, several blocks at once) give the draws of one batch,
    and block j is the family's draw of `rows` rows from a generator seeded block_seed(key, j)."""
    rng = np.random.default_rng(3)
    whole = BlockDrawStream(noise, (2, 3), stream(7, 11, "estimate"), rows=13).draw(200)
    for _ in range(5):
        cut = BlockDrawStream(noise, (2, 3), stream(7, 11, "estimate"), rows=13)
        parts, left = [], 200
        while left:
            k = int(min(left, rng.choice([1, 5, 13, 26, 40])))
            parts.append(cut.draw(k, out=torch.empty(k, 2, 3)) if k % 2 else cut.draw(k))
            left -= k
        assert torch.equal(torch.cat(parts), whole)
    s = BlockDrawStream(noise, (2, 3), stream(7, 11, "estimate"), rows=13)
    block3 = FAMILIES[noise].draw(torch.empty(13, 2, 3), torch.Generator().manual_seed(block_seed(s.key, 3)))
    assert torch.equal(whole[39:52], block3)


def test_block_streams_of_one_generator_have_their_own_keys_and_are_functions_of_the_stream():
    g = torch.Generator().manual_seed(5)
    a, b = BlockDrawStream("gaussian", (4,), g), BlockDrawStream("gaussian", (4,), g)
    assert a.key != b.key and not torch.equal(a.draw(10), b.draw(10))
    again = BlockDrawStream("gaussian", (4,), torch.Generator().manual_seed(5))
    assert again.key == a.key
    assert BlockDrawStream("gaussian", (4,), stream(0, 1, "select")).key != \
        BlockDrawStream("gaussian", (4,), stream(0, 1, "estimate")).key


@pytest.mark.parametrize("noise", ["gaussian", "uniform"])
def test_block_draws_have_the_familys_law(noise):
    """Mean, variance and range of 2 * BLOCK_ROWS * 50 unit draws (several blocks): N(0, 1) or U[-1, 1]."""
    z = BlockDrawStream(noise, (50,), stream(0, 0, "select")).draw(2 * BLOCK_ROWS).reshape(-1).double()
    var = 1.0 if noise == "gaussian" else 1.0 / 3.0
    se = math.sqrt(var / z.numel())
    assert abs(float(z.mean())) < 5 * se
    assert abs(float(z.var()) - var) < 0.02 * var
    if noise == "uniform":
        assert float(z.abs().max()) <= 1.0


def test_device_draws_give_counts_independent_of_the_batch_size():
    """Smooth(draws="device") on the CPU runs the GPU's code path: CERTIFY's counts are the same for batch sizes 7 to
    10,000 and for several points at once (the rows straddle blocks and points), and differ from the CPU draws'."""
    rng = np.random.default_rng(1)
    model = Linear2(rng.normal(size=16), 0.0)
    pts = torch.tensor(rng.uniform(size=(3, 16)), dtype=torch.float32)
    ref = None
    for bs in (7, 333, 1000, 1500, 10_000):
        smooth = Smooth(model, 2, (16,), batch_size=bs, draws="device")
        got = smooth.vote_counts(pts, 0.5, 2500, generator=stream(0, 2, "estimate"))
        ref = got if ref is None else ref
        np.testing.assert_array_equal(got, ref)
    cpu = Smooth(model, 2, (16,), batch_size=1000, draws="cpu").vote_counts(pts, 0.5, 2500,
                                                                            generator=stream(0, 2, "estimate"))
    assert not np.array_equal(cpu, ref) and np.all(np.abs(cpu - ref) < 250)



def test_a_sampler_refuses_a_block_stream_it_cannot_continue():
    """A Smooth with a sampler draws from a CPU generator: a BlockDrawStream (the device's draws of the Smooth's own
    family) is refused, naming the generator, rather than drawn from torch's global generator."""
    model = Linear2(np.ones(16), 0.0)
    sm = Smooth(model, 2, (16,), sampler=lambda num, g: torch.randn(num, 16, generator=g))
    pts = torch.full((1, 16), 0.5)
    with pytest.raises(ValueError, match="generator must be a torch.Generator or a DrawStream"):
        sm.vote_counts(pts, 0.5, 10, generator=BlockDrawStream("gaussian", (16,), stream(0, 0, "estimate")))
    a = sm.vote_counts(pts, 0.5, 50, generator=stream(0, 0, "estimate"))
    np.testing.assert_array_equal(a, sm.vote_counts(pts, 0.5, 50, generator=stream(0, 0, "estimate")))

# -- soundness in every precision ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("p", "draws"), [(prec.EXACT, "device"), (prec.TF32, "cpu"), (prec.BF16, "device"),
                                          (prec.BF16, "cpu")])
def test_certify_is_sound_for_the_classifier_as_evaluated(p, draws):
    """Over 1,500 CERTIFY runs (n0 = 20, N = 100, alpha = 0.1) on a linear classifier with P(class 1) about 0.8, the
    rate of over-certification (wrong class, or a gap above Φ^-1 of the classifier's own p_A) is <= alpha + 3 SE.
    p_A is the closed form Φ(w.x + b / ||σ w||) for exact arithmetic; for the classifier evaluated in bf16 it is
    measured by 400,000 draws (its upper 4.5-SE end is used, so a true over-certification is never excused)."""
    n, n0, big_n, alpha, trials = 8, 20, 100, 0.1, 1500
    rng = np.random.default_rng(21)
    sigma = rng.uniform(0.1, 1.0, n)
    w = rng.normal(size=n)
    x = rng.uniform(0.0, 1.0, n)
    b = norm.ppf(0.8) * float(np.linalg.norm(sigma * w)) - float(w @ x)
    model = Linear2(w, b)
    xt, st = torch.tensor(x, dtype=torch.float32), torch.tensor(sigma, dtype=torch.float32)
    smooth = Smooth(model, 2, (n,), seed=123, precision=p, draws=draws)
    if p == prec.BF16:
        counts = smooth.vote_counts(xt[None], st, 400_000, generator=stream(9, 0, "estimate"))[0]
        p_true = counts[1] / counts.sum()
        p_true = min(p_true + 4.5 * math.sqrt(p_true * (1 - p_true) / counts.sum()), 1 - 1e-9)
        assert abs(p_true - 0.8) < 0.02  # the same classifier up to bf16's rounding
    else:
        p_true = 0.8
    exact_gap = norm.ppf(p_true)
    over = 0
    for t in range(trials):
        c = smooth.certify(xt, st, n0, big_n, alpha, generator=certify_streams(1, t))
        over += c.prediction != ABSTAIN and (c.prediction != 1 or c.gap > exact_gap)
    rate = over / trials
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / trials), rate
    assert rate > alpha / 4  # the bound is used, not abandoned (its exact rate here is about 0.08)


def test_per_example_check_in_bf16_accepts_rounding_and_refuses_a_batch_dependent_model():
    """bf16 rounding moves a row's logits between a batch and the row alone by a few 2^-8; a model whose output
    depends on its batch (train-mode BatchNorm) moves them by order 1 and is refused in every precision."""
    conv = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.Flatten(), torch.nn.Linear(144, 3))
    batch = torch.rand(64, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    with torch.no_grad(), prec.forward_precision(prec.BF16, torch.device("cpu")):
        check_per_example(conv, batch, conv(batch).float(), precision=prec.BF16)

    class BatchDependent(torch.nn.Module):
        def forward(self, z):
            flat = z.reshape(len(z), -1)
            return torch.stack([flat.mean(1) - flat.mean(), -(flat.mean(1) - flat.mean())], dim=1) * 100

    model = BatchDependent()
    for p in prec.PRECISIONS:
        smooth = Smooth(model, 2, (1, 8, 8), precision=p)
        with pytest.raises(ValueError, match="depends on the rest of its batch"):
            smooth.vote_counts(batch[:1], 0.5, 100)


def test_fast_layout_puts_image_batches_and_weights_in_channels_last_outside_exact():
    """Outside exact an image batch and the model's convolution weights go to channels_last (the values unchanged);
    exact and non-image batches keep torch's default layout. Smooth and the optimizers' soft classifier use it."""
    conv = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Flatten(), torch.nn.Linear(144, 2))
    batch = torch.rand(5, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    assert prec.fast_layout(conv, batch, prec.EXACT) is batch
    assert not conv[0].weight.is_contiguous(memory_format=torch.channels_last)
    flat = torch.rand(5, 6)
    assert prec.fast_layout(conv, flat, prec.BF16) is flat
    fast = prec.fast_layout(conv, batch, prec.BF16)
    assert fast.is_contiguous(memory_format=torch.channels_last) and torch.equal(fast, batch)
    assert conv[0].weight.is_contiguous(memory_format=torch.channels_last)
    conv2 = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Flatten(), torch.nn.Linear(144, 2))
    Smooth(conv2, 2, (3, 8, 8), precision=prec.BF16).vote_counts(batch[:1], 0.25, 64)
    assert conv2[0].weight.is_contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("p", prec.PRECISIONS)
def test_optimizers_run_their_backward_passes_in_the_precision(p):
    """Isotropic DD's and ANCER's gradients are computed inside the precision's flags: a layer that records torch's
    TF32 flag in its forward and in its backward sees it set in both under tf32 (cuDNN's backward convolutions would
    otherwise run in full float32), and cleared in both otherwise."""
    from ancer_lite.methods.optimize import optimize_ancer, optimize_isotropic

    seen = []

    class Spy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            seen.append(("forward", torch.backends.cuda.matmul.allow_tf32))
            return z.clone()

        @staticmethod
        def backward(ctx, g):
            seen.append(("backward", torch.backends.cuda.matmul.allow_tf32))
            return g

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(6, 3)

        def forward(self, z):
            return self.lin(Spy.apply(z))

    torch.manual_seed(0)
    model, x = Model(), torch.rand(2, 6)
    theta = optimize_isotropic(model, x, 0.25, "gaussian", iterations=2, lr=0.01, samples=8,
                               generator=torch.Generator().manual_seed(0), precision=p)
    optimize_ancer(model, x, theta, "gaussian", iterations=2, lr=0.01, samples=8,
                   generator=torch.Generator().manual_seed(1), precision=p)
    assert {kind for kind, _ in seen} == {"forward", "backward"}
    assert all(flag is (p == prec.TF32) for _, flag in seen), seen
    assert torch.backends.cuda.matmul.allow_tf32 is False
