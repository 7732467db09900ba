"""Shared fixtures. `toy_classifier`: the tiny seeded MLP on 3x3 inputs that the run-layer tests certify
(test_experiment, test_readonly_reuse, test_run_manifest, test_run_layer).

Independent convex-solver references for the App. D geometry, shared by test_geometry.py and
test_memory.py through the `ref` fixture. None of them calls ancer_lite.core.geometry.

- `ellipsoid_gap(a, sa, b, sb)`: v* = min_{x in E_b} ||(x - a) / sa||_2, where E_b is the axis-aligned
  ellipsoid with centre b and semi-axes sb. Ellipsoids E_a and E_b intersect iff v* <= 1, and scaling
  E_a by kappa makes them intersect iff v* <= kappa (so |v* - 1| is the distance from tangency).
  With sa = 1 it is the Euclidean distance from a to E_b. Solved by SLSQP (primal) and checked
  against the Lagrange dual (a 1-D concave maximization); the two must agree or the reference fails.
- `polytope_gap(a, sa, b, sb)`: the same for generalized cross-polytopes and the weighted l1 norm,
  min_{x in P_b} sum |x - a| / sa, by linear programming (scipy.optimize.linprog, HiGHS).
- `l1_distance_dual(y, s)`: exact l1 distance from y to {x : sum |x_i| / s_i <= 1} from the Lagrange
  dual max_{lam >= 0} sum_i min(1, lam / s_i) |y_i| - lam, a concave piecewise-linear function whose
  maximum sits at lam = 0 or a breakpoint lam = s_i (strong LP duality). Any lam gives a lower bound.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from scipy.optimize import linprog, minimize, minimize_scalar

#: the SLSQP primal and the dual must agree to this relative accuracy for the reference to be trusted
REFERENCE_AGREEMENT = 1e-8  # observed: ~5e-11 on the test cases


def ellipsoid_gap_dual(a, sa, b, sb) -> float:
    """sqrt(max_{mu >= 0} g(mu)), g(mu) = sum d_i^2 mu / (sb_i^2 + mu sa_i^2) - mu with d = b - a: the
    Lagrange dual of the (convex) problem behind `ellipsoid_gap`. Every mu gives a lower bound."""
    d2 = (np.asarray(b, float) - np.asarray(a, float)) ** 2
    va, vb = np.asarray(sa, float) ** 2, np.asarray(sb, float) ** 2

    def g(mu):
        return float((d2 * mu / (vb + mu * va)).sum() - mu)

    # g is concave in mu, hence unimodal in u = log(mu); the maximum may also sit at mu = 0 (g = 0)
    res = minimize_scalar(lambda u: -g(np.exp(u)), bounds=(-60.0, 60.0), method="bounded",
                          options={"xatol": 1e-13, "maxiter": 2000})
    return float(np.sqrt(max(0.0, g(np.exp(res.x)))))


def ellipsoid_gap(a, sa, b, sb, return_point: bool = False):
    """min_{x in E(b, sb)} ||(x - a) / sa||_2 by SLSQP over z = (x - b) / sb in the unit ball (a convex
    QCQP). The returned value is taken at a feasible point, so it is an upper bound on the minimum."""
    a, sa, b, sb = (np.asarray(v, float) for v in (a, sa, b, sb))
    d = b - a

    def f(z):
        r = (d + sb * z) / sa
        return float(r @ r)

    def grad(z):
        return 2.0 * sb * (d + sb * z) / sa ** 2

    cons = {"type": "ineq", "fun": lambda z: 1.0 - z @ z, "jac": lambda z: -2.0 * z}
    starts = [np.zeros_like(d)]
    if np.linalg.norm(d) > 0:
        starts.append(-0.99 * d / np.linalg.norm(d))
    best = None
    for z0 in starts:
        res = minimize(f, z0, jac=grad, constraints=[cons], method="SLSQP",
                       options={"ftol": 1e-16, "maxiter": 1000})
        z = res.x / max(1.0, float(np.linalg.norm(res.x)))  # make it exactly feasible
        if best is None or f(z) < f(best):
            best = z
    value = float(np.sqrt(f(best)))
    dual = ellipsoid_gap_dual(a, sa, b, sb)
    # weak duality: dual <= true minimum <= value; both must be tight
    assert dual <= value * (1 + 1e-12) + 1e-15, (dual, value)
    assert value - dual <= REFERENCE_AGREEMENT * max(1.0, value), f"reference solvers disagree: {value} vs {dual}"
    return (value, b + sb * best) if return_point else value


def polytope_gap(a, sa, b, sb) -> float:
    """min_{x in P(b, sb)} sum_i |x_i - a_i| / sa_i by linprog; variables (x, u, w) with u >= |x - a|,
    w >= |x - b|, sum w / sb <= 1. Cross-polytopes P_a, P_b intersect iff this is <= 1."""
    a, sa, b, sb = (np.asarray(v, float) for v in (a, sa, b, sb))
    n = a.size
    eye, zero = np.eye(n), np.zeros((n, n))
    cost = np.concatenate([np.zeros(n), 1.0 / sa, np.zeros(n)])
    a_ub = np.block([[eye, -eye, zero], [-eye, -eye, zero], [eye, zero, -eye], [-eye, zero, -eye],
                     [np.zeros((1, 2 * n)), (1.0 / sb)[None, :]]])
    b_ub = np.concatenate([a, -a, b, -b, [1.0]])
    bounds = [(None, None)] * n + [(0, None)] * (2 * n)
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0, res.message
    return float(res.fun)


def l1_distance_lp(y, s) -> float:
    """l1 distance from y to {x : sum |x_i| / s_i <= 1} by linprog (polytope_gap with unit weights)."""
    y = np.asarray(y, float)
    return polytope_gap(y, np.ones_like(y), np.zeros_like(y), s)


def l1_distance_dual(y, s) -> float:
    """Exact l1 distance from y to {x : sum |x_i| / s_i <= 1}: max over lam in {0, s_1, ..., s_n} of
    sum_i min(1, lam / s_i) |y_i| - lam (see the module docstring)."""
    y, s = np.abs(np.asarray(y, float)), np.asarray(s, float)
    lams = np.concatenate([[0.0], s])
    vals = (np.minimum(1.0, lams[:, None] / s[None, :]) * y[None, :]).sum(axis=1) - lams
    return float(vals.max())


@pytest.fixture(scope="session")
def ref() -> SimpleNamespace:
    """The reference solvers above, as one namespace."""
    return SimpleNamespace(ellipsoid_gap=ellipsoid_gap, ellipsoid_gap_dual=ellipsoid_gap_dual,
                           polytope_gap=polytope_gap, l1_distance_lp=l1_distance_lp,
                           l1_distance_dual=l1_distance_dual)


@pytest.fixture(scope="session")
def toy_classifier():
    """make(count, first) -> (model, x, y, indices): a seeded 3-class MLP (one hidden layer of 8) on `count` random
    3x3 inputs, labelled with its own predictions (so every input is certifiable), indices first, first + 1, ..."""
    from ancer_lite.models.small import MLP

    def make(count: int, first: int = 0):
        torch.manual_seed(0)
        model = MLP((1, 3, 3), 3, hidden=(8,)).eval()
        x = torch.rand(count, 1, 3, 3, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            y = model(x).argmax(1)
        return model, x, y, np.arange(first, first + count)
    return make
