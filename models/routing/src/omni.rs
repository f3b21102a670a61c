//! Omnidimensional routes on HyperX: at every hop, any neighbour in a dimension where the
//! switch and the destination still differ. The hop to the destination's coordinate is
//! minimal; the others are deroutes, limited in number.
//!
//! * `omniwar`: OmniWAR's route set (McDonald et al., "Practical and Efficient Incremental
//!   Adaptive Routing for HyperX Networks", SC'19), as the SurePath seed describes it
//!   (section 3.1.1): at most `m` deroutes in all (default `m = n`, the dimensions), any
//!   number of them in one dimension; routes of at most `n + m` hops.
//! * `dal`: DAL (Ahn et al., "HyperX: Topology, Routing, and Packaging of Efficient
//!   Large-Scale Networks", SC'09): at most one deroute in each dimension; routes of at
//!   most `2n` hops.
//!
//! Minimal hops carry no penalty and deroutes 64 phits (the paper's values), so that the
//! adaptive selection derotes only when the minimal outputs are that much busier. Both
//! default to the ladder VC policy (VC = hops taken, `n + m` and `2n` VCs); SurePath
//! (`routing.escape_vcs`) replaces it with an escape subnetwork. With failed links a
//! packet may find every hop of its route set cut: it then needs the escape, so faulty
//! networks are refused without one.

use super::registry::{RoutingEntry, Settings, StateSize};
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::{Packet, RouteState};
use crate::registry::BuildContext;
use crate::RoutingError;
use base::rng::Rng;
use base::settings::Setting;
use serde::Deserialize;
use std::sync::Arc;
use topology::shape::HyperXShape;
use topology::{Network, PortId, PortTarget, Shape, SwitchId};

/// How many deroutes a route may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DerouteLimit {
    /// At most this many in all (OmniWAR); the route state counts them.
    Total(u8),
    /// At most one per dimension (DAL); the route state keeps a bit per dimension.
    OncePerDimension,
}

/// Omnidimensional routes on a HyperX (see the module docs).
pub struct Omnidimensional {
    shape: HyperXShape,
    limit: DerouteLimit,
    deroute_penalty: u16,
    /// Ports per switch (terminal and network).
    radix: u32,
    /// With failed links: a bit per `(switch, port)` that is not connected.
    cut: Option<Vec<u64>>,
}

impl Omnidimensional {
    /// The route set of `limit` on `net` (a HyperX, possibly with failed links).
    pub fn new(net: &Network, shape: HyperXShape, limit: DerouteLimit, deroute_penalty: u16) -> Self {
        let radix = shape.endpoints_per_switch + shape.sides.iter().map(|k| k - 1).sum::<u32>();
        let cut = (net.failed_links > 0).then(|| {
            let mut bits = vec![0u64; (net.num_switches() * radix as usize).div_ceil(64)];
            for s in 0..net.num_switches() as SwitchId {
                for (p, port) in net.ports(s).iter().enumerate() {
                    if matches!(port.target, PortTarget::Unconnected) {
                        let i = s as usize * radix as usize + p;
                        bits[i / 64] |= 1 << (i % 64);
                    }
                }
            }
            bits
        });
        Self { shape, limit, deroute_penalty, radix, cut }
    }

    fn dimensions(&self) -> usize {
        self.shape.sides.len()
    }

    fn is_connected(&self, at: SwitchId, port: PortId) -> bool {
        self.cut.as_ref().is_none_or(|bits| {
            let i = at as usize * self.radix as usize + port as usize;
            bits[i / 64] & (1 << (i % 64)) == 0
        })
    }

    /// Whether a packet with route state `state` may still deroute in `dim`.
    fn may_deroute(&self, state: &RouteState, dim: usize) -> bool {
        match self.limit {
            DerouteLimit::Total(m) => state.phase < m,
            DerouteLimit::OncePerDimension => state.phase & (1 << dim) == 0,
        }
    }

    /// The dimension of network port `port` and the coordinate it leads to from `own`.
    fn port_target(&self, port: PortId, own: impl Fn(usize) -> u32) -> (usize, u32) {
        let mut offset = self.shape.endpoints_per_switch;
        for (dim, &side) in self.shape.sides.iter().enumerate() {
            let index = port as u32 - offset;
            if (port as u32) < offset + side - 1 {
                let own = own(dim);
                return (dim, if index < own { index } else { index + 1 });
            }
            offset += side - 1;
        }
        unreachable!("port {port} is not a network port of the HyperX")
    }
}

impl Routing for Omnidimensional {
    fn vcs_required(&self) -> u8 {
        1
    }

    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn max_hops(&self) -> u32 {
        let n = self.dimensions() as u32;
        match self.limit {
            DerouteLimit::Total(m) => n + m as u32,
            DerouteLimit::OncePerDimension => 2 * n,
        }
    }

    /// The destination switch rides in the route state, for `on_forward` to tell deroutes.
    fn init(&self, _src: SwitchId, dst: SwitchId, state: &mut RouteState, _rng: &mut Rng) {
        state.phase = 0;
        state.intermediate = dst;
    }

    fn initial_states(
        &self,
        _src: SwitchId,
        dst: SwitchId,
        mut base: RouteState,
        out: &mut Vec<RouteState>,
    ) -> bool {
        base.phase = 0;
        base.intermediate = dst;
        out.push(base);
        true
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        _load: &dyn LoadView,
        _rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        for (dim, &side) in self.shape.sides.iter().enumerate() {
            let (own, to) = (self.shape.coord(at, dim), self.shape.coord(dst, dim));
            if own == to {
                continue;
            }
            let minimal = self.shape.port_to(dim, own, to);
            if self.is_connected(at, minimal) {
                out.push(Candidate { port: minimal, vc: 0, penalty: 0 });
            }
            if self.may_deroute(&packet.route, dim) {
                for v in (0..side).filter(|&v| v != own && v != to) {
                    let port = self.shape.port_to(dim, own, v);
                    if self.is_connected(at, port) {
                        out.push(Candidate { port, vc: 0, penalty: self.deroute_penalty });
                    }
                }
            }
        }
    }

    fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        let dst = packet.route.intermediate;
        let (dim, to) = self.port_target(chosen.port, |d| self.shape.coord(at, d));
        if to != self.shape.coord(dst, dim) {
            match self.limit {
                DerouteLimit::Total(_) => packet.route.phase += 1,
                DerouteLimit::OncePerDimension => packet.route.phase |= 1 << dim,
            }
        }
    }
}

/// The HyperX shape of `ctx`'s network, or the error naming the routing.
fn hyperx_shape(ctx: &BuildContext<'_>) -> Result<HyperXShape, RoutingError> {
    let Shape::HyperX(shape) = &ctx.net.shape else {
        return Err(ctx.needs("hyperx"));
    };
    if ctx.net.failed_links > 0 && ctx.escape_vcs == 0 {
        return Err(needs_escape(ctx));
    }
    Ok(shape.clone())
}

/// The error for a route set that failed links may cut, run without an escape.
pub(super) fn needs_escape(ctx: &BuildContext<'_>) -> RoutingError {
    RoutingError::new(
        "routing.escape_vcs",
        format!(
            "`{}` with {} failed links needs an escape subnetwork (routing.escape_vcs >= 1, SurePath): \
             faults may cut every route it offers a packet",
            ctx.entry.name, ctx.net.failed_links
        ),
    )
}

/// A record per switch, and with failed links a bit per network port.
fn omni_state(size: &StateSize) -> u64 {
    size.per_switch().saturating_add(size.switches.saturating_mul(size.degree) / 8)
}

const DEROUTE_PENALTY: Setting = Setting {
    key: "deroute_penalty",
    default: "64",
    doc: "phits added to a deroute's occupancy when the adaptive selection compares candidates (the SurePath paper's (Camarero et al., FTXS'24) 64)",
};

/// `omniwar` in the routing registry.
pub const OMNIWAR: RoutingEntry = RoutingEntry {
    name: "omniwar",
    doc: "Omnidimensional routes (OmniWAR, McDonald et al. SC'19): any neighbour in a still-unaligned dimension, at most `deroutes` non-minimal hops in all",
    topologies: "hyperx",
    vcs: "ladder: dimensions + deroutes",
    settings: Settings::typed::<OmniWarSettings>(&[
        Setting {
            key: "deroutes",
            default: "the dimension count",
            doc: "non-minimal hops allowed per route, 0..=32 (the paper's m = n)",
        },
        DEROUTE_PENALTY,
    ]),
    default_vc_policy: VcPolicy::Ladder,
    needs_intact_topology: false,
    state_bytes: omni_state,
    build: |ctx| {
        let s: OmniWarSettings = ctx.settings()?;
        let shape = hyperx_shape(ctx)?;
        let m = s.deroutes.unwrap_or(shape.sides.len() as u32);
        if m > 32 {
            return Err(RoutingError::new("routing.omniwar.deroutes", format!("must be at most 32, got {m}")));
        }
        Ok(Arc::new(Omnidimensional::new(ctx.net, shape, DerouteLimit::Total(m as u8), s.deroute_penalty)))
    },
};

/// `dal` in the routing registry.
pub const DAL: RoutingEntry = RoutingEntry {
    name: "dal",
    doc: "DAL (Ahn et al. SC'09): any neighbour in a still-unaligned dimension, at most one non-minimal hop in each dimension",
    topologies: "hyperx",
    vcs: "ladder: 2 x dimensions",
    settings: Settings::typed::<DalSettings>(&[DEROUTE_PENALTY]),
    default_vc_policy: VcPolicy::Ladder,
    needs_intact_topology: false,
    state_bytes: omni_state,
    build: |ctx| {
        let s: DalSettings = ctx.settings()?;
        let shape = hyperx_shape(ctx)?;
        if shape.sides.len() > 8 {
            return Err(ctx.needs("hyperx of at most 8 dimensions"));
        }
        Ok(Arc::new(Omnidimensional::new(ctx.net, shape, DerouteLimit::OncePerDimension, s.deroute_penalty)))
    },
};

fn sixty_four() -> u16 {
    64
}

/// `[routing.omniwar]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OmniWarSettings {
    #[serde(default)]
    deroutes: Option<u32>,
    #[serde(default = "sixty_four")]
    deroute_penalty: u16,
}

/// `[routing.dal]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DalSettings {
    #[serde(default = "sixty_four")]
    deroute_penalty: u16,
}
