//! Routing on a network of GPU nodes (`[topology.nodes]`, `topology::nodes`): the routing
//! the configuration names routes the fabric, built on the fabric alone; this wrapper adds
//! the hops into and out of the GPUs.
//!
//! - At a GPU (where every route starts): to a GPU of the same node, its scale-up link
//!   (to the NVSwitch, or straight to the peer); otherwise any of its NIC's ports, one per
//!   plane, for the selection to choose. With PXN (`topology.nodes.pxn`), traffic to a GPU
//!   of another node on another rail first crosses the scale-up domain to the GPU of its
//!   node in the destination's place, on the destination's rail
//!   ([`NodeLayout::exit_gpu`]), which sends it out of its NIC.
//! - At an NVSwitch: the port to the GPU in the destination's place in the node.
//! - In a plane of the fabric: at the switch where the destination GPU's NIC attaches, the
//!   port down to it; elsewhere what the fabric's routing offers towards that switch.
//!   With `dual_tor` the destination's NIC attaches to both leaves of a pair, which share
//!   their spines: what the fabric's routing offers towards either (the same up-links,
//!   and at a spine both down-links), so that a packet may enter the pair by either leaf.
//!
//! The ladder VC policies (`ladder`, `wide_ladder`) climb with the fabric's hops only: the
//! wrapper applies them to the fabric routing's candidates itself (the routes then take
//! the `routing` policy), so that a network of nodes needs the VCs its fabric needs. The
//! other policies read no hop count and apply as on any network.
//!
//! GPUs forward only with PXN, and only from the scale-up links to their NIC, before the
//! fabric: routes start and end at GPUs, as RDMA traffic does. (NCCL's PXN copies the
//! data into the peer GPU's memory, whose proxy then sends it; here the peer GPU passes it
//! on cut-through, so a PXN message is as fast as its slowest link, NVLink or NIC.) The
//! fabric's routing sees the packet as if it had been injected at the leaf of the GPU it
//! leaves by: its hop count less the hops before the fabric, and its destination as the
//! fabric endpoint the destination GPU's NIC takes. The fabric's routing state, VCs and
//! deadlock freedom carry over: the hops into a GPU drain to its endpoint, and the hops
//! out of one (and, with PXN, across its node first) start a route.

use super::{Candidate, Feedback, LoadView, Reads, Report, Routing, Sharing, VcPolicy};
use crate::packet::{Packet, RouteState};
use base::rng::Rng;
use std::sync::Arc;
use topology::nodes::{NodeLayout, ScaleUp};
use topology::{EndpointId, PortId, SwitchId};

/// A fabric's routing on a network of GPU nodes (see the module docs).
pub struct Nodes {
    inner: Arc<dyn Routing>,
    layout: Arc<NodeLayout>,
    /// A ladder policy the wrapper applies on the fabric's hops, and the VCs it has.
    ladder: Option<(VcPolicy, u8)>,
}

impl Nodes {
    /// `inner`, built on `layout.fabric`, on the network of nodes `layout` describes, under
    /// `vc_policy` with `vcs` VCs: a ladder policy ([`Nodes::applies`]) is applied here.
    pub fn new(inner: Arc<dyn Routing>, layout: Arc<NodeLayout>, vc_policy: VcPolicy, vcs: u8) -> Self {
        let ladder = Self::applies(vc_policy).then_some((vc_policy, vcs));
        Nodes { inner, layout, ladder }
    }

    /// Whether the wrapper applies `policy` itself, counting the fabric's hops only (the
    /// routes then take [`VcPolicy::Routing`]).
    pub fn applies(policy: VcPolicy) -> bool {
        matches!(policy, VcPolicy::Ladder | VcPolicy::WideLadder)
    }

    /// The ladder policy on the fabric routing's candidates `out`, `hops` fabric hops taken.
    fn climb(&self, hops: u16, out: &mut Vec<Candidate>) {
        let Some((policy, vcs)) = self.ladder else { return };
        if policy == VcPolicy::Ladder {
            out.iter_mut().for_each(|c| c.vc = hops as u8);
            return;
        }
        let per_step = (vcs as u32 / self.inner.max_hops().max(1)).max(1);
        let first = hops as u32 * per_step;
        let last = (first + per_step).min(vcs as u32);
        assert!(first < last, "the wide ladder ran out of VCs: {hops} fabric hops, {vcs} VCs");
        crate::routes::spread_over_vcs(out, first as u8..last as u8);
    }

    /// The port of fabric switch `fabric_at` down to GPU `dst`'s NIC, or where it has
    /// none, the leaf the fabric's routing steers towards (with `dual_tor`, the first of
    /// the pair).
    #[inline]
    fn down_port(&self, fabric_at: SwitchId, dst: u32) -> Result<PortId, SwitchId> {
        let (leaf, down) = self.layout.attachment(dst);
        if fabric_at == leaf {
            return Ok(down);
        }
        if self.layout.dual_tor {
            let (other, down) = self.layout.attachment_on(dst, 1);
            if fabric_at == other {
                return Ok(down);
            }
        }
        Err(leaf)
    }

    /// Whether GPU `a` reaches GPU `b` over its scale-up links.
    fn same_domain(&self, a: u32, b: u32) -> bool {
        self.layout.scale_up != ScaleUp::None && self.layout.node_of(a) == self.layout.node_of(b)
    }

    /// Runs `f` on the packet as the fabric's routing sees it: without the hops before
    /// the fabric (out of its GPU, and across its node with PXN), its destination the
    /// fabric endpoint of its GPU's NIC; then restores both.
    fn as_fabric<T>(&self, packet: &mut Packet, f: impl FnOnce(&mut Packet) -> T) -> T {
        let (hops, dst) = (packet.hops, packet.dst);
        packet.hops = hops.saturating_sub(1 + self.layout.hops_to_exit(packet.src(), dst));
        packet.dst = self.layout.fabric_endpoint(dst);
        let out = f(packet);
        packet.hops = hops;
        packet.dst = dst;
        out
    }
}

impl Routing for Nodes {
    fn vcs_required(&self) -> u8 {
        match self.ladder {
            // A VC per fabric hop of the longest route (as the ladder checks on the fabric).
            Some((VcPolicy::Ladder, _)) => self.inner.max_hops().clamp(1, u8::MAX as u32) as u8,
            _ => self.inner.vcs_required(),
        }
    }

    fn max_hops(&self) -> u32 {
        // Out of the source GPU and into the destination one, and with PXN across the
        // source's node first.
        let pxn = if self.layout.pxn { self.layout.scale_up_hops() } else { 0 };
        self.inner.max_hops() + 2 + u32::from(pxn)
    }

    fn init(&self, src: SwitchId, dst: SwitchId, state: &mut RouteState, rng: &mut Rng) {
        if !self.same_domain(src, dst) {
            let exit = self.layout.exit_gpu(src, dst);
            let (a, b) = (self.layout.attachment(exit).0, self.layout.attachment(dst).0);
            self.inner.init(a, b, state, rng);
        }
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        let l = &*self.layout;
        let vc = packet.vc;
        if l.is_gpu(at) {
            let exit = l.exit_gpu(at, dst);
            if exit != at {
                // PXN: across the node to the GPU on the destination's rail first.
                out.push(Candidate { port: l.scale_up_port(at, exit), vc, penalty: 0 });
            } else if self.same_domain(at, dst) {
                out.push(Candidate { port: l.scale_up_port(at, dst), vc, penalty: 0 });
            } else {
                out.extend((0..l.nic_ports()).map(|p| Candidate {
                    port: NodeLayout::nic_port(p),
                    vc,
                    penalty: 0,
                }));
            }
            return;
        }
        let Some((_, fabric_at)) = l.in_fabric(at) else {
            // An NVSwitch: its port g leads to GPU g of its node (with PXN, the GPU in the
            // destination's place, which its traffic leaves by).
            out.push(Candidate { port: (dst % l.gpus) as PortId, vc, penalty: 0 });
            return;
        };
        let leaf = match self.down_port(fabric_at, dst) {
            Ok(down) => {
                out.push(Candidate { port: down, vc, penalty: 0 });
                return;
            }
            Err(leaf) => leaf,
        };
        self.as_fabric(packet, |p| {
            self.inner.candidates(fabric_at, leaf, p, load, rng, out);
            if l.dual_tor {
                // The pair's other leaf: its candidates that are not already offered.
                let (other, _) = l.attachment_on(dst, 1);
                let first = out.len();
                self.inner.candidates(fabric_at, other, p, load, rng, out);
                let mut i = first;
                while i < out.len() {
                    let c = out[i];
                    if out[..first].iter().any(|d| d.port == c.port && d.vc == c.vc) {
                        out.swap_remove(i);
                    } else {
                        i += 1;
                    }
                }
            }
            self.climb(p.hops, out);
        });
    }

    fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        if let Some((_, fabric_at)) = self.layout.in_fabric(at) {
            if self.down_port(fabric_at, packet.dst).is_err() {
                self.as_fabric(packet, |p| self.inner.on_forward(fabric_at, chosen, p));
            }
        }
    }

    fn prefetch(&self, at: SwitchId, dst: SwitchId) {
        if let Some((_, fabric_at)) = self.layout.in_fabric(at) {
            self.inner.prefetch(fabric_at, self.layout.attachment(dst).0);
        }
    }

    fn reads(&self) -> Reads {
        let inner = self.inner.reads();
        // The fabric's load-dependent hops come one hop later.
        Reads { load_hops: inner.load_hops + u16::from(inner.load), ..inner }
    }

    fn initial_states(
        &self,
        src: SwitchId,
        dst: SwitchId,
        base: RouteState,
        out: &mut Vec<RouteState>,
    ) -> bool {
        if self.same_domain(src, dst) {
            out.push(base);
            return true;
        }
        let exit = self.layout.exit_gpu(src, dst);
        let (a, b) = (self.layout.attachment(exit).0, self.layout.attachment(dst).0);
        self.inner.initial_states(a, b, base, out)
    }

    fn sharing(&self) -> Option<Sharing> {
        self.inner.sharing()
    }

    fn report(&self, at: SwitchId, load: &dyn LoadView, out: &mut Report) {
        if let Some((_, fabric_at)) = self.layout.in_fabric(at) {
            self.inner.report(fabric_at, load, out);
        }
    }

    fn reports_to(&self, at: SwitchId, port: PortId) -> bool {
        self.layout.in_fabric(at).is_some_and(|(_, fabric_at)| {
            // Not down to a GPU: the fabric had an endpoint there.
            port >= self.layout.fabric.terminals[fabric_at as usize] && self.inner.reports_to(fabric_at, port)
        })
    }

    fn learned_len(&self, at: SwitchId) -> usize {
        self.layout.in_fabric(at).map_or(0, |(_, fabric_at)| self.inner.learned_len(fabric_at))
    }

    fn init_learned(&self, at: SwitchId, out: &mut [f32]) {
        if let Some((_, fabric_at)) = self.layout.in_fabric(at) {
            self.inner.init_learned(fabric_at, out);
        }
    }

    fn on_arrive(
        &self,
        at: SwitchId,
        in_port: PortId,
        dst: SwitchId,
        packet: &mut Packet,
        now: u64,
        learned: &[f32],
    ) -> Option<Feedback> {
        // From a GPU (a terminal port of the fabric) the packet is, as far as the fabric can
        // tell, just injected; its feedback goes back to the GPU, which ignores it.
        let (_, fabric_at) = self.layout.in_fabric(at)?;
        let leaf = self.layout.attachment(dst).0;
        self.as_fabric(packet, |p| self.inner.on_arrive(fabric_at, in_port, leaf, p, now, learned))
    }

    fn on_feedback(&self, at: SwitchId, port: PortId, feedback: Feedback, learned: &mut [f32]) {
        if let Some((_, fabric_at)) = self.layout.in_fabric(at) {
            self.inner.on_feedback(fabric_at, port, feedback, learned);
        }
    }

    fn build_summary(&self) -> Option<String> {
        self.inner.build_summary()
    }

    fn destination_class(&self, _endpoint: EndpointId) -> Option<u32> {
        // A GPU switch has one endpoint: its switch says everything the fabric's routing
        // may read of it.
        None
    }
}
