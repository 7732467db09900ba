"""Bad input: every public entry point of certify / noise / regions raises ValueError naming the argument."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ancer_lite.core import regions
from ancer_lite.core.certify import Smooth, certificate_from_bound, lower_confidence_bound
from ancer_lite.core.noise import sample_noise, standard_noise
from ancer_lite.core.parameters import check_rotation
from ancer_lite.core.validation import (
    check_choice,
    check_count,
    check_finite_tensor,
    check_positive,
    check_probability,
    check_scale,
)

N_DIM = 4
SHAPE = (N_DIM,)


class TwoClass(torch.nn.Module):
    """logits = [0, x_1]: a valid two-class base classifier."""

    def forward(self, x):
        s = x.reshape(x.shape[0], -1)[:, 0]
        return torch.stack([torch.zeros_like(s), s], dim=1)


class BadOutput(torch.nn.Module):
    """A base classifier whose output is malformed in the way `kind` says."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def forward(self, x):
        b = x.shape[0]
        if self.kind == "classes":
            return torch.zeros(b, 3)
        if self.kind == "batch":
            return torch.zeros(1, 2) if b != 1 else torch.zeros(2, 2)
        if self.kind == "flat":
            return torch.zeros(b)
        if self.kind == "numpy":
            return np.zeros((b, 2))
        return [[0.0, 1.0]] * b  # a list


def smooth(noise: str = "gaussian", model: torch.nn.Module | None = None) -> Smooth:
    return Smooth(TwoClass() if model is None else model, 2, SHAPE, noise=noise, seed=0)


X = torch.full(SHAPE, 0.5)
BAD_SCALARS = [0.0, -0.1, math.nan, math.inf, -math.inf]


# --------------------------------------------------------------------------------------------------
# sigma / lambda (the smoothing scale)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("noise,name", [("gaussian", "sigma"), ("uniform", "lambda")])
@pytest.mark.parametrize("bad", BAD_SCALARS)
def test_bad_scalar_scale(noise, name, bad):
    """sigma (Gaussian, Corollary 1) or lambda (uniform, Corollary 2) must be finite and > 0: scalars."""
    sm = smooth(noise)
    with pytest.raises(ValueError, match=name):
        sm.certify(X, bad, 10, 10, 0.1)
    with pytest.raises(ValueError, match=name):
        sm.predict(X, bad, 10, 0.1)
    with pytest.raises(ValueError, match=name):
        sm.sample_counts(X, torch.tensor(bad), 10)  # a 0-d tensor too


@pytest.mark.parametrize("noise,name", [("gaussian", "sigma"), ("uniform", "lambda")])
@pytest.mark.parametrize("bad", BAD_SCALARS)
def test_bad_vector_scale(noise, name, bad):
    """... and per-dimension vectors with one bad entry (numpy or torch)."""
    theta = np.full(N_DIM, 0.3)
    theta[2] = bad
    sm = smooth(noise)
    with pytest.raises(ValueError, match=name):
        sm.certify(X, theta, 10, 10, 0.1)
    with pytest.raises(ValueError, match=name):
        sm.certify(X, torch.tensor(theta, dtype=torch.float32), 10, 10, 0.1)


@pytest.mark.parametrize("shape", [(N_DIM + 1,), (1, N_DIM), (2, 2), (1,)])
def test_scale_shape_must_match_input(shape):
    """theta must be a scalar or have exactly the input's shape."""
    with pytest.raises(ValueError, match="sigma"):
        smooth().certify(X, torch.full(shape, 0.3), 10, 10, 0.1)
    with pytest.raises(ValueError, match="lambda"):
        smooth("uniform").predict(X, np.full(shape, 0.3), 10, 0.1)


@pytest.mark.parametrize("bad", BAD_SCALARS)
def test_sample_noise_bad_theta(bad):
    """sample_noise names its scale argument theta."""
    with pytest.raises(ValueError, match="theta"):
        sample_noise("gaussian", bad, 5, SHAPE)
    with pytest.raises(ValueError, match="theta"):
        sample_noise("uniform", np.array([0.1, 0.2, bad, 0.3]), 5, SHAPE)
    with pytest.raises(ValueError, match="theta"):
        sample_noise("uniform", np.ones(3), 5, SHAPE)


# --------------------------------------------------------------------------------------------------
# alpha, N0, N
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, 1, 0.0, 1.0, -0.1, 1.5, math.nan, math.inf, "0.1x", None])
def test_bad_alpha(bad):
    """The failure probability alpha must lie in the open interval (0, 1)."""
    with pytest.raises(ValueError, match="alpha"):
        smooth().certify(X, 0.3, 10, 10, bad)
    with pytest.raises(ValueError, match="alpha"):
        smooth().predict(X, 0.3, 10, bad)
    with pytest.raises(ValueError, match="alpha"):
        lower_confidence_bound(5, 10, bad)


@pytest.mark.parametrize("bad", [0, -5, 2.5, 10.0, "10", None, True, math.nan])
def test_bad_sample_counts(bad):
    """N0 and N (CERTIFY's selection and estimation sample counts) must be integers >= 1."""
    with pytest.raises(ValueError, match=r"\bn0\b"):
        smooth().certify(X, 0.3, bad, 10, 0.1)
    with pytest.raises(ValueError, match=r"^n must"):
        smooth().certify(X, 0.3, 10, bad, 0.1)
    with pytest.raises(ValueError, match=r"^n must"):
        smooth().predict(X, 0.3, bad, 0.1)
    with pytest.raises(ValueError, match=r"^num must"):
        smooth().sample_counts(X, 0.3, bad)
    with pytest.raises(ValueError, match=r"^num must"):
        sample_noise("gaussian", 0.3, bad, SHAPE)


def test_numpy_integer_counts_are_accepted():
    """Counts given as numpy integers are fine (they are integers)."""
    cert = smooth().certify(X, 0.3, np.int64(10), np.int32(20), 0.1)
    assert cert.n == 20


@pytest.mark.parametrize("kwargs,name", [({"num_classes": 1}, "num_classes"), ({"num_classes": 2.0}, "num_classes"),
                                         ({"batch_size": 0}, "batch_size"), ({"input_shape": (0, 3)}, "input_shape"),
                                         ({"input_shape": (2.5,)}, "input_shape")])
def test_bad_smooth_constructor_arguments(kwargs, name):
    """Smooth's num_classes (>= 2), batch_size (>= 1) and input_shape (positive ints) are checked."""
    args = {"model": TwoClass(), "num_classes": 2, "input_shape": SHAPE}
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        Smooth(**args)


# --------------------------------------------------------------------------------------------------
# inputs x
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_x_with_nan_or_inf(bad):
    """x must be finite."""
    x = X.clone()
    x[1] = bad
    with pytest.raises(ValueError, match=r"^x must"):
        smooth().certify(x, 0.3, 10, 10, 0.1)
    with pytest.raises(ValueError, match=r"^x must"):
        smooth("uniform").predict(x, 0.3, 10, 0.1)


@pytest.mark.parametrize("shape", [(N_DIM + 1,), (1, N_DIM), (2, N_DIM), (), (2, 2)])
def test_x_with_wrong_shape(shape):
    """x must have exactly the input shape (one unbatched input)."""
    with pytest.raises(ValueError, match=r"^x must have shape"):
        smooth().certify(torch.zeros(shape), 0.3, 10, 10, 0.1)


# --------------------------------------------------------------------------------------------------
# the model's output
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["classes", "batch", "flat", "numpy", "list"])
def test_model_output_with_wrong_shape_or_type(kind):
    """The base classifier must return a (batch, num_classes) tensor of logits."""
    with pytest.raises(ValueError, match="model output"):
        smooth(model=BadOutput(kind)).certify(X, 0.3, 10, 10, 0.1)
    with pytest.raises(ValueError, match="model output"):
        smooth(model=BadOutput(kind)).predict(X, 0.3, 10, 0.1)


# --------------------------------------------------------------------------------------------------
# noise name, rotation, norm
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["laplace", "Gaussian", "", None, "l2"])
def test_unknown_noise(bad):
    """Only "gaussian" and "uniform" smoothing are implemented."""
    with pytest.raises(ValueError, match="noise"):
        Smooth(TwoClass(), 2, SHAPE, noise=bad)
    with pytest.raises(ValueError, match="noise"):
        sample_noise(bad, 0.3, 5, SHAPE)
    with pytest.raises(ValueError, match="noise"):
        standard_noise(bad, 5, SHAPE)


def _rotations():
    q = np.linalg.qr(np.random.default_rng(0).normal(size=(N_DIM, N_DIM)))[0]
    nan = q.copy()
    nan[0, 0] = math.nan
    return {"scaled": 2 * np.eye(N_DIM), "nearly_scaled": 0.99996 * np.eye(N_DIM), "perturbed": q + 1e-2, "singular": np.ones((N_DIM, N_DIM)),
            "nan": nan, "shape": np.eye(N_DIM + 1), "rectangular": q[:, :3]}


@pytest.mark.parametrize("kind", list(_rotations()))
def test_bad_rotation(kind):
    """The rotation U of RANCER's noise U (theta * z) must be a finite (n x n) orthogonal matrix."""
    u = _rotations()[kind]
    with pytest.raises(ValueError, match="rotation"):
        smooth().certify(X, 0.3, 10, 10, 0.1, rotation=torch.tensor(u))
    with pytest.raises(ValueError, match="rotation"):
        sample_noise("uniform", 0.3, 5, SHAPE, rotation=torch.tensor(u))
    with pytest.raises(ValueError, match="rotation"):
        check_rotation(u, N_DIM)


@pytest.mark.parametrize("bad", ["l3", "linf", "L2", "", None])
def test_unknown_norm(bad):
    """regions only know the l1 (Corollary 2) and l2 (Corollary 1) certificates."""
    theta = np.ones(3)
    for call in (lambda: regions.gap_from_lower_bound(0.8, bad),
                 lambda: regions.log_volume(theta, 0.5, bad),
                 lambda: regions.enclosed_radius(theta, 0.5, bad, np.eye(3)),
                 lambda: regions.region_norm(np.ones(3), theta, bad),
                 lambda: certificate_from_bound(1, 0.8, theta, bad)):
        with pytest.raises(ValueError, match="norm"):
            call()


# --------------------------------------------------------------------------------------------------
# the checks themselves
# --------------------------------------------------------------------------------------------------


def test_validation_helpers_name_the_argument():
    """Each helper puts the given argument name in its message and passes good values through."""
    assert check_probability(0.25, "alpha") == 0.25
    assert check_count(np.int64(3), "n0") == 3
    assert check_positive(2, "sigma") == 2.0
    assert check_choice("a", "mode", ("a", "b")) == "a"
    t = check_scale(0.5, (2, 3), "lambda")
    assert t.shape == (2, 3) and torch.all(t == 0.5)
    assert torch.equal(check_finite_tensor(torch.ones(2), "x", (2,)), torch.ones(2))
    for call, name in ((lambda: check_probability(2, "beta_level"), "beta_level"),
                       (lambda: check_count(0, "num_things"), "num_things"),
                       (lambda: check_positive(-1, "scale_q"), "scale_q"),
                       (lambda: check_positive("abc", "scale_q"), "scale_q"),
                       (lambda: check_choice("c", "mode", ("a", "b")), "mode"),
                       (lambda: check_scale(np.zeros((2, 3)), (2, 3), "lam_w"), "lam_w"),
                       (lambda: check_finite_tensor(torch.tensor([math.nan]), "inp"), "inp"),
                       (lambda: check_finite_tensor(torch.ones(3), "inp", (2,)), "inp")):
        with pytest.raises(ValueError, match=name):
            call()


@pytest.mark.parametrize("k,n,name", [(5, 0, r"^n must"), (5, -5, r"^n must"), (5, 2.5, r"^n must"),
                                      (11, 10, r"^k must"), (-1, 10, r"^k must"), (2.5, 10, r"^k must"),
                                      (math.nan, 10, r"^k must"), (np.array([3, 20]), 10, r"^k must")])
def test_lower_confidence_bound_bad_counts(k, n, name):
    """The Clopper-Pearson bound needs n >= 1 trials and integer successes 0 <= k <= n (no silent NaN)."""
    with pytest.raises(ValueError, match=name):
        lower_confidence_bound(k, n, 0.05)


def test_lower_confidence_bound_accepts_integral_float_counts():
    """Counts stored as floats (as torch count tensors often are) are fine when integral."""
    assert float(lower_confidence_bound(np.float64(7.0), 10, 0.05)) == float(lower_confidence_bound(7, 10, 0.05))


@pytest.mark.parametrize("bad", [math.nan, -0.1, 1.5, math.inf])
def test_certificate_from_bound_bad_p_lower(bad):
    """A lower bound outside [0, 1] (or NaN) is an error, not a silently empty certificate."""
    with pytest.raises(ValueError, match="p_lower"):
        certificate_from_bound(1, bad, np.ones(3), "l2")


def test_integer_images_and_unusable_devices_are_named():
    """x of dtype int64 is reported as a bad x (not theta0); device='cuda' without one is named (not the driver's error)."""
    from ancer_lite.methods.optimize import optimize_ancer, optimize_isotropic

    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 3))
    x = torch.ones(2, 1, 2, 2, dtype=torch.int64)
    with pytest.raises(ValueError, match="x must be a floating-point tensor"):
        optimize_isotropic(model, x, 0.25, "gaussian", iterations=1, samples=2)
    with pytest.raises(ValueError, match="x must be a floating-point tensor"):
        optimize_ancer(model, x, torch.full((2,), 0.25), "gaussian", iterations=1, samples=2)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device = 'cuda'.*no usable CUDA device"):
            Smooth(model, 3, (1, 2, 2), device="cuda")


def test_ucan_certify_names_its_counts():
    """UCAN's n0 = 0 or batch_size = 0 is named as such (not as 'num')."""
    from ancer_lite.methods import ucan

    model, npg = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 3)), ucan.FixedNPG(np.ones((1, 2, 2)))
    x = torch.zeros(1, 2, 2)
    for kw, name in ((dict(n0=0), "n0"), (dict(n=0), "n"), (dict(batch_size=0), "batch_size")):
        args = dict(n0=10, n=20, batch_size=8) | kw
        with pytest.raises(ValueError, match=f"^{name} must be"):
            ucan.certify(model, npg, x, "gaussian", 0.5, args["n0"], args["n"], 0.001, 3, torch.Generator(),
                         batch_size=args["batch_size"])


def test_training_refuses_nan_settings_and_nan_images():
    """momentum = nan or a NaN pixel is refused instead of training a model with NaN weights."""
    from ancer_lite.methods import ucan
    from ancer_lite.models.train import train_classifier

    x, y = torch.rand(8, 1, 2, 2), torch.arange(8) % 3
    net = lambda: torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 3))  # noqa: E731
    for kw, name in ((dict(momentum=float("nan")), "momentum"), (dict(weight_decay=-1.0), "weight_decay"),
                     (dict(stability=float("nan")), "stability")):
        with pytest.raises(ValueError, match=name):
            train_classifier(net(), x, y, epochs=1, **kw)
    bad = x.clone()
    bad[0, 0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="x must contain only finite values"):
        train_classifier(net(), bad, y, epochs=1)
    npg = ucan.FixedNPG(np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match="variance_weight"):
        ucan.train_ucan(net(), npg, x, y, epochs=1, variance_weight=float("nan"))
    with pytest.raises(ValueError, match="x must contain only finite values"):
        ucan.certify(net(), npg, bad[0], "gaussian", 0.5, 10, 20, 0.001, 3, torch.Generator())


def test_smooth_noise_and_hessian_name_their_arguments():
    """Each of these raised torch's or Python's own error (a TypeError from int(), 'Expected one of cpu, cuda,
    ...', an IndexError), or blamed another argument (check_rotation blamed the rotation for a bad dim)."""
    from ancer_lite.methods.hessian import input_hessian
    from ancer_lite.runs.experiment import certify_all

    model = TwoClass()
    for kw, name in ((dict(seed="a"), "seed"), (dict(seed=-1), "seed"), (dict(seed=None), "seed"),
                     (dict(device="tpu"), "device"), (dict(input_shape=None), "input_shape"),
                     (dict(input_shape=4), "input_shape")):
        args = dict(model=model, num_classes=2, input_shape=SHAPE) | kw
        with pytest.raises(ValueError, match=f"^{name} must"):
            Smooth(**args)
    for dim in (0, -1, 2.5):
        with pytest.raises(ValueError, match="^n must"):
            check_rotation(np.eye(2), dim)
    for kw, name in ((dict(num=-1), "num"), (dict(num=2.5), "num"), (dict(shape=(-1, 2)), "shape"),
                     (dict(shape="ab"), "shape")):
        args = dict(noise="gaussian", num=3, shape=(2, 2)) | kw
        with pytest.raises(ValueError, match=f"^{name} must"):
            standard_noise(**args)
    x = torch.rand(2, *SHAPE)
    with pytest.raises(ValueError, match="lengths 2, 1 and 2"):
        certify_all(model, x, torch.zeros(1, dtype=torch.long), np.full((2, *SHAPE), 0.3), "gaussian", 10, 20, 0.1, 2)
    for label in (5, -1, 1.5):
        with pytest.raises(ValueError, match="^label must be a class index"):
            input_hessian(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(int(np.prod(SHAPE)), 3)), x[0], label)
