"""Draws and forward passes that do not depend on how the work is cut: `noise.DrawStream`
gives one sequence of draws whatever the batch sizes, `base_classifier.blocked_forward` gives a row the same logits
whatever the batch it is in, and CERTIFY's two stages draw from two streams."""
import numpy as np
import pytest
import torch

from ancer_lite.core.base_classifier import ROW_BLOCK, blocked_forward
from ancer_lite.core.certify import Smooth
from ancer_lite.core.noise import DrawStream, standard_noise
from ancer_lite.core.streams import certify_streams
from ancer_lite.models.small import MLP, SmallCNN


def _cut(total: int, rng: np.random.Generator) -> list[int]:
    sizes = []
    while sum(sizes) < total:
        sizes.append(int(min(rng.integers(1, 40), total - sum(sizes))))
    return sizes


@pytest.mark.parametrize("noise", ["gaussian", "uniform"])
@pytest.mark.parametrize("shape", [(2,), (3,), (1, 2, 2), (5, 3), (1, 8, 8), (1, 28, 28)])
def test_draws_in_any_batches_are_one_sequence(noise, shape):
    """Draws taken in random batch sizes (1 to 39 rows) equal one draw of their total size from the same seed."""
    rng = np.random.default_rng(len(shape) * 10 + shape[-1])
    total = 150
    whole = DrawStream(noise, shape, torch.Generator().manual_seed(3)).draw(total)
    for _ in range(3):
        stream = DrawStream(noise, shape, torch.Generator().manual_seed(3))
        parts = [stream.draw(b) for b in _cut(total, rng)]
        assert torch.equal(torch.cat(parts), whole)
    # into a preallocated buffer, as CERTIFY's loop draws
    stream = DrawStream(noise, shape, torch.Generator().manual_seed(3))
    buf = torch.empty((7, *shape))
    parts = [stream.draw(7, out=buf).clone() for _ in range(total // 7)]
    assert torch.equal(torch.cat(parts), whole[:len(parts) * 7])


@pytest.mark.parametrize("noise", ["gaussian", "uniform"])
def test_whole_blocks_are_the_draws_of_standard_noise(noise):
    """When 16 divides a draw's size (every image here), a DrawStream keeps no rows and its draws are those of
    `standard_noise` on the same generator, bit for bit (the quick profile's image draws did not change)."""
    shape = (1, 8, 8)
    a = DrawStream(noise, shape, torch.Generator().manual_seed(9))
    b = torch.Generator().manual_seed(9)
    for num in (1, 7, 100, 33):
        assert torch.equal(a.draw(num), standard_noise(noise, num, shape, b))
        assert a.carry is None or len(a.carry) == 0


@pytest.mark.parametrize("make, shape", [(lambda: MLP((1, 8, 8), 10, hidden=(64, 64)), (1, 8, 8)),
                                         (lambda: SmallCNN((1, 28, 28), 10), (1, 28, 28)),
                                         (lambda: MLP((2,), 3, hidden=(16, 16)), (2,))])
def test_blocked_forward_gives_a_row_the_same_logits_in_any_batch(make, shape):
    torch.manual_seed(0)
    model = make().eval()
    x = torch.rand(400, *shape)
    with torch.no_grad():
        whole = blocked_forward(model, x)
        for b in (1, 7, 16, 100, 333):
            parts = torch.cat([blocked_forward(model, x[i:i + b]) for i in range(0, len(x), b)])
            assert torch.equal(parts, whole), b
        # an aligned batch is not padded: blocked_forward is then the model itself
        assert torch.equal(blocked_forward(model, x[:ROW_BLOCK * 5]), model(x[:ROW_BLOCK * 5]))


def test_blocked_forward_is_differentiable():
    model = MLP((3,), 2, hidden=(8,))
    x = torch.rand(5, 3, requires_grad=True)
    blocked_forward(model, x).sum().backward()
    assert x.grad is not None and x.grad.shape == (5, 3)


def test_certify_stages_draw_from_their_own_streams():
    """With a pair of streams, CERTIFY's class comes from the selection stream's n0 draws and its count from the first
    n draws of the estimation stream, whatever n0 (reference: the counts of each stream on its own)."""
    torch.manual_seed(0)
    model = MLP((1, 2, 2), 3, hidden=(8,))
    smooth = Smooth(model, 3, (1, 2, 2), "gaussian", batch_size=64)
    x = torch.full((1, 2, 2), 0.5)
    for n0 in (10, 50, 200):
        select, estimate = certify_streams(0, 4)
        c_hat = int(np.argmax(smooth.sample_counts(x, 0.5, n0, generator=select)))
        expected = int(smooth.sample_counts(x, 0.5, 500, generator=estimate)[c_hat])
        c, count, _ = smooth.lower_bound(x, 0.5, n0, 500, 0.01, generator=certify_streams(0, 4))
        assert (c, count) == (c_hat, expected)
    with pytest.raises(TypeError, match="generator"):
        smooth.certify(x, 0.5, 10, 50, 0.01, generator=(torch.Generator(),))
