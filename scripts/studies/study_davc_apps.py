#!/usr/bin/env python3
"""Pascual and Navaridas's (ICS'18) application experiment (Pascual and Navaridas, ICS'18, Figures 7 and 9).

Runs stencil 2D, stencil 3D, butterfly and waterfall on its two networks, RRG(876, 23, 17)
(configs/davc-rrg.toml) and Dragonfly(6,12,6) (configs/davc-dragonfly.toml), under every
deadlock-avoidance mechanism Pascual and Navaridas (ICS'18) compare: Dally's VC scheme (Dragonfly MIN and
Valiant), DAVC F_N, F_P and F_NP over Min, Valiant, SP, ECMP and ALLPATH(1), and SPDA with
1 to 16 VCs. Each run ends when the job finishes; its completion time (cycles) is the
figure. Writes docs/studies/davc-applications/{results.csv,running-times.png} and prints a
Markdown table.

    scripts/studies/study_davc_apps.py [--jobs 2] [--only stencil2d ...] [--replot]

Not a study file (configs/studies/): each mechanism has its own VCs and keys, so the runs
are not a grid, and the figure is bars of completion time per mechanism, which the
package does not draw.

The paper gives the workloads a sentence each, not their sizes; the sizes here (WORKLOADS)
are ours, chosen so that every rank of the 5,256 endpoints takes part (butterfly: the
first 4,096) and a run takes seconds.
"""
import argparse
import csv
import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

root = pathlib.Path(__file__).resolve().parents[2]
xnet = root / "target/release/xnet"
out_dir = root / "docs/studies/davc-applications"

# kind -> the job's table, as one TOML inline table for --set.
WORKLOADS = {
    "stencil2d": '{kind="stencil2d",grid=[73,72],halo_bytes=1024,iterations=5}',
    "stencil3d": '{kind="stencil3d",grid=[12,6,73],halo_bytes=1024,iterations=5}',
    "butterfly": '{kind="butterfly",ranks=4096,message_bytes=1024,iterations=2}',
    "waterfall": '{kind="waterfall",grid=[73,72],message_bytes=256,iterations=50}',
}


def mechanisms(network):
    """(label, family, VCs, --set overrides) of every mechanism the paper runs on `network`.
    VCs: what each needs (DAVC: the longest route in hops, Lemma 6.1 of the paper)."""
    m = []
    if network == "davc-dragonfly":
        m.append(("Min + Dally", "Dally", 2, ["routing.algorithm=dragonfly_min", "routing.vc_policy=routing"]))
        m.append(("Valiant + Dally", "Dally", 3, ["routing.algorithm=dragonfly_valiant", "routing.vc_policy=routing"]))
        routings = [("Min", 3, ["routing.algorithm=dragonfly_min"]), ("Valiant", 5, ["routing.algorithm=dragonfly_valiant"])]
        minimal_vcs = 3
    else:
        routings = [("Valiant", 8, ["routing.algorithm=valiant"])]
        minimal_vcs = 4
    routings += [
        ("SP", minimal_vcs, ["routing.algorithm=shortest_path"]),
        ("ECMP", minimal_vcs, ["routing.algorithm=minimal", "routing.selection=random"]),
        ("AP", minimal_vcs + 1, ["routing.algorithm=allpath", "routing.selection=random"]),
    ]
    for policy, name in [("davc_n", "F_N"), ("davc_p", "F_P"), ("davc_np", "F_NP")]:
        for routing, vcs, sets in routings:
            m.append((f"{routing} + {name}", name, vcs, sets + [f"routing.vc_policy={policy}"]))
    for v in [1, 2, 4, 8, 16]:
        m.append((f"SPDA {v}", "SPDA", v, ["routing.algorithm=spda", "routing.vc_policy=routing"]))
    return m


def run(network, workload, label, family, vcs, sets, work):
    path = work / f"{network}-{workload}-{label.replace(' ', '_').replace('+', 'x')}.h5"
    cmd = [str(xnet), "run", str(root / "configs" / f"{network}.toml"), "-q", "-t", "1", "-o", str(path),
           "--set", "simulation.cycles=20000000", "--set", "simulation.warmup=0",
           "--set", "simulation.sample_period=100", "--set", "traffic.load=0",
           "--set", f"workload.jobs=[{WORKLOADS[workload]}]", "--set", f"router.vcs={vcs}"]
    for s in sets:
        cmd += ["--set", s]
    done = subprocess.run(cmd, capture_output=True, text=True)
    row = {"network": network, "workload": workload, "mechanism": label, "family": family, "vcs": vcs,
           "completion": "", "status": f"exit {done.returncode}", "message_latency_mean": "", "wall_seconds": ""}
    if path.exists():
        import h5py
        with h5py.File(path) as f:
            p = f["points/000"]
            job = p["workload/jobs"][0]
            row.update(status=p.attrs["status"], wall_seconds=f"{p.attrs['wall_seconds']:.2f}",
                       message_latency_mean=f"{job['message_latency_mean']:.1f}")
            if job["finished"]:
                row["completion"] = int(job["completion_time"])
        path.unlink()
    print(f"{network} {workload} {label}: {row['completion']} {row['status']}", file=sys.stderr, flush=True)
    return row


def plot(rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    networks = ["davc-dragonfly", "davc-rrg"]
    workloads = [w for w in WORKLOADS if any(r["workload"] == w for r in rows)]
    colours = {"Dally": "#444444", "F_N": "#d62728", "F_P": "#1f77b4", "F_NP": "#2ca02c", "SPDA": "#ff7f0e"}
    fig, axes = plt.subplots(len(workloads), 2, figsize=(15, 3.2 * len(workloads)), squeeze=False)
    for i, w in enumerate(workloads):
        for j, n in enumerate(networks):
            ax = axes[i][j]
            these = [r for r in rows if r["workload"] == w and r["network"] == n]
            labels = [r["mechanism"] for r in these]
            values = [float(r["completion"]) if r["completion"] != "" else float("nan") for r in these]
            ax.bar(range(len(these)), values, color=[colours[r["family"]] for r in these])
            ax.set_yscale("log")
            ax.set_xticks(range(len(these)))
            ax.set_xticklabels(labels, rotation=70, fontsize=7)
            ax.set_title(f"{w}, {'Dragonfly(6,12,6)' if n == 'davc-dragonfly' else 'RRG(876,23,17)'}", fontsize=9)
            ax.set_ylabel("running time (cycles)", fontsize=8)
            ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "running-times.png", dpi=110)


def table(rows):
    workloads = [w for w in WORKLOADS if any(r["workload"] == w for r in rows)]
    for n in ["davc-dragonfly", "davc-rrg"]:
        print(f"\n{n}: running time in cycles\n")
        print("| mechanism | VCs | " + " | ".join(workloads) + " |")
        print("| --- | --- | " + " | ".join("---" for _ in workloads) + " |")
        labels = [r["mechanism"] for r in rows if r["network"] == n and r["workload"] == workloads[0]]
        for label in labels:
            cells = []
            vcs = ""
            for w in workloads:
                r = next((r for r in rows if r["network"] == n and r["workload"] == w and r["mechanism"] == label), None)
                vcs = r["vcs"] if r else vcs
                cells.append(str(r["completion"]) if r and r["completion"] != "" else (r["status"] if r else "-"))
            print(f"| {label} | {vcs} | " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (each on one thread)")
    ap.add_argument("--only", nargs="*", default=list(WORKLOADS), help="workloads to run")
    ap.add_argument("--replot", action="store_true", help="plot and tabulate results.csv again")
    a = ap.parse_args()
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / "results.csv"
    fields = ["network", "workload", "mechanism", "family", "vcs", "completion", "status",
              "message_latency_mean", "wall_seconds"]
    if a.replot:
        rows = list(csv.DictReader(open(csv_path)))
    else:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "xnet"], cwd=root, check=True)
        work = out_dir / "tmp"
        work.mkdir(exist_ok=True)
        tasks = [(n, w, *m) for w in a.only for n in ["davc-dragonfly", "davc-rrg"] for m in mechanisms(n)]
        with ThreadPoolExecutor(a.jobs) as pool:
            rows = list(pool.map(lambda t: run(*t, work), tasks))
        work.rmdir()
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
    plot(rows)
    table(rows)


if __name__ == "__main__":
    main()
