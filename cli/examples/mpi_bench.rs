//! Measures what the scaling model (docs/scaling.md) needs of an MPI installation: the
//! one-way time of a message of each size between two ranks (latency and bandwidth) and
//! the time of the window reduction (an all-reduce of two 64-bit minima).
//!
//!     cargo build --release --example mpi_bench
//!     mpiexec -n 2 target/release/examples/mpi_bench          # on one node
//!     srun --mpi=pmi2 -n 2 -N 2 target/release/examples/mpi_bench   # across two nodes
//!
//! Rank 0 prints one line per measurement: `pingpong <bytes> <one-way seconds>` and
//! `allreduce <ranks> <seconds>`.

use mpi::collective::SystemOperation;
use mpi::traits::*;
use std::time::Instant;

fn main() {
    let universe = mpi::initialize().expect("MPI initialises");
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    if size < 2 {
        eprintln!("mpi_bench needs at least 2 ranks (mpiexec -n 2 ...)");
        std::process::exit(2);
    }
    for bytes in [8usize, 64, 1 << 10, 8 << 10, 64 << 10, 512 << 10, 4 << 20] {
        let reps = if bytes < (64 << 10) { 20_000 } else { 200 };
        let mut buf = vec![0u8; bytes];
        // Best of three rounds (after a warm-up round): the machine's quietest figure.
        let mut one_way = f64::INFINITY;
        for round in 0..4 {
            world.barrier();
            let t0 = Instant::now();
            for _ in 0..reps {
                if rank == 0 {
                    world.process_at_rank(1).send(&buf[..]);
                    world.process_at_rank(1).receive_into(&mut buf[..]);
                } else if rank == 1 {
                    world.process_at_rank(0).receive_into(&mut buf[..]);
                    world.process_at_rank(0).send(&buf[..]);
                }
            }
            if round > 0 {
                one_way = one_way.min(t0.elapsed().as_secs_f64() / reps as f64 / 2.0);
            }
        }
        if rank == 0 {
            println!("pingpong {bytes} {one_way:.9}");
        }
    }
    let reps = 50_000;
    let mut out = [0u64; 2];
    let mut each = f64::INFINITY;
    for round in 0..4 {
        world.barrier();
        let t0 = Instant::now();
        for i in 0..reps {
            let local = [i as u64 ^ rank as u64, u64::MAX - 1];
            world.all_reduce_into(&local[..], &mut out[..], SystemOperation::min());
        }
        if round > 0 {
            each = each.min(t0.elapsed().as_secs_f64() / reps as f64);
        }
    }
    if rank == 0 {
        println!("allreduce {size} {each:.9}");
    }
}
