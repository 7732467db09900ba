"""Notebook pipeline used by the Makefile: execute a jupytext notebook with papermill, strip volatile
metadata (so committed copies only change when outputs do) and write the figures index.

    python -m ancer_lite.pipeline execute notebooks/NN_name.py --output OUT.ipynb --figures DIR --profile P
    python -m ancer_lite.pipeline strip NOTEBOOK.ipynb
    python -m ancer_lite.pipeline index

`execute` never leaves a partial result: the converted and running notebooks live in a private
folder under build/ (removed on success, failure, SIGTERM or Ctrl-C), the notebook's figures are
staged there and only published into the figures folder (with their index rows) when every cell
succeeded, and the executed notebook replaces OUT atomically at the very end.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pandas as pd

from .logs import write_atomic

REPO_ROOT = Path(__file__).resolve().parent.parent
VOLATILE_CELL_KEYS = ("execution", "papermill")
VOLATILE_NB_KEYS = ("papermill",)
STREAM = "stream"


def _merge_streams(outputs: list[dict]) -> list[dict]:
    """Join consecutive stream outputs of the same name (stdout split into several blocks by timing)."""
    merged: list[dict] = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (out.get("output_type") == STREAM and prev is not None and prev.get("output_type") == STREAM
                and prev.get("name") == out.get("name")):
            text = out.get("text", "")
            prev["text"] = "".join(prev["text"]) + ("".join(text) if isinstance(text, list) else text)
        else:
            merged.append(dict(out))
    return merged


def strip_notebook(path: str | Path) -> None:
    """Remove timings, execution timestamps and papermill's run record, and merge split stream
    outputs; keep outputs and tags."""
    path = Path(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    for key in VOLATILE_NB_KEYS:
        nb.get("metadata", {}).pop(key, None)
    nb.get("metadata", {}).get("kernelspec", {}).pop("env", None)
    nb["metadata"].pop("widgets", None)
    for i, cell in enumerate(nb.get("cells", [])):
        for key in VOLATILE_CELL_KEYS:
            cell.get("metadata", {}).pop(key, None)
        cell["id"] = f"cell-{i:03d}"  # stable ids (papermill/jupytext otherwise draw random ones)
        if "outputs" in cell:
            cell["outputs"] = _merge_streams(cell["outputs"])
    write_atomic(path, json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


def publish_figures(stage: Path, figures: Path, notebook: str) -> list[str]:
    """Move the staged figure files into `figures` (each replaced atomically) and make the notebook's
    rows of figures/index.tsv exactly the staged ones: a figure the notebook no longer draws is
    removed with its files, so renamed figures leave no stale copies. Returns the published names."""
    from .figures import INDEX_COLUMNS

    figures.mkdir(parents=True, exist_ok=True)
    for f in sorted(stage.iterdir()):
        if f.suffix in (".pdf", ".png"):
            os.replace(f, figures / f.name)
    staged_index = stage / "index.tsv"
    new = pd.read_csv(staged_index, sep="\t") if staged_index.exists() else pd.DataFrame(columns=INDEX_COLUMNS)
    index = figures / "index.tsv"
    old = pd.read_csv(index, sep="\t") if index.exists() else pd.DataFrame(columns=INDEX_COLUMNS)
    stale = old[(old["notebook"] == notebook) & ~old["name"].isin(new["name"])]["name"].tolist()
    for name in stale:
        for suffix in (".pdf", ".png"):
            (figures / f"{name}{suffix}").unlink(missing_ok=True)
    keep = old[(old["notebook"] != notebook) & ~old["name"].isin(new["name"])]
    if len(keep) or len(new) or index.exists():
        write_atomic(index, pd.concat([keep, new]).sort_values("name").to_csv(sep="\t", index=False))
    return new["name"].tolist()


def _terminate(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through the `finally` clauses below


def execute(source: str | Path, output: str | Path, figures: str | Path, profile: str = "quick",
            work_root: str | Path = REPO_ROOT / "build" / "notebooks") -> Path:
    """Convert `source` (jupytext percent format), run it with papermill (parameter `profile`, working
    directory = the source's folder), strip it and write it to `output`; publish its figures into
    `figures`. Raises papermill's PapermillExecutionError (naming the cell) when a cell fails, in which
    case neither `output` nor `figures` is touched."""
    import jupytext
    import nbformat
    import papermill

    source, output, figures = Path(source).resolve(), Path(output), Path(figures)
    if not source.is_file():
        raise FileNotFoundError(f"source notebook not found: {source}")
    name = source.stem
    work_root = Path(work_root)
    work_root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=work_root))
    previous = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}
    env_before = {k: os.environ.get(k) for k in ("ANCER_FIGURES_DIR", "ANCER_NOTEBOOK")}
    try:
        stage = work / "figures"
        stage.mkdir()
        src, run = work / f"{name}.src.ipynb", work / f"{name}.ipynb"
        nbformat.write(jupytext.read(source), src)
        os.environ.update(ANCER_FIGURES_DIR=str(stage), ANCER_NOTEBOOK=name)  # the kernel inherits these
        papermill.execute_notebook(str(src), str(run), parameters={"profile": profile}, kernel_name="python3", language="python",
                                   progress_bar=False, cwd=str(source.parent))
        strip_notebook(run)
        publish_figures(stage, figures, name)
        output.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(run), str(output))  # same filesystem: an atomic rename
        return output
    finally:
        for k, v in env_before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("execute", help="run one notebook source into an executed, stripped copy")
    e.add_argument("source")
    e.add_argument("--output", required=True)
    e.add_argument("--figures", required=True)
    e.add_argument("--profile", default="quick")
    e.add_argument("--work-root", default=str(REPO_ROOT / "build" / "notebooks"))
    s = sub.add_parser("strip")
    s.add_argument("notebooks", nargs="+")
    sub.add_parser("index")
    args = ap.parse_args(argv)
    if args.cmd == "execute":
        from papermill.exceptions import PapermillExecutionError

        try:
            execute(args.source, args.output, args.figures, args.profile, args.work_root)
        except PapermillExecutionError as err:
            print(f"{args.source}: cell {err.exec_count} failed; nothing was written.\n{err}", file=sys.stderr)
            return 1
    elif args.cmd == "strip":
        for p in args.notebooks:
            strip_notebook(p)
    else:
        from .figures import write_index_readme
        print(write_index_readme())
    return 0


if __name__ == "__main__":
    sys.exit(main())
