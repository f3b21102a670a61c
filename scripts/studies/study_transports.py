#!/usr/bin/env python3
"""RoCEv2's reliable connection and the UEC-like transport under NCCL's collectives
(docs/transports.md, "The transports, measured").

configs/workload-nccl.toml (nccl-tests' all-reduces, all-gather and all-to-all on 64
GPUs of an 8-ary 2-tree, 200 Gb/s links, 4 KiB packets) with and without the transport,
on credits, PFC (alone and with DCQCN) and lossy links, in-order paths (ECMP, one VC per flow at the ends) and
adaptive routing, and with bit errors dropped end to end. Input buffers of 2,048 phits
(PFC's headroom on the 50-cycle links needs 1,124), and of 256 in one lossy case.

    scripts/studies/study_transports.py

Writes docs/studies/transport/results.csv and prints a Markdown table. XNET=path picks
the binary.
"""
import csv
import pathlib

from xnet_run import run_xnet

root = pathlib.Path(__file__).resolve().parents[2]
config = root / "configs/workload-nccl.toml"
out_dir = root / "docs/studies/transport"
results = out_dir / "results.csv"

# In-order paths, and input buffers deep enough for PFC's headroom on 50-cycle links (1,124
# phits; the config has 1,024) in every case.
IN_ORDER = ['routing.selection="ecmp"', 'router.injection_vc="zero"', 'router.ejection_vc="zero"',
            "router.input_buffer=2048"]
RC = ['transport.kind="rc"']
UEC = ['transport.kind="uec"']
LOSSY = ['router.flow_control="none"']

# (name, overrides)
CASES = [
    ("in order, credits, no transport", IN_ORDER),
    ("in order, credits, rc", IN_ORDER + RC),
    ("in order, pfc, rc", IN_ORDER + RC + ['router.flow_control="pfc"']),
    ("in order, pfc, rc, dcqcn", IN_ORDER + RC + ['router.flow_control="pfc"', 'congestion.control="dcqcn"']),
    ("in order, lossy, rc", IN_ORDER + RC + ['router.flow_control="none"']),
    ("in order, lossy 256-phit buffers, rc", IN_ORDER + RC + ['router.flow_control="none"', "router.input_buffer=256"]),
    ("in order, credits, BER 1e-7 end to end, rc", IN_ORDER + RC + [
        "router.link_errors.bit_error_rate=1e-7", 'router.link_errors.recovery="end_to_end"']),
    ("in order, credits, BER 1e-7 link retry, no transport", IN_ORDER + [
        "router.link_errors.bit_error_rate=1e-7"]),
    ("adaptive, credits, no transport", ["router.input_buffer=2048"]),
    ("adaptive, credits, rc", RC + ["router.input_buffer=2048"]),
    ("adaptive, credits, uec", UEC + ["router.input_buffer=2048"]),
    ("adaptive, credits, uec, reorder threshold 16", UEC + ["router.input_buffer=2048", "transport.uec.reorder_threshold=16"]),
    ("adaptive, credits, uec, reorder threshold 256", UEC + ["router.input_buffer=2048", "transport.uec.reorder_threshold=256"]),
    ("adaptive, lossy, uec", UEC + LOSSY + ["router.input_buffer=2048"]),
    ("adaptive, lossy, uec, timeout 2^20", UEC + LOSSY + ["router.input_buffer=2048", "transport.uec.timeout=1048576"]),
    ("adaptive, credits, BER 1e-7 end to end, uec", UEC + ["router.input_buffer=2048",
        "router.link_errors.bit_error_rate=1e-7", 'router.link_errors.recovery="end_to_end"']),
]

FIELDS = ["case", "status", "completion_us", "allreduce_16m_us", "alltoall_us", "retransmitted_packets",
          "transport_timeouts", "naks", "discarded_packets", "dropped_total", "link_retries", "out_of_order_packets",
          "reorder_held_max", "pause_frames", "marked_packets", "notifications", "wall_s"]


def run(name, overrides):
    with run_xnet(config, overrides, 1, name) as (f, wall):
        s = f["summary"][0]
        job = f["points/000/workload/jobs"][0]
        ns = 0.64
        coll = f["points/000/workload/job_000/collectives"][:]
        names = f["points/000/workload/job_000"].attrs["collective_names"].split(",")
        by_name = {names[c["operation"]]: c["time_ns"] / 1000 for c in coll if c["end"] > 0}
        row = {
            "case": name,
            "status": "completed" if job["finished"] else "unfinished",
            "completion_us": round(job["completion_time"] * ns / 1000, 1) if job["finished"] else "",
            "alltoall_us": round(by_name["alltoall"], 1) if "alltoall" in by_name else "",
            "wall_s": round(wall, 2),
        }
        # The second all-reduce is the 16 MiB ring one (operation 1).
        ring = [c for c in coll if c["operation"] == 1 and c["end"] > 0]
        row["allreduce_16m_us"] = round(ring[0]["time_ns"] / 1000, 1) if ring else ""
        for k in ["retransmitted_packets", "transport_timeouts", "naks", "discarded_packets", "dropped_total",
                  "link_retries", "out_of_order_packets", "reorder_held_max", "pause_frames"]:
            row[k] = int(s[k])
        series = f["points/000/timeseries"][:]
        row["marked_packets"] = int(series["marked_packets"].sum())
        row["notifications"] = int(series["notifications"].sum())
        return row


def main():
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = [run(name, o) for name, o in CASES]
    with open(results, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    print("| case | completion (us) | 16 MiB all-reduce (us) | all-to-all (us) | sent again | timeouts | NAKs |"
          " dropped by the responder | dropped in the network | held out of order (most) | wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        completion = r["completion_us"] if r["status"] == "completed" else "unfinished"
        print(f"| {r['case']} | {completion} | {r['allreduce_16m_us']} | {r['alltoall_us']} | "
              f"{r['retransmitted_packets']:,} | {r['transport_timeouts']:,} | {r['naks']:,} | "
              f"{r['discarded_packets']:,} | {r['dropped_total']:,} | {r['out_of_order_packets']:,} "
              f"({r['reorder_held_max']:,}) | {r['wall_s']} |")


if __name__ == "__main__":
    main()
