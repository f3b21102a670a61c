//! `traffic.packet_sizes`: synthetic packets of several lengths, each drawn per packet with
//! its weight (without it every packet is `router.packet_size` long).

use base::rng::{unit, Rng};
use base::settings::ConfigError;
use toml::Value;

/// The packet lengths synthetic traffic draws from, with their weights.
#[derive(Clone, Debug, PartialEq)]
pub struct PacketSizes {
    phits: Vec<u16>,
    /// Running sums of the weights, normalized to end at 1.
    cumulative: Vec<f64>,
    mean: f64,
}

impl PacketSizes {
    /// Reads `traffic.packet_sizes`: an array of `{ phits = N, weight = W }` tables (phits
    /// from 1 to 4,096, weights above 0); errors name the entry and key.
    pub fn parse(value: &Value) -> Result<Self, ConfigError> {
        let key = "traffic.packet_sizes";
        let Value::Array(entries) = value else {
            return Err(ConfigError::new(
                key,
                format!("must be an array of {{ phits, weight }} tables, got {}", value.type_str()),
            ));
        };
        if entries.is_empty() {
            return Err(ConfigError::new(key, "must list at least one size"));
        }
        let mut pairs = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let at = format!("{key}[{i}]");
            let Value::Table(t) = e else {
                return Err(ConfigError::new(
                    &at,
                    format!("must be a {{ phits, weight }} table, got {}", e.type_str()),
                ));
            };
            if let Some(other) = t.keys().find(|k| *k != "phits" && *k != "weight") {
                return Err(ConfigError::new(format!("{at}.{other}"), "unknown key; allowed: phits, weight"));
            }
            let phits = match t.get("phits") {
                Some(Value::Integer(n)) if (1..=4096).contains(n) => *n as u16,
                Some(other) => {
                    return Err(ConfigError::new(
                        format!("{at}.phits"),
                        format!("must be in 1..=4096, got {other}"),
                    ))
                }
                None => {
                    return Err(ConfigError::new(
                        format!("{at}.phits"),
                        "missing: the packet's length in phits",
                    ))
                }
            };
            let weight = match t.get("weight") {
                Some(Value::Integer(n)) => *n as f64,
                Some(Value::Float(x)) => *x,
                None => 1.0,
                Some(other) => {
                    return Err(ConfigError::new(
                        format!("{at}.weight"),
                        format!("must be a number, got {}", other.type_str()),
                    ))
                }
            };
            if !(weight > 0.0 && weight.is_finite()) {
                return Err(ConfigError::new(
                    format!("{at}.weight"),
                    format!("must be above 0, got {weight}"),
                ));
            }
            pairs.push((phits, weight));
        }
        Ok(Self::new(&pairs))
    }

    /// The sizes `(phits, weight)`, weights above 0.
    pub fn new(pairs: &[(u16, f64)]) -> Self {
        let total: f64 = pairs.iter().map(|p| p.1).sum();
        let mut sum = 0.0;
        let cumulative = pairs
            .iter()
            .map(|p| {
                sum += p.1;
                sum / total
            })
            .collect();
        let mean = pairs.iter().map(|&(phits, w)| phits as f64 * w).sum::<f64>() / total;
        PacketSizes { phits: pairs.iter().map(|p| p.0).collect(), cumulative, mean }
    }

    /// The mean length in phits: the offered load (phits a cycle) over it is the packets
    /// generated a cycle.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The longest size.
    pub fn longest(&self) -> u16 {
        self.phits.iter().copied().max().unwrap_or(0)
    }

    /// Each size as the config gives it, in order, with its position.
    pub fn sizes(&self) -> impl Iterator<Item = (usize, u16)> + '_ {
        self.phits.iter().copied().enumerate()
    }

    /// A length drawn with the sizes' weights.
    pub fn draw(&self, rng: &mut Rng) -> u16 {
        let u = unit(rng);
        let i = self.cumulative.iter().position(|&c| u < c).unwrap_or(self.phits.len() - 1);
        self.phits[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base::rng::{stream, Purpose};

    #[test]
    fn draws_follow_the_weights_and_the_mean_is_weighted() {
        let s = PacketSizes::new(&[(1, 3.0), (16, 1.0)]);
        assert_eq!(s.mean(), (3.0 + 16.0) / 4.0);
        let mut rng = stream(1, Purpose::Traffic, 0);
        let n = 40_000;
        let ones = (0..n).filter(|_| s.draw(&mut rng) == 1).count();
        assert!((ones as f64 / n as f64 - 0.75).abs() < 0.01, "{ones}");
    }

    #[test]
    fn bad_sizes_are_refused_naming_the_entry() {
        let parse = |text: &str| {
            let t: toml::Table = toml::from_str(&format!("x = {text}")).unwrap();
            PacketSizes::parse(&t["x"]).unwrap_err().to_string()
        };
        assert!(parse("[{ phits = 0, weight = 1 }]").contains("traffic.packet_sizes[0].phits"));
        assert!(parse("[{ phits = 4, weight = 0 }]").contains("traffic.packet_sizes[0].weight"));
        assert!(parse("[{ phits = 4, size = 2 }]").contains("traffic.packet_sizes[0].size"));
        assert!(parse("[]").contains("at least one"));
        assert!(parse("3").contains("must be an array"));
    }
}
