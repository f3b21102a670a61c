//! DCQCN's parameters and a flow's rate at its source (Zhu et al., "Congestion Control for
//! Large-Scale RDMA Deployments", SIGCOMM 2015): the congestion point (a switch) marks
//! packets by RED on its egress queue, the notification point (the destination) answers
//! a flow's marked packets with at most one congestion notification (CNP) per
//! `cnp_interval`, and the reaction point (the source) cuts the flow's rate on each CNP by
//! its estimate `alpha` of the marked share and raises it again by timer and byte counter
//! in three stages: fast recovery, additive increase, hyper increase.

use serde::Deserialize;

/// DCQCN's parameters (`[congestion.dcqcn]`). Times in cycles, sizes in phits, rates as
/// shares of the source's link. The defaults are Zhu et al.'s, converted at 0.64 ns a
/// cycle and 16 bytes a phit (200 Gb/s links, `[workload]`'s defaults).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnCc {
    /// An output VC holding at most this many phits marks nothing (`Kmin`, 5 KB).
    pub kmin: u32,
    /// One holding at least this many marks every packet (`Kmax`, 200 KB).
    pub kmax: u32,
    /// The marking probability just below `kmax`, rising linearly from `kmin` (`Pmax`).
    pub pmax: f64,
    /// A destination sends a flow at most one CNP per this many cycles (`N`, 50 us).
    pub cnp_interval: u64,
    /// The gain of the source's estimate of the marked share (`g`, 1/256).
    pub g: f64,
    /// Cycles without a CNP after which that estimate decays by `1 - g` (`K`, 55 us).
    pub alpha_timer: u64,
    /// Cycles between the timer's rate increases (`T`, 55 us).
    pub rate_timer: u64,
    /// Phits sent between the byte counter's rate increases (`B`, 10 MB).
    pub byte_counter: u64,
    /// Increases of the timer and of the byte counter in fast recovery before additive
    /// increase (`F`, 5).
    pub fast_recovery: u32,
    /// The additive increase of the target rate (`R_AI`, 40 Mb/s: 0.0002 of 200 Gb/s).
    pub rate_ai: f64,
    /// The hyper increase's step (`R_HAI`, ten times `R_AI` as NVIDIA ConnectX's firmware
    /// defaults have it, 5 and 50 Mb/s).
    pub rate_hai: f64,
    /// The lowest rate a cut leaves (100 Mb/s: 0.0005, as htsim's DCQCN).
    pub min_rate: f64,
}

impl Default for DcqcnCc {
    fn default() -> Self {
        DcqcnCc {
            kmin: 320,
            kmax: 12_800,
            pmax: 0.01,
            cnp_interval: 78_125,
            g: 1.0 / 256.0,
            alpha_timer: 85_938,
            rate_timer: 85_938,
            byte_counter: 625_000,
            fast_recovery: 5,
            rate_ai: 0.0002,
            rate_hai: 0.002,
            min_rate: 0.0005,
        }
    }
}

impl DcqcnCc {
    /// The probability that a packet granted to an output whose VC then holds `queued`
    /// phits is marked (RED on the egress queue).
    pub fn mark_probability(&self, queued: u32) -> f64 {
        red(queued, self.kmin, self.kmax, self.pmax)
    }
}

/// RED's marking probability for a queue of `queued`: none up to `kmin`, rising linearly
/// to `pmax` just below `kmax`, every packet from `kmax` on (DCQCN's switches, and ECN for
/// NSCC with `pmax` = 1).
pub fn red(queued: u32, kmin: u32, kmax: u32, pmax: f64) -> f64 {
    if queued <= kmin {
        0.0
    } else if queued >= kmax {
        1.0
    } else {
        pmax * (queued - kmin) as f64 / (kmax - kmin) as f64
    }
}

/// A flow's rate at its source: the current rate `rc` and target `rt` as shares of the
/// link, the estimate `alpha`, and the increase stages since the last cut. Evaluated
/// lazily: timer events are applied when the flow is next looked at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnRate {
    rc: f64,
    rt: f64,
    alpha: f64,
    /// When the last cut came (the timers count from it).
    cut_at: u64,
    /// Timer increases applied since the cut (`T`), and byte-counter ones (`BC`).
    timer_events: u32,
    byte_events: u32,
    /// Phits sent since the last byte-counter event.
    bytes: u64,
    /// Whether a cut ever came (before the first, the flow runs at line rate).
    cut: bool,
}

impl Default for DcqcnRate {
    fn default() -> Self {
        DcqcnRate {
            rc: 1.0,
            rt: 1.0,
            alpha: 1.0,
            cut_at: 0,
            timer_events: 0,
            byte_events: 0,
            bytes: 0,
            cut: false,
        }
    }
}

impl DcqcnRate {
    /// The current rate after the timer events up to `t`.
    pub fn rate(&self, p: &DcqcnCc, t: u64) -> f64 {
        let mut copy = *self;
        copy.advance(p, t);
        copy.rc
    }

    /// Whether the flow runs at line rate at `t` (its state no longer matters).
    pub fn at_line_rate(&self, p: &DcqcnCc, t: u64) -> bool {
        self.rate(p, t) >= 1.0
    }

    /// When the timer next raises the rate, after `t` (`u64::MAX`: at line rate).
    pub fn next_increase(&self, p: &DcqcnCc, t: u64) -> u64 {
        let mut copy = *self;
        copy.advance(p, t);
        if copy.rc >= 1.0 {
            u64::MAX
        } else {
            copy.cut_at + (copy.timer_events as u64 + 1) * p.rate_timer.max(1)
        }
    }

    /// Applies the timer's increases due by `t`.
    fn advance(&mut self, p: &DcqcnCc, t: u64) {
        let timer = p.rate_timer.max(1);
        while self.rc < 1.0 && self.cut_at + (self.timer_events as u64 + 1) * timer <= t {
            self.timer_events += 1;
            self.increase(p);
        }
    }

    /// One increase event: fast recovery towards the target while both counts are at
    /// most `F`, additive increase of the target while one is, hyper increase once both
    /// exceed it.
    fn increase(&mut self, p: &DcqcnCc) {
        let f = p.fast_recovery;
        let (most, least) =
            (self.timer_events.max(self.byte_events), self.timer_events.min(self.byte_events));
        if most > f {
            if least > f {
                self.rt += (least - f) as f64 * p.rate_hai;
            } else {
                self.rt += p.rate_ai;
            }
        }
        self.rt = self.rt.min(1.0);
        self.rc = ((self.rt + self.rc) / 2.0).min(1.0);
        if 1.0 - self.rc < 1e-9 {
            self.rc = 1.0;
        }
    }

    /// A CNP arrives at `t`: the rate is cut by `alpha / 2` (the target keeps the rate
    /// before the cut), `alpha` rises, and the stages start again.
    pub fn notify(&mut self, p: &DcqcnCc, t: u64) {
        self.advance(p, t);
        if self.cut {
            // The estimate decayed by 1 - g for every alpha_timer without a CNP.
            let periods = (t - self.cut_at) / p.alpha_timer.max(1);
            self.alpha *= (1.0 - p.g).powi(periods.min(i32::MAX as u64) as i32);
        }
        self.rt = self.rc;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(p.min_rate);
        self.alpha = (1.0 - p.g) * self.alpha + p.g;
        self.cut_at = t;
        self.cut = true;
        self.timer_events = 0;
        self.byte_events = 0;
        self.bytes = 0;
    }

    /// The flow sent `phits` at `t`: the byte counter may raise the rate.
    pub fn sent(&mut self, p: &DcqcnCc, phits: u64, t: u64) {
        self.advance(p, t);
        if self.rc >= 1.0 {
            return;
        }
        self.bytes += phits;
        while self.bytes >= p.byte_counter.max(1) && self.rc < 1.0 {
            self.bytes -= p.byte_counter.max(1);
            self.byte_events += 1;
            self.increase(p);
        }
    }

    /// The estimate of the marked share (as of the last cut).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn red_marks_nothing_below_kmin_everything_above_kmax_and_linearly_between() {
        let p = DcqcnCc { kmin: 100, kmax: 300, pmax: 0.2, ..Default::default() };
        assert_eq!(p.mark_probability(100), 0.0);
        assert!((p.mark_probability(200) - 0.1).abs() < 1e-12);
        assert_eq!(p.mark_probability(300), 1.0);
    }

    #[test]
    fn a_cnp_cuts_the_rate_by_half_alpha_and_the_stages_bring_it_back() {
        let p = DcqcnCc {
            rate_timer: 100,
            alpha_timer: 100,
            g: 1.0 / 16.0,
            byte_counter: 1000,
            fast_recovery: 2,
            rate_ai: 0.01,
            rate_hai: 0.1,
            ..Default::default()
        };
        let mut r = DcqcnRate::default();
        // The first CNP: alpha is 1, the rate halves; alpha becomes 1 - g + g = 1.
        r.notify(&p, 1000);
        assert_eq!(r.rate(&p, 1000), 0.5);
        assert_eq!(r.alpha(), 1.0);
        // Fast recovery: each timer event halves the distance to the target (1.0).
        assert_eq!(r.rate(&p, 1099), 0.5);
        assert_eq!(r.rate(&p, 1100), 0.75);
        assert_eq!(r.rate(&p, 1200), 0.875);
        assert_eq!(r.next_increase(&p, 1200), 1300);
        // A second CNP 250 cycles later: alpha decayed twice (two alpha timers), the cut
        // takes alpha / 2 of the rate then (the timer made it 0.875).
        r.notify(&p, 1250);
        let alpha = (1.0 - p.g) * (1.0 - p.g);
        assert!((r.rate(&p, 1250) - 0.875 * (1.0 - alpha / 2.0)).abs() < 1e-12);
        assert!((r.alpha() - ((1.0 - p.g) * alpha + p.g)).abs() < 1e-12);
        // Past F timer events the target rises by R_AI each; past F byte events too, by
        // i x R_HAI (hyper increase).
        let mut s = DcqcnRate::default();
        s.notify(&p, 0);
        let rc0 = s.rate(&p, 0);
        assert_eq!(rc0, 0.5);
        // Two fast-recovery timer events: 0.75, 0.875; the third adds R_AI to the target.
        assert!((s.rate(&p, 300) - (0.875 + 1.01_f64.min(1.0)) / 2.0).abs() < 1e-12);
        // The byte counter counts too: 3 x 1000 phits is three events.
        let mut b = DcqcnRate::default();
        b.notify(&p, 0);
        b.sent(&p, 3000, 50);
        // Two in fast recovery (0.75, 0.875), the third past F adds R_AI to the target
        // (capped at the line): 0.9375.
        assert_eq!(b.rate(&p, 50), 0.9375);
        // At line rate nothing more is scheduled.
        assert!(b.at_line_rate(&p, 100_000));
        assert_eq!(b.next_increase(&p, 100_000), u64::MAX);
        // A cut never goes below the floor.
        let mut low = DcqcnRate { rc: 0.001, ..DcqcnRate::default() };
        low.notify(&p, 10);
        assert_eq!(low.rate(&p, 10), p.min_rate);
    }
}
