//! `routing.selection = "ecmp"`: a flow keeps one path, chosen by its hash; packet
//! spraying (`random`, `adaptive`) spreads it over every equal path.

mod common;
use common::{build, run};
use xnet_models::routing::{ecmp_flow_hash, ecmp_hash};
use xnet_models::sim::Status;

/// A 4-ary 2-tree (leaves 0..4 with endpoints 4 each, spines 4..8) where endpoint 0 and
/// endpoint 8 (leaf 2) exchange `packets` packets each way, under `selection`.
fn exchange(selection: &str, packets: u64, seed: u64) -> xnet_models::sim::RunResult {
    exchange_with(selection, packets, seed, &[])
}

/// [`exchange`] with `--set` overrides.
fn exchange_with(selection: &str, packets: u64, seed: u64, sets: &[&str]) -> xnet_models::sim::RunResult {
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
    let r = run(&build(&text, sets), 1);
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

#[test]
fn an_applications_messages_go_round_robin_over_the_pairs_ecmp_flows() {
    // 16 messages of 4 packets from endpoint 0 to 8 (and back): message k on flow k mod 4,
    // so each flow carries 4 messages, 64 phits, up the link its own hash names. Eager
    // messages, and rendezvous ones whose data follows a clear-to-send.
    for (seed, eager_limit) in [(1, 1 << 20), (2, 1 << 20), (3, 0)] {
        let sets = [
            "routing.ecmp_flows=4",
            "workload.jobs[0].iterations=16",
            &format!("workload.eager_limit={eager_limit}"),
        ];
        let r = exchange_with("ecmp", 4, seed, &sets);
        let up = uplinks(&r, 0);
        let mut want = [0u64; 4];
        for flow in 0..4 {
            want[((ecmp_flow_hash(0, 8, flow, 0, seed) as u128 * 4) >> 64) as usize] += 4 * 4 * 4;
        }
        // A rendezvous adds a request per message on the data's flow: one phit and the
        // header's, 8 phits for a flow's 4 messages.
        let control = if eager_limit == 0 { 8 } else { 0 };
        let want: Vec<u64> = want.iter().map(|&p| p + p / 64 * control).collect();
        assert_eq!(up, want, "seed {seed}, eager limit {eager_limit}");
        assert!(up.iter().filter(|&&p| p > 0).count() > 1, "seed {seed}: {up:?}");
    }
    // Flow 0 is the pair's one flow of ecmp_flows = 1.
    assert_eq!(ecmp_flow_hash(0, 8, 0, 5, 9), ecmp_hash(0, 8, 5, 9));
}
