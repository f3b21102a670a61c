#!/usr/bin/env python3
"""The throughput comparison of the Nue paper (Domke, Hoefler and Matsuoka, HPDC'16, Fig. 10
and Table 1), redone with xnet: the paper's networks of about 1,000 endpoints, an all-to-all
exchange of 2 KiB messages, Nue on 1, 2, 4 and 8 VCs beside the OpenSM routings that apply.

Networks (Table 1; each written here as an xnet topology or an edge list):
  random     RRG of 125 switches, 16 network ports and 8 endpoints each (1,000 channels)
  torus      6x5x5 3D torus, every neighbour pair joined by 4 links, 7 endpoints a switch
  fat tree   10-ary 3-tree (300 switches; 1,000 endpoints, the paper's table says 1,100)
  kautz      Kautz graph of 150 switches (strings of 3 over 6 symbols), every arc 2 links, 7 endpoints
  dragonfly  a = 12, p = 6, h = 6, g = 15: 5 global links per pair of groups
  cascade    two Cray Cascade groups (6 chassis x 16 switches: chassis all-to-all, 3 links
             between the same slot of every two chassis, 2 links between the groups per slot),
             8 endpoints a switch
Tsubame2.5's fabric is not at hand.

Routings: OpenSM's MinHop (its one VL: `vc_policy = "folded"`), Up*/Down* with one
balanced path per pair (`selection = "balanced"`; OpenSM's updn balances per LID), DFSSSP and
LASH on 8 VCs (refused when they need more layers, as OpenSM refuses), OpenSM's fat-tree
routing on the fat tree, and Nue on 1, 2, 4 and 8 VCs (`router.vcs`), with the paper's
escape turns and, on 8 VCs, with every turn (`escape = "all_turns"`).

Traffic: `alltoall` of 2,048 bytes, every endpoint a rank, `linear` (every rank posts its
sends to r + 1, r + 2, ... at once and its endpoint sends them in that order, as a flood of
messages; `pairwise`, a step at a time, is as slow as the slowest pair of each of the 999
steps: about 0.08 of a link for every routing on the random network); 256-byte packets of
16-byte phits, 8 VCs of 64 phits. Throughput: the phits delivered per endpoint and cycle
(a fraction of a link's rate, 1 phit a cycle) from cycle 20,000 to 100,000 of the exchange,
which by then is 0.1 to 0.8 of the way through (a whole exchange takes from 128,000 cycles,
at the link's rate, to 40 million with the worst routings here).

Usage: scripts/studies/study_nue_paper.py [OUT_DIR]   (default docs/studies/nue-paper; about
30 minutes on 2 cores). Writes OUT_DIR/results.csv and prints a Markdown table.
"""

import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
XNET = os.environ.get("XNET", str(ROOT / "target" / "release" / "xnet"))
PY = sys.executable

BASE = """[simulation]
cycles = 100000
warmup = 20000
seed = 1
sample_period = 5000

[topology]
{topology}

[router]
vcs = 8
packet_size = 16
input_buffer = 64

[routing]
algorithm = "dfsssp"

[traffic]
pattern = "uniform"
load = 0.0

[workload]
bytes_per_phit = 16

[[workload.jobs]]
name = "alltoall"
kind = "alltoall"
ranks = {ranks}
message_bytes = 2048
algorithm = "linear"
"""

def torus_edges():
    sides = (6, 5, 5)
    lines = []
    for x in range(sides[0]):
        for y in range(sides[1]):
            for z in range(sides[2]):
                here = (x, y, z)
                for d in range(3):
                    there = list(here)
                    there[d] = (there[d] + 1) % sides[d]
                    lines += [f"t{x}.{y}.{z} t{there[0]}.{there[1]}.{there[2]}"] * 4
    return lines


def kautz_edges():
    symbols = 6
    words = [(a, b, c) for a in range(symbols) for b in range(symbols) for c in range(symbols) if a != b and b != c]
    lines = []
    for w in words:
        for c in range(symbols):
            if c != w[2]:
                v = (w[1], w[2], c)
                lines += [f"k{w[0]}{w[1]}{w[2]} k{v[0]}{v[1]}{v[2]}"] * 2
    return lines


def dragonfly_edges(a=12, h=6, g=15, per_pair=5):
    lines = []
    for grp in range(g):
        for r in range(a):
            for r2 in range(r + 1, a):
                lines.append(f"d{grp}.{r} d{grp}.{r2}")
    # Group grp's global port slots (router-major) go to the other groups in order
    # grp + 1, grp + 2, ..., per_pair slots each.
    def slot(grp, other, k):
        position = (other - grp) % g - 1
        s = position * per_pair + k
        return s // h
    for grp in range(g):
        for other in range(grp + 1, g):
            for k in range(per_pair):
                lines.append(f"d{grp}.{slot(grp, other, k)} d{other}.{slot(other, grp, k)}")
    return lines


def cascade_edges(groups=2, chassis=6, blades=16):
    lines = []
    for grp in range(groups):
        for c in range(chassis):
            for b in range(blades):
                for b2 in range(b + 1, blades):
                    lines.append(f"c{grp}.{c}.{b} c{grp}.{c}.{b2}")
        for b in range(blades):
            for c in range(chassis):
                for c2 in range(c + 1, chassis):
                    lines += [f"c{grp}.{c}.{b} c{grp}.{c2}.{b}"] * 3
    for c in range(chassis):
        for b in range(blades):
            lines += [f"c0.{c}.{b} c1.{c}.{b}"] * 2
    return lines


def networks(out: Path):
    """(name, [topology] lines, endpoints)."""
    files = {"torus": (torus_edges(), 7), "kautz": (kautz_edges(), 7), "dragonfly": (dragonfly_edges(), 6),
             "cascade": (cascade_edges(), 8)}
    topo = {}
    for name, (lines, per) in files.items():
        path = out / f"{name}.edges"
        path.write_text("\n".join(lines) + "\n")
        switches = len({w for line in lines for w in line.split()})
        topo[name] = (f'kind = "file"\nformat = "edges"\npath = "{path.name}"\nendpoints_per_switch = {per}',
                      switches * per)
    return [
        ("random", 'kind = "random_regular"\nswitches = 125\ndegree = 16\nendpoints_per_switch = 8\nseed = 1', 1000),
        ("torus", *topo["torus"]),
        ("fat tree", 'kind = "fat_tree"\nk = 10\nn = 3', 1000),
        ("kautz", *topo["kautz"]),
        ("dragonfly", *topo["dragonfly"]),
        ("cascade", *topo["cascade"]),
    ]


def routings(network):
    rows = [
        ("minhop (1 VC)", ["routing.algorithm=minhop", "routing.vc_policy=folded"]),
        ("up_down (balanced)", ["routing.algorithm=up_down", "routing.selection=balanced"]),
        ("dfsssp", ["routing.algorithm=dfsssp"]),
        ("lash", ["routing.algorithm=lash"]),
    ]
    if network == "fat tree":
        rows.append(("ftree", ["routing.algorithm=ftree"]))
    for vcs in (1, 2, 4, 8):
        rows.append((f"nue ({vcs} VC{'s' if vcs > 1 else ''})", ["routing.algorithm=nue", f"router.vcs={vcs}"]))
    rows.append(("nue (8 VCs, all_turns)", ["routing.algorithm=nue", "routing.nue.escape=all_turns"]))
    return rows


def run(cfg: Path, sets, out: Path):
    """(status, accepted load or None, why refused or deadlocked)."""
    args = [XNET, "run", str(cfg), "-q", "-t", "2", "-o", str(out)]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True, cwd=cfg.parent)
    last = (p.stderr.strip().splitlines() or ["?"])[-1]
    if "deadlock detected" in p.stderr:
        return "deadlock", None, last
    if not out.exists() or p.returncode not in (0, 4):
        return "refused", None, last
    probe = ("import h5py,sys\nf=h5py.File(sys.argv[1])\np=f['points'][list(f['points'])[0]]\n"
             "print(p.attrs['status'], p.attrs['accepted_load'])")
    q = subprocess.run([PY, "-c", probe, str(out)], capture_output=True, text=True)
    words = q.stdout.split()
    return (words[0], float(words[1]), "") if len(words) == 2 else ("?", None, q.stderr.strip())


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "studies" / "nue-paper"
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="nue-paper-"))
    rows = []
    for name, topology, ranks in networks(work):
        cfg = work / f"{name.replace(' ', '-')}.toml"
        cfg.write_text(BASE.format(topology=topology, ranks=ranks))
        for label, sets in routings(name):
            h5 = work / "run.h5"
            h5.unlink(missing_ok=True)
            status, accepted, why = run(cfg, sets, h5)
            rows.append({"network": name, "routing": label, "status": status,
                         "throughput": f"{accepted:.3f}" if accepted is not None else "", "note": why})
            print(rows[-1], file=sys.stderr, flush=True)
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("| network | routing | throughput (of a link) | note |")
    print("|---|---|---|---|")
    for r in rows:
        note = {"refused": "refused: " + r["note"], "deadlock": "deadlock"}.get(r["status"], "")
        print(f"| {r['network']} | {r['routing']} | {r['throughput'] or '-'} | {note} |")


if __name__ == "__main__":
    main()
