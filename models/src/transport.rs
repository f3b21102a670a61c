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

/// `[transport]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportSection {
    /// The transport of application messages: `none` (default) or `rc`.
    #[serde(default)]
    pub kind: TransportKind,
    /// `[transport.rc]`: the reliable connection's parameters.
    #[serde(default)]
    pub rc: Option<RcParams>,
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
    /// Packets sent and not acknowledged.
    pub fn outstanding(&self) -> u32 {
        self.next.wrapping_sub(self.unacknowledged)
    }

    /// Whether a new packet may go with `window` packets allowed unacknowledged (none
    /// while it goes back or has failed).
    pub fn may_send_new(&self, window: u32) -> bool {
        !self.failed && self.resend == self.next && self.outstanding() < window
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
        psn
    }

    /// The next packet to send again while going back: its PSN and message.
    pub fn next_resend(&mut self) -> Option<(u32, SentMessage)> {
        if self.failed || self.resend == self.next {
            return None;
        }
        let psn = self.resend;
        let m = *self
            .messages
            .iter()
            .find(|m| psn.wrapping_sub(m.first) < m.packets)
            .expect("an unacknowledged PSN belongs to a kept message");
        self.resend = self.resend.wrapping_add(1);
        Some((psn, m))
    }

    /// Whether it is going back (packets to send again).
    pub fn resending(&self) -> bool {
        !self.failed && self.resend != self.next
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
