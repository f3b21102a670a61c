//! `tables`: routes read from InfiniBand forwarding tables, so that production routing
//! (what OpenSM computed for a fabric) can be simulated and verified, and xnet's own tables
//! can be handed to InfiniBand tools.
//!
//! # Files
//! **Forwarding tables**: OpenSM's `opensm-lfts.dump` (written with `-D 0x43
//! --dump_files_dir DIR`; `ibroute` prints the same lines). Per switch a header
//! `Unicast lids [..] of switch Lid L guid 0x.. ('NAME'):`, then one line per destination
//! LID, `0xLID PORT # ...`: the IB port the switch forwards that LID on (0: itself).
//! Switches are matched by name (the fabric's `.net` names; `S<s>` for networks xnet
//! builds, see [`IbView`]); a LID is an HCA port's when the switch it hangs on forwards it
//! on the terminal port leading to it. Each HCA port's lowest LID is used (with LMC > 0
//! the further LIDs, OpenSM's alternative paths, are not).
//!
//! **Path SLs** (optional): OpenSM hands out SLs in SA path records and dumps none, so xnet
//! writes them in the same shape as the forwarding tables: per source switch a header
//! `Path SLs [..] of switch Lid L guid 0x.. ('NAME'):`, then `0xLID SL # ...` per
//! destination HCA LID. A packet injected at a switch travels on VC = its SL (SL to VL is
//! the identity, as OpenSM's LASH and DFSSSP program it); a pair not listed uses SL 0.
//! Without the file every packet uses VC 0, and a VC policy (ladder, DAVC) can make the
//! tables deadlock-free: `xnet routes` tells.
//!
//! # Routing
//! Every HCA port has its own column, as OpenSM routes each LID on its own (MinHop and
//! Up*/Down* balance LIDs of one switch over different ports); endpoints whose columns
//! and SLs are equal share one ([`Routing::destination_class`]). Every route from a switch
//! with endpoints to every endpoint is walked when the tables are read: a missing entry, a
//! port to no switch or a loop is an error naming the switch and the LID.
//!
//! One file: the reader of the dumps and the writer behind `xnet routes --dump-tables`
//! share the file format and the column layout, and each checks the other in the tests.

use super::registry::{BuildContext, RoutingEntry, Settings};
use super::{Candidate, LoadView, Reads, Routing, VcPolicy};
use crate::packet::Packet;
use crate::RoutingError;
use base::rng::Rng;
use base::settings::{FileForm, FileKey, Setting};
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use topology::ib::IbView;
use topology::{EndpointId, Network, PortId, PortTarget, SwitchId};

/// No entry in [`PathTables::ports`].
pub const NO_PORT: PortId = PortId::MAX;

/// The port number InfiniBand tools print for a LID a switch has no route to.
const NO_ROUTE: u32 = 255;

/// Destination-based forwarding tables with a layer (SL) per source switch and
/// destination: what `tables` routes by, what the reader of OpenSM's dumps builds and what
/// xnet writes (`xnet routes --dump-tables`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathTables {
    switches: usize,
    /// Per endpoint, its column.
    pub column_of: Vec<u32>,
    /// `ports[column * switches + at]`: the port `at` forwards the column's endpoints on
    /// ([`NO_PORT`]: none).
    pub ports: Vec<PortId>,
    /// `sls[column * switches + src]`: the SL of the path from switch `src`.
    pub sls: Vec<u8>,
}

impl PathTables {
    /// Tables for `switches` switches from per-column ports and SLs (`switches` entries
    /// each, columns in order) and each endpoint's column.
    pub fn new(switches: usize, column_of: Vec<u32>, ports: Vec<PortId>, sls: Vec<u8>) -> Self {
        debug_assert_eq!(ports.len(), sls.len());
        debug_assert_eq!(ports.len() % switches.max(1), 0);
        PathTables { switches, column_of, ports, sls }
    }

    /// Number of distinct columns.
    pub fn columns(&self) -> usize {
        self.ports.len() / self.switches.max(1)
    }

    /// The port switch `at` forwards endpoint `e`'s packets on ([`NO_PORT`]: none).
    pub fn port(&self, at: SwitchId, e: EndpointId) -> PortId {
        self.ports[self.column_of[e as usize] as usize * self.switches + at as usize]
    }

    /// The SL of the path from switch `src` to endpoint `e`.
    pub fn sl(&self, src: SwitchId, e: EndpointId) -> u8 {
        self.sls[self.column_of[e as usize] as usize * self.switches + src as usize]
    }

    /// The highest SL used.
    pub fn max_sl(&self) -> u8 {
        self.sls.iter().copied().max().unwrap_or(0)
    }
}

/// The LID xnet gives switch `s` in the dumps it writes (`n` switches): `s + 1`.
fn switch_lid(s: SwitchId) -> u32 {
    s + 1
}

/// The LID xnet gives endpoint `e`: after the switches'.
fn endpoint_lid(n: usize, e: EndpointId) -> u32 {
    n as u32 + 1 + e
}

/// One file's per-switch blocks, written as OpenSM writes its forwarding tables.
fn write_blocks(
    net: &Network,
    view: &IbView,
    title: &str,
    trailer: &str,
    entries: impl Fn(SwitchId, &mut Vec<(u32, u16)>),
) -> String {
    let n = net.num_switches();
    let top = n as u32 + net.num_endpoints() as u32;
    let mut out = String::new();
    let mut list = Vec::new();
    for s in 0..n as SwitchId {
        list.clear();
        entries(s, &mut list);
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "{title} [0-{top}] of switch Lid {} guid 0x{:016x} ('{}'):",
            switch_lid(s),
            IbView::switch_guid(s),
            view.switch_names[s as usize]
        );
        for &(lid, value) in &list {
            let (kind, guid, name) = if lid <= n as u32 {
                ("Switch", IbView::switch_guid(lid - 1), &view.switch_names[lid as usize - 1])
            } else {
                let e = lid - n as u32 - 1;
                ("Channel Adapter", IbView::hca_guid(e), &view.hcas[e as usize].0)
            };
            let _ = writeln!(out, "0x{lid:04x} {value:03} # {kind} portguid 0x{guid:016x}: '{name}'");
        }
        let _ = writeln!(out, "{} {trailer}", list.len());
    }
    out
}

/// The tables as OpenSM's `opensm-lfts.dump`: switch `s` has LID `s + 1`, endpoint `e`
/// LID `n + 1 + e` (`n` switches), IB ports from `view`. A switch's route to another switch is its route
/// to that switch's first endpoint (switches without endpoints get no entry).
pub fn write_lfts(net: &Network, view: &IbView, t: &PathTables) -> String {
    let n = net.num_switches();
    let first_endpoint = net.first_endpoints();
    write_blocks(net, view, "Unicast lids", "lids dumped", |s, list| {
        for d in 0..n as SwitchId {
            if d == s {
                list.push((switch_lid(d), 0));
            } else if let Some(e) = first_endpoint[d as usize] {
                let port = t.port(s, e);
                if port != NO_PORT {
                    list.push((switch_lid(d), view.ib_port(net, s, port)));
                }
            }
        }
        for (e, &(d, terminal)) in net.endpoint_location.iter().enumerate() {
            let port = if d == s { terminal } else { t.port(s, e as EndpointId) };
            if port != NO_PORT {
                list.push((endpoint_lid(n, e as EndpointId), view.ib_port(net, s, port)));
            }
        }
    })
}

/// The path SLs (see the module docs) of every switch with endpoints to every endpoint on
/// another switch.
pub fn write_sls(net: &Network, view: &IbView, t: &PathTables) -> String {
    let n = net.num_switches();
    let header = "# Path SLs written by xnet: per source switch, the SL (= VL) of its path to each \
                  destination HCA LID.\n# OpenSM gives SLs in SA path records and has no such dump; \
                  the lines follow opensm-lfts.dump.\n";
    let body = write_blocks(net, view, "Path SLs", "SLs dumped", |s, list| {
        if net.terminals[s as usize] == 0 {
            return;
        }
        for (e, &(d, _)) in net.endpoint_location.iter().enumerate() {
            if d != s {
                list.push((endpoint_lid(n, e as EndpointId), t.sl(s, e as EndpointId) as u16));
            }
        }
    });
    format!("{header}{body}")
}

/// One switch's block of a dump.
struct Block {
    switch: SwitchId,
    /// `(LID, value, line)`.
    entries: Vec<(u32, u32, usize)>,
}

/// Parses the blocks of a dump whose headers start with `title` (`key` names the setting
/// in errors). Lines that are neither headers nor `0x` entries are ignored (trailers,
/// comments).
fn parse_blocks(
    text: &str,
    title: &str,
    key: &str,
    net: &Network,
    view: &IbView,
) -> Result<Vec<Block>, RoutingError> {
    let by_name: HashMap<&str, SwitchId> =
        view.switch_names.iter().enumerate().map(|(s, name)| (name.as_str(), s as SwitchId)).collect();
    // `ibnetdiscover` names a switch `S-<GUID>` and OpenSM's headers give the GUID: match
    // by it first (node descriptions need not be unique on a real fabric).
    let by_guid: HashMap<u64, SwitchId> = view
        .switch_names
        .iter()
        .enumerate()
        .filter_map(|(s, name)| {
            let hex = name.strip_prefix("S-")?.trim_start_matches("0x");
            Some((u64::from_str_radix(hex, 16).ok()?, s as SwitchId))
        })
        .collect();
    let mut blocks: Vec<Block> = Vec::new();
    let mut seen = vec![0usize; net.num_switches()];
    for (number, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let lineno = number + 1;
        if line.starts_with(title) {
            let guid = line
                .split_once(" guid ")
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .and_then(|g| u64::from_str_radix(g.trim_start_matches("0x"), 16).ok());
            // The name: between `('` and the last `')` as OpenSM writes it, else the last
            // parenthesised part, as ibroute writes it.
            let name = match (line.find("('"), line.rfind("')")) {
                (Some(open), Some(close)) if close > open + 1 => Some(&line[open + 2..close]),
                _ => line.rfind('(').and_then(|open| {
                    line[open + 1..].rfind(')').map(|close| line[open + 1..open + 1 + close].trim())
                }),
            };
            let found = guid.and_then(|g| by_guid.get(&g)).or_else(|| name.and_then(|n| by_name.get(n)));
            let &switch = found.ok_or_else(|| {
                RoutingError::new(
                    key,
                    match (name, guid) {
                        (None, None) => format!("line {lineno}: a header without a switch GUID or ('name')"),
                        _ => format!(
                            "line {lineno}: switch '{}' (GUID {}) is not in the fabric ({} switches, e.g. '{}')",
                            name.unwrap_or(""),
                            guid.map_or("none".into(), |g| format!("0x{g:016x}")),
                            view.switch_names.len(),
                            view.switch_names[0]
                        ),
                    },
                )
            })?;
            if seen[switch as usize] != 0 {
                return Err(RoutingError::new(
                    key,
                    format!(
                        "line {lineno}: switch '{}' has a second table (first on line {})",
                        view.switch_names[switch as usize], seen[switch as usize]
                    ),
                ));
            }
            seen[switch as usize] = lineno;
            blocks.push(Block { switch, entries: Vec::new() });
        } else if let Some(hex) = line.strip_prefix("0x") {
            let mut words = hex.split_whitespace();
            let lid = words.next().and_then(|w| u32::from_str_radix(w, 16).ok());
            let value = words.next().and_then(|w| w.parse::<u32>().ok());
            let (Some(lid), Some(value)) = (lid, value) else {
                return Err(RoutingError::new(
                    key,
                    format!("line {lineno}: cannot read `{line}` as `0xLID VALUE`"),
                ));
            };
            let block = blocks.last_mut().ok_or_else(|| {
                RoutingError::new(key, format!("line {lineno}: an entry before any `{title}` header"))
            })?;
            block.entries.push((lid, value, lineno));
        }
    }
    Ok(blocks)
}

/// The settings the errors about each file name.
const LFTS: &str = "routing.tables.lfts";
const SLS: &str = "routing.tables.sls";

/// A switch's forwarding entries by LID: the IB port and the line of the file.
type Entries = HashMap<u32, (u32, usize)>;

/// Reads OpenSM's forwarding tables (`lfts`) and, optionally, xnet's path SLs (`sls`) for
/// `net` (see the module docs). Errors name `routing.tables.lfts` or `.sls` and the line.
pub fn read_tables(net: &Network, lfts: &str, sls: Option<&str>) -> Result<(PathTables, u32), RoutingError> {
    let view = IbView::of(net);
    let blocks = parse_blocks(lfts, "Unicast lids", LFTS, net, &view)?;
    let table = forwarding_entries(net, &view, &blocks)?;
    let lid_of = endpoint_lids(net, &view, &blocks)?;
    let sl_of = path_sls(net, &view, sls)?;
    let t = build_columns(net, &view, &table, &lid_of, &sl_of)?;
    let longest = check_routes(net, &view, &t, &lid_of)?;
    Ok((t, longest))
}

/// Per switch, its forwarding entries by LID: `(IB port, line)`; errors on a LID listed
/// twice and on a switch without entries.
fn forwarding_entries(net: &Network, view: &IbView, blocks: &[Block]) -> Result<Vec<Entries>, RoutingError> {
    let n = net.num_switches();
    let mut table: Vec<HashMap<u32, (u32, usize)>> = vec![HashMap::new(); n];
    for b in blocks {
        for &(lid, port, line) in &b.entries {
            // Port 255: "no route" (`ibroute -a`, `dump_fts -a`).
            if port == NO_ROUTE {
                continue;
            }
            if let Some((_, first)) = table[b.switch as usize].insert(lid, (port, line)) {
                return Err(RoutingError::new(
                    LFTS,
                    format!(
                        "line {line}: switch '{}' has a second entry for LID 0x{lid:04x} (first on line {first})",
                        view.switch_names[b.switch as usize]
                    ),
                ));
            }
        }
    }
    if let Some(s) = (0..n).find(|&s| table[s].is_empty()) {
        return Err(RoutingError::new(
            LFTS,
            format!("no forwarding table for switch '{}'", view.switch_names[s]),
        ));
    }
    Ok(table)
}

/// Each endpoint's LID: the lowest its switch forwards on its terminal port (errors on a
/// LID leading to two HCAs and on an HCA without one).
fn endpoint_lids(net: &Network, view: &IbView, blocks: &[Block]) -> Result<Vec<u32>, RoutingError> {
    let mut lid_of: Vec<Option<u32>> = vec![None; net.num_endpoints()];
    let mut owner: HashMap<u32, EndpointId> = HashMap::new();
    for b in blocks {
        let s = b.switch;
        for &(lid, ib, line) in &b.entries {
            let Ok(ib) = u16::try_from(ib) else { continue };
            if ib == 0 {
                continue; // the switch itself
            }
            let Some(port) = view.port_of(net, s, ib) else { continue };
            let PortTarget::Endpoint(e) = net.ports(s)[port as usize].target else { continue };
            if let Some(&other) = owner.get(&lid) {
                if other != e {
                    return Err(RoutingError::new(
                        LFTS,
                        format!(
                            "line {line}: LID 0x{lid:04x} leads to HCA '{}' here and to '{}' elsewhere",
                            view.hcas[e as usize].0, view.hcas[other as usize].0
                        ),
                    ));
                }
            }
            owner.insert(lid, e);
            let slot = &mut lid_of[e as usize];
            *slot = Some(slot.map_or(lid, |l: u32| l.min(lid)));
        }
    }
    let Some(lid_of) = lid_of.iter().copied().collect::<Option<Vec<u32>>>() else {
        let e = lid_of.iter().position(Option::is_none).expect("an HCA without a LID");
        let (s, p) = net.endpoint_location[e];
        return Err(RoutingError::new(
            LFTS,
            format!(
                "HCA '{}' (on switch '{}', IB port {}) has no LID: its switch forwards no LID to it",
                view.hcas[e].0,
                view.switch_names[s as usize],
                view.ib_port(net, s, p)
            ),
        ));
    };
    Ok(lid_of)
}

/// The SLs of the path SL file `sls` per source switch, by destination LID (none without
/// the file).
fn path_sls(net: &Network, view: &IbView, sls: Option<&str>) -> Result<Vec<HashMap<u32, u8>>, RoutingError> {
    let n = net.num_switches();
    let mut sl_of: Vec<HashMap<u32, u8>> = vec![HashMap::new(); n];
    if let Some(text) = sls {
        for b in parse_blocks(text, "Path SLs", SLS, net, view)? {
            for &(lid, sl, line) in &b.entries {
                if sl > 15 {
                    return Err(RoutingError::new(
                        SLS,
                        format!("line {line}: SL {sl}; InfiniBand SLs are 0 to 15"),
                    ));
                }
                sl_of[b.switch as usize].insert(lid, sl as u8);
            }
        }
    }
    Ok(sl_of)
}

/// The tables' columns: per endpoint, the ports (from the forwarding entries `table`,
/// towards its LID) and the SLs over all switches, deduplicated.
fn build_columns(
    net: &Network,
    view: &IbView,
    table: &[Entries],
    lid_of: &[u32],
    sl_of: &[HashMap<u32, u8>],
) -> Result<PathTables, RoutingError> {
    let n = net.num_switches();
    let mut columns: HashMap<(Vec<PortId>, Vec<u8>), u32> = HashMap::new();
    let (mut ports, mut sl_rows) = (Vec::new(), Vec::new());
    let mut column_of = Vec::with_capacity(net.num_endpoints());
    for (e, &lid) in lid_of.iter().enumerate() {
        let (home, _) = net.endpoint_location[e];
        let mut col = vec![NO_PORT; n];
        for (s, entry) in col.iter_mut().enumerate() {
            if s as SwitchId == home {
                continue;
            }
            if let Some(&(ib, line)) = table[s].get(&lid) {
                *entry = u16::try_from(ib).ok().and_then(|ib| view.port_of(net, s as SwitchId, ib)).ok_or_else(|| {
                    RoutingError::new(
                        LFTS,
                        format!(
                            "line {line}: switch '{}' forwards LID 0x{lid:04x} on IB port {ib}, which it does not have",
                            view.switch_names[s]
                        ),
                    )
                })?;
            }
        }
        let sl: Vec<u8> = (0..n).map(|s| sl_of[s].get(&lid).copied().unwrap_or(0)).collect();
        let next = columns.len() as u32;
        let c = *columns.entry((col, sl)).or_insert_with_key(|(col, sl)| {
            ports.extend_from_slice(col);
            sl_rows.extend_from_slice(sl);
            next
        });
        column_of.push(c);
    }
    Ok(PathTables::new(n, column_of, ports, sl_rows))
}

/// Walks the route from every switch with endpoints to every column's first endpoint;
/// returns the longest in hops.
fn check_routes(net: &Network, view: &IbView, t: &PathTables, lid_of: &[u32]) -> Result<u32, RoutingError> {
    let n = net.num_switches();
    let mut representative = vec![None; t.columns()];
    for (e, &c) in t.column_of.iter().enumerate() {
        representative[c as usize].get_or_insert(e as EndpointId);
    }
    let mut longest = 0;
    for e in representative.into_iter().flatten() {
        let (home, _) = net.endpoint_location[e as usize];
        let lid = lid_of[e as usize];
        let hca = &view.hcas[e as usize].0;
        for src in (0..n as SwitchId).filter(|&s| s != home && net.terminals[s as usize] > 0) {
            let (mut at, mut hops) = (src, 0u32);
            while at != home {
                let name = &view.switch_names[at as usize];
                let from = &view.switch_names[src as usize];
                let port = t.port(at, e);
                if port == NO_PORT {
                    return Err(RoutingError::new(
                        "routing.tables.lfts",
                        format!("switch '{name}' has no entry for LID 0x{lid:04x} (HCA '{hca}'), on the route from '{from}'"),
                    ));
                }
                let PortTarget::Switch { switch, .. } = net.ports(at)[port as usize].target else {
                    return Err(RoutingError::new(
                        "routing.tables.lfts",
                        format!(
                            "switch '{name}' forwards LID 0x{lid:04x} (HCA '{hca}') on IB port {}, which leads to no switch",
                            view.ib_port(net, at, port)
                        ),
                    ));
                };
                at = switch;
                hops += 1;
                if hops as usize > n {
                    return Err(RoutingError::new(
                        "routing.tables.lfts",
                        format!("the route from '{from}' to LID 0x{lid:04x} (HCA '{hca}') loops"),
                    ));
                }
            }
            longest = longest.max(hops);
        }
    }
    Ok(longest)
}

/// The `tables` routing (see the module docs).
pub struct TableRouting {
    tables: PathTables,
    longest: u32,
    summary: String,
}

impl Routing for TableRouting {
    fn vcs_required(&self) -> u8 {
        self.tables.max_sl() + 1
    }

    fn max_hops(&self) -> u32 {
        self.longest
    }

    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn destination_class(&self, e: EndpointId) -> Option<u32> {
        Some(self.tables.column_of[e as usize])
    }

    fn build_summary(&self) -> Option<String> {
        Some(self.summary.clone())
    }

    fn candidates(
        &self,
        at: SwitchId,
        _dst: SwitchId,
        packet: &mut Packet,
        _load: &dyn LoadView,
        _rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        if packet.hops == 0 {
            // The source switch: the path's SL.
            packet.route.phase = self.tables.sl(at, packet.dst);
        }
        out.push(Candidate { port: self.tables.port(at, packet.dst), vc: packet.route.phase, penalty: 0 });
    }
}

/// `[routing.tables]`: the files, read by the xnet command into the `_contents` keys.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableSettings {
    #[serde(default)]
    lfts: Option<String>,
    #[serde(default)]
    lfts_contents: Option<String>,
    #[serde(default)]
    sls: Option<String>,
    #[serde(default)]
    sls_contents: Option<String>,
}

fn build(ctx: &BuildContext<'_>) -> Result<Arc<dyn Routing>, RoutingError> {
    let s: TableSettings = ctx.settings()?;
    let lfts = s.lfts_contents.as_deref().ok_or_else(|| {
        RoutingError::new(
            "routing.tables.lfts",
            match &s.lfts {
                Some(p) => format!("`{p}` was not read (only the xnet command reads files)"),
                None => "missing: the forwarding tables to read (OpenSM's opensm-lfts.dump)".to_string(),
            },
        )
    })?;
    if s.sls.is_some() && s.sls_contents.is_none() {
        return Err(RoutingError::new(
            "routing.tables.sls",
            "was not read (only the xnet command reads files)",
        ));
    }
    let (tables, longest) = read_tables(ctx.net, lfts, s.sls_contents.as_deref())?;
    ctx.check_layers(tables.max_sl() + 1)?;
    let summary = format!(
        "{} destination columns for {} HCAs, SLs 0 to {}",
        tables.columns(),
        ctx.net.num_endpoints(),
        tables.max_sl()
    );
    Ok(Arc::new(TableRouting { tables, longest, summary }))
}

/// `tables` in the routing registry.
pub const TABLES: RoutingEntry = RoutingEntry {
    name: "tables",
    doc: "routes read from InfiniBand forwarding tables (OpenSM's opensm-lfts.dump, one column per HCA LID) and optional path SLs (VC = SL), e.g. OpenSM's or those `xnet routes --dump-tables` writes",
    topologies: "any (switch names as in the dump: a .net fabric's own, S<id> otherwise)",
    vcs: "1 + the highest SL (1 without an SL file)",
    settings: Settings::typed::<TableSettings>(&[
        Setting { key: "lfts", default: "required", doc: "the forwarding tables file (read by the xnet command into lfts_contents)" },
        Setting { key: "lfts_contents", default: "from lfts", doc: "the forwarding tables' text (filled in from lfts, and so recorded with the results)" },
        Setting { key: "sls", default: "none: SL 0", doc: "path SLs, as `xnet routes --dump-tables` writes them (read into sls_contents)" },
        Setting { key: "sls_contents", default: "from sls", doc: "the path SLs' text (filled in from sls)" },
    ])
    .with_files(&[
        FileKey { path: "lfts", contents: "lfts_contents", what: "the forwarding tables", form: FileForm::Text },
        FileKey { path: "sls", contents: "sls_contents", what: "the path SLs", form: FileForm::Text },
    ]),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    // A port and an SL per (column, switch); columns are at most the endpoints, usually the
    // switches.
    state_bytes: |size| size.table(3, 0, 0),
    build,
};
