//! Property tests: on random small topologies with random link faults, every
//! deadlock-avoidance mechanism yields an acyclic channel dependency graph (per the
//! verifier) that reaches every destination, and DAVC never uses more VCs than the
//! longest route.

use proptest::prelude::*;
use xnet_models::analysis::analyse;
use xnet_models::config::Config;
use xnet_models::sim::Simulation;

/// `(routing, vc_policy)` pairs that must be deadlock-free on any connected network.
const MECHANISMS: &[(&str, &str)] = &[
    ("minimal", "ladder"),
    ("shortest_path", "davc_n"),
    ("minimal", "davc_p"),
    ("allpath", "davc_np"),
    ("valiant", "davc_np"),
    ("up_down", "routing"),
    ("spda", "routing"),
    ("dfsssp", "routing"),
    ("lash", "routing"),
    ("mud", "routing"),
    ("tor", "routing"),
    ("lash_tor", "routing"),
    ("nue", "routing"),
];

fn topology() -> impl Strategy<Value = String> {
    prop_oneof![
        (3u32..6, 3u32..6, any::<bool>()).prop_map(|(x, y, wrap)| format!(
            "kind = \"torus\"\nsides = [{x}, {y}]\nwrap = [{wrap}, {wrap}]\nendpoints_per_switch = 1"
        )),
        (10u32..24, 3u32..6, 0u64..1000).prop_map(|(n, d, seed)| {
            let n = if n * d % 2 == 1 { n + 1 } else { n };
            format!("kind = \"random_regular\"\nswitches = {n}\ndegree = {d}\nendpoints_per_switch = 1\nseed = {seed}")
        }),
    ]
}

fn config(topology: &str, faults: u32, fault_seed: u64, routing: &str, policy: &str) -> String {
    format!(
        r#"
[simulation]
cycles = 100
seed = {fault_seed}
[topology]
{topology}
failed_links = {faults}
fault_seed = {fault_seed}
[router]
vcs = 24
packet_size = 1
input_buffer = 1
output_buffer = 1
[routing]
algorithm = "{routing}"
vc_policy = "{policy}"
[traffic]
pattern = "uniform"
load = 0.1
"#
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_mechanism_is_deadlock_free_and_complete_on_faulty_networks(
        topology in topology(),
        faults in 0u32..4,
        fault_seed in 0u64..1000,
    ) {
        for &(routing, policy) in MECHANISMS {
            let text = config(&topology, faults, fault_seed, routing, policy);
            let cfg = Config::parse(&text, &[]).expect("valid config");
            let sim = match Simulation::build(cfg) {
                Ok(sim) => sim,
                // Too many faults for this small network is the only acceptable refusal.
                Err(e) if e.key == "topology.failed_links" => continue,
                Err(e) => panic!("{routing}/{policy} on\n{topology}\nwith {faults} faults: {e}"),
            };
            let r = analyse(&sim);
            prop_assert!(r.acyclic, "{routing}/{policy} cyclic on {}: {:?}", r.network, r.cycle);
            prop_assert_eq!(r.unreachable_pairs, 0, "{}/{} on {}: {:?}", routing, policy, r.network, r.unreachable);
            if policy.starts_with("davc") {
                prop_assert!(r.vcs_used <= sim.routing().max_hops(),
                    "{routing}/{policy} used {} VCs, longest route {}", r.vcs_used, sim.routing().max_hops());
            }
        }
    }
}

fn angara_torus() -> impl Strategy<Value = String> {
    (prop::collection::vec((2u32..6, any::<bool>()), 1..5)).prop_map(|dims| {
        let sides: Vec<String> = dims.iter().map(|d| d.0.to_string()).collect();
        let wrap: Vec<String> = dims.iter().map(|d| d.1.to_string()).collect();
        format!(
            "kind = \"torus\"\nsides = [{}]\nwrap = [{}]\nendpoints_per_switch = 1",
            sides.join(", "),
            wrap.join(", ")
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// The Angara tables on random 1- to 4-D tori/meshes, with and without faults: acyclic,
    /// complete, minimal without faults; with faults they may only refuse by naming
    /// `topology.failed_links`.
    #[test]
    fn angara_tables_are_deadlock_free_and_complete_on_random_tori(
        topology in angara_torus(),
        faults in 0u32..4,
        fault_seed in 0u64..1000,
    ) {
        for routing in ["angara_bfs", "angara_sssp"] {
            let text = config(&topology, faults, fault_seed, routing, "routing");
            let sim = match Simulation::build(Config::parse(&text, &[]).expect("valid config")) {
                Ok(sim) => sim,
                Err(e) if faults > 0 && e.key == "topology.failed_links" => continue,
                Err(e) => panic!("{routing} on\n{topology}\nwith {faults} faults: {e}"),
            };
            let r = analyse(&sim);
            prop_assert!(r.acyclic, "{routing} cyclic on {}: {:?}", r.network, r.cycle);
            prop_assert_eq!(r.unreachable_pairs, 0, "{} on {}: {:?}", routing, r.network, r.unreachable);
            prop_assert!(r.vcs_used <= 2);
            if sim.net.failed_links == 0 {
                let min = analyse(&Simulation::build(Config::parse(&config(&topology, 0, fault_seed, "minimal", "ladder"), &[]).unwrap()).unwrap());
                prop_assert!((r.average_routing_distance - min.average_routing_distance).abs() < 1e-9,
                    "{routing} not minimal on {}", r.network);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Nue is deadlock-free and complete with any number of layers k = 1..8 (the Nue paper's
    /// central claim) and either destination order, on random faulty tori, meshes and
    /// RRGs, and uses at most its layers.
    #[test]
    fn nue_is_deadlock_free_and_complete_for_any_layer_count(
        topology in topology(),
        faults in 0u32..4,
        fault_seed in 0u64..1000,
        k in 1u8..=8,
        farthest_first in any::<bool>(),
    ) {
        let text = config(&topology, faults, fault_seed, "nue", "routing");
        let order = if farthest_first { "farthest_first" } else { "id" };
        let cfg = Config::parse(&text, &[format!("router.vcs={k}"), format!("routing.nue.order={order}")])
            .expect("valid config");
        let sim = match Simulation::build(cfg) {
            Ok(sim) => sim,
            Err(e) if e.key == "topology.failed_links" => return Ok(()),
            Err(e) => panic!("nue k={k} on\n{topology}\nwith {faults} faults: {e}"),
        };
        let r = analyse(&sim);
        prop_assert!(r.acyclic, "nue k={} cyclic on {}: {:?}", k, r.network, r.cycle);
        prop_assert_eq!(r.unreachable_pairs, 0, "nue k={} on {}: {:?}", k, r.network, r.unreachable);
        prop_assert!(r.vcs_used <= k as u32);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// SurePath's escape subnetwork (Up/Down + shortcuts on the last VC) makes base
    /// routings that deadlock on their own safe per Duato on random faulty networks: the
    /// escape dependencies are acyclic, nothing leaves the escape, every routing state is
    /// offered the escape, and every destination is reached.
    #[test]
    fn the_escape_subnetwork_satisfies_duato_on_faulty_networks(
        topology in topology(),
        faults in 0u32..4,
        fault_seed in 0u64..1000,
        base in 0usize..3,
    ) {
        let (routing, policy, vcs) = [("minimal", "any", 2), ("valiant", "any", 2), ("allpath", "ladder", 3)][base];
        let text = config(&topology, faults, fault_seed, routing, policy);
        let overrides = [format!("router.vcs={vcs}"), "routing.escape_vcs=1".to_string()];
        let sim = match Simulation::build(Config::parse(&text, &overrides).expect("valid config")) {
            Ok(sim) => sim,
            Err(e) if e.key == "topology.failed_links" => return Ok(()),
            Err(e) => panic!("{routing}/{policy} + escape on\n{topology}\nwith {faults} faults: {e}"),
        };
        let r = analyse(&sim);
        prop_assert!(r.acyclic, "{}/{} + escape on {}: cycle {:?}, {} back", routing, policy, r.network, r.cycle, r.escape_back_dependencies);
        prop_assert_eq!(r.unreachable_pairs, 0, "{} on {}: {:?}", routing, r.network, r.unreachable);
    }
}
