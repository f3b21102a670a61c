//! Whether a load point is saturated: how far its packets in flight grew over the second
//! half of the measurement window, and how sure that growth is (docs/router.md, "When a
//! load point counts as saturated").

use super::schema::{Sample, SATURATED_BACKLOG, SATURATED_Z};
use crate::stats::Counters;

/// How far the packets in flight grew in the second half of the measurement window
/// `[warmup, end)` (the first half lets them reach their steady level after warm-up), and
/// how sure that growth is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Backlog {
    /// The share of the packets generated (or refused) in the second half not delivered in
    /// it.
    pub(crate) growth: f64,
    /// That excess in packets over its standard error (see [`backlog`]).
    pub(crate) z: f64,
}

/// The [`Backlog`] of a run from its time series. Per sample period `i` of the second half
/// the excess `d_i` = generated + refused - delivered is what the packets in flight grew by,
/// and their sum, the growth, is the packets in flight at the end less those at the middle.
/// Below saturation that count is stationary, so the sum is one difference of it: its
/// standard error is that of one step, the sample deviation of the `d_i` (the periods are
/// far longer than a packet's latency, so the count forgets between samples), and never
/// less than `sqrt(2 L)`, `L` being the mean packets in flight over the half (a count of
/// packets in flight that come and go independently varies by its mean, so a difference of
/// two varies by twice it): a few periods that happen to agree prove nothing. Past
/// saturation every `d_i` has the same positive mean and the sum grows with the periods
/// while the error does not. `measured` covers the whole window and stands in (with the
/// Poisson noise of its counts, `sqrt(generated + delivered)`, as the error) when no sample
/// period lies in the second half.
pub(crate) fn backlog(samples: &[Sample], warmup: u64, end: u64, measured: &Counters) -> Backlog {
    let middle = warmup + end.saturating_sub(warmup) / 2;
    let mut excess: Vec<f64> = Vec::new();
    let (mut generated, mut delivered, mut start, mut in_flight) = (0u64, 0u64, 0u64, 0f64);
    for s in samples {
        if start >= middle && s.time <= end {
            let g = s.counters.generated_packets + s.counters.refused_packets;
            generated += g;
            delivered += s.counters.delivered_packets;
            in_flight += s.in_flight as f64;
            excess.push(g as f64 - s.counters.delivered_packets as f64);
        }
        start = s.time;
    }
    let noise = if generated == 0 {
        generated = measured.generated_packets + measured.refused_packets;
        delivered = measured.delivered_packets;
        ((generated + delivered) as f64).sqrt()
    } else {
        let n = excess.len() as f64;
        let mean = excess.iter().sum::<f64>() / n;
        let deviation = if excess.len() >= 2 {
            (excess.iter().map(|d| (d - mean) * (d - mean)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        deviation.max((2.0 * in_flight / n).sqrt())
    };
    if generated == 0 {
        return Backlog { growth: 0.0, z: 0.0 };
    }
    let gap = generated as f64 - delivered as f64;
    Backlog { growth: gap / generated as f64, z: gap / noise.max(1.0) }
}

/// Whether a point with this backlog is saturated: the packets in flight grew by more than
/// [`SATURATED_BACKLOG`] of the half-window's generation, and by more than
/// [`SATURATED_Z`] standard errors (so not by chance).
pub(crate) fn saturated(b: Backlog) -> bool {
    b.growth > SATURATED_BACKLOG && b.z > SATURATED_Z
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(time: u64, generated: u64, delivered: u64) -> Sample {
        let counters =
            Counters { generated_packets: generated, delivered_packets: delivered, ..Default::default() };
        Sample { time, counters, in_flight: 0, accepted_load: 0.0 }
    }

    #[test]
    fn backlog_growth_reads_the_second_half_of_the_window() {
        let growth = |samples: &[Sample], w, e, m: &Counters| backlog(samples, w, e, m).growth;
        // Window [100, 500): the fill-up after warm-up (periods before 300) is ignored.
        let filling = [sample(100, 50, 0), sample(200, 100, 20), sample(300, 100, 60)];
        let steady = [sample(400, 100, 100), sample(500, 100, 98)];
        let all: Vec<Sample> = filling.iter().chain(&steady).cloned().collect();
        let whole = Counters::default();
        assert!((growth(&all, 100, 500, &whole) - 0.01).abs() < 1e-12);
        // Growing backlog: half of the generation piles up.
        let growing = [sample(400, 100, 50), sample(500, 100, 50)];
        let all: Vec<Sample> = filling.iter().chain(&growing).cloned().collect();
        assert!((growth(&all, 100, 500, &whole) - 0.5).abs() < 1e-12);
        // No sample period in the second half: the whole window's counters stand in.
        let whole = Counters { generated_packets: 10, delivered_packets: 7, ..Default::default() };
        assert!((growth(&[sample(500, 400, 0)], 0, 500, &whole) - 0.3).abs() < 1e-12);
        assert_eq!(backlog(&[], 0, 500, &Counters::default()), Backlog { growth: 0.0, z: 0.0 });
    }

    /// A small network's packets in flight fluctuate by several percent of a half-window's
    /// generation: a growth of 3.6 % within that noise is not saturation, while the same
    /// number of periods each piling up 40 % of their generation is.
    #[test]
    fn saturation_needs_growth_beyond_the_noise() {
        // Periods of 100 packets from cycle 900 on (the second half of [400, 1400)), starting
        // with 20 packets in flight.
        let window = |excess: &[i64]| -> Vec<Sample> {
            let mut v = vec![sample(900, 100, 100)];
            let mut in_flight = 20;
            for (i, &d) in excess.iter().enumerate() {
                in_flight += d;
                let mut s = sample(1000 + 100 * i as u64, 100, (100 - d) as u64);
                s.in_flight = in_flight as u64;
                v.push(s);
            }
            v
        };
        let noisy = window(&[10, -8, 12, -5, 9]);
        let b = backlog(&noisy, 400, 1400, &Counters::default());
        assert!((b.growth - 18.0 / 500.0).abs() < 1e-12 && b.growth > SATURATED_BACKLOG, "{b:?}");
        // The steps' deviation (9.34) is the error: 18 packets are 1.9 of it.
        assert!((b.z - 18.0 / 87.3f64.sqrt()).abs() < 1e-9 && !saturated(b), "{b:?}");
        let growing = window(&[40, 40, 40, 40, 40]);
        let b = backlog(&growing, 400, 1400, &Counters::default());
        // Equal steps have no deviation: 2 x the mean in flight (140) bounds the error.
        assert!((b.z - 200.0 / 280f64.sqrt()).abs() < 1e-9 && saturated(b), "{b:?}");
        // Growth far beyond the noise but below 1 % (a huge network's slow drift) is not
        // saturation either.
        let big: Vec<Sample> = (0..10).map(|i| sample(100 * (i + 1), 1_000_000, 995_000)).collect();
        let b = backlog(&big, 0, 1000, &Counters::default());
        assert!(b.z > 10.0 && (b.growth - 0.005).abs() < 1e-12 && !saturated(b), "{b:?}");
    }
}
