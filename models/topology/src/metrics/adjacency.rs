//! Switch adjacency in compressed form, as the breadth-first searches read it.

use crate::{Network, SwitchId};

/// The common length of the CSR rows that `offsets` delimit, or 0 if they differ (or there
/// are none).
pub fn uniform_stride(offsets: &[u32]) -> u32 {
    let first = match offsets {
        [a, b, ..] => b - a,
        _ => return 0,
    };
    if offsets.windows(2).all(|w| w[1] - w[0] == first) {
        first
    } else {
        0
    }
}

/// Switch adjacency in compressed form (neighbour lists, parallel links repeated).
pub struct Adjacency {
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
    /// The degree of every switch when they all have the same (0 otherwise): the lists
    /// are then found without reading `offsets` (a cache miss saved per lookup).
    uniform_degree: u32,
}

impl Adjacency {
    /// The adjacency lists of `net`'s switches (network ports only).
    pub fn new(net: &Network) -> Self {
        let n = net.num_switches();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut neighbours = Vec::with_capacity(net.num_network_links());
        offsets.push(0);
        for s in 0..n as SwitchId {
            neighbours.extend(net.neighbours(s).map(|(_, v)| v));
            offsets.push(neighbours.len() as u32);
        }
        let uniform_degree = uniform_stride(&offsets);
        Adjacency { offsets, neighbours, uniform_degree }
    }

    /// Memory held, in bytes.
    pub fn bytes(&self) -> usize {
        (self.offsets.len() + self.neighbours.len()) * 4
    }

    /// Number of switches.
    pub fn switches(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The neighbours of `s`, in port order (a neighbour behind several links appears as
    /// often).
    #[inline]
    pub fn of(&self, s: u32) -> &[u32] {
        if self.uniform_degree != 0 {
            let d = self.uniform_degree as usize;
            return &self.neighbours[s as usize * d..][..d];
        }
        &self.neighbours[self.offsets[s as usize] as usize..self.offsets[s as usize + 1] as usize]
    }

    pub(super) fn degree(&self, s: u32) -> u64 {
        (self.offsets[s as usize + 1] - self.offsets[s as usize]) as u64
    }

    /// BFS from `src` into `dist` (length n, overwritten) using `queue` as scratch.
    pub(super) fn bfs_into(&self, src: SwitchId, dist: &mut [u32], queue: &mut Vec<u32>) {
        dist.fill(u32::MAX);
        queue.clear();
        dist[src as usize] = 0;
        queue.push(src);
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head];
            head += 1;
            let next = dist[v as usize] + 1;
            for &u in self.of(v) {
                if dist[u as usize] == u32::MAX {
                    dist[u as usize] = next;
                    queue.push(u);
                }
            }
        }
    }
}
