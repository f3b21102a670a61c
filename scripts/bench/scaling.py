#!/usr/bin/env python3
"""Strong-scaling table and plot from xnet result files of the same configuration.

Usage: python3 scripts/bench/scaling.py [--plot scaling.png | --no-plot] FILE.h5 ...

Each FILE is an xnet result (docs/output-format.md) of the same configuration run with a
different layout (MPI ranks x threads per rank), e.g. the `scaling-R<r>-T<t>.h5` files
of jobs/strong-scaling.sbatch. For each file it reads the root attributes `ranks` and
`threads` and the first load point's (`/points/000`) wall-clock seconds, packet-hops and
per-rank communication figures, sorts the files by cores (ranks x threads), and prints:

  ranks threads cores     the layout
  wall_s                  wall-clock seconds of /points/000
  speedup                 wall_s of the smallest layout / wall_s
  efficiency              speedup / (cores / cores of the smallest layout)
  Mhops/s                 packet_hops / wall_s / 1e6, the simulator's speed
  exch_s                  rank_exchange_seconds summed over ranks (time in MPI exchanges)
  sync_s                  partition_sync_seconds summed over partitions (barriers + exchanges)
  windows                 synchronisation windows
  msgs/win, KB/win        sum(rank_messages_sent) / windows, sum(rank_bytes_sent) / windows / 1e3
  peak_MB                 largest rank's peak resident memory (rank_peak_rss_bytes)

and writes a PNG (--plot, default scaling.png) of speedup and efficiency against cores.

Exits 1 if a file cannot be read as a finished xnet result, or if the files are not all
of the same configuration (root attribute `config`, compared exactly) or do not all
simulate the same number of packet-hops; 2 if h5py (or, for the plot, matplotlib) is
missing.
"""

import argparse
import sys

try:
    import h5py
except ImportError:
    print("error: this script needs h5py (pip install h5py)", file=sys.stderr)
    sys.exit(2)


def value(v):
    """An attribute as a plain Python value (strings may come back as bytes)."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if hasattr(v, "tolist"):
        return v.tolist()
    return v


def as_list(v):
    v = value(v)
    return v if isinstance(v, list) else [v]


class Unusable(Exception):
    pass


def read(path):
    """The figures of one result file, or Unusable with the reason."""
    try:
        f = h5py.File(path, "r")
    except (OSError, ValueError) as e:
        raise Unusable(f"cannot open as HDF5: {e}")
    with f:
        a = f.attrs
        if not str(value(a.get("format", ""))).startswith("xnet-results"):
            raise Unusable("not an xnet result file (no `format` attribute)")
        status = value(a.get("status", "?"))
        if status not in ("completed", "deadlock"):
            raise Unusable(f"run status is `{status}`, not completed: its timings are not comparable")
        if "points/000" not in f:
            raise Unusable("no /points/000")
        p = f["points/000"].attrs
        missing = [k for k in ("wall_seconds", "packet_hops", "windows") if k not in p]
        missing += [k for k in ("ranks", "threads", "config") if k not in a]
        if missing:
            raise Unusable(f"attributes missing: {', '.join(missing)}")
        ranks = int(value(a["ranks"]))
        threads = int(value(a["threads"]))
        windows = int(value(p["windows"]))
        wall = float(value(p["wall_seconds"]))
        hops = int(value(p["packet_hops"]))
        rss = as_list(a.get("rank_peak_rss_bytes", a.get("peak_rss_bytes", 0)))
        return {
            "file": str(path),
            "config": value(a["config"]),
            "ranks": ranks,
            "threads": threads,
            "cores": ranks * threads,
            "wall_s": wall,
            "packet_hops": hops,
            "mhops": hops / wall / 1e6 if wall > 0 else float("nan"),
            "exch_s": sum(as_list(p.get("rank_exchange_seconds", 0.0))),
            "sync_s": sum(as_list(p.get("partition_sync_seconds", 0.0))),
            "windows": windows,
            "msgs_win": sum(as_list(p.get("rank_messages_sent", 0))) / max(windows, 1),
            "kb_win": sum(as_list(p.get("rank_bytes_sent", 0))) / max(windows, 1) / 1e3,
            "peak_mb": max(rss) / 1e6 if rss else 0.0,
        }


COLUMNS = [
    ("ranks", "ranks", "{:d}"),
    ("threads", "threads", "{:d}"),
    ("cores", "cores", "{:d}"),
    ("wall_s", "wall_s", "{:.3f}"),
    ("speedup", "speedup", "{:.2f}"),
    ("efficiency", "efficiency", "{:.2f}"),
    ("mhops", "Mhops/s", "{:.2f}"),
    ("exch_s", "exch_s", "{:.3f}"),
    ("sync_s", "sync_s", "{:.3f}"),
    ("windows", "windows", "{:d}"),
    ("msgs_win", "msgs/win", "{:.1f}"),
    ("kb_win", "KB/win", "{:.2f}"),
    ("peak_mb", "peak_MB", "{:.0f}"),
    ("file", "file", "{}"),
]


def print_table(rows):
    cells = [[fmt.format(r[key]) for key, _, fmt in COLUMNS] for r in rows]
    heads = [head for _, head, _ in COLUMNS]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(heads)]
    line = lambda xs: "  ".join(x.rjust(w) if i < len(xs) - 1 else x for i, (x, w) in enumerate(zip(xs, widths)))
    print(line(heads))
    for c in cells:
        print(line(c))


def plot(rows, out):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("error: the plot needs matplotlib (pip install matplotlib), or pass --no-plot", file=sys.stderr)
        sys.exit(2)
    cores = [r["cores"] for r in rows]
    base = cores[0]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    # One line per threads-per-rank value, so that 2x1 and 1x2 are not joined.
    for t in sorted({r["threads"] for r in rows}):
        sub = [r for r in rows if r["threads"] == t]
        label = f"{t} thread{'s' if t > 1 else ''}/rank"
        a.plot([r["cores"] for r in sub], [r["speedup"] for r in sub], "o-", label=label)
        b.plot([r["cores"] for r in sub], [r["efficiency"] for r in sub], "o-", label=label)
    a.plot(sorted(set(cores)), [c / base for c in sorted(set(cores))], "--", color="grey", label="ideal")
    a.set_xlabel("cores (ranks x threads)")
    a.set_ylabel(f"speedup vs {rows[0]['ranks']}x{rows[0]['threads']}")
    a.legend()
    b.axhline(1.0, linestyle="--", color="grey")
    b.set_ylim(0, max(1.1, max(r["efficiency"] for r in rows) * 1.1))
    b.set_xlabel("cores (ranks x threads)")
    b.set_ylabel("parallel efficiency")
    for ax in (a, b):
        if max(cores) / max(min(cores), 1) >= 4:
            ax.set_xscale("log", base=2)
        ax.grid(True, alpha=0.3)
    for r in rows:
        a.annotate(f"{r['ranks']}x{r['threads']}", (r["cores"], r["speedup"]), fontsize=8,
                   textcoords="offset points", xytext=(4, -10))
    fig.suptitle(f"xnet strong scaling ({rows[0]['packet_hops']:,} packet-hops per run)")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE.h5")
    ap.add_argument("--plot", default="scaling.png", help="PNG to write (default scaling.png)")
    ap.add_argument("--no-plot", action="store_true", help="print the table only")
    args = ap.parse_args()

    rows, bad = [], []
    for path in args.files:
        try:
            rows.append(read(path))
        except Unusable as e:
            bad.append(f"{path}: {e}")
    if bad:
        for b in bad:
            print(f"error: {b}", file=sys.stderr)
        sys.exit(1)
    configs = {}
    for r in rows:
        configs.setdefault(r["config"], []).append(r["file"])
    if len(configs) > 1:
        print("error: the files are not runs of the same configuration (root attribute `config` differs):",
              file=sys.stderr)
        for i, files in enumerate(configs.values()):
            print(f"  config {i + 1}: {', '.join(files)}", file=sys.stderr)
        sys.exit(1)
    hops = {r["packet_hops"] for r in rows}
    if len(hops) > 1:  # same config, different work: different xnet versions?
        print(f"error: the runs simulated different numbers of packet-hops ({sorted(hops)}); "
              "were they made by different xnet versions?", file=sys.stderr)
        sys.exit(1)

    rows.sort(key=lambda r: (r["cores"], r["ranks"]))
    base = rows[0]
    for r in rows:
        r["speedup"] = base["wall_s"] / r["wall_s"] if r["wall_s"] > 0 else float("nan")
        r["efficiency"] = r["speedup"] / (r["cores"] / base["cores"])
    print_table(rows)
    if not args.no_plot:
        plot(rows, args.plot)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
