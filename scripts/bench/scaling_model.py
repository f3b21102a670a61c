#!/usr/bin/env python3
"""Strong-scaling model of xnet runs: time per window from the partition, the measured
cost of an event and of messages, and the MPI figures of a machine (docs/scaling.md).

    scripts/bench/scaling_model.py --model DIR [--png OUT.png] [--markdown OUT.md]

DIR (written by scripts/bench/scaling-model.sh) holds, per network NAME:
    NAME/run1.h5            a 1-rank x 1-thread run (cost per event, events per cycle)
    NAME/run2.h5            a 2-rank x 1-thread run (messages per cut link, bytes per message)
    NAME/ranks-P.csv        `xnet partition --ranks P --csv` for P = 1, 2, 4, ..., 4096
and DIR/mpi.txt, the output of examples/mpi_bench on this machine.

The model, per window of W cycles (W = the lookahead: the smallest latency of a link
between ranks), for rank r of P:
    compute_r = c_event * e * share_r * W            (events run on the rank)
    exchange_r = n_r * alpha + bytes_r / beta + msgs_r * kappa
        msgs_r  = m_link * cut_r * W                  (messages leaving the rank)
        bytes_r = msgs_r * b_msg
    window(P) = max_r (compute_r + exchange_r) + alpha_red * log2(P)
    T(P) = cycles / W * window(P),   T(1) = cycles * e * c_event
with c_event the seconds per event of the 1-rank run, e the events per cycle of the 2-rank
run (its 10,000 cycles are mostly steady state), share_r
the rank's share of the partition weight (ports + endpoints of its switches), cut_r its
directed links to other ranks and n_r its neighbour ranks (the CSV), m_link the messages
per cut link per cycle and b_msg the bytes per message of the 2-rank run, kappa the CPU
time per message (encoding, decoding, mailboxes) fitted on the 2-rank run, and alpha,
beta, alpha_red this machine's MPI latency, bandwidth and reduction time (mpi.txt).
It predicts the speed-up T(1)/T(P) and the efficiency, and checks itself against the
measured 1- and 2-rank times.
"""

import argparse
import csv
import math
import os
import sys

import h5py


def print_and_write(text, path):
    """Prints `text` and, with a path, writes it there."""
    print(text)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")


def pyplot():
    """matplotlib's pyplot, drawing to files only."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def read_mpi(path):
    sizes, allreduce = {}, None
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == "pingpong":
                sizes[int(parts[1])] = float(parts[2])
            elif parts and parts[0] == "allreduce":
                allreduce = float(parts[2])
    small = min(sizes)
    big = max(sizes)
    alpha = sizes[small]
    beta = big / max(sizes[big] - alpha, 1e-12)
    return {"alpha": alpha, "beta": beta, "alpha_red": allreduce}


def run_figures(path):
    with h5py.File(path, "r") as f:
        p = f["points/000"].attrs
        return {
            "cycles": int(p["time_reached"]),
            "events": float(sum(p["partition_events"])),
            "compute": [float(x) for x in p["partition_compute_seconds"]],
            "sync": [float(x) for x in p["partition_sync_seconds"]],
            "wall": float(p["wall_seconds"]),
            "windows": int(p["windows"]),
            "lookahead": int(p["lookahead"]),
            "messages": [int(x) for x in p["rank_messages_sent"]],
            "bytes": [int(x) for x in p["rank_bytes_sent"]],
            "exchange": [float(x) for x in p["rank_exchange_seconds"]],
            "cut_links": int(f.attrs["partition_cut_links"]),
            "packet_hops": int(p["packet_hops"]),
            "ranks": int(f.attrs["ranks"]),
        }


def read_ranks(path):
    with open(path) as f:
        return [{k: int(v) for k, v in row.items()} for row in csv.DictReader(f)]


def calibrate(name, d, mpi):
    r1, r2 = run_figures(os.path.join(d, "run1.h5")), run_figures(os.path.join(d, "run2.h5"))
    if r1["ranks"] != 1 or r2["ranks"] != 2:
        sys.exit(f"{name}: run1.h5 must be 1 rank and run2.h5 2 ranks")
    c_event = sum(r1["compute"]) / r1["events"]
    # Events per cycle from the long 2-rank run: the short 1-rank run's first cycles fill
    # an empty network and have fewer events than the steady state.
    e = r2["events"] / r2["cycles"]
    msgs = sum(r2["messages"])
    m_link = msgs / r2["cut_links"] / r2["cycles"]
    b_msg = sum(r2["bytes"]) / max(msgs, 1)
    # The rank that arrives last at the reduction waits least: its exchange time is the
    # exchange itself. What is left after latency and bandwidth is CPU time per message.
    per_window = min(r2["exchange"]) / r2["windows"]
    msgs_window = msgs / len(r2["messages"]) / r2["windows"]
    left = per_window - mpi["alpha_red"] - mpi["alpha"] - msgs_window * b_msg / mpi["beta"]
    kappa = max(left, 0.0) / max(msgs_window, 1e-9)
    return {"c_event": c_event, "e": e, "m_link": m_link, "b_msg": b_msg, "kappa": kappa, "run1": r1, "run2": r2}


def predict(cal, ranks_rows, cycles, mpi):
    """Seconds for `cycles` cycles on len(ranks_rows) ranks."""
    p = len(ranks_rows)
    if p == 1:
        return cycles * cal["e"] * cal["c_event"], {}
    total = sum(r["weight"] for r in ranks_rows)
    window = min(r["min_cut_latency"] for r in ranks_rows if r["min_cut_latency"] > 0)
    worst, parts = 0.0, None
    for r in ranks_rows:
        compute = cal["c_event"] * cal["e"] * r["weight"] / total * window
        msgs = cal["m_link"] * r["cut_links_out"] * window
        exchange = r["neighbour_ranks"] * mpi["alpha"] + msgs * cal["b_msg"] / mpi["beta"] + msgs * cal["kappa"]
        if compute + exchange > worst:
            worst, parts = compute + exchange, (compute, exchange)
    reduce = mpi["alpha_red"] * math.log2(p)
    per_window = worst + reduce
    detail = {"window": window, "compute": parts[0], "exchange": parts[1], "reduce": reduce}
    return cycles / window * per_window, detail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="directory written by scripts/bench/scaling-model.sh")
    ap.add_argument("--cycles", type=int, default=10000, help="cycles of the predicted run")
    ap.add_argument("--png", help="plot of the predicted speed-up and efficiency")
    ap.add_argument("--markdown", help="tables for docs/scaling.md")
    args = ap.parse_args()
    mpi = read_mpi(os.path.join(args.model, "mpi.txt"))
    # A cluster's interconnect, for comparison: InfiniBand HDR-class figures.
    cluster = {"alpha": 1.5e-6, "beta": 12e9, "alpha_red": 1.5e-6}
    names = sorted(n for n in os.listdir(args.model) if os.path.isdir(os.path.join(args.model, n)))
    out = []
    lines = ["MPI on this machine: latency %.2f us, bandwidth %.2f GB/s, 2-rank reduction %.2f us"
             % (mpi["alpha"] * 1e6, mpi["beta"] / 1e9, mpi["alpha_red"] * 1e6), ""]
    curves = {}
    for name in names:
        d = os.path.join(args.model, name)
        cal = calibrate(name, d, mpi)
        counts = sorted(int(f[6:-4]) for f in os.listdir(d) if f.startswith("ranks-") and f.endswith(".csv"))
        rows = {p: read_ranks(os.path.join(d, f"ranks-{p}.csv")) for p in counts}
        # Check against the measured runs, over their own cycles.
        t1_model = cal["run1"]["events"] * cal["c_event"]
        t2_model, _ = predict(cal, rows[2], cal["run2"]["cycles"], mpi)
        lines += [
            f"### {name}",
            "",
            f"Inputs: {cal['c_event'] * 1e9:.0f} ns per event, {cal['e']:.0f} events per cycle, "
            f"{cal['m_link']:.4f} messages per cut link per cycle, {cal['b_msg']:.0f} bytes per message, "
            f"{cal['kappa'] * 1e9:.0f} ns of CPU per message.",
            "",
            f"Check: 1 rank {cal['run1']['wall']:.1f} s measured, {t1_model:.1f} s modelled; "
            f"2 ranks {cal['run2']['wall']:.1f} s measured, {t2_model:.1f} s modelled.",
            "",
            "| ranks | window (cycles) | compute / window | exchange / window | reduction | time for %d cycles | speed-up | efficiency | speed-up (cluster network) |" % args.cycles,
            "|---|---|---|---|---|---|---|---|---|",
        ]
        t1, _ = predict(cal, rows[1], args.cycles, mpi)
        curve = []
        for p in counts:
            t, det = predict(cal, rows[p], args.cycles, mpi)
            tc, _ = predict(cal, rows[p], args.cycles, cluster)
            speed, speed_c = t1 / t, t1 / tc
            curve.append((p, speed, speed / p, speed_c))
            if p == 1:
                lines.append(f"| 1 | - | - | - | - | {t:.0f} s | 1.0 | 100 % | 1.0 |")
            else:
                lines.append(
                    f"| {p} | {det['window']} | {det['compute'] * 1e6:.1f} us | {det['exchange'] * 1e6:.1f} us | "
                    f"{det['reduce'] * 1e6:.1f} us | {t:.1f} s | {speed:.0f} | {100 * speed / p:.0f} % | {speed_c:.0f} |"
                )
        lines.append("")
        curves[name] = curve
        out.append((name, cal))
    print_and_write("\n".join(lines), args.markdown)
    if args.png:
        plt = pyplot()

        fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
        for name, curve in curves.items():
            ps = [c[0] for c in curve]
            line, = a.plot(ps, [c[1] for c in curve], marker="o", label=name)
            a.plot(ps, [c[3] for c in curve], linestyle=":", color=line.get_color())
            b.plot(ps, [100 * c[2] for c in curve], marker="o", label=name)
        top = max(max(c[0] for c in curve) for curve in curves.values())
        a.plot([1, top], [1, top], color="grey", linewidth=0.8, label="ideal")
        a.set_xscale("log", base=2)
        a.set_yscale("log", base=2)
        a.set_xlabel("MPI ranks (1 thread each)")
        a.set_ylabel("predicted speed-up")
        a.set_title("Strong scaling, 10,000 cycles (dotted: cluster network)")
        a.legend(fontsize=8)
        b.set_xscale("log", base=2)
        b.set_xlabel("MPI ranks")
        b.set_ylabel("parallel efficiency (%)")
        b.set_ylim(0, 110)
        b.set_title("Efficiency (this machine's MPI figures)")
        b.grid(alpha=0.3)
        a.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
