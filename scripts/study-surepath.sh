#!/usr/bin/env bash
# SurePath (Camarero et al.) on the seed's 2D HyperX (16x16, 16 endpoints per switch, 4 VCs,
# input buffers of 8 packets, output 4, speedup 2) with 0, 40 and 100 random failed links,
# uniform and random-permutation traffic at maximum injection (load 1.0): an adaptive base
# routing on 3 VCs with the Up/Down + shortcuts escape on the 4th, against the ladder on
# all 4 VCs (which needs VCs >= the longest route and breaks when faults lengthen routes).
# Prints a Markdown table: accepted load and status.
# Usage: scripts/study-surepath.sh [cycles] [threads]   (defaults 5000 and 2)
set -euo pipefail
cd "$(dirname "$0")/.."
cycles=${1:-5000}
threads=${2:-2}
cargo build --release -p xnet -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
common=(--set "simulation.cycles=$cycles" --set "simulation.warmup=$((cycles / 5))" --set traffic.load=1.0 -q -t "$threads")
echo "| faults | traffic | routing | VC scheme | accepted | status |"
echo "|---|---|---|---|---|---|"
for faults in 0 40 100; do
  for traffic in uniform random_permutation; do
    for scheme in "minimal any 1" "allpath any 1" "minimal ladder 0" "allpath ladder 0"; do
      read -r algo policy escape <<<"$scheme"
      label="$policy + escape"; [ "$escape" = 0 ] && label="$policy (4 VCs)"
      code=0
      target/release/xnet run configs/surepath-hyperx-2d.toml "${common[@]}" \
        --set "topology.failed_links=$faults" --set "traffic.pattern=$traffic" \
        --set "routing.algorithm=$algo" --set "routing.vc_policy=$policy" \
        --set "routing.escape_vcs=$escape" -o "$out/r.h5" >/dev/null 2>"$out/err" || code=$?
      if [ "$code" -ne 0 ] && [ "$code" -ne 3 ]; then
        echo "| $faults | $traffic | $algo | $label | - | error: $(head -c 100 "$out/err" | tr '\n|' '  ') |"
        continue
      fi
      $py - "$out/r.h5" "$faults" "$traffic" "$algo" "$label" <<'PY'
import sys, h5py
p = h5py.File(sys.argv[1])["points/000"].attrs
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {p['accepted_load']:.3f} | {p['status']} |")
PY
    done
  done
done
