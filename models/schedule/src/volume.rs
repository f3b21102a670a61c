//! What a graph's sends add up to: the largest message (a run counts its packets in 32
//! bits) and the rank with the most to send, whose sends alone take at least as long as
//! their serialisation at its endpoint.

use crate::graph::{Graph, Op, OpId};

/// One send of a graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendOp {
    /// The sending rank.
    pub rank: u32,
    /// The send, numbered as in its rank (`l<op>` in GOAL).
    pub op: OpId,
    /// Its size in bytes.
    pub bytes: u64,
}

/// The sends of a graph, summed per rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendVolume {
    /// The largest send (the first of the largest, in rank and op order); `None` when the
    /// graph sends nothing.
    pub largest: Option<SendOp>,
    /// The rank whose sends cost the most, and what they cost (the sum of `cost(bytes)`
    /// over its sends; the first such rank).
    pub busiest: Option<(u32, u64)>,
}

/// Sums the sends of every rank of `graph` (all iterations): each send of `bytes` costs
/// `cost(bytes)` (its phits, say), and the sums saturate. Sends to the sender itself cost
/// nothing (a run hands them over at once) but count for the largest message.
pub fn send_volume(graph: &dyn Graph, cost: impl Fn(u64) -> u64) -> SendVolume {
    let mut volume = SendVolume::default();
    for rank in 0..graph.num_ranks() {
        let mut sum = 0u64;
        for op in 0..graph.ops_in_rank(rank) {
            if let Op::Send { to, bytes, .. } = graph.op(rank, op) {
                if volume.largest.is_none_or(|l| bytes > l.bytes) {
                    volume.largest = Some(SendOp { rank, op, bytes });
                }
                if to != rank {
                    sum = sum.saturating_add(cost(bytes));
                }
            }
        }
        if sum > 0 && volume.busiest.is_none_or(|(_, most)| sum > most) {
            volume.busiest = Some((rank, sum));
        }
    }
    volume
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read_goal;

    #[test]
    fn the_largest_send_and_the_busiest_rank_are_found() {
        let goal = "num_ranks 3\n\
                    rank 0 {\nl0: send 10b to 1\nl1: send 300b to 2\nl2: calc 5\n}\n\
                    rank 1 {\nl0: recv 10b from 0\nl1: send 300b to 1\nl2: recv 300b from 1\n}\n\
                    rank 2 {\nl0: recv 300b from 0\nl1: send 100b to 0\nl2: send 100b to 0\nl3: send 200b to 0\n}\n";
        let schedule = read_goal(goal.as_bytes(), "t.goal").unwrap();
        // Cost: 1 per started 100 bytes.
        let v = send_volume(&schedule, |b| b.div_ceil(100));
        // Rank 1's send to itself is as large as rank 0's, but comes later.
        assert_eq!(v.largest, Some(SendOp { rank: 0, op: 1, bytes: 300 }));
        // Rank 0: 1 + 3; rank 1: nothing (to itself); rank 2: 1 + 1 + 2.
        assert_eq!(v.busiest, Some((0, 4)));
        let v = send_volume(&schedule, |b| if b == 100 { 10 } else { 1 });
        assert_eq!(v.busiest, Some((2, 21)));
    }

    #[test]
    fn a_graph_without_sends_has_neither() {
        let schedule = read_goal("num_ranks 1\nrank 0 {\nl0: calc 5\n}\n".as_bytes(), "t.goal").unwrap();
        assert_eq!(send_volume(&schedule, |b| b), SendVolume::default());
    }
}
