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
    settings: &[
        Setting {
            key: "block_switches",
            default: "sqrt(switches), rounded down to a divisor",
            doc: "switches per block (non-Dragonfly topologies)",
        },
        Setting {
            key: "fraction",
            default: "1",
            doc: "fraction of the packets that follow the shift, in [0, 1]; the others go to a uniformly random endpoint (a mix of adversarial and uniform traffic)",
        },
    ],
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
    /// Fraction of the packets that follow the shift; the others are uniform.
    #[serde(default = "all")]
    fraction: f64,
}

fn all() -> f64 {
    1.0
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
        if !(0.0..=1.0).contains(&self.fraction) {
            return Err(PatternError::new("fraction", format!("must be in [0, 1], got {}", self.fraction)));
        }
        let first_endpoint = endpoint_offsets(&net.terminals);
        let shift = Pattern::map(net.num_endpoints() as u32, |e| {
            let (s, port) = net.endpoint_location[e as usize];
            let t = (s + block) % switches;
            let terminals = net.terminals[t as usize] as u32;
            if terminals == 0 {
                e
            } else {
                first_endpoint[t as usize] + (port as u32 % terminals)
            }
        });
        match shift {
            Pattern::Map(map) if self.fraction < 1.0 => {
                Ok(Pattern::PartMap { n: net.num_endpoints() as u32, fraction: self.fraction, map })
            }
            shift => Ok(shift),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{hyperx, map, small_dragonfly};
    use super::*;

    #[test]
    fn group_shift_on_a_dragonfly_goes_to_the_same_place_in_the_next_group() {
        let net = small_dragonfly();
        let m = map(&GroupShift { block_switches: None, fraction: 1.0 }, &net);
        let per_group = 8;
        for (src, &dst) in m.iter().enumerate() {
            assert_eq!(dst as usize, (src + per_group) % (9 * per_group));
        }
    }

    #[test]
    fn group_shift_elsewhere_moves_by_a_block_of_switches() {
        // 16 switches: blocks of 4 by default; endpoint (s, p) goes to (s + block, p).
        let net = hyperx(vec![4, 4], 2);
        assert!(map(&GroupShift { block_switches: None, fraction: 1.0 }, &net)
            .iter()
            .enumerate()
            .all(|(e, &d)| d as usize == (e + 8) % 32));
        assert!(map(&GroupShift { fraction: 1.0, block_switches: Some(8) }, &net)
            .iter()
            .enumerate()
            .all(|(e, &d)| d as usize == (e + 16) % 32));
        let e = GroupShift { fraction: 1.0, block_switches: Some(16) }.build(&net, 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "traffic.block_switches: 16 must divide the 16 switches into at least 2 blocks"
        );
    }

    #[test]
    fn a_fraction_of_the_shift_mixes_it_with_uniform_traffic() {
        use base::rng::{stream, Purpose};
        let net = small_dragonfly();
        let mix = GroupShift { block_switches: None, fraction: 0.25 }.build(&net, 1).unwrap();
        let mut rng = stream(1, Purpose::Traffic, 0);
        let draws = 40_000;
        let shifted = (0..draws).filter(|_| mix.destination(3, 0, &mut rng) == 3 + 8).count();
        // A quarter follow the shift, and a uniform draw hits that endpoint 1/71 of the rest.
        let expected = 0.25 + 0.75 / 71.0;
        assert!((shifted as f64 / draws as f64 - expected).abs() < 0.01, "{shifted}");
        let e = GroupShift { block_switches: None, fraction: 1.5 }.build(&net, 1).unwrap_err();
        assert_eq!(e.to_string(), "traffic.fraction: must be in [0, 1], got 1.5");
    }

    #[test]
    fn a_phased_pattern_changes_at_its_cycle() {
        use base::rng::{stream, Purpose};
        let net = small_dragonfly();
        let shift = GroupShift { block_switches: None, fraction: 1.0 }.build(&net, 1).unwrap();
        let phased =
            Pattern::Phased { at: 100, before: Box::new(Pattern::Uniform { n: 72 }), after: Box::new(shift) };
        let mut rng = stream(1, Purpose::Traffic, 0);
        assert!((0..100).any(|_| phased.destination(3, 99, &mut rng) != 11));
        assert!((0..100).all(|_| phased.destination(3, 100, &mut rng) == 11));
    }
}
