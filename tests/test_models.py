"""Models return logits and hold their input normalization."""
import torch

from ancer_lite.models import MLP, Normalize


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
