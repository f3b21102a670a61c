#!/usr/bin/env python3
"""Credits, PFC and lossy links side by side (docs/transports.md, "First measurements").

Two networks with the same buffers under every flow control: BookSim2's Dragonfly (p = 4,
a = 8, h = 4, 1,056 endpoints, 10-cycle local and 100-cycle global links) under UGAL-L,
with 512-phit input buffers (PFC's headroom on the global links is 248 phits), and an
8-ary 3-tree (512 endpoints, 1-cycle links) under Up*/Down* with 128-phit ones. Three
traffics: uniform at load 0.5 and 0.9, and a hot spot (5 % of every endpoint's packets to
endpoint 0) at load 0.4. 20,000 cycles, 5,000 of warm-up.

    scripts/studies/study_flow_control.py [--jobs 2]
    scripts/studies/study_flow_control.py --replot

Writes docs/studies/flow-control/results.csv and prints a Markdown table. Runs already in
the CSV are not run again (delete it to start over). XNET=path picks the binary.
"""
import argparse
import csv
import os
import pathlib
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import h5py

root = pathlib.Path(__file__).resolve().parents[2]
xnet = os.environ.get("XNET", str(root / "target/release/xnet"))
out_dir = root / "docs/studies/flow-control"
results = out_dir / "results.csv"

COMMON = """
[simulation]
cycles = 20000
warmup = 5000
seed = 3
sample_period = 1000
"""

NETWORKS = {
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
input_buffer = 512
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
input_buffer = 128
output_buffer = 32
[routing]
algorithm = "up_down"
""",
}

TRAFFICS = {
    "uniform 0.5": '[traffic]\npattern = "uniform"\nload = 0.5\n',
    "uniform 0.9": '[traffic]\npattern = "uniform"\nload = 0.9\n',
    "hot spot 5 % at 0.4": '[traffic]\npattern = "hot_spot"\nfraction = 0.05\nload = 0.4\n',
}

MODES = ["credits", "pfc", "none"]

FIELDS = ["network", "traffic", "flow_control", "accepted_load", "victim_accepted_load", "latency_mean",
          "latency_p99", "victim_latency_mean", "dropped_load", "pause_frames", "longest_pause",
          "stalled_link_share", "wall_seconds"]


def run(key):
    network, traffic, mode = key
    text = NETWORKS[network] + TRAFFICS[traffic]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = pathlib.Path(tmp) / "run.toml"
        cfg.write_text(text)
        out = pathlib.Path(tmp) / "run.h5"
        start = time.time()
        subprocess.run([xnet, "run", str(cfg), "-q", "-t", "1", "-o", str(out),
                        "--set", f"router.flow_control={mode}"], check=True)
        wall = time.time() - start
        with h5py.File(out) as f:
            s = f["summary"][0]
            links = f["points/000/links"][:]
    window = 15000
    stalled = float((links["stall_cycles"] > window / 10).mean())
    return {
        "network": network, "traffic": traffic, "flow_control": mode,
        "accepted_load": round(float(s["accepted_load"]), 4),
        "victim_accepted_load": round(float(s["victim_accepted_load"]), 4),
        "latency_mean": round(float(s["latency_mean"]), 1),
        "latency_p99": round(float(s["latency_p99"]), 1),
        "victim_latency_mean": round(float(s["victim_latency_mean"]), 1),
        "dropped_load": round(float(s["dropped_load"]), 4),
        "pause_frames": int(s["pause_frames"]),
        "longest_pause": int(s["longest_pause"]),
        "stalled_link_share": round(stalled, 3),
        "wall_seconds": round(wall, 1),
    }


def key_of(r):
    return (r["network"], r["traffic"], r["flow_control"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--replot", action="store_true", help="only print the table of the CSV")
    args = ap.parse_args()
    out_dir.mkdir(parents=True, exist_ok=True)
    done = []
    if results.exists():
        with open(results) as f:
            done = list(csv.DictReader(f))
    have = {key_of(r) for r in done}
    keys = [(n, t, m) for n in NETWORKS for t in TRAFFICS for m in MODES]
    todo = [k for k in keys if k not in have]
    if not args.replot and todo:
        with ThreadPoolExecutor(args.jobs) as pool:
            for row in pool.map(run, todo):
                done.append(row)
                print(row, flush=True)
                with open(results, "w", newline="") as f:
                    w = csv.DictWriter(f, FIELDS)
                    w.writeheader()
                    w.writerows(done)
    order = {k: i for i, k in enumerate(keys)}
    done.sort(key=lambda r: order.get(key_of(r), len(order)))
    print("| network | traffic | flow control | accepted | victims accepted | latency mean / p99 | "
          "victims' latency | dropped load | pauses | longest pause | links stalled > 10 % |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in done:
        print(f"| {r['network']} | {r['traffic']} | {r['flow_control']} | {float(r['accepted_load']):.3f} | "
              f"{float(r['victim_accepted_load']):.3f} | {float(r['latency_mean']):,.0f} / "
              f"{float(r['latency_p99']):,.0f} | {float(r['victim_latency_mean']):,.0f} | "
              f"{float(r['dropped_load']):.3f} | {int(r['pause_frames']):,} | {int(r['longest_pause']):,} | "
              f"{float(r['stalled_link_share']) * 100:.0f} % |")


if __name__ == "__main__":
    main()
