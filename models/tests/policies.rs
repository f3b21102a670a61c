//! DAVC VC policies (F_N, F_P, F_NP) and the routings that compose with them: ALLPATH(k),
//! generic Valiant, Up*/Down* and SPDA.

mod common;
use common::*;
use xnet_models::config::Config;
use xnet_models::packet::Packet;
use xnet_models::rng::{stream, Purpose};
use xnet_models::routing::{next_hops, Candidate, Hop, LoadView, Routing, VcPolicy};
use xnet_models::sim::{RunResult, Simulation, Status};
use xnet_models::topology::metrics::bfs;
use xnet_models::topology::{Network, PortId, PortTarget, SwitchId};

struct Idle;
impl LoadView for Idle {
    fn vc_occupancy(&self, _: PortId, _: u8) -> u32 {
        0
    }
    fn port_occupancy(&self, _: PortId) -> u32 {
        0
    }
}

fn packet() -> Packet {
    Packet::new(0, 0, 0, 1, 0)
}

fn next_switch(net: &Network, s: SwitchId, port: PortId) -> SwitchId {
    match net.ports(s)[port as usize].target {
        PortTarget::Switch { switch, .. } => switch,
        t => panic!("port {port} of switch {s} leads to {t:?}"),
    }
}

fn port_to(net: &Network, s: SwitchId, to: SwitchId) -> PortId {
    (0..net.radix(s) as PortId).find(|&p| next_target(net, s, p) == Some(to)).unwrap()
}

fn next_target(net: &Network, s: SwitchId, port: PortId) -> Option<SwitchId> {
    match net.ports(s)[port as usize].target {
        PortTarget::Switch { switch, .. } => Some(switch),
        _ => None,
    }
}

/// Runs at `load` and checks the run completed with every packet accounted for.
fn run_clean(sim: &Simulation, load: f64) -> RunResult {
    let plan = sim.plan(2).unwrap();
    let r = sim.run(load, &plan.assignment, &mut |_| {}, None).unwrap();
    assert_eq!(r.status, Status::Completed, "{:?}", r.blocked.first());
    let s = &r.summary;
    assert_eq!(s.generated_total, s.delivered_total + r.resident_end + r.on_wires_end, "{s:?}");
    assert!(s.delivered_total > 0);
    r
}

fn vcs_used(r: &RunResult) -> usize {
    r.vc_phits.iter().filter(|&&x| x > 0).count()
}

/// A route as `(switch, candidate taken there)` pairs.
type Path = [(SwitchId, Candidate)];

struct Walk<'a> {
    routing: &'a dyn Routing,
    net: &'a Network,
    dst: SwitchId,
    limit: usize,
}

impl Walk<'_> {
    fn rec(
        &self,
        at: SwitchId,
        mut p: Packet,
        path: &mut Vec<(SwitchId, Candidate)>,
        visit: &mut dyn FnMut(&Path),
    ) {
        if at == self.dst {
            visit(path);
            return;
        }
        assert!(path.len() < self.limit, "route longer than {} hops: {path:?}", self.limit);
        let mut out = Vec::new();
        let mut rng = stream(1, Purpose::Routing, 0);
        self.routing.candidates(at, self.dst, &mut p, &Idle, &mut rng, &mut out);
        assert!(!out.is_empty(), "no candidate at {at} to {}", self.dst);
        for c in out {
            let mut q = p;
            q.hops += 1;
            self.routing.on_forward(at, c, &mut q);
            q.vc = c.vc;
            path.push((at, c));
            self.rec(next_switch(self.net, at, c.port), q, path, visit);
            path.pop();
        }
    }
}

/// Every route the routing allows from `src` to `dst` (depth-first over the candidates,
/// from the packet `start`), at most `limit` hops long.
fn walk(
    routing: &dyn Routing,
    net: &Network,
    src: SwitchId,
    dst: SwitchId,
    start: Packet,
    limit: usize,
    visit: &mut dyn FnMut(&Path),
) {
    Walk { routing, net, dst, limit }.rec(src, start, &mut Vec::new(), visit);
}

// ---------------------------------------------------------------- DAVC conditions

#[test]
fn davc_conditions_follow_the_seed_example() {
    // Fig. 3 of the DAVC paper: endpoint -> switch 7 -(port 2)-> switch 6 -(port 2)-> 9.
    // The paper's F_P and F_NP give VCs 0, 0, 1 and 0, 0, 0 on the switch channels; its F_N
    // raises the VC already on 7 -> 6 (it orders the terminal channel too), but here the
    // first network channel is always VC 0: the terminal link before it is dedicated and
    // lies on no cycle, which is what makes `max_hops` VCs enough (Lemma 6.1 minus the
    // injection and consumption hops).
    let hops = [(7, 6, None, 2), (6, 9, Some(2), 2)];
    let vcs = |p: VcPolicy| {
        let mut vc = 0;
        let mut seq = vec![];
        for &(cur, next, inb, out) in &hops {
            vc += u8::from(p.davc_transition(cur, next, inb, out));
            seq.push(vc);
        }
        seq
    };
    assert_eq!(vcs(VcPolicy::DavcNode), [0, 0]);
    // The paper's 6 -> 9 -> 4 with 9 > 6, then a hop down in id.
    assert!(!VcPolicy::DavcNode.davc_transition(6, 9, Some(2), 2));
    assert!(VcPolicy::DavcNode.davc_transition(9, 4, Some(2), 1));
    assert_eq!(vcs(VcPolicy::DavcPort), [0, 1]);
    assert_eq!(vcs(VcPolicy::DavcNodePort), [0, 0]);
}

#[test]
fn davc_conditions_case_by_case() {
    use VcPolicy::*;
    // F_N: next <= current.
    assert!(DavcNode.davc_transition(5, 3, Some(9), 1));
    assert!(DavcNode.davc_transition(5, 5, Some(0), 9));
    assert!(!DavcNode.davc_transition(5, 6, Some(0), 0));
    // F_P: outbound <= inbound.
    assert!(DavcPort.davc_transition(1, 9, Some(4), 3));
    assert!(DavcPort.davc_transition(1, 9, Some(4), 4));
    assert!(!DavcPort.davc_transition(9, 1, Some(4), 5));
    // F_NP: outbound < inbound, or equal and next <= current.
    assert!(DavcNodePort.davc_transition(1, 9, Some(4), 3));
    assert!(DavcNodePort.davc_transition(5, 3, Some(4), 4));
    assert!(DavcNodePort.davc_transition(5, 5, Some(4), 4));
    assert!(!DavcNodePort.davc_transition(5, 6, Some(4), 4));
    assert!(!DavcNodePort.davc_transition(9, 1, Some(4), 5));
    // At the source switch (terminal link in) the VC never changes.
    for p in [DavcNode, DavcPort, DavcNodePort] {
        assert!(!p.davc_transition(9, 0, None, 0));
    }
    // The other policies never use the DAVC rule.
    for p in [Routing, Ladder, Any] {
        assert!(!p.is_davc());
        assert!(!p.davc_transition(9, 0, Some(5), 0));
    }
}

const RING: &str = r#"
[simulation]
cycles = 20000
sample_period = 100
watchdog = 1000
[topology]
kind = "torus"
sides = [8]
endpoints_per_switch = 2
[router]
vcs = 4
packet_size = 4
input_buffer = 4
output_buffer = 4
[routing]
algorithm = "dor"
vc_policy = "davc_n"
[traffic]
pattern = "uniform"
load = 1.0
"#;

/// A hand-made hop on the ring: switch 3 sends to switch 2 (lower id: F_N transition).
#[test]
fn davc_next_hops_raises_the_vc_on_the_ring() {
    let sim = build(RING, &[]);
    let net = &sim.net;
    // A packet on switch 4's link into switch 3, heading for switch 2.
    let hop = Hop { ports: net.ports(3), at: 3, in_port: port_to(net, 3, 4), dst: 2, vcs: 4 };
    let mut p = packet();
    p.vc = 2;
    let mut out = Vec::new();
    let mut rng = stream(1, Purpose::Routing, 0);
    next_hops(sim.routing(), VcPolicy::DavcNode, &hop, &mut p, &Idle, &mut rng, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(next_switch(net, 3, out[0].port), 2);
    assert_eq!(out[0].vc, 3);
    // Going up in id keeps the VC.
    let hop = Hop { ports: net.ports(3), at: 3, in_port: port_to(net, 3, 2), dst: 4, vcs: 4 };
    next_hops(sim.routing(), VcPolicy::DavcNode, &hop, &mut p, &Idle, &mut rng, &mut out);
    assert_eq!(out[0].vc, 2);
}

#[test]
#[should_panic(expected = "ran out of VCs")]
fn davc_next_hops_never_clamps() {
    let sim = build(RING, &[]);
    let net = &sim.net;
    let hop = Hop { ports: net.ports(3), at: 3, in_port: port_to(net, 3, 4), dst: 2, vcs: 4 };
    let mut p = packet();
    p.vc = 3;
    let mut rng = stream(1, Purpose::Routing, 0);
    next_hops(sim.routing(), VcPolicy::DavcNode, &hop, &mut p, &Idle, &mut rng, &mut Vec::new());
}

#[test]
fn davc_n_on_a_ring_does_not_deadlock_where_one_vc_does() {
    let sim = build(RING, &[]);
    let r = run_clean(&sim, 1.0);
    assert!(vcs_used(&r) <= sim.routing().max_hops() as usize);
    let sim = build(RING, &["router.vcs=1", "routing.vc_policy=any", "simulation.cycles=50000"]);
    let plan = sim.plan(2).unwrap();
    let r = sim.run(1.0, &plan.assignment, &mut |_| {}, None).unwrap();
    assert_eq!(r.status, Status::Deadlock);
}

// ---------------------------------------------------------------- DAVC runs

#[test]
fn davc_with_minimal_on_a_random_regular_graph_past_saturation() {
    for policy in ["davc_n", "davc_p", "davc_np"] {
        let vp = format!("routing.vc_policy={policy}");
        let sim = build(RRG, &[&vp, "router.vcs=4", "simulation.cycles=2000"]);
        let max = sim.routing().max_hops() as usize;
        let r = run_clean(&sim, 1.0);
        assert!(vcs_used(&r) <= max, "{policy}: {:?} (max hops {max})", r.vc_phits);
        assert!(r.vc_phits[0] > 0);
    }
}

#[test]
fn davc_with_dragonfly_valiant_past_saturation() {
    for policy in ["davc_n", "davc_p", "davc_np"] {
        let vp = format!("routing.vc_policy={policy}");
        let sim = build(
            DRAGONFLY,
            &["routing.algorithm=dragonfly_valiant", &vp, "router.vcs=5", "simulation.cycles=2000"],
        );
        let max = sim.routing().max_hops() as usize;
        let r = run_clean(&sim, 1.0);
        assert!(vcs_used(&r) <= max, "{policy}: {:?} (max hops {max})", r.vc_phits);
    }
}

// ---------------------------------------------------------------- routings

#[test]
fn allpath_offers_more_than_minimal_and_stays_within_shortest_plus_k() {
    let sim = build(RRG, &["routing.algorithm=allpath", "router.vcs=5"]);
    let min = build(RRG, &[]);
    let net = &sim.net;
    let n = net.num_switches() as SwitchId;
    assert_eq!(sim.routing().max_hops(), min.routing().max_hops() + 1);
    let mut rng = stream(1, Purpose::Routing, 0);
    let mut more = false;
    let mut longer = false;
    for src in 0..n {
        let dist = bfs(net, src);
        for dst in (0..n).filter(|&d| d != src) {
            let mut p = packet();
            sim.routing().init(src, dst, &mut p.route, &mut rng);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            sim.routing().candidates(src, dst, &mut p.clone(), &Idle, &mut rng, &mut a);
            min.routing().candidates(src, dst, &mut packet(), &Idle, &mut rng, &mut b);
            assert!(b.iter().all(|c| a.iter().any(|x| x.port == c.port)));
            more |= a.len() > b.len();
            let shortest = dist[dst as usize] as usize;
            walk(sim.routing(), net, src, dst, p, shortest + 2, &mut |path| {
                assert!(path.len() <= shortest + 1, "{src}->{dst}: {path:?}");
                longer |= path.len() == shortest + 1;
            });
        }
    }
    assert!(more && longer);
}

#[test]
fn valiant_delivers_everything_over_longer_routes() {
    let mut sim = build(RRG, &["routing.algorithm=valiant", "router.vcs=8", "simulation.cycles=2000"]);
    assert_eq!(sim.routing().max_hops(), 2 * build(RRG, &[]).routing().max_hops());
    sim.record_deliveries = true;
    let r = run_clean(&sim, 0.2);
    assert_eq!(r.deliveries.len() as u64, r.summary.delivered_total);
    let m = run_clean(&build(RRG, &["simulation.cycles=2000"]), 0.2);
    assert!(r.hops.mean() > m.hops.mean() + 0.5, "valiant {} vs minimal {}", r.hops.mean(), m.hops.mean());
    // Also past saturation, with the ladder and with DAVC.
    run_clean(&build(RRG, &["routing.algorithm=valiant", "router.vcs=8", "simulation.cycles=1500"]), 1.0);
    let davc =
        ["routing.algorithm=valiant", "routing.vc_policy=davc_p", "router.vcs=8", "simulation.cycles=1500"];
    run_clean(&build(RRG, &davc), 1.0);
}

#[test]
fn up_down_never_goes_up_after_down_and_runs_on_one_vc() {
    for root in [0u32, 17] {
        let r = format!("routing.up_down.root={root}");
        let sim = build(RRG, &["routing.algorithm=up_down", &r, "router.vcs=1"]);
        let net = &sim.net;
        let level = bfs(net, root);
        let up = |a: SwitchId, b: SwitchId| (level[b as usize], b) < (level[a as usize], a);
        let n = net.num_switches() as SwitchId;
        let max = sim.routing().max_hops() as usize;
        let mut longest = 0;
        for src in 0..n {
            for dst in (0..n).filter(|&d| d != src) {
                walk(sim.routing(), net, src, dst, packet(), max + 1, &mut |path| {
                    let mut down = false;
                    for &(at, c) in path {
                        let next = next_switch(net, at, c.port);
                        assert!(!(down && up(at, next)), "up after down: {src}->{dst} {path:?}");
                        down |= !up(at, next);
                        assert_eq!(c.vc, 0);
                    }
                    longest = longest.max(path.len());
                });
            }
        }
        assert_eq!(longest, max);
        let r = run_clean(&build(RRG, &["routing.algorithm=up_down", &r, "router.vcs=1"]), 1.0);
        assert_eq!(r.vc_phits.len(), 1);
    }
}

#[test]
fn up_down_default_root_is_the_least_eccentric_switch() {
    // On a mesh the centre has the smallest eccentricity.
    let sim = build(TORUS, &["topology.kind=mesh", "topology.sides=[5, 5]", "routing.algorithm=up_down"]);
    let a = sim.routing().max_hops();
    let centre = build(
        TORUS,
        &[
            "topology.kind=mesh",
            "topology.sides=[5, 5]",
            "routing.algorithm=up_down",
            "routing.up_down.root=12",
        ],
    );
    assert_eq!(a, centre.routing().max_hops());
    run_clean(&sim, 0.5);
}

#[test]
fn spda_runs_on_one_to_four_vcs_and_a_packet_keeps_its_vc() {
    for vcs in 1..=4u8 {
        let v = format!("router.vcs={vcs}");
        let sim = build(RRG, &["routing.algorithm=spda", &v, "simulation.cycles=1500"]);
        let net = &sim.net;
        let n = net.num_switches() as SwitchId;
        let max = sim.routing().max_hops() as usize;
        for tree in 0..vcs {
            for src in 0..n {
                for dst in (0..n).filter(|&d| d != src) {
                    let mut p = packet();
                    p.route.phase = tree;
                    walk(sim.routing(), net, src, dst, p, max + 1, &mut |path| {
                        assert!(path.iter().all(|(_, c)| c.vc == tree), "{path:?}");
                    });
                }
            }
        }
        let r = run_clean(&sim, 1.0);
        assert_eq!(vcs_used(&r), vcs as usize, "{:?}", r.vc_phits);
    }
}

// ---------------------------------------------------------------- config errors

fn error(text: &str, overrides: &[&str]) -> String {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match Config::parse(text, &o) {
        Err(e) => e.to_string(),
        Ok(cfg) => match Simulation::build(cfg) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{overrides:?} was accepted"),
        },
    }
}

#[test]
fn config_errors_name_what_is_known_and_needed() {
    let e = error(RRG, &["routing.algorithm=allpaths"]);
    for known in ["allpath", "valiant", "up_down", "spda", "minimal"] {
        assert!(e.contains(known), "{e}");
    }
    let e = error(RRG, &["routing.vc_policy=davc"]);
    for known in ["davc_n", "davc_p", "davc_np"] {
        assert!(e.contains(known), "{e}");
    }
    let max = build(RRG, &["routing.vc_policy=davc_np"]).routing().max_hops();
    let e = error(RRG, &["routing.vc_policy=davc_np", "router.vcs=1"]);
    assert!(
        e.contains("router.vcs") && e.contains(&format!("{max} VCs")) && e.contains("1 available"),
        "{e}"
    );
    let e = error(RRG, &["routing.algorithm=valiant", "routing.vc_policy=davc_n", "router.vcs=2"]);
    assert!(e.contains(&format!("{} VCs", 2 * max)) && e.contains("2 available"), "{e}");
    let e = error(RRG, &["routing.algorithm=up_down", "routing.up_down.root=99"]);
    assert!(e.contains("routing.up_down.root") && e.contains("99"), "{e}");
    let e = error(RRG, &["routing.allpath.k=1000", "routing.algorithm=allpath"]);
    assert!(e.contains("routing.allpath.k"), "{e}");
}
