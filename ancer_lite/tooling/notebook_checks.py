"""The clean-output rules of an executed notebook: no absolute path and no progress-bar frame in any
output, every figure the notebook saved (its rows of the figures index) shown as an image output, and
exactly one parameters cell.

    python -m ancer_lite.tooling.pipeline check NOTEBOOK.ipynb [--figures DIR]
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..core.files import REPO_ROOT
from .notebook_clean import INJECTED_TAG, PARAMETERS_TAG, STREAM, as_text, cell_tags

#: text that must not appear in any output: absolute paths (the repository root, temporary and home
#: folders, the pipeline's private build folder) and pathlib reprs
ABSOLUTE_PATH_MARKERS = (str(REPO_ROOT), "/tmp/", "/home/", "/root/", "/work/", "build/notebooks", "PosixPath(")
#: tqdm-like progress bars in stream text: " 45%|████▌     | 45/100 [00:01<00:02, 30.00it/s]"
PROGRESS_BAR = re.compile(r"\d{1,3}%\|[^|\n]*\||\[\d+:\d\d<\d+:\d\d|\d(?:it|s)/(?:s|it)\]")
#: output formats carrying base64-encoded binary data (not searched for text)
BINARY_MIMES = ("image/png", "image/jpeg", "image/gif", "application/pdf")


class UncleanOutputError(ValueError):
    """An executed notebook's outputs break the clean-output rules (see `notebook_problems`)."""


def _output_texts(out: dict) -> Iterator[tuple[str, str]]:
    """(where, text) for each textual part of one output; binary data (PNG ...) is skipped."""
    kind = out.get("output_type")
    if kind == STREAM:
        yield out.get("name", STREAM), as_text(out.get("text", ""))
    elif kind in ("execute_result", "display_data"):
        for mime, value in out.get("data", {}).items():
            if mime not in BINARY_MIMES:
                yield mime, value if isinstance(value, str) else as_text(value) if isinstance(value, list) else json.dumps(value)
    elif kind == "error":
        yield "error", "\n".join([f"{out.get('ename', '')}: {out.get('evalue', '')}", *out.get("traceback", [])])


def _excerpt(text: str, pos: int, width: int = 60) -> str:
    lo, hi = max(0, pos - width), min(len(text), pos + width)
    return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")


def output_problems(nb: dict, notebook: str, figure_names: Sequence[str] = ()) -> list[str]:
    """Every output of an executed notebook that breaks the clean-output rules.

    The rules: no text containing an absolute path (`ABSOLUTE_PATH_MARKERS`) or a progress-bar frame (a
    carriage return or a tqdm-like bar in stream text), and no fewer image/png outputs than the figures
    the notebook saved.

    Parameters
    ----------
    nb : dict
        The executed notebook (nbformat 4 JSON).
    notebook : str
        Its name in the messages.
    figure_names : sequence of str
        The figures it saved (its rows of the figures index).

    Returns
    -------
    list of str
        One message per problem, naming the cell by its index in `nb["cells"]`; empty when clean.
    """
    problems: list[str] = []
    pngs = 0
    for i, cell in enumerate(nb.get("cells", [])):
        for k, out in enumerate(cell.get("outputs", [])):
            pngs += "image/png" in out.get("data", {})
            for where, text in _output_texts(out):
                at = f"{notebook}: cell {i}, output {k} ({where})"
                for marker in ABSOLUTE_PATH_MARKERS:
                    pos = text.find(marker)
                    if pos >= 0:
                        problems.append(f"{at} contains an absolute path ({marker!r}): {_excerpt(text, pos)!r}")
                        break
                if where in ("stdout", "stderr"):
                    bar = PROGRESS_BAR.search(text)
                    frame = text.find("\r")
                    if frame >= 0:
                        problems.append(f"{at} contains a progress-bar frame (a carriage return): "
                                        f"{_excerpt(text, frame)!r}")
                    elif bar:
                        problems.append(f"{at} contains a progress bar: {_excerpt(text, bar.start())!r}")
    if pngs < len(figure_names):
        problems.append(f"{notebook}: saves {len(figure_names)} figure(s) ({', '.join(figure_names)}) but shows only "
                        f"{pngs} image/png output(s); display each saved figure (save_fig shows it inline)")
    return problems


def parameters_problems(nb: dict, notebook: str) -> list[str]:
    """Other than exactly one cell tagged `parameters`, or a leftover "injected-parameters" cell.

    `clean_notebook` folds an injected cell into the parameters cell, so an executed copy has none.

    Parameters
    ----------
    nb, notebook
        As in `output_problems`.

    Returns
    -------
    list of str
        One message per problem; empty when fine.
    """
    cells = nb.get("cells", [])
    problems = []
    n_params = sum(PARAMETERS_TAG in cell_tags(c) for c in cells)
    if n_params != 1:
        problems.append(f"{notebook}: has {n_params} cells tagged {PARAMETERS_TAG!r}; expected exactly one")
    injected = [i for i, c in enumerate(cells) if INJECTED_TAG in cell_tags(c)]
    if injected:
        problems.append(f"{notebook}: cell(s) {injected} tagged {INJECTED_TAG!r} left beside the parameters "
                        "cell (clean_notebook folds them into it)")
    return problems


def notebook_problems(nb: dict, notebook: str, figure_names: Sequence[str] = ()) -> list[str]:
    """`output_problems` and `parameters_problems` of an executed notebook.

    Parameters
    ----------
    nb, notebook, figure_names
        As in `output_problems`.

    Returns
    -------
    list of str
        The output problems, then the parameters problems; empty when clean.
    """
    return output_problems(nb, notebook, figure_names) + parameters_problems(nb, notebook)


def check_notebook(nb: dict, notebook: str, figure_names: Sequence[str] = ()) -> None:
    """Raise UncleanOutputError listing every `notebook_problems` of `nb`.

    Parameters
    ----------
    nb, notebook, figure_names
        As in `output_problems`.

    Returns
    -------
    None
        When the notebook is clean.
    """
    problems = notebook_problems(nb, notebook, figure_names)
    if problems:
        raise UncleanOutputError("\n  ".join([f"{notebook}: {len(problems)} clean-output problem(s):", *problems]))


def notebook_figures(index: str | Path, notebook: str) -> list[str]:
    """Names of the figures that `notebook` saved, from a figures index (figures/index.tsv).

    Parameters
    ----------
    index : str or Path
        The figures index.
    notebook : str
        The notebook's name (its rows' `notebook` column).

    Returns
    -------
    list of str
        The figure names, sorted.
    """
    from ..report.figures import read_index

    df = read_index(Path(index))
    return sorted(df.loc[df["notebook"] == notebook, "name"])
