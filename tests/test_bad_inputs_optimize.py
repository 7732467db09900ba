"""Bad inputs to optimize.py and experiment.py raise ValueError/TypeError naming the argument, and
the checks leave valid calls unchanged."""
import math

import numpy as np
import pytest
import torch

from ancer_lite.core.certify import soft_smoothed_probabilities
from ancer_lite.core.families import FAMILIES
from ancer_lite.methods import optimize
from ancer_lite.methods.registry import OptimSettings
from ancer_lite.runs import experiment, selection

NAN = math.nan
TINY = OptimSettings(chunk=8).with_budget(1, 4)
BAD = (ValueError, TypeError)


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 3))


def _x():
    return torch.full((2, 1, 2, 2), 0.5)


# (function, valid keyword arguments without model/x, argument, bad value, name the message must hold)
SP = dict(theta=torch.full((2, 1, 1, 1), 0.5), noise="gaussian", samples=4)
PG = dict(probs=torch.tensor([[0.7, 0.2, 0.1]]), noise="gaussian")
OI = dict(theta0=0.5, noise="gaussian", iterations=1, lr=1e-2, samples=4)
OA = dict(theta_iso=torch.tensor([0.5, 0.5]), noise="gaussian", iterations=1, lr=0.04, samples=4, kappa=2.0)
OT = dict(noise="gaussian", theta0=0.5, method="isotropic", settings=TINY)
OT_ANCER = dict(OT, method="ancer", isotropic=np.full((2, 1, 2, 2), 0.5, np.float32))
WS = dict(grid=[1.0, 2.0], evaluate=lambda v: {"s": -abs(v - 1.0)}, score=lambda r: r["s"], widen=1)

CASES = [
    ("smoothed_probabilities", SP, "theta", torch.full((2, 1, 1, 1), -0.5), "theta"),
    ("smoothed_probabilities", SP, "theta", torch.full((2, 1, 1, 1), NAN), "theta"),
    ("smoothed_probabilities", SP, "theta", torch.full((3, 1, 1, 1), 0.5), "theta"),
    ("smoothed_probabilities", SP, "theta", 0.5, "theta"),
    ("smoothed_probabilities", SP, "samples", 0, "samples"),
    ("smoothed_probabilities", SP, "samples", -1, "samples"),
    ("smoothed_probabilities", SP, "noise", "bad", "noise"),
    ("smoothed_probabilities", SP, "x", torch.full((4,), 0.5), "x"),
    ("smoothed_probabilities", SP, "x", "abc", "x"),
    ("smoothed_probabilities", SP, "rotation", 2 * torch.eye(4).expand(2, 4, 4), "rotation"),
    ("smoothed_probabilities", SP, "rotation", torch.full((2, 4, 4), NAN), "rotation"),
    ("smoothed_probabilities", SP, "rotation", torch.eye(3).expand(2, 3, 3), "rotation"),
    ("smoothed_probabilities", SP, "rotation", np.eye(4), "rotation"),
    ("proxy_gap", PG, "noise", "laplace", "noise"),
    ("proxy_gap", PG, "probs", torch.tensor([[1.0]]), "probs"),
    ("proxy_gap", PG, "probs", torch.tensor([0.7, 0.3]), "probs"),
    ("proxy_gap", PG, "probs", torch.tensor([[NAN, 0.2, 0.1]]), "probs"),
    ("proxy_gap", PG, "probs", torch.tensor([[5.0, -3.0, 0.0]]), "probs"),
    ("proxy_gap", PG, "probs", [[0.7, 0.3]], "probs"),
    ("proxy_gap", PG, "clamp", 0.6, "clamp"),
    ("proxy_gap", PG, "clamp", 0.5, "clamp"),
    ("proxy_gap", PG, "clamp", NAN, "clamp"),
    ("proxy_gap", PG, "clamp", 0.0, "clamp"),
    ("optimize_isotropic", OI, "theta0", "0.5", "theta0"),
    ("optimize_isotropic", OI, "theta0", True, "theta0"),
    ("optimize_isotropic", OI, "theta0", torch.tensor([True, True]), "theta0"),
    ("optimize_isotropic", OI, "theta0", torch.full((3,), 0.5), "theta0"),
    ("optimize_isotropic", OI, "theta0", -1.0, "theta0"),
    ("optimize_isotropic", OI, "theta0", NAN, "theta0"),
    ("optimize_isotropic", OI, "x", torch.empty(0, 1, 2, 2), "x"),
    ("optimize_isotropic", OI, "x", "abc", "x"),
    ("optimize_isotropic", OI, "x", torch.full((4,), 0.5), "x"),
    ("optimize_isotropic", OI, "lr", True, "lr"),
    ("optimize_isotropic", OI, "lr", 0, "lr"),
    ("optimize_isotropic", OI, "samples", 0, "samples"),
    ("optimize_isotropic", OI, "iterations", 1.5, "iterations"),
    ("optimize_ancer", OA, "kappa", math.inf, "kappa"),
    ("optimize_ancer", OA, "kappa", "2", "kappa"),
    ("optimize_ancer", OA, "kappa", -1.0, "kappa"),
    ("optimize_ancer", OA, "kappa", NAN, "kappa"),
    ("optimize_ancer", OA, "theta_iso", "a", "theta_iso"),
    ("optimize_ancer", OA, "theta_iso", torch.full((3,), 0.5), "theta_iso"),
    ("optimize_ancer", OA, "theta_iso", torch.full((2,), -0.5), "theta_iso"),
    ("optimize_ancer", OA, "rotation", 2 * torch.eye(4).expand(2, 4, 4), "rotation"),
    ("optimize_ancer", OA, "rotation", torch.eye(3).expand(2, 3, 3), "rotation"),
    # a non-orthogonal rotation whose rows all have unit norm: caught by optimize_ancer's full entry check
    ("optimize_ancer", OA, "rotation", torch.full((4, 4), 0.5).expand(2, 4, 4), "rotation"),
    ("optimize_thetas", OT, "theta0", "abc", "theta0"),
    ("optimize_thetas", OT, "theta0", True, "theta0"),
    ("optimize_thetas", OT, "settings", None, "settings"),
    ("optimize_thetas", OT, "seed", 1.5, "seed"),
    ("optimize_thetas", OT, "seed", -1, "seed"),
    ("optimize_thetas", OT, "method", "bogus", "method"),
    ("optimize_thetas", dict(OT, method="fixed"), "theta0", -1.0, "theta0"),
    ("optimize_thetas", dict(OT, method="fixed"), "theta0", NAN, "theta0"),
    ("optimize_thetas", dict(OT, method="fixed"), "theta0", 0.0, "theta0"),
    ("optimize_thetas", dict(OT, method="fixed"), "noise", "bogus", "noise"),
    ("optimize_thetas", OT_ANCER, "isotropic", np.full((2, 1, 2, 2), NAN, np.float32), "isotropic"),
    ("optimize_thetas", OT_ANCER, "isotropic", np.full((2, 1, 2, 2), -0.5, np.float32), "isotropic"),
    ("optimize_thetas", OT_ANCER, "isotropic", torch.full((2, 1, 2, 2), 0.5), "isotropic"),
    ("optimize_thetas", OT_ANCER, "isotropic", np.full((3, 1, 2, 2), 0.5, np.float32), "isotropic"),
]


@pytest.mark.parametrize("fn, base, arg, bad, name", CASES, ids=[f"{c[0]}-{c[2]}-{k}" for k, c in enumerate(CASES)])
def test_optimizers_name_the_bad_argument(fn, base, arg, bad, name):
    kwargs = dict(base, model=_model(), x=_x())
    if fn == "proxy_gap":
        kwargs = dict(base)
    kwargs[arg] = bad
    with pytest.raises(BAD, match=rf"(?<![\w.]){name}(?![\w])"):
        (getattr(optimize, fn, None) or getattr(experiment, fn))(**kwargs)


WS_CASES = [
    ("grid", [0.0, 1.0]), ("grid", []), ("grid", "abc"), ("grid", [1.0, NAN]), ("grid", [True, 2.0]), ("grid", 3.0),
    ("widen", -1), ("widen", 1.5), ("evaluate", 5), ("score", None),
]


@pytest.mark.parametrize("arg, bad", WS_CASES)
def test_widening_search_names_the_bad_argument(arg, bad):
    calls = []
    kwargs = dict(WS, evaluate=lambda v: calls.append(v) or {"s": -abs(v - 1.0)})
    kwargs[arg] = bad
    with pytest.raises(BAD, match=rf"(?<![\w.]){arg}(?![\w])"):
        selection.widening_search(**kwargs)
    assert not calls  # refused before anything is evaluated


def test_widening_search_accepts_zero_and_negative_values_without_widening():
    rows = selection.widening_search([0.0, -1.0], lambda v: {"s": v}, lambda r: r["s"], widen=0)
    assert sorted(rows) == [-1.0, 0.0]
    rows = selection.widening_search(iter([1.0, 2.0]), lambda v: {"s": v}, lambda r: r["s"], widen=1)
    assert sorted(rows) == [1.0, 2.0, 4.0]  # an iterator is read once


def _run_kwargs(tmp_path, method="isotropic"):
    return dict(model=_model(), x=_x(), y=torch.tensor([0, 0]), indices=np.array([0, 1]), noise="gaussian",
                theta0=0.5, method=method, settings=TINY, folder=tmp_path / "run", n0=5, n=20, alpha=0.01,
                num_classes=3)


RUN_CASES = [
    ("settings", None), ("folder", None), ("progress", 5), ("policy", "bogus"), ("theta0", -1.0), ("theta0", "abc"),
    ("method", "bogus"), ("noise", "bogus"), ("n0", 0), ("n", -1), ("alpha", 2.0), ("num_classes", 1),
    ("batch_size", 0), ("seed", -1), ("isotropic", np.full((2, 1, 2, 2), -0.5, np.float32)),
    ("isotropic", np.full((3, 1, 2, 2), 0.5, np.float32)), ("model", "not a model"),
]


@pytest.mark.parametrize("method", ["fixed", "isotropic"])
@pytest.mark.parametrize("arg, bad", RUN_CASES)
def test_run_method_refuses_before_writing(tmp_path, method, arg, bad):
    kwargs = _run_kwargs(tmp_path, method)
    kwargs[arg] = bad
    with pytest.raises(BAD, match=rf"(?<![\w.]){arg}(?![\w])"):
        experiment.run_method(**kwargs)
    assert not (tmp_path / "run").exists()  # nothing written


SEL_CASES = [
    ("grids", {"isotropic": [], "ancer": [1.0]}), ("grids", {"isotropic": [-1.0], "ancer": [1.0]}), ("grids", "abc"),
    ("grids", {"isotropic": [1.0], "ancer": [NAN]}), ("grids", None),
    ("widen", -1), ("widen", 1.5), ("theta0", 0.0), ("base", None), ("noise", "bogus"), ("seed", 1.5), ("n0", 0),
    ("alpha", 0.0), ("num_classes", 1),
]


@pytest.mark.parametrize("arg, bad", SEL_CASES)
def test_select_settings_names_the_bad_argument(arg, bad):
    kwargs = dict(model=_model(), x=_x(), y=torch.tensor([0, 0]), noise="gaussian", theta0=0.5,
                  grids={"isotropic": [1.0], "ancer": [1.0]}, base=TINY, n0=5, n=20, alpha=0.01, num_classes=3, widen=0)
    kwargs[arg] = bad
    with pytest.raises(BAD, match=rf"(?<![\w.]){arg}(?![\w])"):
        selection.select_settings(**kwargs)


# -- the valid paths are unchanged ----------------------------------------------------------------------------

def _orthogonal(b, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.linalg.qr(torch.randn(b, n, n, generator=g, dtype=torch.float64))[0].float()


@pytest.mark.parametrize("rotation", [False, True])
def test_checked_smoothed_probabilities_equal_the_optimizers_computation(rotation):
    """The checks draw no random numbers and change no arithmetic: the same generator gives the same
    probabilities (and gap) as the optimizers' steps, which take their checked arguments as given (the soft
    smoothed classifier on `unit_draws`, the family's soft gap)."""
    model, x = _model(), torch.rand(2, 1, 2, 2, generator=torch.Generator().manual_seed(1))
    theta = torch.full((2, 1, 2, 2), 0.3)
    rot = _orthogonal(2, 4) if rotation else None
    a = optimize.smoothed_probabilities(model, x, theta, "gaussian", 16, torch.Generator().manual_seed(0), rot)
    z = optimize.unit_draws("gaussian", x, 16, torch.Generator().manual_seed(0))
    b = soft_smoothed_probabilities(model, x, z, theta, rot)
    assert torch.equal(a, b)
    gap = FAMILIES["gaussian"].soft_gap(torch.topk(b, 2, dim=1).values, optimize.PROB_CLAMP)
    assert torch.equal(optimize.proxy_gap(a, "gaussian"), gap)


def test_optimizers_follow_the_same_noise_stream_as_the_public_steps():
    """optimize_isotropic's inner loop (unchecked) draws exactly what the checked public steps draw."""
    model, x = _model(), torch.rand(2, 1, 2, 2, generator=torch.Generator().manual_seed(1))
    got = optimize.optimize_isotropic(model, x, 0.25, "gaussian", iterations=2, lr=0.01, samples=8,
                                      generator=torch.Generator().manual_seed(0))
    gen = torch.Generator().manual_seed(0)
    theta = torch.full((2,), 0.25, requires_grad=True)
    for _ in range(2):
        probs = optimize.smoothed_probabilities(model, x, theta.view(2, 1, 1, 1), "gaussian", 8, gen)
        grad, = torch.autograd.grad((theta * optimize.proxy_gap(probs, "gaussian")).sum(), theta)
        with torch.no_grad():
            theta.add_(0.01 * grad).clamp_(min=1e-3)
    assert torch.equal(got, theta.detach())


def test_valid_rotations_and_numpy_inputs_are_still_accepted():
    model, x = _model(), _x()
    rot = _orthogonal(2, 4)
    out = optimize.optimize_ancer(model, x, np.array([0.5, 0.5]), "gaussian", iterations=1, samples=4, kappa=0,
                                  rotation=rot)
    assert out.shape == x.shape
    th = experiment.optimize_thetas(model, x, "gaussian", np.float32(0.5), "fixed", TINY, seed=np.int64(0))
    assert th.dtype == np.float32 and (th == 0.5).all()
