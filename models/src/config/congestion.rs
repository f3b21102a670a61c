//! `[congestion]`: who the congestion's contributors are, so that results can tell the
//! traffic that causes it (aggressors) from the traffic that suffers from it (victims).

use super::ConfigError;
use crate::traffic::Pattern;
use serde::Deserialize;
use topology::EndpointId;

/// `[congestion]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CongestionSection {
    /// Endpoints the congestion converges on: the packets sent to them are the aggressors,
    /// every other packet a victim. Default: the hot endpoint of `traffic.pattern =
    /// "hot_spot"`, none otherwise.
    #[serde(default)]
    pub targets: Option<Vec<u64>>,
}

impl CongestionSection {
    /// The targets, sorted and without repeats: the ones given, checked against the
    /// network's `endpoints`, or the hot spot's endpoint of `pattern`.
    pub fn targets(&self, pattern: &Pattern, endpoints: usize) -> Result<Vec<EndpointId>, ConfigError> {
        let mut targets: Vec<EndpointId> = match &self.targets {
            Some(given) => given
                .iter()
                .map(|&e| {
                    if e < endpoints as u64 {
                        Ok(e as EndpointId)
                    } else {
                        Err(ConfigError::new(
                            "congestion.targets",
                            format!(
                                "endpoint {e} does not exist: the network has {endpoints} (0 to {})",
                                endpoints - 1
                            ),
                        ))
                    }
                })
                .collect::<Result<_, _>>()?,
            None => match pattern {
                Pattern::HotSpot { fraction, hot, .. } if *fraction > 0.0 => vec![*hot],
                _ => Vec::new(),
            },
        };
        targets.sort_unstable();
        targets.dedup();
        Ok(targets)
    }
}
