#!/usr/bin/env python3
"""Matched runs of the SurePath paper's (Camarero et al., FTXS'24) mechanisms in CAMINOS 0.6.3 (the paper's own
simulator) and in xnet, on the paper's 2D HyperX (side 16, 16 servers per switch) at offered
load 1.0. Not part of CI. CAMINOS is installed on first use by scripts/validation/validate-caminos.sh
(or give its path in $CAMINOS).

CAMINOS side, built from its documented routings and VC policies (caminos-lib 0.6.3):
  Minimal    Shortest, WideHops{width: 2}
  OmniWAR    OmniDimensionalDeroute{allowed_deroutes: 2, include_labels}, Hops (ladder),
             deroute label 1 -> 64 phits
  Polarized  Polarized{include_labels}, Hops, labels 0/1/2 -> 0/64/80 phits
  OmniSP / PolSP  Sum{policy: EscapeToSecond} of those route sets on VCs 0-2 and
             UpDownStar{root: 0, branch_crossings_upwards, labels up 112, down 96,
             shortcuts 80/64/48} on VC 3
and every mechanism selects by the paper's rule: label + the requested VC's occupancy + the
port's occupancy (output buffer and consumed credits), then the lowest, ties at random.
xnet side: scripts/studies/study_surepath_seed.py's settings with router.preset = "caminos"
(the Basic router: no pipeline delay, per-VC crossbar, random greedy allocation) and
routing.escape_shortcuts = "upward" (CAMINOS's rule).

Usage: scripts/validation/validate_caminos_surepath.py [--cycles N] [--patterns P ...] [--mechanisms M ...]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

# The mechanisms' settings are those of the study script (scripts/studies/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "studies"))
import study_surepath_seed as study  # noqa: E402

ROOT = study.ROOT
CAMINOS = os.environ.get("CAMINOS", os.path.join(ROOT, ".peers", "caminos", "bin", "caminos"))

SELECTION = """
        OccupancyFunction{label_coefficient: 1, occupancy_coefficient: 1, product_coefficient: 0,
            constant_coefficient: 0, use_internal_space: true, use_neighbour_space: true, aggregate: true},
        OccupancyFunction{label_coefficient: 1, occupancy_coefficient: 1, product_coefficient: 0,
            constant_coefficient: 0, use_internal_space: true, use_neighbour_space: true, aggregate: false},
        LowestLabel, Random"""

OMNI = "OmniDimensionalDeroute{allowed_deroutes: 2, include_labels: true}"
POLARIZED = "Polarized{include_labels: true, strong: false, panic_on_empty: false}"
OMNI_PENALTY = "LabelTransform{multiplier: 64, summand: 0}"
POLARIZED_PENALTY = "VecLabel{label_vector: [0, 64, 80]}"


def escape():
    return ("UpDownStar{root: 0, branch_crossings_upwards: true, label_up: 112, label_down: 96, "
            "label_horizontal_vec: [80, 64, 48], label_horizontal_otherwise: 48}")


def caminos_mechanism(name):
    """(routing, VC policies before the selection) of a mechanism on 4 VCs."""
    if name == "Minimal":
        return "Shortest", "EnforceFlowControl, WideHops{width: 2},"
    if name == "OmniWAR":
        return OMNI, f"EnforceFlowControl, Hops, {OMNI_PENALTY},"
    if name == "Polarized":
        return POLARIZED, f"EnforceFlowControl, Hops, {POLARIZED_PENALTY},"
    base, penalty = (OMNI, OMNI_PENALTY) if name == "OmniSP" else (POLARIZED, POLARIZED_PENALTY)
    # The penalty maps only the routing VCs' labels; the escape's labels are phits already.
    routing = (f"Sum{{policy: EscapeToSecond, first_routing: {base}, second_routing: {escape()}, "
               "first_allowed_virtual_channels: [0, 1, 2], second_allowed_virtual_channels: [3]}")
    policies = (f"EnforceFlowControl, MapEntryVC{{vc_to_policy: [Identity, Identity, Identity, Identity]}}, "
                f"Either{{policies: [Chain{{policies: [ArgumentVC{{allowed: [0, 1, 2]}}, {penalty}]}}, "
                "ArgumentVC{allowed: [3]}]},")
    return routing, policies


PATTERNS = {
    "uniform": "Uniform",
    "random server permutation": "RandomPermutation",
    # (w, x, y) -> (~y, ~x, ~w), w the server's index at its switch.
    "dimension complement reverse":
        "CartesianTransform{sides: [16, 16, 16], permute: [2, 1, 0], complement: [true, true, true]}",
}


def caminos_config(name, pattern, cycles):
    routing, policies = caminos_mechanism(name)
    return f"""Configuration
{{
    random_seed: 1,
    warmup: {cycles // 3},
    measured: {cycles - cycles // 3},
    topology: Hamming {{ sides: [16, 16], servers_per_router: 16 }},
    traffic: HomogeneousTraffic {{ pattern: {PATTERNS[pattern]}, servers: 4096, load: 1.0, message_size: 16 }},
    maximum_packet_size: 16,
    router: Basic
    {{
        virtual_channels: 4,
        virtual_channel_policies: [ {policies} {SELECTION} ],
        delay: 0,
        buffer_size: 128,
        bubble: false,
        flit_size: 16,
        intransit_priority: false,
        allow_request_busy_port: true,
        output_buffer_size: 64,
        output_prioritize_lowest_label: false,
    }},
    routing: {routing},
    link_classes: [ LinkClass{{delay: 1}}, LinkClass{{delay: 1}}, LinkClass{{delay: 1}} ],
}}
"""


def run_caminos(name, pattern, cycles, work):
    path = os.path.join(work, "case.cfg")
    with open(path, "w") as f:
        f.write(caminos_config(name, pattern, cycles))
    done = subprocess.run([CAMINOS, "case.cfg"], cwd=work, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"CAMINOS failed on {name}, {pattern}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")

    def value(key):
        m = re.search(r"\b%s:\s*([-0-9.e]+)" % key, done.stdout)
        return float(m.group(1)) if m else float("nan")
    return value("accepted_load"), value("average_message_delay"), value("server_generation_jain_index")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=3000)
    parser.add_argument("--patterns", nargs="*", default=list(PATTERNS))
    parser.add_argument("--mechanisms", nargs="*", default=["Minimal", "OmniWAR", "Polarized", "OmniSP", "PolSP"])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    study.SHORTCUTS = "upward"
    if not os.access(CAMINOS, os.X_OK):
        sys.exit(f"no CAMINOS at {CAMINOS}: run scripts/validation/validate-caminos.sh once, or set $CAMINOS")
    print("| pattern | mechanism | CAMINOS accepted | xnet accepted | CAMINOS latency | xnet latency |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as work:
        for pattern in args.patterns:
            for name in args.mechanisms:
                peer = run_caminos(name, pattern, args.cycles, work)
                settings = {**study.common(args.cycles), **study.NETWORKS["2D"], **study.mechanisms(2)[name],
                            "traffic.pattern": study.PATTERNS[pattern], "router.preset": '"caminos"',
                            "router.router_delay": 0, "router.speedup": 1, "router.crossbar": '"vc"',
                            "router.source_queue": 20}
                mine = study.run(settings, os.path.join(work, "x.h5"), args.threads)
                print(f"| {pattern} | {name} | {peer[0]:.3f} | {float(mine['accepted_load']):.3f} | "
                      f"{peer[1]:.0f} | {float(mine['latency_mean']):.0f} |", flush=True)


if __name__ == "__main__":
    main()
