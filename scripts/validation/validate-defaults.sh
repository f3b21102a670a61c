#!/usr/bin/env bash
# The default router against the throughput targets of issue 9 (docs/validation.md,
# "The default router"): Dragonfly(6, 12, 6) as configs/dragonfly-6-12-6.toml gives it
# (defaults for everything but the VCs, the packet size and the input buffers that cover
# the 100-cycle global links), MIN under uniform traffic and Valiant under a shift by one
# group, against the plain input-FIFO router xnet had before (speedup 1, VC 0 in and
# out, 2-packet output buffers). Prints a Markdown table. About 5 minutes on 2 cores.
#
#   scripts/validation/validate-defaults.sh [THREADS]
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=${1:-2}
cargo build --release -p xnet -q
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
plain=(--set router.speedup=1 --set router.injection_vc=zero --set router.ejection_vc=zero
       --set router.output_buffer=32)

# name | router | overrides | loads
cases=(
  "MIN, uniform|default|--set routing.algorithm=dragonfly_min|0.5,0.7,0.8,0.85,0.9,0.95"
  "MIN, uniform|plain|--set routing.algorithm=dragonfly_min|0.5,0.55,0.6,0.7,0.8"
  "Valiant, group shift|default|--set routing.algorithm=dragonfly_valiant --set traffic.pattern=group_shift|0.3,0.4,0.45,0.47,0.49,0.52"
  "Valiant, group shift|plain|--set routing.algorithm=dragonfly_valiant --set traffic.pattern=group_shift|0.3,0.4,0.45,0.47,0.49,0.52"
)

echo "| case | router | offered | accepted | latency | saturated |"
echo "| --- | --- | --- | --- | --- | --- |"
for case in "${cases[@]}"; do
  IFS='|' read -r name router overrides loads <<<"$case"
  extra=()
  [ "$router" = plain ] && extra=("${plain[@]}")
  # shellcheck disable=SC2086
  target/release/xnet sweep configs/dragonfly-6-12-6.toml $overrides "${extra[@]}" --loads "$loads" \
    -t "$threads" -q -o "$work/sweep.h5"
  $py - "$work/sweep.h5" "$name" "$router" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1]) as f:
    for s in f["summary"]:
        print(f"| {sys.argv[2]} | {sys.argv[3]} | {s['offered_load']:.3f} | {s['accepted_load']:.4f} "
              f"| {s['latency_mean']:.1f} | {'yes' if s['saturated'] else 'no'} |")
PY
done
