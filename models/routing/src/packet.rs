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
    /// Cycle its head left the source endpoint.
    pub injected: u32,
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

impl Packet {
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
        let mask = if self.id >> 63 == 0 { 0x7fff_ffff } else { APP_SOURCE_MASK };
        ((self.id >> 32) & mask) as EndpointId
    }
}

/// The bits of an application packet's id above bit 32 that hold its source endpoint.
const APP_SOURCE_MASK: u64 = 0x00ff_ffff;

/// Networks that run applications have at most this many endpoints (2^24): an application
/// packet's id holds its source in 24 bits.
pub const MAX_APP_ENDPOINTS: usize = 1 << 24;

impl Packet {
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
    fn a_packet_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Packet>(), 32);
        let p = Packet::new(7, 9, 3, 16, 100);
        assert_eq!((p.src(), p.id & 0xffff_ffff, p.created), (7, 9, 100));
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
