//! Patterns over switch coordinates (HyperX, tori), each endpoint keeping its terminal
//! port: `tornado` (Dally and Towles, "Principles and Practices of Interconnection
//! Networks", Morgan Kaufmann, 2004), and two of the SurePath paper's (Camarero et al., FTXS'24) (Camarero et al.,
//! "Achieving High-Performance Fault-Tolerant Routing in HyperX Interconnection Networks",
//! arXiv:2404.04315, 2024, section 5): `dimension_complement_reverse` (from McDonald et
//! al., "Practical and Efficient Incremental Adaptive Routing for HyperX Networks", SC'19,
//! with the paper's 2D variant over server coordinates) and
//! `regular_permutation_to_neighbour`.

use super::{parse_as, Pattern, PatternEntry, PatternError, PatternParams};
use base::settings::Setting;
use serde::Deserialize;
use topology::{endpoint_offsets, Network, Shape};

/// `tornado` in the pattern registry.
pub const TORNADO: PatternEntry = PatternEntry {
    name: "tornado",
    doc: "HyperX and tori: every switch coordinate advances by ceil(k/2) - 1, same terminal port (a side of 2 does not move; sides all of 2 are refused)",
    settings: &[],
    parse: parse_as::<Tornado>,
};

/// `dimension_complement_reverse` in the pattern registry.
pub const DIMENSION_COMPLEMENT_REVERSE: PatternEntry = PatternEntry {
    name: "dimension_complement_reverse",
    doc: "HyperX: switch (c_0, ..., c_n-1) sends to (k-1-c_n-1, ..., k-1-c_0), same terminal port; with server_coordinate the terminal port is one more coordinate, first: server (w, x, y) sends to (k-1-y, k-1-x, k-1-w) (the SurePath paper's (Camarero et al., FTXS'24) 2D variant)",
    settings: &[Setting {
        key: "server_coordinate",
        default: "true on a 2D HyperX, false otherwise (as the SurePath seed)",
        doc: "count the terminal port as the first coordinate (endpoints_per_switch must then equal the last side)",
    }],
    parse: parse_as::<DimensionComplementReverse>,
};

/// `regular_permutation_to_neighbour` in the pattern registry.
pub const REGULAR_PERMUTATION_TO_NEIGHBOUR: PatternEntry = PatternEntry {
    name: "regular_permutation_to_neighbour",
    doc: "HyperX with even sides: in each 2 x ... x 2 subcube (coordinates 2a, 2a+1) a Gray-code cycle visits the switches, and each switch sends to the next one, same terminal port (the SurePath paper's (Camarero et al., FTXS'24) pattern: a line holds 0 or k/2 pairs, so routes that stay in it carry at most 0.5)",
    settings: &[],
    parse: parse_as::<RegularPermutationToNeighbour>,
};

/// HyperX and torus: every switch coordinate advances by `ceil(k / 2) - 1`, same
/// terminal port.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tornado {}

impl PatternParams for Tornado {
    fn build(&self, net: &Network, _seed: u64) -> Result<Pattern, PatternError> {
        let sides = match &net.shape {
            Shape::HyperX(h) => h.sides.clone(),
            Shape::Torus(t) => t.sides.clone(),
            _ => return Err(PatternError::new("pattern", "tornado needs a hyperx or torus topology")),
        };
        let first_endpoint = endpoint_offsets(&net.terminals);
        Ok(Pattern::map(net.num_endpoints() as u32, |e| {
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
        }))
    }
}

/// HyperX: coordinates reversed and complemented, optionally with the terminal port as
/// the first coordinate.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DimensionComplementReverse {
    /// Count the terminal port as a coordinate (default: on 2D HyperX only).
    #[serde(default)]
    server_coordinate: Option<bool>,
}

impl PatternParams for DimensionComplementReverse {
    fn build(&self, net: &Network, _seed: u64) -> Result<Pattern, PatternError> {
        let Shape::HyperX(h) = &net.shape else {
            return Err(PatternError::new("pattern", "dimension_complement_reverse needs a hyperx topology"));
        };
        let with_server = self.server_coordinate.unwrap_or(h.sides.len() == 2);
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
            return Err(PatternError::new(
                key,
                format!("dimension_complement_reverse needs {what} to read the same reversed, got {sides:?}"),
            ));
        }
        let first_endpoint = endpoint_offsets(&net.terminals);
        let n = sides.len();
        Ok(Pattern::map(net.num_endpoints() as u32, |e| {
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
        }))
    }
}

/// HyperX with even sides: each switch sends to the next switch of a Gray-code cycle
/// through its 2 x ... x 2 subcube.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RegularPermutationToNeighbour {}

impl PatternParams for RegularPermutationToNeighbour {
    fn build(&self, net: &Network, _seed: u64) -> Result<Pattern, PatternError> {
        let Shape::HyperX(h) = &net.shape else {
            return Err(PatternError::new(
                "pattern",
                "regular_permutation_to_neighbour needs a hyperx topology",
            ));
        };
        if h.sides.iter().any(|k| k % 2 == 1) || h.sides.len() > 31 {
            return Err(PatternError::new(
                "pattern",
                format!("regular_permutation_to_neighbour needs even sides, got {:?}", h.sides),
            ));
        }
        let dims = h.sides.len();
        let cycle = 1u32 << dims;
        let gray = |i: u32| i ^ (i >> 1);
        let first_endpoint = endpoint_offsets(&net.terminals);
        Ok(Pattern::map(net.num_endpoints() as u32, |e| {
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
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{hyperx, is_permutation, map, small_dragonfly};
    use super::*;

    #[test]
    fn tornado_shifts_every_coordinate_by_just_under_half() {
        let net = hyperx(vec![8, 5], 1);
        let m = map(&Tornado {}, &net);
        // Switch (x, y) = (1, 2) -> (1 + 3, 2 + 2) = (4, 4), ids x + 8 y.
        assert_eq!(m[1 + 8 * 2], 4 + 8 * 4);
        let e = Tornado {}.build(&small_dragonfly(), 1).unwrap_err();
        assert!(e.message.contains("needs a hyperx or torus"), "{e}");
    }

    #[test]
    fn dimension_complement_reverse_reverses_and_complements_the_coordinates() {
        let dcr = |server_coordinate| DimensionComplementReverse { server_coordinate };
        // 3D: (x, y, z) to (3-z, 3-y, 3-x), the same terminal port.
        let net = hyperx(vec![4, 4, 4], 2);
        let Shape::HyperX(h) = net.shape.clone() else { unreachable!() };
        let m = map(&dcr(None), &net);
        assert!(is_permutation(&m));
        for (e, &d) in m.iter().enumerate() {
            let ((s, p), (t, q)) = (net.endpoint_location[e], net.endpoint_location[d as usize]);
            assert_eq!(p, q);
            for dim in 0..3 {
                assert_eq!(h.coord(t, dim), 3 - h.coord(s, 2 - dim));
            }
            assert_eq!(m[d as usize], e as u32, "an involution");
        }
        // 2D, the paper's variant: server (w, x, y) to (3-y, 3-x, 3-w).
        let net = hyperx(vec![4, 4], 4);
        let m = map(&dcr(None), &net);
        assert!(is_permutation(&m));
        for (e, &d) in m.iter().enumerate() {
            let ((s, w), (t, w2)) = (net.endpoint_location[e], net.endpoint_location[d as usize]);
            let (x, y) = (s % 4, s / 4);
            assert_eq!((w2 as u32, t % 4, t / 4), (3 - y, 3 - x, 3 - w as u32), "from {e}");
        }
        // Without the server coordinate a 2D switch (x, y) goes to (3-y, 3-x).
        let m = map(&dcr(Some(false)), &net);
        let (s, t) = (net.endpoint_location[0].0, net.endpoint_location[m[0] as usize].0);
        assert_eq!((s, t), (0, 15));
        // The server coordinate must pair with the last side.
        let e = dcr(None).build(&hyperx(vec![4, 4], 2), 1).unwrap_err();
        assert_eq!(e.key, "server_coordinate");
        assert!(e.message.contains("[2, 4, 4]"), "{e}");
        let e = dcr(None).build(&hyperx(vec![4, 3, 2], 2), 1).unwrap_err();
        assert_eq!(e.key, "pattern");
    }

    #[test]
    fn regular_permutation_to_neighbour_pairs_neighbours_k_over_2_to_a_line() {
        for sides in [vec![4, 4, 4], vec![6, 4], vec![2, 4, 2, 4]] {
            let net = hyperx(sides.clone(), 3);
            let Shape::HyperX(h) = net.shape.clone() else { unreachable!() };
            let m = map(&RegularPermutationToNeighbour {}, &net);
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
        let e = RegularPermutationToNeighbour {}.build(&hyperx(vec![4, 3], 2), 1).unwrap_err();
        assert!(e.message.contains("even sides"), "{e}");
        let e = RegularPermutationToNeighbour {}.build(&small_dragonfly(), 1).unwrap_err();
        assert!(e.message.contains("needs a hyperx"), "{e}");
    }
}
