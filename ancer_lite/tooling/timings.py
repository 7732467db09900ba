"""Each notebook's wall time (build/timings.tsv) and its time by stage of the computation
(build/stages.tsv, from `ancer_lite.core.stages`), recorded by `pipeline execute`, and the summary that
`make all` closes with.

    python -m ancer_lite.tooling.pipeline summary --profile P [--since EPOCH_SECONDS] NAME...
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..core.files import REPO_ROOT, locked, write_atomic

DEFAULT_TIMINGS = REPO_ROOT / "build" / "timings.tsv"
TIMING_COLUMNS = ["notebook", "profile", "seconds", "finished", "status"]
STAGE_COLUMNS = ["notebook", "profile", "stage", "seconds", "calls"]
#: the profile's columns: the package's stages, then the time outside them and the notebook's wall time
OTHER, TOTAL = "other", "total"


def read_timings(path: str | Path) -> pd.DataFrame:
    """The timings file (`TIMING_COLUMNS`, one row per notebook and profile); empty if absent.

    Parameters
    ----------
    path : str or Path
        The timings file (build/timings.tsv).

    Returns
    -------
    pandas.DataFrame
        Its `TIMING_COLUMNS`, in that order.
    """
    return _read_table(path, TIMING_COLUMNS, "timings file", ("notebook", "profile", "status"))


def _read_table(path: str | Path, columns: list[str], what: str, text_columns: tuple[str, ...]) -> pd.DataFrame:
    """A tab-separated file with (at least) `columns`, in that order; empty if absent."""
    path = Path(path)
    if not path.exists():
        return pd.DataFrame(columns=columns)
    df = pd.read_csv(path, sep="\t", dtype={c: str for c in text_columns})
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: {what} lacks the columns {missing}; expected {columns}")
    return df[columns]


def record_timing(path: str | Path, notebook: str, profile: str, seconds: float, status: str,
                  finished: float | None = None) -> None:
    """Set the row of (`notebook`, `profile`) in the timings file. Safe against parallel writers.

    Parameters
    ----------
    path : str or Path
        The timings file (created if absent).
    notebook, profile : str
        The row's key.
    seconds : float
        Wall time of the notebook's latest execution.
    status : str
        How it ended: ok, failed, unclean or interrupted.
    finished : float, optional
        When it finished, in epoch seconds (default: now).

    Returns
    -------
    None
    """
    path = Path(path)
    row = pd.DataFrame([[notebook, profile, round(float(seconds), 3), round(time.time() if finished is None else finished, 3),
                         status]], columns=TIMING_COLUMNS)
    with locked(path):
        df = read_timings(path)
        df = df[~((df["notebook"] == notebook) & (df["profile"] == profile))]
        df = pd.concat([df, row]) if len(df) else row
        write_atomic(path, df.sort_values(["profile", "notebook"]).to_csv(sep="\t", index=False))


def stages_path(timings: str | Path) -> Path:
    """The stage profile beside a timings file: build/timings.tsv -> build/stages.tsv.

    Parameters
    ----------
    timings : str or Path
        The timings file.

    Returns
    -------
    Path
        stages.tsv in the same folder.
    """
    return Path(timings).with_name("stages.tsv")


def read_stage_profile(path: str | Path) -> pd.DataFrame:
    """The stage profile (`STAGE_COLUMNS`, one row per notebook, profile and stage); empty if absent.

    Parameters
    ----------
    path : str or Path
        The stage profile (build/stages.tsv).

    Returns
    -------
    pandas.DataFrame
        Its `STAGE_COLUMNS`, in that order.
    """
    return _read_table(path, STAGE_COLUMNS, "stage profile", ("notebook", "profile", "stage"))


def record_stages(path: str | Path, notebook: str, profile: str, wall: float,
                  totals: dict[str, dict[str, float]]) -> None:
    """Set the rows of (`notebook`, `profile`) in the stage profile. Safe against parallel writers.

    Parameters
    ----------
    path : str or Path
        The stage profile (created if absent).
    notebook, profile : str
        The rows' key.
    wall : float
        The notebook's wall time: the "total" row, and "other" = `wall` minus the stages' sum.
    totals : dict
        Seconds and calls by stage (`stages.read`); a stage missing from it counts zero.

    Returns
    -------
    None
    """
    from ..core.stages import STAGES

    unknown = sorted(set(totals) - set(STAGES))
    if unknown:
        raise ValueError(f"totals has unknown stages {unknown}; expected a subset of {list(STAGES)}")
    staged = {s: totals.get(s, {"seconds": 0.0, "calls": 0}) for s in STAGES}
    inside = sum(float(v["seconds"]) for v in staged.values())
    rows = [[notebook, profile, s, round(float(v["seconds"]), 3), int(v["calls"])] for s, v in staged.items()]
    rows += [[notebook, profile, OTHER, round(max(float(wall) - inside, 0.0), 3), 0],
             [notebook, profile, TOTAL, round(float(wall), 3), 1]]
    new = pd.DataFrame(rows, columns=STAGE_COLUMNS)
    path = Path(path)
    with locked(path):
        df = read_stage_profile(path)
        df = df[~((df["notebook"] == notebook) & (df["profile"] == profile))]
        df = pd.concat([df, new]) if len(df) else new
        order = {s: k for k, s in enumerate([*STAGES, OTHER, TOTAL])}
        df = df.sort_values(["profile", "notebook", "stage"], key=lambda c: c.map(order) if c.name == "stage" else c)
        write_atomic(path, df.to_csv(sep="\t", index=False))


def stage_table(names: Sequence[str], profile: str, path: str | Path) -> pd.DataFrame:
    """Seconds by notebook and stage under `profile`.

    Parameters
    ----------
    names : sequence of str
        The notebooks, in the table's order.
    profile : str
        The profile whose rows are read.
    path : str or Path
        The stage profile.

    Returns
    -------
    pandas.DataFrame
        Rows: the `names` that have a recorded profile, then "total"; columns: the stages, "other", "total".
    """
    from ..core.stages import STAGES

    df = read_stage_profile(path)
    df = df[(df["profile"] == profile) & df["notebook"].isin(list(names))]
    table = df.pivot_table(index="notebook", columns="stage", values="seconds", aggfunc="sum")
    table = table.reindex(index=[n for n in names if n in table.index], columns=[*STAGES, OTHER, TOTAL]).fillna(0.0)
    if len(table):
        table.loc[TOTAL] = table.sum()
    return table


def summary(names: Sequence[str], profile: str, timings: str | Path = DEFAULT_TIMINGS,
            since: float | None = None, now: float | None = None) -> str:
    """A table of each notebook's latest recorded wall time under `profile`, the total, and the time by stage.

    With `since`, notebooks whose latest run finished earlier are marked as up to date, not re-run, a
    second total counts only this run, and a last line gives the wall clock from `since` to `now`.

    Parameters
    ----------
    names : sequence of str
        The notebooks, in the table's order.
    profile : str
        The profile whose runs are read.
    timings : str or Path
        The timings file; the stage profile is read beside it (`stages_path`).
    since : float, optional
        Epoch seconds: the start of this `make all`.
    now : float, optional
        Epoch seconds closing the wall clock (default: the current time).

    Returns
    -------
    str
        The table's lines.
    """
    from ..report.display import format_seconds

    df = read_timings(timings)
    df = df[df["profile"] == profile].set_index("notebook")
    width = max(len(n) for n in [*names, "wall clock"])
    lines = [f"Notebook wall times (profile {profile}):"]
    total = this_run = 0.0
    ran = 0
    for name in names:
        if name not in df.index:
            lines.append(f"  {name:<{width}}  {'—':>11}  no recorded run")
            continue
        r = df.loc[name]
        seconds = float(r["seconds"])
        total += seconds
        notes = [] if r["status"] == "ok" else [f"last run {r['status']}"]
        if since is not None and float(r["finished"]) < since:
            notes.append("up to date, not re-run (time of its last run, "
                         f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(float(r['finished'])))})")
        else:
            this_run += seconds
            ran += 1
        lines.append(f"  {name:<{width}}  {format_seconds(seconds):>11}  {'; '.join(notes)}".rstrip())
    lines.append(f"  {'total':<{width}}  {format_seconds(total):>11}")
    if since is not None:
        lines.append(f"  {'this run':<{width}}  {format_seconds(this_run):>11}  ({ran} of {len(names)} notebooks executed)")
        elapsed = (time.time() if now is None else now) - since
        lines.append(f"  {'wall clock':<{width}}  {format_seconds(elapsed):>11}  (since make started: the notebooks, the figure index and make itself)")
    table = stage_table(names, profile, stages_path(timings))
    if len(table):
        lines.append(f"Time by stage (profile {profile}; the outermost stage owns nested work, see ancer_lite.core.stages):")
        head = "".join(f"{c:>14}" for c in table.columns)
        lines.append(f"  {'':<{width}}{head}")
        for name, row in table.iterrows():
            lines.append(f"  {name:<{width}}" + "".join(f"{format_seconds(v):>14}" for v in row))
    return "\n".join(lines)
