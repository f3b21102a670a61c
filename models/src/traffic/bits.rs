//! Bit permutations of the endpoint number, `bit_reversal` and `transpose`, those of
//! Dally and Towles, "Principles and Practices of Interconnection Networks", Morgan
//! Kaufmann, 2004.

use super::{parse_as, Pattern, PatternEntry, PatternError, PatternParams};
use serde::Deserialize;
use topology::Network;

/// `bit_reversal` in the pattern registry.
pub const BIT_REVERSAL: PatternEntry = PatternEntry {
    name: "bit_reversal",
    doc: "destination = the bit-reversed source (power-of-two endpoint count, at least 4); the endpoints whose bits read the same reversed, 0 and the last among them, send to themselves",
    settings: &[],
    parse: parse_as::<BitReversal>,
};

/// `transpose` in the pattern registry.
pub const TRANSPOSE: PatternEntry = PatternEntry {
    name: "transpose",
    doc: "swap the two halves of the source's bits (even power-of-two endpoint count, at least 4); the endpoints whose halves are equal send to themselves",
    settings: &[],
    parse: parse_as::<Transpose>,
};

/// Endpoint `i` sends to the bit-reversal of `i` (endpoint count a power of two).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BitReversal {}

impl PatternParams for BitReversal {
    fn build(&self, net: &Network, _seed: u64) -> Result<Pattern, PatternError> {
        let (n, bits) = bits(net)?;
        Ok(Pattern::map(n, |e| if bits == 0 { e } else { e.reverse_bits() >> (32 - bits) }))
    }
}

/// Endpoint `i`, seen as a pair of half-width bit fields `(hi, lo)`, sends to `(lo, hi)`
/// (endpoint count an even power of two).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Transpose {}

impl PatternParams for Transpose {
    fn build(&self, net: &Network, _seed: u64) -> Result<Pattern, PatternError> {
        let (n, bits) = bits(net)?;
        if !bits.is_multiple_of(2) {
            return Err(PatternError::new(
                "pattern",
                format!("transpose needs an even power of two endpoints, the network has {n}"),
            ));
        }
        let half = bits / 2;
        let mask = (1 << half) - 1;
        Ok(Pattern::map(n, |e| ((e & mask) << half) | (e >> half)))
    }
}

/// The endpoint count and its bits, if it is a power of two.
fn bits(net: &Network) -> Result<(u32, u32), PatternError> {
    let n = net.num_endpoints() as u32;
    if !n.is_power_of_two() {
        return Err(PatternError::new(
            "pattern",
            format!("needs a power-of-two endpoint count, the network has {n}"),
        ));
    }
    Ok((n, n.trailing_zeros()))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{hyperx, map};
    use super::*;

    #[test]
    fn bit_reversal_and_transpose() {
        let net = hyperx(vec![4, 4], 1); // 16 endpoints, 4 bits
        let m = map(&BitReversal {}, &net);
        assert_eq!((m[1], m[2], m[3], m[8]), (8, 4, 12, 1));
        let m = map(&Transpose {}, &net);
        assert_eq!((m[1], m[4], m[0b0110]), (4, 1, 0b1001));
        let odd = hyperx(vec![2, 4], 1); // 8 endpoints: 3 bits, no transpose
        assert!(Transpose {}.build(&odd, 1).is_err());
        let e = BitReversal {}.build(&hyperx(vec![3, 3], 1), 1).unwrap_err();
        assert!(e.message.contains("power-of-two"), "{e}");
    }
}
