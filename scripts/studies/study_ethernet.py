#!/usr/bin/env python3
"""Ethernet fabrics for AI training (docs/studies/ethernet.md): lossless RoCE against lossy
Ultra Ethernet, ECMP against packet spraying, DCQCN against NSCC, on a rail-optimized fabric.

The fabric is configs/ethernet-rail.toml: 32 nodes of 8 GPUs on NVSwitch, a
400 Gb/s NIC per GPU, GPU g of every node on leaf g of a two-tier fat tree (16 leaves,
16 spines), 4 KiB packets. Two workloads:

- step: the config's training step (a GPT-class model of 8 layers, hidden 2,048, tensor 8
  inside each node, pipeline 2 and data 8 across nodes), every packet that leaves a node;
- incast: 32 GPUs of other nodes and other rails each send 2 MiB to GPU 0 at once (a
  parameter server's gather, or a pipeline stage many stages feed), through the spines;
- alltoall: NCCL's all-to-all on the 128 GPUs, 16 KiB to every peer, without PXN, so
  that traffic between rails crosses the spines (expert parallelism's exchange).

Each under seven fabrics: credits with no transport (InfiniBand-like, the reference);
RoCEv2 (PFC and RC on in-order ECMP paths), without DCQCN, with it at Zhu et al.'s
thresholds and with Kmax at the output buffer; Ultra Ethernet's transport on lossy links
over ECMP and over sprayed paths (adaptive routing), and sprayed with NSCC.

    scripts/studies/study_ethernet.py [--threads N] [--only incast|step|alltoall]

Writes docs/studies/ethernet/results.csv (results-WORKLOAD.csv with --only) and prints a
Markdown table. XNET=path picks the binary. About 20 minutes on 2 cores (the all-to-all
12 of them).
"""
import argparse
import csv
import pathlib

import numpy as np

from xnet_run import run_xnet

root = pathlib.Path(__file__).resolve().parents[2]
config = root / "configs/ethernet-rail.toml"
out_dir = root / "docs/studies/ethernet"

# In-order paths for RC: ECMP, and one VC per flow at the ends.
IN_ORDER = ['routing.selection="ecmp"', 'router.injection_vc="zero"', 'router.ejection_vc="zero"']
# Zhu et al.'s DCQCN parameters at this fabric's 64-byte phits, 1.28 ns cycles and 400 Gb/s:
# Kmin 5 KB, Kmax 200 KB, Pmax 1 %, N 50 us, K = T = 55 us, B 10 MB, R_AI 40 Mb/s,
# R_HAI 10 x R_AI, a 100 Mb/s floor.
DCQCN = ['congestion.control="dcqcn"', "congestion.dcqcn.kmin=80", "congestion.dcqcn.kmax=3125",
         "congestion.dcqcn.cnp_interval=39063", "congestion.dcqcn.alpha_timer=42969",
         "congestion.dcqcn.rate_timer=42969", "congestion.dcqcn.byte_counter=156250",
         "congestion.dcqcn.rate_ai=0.0001", "congestion.dcqcn.rate_hai=0.001",
         "congestion.dcqcn.min_rate=0.00025"]

FABRICS = [
    ("credits, no transport (InfiniBand-like)", []),
    ("RoCEv2: PFC + RC, ECMP", IN_ORDER + ['router.flow_control="pfc"', 'transport.kind="rc"']),
    ("RoCEv2 + DCQCN", IN_ORDER + ['router.flow_control="pfc"', 'transport.kind="rc"'] + DCQCN),
    # Kmax at the 32 KiB output buffer: xnet's egress queue is the output VC, far smaller
    # than a shared-memory switch's, so the paper's 200 KB is never reached.
    ("RoCEv2 + DCQCN, Kmax 32 KiB", IN_ORDER + ['router.flow_control="pfc"', 'transport.kind="rc"'] + DCQCN
     + ["congestion.dcqcn.kmax=512"]),
    # ECMP with one VC per flow at the ends, as RC's: a flow's packets stay in order.
    ("UEC: lossy, ECMP", IN_ORDER + ['router.flow_control="none"', 'transport.kind="uec"']),
    ("UEC: lossy, sprayed", ['router.flow_control="none"', 'transport.kind="uec"']),
    ("UEC + NSCC: lossy, sprayed", ['router.flow_control="none"', 'transport.kind="uec"',
                                     'transport.uec.congestion="nscc"']),
]


def incast_job():
    """GOAL: 32 senders, the GPU on rail 1 + (k - 1) mod 7 of node 1 + (k - 1) mod 15 for
    k = 1..32, send 2 MiB each to GPU 0; none shares GPU 0's node or rail."""
    senders = []
    for k in range(1, 33):
        node, rail = 1 + (k - 1) % 15, 1 + (k - 1) % 7
        senders.append(node * 8 + rail)
    assert len(set(senders)) == 32
    lines = ["num_ranks 128", "rank 0 {"]
    lines += [f"r{s}: recv 2097152b from {s} tag 1" for s in senders]
    lines.append("}")
    for s in sorted(senders):
        lines += [f"rank {s} {{", "s: send 2097152b to 0 tag 1", "}"]
    goal = "\n".join(lines) + "\n"
    return ('[[workload.jobs]]\nname = "incast"\nkind = "goal"\n'
            f'contents = """\n{goal}"""\n')


def alltoall_job():
    """NCCL's all-to-all on the 128 GPUs, 16 KiB to every peer, without PXN: a GPU's
    traffic to another rail leaves by its own NIC and crosses a spine."""
    return ('[[workload.jobs]]\nname = "alltoall"\nkind = "collectives"\nranks = 128\n'
            'operations = [{ collective = "alltoall", bytes = 2097152, library = "nccl" }]\n')


def workload_config(name):
    text = config.read_text()
    if name == "step":
        return text
    head = text[: text.index("[[workload.jobs]]")]
    return head + (incast_job() if name == "incast" else alltoall_job())


def run(text, overrides, threads):
    with run_xnet(text, overrides, threads) as (f, wall):
        s = f["summary"][0]
        status = f.attrs["status"]
        status = status.decode() if isinstance(status, bytes) else str(status)
        job = f["points/000/workload/jobs"][0]
        ts = f["points/000/timeseries"][:]
        g = f["points/000/workload/job_000"]
        sends = g["sends"][:] if "sends" in g else None
        steps = g["steps"][:] if "steps" in g else None
        row = {
            "status": status,
            "msg_latency_p50_us": round(float(job["message_latency_p50"]) * 1.28 / 1000, 1),
            "msg_latency_max_us": round(float(job["message_latency_max"]) * 1.28 / 1000, 1),
            "completion_us": round(float(job["completion_time"]) * 1.28 / 1000, 1) if job["finished"] else "",
            "step_ms": round(float(steps["time_ns"][0]) / 1e6, 3) if steps is not None and len(steps) else "",
            "exposed_ms": round(float(steps["exposed_ns"][0]) / 1e6, 3) if steps is not None and len(steps) else "",
            "network_latency_us": round(float(s["network_latency_mean"]) * 1.28 / 1000, 3),
            "pause_frames": int(s["pause_frames"]),
            "dropped": int(s["dropped_total"]),
            "retransmitted": int(s["retransmitted_packets"]),
            "timeouts": int(s["transport_timeouts"]),
            "marked": int(ts["marked_packets"].sum()),
            "out_of_order": int(s["out_of_order_packets"]),
            "wall_s": round(wall, 1),
        }
        if sends is not None and len(sends):
            fct = np.sort(sends["time_ns"]) / 1000
            row["fct_min_us"] = round(float(fct[0]), 1)
            row["fct_median_us"] = round(float(np.median(fct)), 1)
            row["fct_max_us"] = round(float(fct[-1]), 1)
        return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", choices=["incast", "step", "alltoall"])
    args = ap.parse_args()
    rows = []
    for workload in ["incast", "step", "alltoall"]:
        if args.only and workload != args.only:
            continue
        text = workload_config(workload)
        for name, overrides in FABRICS:
            row = {"workload": workload, "fabric": name, **run(text, overrides, args.threads)}
            print(row, flush=True)
            rows.append(row)
    out_dir.mkdir(parents=True, exist_ok=True)
    fields = list(dict.fromkeys(k for r in rows for k in r))
    name = f"results-{args.only}.csv" if args.only else "results.csv"
    with open(out_dir / name, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    print("\n| workload | fabric | time | FCT min / median / max (us) | net. latency (us) | pauses | drops | resent | marks |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        time_text = f"{r['step_ms']} ms" if r.get("step_ms") else f"{r['completion_us']} us"
        fct = (f"{r['fct_min_us']} / {r['fct_median_us']} / {r['fct_max_us']}"
               if r["workload"] == "incast" and "fct_min_us" in r else "")
        print(f"| {r['workload']} | {r['fabric']} | {time_text} | {fct} | {r['network_latency_us']} "
              f"| {r['pause_frames']} | {r['dropped']} | {r['retransmitted']} | {r['marked']} |")


if __name__ == "__main__":
    main()
