"""The Fashion-MNIST loader (`models.data.fashion_mnist`, `read_idx`) on generated IDX files: the format's header,
gzipped and unpacked files, the SHA-256 check, and an error naming the file (or the Debian package) for every
damaged or missing file. The real files are read too where Debian's `dataset-fashion-mnist` is installed."""
from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest
import torch

from ancer_lite.models.data import (
    FASHION_MNIST_DIR,
    FASHION_MNIST_FILES,
    FASHION_MNIST_PACKAGE,
    FASHION_MNIST_SHA256,
    fashion_mnist,
    read_idx,
)


def idx_bytes(arr: np.ndarray) -> bytes:
    """An IDX file of unsigned bytes: 00 00 08 ndim, the sizes as big-endian uint32, the data."""
    head = bytes([0, 0, 8, arr.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in arr.shape)
    return head + arr.astype(np.uint8).tobytes()


def write_split(root: Path, split: str, images: np.ndarray, labels: np.ndarray, gz: bool = True) -> dict[str, str]:
    """The split's two IDX files under root; returns their SHA-256 by name."""
    sums = {}
    for name, arr in zip(FASHION_MNIST_FILES[split], (images, labels)):
        data = idx_bytes(arr)
        sums[name] = hashlib.sha256(data).hexdigest()
        (root / (name + ".gz" if gz else name)).write_bytes(gzip.compress(data) if gz else data)
    return sums


@pytest.mark.parametrize("gz", [True, False])
def test_generated_files_read_back_exactly(tmp_path, gz):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(30, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=30, dtype=np.uint8)
    sums = write_split(tmp_path, "test", images, labels, gz)
    split = fashion_mnist(tmp_path, "test", sha256=sums)
    assert split.x.shape == (30, 1, 28, 28) and split.x.dtype == torch.float32
    np.testing.assert_array_equal(split.x[:, 0].numpy() * 255, images.astype(np.float32))
    np.testing.assert_array_equal(split.y.numpy(), labels.astype(np.int64))
    np.testing.assert_array_equal(split.index, np.arange(30))
    assert float(split.x.max()) <= 1.0 and float(split.x.min()) >= 0.0


def test_a_different_file_is_refused_by_its_checksum(tmp_path):
    images = np.zeros((4, 28, 28), np.uint8)
    sums = write_split(tmp_path, "train", images, np.arange(4, dtype=np.uint8))
    wrong = dict(sums, **{"train-images-idx3-ubyte": "0" * 64})
    with pytest.raises(ValueError, match=r"train-images-idx3-ubyte\.gz: SHA-256 .* expected 0{64}"):
        fashion_mnist(tmp_path, "train", sha256=wrong)
    assert len(fashion_mnist(tmp_path, "train", sha256=None)) == 4
    with pytest.raises(ValueError, match="SHA-256"):  # the package's checksums, against generated files
        fashion_mnist(tmp_path, "train")


def test_missing_files_name_the_debian_package(tmp_path):
    with pytest.raises(FileNotFoundError, match=rf"t10k-images-idx3-ubyte.*apt-get install {FASHION_MNIST_PACKAGE}"):
        fashion_mnist(tmp_path, "test", sha256=None)
    with pytest.raises(ValueError, match="split must be one of"):
        fashion_mnist(tmp_path, "val")


@pytest.mark.parametrize(("damage", "match"), [
    (lambda b: b[:100], r"header promises \(5, 28, 28\) = 3920 bytes"),
    (lambda b: bytes([0, 0, 9]) + b[3:], "not an IDX file of images"),
    (lambda b: b[:6], "not an IDX file of images"),
    (lambda b: b + b"\x00", "the file holds 3921"),
])
def test_damaged_files_are_refused_naming_the_file(tmp_path, damage, match):
    path = tmp_path / "t10k-images-idx3-ubyte"
    path.write_bytes(damage(idx_bytes(np.ones((5, 28, 28), np.uint8))))
    with pytest.raises(ValueError, match=rf"{path.name}: .*{match}"):
        read_idx(path, "images")


def test_a_corrupt_gzip_and_disagreeing_files_are_refused(tmp_path):
    (tmp_path / "t10k-images-idx3-ubyte.gz").write_bytes(b"not gzip at all")
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(idx_bytes(np.zeros(3, np.uint8)))
    with pytest.raises(ValueError, match=r"t10k-images-idx3-ubyte\.gz: cannot read it as a gzipped IDX file"):
        fashion_mnist(tmp_path, "test", sha256=None)
    (tmp_path / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(idx_bytes(np.zeros((4, 28, 28), np.uint8))))
    with pytest.raises(ValueError, match=r"files disagree: \(4, 28, 28\) images .* 3 labels"):
        fashion_mnist(tmp_path, "test", sha256=None)


@pytest.mark.skipif(not (FASHION_MNIST_DIR / "t10k-images-idx3-ubyte.gz").is_file(),
                    reason=f"Debian's {FASHION_MNIST_PACKAGE} is not installed here: the real files were not read")
def test_the_debian_packages_files_have_their_checksums_and_shape():
    """The package's files: 60,000 + 10,000 images, 6,000 + 1,000 per class, every checksum as recorded."""
    assert set(FASHION_MNIST_SHA256) == {n for names in FASHION_MNIST_FILES.values() for n in names}
    test = fashion_mnist(split="test")
    assert test.x.shape == (10_000, 1, 28, 28)
    assert test.y.bincount().tolist() == [1_000] * 10
