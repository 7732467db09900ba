"""Bad inputs to rancer.py, hessian.py and metrics.py raise a ValueError / TypeError naming the argument, and the checks leave valid results unchanged."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from ancer_lite.core.certify import Smooth
from ancer_lite.evaluation import metrics
from ancer_lite.methods import hessian, rancer
from ancer_lite.runs import rancer_runs

NAN = float("nan")


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 8), torch.nn.Softplus(), torch.nn.Linear(8, 3))


def _rotation(n: int, seed: int) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return q * np.sign(np.diag(r))


X = torch.linspace(0.1, 0.9, 8).reshape(2, 1, 2, 2)
U = np.stack([_rotation(4, 0), _rotation(4, 1)])
FAST = rancer.RancerSettings(iterations=1, samples=4)


def _df() -> pd.DataFrame:
    return pd.DataFrame(dict(sigma=[0.25, 0.25, 0.5], radius=[0.5, 0.0, 1.0], radius_proxy=[0.6, 0.0, 1.2],
                             correct=[True, False, True]))


def _optimize(**kw):
    args = dict(model=_model(), x=X.clone(), rotation=torch.from_numpy(U).float(), sigma0=torch.tensor([0.5, 0.5]),
                settings=FAST)
    return rancer.optimize_rancer(**{**args, **kw})


def _certify_rotated(**kw):
    args = dict(smooth=Smooth(_model(), 3, (1, 2, 2)), x=X[0].clone(), scales=np.full(4, 0.5), rotation=U[0], key=0,
                n0=10, n=50, alpha=0.01)
    return rancer.certify_rotated(**{**args, **kw})


def _run_rotated(scales=None, rotations=None, **kw):
    scales = np.full((2, 4), 0.5) if scales is None else scales
    rotations = U.copy() if rotations is None else rotations
    args = dict(model=_model(), x=X.clone(), y=np.array([0, 0]), indices=np.array([0, 1]),
                parameters=lambda: (scales, rotations), record={}, folder=Path(tempfile.mkdtemp()) / "run", n0=10, n=50, alpha=0.01,
                num_classes=3)
    return rancer_runs.run_rotated(**{**args, **kw})


def _landscape(**kw):
    args = dict(model=_model(), x=X[0].clone(), label=0, u=np.eye(4)[0], v=np.eye(4)[1], half_width=1.0, resolution=5)
    return hessian.landscape(**{**args, **kw})


CASES = [
    # metrics
    ("radius", lambda: metrics.certified_accuracy("abc", [True, False, True], 0.5)),
    ("at", lambda: metrics.certified_accuracy([0.5, 0.0, 1.0], [True, False, True], -1.0)),
    ("at", lambda: metrics.certified_accuracy([0.5, 0.0, 1.0], [True, False, True], "abc")),
    ("at", lambda: metrics.certified_accuracy([0.5, 0.0, 1.0], [True, False, True], [0.0, -0.5])),
    ("results", lambda: metrics.summary_table(_df().drop(columns="correct"), [0.0], ["sigma"])),
    ("results", lambda: metrics.summary_table(_df().to_dict("list"), [0.0], ["sigma"])),
    ("group", lambda: metrics.summary_table(_df(), [0.0], ["nope"])),
    ("group", lambda: metrics.summary_table(_df(), [0.0], "sigma")),
    ("group", lambda: metrics.summary_table(_df(), [0.0], ("sigma",))),
    ("radius_col", lambda: metrics.summary_table(_df(), [0.0], ["sigma"], radius_col="nope")),
    ("proxy_col", lambda: metrics.summary_table(_df(), [0.0], ["sigma"], proxy_col="nope")),
    ("radii", lambda: metrics.summary_table(_df(), [-1.0], ["sigma"])),
    ("radii", lambda: metrics.summary_table(_df(), [NAN], ["sigma"])),
    ("radii", lambda: metrics.summary_table(_df(), "0.5", ["sigma"])),
    ("radii", lambda: metrics.summary_table(_df(), 0.5, ["sigma"])),
    ("over", lambda: metrics.best_over(_df(), "nope", ["correct"])),
    ("group", lambda: metrics.best_over(_df(), "sigma", ["nope"])),
    ("group", lambda: metrics.best_over(_df(), "sigma", "correct")),
    ("table", lambda: metrics.best_over(_df().to_dict("list"), "sigma", ["correct"])),
    ("over", lambda: metrics.best_curve(_df(), "nope", [0.0, 0.5])),
    ("radius_col", lambda: metrics.best_curve(_df(), "sigma", [0.0, 0.5], radius_col="nope")),
    ("results", lambda: metrics.best_curve(_df().iloc[:0], "sigma", [0.0, 0.5])),
    ("results", lambda: metrics.best_curve(_df().drop(columns="correct"), "sigma", [0.0, 0.5])),
    ("at", lambda: metrics.best_curve(_df(), "sigma", [NAN])),
    ("at", lambda: metrics.best_curve(_df(), "sigma", [-0.5])),
    # RancerSettings
    ("gamma1", lambda: rancer.RancerSettings(gamma1="0.5")),
    ("gamma1", lambda: rancer.RancerSettings(gamma1=NAN)),
    ("gamma2", lambda: rancer.RancerSettings(gamma2="2")),
    ("gamma2", lambda: rancer.RancerSettings(gamma2=float("inf"))),
    # optimize_rancer
    ("rotation", lambda: _optimize(rotation=2 * torch.eye(4).expand(2, 4, 4))),
    ("rotation", lambda: _optimize(rotation=torch.tensor([[1.0, 0.5], [0.0, 1.0]]).kron(torch.eye(2)).expand(2, 4, 4))),
    ("rotation", lambda: _optimize(rotation=U.copy())),
    ("rotation", lambda: _optimize(rotation=torch.full((2, 4, 4), NAN))),
    ("rotation", lambda: _optimize(rotation=torch.eye(4, dtype=torch.int64).expand(2, 4, 4))),
    ("rotation", lambda: _optimize(rotation=torch.eye(4).expand(3, 4, 4))),
    ("sigma0", lambda: _optimize(sigma0="a")),
    ("sigma0", lambda: _optimize(sigma0=[None, 0.5])),
    ("settings", lambda: _optimize(settings=None)),
    ("eigenvalues", lambda: _optimize(settings=rancer.RancerSettings(init="eigen_fixed"),
                                      eigenvalues=torch.full((2, 4), NAN))),
    ("eigenvalues", lambda: _optimize(settings=rancer.RancerSettings(init="eigen_init"),
                                      eigenvalues=np.ones((2, 4)))),
    # hessian_rotation / input_hessian
    ("x", lambda: rancer.hessian_rotation(_model(), torch.full((1, 2, 2), NAN))),
    ("model", lambda: rancer.hessian_rotation(None, X[0].clone())),
    ("x", lambda: hessian.input_hessian(_model(), torch.full((1, 2, 2), NAN), 0)),
    # certify_rotated
    ("scales", lambda: _certify_rotated(scales=np.full(3, 0.5))),
    ("key", lambda: _certify_rotated(key=1.5)),
    ("key", lambda: _certify_rotated(key="a")),
    ("key", lambda: _certify_rotated(key=-1)),
    ("smooth", lambda: _certify_rotated(smooth=None)),
    # rancer_runs.run_rotated
    ("indices", lambda: _run_rotated(indices=np.array([0]))),
    ("indices", lambda: _run_rotated(indices=np.int64(3))),
    ("y", lambda: _run_rotated(y=np.array([0, 99]))),
    ("y", lambda: _run_rotated(y=np.array([0, -1]))),
    ("y", lambda: _run_rotated(y=np.array([0]))),
    ("scales", lambda: _run_rotated(scales=np.full((2, 3), 0.5))),
    ("rotations", lambda: _run_rotated(rotations=U[:1].copy())),
    # numerical_rank / eigen_directions
    ("h", lambda: hessian.numerical_rank(np.array([[1.0, 5.0], [0.0, 1.0]]))),
    ("h", lambda: hessian.numerical_rank(np.full((2, 2), NAN))),
    ("h", lambda: hessian.numerical_rank(np.ones(3))),
    ("h", lambda: hessian.numerical_rank(np.zeros((0, 0)))),
    ("h", lambda: hessian.numerical_rank(np.ones((2, 3)))),
    ("rtol", lambda: hessian.numerical_rank(np.eye(3), rtol=-1.0)),
    ("rtol", lambda: hessian.numerical_rank(np.eye(3), rtol=NAN)),
    ("h", lambda: hessian.eigen_directions(np.array([[1.0, 5.0], [0.0, 1.0]]))),
    ("h", lambda: hessian.eigen_directions(np.ones(3))),
    ("h", lambda: hessian.eigen_directions(np.array([["a", "b"], ["b", "a"]]))),
    # landscape
    ("resolution", lambda: _landscape(resolution=0)),
    ("resolution", lambda: _landscape(resolution=-1)),
    ("resolution", lambda: _landscape(resolution=2.5)),
    ("half_width", lambda: _landscape(half_width=-1.0)),
    ("half_width", lambda: _landscape(half_width=NAN)),
    ("label", lambda: _landscape(label=7)),
    ("label", lambda: _landscape(label=1.5)),
    ("u", lambda: _landscape(u=np.ones(3))),
    ("v", lambda: _landscape(v=np.full(4, NAN))),
    ("x", lambda: _landscape(x=torch.full((1, 2, 2), NAN))),
]


@pytest.mark.parametrize("arg, call", CASES, ids=[f"{k}-{a}" for k, (a, _) in enumerate(CASES)])
def test_bad_input_raises_naming_the_argument(arg, call):
    with pytest.raises((ValueError, TypeError), match=rf"(?<![\w.]){arg}(?![\w])"):
        call()


# ---- the valid paths are unchanged -------------------------------------------------------------------------

def test_optimize_rancer_gives_the_scales_it_gave_before_the_checks():
    """Reference values from the code before the rotation / sigma0 / settings checks (float32, 1e-6)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Softplus(), torch.nn.Linear(8, 3))
    x = torch.linspace(0.1, 0.9, 8).reshape(2, 4)
    rot, eig = rancer.hessian_rotations(model, x)
    th = rancer.optimize_rancer(model, x, torch.from_numpy(rot).float(), torch.tensor([0.3, 0.4]),
                                rancer.RancerSettings(iterations=4, lr=0.5, samples=16), None,
                                torch.Generator().manual_seed(0))
    before = [[0.3637850284576416, 0.3661295473575592, 0.3666360378265381, 0.3730306625366211],
              [0.46948081254959106, 0.471679151058197, 0.47025933861732483, 0.47917047142982483]]
    np.testing.assert_allclose(th.numpy(), before, rtol=1e-6)
    np.testing.assert_allclose(eig, [[0.004353945323478618, -0.0009052157619464126, -0.0026868681810551702,
                                      -0.026307860994872742],
                                     [0.004134676332880373, -0.00016269457673833657, -0.0028446761500924935,
                                      -0.020428213910505713]], rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("n", [4, 64, 784])
def test_float32_rotations_pass_the_orthogonality_check(n):
    """RANCER passes float32 copies of float64 orthogonal U (rounded at ~6e-8): the O(n^2) check must accept them."""
    u = torch.from_numpy(np.stack([_rotation(n, 0), _rotation(n, 1)])).float()
    x, s0, settings = torch.full((2, n), 0.5), torch.tensor([0.2, 0.3]), rancer.RancerSettings(iterations=0)
    th = rancer.optimize_rancer(torch.nn.Linear(n, 3), x, u, s0, settings)
    np.testing.assert_array_equal(th.numpy(), s0[:, None].expand(2, n).numpy())
    with pytest.raises(ValueError, match=r"rotation\[0\] must be orthogonal"):
        rancer.optimize_rancer(torch.nn.Linear(n, 3), x, u * 1.001, s0, settings)


def test_metrics_tables_keep_their_columns_and_dtypes():
    df = _df().assign(method=["a", "a", "a"])
    table = metrics.summary_table(df, (r for r in [0.0, 0.5]), ["sigma"])  # an iterator of radii, read once
    assert list(table.columns) == ["sigma", "0", "0.5", "acr", "acr_proxy"]
    assert table["0.5"].tolist() == [50.0, 100.0] and table.dtypes.map(str).tolist() == ["float64"] * 5
    best = metrics.best_over(table.assign(method="a"), "sigma", ["method"])
    assert list(best.columns) == ["method", "0", "0.5", "acr", "acr_proxy"] and best.loc[0, "acr"] == 1.0
    np.testing.assert_array_equal(metrics.best_curve(df, "sigma", iter([0.0, 0.5, 2.0])), [1.0, 1.0, 0.0])


def test_hessian_checks_accept_the_input_hessian():
    model, x = _model(), X[0].clone()
    h = hessian.input_hessian(model, x)
    assert np.array_equal(h, h.T)  # exactly symmetric, so the symmetry check never refuses it
    assert 1 <= hessian.numerical_rank(h) <= 4
    w, v = hessian.eigen_directions(h)
    aa, bb, f = hessian.landscape(model, x, 2, v[:, 0], v[:, 1], 0.5, resolution=3)
    assert f.shape == (3, 3) and np.isfinite(f).all()
