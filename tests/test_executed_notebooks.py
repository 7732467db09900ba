"""The committed executed notebooks are clean: no absolute path and no progress-bar
frame in any output, every figure a notebook saved (its rows of the figures index) shown as an image
output, and exactly one parameters cell (papermill's injected cell folded into it). The same checks
`ancer_lite.tooling.execute.execute` applies before it writes a notebook, here run on what is committed."""
import json
from pathlib import Path

import pytest

from ancer_lite.tooling.notebook_checks import notebook_figures, output_problems, parameters_problems

REPO = Path(__file__).resolve().parent.parent


def committed() -> list[tuple[Path, Path]]:
    """(executed notebook, figures index) for notebooks/executed (figures/) and, for other profiles,
    notebooks/executed-P (figures/P/)."""
    pairs = [(nb, REPO / "figures" / "index.tsv") for nb in sorted((REPO / "notebooks" / "executed").glob("*.ipynb"))]
    for folder in sorted((REPO / "notebooks").glob("executed-*")):
        profile = folder.name.removeprefix("executed-")
        pairs += [(nb, REPO / "figures" / profile / "index.tsv") for nb in sorted(folder.glob("*.ipynb"))]
    return pairs


def cases() -> list:
    return [pytest.param(nb, index, id=str(nb.relative_to(REPO / "notebooks"))) for nb, index in committed()]


NOTEBOOKS = committed()


def test_there_are_executed_notebooks():
    assert NOTEBOOKS, "no notebooks/executed/*.ipynb: run `make all`"


@pytest.mark.parametrize("path,index", cases())
def test_outputs_are_clean_and_show_every_saved_figure(path, index):
    nb = json.loads(path.read_text(encoding="utf-8"))
    figures = notebook_figures(index, path.stem)
    problems = output_problems(nb, path.stem, figures)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path,index", cases())
def test_exactly_one_parameters_cell(path, index):
    nb = json.loads(path.read_text(encoding="utf-8"))
    problems = parameters_problems(nb, path.stem)
    assert not problems, "\n".join(problems)
