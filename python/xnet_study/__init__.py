"""Read xnet results into tidy pandas tables, plot them, and report on whole studies.

    import xnet_study as xs
    runs = xs.read_study("xnet-study-quick-routings")   # one row per (run, load point)
    xs.plot_latency(runs, by="routing.algorithm", facet="traffic.pattern").savefig("lat.png")
    xs.write_report("xnet-study-quick-routings")        # report.html in the folder

A study folder is what `xnet study` writes (manifest.toml, runs/NAME.h5); a single result
file is what `xnet run` or `xnet sweep` writes (docs/output-format.md).
"""

import sys as _sys

try:
    import h5py as _h5py, pandas as _pandas, matplotlib as _matplotlib  # noqa: F401
except ModuleNotFoundError as _missing:
    _why = (
        f"xnet_study needs h5py, pandas and matplotlib, and this Python ({_sys.executable}) has no "
        f"{_missing.name}: use the venv scripts/bootstrap.sh makes (.venv/bin/python3 -m xnet_study ..., "
        "or .venv/bin/xnet-study ...), or install the package and its dependencies into this Python "
        "with `python3 -m pip install ./python`"
    )
    if _sys.argv[:1] == ["-m"]:
        # `python -m xnet_study` (runpy imports the package with argv[0] = "-m"): one line, no traceback.
        print(f"error: {_why}", file=_sys.stderr)
        raise SystemExit(1)
    raise ModuleNotFoundError(_why, name=_missing.name) from None

from .read import (
    open_result,
    read_run,
    read_study,
    read_timeseries,
    read_links,
    read_jobs,
    read_collectives,
    read_steps,
    read_sends,
    read_ranks,
    study_status,
)
from .plots import (
    plot_latency,
    plot_throughput,
    plot_percentiles,
    plot_timeseries,
    plot_link_heatmap,
    plot_vc_usage,
    plot_completion,
    plot_fault_throughput,
    plot_scaling,
    save,
)
from .report import write_report
from .show import show

__all__ = [
    "open_result",
    "read_run",
    "read_study",
    "read_timeseries",
    "read_links",
    "study_status",
    "plot_latency",
    "plot_throughput",
    "plot_percentiles",
    "plot_timeseries",
    "plot_link_heatmap",
    "plot_vc_usage",
    "plot_completion",
    "plot_fault_throughput",
    "plot_scaling",
    "save",
    "write_report",
    "show",
]
