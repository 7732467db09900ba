"""The bad-input table of `tests/test_bad_input_table.py`: every public function of the package, called with
valid keyword arguments (its `Call`: a name, the function, the baseline keyword arguments) and then with ONE of
them replaced by a bad value (a `Case`: the argument, the bad value, the exception type expected and a regex the
message must match, by default the argument's own name).

Importing this module only builds the table. A value that must be made when the call is (a model, a settings
object whose constructor may itself refuse the value) is a `Fresh`; a path under the test's temporary folder is a
`Tmp` (a file it names is written when the call is made); `build_tree` writes the files that several cases share.
"""
from __future__ import annotations

import dataclasses
import pickle
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from PIL import Image
from torch import nn

from ancer_lite.core import (
    certify,
    families,
    files,
    geometry,
    memory,
    noise,
    parameters,
    regions,
    rotated,
    rotated_memory,
    ucan_noise,
    ucan_radii,
    validation,
)
from ancer_lite.evaluation import metrics, superset, verify
from ancer_lite.methods import hessian, optimize, rancer, registry, ucan, ucan_recipes
from ancer_lite.models import data, train
from ancer_lite.models import small as models
from ancer_lite.runs import experiment, logs, profiles, selection, setups
from ancer_lite.studies import primer

NAN, INF = float("nan"), float("inf")


class Fresh:
    """A bad value made by `make()` when the call is made (inside the check that it raises)."""

    def __init__(self, make: Callable[[], Any]):
        self.make = make


class Tmp:
    """The path `rel` under the temporary folder of the table. text / data: the file is written first;
    unique: under a new empty folder each time (a run folder or a log that must not exist yet)."""

    def __init__(self, rel: str = "", *, text: str | None = None, data: bytes | None = None, unique: bool = False):
        self.rel, self.text, self.data, self.unique = rel, text, data, unique

    def path(self, root: Path) -> Path:
        base = Path(tempfile.mkdtemp(dir=root)) if self.unique else root
        path = base / self.rel
        if self.text is not None:
            path.write_text(self.text)
        if self.data is not None:
            path.write_bytes(self.data)
        return path


def resolve(value: Any, root: Path) -> Any:
    if isinstance(value, Fresh):
        return value.make()
    if isinstance(value, Tmp):
        return value.path(root)
    return value


def build_tree(root: Path) -> None:
    """Write the files and folders that several cases read under `root`."""
    for name, content in (("ok", pickle.dumps({"data": np.zeros((2, 3072), np.uint8), "labels": [0, 1]})),
                          ("garbage", b"\x00\x01not a pickle"),
                          ("list", pickle.dumps([1, 2, 3])),
                          ("shape", pickle.dumps({"data": np.zeros((2, 100), np.uint8), "labels": [0, 1]})),
                          ("labels", pickle.dumps({"data": np.zeros((2, 3072), np.uint8), "labels": [0, 99]}))):
        folder = root / "cifar" / name / data.CIFAR10_FOLDER
        folder.mkdir(parents=True)
        (folder / "test_batch").write_bytes(content)
    for cls in ("n01", "n02"):
        (root / "imagenet" / "val" / cls).mkdir(parents=True)
        Image.new("RGB", (8, 8), (10, 20, 30)).save(root / "imagenet" / "val" / cls / "a.png")
    (root / "imagenet" / "empty" / "val").mkdir(parents=True)
    logs_dir = root / "logs"
    (logs_dir / "adir").mkdir(parents=True)
    np.save(logs_dir / "ok.npy", np.arange(3.0))
    np.save(logs_dir / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (logs_dir / "trunc.npy").write_bytes((logs_dir / "ok.npy").read_bytes()[:60])
    (logs_dir / "text.npy").write_text("not numpy")
    ucan_dir = root / "ucan"
    ucan_dir.mkdir()
    recipe = ucan_recipes.UCAN_RECIPES["tiny_ucan_input"]
    record = ucan_recipes.npg_record(recipe, recipe.build_npg((1, 2, 2)), (1, 2, 2), 0.25)
    torch.save({"arch": "small_cnn", "state_dict": {}, ucan_recipes.NPG_KEY: record}, ucan_dir / "ok.pt")
    torch.save({"arch": "small_cnn", "state_dict": {}}, ucan_dir / "classifier.pt")
    torch.save({"arch": "small_cnn", "state_dict": {}, ucan_recipes.NPG_KEY: record | {"kind": "bogus"}},
               ucan_dir / "bad_kind.pt")


@dataclasses.dataclass(eq=False)
class Call:
    """A public function and valid keyword arguments for it (a dict, or a function making one)."""
    name: str
    fn: Callable[..., Any]
    base: dict | Callable[[], dict]

    def kwargs(self, root: Path) -> dict:
        base = self.base() if callable(self.base) else self.base
        return {k: resolve(v, root) for k, v in base.items()}


@dataclasses.dataclass(eq=False)
class Case:
    """`call` with argument `arg` set to `bad`: raises `error` with a message matching `match` (default: the
    argument's name as a word). label: how the bad value is shown in the test id."""
    call: Call
    arg: str
    bad: Any
    error: type[Exception]
    match: str | None = None
    label: str | None = None

    @property
    def pattern(self) -> str:
        return self.match if self.match is not None else rf"(?<![\w.]){re.escape(self.arg)}(?![\w])"

    @property
    def id(self) -> str:
        return f"{self.call.name}: {self.arg}={self.label if self.label is not None else describe(self.bad)}"


def describe(v: Any) -> str:
    """A short text for a bad value, for the test id."""
    if isinstance(v, (np.ndarray, torch.Tensor)):
        kind = "tensor" if isinstance(v, torch.Tensor) else "array"
        flat = np.asarray(v.detach() if isinstance(v, torch.Tensor) else v).reshape(-1)
        if flat.size <= 4 and flat.dtype != object:
            return f"{kind}{tuple(v.shape)} {np.array2string(flat, precision=3)}"
        return f"{kind}{tuple(v.shape)} {v.dtype}"
    text = repr(v).replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------------------------------
# models and values shared by the calls
# --------------------------------------------------------------------------------------------------


def tiny_model(out: int = 3, seed: int = 0) -> nn.Module:
    """Flatten + Linear(4, out), weights fixed so that class 0 wins clearly on x = 0.5."""
    torch.manual_seed(seed)
    m = nn.Sequential(nn.Flatten(), nn.Linear(4, out))
    with torch.no_grad():
        m[1].weight.mul_(0.1)
        m[1].bias.zero_()
        m[1].bias[0] = 3.0
    return m.eval()


def softplus_model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    m = nn.Sequential(nn.Flatten(), nn.Linear(4, 6), nn.Softplus(), nn.Linear(6, 3))
    return m.eval()


class TupleOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x.flatten(1)), 0


class RandomForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x.flatten(1)) + 10 * torch.randn(x.shape[0], 3)


class VectorOut(nn.Module):
    def forward(self, x):
        return x.flatten(1).sum(1)


def nan_model():
    m = tiny_model()
    with torch.no_grad():
        m[1].weight.fill_(NAN)
    return m


X = torch.full((1, 2, 2), 0.5)
X2 = torch.stack([torch.full((1, 2, 2), 0.5), torch.full((1, 2, 2), 0.4)])
X8 = torch.rand(8, 1, 2, 2, generator=torch.Generator().manual_seed(1))
Y8 = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
THETA4 = np.full(4, 0.5)
gen = lambda: torch.Generator().manual_seed(0)  # noqa: E731


def orth(n: int, seed: int = 0) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return q * np.sign(np.diag(r))


U4 = orth(4)
NONORTH = 2 * np.eye(4)
NANROT = np.full((4, 4), NAN)
CASES: list[Case] = []

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.certify
# --------------------------------------------------------------------------------------------------
SMOOTH = lambda: certify.Smooth(tiny_model(), 3, (1, 2, 2))  # noqa: E731


def smooth_sample_counts(x, theta, num, rotation=None, generator=None):
    return SMOOTH().sample_counts(x, theta, num, rotation, generator)


def smooth_vote_counts(points, theta, num, rotation=None, mean=None):
    return SMOOTH().vote_counts(points, theta, num, rotation, mean=mean)


def smooth_certify(x, theta, n0, n, alpha, rotation=None, generator=None):
    return SMOOTH().certify(x, theta, n0, n, alpha, rotation, generator)


def smooth_pipeline(model, num_classes, input_shape, noise="gaussian", batch_size=2000, seed=0, device="cpu",
                    domain=(0.0, 1.0)):
    s = certify.Smooth(model, num_classes, input_shape, noise, batch_size, seed, device, domain=domain)
    return s.certify(torch.full(tuple(s.input_shape), 0.5), 0.5, 10, 100, 0.01)


c = Call("Smooth(...) then .certify", smooth_pipeline,
         lambda: dict(model=tiny_model(), num_classes=3, input_shape=(1, 2, 2)))
CASES += [
    Case(c, "model", lambda x: x, ValueError, label="a plain function"),
    Case(c, "model", None, ValueError),
    Case(c, "model", "model", ValueError, label="'model'"),
    Case(c, "model", Fresh(lambda: nn.Flatten()), ValueError, "model|num_classes",
         label="nn.Flatten() (4 outputs, 3 classes)"),
    Case(c, "model", Fresh(nan_model), ValueError, "model", label="Linear with NaN weights"),
    Case(c, "model", Fresh(TupleOut), ValueError, "model", label="module returning a tuple"),
    Case(c, "model", Fresh(RandomForward), ValueError, "model", label="module with randomness in forward"),
    Case(c, "model", Fresh(VectorOut), ValueError, "model", label="module returning shape (b,)"),
    Case(c, "model", Fresh(lambda: nn.Linear(4, 3)), ValueError, "model",
         label="nn.Linear(4,3) without Flatten (wrong input layout)"),
    Case(c, "num_classes", 1, ValueError),
    Case(c, "num_classes", 0, ValueError),
    Case(c, "num_classes", -3, ValueError),
    Case(c, "num_classes", 2.5, ValueError),
    Case(c, "num_classes", "3", ValueError),
    Case(c, "num_classes", True, ValueError),
    Case(c, "num_classes", None, ValueError),
    Case(c, "num_classes", NAN, ValueError),
    Case(c, "num_classes", 5, ValueError, label="5 (model has 3 outputs)"),
    Case(c, "input_shape", (1, 2, 3), ValueError, label="(1,2,3) (model takes 4 features)"),
    Case(c, "input_shape", (0, 2, 2), ValueError),
    Case(c, "input_shape", (-1, 2, 2), ValueError),
    Case(c, "input_shape", (1.0, 2, 2), ValueError),
    Case(c, "input_shape", "122", ValueError, label="'122'"),
    Case(c, "input_shape", None, ValueError),
    Case(c, "input_shape", 4, ValueError, label="4 (an int)"),
    Case(c, "input_shape", (True, 2, 2), ValueError, label="(True, 2, 2)"),
    Case(c, "noise", "laplace", ValueError),
    Case(c, "noise", "Gaussian", ValueError),
    Case(c, "noise", "", ValueError),
    Case(c, "noise", None, ValueError),
    Case(c, "noise", 0, ValueError),
    Case(c, "batch_size", 0, ValueError),
    Case(c, "batch_size", -1, ValueError),
    Case(c, "batch_size", 2.5, ValueError),
    Case(c, "batch_size", True, ValueError),
    Case(c, "batch_size", "100", ValueError),
    Case(c, "batch_size", None, ValueError),
    Case(c, "seed", 1.5, ValueError),
    Case(c, "seed", "a", ValueError, label="'a'"),
    Case(c, "seed", None, ValueError),
    Case(c, "seed", NAN, ValueError),
    Case(c, "seed", 2 ** 70, ValueError, label="2**70"),
    Case(c, "device", "tpu", ValueError, label="'tpu'"),
    Case(c, "device", "gpu", ValueError, label="'gpu'"),
    Case(c, "device", "cuda", ValueError, label="'cuda' (no GPU)"),
    Case(c, "device", 5, ValueError, label="5 (an int)"),
    Case(c, "domain", (1.0, 0.0), ValueError, label="(1.0, 0.0) (reversed)"),
    Case(c, "domain", "01", ValueError, label="'01'"),
]

c = Call("Smooth.sample_counts", smooth_sample_counts, lambda: dict(x=X.clone(), theta=0.5, num=50))
CASES += [
    Case(c, "x", torch.full((1, 2, 2), NAN), ValueError, label="all-NaN (1,2,2)"),
    Case(c, "x", torch.full((1, 2, 2), INF), ValueError, label="all-inf (1,2,2)"),
    Case(c, "x", torch.full((2, 2), 0.5), ValueError, label="shape (2,2)"),
    Case(c, "x", torch.full((1, 1, 2, 2), 0.5), ValueError, label="shape (1,1,2,2) (batched)"),
    Case(c, "x", torch.empty(0), ValueError, label="empty tensor"),
    Case(c, "x", "abc", ValueError, label="'abc'"),
    Case(c, "x", None, ValueError),
    Case(c, "x", torch.full((1, 2, 2), 128, dtype=torch.uint8), ValueError, label="uint8 image (value 128)"),
    Case(c, "x", torch.full((1, 2, 2), 0.5 + 0.5j), ValueError, label="complex (0.5+0.5j)"),
    Case(c, "theta", 0, ValueError, r"\btheta\b|\bsigma\b"),
    Case(c, "theta", -0.5, ValueError, r"\btheta\b|\bsigma\b"),
    Case(c, "theta", NAN, ValueError, r"\btheta\b|\bsigma\b"),
    Case(c, "theta", INF, ValueError, r"\btheta\b|\bsigma\b"),
    Case(c, "theta", np.full(4, 0.5), ValueError, r"\btheta\b|\bsigma\b", label="shape (4,)"),
    Case(c, "theta", torch.tensor([[[0.5, 0.0], [0.5, 0.5]]]), ValueError, r"\btheta\b|\bsigma\b",
         label="per-pixel with one 0"),
    Case(c, "theta", [], ValueError, r"\btheta\b|\bsigma\b", label="[]"),
    Case(c, "theta", torch.tensor(NAN), ValueError, r"\btheta\b|\bsigma\b", label="tensor(nan)"),
    Case(c, "theta", 1e39, ValueError, r"\btheta\b|\bsigma\b", label="1e39 (overflows float32)"),
    Case(c, "theta", "0.5", TypeError, r"\btheta\b|\bsigma\b", label="'0.5'"),
    Case(c, "theta", None, TypeError, r"\btheta\b|\bsigma\b"),
    Case(c, "theta", True, TypeError, r"\btheta\b|\bsigma\b"),
    Case(c, "theta", 0.5 + 0.5j, TypeError, r"\btheta\b|\bsigma\b", label="complex 0.5+0.5j"),
    Case(c, "num", 0, ValueError),
    Case(c, "num", -1, ValueError),
    Case(c, "num", 2.5, ValueError),
    Case(c, "num", True, ValueError),
    Case(c, "num", "50", ValueError, label="'50'"),
    Case(c, "num", None, ValueError),
    Case(c, "rotation", torch.tensor(NONORTH), ValueError, label="2*I (not orthogonal)"),
    Case(c, "rotation", torch.eye(3), ValueError, label="I_3 (wrong size)"),
    Case(c, "rotation", torch.tensor(NANROT), ValueError, label="all-NaN 4x4"),
    Case(c, "rotation", torch.eye(4)[None], ValueError, label="shape (1,4,4)"),
    Case(c, "rotation", torch.tensor(0.99 * np.eye(4)), ValueError, label="0.99*I"),
    Case(c, "rotation", "eye", ValueError, label="'eye'"),
    Case(c, "generator", "gen", TypeError, label="'gen'"),
    Case(c, "generator", 5, TypeError),
    Case(c, "generator", Fresh(lambda: np.random.default_rng(0)), TypeError, label="np.random.default_rng(0)"),
]

c = Call("Smooth.vote_counts", smooth_vote_counts, lambda: dict(points=X2.clone(), theta=0.5, num=20))
CASES += [
    Case(c, "points", X.clone(), ValueError, label="one input (1,2,2), not a batch"),
    Case(c, "points", Fresh(lambda: X2 * NAN), ValueError, label="NaN"),
    Case(c, "points", torch.full((2, 1, 2, 2), 1, dtype=torch.int64), ValueError, label="int64 points"),
    Case(c, "points", Fresh(lambda: X2 - 1.0), ValueError, label="below the [0, 1] pixel domain"),
    Case(c, "theta", -0.5, ValueError, r"\btheta\b|\bsigma\b"),
    Case(c, "num", 0, ValueError),
    Case(c, "rotation", torch.tensor(NONORTH), ValueError, label="2*I (not orthogonal)"),
    Case(c, "mean", torch.zeros(3, 2, 2), ValueError, label="shape (3,2,2)"),
    Case(c, "mean", torch.full((1, 2, 2), INF), ValueError, label="inf"),
    Case(c, "mean", np.zeros((1, 2, 2)), TypeError, label="a numpy array"),
]

c = Call("certify.soft_smoothed_probabilities", certify.soft_smoothed_probabilities,
         lambda: dict(model=tiny_model(), x=X2.clone(), z=torch.randn(2, 5, 1, 2, 2),
                      theta=torch.full((2, 1, 1, 1), 0.5)))
CASES += [  # its other arguments as checked by its entry points (optimize.smoothed_probabilities, ucan's)
    Case(c, "cls", 3, ValueError, label="3 (3 classes)"),
]

c = Call("Smooth.predict", lambda x, theta, n, alpha: SMOOTH().predict(x, theta, n, alpha),
         lambda: dict(x=X.clone(), theta=0.5, n=100, alpha=0.01))
CASES += [
    Case(c, "n", 0, ValueError, r"\bn must\b"),
    Case(c, "n", -5, ValueError, r"\bn must\b"),
    Case(c, "n", 2.5, ValueError, r"\bn must\b"),
    Case(c, "n", True, ValueError, r"\bn must\b"),
    Case(c, "n", None, ValueError, r"\bn must\b"),
    Case(c, "alpha", 0, ValueError),
    Case(c, "alpha", 1, ValueError),
    Case(c, "alpha", -0.1, ValueError),
    Case(c, "alpha", NAN, ValueError),
    Case(c, "alpha", True, ValueError),
    Case(c, "alpha", None, ValueError),
    Case(c, "alpha", [0.05], ValueError),
    Case(c, "alpha", "0.05", ValueError, label="'0.05'"),
    Case(c, "theta", -0.5, ValueError, r"\btheta\b|\bsigma\b"),
    Case(c, "x", torch.full((1, 2, 2), NAN), ValueError, label="all-NaN"),
]

c = Call("Smooth.certify", smooth_certify, lambda: dict(x=X.clone(), theta=0.5, n0=10, n=100, alpha=0.01))
CASES += [
    Case(c, "x", torch.full((1, 2, 2), NAN), ValueError, label="all-NaN"),
    Case(c, "x", torch.full((2, 2), 0.5), ValueError, label="shape (2,2)"),
    Case(c, "x", torch.full((1, 2, 2), 128, dtype=torch.uint8), ValueError, label="uint8 image (value 128)"),
    Case(c, "x", torch.full((1, 2, 2), 128.0), ValueError, label="float image in 0..255 (value 128.0)"),
    Case(c, "x", None, ValueError),
    Case(c, "theta", 0, ValueError, r"\btheta\b|\bsigma\b"),
    Case(c, "theta", -1, ValueError, r"\btheta\b|\bsigma\b"),
    Case(c, "theta", NAN, ValueError, r"\btheta\b|\bsigma\b"),
    Case(c, "theta", INF, ValueError, r"\btheta\b|\bsigma\b"),
    Case(c, "theta", np.full(3, 0.5), ValueError, r"\btheta\b|\bsigma\b", label="shape (3,)"),
    Case(c, "theta", 1e39, ValueError, r"\btheta\b|\bsigma\b", label="1e39 (overflows float32)"),
    Case(c, "theta", 1e-300, ValueError, "float32", label="1e-300 (underflows float32 to 0)"),
    Case(c, "theta", "0.5", TypeError, r"\btheta\b|\bsigma\b", label="'0.5'"),
    Case(c, "theta", True, TypeError, r"\btheta\b|\bsigma\b"),
    Case(c, "n0", 0, ValueError),
    Case(c, "n0", -1, ValueError),
    Case(c, "n0", 2.5, ValueError),
    Case(c, "n0", True, ValueError),
    Case(c, "n0", "10", ValueError, label="'10'"),
    Case(c, "n0", None, ValueError),
    Case(c, "n", 0, ValueError, r"\bn must\b"),
    Case(c, "n", -1, ValueError, r"\bn must\b"),
    Case(c, "n", 2.5, ValueError, r"\bn must\b"),
    Case(c, "n", True, ValueError, r"\bn must\b"),
    Case(c, "n", "100", ValueError, r"\bn must\b", label="'100'"),
    Case(c, "n", None, ValueError, r"\bn must\b"),
    Case(c, "n", NAN, ValueError, r"\bn must\b"),
    Case(c, "alpha", 0, ValueError),
    Case(c, "alpha", 1, ValueError),
    Case(c, "alpha", 1.5, ValueError),
    Case(c, "alpha", -0.1, ValueError),
    Case(c, "alpha", NAN, ValueError),
    Case(c, "alpha", INF, ValueError),
    Case(c, "alpha", True, ValueError),
    Case(c, "alpha", None, ValueError),
    Case(c, "alpha", [0.01], ValueError),
    Case(c, "alpha", "0.01", ValueError, label="'0.01'"),
    Case(c, "rotation", torch.tensor(NONORTH), ValueError, label="2*I (not orthogonal)"),
    Case(c, "rotation", torch.eye(3), ValueError, label="I_3"),
    Case(c, "rotation", NANROT, ValueError, label="all-NaN ndarray"),
    Case(c, "generator", "g", TypeError, label="'g'"),
]

c = Call("lower_confidence_bound", certify.lower_confidence_bound, dict(k=90, n=100, alpha=0.01))
CASES += [
    Case(c, "k", -1, ValueError, r"\bk must\b"),
    Case(c, "k", 101, ValueError, r"\bk must\b"),
    Case(c, "k", 1.5, ValueError, r"\bk must\b"),
    Case(c, "k", NAN, ValueError, r"\bk must\b"),
    Case(c, "k", INF, ValueError, r"\bk must\b"),
    Case(c, "k", "90", ValueError, r"\bk must\b", label="'90'"),
    Case(c, "k", None, ValueError, r"\bk must\b"),
    Case(c, "k", True, ValueError, r"\bk must\b"),
    Case(c, "k", [90, 200], ValueError, r"\bk must\b"),
    Case(c, "k", 90 + 0j, ValueError, r"\bk must\b", label="complex 90+0j"),
    Case(c, "n", 0, ValueError, r"\bn must\b"),
    Case(c, "n", -1, ValueError, r"\bn must\b"),
    Case(c, "n", 2.5, ValueError, r"\bn must\b"),
    Case(c, "n", True, ValueError, r"\bn must\b"),
    Case(c, "n", "100", ValueError, r"\bn must\b", label="'100'"),
    Case(c, "n", None, ValueError, r"\bn must\b"),
    Case(c, "n", NAN, ValueError, r"\bn must\b"),
    Case(c, "alpha", 0, ValueError),
    Case(c, "alpha", 1, ValueError),
    Case(c, "alpha", NAN, ValueError),
    Case(c, "alpha", -1, ValueError),
    Case(c, "alpha", None, ValueError),
]

c = Call("certificate_from_bound", certify.certificate_from_bound,
         lambda: dict(prediction=0, p_lower=0.9, theta=THETA4.copy(), norm="l2", count=90, n=100))
CASES += [
    Case(c, "prediction", -2, ValueError),
    Case(c, "prediction", 1.5, ValueError),
    Case(c, "prediction", True, ValueError),
    Case(c, "prediction", "0", ValueError, label="'0'"),
    Case(c, "prediction", None, ValueError),
    Case(c, "prediction", NAN, ValueError),
    Case(c, "p_lower", NAN, ValueError),
    Case(c, "p_lower", INF, ValueError),
    Case(c, "p_lower", -0.1, ValueError),
    Case(c, "p_lower", 1.5, ValueError),
    Case(c, "p_lower", 1.0, ValueError, label="1.0 (l2: infinite radius)"),
    Case(c, "p_lower", True, TypeError, label="True"),
    Case(c, "p_lower", "0.9", TypeError, label="'0.9'"),
    Case(c, "p_lower", None, TypeError),
    Case(c, "p_lower", np.array([0.9, 0.8]), ValueError, label="array([0.9, 0.8])"),
    Case(c, "theta", np.array([]), ValueError, label="[]"),
    Case(c, "theta", np.zeros(4), ValueError, label="zeros(4)"),
    Case(c, "theta", -THETA4, ValueError, label="-0.5 x4"),
    Case(c, "theta", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "theta", np.full(4, INF), ValueError, label="inf x4"),
    Case(c, "theta", None, ValueError),
    Case(c, "theta", "abc", ValueError, label="'abc'"),
    Case(c, "norm", "l3", ValueError, label="'l3'"),
    Case(c, "norm", "L2", ValueError, label="'L2'"),
    Case(c, "norm", None, ValueError),
    Case(c, "norm", 2, ValueError),
    Case(c, "norm", "linf", ValueError, label="'linf'"),
    Case(c, "count", -5, ValueError),
    Case(c, "count", 150, ValueError, label="150 (> n=100)"),
    Case(c, "count", 1.5, ValueError),
    Case(c, "count", "ninety", ValueError, label="'ninety'"),
    Case(c, "count", None, ValueError),
    Case(c, "n", -1, ValueError),
    Case(c, "n", 0, ValueError, label="0 (count=90)"),
    Case(c, "n", 2.5, ValueError),
    Case(c, "n", "100", ValueError, label="'100'"),
    Case(c, "rotation", NONORTH, ValueError, label="2*I (l2)"),
    Case(c, "rotation", NANROT, ValueError, label="NaN 4x4 (l2)"),
    Case(c, "rotation", "abc", ValueError, label="'abc' (l2)"),
    Case(c, "rotation", np.eye(3), ValueError, label="I_3 (l2, wrong size)"),
]

c = Call("certificate_from_bound (norm='l1', rotation=U)", certify.certificate_from_bound,
         lambda: dict(prediction=0, p_lower=0.9, theta=THETA4.copy(), norm="l1", count=90, n=100, rotation=U4.copy()))
CASES += [
    Case(c, "rotation", NONORTH, ValueError, label="2*I"),
    Case(c, "rotation", NANROT, ValueError, label="NaN 4x4"),
    Case(c, "rotation", np.eye(3), ValueError, label="I_3 (wrong size)"),
    Case(c, "rotation", np.zeros((4, 4)), ValueError, label="zeros (singular)"),
    Case(c, "rotation", "abc", ValueError, label="'abc'"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.regions
# --------------------------------------------------------------------------------------------------
c = Call("regions.gap_from_lower_bound", regions.gap_from_lower_bound, dict(p_lower=0.9, norm="l2"))
CASES += [
    Case(c, "p_lower", NAN, ValueError),
    Case(c, "p_lower", -0.1, ValueError),
    Case(c, "p_lower", 1.5, ValueError),
    Case(c, "p_lower", None, ValueError),
    Case(c, "p_lower", 1.0, ValueError, label="1.0 (l2)"),
    Case(c, "p_lower", "0.9", ValueError, label="'0.9'"),
    Case(c, "p_lower", True, ValueError, label="True"),
    Case(c, "norm", "l3", ValueError, label="'l3'"),
    Case(c, "norm", None, ValueError),
]

c = Call("regions.semi_axes", regions.semi_axes, lambda: dict(theta=THETA4.copy(), gap=1.0))
CASES += [
    Case(c, "theta", -THETA4, ValueError, label="-0.5 x4"),
    Case(c, "theta", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "theta", "abc", ValueError, label="'abc'"),
    Case(c, "gap", -1.0, ValueError),
    Case(c, "gap", NAN, ValueError),
    Case(c, "gap", np.array([1.0, 2.0]), ValueError, label="[1, 2] (2 gaps for one 4-dim theta)"),
    Case(c, "gap", np.array([1.0, 2.0, 3.0]), ValueError, label="[1,2,3]"),
]

c = Call("regions.enclosed_radius", regions.enclosed_radius, lambda: dict(theta=THETA4.copy(), gap=1.0, norm="l2"))
CASES += [
    Case(c, "theta", -THETA4, ValueError, label="-0.5 x4"),
    Case(c, "theta", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "theta", np.array([]), ValueError, label="[]"),
    Case(c, "theta", "abc", ValueError, label="'abc'"),
    Case(c, "gap", -1.0, ValueError),
    Case(c, "gap", NAN, ValueError),
    Case(c, "norm", "l3", ValueError, label="'l3'"),
]

c = Call("regions.enclosed_radius (l1, rotation=U)", regions.enclosed_radius,
         lambda: dict(theta=THETA4.copy(), gap=1.0, norm="l1", rotation=U4.copy()))
CASES += [
    Case(c, "rotation", NONORTH, ValueError, label="2*I"),
    Case(c, "rotation", np.eye(3), ValueError, label="I_3"),
    Case(c, "rotation", NANROT, ValueError, label="NaN 4x4"),
]

c = Call("regions.log_geometric_mean", regions.log_geometric_mean, lambda: dict(theta=THETA4.copy()))
CASES += [
    Case(c, "theta", -THETA4, ValueError, label="-0.5 x4"),
    Case(c, "theta", np.zeros(4), ValueError, label="zeros(4)"),
    Case(c, "theta", np.array([]), ValueError, label="[]"),
    Case(c, "theta", np.full(4, NAN), ValueError, label="NaN x4"),
]

c = Call("regions.proxy_radius", regions.proxy_radius, lambda: dict(theta=THETA4.copy(), gap=1.0))
CASES += [
    Case(c, "theta", -THETA4, ValueError, label="-0.5 x4"),
    Case(c, "theta", np.zeros(4), ValueError, label="zeros(4)"),
    Case(c, "gap", -1.0, ValueError),
    Case(c, "gap", NAN, ValueError),
]

c = Call("regions.log_volume", regions.log_volume, lambda: dict(theta=THETA4.copy(), gap=1.0, norm="l2"))
CASES += [
    Case(c, "theta", -THETA4, ValueError, label="-0.5 x4"),
    Case(c, "theta", np.zeros(4), ValueError, label="zeros(4)"),
    Case(c, "theta", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "gap", NAN, ValueError),
    Case(c, "norm", "l3", ValueError, label="'l3'"),
]

# region_norm and contains are formulas on arrays taken as given (norm checked); a region's values are checked where
# it enters the package, as a CertifiedRegion (whose contains checks its points) or through Algorithm 1's entry points
c = Call("regions.region_norm", regions.region_norm,
         lambda: dict(delta=np.full(4, 0.1), scales=THETA4.copy(), norm="l2"))
CASES += [
    Case(c, "norm", "l3", ValueError, label="'l3'"),
]

c = Call("regions.contains", regions.contains,
         lambda: dict(points=np.full(4, 0.1), center=np.zeros(4), scales=THETA4.copy(), norm="l2"))
CASES += [
    Case(c, "norm", "l3", ValueError, label="'l3'"),
]

c = Call("regions.CertifiedRegion", regions.CertifiedRegion,
         lambda: dict(center=np.zeros(4), scales=THETA4.copy(), gap=1.0, norm="l2", prediction=0, rotation=U4.copy()))
CASES += [
    Case(c, "scales", np.zeros(4), ValueError, label="zeros(4)"),
    Case(c, "scales", -THETA4, ValueError, label="-0.5 x4"),
    Case(c, "scales", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "center", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "center", np.zeros(3), ValueError, label="shape (3,)"),
    Case(c, "norm", "l3", ValueError, label="'l3'"),
    Case(c, "rotation", NONORTH, ValueError, label="2*I"),
    Case(c, "rotation", NANROT, ValueError, label="NaN 4x4"),
    Case(c, "rotation", np.eye(3), ValueError, label="I_3"),
    Case(c, "rotation", "abc", ValueError, label="'abc'"),
]

c = Call("regions.CertifiedRegion.contains",
         lambda points: regions.CertifiedRegion(np.zeros(4), THETA4, 1.0, "l2", 0, U4).contains(points),
         lambda: dict(points=np.full(4, 0.1)))
CASES += [
    Case(c, "points", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "points", np.full(3, 0.1), ValueError, label="shape (3,)"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.noise
# --------------------------------------------------------------------------------------------------
c = Call("noise.check_noise", noise.check_noise, dict(noise="gaussian"))
CASES += [
    Case(c, "noise", "laplace", ValueError, label="'laplace'"),
    Case(c, "noise", None, ValueError),
    Case(c, "noise", 1, ValueError),
    Case(c, "noise", ["gaussian"], ValueError),
]

c = Call("noise.uniform_lambda", noise.uniform_lambda, dict(sigma=0.5))
CASES += [
    Case(c, "sigma", -1.0, ValueError),
    Case(c, "sigma", 0.0, ValueError),
    Case(c, "sigma", NAN, ValueError),
    Case(c, "sigma", INF, ValueError),
    Case(c, "sigma", "0.5", ValueError, label="'0.5'"),
    Case(c, "sigma", None, ValueError),
]

c = Call("parameters.check_rotation", parameters.check_rotation, lambda: dict(rotation=torch.eye(4), n=4))
CASES += [
    Case(c, "rotation", torch.tensor(NONORTH), ValueError, label="2*I"),
    Case(c, "rotation", torch.eye(3), ValueError, label="I_3"),
    Case(c, "rotation", torch.tensor(NANROT), ValueError, label="NaN 4x4"),
    Case(c, "rotation", "x", ValueError, label="'x'"),
    Case(c, "rotation", 0.99996 * np.eye(4), ValueError, label="0.99996*I (deviates by 8e-5)"),
    Case(c, "n", 0, ValueError),
    Case(c, "n", -1, ValueError),
    Case(c, "n", 2.5, ValueError),
]

c = Call("noise.standard_noise", noise.standard_noise, dict(noise="gaussian", num=5, shape=(1, 2, 2)))
CASES += [
    Case(c, "noise", "laplace", ValueError, label="'laplace'"),
    Case(c, "num", -1, ValueError),
    Case(c, "num", 2.5, ValueError),
    Case(c, "shape", (-1,), ValueError, label="(-1,)"),
    Case(c, "shape", "ab", ValueError, label="'ab'"),
    Case(c, "dtype", torch.int64, ValueError),
    Case(c, "device", "tpu", ValueError, label="'tpu'"),
    Case(c, "out", torch.empty(3, 1, 2, 2), ValueError, label="tensor of shape (3,1,2,2)"),
    Case(c, "generator", "x", TypeError, label="'x'"),
]

c = Call("noise.sample_noise", noise.sample_noise, dict(noise="gaussian", theta=0.5, num=5, shape=(1, 2, 2)))
CASES += [
    Case(c, "noise", "x", ValueError, label="'x'"),
    Case(c, "theta", 0, ValueError),
    Case(c, "theta", NAN, ValueError),
    Case(c, "theta", -1, ValueError),
    Case(c, "theta", "a", ValueError, label="'a'"),
    Case(c, "num", 0, ValueError),
    Case(c, "num", 2.5, ValueError),
    Case(c, "shape", (-1, 2), ValueError, label="(-1, 2)"),
    Case(c, "shape", "abc", ValueError, label="'abc'"),
    Case(c, "rotation", torch.tensor(NONORTH), ValueError, label="2*I"),
    Case(c, "dtype", torch.int64, ValueError),
    # scale_noise's cases: it takes its arguments as checked here (and by Smooth's methods)
    Case(c, "theta", torch.tensor(-0.5), ValueError, label="tensor(-0.5)"),
    Case(c, "theta", torch.tensor(NAN), ValueError, label="tensor(nan)"),
    Case(c, "theta", torch.ones(3, 1, 1), ValueError, label="shape (3,1,1)"),
    Case(c, "rotation", torch.tensor(NONORTH, dtype=torch.float32), ValueError, label="2*I float32"),
    Case(c, "rotation", torch.eye(3), ValueError, label="I_3"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.geometry
# --------------------------------------------------------------------------------------------------
CA, CB, SA, SB = np.zeros(4), np.full(4, 2.0), np.full(4, 0.5), np.full(4, 0.5)
# geometry's formulas take regions as given (centres, semi-axes, radii: checked where a region enters, see the
# memory's and CertifiedRegion's cases); they check the choice of norm, iterations, bisect's brackets and K's t
c = Call("geometry.max_intersect", geometry.max_intersect,
         lambda: dict(center_a=CA.copy(), radius_a=1.0, center_b=CB.copy(), radius_b=1.0, norm="l2"))
CASES += [
    Case(c, "norm", "l3", ValueError, label="'l3'"),
]

c = Call("geometry.bisect", geometry.bisect,
         lambda: dict(root_above=lambda m: m < 0.3, lo=np.zeros(1), hi=np.ones(1), iterations=60))
CASES += [
    Case(c, "iterations", -1, ValueError),
    Case(c, "iterations", 1.5, ValueError),
    Case(c, "lo", np.full(1, 2.0), ValueError, label="[2.0] (> hi)"),
    Case(c, "hi", np.full(1, NAN), ValueError, label="[nan]"),
    Case(c, "root_above", None, TypeError),
]

c = Call("geometry.k_function", geometry.k_function,
         lambda: dict(t=0.5, diff=CB - CA, scales_a=SA.copy(), scales_b=SB.copy()))
CASES += [
    Case(c, "t", 1.5, ValueError),
    Case(c, "t", NAN, ValueError),
]

c = Call("geometry.minimize_k", geometry.minimize_k,
         lambda: dict(center_a=CA.copy(), scales_a=SA.copy(), center_b=CB.copy(), scales_b=SB.copy()))
CASES += [
    Case(c, "iterations", -1, ValueError),
    Case(c, "iterations", 2.5, ValueError),
]

c = Call("geometry.k_falls_below", geometry.k_falls_below,
         lambda: dict(center_a=CA.copy(), scales_a=SA.copy(), center_b=CB.copy(), scales_b=SB.copy()))
CASES += [
    Case(c, "iterations", -1, ValueError),
    Case(c, "iterations", 2.5, ValueError),
]

c = Call("geometry.intersect", geometry.intersect,
         lambda: dict(center_a=CA.copy(), scales_a=SA.copy(), center_b=CB.copy(), scales_b=SB.copy(), norm="l2"))
CASES += [
    Case(c, "norm", "l3", ValueError, label="'l3'"),
]

c = Call("geometry.project_onto_ellipsoid", geometry.project_onto_ellipsoid,
         lambda: dict(y=np.full(4, 2.0), scales=SA.copy()))
CASES += [
    Case(c, "iterations", -1, ValueError),
    Case(c, "iterations", 1.5, ValueError),
]

c = Call("geometry.distance_to_region", geometry.distance_to_region,
         lambda: dict(point=CB.copy(), center=CA.copy(), scales=SA.copy(), norm="l2"))
CASES += [
    Case(c, "norm", "l3", ValueError, label="'l3'"),
]

c = Call("geometry.largest_out_subset", geometry.largest_out_subset,
         lambda: dict(center_a=CA.copy(), scales_a=SA.copy(), center_b=CB.copy(), scales_b=SB.copy(), norm="l2"))
CASES += [
    Case(c, "norm", "l3", ValueError, label="'l3'"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.rotated
# --------------------------------------------------------------------------------------------------
# rotated's formulas on regions (centre, U, s) take them as given (checked where a region enters: the memory's,
# rotated_memory's and CertifiedRegion's cases); the dense evaluators of Eq. 5 and 6 check their arguments
S4 = np.full(4, 0.5)

c = Call("rotated.quadratic_form", rotated.quadratic_form,
         lambda: dict(points=np.full(4, 0.1), center=np.zeros(4), q_matrix=np.eye(4)))
CASES += [
    Case(c, "q_matrix", -np.eye(4), ValueError, label="-I (negative definite)"),
    Case(c, "q_matrix", NANROT, ValueError, label="NaN 4x4"),
    Case(c, "q_matrix", np.eye(3), ValueError, label="I_3"),
    Case(c, "points", np.full(4, NAN), ValueError, label="NaN x4"),
]

QM = rotated.precision(U4, S4)
RM = rotated.precision(orth(4, 1), np.full(4, 0.3))
c = Call("rotated.k_function", rotated.k_function,
         lambda: dict(t=0.5, center_q=np.zeros(4), q_matrix=QM.copy(), center_r=np.full(4, 2.0), r_matrix=RM.copy()))
CASES += [
    Case(c, "t", 0.0, ValueError),
    Case(c, "t", 1.5, ValueError),
    Case(c, "q_matrix", np.zeros((4, 4)), ValueError, label="zeros (singular)"),
    Case(c, "q_matrix", NANROT, ValueError, label="NaN 4x4"),
]

c = Call("rotated.simultaneous_diagonalization", rotated.simultaneous_diagonalization,
         lambda: dict(cov_q=rotated.covariance(U4, S4), cov_r=np.eye(4)))
CASES += [
    Case(c, "cov_q", -np.eye(4), ValueError, label="-I (not PD)"),
    Case(c, "cov_r", NANROT, ValueError, label="NaN 4x4"),
]

c = Call("rotated.eq6_residual", rotated.eq6_residual, lambda: dict(lam=0.5, y=np.full(4, 2.0), q_matrix=QM.copy()))
CASES += [
    Case(c, "lam", -1.0, ValueError),
    Case(c, "lam", NAN, ValueError),
    Case(c, "q_matrix", np.eye(3), ValueError, label="I_3"),
]

c = Call("rotated.eq6_multiplier", rotated.eq6_multiplier, lambda: dict(y_eigen=np.full(4, 2.0), scales=S4.copy()))
CASES += [
    Case(c, "iterations", -1, ValueError),
]

c = Call("rotated.project_onto_ellipsoid", rotated.project_onto_ellipsoid,
         lambda: dict(y=np.full(4, 2.0), rotation=U4.copy(), scales=S4.copy()))
CASES += [
    Case(c, "iterations", -1, ValueError),
    Case(c, "iterations", 1.5, ValueError),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.memory
# --------------------------------------------------------------------------------------------------
c = Call("memory.decide", memory.decide,
         lambda: dict(x=np.full(4, 2.0), pred=1, scales=np.full(4, 0.5), mem_centers=np.zeros((1, 4)),
                      mem_preds=np.array([0]), mem_scales=np.full((1, 4), 0.5), norm="l2", policy="shrink"))
CASES += [
    Case(c, "policy", "bogus", ValueError, label="'bogus'"),
    Case(c, "norm", "l3", ValueError, label="'l3'"),
    Case(c, "pred", -5, ValueError),
    Case(c, "pred", 1.5, ValueError),
    Case(c, "scales", -np.full(4, 0.5), ValueError, label="-0.5 x4"),
    Case(c, "scales", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "x", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "mem_preds", np.array([0, 1]), ValueError, label="2 preds for 1 centre"),
    Case(c, "mem_centers", np.zeros((1, 3)), ValueError, label="shape (1,3)"),
    Case(c, "x", np.full(3, 2.0), ValueError, label="shape (3,)"),
]


def mem_pipeline(dim, norm, policy="shrink"):
    m = memory.CertificationMemory(dim, norm, policy)
    return m.certify(np.full(4, 2.0), 1, np.full(4, 0.5))


c = Call("CertificationMemory(...) then .certify", mem_pipeline, dict(dim=4, norm="l2"))
CASES += [
    Case(c, "dim", 0, ValueError),
    Case(c, "dim", -1, ValueError),
    Case(c, "dim", 2.5, ValueError),
    Case(c, "dim", "4", ValueError, label="'4'"),
    Case(c, "dim", None, ValueError),
    Case(c, "dim", True, ValueError, r"\bdim\b", label="True"),
    Case(c, "norm", "L2", ValueError, label="'L2'"),
    Case(c, "norm", None, ValueError),
    Case(c, "policy", "worst", ValueError, label="'worst'"),
    Case(c, "policy", None, ValueError),
]


def mem_with_one():
    m = memory.CertificationMemory(4, "l2")
    m.certify(np.zeros(4), 0, np.full(4, 0.5))
    return m


c = Call("CertificationMemory.certify", lambda x, pred, scales: mem_with_one().certify(x, pred, scales),
         lambda: dict(x=np.full(4, 2.0), pred=1, scales=np.full(4, 0.5)))
CASES += [
    Case(c, "x", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "x", np.full(3, 2.0), ValueError, label="shape (3,)"),
    Case(c, "x", "abc", ValueError, label="'abc'"),
    Case(c, "pred", -2, ValueError),
    Case(c, "pred", 1.5, ValueError),
    Case(c, "pred", True, ValueError),
    Case(c, "pred", "1", ValueError, label="'1'"),
    Case(c, "pred", None, ValueError),
    Case(c, "scales", np.zeros(4), ValueError, label="zeros(4)"),
    Case(c, "scales", -np.full(4, 0.5), ValueError, label="-0.5 x4"),
    Case(c, "scales", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "scales", np.full(3, 0.5), ValueError, label="shape (3,)"),
]

C2 = np.array([[0.0, 0, 0, 0], [3.0, 3, 3, 3]])
S2 = np.full((2, 4), 0.5)
c = Call("memory.algorithm1_reference", memory.algorithm1_reference,
         lambda: dict(centers=C2.copy(), preds=np.array([0, 1]), scales=S2.copy(), norm="l2"))
CASES += [
    Case(c, "centers", np.zeros(4), ValueError, label="1-D zeros(4)"),
    Case(c, "centers", np.full((2, 4), NAN), ValueError, label="NaN (2,4)"),
    Case(c, "centers", np.full((2, 4), INF), ValueError, label="inf (2,4)"),
    Case(c, "centers", np.zeros((2, 0)), ValueError, r"\bcenters\b|\bscales\b", label="shape (2,0)"),
    Case(c, "preds", np.array([0.0, 1.5]), ValueError, label="[0, 1.5]"),
    Case(c, "preds", np.array([0.0, NAN]), ValueError, label="[0, nan]"),
    Case(c, "preds", np.array(["a", "b"]), ValueError, label="['a','b']"),
    Case(c, "preds", np.array([True, False]), ValueError, label="[True, False]"),
    Case(c, "preds", np.array([-5, 1]), ValueError, label="[-5, 1]"),
    Case(c, "preds", np.array([0, 1, 1]), ValueError, label="3 preds for 2 inputs"),
    Case(c, "scales", np.full((2, 3), 0.5), ValueError, label="shape (2,3)"),
    Case(c, "scales", np.zeros((2, 4)), ValueError, label="zeros"),
    Case(c, "scales", -S2, ValueError, label="-0.5 everywhere"),
    Case(c, "scales", np.full((2, 4), NAN), ValueError, label="NaN"),
    Case(c, "norm", "l3", ValueError, label="'l3'"),
    Case(c, "policy", "bogus", ValueError, label="'bogus'"),
]

c = Call("memory.certify_stream", memory.certify_stream,
         lambda: dict(centers=C2.copy(), preds=np.array([0, 1]), scales=S2.copy(), norm="l2"))
CASES += [
    Case(c, "centers", np.zeros(4), ValueError, label="1-D zeros(4)"),
    Case(c, "centers", np.full((2, 4), NAN), ValueError, label="NaN (2,4)"),
    Case(c, "centers", np.full((2, 4), INF), ValueError, label="inf (2,4)"),
    Case(c, "centers", np.zeros((2, 0)), ValueError, r"\bcenters\b|\bscales\b", label="shape (2,0)"),
    Case(c, "preds", np.array([0.0, 1.5]), ValueError, label="[0, 1.5]"),
    Case(c, "preds", np.array([0.0, NAN]), ValueError, label="[0, nan]"),
    Case(c, "preds", np.array(["a", "b"]), ValueError, label="['a','b']"),
    Case(c, "preds", np.array([True, False]), ValueError, label="[True, False]"),
    Case(c, "preds", np.array([-5, 1]), ValueError, label="[-5, 1]"),
    Case(c, "preds", np.array([0, 1, 1]), ValueError, label="3 preds for 2 inputs"),
    Case(c, "scales", np.full((2, 3), 0.5), ValueError, label="shape (2,3)"),
    Case(c, "scales", np.zeros((2, 4)), ValueError, label="zeros"),
    Case(c, "scales", -S2, ValueError, label="-0.5 everywhere"),
    Case(c, "scales", np.full((2, 4), NAN), ValueError, label="NaN"),
    Case(c, "norm", "l3", ValueError, label="'l3'"),
    Case(c, "policy", "bogus", ValueError, label="'bogus'"),
    Case(c, "block", 0, ValueError),
    Case(c, "block", -1, ValueError),
    Case(c, "block", 2.5, ValueError),
    Case(c, "block", True, ValueError),
    Case(c, "block", "8", ValueError, label="'8'"),
]

# Algorithm 1 with rotated regions and the provenance of each certificate
PROV = memory.Provenance("model-a", "gaussian", "l2", 0.25)
c = Call("memory.algorithm1_reference (rotations, provenance)", memory.algorithm1_reference,
         lambda: dict(centers=C2.copy(), preds=np.array([0, 1]), scales=np.array([[0.5, 0.4, 0.3, 0.2]] * 2), norm="l2",
                      rotations=[U4.copy(), None], provenance=PROV))
CASES += [
    Case(c, "rotations", [NONORTH, None], ValueError, r"\brotations\b", label="[2*I, None]"),
    Case(c, "rotations", [U4.copy()], ValueError, r"\brotations\b", label="[U] (1 entry for 2 inputs)"),
    Case(c, "norm", "l1", ValueError, r"\brotations\b|\bprovenance\b", label="'l1' with a rotation"),
    Case(c, "provenance", "model-a", TypeError, r"\bprovenance\b", label="'model-a'"),
    Case(c, "provenance", [PROV, memory.Provenance("model-b", "gaussian", "l2", 0.25)], ValueError, r"\bprovenance\b",
         label="[model-a, model-b]"),
    Case(c, "provenance", memory.Provenance("model-a", "uniform", "l1"), ValueError, r"\bprovenance\b",
         label="an l1 provenance"),
    Case(c, "provenance", [PROV], ValueError, r"\bprovenance\b", label="1 entry for 2 inputs"),
]

c = Call("memory.certify_stream (rotations, provenance)", memory.certify_stream,
         lambda: dict(centers=C2.copy(), preds=np.array([0, 1]), scales=np.array([[0.5, 0.4, 0.3, 0.2]] * 2), norm="l2",
                      rotations=[U4.copy(), None], provenance=PROV))
CASES += [
    Case(c, "rotations", [NONORTH, None], ValueError, r"\brotations\b", label="[2*I, None]"),
    Case(c, "rotations", [U4.copy()], ValueError, r"\brotations\b", label="[U] (1 entry for 2 inputs)"),
    Case(c, "norm", "l1", ValueError, r"\brotations\b|\bprovenance\b", label="'l1' with a rotation"),
    Case(c, "provenance", "model-a", TypeError, r"\bprovenance\b", label="'model-a'"),
    Case(c, "provenance", [PROV, memory.Provenance("model-b", "gaussian", "l2", 0.25)], ValueError, r"\bprovenance\b",
         label="[model-a, model-b]"),
    Case(c, "provenance", memory.Provenance("model-a", "uniform", "l1"), ValueError, r"\bprovenance\b",
         label="an l1 provenance"),
    Case(c, "provenance", [PROV], ValueError, r"\bprovenance\b", label="1 entry for 2 inputs"),
]

c = Call("memory.Provenance", memory.Provenance, dict(model="model-a", noise="gaussian", norm="l2", sigma=0.25))
CASES += [
    Case(c, "model", "", ValueError, label="''"),
    Case(c, "model", None, ValueError),
    Case(c, "noise", 3, ValueError),
    Case(c, "norm", "l3", ValueError, label="'l3'"),
    Case(c, "sigma", 0.0, ValueError),
    Case(c, "sigma", -1.0, ValueError),
    Case(c, "sigma", NAN, ValueError),
    Case(c, "sigma", True, ValueError),
    Case(c, "sigma", "0.25", ValueError, label="'0.25'"),
]


def mem_with_provenance(rotation=None, provenance=PROV):
    m = memory.CertificationMemory(4, "l2", provenance=PROV)
    m.certify(np.zeros(4), 0, np.full(4, 0.5))
    return m.certify(np.full(4, 2.0), 1, np.array([0.5, 0.4, 0.3, 0.2]), rotation=rotation, provenance=provenance)


c = Call("CertificationMemory.certify (rotation, provenance)", mem_with_provenance,
         lambda: dict(rotation=U4.copy(), provenance=PROV))
CASES += [
    Case(c, "rotation", NONORTH, ValueError, label="2*I"),
    Case(c, "rotation", np.eye(3), ValueError, label="I_3"),
    Case(c, "rotation", "abc", ValueError, label="'abc'"),
    Case(c, "provenance", memory.Provenance("model-b", "gaussian", "l2", 0.25), ValueError, label="another model"),
    Case(c, "provenance", memory.Provenance("model-a", "gaussian", "l2", 0.5), ValueError, label="another sigma"),
    Case(c, "provenance", "model-a", TypeError, label="'model-a'"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.rotated_memory
# --------------------------------------------------------------------------------------------------
c = Call("rotated_memory.algorithm1_reference_rotated", rotated_memory.algorithm1_reference_rotated,
         lambda: dict(centers=C2.copy(), preds=np.array([0, 1]), scales=np.array([[0.5, 0.4, 0.3, 0.2]] * 2),
                      rotations=[U4.copy(), None]))
CASES += [
    Case(c, "rotations", [U4.copy()], ValueError, r"\brotations\b", label="[U] (1 entry for 2 inputs)"),
    Case(c, "rotations", [NONORTH, None], ValueError, r"\brotations\b", label="[2*I, None]"),
    Case(c, "rotations", [NANROT, None], ValueError, r"\brotations\b", label="[NaN, None]"),
    Case(c, "rotations", "abc", ValueError, r"\brotations\b", label="'abc'"),
    Case(c, "rotations", np.eye(4), ValueError, r"\brotations\b", label="np.eye(4) (one matrix, not a list)"),
    Case(c, "rotations", [np.eye(3), None], ValueError, r"\brotations\b", label="[I_3, None]"),
    Case(c, "rotations", {0: U4}, ValueError, r"\brotations\b", label="dict"),
    Case(c, "rotations", [U4 + 1e-5, None], ValueError, r"\brotations\b", label="[U + 1e-5, None] (deviates by >2e-5)"),
    Case(c, "preds", np.array([-5, 1]), ValueError, label="[-5, 1]"),
    Case(c, "policy", "bogus", ValueError, label="'bogus'"),
    Case(c, "scales", -np.full((2, 4), 0.5), ValueError, label="-0.5 everywhere"),
]

c = Call("rotated_memory.certify_stream_rotated", rotated_memory.certify_stream_rotated,
         lambda: dict(centers=C2.copy(), preds=np.array([0, 1]), scales=np.array([[0.5, 0.4, 0.3, 0.2]] * 2),
                      rotations=[U4.copy(), None]))
CASES += [
    Case(c, "rotations", [U4.copy()], ValueError, r"\brotations\b", label="[U] (1 entry for 2 inputs)"),
    Case(c, "rotations", [NONORTH, None], ValueError, r"\brotations\b", label="[2*I, None]"),
    Case(c, "rotations", [NANROT, None], ValueError, r"\brotations\b", label="[NaN, None]"),
    Case(c, "rotations", "abc", ValueError, r"\brotations\b", label="'abc'"),
    Case(c, "rotations", np.eye(4), ValueError, r"\brotations\b", label="np.eye(4) (one matrix, not a list)"),
    Case(c, "rotations", [np.eye(3), None], ValueError, r"\brotations\b", label="[I_3, None]"),
    Case(c, "rotations", {0: U4}, ValueError, r"\brotations\b", label="dict"),
    Case(c, "rotations", [U4 + 1e-5, None], ValueError, r"\brotations\b", label="[U + 1e-5, None] (deviates by >2e-5)"),
    Case(c, "preds", np.array([-5, 1]), ValueError, label="[-5, 1]"),
    Case(c, "policy", "bogus", ValueError, label="'bogus'"),
    Case(c, "scales", -np.full((2, 4), 0.5), ValueError, label="-0.5 everywhere"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.evaluation.metrics
# --------------------------------------------------------------------------------------------------
R3, C3 = np.array([0.5, 0.0, 1.0]), np.array([True, False, True])
c = Call("metrics.check_correct", metrics.check_correct, lambda: dict(correct=C3.copy()))
CASES += [
    Case(c, "correct", np.array(["True", "False"]), ValueError, label="['True','False']"),
    Case(c, "correct", np.array([NAN]), ValueError, label="[nan]"),
    Case(c, "correct", np.array([2]), ValueError, label="[2]"),
    Case(c, "correct", np.array([0.5]), ValueError, label="[0.5]"),
    Case(c, "correct", None, ValueError),
]

c = Call("metrics.certified_accuracy", metrics.certified_accuracy,
         lambda: dict(radius=R3.copy(), correct=C3.copy(), at=0.5))
CASES += [
    Case(c, "radius", np.array([-0.5, 0, 1]), ValueError, label="[-0.5, 0, 1]"),
    Case(c, "radius", np.array([NAN, 0, 1]), ValueError, label="[nan, 0, 1]"),
    Case(c, "radius", np.array([]), ValueError, label="[]"),
    Case(c, "radius", np.ones((3, 1)), ValueError, label="shape (3,1)"),
    Case(c, "radius", np.array([0.5, 1.0]), ValueError, label="length 2"),
    Case(c, "radius", "abc", ValueError, label="'abc'"),
    Case(c, "correct", np.array(["yes", "no", "yes"]), ValueError, label="['yes','no','yes']"),
    Case(c, "correct", np.array([1, 0]), ValueError, label="length 2"),
    Case(c, "at", NAN, ValueError),
    Case(c, "at", INF, ValueError),
    Case(c, "at", -1.0, ValueError),
    Case(c, "at", "abc", ValueError, label="'abc'"),
]

c = Call("metrics.certified_accuracy_curve", metrics.certified_accuracy_curve,
         lambda: dict(radius=R3.copy(), correct=C3.copy(), points=10))
CASES += [
    Case(c, "points", 0, ValueError),
    Case(c, "points", -1, ValueError),
    Case(c, "points", 2.5, ValueError),
    Case(c, "points", "10", ValueError, label="'10'"),
    Case(c, "max_radius", -1.0, ValueError),
    Case(c, "max_radius", NAN, ValueError),
    Case(c, "max_radius", "abc", ValueError, label="'abc'"),
]

c = Call("metrics.average_certified_radius", metrics.average_certified_radius,
         lambda: dict(radius=R3.copy(), correct=C3.copy()))
CASES += [
    Case(c, "radius", np.array([-0.5, 0, 1]), ValueError, label="[-0.5, 0, 1]"),
    Case(c, "radius", np.array([INF, 0, 1]), ValueError, label="[inf, 0, 1]"),
    Case(c, "correct", np.array([2, 0, 1]), ValueError, label="[2, 0, 1]"),
]

DF = lambda: pd.DataFrame(dict(sigma=[0.25, 0.25, 0.5], radius=R3.copy(), radius_proxy=R3 * 1.2,  # noqa: E731
                               correct=C3.copy()))
c = Call("metrics.summary_table", metrics.summary_table, lambda: dict(results=DF(), radii=[0.0, 0.5], group=["sigma"]))
CASES += [
    Case(c, "results", Fresh(lambda: DF().drop(columns="correct")), ValueError, label="DataFrame without 'correct'"),
    Case(c, "results", Fresh(lambda: DF().to_dict("list")), TypeError, label="a dict of lists"),
    Case(c, "group", ["nope"], ValueError, label="['nope']"),
    Case(c, "group", "sigma", TypeError, label="'sigma' (a str, not a list)"),
    Case(c, "radius_col", "nope", ValueError, label="'nope'"),
    Case(c, "radii", [-1.0], ValueError, label="[-1.0]"),
    Case(c, "radii", [NAN], ValueError, r"\bradii must", label="[nan]"),
    Case(c, "radii", "0.5", ValueError, label="'0.5'"),
]

c = Call("metrics.best_over", metrics.best_over, lambda: dict(table=DF(), over="sigma", group=["correct"]))
CASES += [
    Case(c, "over", "nope", ValueError, label="'nope'"),
    Case(c, "group", ["nope"], ValueError, label="['nope']"),
]

c = Call("metrics.best_curve", metrics.best_curve, lambda: dict(results=DF(), over="sigma", at=[0.0, 0.5]))
CASES += [
    Case(c, "over", "nope", ValueError, label="'nope'"),
    Case(c, "at", [NAN], ValueError, label="[nan]"),
    Case(c, "results", Fresh(lambda: DF().iloc[:0]), ValueError, label="empty DataFrame"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.methods.optimize
# --------------------------------------------------------------------------------------------------
TH2 = lambda: torch.full((2, 1, 1, 1), 0.5)  # noqa: E731
c = Call("optimize.smoothed_probabilities", optimize.smoothed_probabilities,
         lambda: dict(model=tiny_model(), x=X2.clone(), theta=TH2(), noise="gaussian", samples=10))
CASES += [
    Case(c, "theta", Fresh(lambda: -TH2()), ValueError, label="-0.5"),
    Case(c, "theta", Fresh(lambda: TH2() * NAN), ValueError, label="nan"),
    Case(c, "theta", torch.full((3, 1, 1, 1), 0.5), ValueError, label="shape (3,1,1,1) for 2 inputs"),
    Case(c, "samples", 0, ValueError),
    Case(c, "samples", -1, ValueError),
    Case(c, "noise", "bad", ValueError, label="'bad'"),
    Case(c, "x", torch.full((4,), 0.5), ValueError, label="1-D (4,)"),
    Case(c, "rotation", torch.tensor(NONORTH, dtype=torch.float32).expand(2, 4, 4), ValueError, label="2*I (B,4,4)"),
    Case(c, "rotation", torch.eye(3).expand(2, 3, 3), ValueError, label="I_3 (B,3,3)"),
    Case(c, "theta", 0.5, TypeError, label="a float (not a tensor)"),
    Case(c, "x", Fresh(lambda: X2 * NAN), ValueError, label="NaN"),
]

c = Call("optimize.proxy_gap", optimize.proxy_gap,
         lambda: dict(probs=torch.tensor([[0.7, 0.2, 0.1]]), noise="gaussian"))
CASES += [
    Case(c, "noise", "laplace", ValueError, label="'laplace'"),
    Case(c, "probs", torch.tensor([[1.0]]), ValueError, label="one class"),
    Case(c, "probs", torch.tensor([[NAN, 0.2, 0.1]]), ValueError, label="[[nan, .2, .1]]"),
    Case(c, "probs", torch.tensor([[5.0, -3.0, 0.0]]), ValueError, label="[[5, -3, 0]] (not probabilities)"),
    Case(c, "clamp", 0.6, ValueError),
    Case(c, "clamp", NAN, ValueError),
]

c = Call("optimize.optimize_isotropic", optimize.optimize_isotropic,
         lambda: dict(model=tiny_model(), x=X2.clone(), theta0=0.5, noise="gaussian", iterations=2, lr=1e-2,
                      samples=10))
CASES += [
    Case(c, "theta0", 0, ValueError),
    Case(c, "theta0", -1, ValueError),
    Case(c, "theta0", NAN, ValueError),
    Case(c, "theta0", "0.5", TypeError, label="'0.5'"),
    Case(c, "theta0", torch.full((3,), 0.5), ValueError, label="shape (3,) for 2 inputs"),
    Case(c, "theta0", True, TypeError),
    Case(c, "x", Fresh(lambda: X2 * NAN), ValueError, label="NaN"),
    Case(c, "x", torch.ones(2, 1, 2, 2, dtype=torch.int64), ValueError, label="int64 tensor"),
    Case(c, "x", torch.full((4,), 0.5), ValueError, label="1-D (4,)"),
    Case(c, "x", torch.empty(0, 1, 2, 2), ValueError, label="empty batch (0,1,2,2)"),
    Case(c, "x", "abc", TypeError, label="'abc'"),
    Case(c, "noise", "bad", ValueError, label="'bad'"),
    Case(c, "iterations", -1, ValueError),
    Case(c, "iterations", 1.5, ValueError),
    Case(c, "iterations", True, ValueError),
    Case(c, "lr", 0, ValueError),
    Case(c, "lr", NAN, ValueError),
    Case(c, "lr", -1, ValueError),
    Case(c, "lr", True, ValueError),
    Case(c, "samples", 0, ValueError),
    Case(c, "min_theta", 0, ValueError),
    Case(c, "min_theta", NAN, ValueError),
    Case(c, "min_theta", -1, ValueError),
    Case(c, "precision", "fp8", ValueError, label="'fp8'"),
]

c = Call("optimize.optimize_ancer", optimize.optimize_ancer,
         lambda: dict(model=tiny_model(), x=X2.clone(), theta_iso=torch.tensor([0.5, 0.5]), noise="gaussian",
                      iterations=2, lr=0.04, samples=10, kappa=2.0))
CASES += [
    Case(c, "kappa", -1.0, ValueError),
    Case(c, "kappa", NAN, ValueError),
    Case(c, "kappa", INF, ValueError),
    Case(c, "kappa", "2", ValueError, label="'2'"),
    Case(c, "theta_iso", torch.zeros(2), ValueError, label="zeros(2)"),
    Case(c, "theta_iso", torch.full((2,), -0.5), ValueError, label="-0.5 x2"),
    Case(c, "theta_iso", torch.full((2,), NAN), ValueError, label="nan x2"),
    Case(c, "theta_iso", torch.full((3,), 0.5), ValueError, label="shape (3,)"),
    Case(c, "theta_iso", "a", TypeError, label="'a'"),
    Case(c, "rotation", torch.tensor(NONORTH, dtype=torch.float32).expand(2, 4, 4), ValueError, label="2*I (B,4,4)"),
    Case(c, "rotation", torch.eye(3).expand(2, 3, 3), ValueError, label="I_3 (B,3,3)"),
    Case(c, "noise", "bad", ValueError, label="'bad'"),
    Case(c, "lr", 0, ValueError),
    Case(c, "samples", 0, ValueError),
    Case(c, "iterations", -1, ValueError),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.runs.experiment
# --------------------------------------------------------------------------------------------------
TINY = experiment.OptimSettings(chunk=8).with_budget(1, 5)
c = Call("registry.IsotropicSettings", registry.IsotropicSettings, dict())
CASES += [
    Case(c, "iterations", -1, ValueError),
    Case(c, "lr", -1.0, ValueError),
    Case(c, "samples", 0, ValueError),
]
c = Call("registry.AncerSettings", registry.AncerSettings, dict())
CASES += [
    Case(c, "iterations", -1, ValueError),
    Case(c, "lr", NAN, ValueError),
    Case(c, "samples", 0, ValueError),
    Case(c, "kappa", -1.0, ValueError),
]
c = Call("experiment.OptimSettings", experiment.OptimSettings, dict())
CASES += [
    Case(c, "methods", {"bogus": registry.IsotropicSettings()}, ValueError, r"\bmethods\b", label="{'bogus': ...}"),
    Case(c, "methods", {"isotropic": registry.AncerSettings()}, TypeError, "IsotropicSettings",
         label="{'isotropic': AncerSettings()}"),
    Case(c, "chunk", 0, ValueError),
]

c = Call("experiment.optimize_thetas", experiment.optimize_thetas,
         lambda: dict(model=tiny_model(), x=X2.clone(), noise="gaussian", theta0=0.5, method="isotropic",
                      settings=TINY))
CASES += [
    Case(c, "method", "bogus", ValueError, label="'bogus'"),
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "theta0", -1.0, ValueError),
    Case(c, "theta0", "abc", TypeError, label="'abc'"),
    Case(c, "settings", Fresh(lambda: dataclasses.replace(TINY, chunk=0)), ValueError, r"\bchunk\b",
         label="OptimSettings(chunk=0)"),
    Case(c, "settings", Fresh(lambda: dataclasses.replace(TINY, chunk=-1)), ValueError, r"\bchunk\b",
         label="OptimSettings(chunk=-1)"),
    Case(c, "settings", Fresh(lambda: TINY.changed("isotropic", iterations=-1)), ValueError, r"\biterations\b",
         label="isotropic iterations=-1"),
    Case(c, "settings", None, TypeError),
    Case(c, "seed", 1.5, ValueError),
    Case(c, "isotropic", np.full((3, 1, 2, 2), 0.5, np.float32), ValueError, label="shape (3,1,2,2)"),
]

c = Call("experiment.optimize_thetas (method='fixed')", experiment.optimize_thetas,
         lambda: dict(model=tiny_model(), x=X2.clone(), noise="gaussian", theta0=0.5, method="fixed", settings=TINY))
CASES += [
    Case(c, "theta0", -1.0, ValueError),
    Case(c, "theta0", NAN, ValueError),
    Case(c, "theta0", 0.0, ValueError),
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
]

c = Call("experiment.optimize_thetas (method='ancer', isotropic=...)", experiment.optimize_thetas,
         lambda: dict(model=tiny_model(), x=X2.clone(), noise="gaussian", theta0=0.5, method="ancer", settings=TINY,
                      isotropic=np.full((2, 1, 2, 2), 0.5, np.float32)))
CASES += [
    Case(c, "isotropic", np.full((2, 1, 2, 2), NAN, np.float32), ValueError, r"\bisotropic\b", label="NaN (2,1,2,2)"),
    Case(c, "isotropic", np.full((2, 1, 2, 2), -0.5, np.float32), ValueError, r"\bisotropic\b", label="-0.5 (2,1,2,2)"),
    Case(c, "isotropic", Fresh(lambda: torch.full((2, 1, 2, 2), 0.5)), TypeError, r"\bisotropic\b",
         label="a torch tensor"),
]

def run_base(method="isotropic"):
    return dict(model=tiny_model(), x=X2.clone(), y=torch.tensor([0, 0]), indices=np.array([0, 1]), noise="gaussian",
                theta0=0.5, method=method, settings=TINY, folder=Tmp("run", unique=True), n0=10, n=100, alpha=0.01,
                num_classes=3)


c = Call("experiment.run_method", experiment.run_method, run_base)
CASES += [
    Case(c, "indices", np.array([0, 0]), ValueError, label="[0, 0]"),
    Case(c, "indices", np.array([0.2, 0.7]), ValueError, label="[0.2, 0.7]"),
    Case(c, "indices", np.array([0, 1, 2]), ValueError, label="3 indices for 2 inputs"),
    Case(c, "y", torch.tensor([0]), ValueError, label="1 label for 2 inputs"),
    Case(c, "y", torch.tensor([0, 99]), ValueError, label="[0, 99] (num_classes=3)"),
    Case(c, "y", torch.tensor([0.5, 1.7]), ValueError, label="[0.5, 1.7]"),
    Case(c, "method", "bogus", ValueError, label="'bogus'"),
    Case(c, "policy", "bogus", ValueError, label="'bogus'"),
    Case(c, "num_classes", 5, ValueError, label="5 (model has 3)"),
    Case(c, "num_classes", 1, ValueError),
    Case(c, "n0", 0, ValueError),
    Case(c, "alpha", 2.0, ValueError),
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "theta0", -1.0, ValueError, r"\btheta0\b|\bsigma\b"),
    Case(c, "batch_size", 0, ValueError),
    Case(c, "settings", None, TypeError),
    Case(c, "folder", None, TypeError),
    Case(c, "folder", Tmp("a_file.txt", text="x"), FileExistsError, r"a_file\.txt|\bfolder\b",
         label="an existing regular file"),
    Case(c, "progress", 5, TypeError, label="5 (not callable)"),
    Case(c, "isotropic", np.full((3, 1, 2, 2), 0.5, np.float32), ValueError, label="shape (3,1,2,2)"),
    Case(c, "precision", "fp8", ValueError, label="'fp8'"),
    Case(c, "draws", "gpu", ValueError, label="'gpu'"),
]

c = Call("experiment.run_method (method='fixed')", experiment.run_method, lambda: run_base("fixed"))
CASES += [
    Case(c, "theta0", -1.0, ValueError, r"\btheta0\b"),
    Case(c, "policy", "bogus", ValueError, label="'bogus'"),
]

c = Call("experiment.certify_all", experiment.certify_all,
         lambda: dict(model=tiny_model(), x=X2.clone(), y=torch.tensor([0, 0]),
                      thetas=np.full((2, 1, 2, 2), 0.5, np.float32), noise="gaussian", n0=10, n=100, alpha=0.01,
                      num_classes=3))
CASES += [
    Case(c, "thetas", np.full((1, 1, 2, 2), 0.5, np.float32), ValueError, r"\bthetas\b|\bsigma\b",
         label="1 theta for 2 inputs"),
    Case(c, "thetas", np.full((3, 1, 2, 2), 0.5, np.float32), ValueError, r"\bthetas\b|\bsigma\b",
         label="3 thetas for 2 inputs"),
    Case(c, "thetas", np.full((2, 1, 2, 2), -0.5, np.float32), ValueError, r"\bthetas\b|\bsigma\b", label="-0.5"),
    Case(c, "y", torch.tensor([0]), ValueError, label="1 label for 2 inputs"),
    Case(c, "y", torch.tensor([0, 0, 1]), ValueError, label="3 labels for 2 inputs"),
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "num_classes", 5, ValueError, label="5 (model has 3)"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.runs.selection
# --------------------------------------------------------------------------------------------------
SEL = lambda: dict(model=tiny_model(), x=X2.clone(), y=torch.tensor([0, 0]), noise="gaussian", theta0=0.5,  # noqa: E731
                   grids={"isotropic": [1.0], "ancer": [1.0]}, base=TINY, n0=5, n=20, alpha=0.01, num_classes=3,
                   widen=0)
c = Call("selection.select_settings", selection.select_settings, SEL)
CASES += [
    Case(c, "grids", {"isotropic": [], "ancer": [1.0]}, ValueError, r"grids\['isotropic'\]", label="isotropic: []"),
    Case(c, "grids", {"isotropic": [-1.0], "ancer": [1.0]}, ValueError, r"grids\['isotropic'\]",
         label="isotropic: [-1.0]"),
    Case(c, "grids", {"isotropic": [1.0], "ancer": [NAN]}, ValueError, r"grids\['ancer'\]", label="ancer: [nan]"),
    Case(c, "grids", "abc", TypeError, label="'abc'"),
    Case(c, "grids", {"ancer": [1.0]}, ValueError, r"start method 'isotropic'", label="ancer without its start"),
    Case(c, "grids", {"isotropic": [1.0], "rancer": [1.0]}, ValueError, r"\bgrids' method\b",
         label="rancer (rotated: select_rancer)"),
    Case(c, "widen", -1, ValueError),
    Case(c, "widen", 1.5, ValueError),
    Case(c, "theta0", 0.0, ValueError, r"\btheta0\b"),
    Case(c, "base", None, TypeError),
]

c = Call("selection.widening_search", selection.widening_search,
         lambda: dict(grid=[1.0, 2.0], evaluate=lambda v: {"s": -abs(v - 1.0)}, score=lambda r: r["s"], widen=1))
CASES += [
    Case(c, "grid", [0.0, 1.0], ValueError, label="[0.0, 1.0]"),
    Case(c, "grid", [], ValueError, label="[]"),
    Case(c, "widen", -1, ValueError),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.methods.rancer
# --------------------------------------------------------------------------------------------------
c = Call("rancer.RancerSettings", rancer.RancerSettings, dict())
CASES += [
    Case(c, "iterations", -1, ValueError),
    Case(c, "iterations", 1.5, ValueError),
    Case(c, "lr", 0.0, ValueError),
    Case(c, "lr", NAN, ValueError),
    Case(c, "samples", 0, ValueError),
    Case(c, "gamma1", 1.0, ValueError),
    Case(c, "gamma1", -0.1, ValueError),
    Case(c, "gamma1", NAN, ValueError),
    Case(c, "gamma2", -1.0, ValueError),
    Case(c, "gamma2", INF, ValueError),
    Case(c, "gamma2", NAN, ValueError),
    Case(c, "init", "bogus", ValueError),
    Case(c, "init", None, ValueError),
    Case(c, "gamma1", "0.5", ValueError, label="'0.5'"),
    Case(c, "gamma2", "2", ValueError, label="'2'"),
]

URB = lambda: torch.from_numpy(np.stack([U4, orth(4, 1)])).float()  # noqa: E731
RS = rancer.RancerSettings(iterations=2, samples=10)
c = Call("rancer.optimize_rancer", rancer.optimize_rancer,
         lambda: dict(model=softplus_model(), x=X2.clone(), rotation=URB(), sigma0=torch.tensor([0.5, 0.5]),
                      settings=RS))
CASES += [
    Case(c, "rotation", torch.tensor(NONORTH, dtype=torch.float32).expand(2, 4, 4), ValueError, label="2*I (2,4,4)"),
    Case(c, "rotation", torch.eye(4).expand(3, 4, 4), ValueError, label="shape (3,4,4)"),
    Case(c, "rotation", Fresh(lambda: np.stack([U4, U4])), TypeError, label="numpy array (2,4,4)"),
    Case(c, "rotation", torch.full((2, 4, 4), NAN), ValueError, label="NaN (2,4,4)"),
    Case(c, "sigma0", torch.zeros(2), ValueError, label="zeros(2)"),
    Case(c, "sigma0", torch.full((2,), NAN), ValueError, label="nan x2"),
    Case(c, "sigma0", torch.full((3,), 0.5), ValueError, label="shape (3,)"),
    Case(c, "sigma0", "a", ValueError, label="'a'"),
    Case(c, "x", Fresh(lambda: X2 * NAN), ValueError, label="NaN"),
    Case(c, "settings", None, TypeError),
]

c = Call("rancer.optimize_rancer (init='eigen_fixed')", rancer.optimize_rancer,
         lambda: dict(model=softplus_model(), x=X2.clone(), rotation=URB(), sigma0=torch.tensor([0.5, 0.5]),
                      settings=rancer.RancerSettings(init="eigen_fixed"), eigenvalues=torch.ones(2, 4)))
CASES += [
    Case(c, "eigenvalues", torch.full((2, 4), NAN), ValueError, label="NaN (2,4)"),
    Case(c, "eigenvalues", torch.ones(2, 3), ValueError, label="shape (2,3)"),
    Case(c, "eigenvalues", None, ValueError),
]

c = Call("rancer.hessian_rotation", rancer.hessian_rotation, lambda: dict(model=softplus_model(), x=X.clone()))
CASES += [
    Case(c, "x", torch.full((1, 2, 2), NAN), ValueError, label="NaN"),
    Case(c, "model", None, TypeError),
]

c = Call("rancer.rancer_parameters", rancer.rancer_parameters,
         lambda: dict(model=softplus_model(), x=X2.clone(), sigma0=np.array([0.5, 0.5]), settings=RS))
CASES += [
    Case(c, "chunk", 0, ValueError),
    Case(c, "chunk", -1, ValueError),
    Case(c, "sigma0", np.array([0.5]), ValueError, label="1 value for 2 inputs"),
    Case(c, "sigma0", np.array([-0.5, 0.5]), ValueError, label="[-0.5, 0.5]"),
]

SMOOTH_R = lambda: certify.Smooth(softplus_model(), 3, (1, 2, 2))  # noqa: E731
c = Call("rancer.certify_rotated", rancer.certify_rotated,
         lambda: dict(smooth=SMOOTH_R(), x=X.clone(), scales=np.full(4, 0.5), rotation=U4.copy(), key=0, n0=10, n=100,
                      alpha=0.01))
CASES += [
    Case(c, "scales", np.full(3, 0.5), ValueError, r"\bscales\b|\bsigma\b", label="3 scales for 4 pixels"),
    Case(c, "scales", np.full(4, -0.5), ValueError, r"\bscales\b|\bsigma\b", label="-0.5 x4"),
    Case(c, "rotation", NONORTH, ValueError, label="2*I"),
    Case(c, "rotation", np.eye(3), ValueError, label="I_3"),
    Case(c, "key", 1.5, ValueError),
    Case(c, "key", "a", ValueError, label="'a'"),
    Case(c, "n0", 0, ValueError),
    Case(c, "smooth", None, TypeError),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.methods.hessian
# --------------------------------------------------------------------------------------------------
c = Call("hessian.input_hessian", hessian.input_hessian, lambda: dict(model=softplus_model(), x=X.clone(), label=0))
CASES += [
    Case(c, "label", 5, ValueError, label="5 (3 classes)"),
    Case(c, "label", -1, ValueError),
    Case(c, "label", 1.5, ValueError),
    Case(c, "label", "a", ValueError, label="'a'"),
    Case(c, "x", torch.full((1, 2, 2), NAN), ValueError, label="NaN"),
]

c = Call("hessian.numerical_rank", hessian.numerical_rank, lambda: dict(h=np.diag([3.0, 2.0, 0.0])))
CASES += [
    Case(c, "h", np.array([[1.0, 5.0], [0.0, 1.0]]), ValueError, label="non-symmetric [[1,5],[0,1]]"),
    Case(c, "h", np.full((2, 2), NAN), ValueError, label="NaN 2x2"),
    Case(c, "h", np.ones(3), ValueError, label="1-D"),
    Case(c, "h", np.zeros((0, 0)), ValueError, label="empty 0x0"),
    Case(c, "rtol", -1.0, ValueError),
]

c = Call("hessian.eigen_directions", hessian.eigen_directions, lambda: dict(h=np.diag([3.0, 2.0, 1.0])))
CASES += [
    Case(c, "h", np.array([[1.0, 5.0], [0.0, 1.0]]), ValueError, label="non-symmetric"),
    Case(c, "h", np.ones(3), ValueError, label="1-D"),
]

c = Call("hessian.landscape", hessian.landscape,
         lambda: dict(model=softplus_model(), x=X.clone(), label=0, u=np.eye(4)[0], v=np.eye(4)[1], half_width=1.0,
                      resolution=5))
CASES += [
    Case(c, "resolution", 0, ValueError),
    Case(c, "resolution", -1, ValueError),
    Case(c, "resolution", 2.5, ValueError),
    Case(c, "half_width", -1.0, ValueError),
    Case(c, "half_width", NAN, ValueError),
    Case(c, "label", 7, ValueError, label="7 (3 classes)"),
    Case(c, "u", np.ones(3), ValueError, label="3 entries for 4 pixels"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.ucan_radii
# --------------------------------------------------------------------------------------------------
c = Call("ucan_radii.gaussian_l2_radius", ucan_radii.gaussian_l2_radius, dict(p_a=0.9, lam=1.0))
CASES += [
    Case(c, "p_a", 0.5, ValueError),
    Case(c, "p_a", 0.3, ValueError),
    Case(c, "p_a", 1.5, ValueError),
    Case(c, "p_a", NAN, ValueError),
    Case(c, "p_a", True, ValueError),
    Case(c, "p_a", np.array([]), ValueError, label="[]"),
    Case(c, "p_a", None, ValueError),
    Case(c, "p_a", "0.9", ValueError, label="'0.9'"),
    Case(c, "p_a", np.array([0.9 + 0.5j]), ValueError, label="array([0.9+0.5j])"),
    Case(c, "lam", 0, ValueError),
    Case(c, "lam", -1, ValueError),
    Case(c, "lam", NAN, ValueError),
    Case(c, "lam", INF, ValueError),
    Case(c, "lam", "1", ValueError, label="'1'"),
    Case(c, "lam", True, ValueError),
]

c = Call("ucan_radii.gaussian_linf_radius", ucan_radii.gaussian_linf_radius, dict(p_a=0.9, lam=1.0, d=4))
CASES += [
    Case(c, "d", 0, ValueError),
    Case(c, "d", -1, ValueError),
    Case(c, "d", 1.5, ValueError),
    Case(c, "d", True, ValueError),
    Case(c, "d", None, ValueError),
]

c = Call("ucan_radii.laplace_l1_radius", ucan_radii.laplace_l1_radius, dict(p_a=0.9, lam=1.0))
CASES += [
    Case(c, "lam", 0, ValueError),
    Case(c, "p_a", 1.2, ValueError),
]

c = Call("ucan_radii.exp_linf_l1_radius", ucan_radii.exp_linf_l1_radius, dict(p_a=0.9, lam=1.0, d=4))
CASES += [
    Case(c, "d", 0, ValueError),
]

c = Call("ucan_radii.exp_linf_linf_radius", ucan_radii.exp_linf_linf_radius, dict(p_a=0.9, lam=1.0))
CASES += [
    Case(c, "lam", -1.0, ValueError),
]

c = Call("ucan_radii.uniform_l1_radius", ucan_radii.uniform_l1_radius, dict(p_a=0.9, lam=1.0))
CASES += [
    Case(c, "p_a", 0.5, ValueError),
]

c = Call("ucan_radii.uniform_linf_radius", ucan_radii.uniform_linf_radius, dict(p_a=0.9, lam=1.0, d=4))
CASES += [
    Case(c, "d", 0, ValueError),
    Case(c, "lam", NAN, ValueError),
]

c = Call("ucan_radii.power_law_linf_l1_radius", ucan_radii.power_law_linf_l1_radius,
         dict(p_a=0.9, lam=1.0, d=4, a=20.0))
CASES += [
    Case(c, "a", 4.0, ValueError, label="4.0 (= d)"),
    Case(c, "a", NAN, ValueError),
    Case(c, "a", "x", ValueError, label="'x'"),
    Case(c, "a", None, ValueError),
    Case(c, "a", INF, ValueError),
]

c = Call("ucan_radii.power_law_linf_l1_radius_printed", ucan_radii.power_law_linf_l1_radius_printed,
         dict(p_a=0.9, lam=1.0, alpha=8.0))
CASES += [
    Case(c, "alpha", 1.0, ValueError),
    Case(c, "alpha", NAN, ValueError),
    Case(c, "alpha", "x", ValueError, label="'x'"),
]

c = Call("ucan_radii.table1_row", ucan_radii.table1_row, dict(key="gaussian/l2"))
CASES += [
    Case(c, "key", "gaussian/l3", ValueError, r"\brow\b", label="'gaussian/l3'"),
    Case(c, "key", None, ValueError, r"\brow\b"),
]

c = Call("ucan_radii.isotropic_radius", ucan_radii.isotropic_radius, dict(row="gaussian/linf", p_a=0.9, lam=1.0, d=4))
CASES += [
    Case(c, "row", "bogus", ValueError, label="'bogus'"),
    Case(c, "d", None, ValueError),
    Case(c, "d", 0, ValueError),
    Case(c, "p_a", 2.0, ValueError),
]

c = Call("ucan_radii.unit_variance_lambda", ucan_radii.unit_variance_lambda, dict(noise="power_law_linf", d=4, a=20.0))
CASES += [
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "d", None, ValueError),
    Case(c, "a", None, ValueError),
    Case(c, "a", 6.0, ValueError, label="6.0 (<= d + 2)"),
    Case(c, "d", 1.5, ValueError),
]

c = Call("ucan_radii.lambda_for_std", ucan_radii.lambda_for_std, dict(noise="gaussian", std=0.5))
CASES += [
    Case(c, "std", 0, ValueError),
    Case(c, "std", -1, ValueError),
    Case(c, "std", NAN, ValueError),
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
]

c = Call("ucan_radii.anisotropic_scaled_norm", ucan_radii.anisotropic_scaled_norm,
         lambda: dict(delta=np.full(4, 0.1), sigma=np.full(4, 0.5), p=2))
CASES += [
    Case(c, "p", 0.5, ValueError),
    Case(c, "p", "l3", ValueError, label="'l3'"),
    Case(c, "p", NAN, ValueError),
    Case(c, "p", True, ValueError),
    Case(c, "p", None, ValueError),
    Case(c, "p", -INF, ValueError),
    Case(c, "sigma", np.zeros(4), ValueError, label="zeros(4)"),
    Case(c, "sigma", -np.full(4, 0.5), ValueError, label="-0.5 x4"),
    Case(c, "sigma", np.array([]), ValueError, label="[]"),
    Case(c, "delta", np.full(4, NAN), ValueError, label="NaN x4"),
    Case(c, "delta", np.full(3, 0.1), ValueError, label="shape (3,)"),
    Case(c, "delta", "abc", ValueError, label="'abc'"),
]

c = Call("ucan_radii.in_anisotropic_region", ucan_radii.in_anisotropic_region,
         lambda: dict(delta=np.full(4, 0.1), sigma=np.full(4, 0.5), radius=1.0, p=2))
CASES += [
    Case(c, "radius", -1.0, ValueError),
    Case(c, "radius", NAN, ValueError),
    Case(c, "radius", np.array([1.0, 2.0]), ValueError, label="[1, 2]"),
    Case(c, "radius", "abc", ValueError, label="'abc'"),
]

c = Call("ucan_radii.anisotropic_lp_radius", ucan_radii.anisotropic_lp_radius,
         lambda: dict(sigma=np.full(4, 0.5), radius=1.0))
CASES += [
    Case(c, "radius", -1.0, ValueError),
    Case(c, "sigma", -np.full(4, 0.5), ValueError, label="-0.5 x4"),
]

c = Call("ucan_radii.alternative_lebesgue_measure", ucan_radii.alternative_lebesgue_measure,
         lambda: dict(sigma=np.full(4, 0.5), radius=1.0))
CASES += [
    Case(c, "radius", NAN, ValueError),
    Case(c, "sigma", np.array([]), ValueError, label="[]"),
]

c = Call("ucan_radii.alternative_lebesgue_measure_printed", ucan_radii.alternative_lebesgue_measure_printed,
         lambda: dict(sigma=np.full(4, 0.5), radius=1.0, p=2))
CASES += [
    Case(c, "p", 0, ValueError),
]

c = Call("ucan_radii.laplace_l1_alm_printed", ucan_radii.laplace_l1_alm_printed,
         lambda: dict(sigma=np.full(4, 0.5), p_a=0.9, lam=1.0))
CASES += [
    Case(c, "p_a", 0.4, ValueError),
]

c = Call("ucan_radii.anisotropic_certificate", ucan_radii.anisotropic_certificate,
         lambda: dict(row="power_law_linf/l1", p_a=0.9, sigma=np.full(4, 0.5), lam=1.0, a=20.0))
CASES += [
    Case(c, "row", "bogus", ValueError, label="'bogus'"),
    Case(c, "p_a", 2.0, ValueError),
    Case(c, "lam", 0, ValueError),
    Case(c, "a", 3.0, ValueError, label="3.0 (< d = 4)"),
    Case(c, "sigma", np.full(4, NAN), ValueError, label="NaN x4"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.families
# --------------------------------------------------------------------------------------------------
c = Call("families.power_law_exponent", families.power_law_exponent, dict(d=4, a=None))
CASES += [
    Case(c, "d", 0, ValueError),
    Case(c, "d", -1, ValueError),
    Case(c, "d", 2.5, ValueError),
    Case(c, "d", True, ValueError),
    Case(c, "a", 6.0, ValueError, label="6.0 (tail 2)"),
    Case(c, "a", 8.5, ValueError, label="8.5 (non-integer tail)"),
    Case(c, "a", NAN, ValueError),
    Case(c, "a", INF, ValueError),
    Case(c, "a", "x", TypeError, label="'x'"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.ucan_noise
# --------------------------------------------------------------------------------------------------
c = Call("ucan_noise.sample_standard", ucan_noise.sample_standard, dict(noise="laplace", num=5, shape=(1, 2, 2)))
CASES += [
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "num", 0, ValueError),
    Case(c, "shape", (-1, 2), ValueError, label="(-1, 2)"),
    Case(c, "dtype", torch.int64, ValueError),
]

c = Call("ucan_noise.sample_standard (gaussian)", ucan_noise.sample_standard,
         dict(noise="gaussian", num=5, shape=(1, 2, 2)))
CASES += [
    Case(c, "dtype", torch.int64, ValueError),
]

c = Call("ucan_noise.sample_standard (power_law_linf)", ucan_noise.sample_standard,
         dict(noise="power_law_linf", num=5, shape=(1, 2, 2), a=20.0))
CASES += [
    Case(c, "a", 5.0, ValueError, label="5.0 (< d)"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.methods.ucan
# --------------------------------------------------------------------------------------------------
c = Call("ucan.pattern_sigma", ucan.pattern_sigma, dict(shape=(1, 4, 4), p="l2"))
CASES += [
    Case(c, "p", "l3", ValueError, label="'l3'"),
    Case(c, "kappa", 0, ValueError),
    Case(c, "kappa", -1, ValueError),
    Case(c, "kappa", NAN, ValueError),
    Case(c, "iota", 0, ValueError),
    Case(c, "shape", (4, 4), ValueError, label="(4, 4)"),
    Case(c, "shape", (0, 4, 4), ValueError, label="(0, 4, 4)"),
    Case(c, "shape", (1.5, 4, 4), ValueError, label="(1.5, 4, 4)"),
    Case(c, "shape", ("a", 4, 4), ValueError, label="('a', 4, 4)"),
    Case(c, "shape", (True, 4, 4), ValueError, label="(True, 4, 4)"),
    Case(c, "shape", 5, ValueError, label="5 (an int)"),
]

c = Call("ucan.FixedNPG", ucan.FixedNPG, lambda: dict(sigma=np.ones((1, 2, 2))))
CASES += [
    Case(c, "sigma", np.zeros((1, 2, 2)), ValueError, label="zeros"),
    Case(c, "sigma", -np.ones((1, 2, 2)), ValueError, label="-1"),
    Case(c, "sigma", np.full((1, 2, 2), NAN), ValueError, label="NaN"),
    Case(c, "sigma", np.array([]), ValueError, label="[]"),
    Case(c, "sigma", "abc", ValueError, label="'abc'"),
]

c = Call("ucan.UniversalNPG", lambda **kw: ucan.UniversalNPG(**kw).maps(),
         dict(input_shape=(1, 2, 2), gamma=5.0, widths=(4, 4, 4, 4)))
CASES += [
    Case(c, "gamma", 0, ValueError),
    Case(c, "gamma", -1, ValueError),
    Case(c, "gamma", NAN, ValueError),
    Case(c, "widths", (4, 4, 4), ValueError, label="(4, 4, 4)"),
    Case(c, "widths", (0, 4, 4, 4), ValueError, label="(0, 4, 4, 4)"),
    Case(c, "widths", (-1, 4, 4, 4), ValueError, label="(-1, 4, 4, 4)"),
    Case(c, "input_shape", (0, 2, 2), ValueError, label="(0, 2, 2)"),
    Case(c, "input_shape", (-1, 2, 2), ValueError, label="(-1, 2, 2)"),
    Case(c, "input_shape", None, ValueError),
]

c = Call("ucan.InputDependentNPG", lambda **kw: ucan.InputDependentNPG(**kw)(torch.full((1, 1, 2, 2), 0.5)),
         dict(input_shape=(1, 2, 2), gamma=1.0, growth=2))
CASES += [
    Case(c, "input_shape", (2, 2), ValueError, label="(2, 2)"),
    Case(c, "input_shape", (0, 2, 2), ValueError, label="(0, 2, 2)"),
    Case(c, "growth", 0, ValueError),
    Case(c, "growth", 1.5, ValueError),
    Case(c, "gamma", 0, ValueError),
    Case(c, "gamma", INF, ValueError),
]

c = Call("ucan.build_npg", ucan.build_npg, dict(kind="universal", input_shape=(1, 2, 2)))
CASES += [
    Case(c, "kind", "bogus", ValueError, label="'bogus'"),
    Case(c, "gamma", 0, ValueError),
    Case(c, "gamma", -1.0, ValueError),
]

c = Call("ucan.build_npg (kind='pattern')", ucan.build_npg, dict(kind="pattern", input_shape=(1, 2, 2)))
CASES += [
    Case(c, "pattern", "l3", ValueError, label="'l3'"),
    Case(c, "kappa", 0, ValueError),
]

c = Call("ucan.build_npg (kind='isotropic')", ucan.build_npg, dict(kind="isotropic", input_shape=(1, 2, 2)))
CASES += [
    Case(c, "input_shape", (-1, 2, 2), ValueError, label="(-1, 2, 2)"),
    Case(c, "input_shape", (0, 2, 2), ValueError, label="(0, 2, 2)"),
]

c = Call("ucan.train_ucan", ucan.train_ucan,
         lambda: dict(model=tiny_model(), npg=ucan.UniversalNPG((1, 2, 2), widths=(4, 4, 4, 4)), x=X8.clone(),
                      y=Y8.clone(), epochs=1, batch_size=4))
CASES += [
    Case(c, "lam", 0, ValueError),
    Case(c, "lam", NAN, ValueError),
    Case(c, "epochs", 0, ValueError),
    Case(c, "batch_size", 0, ValueError),
    Case(c, "lr", 0, ValueError),
    Case(c, "npg_lr", 0, ValueError),
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "variance_weight", NAN, ValueError),
    Case(c, "variance_weight", "1", ValueError, label="'1'"),
    Case(c, "y", Y8[:5].clone(), ValueError, label="5 labels for 8 inputs"),
    Case(c, "y", torch.tensor([0, 1, 2, 0, 1, 2, 0, 9]), ValueError, label="a label 9 (3 classes)"),
    Case(c, "y", Y8.float(), ValueError, label="float labels"),
    Case(c, "x", Fresh(lambda: X8 * NAN), ValueError, label="NaN"),
    Case(c, "npg", None, TypeError),
    Case(c, "precision", "fp8", ValueError, label="'fp8'"),
    Case(c, "state_dir", 5, TypeError),
]

c = Call("ucan_recipes.UcanRecipe", ucan_recipes.UcanRecipe,
         dict(name="r", kind="universal", epochs=1, batch_size=4, lr=0.01, npg_lr=0.001, variance_weight=1.0,
              source="a test", gamma=1.0))
CASES += [
    Case(c, "kind", "isotropic", ValueError, label="'isotropic'"),
    Case(c, "epochs", 0, ValueError),
    Case(c, "batch_size", 0, ValueError),
    Case(c, "lr", 0, ValueError),
    Case(c, "npg_lr", NAN, ValueError),
    Case(c, "variance_weight", -1.0, ValueError),
    Case(c, "gamma", None, ValueError, label="None for a universal NPG"),
    Case(c, "gamma", 0, ValueError),
    Case(c, "kappa", 0, ValueError),
    Case(c, "pattern", "l3", ValueError, label="'l3'"),
    Case(c, "growth", 0, ValueError),
    Case(c, "noise", "uniform", ValueError, label="'uniform'"),
    Case(c, "source", " ", ValueError, label="blank"),
]

c = Call("ucan_recipes.load_npg", ucan_recipes.load_npg, dict(path=Tmp("ucan/ok.pt")))
CASES += [
    Case(c, "path", Tmp("ucan/missing.pt"), FileNotFoundError, r"missing\.pt", label="missing file"),
    Case(c, "path", Tmp("logs/text.npy"), ValueError, r"text\.npy", label="not a torch file"),
    Case(c, "path", Tmp("ucan/classifier.pt"), ValueError, r"classifier\.pt.*no UCAN noise generator",
         label="a classifier's checkpoint"),
    Case(c, "path", Tmp("ucan/bad_kind.pt"), ValueError, r"bad_kind\.pt.*kind", label="an unknown NPG kind"),
    Case(c, "device", "cuda:99", ValueError, label="'cuda:99'"),
]

c = Call("ucan.sample_counts", ucan.sample_counts,
         lambda: dict(model=tiny_model(), x=X.clone(), sigma=torch.ones(1, 2, 2), mu=torch.zeros(1, 2, 2),
                      noise="gaussian", lam=0.5, num=50, num_classes=3, generator=gen()))
CASES += [
    Case(c, "lam", -1.0, ValueError),
    Case(c, "lam", 0.0, ValueError),
    Case(c, "lam", NAN, ValueError),
    Case(c, "num", 0, ValueError),
    Case(c, "num_classes", 5, ValueError, label="5 (model has 3)"),
    Case(c, "batch_size", 0, ValueError),
    Case(c, "batch_size", -1, ValueError, r"\bbatch_size\b"),
    Case(c, "sigma", -torch.ones(1, 2, 2), ValueError, label="-1 everywhere"),
    Case(c, "sigma", torch.ones(3), ValueError, label="shape (3,)"),
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "generator", "g", TypeError, label="'g'"),
    # anisotropic_noise's and soft_smoothed_probabilities' cases: they take the maps as checked here
    Case(c, "sigma", torch.full((1, 2, 2), NAN), ValueError, label="NaN"),
    Case(c, "mu", torch.zeros(3), ValueError, label="shape (3,)"),
    Case(c, "mu", torch.full((1, 2, 2), NAN), ValueError, label="NaN"),
]

c = Call("ucan.npg_maps", ucan.npg_maps, lambda: dict(npg=ucan.FixedNPG(np.ones((1, 2, 2))), x=X.clone()))
CASES += [
    Case(c, "x", torch.full((2, 2), 0.5), ValueError, label="shape (2,2)"),
    Case(c, "npg", None, TypeError),
]

c = Call("ucan.certify", ucan.certify,
         lambda: dict(model=tiny_model(), npg=ucan.FixedNPG(np.ones((1, 2, 2))), x=X.clone(), noise="gaussian", lam=0.5,
                      n0=10, n=100, alpha=0.01, num_classes=3, generator=gen()))
CASES += [
    Case(c, "alpha", 0, ValueError),
    Case(c, "alpha", 1.5, ValueError),
    Case(c, "lam", 0, ValueError),
    Case(c, "lam", NAN, ValueError),
    Case(c, "n0", 0, ValueError),
    Case(c, "n", -1, ValueError, r"\bn must\b"),
    Case(c, "batch_size", 0, ValueError),
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "num_classes", 5, ValueError, label="5 (model has 3)"),
    Case(c, "num_classes", 1, ValueError),
    Case(c, "x", torch.full((1, 2, 2), NAN), ValueError, label="NaN"),
    Case(c, "x", torch.full((2, 2), 0.5), ValueError, label="shape (2,2)"),
    Case(c, "generator", "g", TypeError, label="'g'"),
]

c = Call("ucan.row_radii", ucan.row_radii,
         lambda: dict(row="gaussian/linf", p_lower=np.array([0.9, 0.4]), min_theta=np.array([0.5, 0.5]),
                      log_gm_theta=np.log(np.array([0.6, 0.6])), d=4))
CASES += [
    Case(c, "row", "bogus", ValueError, label="'bogus'"),
    Case(c, "p_lower", np.array([NAN, 0.4]), ValueError, label="[nan, 0.4]"),
    Case(c, "p_lower", np.array([1.5, 0.4]), ValueError, label="[1.5, 0.4]"),
    Case(c, "min_theta", np.array([-0.5, 0.5]), ValueError, label="[-0.5, 0.5]"),
    Case(c, "min_theta", np.array([NAN, 0.5]), ValueError, label="[nan, 0.5]"),
    Case(c, "min_theta", np.array([5.0, 5.0]), ValueError, label="[5, 5] (> geometric mean 0.6)"),
    Case(c, "log_gm_theta", np.array([NAN, 0.0]), ValueError, label="[nan, 0]"),
    Case(c, "log_gm_theta", np.array([INF, 0.0]), ValueError, label="[inf, 0]"),
    Case(c, "d", 0, ValueError),
    Case(c, "p_lower", np.array([0.9, 0.4, 0.8]), ValueError, label="3 values for 2 inputs"),
]

c = Call("ucan.rows_of", ucan.rows_of, dict(noise="gaussian"))
CASES += [
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "noise", None, ValueError),
]

c = Call("ucan.search_violation", ucan.search_violation,
         lambda: dict(model=tiny_model(), npg=ucan.FixedNPG(np.ones((1, 2, 2))), x=X.clone(), cls=0,
                      theta=torch.full((1, 2, 2), 0.5), r1=0.5, steps=3, samples=8, generator=gen()))
CASES += [
    Case(c, "steps", 0, ValueError),
    Case(c, "r1", -1.0, ValueError),
    Case(c, "r1", NAN, ValueError),
    Case(c, "cls", 7, ValueError, label="7 (3 classes)"),
    Case(c, "samples", 0, ValueError, r"\bsamples\b"),
    Case(c, "theta", -torch.full((1, 2, 2), 0.5), ValueError, label="-0.5"),
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
]

c = Call("ucan.verify_violation", ucan.verify_violation,
         lambda: dict(model=tiny_model(), npg=ucan.FixedNPG(np.ones((1, 2, 2))), x_prime=X.clone(), cls=0,
                      noise="gaussian", lam=0.5, n=100, alpha=0.01, num_classes=3, generator=gen()))
CASES += [
    Case(c, "cls", 7, ValueError, label="7 (3 classes)"),
    Case(c, "n", 0, ValueError, r"\bn must\b"),
    Case(c, "alpha", 1.0, ValueError),
    Case(c, "lam", -1.0, ValueError),
    Case(c, "lam", 0.0, ValueError),
    Case(c, "num_classes", 5, ValueError, label="5 (model has 3)"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.files
# --------------------------------------------------------------------------------------------------
def atomic_pipeline(path, mode="w"):
    with files.atomic_file(path, mode) as fh:
        fh.write("x" if mode == "w" else b"x")
    return Path(path).read_bytes()


c = Call("files.atomic_file", atomic_pipeline, lambda: dict(path=Tmp("atomic.txt", unique=True)))
CASES += [
    Case(c, "mode", "a", ValueError, label="'a'"),
    Case(c, "mode", "r", ValueError, label="'r'"),
    Case(c, "path", None, TypeError),
    Case(c, "path", Tmp("logs"), IsADirectoryError, r"/logs'|\bpath\b", label="an existing directory"),
]

c = Call("files.write_atomic", files.write_atomic, lambda: dict(path=Tmp("w.txt", unique=True), text="hello\n"))
CASES += [
    Case(c, "text", b"bytes", TypeError, label="b'bytes'"),
    Case(c, "text", None, TypeError),
    Case(c, "path", None, TypeError),
    Case(c, "path", Tmp("logs"), IsADirectoryError, r"/logs'|\bpath\b", label="an existing directory"),
]

c = Call("files.load_array", files.load_array, dict(path=Tmp("logs/ok.npy")))
CASES += [
    Case(c, "path", Tmp("logs/missing.npy"), FileNotFoundError, r"missing\.npy", label="missing file"),
    Case(c, "path", Tmp("logs/text.npy"), ValueError, r"text\.npy", label="a text file"),
    Case(c, "path", Tmp("logs/obj.npy"), ValueError, r"obj\.npy", label="an object-array (pickle) file"),
    Case(c, "path", Tmp("logs/trunc.npy"), ValueError, r"trunc\.npy", label="a truncated .npy"),
    Case(c, "path", Tmp("logs/adir"), ValueError, r"/adir\b", label="a directory"),
    Case(c, "path", None, TypeError),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.runs.logs
# --------------------------------------------------------------------------------------------------
HEADER = "\t".join(logs.ANCER_COLUMNS)
ROW = "0\t1\t1\t0.5\t0.6\t1\t0.25\t0.01"


def log_text(*rows: str) -> str:
    return "".join(line + "\n" for line in (HEADER, *rows))


c = Call("logs.read_log", logs.read_log, dict(path=Tmp("logs/ok.tsv", text=log_text(ROW))))
CASES += [
    Case(c, "path", Tmp("logs/missing.tsv"), ValueError, r"missing\.tsv", label="missing file"),
    Case(c, "path", Tmp("logs/nonl.tsv", text=HEADER + "\n" + ROW), ValueError, r"nonl\.tsv", label="no final newline"),
    Case(c, "path", Tmp("logs/dup.tsv", text=log_text(ROW, ROW)), ValueError, r"dup\.tsv", label="duplicate idx"),
    Case(c, "path", Tmp("logs/abc.tsv", text=log_text(ROW.replace("0.5", "abc", 1))), ValueError, r"abc\.tsv",
         label="radius='abc'"),
    Case(c, "path", Tmp("logs/nan.tsv", text=log_text(ROW.replace("\t0.5\t", "\tnan\t", 1))), ValueError, r"nan\.tsv",
         label="radius='nan'"),
    Case(c, "path", Tmp("logs/neg.tsv", text=log_text(ROW.replace("\t0.5\t", "\t-1\t", 1))), ValueError, r"neg\.tsv",
         label="radius='-1'"),
    Case(c, "path", Tmp("logs/inf.tsv", text=log_text(ROW.replace("\t0.5\t", "\tinf\t", 1))), ValueError, r"inf\.tsv",
         label="radius='inf'"),
    Case(c, "path", Tmp("logs/abst.tsv", text=log_text("0\t1\t-1\t0.5\t0.6\t1\t0.25\t0.01")), ValueError, r"abst\.tsv",
         label="predict=-1 (abstain) with correct=1 and radius 0.5"),
    Case(c, "path", Tmp("logs/lab.tsv", text=log_text("0\t-5\t-7\t0.5\t0.6\t0\t0.25\t0.01")), ValueError, r"lab\.tsv",
         label="label=-5, predict=-7"),
    Case(c, "path", Tmp("logs/empty.tsv", text=""), ValueError, r"empty\.tsv", label="empty file"),
    Case(c, "path", Tmp("logs/bin.tsv", data=b"\xff\xfe\x00garbage\n"), ValueError, r"bin\.tsv", label="invalid UTF-8"),
    Case(c, "path", Tmp("logs/adir"), ValueError, r"/adir\b", label="a directory"),
    Case(c, "path", Tmp("logs/cols.tsv", text="a\tb\n1\t2\n"), ValueError, r"cols\.tsv", label="wrong columns"),
    Case(c, "path", None, TypeError),
]


def resultlog_pipeline(path, columns=None, flush_every=20):
    with logs.ResultLog(path, columns=columns, flush_every=flush_every) as log:
        log.append(dict(idx=0, label=1, predict=1, radius=0.5, radius_proxy=0.6, correct=1, min_sigma=0.25, time=0.01))
    return Path(path).read_text()


c = Call("logs.ResultLog(...) then .append", resultlog_pipeline, lambda: dict(path=Tmp("log.tsv", unique=True)))
CASES += [
    Case(c, "columns", ["idx", "label"], ValueError, label="['idx','label']"),
    Case(c, "flush_every", "a", ValueError, label="'a'"),
    Case(c, "flush_every", 0, ValueError),
    Case(c, "path", None, TypeError),
]

GOOD_ROW = dict(idx=5, label=1, predict=1, radius=0.5, radius_proxy=0.6, correct=1, min_sigma=0.25, time=0.01)


def append_pipeline(row, path):
    with logs.ResultLog(path) as log:
        log.append(row)
        return list(log._rows)


# the message names the row's column that is wrong
c = Call("logs.ResultLog.append", append_pipeline, lambda: dict(row=dict(GOOD_ROW), path=Tmp("log.tsv", unique=True)))
CASES += [
    Case(c, "row", {**GOOD_ROW, "radius": NAN}, ValueError, r"\bradius\b", label="radius=nan"),
    Case(c, "row", {**GOOD_ROW, "radius": -1.0}, ValueError, r"\bradius\b", label="radius=-1"),
    Case(c, "row", {**GOOD_ROW, "radius": INF}, ValueError, r"\bradius\b", label="radius=inf"),
    Case(c, "row", {**GOOD_ROW, "label": -5}, ValueError, r"\blabel\b", label="label=-5"),
    Case(c, "row", {**GOOD_ROW, "predict": -7}, ValueError, r"\bpredict\b", label="predict=-7"),
    Case(c, "row", {**GOOD_ROW, "time": -1.0}, ValueError, r"\btime\b", label="time=-1"),
    Case(c, "row", {**GOOD_ROW, "min_sigma": -1.0}, ValueError, r"\bmin_sigma\b", label="min_sigma=-1"),
    Case(c, "row", {**GOOD_ROW, "radius_proxy": 0.1}, ValueError, r"\bradius_proxy\b",
         label="radius_proxy=0.1 < radius=0.5"),
    Case(c, "row", {**GOOD_ROW, "predict": -1, "correct": 1}, ValueError, r"\bcorrect\b",
         label="predict=-1 with correct=1"),
    Case(c, "row", {**GOOD_ROW, "idx": 1.5}, ValueError, r"\bidx\b", label="idx=1.5"),
    Case(c, "row", {**GOOD_ROW, "correct": 2}, ValueError, r"\bcorrect\b", label="correct=2"),
    Case(c, "row", {**GOOD_ROW, "correct": "True"}, ValueError, r"\bcorrect\b", label="correct='True'"),
    Case(c, "row", {**GOOD_ROW, "radius": "abc"}, ValueError, r"\bradius\b", label="radius='abc'"),
    Case(c, "row", {k: v for k, v in GOOD_ROW.items() if k != "time"}, ValueError, r"\bcolumns\b",
         label="missing 'time'"),
    Case(c, "row", {**GOOD_ROW, "extra": 1}, ValueError, r"\bcolumns\b", label="extra key"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.runs.profiles
# --------------------------------------------------------------------------------------------------
c = Call("profiles.ImageSetup", profiles.ImageSetup, dict(name="t", dataset="digits", column="CIFAR-10"))
CASES += [
    Case(c, "num_test", 0, ValueError),
    Case(c, "num_val", -3, ValueError),
    Case(c, "epochs", 0, ValueError),
    Case(c, "n", 0, ValueError),
    Case(c, "val_n", 2.5, ValueError),
    Case(c, "samples", True, ValueError),
    Case(c, "iterations", -1, ValueError),
    Case(c, "sigmas_l2", (-0.1,), ValueError),
    Case(c, "sigmas_l2", (NAN,), ValueError),
    Case(c, "iso_lr_grid", (0.0,), ValueError),
    Case(c, "sigmas_l2", 0.25, TypeError, label="0.25 (not a tuple)"),
    Case(c, "dataset", "foo", ValueError, label="'foo'"),
    Case(c, "model", "resnet", ValueError, label="'resnet'"),
    Case(c, "hidden", (0,), ValueError, label="(0,)"),
    Case(c, "hidden", (-1,), ValueError, label="(-1,)"),
    Case(c, "name", "../x", ValueError, label="'../x'"),
    Case(c, "iso_lr_grid", (), ValueError, label="()"),
]

c = Call("profiles.ImageSetup (sigmas_l1=())", profiles.ImageSetup,
         dict(name="t", dataset="digits", column="CIFAR-10", sigmas_l1=()))
CASES += [
    Case(c, "sigmas_l2", (), ValueError, label="()"),
]

c = Call("profiles.get_profile", profiles.get_profile, dict(name="quick"))
CASES += [
    Case(c, "name", "x", ValueError, r"\bprofile\b", label="'x'"),
    Case(c, "name", None, TypeError, r"\bprofile\b"),
    Case(c, "name", "", ValueError, r"\bprofile\b", label="''"),
    Case(c, "name", ["quick"], TypeError, r"\bprofile\b", label="['quick']"),
]

c = Call("profiles.UcanSetup", profiles.UcanSetup, dict(column="digits"))
CASES += [
    Case(c, "lams", (-1.0,), ValueError),
    Case(c, "epochs", 0, ValueError),
    Case(c, "num_val", -3, ValueError),
    Case(c, "val_n", 0, ValueError),
    Case(c, "growth", 0, ValueError),
    Case(c, "gammas", (0.0,), ValueError),
]

c = Call("profiles.Profile", profiles.Profile, dict(name="p"))
CASES += [
    Case(c, "n0", 0, ValueError),
    Case(c, "n", -1, ValueError),
    Case(c, "alpha", 2.0, ValueError),
    Case(c, "batch_size", 0, ValueError),
    Case(c, "mc_samples", -5, ValueError),
    Case(c, "precision", "fp8", ValueError, label="'fp8'"),
    Case(c, "draws", "gpu", ValueError, label="'gpu'"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.runs.setups
# --------------------------------------------------------------------------------------------------
c = Call("setups.theta_of", setups.theta_of, dict(norm="l2", sigma=0.5))
CASES += [
    Case(c, "norm", "l3", ValueError, label="'l3'"),
    Case(c, "sigma", -1.0, ValueError),
    Case(c, "sigma", NAN, ValueError),
    Case(c, "sigma", 0.0, ValueError),
    Case(c, "sigma", "abc", ValueError, label="'abc'"),
]

c = Call("setups.theta_of (l1)", setups.theta_of, dict(norm="l1", sigma=0.5))
CASES += [
    Case(c, "sigma", "abc", ValueError, label="'abc'"),
]

c = Call("setups.checkpoint_path", setups.checkpoint_path,
         dict(data_dir=Tmp(), dataset="cifar10", norm="l2", sigma=0.25))
CASES += [
    Case(c, "norm", "l3", ValueError, label="'l3'"),
    Case(c, "sigma", -1.0, ValueError),
    Case(c, "dataset", "../../etc", ValueError, label="'../../etc'"),
]

c = Call("setups.missing_inputs", setups.missing_inputs,
         dict(profile=profiles.get_profile("paper"), data_dir=Tmp("nodata")))
CASES += [
    Case(c, "profile", "paper", TypeError, label="'paper' (a name, not a Profile)"),
    Case(c, "profile", None, TypeError),
    Case(c, "data_dir", None, TypeError),
]

# prepare: the baseline loads the digits split and trains a 4-unit MLP for one epoch (cached in the folder)
PSETUP = profiles.ImageSetup("t", "digits", "CIFAR-10", hidden=(4,), epochs=1, sigmas_l2=(0.25,), sigmas_l1=(),
                             num_test=10, num_val=5)
c = Call("setups.prepare", setups.prepare, dict(setup=PSETUP, seed=0, data_dir=Tmp("prep")))
CASES += [
    Case(c, "seed", -1, ValueError),
    Case(c, "seed", 1.5, ValueError),
    Case(c, "seed", True, ValueError),
    Case(c, "seed", 2 ** 32, ValueError, label="2**32"),
    Case(c, "seed", "0", ValueError, label="'0'"),
    Case(c, "seed", None, ValueError),
    Case(c, "setup", None, TypeError),
    Case(c, "setup", Fresh(lambda: dataclasses.replace(PSETUP, dataset="foo")), ValueError, r"\bdataset\b",
         label="ImageSetup(dataset='foo')"),
    Case(c, "setup", Fresh(lambda: dataclasses.replace(PSETUP, model="resnet")), ValueError, r"\bmodel\b",
         label="ImageSetup(model='resnet')"),
    Case(c, "setup", dataclasses.replace(PSETUP, dataset="cifar10", model="checkpoint"), FileNotFoundError,
         "cifar|checkpoint", label="ImageSetup(dataset='cifar10'), no data"),
    Case(c, "data_dir", None, TypeError),
    Case(c, "cache", 5, TypeError),
]

c = Call("setups.build_model", setups.build_model, dict(setup=PSETUP, input_shape=(1, 8, 8), num_classes=10))
CASES += [
    Case(c, "setup", Fresh(lambda: dataclasses.replace(PSETUP, model="resnet")), ValueError, r"\bmodel\b",
         label="ImageSetup(model='resnet')"),
    Case(c, "num_classes", 0, ValueError),
    Case(c, "num_classes", 1, ValueError),
]

c = Call("setups.build_model (cnn)", setups.build_model,
         dict(setup=dataclasses.replace(PSETUP, model="cnn"), input_shape=(1, 8, 8), num_classes=10))
CASES += [
    Case(c, "input_shape", (1, 8), ValueError, label="(1, 8)"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.models.data
# --------------------------------------------------------------------------------------------------
c = Call("data.radial_dataset", data.radial_dataset, dict(n=20, seed=0))
CASES += [
    Case(c, "n", 1, ValueError),
    Case(c, "n", 0, ValueError),
    Case(c, "n", 2.5, ValueError),
    Case(c, "n", "20", ValueError, label="'20'"),
    Case(c, "n", None, ValueError),
    Case(c, "seed", -1, ValueError),
    Case(c, "boundaries", (2.0, 1.0), ValueError, label="(2, 1)"),
    Case(c, "boundaries", (), ValueError, label="()"),
    Case(c, "boundaries", (1.0, 3.0), ValueError, label="(1, 3) with outer 2.8"),
    Case(c, "margin", -1.0, ValueError),
    Case(c, "margin", 10.0, ValueError),
    Case(c, "margin", NAN, ValueError),
    Case(c, "outer", NAN, ValueError),
    Case(c, "outer", -1.0, ValueError),
]

c = Call("data.digits_split", data.digits_split, dict(seed=0))
CASES += [
    Case(c, "val_fraction", 0, ValueError),
    Case(c, "val_fraction", 1, ValueError),
    Case(c, "val_fraction", NAN, ValueError),
    Case(c, "val_fraction", -0.1, ValueError),
    Case(c, "val_fraction", "0.2", TypeError, label="'0.2'"),
    Case(c, "val_fraction", None, TypeError),
    Case(c, "val_fraction", 1e-4, ValueError),
    Case(c, "test_fraction", 0.9, ValueError, label="0.9 (+ val 0.2 >= 1)"),
    Case(c, "seed", -1, ValueError),
    Case(c, "seed", 1.5, ValueError),
    Case(c, "seed", "a", ValueError, label="'a'"),
]

c = Call("data.mnist5k_split", data.mnist5k_split, dict(seed=0))
CASES += [
    Case(c, "val_fraction", 0, ValueError),
    Case(c, "seed", -1, ValueError),
]

c = Call("data.cifar10", data.cifar10, dict(root=Tmp("cifar/ok"), split="test"))
CASES += [
    Case(c, "split", "val", ValueError, label="'val'"),
    Case(c, "root", Tmp("cifar/missing"), FileNotFoundError, r"cifar|test_batch|\broot\b", label="missing folder"),
    Case(c, "root", Tmp("cifar/garbage"), ValueError, r"cifar|test_batch|\broot\b", label="test_batch not a pickle"),
    Case(c, "root", Tmp("cifar/list"), ValueError, r"cifar|test_batch|\broot\b", label="test_batch a pickled list"),
    Case(c, "root", Tmp("cifar/shape"), ValueError, r"cifar|test_batch|\broot\b", label="data of shape (2,100)"),
    Case(c, "root", Tmp("cifar/labels"), ValueError, r"cifar|test_batch|\broot\b", label="labels [0, 99]"),
    Case(c, "root", None, TypeError, r"cifar|test_batch|\broot\b"),
]

c = Call("data.FolderImages", data.FolderImages, dict(folder=Tmp("imagenet/val")))
CASES += [
    Case(c, "folder", Tmp("imagenet/missing"), FileNotFoundError, r"imagenet/missing", label="missing folder"),
    Case(c, "folder", Tmp("imagenet/empty/val"), FileNotFoundError, r"empty/val", label="no class folders"),
    Case(c, "folder", 5, TypeError),
    Case(c, "threads", 0, ValueError),
]

c = Call("data.imagenet_subset", data.imagenet_subset, dict(root=Tmp("imagenet"), split="val", count=2))
CASES += [
    Case(c, "count", 0, ValueError),
    Case(c, "count", 3, ValueError, label="3 (> 2 images)"),
    Case(c, "count", -1, ValueError),
    Case(c, "count", "2", ValueError, label="'2'"),
    Case(c, "count", 1.5, ValueError),
    Case(c, "split", "test", ValueError, label="'test'"),
    Case(c, "root", Tmp("imagenet/missing"), FileNotFoundError, r"imagenet|\broot\b", label="missing folder"),
    Case(c, "root", Tmp("imagenet/empty"), FileNotFoundError, r"imagenet|\broot\b", label="val folder with no images"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.core.validation
# --------------------------------------------------------------------------------------------------
c = Call("validation.check_probability", validation.check_probability, dict(value=0.5, name="alpha"))
CASES += [
    Case(c, "value", True, ValueError, r"\balpha\b"),
    Case(c, "value", None, ValueError, r"\balpha\b"),
    Case(c, "value", [0.5], ValueError, r"\balpha\b"),
    Case(c, "value", 0.5j, ValueError, r"\balpha\b", label="0.5j"),
    Case(c, "value", NAN, ValueError, r"\balpha\b"),
    Case(c, "value", "0.5", ValueError, r"\balpha\b", label="'0.5'"),
]

c = Call("validation.check_count", validation.check_count, dict(value=3, name="n"))
CASES += [
    Case(c, "value", 1.0, ValueError, r"\bn must\b"),
    Case(c, "value", "3", ValueError, r"\bn must\b", label="'3'"),
    Case(c, "value", True, ValueError, r"\bn must\b"),
    Case(c, "value", np.float64(3), ValueError, r"\bn must\b", label="np.float64(3)"),
    Case(c, "value", -1, ValueError, r"\bn must\b"),
    Case(c, "value", None, ValueError, r"\bn must\b"),
    Case(c, "minimum", "a", TypeError, label="'a'"),
]

c = Call("validation.check_positive", validation.check_positive, dict(value=2.0, name="lr"))
CASES += [
    Case(c, "value", 0, ValueError, r"\blr\b"),
    Case(c, "value", NAN, ValueError, r"\blr\b"),
    Case(c, "value", None, ValueError, r"\blr\b"),
    Case(c, "value", -INF, ValueError, r"\blr\b"),
    Case(c, "value", True, ValueError, r"\blr\b"),
    Case(c, "value", "2", ValueError, r"\blr\b", label="'2'"),
]

c = Call("validation.check_finite_tensor", validation.check_finite_tensor, lambda: dict(x=torch.zeros(2), name="x"))
CASES += [
    Case(c, "x", "abc", ValueError, label="'abc'"),
    Case(c, "x", None, ValueError),
    Case(c, "x", torch.tensor([NAN]), ValueError, label="[nan]"),
    Case(c, "shape", 5, ValueError),
]

c = Call("validation.check_domain", validation.check_domain, dict(domain=(0.0, 1.0), name="domain"))
CASES += [
    Case(c, "domain", (0.0, NAN), ValueError, label="(0.0, nan)"),
    Case(c, "domain", (0.0,), ValueError, label="(0.0,)"),
    Case(c, "domain", (True, 1.0), ValueError, label="(True, 1.0)"),
]

c = Call("validation.check_scale", validation.check_scale, dict(theta=0.5, shape=(2, 2)))
CASES += [
    Case(c, "theta", "a", ValueError, label="'a'"),
    Case(c, "theta", None, ValueError),
    Case(c, "theta", NAN, ValueError),
    Case(c, "theta", True, ValueError),
    Case(c, "shape", (2, -1), ValueError, label="(2, -1)"),
]

c = Call("validation.check_choice", validation.check_choice, dict(value="a", name="x", choices=("a", "b")))
CASES += [
    Case(c, "value", ["a"], ValueError, r"\bx must", label="['a']"),
    Case(c, "value", None, ValueError, r"\bx must"),
    Case(c, "choices", None, TypeError),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.models.small
# --------------------------------------------------------------------------------------------------
c = Call("models.MLP", models.MLP, dict(input_shape=(1, 2, 2), num_classes=3, hidden=(4,)))
CASES += [
    Case(c, "activation", "tanh", ValueError, label="'tanh'"),
    Case(c, "std", (0.0,), ValueError, label="(0,)"),
    Case(c, "std", (-1.0,), ValueError, label="(-1,)"),
    Case(c, "mean", (0.5, 0.5), ValueError, label="(0.5, 0.5) vs std (0.25,)"),
]

CASES += [
    Case(c, "std", (NAN,), ValueError, label="(nan,)"),
    Case(c, "mean", (NAN,), ValueError, label="(nan,)"),
    Case(c, "num_classes", 0, ValueError),
    Case(c, "num_classes", 1, ValueError),
    Case(c, "num_classes", -1, ValueError),
    Case(c, "num_classes", 2.5, ValueError),
    Case(c, "input_shape", (0, 2, 2), ValueError, label="(0, 2, 2)"),
    Case(c, "input_shape", (-1,), ValueError, label="(-1,)"),
    Case(c, "input_shape", "ab", ValueError, label="'ab'"),
    Case(c, "hidden", (0,), ValueError, label="(0,)"),
    Case(c, "hidden", (-2,), ValueError, label="(-2,)"),
    Case(c, "hidden", (2.5,), ValueError, label="(2.5,)"),
]

c = Call("models.SmallCNN", models.SmallCNN, dict(input_shape=(1, 8, 8), num_classes=10))
CASES += [
    Case(c, "input_shape", (8, 8), ValueError, label="(8, 8)"),
    Case(c, "input_shape", (0, 8, 8), ValueError, label="(0, 8, 8)"),
    Case(c, "input_shape", (1.5, 8, 8), ValueError, label="(1.5, 8, 8)"),
    Case(c, "activation", "tanh", ValueError, label="'tanh'"),
    Case(c, "channels", (0, 16), ValueError, label="(0, 16)"),
    Case(c, "channels", (-1, 16), ValueError, label="(-1, 16)"),
    Case(c, "hidden", 0, ValueError),
    Case(c, "num_classes", 0, ValueError),
    Case(c, "std", (0.0,), ValueError, label="(0,)"),
]

c = Call("models.Normalize", models.Normalize, dict(mean=(0.5,), std=(0.25,)))
CASES += [
    Case(c, "std", (0.0,), ValueError, label="(0,)"),
]

CASES += [
    Case(c, "std", (NAN,), ValueError, label="(nan,)"),
    Case(c, "mean", (INF,), ValueError, label="(inf,)"),
    Case(c, "std", "ab", ValueError, label="'ab'"),
]

c = Call("models.ToyClassifier", models.ToyClassifier, dict(discs=[((0.0, 0.0), 1.0)]))
CASES += [
    Case(c, "discs", [], ValueError, r"\bdisc\b", label="[] (and no other shape)"),
]

CASES += [
    Case(c, "sharpness", -1.0, ValueError),
    Case(c, "sharpness", NAN, ValueError),
    Case(c, "discs", [((0.0, 0.0), -1.0)], ValueError, label="[((0,0), -1)]"),
    Case(c, "discs", [((0.0, 0.0, 0.0), 1.0)], ValueError, label="[((0,0,0), 1)] (3-D centre)"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.studies.primer
# --------------------------------------------------------------------------------------------------
c = Call("primer.noisy_votes", primer.noisy_votes,
         lambda: dict(model=primer.toy_classifiers()["line"], x=primer.X0, sigma=0.25, n=20))
CASES += [
    Case(c, "sigma", -1.0, ValueError),
    Case(c, "n", 0, ValueError),
]

c = Call("primer.bound_versus_n", primer.bound_versus_n, dict(share=0.9, ns=[10, 100], alpha=0.01, sigma=0.25))
CASES += [
    Case(c, "share", 0.0, ValueError),
    Case(c, "ns", [0], ValueError, match=r"\bN\b", label="[0]"),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.models.train
# --------------------------------------------------------------------------------------------------
c = Call("train.train_classifier", train.train_classifier,
         lambda: dict(model=models.MLP((1, 2, 2), 3, hidden=(4,)), x=X8.clone(), y=Y8.clone(), noise="gaussian",
                      scale=0.25, epochs=1, batch_size=4))
CASES += [
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "scale", 0, ValueError),
    Case(c, "scale", -1, ValueError),
    Case(c, "scale", NAN, ValueError),
    Case(c, "epochs", 0, ValueError),
    Case(c, "epochs", 1.5, ValueError),
    Case(c, "batch_size", 0, ValueError),
    Case(c, "lr", 0, ValueError),
    Case(c, "lr", NAN, ValueError),
    Case(c, "momentum", -1.0, ValueError),
    Case(c, "momentum", NAN, ValueError),
    Case(c, "weight_decay", -1.0, ValueError),
    Case(c, "stability", -1.0, ValueError),
    Case(c, "stability", NAN, ValueError),
    Case(c, "schedule", "linear", ValueError, label="'linear'"),
    Case(c, "step_size", 0, ValueError),
    Case(c, "gamma", 0, ValueError),
    Case(c, "gamma", NAN, ValueError),
    Case(c, "precision", "fp8", ValueError, label="'fp8'"),
    Case(c, "stability_pair", "both", ValueError, label="'both'"),
    Case(c, "augment", "mixup", ValueError, label="'mixup'"),
    Case(c, "y", Y8[:5].clone(), ValueError, label="5 labels for 8 inputs"),
    Case(c, "y", torch.tensor([0, 1, 2, 0, 1, 2, 0, 9]), ValueError, label="label 9 (3 classes)"),
    Case(c, "y", Y8.float(), ValueError, label="float labels"),
    Case(c, "x", Fresh(lambda: X8 * NAN), ValueError, label="NaN"),
    Case(c, "model", None, TypeError),
]

c = Call("train.crop_flip", train.crop_flip,
         lambda: dict(x=torch.rand(4, 1, 5, 5, generator=torch.Generator().manual_seed(0)),
                      gen=torch.Generator().manual_seed(1)))
CASES += [
    Case(c, "x", Fresh(lambda: torch.rand(1, 5, 5)), ValueError, label="one image (C, H, W)"),
    Case(c, "padding", -1, ValueError),
]

c = Call("train.accuracy", train.accuracy,
         lambda: dict(model=tiny_model(), x=X8.clone(), y=Y8.clone(), noise="gaussian", scale=0.25))
CASES += [
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "scale", -1.0, ValueError),
    Case(c, "scale", NAN, ValueError),
    Case(c, "y", Y8[:5].clone(), ValueError, label="5 labels for 8 inputs"),
]

c = Call("train.train_cached", train.train_cached,
         lambda: dict(path=Tmp("model.pt", unique=True), build=lambda: tiny_model(), fit=lambda m: m))
CASES += [
    Case(c, "path", Tmp("corrupt.pt", data=b"garbage"), ValueError, r"corrupt\.pt", label="a corrupt cache file"),
    Case(c, "path", Tmp("logs/adir"), ValueError, r"/adir\b", label="a directory"),
    Case(c, "build", None, TypeError),
    Case(c, "fit", lambda m: None, TypeError, label="fit returning None"),
]

c = Call("train.model_fingerprint", train.model_fingerprint, lambda: dict(model=tiny_model()))
CASES += [
    Case(c, "model", None, TypeError),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.evaluation.superset
# --------------------------------------------------------------------------------------------------
c = Call("superset.average_theta", superset.average_theta, lambda: dict(thetas=np.full((3, 4), 0.5)))
CASES += [
    Case(c, "kind", "median", ValueError, label="'median'"),
    Case(c, "thetas", np.full((3, 4), -0.5), ValueError, label="-0.5 (3,4)"),
    Case(c, "thetas", np.full(4, 0.5), ValueError, label="1-D"),
]

c = Call("superset.anisotropy", superset.anisotropy, lambda: dict(thetas=np.full((3, 4), 0.5)))
CASES += [
    Case(c, "thetas", np.zeros((3, 4)), ValueError, label="zeros (3,4)"),
    Case(c, "thetas", -np.full((3, 4), 0.5), ValueError, label="-0.5 (3,4)"),
]

c = Call("superset.ellipsoid_slice", superset.ellipsoid_slice,
         lambda: dict(scales=np.full(4, 0.5), u=np.eye(4)[0], v=np.eye(4)[1], num=16))
CASES += [
    Case(c, "u", np.ones(4), ValueError, label="ones(4) (not unit)"),
    Case(c, "scales", np.zeros(4), ValueError, label="zeros(4)"),
    Case(c, "num", 0, ValueError),
    Case(c, "num", -1, ValueError),
]

# --------------------------------------------------------------------------------------------------
# ancer_lite.evaluation.verify
# --------------------------------------------------------------------------------------------------
c = Call("verify.smoothed_predictions", verify.smoothed_predictions,
         lambda: dict(model=tiny_model(), points=torch.full((2, 1, 2, 2), 0.5), theta=0.5, noise="gaussian", num=20))
CASES += [
    Case(c, "noise", "bogus", ValueError, label="'bogus'"),
    Case(c, "num", 0, ValueError),
    Case(c, "theta", -0.5, ValueError),
    Case(c, "rotation", torch.tensor(NONORTH, dtype=torch.float32), ValueError, label="2*I"),
    Case(c, "points", torch.full((2, 1, 2, 2), NAN), ValueError, label="NaN"),
]

c = Call("verify.region_boundary_2d", verify.region_boundary_2d,
         lambda: dict(center=np.zeros(2), scales=np.full(2, 0.5), norm="l2"))
CASES += [
    Case(c, "num", 4, ValueError),
    Case(c, "norm", "l3", ValueError, label="'l3'"),
    Case(c, "scales", -np.full(2, 0.5), ValueError, label="-0.5 x2"),
    Case(c, "num", 8.5, ValueError),
]

c = Call("verify.region_fill_2d", verify.region_fill_2d,
         lambda: dict(center=np.zeros(2), scales=np.full(2, 0.5), norm="l2", per_axis=5, boundary=8))
CASES += [
    Case(c, "shrink", 2.0, ValueError),
    Case(c, "shrink", -1.0, ValueError),
    Case(c, "per_axis", 0, ValueError),
]
