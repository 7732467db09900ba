"""The claims table (`report.claims`): rows, files, the claims page's block kept equal to the
recorded claims, and bad input named."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ancer_lite.evaluation.intervals import Effect, paired_effect
from ancer_lite.models.data import REPO_ROOT
from ancer_lite.report import claims


def _effect(shift: float) -> Effect:
    b = np.linspace(0.0, 1.0, 50)
    return paired_effect(b + shift, b)


def test_rows_round_trip_through_the_files(tmp_path, monkeypatch):
    monkeypatch.setenv("ANCER_FIGURES_DIR", str(tmp_path))
    rows = [claims.claim_row("C2", "MNIST, ℓ2", "ANCER's ℓp ACR >= Isotropic DD's", _effect(0.1), "+0.332",
                             "03_image_certification"),
            claims.claim_row("C3", "MNIST, ℓ2", "ANCER's ACR~ > Isotropic DD's", _effect(-0.1), "",
                             "03_image_certification")]
    claims.record_claims(rows, "03_image_certification")
    assert claims.claims_path("03_image_certification").exists()
    table = claims.read_claims(tmp_path)
    assert list(table.verdict) == ["holds", "fails"] and list(table.columns) == claims.COLUMNS
    assert table.estimate.iloc[0] == pytest.approx(0.1, abs=1e-6)
    md = claims.claims_markdown(table)
    assert "| C2 | MNIST, ℓ2 |" in md and "**holds**" in md and "(notebooks/executed/03_image_certification.ipynb)" in md
    assert "| — |" in md  # no paper number
    page = tmp_path / "claims.md"
    page.write_text(f"intro\n{claims.CLAIMS_BEGIN}\nSTALE\n{claims.CLAIMS_END}\nrest\n", encoding="utf-8")
    assert claims.update_claims_block(page, table) and not claims.update_claims_block(page, table)
    text = page.read_text(encoding="utf-8")
    assert "(../notebooks/executed/03_image_certification.ipynb)" in text
    assert "STALE" not in text and text.startswith("intro\n") and text.endswith(f"{claims.CLAIMS_END}\nrest\n")


def test_claims_page_table_equals_the_recorded_claims():
    """The claims page's block is `pipeline index`'s rendering of figures/claims/*.tsv, as committed, and its links
    reach the executed notebooks from the page's folder."""
    page = REPO_ROOT / claims.CLAIMS_PAGE
    text = page.read_text(encoding="utf-8")
    begin, end = text.index(claims.CLAIMS_BEGIN) + len(claims.CLAIMS_BEGIN), text.index(claims.CLAIMS_END)
    table = claims.read_claims(REPO_ROOT / "figures")
    assert text[begin:end].strip() == claims.claims_markdown(table, claims.PAGE_NOTEBOOKS).strip()
    assert (page.parent / claims.PAGE_NOTEBOOKS).resolve() == REPO_ROOT / "notebooks" / "executed"


def test_readme_summary_counts_the_recorded_verdicts(tmp_path):
    """The README's claims summary is `pipeline index`'s rendering of figures/claims/*.tsv, as committed; each claim's
    counts add up to its settings, and the summary links the claims page."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    begin, end = text.index(claims.SUMMARY_BEGIN) + len(claims.SUMMARY_BEGIN), text.index(claims.SUMMARY_END)
    table = claims.read_claims(REPO_ROOT / "figures")
    assert text[begin:end].strip() == claims.claims_summary_markdown(table).strip()
    assert f"]({claims.CLAIMS_PAGE})" in text[begin:end] and (REPO_ROOT / claims.CLAIMS_PAGE).is_file()
    rows = [r for r in text[begin:end].splitlines() if r.startswith("| C")]
    assert len(rows) == table.claim.nunique()
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split("|")]
        assert int(cells[1]) == int(cells[2]) + int(cells[3]) + int(cells[4]) == int((table.claim == cells[0]).sum())
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="claims-summary:begin"):
        claims.update_claims_summary(readme, table)


def test_every_recorded_claim_names_an_executed_notebook():
    table = claims.read_claims(REPO_ROOT / "figures")
    for nb in set(table.notebook):
        assert (REPO_ROOT / "notebooks" / "executed" / f"{nb}.ipynb").exists()


@pytest.mark.parametrize("kw, match", [
    (dict(claim=""), "claim"), (dict(setting="a\tb"), "setting"), (dict(effect=0.3), "effect"),
    (dict(paper="x\ny"), "paper"), (dict(notebook="notebook three"), "notebook"),
])
def test_bad_rows_are_named(kw, match):
    good = dict(claim="C2", setting="s", statement="t", effect=_effect(0.1), paper="", notebook="03_x")
    with pytest.raises((ValueError, TypeError), match=match):
        claims.claim_row(**{**good, **kw})


def test_bad_files_and_readmes_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("ANCER_FIGURES_DIR", str(tmp_path))
    row = claims.claim_row("C2", "s", "t", _effect(0.1), "", "03_x")
    with pytest.raises(ValueError, match="notebook '04_y'"):
        claims.record_claims([row], "04_y")
    with pytest.raises(ValueError, match="repeat"):
        claims.record_claims([row, row], "03_x")
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "05_z.tsv").write_text("a\tb\n1\t2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a claims file"):
        claims.read_claims(tmp_path)
    readme = Path(tmp_path / "R.md")
    readme.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="must hold the lines"):
        claims.update_claims_block(readme, claims.read_claims(tmp_path / "none"))
