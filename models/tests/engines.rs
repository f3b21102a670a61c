//! The table engines of the survey and the Angara seed: `mud`, `tor`, `lash_tor`, `smart`, `lturn`, `sr`, `dl`,
//! `angara_bfs`, `angara_sssp`, `angara_genetic`. Verified acyclic and complete, with the layer counts, the
//! average routing distance and the link weights the sources report where they can be
//! reproduced.

mod common;
use xnet_models::analysis::{analyse, RoutesReport};
use xnet_models::config::Config;
use xnet_models::sim::Simulation;

fn text(topology: &str, algo: &str, vcs: u8, extra: &str) -> String {
    format!(
        "[simulation]\ncycles = 1000\nwarmup = 100\nseed = 5\n[topology]\n{topology}\nendpoints_per_switch = 1\n\
         [router]\nvcs = {vcs}\npacket_size = 4\ninput_buffer = 16\noutput_buffer = 8\n\
         [routing]\nalgorithm = \"{algo}\"\nselection = \"first\"\n{extra}\n[traffic]\npattern = \"uniform\"\nload = 0.1\n"
    )
}

fn try_build(topology: &str, algo: &str, vcs: u8, extra: &str) -> Result<Simulation, String> {
    let cfg = Config::parse(&text(topology, algo, vcs, extra), &[]).map_err(|e| e.to_string())?;
    Simulation::build(cfg).map_err(|e| e.to_string())
}

fn build(topology: &str, algo: &str, vcs: u8) -> Simulation {
    try_build(topology, algo, vcs, "").unwrap_or_else(|e| panic!("{algo} on {topology}: {e}"))
}

fn mesh(x: u32, y: u32) -> String {
    format!("kind = \"mesh\"\nsides = [{x}, {y}]")
}

fn torus(x: u32, y: u32) -> String {
    format!("kind = \"torus\"\nsides = [{x}, {y}]")
}

/// Analyses `algo`; asserts it is acyclic and complete and uses `vcs_required` VCs.
fn verified(topology: &str, algo: &str, vcs: u8) -> (Simulation, RoutesReport) {
    let sim = build(topology, algo, vcs);
    let r = analyse(&sim);
    assert!(r.acyclic, "{algo} on {}: cycle {:?}", r.network, r.cycle);
    assert_eq!(r.unreachable_pairs, 0, "{algo} on {}: {:?}", r.network, r.unreachable);
    assert_eq!(r.vcs_used, sim.routing().vcs_required() as u32, "{algo} on {}", r.network);
    assert!(r.longest_path <= sim.routing().max_hops(), "{algo} on {}", r.network);
    (sim, r)
}

/// `algo` on a 6x6 mesh with 6 failed links, offered load 1.
fn faulty_mesh_at_full_load(algo: &str, vcs: u8, extra: &str) -> Simulation {
    let topo = "kind = \"mesh\"\nsides = [6, 6]\nfailed_links = 6";
    let overrides = ["simulation.seed=4".to_string(), "traffic.load=1.0".to_string()];
    let cfg = Config::parse(&text(topo, algo, vcs, extra), &overrides).expect("config");
    Simulation::build(cfg).unwrap_or_else(|e| panic!("{algo}: {e}"))
}

/// Runs `sim` on 2 threads: it must drain, and no packet may be lost or duplicated.
fn delivers_everything(sim: &mut Simulation) {
    sim.record_deliveries = true;
    let run = common::run(sim, 2);
    assert_eq!(run.status, xnet_models::sim::Status::Completed);
    assert_eq!(
        run.summary.generated_total,
        run.summary.delivered_total + run.resident_end + run.on_wires_end
    );
    assert!(run.summary.delivered_total > 0);
}

/// ARD of minimal routing on `topology`.
fn minimal_ard(topology: &str) -> f64 {
    analyse(&build(topology, "minimal", 32)).average_routing_distance
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// Survey, Table 5 (ARD) and Table 4 (link weight average) for the meshes: every engine
/// with 2 VCs is minimal there.
#[test]
fn on_meshes_every_engine_is_minimal_with_two_vcs() {
    for (x, y, ard, avg) in [(4, 4, 3.50, 13.33), (8, 4, 4.875, 38.15), (8, 8, 6.25, 96.00)] {
        let topo = mesh(x, y);
        for algo in ["mud", "tor", "lash_tor", "dl"] {
            let (_, r) = verified(&topo, algo, 2);
            assert!(close(r.average_routing_distance, ard, 1e-9), "{algo} {}: {r:?}", r.network);
            assert!(close(r.link_weight_avg, avg, 0.005), "{algo} {}: {}", r.network, r.link_weight_avg);
            assert_eq!(r.longest_path, x + y - 2, "{algo} {}", r.network);
        }
    }
}

/// TOR is minimal on every torus of the survey with 2 layers (Table 5: 3.00, 4.00, 5.00,
/// 7.00), like the survey's TOR on 2 VCs; the 4x4 torus even needs only 1.
#[test]
fn tor_is_minimal_on_the_surveys_tori_with_two_layers() {
    for (x, y, ard, avg, layers) in
        [(4, 4, 3.0, 8.0, 1), (8, 4, 4.0, 24.0, 2), (8, 8, 5.0, 64.0, 2), (16, 8, 7.0, 192.0, 2)]
    {
        let topo = torus(x, y);
        let (sim, r) = verified(&topo, "tor", 2);
        assert_eq!(sim.routing().vcs_required(), layers, "{}", r.network);
        assert!(
            close(r.average_routing_distance, ard, 1e-9),
            "{}: {}",
            r.network,
            r.average_routing_distance
        );
        assert!(close(r.average_routing_distance, minimal_ard(&topo), 1e-9));
        assert!(close(r.link_weight_avg, avg, 1e-9), "{}: {}", r.network, r.link_weight_avg);
        assert_eq!(r.longest_path, x / 2 + y / 2);
        assert!(close(r.perfect_channel_load, r.link_weight_avg, 1e-9));
    }
    // One VC is too few on the 8x8 torus: the error names the key and both numbers.
    let e = try_build(&torus(8, 8), "tor", 1, "").err().expect("refused");
    assert!(e.contains("router.vcs") && e.contains("tor needs 2 layers, 1 available"), "{e}");
}

/// MUD with 2 and 3 Up*/Down* instances reproduces the survey's ARD (Table 5: 4.00, 5.04,
/// 7.08) and link weight averages (Table 4: 24.0, 64.6, 194.4; 3 VCs: 64.3) on the tori:
/// non-minimal beyond 8x4, improving with a third instance. (The standard deviations
/// differ: here the first candidate is the lowest port, the survey balanced the paths.)
#[test]
fn mud_is_non_minimal_on_larger_tori_as_in_the_survey() {
    for (x, y, vcs, ard, avg) in [
        (8, 4, 2, 4.00, 24.0),
        (8, 8, 2, 5.04, 64.6),
        (16, 8, 2, 7.08, 194.4),
        (8, 4, 3, 4.00, 24.0),
        (8, 8, 3, 5.02, 64.3),
    ] {
        let (sim, r) = verified(&torus(x, y), "mud", vcs);
        assert_eq!(sim.routing().vcs_required(), vcs);
        assert!(
            close(r.average_routing_distance, ard, 0.005),
            "{} {vcs}: {}",
            r.network,
            r.average_routing_distance
        );
        assert!(close(r.link_weight_avg, avg, 0.05), "{} {vcs}: {}", r.network, r.link_weight_avg);
    }
    let (_, two) = verified(&torus(8, 8), "mud", 2);
    let (_, three) = verified(&torus(8, 8), "mud", 3);
    assert!(
        two.average_routing_distance > 5.0 && three.average_routing_distance < two.average_routing_distance
    );
}

/// Roots: the least eccentric switch, then each maximising its distance to those chosen.
#[test]
fn mud_spreads_its_roots_and_with_one_vc_is_up_down() {
    use xnet_models::routing::mud::Mud;
    let sim = build(&mesh(8, 8), "mud", 3);
    let mud = Mud::new(&sim.net, 3, None).unwrap();
    // (3,3) is the first central switch; (7,7) is 8 hops away; (7,0) and (0,7) are 7 hops
    // from both, the lower id wins.
    assert_eq!(mud.roots(), vec![27, 63, 7]);
    assert_eq!(Mud::new(&sim.net, 200, None).unwrap().roots().len(), 64);
    let (_, one) = verified(&torus(6, 5), "mud", 1);
    let ud = analyse(&build(&torus(6, 5), "up_down", 1));
    assert_eq!(one.link_weights, ud.link_weights);
    assert_eq!(one.vcs_used, 1);
}

/// LASH-TOR always fits the VCs given; with enough of them it is minimal. The survey's
/// LASH-TOR is minimal on all its tori with 2 VCs; here the last layer falls back to
/// Up*/Down* where a path's remaining dependencies do not fit, so on the larger tori a
/// few paths are longer with 2 VCs (8x4: 4.055, 8x8: 5.144) and almost none with 3.
#[test]
fn lash_tor_fits_any_vcs_and_is_minimal_with_enough() {
    for (x, y, vcs, ard) in [(4, 4, 2, 3.0), (8, 4, 3, 4.0), (8, 8, 2, 5.144), (8, 8, 3, 5.009)] {
        let (sim, r) = verified(&torus(x, y), "lash_tor", vcs);
        assert!(sim.routing().vcs_required() <= vcs);
        assert!(
            close(r.average_routing_distance, ard, 0.0005),
            "{} {vcs}: {}",
            r.network,
            r.average_routing_distance
        );
    }
    let rrg = "kind = \"random_regular\"\nswitches = 32\ndegree = 4";
    let lash = build(rrg, "lash", 16).routing().vcs_required();
    assert!(lash >= 3, "lash: {lash} layers");
    for vcs in 1..=lash {
        let (sim, r) = verified(rrg, "lash_tor", vcs);
        assert!(sim.routing().vcs_required() <= vcs);
        if vcs == lash {
            assert!(
                close(r.average_routing_distance, minimal_ard(rrg), 1e-9),
                "{}",
                r.average_routing_distance
            );
        }
    }
    // With 1 VC everything is in the Up*/Down* layer.
    let (sim, _) = verified(&torus(5, 5), "lash_tor", 1);
    assert_eq!(sim.routing().vcs_required(), 1);
}

/// The engines run in the simulator past saturation without deadlock, delivering everything
/// to the right place.
#[test]
fn engines_run_past_saturation() {
    for (topo, algo, vcs) in [
        (torus(4, 4), "mud", 2),
        (torus(4, 4), "tor", 2),
        (torus(4, 4), "lash_tor", 2),
        (torus(4, 4), "angara_sssp", 2),
        ("kind = \"torus\"\nsides = [3, 3, 3]\nfailed_links = 2".to_string(), "angara_bfs", 2),
        ("kind = \"random_regular\"\nswitches = 16\ndegree = 4".to_string(), "lash_tor", 2),
    ] {
        let cfg = Config::parse(&text(&topo, algo, vcs, ""), &["traffic.load=1.0".to_string()]).unwrap();
        let mut sim = Simulation::build(cfg).unwrap();
        sim.record_deliveries = true;
        let r = common::run(&sim, 2);
        assert_eq!(r.status, xnet_models::sim::Status::Completed, "{algo}");
        assert!(r.summary.accepted_load > 0.05, "{algo}: {:?}", r.summary);
        assert_eq!(r.summary.generated_total, r.summary.delivered_total + r.resident_end + r.on_wires_end);
        assert!(r.deliveries.iter().all(|d| d.received_by == d.dst));
    }
}

/// Angara on tori: BFS and SSSP tables are minimal, acyclic with the dateline VCs, and
/// SSSP balances better: a lower edge-forwarding index (link weight max) and sigma(4, R).
#[test]
fn angara_tables_are_minimal_and_sssp_lowers_the_edge_forwarding_index() {
    // (sides, BFS max, SSSP max): measured values, pinned.
    for (sides, bfs_max, sssp_max) in
        [("[4, 4, 4]", 52.0, 35.0), ("[3, 3, 3, 3]", 46.0, 43.0), ("[8, 8]", 95.0, 68.0)]
    {
        let topo = format!("kind = \"torus\"\nsides = {sides}");
        let min = analyse(&build(&topo, "minimal", 32));
        let mut got = Vec::new();
        for algo in ["angara_bfs", "angara_sssp"] {
            let (sim, r) = verified(&topo, algo, 2);
            assert_eq!(r.vcs_used, 2, "{algo} {sides}");
            assert!(close(r.average_routing_distance, min.average_routing_distance, 1e-9), "{algo} {sides}");
            assert_eq!(r.longest_path, min.longest_path, "{algo} {sides}");
            assert_eq!(sim.routing().max_hops(), min.longest_path);
            assert!(close(r.perfect_channel_load, r.link_weight_avg, 1e-9));
            got.push((r.link_weight_max, r.sigma));
        }
        let ((bm, bs), (sm, ss)) = (got[0], got[1]);
        assert_eq!((bm, sm), (bfs_max, sssp_max), "{sides}: sigma {bs} / {ss}");
        assert!(sm <= bm && ss < bs, "{sides}: BFS {bm} sigma {bs}, SSSP {sm} sigma {ss}");
    }
}

/// The Desmos cluster of the Angara paper's Table 2 (Mukosey, Semenov, Tretiakov,
/// arXiv:2110.00851): a 4x2x2x2 torus whose size-2 dimensions are meshes ("when d_i is 2
/// ... mesh"), 32 nodes. The paper reports max gamma_c 48 (BFS) and 28 (SSSP), sigma(4, R)
/// 12.25 and 6.30, max D 5. SSSP matches exactly (28, sigma 6.50 here); the BFS
/// tie-breaking is not fully specified in the paper and gives 36 here.
#[test]
fn angara_on_the_desmos_torus_matches_the_seeds_sssp_result() {
    let topo = "kind = \"torus\"\nsides = [4, 2, 2, 2]\nwrap = [true, false, false, false]";
    let (_, bfs) = verified(topo, "angara_bfs", 2);
    let (_, sssp) = verified(topo, "angara_sssp", 2);
    assert_eq!(sssp.link_weight_max, 28.0);
    assert_eq!(bfs.link_weight_max, 36.0);
    assert_eq!((bfs.longest_path, sssp.longest_path), (5, 5));
    assert!((sssp.sigma - 6.50).abs() < 0.01, "{}", sssp.sigma);
    assert!(sssp.sigma < bfs.sigma);
}

/// SMART (the survey's section 4.4): one VC, acyclic and complete; minimal on the survey's
/// meshes and the 4x4 torus; on the 8x4 and 8x8 tori its routes are at most 1.1 % longer than the
/// survey's SMART (ARD 4.12 and 5.26) and shorter than Up*/Down*'s, whose restrictions
/// are one possible set of cuts.
#[test]
fn smart_cuts_the_dependency_cycles_where_routes_grow_least() {
    for (x, y) in [(4, 4), (8, 4), (8, 8)] {
        let (sim, r) = verified(&mesh(x, y), "smart", 1);
        assert_eq!(sim.routing().vcs_required(), 1);
        assert!(close(r.average_routing_distance, minimal_ard(&mesh(x, y)), 1e-9), "{}", r.network);
        let summary = sim.routing().build_summary().expect("a summary");
        assert!(summary.starts_with("smart: ") && !summary.contains("tree mode"), "{summary}");
    }
    for (x, y, survey) in [(4, 4, 3.00), (8, 4, 4.12), (8, 8, 5.26)] {
        let (_, r) = verified(&torus(x, y), "smart", 1);
        let (_, ud) = verified(&torus(x, y), "up_down", 1);
        let ard = r.average_routing_distance;
        assert!(ard <= survey * 1.011 && ard >= minimal_ard(&torus(x, y)) - 1e-9, "{}: {ard}", r.network);
        assert!(
            ard <= ud.average_routing_distance,
            "{}: {ard} against UD {}",
            r.network,
            ud.average_routing_distance
        );
    }
}

/// On a faulty mesh where cutting freely would leave a pair without a legal route, SMART
/// restarts in tree mode; the routes are still complete and acyclic, and a saturated
/// network delivers every packet. Networks above its limit are refused.
#[test]
fn smart_falls_back_to_tree_mode_and_delivers() {
    let mut sim = faulty_mesh_at_full_load("smart", 1, "");
    let r = analyse(&sim);
    assert!(r.acyclic && r.unreachable_pairs == 0, "{r:?}");
    let summary = sim.routing().build_summary().expect("a summary");
    assert!(summary.contains("tree mode"), "{summary}");
    delivers_everything(&mut sim);
    let e = try_build(&mesh(17, 16), "smart", 1, "").err().expect("refused");
    assert!(e.contains("routing.algorithm") && e.contains("at most 256 switches"), "{e}");
}

/// The paper's Genetic algorithm on the Desmos systems of its Table 2 (8, 16 and 32 nodes:
/// tori 4x2, 4x2x2 and 4x2x2x2 whose size-2 dimensions are meshes). The paper reports
/// max gamma_c / sigma(4, R) of 4 / 0, 11 / 1.745 and 27 / 6.274; with seed 5 here,
/// 4 / 0, 10 / 1.744 and 26 / 6.321. Genetic balances better than SSSP on all three, as in
/// the paper, and its tables are minimal and deadlock-free.
#[test]
fn angara_genetic_reproduces_the_desmos_table() {
    let desmos = |sides: &str, wrap: &str| format!("kind = \"torus\"\nsides = {sides}\nwrap = {wrap}");
    for (sides, wrap, max, sigma) in [
        ("[4, 2]", "[true, false]", 4.0, 0.0),
        ("[4, 2, 2]", "[true, false, false]", 10.0, 1.744),
        ("[4, 2, 2, 2]", "[true, false, false, false]", 26.0, 6.321),
    ] {
        let topo = desmos(sides, wrap);
        let (sim, genetic) = verified(&topo, "angara_genetic", 2);
        let (_, sssp) = verified(&topo, "angara_sssp", 2);
        assert_eq!(genetic.link_weight_max, max, "{sides}");
        assert!(close(genetic.sigma, sigma, 0.0005), "{sides}: {}", genetic.sigma);
        assert!(genetic.sigma < sssp.sigma, "{sides}: {} against SSSP {}", genetic.sigma, sssp.sigma);
        assert!(close(genetic.average_routing_distance, sssp.average_routing_distance, 1e-9), "minimal");
        let summary = sim.routing().build_summary().expect("a summary");
        assert!(summary.contains("genetic search") && summary.contains("generations"), "{summary}");
    }
}

/// The genetic search's result does not depend on the thread count, does depend on the
/// seed, and bad settings are refused naming the key.
#[test]
fn angara_genetic_is_deterministic_and_checks_its_settings() {
    let topo = "kind = \"torus\"\nsides = [4, 4, 4]";
    let report = |threads: usize, seed: u64| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
        pool.install(|| {
            let cfg =
                Config::parse(&text(topo, "angara_genetic", 2, ""), &[format!("simulation.seed={seed}")])
                    .expect("config");
            let sim = Simulation::build(cfg).expect("build");
            let r = analyse(&sim);
            (r.sigma, r.link_weight_max, sim.routing().build_summary())
        })
    };
    let one = report(1, 5);
    assert_eq!(one, report(2, 5));
    assert_ne!(one.0, report(2, 6).0, "another seed, another search");
    for (extra, key, says) in [
        ("[routing.angara_genetic]\npopulation = 1", "routing.angara_genetic.population", "at least 2"),
        ("[routing.angara_genetic]\nmutation = 1.5", "routing.angara_genetic.mutation", "[0, 1]"),
        ("[routing.angara_genetic]\nelitism = 3", "elitism", "unknown"),
    ] {
        let e = try_build(topo, "angara_genetic", 2, extra).err().expect("refused");
        assert!(e.contains(key) && e.contains(says), "{e}");
    }
}

/// Meshes need one VC; failed links are routed around where the Angara rules allow and
/// refused with the pair named otherwise; other topologies and too few VCs are refused.
#[test]
fn angara_on_meshes_faults_and_errors() {
    let (sim, r) = verified("kind = \"mesh\"\nsides = [4, 4, 4]", "angara_sssp", 1);
    assert_eq!((sim.routing().vcs_required(), r.vcs_used), (1, 1));
    assert!(close(r.average_routing_distance, 4.75, 1e-9));
    for algo in ["angara_bfs", "angara_sssp"] {
        let (sim, r) = verified("kind = \"torus\"\nsides = [4, 4, 4]\nfailed_links = 4", algo, 2);
        assert_eq!(sim.net.failed_links, 4);
        assert!(r.average_routing_distance > 4.0, "detours around the faults");
        let e = try_build("kind = \"mesh\"\nsides = [3, 3]\nfailed_links = 2", algo, 2, "").err().unwrap();
        assert!(e.contains("topology.failed_links") && e.contains("no legal route from switch"), "{e}");
        let e = try_build("kind = \"random_regular\"\nswitches = 16\ndegree = 4", algo, 2, "").err().unwrap();
        assert!(e.contains("routing.algorithm") && e.contains("needs a torus or mesh"), "{e}");
        let e = try_build(&torus(4, 4), algo, 1, "").err().unwrap();
        assert!(e.contains("router.vcs") && e.contains("needs 2 VCs, 1 available"), "{e}");
    }
}

#[test]
fn dfs_is_up_down_over_a_depth_first_tree_with_the_best_root() {
    // One VC, acyclic and complete; minimal on meshes (the survey's Table 2: DFS's ARD is
    // the minimal 3.50 / 6.25 on the 4x4 / 8x8 meshes).
    for (x, y) in [(4, 4), (8, 8)] {
        let (_, r) = verified(&mesh(x, y), "dfs", 1);
        assert!(
            close(r.average_routing_distance, minimal_ard(&mesh(x, y)), 1e-9),
            "{}",
            r.average_routing_distance
        );
    }
    // On tori its routes are no longer than Up*/Down*'s (the root is the best of all
    // switches): 8x4, 4.07 against 4.25 (the survey: DFS 4.43, UD 4.25).
    let (_, dfs) = verified(&torus(8, 4), "dfs", 1);
    let (_, ud) = verified(&torus(8, 4), "up_down", 1);
    assert!(dfs.average_routing_distance <= ud.average_routing_distance);
    assert!(dfs.average_routing_distance > minimal_ard(&torus(8, 4)));
    // A given root is used as is.
    let rooted = try_build(&torus(8, 4), "dfs", 1, "[routing.dfs]\nroot = 31").expect("root 31");
    assert!(analyse(&rooted).acyclic);
    let e = try_build(&torus(8, 4), "dfs", 1, "[routing.dfs]\nroot = 32").err().expect("refused");
    assert!(e.contains("routing.dfs.root") && e.contains("does not exist"), "{e}");
}

/// A random regular graph of 64 switches of degree 6 (the survey's engines must work on
/// irregular networks as well).
fn rrg() -> String {
    "kind = \"random_regular\"\nswitches = 64\ndegree = 6".to_string()
}

/// LTURN (our reading: no right -> left turn on the left-right graph of a BFS tree) is
/// deadlock-free on every network, minimal on the survey's meshes and no longer than
/// Up*/Down* on its tori (8x4: 4.25 as UD, 8x8: 5.3887 against 5.50, 16x8: 8.0073 against
/// 8.125; the survey's LTURN: 4.14, 5.32, 7.47).
#[test]
fn lturn_is_deadlock_free_everywhere_and_no_longer_than_up_down_on_tori() {
    for (x, y) in [(4, 4), (8, 4), (8, 8)] {
        let (sim, r) = verified(&mesh(x, y), "lturn", 1);
        assert_eq!(sim.routing().vcs_required(), 1);
        assert!(close(r.average_routing_distance, minimal_ard(&mesh(x, y)), 1e-9), "{}", r.network);
    }
    for (x, y, ard) in [(4, 4, 3.0), (8, 4, 4.25), (8, 8, 5.3887), (16, 8, 8.0073)] {
        let (sim, r) = verified(&torus(x, y), "lturn", 1);
        let (_, ud) = verified(&torus(x, y), "up_down", 1);
        assert!(
            close(r.average_routing_distance, ard, 5e-5),
            "{}: {}",
            r.network,
            r.average_routing_distance
        );
        assert!(r.average_routing_distance <= ud.average_routing_distance + 1e-9, "{}", r.network);
        let summary = sim.routing().build_summary().expect("a summary");
        assert!(summary.starts_with("lturn: ") && summary.contains("turns forbidden"), "{summary}");
    }
    // Irregular: `verified` checks that the routes are complete and acyclic.
    verified(&rrg(), "lturn", 1);
    let e = try_build(&mesh(4, 4), "lturn", 1, "[routing.lturn]\nroot = 16").err().expect("refused");
    assert!(e.contains("routing.lturn.root"), "{e}");
}

/// DL over either base: with one layer it is its base routing exactly (the same link
/// weights), with two it is minimal on the survey's tori (its Table 5: 4.00, 5.00, 7.00)
/// where the base alone is not, and on a random regular graph it shortens the routes.
#[test]
fn dl_is_its_base_with_one_layer_and_minimal_with_two() {
    for (base, alone) in [("up_down", "up_down"), ("lturn", "lturn")] {
        let extra = format!("[routing.dl]\nbase = \"{base}\"");
        let dl = |topo: &str, vcs: u8| {
            let sim = try_build(topo, "dl", vcs, &extra).unwrap_or_else(|e| panic!("dl over {base}: {e}"));
            let r = analyse(&sim);
            assert!(r.acyclic && r.unreachable_pairs == 0, "dl over {base} on {}: {:?}", r.network, r.cycle);
            assert_eq!(r.vcs_used, sim.routing().vcs_required() as u32, "{}", r.network);
            r
        };
        for topo in [torus(8, 8), rrg()] {
            let one = dl(&topo, 1);
            let (_, base_alone) = verified(&topo, alone, 1);
            assert_eq!(one.link_weight_max, base_alone.link_weight_max, "{base} on {}", one.network);
            assert!(
                close(one.link_weight_std, base_alone.link_weight_std, 1e-9),
                "{base} on {}",
                one.network
            );
            assert!(close(one.average_routing_distance, base_alone.average_routing_distance, 1e-12));
        }
        for (x, y) in [(8, 4), (8, 8), (16, 8)] {
            let r = dl(&torus(x, y), 2);
            assert_eq!(r.vcs_used, 2, "{}", r.network);
            assert!(close(r.average_routing_distance, minimal_ard(&torus(x, y)), 1e-9), "{}", r.network);
        }
        let (one, two) = (dl(&rrg(), 1), dl(&rrg(), 2));
        assert!(two.average_routing_distance < one.average_routing_distance, "{base}");
        // Spare VCs: the routes stay as short, and DL needs only the layers they reach.
        let eight = dl(&rrg(), 8);
        assert!(close(eight.average_routing_distance, two.average_routing_distance, 1e-12), "{base}");
        assert!((2..8).contains(&eight.vcs_used), "{base}: {} VCs used of 8", eight.vcs_used);
    }
    let e = try_build(&mesh(4, 4), "dl", 2, "[routing.dl]\nbase = \"fx\"").err().expect("refused");
    assert!(e.contains("routing.dl") && e.contains("up_down") && e.contains("lturn"), "{e}");
}

/// DL at load 1 on a faulty mesh: deadlock-free in simulation too, no packet lost.
#[test]
fn dl_delivers_past_saturation_on_a_faulty_mesh() {
    let mut sim = faulty_mesh_at_full_load("dl", 2, "[routing.dl]\nbase = \"lturn\"");
    // Both layers are in use, and the dependencies of every route are acyclic.
    let r = analyse(&sim);
    assert!(r.acyclic && r.unreachable_pairs == 0, "{r:?}");
    assert_eq!((sim.routing().vcs_required(), r.vcs_used), (2, 2));
    delivers_everything(&mut sim);
}

/// SR (our reading: segments from a starting switch, one restriction inside each):
/// deadlock-free on every network (the build also checks the turns), minimal on the
/// survey's meshes, and on its tori no longer than the survey's SR (3.13, 4.36, 5.36;
/// here 3.0156, 4.1289, 5.2930). Above 256 switches the restrictions go in the middle of
/// each segment without a search, and the routes are still complete and acyclic.
#[test]
fn sr_is_deadlock_free_and_minimal_on_meshes() {
    for (x, y) in [(4, 4), (8, 4), (8, 8)] {
        let (sim, r) = verified(&mesh(x, y), "sr", 1);
        assert_eq!(sim.routing().vcs_required(), 1);
        assert!(close(r.average_routing_distance, minimal_ard(&mesh(x, y)), 1e-9), "{}", r.network);
    }
    for (x, y, ard, survey) in [(4, 4, 3.0156, 3.13), (8, 4, 4.1289, 4.36), (8, 8, 5.2930, 5.36)] {
        let (sim, r) = verified(&torus(x, y), "sr", 1);
        let got = r.average_routing_distance;
        assert!(close(got, ard, 5e-5) && got <= survey, "{}: {got}", r.network);
        let summary = sim.routing().build_summary().expect("a summary");
        assert!(summary.contains("placed where routes grow least"), "{summary}");
    }
    verified(&rrg(), "sr", 1);
    let (sim, _) = verified(&mesh(17, 16), "sr", 1);
    assert!(sim.routing().build_summary().expect("a summary").contains("in the middle"));
    let mut sim = faulty_mesh_at_full_load("sr", 1, "");
    let r = analyse(&sim);
    assert!(r.acyclic && r.unreachable_pairs == 0, "{r:?}");
    delivers_everything(&mut sim);
}
