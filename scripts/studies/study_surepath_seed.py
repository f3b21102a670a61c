#!/usr/bin/env python3
"""Reruns the SurePath paper's (Camarero et al., FTXS'24) evaluation (Camarero et al., section 5) with xnet.

Four experiments, each a set of `xnet run` calls on the paper's networks (2D HyperX side 16
with 16 servers per switch, 3D HyperX side 8 with 8) and router (Table 2), at maximum
injection (offered load 1.0: the accepted load is the throughput):

  healthy   Minimal, Valiant, OmniWAR, Polarized, OmniSP, PolSP under the four patterns
            (Figures 4 and 5)
  random    OmniSP and PolSP against 0 to 100 random faults in steps of 10, 2D and 3D,
            every pattern (one nested fault sequence per network, Figure 6)
  shapes    OmniSP and PolSP with the six fault shapes (Figures 8 and 9)
  completion  8,000 phits per server under Regular Permutation to Neighbour with the Star
            faults: completion time and throughput over time (Figure 10)
  replot    redraws the healthy figures from healthy.csv

Writes CSV tables and PNG figures into the output folder (default docs/studies/surepath).
Not a study file (configs/studies/): a mechanism sets four or five keys together (routing,
VC policy, VCs, escape), so the runs are not a grid; the fault experiments reuse the
healthy runs; and the figures are bar charts laid out as the paper's, which the package does
not draw.
Usage: scripts/studies/study_surepath_seed.py [--cycles N] [--threads T] [--only NAME ...] [--out DIR]
       [--fault-step N] [--shortcuts descending|upward|both]
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
XNET = os.path.join(ROOT, "target", "release", "xnet")

# The paper's Table 2 router: input buffers of 8 packets, output buffers of 4, 16-phit
# packets, 1-cycle links, crossbar speedup 2 (virtual cut-through is xnet's only mode).
ROUTER = {
    "router.packet_size": 16,
    "router.input_buffer": 128,
    "router.output_buffer": 64,
    "router.speedup": 2,
    "router.router_delay": 1,
    # A head that is not granted requests again every cycle ("a single request to the
    # output with the lowest Q + P", section 3): the escape needs it (Duato's condition
    # assumes a waiting packet may always turn to the escape).
    "router.reselect": "true",
    "topology.link_latency": 1,
    "topology.terminal_latency": 1,
}

NETWORKS = {
    "2D": {"topology.sides": "[16, 16]", "topology.endpoints_per_switch": 16},
    "3D": {"topology.sides": "[8, 8, 8]", "topology.endpoints_per_switch": 8},
}

# Table 4: every mechanism on 2n VCs; SurePath on 4 (3 routing VCs + 1 escape VC, "in all
# the experiments", section 5.2), with xnet's deadlock-free one-way shortcuts (the
# paper's two-way ones close cycles of escape channels: docs/studies/surepath.md).
def mechanisms(dims):
    vcs = 2 * dims
    ladder = {"routing.escape_vcs": 0}
    return {
        "Minimal": {**ladder, "routing.algorithm": '"minimal"', "routing.vc_policy": '"wide_ladder"', "router.vcs": vcs},
        "Valiant": {**ladder, "routing.algorithm": '"valiant"', "routing.vc_policy": '"ladder"', "router.vcs": vcs},
        "OmniWAR": {**ladder, "routing.algorithm": '"omniwar"', "routing.vc_policy": '"ladder"', "router.vcs": vcs},
        "Polarized": {**ladder, "routing.algorithm": '"polarized"', "routing.vc_policy": '"ladder"', "router.vcs": vcs},
        "OmniSP": surepath("omniwar"),
        "PolSP": surepath("polarized"),
    }


# The escape's shortcuts: xnet's deadlock-free "descending" (default) or "upward", the rule
# of the paper's simulator (CAMINOS's branch_crossings_upwards), whose escape channels can
# close a cycle (docs/studies/surepath.md). Set by --shortcuts.
SHORTCUTS = "descending"


def surepath(algorithm):
    return {
        "routing.algorithm": f'"{algorithm}"',
        "routing.vc_policy": '"any"',
        "routing.escape_vcs": 1,
        "routing.escape_shortcuts": f'"{SHORTCUTS}"',
        "router.vcs": 4,
    }


PATTERNS = {
    "uniform": '"uniform"',
    "random server permutation": '"random_permutation"',
    "dimension complement reverse": '"dimension_complement_reverse"',
    "regular permutation to neighbour": '"regular_permutation_to_neighbour"',
}


def run(settings, out, threads):
    """Runs xnet with `settings` (key -> TOML value) and returns the point's attributes."""
    base = os.path.join(ROOT, "configs", "surepath-hyperx-2d.toml")
    args = [XNET, "run", base, "-q", "-t", str(threads), "-o", out]
    for key, value in settings.items():
        args += ["--set", f"{key}={value}"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode not in (0, 3):
        sys.exit(f"xnet failed ({done.returncode}): {' '.join(args)}\n{done.stderr}")
    with h5py.File(out) as f:
        point = f["points/000"]
        attrs = dict(point.attrs)
        attrs["timeseries"] = point["timeseries"][:]
        return attrs


def common(cycles):
    return {
        **ROUTER,
        "simulation.cycles": cycles,
        "simulation.warmup": cycles // 3,
        "simulation.sample_period": cycles // 10,
        "simulation.seed": 1,
        "topology.failed_links": 0,
        "traffic.load": 1.0,
    }


def healthy_result(args, net, pattern, name):
    """The healthy run of (net, pattern, mechanism) from healthy.csv, if the healthy step
    wrote it: the fault-free points of the other steps are the same runs (same settings and
    seed, and xnet is deterministic)."""
    path = os.path.join(args.out, "healthy.csv")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for r in csv.DictReader(f):
            if (r["network"], r["group"], r["series"]) == (net, f"{net} {pattern}", name):
                return {"accepted_load": float(r["accepted"]), "status": r["status"]}
    return None


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")


def bars(path, rows, groups, series, title):
    """Throughput, latency and Jain index bars, one per (group, series), as the paper's
    Figures 4 and 5."""
    panels = [("accepted", "accepted load", (0, 1)), ("latency", "mean latency (cycles)", None),
              ("jain", "Jain index of accepted load", (0, 1))]
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    width = 0.8 / len(series)
    for ax, (key, label, ylim) in zip(axes, panels):
        for i, s in enumerate(series):
            values = [next((r[key] for r in rows if r["group"] == g and r["series"] == s), 0) for g in groups]
            ax.bar([x + i * width for x in range(len(groups))], values, width, label=s)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(groups))])
        ax.set_xticklabels([g.split(" ", 1)[1] for g in groups], fontsize=7, rotation=20, ha="right")
        ax.set_ylabel(label)
        if ylim:
            ax.set_ylim(*ylim)
    axes[0].legend(fontsize=7, ncol=2)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def healthy(args, tmp):
    rows = []
    for net, topo in NETWORKS.items():
        dims = 2 if net == "2D" else 3
        patterns = list(PATTERNS) if dims == 3 else list(PATTERNS)[:3]
        for pattern in patterns:
            for name, mech in mechanisms(dims).items():
                a = run({**common(args.cycles), **topo, **mech, "traffic.pattern": PATTERNS[pattern]},
                        os.path.join(tmp, "h.h5"), args.threads)
                rows.append({"network": net, "group": f"{net} {pattern}", "series": name,
                             "accepted": round(float(a["accepted_load"]), 4),
                             "latency": round(float(a["latency_mean"]), 1),
                             "jain": round(float(a["jain_accepted"]), 4), "status": a["status"]})
                print(rows[-1], flush=True)
    write_csv(os.path.join(args.out, "healthy.csv"), rows)
    plot_healthy(args, rows)


def plot_healthy(args, rows):
    for net in NETWORKS:
        sub = [r for r in rows if r["network"] == net]
        groups = list(dict.fromkeys(r["group"] for r in sub))
        bars(os.path.join(args.out, f"healthy-{net}.png"), sub, groups, list(mechanisms(2)),
             f"Healthy {net} HyperX at offered load 1.0 (seed Figures 4 and 5)")


def replot(args, _tmp):
    """Redraws the healthy figures from healthy.csv (after a change to the plots)."""
    with open(os.path.join(args.out, "healthy.csv")) as f:
        rows = [{**r, **{k: float(r[k]) for k in ("accepted", "latency", "jain")}} for r in csv.DictReader(f)]
    plot_healthy(args, rows)


def random_faults(args, tmp):
    """Figure 6: faults grow in steps of 10 up to 100, one nested random sequence per network."""
    rows = []
    for net in NETWORKS:
        dims = 2 if net == "2D" else 3
        patterns = list(PATTERNS) if dims == 3 else list(PATTERNS)[:3]
        for faults in range(0, 101, args.fault_step):
            for pattern in patterns:
                for name in ["OmniSP", "PolSP"]:
                    a = (faults == 0 and healthy_result(args, net, pattern, name)) or run({**common(args.cycles), **NETWORKS[net], **mechanisms(dims)[name],
                             "traffic.pattern": PATTERNS[pattern], "topology.failed_links": faults,
                             "topology.fault_seed": 3}, os.path.join(tmp, "r.h5"), args.threads)
                    rows.append({"network": net, "faults": faults, "pattern": pattern, "series": name,
                                 "accepted": round(float(a["accepted_load"]), 4), "status": a["status"]})
                    print(rows[-1], flush=True)
    write_csv(os.path.join(args.out, "random-faults.csv"), rows)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    for ax, net in zip(axes, NETWORKS):
        sub = [r for r in rows if r["network"] == net]
        for pattern in dict.fromkeys(r["pattern"] for r in sub):
            for name, style in [("OmniSP", "-o"), ("PolSP", "--s")]:
                pts = [(r["faults"], r["accepted"]) for r in sub if r["pattern"] == pattern and r["series"] == name]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, markersize=3, label=f"{name}, {pattern}")
        links = "3,840" if net == "2D" else "5,376"
        ax.set_xlabel(f"random failed links (of {links}; one nested sequence)")
        ax.set_ylim(0, 1)
        ax.set_title(f"{net} HyperX")
        ax.legend(fontsize=6)
    axes[0].set_ylabel("accepted load")
    fig.suptitle("SurePath with growing random faults (seed Figure 6)")
    fig.tight_layout()
    path = os.path.join(args.out, "random-faults.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def shapes(args, tmp):
    rows = []
    for net, shape_list in [("2D", ["row", "subplane", "cross"]), ("3D", ["row", "subcube", "star"])]:
        dims = 2 if net == "2D" else 3
        patterns = list(PATTERNS) if dims == 3 else list(PATTERNS)[:3]
        for shape in ["none"] + shape_list:
            for pattern in patterns:
                for name in ["OmniSP", "PolSP"]:
                    fault = {} if shape == "none" else {"topology.fault_shape": f'"{shape}"'}
                    a = (shape == "none" and healthy_result(args, net, pattern, name)) or run({**common(args.cycles), **NETWORKS[net], **mechanisms(dims)[name], **fault,
                             "traffic.pattern": PATTERNS[pattern]}, os.path.join(tmp, "s.h5"), args.threads)
                    rows.append({"network": net, "shape": shape, "group": f"{net} {shape}: {pattern}",
                                 "series": name, "accepted": round(float(a["accepted_load"]), 4),
                                 "status": a["status"]})
                    print(rows[-1], flush=True)
    write_csv(os.path.join(args.out, "fault-shapes.csv"), rows)
    for net in NETWORKS:
        sub = [r for r in rows if r["network"] == net]
        groups = list(dict.fromkeys(r["group"] for r in sub))
        fig, ax = plt.subplots(figsize=(11, 3.8))
        width = 0.4
        for i, s in enumerate(["OmniSP", "PolSP"]):
            values = [next(r["accepted"] for r in sub if r["group"] == g and r["series"] == s) for g in groups]
            ax.bar([x + i * width for x in range(len(groups))], values, width, label=s)
        ax.set_xticks([x + width / 2 for x in range(len(groups))])
        ax.set_xticklabels([g.split(" ", 1)[1] for g in groups], fontsize=6, rotation=35, ha="right")
        ax.set_ylabel("accepted load")
        ax.set_ylim(0, 1)
        ax.set_title(f"{net} HyperX fault shapes (seed Figures 8 and 9)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(args.out, f"fault-shapes-{net}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(f"wrote {path}")


def completion(args, tmp):
    rows, series = [], {}
    for name in ["OmniSP", "PolSP"]:
        a = run({**common(args.cycles), **NETWORKS["3D"], **mechanisms(3)[name],
                 "topology.fault_shape": '"star"', "traffic.pattern": PATTERNS["regular permutation to neighbour"],
                 "traffic.phits_per_endpoint": 8000, "simulation.warmup": 0,
                 "simulation.cycles": 400000, "simulation.sample_period": 500},
                os.path.join(tmp, "c.h5"), args.threads)
        ts = a["timeseries"]
        series[name] = (ts["time"], ts["accepted_load"])
        rows.append({"series": name, "completion_time": int(a["completion_time"]),
                     "all_delivered": int(a["all_delivered"]), "stragglers": " ".join(map(str, a["stragglers"][:8])),
                     "status": a["status"]})
        print(rows[-1], flush=True)
    write_csv(os.path.join(args.out, "completion.csv"), rows)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for name, (t, acc) in series.items():
        ax.plot(t, acc, label=name)
    ax.set_xlabel("cycle")
    ax.set_ylabel("accepted load")
    ax.set_title("8,000 phits per server, RPN, Star faults (seed Figure 10)")
    ax.legend()
    fig.tight_layout()
    path = os.path.join(args.out, "completion.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=6000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", nargs="*", default=["healthy", "random", "shapes", "completion"])
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "studies", "surepath"))
    parser.add_argument("--fault-step", type=int, default=10,
                        help="step of the random fault count, 0 to 100 (the paper: 10)")
    parser.add_argument("--shortcuts", default="descending", choices=["descending", "upward", "both"],
                        help="routing.escape_shortcuts of OmniSP and PolSP")
    args = parser.parse_args()
    global SHORTCUTS
    SHORTCUTS = args.shortcuts
    os.makedirs(args.out, exist_ok=True)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "xnet"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, step in [("healthy", healthy), ("random", random_faults), ("shapes", shapes),
                           ("completion", completion), ("replot", replot)]:
            if name in args.only:
                step(args, tmp)


if __name__ == "__main__":
    main()
