//! The census: counts for other partitionings, taken on whatever partitioning runs.

mod common;

use common::{mix, network, Gossip};
use serde::{Deserialize, Serialize};
use xnet_engine::{
    lookahead, run_partitions, CensusCounts, CensusLayout, Checkpoint, Control, Ctx, EngineError, LinkSpec,
    LogicalProcess, RunConfig, RunOutcome,
};

fn run_with<L: LogicalProcess>(
    lps: Vec<L>,
    links: &[LinkSpec],
    parts: &[u32],
    end_time: u64,
    census: Option<&[CensusLayout]>,
) -> Result<RunOutcome<L>, EngineError> {
    let cfg = RunConfig { end_time, checkpoint_period: 250, stop: None, census };
    run_partitions(
        lps,
        links,
        parts,
        &cfg,
        |_: &mut [L], _: &mut L::Local, _| (),
        |_: Checkpoint<()>| Control::Continue,
    )
}

fn layout(links: &[LinkSpec], partition_of: Vec<u32>) -> CensusLayout {
    let window = lookahead(links, &partition_of).expect("a link crosses");
    CensusLayout { partition_of, window }
}

fn sums(counts: &[u32], parts: usize) -> Vec<u64> {
    let mut s = vec![0u64; parts];
    for row in counts.chunks(parts) {
        for (p, &c) in row.iter().enumerate() {
            s[p] += u64::from(c);
        }
    }
    s
}

#[test]
fn a_census_of_the_running_partitioning_counts_what_the_run_did() {
    let (lps, links) = network(60, 7);
    let blocks: Vec<u32> = (0..60).map(|i| i / 20).collect();
    let census = [layout(&links, blocks.clone())];
    let out = run_with(lps, &links, &blocks, 3_000, Some(&census)).unwrap();
    let c = &out.stats.census[0];
    assert_eq!(c.parts, 3);
    assert_eq!(sums(&c.events, 3), out.stats.events, "events per partition");
    assert_eq!(sums(&c.messages, 3), out.stats.boundary_messages, "messages per partition");
    let pair_messages: u64 = c.pairs.iter().map(|p| p.2).sum();
    assert_eq!(pair_messages, out.stats.boundary_messages.iter().sum::<u64>());
    assert_eq!(c.pairs.iter().map(|p| p.3).sum::<u64>(), c.bytes.iter().sum::<u64>());
    assert!(c.pairs.iter().all(|&(s, d, m, b)| s != d && b >= m && m > 0));
    // A window of one cycle when the network is busy: the engine's windows are the
    // cycles with events, and so are the census's (checkpoints do not add any).
    assert_eq!(c.window, 1);
    assert_eq!(c.windows.len() as u64, out.stats.windows);
    assert!(c.windows.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_census_is_the_same_on_any_threads_and_leaves_the_results_alone() {
    let (lps, links) = network(60, 7);
    let layouts: Vec<CensusLayout> = [
        (0..60).map(|i| i / 30).collect::<Vec<u32>>(),
        (0..60).map(|i| i % 3).collect(),
        (0..60).map(|i| (mix(i as u64) % 4) as u32).collect(),
    ]
    .into_iter()
    .map(|p| layout(&links, p))
    .collect();
    let plain = run_with(lps.clone(), &links, &[0; 60], 3_000, None).unwrap();
    assert!(plain.stats.census.is_empty());
    let plain: Vec<Gossip> = plain.lps.into_iter().map(|(_, l)| l).collect();
    let mut reference: Option<Vec<CensusCounts>> = None;
    for running in
        [vec![0; 60], (0..60).map(|i| i % 3).collect(), (0..60).map(|i| (i * 7 % 5) as u32).collect()]
    {
        let out = run_with(lps.clone(), &links, &running, 3_000, Some(&layouts)).unwrap();
        let results: Vec<Gossip> = out.lps.into_iter().map(|(_, l)| l).collect();
        assert_eq!(results, plain, "a census changes nothing");
        assert_eq!(out.stats.census.len(), 3);
        match &reference {
            None => reference = Some(out.stats.census),
            Some(r) => assert_eq!(&out.stats.census, r, "taken on {running:?}"),
        }
    }
    let r = reference.unwrap();
    let total: u64 = plain.iter().map(|l| l.events).sum();
    for c in &r {
        assert_eq!(sums(&c.events, c.parts as usize).iter().sum::<u64>(), total, "every event, once");
    }
}

/// Two LPs hitting a ball back and forth over links of 5 cycles.
struct Player {
    out_link: u32,
}
#[derive(Serialize, Deserialize)]
struct Ball;
impl LogicalProcess for Player {
    type Msg = Ball;
    type Local = ();
    fn start(&mut self, ctx: &mut Ctx<'_, Ball>, _: &mut ()) {
        if ctx.lp() == 0 {
            ctx.send(self.out_link, Ball);
        }
    }
    fn handle(&mut self, _: Ball, ctx: &mut Ctx<'_, Ball>, _: &mut ()) {
        ctx.send(self.out_link, Ball);
    }
}

#[test]
fn ping_pong_counts_and_waits_are_the_analytic_ones() {
    let links =
        [LinkSpec { src: 0, dst: 1, latency: 5, tie: 0 }, LinkSpec { src: 1, dst: 0, latency: 5, tie: 1 }];
    let census = [CensusLayout { partition_of: vec![0, 1], window: 5 }];
    let out =
        run_with(vec![Player { out_link: 0 }, Player { out_link: 1 }], &links, &[0, 0], 100, Some(&census))
            .unwrap();
    let c = &out.stats.census[0];
    // The ball is served at start (window 0, no event), then hit at 5, 10, ..., 95: a
    // window each, LP 1 on odd multiples of 5.
    assert_eq!(c.windows, (0..20).collect::<Vec<u64>>());
    assert_eq!(c.messages[..2], [1, 0], "the serve");
    for (w, row) in c.events.chunks(2).enumerate() {
        let expected = match w {
            0 => [0, 0],
            _ if w % 2 == 1 => [0, 1],
            _ => [1, 0],
        };
        assert_eq!(row, expected, "window {w}");
    }
    // Served at 0, 10, ..., 90 by LP 0 and returned at 5, ..., 95 by LP 1.
    assert_eq!(c.pairs.iter().map(|p| (p.0, p.1, p.2)).collect::<Vec<_>>(), vec![(0, 1, 10), (1, 0, 10)]);
    assert_eq!((c.cut_links.clone(), c.neighbours.clone()), (vec![1, 1], vec![1, 1]));
    // Globally, the idle side waits for the other in every window: LP 0 in the 10 odd
    // ones, LP 1 in the 9 even ones.
    assert_eq!(c.wait_events, vec![10, 9]);
    // With only neighbours to wait for, the same here (each is the other's neighbour),
    // except that nobody waits in the first window (both start at 0).
    assert_eq!(c.neighbour_wait_events, vec![9, 9]);
}

#[test]
fn a_window_of_0_counts_as_1() {
    let (lps, links) = network(10, 1);
    let census = [CensusLayout { partition_of: (0..10).map(|i| i % 2).collect(), window: 0 }];
    let out = run_with(lps, &links, &[0; 10], 100, Some(&census)).unwrap();
    assert_eq!(out.stats.census[0].window, 1);
    assert!(out.stats.census[0].windows.len() > 50);
}

#[test]
fn a_census_layout_must_cover_every_lp() {
    let (lps, links) = network(10, 1);
    let census = [CensusLayout { partition_of: vec![0; 9], window: 1 }];
    assert!(matches!(
        run_with(lps, &links, &[0; 10], 100, Some(&census)),
        Err(EngineError::PartitionMapLength { got: 9, num_lps: 10 })
    ));
}
