//! Routing construction: the registry entry named by `routing.algorithm`, built with its
//! settings, the VC policy in force and the escape subnetwork, checked against the VCs
//! available.

use crate::config::{Config, ConfigError};
use routing::balanced::Balanced;
use routing::escape::Escape;
use routing::registry::{check_root, escape_note, BuildContext};
use routing::{Routes, Routing, RoutingEntry, Selection, VcPolicy, ROUTINGS};
use std::sync::Arc;
use toml::Table;
use topology::{Network, SwitchId};

/// The routing, VC policy and escape subnetwork of `config` on `net`, checked against the
/// VCs available, and the seconds it took to build them. With `switches` (a rank's own
/// switches), routings that keep per-switch state build only what decisions at those
/// switches need (minimal routing: the distances of those switches and their neighbours);
/// packets may then be routed only there.
pub fn build_routes(
    config: &Config,
    net: &Network,
    switches: Option<&[SwitchId]>,
) -> Result<(Routes, f64), ConfigError> {
    let endpoint_switch: Arc<Vec<SwitchId>> =
        Arc::new(net.endpoint_location.iter().map(|&(s, _)| s).collect());
    let t0 = std::time::Instant::now();
    let routing = build_routing(config, net, &endpoint_switch, switches)?;
    let escape = match config.routing.escape_vcs {
        0 => None,
        e => {
            let root = check_root(net, config.routing.escape_root, "routing.escape_root")?;
            Some(Arc::new(Escape::new(net, root, config.router.vcs - e, e, config.routing.escape_shortcuts)?))
        }
    };
    let seconds = t0.elapsed().as_secs_f64();
    let entry = config.routing_entry();
    let vc_policy = match effective_vc_policy(config) {
        // On GPU nodes the routing applies a ladder on the fabric's hops itself.
        p if net.nodes.is_some() && routing::nodes::Nodes::applies(p) => VcPolicy::Routing,
        p => p,
    };
    check_vcs(config, entry, &*routing, vc_policy, escape.is_some())?;
    Ok((Routes { routing, name: entry.name, vc_policy, escape }, seconds))
}

/// The VCs must suffice for the VC policy in force.
fn check_vcs(
    config: &Config,
    entry: &RoutingEntry,
    routing: &dyn Routing,
    vc_policy: VcPolicy,
    escape: bool,
) -> Result<(), ConfigError> {
    let vcs = routing_vcs(config);
    let name = entry.name;
    match vc_policy {
        VcPolicy::Routing if routing.vcs_required() > vcs => Err(ConfigError::new(
            "router.vcs",
            format!(
                "routing `{name}` needs {} VCs, {vcs} available{}",
                routing.vcs_required(),
                escape_note(config.routing.escape_vcs)
            ),
        )),
        // With an escape subnetwork, packets whose ladder or DAVC VCs run out are forced
        // into the escape: no bound on the route length is needed.
        _ if escape => Ok(()),
        VcPolicy::Ladder | VcPolicy::WideLadder if routing.max_hops() > vcs as u32 => Err(ConfigError::new(
            "router.vcs",
            format!(
                "the {} VC policy needs at least one VC per hop of the longest route: {} VCs for routing `{name}`, {vcs} available",
                vc_policy.name(),
                routing.max_hops()
            ),
        )),
        p if p.is_davc() && routing.max_hops() > vcs as u32 => Err(ConfigError::new(
            "router.vcs",
            format!(
                "the DAVC VC policy `{}` needs at most one VC per hop of the longest route \
                 (a safe bound, Lemma 6.1 of the DAVC paper): {} VCs for routing `{name}`, {vcs} available",
                p.name(),
                routing.max_hops(),
            ),
        )),
        _ => Ok(()),
    }
}

/// The routings that route around failed links and run on topology `kind`: those whose
/// registry entry names `any` topology or `kind` (before any `;` that adds a condition).
fn around_faults(kind: &str) -> Vec<&'static str> {
    let runs_on = |topologies: &str| {
        let first = topologies.split(';').next().unwrap_or("");
        first.starts_with("any")
            || first.split(|c: char| !c.is_alphanumeric() && c != '_').any(|word| word == kind)
    };
    ROUTINGS.iter().filter(|r| !r.needs_intact_topology && runs_on(r.topologies)).map(|r| r.name).collect()
}

/// Builds the routing named in the config for `net`, for decisions at `switches` only
/// where given (see [`build_routes`]).
pub fn build_routing(
    config: &Config,
    net: &Network,
    endpoint_switch: &Arc<Vec<SwitchId>>,
    switches: Option<&[SwitchId]>,
) -> Result<Arc<dyn Routing>, ConfigError> {
    let Some(layout) = &net.nodes else {
        return build_fabric_routing(config, net, endpoint_switch, switches);
    };
    // GPU nodes: the routing routes the fabric on its own (one plane: the planes are
    // copies), and the nodes wrapper adds the hops into and out of the GPUs.
    if config.routing.escape_vcs > 0 {
        return Err(ConfigError::new(
            "routing.escape_vcs",
            "an escape subnetwork is not built across GPU nodes ([topology.nodes]): set 0",
        ));
    }
    let fabric = &*layout.fabric;
    let fabric_endpoints = Arc::new(fabric.endpoint_location.iter().map(|&(s, _)| s).collect());
    let fabric_switches: Option<Vec<SwitchId>> = switches.map(|own| {
        let mut list: Vec<SwitchId> =
            own.iter().filter_map(|&s| layout.in_fabric(s).map(|(_, f)| f)).collect();
        // A rank's GPUs route into the fabric at their leaves.
        for gpu in own.iter().filter(|&&s| layout.is_gpu(s)) {
            list.extend((0..layout.endpoints_per_nic()).map(|port| layout.attachment_on(*gpu, port).0));
        }
        list.sort_unstable();
        list.dedup();
        list
    });
    let inner = build_fabric_routing(config, fabric, &fabric_endpoints, fabric_switches.as_deref())?;
    let nodes =
        routing::nodes::Nodes::new(inner, layout.clone(), effective_vc_policy(config), routing_vcs(config));
    Ok(Arc::new(nodes))
}

/// [`build_routing`] on a network without GPU nodes (or on their fabric).
fn build_fabric_routing(
    config: &Config,
    net: &Network,
    endpoint_switch: &Arc<Vec<SwitchId>>,
    switches: Option<&[SwitchId]>,
) -> Result<Arc<dyn Routing>, ConfigError> {
    let entry = config.routing_entry();
    if net.failed_links > 0 && entry.needs_intact_topology {
        let kind = config.topology.get("kind").and_then(|k| k.as_str()).unwrap_or("");
        return Err(ConfigError::new(
            "routing.algorithm",
            format!(
                "`{}` follows the intact topology and cannot route around the {} failed links; \
                 routings that can, on a {kind}: {}",
                entry.name,
                net.failed_links,
                around_faults(kind).join(", ")
            ),
        ));
    }
    let empty = Table::new();
    // The balanced selection asks the routing about every switch while choosing paths.
    let balanced = config.routing.selection == Selection::Balanced;
    let ctx = BuildContext {
        entry,
        net,
        endpoint_switch,
        switches: if balanced { None } else { switches },
        vcs: routing_vcs(config),
        vc_policy: effective_vc_policy(config),
        seed: config.simulation.seed,
        settings: config.routing.settings.get(entry.name).unwrap_or(&empty),
        escape_vcs: config.routing.escape_vcs,
        selection: config.routing.selection,
    };
    let routing = (entry.build)(&ctx)?;
    if balanced {
        return Ok(Arc::new(Balanced::build(routing, entry.name, net, endpoint_switch.clone())?));
    }
    Ok(routing)
}

/// VCs the routing may use: `router.vcs` less those reserved for an escape subnetwork.
pub fn routing_vcs(config: &Config) -> u8 {
    config.router.vcs - config.routing.escape_vcs
}

/// The VC policy in force: `routing` (the default) means the entry's default policy,
/// which is the ladder for routings whose own single VC is not deadlock-free on an
/// arbitrary graph (`minimal`, `shortest_path`, `allpath`, `valiant`).
pub fn effective_vc_policy(config: &Config) -> VcPolicy {
    match config.routing.vc_policy {
        VcPolicy::Routing => config.routing_entry().default_vc_policy,
        p => p,
    }
}
