//! Set-up shared by whole-network and per-rank simulations: the routing factory with its
//! VC checks, and the partition of a network.

use crate::config::{Config, ConfigError};
use crate::routing::allpath::AllPath;
use crate::routing::angara::{self, Angara};
use crate::routing::dor::{HyperXDor, TorusDor};
use crate::routing::dragonfly::{DragonflyMode, DragonflyRouting};
use crate::routing::escape::Escape;
use crate::routing::lash_tor::LashTor;
use crate::routing::minimal::Minimal;
use crate::routing::mud::Mud;
use crate::routing::spda::Spda;
use crate::routing::tor::Tor;
use crate::routing::updown::UpDown;
use crate::routing::valiant::Valiant;
use crate::routing::{dfsssp, lash, nue};
use crate::routing::{Routes, Routing, VcPolicy};
use crate::topology::{Network, PortTarget, Shape, SwitchId};
use partitioner::{Method, PartGraph, Plan};
use std::sync::Arc;

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
            let root = checked_root(config, net)?;
            Some(Arc::new(Escape::new(net, root, config.router.vcs - e, e)?))
        }
    };
    let seconds = t0.elapsed().as_secs_f64();
    let vcs = routing_vcs(config);
    match effective_vc_policy(config) {
            VcPolicy::Routing if routing.vcs_required() > vcs => {
                return Err(ConfigError::new(
                    "router.vcs",
                    format!(
                        "routing `{}` needs {} VCs, {vcs} available{}",
                        routing.name(),
                        routing.vcs_required(),
                        escape_note(config)
                    ),
                ))
            }
            // With an escape subnetwork, packets whose ladder or DAVC VCs run out are forced
            // into the escape: no bound on the route length is needed.
            _ if escape.is_some() => {}
            VcPolicy::Ladder if routing.max_hops() > vcs as u32 => {
                return Err(ConfigError::new(
                    "router.vcs",
                    format!(
                    "the ladder VC policy needs one VC per hop of the longest route: {} VCs, {vcs} available",
                    routing.max_hops()
                ),
                ))
            }
            p if p.is_davc() && routing.max_hops() > vcs as u32 => {
                return Err(ConfigError::new(
                    "router.vcs",
                    format!(
                        "the DAVC VC policy `{}` needs at most one VC per hop of the longest route \
                         (a safe bound, Lemma 6.1 of the DAVC paper): {} VCs for routing `{}`, {vcs} available",
                        davc_name(p),
                        routing.max_hops(),
                        routing.name()
                    ),
                ))
            }
            _ => {}
        }
    Ok((Routes { routing, vc_policy: effective_vc_policy(config), escape }, seconds))
}

/// Builds the routing named in the config for `net`, for decisions at `switches` only
/// where given (see [`build_routes`]).
pub fn build_routing(
    config: &Config,
    net: &Network,
    endpoint_switch: &Arc<Vec<SwitchId>>,
    switches: Option<&[SwitchId]>,
) -> Result<Arc<dyn Routing>, ConfigError> {
    let algo = config.routing.algorithm.as_str();
    let needs =
        |what: &str| ConfigError::new("routing.algorithm", format!("`{algo}` needs a {what} topology"));
    let routing: Arc<dyn Routing> = match algo {
        "minimal" | "shortest_path" => {
            let single_path = algo == "shortest_path";
            Arc::new(match switches {
                Some(s) => Minimal::for_switches(net, single_path, s)?,
                None => Minimal::new(net, single_path)?,
            })
        }
        "dor" => match &net.shape {
            Shape::HyperX(h) => Arc::new(HyperXDor::new(h.clone())),
            Shape::Torus(t) => Arc::new(TorusDor::new(t.clone(), endpoint_switch.clone())),
            _ => return Err(needs("hyperx, torus or mesh")),
        },
        "dragonfly_min" | "dragonfly_valiant" | "dragonfly_ugal" => {
            let Shape::Dragonfly(d) = &net.shape else {
                return Err(needs("dragonfly"));
            };
            let mode = match algo {
                "dragonfly_min" => DragonflyMode::Min,
                "dragonfly_valiant" => DragonflyMode::Valiant,
                _ => DragonflyMode::UgalLocal { threshold: config.routing.ugal_threshold },
            };
            Arc::new(DragonflyRouting::new(d.clone(), mode))
        }
        "allpath" => {
            let k = config.routing.allpath_k;
            if k > 64 {
                return Err(ConfigError::new("routing.allpath_k", format!("must be at most 64, got {k}")));
            }
            Arc::new(AllPath::new(net, k)?)
        }
        "valiant" => Arc::new(Valiant::new(net)?),
        "up_down" => Arc::new(UpDown::new(net, checked_root(config, net)?)?),
        "mud" => Arc::new(Mud::new(net, routing_vcs(config), checked_root(config, net)?)?),
        "angara_bfs" | "angara_sssp" => {
            let Shape::Torus(t) = &net.shape else {
                return Err(needs("torus or mesh"));
            };
            let method = if algo == "angara_bfs" { angara::Method::Bfs } else { angara::Method::Sssp };
            Arc::new(Angara::new(net, t, method, endpoint_switch)?)
        }
        "lash_tor" => {
            Arc::new(LashTor::new(net, endpoint_switch, routing_vcs(config), checked_root(config, net)?)?)
        }
        "tor" => {
            let r = Tor::new(net, checked_root(config, net)?, endpoint_switch)?;
            check_layers(config, algo, r.layers())?;
            Arc::new(r)
        }
        "spda" => {
            let mut rng = crate::rng::stream(config.simulation.seed, crate::rng::Purpose::Routing, u64::MAX);
            Arc::new(Spda::new(net, routing_vcs(config), &mut rng)?)
        }
        "nue" => {
            // Nue uses every VC as a layer and always fits: no layer check needed.
            let (r, _stats) =
                nue::build(net, endpoint_switch, routing_vcs(config) as usize, config.routing.nue_order)?;
            Arc::new(r)
        }
        "dfsssp" | "lash" => {
            let mut r = if algo == "dfsssp" {
                dfsssp::build(net, endpoint_switch)?
            } else {
                lash::build(net, endpoint_switch)?
            };
            check_layers(config, algo, r.layers_needed())?;
            if effective_vc_policy(config) == VcPolicy::Routing {
                r.spread_over(routing_vcs(config));
            }
            Arc::new(r)
        }
        other => {
            return Err(ConfigError::new(
                "routing.algorithm",
                format!(
                    "unknown `{other}`; known: {}",
                    crate::config::ROUTINGS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                ),
            ))
        }
    };
    if net.failed_links > 0 && routing.needs_intact_topology() {
        return Err(ConfigError::new(
            "routing.algorithm",
            format!(
                "`{algo}` follows the intact topology and cannot route around the {} failed links; \
                 use a table-based routing: minimal, shortest_path, allpath, valiant, up_down, spda, dfsssp, lash, mud, tor, lash_tor, angara_bfs, angara_sssp or nue",
                net.failed_links
            ),
        ));
    }
    Ok(routing)
}

/// `routing.root` if given and an existing switch.
fn checked_root(config: &Config, net: &Network) -> Result<Option<SwitchId>, ConfigError> {
    let root = config.routing.root;
    if let Some(r) = root.filter(|&r| r as usize >= net.num_switches()) {
        return Err(ConfigError::new(
            "routing.root",
            format!("switch {r} does not exist ({} switches)", net.num_switches()),
        ));
    }
    Ok(root)
}

/// VCs the routing may use: `router.vcs` less those reserved for an escape subnetwork.
pub fn routing_vcs(config: &Config) -> u8 {
    config.router.vcs - config.routing.escape_vcs
}

/// A layered routing's layers must fit in `router.vcs` when it assigns the VCs itself.
fn check_layers(config: &Config, algo: &str, layers: u8) -> Result<(), ConfigError> {
    let vcs = routing_vcs(config);
    if effective_vc_policy(config) == VcPolicy::Routing && layers > vcs {
        return Err(ConfigError::new(
            "router.vcs",
            format!(
                "{algo} needs {layers} layers, {vcs} available (one VC per layer){}",
                escape_note(config)
            ),
        ));
    }
    Ok(())
}

/// Explains a VC count reduced by the escape subnetwork.
fn escape_note(config: &Config) -> String {
    match config.routing.escape_vcs {
        0 => String::new(),
        e => format!(" after the {e} escape VCs (routing.escape_vcs)"),
    }
}

/// The VC policy in force: `minimal`, `shortest_path`, `allpath` and `valiant` default to
/// the ladder, since on an arbitrary graph their own single VC is not deadlock-free.
pub fn effective_vc_policy(config: &Config) -> VcPolicy {
    match (config.routing.vc_policy, config.routing.algorithm.as_str()) {
        (VcPolicy::Routing, "minimal" | "shortest_path" | "allpath" | "valiant") => VcPolicy::Ladder,
        (p, _) => p,
    }
}

fn davc_name(p: VcPolicy) -> &'static str {
    match p {
        VcPolicy::DavcNode => "davc_n",
        VcPolicy::DavcPort => "davc_p",
        _ => "davc_np",
    }
}

/// The graph the partitioner sees: routers weighted by ports + endpoints, links with
/// latencies, Dragonfly groups and fat-tree pods as blocks.
pub fn partition_graph(net: &Network) -> PartGraph {
    let vertex_weight = (0..net.num_switches() as SwitchId)
        .map(|s| net.radix(s) as u64 + net.terminals[s as usize] as u64)
        .collect();
    let mut edges = Vec::with_capacity(net.num_network_links());
    for s in 0..net.num_switches() as SwitchId {
        for p in net.ports(s) {
            if let PortTarget::Switch { switch, .. } = p.target {
                edges.push((s, switch, net.link_classes[p.class as usize].latency));
            }
        }
    }
    let blocks = match &net.shape {
        Shape::Dragonfly(d) => Some((0..net.num_switches() as u32).map(|s| d.group(s)).collect()),
        // Pods of a k-ary n-tree: below the top level, links between levels l and l+1
        // change digit l of the switch index, so the highest digit (n-2) names the pod;
        // top-level switches join the pod of their own highest digit.
        Shape::FatTree(f) if f.n >= 2 => {
            Some((0..net.num_switches() as u32).map(|s| f.digit(f.index(s), f.n - 2)).collect())
        }
        _ => None,
    };
    PartGraph { vertex_weight, edges, blocks }
}

/// A partition of `net` into `parts` with `method` (`Auto`: Dragonfly groups when there are
/// enough, else the better of linear slabs and the multilevel partitioner). Message
/// estimates assume every link carries the configured load (a packet and its credit per
/// `packet_size` cycles at full load).
pub fn plan(
    config: &Config,
    net: &Network,
    parts: u32,
    method: Method,
) -> Result<Plan, partitioner::PartitionError> {
    let graph = partition_graph(net);
    let per_link = 2.0 * config.traffic.load / config.router.packet_size as f64;
    let options = partitioner::PartitionOptions {
        edge_traffic: Some(vec![per_link.max(1e-9); graph.edges.len()]),
        ..Default::default()
    };
    partitioner::partition_with(&graph, parts, method, &options)
}
