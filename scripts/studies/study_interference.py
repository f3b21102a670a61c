#!/usr/bin/env python3
"""How much an application slows down next to a bully on a Dragonfly (docs/studies/interference.md).

A victim job (LULESH 2.0 replayed from its OTF2 trace, or a latency-bound allreduce job, in
the manner of GPCNeT's canaries) runs on a Dragonfly alone and next to a bully, under
minimal and UGAL routing, its ranks placed contiguously (the lowest endpoints: whole
groups) or at random. Two kinds of bully:

- the rest of the machine as congestors (GPCNeT's set-up: every endpoint that runs no
  rank injects at a given load, uniformly or to the same position in the next group, the
  adversarial pattern of minimal routing);
- a bully job (an all-to-all of 1,024 ranks), placed contiguously or at random, with the
  hybrid placement of Yang et al. (victim contiguous, bully random).

Each run ends when every job has finished; a victim's slowdown is its completion time next
to the bully over its time alone, with the same placement, seed and routing. Writes
docs/studies/interference/{results.csv,slowdown-5k.png,...} and prints Markdown tables.

    scripts/studies/study_interference.py --network 5k [--jobs 2]
    scripts/studies/study_interference.py --network 1m --threads 2
    scripts/studies/study_interference.py --replot

Runs already in results.csv are not run again (delete the file to start over).
"""
import argparse
import csv
import pathlib
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

root = pathlib.Path(__file__).resolve().parents[2]
xnet = root / "target/release/xnet"
out_dir = root / "docs/studies/interference"
results = out_dir / "results.csv"

LULESH = "models/otf2/tests/data/lulesh8/traces.otf2"

# network -> its config, victim size, random-placement seeds, congestor loads and the
# deadline (cycles; a run that reaches it ends `unfinished`).
NETWORKS = {
    "5k": {"config": "dragonfly-6-12-6", "ranks": 512, "seeds": [1, 2, 3],
           "congestors": [("uniform", 0.5), ("group_shift", 0.2)], "deadline": 400_000,
           "sample": 200, "bully_job": True, "bully_deadline": 4_000_000, "backgrounds": ["free", "any"]},
    "1m": {"config": "dragonfly-23-46-23", "ranks": 65_536, "seeds": [1],
           "congestors": [("uniform", 0.01), ("uniform", 0.1), ("group_shift", 0.01)], "deadline": 100_000,
           "sample": 1000, "bully_job": False, "backgrounds": ["free"]},
}
ROUTINGS = ["dragonfly_min", "dragonfly_ugal"]
FIELDS = ["network", "victim", "routing", "placement", "seed", "bully", "bully_placement", "load",
          "background", "status", "victim_time", "victim_latency_mean", "victim_latency_p99", "bully_time",
          "packets", "hops_mean", "wall_seconds"]


def mapping(placement, seed):
    if placement == "contiguous":
        return 'mapping="linear"'
    return f'mapping="random",mapping_seed={seed}'


def victim_job(victim, ranks, placement, seed):
    m = mapping(placement, seed)
    if victim == "lulesh":
        return (f'{{name="victim",kind="otf2",archive="{LULESH}",compute_scale=0.0,'
                f'replicas={ranks // 8},{m}}}')
    # GPCNeT's allreduce canary: 8-byte allreduces back to back (MPICH: recursive doubling).
    return (f'{{name="victim",kind="collectives",ranks={ranks},iterations=20,'
            f'operations=[{{collective="allreduce",bytes=8}}],{m}}}')


def bully_job(placement, seed):
    # Placed after the victim: contiguous is the next free endpoints.
    return (f'{{name="bully",kind="alltoall",ranks=1024,message_bytes=512,'
            f'{mapping(placement, seed + 100)}}}')


def runs(network):
    """Every run of `network`: dicts of the FIELDS that name a run."""
    n = NETWORKS[network]
    out = []
    placements = [("contiguous", 0)] + [("random", s) for s in n["seeds"]]
    for victim in ["lulesh", "allreduce"]:
        if network == "1m" and victim == "allreduce":
            continue
        for routing in ROUTINGS:
            for placement, seed in placements:
                out.append(dict(network=network, victim=victim, routing=routing, placement=placement,
                                seed=seed, bully="none", bully_placement="", load=0))
                for pattern, load in n["congestors"]:
                    for background in n["backgrounds"]:
                        out.append(dict(network=network, victim=victim, routing=routing, placement=placement,
                                        seed=seed, bully=pattern, bully_placement="rest", load=load,
                                        background=background))
            if n["bully_job"]:
                for placement, bully_placement in [("contiguous", "contiguous"), ("random", "random"),
                                                   ("contiguous", "random")]:
                    seed = 1 if placement == "random" or bully_placement == "random" else 0
                    out.append(dict(network=network, victim=victim, routing=routing, placement=placement,
                                    seed=seed, bully="alltoall_job", bully_placement=bully_placement, load=0))
    if n["bully_job"]:
        for routing in ROUTINGS:
            for placement in ["contiguous", "random"]:
                out.append(dict(network=network, victim="none", routing=routing, placement="",
                                seed=1 if placement == "random" else 0, bully="alltoall_job",
                                bully_placement=placement, load=0))
    return out


def key(r):
    return tuple(str(r.get(f, "")) for f in FIELDS[:9])


def run(r, threads, work):
    n = NETWORKS[r["network"]]
    jobs = []
    if r["victim"] != "none":
        jobs.append(victim_job(r["victim"], n["ranks"], r["placement"], r["seed"]))
    if r["bully"] == "alltoall_job":
        jobs.append(bully_job(r["bully_placement"], r["seed"]))
    name = "-".join(str(r.get(f, "")) for f in FIELDS[:9]).replace(".", "p")
    path = work / f"{name}.h5"
    # A bully job alone on its own groups can take millions of cycles (its all-to-all
    # crosses a single global link per pair of groups under minimal routing).
    deadline = n["bully_deadline"] if r["bully"] == "alltoall_job" else n["deadline"]
    cmd = [str(xnet), "run", str(root / "configs" / f"{n['config']}.toml"), "-q", "-t", str(threads),
           "-o", str(path), "--set", f"simulation.cycles={deadline}", "--set", "simulation.warmup=0",
           "--set", f"simulation.sample_period={n['sample']}", "--set", f"routing.algorithm={r['routing']}",
           "--set", f"workload.jobs=[{','.join(jobs)}]"]
    if r["bully_placement"] == "rest":
        cmd += ["--set", f"traffic.pattern={r['bully']}", "--set", f"traffic.load={r['load']}",
                "--set", f"workload.background={r['background']}"]
    else:
        cmd += ["--set", "traffic.load=0"]
    start = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    row = dict(r, status=f"exit {done.returncode}", wall_seconds=round(time.time() - start, 1))
    if path.exists():
        import h5py  # noqa: F401  (xnet_study needs it)
        import xnet_study as xs
        jobs_t = xs.read_jobs(path).set_index("name")
        point = xs.read_run(path).iloc[-1]
        row["status"] = point["status"]
        row["packets"] = int(point["generated_total"])
        row["hops_mean"] = round(float(point["hops_mean"]), 3)
        if "victim" in jobs_t.index:
            v = jobs_t.loc["victim"]
            row["victim_time"] = int(v["completion_time"]) if v["finished"] else ""
            row["victim_latency_mean"] = round(float(v["message_latency_mean"]), 1)
            row["victim_latency_p99"] = float(v["message_latency_p99"])
        if "bully" in jobs_t.index:
            b = jobs_t.loc["bully"]
            row["bully_time"] = int(b["completion_time"]) if b["finished"] else ""
        path.unlink()
    else:
        print(f"failed: {' '.join(cmd)}\n{done.stderr[-2000:]}", file=sys.stderr)
    return row


def load_rows():
    if not results.exists():
        return []
    with open(results) as f:
        return list(csv.DictReader(f))


def save(rows):
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(results, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in sorted(rows, key=key):
            w.writerow({k: r.get(k, "") for k in FIELDS})


def slowdowns(rows):
    """Victim rows next to a bully with their slowdown against the same victim alone."""
    def where(r):
        # A contiguous victim sits on the same endpoints whatever the seed.
        return r["network"], r["victim"], r["routing"], r["placement"], str(r["seed"]) if r["placement"] == "random" else ""

    alone = {where(r): r for r in rows if r["bully"] == "none"}
    out = []
    for r in rows:
        if r["bully"] == "none" or r["victim"] == "none":
            continue
        a = alone.get(where(r))
        if a and a["victim_time"] and r["victim_time"]:
            out.append(dict(r, alone=int(a["victim_time"]), slowdown=int(r["victim_time"]) / int(a["victim_time"])))
        elif a and a["victim_time"]:
            out.append(dict(r, alone=int(a["victim_time"]), slowdown=float("inf")))
    return out


def report(rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401

    s = slowdowns(rows)
    for network in NETWORKS:
        # The figure: congestors that talk among themselves (`free`), as GPCNeT's.
        every = [r for r in s if r["network"] == network]
        sub = [r for r in every if r.get("background", "") in ("", "free")]
        if not sub:
            continue
        victims = sorted({r["victim"] for r in sub})
        # One panel per bully and load.
        bullies = sorted({(r["bully"], str(r["load"])) for r in sub},
                         key=lambda b: (["uniform", "group_shift", "alltoall_job"].index(b[0]), float(b[1] or 0)))
        fig, axes = plt.subplots(len(victims), len(bullies), figsize=(4.2 * len(bullies), 3.4 * len(victims)),
                                 squeeze=False)
        for i, victim in enumerate(victims):
            for j, bully in enumerate(bullies):
                ax = axes[i][j]
                cells = [r for r in sub if r["victim"] == victim and (r["bully"], str(r["load"])) == bully]
                labels = sorted({(r["placement"], r["bully_placement"]) for r in cells},
                                key=lambda p: (p[0] != "contiguous", p[1]))
                # A victim that did not finish by the deadline is drawn at the slowdown the
                # deadline gives (a lower bound) and marked.
                cap = NETWORKS[network]["deadline"]
                top = 1.0
                for k, routing in enumerate(ROUTINGS):
                    ys, lo, hi, unfinished = [], [], [], []
                    for p in labels:
                        cell = [r for r in cells if (r["placement"], r["bully_placement"]) == p
                                and r["routing"] == routing]
                        v = [r["slowdown"] if r["slowdown"] != float("inf") else cap / r["alone"] for r in cell]
                        m = sum(v) / len(v) if v else 0
                        ys.append(m)
                        lo.append(m - min(v) if v else 0)
                        hi.append(max(v) - m if v else 0)
                        unfinished.append(any(r["slowdown"] == float("inf") for r in cell))
                        top = max(top, max(v) if v else 0)
                    xs_ = [x + (k - 0.5) * 0.38 for x in range(len(labels))]
                    ax.bar(xs_, ys, 0.38, yerr=[lo, hi], capsize=3,
                           label="minimal" if routing == "dragonfly_min" else "UGAL")
                    for x, y, u in zip(xs_, ys, unfinished):
                        if u:
                            ax.annotate("unfinished", (x, y), ha="center", va="bottom", fontsize=7)
                ax.set_xticks(range(len(labels)))
                names = {("contiguous", "rest"): "contiguous", ("random", "rest"): "random",
                         ("contiguous", "contiguous"): "both contig.", ("random", "random"): "both random",
                         ("contiguous", "random"): "hybrid"}
                ax.set_xticklabels([names.get(p, "/".join(p)) for p in labels], fontsize=8)
                ax.axhline(1.0, color="grey", lw=0.8)
                if top > 4:
                    ax.set_yscale("log")
                    plain = matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}")
                    ax.yaxis.set_major_formatter(plain)
                    ax.yaxis.set_minor_formatter(plain)
                else:
                    ax.set_ylim(0.9, max(1.1, top * 1.05))
                load = bully[1] if bully[1] not in ("", "0") else ""
                what = {"uniform": "uniform congestors", "group_shift": "group-shift congestors",
                        "alltoall_job": "an all-to-all job"}[bully[0]]
                ax.set_title(f"{victim} next to {what}" + (f" at {load}" if load else ""), fontsize=9)
                if j == 0:
                    ax.set_ylabel("slowdown (vs alone)")
                ax.legend(fontsize=7, loc="upper left" if top > 4 else "best")
        fig.tight_layout()
        fig.savefig(out_dir / f"slowdown-{network}.png", dpi=110)
        plt.close(fig)
        print(f"\n### {network}\n")
        print("| victim | bully | congestors' destinations | placement | routing | alone (cycles) | next to bully | slowdown |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in sorted(every, key=lambda r: (r["victim"], r["bully"], r.get("background", ""), r["placement"],
                                              r["bully_placement"], r["routing"], str(r["seed"]))):
            place = r["placement"] if r["bully_placement"] in ("rest",) else f"{r['placement']}/{r['bully_placement']}"
            seed = f" (seed {r['seed']})" if r["placement"] == "random" else ""
            dest = {"free": "congestors only", "any": "any endpoint"}.get(r.get("background", ""), "")
            print(f"| {r['victim']} | {r['bully']} {r['load'] if r['load'] not in ('0', 0) else ''} | {dest} | {place}{seed} "
                  f"| {r['routing'].replace('dragonfly_', '')} | {r['alone']} | {r['victim_time'] or '> deadline'} "
                  f"| {r['slowdown']:.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--network", choices=list(NETWORKS), action="append")
    ap.add_argument("--jobs", type=int, default=1, help="runs at once")
    ap.add_argument("--threads", type=int, default=1, help="threads per run")
    ap.add_argument("--replot", action="store_true", help="table and figures from results.csv only")
    ap.add_argument("--only-victim", help="run only this victim's runs (and the bully alone)")
    args = ap.parse_args()
    rows = load_rows()
    if not args.replot:
        done = {key(r) for r in rows}
        todo = [r for net in (args.network or ["5k"]) for r in runs(net)
                if key(r) not in done and (not args.only_victim or r["victim"] in (args.only_victim, "none"))]
        work = out_dir / "work"
        work.mkdir(parents=True, exist_ok=True)
        print(f"{len(todo)} runs", file=sys.stderr)
        with ThreadPoolExecutor(args.jobs) as pool:
            for row in pool.map(lambda r: run(r, args.threads, work), todo):
                rows.append(row)
                save(rows)
                print(" ".join(f"{k}={row.get(k, '')}" for k in FIELDS), file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
    report(rows)


if __name__ == "__main__":
    main()
