"""The run layer written once: per-input streams (`core.streams`), ACR through
`metrics.average_certified_radius`, UCAN's κ / γ through `selection.widening_search`, the one cache helper
(`runs.cache.cached`), RANCER's explicit rotation cache and UCAN run folders that verify their inputs on reuse.
Each refactoring is checked against the code it replaced, on random inputs, bit for bit."""
import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

import ancer_lite
from ancer_lite.core import files
from ancer_lite.core.streams import PURPOSES, SELECT, certify_streams, stream, stream_seed
from ancer_lite.evaluation.metrics import average_certified_radius
from ancer_lite.methods.ucan import FixedNPG
from ancer_lite.models.data import Split
from ancer_lite.models.small import MLP
from ancer_lite.runs import manifest
from ancer_lite.runs.cache import cached, read_table, write_table
from ancer_lite.runs.selection import widening_search
from ancer_lite.studies import rancer_study, ucan_study
from ancer_lite.studies.ucan_study import Study, Variant, certify_variant

PACKAGE = Path(ancer_lite.__file__).parent


# -- per-input streams ------------------------------------------------------------------------------------------
def test_stream_seed_is_the_seed_sequence_hash():
    """stream(seed, key, purpose) is seeded by NumPy's SeedSequence hash of (seed, key, purpose code), computed here
    independently; NumPy integers (dataset indices) give the stream of the same Python integers."""
    rng = np.random.default_rng(0)
    pairs = [(0, 0), (0, 7), (3, 0), (2 ** 32 - 1, 1_000_002), (2 ** 70, 5)] + \
        [(int(s), int(k)) for s, k in zip(rng.integers(0, 2 ** 31, 20), rng.integers(0, 10 ** 6, 20))]
    for seed, key in pairs:
        for purpose, code in PURPOSES.items():
            words = np.random.SeedSequence([seed, key, code]).generate_state(2, np.uint32)
            expected = int(words[0]) + 2 ** 32 * int(words[1])
            assert stream_seed(seed, key, purpose) == expected
            ref = torch.Generator().manual_seed(expected)
            assert torch.equal(stream(seed, key, purpose).get_state(), ref.get_state())
    assert stream_seed(np.int64(4), np.int64(11), SELECT) == stream_seed(4, 11, SELECT)


def test_streams_of_other_purposes_keys_and_seeds_differ():
    """No two (seed, key, purpose) of a grid share a stream seed; in particular an input's estimation stream is not the
    stream that optimized its θ or chose its class (with one stream per input, input 0 of seed 0 would be
    certified with exactly the noise its θ was fitted to)."""
    seeds = {stream_seed(s, k, p) for s in range(4) for k in range(300) for p in PURPOSES}
    assert len(seeds) == 4 * 300 * len(PURPOSES)
    select, estimate = certify_streams(0, 0)
    assert not torch.equal(torch.randn(8, generator=select), torch.randn(8, generator=estimate))


@pytest.mark.parametrize("seed, key, purpose, named", [(-1, 0, SELECT, "seed"), (0, -2, SELECT, "key"),
                                                       (0.5, 0, SELECT, "seed"), (0, 1.0, SELECT, "key"),
                                                       (True, 0, SELECT, "seed"), (0, 0, "certify", "purpose")])
def test_input_streams_refuse_bad_arguments(seed, key, purpose, named):
    with pytest.raises(ValueError, match=named):
        stream(seed, key, purpose)


def test_the_per_input_formula_is_written_once():
    """No module but core/streams.py seeds a per-input stream (the run layer, RANCER, the 2D study and UCAN take
    their generators from there)."""
    spelled = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
               if re.search(r"SeedSequence|1_?000_?003", p.read_text(encoding="utf-8"))]
    assert spelled == ["core/streams.py"]


# -- ACR ----------------------------------------------------------------------------------------------------------
def _logged(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """A per-input table as a log reads back: float radii (0 where wrong), int 0/1 correct, two λ."""
    correct = rng.random(n) < rng.uniform(0.2, 1.0)
    radius = rng.exponential(rng.uniform(0.05, 3.0), n) * (correct | (rng.random(n) < 0.5))
    df = pd.DataFrame(dict(radius=radius, radius_proxy=radius * rng.uniform(1, 3, n), correct=correct.astype(int),
                           lam=rng.choice([0.25, 0.5], n)))
    return pd.read_csv(io.StringIO(df.to_csv(sep="\t", index=False)), sep="\t")


def test_acr_is_the_inline_mean_it_replaced_bit_for_bit():
    """The expressions replaced in runs/selection, studies/ucan_study and studies/ucan_tables, on random logs of
    1 to 3,000 rows (NumPy's pairwise sum in both: float64 radius times 0/1, then mean)."""
    rng = np.random.default_rng(1)
    for _ in range(300):
        df = _logged(rng, int(rng.integers(1, 3000)))
        for col in ("radius", "radius_proxy"):
            assert float((df[col] * df.correct).mean()) == average_certified_radius(df[col], df.correct)
            for _, g in df.groupby("lam"):
                assert float((g[col] * g.correct).mean()) == average_certified_radius(g[col], g.correct)
        r, c = df.radius.to_numpy(), df.correct.to_numpy().astype(bool)  # select_rancer's arrays
        assert float((np.array(list(r)) * c).mean()) == average_certified_radius(np.array(list(r)), c)


def test_no_inline_acr_above_the_evaluation_layer():
    """ACR is computed through `average_certified_radius` in runs/ and studies/ (it checks its inputs). The one
    exception, `ucan_tables.universality_table`, takes a groupby mean (pandas' compensated sum), which differs
    from NumPy's in the last bits, so it is kept to keep notebook 07's numbers."""
    pattern = re.compile(r"\*\s*[\w.\[\]\"']*correct\)\.mean\(\)")
    found = [(p.name, m.group()) for layer in ("runs", "studies") for p in (PACKAGE / layer).glob("*.py")
             for m in pattern.finditer(p.read_text(encoding="utf-8"))]
    assert found == []


# -- UCAN's selection through the one routine -----------------------------------------------------------------------
GRIDS = dict(kappas=(0.01, 0.1, 1.0), gammas=(1.0, 2.0, 5.0))


def _fake_study(monkeypatch, scores, grids=GRIDS):
    """A Study whose certification returns a table per variant with ACR~ `scores[kind, value]` (values not in
    `scores` get 0): `select` runs on it without models."""
    st = Study.__new__(Study)
    st.setup, st.seed = SimpleNamespace(selection_lam=0.25, lams=(0.25,), num_val=4, val_n=100, **grids), 0
    val = Split(torch.zeros(4, 1), torch.zeros(4, dtype=torch.long), np.arange(4))
    st.column = SimpleNamespace(work=SimpleNamespace(val=val))
    st.profile, st.d = SimpleNamespace(device="cpu"), 1
    calls = []

    def frame(variant):
        a = scores.get((variant.kind, variant.param), 0.0)
        return pd.DataFrame(dict(radius=[a / 2, 0.0, a, 0.0], radius_proxy=[a, a, a, a], correct=[1, 1, 1, 1],
                                 log_gm_theta=[0.0] * 4))

    def certify_all(self, variants, x, y, idx, n, split, workers=None):
        return [frame(v) for v in variants]

    def job(study, variant):  # `select`'s jobs; `calls` records the values beyond the grids
        if variant.param not in grids["kappas" if variant.kind == "pattern" else "gammas"]:
            calls.append(variant)
        return frame(variant)

    monkeypatch.setattr(Study, "_certify_all", certify_all)
    monkeypatch.setattr(ucan_study, "_select_job", job)
    return st, calls


def _old_select(st) -> tuple[pd.DataFrame, dict]:
    """`Study.select` before it used `widening_search` (the committed code), on the fake study."""
    grid = [(kind, value) for kind, values in (("pattern", st.setup.kappas), ("universal", st.setup.gammas),
                                                ("input", st.setup.gammas)) for value in values]
    variants = [Variant(kind, st.setup.selection_lam, value) for kind, value in grid]
    frames = st._certify_all(variants, None, None, None, 0, "val")
    rows = []
    for variant, df in zip(variants, frames):
        rows.append(dict(kind=variant.kind, param="kappa" if variant.kind == "pattern" else "gamma",
                         value=variant.param, accuracy=100 * df.correct.mean(),
                         acr=float((df.radius * df.correct).mean()),
                         acr_alm=float((df.radius_proxy * df.correct).mean()),
                         gm_sigma=float(np.exp(df.log_gm_theta.mean())) / variant.lam))
    table = pd.DataFrame(rows)
    best = table.loc[table.groupby("kind", sort=False).acr_alm.idxmax()]
    chosen = dict(zip(best.kind, best.value))
    table["chosen"] = table.index.isin(best.index)
    return table, chosen


@pytest.mark.parametrize("trial", range(12))
def test_ucan_selection_is_the_old_one(monkeypatch, trial):
    """Random ACR~ (ties included: values drawn from a few levels), grids in any order and with repeats: without
    widening, the table and the choice are those of the routine without `widening_search`, and nothing beyond the grids is
    certified."""
    rng = np.random.default_rng(trial)
    grids = GRIDS if trial < 4 else dict(kappas=tuple(rng.permutation([0.01, 0.1, 1.0, 0.1])),
                                         gammas=tuple(rng.permutation([1.0, 2.0, 5.0, 3.0])))
    scores = {(kind, v): float(rng.choice([0.3, 0.5, 0.7])) for kind, key in
              (("pattern", "kappas"), ("universal", "gammas"), ("input", "gammas")) for v in grids[key]}
    st, calls = _fake_study(monkeypatch, scores, grids)
    table = st.select(widen=0, workers=1)
    old_table, old_chosen = _old_select(st)
    # one λ: nothing is reused elsewhere, so every value is eligible and none was checked there
    assert table.eligible.all() and table.elsewhere.isna().all()
    pd.testing.assert_frame_equal(table.drop(columns=["elsewhere", "eligible"]), old_table, check_exact=True)
    assert st.chosen == old_chosen and list(st.chosen) == ["pattern", "universal", "input"]
    assert calls == []


def test_ucan_selection_at_an_edge_is_widened_until_inside(monkeypatch):
    """Notebook 07's case: γ = 5, the largest γ of the grid, has the best ACR~ (universal and input-dependent, on both
    quick columns). Without widening the choice stays γ = 5, at the edge; with the default UCAN_WIDEN = 2 the grid
    continues geometrically (12.5 = 5² / 2, then 31.25 = 12.5² / 5) while the best value sits at the edge, here until
    12.5 is inside what was tried (`Study.edges`)."""
    assert ucan_study.UCAN_WIDEN == 2
    scores = {("pattern", 0.1): 0.5, ("universal", 5.0): 0.9, ("input", 5.0): 1.4,
              ("universal", 12.5): 1.0, ("input", 12.5): 2.0}
    st, calls = _fake_study(monkeypatch, scores)
    st.select(widen=0, workers=1)
    assert calls == [] and st.chosen == {"pattern": 0.1, "universal": 5.0, "input": 5.0}
    assert st.edges() == {"pattern": False, "universal": True, "input": True}
    table = st.select(workers=1)
    assert sorted((v.kind, v.param) for v in calls) == [("input", 12.5), ("input", 31.25), ("universal", 12.5),
                                                        ("universal", 31.25)]
    assert st.chosen == {"pattern": 0.1, "universal": 12.5, "input": 12.5}
    assert st.edges() == {"pattern": False, "universal": False, "input": False}
    assert len(table) == 13 and table.chosen.sum() == 3 and list(table.value[-4:]) == [12.5, 31.25, 12.5, 31.25]
    # κ = 0.1 sits inside its grid: widening leaves it (and certifies nothing for it)
    assert not any(v.kind == "pattern" for v in calls)
    with pytest.raises(ValueError, match="widen"):
        st.select(widen=-1, workers=1)


def test_widening_search_with_widen_0_only_evaluates_the_grid():
    seen = []
    rows = widening_search([5.0, 1.0, 2.0], lambda v: seen.append(v) or {"s": v}, lambda r: r["s"], 0)
    assert sorted(seen) == [1.0, 2.0, 5.0] and set(rows) == {1.0, 2.0, 5.0}


# -- the one cache helper ---------------------------------------------------------------------------------------
def test_cached_computes_once_then_reads(tmp_path):
    path = tmp_path / "sub" / "t.tsv"
    table = pd.DataFrame(dict(a=[1, 2], b=[0.5, 1 / 3]))
    computed = []

    def compute():
        computed.append(1)
        return table

    first = cached(path, compute, read_table, write_table)
    assert first is table and computed == [1]
    # the bytes the replaced code wrote: write_atomic(path, table.to_csv(sep="\t", index=False))
    files.write_atomic(tmp_path / "old.tsv", table.to_csv(sep="\t", index=False))
    assert path.read_bytes() == (tmp_path / "old.tsv").read_bytes()
    again = cached(path, compute, read_table, write_table)
    assert computed == [1]
    pd.testing.assert_frame_equal(again, pd.read_csv(tmp_path / "old.tsv", sep="\t"))


def test_cached_binary_and_failures_leave_no_file(tmp_path):
    path = tmp_path / "w.pt"
    state = {"w": torch.arange(3.0)}
    cached(path, lambda: state, lambda p: torch.load(p, weights_only=True), lambda v, fh: torch.save(v, fh), "wb")
    assert torch.equal(torch.load(path, weights_only=True)["w"], state["w"])

    def boom(*args):
        raise RuntimeError("stopped")

    for compute, write in ((boom, write_table), (lambda: pd.DataFrame(dict(a=[1])), boom)):
        with pytest.raises(RuntimeError, match="stopped"):
            cached(tmp_path / "x.tsv", compute, read_table, write)
        assert list(tmp_path.glob("*x.tsv*")) == []


@pytest.mark.parametrize("args, error, named", [
    ((42, lambda: 0, read_table, write_table), TypeError, "path"),
    (("p.tsv", 0, read_table, write_table), TypeError, "compute"),
    (("p.tsv", lambda: 0, None, write_table), TypeError, "read"),
    (("p.tsv", lambda: 0, read_table, "w"), TypeError, "write"),
    (("p.tsv", lambda: 0, read_table, write_table, "a"), ValueError, "mode"),
])
def test_cached_refuses_bad_arguments(args, error, named):
    with pytest.raises(error, match=named):
        cached(*args)


# -- RANCER's rotation cache --------------------------------------------------------------------------------------
def test_rotation_cache_is_explicit(monkeypatch):
    calls = []

    def fake_rotations(model, x):
        calls.append(len(x))
        return np.full((len(x), 2, 2), float(len(calls))), np.zeros((len(x), 2))

    monkeypatch.setattr(rancer_study, "hessian_rotations", fake_rotations)
    torch.manual_seed(0)
    model = MLP((2,), 2, hidden=(3,))
    work = SimpleNamespace(models={("l2", 0.25): model}, test=SimpleNamespace(x=torch.zeros(3, 2)),
                           val=SimpleNamespace(x=torch.zeros(2, 2)))
    col = SimpleNamespace(setup=SimpleNamespace(name="toy", sigmas_l2=(0.25,)), work=work)
    cache: dict = {}
    first = rancer_study.rotations(col, "test", cache)
    assert rancer_study.rotations(col, "test", cache) is first and calls == [3]
    rancer_study.rotations(col, "val", cache)
    assert set(cache) == {rancer_study.rotation_key(col, "test"), rancer_study.rotation_key(col, "val")}
    assert rancer_study.rotation_key(col, "val")[1] == "toy:val:2"
    rancer_study.clear_rotations(cache)
    assert cache == {} and rancer_study.rotations(col, "test", cache)[0][0, 0, 0] == 3.0 and calls == [3, 2, 3]
    # the default cache is the module's, visible and clearable
    rancer_study.rotations(col, "test")
    assert rancer_study.rotation_key(col, "test") in rancer_study.ROTATION_CACHE
    rancer_study.clear_rotations()
    assert rancer_study.ROTATION_CACHE == {}
    with pytest.raises(ValueError, match="split"):
        rancer_study.rotations(col, "train", cache)
    with pytest.raises(TypeError, match="cache"):
        rancer_study.rotations(col, "test", [])


# -- UCAN run folders verify their inputs ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def toy(toy_classifier):
    model, x, y, idx = toy_classifier(4, 10)
    npg = FixedNPG(np.ones((1, 3, 3), dtype=np.float32)).eval()
    return model, npg, x, y, idx


def _ucan(toy, folder, **changes):
    model, npg, x, y, idx = toy
    args = dict(model=model, npg=npg, variant=Variant("isotropic", 0.25), x=x, y=y, idx=idx, n0=10, n=100,
                alpha=0.01, num_classes=3, folder=folder, seed=1)
    return certify_variant(**{**args, **changes})


def test_ucan_folder_records_its_run_and_is_reused(tmp_path, toy):
    first = _ucan(toy, tmp_path)
    held = json.loads((tmp_path / manifest.MANIFEST).read_text())
    assert held["run"] == "ucan" and held["n"] == 100 and held["variant"]["kind"] == "isotropic"
    pd.testing.assert_frame_equal(first, _ucan(toy, tmp_path))


@pytest.mark.parametrize("change, named", [
    (lambda t: dict(x=t[2] + 0.01), "inputs"),
    (lambda t: dict(y=(t[3] + 1) % 3), "labels"),
    (lambda t: dict(idx=t[4] + 10), "indices"),
    (lambda t: dict(n=101), "n"),
    (lambda t: dict(alpha=0.05), "alpha"),
    (lambda t: dict(seed=2), "seed"),
    (lambda t: dict(variant=Variant("isotropic", 0.5)), "variant"),
    (lambda t: dict(npg=FixedNPG(np.full((1, 3, 3), 2.0, dtype=np.float32))), "npg"),
    (lambda t: dict(model=MLP((1, 3, 3), 3, hidden=(8,))), "model"),
])
def test_ucan_folder_refuses_another_run(tmp_path, toy, change, named):
    _ucan(toy, tmp_path)
    before = (tmp_path / "certify.tsv").read_bytes()
    with pytest.raises(ValueError, match=rf"holds another run: it differs in .*\b{named}\b"):
        _ucan(toy, tmp_path, **change(toy))
    assert (tmp_path / "certify.tsv").read_bytes() == before


def test_ucan_folder_without_manifest_is_refused(tmp_path, toy):
    _ucan(toy, tmp_path)
    (tmp_path / manifest.MANIFEST).unlink()
    with pytest.raises(ValueError, match="no run.json"):
        _ucan(toy, tmp_path)
