#!/usr/bin/env python3
"""xnet's per-LID table routings against OpenSM's engines on the same fabrics.

For each fabric (written by `xnet topo --export F.net`, simulated by ibsim) and each
engine, OpenSM 3.3.23 computes its forwarding tables (`opensm -R ENGINE --once -D 0x43
--dump_files_dir`), and xnet computes its own (`xnet routes --dump-tables`) with the
routing of the same name. The check:

- `ftree`, `dfsssp`, `minhop`, `lash`: every HCA entry xnet writes (the entries its routes
  from the switches with endpoints use) equals OpenSM's for the same switch and HCA (LASH
  routes per switch pair in both tools);
- the link weights (avg / std / max, xnet's definition: one path per ordered pair of
  switches, shared among the destination's endpoints) of OpenSM's tables, read back by
  `xnet routes` (`routing.algorithm = "tables"`), equal xnet's own;
- `nue`: xnet's Nue is not OpenSM's (docs/studies/nue.md says how they differ); both
  link weights are printed side by side.

Usage: scripts/validation/opensm_per_lid.py [--quick]   (installs opensm and ibsim-utils
with apt-get when missing; needs target/release/xnet). Prints a Markdown table; exits 1 when
an exact engine differs. `--quick` runs the small fabrics only (cli/tests/opensm.rs, CI).
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from compare_opensm import CONFIG, ensure_opensm
from opensm_file_roundtrip import opensm

ROOT = Path(__file__).resolve().parents[2]
XNET = os.environ.get("XNET", str(ROOT / "target" / "release" / "xnet"))

# (name, [topology] lines, engines, quick): endpoints on every switch of the tori and RRGs.
FABRICS = [
    ("4-ary 3-tree", 'kind = "fat_tree"\nk = 4\nn = 3', ["ftree", "dfsssp", "minhop", "lash", "nue"], True),
    ("torus 4x4, 2 per switch", 'kind = "torus"\nsides = [4, 4]\nendpoints_per_switch = 2',
     ["dfsssp", "minhop", "lash", "nue"], True),
    ("RRG 24, d=4, 3 per switch",
     'kind = "random_regular"\nswitches = 24\ndegree = 4\nseed = 2\nendpoints_per_switch = 3',
     ["dfsssp", "minhop", "lash", "nue"], True),
    ("8-ary 3-tree", 'kind = "fat_tree"\nk = 8\nn = 3', ["ftree", "dfsssp", "minhop", "lash", "nue"], False),
    # 405 switches: OpenSM's switch order is no longer the file's (GUIDs compared byte-swapped).
    ("3-ary 5-tree", 'kind = "fat_tree"\nk = 3\nn = 5', ["ftree", "dfsssp", "minhop"], False),
    ("RRG 100, d=8, 2 per switch",
     'kind = "random_regular"\nswitches = 100\ndegree = 8\nseed = 1\nendpoints_per_switch = 2',
     ["dfsssp", "minhop", "lash", "nue"], False),
]
EXACT = {"ftree", "dfsssp", "minhop", "lash"}
# xnet's settings per engine: OpenSM's MinHop runs every route on VL 0.
SETS = {"minhop": ["routing.vc_policy=folded", "router.vcs=1"]}


def hca_entries(path: Path):
    """{(switch name, HCA name): port} of a forwarding-table dump."""
    entries, switch = {}, None
    for line in path.read_text().splitlines():
        if line.startswith("Unicast lids"):
            switch = line[line.find("('") + 2:line.rfind("')")]
        elif line.startswith("0x") and "Channel Adapter" in line and switch is not None:
            words = line.split()
            entries[(switch, line[line.rfind(": '") + 3:-1])] = int(words[1])
    return entries


def weights(cfg: Path, *sets):
    """`link weight avg / std / max` as xnet routes reports it, or its error."""
    args = [XNET, "routes", str(cfg), "-o", str(cfg.with_suffix(".h5"))]
    for s in sets:
        args += ["--set", s]
    out = subprocess.run(args, capture_output=True, text=True, cwd=cfg.parent)
    for line in out.stdout.splitlines():
        if "link weight avg / std / max" in line:
            return line.split("max", 1)[1].strip()
    return "error: " + (out.stderr.strip().splitlines() or ["?"])[-1]


def main():
    quick = "--quick" in sys.argv
    ensure_opensm()
    rows, ok = [], True
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, topology, engines, small in FABRICS:
            if quick and not small:
                continue
            (work / "fabric.toml").write_text(CONFIG.format(topology=topology))
            net = work / "fabric.net"
            subprocess.run([XNET, "topo", "fabric.toml", "--export", str(net)], check=True,
                           stdout=subprocess.DEVNULL, cwd=work)
            cfg = work / "file.toml"
            cfg.write_text(CONFIG.format(topology='kind = "file"\npath = "fabric.net"'))
            for engine in engines:
                dumps = work / f"osm-{engine}"
                log = opensm(net, work, dumps, ["-R", engine])
                if f"{engine} tables configured on all switches" not in log:
                    rows.append((name, engine, "OpenSM's engine failed", "", "", ""))
                    continue
                lfts = dumps / "opensm-lfts.dump"
                sets = [f"routing.algorithm={engine}", *SETS.get(engine, [])]
                mine = work / f"xnet-{engine}"
                shutil.rmtree(mine, ignore_errors=True)
                args = [XNET, "routes", str(cfg), "-o", "dump.h5", "--dump-tables", str(mine)]
                for s in sets:
                    args += ["--set", s]
                # Exit status 4: the routes are not deadlock-free (MinHop on one VL); the
                # tables are written all the same.
                subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=work)
                if not (mine / "opensm-lfts.dump").exists():
                    raise RuntimeError(f"xnet wrote no tables for {engine} on {name}: {' '.join(args)}")
                theirs, ours = hca_entries(lfts), hca_entries(mine / "opensm-lfts.dump")
                equal = sum(1 for k, p in ours.items() if theirs.get(k) == p)
                w_ours = weights(cfg, *sets)
                w_theirs = weights(cfg, "routing.algorithm=tables", f"routing.tables.lfts={lfts}",
                                   "routing.vc_policy=folded", "router.vcs=1")
                if engine in EXACT:
                    ok &= equal == len(ours) and w_ours == w_theirs
                rows.append((name, engine, str(len(theirs)), f"{equal} of {len(ours)}", w_theirs, w_ours))
                print(rows[-1], file=sys.stderr, flush=True)
    print("| fabric | engine | OpenSM's HCA entries | xnet's entries equal to OpenSM's | link weights "
          "avg / std / max, OpenSM | xnet |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
