#!/usr/bin/env bash
# A/B speed comparison of two xnet builds on one config, runs alternating (A B A B ...)
# so that the machine's drift hits both alike. Prints each run's simulation wall time and
# the sum of its partitions' compute seconds, then the best and the median of each build.
#
#   scripts/bench/bench-ab.sh OLD_XNET NEW_XNET [CONFIG] [THREADS] [RUNS] [--set ...]
#
# Default: configs/hyperx-2d-16.toml (the core benchmark), 1 thread, 5 runs each.
#
# With TOGETHER=1 the two builds of a pair run at the same time instead (give THREADS 1 on
# a 2-core machine), so that both meet the same load from the machine's other tenants; the
# summary adds the median of the per-pair ratios new / old of the compute seconds. On the
# shared development machine alternating runs drift by 15 %; pairs run side by side drift
# less but still by several per cent, so changes under about 5 % need many pairs
# (BENCHMARKS.md, "What one cache miss costs").
set -euo pipefail
cd "$(dirname "$0")/../.."
old=$1; new=$2; cfg=${3:-configs/hyperx-2d-16.toml}; threads=${4:-1}; runs=${5:-5}
shift $(( $# < 5 ? $# : 5 ))
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
record() {
  $py - "$out/$1.h5" "$1" <<'PY' >>"$out/times"
import sys, h5py
with h5py.File(sys.argv[1]) as f:
    p = f["points/000"].attrs
    compute = float(sum(p["partition_compute_seconds"]))
    print(sys.argv[2], float(p["wall_seconds"]), compute)
PY
  tail -1 "$out/times"
}
for i in $(seq "$runs"); do
  # Each run starts without an earlier file (a run over one stages its file and renames it).
  rm -f "$out/old.h5" "$out/new.h5"
  if [ "${TOGETHER:-0}" = 1 ]; then
    "$old" run "$cfg" -t "$threads" -q -o "$out/old.h5" "$@" >/dev/null &
    old_pid=$!
    "$new" run "$cfg" -t "$threads" -q -o "$out/new.h5" "$@" >/dev/null &
    new_pid=$!
    wait "$old_pid"
    wait "$new_pid"
    record old
    record new
    continue
  fi
  for which in old new; do
    bin=$old; [ "$which" = new ] && bin=$new
    rm -f "$out/$which.h5"
    "$bin" run "$cfg" -t "$threads" -q -o "$out/$which.h5" "$@" >/dev/null
    record "$which"
  done
done
$py - "$out/times" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
compute = {}
for which in ("old", "new"):
    wall = [float(r[1]) for r in rows if r[0] == which]
    comp = compute[which] = [float(r[2]) for r in rows if r[0] == which]
    print(f"{which}: wall best {min(wall):.3f} median {statistics.median(wall):.3f} s; "
          f"compute best {min(comp):.3f} median {statistics.median(comp):.3f} s")
ratios = [n / o for o, n in zip(compute["old"], compute["new"])]
print("new / old compute per pair: " + " ".join(f"{r:.3f}" for r in ratios)
      + f"; median {statistics.median(ratios):.3f}")
PY
