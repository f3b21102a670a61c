#!/usr/bin/env bash
# Pascual and Navaridas's (ICS'18) comparison (Pascual, Navaridas et al., ICS'18) on its two networks:
# RRG(876, 17 + 6) and Dragonfly(6,12,6), uniform and adversarial (group shift) traffic, at
# maximum injection (offered load 1.0): DAVC F_N / F_P / F_NP over shortest path (SP),
# ECMP, ALLPATH(1) and Valiant, against the baselines (Dally's VC scheme on the Dragonfly,
# SPDA with 1 to 16 VCs, the ladder). Prints a Markdown table: accepted load, VCs used,
# status. VCs per scheme = what the configuration check requires (longest route).
# Not a study file (configs/studies/): the VCs change with the routing and the network, and
# Dally's schemes exist only on the Dragonfly, so the runs are not a grid; and "VCs used"
# reads each run's vc_phits, which the package's table does not carry.
# Usage: scripts/studies/study-davc.sh [cycles] [threads]   (defaults 3000 and 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
cycles=${1:-3000}
threads=${2:-2}
cargo build --release -p xnet -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
common=(--set "simulation.cycles=$cycles" --set "simulation.warmup=$((cycles / 3))" --set traffic.load=1.0 -q -t "$threads")

run() { # name config traffic vcs routing-settings...
  local label=$1 cfg=$2 traffic=$3 vcs=$4; shift 4
  local f="$out/r.h5" code=0
  target/release/xnet run "configs/$cfg.toml" "${common[@]}" --set "traffic.pattern=$traffic" \
    --set "router.vcs=$vcs" "$@" -o "$f" >/dev/null 2>"$out/err" || code=$?
  if [ "$code" -ne 0 ] && [ "$code" -ne 3 ]; then
    echo "| $cfg | $traffic | $label | - | - | error: $(head -c 120 "$out/err" | tr '\n|' '  ') |"
    return
  fi
  $py - "$f" "$cfg" "$traffic" "$label" "$vcs" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1]); p = f["points/000"]
used = sum(1 for x in p["vc_phits"][:] if x > 0)
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {p.attrs['accepted_load']:.3f} | {used} of {sys.argv[5]} | {p.attrs['status']} |")
PY
}

echo "| network | traffic | scheme | accepted | VCs used | status |"
echo "| --- | --- | --- | --- | --- | --- |"
for traffic in uniform group_shift; do
  for cfg in davc-rrg davc-dragonfly; do
    if [ "$cfg" = davc-rrg ]; then vsp=4; vall=5; vval=8; else vsp=3; vall=4; vval=6; fi
    for policy in davc_n davc_p davc_np; do
      run "SP + $policy" "$cfg" "$traffic" $vsp --set routing.algorithm=shortest_path --set routing.vc_policy=$policy
      run "ECMP + $policy" "$cfg" "$traffic" $vsp --set routing.algorithm=minimal --set routing.selection=random --set routing.vc_policy=$policy
      run "ALLPATH(1) + $policy" "$cfg" "$traffic" $vall --set routing.algorithm=allpath --set routing.selection=random --set routing.vc_policy=$policy
      run "Valiant + $policy" "$cfg" "$traffic" $vval --set routing.algorithm=valiant --set routing.vc_policy=$policy
    done
    run "ECMP + ladder" "$cfg" "$traffic" $vsp --set routing.algorithm=minimal --set routing.selection=random --set routing.vc_policy=ladder
    if [ "$cfg" = davc-dragonfly ]; then
      run "Dragonfly MIN + Dally" "$cfg" "$traffic" 2 --set routing.algorithm=dragonfly_min --set routing.vc_policy=routing
      run "Dragonfly Valiant + Dally" "$cfg" "$traffic" 3 --set routing.algorithm=dragonfly_valiant --set routing.vc_policy=routing
    fi
    for v in 1 2 4 8 16; do
      run "SPDA, $v VCs" "$cfg" "$traffic" $v --set routing.algorithm=spda --set routing.vc_policy=routing
    done
  done
done
