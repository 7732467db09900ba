"""Bad inputs of certify.py (Smooth, lower_confidence_bound, certificate_from_bound) and memory.py (decide,
CertificationMemory) raise ValueError or TypeError naming the argument (every public function's bad inputs:
tests/test_bad_input_table.py); valid inputs give the same numbers as before the checks
(values pinned from the code before them)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from ancer_lite.core import memory as M
from ancer_lite.core.certify import Smooth, certificate_from_bound, lower_confidence_bound

SHAPE = (1, 2, 2)
X = torch.tensor([[[0.2, 0.7], [0.4, 0.9]]])
THETA4 = np.array([0.3, 0.5, 0.7, 0.4])
U4 = np.array([[0.6, -0.8, 0, 0], [0.8, 0.6, 0, 0], [0, 0, 0, 1.0], [0, 0, 1.0, 0]])  # orthogonal


def linear(flatten: bool = True) -> nn.Module:
    """Linear(4, 3) with fixed weights (after Flatten unless told otherwise), in evaluation mode."""
    lin = nn.Linear(4, 3)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, -0.5, 0.2, 0.0], [-0.3, 0.8, 0.1, 0.4], [0.2, 0.1, -0.6, 0.5]]))
        lin.bias.copy_(torch.tensor([0.1, 0.0, -0.1]))
    return (nn.Sequential(nn.Flatten(), lin) if flatten else lin).eval()


def smooth(noise: str = "gaussian", **kw) -> Smooth:
    return Smooth(kw.pop("model", linear()), 3, kw.pop("input_shape", SHAPE), noise, seed=kw.pop("seed", 7),
                  batch_size=64, **kw)


def named(name: str) -> str:
    return rf"(?<![\w.]){name}(?![\w])"


# --------------------------------------------------------------------------------------------------
# bad inputs: (id, call, argument name the message must contain)
# --------------------------------------------------------------------------------------------------

def _decide(**kw):
    args = dict(x=np.full(4, 2.0), pred=1, scales=np.full(4, 0.5), mem_centers=np.zeros((1, 4)),
                mem_preds=np.array([0]), mem_scales=np.full((1, 4), 0.5), norm="l2", policy="shrink")
    args.update(kw)
    return M.decide(**args)


def _memory_certify(x=np.full(4, 2.0), pred=1, scales=np.full(4, 0.5)):
    mem = M.CertificationMemory(4, "l2")
    mem.certify(np.zeros(4), 0, np.full(4, 0.5))
    return mem.certify(x, pred, scales)


def _cfb(**kw):
    args = dict(prediction=0, p_lower=0.9, theta=THETA4.copy(), norm="l2", count=90, n=100)
    args.update(kw)
    return certificate_from_bound(**args)


F64 = torch.float64
CASES = [
    # Smooth: the model, input_shape and seed
    ("model without Flatten", lambda: smooth(model=linear(flatten=False)).certify(X, 0.5, 10, 100, 0.01), "model"),
    ("input_shape the model cannot take",
     lambda: smooth(input_shape=(1, 2, 3)).certify(torch.full((1, 2, 3), 0.5), 0.5, 10, 100, 0.01), "input_shape"),
    ("seed 2**70", lambda: smooth(seed=2 ** 70), "seed"),
    # x
    ("x str", lambda: smooth().sample_counts("abc", 0.5, 10), "x"),
    ("x None", lambda: smooth().sample_counts(None, 0.5, 10), "x"),
    ("x uint8", lambda: smooth().sample_counts(torch.full(SHAPE, 128, dtype=torch.uint8), 0.5, 10), "x"),
    ("x complex", lambda: smooth().sample_counts(torch.full(SHAPE, 0.5 + 0.5j), 0.5, 10), "x"),
    ("certify x None", lambda: smooth().certify(None, 0.5, 10, 100, 0.01), "x"),
    ("certify x uint8", lambda: smooth().certify(torch.full(SHAPE, 128, dtype=torch.uint8), 0.5, 10, 100, 0.01),
     "x"),
    # theta (sigma / lambda)
    ("theta 1e39", lambda: smooth().sample_counts(X, 1e39, 10), "sigma"),
    ("theta str", lambda: smooth().sample_counts(X, "0.5", 10), "sigma"),
    ("theta None", lambda: smooth().sample_counts(X, None, 10), "sigma"),
    ("theta True", lambda: smooth().sample_counts(X, True, 10), "sigma"),
    ("theta complex", lambda: smooth().sample_counts(X, 0.5 + 0.5j, 10), "sigma"),
    ("theta True uniform", lambda: smooth("uniform").sample_counts(X, True, 10), "lambda"),
    ("theta 1e-300 underflows", lambda: smooth().certify(X, 1e-300, 10, 100, 0.01), "sigma"),
    ("theta float64 tensor overflows", lambda: smooth().certify(X, torch.full(SHAPE, 1e39, dtype=F64), 10, 100, 0.01),
     "sigma"),
    ("theta float64 tensor underflows",
     lambda: smooth().certify(X, torch.tensor([[[0.5, 1e-300], [0.5, 0.5]]], dtype=F64), 10, 100, 0.01), "sigma"),
    ("certify theta 1e39", lambda: smooth().certify(X, 1e39, 10, 100, 0.01), "sigma"),
    ("certify theta str", lambda: smooth().certify(X, "0.5", 10, 100, 0.01), "sigma"),
    ("certify theta True", lambda: smooth().certify(X, True, 10, 100, 0.01), "sigma"),
    # rotation, alpha
    ("rotation str", lambda: smooth().sample_counts(X, 0.5, 10, rotation="eye"), "rotation"),
    ("predict alpha str", lambda: smooth().predict(X, 0.5, 100, "0.05"), "alpha"),
    ("certify alpha str", lambda: smooth().certify(X, 0.5, 10, 100, "0.01"), "alpha"),
    ("lower_confidence_bound alpha str", lambda: lower_confidence_bound(90, 100, "0.01"), "alpha"),
    # lower_confidence_bound
    ("k complex", lambda: lower_confidence_bound(90 + 0j, 100, 0.01), "k"),
    # certificate_from_bound
    ("p_lower str", lambda: _cfb(p_lower="0.9"), "p_lower"),
    ("p_lower None", lambda: _cfb(p_lower=None), "p_lower"),
    ("p_lower array", lambda: _cfb(p_lower=np.array([0.9, 0.8])), "p_lower"),
    ("theta str", lambda: _cfb(theta="abc"), "theta"),
    ("rotation 2I l2", lambda: _cfb(rotation=2 * np.eye(4)), "rotation"),
    ("rotation NaN l2", lambda: _cfb(rotation=np.full((4, 4), np.nan)), "rotation"),
    ("rotation str l2", lambda: _cfb(rotation="abc"), "rotation"),
    ("rotation I_3 l2", lambda: _cfb(rotation=np.eye(3)), "rotation"),
    ("rotation 2I l1", lambda: _cfb(norm="l1", rotation=2 * np.eye(4)), "rotation"),
    ("rotation NaN l1", lambda: _cfb(norm="l1", rotation=np.full((4, 4), np.nan)), "rotation"),
    ("rotation I_3 l1", lambda: _cfb(norm="l1", rotation=np.eye(3)), "rotation"),
    ("rotation zeros l1", lambda: _cfb(norm="l1", rotation=np.zeros((4, 4))), "rotation"),
    ("rotation str l1", lambda: _cfb(norm="l1", rotation="abc"), "rotation"),
    # memory.decide
    ("decide policy", lambda: _decide(policy="bogus"), "policy"),
    ("decide norm", lambda: _decide(norm="l3"), "norm"),
    ("decide pred -5", lambda: _decide(pred=-5), "pred"),
    ("decide pred 1.5", lambda: _decide(pred=1.5), "pred"),
    ("decide scales negative", lambda: _decide(scales=np.full(4, -0.5)), "scales"),
    ("decide scales NaN", lambda: _decide(scales=np.full(4, np.nan)), "scales"),
    ("decide x NaN", lambda: _decide(x=np.full(4, np.nan)), "x"),
    ("decide x 2-D", lambda: _decide(x=np.full((1, 4), 2.0)), "x"),
    ("decide x str", lambda: _decide(x="abc"), "x"),
    ("decide mem_preds too long", lambda: _decide(mem_preds=np.array([0, 1])), "mem_preds"),
    ("decide mem_preds -5", lambda: _decide(mem_preds=np.array([-5])), "mem_preds"),
    ("decide mem_centers (1, 3)", lambda: _decide(mem_centers=np.zeros((1, 3))), "mem_centers"),
    ("decide mem_centers str", lambda: _decide(mem_centers="abc"), "mem_centers"),
    ("decide mem_scales NaN", lambda: _decide(mem_scales=np.full((1, 4), np.nan)), "mem_scales"),
    ("decide mem_scales 0", lambda: _decide(mem_scales=np.zeros((1, 4))), "mem_scales"),
    ("decide x (3,)", lambda: _decide(x=np.full(3, 2.0)), "x"),
    ("decide scales (3,)", lambda: _decide(scales=np.full(3, 0.5)), "scales"),
    # CertificationMemory
    ("CertificationMemory dim True", lambda: M.CertificationMemory(True, "l2"), "dim"),
    ("CertificationMemory.certify x str", lambda: _memory_certify(x="abc"), "x"),
    ("CertificationMemory.certify scales str", lambda: _memory_certify(scales="abc"), "scales"),
]


@pytest.mark.parametrize("call,name", [pytest.param(c, n, id=i) for i, c, n in CASES])
def test_bad_input_names_argument(call, name):
    """Each bad input raises ValueError or TypeError whose message names the argument."""
    with pytest.raises((ValueError, TypeError), match=named(name)):
        call()


def test_theta_underflow_message_says_float32():
    """sigma = 1e-300 is > 0 but 0 in the float32 noise: the message says so instead of 'must be > 0' alone."""
    with pytest.raises(ValueError, match="underflows to 0 when cast to float32"):
        smooth().sample_counts(X, 1e-300, 10)


class FailsOnLargeInputs(nn.Module):
    """Linear(4, 3) that raises RuntimeError on inputs beyond 10: a failure of the model, not of the shapes."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = linear()

    def forward(self, x):
        if float(x.abs().max()) > 10:
            raise RuntimeError("boom")
        return self.lin(x)


def test_later_model_errors_pass_through():
    """Only a failure of the first forward pass is reported as a model that cannot take (b, *input_shape);
    once a batch went through, the model's own RuntimeError passes unchanged."""
    sm = smooth(model=FailsOnLargeInputs(), domain=None)
    sm.sample_counts(X, 0.5, 10)
    with pytest.raises(RuntimeError, match="boom"):
        sm.sample_counts(X + 100.0, 0.5, 10)


# --------------------------------------------------------------------------------------------------
# valid inputs: the same numbers as before the checks
# --------------------------------------------------------------------------------------------------

U4_T = torch.tensor(U4, dtype=torch.float64)
# (noise, theta, rotated) -> (prediction, count of 300, sample_counts of 50 draws right after), from the code
# before the checks (seed 7, batch size 64). The Gaussian sample_counts changed on 2026-11-26:
# its 50 draws of 4 numbers end inside one of normal_'s 16-number blocks, which torch's earlier versions redrew; the draws are
# now one sequence however they are cut (`noise.DrawStream`). CERTIFY's own counts (whole blocks) are unchanged.
PINNED = {
    ("gaussian", "scalar", False): (1, 235, [12, 34, 4]), ("gaussian", "scalar", True): (1, 237, [11, 37, 2]),
    ("gaussian", "f32", False): (1, 235, [12, 34, 4]), ("gaussian", "f32", True): (1, 237, [11, 37, 2]),
    ("gaussian", "f64", False): (1, 235, [12, 34, 4]), ("gaussian", "f64", True): (1, 237, [11, 37, 2]),
    ("gaussian", "aniso", False): (1, 233, [9, 34, 7]), ("gaussian", "aniso", True): (1, 243, [11, 37, 2]),
    ("uniform", "scalar", False): (1, 289, [2, 47, 1]), ("uniform", "scalar", True): (1, 285, [2, 47, 1]),
    ("uniform", "f32", False): (1, 289, [2, 47, 1]), ("uniform", "f32", True): (1, 285, [2, 47, 1]),
    ("uniform", "f64", False): (1, 289, [2, 47, 1]), ("uniform", "f64", True): (1, 285, [2, 47, 1]),
    ("uniform", "aniso", False): (1, 290, [1, 48, 1]), ("uniform", "aniso", True): (1, 284, [2, 47, 1]),
}
PINNED_RADIUS = {("gaussian", "scalar", False): 0.29548834609199726, ("gaussian", "aniso", False): 0.17090993369198718,
                 ("uniform", "scalar", True): 0.2947140963318846, ("uniform", "aniso", True): 0.21126074024989835}
THETAS = {"scalar": lambda: 0.5, "f32": lambda: torch.full(SHAPE, 0.5),
          "f64": lambda: torch.full(SHAPE, 0.5, dtype=F64), "aniso": lambda: torch.tensor([[[0.3, 0.5], [0.7, 0.4]]], dtype=F64)}


@pytest.mark.parametrize("key", list(PINNED), ids=lambda k: "-".join(map(str, k)))
def test_certify_valid_inputs_unchanged(key):
    """CERTIFY and the sampling loop draw and count exactly as before the checks, for a scalar scale, float32
    and float64 tensors (cast once), anisotropic scales and a rotation."""
    noise, theta, rotated = key
    sm = smooth(noise)
    rot = U4_T if rotated else None
    cert = sm.certify(X, THETAS[theta](), 20, 300, 0.01, rotation=rot)
    counts = sm.sample_counts(X, THETAS[theta](), 50, rotation=rot)
    prediction, count, after = PINNED[key]
    assert (cert.prediction, cert.count, cert.n, counts.tolist()) == (prediction, count, 300, after)
    assert cert.p_lower == float(lower_confidence_bound(count, 300, 0.01))
    if key in PINNED_RADIUS:
        assert cert.radius == pytest.approx(PINNED_RADIUS[key], rel=1e-12)


def test_certificate_from_bound_valid_rotation_unchanged():
    """A valid rotation is accepted (also as a torch tensor or list) and gives the l1 radius of before."""
    for rot in (U4, torch.tensor(U4), U4.tolist()):
        cert = certificate_from_bound(0, 0.9, THETA4, "l1", 90, 100, rotation=rot)
        assert cert.radius == pytest.approx(0.20689655172413793, rel=1e-12)
    for p in (0.9, np.float64(0.9), np.array(0.9), torch.tensor(0.9, dtype=F64)):  # real scalars
        assert certificate_from_bound(0, p, THETA4, "l2", 90, 100).p_lower == 0.9


def test_lower_confidence_bound_valid_unchanged():
    """Integer and integral-float counts give the bounds of before."""
    want = [0.0, 0.00010049830824166791, 0.38071746690695246, 0.9354572679514184, 0.954992586021436]
    for k in (np.array([0, 1, 50, 99, 100]), np.array([0.0, 1.0, 50.0, 99.0, 100.0])):
        assert lower_confidence_bound(k, 100, 0.01) == pytest.approx(want, rel=1e-12)


def _memory(seed: int = 0):
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(30, 3))
    p = rng.integers(0, 3, 30)
    s = 0.4 * np.exp(0.5 * rng.normal(size=(30, 3)))
    return c, p, s


@pytest.mark.parametrize("norm,policy,status,radius", [
    ("l2", M.SHRINK, M.SHRUNK, 0.09089173816945743), ("l2", M.WORST_CASE, M.ABSTAIN_INTERSECT, None),
    ("l1", M.SHRINK, M.SHRUNK, 0.2108754288958434), ("l1", M.WORST_CASE, M.ABSTAIN_INTERSECT, None)])
def test_decide_valid_unchanged(norm, policy, status, radius):
    """decide (an entry point: it checks its arguments) gives the decision of before."""
    c, p, s = _memory()
    d = M.decide(c[0], 1, s[0], c[1:], p[1:], s[1:], norm, policy)
    assert d.status == status
    if radius is None:
        assert d.scales is None
    else:
        assert d.scales.tolist() == pytest.approx([radius] * 3, rel=1e-12)


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_memory_paths_agree_after_checks(norm):
    """certify_stream, algorithm1_reference and CertificationMemory (each checking its inputs once, then running
    Algorithm 1's pair tests on them as given) make the same decisions."""
    c, p, s = _memory(3)
    stream = M.certify_stream(c, p, s, norm)
    ref = M.algorithm1_reference(c, p, s, norm)
    mem = M.CertificationMemory(3, norm)
    inc = [mem.certify(c[j], int(p[j]), s[j]) for j in range(len(p))]
    for a, b, e in zip(stream, ref, inc):
        assert a.prediction == b.prediction == e.prediction and a.status == b.status == e.status
        if a.scales is not None:
            assert np.allclose(a.scales, b.scales, rtol=1e-9) and np.array_equal(a.scales, e.scales)
