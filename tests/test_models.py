"""Models return logits and hold their input normalization."""
import pytest
import torch

from ancer_lite.core.base_classifier import fixed_weights
from ancer_lite.models.small import MLP, Normalize, SmallCNN


def test_normalize_per_channel():
    norm = Normalize([0.5, 0.25], [0.5, 0.25])
    x = torch.tensor([[[[1.0]], [[0.5]]]])
    assert torch.allclose(norm(x), torch.tensor([[[[1.0]], [[1.0]]]]))


def test_mlp_shapes_and_normalization_inside():
    torch.manual_seed(0)
    m = MLP((1, 8, 8), 10, hidden=(32,), mean=(0.5,), std=(0.25,))
    x = torch.rand(4, 1, 8, 8)
    out = m(x)
    assert out.shape == (4, 10)
    # the first layer sees (x - 0.5) / 0.25
    lin = m.net[2]
    manual = torch.relu(((x - 0.5) / 0.25).reshape(4, -1) @ lin.weight.T + lin.bias) @ m.net[4].weight.T + m.net[4].bias
    assert torch.allclose(out, manual, atol=1e-5)


def _graph_nodes(out: torch.Tensor) -> set[str]:
    """Names of every autograd node behind `out`."""
    seen, todo, names = set(), [out.grad_fn], set()
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.add(type(node).__name__)
        todo.extend(n for n, _ in node.next_functions)
    return names


@pytest.mark.parametrize("shape, activation", [((1, 8, 8), "relu"), ((1, 28, 28), "relu"), ((1, 12, 12), "softplus")])
def test_small_cnn_input_gradient_with_fixed_weights_matches_autograd(shape, activation):
    """With its weights fixed, SmallCNN back-propagates its one-channel first convolution through
    `_InputGradConv` (a matrix product and strided additions): the same input gradient as torch's
    convolution backward up to float rounding and the same logits bit for bit; with trainable weights it
    takes torch's own convolution."""
    torch.manual_seed(0)
    m = SmallCNN(shape, 10, activation=activation).eval()
    x = torch.rand(64, *shape)
    weights = torch.randn(64, 10)

    def grad_of(model_call):
        xx = x.clone().requires_grad_(True)
        out = model_call(xx)
        g, = torch.autograd.grad((torch.softmax(out, 1) * weights).sum(), xx)
        return out, g

    ref_out, ref = grad_of(lambda z: m.net(z))   # torch's own backward
    assert "_InputGradConvBackward" not in _graph_nodes(m(x.clone().requires_grad_(True)))
    with fixed_weights(m):
        out, g = grad_of(m)
    assert "_InputGradConvBackward" in _graph_nodes(out)
    assert torch.equal(out.detach(), ref_out.detach())
    assert torch.allclose(g, ref, rtol=1e-5, atol=1e-6 * float(ref.abs().max()))
    assert all(p.requires_grad for p in m.parameters())  # fixed_weights restores the flags


def test_small_cnn_input_gradient_is_twice_differentiable():
    """gradcheck and gradgradcheck in float64 through `_InputGradConv` (its backward is made of differentiable
    operations), on a stride-2 first convolution of an odd-sized input."""
    torch.manual_seed(0)
    m64 = SmallCNN((1, 7, 7), 3, activation="softplus").double().eval()
    z = torch.rand(2, 1, 7, 7, dtype=torch.float64, requires_grad=True)
    with fixed_weights(m64):
        assert "_InputGradConvBackward" in _graph_nodes(m64(z))
        assert torch.autograd.gradcheck(m64, (z,))
        assert torch.autograd.gradgradcheck(m64, (z,))


def test_small_cnn_training_path_is_untouched():
    """Weights that need gradients (training) take torch's own convolution: logits and every gradient are
    those of `net` bit for bit."""
    torch.manual_seed(1)
    m = SmallCNN((1, 8, 8), 10)
    x = torch.rand(32, 1, 8, 8, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(m(x), torch.arange(32) % 10)
    grads = torch.autograd.grad(loss, [x, *m.parameters()])
    loss_ref = torch.nn.functional.cross_entropy(m.net(x), torch.arange(32) % 10)
    refs = torch.autograd.grad(loss_ref, [x, *m.parameters()])
    assert torch.equal(loss, loss_ref) and all(torch.equal(a, b) for a, b in zip(grads, refs))


def test_fixed_weights_restores_flags_on_error():
    m = MLP((4,), 2, hidden=(3,))
    m.net[2].weight.requires_grad_(False)  # a mix of flags
    before = [p.requires_grad for p in m.parameters()]
    with pytest.raises(RuntimeError, match="boom"):
        with fixed_weights(m):
            assert not any(p.requires_grad for p in m.parameters())
            raise RuntimeError("boom")
    assert [p.requires_grad for p in m.parameters()] == before
