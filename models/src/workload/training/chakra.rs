//! A training step as Chakra execution traces, the workload format of ASTRA-sim: per rank
//! its pieces (`step.rs`) as nodes, the collectives as `COMM_COLL_NODE`s on process groups
//! (not expanded: the replaying simulator chooses their algorithms), the pipeline's
//! messages as sends and receives; and the groups as ASTRA-sim's communicator-group file.

use super::emit::groups;
use super::step::{Coll, Work};
use super::Shape;
use schedule::chakra::{AttrValue, ChakraTraces, ChakraWriter, CollectiveKind, NodeType, ProcessGroup};
use std::collections::BTreeMap;

/// Every rank's step as a Chakra trace, with the process groups its collectives name
/// (those of the tensor, data and expert groups that run any).
pub(super) fn chakra_step(shape: &Shape) -> ChakraTraces {
    let mut named: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let ranks = (0..shape.ranks())
        .map(|r| {
            let comms = groups(shape, r);
            let mut w = ChakraWriter::new();
            // The nodes of each piece: one, or one per message of a grouped exchange.
            let mut nodes: Vec<Vec<u64>> = Vec::new();
            let mut deps = Vec::new();
            for (i, task) in shape.tasks(r).iter().enumerate() {
                deps.clear();
                deps.extend(task.after.iter().flat_map(|&a| nodes[a].iter().copied()));
                let mine = match &task.work {
                    // Chakra times computations in whole microseconds.
                    Work::Compute(ns) => {
                        let attrs = [("is_cpu_op", AttrValue::Bool(false))];
                        vec![w.node(
                            NodeType::Comp,
                            &format!("compute_{i}"),
                            &deps,
                            ns.div_ceil(1000),
                            &attrs,
                        )]
                    }
                    Work::Collective(group, coll, bytes) => {
                        let comm = &comms[group.index()];
                        // `comm_size` is the rank's input, as PyTorch records it.
                        let n = comm.size() as u64;
                        let (kind, input) = match coll {
                            Coll::AllReduce => (CollectiveKind::AllReduce, *bytes),
                            Coll::AllGather => (CollectiveKind::AllGather, *bytes),
                            Coll::ReduceScatter => (CollectiveKind::ReduceScatter, bytes * n),
                            Coll::AllToAll => (CollectiveKind::AllToAll, bytes * n),
                        };
                        let name = format!("{}_{i}", kind.name().to_lowercase());
                        named.entry(comm.id).or_insert_with(|| comm.ranks.clone());
                        vec![w.collective(&name, kind, input, &comm.id.to_string(), &deps)]
                    }
                    Work::P2p(messages) => messages
                        .iter()
                        .map(|&(stage, bytes, send)| {
                            let peer = comms[4].ranks[stage as usize] as i32;
                            let (node_type, peer_key, name) = if send {
                                (NodeType::CommSend, "comm_dst", "send")
                            } else {
                                (NodeType::CommRecv, "comm_src", "recv")
                            };
                            let attrs = [
                                ("is_cpu_op", AttrValue::Bool(false)),
                                (peer_key, AttrValue::Int32(peer)),
                                ("comm_size", AttrValue::Int64(bytes as i64)),
                                ("comm_tag", AttrValue::Int32(0)),
                            ];
                            w.node(node_type, &format!("{name}_{i}"), &deps, 0, &attrs)
                        })
                        .collect(),
                };
                nodes.push(mine);
            }
            w.finish()
        })
        .collect();
    let groups = named.into_iter().map(|(id, ranks)| ProcessGroup { name: id.to_string(), ranks }).collect();
    ChakraTraces { ranks, groups }
}
