//! NCCL's choice of algorithm, protocol and channels: its tuning model (`src/graph/tuning.cc`
//! `ncclTopoTuneModel` and `ncclTopoGetAlgoTime`, `src/enqueue.cc` `topoGetAlgoInfo`) for
//! ranks that are one GPU each on their own node with one NIC, on a Hopper GPU and an Intel
//! CPU (NCCL's defaults otherwise).
//!
//! For each algorithm (ring; tree for all-reduce; PAT, in Simple, for all-gather and
//! reduce-scatter, which NCCL enables when every rank is a node of one GPU, as here) and
//! protocol, the model predicts `latency + bytes / bandwidth` and NCCL takes the fastest:
//!
//! - **Bandwidth.** The topology search's per-channel bandwidth is the highest of Hopper's
//!   inter-node speeds (`sm90SpeedArrayInter`) the NIC carries, on one channel. Ring LL
//!   halves it (capped by `llMaxBws`), ring LL128 takes 92 % (capped per channel), the tree
//!   92 % (capped per channel), tree LL one 3.8th, tree LL128 120/128. Bus bandwidth
//!   becomes algorithm bandwidth by `n / steps` for rings (`2 (n - 1)` steps for
//!   all-reduce, `n - 1` for all-gather and reduce-scatter, `n` for broadcast and reduce)
//!   and by 1/2 for the tree; the tree's is corrected by message size
//!   (`treeCorrectionFactor`). PAT takes 75 % of the bus bandwidth, as its algorithm
//!   bandwidth.
//! - **Latency.** The base latency, plus per ring step the network's (`hwLatencies[NET]`
//!   of the tree, since one rank per node exposes it) and for the tree `2 log2 n` of them;
//!   a ring broadcast or reduce adds one. PAT: 8 µs, a 3.5th of the network's per level of
//!   its tree (`log2 n`) and 2.8 µs per rank. A ring Simple all-reduce's latency is multiplied
//!   by 1.4 once each rank's share reaches 64 bytes per channel (the ring's plateau).
//! - **Channels.** The search's channel is doubled (two rings or both trees); a small
//!   collective then drops channels while `bytes < channels x threads x threshold`.
//!
//! PAT (all-gather and reduce-scatter at one GPU per node, which NCCL prefers at small
//! sizes), NVLS and CollNet are not modelled here, so they are never chosen.

use super::{Algorithm, NcclKind, Protocol};

/// What the model predicts for one algorithm and protocol.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The protocol.
    pub protocol: Protocol,
    /// The predicted time, µs.
    pub time_us: f64,
}

/// Hopper's inter-node speeds the topology search tries, GB/s.
const SPEEDS_INTER: [f64; 17] =
    [48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12];

/// The per-channel bandwidth the topology search finds for a NIC of `nic_gbs` GB/s.
fn search_bandwidth(nic_gbs: f64) -> f64 {
    SPEEDS_INTER.iter().copied().find(|&s| s <= nic_gbs).unwrap_or(0.12)
}

/// Index of a protocol in NCCL's tables (LL, LL128, Simple).
fn index(p: Protocol) -> usize {
    match p {
        Protocol::Ll => 0,
        Protocol::Ll128 => 1,
        Protocol::Simple => 2,
    }
}

/// `hwLatencies[NET][TREE]`, µs.
const NET_TREE_LATENCY: [f64; 3] = [5.0, 8.5, 14.0];
/// `hwLatencies[NET][RING]`, µs.
const NET_RING_LATENCY: [f64; 3] = [2.7, 4.0, 14.0];
/// `baseLatencies`, µs: tree, ring.
const BASE_LATENCY: [[f64; 3]; 2] = [[6.8, 14.0, 8.4], [6.6, 14.0, 8.4]];
/// `treeCorrectionFactor` by protocol and log2(bytes / 64).
const TREE_CORRECTION: [[f64; 24]; 3] = [
    [
        1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
        1.0, 1.0, 1.0, 1.0,
    ],
    [
        1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9,
        0.9, 1.0, 1.0, 1.0,
    ],
    [
        0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7,
        0.8, 0.9, 0.9, 0.9,
    ],
];

/// The index NCCL's per-size tables use for `n` nodes: 1, 2, or more.
fn nodes_index(n: usize) -> usize {
    n.clamp(1, 3) - 1
}

/// The model's time for `kind` of `bytes` bytes (the whole buffer: each rank's part times
/// `n` for all-gather and reduce-scatter) on `n` ranks with NICs of `nic_gbs` GB/s and
/// `channels` channels, or `None` where the algorithm does not run the kind.
pub fn estimate(
    kind: NcclKind,
    algorithm: Algorithm,
    protocol: Protocol,
    bytes: u64,
    n: usize,
    nic_gbs: f64,
    channels: u32,
) -> Option<Estimate> {
    if !algorithm.runs(kind) || n < 2 || (algorithm == Algorithm::Pat && protocol != Protocol::Simple) {
        return None;
    }
    let p = index(protocol);
    let ix = nodes_index(n);
    let bw = search_bandwidth(nic_gbs);
    // Intel CPU between nodes: llMaxBws[0]; Hopper's per-channel caps.
    let ll_max: f64 = [39.0, 39.0, 20.4][ix];
    let ring_ll128_max = 36.7;
    let tree_max = [38.7, 41.4, 36.0][ix];
    let tree_ll128_max = [36.7, 36.7, 29.0][ix];
    let mut bus = bw;
    match (algorithm, protocol) {
        (Algorithm::Ring, Protocol::Ll) => bus = ll_max.min(bus * 0.5),
        (Algorithm::Ring, Protocol::Ll128) => bus = (bus * 0.92).min(ring_ll128_max),
        (Algorithm::Ring, Protocol::Simple) => {}
        (Algorithm::Pat, _) => bus *= 0.75,
        (Algorithm::Tree, _) => {
            bus = (bus * 0.92).min(tree_max);
            match protocol {
                Protocol::Ll => bus = (bus / 3.8).min(ll_max),
                Protocol::Ll128 => bus = (bus * 120.0 / 128.0).min(tree_ll128_max),
                Protocol::Simple => {}
            }
        }
    }
    let steps = match kind {
        NcclKind::AllReduce => 2 * (n - 1),
        NcclKind::AllGather | NcclKind::ReduceScatter => n - 1,
        NcclKind::Broadcast | NcclKind::Reduce => n,
    };
    let mut algbw = match algorithm {
        Algorithm::Ring => bus * n as f64 / steps as f64,
        Algorithm::Tree => bus * 0.5,
        // All-gather and reduce-scatter other than the ring keep the bus bandwidth.
        Algorithm::Pat => bus,
    };
    let mut latency = match algorithm {
        Algorithm::Tree => BASE_LATENCY[0][p] + 2.0 * (n as f64).log2().floor() * NET_TREE_LATENCY[p],
        // 8 us, then the tree's network latency over 3.5 per level and 2.8 us per rank.
        Algorithm::Pat => 8.0 + (n as f64).log2().floor() * NET_TREE_LATENCY[p] / 3.5 + n as f64 * 2.8,
        Algorithm::Ring => match kind {
            NcclKind::Broadcast | NcclKind::Reduce => BASE_LATENCY[1][p] + NET_RING_LATENCY[p],
            _ => BASE_LATENCY[1][p] + steps as f64 * NET_TREE_LATENCY[p],
        },
    };
    if algorithm == Algorithm::Tree {
        let log = (bytes >> 6).checked_ilog2();
        if let Some(log) = log.filter(|&l| l < 23) {
            algbw *= TREE_CORRECTION[p][log as usize];
        }
    }
    if (algorithm, protocol, kind) == (Algorithm::Ring, Protocol::Simple, NcclKind::AllReduce)
        && bytes / (u64::from(channels) * n as u64) >= 64
    {
        latency *= 1.4;
    }
    Some(Estimate { algorithm, protocol, time_us: latency + bytes as f64 / (1000.0 * algbw) })
}

/// NCCL's choice for `kind` of `bytes` bytes (as [`estimate`]) among `algorithms` and
/// `protocols`: the fastest by the model (the first in NCCL's order on a tie: tree
/// before ring, LL before LL128 before Simple). `None` if none of them runs the kind.
pub fn choose(
    kind: NcclKind,
    bytes: u64,
    n: usize,
    nic_gbs: f64,
    channels: u32,
    algorithms: &[Algorithm],
    protocols: &[Protocol],
) -> Option<Estimate> {
    let mut best: Option<Estimate> = None;
    for &a in [Algorithm::Tree, Algorithm::Ring, Algorithm::Pat].iter().filter(|a| algorithms.contains(a)) {
        for &p in [Protocol::Ll, Protocol::Ll128, Protocol::Simple].iter().filter(|p| protocols.contains(p)) {
            if let Some(e) = estimate(kind, a, p, bytes, n, nic_gbs, channels) {
                if best.is_none_or(|b| e.time_us < b.time_us) {
                    best = Some(e);
                }
            }
        }
    }
    best
}

/// How NCCL runs `kind` of `bytes` (as [`super::emit_nccl`] takes them: each rank's part
/// for all-gather and reduce-scatter) on `n` ranks with NICs of `nic_gbs` GB/s and at most
/// `channels` channels, when nothing is named: the tuning model's algorithm and protocol,
/// and the channels it keeps for that size.
pub fn settings_for(
    kind: NcclKind,
    bytes: u64,
    n: usize,
    nic_gbs: f64,
    channels: u32,
) -> super::NcclSettings {
    let total = match kind {
        NcclKind::AllGather | NcclKind::ReduceScatter => bytes.saturating_mul(n as u64),
        _ => bytes,
    };
    // PAT is among them: every rank is a node of one GPU here, which is when NCCL enables it.
    let all = [Algorithm::Ring, Algorithm::Tree, Algorithm::Pat];
    let protocols = [Protocol::Ll, Protocol::Ll128, Protocol::Simple];
    let e =
        choose(kind, total, n.max(2), nic_gbs, channels, &all, &protocols).expect("every kind has its ring");
    let c = channels_for(e.algorithm, e.protocol, total, n, channels);
    super::NcclSettings::new(e.algorithm, e.protocol, c)
}

/// The channels NCCL runs a collective of `bytes` bytes on, of `channels`: fewer while
/// each would get less than its threads' share (`bytes < channels x threads x threshold`).
pub fn channels_for(algorithm: Algorithm, protocol: Protocol, bytes: u64, n: usize, channels: u32) -> u32 {
    let (threads, threshold): (u64, u64) = match (algorithm, protocol) {
        (_, Protocol::Simple) => (512, 64),
        (Algorithm::Ring, Protocol::Ll) => (512, 8 * n as u64),
        (_, Protocol::Ll) => (512, 8),
        (_, Protocol::Ll128) => (640, 8),
    };
    let mut c = channels;
    while c >= 2 && bytes < u64::from(c) * threads * threshold {
        c -= 1;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use NcclKind::*;

    #[test]
    fn small_all_reduces_take_the_tree_in_ll_and_large_ones_the_ring_in_simple() {
        let all = [Algorithm::Ring, Algorithm::Tree];
        let protos = [Protocol::Simple, Protocol::Ll, Protocol::Ll128];
        let pick = |bytes| {
            let e = choose(AllReduce, bytes, 128, 25.0, 2, &all, &protos).unwrap();
            (e.algorithm, e.protocol)
        };
        assert_eq!(pick(1024), (Algorithm::Tree, Protocol::Ll));
        assert_eq!(pick(1 << 30), (Algorithm::Ring, Protocol::Simple));
        // Only rings for the others; LL when small.
        let e = choose(AllGather, 4096, 128, 25.0, 2, &all, &protos).unwrap();
        assert_eq!((e.algorithm, e.protocol), (Algorithm::Ring, Protocol::Ll));
    }

    #[test]
    fn pat_takes_the_all_gathers_until_bandwidth_counts() {
        // 64 ranks of 25 GB/s NICs: PAT's latency (8 + 6 x 4 + 64 x 2.8 us) beats the
        // ring's 63 network steps; its bandwidth (75 %) loses to the ring's when large.
        let all = [Algorithm::Ring, Algorithm::Tree, Algorithm::Pat];
        let protos = [Protocol::Simple, Protocol::Ll, Protocol::Ll128];
        let pick = |bytes| {
            let e = choose(AllGather, bytes, 64, 25.0, 2, &all, &protos).unwrap();
            (e.algorithm, e.protocol)
        };
        assert_eq!(pick(64 << 10), (Algorithm::Pat, Protocol::Simple));
        assert_eq!(pick(16 << 20), (Algorithm::Pat, Protocol::Simple));
        // Past about 30 MB the ring in LL128 (latency 14 + 63 x 8.5 us, 22.4 GB/s) wins.
        assert_eq!(pick(24 << 20), (Algorithm::Pat, Protocol::Simple));
        assert_eq!(pick(40 << 20), (Algorithm::Ring, Protocol::Ll128));
        assert_eq!(pick(1 << 30).0, Algorithm::Ring);
        let e = estimate(AllGather, Algorithm::Pat, Protocol::Simple, 16 << 20, 64, 25.0, 2).unwrap();
        let expected = 8.0 + 6.0 * 14.0 / 3.5 + 64.0 * 2.8 + (16u64 << 20) as f64 / (1000.0 * 24.0 * 0.75);
        assert!((e.time_us - expected).abs() < 1e-6, "{} vs {expected}", e.time_us);
        // PAT runs in Simple only, and not all-reduce.
        assert!(estimate(AllGather, Algorithm::Pat, Protocol::Ll, 1024, 64, 25.0, 2).is_none());
        assert!(estimate(AllReduce, Algorithm::Pat, Protocol::Simple, 1024, 64, 25.0, 2).is_none());
    }

    #[test]
    fn the_estimate_is_nccl_s_formula() {
        // Ring Simple all-reduce of 1 GiB on 8 ranks, 25 GB/s NICs (the search's 24):
        // algbw 24 x 8 / 14; latency (8.4 + 14 x 14) x 1.4.
        let e = estimate(AllReduce, Algorithm::Ring, Protocol::Simple, 1 << 30, 8, 25.0, 2).unwrap();
        let expected = (8.4 + 14.0 * 14.0) * 1.4 + (1u64 << 30) as f64 / (1000.0 * 24.0 * 8.0 / 14.0);
        assert!((e.time_us - expected).abs() < 1e-6, "{} vs {expected}", e.time_us);
        assert!(estimate(Broadcast, Algorithm::Tree, Protocol::Simple, 8, 8, 25.0, 2).is_none());
    }

    #[test]
    fn small_collectives_drop_channels() {
        assert_eq!(channels_for(Algorithm::Ring, Protocol::Simple, 1 << 20, 8, 2), 2);
        assert_eq!(channels_for(Algorithm::Ring, Protocol::Simple, 40_000, 8, 2), 1);
        assert_eq!(channels_for(Algorithm::Ring, Protocol::Ll, 40_000, 8, 2), 1);
        assert_eq!(channels_for(Algorithm::Tree, Protocol::Ll, 9_000, 8, 2), 2);
    }
}
