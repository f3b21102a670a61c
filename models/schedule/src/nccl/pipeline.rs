//! One rank's side of a channel: its connections to its peers and the slices its GPU
//! passes through them, as NCCL's primitives and network proxies handle them.

use super::{CTS_BYTES, NCCL_COMM};
use crate::graph::{OpId, ScheduleBuilder, Source, TagMatch};
use std::collections::VecDeque;

/// Data coming in from a peer: the receive slots the GPU freed, oldest first (the last
/// `depth`).
struct Inbound {
    peer: u32,
    freed: VecDeque<OpId>,
}

/// Data going out to a peer: the sends the GPU filled, oldest first (the last `depth`),
/// and the last one.
struct Outbound {
    peer: u32,
    sent: VecDeque<OpId>,
    last: Option<OpId>,
}

/// A rank's connections on one channel. Messages carry the channel's data tag, or its
/// record tag for the buffers a receiver posts: a pair of ranks has at most one connection
/// each way on a channel, so source and tag tell every stream apart.
pub(super) struct Channel {
    comm: u32,
    data_tag: u32,
    cts_tag: u32,
    /// Slices a connection's FIFO holds.
    depth: usize,
    /// The GPU's latency per slice.
    hop: u64,
    /// The collective's start (after its launch).
    start: OpId,
    ins: Vec<Inbound>,
    outs: Vec<Outbound>,
    /// The last slice of each GPU chain (one per thread group that runs its own loop).
    chains: Vec<Option<OpId>>,
    /// Ops of connections handled one message at a time (PAT's) that the end waits for.
    kept: Vec<OpId>,
}

impl Channel {
    /// Channel `channel` of the collective tagged `tag` on communicator `comm`, its FIFOs
    /// `depth` slices deep, its GPU taking `hop` per slice, everything after `start`.
    pub(super) fn new(comm: u32, tag: u32, channel: u32, depth: usize, hop: u64, start: OpId) -> Channel {
        let data_tag = tag << 8 | channel << 1;
        Channel {
            comm: comm | NCCL_COMM,
            data_tag,
            cts_tag: data_tag | 1,
            depth,
            hop,
            start,
            ins: Vec::new(),
            outs: Vec::new(),
            chains: Vec::new(),
            kept: Vec::new(),
        }
    }

    /// The connection from `peer` (made on first use).
    pub(super) fn from(&mut self, peer: u32) -> usize {
        self.ins.iter().position(|c| c.peer == peer).unwrap_or_else(|| {
            self.ins.push(Inbound { peer, freed: VecDeque::new() });
            self.ins.len() - 1
        })
    }

    /// The connection to `peer` (made on first use).
    pub(super) fn to(&mut self, peer: u32) -> usize {
        self.outs.iter().position(|c| c.peer == peer).unwrap_or_else(|| {
            self.outs.push(Outbound { peer, sent: VecDeque::new(), last: None });
            self.outs.len() - 1
        })
    }

    /// A GPU chain of its own (a thread group running its own loop).
    pub(super) fn chain(&mut self) -> usize {
        self.chains.push(None);
        self.chains.len() - 1
    }

    /// A GPU chain whose first slice waits for `op` (a batch that starts later).
    pub(super) fn chain_after(&mut self, op: OpId) -> usize {
        self.chains.push(Some(op));
        self.chains.len() - 1
    }

    /// The last slice of chain `chain` (`None` before its first).
    pub(super) fn chain_end(&self, chain: usize) -> Option<OpId> {
        self.chains[chain]
    }

    /// GPU chain `chain` takes a slice of `wire` bytes: it waits for the slice from every
    /// connection in `from` and for a free slot in every one in `to`, then sends it there.
    /// Each receive is posted (its record sent to the sender) once its slot is free; each
    /// send goes once the receiver's record has come, after the connection's previous send.
    pub(super) fn slice(
        &mut self,
        b: &mut ScheduleBuilder,
        chain: usize,
        from: &[usize],
        to: &[usize],
        wire: u64,
    ) {
        let step = b.calc(self.hop);
        b.requires(step, self.chains[chain].unwrap_or(self.start));
        for &i in from {
            let conn = &mut self.ins[i];
            let cts = b.send(conn.peer, CTS_BYTES, self.cts_tag, self.comm);
            let slot = if conn.freed.len() == self.depth { conn.freed.pop_front() } else { None };
            b.requires(cts, slot.unwrap_or(self.start));
            let recv = b.recv(Source::Rank(conn.peer), wire, TagMatch::Tag(self.data_tag), self.comm);
            b.irequires(recv, cts);
            // The record left before the data could come: no wait, but every op leads to
            // the end (what a repeated graph needs).
            b.requires(step, cts);
            b.requires(step, recv);
            conn.freed.push_back(step);
        }
        for &i in to {
            let conn = &mut self.outs[i];
            if conn.sent.len() == self.depth {
                b.requires(step, conn.sent.pop_front().expect("full"));
            }
            let posted = b.recv(Source::Rank(conn.peer), CTS_BYTES, TagMatch::Tag(self.cts_tag), self.comm);
            b.requires(posted, self.start);
            let send = b.send(conn.peer, wire, self.data_tag, self.comm);
            b.requires(send, step);
            b.requires(send, posted);
            if let Some(last) = conn.last {
                b.irequires(send, last);
            }
            conn.sent.push_back(send);
            conn.last = Some(send);
        }
        self.chains[chain] = Some(step);
    }

    /// A GPU step of chain `chain` that moves no slice of its own (PAT's steps say what
    /// they receive and send): `hop` after the chain's last.
    pub(super) fn gpu_step(&mut self, b: &mut ScheduleBuilder, chain: usize) -> OpId {
        let step = b.calc(self.hop);
        b.requires(step, self.chains[chain].unwrap_or(self.start));
        self.chains[chain] = Some(step);
        step
    }

    /// A message of `bytes` from `peer` into a slot that `freed` freed (`None`: a slot
    /// never used): its buffer is posted (the record sent) once the slot is free, and it
    /// is received after. Returns the receive.
    pub(super) fn receive(
        &mut self,
        b: &mut ScheduleBuilder,
        peer: u32,
        bytes: u64,
        freed: Option<OpId>,
    ) -> OpId {
        let cts = b.send(peer, CTS_BYTES, self.cts_tag, self.comm);
        b.requires(cts, freed.unwrap_or(self.start));
        let recv = b.recv(Source::Rank(peer), bytes, TagMatch::Tag(self.data_tag), self.comm);
        b.irequires(recv, cts);
        self.kept.push(cts);
        recv
    }

    /// A message of `bytes` to `peer` that the GPU steps `writers` filled, sent once the
    /// receiver's record has come, after `previous` (the connection's last send).
    pub(super) fn send_posted(
        &mut self,
        b: &mut ScheduleBuilder,
        peer: u32,
        bytes: u64,
        writers: &[OpId],
        previous: Option<OpId>,
    ) -> OpId {
        let posted = b.recv(Source::Rank(peer), CTS_BYTES, TagMatch::Tag(self.cts_tag), self.comm);
        b.requires(posted, self.start);
        let send = b.send(peer, bytes, self.data_tag, self.comm);
        b.requires(send, posted);
        for &w in writers {
            b.requires(send, w);
        }
        if let Some(p) = previous {
            b.irequires(send, p);
        }
        send
    }

    /// Ops the collective's end also waits for.
    pub(super) fn keep(&mut self, ops: impl IntoIterator<Item = OpId>) {
        self.kept.extend(ops);
    }

    /// The ops the collective's end waits for: each chain's last slice (which follows the
    /// chain's others) and the sends not yet waited on (they end in order, but the graph
    /// wants each to lead to the end).
    pub(super) fn ends(self, out: &mut Vec<OpId>) {
        out.extend(self.kept);
        out.extend(self.chains.into_iter().flatten());
        for conn in self.outs {
            out.extend(conn.sent);
        }
    }
}

/// The start of a collective or group: its launch, after `after`.
pub(super) fn launch(b: &mut ScheduleBuilder, latency: u64, after: Option<OpId>) -> OpId {
    let start = b.calc(latency);
    if let Some(a) = after {
        b.requires(start, a);
    }
    start
}

/// The op that ends once `start` and every op of `ends` have.
pub(super) fn join(b: &mut ScheduleBuilder, start: OpId, ends: &[OpId]) -> OpId {
    let end = b.calc(0);
    b.requires(end, start);
    for &op in ends {
        b.requires(end, op);
    }
    end
}
