"""Files written whole or not at all: a temporary file beside the target, fsynced and renamed onto it, so a
reader never sees half a file and a failed write leaves the old one (and a writer that was killed leaves a
temporary file that the next successful write of the target removes); NumPy arrays read back without pickles;
the one exclusive file lock (`locked`) that writers sharing a file or folder take turns on. Every cache, log,
figure and table of the companion is written through here."""
from __future__ import annotations

import fcntl
import hashlib
import os
import re
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

import numpy as np

from .validation import check_path

# the package's folder and the repository's (data/, figures/, build/ are found from it)
PACKAGE_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = PACKAGE_DIR.parent


def lock_path(path: str | Path) -> Path:
    """The lock file of a file `path`: `.<name>.lock` beside it (what `locked` locks).

    Parameters
    ----------
    path : str or os.PathLike
        The file the lock guards (TypeError otherwise).

    Returns
    -------
    Path
    """
    path = Path(check_path(path, "path"))
    return path.parent / f".{path.name}.lock"


@contextmanager
def locked(path: str | Path, waiting: str | None = None, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive flock for the block: writers of one file or folder (processes, or calls in one process)
    take turns. The kernel releases the lock when its holder dies, so a killed writer never leaves it held.

    Parameters
    ----------
    path : str or os.PathLike
        A file, locked through `lock_path(path)` (`.<name>.lock` beside it, created with its folder if needed), or
        an existing folder, locked itself (which leaves no lock file in it).
    waiting : str, optional
        Printed to stderr, once, when another holder has the lock and the block has to wait for it.
    wait : bool
        False: raise BlockingIOError at once when another holder has the lock, instead of waiting.

    Returns
    -------
    Iterator[None]
        A context manager; leaving the block releases the lock.
    """
    path = Path(check_path(path, "path"))
    if path.is_dir():
        fd = os.open(path, os.O_RDONLY)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                raise
            if waiting is not None:
                print(waiting, file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def atomic_file(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file beside `path` and, if the block succeeds, fsync it and os.replace it onto
    `path`, then remove the temporary files of `path` that earlier writers left behind when they were killed
    (`remove_stale_temporaries`); on any error the temporary file is removed and `path` is left as it was.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (TypeError otherwise); its folder is created when missing.
    mode : str, default "w"
        "w" (text, UTF-8) or "wb" (bytes); ValueError otherwise.

    Yields
    ------
    IO
        The open temporary file to write to.
    """
    check_path(path, "path")
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _held_temporary(path)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp creates 0600; give the file the usual permissions
        # the descriptor stays open (holding the temporary's lock) until the file is renamed
        with os.fdopen(fd, mode, closefd=False, **({"encoding": "utf-8"} if mode == "w" else {})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
        os.close(fd)
    remove_stale_temporaries(path)


def _temporary_name(path: Path) -> re.Pattern:
    """The names `atomic_file` gives the temporary files of `path`: `.<name>.` + mkstemp's 8 characters + `.tmp`."""
    return re.compile(re.escape(f".{path.name}.") + r"[a-z0-9_]{8}" + re.escape(".tmp"))


def _held_temporary(path: Path) -> tuple[int, str]:
    """A new temporary file beside `path` (`_temporary_name`) and its descriptor, holding an exclusive flock on it
    that marks it as being written (`remove_stale_temporaries` leaves it alone)."""
    while True:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fstat(fd).st_nlink:
            return fd, tmp
        os.close(fd)  # removed as stale between its creation and the lock: make another


def remove_stale_temporaries(path: str | Path) -> list[Path]:
    """Remove the temporary files of `path` left beside it by `atomic_file` writers that were killed before they
    renamed them: only files named as `atomic_file` names the temporaries of this `path`, and only those no live
    writer holds (a writer holds its temporary's flock until it is renamed). One that cannot be removed (a
    read-only folder) is left.

    Parameters
    ----------
    path : str or os.PathLike
        The target whose temporaries to remove (TypeError otherwise).

    Returns
    -------
    list of Path
        The files removed.
    """
    path = Path(check_path(path, "path"))
    name = _temporary_name(path)
    try:
        entries = [e for e in os.scandir(path.parent) if name.fullmatch(e.name) and e.is_file(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []
    removed = []
    for entry in entries:
        try:
            fd = os.open(entry.path, os.O_RDONLY)
        except OSError:  # renamed or removed meanwhile, or unreadable
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.stat(entry.path).st_ino == os.fstat(fd).st_ino:  # still the file that was locked
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:  # a live writer's (BlockingIOError), renamed meanwhile, or in a read-only folder
            pass
        finally:
            os.close(fd)
    return removed


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, text: str) -> None:
    """Write text (a str; TypeError otherwise) to path atomically (see `atomic_file`).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (TypeError otherwise).
    text : str
        Its new content, written as UTF-8.
    """
    check_path(path, "path")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    with atomic_file(path) as fh:
        fh.write(text)


def write_if_changed(path: str | Path, text: str) -> bool:
    """`write_atomic(path, text)` unless path already holds exactly `text`; returns whether it wrote. A complete
    results folder is reused without a write, so it may be read-only (shared, or archived). Either way the
    temporaries of `path` that killed writers left are removed (`remove_stale_temporaries`).

    Parameters
    ----------
    path : str or os.PathLike
        The file (TypeError otherwise); a missing or unreadable one is (re)written.
    text : str
        Its content (TypeError otherwise).

    Returns
    -------
    bool
        True when the file was written, False when it already held `text`.
    """
    check_path(path, "path")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    try:
        if Path(path).read_text(encoding="utf-8") == text:
            remove_stale_temporaries(path)
            return False
    except (OSError, UnicodeDecodeError):
        pass  # missing or unreadable: (re)write it
    write_atomic(path, text)
    return True


def load_array(path: str | Path) -> np.ndarray:
    """A NumPy array saved with `np.save` (never a pickle). A missing, truncated or foreign file raises an
    error naming the file (np.load's own message suggests allow_pickle and omits the path).

    Parameters
    ----------
    path : str or os.PathLike
        The .npy file (TypeError otherwise).

    Returns
    -------
    numpy.ndarray
        The array as saved (its shape and dtype).

    Raises
    ------
    FileNotFoundError
        When the file is missing.
    ValueError
        When it is truncated, foreign or would need pickle.
    """
    path = Path(check_path(path, "path"))
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise
    except (ValueError, OSError, EOFError) as e:
        raise ValueError(f"{path} is not a readable NumPy array file ({type(e).__name__}: {e}); delete it (and "
                         "its results folder) to recompute it") from e


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, read in blocks of 1 MiB.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    str
        The hex digest.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
