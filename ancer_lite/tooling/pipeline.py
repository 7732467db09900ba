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
# The commands' work lives in one module each: `execute` (a run, staged and atomic), `notebook_clean`
# (`strip`), `notebook_checks` (`check`), `publish` (a run's figures and index rows), `timings` (`summary`).
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.files import REPO_ROOT
from .execute import WORK_ROOT, execute, shown
from .notebook_checks import UncleanOutputError, notebook_figures, notebook_problems
from .notebook_clean import read_notebook, strip_notebook
from .timings import DEFAULT_TIMINGS, summary


def main(argv: list[str] | None = None) -> int:
    """Run one of the pipeline's commands: execute, strip, check, summary or index (the module's description).

    Parameters
    ----------
    argv : list of str, optional
        The command's arguments; None: sys.argv[1:].

    Returns
    -------
    int
        The exit status: 0 on success; 1 when `execute` fails (a cell's error, unclean outputs, or a path it cannot
        use: nothing written), `strip` meets a file that is not a notebook, or `check` finds problems (printed to
        stderr). argparse exits with 2 on bad arguments.
    """
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("execute", help="run one notebook source into an executed, stripped copy")
    e.add_argument("source")
    e.add_argument("--output", required=True)
    e.add_argument("--figures", required=True)
    e.add_argument("--profile", default="quick")
    e.add_argument("--work-root", default=str(WORK_ROOT))
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
        from ..report.claims import CLAIMS_PAGE, read_claims, update_claims_block, update_claims_summary
        from ..report.figures import figures_dir, write_index_readme
        print(f"figure list written to {shown(write_index_readme())}")
        if figures_dir().resolve() == (REPO_ROOT / "figures").resolve():  # the quick profile's figures and claims
            table = read_claims(figures_dir())
            changed = update_claims_block(REPO_ROOT / CLAIMS_PAGE, table)
            print(f"claims table ({len(table)} rows) {'written to' if changed else 'unchanged in'} {CLAIMS_PAGE}")
            changed = update_claims_summary(REPO_ROOT / "README.md", table)
            print(f"claims summary {'written to' if changed else 'unchanged in'} README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
