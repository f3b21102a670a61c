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

//!
//! Here: the parameters (this file), PSN arithmetic (`psn.rs`), the responders
//! (`responder.rs`) and the requester (`requester.rs`).

mod nscc;
mod psn;
mod requester;
mod responder;

pub use nscc::{fabric_rtt, AckSignal, NsccParams, NsccWindow};
pub use psn::{psn_ahead, MAX_WINDOW, PSN_BITS, PSN_MASK};
pub use requester::{Acknowledged, Requester, SentMessage};
pub use responder::{Arrival, Receipt, Reorder, Responder};

use serde::Deserialize;

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
    /// Cycles after its sending at which a packet not yet acknowledged is taken as lost
    /// and sent again: each packet has its own timer, as Ultra Ethernet's packet delivery
    /// sublayer keeps them (the retransmission timeout, which UEC sets from the fabric's
    /// round trip rather than a NIC's fixed scale). Default 65,536: 42 us at 0.64 ns a
    /// cycle. Losses that fewer than `reorder_threshold` later packets follow (a
    /// collective step's last packets) are found only so: 2^20, as RC's, leaves nccl-tests
    /// over lossy links unfinished after 12.8 ms, 65,536 finishes them in 8.4 ms.
    pub timeout: u64,
    /// Timeouts (periods of `timeout` in which packets timed out) without an
    /// acknowledgement after which the connection fails. Default 7.
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
    /// The congestion control of its connections ([`UecCongestion`]). Default `none`:
    /// only `window` limits a connection.
    pub congestion: UecCongestion,
    /// NSCC: the fabric's base round trip in cycles, which sizes the window (1.5 of its
    /// bandwidth-delay product) and NSCC's constants. Default 0: the unloaded round trip
    /// of a full packet and its acknowledgement to the farthest endpoint from endpoint 0.
    pub rtt: u64,
    /// NSCC: the target queueing delay in cycles. Default 0: the base round trip (the
    /// reference simulator's choice without packet trimming).
    pub target: u64,
    /// NSCC: switches mark ECN on a packet granted to an output VC holding more than
    /// `ecn_kmin` phits ahead of it, with a probability rising linearly to 1 at
    /// `ecn_kmax`. Default 0: 20 % and 80 % of the bandwidth-delay product, as the
    /// reference simulator, but at least a packet and two, `ecn_kmax` at most
    /// `router.output_buffer` and `ecn_kmin` at most half of `ecn_kmax`.
    pub ecn_kmin: u32,
    /// See `ecn_kmin`.
    pub ecn_kmax: u32,
}

impl Default for UecParams {
    fn default() -> Self {
        UecParams {
            timeout: 65_536,
            retries: 7,
            window: MAX_WINDOW,
            ack_size: 0,
            reorder_threshold: 64,
            congestion: UecCongestion::None,
            rtt: 0,
            target: 0,
            ecn_kmin: 0,
            ecn_kmax: 0,
        }
    }
}

/// `transport.uec.congestion`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UecCongestion {
    /// None: a connection sends up to its `window` of packets.
    #[default]
    None,
    /// NSCC, Ultra Ethernet's sender-based congestion control ([`NsccWindow`]).
    Nscc,
}

/// NSCC as a run uses it: the senders' parameters and the switches' ECN marking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nscc {
    /// The senders' parameters.
    pub params: NsccParams,
    /// ECN marking: an output VC holding at most `kmin` phits marks nothing...
    pub kmin: u32,
    /// ...one holding `kmax` or more marks every packet, linearly between.
    pub kmax: u32,
}

impl Nscc {
    /// The probability that a packet granted to an output VC then holding `queued` phits
    /// is marked.
    pub fn mark_probability(&self, queued: u32) -> f64 {
        crate::congestion::red(queued, self.kmin, self.kmax, 1.0)
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

#[cfg(test)]
mod tests {
    use super::psn::widen;
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
        assert_eq!(s.send_new(Some(message(3, 10)), 16), 0);
        assert_eq!(s.send_new(None, 16), 1);
        assert_eq!(s.send_new(None, 16), 2);
        assert_eq!(s.send_new(Some(message(2, 11)), 16), 3);
        assert_eq!(s.send_new(None, 16), 4);
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
            s.send_new(Some(message(1, 0)), 16);
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
        // A failed connection is in its error state: a late acknowledgement completes
        // nothing and leaves the count of timeouts that failed it.
        assert_eq!(s.acknowledge(3), Acknowledged::default());
        assert_eq!(s.selective_ack(3, 3, 64), Acknowledged::default());
        assert_eq!((s.timeouts, s.outstanding()), (3, 2));
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
        assert_eq!(s.send_new(Some(message(4, 10)), 16), 0);
        for _ in 1..4 {
            s.send_new(None, 16);
        }
        s.send_new(Some(message(4, 11)), 16);
        for _ in 5..8 {
            s.send_new(None, 16);
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
        // 5, 6 and 7 left at 100, 100 and 150: each times out on its own, 1,000 cycles
        // after it was sent.
        for (psn, t) in [(5, 100), (6, 100), (7, 150)] {
            s.stamp(psn, t);
        }
        assert_eq!((s.next_expiry(1000), s.in_flight()), (Some(1100), 48));
        assert_eq!(s.expire(1100, 1000, 7), (false, 32));
        assert_eq!((s.next_expiry(1000), s.in_flight()), (Some(1150), 16));
        let again: Vec<u32> = std::iter::from_fn(|| s.next_resend().map(|r| r.0)).collect();
        assert_eq!(again, vec![5, 6]);
        assert_eq!(s.selective_ack(7, 7, 3).ended, vec![11]);
    }

    #[test]
    fn a_selective_requester_fails_after_its_retries_without_an_acknowledgement() {
        let mut s = Requester::new(true);
        s.send_new(Some(message(2, 10)), 16);
        s.send_new(None, 16);
        s.stamp(0, 0);
        s.stamp(1, 5);
        // Each packet on its own timer; the connection counts timeouts since its last
        // acknowledgement (none: since its start at 0).
        assert_eq!(s.expire(10, 10, 2), (false, 16));
        assert_eq!(s.expire(15, 10, 2), (false, 16));
        assert_eq!(std::iter::from_fn(|| s.next_resend()).count(), 2);
        s.stamp(0, 15);
        s.stamp(1, 15);
        assert_eq!((s.expire(25, 10, 2), s.timeouts), ((false, 32), 2));
        // An acknowledgement at 26 starts the count again.
        s.stamp(0, 25);
        s.selective_ack(1, 0x7fff, 64);
        s.armed_at = 26;
        assert_eq!((s.expire(35, 10, 2), s.timeouts), ((false, 16), 0));
        s.stamp(0, 35);
        assert_eq!(s.expire(45, 10, 2), (false, 16));
        s.stamp(0, 45);
        assert_eq!((s.expire(56, 10, 2), s.timeouts), ((true, 16), 3));
        assert!(s.next_resend().is_none() && !s.may_send_new(100));
    }

    #[test]
    fn under_nscc_packets_sent_again_wait_for_room_in_the_window() {
        let p = NsccParams::new(1000, 16, 10, 800, None);
        let mut s = Requester::new(true);
        s.nscc = Some(NsccWindow::new(&p));
        for psn in 0..4 {
            s.send_new((psn == 0).then(|| message(4, 10)), 16);
            s.stamp(psn, 0);
        }
        s.nscc.as_mut().unwrap().window = 40.0;
        // 0 and 1 time out: they leave the count in flight, and one fits again.
        s.stamp(2, 5);
        s.stamp(3, 5);
        assert_eq!(s.expire(100, 100, 7), (false, 32));
        assert_eq!(s.in_flight(), 32);
        assert_eq!(s.next_resend().map(|r| r.0), None);
        s.selective_ack(2, 0x7fff, 64);
        assert_eq!(s.next_resend().map(|r| r.0), Some(0));
        s.stamp(0, 101);
        assert_eq!(s.next_resend().map(|r| r.0), None);
    }

    #[test]
    fn phits_count_in_flight_from_departure_to_acknowledgement_once() {
        let mut s = Requester::new(true);
        for size in [16, 16, 4] {
            s.send_new(None, size);
        }
        // Fed to the endpoint, not yet gone: nothing in flight.
        assert_eq!(s.in_flight(), 0);
        s.stamp(0, 10);
        s.stamp(1, 11);
        assert_eq!(s.in_flight(), 32);
        // A round trip sample for a packet sent once; none for one sent twice.
        assert_eq!(s.rtt_sample(0, 50), Some(40));
        s.stamp(1, 30);
        assert_eq!((s.rtt_sample(1, 50), s.in_flight()), (None, 32));
        // 1 acknowledged alone, then 0 and 2 by the cumulative PSN (2 never left: it was
        // not counted).
        s.selective_ack(1, 0x7fff, 64);
        assert_eq!(s.in_flight(), 16);
        s.selective_ack(0, 0, 64);
        assert_eq!(s.in_flight(), 0);
    }

    #[test]
    fn packets_declared_lost_leave_the_flight_but_are_not_acknowledged_phits() {
        let mut s = Requester::new(true);
        for (psn, size) in [16, 16, 4].into_iter().enumerate() {
            s.send_new((psn == 0).then(|| message(3, 10)), size);
            s.stamp(psn as u32, 0);
        }
        // 2 arrives first; with a threshold of 1, 0 and 1 are declared lost.
        let a = s.selective_ack(2, 0x7fff, 1);
        assert_eq!((a.phits, s.in_flight()), (4, 0));
        assert_eq!(s.next_resend().map(|r| r.0), Some(0));
        s.stamp(0, 10);
        assert_eq!(s.in_flight(), 16);
        assert_eq!(s.selective_ack(0, 0, 1).phits, 16);
    }

    #[test]
    fn the_window_wraps_the_psn_space() {
        let mut s = Requester::default();
        let mut r = Responder::default();
        // Three times round the carried space, a window of 100 at a time.
        for i in 0..3 * (1u32 << PSN_BITS) {
            assert!(s.may_send_new(100));
            let psn = s.send_new(Some(message(1, i)), 16);
            assert_eq!(r.receive(psn & PSN_MASK), Receipt::Accepted);
            if i % 100 == 99 {
                let ack = r.acknowledges(true, 1).unwrap();
                assert_eq!(s.acknowledge(ack).ended.len(), 100);
            }
        }
    }
}
