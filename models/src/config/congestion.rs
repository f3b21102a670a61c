//! `[congestion]`: the end-to-end congestion control (`control` and its settings, models in
//! `crate::congestion`) and who the congestion's contributors are, so that results can tell
//! the traffic that causes it (aggressors) from the traffic that suffers from it (victims).

use super::ConfigError;
use crate::congestion::{Control, InfiniBandCc};
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
    /// The congestion control: `none` (default) or `infiniband`.
    #[serde(default)]
    pub control: Control,
    /// `[congestion.infiniband]`: InfiniBand congestion control's parameters.
    #[serde(default)]
    pub infiniband: Option<InfiniBandCc>,
}

impl CongestionSection {
    /// InfiniBand congestion control's parameters if it is on, checked against the
    /// router's `input_buffer` and `output_buffer`.
    pub fn infiniband(
        &self,
        input_buffer: u32,
        output_buffer: u32,
    ) -> Result<Option<InfiniBandCc>, ConfigError> {
        if self.control != Control::Infiniband {
            if self.infiniband.is_some() {
                return Err(ConfigError::new(
                    "congestion.infiniband",
                    "set, but congestion.control is not \"infiniband\" (set it, or remove the table)",
                ));
            }
            return Ok(None);
        }
        let cc = self.infiniband.unwrap_or_default();
        let key = |k: &str| format!("congestion.infiniband.{k}");
        let room = input_buffer.min(output_buffer);
        if cc.cnp_size == 0 || cc.cnp_size as u32 > room {
            return Err(ConfigError::new(
                key("cnp_size"),
                format!(
                    "must be at least 1 and fit the router's buffers ({room} phits), got {}",
                    cc.cnp_size
                ),
            ));
        }
        if cc.ccti_timer == 0 {
            return Err(ConfigError::new(
                key("ccti_timer"),
                "must be at least 1 (cycles between the timer's steps)",
            ));
        }
        if cc.ccti_min > cc.ccti_limit {
            return Err(ConfigError::new(
                key("ccti_min"),
                format!("must be at most ccti_limit ({}), got {}", cc.ccti_limit, cc.ccti_min),
            ));
        }
        Ok(Some(cc))
    }

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
