#!/usr/bin/env python3
"""Projects a finished run to more partitions with docs/scaling.md's model.

    scripts/bench/project_run.py RUN.h5 [--partitions 2 4 8 16] [--kappa-ns 300]

RUN.h5 is a finished run on one rank (any threads); its recorded configuration is
partitioned again. From it: the CPU time per event
(partition_compute_seconds over partition_events), the events per cycle (the whole run's
events over its cycles) and the messages per cut link per cycle, counted from the `links`
table: a packet that crosses a link between two partitions is one message (its head) one
way and one (its credit) back, so a directed cut link sends, per cycle, the packets of
itself and of its reverse link, here those of the mean link of the classes that the
partitioner cuts (the fabric's switch-to-switch links). The bytes per message (32) and
the CPU per message sent (`--kappa-ns`; 263 to 370 ns on the million-endpoint networks)
are docs/scaling.md's 2-rank measurements; the MPI figures are this machine's (shared
memory: what threads or ranks on one 16-core machine see) and a cluster network's.
`xnet partition --ranks P --csv` gives each partition's weight, cut links,
neighbours and the lookahead. Prints a Markdown table.
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scaling_model import predict, read_ranks  # noqa: E402

root = pathlib.Path(__file__).resolve().parents[2]
# docs/scaling.md's figures: examples/mpi_bench on this machine, and an HDR-class cluster.
THIS_MACHINE = {"alpha": 0.17e-6, "beta": 10.47e9, "alpha_red": 0.87e-6}
CLUSTER = {"alpha": 1.5e-6, "beta": 12e9, "alpha_red": 1.5e-6}
BYTES_PER_MESSAGE = 32
# Classes whose links stay inside a partition (a GPU and its node, its NIC cable).
INSIDE = {"terminal", "nvlink", "nic"}


def calibrate(run, kappa):
    with h5py.File(run, "r") as f:
        if int(f.attrs["ranks"]) != 1:
            sys.exit(f"{run}: a run on one rank, please (any threads)")
        p = f["points/000"]
        a = p.attrs
        names = a["link_class_names"]
        classes = (names.decode() if isinstance(names, bytes) else str(names)).split(",")
        links = p["links"][:]
        cycles = int(a["time_reached"])
        events = float(sum(a["partition_events"]))
        compute = float(sum(a["partition_compute_seconds"]))
        wall = float(a["wall_seconds"])
        config = f.attrs["config"]
        config = config.decode() if isinstance(config, bytes) else str(config)
        packet = int(f.attrs["packet_size"])
        rss = int(f.attrs["peak_rss_bytes"])
    cut = [row for row in links if classes[int(row["class"])] not in INSIDE]
    if not cut:
        sys.exit(f"{run}: no switch-to-switch links")
    return {"phits": sum(float(r["phits"]) for r in cut) / len(cut), "cycles": cycles, "events": events,
            "compute": compute, "wall": wall, "kappa": kappa, "config": config, "packet": packet, "rss": rss}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("--partitions", type=int, nargs="+", default=[2, 4, 8, 16])
    ap.add_argument("--kappa-ns", type=float, default=300.0)
    args = ap.parse_args()
    c = calibrate(args.run, args.kappa_ns * 1e-9)
    packets_per_link_cycle = c["phits"] / c["packet"] / c["cycles"]
    cal = {"c_event": c["compute"] / c["events"], "e": c["events"] / c["cycles"],
           "m_link": 2 * packets_per_link_cycle, "b_msg": BYTES_PER_MESSAGE, "kappa": c["kappa"]}
    print(f"Inputs: {cal['c_event'] * 1e9:.0f} ns per event, {cal['e']:,.0f} events per cycle over "
          f"{c['cycles']:,} cycles, {cal['m_link']:.4f} messages per cut link per cycle; the run: "
          f"{c['wall']:.0f} s, {c['compute']:.0f} s of partition compute, peak RSS "
          f"{c['rss'] / 2**30:.2f} GiB.\n")
    print("| partitions | lookahead | compute / window | exchange / window | predicted s | speed-up | efficiency "
          "| predicted s (cluster network) |")
    print("|---|---|---|---|---|---|---|---|")
    t1 = c["cycles"] * cal["e"] * cal["c_event"]
    print(f"| 1 | - | - | - | {t1:.0f} | 1.0 | 100 % | {t1:.0f} |")
    xnet = root / "target/release/xnet"
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "config.toml")
        with open(config, "w") as f:
            f.write(c["config"])
        for p in args.partitions:
            csv_path = os.path.join(tmp, f"ranks-{p}.csv")
            subprocess.run([str(xnet), "partition", config, "--ranks", str(p), "--csv", csv_path],
                           check=True, capture_output=True)
            rows = read_ranks(csv_path)
            t, det = predict(cal, rows, c["cycles"], THIS_MACHINE)
            tc, _ = predict(cal, rows, c["cycles"], CLUSTER)
            print(f"| {p} | {det['window']} | {det['compute'] * 1e6:.1f} us | {det['exchange'] * 1e6:.1f} us | "
                  f"{t:.0f} | {t1 / t:.1f} | {100 * t1 / t / p:.0f} % | {tc:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
