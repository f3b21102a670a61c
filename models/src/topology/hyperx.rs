//! HyperX (Ahn et al., SC'09): `L` dimensions of `S_k` switches, every dimension a
//! complete graph, `T` endpoints per switch; radix `T + sum(S_k - 1)`.
//!
//! Switch ids are mixed-radix numbers with dimension 0 varying fastest. Port layout of a
//! switch: terminals `0..T`, then for each dimension in order the `S_k - 1` ports to the
//! other switches of that dimension, in increasing coordinate order.

use super::PortId;
use serde::Serialize;

/// Parameters kept for routing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HyperXShape {
    /// Switches per dimension.
    pub sides: Vec<u32>,
    /// Endpoints per switch.
    pub endpoints_per_switch: u32,
}

impl HyperXShape {
    /// Coordinate of switch `s` in dimension `dim`.
    pub fn coord(&self, s: u32, dim: usize) -> u32 {
        let stride: u32 = self.sides[..dim].iter().product();
        (s / stride) % self.sides[dim]
    }

    /// First port of dimension `dim`.
    pub fn dim_offset(&self, dim: usize) -> u32 {
        self.endpoints_per_switch + self.sides[..dim].iter().map(|s| s - 1).sum::<u32>()
    }

    /// The port of a switch whose coordinate in `dim` is `own` leading to coordinate `to`.
    pub fn port_to(&self, dim: usize, own: u32, to: u32) -> PortId {
        debug_assert_ne!(own, to);
        (self.dim_offset(dim) + if to < own { to } else { to - 1 }) as PortId
    }

    /// Switch reached from `s` by setting its coordinate in `dim` to `to`.
    pub fn neighbour(&self, s: u32, dim: usize, to: u32) -> u32 {
        let stride: u32 = self.sides[..dim].iter().product();
        s - self.coord(s, dim) * stride + to * stride
    }
}
