//! GPU nodes on a fabric (`[topology.nodes]`): exact zero-load times over NVLink, the NIC
//! and the fabric, each at its own speed; routes that start and end at GPUs only; every
//! packet delivered once; the same results on 1 and 2 partitions; any fabric routing.

mod common;
use common::{build, check_zero_load as check, run, run_recorded as run_light, speed_cost};
use xnet_models::sim::RunResult;

/// A 4-ary 2-tree (16 fabric endpoints, 4 leaves, 4 spines) under 4 nodes of 4 GPUs,
/// rail-optimized: GPU g of every node on leaf g. NICs and fabric at 1 phit a cycle,
/// NVLink at 4; packets of 8 phits.
const RAILS: &str = r#"
    [simulation]
    cycles = 100000
    [topology]
    kind = "fat_tree"
    k = 4
    n = 2
    terminal_latency = 3
    link_latency = 5
    link_speeds = { nvlink = 4 }
    [topology.nodes]
    gpus = 4
    nvlink_latency = 2
    gpu_latency = 1
    [router]
    vcs = 2
    packet_size = 8
    input_buffer = 32
    output_buffer = 16
    router_delay = 2
    [routing]
    algorithm = "minimal"
    [traffic]
    pattern = "uniform"
    load = 0.002
"#;

/// (hops, zero-load latency) of a packet from GPU `a` to GPU `b` of [`RAILS`] with the
/// GPUs' own links at serialization `gpu` (8 phits at their speed).
fn rails_zero_load(a: u32, b: u32, gpu: u64) -> (u16, u64) {
    const R: u64 = 2;
    let (nvlink, nic, fabric) = (2, 8, 8);
    if a / 4 == b / 4 {
        // GPU, NVSwitch, GPU: two NVLink hops of 2 cycles.
        (2, 1 + 2 + 2 + 1 + 3 * R + speed_cost(&[gpu, nvlink, nvlink, gpu]))
    } else if a % 4 == b % 4 {
        // Same rail: GPU, leaf, GPU.
        (2, 1 + 3 + 3 + 1 + 3 * R + speed_cost(&[gpu, nic, nic, gpu]))
    } else {
        // Across rails: GPU, leaf, spine, leaf, GPU.
        (4, 1 + 3 + 5 + 5 + 3 + 1 + 5 * R + speed_cost(&[gpu, nic, fabric, fabric, nic, gpu]))
    }
}

#[test]
fn zero_load_over_nvlink_nic_and_fabric_is_exact_on_1_and_2_partitions() {
    let mut sim = build(RAILS, &[]);
    // The GPU's own link defaults to its NIC and NVLink together: 1 + 4 = 5 phits a
    // cycle, so 8 phits take 2 cycles.
    let classes: Vec<(String, f64)> =
        sim.net.link_classes.iter().map(|c| (c.name.clone(), c.speed.phits_per_cycle())).collect();
    assert_eq!(
        classes,
        [("terminal", 5.0), ("nic", 1.0), ("network", 1.0), ("nvlink", 4.0)].map(|(n, s)| (n.to_string(), s))
    );
    let one = run_light(&mut sim, 1);
    check(&one, |d| rails_zero_load(d.src, d.dst, 2));
    let kinds = [(0, 1), (0, 4), (0, 5)].map(|(a, b)| rails_zero_load(a, b, 2).1);
    assert!(kinds[0] < kinds[1] && kinds[1] < kinds[2], "NVLink, same rail, across rails: {kinds:?}");
    let two = run_light(&mut sim, 2);
    assert_eq!(one.deliveries, two.deliveries, "1 and 2 partitions differ");
}

#[test]
fn pxn_crosses_the_node_to_the_destination_s_rail_with_exact_zero_load_times() {
    // With PXN a packet to another node's GPU on another rail goes GPU, NVSwitch, the GPU
    // in the destination's place, its leaf (the destination's rail), the destination:
    // four hops, no spine. Other packets keep their routes.
    let mut sim = build(&RAILS.replace("gpu_latency = 1", "gpu_latency = 1\n    pxn = true"), &[]);
    assert!(sim.net.name.contains("pxn"), "{}", sim.net.name);
    let expected = |a: u32, b: u32| {
        if a / 4 != b / 4 && a % 4 != b % 4 {
            const R: u64 = 2;
            (4, 1 + 2 + 2 + 3 + 3 + 1 + 5 * R + speed_cost(&[2, 2, 2, 8, 8, 2]))
        } else {
            rails_zero_load(a, b, 2)
        }
    };
    let one = run_light(&mut sim, 1);
    check(&one, |d| expected(d.src, d.dst));
    assert!(expected(0, 5).1 < rails_zero_load(0, 5, 2).1, "PXN is not faster than the spine here");
    let two = run_light(&mut sim, 2);
    assert_eq!(one.deliveries, two.deliveries, "1 and 2 partitions differ");
    let report = xnet_models::analysis::analyse(&sim);
    assert!(report.acyclic && report.unreachable_pairs == 0, "{report:?}");
}

#[test]
fn with_pxn_an_all_to_all_between_nodes_never_reaches_a_spine() {
    // NCCL's all-to-all over 4 nodes of 4 GPUs sends from every GPU to every other: in
    // rank order 3 of every 4 pairs between nodes are on different rails and climb to a
    // spine; with PXN every packet leaves its node on the destination's rail.
    let alltoall = r#"collective = "alltoall", bytes = 65536, library = "nccl""#;
    let spine_phits = |pxn: &str| {
        leaf_phits(&[("gpu_latency = 1", &format!("gpu_latency = 1\n    pxn = {pxn}"))], alltoall).0
    };
    assert!(spine_phits("false") > 0, "without PXN the all-to-all should climb to the spines");
    assert_eq!(spine_phits("true"), 0, "with PXN the all-to-all climbed to the spines");
}

#[test]
fn every_packet_arrives_once_under_load_with_any_fabric_routing() {
    // Past the fabric's saturation, with routings of three kinds: a table (minimal), the
    // fat tree's own (ftree), and Up*/Down*.
    for routing in ["minimal", "ftree", "up_down"] {
        for (scale_up, planes, pxn) in [
            ("switch", 1, false),
            ("full", 2, false),
            ("none", 1, false),
            ("switch", 2, true),
            ("full", 1, true),
        ] {
            let sets = [
                format!("routing.algorithm={routing}"),
                format!("topology.nodes.scale_up={scale_up}"),
                format!("topology.nodes.planes={planes}"),
                format!("topology.nodes.pxn={pxn}"),
                "traffic.load=0.8".to_string(),
                "simulation.cycles=6000".to_string(),
            ];
            let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
            let text = if scale_up == "none" {
                RAILS.replace("link_speeds = { nvlink = 4 }", "")
            } else {
                RAILS.into()
            };
            let mut sim = build(&text, &sets);
            sim.record_deliveries = true;
            let one = run(&sim, 1);
            let two = run(&sim, 2);
            let label = format!("{routing}, {scale_up}, {planes} planes, pxn {pxn}");
            check_every_packet_once(&label, &one, &two);
        }
    }
}

/// Checks a run past saturation on 1 partition (`one`, its deliveries recorded) against
/// the same on 2 (`two`): every packet generated is delivered once to its own GPU, or is
/// still in the network, and the partitions agree.
fn check_every_packet_once(label: &str, one: &RunResult, two: &RunResult) {
    let s = &one.summary;
    assert!(s.delivered_total > 1000, "{label}: {} delivered", s.delivered_total);
    assert_eq!(s.generated_total, s.delivered_total + one.resident_end + one.on_wires_end, "{label}: {s:?}");
    let mut ids: Vec<u64> = one.deliveries.iter().map(|d| d.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len() as u64, s.delivered_total, "{label}: a packet delivered twice");
    assert!(one.deliveries.iter().all(|d| d.received_by == d.dst), "{label}: a packet at the wrong GPU");
    assert_eq!(one.endpoint_accepted, two.endpoint_accepted, "{label}: 1 and 2 partitions differ");
}

/// One node of 8 GPUs (on a single 8-port switch) running NCCL's all-reduce, all-gather and
/// reduce-scatter with the scale-up links' packets `scale_up_packet` phits long.
fn node_collectives(scale_up_packet: u16, nvlink_speed: u32) -> (u64, u64) {
    let text = format!(
        r#"
        [simulation]
        cycles = 100000000
        sample_period = 1000
        [topology]
        kind = "fat_tree"
        k = 8
        n = 1
        link_speeds = {{ nvlink = {nvlink_speed} }}
        [topology.nodes]
        gpus = 8
        placement = "node"
        nvlink_latency = 10
        scale_up_packet = {scale_up_packet}
        [router]
        vcs = 2
        packet_size = 64
        input_buffer = 512
        output_buffer = 512
        router_delay = 20
        [routing]
        algorithm = "minimal"
        [workload]
        [[workload.jobs]]
        kind = "collectives"
        ranks = 8
        operations = [
          {{ collective = "allreduce", bytes = 4194304, library = "nccl" }},
          {{ collective = "allgather", bytes = 524288, library = "nccl" }},
          {{ collective = "reduce_scatter", bytes = 4194304, library = "nccl" }},
        ]
        "#
    );
    let r = run(&build(&text, &[]), 1);
    let job = &r.workload.as_ref().unwrap().jobs[0];
    (job.completion_time.expect("finished"), job.packets_received)
}

#[test]
fn a_coarser_grain_on_nvlink_keeps_the_collectives_times() {
    // At 8 phits a cycle both grains fill NVLink exactly (64 and 1,024 phits take 8 and
    // 128 cycles): the same completion, in 16 times fewer packets.
    let (fine, fine_packets) = node_collectives(64, 8);
    let (coarse, coarse_packets) = node_collectives(1024, 8);
    assert_eq!(fine, coarse);
    assert!(fine_packets > 10 * coarse_packets, "{fine_packets} against {coarse_packets} packets");
    // At 9 phits a cycle a 64-phit packet takes ceil(64 / 9) = 8 cycles, 8 phits a cycle,
    // where 1,024 phits take 114 (8.98): the packet level is slower by that rounding.
    let (fine, _) = node_collectives(64, 9);
    let (coarse, _) = node_collectives(1024, 9);
    let ratio = fine as f64 / coarse as f64;
    assert!(ratio > 1.0 && ratio < 9.0 / 8.0 + 0.01, "packet level {fine}, coarse {coarse}: {ratio:.4}");
}

/// Runs one NCCL collective over the 16 GPUs of [`RAILS`], its text changed by
/// `changes` (pairs of text and replacement), and returns the phits the leaves sent up
/// to the spines and down to the GPUs.
fn leaf_phits(changes: &[(&str, &str)], operation: &str) -> (u64, u64) {
    let mut text = RAILS.replace("load = 0.002", "load = 0.0");
    for (from, to) in changes {
        text = text.replace(from, to);
    }
    text += &format!(
        "[workload]\n[[workload.jobs]]\nkind = \"collectives\"\nranks = 16\noperations = [{{ {operation} }}]\n"
    );
    let sim = build(&text, &["simulation.cycles=10000000", "simulation.sample_period=1000"]);
    let layout = sim.net.nodes.clone().unwrap();
    let r = run(&sim, 1);
    assert_eq!(r.status, xnet_models::sim::Status::Completed, "{changes:?} {operation}");
    let leaves: Vec<u32> = (0..4).map(|l| layout.fabric_switch(0, l)).collect();
    let phits = |up: bool| -> u64 {
        r.links.iter().filter(|l| leaves.contains(&l.switch) && (l.port >= 4) == up).map(|l| l.phits).sum()
    };
    let (up, down) = (phits(true), phits(false));
    assert!(down > 0, "{changes:?} {operation}: no traffic crossed the NICs");
    (up, down)
}

const RING: &str = r#"collective = "allreduce", bytes = 1048576, library = "nccl", algorithm = "ring""#;

#[test]
fn nccl_rings_across_nodes_stay_on_their_rails() {
    // 4 nodes of 4 GPUs on a rail-optimized 4-ary 2-tree: leaf g holds GPU g of every node.
    // NCCL's rings enter and leave each node on one rail, so an all-reduce over all 16
    // GPUs never climbs to a spine; a ring in rank order would (GPU 3 of node 0 to GPU 0
    // of node 1 is leaf 3 to leaf 0).
    assert_eq!(leaf_phits(&[], RING).0, 0, "the rings climbed to the spines");
}

#[test]
fn nccl_rings_stay_on_their_rails_when_rails_are_fewer_than_gpus() {
    // 2 nodes of 8 GPUs on 4 rails (GPU g on leaf g mod 4, two GPUs of a node per leaf),
    // as a large scale-up domain's GPUs share fewer rails: NCCL's rings still cross
    // between nodes GPU to GPU on one rail, so no packet climbs to a spine.
    assert_eq!(
        leaf_phits(&[("gpus = 4", "gpus = 8\n    rails = 4")], RING).0,
        0,
        "the rings climbed to the spines"
    );
}

#[test]
fn nccl_trees_across_nodes_stay_on_their_rails() {
    // NCCL's tree all-reduce on the same 4 nodes of 4 GPUs: each node chained from the
    // channel's GPU, which alone talks to the same GPU of the other nodes, on one rail.
    let tree = RING.replace(r#""ring""#, r#""tree""#);
    assert_eq!(leaf_phits(&[], &tree).0, 0, "the trees climbed to the spines");
}

/// [`RAILS`]'s nodes on the dual-ToR form: a leaf-spine Clos of 8 leaves of 4 ports under
/// 4 spines, each GPU's NIC with a port on both leaves of its rail's pair (leaves 2g and
/// 2g + 1), as Alibaba's HPN (Qian et al., SIGCOMM'24).
fn dual_tor() -> String {
    RAILS
        .replace(
            "kind = \"fat_tree\"\n    k = 4\n    n = 2",
            "kind = \"clos\"\n    leaves = 8\n    endpoints_per_leaf = 4\n    spines = 4",
        )
        .replace("gpus = 4", "gpus = 4\n    dual_tor = true")
}

#[test]
fn dual_tor_zero_load_is_exact_and_either_leaf_of_a_pair_delivers() {
    let mut sim = build(&dual_tor(), &[]);
    assert!(sim.net.name.contains("dual-tor"), "{}", sim.net.name);
    // The GPU's own link carries both NIC ports and NVLink: 1 + 1 + 4 = 6 phits a cycle,
    // 8 phits in 2 cycles. A packet enters its pair by either leaf; the spines reach both
    // leaves of the destination's pair: the paths' lengths and times are those of one leaf.
    let one = run_light(&mut sim, 1);
    check(&one, |d| rails_zero_load(d.src, d.dst, 2));
    let two = run_light(&mut sim, 2);
    assert_eq!(one.deliveries, two.deliveries, "1 and 2 partitions differ");
    // Adaptive selection breaks ties at random: both leaves of every pair deliver.
    let layout = sim.net.nodes.clone().unwrap();
    let down = |leaf: u32| -> u64 {
        let at = layout.fabric_switch(0, leaf);
        one.links.iter().filter(|l| l.switch == at && l.port < 4).map(|l| l.phits).sum()
    };
    assert!((0..8).all(|leaf| down(leaf) > 0), "{:?}", (0..8).map(down).collect::<Vec<_>>());
    let report = xnet_models::analysis::analyse(&sim);
    assert!(report.acyclic && report.unreachable_pairs == 0, "{report:?}");
}

#[test]
fn dual_tor_loses_no_packet_under_load() {
    for (selection, pxn) in [("adaptive", false), ("ecmp", false), ("random", true)] {
        let sets = [
            format!("routing.selection={selection}"),
            format!("topology.nodes.pxn={pxn}"),
            "traffic.load=0.8".to_string(),
            "simulation.cycles=6000".to_string(),
        ];
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        let mut sim = build(&dual_tor(), &sets);
        sim.record_deliveries = true;
        check_every_packet_once(&format!("dual-ToR, {selection}, pxn {pxn}"), &run(&sim, 1), &run(&sim, 2));
    }
}

/// One message from GPU 0 to GPU 5 (another node, another rail) on [`RAILS`] under
/// InfiniBand congestion control marking from two packets queued.
fn one_message_marked(extra: &[&str]) -> RunResult {
    let text = RAILS.replace("[traffic]\n    pattern = \"uniform\"\n    load = 0.002\n", "")
        + "[congestion]\ncontrol = \"infiniband\"\n[congestion.infiniband]\nthreshold = 16\n\
           [workload]\nbytes_per_phit = 16\n[[workload.jobs]]\nkind = \"goal\"\ncontents = \"\"\"\n\
           num_ranks 16\nrank 0 {\ns: send 65536b to 5 tag 1\n}\nrank 5 {\nr: recv 65536b from 0 tag 1\n}\n\"\"\"\n";
    run(&build(&text, extra), 1)
}

#[test]
fn a_nodes_insides_mark_no_packet_for_congestion_control() {
    // The GPU sends at NVLink speed, four times its NIC's: its packets queue at the GPU's
    // port to the NIC, a node's inside, which marks nothing; the fabric carries the one
    // flow at the NIC's rate and queues nothing either.
    let r = one_message_marked(&[]);
    assert!(r.workload.as_ref().unwrap().finished());
    let marked: u64 = r.samples.iter().map(|s| s.counters.marked_packets).sum();
    assert_eq!(marked, 0);
    // The fabric's switches do mark when their queue passes the threshold: with the NIC as
    // fast as NVLink, the leaf's port to the slower spine link queues.
    let r = one_message_marked(&["topology.link_speeds={ nvlink = 4, nic = 4 }"]);
    let marked: u64 = r.samples.iter().map(|s| s.counters.marked_packets).sum();
    assert!(marked > 0);
}
