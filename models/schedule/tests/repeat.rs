//! A repeated graph (`Repeated`) is the same graph as its iterations written out: same ops,
//! dependencies and ideal run; copies side by side (`Replicas`) are the copies written out.

use std::sync::Arc;
use xnet_schedule::{
    run_ideal, write_goal, Graph, OpId, Repeated, Replicas, Schedule, ScheduleBuilder, Source, TagMatch,
};

/// Two ranks exchange a message, then compute `c` ns: one iteration.
fn exchange(c: u64) -> Schedule {
    let mut b = ScheduleBuilder::new();
    for r in 0..2 {
        b.add_rank();
        let recv = b.recv(Source::Rank(1 - r), 8, TagMatch::Tag(0), 0);
        let send = b.send(1 - r, 8, 0, 0);
        let calc = b.calc(c);
        b.requires(calc, recv);
        b.requires(calc, send);
    }
    b.build()
}

/// The same iterations written out in full.
fn unrolled(costs: &[u64], iterations: u32) -> Schedule {
    let mut b = ScheduleBuilder::new();
    for r in 0..2 {
        b.add_rank();
        let mut last = None;
        for i in 0..iterations {
            let recv = b.recv(Source::Rank(1 - r), 8, TagMatch::Tag(0), 0);
            let send = b.send(1 - r, 8, 0, 0);
            let calc = b.calc(costs[i as usize % costs.len()]);
            b.requires(calc, recv);
            b.requires(calc, send);
            if let Some(l) = last {
                b.requires(recv, l);
                b.requires(send, l);
            }
            last = Some(calc);
        }
    }
    b.build()
}

fn listed(g: &dyn Graph, rank: u32, op: OpId, end: bool) -> Vec<OpId> {
    let mut v = Vec::new();
    if end {
        g.each_after_end(rank, op, &mut |d| v.push(d));
    } else {
        g.each_after_start(rank, op, &mut |d| v.push(d));
    }
    v
}

#[test]
fn a_repeat_is_its_iterations_written_out() {
    let r = Repeated::new(vec![exchange(5), exchange(7)], 5).unwrap();
    let full = unrolled(&[5, 7], 5);
    assert_eq!(Graph::num_ranks(&r), 2);
    assert_eq!((r.iterations(), r.ops_per_iteration(1)), (5, 3));
    for rank in 0..2 {
        assert_eq!(Graph::ops_in_rank(&r, rank), full.ops_in_rank(rank));
        for op in 0..full.ops_in_rank(rank) {
            assert_eq!(Graph::op(&r, rank, op), full.op(rank, op));
            assert_eq!(Graph::unmet(&r, rank, op), full.unmet(rank, op));
            for end in [false, true] {
                assert_eq!(listed(&r, rank, op, end), listed(&full, rank, op, end), "op {op}");
            }
        }
    }
    assert_eq!(run_ideal(&r).unwrap(), run_ideal(&full).unwrap());
    assert_eq!(run_ideal(&r).unwrap().time, 5 + 7 + 5 + 7 + 5);
    assert_eq!(run_ideal(&r).unwrap().rounds, 5);
    // Written as GOAL, the repeat is its iterations written out.
    let (mut repeated, mut written) = (Vec::new(), Vec::new());
    write_goal(&r, &mut repeated).unwrap();
    write_goal(&full, &mut written).unwrap();
    assert_eq!(String::from_utf8(repeated).unwrap(), String::from_utf8(written).unwrap());
}

#[test]
fn copies_side_by_side_are_the_copies_written_out() {
    // Three copies of the two-rank exchange: ranks 2k and 2k + 1 exchange.
    let copies = Replicas::new(Arc::new(exchange(5)), 3).unwrap();
    let mut b = ScheduleBuilder::new();
    for r in 0..6u32 {
        b.add_rank();
        let peer = r ^ 1;
        let recv = b.recv(Source::Rank(peer), 8, TagMatch::Tag(0), 0);
        let send = b.send(peer, 8, 0, 0);
        let calc = b.calc(5);
        b.requires(calc, recv);
        b.requires(calc, send);
    }
    let written = b.build();
    let (mut a, mut c) = (Vec::new(), Vec::new());
    write_goal(&copies, &mut a).unwrap();
    write_goal(&written, &mut c).unwrap();
    assert_eq!(String::from_utf8(a).unwrap(), String::from_utf8(c).unwrap());
    assert_eq!(run_ideal(&copies).unwrap(), run_ideal(&written).unwrap());
    assert!(Replicas::new(Arc::new(exchange(5)), 0).is_err());
    assert!(Replicas::new(Arc::new(exchange(5)), u32::MAX).is_err());
}
