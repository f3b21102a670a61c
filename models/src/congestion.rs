//! End-to-end congestion control: InfiniBand's (InfiniBand Architecture Specification,
//! Volume 1, Annex A10, "Congestion Control"; the parameter names are those `ibccconfig`
//! sets). A switch marks a packet (FECN) when the output it is granted to is congested;
//! the destination answers each marked packet with a congestion notification packet (CNP,
//! carrying the BECN) to its source; the source raises the flow's index into its
//! congestion control table (CCT) and spaces the flow's packets by the table's
//! inter-packet delay; a timer lowers the index again.
//!
//! Here the parameters, the switch's marking rule and a flow's state at the source, as
//! pure functions of time: the router (`router/`) calls them. A flow is a (source,
//! destination) pair, as an HCA with one queue pair per destination would have.

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

/// One flow's congestion state at its source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    /// CCT index as of `since`.
    ccti: u16,
    /// When the timer last stepped the index (or the flow was first notified).
    since: u64,
    /// When the flow's last packet left the source (its head).
    last_sent: u64,
    /// Whether a packet was sent since the flow was created.
    sent: bool,
}

impl Flow {
    /// The index at `t`: the timer steps it down by one every `ccti_timer` cycles since
    /// `since`, to `ccti_min`.
    pub fn ccti(&self, cc: &InfiniBandCc, t: u64) -> u16 {
        let steps = (t.saturating_sub(self.since) / cc.ccti_timer.max(1) as u64).min(u16::MAX as u64) as u16;
        self.ccti.saturating_sub(steps).max(cc.ccti_min.min(self.ccti))
    }

    /// A notification (BECN) arrives at `t`: the index goes up by `ccti_increase`, to
    /// `ccti_limit`, and the timer restarts.
    pub fn notify(&mut self, cc: &InfiniBandCc, t: u64) {
        self.ccti = self.ccti(cc, t).saturating_add(cc.ccti_increase).min(cc.ccti_limit);
        self.since = t;
    }

    /// The earliest cycle the flow may send its next packet, `size` phits, at its
    /// index at `t`: the last packet's tail plus the inter-packet delay.
    pub fn next_send(&self, cc: &InfiniBandCc, t: u64, size: u16) -> u64 {
        if !self.sent {
            return 0;
        }
        self.last_sent + size as u64 + cc.ipd(self.ccti(cc, t))
    }

    /// When the timer next lowers the index, after `t` (`u64::MAX`: it is at its floor):
    /// a flow that waits may go sooner then.
    pub fn next_step(&self, cc: &InfiniBandCc, t: u64) -> u64 {
        if self.ccti(cc, t) <= cc.ccti_min.min(self.ccti) {
            return u64::MAX;
        }
        let timer = cc.ccti_timer.max(1) as u64;
        self.since + (t.saturating_sub(self.since) / timer + 1) * timer
    }

    /// The flow sends a packet at `t`.
    pub fn sent(&mut self, t: u64) {
        self.last_sent = t;
        self.sent = true;
    }

    /// Whether the flow's state no longer matters at `t`: no delay, and its last packet
    /// so long ago that no delay the table holds would still hold its next one back.
    pub fn idle(&self, cc: &InfiniBandCc, t: u64, size: u16) -> bool {
        self.ccti(cc, t) == 0 && (!self.sent || self.last_sent + size as u64 + cc.ipd(cc.ccti_limit) < t)
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
        let mut f = Flow::default();
        // A new flow sends at once.
        assert_eq!(f.next_send(&cc, 0, 8), 0);
        f.sent(10);
        // Without notifications: back to back (the tail, no gap).
        assert_eq!(f.next_send(&cc, 10, 8), 18);
        // Notified at 50: index 2, 32 cycles between a tail and the next head.
        f.notify(&cc, 50);
        assert_eq!(f.ccti(&cc, 50), 2);
        assert_eq!(f.next_send(&cc, 50, 8), 10 + 8 + 32);
        // The timer steps it down once every 100 cycles from the notification.
        assert_eq!((f.ccti(&cc, 149), f.ccti(&cc, 150), f.ccti(&cc, 250), f.ccti(&cc, 10_000)), (2, 1, 0, 0));
        assert!(!f.idle(&cc, 249, 8) && f.idle(&cc, 250, 8));
        // A flow that sent lately still matters: a notification would space its next
        // packet from that one (for up to the tail plus the table's largest delay, 80).
        let mut recent = Flow::default();
        recent.sent(1000);
        assert!(!recent.idle(&cc, 1088, 8) && recent.idle(&cc, 1089, 8));
        assert_eq!(
            (f.next_step(&cc, 50), f.next_step(&cc, 149), f.next_step(&cc, 150), f.next_step(&cc, 250)),
            (150, 150, 250, u64::MAX)
        );
        // Notifications add up to the limit; a late one counts from what the timer left.
        f.notify(&cc, 60);
        f.notify(&cc, 70);
        assert_eq!(f.ccti(&cc, 70), 5);
        f.notify(&cc, 370);
        assert_eq!(f.ccti(&cc, 370), 4);
        // The timer stops at ccti_min.
        let floor = InfiniBandCc { ccti_min: 1, ..cc };
        let mut g = Flow::default();
        g.notify(&floor, 0);
        assert_eq!(g.ccti(&floor, 1_000), 1);
    }
}
