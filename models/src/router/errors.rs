//! Bit errors on switch-to-switch links and their link-level retry
//! (`[router.link_errors]`).
//!
//! Each link class has a bit error rate; a phit of `b` bits is corrupted with probability
//! `1 - (1 - BER)^b`. A link's sender draws, from its router's own stream, how many good
//! phits come before the next bad one, and counts them down as it sends: one draw per
//! error, not per packet, so a rate of 1e-9 costs nothing measurable.
//!
//! A packet with a bad phit is replayed from the sender's replay buffer (link-level retry:
//! Slingshot's links, Ethernet's LLR). The receiver finds the error when the tail has
//! arrived and reports it; the report crosses the link back; the sender starts the replay
//! `replay_delay` cycles later. Frames sent meanwhile are dropped by the receiver and
//! replayed after it (go-back-N on the link), so the link carries nothing useful for that
//! time: each error costs the link, and delays the packet, by its serialization plus the
//! round trip (`2 L + replay_delay`). The replay may be corrupted in turn. Nothing is lost,
//! and results stay identical on any partitioning (the draws follow the router's events).

use super::flow::ClassLink;
use super::stats::PartitionStats;
use super::{LinkErrorParams, RouterState, Shared};
use crate::traffic::geometric_gap;
use base::rng::{self, Purpose, Rng};
use base::settings::ConfigError;
use topology::{PortId, SwitchId};

/// The highest bit error rate accepted: above it a packet would need many replays, and
/// no link runs at such a rate.
pub const MAX_BIT_ERROR_RATE: f64 = 1e-3;

/// The link classes' error rates and what an error costs.
#[derive(Clone, Debug)]
pub struct LinkErrors {
    classes: Vec<ClassErrors>,
    /// A bad packet is dropped instead of replayed (`recovery = "end_to_end"`).
    end_to_end: bool,
}

#[derive(Clone, Copy, Debug)]
struct ClassErrors {
    /// Probability that a phit is corrupted (0: the class has no errors).
    phit: f64,
    /// Cycles a replay waits beyond the bad copy's serialization: the round trip of the
    /// report and the sender's delay.
    round_trip: u64,
}

impl LinkErrors {
    /// The errors `params` sets on `classes`; `None` without `[router.link_errors]`. Errors
    /// name the key: `router.link_errors.bit_error_rate` (its form, an unknown class, a
    /// rate out of range) or `bits_per_phit`.
    pub fn new(params: &LinkErrorParams, classes: &[ClassLink<'_>]) -> Result<Self, ConfigError> {
        const KEY: &str = "router.link_errors.bit_error_rate";
        if !(1..=65536).contains(&params.bits_per_phit) {
            return Err(ConfigError::new(
                "router.link_errors.bits_per_phit",
                format!("must be in 1..=65536, got {}", params.bits_per_phit),
            ));
        }
        let rate = |key: &str, v: &toml::Value| -> Result<f64, ConfigError> {
            let r = match v {
                toml::Value::Float(f) => *f,
                toml::Value::Integer(i) => *i as f64,
                other => {
                    return Err(ConfigError::new(key, format!("must be a number, got {}", other.type_str())));
                }
            };
            if !(0.0..=MAX_BIT_ERROR_RATE).contains(&r) {
                return Err(ConfigError::new(key, format!("must be in 0..={MAX_BIT_ERROR_RATE}, got {r}")));
            }
            Ok(r)
        };
        let mut rates = vec![0.0; classes.len()];
        match &params.bit_error_rate {
            toml::Value::Table(t) => {
                for (name, v) in t {
                    let k = classes.iter().position(|c| c.name == name).ok_or_else(|| {
                        let known: Vec<&str> =
                            classes.iter().filter(|c| c.between_switches).map(|c| c.name).collect();
                        ConfigError::new(
                            format!("{KEY}.{name}"),
                            format!(
                                "no switch-to-switch links of class `{name}`; this network's: {}",
                                known.join(", ")
                            ),
                        )
                    })?;
                    if !classes[k].between_switches {
                        return Err(ConfigError::new(
                            format!("{KEY}.{name}"),
                            format!("the `{name}` links lead to endpoints; errors are modelled on switch-to-switch links"),
                        ));
                    }
                    rates[k] = rate(&format!("{KEY}.{name}"), v)?;
                }
            }
            v => {
                let r = rate(KEY, v)?;
                for (k, c) in classes.iter().enumerate() {
                    if c.between_switches {
                        rates[k] = r;
                    }
                }
            }
        }
        let bits = params.bits_per_phit as f64;
        let classes = classes
            .iter()
            .zip(rates)
            .map(|(c, ber)| ClassErrors {
                // 1 - (1 - BER)^bits, without cancelling at small rates.
                phit: -(bits * (-ber).ln_1p()).exp_m1(),
                round_trip: 2 * c.latency + params.replay_delay,
            })
            .collect();
        Ok(LinkErrors { classes, end_to_end: params.recovery == super::Recovery::EndToEnd })
    }
}

/// A router's link error state (`Switch::replays`): per output port, the good phits left
/// before the next bad one, and the replays counted.
#[derive(Clone, Debug)]
pub(super) struct Replays {
    phits_left: Vec<u64>,
    /// Per port, replays in the measurement window.
    pub(super) retries: Vec<u32>,
    rng: Rng,
}

impl Replays {
    /// The state of switch `id` with ports of `classes`, the first gaps drawn port by port.
    pub(super) fn new(
        errors: &LinkErrors,
        seed: u64,
        id: SwitchId,
        classes: impl Iterator<Item = u8>,
    ) -> Self {
        let mut rng = rng::stream(seed, Purpose::LinkErrors, id as u64);
        let phits_left = classes
            .map(|c| geometric_gap(&mut rng, errors.classes[c as usize].phit).unwrap_or(u64::MAX))
            .collect::<Vec<_>>();
        let retries = vec![0; phits_left.len()];
        Replays { phits_left, retries, rng }
    }
}

impl LinkErrors {
    /// Whether a bad packet is dropped (end-to-end recovery) instead of replayed.
    pub fn drops(&self) -> bool {
        self.end_to_end
    }
}

impl Replays {
    /// Whether the copy of `size` phits port `o` sends now has a bad phit, whose
    /// probability per phit is `phit` (its good phits are counted down; after a bad one
    /// the gap to the next counts from the next copy).
    fn copy_goes_bad(&mut self, o: PortId, size: u16, phit: f64) -> bool {
        let left = &mut self.phits_left[o as usize];
        if *left >= size as u64 {
            *left -= size as u64;
            return false;
        }
        *left = geometric_gap(&mut self.rng, phit).unwrap_or(u64::MAX);
        true
    }
}

impl RouterState {
    /// Output `o`'s class errors and the router's error state.
    fn errors_at(&mut self, sh: &Shared, o: PortId) -> (ClassErrors, &mut Replays) {
        let errors = sh.link_errors.as_ref().expect("error state exists only with link errors");
        let class = errors.classes[sh.ports.of(self.local as usize)[o as usize].class as usize];
        (class, self.sw.replays.as_mut().expect("error state exists only with link errors"))
    }

    /// Counts `bad` bad copies output `o` sent at `t` (replayed, or dropped end to end).
    fn count_bad(&mut self, sh: &Shared, o: PortId, bad: u64, t: u64, st: &mut PartitionStats) {
        st.period.link_retries += bad;
        if Self::in_measurement(sh, t) {
            st.measured.link_retries += bad;
            let r = self.sw.replays.as_mut().expect("error state exists only with link errors");
            r.retries[o as usize] += bad as u32;
        }
    }

    /// Under end-to-end recovery: whether the packet of `size` phits output `o` sends at
    /// `t` arrives bad, and is dropped by the receiving switch. Counted as a drop, and on
    /// the link as a retry (a bad packet).
    pub(super) fn arrives_bad(
        &mut self,
        sh: &Shared,
        o: PortId,
        size: u16,
        t: u64,
        st: &mut PartitionStats,
    ) -> bool {
        let (class, r) = self.errors_at(sh, o);
        if !r.copy_goes_bad(o, size, class.phit) {
            return false;
        }
        st.count_drop(size, Self::in_measurement(sh, t));
        self.count_bad(sh, o, 1, t, st);
        true
    }

    /// Output `o` sends a packet of `size` phits taking `serialization` cycles at `t`: the
    /// cycles its replays add before the good copy starts (0 if no phit of it goes wrong).
    /// A bad copy is sent in full, found bad, reported and replayed.
    pub(super) fn replay_delay(
        &mut self,
        sh: &Shared,
        o: PortId,
        size: u16,
        serialization: u64,
        t: u64,
        st: &mut PartitionStats,
    ) -> u64 {
        let (class, r) = self.errors_at(sh, o);
        let mut replays = 0;
        while r.copy_goes_bad(o, size, class.phit) {
            replays += 1;
        }
        if replays > 0 {
            self.count_bad(sh, o, replays, t, st);
        }
        replays * (serialization + class.round_trip)
    }
}
