"""The benchmark's measurements: FLOP counts equal the closed forms of the layers' multiply-adds, the quick
models are every distinct architecture of the quick columns, paired ratios recover a known ratio, and a
small benchmark run fills every column."""
import math
import time

import numpy as np
import pytest
import torch

from ancer_lite.models.data import digits_split, mnist5k_split
from ancer_lite.models.small import MLP, SmallCNN
from ancer_lite.runs.profiles import get_profile
from ancer_lite.runs.setups import QUICK_INPUT_SHAPE
from ancer_lite.studies import runtime
from ancer_lite.studies import throughput as tp


def test_quick_input_shapes_are_the_loaded_ones():
    assert tuple(digits_split(0)["train"].x.shape[1:]) == QUICK_INPUT_SHAPE["digits"]
    assert tuple(mnist5k_split(0)["train"].x.shape[1:]) == QUICK_INPUT_SHAPE["mnist"]


@pytest.mark.parametrize("hidden", [(64, 64), (256, 32, 16)])
def test_mlp_flops_are_twice_the_multiply_adds(hidden):
    widths = [64, *hidden, 10]
    expected = 2 * sum(a * b for a, b in zip(widths, widths[1:]))
    assert tp.flops_per_image(MLP((1, 8, 8), 10, hidden=hidden), (1, 8, 8)) == expected


@pytest.mark.parametrize("size", [8, 28])
def test_cnn_flops_are_twice_the_multiply_adds(size):
    """SmallCNN: two 3x3 stride-2 convolutions (8, 16 channels), then Linear(16·h·w, 64), Linear(64, 10)."""
    h1 = math.ceil(size / 2)
    h2 = math.ceil(h1 / 2)
    macs = 8 * h1 * h1 * (1 * 9) + 16 * h2 * h2 * (8 * 9) + 16 * h2 * h2 * 64 + 64 * 10
    assert tp.flops_per_image(SmallCNN((1, size, size), 10), (1, size, size)) == 2 * macs


def test_quick_models_cover_every_column_once():
    profile = get_profile("quick")
    models = tp.quick_models(profile)
    names = [n for qm in models for n in qm.setups]
    assert sorted(names) == sorted(s.name for s in (*profile.images, *profile.rancer))
    assert len({qm.name for qm in models}) == len(models) == 5
    assert all(not qm.model.training and qm.parameters > 0 for qm in models)
    with pytest.raises(ValueError, match="builds quick models only"):
        tp.quick_models(get_profile("paper"))


def test_paired_ratio_recovers_a_known_ratio(monkeypatch):
    """On a clock that fn_a moves by 2 and fn_b by 1 (by 3 on its fourth call), the times are those steps,
    the order alternates and the median ratio is 2."""
    clock = {"now": 0.0}
    calls = []
    monkeypatch.setattr(tp.time, "perf_counter", lambda: clock["now"])

    def a():
        calls.append("a")
        clock["now"] += 2.0

    def b():
        calls.append("b")
        clock["now"] += 3.0 if calls.count("b") == 4 else 1.0

    ta, tb = tp.paired_times(a, b, pairs=4)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"] and ta == [2.0] * 4 and tb == [1.0, 1.0, 1.0, 3.0]
    clock["now"], calls[:] = 0.0, []
    assert tp.paired_ratio(a, b, pairs=5) == 2.0
    with pytest.raises(ValueError, match="pairs"):
        tp.paired_ratio(lambda: None, lambda: None, pairs=0)


class _SlowModel(torch.nn.Module):
    """A classifier whose forward pass sleeps 20 ms: its draws are a tiny share of it, and CERTIFY's loop costs
    what the draws and the forward pass cost together."""

    def forward(self, x):
        time.sleep(0.02)
        return torch.zeros((x.shape[0], 10)) + x.flatten(1)[:, :1]


def test_draw_floor_separates_the_draws_from_the_forward_pass():
    qm = tp.QuickModel("slow", ("none",), _SlowModel().eval(), (1, 8, 8), 10)
    share, versus_floor = tp.draw_floor(qm, batch=64, pairs=5)
    assert 0 < share < 0.1  # 64 x 64 Gaussian draws take microseconds against 20 ms
    assert 0.9 < versus_floor < 1.3  # CERTIFY's loop is the draws, one 20-ms forward pass and a few small steps
    with pytest.raises(ValueError, match="batch"):
        tp.draw_floor(qm, batch=0, pairs=1)


def test_small_benchmark_fills_every_column():
    torch.manual_seed(0)
    table = tp.benchmark(get_profile("quick"), batch=256, repeats=2, pairs=2,
                         budget={"iterations": 2, "samples": 8, "n": 300})
    assert len(table) == 5 and not table.isna().any().any()
    assert np.allclose(table.gflops, table.images_per_s * table.mflop / 1e3)
    assert np.allclose(table.fraction_of_matmul, table.gflops / table.matmul_gflops)
    assert (table[["images_per_s", "certify_ratio", "draw_share", "certify_vs_floor", "iso_dd_s", "ancer_s",
                   "certify_s"]] > 0).all().all()
    text = tp.report(table, torch.get_num_threads())
    assert text.count("images/s") == 5 and "of the matrix-product rate" in text
    assert text.count("the draws alone") == 5 and text.count(f"within {tp.LIMIT}x of the bare forwards") == 5
    assert text.count("per input (optimization 2 x 8 samples, N0 = 100, N = 300)") == 5
    assert runtime.PAPER_BUDGET == {"iterations": 100, "samples": 100, "n": 100_000}
