"""The certification runner: resuming an interrupted run gives identical results; ANCER starts from the
Isotropic DD solution and stays above it; validation selection picks from the grid by each objective."""
import numpy as np
import pandas as pd
import pytest

from ancer_lite.methods.registry import OptimSettings
from ancer_lite.runs import logs
from ancer_lite.runs.experiment import optimize_thetas, run_method
from ancer_lite.runs.selection import ACCURACY_SLACK, select_settings

SETTINGS = OptimSettings(chunk=4).with_budget(3, 16)
#: selection's step grids (multiples of θ0) by method
GRIDS = {"isotropic": [0.01, 0.1], "ancer": [0.01, 0.1]}
ONE_STEP = {"isotropic": [0.01], "ancer": [0.01]}


@pytest.fixture(scope="module")
def toy(toy_classifier):
    return toy_classifier(6, 10)


@pytest.mark.parametrize("method", ["fixed", "isotropic", "ancer"])
def test_resume_is_identical(tmp_path, toy, method):
    model, x, y, idx = toy
    args = (model, x, y, idx, "gaussian", 0.25, method, SETTINGS)
    kw = dict(n0=20, n=300, alpha=0.01, num_classes=3, seed=3)
    full = run_method(*args, tmp_path / "full", **kw)
    run_method(*args, tmp_path / "cut", **kw)
    log = tmp_path / "cut" / "certify.tsv"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:3]) + "\n")  # an interrupted run: header + 2 inputs
    (tmp_path / "cut" / "final.tsv").unlink()
    resumed = run_method(*args, tmp_path / "cut", **kw)
    cols = ["idx", "label", "predict", "radius", "radius_proxy", "correct", "gap", "p_lower"]
    pd.testing.assert_frame_equal(full[cols], resumed[cols])
    assert len(resumed) == 6 and (resumed["status"] != "").all()


def test_run_method_refuses_mismatched_or_repeated_indices(tmp_path, toy):
    """Mismatched lengths are named (not an IndexError/KeyError); a repeated index would give one input another's
    certificate. Both are refused before anything is written."""
    model, x, y, idx = toy
    kw = dict(n0=20, n=100, alpha=0.01, num_classes=3)
    for bad_y, bad_idx, match in ((y[:5], idx, "lengths 6, 5 and 6"), (y, idx[:4], "lengths 6, 6 and 4"),
                                  (y, np.array([10, 11, 12, 12, 14, 15]), "indices must be distinct"),
                                  (y, idx + 0.5, "indices must be a 1-D array of integers"),
                                  (y.clone().fill_(7), idx, "y must hold integer class labels"),
                                  (y.float(), idx, "y must hold integer class labels")):
        with pytest.raises(ValueError, match=match):
            run_method(model, x, bad_y, bad_idx, "gaussian", 0.25, "fixed", SETTINGS, tmp_path / "run", **kw)
        assert not (tmp_path / "run").exists()


def test_ancer_starts_from_isotropic(toy):
    model, x, _, _ = toy
    iso = optimize_thetas(model, x, "uniform", 0.4, "isotropic", SETTINGS, seed=0)
    assert np.allclose(iso.reshape(6, -1), iso.reshape(6, -1)[:, :1])  # one scale per input
    anc = optimize_thetas(model, x, "uniform", 0.4, "ancer", SETTINGS, seed=0, isotropic=iso)
    assert (anc >= iso - 1e-6).all() and anc.shape == x.shape
    with pytest.raises(ValueError, match="isotropic"):
        optimize_thetas(model, x, "uniform", 0.4, "ancer", SETTINGS, isotropic=iso[:2])
    with pytest.raises(ValueError, match="method"):
        optimize_thetas(model, x, "uniform", 0.4, "cohen", SETTINGS)


@pytest.mark.parametrize("method, column, factor", [("ancer", "gap", 1.1), ("fixed", "radius", 0.9),
                                                    ("isotropic", "radius_proxy", 1.1), ("ancer", "min_sigma", 1.1),
                                                    ("fixed", "log_volume", 1.1)])
def test_an_edited_certificate_is_not_published(tmp_path, toy, method, column, factor):
    """A well-formed row of certify.tsv whose number no longer follows from its p_lower and θ is refused when the
    run reads its log back (a rerun after final.tsv was deleted), naming the file and the input."""
    model, x, y, idx = toy
    args = (model, x, y, idx, "gaussian", 0.25, method, SETTINGS, tmp_path)
    kw = dict(n0=20, n=300, alpha=0.01, num_classes=3, seed=3)
    full = run_method(*args, **kw)
    log = tmp_path / "certify.tsv"
    rows = [r.split("\t") for r in log.read_text().splitlines()]
    k = next(i for i in range(1, len(rows)) if rows[i][rows[0].index("predict")] != "-1")
    c = rows[0].index(column)
    rows[k][c] = repr(float(rows[k][c]) * factor)
    log.write_text("\n".join("\t".join(r) for r in rows) + "\n")
    (tmp_path / "final.tsv").unlink()
    with pytest.raises(ValueError, match=f"certify.tsv: the row of idx {rows[k][0]} holds {column} .* edited"):
        run_method(*args, **kw)
    rows[k][c] = repr(float(rows[k][c]) / factor)  # put back (within rounding): the run publishes again
    log.write_text("\n".join("\t".join(r) for r in rows) + "\n")
    pd.testing.assert_frame_equal(run_method(*args, **kw).drop(columns="time"), full.drop(columns="time"),
                                  check_exact=False, rtol=1e-12)


def test_select_settings_picks_from_grid(toy):
    model, x, y, _ = toy
    chosen, table = select_settings(model, x, y, "gaussian", 0.25, GRIDS, SETTINGS,
                                    n0=20, n=300, alpha=0.01, num_classes=3)
    assert table.chosen.sum() == 2
    iso = table[table.method == "isotropic"]
    assert iso.loc[iso.chosen, "acr"].item() == iso.acr.max()
    anc = table[table.method == "ancer"]
    # ANCER's step: the largest objective among the steps that keep Isotropic DD's accuracy within ACCURACY_SLACK
    floor = iso.loc[iso.chosen, "accuracy"].item() - ACCURACY_SLACK
    assert (anc.eligible == (anc.accuracy >= floor)).all() and iso.eligible.all()
    assert anc.loc[anc.chosen, "objective"].item() == pytest.approx((anc.acr_proxy + 2.0 * anc.acr)[anc.eligible].max())
    assert chosen.of("isotropic").lr == pytest.approx(0.25 * iso.loc[iso.chosen, "lr_relative"].item())


def test_a_step_that_loses_accuracy_where_it_is_reused_is_not_eligible(toy, monkeypatch):
    """`elsewhere`: ANCER's steps are checked at the other noise levels from the best objective down; here ANCER
    misclassifies everything there with the step chosen without the check (or a larger one), so it is refused."""
    import copy

    from ancer_lite.runs import selection
    from ancer_lite.runs.selection import check_selection_table

    model, x, y, _ = toy
    grid = [0.01, 0.04, 0.1]
    _, alone = select_settings(model, x, y, "gaussian", 0.25, {**GRIDS, "ancer": grid}, SETTINGS, n0=20, n=300,
                               alpha=0.01, num_classes=3, widen=0)
    first = alone[(alone.method == "ancer") & alone.chosen].lr_relative.item()
    other, seen = copy.deepcopy(model), {}
    optimize, certify = selection.optimize_thetas, selection.certify_all

    def spy_optimize(m, xs, noise, theta0, method, settings, *args, **kwargs):
        seen["step"] = settings.of("ancer").lr / theta0 if m is other and method == "ancer" else None
        return optimize(m, xs, noise, theta0, method, settings, *args, **kwargs)

    def spy_certify(m, *args, **kwargs):
        res = certify(m, *args, **kwargs)
        return res.assign(correct=0) if m is other and (seen.get("step") or 0) >= first - 1e-12 else res

    monkeypatch.setattr(selection, "optimize_thetas", spy_optimize)
    monkeypatch.setattr(selection, "certify_all", spy_certify)
    chosen, table = select_settings(model, x, y, "gaussian", 0.25, {**GRIDS, "ancer": grid}, SETTINGS, n0=20, n=300,
                                    alpha=0.01, num_classes=3, widen=0, elsewhere=[(other, 0.5)])
    anc = table[table.method == "ancer"].set_index("lr_relative")
    assert anc.loc[first, "elsewhere"] < -ACCURACY_SLACK and not anc.loc[first, "eligible"]
    pick = anc.index[anc.chosen][0]
    assert chosen.of("ancer").lr == pytest.approx(0.25 * pick)
    if anc.eligible.any():   # the best remaining step passed the check; those below it were not checked
        assert pick < first and -ACCURACY_SLACK <= anc.loc[pick, "elsewhere"]
        assert anc[anc.objective < anc.loc[pick, "objective"]].elsewhere.isna().all()
    else:                    # nothing passed: the smallest step tried is kept
        assert pick == min(grid)
    assert not anc[anc.objective > anc.loc[pick, "objective"]].eligible.any()
    check_selection_table(table, SETTINGS, "t.tsv")
    with pytest.raises(TypeError, match=r"elsewhere\[0\] must be a \(model, theta0\) pair"):
        select_settings(model, x, y, "gaussian", 0.25, ONE_STEP, SETTINGS, n0=20, n=300, alpha=0.01,
                        num_classes=3, elsewhere=[other])
    with pytest.raises(ValueError, match=r"elsewhere\[0\]'s theta0"):
        select_settings(model, x, y, "gaussian", 0.25, ONE_STEP, SETTINGS, n0=20, n=300, alpha=0.01,
                        num_classes=3, elsewhere=[(other, -1.0)])


def test_a_step_size_table_read_back_must_say_what_its_rule_chose(toy, tmp_path):
    """A selection table kept on disk passes `check_selection_table` as written; one whose chosen row was moved,
    whose numbers were edited or whose rows were torn is refused naming the file, not used."""
    from ancer_lite.runs.cache import read_table, write_table
    from ancer_lite.runs.selection import check_selection_table

    model, x, y, _ = toy
    _, table = select_settings(model, x, y, "gaussian", 0.25, GRIDS, SETTINGS,
                               n0=20, n=300, alpha=0.01, num_classes=3)
    path = tmp_path / "selection-l2.tsv"
    with open(path, "w") as fh:
        write_table(table, fh)
    check_selection_table(read_table(path), SETTINGS, str(path))
    worst = table.assign(chosen=False)
    iso = worst.index[worst.method == "isotropic"]
    worst.loc[worst.loc[iso, "objective"].idxmin(), "chosen"] = True
    worst.loc[table.index[(table.method == "ancer") & table.chosen], "chosen"] = True
    assert worst.loc[iso, "objective"].nunique() > 1  # the moved choice is not a tie
    with pytest.raises(ValueError, match="selection-l2.tsv: method isotropic must have one chosen row"):
        check_selection_table(worst, SETTINGS, str(path))
    edited = table.copy()
    edited.loc[edited.index[0], "acr"] += 0.1
    with pytest.raises(ValueError, match="selection-l2.tsv: method isotropic's objective is not"):
        check_selection_table(edited, SETTINGS, str(path))
    two = table.copy()
    two.loc[two.method == "isotropic", "chosen"] = True
    with pytest.raises(ValueError, match="must have one chosen row"):
        check_selection_table(two, SETTINGS, str(path))
    torn = table.astype({"chosen": object})
    torn.loc[torn.index[0], "chosen"] = "Tr"
    with pytest.raises(ValueError, match="column 'chosen' must hold True/False"):
        check_selection_table(torn, SETTINGS, str(path))
    with pytest.raises(ValueError, match="not a step-size table, missing columns"):
        check_selection_table(table.drop(columns="objective"), SETTINGS, str(path))


def test_widening_search_extends_a_grid_whose_best_sits_at_an_edge():
    """The chosen step size must not sit at the edge of what was tried when widening is allowed: with a
    score peaked at 1e-4 and the grid [1e-3, 1e-2], 1e-4 and then 1e-5 are tried, and 1e-4 wins inside."""
    from ancer_lite.runs.selection import widening_search

    calls = []

    def evaluate(v):
        calls.append(v)
        return {"score": -abs(np.log10(v) + 4)}

    rows = widening_search([1e-2, 1e-3], evaluate, lambda r: r["score"], widen=5)
    assert calls == pytest.approx([1e-3, 1e-2, 1e-4, 1e-5])
    assert max(rows, key=lambda v: rows[v]["score"]) == pytest.approx(1e-4)
    assert [rows[v].get("widened", False) for v in sorted(rows)] == [True, True, False, False]
    # upper edge, and the limit on extra values
    rows = widening_search([1.0, 2.0], lambda v: {"score": v}, lambda r: r["score"], widen=2)
    assert sorted(rows) == pytest.approx([1.0, 2.0, 4.0, 8.0])
    assert len(widening_search([1.0, 2.0], lambda v: {"score": v}, lambda r: r["score"], widen=0)) == 2
    # an ineligible value (score -inf, as `select_settings` scores ANCER's steps that lose accuracy) beyond the
    # best one ends the widening, although its raw objective is larger
    rows = widening_search([1.0, 2.0], lambda v: {"score": v}, lambda r: r["score"] if r["score"] < 3 else -np.inf,
                           widen=5)
    assert sorted(rows) == pytest.approx([1.0, 2.0, 4.0])


@pytest.mark.parametrize("method, field, value", [("isotropic", "iterations", -1), ("isotropic", "lr", -1.0),
                                                  ("isotropic", "samples", 0), ("ancer", "iterations", 1.5),
                                                  ("ancer", "lr", float("nan")), ("ancer", "samples", 0),
                                                  ("ancer", "kappa", -1.0)])
def test_method_settings_refuse_meaningless_values(method, field, value):
    """Each method's setting is checked where its settings value is made."""
    with pytest.raises(ValueError, match=field):
        OptimSettings().changed(method, **{field: value})


@pytest.mark.parametrize("chunk", [0, -1])
def test_optim_settings_refuse_a_meaningless_chunk(chunk):
    """chunk = -1 would silently return theta0 without optimizing."""
    with pytest.raises(ValueError, match="chunk"):
        OptimSettings(chunk=chunk)


def test_a_log_with_another_label_is_refused(tmp_path, toy):
    """A row whose label (with correct adjusted) is not the dataset's label of its input is refused, naming the file,
    the idx and the column."""
    model, x, y, idx = toy
    args = (model, x, y, idx, "gaussian", 0.25, "fixed", SETTINGS, tmp_path)
    kw = dict(n0=20, n=300, alpha=0.01, num_classes=3, seed=3)
    run_method(*args, **kw)
    log = tmp_path / "certify.tsv"
    rows = [r.split("\t") for r in log.read_text().splitlines()]
    head = rows[0]
    label = int(rows[1][head.index("label")])
    rows[1][head.index("label")] = str((label + 1) % 3)
    rows[1][head.index("correct")] = str(int(rows[1][head.index("predict")] == rows[1][head.index("label")]))
    log.write_text("\n".join("\t".join(r) for r in rows) + "\n")
    logs.checksum_path(log).unlink()  # an older version's log: the label is still checked against the dataset's
    (tmp_path / "final.tsv").unlink()
    with pytest.raises(ValueError, match=f"certify.tsv: the row of idx {rows[1][0]} holds label"):
        run_method(*args, **kw)


def _table(iso_lrs, widened):
    """A consistent step-size table of Isotropic DD (lr_relative `iso_lrs`, the last one chosen) and ANCER."""
    from ancer_lite.methods import registry

    rows = []
    for k, lr in enumerate(iso_lrs):
        acr = 0.1 + 0.01 * k
        rows.append(dict(method="isotropic", lr_relative=lr, acr=acr, acr_proxy=acr, accuracy=0.9,
                         objective=registry.method("isotropic").objective(acr, acr, OptimSettings()), eligible=True,
                         elsewhere=float("nan"), widened=widened[k], chosen=k == len(iso_lrs) - 1))
    for k, lr in enumerate((0.04, 0.08)):
        acr, proxy = 0.1, 0.2 + 0.01 * k
        rows.append(dict(method="ancer", lr_relative=lr, acr=acr, acr_proxy=proxy, accuracy=0.9,
                         objective=registry.method("ancer").objective(acr, proxy, OptimSettings()), eligible=True,
                         elsewhere=float("nan"), widened=False, chosen=k == 1))
    return pd.DataFrame(rows)


def test_a_selection_table_holds_the_step_sizes_of_its_grid():
    """The step sizes of a table are its grid's and the grid's widening (`widening_search`); an edited one is refused
    naming the file, the row and the column."""
    from ancer_lite.runs.selection import check_selection_table

    grids = {"isotropic": [0.01, 0.02], "ancer": [0.04, 0.08]}
    good = _table([0.01, 0.02, 0.04, 0.08], [False, False, True, True])
    check_selection_table(good, OptimSettings(), "t.tsv", grids)
    edited = good.assign(lr_relative=np.where(good.index == 3, 0.5, good.lr_relative))
    with pytest.raises(ValueError, match=r"t.tsv: row 3 \(method isotropic\) holds lr_relative 0.5"):
        check_selection_table(edited, OptimSettings(), "t.tsv", grids)
    with pytest.raises(ValueError, match="lr_relative must hold each step size"):  # a gap in the widening
        check_selection_table(_table([0.01, 0.02, 0.08], [False, False, True]), OptimSettings(), "t.tsv", grids)
    with pytest.raises(ValueError, match="t.tsv: no rows of method 'isotropic'"):
        check_selection_table(good[good.method != "isotropic"], OptimSettings(), "t.tsv", grids)
