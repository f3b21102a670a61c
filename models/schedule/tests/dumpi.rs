//! The DUMPI reader on traces written by sst-dumpi itself (tests/data/dumpi/README.md):
//! every call, its arguments and times as sst-dumpi's own text dump shows them, whole
//! multi-rank traces read to their end, and errors naming the file, the rank and the byte;
//! traces turned into schedules that complete.

use std::path::Path;
use xnet_schedule::dumpi::{parse_meta, parse_rank, CallKind, RankTrace, SendMode};
use xnet_schedule::{run_ideal, schedule_of_trace, Op, Schedule};

fn data(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/dumpi").join(name)).unwrap()
}

/// Every rank of the trace whose `.meta` is `meta`.
fn trace(meta: &str) -> Vec<RankTrace> {
    let m = parse_meta(std::str::from_utf8(&data(meta)).unwrap(), meta).unwrap();
    (0..m.ranks)
        .map(|r| {
            let name = m.rank_file(r);
            parse_rank(&data(&name), &name, r).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

#[test]
fn sst_dumpis_test_trace_reads_as_its_text_dump_shows() {
    let ranks = trace("testtrace.meta");
    assert_eq!(ranks.len(), 4);
    let rank0 = &ranks[0];
    assert_eq!(rank0.version, [1, 0, 0]);
    // The calls and entry times of dumpi2ascii's dump of rank 0 (testtrace-0000.txt).
    let dump = String::from_utf8(data("testtrace-0000.txt")).unwrap();
    let entered: Vec<(String, u64)> = dump
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(" entering at walltime ")?;
            let (sec, nsec) = rest.split_once(',')?.0.split_once('.')?;
            Some((name.to_string(), sec.parse::<u64>().ok()? * 1_000_000_000 + nsec.parse::<u64>().ok()?))
        })
        .collect();
    assert_eq!(entered.len(), rank0.calls.len());
    for ((name, start), call) in entered.iter().zip(&rank0.calls) {
        assert_eq!(*start, call.start, "{name}");
    }
    let kinds: Vec<&CallKind> = rank0.calls.iter().map(|c| &c.kind).collect();
    assert_eq!(
        kinds,
        [
            &CallKind::Init,
            &CallKind::Other { function: 82 },
            &CallKind::Other { function: 81 },
            &CallKind::Barrier { comm: 2 },
            &CallKind::Isend {
                mode: SendMode::Standard,
                count: 1,
                datatype: 9,
                dest: 1,
                tag: 1337,
                comm: 2,
                request: 2
            },
            &CallKind::Recv { count: 1, datatype: 9, source: 3, tag: 1337, comm: 2 },
            &CallKind::Wait { request: 2 },
            &CallKind::Allreduce { count: 1, datatype: 9, comm: 2 },
            &CallKind::Finalize,
        ]
    );
    // MPI_INT is 4 bytes in the trace's datatype table.
    assert_eq!(rank0.bytes(1, 9), 4);
    assert!(rank0.calls.iter().all(|c| c.end >= c.start));
}

#[test]
fn a_seven_rank_bluegene_trace_reads_to_its_end() {
    let ranks = trace("testbgp.meta");
    assert_eq!(ranks.len(), 7);
    for (r, t) in ranks.iter().enumerate() {
        assert_eq!(t.version, [1, 1, 0], "rank {r}");
        assert_eq!(t.calls.first().map(|c| &c.kind), Some(&CallKind::Init), "rank {r}");
        assert_eq!(t.calls.last().map(|c| &c.kind), Some(&CallKind::Finalize), "rank {r}");
        // Calls in time order.
        assert!(t.calls.windows(2).all(|w| w[0].end <= w[1].start), "rank {r}");
        // Its point-to-point messages and collectives, and the communicator it creates.
        let count = |f: &dyn Fn(&CallKind) -> bool| t.calls.iter().filter(|c| f(&c.kind)).count();
        assert!(count(&|k| matches!(k, CallKind::Isend { .. })) > 0, "rank {r}");
        assert_eq!(
            count(&|k| matches!(k, CallKind::Isend { .. })),
            count(&|k| matches!(k, CallKind::Irecv { .. })),
            "rank {r}"
        );
        assert!(count(&|k| matches!(k, CallKind::Alltoall { .. })) > 0, "rank {r}");
        assert!(count(&|k| matches!(k, CallKind::CommCreate { .. })) > 0, "rank {r}");
    }
    // On BlueGene/P an MPI_LONG (datatype 11) is 4 bytes.
    assert_eq!(ranks[0].datatype_sizes[11], 4);
}

#[test]
fn bad_traces_are_refused_naming_the_file_rank_and_byte() {
    let good = data("testtrace-0001.bin");
    let err = |bytes: &[u8]| parse_rank(bytes, "t-0001.bin", 1).unwrap_err().to_string();
    assert!(err(b"not a trace at all").contains("t-0001.bin: rank 1: byte 0: not a DUMPI trace"));
    // The first record's function id (byte 16) changed to one the reader does not know.
    let mut unknown = good.clone();
    unknown[16..18].copy_from_slice(&200u16.to_be_bytes());
    let e = err(&unknown);
    assert!(e.contains("rank 1: byte 16: unsupported call DUMPI function 200"), "{e}");
    // A file cut short has lost the index at its end.
    let mut truncated = good.clone();
    truncated.truncate(good.len() - 30);
    let e = err(&truncated);
    assert!(e.contains("t-0001.bin: rank 1: byte"), "{e}");
    // The .meta file's errors name its line (they named a byte, as in a rank's file).
    let e = parse_meta("hostname=a\nnumprocs=0\nfileprefix=x\n", "x.meta").unwrap_err().to_string();
    assert_eq!(e, "x.meta: line 2: numprocs must be a number of ranks >= 1, got `0`");
    let e = parse_meta("hostname=a\nnumprocs=4\n", "y.meta").unwrap_err().to_string();
    assert!(e.contains("no fileprefix"), "{e}");
}

#[test]
fn mutated_traces_never_panic() {
    // 3,000 copies of a real rank file, each with a few bytes changed or cut short: every
    // one is read or refused, never a panic or a huge allocation.
    let good = data("testbgp-0003.bin");
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..3000 {
        let mut bytes = good.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % bytes.len() as u64) as usize;
            bytes[at] = next() as u8;
        }
        if next() % 4 == 0 {
            bytes.truncate((next() % bytes.len() as u64) as usize);
        }
        let _ = parse_rank(&bytes, "m.bin", 3);
    }
}

/// The trace of the `.meta` file `meta` as a schedule, computations scaled by `scale`.
fn schedule(meta: &str, scale: f64) -> Schedule {
    schedule_of_trace(&trace(meta), scale).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn traces_become_schedules_that_complete_with_every_message_received() {
    for meta in ["testtrace.meta", "testbgp.meta"] {
        let s = schedule(meta, 1.0);
        assert_eq!(s.validate(), Vec::new(), "{meta}");
        assert!(s.unmatched().is_empty(), "{meta}: {:?}", s.unmatched());
        let ideal = run_ideal(&s).unwrap_or_else(|e| panic!("{meta}: {e}"));
        assert_eq!(ideal.unreceived, 0, "{meta}");
        // On an ideal network the program takes at most the traced time: its computations.
        let ranks = trace(meta);
        let span = ranks.iter().map(|t| t.calls.last().unwrap().end - t.calls[0].start).max().unwrap();
        assert!(ideal.time > 0 && ideal.time <= span, "{meta}: {} against {span}", ideal.time);
        // A processor twice as fast halves every computation, and so the ideal time.
        let half = run_ideal(&schedule(meta, 0.5)).unwrap().time;
        let calcs = s.num_ops();
        assert!(half.abs_diff(ideal.time / 2) <= calcs, "{meta}: {half} against {}", ideal.time);
    }
    // sst-dumpi's test: a ring of one 4-byte message per rank (MPI_INT), received in order.
    let s = schedule("testtrace.meta", 1.0);
    let sends: Vec<Op> = (0..4)
        .flat_map(|r| s.ops(r).collect::<Vec<_>>())
        .filter(|o| matches!(o, Op::Send { comm: 0, .. }))
        .collect();
    assert_eq!(sends.len(), 4);
    assert!(sends.iter().all(|o| matches!(o, Op::Send { bytes: 4, tag: 1337, .. })));
}

#[test]
fn a_call_on_a_communicator_never_created_is_refused_naming_rank_and_byte() {
    let mut ranks = trace("testtrace.meta");
    let call = &mut ranks[2].calls[3];
    assert_eq!(call.kind, CallKind::Barrier { comm: 2 });
    call.kind = CallKind::Barrier { comm: 9 };
    let e = schedule_of_trace(&ranks, 1.0).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("rank 2: byte {}: communicator 9 was never created", ranks[2].calls[3].offset)
    );
}

/// LULESH 2.0 (LLNL's shock hydrodynamics proxy application) on 8 ranks, traced with
/// sst-dumpi's library (tests/data/dumpi/README.md): per step three halo exchanges of
/// non-blocking messages with up to 26 neighbours, an allreduce for the time step.
#[test]
fn a_traced_application_lulesh_becomes_a_schedule_that_completes() {
    let ranks = trace("lulesh8.meta");
    assert_eq!(ranks.len(), 8);
    assert!(ranks.iter().all(|r| r.version == [13, 0, 0]));
    // The calls per rank, as dumpi2ascii counts them.
    let calls: Vec<usize> = ranks.iter().map(|r| r.calls.len()).collect();
    assert_eq!(calls, [489, 481, 473, 465, 457, 449, 441, 433]);
    let count = |f: &dyn Fn(&CallKind) -> bool| -> usize {
        ranks.iter().flat_map(|r| &r.calls).filter(|c| f(&c.kind)).count()
    };
    assert_eq!(count(&|k| matches!(k, CallKind::Isend { .. })), 920);
    assert_eq!(count(&|k| matches!(k, CallKind::Irecv { .. })), 920);
    assert_eq!(count(&|k| matches!(k, CallKind::Allreduce { .. })), 8 * 7);
    let s = schedule_of_trace(&ranks, 1.0).unwrap();
    assert!(s.unmatched().is_empty(), "{:?}", s.unmatched());
    // Every traced message (920 and the collectives') is received.
    let ideal = run_ideal(&s).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(ideal.unreceived, 0);
    let payload: u64 = (0..8)
        .flat_map(|r| s.ops(r).collect::<Vec<_>>())
        .map(|op| match op {
            Op::Send { bytes, comm, .. } if comm & 1 << 31 == 0 => bytes,
            _ => 0,
        })
        .sum();
    assert_eq!(payload, 513_472);
}
