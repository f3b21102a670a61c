#!/usr/bin/env bash
# Kept at this path, which issues and the benchmark history cite; the script is scripts/dev/compare-builds.sh.
exec "$(dirname "$0")/dev/compare-builds.sh" "$@"
