"""The paper profile's loaders on fixtures generated in their real on-disk formats: CIFAR-10's python
batches (Python 2 pickles, as the official tarball holds them) and an ImageNet-style ImageFolder tree."""
from __future__ import annotations

import io
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from ancer_lite.models import data
from ancer_lite.models.data import cifar10, download_cifar10, imagenet_subset

TRAIN_SIZES = (3, 2, 4, 1, 2)  # images in data_batch_1..5
TEST_SIZE = 5


class Py2Pickler(pickle._Pickler):
    """Writes bytes as Python 2 `str` opcodes (SHORT_BINSTRING / BINSTRING), as in the official CIFAR-10
    files: read with encoding='latin1' they come back as str keys, with encoding='bytes' as bytes."""

    dispatch = pickle._Pickler.dispatch.copy()

    def save_py2_str(self, obj: bytes) -> None:
        if len(obj) < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([len(obj)]) + obj)
        else:
            self.write(pickle.BINSTRING + struct.pack("<i", len(obj)) + obj)
        self.memoize(obj)

    dispatch[bytes] = save_py2_str


def write_py2_pickle(path: Path, obj: dict) -> None:
    buf = io.BytesIO()
    Py2Pickler(buf, protocol=2).dump(obj)
    path.write_bytes(buf.getvalue())


def make_cifar10(root: Path, seed: int = 0, py2: bool = True) -> dict[str, tuple[np.ndarray, list[int]]]:
    """A CIFAR-10 python-format folder with a few random images per batch; returns what was written."""
    rng = np.random.default_rng(seed)
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    written = {}
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for name, n in zip(names, TRAIN_SIZES + (TEST_SIZE,)):
        pixels = rng.integers(0, 256, size=(n, 3072), dtype=np.uint8)
        labels = [int(v) for v in rng.integers(0, 10, size=n)]
        written[name] = (pixels, labels)
        entry = {b"batch_label": name.encode(), b"labels": labels, b"data": pixels,
                 b"filenames": [f"img_{name}_{i}.png".encode() for i in range(n)]}
        if py2:
            write_py2_pickle(folder / name, entry)
        else:  # a file written from Python 3 with str keys
            (folder / name).write_bytes(pickle.dumps({k.decode(): v for k, v in entry.items()}))
    label_names = [b"airplane", b"automobile", b"bird", b"cat", b"deer", b"dog", b"frog", b"horse", b"ship", b"truck"]
    write_py2_pickle(folder / "batches.meta", {b"num_cases_per_batch": 10000, b"label_names": label_names,
                                               b"num_vis": 3072})
    return written


@pytest.fixture
def cifar_root(tmp_path) -> tuple[Path, dict]:
    return tmp_path / "cifar10", make_cifar10(tmp_path / "cifar10")


# ---- CIFAR-10 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("split, names", [("test", ["test_batch"]),
                                          ("train", [f"data_batch_{i}" for i in range(1, 6)])])
def test_cifar10_round_trip(cifar_root, split, names):
    root, written = cifar_root
    s = cifar10(root, split=split)
    pixels = np.concatenate([written[n][0] for n in names])
    labels = sum((written[n][1] for n in names), [])
    assert s.x.shape == (len(labels), 3, 32, 32) and s.x.dtype == torch.float32
    assert s.y.dtype == torch.int64 and s.y.tolist() == labels
    assert s.index.tolist() == list(range(len(labels))) and len(s) == len(labels)
    assert 0.0 <= s.x.min() and s.x.max() <= 1.0
    # exact round trip to the bytes on disk; rows are 1024 R, then G, then B values, each row-major 32x32
    assert np.array_equal(np.rint(s.x.numpy() * 255).astype(np.uint8).reshape(len(labels), -1), pixels)
    assert s.x[0, 1, 0, 2].item() == pixels[0, 1024 + 2] / np.float32(255)
    assert s.x[-1, 2, 31, 31].item() == pixels[-1, 3071] / np.float32(255)


def test_cifar10_matches_torchvision(cifar_root, monkeypatch):
    """Bit-identical to torchvision's CIFAR10 + ToTensor once its md5 check is switched off."""
    import torchvision.datasets.cifar as tv_cifar
    from torchvision.transforms import ToTensor

    monkeypatch.setattr(tv_cifar, "check_integrity", lambda *args, **kwargs: True)
    root, _ = cifar_root
    for split in ("train", "test"):
        ours = cifar10(root, split=split)
        theirs = tv_cifar.CIFAR10(str(root), train=split == "train", transform=ToTensor())
        assert len(theirs) == len(ours)
        assert torch.equal(torch.stack([theirs[i][0] for i in range(len(theirs))]), ours.x)
        assert ours.y.tolist() == list(theirs.targets)


def test_cifar10_reads_python3_pickles(tmp_path):
    written = make_cifar10(tmp_path, seed=1, py2=False)
    s = cifar10(tmp_path, split="test")
    assert torch.equal(s.x, torch.from_numpy(written["test_batch"][0].reshape(-1, 3, 32, 32)).float() / 255)


def test_cifar10_missing_data_says_where(tmp_path, cifar_root):
    with pytest.raises(FileNotFoundError) as err:
        cifar10(tmp_path / "empty", split="test")
    message = str(err.value)
    assert str(tmp_path / "empty" / "cifar-10-batches-py" / "test_batch") in message and "make data" in message
    root, _ = cifar_root
    (root / "cifar-10-batches-py" / "data_batch_3").unlink()
    assert len(cifar10(root, split="test")) == TEST_SIZE  # the test split does not need it
    with pytest.raises(FileNotFoundError, match="data_batch_3"):
        cifar10(root, split="train")


def test_cifar10_bad_split_and_corrupt_file(cifar_root):
    root, _ = cifar_root
    with pytest.raises(ValueError, match="split"):
        cifar10(root, split="val")
    write_py2_pickle(root / "cifar-10-batches-py" / "test_batch",
                     {b"data": np.zeros((2, 100), np.uint8), b"labels": [0, 1]})
    with pytest.raises(ValueError, match=r"\(N, 3072\)"):
        cifar10(root, split="test")


def test_download_cifar10_uses_torchvision(tmp_path, monkeypatch):
    """Both splits through torchvision's downloader (replaced here: tests never touch the network)."""
    import torchvision.datasets

    calls = []
    monkeypatch.setattr(torchvision.datasets, "CIFAR10",
                        lambda root, train, download: calls.append((root, train, download)))
    assert download_cifar10(tmp_path) == tmp_path / "cifar-10-batches-py"
    assert calls == [(str(tmp_path), True, True), (str(tmp_path), False, True)]


def test_default_locations():
    assert data.data_paths()["cifar10"] == data.DATA_DIR / "cifar10" / "cifar-10-batches-py"
    assert data.data_paths()["imagenet"] == data.DATA_DIR / "imagenet"


# ---- ImageNet subset --------------------------------------------------------------------------------

# (class folder, file, size WxH); ImageFolder orders by class folder, then file name
IMAGES = [("n01", "a.png", (300, 260)), ("n01", "b.png", (256, 256)), ("n01", "c.png", (260, 400)),
          ("n02", "a.png", (256, 300)), ("n02", "b.png", (400, 256)), ("n03", "a.png", (280, 280)),
          ("n03", "b.png", (256, 256))]


def colour(i: int) -> tuple[int, int, int]:
    return 20 * i + 5, 250 - 30 * i, 7 * i * i % 256


@pytest.fixture(scope="module")
def imagenet_root(tmp_path_factory) -> Path:
    """An ImageFolder tree of PNGs: each image a constant colour (so the subset's picks are identifiable
    after resizing), except the 256x256 image 1, a pixel pattern to check the centre crop exactly."""
    root = tmp_path_factory.mktemp("imagenet")
    for i, (wnid, name, size) in enumerate(IMAGES):
        (root / "val" / wnid).mkdir(parents=True, exist_ok=True)
        if i == 1:
            img = Image.fromarray(pattern())
        else:
            img = Image.new("RGB", size, colour(i))
        img.save(root / "val" / wnid / name)
    return root


def pattern() -> np.ndarray:
    yy, xx = np.mgrid[0:256, 0:256]
    return np.stack([yy, xx, (yy * 7 + xx * 3) % 256], axis=-1).astype(np.uint8)


def test_imagenet_subset_takes_every_kth_image(imagenet_root):
    s = imagenet_subset(imagenet_root, count=3)  # k = 7 // 3 = 2: images 0, 2, 4
    assert s.index.tolist() == [0, 2, 4]
    assert s.x.shape == (3, 3, 224, 224) and s.x.dtype == torch.float32
    assert s.y.tolist() == [0, 0, 1]  # n01/a, n01/c, n02/b
    for row, i in zip(s.x, s.index):
        expected = torch.tensor(colour(int(i)), dtype=torch.float32).view(3, 1, 1) / 255
        assert torch.allclose(row, expected.expand(3, 224, 224), atol=1 / 255)


def test_imagenet_subset_crop_and_full_set(imagenet_root):
    s = imagenet_subset(imagenet_root, count=len(IMAGES))  # k = 1: everything, in ImageFolder order
    assert s.index.tolist() == list(range(len(IMAGES))) and s.y.tolist() == [0, 0, 0, 1, 1, 2, 2]
    centre = torch.from_numpy(pattern()[16:240, 16:240]).permute(2, 0, 1).float() / 255
    assert torch.equal(s.x[1], centre)  # 256x256 needs no resize: CenterCrop(224) keeps [16, 240)
    assert imagenet_subset(imagenet_root, count=1).index.tolist() == [0]


def test_imagenet_subset_errors(imagenet_root, tmp_path):
    with pytest.raises(FileNotFoundError, match="ImageFolder layout") as err:
        imagenet_subset(tmp_path / "nothing")
    assert str(tmp_path / "nothing" / "val") in str(err.value)
    (tmp_path / "empty" / "val").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match="class"):
        imagenet_subset(tmp_path / "empty")
    with pytest.raises(ValueError, match="split"):
        imagenet_subset(imagenet_root, split="test")
    for count in (0, len(IMAGES) + 1):
        with pytest.raises(ValueError, match="count"):
            imagenet_subset(imagenet_root, count=count)


@pytest.mark.timeout(60)
def test_radial_dataset_refuses_a_margin_that_leaves_no_room():
    """margin = 10 (wider than the disc) or NaN would loop forever; each is named, and the default data
    still keeps every point at least margin/2 from every boundary."""
    for margin, match in ((10.0, "leaves no room"), (float("nan"), "margin must be"), (-1.0, "margin must be")):
        with pytest.raises(ValueError, match=match):
            data.radial_dataset(n=50, margin=margin)
    x, y = data.radial_dataset(n=500, margin=0.3)
    r = x.norm(dim=1).numpy()
    assert (np.abs(r[:, None] - np.array([1.0, 2.0])[None]) >= 0.15 - 1e-6).all() and set(y.tolist()) == {0, 1}
