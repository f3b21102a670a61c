//! Traffic: Bernoulli open-loop injection and destination patterns.
//!
//! Every endpoint generates a packet in each cycle with probability `load / packet_size`
//! (load in phits per cycle per endpoint); the gaps are drawn from the geometric
//! distribution, so a generation costs one event however light the load. Packets wait in
//! an unbounded source queue, so the offered load is honest past saturation.

use crate::rng::{below, shuffle, stream, unit, Purpose, Rng};
use crate::topology::{EndpointId, Network, Shape};
use serde::{Deserialize, Serialize};

/// Destination patterns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "pattern", rename_all = "snake_case", deny_unknown_fields)]
pub enum PatternSpec {
    /// Uniformly random destination other than the source.
    Uniform,
    /// A random permutation of the endpoints without fixed points, fixed for the run.
    RandomPermutation,
    /// Dragonfly: same position in the next group; other topologies: same position in
    /// the next block of `block_switches` consecutive switches.
    GroupShift {
        /// Switches per block for non-Dragonfly topologies (default: `sqrt` of the switch
        /// count, rounded down to a divisor).
        #[serde(default)]
        block_switches: Option<u32>,
    },
    /// Endpoint `i` sends to the bit-reversal of `i` (endpoint count a power of two).
    BitReversal,
    /// Endpoint `i`, seen as a pair of half-width bit fields `(hi, lo)`, sends to `(lo, hi)`
    /// (endpoint count an even power of two).
    Transpose,
    /// HyperX and torus: every switch coordinate advances by `ceil(k / 2) - 1`, same
    /// terminal port.
    Tornado,
    /// A fraction of the packets goes to one endpoint, the rest is uniform.
    HotSpot {
        /// Fraction in `[0, 1]` of packets sent to the hot endpoint.
        fraction: f64,
        /// The hot endpoint (default 0).
        #[serde(default)]
        endpoint: u32,
    },
}

/// A built destination pattern.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// Uniform over the other endpoints.
    Uniform {
        /// Number of endpoints.
        n: u32,
    },
    /// A fixed map from source to destination.
    Map(Vec<EndpointId>),
    /// Hot spot.
    HotSpot {
        /// Number of endpoints.
        n: u32,
        /// Probability of the hot destination.
        fraction: f64,
        /// The hot destination.
        hot: EndpointId,
    },
}

/// A pattern that does not fit the network; the message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("traffic.{key}: {message}")]
pub struct PatternError {
    /// The offending key.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

fn err(key: &str, message: impl Into<String>) -> PatternError {
    PatternError { key: key.into(), message: message.into() }
}

impl Pattern {
    /// Builds the pattern for `net`; random patterns are drawn from `seed`.
    pub fn build(spec: &PatternSpec, net: &Network, seed: u64) -> Result<Self, PatternError> {
        let n = net.num_endpoints() as u32;
        if n < 2 {
            return Err(err("pattern", "needs at least 2 endpoints"));
        }
        let map = |f: &dyn Fn(u32) -> u32| Pattern::Map((0..n).map(f).collect());
        Ok(match spec {
            PatternSpec::Uniform => Pattern::Uniform { n },
            PatternSpec::RandomPermutation => {
                let mut rng = stream(seed, Purpose::Pattern, 0);
                let mut perm: Vec<u32> = (0..n).collect();
                shuffle(&mut rng, &mut perm);
                // A random cyclic order: each endpoint sends to the next one. No fixed points.
                let mut dst = vec![0; n as usize];
                for i in 0..n as usize {
                    dst[perm[i] as usize] = perm[(i + 1) % n as usize];
                }
                Pattern::Map(dst)
            }
            PatternSpec::GroupShift { block_switches } => {
                let switches = net.num_switches() as u32;
                let block = match (&net.shape, block_switches) {
                    (Shape::Dragonfly(d), None) => d.a,
                    (_, Some(b)) => *b,
                    (_, None) => {
                        let mut b = (switches as f64).sqrt() as u32;
                        while b > 1 && !switches.is_multiple_of(b) {
                            b -= 1;
                        }
                        b.max(1)
                    }
                };
                if block == 0 || !switches.is_multiple_of(block) || block == switches {
                    return Err(err(
                        "block_switches",
                        format!("{block} must divide the {switches} switches into at least 2 blocks"),
                    ));
                }
                let first_endpoint = first_endpoints(net);
                map(&|e| {
                    let (s, port) = net.endpoint_location[e as usize];
                    let t = (s + block) % switches;
                    let terminals = net.terminals[t as usize] as u32;
                    if terminals == 0 {
                        e
                    } else {
                        first_endpoint[t as usize] + (port as u32 % terminals)
                    }
                })
            }
            PatternSpec::BitReversal | PatternSpec::Transpose => {
                if !n.is_power_of_two() {
                    return Err(err(
                        "pattern",
                        format!("needs a power-of-two endpoint count, the network has {n}"),
                    ));
                }
                let bits = n.trailing_zeros();
                if matches!(spec, PatternSpec::BitReversal) {
                    map(&|e| {
                        if bits == 0 {
                            e
                        } else {
                            e.reverse_bits() >> (32 - bits)
                        }
                    })
                } else {
                    if !bits.is_multiple_of(2) {
                        return Err(err(
                            "pattern",
                            format!("transpose needs an even power of two endpoints, the network has {n}"),
                        ));
                    }
                    let half = bits / 2;
                    let mask = (1 << half) - 1;
                    map(&|e| ((e & mask) << half) | (e >> half))
                }
            }
            PatternSpec::Tornado => {
                let sides = match &net.shape {
                    Shape::HyperX(h) => h.sides.clone(),
                    Shape::Torus(t) => t.sides.clone(),
                    _ => return Err(err("pattern", "tornado needs a hyperx or torus topology")),
                };
                let first_endpoint = first_endpoints(net);
                map(&|e| {
                    let (s, port) = net.endpoint_location[e as usize];
                    let mut t = 0;
                    let mut stride = 1;
                    let mut rest = s;
                    for &k in &sides {
                        let c = rest % k;
                        rest /= k;
                        t += ((c + k.div_ceil(2) - 1) % k) * stride;
                        stride *= k;
                    }
                    first_endpoint[t as usize] + port as u32
                })
            }
            PatternSpec::HotSpot { fraction, endpoint } => {
                if !(0.0..=1.0).contains(fraction) {
                    return Err(err("fraction", format!("must be in [0, 1], got {fraction}")));
                }
                if *endpoint >= n {
                    return Err(err(
                        "endpoint",
                        format!("must be < {n} (the endpoint count), got {endpoint}"),
                    ));
                }
                Pattern::HotSpot { n, fraction: *fraction, hot: *endpoint }
            }
        })
    }

    /// Destination of the next packet from `src`.
    #[inline]
    pub fn destination(&self, src: EndpointId, rng: &mut Rng) -> EndpointId {
        let uniform = |n: u32, rng: &mut Rng| {
            let d = below(rng, n as u64 - 1) as u32;
            if d >= src {
                d + 1
            } else {
                d
            }
        };
        match self {
            Pattern::Uniform { n } => uniform(*n, rng),
            Pattern::Map(m) => m[src as usize],
            Pattern::HotSpot { n, fraction, hot } => {
                if unit(rng) < *fraction {
                    *hot
                } else {
                    uniform(*n, rng)
                }
            }
        }
    }
}

fn first_endpoints(net: &Network) -> Vec<u32> {
    let mut first = Vec::with_capacity(net.num_switches());
    let mut acc = 0;
    for &t in &net.terminals {
        first.push(acc);
        acc += t as u32;
    }
    first
}

/// Cycles until the next Bernoulli success with probability `p` per cycle, counting the
/// current cycle as 0 (so 0 means "now"). `None` if `p == 0`.
#[inline]
pub fn geometric_gap(rng: &mut Rng, p: f64) -> Option<u64> {
    if p <= 0.0 {
        return None;
    }
    if p >= 1.0 {
        return Some(0);
    }
    // Inversion: floor(ln(U) / ln(1 - p)) with U in (0, 1].
    let u = 1.0 - unit(rng);
    Some((u.ln() / (-p).ln_1p()).floor() as u64)
}
