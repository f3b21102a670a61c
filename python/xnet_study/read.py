"""Tidy tables from xnet result files and study folders.

Every table has one row per observation and one column per variable: a load point of a
run (`read_run`, `read_study`; with a workload, each job's completion time, slowdown and
mean message latency as columns `completion_time.NAME`, ...), a time-series sample
(`read_timeseries`), a link (`read_links`), an application job (`read_jobs`) or one of its
ranks (`read_ranks`). Study tables carry the study's overridden keys as columns, named as
in the study file (e.g. ``routing.algorithm``), so that ``df.groupby("routing.algorithm")``
works.
"""

from __future__ import annotations

import os
import time
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

# Run-level attributes copied into every row of a run's table.
RUN_ATTRIBUTES = ("topology", "routing", "switches", "endpoints", "cycles", "warmup", "seed",
                  "status", "wall_seconds", "ranks", "threads",
                  # What a sweep found of its saturation load (docs/output-format.md).
                  "saturation_search", "saturation_low", "saturation_high", "saturation_load",
                  "saturation_tolerance")


def _text(value):
    """An HDF5 attribute as a plain Python value."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.generic):
        return value.item()
    return value


def open_result(path) -> h5py.File:
    """Opens an xnet result file for reading with h5py, also while its run is still
    writing it: without HDF5's file locking, since a running xnet holds an exclusive lock
    on its file (docs/output-format.md, "Watching a running file"). Use it as
    ``with open_result(path) as f: ...``; reopen the file to see rows written since."""
    try:
        return h5py.File(path, "r", locking=False)
    except TypeError:
        # h5py before 3.5 has no `locking`: HDF5 reads this variable when it opens a file.
        os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"
        return h5py.File(path, "r")


_open = open_result


def _live(read, path, *args, tries: int = 5):
    """`read(path, *args)`, tried again a few times when it fails with an HDF5 error: a
    reader can meet a running file between two of the writer's flushes (a table being
    replaced), which the next flush mends within a sample period."""
    for attempt in range(tries):
        try:
            return read(path, *args)
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            raise
        except (OSError, KeyError):
            if attempt + 1 == tries:
                raise
            time.sleep(0.2 * (attempt + 1))


def read_run(path) -> pd.DataFrame:
    """One row per load point of the result file at `path` (its /summary table), with the
    run's attributes (topology, routing, status, wall_seconds, ...) as columns. Columns
    are those of docs/output-format.md; `saturated` and `completed` are booleans. Reads a
    file whose run is still going, too."""
    return _live(_read_run, path)


def _read_run(path) -> pd.DataFrame:
    with _open(path) as f:
        if "summary" in f:
            df = pd.DataFrame(f["summary"][:])
        else:
            df = pd.DataFrame(columns=["point", "load"])
        for name in RUN_ATTRIBUTES:
            if name in f.attrs:
                df[name] = _text(f.attrs[name])
        _add_job_columns(f, df)
    for flag in ("saturated", "completed"):
        if flag in df:
            df[flag] = df[flag].astype(bool)
    df.insert(0, "file", str(path))
    return df


# Per-job figures copied into a point's row, as `FIGURE.JOB_NAME` columns.
JOB_FIGURES = ("completion_time", "slowdown", "message_latency_mean")


def _add_job_columns(f, df):
    """With a workload: each job's completion time, slowdown and mean message latency at
    each point, as columns `completion_time.NAME`, ... (NaN where a job did not finish), so
    that a study's table plots a job's slowdown against the background load."""
    for i, point in enumerate(df["point"] if "point" in df else []):
        key = f"points/{int(point):03d}/workload"
        if key not in f:
            continue
        g = f[key]
        jobs = g["jobs"][:]
        for name, row in zip(_text(g.attrs["job_names"]).split(","), jobs):
            for figure in JOB_FIGURES:
                value = float(row[figure])
                if figure == "completion_time" and not row["finished"]:
                    value = np.nan
                df.loc[df.index[i], f"{figure}.{name}"] = value


def _manifest(folder: Path) -> dict:
    path = folder / "manifest.toml"
    if not path.exists():
        raise FileNotFoundError(f"{folder} is not a study folder (no manifest.toml; made by `xnet study`)")
    with open(path, "rb") as f:
        return tomllib.load(f)


def study_status(folder) -> pd.DataFrame:
    """One row per run of the study folder: name, its overrides, state (done, started,
    pending) and, for done runs, the run's status and wall time."""
    folder = Path(folder)
    manifest = _manifest(folder)
    rows = []
    for run in manifest["runs"]:
        result = folder / run["file"]
        partial = result.with_name(result.stem + ".partial.h5")
        log = result.with_suffix(".log")
        row = {"run": run["name"], **run.get("overrides", {})}
        if result.exists():
            with _open(result) as f:
                row.update(state="done", status=_text(f.attrs.get("status", "")),
                           wall_seconds=float(_text(f.attrs.get("wall_seconds", np.nan))))
        elif partial.exists() or log.exists():
            row.update(state="started", status="", wall_seconds=np.nan)
        else:
            row.update(state="pending", status="", wall_seconds=np.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def read_study(folder) -> pd.DataFrame:
    """One row per (run, load point) over the finished runs of a study folder, with the
    columns of `read_run`, the run's name (`run`) and one column per overridden key of
    the study's grid. Runs not finished are left out (see `study_status`)."""
    folder = Path(folder)
    manifest = _manifest(folder)
    frames = []
    for run in manifest["runs"]:
        path = folder / run["file"]
        if not path.exists():
            continue
        df = read_run(path)
        df.insert(0, "run", run["name"])
        for key, value in run.get("overrides", {}).items():
            # One value per row; lists (e.g. topology.sides) as tuples, which group and compare.
            df[key] = [tuple(value) if isinstance(value, list) else value] * len(df)
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=["run", *manifest.get("keys", [])])
    out = pd.concat(frames, ignore_index=True)
    out.attrs["keys"] = list(manifest.get("keys", []))
    out.attrs["study"] = manifest.get("study", os.path.basename(folder))
    return out


def read_timeseries(path, point: int = 0) -> pd.DataFrame:
    """The time series of load point `point` of a result file: one row per sample (so far,
    for a run still going)."""
    return _live(_read_timeseries, path, point)


def _read_timeseries(path, point: int) -> pd.DataFrame:
    with _open(path) as f:
        g = f[f"points/{point:03d}"]
        df = pd.DataFrame(g["timeseries"][:])
        df["load"] = float(_text(g.attrs["load"]))
    return df


def read_links(path, point: int = 0) -> pd.DataFrame:
    """The per-link table of load point `point` (one row per directed link: its switches,
    ports, class and utilisation; docs/output-format.md)."""
    with _open(path) as f:
        return pd.DataFrame(f[f"points/{point:03d}/links"][:])


def read_jobs(path, point: int | None = None) -> pd.DataFrame:
    """The application jobs of a workload run: one row per job, its name and kind,
    completion time, time on an ideal network and slowdown, messages and message latencies
    (docs/output-format.md, `workload/jobs`). Of load point `point` when given; otherwise
    of every point of the file, with the point's index and load as the first columns
    (`point`, `load`) when there are several (a sweep)."""
    with _open(path) as f:
        names = sorted(f["points"].keys()) if "points" in f else []
        if point is not None:
            chosen = [f"{point:03d}"]
        else:
            chosen = [n for n in names if "workload" in f[f"points/{n}"]]
        frames = []
        for name in chosen:
            g = f[f"points/{name}/workload"]
            df = pd.DataFrame(g["jobs"][:])
            df.insert(1, "name", _text(g.attrs["job_names"]).split(","))
            df.insert(2, "kind", _text(g.attrs["job_kinds"]).split(","))
            if point is None and len(chosen) > 1:
                df.insert(0, "load", float(_text(f[f"points/{name}"].attrs["load"])))
                df.insert(0, "point", int(name))
            frames.append(df)
    if not frames:
        raise KeyError(f"{path}: no load point with a workload")
    return pd.concat(frames, ignore_index=True)


def read_collectives(path, point: int = 0, job: int = 0) -> pd.DataFrame:
    """The collectives of job `job` (a `collectives` or `training` job) at load point
    `point`: one row per
    collective run, its iteration, operation index and name, nccl-tests' size, its time
    and its algorithm and bus bandwidths in GB/s (docs/output-format.md,
    `workload/job_NNN/collectives`)."""
    with _open(path) as f:
        g = f[f"points/{point:03d}/workload/job_{job:03d}"]
        if "collectives" not in g:
            raise KeyError(f"{path}: job {job} of point {point} times no collectives")
        df = pd.DataFrame(g["collectives"][:])
        names = _text(g.attrs["collective_names"]).split(",")
        df.insert(2, "collective", [names[i] for i in df["operation"]])
        return df


def read_steps(path, point: int = 0, job: int = 0) -> pd.DataFrame:
    """The steps of job `job` (a `training` job) at load point `point`: one row per
    iteration, its time, the ranks' mean and the busiest rank's computation in it and the
    time no computation covers, all in ns (docs/output-format.md,
    `workload/job_NNN/steps`)."""
    with _open(path) as f:
        g = f[f"points/{point:03d}/workload/job_{job:03d}"]
        if "steps" not in g:
            raise KeyError(f"{path}: job {job} of point {point} does not know its computation")
        return pd.DataFrame(g["steps"][:])


def read_sends(path, point: int = 0, job: int = 0) -> pd.DataFrame:
    """The sends of job `job` at load point `point`, recorded with
    `workload.record_sends = true`: one row per send, its rank, peer, bytes, iteration,
    start and end (cycles) and `time_ns`, its flow completion time
    (docs/output-format.md, `workload/job_NNN/sends`)."""
    with _open(path) as f:
        g = f[f"points/{point:03d}/workload/job_{job:03d}"]
        if "sends" not in g:
            raise KeyError(f"{path}: job {job} of point {point} has no sends; run with workload.record_sends = true")
        return pd.DataFrame(g["sends"][:])


def read_ranks(path, point: int = 0, job: int = 0) -> pd.DataFrame:
    """The ranks of job `job` at load point `point`: one row per rank, its endpoint and
    switch, when it finished and the cycles it spent computing, sending and waiting
    (docs/output-format.md, `workload/job_NNN/ranks`)."""
    with _open(path) as f:
        return pd.DataFrame(f[f"points/{point:03d}/workload/job_{job:03d}/ranks"][:])
