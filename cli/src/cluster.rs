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
    use mpi::datatype::{Partition, PartitionMut};
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;
    use mpi::Count;

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

        fn exchange(&mut self, mut send: Vec<Vec<u8>>, min: u64, max: u64) -> (Vec<Vec<u8>>, u64, u64) {
            send[self.rank].clear();
            // One all-to-all carries every rank's (bytes for you, its minimum, its maximum).
            let header: Vec<u64> = send.iter().flat_map(|b| [b.len() as u64, min, max]).collect();
            let mut headers = vec![0u64; 3 * self.size];
            self.world.all_to_all_into(&header[..], &mut headers[..]);
            let recv_counts: Vec<Count> = headers.chunks(3).map(|h| h[0] as Count).collect();
            let min = headers.chunks(3).map(|h| h[1]).min().unwrap_or(min);
            let max = headers.chunks(3).map(|h| h[2]).max().unwrap_or(max);
            let send_counts: Vec<Count> = send.iter().map(|b| b.len() as Count).collect();
            let total: usize = recv_counts.iter().map(|&c| c as usize).sum();
            if total == 0 && send_counts.iter().all(|&c| c == 0) {
                return (vec![Vec::new(); self.size], min, max);
            }
            let flat: Vec<u8> = send.concat();
            let mut buf = vec![0u8; total];
            {
                let (sd, rd) = (displacements(&send_counts), displacements(&recv_counts));
                let out = Partition::new(&flat[..], &send_counts[..], &sd[..]);
                let mut inp = PartitionMut::new(&mut buf[..], &recv_counts[..], &rd[..]);
                self.world.all_to_all_varcount_into(&out, &mut inp);
            }
            (split(buf, &recv_counts), min, max)
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
    }
}
