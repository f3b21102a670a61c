//! `[congestion]`: the end-to-end congestion control (`control` and its settings, models in
//! `crate::congestion`) and who the congestion's contributors are, so that results can tell
//! the traffic that causes it (aggressors) from the traffic that suffers from it (victims).

use super::ConfigError;
use crate::congestion::{Control, DcqcnCc, InfiniBandCc, PerDestinationCc, Scheme};
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
    /// The congestion control: `none` (default), `infiniband` or `per_destination`.
    #[serde(default)]
    pub control: Control,
    /// `[congestion.infiniband]`: InfiniBand congestion control's parameters.
    #[serde(default)]
    pub infiniband: Option<InfiniBandCc>,
    /// `[congestion.per_destination]`: per-destination throttling's parameters.
    #[serde(default)]
    pub per_destination: Option<PerDestinationCc>,
    /// `[congestion.dcqcn]`: DCQCN's parameters.
    #[serde(default)]
    pub dcqcn: Option<DcqcnCc>,
}

impl CongestionSection {
    /// The congestion control in force, if any, its parameters checked against the
    /// router's `input_buffer` and `output_buffer`. A scheme's table set while another (or
    /// none) is chosen is checked all the same and not used (see [`Self::unused_tables`]):
    /// a study can compare a tuned scheme with none by varying `control` alone.
    pub fn scheme(&self, input_buffer: u32, output_buffer: u32) -> Result<Option<Scheme>, ConfigError> {
        if self.infiniband.is_some() {
            self.infiniband(input_buffer, output_buffer)?;
        }
        if self.per_destination.is_some() {
            self.per_destination()?;
        }
        if self.dcqcn.is_some() {
            self.dcqcn(output_buffer)?;
        }
        match self.control {
            Control::None => Ok(None),
            Control::Infiniband => {
                Ok(Some(Scheme::InfiniBand(self.infiniband(input_buffer, output_buffer)?)))
            }
            Control::PerDestination => Ok(Some(Scheme::PerDestination(self.per_destination()?))),
            Control::Dcqcn => Ok(Some(Scheme::Dcqcn(self.dcqcn(output_buffer)?))),
        }
    }

    /// A note for each scheme's table that is set while another scheme (or none) is in
    /// force: its settings are not used.
    pub fn unused_tables(&self) -> Vec<String> {
        let control = match self.control {
            Control::None => "none",
            Control::Infiniband => "infiniband",
            Control::PerDestination => "per_destination",
            Control::Dcqcn => "dcqcn",
        };
        [
            ("infiniband", self.infiniband.is_some()),
            ("per_destination", self.per_destination.is_some()),
            ("dcqcn", self.dcqcn.is_some()),
        ]
        .into_iter()
        .filter(|&(table, set)| set && table != control)
        .map(|(table, _)| {
            format!(
                "note: congestion.{table} is set but congestion.control is \"{control}\": its settings are \
                     not used (congestion.control = \"{table}\" uses them)"
            )
        })
        .collect()
    }

    /// DCQCN's parameters, checked against the router's `output_buffer` (the queue it
    /// marks by).
    fn dcqcn(&self, output_buffer: u32) -> Result<DcqcnCc, ConfigError> {
        let cc = self.dcqcn.unwrap_or_default();
        let key = |k: &str| format!("congestion.dcqcn.{k}");
        if cc.kmin >= cc.kmax {
            return Err(ConfigError::new(
                key("kmin"),
                format!("must be below kmax ({}), got {}", cc.kmax, cc.kmin),
            ));
        }
        if cc.kmin >= output_buffer {
            return Err(ConfigError::new(
                key("kmin"),
                format!(
                    "an output VC holds at most router.output_buffer = {output_buffer} phits, so kmin = {} never marks: lower it or raise the buffer (Zhu et al.'s 5 KB and 200 KB are 320 and 12,800 phits of 16 bytes)",
                    cc.kmin
                ),
            ));
        }
        let share = |name: &str, value: f64, low: f64| {
            if value > low && value <= 1.0 {
                Ok(())
            } else {
                Err(ConfigError::new(key(name), format!("must be above {low} and at most 1, got {value}")))
            }
        };
        share("pmax", cc.pmax, 0.0)?;
        share("g", cc.g, 0.0)?;
        share("rate_ai", cc.rate_ai, 0.0)?;
        share("rate_hai", cc.rate_hai, 0.0)?;
        share("min_rate", cc.min_rate, 0.0)?;
        for (name, value) in [
            ("cnp_interval", cc.cnp_interval),
            ("alpha_timer", cc.alpha_timer),
            ("rate_timer", cc.rate_timer),
            ("byte_counter", cc.byte_counter),
        ] {
            if value == 0 {
                return Err(ConfigError::new(key(name), "must be at least 1"));
            }
        }
        Ok(cc)
    }

    /// Per-destination throttling's parameters, checked.
    fn per_destination(&self) -> Result<PerDestinationCc, ConfigError> {
        let cc = self.per_destination.unwrap_or_default();
        let key = |k: &str| format!("congestion.per_destination.{k}");
        if cc.min_senders < 2 {
            return Err(ConfigError::new(
                key("min_senders"),
                format!(
                    "must be at least 2 (one sender cannot oversubscribe a link), got {}",
                    cc.min_senders
                ),
            ));
        }
        if cc.interval == 0 {
            return Err(ConfigError::new(key("interval"), "must be at least 1 cycle"));
        }
        let share = |name: &str, value: f64| {
            if (0.01..=1.0).contains(&value) {
                Ok(())
            } else {
                let why = format!("must be at least 0.01 and at most 1 (a share of the link), got {value}");
                Err(ConfigError::new(key(name), why))
            }
        };
        share("busy", cc.busy)?;
        if cc.window == 0 {
            return Err(ConfigError::new(
                key("window"),
                "must be at least 1 (gaps between a sender's packets)",
            ));
        }
        share("link_share", cc.link_share)?;
        Ok(cc)
    }

    /// InfiniBand congestion control's parameters, checked against the router's buffers.
    fn infiniband(&self, input_buffer: u32, output_buffer: u32) -> Result<InfiniBandCc, ConfigError> {
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
        Ok(cc)
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
