"""`data.stratified_subset`: the validation and test subsets hold every class about equally, whatever the order of
the source (MNIST-5k's file is sorted by label, where the first inputs of a split are one class)."""
import numpy as np
import pytest
import torch

from ancer_lite.models.data import Split, stratified_subset
from ancer_lite.runs import setups
from ancer_lite.runs.profiles import get_profile


def _split(labels) -> Split:
    y = torch.tensor(labels, dtype=torch.int64)
    return Split(torch.arange(len(y), dtype=torch.float32).view(-1, 1, 1, 1), y, np.arange(len(y)) + 100)


@pytest.mark.parametrize("count", [1, 3, 7, 10, 25, 40, 59])
def test_classes_take_turns_in_source_order(count):
    split = _split(np.repeat(np.arange(10), 6))            # sorted by label, 6 per class
    sub = stratified_subset(split, count, seed=0)
    counts = np.bincount(sub.y.numpy(), minlength=10)
    assert len(sub) == count and counts.max() - counts.min() <= 1 and counts.sum() == count
    assert (np.diff(sub.index) > 0).all()                   # kept in source order
    assert torch.equal(sub.x.view(-1).long() + 100, torch.from_numpy(sub.index))  # rows stay together
    assert np.array_equal(sub.index, stratified_subset(split, count, seed=0).index)  # seeded


def test_small_classes_give_all_they_have():
    split = _split([0] * 50 + [1] * 2 + [2] * 30)
    counts = np.bincount(stratified_subset(split, 20, seed=3).y.numpy(), minlength=3)
    assert counts[1] == 2 and sorted(counts[[0, 2]]) == [9, 9]


def test_seed_changes_the_choice_and_none_or_all_keeps_the_split():
    split = _split(np.repeat(np.arange(5), 20))
    assert not np.array_equal(stratified_subset(split, 10, 0).index, stratified_subset(split, 10, 1).index)
    for count in (None, 100, 500):
        assert stratified_subset(split, count, 0) is split


@pytest.mark.parametrize("count, error", [(0, ValueError), (-2, ValueError), (2.5, ValueError), (True, ValueError)])
def test_bad_count_is_named(count, error):
    with pytest.raises(error, match="count"):
        stratified_subset(_split([0, 1, 2]), count, 0)


def test_bad_seed_is_named():
    with pytest.raises((TypeError, ValueError), match="seed"):
        stratified_subset(_split([0, 1, 2]), 2, -1)


def test_quick_columns_validate_and_test_on_every_class(monkeypatch, tmp_path):
    """Every quick column's validation and test inputs hold each of the 10 classes equally (the models are not
    trained here: the splits do not depend on them)."""
    monkeypatch.setattr(setups, "train_cached", lambda path, build, fit: build())
    quick = get_profile("quick")
    for setup in quick.images + quick.rancer:
        work = setups.prepare(setup, data_dir=tmp_path)
        for name, split, count in (("val", work.val, setup.num_val), ("test", work.test, setup.num_test)):
            counts = np.bincount(split.y.numpy(), minlength=10)
            assert len(split) == count and counts.max() - counts.min() <= 1, (setup.name, name, counts)
