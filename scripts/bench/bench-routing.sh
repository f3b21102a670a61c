#!/usr/bin/env bash
# Routing-table and verification benchmark (issue 4 and the 65,536-switch RRG): for each
# case, `xnet routes` on the case's thread counts; prints the routing-table build time,
# the verification time, the states explored, the verdict and the peak resident memory of
# the process (tables + CDG). The topo-* cases time `xnet topo` (all-pairs distances by
# bit-parallel BFS) instead.
#
# Cases (name, config, overrides, destinations checked: "all" or a sample size, threads):
#   rrg-876         RRG(876, 17 network ports, 6 endpoints), minimal + ladder (DAVC seed)
#   rrg-8192        the same degree with 8,192 switches
#   rrg-65536-d17   the same degree with 65,536 switches, every destination (2 threads)
#   rrg-65536       RRG(65,536, 32 network ports, 16 endpoints: 1,048,576 endpoints),
#                   minimal + ladder on 5 VCs (the diameter), every destination (2 threads;
#                   about half an hour)
#   rrg-65536-tables  the same network's tables alone (one destination checked)
#   nue-torus       Nue, 8 layers, 10x10x10 torus with 1 % (30) failed links (Nue seed)
#   topo-dragonfly  xnet topo, Dragonfly p=23, a=46, h=23 (48,714 switches)
#   topo-rrg-65536  xnet topo, the RRG of rrg-65536
# Usage: scripts/bench/bench-routing.sh [case ...]   (default: all but rrg-65536-d17 and rrg-65536)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -p xnet -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rrg=configs/rrg-876-23-17.toml
big="--set topology.switches=65536 --set topology.degree=32 --set topology.endpoints_per_switch=16 --set router.vcs=5"
declare -A config=(
  [rrg-876]="$rrg"
  [rrg-8192]="$rrg"
  [rrg-65536-d17]="$rrg"
  [rrg-65536]="$rrg"
  [rrg-65536-tables]="$rrg"
  [nue-torus]=configs/nue-torus-10x10x10.toml
  [topo-dragonfly]=configs/dragonfly-6-12-6.toml
  [topo-rrg-65536]="$rrg"
)
declare -A sets=(
  [rrg-876]=""
  [rrg-8192]="--set topology.switches=8192 --set router.vcs=6"
  [rrg-65536-d17]="--set topology.switches=65536 --set router.vcs=8"
  [rrg-65536]="$big"
  [rrg-65536-tables]="$big"
  [nue-torus]=""
  [topo-dragonfly]="--set topology.p=23 --set topology.a=46 --set topology.h=23"
  [topo-rrg-65536]="$big"
)
declare -A sample=([rrg-876]=all [rrg-8192]=all [rrg-65536-d17]=all [rrg-65536]=all [rrg-65536-tables]=1
  [nue-torus]=all [topo-dragonfly]=- [topo-rrg-65536]=-)
declare -A threads=([rrg-876]="1 2" [rrg-8192]="1 2" [rrg-65536-d17]="2" [rrg-65536]="2"
  [rrg-65536-tables]="1 2" [nue-torus]="1 2" [topo-dragonfly]="1 2" [topo-rrg-65536]="1 2")
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(rrg-876 rrg-8192 rrg-65536-tables nue-torus topo-dragonfly topo-rrg-65536)
printf "%-16s %7s %8s %10s %10s %12s %9s %10s\n" case threads dests "tables s" "verify s" states verdict "peak MiB"
for c in "${cases[@]}"; do
  [ -n "${config[$c]:-}" ] || { echo "unknown case $c (known: ${!config[*]})" >&2; exit 2; }
  for t in ${threads[$c]}; do
    if [[ $c == topo-* ]]; then
      # shellcheck disable=SC2086
      log=$(RAYON_NUM_THREADS=$t /usr/bin/time -f "peak %M KiB" target/release/xnet topo "${config[$c]}" ${sets[$c]} 2>&1)
      dist=$(awk '/^computed in/ {print $7}' <<<"$log")
      peak=$(awk '/^peak/ {printf "%.1f", $2 / 1024}' <<<"$log")
      printf "%-16s %7s %8s %10s %10s %12s %9s %10s\n" "$c" "$t" "-" "$dist" "-" "-" "-" "$peak"
      continue
    fi
    dest=()
    [ "${sample[$c]}" != all ] && dest=(--destinations "${sample[$c]}")
    # shellcheck disable=SC2086
    log=$(target/release/xnet routes "${config[$c]}" ${sets[$c]} -t "$t" "${dest[@]}" -o "$out/r.h5" || true)
    # The value of the report row labelled $1 (first word with $2 = 1).
    field() {
      awk -v k="$1" -v w="${2:-0}" 'index($0, "  " k " ") == 1 {
        v = substr($0, length(k) + 3); sub(/^ +/, "", v); if (w) sub(/ .*/, "", v); print v; exit }' <<<"$log"
    }
    tables=$(field "routing tables built in" 1)
    verify=$(field "time" 1)
    states=$(field "routing states explored")
    verdict=$(field "acyclic (deadlock-free)")
    [ "$(field "unreachable pairs")" = 0 ] || verdict="unreachable"
    peak=$(field "peak memory (process)" 1)
    printf "%-16s %7s %8s %10s %10s %12s %9s %10s\n" "$c" "$t" "${sample[$c]}" "$tables" "$verify" "$states" "$verdict" "$peak"
  done
done
