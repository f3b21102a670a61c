//! LogGOPSim's sample schedule `binary_tree_32.goal` (tests/data/README.md names its
//! source and licence): what the reader makes of it, checked against counts taken from the
//! text independently of the reader.

use std::path::Path;

use xnet_schedule::{read_goal_file, Op, Source, TagMatch};

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/binary_tree_32.goal");

/// Per rank (the blocks in file order): (sends, receives, calcs, requires, irequires),
/// counted by plain text matching.
fn counts_from_text() -> Vec<(u32, [u64; 5])> {
    let text = std::fs::read_to_string(FILE).unwrap();
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("rank ") {
            out.push((rest.trim_end_matches(" {").parse().unwrap(), [0; 5]));
        } else if let Some((_, c)) = out.last_mut() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let i = match words.as_slice() {
                [_, "send", ..] => 0,
                [_, "recv", ..] => 1,
                [_, "calc", ..] => 2,
                [_, "requires", _] => 3,
                [_, "irequires", _] => 4,
                _ => continue,
            };
            c[i] += 1;
        }
    }
    out
}

#[test]
fn binary_tree_32_reads_as_the_text_says() {
    let s = read_goal_file(Path::new(FILE)).unwrap();
    assert_eq!(s.num_ranks(), 32);
    let expected = counts_from_text();
    assert_eq!(expected.iter().map(|(r, _)| *r).collect::<Vec<_>>(), (0..32).collect::<Vec<_>>());
    assert_eq!(expected[0].1, [5, 0, 0, 0, 0], "rank 0 sends 5 messages");
    let mut total = [0u64; 5];
    for (rank, c) in &expected {
        let mut got = [0u64; 5];
        for op in s.ops(*rank) {
            got[match op {
                Op::Send { .. } => 0,
                Op::Recv { .. } => 1,
                Op::Calc { .. } => 2,
            }] += 1;
        }
        got[3] = s.requires_in_rank(*rank);
        got[4] = s.irequires_in_rank(*rank);
        assert_eq!(&got, c, "rank {rank}");
        (0..5).for_each(|i| total[i] += c[i]);
    }
    assert_eq!(total, [31, 31, 0, 26, 0], "31 messages; every send of ranks 1..16 waits for the receive");
    assert_eq!(s.num_ops(), 62);
    assert_eq!(s.validate(), vec![]);
    let unmatched = s.unmatched();
    assert!(unmatched.is_empty() && !unmatched.conservative, "{unmatched:?}");
}

#[test]
fn binary_tree_32_is_the_binomial_tree() {
    let s = read_goal_file(Path::new(FILE)).unwrap();
    for r in 0..32u32 {
        let recvs: Vec<Op> = s.ops(r).filter(|o| matches!(o, Op::Recv { .. })).collect();
        let sends: Vec<u32> =
            s.ops(r).filter_map(|o| if let Op::Send { to, .. } = o { Some(to) } else { None }).collect();
        // The children: r + 2^k for every power 2^k above r, within the 32 ranks.
        let children: Vec<u32> =
            (0..5).map(|k| 1 << k).filter(|&p| p > r && r + p < 32).map(|p| r + p).collect();
        assert_eq!(sends, children, "rank {r}");
        if r == 0 {
            assert!(recvs.is_empty());
            assert_eq!(s.ready(0).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
            continue;
        }
        let parent = r - (1 << (31 - r.leading_zeros()));
        assert_eq!(
            recvs,
            [Op::Recv { from: Source::Rank(parent), bytes: 1, tag: TagMatch::Tag(0), comm: 0 }],
            "rank {r}"
        );
        // The receive comes first and every send waits for its end.
        assert_eq!(s.op(r, 0), recvs[0]);
        assert_eq!(s.ready(r).collect::<Vec<_>>(), [0]);
        assert_eq!(s.after_end(r, 0), (1..=sends.len() as u32).collect::<Vec<_>>());
        assert!(s.after_start(r, 0).is_empty());
        for op in 1..=sends.len() as u32 {
            assert_eq!((s.unmet(r, op), s.cpu(r, op), s.nic(r, op)), (1, 0, 0));
        }
    }
}
