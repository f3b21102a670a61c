#!/usr/bin/env bash
# Routing-table and verification benchmark (issue 4): for each case, `xnet routes` on 1
# and 2 threads; prints the routing-table build time, the verification time, the states
# explored, the verdict and the peak resident memory of the process (tables + CDG).
#
# Cases (name, config, overrides, destinations checked: "all" or a sample size):
#   rrg-876      RRG(876, 17 network ports, 6 endpoints), minimal + ladder (DAVC seed)
#   rrg-8192     the same degree with 8,192 switches
#   rrg-65536    65,536 switches: tables for all pairs, routes checked towards a sample of
#                destinations (a full check is 4.3 G pairs: hours on 2 cores)
#   nue-torus    Nue, 8 layers, 10x10x10 torus with 1 % (30) failed links (Nue seed)
# Usage: scripts/bench-routing.sh [case ...]   (default: all cases)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p xnet -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rrg=configs/rrg-876-23-17.toml
declare -A config=(
  [rrg-876]="$rrg"
  [rrg-8192]="$rrg"
  [rrg-65536]="$rrg"
  [nue-torus]=configs/nue-torus-10x10x10.toml
)
declare -A sets=(
  [rrg-876]=""
  [rrg-8192]="--set topology.switches=8192 --set router.vcs=6"
  [rrg-65536]="--set topology.switches=65536 --set router.vcs=8"
  [nue-torus]=""
)
declare -A sample=([rrg-876]=all [rrg-8192]=all [rrg-65536]=64 [nue-torus]=all)
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(rrg-876 rrg-8192 rrg-65536 nue-torus)
printf "%-10s %7s %8s %10s %10s %12s %9s %10s\n" case threads dests "tables s" "verify s" states verdict "peak MiB"
for c in "${cases[@]}"; do
  [ -n "${config[$c]:-}" ] || { echo "unknown case $c (known: ${!config[*]})" >&2; exit 2; }
  dest=()
  [ "${sample[$c]}" != all ] && dest=(--destinations "${sample[$c]}")
  for t in 1 2; do
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
    printf "%-10s %7s %8s %10s %10s %12s %9s %10s\n" "$c" "$t" "${sample[$c]}" "$tables" "$verify" "$states" "$verdict" "$peak"
  done
done
