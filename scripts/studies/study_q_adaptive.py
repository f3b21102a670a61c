#!/usr/bin/env python3
"""Q-adaptive (Kang, Wang and Lan, HPDC'21) against the Dragonfly routings it was compared
with, long enough for it to learn (docs/studies/dragonfly.md, "Q-adaptive").

Two networks, both the authors' 1,056-endpoint Dragonfly (p = 4, a = 8, h = 4, 33 groups):
  authors  their SST parameters in cycles of 2 ns: 128-byte packets of 16 phits (32 ns on a
           4 GB/s link), host links 10 ns (5 cycles), local 30 ns (15), global 300 ns (150),
           a router's input and output 10 ns each (router_delay 10), 20 packets of buffer per
           VC at the input and the output (320 phits), 5 VCs, a crossbar 10 times the links
           (speedup 10)
  default  the study's network (BookSim2's: local 10, global 100 cycles) on xnet's default
           router (4 VCs, 256-phit input buffers)
Routings: MIN, Valiant, UGAL-L, UGAL-G, PAR, and Q-adaptive with the authors' rules and with
`feedback = "taken"`, `source_outputs = "global"` and both. Patterns: the group shift (every
endpoint to the same position in the next group; the authors' ADV+1 sends to any endpoint
of the next group, which loads the same global links) and uniform traffic. Every run warms
up 100,000 cycles (Q-adaptive learns for about 80,000 under the shift) and measures the
next 50,000; loads in steps of 0.05 (0.1 uniform), up to the first saturated one.

Usage: scripts/studies/study_q_adaptive.py   (about 40 minutes on 2 cores)
Writes docs/studies/dragonfly/q-adaptive.csv and prints Markdown tables.
"""
import csv
import pathlib
import subprocess
import sys
import tempfile

root = pathlib.Path(__file__).resolve().parents[2]
xnet = root / "target/release/xnet"
out_csv = root / "docs/studies/dragonfly/q-adaptive.csv"

COMMON = """
[simulation]
cycles = 150000
warmup = 100000
seed = 5
sample_period = 5000
[routing]
algorithm = "dragonfly_min"
[traffic]
pattern = "uniform"
load = 0.1
"""

NETWORKS = {
    "authors": """
[topology]
kind = "dragonfly"
p = 4
a = 8
h = 4
terminal_latency = 5
local_latency = 15
global_latency = 150
[router]
vcs = 5
packet_size = 16
input_buffer = 320
output_buffer = 320
speedup = 10
router_delay = 10
""",
    "default": """
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
""",
}

# label -> (algorithm, VCs on the default router, extra settings). The authors' network
# gives every routing its 5 VCs.
ROUTINGS = {
    "MIN": ("dragonfly_min", 2, []),
    "Valiant": ("dragonfly_valiant", 3, []),
    "UGAL-L": ("dragonfly_ugal", 3, []),
    "UGAL-G": ("dragonfly_ugal_g", 3, []),
    "PAR": ("dragonfly_par", 4, []),
    "Q-adaptive": ("dragonfly_q", 4, []),
    "Q, taken": ("dragonfly_q", 4, ["routing.dragonfly_q.feedback=taken"]),
    "Q, global": ("dragonfly_q", 4, ["routing.dragonfly_q.source_outputs=global"]),
    "Q, taken + global": ("dragonfly_q", 4, ["routing.dragonfly_q.feedback=taken",
                                             "routing.dragonfly_q.source_outputs=global"]),
}
PATTERNS = {
    "group_shift": (["traffic.pattern=group_shift"], [round(0.05 * i, 2) for i in range(1, 12)]),
    "uniform": ([], [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]),
}
FIELDS = ["network", "routing", "pattern", "load", "accepted", "latency_mean", "hops_mean", "saturated"]


def sweep(network, label, pattern, work):
    algo, vcs, extra = ROUTINGS[label]
    sets, loads = PATTERNS[pattern]
    cfg = work / f"{network}.toml"
    cfg.write_text(COMMON + NETWORKS[network])
    if network == "authors":
        vcs = 5
    h5 = work / "s.h5"
    h5.unlink(missing_ok=True)
    args = [str(xnet), "sweep", str(cfg), "--loads", ",".join(map(str, loads)), "--stop-at-saturation",
            "-q", "-t", "2", "-o", str(h5), "--set", f"routing.algorithm={algo}", "--set", f"router.vcs={vcs}"]
    for s in sets + extra:
        args += ["--set", s]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    probe = ("import h5py,sys\nf=h5py.File(sys.argv[1])\n"
             "for k in sorted(f['points']):\n a=f['points'][k].attrs\n"
             " print(a['offered_load'], a['accepted_load'], a['latency_mean'], a['hops_mean'], int(a['saturated']))")
    py = root / ".venv/bin/python3"
    out = subprocess.run([str(py if py.exists() else "python3"), "-c", probe, str(h5)], capture_output=True,
                         text=True, check=True).stdout
    rows = []
    for load, line in zip(loads, out.splitlines()):
        _, acc, lat, hops, sat = line.split()
        rows.append({"network": network, "routing": label, "pattern": pattern, "load": load,
                     "accepted": f"{float(acc):.4f}", "latency_mean": f"{float(lat):.1f}",
                     "hops_mean": f"{float(hops):.2f}", "saturated": sat})
    return rows


def main():
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for network in NETWORKS:
            for pattern in PATTERNS:
                for label in ROUTINGS:
                    got = sweep(network, label, pattern, work)
                    rows += got
                    print(network, pattern, label, [(r["load"], r["accepted"], r["saturated"]) for r in got],
                          file=sys.stderr, flush=True)
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    for network in NETWORKS:
        print(f"\n{network}: highest unsaturated load (accepted at the next load); latency at 0.3 / 0.5\n")
        print("| routing | group shift | uniform | latency, shift 0.3 | latency, uniform 0.5 |")
        print("| --- | --- | --- | --- | --- |")
        for label in ROUTINGS:
            cells = []
            for pattern in PATTERNS:
                mine = [r for r in rows if (r["network"], r["routing"], r["pattern"]) == (network, label, pattern)]
                ok = [r for r in mine if r["saturated"] == "0"]
                sat = [r for r in mine if r["saturated"] == "1"]
                best = max((r["load"] for r in ok), default=None)
                nxt = f" ({float(sat[0]['accepted']):.3f} at {sat[0]['load']:.2f})" if sat else ""
                cells.append(f"{best:.2f}{nxt}" if best is not None else f"none{nxt}")
            lat = []
            for pattern, load in (("group_shift", 0.3), ("uniform", 0.5)):
                r = [r for r in rows if (r["network"], r["routing"], r["pattern"], r["load"]) == (network, label, pattern, load)]
                lat.append(r[0]["latency_mean"] + (" (sat.)" if r[0]["saturated"] == "1" else "") if r else "-")
            print(f"| {label} | {cells[0]} | {cells[1]} | {lat[0]} | {lat[1]} |")


if __name__ == "__main__":
    main()
