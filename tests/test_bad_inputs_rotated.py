"""Bad inputs to ancer_lite.core.rotated (what it checks: the dense evaluators of Eq. 5 and 6, iterations, a
covariance whose factorization fails), ancer_lite.evaluation.verify and ancer_lite.evaluation.superset raise
ValueError/TypeError naming the argument; the region values rotated's formulas take as given are refused where a
region enters (Algorithm 1's entry points, `CertifiedRegion`); the functions still give the results they gave before
on valid inputs."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from ancer_lite.core import rotated
from ancer_lite.core.memory import CertificationMemory
from ancer_lite.core.regions import CertifiedRegion
from ancer_lite.core.rotated_memory import certify_stream_rotated
from ancer_lite.evaluation import superset, verify
from ancer_lite.proof_checks import random_rotation

NAN = float("nan")
U4 = random_rotation(4, np.random.default_rng(0))
U4B = random_rotation(4, np.random.default_rng(1))
S4 = np.full(4, 0.5)
NONORTH = 2 * np.eye(4)
QM = rotated.precision(U4, S4)
RM = rotated.precision(U4B, np.full(4, 0.3))


class Tiny(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(len(x), -1)
        return torch.stack([flat.sum(1), -flat.sum(1)], dim=1)


def smooth(**bad):
    base = dict(model=Tiny(), points=torch.full((2, 1, 2, 2), 0.5), theta=0.5, noise="gaussian", num=20)
    return {**base, **bad}


CASES = [
    # (function, keyword arguments, the argument that is bad)
    (rotated.quadratic_form, dict(points=np.full(4, 0.1), center=np.zeros(4), q_matrix=-np.eye(4)), "q_matrix"),
    (rotated.quadratic_form, dict(points=np.full(4, 0.1), center=np.zeros(4), q_matrix=np.full((4, 4), NAN)),
     "q_matrix"),
    (rotated.quadratic_form, dict(points=np.full(4, 0.1), center=np.zeros(4), q_matrix=np.eye(3)), "q_matrix"),
    (rotated.quadratic_form, dict(points=np.full(4, NAN), center=np.zeros(4), q_matrix=np.eye(4)), "points"),
    (rotated.quadratic_form, dict(points=np.full(4, 0.1), center=np.zeros(3), q_matrix=np.eye(4)), "center"),
    (rotated.k_function, dict(t=0.0, center_q=np.zeros(4), q_matrix=QM, center_r=np.full(4, 2.0), r_matrix=RM), "t"),
    (rotated.k_function, dict(t=np.array([0.5, 1.5]), center_q=np.zeros(4), q_matrix=QM, center_r=np.full(4, 2.0),
                              r_matrix=RM), "t"),
    (rotated.k_function, dict(t=0.5, center_q=np.zeros(4), q_matrix=np.zeros((4, 4)), center_r=np.full(4, 2.0),
                              r_matrix=RM), "q_matrix"),
    (rotated.k_function, dict(t=0.5, center_q=np.zeros(4), q_matrix=np.ones((4, 4)), center_r=np.full(4, 2.0),
                              r_matrix=RM), "q_matrix"),                          # singular, positive diagonal
    (rotated.k_function, dict(t=0.5, center_q=np.zeros(4), q_matrix=QM, center_r=np.full(4, 2.0),
                              r_matrix=np.full((4, 4), NAN)), "r_matrix"),
    (rotated.k_function, dict(t=0.5, center_q=np.full(4, NAN), q_matrix=QM, center_r=np.full(4, 2.0), r_matrix=RM),
     "center_q"),
    (rotated.simultaneous_diagonalization, dict(cov_q=-np.eye(4), cov_r=np.eye(4)), "cov_q"),
    (rotated.simultaneous_diagonalization, dict(cov_q=np.eye(4), cov_r=np.full((4, 4), NAN)), "cov_r"),
    (rotated.simultaneous_diagonalization, dict(cov_q=np.ones(4), cov_r=np.eye(4)), "cov_q"),
    (rotated.eq6_residual, dict(lam=-1.0, y=np.full(4, 2.0), q_matrix=QM), "lam"),
    (rotated.eq6_residual, dict(lam=NAN, y=np.full(4, 2.0), q_matrix=QM), "lam"),
    (rotated.eq6_residual, dict(lam=0.5, y=np.full(4, 2.0), q_matrix=np.eye(3)), "q_matrix"),
    (rotated.eq6_residual, dict(lam=0.5, y=np.full(4, NAN), q_matrix=QM), "y"),
    (rotated.eq6_multiplier, dict(y_eigen=np.full(4, 2.0), scales=S4, iterations=-1), "iterations"),
    (rotated.project_onto_ellipsoid, dict(y=np.full(4, 2.0), rotation=U4, scales=S4, iterations=-1), "iterations"),
    (rotated.project_onto_ellipsoid, dict(y=np.full(4, 2.0), rotation=U4, scales=S4, iterations=1.5), "iterations"),
    (superset.anisotropy, dict(thetas=np.zeros((3, 4))), "thetas"),
    (superset.anisotropy, dict(thetas=np.full((3, 4), -0.5)), "thetas"),
    (superset.anisotropy, dict(thetas=np.full((3, 4), NAN)), "thetas"),
    (superset.anisotropy, dict(thetas=np.full(4, 0.5)), "thetas"),
    (superset.ellipsoid_slice, dict(scales=S4, u=np.eye(4)[0], v=np.eye(4)[1], num=0), "num"),
    (superset.ellipsoid_slice, dict(scales=S4, u=np.eye(4)[0], v=np.eye(4)[1], num=-1), "num"),
    (superset.ellipsoid_slice, dict(scales=S4, u=np.full(4, NAN), v=np.eye(4)[1]), "u"),
    (verify.smoothed_predictions, smooth(rotation=torch.tensor(NONORTH, dtype=torch.float32)), "rotation"),
    (verify.smoothed_predictions, smooth(rotation=torch.eye(3)), "rotation"),
    (verify.smoothed_predictions, smooth(points=torch.full((2, 1, 2, 2), NAN)), "points"),
    (verify.smoothed_predictions, smooth(points=torch.full((4,), 0.5)), "points"),
    (verify.smoothed_predictions, smooth(noise="bogus"), "noise"),
    (verify.region_boundary_2d, dict(center=np.zeros(2), scales=-np.full(2, 0.5), norm="l2"), "scales"),
    (verify.region_boundary_2d, dict(center=np.zeros(2), scales=np.full(3, 0.5), norm="l2"), "scales"),
    (verify.region_boundary_2d, dict(center=np.full(2, NAN), scales=np.full(2, 0.5), norm="l2"), "center"),
    (verify.region_boundary_2d, dict(center=np.zeros(2), scales=np.full(2, 0.5), norm="l2", num=8.5), "num"),
    (verify.region_fill_2d, dict(center=np.zeros(2), scales=np.full(2, 0.5), norm="l2", shrink=2.0), "shrink"),
    (verify.region_fill_2d, dict(center=np.zeros(2), scales=np.full(2, 0.5), norm="l2", shrink=-1.0), "shrink"),
    (verify.region_fill_2d, dict(center=np.zeros(2), scales=np.full(2, 0.5), norm="l2", shrink=NAN), "shrink"),
    (verify.region_fill_2d, dict(center=np.zeros(2), scales=np.full(2, 0.5), norm="l2", per_axis=0), "per_axis"),
    (verify.region_fill_2d, dict(center=np.zeros(2), scales=np.full(2, 0.5), norm="l2", boundary=3), "boundary"),
    (verify.region_fill_2d, dict(center=np.zeros(2), scales=np.zeros(2), norm="l2"), "scales"),
]


@pytest.mark.parametrize("fn, kwargs, arg", CASES,
                         ids=[f"{fn.__module__.rsplit('.', 1)[1]}.{fn.__name__}-{arg}-{i}"
                              for i, (fn, _, arg) in enumerate(CASES)])
def test_bad_input_raises_naming_the_argument(fn, kwargs, arg):
    with pytest.raises((ValueError, TypeError), match=rf"(?<![\w.]){arg}(?![\w])"):
        fn(**kwargs)


def region(rng: np.random.Generator, n: int, spread: float = 1.0):
    return rng.normal(size=n) * spread, random_rotation(n, rng), np.exp(rng.uniform(np.log(0.2), np.log(2.0), n))


def _stream(**bad):
    """certify_stream_rotated on two regions (the first rotated), with one argument replaced."""
    kw = dict(centers=np.stack([np.zeros(4), np.full(4, 2.0)]), preds=np.array([0, 1]),
              scales=np.stack([S4, np.full(4, 0.3)]), rotations=[U4, U4B])
    return certify_stream_rotated(**{**kw, **bad})


def _certify(**bad):
    """CertificationMemory.certify of a rotated region against one in memory, with one argument replaced."""
    mem = CertificationMemory(4, "l2")
    mem.certify(np.zeros(4), 0, S4, rotation=U4)
    return mem.certify(**{**dict(x=np.full(4, 2.0), pred=1, scales=np.full(4, 0.3), rotation=U4B), **bad})


def _region(**bad):
    return CertifiedRegion(**{**dict(center=np.zeros(4), scales=S4, gap=1.0, norm="l2", prediction=0,
                                     rotation=U4), **bad})


# the region values that rotated's formulas take as given, refused where a region enters: (call, argument named)
ENTRY_CASES = [
    *[(lambda v=v: _stream(rotations=[v, U4B]), r"rotations\[0\]") for v in ("abc", NONORTH, np.full((4, 4), NAN),
                                                                          np.eye(3))],
    *[(lambda v=v: _certify(rotation=v), "rotation") for v in ("abc", NONORTH, np.full((4, 4), NAN), np.eye(3))],
    *[(lambda v=v: _region(rotation=v), "rotation") for v in ("abc", NONORTH, np.full((4, 4), NAN), np.eye(3))],
    *[(lambda v=v: _stream(scales=v), "scales") for v in (np.zeros((2, 4)), -np.full((2, 4), 0.3),
                                                           np.full((2, 4), NAN), np.full((2, 3), 0.3))],
    *[(lambda v=v: _certify(scales=v), "scales") for v in (np.array([]), np.float64(0.5), -S4, np.zeros(4),
                                                            np.full(4, NAN), np.full(3, 0.3))],
    *[(lambda v=v: _region(scales=v), "scales") for v in (np.array([]), np.float64(0.5), -S4, np.full(4, NAN))],
    *[(lambda v=v: _stream(centers=v), "centers") for v in (np.full((2, 4), NAN), np.zeros(4))],
    *[(lambda v=v: _certify(x=v), "x") for v in (np.full(4, NAN), np.zeros(3))],
    (lambda: _region(center=np.full(4, NAN)), "center"),
    (lambda: _region(center=np.zeros(3)), "scales"),
    *[(lambda v=v: _region().contains(v), "points") for v in (np.full(4, NAN), np.zeros(3))],
]


@pytest.mark.parametrize("call, name", ENTRY_CASES)
def test_values_taken_as_given_are_refused_where_they_enter(call, name):
    with pytest.raises(ValueError, match=rf"(?<![\w.]){name}(?![\w])"):
        call()


def test_checked_functions_keep_their_results():
    """Values of the pre-check implementation on one fixed pair (LAPACK may differ in the last bits elsewhere,
    hence rtol 1e-12; on the development machine they are equal bit for bit)."""
    rng = np.random.default_rng(7)
    cq, cr = rng.normal(size=4), rng.normal(size=4) + 0.5
    uq, ur = random_rotation(4, rng), random_rotation(4, rng)
    sq, sr = np.exp(rng.uniform(-1, 0.5, 4)), np.exp(rng.uniform(-1, 0.5, 4))
    h = float.fromhex
    np.testing.assert_allclose(rotated.minimize_k(cq, uq, sq, cr, ur, sr),
                               [h("0x1.699db4eeee034p-1"), h("-0x1.bbcafab30789ep+0")], rtol=1e-12)
    assert not rotated.ellipsoids_intersect(cq, uq, sq, cr, ur, sr) and rotated.separated(cq, uq, sq, cr, ur, sr)
    np.testing.assert_allclose(rotated.distance_to_ellipsoid(cr + 2, cq, uq, sq), h("0x1.2abce087864a8p+2"), rtol=1e-12)
    np.testing.assert_allclose(rotated.largest_out_subset(cq, uq, sq, cr + 2, sr), h("0x1.b02008eb5bb3dp-2"),
                               rtol=1e-12)
    x, d, lam = rotated.project_onto_ellipsoid(cr + 2 - cq, uq, sq)
    np.testing.assert_allclose(x, [h(v) for v in ("0x1.9b011fe5c7a74p-2", "0x1.12ec5daa6a7d9p-4",
                                                  "0x1.574f1eabeb1bbp-1", "0x1.1c6f3b009cf1cp+0")], rtol=1e-12)
    np.testing.assert_allclose([d, lam], [h("0x1.2abce087864a8p+2"), h("0x1.8d5ad1dcf0f48p+1")], rtol=1e-12)
    assert not rotated.contains(cr, cq, uq, sq) and rotated.contains(cq + 0.01, cq, uq, sq)


def test_public_helpers_match_the_projection():
    """eq6_multiplier and project_onto_ellipsoid agree with each other as before: the projection's
    multiplier is the upper end of eq6_multiplier's bracket on U^T y."""
    rng = np.random.default_rng(3)
    _, u, s = region(rng, 5)
    y = rng.normal(size=5) * 4
    lo, hi = rotated.eq6_multiplier(np.einsum("ji,j->i", u, y), s)   # U^T y, summed as the projection does
    _, _, lam = rotated.project_onto_ellipsoid(y, u, s)
    assert lam == hi and lo <= hi


def test_valid_edge_inputs_still_pass():
    """Inputs at the edge of the contracts: a zero semi-axis drawn as a degenerate outline (an abstained region),
    the smallest grids, shrink = 1, iterations = 0, lam = 0, float32 and list inputs."""
    assert verify.region_boundary_2d(np.zeros(2), np.zeros(2), "l1").shape == (256, 2)
    assert verify.region_fill_2d(np.zeros(2), np.full(2, 0.5), "l2", per_axis=1, boundary=7, shrink=1.0).shape[1] == 2
    assert superset.ellipsoid_slice(S4, np.eye(4)[0], np.eye(4)[1], num=2).shape == (2, 2)
    assert rotated.project_onto_ellipsoid(np.full(4, 2.0), U4, S4, iterations=0)[1] == 0.0
    assert rotated.eq6_residual(0.0, np.full(4, 2.0), QM) > 0
    assert rotated.contains(np.float32([0.1, 0.1]), [0.0, 0.0], np.eye(2).tolist(), [0.5, 0.5])


@pytest.mark.parametrize("value, kwargs, pattern", [
    ("abc", {}, "must be a real array"),
    (np.full(3, NAN), {}, "must be finite"),
    (np.ones(3), dict(last_axis=2), r"must have shape \(\.\.\., 2\)"),
    (np.float64(1.0), dict(last_axis=1), r"must have shape \(\.\.\., 1\)"),
    (np.array([1.0, 0.0]), dict(positive=True), "must be > 0"),
])
def test_check_finite_array(value, kwargs, pattern):
    from ancer_lite.core.validation import check_finite_array
    with pytest.raises(ValueError, match=rf"^x {pattern}"):
        check_finite_array(value, "x", **kwargs)
    ok = check_finite_array([[1.0, 2.0]], "x", last_axis=2, positive=True)
    assert ok.dtype == np.float64 and ok.shape == (1, 2)
