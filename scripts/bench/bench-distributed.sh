#!/usr/bin/env bash
# Distributed benchmark (issue 3): Dragonfly(6,12,6) and HyperX 16x16 below saturation on
# 1 rank x 1 thread, 1 x 2 and 2 ranks x 1 (mpiexec), best of N runs each. Prints wall time,
# speedup, windows, messages and bytes exchanged between ranks per window, and the time
# partitions spent waiting at synchronisation.
# Usage: scripts/bench/bench-distributed.sh [runs] [cycles]   (defaults 3 and 10000)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
cycles=${2:-10000}
cargo build --release -p xnet -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
for cfg in dragonfly-6-12-6:0.3 hyperx-2d-16:0.4; do
  name=${cfg%%:*}; load=${cfg##*:}
  echo "== $name, load $load, $cycles cycles"
  printf "%-6s %8s %8s %8s %10s %12s %12s %10s\n" layout "wall s" speedup windows "msgs/win" "bytes/win" "sync s" "exch s"
  base=""
  for layout in 1x1 1x2 2x1; do
    ranks=${layout%x*}; threads=${layout#*x}
    best=""
    for i in $(seq "$runs"); do
      f="$out/$name-$layout.h5"
      args=(run "configs/$name.toml" -q -t "$threads" -o "$f" --set "traffic.load=$load" --set "simulation.cycles=$cycles" --set "simulation.warmup=$((cycles / 5))")
      if [ "$ranks" = 1 ]; then target/release/xnet "${args[@]}"; else mpiexec -n "$ranks" target/release/xnet "${args[@]}"; fi
      line=$($py - "$f" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1]) as f:
    p = f["points/000"].attrs
    w = max(int(p["windows"]), 1)
    msgs = sum(p["rank_messages_sent"]) if int(p["ranks"]) > 1 else sum(p["partition_boundary_messages"])
    print(p["wall_seconds"], w, msgs / w, sum(p["rank_bytes_sent"]) / w, max(p["partition_sync_seconds"]), sum(p["rank_exchange_seconds"]))
PY
)
      wall=${line%% *}
      if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $wall < ${best%% *} else 1)"; then best="$line"; fi
    done
    read -r wall windows msgs bytes syncs exch <<<"$best"
    [ -z "$base" ] && base=$wall
    python3 -c "print(f'{\"$layout\":<6} {$wall:8.2f} {$base/$wall:7.2f}x {$windows:8d} {$msgs:10.1f} {$bytes:12.0f} {$syncs:12.2f} {$exch:10.2f}')"
  done
done
