#!/usr/bin/env bash
# The counted strong-scaling model of docs/scaling.md, from scratch: a census of each
# million-endpoint network and of LULESH's trace replayed on 65,536 ranks, counted for
# 16 to 4,096 partitions with every partitioning method (one run each, 2 threads); a plain
# 1-rank x 1-thread run of each network for the CPU time per event; this machine's MPI
# (examples/mpi_bench) and memory (examples/memory_probe); then
# scripts/bench/counted_model.py, which writes docs/scaling/counted.md and counted.png.
#
#   scripts/bench/census-model.sh [WORKDIR] [CYCLES]
#
# Defaults: WORKDIR /tmp/xnet-census-model, 3,000 cycles (the first 1,000 are warm-up and
# not counted). About 45 minutes on 2 cores; the plain runs and the benchmarks want a
# quiet machine, the census runs do not (they count, they are not timed). Existing files in
# WORKDIR are reused (delete them to run again).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-/tmp/xnet-census-model}
cycles=${2:-3000}
warmup=$((cycles / 3))
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
cargo build --release -p xnet -q
cargo build --release -p xnet --example mpi_bench --example memory_probe -q
mkdir -p "$dir" docs/scaling
xnet=target/release/xnet
partitions=16,64,256,1024,4096
networks=(dragonfly-23-46-23 hyperx-3d-32 rrg-65536-48-32)
for name in "${networks[@]}"; do
  [ -s "$dir/$name.h5" ] || $xnet run "configs/$name.toml" -t 2 -q -o "$dir/$name.h5" \
    --set "simulation.cycles=$cycles" --set "simulation.warmup=$warmup" --census "$partitions"
done
# LULESH's OTF2 trace (8 ranks) replicated 8,192 times on random endpoints of the Dragonfly,
# computation scaled by 0.001: the replay of docs/benchmarks-history.md, 18,096 cycles.
[ -s "$dir/lulesh-65536.h5" ] || $xnet run configs/dragonfly-23-46-23.toml -t 2 -q -o "$dir/lulesh-65536.h5" \
  --set traffic.load=0 --set simulation.warmup=0 --set simulation.cycles=20000000 --set simulation.sample_period=2000 \
  --set 'workload.jobs=[{kind="otf2",archive="models/otf2/tests/data/lulesh8/traces.otf2",compute_scale=0.001,replicas=8192,mapping="random"}]' \
  --census "$partitions"
# The CPU time per event, from plain runs on one thread (a census run's own time includes
# the counting).
for name in "${networks[@]}"; do
  [ -s "$dir/$name-plain.h5" ] || $xnet run "configs/$name.toml" -t 1 -q -o "$dir/$name-plain.h5" \
    --set "simulation.cycles=$cycles" --set "simulation.warmup=$warmup"
done
[ -s "$dir/lulesh-65536-plain.h5" ] || $xnet run configs/dragonfly-23-46-23.toml -t 1 -q -o "$dir/lulesh-65536-plain.h5" \
  --set traffic.load=0 --set simulation.warmup=0 --set simulation.cycles=20000000 --set simulation.sample_period=2000 \
  --set 'workload.jobs=[{kind="otf2",archive="models/otf2/tests/data/lulesh8/traces.otf2",compute_scale=0.001,replicas=8192,mapping="random"}]'
[ -s "$dir/mpi.txt" ] || mpiexec -n 2 target/release/examples/mpi_bench > "$dir/mpi.txt"
[ -s "$dir/memory.txt" ] || target/release/examples/memory_probe > "$dir/memory.txt"
cat "$dir/mpi.txt" "$dir/memory.txt"
ns() { # the plain run's CPU ns per event
  "$py" -c "import h5py, sys; a = h5py.File(sys.argv[1])['points/000'].attrs; \
print(round(1e9 * sum(a['partition_compute_seconds']) / sum(a['partition_events'])))" "$1"
}
df=$(ns "$dir/dragonfly-23-46-23-plain.h5"); hx=$(ns "$dir/hyperx-3d-32-plain.h5")
rrg=$(ns "$dir/rrg-65536-48-32-plain.h5"); lulesh=$(ns "$dir/lulesh-65536-plain.h5")
echo "CPU per event: dragonfly $df ns, hyperx $hx ns, rrg $rrg ns, lulesh replay $lulesh ns"
# CPU per message sent: docs/scaling.md's fit on 2-rank runs (Dragonfly 282 ns, HyperX
# 370, RRG 263); the replay runs on the Dragonfly.
"$py" scripts/bench/counted_model.py --mpi "$dir/mpi.txt" \
  "$dir/dragonfly-23-46-23.h5" "$dir/hyperx-3d-32.h5" "$dir/rrg-65536-48-32.h5" "$dir/lulesh-65536.h5" \
  --event-ns "$df" "$hx" "$rrg" "$lulesh" --kappa-ns 282 370 263 282 \
  --markdown docs/scaling/counted.md --png docs/scaling/counted.png
