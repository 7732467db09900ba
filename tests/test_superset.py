"""Per-input superset statistics (ANCER App. F, H, I): hand-made cases with known answers, closed
forms for the Average Σ, and the ellipsoid slice checked against membership in n dimensions."""
import numpy as np
import pandas as pd
import pytest

from ancer_lite.core.regions import region_norm
from ancer_lite.evaluation import superset


def _results(radii: dict[str, list[float]], correct: dict[str, list[bool]] | None = None) -> pd.DataFrame:
    frames = []
    for method, r in radii.items():
        c = (correct or {}).get(method, [True] * len(r))
        frames.append(pd.DataFrame(dict(norm="l2", sigma=0.25, idx=np.arange(len(r)), method=method,
                                        radius=r, radius_proxy=np.asarray(r) * 2, correct=c)))
    return pd.concat(frames, ignore_index=True)


def test_superset_counts_ties_both_ways():
    # input 0: ANCER best; 1: tie with Iso DD; 2: Fixed better; 3: all zero (0-0 tie); 4: ANCER wrong -> 0
    res = _results({"fixed": [0.1, 0.2, 0.5, 0.0, 0.1], "isotropic": [0.2, 0.3, 0.1, 0.0, 0.0],
                    "ancer": [0.4, 0.3, 0.2, 0.0, 0.9]},
                   correct={"ancer": [True, True, True, True, False]})
    t = superset.superset_table(res).set_index("sigma")
    assert t.loc[0.25, "n_ties"] == 1 and t.loc[0.25, "inputs"] == 5
    assert t.loc[0.25, "pct_with_ties"] == pytest.approx(100 * 3 / 5)      # inputs 0, 1, 3
    assert t.loc[0.25, "pct_without_ties"] == pytest.approx(100 * 2 / 4)   # inputs 0, 1 of 0, 1, 2, 4
    assert t.loc["all", "pct_with_ties"] == pytest.approx(60.0)


def test_superset_needs_every_method_on_every_input():
    res = _results({"fixed": [0.1], "isotropic": [0.2], "ancer": [0.3]})
    with pytest.raises(ValueError, match="missing"):
        superset.superset_table(res[res.method != "fixed"])
    extra = pd.concat([res, res.iloc[[0]].assign(idx=7)], ignore_index=True)
    with pytest.raises(ValueError, match="same inputs"):
        superset.superset_table(extra)


def test_average_theta_and_anisotropy_closed_forms():
    t = np.array([[[1.0, 3.0]], [[3.0, 1.0]]])  # (N=2, 1, 2)
    assert np.allclose(superset.average_theta(t, "mean"), [[2.0, 2.0]])
    assert np.allclose(superset.average_theta(t, "rms"), [[np.sqrt(5.0), np.sqrt(5.0)]])
    assert np.allclose(superset.anisotropy(t), [3.0, 3.0])
    assert np.allclose(superset.anisotropy(np.full((4, 1, 3, 3), 0.25)), 1.0)
    for bad in (np.zeros((2, 2)), np.array([1.0, 2.0]), np.full((2, 2), np.nan)):
        with pytest.raises(ValueError, match="thetas"):
            superset.average_theta(bad)
    with pytest.raises(ValueError, match="kind"):
        superset.average_theta(t, "median")


def test_ellipsoid_slice_lies_on_the_boundary():
    rng = np.random.default_rng(0)
    n = 7
    s = np.exp(rng.normal(size=n))
    q, _ = np.linalg.qr(rng.normal(size=(n, 2)))
    u, v = q[:, 0], q[:, 1]
    ab = superset.ellipsoid_slice(s, u, v)
    points = ab[:, :1] * u + ab[:, 1:] * v
    assert np.allclose(region_norm(points, s, "l2"), 1.0)
    axis = superset.ellipsoid_slice(np.array([2.0, 0.5, 1.0]), np.eye(3)[0], np.eye(3)[1])
    assert np.abs(axis[:, 0]).max() == pytest.approx(2.0, rel=1e-3) and np.abs(axis[:, 1]).max() == pytest.approx(0.5, rel=1e-3)
    with pytest.raises(ValueError, match="orthonormal"):
        superset.ellipsoid_slice(s, u, u)
