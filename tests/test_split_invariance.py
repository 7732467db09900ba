"""Certificates do not depend on how the work is cut: each input's noise comes from
its own streams, so `run_method`'s final.tsv (all columns but time) is the same with 7 or 10,000 draws per forward
pass and with 1 or 128 inputs optimized together, for Gaussian and uniform noise, in 2, 64 and 784 dimensions."""
import numpy as np
import pytest
import torch

from ancer_lite.methods.registry import OptimSettings
from ancer_lite.models.small import MLP
from ancer_lite.runs.experiment import run_method

SETTINGS = OptimSettings(chunk=128).with_budget(2, 8)
SHAPES = {2: (2,), 64: (1, 8, 8), 784: (1, 28, 28)}


def problem(dim: int):
    """A seeded MLP (one hidden layer of 16) on 4 random inputs of `dim` pixels, labelled by its predictions."""
    shape = SHAPES[dim]
    torch.manual_seed(dim)
    model = MLP(shape, 3, hidden=(16,)).eval()
    x = torch.rand(4, *shape, generator=torch.Generator().manual_seed(dim + 1))
    with torch.no_grad():
        y = model(x).argmax(1)
    return model, x, y, np.array([5, 17, 2, 40])


def rows(folder):
    """final.tsv without the time column (a measurement)."""
    lines = [line.split("\t") for line in (folder / "final.tsv").read_text().splitlines()]
    t = lines[0].index("time")
    return [r[:t] + r[t + 1:] for r in lines]


@pytest.mark.parametrize("noise", ["gaussian", "uniform"])
@pytest.mark.parametrize("dim", [2, 64, 784])
def test_batch_size_and_chunk_change_nothing(tmp_path, noise, dim):
    model, x, y, idx = problem(dim)
    kw = dict(n0=20, n=300, alpha=0.01, num_classes=3, seed=4)
    out = {}
    for name, batch, chunk in (("base", 10_000, 128), ("batch7", 7, 128), ("chunk1", 10_000, 1)):
        settings = OptimSettings(**{**SETTINGS.__dict__, "chunk": chunk})
        run_method(model, x, y, idx, noise, 0.3, "ancer", settings, tmp_path / name, batch_size=batch, **kw)
        out[name] = rows(tmp_path / name)
        assert len(out[name]) == 5
    assert out["batch7"] == out["base"]
    # the chunk is an optimization setting, so it sits in the manifest; the certificates and θ are the same
    assert out["chunk1"] == out["base"]
    assert (tmp_path / "chunk1" / "theta.npy").read_bytes() == (tmp_path / "base" / "theta.npy").read_bytes()
    assert (tmp_path / "batch7" / "certify.tsv").exists()
