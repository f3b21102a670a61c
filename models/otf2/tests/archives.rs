//! The OTF2 reader on archives written by the OTF2 library: one by Score-P recording an MPI
//! program (SST's test archive) and one written with the library's Python bindings
//! (tests/data/make_mixed.py) holding every kind of record the reader replays, whose
//! ranks, messages and computation times are known; and errors naming the archive, the
//! rank and the event.

use std::path::{Path, PathBuf};

use schedule::{run_ideal, Op, Schedule, Source, TagMatch};
use xnet_otf2::{schedule_of_archive, schedule_of_archive_until};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn read(name: &str) -> Schedule {
    let anchor = data(name).join("traces.otf2");
    schedule_of_archive(anchor.to_str().unwrap(), 1.0).unwrap_or_else(|e| panic!("{e}"))
}

/// The sends of `rank` outside collectives: (to, bytes, tag, comm).
fn sends(s: &Schedule, rank: u32) -> Vec<(u32, u64, u32, u32)> {
    s.ops(rank)
        .filter_map(|op| match op {
            Op::Send { to, bytes, tag, comm } if comm & 1 << 31 == 0 => Some((to, bytes, tag, comm)),
            _ => None,
        })
        .collect()
}

/// The receives of `rank` outside collectives: (from, bytes, tag, comm).
fn recvs(s: &Schedule, rank: u32) -> Vec<(Source, u64, TagMatch, u32)> {
    s.ops(rank)
        .filter_map(|op| match op {
            Op::Recv { from, bytes, tag, comm } if comm & 1 << 31 == 0 => Some((from, bytes, tag, comm)),
            _ => None,
        })
        .collect()
}

fn computing(s: &Schedule, rank: u32) -> u64 {
    s.ops(rank).map(|op| if let Op::Calc { time } = op { time } else { 0 }).sum()
}

#[test]
fn a_written_archive_gives_its_messages_communicators_and_computations() {
    let s = read("mixed");
    assert_eq!(s.num_ranks(), 4);
    // Communicators: 0 is the world, 1..=4 each rank's self, then the archive's own
    // in definition order (world 5, odd 6; the self one maps to each rank's).
    let (world, odd) = (5, 6);
    assert_eq!(sends(&s, 0), [(1, 1024, 7, world)]);
    assert_eq!(recvs(&s, 1), [(Source::Rank(0), 1024, TagMatch::Tag(7), world)]);
    assert_eq!(sends(&s, 1), [(3, 100, 1, odd)], "the odd communicator's rank 1 is world rank 3");
    // The non-blocking receive was posted at MPI_Irecv with the source, tag and size
    // recorded at its completion.
    assert_eq!(recvs(&s, 2)[0], (Source::Rank(3), 4096, TagMatch::Tag(9), world));
    assert_eq!(sends(&s, 3), [(2, 4096, 9, world)]);
    assert_eq!(recvs(&s, 3), [(Source::Rank(1), 100, TagMatch::Tag(1), odd)]);
    // MPI_COMM_SELF is rank 2's own communicator (1 + 2).
    assert_eq!(sends(&s, 2), [(2, 16, 3, 3)]);
    assert_eq!(recvs(&s, 2)[1], (Source::Rank(2), 16, TagMatch::Tag(3), 3));
    // The time between MPI calls, as make_mixed.py writes it.
    let computed: Vec<u64> = (0..4).map(|r| computing(&s, r)).collect();
    assert_eq!(computed, [1520, 670, 1115, 1020]);
    // Twice as fast a processor.
    let anchor = data("mixed").join("traces.otf2");
    let half = schedule_of_archive(anchor.to_str().unwrap(), 0.5).unwrap();
    assert_eq!((0..4).map(|r| computing(&half, r)).collect::<Vec<_>>(), [760, 335, 558, 510]);
    // Every message is received, and on an ideal network the program completes.
    assert!(s.unmatched().is_empty(), "{:?}", s.unmatched());
    let ideal = run_ideal(&s).unwrap();
    assert_eq!(ideal.unreceived, 0);
    assert_eq!(ideal.computing, computed);
}

#[test]
fn the_collectives_have_score_ps_per_rank_sizes() {
    let s = read("mixed");
    // The allreduce of 8 B (Score-P: 32 B each way on 4 ranks) by MPICH's choice for 4
    // ranks and 8 B, recursive doubling: 2 rounds of 8 B per rank on the world
    // (communicator 5 with bit 31).
    let world_collective = 5 | 1 << 31;
    for r in 0..4 {
        let allreduce: Vec<u64> = s
            .ops(r)
            .filter_map(|op| match op {
                Op::Send { bytes, comm, tag: 0, .. } if comm == world_collective => Some(bytes),
                _ => None,
            })
            .collect();
        assert_eq!(allreduce, [8, 8], "rank {r}");
    }
    // The broadcast of 64 B on "odd" from its rank 1 (world 3) to world rank 1.
    let odd_collective = 6 | 1 << 31;
    let bcast: Vec<(u32, u64)> = s
        .ops(3)
        .filter_map(|op| match op {
            Op::Send { to, bytes, comm, .. } if comm == odd_collective => Some((to, bytes)),
            _ => None,
        })
        .collect();
    assert_eq!(bcast, [(1, 64)]);
}

#[test]
fn score_ps_archive_of_an_mpi_broadcast_replays() {
    // Score-P 8.4 recording 4 ranks: MPI_Init, MPI_Comm_rank, MPI_Bcast of 4096 B from
    // rank 0, MPI_Finalize.
    let s = read("sst_bcast");
    assert_eq!(s.num_ranks(), 4);
    let received: u64 = (0..4)
        .flat_map(|r| s.ops(r).collect::<Vec<_>>())
        .map(|op| if let Op::Recv { bytes, .. } = op { bytes } else { 0 })
        .sum();
    // A binomial tree (MPICH's choice for 4 KiB on 4 ranks): each of 3 ranks gets 4096 B.
    assert_eq!(received, 3 * 4096);
    assert!(s.unmatched().is_empty());
    let ideal = run_ideal(&s).unwrap();
    assert_eq!(ideal.rounds, 2);
}

/// A copy of archive `name` in a temporary folder.
fn copy(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = data(name);
    for entry in walk(&from) {
        let to = dir.path().join(entry.strip_prefix(&from).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &to).unwrap();
    }
    dir
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}

#[test]
fn bad_archives_are_refused_naming_the_archive_and_the_rank() {
    // Not an archive.
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("traces.otf2");
    std::fs::write(&bogus, "not OTF2").unwrap();
    let e = schedule_of_archive(bogus.to_str().unwrap(), 1.0).unwrap_err();
    assert_eq!(e.file, bogus.to_str().unwrap());
    assert_eq!((e.rank, e.event), (None, None));
    assert!(e.to_string().contains("not an OTF2 archive"), "{e}");
    let missing = dir.path().join("none/traces.otf2");
    let e = schedule_of_archive(missing.to_str().unwrap(), 1.0).unwrap_err();
    assert!(e.to_string().starts_with(missing.to_str().unwrap()), "{e}");
    // A rank's event file cut short.
    let cut = copy("mixed");
    let evt = cut.path().join("traces/2.evt");
    let bytes = std::fs::read(&evt).unwrap();
    std::fs::write(&evt, &bytes[..bytes.len() / 2]).unwrap();
    let anchor = cut.path().join("traces.otf2");
    let e = schedule_of_archive(anchor.to_str().unwrap(), 1.0).unwrap_err();
    assert_eq!(e.rank, Some(2), "{e}");
    assert!(e.message.contains("holds 13 readable events, the definitions say 29"), "{e}");
    assert!(e.message.contains("traces/2.evt"), "{e}");
    // A rank's event file missing.
    std::fs::remove_file(&evt).unwrap();
    let e = schedule_of_archive(anchor.to_str().unwrap(), 1.0).unwrap_err();
    assert_eq!(e.rank, Some(2), "{e}");
    assert!(e.message.contains("traces/2.evt"), "{e}");
}

/// The messages of a schedule outside collectives, as (sender, receiver, tag, bytes),
/// sorted.
fn messages(s: &Schedule) -> Vec<(u32, u32, u32, u64)> {
    let mut m: Vec<(u32, u32, u32, u64)> = (0..s.num_ranks())
        .flat_map(|r| sends(s, r).into_iter().map(move |(to, bytes, tag, _)| (r, to, tag, bytes)))
        .collect();
    m.sort_unstable();
    m
}

#[test]
fn lulesh_traced_to_otf2_and_to_dumpi_sends_the_same_messages() {
    // LULESH 2.0 on 8 ranks (8 steps of 5^3 elements per rank), once traced by xnet's
    // PMPI tracer (scripts/traces/otf2-pmpi.c) into OTF2 and once by sst-dumpi's library:
    // two runs of a deterministic program, two formats, two readers, one set of messages.
    let otf2 = read("lulesh8");
    assert_eq!(otf2.num_ranks(), 8);
    assert!(otf2.unmatched().is_empty());
    let ideal = run_ideal(&otf2).unwrap();
    assert_eq!(ideal.unreceived, 0);
    let dumpi_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schedule/tests/data/dumpi");
    let meta_text = std::fs::read_to_string(dumpi_dir.join("lulesh8.meta")).unwrap();
    let meta = schedule::dumpi::parse_meta(&meta_text, "lulesh8.meta").unwrap();
    let ranks: Vec<_> = (0..meta.ranks)
        .map(|r| {
            let name = meta.rank_file(r);
            schedule::dumpi::parse_rank(&std::fs::read(dumpi_dir.join(&name)).unwrap(), &name, r).unwrap()
        })
        .collect();
    let dumpi = schedule::schedule_of_trace(&ranks, 1.0).unwrap();
    let (a, b) = (messages(&otf2), messages(&dumpi));
    assert_eq!(a.len(), 920);
    assert_eq!(a.iter().map(|m| m.3).sum::<u64>(), 513_472);
    assert_eq!(a, b);
    // And the collectives: 7 allreduces of one double, a reduce, a barrier per rank, the
    // same messages by MPICH's algorithms.
    let collective = |s: &Schedule| -> Vec<u64> {
        let mut v: Vec<u64> = (0..8)
            .flat_map(|r| s.ops(r).collect::<Vec<_>>())
            .filter_map(|op| match op {
                Op::Send { bytes, comm, .. } if comm & 1 << 31 != 0 => Some(bytes),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(collective(&otf2), collective(&dumpi));
}

#[test]
fn a_stop_request_ends_the_read() {
    let anchor = data("lulesh8").join("traces.otf2");
    let asked = std::cell::Cell::new(0);
    let stop = || {
        asked.set(asked.get() + 1);
        true
    };
    let e = schedule_of_archive_until(anchor.to_str().unwrap(), 1.0, &stop).unwrap_err();
    assert_eq!(e.rank, Some(0), "{e}");
    assert!(e.message.starts_with("interrupted while reading the events"), "{e}");
    // Asked after 4,096 events of rank 0's 1,400, so only at the end of its events.
    assert_eq!(asked.get(), 1);
}
