#!/usr/bin/env bash
# Nue routing: how the order in which each layer's destinations are routed
# (`routing.nue.order`) shapes the routes. Networks: the 10x10x10 torus of
# configs/nue-torus-10x10x10.toml (8 layers) healthy and with 30 failed links (1 %), and
# RRG(876, 17 + 6) with 4 layers. Per network and order: average routing distance and the
# hottest link's weight (xnet routes), and the peak accepted load of a load sweep
# (5,000 cycles, 1,500 warm-up, uniform traffic). Prints a Markdown table.
# Not a study file (configs/studies/): ARD and link weights come from `xnet routes`, which a
# study does not run, and each network sweeps its own loads.
# Usage: scripts/studies/study-nue.sh [threads]   (default 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=${1:-2}
cargo build --release -p xnet -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
torus=configs/nue-torus-10x10x10.toml
rrg=(configs/rrg-876-23-17.toml --set routing.algorithm=nue --set router.vcs=4 --set routing.vc_policy=routing
  --set routing.selection=first)
echo "| network | nue.order | ARD | link weight avg / max | peak accepted |"
echo "|---|---|---|---|---|"
for order in id farthest_first; do
  for net in healthy-torus faulty-torus rrg-876; do
    case $net in
      healthy-torus) args=("$torus" --set topology.failed_links=0); loads=0.06,0.08,0.1,0.12 ;;
      faulty-torus) args=("$torus"); loads=0.06,0.08,0.1,0.12 ;;
      rrg-876) args=("${rrg[@]}"); loads=0.3,0.35,0.4,0.45,0.5 ;;
    esac
    args+=(--set "routing.nue.order=$order")
    target/release/xnet routes "${args[@]}" -t "$threads" -o "$out/r.h5" >/dev/null
    target/release/xnet sweep "${args[@]}" --loads "$loads" --set simulation.cycles=5000 \
      --set simulation.warmup=1500 -t "$threads" -q -o "$out/s.h5" >/dev/null
    $py - "$out/r.h5" "$out/s.h5" "$net" "$order" <<'PY'
import sys, h5py
r = h5py.File(sys.argv[1]).attrs
s = h5py.File(sys.argv[2])["points"]
peak = max(s[k].attrs["accepted_load"] for k in s)
print(f"| {sys.argv[3]} | {sys.argv[4]} | {r['average_routing_distance']:.3f} | "
      f"{r['link_weight_avg']:.0f} / {r['link_weight_max']:.0f} | {peak:.4f} |")
PY
  done
done
