#!/usr/bin/env bash
# Installs what xnet needs to build, run and test on a fresh Debian/Ubuntu machine:
# the HDF5 C library (output files), pkg-config, and a Python venv with h5py/pandas for
# post-processing and matplotlib for scripts/bench/scaling.py. Safe to run again: it skips what
# is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libhdf5-dev hdf5-tools pkg-config mpich libmpich-dev libclang-dev libopen-trace-format2-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then SUDO="sudo"; else
      echo "bootstrap: need root (or sudo) to apt-get install ${missing[*]}" >&2; exit 1
    fi
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null; then
  echo "bootstrap: cargo not found; install Rust from https://rustup.rs" >&2
  exit 1
fi

# Python for reading results (scripts/bench/scaling.py, the h5py tests)
# and the xnet_study package (python/: tables, plots, study reports; its pytest tests).
if [ ! -x .venv/bin/python3 ] || ! .venv/bin/python3 -c "import h5py, pandas, matplotlib, pytest, xnet_study" 2>/dev/null; then
  if python3 -m venv .venv 2>/dev/null && .venv/bin/pip install -q h5py pandas matplotlib pytest \
      && .venv/bin/pip install -q -e python; then
    echo "bootstrap: Python venv ready in .venv (h5py, pandas, matplotlib, pytest, xnet_study)"
  else
    echo "bootstrap: WARNING: could not set up .venv with h5py; the h5py reading test will be skipped" >&2
  fi
fi
echo "bootstrap: ready"
