//! Single-source switch distances and the all-pairs byte table.

use super::multi_bfs::{check_too_long, note_too_long, ones, run_batches, BATCH};
use super::Adjacency;
use crate::{Network, SwitchId, TopologyError};

/// Switch hops from `src` to every switch; `u32::MAX` where unreachable.
pub fn bfs(net: &Network, src: SwitchId) -> Vec<u32> {
    let adj = Adjacency::new(net);
    let mut dist = vec![0; net.num_switches()];
    adj.bfs_into(src, &mut dist, &mut Vec::new());
    dist
}

/// All-pairs switch distances, one byte each (`255` = unreachable): `n^2` bytes.
#[derive(Clone, Debug)]
pub struct DistanceTable {
    n: usize,
    dist: Vec<u8>,
}

impl DistanceTable {
    /// Value stored for unreachable pairs.
    pub const UNREACHABLE: u8 = u8::MAX;

    /// Computes the table (multi-source bit-parallel BFS, batches in parallel). Fails if
    /// some finite distance is 255 or more, or if the table would not fit in memory
    /// addressing.
    pub fn compute(net: &Network) -> Result<Self, TopologyError> {
        Self::build(net, &|| false)
    }

    /// [`compute`](Self::compute) for a routing build, which must stop when a stop is
    /// asked for ([`base::cancel`]): the batches not yet started are skipped and the call
    /// fails with "interrupted while computing the switch distances". `E` is the caller's
    /// error type (a routing's).
    pub fn compute_unless_stopped<E: From<TopologyError> + From<base::cancel::Interrupted>>(
        net: &Network,
    ) -> Result<Self, E> {
        let table = Self::build(net, &base::cancel::requested)?;
        base::cancel::check("computing the switch distances")?;
        Ok(table)
    }

    /// The table; batches that start once `stop()` holds are skipped (their rows stay
    /// unreachable), so a caller that passes a real `stop` must check it afterwards.
    fn build(net: &Network, stop: &(dyn Fn() -> bool + Sync)) -> Result<Self, TopologyError> {
        let n = net.num_switches();
        let Some(size) = n.checked_mul(n) else {
            return Err(TopologyError::new(
                "switches",
                format!("a distance table for {n} switches does not fit in memory"),
            ));
        };
        let adj = Adjacency::new(net);
        let mut dist = vec![Self::UNREACHABLE; size];
        if n == 0 {
            return Ok(DistanceTable { n, dist });
        }
        let sources: Vec<SwitchId> = (0..n as SwitchId).collect();
        // Each batch writes its sources' rows; the first too long distance it meets is
        // `(level, source)`, the smallest source at the smallest such level.
        let (too_long, _) = run_batches(
            &adj,
            &sources,
            dist.chunks_mut(BATCH * n).collect(),
            |b, rows| (b * BATCH, rows, None),
            |(first, rows, too_long), level, v, new| {
                if level >= Self::UNREACHABLE as u32 {
                    note_too_long(too_long, level, *first, new);
                    return;
                }
                for i in ones(new) {
                    rows[i * n + v as usize] = level as u8;
                }
            },
            |(_, _, too_long)| too_long,
            stop,
        );
        check_too_long(too_long)?;
        Ok(DistanceTable { n, dist })
    }

    /// Hops from switch `a` to switch `b` (`255` if unreachable).
    pub fn get(&self, a: SwitchId, b: SwitchId) -> u8 {
        self.dist[a as usize * self.n + b as usize]
    }

    /// Number of switches.
    pub fn num_switches(&self) -> usize {
        self.n
    }

    /// Memory used by the table in bytes.
    pub fn bytes(&self) -> usize {
        self.dist.len()
    }
}
