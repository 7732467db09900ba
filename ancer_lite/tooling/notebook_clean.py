"""Executed notebooks read, cleaned and written: volatile metadata (timings, execution timestamps,
papermill's run record) stripped so committed copies only change when outputs do, papermill's injected
parameters folded into the one parameters cell, findings rendered by `md(...)` turned into Markdown cells,
cells numbered consecutively with stable ids, and split stream outputs merged.

    python -m ancer_lite.tooling.pipeline strip NOTEBOOK.ipynb
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

from ..core.files import write_atomic

VOLATILE_CELL_KEYS = ("execution", "papermill")
VOLATILE_NB_KEYS = ("papermill",)
STREAM = "stream"
PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"
#: a code cell whose code is hidden on the site (myst-nb), and one whose outputs nbval compares
HIDE_INPUT_TAG = "hide-input"
CHECKED_TAG = "nbval-check-output"
#: the tag of a finding turned into Markdown, and the call that renders findings (`report.display.md`)
FINDING_TAG = "finding"
FINDING_CALL = "md"


def cell_tags(cell: dict) -> list[str]:
    """The tags of a notebook cell.

    Parameters
    ----------
    cell : dict
        One cell of a notebook (nbformat 4 JSON).

    Returns
    -------
    list of str
        The cell's metadata tags; empty when it has none.
    """
    return list(cell.get("metadata", {}).get("tags", []))


def as_text(value: object) -> str:
    """A cell's source or an output's text as one string.

    Parameters
    ----------
    value : object
        A string, or a list of strings (nbformat's on-disk form of multi-line text).

    Returns
    -------
    str
        The list's strings joined, or `str(value)`.
    """
    return "".join(value) if isinstance(value, list) else str(value)


def _merge_streams(outputs: list[dict]) -> list[dict]:
    """Join consecutive stream outputs of the same name (stdout split into several blocks by timing)."""
    merged: list[dict] = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (out.get("output_type") == STREAM and prev is not None and prev.get("output_type") == STREAM
                and prev.get("name") == out.get("name")):
            prev["text"] = as_text(prev["text"]) + as_text(out.get("text", ""))
        else:
            merged.append(dict(out))
    return merged


def _top_level_assignments(tree: ast.Module) -> dict[str, list[ast.stmt]]:
    found: dict[str, list[ast.stmt]] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Name):
                found.setdefault(t.id, []).append(node)
    return found


def merge_parameter_sources(parameters: str, injected: str) -> str:
    """The source of one parameters cell equivalent to running `parameters` and then `injected`.

    An injected value equal to the default leaves its line (and comment) as it is; a different value
    replaces the assignment in place when the parameters cell assigns the name once and never reads it;
    otherwise the injected assignments are appended, which is always equivalent to running the two cells
    in order.

    Parameters
    ----------
    parameters : str
        The source of the notebook's parameters cell.
    injected : str
        The source of papermill's injected-parameters cell.

    Returns
    -------
    str
        The merged source (ending in a newline when `parameters` does).
    """
    try:
        ptree, itree = ast.parse(parameters), ast.parse(injected)
    except SyntaxError:
        return parameters.rstrip("\n") + "\n" + injected
    plines, ilines = parameters.splitlines(), injected.splitlines()
    read = {n.id for n in ast.walk(ptree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    defaults = _top_level_assignments(ptree)
    replace: list[tuple[int, int, list[str]]] = []
    append: list[str] = []
    for node in itree.body:
        lines = ilines[node.lineno - 1:node.end_lineno]
        name = node.targets[0].id if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) else None
        old = defaults.get(name, []) if name else []
        if len(old) == 1 and old[0].value is not None and ast.dump(old[0].value) == ast.dump(node.value):
            continue
        if len(old) == 1 and name not in read:
            replace.append((old[0].lineno - 1, old[0].end_lineno, lines))
        else:
            append.extend(lines)
    for start, end, lines in sorted(replace, reverse=True):
        plines[start:end] = lines
    if append:
        plines += ["# injected by papermill (overrides the values above)", *append]
    return "\n".join(plines) + ("\n" if parameters.endswith("\n") else "")


def merge_parameters(nb: dict) -> dict:
    """Fold papermill's "injected-parameters" cell into the notebook's `parameters` cell and drop it.

    The merged source comes from `merge_parameter_sources` and the parameters tag is kept, so an executed
    notebook shows its parameters once and re-running it (nbval, papermill) assigns the same values. A
    notebook without a parameters cell gets the injected cell retagged as its parameters cell.

    Parameters
    ----------
    nb : dict
        An executed notebook (nbformat 4 JSON); modified in place.

    Returns
    -------
    dict
        `nb`.
    """
    cells = nb.get("cells", [])
    injected = [i for i, c in enumerate(cells) if INJECTED_TAG in cell_tags(c)]
    if not injected:
        return nb
    if len(injected) > 1:
        raise ValueError(f"nb has {len(injected)} cells tagged {INJECTED_TAG!r}; expected at most one")
    inj = cells[injected[0]]
    params = [i for i, c in enumerate(cells) if PARAMETERS_TAG in cell_tags(c)]
    if not params:
        inj["metadata"]["tags"] = [PARAMETERS_TAG if t == INJECTED_TAG else t for t in cell_tags(inj)]
        return nb
    target = cells[params[0]]  # papermill injects after the first parameters cell
    merged = merge_parameter_sources(as_text(target.get("source", "")), as_text(inj.get("source", "")))
    target["source"] = merged.splitlines(keepends=True)  # nbformat's on-disk form
    del cells[injected[0]]
    return nb


def _renumber(cells: list[dict]) -> None:
    """Consecutive execution counts 1, 2, ... (a dropped injected cell leaves no gap)."""
    count = 0
    for cell in cells:
        if cell.get("cell_type") == "code" and cell.get("execution_count") is not None:
            count += 1
            cell["execution_count"] = count
            for out in cell.get("outputs", []):
                if out.get("output_type") == "execute_result":
                    out["execution_count"] = count


def _only_md_statements(body: list[ast.stmt]) -> bool:
    """Whether every statement is a call `md(...)` or an `if` whose branches hold nothing else."""
    return bool(body) and all(
        (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name)
         and st.value.func.id == FINDING_CALL)
        or (isinstance(st, ast.If) and _only_md_statements(st.body)
            and (not st.orelse or _only_md_statements(st.orelse)))
        for st in body)


def _only_md_calls(source: str) -> bool:
    """Whether a cell's code is nothing but calls `md(...)`, possibly under `if`/`else` (it defines nothing a later
    cell could use: no assignment, loop or `:=`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return _only_md_statements(tree.body) and not any(isinstance(n, ast.NamedExpr) for n in ast.walk(tree))


def is_finding(cell: dict) -> bool:
    """Whether an executed cell is a finding to show as Markdown: a `hide-input` code cell, not checked by nbval,
    whose code only calls `report.display.md` (under `if`/`else` where the words depend on the run) and whose every
    output is Markdown.

    Parameters
    ----------
    cell : dict
        One cell of an executed notebook (nbformat 4 JSON).

    Returns
    -------
    bool
    """
    outputs = cell.get("outputs", [])
    tags = cell_tags(cell)
    return (cell.get("cell_type") == "code" and HIDE_INPUT_TAG in tags and CHECKED_TAG not in tags and bool(outputs)
            and all(o.get("output_type") == "display_data" and "text/markdown" in o.get("data", {}) for o in outputs)
            and _only_md_calls(as_text(cell.get("source", ""))))


def findings_as_markdown(nb: dict) -> int:
    """Turn every finding cell (`is_finding`) of an executed notebook into a Markdown cell holding what it rendered,
    so that the reader meets the words, not the call that made them (on GitHub, in Jupyter and on the site alike).

    The sentences are still rendered from the computation: the notebook's source keeps the `md(...)` call, and every
    execution writes the Markdown again. The Markdown cell is tagged `FINDING_TAG`.

    Parameters
    ----------
    nb : dict
        An executed notebook (nbformat 4 JSON), changed in place.

    Returns
    -------
    int
        How many cells were turned.
    """
    turned = 0
    for i, cell in enumerate(nb.get("cells", [])):
        if is_finding(cell):
            text = "\n\n".join(as_text(o["data"]["text/markdown"]).strip() for o in cell["outputs"])
            nb["cells"][i] = {"cell_type": "markdown", "id": cell.get("id", f"cell-{i:03d}"),
                              "metadata": {"tags": [FINDING_TAG]}, "source": text}
            turned += 1
    return turned


def clean_notebook(nb: dict) -> dict:
    """Strip an executed notebook of what changes from run to run, keeping outputs and tags.

    Removes timings, execution timestamps and papermill's run record, folds the injected parameters into
    the parameters cell (`merge_parameters`), turns findings into Markdown cells (`findings_as_markdown`), numbers
    cells consecutively, gives cells stable ids and
    merges split stream outputs.

    Parameters
    ----------
    nb : dict
        An executed notebook (nbformat 4 JSON), cleaned in place.

    Returns
    -------
    dict
        `nb`, as the committed copy holds it.
    """
    meta = nb.setdefault("metadata", {})
    for key in VOLATILE_NB_KEYS:
        meta.pop(key, None)
    meta.get("kernelspec", {}).pop("env", None)
    meta.pop("widgets", None)
    merge_parameters(nb)
    findings_as_markdown(nb)
    cells = nb.get("cells", [])
    _renumber(cells)
    for i, cell in enumerate(cells):
        for key in VOLATILE_CELL_KEYS:
            cell.get("metadata", {}).pop(key, None)
        cell["id"] = f"cell-{i:03d}"  # stable ids (papermill/jupytext otherwise draw random ones)
        if "outputs" in cell:
            cell["outputs"] = _merge_streams(cell["outputs"])
    return nb


def dump_notebook(nb: dict) -> str:
    """The text of a notebook file as the pipeline writes it.

    Parameters
    ----------
    nb : dict
        A notebook (nbformat 4 JSON).

    Returns
    -------
    str
        Sorted-key JSON indented by one space, non-ASCII characters kept, with a closing newline.
    """
    return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def read_notebook(path: str | Path) -> dict:
    """The notebook (JSON) at `path`; a file that is not one raises an error naming it.

    Parameters
    ----------
    path : str or Path
        A notebook file.

    Returns
    -------
    dict
        The notebook, with a list of cells.
    """
    path = Path(path)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} is not a Jupyter notebook (JSON): {e}") from e
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError(f"{path} is not a Jupyter notebook: it has no list of cells")
    return nb


def strip_notebook(path: str | Path) -> None:
    """`clean_notebook` applied to the notebook file at `path` (rewritten atomically).

    Parameters
    ----------
    path : str or Path
        An executed notebook file.

    Returns
    -------
    None
    """
    path = Path(path)
    nb = read_notebook(path)
    write_atomic(path, dump_notebook(clean_notebook(nb)))
