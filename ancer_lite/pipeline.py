"""Notebook pipeline helpers used by the Makefile: strip volatile metadata from executed notebooks
(so committed copies only change when outputs do) and write the figures index.

    python -m ancer_lite.pipeline strip NOTEBOOK.ipynb
    python -m ancer_lite.pipeline index
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from .logs import write_atomic

VOLATILE_CELL_KEYS = ("execution", "papermill")
VOLATILE_NB_KEYS = ("papermill",)


def strip_notebook(path: str | Path) -> None:
    """Remove timings, execution timestamps and papermill's run record; keep outputs and tags."""
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
    write_atomic(path, json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("strip")
    s.add_argument("notebooks", nargs="+")
    sub.add_parser("index")
    args = ap.parse_args(argv)
    if args.cmd == "strip":
        for p in args.notebooks:
            strip_notebook(p)
    else:
        from .figures import write_index_readme
        print(write_index_readme())


if __name__ == "__main__":
    main()
