"""What every notebook does first, and how it shows things: seeds and threads, the companion's figure
style, whole tables (never cut with "..."), no progress-bar frames in committed outputs, prose
rendered from the computation (`md`), and reused results labelled with the time they took when
they were computed (`timing`).

    from ancer_lite.report.display import setup_notebook, md, timing
    setup_notebook(seed)
    md(f"ANCER certifies **{acc:.1%}** of the inputs at radius 0.5.")
"""
from __future__ import annotations

import os
import warnings

import pandas as pd
import torch

from ..core.reproducibility import instruction_set_pins, seed_everything
from . import style


def setup_notebook(seed: int = 0) -> torch.Generator:
    """What every notebook does first: seeds, figure style, whole tables, no progress bars.

    Seeds everything (`reproducibility.seed_everything`), applies the figure style (`style.apply`), shows pandas tables
    whole, and switches tqdm's progress bars off (the pipeline reports progress; committed notebooks carry no
    progress-bar frames). Warns when the kernel runs without the instruction-set pins that `make` sets
    (`reproducibility.ISA_PINS`).

    Parameters
    ----------
    seed : int
        The seed.

    Returns
    -------
    torch.Generator
        The seeded generator.
    """
    unpinned = [k for k, ok in instruction_set_pins().items() if not ok]
    if unpinned:
        warnings.warn(f"this kernel was started without the instruction-set pins of `make` ({', '.join(unpinned)} "
                      "unset): on a CPU with AVX-512 the results can differ from the committed notebooks in the "
                      "last bits, and a notebook's anchors may fail; run it through `make` or export "
                      "ancer_lite.core.reproducibility.ISA_PINS before starting Jupyter", stacklevel=2)
    os.environ["TQDM_DISABLE"] = "1"
    pd.set_option("display.max_rows", None)
    pd.set_option("display.max_columns", None)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_colwidth", None)
    style.apply()
    return seed_everything(seed)


def md(text: str) -> None:
    """Display `text` as Markdown in the cell's output, with the same text as its text/plain form.

    The plain form lets nbval compare the sentence itself. Use it for every sentence that quotes a computed number.

    Parameters
    ----------
    text : str
        Markdown.
    """
    from IPython.display import display

    display({"text/markdown": text, "text/plain": text}, raw=True)


def format_seconds(seconds: float) -> str:
    """A duration as text: "0.42 s", "12.3 s", "6 min 11 s", "1 h 02 min".

    Parameters
    ----------
    seconds : float
        A finite number >= 0.

    Returns
    -------
    str
        Two decimals below 10 s, one below a minute, then whole minutes and seconds, then hours and minutes.
    """
    if not seconds >= 0:
        raise ValueError(f"seconds must be a finite number >= 0, got {seconds!r}")
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        m, s = divmod(int(round(seconds)), 60)
        return f"{m} min {s:02d} s"
    h, rest = divmod(int(round(seconds)), 3600)
    return f"{h} h {rest // 60:02d} min"


def timing(what: str, seconds: float, reused: bool = False, computed_seconds: float | None = None) -> str:
    """One line saying how long `what` took, or, for a result read from the cache, how long it took to compute.

    E.g. "digits: 12.3 s", or "digits: reused from the cache (computed in 6 min 11 s; read in 0.42 s)" (or
    "time of computation not recorded").

    Parameters
    ----------
    what : str
        What was computed.
    seconds : float
        How long it took now, >= 0.
    reused : bool
        Whether the result was read from the cache.
    computed_seconds : float or None
        When reused: how long the computation took, >= 0; None: not recorded.

    Returns
    -------
    str
        The line.
    """
    if reused:
        when = (f"computed in {format_seconds(computed_seconds)}" if computed_seconds is not None
                else "time of computation not recorded")
        return f"{what}: reused from the cache ({when}; read in {format_seconds(seconds)})"
    return f"{what}: {format_seconds(seconds)}"
