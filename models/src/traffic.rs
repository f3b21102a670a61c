//! Traffic: Bernoulli open-loop injection and destination patterns.
//!
//! Every endpoint generates a packet in each cycle with probability `load / packet_size`
//! (load in phits per cycle per endpoint); the gaps are drawn from the geometric
//! distribution, so a generation costs one event however light the load. Packets wait in
//! an unbounded source queue, so the offered load is honest past saturation.
//!
//! Where the patterns come from: `random_permutation` is the random server permutation of
//! Camarero et al., "Achieving High-Performance Fault-Tolerant Routing in HyperX
//! Interconnection Networks", arXiv:2404.04315, 2024, section 4 (here without fixed
//! points); `group_shift` is the adversarial pattern of Pascual and Navaridas,
//! "High-Performance, Low-Complexity Deadlock Avoidance for Arbitrary Topologies/Routings",
//! ICS'18, section 7.1 (group `i` to group `i + 1`, blocks of switches on other networks),
//! here as a permutation; `bit_reversal`, `transpose` and `tornado` are those of Dally and
//! Towles, "Principles and Practices of Interconnection Networks", Morgan Kaufmann, 2004.
//! `dimension_complement_reverse` (from McDonald et al., "Practical and Efficient
//! Incremental Adaptive Routing for HyperX Networks", SC'19, with the 2D server-coordinate
//! variant) and `regular_permutation_to_neighbour` are the SurePath seed's (Camarero et
//! al., section 5).

use base::rng::{below, shuffle, stream, unit, Purpose, Rng};
use base::settings::{EntryDoc, Setting};
use serde::{Deserialize, Serialize};
use topology::{endpoint_offsets, EndpointId, Network, Shape};

/// Every pattern `traffic.pattern` accepts, in the order `xnet list` shows them. A test
/// checks that each name parses as a [`PatternSpec`] and that the keys match its fields.
pub const PATTERNS: &[PatternEntry] = &[
    PatternEntry { name: "uniform", doc: "a uniformly random destination other than the source", settings: &[] },
    PatternEntry {
        name: "random_permutation",
        doc: "a fixed random permutation of the endpoints without fixed points",
        settings: &[],
    },
    PatternEntry {
        name: "group_shift",
        doc: "Dragonfly: the same position in the next group; other topologies: the same position in the next block of switches",
        settings: &[Setting {
            key: "block_switches",
            default: "sqrt(switches), rounded down to a divisor",
            doc: "switches per block (non-Dragonfly topologies)",
        }],
    },
    PatternEntry {
        name: "bit_reversal",
        doc: "destination = the bit-reversed source (power-of-two endpoint count)",
        settings: &[],
    },
    PatternEntry {
        name: "transpose",
        doc: "swap the two halves of the source's bits (even power-of-two endpoint count)",
        settings: &[],
    },
    PatternEntry {
        name: "tornado",
        doc: "HyperX and tori: every switch coordinate advances by ceil(k/2) - 1, same terminal port",
        settings: &[],
    },
    PatternEntry {
        name: "dimension_complement_reverse",
        doc: "HyperX: switch (c_0, ..., c_n-1) sends to (k-1-c_n-1, ..., k-1-c_0), same terminal port; with server_coordinate the terminal port is one more coordinate, first: server (w, x, y) sends to (k-1-y, k-1-x, k-1-w) (the SurePath seed's 2D variant)",
        settings: &[Setting {
            key: "server_coordinate",
            default: "true on a 2D HyperX, false otherwise (as the SurePath seed)",
            doc: "count the terminal port as the first coordinate (endpoints_per_switch must then equal the last side)",
        }],
    },
    PatternEntry {
        name: "regular_permutation_to_neighbour",
        doc: "HyperX with even sides: in each 2 x ... x 2 subcube (coordinates 2a, 2a+1) a Gray-code cycle visits the switches, and each switch sends to the next one, same terminal port (the SurePath seed's pattern: a line holds 0 or k/2 pairs, so routes that stay in it carry at most 0.5)",
        settings: &[],
    },
    PatternEntry {
        name: "hot_spot",
        doc: "a fraction of the packets goes to one endpoint, the rest is uniform",
        settings: &[
            Setting { key: "fraction", default: "required", doc: "fraction of packets sent to the hot endpoint, in [0, 1]" },
            Setting { key: "endpoint", default: "0", doc: "the hot endpoint" },
        ],
    },
];

/// One traffic pattern in the registry.
#[derive(Clone, Copy, Debug)]
pub struct PatternEntry {
    /// Name in `traffic.pattern`.
    pub name: &'static str,
    /// What it does.
    pub doc: &'static str,
    /// Its keys in `[traffic]`, documented.
    pub settings: &'static [Setting],
}

impl PatternEntry {
    /// As users see it.
    pub fn doc(&self) -> EntryDoc {
        EntryDoc { name: self.name, doc: self.doc, details: Vec::new(), settings: self.settings }
    }
}

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
    /// HyperX: coordinates reversed and complemented (Dimension Complement Reverse,
    /// Camarero et al., section 5), optionally with the terminal port as the first
    /// coordinate.
    DimensionComplementReverse {
        /// Count the terminal port as a coordinate (default: on 2D HyperX only).
        #[serde(default)]
        server_coordinate: Option<bool>,
    },
    /// HyperX with even sides: each switch sends to the next switch of a Gray-code cycle
    /// through its 2 x ... x 2 subcube (Regular Permutation to Neighbour, Camarero et al.,
    /// section 5).
    RegularPermutationToNeighbour,
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
                let first_endpoint = endpoint_offsets(&net.terminals);
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
                let first_endpoint = endpoint_offsets(&net.terminals);
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
            PatternSpec::DimensionComplementReverse { server_coordinate } => {
                let Shape::HyperX(h) = &net.shape else {
                    return Err(err("pattern", "dimension_complement_reverse needs a hyperx topology"));
                };
                let with_server = server_coordinate.unwrap_or(h.sides.len() == 2);
                // Coordinates in order: the terminal port (if counted), then dimension 0, 1, ...
                let offset = usize::from(with_server);
                let mut sides = Vec::with_capacity(h.sides.len() + 1);
                if with_server {
                    sides.push(h.endpoints_per_switch);
                }
                sides.extend_from_slice(&h.sides);
                let reversed: Vec<u32> = sides.iter().rev().copied().collect();
                if sides != reversed {
                    let (key, what) = if with_server {
                        ("server_coordinate", "endpoints per switch followed by the sides")
                    } else {
                        ("pattern", "the sides")
                    };
                    return Err(err(
                        key,
                        format!(
                            "dimension_complement_reverse needs {what} to read the same reversed, got {sides:?}"
                        ),
                    ));
                }
                let first_endpoint = endpoint_offsets(&net.terminals);
                let n = sides.len();
                map(&|e| {
                    let (s, port) = net.endpoint_location[e as usize];
                    let coordinate = |j: usize| if j < offset { port as u32 } else { h.coord(s, j - offset) };
                    let mut t = 0;
                    let mut stride = 1;
                    for (d, &side) in sides.iter().enumerate().skip(offset) {
                        t += (side - 1 - coordinate(n - 1 - d)) * stride;
                        stride *= side;
                    }
                    let port = if with_server { sides[0] - 1 - coordinate(n - 1) } else { port as u32 };
                    first_endpoint[t as usize] + port
                })
            }
            PatternSpec::RegularPermutationToNeighbour => {
                let Shape::HyperX(h) = &net.shape else {
                    return Err(err("pattern", "regular_permutation_to_neighbour needs a hyperx topology"));
                };
                if h.sides.iter().any(|k| k % 2 == 1) || h.sides.len() > 31 {
                    return Err(err(
                        "pattern",
                        format!("regular_permutation_to_neighbour needs even sides, got {:?}", h.sides),
                    ));
                }
                let dims = h.sides.len();
                let cycle = 1u32 << dims;
                let gray = |i: u32| i ^ (i >> 1);
                let first_endpoint = endpoint_offsets(&net.terminals);
                map(&|e| {
                    let (s, port) = net.endpoint_location[e as usize];
                    // The switch's corner of its subcube, and its place in the Gray cycle.
                    let corner = (0..dims).fold(0, |b, d| b | (h.coord(s, d) & 1) << d);
                    let mut place = corner;
                    let mut shift = corner >> 1;
                    while shift != 0 {
                        place ^= shift;
                        shift >>= 1;
                    }
                    let flip = (corner ^ gray((place + 1) % cycle)).trailing_zeros() as usize;
                    let t = h.neighbour(s, flip, h.coord(s, flip) ^ 1);
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

#[cfg(test)]
mod tests {
    use super::*;
    use topology::{dragonfly, hyperx};

    fn hyperx(sides: Vec<u32>, t: u32) -> Network {
        hyperx::build(&hyperx::HyperXParams {
            sides,
            endpoints_per_switch: t,
            terminal_latency: 1,
            link_latency: 1,
        })
        .unwrap()
    }

    fn map(spec: PatternSpec, net: &Network) -> Vec<u32> {
        match Pattern::build(&spec, net, 9).unwrap() {
            Pattern::Map(m) => m,
            other => panic!("expected a fixed map, got {other:?}"),
        }
    }

    #[test]
    fn random_permutation_is_a_derangement() {
        let net = hyperx(vec![4, 4], 2);
        let m = map(PatternSpec::RandomPermutation, &net);
        let mut seen = m.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..32).collect::<Vec<_>>());
        assert!(m.iter().enumerate().all(|(i, &d)| d != i as u32));
    }

    #[test]
    fn bit_reversal_and_transpose() {
        let net = hyperx(vec![4, 4], 1); // 16 endpoints, 4 bits
        let m = map(PatternSpec::BitReversal, &net);
        assert_eq!((m[1], m[2], m[3], m[8]), (8, 4, 12, 1));
        let m = map(PatternSpec::Transpose, &net);
        assert_eq!((m[1], m[4], m[0b0110]), (4, 1, 0b1001));
        let odd = hyperx(vec![2, 4], 1); // 8 endpoints: 3 bits, no transpose
        assert!(Pattern::build(&PatternSpec::Transpose, &odd, 1).is_err());
    }

    #[test]
    fn tornado_shifts_every_coordinate_by_just_under_half() {
        let net = hyperx(vec![8, 5], 1);
        let m = map(PatternSpec::Tornado, &net);
        // Switch (x, y) = (1, 2) -> (1 + 3, 2 + 2) = (4, 4), ids x + 8 y.
        assert_eq!(m[1 + 8 * 2], 4 + 8 * 4);
    }

    fn small_dragonfly() -> Network {
        let params = dragonfly::DragonflyParams {
            p: 2,
            a: 4,
            h: 2,
            groups: None,
            arrangement: Default::default(),
            terminal_latency: 1,
            local_latency: 1,
            global_latency: 1,
        };
        dragonfly::build(&params).unwrap()
    }

    #[test]
    fn group_shift_on_a_dragonfly_goes_to_the_same_place_in_the_next_group() {
        let net = small_dragonfly();
        let m = map(PatternSpec::GroupShift { block_switches: None }, &net);
        let per_group = 8;
        for (src, &dst) in m.iter().enumerate() {
            assert_eq!(dst as usize, (src + per_group) % (9 * per_group));
        }
    }

    fn is_permutation(m: &[u32]) -> bool {
        let mut seen = m.to_vec();
        seen.sort_unstable();
        seen.iter().enumerate().all(|(i, &d)| d == i as u32)
    }

    #[test]
    fn dimension_complement_reverse_reverses_and_complements_the_coordinates() {
        // 3D: (x, y, z) to (3-z, 3-y, 3-x), the same terminal port.
        let net = hyperx(vec![4, 4, 4], 2);
        let Shape::HyperX(h) = net.shape.clone() else { unreachable!() };
        let m = map(PatternSpec::DimensionComplementReverse { server_coordinate: None }, &net);
        assert!(is_permutation(&m));
        for (e, &d) in m.iter().enumerate() {
            let ((s, p), (t, q)) = (net.endpoint_location[e], net.endpoint_location[d as usize]);
            assert_eq!(p, q);
            for dim in 0..3 {
                assert_eq!(h.coord(t, dim), 3 - h.coord(s, 2 - dim));
            }
            assert_eq!(m[d as usize], e as u32, "an involution");
        }
        // 2D, the seed's variant: server (w, x, y) to (3-y, 3-x, 3-w).
        let net = hyperx(vec![4, 4], 4);
        let m = map(PatternSpec::DimensionComplementReverse { server_coordinate: None }, &net);
        assert!(is_permutation(&m));
        for (e, &d) in m.iter().enumerate() {
            let ((s, w), (t, w2)) = (net.endpoint_location[e], net.endpoint_location[d as usize]);
            let (x, y) = (s % 4, s / 4);
            assert_eq!((w2 as u32, t % 4, t / 4), (3 - y, 3 - x, 3 - w as u32), "from {e}");
        }
        // Without the server coordinate a 2D switch (x, y) goes to (3-y, 3-x).
        let m = map(PatternSpec::DimensionComplementReverse { server_coordinate: Some(false) }, &net);
        let (s, t) = (net.endpoint_location[0].0, net.endpoint_location[m[0] as usize].0);
        assert_eq!((s, t), (0, 15));
        // The server coordinate must pair with the last side.
        let e = Pattern::build(
            &PatternSpec::DimensionComplementReverse { server_coordinate: None },
            &hyperx(vec![4, 4], 2),
            1,
        )
        .unwrap_err();
        assert_eq!(e.key, "server_coordinate");
        assert!(e.message.contains("[2, 4, 4]"), "{e}");
        let e = Pattern::build(
            &PatternSpec::DimensionComplementReverse { server_coordinate: None },
            &hyperx(vec![4, 3, 2], 2),
            1,
        )
        .unwrap_err();
        assert_eq!(e.key, "pattern");
    }

    #[test]
    fn regular_permutation_to_neighbour_pairs_neighbours_k_over_2_to_a_line() {
        for sides in [vec![4, 4, 4], vec![6, 4], vec![2, 4, 2, 4]] {
            let net = hyperx(sides.clone(), 3);
            let Shape::HyperX(h) = net.shape.clone() else { unreachable!() };
            let m = map(PatternSpec::RegularPermutationToNeighbour, &net);
            assert!(is_permutation(&m), "{sides:?}");
            let dims = sides.len();
            // Switch pairs per line: a line is a dimension and the other coordinates.
            let mut per_line = std::collections::HashMap::new();
            for (e, &d) in m.iter().enumerate() {
                let ((s, p), (t, q)) = (net.endpoint_location[e], net.endpoint_location[d as usize]);
                assert_eq!(p, q, "the same terminal port");
                let differ: Vec<usize> = (0..dims).filter(|&k| h.coord(s, k) != h.coord(t, k)).collect();
                assert_eq!(differ.len(), 1, "{sides:?}: a neighbour, one dimension away");
                let dim = differ[0];
                // Within the switch's 2 x ... x 2 subcube.
                assert_eq!(h.coord(s, dim) / 2, h.coord(t, dim) / 2);
                if p == 0 {
                    *per_line.entry((dim, h.neighbour(s, dim, 0))).or_insert(0u32) += 1;
                }
            }
            // Every line holds k/2 pairs or none (lines without pairs are not listed).
            for ((dim, _), pairs) in per_line {
                assert_eq!(pairs, sides[dim] / 2, "{sides:?}, dimension {dim}");
            }
            // One switch cycle through each subcube of 2^dims switches.
            let s0 = net.endpoint_location[0].0;
            let mut e = 0;
            for step in 1..=(1 << dims) {
                e = m[e as usize];
                assert_eq!(net.endpoint_location[e as usize].0 == s0, step == 1 << dims, "{sides:?}");
            }
        }
        let e = Pattern::build(&PatternSpec::RegularPermutationToNeighbour, &hyperx(vec![4, 3], 2), 1)
            .unwrap_err();
        assert!(e.message.contains("even sides"), "{e}");
        let e =
            Pattern::build(&PatternSpec::RegularPermutationToNeighbour, &small_dragonfly(), 1).unwrap_err();
        assert!(e.message.contains("needs a hyperx"), "{e}");
    }

    #[test]
    fn hot_spot_sends_the_given_fraction_to_the_hot_endpoint() {
        let net = hyperx(vec![4, 4], 4);
        let p = Pattern::build(&PatternSpec::HotSpot { fraction: 0.25, endpoint: 7 }, &net, 1).unwrap();
        let mut rng = base::rng::stream(1, Purpose::Traffic, 0);
        let hot = (0..40_000).filter(|_| p.destination(3, &mut rng) == 7).count() as f64 / 40_000.0;
        // 0.25 directly, plus the uniform share 0.75 / 63.
        assert!((hot - (0.25 + 0.75 / 63.0)).abs() < 0.01, "{hot}");
    }

    #[test]
    fn uniform_never_picks_the_source_and_covers_the_rest() {
        let net = hyperx(vec![2, 2], 2);
        let p = Pattern::build(&PatternSpec::Uniform, &net, 1).unwrap();
        let mut rng = base::rng::stream(1, Purpose::Traffic, 0);
        let mut counts = [0u32; 8];
        for _ in 0..7000 {
            counts[p.destination(5, &mut rng) as usize] += 1;
        }
        assert_eq!(counts[5], 0);
        assert!(counts.iter().enumerate().all(|(i, &c)| i == 5 || (850..1150).contains(&c)), "{counts:?}");
    }

    #[test]
    fn geometric_gaps_have_the_bernoulli_mean() {
        let mut rng = base::rng::stream(3, Purpose::Traffic, 0);
        let p = 0.05;
        let n = 20_000;
        let total: u64 = (0..n).map(|_| geometric_gap(&mut rng, p).unwrap() + 1).sum();
        let mean = total as f64 / n as f64;
        assert!((mean - 1.0 / p).abs() < 0.5, "{mean}");
        assert_eq!(geometric_gap(&mut rng, 0.0), None);
        assert_eq!(geometric_gap(&mut rng, 1.0), Some(0));
    }
}
