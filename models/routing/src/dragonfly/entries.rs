//! The Dragonfly routings' registry entries: names, documentation, settings and how each
//! is built.

use super::q::{QFeedback, QParams, QSourceOutputs};
use super::{build_dragonfly, DragonflyMode, DragonflyRouting, ParVcs};
use crate::registry::{per_switch_state, RoutingEntry, Settings, StateSize};
use crate::{RoutingError, VcPolicy, REPORT_BYTES};
use base::settings::Setting;
use serde::Deserialize;
use std::sync::Arc;
use topology::{PortId, Shape};

/// `dragonfly_min` in the routing registry.
pub const DRAGONFLY_MIN: RoutingEntry = RoutingEntry {
    name: "dragonfly_min",
    doc: "Dragonfly minimal: local, global, local hop, with the Kim/Dally VCs (VC = global hops taken); around a failed global link through the first group after the source's linked to both ends",
    topologies: "dragonfly",
    vcs: "2 (3 with failed global links: a minimal route may then take two global hops)",
    settings: Settings::NONE,
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: per_switch_state,
    build: |ctx| build_dragonfly(ctx, DragonflyMode::Min),
};

/// `dragonfly_valiant` in the routing registry.
pub const DRAGONFLY_VALIANT: RoutingEntry = RoutingEntry {
    name: "dragonfly_valiant",
    doc: "Dragonfly Valiant: minimal to a random intermediate group, then minimal to the destination",
    vcs: "3",
    build: |ctx| build_dragonfly(ctx, DragonflyMode::Valiant),
    ..DRAGONFLY_MIN
};

/// `dragonfly_ugal` in the routing registry.
pub const DRAGONFLY_UGAL: RoutingEntry = RoutingEntry {
    name: "dragonfly_ugal",
    doc: "Dragonfly UGAL-L: minimal or Valiant, decided at the source router by queue occupancy x hops of each path's first output",
    vcs: "3",
    settings: Settings::typed::<UgalSettings>(&[Setting {
        key: "threshold",
        default: "0",
        doc: "occupancy in phits the non-minimal path must beat",
    }]),
    build: |ctx| {
        let s: UgalSettings = ctx.settings()?;
        build_dragonfly(ctx, DragonflyMode::UgalLocal { threshold: s.threshold })
    },
    ..DRAGONFLY_MIN
};

/// `dragonfly_ugal_g` in the routing registry.
pub const DRAGONFLY_UGAL_G: RoutingEntry = RoutingEntry {
    name: "dragonfly_ugal_g",
    doc: "Dragonfly UGAL-G (Kim, Dally, Scott and Abts, ISCA'08): minimal or Valiant, decided at the source router by occupancy x hops of the global channel each path takes out of the source group; the other routers' channels as they last reported them over the local links (every `report_period` cycles, arriving after the local latency)",
    vcs: "3",
    settings: Settings::typed::<UgalGlobalSettings>(&[
        Setting { key: "threshold", default: "0", doc: "occupancy in phits the non-minimal path must beat" },
        Setting {
            key: "report_period",
            default: "1",
            doc: "cycles between a router's reports of its global channels' occupancy to the routers of its group (sent only when changed; each arrives after the local link's latency)",
        },
    ]),
    state_bytes: shared_state,
    build: |ctx| {
        let s: UgalGlobalSettings = ctx.settings()?;
        build_dragonfly(ctx, DragonflyMode::UgalGlobal { threshold: s.threshold, period: s.report_period })
    },
    ..DRAGONFLY_MIN
};

/// `[routing.dragonfly_ugal_g]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UgalGlobalSettings {
    #[serde(default)]
    threshold: u32,
    #[serde(default = "one")]
    report_period: u32,
}

fn one() -> u32 {
    1
}

/// A routing that shares state: a record per switch and, on the switches this rank owns,
/// the last report heard over each port (at most as many terminal as network ports).
fn shared_state(size: &StateSize) -> u64 {
    size.per_switch() + size.own_switches * size.degree * 2 * (REPORT_BYTES as u64 + 2)
}

/// `dragonfly_pb` in the routing registry.
pub const DRAGONFLY_PB: RoutingEntry = RoutingEntry {
    name: "dragonfly_pb",
    doc: "Dragonfly piggybacking (Jiang, Kim and Dally, ISCA'09), as FOGSim implements it: each router marks its global channels congested above a multiple of their mean occupancy and reports the marks to the routers of its group; the source router goes Valiant when UGAL-L says so or when the minimal path's global channel is marked",
    vcs: "3",
    settings: Settings::typed::<PiggybackSettings>(&[
        Setting { key: "threshold", default: "0", doc: "occupancy in phits the non-minimal path must beat in UGAL-L's comparison" },
        Setting {
            key: "congestion_percent",
            default: "200",
            doc: "a global channel is marked congested when its occupancy exceeds this percentage of the mean over its router's global channels (FOGSim's piggybacking_coef)...",
        },
        Setting {
            key: "congestion_offset",
            default: "80",
            doc: "...plus this many phits (FOGSim's 5 packets, of 16 phits)",
        },
        Setting {
            key: "report_period",
            default: "1",
            doc: "cycles between a router's reports of its marks to the routers of its group (sent only when changed; each arrives after the local link's latency)",
        },
    ]),
    state_bytes: shared_state,
    build: |ctx| {
        let s: PiggybackSettings = ctx.settings()?;
        build_dragonfly(
            ctx,
            DragonflyMode::Piggyback {
                threshold: s.threshold,
                percent: s.congestion_percent,
                offset: s.congestion_offset,
                period: s.report_period,
            },
        )
    },
    ..DRAGONFLY_MIN
};

/// `[routing.dragonfly_pb]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PiggybackSettings {
    #[serde(default)]
    threshold: u32,
    #[serde(default = "two_hundred")]
    congestion_percent: u32,
    #[serde(default = "eighty")]
    congestion_offset: u32,
    #[serde(default = "one")]
    report_period: u32,
}

fn two_hundred() -> u32 {
    200
}

fn eighty() -> u32 {
    80
}

/// `dragonfly_imb` in the routing registry.
pub const DRAGONFLY_IMB: RoutingEntry = RoutingEntry {
    name: "dragonfly_imb",
    doc: "Dragonfly per-hop adaptive with an increasingly minimal bias, after Cray's description of Aries and Slingshot routing (patent US 10,757,022: the lightest loaded port after a bias that favours minimal paths more at every hop; the numbers are xnet's): at the source router and the next one the minimal and the Valiant next hop are both candidates, the Valiant one's load raised by bias + hops x bias_growth, the selection takes the lighter; a packet may change its mind once, either way",
    vcs: "4 (global hops, plus one after a change of mind)",
    settings: Settings::typed::<BiasedSettings>(&[
        Setting {
            key: "bias",
            default: "128",
            doc: "phits added to the Valiant candidate's load at the source router (0: neutral, ties at random); the defaults were chosen on BookSim2's Dragonfly(4,8,4) with 256-phit buffers, where they carry 0.79 of uniform traffic and 0.4 of the group shift unsaturated",
        },
        Setting { key: "bias_growth", default: "256", doc: "phits added to it for every hop taken (at the next router: bias + bias_growth)" },
    ]),
    build: |ctx| {
        let s: BiasedSettings = ctx.settings()?;
        build_dragonfly(ctx, DragonflyMode::Biased { bias: s.bias, growth: s.bias_growth })
    },
    ..DRAGONFLY_MIN
};

/// `[routing.dragonfly_imb]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BiasedSettings {
    #[serde(default = "one_hundred_twenty_eight")]
    bias: u32,
    #[serde(default = "two_hundred_fifty_six")]
    bias_growth: u32,
}

fn one_hundred_twenty_eight() -> u32 {
    128
}

fn two_hundred_fifty_six() -> u32 {
    256
}

/// `dragonfly_ofar` in the routing registry.
pub const DRAGONFLY_OFAR: RoutingEntry = RoutingEntry {
    name: "dragonfly_ofar",
    doc: "Dragonfly in-transit adaptive misrouting, after OFAR (Garcia et al., ICPP'12): at every router the minimal next hop and misroutes, taken when the minimal output is busier by `penalty`: the router's other global links while in the source group, the group's other routers when the minimal hop is local and no local hop was taken in the group yet; VC = hops taken up to the last of 6, or, as OFAR, any VC with an escape subnetwork (`vc_policy = \"any\"`, `escape_vcs = 1`)",
    vcs: "6 (hops taken, the sixth and later on the last; 7 with failed global links), or any with routing.escape_vcs",
    settings: Settings::typed::<InTransitSettings>(&[Setting {
        key: "penalty",
        default: "256",
        doc: "phits added to a misroute's load when the selection compares candidates (on BookSim2's Dragonfly(4,8,4), 256-phit buffers: 64 misroutes so eagerly that uniform traffic saturates at 0.63; 256 carries 0.8 of it and 0.4 of the group shift)",
    }]),
    build: |ctx| {
        let s: InTransitSettings = ctx.settings()?;
        build_dragonfly(ctx, DragonflyMode::InTransit { penalty: s.penalty })
    },
    ..DRAGONFLY_MIN
};

/// `[routing.dragonfly_ofar]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InTransitSettings {
    #[serde(default = "two_hundred_fifty_six_phits")]
    penalty: u16,
}

fn two_hundred_fifty_six_phits() -> u16 {
    256
}

/// `dragonfly_q` in the routing registry.
pub const DRAGONFLY_Q: RoutingEntry = RoutingEntry {
    name: "dragonfly_q",
    doc: "Dragonfly Q-adaptive (Kang, Wang and Lan, HPDC'21): every router learns, per destination group and output, the time to reach the group, from what the next router measures and estimates and sends back with the credits; the source router takes the output with the lowest estimate (or a random one, with probability epsilon), the first router of an intermediate group may go through another router of its group; minimal elsewhere. Seeded and deterministic",
    vcs: "4 (hops taken, the fourth and fifth hop on the last)",
    settings: Settings::typed::<QSettings>(&[
        Setting { key: "alpha", default: "0.2", doc: "learning rate when a measurement is below the estimate (the authors' evaluation)" },
        Setting { key: "beta", default: "0.04", doc: "learning rate when it is above (slower: hysteresis)" },
        Setting { key: "epsilon", default: "0.001", doc: "probability of a random output at the source router (exploration)" },
        Setting {
            key: "threshold_source",
            default: "0.2",
            doc: "at the source router the best output is taken over the minimal one only when its estimate is lower by at least this fraction",
        },
        Setting { key: "threshold_intermediate", default: "0.35", doc: "likewise at the first router of an intermediate group" },
        Setting {
            key: "initial_estimates",
            default: "authors",
            doc: "`authors`: every output starts at a global link's latency, plus a local one's unless it is the global link to the group; `zero_load`: each output's zero-load time to the group",
        },
        Setting {
            key: "feedback",
            default: "lowest",
            doc: "what a router sends upstream besides its measurement: `lowest`, its lowest estimate whatever it does with the packet (the authors'); `taken`, the estimate of the output its own rule takes (a congested global link then shows upstream at once; docs/studies/dragonfly.md)",
        },
        Setting {
            key: "source_outputs",
            default: "all",
            doc: "the source router's choices: `all` network outputs (the authors'), or `global`: the minimal output and its own global links (a local detour leads to a router that goes minimally)",
        },
    ]),
    state_bytes: q_table_state,
    build: |ctx| {
        let s: QSettings = ctx.settings()?;
        let Shape::Dragonfly(d) = &ctx.net.shape else {
            return Err(ctx.needs("dragonfly"));
        };
        for (key, value) in [("alpha", s.alpha), ("beta", s.beta), ("epsilon", s.epsilon)] {
            if !(0.0..=1.0).contains(&value) {
                return Err(RoutingError::new(format!("routing.dragonfly_q.{key}"), format!("must be in [0, 1], got {value}")));
            }
        }
        if d.groups as u64 * d.p as u64 > u16::MAX as u64 {
            return Err(RoutingError::algorithm(format!(
                "`dragonfly_q` learns per destination group and source position: at most 65,535 of them, the Dragonfly has {} groups x p = {}",
                d.groups, d.p
            )));
        }
        // A router's first local and first global port give the two link latencies.
        let (local, global) = (ctx.net.latency(0, d.p as PortId), ctx.net.latency(0, (d.p + d.a - 1) as PortId));
        let params = QParams {
            alpha: s.alpha,
            beta: s.beta,
            epsilon: s.epsilon,
            threshold_source: s.threshold_source,
            threshold_intermediate: s.threshold_intermediate,
            local_latency: local.min(u32::MAX as u64) as u32,
            global_latency: global.min(u32::MAX as u64) as u32,
            zero_load_start: s.initial_estimates == QStart::ZeroLoad,
            feedback: match s.feedback {
                QFeedbackChoice::Lowest => QFeedback::Lowest,
                QFeedbackChoice::Taken => QFeedback::Taken,
            },
            source_outputs: match s.source_outputs {
                QSourceChoice::All => QSourceOutputs::All,
                QSourceChoice::Global => QSourceOutputs::Global,
            },
        };
        Ok(Arc::new(DragonflyRouting::q_adaptive(d.clone(), params).with_faults(ctx.net)?))
    },
    ..DRAGONFLY_MIN
};

/// `[routing.dragonfly_q]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QSettings {
    #[serde(default = "q_alpha")]
    alpha: f32,
    #[serde(default = "q_beta")]
    beta: f32,
    #[serde(default = "q_epsilon")]
    epsilon: f32,
    #[serde(default = "q_threshold_source")]
    threshold_source: f32,
    #[serde(default = "q_threshold_intermediate")]
    threshold_intermediate: f32,
    #[serde(default)]
    initial_estimates: QStart,
    #[serde(default)]
    feedback: QFeedbackChoice,
    #[serde(default)]
    source_outputs: QSourceChoice,
}

/// `routing.dragonfly_q.feedback`.
#[derive(Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum QFeedbackChoice {
    #[default]
    Lowest,
    Taken,
}

/// `routing.dragonfly_q.source_outputs`.
#[derive(Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum QSourceChoice {
    #[default]
    All,
    Global,
}

/// `routing.dragonfly_q.initial_estimates`.
#[derive(Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum QStart {
    #[default]
    Authors,
    ZeroLoad,
}

fn q_alpha() -> f32 {
    0.2
}

fn q_beta() -> f32 {
    0.04
}

fn q_epsilon() -> f32 {
    0.001
}

fn q_threshold_source() -> f32 {
    0.2
}

fn q_threshold_intermediate() -> f32 {
    0.35
}

/// Q-adaptive: on each switch this rank owns, an estimate (4 bytes) per destination group,
/// source position and network port. In a balanced Dragonfly (a = 2p = 2h routers a group,
/// degree a - 1 + h, about 3h) the groups are about `switches / (2 degree / 3)` and the
/// source positions `degree / 3`.
fn q_table_state(size: &StateSize) -> u64 {
    let groups = size.switches / (size.degree * 2 / 3).max(1) + 1;
    let positions = (size.degree / 3).max(1);
    size.per_switch() + size.own_switches.saturating_mul(groups * positions * size.degree * 4)
}

/// `dragonfly_par` in the routing registry.
pub const DRAGONFLY_PAR: RoutingEntry = RoutingEntry {
    name: "dragonfly_par",
    doc: "Dragonfly PAR (progressive adaptive routing, Jiang, Kim and Dally, ISCA'09): UGAL-L's choice at the source router, and a packet sent minimally may be diverted to Valiant at the next router of its source group by the same comparison; a router that routes waiting heads again (`router.reselect`) decides again each cycle",
    vcs: "4 (global hops, plus one once diverted); 5 with intermediate = \"router\"",
    settings: Settings::typed::<ParSettings>(&[
        Setting { key: "threshold", default: "0", doc: "occupancy in phits the non-minimal path must beat, at both decisions" },
        Setting {
            key: "vc_assignment",
            default: "diverted",
            doc: "`diverted`: VC = global hops taken, plus one once diverted (4 VCs, deadlock-free); `global_hops`: Kim and Dally's UGAL VCs (3), which PAR's two local hops in the source group close into cycles (`xnet routes` shows one; for comparison only)",
        },
        Setting {
            key: "intermediate",
            default: "group",
            doc: "where a non-minimal packet goes: `group`, a random intermediate group, entered wherever its global link lands (Kim et al.'s Valiant); `router`, a random router of that group, a local hop more there (CAMINOS's and Cray Aries's; 5 VCs: the VC goes up once past it)",
        },
        Setting {
            key: "fallback",
            default: "false",
            doc: "also offer the way the rule did not choose, behind every other candidate: a router that routes blocked heads again (`router.reselect`, on in the `caminos` preset) takes it when the chosen way's output has no room, as CAMINOS's PAR does; with the `adaptive` selection it changes nothing otherwise",
        },
    ]),
    build: |ctx| {
        let s: ParSettings = ctx.settings()?;
        let via_router = s.intermediate == ParIntermediate::Router;
        let mode =
            DragonflyMode::Par { threshold: s.threshold, vcs: s.vc_assignment, via_router, fallback: s.fallback };
        build_dragonfly(ctx, mode)
    },
    ..DRAGONFLY_MIN
};

/// `[routing.dragonfly_par]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ParSettings {
    #[serde(default)]
    threshold: u32,
    #[serde(default)]
    intermediate: ParIntermediate,
    #[serde(default)]
    vc_assignment: ParVcs,
    #[serde(default)]
    fallback: bool,
}

/// `[routing.dragonfly_ugal]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct UgalSettings {
    #[serde(default)]
    threshold: u32,
}

/// `routing.dragonfly_par.intermediate`.
#[derive(Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ParIntermediate {
    #[default]
    Group,
    Router,
}
