//! Link-level flow control other than credits (`router.flow_control`): PFC's pauses and
//! resumes, and the drops of a full input buffer.
//!
//! # Sender: the credit record as a gate
//! Under `pfc` and `none` the sender of a switch-to-switch link keeps no count of the room
//! downstream. Each output VC's credit record becomes a gate: the whole downstream buffer
//! while the VC may send, nothing while it is paused, never spent. So the link's arbiter
//! (a paused VC waits as one without credits), its stall count (a paused VC with packets
//! waiting stalls the link: PFC's pause time, as a port's XmitWait counts it) and adaptive
//! routing's occupancy (a paused VC reads as a full one) work as under credits, and no
//! credit message crosses a link.
//!
//! # Receiver: levels, pauses, drops
//! The receiver counts the phits held in each input VC ([`InputLevels`]). A head that finds
//! no room for all of its packet is dropped and counted on its link. Under `pfc`, once the
//! VC holds more than `xoff` phits the receiver sends a pause for that VC (a priority
//! class), and once it has drained to `xon` or fewer a resume. A pause or resume leaves
//! when the frame the receiver is sending on the reverse link has left (IEEE 802.1Qbb's
//! frames wait for the frame in progress), crosses the link's latency and acts after the
//! sender's response delay (`router.pfc.delay`).
//!
//! # Headroom
//! What arrives between the crossing of `xoff` and the moment the pause acts must fit above
//! `xoff`: the packet that crossed it, the one whose head was already on its way, and what
//! the link carries for the round trip of the pause (twice its latency, the wait for the
//! reverse frame, the response delay). So by default `xoff` is the buffer less
//! `2 P + ceil(s (2 L + w + d))` phits, for a link class of latency `L`, speed `s`, largest
//! packet `P`, reverse wait `w = P / s` and delay `d`, and a run under default thresholds
//! drops nothing (tested past saturation). Thresholds set by hand may leave less, and
//! then packets are lost despite PFC.

use super::buffers::NETWORK;
use super::messages::{LinkMsg, Post};
use super::stats::PartitionStats;
use super::{FlowControl, RouterCtx, RouterParams, RouterState, Shared};
use base::settings::ConfigError;
use topology::{LinkSpeed, PortId};

/// A link class's PFC thresholds, in phits per input VC (its buffer's room is the
/// router's `input_capacity`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Levels {
    /// Held phits above which the sender is paused (`u16::MAX`: never, under `none`).
    pub xoff: u16,
    /// Held phits at or below which a paused sender resumes.
    pub xon: u16,
}

/// The flow control of a run that does not use credits: what every link class's
/// receivers do.
#[derive(Clone, Debug)]
pub struct FlowLevels {
    /// The sender's response delay, in cycles (`router.pfc.delay`).
    pub delay: u64,
    /// Per link class.
    pub classes: Vec<Levels>,
}

/// What [`FlowLevels::new`] needs of a link class.
#[derive(Clone, Copy, Debug)]
pub struct ClassLink<'a> {
    /// Its name, for errors.
    pub name: &'a str,
    /// Latency in cycles.
    pub latency: u64,
    /// Speed.
    pub speed: LinkSpeed,
    /// The largest packet its links carry, in phits.
    pub largest_packet: u16,
    /// Whether any of its links joins two switches (an endpoint's link keeps credits).
    pub between_switches: bool,
}

impl FlowLevels {
    /// The levels of `params`'s flow control on links of `classes`; `None` under credits.
    /// The error names the key to change: `router.input_buffer` when a class's buffer
    /// cannot hold its headroom and a packet, `router.pfc.xoff` or `xon` when they do not
    /// fit.
    pub fn new(params: &RouterParams, classes: &[ClassLink<'_>]) -> Result<Option<Self>, ConfigError> {
        let pfc = match params.flow_control {
            FlowControl::Credits => return Ok(None),
            FlowControl::Pfc => true,
            FlowControl::None => false,
        };
        let given = params.pfc.unwrap_or_default();
        let mut levels = Vec::with_capacity(classes.len());
        for class in classes {
            let capacity = class.speed.scaled_buffer(params.input_buffer).min(u16::MAX as u64);
            if !pfc || !class.between_switches {
                levels.push(Levels { xoff: u16::MAX, xon: 0 });
                continue;
            }
            let packet = class.largest_packet as u64;
            let xoff = match given.xoff {
                Some(x) => class.speed.scaled_buffer(x),
                None => {
                    let room = headroom(class, given.delay);
                    if capacity < room + packet {
                        return Err(ConfigError::new(
                            "router.input_buffer",
                            format!(
                                "PFC needs {} phits per VC on the `{}` links (latency {}, {} phits a cycle): {room} of headroom for what arrives while a pause travels, and a packet of {packet} below it; the buffer there holds {capacity}. Raise router.input_buffer or set router.pfc.xoff",
                                room + packet,
                                class.name,
                                class.latency,
                                class.speed
                            ),
                        ));
                    }
                    capacity - room
                }
            };
            if xoff == 0 || xoff > capacity {
                return Err(ConfigError::new(
                    "router.pfc.xoff",
                    format!(
                        "must be in 1..=router.input_buffer ({}), got {}",
                        params.input_buffer,
                        given.xoff.unwrap_or(0)
                    ),
                ));
            }
            let xon = match given.xon {
                Some(x) => class.speed.scaled_buffer(x),
                None => xoff.saturating_sub(2 * packet),
            };
            if xon >= xoff {
                return Err(ConfigError::new(
                    "router.pfc.xon",
                    format!(
                        "must be below router.pfc.xoff ({xoff} phits on the `{}` links), got {xon}",
                        class.name
                    ),
                ));
            }
            levels.push(Levels { xoff: xoff as u16, xon: xon as u16 });
        }
        Ok(Some(FlowLevels { delay: given.delay, classes: levels }))
    }
}

/// Phits that can arrive at a link's receiver after the head that takes its input VC past
/// `xoff`, before the pause acts: the module docs' `2 P + ceil(s (2 L + w + d))`.
pub fn headroom(class: &ClassLink<'_>, delay: u64) -> u64 {
    let packet = class.largest_packet as u64;
    let s = class.speed;
    let reverse_wait = s.serialization(class.largest_packet);
    let cycles = 2 * class.latency + reverse_wait + delay;
    2 * packet + (cycles * s.phits as u64).div_ceil(s.cycles as u64)
}

/// A receiver's count of what its input VCs hold, and what its links lost and paused,
/// under `pfc` and `none` (`Switch::levels`).
#[derive(Clone, Debug)]
pub(super) struct InputLevels {
    /// Phits held by each input VC (`port * vcs + vc`) of a switch-to-switch port.
    held: Vec<u16>,
    /// Input VCs whose sender this router has paused.
    paused: Vec<bool>,
    /// Per port, packets dropped at its input in the measurement window.
    pub(super) drops: Vec<u32>,
    /// Per port, pauses its output received in the measurement window.
    pub(super) pauses: Vec<u32>,
    /// Per output VC (`port * vcs + vc`): since when it is paused (while it is).
    paused_since: Vec<u32>,
    /// Per port, the longest time one of its output VCs stayed paused, in the
    /// measurement window (pauses over).
    longest_pause: Vec<u32>,
}

impl InputLevels {
    /// Whether input VC `input` has paused its sender (and not resumed it yet).
    pub(super) fn pauses_upstream(&self, input: usize) -> bool {
        self.paused[input]
    }

    /// The longest pause of port `port`'s output VCs (of `vcs`) in the window `from..to`,
    /// with `open(vc)` telling whether VC `vc` is sending (a pause under way is counted
    /// to `to`).
    pub(super) fn longest_pause(
        &self,
        port: usize,
        vcs: usize,
        from: u64,
        to: u64,
        open: impl Fn(usize) -> bool,
    ) -> u64 {
        let ongoing = (0..vcs)
            .filter(|&v| !open(v))
            .map(|v| to.saturating_sub((self.paused_since[port * vcs + v] as u64).max(from)))
            .max()
            .unwrap_or(0);
        ongoing.max(self.longest_pause[port] as u64)
    }

    pub(super) fn new(ports: usize, vcs: usize) -> Self {
        InputLevels {
            held: vec![0; ports * vcs],
            paused: vec![false; ports * vcs],
            drops: vec![0; ports],
            pauses: vec![0; ports],
            paused_since: vec![0; ports * vcs],
            longest_pause: vec![0; ports],
        }
    }
}

impl RouterState {
    /// The levels of port `port`'s link class.
    fn levels_at(&self, sh: &Shared, port: PortId) -> Levels {
        let flow = sh.flow.as_ref().expect("levels exist only with a flow control");
        flow.classes[sh.ports.of(self.local as usize)[port as usize].class as usize]
    }

    /// A head for input VC `input` of network port `port`: whether its packet of `size`
    /// phits fits. It is counted in if so (pausing the sender past `xoff`), dropped and
    /// counted otherwise.
    pub(super) fn admit(
        &mut self,
        sh: &Shared,
        port: PortId,
        input: usize,
        size: u16,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) -> bool {
        let levels = self.levels_at(sh, port);
        let capacity = self.input_capacity(sh, port);
        let t = ctx.now();
        let measured = Self::in_measurement(sh, t);
        let state = self.sw.levels.as_mut().expect("levels exist only with a flow control");
        let held = state.held[input] as u32 + size as u32;
        if held > capacity {
            st.count_drop(size, measured);
            if measured {
                state.drops[port as usize] += 1;
            }
            return false;
        }
        state.held[input] = held as u16;
        if held > levels.xoff as u32 && !state.paused[input] {
            state.paused[input] = true;
            self.send_pause(sh, port, input, true, ctx);
        }
        true
    }

    /// A packet of `size` phits leaves input VC `input` of network port `port`: resumes the
    /// sender once the VC has drained to `xon`.
    pub(super) fn drained(
        &mut self,
        sh: &Shared,
        port: PortId,
        input: usize,
        size: u16,
        ctx: &mut RouterCtx<'_>,
    ) {
        let xon = self.levels_at(sh, port).xon;
        let state = self.sw.levels.as_mut().expect("levels exist only with a flow control");
        state.held[input] -= size;
        if state.paused[input] && state.held[input] <= xon {
            state.paused[input] = false;
            self.send_pause(sh, port, input, false, ctx);
        }
    }

    /// Sends a pause (or a resume) for input VC `input` to the sender across `port`: once
    /// the frame this router is sending on that link has left, then after the sender's
    /// response delay.
    fn send_pause(&mut self, sh: &Shared, port: PortId, input: usize, paused: bool, ctx: &mut RouterCtx<'_>) {
        let p = &self.sw.ports[port as usize];
        debug_assert_eq!(p.nic, NETWORK, "pauses cross switch-to-switch links only");
        let t = ctx.now();
        let wait = (p.link_busy_until as u64).saturating_sub(t);
        let delay = wait + sh.flow.as_ref().map_or(0, |f| f.delay);
        let vc = (input % self.vcs) as u8;
        ctx.send_link_after(p.route, delay, LinkMsg::Pause { port: p.peer_port, vc, paused });
    }

    /// A pause or resume for downstream VC `vc` arrives at output `port`
    /// ([`LinkMsg::Pause`]): the VC's gate closes or opens.
    pub(super) fn on_pause(
        &mut self,
        sh: &Shared,
        port: PortId,
        vc: u8,
        paused: bool,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let capacity = self.input_capacity(sh, port);
        let c = &mut self.sw.channels[port as usize * self.vcs + vc as usize];
        // A receiver sends pauses and resumes in turn, and a link keeps their order.
        debug_assert_ne!(paused, c.credits == 0, "a pause or resume that changes nothing");
        let p = &mut self.sw.ports[port as usize];
        let t = ctx.now();
        let levels = self.sw.levels.as_mut().expect("levels exist only with a flow control");
        let channel = port as usize * self.vcs + vc as usize;
        if paused {
            c.credits = 0;
            p.occupancy += capacity;
            levels.paused_since[channel] = t as u32;
            st.period.pause_frames += 1;
            if Self::in_measurement(sh, t) {
                st.measured.pause_frames += 1;
                levels.pauses[port as usize] += 1;
            }
        } else {
            c.credits = capacity as u16;
            p.occupancy -= capacity;
            let lasted = Self::measured_cycles(sh, levels.paused_since[channel] as u64, t) as u32;
            let longest = &mut levels.longest_pause[port as usize];
            *longest = (*longest).max(lasted);
            self.try_transmit(sh, port, ctx, st);
        }
    }
}
