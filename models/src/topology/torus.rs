//! n-dimensional torus or mesh with per-dimension wrap-around.
//!
//! Switch ids are mixed-radix with dimension 0 varying fastest. Port layout: terminals
//! `0..T`, then two ports per dimension: `T + 2*dim` goes to coordinate `+1` and
//! `T + 2*dim + 1` to coordinate `-1`. On a mesh the ports at the edges stay unconnected.

use super::PortId;
use serde::Serialize;

/// Parameters kept for routing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TorusShape {
    /// Switches per dimension.
    pub sides: Vec<u32>,
    /// Whether each dimension wraps around.
    pub wrap: Vec<bool>,
    /// Endpoints per switch.
    pub endpoints_per_switch: u32,
}

impl TorusShape {
    /// Coordinate of switch `s` in dimension `dim`.
    pub fn coord(&self, s: u32, dim: usize) -> u32 {
        let stride: u32 = self.sides[..dim].iter().product();
        (s / stride) % self.sides[dim]
    }

    /// Port towards `+1` (`positive`) or `-1` in dimension `dim`.
    pub fn port(&self, dim: usize, positive: bool) -> PortId {
        (self.endpoints_per_switch + 2 * dim as u32 + u32::from(!positive)) as PortId
    }

    /// Dimension and direction of a network port, or `None` for a terminal port.
    pub fn port_direction(&self, port: PortId) -> Option<(usize, bool)> {
        let p = (port as u32).checked_sub(self.endpoints_per_switch)?;
        Some(((p / 2) as usize, p % 2 == 0))
    }
}
