//! Why a routing cannot be built, as a user reads it: the configuration key to change and
//! what is allowed. The key is the full dotted key of the configuration file, since a
//! routing fails for reasons that live in several sections: too few VCs (`router.vcs`), a
//! routing that does not run on this network (`routing.algorithm`), a bad setting of its
//! own (`routing.NAME.SETTING`), an escape root (`routing.escape_root`), or a network no
//! routing can route (`topology.kind`, `topology.failed_links`).

use base::cancel::Interrupted;
use base::settings::ConfigError;
use topology::{SwitchId, TopologyError};

/// A routing that cannot be built; shown as `key: message`, e.g. `router.vcs: lash needs 5
/// layers, 4 available (one VC per layer)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct RoutingError {
    /// The full dotted configuration key to change: `router.vcs`, `routing.algorithm`,
    /// `routing.NAME.SETTING`, `routing.escape_root`, `topology.kind`, ...; `routing` for
    /// a build that was interrupted.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl RoutingError {
    /// An error naming `key` (a full dotted key, e.g. `routing.allpath.k`).
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self { key: key.into(), message: message.into() }
    }

    /// The routing does not run on this network: named under `routing.algorithm`.
    pub fn algorithm(message: impl Into<String>) -> Self {
        Self::new("routing.algorithm", message)
    }

    /// The network is disconnected, which no routing can route: named under
    /// `topology.kind`.
    pub fn disconnected(from: SwitchId, to: SwitchId) -> Self {
        Self::new("topology.kind", format!("network is disconnected: no path from switch {from} to {to}"))
    }
}

impl From<TopologyError> for RoutingError {
    /// The network's own error (its key relative to `[topology]`), named `topology.KEY`.
    fn from(e: TopologyError) -> Self {
        Self::new(format!("topology.{}", e.key), e.message)
    }
}

impl From<Interrupted> for RoutingError {
    /// A stop asked for while the routing was built: named under `routing`, "interrupted
    /// while ...".
    fn from(e: Interrupted) -> Self {
        Self::new("routing", e.to_string())
    }
}

impl From<ConfigError> for RoutingError {
    /// A settings error; its key is already a full key.
    fn from(e: ConfigError) -> Self {
        Self::new(e.key, e.message)
    }
}

impl From<RoutingError> for ConfigError {
    /// The same key and message: a routing error is a configuration error.
    fn from(e: RoutingError) -> Self {
        ConfigError::new(e.key, e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_keep_or_complete_the_key() {
        let t: RoutingError = TopologyError::new("failed_links", "too many").into();
        assert_eq!(t.to_string(), "topology.failed_links: too many");
        let i: RoutingError = Interrupted("building the Nue layers".into()).into();
        assert_eq!(i.to_string(), "routing: interrupted while building the Nue layers");
        let c: RoutingError = ConfigError::new("routing.nue.order", "unknown variant").into();
        assert_eq!(c.key, "routing.nue.order");
        let back: ConfigError = RoutingError::new("router.vcs", "needs 3 VCs").into();
        assert_eq!((back.key.as_str(), back.message.as_str()), ("router.vcs", "needs 3 VCs"));
    }
}
