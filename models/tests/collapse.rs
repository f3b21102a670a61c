//! The verifier's merged states (without the source where the routing does not read it,
//! without the input port where the VC policy does not read it) give the same channel
//! dependency graph and report as the exploration per source and input port, also when
//! routes fail; and the same on any number of threads.

use std::sync::Arc;
use xnet_models::analysis::{analyse_with, dependencies, Options, RoutesReport};
use xnet_models::config::Config;
use xnet_models::packet::{Packet, RouteState};
use xnet_models::rng::Rng;
use xnet_models::routing::{Candidate, LoadView, Reads, Routes, Routing, VcPolicy};
use xnet_models::sim::Simulation;
use xnet_models::topology::{Network, PortTarget, SwitchId};

fn build(topology: &str, routing: &str, vcs: u8, extra: &[&str]) -> Simulation {
    let text = format!(
        "[simulation]\ncycles = 1000\nwarmup = 100\nseed = 5\n[topology]\n{topology}\n\
         [router]\nvcs = {vcs}\npacket_size = 4\ninput_buffer = 16\noutput_buffer = 8\n\
         [routing]\n{routing}\n[traffic]\npattern = \"uniform\"\nload = 0.1\n"
    );
    let set: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    let cfg = Config::parse(&text, &set).unwrap_or_else(|e| panic!("config error: {e}"));
    Simulation::build(cfg).unwrap_or_else(|e| panic!("build error: {e}"))
}

const RRG: &str = "kind = \"random_regular\"\nswitches = 40\ndegree = 4\nendpoints_per_switch = 2";
const TORUS: &str = "kind = \"torus\"\nsides = [5, 4]\nendpoints_per_switch = 1";
const DRAGONFLY: &str = "kind = \"dragonfly\"\np = 2\na = 4\nh = 2";
const HYPERX: &str = "kind = \"hyperx\"\nsides = [4, 3]\nendpoints_per_switch = 2";

fn exhaustive() -> Options {
    Options { exhaustive: true, ..Options::default() }
}

/// Analyses `routes` merged and exhaustively: same dependencies and same report but for
/// the states (fewer merged, unless nothing can merge).
fn check_same(net: &Network, routes: &Routes, vcs: u8, what: &str) -> RoutesReport {
    let (merged_edges, merged_states) = dependencies(net, routes, vcs, 5, Options::default()).unwrap();
    let (all_edges, all_states) = dependencies(net, routes, vcs, 5, exhaustive()).unwrap();
    assert!(!all_edges.is_empty(), "{what}: no dependencies");
    assert_eq!(merged_edges, all_edges, "{what}: the merged states give another CDG");
    let mut merged = analyse_with(net, routes, vcs, 5, Options::default()).unwrap();
    let mut all = analyse_with(net, routes, vcs, 5, exhaustive()).unwrap();
    assert_eq!(merged.states, merged_states);
    assert_eq!(all.states, all_states);
    // Destinations with failing routes are explored twice (merged, then per source).
    if all.unreachable_pairs == 0 {
        assert!(merged_states <= all_states, "{what}: {merged_states} > {all_states}");
    }
    merged.seconds = 0.0;
    all.seconds = 0.0;
    merged.states = 0;
    all.states = 0;
    assert_eq!(merged, all, "{what}");
    merged
}

fn check_sim(sim: &Simulation, what: &str) -> RoutesReport {
    check_same(&sim.net, &sim.routes(), sim.config.router.vcs, what)
}

#[test]
fn merged_states_give_the_same_cdg_and_report() {
    let cases: Vec<(&str, Simulation)> = vec![
        ("minimal ladder on an RRG", build(RRG, "algorithm = \"minimal\"\nvc_policy = \"ladder\"", 6, &[])),
        ("minimal on one VC (cyclic)", build(RRG, "algorithm = \"minimal\"\nvc_policy = \"any\"", 1, &[])),
        ("allpath ladder", build(RRG, "algorithm = \"allpath\"", 8, &[])),
        ("valiant, random intermediates", build(RRG, "algorithm = \"valiant\"", 12, &[])),
        // The torus DOR dateline reads the source: nothing merges across sources.
        ("torus DOR", build(TORUS, "algorithm = \"dor\"", 2, &[])),
        ("torus DOR on one VC (cyclic)", build(TORUS, "algorithm = \"dor\"\nvc_policy = \"any\"", 1, &[])),
        ("angara source routes", build(TORUS, "algorithm = \"angara_bfs\"", 2, &[])),
        // DAVC reads the input port: sources merge, input ports do not.
        ("DAVC F_NP", build(RRG, "algorithm = \"shortest_path\"\nvc_policy = \"davc_np\"", 8, &[])),
        ("DAVC F_P", build(HYPERX, "algorithm = \"minimal\"\nvc_policy = \"davc_p\"", 3, &[])),
        ("dragonfly UGAL (load probes)", build(DRAGONFLY, "algorithm = \"dragonfly_ugal\"", 3, &[])),
        (
            "up_down on a faulty torus",
            build(TORUS, "algorithm = \"up_down\"", 1, &["topology.failed_links=4"]),
        ),
        ("nue", build(RRG, "algorithm = \"nue\"", 2, &[])),
        (
            "SurePath escape",
            build(
                HYPERX,
                "algorithm = \"allpath\"\nvc_policy = \"any\"\nescape_vcs = 1",
                3,
                &["topology.failed_links=2"],
            ),
        ),
    ];
    for (what, sim) in &cases {
        let r = check_sim(sim, what);
        assert_eq!(r.unreachable_pairs, 0, "{what}: {:?}", r.unreachable);
    }
    // Merging really happens where nothing is read, and never across torus DOR sources.
    let states =
        |sim: &Simulation, o| dependencies(&sim.net, &sim.routes(), sim.config.router.vcs, 5, o).unwrap().1;
    let (minimal, dor) = (&cases[0].1, &cases[4].1);
    let (few, many) = (states(minimal, Options::default()), states(minimal, exhaustive()));
    assert!(few * 3 < many * 2, "{few} vs {many}");
    assert_eq!(states(dor, Options::default()), states(dor, exhaustive()));
}

#[test]
fn merged_report_is_the_same_on_any_number_of_threads() {
    let sims = [
        build(RRG, "algorithm = \"minimal\"", 6, &["topology.failed_links=6"]),
        build(DRAGONFLY, "algorithm = \"dragonfly_valiant\"", 3, &[]),
        build(RRG, "algorithm = \"minimal\"\nvc_policy = \"davc_n\"", 12, &[]),
    ];
    for sim in &sims {
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let mut r = pool.install(|| {
                analyse_with(&sim.net, &sim.routes(), sim.config.router.vcs, 5, Options::default()).unwrap()
            });
            r.seconds = 0.0;
            r
        };
        let one = run(1);
        assert_eq!(one, run(2));
        assert_eq!(one, run(3));
    }
}

/// Minimal routing that goes wrong towards some destinations: no candidate at some
/// switches, a terminal port at others, and back and forth between two switches towards
/// one destination (a loop). It reads neither source nor load.
struct Faulty {
    inner: Arc<dyn Routing>,
    net: Network,
    /// Offer terminal ports (the DAVC policies refuse them outright).
    terminal: bool,
}

impl Routing for Faulty {
    fn vcs_required(&self) -> u8 {
        1
    }
    fn max_hops(&self) -> u32 {
        self.inner.max_hops()
    }
    fn reads(&self) -> Reads {
        Reads::NOTHING
    }
    fn init(&self, src: SwitchId, dst: SwitchId, state: &mut RouteState, rng: &mut Rng) {
        self.inner.init(src, dst, state, rng)
    }
    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        match (at % 7, dst % 5) {
            // Nothing.
            (3, 1) => {}
            // A terminal port, then the minimal ones.
            (5, 2) if self.terminal => {
                out.push(Candidate { port: 0, vc: 0, penalty: 0 });
                self.inner.candidates(at, dst, packet, load, rng, out)
            }
            // Towards destination 4, switches 0 and its first neighbour send packets to
            // each other.
            _ if dst == 4 && (at == 0 || self.neighbour0() == at) => {
                let to = if at == 0 { self.neighbour0() } else { 0 };
                let port = self.net.neighbours(at).find(|&(_, n)| n == to).expect("link").0;
                out.push(Candidate { port, vc: 0, penalty: 0 });
            }
            _ => self.inner.candidates(at, dst, packet, load, rng, out),
        }
    }
}

impl Faulty {
    fn neighbour0(&self) -> SwitchId {
        let (_, n) = self.net.neighbours(0).next().expect("a neighbour");
        if n == 4 {
            self.net.neighbours(0).nth(1).expect("a second neighbour").1
        } else {
            n
        }
    }
}

#[test]
fn failing_routes_are_named_exactly_with_merged_states() {
    let cases = [
        (VcPolicy::Ladder, 80, "a loop?"),
        (VcPolicy::Any, 2, "a loop?"),
        (VcPolicy::DavcNode, 80, "a loop?"),
        // The loop goes past the ladder's VCs first.
        (VcPolicy::Ladder, 6, "beyond the 6 VCs"),
    ];
    for (policy, vcs, long) in cases {
        let sim = build(RRG, "algorithm = \"minimal\"", 8, &["topology.failed_links=5"]);
        let routes = Routes {
            routing: Arc::new(Faulty {
                inner: sim.routes().routing,
                net: (*sim.net).clone(),
                terminal: !policy.is_davc(),
            }),
            name: "faulty",
            vc_policy: policy,
            escape: None,
        };
        let r = check_same(&sim.net, &routes, vcs, &format!("faulty routing, {policy:?}, {vcs} VCs"));
        assert!(r.unreachable_pairs > 50, "{}", r.unreachable_pairs);
        let mut kinds = vec!["no candidate at switch", long];
        if !policy.is_davc() {
            kinds.push("leads to no switch");
        }
        kinds.retain(|k| !r.unreachable.iter().any(|u| u.reason.contains(k)));
        assert!(kinds.is_empty(), "{policy:?}: no failure {kinds:?} in {:?}", r.unreachable);
    }
}

/// A routing that reads the source but says it does not (the torus DOR dateline): the
/// merged exploration then misses dependencies, which is why routings must declare it.
struct Lying(Arc<dyn Routing>);

impl Routing for Lying {
    fn vcs_required(&self) -> u8 {
        self.0.vcs_required()
    }
    fn max_hops(&self) -> u32 {
        self.0.max_hops()
    }
    fn reads(&self) -> Reads {
        Reads::NOTHING
    }
    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        self.0.candidates(at, dst, packet, load, rng, out)
    }
}

#[test]
fn a_routing_must_declare_that_it_reads_the_source() {
    let sim = build(TORUS, "algorithm = \"dor\"", 2, &[]);
    let lying = Routes { routing: Arc::new(Lying(sim.routes().routing)), ..sim.routes() };
    let (merged, _) = dependencies(&sim.net, &lying, 2, 5, Options::default()).unwrap();
    let (all, _) = dependencies(&sim.net, &lying, 2, 5, exhaustive()).unwrap();
    assert_ne!(merged, all, "the dateline depends on the source");
    let (honest, _) = dependencies(&sim.net, &sim.routes(), 2, 5, Options::default()).unwrap();
    assert_eq!(honest, all);
    // Every dependency joins consecutive channels: the first leads to the second's switch.
    for (a, b) in &all {
        let PortTarget::Switch { switch, .. } = sim.net.ports(a.switch)[a.port as usize].target else {
            panic!("{a:?} is not a link")
        };
        assert_eq!(switch, b.switch);
    }
}

#[test]
fn an_analysis_too_large_for_memory_is_refused() {
    let sim = build(RRG, "algorithm = \"minimal\"", 6, &[]);
    let e = analyse_with(
        &sim.net,
        &sim.routes(),
        6,
        5,
        Options { memory_limit: Some(1000), ..Options::default() },
    )
    .unwrap_err();
    assert!(e.to_string().contains("channel dependency graph"), "{e}");
    assert!(e.to_string().contains("4 network ports and 6 VCs"), "{e}");
}
