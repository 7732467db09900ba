"""The notebook pipeline leaves nothing half-written: a failing or killed notebook writes no executed
copy, publishes no figure and leaves no intermediate files; `make all PROFILE=paper` without data
lists every missing input before it runs any notebook. It reports one progress line per code cell,
records wall times for the closing summary, folds papermill's injected parameters into the one
parameters cell (nbval re-runs still reproduce the outputs) and rejects unclean outputs."""
import io
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ancer_lite.core.files import REPO_ROOT
from ancer_lite.report.figures import read_index
from ancer_lite.runs.profiles import get_profile
from ancer_lite.runs.setups import missing_inputs
from ancer_lite.tooling.execute import Progress, check_writable_output, remove_stale_work
from ancer_lite.tooling.notebook_checks import (
    UncleanOutputError,
    check_notebook,
    notebook_problems,
    parameters_problems,
)
from ancer_lite.tooling.notebook_clean import (
    clean_notebook,
    is_finding,
    merge_parameter_sources,
    read_notebook,
    strip_notebook,
)
from ancer_lite.tooling.publish import publish_figures
from ancer_lite.tooling.timings import (
    read_stage_profile,
    read_timings,
    record_stages,
    record_timing,
    stage_table,
    stages_path,
    summary,
)

REPO = Path(__file__).resolve().parent.parent

CELL = """# %%
# NBVAL_CHECK_OUTPUT
import time
import matplotlib.pyplot as plt
from ancer_lite.report.figures import save_fig
print("profile", profile)

# %%
fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1])
save_fig(fig, "extra_fig_{name}", "a test figure")
print("figure saved", flush=True)
"""


def write_notebook(folder: Path, name: str, tail: str = "") -> Path:
    src = folder / f"{name}.py"
    src.write_text("# %% tags=[\"parameters\"]\nprofile = \"quick\"\n\n" + CELL.format(name=name) + tail)
    return src


def run_execute(src: Path, tmp: Path, *args: str, **kw) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "ancer_lite.tooling.pipeline", "execute", str(src), "--output", str(tmp / "exec" / f"{src.stem}.ipynb"),
           "--figures", str(tmp / "figures"), "--work-root", str(tmp / "build"), "--timings", str(tmp / "times" / "timings.tsv"),
           *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def leftovers(tmp: Path) -> list[str]:
    """Files the run left, but the sources and the timings (kept by design, checked separately)."""
    return sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*")
                  if p.is_file() and p.suffix != ".py" and p.parent.name != "times")


def timing_status(tmp: Path, name: str) -> str:
    df = read_timings(tmp / "times" / "timings.tsv")
    return df.loc[df["notebook"] == name, "status"].item()


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "nb").mkdir()
    (tmp_path / "figures").mkdir()
    return tmp_path


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """One successful run of a small notebook with profile "paper" (not its default "quick", so
    papermill injects a different value): (folder, stderr)."""
    tmp = tmp_path_factory.mktemp("executed")
    (tmp / "nb").mkdir()
    src = write_notebook(tmp / "nb", "ok")
    proc = run_execute(src, tmp, "--profile", "paper")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return tmp, err


def test_success_publishes_notebook_and_figures(executed):
    workdir, _ = executed
    assert leftovers(workdir) == ["exec/ok.ipynb", "figures/extra_fig_ok.pdf", "figures/extra_fig_ok.png",
                                  "figures/index.tsv"]
    nb = json.loads((workdir / "exec" / "ok.ipynb").read_text())
    text = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "profile paper" in text and "figure saved" in text
    assert "extra_fig_ok\tok\ta test figure" in (workdir / "figures" / "index.tsv").read_text()
    assert notebook_problems(nb, "ok", ["extra_fig_ok"]) == []


def test_progress_one_line_per_code_cell(executed):
    """Before: `make all` printed ipykernel's TCP warning and then nothing until the notebook ended."""
    workdir, err = executed
    nb = json.loads((workdir / "exec" / "ok.ipynb").read_text())
    n_code = sum(c["cell_type"] == "code" for c in nb["cells"])  # numbered as in the executed copy
    cells = [line for line in err.splitlines() if line.startswith("[ok] cell ")]
    assert [line.split()[2] for line in cells] == [f"{k}/{n_code}" for k in range(1, n_code + 1)]
    assert all(re.fullmatch(r"\[ok\] cell \d+/\d+ \([0-9.]+ s elapsed\): .+", line) for line in cells), cells
    assert "# Parameters" not in err  # papermill's injected cell: no line of its own
    assert "cell 2/3 (" in err and "): import time" in err  # "# NBVAL_CHECK_OUTPUT" is not what a cell does
    assert "\r" not in err and "without encryption" not in err  # IPC transport: no TCP warning
    assert re.search(r"^\[ok\] wrote .*ok\.ipynb in [0-9.]+ s \(slowest: cell \d/3, [0-9.]+ s\)$", err, re.M), err
    assert timing_status(workdir, "ok") == "ok"


def test_one_parameters_cell_holding_the_injected_values(executed):
    workdir, _ = executed
    nb = json.loads((workdir / "exec" / "ok.ipynb").read_text())
    params = [c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", [])]
    assert len(params) == 1 and "".join(params[0]["source"]) == 'profile = "paper"'
    assert parameters_problems(nb, "ok") == []
    counts = [c["execution_count"] for c in nb["cells"] if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1))


def test_nbval_rerun_of_the_merged_notebook_reproduces_its_outputs(executed, tmp_path):
    """The checked cell prints the profile: it matches only if the merged cell sets "paper"."""
    workdir, _ = executed
    proc = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "-p", "no:cacheprovider", "-q",
                           str(workdir / "exec" / "ok.ipynb")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "ANCER_FIGURES_DIR": str(tmp_path)}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout


def test_unclean_outputs_write_nothing(workdir):
    """An absolute path in an output, or a saved figure that no output shows, rejects the run."""
    src = workdir / "nb" / "unclean.py"
    src.write_text('# %% tags=["parameters"]\nprofile = "quick"\n\n# %%\nimport os, pathlib\n'
                   'pathlib.Path(os.environ["ANCER_FIGURES_DIR"], "index.tsv").write_text(\n'
                   '    "name\\tnotebook\\treproduces\\nextra_fig_unshown\\tunclean\\tX\\n")\n'
                   'print("saved to /home/user/figure.png")\n')
    proc = run_execute(src, workdir)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    assert "unclean: cell 1, output 0 (stdout) contains an absolute path ('/home/')" in err
    assert "unclean: saves 1 figure(s) (extra_fig_unshown) but shows only 0 image/png output(s)" in err
    assert "nothing was written" in err and "Traceback" not in err
    assert leftovers(workdir) == ["build/unclean.rejected.ipynb"]
    assert timing_status(workdir, "unclean") == "unclean"


def test_failing_cell_writes_nothing(workdir):
    src = write_notebook(workdir / "nb", "bad", "\n# %%\nraise RuntimeError('the cell fails')\n")
    (workdir / "figures" / "extra_fig_bad.png").write_bytes(b"old figure")
    proc = run_execute(src, workdir)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1
    assert "cell" in err and "the cell fails" in err and "nothing was written" in err
    assert leftovers(workdir) == ["figures/extra_fig_bad.png"]  # the old figure untouched, no intermediates
    assert (workdir / "figures" / "extra_fig_bad.png").read_bytes() == b"old figure"
    assert timing_status(workdir, "bad") == "failed"


def test_sigterm_leaves_no_intermediates(workdir):
    src = write_notebook(workdir / "nb", "slow", "\n# %%\ntime.sleep(120)\n")
    proc = run_execute(src, workdir)
    deadline = time.time() + 120
    while not list((workdir / "build").rglob("extra_fig_slow.png")):  # staged: the notebook is running
        assert proc.poll() is None and time.time() < deadline, proc.communicate()
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert leftovers(workdir) == []
    assert list((workdir / "build").iterdir()) == []
    assert timing_status(workdir, "slow") == "interrupted"


def test_strip_merges_split_stream_outputs(tmp_path):
    nb = {"cells": [{"cell_type": "code", "metadata": {"papermill": {}}, "source": "", "execution_count": 1,
                     "outputs": [{"output_type": "stream", "name": "stdout", "text": ["a\n", "b\n"]},
                                 {"output_type": "stream", "name": "stdout", "text": "c\n"},
                                 {"output_type": "stream", "name": "stderr", "text": "warn\n"},
                                 {"output_type": "stream", "name": "stdout", "text": "d\n"}]}],
          "metadata": {"papermill": {"duration": 1.0}}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb))
    strip_notebook(path)
    got = json.loads(path.read_text())
    assert [(o["name"], o["text"]) for o in got["cells"][0]["outputs"]] == [
        ("stdout", "a\nb\nc\n"), ("stderr", "warn\n"), ("stdout", "d\n")]
    assert "papermill" not in got["metadata"] and got["cells"][0]["id"] == "cell-000"


def test_missing_paper_inputs_are_all_listed(tmp_path):
    missing = [str(p.relative_to(tmp_path)) for p, _ in missing_inputs(get_profile("paper"), tmp_path)]
    assert "cifar10/cifar-10-batches-py/test_batch" in missing and len(missing) == 6 + 4 + 3
    assert missing_inputs(get_profile("quick"), tmp_path) == []


def test_make_all_paper_without_data_fails_before_any_notebook(tmp_path):
    """Before: notebooks 01-02 ran for minutes before notebook 03 found no data."""
    exec_dir = REPO / "notebooks" / "executed-paper"
    before = sorted(exec_dir.iterdir()) if exec_dir.exists() else None
    t0 = time.perf_counter()
    # PY / STAMP point make at this interpreter (no venv needed); DATA_DIR is an empty folder
    proc = subprocess.run(["make", "-C", str(REPO), "all", "PROFILE=paper", f"DATA_DIR={tmp_path}",
                           f"PY={sys.executable}", "STAMP="], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MAKEFLAGS": ""})
    assert proc.returncode != 0
    assert time.perf_counter() - t0 < 60
    # the 6 CIFAR-10 files, then the 7 checkpoints `ancer-certify checkpoints` trains from them
    assert "needs 6 missing input(s)" in proc.stderr and "and then 7 checkpoint(s) trained" in proc.stderr
    assert proc.stderr.count(str(tmp_path / "checkpoints")) == 7
    assert "papermill" not in proc.stdout + proc.stderr
    assert (sorted(exec_dir.iterdir()) if exec_dir.exists() else None) == before


def test_publish_replaces_the_notebooks_figures_only(tmp_path):
    """A figure that a notebook no longer draws (e.g. renamed) is removed with its index row; other
    notebooks' figures stay."""
    figures, stage = tmp_path / "figures", tmp_path / "stage"
    figures.mkdir()
    stage.mkdir()
    for name in ("extra_fig_old", "extra_fig_kept", "extra_fig_other"):
        for suffix in (".pdf", ".png"):
            (figures / f"{name}{suffix}").write_text("old")
    (figures / "index.tsv").write_text("name\tnotebook\treproduces\nextra_fig_kept\tnb\tA\n"
                                       "extra_fig_old\tnb\tB\nextra_fig_other\tother\tC\n")
    (stage / "extra_fig_kept.png").write_text("new")
    (stage / "extra_fig_kept.pdf").write_text("new")
    (stage / "index.tsv").write_text("name\tnotebook\treproduces\nextra_fig_kept\tnb\tA2\n")
    assert publish_figures(stage, figures, "nb") == ["extra_fig_kept"]
    assert sorted(p.name for p in figures.iterdir()) == [
        "extra_fig_kept.pdf", "extra_fig_kept.png", "extra_fig_other.pdf", "extra_fig_other.png", "index.tsv"]
    assert (figures / "extra_fig_kept.png").read_text() == "new"
    assert (figures / "index.tsv").read_text() == ("name\tnotebook\treproduces\tcaption\nextra_fig_kept\tnb\tA2\t\n"
                                                   "extra_fig_other\tother\tC\t\n")


def test_notebooks_published_side_by_side_keep_each_others_rows(tmp_path):
    """Notebooks run side by side (`make -j`) publish into one figures folder; they take turns on the
    index (a read-modify-write), so no notebook's rows are lost, and no lock file is left there."""
    figures = tmp_path / "figures"
    figures.mkdir()

    def publish(worker: int) -> None:
        for i in range(40):
            notebook = f"nb{worker}_{i:02d}"
            stage = tmp_path / f"stage-{notebook}"
            stage.mkdir()
            (stage / f"fig_{notebook}.png").write_text("png")
            (stage / "index.tsv").write_text(f"name\tnotebook\treproduces\nfig_{notebook}\t{notebook}\tx\n")
            publish_figures(stage, figures, notebook)

    workers = [multiprocessing.get_context("fork").Process(target=publish, args=(k,)) for k in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
        assert w.exitcode == 0
    expected = sorted(f"nb{k}_{i:02d}" for k in range(4) for i in range(40))
    assert sorted(read_index(figures / "index.tsv")["notebook"]) == expected
    assert sorted(p.name for p in figures.iterdir()) == sorted([f"fig_{n}.png" for n in expected] + ["index.tsv"])


# ---- pure functions: parameters merge, clean-output guard, progress lines, timings summary ----------

MERGE_CASES = [
    ('profile = "quick"  # quick | paper\nseed = 0\n', '# Parameters\nprofile = "quick"\n'),  # same value
    ('profile = "quick"  # quick | paper\nseed = 0\n', '# Parameters\nprofile = "paper"\n'),  # replaced in place
    ('profile = "quick"\ngrid = (0.1,\n        1.0)\n', '# Parameters\ngrid = (2.0,)\nseed = 3\n'),  # multi-line; new name
    ('profile = "quick"\nn = 3 if profile == "quick" else 5\n', '# Parameters\nprofile = "paper"\n'),  # read later
    ('profile = "quick"\nprofile = "other"\n', '# Parameters\nprofile = "paper"\n'),  # assigned twice
]


def run_source(*sources: str) -> dict:
    ns: dict = {}
    for src in sources:
        exec(src, ns)
    ns.pop("__builtins__")
    return ns


@pytest.mark.parametrize("params,injected", MERGE_CASES)
def test_merged_parameters_cell_equals_running_both_cells(params, injected):
    merged = merge_parameter_sources(params, injected)
    assert run_source(merged) == run_source(params, injected)


def test_merged_parameters_keep_the_cells_text_where_values_agree():
    params, same, other = MERGE_CASES[0][0], MERGE_CASES[0][1], MERGE_CASES[1][1]
    assert merge_parameter_sources(params, same) == params  # comment kept, nothing shown twice
    assert merge_parameter_sources(params, other) == 'profile = "paper"\nseed = 0\n'
    read_later = merge_parameter_sources(*MERGE_CASES[3])
    assert read_later.startswith(MERGE_CASES[3][0]) and read_later.endswith('profile = "paper"\n')


def code_cell(source: str, tags: tuple[str, ...] = (), outputs: tuple[dict, ...] = (), count: int | None = None) -> dict:
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": source, "execution_count": count,
            "outputs": list(outputs)}


def test_clean_notebook_folds_the_injected_cell_into_the_parameters_cell():
    result = {"output_type": "execute_result", "data": {"text/plain": "2"}, "metadata": {}, "execution_count": 4}
    nb = {"metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "# Title"},
        code_cell('profile = "quick"\n', ("parameters",), count=1),
        code_cell('# Parameters\nprofile = "paper"\n', ("injected-parameters",), count=2),
        code_cell("1 + 1", outputs=(result,), count=4)]}
    got = clean_notebook(nb)
    assert [c["cell_type"] for c in got["cells"]] == ["markdown", "code", "code"]
    assert got["cells"][1]["metadata"]["tags"] == ["parameters"] and got["cells"][1]["source"] == ['profile = "paper"\n']
    assert [c.get("execution_count") for c in got["cells"]] == [None, 1, 2]
    assert got["cells"][2]["outputs"][0]["execution_count"] == 2
    assert [c["id"] for c in got["cells"]] == ["cell-000", "cell-001", "cell-002"]
    assert parameters_problems(got, "nb") == []
    assert clean_notebook(got) == got  # idempotent: `strip` may run again on a committed copy

    no_params = {"metadata": {}, "cells": [code_cell('# Parameters\nprofile = "paper"\n', ("injected-parameters",))]}
    assert clean_notebook(no_params)["cells"][0]["metadata"]["tags"] == ["parameters"]


def markdown_output(text: str) -> dict:
    return {"output_type": "display_data", "data": {"text/markdown": text, "text/plain": text}, "metadata": {}}


def test_findings_become_markdown_cells_and_nothing_else_does():
    said = (markdown_output("**C1 holds.**"), markdown_output("ACR 0.51"))
    cells = [code_cell("md(words(x))\nmd('ACR 0.51')", ("hide-input",), said, count=1),
             code_cell("md(words(x))", ("hide-input", "nbval-check-output"), said[:1], count=2),  # nbval checks it
             code_cell("y = 2\nmd(words(y))", ("hide-input",), said[:1], count=3),         # defines y
             code_cell("md(words(x))", (), said[:1], count=4),                              # code shown
             code_cell("md(words(x))\nprint(1)", ("hide-input",), said[:1] + (stream("1"),), count=5),
             code_cell("md(words(x))", ("hide-input",), (), count=6),                        # nothing rendered
             code_cell("display(t)", ("hide-input",), said[:1], count=7)]
    nb = {"metadata": {}, "cells": cells}
    got = clean_notebook(nb)
    first = got["cells"][0]
    assert first == {"cell_type": "markdown", "id": "cell-000", "metadata": {"tags": ["finding"]},
                     "source": "**C1 holds.**\n\nACR 0.51"}
    assert [c["cell_type"] for c in got["cells"]] == ["markdown"] + ["code"] * 6
    assert [c["execution_count"] for c in got["cells"][1:]] == [1, 2, 3, 4, 5, 6]
    assert clean_notebook(got) == got
    assert not is_finding(code_cell("md(", ("hide-input",), said[:1]))  # not Python: left alone


def test_findings_under_if_else_become_markdown_but_not_ones_that_define_names():
    said = (markdown_output("**C1 holds.**"),)
    for code in ("if ok:\n    md(a)\nelse:\n    md(b)", "if ok:\n    md(a)\nelif n > 1:\n    md(b)",
                 "md(' '.join(w for w in words))"):  # a comprehension's name stays inside it
        assert is_finding(code_cell(code, ("hide-input",), said)), code
    for code in ("if ok:\n    x = 1\n    md(a)", "for w in words:\n    md(w)", "if (n := len(x)):\n    md(a)",
                 "md(f'{(n := 2)}')", "with ctx:\n    md(a)", "if ok:\n    pass"):  # each leaves a name or does more
        assert not is_finding(code_cell(code, ("hide-input",), said)), code


def stream(text: str, name: str = "stdout") -> dict:
    return {"output_type": "stream", "name": name, "text": text}


def test_guard_names_notebook_cell_and_offending_text():
    png = {"output_type": "display_data", "metadata": {},
           "data": {"image/png": "iVBORw0KGgo/tmp/home/AAA", "text/plain": "<IPython.core.display.Image object>"}}
    clean = {"metadata": {}, "cells": [code_cell("p = 1", ("parameters",)),
                                       code_cell("x", outputs=(stream("relative data/cache/x.csv\n"), png))]}
    assert notebook_problems(clean, "nb", ["extra_fig_a"]) == []  # base64 image data is not text
    repo_path = str(REPO_ROOT / "figures" / "a.png")
    bad = {"metadata": {}, "cells": [
        code_cell("p = 1", ("parameters",), outputs=(stream("done: 3%|#  | 3/100 [00:01<00:30, 3.1it/s]\n", "stderr"),)),
        code_cell("x", outputs=(stream("step 1\rstep 2\n"),)),
        code_cell("y", outputs=({"output_type": "execute_result", "metadata": {}, "execution_count": 3,
                                 "data": {"text/plain": f"[PosixPath('{repo_path}')]"}},)),
        code_cell("z", outputs=({"output_type": "display_data", "metadata": {},
                                 "data": {"text/html": "<p>/tmp/abc</p>"}},)),
        code_cell("p = 2", ("parameters",), outputs=(png,))]}
    problems = notebook_problems(bad, "nb", ["extra_fig_a", "extra_fig_b"])
    assert problems[0].startswith("nb: cell 0, output 0 (stderr) contains a progress bar: ")
    assert problems[1] == "nb: cell 1, output 0 (stdout) contains a progress-bar frame (a carriage return): 'step 1\\rstep 2\\n'"
    assert problems[2].startswith(f"nb: cell 2, output 0 (text/plain) contains an absolute path ({str(REPO_ROOT)!r})")
    assert problems[3] == "nb: cell 3, output 0 (text/html) contains an absolute path ('/tmp/'): '<p>/tmp/abc</p>'"
    assert problems[4].startswith("nb: saves 2 figure(s) (extra_fig_a, extra_fig_b) but shows only 1 image/png output(s)")
    assert problems[5] == "nb: has 2 cells tagged 'parameters'; expected exactly one"
    assert len(problems) == 6
    with pytest.raises(UncleanOutputError, match=r"nb: 6 clean-output problem\(s\)"):
        check_notebook(bad, "nb", ["extra_fig_a", "extra_fig_b"])


def test_progress_lines():
    now = [100.0]
    out = io.StringIO()
    progress = Progress("03_x", out, clock=lambda: now[0])
    cells = [code_cell("# NBVAL_IGNORE_OUTPUT\n\nrun = certify_all()"), {"cell_type": "markdown", "source": "text"},
             code_cell("  \n"), code_cell("print(1)")]
    now[0] += 4
    progress.on_notebook_start(notebook={"cells": cells})
    for i, cell in enumerate(cells):
        progress.on_cell_start(cell=cell, cell_index=i)
        now[0] += 180 if i == 0 else 1
        progress.on_cell_executed(cell=cell, cell_index=i, execute_reply={})
    progress.done("wrote x.ipynb in")
    from ancer_lite.report.display import format_seconds
    assert out.getvalue().splitlines() == [
        f"[03_x] kernel ready after {format_seconds(4)}; 2 code cells to run",
        f"[03_x] cell 1/2 ({format_seconds(4)} elapsed): run = certify_all()",
        f"[03_x] cell 2/2 ({format_seconds(186)} elapsed): print(1)",
        f"[03_x] wrote x.ipynb in {format_seconds(187)} (slowest: cell 1/2, {format_seconds(180)})"]


def test_timings_and_summary(tmp_path):
    path = tmp_path / "timings.tsv"
    record_timing(path, "01_a", "quick", 5.0, "failed", finished=1000.0)
    record_timing(path, "01_a", "quick", 65.0, "ok", finished=2000.0)  # replaces the failed run
    record_timing(path, "02_b", "quick", 30.0, "ok", finished=500.0)   # before this make run
    record_timing(path, "02_b", "paper", 999.0, "ok", finished=2000.0)  # another profile
    df = read_timings(path)
    assert len(df) == 3 and set(df["status"]) == {"ok"}
    from ancer_lite.report.display import format_seconds
    text = summary(["01_a", "02_b", "03_c"], "quick", path, since=1500.0, now=1550.0)
    lines = text.splitlines()
    assert lines[0] == "Notebook wall times (profile quick):"
    assert lines[1].split() == ["01_a", *format_seconds(65).split()]
    assert lines[2].split()[0] == "02_b" and f" {format_seconds(30)}  up to date, not re-run (" in lines[2]
    assert lines[3].split() == ["03_c", "—", "no", "recorded", "run"]
    assert lines[4].split() == ["total", *format_seconds(95).split()]
    assert lines[5].split() == ["this", "run", *format_seconds(65).split(), "(1", "of", "3", "notebooks", "executed)"]
    assert lines[6].split()[:2 + len(format_seconds(50).split())] == ["wall", "clock", *format_seconds(50).split()]


def test_stage_profile_recorded_from_the_kernel(executed):
    """The kernel's stage totals reach build/stages.tsv: the notebook saved one figure (stage
    "figures", one call), nothing else ran in a stage, and "other" + the stages add up to the wall time."""
    workdir, _ = executed
    df = read_stage_profile(workdir / "times" / "stages.tsv").set_index("stage")
    assert df.loc["figures", "calls"] == 1 and df.loc["figures", "seconds"] > 0
    assert (df.drop(index=["figures", "other", "total"])["calls"] == 0).all()
    wall = read_timings(workdir / "times" / "timings.tsv")["seconds"].item()
    assert df.loc["total", "seconds"] == pytest.approx(wall, abs=1e-3)
    assert df.drop(index="total")["seconds"].sum() == pytest.approx(wall, abs=5e-3)


def test_stage_profile_and_summary_table(tmp_path):
    from ancer_lite.core.stages import STAGES
    from ancer_lite.report.display import format_seconds
    timings = tmp_path / "timings.tsv"
    path = stages_path(timings)
    assert path == tmp_path / "stages.tsv"
    zero = {s: {"seconds": 0.0, "calls": 0} for s in STAGES}
    record_stages(path, "01_a", "quick", 50.0, {**zero, "certify": {"seconds": 30.0, "calls": 7}})
    record_stages(path, "01_a", "quick", 60.0, {**zero, "certify": {"seconds": 40.0, "calls": 9},
                                                        "figures": {"seconds": 5.0, "calls": 2}})  # replaces
    record_stages(path, "02_b", "quick", 20.0, {**zero, "training": {"seconds": 20.0, "calls": 1}})
    record_stages(path, "02_b", "paper", 99.0, zero)
    with pytest.raises(ValueError, match="unknown stages \\['warmup'\\]"):
        record_stages(path, "02_b", "quick", 1.0, {"warmup": {"seconds": 1.0, "calls": 1}})
    table = stage_table(["01_a", "02_b", "03_c"], "quick", path)
    assert list(table.columns) == [*STAGES, "other", "total"]
    assert list(table.index) == ["01_a", "02_b", "total"]
    assert table.loc["01_a", "certify"] == 40.0 and table.loc["01_a", "figures"] == 5.0
    assert table.loc["01_a", "other"] == 15.0 and table.loc["02_b", "other"] == 0.0
    assert table.loc["total", "total"] == 80.0 and table.loc["total", "training"] == 20.0
    record_timing(timings, "01_a", "quick", 60.0, "ok")
    text = summary(["01_a", "02_b"], "quick", timings)
    assert "Time by stage (profile quick" in text
    row = next(line for line in text.splitlines()[3:] if line.split()[0] == "01_a")
    assert format_seconds(40.0) in row and format_seconds(15.0) in row


def test_strip_and_check_name_a_file_that_is_not_a_notebook(tmp_path):
    """`pipeline strip` on a non-JSON file names the file (not a bare JSONDecodeError)."""
    bad = tmp_path / "broken.ipynb"
    bad.write_text("not json", encoding="utf-8")
    with pytest.raises(ValueError, match="broken.ipynb is not a Jupyter notebook"):
        strip_notebook(bad)
    (tmp_path / "list.ipynb").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="list.ipynb is not a Jupyter notebook"):
        read_notebook(tmp_path / "list.ipynb")
    for cmd in ("strip", "check"):
        out = subprocess.run([sys.executable, "-m", "ancer_lite.tooling.pipeline", cmd, str(bad)], capture_output=True,
                             text=True, cwd=tmp_path)
        assert out.returncode == 1 and "broken.ipynb is not a Jupyter notebook" in out.stderr
        assert "Traceback" not in out.stderr


def test_execute_refuses_an_unwritable_output_before_running(tmp_path, monkeypatch):
    """An --output naming a directory is refused rather than written inside it, and an unwritable one is found before
    the notebook runs (not after 12 minutes of notebook 03, its figures already published)."""
    src = tmp_path / "nb.py"
    src.write_text("# %%\nraise SystemExit('the notebook must not run')\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    out = subprocess.run([sys.executable, "-m", "ancer_lite.tooling.pipeline", "execute", str(src), "--output",
                          str(tmp_path / "out"), "--figures", str(tmp_path / "figs"), "--work-root",
                          str(tmp_path / "build"), "--timings", ""], capture_output=True, text=True)
    assert out.returncode == 1 and "is a directory" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "build").exists() and not (tmp_path / "figs").exists()
    check_writable_output(tmp_path / "new" / "deeper" / "nb.ipynb")  # folders to create are fine
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # as a user without the rights
    (tmp_path / "done.ipynb").write_text("{}", encoding="utf-8")
    with pytest.raises(PermissionError, match="done.ipynb exists and is not writable"):
        check_writable_output(tmp_path / "done.ipynb")
    with pytest.raises(PermissionError, match="cannot write in"):
        check_writable_output(tmp_path / "sub" / "nb.ipynb")


def test_make_orders_the_notebooks_that_read_each_others_results():
    """`make -j` must not run notebooks 04-07 beside notebook 03, whose results folders they read
    (two writers on one folder), and 06 beside 05, which trains the model it uses."""
    db = subprocess.run(["make", "-C", str(REPO), "-pq", "all"], capture_output=True, text=True).stdout
    order_only = {}
    for line in db.splitlines():
        # "target: | order-only", or, once make has matched the pattern rule, "target: prerequisites | order-only"
        m = re.match(r"^notebooks/executed/(\d\d)_\w+\.ipynb:[^|]*\| (.*)$", line)
        if m:
            order_only[m.group(1)] = set(re.findall(r"executed/(\d\d)_", m.group(2)))
    assert order_only == {"04": {"03"}, "05": {"03"}, "06": {"05"}, "07": {"03"}}


def test_work_folders_left_by_a_killed_run_are_removed(tmp_path):
    """A SIGKILL leaves the run's private folder under build/notebooks/; the next run removes it, and leaves the
    folders of runs that are still going (as under `make -j`) alone."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"03_image_certification-pid{dead.pid}-abc123"
    live = tmp_path / f"04_runtime-pid{os.getpid()}-def456"
    other = tmp_path / "03_image_certification.rejected.ipynb"
    for folder in (stale, live):
        (folder / "figures").mkdir(parents=True)
    other.write_text("{}", encoding="utf-8")
    assert remove_stale_work(tmp_path) == [stale]
    assert not stale.exists() and live.exists() and other.exists()
