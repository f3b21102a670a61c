//! NSCC, Ultra Ethernet's sender-based congestion control (UEC 1.0, "Network Signal-based
//! Congestion Control"), for the UEC-like transport: a window per connection, moved on
//! every acknowledgement by two signals, whether the acknowledged packet was ECN-marked by
//! a switch and how long its round trip took beyond the base one (its queueing delay).
//!
//! The rules follow UEC 1.0 as the consortium's reference simulator (uet-htsim) implements
//! them; its constants are scaled, as there, by the fabric's bandwidth-delay product
//! against a reference of 150,000 bytes (12 us at 100 Gb/s):
//!
//! | marked | delay vs target | action |
//! |---|---|---|
//! | no | above | fair increase: `fi` per window |
//! | no | below | proportional increase, `alpha (target - delay)` per window; fast increase near zero delay |
//! | yes | above | multiplicative decrease by `gamma (avg - target) / avg`, at most half, once per base RTT |
//! | yes | below | nothing (a transient queue) |
//!
//! Increases accumulate and are applied once per `8 x MTU` acknowledged or once per RTT,
//! with `eta` added once per RTT. Quick adapt: when, over a base RTT plus the target, the
//! connection delivered less than an eighth of the largest window and the delay exceeded
//! four targets, the window drops at once to what was delivered, and the marks of the
//! packets then in flight are ignored. Not modelled: packet trimming and its NACKs,
//! receiver credits (RCCC), and the load balancing the signals also drive.
//!
//! Units: phits and cycles (a link carries one phit a cycle).

/// NSCC's parameters for one fabric, derived from its base round trip ([`NsccParams::new`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NsccParams {
    /// The fabric's base round trip (cycles): the initial base RTT, the period of `eta`
    /// and of the increases' application.
    pub rtt: u64,
    /// Target queueing delay (cycles).
    pub target: f64,
    /// Smallest window (phits): one packet.
    pub min_window: f64,
    /// Largest window (phits): 1.5 bandwidth-delay products of the base round trip.
    pub max_window: f64,
    /// Fair increase per window (phits).
    pub fair: f64,
    /// Proportional increase per window per cycle of delay below the target.
    pub alpha: f64,
    /// Added once per RTT (phits).
    pub eta: f64,
    /// Fast increase: the share of each acknowledgement added at once.
    pub fast_scale: f64,
    /// Fast increase: the delay (cycles) below which acknowledgements count for it (1 us).
    pub fast_delay: f64,
    /// Multiplicative decrease's gain.
    pub gamma: f64,
    /// Weight of a sample in the averaged delay.
    pub delay_gain: f64,
    /// Phits acknowledged between applications of the increases (8 MTUs).
    pub adjust_phits: f64,
    /// Quick adapt: the delay above which it may fire (cycles, four targets).
    pub quick_delay: f64,
    /// Quick adapt: the share of the largest window below which what was delivered in a
    /// period must stay (1/8).
    pub quick_share: f64,
}

/// The reference bandwidth-delay product the constants scale against: 150,000 bytes.
const REFERENCE_BDP_BYTES: f64 = 150_000.0;

impl NsccParams {
    /// The parameters for a fabric whose base round trip is `rtt` cycles, packets of `mtu`
    /// phits, `bytes_per_phit` bytes a phit and `ps_per_cycle` picoseconds a cycle, with a
    /// `target` queueing delay (cycles; `None`: the round trip itself, as the reference
    /// simulator sets it without packet trimming).
    pub fn new(rtt: u64, mtu: u16, bytes_per_phit: u64, ps_per_cycle: u64, target: Option<f64>) -> Self {
        let rtt_f = rtt.max(1) as f64;
        let mtu = mtu as f64;
        // A link carries a phit a cycle: the bandwidth-delay product is the RTT in phits.
        let bdp = rtt_f;
        let scale = bdp * bytes_per_phit as f64 / REFERENCE_BDP_BYTES;
        let cycles_per_us = 1e6 / ps_per_cycle.max(1) as f64;
        let target = target.unwrap_or(rtt_f);
        NsccParams {
            rtt,
            target,
            min_window: mtu,
            max_window: 1.5 * bdp,
            fair: 5.0 * mtu * scale,
            // 4 MTUs per window for every 12 us of delay below the target, scaled.
            alpha: 4.0 * mtu * scale / (12.0 * cycles_per_us),
            eta: 0.15 * mtu * scale,
            fast_scale: 0.25 * scale,
            fast_delay: cycles_per_us,
            gamma: 0.8,
            delay_gain: 0.0125,
            adjust_phits: 8.0 * mtu,
            quick_delay: 4.0 * target,
            quick_share: 1.0 / 8.0,
        }
    }
}

/// One connection's NSCC state at its requester.
#[derive(Clone, Debug, PartialEq)]
pub struct NsccWindow {
    /// The window (phits).
    pub window: f64,
    /// The smallest round trip seen, and the largest window it allows (1.5 of its BDP).
    base_rtt: u64,
    max_window: f64,
    /// The averaged queueing delay (cycles).
    avg_delay: f64,
    /// Increases accumulated since they were last applied (phits squared), and the phits
    /// acknowledged since then.
    pending: f64,
    received: f64,
    last_adjust: u64,
    /// Fast increase: phits acknowledged at near-zero delay, and whether it is on.
    fast_count: f64,
    fast: bool,
    /// The last multiplicative decrease.
    last_decrease: Option<u64>,
    /// Quick adapt: phits delivered in the current period, when it ends (0: not started),
    /// the phits whose marks to ignore and those ignored so far.
    delivered: f64,
    quick_end: u64,
    ignore: f64,
    ignored: f64,
}

/// What one acknowledgement tells NSCC.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSignal {
    /// Phits it acknowledged for the first time.
    pub phits: f64,
    /// The acknowledged packet was ECN-marked.
    pub marked: bool,
    /// Its round trip (cycles), if the packet was sent once.
    pub rtt: Option<u64>,
    /// Phits still unacknowledged after it.
    pub in_flight: f64,
}

impl NsccWindow {
    /// A connection's state at its start: the largest window, the fabric's round trip.
    pub fn new(p: &NsccParams) -> Self {
        NsccWindow {
            window: p.max_window,
            base_rtt: p.rtt.max(1),
            max_window: p.max_window,
            avg_delay: 0.0,
            pending: 0.0,
            received: 0.0,
            last_adjust: 0,
            fast_count: 0.0,
            fast: false,
            last_decrease: None,
            delivered: 0.0,
            quick_end: 0,
            ignore: 0.0,
            ignored: 0.0,
        }
    }

    /// Whether a packet of `size` phits may go with `in_flight` phits unacknowledged: if
    /// it fits the window, or if nothing is in flight (a packet larger than the window, a
    /// scale-up one, still goes alone).
    pub fn may_send(&self, in_flight: u64, size: u16) -> bool {
        in_flight == 0 || in_flight as f64 + size as f64 <= self.window
    }

    fn clamp(&mut self, p: &NsccParams) {
        self.window = self.window.clamp(p.min_window, self.max_window.max(p.min_window));
    }

    /// An acknowledgement arrives at `t`.
    pub fn on_ack(&mut self, p: &NsccParams, ack: AckSignal, t: u64) {
        self.delivered += ack.phits;
        self.received += ack.phits;
        self.ignored += ack.phits;
        let delay = match ack.rtt {
            Some(rtt) => {
                if rtt < self.base_rtt {
                    // A shorter path or an emptier fabric: the window's ceiling follows.
                    self.base_rtt = rtt.max(1);
                    self.max_window = 1.5 * self.base_rtt as f64;
                }
                let delay = (rtt - self.base_rtt) as f64;
                // A large delay without a mark is a long path, not a queue: it counts for
                // a quarter of the base RTT in the average.
                let sample = if !ack.marked && delay > p.target { self.base_rtt as f64 / 4.0 } else { delay };
                self.avg_delay = (1.0 - p.delay_gain) * self.avg_delay + p.delay_gain * sample;
                delay
            }
            None => self.avg_delay,
        };
        if self.quick_adapt(p, &ack, delay, t) {
            return;
        }
        let above = delay >= p.target;
        match (ack.marked, above) {
            (false, true) => self.pending += p.fair * ack.phits,
            (false, false) => {
                if delay < p.fast_delay {
                    self.fast_count += ack.phits;
                    if self.fast_count > self.window || self.fast {
                        self.window += ack.phits * p.fast_scale;
                        self.fast = true;
                        self.clamp(p);
                        return;
                    }
                } else {
                    self.fast_count = 0.0;
                }
                self.fast = false;
                self.pending += p.alpha * ack.phits * (p.target - delay);
            }
            (true, true) => {
                self.fast = false;
                self.fast_count = 0.0;
                let due = self.last_decrease.is_none_or(|d| t - d > self.base_rtt);
                if self.avg_delay > p.target && due {
                    let cut = (p.gamma * (self.avg_delay - p.target) / self.avg_delay).min(0.5);
                    self.window *= 1.0 - cut;
                    self.last_decrease = Some(t);
                }
            }
            (true, false) => {}
        }
        self.clamp(p);
        let period = t.saturating_sub(self.last_adjust);
        if self.received > p.adjust_phits || period > p.rtt {
            self.window += self.pending / self.window;
            if period >= p.rtt {
                self.window += p.eta;
                self.last_adjust = t;
            }
            self.pending = 0.0;
            self.received = 0.0;
            self.clamp(p);
        }
    }

    /// Quick adapt's check on an acknowledgement: whether it consumed it (its mark
    /// ignored, or the window just dropped to what was delivered).
    fn quick_adapt(&mut self, p: &NsccParams, ack: &AckSignal, delay: f64, t: u64) -> bool {
        if self.ignored < self.ignore {
            if ack.marked {
                self.pending = 0.0;
                self.received = 0.0;
                return true;
            }
            return false;
        }
        if t <= self.quick_end {
            return false;
        }
        let fire =
            self.quick_end != 0 && delay > p.quick_delay && self.delivered < self.max_window * p.quick_share;
        if fire {
            self.window = self.delivered.max(p.min_window);
            self.ignore = ack.in_flight;
            self.ignored = 0.0;
        }
        self.delivered = 0.0;
        self.quick_end = t + self.base_rtt + p.target as u64;
        if fire {
            self.pending = 0.0;
            self.received = 0.0;
        }
        fire
    }

    /// A retransmission timeout declared `lost` phits lost: the window loses them (a
    /// packet's size for each packet that timed out).
    pub fn on_timeout(&mut self, p: &NsccParams, lost: u64) {
        self.window = (self.window - lost as f64).max(p.min_window);
    }
}

/// The unloaded round trip (cycles) of a packet of `mtu` phits from endpoint 0 to the
/// endpoint farthest from it and of an acknowledgement of `ack` phits back: the links'
/// latencies and `router_delay` per switch along the lowest-latency path, each packet's
/// serialization once (`store_and_forward`: at every switch too). Links at one phit a
/// cycle; 0 for a network without endpoints.
pub fn fabric_rtt(
    net: &topology::Network,
    router_delay: u64,
    store_and_forward: bool,
    mtu: u16,
    ack: u16,
) -> u64 {
    use std::cmp::Reverse;
    use topology::PortTarget;
    let Some(&(start, port)) = net.endpoint_location.first() else { return 0 };
    let latency = |s: u32, p: u16| net.link_classes[net.ports(s)[p as usize].class as usize].latency;
    // Lowest latency (links and switches) and its hops from endpoint 0's switch.
    let n = net.num_switches();
    let mut best = vec![(u64::MAX, 0u64); n];
    let mut heap = std::collections::BinaryHeap::new();
    best[start as usize] = (0, 0);
    heap.push(Reverse((0u64, 0u64, start)));
    while let Some(Reverse((d, hops, s))) = heap.pop() {
        if d > best[s as usize].0 {
            continue;
        }
        for p in net.ports(s) {
            if let PortTarget::Switch { switch, .. } = p.target {
                let next = d + net.link_classes[p.class as usize].latency + router_delay;
                if next < best[switch as usize].0 {
                    best[switch as usize] = (next, hops + 1);
                    heap.push(Reverse((next, hops + 1, switch)));
                }
            }
        }
    }
    let first = latency(start, port);
    let (far, hops) = net
        .endpoint_location
        .iter()
        .filter(|(s, _)| best[*s as usize].0 != u64::MAX)
        .map(|&(s, p)| (best[s as usize].0 + latency(s, p), best[s as usize].1))
        .max()
        .unwrap_or((0, 0));
    let one_way = |size: u16| {
        let tail = u64::from(size.max(1)) - 1;
        first + far + router_delay + tail * if store_and_forward { hops + 2 } else { 1 }
    };
    one_way(mtu) + one_way(ack)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 Gb/s as xnet runs it in the htsim comparison: 8-byte phits of 0.64 ns, 4 KiB
    /// packets (512 phits), a 14 us round trip.
    fn params() -> NsccParams {
        NsccParams::new(21_875, 512, 8, 640, None)
    }

    fn ack(phits: f64, marked: bool, rtt: Option<u64>) -> AckSignal {
        AckSignal { phits, marked, rtt, in_flight: 0.0 }
    }

    #[test]
    fn the_constants_scale_with_the_bandwidth_delay_product() {
        let p = params();
        // BDP: 21,875 phits of 8 bytes = 175,000 bytes, 7/6 of the reference.
        let scale = 175_000.0 / 150_000.0;
        assert_eq!(p.max_window, 1.5 * 21_875.0);
        assert!((p.fair - 5.0 * 512.0 * scale).abs() < 1e-9);
        assert!((p.eta - 0.15 * 512.0 * scale).abs() < 1e-9);
        // alpha: 4 MTUs per 12 us (18,750 cycles) of delay below the target.
        assert!((p.alpha * 18_750.0 - 4.0 * 512.0 * scale).abs() < 1e-9);
        assert_eq!((p.target, p.fast_delay, p.quick_delay), (21_875.0, 1562.5, 87_500.0));
    }

    #[test]
    fn a_marked_ack_above_the_target_cuts_once_per_base_rtt() {
        let p = params();
        let mut w = NsccWindow::new(&p);
        w.avg_delay = 2.0 * p.target;
        w.quick_end = u64::MAX; // quick adapt out of the way
        let before = w.window;
        // A marked sample of delay 2 x target: the average (weight 0.0125) stays at 2T, so
        // the cut is gamma x (2T - T) / 2T = 0.4.
        let rtt = p.rtt + 2 * p.target as u64;
        w.on_ack(&p, ack(512.0, true, Some(rtt)), 100);
        assert!((w.window - before * 0.6).abs() < 1e-6, "{} vs {}", w.window, before * 0.6);
        // Within a base RTT of it, no second cut (only eta, a base RTT after the start).
        let after = w.window;
        w.on_ack(&p, ack(512.0, true, Some(rtt)), 100 + p.rtt);
        assert!((w.window - (after + p.eta)).abs() < 1e-6);
        let after = w.window;
        // A base RTT later it cuts again, and a base RTT after the last eta, eta comes.
        w.on_ack(&p, ack(512.0, true, Some(rtt)), 101 + 2 * p.rtt);
        assert!((w.window - (after * 0.6 + p.eta)).abs() < 1e-6);
    }

    #[test]
    fn unmarked_acks_below_the_target_grow_the_window_proportionally() {
        let p = params();
        let mut w = NsccWindow::new(&p);
        w.window = 10_000.0;
        w.quick_end = u64::MAX;
        // Delay 0.5 target (above the fast-increase delay): pending grows by
        // alpha x phits x (T - D) and is applied after 8 MTUs.
        let d = (p.target / 2.0).floor();
        let rtt = p.rtt + d as u64;
        for i in 0..9 {
            w.on_ack(&p, ack(512.0, false, Some(rtt)), 10 + i);
        }
        let expected = 10_000.0 + 9.0 * p.alpha * 512.0 * (p.target - d) / 10_000.0;
        assert!((w.window - expected).abs() < 1e-6, "{} vs {expected}", w.window);
    }

    #[test]
    fn quick_adapt_drops_the_window_to_what_was_delivered() {
        let p = params();
        let mut w = NsccWindow::new(&p);
        // The first acknowledgement starts the period.
        w.on_ack(&p, ack(512.0, false, Some(p.rtt)), 1);
        let end = w.quick_end;
        assert_eq!(end, 1 + p.rtt + p.target as u64);
        // A base RTT and a target later, little delivered and a delay over 4 targets.
        let huge = p.rtt + 5 * p.target as u64;
        let signal = AckSignal { phits: 512.0, marked: true, rtt: Some(huge), in_flight: 4096.0 };
        w.on_ack(&p, signal, end + 1);
        assert_eq!(w.window, 512.0);
        // The marks of what was in flight are ignored: no cut below the floor.
        w.on_ack(&p, AckSignal { phits: 512.0, ..signal }, end + 2);
        assert_eq!(w.window, 512.0);
    }

    #[test]
    fn a_timeout_takes_what_timed_out_off_the_window() {
        let p = params();
        let mut w = NsccWindow::new(&p);
        w.window = 3000.0;
        w.on_timeout(&p, 1024);
        assert_eq!(w.window, 1976.0);
        // Never below a packet.
        w.on_timeout(&p, 4096);
        assert_eq!(w.window, 512.0);
    }
}
