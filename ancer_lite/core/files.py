"""Files written whole or not at all: a temporary file beside the target, fsynced and renamed onto it, so a
reader never sees half a file and a failed write leaves the old one; NumPy arrays read back without pickles.
Every cache, log, figure and table of the companion is written through here."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

import numpy as np

from .validation import check_path

# the package's folder and the repository's (data/, figures/, build/ are found from it)
PACKAGE_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = PACKAGE_DIR.parent


@contextmanager
def atomic_file(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file beside `path` and, if the block succeeds, fsync it and os.replace it onto
    `path`; on any error the temporary file is removed and `path` is left as it was. path: a str or os.PathLike
    (TypeError otherwise)."""
    check_path(path, "path")
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp creates 0600; give the file the usual permissions
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, text: str) -> None:
    """Write text (a str; TypeError otherwise) to path atomically (see `atomic_file`)."""
    check_path(path, "path")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    with atomic_file(path) as fh:
        fh.write(text)


def write_if_changed(path: str | Path, text: str) -> bool:
    """`write_atomic(path, text)` unless path already holds exactly `text`; returns whether it wrote. A complete
    results folder is reused without a write, so it may be read-only (shared, or archived)."""
    check_path(path, "path")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    try:
        if Path(path).read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass  # missing or unreadable: (re)write it
    write_atomic(path, text)
    return True


def load_array(path: str | Path) -> np.ndarray:
    """A NumPy array saved with `np.save` (never a pickle). A missing, truncated or foreign file raises an
    error naming the file (np.load's own message suggests allow_pickle and omits the path). path: a str or
    os.PathLike (TypeError otherwise)."""
    path = Path(check_path(path, "path"))
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise
    except (ValueError, OSError, EOFError) as e:
        raise ValueError(f"{path} is not a readable NumPy array file ({type(e).__name__}: {e}); delete it (and "
                         "its results folder) to recompute it") from e
