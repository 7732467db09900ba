"""One notebook executed: its jupytext source converted, run with papermill, cleaned (`notebook_clean`),
checked (`notebook_checks`) and written, its figures published (`publish`) and its wall time and stage
profile recorded (`timings`).

    python -m ancer_lite.tooling.pipeline execute notebooks/NN_name.py --output OUT.ipynb --figures DIR --profile P

Progress goes to stderr, one line per code cell ("[03_image_certification] cell 12/41 (3 min 02 s
elapsed): # first line of the cell") and a closing line with the notebook's wall time.

A run never leaves a partial result: the converted and running notebooks live in a private folder under
build/ (removed on success, failure, SIGTERM or Ctrl-C), the notebook's figures are staged there and only
published into the figures folder (with their index rows) when every cell succeeded and the outputs passed
`notebook_problems`, and the executed notebook replaces OUT atomically at the very end. A notebook rejected
for unclean outputs is kept as build/notebooks/NAME.rejected.ipynb for inspection.

The kernel talks to papermill over IPC (Unix sockets in the private folder) rather than TCP: the kernel is
local either way, and IPC keeps ipykernel's "running over TCP without encryption" warning (meant for
kernels reachable over a network) out of the build log.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from ..core.files import REPO_ROOT, write_atomic
from .notebook_checks import UncleanOutputError, check_notebook
from .notebook_clean import INJECTED_TAG, as_text, cell_tags, clean_notebook, dump_notebook
from .publish import publish_figures
from .timings import record_stages, record_timing, stages_path

#: where each run's private folder is made
WORK_ROOT = REPO_ROOT / "build" / "notebooks"
#: closing progress line of a run that wrote nothing, by its status in the timings file
CLOSING = {"failed": "failed after", "unclean": "rejected (unclean outputs) after", "interrupted": "interrupted after"}
#: longest Unix socket path (108 bytes with the terminating NUL on Linux)
MAX_SOCKET_PATH = 100


def first_line(source: str, width: int = 90) -> str:
    """The first line of a cell that says what it does: not blank, not an NBVAL marker; cut to `width`.

    Parameters
    ----------
    source : str
        The cell's source.
    width : int
        The longest line returned; a longer one is cut and ends in "…".

    Returns
    -------
    str
        The line, stripped; empty for a blank cell.
    """
    lines = [s.strip() for s in source.splitlines() if s.strip()]
    line = next((s for s in lines if not s.startswith("# NBVAL_")), lines[0] if lines else "")
    return line if len(line) <= width else line[:width - 1] + "…"


class Progress:
    """nbclient hooks that write one line per code cell to `stream` when it starts.

    Each line reads "[name] cell k/n (T elapsed): first line", T counted from the creation of this object;
    `done` gives the closing line. Cells are counted as in the executed copy: papermill's injected parameters
    cell (folded into the parameters cell afterwards) runs without a line of its own.

    Parameters
    ----------
    name : str
        The notebook's name, leading each line.
    stream : TextIO or None
        Where the lines go (None: nowhere).
    clock : callable
        Seconds, for the elapsed times (default `time.monotonic`).
    """

    def __init__(self, name: str, stream: TextIO | None = sys.stderr, clock=time.monotonic):
        self.name, self.stream, self.clock = name, stream, clock
        self.t0 = clock()
        self.code: dict[int, int] = {}
        self.started: dict[int, float] = {}
        self.durations: dict[int, float] = {}

    def say(self, text: str) -> None:
        """Write "[name] text" to the stream, flushed.

        Parameters
        ----------
        text : str
            The line's text, after the "[name] " prefix; nothing is written when the stream is None.
        """
        if self.stream is not None:
            print(f"[{self.name}] {text}", file=self.stream, flush=True)

    def elapsed(self) -> float:
        """Seconds since this object was created."""
        return self.clock() - self.t0

    def on_notebook_start(self, notebook: dict, **_: object) -> None:
        """Number the code cells that will run and say that the kernel is ready.

        Parameters
        ----------
        notebook : dict
            The notebook about to run (nbformat's JSON: its "cells"); code cells that are blank or tagged as papermill's
            injected parameters get no number.
        **_ : object
            nbclient's other keyword arguments, ignored.
        """
        runs = [i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code" and as_text(c["source"]).strip()
                and INJECTED_TAG not in cell_tags(c)]
        self.code = {i: k + 1 for k, i in enumerate(runs)}
        from ..report.display import format_seconds

        self.say(f"kernel ready after {format_seconds(self.elapsed())}; {len(runs)} code cells to run")

    def on_cell_start(self, cell: dict, cell_index: int, **_: object) -> None:
        """Write the line of a numbered code cell that starts.

        Parameters
        ----------
        cell : dict
            The cell (nbformat's JSON), whose first line (`first_line`) ends the progress line.
        cell_index : int
            Its position among the notebook's cells; a cell `on_notebook_start` did not number writes nothing.
        **_ : object
            nbclient's other keyword arguments, ignored.
        """
        if cell_index not in self.code:
            return
        from ..report.display import format_seconds

        self.started[cell_index] = self.clock()
        self.say(f"cell {self.code[cell_index]}/{len(self.code)} ({format_seconds(self.elapsed())} elapsed): "
                 f"{first_line(as_text(cell['source']))}")

    def on_cell_executed(self, cell: dict, cell_index: int, **_: object) -> None:
        """Record the duration of a numbered code cell that finished.

        Parameters
        ----------
        cell : dict
            The cell (nbformat's JSON), unused.
        cell_index : int
            Its position among the notebook's cells; only a cell whose start was recorded gets a duration.
        **_ : object
            nbclient's other keyword arguments, ignored.
        """
        if cell_index in self.started:
            self.durations[cell_index] = self.clock() - self.started[cell_index]

    def hooks(self) -> dict[str, object]:
        """The hooks as papermill's keyword arguments."""
        return {"on_notebook_start": self.on_notebook_start, "on_cell_start": self.on_cell_start,
                "on_cell_executed": self.on_cell_executed}

    def done(self, what: str) -> str:
        """Write and return the closing line.

        Parameters
        ----------
        what : str
            How the run ended ("wrote X in", "failed after").

        Returns
        -------
        str
            `what`, the wall time and the slowest cell.
        """
        from ..report.display import format_seconds

        text = f"{what} {format_seconds(self.elapsed())}"
        if self.durations:
            slow = max(self.durations, key=self.durations.get)
            text += (f" (slowest: cell {self.code[slow]}/{len(self.code)}, "
                     f"{format_seconds(self.durations[slow])})")
        self.say(text)
        return text


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
    """Remove the private folders under `work_root` whose `execute` process is gone.

    A SIGKILL leaves a run's folder behind; every other exit removes it. A folder's name carries its
    process id (`<notebook>-pid<pid>-<random>`); folders of live processes, as under `make -j`, are left
    alone.

    Parameters
    ----------
    work_root : str or Path
        The folder holding the runs' private folders.

    Returns
    -------
    list of Path
        The folders removed.
    """
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
    """Refuse, before a notebook runs, an `output` that could not be written after it.

    Refused: an existing directory, or a file or folder this process may not write (which would otherwise
    be found only after the whole run, once its figures were published).

    Parameters
    ----------
    output : str or Path
        The executed notebook's file; folders still to create must be creatable.

    Returns
    -------
    None
        When `output` can be written (ValueError or PermissionError otherwise).
    """
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
            work_root: str | Path = WORK_ROOT, timings: str | Path | None = None,
            progress: TextIO | None = sys.stderr) -> Path:
    """Execute a jupytext notebook into a cleaned, checked executed copy and publish its figures.

    Converts `source` (jupytext percent format), runs it with papermill (parameter `profile`, working
    directory = the source's folder), cleans it (`clean_notebook`), checks it (`check_notebook`, with the
    figures it saved) and writes it to `output`; publishes its figures into `figures`. Raises papermill's
    PapermillExecutionError (naming the cell) when a cell fails and UncleanOutputError when the outputs are
    not clean; in both cases neither `output` nor `figures` is touched.

    Parameters
    ----------
    source : str or Path
        The notebook's jupytext source.
    output : str or Path
        The executed notebook's file.
    figures : str or Path
        The figures folder to publish into.
    profile : str
        The value of the notebook's `profile` parameter.
    work_root : str or Path
        Where the run's private folder is made.
    timings : str or Path, optional
        The timings file to record the wall time in (`record_timing`), with the stage profile beside it
        (`record_stages`); None records nothing.
    progress : TextIO or None
        Where the progress lines go (None: silent).

    Returns
    -------
    Path
        `output`.
    """
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
        report.say(f"executing {shown(source)} (profile {profile}) into {shown(output)}")
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
            write_atomic(rejected, dump_notebook(nb))
            raise UncleanOutputError(f"{err}\nnothing was written; the executed notebook is kept for inspection "
                                     f"as {shown(rejected)}") from None
        write_atomic(run, dump_notebook(nb))
        publish_figures(stage, figures, name)
        output.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(run), str(output))  # same filesystem: an atomic rename
        rejected.unlink(missing_ok=True)
        status = "ok"
        report.done(f"wrote {shown(output)} in")
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


def shown(path: Path) -> str:
    """`path` relative to the current folder when it lies inside it (progress lines stay short).

    Parameters
    ----------
    path : Path
        Any path; resolved first.

    Returns
    -------
    str
        The relative path, or the absolute one when `path` lies outside the current folder.
    """
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
