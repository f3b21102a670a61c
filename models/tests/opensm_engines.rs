//! The routings that reproduce OpenSM's engines per LID (`ftree`, `dfsssp`, `minhop`): their
//! forwarding tables equal, entry for entry, those OpenSM 3.3.23 computed on ibsim for the
//! same fabrics (dumps in `data/opensm/`, see its README). For `ftree` a k-ary n-tree, one
//! with HCAs missing (dummy routes), parallel links and several equal down paths, and the
//! fabrics that are not fat trees refused naming why; for `dfsssp` and `minhop` a torus
//! with two HCAs per switch. scripts/validation/opensm_per_lid.py runs OpenSM itself on
//! larger fabrics (CI runs its small ones through cli/tests/opensm.rs).

mod common;
use common::build;
use xnet_models::analysis::analyse;
use xnet_models::packet::Packet;
use xnet_models::routing::{Candidate, LoadView};
use xnet_models::sim::Simulation;
use xnet_models::topology::{PortId, SwitchId};

const BASE: &str = r#"
[simulation]
cycles = 2000
warmup = 500
seed = 3
[topology]
TOPOLOGY
[router]
vcs = 1
[routing]
algorithm = "ftree"
[traffic]
pattern = "uniform"
load = 0.3
"#;

const FAT_TREE: &str = "kind = \"fat_tree\"\nk = 4\nn = 3";
const TORUS: &str = "kind = \"torus\"\nsides = [4, 4]\nendpoints_per_switch = 2";

struct Empty;

impl LoadView for Empty {
    fn vc_occupancy(&self, _: PortId, _: u8) -> u32 {
        0
    }
    fn port_occupancy(&self, _: PortId) -> u32 {
        0
    }
}

/// The configuration of `topology` (its `[topology]` lines) with `routing`.
fn config(topology: &str, overrides: &[String]) -> Simulation {
    let o: Vec<&str> = overrides.iter().map(String::as_str).collect();
    build(&BASE.replace("TOPOLOGY", topology), &o)
}

/// A fabric file's `[topology]` lines.
fn file(net: &str) -> String {
    format!("kind = \"file\"\ncontents = {}", toml::Value::String(net.into()))
}

/// The port every switch forwards each endpoint's packets on (but at its own switch).
fn ports(sim: &Simulation) -> Vec<(SwitchId, u32, PortId)> {
    let routing = sim.routing();
    let mut rng = xnet_models::rng::stream(1, xnet_models::rng::Purpose::Routing, 0);
    let mut out = Vec::new();
    let mut cands: Vec<Candidate> = Vec::new();
    for (e, &(home, _)) in sim.net.endpoint_location.iter().enumerate() {
        for s in 0..sim.net.num_switches() as SwitchId {
            if s == home {
                continue;
            }
            let mut p = Packet::new(0, 0, e as u32, 1, 0);
            p.hops = 1;
            cands.clear();
            routing.candidates(s, home, &mut p, &Empty, &mut rng, &mut cands);
            assert_eq!(cands.len(), 1, "one port at switch {s} for endpoint {e}");
            out.push((s, e as u32, cands[0].port));
        }
    }
    out
}

/// `routing`'s tables and OpenSM's (read by `tables`) on `topology`: every entry equal;
/// the routes deadlock-free on the routing's VCs.
fn equal_to_opensm(topology: &str, routing: &str, lfts: &str) {
    let vcs = if routing == "ftree" { 1 } else { 8 };
    let ours = config(topology, &[format!("routing.algorithm=\"{routing}\""), format!("router.vcs={vcs}")]);
    let lfts = format!("routing.tables.lfts_contents={}", toml::Value::String(lfts.into()));
    let theirs = config(topology, &["routing.algorithm=\"tables\"".into(), lfts, "router.vcs=1".into()]);
    let (a, b) = (ports(&ours), ports(&theirs));
    assert_eq!(a.len(), b.len());
    let differ: Vec<_> = a.iter().zip(&b).filter(|(x, y)| x != y).take(5).collect();
    assert!(
        differ.is_empty(),
        "{} of {} entries differ, e.g. {differ:?}",
        a.iter().zip(&b).filter(|(x, y)| x != y).count(),
        a.len()
    );
    let r = analyse(&ours);
    assert!(r.acyclic && r.unreachable_pairs == 0, "{routing}: {r:?}");
}

#[test]
fn ftree_tables_equal_opensm_on_a_k_ary_n_tree() {
    equal_to_opensm(FAT_TREE, "ftree", include_str!("data/opensm/ftree-4-ary-3-tree.lfts"));
    // One VC.
    assert_eq!(analyse(&config(FAT_TREE, &[])).vcs_used, 1);
}

#[test]
fn ftree_tables_equal_opensm_with_hcas_missing_parallel_links_and_several_down_paths() {
    for (net, lfts) in [
        (
            include_str!("data/opensm/ftree-4-ary-3-tree-missing.net"),
            include_str!("data/opensm/ftree-4-ary-3-tree-missing.lfts"),
        ),
        (include_str!("data/opensm/ftree-parallel.net"), include_str!("data/opensm/ftree-parallel.lfts")),
        (include_str!("data/opensm/ftree-multipath.net"), include_str!("data/opensm/ftree-multipath.lfts")),
    ] {
        equal_to_opensm(&file(net), "ftree", lfts);
    }
}

/// DFSSSP per LID: OpenSM's order, weights and heap ties give its tables.
#[test]
fn dfsssp_tables_equal_opensm_per_lid() {
    equal_to_opensm(TORUS, "dfsssp", include_str!("data/opensm/torus4x4-t2-dfsssp.lfts"));
}

/// MinHop: per switch, the shortest-path port with the fewest LIDs so far; with OpenSM's
/// one VL a torus deadlocks (`folded` on 1 VC), on the ladder it does not.
#[test]
fn minhop_tables_equal_opensm_per_lid() {
    equal_to_opensm(TORUS, "minhop", include_str!("data/opensm/torus4x4-t2-minhop.lfts"));
    let one_vl = analyse(&config(
        TORUS,
        &["routing.algorithm=\"minhop\"".into(), "routing.vc_policy=\"folded\"".into()],
    ));
    let ladder = analyse(&config(TORUS, &["routing.algorithm=\"minhop\"".into(), "router.vcs=4".into()]));
    assert!(ladder.acyclic);
    assert!(!one_vl.acyclic && one_vl.unreachable_pairs == 0);
}

/// d-mod-k: the k endpoints of a leaf leave by its k up links, one each, so every down link
/// into a leaf carries exactly its endpoint's paths: the busiest link carries 1/k of a
/// switch pair's paths from every other leaf, where a route per switch puts them all on
/// one link.
#[test]
fn ftree_spreads_the_endpoints_of_a_leaf_over_its_links() {
    let r = analyse(&config(FAT_TREE, &[]));
    // 16 leaves: a leaf's down link to one endpoint carries 15 leaves x 1/4 of a pair.
    assert_eq!(r.link_weight_max, 3.75);
    let per_switch = analyse(&config(
        FAT_TREE,
        &["routing.algorithm=\"dfsssp\"".into(), "routing.dfsssp.destinations=\"switches\"".into()],
    ));
    assert!(per_switch.link_weight_max >= 15.0, "{}", per_switch.link_weight_max);
}

#[test]
fn ftree_refuses_what_is_not_a_fat_tree_naming_why() {
    let torus = "kind = \"torus\"\nsides = [3, 3]\nendpoints_per_switch = 1";
    let o: Vec<&str> = vec![];
    let cfg = xnet_models::config::Config::parse(
        &BASE.replace("TOPOLOGY", torus),
        &o.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    )
    .unwrap();
    let e = Simulation::build(cfg).err().expect("a torus is refused").to_string();
    assert!(e.contains("routing.algorithm") && e.contains("ERR AB2B") && e.contains("not a fat tree"), "{e}");
    // An HCA on a middle switch of a 2-ary 3-tree: its switch ranks as a leaf, the tree
    // grows two levels deeper, and the real leaves are not at its bottom.
    let tree = config("kind = \"fat_tree\"\nk = 2\nn = 3", &["routing.algorithm=\"up_down\"".into()]);
    let mut net = xnet_models::topology::ib::IbView::of(&tree.net).net_text(&tree.net);
    net = net.replace("Switch\t4 \"S4\"\n", "Switch\t5 \"S4\"\n[5]\t\"Hx\"[1]\n");
    net.push_str("Hca\t1 \"Hx\"\n[1]\t\"S4\"[5]\n");
    let cfg = xnet_models::config::Config::parse(&BASE.replace("TOPOLOGY", &file(&net)), &[]).unwrap();
    let e = Simulation::build(cfg).err().expect("an HCA off the leaves is refused").to_string();
    assert!(
        e.contains("hangs on switch 'S0' of level 2, while the leaves are at level 4") && e.contains("AB26"),
        "{e}"
    );
}
