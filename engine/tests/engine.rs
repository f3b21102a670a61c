//! Engine-level tests with a synthetic model: determinism for any partitioning, error
//! handling and early stops.

mod common;

use common::{mix, network, Gossip, STOP};
use std::sync::atomic::Ordering;
use xnet_engine::{run_partitions, Checkpoint, Control, EngineError, LinkSpec, RunConfig};

fn run(lps: Vec<Gossip>, links: &[LinkSpec], parts: &[u32]) -> Result<Vec<Gossip>, EngineError> {
    let cfg = RunConfig { end_time: 3_000, checkpoint_period: 250, stop: None, census: None };
    let out = run_partitions(
        lps,
        links,
        parts,
        &cfg,
        |lps: &mut [Gossip], _: &mut u64, _| lps.len(),
        |_: Checkpoint<usize>| Control::Continue,
    )?;
    assert_eq!(out.time, 3_000);
    assert!(!out.stopped_early);
    // Each partition's local state counted the events of its own LPs.
    assert_eq!(out.locals.len(), out.stats.partitions.len());
    assert_eq!(out.locals.iter().sum::<u64>(), out.lps.iter().map(|(_, l)| l.events).sum::<u64>());
    assert_eq!(out.locals, out.stats.events, "events per partition");
    Ok(out.lps.into_iter().map(|(_, l)| l).collect())
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
        Err(EngineError::PartitionFailed { rank, partition, message }) => {
            assert_eq!((rank, partition), (0, 1));
            assert!(message.contains("model failure in LP 15"), "{message}");
        }
        other => panic!("expected a partition failure, got {other:?}"),
    }
}

#[test]
fn bad_graphs_are_rejected() {
    let (lps, mut links) = network(4, 1);
    links[2].latency = 0;
    assert!(matches!(
        run(lps.clone(), &links, &[0, 0, 1, 1]),
        Err(EngineError::BadLatency { link: 2, latency: 0, .. })
    ));
    let (lps, links) = network(4, 1);
    assert!(matches!(run(lps.clone(), &links, &[0, 0, 2, 2]), Err(EngineError::EmptyPartition(1))));
    assert!(matches!(run(lps, &links, &[0, 0]), Err(EngineError::PartitionMapLength { got: 2, num_lps: 4 })));
}

#[test]
fn the_coordinator_can_stop_early_and_sees_every_checkpoint() {
    let (lps, links) = network(10, 5);
    let mut seen = Vec::new();
    let cfg = RunConfig { end_time: 10_000, checkpoint_period: 100, stop: None, census: None };
    let out = run_partitions(
        lps,
        &links,
        &[0, 0, 0, 0, 0, 1, 1, 1, 1, 1],
        &cfg,
        |lps: &mut [Gossip], _: &mut u64, t| (t, lps.len()),
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

#[test]
fn a_stop_request_ends_the_run_within_a_window() {
    let (mut lps, links) = network(20, 3);
    lps[7].stop_at = Some(1_234);
    // One partition (no cut link: windows of the shortest link), two and four (windows of
    // the lookahead); checkpoints every 50,000 cycles, far after the request.
    for parts in
        [vec![0; 20], (0..20).map(|i| i / 10).collect(), (0..20).map(|i| i % 4).collect::<Vec<u32>>()]
    {
        STOP.store(false, Ordering::Relaxed);
        let cfg = RunConfig { end_time: 100_000, checkpoint_period: 50_000, stop: Some(&STOP), census: None };
        let mut seen = Vec::new();
        let out = run_partitions(
            lps.clone(),
            &links,
            &parts,
            &cfg,
            |lps: &mut [Gossip], _: &mut u64, t| (t, lps.len()),
            |cp: Checkpoint<(u64, usize)>| {
                assert!(cp.reports.iter().all(|&(t, _)| t == cp.time));
                seen.push((cp.time, cp.last));
                Control::Continue
            },
        )
        .unwrap();
        assert!(out.stopped_early, "{parts:?}");
        // The request came at 1,234 at the earliest, in a window at most 6 cycles long (the
        // longest link); the coordinator sees it at the end of that window or, if another
        // partition set it after the coordinator looked, of the next one, which ends the run.
        assert!((1_235..=1_246).contains(&out.time), "stopped at {} for {parts:?}", out.time);
        assert_eq!(seen, vec![(out.time, false)], "{parts:?}");
    }
}

/// An in-process stand-in for MPI: ranks are threads that meet at a barrier.
mod local_ranks {
    use std::sync::{Arc, Barrier, Mutex};
    use xnet_engine::RankComm;

    pub struct Hub {
        size: usize,
        barrier: Barrier,
        /// `matrix[from][to]`: what `from` sends to `to` this step (`None`: nothing sent).
        matrix: Mutex<Vec<Vec<Option<Vec<u8>>>>>,
        values: Mutex<Vec<Vec<u64>>>,
        blobs: Mutex<Vec<Vec<u8>>>,
    }

    pub struct LocalComm {
        rank: usize,
        hub: Arc<Hub>,
    }

    pub fn comms(size: usize) -> Vec<LocalComm> {
        let hub = Arc::new(Hub {
            size,
            barrier: Barrier::new(size),
            matrix: Mutex::new(vec![vec![None; size]; size]),
            values: Mutex::new(vec![Vec::new(); size]),
            blobs: Mutex::new(vec![Vec::new(); size]),
        });
        (0..size).map(|rank| LocalComm { rank, hub: hub.clone() }).collect()
    }

    impl LocalComm {
        fn min_in_place(&mut self, values: &mut [u64]) {
            self.hub.values.lock().unwrap()[self.rank] = values.to_vec();
            self.hub.barrier.wait();
            let all = self.hub.values.lock().unwrap().clone();
            self.hub.barrier.wait();
            for (i, v) in values.iter_mut().enumerate() {
                *v = all.iter().map(|x| x[i]).min().unwrap();
            }
        }
    }

    impl RankComm for LocalComm {
        fn rank(&self) -> usize {
            self.rank
        }
        fn size(&self) -> usize {
            self.hub.size
        }
        fn senders(&mut self, receivers: &[usize]) -> Vec<usize> {
            for &r in receivers {
                self.hub.matrix.lock().unwrap()[self.rank][r] = Some(Vec::new());
            }
            self.hub.barrier.wait();
            let from = {
                let mut m = self.hub.matrix.lock().unwrap();
                (0..self.hub.size).filter(|&r| m[r][self.rank].take().is_some()).collect()
            };
            self.hub.barrier.wait();
            from
        }
        fn exchange(&mut self, send: Vec<(usize, Vec<u8>)>, from: &[usize], min: &mut [u64]) -> Vec<Vec<u8>> {
            for (to, bytes) in send {
                self.hub.matrix.lock().unwrap()[self.rank][to] = Some(bytes);
            }
            self.min_in_place(min);
            let mut m = self.hub.matrix.lock().unwrap();
            // Exactly one message from each sender, nothing from anybody else.
            for r in 0..self.hub.size {
                assert_eq!(m[r][self.rank].is_some(), from.contains(&r), "rank {r} -> {}", self.rank);
            }
            let got = from.iter().map(|&r| m[r][self.rank].take().unwrap()).collect();
            drop(m);
            self.hub.barrier.wait();
            got
        }
        fn min_all(&mut self, values: &mut [u64]) {
            self.min_in_place(values);
        }
        fn gather(&mut self, data: Vec<u8>) -> Option<Vec<Vec<u8>>> {
            self.hub.blobs.lock().unwrap()[self.rank] = data;
            self.hub.barrier.wait();
            let all = (self.rank == 0).then(|| self.hub.blobs.lock().unwrap().clone());
            self.hub.barrier.wait();
            all
        }
        fn broadcast(&mut self, data: Vec<u8>) -> Vec<u8> {
            if self.rank == 0 {
                self.hub.blobs.lock().unwrap()[0] = data;
            }
            self.hub.barrier.wait();
            let v = self.hub.blobs.lock().unwrap()[0].clone();
            self.hub.barrier.wait();
            v
        }
        fn abort(&self, code: i32) -> ! {
            panic!("rank {} aborted the run with code {code}", self.rank)
        }
    }
}

/// Runs the gossip model on `ranks` in-process ranks, partitions dealt out in blocks.
fn run_ranks(
    lps: Vec<Gossip>,
    links: &[LinkSpec],
    parts: &[u32],
    partition_rank: &[u32],
) -> Vec<Result<Vec<(u32, Gossip)>, EngineError>> {
    let ranks = partition_rank.iter().max().unwrap() + 1;
    run_layouts(lps, links, &vec![(parts, partition_rank); ranks as usize])
}

/// Runs the gossip model on in-process ranks, rank `r` with the layout (partition of every
/// LP, rank of every partition) `layouts[r]`: the same on every rank, unless a test gives
/// them different arguments.
fn run_layouts(
    lps: Vec<Gossip>,
    links: &[LinkSpec],
    layouts: &[(&[u32], &[u32])],
) -> Vec<Result<Vec<(u32, Gossip)>, EngineError>> {
    let comms = local_ranks::comms(layouts.len());
    let cfg = RunConfig { end_time: 3_000, checkpoint_period: 250, stop: None, census: None };
    std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .into_iter()
            .map(|mut comm| {
                // A rank gets its own LPs and the links that leave them, renumbered.
                let rank = xnet_engine::RankComm::rank(&comm);
                let (parts, partition_rank) = layouts[rank];
                let here = |lp: u32| partition_rank[parts[lp as usize] as usize] as usize == rank;
                let mut local_links = Vec::new();
                let mut renumber = vec![u32::MAX; links.len()];
                for (i, l) in links.iter().enumerate().filter(|(_, l)| here(l.src)) {
                    renumber[i] = local_links.len() as u32;
                    local_links.push(*l);
                }
                let mine: Vec<(u32, Gossip)> = lps
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| here(*i as u32))
                    .map(|(i, l)| {
                        let mut l = l.clone();
                        l.out_links = l.out_links.iter().map(|&k| renumber[k as usize]).collect();
                        (i as u32, l)
                    })
                    .collect();
                let (cfg, lps) = (&cfg, &lps);
                s.spawn(move || {
                    let layout = xnet_engine::Layout { partition_of: parts, partition_rank };
                    let mut seen = 0;
                    xnet_engine::run_distributed(
                        mine,
                        &local_links,
                        &layout,
                        &mut comm,
                        cfg,
                        |lps: &mut [Gossip], _: &mut u64, _| lps.iter().map(|l| l.events).sum::<u64>(),
                        |cp: Checkpoint<u64>| {
                            assert_eq!(cp.reports.len(), partition_rank.len());
                            seen += 1;
                            Control::Continue
                        },
                    )
                    .map(|o| {
                        // Back to the global link numbers, for comparison with other runs.
                        let restore = |(i, mut l): (u32, Gossip)| {
                            l.out_links = lps[i as usize].out_links.clone();
                            (i, l)
                        };
                        o.lps.into_iter().map(restore).collect()
                    })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn ranks_times_threads_give_the_single_thread_result() {
    let (lps, links) = network(60, 7);
    let reference = run(lps.clone(), &links, &[0; 60]).unwrap();
    // 2 ranks x 2 threads and 4 ranks x 1 thread, with scattered LPs.
    let parts: Vec<u32> = (0..60).map(|i| (mix(i as u64 + 100) % 4) as u32).collect();
    for partition_rank in [vec![0, 0, 1, 1], vec![0, 1, 2, 3], vec![1, 0, 0, 1]] {
        let mut merged: Vec<(u32, Gossip)> = run_ranks(lps.clone(), &links, &parts, &partition_rank)
            .into_iter()
            .flat_map(|r| r.unwrap())
            .collect();
        merged.sort_by_key(|(i, _)| *i);
        let merged: Vec<Gossip> = merged.into_iter().map(|(_, l)| l).collect();
        assert_eq!(merged, reference, "ranks {partition_rank:?}");
    }
}

#[test]
fn a_failure_on_another_rank_stops_every_rank_and_rank_0_names_it() {
    let (mut lps, links) = network(40, 11);
    lps[33].panic_at = Some(400);
    let parts: Vec<u32> = (0..40).map(|i| i / 10).collect();
    let results = run_ranks(lps, &links, &parts, &[0, 0, 1, 1]);
    match &results[0] {
        Err(EngineError::PartitionFailed { rank, partition, message }) => {
            assert_eq!((*rank, *partition), (1, 3));
            assert!(message.contains("model failure in LP 33"), "{message}");
        }
        other => panic!("rank 0 should report the failure, got {:?}", other.as_ref().map(|_| ())),
    }
    assert!(results[1].is_err(), "rank 1 must stop too");
}

#[test]
fn ranks_given_different_layouts_all_refuse_instead_of_failing_mid_run() {
    let (lps, links) = network(40, 11);
    // Rank 0 runs 1 thread per rank, rank 1 two (as `-t` differing between ranks did).
    let two: Vec<u32> = (0..40).map(|i| i / 20).collect();
    let four: Vec<u32> = (0..40).map(|i| i / 10).collect();
    let results = run_layouts(lps, &links, &[(&two, &[0, 1]), (&four, &[0, 0, 1, 1])]);
    for (rank, r) in results.iter().enumerate() {
        assert!(matches!(r, Err(EngineError::LayoutMismatch)), "rank {rank}: {:?}", r.as_ref().map(|_| ()));
    }
}
