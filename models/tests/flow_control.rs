//! Link-level flow control other than credits (`router.flow_control`): PFC keeps a
//! bottleneck busy and loses nothing under its default thresholds; thresholds that leave no
//! headroom, and links without flow control, drop packets, and every packet is accounted
//! for; results do not depend on the partitioning; bad settings name their key.

mod common;
use common::{build, run, run_recorded, CLIQUE, DEADLOCKING_RING, HYPERX};
use xnet_models::sim::Status;
use xnet_models::sim::{RunResult, Simulation};

/// A Dragonfly of 3 groups of 2 switches, one endpoint each, whose global links carry a
/// quarter of a phit a cycle. Under `group_shift` each group's two flows leave by one
/// global link; the flow that reaches it over a local link fills that switch's input
/// buffer, so PFC pauses the local link.
const SLOW_GLOBAL: &str = r#"
[simulation]
cycles = 200000
seed = 3
[topology]
kind = "dragonfly"
p = 1
a = 2
h = 1
terminal_latency = 2
local_latency = 3
global_latency = 20
link_speeds = { global = "1/4" }
[router]
vcs = 2
packet_size = 8
input_buffer = 120
output_buffer = 8
[routing]
algorithm = "dragonfly_min"
[traffic]
pattern = "group_shift"
load = 1.0
"#;

/// Completion time of `packets` packets from every endpoint of [`SLOW_GLOBAL`].
fn completion(overrides: &[&str], packets: u64) -> RunResult {
    let quota = format!("traffic.phits_per_endpoint={}", packets * 8);
    let mut all = overrides.to_vec();
    all.push(&quota);
    let r = run(&build(SLOW_GLOBAL, &all), 1);
    let c = r.completion.as_ref().expect("a completion-time run");
    assert!(c.all_delivered, "{overrides:?}: not every packet was delivered");
    r
}

#[test]
fn pfc_pauses_keep_the_bottleneck_busy() {
    // The global link sends a packet every 8 / (1/4) = 32 cycles, back to back once the
    // flows have reached it: 100 more packets from each of its 2 flows take exactly
    // 6,400 cycles more, under credits and under PFC's pauses and resumes alike.
    let per_packet = 32;
    for overrides in [&["router.flow_control=credits"][..], &["router.flow_control=pfc"]] {
        let short = completion(overrides, 100);
        let long = completion(overrides, 200);
        let (t1, t2) = (short.completion.unwrap().time, long.completion.unwrap().time);
        assert_eq!(t2 - t1, 2 * 100 * per_packet, "{overrides:?}");
        assert_eq!(long.summary.dropped_total, 0);
        if overrides[0].ends_with("pfc") {
            // Pauses reached exactly the local links into the switches with the global
            // links, and the time they waited paused shows as stalls there.
            assert!(long.summary.pause_frames > 0);
            for l in &long.links {
                let local = l.class == 1;
                assert_eq!(l.pauses > 0, local && l.phits > 0, "{l:?}");
                assert!(l.pauses == 0 || l.stall_cycles > 0, "{l:?}");
                assert_eq!(l.longest_pause > 0, l.pauses > 0, "{l:?}");
            }
            assert_eq!(long.links.iter().map(|l| l.pauses).sum::<u64>(), long.summary.pause_frames);
        }
    }
    // PFC changes when packets move, not when the last one arrives.
    assert_eq!(
        completion(&["router.flow_control=pfc"], 150).completion.unwrap().time,
        completion(&["router.flow_control=credits"], 150).completion.unwrap().time
    );
}

#[test]
fn pfc_without_headroom_drops_and_accounts_for_every_packet() {
    // Pausing only when the buffer is full leaves no room for what is on its way: packets
    // are lost despite PFC, and counted on the links they arrived by.
    let mut sim = build(
        SLOW_GLOBAL,
        &[
            "router.flow_control=pfc",
            "router.pfc.xoff=120",
            "router.pfc.xon=100",
            "traffic.phits_per_endpoint=1600",
        ],
    );
    let r = run_recorded(&mut sim, 1);
    let s = &r.summary;
    assert!(s.dropped_total > 0);
    assert_eq!(s.pause_frames, 0, "the buffer never holds more than it can");
    assert_eq!(s.generated_total, s.delivered_total + s.dropped_total + s.in_flight_end);
    assert_eq!(s.in_flight_end, 0, "the run ends when every packet is delivered or lost");
    assert_eq!(r.links.iter().map(|l| l.dropped).sum::<u64>(), s.dropped_total);
    assert!(r.links.iter().all(|l| l.dropped == 0 || l.class == 1), "only local links overflow");
    assert!(!r.completion.as_ref().unwrap().all_delivered);
    // Nothing is delivered twice.
    let mut ids: Vec<u64> = r.deliveries.iter().map(|d| d.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len() as u64, s.delivered_total);
}

/// [`HYPERX`] with long links, loaded past saturation.
fn saturated_hyperx(flow: &str, extra: &[&str]) -> Simulation {
    let mut overrides = vec![
        flow,
        "topology.link_latency=12",
        "router.input_buffer=128",
        "router.output_buffer=32",
        "traffic.load=1.0",
        "simulation.warmup=0",
    ];
    overrides.extend_from_slice(extra);
    build(HYPERX, &overrides)
}

#[test]
fn default_pfc_thresholds_lose_nothing_past_saturation() {
    for extra in [&[][..], &["traffic.pattern=\"hot_spot\"", "traffic.fraction=0.3"], &["router.vcs=4"]] {
        let r = run(&saturated_hyperx("router.flow_control=pfc", extra), 1);
        let s = &r.summary;
        assert!(s.pause_frames > 10, "{extra:?}: PFC should pause past saturation: {s:?}");
        assert_eq!(s.dropped_total, 0, "{extra:?}");
        assert_eq!(s.generated_total, s.delivered_total + s.in_flight_end, "{extra:?}");
    }
    // The default leaves 48 phits above xoff here (2 packets of 8, and 32 cycles of the
    // round trip: 2 x 12 of latency, 8 for the reverse frame); with 16 packets are lost.
    let r =
        run(&saturated_hyperx("router.flow_control=pfc", &["router.pfc.xoff=112", "router.pfc.xon=96"]), 1);
    assert!(r.summary.dropped_total > 0 && r.summary.pause_frames > 0, "{:?}", r.summary);
}

#[test]
fn without_flow_control_full_buffers_drop() {
    let r = run(&saturated_hyperx("router.flow_control=none", &[]), 1);
    let s = &r.summary;
    assert!(s.dropped_total > 0);
    assert!(s.dropped_load > 0.0);
    assert_eq!(s.pause_frames, 0);
    assert_eq!(s.generated_total, s.delivered_total + s.dropped_total + s.in_flight_end);
    // The whole run is measured (no warm-up): every drop is on its link.
    assert_eq!(r.links.iter().map(|l| l.dropped).sum::<u64>(), s.dropped_total);
    // No sender ever waits for room downstream.
    assert!(r.links.iter().all(|l| l.stall_cycles == 0));
}

#[test]
fn flow_control_results_do_not_depend_on_the_partitioning() {
    for flow in ["router.flow_control=pfc", "router.flow_control=none"] {
        let sim = saturated_hyperx(flow, &["simulation.cycles=4000"]);
        let one = run(&sim, 1);
        assert!(one.summary.pause_frames + one.summary.dropped_total > 0, "{flow}: nothing to compare");
        for parts in [2, 3, 4] {
            let r = run(&sim, parts);
            assert_eq!(
                format!("{:?}", r.summary),
                format!("{:?}", one.summary),
                "{flow}, {parts} partitions"
            );
            assert_eq!(r.links, one.links, "{flow}, {parts} partitions");
            assert_eq!(r.samples, one.samples, "{flow}, {parts} partitions");
        }
    }
}

#[test]
fn a_cyclic_routing_deadlocks_under_pfc_and_the_watchdog_names_the_paused_vcs() {
    // Dimension order on a ring without datelines: its buffer dependencies form a cycle,
    // which `xnet routes` reports and which PFC's pauses close as credits do.
    let sim = build(DEADLOCKING_RING, &["router.flow_control=pfc", "router.input_buffer=24"]);
    let r = run(&sim, 2);
    assert_eq!(r.status, Status::Deadlock);
    assert_eq!(r.summary.dropped_total, 0);
    let paused: Vec<_> = r.blocked.iter().filter(|b| b.pauses_upstream).collect();
    // Each switch's two ring inputs (ports 2 and 3) hold past xoff and pause their
    // senders, all eight switches around.
    assert!(paused.len() >= 8, "{:?}", r.blocked);
    assert!(paused.iter().all(|b| b.port >= 2 && b.wants_port >= 2), "{paused:?}");
    // The pauses never end: the longest lasts at least the watchdog's 1,000 cycles of
    // standstill, on ring links only.
    assert!(r.summary.longest_pause >= 1000, "{}", r.summary.longest_pause);
    assert!(r.links.iter().all(|l| l.longest_pause <= r.summary.longest_pause));
    // Without flow control the same ring drops instead, and never stops.
    let r = run(&build(DEADLOCKING_RING, &["router.flow_control=none", "simulation.cycles=20000"]), 2);
    assert_eq!(r.status, Status::Completed);
    assert!(r.summary.dropped_total > 0);
}

#[test]
fn an_application_under_pfc_completes_and_its_lost_packets_are_named() {
    // A linear gather of 8 ranks on a clique: 7 senders at once into the root's link.
    let text = format!(
        "{CLIQUE}\n[workload]\nbytes_per_phit = 16\n[[workload.jobs]]\nkind = \"collectives\"\nranks = 8\n\
         operations = [{{ collective = \"gather\", bytes = 4096, algorithm = \"linear\" }}]\n"
    );
    // Default thresholds: lossless, like credits, and the job completes.
    let r = run(&build(&text, &["router.flow_control=pfc", "router.input_buffer=32"]), 2);
    assert_eq!(r.status, Status::Completed);
    assert!(r.summary.pause_frames > 0);
    assert_eq!(r.summary.dropped_total, 0);
    // No headroom: packets are lost, the job cannot finish, and the diagnosis says why.
    let no_headroom =
        ["router.input_buffer=32", "router.pfc.xoff=32", "router.pfc.xon=16", "simulation.cycles=20000"];
    let r = run(&build(&text, &[&["router.flow_control=pfc"][..], &no_headroom].concat()), 2);
    assert_eq!(r.status, Status::Unfinished);
    assert!(r.summary.dropped_total > 0);
    let why = r.workload.as_ref().unwrap().diagnosis(r.summary.in_flight_end).unwrap();
    assert!(
        why.contains(&format!("{} packets were dropped at full buffers", r.summary.dropped_total)),
        "{why}"
    );
}

/// The error of building [`HYPERX`] with `overrides`.
fn error(overrides: &[&str]) -> String {
    common::build_error(HYPERX, overrides)
}

#[test]
fn bad_flow_control_settings_name_their_key() {
    let pfc = "router.flow_control=pfc";
    for (overrides, expected) in [
        (vec!["router.flow_control=xoff"], "router.flow_control: unknown `xoff`; known: credits, pfc, none"),
        (
            vec!["router.pfc.xoff=40"],
            "router.pfc: sets PFC's thresholds, but router.flow_control is `credits`",
        ),
        (
            vec![pfc, "router.credit_check=crossbar"],
            "router.credit_check: `crossbar` takes downstream credits",
        ),
        (vec![pfc, "router.input_buffer=24"], "router.input_buffer: PFC needs"),
        (
            vec![pfc, "router.input_buffer=128", "router.pfc.xoff=200"],
            "router.pfc.xoff: must be in 1..=router.input_buffer (128), got 200",
        ),
        (
            vec![pfc, "router.input_buffer=128", "router.pfc.xoff=40", "router.pfc.xon=40"],
            "router.pfc.xon: must be below router.pfc.xoff",
        ),
        (vec![pfc, "router.input_buffer=128", "router.pfc.xof=40"], "router.pfc.xof: unknown field `xof`"),
        (
            vec!["router.flow_control=none", "congestion.control=\"infiniband\""],
            "router.flow_control: `none` drops packets",
        ),
    ] {
        let message = error(&overrides);
        assert!(message.contains(expected), "{overrides:?}: `{message}` lacks `{expected}`");
    }
    // The headroom the message asks for is the one the defaults then leave.
    let message = error(&[pfc, "router.input_buffer=24"]);
    assert!(message.contains("`network` links"), "{message}");
}
