#!/usr/bin/env bash
# Traces LULESH 2.0 (LLNL's shock hydrodynamics proxy application) with SST's DUMPI
# library: how models/schedule/tests/data/dumpi/lulesh8* was made, and a recipe for
# tracing any MPI program for `kind = "dumpi"`.
#
# Usage: scripts/traces/lulesh-dumpi.sh SST_DUMPI_SRC LULESH_SRC OUTDIR [RANKS] [SIZE] [ITERATIONS]
#   SST_DUMPI_SRC  a clone of https://github.com/sstsimulator/sst-dumpi
#                  (the fixture: a4c8bf5bb22e231e3eabe65619d62c239cee8ef1)
#   LULESH_SRC     a clone of https://github.com/LLNL/LULESH
#                  (the fixture: 3e01c40b3281aadb7f996525cdd4a3354f6d3801)
#   RANKS          a cube: 1, 8, 27, ... (default 8); SIZE elements per rank edge (default
#                  5); ITERATIONS time steps (default 8). The trace grows with the steps
#                  (about 31 KB per step on 8 ranks), not with SIZE.
# Writes OUTDIR/luleshRANKS.meta and OUTDIR/luleshRANKS-NNNN.bin.
# Needs MPICH (mpicc, mpicxx, mpiexec) and autoconf, automake and libtool.
set -euo pipefail
dumpi_src=$(cd "${1:?usage: $0 SST_DUMPI_SRC LULESH_SRC OUTDIR [RANKS] [SIZE] [ITERATIONS]}" && pwd)
lulesh_src=$(cd "${2:?LULESH_SRC}" && pwd)
mkdir -p "${3:?OUTDIR}"
out=$(cd "$3" && pwd)
ranks=${4:-8} size=${5:-5} iterations=${6:-8}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. libdumpi: the MPI_* wrappers that record every call and call PMPI_*.
cp -r "$dumpi_src" "$work/sst-dumpi"
(cd "$work/sst-dumpi" && ./bootstrap.sh >/dev/null && mkdir build && cd build \
  && ../configure -q --enable-libdumpi --prefix="$work/dumpi" CC=mpicc CXX=mpicxx \
  && make -s -j2 && make -s install) >/dev/null

# 2. LULESH with MPI, without OpenMP, linked with libdumpi ahead of MPICH.
cp -r "$lulesh_src" "$work/LULESH"
(cd "$work/LULESH" && make -s -j2 CXX="mpicxx -DUSE_MPI=1" CXXFLAGS="-g -O3 -I. -Wall" \
  LDFLAGS="-g -O3 -L$work/dumpi/lib -Wl,-rpath,$work/dumpi/lib -ldumpi") >/dev/null
ldd "$work/LULESH/lulesh2.0" | grep -q libdumpi

# 3. The run: libdumpi writes dumpi-DATE.meta and dumpi-DATE-NNNN.bin in the working
# directory; they are renamed luleshRANKS (the .meta's fileprefix says which files).
mkdir "$work/run"
(cd "$work/run" && mpiexec -n "$ranks" ../LULESH/lulesh2.0 -s "$size" -i "$iterations")
prefix=$(sed -n 's/^fileprefix=//p' "$work"/run/dumpi-*.meta)
name="lulesh$ranks"
sed "s/^fileprefix=.*/fileprefix=$name/" "$work/run/$prefix.meta" > "$out/$name.meta"
for f in "$work/run/$prefix"-*.bin; do
  mv "$f" "$out/$name-${f##*-}"
done
echo "wrote $out/$name.meta and $ranks rank files ($(cat "$out/$name"* | wc -c) bytes)"
