//! SurePath's escape subnetwork: Duato's condition holds on faulty networks for base
//! routings that deadlock on their own, packets never leave the escape, the SurePath
//! paper's (arXiv:2404.04315) candidates and penalties on its Fig. 2 example, and runs past
//! saturation that deadlock without the escape complete with it.

mod common;
use common::{build, run};
use xnet_models::analysis::analyse;
use xnet_models::config::Config;
use xnet_models::packet::{Packet, RouteState};
use xnet_models::routing::escape::{PENALTY_DOWN, PENALTY_SHORTCUT, PENALTY_UP};
use xnet_models::routing::Candidate;
use xnet_models::sim::{Simulation, Status};

const BASE: &str = r#"
[simulation]
cycles = 3000
warmup = 500
seed = 3
watchdog = 500
[topology]
TOPOLOGY
endpoints_per_switch = 2
[router]
vcs = 2
packet_size = 4
input_buffer = 8
output_buffer = 4
[routing]
algorithm = "minimal"
vc_policy = "any"
escape_vcs = 1
[traffic]
pattern = "uniform"
load = 1.0
"#;

const FAULTY_TORUS: &str = "kind = \"torus\"\nsides = [6, 6]\nfailed_links = 4\nfault_seed = 9";
const FAULTY_RRG: &str =
    "kind = \"random_regular\"\nswitches = 32\ndegree = 4\nfailed_links = 3\nfault_seed = 4";
const HYPERX: &str = "kind = \"hyperx\"\nsides = [4, 4]";

fn sim(net: &str, overrides: &[&str]) -> Simulation {
    build(&BASE.replace("TOPOLOGY", net), overrides)
}

#[test]
fn the_escape_makes_cyclic_base_routings_deadlock_free_per_duato() {
    for net in [FAULTY_TORUS, FAULTY_RRG] {
        for (algo, policy) in [("minimal", "any"), ("valiant", "any"), ("allpath", "any")] {
            let a = format!("routing.algorithm=\"{algo}\"");
            let p = format!("routing.vc_policy=\"{policy}\"");
            let without = analyse(&sim(net, &[&a, &p, "routing.escape_vcs=0"]));
            assert!(!without.acyclic, "{algo}/{policy} without escape must be cyclic on {}", without.network);
            let s = sim(net, &[&a, &p]);
            let r = analyse(&s);
            assert_eq!(r.escape_vcs, 1);
            assert!(r.acyclic, "{algo}/{policy} + escape on {}: escape cycle {:?}", r.network, r.cycle);
            assert!(!r.full_cdg_acyclic, "the routing VCs alone are cyclic");
            assert_eq!(r.escape_back_dependencies, 0);
            assert_eq!(r.unreachable_pairs, 0, "{algo} on {}: {:?}", r.network, r.unreachable);
            assert_eq!(r.vcs_used, 2);
        }
    }
}

#[test]
fn a_ladder_that_runs_out_forces_packets_into_the_escape() {
    // The ladder would need the diameter in VCs; with one routing VC every packet is forced
    // into the escape after its first hop, and that is still deadlock-free.
    let s = sim(FAULTY_RRG, &["routing.vc_policy=\"ladder\""]);
    let r = analyse(&s);
    assert!(r.acyclic && r.unreachable_pairs == 0, "{:?} {:?}", r.cycle, r.unreachable);
    // Without the escape the same configuration is refused.
    let e = Config::parse(
        &BASE.replace("TOPOLOGY", FAULTY_RRG),
        &["routing.vc_policy=\"ladder\"".into(), "routing.escape_vcs=0".into()],
    )
    .and_then(Simulation::build)
    .err()
    .expect("refused")
    .to_string();
    assert!(e.contains("router.vcs") && e.contains("ladder"), "{e}");
}

#[test]
fn runs_that_deadlock_without_the_escape_complete_with_it() {
    for net in [FAULTY_TORUS, FAULTY_RRG] {
        let without = run(&sim(net, &["routing.escape_vcs=0"]), 2);
        assert_eq!(without.status, Status::Deadlock, "minimal/any without escape on {net}");
        let mut s = sim(net, &[]);
        s.record_deliveries = true;
        let r = run(&s, 2);
        assert_eq!(r.status, Status::Completed, "with escape on {}", s.net.name);
        assert!(r.summary.accepted_load > 0.05, "{:?}", r.summary);
        assert_eq!(r.summary.generated_total, r.summary.delivered_total + r.resident_end + r.on_wires_end);
        assert!(r.deliveries.iter().all(|d| d.received_by == d.dst));
    }
}

fn escape_candidates(s: &Simulation, at: u32, dst: u32, packet: &Packet) -> Vec<Candidate> {
    let mut out = Vec::new();
    s.escape().expect("escape").candidates(at, dst, packet, &mut out);
    out
}

fn neighbour(s: &Simulation, at: u32, c: &Candidate) -> u32 {
    s.net.neighbours(at).find(|&(p, _)| p == c.port).expect("network port").1
}

#[test]
fn candidates_and_penalties_follow_the_seeds_hyperx_example() {
    // The SurePath paper's Fig. 2: a 4x4 HyperX rooted at (0,0); switch (x, y) has id x + 4y.
    let s = sim(HYPERX, &["routing.escape_root=0", "traffic.load=0.1"]);
    let esc = s.escape().expect("escape");
    assert_eq!(esc.root(), 0);
    let id = |x: u32, y: u32| x + 4 * y;
    let p = Packet::new(0, 0, 0, 4, 0);
    // (1,0) and (2,0) are at Up/Down distance 2 (one up, one down); their link is horizontal.
    assert_eq!(esc.distance(id(1, 0), id(2, 0), false), 2);
    // From (0,0) to (1,1): two Up/Down routes, both first hops are down links.
    let c = escape_candidates(&s, id(0, 0), id(1, 1), &p);
    let mut next: Vec<(u32, u16)> = c.iter().map(|c| (neighbour(&s, id(0, 0), c), c.penalty)).collect();
    next.sort();
    assert_eq!(next, vec![(id(1, 0), PENALTY_DOWN), (id(0, 1), PENALTY_DOWN)]);
    assert!(c.iter().all(|c| c.vc == 1), "escape candidates use the escape VC");
    // From (0,3) to (0,1): Up/Down distance 2; the horizontal link straight there reduces
    // it by 2 (penalty 64); (0,3) -> (0,2) reduces nothing and is not offered; going up to
    // the root is.
    assert_eq!(esc.distance(id(0, 3), id(0, 1), false), 2);
    let c = escape_candidates(&s, id(0, 3), id(0, 1), &p);
    let next: Vec<(u32, u16)> = c.iter().map(|c| (neighbour(&s, id(0, 3), c), c.penalty)).collect();
    assert!(next.contains(&(id(0, 1), PENALTY_SHORTCUT[1])), "{next:?}");
    assert!(next.contains(&(id(0, 0), PENALTY_UP)), "{next:?}");
    assert!(!next.iter().any(|&(n, _)| n == id(0, 2)), "{next:?}");
    // The paper's own example, (0,1) to (0,3), would be a shortcut to a larger id: not
    // offered (see the module's deviation note); the packet goes up instead.
    let c = escape_candidates(&s, id(0, 1), id(0, 3), &p);
    let next: Vec<(u32, u16)> = c.iter().map(|c| (neighbour(&s, id(0, 1), c), c.penalty)).collect();
    assert_eq!(next, vec![(id(0, 0), PENALTY_UP)]);
    // After going down, a packet in the escape never goes up nor takes a shortcut.
    let mut down = p;
    down.vc = 1;
    down.route = RouteState { phase: 1, ..RouteState::default() };
    let c = escape_candidates(&s, id(1, 0), id(1, 1), &down);
    assert!(c.iter().all(|c| c.penalty == PENALTY_DOWN), "{c:?}");
    assert_eq!(c.len(), 1);
}

#[test]
fn bad_escape_settings_are_refused_naming_the_key() {
    let text = BASE.replace("TOPOLOGY", HYPERX);
    for (o, key) in [
        (vec!["routing.escape_vcs=2"], "routing.escape_vcs"),
        (vec!["routing.selection=\"first\""], "routing.selection"),
        (vec!["routing.escape_root=99"], "routing.escape_root"),
    ] {
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        let e = Config::parse(&text, &o).and_then(Simulation::build).err().expect("refused");
        assert_eq!(e.key, key, "{e}");
    }
}

/// An escape subnetwork that cannot run on the network (Up/Down routes over 254 hops on a
/// line of 300 switches) names `routing.escape_vcs`: the routing itself runs there.
#[test]
fn an_escape_the_network_is_too_long_for_names_routing_escape_vcs() {
    let text = BASE.replace("TOPOLOGY", "kind = \"mesh\"\nsides = [300]");
    let o = ["routing.escape_root=0".to_string()];
    let e = Config::parse(&text, &o).and_then(Simulation::build).err().expect("refused");
    assert_eq!(e.key, "routing.escape_vcs", "{e}");
    assert!(e.message.contains("escape subnetwork (Up/Down)") && e.message.contains("254 hops"), "{e}");
}

#[test]
fn shortcut_cycles_of_the_unrestricted_escape_do_not_occur() {
    // Shortcuts in both directions close a cycle of escape channels on these networks
    // (on the 4x4 HyperX: (1,1) -> (2,1) -> (2,2) -> (1,2) -> (1,1), found by the
    // verifier); with shortcuts towards smaller ids only, Duato's condition holds.
    for net in [HYPERX, "kind = \"torus\"\nsides = [5, 3]"] {
        let r = analyse(&sim(net, &["routing.escape_root=0", "traffic.load=0.1"]));
        assert!(r.acyclic, "{}: {:?}", r.network, r.cycle);
        assert_eq!(r.unreachable_pairs, 0);
    }
}

#[test]
fn the_upward_rule_of_the_seeds_simulator_offers_shortcuts_both_ways_until_the_destination_is_below() {
    // The 4x4 HyperX rooted at (0,0); switch (x, y) has id x + 4y.
    let id = |x: u32, y: u32| x + 4 * y;
    let s =
        sim(HYPERX, &["routing.escape_root=0", "routing.escape_shortcuts=\"upward\"", "traffic.load=0.1"]);
    let p = Packet::new(0, 0, 0, 4, 0);
    let next = |at: u32, dst: u32| -> Vec<(u32, u16)> {
        escape_candidates(&s, at, dst, &p).iter().map(|c| (neighbour(&s, at, c), c.penalty)).collect()
    };
    // The paper's example, (0,1) to (0,3): the shortcut to the larger id is offered now.
    assert!(next(id(0, 1), id(0, 3)).contains(&(id(0, 3), PENALTY_SHORTCUT[1])));
    // After going down, still no shortcut (the destination is below by then).
    let mut down = p;
    down.vc = 1;
    down.route = RouteState { phase: 1, ..RouteState::default() };
    let c = escape_candidates(&s, id(1, 0), id(1, 1), &down);
    assert!(c.iter().all(|c| c.penalty == PENALTY_DOWN), "{c:?}");
    // Its escape channels close the square of shortcuts at level 2 that the two-way rule
    // also closes: (1,1) -> (2,1) -> (2,2) -> (1,2) -> (1,1), each pair of consecutive
    // shortcuts taken by a packet between opposite corners. The verifier reports it.
    let r = analyse(&s);
    assert!(!r.acyclic);
    let switches: Vec<u32> = r.cycle.iter().map(|c| c.switch).collect();
    for x in [id(1, 1), id(2, 1), id(2, 2), id(1, 2)] {
        assert!(switches.contains(&x), "{:?}", r.cycle);
    }
}

#[test]
fn a_fault_shape_roots_the_escape_among_its_faults_and_stays_deadlock_free() {
    // The SurePath paper's (Camarero et al., FTXS'24) Star on a 3D HyperX of side 4 (three K_3 through switch 0): the
    // root keeps 3 of its 9 links, and the escape is rooted there, as the paper roots it
    // among the faults.
    let star = "kind = \"hyperx\"\nsides = [4, 4, 4]\nfault_shape = \"star\"\nfault_size = 3";
    for algorithm in ["minimal", "allpath"] {
        let s = sim(star, &[&format!("routing.algorithm=\"{algorithm}\"")]);
        assert_eq!(s.net.failed_links, 9);
        assert_eq!(s.net.neighbours(0).count(), 3);
        assert_eq!(s.escape().expect("an escape").root(), 0);
        let r = analyse(&s);
        assert!(r.acyclic && r.escape_back_dependencies == 0, "{algorithm}: {:?}", r.cycle);
        assert_eq!(r.unreachable_pairs, 0);
        assert_eq!(run(&s, 2).status, Status::Completed, "{algorithm}");
    }
    // An explicit root wins.
    let s = sim(star, &["routing.escape_root=21"]);
    assert_eq!(s.escape().expect("an escape").root(), 21);
}
