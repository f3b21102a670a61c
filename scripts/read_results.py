#!/usr/bin/env python3
"""Print the contents of an xnet result file (HDF5; see docs/output-format.md).

Usage: python3 scripts/read_results.py RESULTS.h5

Prints the run's status, topology and routing, the /summary table (one row per load
point) and the last time-series row of every point. Needs h5py; uses pandas for the
table when it is installed. Exits with status 1 if the file cannot be read as an xnet
result file, 2 if h5py is missing.
"""

import sys

try:
    import h5py
except ImportError:
    print("error: this script needs h5py (pip install h5py)", file=sys.stderr)
    sys.exit(2)

try:
    import pandas as pd
except ImportError:  # optional
    pd = None


def text(value):
    """An attribute as a plain Python value (strings may come back as bytes)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def fmt(value):
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def print_table(rows):
    """A structured numpy array as a table."""
    if pd is not None:
        print(pd.DataFrame(rows).to_string(index=False))
        return
    names = rows.dtype.names
    cells = [[fmt(text(r[n])) for n in names] for r in rows]
    widths = [max([len(n)] + [len(c[i]) for c in cells]) for i, n in enumerate(names)]
    print("  ".join(n.rjust(w) for n, w in zip(names, widths)))
    for c in cells:
        print("  ".join(x.rjust(w) for x, w in zip(c, widths)))


def show(f):
    attrs = f.attrs
    if "format" not in attrs or not text(attrs["format"]).startswith("xnet-results"):
        raise ValueError("not an xnet result file (no `format` attribute)")
    print(f"format      {text(attrs['format'])} (xnet {text(attrs.get('xnet_version', '?'))})")
    status = text(attrs["status"])
    message = text(attrs.get("status_message", ""))
    print(f"status      {status}" + (f": {message}" if message else ""))
    print(f"topology    {text(attrs['topology'])}: {text(attrs['switches'])} switches, "
          f"{text(attrs['endpoints'])} endpoints")
    print(f"routing     {text(attrs['routing'])}")
    print(f"cycles      {text(attrs['cycles'])} (warm-up {text(attrs['warmup'])}, "
          f"sample period {text(attrs['sample_period'])})")

    print()
    if "summary" in f:
        print("summary (loads in phits/cycle/endpoint, latencies in cycles):")
        print_table(f["summary"][:])
    else:
        print("summary: none (no load point finished)")

    points = f.get("points")
    for name in sorted(points.keys()) if points is not None else []:
        g = points[name]
        print()
        print(f"point {name}: load {fmt(float(g.attrs['load']))}, status {text(g.attrs['status'])}")
        ts = g["timeseries"]
        if ts.shape[0] == 0:
            print("  no time-series rows")
            continue
        last = ts[-1]
        cells = " ".join(f"{n}={fmt(text(last[n]))}" for n in ts.dtype.names)
        print(f"  last of {ts.shape[0]} time-series rows: {cells}")


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 1 if len(argv) != 2 else 0
    path = argv[1]
    try:
        # Without HDF5's file locking: a running xnet holds its own lock on the file, and
        # the writer flushes after every row (docs/output-format.md, "Watching a running file").
        with h5py.File(path, "r", locking=False) as f:
            show(f)
    except (OSError, KeyError, ValueError, TypeError) as e:
        print(f"error: cannot read {path}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
