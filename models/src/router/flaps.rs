//! Links that go down and come back during a run (`router.link_flaps`). A switch-to-switch
//! link is down in both directions for each of its intervals `down..up`: a packet its
//! sender starts then is lost on it (counted as a drop, and as a drop on a down link);
//! credits are not spent, as for a packet that never reached the buffer. Routings are not
//! told: a flap shorter than a routing's reaction is what this models (adaptive routings
//! still see the link's queue, which does not grow, as free). The transport
//! (`transport.kind = "rc"`) sends the lost packets again; a flap longer than its
//! timeouts and retries fails the connection, and the run names it.

use super::stats::PartitionStats;
use super::{RouterState, Shared};
use base::settings::ConfigError;
use serde::{Deserialize, Serialize};
use topology::{Network, PortId, PortTarget, SwitchId};

/// One entry of `router.link_flaps`: the link at `port` of `switch` is down from cycle
/// `down` until cycle `up`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkFlap {
    /// A switch at one end of the link.
    pub switch: u32,
    /// Its port the link leaves by (a switch-to-switch port).
    pub port: u16,
    /// The cycle it goes down.
    pub down: u64,
    /// The cycle it is up again (past the run's end: it stays down).
    pub up: u64,
}

/// One direction of a flapping link: the port it leaves by, and its down intervals
/// (`down..up`).
type FlappingPort = ((SwitchId, PortId), Vec<(u64, u64)>);

/// The down intervals of every flapping link's two directions, by (switch, port), sorted.
#[derive(Clone, Debug, Default)]
pub struct LinkFlaps {
    ports: Vec<FlappingPort>,
}

impl LinkFlaps {
    /// `flaps` on `net`; errors name the entry (`router.link_flaps[i].port`, ...).
    pub fn new(flaps: &[LinkFlap], net: &Network) -> Result<Self, ConfigError> {
        let mut ports: Vec<FlappingPort> = Vec::new();
        for (i, f) in flaps.iter().enumerate() {
            let key = |k: &str| format!("router.link_flaps[{i}].{k}");
            if f.switch as usize >= net.num_switches() {
                return Err(ConfigError::new(
                    key("switch"),
                    format!("no switch {}: the network has {}", f.switch, net.num_switches()),
                ));
            }
            let switch = f.switch as SwitchId;
            let radix = net.radix(switch);
            let Some(port) = net.ports(switch).get(f.port as usize) else {
                return Err(ConfigError::new(
                    key("port"),
                    format!("switch {} has ports 0..{radix}, not {}", f.switch, f.port),
                ));
            };
            let PortTarget::Switch { switch: peer, port: peer_port } = port.target else {
                return Err(ConfigError::new(
                    key("port"),
                    format!(
                        "port {} of switch {} does not lead to a switch; only switch-to-switch links flap (`xnet topo` lists the ports)",
                        f.port, f.switch
                    ),
                ));
            };
            if f.down >= f.up {
                return Err(ConfigError::new(
                    key("up"),
                    format!("must be after down ({}), got {}", f.down, f.up),
                ));
            }
            for end in [(switch, f.port as PortId), (peer, peer_port)] {
                match ports.iter_mut().find(|p| p.0 == end) {
                    Some(p) => p.1.push((f.down, f.up)),
                    None => ports.push((end, vec![(f.down, f.up)])),
                }
            }
        }
        ports.sort_unstable_by_key(|p| p.0);
        Ok(LinkFlaps { ports })
    }

    /// Whether the link leaving `port` of `switch` is down at `t`.
    pub fn is_down(&self, switch: SwitchId, port: PortId, t: u64) -> bool {
        match self.ports.binary_search_by_key(&(switch, port), |p| p.0) {
            Ok(i) => self.ports[i].1.iter().any(|&(down, up)| (down..up).contains(&t)),
            Err(_) => false,
        }
    }
}

impl RouterState {
    /// Whether the packet of `size` phits output `o` starts at `t` is lost on a link that
    /// is down; counted if so.
    pub(super) fn lost_on_down_link(
        &mut self,
        sh: &Shared,
        o: PortId,
        size: u16,
        t: u64,
        st: &mut PartitionStats,
    ) -> bool {
        let flaps = sh.flaps.as_ref().expect("flaps are looked at only when set");
        if !flaps.is_down(self.id, o, t) {
            return false;
        }
        let measured = Self::in_measurement(sh, t);
        st.count_drop(size, measured);
        st.count(measured, |c| &mut c.down_link_drops);
        true
    }
}
