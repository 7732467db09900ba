"""A notebook's figures published from the folder where its run staged them: the figure files, its rows
of the figures index (figures/index.tsv) and its claims file, replaced together once the run succeeded.
Notebooks run side by side (`make -j`) take turns on the index."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..core.files import locked, write_atomic


def publish_figures(stage: Path, figures: Path, notebook: str) -> list[str]:
    """Move a notebook's staged figures into the figures folder and make its index rows the staged ones.

    Each figure file is replaced atomically. A figure the notebook no longer draws is removed with its
    files, so renamed figures leave no stale copies. The notebook's claims file
    (figures/claims/<notebook>.tsv, `report.claims`) is replaced by the staged one, or removed when the
    notebook records none.

    Parameters
    ----------
    stage : Path
        The folder the run saved its figures, figures index and claims into.
    figures : Path
        The figures folder (created if needed).
    notebook : str
        The notebook's name (its rows' `notebook` column).

    Returns
    -------
    list of str
        The published figure names.
    """
    from ..report.figures import read_index

    figures.mkdir(parents=True, exist_ok=True)
    for f in sorted(stage.iterdir()):
        if f.suffix in (".pdf", ".png"):
            os.replace(f, figures / f.name)
    # the notebook's claims (`report.claims`): replaced by the staged ones, or removed if it records none now
    staged_claims, claims = stage / "claims" / f"{notebook}.tsv", figures / "claims" / f"{notebook}.tsv"
    if staged_claims.exists():
        claims.parent.mkdir(exist_ok=True)
        os.replace(staged_claims, claims)
    else:
        claims.unlink(missing_ok=True)
    staged_index = stage / "index.tsv"
    new = read_index(staged_index)
    index = figures / "index.tsv"
    with locked(figures):  # notebooks run side by side (make -j) take turns on the read-modify-write
        old = read_index(index)
        stale = old[(old["notebook"] == notebook) & ~old["name"].isin(new["name"])]["name"].tolist()
        for name in stale:
            for suffix in (".pdf", ".png"):
                (figures / f"{name}{suffix}").unlink(missing_ok=True)
        keep = old[(old["notebook"] != notebook) & ~old["name"].isin(new["name"])]
        if len(keep) or len(new) or index.exists():
            write_atomic(index, pd.concat([keep, new]).sort_values("name").to_csv(sep="\t", index=False))
    return new["name"].tolist()
