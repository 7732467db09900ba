"""The paper profile's base classifiers and a loader for their checkpoints.

Every model is `nn.Sequential(Normalize(mean, std), net)`: it takes inputs in [0, 1] pixel space,
normalizes them inside and returns logits (the convention of Cohen et al.'s `get_architecture`, which
ANCER and RS4A follow). Module names match the public code so that released checkpoints load:

- `cifar_resnet(depth)`: Cohen et al.'s CIFAR ResNet (locuslab/smoothing `archs/cifar_resnet.py`,
  itself bearpaw/pytorch-classification): depth 6n + 2, 16/32/64 channels.
- `cifar_resnet18()`: the standard CIFAR ResNet-18 (3x3 stem, no max-pool), with the same block and
  names as `cifar_resnet`. NOTE: the checkpoints released with ANCER (MotasemAlfarra/ANCER
  `models/resnet.py`) use a different, torchvision-style ResNet-18 (7x7 stride-2 stem, no stem BN,
  max-pool, softmax output); they do not load into this network (`load_checkpoint` says so).
- `wide_resnet(40, 2)`: the pre-activation WideResNet of RS4A (tonyduan/rs4a `src/lib/wide_resnet.py`,
  also ANCER `models/wideresnet.py`), without dropout.
- `imagenet_resnet50()`: torchvision's ResNet-50, as in Cohen et al. and ANCER.
- `fmnist_resnet18`: `cifar_resnet18(in_channels=1)` for Fashion-MNIST's 28 x 28 grey images (no paper network;
  this companion's choice).

`load_checkpoint` reads Cohen-format checkpoints ({'arch', 'state_dict'} of the Sequential above with a
parameter-free normalize layer, the network possibly wrapped in DataParallel) and our own format.
"""
from __future__ import annotations

import os
import pickle
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch
from torch import nn

from ..core import devices
from .small import Normalize

#: the datasets' normalization constants (CIFAR-10 as in Cohen et al.'s `datasets.py`). Fashion-MNIST's are the
#: mean and the population standard deviation of every pixel of its 60,000 training images (pixel / 255), computed
#: once in float64 from Debian's `dataset-fashion-mnist` files (`data.fashion_mnist(split="train")`): 0.28604,
#: 0.35302, rounded to 4 digits
DATASET_STATS: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "cifar10": ((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
    "imagenet": ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    "fmnist": ((0.2860,), (0.3530,)),
}
NUM_CLASSES: dict[str, int] = {"cifar10": 10, "imagenet": 1000, "fmnist": 10}
#: architecture name -> the dataset it is built for (Cohen et al.'s names plus ANCER's two, and the CIFAR ResNet-18
#: with a one-channel stem for Fashion-MNIST's 28 x 28 grey images)
ARCHITECTURES: dict[str, str] = {
    "cifar_resnet20": "cifar10",
    "cifar_resnet110": "cifar10",
    "cifar_resnet18": "cifar10",
    "wrn40": "cifar10",
    "resnet50": "imagenet",
    "fmnist_resnet18": "fmnist",
}


def _init_conv_bn(module: nn.Module) -> None:
    """He initialization (fan-out) for convolutions, unit scale and zero shift for batch norms."""
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


def _conv3x3(c_in: int, c_out: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(c_in, c_out, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """Post-activation residual block of He et al. (2016): relu(bn2(conv2(relu(bn1(conv1 x)))) + shortcut).

    The shortcut is the identity, or `downsample` = Sequential(conv1x1, BN) when the shape changes (module names as in
    Cohen et al.'s CIFAR ResNet).

    Parameters
    ----------
    c_in : int
        Input channels.
    c_out : int
        Output channels.
    stride : int
        conv1's (and the shortcut's) stride.
    """

    def __init__(self, c_in: int, c_out: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = _conv3x3(c_in, c_out, stride)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = _conv3x3(c_out, c_out)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.downsample: nn.Module | None = None
        if stride != 1 or c_in != c_out:
            self.downsample = nn.Sequential(nn.Conv2d(c_in, c_out, kernel_size=1, stride=stride, bias=False),
                                            nn.BatchNorm2d(c_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The block's output.

        Parameters
        ----------
        x : torch.Tensor, shape (B, c_in, H, W)
            Feature maps.

        Returns
        -------
        torch.Tensor, shape (B, c_out, H', W')
            Feature maps, H' = ceil(H / stride), W' = ceil(W / stride).
        """
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class CifarResNet(nn.Module):
    """ResNet for 32x32 inputs (or 28x28): 3x3 stem conv1/bn1, stages of BasicBlocks, global average pool, linear `fc`.

    The stages are layer1..layerK, the first at stride 1, the others at stride 2.

    Parameters
    ----------
    widths : sequence of int
        Each stage's channels, non-empty.
    blocks : sequence of int
        Each stage's number of blocks, as long as `widths`.
    num_classes : int
        The number of logits.
    in_channels : int
        The input images' channels (3: colour; 1: grey).
    """

    def __init__(self, widths: Sequence[int], blocks: Sequence[int], num_classes: int = 10,
                 in_channels: int = 3) -> None:
        super().__init__()
        if len(widths) != len(blocks) or not widths:
            raise ValueError("widths and blocks must be non-empty and of equal length")
        if isinstance(in_channels, bool) or not isinstance(in_channels, int) or in_channels < 1:
            raise ValueError(f"in_channels must be an integer >= 1, got {in_channels!r}")
        self.conv1 = _conv3x3(in_channels, widths[0])
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.stage_names: list[str] = []
        c_in = widths[0]
        for i, (width, count) in enumerate(zip(widths, blocks)):
            stride = 1 if i == 0 else 2
            layer = nn.Sequential(*(BasicBlock(c_in if j == 0 else width, width, stride if j == 0 else 1)
                                    for j in range(count)))
            self.add_module(f"layer{i + 1}", layer)
            self.stage_names.append(f"layer{i + 1}")
            c_in = width
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c_in, num_classes)
        _init_conv_bn(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of normalized images.

        Parameters
        ----------
        x : torch.Tensor, shape (B, in_channels, H, W)
            Normalized images (32x32 for CIFAR-10, 28x28 for Fashion-MNIST).

        Returns
        -------
        torch.Tensor, shape (B, num_classes)
            The logits.
        """
        x = self.relu(self.bn1(self.conv1(x)))
        for name in self.stage_names:
            x = getattr(self, name)(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


class WideBasicBlock(nn.Module):
    """Pre-activation wide block of RS4A's WideResNet: conv2(relu(bn2(conv1(relu(bn1 x))))) plus a shortcut.

    The shortcut is the identity, or `convShortcut` (1x1) of the pre-activated input when the width changes.

    Parameters
    ----------
    c_in : int
        Input channels.
    c_out : int
        Output channels.
    stride : int
        conv1's (and the shortcut's) stride.
    """

    def __init__(self, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.bn1 = nn.BatchNorm2d(c_in)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = _conv3x3(c_in, c_out, stride)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = _conv3x3(c_out, c_out)
        self.convShortcut: nn.Module | None = None
        if c_in != c_out:
            self.convShortcut = nn.Conv2d(c_in, c_out, kernel_size=1, stride=stride, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The block's output.

        Parameters
        ----------
        x : torch.Tensor, shape (B, c_in, H, W)
            Feature maps.

        Returns
        -------
        torch.Tensor, shape (B, c_out, H', W')
            Feature maps, H' = ceil(H / stride), W' = ceil(W / stride).
        """
        pre = self.relu1(self.bn1(x))
        out = self.conv2(self.relu2(self.bn2(self.conv1(pre))))
        return out + (x if self.convShortcut is None else self.convShortcut(pre))


class WideStage(nn.Module):
    """A stage of wide blocks held as `layer` (RS4A's NetworkBlock, so that keys read blockK.layer.J.*).

    Parameters
    ----------
    count : int
        The number of blocks.
    c_in : int
        Input channels.
    c_out : int
        Every block's output channels.
    stride : int
        The first block's stride (the others have stride 1).
    """

    def __init__(self, count: int, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.layer = nn.Sequential(*(WideBasicBlock(c_in if j == 0 else c_out, c_out, stride if j == 0 else 1)
                                     for j in range(count)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The stage's output.

        Parameters
        ----------
        x : torch.Tensor, shape (B, c_in, H, W)
            Feature maps.

        Returns
        -------
        torch.Tensor, shape (B, c_out, H', W')
            Feature maps, H' = ceil(H / stride), W' = ceil(W / stride).
        """
        return self.layer(x)


class WideResNet(nn.Module):
    """WideResNet-depth-widen of Zagoruyko & Komodakis in RS4A's layout, without dropout.

    The layers are conv1, block1..block3, a final bn1 + ReLU, global average pooling and `fc`.

    Parameters
    ----------
    depth : int
        6n + 4 with n >= 1 (e.g. 16, 28, 40).
    widen : int
        The widening factor, >= 1.
    num_classes : int
        The number of logits.
    """

    def __init__(self, depth: int = 40, widen: int = 2, num_classes: int = 10) -> None:
        super().__init__()
        if depth < 10 or (depth - 4) % 6:
            raise ValueError(f"WideResNet depth must be 6n + 4 (e.g. 16, 28, 40), got {depth}")
        if widen < 1:
            raise ValueError(f"widen must be >= 1, got {widen}")
        n = (depth - 4) // 6
        c = [16, 16 * widen, 32 * widen, 64 * widen]
        self.conv1 = _conv3x3(3, c[0])
        self.block1 = WideStage(n, c[0], c[1], 1)
        self.block2 = WideStage(n, c[1], c[2], 2)
        self.block3 = WideStage(n, c[2], c[3], 2)
        self.bn1 = nn.BatchNorm2d(c[3])
        self.relu = nn.ReLU(inplace=True)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c[3], num_classes)
        _init_conv_bn(self)
        nn.init.zeros_(self.fc.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of normalized images.

        Parameters
        ----------
        x : torch.Tensor, shape (B, 3, H, W)
            Normalized images (32x32 for CIFAR-10).

        Returns
        -------
        torch.Tensor, shape (B, num_classes)
            The logits.
        """
        x = self.block3(self.block2(self.block1(self.conv1(x))))
        return self.fc(torch.flatten(self.avgpool(self.relu(self.bn1(x))), 1))


def _normalized(net: nn.Module, dataset: str) -> nn.Sequential:
    mean, std = DATASET_STATS[dataset]
    return nn.Sequential(Normalize(mean, std), net)


def cifar_resnet(depth: int, num_classes: int = 10, dataset: str = "cifar10") -> nn.Sequential:
    """Cohen et al.'s CIFAR ResNet-depth (16/32/64 channels), with the normalization inside.

    Parameters
    ----------
    depth : int
        6n + 2 with n >= 1 (20 and 110 in the paper).
    num_classes : int
        The number of logits.
    dataset : str
        The dataset whose normalization constants (`DATASET_STATS`) the model applies.

    Returns
    -------
    torch.nn.Sequential
        Sequential(Normalize, CifarResNet): images in [0, 1], shape (B, 3, 32, 32), to logits (B, num_classes).
    """
    if depth < 8 or (depth - 2) % 6:
        raise ValueError(f"cifar_resnet depth must be 6n + 2 (e.g. 20, 110), got {depth}")
    n = (depth - 2) // 6
    return _normalized(CifarResNet((16, 32, 64), (n, n, n), num_classes), dataset)


def cifar_resnet18(num_classes: int = 10, dataset: str = "cifar10", in_channels: int = 3) -> nn.Sequential:
    """The standard CIFAR ResNet-18 (3x3 stem, [2, 2, 2, 2] blocks of 64-512 channels; ANCER's l2 CIFAR-10 network).

    Parameters
    ----------
    num_classes : int
        The number of logits.
    dataset : str
        The dataset whose normalization constants (`DATASET_STATS`) the model applies.
    in_channels : int
        The images' channels: 3 (CIFAR-10) or 1 (Fashion-MNIST, whose 28 x 28 images it takes as they are).

    Returns
    -------
    torch.nn.Sequential
        Sequential(Normalize, CifarResNet): images in [0, 1], shape (B, in_channels, 32, 32) (or 28 x 28), to logits
        (B, num_classes).
    """
    return _normalized(CifarResNet((64, 128, 256, 512), (2, 2, 2, 2), num_classes, in_channels), dataset)


def wide_resnet(depth: int = 40, widen: int = 2, num_classes: int = 10, dataset: str = "cifar10") -> nn.Sequential:
    """RS4A's pre-activation WideResNet-depth-widen without dropout (WRN-40-2: ANCER's l1 CIFAR-10 network).

    Parameters
    ----------
    depth : int
        6n + 4 with n >= 1.
    widen : int
        The widening factor, >= 1.
    num_classes : int
        The number of logits.
    dataset : str
        The dataset whose normalization constants (`DATASET_STATS`) the model applies.

    Returns
    -------
    torch.nn.Sequential
        Sequential(Normalize, WideResNet): images in [0, 1], shape (B, 3, 32, 32), to logits (B, num_classes).
    """
    return _normalized(WideResNet(depth, widen, num_classes), dataset)


def imagenet_resnet50(num_classes: int = 1000, dataset: str = "imagenet") -> nn.Sequential:
    """torchvision's ResNet-50 with random weights (nothing downloaded), as in Cohen et al. and ANCER.

    Parameters
    ----------
    num_classes : int
        The number of logits.
    dataset : str
        The dataset whose normalization constants (`DATASET_STATS`) the model applies.

    Returns
    -------
    torch.nn.Sequential
        Sequential(Normalize, ResNet-50): images in [0, 1], shape (B, 3, 224, 224), to logits (B, num_classes).
    """
    from torchvision.models import resnet50

    return _normalized(resnet50(weights=None, num_classes=num_classes), dataset)


def _check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {sorted(choices)}")


def get_architecture(arch: str, dataset: str) -> nn.Sequential:
    """A randomly initialized base classifier by name, as Cohen et al.'s `get_architecture(arch, dataset)`.

    Parameters
    ----------
    arch : str
        One of `ARCHITECTURES`.
    dataset : str
        The dataset `arch` is built for (`ARCHITECTURES[arch]`): "cifar10", "imagenet" or "fmnist".

    Returns
    -------
    torch.nn.Sequential
        Sequential(Normalize, net): images in [0, 1] to logits (B, `NUM_CLASSES[dataset]`).
    """
    _check_choice("arch", arch, list(ARCHITECTURES))
    _check_choice("dataset", dataset, list(DATASET_STATS))
    if ARCHITECTURES[arch] != dataset:
        raise ValueError(f"arch {arch!r} is built for dataset {ARCHITECTURES[arch]!r}, not {dataset!r}")
    kwargs = {"num_classes": NUM_CLASSES[dataset], "dataset": dataset}
    if arch == "cifar_resnet20":
        return cifar_resnet(20, **kwargs)
    if arch == "cifar_resnet110":
        return cifar_resnet(110, **kwargs)
    if arch == "cifar_resnet18":
        return cifar_resnet18(**kwargs)
    if arch == "wrn40":
        return wide_resnet(40, 2, **kwargs)
    if arch == "fmnist_resnet18":
        return cifar_resnet18(in_channels=1, **kwargs)
    return imagenet_resnet50(**kwargs)


def _few(keys: Sequence[str], limit: int = 5) -> str:
    keys = list(keys)
    more = f" (and {len(keys) - limit} more)" if len(keys) > limit else ""
    return ", ".join(keys[:limit]) + more


def _strip_prefix(key: str) -> str:
    """'1.module.conv1.weight' -> 'conv1.weight': drop the Sequential index and DataParallel wrappers."""
    if key.startswith("1."):
        key = key[2:]
    while key.startswith("module."):
        key = key[len("module."):]
    return key


def _load_strict(module: nn.Module, state: Mapping[str, torch.Tensor], what: str,
                 optional: tuple[str, ...] = ()) -> None:
    """load_state_dict(strict=True), with a ValueError naming bad keys; keys ending in `optional` may be absent."""
    expected = module.state_dict()
    missing = [k for k in expected if k not in state and not k.endswith(optional)]
    unexpected = [k for k in state if k not in expected]
    shapes = [f"{k} {tuple(v.shape)} vs {tuple(expected[k].shape)}" for k, v in state.items()
              if k in expected and tuple(v.shape) != tuple(expected[k].shape)]
    problems = []
    if missing:
        problems.append(f"{len(missing)} missing keys: {_few(missing)}")
    if unexpected:
        problems.append(f"{len(unexpected)} unexpected keys: {_few(unexpected)}")
    if shapes:
        problems.append(f"{len(shapes)} shape mismatches (checkpoint vs model): {_few(shapes)}")
    if problems:
        raise ValueError(f"{what}: " + "; ".join(problems))
    module.load_state_dict({**{k: v for k, v in expected.items() if k not in state}, **state}, strict=True)


def _torch_load(path: Path, trusted: bool, device: torch.device | None = None) -> object:
    """torch.load onto `device` (None: the CPU), weights_only=True unless `trusted` allows unpickling."""
    where = torch.device("cpu") if device is None else device
    try:
        return torch.load(path, map_location=where, weights_only=True)
    except pickle.UnpicklingError as err:
        # torch names the cause "Unsupported global: GLOBAL module.Class ..." for a class outside its
        # allow-list, "Unsupported operand ..." for a file that is no pickle at all
        refused = re.search(r"Unsupported global: GLOBAL (\S+)", str(err))
        if refused is None:
            detail = re.search(r"Unsupported [^\n]*", str(err))
            raise ValueError(f"{path}: not a readable torch checkpoint "
                             f"({detail.group(0) if detail else 'see the chained error'})") from err
        if not trusted:
            raise ValueError(f"{path}: holds objects beyond tensors and plain containers ({refused.group(1)}), "
                             "so weights_only loading refused it; pass trusted=True only if you trust the file's "
                             "source") from err
    except Exception as err:  # torch.load raises KeyError, RuntimeError, EOFError... on other files
        raise ValueError(f"{path}: not a readable torch checkpoint ({type(err).__name__}: {err})") from err
    try:
        return torch.load(path, map_location=where, weights_only=False)
    except Exception as err:
        raise ValueError(f"{path}: not a readable torch checkpoint ({type(err).__name__}: {err})") from err


def load_checkpoint(path: str | os.PathLike, dataset: str | None = None, *, trusted: bool = False,
                    device: str | torch.device | None = None) -> nn.Sequential:
    """A base classifier from a Cohen et al.-format checkpoint or from this package's own format.

    Cohen et al.'s format is {'arch', 'state_dict'} of Sequential(NormalizeLayer, net), with keys '1.[module.]...'
    (the network possibly wrapped in DataParallel); this package's own adds '0.mean' and '0.std'. The state is loaded
    strictly (BatchNorm's num_batches_tracked may be absent) and the model returned in eval mode. The file is read
    with `weights_only=True`; a checkpoint that pickles other objects is refused unless `trusted=True`.

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint file.
    dataset : str or None
        The dataset the architecture is built for; None: the one of the checkpoint's arch (`ARCHITECTURES`).
    trusted : bool
        Whether to unpickle objects beyond tensors and plain containers, which runs arbitrary code: only for files
        from a trusted source.
    device : str or torch.device or None
        Where the model is returned (`devices.resolve`: "auto" for CUDA when available, "cpu", a CUDA device by name
        or a torch.device); None: the CPU. The tensors are read straight onto it (map_location).

    Returns
    -------
    torch.nn.Sequential
        The model, in eval mode, on `device`.

    Raises
    ------
    ValueError
        Naming the device, before the file is read, when `device` is a CUDA device that is not usable here.
    """
    dev = None if device is None else devices.resolve(device)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    ckpt = _torch_load(path, trusted, dev)
    if not isinstance(ckpt, Mapping):
        raise ValueError(f"{path}: expected a dict with keys 'arch' and 'state_dict', got {type(ckpt).__name__}")
    absent = [k for k in ("arch", "state_dict") if k not in ckpt]
    if absent:
        raise ValueError(f"{path}: checkpoint lacks key(s) {absent} (Cohen et al.'s format is a dict with "
                         f"'arch' and 'state_dict'); it has {_few(sorted(map(str, ckpt)))}")
    arch, state = ckpt["arch"], ckpt["state_dict"]
    if not isinstance(arch, str) or arch not in ARCHITECTURES:
        raise ValueError(f"{path}: unknown arch {arch!r}; choose one of {sorted(ARCHITECTURES)}")
    if not isinstance(state, Mapping) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{path}: 'state_dict' must map parameter names to tensors")
    if dataset is not None and ARCHITECTURES[arch] != dataset:
        raise ValueError(f"{path}: its arch {arch!r} is built for dataset {ARCHITECTURES[arch]!r}, not {dataset!r}; "
                         f"give a checkpoint of a {dataset} architecture")
    model = get_architecture(arch, dataset or ARCHITECTURES[arch])
    if dev is not None:  # before loading: the checkpoint's tensors are already there
        model.to(dev)

    norm_state = {k[2:]: v for k, v in state.items() if k.startswith("0.")}
    net_state: dict[str, torch.Tensor] = {}
    for key, value in state.items():
        if key.startswith("0."):
            continue
        bare = _strip_prefix(key)
        if bare in net_state:
            raise ValueError(f"{path}: keys {key!r} and another both map to {bare!r}")
        net_state[bare] = value
    if norm_state:  # our own format stores the Normalize buffers; Cohen's NormalizeLayer has none
        _load_strict(model[0], norm_state, f"{path}: normalization layer '0.'")
    # BatchNorm's num_batches_tracked (PyTorch >= 0.4.1) only matters when training with momentum=None
    _load_strict(model[1], net_state, f"{path}: arch {arch!r}", optional=("num_batches_tracked",))
    return model.eval()
