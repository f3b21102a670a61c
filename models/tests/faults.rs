//! Networks with failed links: table-based routings route around them, the verifier finds
//! their routes deadlock-free, and routings that follow the intact shape refuse them.

mod common;
use common::{build, run};
use xnet_models::analysis::analyse;
use xnet_models::config::Config;
use xnet_models::sim::{Simulation, Status};

const MESH: &str = r#"
[simulation]
cycles = 3000
warmup = 500
[topology]
kind = "mesh"
sides = [8, 8]
endpoints_per_switch = 1
failed_links = 6          # about 5 % of the 112 links
[router]
vcs = 1
packet_size = 4
input_buffer = 16
output_buffer = 8
[routing]
algorithm = "up_down"
[traffic]
pattern = "uniform"
load = 1.0
"#;

#[test]
fn up_down_on_a_faulty_mesh_is_verified_deadlock_free_and_runs_past_saturation() {
    let mut sim = build(MESH, &[]);
    assert_eq!(sim.net.failed_links, 6);
    assert_eq!(sim.net.num_network_links(), 2 * (112 - 6));
    assert!(sim.net.name.ends_with("with 6 failed links"), "{}", sim.net.name);
    let report = analyse(&sim);
    assert!(report.acyclic, "{report:?}");
    assert_eq!(report.unreachable_pairs, 0);
    sim.record_deliveries = true;
    let r = run(&sim, 2);
    assert_eq!(r.status, Status::Completed);
    assert!(r.summary.accepted_load > 0.05, "{:?}", r.summary);
    assert_eq!(r.summary.generated_total, r.summary.delivered_total + r.resident_end + r.on_wires_end);
    assert!(r.deliveries.iter().all(|d| d.received_by == d.dst));
}

#[test]
fn minimal_routing_avoids_failed_links_on_a_random_regular_graph() {
    let text = r#"
        [simulation]
        cycles = 3000
        [topology]
        kind = "random_regular"
        switches = 40
        degree = 6
        endpoints_per_switch = 2
        failed_links = 12
        fault_seed = 5
        [router]
        vcs = 5
        packet_size = 4
        input_buffer = 16
        output_buffer = 8
        [routing]
        algorithm = "minimal"
        [traffic]
        pattern = "uniform"
        load = 0.3
    "#;
    let sim = build(text, &[]);
    let r = run(&sim, 2);
    assert_eq!(r.status, Status::Completed);
    assert!((r.summary.accepted_load - r.summary.offered_load).abs() < 0.03, "{:?}", r.summary);
    // No phit ever crossed a failed link: every link with traffic is connected.
    for l in &r.links {
        if l.phits > 0 {
            assert!(sim.net.neighbours(l.switch).any(|(q, n)| q == l.port && n == l.peer));
        }
    }
    assert!(analyse(&sim).acyclic);
}

#[test]
fn algorithmic_routings_refuse_faulty_networks_and_bad_fault_counts_are_named() {
    let dor = MESH.replace("up_down", "dor");
    let e = Simulation::build(Config::parse(&dor, &[]).unwrap()).err().expect("must be refused").to_string();
    assert!(e.contains("routing.algorithm") && e.contains("failed links"), "{e}");
    let e = Config::parse(MESH, &["topology.failed_links=100".into()])
        .and_then(Simulation::build)
        .err()
        .expect("must be refused")
        .to_string();
    assert!(e.contains("topology.failed_links"), "{e}");
    let e = Config::parse(MESH, &["topology.failed_links=-1".into()])
        .and_then(Simulation::build)
        .err()
        .expect("must be refused")
        .to_string();
    assert!(e.contains("topology.failed_links"), "{e}");
}
