//! The reliable connection at the endpoints (`transport.kind = "rc"`; the rules, pure, are
//! in `crate::transport`). A rank's endpoint keeps, per peer, a requester (the connection
//! it sends on) and a responder (the one it receives on), created at the first packet.
//!
//! - Sending: the rank's outbox feeds the source queue as without a transport
//!   (`app.rs`), each packet taking its connection's next PSN in the 15 bits that carry a
//!   message's sequence number without one; a message's first packet records the message
//!   with its connection. Packets to send again (after a NAK or a timeout) go first.
//! - Receiving: a data packet is taken only at the PSN expected; then the rank gets it as
//!   without a transport. ACKs and NAKs go back as packets through the network, before the
//!   endpoint's data.
//! - An ACK ends the sends whose last packet it covers. A timer per connection (one
//!   `Timeout` event pending at most) sends again from the oldest unacknowledged packet.

use super::buffers::NIL;
use super::messages::{Post, SelfEvent};
use super::stats::PartitionStats;
use super::{RouterCtx, RouterState, Shared};
use crate::transport::{
    AckSignal, Arrival, Nscc, NsccWindow, Receipt, Reorder, Requester, Responder, SentMessage, Transport,
    PSN_MASK,
};
use crate::workload::WORKLOAD_PACKET;
use routing::packet::Packet;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use topology::EndpointId;

/// One rank's connections (`Mailroom::transports`, by the rank's index).
#[derive(Debug, Default)]
pub(super) struct RankTransport {
    /// The connections it sends on, by destination endpoint.
    send: FxHashMap<EndpointId, Requester>,
    /// The connections it receives on, by source endpoint (RC).
    receive: FxHashMap<EndpointId, Responder>,
    /// The connections it receives on selectively, with the packets held out of order.
    reorder: FxHashMap<EndpointId, Reorder<Packet>>,
    /// Packets released in order by a selective responder, for the rank (kept for its
    /// room).
    released: Vec<Packet>,
    /// ACKs and NAKs to inject, oldest first: they go before data.
    control: VecDeque<Packet>,
    /// Connections going back, each once, served a packet at a time in turn.
    resending: VecDeque<EndpointId>,
}

impl RankTransport {
    /// Whether a new packet to `dst` may take a PSN now (its connection's window has room
    /// and it is not going back).
    /// Under NSCC, its window must also have room for the packet's `size` phits.
    pub(super) fn may_send_new(&self, dst: EndpointId, window: u32, size: u16) -> bool {
        self.send.get(&dst).is_none_or(|c| {
            c.may_send_new(window) && c.nscc.as_ref().is_none_or(|w| w.may_send(c.in_flight(), size))
        })
    }

    /// The PSN of a new packet of `size` phits to `dst` (its low 15 bits); `message` is
    /// recorded with the connection if the packet is its message's first. A new
    /// connection starts NSCC's window under `nscc`.
    pub(super) fn send_new(
        &mut self,
        dst: EndpointId,
        message: Option<SentMessage>,
        size: u16,
        selective: bool,
        nscc: Option<&Nscc>,
    ) -> u16 {
        let conn = self.send.entry(dst).or_insert_with(|| {
            let mut r = Requester::new(selective);
            r.nscc = nscc.map(|n| NsccWindow::new(&n.params));
            r
        });
        (conn.send_new(message, size) & PSN_MASK) as u16
    }

    /// The next packet to send again, from endpoint `src`: built as the original was.
    /// `measured`: whether now is in the measurement window.
    pub(super) fn next_resend(
        &mut self,
        src: EndpointId,
        measured: bool,
        st: &mut PartitionStats,
    ) -> Option<Packet> {
        while let Some(&dst) = self.resending.front() {
            let conn = self.send.get_mut(&dst).expect("a connection going back is kept");
            let Some((psn, m)) = conn.next_resend() else {
                self.resending.pop_front();
                continue;
            };
            // Round robin over the connections going back: one that keeps going back
            // (NAK after NAK) does not starve the others.
            self.resending.pop_front();
            if conn.resending() {
                self.resending.push_back(dst);
            }
            let mut packet = Packet::new(src, m.low, dst, m.size_of(psn), m.created);
            packet.id |= WORKLOAD_PACKET;
            packet.set_app_seq((psn & PSN_MASK) as u16);
            st.generated_total += 1;
            st.count(measured, |c| &mut c.retransmitted_packets);
            return Some(packet);
        }
        None
    }

    /// Connection to `dst` goes back: queued to send again (once).
    fn go_back(&mut self, dst: EndpointId) {
        if !self.resending.contains(&dst) {
            self.resending.push_back(dst);
        }
    }

    /// Why a send to `dst` waits, if its connection failed.
    pub(super) fn failure(&self, dst: EndpointId) -> Option<String> {
        let c = self.send.get(&dst).filter(|c| c.failed)?;
        Some(format!(
            "its connection to endpoint {dst} failed after {} timeouts without an acknowledgement, at PSN {}",
            c.timeouts,
            c.oldest()
        ))
    }
}

impl RouterState {
    /// Connections of the router's ranks with packets unacknowledged that have not failed.
    pub(super) fn waiting_connections(&self) -> u64 {
        let waiting =
            |t: &RankTransport| t.send.values().filter(|c| c.outstanding() > 0 && !c.failed).count();
        self.ends.mail.iter().flat_map(|m| &m.transports).map(waiting).sum::<usize>() as u64
    }

    /// The transport state of the rank at endpoint `nic`.
    fn transport_at(&mut self, nic: u16) -> &mut RankTransport {
        let a = self.ends.nics[nic as usize].app;
        debug_assert_ne!(a, NIL, "only ranks run a transport");
        let room = self.ends.mail.as_deref_mut().expect("a router with ranks has a mailroom");
        &mut room.transports[a as usize]
    }

    /// Whether endpoint `nic` has ACKs or NAKs to inject.
    pub(super) fn transport_control_waiting(&self, nic: u16) -> bool {
        let a = self.ends.nics[nic as usize].app;
        a != NIL
            && self
                .ends
                .mail
                .as_ref()
                .and_then(|m| m.transports.get(a as usize))
                .is_some_and(|t| !t.control.is_empty())
    }

    /// The length of endpoint `nic`'s next ACK or NAK.
    pub(super) fn transport_control_size(&self, nic: u16) -> u16 {
        let a = self.ends.nics[nic as usize].app as usize;
        let room = self.ends.mail.as_ref().expect("a router with ranks has a mailroom");
        room.transports[a].control.front().expect("an acknowledgement waits").size
    }

    /// Takes endpoint `nic`'s next ACK or NAK.
    pub(super) fn transport_take_control(&mut self, nic: u16) -> Packet {
        self.transport_at(nic).control.pop_front().expect("an acknowledgement waits")
    }

    /// Queues an acknowledgement from endpoint `nic` to `to`: `(psn, nak, cumulative)`, an
    /// ACK of everything through `psn` or a NAK for it (RC), or a selective ACK of `psn`
    /// with the last PSN taken in order.
    fn acknowledge_to(
        &mut self,
        sh: &Shared,
        nic: u16,
        to: EndpointId,
        (psn, nak, cumulative): (u32, bool, Option<u32>),
        t: u64,
        st: &mut PartitionStats,
    ) {
        let transport = sh.transport.as_ref().expect("a transport is on");
        let from = self.ends.nics[nic as usize].endpoint;
        let mut ack = Packet::transport_ack(from, to, psn, nak, transport.ack_size(), t);
        if let Some(c) = cumulative {
            ack.set_ack_cumulative(c);
        }
        self.transport_at(nic).control.push_back(ack);
        st.generated_total += 1;
        st.period.control_packets += 1;
        if nak {
            st.count(Self::in_measurement(sh, t), |c| &mut c.naks);
        }
    }

    /// A data packet of a rank reaches endpoint `nic`: its connection's responder takes it
    /// (and the rank gets it) or drops it, and answers.
    pub(super) fn transport_on_data(
        &mut self,
        sh: &Shared,
        nic: u16,
        packet: &Packet,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let ack_every = match sh.transport.as_ref().expect("a transport is on") {
            Transport::Rc(rc) => rc.ack_every,
            Transport::Uec(_) => return self.selective_on_data(sh, nic, packet, ctx, st),
        };
        let (t, src) = (ctx.now(), packet.src());
        let receipt = self.transport_at(nic).receive.entry(src).or_default().receive(packet.app_seq() as u32);
        match receipt {
            Receipt::Accepted => {
                let ends_message = self.on_rank_receive(sh, nic, packet, ctx, st);
                let conn = self.transport_at(nic).receive.get_mut(&src).expect("kept above");
                if let Some(psn) = conn.acknowledges(ends_message, ack_every) {
                    self.acknowledge_to(sh, nic, src, (psn, false, None), t, st);
                }
            }
            Receipt::Duplicate { ack } => {
                self.count_discarded(sh, t, st);
                self.acknowledge_to(sh, nic, src, (ack, false, None), t, st);
            }
            Receipt::OutOfSequence { nak } => {
                self.count_discarded(sh, t, st);
                if let Some(psn) = nak {
                    self.acknowledge_to(sh, nic, src, (psn, true, None), t, st);
                }
            }
        }
        self.try_inject(sh, nic, ctx, st);
    }

    /// A data packet of a rank reaches endpoint `nic` under the selective transport: taken
    /// in any order within the window, held past a gap, released to the rank in PSN
    /// order, and acknowledged by itself with the last PSN taken in order.
    fn selective_on_data(
        &mut self,
        sh: &Shared,
        nic: u16,
        packet: &Packet,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let (t, src, psn) = (ctx.now(), packet.src(), packet.app_seq() as u32);
        let tr = self.transport_at(nic);
        let mut released = std::mem::take(&mut tr.released);
        let reorder = tr.reorder.entry(src).or_default();
        let arrival = reorder.receive(psn, *packet, |p| released.push(p));
        let (held, cumulative) = (reorder.held() as u64, reorder.cumulative());
        match arrival {
            Arrival::Ahead => {
                st.count(Self::in_measurement(sh, t), |c| &mut c.out_of_order_packets);
                st.transport_held_max = st.transport_held_max.max(held);
            }
            Arrival::Duplicate => self.count_discarded(sh, t, st),
            Arrival::InOrder => {}
        }
        for p in released.drain(..) {
            self.on_rank_receive(sh, nic, &p, ctx, st);
        }
        self.transport_at(nic).released = released;
        self.acknowledge_to(sh, nic, src, (psn, false, Some(cumulative)), t, st);
        if packet.fecn() {
            // The ACK echoes the packet's ECN mark (NSCC's signal).
            let tr = self.transport_at(nic);
            tr.control.back_mut().expect("just queued").set_ack_ecn();
        }
        self.try_inject(sh, nic, ctx, st);
    }

    fn count_discarded(&self, sh: &Shared, t: u64, st: &mut PartitionStats) {
        st.count(Self::in_measurement(sh, t), |c| &mut c.discarded_packets);
    }

    /// An ACK or NAK reaches endpoint `nic` from the responder `packet.src()`: the sends it
    /// completes end, a NAK sends again from its PSN, and the window may let more go.
    pub(super) fn transport_on_ack(
        &mut self,
        sh: &Shared,
        nic: u16,
        packet: &Packet,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let t = ctx.now();
        let (psn, nak) = packet.ack_psn();
        let peer = packet.src();
        let a = self.ends.nics[nic as usize].app;
        let tr = self.transport_at(nic);
        let Some(conn) = tr.send.get_mut(&peer) else { return };
        let (done, back) = match sh.transport.as_ref().expect("a transport is on") {
            Transport::Uec(uec) => {
                // NSCC's signals: the round trip and the phits this acknowledgement covers.
                let rtt = sh.nscc.as_ref().and_then(|_| conn.rtt_sample(psn, t));
                let done = conn.selective_ack(psn, packet.ack_cumulative(), uec.reorder_threshold);
                if let Some(n) = sh.nscc.as_ref() {
                    let (phits, in_flight) = (done.phits as f64, conn.in_flight() as f64);
                    let signal = AckSignal { phits, marked: packet.ack_ecn(), rtt, in_flight };
                    conn.nscc
                        .as_mut()
                        .expect("NSCC's connections have a window")
                        .on_ack(&n.params, signal, t);
                }
                (done, conn.resending())
            }
            Transport::Rc(_) if nak => conn.nak(psn),
            Transport::Rc(_) => (conn.acknowledge(psn), false),
        };
        if done.progress {
            conn.armed_at = t;
        }
        if back {
            tr.go_back(peer);
        }
        if !done.ended.is_empty() {
            self.ends.app_work.extend(done.ended.iter().map(|&op| (a, op, true)));
            self.run_ranks(sh, ctx, st);
        }
        if done.progress || back {
            self.feed_rank(sh, nic, t, st);
            self.try_inject(sh, nic, ctx, st);
        }
    }

    /// A packet of the rank at endpoint `nic` to `dst` left: its connection's timer runs if
    /// it did not.
    pub(super) fn transport_on_sent(
        &mut self,
        sh: &Shared,
        nic: u16,
        dst: EndpointId,
        psn: u16,
        ctx: &mut RouterCtx<'_>,
    ) {
        let timeout = sh.transport.as_ref().expect("a transport is on").timeout();
        let t = ctx.now();
        let conn = self.transport_at(nic).send.get_mut(&dst).expect("a packet sent has its connection");
        conn.stamp(psn as u32, t);
        if !conn.timer_pending {
            conn.timer_pending = true;
            conn.armed_at = t;
            ctx.schedule_self(timeout, SelfEvent::Timeout { nic, peer: dst });
        }
    }

    /// The timer of endpoint `nic`'s connection to `peer` comes due: nothing outstanding,
    /// it stops; not yet due (acknowledged since it was set, RC; no packet in flight sent
    /// a timeout ago, selective), it waits on; else the connection goes back to its
    /// oldest unacknowledged packet (RC) or sends again the packets that timed out
    /// (selective), or fails after `retries` timeouts without an acknowledgement.
    pub(super) fn transport_on_timeout(
        &mut self,
        sh: &Shared,
        nic: u16,
        peer: EndpointId,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let kind = sh.transport.as_ref().expect("a transport is on");
        let (t, timeout) = (ctx.now(), kind.timeout());
        let tr = self.transport_at(nic);
        let conn = tr.send.get_mut(&peer).expect("a timer has its connection");
        if conn.outstanding() == 0 || conn.failed {
            conn.timer_pending = false;
            return;
        }
        let due = conn.timer_due(t, timeout);
        if t < due {
            ctx.schedule_self(due - t, SelfEvent::Timeout { nic, peer });
            return;
        }
        let measured = Self::in_measurement(sh, t);
        st.count(measured, |c| &mut c.transport_timeouts);
        let (failed, lost) = conn.on_timer(t, timeout, kind.retries());
        if failed {
            conn.timer_pending = false;
            st.count(measured, |c| &mut c.failed_connections);
            return;
        }
        if let (Some(w), Some(n)) = (conn.nscc.as_mut(), sh.nscc.as_ref()) {
            // NSCC takes the packets that timed out off the window.
            w.on_timeout(&n.params, lost);
        }
        let due = conn.timer_due(t, timeout);
        ctx.schedule_self(due - t, SelfEvent::Timeout { nic, peer });
        tr.go_back(peer);
        self.feed_rank(sh, nic, t, st);
        self.try_inject(sh, nic, ctx, st);
    }
}
