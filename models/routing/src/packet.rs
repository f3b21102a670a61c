//! Packets, the unit the router model moves.
//!
//! A packet is 32 bytes: it is copied into every event that carries it and into the slab
//! of every router that buffers it, so its size is part of the memory traffic of every
//! packet-hop. Times are stored in 32 bits (`simulation.cycles` is checked to fit).

use serde::{Deserialize, Serialize};
use topology::EndpointId;

/// Per-packet routing state: what multi-phase routings remember between hops. Packed to
/// 6 bytes so that a [`Packet`] fits 32; read and assign its fields by value (no
/// references to them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(C, packed(2))]
pub struct RouteState {
    /// Routing phase (e.g. Valiant: 0 towards the intermediate, 1 towards the destination;
    /// Up*/Down*: 1 once a down link was taken; SPDA: the spanning tree, which is the VC;
    /// turn-restricted routings (`turns.rs`): the layer, which is the VC).
    pub phase: u8,
    /// Global (inter-group) hops taken so far, for Dragonfly VC classes.
    pub global_hops: u8,
    /// Intermediate switch or group of a non-minimal route (`u32::MAX`: none); ALLPATH:
    /// the switch-to-switch hops the packet may still take; turn-restricted routings
    /// (`turns.rs`: smart, lturn, sr, dl): the channel the packet arrived by.
    pub intermediate: u32,
}

/// A packet in flight. Times are in cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packet {
    /// Unique id: source endpoint in the high 32 bits, its packet counter in the low 32.
    pub id: u64,
    /// Destination endpoint.
    pub dst: EndpointId,
    /// Cycle the packet was generated (entered the source queue).
    pub created: u32,
    /// Cycle its head left the source endpoint in the low 31 bits (runs end before 2^31
    /// cycles) and InfiniBand's FECN mark in bit 31: read them with [`Packet::injected`]
    /// and [`Packet::fecn`].
    pub(crate) injected: u32,
    /// Length in phits.
    pub size: u16,
    /// Switch-to-switch hops taken so far.
    pub hops: u16,
    /// Virtual channel the packet occupies at the input it is travelling to or sits in.
    pub vc: u8,
    /// Application packets: the low byte of their message's sequence number from its
    /// sender to its receiver (the rest is in the id; see [`Packet::src`]). It takes the
    /// byte that would otherwise be padding.
    pub seq: u8,
    /// Routing state.
    pub route: RouteState,
}

/// The packet counter in a congestion notification packet's id: no data packet's, since a
/// source generates fewer than 2^31 packets in a run of fewer than 2^31 cycles (and
/// application packets have bit 63 of the id set).
const CNP_COUNTER: u32 = u32::MAX;

/// The packet counter of a transport acknowledgement ([`Packet::transport_ack`]): bit 31
/// (no data packet's, see [`CNP_COUNTER`]), bit 16 for a NAK, the PSN in the low 15 bits.
const ACK_COUNTER: u32 = 1 << 31;

/// [`ACK_COUNTER`]'s NAK bit.
const NAK_BIT: u32 = 1 << 16;

/// The bits an acknowledgement's counter varies in.
const ACK_VARIES: u32 = NAK_BIT | 0x7fff;

/// [`Packet::injected`]'s bit that holds the FECN mark.
const FECN_BIT: u32 = 1 << 31;

impl Packet {
    /// Cycle its head left the source endpoint.
    #[inline]
    pub fn injected(&self) -> u64 {
        (self.injected & !FECN_BIT) as u64
    }

    /// Records that its head left the source endpoint at `t` (clearing any mark).
    #[inline]
    pub fn set_injected(&mut self, t: u64) {
        debug_assert!(t < FECN_BIT as u64, "time {t} does not fit a packet's 31-bit injection time");
        self.injected = t as u32;
    }

    /// Whether a switch marked it on the way (InfiniBand's forward explicit congestion
    /// notification, `congestion.control`).
    #[inline]
    pub fn fecn(&self) -> bool {
        self.injected & FECN_BIT != 0
    }

    /// Marks it (FECN).
    #[inline]
    pub fn set_fecn(&mut self) {
        self.injected |= FECN_BIT;
    }

    /// A congestion notification packet (InfiniBand's CNP, carrying the BECN) of `size`
    /// phits from endpoint `src` back to the source `dst` of a marked packet, at `t`.
    pub fn cnp(src: EndpointId, dst: EndpointId, size: u16, t: u64) -> Self {
        Packet::new(src, CNP_COUNTER, dst, size, t)
    }

    /// Whether this is a congestion notification packet ([`Packet::cnp`]).
    #[inline]
    pub fn is_cnp(&self) -> bool {
        self.id >> 63 == 0 && self.id as u32 == CNP_COUNTER
    }

    /// A transport acknowledgement of `size` phits from endpoint `src` (a responder) to
    /// `dst` (the requester), at `t`: an ACK of everything through `psn` (15 bits), or a
    /// NAK asking for everything from `psn` on.
    pub fn transport_ack(src: EndpointId, dst: EndpointId, psn: u32, nak: bool, size: u16, t: u64) -> Self {
        let counter = ACK_COUNTER | if nak { NAK_BIT } else { 0 } | (psn & 0x7fff);
        Packet::new(src, counter, dst, size, t)
    }

    /// Whether this is a transport acknowledgement ([`Packet::transport_ack`]).
    #[inline]
    pub fn is_transport_ack(&self) -> bool {
        self.id >> 63 == 0 && self.id as u32 & !ACK_VARIES == ACK_COUNTER
    }

    /// A transport acknowledgement's PSN and whether it is a NAK.
    #[inline]
    pub fn ack_psn(&self) -> (u32, bool) {
        (self.id as u32 & 0x7fff, self.id as u32 & NAK_BIT != 0)
    }

    /// Sets a selective acknowledgement's cumulative PSN (the last taken in order, 15
    /// bits). It travels in the creation time, which no acknowledgement needs.
    #[inline]
    pub fn set_ack_cumulative(&mut self, psn: u32) {
        self.created = psn & 0x7fff;
    }

    /// A selective acknowledgement's cumulative PSN ([`Packet::set_ack_cumulative`]).
    #[inline]
    pub fn ack_cumulative(&self) -> u32 {
        self.created & 0x7fff
    }

    /// Marks a selective acknowledgement as echoing the ECN mark of the packet it
    /// acknowledges (NSCC's signal), in the creation time's bit 15, after its cumulative
    /// PSN was set.
    #[inline]
    pub fn set_ack_ecn(&mut self) {
        self.created |= 1 << 15;
    }

    /// Whether a selective acknowledgement echoes an ECN mark ([`Packet::set_ack_ecn`]).
    #[inline]
    pub fn ack_ecn(&self) -> bool {
        self.created & 1 << 15 != 0
    }

    /// A new packet: the `seq`-th of endpoint `src`, to `dst`, generated at `created`.
    pub fn new(src: EndpointId, seq: u32, dst: EndpointId, size: u16, created: u64) -> Self {
        Packet {
            id: (src as u64) << 32 | seq as u64,
            dst,
            created: time32(created),
            injected: 0,
            size,
            hops: 0,
            vc: 0,
            seq: 0,
            route: RouteState::default(),
        }
    }

    /// Source endpoint.
    #[inline]
    pub fn src(&self) -> EndpointId {
        // Bit 63 marks an application packet (`workload::WORKLOAD_PACKET`), whose id keeps
        // 7 bits of its message's sequence number above a source of 24 bits
        // ([`MAX_APP_ENDPOINTS`]); other packets have 31 bits of source.
        let mask = if self.is_app() { APP_SOURCE_MASK } else { 0x7fff_ffff };
        ((self.id >> 32) & mask) as EndpointId
    }
}

/// The bits of an application packet's id above bit 32 that hold its source endpoint.
const APP_SOURCE_MASK: u64 = 0x00ff_ffff;

/// Networks that run applications have at most this many endpoints (2^24): an application
/// packet's id holds its source in 24 bits.
pub const MAX_APP_ENDPOINTS: usize = 1 << 24;

impl Packet {
    /// Whether it is an application's packet (bit 63 of its id).
    #[inline]
    pub fn is_app(&self) -> bool {
        self.id >> 63 == 1
    }

    /// An application packet's sequence number (15 bits): bits 56 to 62 of its id and
    /// [`Packet::seq`].
    #[inline]
    pub fn app_seq(&self) -> u16 {
        (((self.id >> 56) & 0x7f) as u16) << 8 | self.seq as u16
    }

    /// Sets an application packet's sequence number (the low 15 bits of `seq`).
    #[inline]
    pub fn set_app_seq(&mut self, seq: u16) {
        self.id = (self.id & !(0x7f << 56)) | (u64::from(seq >> 8) & 0x7f) << 56;
        self.seq = seq as u8;
    }
}

/// A time stored in a packet; runs are checked to end before 2^32 cycles.
#[inline]
pub fn time32(t: u64) -> u32 {
    debug_assert!(t <= u32::MAX as u64, "time {t} does not fit a packet's 32-bit times");
    t as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acknowledgements_are_neither_data_nor_notifications() {
        let ack = Packet::transport_ack(7, 9, 0x7fff, true, 2, 5);
        assert!(ack.is_transport_ack() && !ack.is_cnp() && !ack.is_app());
        assert_eq!((ack.src(), ack.dst, ack.ack_psn()), (7, 9, (0x7fff, true)));
        assert_eq!(Packet::transport_ack(7, 9, 3, false, 2, 5).ack_psn(), (3, false));
        assert!(!Packet::cnp(7, 9, 1, 0).is_transport_ack());
        assert!(!Packet::new(7, (1 << 31) - 1, 9, 16, 0).is_transport_ack());
    }

    #[test]
    fn a_packet_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Packet>(), 32);
        let p = Packet::new(7, 9, 3, 16, 100);
        assert_eq!((p.src(), p.id & 0xffff_ffff, p.created), (7, 9, 100));
        // The FECN mark shares a word with the injection time and leaves it alone.
        let mut m = p;
        m.set_injected((1 << 31) - 1);
        assert!(!m.fecn());
        m.set_fecn();
        assert_eq!((m.fecn(), m.injected()), (true, (1 << 31) - 1));
        m.set_injected(5);
        assert_eq!((m.fecn(), m.injected()), (false, 5));
        // An application packet keeps its source and a 15-bit sequence number.
        let mut a = Packet::new((1 << 24) - 1, 9, 3, 16, 100);
        a.id |= 1 << 63;
        a.set_app_seq(0x7abc);
        assert_eq!((a.src(), a.app_seq(), a.id & 0xffff_ffff), ((1 << 24) - 1, 0x7abc, 9));
        a.set_app_seq(0x0102);
        assert_eq!((a.src(), a.app_seq()), ((1 << 24) - 1, 0x0102));
        assert_eq!(Packet::new((1 << 31) - 1, 0, 0, 1, 0).src(), (1 << 31) - 1);
    }
}
