//! `routing.selection = "ecmp"`: a flow keeps one path, chosen by its hash; packet
//! spraying (`random`, `adaptive`) spreads it over every equal path.

mod common;
use common::{build, run};
use xnet_models::routing::ecmp_hash;
use xnet_models::sim::Status;

/// A 4-ary 2-tree (leaves 0..4 with endpoints 4 each, spines 4..8) where endpoint 0 and
/// endpoint 8 (leaf 2) exchange `packets` packets each way, under `selection`.
fn exchange(selection: &str, packets: u64, seed: u64) -> xnet_models::sim::RunResult {
    let text = format!(
        r#"
        [simulation]
        cycles = 1000000
        seed = {seed}
        [topology]
        kind = "fat_tree"
        k = 4
        n = 2
        [router]
        vcs = 2
        packet_size = 4
        [routing]
        algorithm = "minimal"
        selection = "{selection}"
        [workload]
        bytes_per_phit = 16
        [[workload.jobs]]
        kind = "butterfly"
        ranks = 2
        message_bytes = {}
        mapping = "file"
        mapping_contents = "0\n8"
        "#,
        packets * 64
    );
    let r = run(&build(&text, &[]), 1);
    assert_eq!(r.status, Status::Completed);
    r
}

/// Phits sent on each up-link of leaf `leaf` (its ports 4..8).
fn uplinks(r: &xnet_models::sim::RunResult, leaf: u32) -> Vec<u64> {
    (4..8).map(|p| r.links.iter().find(|l| l.switch == leaf && l.port == p).map_or(0, |l| l.phits)).collect()
}

#[test]
fn a_flow_keeps_one_path_under_ecmp_and_spreads_when_sprayed() {
    for seed in [1, 2, 3] {
        let r = exchange("ecmp", 64, seed);
        let up = uplinks(&r, 0);
        assert_eq!(up.iter().filter(|&&p| p > 0).count(), 1, "seed {seed}: {up:?}");
        assert_eq!(up.iter().sum::<u64>(), 64 * 4);
        // The hash names the link: the candidates at leaf 0 are its up ports in order.
        let flow = ecmp_hash(0, 8, 0, seed);
        let chosen = ((flow as u128 * 4) >> 64) as usize;
        assert_eq!(up[chosen], 64 * 4, "seed {seed}: {up:?}");
    }
    // Different seeds salt the switches differently: not every seed picks the same link.
    let picks: Vec<usize> =
        (1..=8u64).map(|seed| ((ecmp_hash(0, 8, 0, seed) as u128 * 4) >> 64) as usize).collect();
    assert!(picks.iter().any(|&p| p != picks[0]), "{picks:?}");
    for spraying in ["random", "adaptive"] {
        let up = uplinks(&exchange(spraying, 64, 1), 0);
        assert!(up.iter().all(|&p| p > 0), "{spraying}: {up:?}");
    }
}
