"""Freed memory kept in the process for reuse (glibc's malloc), so that the tensors of each Monte Carlo batch do not
cost page faults.

glibc serves an allocation above its mmap threshold (128 KiB at start, raised to the size of each such block freed,
up to 32 MiB) with a fresh mapping that it unmaps when the block is freed, and it gives the top of its heap back to
the kernel once twice that threshold is free there. Either way the next batch's tensors land on pages the kernel must
map and zero-fill again on first touch. CERTIFY of the quick profile's MNIST CNN (batches of 2,000 draws of 784 pixels:
6.3 MB of noise and 12.5 MB of activations) faulted about 800,000 pages over 12 inputs at N = 10,000, and the kernel's
share was about half of the loop's wall time on 2 cores. `keep_freed_memory` fixes both thresholds: a block is
mapped on its own only above `MMAP_THRESHOLD` (glibc's largest on 64-bit systems) and the heap is trimmed only when
`TRIM_THRESHOLD` is free at its top, so the next batch reuses the pages of the last. The package calls it once, when
`ancer_lite.core` is imported; the environment variable `ANCER_KEEP_FREED_MEMORY=0` leaves malloc as it is.

No number changes: where a tensor's memory comes from does not change what is computed in it (torch aligns every CPU
tensor to 64 bytes either way; `tests/test_allocator.py` compares CERTIFY's counts with and without). The cost is
memory the process keeps after its peak, until it exits. Where the C library is not glibc (macOS, musl) nothing is
changed.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform

#: the environment variable that turns `keep_freed_memory` off ("0") or on ("1", the default when unset)
ENV_SWITCH = "ANCER_KEEP_FREED_MEMORY"
#: glibc's mallopt parameter numbers (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: the size above which a block gets its own mapping: glibc's largest threshold on 64-bit systems (HEAP_MAX_SIZE / 2)
MMAP_THRESHOLD = 32 * 2 ** 20
#: the free memory at the heap's top beyond which glibc gives it back to the kernel
TRIM_THRESHOLD = 2 ** 30


def keep_freed_memory(environ: dict[str, str] | None = None) -> bool:
    """Make glibc's malloc keep freed memory for reuse (see the module's docstring), unless switched off.

    Parameters
    ----------
    environ : dict of str to str, optional
        The environment to read `ENV_SWITCH` from; None: `os.environ`.

    Returns
    -------
    bool
        True when both thresholds were set; False when the switch is "0", or the C library is not glibc or refused a
        threshold (32-bit systems), in which case malloc is left as it was.

    Raises
    ------
    ValueError
        When `ENV_SWITCH` is set to anything but "0" or "1", naming it and its value.
    """
    switch = (os.environ if environ is None else environ).get(ENV_SWITCH, "1")
    if switch not in ("0", "1"):
        raise ValueError(f"the environment variable {ENV_SWITCH} must be '0' (malloc as it is) or '1' (keep freed "
                         f"memory for reuse), got {switch!r}")
    if switch == "0" or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(libc.mallopt(M_TRIM_THRESHOLD,
                                                                                      TRIM_THRESHOLD))
