//! End-to-end congestion control, two schemes:
//!
//! - InfiniBand's (InfiniBand Architecture Specification, Volume 1, Annex A10, "Congestion
//!   Control"; the parameter names are those `ibccconfig` sets). A switch marks a packet
//!   (FECN) when the output it is granted to is congested; the destination answers each
//!   marked packet with a congestion notification (CNP, carrying the BECN) to its source;
//!   the source raises the flow's index into its congestion control table (CCT) and spaces
//!   the flow's packets by the table's inter-packet delay; a timer lowers the index again.
//! - Per-destination throttling in the style of HPE Slingshot's (De Sensi et al., SC'20,
//!   describe its effect; its rules are not public), with the rules SST Merlin models it
//!   by: an endpoint whose own link is saturated counts the endpoints sending to it and
//!   tells each of them how many they are; each then sends to it at most its share of
//!   the link, until the destination tells it the incast is over.
//!
//! Here the parameters, the rules and a flow's state at the source, as pure functions of
//! time: the router (`router/`) calls them. A flow is a (source, destination) pair, as an
//! HCA with one queue pair per destination would have.

mod dcqcn;

pub use dcqcn::{red, DcqcnCc, DcqcnRate};

use serde::Deserialize;

/// `congestion.control`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    /// No congestion control (the default).
    #[default]
    None,
    /// InfiniBand congestion control ([`InfiniBandCc`]).
    Infiniband,
    /// Per-destination throttling ([`PerDestinationCc`]).
    PerDestination,
    /// DCQCN, RoCEv2's ([`DcqcnCc`]).
    Dcqcn,
}

/// How a congestion notification travels from the destination back to the source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Notification {
    /// Along the routing's route, a link's latency a hop, without buffers or bandwidth:
    /// a lane of its own that no data blocks, as fabrics give notifications a virtual lane
    /// of high priority (the default).
    #[default]
    Direct,
    /// As a packet of `cnp_size` phits through the data's buffers and VCs, where
    /// congestion can hold it up.
    Packet,
}

/// InfiniBand congestion control's parameters (`[congestion.infiniband]`). Times in cycles,
/// sizes in phits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InfiniBandCc {
    /// A switch output VC whose output buffer holds at least this many phits (the packet
    /// granted included) is congested (the switch's `Threshold`, which hardware scales
    /// to its buffers; here in phits).
    pub threshold: u32,
    /// Congested packets left unmarked between two marked ones, per output port
    /// (`Marking_Rate`; 0: every one).
    pub marking_rate: u16,
    /// Whether an output that waits for downstream credits (a victim of congestion
    /// further on, not its root) marks too (`Victim_Mask`).
    pub victim_mask: bool,
    /// How a notification travels back ([`Notification`]).
    pub notification: Notification,
    /// Length of a congestion notification packet (`notification = "packet"`).
    pub cnp_size: u16,
    /// CCT index steps a notification adds (`CCTI_Increase`).
    pub ccti_increase: u16,
    /// Cycles between the timer's steps down of the index (`CCTI_Timer`).
    pub ccti_timer: u32,
    /// Highest index (`CCTI_Limit`).
    pub ccti_limit: u16,
    /// Lowest index the timer lowers to (`CCTI_Min`).
    pub ccti_min: u16,
    /// The table: inter-packet delay of index `i` is `i x ipd_step` cycles (a linear
    /// table, as OpenSM's default).
    pub ipd_step: u32,
}

impl Default for InfiniBandCc {
    fn default() -> Self {
        InfiniBandCc {
            threshold: 32,
            marking_rate: 0,
            victim_mask: false,
            notification: Notification::Direct,
            cnp_size: 1,
            ccti_increase: 1,
            ccti_timer: 1000,
            ccti_limit: 127,
            ccti_min: 0,
            ipd_step: 16,
        }
    }
}

impl InfiniBandCc {
    /// Whether a packet granted to an output whose VC then buffers `buffered` phits is
    /// marked, given whether the output `waits` for downstream credits and the port's
    /// `countdown` of packets left unmarked (updated).
    pub fn marks(&self, buffered: u32, waits: bool, countdown: &mut u16) -> bool {
        if buffered < self.threshold || (waits && !self.victim_mask) {
            return false;
        }
        if *countdown > 0 {
            *countdown -= 1;
            return false;
        }
        *countdown = self.marking_rate;
        true
    }

    /// Inter-packet delay at index `ccti`.
    pub fn ipd(&self, ccti: u16) -> u64 {
        ccti as u64 * self.ipd_step as u64
    }
}

/// Per-destination throttling's parameters (`[congestion.per_destination]`). Times in
/// cycles, sizes in phits.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PerDestinationCc {
    /// Cycles over which a destination measures how busy its link is (aligned intervals).
    pub interval: u32,
    /// The destination is congested while its link carried at least this share of the
    /// last interval (at most 1): a saturated link, which uniform traffic below that load
    /// never makes. Keep it below `link_share`, or throttled senders end the congestion
    /// they were told of.
    pub busy: f64,
    /// Senders an endpoint must count before it notifies them (SST Merlin's
    /// `cm_incast_threshold`): fewer cannot oversubscribe a link for long.
    pub min_senders: u16,
    /// A sender counts while its last packet arrived within `window` gaps (the gap
    /// between a throttled sender's packets, for the count or `min_senders` if more).
    pub window: u16,
    /// The share of the destination's link its `n` notified senders get together: each
    /// sends at most one packet per `n x size / link_share` cycles. What is left over
    /// drains the congestion tree that formed before the notices.
    pub link_share: f64,
    /// Packets a source may have in flight to one destination (sent and not yet
    /// acknowledged): each delivered packet is acknowledged along the route back, as
    /// Slingshot tracks every packet between two endpoints. It bounds what a burst puts
    /// into the network before any notice can come back. 0: no limit, no acknowledgements.
    pub max_outstanding: u16,
}

impl Default for PerDestinationCc {
    fn default() -> Self {
        PerDestinationCc {
            interval: 500,
            busy: 0.85,
            min_senders: 6,
            window: 4,
            link_share: 0.9,
            max_outstanding: 0,
        }
    }
}

impl PerDestinationCc {
    /// Whether a destination whose link carried `phits` in an interval is congested.
    pub fn congested(&self, phits: u32) -> bool {
        phits as f64 >= self.busy * self.interval as f64
    }

    /// Cycles between the heads of a sender's packets of `size` phits when `senders`
    /// share the link.
    pub fn gap(&self, senders: u32, size: u16) -> u64 {
        ((senders.max(1) as f64 * size as f64 / self.link_share).ceil() as u64).max(size as u64)
    }

    /// The cycles within which a sender's last packet must have arrived for it to count,
    /// with `senders` counted, for packets of `size` phits.
    pub fn window_cycles(&self, senders: u32, size: u16) -> u64 {
        self.window.max(1) as u64 * self.gap(senders, size)
    }

    /// The count a destination that counts `senders` reports: 0 (no throttle) below
    /// `min_senders`. A sender is told whenever this differs from what it was last told,
    /// and again once a window.
    pub fn reported(&self, senders: u32) -> u32 {
        if senders >= self.min_senders as u32 {
            senders
        } else {
            0
        }
    }
}

/// The congestion control in force: the scheme and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scheme {
    /// InfiniBand's.
    InfiniBand(InfiniBandCc),
    /// Per-destination throttling.
    PerDestination(PerDestinationCc),
    /// DCQCN.
    Dcqcn(DcqcnCc),
}

impl Scheme {
    /// InfiniBand's parameters, if that is the scheme (switches mark only under it).
    pub fn infiniband(&self) -> Option<&InfiniBandCc> {
        match self {
            Scheme::InfiniBand(cc) => Some(cc),
            _ => None,
        }
    }

    /// DCQCN's parameters, if that is the scheme.
    pub fn dcqcn(&self) -> Option<&DcqcnCc> {
        match self {
            Scheme::Dcqcn(cc) => Some(cc),
            _ => None,
        }
    }

    /// Cycles after a packet of `size` phits leaves its source during which its time
    /// still matters: notifications arriving then could space the flow's next packet from
    /// it (see [`Flow::idle`]). InfiniBand: the tail plus the table's largest delay
    /// (several notifications can arrive before the next packet); per destination none
    /// (the first packet after a notice goes at once).
    pub fn memory_horizon(&self, size: u16) -> u64 {
        match self {
            Scheme::InfiniBand(cc) => size as u64 + cc.ipd(cc.ccti_limit),
            Scheme::PerDestination(_) | Scheme::Dcqcn(_) => 0,
        }
    }

    /// Whether every packet sent needs a flow record (to count it outstanding; DCQCN: its
    /// rate and byte counter).
    pub fn tracks_every_flow(&self) -> bool {
        matches!(self, Scheme::PerDestination(cc) if cc.max_outstanding > 0)
            || matches!(self, Scheme::Dcqcn(_))
    }
}

/// One flow's congestion state at its source: its throttle level (InfiniBand's CCT
/// index; per destination, the count of senders its destination last reported) and its
/// last packet.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Flow {
    /// The level as of `since`.
    level: u16,
    /// InfiniBand: when the level was last set or stepped down by the timer. Per
    /// destination: when the throttle lapses.
    since: u64,
    /// When the flow's last packet left the source (its head).
    last_sent: u64,
    /// Whether a packet was sent since the flow was created.
    sent: bool,
    /// Per destination with `max_outstanding`: packets sent and not yet acknowledged.
    outstanding: u16,
    /// Per destination: whether a packet left since the throttle began (the next one is
    /// spaced from it; the first goes at once).
    paced: bool,
    /// DCQCN: the flow's rate.
    rate: DcqcnRate,
}

impl Flow {
    /// The level at `t`. InfiniBand: the timer steps the index down by one every
    /// `ccti_timer` cycles since `since`, to `ccti_min`. Per destination: the count last
    /// reported (0 when the destination ended the throttle), until the flow has sent
    /// nothing for as long as the destination takes to forget a sender.
    pub fn level(&self, scheme: &Scheme, t: u64) -> u16 {
        match scheme {
            Scheme::InfiniBand(cc) => {
                let steps = (t.saturating_sub(self.since) / cc.ccti_timer.max(1) as u64).min(u16::MAX as u64);
                self.level.saturating_sub(steps as u16).max(cc.ccti_min.min(self.level))
            }
            Scheme::PerDestination(_) => {
                if t < self.since {
                    self.level
                } else {
                    0
                }
            }
            Scheme::Dcqcn(cc) => u16::from(!self.rate.at_line_rate(cc, t)),
        }
    }

    /// A notification arrives at `t`, reporting `senders` (per destination; InfiniBand's
    /// carries nothing), for packets of `size` phits. InfiniBand: the index goes up by
    /// `ccti_increase`, to `ccti_limit`, and the timer restarts. Per destination: the
    /// level becomes the count; a throttle that begins lets the flow's next packet go at
    /// once, one that changes keeps the spacing from the last packet; it lapses a
    /// destination's window after the notice or the flow's last packet.
    pub fn notify(&mut self, scheme: &Scheme, senders: u16, t: u64, size: u16) {
        match scheme {
            Scheme::InfiniBand(cc) => {
                self.level = self.level(scheme, t).saturating_add(cc.ccti_increase).min(cc.ccti_limit);
                self.since = t;
            }
            Scheme::PerDestination(cc) => {
                if self.level(scheme, t) == 0 {
                    self.paced = false;
                }
                self.level = senders;
                self.since = t + cc.window_cycles(senders as u32, size);
            }
            Scheme::Dcqcn(cc) => self.rate.notify(cc, t),
        }
    }

    /// The earliest cycle the flow may send its next packet, `size` phits, at its level
    /// at `t`. InfiniBand: the last packet's tail plus the inter-packet delay.
    /// Per destination: the gap of `level` senders after the last packet's head if it left
    /// since the throttle began (the first packet after that goes at once).
    pub fn next_send(&self, scheme: &Scheme, t: u64, size: u16) -> u64 {
        if !self.sent {
            return 0;
        }
        let level = self.level(scheme, t);
        match scheme {
            Scheme::InfiniBand(cc) => self.last_sent + size as u64 + cc.ipd(level),
            Scheme::PerDestination(cc) => {
                if level == 0 || !self.paced {
                    self.last_sent + size as u64
                } else {
                    self.last_sent + cc.gap(level as u32, size)
                }
            }
            // Head to head, the packet's time at the flow's rate.
            Scheme::Dcqcn(cc) => self.last_sent + (size as f64 / self.rate.rate(cc, t)).ceil() as u64,
        }
    }

    /// When the level next falls, after `t` (`u64::MAX`: it is at its floor): a flow that
    /// waits may go sooner then.
    pub fn next_step(&self, scheme: &Scheme, t: u64) -> u64 {
        match scheme {
            Scheme::InfiniBand(cc) => {
                if self.level(scheme, t) <= cc.ccti_min.min(self.level) {
                    return u64::MAX;
                }
                let timer = cc.ccti_timer.max(1) as u64;
                self.since + (t.saturating_sub(self.since) / timer + 1) * timer
            }
            Scheme::PerDestination(_) => {
                if self.level(scheme, t) == 0 {
                    u64::MAX
                } else {
                    self.since
                }
            }
            Scheme::Dcqcn(cc) => self.rate.next_increase(cc, t),
        }
    }

    /// The flow sends a packet of `size` phits at `t` (per destination, a throttle then
    /// lasts a destination's window from it, and the packet is outstanding until
    /// acknowledged).
    pub fn sent(&mut self, scheme: &Scheme, t: u64, size: u16) {
        if let Scheme::Dcqcn(cc) = scheme {
            self.rate.sent(cc, size as u64, t);
        }
        if let Scheme::PerDestination(cc) = scheme {
            let level = self.level(scheme, t);
            if level > 0 {
                self.since = self.since.max(t + cc.window_cycles(level as u32, size));
            }
            if cc.max_outstanding > 0 {
                self.outstanding += 1;
            }
        }
        self.last_sent = t;
        self.sent = true;
        self.paced = true;
    }

    /// An acknowledgement of one of the flow's packets arrives.
    pub fn acknowledged(&mut self) {
        self.outstanding = self.outstanding.saturating_sub(1);
    }

    /// Whether the flow may have another packet in flight (per destination with
    /// `max_outstanding`: fewer than that outstanding).
    pub fn window_open(&self, scheme: &Scheme) -> bool {
        match scheme {
            Scheme::PerDestination(cc) => cc.max_outstanding == 0 || self.outstanding < cc.max_outstanding,
            Scheme::InfiniBand(_) | Scheme::Dcqcn(_) => true,
        }
    }

    /// Whether the flow's state no longer matters at `t`: forgetting it changes nothing,
    /// a new flow would send when this one would, whatever notifications come. Level 0
    /// and, under InfiniBand, the last packet so long ago that no delay the table holds
    /// would hold the next one back (per destination the first packet after a notice goes
    /// at once: level 0 is enough).
    pub fn idle(&self, scheme: &Scheme, t: u64, size: u16) -> bool {
        if self.level(scheme, t) != 0 || self.outstanding != 0 {
            return false;
        }
        match scheme {
            Scheme::InfiniBand(_) => !self.sent || self.last_sent + scheme.memory_horizon(size) < t,
            Scheme::PerDestination(_) => true,
            // A flow that was ever cut keeps its estimate of the marked share; one that never
            // was matters while a notification could still space its next packet from its
            // last (at the lowest rate).
            Scheme::Dcqcn(cc) => {
                self.rate == DcqcnRate::default()
                    && (!self.sent || self.last_sent + ((size as f64 / cc.min_rate).ceil() as u64) < t)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_marks_congested_roots_at_its_marking_rate() {
        let cc = InfiniBandCc { threshold: 32, marking_rate: 2, ..Default::default() };
        let mut countdown = 0;
        // Below the threshold: never, and the countdown is left alone.
        assert!(!cc.marks(31, false, &mut countdown));
        // At or above it: the first, then two left unmarked, then the next.
        let marks: Vec<bool> = (0..7).map(|_| cc.marks(32, false, &mut countdown)).collect();
        assert_eq!(marks, [true, false, false, true, false, false, true]);
        // An output waiting for credits is a victim: it marks only with the victim mask.
        let mut countdown = 0;
        assert!(!cc.marks(64, true, &mut countdown));
        let victims = InfiniBandCc { victim_mask: true, ..cc };
        assert!(victims.marks(64, true, &mut countdown));
    }

    #[test]
    fn a_notification_raises_the_delay_and_the_timer_lowers_it_step_by_step() {
        let cc = InfiniBandCc {
            ccti_increase: 2,
            ccti_timer: 100,
            ccti_limit: 5,
            ipd_step: 16,
            ..Default::default()
        };
        let ib = Scheme::InfiniBand(cc);
        let mut f = Flow::default();
        // A new flow sends at once.
        assert_eq!(f.next_send(&ib, 0, 8), 0);
        f.sent(&ib, 10, 8);
        // Without notifications: back to back (the tail, no gap).
        assert_eq!(f.next_send(&ib, 10, 8), 18);
        // Notified at 50: index 2, 32 cycles between a tail and the next head.
        f.notify(&ib, 0, 50, 8);
        assert_eq!(f.level(&ib, 50), 2);
        assert_eq!(f.next_send(&ib, 50, 8), 10 + 8 + 32);
        // The timer steps it down once every 100 cycles from the notification.
        assert_eq!(
            (f.level(&ib, 149), f.level(&ib, 150), f.level(&ib, 250), f.level(&ib, 10_000)),
            (2, 1, 0, 0)
        );
        assert!(!f.idle(&ib, 249, 8) && f.idle(&ib, 250, 8));
        // A flow that sent lately still matters: notifications would space its next
        // packet from that one (for up to the tail plus the table's largest delay, 80).
        let mut recent = Flow::default();
        recent.sent(&ib, 1000, 8);
        assert!(!recent.idle(&ib, 1088, 8) && recent.idle(&ib, 1089, 8));
        assert_eq!(ib.memory_horizon(8), 88);
        let mut notified = recent;
        for _ in 0..3 {
            notified.notify(&ib, 0, 1088, 8);
        }
        assert_eq!(notified.next_send(&ib, 1088, 8), 1088);
        assert_eq!(
            (f.next_step(&ib, 50), f.next_step(&ib, 149), f.next_step(&ib, 150), f.next_step(&ib, 250)),
            (150, 150, 250, u64::MAX)
        );
        // Notifications add up to the limit; a late one counts from what the timer left.
        f.notify(&ib, 0, 60, 8);
        f.notify(&ib, 0, 70, 8);
        assert_eq!(f.level(&ib, 70), 5);
        f.notify(&ib, 0, 370, 8);
        assert_eq!(f.level(&ib, 370), 4);
        // The timer stops at ccti_min.
        let floor = Scheme::InfiniBand(InfiniBandCc { ccti_min: 1, ..cc });
        let mut g = Flow::default();
        g.notify(&floor, 0, 0, 8);
        assert_eq!(g.level(&floor, 1_000), 1);
    }

    #[test]
    fn a_notified_flow_sends_its_share_until_the_throttle_ends_or_lapses() {
        let cc = PerDestinationCc { link_share: 0.8, min_senders: 6, window: 2, ..Default::default() };
        let pd = Scheme::PerDestination(cc);
        let mut f = Flow::default();
        f.sent(&pd, 100, 16);
        assert_eq!(f.next_send(&pd, 100, 16), 116);
        // Told at 150 that 10 endpoints send: the packet after the notice goes at once,
        // then one packet per 10 x 16 / 0.8 = 200 cycles, head to head.
        f.notify(&pd, 10, 150, 16);
        assert_eq!(f.level(&pd, 150), 10);
        assert_eq!(f.next_send(&pd, 150, 16), 116);
        f.sent(&pd, 160, 16);
        assert_eq!(f.next_send(&pd, 160, 16), 160 + 200);
        // It lapses when the flow has sent nothing for the destination's window (2 gaps,
        // 400 cycles), as the destination forgets a sender: at 560.
        assert_eq!((f.level(&pd, 559), f.level(&pd, 560)), (10, 0));
        assert_eq!((f.next_step(&pd, 300), f.next_step(&pd, 560)), (560, u64::MAX));
        assert!(!f.idle(&pd, 559, 16) && f.idle(&pd, 560, 16));
        // A notice that changes the count keeps the spacing (now 3 x 16 / 0.8 = 60).
        f.notify(&pd, 3, 500, 16);
        assert_eq!(f.next_send(&pd, 500, 16), 160 + 60);
        // Count 0 ends it; one after that begins anew: the next packet goes at once.
        f.notify(&pd, 0, 520, 16);
        assert_eq!(f.next_send(&pd, 520, 16), 176);
        assert!(f.idle(&pd, 520, 16));
        f.notify(&pd, 4, 530, 16);
        assert_eq!(f.next_send(&pd, 530, 16), 176);
        // Congested at 85 % of a 500-cycle interval.
        assert!(!cc.congested(424) && cc.congested(425));
        // The destination reports from 6 senders on (below, 0: no throttle); a sender
        // counts within 2 gaps (2 x 6 x 16 / 0.8).
        assert_eq!((cc.reported(5), cc.reported(6), cc.reported(70)), (0, 6, 70));
        assert_eq!(cc.window_cycles(6, 16), 240);
        // A gap is never shorter than the packet, and rounds up.
        assert_eq!((cc.gap(0, 16), cc.gap(1, 16), cc.gap(7, 4)), (20, 20, 35));
        // With a window of two packets the third waits for an acknowledgement.
        let windowed = Scheme::PerDestination(PerDestinationCc { max_outstanding: 2, ..cc });
        let mut w = Flow::default();
        w.sent(&windowed, 0, 16);
        assert!(w.window_open(&windowed));
        w.sent(&windowed, 16, 16);
        assert!(!w.window_open(&windowed) && !w.idle(&windowed, 1000, 16));
        w.acknowledged();
        assert!(w.window_open(&windowed));
        w.acknowledged();
        assert!(w.idle(&windowed, 1000, 16));
        assert!(windowed.tracks_every_flow() && !pd.tracks_every_flow());
    }
}
