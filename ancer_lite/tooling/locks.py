"""An exclusive lock that parallel `pipeline execute` runs (`make -j`) take turns on before a
read-modify-write of a shared table: the timings and stage profile under build/, the figures index."""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive flock for the block, waiting for other holders.

    Parameters
    ----------
    path : Path
        A file, locked through `.<name>.lock` beside it (its folder created if needed), or a folder, locked
        itself (which leaves no lock file in it).

    Returns
    -------
    Iterator[None]
        A context manager; leaving the block releases the lock.
    """
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
