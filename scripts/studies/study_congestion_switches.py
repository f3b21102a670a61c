#!/usr/bin/env python3
"""Congestion control on switches as they are (docs/congestion.md, "On real switches").

Two networks on the router presets of real switches, in cycles of 0.64 ns (a 16-byte phit
at 200 Gb/s):
  fat tree   an 8-ary 3-tree (512 endpoints) of InfiniBand HDR switches
             (`router.preset = "infiniband_hdr"`: 4 KiB MTU, ~130 ns switches, 32 KB per VL),
             2 m cables to the hosts and 3 m between switches, OpenSM's fat-tree routing
  dragonfly  BookSim2's Dragonfly (p = 4, a = 8, h = 4, 1,056 endpoints) of Slingshot
             switches (`router.preset = "slingshot"`: 2 KiB MTU, ~350 ns switches),
             1 m to the hosts, 2 m local and 15 m global cables, UGAL-L
A hot spot (every endpoint sends a fraction of its packets to endpoint 0, the rest
uniformly) at load 0.4, its fraction chosen so that the hot link is offered 2, 4 and 10
times its rate; congestion control off, InfiniBand's (the Omni-Path fabric manager's
defaults, the one vendor set of IBA's Annex A10 values found, in these cycles) and
per-destination throttling (after Slingshot: SST Merlin's incast threshold, a window of 32
packets in flight); 300,000 cycles (192 us), the first 100,000 of warm-up, samples every
5,000.

    scripts/studies/study_congestion_switches.py        # about 15 minutes on 2 cores

Writes docs/studies/congestion/switches.csv (per run) and switches-series.csv (per sample),
and prints Markdown tables.
"""
import csv
import pathlib
import subprocess
import sys
import tempfile

root = pathlib.Path(__file__).resolve().parents[2]
xnet = root / "target/release/xnet"
out_dir = root / "docs/studies/congestion"
LOAD = 0.4

COMMON = """
[simulation]
cycles = 300000
warmup = 100000
seed = 3
sample_period = 5000
[traffic]
pattern = "hot_spot"
fraction = 0.01
load = 0.4
"""

NETWORKS = {
    "fat tree": (512, COMMON + """
[topology]
kind = "fat_tree"
k = 8
n = 3
terminal_latency = 16
link_latency = 24
[router]
preset = "infiniband_hdr"
vcs = 1
[routing]
algorithm = "ftree"
"""),
    "dragonfly": (1056, COMMON + """
[topology]
kind = "dragonfly"
p = 4
a = 8
h = 4
terminal_latency = 8
local_latency = 16
global_latency = 117
[router]
preset = "slingshot"
vcs = 3
[routing]
algorithm = "dragonfly_ugal"
"""),
}

# InfiniBand: Omni-Path FM defaults (Threshold 8 of 15 -> 2 packets, no marking rate,
# victims marked, CCTI_Increase 5, CCTI_Timer 10 x 1.024 us, limit 127, 8.3 us at index
# 127) in 0.64 ns cycles; per destination: Merlin's incast threshold, a 32-packet window.
CONTROLS = {
    "none": [],
    "infiniband": ["congestion.control=infiniband", "congestion.infiniband.threshold=516",
                   "congestion.infiniband.marking_rate=0", "congestion.infiniband.victim_mask=true",
                   "congestion.infiniband.cnp_size=2", "congestion.infiniband.ccti_increase=5",
                   "congestion.infiniband.ccti_timer=16000", "congestion.infiniband.ccti_limit=127",
                   "congestion.infiniband.ipd_step=102"],
    "per destination": ["congestion.control=per_destination", "congestion.per_destination.min_senders=6",
                        "congestion.per_destination.interval=1000", "congestion.per_destination.window=4",
                        "congestion.per_destination.max_outstanding=32"],
}
STRENGTHS = [2, 4, 10]

PROBE = """
import h5py, sys, json
f = h5py.File(sys.argv[1]); p = f['points'][list(f['points'])[0]]; a = p.attrs
ts = p['timeseries'][:]
print(json.dumps({
  'victim_accepted': float(a['victim_accepted_load']), 'victim_offered': float(a['victim_offered_load']),
  'victim_latency': float(a['victim_latency_mean']), 'aggressor_accepted': float(a['aggressor_accepted_load']),
  'series': [[int(r['time']), int(r['delivered_phits'] - r['aggressor_delivered_phits']),
              int(r['aggressor_delivered_phits']), int(r['in_flight']), int(r['marked_packets']),
              int(r['notifications'])] for r in ts]}))
"""


def fraction_for(strength, endpoints):
    """The hot-spot fraction that offers the hot link `strength` times its rate at LOAD."""
    return (strength / LOAD - 1) / (endpoints - 2)


def run(network, control, strength, work):
    endpoints, text = NETWORKS[network]
    cfg = work / "cfg.toml"
    cfg.write_text(text)
    h5 = work / "r.h5"
    h5.unlink(missing_ok=True)
    fraction = fraction_for(strength, endpoints)
    args = [str(xnet), "run", str(cfg), "-q", "-t", "2", "-o", str(h5),
            "--set", f"traffic.fraction={fraction:.6f}"]
    for s in CONTROLS[control]:
        args += ["--set", s]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    py = root / ".venv/bin/python3"
    out = subprocess.run([str(py), "-c", PROBE, str(h5)], capture_output=True, text=True, check=True).stdout
    import json
    return fraction, json.loads(out)


def main():
    rows, series = [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for network, (endpoints, _) in NETWORKS.items():
            victims = endpoints - 1
            for strength in STRENGTHS:
                for control in CONTROLS:
                    fraction, r = run(network, control, strength, work)
                    rows.append({"network": network, "strength": strength, "fraction": f"{fraction:.5f}",
                                 "control": control, "victim_offered": f"{r['victim_offered']:.4f}",
                                 "victim_accepted": f"{r['victim_accepted']:.4f}",
                                 "victim_latency": f"{r['victim_latency']:.0f}",
                                 "aggressor_accepted": f"{r['aggressor_accepted']:.4f}"})
                    prev = 0
                    for t, vict, aggr, in_flight, marks, notes in r["series"]:
                        period = t - prev
                        prev = t
                        series.append({"network": network, "strength": strength, "control": control, "time": t,
                                       "victim_accepted": f"{vict / max(period, 1) / victims:.4f}",
                                       "hot_link": f"{aggr / max(period, 1):.4f}", "in_flight": in_flight,
                                       "marked": marks, "notifications": notes})
                    print(rows[-1], file=sys.stderr, flush=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, data in (("switches.csv", rows), ("switches-series.csv", series)):
        with open(out_dir / path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(data[0]))
            w.writeheader()
            w.writerows(data)
    print("| network | hot link offered | fraction | control | victims accepted / offered | victims' latency | hot link carried |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['network']} | {r['strength']}x | {r['fraction']} | {r['control']} | "
              f"{r['victim_accepted']} / {r['victim_offered']} | {r['victim_latency']} | {r['aggressor_accepted']} |")


if __name__ == "__main__":
    main()
