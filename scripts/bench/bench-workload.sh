#!/usr/bin/env bash
# Application workload benchmark (issue 11): a 3D stencil of 65,536 ranks (64 x 32 x 32,
# 4,096-byte halos = 16 packets per face, 5 iterations, 1,000 cycles of computation after
# each) on a 65,536-endpoint HyperX (16 x 16 x 16 switches, 16 endpoints each, adaptive
# minimal routing), next to synthetic uniform traffic on the same network for the same
# number of cycles at the load that moves about as many packets. Prints wall seconds,
# packet-hops per second, peak memory and memory per endpoint for each, on 1 and 2 threads.
# Usage: scripts/bench/bench-workload.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -p xnet -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
net=(--set 'topology.sides=[16, 16, 16]' --set topology.endpoints_per_switch=16
     --set routing.algorithm=minimal --set routing.selection=adaptive --set router.vcs=3
     --set simulation.warmup=0 --set simulation.sample_period=500)
jobs='workload.jobs=[{kind="stencil3d",grid=[64,32,32],halo_bytes=4096,iterations=5,compute=1000}]'
report() { # label file
  $py - "$1" "$2" <<'PY'
import sys, h5py
with h5py.File(sys.argv[2]) as f:
    p = f["points/000"]
    a = p.attrs
    done = p["workload/jobs"][0]["completion_time"] if "workload" in p else a.get("time_reached", f.attrs.get("time_reached", 0))
    print(f"{sys.argv[1]:<34} {a['wall_seconds']:8.1f} {a['packet_hops'] / a['wall_seconds'] / 1e6:8.2f} "
          f"{f.attrs['peak_rss_bytes'] / 2**20:9.0f} {f.attrs['peak_rss_bytes'] / 1024 / f.attrs['endpoints']:8.2f} "
          f"{a['generated_total']:>11} {done:>9}")
PY
}
printf "%-34s %8s %8s %9s %8s %11s %9s\n" run "wall s" "Mhops/s" "peak MiB" "KiB/ep" packets cycles
for t in 1 2; do
  target/release/xnet run configs/hyperx-3d-32.toml "${net[@]}" --set simulation.cycles=10000000 \
    --set traffic.load=0 --set "$jobs" -t "$t" -q -o "$out/w.h5"
  report "stencil3d, $t thread(s)" "$out/w.h5"
  cycles=$($py -c "import h5py; print(h5py.File('$out/w.h5')['points/000/workload/jobs'][0]['completion_time'])")
  packets=$($py -c "import h5py; print(h5py.File('$out/w.h5')['points/000'].attrs['generated_total'])")
  # The load at which uniform traffic generates as many packets in as many cycles.
  load=$($py -c "print(round($packets * 16 / (65536 * $cycles), 4))")
  target/release/xnet run configs/hyperx-3d-32.toml "${net[@]}" --set "simulation.cycles=$cycles" \
    --set traffic.pattern=uniform --set "traffic.load=$load" -t "$t" -q -o "$out/s.h5"
  report "uniform load $load, $t thread(s)" "$out/s.h5"
done
