#!/usr/bin/env bash
# Runs the example configurations with two xnet builds and compares their result files
# dataset by dataset (scripts/dev/compare_results.py). For changes that must not change the
# model (speed, memory, code structure): every line must say "identical".
#
#   scripts/dev/compare-builds.sh OLD_XNET NEW_XNET [CYCLES]   (or scripts/compare-builds.sh, which forwards here)
#
# OLD runs on 1 thread and NEW on 2, so the check also covers partition independence.
# Figures only one build writes (a new column, a new attribute) are listed, not counted
# as differences (compare_results.py --common).
set -uo pipefail
cd "$(dirname "$0")/../.."
old=$1; new=$2; cycles=${3:-3000}
py=.venv/bin/python3
dir=$(mktemp -d)
status=0
for cfg in quick hyperx-2d-16 dragonfly-6-12-6 rrg-876-23-17 torus-4d mesh-8x8 \
           nue-torus-10x10x10 surepath-hyperx-2d davc-rrg davc-dragonfly; do
  set_args=(--set "simulation.cycles=$cycles" --set "simulation.warmup=$((cycles / 4))"
            --set "simulation.sample_period=$((cycles / 10))")
  "$old" run "configs/$cfg.toml" "${set_args[@]}" -t 1 -q -o "$dir/$cfg-old.h5" || true
  "$new" run "configs/$cfg.toml" "${set_args[@]}" -t 2 -q -o "$dir/$cfg-new.h5" || true
  printf '%-22s ' "$cfg"
  if ! "$py" scripts/dev/compare_results.py --common "$dir/$cfg-old.h5" "$dir/$cfg-new.h5" | head -5; then
    status=1
  fi
done
rm -rf "$dir"
exit $status
