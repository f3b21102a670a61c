#!/usr/bin/env python3
"""xnet's table-based routing engines against OpenSM's on the same fabrics.

Every fabric is written once by `xnet topo --export F.net` (InfiniBand .net: switches, one
HCA per switch) and then routed by both tools from that file:

- OpenSM 3.3.23 (Debian's `opensm`) on a fabric simulated by ibsim (`ibsim-utils`):
  `ibsim -s F.net`, then `opensm -R ENGINE --once` under `ibsim-run` (LD_PRELOAD of
  libumad2sim). Its log gives the layers (virtual lanes) the engine needed or its
  refusal; ibsim's ports offer 8 data VLs, so OpenSM refuses what needs more.
- xnet: `xnet routes` on a config with `topology.kind = "file"` reading the same file,
  once with 8 VCs (the same limit: the verdict and its time) and once with 64 (how many
  layers it needs in all).
- OpenSM's paths: where its engine succeeded, OpenSM dumps its forwarding tables
  (`-D 0x43 --dump_files_dir`), and `xnet routes` reads them (`routing.algorithm =
  "tables"`) for their average routing distance and link weights, measured exactly as
  xnet's own.

Usage: scripts/validation/compare_opensm.py [OUT.csv]   (installs opensm and ibsim-utils with
apt-get when missing; needs target/release/xnet). Prints a Markdown table; writes the
rows as CSV (default: docs/studies/opensm/results.csv).
"""

import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
XNET = os.environ.get("XNET", str(ROOT / "target" / "release" / "xnet"))

# (name, [topology] lines) of the fabrics: one endpoint (HCA) per switch, k^n on a fat tree.
FABRICS = [
    *[(f"torus {k}x{k}x{k}", f'kind = "torus"\nsides = [{k}, {k}, {k}]\nendpoints_per_switch = 1')
      for k in (4, 5, 6, 8, 10)],
    *[(f"RRG 100, d=8, seed {s}",
       f'kind = "random_regular"\nswitches = 100\ndegree = 8\nseed = {s}\nendpoints_per_switch = 1')
      for s in (1, 2, 3)],
    ("RRG 256, d=12", 'kind = "random_regular"\nswitches = 256\ndegree = 12\nseed = 1\nendpoints_per_switch = 1'),
    ("fat tree 4-ary 3-tree", 'kind = "fat_tree"\nk = 4\nn = 3'),
]
# OpenSM's time limit per engine run (its LASH on RRG(876, 17) had not finished in 5.5 min).
LIMIT = 600
# OpenSM engine -> xnet routing.
ENGINES = [("lash", "lash"), ("dfsssp", "dfsssp")]

CONFIG = """[simulation]
cycles = 1000
seed = 1
[topology]
{topology}
[router]
vcs = 8
[routing]
algorithm = "lash"
vc_policy = "routing"
[traffic]
pattern = "uniform"
load = 0.1
"""


def ensure_opensm():
    if shutil.which("opensm") or Path("/usr/sbin/opensm").exists():
        return
    subprocess.run(["apt-get", "install", "-y", "-qq", "opensm", "ibsim-utils"], check=True,
                   env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}, stdout=subprocess.DEVNULL)


def opensm(net: Path, engine: str, work: Path):
    """Runs OpenSM's `engine` once on `net`: (layers or None, refused, seconds, the path of
    its forwarding-table dump if the engine itself configured the tables, else None)."""
    # Room for the largest fabrics (ibsim's defaults stop at 256 switches); no console.
    sim = subprocess.Popen(["ibsim", "-s", "-n", "-N", "8192", "-S", "4096", "-P", "131072", str(net)],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=work)
    try:
        time.sleep(2.0)
        if sim.poll() is not None:
            raise RuntimeError(f"ibsim exited at once on {net} (another ibsim running? `pkill -x ibsim`)")
        log = work / "osm.log"
        log.unlink(missing_ok=True)
        dumps = work / "dumps"
        shutil.rmtree(dumps, ignore_errors=True)
        dumps.mkdir()
        start = time.perf_counter()
        try:
            subprocess.run(["ibsim-run", "/usr/sbin/opensm", "-R", engine, "--once", "-f", str(log),
                            "-D", "0x43", "--dump_files_dir", str(dumps)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=LIMIT, cwd=work)
        except subprocess.TimeoutExpired:
            return None, False, None, None  # no verdict within LIMIT seconds
        seconds = time.perf_counter() - start
    finally:
        sim.kill()
        sim.wait()
    text = log.read_text(errors="replace")
    needed = re.findall(r"(?:Lanes needed|Virtual Lanes needed): (\d+)", text)
    refused = bool(re.search(r"exceed available lanes|Not enough VLs", text))
    m = re.search(r"Lane requirements \((\d+)\) exceed", text)
    layers = int(m.group(1)) if m else (int(needed[-1]) if needed else None)
    # When an engine fails OpenSM falls back to MinHop: only the engine's own tables count.
    own = re.search(rf"{engine} tables configured on all switches", text) is not None
    lfts = dumps / "opensm-lfts.dump"
    return layers, refused, seconds, (lfts if own and lfts.exists() else None)


def xnet(cfg: Path, algo: str, vcs: int, extra=()):
    """xnet routes: layers needed, refused, the build's seconds, the whole command's wall
    seconds (the verdict's time when refused), ARD, link weight std and max."""
    start = time.perf_counter()
    out = subprocess.run([XNET, "routes", str(cfg), "-t", "1", "-o", str(cfg.with_suffix(".h5")),
                          "--set", f"routing.algorithm={algo}", "--set", f"router.vcs={vcs}", *extra],
                         capture_output=True, text=True, cwd=cfg.parent)
    wall = time.perf_counter() - start
    text = out.stdout + out.stderr
    def field(pattern, cast=float):
        m = re.search(pattern, text)
        return cast(m.group(1)) if m else None
    refused = "needs more than" in text or re.search(r"needs \d+ layers, \d+ available", text) is not None
    layers = field(r"VCs the routing needs\s+(\d+)", int) or field(r"needs (\d+) layers", int)
    return {
        "layers": layers,
        "refused": refused,
        "seconds": field(r"routing tables built in\s+([\d.]+) s"),
        "wall": round(wall, 3),
        "ard": field(r"average routing distance\s+([\d.]+)"),
        "std": field(r"link weight avg / std / max\s+[\d.]+ / ([\d.]+)"),
        "max": field(r"link weight avg / std / max\s+[\d.]+ / [\d.]+ / (\d+)", int),
        "error": text.strip().splitlines()[-1] if out.returncode not in (0, 4) else "",
    }


def main(argv):
    out_csv = Path(argv[1]) if len(argv) > 1 else ROOT / "docs" / "studies" / "opensm" / "results.csv"
    ensure_opensm()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, topology in FABRICS:
            cfg = work / "fabric.toml"
            cfg.write_text(CONFIG.format(topology=topology))
            net = work / "fabric.net"
            subprocess.run([XNET, "topo", str(cfg), "--export", str(net)], check=True,
                           stdout=subprocess.DEVNULL, cwd=work)
            file_cfg = work / "file.toml"
            file_cfg.write_text(CONFIG.format(topology='kind = "file"\npath = "fabric.net"'))
            for engine, algo in ENGINES:
                o_layers, o_refused, o_seconds, lfts = opensm(net, engine, work)
                # OpenSM's paths measured by xnet (no SLs: its engines hand them out in path
                # records only, so the metrics are the paths').
                paths = xnet(file_cfg, "tables", 8, ["--set", f"routing.tables.lfts={lfts}"]) if lfts else {}
                x8 = xnet(file_cfg, algo, 8)
                xall = xnet(file_cfg, algo, 64)
                row = {
                    "fabric": name, "engine": algo,
                    "opensm_layers": o_layers, "opensm_refused_8": o_refused, "opensm_seconds": round(o_seconds, 3) if o_seconds is not None else f">{LIMIT}",
                    "xnet_layers": xall["layers"], "xnet_refused_8": x8["refused"],
                    "xnet_seconds_8": x8["wall"], "xnet_seconds_all": xall["seconds"],
                    "xnet_ard": xall["ard"], "xnet_std": xall["std"], "xnet_max": xall["max"],
                    "opensm_ard": paths.get("ard"), "opensm_std": paths.get("std"), "opensm_max": paths.get("max"),
                }
                rows.append(row)
                print(row, file=sys.stderr, flush=True)
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("| fabric | engine | OpenSM layers | OpenSM, 8 VLs | OpenSM s | xnet layers | xnet, 8 VCs | xnet s (8 VCs) | xnet s (all layers) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        o = f"{r['opensm_layers']}" + ("+" if r["opensm_refused_8"] and r["opensm_layers"] else "")
        print(f"| {r['fabric']} | {r['engine']} | {o} | {'refused' if r['opensm_refused_8'] else 'fits'} | "
              f"{r['opensm_seconds']} | {r['xnet_layers']} | {'refused' if r['xnet_refused_8'] else 'fits'} | "
              f"{r['xnet_seconds_8']} | {r['xnet_seconds_all']} |")
    print("\n| fabric | engine | ARD xnet / OpenSM | link weight std xnet / OpenSM | max xnet / OpenSM |")
    print("|---|---|---|---|---|")
    for r in rows:
        if r["opensm_ard"] is not None:
            print(f"| {r['fabric']} | {r['engine']} | {r['xnet_ard']} / {r['opensm_ard']} | "
                  f"{r['xnet_std']} / {r['opensm_std']} | {r['xnet_max']} / {r['opensm_max']} |")
    print(f"\nrows: {out_csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
