"""The base classifier is called safely: broken (NaN/inf) models raise instead of being certified, and
models in train mode (dropout, BatchNorm) are run as the fixed function f in eval mode, with their
state and training flags left as they were."""
import numpy as np
import pytest
import torch
from torch import nn

from ancer_lite.core.base_classifier import checked_logits, eval_mode
from ancer_lite.core.certify import Smooth
from ancer_lite.evaluation.verify import smoothed_predictions
from ancer_lite.methods.optimize import optimize_ancer, optimize_isotropic, smoothed_probabilities
from ancer_lite.models.train import accuracy


class Broken(nn.Module):
    """Logits of a linear layer, with NaN (or inf) on the inputs whose first coordinate is > `at`."""

    def __init__(self, value: float, at: float = 0.0) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.value, self.at = value, at

    def forward(self, x):
        out = self.lin(x)
        bad = (x[:, 0] > self.at).unsqueeze(1)
        return torch.where(bad, torch.full_like(out, self.value), out)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_logits_raise_in_certify_predict_and_optimization(value):
    torch.manual_seed(0)
    model = Broken(value)
    x = torch.full((4,), 0.5)  # every noisy copy near x has x_0 > 0 with high probability
    smooth = Smooth(model, 3, (4,), seed=0)
    with pytest.raises(ValueError, match="non-finite logits"):
        smooth.certify(x, 0.1, 10, 100, 0.01)
    with pytest.raises(ValueError, match="non-finite logits"):
        smooth.predict(x, 0.1, 100, 0.01)
    with pytest.raises(ValueError, match="non-finite logits"):
        optimize_isotropic(model, x.unsqueeze(0), 0.1, "gaussian", iterations=1, samples=4)
    with pytest.raises(ValueError, match="non-finite logits"):
        optimize_ancer(model, x.unsqueeze(0), torch.tensor([0.1]), "gaussian", iterations=1, samples=4)
    with pytest.raises(ValueError, match="non-finite logits"):
        smoothed_predictions(model, x.unsqueeze(0), 0.1, "gaussian", 10)
    with pytest.raises(ValueError, match="non-finite logits"):
        accuracy(model, x.unsqueeze(0), torch.tensor([0]))


def test_a_single_nan_row_among_many_is_caught():
    """Before the fix, argmax of a NaN row silently voted for class 0; one bad row must be enough."""
    model = Broken(float("nan"), at=0.9999)  # NaN only where x_0 > 0.9999: rare under the noise
    x = torch.zeros(4)
    x[0] = 0.5
    with pytest.raises(ValueError, match=r"non-finite logits \(NaN or inf\) for \d+ of"):
        Smooth(model, 3, (4,), seed=0).certify(x, 0.2, 10, 20_000, 0.01)


def test_finite_logits_whose_sum_overflows_pass_and_a_lone_inf_or_nan_does_not():
    """checked_logits first sums the logits (one reduction): huge finite logits whose sum overflows to inf are
    re-checked one by one and pass; a single inf or NaN among finite ones raises, whatever else the batch holds."""
    huge = torch.full((6, 3), 3.0e38)
    assert checked_logits(lambda b: huge, torch.zeros(6, 4), 3) is huge
    assert not bool(torch.isfinite(huge.sum()))
    for bad in (float("inf"), -float("inf"), float("nan")):
        logits = torch.randn(6, 3)
        logits[4, 1] = bad
        with pytest.raises(ValueError, match=r"non-finite logits \(NaN or inf\) for 1 of 6"):
            checked_logits(lambda b: logits, torch.zeros(6, 4), 3)
        logits = huge.clone()
        logits[0, 0] = bad
        with pytest.raises(ValueError, match=r"non-finite logits \(NaN or inf\) for 1 of 6"):
            checked_logits(lambda b: logits, torch.zeros(6, 4), 3)


def test_wrong_output_shape_names_what_was_expected():
    model = nn.Linear(4, 5)
    with pytest.raises(ValueError, match=r"\(batch, num_classes\) = \(10, 3\), got \(10, 5\)"):
        checked_logits(model, torch.zeros(10, 4), 3)


class DropBN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bn = nn.BatchNorm1d(6)
        self.drop = nn.Dropout(0.5)
        self.lin = nn.Linear(6, 3)

    def forward(self, x):
        return self.lin(self.drop(self.bn(x)))


def _trained_dropbn() -> DropBN:
    torch.manual_seed(1)
    m = DropBN()
    with torch.no_grad():  # give BatchNorm non-trivial running statistics
        m.bn.running_mean.copy_(torch.randn(6))
        m.bn.running_var.copy_(torch.rand(6) + 0.5)
    return m


def test_train_mode_model_is_certified_as_its_eval_function_and_left_unchanged():
    x = torch.rand(6)
    reference = _trained_dropbn().eval()
    want = Smooth(reference, 3, (6,), seed=3).certify(x, 0.3, 50, 2000, 0.01)

    model = _trained_dropbn().train()
    model.drop.eval()  # a mixed state: it must come back exactly like this
    state = {k: v.clone() for k, v in model.state_dict().items()}
    flags = {name: m.training for name, m in model.named_modules()}
    got = Smooth(model, 3, (6,), seed=3).certify(x, 0.3, 50, 2000, 0.01)
    assert got == want  # same noise, same f: identical certificate (dropout off, running stats used)
    for k, v in model.state_dict().items():
        assert torch.equal(v, state[k]), f"{k} changed during certification"
    assert {name: m.training for name, m in model.named_modules()} == flags


def test_train_mode_model_in_optimization_is_deterministic_and_unchanged():
    x = torch.rand(2, 6)
    model = _trained_dropbn().train()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    a = smoothed_probabilities(model, x, torch.full((2, 1), 0.2), "gaussian", 16, torch.Generator().manual_seed(0))
    b = smoothed_probabilities(model.eval(), x, torch.full((2, 1), 0.2), "gaussian", 16,
                               torch.Generator().manual_seed(0))
    assert torch.equal(a, b)
    model.train()
    optimize_isotropic(model, x, 0.2, "gaussian", iterations=3, samples=8)
    for k, v in model.state_dict().items():
        assert torch.equal(v, state[k]), f"{k} changed during optimization"
    assert model.training and model.bn.training and model.drop.training


def test_eval_mode_restores_flags_after_an_error():
    model = _trained_dropbn().train()
    with pytest.raises(RuntimeError):
        with eval_mode(model):
            assert not model.training and not model.bn.training
            raise RuntimeError("boom")
    assert model.training and model.bn.training and model.drop.training


def test_eval_mode_accepts_plain_callables():
    f = lambda z: z  # noqa: E731
    with eval_mode(f) as g:
        assert g is f
    assert np.allclose(checked_logits(f, torch.ones(3, 2)).numpy(), 1.0)


class CoinPerCall(nn.Module):
    """One coin per forward call decides the class of the whole batch: p_A = 1/2 for every input, but with
    batches the counts come in blocks (without the check it was certified in 8 of 20 calls, p_lower 0.9993)."""

    def __init__(self) -> None:
        super().__init__()
        self.gen = torch.Generator().manual_seed(0)

    def forward(self, x):
        heads = float(torch.rand(1, generator=self.gen))
        t = torch.full((len(x),), 5.0 if heads < 0.5 else -5.0)
        return torch.stack([t, -t], dim=1)


class BatchStats(nn.Module):
    """A module that normalizes with the batch's own statistics, as train-mode BatchNorm does, whatever its
    mode: its output for an input depends on the rest of the batch."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(6, 3)

    def forward(self, x):
        return self.lin((x - x.mean(0)) / (x.std(0, correction=0) + 1e-3))


@pytest.mark.parametrize("model", [CoinPerCall(), BatchStats()])
def test_certify_refuses_a_model_whose_output_depends_on_the_batch(model):
    smooth = Smooth(model, 2 if isinstance(model, CoinPerCall) else 3, (6,), seed=0)
    with pytest.raises(ValueError, match="depends on the rest of its batch"):
        smooth.certify(torch.rand(6), 0.3, 100, 1000, 0.001)


def test_certify_refuses_a_plain_function_and_accepts_per_example_models():
    model = _trained_dropbn().train()
    with pytest.raises(ValueError, match="model must be a torch.nn.Module"):
        Smooth(lambda z: model(z), 3, (6,))  # a function would keep the BatchNorm in training mode
    for ok in (model, nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))):
        Smooth(ok, 3, (6,), seed=0).certify(torch.rand(6), 0.3, 100, 1000, 0.001)  # eval-mode BN is per example


def test_probabilities_are_refused_where_logits_are_expected():
    """A model ending in a softmax is refused by CERTIFY and by the optimizers (its votes would be right, its soft
    smoothed classifier not the paper's); log-probabilities and one-hot scores are logits."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 3))
    probs = torch.nn.Sequential(net, torch.nn.Softmax(dim=1))
    x = torch.rand(2, 1, 2, 2)
    with pytest.raises(ValueError, match="model must return logits .* probabilities"):
        Smooth(probs, 3, (1, 2, 2)).certify(x[0], 0.25, 10, 50, 0.01)
    with pytest.raises(ValueError, match="model must return logits .* probabilities"):
        optimize_isotropic(probs, x, 0.25, "gaussian", iterations=1, lr=0.01, samples=4)
    Smooth(torch.nn.Sequential(net, torch.nn.LogSoftmax(dim=1)), 3, (1, 2, 2)).certify(x[0], 0.25, 10, 50, 0.01)

    class OneHot(torch.nn.Module):
        def forward(self, b):
            return torch.nn.functional.one_hot((b.flatten(1).sum(1) > 2).long(), 3).float()

    Smooth(OneHot(), 3, (1, 2, 2)).certify(x[0], 0.25, 10, 50, 0.01)


def test_a_model_that_turns_nan_is_called_broken_not_batch_dependent():
    class Decaying(torch.nn.Module):
        calls = 0

        def forward(self, b):
            self.calls += 1
            out = b.flatten(1)[:, :3] * 1.0
            return out if self.calls == 1 else out * float("nan")

    with pytest.raises(ValueError, match="non-finite logits .* on its own"):
        Smooth(Decaying(), 3, (1, 2, 2)).certify(torch.rand(1, 2, 2), 0.25, 10, 50, 0.01)
