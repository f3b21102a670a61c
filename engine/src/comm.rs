//! Communication between the ranks (processes) of a distributed run.
//!
//! The engine stays free of MPI: a distributed run gets a [`RankComm`], which the binary
//! implements with MPI. Only one thread per rank (the one that called the engine) uses it,
//! always in the same order on every rank, so a funnelled MPI library suffices.

/// Collective operations among the ranks of one run. Every rank calls the same operations
/// in the same order.
pub trait RankComm {
    /// This rank's number, `0..size`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Set-up, once: given the ranks this rank will send to at every window, returns the
    /// ranks that will send to it, in increasing order.
    fn senders(&mut self, receivers: &[usize]) -> Vec<usize>;
    /// The per-window step, between neighbours only: sends `send[k].1` to rank `send[k].0`
    /// (one message to each receiver named at set-up, empty ones included, so that
    /// receivers know what to wait for) and returns one message from each rank of `from`,
    /// in that order. Fused with one reduction: `min` becomes its element-wise minimum
    /// over all ranks.
    fn exchange(&mut self, send: Vec<(usize, Vec<u8>)>, from: &[usize], min: &mut [u64]) -> Vec<Vec<u8>>;
    /// Element-wise minimum of `values` over all ranks, in place.
    fn min_all(&mut self, values: &mut [u64]);
    /// Gathers `data` at rank 0: `Some(per-rank data)` there, `None` elsewhere.
    fn gather(&mut self, data: Vec<u8>) -> Option<Vec<Vec<u8>>>;
    /// Rank 0's `data`, on every rank (other ranks' argument is ignored).
    fn broadcast(&mut self, data: Vec<u8>) -> Vec<u8>;
    /// Ends every rank of the run now with exit code `code` (a failure on one rank that
    /// the others cannot know of: they would wait for it forever). Not collective.
    fn abort(&self, code: i32) -> !;
}

/// The communicator of a run in a single process.
#[derive(Clone, Copy, Debug, Default)]
pub struct SingleRank;

impl RankComm for SingleRank {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn senders(&mut self, _receivers: &[usize]) -> Vec<usize> {
        Vec::new()
    }
    fn exchange(&mut self, _send: Vec<(usize, Vec<u8>)>, from: &[usize], _min: &mut [u64]) -> Vec<Vec<u8>> {
        vec![Vec::new(); from.len()]
    }
    fn min_all(&mut self, _values: &mut [u64]) {}
    fn gather(&mut self, data: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        Some(vec![data])
    }
    fn broadcast(&mut self, data: Vec<u8>) -> Vec<u8> {
        data
    }
    fn abort(&self, code: i32) -> ! {
        std::process::exit(code)
    }
}

/// Serialises with the project's wire format (bincode 2, standard configuration).
pub fn encode<T: serde::Serialize>(value: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(value, bincode::config::standard()).expect("in-memory encoding cannot fail")
}

/// Reverses [`encode`]. A failure means the ranks run different builds or configurations.
pub fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    bincode::serde::decode_from_slice(bytes, bincode::config::standard())
        .map(|(v, _)| v)
        .map_err(|e| format!("cannot decode a message from another rank: {e}"))
}
