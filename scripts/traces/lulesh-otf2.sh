#!/usr/bin/env bash
# Traces LULESH 2.0 (LLNL's shock hydrodynamics proxy application) into an OTF2 archive
# with xnet's PMPI tracer (scripts/traces/otf2-pmpi.c: Score-P's MPI records, for machines
# without Score-P): how models/otf2/tests/data/lulesh8/ was made, and a recipe for
# tracing any MPI program for `kind = "otf2"`.
#
# Usage: scripts/traces/lulesh-otf2.sh LULESH_SRC OUTDIR [RANKS] [SIZE] [ITERATIONS]
#   LULESH_SRC  a clone of https://github.com/LLNL/LULESH
#               (the fixture: 3e01c40b3281aadb7f996525cdd4a3354f6d3801)
#   RANKS       a cube: 1, 8, 27, ... (default 8); SIZE (default 5), ITERATIONS (default 8)
# Writes the archive OUTDIR/luleshRANKS/ (traces.otf2, traces.def, traces/).
# Needs MPICH (mpicc, mpicxx, mpiexec) and the OTF2 library (libopen-trace-format2-dev).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lulesh_src=$(cd "${1:?usage: $0 LULESH_SRC OUTDIR [RANKS] [SIZE] [ITERATIONS]}" && pwd)
mkdir -p "${2:?OUTDIR}"
out=$(cd "$2" && pwd)
ranks=${3:-8} size=${4:-5} iterations=${5:-8}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The tracer: MPI_* wrappers that record Enter/Leave and message records and call PMPI_*.
# shellcheck disable=SC2046  # pkg-config's flags are words
mpicc -shared -fPIC -O2 -Wall -o "$work/libotf2pmpi.so" "$here/otf2-pmpi.c" $(pkg-config --cflags --libs otf2)

# 2. LULESH with MPI, without OpenMP, the tracer linked ahead of MPICH (--no-as-needed: no
# symbol of the program names the tracer, which only overrides MPI's).
cp -r "$lulesh_src" "$work/LULESH"
(cd "$work/LULESH" && make -s -j2 CXX="mpicxx -DUSE_MPI=1" CXXFLAGS="-g -O3 -I. -Wall" \
  LDFLAGS="-g -O3 -Wl,--no-as-needed -L$work -Wl,-rpath,$work -lotf2pmpi") >/dev/null
ldd "$work/LULESH/lulesh2.0" | grep -q libotf2pmpi

# 3. The run; OTF2 does not write into an existing archive.
rm -rf "${out:?}/lulesh$ranks"
OTF2_PMPI_ARCHIVE_DIR="$out/lulesh$ranks" mpiexec -n "$ranks" "$work/LULESH/lulesh2.0" -s "$size" -i "$iterations"
echo "wrote $out/lulesh$ranks ($(du -sb "$out/lulesh$ranks" | cut -f1) bytes)"
