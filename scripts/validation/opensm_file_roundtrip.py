#!/usr/bin/env python3
"""OpenSM loads xnet's forwarding tables, and xnet reads back what OpenSM programmed.

For each fabric and xnet routing:

1. `xnet topo --export F.net` writes the fabric; ibsim simulates it.
2. OpenSM 3.3.23 runs once (MinHop) to assign LIDs; its `opensm-lfts.dump` gives every
   node's LID and GUID by name.
3. `xnet routes --dump-tables` writes the routing's tables (xnet's own LIDs and GUIDs);
   they are renumbered to OpenSM's LIDs and GUIDs by node name, tables and path SLs.
4. OpenSM runs again with its `file` engine (`-R file -U`) loading those tables, and
   dumps what it programmed into the switches.
5. The check: every entry OpenSM programmed equals xnet's, and `xnet routes` reading
   OpenSM's dump (`routing.algorithm = "tables"`, with the renumbered SLs) gives the same
   verifier report as the routing itself.

Usage: scripts/validation/opensm_file_roundtrip.py   (installs opensm and ibsim-utils with apt-get
when missing; needs target/release/xnet). Prints a Markdown table.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare_opensm import CONFIG, ensure_opensm  # the same fabrics' config, installer

ROOT = Path(__file__).resolve().parents[2]
XNET = os.environ.get("XNET", str(ROOT / "target" / "release" / "xnet"))

FABRICS = [
    ("torus 4x4x4", 'kind = "torus"\nsides = [4, 4, 4]\nendpoints_per_switch = 1', ["lash", "dfsssp", "nue"]),
    ("RRG 100, d=8", 'kind = "random_regular"\nswitches = 100\ndegree = 8\nseed = 1\nendpoints_per_switch = 2',
     ["lash", "dfsssp"]),
]

HEADER = re.compile(r"(Unicast lids|Path SLs) \[.*\] of switch Lid (\d+) guid (0x[0-9a-f]+) \('(.*)'\):")
ENTRY = re.compile(r"0x([0-9a-f]+) (\d+) .*portguid (0x[0-9a-f]+): '(.*)'")


def parse(path: Path):
    """(name -> (LID, GUID), switch name -> {destination name: value}) of a dump."""
    ids, blocks, cur = {}, {}, None
    for line in path.read_text().splitlines():
        m = HEADER.match(line)
        if m:
            cur = m.group(4)
            ids[cur] = (int(m.group(2)), m.group(3))
            blocks[cur] = {}
            continue
        m = ENTRY.match(line)
        if m and cur is not None:
            ids.setdefault(m.group(4), (int(m.group(1), 16), m.group(3)))
            blocks[cur][m.group(4)] = int(m.group(2))
    return ids, blocks


def renumber(src: Path, ids, title: str, dst: Path):
    """`src` (an xnet dump) with OpenSM's LIDs and GUIDs (`ids`, by name)."""
    _, blocks = parse(src)
    top = max(lid for lid, _ in ids.values())
    out = []
    for switch, entries in blocks.items():
        lid, guid = ids[switch]
        out.append(f"{title} [0x0-0x{top:x}] of switch Lid {lid} guid {guid} ('{switch}'):")
        for name, value in sorted(entries.items(), key=lambda kv: ids[kv[0]][0]):
            out.append(f"0x{ids[name][0]:04x} {value:03} # portguid {ids[name][1]}: '{name}'")
        out.append(f"{len(entries)} entries")
    dst.write_text("\n".join(out) + "\n")


def opensm(net: Path, work: Path, dumps: Path, extra):
    """Runs OpenSM once on ibsim's `net`; returns its log text."""
    # Room for fabrics beyond ibsim's default 256 switches; no console.
    sim = subprocess.Popen(["ibsim", "-s", "-n", "-N", "8192", "-S", "4096", "-P", "131072", str(net)],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=work)
    try:
        time.sleep(2.0)
        if sim.poll() is not None:
            raise RuntimeError("ibsim exited at once (another ibsim running? `pkill -x ibsim`)")
        shutil.rmtree(dumps, ignore_errors=True)
        dumps.mkdir()
        log = work / "osm.log"
        log.unlink(missing_ok=True)
        # Its own LID cache (OpenSM's default is /var/cache/opensm, shared between runs).
        env = {**os.environ, "OSM_CACHE_DIR": str(work / "osm-cache")}
        subprocess.run(["ibsim-run", "/usr/sbin/opensm", *extra, "--once", "-f", str(log),
                        "-D", "0x43", "--dump_files_dir", str(dumps)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300, cwd=work, env=env)
        return log.read_text(errors="replace")
    finally:
        sim.kill()
        sim.wait()


def report(cfg: Path, *sets):
    """`xnet routes` report lines but times, build notes and the routing's name."""
    args = [XNET, "routes", str(cfg), "-o", str(cfg.with_suffix(".h5"))]
    for s in sets:
        args += ["--set", s]
    out = subprocess.run(args, capture_output=True, text=True, cwd=cfg.parent)
    skip = ("time", "routing", "VCs the routing needs", "peak memory", "threads")
    return [l for l in out.stdout.splitlines() if l.startswith("  ") and not l.strip().startswith(skip)]


def main():
    ensure_opensm()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, topology, routings in FABRICS:
            (work / "fabric.toml").write_text(CONFIG.format(topology=topology))
            net = work / "fabric.net"
            subprocess.run([XNET, "topo", "fabric.toml", "--export", str(net)], check=True,
                           stdout=subprocess.DEVNULL, cwd=work)
            cfg = work / "file.toml"
            cfg.write_text(CONFIG.format(topology='kind = "file"\npath = "fabric.net"'))
            opensm(net, work, work / "lids", ["-R", "minhop"])
            ids, _ = parse(work / "lids" / "opensm-lfts.dump")
            for routing in routings:
                xd = work / f"xnet-{routing}"
                shutil.rmtree(xd, ignore_errors=True)
                own = report(cfg, f"routing.algorithm={routing}")
                subprocess.run([XNET, "routes", str(cfg), "-o", "dump.h5", "--set", f"routing.algorithm={routing}",
                                "--dump-tables", str(xd)], check=True, stdout=subprocess.DEVNULL, cwd=work)
                renumber(xd / "opensm-lfts.dump", ids, "Unicast lids", work / "lfts.dump")
                renumber(xd / "xnet-sls.dump", ids, "Path SLs", work / "sls.dump")
                log = opensm(net, work, work / "loaded", ["-R", "file", "-U", str(work / "lfts.dump")])
                loaded = "file tables configured on all switches" in log
                _, xnet_blocks = parse(xd / "opensm-lfts.dump")
                _, osm_blocks = parse(work / "loaded" / "opensm-lfts.dump")
                entries = sum(len(v) for v in xnet_blocks.values())
                differ = sum(1 for s, e in xnet_blocks.items() for d, p in e.items()
                             if osm_blocks.get(s, {}).get(d) != p)
                back = report(cfg, "routing.algorithm=tables",
                              f"routing.tables.lfts={work / 'loaded' / 'opensm-lfts.dump'}",
                              f"routing.tables.sls={work / 'sls.dump'}")
                rows.append((name, routing, loaded, entries, differ, own == back and len(own) > 5))
                print(rows[-1], file=sys.stderr, flush=True)
    print("| fabric | routing | OpenSM loaded xnet's tables | entries | differing | xnet's report of OpenSM's tables = routing's own |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {'yes' if r[2] else 'NO'} | {r[3]} | {r[4]} | {'yes' if r[5] else 'NO'} |")
    return 0 if all(r[2] and r[4] == 0 and r[5] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
