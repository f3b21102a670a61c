#!/usr/bin/env bash
# Core benchmark (issue 2): HyperX 16x16, 16 endpoints/switch, uniform load 0.5, 16-phit
# packets, 2 VCs, 64/32-phit buffers, 1-cycle links, 10,000 cycles (2,000 warm-up), on 1
# and 2 threads. Prints, per thread count, the best of N runs: wall seconds of the
# simulation, packet-hops per second, peak resident memory and memory per endpoint.
# The router is pinned to the one the benchmark was defined with (speedup 1, injection
# and ejection on VC 0, 32-phit output buffers), so that its history stays comparable;
# ROUTER=default measures the default router instead.
# Usage: [ROUTER=default] scripts/bench/bench-core.sh [runs]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
cargo build --release -p xnet -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
printf "%-8s %10s %14s %12s %14s %9s\n" threads "wall s" "Mhops/s" "peak MiB" "KiB/endpoint" speedup
router=(--set router.speedup=1 --set router.injection_vc=zero --set router.ejection_vc=zero
        --set router.output_buffer=32)
[ "${ROUTER:-}" = default ] && router=()
base=""
for t in 1 2; do
  best=""
  for i in $(seq "$runs"); do
    target/release/xnet run configs/hyperx-2d-16.toml "${router[@]}" -t "$t" -q -o "$out/b.h5"
    line=$($py - "$out/b.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1]) as f:
    p = f["points/000"].attrs
    print(p["wall_seconds"], p["packet_hops"], f.attrs["peak_rss_bytes"], f.attrs["endpoints"])
PY
)
    read -r wall hops rss eps <<<"$line"
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $wall < ${best%% *} else 1)"; then best="$wall $hops $rss $eps"; fi
  done
  read -r wall hops rss eps <<<"$best"
  [ -z "$base" ] && base=$wall
  python3 -c "print(f'{$t:<8} {$wall:10.3f} {$hops/$wall/1e6:14.3f} {$rss/2**20:12.1f} {$rss/1024/$eps:14.2f} {$base/$wall:8.2f}x')"
done
