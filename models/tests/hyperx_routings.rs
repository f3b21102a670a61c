//! The SurePath paper's (Camarero et al., FTXS'24) HyperX routings: OmniWAR's and DAL's Omnidimensional routes,
//! Polarized routes (Table 1), their ladders and their SurePath versions (OmniSP, PolSP),
//! on random HyperX sizes with and without failed links; the wide ladder; and the
//! completion-time mode.

mod common;
use common::{build, run};
use proptest::prelude::*;
use xnet_models::analysis::analyse;
use xnet_models::config::Config;
use xnet_models::packet::Packet;
use xnet_models::rng::{below, stream, Purpose};
use xnet_models::routing::{Candidate, LoadView};
use xnet_models::sim::{Simulation, Status};
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

fn config(sides: &[u32], faults: u32, fault_seed: u64, algorithm: &str, escape: bool) -> String {
    let vcs = if escape { 4 } else { 2 * sides.len() as u32 + 2 };
    format!(
        r#"
[simulation]
cycles = 2000
warmup = 200
seed = 5
watchdog = 1000
[topology]
kind = "hyperx"
sides = {sides:?}
endpoints_per_switch = 2
failed_links = {faults}
fault_seed = {fault_seed}
[router]
vcs = {vcs}
packet_size = 4
input_buffer = 16
output_buffer = 8
[routing]
algorithm = "{algorithm}"
vc_policy = "{policy}"
escape_vcs = {escape_vcs}
[traffic]
pattern = "uniform"
load = 0.5
"#,
        policy = if escape { "any" } else { "routing" },
        escape_vcs = u8::from(escape),
    )
}

fn coords(sides: &[u32], mut s: SwitchId) -> Vec<u32> {
    sides
        .iter()
        .map(|&k| {
            let c = s % k;
            s /= k;
            c
        })
        .collect()
}

fn next_switch(net: &Network, s: SwitchId, port: PortId) -> SwitchId {
    match net.ports(s)[port as usize].target {
        PortTarget::Switch { switch, .. } => switch,
        t => panic!("port {port} of switch {s} leads to {t:?}"),
    }
}

/// Follows random routes of `sim`'s routing (its own candidates, no VC policy) from every
/// switch to random destinations, checking each hop with `check(at, next, dst, src,
/// hops taken, candidate)`, and returns the longest route seen. Stops a route that finds
/// no candidate (only allowed where `dead_ends_allowed`).
fn walk_routes(
    sim: &Simulation,
    dead_ends_allowed: bool,
    mut check: impl FnMut(SwitchId, SwitchId, SwitchId, SwitchId, u32, &Candidate, &[Candidate]),
) -> u32 {
    let net = &*sim.net;
    let routing = sim.routing();
    let n = net.num_switches() as SwitchId;
    let mut rng = stream(1, Purpose::Routing, 99);
    let mut longest = 0;
    let mut out = Vec::new();
    for src in 0..n {
        for _ in 0..6 {
            let dst = below(&mut rng, n as u64) as SwitchId;
            if dst == src {
                continue;
            }
            let mut p = Packet::new(0, 0, 0, 4, 0);
            routing.init(src, dst, &mut p.route, &mut rng);
            let (mut at, mut hops) = (src, 0u32);
            while at != dst {
                out.clear();
                routing.candidates(at, dst, &mut p, &Idle, &mut rng, &mut out);
                if out.is_empty() {
                    assert!(dead_ends_allowed, "no candidate at {at} from {src} to {dst}");
                    break;
                }
                let c = out[below(&mut rng, out.len() as u64) as usize];
                let next = next_switch(net, at, c.port);
                check(at, next, dst, src, hops, &c, &out);
                routing.on_forward(at, c, &mut p);
                at = next;
                hops += 1;
                assert!(
                    hops <= routing.max_hops(),
                    "route from {src} to {dst} longer than {}",
                    routing.max_hops()
                );
            }
            longest = longest.max(hops);
        }
    }
    longest
}

/// `faults` where the HyperX has links to spare (two or more dimensions of side >= 3),
/// else none.
fn fault_count(sides: &[u32], faults: u32) -> u32 {
    if sides.len() >= 2 && sides.iter().all(|&k| k >= 3) {
        faults
    } else {
        0
    }
}

fn hyperx() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(2u32..6, 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// OmniWAR: every hop is in a dimension still unaligned with the destination; the hop to
    /// the destination's coordinate is minimal (penalty 0), every other one a deroute
    /// (penalty 64, not closer); at most n deroutes in all, so routes have at most 2n hops.
    /// With faults (and the escape) no candidate uses a failed link.
    #[test]
    fn omniwar_hops_stay_in_unaligned_dimensions_with_at_most_n_deroutes(
        sides in hyperx(), faults in 0u32..4, fault_seed in 0u64..100,
    ) {
        let faults = fault_count(&sides, faults);
        let sim = build(&config(&sides, faults, fault_seed, "omniwar", faults > 0), &[]);
        let n = sides.len();
        let mut deroutes = 0;
        walk_routes(&sim, faults > 0, |at, next, dst, src, hops, c, _| {
            let (a, b, t) = (coords(&sides, at), coords(&sides, next), coords(&sides, dst));
            let moved: Vec<usize> = (0..n).filter(|&d| a[d] != b[d]).collect();
            assert_eq!(moved.len(), 1, "a HyperX hop changes one coordinate");
            let d = moved[0];
            assert_ne!(a[d], t[d], "hop in the aligned dimension {d}");
            let minimal = b[d] == t[d];
            assert_eq!(c.penalty, if minimal { 0 } else { 64 });
            if hops == 0 {
                deroutes = 0;
            }
            if !minimal {
                deroutes += 1;
                assert!(deroutes <= n, "more than {n} deroutes from {src} to {dst}");
            }
        });
        prop_assert_eq!(sim.routing().max_hops(), 2 * n as u32);
    }

    /// DAL: unaligned dimensions only, at most one deroute in each dimension.
    #[test]
    fn dal_deroutes_at_most_once_per_dimension(sides in hyperx()) {
        let sim = build(&config(&sides, 0, 0, "dal", false), &[]);
        let n = sides.len();
        let mut dims = 0u32;
        walk_routes(&sim, false, |at, next, dst, _, hops, _, _| {
            let (a, b, t) = (coords(&sides, at), coords(&sides, next), coords(&sides, dst));
            let d = (0..n).find(|&d| a[d] != b[d]).unwrap();
            assert_ne!(a[d], t[d]);
            if hops == 0 {
                dims = 0;
            }
            if b[d] != t[d] {
                assert_eq!(dims & (1 << d), 0, "second deroute in dimension {d}");
                dims |= 1 << d;
            }
        });
    }

    /// Polarized (Table 1): no hop decreases mu = d(c,s) - d(c,t); hops that keep it
    /// depart both ends while closer to the source and approach both otherwise; penalties
    /// 0/64/80 by Δmu below the best candidate. On a healthy HyperX no route is stranded
    /// and the longest is 2n hops (the paper: "at most the double of the network
    /// diameter"); with faults the escape takes stranded packets.
    #[test]
    fn polarized_hops_never_decrease_mu(sides in hyperx(), faults in 0u32..4, fault_seed in 0u64..100) {
        let faults = fault_count(&sides, faults);
        let sim = build(&config(&sides, faults, fault_seed, "polarized", faults > 0), &[]);
        let net = &*sim.net;
        let dist: Vec<Vec<u32>> = (0..net.num_switches() as SwitchId).map(|s| bfs(net, s)).collect();
        let longest = walk_routes(&sim, faults > 0, |at, next, dst, src, _, c, all| {
            let d = |x: SwitchId, y: SwitchId| dist[x as usize][y as usize] as i64;
            let (ds, dt) = (d(src, next) - d(src, at), d(next, dst) - d(at, dst));
            let delta = ds - dt;
            assert!(delta >= 0, "Δmu {delta} from {at} to {next} ({src} -> {dst})");
            if delta == 0 {
                if d(src, at) < d(at, dst) {
                    assert_eq!((ds, dt), (1, 1));
                } else {
                    assert_eq!((ds, dt), (-1, -1));
                }
            }
            // The best candidate has penalty 0; c's penalty tells its Δmu below the best.
            assert!(all.iter().any(|x| x.penalty == 0));
            assert!([0, 64, 80].contains(&c.penalty));
        });
        if faults == 0 {
            let n = sides.len() as u32;
            prop_assert!(longest <= 2 * n);
            prop_assert!(sim.routing().max_hops() <= 2 * n);
        }
    }

    /// The verifier: each routing with its ladder (healthy) or with the escape (healthy
    /// and faulty: OmniSP, PolSP) is deadlock-free and reaches every pair.
    #[test]
    fn omni_dal_and_polarized_are_deadlock_free_with_their_vc_schemes(
        sides in prop::collection::vec(2u32..5, 2..4), faults in 0u32..5, fault_seed in 0u64..100,
    ) {
        let faults = fault_count(&sides, faults);
        for algorithm in ["omniwar", "dal", "polarized"] {
            for escape in [false, true] {
                let f = if escape { faults } else { 0 };
                if algorithm == "dal" && escape {
                    continue;
                }
                let sim = build(&config(&sides, f, fault_seed, algorithm, escape), &[]);
                let r = analyse(&sim);
                prop_assert!(r.acyclic, "{algorithm} escape={escape} on {}: cycle {:?}", r.network, r.cycle);
                prop_assert_eq!(r.unreachable_pairs, 0, "{} {:?}", algorithm, r.unreachable);
                if escape {
                    prop_assert_eq!(r.escape_back_dependencies, 0);
                } else {
                    prop_assert!(r.longest_path <= 2 * sides.len() as u32);
                }
            }
        }
    }
}

#[test]
fn routes_that_faults_can_cut_need_the_escape() {
    for algorithm in ["omniwar", "dal", "polarized"] {
        let e = Config::parse(&config(&[4, 4], 3, 1, algorithm, false), &[])
            .and_then(Simulation::build)
            .err()
            .unwrap_or_else(|| panic!("{algorithm} with faults and no escape must be refused"));
        assert_eq!(e.key, "routing.escape_vcs", "{e}");
        assert!(e.message.contains(algorithm) && e.message.contains("3 failed links"), "{e}");
        assert!(!e.message.contains("  "), "a run of spaces in {e}");
    }
    let e = Config::parse(&config(&[4, 4], 0, 0, "omniwar", false), &["topology.kind=\"torus\"".into()])
        .and_then(Simulation::build)
        .err()
        .expect("omniwar on a torus");
    assert!(e.message.contains("hyperx"), "{e}");
    let e = Config::parse(&config(&[4, 4], 0, 0, "omniwar", false), &["routing.omniwar.deroutes=40".into()])
        .and_then(Simulation::build)
        .err()
        .expect("too many deroutes");
    assert_eq!(e.key, "routing.omniwar.deroutes");
}

#[test]
fn the_ladders_need_the_longest_route_in_vcs() {
    // 3D: OmniWAR and Polarized need 6 VCs; 5 are refused, naming the routing.
    for algorithm in ["omniwar", "polarized", "dal"] {
        let e = Config::parse(&config(&[3, 3, 3], 0, 0, algorithm, false), &["router.vcs=5".into()])
            .and_then(Simulation::build)
            .err()
            .unwrap_or_else(|| panic!("{algorithm} on 5 VCs"));
        assert_eq!(e.key, "router.vcs");
        assert!(e.message.contains("6 VCs") && e.message.contains(algorithm), "{e}");
    }
}

#[test]
fn the_wide_ladder_gives_each_hop_its_share_of_the_vcs() {
    // Minimal on a 2D HyperX: 2 hops, 4 VCs, so hop h uses VCs 2h and 2h + 1 (the paper's
    // Minimal), both taken; the run is deadlock-free and the verifier agrees.
    let text = config(&[4, 4], 0, 0, "minimal", false);
    let sim = build(&text, &["routing.vc_policy=\"wide_ladder\"", "router.vcs=4", "traffic.load=0.9"]);
    let r = run(&sim, 2);
    assert_eq!(r.status, Status::Completed);
    assert!(r.vc_phits.iter().all(|&p| p > 0), "every VC carries traffic: {:?}", r.vc_phits);
    let report = analyse(&sim);
    assert!(report.acyclic && report.unreachable_pairs == 0);
    assert_eq!(report.vcs_used, 4);
    // The plain ladder uses VCs 0 and 1 only.
    let sim = build(&text, &["routing.vc_policy=\"ladder\"", "router.vcs=4", "traffic.load=0.9"]);
    assert_eq!(run(&sim, 1).vc_phits[2..], [0, 0]);
}

#[test]
fn regular_permutation_to_neighbour_caps_aligned_routes_at_one_half_and_polarized_passes_it() {
    // The paper's bound (section 5): in a line of k switches, k/2 sources with p endpoints
    // each reach k/2 destinations over k^2/4 links, so routes that stay in the line (all
    // of Omnidimensional's) accept at most k / (2p) = 0.5 here. Polarized's 3-hop routes
    // leave the line through parallel ones and pass it (the paper's Figure 5).
    let text = config(&[6, 6, 6], 0, 0, "omniwar", false);
    let rpn = [
        "topology.endpoints_per_switch=6",
        "traffic.pattern=\"regular_permutation_to_neighbour\"",
        "traffic.load=1.0",
        "router.vcs=6",
        "router.packet_size=16",
        "router.input_buffer=128",
        "router.output_buffer=64",
        "simulation.warmup=700",
    ];
    let omni = run(&build(&text, &rpn), 2).summary;
    assert!(omni.accepted_load <= 0.5 + 0.005 && omni.accepted_load > 0.45, "{omni:?}");
    let polarized = run(&build(&text, &[&rpn[..], &["routing.algorithm=\"polarized\""]].concat()), 2).summary;
    assert!(polarized.accepted_load > 0.6, "{polarized:?}");
    // Polarized pays for it in hops: neighbours are one hop apart, its detours take three.
    assert!(polarized.hops_mean > omni.hops_mean + 1.0, "{} {}", polarized.hops_mean, omni.hops_mean);
}

#[test]
fn completion_time_runs_stop_once_every_endpoint_sent_its_quota() {
    let text = config(&[4, 4], 0, 0, "omniwar", false);
    let quota = ["traffic.phits_per_endpoint=400", "simulation.warmup=0", "simulation.sample_period=20"];
    let sim = build(&text, &[&quota[..], &["traffic.load=1.0", "simulation.cycles=100000"]].concat());
    let r = run(&sim, 2);
    let c = r.completion.as_ref().expect("completion-time mode");
    assert!(c.all_delivered);
    // 32 endpoints x 100 packets, each delivered once.
    assert_eq!((r.summary.generated_total, r.summary.delivered_total), (3200, 3200));
    // It stopped at the first sample after the last delivery, long before the cycle limit.
    assert!(c.time < r.time && r.time <= c.time + 20, "completion {} stop {}", c.time, r.time);
    // Each endpoint needs at least 400 cycles to inject 400 phits at 1 phit per cycle.
    assert!(c.source_finish.iter().all(|&t| t >= 400), "{:?}", c.source_finish);
    assert_eq!(c.time, *c.source_finish.iter().max().unwrap());
    assert_eq!(c.time, *c.receive_finish.iter().max().unwrap());
    let stragglers = c.stragglers(3);
    assert_eq!(stragglers[0].1, c.time);
    assert!(stragglers.windows(2).all(|w| w[0].1 >= w[1].1));
    // Same result on 1 partition.
    let one = run(&sim, 1);
    assert_eq!(one.completion, r.completion);
    assert_eq!(one.time, r.time);
    // A cycle limit that comes first leaves it unfinished, and says so.
    let short = build(&text, &[&quota[..], &["traffic.load=1.0", "simulation.cycles=300"]].concat());
    let r = run(&short, 1);
    assert!(!r.completion.unwrap().all_delivered);
    // The quota must be whole packets.
    let e = Config::parse(&text, &["traffic.phits_per_endpoint=401".into()]).expect_err("not a multiple");
    assert_eq!(e.key, "traffic.phits_per_endpoint");
}
