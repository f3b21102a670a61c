//! The GOAL reader and writer: what they accept, the exact errors (file, line, rank, what
//! was expected), the round trip, and no panic on mutated text.

use proptest::prelude::*;
use xnet_schedule::goal::{is_binary_goal, read_goal_binary};
use xnet_schedule::{read_goal, write_goal, GoalError, Op, Schedule, ScheduleBuilder, Source, TagMatch};

fn read(text: &str) -> Result<Schedule, GoalError> {
    read_goal(text.as_bytes(), "t.goal")
}

fn error(text: &str) -> String {
    read(text).expect_err("the text is not GOAL").to_string()
}

fn write(s: &Schedule) -> String {
    let mut out = Vec::new();
    write_goal(s, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

const RICH: &str = "// a header comment
num_ranks 3
/* a comment
   over lines */ rank 0 {
a: send 8b to 1 tag 7
b_2: calc 100 cpu 1
send 16b to 2
b_2 requires a
c: recv 4b from -1 tag -1 cpu 2 nic 3
c irequires b_2 // a comment after a statement
}
rank 1 {
x requires y
y: recv 8b from 0 tag 7
x: calc 5
}
";

#[test]
fn every_form_of_the_grammar_is_read() {
    let s = read(RICH).unwrap();
    assert_eq!(s.num_ranks(), 3);
    let r0: Vec<Op> = s.ops(0).collect();
    assert_eq!(
        r0,
        [
            Op::Send { to: 1, bytes: 8, tag: 7, comm: 0 },
            Op::Calc { time: 100 },
            Op::Send { to: 2, bytes: 16, tag: 0, comm: 0 },
            Op::Recv { from: Source::Any, bytes: 4, tag: TagMatch::Any, comm: 0 },
        ]
    );
    assert_eq!((s.cpu(0, 1), s.nic(0, 1), s.cpu(0, 3), s.nic(0, 3)), (1, 0, 2, 3));
    assert_eq!(s.after_end(0, 0), [1]);
    assert_eq!(s.after_start(0, 1), [3]);
    assert_eq!(s.ready(0).collect::<Vec<_>>(), [0, 2]);
    // A dependency before the labels it names (LogGOPSim refuses it; read here).
    assert_eq!(
        s.ops(1).collect::<Vec<_>>(),
        [Op::Recv { from: Source::Rank(0), bytes: 8, tag: TagMatch::Tag(7), comm: 0 }, Op::Calc { time: 5 }]
    );
    assert_eq!((s.after_end(1, 0), s.unmet(1, 1)), (&[1][..], 1));
    assert_eq!(s.ops_in_rank(2), 0, "a rank without a block is empty");
}

#[test]
fn errors_name_file_line_rank_and_what_was_expected() {
    let cases = [
        (
            "num_ranks 4\nrank 3 {\nl1: send 8b from 1\n}\n",
            "t.goal:3: rank 3: expected 'to' after the size, got 'from'",
        ),
        (
            "num_ranks 4\nrank 0 {\nl1: recv 8b to 1\n}\n",
            "t.goal:3: rank 0: expected 'from' after the size, got 'to'",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: send 8 to 1\n}\n",
            "t.goal:3: rank 0: expected 'b' after the size, got 'to'",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: send b to 1\n}\n",
            "t.goal:3: rank 0: expected a size after 'send', got 'b'",
        ),
        ("rank 0 {\n}\n", "t.goal:1: expected 'num_ranks' before the first rank"),
        ("num_ranks 2\nrank 2 {\n}\n", "t.goal:2: rank 2 is out of range: num_ranks is 2"),
        (
            "num_ranks 2\nrank 1 {\n}\nrank 0 {\n}\n",
            "t.goal:4: rank 0 comes too late: ranks must be in increasing order, each once",
        ),
        ("num_ranks 2\nrank 1\n", "t.goal:2: expected '{' after 'rank 1', got end of line"),
        ("num_ranks 2\nnum_ranks 2\n", "t.goal:2: 'num_ranks' is given twice"),
        ("num_ranks 0\n", "t.goal:1: 'num_ranks' must be at least 1"),
        (
            "num_ranks 99999999999\n",
            "t.goal:1: '99999999999' is too large for a number of ranks after 'num_ranks'",
        ),
        ("\n\n", "t.goal:2: the file has no 'num_ranks' line"),
        (
            "num_ranks 2\nrank 0 {\nl1: calc 5\n",
            "t.goal:3: rank 0: the file ends inside rank 0's block: expected '}'",
        ),
        ("num_ranks 2\n/* open\n\n", "t.goal:2: this '/*' comment never ends"),
        (
            "num_ranks 2\nrank 0 {\nl1: calc 5\nl2: calc 5\nl2 requires l9\n\n}\n",
            "t.goal:5: rank 0: a dependency names label 'l9', which this rank never defines",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: calc 5\nl1: calc 6\n}\n",
            "t.goal:4: rank 0: label 'l1' is defined twice",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: send 1b to 1 cpu 0 tag 3\n}\n",
            "t.goal:3: rank 0: expected 'nic' or end of line, got 'tag'",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: calc 1 tag 3\n}\n",
            "t.goal:3: rank 0: expected 'cpu', 'nic' or end of line, got 'tag'",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: send 1b to 1 tag -1\n}\n",
            "t.goal:3: rank 0: a send's tag cannot be -1 (any tag)",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: send 1b to -1\n}\n",
            "t.goal:3: rank 0: expected a rank after 'to', got '-1'",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: recv 1b from 1 cpu 256\n}\n",
            "t.goal:3: rank 0: '256' is too large for a CPU number (0 to 255) after 'cpu'",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1 needs l2\n}\n",
            "t.goal:3: rank 0: expected ':', 'requires' or 'irequires' after a label, got 'needs'",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: wait 3\n}\n",
            "t.goal:3: rank 0: expected 'send', 'recv' or 'calc' after the label, got 'wait'",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1 requires l2 l3\n}\n",
            "t.goal:3: rank 0: expected end of line after the dependency, got 'l3'",
        ),
        (
            "num_ranks 2\nrank 0 {\n\u{e9}\n}\n",
            "t.goal:3: rank 0: expected an operation, a dependency or '}', got '\\xc3'",
        ),
        ("num_ranks 2\nsend 1b to 1\n", "t.goal:2: expected 'num_ranks' or 'rank', got 'send'"),
    ];
    for (text, expected) in cases {
        assert_eq!(error(text), expected, "{text:?}");
    }
    let mut long = b"num_ranks 2 //".to_vec();
    long.resize(2 << 20, b'x');
    let e = read_goal(&long[..], "t.goal").unwrap_err().to_string();
    assert_eq!(e, "t.goal:1: line longer than 1048576 bytes");
}

#[test]
fn line_numbers_count_comments_and_crlf() {
    let text = "num_ranks 2\r\n/* one\r\n two */\r\nrank 0 { // open\r\n\r\nl1: send 1b from 1\r\n}\r\n";
    assert_eq!(error(text), "t.goal:6: rank 0: expected 'to' after the size, got 'from'");
}

/// A schedule with every kind of op, wildcards, cpu and nic, communicators, both kinds of
/// dependency, a repeated dependency and empty ranks.
fn rich() -> Schedule {
    let mut b = ScheduleBuilder::new();
    b.add_rank();
    let s = b.send(1, 8, 3, 0);
    let c = b.calc(1_000_000_000_000);
    let r = b.recv(Source::Any, 16, TagMatch::Any, 2);
    let t = b.send(2, 0, u32::MAX - 1, 7);
    b.place(c, 1, 2);
    b.place(r, 255, 0);
    b.requires(c, s);
    b.irequires(r, s);
    b.requires(t, c);
    b.requires(t, c);
    b.irequires(t, r);
    b.add_rank();
    b.add_rank();
    b.recv(Source::Rank(0), 0, TagMatch::Tag(u32::MAX), 0);
    let x = b.calc(0);
    b.place(x, 0, 9);
    b.add_rank();
    b.build()
}

#[test]
fn the_writer_writes_what_the_reader_reads_back() {
    let s = rich();
    let text = write(&s);
    let expected = "num_ranks 4

rank 0 {
l0: send 8b to 1 tag 3
l1: calc 1000000000000 cpu 1 nic 2
l2: recv 16b from -1 tag -1 comm 2 cpu 255
l3: send 0b to 2 tag 4294967294 comm 7
l1 requires l0
l2 irequires l0
l3 requires l1
l3 requires l1
l3 irequires l2
}

rank 1 {
}

rank 2 {
l0: recv 0b from 0 tag 4294967295
l1: calc 0 nic 9
}

rank 3 {
}
";
    assert_eq!(text, expected);
    let back = read(&text).unwrap();
    assert_eq!(back, s);
    assert_eq!(back.unmet(0, 3), 3);
    let fixture =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/binary_tree_32.goal")).unwrap();
    let tree = read_goal(&fixture[..], "binary_tree_32.goal").unwrap();
    assert_eq!(read(&write(&tree)).unwrap(), tree);
}

fn arb_op() -> impl Strategy<Value = (Op, u8, u8)> {
    let source = prop_oneof![Just(Source::Any), (0u32..6).prop_map(Source::Rank)];
    let tag = prop_oneof![Just(TagMatch::Any), any::<u32>().prop_map(TagMatch::Tag)];
    let op = prop_oneof![
        (0u32..6, any::<u64>(), any::<u32>(), 0u32..3).prop_map(|(to, bytes, tag, comm)| Op::Send {
            to,
            bytes,
            tag,
            comm
        }),
        (source, any::<u64>(), tag, 0u32..3).prop_map(|(from, bytes, tag, comm)| Op::Recv {
            from,
            bytes,
            tag,
            comm
        }),
        any::<u64>().prop_map(|time| Op::Calc { time }),
    ];
    (op, any::<u8>(), any::<u8>())
}

/// Ranks of ops and dependencies `(b, a, start)` given as indices taken modulo the ops.
fn arb_schedule() -> impl Strategy<Value = Schedule> {
    let rank = (
        prop::collection::vec(arb_op(), 0..8),
        prop::collection::vec((any::<u32>(), any::<u32>(), any::<bool>()), 0..10),
    );
    prop::collection::vec(rank, 1..5).prop_map(|ranks| {
        let mut b = ScheduleBuilder::new();
        for (ops, deps) in ranks {
            b.add_rank();
            for (op, cpu, nic) in &ops {
                let id = b.op(*op);
                b.place(id, *cpu, *nic);
            }
            for &(x, y, start) in deps.iter().filter(|_| !ops.is_empty()) {
                let (x, y) = (x % ops.len() as u32, y % ops.len() as u32);
                if start {
                    b.irequires(x, y)
                } else {
                    b.requires(x, y)
                }
            }
        }
        b.build()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_schedule_round_trips(s in arb_schedule()) {
        let back = read(&write(&s)).unwrap();
        prop_assert_eq!(back, s);
    }

    /// Mutated GOAL text (bytes replaced, inserted, deleted, or tokens inserted) never
    /// makes the reader panic; an error names t.goal and a line of the text.
    #[test]
    fn mutated_text_never_panics(
        base in prop_oneof![Just(RICH.to_string()), Just(write(&rich()))],
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u8>(), prop::sample::select(vec![
            "-1", "}", "{", ":", "rank", "num_ranks", "requires", "irequires", "send", "recv", "calc",
            "b", "to", "from", "tag", "cpu", "nic", "comm", "/*", "*/", "//", "\n", " ", "99999999999999999999", "4294967296", "l0",
        ])), 1..6),
    ) {
        let mut text = base.into_bytes();
        for (at, kind, byte, token) in edits {
            let i = at.index(text.len() + 1);
            match kind {
                0 if i < text.len() => text[i] = byte,
                1 => text.insert(i, byte),
                2 if i < text.len() => { text.remove(i); }
                _ => { text.splice(i..i, token.bytes()); }
            }
        }
        let lines = text.split(|&c| c == b'\n').count() as u64;
        match read_goal(&text[..], "t.goal") {
            Ok(s) => { s.validate(); s.unmatched(); }
            Err(GoalError::Syntax { file, line, .. }) => {
                prop_assert_eq!(file, "t.goal");
                prop_assert!((1..=lines).contains(&line), "line {} of {}", line, lines);
            }
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}

#[test]
fn messages_name_ops_by_the_files_labels() {
    use xnet_schedule::{run_ideal, Graph};
    // Rank 0 waits on a cycle of labelled ops; rank 1's receive (unlabelled, op 0) is never
    // sent to: every message names them as the file does.
    let text = "num_ranks 3\nrank 0 {\nsend_a: send 8b to 1 tag 1\nl0: calc 5\nsend_a requires l0\nl0 requires send_a\n}\n\
                rank 1 {\nrecv 8b from 0 tag 9\n}\nrank 2 {\nhalo: send 8b to 7 tag 1\n}\n";
    let s = read_goal(text.as_bytes(), "t.goal").unwrap();
    // Rank 0's op 1 is labelled l0: a name, kept as one.
    assert_eq!((s.label(0, 0), s.label(0, 1), s.label(1, 0)), (Some("send_a"), Some("l0"), None));
    assert_eq!(
        (s.op_name(0, 0), s.op_name(0, 1), s.op_name(1, 0)),
        ("send_a".into(), "l0".into(), "l0".into())
    );
    let problems: Vec<String> = s.validate().iter().map(|p| p.describe(&s)).collect();
    assert!(
        problems
            .iter()
            .any(|p| p == "rank 0: dependency cycle send_a -> l0 -> send_a (each waits for the one before)"
                || p == "rank 0: dependency cycle l0 -> send_a -> l0 (each waits for the one before)"),
        "{problems:?}"
    );
    assert!(
        problems.contains(&"rank 2: halo names rank 7, but the schedule has 3 ranks".into()),
        "{problems:?}"
    );
    // A label that is `l` and the op's own number is not stored; a relabelled one is.
    let plain = read_goal(
        "num_ranks 2\nrank 0 {\nl0: send 8b to 1 tag 1\n}\nrank 1 {\nl0: recv 8b from 0 tag 1\n}\n"
            .as_bytes(),
        "p.goal",
    )
    .unwrap();
    assert_eq!(plain.label(0, 0), None);
    let stuck = read_goal(
        "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 1\n}\nrank 1 {\nl1: recv 8b from 0 tag 2\n}\n"
            .as_bytes(),
        "s.goal",
    )
    .unwrap();
    let e = run_ideal(&stuck).unwrap_err().to_string();
    assert!(e.contains("rank 1: l1 waits for a message from rank 0, tag 2"), "{e}");
}

/// An op with its cpu and nic, and its dependents on its end and on its start (sorted).
type OpShape = (Op, u8, u8, Vec<u32>, Vec<u32>);

/// Every rank's ops: what a schedule is without its labels.
fn shape(s: &Schedule) -> Vec<Vec<OpShape>> {
    (0..s.num_ranks())
        .map(|r| {
            (0..s.ops_in_rank(r))
                .map(|o| {
                    let mut end = s.after_end(r, o).to_vec();
                    let mut start = s.after_start(r, o).to_vec();
                    end.sort_unstable();
                    start.sort_unstable();
                    (s.op(r, o), s.cpu(r, o), s.nic(r, o), end, start)
                })
                .collect()
        })
        .collect()
}

#[test]
fn binary_goal_is_what_loggopsim_s_txt2bin_wrote() {
    // The .bin files are txt2bin's output (LogGOPSim 76451de) of the .goal files beside
    // them (tests/data/README.md): wildcards, irequires and 16 to 32 ranks.
    for (text, binary) in [
        ("tests/data/binary_tree_32.goal", "tests/data/binary_tree_32.bin"),
        ("tests/data/bcast_binomial_16.goal", "tests/data/bcast_binomial_16.bin"),
        ("tests/data/allreduce_recdoub_16.goal", "tests/data/allreduce_recdoub_16.bin"),
        ("../tests/data/wildcard_ring.goal", "../tests/data/wildcard_ring.bin"),
    ] {
        let from_text = read_goal(std::fs::read(text).unwrap().as_slice(), text).unwrap();
        let bytes = std::fs::read(binary).unwrap();
        assert!(is_binary_goal(&bytes) && !is_binary_goal(&std::fs::read(text).unwrap()));
        let from_binary = read_goal_binary(&bytes, binary).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(shape(&from_binary), shape(&from_text), "{binary}");
    }
}

#[test]
fn damaged_binary_goal_is_refused_naming_rank_and_byte() {
    let good = std::fs::read("tests/data/bcast_binomial_16.bin").unwrap();
    let e = |bytes: &[u8]| read_goal_binary(bytes, "b.bin").unwrap_err().to_string();
    assert!(
        e(b"GOAL 1.0").starts_with("b.bin: byte 0: not a binary GOAL file: it starts with "),
        "{}",
        e(b"GOAL 1.0")
    );
    assert!(
        e(&good[..100]).starts_with("b.bin: byte 8: 16 ranks' jump table does not fit"),
        "{}",
        e(&good[..100])
    );
    // Rank 0's first op (an empty rank 0 has none: the root sends) turned into type 9.
    let start = 8 + u64::from_le_bytes(good[14..22].try_into().unwrap()) as usize;
    let roots = u32::from_le_bytes(good[start + 4..start + 8].try_into().unwrap()) as usize;
    let mut bad = good.clone();
    bad[start + 8 + 4 * roots + 4] = 9;
    assert!(
        e(&bad).starts_with(&format!("b.bin: rank 0: byte {}: op 0 has type 9", start + 8 + 4 * roots + 4)),
        "{}",
        e(&bad)
    );
    // Cut anywhere, it is refused, never read past its end.
    for cut in 0..good.len() {
        assert!(read_goal_binary(&good[..cut], "b.bin").is_err(), "cut at {cut}");
    }
}

proptest! {
    #[test]
    fn mutated_binary_goal_never_panics(flips in proptest::collection::vec((0usize..1688, any::<u8>()), 1..8)) {
        let mut bytes = std::fs::read("tests/data/bcast_binomial_16.bin").unwrap();
        for (at, value) in flips {
            let at = at % bytes.len();
            bytes[at] = value;
        }
        let _ = read_goal_binary(&bytes, "b.bin");
    }
}
