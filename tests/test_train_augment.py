"""`train.train_classifier`'s stability term between two noisy copies (RS4A's src/train.py) and its random crops and
flips (`train.crop_flip`): one SGD step against the loss written out by hand with the same draws, and every cropped
image against a brute-force search over the crops and flips it could be."""
import copy

import pytest
import torch
import torch.nn.functional as F

from ancer_lite.core.noise import standard_noise
from ancer_lite.models.train import crop_flip, train_classifier


def _images(n=6, c=2, h=5, w=4, seed=0):
    return torch.rand(n, c, h, w, generator=torch.Generator().manual_seed(seed))


def test_crop_flip_gives_a_crop_of_the_padded_image_or_its_mirror_and_is_seeded():
    x = _images()
    out = crop_flip(x, torch.Generator().manual_seed(3), padding=2)
    assert out.shape == x.shape and torch.equal(out, crop_flip(x, torch.Generator().manual_seed(3), padding=2))
    padded = F.pad(x, (2, 2, 2, 2))
    flipped = 0
    for k in range(len(x)):
        crops = {(i, j, f): (padded[k, :, i:i + 5, j:j + 4].flip(-1) if f else padded[k, :, i:i + 5, j:j + 4])
                 for i in range(5) for j in range(5) for f in (False, True)}
        hits = [key for key, c in crops.items() if torch.equal(c, out[k])]
        assert hits, f"image {k} is no crop of its padded image"
        flipped += all(f for _, _, f in hits)
    assert 0 < flipped < len(x)          # some flipped, some not (seed 3)
    plain = crop_flip(x, torch.Generator().manual_seed(1), padding=0)  # no padding: the image or its mirror
    assert all(torch.equal(plain[k], x[k]) or torch.equal(plain[k], x[k].flip(-1)) for k in range(len(x)))
    with pytest.raises(ValueError, match="B, C, H, W"):
        crop_flip(x[0], torch.Generator())


class _Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2 * 5 * 4, 3)

    def forward(self, x):
        return self.fc(x.flatten(1))


@pytest.mark.parametrize("pair", ["clean", "noisy"])
@pytest.mark.parametrize("augment", ["none", "crop_flip"])
def test_one_step_is_the_stability_loss_written_out(pair, augment):
    """One full-batch SGD step (momentum 0, weight decay 0, lr η) equals θ - η ∇[CE(f(x + ε1)) + w KL(p || q)] with
    (p, q) = (f(x), f(x + ε1)) for "clean" and (f(x + ε1), f(x + ε2)) for "noisy", the draws made in the loop's
    order: the batch order, the crops and flips, ε1, then ε2."""
    x, y = _images(seed=1), torch.tensor([0, 1, 2, 0, 1, 2])
    torch.manual_seed(0)
    model = _Linear()
    ref = copy.deepcopy(model)
    scale, w, lr, seed = 0.3, 6.0, 0.1, 7
    trained = train_classifier(model, x, y, "gaussian", scale, epochs=1, batch_size=len(x), lr=lr, momentum=0.0,
                               weight_decay=0.0, stability=w, seed=seed, stability_pair=pair, augment=augment)
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(x), generator=gen)
    xb, yb = x[perm], y[perm]
    if augment == "crop_flip":
        xb = crop_flip(xb, gen)
    x1 = xb + scale * standard_noise("gaussian", len(xb), tuple(xb.shape[1:]), gen)
    x2 = xb if pair == "clean" else xb + scale * standard_noise("gaussian", len(xb), tuple(xb.shape[1:]), gen)
    l1, l2 = ref(x1), ref(x2)
    p, q = (F.softmax(l2, 1), F.softmax(l1, 1)) if pair == "clean" else (F.softmax(l1, 1), F.softmax(l2, 1))
    kl = (p * (p.log() - q.log())).sum(1).mean()
    loss = F.cross_entropy(l1, yb) + w * kl
    loss.backward()
    with torch.no_grad():
        for a, b in zip(trained.parameters(), ref.parameters()):
            assert torch.allclose(a, b - lr * b.grad, atol=1e-6), pair
