//! The router's buffers: the per-port and per-VC state records and the packet slab.
//!
//! Everything about one port is one 64-byte [`PortState`] and everything about one VC of
//! a port one [`VcState`], so that an event touches few cache lines. Buffered packets live
//! in the router's slab ([`Held`] slots) and every buffer (input, output, source queue) is
//! a [`Queue`] of slots linked through it. Also here: taking and freeing slab slots and the
//! lazy release of output buffer room ([`RouterState::settle`]).

use super::RouterState;
use engine::LinkRoute;
use routing::packet::Packet;
use routing::Candidate;
use topology::PortId;

/// "No slot": the end of a slab list.
pub(super) const NIL: u32 = u32::MAX;
/// `PortState::nic` of a network port.
pub(super) const NETWORK: u16 = u16::MAX;
/// `PortState::nic` of a port left unconnected.
pub(super) const UNCONNECTED: u16 = u16::MAX - 1;

/// A packet held by the router, in its slab slot.
#[derive(Clone, Copy)]
pub(super) struct Held {
    pub(super) packet: Packet,
    /// Cycle from which it may be allocated (head arrival + router delay).
    pub(super) ready: u64,
    /// Next slot of the buffer this slot is in.
    pub(super) next: u32,
    /// Cycles its tail arrives after its head: its input link's serialization less one
    /// (read only when links have several speeds, `speeds.rs`).
    pub(super) tail: u32,
}

/// A FIFO of slab slots, linked through [`Held::next`]; fields are read by value. A VC
/// buffer's queue counts in `u16` (it holds at most 65,535 phits, so fewer packets) and
/// packs to 10 bytes; an endpoint's source queue, unbounded past saturation, counts in
/// `u32` ([`SourceQueue`]).
#[derive(Clone, Copy)]
#[repr(C, packed(2))]
pub(super) struct Queue<L: QueueLen = u16> {
    head: u32,
    tail: u32,
    pub(super) len: L,
}

/// An endpoint's source queue: past saturation it grows without bound, beyond what a
/// `u16` counts.
pub(super) type SourceQueue = Queue<u32>;

/// The integer a [`Queue`] counts its packets in.
pub(super) trait QueueLen: Copy + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> {
    const ZERO: Self;
    const ONE: Self;
}

impl QueueLen for u16 {
    const ZERO: Self = 0;
    const ONE: Self = 1;
}

impl QueueLen for u32 {
    const ZERO: Self = 0;
    const ONE: Self = 1;
}

impl<L: QueueLen> Queue<L> {
    pub(super) const EMPTY: Self = Queue { head: NIL, tail: NIL, len: L::ZERO };

    #[inline]
    pub(super) fn front(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.head == NIL
    }

    #[inline]
    pub(super) fn push_back(&mut self, slot: u32, slab: &mut [Held]) {
        slab[slot as usize].next = NIL;
        if self.tail == NIL {
            self.head = slot;
        } else {
            slab[self.tail as usize].next = slot;
        }
        self.tail = slot;
        // By value: the field of a packed struct cannot be borrowed.
        self.len = self.len + L::ONE;
    }

    #[inline]
    pub(super) fn pop_front(&mut self, slab: &[Held]) -> Option<u32> {
        let slot = self.front()?;
        self.head = slab[slot as usize].next;
        if self.head == NIL {
            self.tail = NIL;
        }
        self.len = self.len - L::ONE;
        Some(slot)
    }
}

/// One port: the output side (link, output crossbar port, VC and grant pointers) and the
/// input side (input crossbar port, VC pointer), in one cache line.
#[derive(Clone, Copy)]
#[repr(align(64))]
pub(super) struct PortState {
    /// The output link is busy until this cycle (the last packet's tail leaves then).
    /// Times a router keeps fit 32 bits: runs end before 2^31 cycles.
    pub(super) link_busy_until: u32,
    /// The output crossbar port is busy until this cycle.
    pub(super) xbar_busy_until: u32,
    /// The input crossbar port is busy until this cycle.
    pub(super) in_xbar_busy_until: u32,
    /// One bit per VC whose input buffer holds packets.
    pub(super) in_occupied: u64,
    /// Occupancy of the output over all its VCs, as the adaptive selection counts it:
    /// output buffer phits reserved plus downstream credits in use (pending releases not
    /// yet subtracted; see `Load::port_occupancy`). With `credit_check = "crossbar"` a
    /// network port's output-buffered packets already hold their credits, so there it is
    /// the downstream credits in use alone.
    pub(super) occupancy: u32,
    /// Where the link delivers (network ports), kept here so that sending touches no
    /// other memory, and the link's latency (every port).
    pub(super) route: LinkRoute,
    /// Output VCs whose output buffer may hold packets: bit `v` for VC `v` < 31, exact;
    /// bit 31 for all the others, set while any might. The link arbiter then reads only
    /// the VC records that have something to send.
    pub(super) out_queued: u32,
    /// Phits sent during the measurement period (one per cycle at most at one speed: fits
    /// 32 bits; faster links carry the excess to `PartitionStats::phits_carry`).
    pub(super) phits: u32,
    /// Port at the far end of the link.
    pub(super) peer_port: PortId,
    /// Output arbitration: the input with the highest priority.
    pub(super) grant_rr: u16,
    /// What is behind the port: the local index of an endpoint, `NETWORK` or
    /// `UNCONNECTED`.
    pub(super) nic: u16,
    /// The first input VC (`port * vcs + vc`) whose routed head waits for this output;
    /// the others follow through [`VcState::next_requester`].
    pub(super) first_requester: u32,
    /// Output buffer room held by the packet on the link, released when its tail leaves
    /// at `link_busy_until`. Only one packet is on a link at a time, so one pending
    /// release per port suffices; it is applied lazily, without an event, by whoever
    /// next looks at the buffer (see `settle`).
    pub(super) pending_phits: u16,
    /// VC of the pending release.
    pub(super) pending_vc: u8,
    /// Link arbitration: the output VC with the highest priority.
    pub(super) vc_rr: u8,
    /// Input arbitration: the input VC with the highest priority.
    pub(super) in_vc_rr: u8,
    /// [`WAKE_SCHEDULED`] and [`STALLED`].
    pub(super) flags: u8,
}

/// [`PortState::flags`]: a `LinkFree` event is scheduled.
pub(super) const WAKE_SCHEDULED: u8 = 1;
/// [`PortState::flags`]: the link is free and packets wait in the output buffer, none with
/// credits for all of it: stalled since `RouterState::stalls[port].since`.
pub(super) const STALLED: u8 = 2;

/// The bit of output VC `v` in [`PortState::out_queued`].
#[inline]
pub(super) fn out_vc_bit(v: usize) -> u32 {
    1 << v.min(31)
}

impl PortState {
    /// Whether the port leads to an endpoint of this router.
    #[inline]
    pub(super) fn leads_to_nic(&self) -> bool {
        self.nic < UNCONNECTED
    }

    /// Whether packets granted to this output hold their downstream credits already: with
    /// `credit_check = "crossbar"`, towards a switch.
    #[inline]
    pub(super) fn holds_credits(&self, credits_at_crossbar: bool) -> bool {
        credits_at_crossbar && !self.leads_to_nic()
    }
}

/// One VC of one port: its input buffer (packets that arrived on it), its output buffer
/// (packets granted to it, waiting for the link) and the downstream credits.
#[derive(Clone, Copy)]
pub(super) struct VcState {
    /// Ready time of the input buffer's head packet (`u64::MAX` when empty).
    pub(super) head_ready: u64,
    /// Output chosen for the input buffer's head packet once it has been routed.
    pub(super) choice: Option<Candidate>,
    /// The next input VC waiting for the same output (`NIL`: the last).
    pub(super) next_requester: u32,
    pub(super) input: Queue,
    pub(super) output: Queue,
    /// Output buffer phits reserved by packets in or entering the output buffer.
    pub(super) used: u16,
    /// Free phits in the downstream input buffer of this VC.
    pub(super) credits: u16,
    /// For a terminal port, whose sender (the endpoint) lives in this router: the
    /// endpoint's credits for this input buffer.
    pub(super) nic_credits: u16,
    /// A packet found the output buffer full; freeing room must rerun the allocator.
    pub(super) space_waiter: bool,
}

/// Puts `held` in a free slot of `slab` (the most recently freed of `free_slots`), for
/// callers that hold another part of the router's state borrowed ([`RouterState::store`]
/// otherwise).
#[inline]
pub(super) fn store_in(slab: &mut Vec<Held>, free_slots: &mut Vec<u32>, held: Held) -> u32 {
    match free_slots.pop() {
        Some(slot) => {
            slab[slot as usize] = held;
            slot
        }
        None => {
            slab.push(held);
            slab.len() as u32 - 1
        }
    }
}

impl RouterState {
    /// Puts `held` in a free slab slot (the most recently freed: its cache line is the
    /// likeliest to be warm).
    #[inline]
    pub(super) fn store(&mut self, held: Held) -> u32 {
        store_in(&mut self.slab, &mut self.free_slots, held)
    }

    /// Frees `slot` for reuse.
    #[inline]
    pub(super) fn release(&mut self, slot: u32) {
        self.free_slots.push(slot);
    }

    /// Applies output `o`'s pending buffer release if its time has come. Returns true if
    /// the allocator was waiting for that room.
    #[inline]
    pub(super) fn settle(&mut self, o: usize, t: u64) -> bool {
        let p = &mut self.sw.ports[o];
        if p.pending_phits == 0 || p.link_busy_until as u64 > t {
            return false;
        }
        let (vc, phits) = (p.pending_vc, p.pending_phits);
        p.pending_phits = 0;
        let c = &mut self.sw.channels[o * self.vcs + vc as usize];
        c.used -= phits;
        if !self.sw.ports[o].holds_credits(self.sw.credits_at_crossbar) {
            // Otherwise the phits stay counted as downstream credits in use.
            self.sw.ports[o].occupancy -= phits as u32;
        }
        std::mem::take(&mut self.sw.channels[o * self.vcs + vc as usize].space_waiter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_state_is_compact() {
        // One port in one cache line, a VC in three quarters of one, a held packet in three
        // quarters.
        assert_eq!(std::mem::size_of::<PortState>(), 64);
        assert_eq!(std::mem::size_of::<Held>(), 48);
        assert_eq!(std::mem::size_of::<VcState>(), 48);
        assert_eq!(std::mem::size_of::<Queue>(), 10);
    }

    #[test]
    fn slab_queues_are_fifos_that_share_one_slab() {
        let packet = Packet::new(0, 0, 0, 1, 0);
        let mut slab = vec![Held { packet, ready: 0, next: NIL, tail: 0 }; 4];
        let (mut a, mut b): (Queue, SourceQueue) = (Queue::EMPTY, SourceQueue::EMPTY);
        a.push_back(0, &mut slab);
        b.push_back(1, &mut slab);
        a.push_back(2, &mut slab);
        assert_eq!((a.len, a.front(), b.front()), (2, Some(0), Some(1)));
        assert_eq!(a.pop_front(&slab), Some(0));
        a.push_back(3, &mut slab);
        assert_eq!(a.pop_front(&slab), Some(2));
        assert_eq!(a.pop_front(&slab), Some(3));
        assert_eq!(a.pop_front(&slab), None);
        assert!(a.is_empty() && !b.is_empty());
        assert_eq!(b.pop_front(&slab), Some(1));
        assert!(b.is_empty() && b.tail == NIL);
    }
}
