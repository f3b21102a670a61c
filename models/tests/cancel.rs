//! Every routing whose build does real work (tables, layers, searches over the switches)
//! stops when a stop is asked for (Ctrl-C, SIGTERM), returning an error that says what it
//! was doing, instead of running to its end: on a million endpoints a build takes minutes.
//! The routings that build nothing (their routes come from coordinates per packet) are
//! listed by name, so that a new routing must either check the flag or join that list.
//!
//! One test in its own file: the stop flag is process-wide and cannot be withdrawn.

use xnet_models::cancel;
use xnet_models::config::Config;
use xnet_models::routing::ROUTINGS;
use xnet_models::sim::build_routes;

/// Routings whose routes come from the switches' coordinates per packet: no build to stop.
const NOTHING_TO_BUILD: &[&str] = &[
    "dor",
    "dragonfly_min",
    "dragonfly_valiant",
    "dragonfly_ugal",
    "dragonfly_ugal_g",
    "dragonfly_pb",
    "dragonfly_par",
    "dragonfly_imb",
    "dragonfly_ofar",
    "dragonfly_q",
    "omniwar",
    "dal",
];

/// Routings that read their routes from a file (`routing.tables.file`): reading is
/// bounded by the file-size cap, and computes nothing.
const READ_FROM_A_FILE: &[&str] = &["tables"];

/// Networks tried in order for each routing: the first it accepts is used. Failed links
/// and irregular graphs first, so that routings with a coordinate shortcut on intact
/// networks (minimal on a HyperX) build their tables.
const NETWORKS: &[&str] = &[
    "kind = \"random_regular\"\nswitches = 40\ndegree = 4\nendpoints_per_switch = 2",
    "kind = \"torus\"\nsides = [4, 4]\nendpoints_per_switch = 1\nfailed_links = 2\nfault_seed = 3",
    "kind = \"torus\"\nsides = [4, 4]\nendpoints_per_switch = 1",
    "kind = \"hyperx\"\nsides = [4, 4]\nendpoints_per_switch = 2",
    "kind = \"dragonfly\"\np = 2\na = 4\nh = 2",
    "kind = \"fat_tree\"\nk = 4\nn = 3",
];

fn config(topology: &str, routing: &str, escape: bool) -> Option<Config> {
    let escape = if escape { "escape_vcs = 1\n" } else { "" };
    let text = format!(
        "[simulation]\ncycles = 1000\nwarmup = 100\nseed = 5\n[topology]\n{topology}\n\
         [router]\nvcs = 16\n[routing]\nalgorithm = \"{routing}\"\n{escape}\
         [traffic]\npattern = \"uniform\"\nload = 0.1\n"
    );
    Config::parse(&text, &[]).ok()
}

#[test]
fn every_routing_that_builds_something_stops_when_asked() {
    // Before the stop: a network each routing builds on.
    let mut chosen = Vec::new();
    for r in ROUTINGS.iter().filter(|r| !READ_FROM_A_FILE.contains(&r.name)) {
        let found = NETWORKS.iter().find_map(|t| {
            [false, true].iter().find_map(|&escape| {
                let cfg = config(t, r.name, escape)?;
                let net = cfg.build_network().ok()?;
                build_routes(&cfg, &net, None).ok()?;
                Some((cfg, net))
            })
        });
        let (cfg, net) = found.unwrap_or_else(|| panic!("`{}` builds on none of the test networks", r.name));
        chosen.push((r.name, cfg, net));
    }
    cancel::request();
    let mut ignored = Vec::new();
    for (name, cfg, net) in &chosen {
        match build_routes(cfg, net, None) {
            Ok(_) if NOTHING_TO_BUILD.contains(name) => {}
            Ok(_) => ignored.push(*name),
            Err(e) => {
                assert!(e.to_string().contains("interrupted while"), "`{name}`: another error: {e}");
                assert!(
                    !NOTHING_TO_BUILD.contains(name),
                    "`{name}` checks the flag: take it off NOTHING_TO_BUILD"
                );
            }
        }
    }
    assert!(ignored.is_empty(), "these routings' builds ran to their end after a stop request: {ignored:?}");
}
