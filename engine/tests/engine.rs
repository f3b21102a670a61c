//! Engine-level tests with a synthetic model: determinism for any partitioning, error
//! handling and early stops.

use serde::{Deserialize, Serialize};
use xnet_engine::{
    run_partitions, Checkpoint, Control, Ctx, EngineError, LinkSpec, LogicalProcess, RunConfig,
};

/// A deterministic pseudo-random step (SplitMix64) so the model needs no RNG crate.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Each LP folds every event it sees into a hash (order matters) and passes every token
/// on, over a pseudo-randomly chosen link or back to itself after a pseudo-random delay.
#[derive(Clone, Debug, PartialEq)]
struct Gossip {
    out_links: Vec<u32>,
    state: u64,
    events: u64,
    panic_at: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Token(u64);

impl LogicalProcess for Gossip {
    type Msg = Token;
    fn start(&mut self, ctx: &mut Ctx<'_, Token>) {
        self.state = mix(ctx.lp() as u64);
        for k in 0..3 {
            ctx.schedule(k, (k % 2) as u16, Token(self.state ^ k));
        }
    }
    fn handle(&mut self, msg: Token, ctx: &mut Ctx<'_, Token>) {
        if self.panic_at.is_some_and(|t| ctx.now() >= t) {
            panic!("model failure in LP {}", ctx.lp());
        }
        self.events += 1;
        self.state = mix(self.state ^ msg.0 ^ ctx.now().rotate_left(17));
        // Every token lives on: forwarded over a link, or now and then kept for a while.
        let r = self.state;
        if r.is_multiple_of(5) {
            ctx.schedule((r >> 16) % 3, ((r >> 20) % 4) as u16, Token(r >> 1));
        } else {
            let link = self.out_links[(r >> 8) as usize % self.out_links.len()];
            ctx.send(link, Token(r));
        }
    }
}

/// `n` LPs on a ring plus random chords, latencies 1..=6.
fn network(n: u32, seed: u64) -> (Vec<Gossip>, Vec<LinkSpec>) {
    let mut links = Vec::new();
    let mut lps: Vec<Gossip> =
        (0..n).map(|_| Gossip { out_links: Vec::new(), state: 0, events: 0, panic_at: None }).collect();
    let mut r = seed;
    for src in 0..n {
        for k in 0..3 {
            r = mix(r);
            let dst = if k == 0 { (src + 1) % n } else { (r % n as u64) as u32 };
            lps[src as usize].out_links.push(links.len() as u32);
            links.push(LinkSpec { src, dst, latency: 1 + (r >> 32) % 6 });
        }
    }
    (lps, links)
}

fn run(lps: Vec<Gossip>, links: &[LinkSpec], parts: &[u32]) -> Result<Vec<Gossip>, EngineError> {
    let cfg = RunConfig { end_time: 3_000, checkpoint_period: 250 };
    let out = run_partitions(
        lps,
        links,
        parts,
        &cfg,
        |lps: &mut [Gossip], _| lps.len(),
        |_: Checkpoint<usize>| Control::Continue,
    )?;
    assert_eq!(out.time, 3_000);
    assert!(!out.stopped_early);
    Ok(out.lps)
}

#[test]
fn results_are_identical_for_any_partitioning() {
    let (lps, links) = network(60, 7);
    let reference = run(lps.clone(), &links, &[0; 60]).unwrap();
    assert!(reference.iter().map(|l| l.events).sum::<u64>() > 10_000, "the model must be busy");
    let blocks: Vec<u32> = (0..60).map(|i| i / 30).collect();
    let striped: Vec<u32> = (0..60).map(|i| i % 3).collect();
    let scattered: Vec<u32> = (0..60).map(|i| (mix(i as u64) % 4) as u32).collect();
    for parts in [blocks, striped, scattered] {
        assert_eq!(run(lps.clone(), &links, &parts).unwrap(), reference, "partition {parts:?}");
    }
}

#[test]
fn a_failing_partition_stops_the_run_with_its_name() {
    let (mut lps, links) = network(20, 3);
    lps[15].panic_at = Some(100);
    let parts: Vec<u32> = (0..20).map(|i| i / 10).collect();
    match run(lps, &links, &parts) {
        Err(EngineError::WorkerPanic { partition, message }) => {
            assert_eq!(partition, 1);
            assert!(message.contains("model failure in LP 15"), "{message}");
        }
        other => panic!("expected a worker failure, got {other:?}"),
    }
}

#[test]
fn bad_graphs_are_rejected() {
    let (lps, mut links) = network(4, 1);
    links[2].latency = 0;
    assert!(matches!(run(lps.clone(), &links, &[0, 0, 1, 1]), Err(EngineError::ZeroLatency { link: 2, .. })));
    let (lps, links) = network(4, 1);
    assert!(matches!(run(lps.clone(), &links, &[0, 0, 2, 2]), Err(EngineError::EmptyPartition(1))));
    assert!(matches!(run(lps, &links, &[0, 0]), Err(EngineError::PartitionMapLength { got: 2, num_lps: 4 })));
}

#[test]
fn the_coordinator_can_stop_early_and_sees_every_checkpoint() {
    let (lps, links) = network(10, 5);
    let mut seen = Vec::new();
    let cfg = RunConfig { end_time: 10_000, checkpoint_period: 100 };
    let out = run_partitions(
        lps,
        &links,
        &[0, 0, 0, 0, 0, 1, 1, 1, 1, 1],
        &cfg,
        |lps: &mut [Gossip], t| (t, lps.len()),
        |cp: Checkpoint<(u64, usize)>| {
            assert_eq!(cp.reports.len(), 2);
            assert!(cp.reports.iter().all(|&(t, _)| t == cp.time));
            assert_eq!(cp.reports.iter().map(|r| r.1).sum::<usize>(), 10);
            seen.push(cp.time);
            if cp.time == 700 {
                Control::Stop
            } else {
                Control::Continue
            }
        },
    )
    .unwrap();
    assert_eq!(seen, vec![100, 200, 300, 400, 500, 600, 700]);
    assert!(out.stopped_early);
    assert_eq!(out.time, 700);
    assert_eq!(
        out.stats.lookahead,
        Some(links.iter().filter(|l| (l.src < 5) != (l.dst < 5)).map(|l| l.latency).min().unwrap())
    );
}
