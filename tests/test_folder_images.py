"""`data.FolderImages`: an ImageFolder tree read batch by batch (what `ancer-certify train imagenet` trains on without
holding the images in memory), equal image for image to torchvision's ImageFolder with Cohen et al.'s transform, and a
model trained on it equal, bit for bit, to one trained on the same images held as a tensor."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision import datasets, transforms

from ancer_lite.models import train
from ancer_lite.models.architectures import load_checkpoint
from ancer_lite.models.data import FolderImages, imagenet_subset
from ancer_lite.tooling.cli import main


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """An ImageFolder tree of 8 random images of several sizes and modes (RGB, greyscale, RGBA) in 2 classes."""
    root = tmp_path_factory.mktemp("imagenet")
    rng = np.random.default_rng(0)
    sizes = [(300, 260), (256, 256), (240, 330), (500, 380), (260, 300), (224, 224), (333, 280), (280, 256)]
    for i, (w, h) in enumerate(sizes):
        folder = root / "train" / ("n01" if i % 2 else "n00")
        folder.mkdir(parents=True, exist_ok=True)
        mode, channels = [("RGB", 3), ("L", 1), ("RGBA", 4)][i % 3]
        pixels = rng.integers(0, 256, (h, w, channels), dtype=np.uint8)
        Image.fromarray(pixels[..., 0] if channels == 1 else pixels, mode).save(folder / f"img{i}.png")
    return root


def test_each_batch_is_torchvisions_imagefolder_with_cohens_transform(tree):
    images = FolderImages(tree / "train", threads=3)
    tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])
    reference = datasets.ImageFolder(str(tree / "train"), transform=tf)
    assert len(images) == 8 and images.shape == (8, 3, 224, 224) and images.targets.tolist() == reference.targets
    for index in (torch.tensor([5, 0, 7]), np.array([3]), [1, 1, 6], slice(2, 5)):
        batch = images[index]
        positions = range(8)[index] if isinstance(index, slice) else [int(i) for i in index]
        assert batch.dtype == torch.float32 and batch.shape == (len(positions), 3, 224, 224)
        assert torch.equal(batch, torch.stack([reference[i][0] for i in positions]))
    assert images[[]].shape == (0, 3, 224, 224)
    # the eager loader is the same images
    subset = imagenet_subset(tree, "train", 8)
    assert torch.equal(subset.x, images[np.arange(8)]) and torch.equal(subset.y, images.targets)


def test_bad_positions_and_unreadable_images_are_refused_naming_them(tree, tmp_path):
    images = FolderImages(tree / "train")
    with pytest.raises(IndexError, match=r"outside the 8 images"):
        images[[0, 8]]
    with pytest.raises(TypeError, match="index must be"):
        images[np.zeros((2, 2), np.int64)]
    with pytest.raises(TypeError, match="index must be"):
        images[np.array([0.5])]
    (tmp_path / "c" / "n00").mkdir(parents=True)
    (tmp_path / "c" / "n00" / "broken.png").write_bytes(b"not a png")
    with pytest.raises(ValueError, match=r"broken\.png: not a readable image"):
        FolderImages(tmp_path / "c")[[0]]
    with pytest.raises(FileNotFoundError, match="image folder not found"):
        FolderImages(tmp_path / "missing")


def test_the_digest_follows_the_files_not_their_reading(tree, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(tree / "train", copy)
    a, b = FolderImages(tree / "train"), FolderImages(copy)
    assert a.digest() == b.digest() and len(a.digest()) == 64  # where the tree lies does not count
    assert train.tensors_sha256(a, a.targets) == train.tensors_sha256(b, b.targets)
    Image.new("RGB", (300, 300)).save(copy / "n01" / "img1.png")  # another image in its place
    assert FolderImages(copy).digest() != a.digest()


def test_training_on_the_folder_is_training_on_its_images_held_in_memory(tree):
    images = FolderImages(tree / "train", threads=2)
    held = images[np.arange(len(images))]

    def fit(x):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(), torch.nn.Linear(48, 2))
        return train.train_classifier(model, x, images.targets, "gaussian", 0.25, epochs=2, batch_size=3, seed=1,
                                      augment="crop_flip").state_dict()

    streamed, eager = fit(images), fit(held)
    assert all(torch.equal(streamed[k], eager[k]) for k in eager)


def test_train_imagenet_streams_the_training_folder_without_max_train(tree, tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / "imagenet").symlink_to(tree)  # the data folder's imagenet/train
    out = tmp_path / "out"
    assert main(["train", "imagenet", "imagenet_l2_resnet50", str(out), "--sigma", "0.25", "--epochs", "1",
                 "--data-dir", str(data), "--device", "cpu"]) == 0
    ckpt = out / "sigma_0.25" / "checkpoint.pth.tar"
    record = json.loads(Path(f"{ckpt}.json").read_text())
    assert record["inputs"] == 8 and "every image, read batch by batch as it trains" in record["data_source"]
    images = FolderImages(data / "imagenet" / "train")
    assert record["settings"]["data_sha256"] == train.tensors_sha256(images, images.targets)
    model = load_checkpoint(ckpt, "imagenet")
    with torch.no_grad():
        assert model(images[[0]]).shape == (1, 1000)
    capsys.readouterr()
