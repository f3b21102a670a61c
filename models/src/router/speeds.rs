//! Links of different speeds (`topology.link_speeds`): how long a packet holds each port's
//! link and crossbar port, when its tail has arrived, and how large each port's buffers
//! are.
//!
//! A link of speed `phits / cycles` holds a packet of `S` phits `ceil(S * cycles / phits)`
//! cycles (its serialization), and the tail arrives that many cycles, less one, after the
//! head. A switch forwards cut-through: the head may leave as soon as it is routed, but the
//! tail cannot leave before it has arrived. So a packet from a slower input onto a faster
//! output waits until as little of it is missing as the output will take to send; the
//! output link is held for it meanwhile (`try_transmit`). Through a path of several speeds
//! a lone packet thus arrives `sum(latencies) + switches * router_delay + serialization
//! at the slowest link - 1` cycles after its head left: each segment at its own rate,
//! cut-through at the slowest.
//!
//! The crossbar moves a packet at `speedup` times the faster of its two ports' speeds.
//! A port's input and output buffers hold as many cycles of its link's traffic as the
//! configured sizes hold at one phit a cycle (more phits on faster links).
//!
//! When every link sends one phit a cycle, [`Shared::speeds`] is `None` and the routers
//! take none of these paths: the arithmetic is the packet's size, as before speeds.

use super::buffers::WAKE_SCHEDULED;
use super::messages::{Post, SelfEvent};
use super::stats::PartitionStats;
use super::{RouterCtx, RouterParams, RouterState, Shared};
use topology::{LinkSpeed, PortId};

/// The speeds of a network's link classes and what follows from them for a port, when
/// they are not all one phit a cycle.
#[derive(Clone, Debug)]
pub struct LinkSpeeds {
    classes: Vec<ClassSpeed>,
}

#[derive(Clone, Copy, Debug)]
struct ClassSpeed {
    speed: LinkSpeed,
    /// Phits of an input buffer (per VC) of a port of this class.
    input_buffer: u32,
    /// Phits of an output buffer (per VC) of a port of this class.
    output_buffer: u32,
}

impl LinkSpeeds {
    /// The speeds of link classes `speeds` (by class index) with the router's buffers;
    /// `None` if every class sends one phit a cycle. Scaled buffers are checked to fit
    /// 16 bits when the network is built (`Config::build_network`).
    pub fn new(speeds: &[LinkSpeed], params: &RouterParams) -> Option<Self> {
        if speeds.iter().all(|&s| s == LinkSpeed::ONE) {
            return None;
        }
        let classes = speeds
            .iter()
            .map(|&speed| ClassSpeed {
                speed,
                input_buffer: speed.scaled_buffer(params.input_buffer).min(u16::MAX as u64) as u32,
                output_buffer: speed.scaled_buffer(params.output_buffer).min(u16::MAX as u64) as u32,
            })
            .collect();
        Some(LinkSpeeds { classes })
    }

    /// Input buffer phits (per VC) of a port of link class `class`.
    #[inline]
    pub(super) fn input_buffer(&self, class: u8) -> u32 {
        self.classes[class as usize].input_buffer
    }

    /// Output buffer phits (per VC) of a port of link class `class`.
    #[inline]
    pub(super) fn output_buffer(&self, class: u8) -> u32 {
        self.classes[class as usize].output_buffer
    }

    /// Cycles a packet of `size` phits holds a link of class `class`.
    #[inline]
    pub(super) fn serialization(&self, class: u8, size: u16) -> u64 {
        self.classes[class as usize].speed.serialization(size)
    }
}

impl RouterState {
    /// Cycles a packet of `size` phits holds port `port`'s link.
    #[inline(always)]
    pub(super) fn serialization(&self, sh: &Shared, port: PortId, size: u16) -> u64 {
        match &sh.speeds {
            None => size as u64,
            Some(s) => self.serialization_at_speed(s, sh, port, size),
        }
    }

    /// Phits of each input buffer (per VC) of port `port`.
    #[inline(always)]
    pub(super) fn input_capacity(&self, sh: &Shared, port: PortId) -> u32 {
        sh.input_capacity(self.local, port)
    }

    /// Phits of each output buffer (per VC) of port `port`.
    #[inline(always)]
    pub(super) fn output_capacity(&self, sh: &Shared, port: PortId) -> u32 {
        sh.output_capacity(self.local, port)
    }

    /// Cycles the crossbar takes to move a packet of `size` phits from input `i` to output
    /// `o`: `speedup` times the faster port's speed.
    #[inline(always)]
    pub(super) fn crossbar_transfer(&self, sh: &Shared, i: PortId, o: PortId, size: u16) -> u64 {
        let speedup = sh.params.speedup as u64;
        match &sh.speeds {
            None => (size as u64).div_ceil(speedup),
            // ceil(ceil(x) / n) = ceil(x / n) for a whole n.
            Some(s) => {
                let fastest = self
                    .serialization_at_speed(s, sh, i, size)
                    .min(self.serialization_at_speed(s, sh, o, size));
                fastest.div_ceil(speedup)
            }
        }
    }

    /// [`serialization`](Self::serialization) with links of several speeds: out of line,
    /// so that networks of one speed keep their straight path.
    #[cold]
    #[inline(never)]
    fn serialization_at_speed(&self, s: &LinkSpeeds, sh: &Shared, port: PortId, size: u16) -> u64 {
        s.serialization(self.class(sh, port), size)
    }

    /// The packet at the head of output VC `channel` (`o * vcs + vc`) was chosen for `o`'s
    /// free link: if it came from a slower link and would leave before its tail can follow,
    /// holds the link for it until it can and returns true (a `LinkFree` event then comes
    /// back). Its tail arrived `tail` cycles after its head; it leaves the link
    /// `serialization - 1` cycles after its head does.
    #[cold]
    #[inline(never)]
    pub(super) fn hold_for_tail(
        &mut self,
        sh: &Shared,
        o: PortId,
        channel: usize,
        ctx: &mut RouterCtx<'_>,
    ) -> bool {
        let t = ctx.now();
        let slot = self.sw.channels[channel].output.front().expect("chosen VC has a packet");
        let held = &self.slab[slot as usize];
        let out = self.serialization(sh, o, held.packet.size);
        let start = (held.ready + held.tail as u64 + 1).saturating_sub(out);
        if start <= t {
            return false;
        }
        let port = &mut self.sw.ports[o as usize];
        port.link_busy_until = start as u32;
        if port.flags & WAKE_SCHEDULED == 0 {
            port.flags |= WAKE_SCHEDULED;
            ctx.schedule_self(start - t, SelfEvent::LinkFree { port: o });
        }
        true
    }

    /// Port `o`'s count of phits sent is about to pass 32 bits (a link faster than one phit
    /// a cycle): moves it to the partition's 64-bit carries.
    #[cold]
    #[inline(never)]
    pub(super) fn carry_phits(&mut self, o: PortId, st: &mut PartitionStats) {
        let phits = std::mem::take(&mut self.sw.ports[o as usize].phits) as u64;
        st.phits_carry.push((self.id, o, phits));
    }

    /// The link class of port `port` (read only with links of several speeds: the rank's
    /// port list is one more cache line to touch).
    #[inline]
    fn class(&self, sh: &Shared, port: PortId) -> u8 {
        sh.class(self.local, port)
    }
}

impl Shared {
    /// The link class of port `port` of the rank's `local`-th switch.
    #[inline]
    fn class(&self, local: u32, port: PortId) -> u8 {
        self.ports.of(local as usize)[port as usize].class
    }

    /// Phits of each input buffer (per VC) of port `port` of the rank's `local`-th switch.
    #[inline(always)]
    pub(super) fn input_capacity(&self, local: u32, port: PortId) -> u32 {
        match &self.speeds {
            None => self.params.input_buffer,
            Some(s) => s.input_buffer(self.class(local, port)),
        }
    }

    /// Phits of each output buffer (per VC) of port `port` of the rank's `local`-th switch.
    #[inline(always)]
    pub(super) fn output_capacity(&self, local: u32, port: PortId) -> u32 {
        match &self.speeds {
            None => self.params.output_buffer,
            Some(s) => s.output_buffer(self.class(local, port)),
        }
    }

    /// The packet's flow hash at switch `at`, read by the ECMP selection only (0
    /// otherwise). An application packet takes flow `message sequence mod ecmp_flows` of
    /// its pair: messages go round robin over the pair's flows, as NCCL posts a
    /// connection's messages over its queue pairs.
    #[inline]
    pub(super) fn flow(&self, packet: &routing::packet::Packet, at: topology::SwitchId) -> u64 {
        match self.selection {
            routing::Selection::Ecmp => {
                let index = if self.ecmp_flows > 1 && packet.is_app() {
                    u32::from(packet.app_seq()) % self.ecmp_flows
                } else {
                    0
                };
                routing::ecmp_flow_hash(packet.src(), packet.dst, index, at, self.seed)
            }
            _ => 0,
        }
    }
}
