"""Benchmark-only: import the ANCER authors' optimizers (pip packages ddsmoothing-python 1.0.0 and ancer-python 1.0.0,
`benchmarks/requirements-authors.txt`) under today's scipy, for `benchmarks/gpu_check.py`'s side-by-side timings.
Nothing in `ancer_lite` imports this module or the authors' packages.

What it patches, only where missing (names those packages import that current libraries removed or that a bare
machine may lack):

- `scipy.stats.binom_test` (removed in SciPy 1.12; `ddsmoothing.smooth` imports it): the two-sided p-value of
  `scipy.stats.binomtest`, with the old signature binom_test(x, n=None, p=0.5, alternative="two-sided"), x a count
  or a pair (successes, failures).
- `tqdm` (imported at the top of both packages' `optimize_dataset`, which their `__init__` imports; used only by the
  dataset loops the benchmark does not call): a stand-in whose `tqdm(iterable)` returns the iterable, if tqdm is not
  installed.

Where the packages are not installed, `import_authors(wheel_dirs)` also looks for their wheels (pure-Python
*.whl files, importable as zip archives) in the folders given, e.g. a copy of the two wheels carried to a machine
without network access.
"""
from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Iterable, NamedTuple


class Authors(NamedTuple):
    """The authors' entry points the benchmark times, and where they were imported from."""
    optimize_isotropic_dds: object  # ddsmoothing.optimization.optimize_isotropic_dds
    optimize_ancer: object  # ancer.optimization.optimize_ancer
    L2Certificate: type  # ddsmoothing.certificate.L2Certificate (Gaussian noise, l2)
    L1Certificate: type  # ddsmoothing.certificate.L1Certificate (uniform noise, l1)
    origin: str
    patched: tuple[str, ...]


def _binom_test(x, n=None, p=0.5, alternative="two-sided"):
    """scipy.stats.binom_test's old signature on top of scipy.stats.binomtest."""
    from scipy.stats import binomtest

    if n is None:  # x = (successes, failures)
        k, fails = (int(v) for v in x)
        return binomtest(k, k + fails, p, alternative=alternative).pvalue
    return binomtest(int(x), int(n), p, alternative=alternative).pvalue


def patch() -> tuple[str, ...]:
    """Add the missing names (see the module's docstring); returns the names patched in this process."""
    done = []
    import scipy.stats

    if not hasattr(scipy.stats, "binom_test"):
        scipy.stats.binom_test = _binom_test
        done.append("scipy.stats.binom_test")
    if "tqdm" not in sys.modules and importlib.util.find_spec("tqdm") is None:
        stub = types.ModuleType("tqdm")
        stub.tqdm = lambda iterable=None, *args, **kwargs: iterable
        sys.modules["tqdm"] = stub
        done.append("tqdm (stand-in)")
    return tuple(done)


def import_authors(wheel_dirs: Iterable[str | Path] = ()) -> Authors:
    """The authors' optimizers and certificates, after `patch()`. ImportError (with the reason) when neither the
    installed packages nor wheels in `wheel_dirs` provide them."""
    origin = "installed packages"
    if importlib.util.find_spec("ddsmoothing") is None or importlib.util.find_spec("ancer") is None:
        wheels = [w for d in wheel_dirs for w in sorted(Path(d).glob("*.whl"))
                  if w.name.startswith(("ddsmoothing_python-", "ancer_python-"))]
        if not wheels:
            raise ImportError("ddsmoothing-python / ancer-python are not installed (benchmarks/requirements-authors.txt)"
                              + (f" and no wheels were found in {', '.join(map(str, wheel_dirs))}" if wheel_dirs
                                 else ""))
        for w in wheels:
            if str(w) not in sys.path:
                sys.path.append(str(w))
        origin = "wheels " + ", ".join(w.name for w in wheels)
    patched = patch()
    from ancer.optimization import optimize_ancer
    from ddsmoothing.certificate import L1Certificate, L2Certificate
    from ddsmoothing.optimization import optimize_isotropic_dds

    return Authors(optimize_isotropic_dds, optimize_ancer, L2Certificate, L1Certificate, origin, patched)
