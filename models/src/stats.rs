//! Statistics: integer counters and histograms that merge exactly across partitions.
//!
//! Everything is counted in integers and merged by addition, so the totals do not depend
//! on how routers were spread over threads or ranks; floating-point figures are derived
//! only at the end.

use serde::{Deserialize, Serialize};

/// A histogram of non-negative integers: exact below 1024, then 64 buckets per power of
/// two (relative error under 1.6 %).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    sum: u128,
    max: u64,
}

const EXACT: u64 = 1024;
const SUB_BITS: u32 = 6;

impl Histogram {
    fn bucket(v: u64) -> usize {
        if v < EXACT {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros(); // >= 10
        let sub = (v >> (msb - SUB_BITS)) & ((1 << SUB_BITS) - 1);
        EXACT as usize + ((msb - 10) as usize) * (1 << SUB_BITS) + sub as usize
    }

    /// Smallest value that falls in bucket `b`.
    pub fn bucket_low(b: usize) -> u64 {
        if (b as u64) < EXACT {
            return b as u64;
        }
        let k = b - EXACT as usize;
        let msb = 10 + (k >> SUB_BITS) as u32;
        let sub = (k & ((1 << SUB_BITS) - 1)) as u64;
        (1u64 << msb) | (sub << (msb - SUB_BITS))
    }

    /// Adds one observation.
    #[inline]
    pub fn record(&mut self, v: u64) {
        let b = Self::bucket(v);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.total += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }

    /// Adds another histogram's observations.
    pub fn merge(&mut self, other: &Histogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    /// Number of observations.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Largest observation (0 if none).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Exact sum of observations.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Mean (NaN if empty).
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    /// The `q`-quantile (`0 <= q <= 1`) as the lower bound of its bucket (NaN if empty).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::bucket_low(b).min(self.max) as f64;
            }
        }
        self.max as f64
    }

    /// Non-empty buckets as `(lower bound, count)`.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(b, &c)| (Self::bucket_low(b), c))
    }
}

/// Declares [`Counters`]: integer counts that merge by addition. A new counter is one
/// line here plus the code that counts it; it reaches the output through the result schema
/// (`sim::schema`).
macro_rules! counters {
    ($($(#[doc = $doc:literal])+ $name:ident;)+) => {
        /// Counters of one sampling period (or of the whole measurement).
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct Counters {
            $($(#[doc = $doc])+ pub $name: u64,)+
        }

        impl Counters {
            /// Adds `other` into `self`: every counter adds up.
            pub fn merge(&mut self, other: &Counters) {
                $(self.$name += other.$name;)+
            }
        }
    };
}

counters! {
    /// Packets generated (into a source queue).
    generated_packets;
    /// Phits generated.
    generated_phits;
    /// Packets refused at generation because the source queue was full
    /// (`router.source_queue`); not counted in `generated_packets`.
    refused_packets;
    /// Phits refused.
    refused_phits;
    /// Packets whose head left the source endpoint.
    injected_packets;
    /// Phits injected.
    injected_phits;
    /// Packets delivered (tail received).
    delivered_packets;
    /// Phits delivered.
    delivered_phits;
    /// Sum of packet latencies (creation to delivery) of the delivered packets.
    latency_sum;
    /// Sum of network latencies (injection to delivery) of the delivered packets.
    network_latency_sum;
    /// Sum of switch-to-switch hops of the delivered packets.
    hops_sum;
    /// Packet transmissions over any link (progress, for the watchdog).
    link_transmissions;
    /// Partitions whose process had been asked to stop (a signal) when the period was
    /// reported: a signal to any rank stops the whole run (at the end of the window it is seen in).
    stop_requests;
    /// Application ranks that finished their program.
    finished_ranks;
    /// Ops of application ranks that ended (progress of the workload).
    ended_ops;
    /// Unfinished application ranks computing or sending at the period's end (a gauge, not
    /// a count over the period).
    busy_ranks;
    /// Phits generated or refused for the congestion's targets (`congestion.targets`): the
    /// aggressors' offered traffic.
    aggressor_offered_phits;
    /// Packets delivered to the congestion's targets.
    aggressor_delivered_packets;
    /// Phits delivered to the congestion's targets.
    aggressor_delivered_phits;
    /// Sum of the latencies of the aggressors' packets counted in `aggressor_latency_count`
    /// (as `latency_sum`: delivered in the period; over the measurement, created in it).
    aggressor_latency_sum;
    /// Aggressors' packets behind `aggressor_latency_sum`.
    aggressor_latency_count;
    /// Packets a switch marked congested (FECN) with `congestion.control` (once each,
    /// however many switches on their way would have).
    marked_packets;
    /// Congestion notifications (CNPs) that reached the source they slow.
    notifications;
    /// Packets dropped at a switch's input for want of room (`router.flow_control` =
    /// `pfc` or `none`).
    dropped_packets;
    /// Phits of those packets.
    dropped_phits;
    /// PFC pauses that reached a sender (`router.flow_control = "pfc"`).
    pause_frames;
    /// Packets a link replayed because a bit went wrong (`[router.link_errors]`), each
    /// replay counted.
    link_retries;
    /// Packets delivered after a packet of the same flow (source, destination) that left
    /// the source later (`simulation.reordering`).
    reordered_packets;
    /// Sum of their late-time offsets: how much earlier they left than the latest packet
    /// of their flow delivered before them, in cycles.
    reorder_late_sum;
    /// Packets a transport sent again (`transport.kind = "rc"`: going back after a NAK or
    /// a timeout).
    retransmitted_packets;
    /// Timeouts of a transport's connections (nothing acknowledged for `timeout` cycles).
    transport_timeouts;
    /// Data packets a transport's responder dropped on arrival: out of sequence (after a
    /// gap) or duplicates.
    discarded_packets;
    /// NAKs a transport's responders sent.
    naks;
    /// Connections that gave up after their retries.
    failed_connections;
    /// Packets lost on a link that was down (`router.link_flaps`), among the drops.
    down_link_drops;
    /// Data packets a selective transport's responder received ahead of a gap and held.
    out_of_order_packets;
    /// Control packets sent through the network: a transport's ACKs and NAKs, congestion
    /// notifications sent as packets. Not data: in no load or latency figure.
    control_packets;
    /// Control packets that arrived.
    control_delivered;
    /// Connections with packets unacknowledged and their timer running at the period's
    /// end (a gauge): a run whose packets stand still while they wait for a timeout is
    /// not deadlocked.
    waiting_connections;
}

/// Jain's fairness index of `xs`: `(sum x)^2 / (n * sum x^2)`; 1 when all equal (and for
/// an all-zero input).
pub fn jain(xs: impl IntoIterator<Item = u64>) -> f64 {
    let (mut n, mut s, mut s2) = (0u64, 0u128, 0u128);
    for x in xs {
        n += 1;
        s += x as u128;
        s2 += (x as u128) * (x as u128);
    }
    if s2 == 0 {
        return 1.0;
    }
    (s as f64) * (s as f64) / (n as f64 * s2 as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_are_exact_below_1024_and_close_above() {
        let mut h = Histogram::default();
        for v in 1..=100 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), 50.0);
        assert_eq!(h.quantile(0.99), 99.0);
        assert_eq!(h.max(), 100);
        assert_eq!(h.mean(), 50.5);
        let mut big = Histogram::default();
        big.record(100_000);
        let q = big.quantile(0.5);
        assert!((q - 100_000.0).abs() / 100_000.0 < 0.016, "{q}");
        for b in 0..2000 {
            assert_eq!(Histogram::bucket(Histogram::bucket_low(b)), b);
        }
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let (mut a, mut b, mut all) = (Histogram::default(), Histogram::default(), Histogram::default());
        for v in [3, 5000, 17, 1 << 20] {
            a.record(v);
            all.record(v);
        }
        for v in [9, 2048] {
            b.record(v);
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a, all);
    }

    #[test]
    fn jain_index_extremes() {
        assert_eq!(jain([5, 5, 5, 5]), 1.0);
        assert!((jain([1, 0, 0, 0]) - 0.25).abs() < 1e-12);
    }
}
