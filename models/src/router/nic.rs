//! The endpoints (NICs) attached to a router: packet generation, the source queue,
//! injection into the router under credit flow control, and delivery of arrived packets.

use super::buffers::{store_in, Held, SourceQueue, NIL};
use super::cc::{NicCc, Pick};
use super::messages::{Post, SelfEvent};
use super::stats::{Delivery, PartitionStats};
use super::{RouterCtx, RouterState, Shared};
use crate::traffic::geometric_gap;
use base::rng::Rng;
use routing::packet::Packet;
use std::collections::HashMap;
use topology::{EndpointId, PortId};

/// An endpoint (NIC) attached to the router. Its queued packets live in the router's
/// slab and its credits for the router's input buffer in that buffer's `VcState`, so an
/// idle endpoint holds no memory of its own beyond this struct.
pub struct Nic {
    /// Global endpoint id.
    pub endpoint: EndpointId,
    /// Terminal port on the router.
    pub(super) port: PortId,
    /// An `Inject` event is pending for this NIC.
    pub(super) inject_scheduled: bool,
    /// The head of the source queue waits for credits.
    pub(super) blocked_on_credits: bool,
    pub(super) next_seq: u32,
    pub(super) link_busy_until: u64,
    /// Packets generated and not yet injected (unbounded: offered load stays honest past
    /// saturation).
    pub(super) source_queue: SourceQueue,
    pub(super) rng: Rng,
    /// Phits generated during the measurement period.
    pub generated_phits: u64,
    /// Phits delivered to this endpoint during the measurement period.
    pub accepted_phits: u64,
    /// When the last packet for this endpoint reached it (0: none yet).
    pub last_delivery: u64,
    /// Index of the application rank it runs among the router's (`NIL`: none).
    pub(super) app: u32,
    /// With congestion control: its flows' state and the notifications it owes (`cc.rs`).
    pub(super) cc: Option<Box<NicCc>>,
}

impl Nic {
    /// Its congestion state. Every endpoint has one when congestion control is on
    /// (`Router::new`), and only the congestion handlers, entered once control is on, ask.
    pub(super) fn cc_state(&mut self) -> &mut NicCc {
        NicCc::of(&mut self.cc)
    }
}

impl RouterState {
    /// Endpoint `nic_index` generates a packet into its source queue and draws the time of
    /// its next one; an idle endpoint tries to inject it at once.
    pub(super) fn on_generate(
        &mut self,
        sh: &Shared,
        nic_index: u16,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let t = ctx.now();
        let nic = &mut self.ends.nics[nic_index as usize];
        let dst = sh.pattern.destination(nic.endpoint, t, &mut nic.rng);
        // Drawn after the destination: without `traffic.packet_sizes` the stream is unchanged.
        let size = sh.packet_sizes.as_ref().map_or(sh.params.packet_size, |s| s.draw(&mut nic.rng));
        if let Some(w) = sh.workload.as_deref() {
            if w.background_free_only && w.rank_at(dst).is_some() {
                // `workload.background = "free"`: the congestors talk among themselves; a
                // packet drawn for a rank's endpoint is not sent (the draw is kept, so the
                // stream of destinations stays the pattern's).
                self.schedule_generation(sh, nic_index, ctx);
                return;
            }
        }
        let cap = sh.params.source_queue;
        if cap > 0 && nic.source_queue.len >= cap {
            // A full source queue refuses the packet (the destination was drawn all the
            // same, so the accepted packets keep the stream of an unbounded queue).
            st.period.refused_packets += 1;
            st.period.refused_phits += size as u64;
            if Self::in_measurement(sh, t) {
                st.measured.refused_packets += 1;
                st.measured.refused_phits += size as u64;
            }
            if sh.is_aggressor(dst) {
                st.count_aggressor_offered(size as u64, Self::in_measurement(sh, t));
            }
            self.schedule_generation(sh, nic_index, ctx);
            return;
        }
        let packet = Packet::new(nic.endpoint, nic.next_seq, dst, size, t);
        nic.next_seq = nic.next_seq.wrapping_add(1);
        let was_idle = nic.source_queue.is_empty();
        let slot =
            store_in(&mut self.slab, &mut self.free_slots, Held { packet, ready: 0, next: NIL, tail: 0 });
        nic.source_queue.push_back(slot, &mut self.slab);
        st.generated_total += 1;
        st.period.generated_packets += 1;
        st.period.generated_phits += size as u64;
        if Self::in_measurement(sh, t) {
            nic.generated_phits += size as u64;
            st.measured.generated_packets += 1;
            st.measured.generated_phits += size as u64;
        }
        if sh.is_aggressor(dst) {
            st.count_aggressor_offered(size as u64, Self::in_measurement(sh, t));
        }
        self.schedule_generation(sh, nic_index, ctx);
        if was_idle {
            self.try_inject(sh, nic_index, ctx, st);
        }
    }

    /// Draws when endpoint `nic_index` generates its next packet.
    #[inline]
    fn schedule_generation(&mut self, sh: &Shared, nic_index: u16, ctx: &mut RouterCtx<'_>) {
        let t = ctx.now();
        let nic = &mut self.ends.nics[nic_index as usize];
        if sh.packets_per_endpoint > 0 && nic.next_seq >= sh.packets_per_endpoint {
            // Completion-time mode: this endpoint generated its whole quota.
            return;
        }
        if let Some(gap) = geometric_gap(&mut nic.rng, sh.generation_probability) {
            if t + 1 + gap < sh.end {
                ctx.schedule_self(1 + gap, SelfEvent::Generate { nic: nic_index });
            }
        }
    }

    /// A pending `Inject` event of endpoint `nic_index` comes due.
    #[inline]
    pub(super) fn on_inject(
        &mut self,
        sh: &Shared,
        nic_index: u16,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        self.ends.nics[nic_index as usize].inject_scheduled = false;
        self.try_inject(sh, nic_index, ctx, st)
    }

    /// Endpoint `nic_index` sends the head of its source queue to the router if its link
    /// is free and it has credits for the whole packet; otherwise it schedules an `Inject`
    /// event for when that may change. With congestion control the packet is the one
    /// `cc_pick` chooses: a pending notification first, then the first packet whose flow
    /// may send.
    pub(super) fn try_inject(
        &mut self,
        sh: &Shared,
        nic_index: u16,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let t = ctx.now();
        let control = sh.transport.is_some() && self.transport_control_waiting(nic_index);
        let nic = &mut self.ends.nics[nic_index as usize];
        if nic.source_queue.is_empty() && !nic.cc.as_ref().is_some_and(|c| c.has_waiting()) && !control {
            return;
        }
        if nic.link_busy_until > t {
            // Come back when the link is free (once).
            if !nic.inject_scheduled {
                nic.inject_scheduled = true;
                ctx.schedule_self(nic.link_busy_until - t, SelfEvent::Inject { nic: nic_index });
            }
            return;
        }
        let pick = if control {
            // A transport's acknowledgements go before data (as congestion notifications).
            Pick::Control
        } else if let Some(cc) = &sh.cc {
            match self.cc_pick(cc, sh.params.packet_size, nic_index, t) {
                Ok(pick) => pick,
                Err(wake) => {
                    self.cc_wake_at(nic_index, wake, ctx);
                    return;
                }
            }
        } else {
            Pick::Head
        };
        let size = self.picked_size(nic_index, pick);
        let port = self.ends.nics[nic_index as usize].port;
        // Credits come back lazily: apply those whose time has come.
        while let Some(&(at, n, v, phits)) = self.ends.nic_credit_returns.front() {
            if at > t {
                break;
            }
            let p = self.ends.nics[n as usize].port;
            *self.sw.nic_credits(p, v as usize, self.vcs) += phits;
            self.ends.nic_credit_returns.pop_front();
        }
        let vc = self.injection_vc(sh, port, size);
        let nic = &mut self.ends.nics[nic_index as usize];
        let credits = self.sw.nic_credits(port, vc, self.vcs);
        if *credits < size {
            nic.blocked_on_credits = true;
            let next_return = self.ends.nic_credit_returns.iter().find(|r| r.1 == nic_index);
            if let Some(&(at, _, _, _)) = next_return {
                if !nic.inject_scheduled {
                    nic.inject_scheduled = true;
                    ctx.schedule_self(at - t, SelfEvent::Inject { nic: nic_index });
                }
            }
            return;
        }
        nic.blocked_on_credits = false;
        *credits -= size;
        let mut packet = self.take_picked(nic_index, pick);
        let serialization = self.serialization(sh, port, size);
        let nic = &mut self.ends.nics[nic_index as usize];
        let nic = if nic.app == NIL {
            nic
        } else {
            // A rank's next packets come from its outbox (synthetic endpoints skip the call).
            self.feed_rank(sh, nic_index, t, st);
            &mut self.ends.nics[nic_index as usize]
        };
        nic.link_busy_until = t + serialization;
        packet.set_injected(t);
        packet.vc = vc as u8;
        let src_switch = self.id;
        let (dst_switch, _) = sh.endpoints.locate(packet.dst);
        sh.routes.routing.init(src_switch, dst_switch, &mut packet.route, &mut self.rng);
        let latency = self.sw.link_latency(port);
        st.departures += 1;
        let data = !matches!(pick, Pick::Cnp | Pick::Control);
        if data {
            st.period.injected_packets += 1;
            st.period.injected_phits += size as u64;
            if Self::in_measurement(sh, t) {
                st.measured.injected_packets += 1;
                st.measured.injected_phits += size as u64;
            }
        }
        if let (Some(state), Some(cc)) = (nic.cc.as_mut().filter(|_| data), &sh.cc) {
            state.sent(cc, packet.dst, t, size);
        }
        // The head reaches the router's input after the terminal link's latency. Nothing can
        // overtake it on that link, so it is queued at once with its ready time instead of
        // travelling as an event; the allocator ignores it until then.
        let more = !nic.source_queue.is_empty()
            || nic.cc.as_ref().is_some_and(|c| c.has_waiting())
            || (sh.transport.is_some() && self.transport_control_waiting(nic_index));
        let nic = &mut self.ends.nics[nic_index as usize];
        if more && !nic.inject_scheduled {
            nic.inject_scheduled = true;
            ctx.schedule_self(serialization, SelfEvent::Inject { nic: nic_index });
        }
        let (dst, psn) = (packet.dst, packet.app_seq());
        self.on_head(sh, port, packet, t + latency, ctx, st);
        if data && self.ends.nics[nic_index as usize].app != NIL {
            if sh.transport.is_some() {
                self.transport_on_sent(sh, nic_index, dst, psn, ctx);
            }
            self.on_rank_injected(sh, nic_index, ctx, st);
        }
    }

    /// The VC to inject on at terminal port `port`: 0, or with `injection_vc = "any"` the
    /// lowest allowed VC with credits for a packet of `size` phits (VC 0 if none has).
    #[inline]
    fn injection_vc(&self, sh: &Shared, port: PortId, size: u16) -> usize {
        self.sw.vc_with_credits(port, self.vcs, sh.injection_vcs as usize, size)
    }

    /// Accounts the queued deliveries whose time is before `now`.
    #[inline]
    pub(super) fn flush_deliveries(&mut self, sh: &Shared, now: u64, st: &mut PartitionStats) {
        while let Some(&(at, nic, packet)) = self.ends.deliveries.front() {
            if at >= now {
                break;
            }
            self.ends.deliveries.pop_front();
            self.on_deliver(sh, nic, packet, at, st);
        }
    }

    /// The tail of `packet` reaches endpoint `nic_index` at `t`: statistics.
    pub(super) fn on_deliver(
        &mut self,
        sh: &Shared,
        nic_index: u16,
        packet: Packet,
        t: u64,
        s: &mut PartitionStats,
    ) {
        let nic = &mut self.ends.nics[nic_index as usize];
        let size = packet.size as u64;
        let (created, injected) = (packet.created as u64, packet.injected());
        let latency = t - created;
        let network_latency = t - injected;
        s.arrivals += 1;
        s.delivered_total += 1;
        let period = &mut s.period;
        period.delivered_packets += 1;
        period.delivered_phits += size;
        period.latency_sum += latency;
        period.network_latency_sum += network_latency;
        period.hops_sum += packet.hops as u64;
        nic.last_delivery = t;
        if sh.packets_per_endpoint > 0 {
            let src = packet.src() as usize;
            if s.source_finish.len() <= src {
                s.source_finish.resize(sh.endpoints.len(), 0);
            }
            s.source_finish[src] = s.source_finish[src].max(t);
        }
        if Self::in_measurement(sh, t) {
            nic.accepted_phits += size;
            s.measured.delivered_phits += size;
            s.measured.delivered_packets += 1;
            if sh.reordering {
                note_order(&mut self.ends.latest_from[nic_index as usize], &packet, s);
            }
        }
        if Self::in_measurement(sh, created) {
            s.measured.latency_sum += latency;
            s.measured.network_latency_sum += network_latency;
            s.measured.hops_sum += packet.hops as u64;
            s.latency.record(latency);
            s.network_latency.record(network_latency);
            s.hops.record(packet.hops as u64);
        }
        if sh.is_aggressor(packet.dst) {
            s.count_aggressor_delivery(
                size,
                latency,
                Self::in_measurement(sh, t),
                Self::in_measurement(sh, created),
            );
        }
        if sh.record_deliveries {
            s.deliveries.push(Delivery {
                id: packet.id,
                src: packet.src(),
                dst: packet.dst,
                received_by: nic.endpoint,
                created,
                injected,
                delivered: t,
                hops: packet.hops,
            });
        }
    }
}

/// A packet delivered in the measurement window to an endpoint whose record of the latest
/// injection time per source is `latest_from`, for `simulation.reordering`: reordered if a
/// packet of its flow that left the source later arrived before it (RFC 4737), late by the
/// difference of their injection times. A source injects its packets one after another,
/// so injection times order a flow.
fn note_order(latest_from: &mut HashMap<EndpointId, u32>, packet: &Packet, s: &mut PartitionStats) {
    let injected = packet.injected() as u32;
    let latest = latest_from.entry(packet.src()).or_insert(0);
    if injected < *latest {
        let late = (*latest - injected) as u64;
        s.period.reordered_packets += 1;
        s.period.reorder_late_sum += late;
        s.measured.reordered_packets += 1;
        s.measured.reorder_late_sum += late;
        s.reorder_late_max = s.reorder_late_max.max(late);
    } else {
        *latest = injected;
    }
}
