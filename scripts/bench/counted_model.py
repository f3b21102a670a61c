#!/usr/bin/env python3
"""docs/scaling.md's strong-scaling model fed with a census: counted events and messages.

    scripts/bench/counted_model.py RUN.h5 [RUN.h5 ...] --event-ns NS [NS ...]
        [--kappa-ns NS [NS ...]] [--mpi MPI.txt] [--from CYCLE] [--markdown OUT.md] [--png OUT.png]

Each RUN.h5 is a run taken with `xnet run ... --census 16,64,...` (docs/scaling.md): for
every partitioning counted, the events each partition ran in each window and the messages
and bytes it sent to the others. `--event-ns` is the CPU time of an event on one thread,
one per file (or one for all): a plain 1-rank x 1-thread run's partition_compute_seconds
over its partition_events (a census run's own compute time includes the counting).

For partitioning P of window W, per counted window k from `--from` (default: the run's
warmup) and partition r:

    compute_r(k)  = c_event * events[k, r]
    exchange_r(k) = n_r * alpha + bytes[k, r] / beta + messages[k, r] * kappa
    window(k)     = max_r (compute_r(k) + exchange_r(k)) + alpha_red * log2(P)
    T(P)          = sum_k window(k),    T(1) = c_event * sum_k,r events[k, r]

n_r is the number of partitions r exchanges with (every window, as the engine sends to
each neighbour rank whether or not it has events for it), kappa the CPU per message sent
(encoding, decoding, mailboxes: 263 to 370 ns fitted on 2-rank runs of these networks),
alpha, beta, alpha_red the MPI latency, bandwidth and reduction time: this machine's
(shared memory, examples/mpi_bench) and an InfiniBand HDR-class cluster's.

T(P) splits into the ideal T(1)/P, the load imbalance (the slowest partition's compute
beyond the mean, window by window) and the communication (exchange and reduction on the
slowest partition). A second time, T_nb(P), is that of a neighbour-only synchronisation:
each partition starts window k once the partitions it exchanges with have finished k - 1,
with no global reduction.
"""

import argparse
import math
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from project_run import CLUSTER, THIS_MACHINE  # noqa: E402
from scaling_model import print_and_write, pyplot, read_mpi  # noqa: E402


def read_census(path, start):
    """The run's census groups as dicts, windows before `start` (a cycle) dropped."""
    out = []
    with h5py.File(path, "r") as f:
        points = f["points"]
        point = points[sorted(points)[0]]
        if "census" not in point:
            sys.exit(f"{path}: no census; run it with `xnet run ... --census 16,64,...`")
        warmup = int(f.attrs["warmup"]) if start is None else start
        for name, g in point["census"].items():
            a = g.attrs
            window = int(a["window"])
            windows = g["windows"][:]
            keep = windows * window >= warmup
            pairs = np.stack([g["pair_sender"][:], g["pair_receiver"][:]], axis=1) if len(g["pair_sender"]) else \
                np.zeros((0, 2), dtype=np.uint64)
            out.append({
                "name": name,
                "method": str(a["method"]),
                "parts": int(a["partitions"]),
                "window": window,
                "events": g["events"][:][keep].astype(np.float64),
                "messages": g["messages"][:][keep].astype(np.float64),
                "bytes": g["bytes"][:][keep].astype(np.float64),
                "windows": int(keep.sum()),
                "pairs": pairs.astype(np.int64),
                "weight_imbalance": float(a["weight_imbalance"]),
            })
        cycles = int(point.attrs["time_reached"]) - warmup
    out.sort(key=lambda c: (c["method"], c["parts"]))
    return out, cycles


def exchanges(c):
    """Partitions each partition exchanges with (senders into it, sorted by receiver)."""
    pairs = c["pairs"]
    both = np.concatenate([pairs, pairs[:, ::-1]]) if len(pairs) else pairs
    both = np.unique(both, axis=0) if len(both) else both
    order = np.argsort(both[:, 1], kind="stable") if len(both) else []
    both = both[order] if len(both) else both
    n = np.bincount(both[:, 1], minlength=c["parts"]) if len(both) else np.zeros(c["parts"], dtype=np.int64)
    return both, n


def predict(c, c_event, kappa, mpi):
    """Seconds of the counted windows on c["parts"] partitions, and the split."""
    both, n = exchanges(c)
    compute = c_event * c["events"]
    exchange = n * mpi["alpha"] + c["bytes"] / mpi["beta"] + c["messages"] * kappa
    per_window = compute + exchange
    reduce = mpi["alpha_red"] * math.log2(c["parts"])
    total = float((per_window.max(axis=1) + reduce).sum())
    ideal = float(compute.sum()) / c["parts"]
    imbalance = float((compute.max(axis=1) - compute.mean(axis=1)).sum())
    # The neighbour-only protocol: finish_r(k) = max(finish_r(k-1), max over the
    # partitions r exchanges with of finish_q(k-1)) + compute + exchange.
    finish = np.zeros(c["parts"])
    if len(both):
        senders, receivers = both[:, 0], both[:, 1]
        starts = np.concatenate([[0], np.cumsum(np.bincount(receivers, minlength=c["parts"]))[:-1]])
        # A partition with no partner has an empty segment (masked out below).
        starts = np.minimum(starts, len(senders) - 1)
        has = n > 0
        for k in range(per_window.shape[0]):
            ready = finish.copy()
            ready[has] = np.maximum(finish[has], np.maximum.reduceat(finish[senders], starts)[has])
            finish = ready + per_window[k]
    else:
        finish = per_window.sum(axis=0)
    return {"T": total, "ideal": ideal, "imbalance": imbalance, "comm": total - ideal - imbalance,
            "T_nb": float(finish.max()), "neighbours": n}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="runs taken with --census")
    ap.add_argument("--event-ns", type=float, nargs="+", required=True,
                    help="CPU ns per event of a plain 1-thread run, one per run or one for all")
    ap.add_argument("--kappa-ns", type=float, nargs="+", default=[300.0],
                    help="CPU ns per message sent, one per run or one for all")
    ap.add_argument("--mpi", help="examples/mpi_bench's output on this machine (default: docs/scaling.md's figures)")
    ap.add_argument("--from", dest="start", type=int, help="first cycle counted (default: the run's warmup)")
    ap.add_argument("--markdown", help="write the tables here")
    ap.add_argument("--png", help="plot of the predicted efficiency")
    args = ap.parse_args()
    def per_run(values, option):
        if len(values) not in (1, len(args.runs)):
            sys.exit(f"{option}: one value, or one per run")
        return values * len(args.runs) if len(values) == 1 else values

    costs, kappas = per_run(args.event_ns, "--event-ns"), per_run(args.kappa_ns, "--kappa-ns")
    here = read_mpi(args.mpi) if args.mpi else THIS_MACHINE
    lines, curves = ["# The counted strong-scaling model's tables", "",
                     "Written by scripts/bench/counted_model.py (docs/scaling.md explains the columns).", ""], {}
    lines += [f"MPI here: latency {here['alpha'] * 1e6:.2f} us, bandwidth {here['beta'] / 1e9:.2f} GB/s, "
              f"2-rank reduction {here['alpha_red'] * 1e6:.2f} us; cluster network: latency "
              f"{CLUSTER['alpha'] * 1e6:.1f} us, {CLUSTER['beta'] / 1e9:.0f} GB/s, reduction step "
              f"{CLUSTER['alpha_red'] * 1e6:.1f} us.", ""]
    for path, ns, kappa_ns in zip(args.runs, costs, kappas):
        census, cycles = read_census(path, args.start)
        name = os.path.splitext(os.path.basename(path))[0]
        c_event, kappa = ns * 1e-9, kappa_ns * 1e-9
        t1 = c_event * float(census[0]["events"].sum())
        lines += [
            f"## {name}",
            "",
            f"{cycles:,} cycles counted, {census[0]['events'].sum() / max(cycles, 1):,.0f} events per cycle, "
            f"{ns:.0f} ns per event: {t1:.1f} s on one thread; {kappa_ns:.0f} ns per message sent.",
            "",
            "| partitioning | window | events / partition / window | imbalance (events, max / mean) | "
            "messages / partition / window (max) | bytes / message | exchange partners (mean, max) | "
            "predicted s | speed-up | efficiency | lost to imbalance | lost to communication | "
            "speed-up, cluster network | speed-up, neighbour-only sync |",
            "|" + "---|" * 14,
        ]
        for c in census:
            p = c["parts"]
            m = predict(c, c_event, kappa, here)
            mc = predict(c, c_event, kappa, CLUSTER)
            ev = c["events"]
            mean_ev = ev.mean()
            imb = float((ev.max(axis=1).sum()) / max(ev.mean(axis=1).sum(), 1e-9))
            msgs = c["messages"]
            bpm = c["bytes"].sum() / max(msgs.sum(), 1)
            speed = t1 / m["T"]
            lines.append(
                f"| {c['name']} | {c['window']} | {mean_ev:,.0f} | {imb:.3f} | {msgs.mean():,.0f} ({msgs.max():,.0f}) | "
                f"{bpm:.1f} | {m['neighbours'].mean():.0f}, {m['neighbours'].max()} | {m['T']:.2f} | {speed:,.0f} | "
                f"{100 * speed / p:.0f} % | {100 * m['imbalance'] / m['T']:.0f} % | {100 * m['comm'] / m['T']:.0f} % | "
                f"{t1 / mc['T']:,.0f} | {t1 / m['T_nb']:,.0f} |"
            )
            curves.setdefault(name, {}).setdefault(c["method"], []).append((p, speed / p, t1 / mc["T"] / p))
        lines.append("")
    print_and_write("\n".join(lines), args.markdown)
    if args.png:
        plt = pyplot()

        fig, axes = plt.subplots(1, len(curves), figsize=(4.2 * len(curves), 4), sharey=True, squeeze=False)
        for ax, (name, methods) in zip(axes[0], curves.items()):
            for method, pts in sorted(methods.items()):
                ps = [q[0] for q in pts]
                color = {"blocks": "C0", "linear": "C1", "multilevel": "C2"}.get(method)
                ax.plot(ps, [100 * q[1] for q in pts], marker="o", label=method, color=color)
                ax.plot(ps, [100 * q[2] for q in pts], linestyle=":", color=color)
            ax.set_xscale("log", base=2)
            ax.set_title(name, fontsize=9)
            ax.set_xlabel("partitions (ranks x threads)")
            ax.set_ylim(0, 105)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        axes[0][0].set_ylabel("predicted efficiency (%); dotted: cluster network")
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
