#!/usr/bin/env bash
# Matched runs of xnet and BookSim2 (github.com/booksim/booksim2) on the Dragonfly of
# BookSim2's src/examples/dragonflyconfig, printed as a Markdown table. Not part of CI: on
# first use it builds BookSim2 (about 2 minutes on 2 cores, needs g++, flex and bison) into
# .peers/booksim2 from the local mirror if there is one, else from a git clone; $BOOKSIM
# names a binary to use instead.
#
#   scripts/validation/validate-booksim.sh               # full length: about 1.5 hours on 2 cores
#   QUICK=1 scripts/validation/validate-booksim.sh       # short windows, one load per case (minutes)
#
# Environment: BOOKSIM (booksim binary), XNET (xnet binary; default: cargo build),
# OUTPUT_BUFFER (xnet router.output_buffer, default 4096),
# PEERS (where to build BookSim2, default .peers), SAMPLE_PERIOD (BookSim's sample period,
# default 10000 as in its example; the xnet window is matched to it), JOBS (parallel cases,
# default 2), PYTHON (a python3 with h5py; default .venv/bin/python3).
#
# Each BookSim run uses the template dragonfly-4-8-4-booksim.cfg.in (beside this script) (the keys of
# the example, routing, VCs, traffic, load and sample period filled in). BookSim's latency
# mode warms up for 3 sample periods, then measures until 3 periods agree (at least 3, at
# most 10 in all) and drains the measured packets; the xnet run warms up for 3 periods and
# measures 3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
root=$(pwd)
val="$here"
peers=${PEERS:-$root/.peers}
sample=${SAMPLE_PERIOD:-10000}
jobs=${JOBS:-2}
# BookSim's output queues are unbounded, but a flit enters one only with a credit of the
# next router's input VC (iq_router.cpp:1122, 1375), so they never hold more than that
# VC's vc_buf_size. The booksim preset's credit_check = "crossbar" does the same in xnet,
# so a deep output buffer (4096) reads "unbounded" and the credits bound it.
output_buffer=${OUTPUT_BUFFER:-4096}
[ "${QUICK:-0}" = 1 ] && sample=${SAMPLE_PERIOD:-2000}

booksim=${BOOKSIM:-$peers/booksim2/src/booksim}
if [ ! -x "$booksim" ]; then
  echo "building BookSim2 into $peers/booksim2 ..." >&2
  mkdir -p "$peers/booksim2"
  mirror=/work/.mirror/booksim+booksim2/repo
  if [ -d "$mirror" ]; then
    git --git-dir="$mirror" archive HEAD | tar -x -C "$peers/booksim2"
    git --git-dir="$mirror" rev-parse HEAD >"$peers/booksim2/COMMIT"
  else
    rm -rf "$peers/booksim2"
    git clone -q https://github.com/booksim/booksim2 "$peers/booksim2"
    git -C "$peers/booksim2" rev-parse HEAD >"$peers/booksim2/COMMIT"
  fi
  command -v flex >/dev/null && command -v bison >/dev/null ||
    { echo "BookSim2 needs flex and bison (apt-get install flex bison)" >&2; exit 1; }
  make -C "$peers/booksim2/src" -j 2 >"$peers/booksim2/build.log" 2>&1 ||
    { tail -20 "$peers/booksim2/build.log" >&2; exit 1; }
fi
booksim=$(realpath "$booksim")

if [ -n "${XNET:-}" ]; then
  xnet=$(realpath "$XNET")
else
  cargo build --release -p xnet -q
  xnet=$root/target/release/xnet
fi
py=python3; [ -x "$root/.venv/bin/python3" ] && py=$root/.venv/bin/python3
py=${PYTHON:-$py}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | BookSim routing_function, num_vcs, traffic | xnet overrides | loads | quick loads
# bad_dragon sends to a random endpoint of the next group (BookSim's traffic.cpp);
# xnet's group_shift to the same position in the next group: both put a group's whole
# load on the one global link between the two groups under MIN.
cases=(
  "uniform, MIN|min 2 uniform|--set routing.algorithm=dragonfly_min --set router.vcs=2|0.2 0.4 0.6 0.8 0.9 1.0|0.4"
  "next group, MIN|min 2 bad_dragon|--set routing.algorithm=dragonfly_min --set router.vcs=2 --set traffic.pattern=group_shift|0.02 0.03 0.1|0.02"
  "uniform, UGAL|ugal 3 uniform|--set routing.algorithm=dragonfly_ugal --set router.vcs=3 --set routing.dragonfly_ugal.threshold=30|0.2 0.6 0.9|0.4"
  "next group, UGAL|ugal 3 bad_dragon|--set routing.algorithm=dragonfly_ugal --set router.vcs=3 --set routing.dragonfly_ugal.threshold=30 --set traffic.pattern=group_shift|0.1 0.3 0.5|0.3"
)

# One point: BookSim and xnet one after the other, timed; writes $work/N.row.
run_point() {
  local n=$1 name=$2 bs=$3 overrides=$4 load=$5 routing vcs traffic
  read -r routing vcs traffic <<<"$bs"
  local d="$work/$n"
  mkdir -p "$d"
  sed -e "s/@LOAD@/$load/" -e "s/@ROUTING@/$routing/" -e "s/@VCS@/$vcs/" \
    -e "s/@TRAFFIC@/$traffic/" -e "s/@SAMPLE_PERIOD@/$sample/" \
    "$val/dragonfly-4-8-4-booksim.cfg.in" >"$d/booksim.cfg"
  local t0 t1 t2
  t0=$(date +%s.%N)
  # BookSim exits with 255 after a converged run and 0 after an unstable one
  # (main.cpp:186), so the status says nothing: the overall section does.
  (cd "$d" && "$booksim" booksim.cfg >booksim.out 2>&1) || true
  if ! grep -q "Overall Traffic Statistics" "$d/booksim.out"; then
    # Latency mode gave up (average latency over latency_thres = 500, or no convergence):
    # past saturation. Throughput mode measures the accepted rate there (and the latency
    # of the measured packets delivered, without draining, as xnet's figures).
    (cd "$d" && "$booksim" booksim.cfg sim_type=throughput >booksim-thr.out 2>&1) || true
  fi
  t1=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$xnet" run "$val/dragonfly-4-8-4-booksim.toml" $overrides --set "traffic.load=$load" \
    --set "router.output_buffer=$output_buffer" \
    --set "simulation.cycles=$((6 * sample))" --set "simulation.warmup=$((3 * sample))" \
    -t 1 -q -o "$d/xnet.h5"
  t2=$(date +%s.%N)
  $py - "$d" "$name" "$load" "$t0" "$t1" "$t2" >"$d/row" <<'PY'
import os, re, sys, h5py
d, name, load = sys.argv[1:4]
t0, t1, t2 = map(float, sys.argv[4:7])
head = "====== Overall Traffic Statistics ======"
text = open(f"{d}/booksim.out").read()
stable = head in text
flag_b = ""
if not stable:
    # Unstable in latency mode: the throughput-mode rerun's overall section if it has
    # one (flag ‡), else the last sample period printed before BookSim gave up (flag †).
    thr = open(f"{d}/booksim-thr.out").read() if os.path.exists(f"{d}/booksim-thr.out") else ""
    if head in thr:
        text, stable, flag_b = thr, True, " ‡"
    else:
        flag_b = " †"
part = text.split(head)[-1] if stable else text
def last(pattern):
    m = re.findall(pattern, part)
    return float(m[-1]) if m else float("nan")
bs = {
    "accepted": last(r"Accepted flit rate average\s*=\s*([-0-9.e]+)"),
    "plat": last(r"Packet latency average = ([-0-9.e]+)"),
    "nlat": last(r"Network latency average = ([-0-9.e]+)"),
    # BookSim counts a hop at every switch traversal (iq_router.cpp:1079): routers
    # traversed, one more than xnet's switch-to-switch links. Only the overall section
    # prints it.
    "hops": last(r"Hops average = ([-0-9.e]+)") - 1,
}
with h5py.File(f"{d}/xnet.h5") as f:
    s = f["summary"][0]
xn = {
    "accepted": float(s["accepted_load"]),
    "plat": float(s["latency_mean"]),
    "nlat": float(s["network_latency_mean"]),
    "hops": float(s["hops_mean"]),
}
flag_x = " (sat.)" if int(s["saturated"]) else ""
labels = [("accepted", "accepted load"), ("plat", "packet latency"),
          ("nlat", "network latency"), ("hops", "hops")]
for key, label in labels:
    b, x = bs[key], xn[key]
    diff = (x - b) / b * 100 if b == b and b else float("nan")
    bstr = "n/a" if b != b else f"{b:.4g}"
    print(f"| {name} | {load} | {label} | {bstr}{flag_b} | {x:.4g}{flag_x} | {diff:+.1f} % |")
print(f"<!-- {name} {load}: BookSim {t1 - t0:.1f} s, xnet {t2 - t1:.1f} s -->")
PY
}

n=0
for case in "${cases[@]}"; do
  IFS='|' read -r name bs overrides loads quick <<<"$case"
  [ "${QUICK:-0}" = 1 ] && loads=$quick
  for load in $loads; do
    n=$((n + 1))
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    run_point "$n" "$name" "$bs" "$overrides" "$load" &
  done
done
wait

echo "xnet router.output_buffer = $output_buffer"
echo "BookSim2 $(cat "$(dirname "$booksim")/../COMMIT" 2>/dev/null || echo "(commit unknown)"), sample_period $sample; xnet window [$((3 * sample)), $((6 * sample)))"
echo
echo "| case | load | figure | BookSim2 | xnet | difference |"
echo "| --- | --- | --- | --- | --- | --- |"
for i in $(seq 1 "$n"); do grep -v '^<!--' "$work/$i/row" 2>/dev/null || echo "| point $i failed | | | | | |"; done
echo
echo "BookSim hops are its routers traversed minus 1 (iq_router.cpp:1079 counts every switch traversal)."
echo "‡: unstable in BookSim's latency mode (latency_thres 500 or no convergence); figures from its throughput mode."
echo "†: unstable and no throughput-mode figures; the last sample period BookSim printed. (sat.): xnet's backlog grows."
echo
for i in $(seq 1 "$n"); do grep '^<!--' "$work/$i/row" | sed -e 's/^<!-- /run time: /' -e 's/ -->$//'; done
