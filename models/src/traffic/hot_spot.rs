//! `hot_spot`: a fraction of the packets goes to one endpoint, the rest is uniform.

use super::{parse_as, Pattern, PatternEntry, PatternError, PatternParams};
use base::settings::Setting;
use serde::Deserialize;
use topology::Network;

/// `hot_spot` in the pattern registry.
pub const HOT_SPOT: PatternEntry = PatternEntry {
    name: "hot_spot",
    doc: "a fraction of the packets goes to one endpoint, the rest is uniform",
    settings: &[
        Setting {
            key: "fraction",
            default: "required",
            doc: "fraction of packets sent to the hot endpoint, in [0, 1]; the hot link is then offered load x (fraction x (endpoints - 1) + 1 - fraction) times its rate (printed at the start of a run)",
        },
        Setting { key: "endpoint", default: "0", doc: "the hot endpoint" },
    ],
    parse: parse_as::<HotSpot>,
};

/// The settings of `hot_spot`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HotSpot {
    /// Fraction in `[0, 1]` of packets sent to the hot endpoint.
    fraction: f64,
    /// The hot endpoint.
    #[serde(default)]
    endpoint: u32,
}

impl PatternParams for HotSpot {
    fn build(&self, net: &Network, _seed: u64) -> Result<Pattern, PatternError> {
        let (fraction, endpoint) = (self.fraction, self.endpoint);
        let n = net.num_endpoints() as u32;
        if !(0.0..=1.0).contains(&fraction) {
            return Err(PatternError::new("fraction", format!("must be in [0, 1], got {fraction}")));
        }
        if endpoint >= n {
            return Err(PatternError::new(
                "endpoint",
                format!("must be < {n} (the endpoint count), got {endpoint}"),
            ));
        }
        Ok(Pattern::HotSpot { n, fraction, hot: endpoint })
    }

    fn hot_spot(&self) -> Option<(u32, f64)> {
        Some((self.endpoint, self.fraction))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::hyperx;
    use super::*;
    use base::rng::{stream, Purpose};

    #[test]
    fn hot_spot_sends_the_given_fraction_to_the_hot_endpoint() {
        let net = hyperx(vec![4, 4], 4);
        let p = HotSpot { fraction: 0.25, endpoint: 7 }.build(&net, 1).unwrap();
        let mut rng = stream(1, Purpose::Traffic, 0);
        let hot = (0..40_000).filter(|_| p.destination(3, 0, &mut rng) == 7).count() as f64 / 40_000.0;
        // 0.25 directly, plus the uniform share 0.75 / 63.
        assert!((hot - (0.25 + 0.75 / 63.0)).abs() < 0.01, "{hot}");
        let e = HotSpot { fraction: 1.5, endpoint: 0 }.build(&net, 1).unwrap_err();
        assert_eq!(e.to_string(), "traffic.fraction: must be in [0, 1], got 1.5");
        let e = HotSpot { fraction: 0.5, endpoint: 64 }.build(&net, 1).unwrap_err();
        assert_eq!(e.to_string(), "traffic.endpoint: must be < 64 (the endpoint count), got 64");
    }
}
