//! End-to-end transports for application messages (`[transport]`): what the endpoints do
//! so that a message arrives whole when the network loses packets.
//!
//! - `none` (the default): a message leaves as packets and is complete when its last one
//!   arrives; its send ends when its last packet has left. A packet the network loses
//!   leaves its message unfinished.
//! - `rc`: a reliable connection as RoCEv2's RC queue pairs run it (InfiniBand Architecture
//!   Specification, Volume 1, chapter 9.7, "Reliable service"; RoCEv2 carries the same
//!   transport over UDP). Each ordered pair of endpoints is a connection whose packets carry
//!   a packet sequence number (PSN). The responder accepts only the PSN it expects:
//!   it acknowledges what it accepted (ACK), answers the first packet past a gap with one
//!   negative acknowledgement (NAK, "PSN sequence error") and drops everything until the
//!   missing packet comes; it acknowledges a duplicate again. The requester keeps what is
//!   not acknowledged, goes back to the PSN a NAK names (go-back-N) and, when nothing is
//!   acknowledged for `timeout` cycles, to the oldest unacknowledged one; after `retries`
//!   timeouts in a row it gives up and the connection fails (the verbs' `retry_cnt`). A
//!   send ends when its last packet is acknowledged, as a work completion comes.
//!
//! Here the parameters and a connection's state at both ends, as pure functions; the
//! router (`router/transport.rs`) calls them.

use serde::Deserialize;

/// Bits of a PSN as a packet carries it (RoCE's carry 24; here the 15 bits a packet has
/// free, with a window of at most [`MAX_WINDOW`] packets it is as unambiguous).
pub const PSN_BITS: u32 = 15;

/// The PSNs a packet can carry.
pub const PSN_MASK: u32 = (1 << PSN_BITS) - 1;

/// The most packets a connection may have unacknowledged: under half the PSN space, so
/// that a responder can tell a packet ahead of the one it expects from a duplicate.
pub const MAX_WINDOW: u32 = (1 << (PSN_BITS - 1)) - 1;

/// `transport.kind`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// No transport: packets are not acknowledged, nothing is retransmitted (the default).
    #[default]
    None,
    /// RoCEv2's reliable connection with go-back-N ([`RcParams`]).
    Rc,
    /// Ultra Ethernet's reliable delivery as this model takes it: packets accepted out of
    /// order, acknowledged one by one (selective ACKs), sent again one by one
    /// ([`UecParams`]).
    Uec,
}

/// The reliable connection's parameters (`[transport.rc]`). Times in cycles, sizes in
/// phits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RcParams {
    /// Cycles without an acknowledgement after which the requester sends again from the
    /// oldest unacknowledged packet (the QP's local ACK timeout, 4.096 us x 2^n on the
    /// hardware; the verbs' n = 14 is 67 ms, NCCL's n = 20 is 4.3 s). Default 2^20 cycles:
    /// 0.67 ms at 0.64 ns a cycle (n between 7 and 8), long beside the queueing of a
    /// congested collective, short enough that a run of milliseconds sees its timeouts.
    pub timeout: u64,
    /// Timeouts in a row (without an acknowledgement between them) after which the
    /// connection fails (`retry_cnt`, at most 7 on the hardware, NCCL's default 7).
    pub retries: u8,
    /// The responder acknowledges every `ack_every`-th packet it accepts, and always the
    /// last packet of a message. Default 1: every packet (as htsim's RoCE sink does).
    pub ack_every: u32,
    /// Packets a connection may have unacknowledged, 1..=16,383 (the largest
    /// [`MAX_WINDOW`]); the rank's next message waits while its connection's is full.
    pub window: u32,
    /// Length of an ACK or NAK in phits. Default 0: a control packet of the workload
    /// (`router.header_phits` + 1, as a rendezvous request).
    pub ack_size: u16,
}

impl Default for RcParams {
    fn default() -> Self {
        RcParams { timeout: 1 << 20, retries: 7, ack_every: 1, window: MAX_WINDOW, ack_size: 0 }
    }
}

/// The UEC-like transport's parameters (`[transport.uec]`). Times in cycles, sizes in
/// phits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UecParams {
    /// Cycles without an acknowledgement after which every unacknowledged packet is sent
    /// again (the retransmission timeout, which Ultra Ethernet sets from the fabric's
    /// round trip rather than a NIC's fixed scale). Default 65,536: 42 us at 0.64 ns a
    /// cycle. Losses that fewer than `reorder_threshold` later packets follow (a
    /// collective step's last packets) are found only so: 2^20, as RC's, leaves nccl-tests
    /// over lossy links unfinished after 12.8 ms, 65,536 finishes them in 8.4 ms.
    pub timeout: u64,
    /// Timeouts in a row after which the connection fails. Default 7.
    pub retries: u8,
    /// Packets a connection may have unacknowledged, 1..=16,383; the receiver holds at
    /// most as many out of order.
    pub window: u32,
    /// Length of an acknowledgement in phits. Default 0: a control packet of the workload.
    pub ack_size: u16,
    /// A packet is taken as lost once this many packets sent after it have been
    /// acknowledged (an out-of-order count, as TCP's duplicate-ACK threshold; packet
    /// spraying reorders, so it must exceed most of the reordering paths cause). Default
    /// 64: on nccl-tests over an adaptively routed fat tree 16 resends 77,919 packets
    /// that were only late (the job 13 % slower than without a transport), 64 resends
    /// 10,617 (1.6 %), 256 resends 4,761 (1.6 %).
    pub reorder_threshold: u32,
}

impl Default for UecParams {
    fn default() -> Self {
        UecParams { timeout: 65_536, retries: 7, window: MAX_WINDOW, ack_size: 0, reorder_threshold: 64 }
    }
}

/// The transport in force, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// RoCEv2's reliable connection.
    Rc(RcParams),
    /// The UEC-like transport.
    Uec(UecParams),
}

impl Transport {
    /// Cycles without an acknowledgement before the connection sends again.
    pub fn timeout(&self) -> u64 {
        match self {
            Transport::Rc(p) => p.timeout,
            Transport::Uec(p) => p.timeout,
        }
    }

    /// Timeouts in a row after which a connection fails.
    pub fn retries(&self) -> u8 {
        match self {
            Transport::Rc(p) => p.retries,
            Transport::Uec(p) => p.retries,
        }
    }

    /// Packets a connection may have unacknowledged.
    pub fn window(&self) -> u32 {
        match self {
            Transport::Rc(p) => p.window,
            Transport::Uec(p) => p.window,
        }
    }

    /// Length of an acknowledgement.
    pub fn ack_size(&self) -> u16 {
        match self {
            Transport::Rc(p) => p.ack_size,
            Transport::Uec(p) => p.ack_size,
        }
    }

    /// Whether packets are taken out of order and acknowledged selectively.
    pub fn selective(&self) -> bool {
        matches!(self, Transport::Uec(_))
    }
}

/// `[transport]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportSection {
    /// The transport of application messages: `none` (default), `rc` or `uec`.
    #[serde(default)]
    pub kind: TransportKind,
    /// `[transport.rc]`: the reliable connection's parameters.
    #[serde(default)]
    pub rc: Option<RcParams>,
    /// `[transport.uec]`: the UEC-like transport's parameters.
    #[serde(default)]
    pub uec: Option<UecParams>,
}

/// How far PSN `a` is ahead of PSN `b` (negative: behind), both of [`PSN_BITS`] bits, in
/// `-2^14..2^14`.
pub fn psn_ahead(a: u32, b: u32) -> i32 {
    let d = a.wrapping_sub(b) & PSN_MASK;
    if d >= 1 << (PSN_BITS - 1) {
        d as i32 - (1 << PSN_BITS)
    } else {
        d as i32
    }
}

/// The full PSN nearest to `near` whose low bits are `psn`.
fn widen(psn: u32, near: u32) -> u32 {
    near.wrapping_add(psn_ahead(psn, near & PSN_MASK) as u32)
}

/// What the responder does with a data packet ([`Responder::receive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Receipt {
    /// The PSN it expected: the packet is taken; `ack` says whether to acknowledge it now
    /// (given whether it ends its message, see [`Responder::acknowledges`]).
    Accepted,
    /// A packet it took already: dropped, and the last PSN taken is acknowledged again.
    Duplicate {
        /// The PSN to acknowledge.
        ack: u32,
    },
    /// A packet past a gap: dropped; the first such packet of a gap is answered with a NAK
    /// naming the PSN expected, the others silently.
    OutOfSequence {
        /// The PSN to name in a NAK, if one is due.
        nak: Option<u32>,
    },
}

/// One connection at its responder (the destination).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Responder {
    /// The PSN it expects next.
    expected: u32,
    /// A NAK went out for `expected` (no other until it comes).
    nak_sent: bool,
    /// Packets taken since the last acknowledgement.
    unacknowledged: u32,
}

impl Responder {
    /// A data packet of PSN `psn` arrives.
    pub fn receive(&mut self, psn: u32) -> Receipt {
        match psn_ahead(psn, self.expected) {
            0 => {
                self.expected = (self.expected + 1) & PSN_MASK;
                self.nak_sent = false;
                self.unacknowledged += 1;
                Receipt::Accepted
            }
            d if d < 0 => Receipt::Duplicate { ack: self.expected.wrapping_sub(1) & PSN_MASK },
            _ => Receipt::OutOfSequence {
                nak: (!std::mem::replace(&mut self.nak_sent, true)).then_some(self.expected),
            },
        }
    }

    /// After an accepted packet: whether it is acknowledged now (every `ack_every`-th, and
    /// the last of a message), and the PSN to acknowledge.
    pub fn acknowledges(&mut self, ends_message: bool, ack_every: u32) -> Option<u32> {
        if ends_message || self.unacknowledged >= ack_every {
            self.unacknowledged = 0;
            Some(self.expected.wrapping_sub(1) & PSN_MASK)
        } else {
            None
        }
    }
}

/// What a selective responder does with a data packet ([`Reorder::receive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The PSN expected: taken, with the packets held after it that now follow in order.
    InOrder,
    /// A PSN ahead of the one expected, within the window: held until the gap fills.
    Ahead,
    /// A PSN taken or held already: dropped.
    Duplicate,
}

/// A selective responder: it takes packets in any order within the window, holds those
/// ahead of a gap and releases them in PSN order (to a rank that matches messages in
/// order), and acknowledges each one it receives with the PSN expected next.
#[derive(Clone, Debug)]
pub struct Reorder<T> {
    /// The PSN expected next (carried bits).
    expected: u32,
    /// Held packets: slot `i` is PSN `expected + 1 + i`.
    held: std::collections::VecDeque<Option<T>>,
    /// Packets held now.
    count: u32,
}

impl<T> Default for Reorder<T> {
    fn default() -> Self {
        Reorder { expected: 0, held: std::collections::VecDeque::new(), count: 0 }
    }
}

impl<T> Reorder<T> {
    /// Packet `item` of PSN `psn` arrives; what is released in order goes to `release`.
    pub fn receive(&mut self, psn: u32, item: T, mut release: impl FnMut(T)) -> Arrival {
        let ahead = psn_ahead(psn, self.expected);
        if ahead < 0 {
            return Arrival::Duplicate;
        }
        if ahead > 0 {
            let slot = ahead as usize - 1;
            if self.held.len() <= slot {
                self.held.resize_with(slot + 1, || None);
            }
            if self.held[slot].is_some() {
                return Arrival::Duplicate;
            }
            self.held[slot] = Some(item);
            self.count += 1;
            return Arrival::Ahead;
        }
        release(item);
        self.expected = (self.expected + 1) & PSN_MASK;
        while let Some(front) = self.held.pop_front() {
            match front {
                Some(next) => {
                    self.count -= 1;
                    release(next);
                    self.expected = (self.expected + 1) & PSN_MASK;
                }
                None => {
                    // The next gap: its slot becomes the expected PSN's.
                    break;
                }
            }
        }
        Arrival::InOrder
    }

    /// The last PSN taken in order (what a cumulative acknowledgement carries).
    pub fn cumulative(&self) -> u32 {
        self.expected.wrapping_sub(1) & PSN_MASK
    }

    /// Packets held out of order now.
    pub fn held(&self) -> u32 {
        self.count
    }
}

/// One message a requester sent on a connection, kept until acknowledged whole: enough to
/// build any of its packets again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentMessage {
    /// PSN of its first packet (full width).
    pub first: u32,
    /// Its packets.
    pub packets: u32,
    /// Phits of each packet but the last, and of the last.
    pub full: u16,
    /// Phits of its last packet.
    pub last: u16,
    /// The low 32 bits of its packets' ids (which op sent it).
    pub low: u32,
    /// When it was posted (its packets' creation time).
    pub created: u64,
    /// The send op its acknowledgement ends, if any.
    pub ends: Option<u32>,
}

impl SentMessage {
    /// Phits of its packet of PSN `psn`.
    pub fn size_of(&self, psn: u32) -> u16 {
        if psn.wrapping_sub(self.first) + 1 == self.packets {
            self.last
        } else {
            self.full
        }
    }
}

/// One connection at its requester (the source). PSNs here are full width (a count of the
/// connection's packets); packets carry their low [`PSN_BITS`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Requester {
    /// The next new packet's PSN.
    next: u32,
    /// The oldest unacknowledged PSN.
    unacknowledged: u32,
    /// The next PSN to send: `next` but while going back.
    resend: u32,
    /// Messages with packets not acknowledged, oldest first.
    messages: std::collections::VecDeque<SentMessage>,
    /// When the timer counts from: the last acknowledgement that moved things on, the
    /// first packet sent with none outstanding, or the last timeout.
    pub armed_at: u64,
    /// A timer event is pending.
    pub timer_pending: bool,
    /// Timeouts since the last acknowledgement that moved things on.
    pub timeouts: u8,
    /// It gave up (`retries` timeouts in a row).
    pub failed: bool,
    /// Selective (UEC-like): which of the PSNs from the oldest unacknowledged on have been
    /// acknowledged one by one, and which were declared lost; empty for RC.
    sacked: std::collections::VecDeque<Flags>,
    /// Selective: PSNs declared lost, to send again, oldest first.
    lost: std::collections::VecDeque<u32>,
    /// Selective: the highest PSN acknowledged one by one, plus one (0: none).
    highest: u32,
    /// Selective: PSNs below this were examined for loss.
    examined: u32,
    /// Selective mode.
    selective: bool,
}

/// A selective requester's flags for one PSN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Flags {
    acked: bool,
    lost: bool,
}

/// What an acknowledgement did at the requester ([`Requester::acknowledge`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Acknowledged {
    /// The sends whose last packet it acknowledged, oldest first.
    pub ended: Vec<u32>,
    /// It acknowledged something new.
    pub progress: bool,
}

impl Requester {
    /// A requester that acknowledges and resends packet by packet (UEC-like) if
    /// `selective`, else by going back (RC).
    pub fn new(selective: bool) -> Self {
        Requester { selective, ..Default::default() }
    }

    /// Packets sent and not acknowledged.
    pub fn outstanding(&self) -> u32 {
        self.next.wrapping_sub(self.unacknowledged)
    }

    /// Whether a new packet may go with `window` packets allowed unacknowledged (none
    /// while it goes back or has failed; a selective one sends its lost packets first,
    /// which the caller does, and new ones beside them).
    pub fn may_send_new(&self, window: u32) -> bool {
        !self.failed && (self.selective || self.resend == self.next) && self.outstanding() < window
    }

    /// A new packet: its PSN (full width); `message` is recorded if it is its message's
    /// first packet.
    pub fn send_new(&mut self, message: Option<SentMessage>) -> u32 {
        let psn = self.next;
        if let Some(mut m) = message {
            m.first = psn;
            self.messages.push_back(m);
        }
        self.next = self.next.wrapping_add(1);
        self.resend = self.next;
        if self.selective {
            self.sacked.push_back(Flags::default());
        }
        psn
    }

    /// The next packet to send again (going back, or one declared lost): its PSN and
    /// message.
    pub fn next_resend(&mut self) -> Option<(u32, SentMessage)> {
        if self.failed {
            return None;
        }
        if self.selective {
            while let Some(psn) = self.lost.pop_front() {
                let at = psn.wrapping_sub(self.unacknowledged);
                if at < self.outstanding() && !self.sacked[at as usize].acked {
                    return Some((psn, self.message_of(psn)));
                }
            }
            return None;
        }
        if self.resend == self.next {
            return None;
        }
        let psn = self.resend;
        self.resend = self.resend.wrapping_add(1);
        Some((psn, self.message_of(psn)))
    }

    /// The kept message PSN `psn` belongs to.
    fn message_of(&self, psn: u32) -> SentMessage {
        *self
            .messages
            .iter()
            .find(|m| psn.wrapping_sub(m.first) < m.packets)
            .expect("an unacknowledged PSN belongs to a kept message")
    }

    /// Whether it has packets to send again.
    pub fn resending(&self) -> bool {
        !self.failed && if self.selective { !self.lost.is_empty() } else { self.resend != self.next }
    }

    /// Selective: PSN `psn` arrived, and everything up to `cumulative` (carried bits). A
    /// packet not acknowledged when `threshold` packets sent after it have been is
    /// declared lost, once (a timeout declares every unacknowledged one again).
    pub fn selective_ack(&mut self, psn: u32, cumulative: u32, threshold: u32) -> Acknowledged {
        let mut done = self.acknowledge(cumulative);
        let at = widen(psn, self.unacknowledged).wrapping_sub(self.unacknowledged);
        if at < self.outstanding() && !self.sacked[at as usize].acked {
            self.sacked[at as usize].acked = true;
            self.highest = self.highest.max(self.unacknowledged.wrapping_add(at + 1));
            self.timeouts = 0;
            done.progress = true;
            // Everything acknowledged from the oldest on is acknowledged in order.
            let mut leading = 0;
            while self.sacked.get(leading).is_some_and(|f| f.acked) {
                leading += 1;
            }
            if leading > 0 {
                let through = self.unacknowledged.wrapping_add(leading as u32 - 1);
                let more = self.acknowledge(through & PSN_MASK);
                done.ended.extend(more.ended);
            }
        }
        // Loss: unacknowledged packets `threshold` or more below the highest acknowledged.
        let limit = self.highest.saturating_sub(threshold);
        let mut q = self.examined.max(self.unacknowledged);
        while q < limit {
            let at = q.wrapping_sub(self.unacknowledged) as usize;
            if let Some(f) = self.sacked.get_mut(at) {
                if !f.acked && !f.lost {
                    f.lost = true;
                    self.lost.push_back(q);
                }
            }
            q += 1;
        }
        self.examined = self.examined.max(limit);
        done
    }

    /// Everything up to PSN `psn` (carried bits) arrived. Stale acknowledgements (behind
    /// what is acknowledged, or ahead of what was sent) change nothing.
    pub fn acknowledge(&mut self, psn: u32) -> Acknowledged {
        let through = widen(psn, self.unacknowledged.wrapping_sub(1));
        let newly = through.wrapping_sub(self.unacknowledged).wrapping_add(1);
        let mut done = Acknowledged::default();
        if newly == 0 || newly > self.outstanding() {
            return done;
        }
        for _ in 0..newly {
            self.sacked.pop_front();
        }
        self.unacknowledged = through.wrapping_add(1);
        if self.resend.wrapping_sub(self.unacknowledged) > self.outstanding() {
            // The resend point was acknowledged meanwhile.
            self.resend = self.unacknowledged;
        }
        while let Some(m) = self.messages.front() {
            if m.first.wrapping_add(m.packets).wrapping_sub(self.unacknowledged) as i32 > 0 {
                break;
            }
            done.ended.extend(m.ends);
            self.messages.pop_front();
        }
        done.progress = true;
        self.timeouts = 0;
        done
    }

    /// A NAK for PSN `psn`: everything before it arrived, and the requester goes back to
    /// it. Returns what the implied acknowledgement did and whether it went back.
    pub fn nak(&mut self, psn: u32) -> (Acknowledged, bool) {
        let done = self.acknowledge(psn.wrapping_sub(1) & PSN_MASK);
        let at = widen(psn, self.unacknowledged);
        if at != self.unacknowledged || self.outstanding() == 0 || self.failed {
            return (done, false);
        }
        self.resend = at;
        (done, true)
    }

    /// The timer expired with packets unacknowledged: it goes back to the oldest, or, after
    /// `retries` timeouts in a row, fails. Returns whether it failed.
    pub fn time_out(&mut self, retries: u8) -> bool {
        self.timeouts += 1;
        if self.timeouts > retries {
            self.failed = true;
        } else if self.selective {
            // Every unacknowledged packet is lost, whatever was declared before.
            self.lost.clear();
            for (i, f) in self.sacked.iter_mut().enumerate() {
                if !f.acked {
                    f.lost = true;
                    self.lost.push_back(self.unacknowledged.wrapping_add(i as u32));
                }
            }
        } else {
            self.resend = self.unacknowledged;
        }
        self.failed
    }

    /// The oldest unacknowledged PSN (full width).
    pub fn oldest(&self) -> u32 {
        self.unacknowledged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(packets: u32, ends: u32) -> SentMessage {
        SentMessage { first: 0, packets, full: 16, last: 4, low: ends, created: 0, ends: Some(ends) }
    }

    #[test]
    fn psns_compare_across_the_wrap() {
        assert_eq!(psn_ahead(5, 3), 2);
        assert_eq!(psn_ahead(3, 5), -2);
        assert_eq!(psn_ahead(0, PSN_MASK), 1);
        assert_eq!(psn_ahead(PSN_MASK, 0), -1);
        // Full PSNs wrap too: the PSN nearest the last one with low bits 2 is 2.
        assert_eq!(widen(2, u32::MAX), 2);
        assert_eq!(widen(2, (1 << 15) + 7), (1 << 15) + 2);
        assert_eq!(widen(PSN_MASK, 1 << 15), (1 << 15) - 1);
    }

    #[test]
    fn a_responder_takes_the_expected_psn_naks_a_gap_once_and_reacks_duplicates() {
        let mut r = Responder::default();
        assert_eq!(r.receive(0), Receipt::Accepted);
        assert_eq!(r.acknowledges(false, 2), None);
        assert_eq!(r.receive(1), Receipt::Accepted);
        assert_eq!(r.acknowledges(false, 2), Some(1));
        // 2 is lost: 3 and 4 are dropped, one NAK for 2.
        assert_eq!(r.receive(3), Receipt::OutOfSequence { nak: Some(2) });
        assert_eq!(r.receive(4), Receipt::OutOfSequence { nak: None });
        assert_eq!(r.receive(1), Receipt::Duplicate { ack: 1 });
        assert_eq!(r.receive(2), Receipt::Accepted);
        // The last packet of a message is acknowledged at once.
        assert_eq!(r.acknowledges(true, 2), Some(2));
        // A later gap gets its own NAK.
        assert_eq!(r.receive(5), Receipt::OutOfSequence { nak: Some(3) });
    }

    #[test]
    fn a_requester_goes_back_on_a_nak_and_ends_sends_on_their_last_acknowledgement() {
        let mut s = Requester::default();
        assert_eq!(s.send_new(Some(message(3, 10))), 0);
        assert_eq!(s.send_new(None), 1);
        assert_eq!(s.send_new(None), 2);
        assert_eq!(s.send_new(Some(message(2, 11))), 3);
        assert_eq!(s.send_new(None), 4);
        assert!(s.may_send_new(8) && !s.may_send_new(5));
        // Acknowledged through 1: nothing ends.
        let a = s.acknowledge(1);
        assert!(a.progress && a.ended.is_empty());
        assert_eq!(s.outstanding(), 3);
        // A NAK for 3: 2 arrived (the first send ends), go back to 3.
        let (a, back) = s.nak(3);
        assert_eq!((a.ended, back), (vec![10], true));
        assert!(s.resending() && !s.may_send_new(100));
        let (psn, m) = s.next_resend().unwrap();
        assert_eq!((psn, m.size_of(psn)), (3, 16));
        let (psn, m) = s.next_resend().unwrap();
        assert_eq!((psn, m.size_of(psn)), (4, 4));
        assert_eq!(s.next_resend(), None);
        // A stale acknowledgement changes nothing; the right one ends the second send.
        assert_eq!(s.acknowledge(1), Acknowledged::default());
        assert_eq!(s.acknowledge(4).ended, vec![11]);
        assert_eq!(s.outstanding(), 0);
    }

    #[test]
    fn timeouts_go_back_to_the_oldest_and_fail_after_the_retries() {
        let mut s = Requester::default();
        for _ in 0..4 {
            s.send_new(Some(message(1, 0)));
        }
        s.acknowledge(0);
        assert!(!s.time_out(2));
        assert_eq!(s.next_resend().map(|r| r.0), Some(1));
        assert!(!s.time_out(2));
        // An acknowledgement that moves things on resets the count.
        s.acknowledge(1);
        assert_eq!(s.timeouts, 0);
        assert!(!s.time_out(2) && !s.time_out(2) && s.time_out(2));
        assert!(!s.may_send_new(100) && s.next_resend().is_none());
    }

    #[test]
    fn a_selective_responder_holds_packets_past_a_gap_and_releases_them_in_order() {
        let mut r = Reorder::default();
        let mut out = Vec::new();
        assert_eq!(r.receive(0, 'a', |x| out.push(x)), Arrival::InOrder);
        assert_eq!(r.receive(2, 'c', |x| out.push(x)), Arrival::Ahead);
        assert_eq!(r.receive(4, 'e', |x| out.push(x)), Arrival::Ahead);
        assert_eq!((r.held(), r.cumulative()), (2, 0));
        assert_eq!(r.receive(2, 'c', |x| out.push(x)), Arrival::Duplicate);
        // 1 fills the first gap: 1 and 2 go, 4 waits for 3.
        assert_eq!(r.receive(1, 'b', |x| out.push(x)), Arrival::InOrder);
        assert_eq!((out.clone(), r.held(), r.cumulative()), (vec!['a', 'b', 'c'], 1, 2));
        assert_eq!(r.receive(3, 'd', |x| out.push(x)), Arrival::InOrder);
        assert_eq!((out, r.held(), r.cumulative()), (vec!['a', 'b', 'c', 'd', 'e'], 0, 4));
        assert_eq!(r.receive(0, 'a', |_| panic!("a duplicate is not released")), Arrival::Duplicate);
    }

    #[test]
    fn a_selective_requester_resends_only_what_is_lost() {
        let mut s = Requester::new(true);
        assert_eq!(s.send_new(Some(message(4, 10))), 0);
        for _ in 1..4 {
            s.send_new(None);
        }
        s.send_new(Some(message(4, 11)));
        for _ in 5..8 {
            s.send_new(None);
        }
        // 1 is lost; 0, 2, 3, 4 arrive (threshold 3: 1 is lost once 4 is acknowledged).
        assert!(s.selective_ack(0, 0, 3).progress);
        s.selective_ack(2, 0, 3);
        s.selective_ack(3, 0, 3);
        assert!(!s.resending());
        s.selective_ack(4, 0, 3);
        assert!(s.resending() && s.may_send_new(100));
        assert_eq!(s.next_resend().map(|r| r.0), Some(1));
        assert_eq!(s.next_resend(), None);
        // Its copy arrives: everything through 4 is in order, the first send ends.
        let a = s.selective_ack(1, 4, 3);
        assert_eq!((a.ended, s.outstanding()), (vec![10], 3));
        // A timeout declares every unacknowledged packet lost: 5, 6, 7.
        assert!(!s.time_out(7));
        let again: Vec<u32> = std::iter::from_fn(|| s.next_resend().map(|r| r.0)).collect();
        assert_eq!(again, vec![5, 6, 7]);
        assert_eq!(s.selective_ack(7, 7, 3).ended, vec![11]);
    }

    #[test]
    fn the_window_wraps_the_psn_space() {
        let mut s = Requester::default();
        let mut r = Responder::default();
        // Three times round the carried space, a window of 100 at a time.
        for i in 0..3 * (1u32 << PSN_BITS) {
            assert!(s.may_send_new(100));
            let psn = s.send_new(Some(message(1, i)));
            assert_eq!(r.receive(psn & PSN_MASK), Receipt::Accepted);
            if i % 100 == 99 {
                let ack = r.acknowledges(true, 1).unwrap();
                assert_eq!(s.acknowledge(ack).ended.len(), 100);
            }
        }
    }
}
