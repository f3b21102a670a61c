//! What a router's events carry: the message type the engine moves and the priorities
//! of the events a router schedules for itself.

use crate::packet::Packet;
use crate::topology::PortId;
use serde::{Deserialize, Serialize};

/// Messages and self events of a router.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Msg {
    /// A packet head arrives at input `port` (from a link or from an own endpoint).
    Head {
        /// Receiving input port.
        port: PortId,
        /// The packet.
        packet: Packet,
    },
    /// Credits arrive at output `port` for downstream VC `vc`.
    Credit {
        /// Output port the credits are for.
        port: PortId,
        /// Downstream VC.
        vc: u8,
        /// Phits freed.
        phits: u16,
    },
    /// The link of output `port` is free again (the last tail has left). Scheduled only
    /// when something waits for it: a queued packet, or the allocator waiting for room.
    LinkFree {
        /// Output port.
        port: PortId,
    },
    /// The tail of `packet` reaches endpoint `nic`.
    Deliver {
        /// Local endpoint index.
        nic: u16,
        /// The packet.
        packet: Packet,
    },
    /// Endpoint `nic` generates a packet.
    Generate {
        /// Local endpoint index.
        nic: u16,
    },
    /// Endpoint `nic` tries to inject its next packet.
    Inject {
        /// Local endpoint index.
        nic: u16,
    },
    /// Run the switch allocator.
    Allocate,
}

// Self-event priorities within a cycle (link arrivals always come first): link frees,
// deliveries, generation, injection, then allocation, which sees everything that arrived.
pub(super) const P_FREE: u16 = 1;
pub(super) const P_DELIVER: u16 = 2;
pub(super) const P_GENERATE: u16 = 3;
pub(super) const P_INJECT: u16 = 4;
pub(super) const P_ALLOCATE: u16 = 5;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_one_cache_line() {
        // Every packet-hop moves one event through the engine's queues: a 32-byte packet,
        // the variant's tag and port, and the engine's time, LP and tie-breaker.
        assert_eq!(std::mem::size_of::<Msg>(), 40);
        assert_eq!(std::mem::size_of::<engine::Event<Msg>>(), 64);
    }
}
