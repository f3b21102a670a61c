//! PAT's steps against NCCL's own code: `data/nccl-pat/` holds the steps NCCL's
//! `PatAGAlgorithm` and `PatRSAlgorithm` (NCCL 5067397c, `src/include/collectives.h`)
//! produce when run on the host as NCCL's proxy runs them (step size and chunk 512 KiB,
//! FIFOs of 8 slots, 16 step groups), every field of every step of every rank: in full for
//! 2 to 5 ranks (`steps.txt`), as a count and an FNV-1a hash of the same lines for 2 to 33
//! ranks and parts of 4 KiB, 64 KiB and 1 MiB (`digests.txt`). `data/nccl-pat/README.md`
//! says how they were made.

use xnet_schedule::nccl::pat::{pat_all_gather_steps, pat_reduce_scatter_steps, PatShape, PatStep};

/// The line NCCL's dump writes for `step`.
fn line(kind: &str, n: i64, rank: i64, size: u64, step_size: i64, s: &PatStep) -> String {
    let flags = 1 | if s.skipped { 2 } else { 0 };
    format!(
        "{kind} {n} {rank} {size} {step_size}: {} {} {} {} {} {} {} {} {} {flags} {} {}",
        s.recv_dim,
        s.send_dim,
        s.recv_offset,
        s.send_offset,
        s.step_offset,
        u8::from(s.post_recv),
        u8::from(s.post_send),
        s.nelem,
        s.last,
        s.inp_ix,
        s.out_ix
    )
}

/// Every rank's steps, all-gather then reduce-scatter per rank, as the dump orders them.
fn lines(kind: &str, n: i64, size: u64, step_size: i64) -> Vec<String> {
    (0..n)
        .flat_map(|r| {
            let shape = PatShape {
                step_size,
                depth: 8,
                max_parallel: 16,
                size,
                chunk: step_size,
                rank: r,
                nranks: n,
            };
            let steps = match kind {
                "ag" => pat_all_gather_steps(&shape),
                _ => pat_reduce_scatter_steps(&shape),
            };
            steps.iter().map(|s| line(kind, n, r, size, step_size, s)).collect::<Vec<_>>()
        })
        .collect()
}

fn fnv(lines: &[String]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for l in lines {
        for b in l.bytes().chain([b'\n']) {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
    }
    h
}

#[test]
fn pat_takes_nccl_s_steps_exactly() {
    let full = include_str!("data/nccl-pat/steps.txt");
    let mut want: Vec<&str> = Vec::new();
    let mut checked = 0;
    for l in full.lines() {
        want.push(l);
    }
    // Group the reference by (kind, ranks, size, step size), in its order.
    let mut i = 0;
    while i < want.len() {
        let head: Vec<&str> = want[i].split(": ").next().unwrap().split(' ').collect();
        let (kind, n, size, step) =
            (head[0], head[1].parse().unwrap(), head[3].parse().unwrap(), head[4].parse().unwrap());
        let got = lines(kind, n, size, step);
        for (k, g) in got.iter().enumerate() {
            assert_eq!(g, want[i + k], "{kind} on {n} ranks, {size} bytes: step line {k}");
        }
        i += got.len();
        checked += 1;
    }
    assert_eq!(checked, 16);
    for d in include_str!("data/nccl-pat/digests.txt").lines() {
        let f: Vec<&str> = d.split(' ').collect();
        let (kind, n, size, step) =
            (f[0], f[1].parse().unwrap(), f[2].parse().unwrap(), f[3].parse().unwrap());
        let got = lines(kind, n, size, step);
        assert_eq!(got.len(), f[4].parse::<usize>().unwrap(), "{d}");
        assert_eq!(format!("{:016x}", fnv(&got)), f[5], "{d}");
    }
}
