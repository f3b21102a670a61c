//! The operation graph: the builder and accessors, its memory, `validate` and `unmatched`.

use xnet_schedule::{Mismatch, Op, Problem, ScheduleBuilder, Source, TagMatch};

#[test]
fn the_builder_stores_ops_and_both_kinds_of_dependents() {
    let mut b = ScheduleBuilder::new();
    assert_eq!(b.add_rank(), 0);
    let r = b.recv(Source::Rank(1), 64, TagMatch::Tag(2), 0);
    let c = b.calc(500);
    let s = b.send(1, 32, 2, 0);
    assert_eq!((r, c, s), (0, 1, 2));
    b.irequires(c, r);
    b.requires(s, r);
    b.requires(s, c);
    assert_eq!(b.add_rank(), 1);
    b.send(0, 64, 2, 0);
    b.recv(Source::Rank(0), 32, TagMatch::Tag(2), 0);
    let sched = b.build();
    assert_eq!((sched.num_ranks(), sched.num_ops()), (2, 5));
    assert_eq!(sched.op(0, 1), Op::Calc { time: 500 });
    assert_eq!(sched.after_start(0, 0), [1]);
    assert_eq!(sched.after_end(0, 0), [2]);
    assert_eq!(sched.after_end(0, 1), [2]);
    assert!(sched.after_start(0, 2).is_empty() && sched.after_end(0, 2).is_empty());
    assert_eq!([sched.unmet(0, 0), sched.unmet(0, 1), sched.unmet(0, 2)], [0, 1, 2]);
    assert_eq!(sched.ready(0).collect::<Vec<_>>(), [0]);
    assert_eq!(sched.ready(1).collect::<Vec<_>>(), [0, 1]);
    assert_eq!((sched.requires_in_rank(0), sched.irequires_in_rank(0), sched.requires_in_rank(1)), (2, 1, 0));
    assert!(sched.after_end(1, 0).is_empty() && sched.after_start(1, 1).is_empty());
    // 36 bytes an op, 4 a dependency, 3 x 8 per rank (plus one).
    assert_eq!(sched.memory_bytes(), 5 * 36 + 3 * 4 + 3 * 3 * 8);
    assert_eq!(sched.validate(), vec![]);
    assert!(sched.unmatched().is_empty());
}

#[test]
fn validate_finds_a_cycle_through_both_kinds_of_dependency() {
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    b.add_rank();
    let ops: Vec<u32> = (0..4).map(|_| b.calc(1)).collect();
    b.requires(ops[2], ops[0]);
    b.irequires(ops[1], ops[2]);
    b.requires(ops[0], ops[1]);
    b.requires(ops[3], ops[0]);
    let s = b.build();
    let problems = s.validate();
    assert_eq!(problems, [Problem::Cycle { rank: 1, ops: vec![0, 2, 1] }]);
    assert_eq!(
        problems[0].to_string(),
        "rank 1: dependency cycle l0 -> l2 -> l1 -> l0 (each waits for the one before)"
    );
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    let a = b.calc(1);
    b.irequires(a, a);
    assert_eq!(b.build().validate(), [Problem::Cycle { rank: 0, ops: vec![0] }]);
}

#[test]
fn validate_finds_peers_out_of_range_and_messages_to_oneself() {
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    b.send(2, 1, 0, 0);
    b.recv(Source::Any, 1, TagMatch::Any, 0);
    b.add_rank();
    b.recv(Source::Rank(7), 1, TagMatch::Tag(0), 0);
    b.send(1, 1, 0, 0);
    let problems = b.build().validate();
    let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "rank 0: l0 names rank 2, but the schedule has 2 ranks",
            "rank 1: l0 names rank 7, but the schedule has 2 ranks",
            "rank 1: l1 sends to or receives from itself",
        ]
    );
}

/// Rank 0 sends `n01` messages to rank 1 (tag 5), rank 1 posts `r10` receives for them.
fn pair(n01: usize, r10: usize) -> ScheduleBuilder {
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    for _ in 0..n01 {
        b.send(1, 8, 5, 0);
    }
    b.add_rank();
    for _ in 0..r10 {
        b.recv(Source::Rank(0), 8, TagMatch::Tag(5), 0);
    }
    b
}

#[test]
fn unmatched_counts_what_cannot_pair_by_comm_source_destination_and_tag() {
    assert!(pair(3, 3).build().unmatched().is_empty());
    let u = pair(2, 3).build().unmatched();
    assert!(!u.conservative);
    let m = Mismatch { comm: 0, to: 1, from: Source::Rank(0), tag: TagMatch::Tag(5), sends: 0, recvs: 1 };
    assert_eq!(u.mismatches, [m]);
    assert_eq!(
        u.mismatches[0].to_string(),
        "rank 1 waits for 1 message(s) from rank 0 with tag 5 on comm 0 that are never sent"
    );
    let u = pair(4, 1).build().unmatched();
    assert_eq!(
        u.mismatches[0].to_string(),
        "rank 0 sends 3 message(s) to rank 1 with tag 5 on comm 0 that no receive takes"
    );
    // Another tag, another communicator: neither pairs.
    let mut b = pair(1, 0);
    b.recv(Source::Rank(0), 8, TagMatch::Tag(6), 0);
    b.recv(Source::Rank(0), 8, TagMatch::Tag(5), 1);
    let u = b.build().unmatched();
    let got: Vec<(u32, TagMatch, u64, u64)> =
        u.mismatches.iter().map(|m| (m.comm, m.tag, m.sends, m.recvs)).collect();
    assert_eq!(got, [(0, TagMatch::Tag(5), 1, 0), (0, TagMatch::Tag(6), 0, 1), (1, TagMatch::Tag(5), 0, 1)]);
}

#[test]
fn unmatched_with_wildcards_is_conservative() {
    // Sends of tags 5 and 9 to rank 1, taken by an any-source and an any-tag receive.
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    b.send(1, 8, 5, 0);
    b.send(1, 8, 9, 0);
    b.add_rank();
    b.recv(Source::Any, 8, TagMatch::Tag(9), 0);
    b.recv(Source::Rank(0), 8, TagMatch::Any, 0);
    let u = b.build().unmatched();
    assert!(u.is_empty() && u.conservative, "{u:?}");
    // Two sends of tag 5 for three receives: the any-tag and the any-any receives take
    // them, the receive of tag 9 from any rank waits for ever.
    let mut b = pair(2, 0);
    b.recv(Source::Any, 8, TagMatch::Tag(9), 0);
    b.recv(Source::Rank(0), 8, TagMatch::Any, 0);
    b.recv(Source::Any, 8, TagMatch::Any, 0);
    let u = b.build().unmatched();
    assert!(u.conservative);
    let text: Vec<String> = u.mismatches.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        ["rank 1 waits for 1 message(s) from any rank with tag 9 on comm 0 that are never sent"]
    );
}
