#!/usr/bin/env bash
# Matched runs of xnet and CAMINOS 0.6.3 (the SurePath paper's simulator), printed as the
# Markdown table of docs/validation.md. Not part of CI: it installs CAMINOS on first use
# (`cargo install`, about 4 minutes on 2 cores) into .peers/caminos (or uses $CAMINOS).
#
#   scripts/validation/validate-caminos.sh
#   CASES=PAR scripts/validation/validate-caminos.sh    # only the cases whose name has "PAR"
#
# Each case is a CAMINOS config template in scripts/validation/ (LOAD filled in) and the
# xnet config (and overrides) that match it, both 5,000 cycles with 1,000 of warm-up.
set -euo pipefail
cd "$(dirname "$0")/../.."
caminos=${CAMINOS:-.peers/caminos/bin/caminos}
if [ ! -x "$caminos" ]; then
  echo "installing CAMINOS 0.6.3 into .peers/caminos ..." >&2
  cargo install caminos --version 0.6.3 --locked --root .peers/caminos -j 2 >&2
fi
caminos=$(realpath "$caminos")
cargo build --release -p xnet -q
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | CAMINOS template | xnet config | xnet overrides | loads
cases=(
  "HyperX 8x8, uniform, minimal|hyperx-8x8.cfg.in|scripts/validation/hyperx-8x8.toml||0.3 0.7 0.9"
  "HyperX 4x4x4, uniform, minimal|hyperx-4x4x4.cfg.in|scripts/validation/hyperx-4x4x4.toml|--set router.vcs=3|0.3 0.9"
  "Dragonfly 4-8-4, uniform, minimal|dragonfly-4-8-4.cfg.in|scripts/validation/dragonfly-4-8-4.toml||0.2 0.4 0.8"
  "Dragonfly 4-8-4, shift by a group, minimal|dragonfly-4-8-4-shift.cfg.in|scripts/validation/dragonfly-4-8-4.toml|--set traffic.pattern=group_shift|0.1 0.3 0.9"
  "Dragonfly 4-8-4, uniform, PAR|dragonfly-4-8-4-par.cfg.in|scripts/validation/dragonfly-4-8-4.toml|--set routing.algorithm=dragonfly_par --set routing.vc_policy=routing --set router.vcs=5|0.1 0.3 0.5"
  "Dragonfly 4-8-4, shift by a group, PAR|dragonfly-4-8-4-par-shift.cfg.in|scripts/validation/dragonfly-4-8-4.toml|--set routing.algorithm=dragonfly_par --set routing.vc_policy=routing --set router.vcs=5 --set traffic.pattern=group_shift|0.1 0.2 0.3"
  "Dragonfly 4-8-4, uniform, PAR to a router|dragonfly-4-8-4-par.cfg.in|scripts/validation/dragonfly-4-8-4.toml|--set routing.algorithm=dragonfly_par --set routing.dragonfly_par.intermediate=router --set routing.vc_policy=routing --set router.vcs=5|0.1 0.3 0.5"
  "Dragonfly 4-8-4, shift by a group, PAR to a router|dragonfly-4-8-4-par-shift.cfg.in|scripts/validation/dragonfly-4-8-4.toml|--set routing.algorithm=dragonfly_par --set routing.dragonfly_par.intermediate=router --set routing.vc_policy=routing --set router.vcs=5 --set traffic.pattern=group_shift|0.1 0.2 0.3"
  "Dragonfly 4-8-4, uniform, PAR to a router with fallback|dragonfly-4-8-4-par.cfg.in|scripts/validation/dragonfly-4-8-4.toml|--set routing.algorithm=dragonfly_par --set routing.dragonfly_par.intermediate=router --set routing.dragonfly_par.fallback=true --set routing.vc_policy=routing --set router.vcs=5|0.1 0.3 0.5"
  "Dragonfly 4-8-4, shift by a group, PAR to a router with fallback|dragonfly-4-8-4-par-shift.cfg.in|scripts/validation/dragonfly-4-8-4.toml|--set routing.algorithm=dragonfly_par --set routing.dragonfly_par.intermediate=router --set routing.dragonfly_par.fallback=true --set routing.vc_policy=routing --set router.vcs=5 --set traffic.pattern=group_shift|0.1 0.2 0.3"
)

echo "| case | load | figure | CAMINOS | xnet | difference |"
echo "| --- | --- | --- | --- | --- | --- |"
for case in "${cases[@]}"; do
  IFS='|' read -r name template config overrides loads <<<"$case"
  [[ "$name" == *"${CASES:-}"* ]] || continue
  for load in $loads; do
    sed "s/LOAD/$load/" "scripts/validation/$template" >"$work/case.cfg"
    (cd "$work" && "$caminos" case.cfg >caminos.out 2>&1) || { cat "$work/caminos.out" >&2; exit 1; }
    # shellcheck disable=SC2086
    target/release/xnet run "$config" $overrides --set "traffic.load=$load" -q -o "$work/xnet.h5"
    $py - "$work/caminos.out" "$work/xnet.h5" "$name" "$load" <<'PY'
import re, sys, h5py
text = open(sys.argv[1]).read()
def caminos(key):
    m = re.search(r"\b%s:\s*([-0-9.e]+)" % key, text)
    return float(m.group(1)) if m else float("nan")
with h5py.File(sys.argv[2]) as f:
    s = f["summary"][0]
# CAMINOS's packet network delay runs from the head entering the first router, xnet's
# from the head leaving the endpoint: one terminal link (1 cycle) apart.
rows = [
    ("accepted load", caminos("accepted_load"), float(s["accepted_load"])),
    ("message latency", caminos("average_message_delay"), float(s["latency_mean"])),
    ("network latency", caminos("average_packet_network_delay"), float(s["network_latency_mean"]) - 1),
    ("hops", caminos("average_packet_hops"), float(s["hops_mean"])),
]
for figure, peer, mine in rows:
    diff = (mine - peer) / peer * 100 if peer else float("nan")
    print(f"| {sys.argv[3]} | {sys.argv[4]} | {figure} | {peer:.4g} | {mine:.4g} | {diff:+.1f} % |")
PY
  done
done
