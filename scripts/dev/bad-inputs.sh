#!/usr/bin/env bash
# Runs the scripted list of bad inputs and faults (cli/tests/data/bad-inputs.toml) against
# this checkout's xnet, or against another build:
#
#   scripts/dev/bad-inputs.sh                    # this checkout (builds it)
#   scripts/dev/bad-inputs.sh /path/to/xnet      # another build, e.g. the last release
#
# Run it before each release; add a case for every defect found (the file says how), and
# see it fail on the build before the fix. Prints each failed case with its reasons.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ $# -ge 1 ]]; then
  export XNET_BIN="$(realpath "$1")"
fi
exec cargo test --release -p xnet --test bad_inputs -- --nocapture
