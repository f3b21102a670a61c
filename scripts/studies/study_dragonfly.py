#!/usr/bin/env python3
"""Dragonfly adaptive routings side by side (docs/studies/dragonfly.md).

Latency and accepted load against offered load for every Dragonfly routing of xnet, each on
the VCs its registry entry states, under uniform traffic, the group shift (every endpoint
to the same position in the next group: minimal routing's worst case) and a mix (half the
packets shifted, half uniform), on BookSim2's Dragonfly (p = 4, a = 8, h = 4, 33 groups,
1,056 endpoints, 10-cycle local and 100-cycle global links, 256-phit buffers); a transient
(uniform traffic that turns into the group shift in the middle of a run) with its time
series; and, with --million, a few points of the million-endpoint Dragonfly.

    scripts/studies/study_dragonfly.py [--jobs 2]        # the 1k network and the transient
    scripts/studies/study_dragonfly.py --million         # adds the million-endpoint points
    scripts/studies/study_dragonfly.py --replot

Writes docs/studies/dragonfly/{results.csv,transient.csv,*.png} and prints Markdown tables.
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
out_dir = root / "docs/studies/dragonfly"
results = out_dir / "results.csv"
transient = out_dir / "transient.csv"

# BookSim2's Dragonfly example (its dragonflyconfig: p = 4, a = 8, h = 4, local 10 and
# global 100 cycles), with buffers deep enough for the global links' round trip.
NETWORK_1K = """
[simulation]
cycles = 6000
warmup = 2000
seed = 5
sample_period = 500
[topology]
kind = "dragonfly"
p = 4
a = 8
h = 4
local_latency = 10
global_latency = 100
[router]
vcs = 4
input_buffer = 256
[routing]
algorithm = "dragonfly_min"
[traffic]
pattern = "uniform"
load = 0.1
"""

# label -> (algorithm, VCs, extra settings). The VCs are the registry's (proved by
# `xnet routes`; models/tests/verifier.rs).
ROUTINGS = {
    "MIN": ("dragonfly_min", 2, []),
    "Valiant": ("dragonfly_valiant", 3, []),
    "UGAL-L": ("dragonfly_ugal", 3, []),
    "UGAL-G": ("dragonfly_ugal_g", 3, []),
    "PB": ("dragonfly_pb", 3, []),
    "PAR": ("dragonfly_par", 4, []),
    "IMB": ("dragonfly_imb", 4, []),
    "OFAR": ("dragonfly_ofar", 6, []),
    "OFAR+escape": ("dragonfly_ofar", 4, ["routing.vc_policy=any", "routing.escape_vcs=1"]),
    "Q-adaptive": ("dragonfly_q", 4, []),
}
PATTERNS = {
    "uniform": ([], [round(0.1 * i, 2) for i in range(1, 11)]),
    "group_shift": (["traffic.pattern=group_shift"], [round(0.05 * i, 2) for i in range(1, 11)]),
    "mix": (["traffic.pattern=group_shift", "traffic.fraction=0.5"], [round(0.1 * i, 2) for i in range(1, 9)]),
}
FIELDS = ["network", "routing", "vcs", "pattern", "load", "accepted", "latency_mean", "latency_p99",
          "hops_mean", "saturated", "jain", "wall_seconds", "mhops_per_s"]

# The transient: uniform traffic turning into the group shift at CHANGE_AT.
TRANSIENT_LOAD, CHANGE_AT, TRANSIENT_CYCLES, TRANSIENT_SAMPLE = 0.25, 10_000, 30_000, 250
TRANSIENT_FIELDS = ["routing", "time", "accepted", "latency_mean", "hops_mean"]

# The million-endpoint Dragonfly: a few points, short runs (its config's 10,000 cycles take
# ten minutes a point on this machine).
MILLION = [("UGAL-L", ["routing.algorithm=dragonfly_ugal"]),
           ("PAR", ["routing.algorithm=dragonfly_par", "router.vcs=4"]),
           ("UGAL-G", ["routing.algorithm=dragonfly_ugal_g", "routing.dragonfly_ugal_g.report_period=10"]),
           ("PB", ["routing.algorithm=dragonfly_pb", "routing.dragonfly_pb.report_period=10"]),
           ("IMB", ["routing.algorithm=dragonfly_imb", "router.vcs=4"]),
           ("OFAR", ["routing.algorithm=dragonfly_ofar", "router.vcs=6"])]
MILLION_LOADS, MILLION_CYCLES, MILLION_WARMUP = [0.15, 0.3], 3000, 1500


def run_point(config, sets, threads=1):
    """Runs one point; returns the summary row and the time series as dicts."""
    import h5py
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "point.h5"
        cmd = [str(xnet), "run", str(config), "-q", "-t", str(threads), "-o", str(path)]
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
            series = [{k: float(r[k]) for k in ("time", "accepted_load", "mean_latency", "mean_hops")}
                      for r in p["timeseries"][:]]
            hops_per_s = float(p.attrs["packet_hops_per_second"]) if "packet_hops_per_second" in p.attrs else 0.0
        row = dict(accepted=round(float(s["accepted_load"]), 4), latency_mean=round(float(s["latency_mean"]), 1),
                   latency_p99=round(float(s["latency_p99"]), 1), hops_mean=round(float(s["hops_mean"]), 3),
                   saturated=int(s["saturated"]), jain=round(float(s["jain_accepted"]), 3),
                   wall_seconds=round(wall, 1), mhops_per_s=round(hops_per_s / 1e6, 3))
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


def sweep_1k(jobs):
    rows = load_csv(results)
    done = {(r["network"], r["routing"], r["pattern"], r["load"]) for r in rows}
    config = out_dir / "dragonfly-4-8-4.toml"
    out_dir.mkdir(parents=True, exist_ok=True)
    config.write_text(NETWORK_1K.lstrip())
    todo = []
    for label, (algorithm, vcs, extra) in ROUTINGS.items():
        for pattern, (psets, loads) in PATTERNS.items():
            for load in loads:
                if ("1k", label, pattern, str(load)) in done:
                    continue
                sets = [f"routing.algorithm={algorithm}", f"router.vcs={vcs}", f"traffic.load={load}"] + extra + psets
                todo.append((dict(network="1k", routing=label, vcs=vcs, pattern=pattern, load=load), sets))

    def one(item):
        meta, sets = item
        row, _ = run_point(config, sets)
        return dict(meta, **row) if row else None

    with ThreadPoolExecutor(jobs) as pool:
        for k, row in enumerate(pool.map(one, todo)):
            if row:
                rows.append(row)
            if k % 20 == 19:
                save_csv(results, rows, FIELDS)
                print(f"{k + 1}/{len(todo)} points", file=sys.stderr)
    save_csv(results, rows, FIELDS)
    return rows


def run_transient(jobs):
    rows = load_csv(transient)
    done = {r["routing"] for r in rows}
    config = out_dir / "dragonfly-4-8-4.toml"
    todo = [label for label in ROUTINGS if label not in done]

    def one(label):
        algorithm, vcs, extra = ROUTINGS[label]
        sets = [f"routing.algorithm={algorithm}", f"router.vcs={vcs}", f"traffic.load={TRANSIENT_LOAD}",
                f"simulation.cycles={TRANSIENT_CYCLES}", "simulation.warmup=0",
                f"simulation.sample_period={TRANSIENT_SAMPLE}", f"traffic.change_at={CHANGE_AT}",
                "traffic.change_to=group_shift"] + extra
        _, series = run_point(config, sets)
        return [dict(routing=label, time=int(s["time"]), accepted=round(s["accepted_load"], 4),
                     latency_mean=round(s["mean_latency"], 1), hops_mean=round(s["mean_hops"], 3)) for s in series]

    with ThreadPoolExecutor(jobs) as pool:
        for series in pool.map(one, todo):
            rows.extend(series)
    save_csv(transient, rows, TRANSIENT_FIELDS)
    return rows


def run_million(threads):
    rows = load_csv(results)
    done = {(r["network"], r["routing"], r["pattern"], float(r["load"])) for r in rows}
    config = root / "configs/dragonfly-23-46-23.toml"
    for load in MILLION_LOADS:
        for label, sets in MILLION:
            pattern, psets = "group_shift", ["traffic.pattern=group_shift"]
            if ("1m", label, pattern, load) in done:
                continue
            vcs = next((s.split("=")[1] for s in sets if s.startswith("router.vcs=")), "3")
            allsets = sets + psets + [f"traffic.load={load}", f"simulation.cycles={MILLION_CYCLES}",
                                      f"simulation.warmup={MILLION_WARMUP}", "simulation.sample_period=500"]
            row, _ = run_point(config, allsets, threads)
            if row:
                rows.append(dict(network="1m", routing=label, vcs=vcs, pattern=pattern, load=load, **row))
                save_csv(results, rows, FIELDS)
                print(f"1m {label} {pattern} {load}: {row}", file=sys.stderr)
    return rows


def saturation(rows, label, pattern):
    """Of a 1k sweep: the highest unsaturated point, the first saturated one above it, and
    the saturated loads below it (a routing that misroutes only past a threshold can be
    saturated at a low load and not at higher ones)."""
    points = sorted((r for r in rows if r["network"] == "1k" and r["routing"] == label and r["pattern"] == pattern),
                    key=lambda r: float(r["load"]))
    unsaturated = [r for r in points if not int(r["saturated"])]
    last = unsaturated[-1] if unsaturated else None
    above = [r for r in points if int(r["saturated"]) and (last is None or float(r["load"]) > float(last["load"]))]
    below = [r for r in points if int(r["saturated"]) and last is not None and float(r["load"]) < float(last["load"])]
    return last, (above[0] if above else None), below


def report(rows, trows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = dict(zip(ROUTINGS, plt.get_cmap("tab10").colors))
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    for col, pattern in enumerate(PATTERNS):
        for label in ROUTINGS:
            pts = sorted((r for r in rows if r["network"] == "1k" and r["routing"] == label
                          and r["pattern"] == pattern), key=lambda r: float(r["load"]))
            if not pts:
                continue
            x = [float(r["load"]) for r in pts]
            style = "--" if label in ("MIN", "Valiant") else "-"
            axes[0][col].plot(x, [float(r["accepted"]) for r in pts], style, marker="o", ms=3,
                              color=colours[label], label=f"{label} ({pts[0]['vcs']} VCs)")
            lat = [float(r["latency_mean"]) if not int(r["saturated"]) else float("nan") for r in pts]
            axes[1][col].plot(x, lat, style, marker="o", ms=3, color=colours[label], label=label)
        axes[0][col].set_title(pattern.replace("_", " ") + (" (half shifted, half uniform)" if pattern == "mix" else ""))
        axes[0][col].set_xlabel("offered load (phits/cycle/endpoint)")
        axes[0][col].set_ylabel("accepted load")
        axes[1][col].set_xlabel("offered load")
        axes[1][col].set_ylabel("mean latency, cycles (unsaturated points)")
        axes[1][col].set_yscale("log")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Dragonfly(p=4, a=8, h=4): 1,056 endpoints, local 10 / global 100 cycles")
    fig.tight_layout()
    fig.savefig(out_dir / "load-1k.png", dpi=110)

    fig, axes = plt.subplots(1, 2, figsize=(14, 4.8))
    for label in ROUTINGS:
        pts = [r for r in trows if r["routing"] == label]
        if not pts:
            continue
        t = [int(r["time"]) for r in pts]
        axes[0].plot(t, [float(r["latency_mean"]) for r in pts], color=colours[label], label=label)
        axes[1].plot(t, [float(r["accepted"]) for r in pts], color=colours[label], label=label)
    for ax in axes:
        ax.axvline(CHANGE_AT, color="grey", ls=":")
        ax.set_xlabel("cycle (uniform until %d, then the group shift)" % CHANGE_AT)
    axes[0].set_ylabel("mean latency of the packets delivered in each sample, cycles")
    axes[0].set_yscale("log")
    axes[1].set_ylabel("accepted load in each sample")
    axes[1].legend(fontsize=8, ncol=2)
    fig.suptitle(f"Transient at load {TRANSIENT_LOAD}: uniform traffic turns into the group shift")
    fig.tight_layout()
    fig.savefig(out_dir / "transient-1k.png", dpi=110)

    print("| routing | VCs | uniform: highest unsaturated load (accepted at the next) | group shift | mix |")
    print("| --- | --- | --- | --- | --- |")
    for label, (algorithm, vcs, _) in ROUTINGS.items():
        cells = []
        for pattern in PATTERNS:
            last, sat, below = saturation(rows, label, pattern)
            if last is None and sat is None:
                cells.append("")
                continue
            text = f"{float(last['load']):.2f}" if last else "none"
            if sat:
                text += f" ({float(sat['accepted']):.3f} at {float(sat['load']):.2f})"
            else:
                text += " (none saturated)"
            if below:
                text += "; saturated at " + ", ".join(f"{float(r['load']):.2f} ({float(r['accepted']):.3f})" for r in below)
            cells.append(text)
        print(f"| {label} (`{algorithm}`) | {vcs} | " + " | ".join(cells) + " |")
    print()
    print("| routing | uniform 0.3: latency, hops | group shift 0.2: latency, hops | mix 0.3: latency, hops |")
    print("| --- | --- | --- | --- |")
    for label in ROUTINGS:
        cells = []
        for pattern, load in [("uniform", 0.3), ("group_shift", 0.2), ("mix", 0.3)]:
            r = next((r for r in rows if r["network"] == "1k" and r["routing"] == label
                      and r["pattern"] == pattern and abs(float(r["load"]) - load) < 1e-9), None)
            cells.append("" if r is None else
                         f"{float(r['latency_mean']):.0f}{' (sat.)' if int(r['saturated']) else ''}, {float(r['hops_mean']):.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    print("| routing | latency before the change | first 2,000 cycles after | last 10,000 cycles | accepted, last 10,000 |")
    print("| --- | --- | --- | --- | --- |")
    for label in ROUTINGS:
        pts = [r for r in trows if r["routing"] == label]
        if not pts:
            continue

        def mean(key, lo, hi):
            v = [float(r[key]) for r in pts if lo < int(r["time"]) <= hi and float(r[key]) == float(r[key])]
            return sum(v) / len(v) if v else float("nan")
        print(f"| {label} | {mean('latency_mean', 4000, CHANGE_AT):.0f} | "
              f"{mean('latency_mean', CHANGE_AT, CHANGE_AT + 2000):.0f} | "
              f"{mean('latency_mean', TRANSIENT_CYCLES - 10000, TRANSIENT_CYCLES):.0f} | "
              f"{mean('accepted', TRANSIENT_CYCLES - 10000, TRANSIENT_CYCLES):.3f} |")
    million = [r for r in rows if r["network"] == "1m"]
    if million:
        print()
        print(f"| routing (1M, {MILLION_CYCLES} cycles) | pattern | load | accepted | latency | hops | wall s | M hops/s |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in sorted(million, key=lambda r: (float(r["load"]), list(ROUTINGS).index(r["routing"]))):
            print(f"| {r['routing']} ({r['vcs']} VCs) | {r['pattern']} | {float(r['load']):.2f} | {float(r['accepted']):.3f}"
                  f"{' (sat.)' if int(r['saturated']) else ''} | {float(r['latency_mean']):.0f} | "
                  f"{float(r['hops_mean']):.2f} | {r['wall_seconds']} | {r['mhops_per_s']} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2, help="runs side by side (1k network)")
    ap.add_argument("--threads", type=int, default=2, help="threads of a million-endpoint run")
    ap.add_argument("--million", action="store_true", help="also run the million-endpoint points")
    ap.add_argument("--replot", action="store_true", help="only redraw and reprint from the CSV files")
    args = ap.parse_args()
    if not args.replot:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "xnet"], cwd=root, check=True)
        sweep_1k(args.jobs)
        run_transient(args.jobs)
        if args.million:
            run_million(args.threads)
    report(load_csv(results), load_csv(transient))


if __name__ == "__main__":
    main()
