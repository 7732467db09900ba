"""Bad-input probe of ancer_lite's public API.

Every case changes exactly ONE argument of a baseline call that is first checked to succeed, and its outcome
is classified as
  clear   - raises ValueError/TypeError/FileNotFoundError/PermissionError (or another OSError naming the path)
            whose message names the argument AND says what was expected / what the bad value was;
  unclear - raises, but the message does not name the argument, or a low-level error (IndexError, KeyError,
            AttributeError, RuntimeError, ZeroDivisionError, LinAlgError, numpy/torch/sklearn messages ...);
  silent  - returns without raising although the input is meaningless (the returned value is recorded), or
            never returns (an infinite loop, stopped by a timeout: recorded as silent with "HANG").
Writes build/probe/results.json and prints one line per case and the counts. Deterministic: every case
re-seeds torch / numpy / random. Run from the repository root: `.venv/bin/python benchmarks/probe_api.py`
(about 20 s on one thread; the issue "Reliability" reports its counts). Not part of the test suite: the
counts describe how far the API is from raising a clear error on every bad input.
"""
from __future__ import annotations

import json
import os
import pickle
import random
import re
import shutil
import signal
import sys
import traceback
import warnings
from pathlib import Path

os.environ.pop("ANCER_STAGES_FILE", None)
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

torch.set_num_threads(1)

HERE = Path(os.environ.get("PROBE_OUT", REPO / "build" / "probe")).resolve()  # PROBE_OUT: another folder, for runs side by side
TMP = HERE / "tmp"
shutil.rmtree(TMP, ignore_errors=True)
TMP.mkdir(parents=True)
os.chdir(TMP)

from ancer_lite.core import (  # noqa: E402
    certify,
    families,
    files,
    geometry,
    memory,
    noise,
    regions,
    rotated,
    rotated_memory,
    ucan_noise,
    ucan_radii,
    validation,
)
from ancer_lite.evaluation import metrics, superset, verify  # noqa: E402
from ancer_lite.methods import hessian, optimize, rancer, ucan  # noqa: E402
from ancer_lite.models import data, train  # noqa: E402
from ancer_lite.models import small as models  # noqa: E402
from ancer_lite.runs import experiment, logs, profiles, selection, setups  # noqa: E402

NAN, INF = float("nan"), float("inf")
RESULTS: list[dict] = []
BASELINES: list[dict] = []
CLEAR_TYPES = (ValueError, TypeError, FileNotFoundError, PermissionError)
DESCRIPTIVE = re.compile(r"must|expect|got\b|should|need|not found|missing|invalid|is not|not an? |out of|only|"
                         r"require|cannot|incomplete|empty|does not exist|no such|Is a directory|File exists|"
                         r"not a |differ|already|duplicate|holds|\buse\b|at most|at least|gives an", re.I)


class ProbeTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise ProbeTimeout()


signal.signal(signal.SIGALRM, _alarm)


def seed_all() -> None:
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)


def show(v, limit: int = 220) -> str:
    """A short, readable description of a returned value."""
    try:
        if isinstance(v, certify.Certificate):
            s = (f"Certificate(prediction={v.prediction!r}, p_lower={v.p_lower:.4g}, gap={v.gap:.4g}, radius={v.radius:.4g}, "
                 f"radius_proxy={v.radius_proxy:.4g}, log_volume={v.log_volume:.4g}, count={v.count!r}, n={v.n!r})")
            return s
        if isinstance(v, memory.Decision):
            sc = None if v.scales is None else np.array2string(np.asarray(v.scales), precision=3)
            return f"Decision(prediction={v.prediction!r}, status={v.status!r}, scales={sc})"
        if isinstance(v, data.Split):
            return f"Split(x{tuple(v.x.shape)}, y={v.y.tolist()[:8]}, index={list(v.index)[:8]})"
        if isinstance(v, torch.Tensor):
            t = v.detach()
            s = f"tensor{tuple(t.shape)} {np.array2string(t.cpu().numpy().reshape(-1)[:8], precision=4)}"
        elif isinstance(v, np.ndarray):
            s = f"ndarray{v.shape} {np.array2string(v.reshape(-1)[:8], precision=4)}" if v.dtype != object else repr(v)
        elif isinstance(v, pd.DataFrame):
            cols = [c for c in ("idx", "label", "predict", "radius", "correct", "status", "s") if c in v.columns] \
                or list(v.columns[:5])
            s = f"DataFrame{v.shape} " + str(v[cols].head(4).to_dict("list"))
        elif isinstance(v, nn.Module):
            shapes = [tuple(p.shape) for p in v.parameters()]
            nan = any(bool(torch.isnan(p).any()) for p in v.parameters())
            bufs = {k: np.array2string(b.detach().numpy().reshape(-1)[:4], precision=3) for k, b in v.named_buffers()}
            s = f"{type(v).__name__} params {shapes[:6]} any_nan={nan}" + (f" buffers {bufs}" if bufs else "")
        elif isinstance(v, tuple):
            s = "(" + ", ".join(show(a, 90) for a in v) + ")"
        elif isinstance(v, dict):
            s = "{" + ", ".join(f"{k}: {show(a, 60)}" for k, a in list(v.items())[:8]) + "}"
        elif isinstance(v, list):
            s = "[" + ", ".join(show(a, 90) for a in v[:4]) + (", ..." if len(v) > 4 else "") + f"] (len {len(v)})"
        else:
            s = repr(v)
    except Exception as e:  # pragma: no cover
        s = f"<unprintable {type(v).__name__}: {e}>"
    s = s.replace("\n", " ")
    return s if len(s) <= limit else s[:limit] + "..."


def call(thunk, timeout: float):
    seed_all()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                out = thunk()
                return "ok", out, [f"{x.category.__name__}: {str(x.message)[:80]}" for x in w]
            except ProbeTimeout:
                return "hang", None, []
            except BaseException as e:  # noqa: BLE001
                if isinstance(e, KeyboardInterrupt):
                    raise
                return "raise", e, []
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


class Group:
    """One function and a valid baseline call; `p` probes one argument."""

    def __init__(self, fname: str, fn, base, *, fix: str = "", names: dict | None = None, timeout: float = 20.0,
                 run_baseline: bool = True, baseline_note: str = ""):
        self.fname, self.fn, self.base, self.fix, self.timeout = fname, fn, base, fix, timeout
        self.names = names or {}
        self.ok = True
        if run_baseline:
            kind, out, _ = call(lambda: fn(**self._kwargs()), timeout)
            self.ok = kind == "ok"
            BASELINES.append(dict(function=fname, ok=self.ok, result=show(out) if self.ok else
                                  f"{type(out).__name__}: {out}" if kind == "raise" else kind))
            if not self.ok:
                print(f"!! BASELINE FAILED {fname}: {BASELINES[-1]['result'][:300]}", file=sys.stderr)
        else:
            BASELINES.append(dict(function=fname, ok=None, result=f"not executed: {baseline_note}"))

    def _kwargs(self) -> dict:
        return dict(self.base() if callable(self.base) else self.base)

    def p(self, arg: str, bad, label: str | None = None, *, why: str = "", fix: str = "", names=None,
          force: str | None = None, note: str = "", timeout: float | None = None, detail=None):
        """Probe argument `arg` with value `bad` (a zero-argument callable `bad` is called to build the value
        fresh for the call when label is given with lazy=True semantics: pass a lambda via `lazy`)."""
        if not self.ok:
            return
        kwargs = self._kwargs()
        if arg not in kwargs and arg not in self.names.get("_extra", ()):
            pass  # a default argument of the function, overridden here
        if isinstance(bad, Lazy):
            kwargs[arg] = bad  # built inside the call: a value refused when it is built counts like a refusal
        else:
            kwargs[arg] = bad
        shown = label if label is not None else (show(bad, 60) if not isinstance(bad, Lazy) else bad.label)
        kind, out, warns = call(lambda: self.fn(**{k: (v() if isinstance(v, Lazy) else v) for k, v in kwargs.items()}),
                                timeout or self.timeout)
        pats = names if names is not None else self.names.get(arg, [rf"(?<![\w.]){re.escape(arg)}(?![\w])"])
        if isinstance(pats, str):
            pats = [pats]
        rec = dict(id=len(RESULTS) + 1, function=self.fname, arg=arg, bad=shown, note=note)
        if kind != "raise":
            rec["note"] = note
        if kind == "ok":
            extra = ""
            if detail is not None:
                try:
                    extra = " [" + str(detail(out)) + "]"
                except Exception as e:  # pragma: no cover
                    extra = f" [detail failed: {e}]"
            rec.update(category="silent", outcome="returned " + show(out) + extra,
                       warnings="; ".join(sorted(set(warns)))[:200], why=why or "meaningless input accepted")
        elif kind == "hang":
            rec.update(category="silent", outcome=f"HANG: no return within {timeout or self.timeout:g} s "
                       "(infinite loop; stopped by the probe's timeout)", warnings="",
                       why=why or "never returns (infinite loop)")
        else:
            e = out
            msg = str(e)
            etype = type(e).__name__
            named = any(re.search(pt, msg) for pt in pats)
            descriptive = bool(DESCRIPTIVE.search(msg))
            ok_type = isinstance(e, CLEAR_TYPES) or (isinstance(e, OSError) and any(
                re.search(pt, msg) for pt in pats))
            if isinstance(e, KeyError):
                ok_type = False
            cat = "clear" if (ok_type and named and descriptive) else "unclear"
            if cat == "clear" and not re.search(rf"(?<![\w.]){re.escape(arg)}(?![\w])", msg) and not note:
                hit = next(re.search(pt, msg).group(0) for pt in pats if re.search(pt, msg))
                note = f"accepted as naming the argument via {hit!r}"
            rec["note"] = note
            reason = "" if cat == "clear" else (
                "low-level exception type" if not ok_type else
                "message does not name the argument" if not named else "message does not say what was expected")
            tb = traceback.extract_tb(e.__traceback__)
            where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb)), "")
            rec.update(category=cat, outcome=f"{etype}: {msg}", where=where, reason=reason)
        if force:
            if rec["category"] != force:
                rec["note"] = (rec["note"] + "; " if rec["note"] else "") + \
                    f"manual override {rec['category']} -> {force}"
            rec["category"] = force
        rec["fix"] = fix or self.fix
        RESULTS.append(rec)
        print(f"[{rec['id']:3d}] {rec['category']:7s} {self.fname}({arg}={shown}): {rec['outcome'][:130]}")
        return rec


class Lazy:
    """A bad value built fresh for its call (a model, a file, ...)."""

    def __init__(self, make, label: str):
        self.make, self.label = make, label

    def __call__(self):
        return self.make()


# ================================================================================================
# fixtures
# ================================================================================================

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

SMOOTH = lambda: certify.Smooth(tiny_model(), 3, (1, 2, 2))  # noqa: E731

# ================================================================================================
# certify.py
# ================================================================================================
FIX_SMOOTH_SHAPE = "Validate input_shape as a tuple/list of ints (reject bool, non-iterables) with a ValueError naming input_shape."


def smooth_pipeline(model, num_classes, input_shape, noise="gaussian", batch_size=2000, seed=0, device="cpu"):
    s = certify.Smooth(model, num_classes, input_shape, noise, batch_size, seed, device)
    return s.certify(torch.full(tuple(s.input_shape), 0.5), 0.5, 10, 100, 0.01)


g = Group("Smooth(...) then .certify", smooth_pipeline, lambda: dict(model=tiny_model(), num_classes=3,
                                                                      input_shape=(1, 2, 2)))
g.p("model", lambda x: x, "a plain function")
g.p("model", None)
g.p("model", "model", "'model'")
g.p("model", Lazy(lambda: nn.Flatten(), "nn.Flatten() (4 outputs, 3 classes)"), names=["model", "num_classes"])
g.p("model", Lazy(nan_model, "Linear with NaN weights"), names=["model"])
g.p("model", Lazy(TupleOut, "module returning a tuple"), names=["model"])
g.p("model", Lazy(RandomForward, "module with randomness in forward"), names=["model"])
g.p("model", Lazy(VectorOut, "module returning shape (b,)"), names=["model"])
g.p("model", Lazy(lambda: nn.Linear(4, 3), "nn.Linear(4,3) without Flatten (wrong input layout)"), names=["model"],
    fix="Wrap the first forward pass: on an exception from the model, raise ValueError('model failed on a batch of "
        "shape (b, *input_shape) ...') from it, naming model and input_shape.")
for v in (1, 0, -3, 2.5, "3", True, None, NAN):
    g.p("num_classes", v)
g.p("num_classes", 5, "5 (model has 3 outputs)")
g.p("input_shape", (1, 2, 3), "(1,2,3) (model takes 4 features)",
    note="x built with the new input_shape, so the first model call fails inside torch",
    fix="Wrap the first forward pass: on an exception from the model, raise ValueError naming model and input_shape "
        "('model cannot take inputs of shape (b, 1, 2, 3) ...').")
for v, lab in (((0, 2, 2), None), ((-1, 2, 2), None), ((1.0, 2, 2), None), ("122", "'122'"), (None, None),
               (4, "4 (an int)")):
    g.p("input_shape", v, lab, fix=FIX_SMOOTH_SHAPE)
g.p("input_shape", (True, 2, 2), "(True, 2, 2)", why="a bool is accepted as the dimension 1 (wrong type, silently "
    "coerced)", fix=FIX_SMOOTH_SHAPE)
for v in ("laplace", "Gaussian", "", None, 0):
    g.p("noise", v)
for v in (0, -1, 2.5, True, "100", None):
    g.p("batch_size", v)
g.p("seed", 1.5, why="a float seed is silently truncated by int() (1.5 -> 1)",
    fix="Check seed with check_count(seed, 'seed', 0) (an int, not bool/float) before int(seed).")
g.p("seed", "a", "'a'", fix="Check seed is an int (ValueError naming seed) before int(seed).")
g.p("seed", None, fix="Check seed is an int (ValueError naming seed) before int(seed).")
g.p("seed", NAN, fix="Check seed is an int (ValueError naming seed) before int(seed).")
g.p("seed", 2 ** 70, "2**70", fix="Check seed lies in torch's range [-2**63, 2**64) and name seed.")
g.p("device", "tpu", "'tpu'", fix="Catch torch.device's RuntimeError and re-raise ValueError naming device and the "
    "accepted values ('cpu', 'cuda[:i]').")
g.p("device", "gpu", "'gpu'", fix="Catch torch.device's RuntimeError and re-raise ValueError naming device.")
g.p("device", "cuda", "'cuda' (no GPU)")
g.p("device", 5, "5 (an int)")

FIX_X = "check_finite_tensor: raise ValueError('x must be a real tensor ...') when torch.as_tensor fails or the dtype is not floating."
g = Group("Smooth.sample_counts", lambda x, theta, num, rotation=None, generator=None:
          SMOOTH().sample_counts(x, theta, num, rotation, generator),
          lambda: dict(x=X.clone(), theta=0.5, num=50),
          names={"theta": [r"\btheta\b", r"\bsigma\b"]})
g.p("x", torch.full((1, 2, 2), NAN), "all-NaN (1,2,2)")
g.p("x", torch.full((1, 2, 2), INF), "all-inf (1,2,2)")
g.p("x", torch.full((2, 2), 0.5), "shape (2,2)")
g.p("x", torch.full((1, 1, 2, 2), 0.5), "shape (1,1,2,2) (batched)")
g.p("x", torch.empty(0), "empty tensor")
g.p("x", "abc", "'abc'", fix=FIX_X)
g.p("x", None, fix=FIX_X)
g.p("x", torch.full((1, 2, 2), 128, dtype=torch.uint8), "uint8 image (value 128)",
    why="an integer image (0..255) is cast to float and certified in [0, 1] pixel space as if it were pixels of 128.0; "
        "optimize_* rejects the same input",
    fix="Reject non-floating x in Smooth._check_x (as optimize._check_inputs does): 'x must be a floating-point tensor in [0, 1]'.")
g.p("x", torch.full((1, 2, 2), 0.5 + 0.5j), "complex (0.5+0.5j)",
    why="the imaginary part is silently discarded (ComplexWarning at most)", fix=FIX_X)
for v, lab in ((0, None), (-0.5, None), (NAN, None), (INF, None), (np.full(4, 0.5), "shape (4,)"),
               (torch.tensor([[[0.5, 0.0], [0.5, 0.5]]]), "per-pixel with one 0"), ([], "[]"),
               (torch.tensor(NAN), "tensor(nan)")):
    g.p("theta", v, lab)
g.p("theta", 1e39, "1e39 (overflows float32)", fix="check_scale: check finiteness AFTER the cast to float32 "
    "(1e39 -> inf), raising 'sigma must be finite in float32'.")
g.p("theta", "0.5", "'0.5'", fix="check_scale: catch torch.as_tensor's error and raise ValueError naming theta/sigma.")
g.p("theta", None, fix="check_scale: catch torch.as_tensor's error and raise ValueError naming theta/sigma.")
g.p("theta", True, why="bool accepted as the scale 1.0", fix="Reject bool theta in check_scale / check_positive.")
g.p("theta", 0.5 + 0.5j, "complex 0.5+0.5j", fix="check_scale: reject complex theta with ValueError naming it.")
for v, lab in ((0, None), (-1, None), (2.5, None), (True, None), ("50", "'50'"), (None, None)):
    g.p("num", v, lab)
g.p("rotation", torch.tensor(NONORTH), "2*I (not orthogonal)")
g.p("rotation", torch.eye(3), "I_3 (wrong size)")
g.p("rotation", torch.tensor(NANROT), "all-NaN 4x4")
g.p("rotation", torch.eye(4)[None], "shape (1,4,4)")
g.p("rotation", torch.tensor(0.99 * np.eye(4)), "0.99*I")
g.p("rotation", "eye", "'eye'", fix="check_rotation: catch torch.as_tensor's error, raise ValueError naming rotation.")
FIX_GEN = "Check isinstance(generator, torch.Generator) (or None) and raise TypeError naming generator."
g.p("generator", "gen", "'gen'", fix=FIX_GEN)
g.p("generator", 5, fix=FIX_GEN)
g.p("generator", Lazy(lambda: np.random.default_rng(0), "np.random.default_rng(0)"), fix=FIX_GEN)

g = Group("Smooth.vote_counts", lambda points, theta, num, rotation=None, mean=None:
          SMOOTH().vote_counts(points, theta, num, rotation, mean=mean),
          lambda: dict(points=X2.clone(), theta=0.5, num=20), names={"theta": [r"\btheta\b", r"\bsigma\b"]})
g.p("points", X.clone(), "one input (1,2,2), not a batch")
g.p("points", Lazy(lambda: X2 * NAN, "NaN"))
g.p("points", torch.full((2, 1, 2, 2), 1, dtype=torch.int64), "int64 points")
g.p("theta", -0.5)
g.p("num", 0)
g.p("rotation", torch.tensor(NONORTH), "2*I (not orthogonal)")
g.p("mean", torch.zeros(3, 2, 2), "shape (3,2,2)")
g.p("mean", torch.full((1, 2, 2), INF), "inf")
g.p("mean", np.zeros((1, 2, 2)), "a numpy array")

g = Group("certify.soft_smoothed_probabilities", certify.soft_smoothed_probabilities,
          lambda: dict(model=tiny_model(), x=X2.clone(), z=torch.randn(2, 5, 1, 2, 2), theta=torch.full((2, 1, 1, 1), 0.5)))
g.p("theta", torch.full((2, 1, 1, 1), -0.5), "-0.5")
g.p("theta", torch.full((3, 1, 1, 1), 0.5), "shape (3,1,1,1) for 2 inputs")
g.p("theta", 0.5, "a float (not a tensor)")
g.p("z", torch.randn(5, 1, 2, 2), "shape (5,1,2,2) (no batch axis)")
g.p("x", Lazy(lambda: X2 * NAN, "NaN"))
g.p("rotation", torch.tensor(NONORTH, dtype=torch.float32).expand(2, 4, 4), "2*I (B,4,4)")
g.p("mean", torch.full((2, 1, 2, 2), NAN), "NaN")
g.p("cls", 3, "3 (3 classes)")

g = Group("Smooth.predict", lambda x, theta, n, alpha: SMOOTH().predict(x, theta, n, alpha),
          lambda: dict(x=X.clone(), theta=0.5, n=100, alpha=0.01),
          names={"n": [r"\bn must\b"], "theta": [r"\btheta\b", r"\bsigma\b"]})
for v in (0, -5, 2.5, True, None):
    g.p("n", v)
for v, lab in ((0, None), (1, None), (-0.1, None), (NAN, None), (True, None), (None, None), ([0.05], None)):
    g.p("alpha", v, lab)
g.p("alpha", "0.05", "'0.05'", why="a string is accepted as alpha (float('0.05')); wrong type silently coerced",
    fix="check_probability: reject str (and bool) before float(value).")
g.p("theta", -0.5)
g.p("x", torch.full((1, 2, 2), NAN), "all-NaN")

g = Group("Smooth.certify", lambda x, theta, n0, n, alpha, rotation=None, generator=None:
          SMOOTH().certify(x, theta, n0, n, alpha, rotation, generator),
          lambda: dict(x=X.clone(), theta=0.5, n0=10, n=100, alpha=0.01),
          names={"n": [r"\bn must\b"], "theta": [r"\btheta\b", r"\bsigma\b"]})
g.p("x", torch.full((1, 2, 2), NAN), "all-NaN")
g.p("x", torch.full((2, 2), 0.5), "shape (2,2)")
g.p("x", torch.full((1, 2, 2), 128, dtype=torch.uint8), "uint8 image (value 128)",
    why="integer image certified as if 0..255 were [0,1] pixels (optimize_* rejects it)",
    fix="Reject non-floating x in Smooth._check_x with ValueError naming x.")
g.p("x", None, fix=FIX_X)
for v, lab in ((0, None), (-1, None), (NAN, None), (INF, None), (np.full(3, 0.5), "shape (3,)")):
    g.p("theta", v, lab)
g.p("theta", 1e39, "1e39 (overflows float32)", fix="check_scale: check finiteness after the float32 cast and name sigma.")
g.p("theta", 1e-300, "1e-300 (underflows float32 to 0)", names=[r"float32"])
g.p("theta", "0.5", "'0.5'", fix="check_scale: catch torch.as_tensor's error, raise ValueError naming theta/sigma.")
g.p("theta", True, why="bool accepted as the scale 1.0", fix="Reject bool theta in check_scale.")
for v, lab in ((0, None), (-1, None), (2.5, None), (True, None), ("10", "'10'"), (None, None)):
    g.p("n0", v, lab)
for v, lab in ((0, None), (-1, None), (2.5, None), (True, None), ("100", "'100'"), (None, None), (NAN, None)):
    g.p("n", v, lab)
for v, lab in ((0, None), (1, None), (1.5, None), (-0.1, None), (NAN, None), (INF, None), (True, None),
               (None, None), ([0.01], None)):
    g.p("alpha", v, lab)
g.p("alpha", "0.01", "'0.01'", why="a string is accepted as alpha; wrong type silently coerced",
    fix="check_probability: reject str and bool before float(value).")
g.p("rotation", torch.tensor(NONORTH), "2*I (not orthogonal)")
g.p("rotation", torch.eye(3), "I_3")
g.p("rotation", NANROT, "all-NaN ndarray")
g.p("generator", "g", "'g'", fix=FIX_GEN)

g = Group("lower_confidence_bound", certify.lower_confidence_bound, dict(k=90, n=100, alpha=0.01),
          names={"k": [r"\bk must\b"], "n": [r"\bn must\b"]})
for v, lab in ((-1, None), (101, None), (1.5, None), (NAN, None), (INF, None), ("90", "'90'"), (None, None),
               (True, None), ([90, 200], None)):
    g.p("k", v, lab)
g.p("k", 90 + 0j, "complex 90+0j", fix="Check np.iscomplexobj(k) / dtype kind in 'iuf' before np.floor; raise ValueError naming k.")
for v, lab in ((0, None), (-1, None), (2.5, None), (True, None), ("100", "'100'"), (None, None), (NAN, None)):
    g.p("n", v, lab)
for v, lab in ((0, None), (1, None), (NAN, None), (-1, None), (None, None)):
    g.p("alpha", v, lab)

FIX_CFB_COUNT = ("Validate count and n in certificate_from_bound: ints with 0 <= count <= n (n >= 1 unless both are the "
                 "default 0), ValueError naming them.")
FIX_CFB_ROT = ("Validate rotation in certificate_from_bound with noise.check_rotation semantics (shape (d, d), finite, "
               "orthogonal) for BOTH norms, naming rotation.")
g = Group("certificate_from_bound", certify.certificate_from_bound,
          lambda: dict(prediction=0, p_lower=0.9, theta=THETA4.copy(), norm="l2", count=90, n=100))
for v, lab in ((-2, None), (1.5, None), (True, None), ("0", "'0'"), (None, None), (NAN, None)):
    g.p("prediction", v, lab)
for v, lab in ((NAN, None), (INF, None), (-0.1, None), (1.5, None), (1.0, "1.0 (l2: infinite radius)"),
               (True, "True")):
    g.p("p_lower", v, lab)
g.p("p_lower", "0.9", "'0.9'", why="a string is accepted as p_lower (float('0.9'))",
    fix="Reject str/bool p_lower before float().")
g.p("p_lower", None, fix="Wrap float(p_lower) in try/except and raise ValueError('p_lower must be a probability ...').")
g.p("p_lower", np.array([0.9, 0.8]), "array([0.9, 0.8])", fix="Wrap float(p_lower) and raise ValueError naming p_lower (a scalar).")
for v, lab in ((np.array([]), "[]"), (np.zeros(4), "zeros(4)"), (-THETA4, "-0.5 x4"), (np.full(4, NAN), "NaN x4"),
               (np.full(4, INF), "inf x4"), (None, None)):
    g.p("theta", v, lab)
g.p("theta", "abc", "'abc'", fix="Wrap np.asarray(theta, float64) and raise ValueError naming theta.")
for v, lab in (("l3", "'l3'"), ("L2", "'L2'"), (None, None), (2, None), ("linf", "'linf'")):
    g.p("norm", v, lab)
g.p("count", -5, why="negative vote count stored in the Certificate", fix=FIX_CFB_COUNT)
g.p("count", 150, "150 (> n=100)", why="count > n: more votes than samples", fix=FIX_CFB_COUNT)
g.p("count", 1.5, why="non-integer count stored", fix=FIX_CFB_COUNT)
g.p("count", "ninety", "'ninety'", why="a string count stored in the Certificate", fix=FIX_CFB_COUNT)
g.p("count", None, why="None stored as the count", fix=FIX_CFB_COUNT)
g.p("n", -1, why="negative sample count stored", fix=FIX_CFB_COUNT)
g.p("n", 0, "0 (count=90)", why="90 votes out of 0 samples", fix=FIX_CFB_COUNT)
g.p("n", 2.5, why="non-integer sample count stored", fix=FIX_CFB_COUNT)
g.p("n", "100", "'100'", why="string sample count stored", fix=FIX_CFB_COUNT)
g.p("rotation", NONORTH, "2*I (l2)", why="the rotation is ignored for l2 without being checked: a non-orthogonal U is "
    "certified as if it described an ellipsoid with these semi-axes", fix=FIX_CFB_ROT)
g.p("rotation", NANROT, "NaN 4x4 (l2)", why="NaN rotation silently ignored", fix=FIX_CFB_ROT)
g.p("rotation", "abc", "'abc' (l2)", why="a string rotation silently ignored", fix=FIX_CFB_ROT)
g.p("rotation", np.eye(3), "I_3 (l2, wrong size)", why="wrong-size rotation silently ignored", fix=FIX_CFB_ROT)

g = Group("certificate_from_bound (norm='l1', rotation=U)", certify.certificate_from_bound,
          lambda: dict(prediction=0, p_lower=0.9, theta=THETA4.copy(), norm="l1", count=90, n=100, rotation=U4.copy()))
g.p("rotation", NONORTH, "2*I", why="non-orthogonal U gives a radius computed as if it were a rotation", fix=FIX_CFB_ROT)
g.p("rotation", NANROT, "NaN 4x4", why="radius is NaN", fix=FIX_CFB_ROT)
g.p("rotation", np.eye(3), "I_3 (wrong size)", fix=FIX_CFB_ROT)
g.p("rotation", np.zeros((4, 4)), "zeros (singular)", why="radius = gap / 0 column norm", fix=FIX_CFB_ROT)
g.p("rotation", "abc", "'abc'", fix=FIX_CFB_ROT)

# ================================================================================================
# regions.py
# ================================================================================================
FIX_REG = ("regions.*: validate theta/scales (finite, > 0, non-empty) and gap (finite, >= 0) with ValueError naming them, "
           "as certificate_from_bound already does.")
g = Group("regions.gap_from_lower_bound", regions.gap_from_lower_bound, dict(p_lower=0.9, norm="l2"))
for v, lab in ((NAN, None), (-0.1, None), (1.5, None), (None, None)):
    g.p("p_lower", v, lab)
g.p("p_lower", 1.0, "1.0 (l2)", why="returns an infinite gap (unbounded certificate); certificate_from_bound refuses it",
    fix="Refuse p_lower = 1 for l2 here too (or document inf) with ValueError naming p_lower.")
g.p("p_lower", "0.9", "'0.9'", why="string accepted as a probability", fix="Reject str/bool p_lower.")
g.p("p_lower", True, "True", why="bool accepted as p_lower = 1.0, giving gap inf", fix="Reject bool p_lower.")
for v, lab in (("l3", "'l3'"), (None, None)):
    g.p("norm", v, lab)

g = Group("regions.semi_axes", regions.semi_axes, lambda: dict(theta=THETA4.copy(), gap=1.0), fix=FIX_REG)
g.p("theta", -THETA4, "-0.5 x4", why="negative semi-axes")
g.p("theta", np.full(4, NAN), "NaN x4", why="NaN semi-axes")
g.p("theta", "abc", "'abc'")
g.p("gap", -1.0, why="negative semi-axes from a negative gap")
g.p("gap", NAN, why="NaN semi-axes")
g.p("gap", np.array([1.0, 2.0]), "[1, 2] (2 gaps for one 4-dim theta)",
    why="theta of 4 dims silently split into two 2-dim regions", fix="Check theta.shape[:-1] == gap.shape (or broadcastable) and name both.")
g.p("gap", np.array([1.0, 2.0, 3.0]), "[1,2,3]")

g = Group("regions.enclosed_radius", regions.enclosed_radius, lambda: dict(theta=THETA4.copy(), gap=1.0, norm="l2"),
          fix=FIX_REG)
g.p("theta", -THETA4, "-0.5 x4", why="negative radius")
g.p("theta", np.full(4, NAN), "NaN x4", why="NaN radius")
g.p("theta", np.array([]), "[]")
g.p("theta", "abc", "'abc'")
g.p("gap", -1.0, why="negative radius")
g.p("gap", NAN, why="NaN radius")
g.p("norm", "l3", "'l3'", why="an unknown norm is never checked when rotation is None (radius of an 'l3' region returned)",
    fix="enclosed_radius: call check_norm(norm) before the rotation short-circuit.")
g = Group("regions.enclosed_radius (l1, rotation=U)", regions.enclosed_radius,
          lambda: dict(theta=THETA4.copy(), gap=1.0, norm="l1", rotation=U4.copy()), fix=FIX_CFB_ROT)
g.p("rotation", NONORTH, "2*I", why="non-orthogonal U used as a rotation")
g.p("rotation", np.eye(3), "I_3")
g.p("rotation", NANROT, "NaN 4x4", why="NaN radius")

g = Group("regions.log_geometric_mean", regions.log_geometric_mean, lambda: dict(theta=THETA4.copy()), fix=FIX_REG)
g.p("theta", -THETA4, "-0.5 x4", why="NaN (log of negative)")
g.p("theta", np.zeros(4), "zeros(4)", why="-inf")
g.p("theta", np.array([]), "[]", why="NaN mean of nothing")
g.p("theta", np.full(4, NAN), "NaN x4", why="NaN")

g = Group("regions.proxy_radius", regions.proxy_radius, lambda: dict(theta=THETA4.copy(), gap=1.0), fix=FIX_REG)
g.p("theta", -THETA4, "-0.5 x4", why="NaN proxy radius")
g.p("theta", np.zeros(4), "zeros(4)", why="proxy radius 0 from zero scales")
g.p("gap", -1.0, why="negative proxy radius")
g.p("gap", NAN, why="NaN proxy radius")

g = Group("regions.log_volume", regions.log_volume, lambda: dict(theta=THETA4.copy(), gap=1.0, norm="l2"), fix=FIX_REG)
g.p("theta", -THETA4, "-0.5 x4", why="NaN log-volume")
g.p("theta", np.zeros(4), "zeros(4)", why="log-volume -inf from zero scales")
g.p("theta", np.full(4, NAN), "NaN x4", why="NaN log-volume")
g.p("gap", NAN, why="a NaN gap is reported as volume 0 (log -inf) instead of an error")
g.p("norm", "l3", "'l3'")

g = Group("regions.region_norm", regions.region_norm,
          lambda: dict(delta=np.full(4, 0.1), scales=THETA4.copy(), norm="l2"), fix=FIX_REG)
g.p("scales", np.zeros(4), "zeros(4)", why="inf norm from zero scales")
g.p("scales", -THETA4, "-0.5 x4", why="negative semi-axes accepted (sign squared away)")
g.p("scales", np.full(4, NAN), "NaN x4", why="NaN norm")
g.p("delta", np.full(4, NAN), "NaN x4", why="NaN norm")
g.p("delta", np.full(3, 0.1), "shape (3,)")
g.p("norm", "l3", "'l3'")
g.p("rotation", NONORTH, "2*I", why="non-orthogonal rotation used", fix=FIX_CFB_ROT)

g = Group("regions.contains", regions.contains,
          lambda: dict(points=np.full(4, 0.1), center=np.zeros(4), scales=THETA4.copy(), norm="l2"), fix=FIX_REG)
g.p("scales", -THETA4, "-0.5 x4", why="region with negative semi-axes reported as containing the point")
g.p("scales", np.zeros(4), "zeros(4)", why="membership in a degenerate region")
g.p("points", np.full(4, NAN), "NaN x4", why="a NaN point is reported as 'not contained' instead of an error")
g.p("center", np.zeros(3), "shape (3,)")
g.p("norm", "l3", "'l3'")
g.p("rotation", NONORTH, "2*I", why="non-orthogonal rotation used", fix=FIX_CFB_ROT)

# ================================================================================================
# noise.py
# ================================================================================================
g = Group("noise.check_noise", noise.check_noise, dict(noise="gaussian"))
for v, lab in (("laplace", "'laplace'"), (None, None), (1, None), (["gaussian"], None)):
    g.p("noise", v, lab)

FIX_UL = "uniform_lambda: sigma = check_positive(sigma, 'sigma') first."
g = Group("noise.uniform_lambda", noise.uniform_lambda, dict(sigma=0.5), fix=FIX_UL)
g.p("sigma", -1.0, why="negative half-width lambda")
g.p("sigma", 0.0, why="lambda 0 (no noise)")
g.p("sigma", NAN, why="NaN lambda")
g.p("sigma", INF, why="infinite lambda")
g.p("sigma", "0.5", "'0.5'")
g.p("sigma", None)

g = Group("noise.check_rotation", noise.check_rotation, lambda: dict(rotation=torch.eye(4), dim=4))
g.p("rotation", torch.tensor(NONORTH), "2*I")
g.p("rotation", torch.eye(3), "I_3")
g.p("rotation", torch.tensor(NANROT), "NaN 4x4")
g.p("rotation", "x", "'x'", fix="check_rotation: catch torch.as_tensor's error and raise ValueError naming rotation.")
FIX_DIM = "check_rotation: dim = check_count(dim, 'dim') and atol = finite number >= 0 (ValueError naming them)."
g.p("dim", 0, fix=FIX_DIM)
g.p("dim", -1, fix=FIX_DIM)
g.p("dim", 2.5, fix=FIX_DIM)
g.p("atol", -1.0, "-1.0 (identity rotation)", fix=FIX_DIM)
g.p("atol", NAN, "nan (identity rotation)", why="a NaN tolerance disables the orthogonality check (err > nan is False)",
    fix=FIX_DIM)
g.p("atol", "x", "'x'", fix=FIX_DIM)

FIX_SN = "standard_noise: check num with check_count(num, 'num', 0), shape as positive ints, dtype floating, naming them."
g = Group("noise.standard_noise", noise.standard_noise, dict(noise="gaussian", num=5, shape=(1, 2, 2)), fix=FIX_SN)
g.p("noise", "laplace", "'laplace'")
g.p("num", -1)
g.p("num", 2.5)
g.p("shape", (-1,), "(-1,)")
g.p("shape", "ab", "'ab'")
g.p("dtype", torch.int64)
g.p("device", "tpu", "'tpu'")
g.p("out", torch.empty(3, 1, 2, 2), "tensor of shape (3,1,2,2)")
g.p("generator", "x", "'x'", fix=FIX_GEN)

FIX_SCN = "scale_noise: validate theta (finite, > 0, broadcastable to eps) and rotation (check_rotation) with ValueErrors naming them."
g = Group("noise.scale_noise", noise.scale_noise,
          lambda: dict(eps=torch.randn(5, 1, 2, 2, generator=gen()), theta=torch.tensor(0.5)), fix=FIX_SCN)
g.p("theta", torch.tensor(-0.5), "-0.5", why="negative scale accepted")
g.p("theta", torch.tensor(NAN), "nan", why="NaN noise returned")
g.p("theta", torch.ones(3, 1, 1), "shape (3,1,1)", why="theta broadcast against the noise: 1-channel draws become "
    "3-channel noise of shape (5,3,2,2)")
g.p("rotation", torch.tensor(NONORTH, dtype=torch.float32), "2*I", why="non-orthogonal 'rotation' applied")
g.p("rotation", torch.eye(3), "I_3")

g = Group("noise.sample_noise", noise.sample_noise, dict(noise="gaussian", theta=0.5, num=5, shape=(1, 2, 2)))
g.p("noise", "x", "'x'")
for v, lab in ((0, None), (NAN, None), (-1, None)):
    g.p("theta", v, lab)
g.p("theta", "a", "'a'", fix="check_scale: catch torch.as_tensor's error and raise ValueError naming theta.")
g.p("num", 0)
g.p("num", 2.5)
g.p("shape", (-1, 2), "(-1, 2)", fix="sample_noise: validate shape as a tuple of positive ints (ValueError naming shape).")
g.p("shape", "abc", "'abc'", fix="sample_noise: validate shape as a tuple of positive ints.")
g.p("rotation", torch.tensor(NONORTH), "2*I")
g.p("dtype", torch.int64, fix="sample_noise: require a floating dtype (ValueError naming dtype).")

# ================================================================================================
# geometry.py
# ================================================================================================
FIX_GEO = ("geometry.*: validate scales (finite, > 0, non-empty), centres (finite) and matching last-axis sizes once at "
           "the public entry points, with ValueError naming the argument.")
CA, CB, SA, SB = np.zeros(4), np.full(4, 2.0), np.full(4, 0.5), np.full(4, 0.5)
g = Group("geometry.outer_ball_radius", geometry.outer_ball_radius, lambda: dict(scales=SA.copy()), fix=FIX_GEO)
g.p("scales", np.array([]), "[]")
g.p("scales", -SA, "-0.5 x4", why="negative radius")
g.p("scales", np.full(4, NAN), "NaN x4", why="NaN radius")
g = Group("geometry.inner_ball_radius", geometry.inner_ball_radius, lambda: dict(scales=SA.copy()), fix=FIX_GEO)
g.p("scales", np.array([]), "[]")
g.p("scales", -SA, "-0.5 x4", why="negative radius")
g.p("scales", np.full(4, NAN), "NaN x4", why="NaN radius")

g = Group("geometry.max_intersect", geometry.max_intersect,
          lambda: dict(center_a=CA.copy(), radius_a=1.0, center_b=CB.copy(), radius_b=1.0, norm="l2"), fix=FIX_GEO)
g.p("radius_a", -1.0, why="negative ball radius accepted")
g.p("radius_a", NAN, why="NaN radius answers 'may intersect' silently")
g.p("center_a", np.full(4, NAN), "NaN x4", why="NaN centre answers 'may intersect' silently")
g.p("center_b", np.full(3, 2.0), "shape (3,)")
g.p("norm", "l3", "'l3'")

FIX_BIS = "bisect: check iterations with check_count(iterations, 'iterations', 0), lo <= hi finite, root_above callable."
g = Group("geometry.bisect", geometry.bisect,
          lambda: dict(root_above=lambda m: m < 0.3, lo=np.zeros(1), hi=np.ones(1), iterations=60), fix=FIX_BIS)
g.p("iterations", -1, why="no bisection: returns the initial bracket [0, 1]")
g.p("iterations", 1.5)
g.p("lo", np.full(1, 2.0), "[2.0] (> hi)", why="an inverted bracket is 'bisected' without complaint")
g.p("hi", np.full(1, NAN), "[nan]", why="NaN bracket")
g.p("root_above", None)

g = Group("geometry.k_function", geometry.k_function,
          lambda: dict(t=0.5, diff=CB - CA, scales_a=SA.copy(), scales_b=SB.copy()), fix=FIX_GEO)
g.p("t", 1.5, why="K(t) evaluated outside t in (0, 1)")
g.p("t", NAN, why="NaN")
g.p("scales_a", np.zeros(4), "zeros(4)", why="degenerate ellipsoid accepted")
g.p("scales_a", -SA, "-0.5 x4", why="negative semi-axes squared away")
g.p("diff", np.full(3, 2.0), "shape (3,)")

g = Group("geometry.minimize_k", geometry.minimize_k,
          lambda: dict(center_a=CA.copy(), scales_a=SA.copy(), center_b=CB.copy(), scales_b=SB.copy()), fix=FIX_GEO)
g.p("scales_a", -SA, "-0.5 x4", why="negative semi-axes squared away")
g.p("scales_a", np.zeros(4), "zeros(4)", why="degenerate ellipsoid")
g.p("center_a", np.full(4, NAN), "NaN x4", why="NaN K")
g.p("iterations", -1, why="no bisection: t = 0.5 returned as the minimiser", fix=FIX_BIS)
g.p("iterations", 2.5, fix=FIX_BIS)

g = Group("geometry.separated", geometry.separated,
          lambda: dict(center_a=CA.copy(), scales_a=SA.copy(), center_b=CB.copy(), scales_b=SB.copy()), fix=FIX_GEO)
g.p("scales_a", -SA, "-0.5 x4", why="negative semi-axes accepted")
g.p("center_b", np.full(4, NAN), "NaN x4", why="NaN centre answers 'not separated' silently")

g = Group("geometry.ellipsoids_intersect", geometry.ellipsoids_intersect,
          lambda: dict(center_a=CA.copy(), scales_a=SA.copy(), center_b=CB.copy(), scales_b=SB.copy()), fix=FIX_GEO)
g.p("scales_a", -SA, "-0.5 x4", why="negative semi-axes accepted")
g.p("scales_a", np.zeros(4), "zeros(4)", why="degenerate ellipsoid accepted")
g.p("scales_a", np.full(4, NAN), "NaN x4", why="NaN semi-axes: answers silently")
g.p("center_a", np.full(4, NAN), "NaN x4", why="NaN centre: answers silently")
g.p("center_b", np.full(3, 2.0), "shape (3,)")
g.p("scales_b", np.array([]), "[]")
g = Group("geometry.cross_polytopes_intersect", geometry.cross_polytopes_intersect,
          lambda: dict(center_a=CA.copy(), scales_a=SA.copy(), center_b=CB.copy(), scales_b=SB.copy()), fix=FIX_GEO)
g.p("scales_a", -SA, "-0.5 x4", why="negative semi-axes accepted")
g = Group("geometry.intersect", geometry.intersect,
          lambda: dict(center_a=CA.copy(), scales_a=SA.copy(), center_b=CB.copy(), scales_b=SB.copy(), norm="l2"),
          fix=FIX_GEO)
g.p("norm", "l3", "'l3'")
g.p("scales_b", -SB, "-0.5 x4", why="negative semi-axes accepted")

g = Group("geometry.project_onto_ellipsoid", geometry.project_onto_ellipsoid,
          lambda: dict(y=np.full(4, 2.0), scales=SA.copy()), fix=FIX_GEO)
g.p("scales", np.zeros(4), "zeros(4)", why="projection onto a degenerate ellipsoid")
g.p("scales", -SA, "-0.5 x4", why="negative semi-axes squared away")
g.p("y", np.full(4, NAN), "NaN x4", why="NaN projection / distance")
g.p("iterations", -1, why="no bisection: distance lower bound 0 for a point outside", fix=FIX_BIS)
g.p("iterations", 1.5, fix=FIX_BIS)

g = Group("geometry.l1_distance_to_cross_polytope", geometry.l1_distance_to_cross_polytope,
          lambda: dict(y=np.full(4, 2.0), scales=SA.copy()), fix=FIX_GEO)
g.p("scales", -SA, "-0.5 x4", why="negative semi-axes: meaningless distance")
g.p("scales", np.zeros(4), "zeros(4)", why="division by zero")
g.p("y", np.full(4, NAN), "NaN x4", why="NaN distance")
g = Group("geometry.paper_l1_projection_radius", geometry.paper_l1_projection_radius,
          lambda: dict(y=np.full(4, 2.0), scales=SA.copy()), fix=FIX_GEO)
g.p("scales", np.zeros(4), "zeros(4)", why="NaN/inf radius from zero scales")

g = Group("geometry.distance_to_region", geometry.distance_to_region,
          lambda: dict(point=CB.copy(), center=CA.copy(), scales=SA.copy(), norm="l2"), fix=FIX_GEO)
g.p("scales", -SA, "-0.5 x4 (l2)", why="negative semi-axes accepted")
g.p("point", np.full(4, NAN), "NaN x4", why="NaN distance")
g.p("center", np.zeros(3), "shape (3,)")
g.p("norm", "l3", "'l3'")
g = Group("geometry.distance_to_region (l1)", geometry.distance_to_region,
          lambda: dict(point=CB.copy(), center=CA.copy(), scales=SA.copy(), norm="l1"), fix=FIX_GEO)
g.p("scales", -SA, "-0.5 x4", why="negative semi-axes: distance to a meaningless region")

g = Group("geometry.largest_out_subset", geometry.largest_out_subset,
          lambda: dict(center_a=CA.copy(), scales_a=SA.copy(), center_b=CB.copy(), scales_b=SB.copy(), norm="l2"),
          fix=FIX_GEO)
g.p("scales_b", -SB, "-0.5 x4", why="a negative certified radius is returned")
g.p("scales_a", -SA, "-0.5 x4", why="negative semi-axes accepted")
g.p("norm", "l3", "'l3'")

# ================================================================================================
# rotated.py
# ================================================================================================
FIX_ROT = "rotated: validate centres/points (finite, last axis n) and matrices (finite, (n, n), PD where needed), naming them."
S4 = np.full(4, 0.5)
g = Group("rotated.precision", rotated.precision, lambda: dict(rotation=U4.copy(), scales=S4.copy()))
g.p("rotation", NONORTH, "2*I")
g.p("rotation", NANROT, "NaN 4x4")
g.p("rotation", np.eye(3), "I_3")
g.p("rotation", "abc", "'abc'", fix="_as_regions: wrap np.asarray(rotation, float64) and raise ValueError naming rotation.")
g.p("scales", -S4, "-0.5 x4")
g.p("scales", np.zeros(4), "zeros(4)")
g.p("scales", np.full(4, NAN), "NaN x4")
g.p("scales", np.array([]), "[]", names=[r"\bscales\b"],
    fix="_as_regions: check scales is non-empty first ('scales must have at least one entry').")
g.p("scales", np.full(3, 0.5), "shape (3,)", names=[r"\bscales\b"])
g = Group("rotated.covariance", rotated.covariance, lambda: dict(rotation=U4.copy(), scales=S4.copy()))
g.p("rotation", NONORTH, "2*I")
g.p("scales", -S4, "-0.5 x4")

g = Group("rotated.quadratic_form", rotated.quadratic_form,
          lambda: dict(points=np.full(4, 0.1), center=np.zeros(4), q_matrix=np.eye(4)), fix=FIX_ROT)
g.p("q_matrix", -np.eye(4), "-I (negative definite)", why="negative 'squared distance'")
g.p("q_matrix", NANROT, "NaN 4x4", why="NaN")
g.p("q_matrix", np.eye(3), "I_3")
g.p("points", np.full(4, NAN), "NaN x4", why="NaN")

g = Group("rotated.contains", rotated.contains,
          lambda: dict(points=np.full(4, 0.1), center=np.zeros(4), rotation=U4.copy(), scales=S4.copy()), fix=FIX_ROT)
g.p("points", np.full(4, NAN), "NaN x4", why="NaN point reported 'not contained'")
g.p("center", np.zeros(3), "shape (3,)")
g.p("rotation", NONORTH, "2*I")
g.p("scales", -S4, "-0.5 x4")

QM = rotated.precision(U4, S4)
RM = rotated.precision(orth(4, 1), np.full(4, 0.3))
g = Group("rotated.k_function", rotated.k_function,
          lambda: dict(t=0.5, center_q=np.zeros(4), q_matrix=QM.copy(), center_r=np.full(4, 2.0), r_matrix=RM.copy()),
          fix=FIX_ROT)
g.p("t", 0.0, why="K(0) evaluated with 1/t = inf")
g.p("t", 1.5, why="K evaluated outside (0, 1)")
g.p("q_matrix", np.zeros((4, 4)), "zeros (singular)")
g.p("q_matrix", NANROT, "NaN 4x4", why="NaN")

g = Group("rotated.simultaneous_diagonalization", rotated.simultaneous_diagonalization,
          lambda: dict(cov_q=rotated.covariance(U4, S4), cov_r=np.eye(4)), fix=FIX_ROT)
g.p("cov_q", -np.eye(4), "-I (not PD)")
g.p("cov_r", NANROT, "NaN 4x4")
g.p("cov_q", np.eye(3), "I_3")

RB = lambda: dict(center_q=np.zeros(4), rotation_q=U4.copy(), scales_q=S4.copy(), center_r=np.full(4, 2.0),  # noqa: E731
                  rotation_r=orth(4, 1), scales_r=np.full(4, 0.3))
g = Group("rotated.minimize_k", rotated.minimize_k, RB, fix=FIX_ROT)
g.p("rotation_q", NONORTH, "2*I")
g.p("scales_r", -S4, "-0.5 x4")
g.p("center_q", np.full(4, NAN), "NaN x4", why="NaN K")
g.p("center_r", np.zeros(3), "shape (3,)")
g = Group("rotated.separated", rotated.separated, RB, fix=FIX_ROT)
g.p("center_q", np.full(4, NAN), "NaN x4", why="NaN centre answers 'not separated' silently")
g.p("rotation_r", NONORTH, "2*I")
g = Group("rotated.ellipsoids_intersect", rotated.ellipsoids_intersect, RB, fix=FIX_ROT)
g.p("center_q", np.full(4, NAN), "NaN x4", why="NaN centre answers silently")
g.p("rotation_r", NONORTH, "2*I")
g.p("scales_q", np.zeros(4), "zeros(4)")
g.p("center_r", np.zeros(3), "shape (3,)")

FIX_EQ6 = "eq6_*: validate lam >= 0 finite, scales > 0 finite, iterations >= 0 int, naming them."
g = Group("rotated.eq6_residual", rotated.eq6_residual, lambda: dict(lam=0.5, y=np.full(4, 2.0), q_matrix=QM.copy()),
          fix=FIX_EQ6)
g.p("lam", -1.0, why="negative Lagrange multiplier accepted")
g.p("lam", NAN, why="NaN")
g.p("q_matrix", np.eye(3), "I_3")
g = Group("rotated.eq6_multiplier", rotated.eq6_multiplier, lambda: dict(y_eigen=np.full(4, 2.0), scales=S4.copy()),
          fix=FIX_EQ6)
g.p("scales", -S4, "-0.5 x4", why="negative semi-axes squared away")
g.p("scales", np.zeros(4), "zeros(4)", why="a = inf")
g.p("iterations", -1, why="bracket not bisected")

g = Group("rotated.project_onto_ellipsoid", rotated.project_onto_ellipsoid,
          lambda: dict(y=np.full(4, 2.0), rotation=U4.copy(), scales=S4.copy()), fix=FIX_EQ6)
g.p("iterations", -1, why="distance lower bound 0 for a point outside (no bisection)")
g.p("iterations", 1.5)
g.p("y", np.full(4, NAN), "NaN x4", why="NaN projection")
g.p("rotation", NONORTH, "2*I")
g = Group("rotated.distance_to_ellipsoid", rotated.distance_to_ellipsoid,
          lambda: dict(point=np.full(4, 2.0), center=np.zeros(4), rotation=U4.copy(), scales=S4.copy()), fix=FIX_ROT)
g.p("point", np.full(4, NAN), "NaN x4", why="NaN distance")
g.p("center", np.zeros(3), "shape (3,)")
g.p("scales", -S4, "-0.5 x4")
g = Group("rotated.largest_out_subset", rotated.largest_out_subset,
          lambda: dict(center_q=np.zeros(4), rotation_q=U4.copy(), scales_q=S4.copy(), center_r=np.full(4, 2.0),
                       scales_r=np.full(4, 0.3)), fix=FIX_ROT)
g.p("scales_r", -np.full(4, 0.3), "-0.3 x4", why="negative certified radius returned")
g.p("scales_r", np.full(4, NAN), "NaN x4", why="NaN radius")
g.p("center_r", np.full(4, NAN), "NaN x4", why="NaN radius")

# ================================================================================================
# memory.py
# ================================================================================================
FIX_DEC = ("memory.decide is public: validate policy (_check_policy), pred (int >= -1), shapes and finiteness as "
           "CertificationMemory.certify does, or rename it _decide.")
g = Group("memory.decide", memory.decide,
          lambda: dict(x=np.full(4, 2.0), pred=1, scales=np.full(4, 0.5), mem_centers=np.zeros((1, 4)),
                       mem_preds=np.array([0]), mem_scales=np.full((1, 4), 0.5), norm="l2", policy="shrink"),
          fix=FIX_DEC)
g.p("policy", "bogus", "'bogus'", why="an unknown policy silently behaves as 'shrink'")
g.p("norm", "l3", "'l3'")
g.p("pred", -5, why="class -5 certified")
g.p("pred", 1.5, why="non-integer class certified")
g.p("scales", -np.full(4, 0.5), "-0.5 x4", why="negative semi-axes kept")
g.p("scales", np.full(4, NAN), "NaN x4", why="NaN semi-axes kept")
g.p("x", np.full(4, NAN), "NaN x4", why="NaN centre certified")
g.p("mem_preds", np.array([0, 1]), "2 preds for 1 centre", why="mem_preds longer than mem_centers: the extra label is ignored")
g.p("mem_centers", np.zeros((1, 3)), "shape (1,3)")
g.p("x", np.full(3, 2.0), "shape (3,)")


def mem_pipeline(dim, norm, policy="shrink"):
    m = memory.CertificationMemory(dim, norm, policy)
    return m.certify(np.full(4, 2.0), 1, np.full(4, 0.5))


g = Group("CertificationMemory(...) then .certify", mem_pipeline, dict(dim=4, norm="l2"))
for v, lab in ((0, None), (-1, None), (2.5, None), ("4", "'4'"), (None, None)):
    g.p("dim", v, lab)
g.p("dim", True, "True", names=[r"\bdim\b"], fix="CertificationMemory: reject bool dim (isinstance(dim, bool)).")
for v, lab in (("L2", "'L2'"), (None, None)):
    g.p("norm", v, lab)
for v, lab in (("worst", "'worst'"), (None, None)):
    g.p("policy", v, lab)


def mem_with_one():
    m = memory.CertificationMemory(4, "l2")
    m.certify(np.zeros(4), 0, np.full(4, 0.5))
    return m


g = Group("CertificationMemory.certify", lambda x, pred, scales: mem_with_one().certify(x, pred, scales),
          lambda: dict(x=np.full(4, 2.0), pred=1, scales=np.full(4, 0.5)))
g.p("x", np.full(4, NAN), "NaN x4")
g.p("x", np.full(3, 2.0), "shape (3,)")
g.p("x", "abc", "'abc'", fix="_row: wrap np.asarray(v, float64) and raise ValueError naming x/scales.")
for v, lab in ((-2, None), (1.5, None), (True, None), ("1", "'1'"), (None, None)):
    g.p("pred", v, lab)
for v, lab in ((np.zeros(4), "zeros(4)"), (-np.full(4, 0.5), "-0.5 x4"), (np.full(4, NAN), "NaN x4"),
               (np.full(3, 0.5), "shape (3,)")):
    g.p("scales", v, lab)

C2 = np.array([[0.0, 0, 0, 0], [3.0, 3, 3, 3]])
S2 = np.full((2, 4), 0.5)
FIX_PRED = ("_check_batch: reject labels < -1 ('preds must be class indices >= 0 or -1 (abstain), got -5'), as "
            "CertificationMemory.certify does.")
for fname, fn, extra in (("memory.algorithm1_reference", memory.algorithm1_reference, {}),
                         ("memory.certify_stream", memory.certify_stream, {})):
    g = Group(fname, fn, lambda: dict(centers=C2.copy(), preds=np.array([0, 1]), scales=S2.copy(), norm="l2"))
    g.p("centers", np.zeros(4), "1-D zeros(4)")
    g.p("centers", np.full((2, 4), NAN), "NaN (2,4)")
    g.p("centers", np.full((2, 4), INF), "inf (2,4)")
    g.p("centers", np.zeros((2, 0)), "shape (2,0)", names=[r"\bcenters\b", r"\bscales\b"],
        why="zero-dimensional inputs are 'certified'", fix="_check_batch: require centers.shape[1] >= 1.")
    g.p("preds", np.array([0.0, 1.5]), "[0, 1.5]")
    g.p("preds", np.array([0.0, NAN]), "[0, nan]")
    g.p("preds", np.array(["a", "b"]), "['a','b']")
    g.p("preds", np.array([True, False]), "[True, False]")
    g.p("preds", np.array([-5, 1]), "[-5, 1]", why="label -5 (neither a class nor ABSTAIN=-1) certified", fix=FIX_PRED)
    g.p("preds", np.array([0, 1, 1]), "3 preds for 2 inputs")
    g.p("scales", np.full((2, 3), 0.5), "shape (2,3)")
    g.p("scales", np.zeros((2, 4)), "zeros")
    g.p("scales", -S2, "-0.5 everywhere")
    g.p("scales", np.full((2, 4), NAN), "NaN")
    g.p("norm", "l3", "'l3'")
    g.p("policy", "bogus", "'bogus'")
g = Group("memory.certify_stream", memory.certify_stream,
          lambda: dict(centers=C2.copy(), preds=np.array([0, 1]), scales=S2.copy(), norm="l2"))
for v, lab in ((0, None), (-1, None), (2.5, None), (True, None), ("8", "'8'")):
    g.p("block", v, lab)

# one Algorithm 1 over region kinds (rotations) and memory provenance
PROV = memory.Provenance("model-a", "gaussian", "l2", 0.25)
for fname, fn in (("memory.algorithm1_reference", memory.algorithm1_reference),
                  ("memory.certify_stream", memory.certify_stream)):
    g = Group(fname + " (rotations, provenance)", fn,
              lambda: dict(centers=C2.copy(), preds=np.array([0, 1]), scales=np.array([[0.5, 0.4, 0.3, 0.2]] * 2),
                           norm="l2", rotations=[U4.copy(), None], provenance=PROV),
              names={"rotations": [r"\brotations\b"], "provenance": [r"\bprovenance\b"]})
    g.p("rotations", [NONORTH, None], "[2*I, None]")
    g.p("rotations", [U4.copy()], "[U] (1 entry for 2 inputs)")
    g.p("norm", "l1", "'l1' with a rotation", names=[r"\brotations\b", r"\bprovenance\b"])
    g.p("provenance", "model-a", "'model-a'")
    g.p("provenance", [PROV, memory.Provenance("model-b", "gaussian", "l2", 0.25)], "[model-a, model-b]")
    g.p("provenance", memory.Provenance("model-a", "uniform", "l1"), "an l1 provenance")
    g.p("provenance", [PROV], "1 entry for 2 inputs")

g = Group("memory.Provenance", memory.Provenance, dict(model="model-a", noise="gaussian", norm="l2", sigma=0.25))
g.p("model", "", "''")
g.p("model", None)
g.p("noise", 3)
g.p("norm", "l3", "'l3'")
for v, lab in ((0.0, None), (-1.0, None), (NAN, None), (True, None), ("0.25", "'0.25'")):
    g.p("sigma", v, lab)


def mem_with_provenance(rotation=None, provenance=PROV):
    m = memory.CertificationMemory(4, "l2", provenance=PROV)
    m.certify(np.zeros(4), 0, np.full(4, 0.5))
    return m.certify(np.full(4, 2.0), 1, np.array([0.5, 0.4, 0.3, 0.2]), rotation=rotation, provenance=provenance)


g = Group("CertificationMemory.certify (rotation, provenance)", mem_with_provenance,
          lambda: dict(rotation=U4.copy(), provenance=PROV))
g.p("rotation", NONORTH, "2*I")
g.p("rotation", np.eye(3), "I_3")
g.p("rotation", "abc", "'abc'")
g.p("provenance", memory.Provenance("model-b", "gaussian", "l2", 0.25), "another model")
g.p("provenance", memory.Provenance("model-a", "gaussian", "l2", 0.5), "another sigma")
g.p("provenance", "model-a", "'model-a'")

# ================================================================================================
# rotated_memory.py
# ================================================================================================
for fname, fn in (("rotated_memory.algorithm1_reference_rotated", rotated_memory.algorithm1_reference_rotated),
                  ("rotated_memory.certify_stream_rotated", rotated_memory.certify_stream_rotated)):
    g = Group(fname, fn, lambda: dict(centers=C2.copy(), preds=np.array([0, 1]),
                                      scales=np.array([[0.5, 0.4, 0.3, 0.2]] * 2), rotations=[U4.copy(), None]),
              names={"rotations": [r"\brotations\b"]})
    g.p("rotations", [U4.copy()], "[U] (1 entry for 2 inputs)")
    g.p("rotations", [NONORTH, None], "[2*I, None]")
    g.p("rotations", [NANROT, None], "[NaN, None]")
    g.p("rotations", "abc", "'abc'")
    g.p("rotations", np.eye(4), "np.eye(4) (one matrix, not a list)")
    g.p("rotations", [np.eye(3), None], "[I_3, None]")
    g.p("rotations", {0: U4}, "dict")
    g.p("rotations", [U4.astype(np.float32), None], "[U as float32, None]")
    g.p("preds", np.array([-5, 1]), "[-5, 1]", why="label -5 certified", fix=FIX_PRED)
    g.p("policy", "bogus", "'bogus'")
    g.p("scales", -np.full((2, 4), 0.5), "-0.5 everywhere")

# ================================================================================================
# metrics.py
# ================================================================================================
R3, C3 = np.array([0.5, 0.0, 1.0]), np.array([True, False, True])
g = Group("metrics.check_correct", metrics.check_correct, lambda: dict(correct=C3.copy()))
for v, lab in ((np.array(["True", "False"]), "['True','False']"), (np.array([NAN]), "[nan]"), (np.array([2]), "[2]"),
               (np.array([0.5]), "[0.5]"), (None, None)):
    g.p("correct", v, lab)

g = Group("metrics.certified_accuracy", metrics.certified_accuracy,
          lambda: dict(radius=R3.copy(), correct=C3.copy(), at=0.5))
for v, lab in ((np.array([-0.5, 0, 1]), "[-0.5, 0, 1]"), (np.array([NAN, 0, 1]), "[nan, 0, 1]"),
               (np.array([]), "[]"), (np.ones((3, 1)), "shape (3,1)"), (np.array([0.5, 1.0]), "length 2")):
    g.p("radius", v, lab)
g.p("radius", "abc", "'abc'", fix="_arrays: wrap np.asarray(radius, float64) and raise ValueError naming radius.")
g.p("correct", np.array(["yes", "no", "yes"]), "['yes','no','yes']")
g.p("correct", np.array([1, 0]), "length 2")
g.p("at", NAN)
g.p("at", INF)
g.p("at", -1.0, why="certified accuracy 'at a negative radius' (= clean accuracy) returned",
    fix="certified_accuracy: require at >= 0 ('at must be radii >= 0').")
g.p("at", "abc", "'abc'", fix="certified_accuracy: wrap np.asarray(at, float64), raise ValueError naming at.")

FIX_CURVE = "certified_accuracy_curve: points = check_count(points, 'points', 2); max_radius finite > 0 (ValueError naming it)."
g = Group("metrics.certified_accuracy_curve", metrics.certified_accuracy_curve,
          lambda: dict(radius=R3.copy(), correct=C3.copy(), points=10), fix=FIX_CURVE)
g.p("points", 0, why="empty curve returned")
g.p("points", -1)
g.p("points", 2.5)
g.p("points", "10", "'10'")
g.p("max_radius", -1.0, why="a curve on [0, 1e-12] returned for a negative max_radius")
g.p("max_radius", NAN)
g.p("max_radius", "abc", "'abc'")

g = Group("metrics.average_certified_radius", metrics.average_certified_radius,
          lambda: dict(radius=R3.copy(), correct=C3.copy()))
g.p("radius", np.array([-0.5, 0, 1]), "[-0.5, 0, 1]")
g.p("radius", np.array([INF, 0, 1]), "[inf, 0, 1]")
g.p("correct", np.array([2, 0, 1]), "[2, 0, 1]")

DF = lambda: pd.DataFrame(dict(sigma=[0.25, 0.25, 0.5], radius=R3.copy(), radius_proxy=R3 * 1.2,  # noqa: E731
                               correct=C3.copy()))
FIX_TAB = ("summary_table: check that results is a DataFrame holding group + radius_col + proxy_col + 'correct', that "
           "group is a list of column names, and radii finite >= 0; ValueError naming the argument.")
g = Group("metrics.summary_table", metrics.summary_table, lambda: dict(results=DF(), radii=[0.0, 0.5], group=["sigma"]),
          fix=FIX_TAB)
g.p("results", Lazy(lambda: DF().drop(columns="correct"), "DataFrame without 'correct'"))
g.p("results", Lazy(lambda: DF().to_dict("list"), "a dict of lists"))
g.p("group", ["nope"], "['nope']")
g.p("group", "sigma", "'sigma' (a str, not a list)", why="the group key is spelt out letter by letter: column 's' "
    "instead of 'sigma'")
g.p("radius_col", "nope", "'nope'")
g.p("radii", [-1.0], "[-1.0]", why="accuracy 'at radius -1' reported")
g.p("radii", [NAN], "[nan]", names=[r"\bradii must"], note="message names certified_accuracy's 'at'")
g.p("radii", "0.5", "'0.5'")

g = Group("metrics.best_over", metrics.best_over, lambda: dict(table=DF(), over="sigma", group=["correct"]),
          fix="best_over: check that `over` and every `group` entry are columns of table (ValueError naming them).")
g.p("over", "nope", "'nope'", why="an unknown column to maximise over is ignored: 'sigma' is treated as a value column")
g.p("group", ["nope"], "['nope']")
g = Group("metrics.best_curve", metrics.best_curve, lambda: dict(results=DF(), over="sigma", at=[0.0, 0.5]),
          fix="best_curve: check over/radius_col are columns and results is non-empty (ValueError naming them).")
g.p("over", "nope", "'nope'")
g.p("at", [NAN], "[nan]")
g.p("results", Lazy(lambda: DF().iloc[:0], "empty DataFrame"))

# ================================================================================================
# optimize.py
# ================================================================================================
TH2 = lambda: torch.full((2, 1, 1, 1), 0.5)  # noqa: E731
FIX_SP = ("smoothed_probabilities: validate theta (finite, > 0, broadcastable to x), samples (check_count), x (batch "
          "of >= 2 dims), rotation (orthogonal (B, n, n)), with ValueErrors naming them.")
g = Group("optimize.smoothed_probabilities", optimize.smoothed_probabilities,
          lambda: dict(model=tiny_model(), x=X2.clone(), theta=TH2(), noise="gaussian", samples=10), fix=FIX_SP)
g.p("theta", Lazy(lambda: -TH2(), "-0.5"), why="negative scale accepted (probabilities of |theta|)")
g.p("theta", Lazy(lambda: TH2() * NAN, "nan"))
g.p("theta", torch.full((3, 1, 1, 1), 0.5), "shape (3,1,1,1) for 2 inputs")
g.p("samples", 0, why="probabilities from zero samples (NaN)")
g.p("samples", -1)
g.p("noise", "bad", "'bad'")
g.p("x", torch.full((4,), 0.5), "1-D (4,)")
g.p("rotation", torch.tensor(NONORTH, dtype=torch.float32).expand(2, 4, 4), "2*I (B,4,4)",
    why="non-orthogonal rotation applied to the noise")
g.p("rotation", torch.eye(3).expand(2, 3, 3), "I_3 (B,3,3)")

FIX_PG = "proxy_gap: check_noise(noise); probs (B, K>=2) finite in [0, 1]; clamp in (0, 0.5) (ValueError naming them)."
g = Group("optimize.proxy_gap", optimize.proxy_gap, lambda: dict(probs=torch.tensor([[0.7, 0.2, 0.1]]), noise="gaussian"),
          fix=FIX_PG)
g.p("noise", "laplace", "'laplace'", why="an unknown noise silently gets the uniform (l1) gap p1 - p2")
g.p("probs", torch.tensor([[1.0]]), "one class")
g.p("probs", torch.tensor([[NAN, 0.2, 0.1]]), "[[nan, .2, .1]]", why="NaN gap")
g.p("probs", torch.tensor([[5.0, -3.0, 0.0]]), "[[5, -3, 0]] (not probabilities)", why="gap of non-probabilities")
g.p("clamp", 0.6, why="clamp > 0.5 (min > max) turns every probability into 0.4: gap 0")
g.p("clamp", NAN, why="NaN gap")

FIX_OI = "optimize_isotropic: reject bool/str for lr, theta0; wrap torch.as_tensor(theta0) and the expand in ValueErrors naming theta0."
g = Group("optimize.optimize_isotropic", optimize.optimize_isotropic,
          lambda: dict(model=tiny_model(), x=X2.clone(), theta0=0.5, noise="gaussian", iterations=2, lr=1e-2, samples=10),
          fix=FIX_OI)
for v, lab in ((0, None), (-1, None), (NAN, None)):
    g.p("theta0", v, lab)
g.p("theta0", "0.5", "'0.5'")
g.p("theta0", torch.full((3,), 0.5), "shape (3,) for 2 inputs")
g.p("theta0", True, why="bool accepted as theta0 = 1.0")
g.p("x", Lazy(lambda: X2 * NAN, "NaN"))
g.p("x", torch.ones(2, 1, 2, 2, dtype=torch.int64), "int64 tensor")
g.p("x", torch.full((4,), 0.5), "1-D (4,)")
g.p("x", torch.empty(0, 1, 2, 2), "empty batch (0,1,2,2)",
    fix="_check_inputs: require x.shape[0] >= 1 ('x must hold at least one input').")
g.p("x", "abc", "'abc'", fix="_check_inputs: require a torch.Tensor x (TypeError naming x).")
g.p("noise", "bad", "'bad'")
for v, lab in ((-1, None), (1.5, None), (True, None)):
    g.p("iterations", v, lab)
for v, lab in ((0, None), (NAN, None), (-1, None)):
    g.p("lr", v, lab)
g.p("lr", True, why="bool accepted as lr = 1.0", fix="check_positive: reject bool (and str).")
g.p("samples", 0)
for v, lab in ((0, None), (NAN, None), (-1, None)):
    g.p("min_theta", v, lab)

FIX_OA = "optimize_ancer: kappa must be a finite number >= 0 (reject inf/str with ValueError); validate rotation via check_rotation."
g = Group("optimize.optimize_ancer", optimize.optimize_ancer,
          lambda: dict(model=tiny_model(), x=X2.clone(), theta_iso=torch.tensor([0.5, 0.5]), noise="gaussian",
                       iterations=2, lr=0.04, samples=10, kappa=2.0), fix=FIX_OA)
g.p("kappa", -1.0)
g.p("kappa", NAN)
g.p("kappa", INF, why="kappa = inf makes the objective inf/NaN")
g.p("kappa", "2", "'2'")
for v, lab in ((torch.zeros(2), "zeros(2)"), (torch.full((2,), -0.5), "-0.5 x2"), (torch.full((2,), NAN), "nan x2"),
               (torch.full((3,), 0.5), "shape (3,)")):
    g.p("theta_iso", v, lab)
g.p("theta_iso", "a", "'a'")
g.p("rotation", torch.tensor(NONORTH, dtype=torch.float32).expand(2, 4, 4), "2*I (B,4,4)",
    why="non-orthogonal rotation accepted")
g.p("rotation", torch.eye(3).expand(2, 3, 3), "I_3 (B,3,3)")
g.p("noise", "bad", "'bad'")
g.p("lr", 0)
g.p("samples", 0)
g.p("iterations", -1)

# ================================================================================================
# experiment.py
# ================================================================================================
TINY = experiment.OptimSettings(iso_iterations=1, iso_samples=5, ancer_iterations=1, ancer_samples=5, chunk=8)
FIX_OS = "OptimSettings: add __post_init__ validation (counts via check_count, rates via check_positive, kappa >= 0) like RancerSettings."
g = Group("experiment.OptimSettings", experiment.OptimSettings, dict(), fix=FIX_OS)
for field_, v in (("iso_iterations", -1), ("iso_lr", -1.0), ("iso_samples", 0), ("ancer_iterations", -1),
                  ("ancer_lr", NAN), ("ancer_samples", 0), ("kappa", -1.0), ("chunk", 0)):
    g.p(field_, v, why=f"settings object with {field_}={v} created; fails (or misbehaves) only when used")

import dataclasses  # noqa: E402

g = Group("experiment.optimize_thetas", experiment.optimize_thetas,
          lambda: dict(model=tiny_model(), x=X2.clone(), noise="gaussian", theta0=0.5, method="isotropic", settings=TINY),
          fix=FIX_OS)
g.p("method", "bogus", "'bogus'")
g.p("noise", "bogus", "'bogus'")
g.p("theta0", -1.0)
g.p("theta0", "abc", "'abc'", fix="optimize_thetas: theta0 = check_positive(theta0, 'theta0') first.")
g.p("settings", Lazy(lambda: dataclasses.replace(TINY, chunk=0), "OptimSettings(chunk=0)"), "OptimSettings(chunk=0)",
    names=[r"\bchunk\b"])
g.p("settings", Lazy(lambda: dataclasses.replace(TINY, chunk=-1), "OptimSettings(chunk=-1)"), "OptimSettings(chunk=-1)",
    names=[r"\bchunk\b"],
    why="no optimization at all: every input keeps theta0 (the loop over chunks never runs)")
g.p("settings", Lazy(lambda: dataclasses.replace(TINY, iso_iterations=-1), "OptimSettings(iso_iterations=-1)"), "OptimSettings(iso_iterations=-1)",
    names=[r"iso_iterations"], note="message names 'iterations', not which setting")
g.p("settings", None)
g.p("seed", 1.5, fix="optimize_thetas: seed = check_count(seed, 'seed', 0).")
g.p("isotropic", np.full((3, 1, 2, 2), 0.5, np.float32), "shape (3,1,2,2)")
g = Group("experiment.optimize_thetas (method='fixed')", experiment.optimize_thetas,
          lambda: dict(model=tiny_model(), x=X2.clone(), noise="gaussian", theta0=0.5, method="fixed", settings=TINY),
          fix="optimize_thetas: check_noise(noise) and check_positive(theta0, 'theta0') before the 'fixed' early return.")
g.p("theta0", -1.0, why="negative smoothing scale returned for every pixel")
g.p("theta0", NAN, why="NaN smoothing scale returned")
g.p("theta0", 0.0, why="zero smoothing scale returned")
g.p("noise", "bogus", "'bogus'", why="unknown noise not checked for method='fixed'")
g = Group("experiment.optimize_thetas (method='ancer', isotropic=...)", experiment.optimize_thetas,
          lambda: dict(model=tiny_model(), x=X2.clone(), noise="gaussian", theta0=0.5, method="ancer", settings=TINY,
                       isotropic=np.full((2, 1, 2, 2), 0.5, np.float32)),
          fix="optimize_thetas: validate `isotropic` (ndarray, finite, > 0) naming it, before slicing.")
g.p("isotropic", np.full((2, 1, 2, 2), NAN, np.float32), "NaN (2,1,2,2)", names=[r"\bisotropic\b"],
    note="error names theta_iso (optimize_ancer's parameter), not isotropic")
g.p("isotropic", np.full((2, 1, 2, 2), -0.5, np.float32), "-0.5 (2,1,2,2)", names=[r"\bisotropic\b"])
g.p("isotropic", Lazy(lambda: torch.full((2, 1, 2, 2), 0.5), "a torch tensor"), names=[r"\bisotropic\b"])

RUNS = TMP / "runs"
_run_counter = [0]


def fresh_folder():
    _run_counter[0] += 1
    return RUNS / f"r{_run_counter[0]}"


def run_base(method="isotropic"):
    return dict(model=tiny_model(), x=X2.clone(), y=torch.tensor([0, 0]), indices=np.array([0, 1]), noise="gaussian",
                theta0=0.5, method=method, settings=TINY, folder=fresh_folder(), n0=10, n=100, alpha=0.01,
                num_classes=3)


FIX_RM = "run_method: validate y (integer labels in [0, num_classes)), indices (integers), progress (callable), folder (path) up front."
g = Group("experiment.run_method", experiment.run_method, run_base, fix=FIX_RM,
          names={"n": [r"\bn must\b"], "theta0": [r"\btheta0\b", r"\bsigma\b"]})
g.p("indices", np.array([0, 0]), "[0, 0]")
g.p("indices", np.array([0.2, 0.7]), "[0.2, 0.7]", why="float indices truncated to 0, 0: the second input is then "
    "skipped as 'already done' and gets the first one's row")
g.p("indices", np.array([0, 1, 2]), "3 indices for 2 inputs")
g.p("y", torch.tensor([0]), "1 label for 2 inputs")
g.p("y", torch.tensor([0, 99]), "[0, 99] (num_classes=3)", why="label 99 of a 3-class problem logged; counted as wrong")
g.p("y", torch.tensor([0.5, 1.7]), "[0.5, 1.7]", why="float labels truncated by int() and logged as 0 and 1")
g.p("method", "bogus", "'bogus'")
g.p("policy", "bogus", "'bogus'")
g.p("num_classes", 5, "5 (model has 3)")
g.p("num_classes", 1)
g.p("n0", 0)
g.p("alpha", 2.0)
g.p("noise", "bogus", "'bogus'")
g.p("theta0", -1.0)
g.p("batch_size", 0)
g.p("settings", None)
g.p("folder", None)
g.p("folder", Lazy(lambda: (TMP / "a_file.txt").write_text("x") and TMP / "a_file.txt", "an existing regular file"),
    names=[r"a_file\.txt", r"\bfolder\b"])
g.p("progress", 5, "5 (not callable)")
g.p("isotropic", np.full((3, 1, 2, 2), 0.5, np.float32), "shape (3,1,2,2)")
g = Group("experiment.run_method (method='fixed')", experiment.run_method, lambda: run_base("fixed"), fix=FIX_RM,
          names={"theta0": [r"\btheta0\b"]})
g.p("theta0", -1.0, note="error names sigma, not theta0",
    fix="run_method/optimize_thetas: check_positive(theta0, 'theta0') before certifying.")
g.p("policy", "bogus", "'bogus'", why="an unknown policy is ignored for method='fixed' (never checked)",
    fix="run_method: memory._check_policy(policy) up front for every method.")

g = Group("experiment.certify_all", experiment.certify_all,
          lambda: dict(model=tiny_model(), x=X2.clone(), y=torch.tensor([0, 0]), thetas=np.full((2, 1, 2, 2), 0.5, np.float32),
                       noise="gaussian", n0=10, n=100, alpha=0.01, num_classes=3),
          fix="certify_all: check len(x) == len(y) == len(thetas) and thetas.shape[1:] == x.shape[1:] (ValueError naming them).",
          names={"thetas": [r"\bthetas\b", r"\bsigma\b"]})
g.p("thetas", np.full((1, 1, 2, 2), 0.5, np.float32), "1 theta for 2 inputs")
g.p("thetas", np.full((3, 1, 2, 2), 0.5, np.float32), "3 thetas for 2 inputs", why="the extra theta is silently ignored")
g.p("thetas", np.full((2, 1, 2, 2), -0.5, np.float32), "-0.5")
g.p("y", torch.tensor([0]), "1 label for 2 inputs")
g.p("y", torch.tensor([0, 0, 1]), "3 labels for 2 inputs", why="the extra label is silently ignored")
g.p("noise", "bogus", "'bogus'")
g.p("num_classes", 5, "5 (model has 3)")

SEL = lambda: dict(model=tiny_model(), x=X2.clone(), y=torch.tensor([0, 0]), noise="gaussian", theta0=0.5,  # noqa: E731
                   iso_lrs=[1.0], ancer_lrs=[1.0], base=TINY, n0=5, n=20, alpha=0.01, num_classes=3, widen=0)
FIX_SEL = ("select_settings: validate iso_lrs / ancer_lrs (non-empty, finite > 0), theta0 > 0 and widen (int >= 0) up "
           "front, naming them.")
g = Group("selection.select_settings", selection.select_settings, SEL, fix=FIX_SEL)
g.p("iso_lrs", [], "[]")
g.p("iso_lrs", [-1.0], "[-1.0]", names=[r"\biso_lrs\b"], note="message names lr")
g.p("ancer_lrs", [NAN], "[nan]", names=[r"\bancer_lrs\b"])
g.p("iso_lrs", "abc", "'abc'")
g.p("widen", -1, why="negative widening budget accepted (no-op)")
g.p("widen", 1.5)
g.p("theta0", 0.0, names=[r"\btheta0\b"])
g.p("base", None)

g = Group("selection.widening_search", selection.widening_search,
          lambda: dict(grid=[1.0, 2.0], evaluate=lambda v: {"s": -abs(v - 1.0)}, score=lambda r: r["s"], widen=1),
          fix="widening_search: require grid values finite and > 0 (ValueError naming grid) and widen int >= 0.")
g.p("grid", [0.0, 1.0], "[0.0, 1.0]")
g.p("grid", [], "[]", why="empty grid returns {} (callers then fail on max() of an empty sequence)")
g.p("widen", -1, why="negative widen accepted (no-op)")

# ================================================================================================
# rancer.py
# ================================================================================================
g = Group("rancer.RancerSettings", rancer.RancerSettings, dict())
for fld, v in (("iterations", -1), ("iterations", 1.5), ("lr", 0.0), ("lr", NAN), ("samples", 0), ("gamma1", 1.0),
               ("gamma1", -0.1), ("gamma1", NAN), ("gamma2", -1.0), ("gamma2", INF), ("gamma2", NAN), ("init", "bogus"),
               ("init", None)):
    g.p(fld, v)
g.p("gamma1", "0.5", "'0.5'", fix="RancerSettings: convert/validate gamma1, gamma2 as floats with ValueError naming them.")
g.p("gamma2", "2", "'2'", fix="RancerSettings: convert/validate gamma2 as a float with ValueError naming it.")

URB = lambda: torch.from_numpy(np.stack([U4, orth(4, 1)])).float()  # noqa: E731
RS = rancer.RancerSettings(iterations=2, samples=10)
FIX_OR = "optimize_rancer: check the rotation is a torch tensor of orthogonal matrices (noise.check_rotation per input) and eigenvalues finite."
g = Group("rancer.optimize_rancer", rancer.optimize_rancer,
          lambda: dict(model=softplus_model(), x=X2.clone(), rotation=URB(), sigma0=torch.tensor([0.5, 0.5]), settings=RS),
          fix=FIX_OR)
g.p("rotation", torch.tensor(NONORTH, dtype=torch.float32).expand(2, 4, 4), "2*I (2,4,4)",
    why="non-orthogonal 'rotation' used for the noise; scales optimized for it")
g.p("rotation", torch.eye(4).expand(3, 4, 4), "shape (3,4,4)")
g.p("rotation", Lazy(lambda: np.stack([U4, U4]), "numpy array (2,4,4)"))
g.p("rotation", torch.full((2, 4, 4), NAN), "NaN (2,4,4)")
for v, lab in ((torch.zeros(2), "zeros(2)"), (torch.full((2,), NAN), "nan x2"), (torch.full((3,), 0.5), "shape (3,)")):
    g.p("sigma0", v, lab)
g.p("sigma0", "a", "'a'", fix="optimize_rancer: wrap torch.as_tensor(sigma0) and raise ValueError naming sigma0.")
g.p("x", Lazy(lambda: X2 * NAN, "NaN"))
g.p("settings", None, fix="optimize_rancer: require a RancerSettings (TypeError naming settings).")
g = Group("rancer.optimize_rancer (init='eigen_fixed')", rancer.optimize_rancer,
          lambda: dict(model=softplus_model(), x=X2.clone(), rotation=URB(), sigma0=torch.tensor([0.5, 0.5]),
                       settings=rancer.RancerSettings(init="eigen_fixed"), eigenvalues=torch.ones(2, 4)), fix=FIX_OR)
g.p("eigenvalues", torch.full((2, 4), NAN), "NaN (2,4)", why="NaN scales returned")
g.p("eigenvalues", torch.ones(2, 3), "shape (2,3)")
g.p("eigenvalues", None)

g = Group("rancer.hessian_rotation", rancer.hessian_rotation, lambda: dict(model=softplus_model(), x=X.clone()),
          fix="input_hessian: check_finite_tensor(x, 'x') before differentiating.")
g.p("x", torch.full((1, 2, 2), NAN), "NaN")
g.p("model", None)

g = Group("rancer.rancer_parameters", rancer.rancer_parameters,
          lambda: dict(model=softplus_model(), x=X2.clone(), sigma0=np.array([0.5, 0.5]), settings=RS))
g.p("chunk", 0)
g.p("chunk", -1)
g.p("sigma0", np.array([0.5]), "1 value for 2 inputs")
g.p("sigma0", np.array([-0.5, 0.5]), "[-0.5, 0.5]")

SMOOTH_R = lambda: certify.Smooth(softplus_model(), 3, (1, 2, 2))  # noqa: E731
g = Group("rancer.certify_rotated", rancer.certify_rotated,
          lambda: dict(smooth=SMOOTH_R(), x=X.clone(), scales=np.full(4, 0.5), rotation=U4.copy(), key=0, n0=10, n=100,
                       alpha=0.01), names={"scales": [r"\bscales\b", r"\bsigma\b"], "n": [r"\bn must\b"]},
          fix="certify_rotated: check scales has x.numel() finite entries > 0 and key is an int, naming them.")
g.p("scales", np.full(3, 0.5), "3 scales for 4 pixels")
g.p("scales", np.full(4, -0.5), "-0.5 x4")
g.p("rotation", NONORTH, "2*I")
g.p("rotation", np.eye(3), "I_3")
g.p("key", 1.5)
g.p("key", "a", "'a'")
g.p("n0", 0)
g.p("smooth", None)

g = Group("rancer.certify_rancer", rancer.certify_rancer,
          lambda: dict(model=softplus_model(), x=X2.clone(), y=torch.tensor([0, 0]), scales=np.full((2, 4), 0.5),
                       rotations=np.stack([U4, orth(4, 1)]), n0=10, n=100, alpha=0.01, num_classes=3),
          fix="certify_rancer: check len(x) == len(y) == len(scales) == len(rotations) == len(keys), labels in range.")
g.p("keys", np.array([0]), "1 key for 2 inputs")
g.p("y", torch.tensor([0, 99]), "[0, 99]", why="label 99 of a 3-class problem accepted")
g.p("scales", np.full((2, 3), 0.5), "shape (2,3)")
g.p("rotations", np.stack([U4]), "1 rotation for 2 inputs")

# ================================================================================================
# hessian.py
# ================================================================================================
FIX_H = "input_hessian: check label is an int in [0, num_classes) and x finite (ValueError naming them)."
g = Group("hessian.input_hessian", hessian.input_hessian, lambda: dict(model=softplus_model(), x=X.clone(), label=0),
          fix=FIX_H)
g.p("label", 5, "5 (3 classes)")
g.p("label", -1)
g.p("label", 1.5, why="non-integer label truncated to 1")
g.p("label", "a", "'a'")
g.p("x", torch.full((1, 2, 2), NAN), "NaN")
FIX_NR = "numerical_rank / eigen_directions: require a finite, square, symmetric 2-D h (and rtol >= 0), ValueError naming them."
g = Group("hessian.numerical_rank", hessian.numerical_rank, lambda: dict(h=np.diag([3.0, 2.0, 0.0])), fix=FIX_NR)
g.p("h", np.array([[1.0, 5.0], [0.0, 1.0]]), "non-symmetric [[1,5],[0,1]]", why="only one triangle is read: rank of a "
    "different matrix")
g.p("h", np.full((2, 2), NAN), "NaN 2x2", why="a NaN matrix is reported as rank 0")
g.p("h", np.ones(3), "1-D")
g.p("h", np.zeros((0, 0)), "empty 0x0")
g.p("rtol", -1.0, why="zero eigenvalues counted in the rank")
g = Group("hessian.eigen_directions", hessian.eigen_directions, lambda: dict(h=np.diag([3.0, 2.0, 1.0])), fix=FIX_NR)
g.p("h", np.array([[1.0, 5.0], [0.0, 1.0]]), "non-symmetric", why="eigenvectors of a different (symmetrized-by-triangle) matrix")
g.p("h", np.ones(3), "1-D")
FIX_L = "landscape: resolution = check_count(resolution, 'resolution', 2), half_width = check_positive, label in range, u/v of x.numel() entries."
g = Group("hessian.landscape", hessian.landscape,
          lambda: dict(model=softplus_model(), x=X.clone(), label=0, u=np.eye(4)[0], v=np.eye(4)[1], half_width=1.0,
                       resolution=5), fix=FIX_L)
g.p("resolution", 0, why="empty landscape returned")
g.p("resolution", -1)
g.p("resolution", 2.5)
g.p("half_width", -1.0, why="grid reversed (a negative half-width accepted)")
g.p("half_width", NAN)
g.p("label", 7, "7 (3 classes)")
g.p("u", np.ones(3), "3 entries for 4 pixels")

# ================================================================================================
# ucan_radii.py
# ================================================================================================
g = Group("ucan_radii.gaussian_l2_radius", ucan_radii.gaussian_l2_radius, dict(p_a=0.9, lam=1.0))
for v, lab in ((0.5, None), (0.3, None), (1.5, None), (NAN, None), (True, None), (np.array([]), "[]"), (None, None)):
    g.p("p_a", v, lab)
g.p("p_a", "0.9", "'0.9'", why="string accepted as p_a", fix="_check_p_a: reject str inputs.")
g.p("p_a", np.array([0.9 + 0.5j]), "array([0.9+0.5j])", why="complex p_a: imaginary part silently dropped",
    fix="_check_p_a: reject complex dtypes.")
for v, lab in ((0, None), (-1, None), (NAN, None), (INF, None), ("1", "'1'")):
    g.p("lam", v, lab, why="a string is accepted as lam (float('1'))", fix="check_positive: reject str and bool before float(value).")
g.p("lam", True, why="bool accepted as lam = 1.0", fix="check_positive: reject bool.")
g = Group("ucan_radii.gaussian_linf_radius", ucan_radii.gaussian_linf_radius, dict(p_a=0.9, lam=1.0, d=4))
for v in (0, -1, 1.5, True, None):
    g.p("d", v)
g = Group("ucan_radii.laplace_l1_radius", ucan_radii.laplace_l1_radius, dict(p_a=0.9, lam=1.0))
g.p("lam", 0)
g.p("p_a", 1.2)
g = Group("ucan_radii.exp_linf_l1_radius", ucan_radii.exp_linf_l1_radius, dict(p_a=0.9, lam=1.0, d=4))
g.p("d", 0)
g = Group("ucan_radii.exp_linf_linf_radius", ucan_radii.exp_linf_linf_radius, dict(p_a=0.9, lam=1.0))
g.p("lam", -1.0)
g = Group("ucan_radii.uniform_l1_radius", ucan_radii.uniform_l1_radius, dict(p_a=0.9, lam=1.0))
g.p("p_a", 0.5)
g = Group("ucan_radii.uniform_linf_radius", ucan_radii.uniform_linf_radius, dict(p_a=0.9, lam=1.0, d=4))
g.p("d", 0)
g.p("lam", NAN)
g = Group("ucan_radii.power_law_linf_l1_radius", ucan_radii.power_law_linf_l1_radius, dict(p_a=0.9, lam=1.0, d=4, a=20.0))
for v, lab in ((4.0, "4.0 (= d)"), (NAN, None), ("x", "'x'"), (None, None), (INF, None)):
    g.p("a", v, lab)
g = Group("ucan_radii.power_law_linf_l1_radius_printed", ucan_radii.power_law_linf_l1_radius_printed,
          dict(p_a=0.9, lam=1.0, alpha=8.0))
g.p("alpha", 1.0)
g.p("alpha", NAN)
g.p("alpha", "x", "'x'")
g = Group("ucan_radii.table1_row", ucan_radii.table1_row, dict(key="gaussian/l2"))
g.p("key", "gaussian/l3", "'gaussian/l3'", names=[r"\brow\b"], note="names it 'row' (what the key denotes)")
g.p("key", None, names=[r"\brow\b"], note="names it 'row' (what the key denotes)")
g = Group("ucan_radii.isotropic_radius", ucan_radii.isotropic_radius, dict(row="gaussian/linf", p_a=0.9, lam=1.0, d=4))
g.p("row", "bogus", "'bogus'")
g.p("d", None)
g.p("d", 0)
g.p("p_a", 2.0)
g = Group("ucan_radii.unit_variance_lambda", ucan_radii.unit_variance_lambda, dict(noise="power_law_linf", d=4, a=20.0))
g.p("noise", "bogus", "'bogus'")
g.p("d", None)
g.p("a", None)
g.p("a", 6.0, "6.0 (<= d + 2)")
g.p("d", 1.5)
g = Group("ucan_radii.lambda_for_std", ucan_radii.lambda_for_std, dict(noise="gaussian", std=0.5))
for v in (0, -1, NAN):
    g.p("std", v)
g.p("noise", "bogus", "'bogus'")
g = Group("ucan_radii.anisotropic_scaled_norm", ucan_radii.anisotropic_scaled_norm,
          lambda: dict(delta=np.full(4, 0.1), sigma=np.full(4, 0.5), p=2))
for v, lab in ((0.5, None), ("l3", "'l3'"), (NAN, None), (True, None), (None, None), (-INF, None)):
    g.p("p", v, lab)
for v, lab in ((np.zeros(4), "zeros(4)"), (-np.full(4, 0.5), "-0.5 x4"), (np.array([]), "[]")):
    g.p("sigma", v, lab)
for v, lab in ((np.full(4, NAN), "NaN x4"), (np.full(3, 0.1), "shape (3,)"), ("abc", "'abc'")):
    g.p("delta", v, lab)
g = Group("ucan_radii.in_anisotropic_region", ucan_radii.in_anisotropic_region,
          lambda: dict(delta=np.full(4, 0.1), sigma=np.full(4, 0.5), radius=1.0, p=2))
for v, lab in ((-1.0, None), (NAN, None), (np.array([1.0, 2.0]), "[1, 2]"), ("abc", "'abc'")):
    g.p("radius", v, lab)
g = Group("ucan_radii.anisotropic_lp_radius", ucan_radii.anisotropic_lp_radius,
          lambda: dict(sigma=np.full(4, 0.5), radius=1.0))
g.p("radius", -1.0)
g.p("sigma", -np.full(4, 0.5), "-0.5 x4")
g = Group("ucan_radii.alternative_lebesgue_measure", ucan_radii.alternative_lebesgue_measure,
          lambda: dict(sigma=np.full(4, 0.5), radius=1.0))
g.p("radius", NAN)
g.p("sigma", np.array([]), "[]")
g = Group("ucan_radii.alternative_lebesgue_measure_printed", ucan_radii.alternative_lebesgue_measure_printed,
          lambda: dict(sigma=np.full(4, 0.5), radius=1.0, p=2))
g.p("p", 0)
g = Group("ucan_radii.laplace_l1_alm_printed", ucan_radii.laplace_l1_alm_printed,
          lambda: dict(sigma=np.full(4, 0.5), p_a=0.9, lam=1.0))
g.p("p_a", 0.4)
g = Group("ucan_radii.anisotropic_certificate", ucan_radii.anisotropic_certificate,
          lambda: dict(row="power_law_linf/l1", p_a=0.9, sigma=np.full(4, 0.5), lam=1.0, a=20.0))
g.p("row", "bogus", "'bogus'")
g.p("p_a", 2.0)
g.p("lam", 0)
g.p("a", 3.0, "3.0 (< d = 4)")
g.p("sigma", np.full(4, NAN), "NaN x4")

# ================================================================================================
# ucan_noise.py
# ================================================================================================
g = Group("families.power_law_exponent", families.power_law_exponent, dict(d=4, a=None))
for v in (0, -1, 2.5, True):
    g.p("d", v)
for v, lab in ((6.0, "6.0 (tail 2)"), (8.5, "8.5 (non-integer tail)"), (NAN, None), (INF, None)):
    g.p("a", v, lab)
g.p("a", "x", "'x'", fix="power_law_exponent: wrap float(a) and raise ValueError naming a.")
g = Group("ucan_noise.sample_standard", ucan_noise.sample_standard, dict(noise="laplace", num=5, shape=(1, 2, 2)))
g.p("noise", "bogus", "'bogus'")
g.p("num", 0)
g.p("shape", (-1, 2), "(-1, 2)", fix="sample_standard: validate shape as a tuple of positive ints (ValueError naming shape).")
g.p("dtype", torch.int64, why="Laplace draws silently rounded to integers (mostly 0)",
    fix="sample_standard: require a floating dtype (ValueError naming dtype).")
g = Group("ucan_noise.sample_standard (gaussian)", ucan_noise.sample_standard, dict(noise="gaussian", num=5, shape=(1, 2, 2)))
g.p("dtype", torch.int64, fix="sample_standard: require a floating dtype (ValueError naming dtype).")
g = Group("ucan_noise.sample_standard (power_law_linf)", ucan_noise.sample_standard,
          dict(noise="power_law_linf", num=5, shape=(1, 2, 2), a=20.0))
g.p("a", 5.0, "5.0 (< d)")
FIX_AN = "anisotropic_noise: validate lam > 0 finite, sigma >= 0 finite, mu finite and broadcastable (ValueError naming them)."
g = Group("ucan_noise.anisotropic_noise", ucan_noise.anisotropic_noise,
          lambda: dict(eps=torch.randn(5, 1, 2, 2, generator=gen()), lam=0.5, sigma=torch.ones(1, 2, 2),
                       mu=torch.zeros(1, 2, 2)), fix=FIX_AN)
g.p("lam", -1.0, why="negative lambda accepted")
g.p("sigma", -torch.ones(1, 2, 2), "-1 everywhere", why="negative sigma accepted")
g.p("sigma", torch.full((1, 2, 2), NAN), "NaN", why="NaN noise")
g.p("mu", torch.zeros(3), "shape (3,)")

# ================================================================================================
# ucan.py
# ================================================================================================
g = Group("ucan.pattern_sigma", ucan.pattern_sigma, dict(shape=(1, 4, 4), p="l2"),
          fix="pattern_sigma: require shape entries to be ints >= 1 (reject float, bool, str) with ValueError naming shape.")
g.p("p", "l3", "'l3'")
for v in (0, -1, NAN):
    g.p("kappa", v)
g.p("iota", 0)
g.p("shape", (4, 4), "(4, 4)")
g.p("shape", (0, 4, 4), "(0, 4, 4)")
g.p("shape", (1.5, 4, 4), "(1.5, 4, 4)", why="a fractional channel count silently truncated to 1")
g.p("shape", ("a", 4, 4), "('a', 4, 4)")
g.p("shape", (True, 4, 4), "(True, 4, 4)", why="bool accepted as 1 channel")
g.p("shape", 5, "5 (an int)")
g = Group("ucan.FixedNPG", ucan.FixedNPG, lambda: dict(sigma=np.ones((1, 2, 2))),
          fix="FixedNPG: require a non-empty sigma and wrap the float32 conversion in a ValueError naming sigma.")
g.p("sigma", np.zeros((1, 2, 2)), "zeros")
g.p("sigma", -np.ones((1, 2, 2)), "-1")
g.p("sigma", np.full((1, 2, 2), NAN), "NaN")
g.p("sigma", np.array([]), "[]", why="an NPG over zero pixels is created")
g.p("sigma", "abc", "'abc'")
FIX_UNPG = "UniversalNPG: validate input_shape (positive ints) and widths (4 positive ints) with ValueError naming them."
g = Group("ucan.UniversalNPG", lambda **kw: ucan.UniversalNPG(**kw).maps(),
          dict(input_shape=(1, 2, 2), gamma=5.0, widths=(4, 4, 4, 4)), fix=FIX_UNPG)
for v in (0, -1, NAN):
    g.p("gamma", v)
g.p("widths", (4, 4, 4), "(4, 4, 4)")
g.p("widths", (0, 4, 4, 4), "(0, 4, 4, 4)", why="a zero-width hidden layer: the generator's output is a constant")
g.p("widths", (-1, 4, 4, 4), "(-1, 4, 4, 4)")
g.p("input_shape", (0, 2, 2), "(0, 2, 2)", why="NPG over zero pixels")
g.p("input_shape", (-1, 2, 2), "(-1, 2, 2)")
g.p("input_shape", None)
FIX_INPG = "InputDependentNPG: require input_shape entries >= 1 (ValueError naming input_shape)."
g = Group("ucan.InputDependentNPG", lambda **kw: ucan.InputDependentNPG(**kw)(torch.full((1, 1, 2, 2), 0.5)),
          dict(input_shape=(1, 2, 2), gamma=1.0, growth=2), fix=FIX_INPG)
g.p("input_shape", (2, 2), "(2, 2)")
g.p("input_shape", (0, 2, 2), "(0, 2, 2)")
g.p("growth", 0)
g.p("growth", 1.5)
g.p("gamma", 0)
g.p("gamma", INF)
g = Group("ucan.build_npg", ucan.build_npg, dict(kind="universal", input_shape=(1, 2, 2)))
g.p("kind", "bogus", "'bogus'")
g.p("gamma", 0)
g.p("gamma", -1.0)
g = Group("ucan.build_npg (kind='pattern')", ucan.build_npg, dict(kind="pattern", input_shape=(1, 2, 2)))
g.p("pattern", "l3", "'l3'", note="message names pattern_sigma's 'p'",
    fix="build_npg: check_choice(pattern, 'pattern', list(PATTERN_NORMS)) before calling pattern_sigma.")
g.p("kappa", 0)
g = Group("ucan.build_npg (kind='isotropic')", ucan.build_npg, dict(kind="isotropic", input_shape=(1, 2, 2)),
          fix="build_npg: validate input_shape (positive ints) with ValueError naming it.")
g.p("input_shape", (-1, 2, 2), "(-1, 2, 2)")
g.p("input_shape", (0, 2, 2), "(0, 2, 2)", why="an NPG over zero pixels")

FIX_TU = "train_ucan: check variance_weight finite (ValueError naming it), x finite (check_finite_tensor), y integer labels in range."
g = Group("ucan.train_ucan", ucan.train_ucan,
          lambda: dict(model=tiny_model(), npg=ucan.UniversalNPG((1, 2, 2), widths=(4, 4, 4, 4)), x=X8.clone(),
                       y=Y8.clone(), epochs=1, batch_size=4), fix=FIX_TU)
for fld, v in (("lam", 0), ("lam", NAN), ("epochs", 0), ("batch_size", 0), ("lr", 0), ("npg_lr", 0)):
    g.p(fld, v)
g.p("noise", "bogus", "'bogus'")
g.p("variance_weight", NAN, why="NaN loss: classifier and NPG trained to NaN weights without an error")
g.p("variance_weight", "1", "'1'")
g.p("y", Y8[:5].clone(), "5 labels for 8 inputs")
g.p("y", torch.tensor([0, 1, 2, 0, 1, 2, 0, 9]), "a label 9 (3 classes)")
g.p("y", Y8.float(), "float labels")
g.p("x", Lazy(lambda: X8 * NAN, "NaN"), why="NaN inputs: model trained to NaN weights silently")
g.p("npg", None)

FIX_USC = ("ucan.sample_counts: lam = check_positive(lam, 'lam'), batch_size = check_count(batch_size, 'batch_size') "
           "(batch_size 0 loops forever), sigma finite >= 0 and broadcastable.")
g = Group("ucan.sample_counts", ucan.sample_counts,
          lambda: dict(model=tiny_model(), x=X.clone(), sigma=torch.ones(1, 2, 2), mu=torch.zeros(1, 2, 2),
                       noise="gaussian", lam=0.5, num=50, num_classes=3, generator=gen()), fix=FIX_USC)
g.p("lam", -1.0, why="negative lambda accepted (counts of |lambda|; ucan.certify refuses lam <= 0)")
g.p("lam", 0.0, why="lambda 0: counts of the base classifier without noise")
g.p("lam", NAN)
g.p("num", 0)
g.p("num_classes", 5, "5 (model has 3)")
g.p("batch_size", 0, why="infinite loop (b = min(0, remaining) = 0 never decreases remaining)", timeout=5)
g.p("batch_size", -1, names=[r"\bbatch_size\b"])
g.p("sigma", -torch.ones(1, 2, 2), "-1 everywhere", why="negative sigma accepted")
g.p("sigma", torch.ones(3), "shape (3,)")
g.p("noise", "bogus", "'bogus'")
g.p("generator", "g", "'g'", fix=FIX_GEN)
g = Group("ucan.npg_maps", ucan.npg_maps, lambda: dict(npg=ucan.FixedNPG(np.ones((1, 2, 2))), x=X.clone()))
g.p("x", torch.full((2, 2), 0.5), "shape (2,2)")
g.p("npg", None, fix="npg_maps: require an nn.Module npg (TypeError naming npg).")

g = Group("ucan.certify", ucan.certify,
          lambda: dict(model=tiny_model(), npg=ucan.FixedNPG(np.ones((1, 2, 2))), x=X.clone(), noise="gaussian", lam=0.5,
                       n0=10, n=100, alpha=0.01, num_classes=3, generator=gen()),
          names={"n": [r"\bn must\b"]}, fix="ucan.certify: check_finite_tensor(x, 'x') and num_classes = check_count(num_classes, 'num_classes', 2).")
for fld, v in (("alpha", 0), ("alpha", 1.5), ("lam", 0), ("lam", NAN), ("n0", 0), ("n", -1), ("batch_size", 0)):
    g.p(fld, v)
g.p("noise", "bogus", "'bogus'")
g.p("num_classes", 5, "5 (model has 3)")
g.p("num_classes", 1)
g.p("x", torch.full((1, 2, 2), NAN), "NaN")
g.p("x", torch.full((2, 2), 0.5), "shape (2,2)")
g.p("generator", "g", "'g'", fix=FIX_GEN)

g = Group("ucan.row_radii", ucan.row_radii,
          lambda: dict(row="gaussian/linf", p_lower=np.array([0.9, 0.4]), min_theta=np.array([0.5, 0.5]),
                       log_gm_theta=np.log(np.array([0.6, 0.6])), d=4),
          fix="row_radii: check min_theta <= exp(log_gm_theta) (the minimum cannot exceed the geometric mean) and equal shapes, naming them.")
g.p("row", "bogus", "'bogus'")
g.p("p_lower", np.array([NAN, 0.4]), "[nan, 0.4]")
g.p("p_lower", np.array([1.5, 0.4]), "[1.5, 0.4]")
g.p("min_theta", np.array([-0.5, 0.5]), "[-0.5, 0.5]")
g.p("min_theta", np.array([NAN, 0.5]), "[nan, 0.5]")
g.p("min_theta", np.array([5.0, 5.0]), "[5, 5] (> geometric mean 0.6)",
    why="the l_p radius exceeds the ALM: min(theta) > geomean(theta) is impossible")
g.p("log_gm_theta", np.array([NAN, 0.0]), "[nan, 0]")
g.p("log_gm_theta", np.array([INF, 0.0]), "[inf, 0]")
g.p("d", 0)
g.p("p_lower", np.array([0.9, 0.4, 0.8]), "3 values for 2 inputs")
g = Group("ucan.rows_of", ucan.rows_of, dict(noise="gaussian"),
          fix="rows_of: check_choice(noise, 'noise', NOISES).")
g.p("noise", "bogus", "'bogus'", why="an unknown noise has 'no rows' ([]) instead of an error")
g.p("noise", None, why="None has 'no rows' ([])")

FIX_SV = "search_violation: check r1 finite >= 0, theta finite > 0 of x's shape, cls in range, samples via check_count naming samples."
g = Group("ucan.search_violation", ucan.search_violation,
          lambda: dict(model=tiny_model(), npg=ucan.FixedNPG(np.ones((1, 2, 2))), x=X.clone(), cls=0,
                       theta=torch.full((1, 2, 2), 0.5), r1=0.5, steps=3, samples=8, generator=gen()), fix=FIX_SV)
g.p("steps", 0)
g.p("r1", -1.0, why="a negative certified radius searched")
g.p("r1", NAN, why="NaN radius searched")
g.p("cls", 7, "7 (3 classes)")
g.p("samples", 0, names=[r"\bsamples\b"])
g.p("theta", -torch.full((1, 2, 2), 0.5), "-0.5", why="negative theta accepted")
g.p("noise", "bogus", "'bogus'")
g = Group("ucan.verify_violation", ucan.verify_violation,
          lambda: dict(model=tiny_model(), npg=ucan.FixedNPG(np.ones((1, 2, 2))), x_prime=X.clone(), cls=0,
                       noise="gaussian", lam=0.5, n=100, alpha=0.01, num_classes=3, generator=gen()),
          fix="verify_violation: lam = check_positive(lam, 'lam'); cls must be an int in [0, num_classes).",
          names={"n": [r"\bn must\b"]})
g.p("cls", 7, "7 (3 classes)")
g.p("n", 0)
g.p("alpha", 1.0)
g.p("lam", -1.0, why="negative lambda accepted")
g.p("lam", 0.0, why="lambda 0 (no noise) accepted")
g.p("num_classes", 5, "5 (model has 3)")

# ================================================================================================
# logs.py
# ================================================================================================
LOGDIR = TMP / "logs"
LOGDIR.mkdir()
HEADER = "\t".join(logs.ANCER_COLUMNS)
ROW = "0\t1\t1\t0.5\t0.6\t1\t0.25\t0.01"


def log_file(name, text=None, data_bytes=None):
    p = LOGDIR / name
    if data_bytes is not None:
        p.write_bytes(data_bytes)
    else:
        p.write_text(text)
    return p


def atomic_pipeline(path, mode="w"):
    with files.atomic_file(path, mode) as fh:
        fh.write("x" if mode == "w" else b"x")
    return Path(path).read_bytes()


g = Group("files.atomic_file", atomic_pipeline, lambda: dict(path=LOGDIR / "atomic.txt"),
          fix="atomic_file: check path is str/PathLike (TypeError naming path) and not an existing directory.")
g.p("mode", "a", "'a'")
g.p("mode", "r", "'r'")
g.p("path", None)
g.p("path", LOGDIR, "an existing directory", names=[re.escape(str(LOGDIR)), r"\bpath\b"])
g = Group("files.write_atomic", files.write_atomic, lambda: dict(path=LOGDIR / "w.txt", text="hello\n"),
          fix="write_atomic: check isinstance(text, str) (TypeError naming text) and path type.")
g.p("text", b"bytes", "b'bytes'")
g.p("text", None)
g.p("path", None)
g.p("path", LOGDIR, "an existing directory", names=[re.escape(str(LOGDIR)), r"\bpath\b"])

np.save(LOGDIR / "ok.npy", np.arange(3.0))
np.save(LOGDIR / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
(LOGDIR / "trunc.npy").write_bytes((LOGDIR / "ok.npy").read_bytes()[:60])
(LOGDIR / "text.npy").write_text("not numpy")
(LOGDIR / "adir").mkdir()
g = Group("files.load_array", files.load_array, dict(path=LOGDIR / "ok.npy"),
          names={"path": [r"\.npy", r"adir", r"\bpath\b", r"missing"]},
          fix="load_array: check path is str/PathLike (TypeError naming path).")
g.p("path", LOGDIR / "missing.npy", "missing file")
g.p("path", LOGDIR / "text.npy", "a text file")
g.p("path", LOGDIR / "obj.npy", "an object-array (pickle) file")
g.p("path", LOGDIR / "trunc.npy", "a truncated .npy")
g.p("path", LOGDIR / "adir", "a directory")
g.p("path", None)

FIX_RL = ("read_log/_parse_rows: check value ranges, not only types: radius/radius_proxy finite >= 0, radius_proxy >= "
          "radius, label >= 0, predict >= -1, correct = 0 when predict = -1; error naming file, line and column.")
g = Group("logs.read_log", logs.read_log, dict(path=log_file("ok.tsv", HEADER + "\n" + ROW + "\n")),
          names={"path": [r"\.tsv", r"\bpath\b", r"adir"]}, fix=FIX_RL)
g.p("path", LOGDIR / "missing.tsv", "missing file")
g.p("path", log_file("nonl.tsv", HEADER + "\n" + ROW), "no final newline")
g.p("path", log_file("dup.tsv", HEADER + "\n" + ROW + "\n" + ROW + "\n"), "duplicate idx")
g.p("path", log_file("abc.tsv", HEADER + "\n" + ROW.replace("0.5", "abc", 1) + "\n"), "radius='abc'")
g.p("path", log_file("nan.tsv", HEADER + "\n" + ROW.replace("\t0.5\t", "\tnan\t", 1) + "\n"), "radius='nan'",
    why="a NaN radius row is accepted as valid")
g.p("path", log_file("neg.tsv", HEADER + "\n" + ROW.replace("\t0.5\t", "\t-1\t", 1) + "\n"), "radius='-1'",
    why="a negative radius row is accepted")
g.p("path", log_file("inf.tsv", HEADER + "\n" + ROW.replace("\t0.5\t", "\tinf\t", 1) + "\n"), "radius='inf'",
    why="an infinite radius row is accepted")
g.p("path", log_file("abst.tsv", HEADER + "\n" + "0\t1\t-1\t0.5\t0.6\t1\t0.25\t0.01\n"),
    "predict=-1 (abstain) with correct=1 and radius 0.5", why="an abstention marked correct with a positive radius")
g.p("path", log_file("lab.tsv", HEADER + "\n" + "0\t-5\t-7\t0.5\t0.6\t0\t0.25\t0.01\n"), "label=-5, predict=-7",
    why="negative label and a prediction below ABSTAIN accepted")
g.p("path", log_file("empty.tsv", ""), "empty file")
g.p("path", log_file("bin.tsv", data_bytes=b"\xff\xfe\x00garbage\n"), "invalid UTF-8")
g.p("path", LOGDIR / "adir", "a directory")
g.p("path", log_file("cols.tsv", "a\tb\n1\t2\n"), "wrong columns")
g.p("path", None, fix="read_log: check path is str/PathLike (TypeError naming path).")

_rl_counter = [0]


def resultlog_pipeline(path, columns=None, flush_every=20):
    with logs.ResultLog(path, columns=columns, flush_every=flush_every) as log:
        log.append(dict(idx=0, label=1, predict=1, radius=0.5, radius_proxy=0.6, correct=1, min_sigma=0.25, time=0.01))
    return Path(path).read_text()


def fresh_log():
    _rl_counter[0] += 1
    return LOGDIR / f"rl{_rl_counter[0]}.tsv"


g = Group("logs.ResultLog(...) then .append", resultlog_pipeline, lambda: dict(path=fresh_log()),
          fix="ResultLog: flush_every = check_count(flush_every, 'flush_every'); path str/PathLike.")
g.p("columns", ["idx", "label"], "['idx','label']")
g.p("flush_every", "a", "'a'")
g.p("flush_every", 0, why="flush_every 0 accepted (flush after every row; 'every 0 rows' is meaningless)")
g.p("path", None)

GOOD_ROW = dict(idx=5, label=1, predict=1, radius=0.5, radius_proxy=0.6, correct=1, min_sigma=0.25, time=0.01)


def append_pipeline(row):
    with logs.ResultLog(fresh_log()) as log:
        log.append(row)
        return list(log._rows)


FIX_APP = ("ResultLog.append: validate ranges: radius/radius_proxy/min_sigma finite >= 0, radius_proxy >= radius, label >= 0, "
           "predict >= -1, correct only 0 when predict = -1, time >= 0; ValueError naming the column.")
g = Group("logs.ResultLog.append", append_pipeline, lambda: dict(row=dict(GOOD_ROW)), fix=FIX_APP,
          names={"row": [r"\bradius\b", r"\bidx\b", r"\bcorrect\b", r"\bcolumns\b", r"\blabel\b", r"\bpredict\b",
                         r"\bidx 5\b"]})
for lab, change, why in (("radius=nan", dict(radius=NAN), "NaN radius logged"),
                         ("radius=-1", dict(radius=-1.0), "negative radius logged"),
                         ("radius=inf", dict(radius=INF), "infinite radius logged"),
                         ("label=-5", dict(label=-5), "negative label logged"),
                         ("predict=-7", dict(predict=-7), "prediction below ABSTAIN (-1) logged"),
                         ("time=-1", dict(time=-1.0), "negative time logged"),
                         ("min_sigma=-1", dict(min_sigma=-1.0), "negative min_sigma logged"),
                         ("radius_proxy=0.1 < radius=0.5", dict(radius_proxy=0.1),
                          "proxy radius (geometric mean) below the l_p radius (minimum) is impossible"),
                         ("predict=-1 with correct=1", dict(predict=-1, correct=1), "an abstention logged as correct"),
                         ("idx=1.5", dict(idx=1.5), ""), ("correct=2", dict(correct=2), ""),
                         ("correct='True'", dict(correct="True"), ""), ("radius='abc'", dict(radius="abc"), "")):
    g.p("row", {**GOOD_ROW, **change}, lab, why=why)
g.p("row", {k: v for k, v in GOOD_ROW.items() if k != "time"}, "missing 'time'")
g.p("row", {**GOOD_ROW, "extra": 1}, "extra key")

# ================================================================================================
# profiles.py
# ================================================================================================
g = Group("profiles.ImageSetup", profiles.ImageSetup, dict(name="t", dataset="digits", column="CIFAR-10"),
          fix="ImageSetup.__post_init__: check dataset in setups.NUM_CLASSES, model in the known models, hidden widths >= 1, "
              "name a plain file-name component, grids non-empty, and sigmas given as tuples.")
for fld, v in (("num_test", 0), ("num_val", -3), ("epochs", 0), ("n", 0), ("val_n", 2.5), ("samples", True),
               ("iterations", -1), ("sigmas_l2", (-0.1,)), ("sigmas_l2", (NAN,)), ("iso_lr_grid", (0.0,))):
    g.p(fld, v)
g.p("sigmas_l2", 0.25, "0.25 (not a tuple)")
g.p("dataset", "foo", "'foo'", why="unknown dataset accepted (fails only later in prepare)")
g.p("model", "resnet", "'resnet'", why="unknown model accepted (fails only later in build_model)")
g.p("hidden", (0,), "(0,)", why="a zero-width hidden layer accepted")
g.p("hidden", (-1,), "(-1,)", why="a negative width accepted")
g.p("name", "../x", "'../x'", why="a name with a path separator (used in cache/result file names) accepted")
g.p("iso_lr_grid", (), "()", why="an empty step-size grid accepted (select_settings then fails on max() of nothing)")
g = Group("profiles.ImageSetup (sigmas_l1=())", profiles.ImageSetup,
          dict(name="t", dataset="digits", column="CIFAR-10", sigmas_l1=()))
g.p("sigmas_l2", (), "()")
g = Group("profiles.get_profile", profiles.get_profile, dict(name="quick"), names={"name": [r"\bprofile\b"]})
g.p("name", "x", "'x'")
g.p("name", None)
g.p("name", "", "''")
g.p("name", ["quick"], "['quick']", fix="get_profile: check isinstance(name, str) first (TypeError naming name).")
FIX_US = "UcanSetup: add __post_init__ validation (lams/gammas > 0, counts via check_count) like ImageSetup."
g = Group("profiles.UcanSetup", profiles.UcanSetup, dict(column="digits"), fix=FIX_US)
for fld, v in (("lams", (-1.0,)), ("epochs", 0), ("num_val", -3), ("val_n", 0), ("growth", 0), ("gammas", (0.0,))):
    g.p(fld, v, why=f"UcanSetup with {fld}={v} created")
FIX_PR = "Profile: add __post_init__ validation (n0, n, batch_size via check_count; alpha via check_probability)."
g = Group("profiles.Profile", profiles.Profile, dict(name="p"), fix=FIX_PR)
for fld, v in (("n0", 0), ("n", -1), ("alpha", 2.0), ("batch_size", 0), ("mc_samples", -5)):
    g.p(fld, v, why=f"Profile with {fld}={v} created")

# ================================================================================================
# setups.py
# ================================================================================================
g = Group("setups.theta_of", setups.theta_of, dict(norm="l2", sigma=0.5),
          fix="theta_of: sigma = check_positive(sigma, 'sigma').")
g.p("norm", "l3", "'l3'")
g.p("sigma", -1.0, why="negative smoothing scale")
g.p("sigma", NAN, why="NaN smoothing scale")
g.p("sigma", 0.0, why="zero smoothing scale")
g.p("sigma", "abc", "'abc'", why="returns the string 'abc' as the smoothing scale")
g = Group("setups.theta_of (l1)", setups.theta_of, dict(norm="l1", sigma=0.5),
          fix="theta_of: sigma = check_positive(sigma, 'sigma').")
g.p("sigma", "abc", "'abc'")
g = Group("setups.checkpoint_path", setups.checkpoint_path,
          dict(data_dir=TMP, dataset="cifar10", norm="l2", sigma=0.25),
          fix="checkpoint_path: check dataset in NUM_CLASSES, norm in names.NOISE_OF, sigma > 0 (ValueError naming them).")
g.p("norm", "l3", "'l3'", why="a path for a nonexistent norm")
g.p("sigma", -1.0, why="a path for sigma -1")
g.p("dataset", "../../etc", "'../../etc'", why="path traversal out of data_dir/checkpoints")
g = Group("setups.missing_inputs", setups.missing_inputs, dict(profile=profiles.get_profile("paper"), data_dir=TMP / "nodata"),
          fix="missing_inputs: require a Profile (TypeError naming profile; suggest get_profile(name)) and a path data_dir.")
g.p("profile", "paper", "'paper' (a name, not a Profile)")
g.p("profile", None)
g.p("data_dir", None)

# prepare: the baseline loads the digits split and the model from a pre-written cache (no training)
PREP_DIR = TMP / "prep"
PSETUP = profiles.ImageSetup("t", "digits", "CIFAR-10", hidden=(4,), epochs=1, sigmas_l2=(0.25,), sigmas_l1=(),
                             num_test=10, num_val=5)
_recipe = json.dumps(dict(model=PSETUP.model, hidden=PSETUP.hidden, epochs=PSETUP.epochs, lr=setups.TRAIN_LR),
                     sort_keys=True)
import hashlib  # noqa: E402

_tag = hashlib.sha256(_recipe.encode()).hexdigest()[:8]
_cache = PREP_DIR / "cache" / "quick" / f"t_mlp-{_tag}_l2_sigma0.25_seed0.pt"
_cache.parent.mkdir(parents=True)
torch.save(setups.seeded_model(PSETUP, (1, 8, 8), 10, 0).state_dict(), _cache)
g = Group("setups.prepare", setups.prepare, dict(setup=PSETUP, seed=0, data_dir=PREP_DIR),
          baseline_note="baseline reads a pre-written model cache, so nothing is trained",
          fix="prepare: check setup is an ImageSetup, data_dir a path, cache a str (TypeError naming them).")
for v, lab in ((-1, None), (1.5, None), (True, None), (2 ** 32, "2**32"), ("0", "'0'"), (None, None)):
    g.p("seed", v, lab)
g.p("setup", None)
g.p("setup", Lazy(lambda: dataclasses.replace(PSETUP, dataset="foo"), "ImageSetup(dataset='foo')"), "ImageSetup(dataset='foo')",
    names=[r"\bdataset\b"])
g.p("setup", Lazy(lambda: dataclasses.replace(PSETUP, model="resnet"), "ImageSetup(model='resnet')"), "ImageSetup(model='resnet')",
    names=[r"\bmodel\b"])
g.p("setup", dataclasses.replace(PSETUP, dataset="cifar10", model="checkpoint"), "ImageSetup(dataset='cifar10'), no data",
    names=[r"cifar", r"checkpoint"])
g.p("data_dir", None)
g.p("cache", 5)
g = Group("setups.build_model", setups.build_model, dict(setup=PSETUP, input_shape=(1, 8, 8), num_classes=10),
          fix="build_model: num_classes = check_count(num_classes, 'num_classes', 2).")
g.p("setup", Lazy(lambda: dataclasses.replace(PSETUP, model="resnet"), "ImageSetup(model='resnet')"), "ImageSetup(model='resnet')",
    names=[r"\bmodel\b"])
g.p("num_classes", 0, why="a classifier with zero outputs")
g.p("num_classes", 1, why="a one-class classifier (cannot be certified: Smooth needs >= 2)")
g = Group("setups.build_model (cnn)", setups.build_model,
          dict(setup=dataclasses.replace(PSETUP, model="cnn"), input_shape=(1, 8, 8), num_classes=10))
g.p("input_shape", (1, 8), "(1, 8)")

# ================================================================================================
# data.py
# ================================================================================================
FIX_RD = ("radial_dataset: n = check_count(n, 'n', 2); seed int >= 0; margin finite and >= 0 and small enough that points "
          "remain (else ValueError; margin too large loops forever); boundaries non-empty.")
g = Group("data.radial_dataset", data.radial_dataset, dict(n=20, seed=0), fix=FIX_RD)
for v, lab in ((1, None), (0, None), (2.5, None), ("20", "'20'"), (None, None)):
    g.p("n", v, lab)
g.p("seed", -1)
g.p("boundaries", (2.0, 1.0), "(2, 1)")
g.p("boundaries", (), "()", why="no boundary: every point has label 0 (a one-class 'binary' dataset)")
g.p("boundaries", (1.0, 3.0), "(1, 3) with outer 2.8")
g.p("margin", -1.0, why="a negative margin accepted (no gap around the boundaries)")
g.p("margin", 10.0, why="margin wider than the disc: no point is ever kept, infinite loop", timeout=5)
g.p("margin", NAN, why="NaN margin: no point is ever kept, infinite loop", timeout=5)
g.p("outer", NAN)
g.p("outer", -1.0)

FIX_DS = ("digits_split / mnist5k_split: seed int in [0, 2**32) and fractions as real numbers (TypeError/ValueError naming "
          "them), and val_fraction/test_fraction large enough for one input per class.")
g = Group("data.digits_split", data.digits_split, dict(seed=0), fix=FIX_DS)
for v, lab in ((0, None), (1, None), (NAN, None), (-0.1, None), ("0.2", "'0.2'"), (None, None), (1e-4, None)):
    g.p("val_fraction", v, lab)
g.p("test_fraction", 0.9, "0.9 (+ val 0.2 >= 1)")
g.p("seed", -1)
g.p("seed", 1.5)
g.p("seed", "a", "'a'")
g = Group("data.mnist5k_split", data.mnist5k_split, dict(seed=0), fix=FIX_DS)
g.p("val_fraction", 0)
g.p("seed", -1)

CIF = TMP / "cifar"


def make_cifar(root, content):
    folder = root / data.CIFAR10_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_batch").write_bytes(content)
    return root


make_cifar(CIF / "ok", pickle.dumps({"data": np.zeros((2, 3072), np.uint8), "labels": [0, 1]}))
make_cifar(CIF / "garbage", b"\x00\x01not a pickle")
make_cifar(CIF / "list", pickle.dumps([1, 2, 3]))
make_cifar(CIF / "shape", pickle.dumps({"data": np.zeros((2, 100), np.uint8), "labels": [0, 1]}))
make_cifar(CIF / "labels", pickle.dumps({"data": np.zeros((2, 3072), np.uint8), "labels": [0, 99]}))
g = Group("data.cifar10", data.cifar10, dict(root=CIF / "ok", split="test"),
          names={"root": [r"cifar", r"test_batch", r"\broot\b"]},
          fix="_read_cifar_batch: catch pickle errors (UnpicklingError, EOFError) and re-raise ValueError naming the file; check labels in 0..9.")
g.p("split", "val", "'val'")
g.p("root", CIF / "missing", "missing folder")
g.p("root", CIF / "garbage", "test_batch not a pickle")
g.p("root", CIF / "list", "test_batch a pickled list")
g.p("root", CIF / "shape", "data of shape (2,100)")
g.p("root", CIF / "labels", "labels [0, 99]", why="label 99 in a 10-class dataset accepted")
g.p("root", None)

from PIL import Image  # noqa: E402

IMN = TMP / "imagenet"
for cls in ("n01", "n02"):
    (IMN / "val" / cls).mkdir(parents=True)
    Image.new("RGB", (8, 8), (10, 20, 30)).save(IMN / "val" / cls / "a.png")
(IMN / "empty" / "val").mkdir(parents=True)
g = Group("data.imagenet_subset", data.imagenet_subset, dict(root=IMN, split="val", count=2),
          names={"root": [r"imagenet", r"\broot\b"]},
          fix="imagenet_subset: count = check_count(count, 'count') before the range check.")
for v, lab in ((0, None), (3, "3 (> 2 images)"), (-1, None), ("2", "'2'")):
    g.p("count", v, lab)
g.p("count", 1.5, why="a fractional count is accepted and 2 images are returned", detail=lambda sp: f"{len(sp)} images")
g.p("split", "test", "'test'")
g.p("root", IMN / "missing", "missing folder")
g.p("root", IMN / "empty", "val folder with no images")

# ================================================================================================
# validation.py
# ================================================================================================
g = Group("validation.check_probability", validation.check_probability, dict(value=0.5, name="alpha"),
          names={"value": [r"\balpha\b"]}, fix="check_probability: reject str and bool before float(value).")
for v, lab in ((True, None), (None, None), ([0.5], None), (0.5j, "0.5j"), (NAN, None)):
    g.p("value", v, lab)
g.p("value", "0.5", "'0.5'", why="a string is accepted as a probability")
g = Group("validation.check_count", validation.check_count, dict(value=3, name="n"), names={"value": [r"\bn must\b"]})
for v, lab in ((1.0, None), ("3", "'3'"), (True, None), (np.float64(3), "np.float64(3)"), (-1, None), (None, None)):
    g.p("value", v, lab)
g.p("minimum", "a", "'a'", fix="check_count: validate minimum is an int (TypeError naming minimum).")
g = Group("validation.check_positive", validation.check_positive, dict(value=2.0, name="lr"),
          names={"value": [r"\blr\b"]}, fix="check_positive: reject bool and str before float(value).")
for v, lab in ((0, None), (NAN, None), (None, None), (-INF, None)):
    g.p("value", v, lab)
g.p("value", True, why="bool accepted as 1.0")
g.p("value", "2", "'2'", why="string accepted as 2.0")
g = Group("validation.check_finite_tensor", validation.check_finite_tensor, lambda: dict(x=torch.zeros(2), name="x"),
          fix="check_finite_tensor: wrap torch.as_tensor and tuple(shape) in ValueErrors naming the argument.")
g.p("x", "abc", "'abc'")
g.p("x", None)
g.p("x", torch.tensor([NAN]), "[nan]")
g.p("shape", 5)
g = Group("validation.check_scale", validation.check_scale, dict(theta=0.5, shape=(2, 2)),
          fix="check_scale: reject bool/str/None theta and validate shape (positive ints), naming them.")
g.p("theta", "a", "'a'")
g.p("theta", None)
g.p("theta", NAN)
g.p("theta", True, why="bool accepted as the scale 1.0")
g.p("shape", (2, -1), "(2, -1)")
g = Group("validation.check_choice", validation.check_choice, dict(value="a", name="x", choices=("a", "b")),
          names={"value": [r"\bx must"]})
g.p("value", ["a"], "['a']")
g.p("value", None)
g.p("choices", None, fix="check_choice: require a sequence of choices (TypeError naming choices).")

# ================================================================================================
# models.py
# ================================================================================================
FIX_MLP = ("MLP: validate input_shape (positive ints), num_classes (int >= 2), hidden (positive ints), mean/std "
           "(finite; std > 0), with ValueError naming them.")
g = Group("models.MLP", models.MLP, dict(input_shape=(1, 2, 2), num_classes=3, hidden=(4,)), fix=FIX_MLP)
g.p("activation", "tanh", "'tanh'")
g.p("std", (0.0,), "(0,)")
g.p("std", (-1.0,), "(-1,)")
g.p("mean", (0.5, 0.5), "(0.5, 0.5) vs std (0.25,)")
MO = lambda m: f"logits on x=0.5: {m(torch.full((1, 1, 2, 2), 0.5)).tolist()}"  # noqa: E731
g.p("std", (NAN,), "(nan,)", why="NaN normalisation: every logit will be NaN", detail=MO)
g.p("mean", (NAN,), "(nan,)", why="NaN normalisation: every logit will be NaN", detail=MO)
g.p("num_classes", 0, why="a classifier with zero outputs")
g.p("num_classes", 1, why="a one-class classifier")
g.p("num_classes", -1)
g.p("num_classes", 2.5)
g.p("input_shape", (0, 2, 2), "(0, 2, 2)", why="a model over zero input features")
g.p("input_shape", (-1,), "(-1,)")
g.p("input_shape", "ab", "'ab'")
g.p("hidden", (0,), "(0,)", why="a zero-width hidden layer: the output is a constant")
g.p("hidden", (-2,), "(-2,)")
g.p("hidden", (2.5,), "(2.5,)")
FIX_CNN = ("SmallCNN: require input_shape entries to be ints >= 1 (reject 1.5), channels and hidden >= 1, num_classes >= 2, "
           "ValueError naming them.")
g = Group("models.SmallCNN", models.SmallCNN, dict(input_shape=(1, 8, 8), num_classes=10), fix=FIX_CNN)
g.p("input_shape", (8, 8), "(8, 8)")
g.p("input_shape", (0, 8, 8), "(0, 8, 8)")
g.p("input_shape", (1.5, 8, 8), "(1.5, 8, 8)", why="a fractional channel count truncated to 1")
g.p("activation", "tanh", "'tanh'")
g.p("channels", (0, 16), "(0, 16)", why="a convolution with zero output channels: constant features")
g.p("channels", (-1, 16), "(-1, 16)")
g.p("hidden", 0, why="a zero-width hidden layer: constant output")
g.p("num_classes", 0, why="a classifier with zero outputs")
g.p("std", (0.0,), "(0,)")
g = Group("models.Normalize", models.Normalize, dict(mean=(0.5,), std=(0.25,)),
          fix="Normalize: require finite mean and std (and std > 0), numbers only (ValueError naming them).")
g.p("std", (0.0,), "(0,)")
NRM = lambda m: f"output on 0.5: {m(torch.full((1, 1), 0.5)).tolist()}"  # noqa: E731
g.p("std", (NAN,), "(nan,)", why="NaN std accepted", detail=NRM)
g.p("mean", (INF,), "(inf,)", why="infinite mean accepted", detail=NRM)
g.p("std", "ab", "'ab'")
g = Group("models.ToyClassifier", models.ToyClassifier, dict(discs=[((0.0, 0.0), 1.0)]),
          fix="ToyClassifier: sharpness finite > 0, radii >= 0, centres of 2 coordinates (ValueError naming them).")
g.p("discs", [], "[] (and no other shape)", names=[r"\bdisc\b"])
TOY = lambda m: f"logits at (0,0): {m(torch.zeros(1, 2)).tolist()}"  # noqa: E731
g.p("sharpness", -1.0, why="negative sharpness flips the classes", detail=TOY)
g.p("sharpness", NAN, why="NaN logits at every point", detail=TOY)
g.p("discs", [((0.0, 0.0), -1.0)], "[((0,0), -1)]", why="a disc of negative radius", detail=TOY)
g.p("discs", [((0.0, 0.0, 0.0), 1.0)], "[((0,0,0), 1)] (3-D centre)")

# ================================================================================================
# train.py
# ================================================================================================
FIX_TC = ("train_classifier: check stability finite >= 0, momentum finite >= 0, x finite (check_finite_tensor) and y "
          "integer labels matching the model's outputs, ValueError naming them.")
g = Group("train.train_classifier", train.train_classifier,
          lambda: dict(model=models.MLP((1, 2, 2), 3, hidden=(4,)), x=X8.clone(), y=Y8.clone(), noise="gaussian",
                       scale=0.25, epochs=1, batch_size=4), fix=FIX_TC)
g.p("noise", "bogus", "'bogus'")
for v in (0, -1, NAN):
    g.p("scale", v)
g.p("epochs", 0)
g.p("epochs", 1.5)
g.p("batch_size", 0)
g.p("lr", 0)
g.p("lr", NAN)
g.p("momentum", -1.0)
g.p("momentum", NAN, why="NaN momentum accepted: weights become NaN")
g.p("weight_decay", -1.0)
g.p("stability", -1.0, why="a negative stability weight is silently ignored (treated as 0)")
g.p("stability", NAN, why="a NaN stability weight is silently ignored")
g.p("y", Y8[:5].clone(), "5 labels for 8 inputs")
g.p("y", torch.tensor([0, 1, 2, 0, 1, 2, 0, 9]), "label 9 (3 classes)")
g.p("y", Y8.float(), "float labels")
g.p("x", Lazy(lambda: X8 * NAN, "NaN"), why="trained on NaN inputs: NaN weights returned")
g.p("model", None)
g = Group("train.accuracy", train.accuracy,
          lambda: dict(model=tiny_model(), x=X8.clone(), y=Y8.clone(), noise="gaussian", scale=0.25),
          fix="accuracy: check_noise; scale = check_positive(scale, 'scale') when noise is given; len(x) == len(y).")
g.p("noise", "bogus", "'bogus'")
g.p("scale", -1.0, why="negative noise scale accepted")
g.p("scale", NAN)
g.p("y", Y8[:5].clone(), "5 labels for 8 inputs")
(TMP / "corrupt.pt").write_bytes(b"garbage")
g = Group("train.train_cached", train.train_cached,
          lambda: dict(path=fresh_log().with_suffix(".pt"), build=lambda: tiny_model(), fit=lambda m: m),
          names={"path": [r"corrupt\.pt", r"\bpath\b", r"tmp\b"]},
          fix="train_cached: check build() / fit() return nn.Modules (TypeError naming build/fit).")
g.p("path", TMP / "corrupt.pt", "a corrupt cache file")
g.p("path", TMP, "a directory")
g.p("build", None)
g.p("fit", lambda m: None, "fit returning None")
g = Group("train.model_fingerprint", train.model_fingerprint, lambda: dict(model=tiny_model()),
          fix="model_fingerprint: require an nn.Module (TypeError naming model).")
g.p("model", None)

# ================================================================================================
# superset.py / verify.py (listed in the module map)
# ================================================================================================
g = Group("superset.average_theta", superset.average_theta, lambda: dict(thetas=np.full((3, 4), 0.5)))
g.p("kind", "median", "'median'")
g.p("thetas", np.full((3, 4), -0.5), "-0.5 (3,4)")
g.p("thetas", np.full(4, 0.5), "1-D")
g = Group("superset.anisotropy", superset.anisotropy, lambda: dict(thetas=np.full((3, 4), 0.5)),
          fix="anisotropy: require finite thetas > 0 of shape (N, ...) (ValueError naming thetas), as average_theta does.")
g.p("thetas", np.zeros((3, 4)), "zeros (3,4)", why="0/0 = NaN anisotropy")
g.p("thetas", -np.full((3, 4), 0.5), "-0.5 (3,4)", why="negative scales accepted")
g = Group("superset.ellipsoid_slice", superset.ellipsoid_slice,
          lambda: dict(scales=np.full(4, 0.5), u=np.eye(4)[0], v=np.eye(4)[1], num=16),
          fix="ellipsoid_slice: num = check_count(num, 'num', 2).")
g.p("u", np.ones(4), "ones(4) (not unit)")
g.p("scales", np.zeros(4), "zeros(4)")
g.p("num", 0, why="an empty boundary returned")
g.p("num", -1)
g = Group("verify.smoothed_predictions", verify.smoothed_predictions,
          lambda: dict(model=tiny_model(), points=torch.full((2, 1, 2, 2), 0.5), theta=0.5, noise="gaussian", num=20),
          fix="smoothed_predictions: rotation = noise.check_rotation(rotation, n) and check_noise(noise) first.")
g.p("noise", "bogus", "'bogus'")
g.p("num", 0)
g.p("theta", -0.5)
g.p("rotation", torch.tensor(NONORTH, dtype=torch.float32), "2*I", why="non-orthogonal rotation applied unchecked")
g.p("points", torch.full((2, 1, 2, 2), NAN), "NaN")
g = Group("verify.region_boundary_2d", verify.region_boundary_2d,
          lambda: dict(center=np.zeros(2), scales=np.full(2, 0.5), norm="l2"),
          fix="region_boundary_2d: require scales finite > 0 of 2 entries, num an int (ValueError naming them).")
g.p("num", 4)
g.p("norm", "l3", "'l3'")
g.p("scales", -np.full(2, 0.5), "-0.5 x2", why="negative semi-axes accepted")
g.p("num", 8.5)
g = Group("verify.region_fill_2d", verify.region_fill_2d,
          lambda: dict(center=np.zeros(2), scales=np.full(2, 0.5), norm="l2", per_axis=5, boundary=8),
          fix="region_fill_2d: require 0 < shrink <= 1, per_axis/boundary ints >= 1 (ValueError naming them).")
RN = lambda out: f"max ||p/s||_2 over the returned points = {np.sqrt(((out / 0.5) ** 2).sum(1)).max():.3g}"  # noqa: E731
g.p("shrink", 2.0, why="boundary points pushed OUTSIDE the region (shrink > 1)", detail=RN)
g.p("shrink", -1.0, why="boundary points mirrored through the centre", detail=RN)
g.p("per_axis", 0, why="no grid points; only the boundary returned")

# ================================================================================================
# output
# ================================================================================================
counts = {c: sum(r["category"] == c for r in RESULTS) for c in ("clear", "unclear", "silent")}
bad_baselines = [b for b in BASELINES if b["ok"] is False]
print(f"\n{len(RESULTS)} cases: {counts}; baselines: {len(BASELINES)} ({len(bad_baselines)} failed)")
(HERE / "results.json").write_text(json.dumps(dict(results=RESULTS, baselines=BASELINES, counts=counts), indent=1,
                                              default=str))
