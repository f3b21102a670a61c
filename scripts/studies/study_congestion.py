#!/usr/bin/env python3
"""Congestion control off, InfiniBand's and per-destination throttling against a hot spot
(docs/congestion.md).

A hot spot (every endpoint sends a fraction of its packets to endpoint 0, the rest
uniformly) at load 0.4 on two networks: BookSim2's Dragonfly (p = 4, a = 8, h = 4, 1,056
endpoints, 10-cycle local and 100-cycle global links) under UGAL-L, and an 8-ary 3-tree
(512 endpoints) under Up*/Down*. For each, the hot-spot fraction is swept with no
congestion control, with InfiniBand's and with per-destination throttling (its defaults:
the notified senders share 90 % of the hot link; and with a window of 4 packets in flight
per destination); then InfiniBand's timer and the link share are swept at one
fraction (the trade-off between the victims and the hot link), and the time series of
victims and aggressors is drawn with CC off and on. The hot spot is on from the start at
full strength, so its congestion tree forms before any notification is back; 100,000
cycles (60,000 of warm-up) let the tree drain where congestion control can drain it.

    scripts/studies/study_congestion.py [--jobs 2]
    scripts/studies/study_congestion.py --replot

Then an incast in an application (a GOAL job: 63 ranks send 8 KiB each to a root at
once) over uniform background traffic, with each congestion control.

Writes docs/studies/congestion/{results,series,incast,incast-series}.csv and the plots,
and prints Markdown tables.
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
# Per-destination throttling at its defaults, then with a window of 4 packets in flight
# per destination ("per_destination_w4"); its link share is the knob swept.
SHARES = [0.5, 0.7, 0.9]
DEFAULT_SHARE = 0.9
CCS = ["none", "infiniband", "per_destination", "per_destination_w4"]
FIELDS = ["network", "cc", "fraction", "setting", "victim_offered", "victim_accepted", "victim_latency",
          "aggressor_offered", "aggressor_accepted", "hot_link_busy", "marked", "notifications", "wall_seconds"]


def run_xnet(tmp, text, sets):
    """Runs the configuration `text` with `sets` in the folder `tmp`; returns the result
    file and the wall seconds, or None if the run failed (said on stderr)."""
    config = pathlib.Path(tmp) / "net.toml"
    config.write_text(text)
    path = pathlib.Path(tmp) / "point.h5"
    cmd = [str(xnet), "run", str(config), "-q", "-t", "1", "-o", str(path)]
    for s in sets:
        cmd += ["--set", s]
    start = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    wall = time.time() - start
    if not path.exists():
        print(f"failed: {' '.join(cmd)}\n{done.stderr[-2000:]}", file=sys.stderr)
        return None
    return path, wall


def run_point(network, sets):
    """Runs one point; returns the summary row and the time series."""
    import h5py
    with tempfile.TemporaryDirectory() as tmp:
        ran = run_xnet(tmp, NETWORKS[network], sets)
        if ran is None:
            return None, []
        path, wall = ran
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


def cc_sets(network, cc, setting):
    """The --set options of one congestion control; `setting` is InfiniBand's timer or
    per-destination throttling's link share."""
    if cc == "infiniband":
        return IB + [f"congestion.infiniband.ccti_timer={setting}", f"congestion.infiniband.threshold={THRESHOLD[network]}"]
    if cc.startswith("per_destination"):
        sets = ["congestion.control=\"per_destination\"", f"congestion.per_destination.link_share={setting}"]
        if cc == "per_destination_w4":
            sets.append("congestion.per_destination.max_outstanding=4")
        return sets
    return []


def cases():
    for network in NETWORKS:
        for fraction in FRACTIONS:
            yield network, "none", fraction, ""
            yield network, "infiniband", fraction, DEFAULT_TIMER
            yield network, "per_destination", fraction, DEFAULT_SHARE
            yield network, "per_destination_w4", fraction, DEFAULT_SHARE
        for timer in TIMERS:
            if timer != DEFAULT_TIMER:
                yield network, "infiniband", 0.05, timer
        for share in SHARES:
            if share != DEFAULT_SHARE:
                yield network, "per_destination", 0.05, share


def sweep(jobs):
    rows = load_csv(results)
    series = load_csv(series_csv)
    done = {(r["network"], r["cc"], float(r["fraction"]), str(r["setting"])) for r in rows}
    todo = [c for c in cases() if (c[0], c[1], c[2], str(c[3])) not in done]

    def one(case):
        network, cc, fraction, setting = case
        row, s = run_point(network, [f"traffic.fraction={fraction}"] + cc_sets(network, cc, setting))
        print(f"{network} {cc} {fraction} {setting}: {row}", file=sys.stderr)
        return case, row, s

    with ThreadPoolExecutor(jobs) as pool:
        for (network, cc, fraction, setting), row, s in pool.map(one, todo):
            if row is None:
                continue
            rows.append(dict(network=network, cc=cc, fraction=fraction, setting=setting, **row))
            if fraction == 0.05 and setting in ("", DEFAULT_TIMER, DEFAULT_SHARE):
                series += [dict(network=network, cc=cc, **x) for x in s]
            save_csv(results, rows, FIELDS)
            save_csv(series_csv, series, ["network", "cc", "time", "victims", "aggressors", "victim_latency"])
    return rows, series


def report(rows, series):
    print("| network | CC | hot-spot fraction | victims accepted / offered | victims' latency | hot link busy | marks | notifications |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    defaults = ("", str(DEFAULT_TIMER), str(DEFAULT_SHARE))
    for r in sorted(rows, key=lambda r: (r["network"], float(r["fraction"]), r["cc"], str(r["setting"]))):
        if str(r["setting"]) not in defaults:
            continue
        print(f"| {r['network']} | {r['cc']} | {r['fraction']} | {r['victim_accepted']} / {r['victim_offered']} | "
              f"{r['victim_latency']} | {float(r['hot_link_busy']):.0%} | {r['marked']} | {r['notifications']} |")
    print()
    print("| network | CC | setting | victims accepted / offered | victims' latency | hot link busy |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in sorted(rows, key=lambda r: (r["network"], r["cc"], float(r["setting"] or 0))):
        if r["cc"] in ("infiniband", "per_destination") and float(r["fraction"]) == 0.05:
            name = "ccti_timer" if r["cc"] == "infiniband" else "link_share"
            print(f"| {r['network']} | {r['cc']} | {name} = {r['setting']} | {r['victim_accepted']} / {r['victim_offered']} | "
                  f"{r['victim_latency']} | {float(r['hot_link_busy']):.0%} |")
    plot_over_time(series, ("victims", "victims", 1), ("aggressors", "aggressors x 20", 20),
                   lambda network: f"{network}: 5 % hot spot, load 0.4", "victims-over-time.png", mark=60000)


def plot_over_time(series, blue, red, title, filename, mark=None):
    """One panel per network, a line style per congestion control: `blue` and `red` are
    (column, label, scale) of the two quantities drawn."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, len(NETWORKS), figsize=(12, 4), sharey=True)
    for ax, network in zip(axes, NETWORKS):
        for cc, style in (("none", ":"), ("infiniband", "--"), ("per_destination", "-."), ("per_destination_w4", "-")):
            pts = [s for s in series if s["network"] == network and s["cc"] == cc]
            t = [int(s["time"]) for s in pts]
            for (column, label, scale), color in ((blue, "tab:blue"), (red, "tab:red")):
                ax.plot(t, [float(s[column]) * scale for s in pts], style, color=color, label=f"{label}, CC {cc}")
        ax.set_title(title(network))
        ax.set_xlabel("cycle")
        if mark is not None:
            ax.axvline(mark, color="grey", lw=0.5)
    axes[0].set_ylabel("accepted load (phits/cycle/endpoint)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / filename, dpi=110)


# An incast in an application: a GOAL job of 64 ranks spread over the network (rank r on
# endpoint r x stride), ranks 1 to 63 each sending 8 KiB to rank 0 at once (a gather to a
# root, as a parameter server or a flat-tree MPI_Gather does), with uniform background
# traffic at load 0.3 on the other endpoints (the victims). The run ends at the first
# sample after the job finished.
INCAST_RANKS = 64
INCAST_BYTES = 8192
INCAST_STRIDE = {"dragonfly": 16, "fat tree": 8}
incast_csv = out_dir / "incast.csv"
incast_series_csv = out_dir / "incast-series.csv"
INCAST_FIELDS = ["network", "cc", "completion_time", "ideal_root_time", "victim_offered", "victim_accepted",
                 "victim_latency", "marked", "notifications", "wall_seconds"]


def incast_config(network):
    goal = f"num_ranks {INCAST_RANKS}\nrank 0 {{\n"
    goal += "".join(f"l{r}: recv {INCAST_BYTES}b from {r} tag 1\n" for r in range(1, INCAST_RANKS))
    goal += "}\n" + "".join(f"rank {r} {{\nl1: send {INCAST_BYTES}b to 0 tag 1\n}}\n" for r in range(1, INCAST_RANKS))
    mapping = "\n".join(str(r * INCAST_STRIDE[network]) for r in range(INCAST_RANKS))
    return f"""
[simulation]
cycles = 400000
warmup = 0
seed = 3
sample_period = 1000
[traffic]
pattern = "uniform"
load = 0.3
[congestion]
targets = [0]
[workload]
background = "free"
[[workload.jobs]]
kind = "goal"
name = "incast"
mapping = "file"
mapping_contents = \"\"\"
{mapping}
\"\"\"
contents = \"\"\"
{goal}\"\"\"
""" + NETWORKS[network][len(COMMON):]


def run_incast(network, cc):
    """Runs the incast with one congestion control; returns its row and time series."""
    import h5py
    sets = cc_sets(network, cc, DEFAULT_TIMER if cc == "infiniband" else DEFAULT_SHARE)
    with tempfile.TemporaryDirectory() as tmp:
        ran = run_xnet(tmp, incast_config(network), sets)
        if ran is None:
            return None, []
        path, wall = ran
        with h5py.File(path, "r") as f:
            s = f["summary"][0]
            job = f["points/000/workload/jobs"][0]
            p = f["points/000"]
            endpoints = p["endpoints"].shape[0]
            ts = p["timeseries"][:]
        period = float(ts["time"][1] - ts["time"][0]) if len(ts) > 1 else 1.0
        victims = endpoints - INCAST_RANKS
        series = [dict(time=int(r["time"]),
                       victims=(float(r["delivered_phits"]) - float(r["aggressor_delivered_phits"])) / period / victims,
                       root=float(r["aggressor_delivered_phits"]) / period,
                       victim_latency=float(r["victim_mean_latency"])) for r in ts]
        row = dict(completion_time=int(job["completion_time"]),
                   ideal_root_time=(INCAST_RANKS - 1) * INCAST_BYTES // 16,
                   victim_offered=round(float(s["victim_offered_load"]), 4),
                   victim_accepted=round(float(s["victim_accepted_load"]), 4),
                   victim_latency=round(float(s["victim_latency_mean"]), 1),
                   marked=int(ts["marked_packets"].sum()), notifications=int(ts["notifications"].sum()),
                   wall_seconds=round(wall, 1))
        return row, series


def incast_sweep(jobs):
    rows = load_csv(incast_csv)
    series = load_csv(incast_series_csv)
    done = {(r["network"], r["cc"]) for r in rows}
    todo = [(n, cc) for n in NETWORKS for cc in CCS if (n, cc) not in done]

    def one(case):
        row, s = run_incast(*case)
        print(f"incast {case}: {row}", file=sys.stderr)
        return case, row, s

    with ThreadPoolExecutor(jobs) as pool:
        for (network, cc), row, s in pool.map(one, todo):
            if row is None:
                continue
            rows.append(dict(network=network, cc=cc, **row))
            series += [dict(network=network, cc=cc, **x) for x in s]
            save_csv(incast_csv, rows, INCAST_FIELDS)
            save_csv(incast_series_csv, series, ["network", "cc", "time", "victims", "root", "victim_latency"])
    return rows, series


def incast_report(rows, series):
    print()
    print("| network | CC | incast completion (cycles) | root link alone | background accepted / offered | background latency | marks | notifications |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in sorted(rows, key=lambda r: (r["network"], r["cc"])):
        print(f"| {r['network']} | {r['cc']} | {int(r['completion_time']):,} | {int(r['ideal_root_time']):,} | "
              f"{r['victim_accepted']} / {r['victim_offered']} | {r['victim_latency']} | {r['marked']} | {r['notifications']} |")
    plot_over_time(series, ("victims", "background", 1), ("root", "root's link x 0.3", 0.3),
                   lambda network: f"{network}: 63-to-1 incast of 8 KiB, background 0.3", "incast-over-time.png")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2, help="runs side by side")
    ap.add_argument("--replot", action="store_true", help="only redraw and reprint from the CSV files")
    args = ap.parse_args()
    if not args.replot:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "xnet"], cwd=root, check=True)
        sweep(args.jobs)
        incast_sweep(args.jobs)
    report(load_csv(results), load_csv(series_csv))
    incast_report(load_csv(incast_csv), load_csv(incast_series_csv))


if __name__ == "__main__":
    main()
