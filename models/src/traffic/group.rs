//! `group_shift`: the adversarial pattern of Pascual and Navaridas, "High-Performance,
//! Low-Complexity Deadlock Avoidance for Arbitrary Topologies/Routings", ICS'18, section
//! 7.1 (group `i` to group `i + 1`, blocks of switches on other networks), here as a
//! permutation.

use super::{parse_as, Pattern, PatternEntry, PatternError, PatternParams};
use base::settings::Setting;
use serde::Deserialize;
use topology::{endpoint_offsets, Network, Shape};

/// `group_shift` in the pattern registry.
pub const GROUP_SHIFT: PatternEntry = PatternEntry {
    name: "group_shift",
    doc: "Dragonfly: the same position in the next group; other topologies: the same position in the next block of switches",
    settings: &[Setting {
        key: "block_switches",
        default: "sqrt(switches), rounded down to a divisor",
        doc: "switches per block (non-Dragonfly topologies)",
    }],
    parse: parse_as::<GroupShift>,
};

/// Dragonfly: same position in the next group; other topologies: same position in the
/// next block of `block_switches` consecutive switches.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupShift {
    /// Switches per block for non-Dragonfly topologies (default: `sqrt` of the switch
    /// count, rounded down to a divisor).
    #[serde(default)]
    block_switches: Option<u32>,
}

impl PatternParams for GroupShift {
    fn build(&self, net: &Network, _seed: u64) -> Result<Pattern, PatternError> {
        let switches = net.num_switches() as u32;
        let block = match (&net.shape, self.block_switches) {
            (Shape::Dragonfly(d), None) => d.a,
            (_, Some(b)) => b,
            (_, None) => {
                let mut b = (switches as f64).sqrt() as u32;
                while b > 1 && !switches.is_multiple_of(b) {
                    b -= 1;
                }
                b.max(1)
            }
        };
        if block == 0 || !switches.is_multiple_of(block) || block == switches {
            return Err(PatternError::new(
                "block_switches",
                format!("{block} must divide the {switches} switches into at least 2 blocks"),
            ));
        }
        let first_endpoint = endpoint_offsets(&net.terminals);
        Ok(Pattern::map(net.num_endpoints() as u32, |e| {
            let (s, port) = net.endpoint_location[e as usize];
            let t = (s + block) % switches;
            let terminals = net.terminals[t as usize] as u32;
            if terminals == 0 {
                e
            } else {
                first_endpoint[t as usize] + (port as u32 % terminals)
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{hyperx, map, small_dragonfly};
    use super::*;

    #[test]
    fn group_shift_on_a_dragonfly_goes_to_the_same_place_in_the_next_group() {
        let net = small_dragonfly();
        let m = map(&GroupShift { block_switches: None }, &net);
        let per_group = 8;
        for (src, &dst) in m.iter().enumerate() {
            assert_eq!(dst as usize, (src + per_group) % (9 * per_group));
        }
    }

    #[test]
    fn group_shift_elsewhere_moves_by_a_block_of_switches() {
        // 16 switches: blocks of 4 by default; endpoint (s, p) goes to (s + block, p).
        let net = hyperx(vec![4, 4], 2);
        assert!(map(&GroupShift { block_switches: None }, &net)
            .iter()
            .enumerate()
            .all(|(e, &d)| d as usize == (e + 8) % 32));
        assert!(map(&GroupShift { block_switches: Some(8) }, &net)
            .iter()
            .enumerate()
            .all(|(e, &d)| d as usize == (e + 16) % 32));
        let e = GroupShift { block_switches: Some(16) }.build(&net, 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "traffic.block_switches: 16 must divide the 16 switches into at least 2 blocks"
        );
    }
}
