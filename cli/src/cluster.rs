//! The ranks of this run: MPI when the binary is built with it (the default), else one.
//!
//! Started without a launcher, MPI runs as a single rank (MPI singleton start), so the
//! same binary serves `xnet run` and `mpiexec -n 4 xnet run`.

use engine::{RankComm, SingleRank};

/// This process's place in the run and its communicator.
pub struct Cluster {
    /// Communicator used by the engine.
    pub comm: Box<dyn RankComm>,
    #[cfg(feature = "mpi")]
    _universe: Option<mpi::environment::Universe>,
}

impl Cluster {
    /// Joins the run (initialises MPI if built with it).
    pub fn join() -> Self {
        #[cfg(feature = "mpi")]
        {
            // Only the calling thread talks to MPI: "funneled" suffices.
            if let Some((universe, _level)) = mpi::initialize_with_threading(mpi::Threading::Funneled) {
                let world = universe.world();
                let comm = Box::new(mpi_comm::MpiComm::new(world));
                return Cluster { comm, _universe: Some(universe) };
            }
            Cluster { comm: Box::new(SingleRank), _universe: None }
        }
        #[cfg(not(feature = "mpi"))]
        {
            Cluster { comm: Box::new(SingleRank) }
        }
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.comm.size()
    }
}

#[cfg(feature = "mpi")]
mod mpi_comm {
    use engine::RankComm;
    use mpi::collective::SystemOperation;
    use mpi::datatype::PartitionMut;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;
    use mpi::Count;

    /// Tag of the per-window messages between neighbouring ranks.
    const WINDOW_TAG: i32 = 17;

    pub(crate) struct MpiComm {
        world: SimpleCommunicator,
        rank: usize,
        size: usize,
    }

    impl MpiComm {
        pub(crate) fn new(world: SimpleCommunicator) -> Self {
            let (rank, size) = (world.rank() as usize, world.size() as usize);
            Self { world, rank, size }
        }
    }

    fn displacements(counts: &[Count]) -> Vec<Count> {
        counts
            .iter()
            .scan(0, |acc, &c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect()
    }

    fn split(buf: Vec<u8>, counts: &[Count]) -> Vec<Vec<u8>> {
        let mut out = Vec::with_capacity(counts.len());
        let mut at = 0usize;
        for &c in counts {
            out.push(buf[at..at + c as usize].to_vec());
            at += c as usize;
        }
        out
    }

    impl RankComm for MpiComm {
        fn rank(&self) -> usize {
            self.rank
        }
        fn size(&self) -> usize {
            self.size
        }

        fn senders(&mut self, receivers: &[usize]) -> Vec<usize> {
            let mut flags = vec![0u8; self.size];
            for &r in receivers {
                flags[r] = 1;
            }
            let mut got = vec![0u8; self.size];
            self.world.all_to_all_into(&flags[..], &mut got[..]);
            (0..self.size).filter(|&r| got[r] == 1).collect()
        }

        fn exchange(&mut self, send: Vec<(usize, Vec<u8>)>, from: &[usize], min: &mut [u64]) -> Vec<Vec<u8>> {
            let world = &self.world;
            let mut received = Vec::with_capacity(from.len());
            mpi::request::scope(|scope| {
                // Point to point with the neighbours only; the reduction runs while the
                // messages travel.
                let requests: Vec<_> = send
                    .iter()
                    .map(|(rank, bytes)| {
                        world.process_at_rank(*rank as i32).immediate_send_with_tag(
                            scope,
                            &bytes[..],
                            WINDOW_TAG,
                        )
                    })
                    .collect();
                let local = min.to_vec();
                world.all_reduce_into(&local[..], min, SystemOperation::min());
                for &rank in from {
                    let (bytes, _) =
                        world.process_at_rank(rank as i32).receive_vec_with_tag::<u8>(WINDOW_TAG);
                    received.push(bytes);
                }
                for request in requests {
                    request.wait();
                }
            });
            received
        }

        fn min_all(&mut self, values: &mut [u64]) {
            let local = values.to_vec();
            self.world.all_reduce_into(&local[..], values, SystemOperation::min());
        }

        fn gather(&mut self, data: Vec<u8>) -> Option<Vec<Vec<u8>>> {
            let root = self.world.process_at_rank(0);
            let n = data.len() as Count;
            if self.rank == 0 {
                let mut counts = vec![0 as Count; self.size];
                root.gather_into_root(&n, &mut counts[..]);
                let displs = displacements(&counts);
                let mut buf = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
                {
                    let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
                    root.gather_varcount_into_root(&data[..], &mut part);
                }
                Some(split(buf, &counts))
            } else {
                root.gather_into(&n);
                root.gather_varcount_into(&data[..]);
                None
            }
        }

        fn broadcast(&mut self, data: Vec<u8>) -> Vec<u8> {
            let root = self.world.process_at_rank(0);
            let mut n = data.len() as u64;
            root.broadcast_into(&mut n);
            let mut buf = if self.rank == 0 { data } else { vec![0u8; n as usize] };
            root.broadcast_into(&mut buf[..]);
            buf
        }
        fn abort(&self, code: i32) -> ! {
            self.world.abort(code)
        }
    }
}

/// Sets the number of threads of rayon's global pool (tables, verification); `--threads`
/// must be at least 1.
pub(crate) fn use_threads(threads: u32) -> anyhow::Result<()> {
    if threads == 0 {
        anyhow::bail!("--threads must be at least 1");
    }
    // The pool can be set once; a second call is fine only if it asks for the same size.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(threads as usize).build_global();
    let running = rayon::current_num_threads();
    if running != threads as usize {
        anyhow::bail!("--threads {threads}: the thread pool had already started with {running} threads");
    }
    Ok(())
}
