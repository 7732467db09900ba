"""Input Hessians (ANCER Figure 4, RANCER's rotation): the closed form of a linear model, rank at most
K - 1 for ReLU networks, full rank with softplus, and the landscape helper."""
import numpy as np
import pytest
import torch
from torch import nn

from ancer_lite.core.reproducibility import torch_threads
from ancer_lite.methods.hessian import eigen_directions, input_hessian, landscape, numerical_rank
from ancer_lite.models.small import MLP, SmallCNN


def test_linear_model_matches_closed_form():
    torch.manual_seed(0)
    lin = nn.Linear(6, 4).double()
    x = torch.rand(6, dtype=torch.float64)
    p = torch.softmax(lin(x), 0).detach().numpy()
    w = lin.weight.detach().numpy()
    want = w.T @ (np.diag(p) - np.outer(p, p)) @ w  # the CE Hessian does not depend on the label here
    h = input_hessian(lin, x, label=2)
    assert np.allclose(h, want, atol=1e-12)
    assert numerical_rank(h) <= 3
    assert lin.weight.dtype == torch.float64


def test_relu_rank_at_most_classes_minus_one_softplus_full():
    torch.manual_seed(1)
    x = torch.rand(1, 8, 8)
    relu = MLP((1, 8, 8), 10, hidden=(32, 32))
    soft = SmallCNN((1, 8, 8), 10, activation="softplus")
    h_relu, h_soft = input_hessian(relu, x), input_hessian(soft, x)
    assert h_relu.shape == (64, 64) and np.allclose(h_relu, h_relu.T)
    assert numerical_rank(h_relu) <= 9
    assert numerical_rank(h_soft) > 9
    assert next(relu.parameters()).dtype == torch.float32  # the model is left as it was


def test_eigen_directions_and_landscape():
    torch.manual_seed(2)
    model = SmallCNN((1, 8, 8), 10, activation="softplus")
    x = torch.rand(1, 8, 8)
    w, v = eigen_directions(input_hessian(model, x))
    assert (np.diff(w) <= 1e-12).all() and np.allclose(v.T @ v, np.eye(64), atol=1e-10)
    label = int(model(x.unsqueeze(0)).argmax())
    aa, bb, f = landscape(model, x, label, v[:, 0], v[:, 1], 0.5, resolution=11)
    assert f.shape == (11, 11) and aa[5, 5] == 0 and bb[5, 5] == 0
    with torch.no_grad():
        assert f[5, 5] == pytest.approx(float(torch.softmax(model(x.unsqueeze(0)), 1)[0, label]), abs=1e-6)


def test_probability_hessian_matches_closed_form():
    """ANCER Figure 4's Hessian of f^y = softmax(Wx + b)_y for a linear model: W^T ∇²_z p_y W, with
    ∇²_z p_y = p_y [(e_y - p)(e_y - p)^T - diag(p) + p p^T] (differentiate ∂p_y/∂z = p_y (e_y - p) once more)."""
    torch.manual_seed(3)
    lin = nn.Linear(6, 4).double()
    x = torch.rand(6, dtype=torch.float64)
    p = torch.softmax(lin(x), 0).detach().numpy()
    w = lin.weight.detach().numpy()
    for y in range(4):
        e = np.eye(4)[y] - p
        hz = p[y] * (np.outer(e, e) - np.diag(p) + np.outer(p, p))
        assert np.allclose(input_hessian(lin, x, label=y, of="probability"), w.T @ hz @ w, atol=1e-12)
    # a ReLU network is locally linear: f^y's Hessian has rank at most K - 1 as the loss's does
    relu = MLP((1, 8, 8), 10, hidden=(32, 32))
    assert numerical_rank(input_hessian(relu, torch.rand(1, 8, 8), of="probability")) <= 9
    with pytest.raises(ValueError, match="of must be"):
        input_hessian(lin, x, of="logit")


def test_eigen_directions_by_magnitude():
    """ANCER App. A.1 orders the eigenvectors by |λ|: a negative eigenvalue of large magnitude comes first."""
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(4, 4)))
    lam = np.array([0.5, -3.0, 0.01, 2.0])
    h = q @ np.diag(lam) @ q.T
    h = 0.5 * (h + h.T)
    w, v = eigen_directions(h, order="magnitude")
    assert np.allclose(w, [-3.0, 2.0, 0.5, 0.01])
    assert np.allclose(np.abs(v.T @ q[:, [1, 3, 0, 2]]), np.eye(4), atol=1e-10)
    w_signed, _ = eigen_directions(h)
    assert np.allclose(w_signed, [2.0, 0.5, 0.01, -3.0])
    with pytest.raises(ValueError, match="order must be"):
        eigen_directions(h, order="abs")


@pytest.mark.parametrize("caller_threads", [1, 2])
def test_hessian_runs_on_one_thread_and_restores_the_callers_count(caller_threads):
    """On the CPU the Hessian is computed on one torch thread: the caller's count is restored, the result is the one
    torch's own Hessian gives on one thread whatever that count, and (for the quick models, 784 pixels included) the
    one it gives on two threads too, so that the rotations of the committed notebooks did not change."""
    torch.manual_seed(3)
    model, x = SmallCNN((1, 28, 28), 10, activation="softplus"), torch.rand(1, 28, 28)
    seen = []
    real = torch.autograd.functional.hessian

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    with torch_threads(caller_threads):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(torch.autograd.functional, "hessian", spy)
            h = input_hessian(model, x)
        assert torch.get_num_threads() == caller_threads
    assert seen == [1]
    flat = x.reshape(-1).double()
    double = SmallCNN((1, 28, 28), 10, activation="softplus")
    double.load_state_dict(model.state_dict())
    double = double.double().eval()
    label = int(double(flat.view(1, 1, 28, 28)).argmax(1))

    def loss(v):
        return torch.nn.functional.cross_entropy(double(v.view(1, 1, 28, 28)), torch.tensor([label]))

    for threads in (1, 2):
        with torch_threads(threads):
            want = real(loss, flat, vectorize=True).detach().numpy()
        assert np.array_equal(h, 0.5 * (want + want.T)), threads
