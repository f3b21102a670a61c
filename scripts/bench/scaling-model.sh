#!/usr/bin/env bash
# The strong-scaling model of docs/scaling.md, from scratch: measures this machine's MPI
# (examples/mpi_bench), partitions each million-endpoint config for 1 to 4,096 ranks
# (`xnet partition --csv`), runs each on 1 rank and on 2 ranks (cost per event, messages
# per cut link, bytes per message), then runs scripts/bench/scaling_model.py, which writes the
# tables (docs/scaling/model.md) and the plot (docs/scaling/speedup.png).
#
#   scripts/bench/scaling-model.sh [WORKDIR] [CYCLES_1_RANK] [CYCLES_2_RANKS]
#
# Defaults: WORKDIR /tmp/xnet-scaling-model, 3,000 cycles on 1 rank and 10,000 on 2
# (the 2-rank runs are the ones BENCHMARKS.md reports). About 45 minutes on 2 cores.
# Existing run files in WORKDIR are reused (delete them to measure again).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-/tmp/xnet-scaling-model}
cycles1=${2:-3000}
cycles2=${3:-10000}
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
cargo build --release -p xnet -q
cargo build --release -p xnet --example mpi_bench -q
mkdir -p "$dir" docs/scaling
mpiexec -n 2 target/release/examples/mpi_bench > "$dir/mpi.txt"
cat "$dir/mpi.txt"
for name in dragonfly-23-46-23 rrg-65536-48-32 hyperx-3d-32; do
  mkdir -p "$dir/$name"
  for p in 1 2 4 8 16 32 64 128 256 512 1024 2048 4096; do
    [ -s "$dir/$name/ranks-$p.csv" ] || \
      target/release/xnet partition "configs/$name.toml" --ranks "$p" --csv "$dir/$name/ranks-$p.csv" >/dev/null
  done
  if [ ! -s "$dir/$name/run1.h5" ]; then
    echo "scaling-model: $name on 1 rank, $cycles1 cycles"
    target/release/xnet run "configs/$name.toml" -t 1 -q -o "$dir/$name/run1.h5" \
      --set "simulation.cycles=$cycles1" --set "simulation.warmup=$((cycles1 / 2))"
  fi
  if [ ! -s "$dir/$name/run2.h5" ]; then
    echo "scaling-model: $name on 2 ranks, $cycles2 cycles"
    mpiexec -n 2 target/release/xnet run "configs/$name.toml" -t 1 -q -o "$dir/$name/run2.h5" \
      --set "simulation.cycles=$cycles2"
  fi
done
"$py" scripts/bench/scaling_model.py --model "$dir" --png docs/scaling/speedup.png --markdown docs/scaling/model.md
