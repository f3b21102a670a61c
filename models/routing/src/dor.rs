//! Dimension-order routing on HyperX and on tori/meshes, with the virtual-channel dateline
//! of Dally and Seitz, "Deadlock-Free Message Routing in Multiprocessor Interconnection
//! Networks", IEEE Trans. Computers C-36(5), 1987, on tori.
//!
//! HyperX: correct the lowest unaligned dimension in one hop (its dimension is a complete
//! graph); one VC suffices. Torus: move along the lowest unaligned dimension the shorter
//! way round (ties go positive); a dateline per dimension breaks ring cycles: a hop whose
//! target coordinate lies past the wrap-around link, seen from the packet's source
//! coordinate, travels on VC 1, all others on VC 0 (Dally and Seitz). Meshes need 1 VC.

use super::registry::{per_switch_state, RoutingEntry, Settings};
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::Packet;
use base::rng::Rng;
use std::sync::Arc;
use topology::shape::HyperXShape;
use topology::shape::TorusShape;
use topology::Shape;
use topology::SwitchId;

/// DOR on a HyperX.
pub struct HyperXDor {
    shape: HyperXShape,
}

impl HyperXDor {
    /// Routing for `shape`.
    pub fn new(shape: HyperXShape) -> Self {
        Self { shape }
    }
}

impl Routing for HyperXDor {
    fn vcs_required(&self) -> u8 {
        1
    }
    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn max_hops(&self) -> u32 {
        self.shape.sides.len() as u32
    }
    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        _p: &mut Packet,
        _l: &dyn LoadView,
        _r: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        for dim in 0..self.shape.sides.len() {
            let (own, to) = (self.shape.coord(at, dim), self.shape.coord(dst, dim));
            if own != to {
                out.push(Candidate { port: self.shape.port_to(dim, own, to), vc: 0, penalty: 0 });
                return;
            }
        }
    }
}

/// DOR with datelines on a torus or mesh.
pub struct TorusDor {
    shape: TorusShape,
    /// Switch of every endpoint, to find a packet's source coordinates.
    endpoint_switch: Arc<Vec<SwitchId>>,
}

impl TorusDor {
    /// Routing for `shape`; `endpoint_switch[e]` is the switch of endpoint `e`.
    pub fn new(shape: TorusShape, endpoint_switch: Arc<Vec<SwitchId>>) -> Self {
        Self { shape, endpoint_switch }
    }

    /// Direction of travel in `dim` from `own` to `to` (`own != to`): true for positive.
    fn positive(&self, dim: usize, own: u32, to: u32) -> bool {
        let k = self.shape.sides[dim];
        if !self.shape.wrap[dim] {
            return to > own;
        }
        let forward = (to + k - own) % k;
        forward <= k - forward
    }
}

impl Routing for TorusDor {
    fn vcs_required(&self) -> u8 {
        if self.shape.wrap.iter().any(|&w| w) {
            2
        } else {
            1
        }
    }
    fn reads(&self) -> Reads {
        // The dateline is placed relative to the packet's source coordinate.
        Reads { source: true, ..Reads::NOTHING }
    }

    fn max_hops(&self) -> u32 {
        self.shape.sides.iter().zip(&self.shape.wrap).map(|(&k, &w)| if w { k / 2 } else { k - 1 }).sum()
    }
    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        p: &mut Packet,
        _l: &dyn LoadView,
        _r: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        for dim in 0..self.shape.sides.len() {
            let (own, to) = (self.shape.coord(at, dim), self.shape.coord(dst, dim));
            if own == to {
                continue;
            }
            let k = self.shape.sides[dim];
            let positive = self.positive(dim, own, to);
            let next = if positive { (own + 1) % k } else { (own + k - 1) % k };
            let src = self.shape.coord(self.endpoint_switch[p.src() as usize], dim);
            let past_dateline = self.shape.wrap[dim] && if positive { next < src } else { next > src };
            out.push(Candidate { port: self.shape.port(dim, positive), vc: past_dateline as u8, penalty: 0 });
            return;
        }
    }
}

/// `dor` in the routing registry.
pub const DOR: RoutingEntry = RoutingEntry {
    name: "dor",
    doc: "dimension-order routing: the lowest unaligned dimension first (HyperX: one hop per dimension; tori: the shorter way round with a dateline per ring)",
    topologies: "hyperx (1 VC), torus (2 VCs: datelines), mesh (1 VC)",
    vcs: "as shown",
    settings: Settings::NONE,
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: true,
    state_bytes: per_switch_state,
    build: |ctx| match &ctx.net.shape {
        Shape::HyperX(h) => Ok(Arc::new(HyperXDor::new(h.clone()))),
        Shape::Torus(t) => Ok(Arc::new(TorusDor::new(t.clone(), ctx.endpoint_switch.clone()))),
        _ => Err(ctx.needs("hyperx, torus or mesh")),
    },
};
