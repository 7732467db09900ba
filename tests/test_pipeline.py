"""The notebook pipeline leaves nothing half-written: a failing or killed notebook writes no executed
copy, publishes no figure and leaves no intermediate files; `make all PROFILE=paper` without data
lists every missing input before it runs any notebook."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ancer_lite import pipeline
from ancer_lite.profiles import get_profile
from ancer_lite.setups import missing_inputs

REPO = Path(__file__).resolve().parent.parent

CELL = """# %%
import time
import matplotlib.pyplot as plt
from ancer_lite.figures import save_fig
print("profile", profile)
fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1])
save_fig(fig, "extra_fig_{name}", "a test figure")
print("figure saved", flush=True)
"""


def write_notebook(folder: Path, name: str, tail: str = "") -> Path:
    src = folder / f"{name}.py"
    src.write_text("# %% tags=[\"parameters\"]\nprofile = \"quick\"\n\n" + CELL.format(name=name) + tail)
    return src


def run_execute(src: Path, tmp: Path, **kw) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "ancer_lite.pipeline", "execute", str(src), "--output", str(tmp / "exec" / f"{src.stem}.ipynb"),
           "--figures", str(tmp / "figures"), "--work-root", str(tmp / "build")]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def leftovers(tmp: Path) -> list[str]:
    return sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file() and p.suffix != ".py")


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "nb").mkdir()
    (tmp_path / "figures").mkdir()
    return tmp_path


def test_success_publishes_notebook_and_figures(workdir):
    src = write_notebook(workdir / "nb", "ok")
    proc = run_execute(src, workdir)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert leftovers(workdir) == ["exec/ok.ipynb", "figures/extra_fig_ok.pdf", "figures/extra_fig_ok.png",
                                  "figures/index.tsv"]
    nb = json.loads((workdir / "exec" / "ok.ipynb").read_text())
    text = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "profile quick" in text and "figure saved" in text
    assert "extra_fig_ok\tok\ta test figure" in (workdir / "figures" / "index.tsv").read_text()


def test_failing_cell_writes_nothing(workdir):
    src = write_notebook(workdir / "nb", "bad", "\n# %%\nraise RuntimeError('the cell fails')\n")
    (workdir / "figures" / "extra_fig_bad.png").write_bytes(b"old figure")
    proc = run_execute(src, workdir)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1
    assert "cell" in err and "the cell fails" in err and "nothing was written" in err
    assert leftovers(workdir) == ["figures/extra_fig_bad.png"]  # the old figure untouched, no intermediates
    assert (workdir / "figures" / "extra_fig_bad.png").read_bytes() == b"old figure"


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


def test_strip_merges_split_stream_outputs(tmp_path):
    nb = {"cells": [{"cell_type": "code", "metadata": {"papermill": {}}, "source": "", "execution_count": 1,
                     "outputs": [{"output_type": "stream", "name": "stdout", "text": ["a\n", "b\n"]},
                                 {"output_type": "stream", "name": "stdout", "text": "c\n"},
                                 {"output_type": "stream", "name": "stderr", "text": "warn\n"},
                                 {"output_type": "stream", "name": "stdout", "text": "d\n"}]}],
          "metadata": {"papermill": {"duration": 1.0}}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb))
    pipeline.strip_notebook(path)
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
    assert "needs 13 missing input(s)" in proc.stderr and str(tmp_path / "checkpoints") in proc.stderr
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
    assert pipeline.publish_figures(stage, figures, "nb") == ["extra_fig_kept"]
    assert sorted(p.name for p in figures.iterdir()) == [
        "extra_fig_kept.pdf", "extra_fig_kept.png", "extra_fig_other.pdf", "extra_fig_other.png", "index.tsv"]
    assert (figures / "extra_fig_kept.png").read_text() == "new"
    assert (figures / "index.tsv").read_text() == ("name\tnotebook\treproduces\nextra_fig_kept\tnb\tA2\n"
                                                   "extra_fig_other\tother\tC\n")
