"""Notebook 07's study (`ancer_lite.studies.ucan_study`) on a tiny column: its jobs compute in worker processes exactly
what its loop computes."""
import dataclasses

import pandas as pd
import pytest

from ancer_lite.runs.profiles import ImageSetup, UcanSetup, get_profile
from ancer_lite.runs.setups import prepare
from ancer_lite.studies import ucan_study
from ancer_lite.studies.image_study import Column

SETUP = ImageSetup("digits", "digits", "CIFAR-10", hidden=(8,), epochs=3, sigmas_l2=(0.25,), sigmas_l1=(),
                   num_test=10, num_val=5, n=200, val_n=100)
UCAN = UcanSetup("digits", lams=(0.25,), epochs=1, kappas=(0.1, 1.0), gammas=(1.0,), growth=2, num_test=6, num_val=5,
                 val_n=100, audit_steps=2, audit_samples=4, audit_n=200, audit_verify=1, universality=True,
                 universality_n=100, universality_epochs=1)
PROFILE = dataclasses.replace(get_profile("quick"), n0=10, batch_size=100, images=(SETUP,), ucan=(UCAN,))


def _run(tmp_path, workers):
    work = prepare(SETUP, seed=0, data_dir=tmp_path / "shared", cache="t")
    column = Column(SETUP, work, {}, pd.DataFrame(), tmp_path / "shared" / "results")
    st = ucan_study.Study(column, UCAN, PROFILE, tmp_path / f"cache-{workers}", tmp_path / f"results-{workers}")
    selection = st.select(workers=workers)
    test = st.certify_test(workers=workers)
    audited = [(st, v) for v in st.runs if v.kind in ("input", "universal")]
    audits = ucan_study.audit_all(audited, workers=workers)
    families = st.universality(workers=workers)
    return selection, test, audits, families


def test_worker_processes_compute_what_the_loop_computes(tmp_path):
    """select / certify_test / audit_all / universality in two worker processes give the loop's selection
    table, certificates, audits and Figure 5 rows (every job trains, certifies and searches with JOB_THREADS torch
    threads wherever it runs; `time` is a measurement)."""
    (s1, t1, a1, f1), (s2, t2, a2, f2) = _run(tmp_path, 1), _run(tmp_path, 2)
    for workers in (1, 2):  # each trained variant is cached, and its resumable training state removed once it is
        cache = tmp_path / f"cache-{workers}" / "ucan"
        assert len(list(cache.glob("*.pt"))) >= 6 and not list(cache.glob("*.work"))
    assert s1.equals(s2) and s1.chosen.sum() == 3
    assert t1.drop(columns="time").equals(t2.drop(columns="time")) and len(t1) == 6 * 6  # 3 patterns, 2 NPGs, the control
    assert f1.drop(columns="time").equals(f2.drop(columns="time"))
    assert len(a1) == len(a2) == 2 and all(len(a) for a in a1)   # each audit searched at least one input
    for x, y in zip(a1, a2):
        assert x.drop(columns="delta").equals(y.drop(columns="delta"))
        assert all(bool((u == v).all()) for u, v in zip(x.delta, y.delta))


def test_audits_need_the_test_certification(tmp_path):
    work = prepare(SETUP, seed=0, data_dir=tmp_path, cache="t")
    st = ucan_study.Study(Column(SETUP, work, {}, pd.DataFrame(), tmp_path / "results"), UCAN, PROFILE,
                          tmp_path / "cache", tmp_path / "results")
    with pytest.raises(ValueError, match="certify_test"):
        ucan_study.audit_all([(st, ucan_study.Variant("input", 0.25, 1.0))])


def _fake_job(accuracy):
    """A stand-in for `ucan_study._select_job` (one variant's training and certification): its rows have ACR~ growing
    with the variant's value and the validation accuracy `accuracy(variant)`; it records the variants asked for."""
    asked = []

    def job(study, v):
        asked.append(v)
        k = round(accuracy(v) * 20)
        return pd.DataFrame(dict(correct=[True] * k + [False] * (20 - k), radius=0.1,
                                 radius_proxy=(v.param or 1.0) * 0.1, log_gm_theta=0.0))
    return job, asked


@pytest.mark.parametrize("failing, chosen_input, checked_input", [
    ({5.0}, 2.0, {5.0: -40.0, 2.0: 0.0}),                    # the best γ drowns the input at a larger λ
    ({5.0, 2.0, 1.0}, 1.0, {5.0: -40.0, 2.0: -40.0, 1.0: -40.0}),  # none passes: the smallest γ tried
    (set(), 5.0, {5.0: 0.0}),                                 # the best passes: nothing else is checked
])
def test_kappa_and_gamma_keep_the_controls_accuracy_at_every_lambda(tmp_path, monkeypatch, failing, chosen_input,
                                                                     checked_input):
    """A value of κ / γ is eligible only where, at every λ it is reused at, its validation accuracy stays within
    ACCURACY_SLACK of the fine-tuned isotropic control's; values are checked from the best ACR~ down."""
    ucan = dataclasses.replace(UCAN, lams=(0.25, 0.5, 1.0), gammas=(1.0, 2.0, 5.0))
    work = prepare(SETUP, seed=0, data_dir=tmp_path, cache="t")
    st = ucan_study.Study(Column(SETUP, work, {}, pd.DataFrame(), tmp_path / "results"), ucan, PROFILE,
                          tmp_path / "cache", tmp_path / "results")

    def accuracy(v):
        drowned = v.kind == "input" and v.lam == 1.0 and v.param in failing
        return 0.5 if drowned else 0.9      # 40 points below the control (0.9) at λ = 1 only
    fake, asked = _fake_job(accuracy)
    monkeypatch.setattr(ucan_study, "_select_job", fake)
    table = st.select(widen=0, workers=1)
    assert st.chosen == {"pattern": 1.0, "universal": 5.0, "input": chosen_input}
    inp = table[table.kind == "input"].set_index("value")
    assert inp.elsewhere.dropna().to_dict() == checked_input
    assert inp.eligible.to_dict() == {g: checked_input.get(g, 0.0) >= -5 for g in (1.0, 2.0, 5.0)}
    # the controls once, and each value checked at the two other λ
    reused = [v for v in asked if v.lam != 0.25]
    assert sum(v.kind == ucan_study.ISOTROPIC_FT for v in reused) == 2
    assert sorted(v.param for v in reused if v.kind == "input") == sorted(2 * list(checked_input))
    assert table.elsewhere[table.kind != "input"].notna().sum() == 2    # κ = 1, γ = 5 (universal) passed first


def test_two_columns_in_one_pool_get_what_each_gets_alone(tmp_path):
    """`select_all` / `certify_tests` over two columns' studies in two worker processes: each study's selection table,
    choice and test rows are those its own `select` / `certify_test` give in this process."""
    other = dataclasses.replace(SETUP, name="digits_b", hidden=(6,))
    ucan = dataclasses.replace(UCAN, lams=(0.25, 0.5), universality=False)

    def studies(tag):
        out = []
        for setup in (SETUP, other):
            work = prepare(setup, seed=0, data_dir=tmp_path / "shared", cache="t")
            column = Column(setup, work, {}, pd.DataFrame(), tmp_path / "shared" / "results")
            out.append(ucan_study.Study(column, dataclasses.replace(ucan, column=setup.name), PROFILE,
                                        tmp_path / f"cache-{tag}", tmp_path / f"results-{tag}"))
        return out

    alone, pooled = studies("alone"), studies("pool")
    tables = [st.select(workers=1) for st in alone]
    rows = [st.certify_test(workers=1) for st in alone]
    assert all(t.equals(u) for t, u in zip(tables, ucan_study.select_all(pooled, workers=2)))
    assert [st.chosen for st in alone] == [st.chosen for st in pooled]
    for r, u in zip(rows, ucan_study.certify_tests(pooled, workers=2)):
        assert r.drop(columns="time").equals(u.drop(columns="time"))
    assert set(alone[0].runs) == set(pooled[0].runs) and len(rows[1]) == len(pooled[1].variants()) * 6
