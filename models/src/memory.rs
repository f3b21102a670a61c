//! What a run will need in memory, estimated from the configuration alone, before anything
//! large is allocated: the whole network description (every rank builds it), the partition
//! plan, the routing state, the rank's routers and endpoints, and the packets they hold.
//!
//! The sizes of the router's records come from the types themselves (`size_of`); the
//! routing engines' tables and working sets are per-switch-pair costs measured on tori
//! (recorded with the command in BENCHMARKS.md, "Memory estimate"). The estimate is meant
//! to be within a factor of 1.5 of the peak resident memory below saturation (tested
//! against measured runs): enough to refuse a configuration that cannot fit before it runs
//! for minutes and dies in an allocation failure. Past saturation the source queues grow
//! without bound (offered load is kept honest); [`MemoryEstimate::saturation_growth`] says
//! how fast.

use crate::config::Config;
use crate::config::ConfigError;
use routing::registry::StateSize;
use topology::NetworkSize;

/// Bytes of one MiB.
const MIB: u64 = 1 << 20;

/// The program itself: code, the HDF5 and MPI libraries, the allocator's arenas and the
/// threads' stacks (measured: 24 to 28 MiB for a 64-switch network).
const PROGRAM: u64 = 24 * MIB;

/// What the allocator and the growth of vectors add to what the records need: the items
/// but `program` are this much larger (measured: the items alone came to 0.83 to 0.93 of
/// the peak resident memory below saturation).
const SLACK_PERCENT: u64 = 15;

/// One part of the estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryItem {
    /// What it is, e.g. "routing tables".
    pub what: &'static str,
    /// Bytes on the rank that needs the most.
    pub bytes: u64,
}

/// The memory a configuration needs on each rank.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryEstimate {
    /// The parts, on the rank that needs the most (rank 0, which also gathers the results).
    pub items: Vec<MemoryItem>,
    /// Extra bytes on that rank when every buffer is full (a network at saturation).
    pub full_buffers: u64,
    /// Past saturation, bytes the rank's source queues may grow per 1,000 cycles (every
    /// packet generated and none injected: an upper bound).
    pub saturation_growth: u64,
    /// What would need less, where the estimate knows: the routing's tables per switch
    /// instead of per endpoint.
    pub hint: Option<String>,
}

impl MemoryEstimate {
    /// Bytes per rank below saturation: the sum of the items.
    pub fn per_rank(&self) -> u64 {
        self.items.iter().fold(0, |sum, i| sum.saturating_add(i.bytes))
    }

    /// Bytes of the items named in `what` (e.g. `["program", "network"]` for a command
    /// that only builds the network).
    pub fn bytes_of(&self, what: &[&str]) -> u64 {
        self.items.iter().filter(|i| what.contains(&i.what)).map(|i| i.bytes).sum()
    }

    /// One line: the total and its largest parts, e.g.
    /// `1.4 GiB per rank (routers 0.9 GiB, network 0.3 GiB, ...)`.
    pub fn describe(&self) -> String {
        let mut items: Vec<&MemoryItem> = self.items.iter().filter(|i| i.bytes >= MIB).collect();
        items.sort_by_key(|i| std::cmp::Reverse(i.bytes));
        let parts: Vec<String> = items.iter().map(|i| format!("{} {}", i.what, human(i.bytes))).collect();
        format!("{} per rank ({})", human(self.per_rank()), parts.join(", "))
    }

    /// [`Self::describe`] and what would need less ([`Self::hint`]), for a refusal.
    pub fn describe_with_hint(&self) -> String {
        match &self.hint {
            Some(h) => format!("{}; {h}", self.describe()),
            None => self.describe(),
        }
    }

    /// One line on what saturation adds, e.g. `past saturation: +0.4 GiB with every buffer
    /// full, and source queues growing by up to 1.2 GiB per 1,000 cycles`.
    pub fn describe_saturation(&self) -> String {
        format!(
            "past saturation: +{} with every buffer full, and source queues growing by up to {} per 1,000 cycles",
            human(self.full_buffers),
            human(self.saturation_growth)
        )
    }
}

/// `bytes` in the largest binary unit that keeps it at least 1, with one decimal.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Bytes per op of a job's stored graph (its records and dependencies, with the builder's
/// growth while it is made): 1.34 GB for the 33.5M ops of a 4,096-rank linear all-to-all
/// (`xnet workload export`, peak RSS).
const GRAPH_BYTES_PER_OP: u64 = 40;

/// What a configuration's jobs hold in every rank: each job's graph (built by every rank),
/// the run's state per op, and a schedule's text, held twice (the configuration's table and
/// the recorded text).
fn operations_bytes(config: &Config) -> u64 {
    let Some(section) = &config.workload else { return 0 };
    let mut bytes = 0u64;
    for (index, spec) in section.jobs.iter().enumerate() {
        let job = crate::workload::JobContext {
            index,
            iterations: spec.iterations,
            compute: spec.compute,
            seed: config.simulation.seed,
            ps_per_cycle: section.ps_per_cycle,
            bytes_per_phit: section.bytes_per_phit,
            node_gpus: section.node_gpus,
        };
        let ops = spec.kind.ops_estimate(&job);
        let run =
            ops.saturating_mul(u64::from(spec.replicas.max(1))).saturating_mul(spec.kind.run_bytes_per_op());
        bytes = bytes
            .saturating_add(ops.saturating_mul(GRAPH_BYTES_PER_OP))
            .saturating_add(run)
            .saturating_add(spec.kind.text_bytes().saturating_mul(2));
    }
    bytes
}

/// Estimates the memory `config` needs on each of `ranks` ranks, each running
/// `threads_per_rank` partitions, without building anything. Fails only on a topology
/// that does not validate (the error names its key).
pub fn estimate(config: &Config, ranks: u32, threads_per_rank: u32) -> Result<MemoryEstimate, ConfigError> {
    let size = config.network_size()?;
    let ranks = ranks.max(1);
    let parts = ranks as u64 * threads_per_rank.max(1) as u64;
    let n = size.switches;
    // The rank's share (the largest, when the switches do not divide evenly).
    let share = |total: u64| total.div_ceil(ranks as u64);
    let (own_switches, own_ports, own_endpoints) = (share(n), share(size.ports), share(size.endpoints));
    let network_ports = size.ports.saturating_sub(size.endpoints);
    let vcs = config.router.vcs as u64;

    let mut items = vec![MemoryItem { what: "program", bytes: PROGRAM }];
    // Every rank builds the whole network: port lists, then the same ports in CSR form.
    let port = std::mem::size_of::<topology::Port>() as u64;
    items.push(MemoryItem {
        what: "network",
        bytes: size.ports * port * 2 + n * (4 + 2 + 24) + size.endpoints * 8,
    });
    if parts > 1 {
        // The partition graph (one weighted edge per network port) and the multilevel
        // partitioner's coarser copies of it.
        items.push(MemoryItem { what: "partitioning", bytes: network_ports * 16 * 3 + n * 24 });
    }
    items.push(MemoryItem { what: "routing", bytes: routing_bytes(config, &size, own_switches) });
    items.push(MemoryItem {
        what: "routers",
        bytes: crate::router::Router::bytes(own_switches, own_ports, own_endpoints, vcs)
            // Without credits, a receiver's levels: 3 bytes per input VC, 8 per port.
            + if config.router.flow_control == crate::router::FlowControl::Credits {
                0
            } else {
                own_ports * (3 * vcs + 8)
            },
    });
    if config.workload.is_some() {
        // Every rank maps the whole workload (job and rank of each endpoint, 8 bytes); a rank
        // running at one of its endpoints keeps its step counts, outbox and partial
        // transfers: 1.9 KiB per endpoint measured (BENCHMARKS.md, application workloads).
        items.push(MemoryItem { what: "workload", bytes: size.endpoints * 8 + own_endpoints * 2048 });
        items.push(MemoryItem { what: "operations", bytes: operations_bytes(config) });
    }
    // Rank 0 gathers the per-link and per-switch statistics of the whole network.
    items.push(MemoryItem { what: "results", bytes: network_ports * 32 + n * 64 });
    let held = crate::router::Router::packet_bytes();
    let packet_size = config.router.packet_size.max(1) as u64;
    // Packets in flight below saturation (Little's law): the rank's endpoints generate
    // load / packet_size packets a cycle, each in the network for about the zero-load
    // latency of a longest minimal route.
    let latency = packet_size + size.route_latency + size.hops as u64 * config.router.router_delay;
    let in_flight = own_endpoints as f64 * config.traffic.load / packet_size as f64 * latency as f64;
    items.push(MemoryItem { what: "packets", bytes: (in_flight * held as f64) as u64 });
    let slots_per_vc =
        (config.router.input_buffer as u64 + config.router.output_buffer as u64).div_ceil(packet_size);
    let full_buffers = (own_ports * vcs).saturating_mul(slots_per_vc).saturating_mul(held);
    let generated_per_kcycle = (config.traffic.load * 1000.0 / packet_size as f64).ceil() as u64;
    for item in items.iter_mut().filter(|i| i.what != "program") {
        item.bytes = item.bytes.saturating_add(item.bytes / 100 * SLACK_PERCENT);
    }
    let operations = items.iter().find(|i| i.what == "operations").map_or(0, |i| i.bytes);
    let largest = items.iter().map(|i| i.bytes).max().unwrap_or(0);
    let hint = if operations > 0 && operations == largest {
        Some(
            "the jobs' operations take most of it, and every rank holds all of them (more ranks or hosts \
             do not divide them): give the jobs fewer ranks or iterations of a random permutation, or \
             replay a shorter trace"
                .to_string(),
        )
    } else {
        None
    };
    let hint = hint.or_else(|| {
        per_endpoint_tables(config).then(|| {
            let name = config.routing_entry().name;
            let per_switch = routing_bytes_with(config, &size, own_switches, false);
            format!(
            "the routing's tables have a column per endpoint: routing.{name}.destinations = \"switches\" \
             takes {} for them",
            human(per_switch)
        )
        })
    });
    Ok(MemoryEstimate {
        items,
        full_buffers,
        saturation_growth: own_endpoints * generated_per_kcycle * held,
        hint,
    })
}

/// Routing state on a rank that takes decisions at `own_switches` of the network's switches,
/// including what building it needs at its peak: the routing's own model (its registry
/// entry's `state_bytes`) and the escape subnetwork's.
fn routing_bytes(config: &Config, size: &NetworkSize, own_switches: u64) -> u64 {
    routing_bytes_with(config, size, own_switches, per_endpoint_tables(config))
}

/// [`routing_bytes`] with tables per endpoint or per switch (`per_endpoint`).
fn routing_bytes_with(config: &Config, size: &NetworkSize, own_switches: u64, per_endpoint: bool) -> u64 {
    let n = size.switches;
    let kind = config.topology.get("kind").and_then(toml::Value::as_str).unwrap_or("");
    let faults = config.topology.get("failed_links").and_then(toml::Value::as_integer).unwrap_or(0) > 0;
    let state = StateSize {
        switches: n,
        // Network ports per switch (terminal ports excluded).
        degree: size.ports.saturating_sub(size.endpoints).div_ceil(n.max(1)),
        hops: size.hops as u64,
        vcs: config.router.vcs as u64,
        own_switches,
        coordinates: !faults && matches!(kind, "hyperx" | "torus" | "mesh"),
        endpoints: size.endpoints,
        per_endpoint,
    };
    let bytes = (config.routing_entry().state_bytes)(&state);
    // Escape subnetworks keep a tree and a table per switch pair.
    let escape = if config.routing.escape_vcs > 0 { state.pairs() + state.per_switch() } else { 0 };
    // The balanced selection keeps a candidate index per pair and hop, and while choosing
    // each pair's path (a link and an index per hop, 8 bytes).
    let balanced = if config.routing.selection == routing::Selection::Balanced {
        state.pairs().saturating_mul(9 * (state.hops + 1))
    } else {
        0
    };
    bytes.saturating_add(escape).saturating_add(balanced)
}

/// Whether the routing builds a table column per destination endpoint: it has the
/// `destinations` setting and it is not `switches`.
fn per_endpoint_tables(config: &Config) -> bool {
    let entry = config.routing_entry();
    let key = routing::layered::DESTINATIONS_SETTING.key;
    entry.settings.keys.iter().any(|s| s.key == key)
        && config
            .routing
            .settings
            .get(entry.name)
            .and_then(|t| t.get(key))
            .and_then(toml::Value::as_str)
            .is_none_or(|v| v == "endpoints")
}

#[cfg(test)]
mod tests {
    use super::*;
    use topology::metrics::summarize;

    fn config(topology: &str, routing: &str) -> Config {
        let text = format!(
            "[simulation]\ncycles = 1000\n[topology]\n{topology}\n[router]\nvcs = 4\n\
             [routing]\nalgorithm = \"{routing}\"\n[traffic]\npattern = \"uniform\"\nload = 0.3\n"
        );
        Config::parse(&text, &[]).expect("valid test config")
    }

    const TOPOLOGIES: &[&str] = &[
        "kind = \"hyperx\"\nsides = [4, 3, 5]\nendpoints_per_switch = 2",
        "kind = \"torus\"\nsides = [5, 2, 4]\nendpoints_per_switch = 3",
        "kind = \"torus\"\nsides = [5, 4]\nwrap = [true, false]\nendpoints_per_switch = 1",
        "kind = \"mesh\"\nsides = [3, 6]\nendpoints_per_switch = 1",
        "kind = \"dragonfly\"\np = 2\na = 4\nh = 2",
        "kind = \"dragonfly\"\np = 3\na = 4\nh = 3\ngroups = 5",
        "kind = \"fat_tree\"\nk = 4\nn = 3",
        "kind = \"random_regular\"\nswitches = 200\ndegree = 6\nendpoints_per_switch = 2",
        "kind = \"random_regular\"\nswitches = 64\ndegree = 8\nendpoints_per_switch = 2",
    ];

    #[test]
    fn network_size_agrees_with_the_built_network() {
        for topology in TOPOLOGIES {
            let cfg = config(topology, "minimal");
            let size = cfg.network_size().unwrap();
            let net = cfg.build_network().unwrap();
            assert_eq!(size.switches, net.num_switches() as u64, "{topology}");
            assert_eq!(size.endpoints, net.num_endpoints() as u64, "{topology}");
            assert!(size.ports >= net.ports.len() as u64, "{topology}: {} < {}", size.ports, net.ports.len());
            assert!(size.ports <= net.ports.len() as u64 * 2, "{topology}");
            let diameter = summarize(&net).diameter;
            if topology.contains("random_regular") {
                // An estimate from the Moore bound: within one hop.
                assert!(size.hops.abs_diff(diameter) <= 1, "{topology}: {} vs {diameter}", size.hops);
            } else {
                assert_eq!(size.hops, diameter, "{topology}");
            }
        }
    }

    #[test]
    fn a_network_too_large_to_build_is_sized_at_once() {
        let cfg = config("kind = \"hyperx\"\nsides = [1000, 1000]\nendpoints_per_switch = 8", "dor");
        let size = cfg.network_size().unwrap();
        assert_eq!((size.switches, size.endpoints, size.ports), (1_000_000, 8_000_000, 2_006_000_000));
        let e = estimate(&cfg, 1, 1).unwrap();
        // 2 billion ports: at least 12 bytes each for the network and 64 for the routers.
        assert!(e.bytes_of(&["network"]) > 24 << 30, "{}", e.describe());
        assert!(e.bytes_of(&["routers"]) > 128 << 30, "{}", e.describe());
    }

    #[test]
    fn router_and_packet_memory_fall_with_the_ranks_and_the_network_does_not() {
        let cfg = config(
            "kind = \"random_regular\"\nswitches = 4096\ndegree = 16\nendpoints_per_switch = 8",
            "minimal",
        );
        let one = estimate(&cfg, 1, 1).unwrap();
        let four = estimate(&cfg, 4, 1).unwrap();
        for what in ["routers", "packets"] {
            let (a, b) = (one.bytes_of(&[what]), four.bytes_of(&[what]));
            assert!(b * 4 <= a + a / 100 && b * 4 >= a - a / 100, "{what}: {a} on 1 rank, {b} on 4");
        }
        assert_eq!(one.bytes_of(&["network"]), four.bytes_of(&["network"]));
        // Distance rows: every column on one rank (4096^2 / 4 bytes = 4 MiB before slack);
        // on four ranks a quarter of the switches and their 16 neighbours still reach all.
        assert!(one.bytes_of(&["routing"]) >= 4 << 20);
        assert!(one.per_rank() > four.per_rank());
        assert!(four.describe().contains(" per rank (program 24.0 MiB, routers "), "{}", four.describe());
    }

    #[test]
    fn routings_from_coordinates_need_no_table_and_table_engines_grow_with_pairs() {
        let torus = |sides: &str| format!("kind = \"torus\"\nsides = {sides}\nendpoints_per_switch = 1");
        let routing = |t: &str, r: &str| estimate(&config(t, r), 1, 1).unwrap().bytes_of(&["routing"]);
        let (small, large) = (torus("[8, 8, 8]"), torus("[16, 16, 8]"));
        assert!(routing(&large, "dor") < 1 << 20);
        assert!(routing(&large, "minimal") < 1 << 20, "minimal on an intact torus uses coordinates");
        // 16 times the pairs and 20 against 12 hops: DFSSSP keeps dependencies per hop.
        let (a, b) = (routing(&small, "dfsssp"), routing(&large, "dfsssp"));
        assert!(b > a * 16 && b < a * 30, "{a} -> {b}");
        // Every registered routing's model counts something.
        let size = StateSize {
            switches: 1000,
            degree: 8,
            hops: 4,
            vcs: 2,
            own_switches: 1000,
            coordinates: false,
            endpoints: 4000,
            per_endpoint: false,
        };
        for r in routing::ROUTINGS {
            assert!((r.state_bytes)(&size) >= size.per_switch(), "{}", r.name);
        }
    }

    /// Tables per endpoint (the default of the engines that route per LID) are switches x
    /// endpoints: 4 endpoints per switch cost 4 times the tables per switch.
    #[test]
    fn tables_per_endpoint_grow_with_the_endpoints() {
        let torus = "kind = \"torus\"\nsides = [8, 8, 8]\nendpoints_per_switch = 4";
        let routing = |sets: &[&str]| {
            let text = format!(
                "[simulation]\ncycles = 1000\n[topology]\n{torus}\n[router]\nvcs = 4\n\
                 [routing]\nalgorithm = \"dfsssp\"\n[traffic]\npattern = \"uniform\"\nload = 0.3\n"
            );
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            estimate(&Config::parse(&text, &sets).unwrap(), 1, 1).unwrap().bytes_of(&["routing"])
        };
        let per_switch = routing(&["routing.dfsssp.destinations=\"switches\""]);
        let per_endpoint = routing(&[]);
        assert!(
            per_endpoint > per_switch * 39 / 10 && per_endpoint <= per_switch * 4,
            "{per_switch} -> {per_endpoint}"
        );
        // `ftree` and `minhop` have no other way.
        let minhop = routing(&["routing.algorithm=\"minhop\"", "router.vcs=12"]);
        assert!(minhop >= 512 * 2048 * 2, "{minhop}");
    }

    #[test]
    fn the_largest_networks_validation_allows_are_estimated_without_overflow() {
        // 1.4 billion switches (the port count at its u32 limit) with a pair-table engine.
        let cfg = config(
            "kind = \"random_regular\"\nswitches = 1400000000\ndegree = 2\nendpoints_per_switch = 1",
            "lash",
        );
        let e = estimate(&cfg, 1, 1).unwrap();
        assert!(e.per_rank() > 1 << 60, "{}", e.describe());
        assert!(e.describe().contains("routing "), "{}", e.describe());
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3 << 20), "3.0 MiB");
        assert_eq!(human((5 << 30) / 2), "2.5 GiB");
    }
}
