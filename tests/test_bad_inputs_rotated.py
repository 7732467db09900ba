"""Bad inputs to ancer_lite.core.rotated, ancer_lite.evaluation.verify and ancer_lite.evaluation.superset raise ValueError/TypeError naming the
argument; the checked functions still give the results they gave before on valid inputs,
and the hot paths of `rotated_memory` (assume_orthogonal=True) give the same results as the checked calls."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from ancer_lite.core import rotated
from ancer_lite.evaluation import superset, verify
from ancer_lite.proof_checks import random_rotation

NAN = float("nan")
U4 = random_rotation(4, np.random.default_rng(0))
U4B = random_rotation(4, np.random.default_rng(1))
S4 = np.full(4, 0.5)
NONORTH = 2 * np.eye(4)
QM = rotated.precision(U4, S4)
RM = rotated.precision(U4B, np.full(4, 0.3))


def pair(**bad):
    base = dict(center_q=np.zeros(4), rotation_q=U4, scales_q=S4, center_r=np.full(4, 2.0), rotation_r=U4B,
                scales_r=np.full(4, 0.3))
    return {**base, **bad}


class Tiny(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(len(x), -1)
        return torch.stack([flat.sum(1), -flat.sum(1)], dim=1)


def smooth(**bad):
    base = dict(model=Tiny(), points=torch.full((2, 1, 2, 2), 0.5), theta=0.5, noise="gaussian", num=20)
    return {**base, **bad}


CASES = [
    # (function, keyword arguments, the argument that is bad)
    (rotated.precision, dict(rotation="abc", scales=S4), "rotation"),
    (rotated.precision, dict(rotation=NONORTH, scales=S4), "rotation"),
    (rotated.precision, dict(rotation=np.full((4, 4), NAN), scales=S4), "rotation"),
    (rotated.precision, dict(rotation=np.eye(3), scales=S4), "rotation"),
    (rotated.precision, dict(rotation=U4, scales=np.array([])), "scales"),
    (rotated.precision, dict(rotation=U4, scales=np.float64(0.5)), "scales"),
    (rotated.precision, dict(rotation=U4, scales=-S4), "scales"),
    (rotated.covariance, dict(rotation=U4, scales=np.full(4, NAN)), "scales"),
    (rotated.quadratic_form, dict(points=np.full(4, 0.1), center=np.zeros(4), q_matrix=-np.eye(4)), "q_matrix"),
    (rotated.quadratic_form, dict(points=np.full(4, 0.1), center=np.zeros(4), q_matrix=np.full((4, 4), NAN)),
     "q_matrix"),
    (rotated.quadratic_form, dict(points=np.full(4, 0.1), center=np.zeros(4), q_matrix=np.eye(3)), "q_matrix"),
    (rotated.quadratic_form, dict(points=np.full(4, NAN), center=np.zeros(4), q_matrix=np.eye(4)), "points"),
    (rotated.quadratic_form, dict(points=np.full(4, 0.1), center=np.zeros(3), q_matrix=np.eye(4)), "center"),
    (rotated.contains, dict(points=np.full(4, NAN), center=np.zeros(4), rotation=U4, scales=S4), "points"),
    (rotated.contains, dict(points=np.full(4, 0.1), center=np.zeros(3), rotation=U4, scales=S4), "center"),
    (rotated.contains, dict(points=np.full(4, 0.1), center=np.zeros(4), rotation=NONORTH, scales=S4), "rotation"),
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
    (rotated.simultaneous_diagonalization, dict(cov_q=np.eye(3), cov_r=np.eye(4)), "cov_q"),
    (rotated.simultaneous_diagonalization, dict(cov_q=np.ones(4), cov_r=np.eye(4)), "cov_q"),
    (rotated.minimize_k, pair(rotation_q=NONORTH), "rotation_q"),
    (rotated.minimize_k, pair(scales_r=-S4), "scales_r"),
    (rotated.minimize_k, pair(center_q=np.full(4, NAN)), "center_q"),
    (rotated.minimize_k, pair(center_r=np.zeros(3)), "center_r"),
    (rotated.separated, pair(center_q=np.full(4, NAN)), "center_q"),
    (rotated.separated, pair(rotation_r=NONORTH), "rotation_r"),
    (rotated.ellipsoids_intersect, pair(center_q=np.full(4, NAN)), "center_q"),
    (rotated.ellipsoids_intersect, pair(rotation_r=NONORTH), "rotation_r"),
    (rotated.ellipsoids_intersect, pair(scales_q=np.zeros(4)), "scales_q"),
    (rotated.ellipsoids_intersect, pair(center_r=np.zeros(3)), "center_r"),
    (rotated.ellipsoids_intersect, pair(scales_r=np.full(3, 0.3), rotation_r=np.eye(3)), "scales_r"),
    (rotated.ellipsoids_intersect, pair(center_r=np.zeros((3, 4)), scales_q=np.full((2, 4), 0.5)), "scales_q"),
    (rotated.eq6_residual, dict(lam=-1.0, y=np.full(4, 2.0), q_matrix=QM), "lam"),
    (rotated.eq6_residual, dict(lam=NAN, y=np.full(4, 2.0), q_matrix=QM), "lam"),
    (rotated.eq6_residual, dict(lam=0.5, y=np.full(4, 2.0), q_matrix=np.eye(3)), "q_matrix"),
    (rotated.eq6_residual, dict(lam=0.5, y=np.full(4, NAN), q_matrix=QM), "y"),
    (rotated.eq6_multiplier, dict(y_eigen=np.full(4, 2.0), scales=-S4), "scales"),
    (rotated.eq6_multiplier, dict(y_eigen=np.full(4, 2.0), scales=np.zeros(4)), "scales"),
    (rotated.eq6_multiplier, dict(y_eigen=np.full(4, 2.0), scales=S4, iterations=-1), "iterations"),
    (rotated.eq6_multiplier, dict(y_eigen=np.full(3, 2.0), scales=S4), "y_eigen"),
    (rotated.project_onto_ellipsoid, dict(y=np.full(4, 2.0), rotation=U4, scales=S4, iterations=-1), "iterations"),
    (rotated.project_onto_ellipsoid, dict(y=np.full(4, 2.0), rotation=U4, scales=S4, iterations=1.5), "iterations"),
    (rotated.project_onto_ellipsoid, dict(y=np.full(4, NAN), rotation=U4, scales=S4), "y"),
    (rotated.distance_to_ellipsoid, dict(point=np.full(4, NAN), center=np.zeros(4), rotation=U4, scales=S4), "point"),
    (rotated.distance_to_ellipsoid, dict(point=np.full(4, 2.0), center=np.zeros(3), rotation=U4, scales=S4), "center"),
    (rotated.largest_out_subset, dict(center_q=np.zeros(4), rotation_q=U4, scales_q=S4, center_r=np.full(4, 2.0),
                                      scales_r=-np.full(4, 0.3)), "scales_r"),
    (rotated.largest_out_subset, dict(center_q=np.zeros(4), rotation_q=U4, scales_q=S4, center_r=np.full(4, 2.0),
                                      scales_r=np.full(4, NAN)), "scales_r"),
    (rotated.largest_out_subset, dict(center_q=np.zeros(4), rotation_q=U4, scales_q=S4, center_r=np.full(4, NAN),
                                      scales_r=np.full(4, 0.3)), "center_r"),
    (rotated.largest_out_subset, dict(center_q=np.zeros(4), rotation_q=NONORTH, scales_q=S4, center_r=np.full(4, 2.0),
                                      scales_r=np.full(4, 0.3)), "rotation_q"),
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


@pytest.mark.parametrize("n", [2, 5])
def test_hot_paths_give_the_checked_results(n):
    """`rotated_memory` calls these with assume_orthogonal=True (its inputs are validated once); the unchecked
    path gives exactly the checked path's results, for single pairs and batches."""
    rng = np.random.default_rng(n)
    for _ in range(10):
        a, ua, sa = region(rng, n)
        b, ub, sb = region(rng, n, spread=2.0)
        cs = rng.normal(size=(6, n)) * 2
        for fn, args in ((rotated.ellipsoids_intersect, (a, ua, sa, b, ub, sb)),
                         (rotated.ellipsoids_intersect, (a, ua, sa, cs, np.eye(n), np.broadcast_to(sb, (6, n)))),
                         (rotated.separated, (a, ua, sa, b, ub, sb)), (rotated.minimize_k, (a, ua, sa, b, ub, sb)),
                         (rotated.contains, (b, a, ua, sa)), (rotated.contains, (cs, a, ua, sa)),
                         (rotated.distance_to_ellipsoid, (b, a, ua, sa)),
                         (rotated.largest_out_subset, (a, ua, sa, b, sb)),
                         (rotated.project_onto_ellipsoid, (b - a, ua, sa))):
            want, got = fn(*args), fn(*args, assume_orthogonal=True)
            for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
                assert np.array_equal(w, g), fn.__name__


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
    """eq6_multiplier and project_onto_ellipsoid (checked) agree with each other as before: the projection's
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
