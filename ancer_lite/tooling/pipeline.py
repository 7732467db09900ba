"""Notebook pipeline used by the Makefile: execute a jupytext notebook with papermill, strip volatile
metadata (so committed copies only change when outputs do), check that the outputs are clean and
write the figures index.

    python -m ancer_lite.tooling.pipeline execute notebooks/NN_name.py --output OUT.ipynb --figures DIR --profile P
    python -m ancer_lite.tooling.pipeline strip NOTEBOOK.ipynb
    python -m ancer_lite.tooling.pipeline check NOTEBOOK.ipynb [--figures DIR]
    python -m ancer_lite.tooling.pipeline summary --profile P [--since EPOCH_SECONDS] NAME...
    python -m ancer_lite.tooling.pipeline index

`execute` reports progress on stderr, one line per code cell ("[03_image_certification] cell 12/41
(3 min 02 s elapsed): # first line of the cell") and a closing line with the notebook's wall time,
which it also records in build/timings.tsv. The kernel adds up its wall time by stage of the computation
(`stages`: training, selection, optimization, CERTIFY, memory, figures; the rest is "other") and
`execute` records that profile in build/stages.tsv beside the timings. `summary` (run at the end of
`make all`) prints every notebook's time, the total, and the time of each notebook by stage.

`execute` never leaves a partial result: the converted and running notebooks live in a private
folder under build/ (removed on success, failure, SIGTERM or Ctrl-C), the notebook's figures are
staged there and only published into the figures folder (with their index rows) when every cell
succeeded and the outputs passed `notebook_problems` (no absolute path, no progress-bar frame, every
saved figure shown, one parameters cell), and the executed notebook replaces OUT atomically at the
very end. A notebook rejected for unclean outputs is kept as build/notebooks/NAME.rejected.ipynb for
inspection.

The kernel talks to papermill over IPC (Unix sockets in the private folder) rather than TCP: the
kernel is local either way, and IPC keeps ipykernel's "running over TCP without encryption" warning
(meant for kernels reachable over a network) out of the build log.
"""
from __future__ import annotations

import argparse
import ast
import fcntl
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import pandas as pd

from ..core.files import REPO_ROOT, write_atomic

DEFAULT_TIMINGS = REPO_ROOT / "build" / "timings.tsv"
VOLATILE_CELL_KEYS = ("execution", "papermill")
VOLATILE_NB_KEYS = ("papermill",)
STREAM = "stream"
PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"
TIMING_COLUMNS = ["notebook", "profile", "seconds", "finished", "status"]
STAGE_COLUMNS = ["notebook", "profile", "stage", "seconds", "calls"]
#: the profile's columns: the package's stages, then the time outside them and the notebook's wall time
OTHER, TOTAL = "other", "total"
#: text that must not appear in any output: absolute paths (the repository root, temporary and home
#: folders, the pipeline's private build folder) and pathlib reprs
ABSOLUTE_PATH_MARKERS = (str(REPO_ROOT), "/tmp/", "/home/", "/root/", "/work/", "build/notebooks", "PosixPath(")
#: tqdm-like progress bars in stream text: " 45%|████▌     | 45/100 [00:01<00:02, 30.00it/s]"
PROGRESS_BAR = re.compile(r"\d{1,3}%\|[^|\n]*\||\[\d+:\d\d<\d+:\d\d|\d(?:it|s)/(?:s|it)\]")
#: output formats carrying base64-encoded binary data (not searched for text)
BINARY_MIMES = ("image/png", "image/jpeg", "image/gif", "application/pdf")
#: closing progress line of a run that wrote nothing, by its status in the timings file
CLOSING = {"failed": "failed after", "unclean": "rejected (unclean outputs) after", "interrupted": "interrupted after"}
#: longest Unix socket path (108 bytes with the terminating NUL on Linux)
MAX_SOCKET_PATH = 100


class UncleanOutputError(ValueError):
    """An executed notebook's outputs break the clean-output rules (see `notebook_problems`)."""


def _tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _text(value: object) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _merge_streams(outputs: list[dict]) -> list[dict]:
    """Join consecutive stream outputs of the same name (stdout split into several blocks by timing)."""
    merged: list[dict] = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (out.get("output_type") == STREAM and prev is not None and prev.get("output_type") == STREAM
                and prev.get("name") == out.get("name")):
            prev["text"] = _text(prev["text"]) + _text(out.get("text", ""))
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
    """The source of one parameters cell equivalent to running `parameters` and then papermill's
    `injected` cell. An injected value equal to the default leaves its line (and comment) as it is;
    a different value replaces the assignment in place when the parameters cell assigns the name
    once and never reads it; otherwise the injected assignments are appended, which is always
    equivalent to running the two cells in order."""
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
    """Fold papermill's "injected-parameters" cell into the notebook's `parameters` cell (source from
    `merge_parameter_sources`, tag kept) and drop it, so an executed notebook shows its parameters
    once; re-running it (nbval, papermill) assigns the same values. A notebook without a parameters
    cell gets the injected cell retagged as its parameters cell. Modifies and returns `nb`."""
    cells = nb.get("cells", [])
    injected = [i for i, c in enumerate(cells) if INJECTED_TAG in _tags(c)]
    if not injected:
        return nb
    if len(injected) > 1:
        raise ValueError(f"nb has {len(injected)} cells tagged {INJECTED_TAG!r}; expected at most one")
    inj = cells[injected[0]]
    params = [i for i, c in enumerate(cells) if PARAMETERS_TAG in _tags(c)]
    if not params:
        inj["metadata"]["tags"] = [PARAMETERS_TAG if t == INJECTED_TAG else t for t in _tags(inj)]
        return nb
    target = cells[params[0]]  # papermill injects after the first parameters cell
    merged = merge_parameter_sources(_text(target.get("source", "")), _text(inj.get("source", "")))
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


def clean_notebook(nb: dict) -> dict:
    """Remove timings, execution timestamps and papermill's run record, fold the injected parameters
    into the parameters cell (`merge_parameters`), number cells consecutively, give cells stable ids
    and merge split stream outputs; keep outputs and tags. Modifies and returns `nb`."""
    meta = nb.setdefault("metadata", {})
    for key in VOLATILE_NB_KEYS:
        meta.pop(key, None)
    meta.get("kernelspec", {}).pop("env", None)
    meta.pop("widgets", None)
    merge_parameters(nb)
    cells = nb.get("cells", [])
    _renumber(cells)
    for i, cell in enumerate(cells):
        for key in VOLATILE_CELL_KEYS:
            cell.get("metadata", {}).pop(key, None)
        cell["id"] = f"cell-{i:03d}"  # stable ids (papermill/jupytext otherwise draw random ones)
        if "outputs" in cell:
            cell["outputs"] = _merge_streams(cell["outputs"])
    return nb


def _dump(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def read_notebook(path: str | Path) -> dict:
    """The notebook (JSON) at `path`; a file that is not one raises an error naming it."""
    path = Path(path)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} is not a Jupyter notebook (JSON): {e}") from e
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError(f"{path} is not a Jupyter notebook: it has no list of cells")
    return nb


def strip_notebook(path: str | Path) -> None:
    """`clean_notebook` applied to the notebook file at `path` (rewritten atomically)."""
    path = Path(path)
    nb = read_notebook(path)
    write_atomic(path, _dump(clean_notebook(nb)))


def _output_texts(out: dict) -> Iterator[tuple[str, str]]:
    """(where, text) for each textual part of one output; binary data (PNG ...) is skipped."""
    kind = out.get("output_type")
    if kind == STREAM:
        yield out.get("name", STREAM), _text(out.get("text", ""))
    elif kind in ("execute_result", "display_data"):
        for mime, value in out.get("data", {}).items():
            if mime not in BINARY_MIMES:
                yield mime, value if isinstance(value, str) else _text(value) if isinstance(value, list) else json.dumps(value)
    elif kind == "error":
        yield "error", "\n".join([f"{out.get('ename', '')}: {out.get('evalue', '')}", *out.get("traceback", [])])


def _excerpt(text: str, pos: int, width: int = 60) -> str:
    lo, hi = max(0, pos - width), min(len(text), pos + width)
    return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")


def output_problems(nb: dict, notebook: str, figure_names: Sequence[str] = ()) -> list[str]:
    """Every output of the executed notebook `nb` (named `notebook` in the messages) that breaks the
    clean-output rules of the issue "Readers": text containing an absolute path
    (`ABSOLUTE_PATH_MARKERS`) or a progress-bar frame (a carriage return or a tqdm-like bar in stream
    text), and fewer image/png outputs than the figures the notebook saved (`figure_names`, its rows
    of the figures index). Each message names the cell by its index in `nb["cells"]`; empty when clean."""
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
    """Other than exactly one cell tagged `parameters`, or a leftover "injected-parameters" cell
    (`clean_notebook` folds it into the parameters cell). Empty when fine."""
    cells = nb.get("cells", [])
    problems = []
    n_params = sum(PARAMETERS_TAG in _tags(c) for c in cells)
    if n_params != 1:
        problems.append(f"{notebook}: has {n_params} cells tagged {PARAMETERS_TAG!r}; expected exactly one")
    injected = [i for i, c in enumerate(cells) if INJECTED_TAG in _tags(c)]
    if injected:
        problems.append(f"{notebook}: cell(s) {injected} tagged {INJECTED_TAG!r} left beside the parameters "
                        "cell (clean_notebook folds them into it)")
    return problems


def notebook_problems(nb: dict, notebook: str, figure_names: Sequence[str] = ()) -> list[str]:
    """`output_problems` and `parameters_problems` of the executed notebook `nb`."""
    return output_problems(nb, notebook, figure_names) + parameters_problems(nb, notebook)


def check_notebook(nb: dict, notebook: str, figure_names: Sequence[str] = ()) -> None:
    """Raise UncleanOutputError listing every `notebook_problems` of `nb`."""
    problems = notebook_problems(nb, notebook, figure_names)
    if problems:
        raise UncleanOutputError("\n  ".join([f"{notebook}: {len(problems)} clean-output problem(s):", *problems]))


def notebook_figures(index: str | Path, notebook: str) -> list[str]:
    """Names of the figures that `notebook` saved, from a figures index (figures/index.tsv)."""
    from ..report.figures import read_index

    df = read_index(Path(index))
    return sorted(df.loc[df["notebook"] == notebook, "name"])


def publish_figures(stage: Path, figures: Path, notebook: str) -> list[str]:
    """Move the staged figure files into `figures` (each replaced atomically) and make the notebook's
    rows of figures/index.tsv exactly the staged ones: a figure the notebook no longer draws is
    removed with its files, so renamed figures leave no stale copies. The notebook's claims file
    (figures/claims/<notebook>.tsv, `report.claims`) is replaced by the staged one, or removed when the
    notebook records none. Returns the published figure names."""
    from ..report.figures import read_index

    figures.mkdir(parents=True, exist_ok=True)
    for f in sorted(stage.iterdir()):
        if f.suffix in (".pdf", ".png"):
            os.replace(f, figures / f.name)
    # the notebook's claims (`report.claims`): replaced by the staged ones, or removed if it records none now
    staged_claims, claims = stage / "claims" / f"{notebook}.tsv", figures / "claims" / f"{notebook}.tsv"
    if staged_claims.exists():
        claims.parent.mkdir(exist_ok=True)
        os.replace(staged_claims, claims)
    else:
        claims.unlink(missing_ok=True)
    staged_index = stage / "index.tsv"
    new = read_index(staged_index)
    index = figures / "index.tsv"
    with _locked(figures):  # notebooks run side by side (make -j) take turns on the read-modify-write
        old = read_index(index)
        stale = old[(old["notebook"] == notebook) & ~old["name"].isin(new["name"])]["name"].tolist()
        for name in stale:
            for suffix in (".pdf", ".png"):
                (figures / f"{name}{suffix}").unlink(missing_ok=True)
        keep = old[(old["notebook"] != notebook) & ~old["name"].isin(new["name"])]
        if len(keep) or len(new) or index.exists():
            write_atomic(index, pd.concat([keep, new]).sort_values("name").to_csv(sep="\t", index=False))
    return new["name"].tolist()


def first_line(source: str, width: int = 90) -> str:
    """The first line of a cell that says what it does: not blank, not an NBVAL marker; cut to `width`."""
    lines = [s.strip() for s in source.splitlines() if s.strip()]
    line = next((s for s in lines if not s.startswith("# NBVAL_")), lines[0] if lines else "")
    return line if len(line) <= width else line[:width - 1] + "…"


class Progress:
    """nbclient hooks that write one line per code cell to `stream` when it starts: "[name] cell k/n
    (T elapsed): first line", T counted from the creation of this object; `done` gives the closing
    line. Cells are counted as in the executed copy: papermill's injected parameters cell (folded into
    the parameters cell afterwards) runs without a line of its own."""

    def __init__(self, name: str, stream: TextIO | None = sys.stderr, clock=time.monotonic):
        self.name, self.stream, self.clock = name, stream, clock
        self.t0 = clock()
        self.code: dict[int, int] = {}
        self.started: dict[int, float] = {}
        self.durations: dict[int, float] = {}

    def say(self, text: str) -> None:
        if self.stream is not None:
            print(f"[{self.name}] {text}", file=self.stream, flush=True)

    def elapsed(self) -> float:
        return self.clock() - self.t0

    def on_notebook_start(self, notebook: dict, **_: object) -> None:
        runs = [i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code" and _text(c["source"]).strip()
                and INJECTED_TAG not in _tags(c)]
        self.code = {i: k + 1 for k, i in enumerate(runs)}
        from ..report.display import format_seconds

        self.say(f"kernel ready after {format_seconds(self.elapsed())}; {len(runs)} code cells to run")

    def on_cell_start(self, cell: dict, cell_index: int, **_: object) -> None:
        if cell_index not in self.code:
            return
        from ..report.display import format_seconds

        self.started[cell_index] = self.clock()
        self.say(f"cell {self.code[cell_index]}/{len(self.code)} ({format_seconds(self.elapsed())} elapsed): "
                 f"{first_line(_text(cell['source']))}")

    def on_cell_executed(self, cell: dict, cell_index: int, **_: object) -> None:
        if cell_index in self.started:
            self.durations[cell_index] = self.clock() - self.started[cell_index]

    def hooks(self) -> dict[str, object]:
        return {"on_notebook_start": self.on_notebook_start, "on_cell_start": self.on_cell_start,
                "on_cell_executed": self.on_cell_executed}

    def done(self, what: str) -> str:
        """The closing line: `what` ("wrote X in", "failed after"), the wall time and the slowest cell."""
        from ..report.display import format_seconds

        text = f"{what} {format_seconds(self.elapsed())}"
        if self.durations:
            slow = max(self.durations, key=self.durations.get)
            text += (f" (slowest: cell {self.code[slow]}/{len(self.code)}, "
                     f"{format_seconds(self.durations[slow])})")
        self.say(text)
        return text


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive flock on `.<name>.lock` beside the file `path`, or on the folder `path` itself
    (which leaves no lock file in it), waiting for other holders (parallel `execute` runs recording
    their timings or publishing figures)."""
    if path.is_dir():
        fd = os.open(path, os.O_RDONLY)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.parent / f".{path.name}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def read_timings(path: str | Path) -> pd.DataFrame:
    """The timings file (`TIMING_COLUMNS`, one row per notebook and profile); empty if absent."""
    return _read_table(path, TIMING_COLUMNS, "timings file", ("notebook", "profile", "status"))


def _read_table(path: str | Path, columns: list[str], what: str, text_columns: tuple[str, ...]) -> pd.DataFrame:
    """A tab-separated file with (at least) `columns`, in that order; empty if absent."""
    path = Path(path)
    if not path.exists():
        return pd.DataFrame(columns=columns)
    df = pd.read_csv(path, sep="\t", dtype={c: str for c in text_columns})
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: {what} lacks the columns {missing}; expected {columns}")
    return df[columns]


def record_timing(path: str | Path, notebook: str, profile: str, seconds: float, status: str,
                  finished: float | None = None) -> None:
    """Set the row of (`notebook`, `profile`) in the timings file: wall `seconds` of its latest
    execution, when it `finished` (epoch seconds, default now) and its `status` (ok, failed, unclean,
    interrupted). Safe against parallel writers."""
    path = Path(path)
    row = pd.DataFrame([[notebook, profile, round(float(seconds), 3), round(time.time() if finished is None else finished, 3),
                         status]], columns=TIMING_COLUMNS)
    with _locked(path):
        df = read_timings(path)
        df = df[~((df["notebook"] == notebook) & (df["profile"] == profile))]
        df = pd.concat([df, row]) if len(df) else row
        write_atomic(path, df.sort_values(["profile", "notebook"]).to_csv(sep="\t", index=False))


def stages_path(timings: str | Path) -> Path:
    """The stage profile beside a timings file: build/timings.tsv -> build/stages.tsv."""
    return Path(timings).with_name("stages.tsv")


def read_stage_profile(path: str | Path) -> pd.DataFrame:
    """The stage profile (`STAGE_COLUMNS`, one row per notebook, profile and stage); empty if absent."""
    return _read_table(path, STAGE_COLUMNS, "stage profile", ("notebook", "profile", "stage"))


def record_stages(path: str | Path, notebook: str, profile: str, wall: float,
                  totals: dict[str, dict[str, float]]) -> None:
    """Set the rows of (`notebook`, `profile`) in the stage profile: each stage's seconds and calls from
    `totals` (`stages.read`), "other" = `wall` minus their sum, and "total" = `wall`. Safe against
    parallel writers."""
    from ..core.stages import STAGES

    unknown = sorted(set(totals) - set(STAGES))
    if unknown:
        raise ValueError(f"totals has unknown stages {unknown}; expected a subset of {list(STAGES)}")
    staged = {s: totals.get(s, {"seconds": 0.0, "calls": 0}) for s in STAGES}
    inside = sum(float(v["seconds"]) for v in staged.values())
    rows = [[notebook, profile, s, round(float(v["seconds"]), 3), int(v["calls"])] for s, v in staged.items()]
    rows += [[notebook, profile, OTHER, round(max(float(wall) - inside, 0.0), 3), 0],
             [notebook, profile, TOTAL, round(float(wall), 3), 1]]
    new = pd.DataFrame(rows, columns=STAGE_COLUMNS)
    path = Path(path)
    with _locked(path):
        df = read_stage_profile(path)
        df = df[~((df["notebook"] == notebook) & (df["profile"] == profile))]
        df = pd.concat([df, new]) if len(df) else new
        order = {s: k for k, s in enumerate([*STAGES, OTHER, TOTAL])}
        df = df.sort_values(["profile", "notebook", "stage"], key=lambda c: c.map(order) if c.name == "stage" else c)
        write_atomic(path, df.to_csv(sep="\t", index=False))


def stage_table(names: Sequence[str], profile: str, path: str | Path) -> pd.DataFrame:
    """Seconds by notebook (rows, `names` that have a recorded profile, then "total") and stage (columns:
    the stages, "other", "total") under `profile`."""
    from ..core.stages import STAGES

    df = read_stage_profile(path)
    df = df[(df["profile"] == profile) & df["notebook"].isin(list(names))]
    table = df.pivot_table(index="notebook", columns="stage", values="seconds", aggfunc="sum")
    table = table.reindex(index=[n for n in names if n in table.index], columns=[*STAGES, OTHER, TOTAL]).fillna(0.0)
    if len(table):
        table.loc[TOTAL] = table.sum()
    return table


def summary(names: Sequence[str], profile: str, timings: str | Path = DEFAULT_TIMINGS,
            since: float | None = None, now: float | None = None) -> str:
    """A table of each notebook's latest recorded wall time under `profile` and the total. With
    `since` (epoch seconds: the start of this `make all`), notebooks whose latest run finished
    earlier are marked as up to date, not re-run, a second total counts only this run, and a last
    line gives the wall clock from `since` to `now` (default: the current time)."""
    from ..report.display import format_seconds

    df = read_timings(timings)
    df = df[df["profile"] == profile].set_index("notebook")
    width = max(len(n) for n in [*names, "wall clock"])
    lines = [f"Notebook wall times (profile {profile}):"]
    total = this_run = 0.0
    ran = 0
    for name in names:
        if name not in df.index:
            lines.append(f"  {name:<{width}}  {'—':>11}  no recorded run")
            continue
        r = df.loc[name]
        seconds = float(r["seconds"])
        total += seconds
        notes = [] if r["status"] == "ok" else [f"last run {r['status']}"]
        if since is not None and float(r["finished"]) < since:
            notes.append("up to date, not re-run (time of its last run, "
                         f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(float(r['finished'])))})")
        else:
            this_run += seconds
            ran += 1
        lines.append(f"  {name:<{width}}  {format_seconds(seconds):>11}  {'; '.join(notes)}".rstrip())
    lines.append(f"  {'total':<{width}}  {format_seconds(total):>11}")
    if since is not None:
        lines.append(f"  {'this run':<{width}}  {format_seconds(this_run):>11}  ({ran} of {len(names)} notebooks executed)")
        elapsed = (time.time() if now is None else now) - since
        lines.append(f"  {'wall clock':<{width}}  {format_seconds(elapsed):>11}  (since make started: the notebooks, the figure index and make itself)")
    table = stage_table(names, profile, stages_path(timings))
    if len(table):
        lines.append(f"Time by stage (profile {profile}; the outermost stage owns nested work, see ancer_lite.core.stages):")
        head = "".join(f"{c:>14}" for c in table.columns)
        lines.append(f"  {'':<{width}}{head}")
        for name, row in table.iterrows():
            lines.append(f"  {name:<{width}}" + "".join(f"{format_seconds(v):>14}" for v in row))
    return "\n".join(lines)


def _terminate(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through the `finally` clauses below


def _kernel_config(work: Path):
    """Kernel manager configuration: IPC transport, sockets in `work` (or, if that path is too long
    for a Unix socket, in a fresh folder under the system's temporary folder, returned for removal)."""
    from traitlets.config import Config

    folder, extra = work, None
    if len(str(work / "kernel-ipc-9999")) > MAX_SOCKET_PATH:
        folder = extra = Path(tempfile.mkdtemp(prefix="ancer-kernel-"))
    return Config({"KernelManager": {"transport": "ipc", "ip": str(folder / "kernel")}}), extra


def remove_stale_work(work_root: str | Path) -> list[Path]:
    """Remove the private folders under `work_root` whose `execute` process is gone (a SIGKILL leaves its
    folder behind; every other exit removes it). A folder's name carries its process id
    (`<notebook>-pid<pid>-<random>`); folders of live processes, as under `make -j`, are left alone.
    Returns the folders removed."""
    removed = []
    for folder in sorted(Path(work_root).glob("*-pid*-*")):
        m = re.search(r"-pid(\d+)-[^/]*$", folder.name)
        if not (folder.is_dir() and m):
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # still running
        except ProcessLookupError:
            pass
        except PermissionError:
            continue  # another user's live process
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def check_writable_output(output: str | Path) -> None:
    """Refuse, before a notebook runs, an `output` that could not be written after it: an existing
    directory (which used to be written into), or a file or folder this process may not write (found
    only after the whole run, once its figures were published)."""
    output = Path(output)
    if output.is_dir():
        raise ValueError(f"--output {output} is a directory; name the executed notebook's file")
    if output.exists() and not os.access(output, os.W_OK):
        raise PermissionError(f"--output {output} exists and is not writable")
    folder = output.parent
    while not folder.exists():  # the folders still to create must be creatable in the first existing one
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"--output {output}: cannot write in {folder}")


def execute(source: str | Path, output: str | Path, figures: str | Path, profile: str = "quick",
            work_root: str | Path = REPO_ROOT / "build" / "notebooks", timings: str | Path | None = None,
            progress: TextIO | None = sys.stderr) -> Path:
    """Convert `source` (jupytext percent format), run it with papermill (parameter `profile`, working
    directory = the source's folder), clean it (`clean_notebook`), check it (`check_notebook`, with the
    figures it saved) and write it to `output`; publish its figures into `figures`. Writes progress
    lines to `progress` (None: silent) and, with `timings`, records the wall time there
    (`record_timing`). Raises papermill's PapermillExecutionError (naming the cell) when a cell fails
    and UncleanOutputError when the outputs are not clean; in both cases neither `output` nor
    `figures` is touched."""
    import jupytext
    import nbformat
    import papermill

    from ..report.figures import read_index

    source, output, figures = Path(source).resolve(), Path(output), Path(figures)
    if not source.is_file():
        raise FileNotFoundError(f"source notebook not found: {source}")
    check_writable_output(output)
    name = source.stem
    report = Progress(name, progress)
    work_root = Path(work_root).resolve()  # the kernel binds its sockets from the notebook's folder
    work_root.mkdir(parents=True, exist_ok=True)
    remove_stale_work(work_root)
    work = Path(tempfile.mkdtemp(prefix=f"{name}-pid{os.getpid()}-", dir=work_root))
    rejected = work_root / f"{name}.rejected.ipynb"
    previous = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}
    from ..core.stages import ENV_FILE
    from ..core.stages import read as read_stages

    env_before = {k: os.environ.get(k) for k in ("ANCER_FIGURES_DIR", "ANCER_NOTEBOOK", ENV_FILE)}
    config, sockets = _kernel_config(work)
    status = "failed"
    try:
        report.say(f"executing {_shown(source)} (profile {profile}) into {_shown(output)}")
        stage = work / "figures"
        stage.mkdir()
        src, run = work / f"{name}.src.ipynb", work / f"{name}.ipynb"
        nbformat.write(jupytext.read(source), src)
        os.environ.update({"ANCER_FIGURES_DIR": str(stage), "ANCER_NOTEBOOK": name,  # the kernel inherits these
                           ENV_FILE: str(work / "stages.json")})
        papermill.execute_notebook(str(src), str(run), parameters={"profile": profile}, kernel_name="python3",
                                   language="python", progress_bar=False, cwd=str(source.parent), config=config,
                                   **report.hooks())
        nb = clean_notebook(json.loads(run.read_text(encoding="utf-8")))
        try:
            check_notebook(nb, name, read_index(stage / "index.tsv")["name"].tolist())
        except UncleanOutputError as err:
            status = "unclean"
            write_atomic(rejected, _dump(nb))
            raise UncleanOutputError(f"{err}\nnothing was written; the executed notebook is kept for inspection "
                                     f"as {_shown(rejected)}") from None
        write_atomic(run, _dump(nb))
        publish_figures(stage, figures, name)
        output.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(run), str(output))  # same filesystem: an atomic rename
        rejected.unlink(missing_ok=True)
        status = "ok"
        report.done(f"wrote {_shown(output)} in")
        return output
    except (KeyboardInterrupt, SystemExit):
        status = "interrupted"
        raise
    finally:
        if status != "ok":
            report.done(CLOSING[status])
        if timings is not None:
            wall = report.elapsed()
            record_timing(timings, name, profile, wall, status)
            record_stages(stages_path(timings), name, profile, wall, read_stages(work / "stages.json"))
        for k, v in env_before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        shutil.rmtree(work, ignore_errors=True)
        if sockets is not None:
            shutil.rmtree(sockets, ignore_errors=True)


def _shown(path: Path) -> str:
    """`path` relative to the current folder when it lies inside it (progress lines stay short)."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("execute", help="run one notebook source into an executed, stripped copy")
    e.add_argument("source")
    e.add_argument("--output", required=True)
    e.add_argument("--figures", required=True)
    e.add_argument("--profile", default="quick")
    e.add_argument("--work-root", default=str(REPO_ROOT / "build" / "notebooks"))
    e.add_argument("--timings", default=str(DEFAULT_TIMINGS), help="where to record the wall time ('' for nowhere)")
    s = sub.add_parser("strip", help="clean executed notebooks in place (clean_notebook)")
    s.add_argument("notebooks", nargs="+")
    c = sub.add_parser("check", help="check executed notebooks' outputs (notebook_problems)")
    c.add_argument("notebooks", nargs="+")
    c.add_argument("--figures", default=str(REPO_ROOT / "figures"), help="folder holding the figures index")
    m = sub.add_parser("summary", help="print each notebook's recorded wall time and the total")
    m.add_argument("names", nargs="+")
    m.add_argument("--profile", default="quick")
    m.add_argument("--since", type=float, default=None, help="epoch seconds: runs finished earlier are marked up to date")
    m.add_argument("--timings", default=str(DEFAULT_TIMINGS))
    sub.add_parser("index")
    args = ap.parse_args(argv)
    if args.cmd == "execute":
        from papermill.exceptions import PapermillExecutionError

        try:
            execute(args.source, args.output, args.figures, args.profile, args.work_root, args.timings or None)
        except PapermillExecutionError as err:
            print(f"{args.source}: cell {err.exec_count} failed; nothing was written.\n{err}", file=sys.stderr)
            return 1
        except (UncleanOutputError, ValueError, PermissionError, FileNotFoundError) as err:
            print(err, file=sys.stderr)
            return 1
    elif args.cmd == "strip":
        try:
            for p in args.notebooks:
                strip_notebook(p)
        except ValueError as err:
            print(err, file=sys.stderr)
            return 1
    elif args.cmd == "check":
        problems = []
        for p in args.notebooks:
            stem = Path(p).stem
            try:
                nb = read_notebook(p)
            except ValueError as err:
                problems.append(str(err))
                continue
            problems += notebook_problems(nb, stem, notebook_figures(Path(args.figures) / "index.tsv", stem))
        print("\n".join(problems) or f"{len(args.notebooks)} notebook(s) clean", file=sys.stderr if problems else sys.stdout)
        return 1 if problems else 0
    elif args.cmd == "summary":
        print(summary(args.names, args.profile, args.timings, args.since))
    else:
        from ..report.claims import read_claims, update_readme
        from ..report.figures import figures_dir, write_index_readme
        print(f"figure list written to {_shown(write_index_readme())}")
        if figures_dir().resolve() == (REPO_ROOT / "figures").resolve():  # the quick profile's figures and claims
            table = read_claims(figures_dir())
            changed = update_readme(REPO_ROOT / "README.md", table)
            print(f"claims table ({len(table)} rows) {'written to' if changed else 'unchanged in'} README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
