//! The router's statistics: what the routers of a partition count
//! ([`PartitionStats`]), the records of delivered packets and blocked channels, and the
//! measurement window.

use super::buffers::STALLED;
use super::{PartitionState, Router, RouterState, Shared};
use crate::stats::{Counters, Histogram};
use serde::{Deserialize, Serialize};
use topology::{EndpointId, PortId, SwitchId};

/// An input VC that held packets when a deadlock was declared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedChannel {
    /// Switch.
    pub switch: SwitchId,
    /// Input port.
    pub port: PortId,
    /// VC.
    pub vc: u8,
    /// Packets queued.
    pub packets: u32,
    /// Output port and VC its head waits for (`u16::MAX`/`u8::MAX` if not routed yet).
    pub wants_port: PortId,
    /// Output VC the head waits for.
    pub wants_vc: u8,
    /// Under PFC: the VC holds past `xoff` and has paused its upstream sender (a PFC
    /// deadlock is a cycle of such VCs, each waiting for the next).
    pub pauses_upstream: bool,
}

/// A delivered packet, as recorded for tests and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// Packet id.
    pub id: u64,
    /// Source endpoint.
    pub src: EndpointId,
    /// Destination endpoint.
    pub dst: EndpointId,
    /// Endpoint that received it (must equal `dst`).
    pub received_by: EndpointId,
    /// Generation cycle.
    pub created: u64,
    /// Injection cycle (head left the source).
    pub injected: u64,
    /// Delivery cycle (tail received).
    pub delivered: u64,
    /// Switch-to-switch hops.
    pub hops: u16,
}

/// Statistics of the routers of one partition. Integer sums and histograms: merging the
/// partitions' statistics gives the same totals however the routers were spread.
#[derive(Default)]
pub struct PartitionStats {
    /// Counters since the last sample.
    pub period: Counters,
    /// Counters over the measurement period.
    pub measured: Counters,
    /// Latency (creation to delivery) of measured packets.
    pub latency: Histogram,
    /// Network latency (injection to delivery) of measured packets.
    pub network_latency: Histogram,
    /// Switch-to-switch hops of measured packets.
    pub hops: Histogram,
    /// Phits sent per VC over network links during the measurement period.
    pub vc_phits: Vec<u64>,
    /// Packets that left an endpoint or an output port (all time).
    pub departures: u64,
    /// Packets that reached an input port or were delivered (all time).
    pub arrivals: u64,
    /// Packets generated (all time).
    pub generated_total: u64,
    /// Packets delivered (all time).
    pub delivered_total: u64,
    /// Packets dropped at a switch's input (all time; `router.flow_control`).
    pub dropped_total: u64,
    /// The largest late-time offset of a reordered packet delivered in the measurement
    /// window (`simulation.reordering`).
    pub reorder_late_max: u64,
    /// The most packets a selective transport's responder held out of order on one
    /// connection.
    pub transport_held_max: u64,
    /// Every delivered packet (only with `record_deliveries`).
    pub deliveries: Vec<Delivery>,
    /// Completion-time mode: per source endpoint, when the last of its packets delivered
    /// here arrived (0: none); empty otherwise.
    pub source_finish: Vec<u64>,
    /// Per workload job: what its ranks here recorded.
    pub jobs: Vec<JobStats>,
    /// Phits sent in the measurement period beyond what a port's 32-bit count holds
    /// (links faster than one phit a cycle): `(switch, port, phits)`, to add to
    /// [`Router::port_phits`].
    pub phits_carry: Vec<(topology::SwitchId, topology::PortId, u64)>,
}

impl PartitionStats {
    /// One event of the counter `counter` picks: in the period, and in the measurement
    /// window if `measured`.
    pub(super) fn count(&mut self, measured: bool, counter: fn(&mut Counters) -> &mut u64) {
        *counter(&mut self.period) += 1;
        if measured {
            *counter(&mut self.measured) += 1;
        }
    }

    /// A packet of `size` phits lost in the network (no room at an input, a bad checksum
    /// under end-to-end recovery, a link that is down), `measured` if in the measurement
    /// window.
    pub(super) fn count_drop(&mut self, size: u16, measured: bool) {
        self.dropped_total += 1;
        self.period.dropped_packets += 1;
        self.period.dropped_phits += size as u64;
        if measured {
            self.measured.dropped_packets += 1;
            self.measured.dropped_phits += size as u64;
        }
    }

    /// `phits` offered for the congestion's targets (generated, or refused by a full source
    /// queue), `measured` if in the measurement window.
    pub(super) fn count_aggressor_offered(&mut self, phits: u64, measured: bool) {
        self.period.aggressor_offered_phits += phits;
        if measured {
            self.measured.aggressor_offered_phits += phits;
        }
    }

    /// An aggressor's packet of `phits` delivered with `latency`: in the window if
    /// `delivered_measured`, created in it if `created_measured`.
    pub(super) fn count_aggressor_delivery(
        &mut self,
        phits: u64,
        latency: u64,
        delivered_measured: bool,
        created_measured: bool,
    ) {
        let p = &mut self.period;
        p.aggressor_delivered_packets += 1;
        p.aggressor_delivered_phits += phits;
        p.aggressor_latency_sum += latency;
        p.aggressor_latency_count += 1;
        let m = &mut self.measured;
        if delivered_measured {
            m.aggressor_delivered_packets += 1;
            m.aggressor_delivered_phits += phits;
        }
        if created_measured {
            m.aggressor_latency_sum += latency;
            m.aggressor_latency_count += 1;
        }
    }
}

/// What a router reports to the run: link use, the period's counters, resident packets
/// and, after a deadlock, the occupied inputs.
impl Router {
    /// Phits sent through each port during the measurement period.
    pub fn port_phits(&self) -> impl Iterator<Item = u64> + '_ {
        self.state.sw.ports.iter().map(|p| p.phits as u64)
    }

    /// Cycles each port's link stalled in the measurement window (free, packets waiting,
    /// no credits for any of them), a stall still under way at `now` counted to then.
    pub fn port_stall_cycles(&self, now: u64) -> impl Iterator<Item = u64> + '_ {
        let s = &self.state;
        (0..s.sw.ports.len()).map(move |o| match s.sw.stalls.get(o) {
            None => 0,
            Some(stall) => {
                let ongoing = if s.sw.ports[o].flags & STALLED != 0 {
                    stall.measured_part(&self.shared, now)
                } else {
                    0
                };
                (stall.cycles + ongoing) as u64
            }
        })
    }

    /// PFC pauses each port's output received in the measurement window (0 without PFC).
    pub fn port_pauses(&self) -> impl Iterator<Item = u64> + '_ {
        let levels = self.state.sw.levels.as_deref();
        (0..self.state.sw.ports.len()).map(move |o| levels.map_or(0, |l| l.pauses[o] as u64))
    }

    /// The longest time one of each port's output VCs stayed paused by PFC in the
    /// measurement window, a pause under way at `now` counted to then (0 without PFC).
    pub fn port_longest_pause(&self, now: u64) -> impl Iterator<Item = u64> + '_ {
        let s = &self.state;
        let (from, to) = (self.shared.warmup, now.min(self.shared.end));
        let levels = s.sw.levels.as_deref();
        (0..s.sw.ports.len()).map(move |o| {
            levels.map_or(0, |l| {
                l.longest_pause(o, s.vcs, from, to, |v| s.sw.channels[o * s.vcs + v].credits != 0)
            })
        })
    }

    /// Replays of each port's link in the measurement window (0 without link errors).
    pub fn port_retries(&self) -> impl Iterator<Item = u64> + '_ {
        let replays = self.state.sw.replays.as_deref();
        (0..self.state.sw.ports.len()).map(move |o| replays.map_or(0, |r| r.retries[o] as u64))
    }

    /// Packets dropped at each port's input in the measurement window (0 under credits):
    /// the losses of the link that arrives there.
    pub fn port_input_drops(&self) -> impl Iterator<Item = u64> + '_ {
        let levels = self.state.sw.levels.as_deref();
        (0..self.state.sw.ports.len()).map(move |i| levels.map_or(0, |l| l.drops[i] as u64))
    }

    /// Takes the partition's counters of the current sampling period, resetting them.
    /// `now` is the checkpoint time: every router's deliveries before it are accounted
    /// first.
    pub fn take_period(routers: &mut [Router], part: &mut PartitionState, now: u64) -> Counters {
        for r in routers.iter_mut() {
            let Router { shared, state } = r;
            state.flush_deliveries(shared, now, &mut part.stats);
            part.stats.period.busy_ranks += state.busy_ranks();
            part.stats.period.waiting_connections += state.waiting_connections();
        }
        std::mem::take(&mut part.stats.period)
    }

    /// Packets held by this router: in source queues, input buffers and output buffers.
    pub fn resident_packets(&self) -> u64 {
        let buffered: u64 = self.state.sw.channels.iter().map(|c| (c.input.len + c.output.len) as u64).sum();
        self.source_queued_packets() + buffered
    }

    /// The application ranks here that have not finished at `now` (the run's end), with
    /// what they wait for.
    pub fn stalled_ranks(&self, now: u64) -> Vec<StalledRank> {
        self.state.stalled_ranks(&self.shared, now)
    }

    /// Packets waiting in source queues (with congestion control, also those held for
    /// their flow and the notifications not yet sent).
    pub fn source_queued_packets(&self) -> u64 {
        let nics = self.state.ends.nics.iter();
        nics.map(|n| n.source_queue.len as u64 + n.cc.as_ref().map_or(0, |c| c.waiting_packets()))
            .sum::<u64>()
            + self.state.outbox_packets()
    }

    /// Input VCs holding packets, with the output each head waits for.
    pub fn occupied_inputs(&self) -> Vec<BlockedChannel> {
        let s = &self.state;
        (0..s.sw.channels.len())
            .filter(|&i| !s.sw.channels[i].input.is_empty())
            .map(|i| {
                let c = &s.sw.channels[i];
                let (wants_port, wants_vc) = c.choice.map_or((PortId::MAX, u8::MAX), |c| (c.port, c.vc));
                BlockedChannel {
                    switch: s.id,
                    port: (i / s.vcs) as PortId,
                    vc: (i % s.vcs) as u8,
                    packets: c.input.len as u32,
                    wants_port,
                    wants_vc,
                    pauses_upstream: s.sw.levels.as_ref().is_some_and(|l| l.pauses_upstream(i)),
                }
            })
            .collect()
    }
}

impl RouterState {
    /// Whether time `t` lies in the measurement period.
    #[inline]
    pub(super) fn in_measurement(sh: &Shared, t: u64) -> bool {
        t >= sh.warmup && t < sh.end
    }

    /// The cycles from `since` to `t` that lie in the measurement window.
    #[inline]
    pub(super) fn measured_cycles(sh: &Shared, since: u64, t: u64) -> u64 {
        t.min(sh.end).saturating_sub(since.max(sh.warmup))
    }
}

/// What one job's ranks in a partition recorded; merges by addition and maximum, so the
/// totals do not depend on the partitioning.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobStats {
    /// Per iteration: the latest time a rank finished it (its computation included).
    pub iteration_end_max: Vec<u64>,
    /// Per iteration: the sum over ranks of the times they finished it.
    pub iteration_end_sum: Vec<u64>,
    /// Per iteration: the ranks that finished it.
    pub iteration_ranks: Vec<u64>,
    /// Every rank that finished.
    pub finished: Vec<RankEnd>,
    /// Latency of every message: from its posting to its last packet's arrival.
    pub message_latency: Histogram,
    /// Messages delivered whole.
    pub messages: u64,
    /// Packets the ranks posted.
    pub packets_sent: u64,
    /// Packets the ranks received.
    pub packets_received: u64,
    /// Per timed collective (iteration x collectives + index, see
    /// [`crate::workload::Phases`]).
    pub phases: Vec<PhaseSpan>,
    /// With `workload.record_sends`: every send that ended, in no particular order.
    pub sends: Vec<SendRecord>,
}

/// What a partition saw of one timed collective's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseSpan {
    /// The earliest start of a member's part (`u64::MAX` before any).
    pub start: u64,
    /// The latest end of a member's part.
    pub end: u64,
    /// The members' parts that ended.
    pub parts: u64,
}

impl Default for PhaseSpan {
    fn default() -> PhaseSpan {
        PhaseSpan { start: u64::MAX, end: 0, parts: 0 }
    }
}

impl PhaseSpan {
    /// Takes `o` in: the earlier start, the later end, the parts of both.
    fn merge(&mut self, o: &PhaseSpan) {
        self.start = self.start.min(o.start);
        self.end = self.end.max(o.end);
        self.parts += o.parts;
    }
}

impl JobStats {
    /// Timed collective `index`'s span, made on first use.
    pub(crate) fn phase(&mut self, index: usize) -> &mut PhaseSpan {
        if self.phases.len() <= index {
            self.phases.resize(index + 1, PhaseSpan::default());
        }
        &mut self.phases[index]
    }

    /// Adds `o` into `self`.
    pub fn merge(&mut self, o: &JobStats) {
        let grow = |v: &mut Vec<u64>, n: usize| {
            if v.len() < n {
                v.resize(n, 0)
            }
        };
        grow(&mut self.iteration_end_max, o.iteration_end_max.len());
        grow(&mut self.iteration_end_sum, o.iteration_end_sum.len());
        grow(&mut self.iteration_ranks, o.iteration_ranks.len());
        for (a, &b) in self.iteration_ranks.iter_mut().zip(&o.iteration_ranks) {
            *a += b;
        }
        for (a, &b) in self.iteration_end_max.iter_mut().zip(&o.iteration_end_max) {
            *a = (*a).max(b);
        }
        for (a, &b) in self.iteration_end_sum.iter_mut().zip(&o.iteration_end_sum) {
            *a += b;
        }
        if let Some(last) = o.phases.len().checked_sub(1) {
            self.phase(last);
        }
        for (a, b) in self.phases.iter_mut().zip(&o.phases) {
            a.merge(b);
        }
        self.finished.extend_from_slice(&o.finished);
        self.sends.extend_from_slice(&o.sends);
        self.message_latency.merge(&o.message_latency);
        self.messages += o.messages;
        self.packets_sent += o.packets_sent;
        self.packets_received += o.packets_received;
    }
}

/// A rank that finished: when, and how it spent its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankEnd {
    /// Rank in the job.
    pub rank: u32,
    /// When its last op ended (cycle).
    pub finish: u64,
    /// Cycles with a computation running.
    pub computing: u64,
    /// Cycles with a send running and no computation.
    pub sending: u64,
}

/// A send that ended (`workload.record_sends`): a flow and its completion time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendRecord {
    /// The sending rank in the job.
    pub rank: u32,
    /// The receiving rank.
    pub to: u32,
    /// The message's bytes.
    pub bytes: u64,
    /// The iteration it belongs to.
    pub iteration: u32,
    /// When the send started (cycle).
    pub start: u64,
    /// When it ended: its last packet left the endpoint, or (with a transport) its last
    /// packet was acknowledged (cycle).
    pub end: u64,
}

/// A rank that had not finished when the run ended, and what it waited for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StalledRank {
    /// Job index.
    pub job: u32,
    /// Rank in the job.
    pub rank: u32,
    /// The iteration it was in.
    pub iteration: u32,
    /// Ops of that iteration not ended.
    pub ops_left: u32,
    /// Receives posted and not complete.
    pub receives_posted: u32,
    /// Messages arrived that no receive had taken.
    pub unexpected: u32,
    /// Its own packets not yet sent from its endpoint.
    pub unsent: u32,
    /// It was computing.
    pub computing: bool,
    /// Cycles it computed (a `calc` running) until the run ended.
    pub computing_cycles: u64,
    /// Cycles it sent (a send running, no `calc`) until the run ended.
    pub sending_cycles: u64,
    /// What its first started ops wait for, in words (ops named `l<number>`).
    pub waits: String,
}
