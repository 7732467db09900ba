"""Quick-profile models get initial weights that depend on the seed alone (`setups.seeded_model`), not on what
drew from torch's global generator before them (which notebook trains a model first, how many it built)."""
from dataclasses import replace

import pytest
import torch

from ancer_lite.core.names import NOISE_OF
from ancer_lite.core.reproducibility import torch_threads
from ancer_lite.models.data import digits_split
from ancer_lite.models.train import sgd_setup, train_classifier
from ancer_lite.runs.profiles import DIGITS, MNIST
from ancer_lite.runs.setups import TRAIN_LR, build_model, prepare, seeded_model, theta_of


def _weights(model: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def test_initial_weights_do_not_depend_on_earlier_draws():
    for setup, shape in ((DIGITS, (1, 8, 8)), (MNIST, (1, 28, 28))):
        torch.manual_seed(123)
        first = _weights(seeded_model(setup, shape, 10, seed=0))
        torch.rand(1000)  # other models built or other draws in between
        build_model(setup, shape, 10)
        again = _weights(seeded_model(setup, shape, 10, seed=0))
        assert all(torch.equal(a, b) for a, b in zip(first, again))
        other = _weights(seeded_model(setup, shape, 10, seed=1))
        assert not all(torch.equal(a, b) for a, b in zip(first, other))


def test_same_weights_as_a_model_built_right_after_a_training():
    """The training recipe seeds torch's generator with the same seed, so a model built right after another
    model's training (how notebook 03 builds all but its first) is initialized exactly as before."""
    x, y = torch.rand(8, 1, 8, 8), torch.arange(8) % 10
    sgd_setup(build_model(DIGITS, (1, 8, 8), 10), x, y, epochs=1, batch_size=4, lr=0.1, seed=0)
    after_training = _weights(build_model(DIGITS, (1, 8, 8), 10))
    assert all(torch.equal(a, b) for a, b in zip(after_training, _weights(seeded_model(DIGITS, (1, 8, 8), 10, 0))))


def test_cached_weights_do_not_depend_on_the_callers_thread_count(tmp_path):
    """A quick model is trained on `TRAIN_THREADS` threads whatever the caller runs on (a notebook's kernel on 2, a
    worker on 1, a command line on all the cores), so the model it caches, which every later run reads, is the
    same. Trained on the caller's threads, the weights differ in their last bits (checked first, so that the
    comparison after it has something to catch)."""
    setup = replace(DIGITS, name="threads", sigmas_l2=(0.25,), sigmas_l1=(), epochs=2)
    train = digits_split(0)["train"]
    direct = []
    for threads in (1, 2):
        with torch_threads(threads):
            model = seeded_model(setup, (1, 8, 8), 10, seed=0)
            direct.append(_weights(train_classifier(model, train.x, train.y, noise=NOISE_OF["l2"],
                                                    scale=theta_of("l2", 0.25), epochs=2, lr=TRAIN_LR, seed=0)))
    assert not all(torch.equal(a, b) for a, b in zip(*direct)), "training no longer depends on torch's threads here"
    cached = []
    for threads in (1, 2, 3):
        with torch_threads(threads):
            cached.append(_weights(prepare(setup, 0, tmp_path / f"threads{threads}").models["l2", 0.25]))
    for other in cached[1:]:
        assert all(torch.equal(a, b) for a, b in zip(cached[0], other))
    assert all(torch.equal(a, b) for a, b in zip(cached[0], direct[1]))  # TRAIN_THREADS is 2, a notebook kernel's


@pytest.mark.parametrize("field, value", [("num_val", -3), ("num_val", 0), ("num_test", 0), ("n", 0), ("epochs", 0),
                                          ("samples", 2.5), ("iterations", -1), ("sigmas_l2", (0.25, -1.0)),
                                          ("iso_lr_grid", (0.0, 0.1)), ("ancer_lr_grid", (float("nan"),))])
def test_image_setups_refuse_meaningless_fields(field, value):
    """num_val = -3 is refused (a negative slice would certify all but the last three validation inputs)."""
    with pytest.raises(ValueError, match=field):
        replace(DIGITS, **{field: value})


def test_prepare_names_a_bad_seed_before_touching_data(tmp_path):
    for seed in (-1, 2 ** 32, 1.5, True):
        with pytest.raises(ValueError, match="seed must be an integer"):
            prepare(DIGITS, seed=seed, data_dir=tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("field, value", [("lams", (-1.0,)), ("lams", ()), ("epochs", 0), ("num_val", -3),
                                          ("val_n", 0), ("growth", 0), ("gammas", (0.0,)), ("audit_verify", -1)])
def test_ucan_setups_refuse_meaningless_fields(field, value):
    from ancer_lite.runs.profiles import UCAN_DIGITS

    with pytest.raises(ValueError, match=field):
        replace(UCAN_DIGITS, **{field: value})


@pytest.mark.parametrize("field, value", [("n0", 0), ("n", -1), ("alpha", 2.0), ("alpha", 0.0), ("batch_size", 0),
                                          ("mc_samples", -5)])
def test_profiles_refuse_meaningless_fields(field, value):
    from ancer_lite.runs.profiles import get_profile

    with pytest.raises(ValueError, match=field):
        replace(get_profile("quick"), **{field: value})
