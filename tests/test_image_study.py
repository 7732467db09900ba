"""Notebook 03's per-column study on a tiny digits setup: step-size selection, certification of every
(norm, sigma, method), reuse of logs and selection tables, and the best-over-sigma tables and claims."""
import dataclasses

import numpy as np
import pandas as pd
import pytest

from ancer_lite.models.train import model_fingerprint
from ancer_lite.runs.profiles import ImageSetup, get_profile
from ancer_lite.runs.setups import prepare
from ancer_lite.studies import image_study as study
from ancer_lite.studies.image_study import METHODS

SETUP = ImageSetup("digits", "digits", "CIFAR-10", hidden=(8,), epochs=1, sigmas_l2=(0.25,), sigmas_l1=(0.5,),
                   num_test=10, num_val=4, n=200, val_n=100, iso_lr_grid=(0.01, 0.1), ancer_lr_grid=(0.01,),
                   iterations=2, samples=4)
PROFILE = dataclasses.replace(get_profile("quick"), n0=10, batch_size=100, images=(SETUP,))


def test_study_end_to_end_and_reuse(tmp_path):
    work = prepare(SETUP, seed=0, data_dir=tmp_path, cache="t")
    assert len(work.test) == 10 and len(work.val) == 4 and set(work.models) == {("l2", 0.25), ("l1", 0.5)}
    chosen, table = study.choose_step_sizes(work, SETUP, PROFILE, tmp_path / "results")
    assert set(chosen) == {"l2", "l1"} and table.chosen.sum() == 4
    for norm, theta in (("l2", 0.25), ("l1", 0.5 * 3 ** 0.5)):
        pick = table[(table.norm == norm) & table.chosen].set_index("method").lr_relative
        assert chosen[norm].of("isotropic").lr == pytest.approx(pick["isotropic"] * theta)
        assert chosen[norm].of("ancer").lr == pytest.approx(pick["ancer"] * theta)
    files = sorted((tmp_path / "results" / "digits").glob("selection-*.tsv"))
    assert len(files) == 2
    stamps = [f.stat().st_mtime_ns for f in files]

    calls = []
    res, timings, reused = study.certify_setup(work, SETUP, PROFILE, chosen, tmp_path / "results", 0, calls.append)
    assert reused == 0 and sum(calls) == len(res) == 2 * len(METHODS) * 10 and len(timings) == 6
    again_chosen, _ = study.choose_step_sizes(work, SETUP, PROFILE, tmp_path / "results")
    assert again_chosen == chosen and [f.stat().st_mtime_ns for f in files] == stamps  # reused, not recomputed
    calls.clear()
    res2, _, reused = study.certify_setup(work, SETUP, PROFILE, chosen, tmp_path / "results", 0, calls.append)
    assert reused == len(res) and sum(calls) == len(res)
    assert np.array_equal(res2.radius.to_numpy(), res.radius.to_numpy())

    works, setups = {"digits": work}, {"digits": SETUP}
    chosen_all, selection = study.choose_all(works, setups, PROFILE, tmp_path / "results")
    assert chosen_all == {"digits": chosen} and set(selection.column) == {"digits"}
    run = study.certify_columns(works, setups, PROFILE, chosen_all, tmp_path / "results")
    assert run.total == run.reused == len(res) and run.computed == 0
    assert run.logged_seconds == pytest.approx(float(res["time"].sum()))
    # the sensitivity run: the chosen step is the main run (read back), a larger grid top a run of its own
    top = dataclasses.replace(SETUP, ancer_lr_grid=(0.01, 0.05))
    sens = study.step_sensitivity(works, {"digits": top}, PROFILE, chosen_all, selection, tmp_path / "results")
    assert list(sens.columns) == list(study.SENSITIVITY_COLUMNS) and run.computed == 0
    for norm in ("l2", "l1"):
        rows = sens[sens.norm == norm].set_index("role")
        assert list(rows.index) == ["Isotropic DD", "chosen", "grid's largest"]
        assert list(rows.lr_relative.iloc[1:]) == [0.01, 0.05]
        for role, method in (("Isotropic DD", "isotropic"), ("chosen", "ancer")):
            main = res[(res.norm == norm) & (res.method == method)]
            assert rows.loc[role, "accuracy"] == pytest.approx(100 * main.correct.mean())
            assert rows.loc[role, "acr_proxy"] == pytest.approx((main.radius_proxy * main.correct).mean())
    assert sens.equals(study.step_sensitivity(works, {"digits": top}, PROFILE, chosen_all, selection,
                                              tmp_path / "results", workers=1))   # read back from the logs
    per_input = study.mean_time_per_input(run.timings)
    assert list(per_input.columns) == ["Fixed σ", "Isotropic DD", "ANCER"] and list(per_input.index) == ["digits"]
    table = study.profile_table(PROFILE, works)
    assert table.loc["digits", "test inputs"] == 10 and table.loc["digits", "data"].endswith("(8×8 = 64 pixels)")
    assert table.loc["digits", "model"] == "MLP 8" and table.loc["digits", "N"] == "200"
    acc = study.validation_accuracy(work)
    assert len(acc) == 2 and acc[["clean", "noisy"]].stack().between(0, 1).all()

    for norm in ("l2", "l1"):
        best = study.best_table(res, SETUP, norm)
        assert list(best.index) == ["Fixed σ", "Isotropic DD", "ANCER"]
        radii = study.PAPER_RADII["CIFAR-10"][norm]
        assert [c for c in best.columns if c not in ("acr", "acr_proxy")] == [f"{r:g}" for r in radii]
        effects = study.claim_effects(res, norm, "toy")
        assert list(effects) == list(study.CLAIMS)
        margin = study.proxy_margin(best)
        assert effects["C3"].estimate == pytest.approx(margin)
        assert effects["C2"].estimate == pytest.approx(best.loc["ANCER", "acr"] - best.loc["Isotropic DD", "acr"])
        paper = study.paper_rows(norm, "CIFAR-10")
        assert list(paper.index) == ["Fixed sigma", "Isotropic DD", "ANCER"] and "acr_proxy" in paper.columns


def fake_results(sigmas=(0.25, 0.5), n=20, seed=0):
    """Per-input rows in the layout of `certify_setup` (both norms, every method), random radii."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    frames = []
    for norm in ("l2", "l1"):
        for sigma in sigmas:
            correct = rng.random(n) < 0.8
            for method in METHODS:
                radius = rng.exponential(sigma, n) * correct
                frames.append(pd.DataFrame(dict(idx=np.arange(n), norm=norm, sigma=sigma, method=method, radius=radius,
                                                radius_proxy=radius * (1.5 if method == "ancer" else 1.0),
                                                correct=correct, time=rng.random(n),
                                                status="kept" if method != "fixed" else "no_memory")))
    return pd.concat(frames, ignore_index=True)


def test_confidence_cap_is_clopper_pearson_with_every_vote():
    from scipy.stats import norm

    for n, alpha in ((10_000, 0.001), (100_000, 0.001), (500, 0.05)):
        p, gap = study.confidence_cap(n, alpha)
        assert p == pytest.approx(alpha ** (1 / n), rel=1e-12)  # Beta(n, 1) has cdf p^n
        assert gap == pytest.approx(norm.ppf(alpha ** (1 / n)))
    assert study.confidence_cap(10_000, 0.001)[1] < study.confidence_cap(100_000, 0.001)[1]


def test_accuracy_curves_brute_force_and_best_over_sigma():
    res = fake_results()
    grid = np.linspace(0, 2, 41)
    per = {s: study.accuracy_curves(res, "l2", "proxy", grid, sigma=s) for s in (0.25, 0.5)}
    for s, curves in per.items():
        assert list(curves) == list(METHODS)
        for method, curve in curves.items():
            g = res[(res.norm == "l2") & (res.sigma == s) & (res.method == method)]
            brute = [100 * np.mean([(r >= t) and c for r, c in zip(g.radius_proxy, g.correct)]) for t in grid]
            assert np.allclose(curve, brute)
    best = study.accuracy_curves(res, "l2", "proxy", grid)
    for method in METHODS:
        assert np.allclose(best[method], np.maximum(per[0.25][method], per[0.5][method]))
    with pytest.raises(ValueError, match="certificate must be one of"):
        study.accuracy_curves(res, "l2", "volume", grid)
    with pytest.raises(ValueError, match="norm must be one of"):
        study.accuracy_curves(res, "linf", "radius", grid)
    with pytest.raises(ValueError, match="no results for"):
        study.accuracy_curves(res, "l2", "radius", grid, sigma=3.0)
    top = res[res.norm == "l1"].radius_proxy.max()
    assert study.radius_grid(res[res.norm == "l1"], "proxy")[-1] == pytest.approx(1.05 * top + 1e-9)


def test_coinciding_pairs_by_mean_gap():
    a = np.array([90.0, 50.0, 0.0, 0.0])
    spike = a + np.array([0.0, 8.0, 0.0, 0.0])  # differs at one radius only: mean gap 4 where either is above 0
    curves = {"fixed": a, "isotropic": a + 0.5, "ancer": spike}
    assert study.coinciding(curves, tol=0.0) == []
    assert study.coinciding(curves, tol=0.5) == [("fixed", "isotropic")]
    assert study.coinciding(curves, tol=2.25) == [("fixed", "isotropic"), ("isotropic", "ancer")]
    assert len(study.coinciding(curves, tol=4.0)) == 3
    assert study.coinciding({"fixed": a, "ancer": a}, tol=0.0) == [("fixed", "ancer")]
    assert study.coinciding({"fixed": np.zeros(3), "ancer": np.zeros(3)}, tol=0.0) == [("fixed", "ancer")]
    # a long grid of zeros (another curve's tail) does not dilute a gap of 10 points between two short curves
    short = np.r_[[80.0, 40.0], np.zeros(98)]
    assert study.coinciding({"fixed": short, "isotropic": short + np.r_[[10.0, 10.0], np.zeros(98)]}, tol=1.0) == []
    with pytest.raises(ValueError, match="tol must be >= 0"):
        study.coinciding(curves, tol=-1)


def test_chosen_steps_position_widening_and_margin():
    import pandas as pd

    rows = [("isotropic", 0.001, 0.50, False, False), ("isotropic", 0.01, 0.52, False, True),
            ("isotropic", 0.1, 0.40, False, False),
            ("ancer", 0.01, 1.0, False, False), ("ancer", 0.1, 1.2, False, False), ("ancer", 1.0, 1.25, True, True)]
    sel = pd.DataFrame(rows, columns=["method", "lr_relative", "objective", "widened", "chosen"]).assign(
        column="digits", norm="l2")
    steps = study.chosen_steps(sel).set_index("method")
    assert steps.loc["Isotropic DD", "position"] == "inside" and steps.loc["ANCER", "position"] == "largest tried"
    assert steps.loc["Isotropic DD", "margin"] == pytest.approx(0.02)
    assert steps.loc["ANCER", "margin"] == pytest.approx(0.05) and steps.loc["ANCER", "widened"] == 1
    assert steps.loc["ANCER", "tried"] == [0.01, 0.1, 1.0] and (steps.ineligible == 0).all()
    # an ineligible value (it lost validation accuracy, `selection.ACCURACY_SLACK`) does not count for the margin
    ranked = sel.assign(eligible=True)
    ranked.loc[5, "chosen"], ranked.loc[4, "chosen"], ranked.loc[5, "eligible"] = False, True, False
    steps = study.chosen_steps(ranked).set_index("method")
    assert steps.loc["ANCER", "position"] == "inside" and steps.loc["ANCER", "ineligible"] == 1
    assert steps.loc["ANCER", "margin"] == pytest.approx(0.2)
    # at an edge because every step of a higher objective was refused: the rule bounds the choice
    bounded = ranked.assign(eligible=ranked.lr_relative.isin([0.001, 0.01, 0.1]) | (ranked.method == "isotropic"),
                            chosen=ranked.chosen & (ranked.method == "isotropic") | (ranked.index == 3))
    bounded.loc[4, "eligible"] = False
    steps = study.chosen_steps(bounded).set_index("method")
    assert steps.loc["ANCER", "position"] == "best eligible" and steps.loc["ANCER", "ineligible"] == 2
    sel.loc[0, "chosen"] = True
    with pytest.raises(ValueError, match="exactly one chosen row"):
        study.chosen_steps(sel)
    with pytest.raises(ValueError, match="selection lacks the columns"):
        study.chosen_steps(sel.drop(columns="objective"))


def test_chosen_steps_are_reused_as_multiples_of_theta():
    from ancer_lite.methods.registry import OptimSettings
    from ancer_lite.runs.profiles import MNIST
    from ancer_lite.runs.setups import theta_of

    chosen = OptimSettings().changed("isotropic", lr=0.1 * theta_of("l1", 0.5)).changed("ancer", lr=3.90625 * theta_of("l1", 0.5))
    assert study.settings_at(chosen, MNIST, "l1", 0.5) is chosen          # the selection σ
    for sigma in (0.25, 1.0):
        at = study.settings_at(chosen, MNIST, "l1", sigma)
        assert at.of("ancer").lr / theta_of("l1", sigma) == pytest.approx(3.90625)
        assert at.of("isotropic").lr / theta_of("l1", sigma) == pytest.approx(0.1)
        assert (at.of("ancer").kappa, at.of("ancer").iterations) == (chosen.of("ancer").kappa, chosen.of("ancer").iterations)
    two = dataclasses.replace(SETUP, sigmas_l2=(0.25, 0.5), sigmas_l1=())
    at = study.settings_at(OptimSettings().changed("ancer", lr=0.025), two, "l2", 0.5)  # selection at 0.25: twice the step at 0.5
    assert at.of("ancer").lr == pytest.approx(0.05)


def test_runs_at_another_sigma_take_the_steps_as_multiples_of_its_theta(tmp_path):
    import json

    two = dataclasses.replace(SETUP, sigmas_l2=(0.25, 0.5), sigmas_l1=(), num_test=4)
    work = prepare(two, seed=0, data_dir=tmp_path, cache="t")
    chosen = study.base_settings(two).changed("isotropic", lr=0.01 * 0.25).changed("ancer", lr=0.04 * 0.25)
    res, _, _ = study.certify_sigma(work, two, PROFILE, chosen, tmp_path / "results", "l2", 0.5)
    for method in ("isotropic", "ancer"):
        run = tmp_path / "results" / res[res.method == method].run.iloc[0]
        recorded = json.loads((run / "run.json").read_text())["settings"]
        assert recorded["isotropic"]["lr"] == pytest.approx(0.01 * 0.5)
        # a run records (and is keyed by) its own settings and its start's only
        assert set(recorded) == {"chunk", "isotropic"} | ({"ancer"} if method == "ancer" else set())
        if method == "ancer":
            assert recorded["ancer"]["lr"] == pytest.approx(0.04 * 0.5)
        assert run == study.run_folder(work, two, PROFILE, study.settings_at(chosen, two, "l2", 0.5),
                                       tmp_path / "results", "l2", 0.5, method)


def test_sensitivity_steps_bound_the_choice():
    rows = [("isotropic", 0.01, 0.925, True)] + [("ancer", v, a, c) for v, a, c in (
        (0.01, 0.925, False), (0.04, 0.925, False), (0.1, 0.925, False), (0.25, 0.925, False), (0.625, 0.9, True),
        (1.5625, 0.925, False), (3.90625, 0.85, False), (9.765625, 0.5, False))]
    table = pd.DataFrame(rows, columns=["method", "lr_relative", "accuracy", "chosen"]).assign(column="c", norm="l2")
    setup = dataclasses.replace(SETUP, name="c", ancer_lr_grid=(0.01, 0.04, 0.1))
    # 1.5625 θ kept the accuracy at the selection σ (it was refused at another σ): the first refused there is 3.9 θ
    assert study.sensitivity_steps(table, setup, "l2") == {"grid's largest": 0.1, "chosen": 0.625, "refused": 3.90625}
    inside = table.assign(chosen=(table.method == "isotropic") | (table.lr_relative == 9.765625), accuracy=0.925)
    assert study.sensitivity_steps(inside, setup, "l2") == {"grid's largest": 0.1, "chosen": 9.765625}
    inside = table.assign(chosen=(table.method == "isotropic") | (table.lr_relative == 0.1), accuracy=0.925)
    assert study.sensitivity_steps(inside, setup, "l2") == {"chosen": 0.1}
    with pytest.raises(ValueError, match="no ANCER rows"):
        study.sensitivity_steps(table, setup, "l1")


def test_paper_range_against_the_tables_and_the_text():
    from ancer_lite.runs.paper import load_table

    for norm, table in (("l2", "ancer_table1"), ("l1", "ancer_table2")):
        p = load_table(table)
        p = p[p.metric == "acr_proxy"]
        gains = {}
        for (dataset, model), g in p.groupby(["dataset", "model"]):
            v = g.set_index("method").value
            gains[dataset, model] = v["ANCER"] / v["Isotropic DD"] - 1
        lo, hi, at_lo, at_hi = study.paper_range(norm)
        assert lo == pytest.approx(min(gains.values())) and gains[at_lo] == pytest.approx(lo)
        assert hi == pytest.approx(max(gains.values())) and gains[at_hi] == pytest.approx(hi)
    lo, hi, _, _ = study.paper_range("l2")
    text_lo, text_hi = study.PAPER_TEXT_PROXY_GAIN["l2"]
    assert round(100 * lo) == round(100 * text_lo) and round(100 * hi) < round(100 * text_hi)


def test_tables_decisions_and_claims_helpers():
    res = fake_results()
    t = study.per_sigma_table(res, SETUP, "l2", names=True)
    assert t.index.names == ["method", "sigma"] and set(t.index.get_level_values(0)) == set(study.METHOD_NAMES.values())
    d = study.memory_decisions(res)
    assert set(d.index.get_level_values("method")) == {"Isotropic DD", "ANCER"}
    assert d.to_numpy().sum() == len(res[res.method != "fixed"])
    with pytest.raises(ValueError, match="norm must be one of"):
        study.per_sigma_table(res, SETUP, "l3")


def test_worker_processes_compute_what_the_loop_computes(tmp_path):
    """choose_all / certify_columns from empty result folders in two worker processes give exactly the
    selection tables, chosen settings and certificates of the caller's own loop (every job runs with
    JOB_THREADS torch threads wherever it runs; the time column is a measurement and may differ)."""
    other = dataclasses.replace(SETUP, name="digits_b", sigmas_l1=(), num_test=12)
    works = {s.name: prepare(s, seed=0, data_dir=tmp_path, cache="t") for s in (SETUP, other)}
    setups = {"digits": SETUP, "digits_b": other}
    out = {}
    for workers in (1, 2):
        root = tmp_path / f"results-{workers}"
        chosen, selection = study.choose_all(works, setups, PROFILE, root, workers=workers)
        run = study.certify_columns(works, setups, PROFILE, chosen, root, workers=workers)
        assert run.reused == 0 and run.total == 6 * 10 + 3 * 12
        out[workers] = chosen, selection, run
    (c1, s1, r1), (c2, s2, r2) = out[1], out[2]
    assert c1 == c2 and s1.equals(s2)
    for name in setups:
        a, b = r1.results[name].drop(columns="time"), r2.results[name].drop(columns="time")
        assert list(a.columns) == list(b.columns) and a.equals(b)
    assert list(r1.timings[["column", "norm", "sigma", "method"]].itertuples(index=False)) == \
        list(r2.timings[["column", "norm", "sigma", "method"]].itertuples(index=False))


def test_table2_feasibility_rules_out_the_scripts_reading():
    """ANCER Table 2's Fixed σ rows: a uniform certificate's ℓ1 radius λ (2 p_A − 1) < λ, so with σ ≤ 1 the
    scripts' λ = σ/√3 ≤ 0.577 cannot certify CIFAR-10's 46% at radius 1.0 nor ImageNet's 63% at 0.75; λ = √3 σ can."""
    t = study.table2_feasibility().set_index(["dataset", "convention"])
    assert t.loc[("CIFAR-10", "std"), "possible"] and t.loc[("ImageNet", "std"), "possible"]
    assert not t.loc[("CIFAR-10", "ancer_scripts"), "possible"] and not t.loc[("ImageNet", "ancer_scripts"), "possible"]
    assert t.loc[("CIFAR-10", "ancer_scripts"), "lambda_max"] == pytest.approx(3 ** -0.5)
    assert t.loc[("CIFAR-10", "std"), "largest_radius"] == 1.0 and t.loc[("ImageNet", "std"), "largest_radius"] == 0.75
    # on a grid 3x wider the scripts' reading would be possible (λ_max = 3/√3 = 1.73)
    assert study.table2_feasibility((0.75, 1.5, 3.0)).set_index("convention").possible.all()


def test_matched_lambda_keeps_the_sigmas_of_each_reading():
    """Our σ (λ = √3 σ) inside each convention's λ range of the paper's grid: all of (0.25, 0.5, 1) under "std",
    only 0.25 (λ = 0.433 ≤ 0.577) under the scripts' λ = σ/√3; the table is best_table on those σ."""
    setup = dataclasses.replace(SETUP, sigmas_l1=(0.25, 0.5, 1.0))
    rng = np.random.default_rng(0)
    rows = [dict(method=m, sigma=s, norm="l1", idx=i, radius=float(rng.uniform(0, s)), radius_proxy=float(rng.uniform(0, 2 * s)),
                 correct=bool(rng.uniform() < 0.9)) for m in METHODS for s in (0.25, 0.5, 1.0) for i in range(30)]
    res = pd.DataFrame(rows)
    t = study.matched_lambda(res, setup)
    assert set(t.loc["std"].sigmas) == {"0.25, 0.5, 1"} and set(t.loc["ancer_scripts"].sigmas) == {"0.25"}
    want = study.best_table(res[res.sigma == 0.25], dataclasses.replace(setup, sigmas_l1=(0.25,)), "l1")
    assert np.allclose(t.loc["ancer_scripts"].drop(columns="sigmas").to_numpy(float), want.to_numpy(float))
    none = study.matched_lambda(res[res.sigma > 0.4], dataclasses.replace(setup, sigmas_l1=(0.5, 1.0)))
    assert list(none.loc["ancer_scripts"].sigmas) == ["none"]


def test_seed_study_reuses_seed_0_and_retrains_the_others(tmp_path):
    """Seed 0's rows are notebook 03's own effects (its logs reused, not recomputed); another seed trains other
    models (another fingerprint) on another test draw and is certified on its own; the cost counts only the others."""
    setup = dataclasses.replace(SETUP, sigmas_l1=())
    work = prepare(setup, seed=0, data_dir=tmp_path, cache="t")
    chosen, _ = study.choose_step_sizes(work, setup, PROFILE, tmp_path / "results")
    run = study.certify_columns({"digits": work}, {"digits": setup}, PROFILE, {"digits": chosen}, tmp_path / "results")
    main = study.claim_effects(run.results["digits"], "l2", "digits", 0)
    rows, seconds = study.seed_study(setup, PROFILE, chosen, tmp_path / "results", seeds=(0, 1), data_dir=tmp_path)
    assert list(rows.seed.unique()) == [0, 1] and set(rows.norm) == {"l2"} and len(rows) == 2 * len(study.CLAIMS)
    assert {r.claim: r.effect for r in rows[rows.seed == 0].itertuples()} == main
    assert seconds > 0
    other = prepare(setup, seed=1, data_dir=tmp_path, cache="t")
    assert model_fingerprint(other.models["l2", 0.25]) != model_fingerprint(work.models["l2", 0.25])
    logs = {p: p.stat().st_mtime_ns for p in (tmp_path / "results").rglob("final.tsv")}
    assert len(logs) == 2 * len(METHODS)  # one run per (seed, method) at the one σ
    again, _ = study.seed_study(setup, PROFILE, chosen, tmp_path / "results", seeds=(0, 1), data_dir=tmp_path)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "results").rglob("final.tsv")} == logs  # reused, not rewritten
    assert [r.effect for r in again.itertuples()] == [r.effect for r in rows.itertuples()]


def test_matched_sigmas_names_the_convention():
    assert study.matched_sigmas(dataclasses.replace(SETUP, sigmas_l1=(0.25, 0.5, 1.0)), "ancer_scripts") == (0.25,)
    with pytest.raises(ValueError, match="convention"):
        study.matched_sigmas(SETUP, "rs4a")
