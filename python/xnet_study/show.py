"""One result file as text: ``python -m xnet_study show FILE`` (what the script
read_results.py printed before it moved here).

Prints the run's status, topology and routing, the /summary table (one row per load
point), a sweep's saturation bracket, and per point the last time-series row and, for a
workload, every job's completion time, ideal time and slowdown. Reads a file whose run is still going
(without HDF5's file locking, docs/output-format.md, "Watching a running file").
"""

from __future__ import annotations

import sys

import pandas as pd

from .read import _open, _text


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def show(path, out=None) -> None:
    """Writes the description of the result file at `path` to `out` (default stdout).
    Raises ValueError if it is HDF5 but not an xnet result file, OSError if it cannot be
    read."""
    out = out or sys.stdout
    try:
        f = _open(path)
    except OSError as e:
        raise OSError(f"cannot read {path}: {e}") from None
    with f:
        attrs = f.attrs
        if "format" not in attrs or not str(_text(attrs["format"])).startswith("xnet-results"):
            raise ValueError(f"{path} is not an xnet result file (no `format` attribute)")

        def attr(name, default="?"):
            return _text(attrs[name]) if name in attrs else default

        print(f"format      {attr('format')} (xnet {attr('xnet_version')})", file=out)
        message = attr("status_message", "")
        print(f"status      {attr('status')}" + (f": {message}" if message else ""), file=out)
        print(f"topology    {attr('topology')}: {attr('switches')} switches, {attr('endpoints')} endpoints",
              file=out)
        print(f"routing     {attr('routing')}", file=out)
        print(f"cycles      {attr('cycles')} (warm-up {attr('warmup')}, sample period {attr('sample_period')})",
              file=out)
        print(file=out)
        if "summary" in f and len(f["summary"]):
            print("summary (loads in phits/cycle/endpoint, latencies in cycles):", file=out)
            with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
                print(pd.DataFrame(f["summary"][:]).to_string(index=False), file=out)
        else:
            print("summary: none (no load point finished)", file=out)
        if "saturation_search" in attrs:
            low, high = float(attr("saturation_low")), float(attr("saturation_high"))
            tolerance = float(attr("saturation_tolerance", "nan"))
            bracket = (f"between {_fmt(low)} and {_fmt(high)}, estimate {_fmt((low + high) / 2)}"
                       if high == high else f"above {_fmt(low)} (no point saturated)")
            within = f", asked within {_fmt(tolerance)}" if tolerance == tolerance else ""
            print(f"saturation  {bracket} ({attr('saturation_search')}{within})", file=out)
        points = f.get("points")
        for name in sorted(points.keys()) if points is not None else []:
            g = points[name]
            print(file=out)
            print(f"point {name}: load {_fmt(float(_text(g.attrs['load'])))}, status {_text(g.attrs['status'])}",
                  file=out)
            ts = g["timeseries"]
            if ts.shape[0] == 0:
                print("  no time-series rows", file=out)
                continue
            last = ts[-1]
            cells = " ".join(f"{n}={_fmt(_text(last[n]))}" for n in ts.dtype.names)
            print(f"  last of {ts.shape[0]} time-series rows: {cells}", file=out)
            if "workload" in g and "jobs" in g["workload"]:
                w = g["workload"]
                jobs = pd.DataFrame(w["jobs"][:])
                jobs.insert(1, "name", _text(w.attrs["job_names"]).split(","))
                jobs.insert(2, "kind", _text(w.attrs["job_kinds"]).split(","))
                print("  jobs (times in cycles):", file=out)
                with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
                    text = jobs.to_string(index=False)
                print("\n".join("    " + line for line in text.splitlines()), file=out)
