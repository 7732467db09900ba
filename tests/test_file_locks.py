"""The package's one file lock (`files.locked`: the notebooks' shared tables, the step-size selection of concurrent
shards, `ResultLog`'s one writer, `ancer-certify`'s OUTFILE) and the temporary files of atomic writes: a writer
killed mid-write leaves its `.<name>.<8 chars>.tmp`, which the next successful write of the same file removes
(and only those: another file's, or a live writer's, stay)."""
import fcntl
import os
import subprocess
import sys

import pytest

from ancer_lite.core import files
from ancer_lite.runs.logs import ResultLog


def test_locked_waits_for_another_process_saying_so_once_or_raises_without_waiting(tmp_path, capsys):
    target = tmp_path / "sub" / "log.tsv"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom ancer_lite.core import files\n"
        f"with files.locked({str(target)!r}):\n    print('held', flush=True)\n    sys.stdin.readline()\n"
        "    time.sleep(2)\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        assert files.lock_path(target) == tmp_path / "sub" / ".log.tsv.lock" and files.lock_path(target).exists()
        with pytest.raises(BlockingIOError):
            with files.locked(target, wait=False):
                pass
        with pytest.raises(RuntimeError, match=r"being written by another ResultLog \(lock .*\.log\.tsv\.lock is held\)"):
            ResultLog(target)
        holder.stdin.write("\n")
        holder.stdin.flush()  # the holder lets go 2 s later
        with files.locked(target, waiting="waiting for log.tsv"):
            assert holder.wait(5) == 0
    finally:
        holder.kill()
        holder.wait()
    assert capsys.readouterr().err == "waiting for log.tsv\n"
    with files.locked(target, waiting="not printed"):  # free: no message
        pass
    assert capsys.readouterr().err == ""
    ResultLog(target).close()


def test_a_folder_is_locked_itself(tmp_path):
    with files.locked(tmp_path):
        fd = os.open(tmp_path, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    assert list(tmp_path.iterdir()) == []  # no lock file in it


def plant(folder, name):
    path = folder / name
    path.write_text("half a fi")
    return path


def test_a_successful_write_removes_the_temporaries_a_killed_writer_left(tmp_path):
    target = tmp_path / "certify.tsv"
    stale = [plant(tmp_path, ".certify.tsv.k1ll3d_0.tmp"), plant(tmp_path, ".certify.tsv.abcdefgh.tmp")]
    kept = [plant(tmp_path, ".final.tsv.abcdefgh.tmp"),  # another file's
            plant(tmp_path, ".certify.tsv.x.abcdefgh.tmp"),  # the temporary of `certify.tsv.x`
            plant(tmp_path, "certify.tsv.abcdefgh.tmp"),  # not a temporary's name
            plant(tmp_path, ".certify.tsv.abcdefgh.tmp.bak")]
    files.write_atomic(target, "idx\n")
    assert target.read_text() == "idx\n"
    assert not any(p.exists() for p in stale) and all(p.exists() for p in kept)
    assert sorted(p.name for p in tmp_path.glob(".certify.tsv.*")) == [".certify.tsv.abcdefgh.tmp.bak",
                                                                       ".certify.tsv.x.abcdefgh.tmp"]


def test_an_unchanged_file_also_removes_them(tmp_path):
    target = tmp_path / "final.tsv"
    files.write_atomic(target, "a\n")
    stale = plant(tmp_path, ".final.tsv.12345678.tmp")
    assert files.write_if_changed(target, "a\n") is False
    assert not stale.exists()


def test_a_live_writers_temporary_is_kept(tmp_path):
    """A writer holds its temporary's lock until it renames it: the cleanup of a concurrent writer leaves it."""
    target = tmp_path / "table.tsv"
    with files.atomic_file(target) as fh:
        fh.write("first")
        (live,) = tmp_path.glob(".table.tsv.*.tmp")
        files.write_atomic(target, "second")  # another writer of the same file finishes meanwhile
        assert live.exists()
    assert target.read_text() == "first" and list(tmp_path.glob("*.tmp")) == []


def test_a_failed_write_leaves_no_temporary_and_the_old_file(tmp_path):
    target = tmp_path / "table.tsv"
    files.write_atomic(target, "old")
    with pytest.raises(RuntimeError, match="stop"):
        with files.atomic_file(target) as fh:
            fh.write("new")
            raise RuntimeError("stop")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["table.tsv"]
