//! Random regular graph (Jellyfish, Singla et al., NSDI'12).
use serde::Serialize;

/// Parameters kept for reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RrgShape {
    /// Switches.
    pub switches: u32,
    /// Network ports per switch.
    pub degree: u32,
    /// Endpoints per switch.
    pub endpoints_per_switch: u32,
    /// Seed actually used to build the graph (after retries).
    pub seed_used: u64,
}
