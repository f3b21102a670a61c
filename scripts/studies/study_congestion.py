#!/usr/bin/env python3
"""Congestion control off, InfiniBand's and per-destination throttling against a hot spot
(docs/congestion.md).

A hot spot (every endpoint sends a fraction of its packets to endpoint 0, the rest
uniformly) at load 0.4 on two networks: BookSim2's Dragonfly (p = 4, a = 8, h = 4, 1,056
endpoints, 10-cycle local and 100-cycle global links) under UGAL-L, and an 8-ary 3-tree
(512 endpoints) under Up*/Down*. For each, the hot-spot fraction is swept with no
congestion control, with InfiniBand's and with per-destination throttling (its defaults:
the notified senders share 90 % of the hot link); then InfiniBand's timer is swept at one
fraction (the trade-off between the victims and the hot link), and the time series of
victims and aggressors is drawn with CC off and on. The hot spot is on from the start at
full strength, so its congestion tree forms before any notification is back; 100,000
cycles (60,000 of warm-up) let the tree drain where congestion control can drain it.

    scripts/studies/study_congestion.py [--jobs 2]
    scripts/studies/study_congestion.py --replot

Writes docs/studies/congestion/{results.csv,series.csv,*.png} and prints Markdown tables.
Runs already in the CSV files are not run again (delete them to start over).
"""
import argparse
import csv
import pathlib
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

root = pathlib.Path(__file__).resolve().parents[2]
xnet = root / "target/release/xnet"
out_dir = root / "docs/studies/congestion"
results = out_dir / "results.csv"
series_csv = out_dir / "series.csv"

COMMON = """
[simulation]
cycles = 100000
warmup = 60000
seed = 3
sample_period = 2000
[traffic]
pattern = "hot_spot"
fraction = 0.05
load = 0.4
"""

NETWORKS = {
    # BookSim2's Dragonfly example, with buffers deep enough for the global links.
    "dragonfly": COMMON + """
[topology]
kind = "dragonfly"
p = 4
a = 8
h = 4
local_latency = 10
global_latency = 100
[router]
vcs = 3
input_buffer = 256
output_buffer = 64
[routing]
algorithm = "dragonfly_ugal"
""",
    "fat tree": COMMON + """
[topology]
kind = "fat_tree"
k = 8
n = 3
[router]
vcs = 2
input_buffer = 64
output_buffer = 32
[routing]
algorithm = "up_down"
""",
}

# InfiniBand CC: marking once an output VC's buffer is full (64 phits on the Dragonfly, 32
# on the fat tree: below that, plain uniform traffic gets marked), a linear table of
# 512-cycle steps (a hot endpoint with a thousand sources needs delays of thousands of
# cycles), four steps a notification; the timer is the knob of the trade-off (swept below:
# it must be long enough for a slowed flow, or the index falls faster than the flow's rare
# packets bring notifications).
IB = ["congestion.control=\"infiniband\"", "congestion.infiniband.ipd_step=512", "congestion.infiniband.ccti_increase=4"]
THRESHOLD = {"dragonfly": 64, "fat tree": 32}
FRACTIONS = [0.0, 0.02, 0.05, 0.1]
TIMERS = [3000, 10000, 30000]
DEFAULT_TIMER = 10000
FIELDS = ["network", "cc", "fraction", "ccti_timer", "victim_offered", "victim_accepted", "victim_latency",
          "aggressor_offered", "aggressor_accepted", "hot_link_busy", "marked", "notifications", "wall_seconds"]


def run_point(network, sets):
    """Runs one point; returns the summary row and the time series."""
    import h5py
    with tempfile.TemporaryDirectory() as tmp:
        config = pathlib.Path(tmp) / "net.toml"
        config.write_text(NETWORKS[network])
        path = pathlib.Path(tmp) / "point.h5"
        cmd = [str(xnet), "run", str(config), "-q", "-t", "1", "-o", str(path)]
        for s in sets:
            cmd += ["--set", s]
        start = time.time()
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
        wall = time.time() - start
        if not path.exists():
            print(f"failed: {' '.join(cmd)}\n{done.stderr[-2000:]}", file=sys.stderr)
            return None, []
        with h5py.File(path, "r") as f:
            s = f["summary"][0]
            p = f["points/000"]
            endpoints = p["endpoints"].shape[0]
            ts = p["timeseries"][:]
        period = float(ts["time"][1] - ts["time"][0]) if len(ts) > 1 else 1.0
        series = [dict(time=int(r["time"]),
                       victims=(float(r["delivered_phits"]) - float(r["aggressor_delivered_phits"])) / period / endpoints,
                       aggressors=float(r["aggressor_delivered_phits"]) / period / endpoints,
                       victim_latency=float(r["victim_mean_latency"])) for r in ts]
        row = dict(victim_offered=round(float(s["victim_offered_load"]), 4),
                   victim_accepted=round(float(s["victim_accepted_load"]), 4),
                   victim_latency=round(float(s["victim_latency_mean"]), 1),
                   aggressor_offered=round(float(s["aggressor_offered_load"]), 5),
                   aggressor_accepted=round(float(s["aggressor_accepted_load"]), 5),
                   hot_link_busy=round(float(s["aggressor_accepted_load"]) * endpoints, 3),
                   marked=int(ts["marked_packets"].sum()), notifications=int(ts["notifications"].sum()),
                   wall_seconds=round(wall, 1))
        return row, series


def load_csv(path):
    if not path.exists():
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def save_csv(path, rows, fields):
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in fields})


def cases():
    for network in NETWORKS:
        for fraction in FRACTIONS:
            yield network, "none", fraction, ""
            yield network, "infiniband", fraction, DEFAULT_TIMER
            yield network, "per_destination", fraction, ""
        for timer in TIMERS:
            if timer != DEFAULT_TIMER:
                yield network, "infiniband", 0.05, timer


def sweep(jobs):
    rows = load_csv(results)
    series = load_csv(series_csv)
    done = {(r["network"], r["cc"], float(r["fraction"]), str(r["ccti_timer"])) for r in rows}
    todo = [c for c in cases() if (c[0], c[1], c[2], str(c[3])) not in done]

    def one(case):
        network, cc, fraction, timer = case
        sets = [f"traffic.fraction={fraction}"]
        if cc == "infiniband":
            sets += IB + [f"congestion.infiniband.ccti_timer={timer}", f"congestion.infiniband.threshold={THRESHOLD[network]}"]
        elif cc == "per_destination":
            sets += ["congestion.control=\"per_destination\""]
        row, s = run_point(network, sets)
        print(f"{network} {cc} {fraction} {timer}: {row}", file=sys.stderr)
        return case, row, s

    with ThreadPoolExecutor(jobs) as pool:
        for (network, cc, fraction, timer), row, s in pool.map(one, todo):
            if row is None:
                continue
            rows.append(dict(network=network, cc=cc, fraction=fraction, ccti_timer=timer, **row))
            if fraction == 0.05 and timer in ("", DEFAULT_TIMER):
                series += [dict(network=network, cc=cc, **x) for x in s]
            save_csv(results, rows, FIELDS)
            save_csv(series_csv, series, ["network", "cc", "time", "victims", "aggressors", "victim_latency"])
    return rows, series


def report(rows, series):
    print("| network | CC | hot-spot fraction | victims accepted / offered | victims' latency | hot link busy | marks | notifications |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in sorted(rows, key=lambda r: (r["network"], float(r["fraction"]), r["cc"], str(r["ccti_timer"]))):
        if r["cc"] == "infiniband" and str(r["ccti_timer"]) != str(DEFAULT_TIMER):
            continue
        print(f"| {r['network']} | {r['cc']} | {r['fraction']} | {r['victim_accepted']} / {r['victim_offered']} | "
              f"{r['victim_latency']} | {float(r['hot_link_busy']):.0%} | {r['marked']} | {r['notifications']} |")
    print()
    print("| network | ccti_timer | victims accepted / offered | victims' latency | hot link busy |")
    print("| --- | --- | --- | --- | --- |")
    for r in sorted(rows, key=lambda r: (r["network"], int(r["ccti_timer"] or 0))):
        if r["cc"] == "infiniband" and float(r["fraction"]) == 0.05:
            print(f"| {r['network']} | {r['ccti_timer']} | {r['victim_accepted']} / {r['victim_offered']} | "
                  f"{r['victim_latency']} | {float(r['hot_link_busy']):.0%} |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, len(NETWORKS), figsize=(12, 4), sharey=True)
    for ax, network in zip(axes, NETWORKS):
        for cc, style in (("none", ":"), ("infiniband", "--"), ("per_destination", "-")):
            pts = [s for s in series if s["network"] == network and s["cc"] == cc]
            t = [int(s["time"]) for s in pts]
            ax.plot(t, [float(s["victims"]) for s in pts], style, color="tab:blue", label=f"victims, CC {cc}")
            ax.plot(t, [float(s["aggressors"]) * 20 for s in pts], style, color="tab:red",
                    label=f"aggressors x 20, CC {cc}")
        ax.set_title(f"{network}: 5 % hot spot, load 0.4")
        ax.set_xlabel("cycle")
        ax.axvline(60000, color="grey", lw=0.5)
    axes[0].set_ylabel("accepted load (phits/cycle/endpoint)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / "victims-over-time.png", dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2, help="runs side by side")
    ap.add_argument("--replot", action="store_true", help="only redraw and reprint from the CSV files")
    args = ap.parse_args()
    if not args.replot:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "xnet"], cwd=root, check=True)
        sweep(args.jobs)
    report(load_csv(results), load_csv(series_csv))


if __name__ == "__main__":
    main()
