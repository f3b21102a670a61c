//! The route verifier (`xnet routes`): channel dependency graph acyclicity with witness
//! cycles, reachability, and the survey's and Angara's path metrics on known cases.

use xnet_models::analysis::{analyse, RoutesReport};
use xnet_models::config::Config;
use xnet_models::sim::Simulation;
use xnet_models::topology::metrics::summarize;
use xnet_models::topology::PortTarget;

fn build(topology: &str, routing: &str, vcs: u8) -> Simulation {
    let text = format!(
        "[simulation]\ncycles = 1000\nwarmup = 100\nseed = 5\n[topology]\n{topology}\n\
         [router]\nvcs = {vcs}\npacket_size = 4\ninput_buffer = 16\noutput_buffer = 8\n\
         [routing]\n{routing}\n[traffic]\npattern = \"uniform\"\nload = 0.1\n"
    );
    let cfg = Config::parse(&text, &[]).unwrap_or_else(|e| panic!("config error: {e}"));
    Simulation::build(cfg).unwrap_or_else(|e| panic!("build error: {e}"))
}

fn mesh(k: u32) -> Simulation {
    build(&format!("kind = \"mesh\"\nsides = [{k}, {k}]\nendpoints_per_switch = 1"), "algorithm = \"dor\"", 1)
}

/// Mean over ordered pairs (self pairs included) of Manhattan distance + 1 on a k x k mesh.
fn mesh_ard(k: i64) -> f64 {
    let mut sum = 0i64;
    for a in 0..k * k {
        for b in 0..k * k {
            sum += (a % k - b % k).abs() + (a / k - b / k).abs() + 1;
        }
    }
    sum as f64 / (k * k * k * k) as f64
}

/// Sum of Manhattan distances over ordered pairs divided by the directed links.
fn mesh_link_weight_avg(k: i64) -> f64 {
    let n = k * k;
    let hops = (mesh_ard(k) - 1.0) * (n * n) as f64;
    hops / (4 * k * (k - 1)) as f64
}

fn assert_clean(r: &RoutesReport) {
    assert!(r.acyclic, "cycle: {:?}", r.cycle);
    assert!(r.cycle.is_empty());
    assert_eq!(r.unreachable_pairs, 0, "{:?}", r.unreachable);
}

#[test]
fn dor_on_meshes_matches_the_survey() {
    for (k, ard, avg) in [(4, 3.50, 13.33), (8, 6.25, 96.00)] {
        let r = analyse(&mesh(k as u32));
        assert_clean(&r);
        assert_eq!(r.switches, (k * k) as usize);
        assert!((r.average_routing_distance - mesh_ard(k)).abs() < 1e-12, "{r:?}");
        assert!((r.average_routing_distance - ard).abs() < 0.005);
        assert!((r.link_weight_avg - mesh_link_weight_avg(k)).abs() < 1e-9);
        assert!((r.link_weight_avg - avg).abs() < 0.005);
        assert_eq!(r.links, (4 * k * (k - 1)) as usize);
        assert_eq!(r.link_weights.len(), r.links);
        assert_eq!(r.vcs_used, 1);
        assert_eq!(r.longest_path, 2 * (k as u32 - 1));
        assert_eq!(r.longest_first_path, r.longest_path);
        // DOR is minimal: sigma measures the spread around gamma_perfect = the average.
        assert!((r.perfect_channel_load - r.link_weight_avg).abs() < 1e-9);
        assert!(r.sigma >= r.link_weight_std - 1e-9);
        assert!(r.link_weight_max >= r.link_weight_avg);
        // DOR on a mesh: XY routing; the middle X links carry the most.
        let total: f64 = r.link_weights.iter().map(|l| l.weight).sum();
        assert_eq!(total, (r.average_routing_distance - 1.0) * (k * k * k * k) as f64);
    }
    // The survey's standard deviations for DOR on the 4x4 and 8x8 meshes (Table 3).
    for (k, std) in [(4, 1.91), (8, 27.77)] {
        let r = analyse(&mesh(k));
        assert!((r.link_weight_std - std).abs() < 0.005, "std {}", r.link_weight_std);
    }
}

fn torus(vc_policy: &str, vcs: u8, sides: &str) -> Simulation {
    build(
        &format!("kind = \"torus\"\nsides = {sides}\nendpoints_per_switch = 1"),
        &format!("algorithm = \"dor\"\nvc_policy = \"{vc_policy}\""),
        vcs,
    )
}

#[test]
fn dor_on_a_torus_without_datelines_is_cyclic() {
    for sides in ["[6]", "[4, 4]"] {
        let sim = torus("any", 1, sides);
        let r = analyse(&sim);
        assert!(!r.acyclic, "{sides}");
        assert!(r.cycle.len() >= 2, "{:?}", r.cycle);
        assert_eq!(r.unreachable_pairs, 0);
        assert_eq!(r.vcs_used, 1);
        let net = &sim.net;
        // Each channel of the witness leads to the switch of the next one (the last to the
        // first's): consecutive channels are really dependent.
        for (i, c) in r.cycle.iter().enumerate() {
            let next = r.cycle[(i + 1) % r.cycle.len()];
            let PortTarget::Switch { switch, .. } = net.ports(c.switch)[c.port as usize].target else {
                panic!("cycle channel {c:?} is not a network link");
            };
            assert_eq!(switch, next.switch, "{:?}", r.cycle);
            assert_eq!(c.vc, 0);
            assert!(!c.escape);
        }
        // The same torus with the routing's dateline VCs is deadlock-free.
        let r = analyse(&torus("routing", 2, sides));
        assert_clean(&r);
        assert_eq!(r.vcs_used, 2);
    }
}

fn dragonfly(routing: &str, vcs: u8) -> Simulation {
    build("kind = \"dragonfly\"\np = 2\na = 4\nh = 2", &format!("algorithm = \"{routing}\""), vcs)
}

#[test]
fn dragonfly_min_and_valiant() {
    let r = analyse(&dragonfly("dragonfly_min", 2));
    assert_clean(&r);
    assert_eq!(r.vcs_used, 2);
    assert_eq!(r.longest_path, 3);
    assert_eq!(r.switches, 36);
    let r = analyse(&dragonfly("dragonfly_valiant", 3));
    assert_clean(&r);
    assert_eq!(r.vcs_used, 3);
    assert_eq!(r.longest_path, 5);
    // Every intermediate group is enumerated: more states than MIN explores.
    let min = analyse(&dragonfly("dragonfly_min", 3));
    assert!(r.states > 5 * min.states, "{} vs {}", r.states, min.states);
    // UGAL takes both the minimal and the Valiant routes.
    let r = analyse(&dragonfly("dragonfly_ugal", 3));
    assert_clean(&r);
    assert_eq!(r.vcs_used, 3);
    assert_eq!(r.longest_path, 5);
}

#[test]
fn par_needs_its_fourth_vc() {
    for arrangement in ["palmtree", "absolute"] {
        let par = |assignment: &str, vcs: u8| {
            build(
                &format!("kind = \"dragonfly\"\np = 2\na = 4\nh = 2\narrangement = \"{arrangement}\""),
                &format!("algorithm = \"dragonfly_par\"\n[routing.dragonfly_par]\nvc_assignment = \"{assignment}\""),
                vcs,
            )
        };
        // A packet diverted at the next router of its source group takes two local hops
        // there, then up to two global hops: 6 hops, its VCs 0, 1, 1, 2, 2, 3.
        let r = analyse(&par("diverted", 4));
        assert_clean(&r);
        assert_eq!((r.vcs_used, r.longest_path), (4, 6), "{arrangement}");
        // More routes than UGAL's: the revision's.
        let ugal = analyse(&build(
            &format!("kind = \"dragonfly\"\np = 2\na = 4\nh = 2\narrangement = \"{arrangement}\""),
            "algorithm = \"dragonfly_ugal\"",
            3,
        ));
        assert!(r.states > ugal.states, "{} vs {}", r.states, ugal.states);
        // With Kim and Dally's VCs (VC = global hops) the two local hops share VC 0: the
        // witness is a cycle of local channels of one group on VC 0.
        let r = analyse(&par("global_hops", 3));
        assert!(!r.acyclic, "{arrangement}");
        assert_eq!(r.unreachable_pairs, 0);
        let net = &par("global_hops", 3).net;
        let group = |switch: u32| switch / 4;
        assert!(r.cycle.len() >= 2, "{:?}", r.cycle);
        assert!(
            r.cycle.iter().all(|c| c.vc == 0 && group(c.switch) == group(r.cycle[0].switch)),
            "{:?}",
            r.cycle
        );
        for (i, c) in r.cycle.iter().enumerate() {
            let next = r.cycle[(i + 1) % r.cycle.len()];
            let PortTarget::Switch { switch, .. } = net.ports(c.switch)[c.port as usize].target else {
                panic!("cycle channel {c:?} is not a network link");
            };
            assert_eq!(switch, next.switch, "{:?}", r.cycle);
        }
    }
}

#[test]
fn every_dragonfly_routing_needs_the_vcs_it_states() {
    // Each Dragonfly routing is deadlock-free on the VCs its registry entry states, and
    // with one VC less (its top VCs folded onto the last) the verifier finds a cycle.
    for arrangement in ["palmtree", "absolute"] {
        let topology = format!("kind = \"dragonfly\"\np = 2\na = 4\nh = 2\narrangement = \"{arrangement}\"");
        let mut states = Vec::new();
        for (routing, vcs, longest) in [
            ("dragonfly_min", 2, 3),
            ("dragonfly_valiant", 3, 5),
            ("dragonfly_ugal", 3, 5),
            ("dragonfly_ugal_g", 3, 5),
            ("dragonfly_pb", 3, 5),
            ("dragonfly_par", 4, 6),
            ("dragonfly_imb", 4, 6),
            // Its routes are bounded by 8 hops (two local ones in each of three groups);
            // the exhaustive exploration finds none longer than 7.
            ("dragonfly_ofar", 6, 7),
            ("dragonfly_q", 4, 5),
        ] {
            let sim = build(&topology, &format!("algorithm = \"{routing}\""), vcs);
            assert_eq!(sim.routing().vcs_required(), vcs, "{routing}");
            let r = analyse(&sim);
            assert_clean(&r);
            assert_eq!((r.vcs_used, r.longest_path), (vcs as u32, longest), "{routing} {arrangement}");
            states.push(r.states);
            let folded =
                build(&topology, &format!("algorithm = \"{routing}\"\nvc_policy = \"folded\""), vcs - 1);
            let r = analyse(&folded);
            assert!(!r.acyclic && r.cycle.len() >= 2, "{routing} {arrangement} on {} VCs", vcs - 1);
            assert_eq!(r.unreachable_pairs, 0, "{routing}");
        }
        // PAR through a random router of the intermediate group: the local hops before and
        // after that router, in one group, need a VC each (5).
        let par = |vcs: u8, policy: &str| {
            build(
                &topology,
                &format!(
                    "algorithm = \"dragonfly_par\"\nvc_policy = \"{policy}\"\n\
                     [routing.dragonfly_par]\nintermediate = \"router\""
                ),
                vcs,
            )
        };
        assert_eq!(par(5, "routing").routing().vcs_required(), 5);
        let r = analyse(&par(5, "routing"));
        assert_clean(&r);
        assert_eq!((r.vcs_used, r.longest_path), (5, 7), "{arrangement}");
        assert!(!analyse(&par(4, "folded")).acyclic, "{arrangement}");
        // With the fallback both ways are candidates at PAR's two decisions, whatever the
        // load: the same routes, on the same VCs.
        let fallback = build(
            &topology,
            "algorithm = \"dragonfly_par\"\n[routing.dragonfly_par]\nintermediate = \"router\"\nfallback = true",
            5,
        );
        let r = analyse(&fallback);
        assert_clean(&r);
        assert_eq!((r.vcs_used, r.longest_path), (5, 7), "{arrangement} with the fallback");
        // UGAL-G decides on what other routers reported: the verifier asks again with each
        // reported byte full and follows both its choices. It diverts where UGAL-L cannot:
        // when both paths leave by the same local port (one gateway router owns both global
        // channels) UGAL-L compares that port with itself and stays minimal, UGAL-G
        // compares the two global channels.
        assert!(
            states[3] > states[2],
            "{arrangement}: UGAL-G's {} states vs UGAL-L's {}",
            states[3],
            states[2]
        );
        // OFAR's own way: any VC, with the escape subnetwork on the last, whose channel
        // dependencies are acyclic (Duato) while the whole graph is not.
        let ofar = build(&topology, "algorithm = \"dragonfly_ofar\"\nvc_policy = \"any\"\nescape_vcs = 1", 3);
        let r = analyse(&ofar);
        assert_clean(&r);
        assert!(!r.full_cdg_acyclic, "{arrangement}: OFAR on any VC alone would be cyclic");
        // Piggybacking diverts there too, when the gateway's mark says its channel is
        // congested.
        assert!(
            states[4] > states[2],
            "{arrangement}: piggybacking's {} states vs UGAL-L's {}",
            states[4],
            states[2]
        );
    }
}

#[test]
fn every_dragonfly_routing_routes_around_failed_global_links_on_the_vcs_it_states() {
    // 6 of the 36 global links of a Dragonfly(2,4,2) fail: a group pair without its link
    // goes through a third group, so MIN takes Valiant's 3 VCs and OFAR a seventh; the
    // others keep theirs, their intermediates drawn among the groups linked to both ends.
    for arrangement in ["palmtree", "absolute"] {
        let topology = format!(
            "kind = \"dragonfly\"\np = 2\na = 4\nh = 2\narrangement = \"{arrangement}\"\n\
             failed_links = 6\nfailed_link_class = \"global\"\nfault_seed = 3"
        );
        for (routing, vcs) in [
            ("dragonfly_min", 3),
            ("dragonfly_valiant", 3),
            ("dragonfly_ugal", 3),
            ("dragonfly_ugal_g", 3),
            ("dragonfly_pb", 3),
            ("dragonfly_par", 4),
            ("dragonfly_imb", 4),
            ("dragonfly_ofar", 7),
            ("dragonfly_q", 4),
        ] {
            let sim = build(&topology, &format!("algorithm = \"{routing}\""), vcs);
            assert_eq!(sim.routing().vcs_required(), vcs, "{routing}");
            let r = analyse(&sim);
            assert_clean(&r);
            let folded =
                build(&topology, &format!("algorithm = \"{routing}\"\nvc_policy = \"folded\""), vcs - 1);
            let r = analyse(&folded);
            // MIN's third VC makes the general argument (the VC goes up at every global
            // hop); on this fault set its detours through the first group linked to both
            // ends close no cycle on 2 either, which `xnet routes` tells for a given one.
            assert_eq!(r.acyclic, routing == "dragonfly_min", "{routing} {arrangement} on {} VCs", vcs - 1);
        }
        // MIN's detours are real: its longest route takes two global hops.
        let min = analyse(&build(&topology, "algorithm = \"dragonfly_min\"", 3));
        assert_eq!(min.longest_path, 5, "{arrangement}");
    }
}

#[test]
fn the_dragonfly_routings_refuse_a_failed_local_link_saying_what_to_do() {
    let text = "[simulation]\ncycles = 100\n[topology]\nkind = \"dragonfly\"\np = 2\na = 4\nh = 2\n\
                failed_links = 4\nfailed_link_class = \"local\"\n[router]\nvcs = 3\n\
                [routing]\nalgorithm = \"dragonfly_ugal\"\n[traffic]\npattern = \"uniform\"\nload = 0.1\n";
    let cfg = Config::parse(text, &[]).expect("valid config");
    let e = Simulation::build(cfg).err().expect("refused").to_string();
    assert!(
        e.starts_with("routing.algorithm: the Dragonfly routings route around failed global links only"),
        "{e}"
    );
    assert!(e.contains("failed_link_class = \"global\""), "{e}");
}

#[test]
fn minimal_with_the_ladder_on_a_random_regular_graph() {
    let sim = build(
        "kind = \"random_regular\"\nswitches = 32\ndegree = 4\nendpoints_per_switch = 1",
        "algorithm = \"minimal\"\nvc_policy = \"ladder\"",
        8,
    );
    let diameter = summarize(&sim.net).diameter;
    let r = analyse(&sim);
    assert_clean(&r);
    assert_eq!(r.vcs_used, diameter);
    assert_eq!(r.longest_path, diameter);
    // Minimal routes: gamma_perfect is the average link weight.
    assert!((r.perfect_channel_load - r.link_weight_avg).abs() < 1e-9);
    // Without the ladder (all on VC 0), minimal routing on this graph has a cycle.
    let sim = build(
        "kind = \"random_regular\"\nswitches = 32\ndegree = 4\nendpoints_per_switch = 1",
        "algorithm = \"minimal\"\nvc_policy = \"any\"",
        1,
    );
    assert!(!analyse(&sim).acyclic);
}

#[test]
fn report_is_the_same_on_1_and_2_threads() {
    let sims = [
        dragonfly("dragonfly_valiant", 3),
        torus("any", 1, "[4, 4]"),
        build(
            "kind = \"random_regular\"\nswitches = 24\ndegree = 5\nendpoints_per_switch = 2",
            "algorithm = \"minimal\"",
            8,
        ),
    ];
    for sim in &sims {
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let mut r = pool.install(|| analyse(sim));
            r.seconds = 0.0;
            r
        };
        let one = run(1);
        assert_eq!(one, run(2));
        assert_eq!(one, run(2));
    }
}

#[test]
fn spread_link_weights_follow_every_candidate() {
    // Minimal routing on an 8x8 torus offers every minimal next hop: spread evenly over
    // them, every link of the (link-transitive) torus carries the same load, the average
    // (sum of distances over the 256 directed links) being the first-candidate one.
    let t = build(
        "kind = \"torus\"\nsides = [8, 8]\nendpoints_per_switch = 1",
        "algorithm = \"minimal\"\nvc_policy = \"ladder\"",
        8,
    );
    let r = analyse(&t);
    assert_clean(&r);
    assert!((r.spread_link_weight_avg - r.link_weight_avg).abs() < 1e-6);
    assert!((r.spread_link_weight_avg - 64.0).abs() < 1e-6, "{}", r.spread_link_weight_avg);
    assert!(r.spread_link_weight_std < 1e-5, "{}", r.spread_link_weight_std);
    assert!(r.link_weight_std > 10.0, "the first candidates are not balanced: {}", r.link_weight_std);
    assert_eq!(r.spread_destinations, 64);
    // A single-path routing: the spread weights are the first-candidate ones.
    let d = analyse(&mesh(6));
    assert!((d.spread_link_weight_std - d.link_weight_std).abs() < 1e-6);
    assert_eq!(d.spread_link_weight_max, d.link_weight_max as f64);
}
