//! Nue routing: deadlock-free and complete with any number of layers (the claim of Domke,
//! Hoefler, Matsuoka, HPDC'16), also on faulty networks; layers = VCs; routes close to
//! minimal when the layers allow; runs past saturation without deadlock.

mod common;
use common::{build, run};
use xnet_models::analysis::analyse;
use xnet_models::config::Config;
use xnet_models::routing::layered::Destinations;
use xnet_models::routing::nue::{self, DestinationOrder, EscapeTurns, NueOptions};
use xnet_models::sim::{Simulation, Status};

/// Nue on `layers` layers, a destination per switch, the paper's escape turns.
fn options(layers: usize) -> NueOptions {
    NueOptions {
        layers,
        order: DestinationOrder::Id,
        destinations: Destinations::Switches,
        escape: EscapeTurns::Destinations,
    }
}
const BASE: &str = r#"
[simulation]
cycles = 2000
warmup = 300
seed = 5
[topology]
TOPOLOGY
endpoints_per_switch = 2
[router]
vcs = 4
packet_size = 4
input_buffer = 16
output_buffer = 8
[routing]
algorithm = "nue"
selection = "first"
[traffic]
pattern = "uniform"
load = 1.0
"#;

const FAULTY_TORUS: &str = "kind = \"torus\"\nsides = [6, 6]\nfailed_links = 3\nfault_seed = 11";
const FAULTY_RRG: &str =
    "kind = \"random_regular\"\nswitches = 40\ndegree = 4\nfailed_links = 4\nfault_seed = 2";
const MESH: &str = "kind = \"mesh\"\nsides = [8, 8]";
const RING: &str = "kind = \"torus\"\nsides = [8]";

fn sim(net: &str, overrides: &[&str]) -> Simulation {
    build(&BASE.replace("TOPOLOGY", net), overrides)
}

#[test]
fn every_layer_count_from_1_to_8_is_deadlock_free_and_complete() {
    for net in [FAULTY_TORUS, FAULTY_RRG] {
        for k in 1..=8u8 {
            let vcs = format!("router.vcs={k}");
            let s = sim(net, &[&vcs]);
            assert!(s.net.failed_links > 0);
            assert_eq!(s.routing().vcs_required(), k);
            let r = analyse(&s);
            assert!(r.acyclic, "nue k={k} on {}: cycle {:?}", r.network, r.cycle);
            assert_eq!(r.unreachable_pairs, 0, "nue k={k} on {}: {:?}", r.network, r.unreachable);
            // Every layer holds destinations, and packets never leave their layer.
            assert_eq!(r.vcs_used, k as u32, "nue k={k} on {}", r.network);
            assert_eq!(r.longest_path, s.routing().max_hops(), "nue k={k} on {}", r.network);
        }
    }
}

#[test]
fn one_layer_on_a_ring_breaks_the_cycle_that_minimal_routing_closes() {
    // With one VC, minimal routing on a ring is cyclic; Nue detours instead.
    let s = sim(RING, &["router.vcs=1"]);
    let r = analyse(&s);
    assert!(r.acyclic, "{:?}", r.cycle);
    assert_eq!(r.unreachable_pairs, 0);
    let minimal =
        analyse(&sim(RING, &["routing.algorithm=\"minimal\"", "routing.vc_policy=\"any\"", "router.vcs=1"]));
    assert!(!minimal.acyclic, "minimal routing on a ring with 1 VC must be cyclic");
    assert!(r.average_routing_distance > minimal.average_routing_distance);
    assert!(r.longest_path > 4, "some route must detour: longest {}", r.longest_path);
    // With two layers each layer's destinations are a half ring, still acyclic.
    let r2 = analyse(&sim(RING, &["router.vcs=2"]));
    assert!(r2.acyclic && r2.unreachable_pairs == 0);
}

#[test]
fn on_a_mesh_routes_stay_close_to_minimal_and_search_never_falls_back() {
    let minimal = analyse(&sim(MESH, &["routing.algorithm=\"dor\"", "router.vcs=1"]));
    for k in [1u8, 2, 4] {
        let s = sim(MESH, &[&format!("router.vcs={k}")]);
        let r = analyse(&s);
        assert!(r.acyclic && r.unreachable_pairs == 0);
        // Measured: 6.25 (minimal) for every k; allow 2 % for tie-breaking changes.
        assert!(
            r.average_routing_distance <= minimal.average_routing_distance * 1.02,
            "k={k}: ARD {} vs minimal {}",
            r.average_routing_distance,
            minimal.average_routing_distance
        );
        let endpoint_switch: Vec<u32> = s.net.endpoint_location.iter().map(|&(s, _)| s).collect();
        let (_, stats) = nue::build(&s.net, &endpoint_switch, options(k as usize)).expect("nue");
        assert_eq!(stats.destinations, 64);
        assert_eq!(stats.fallbacks, 0, "k={k}: {stats:?}");
        // The simulation routes each of the 128 endpoints on its own (the default).
        let summary = s.routing().build_summary().expect("nue reports its build");
        assert!(
            summary.starts_with("128 destinations")
                && summary.ends_with("0 destinations routed over the escape tree"),
            "{summary}"
        );
    }
}

#[test]
fn runs_past_saturation_without_deadlock() {
    for net in [FAULTY_TORUS, FAULTY_RRG, RING] {
        for k in [1, 3] {
            let mut s = sim(net, &[&format!("router.vcs={k}")]);
            s.record_deliveries = true;
            let r = run(&s, 2);
            assert_eq!(r.status, Status::Completed, "nue k={k} on {}", s.net.name);
            assert!(r.summary.accepted_load > 0.05, "{:?}", r.summary);
            assert_eq!(
                r.summary.generated_total,
                r.summary.delivered_total + r.resident_end + r.on_wires_end
            );
            assert!(r.deliveries.iter().all(|d| d.received_by == d.dst));
        }
    }
}

#[test]
fn tables_are_deterministic_across_thread_counts() {
    let s = sim(FAULTY_RRG, &["router.vcs=4"]);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| analyse(&sim(FAULTY_RRG, &["router.vcs=4"])));
    let two = analyse(&s);
    assert_eq!(one.link_weights, two.link_weights);
    assert_eq!(one.average_routing_distance, two.average_routing_distance);
}

#[test]
fn both_destination_orders_are_deadlock_free_and_give_different_tables() {
    for net in [FAULTY_TORUS, FAULTY_RRG] {
        let id = analyse(&sim(net, &[]));
        let far = analyse(&sim(net, &["routing.nue.order=\"farthest_first\""]));
        assert!(far.acyclic && far.unreachable_pairs == 0, "{}: {:?}", far.network, far.cycle);
        assert_ne!(id.link_weights, far.link_weights, "the order must shape the routes on {}", far.network);
    }
    let e = Config::parse(&BASE.replace("TOPOLOGY", MESH), &["routing.nue.order=\"random\"".to_string()])
        .expect_err("unknown order refused");
    assert_eq!(e.key, "routing.nue.order", "{e}");
}

/// Nue's layers are its VCs, so a build with no layer left for it names `router.vcs`, the
/// key a user changes (validation keeps a routing at least one VC, so only a direct call
/// gets here).
#[test]
fn too_few_layers_name_router_vcs() {
    let s = sim(MESH, &[]);
    let endpoint_switch: Vec<u32> = s.net.endpoint_location.iter().map(|&(s, _)| s).collect();
    let e = nue::build(&s.net, &endpoint_switch, options(0)).err().expect("no layers refused");
    assert_eq!(e.key, "router.vcs", "{e}");
    assert!(e.to_string().starts_with("router.vcs: nue needs 1 to 255 layers (one VC each), got 0"), "{e}");
}

#[test]
fn zero_vcs_is_refused_naming_the_key() {
    let e = Config::parse(&BASE.replace("TOPOLOGY", MESH), &["router.vcs=0".to_string()])
        .and_then(Simulation::build)
        .err()
        .expect("must be refused")
        .to_string();
    assert!(e.contains("router.vcs"), "{e}");
}
