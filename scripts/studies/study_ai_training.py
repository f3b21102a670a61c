#!/usr/bin/env python3
"""GPT-class training steps over AI-cluster fabrics, ECMP against adaptive routing
(docs/studies/ai-training.md), in four parts:

- `one-job` (results.csv): a GPT-350M-class step on 1,024 GPUs over six fabrics;
- `two-jobs` (results-two-jobs.csv): two such jobs of 512 GPUs on nodes a scheduler
  scattered over the same 1,024, alone and together, on a top-of-rack and a rail Clos;
- `alltoall` (results-alltoall.csv): NCCL's all-to-all over the 1,024 GPUs with and
  without PXN, on the rail Clos and on a rail-only fabric;
- `16k` (results-16k.csv): the GPT-2-small-class step of configs/training-gpt-16k.toml on
  16,384 GPUs over fabrics of about the same cost (a run: 1 rank x 2 threads, 10 GiB).

128 nodes of 8 GPUs (NVSwitch, NVLink at 9 phits a cycle), a 400 Gb/s NIC per GPU (one phit
of 64 bytes a cycle of 1.28 ns), rail-optimized placement where the fabric has leaves. The
job: a transformer of 24 layers, hidden 1,024 (a GPT-350M class), tensor 8 inside each node
and data parallelism 128 across the nodes, one sequence of 2,048 tokens per data-parallel
rank, as Megatron-LM runs it. Each run ends when the step does.

    scripts/studies/study_ai_training.py [--part one-job|two-jobs|alltoall|16k] [--jobs 2] [--only TEXT]
    scripts/studies/study_ai_training.py --part two-jobs --replot

Runs already in a part's CSV are not run again (delete the file to start over).
"""
import argparse
import csv
import os
import pathlib
import random
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

root = pathlib.Path(__file__).resolve().parents[2]
xnet = pathlib.Path(os.environ.get("XNET", root / "target/release/xnet"))  # XNET: another build
out_dir = root / "docs/studies/ai-training"
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
{selection}

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
    "dual-tor": (
        'kind = "clos"\nleaves = 64\nendpoints_per_leaf = 32\nspines = 32\nterminal_latency = 4\n'
        'link_latency = 26\nlink_speeds = { nvlink = 9, nic = 0.5, network = 0.5 }\n',
        "minimal",
        "dual-ToR (Alibaba HPN): each NIC 2 x 200 Gb/s, its ports on the two leaves of a pair, one fabric of "
        "64 leaves (32 pairs) under 32 spines, all at 200 Gb/s; 96 switches of radix 64, 2,048 leaf-spine "
        "links: the two planes' switch ports and links, both ports under the same spines",
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
# More selections on some fabrics: "ecmp-N" is ECMP with N flows per GPU pair
# (routing.ecmp_flows: NCCL's channels and queue pairs, each its own 5-tuple).
MORE_SELECTIONS = {"two-planes": ["ecmp-2", "ecmp-4"], "dual-tor": ["ecmp-2", "ecmp-4"]}


def selection_keys(selection):
    """The [routing] lines of `selection` ("ecmp-N": ECMP over N flows per pair)."""
    if selection.startswith("ecmp-"):
        return f'selection = "ecmp"\necmp_flows = {int(selection[5:])}'
    return f'selection = "{selection}"'


# Part two-jobs: two GPT-350M-class jobs of 64 nodes each (tensor 8, data 64) on nodes a
# scheduler handed out scattered over the 128, ranks in node order as Slurm lists them.
SCATTER_SEED = 7
TWO_JOB_FABRICS = {
    # A leaf of 32 ports holds 4 whole nodes (a ToR design, as Meta's RoCE racks): every
    # ring hop between racks crosses a spine.
    "tor-clos": (FABRICS["rail-clos"][0], "node"),
    "rail-clos": (FABRICS["rail-clos"][0], "rail"),
}
SCENARIOS = ["alone", "together"]
TWO_JOB_SELECTIONS = ["ecmp", "ecmp-4", "adaptive"]

# Part alltoall: NCCL's all-to-all on the same 1,024 GPUs (an expert-parallel exchange),
# with and without PXN, on the rail Clos and on a rail-only fabric (Wang et al., HOTI'24):
# each rail one switch of 128 ports, a single spine left for traffic between rails.
ALLTOALL_FABRICS = {
    "rail-clos": FABRICS["rail-clos"][0],
    "rail-only": 'kind = "clos"\nleaves = 8\nendpoints_per_leaf = 128\nspines = 1\nterminal_latency = 4\n'
                 'link_latency = 26\nlink_speeds = { nvlink = 9 }\n',
}
ALLTOALL_BYTES = 32768  # per pair: 32 GiB in all

# Part 16k: configs/training-gpt-16k.toml's job on four fabrics of about the same cost.
CONFIG_16K = root / "configs/training-gpt-16k.toml"
FABRICS_16K = {
    "rail-clos": (None, "minimal", ["adaptive", "ecmp"]),  # the configuration's own fabric
    # The same, as two jobs of 8,192 GPUs on nodes scattered over the 2,048 (seed 7).
    "rail-clos-two-jobs": (None, "minimal", ["adaptive", "ecmp"]),
    "two-planes": (None, "minimal", ["adaptive"]),
    "dragonfly": ('kind = "dragonfly"\np = 8\na = 16\nh = 8\nterminal_latency = 4\nlocal_latency = 13\n'
                  'global_latency = 78\nlink_speeds = { nvlink = 9 }\n', "dragonfly_ugal", ["adaptive"]),
    "hyperx": ('kind = "hyperx"\nsides = [8, 16, 16]\nendpoints_per_switch = 8\nterminal_latency = 4\n'
               'link_latency = 26\nlink_speeds = { nvlink = 9 }\n', "minimal", ["adaptive"]),
}

FIELDS = {
    "one-job": ["fabric", "routing", "selection", "status", "step_ms", "ideal_ms", "compute_ms", "exposed_ms",
                "data_allreduce_us", "data_busbw_gbs", "busiest_link", "busiest_class", "fabric_per_nic",
                "packets", "wall_seconds"],
    "two-jobs": ["fabric", "selection", "scenario", "status", "step_ms", "step_b_ms", "exposed_ms",
                 "data_allreduce_us", "data_busbw_gbs", "busiest_link", "busiest_class", "fabric_per_nic",
                 "packets", "wall_seconds"],
    "alltoall": ["fabric", "selection", "pxn", "status", "alltoall_us", "busbw_gbs", "busiest_link",
                 "busiest_class", "fabric_per_nic", "nvlink_per_nic", "packets", "wall_seconds"],
    "16k": ["fabric", "routing", "selection", "status", "step_ms", "step_b_ms", "ideal_ms", "compute_ms", "exposed_ms",
            "data_allreduce_us", "data_busbw_gbs", "busiest_link", "busiest_class", "fabric_per_nic",
            "packets", "wall_seconds", "max_rss_mib"],
}
CSV = {"one-job": "results.csv", "two-jobs": "results-two-jobs.csv", "alltoall": "results-alltoall.csv",
       "16k": "results-16k.csv"}
# Result files stay here (not in the repository), for a second look.
runs_dir = pathlib.Path(tempfile.gettempdir()) / "xnet-ai-training"


def one_job_config(fabric, selection):
    topology, routing, _ = FABRICS[fabric]
    if fabric == "dragonfly" and selection.startswith("ecmp"):
        routing = "dragonfly_min"  # one minimal path per pair: a flow keeps its path
    nodes = NODES + {"two-planes": "planes = 2\n", "dual-tor": "dual_tor = true\n"}.get(fabric, "")
    routing_text = COMMON.format(routing=routing, selection=selection_keys(selection))
    return "[topology]\n" + topology + nodes + routing_text, routing


def scattered_nodes(count=128):
    """Nodes of the two jobs: a random half of the `count` each, in increasing order."""
    nodes = list(range(count))
    random.Random(SCATTER_SEED).shuffle(nodes)
    return sorted(nodes[:count // 2]), sorted(nodes[count // 2:])


def mapping_lines(nodes):
    """A job's `mapping_contents` on `nodes` of 8 GPUs: the endpoints, one a line."""
    return "\\n".join(str(n * 8 + g) for n in nodes for g in range(8))


def two_jobs_config(fabric, selection, scenario):
    topology, placement = TWO_JOB_FABRICS[fabric]
    job = COMMON[COMMON.index("[[workload.jobs]]"):].replace("data = 128", "data = 64").replace(
        "global_batch = 128", "global_batch = 64")
    text = "[topology]\n" + topology + NODES.replace('"rail"', f'"{placement}"') + COMMON[
        :COMMON.index("[[workload.jobs]]")].format(routing="minimal", selection=selection_keys(selection))
    names = ["a", "b"] if scenario == "together" else ["a"]
    for name, nodes in zip(names, scattered_nodes()):
        text += job.replace('name = "gpt"', f'name = "gpt-{name}"') + (
            f'mapping = "file"\nmapping_contents = "{mapping_lines(nodes)}"\n')
    return text, "minimal"


def alltoall_config(fabric, selection, pxn):
    nodes = NODES + f"pxn = {pxn}\n"
    text = "[topology]\n" + ALLTOALL_FABRICS[fabric] + nodes + COMMON[:COMMON.index("[[workload.jobs]]")].format(
        routing="minimal", selection=selection_keys(selection))
    text += ('[[workload.jobs]]\nname = "alltoall"\nkind = "collectives"\nranks = 1024\n'
             f'operations = [{{ collective = "alltoall", bytes = {ALLTOALL_BYTES}, library = "nccl" }}]\n')
    return text, "minimal"


def config_16k(fabric, selection):
    base = CONFIG_16K.read_text()
    if fabric.endswith("-two-jobs"):
        job = base[base.index("[[workload.jobs]]"):].replace("data = 2048", "data = 1024").replace(
            "global_batch = 2048", "global_batch = 1024")
        base = base[:base.index("[[workload.jobs]]")]
        for name, nodes in zip("ab", scattered_nodes(2048)):
            base += job.replace('name = "gpt-124m"', f'name = "gpt-124m-{name}"') + (
                f'mapping = "file"\nmapping_contents = "{mapping_lines(nodes)}"\n\n')
    topology, routing, _ = FABRICS_16K[fabric]
    if topology is not None:
        base = re.sub(r"(?s)\[topology\]\n.*?(?=\n\[topology\.nodes\])", "[topology]\n" + topology, base)
    if fabric == "two-planes":  # each NIC 2 x 200 Gb/s, one port in each of two planes
        base = base.replace("link_speeds = { nvlink = 9 }", "link_speeds = { nvlink = 9, nic = 0.5, network = 0.5 }")
        base = base.replace("[topology.nodes]\n", "[topology.nodes]\nplanes = 2\n")
    base = base.replace('algorithm = "minimal"', f'algorithm = "{routing}"')
    base = base.replace('selection = "adaptive"', selection_keys(selection))
    return base, routing


def job_figures(out, job):
    from xnet_study import read_collectives, read_steps

    steps = read_steps(out, job=job).iloc[0]
    colls = read_collectives(out, job=job)
    data = colls[colls["collective"].str.startswith("data")]
    return steps, data


def run(part, key):
    import h5py
    from xnet_study import read_jobs, read_links

    text, routing = {"one-job": one_job_config, "two-jobs": two_jobs_config, "alltoall": alltoall_config,
                     "16k": config_16k}[part](*key)
    runs_dir.mkdir(exist_ok=True)
    stem = "-".join(key) if part == "one-job" else f"{part}-" + "-".join(key)
    cfg = runs_dir / f"{stem}.toml"
    cfg.write_text(text)
    out = runs_dir / f"{stem}.h5"
    threads = "2" if part == "16k" else "1"
    if part == "one-job" or not out.exists():  # a part's finished result files are read again
        t0 = time.time()
        done = subprocess.run([str(xnet), "run", str(cfg), "-q", "-t", threads, "-o", str(out)],
                              capture_output=True, text=True)
        wall = time.time() - t0
        if done.returncode not in (0, 4):
            raise SystemExit(f"{part} {key}: {done.stderr}")
    with h5py.File(out) as f:
        if part != "one-job":
            wall = float(f.attrs["wall_seconds"])  # the simulation's, without the set-up
        rss = int(f.attrs["peak_rss_bytes"])
    if part == "alltoall":
        from xnet_study import read_collectives

        colls = read_collectives(out)
        steps, data = None, colls
    else:
        steps, data = job_figures(out, 0)
    jobs = read_jobs(out)
    links = read_links(out)
    with h5py.File(out) as f:
        g = f["points/000"]
        names = g.attrs["link_class_names"]
        classes = (names.decode() if isinstance(names, bytes) else str(names)).split(",")
        packets = int(g.attrs["delivered_total"])
    # The busiest link outside the nodes (NIC and fabric links).
    fabric = links[[classes[int(c)] not in ("terminal", "nvlink") for c in links["class"]]]
    busiest = fabric.sort_values("utilisation", ascending=False).iloc[0]
    # Phits on switch-to-switch fabric links per phit through a NIC link (both ways):
    # 0 when all traffic between nodes stays under one leaf.
    nic = links[[classes[int(c)] == "nic" for c in links["class"]]]["phits"].sum()
    inner = fabric[[classes[int(c)] != "nic" for c in fabric["class"]]]["phits"].sum()
    names = {"two-jobs": ["fabric", "selection", "scenario"], "alltoall": ["fabric", "selection", "pxn"]}
    row = dict(zip(names.get(part, ["fabric", "selection"]), key))
    nvlink = links[[classes[int(c)] == "nvlink" for c in links["class"]]]["phits"].sum()
    if part == "alltoall":
        row.update({
            "status": "completed" if bool(jobs["finished"].all()) else "unfinished",
            "alltoall_us": round(float(data["time_ns"].max()) / 1e3, 1),
            "busbw_gbs": round(float(data["busbw_gbs"].min()), 2),
            "busiest_link": round(float(busiest["utilisation"]), 3),
            "busiest_class": classes[int(busiest["class"])],
            "fabric_per_nic": round(float(inner) / max(float(nic), 1.0) * 2, 3),
            "nvlink_per_nic": round(float(nvlink) / max(float(nic), 1.0), 3),
            "packets": packets,
            "wall_seconds": round(wall, 1),
        })
        return {k: row[k] for k in FIELDS[part]}
    row.update({
        "routing": routing,
        "status": "completed" if bool(jobs["finished"].all()) else "unfinished",
        "step_ms": round(float(steps["time_ns"]) / 1e6, 3),
        "ideal_ms": round(float(jobs["ideal_time"].iloc[0]) * 1.28 / 1e6, 3),
        "compute_ms": round(float(steps["compute_max_ns"]) / 1e6, 3),
        "exposed_ms": round(float(steps["exposed_ns"]) / 1e6, 3),
        "data_allreduce_us": round(float(data["time_ns"].mean()) / 1e3, 1),
        "data_busbw_gbs": round(float(data["busbw_gbs"].mean()), 2),
        "busiest_link": round(float(busiest["utilisation"]), 3),
        "busiest_class": classes[int(busiest["class"])],
        "fabric_per_nic": round(float(inner) / max(float(nic), 1.0) * 2, 3),
        "packets": packets,
        "wall_seconds": round(wall, 1),
        "max_rss_mib": round(rss / 2**20),
    })
    if part in ("two-jobs", "16k"):
        row["step_b_ms"] = round(float(job_figures(out, 1)[0]["time_ns"]) / 1e6, 3) if len(jobs) > 1 else ""
    return {k: row[k] for k in FIELDS[part]}


def todo_keys(part):
    if part == "one-job":
        return [(fab, sel) for fab in FABRICS for sel in SELECTIONS + MORE_SELECTIONS.get(fab, [])]
    if part == "two-jobs":
        return [(fab, sel, sc) for fab in TWO_JOB_FABRICS for sel in TWO_JOB_SELECTIONS for sc in SCENARIOS]
    if part == "alltoall":
        return [(fab, "adaptive", pxn) for fab in ALLTOALL_FABRICS for pxn in ["false", "true"]]
    return [(fab, sel) for fab, (_, _, sels) in FABRICS_16K.items() for sel in sels]


def key_of(part, r):
    if part == "two-jobs":
        return (r["fabric"], r["selection"], r["scenario"])
    if part == "alltoall":
        return (r["fabric"], r["selection"], r["pxn"])
    return (r["fabric"], r["selection"])


def print_table(part, done):
    order = {k: i for i, k in enumerate(todo_keys(part))}
    done.sort(key=lambda r: order.get(key_of(part, r), len(order)))
    if part == "two-jobs":
        print("| fabric | selection | jobs | step ms (job a) | step ms (job b) | exposed ms | data all-reduce µs | "
              "busbw GB/s | busiest link | fabric hops per NIC hop | run s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in done:
            b = f"{float(r['step_b_ms']):.2f}" if r["step_b_ms"] else ""
            print(f"| {r['fabric']} | {r['selection']} | {r['scenario']} | {float(r['step_ms']):.2f} | {b} | "
                  f"{float(r['exposed_ms']):.2f} | {float(r['data_allreduce_us']):,.0f} | "
                  f"{float(r['data_busbw_gbs']):.1f} | {float(r['busiest_link']):.2f} ({r['busiest_class']}) | "
                  f"{float(r['fabric_per_nic']):.2f} | {float(r['wall_seconds']):.0f} |")
        return
    if part == "alltoall":
        print("| fabric | selection | pxn | all-to-all µs | busbw GB/s | busiest link | fabric hops per NIC hop | "
              "NVLink phits per NIC phit | run s |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in done:
            print(f"| {r['fabric']} | {r['selection']} | {r['pxn']} | {float(r['alltoall_us']):,.0f} | "
                  f"{float(r['busbw_gbs']):.1f} | {float(r['busiest_link']):.2f} ({r['busiest_class']}) | "
                  f"{float(r['fabric_per_nic']):.2f} | {float(r['nvlink_per_nic']):.2f} | {float(r['wall_seconds']):.0f} |")
        return
    extra = " max RSS MiB |" if part == "16k" else ""
    print("| fabric | routing | selection | step ms | exposed ms | data all-reduce µs | busbw GB/s | busiest link | "
          "fabric hops per NIC hop | run s |" + extra)
    print("|---|---|---|---|---|---|---|---|---|---|" + ("---|" if extra else ""))
    for r in done:
        rss = f" {int(float(r['max_rss_mib'])):,} |" if extra else ""
        # Two jobs: job a's step, then job b's.
        b = f" / {float(r['step_b_ms']):.2f}" if r.get("step_b_ms") else ""
        print(f"| {r['fabric']} | {r['routing']} | {r['selection']} | {float(r['step_ms']):.2f}{b} | "
              f"{float(r['exposed_ms']):.2f} | {float(r['data_allreduce_us']):,.0f} | {float(r['data_busbw_gbs']):.1f} | "
              f"{float(r['busiest_link']):.2f} ({r['busiest_class']}) | {float(r['fabric_per_nic']):.2f} | "
              f"{float(r['wall_seconds']):.0f} |" + rss)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=list(CSV), default="one-job")
    ap.add_argument("--jobs", type=int, default=1,
                    help="runs at once (each takes one core; a 16k run takes two and about 11 GiB)")
    ap.add_argument("--only", help="run only the keys that contain this text (e.g. a fabric)")
    ap.add_argument("--replot", action="store_true", help="only print the table of the part's CSV")
    args = ap.parse_args()
    out_dir.mkdir(parents=True, exist_ok=True)
    results = out_dir / CSV[args.part]
    done = []
    if results.exists():
        with open(results) as f:
            done = list(csv.DictReader(f))
    have = {key_of(args.part, r) for r in done}
    todo = [k for k in todo_keys(args.part) if k not in have and (not args.only or args.only in "-".join(k))]
    if not args.replot and todo:
        with ThreadPoolExecutor(args.jobs) as pool:
            for row in pool.map(lambda k: run(args.part, k), todo):
                done.append(row)
                print(row, flush=True)
                with open(results, "w", newline="") as f:
                    w = csv.DictWriter(f, FIELDS[args.part])
                    w.writeheader()
                    w.writerows(done)
    print_table(args.part, done)


if __name__ == "__main__":
    main()
