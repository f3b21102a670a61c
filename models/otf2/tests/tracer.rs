//! xnet's PMPI tracer (scripts/traces/otf2-pmpi.c) records a real MPI program into an OTF2
//! archive that the reader replays: built with MPICH's mpicc, run with mpiexec on 4 ranks
//! (tests/data/tracer_program.c: blocking and non-blocking messages, a wildcard receive,
//! `MPI_PROC_NULL`, waits and tests of every kind, collectives).

use std::path::Path;
use std::process::Command;

use schedule::{run_ideal, Op};
use xnet_otf2::schedule_of_archive;

fn run(cmd: &mut Command) {
    let out =
        cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e} (MPICH is installed by scripts/bootstrap.sh)"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_pmpi_tracer_records_a_program_that_replays() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("libotf2pmpi.so");
    let otf2 = String::from_utf8(
        Command::new("pkg-config").args(["--cflags", "--libs", "otf2"]).output().unwrap().stdout,
    )
    .unwrap();
    run(Command::new("mpicc")
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-o"])
        .arg(&lib)
        .arg(here.join("../../scripts/traces/otf2-pmpi.c"))
        .args(otf2.split_whitespace()));
    let program = dir.path().join("program");
    run(Command::new("mpicc")
        .arg("-o")
        .arg(&program)
        .arg(here.join("tests/data/tracer_program.c"))
        .arg("-Wl,--no-as-needed")
        .arg(format!("-L{}", dir.path().display()))
        .arg(format!("-Wl,-rpath,{}", dir.path().display()))
        .arg("-lotf2pmpi"));
    let archive = dir.path().join("trace");
    run(Command::new("mpiexec").args(["-n", "4"]).arg(&program).env("OTF2_PMPI_ARCHIVE_DIR", &archive));
    let anchor = archive.join("traces.otf2");
    let s = schedule_of_archive(anchor.to_str().unwrap(), 1.0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.num_ranks(), 4);
    // Per rank, to its right neighbour: the ring's 10 doubles (tag 7), 4 single doubles
    // (tags 100-103), 3 (tag 200), 5 (tag 300), 6 (tag 400); nothing to MPI_PROC_NULL.
    for r in 0..4 {
        let mut sends: Vec<(u32, u64, u32)> = s
            .ops(r)
            .filter_map(|op| match op {
                Op::Send { to, bytes, tag, comm } if comm & 1 << 31 == 0 => Some((to, bytes, tag)),
                _ => None,
            })
            .collect();
        sends.sort_unstable_by_key(|m| m.2);
        let right = (r + 1) % 4;
        let want: Vec<(u32, u64, u32)> =
            [(80, 7), (8, 100), (8, 101), (8, 102), (8, 103), (24, 200), (40, 300), (48, 400)]
                .iter()
                .map(|&(bytes, tag)| (right, bytes, tag))
                .collect();
        assert_eq!(sends, want, "rank {r}");
    }
    assert!(s.unmatched().is_empty(), "{:?}", s.unmatched());
    let ideal = run_ideal(&s).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(ideal.unreceived, 0);
}
