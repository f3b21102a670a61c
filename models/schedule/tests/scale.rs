//! Reading speed and memory at scale, run by hand:
//! `cargo test --release -p xnet-schedule --test scale -- --ignored --nocapture`.

use std::time::Instant;

use xnet_schedule::{read_goal, write_goal, ScheduleBuilder, Source, TagMatch};

#[test]
#[ignore = "a measurement (a few seconds), not a check"]
fn a_million_ops_read_back() {
    let (ranks, rounds) = (10_000u32, 34u32);
    let mut b = ScheduleBuilder::new();
    for r in 0..ranks {
        b.add_rank();
        let mut last = None;
        for t in 0..rounds {
            let recv = b.recv(Source::Rank((r + ranks - 1) % ranks), 1024, TagMatch::Tag(t), 0);
            let send = b.send((r + 1) % ranks, 1024, t, 0);
            let calc = b.calc(1000);
            b.irequires(send, recv);
            b.requires(calc, recv);
            b.requires(calc, send);
            if let Some(l) = last {
                b.requires(recv, l);
            }
            last = Some(calc);
        }
    }
    let s = b.build();
    let mut text = Vec::new();
    write_goal(&s, &mut text).unwrap();
    let t = Instant::now();
    let back = read_goal(&text[..], "ring.goal").unwrap();
    let read = t.elapsed();
    assert_eq!(back, s);
    let t = Instant::now();
    assert!(back.validate().is_empty() && back.unmatched().is_empty());
    println!(
        "{} ops, {} MB of GOAL read in {:.2?} ({:.0} MB/s); {} bytes in memory ({:.1} per op); validate + unmatched {:.2?}",
        s.num_ops(),
        text.len() / 1_000_000,
        read,
        text.len() as f64 / 1e6 / read.as_secs_f64(),
        s.memory_bytes(),
        s.memory_bytes() as f64 / s.num_ops() as f64,
        t.elapsed()
    );
}

#[test]
#[ignore = "a measurement (seconds), not a check"]
fn a_million_rank_ring_on_the_ideal_network() {
    let (ranks, laps) = (1_000_000u32, 4u32);
    let mut b = ScheduleBuilder::new();
    for r in 0..ranks {
        b.add_rank();
        let mut last = None;
        for t in 0..laps {
            let send = b.send((r + 1) % ranks, 8, t, 0);
            let recv = b.recv(Source::Rank((r + ranks - 1) % ranks), 8, TagMatch::Tag(t), 0);
            let calc = b.calc(1000);
            b.requires(calc, send);
            b.requires(calc, recv);
            if let Some(l) = last {
                b.requires(send, l);
                b.requires(recv, l);
            }
            last = Some(calc);
        }
    }
    let s = b.build();
    let t = Instant::now();
    let run = xnet_schedule::run_ideal(&s).unwrap();
    let took = t.elapsed();
    assert_eq!((run.time, run.rounds), (u64::from(laps) * 1000, laps));
    println!(
        "ideal run of {} ranks, {} ops in {:.2?} ({:.0} ns per op)",
        ranks,
        s.num_ops(),
        took,
        took.as_nanos() as f64 / s.num_ops() as f64
    );
}

#[test]
#[ignore = "a measurement (seconds), not a check"]
fn a_million_rank_chain_on_the_ideal_network() {
    // One message passed down 1M ranks: a million rounds, a queue of one event at a time.
    let ranks = 1_000_000u32;
    let mut b = ScheduleBuilder::new();
    for r in 0..ranks {
        b.add_rank();
        let recv = (r > 0).then(|| b.recv(Source::Rank(r - 1), 8, TagMatch::Tag(0), 0));
        let calc = b.calc(1);
        if let Some(recv) = recv {
            b.requires(calc, recv);
        }
        if r + 1 < ranks {
            let send = b.send(r + 1, 8, 0, 0);
            b.requires(send, calc);
        }
    }
    let s = b.build();
    let t = Instant::now();
    let run = xnet_schedule::run_ideal(&s).unwrap();
    let took = t.elapsed();
    assert_eq!((run.time, run.rounds), (u64::from(ranks), ranks - 1));
    println!("ideal run of a {}-rank chain, {} ops in {:.2?}", ranks, s.num_ops(), took);
}

#[test]
#[ignore = "a measurement (seconds), not a check"]
fn a_million_rank_stuck_ring_diagnosed() {
    let ranks = 1_000_000u32;
    let mut b = ScheduleBuilder::new();
    for r in 0..ranks {
        b.add_rank();
        let recv = b.recv(Source::Rank((r + ranks - 1) % ranks), 8, TagMatch::Tag(0), 0);
        let send = b.send((r + 1) % ranks, 8, 0, 0);
        b.requires(send, recv);
    }
    let s = b.build();
    let t = Instant::now();
    let stuck = xnet_schedule::run_ideal(&s).unwrap_err();
    let took = t.elapsed();
    assert_eq!(stuck.ranks.len(), ranks as usize);
    let text = stuck.to_string();
    println!(
        "{}-rank receive-first ring diagnosed in {:.2?}; {} lines shown",
        ranks,
        took,
        text.lines().count()
    );
}
