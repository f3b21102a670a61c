//! The ideal-network run (`run_ideal`): exact times and rounds of small schedules worked
//! out by hand, LogGOPSim's binary tree, stuck schedules diagnosed, determinism.

use xnet_schedule::{
    read_goal_file, run_ideal, run_ideal_until, ScheduleBuilder, Source, Stuck, TagMatch, Wait,
};

const TREE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/binary_tree_32.goal");

#[test]
fn the_binary_tree_takes_log2_rounds_and_no_time() {
    let s = read_goal_file(std::path::Path::new(TREE)).unwrap();
    let run = run_ideal(&s).unwrap();
    assert_eq!(run.rounds, 5);
    assert_eq!(run.time, 0);
    assert_eq!(run.unreceived, 0);
    assert_eq!(run.end, vec![0; 32]);
}

#[test]
fn a_ping_pong_takes_the_sum_of_its_calcs() {
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    let c0 = b.calc(100);
    let ping = b.send(1, 8, 0, 0);
    let pong = b.recv(Source::Rank(1), 8, TagMatch::Tag(1), 0);
    let c1 = b.calc(50);
    b.requires(ping, c0);
    b.requires(pong, ping);
    b.requires(c1, pong);
    b.add_rank();
    let r = b.recv(Source::Rank(0), 8, TagMatch::Tag(0), 0);
    let c = b.calc(200);
    let s = b.send(0, 8, 1, 0);
    b.requires(c, r);
    b.requires(s, c);
    let run = run_ideal(&b.build()).unwrap();
    assert_eq!(run.time, 350);
    assert_eq!(run.end, [350, 300]);
    assert_eq!(run.computing, [150, 200]);
    assert_eq!((run.waiting(0), run.waiting(1)), (200, 100));
    assert_eq!(run.rounds, 2);
}

#[test]
fn irequires_overlaps_calcs() {
    // a: 0..100; b irequires a: 0..30; c requires b: 30..80; d requires a and c: 100..110.
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    let a = b.calc(100);
    let bb = b.calc(30);
    let c = b.calc(50);
    let d = b.calc(10);
    b.irequires(bb, a);
    b.requires(c, bb);
    b.requires(d, a);
    b.requires(d, c);
    let run = run_ideal(&b.build()).unwrap();
    assert_eq!(run.time, 110);
    assert_eq!(run.computing, [110], "overlapping calcs count once");
    assert_eq!(run.rounds, 0);
}

/// `n` ranks, each receiving from its left neighbour before sending to its right one.
fn receive_first_ring(n: u32) -> Stuck {
    let mut b = ScheduleBuilder::new();
    for r in 0..n {
        b.add_rank();
        let recv = b.recv(Source::Rank((r + n - 1) % n), 8, TagMatch::Tag(0), 0);
        let send = b.send((r + 1) % n, 8, 0, 0);
        b.requires(send, recv);
    }
    run_ideal(&b.build()).unwrap_err()
}

#[test]
fn a_ring_that_only_receives_is_stuck_at_every_rank() {
    let stuck = receive_first_ring(5);
    assert_eq!(stuck.ranks.len(), 5);
    for (r, s) in stuck.ranks.iter().enumerate() {
        assert_eq!(s.rank, r as u32);
        let from = Source::Rank((r as u32 + 4) % 5);
        assert_eq!(
            s.waits,
            [Wait::Message { op: 0, from, tag: TagMatch::Tag(0), comm: 0 }, Wait::End { op: 1, on: 0 }]
        );
    }
    let text = stuck.to_string();
    assert!(text.contains("5 ranks stuck"), "{text}");
    assert!(
        text.contains(
            "rank 3: l0 waits for a message from rank 2, tag 0, comm 0; l1 waits for the end of l0"
        ),
        "{text}"
    );
}

#[test]
fn an_unmatched_receive_is_diagnosed() {
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    b.send(1, 8, 1, 0);
    b.add_rank();
    let c = b.calc(40);
    let r = b.recv(Source::Any, 8, TagMatch::Tag(2), 3);
    b.requires(r, c);
    let after = b.calc(5);
    b.irequires(after, r);
    let later = b.calc(5);
    b.requires(later, r);
    let stuck = run_ideal(&b.build()).unwrap_err();
    assert_eq!(stuck.time, 45);
    assert_eq!(stuck.ranks.len(), 1);
    assert_eq!(stuck.ranks[0].rank, 1);
    assert_eq!(
        stuck.ranks[0].waits,
        [
            Wait::Message { op: 1, from: Source::Any, tag: TagMatch::Tag(2), comm: 3 },
            Wait::End { op: 3, on: 1 }
        ]
    );
    assert!(stuck.to_string().contains("l1 waits for a message from any rank, tag 2, comm 3"));
}

#[test]
fn a_dependency_cycle_is_diagnosed() {
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    let x = b.calc(1);
    let y = b.calc(1);
    b.requires(x, y);
    b.irequires(y, x);
    let stuck = run_ideal(&b.build()).unwrap_err();
    assert_eq!(stuck.ranks[0].waits, [Wait::End { op: 0, on: 1 }, Wait::Start { op: 1, on: 0 }]);
}

/// Rank 0 receives twice from any rank; rank 2's message is sent at once (round 1), rank
/// 1's only after rank 3's reached it (round 2). Rank 0 forwards after its first receive.
fn wildcard_race() -> xnet_schedule::Schedule {
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    let first = b.recv(Source::Any, 8, TagMatch::Any, 0);
    let second = b.recv(Source::Any, 8, TagMatch::Any, 0);
    let fwd = b.send(4, 8, 0, 0);
    b.requires(second, first);
    b.requires(fwd, first);
    b.add_rank();
    let r = b.recv(Source::Rank(3), 8, TagMatch::Tag(0), 0);
    let s = b.send(0, 8, 0, 0);
    b.requires(s, r);
    b.add_rank();
    b.send(0, 8, 0, 0);
    b.add_rank();
    b.send(1, 8, 0, 0);
    b.add_rank();
    b.recv(Source::Rank(0), 8, TagMatch::Tag(0), 0);
    b.build()
}

#[test]
fn wildcard_receives_complete_deterministically() {
    let s = wildcard_race();
    let first = run_ideal(&s).unwrap();
    // Events at one time run in rank order: rank 2's message reaches rank 0 before rank 1
    // can send, so the forward is round 2 and the longest chain 3 -> 1 -> 0 is 2.
    assert_eq!(first.rounds, 2);
    for _ in 0..5 {
        assert_eq!(run_ideal(&s).unwrap(), first);
    }
}

#[test]
fn runs_are_deterministic() {
    let n = 50u32;
    let mut b = ScheduleBuilder::new();
    for r in 0..n {
        b.add_rank();
        let mut last = None;
        for t in 0..6 {
            let s = b.send((r * 7 + t) % n, 8, t, 0);
            let recv = b.recv(Source::Any, 8, TagMatch::Any, 0);
            let c = b.calc(u64::from((r * 31 + t * 17) % 97));
            b.requires(c, recv);
            if let Some(l) = last {
                b.requires(s, l);
                b.requires(recv, l);
            }
            last = Some(c);
        }
    }
    let s = b.build();
    let one = run_ideal(&s).unwrap();
    assert_eq!(run_ideal(&s).unwrap(), one);
    assert!(one.time > 0 && one.rounds >= 1);
}

#[test]
fn the_pass_stops_when_asked_and_not_before() {
    // 100,000 independent messages from rank 0 to rank 1: 200,000 ops and about 300,000
    // events, so the stop is asked (every 65,536 events) four times in a whole pass.
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    for i in 0..100_000 {
        b.send(1, 8, i, 0);
    }
    b.add_rank();
    for i in 0..100_000 {
        b.recv(Source::Rank(0), 8, TagMatch::Tag(i), 0);
    }
    let s = b.build();
    let asked = std::cell::Cell::new(0u32);
    let count = || {
        asked.set(asked.get() + 1);
        false
    };
    let whole = run_ideal_until(&s, &count).expect("not stopped").unwrap();
    assert_eq!(whole, run_ideal(&s).unwrap());
    assert_eq!(asked.get(), 4);
    // Stopping at the second ask gives no result.
    asked.set(0);
    let stop = || {
        asked.set(asked.get() + 1);
        asked.get() == 2
    };
    assert!(run_ideal_until(&s, &stop).is_none());
    assert_eq!(asked.get(), 2);
}
