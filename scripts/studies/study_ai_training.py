#!/usr/bin/env python3
"""A GPT-class training step on 1,024 GPUs over four fabrics, ECMP against adaptive
routing (docs/studies/ai-training.md).

128 nodes of 8 GPUs (NVSwitch, NVLink at 9 phits a cycle), a 400 Gb/s NIC per GPU (one phit
of 64 bytes a cycle of 1.28 ns), rail-optimized placement where the fabric has leaves. The
job: a transformer of 24 layers, hidden 1,024 (a GPT-350M class), tensor 8 inside each node
and data parallelism 128 across the nodes, one sequence of 2,048 tokens per data-parallel
rank, as Megatron-LM runs it. Each run ends when the step does.

    scripts/studies/study_ai_training.py [--jobs 2]
    scripts/studies/study_ai_training.py --replot

Runs already in results.csv are not run again (delete the file to start over).
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
out_dir = root / "docs/studies/ai-training"
results = out_dir / "results.csv"
sys.path.insert(0, str(root / "python"))

COMMON = """
[simulation]
cycles = 2147483648
warmup = 0
sample_period = 20000

[router]
vcs = 4
packet_size = 64        # 4 KiB packets of 64-byte phits
input_buffer = 256
output_buffer = 128
router_delay = 50       # 64 ns

[routing]
algorithm = "{routing}"
selection = "{selection}"

[workload]
bytes_per_phit = 64
ns_per_cycle = 1.28     # a 400 Gb/s NIC: a phit a cycle

[[workload.jobs]]
name = "gpt"
kind = "training"
layers = 24
hidden = 1024
heads = 16
sequence = 2048
vocabulary = 51200
micro_batch = 1
global_batch = 128
tensor = 8
pipeline = 1
data = 128
gpu_tflops = 989
efficiency = 0.5
"""

NODES = """
[topology.nodes]
gpus = 8
placement = "rail"
nvlink_latency = 40
scale_up_packet = 1024
"""

# Each fabric: its [topology] (without the nodes), the routings it runs, and what it is.
FABRICS = {
    "rail-clos": (
        'kind = "clos"\nleaves = 32\nendpoints_per_leaf = 32\nspines = 32\nterminal_latency = 4\n'
        'link_latency = 26\nlink_speeds = { nvlink = 9 }\n',
        "minimal",
        "rail-optimized leaf-spine, 1:1: 32 leaves of 32 NIC ports (4 groups of 8 rails) under 32 spines; "
        "64 switches of radix 64, 1,024 leaf-spine links",
    ),
    "rail-clos-2to1": (
        'kind = "clos"\nleaves = 32\nendpoints_per_leaf = 32\nspines = 16\nterminal_latency = 4\n'
        'link_latency = 26\nlink_speeds = { nvlink = 9 }\n',
        "minimal",
        "the same, 2:1 oversubscribed: 16 spines; 48 switches, 512 leaf-spine links",
    ),
    "two-planes": (
        'kind = "clos"\nleaves = 32\nendpoints_per_leaf = 32\nspines = 32\nterminal_latency = 4\n'
        'link_latency = 26\nlink_speeds = { nvlink = 9, nic = 0.5, network = 0.5 }\n',
        "minimal",
        "two planes (each NIC 2 x 200 Gb/s, one port per plane), each plane the 1:1 leaf-spine at half "
        "speed; 128 switches of radix 64 at 200 Gb/s, 2,048 leaf-spine links",
    ),
    "dragonfly": (
        'kind = "dragonfly"\np = 4\na = 8\nh = 4\nterminal_latency = 4\nlocal_latency = 13\n'
        'global_latency = 78\nlink_speeds = { nvlink = 9 }\n',
        "dragonfly_ugal",
        "Dragonfly p = 4, a = 8, h = 4: 33 groups, 264 routers of radix 15 (1,056 NIC ports; the job "
        "takes the first 1,024), 924 local and 528 global links",
    ),
    "hyperx": (
        'kind = "hyperx"\nsides = [8, 8]\nendpoints_per_switch = 16\nterminal_latency = 4\n'
        'link_latency = 26\nlink_speeds = { nvlink = 9 }\n',
        "minimal",
        "HyperX 8 x 8, 16 NIC ports per switch: 64 switches of radix 30, 448 links",
    ),
}
SELECTIONS = ["ecmp", "adaptive"]
FIELDS = ["fabric", "routing", "selection", "status", "step_ms", "ideal_ms", "compute_ms", "exposed_ms",
          "data_allreduce_us", "data_busbw_gbs", "busiest_link", "busiest_class", "fabric_per_nic", "packets",
          "wall_seconds"]
# Result files stay here (not in the repository), for a second look.
runs_dir = pathlib.Path(tempfile.gettempdir()) / "xnet-ai-training"


def config(fabric, selection):
    topology, routing, _ = FABRICS[fabric]
    if fabric == "dragonfly" and selection == "ecmp":
        routing = "dragonfly_min"  # one minimal path per pair: a flow keeps its path
    nodes = NODES + ("planes = 2\n" if fabric == "two-planes" else "")
    text = "[topology]\n" + topology + nodes + COMMON.format(routing=routing, selection=selection)
    return text, routing


def run(fabric_name, selection):
    import h5py
    from xnet_study import read_collectives, read_jobs, read_links, read_steps

    text, routing = config(fabric_name, selection)
    runs_dir.mkdir(exist_ok=True)
    cfg = runs_dir / f"{fabric_name}-{selection}.toml"
    cfg.write_text(text)
    out = runs_dir / f"{fabric_name}-{selection}.h5"
    t0 = time.time()
    done = subprocess.run([str(xnet), "run", str(cfg), "-q", "-t", "1", "-o", str(out)],
                          capture_output=True, text=True)
    wall = time.time() - t0
    if done.returncode not in (0, 4):
        raise SystemExit(f"{fabric_name} {selection}: {done.stderr}")
    steps = read_steps(out).iloc[0]
    colls = read_collectives(out)
    data = colls[colls["collective"].str.startswith("data")]
    jobs = read_jobs(out).iloc[0]
    links = read_links(out)
    with h5py.File(out) as f:
        g = f["points/000"]
        classes = str(g.attrs["link_class_names"].decode() if isinstance(g.attrs["link_class_names"], bytes)
                      else g.attrs["link_class_names"]).split(",")
        packets = int(g.attrs["delivered_total"])
    # The busiest link outside the nodes (NIC and fabric links).
    fabric = links[[classes[int(c)] not in ("terminal", "nvlink") for c in links["class"]]]
    busiest = fabric.sort_values("utilisation", ascending=False).iloc[0]
    # Phits on switch-to-switch fabric links per phit through a NIC link (both ways):
    # 0 when all traffic between nodes stays under one leaf.
    nic = links[[classes[int(c)] == "nic" for c in links["class"]]]["phits"].sum()
    inner = fabric[[classes[int(c)] != "nic" for c in fabric["class"]]]["phits"].sum()
    row = {
        "fabric": fabric_name, "routing": routing, "selection": selection,
        "status": "completed" if bool(jobs["finished"]) else "unfinished",
        "step_ms": round(float(steps["time_ns"]) / 1e6, 3),
        "ideal_ms": round(float(jobs["ideal_time"]) * 1.28 / 1e6, 3),
        "compute_ms": round(float(steps["compute_max_ns"]) / 1e6, 3),
        "exposed_ms": round(float(steps["exposed_ns"]) / 1e6, 3),
        "data_allreduce_us": round(float(data["time_ns"].mean()) / 1e3, 1),
        "data_busbw_gbs": round(float(data["busbw_gbs"].mean()), 2),
        "busiest_link": round(float(busiest["utilisation"]), 3),
        "busiest_class": classes[int(busiest["class"])],
        "fabric_per_nic": round(float(inner) / max(float(nic), 1.0) * 2, 3),
        "packets": packets,
        "wall_seconds": round(wall, 1),
    }
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=1, help="runs at once (each takes one core)")
    ap.add_argument("--replot", action="store_true", help="only print the table of results.csv")
    args = ap.parse_args()
    out_dir.mkdir(parents=True, exist_ok=True)
    done = []
    if results.exists():
        with open(results) as f:
            done = list(csv.DictReader(f))
    have = {(r["fabric"], r["selection"]) for r in done}
    todo = [(fab, sel) for fab in FABRICS for sel in SELECTIONS if (fab, sel) not in have]
    if not args.replot and todo:
        with ThreadPoolExecutor(args.jobs) as pool:
            for row in pool.map(lambda t: run(*t), todo):
                done.append(row)
                print(row, flush=True)
                with open(results, "w", newline="") as f:
                    w = csv.DictWriter(f, FIELDS)
                    w.writeheader()
                    w.writerows(done)
    order = {f: i for i, f in enumerate(FABRICS)}
    done.sort(key=lambda r: (order[r["fabric"]], r["selection"]))
    print("| fabric | routing | selection | step ms | exposed ms | data all-reduce µs | busbw GB/s | busiest link | fabric hops per NIC hop | run s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in done:
        print(f"| {r['fabric']} | {r['routing']} | {r['selection']} | {float(r['step_ms']):.2f} | "
              f"{float(r['exposed_ms']):.2f} | {float(r['data_allreduce_us']):,.0f} | {float(r['data_busbw_gbs']):.1f} | "
              f"{float(r['busiest_link']):.2f} ({r['busiest_class']}) | {float(r['fabric_per_nic']):.2f} | "
              f"{float(r['wall_seconds']):.0f} |")


if __name__ == "__main__":
    main()
