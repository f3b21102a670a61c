//! Router options: the source queue's cap (refused generation counted, offered load kept
//! honest), the injection VC choice (the lowest VC with credits, restricted to VC 0
//! under DAVC and to the routing's VCs below an escape subnetwork), blocked heads that
//! re-select every cycle, the per-(port, VC) and output-queued crossbars, the allocator's
//! order and iterations, random arbitration, ejection on any VC and credits taken at the
//! crossbar, each deterministic for any number of partitions, and the presets.

mod common;
use common::*;
use xnet_models::sim::RunResult;

const RRG_MINIMAL: &[&str] = &["routing.algorithm=minimal", "router.vcs=4", "simulation.cycles=4000"];

/// A plain input-queued router (speedup 1, injection and ejection on VC 0: the defaults
/// before issue 9), from which each test changes one option to see what it relieves.
const PLAIN: &[&str] = &["router.speedup=1", "router.injection_vc=zero", "router.ejection_vc=zero"];

/// `PLAIN` followed by `more`.
fn plain(more: &[&'static str]) -> Vec<&'static str> {
    [PLAIN, more].concat()
}

fn with(base: &[&str], more: &[&str]) -> Vec<String> {
    base.iter().chain(more).map(|s| s.to_string()).collect()
}

fn run_with(text: &str, overrides: &[String]) -> RunResult {
    let o: Vec<&str> = overrides.iter().map(String::as_str).collect();
    run(&build(text, &o), 2)
}

#[test]
fn a_full_source_queue_refuses_packets_and_counts_them() {
    let over = run_with(RRG, &with(RRG_MINIMAL, &["traffic.load=1.0", "router.source_queue=4"]));
    let s = &over.summary;
    assert!(s.refused_load > 0.2, "{s:?}");
    // The offered load stays what the endpoints generate, refused packets included.
    assert!((s.offered_load - 1.0).abs() < 0.03, "{s:?}");
    assert!((s.offered_load - s.refused_load - s.accepted_load).abs() < 0.03, "{s:?}");
    assert!(s.saturated, "{s:?}");
    // No queue ever holds more than 4 packets: at the end neither.
    let endpoints = over.endpoint_generated.len() as u64;
    assert!(s.source_queued_end <= 4 * endpoints, "{} queued", s.source_queued_end);
    // Nothing lost: refused packets were never generated into the network.
    assert_eq!(s.generated_total, s.delivered_total + s.in_flight_end);
    // Below saturation a queue of 20 refuses nothing, and the run equals the unbounded one.
    let light = with(RRG_MINIMAL, &["traffic.load=0.2"]);
    let capped = run_with(RRG, &[light.clone(), vec!["router.source_queue=20".to_string()]].concat());
    assert_eq!(capped.summary.refused_load, 0.0);
    assert_eq!(format!("{:?}", capped.summary), format!("{:?}", run_with(RRG, &light).summary));
}

#[test]
fn injecting_on_any_vc_keeps_zero_load_latency_and_relieves_the_injection_fifo() {
    let light = plain(&["routing.algorithm=minimal", "router.vcs=4", "traffic.load=0.02"]);
    let zero = run_with(HYPERX, &with(&light, &[]));
    let any = run_with(HYPERX, &with(&light, &["router.injection_vc=any"]));
    // At (near) zero load the VC does not matter: the latency histogram is the same.
    assert_eq!(format!("{:?}", zero.latency), format!("{:?}", any.latency));
    // Past saturation, injecting on four VCs instead of one lets more packets in.
    let past = plain(&["routing.algorithm=minimal", "router.vcs=4", "traffic.load=1.0"]);
    let zero = run_with(RRG, &with(&past, &[]));
    let any = run_with(RRG, &with(&past, &["router.injection_vc=any"]));
    assert!(
        any.summary.accepted_load > zero.summary.accepted_load,
        "any {} vs zero {}",
        any.summary.accepted_load,
        zero.summary.accepted_load
    );
    assert!(any.summary.latency_mean < zero.summary.latency_mean, "{:?} vs {:?}", any.summary, zero.summary);
}

#[test]
fn heads_that_reselect_every_cycle_keep_zero_load_latency_and_accept_more_past_saturation() {
    let light = plain(&["routing.algorithm=minimal", "router.vcs=4", "traffic.load=0.02"]);
    let commit = run_with(HYPERX, &with(&light, &[]));
    let reselect = run_with(HYPERX, &with(&light, &["router.reselect=true"]));
    assert_eq!(commit.summary.latency_max, reselect.summary.latency_max);
    assert!((commit.summary.latency_mean - reselect.summary.latency_mean).abs() < 0.5);
    let past = plain(&["routing.algorithm=minimal", "router.vcs=4", "traffic.load=1.0"]);
    let commit = run_with(RRG, &with(&past, &[]));
    let reselect = run_with(RRG, &with(&past, &["router.reselect=true"]));
    assert!(
        reselect.summary.accepted_load > commit.summary.accepted_load * 1.02,
        "reselect {} vs commit {}",
        reselect.summary.accepted_load,
        commit.summary.accepted_load
    );
    assert_eq!(
        reselect.summary.generated_total,
        reselect.summary.delivered_total + reselect.summary.in_flight_end
    );
}

#[test]
fn a_crossbar_per_port_and_vc_keeps_zero_load_latency_and_relieves_input_blocking() {
    // Zero load: one packet at a time crosses either crossbar in the same cycles.
    let light = plain(&["routing.algorithm=dragonfly_min", "traffic.load=0.01"]);
    let port = run_with(DRAGONFLY, &with(&light, &[]));
    let vc = run_with(DRAGONFLY, &with(&light, &["router.crossbar=vc"]));
    assert_eq!(port.summary.latency_max, vc.summary.latency_max);
    assert!((port.summary.latency_mean - vc.summary.latency_mean).abs() < 0.5);
    // Past saturation MIN's heads of different VCs no longer wait for one another at an
    // input port.
    let past = plain(&["routing.algorithm=dragonfly_min", "traffic.load=1.0"]);
    let port = run_with(DRAGONFLY, &with(&past, &[]));
    let vc = run_with(DRAGONFLY, &with(&past, &["router.crossbar=vc"]));
    assert!(
        vc.summary.accepted_load > port.summary.accepted_load * 1.05,
        "vc {} vs port {}",
        vc.summary.accepted_load,
        port.summary.accepted_load
    );
    assert_eq!(vc.summary.generated_total, vc.summary.delivered_total + vc.summary.in_flight_end);
}

#[test]
fn ejecting_on_any_vc_frees_inputs_sooner_past_saturation() {
    // Many endpoints per switch: heads for own endpoints queue behind one ejection buffer.
    let past =
        plain(&["routing.algorithm=minimal", "router.vcs=4", "traffic.load=1.0", "router.crossbar=vc"]);
    let zero = run_with(HYPERX, &with(&past, &[]));
    let any = run_with(HYPERX, &with(&past, &["router.ejection_vc=any"]));
    assert!(
        any.summary.accepted_load > zero.summary.accepted_load * 1.02,
        "any {} vs zero {}",
        any.summary.accepted_load,
        zero.summary.accepted_load
    );
    assert_eq!(any.summary.generated_total, any.summary.delivered_total + any.summary.in_flight_end);
}

#[test]
fn davc_and_the_escape_subnetwork_restrict_injection_to_the_vcs_a_packet_may_start_on() {
    // DAVC counts VCs up from the injection VC: packets start on VC 0 whatever the option.
    let davc = plain(&[
        "routing.algorithm=minimal",
        "routing.vc_policy=davc_np",
        "router.vcs=8",
        "traffic.load=0.6",
    ]);
    let zero = run_with(RRG, &with(&davc, &[]));
    let any = run_with(RRG, &with(&davc, &["router.injection_vc=any"]));
    assert_eq!(format!("{:?}", zero.summary), format!("{:?}", any.summary));
    // With an escape subnetwork on the last VC and one routing VC, only VC 0 is allowed.
    let escape = plain(&[
        "routing.algorithm=minimal",
        "routing.vc_policy=any",
        "routing.escape_vcs=1",
        "router.vcs=2",
        "traffic.load=0.6",
    ]);
    let zero = run_with(RRG, &with(&escape, &[]));
    let any = run_with(RRG, &with(&escape, &["router.injection_vc=any"]));
    assert_eq!(format!("{:?}", zero.summary), format!("{:?}", any.summary));
}

#[test]
fn router_options_are_deterministic_for_any_partitioning() {
    let sim = build(
        RRG,
        &[
            "routing.algorithm=minimal",
            "router.vcs=4",
            "traffic.load=0.9",
            "router.injection_vc=any",
            "router.source_queue=6",
            "router.reselect=true",
            "router.crossbar=vc",
            "router.arbitration=random",
            "router.ejection_vc=any",
        ],
    );
    let fingerprint = |r: RunResult| format!("{:?}|{:?}|{:?}|{:?}", r.summary, r.samples, r.latency, r.links);
    let reference = fingerprint(run(&sim, 1));
    assert!(
        reference.contains("refused_load: 0.") && !reference.contains("refused_load: 0.0,"),
        "{reference}"
    );
    for parts in [2, 3, 4] {
        assert_eq!(fingerprint(run(&sim, parts)), reference, "{parts} partitions");
    }
    // The per-port and output-queued crossbars' allocator options, past saturation.
    for (allocator, arbitration, crossbar, credit_check) in [
        ("output_first", "round_robin", "port", "link"),
        ("input_first", "random", "port", "crossbar"),
        ("input_first", "round_robin", "output_queued", "crossbar"),
    ] {
        let sim = build(
            DRAGONFLY,
            &[
                "routing.algorithm=dragonfly_min",
                "traffic.load=1.0",
                &format!("router.allocator={allocator}"),
                "router.allocator_iterations=3",
                &format!("router.arbitration={arbitration}"),
                &format!("router.crossbar={crossbar}"),
                &format!("router.credit_check={credit_check}"),
            ],
        );
        let reference = fingerprint(run(&sim, 1));
        for parts in [2, 3] {
            assert_eq!(fingerprint(run(&sim, parts)), reference, "{allocator}, {parts} partitions");
        }
    }
}

#[test]
fn allocator_iterations_match_more_past_saturation_and_conserve_packets() {
    // A plain router whose inputs hold heads for several outputs: later iterations serve
    // the inputs that lost the first one's output arbitration, and output-first lets every
    // output choose among all its requests.
    let past = plain(&["routing.algorithm=minimal", "router.vcs=4", "traffic.load=1.0"]);
    let one = run_with(RRG, &with(&past, &[]));
    for (allocator, iterations) in [("input_first", "3"), ("output_first", "1"), ("output_first", "3")] {
        let other = run_with(
            RRG,
            &with(
                &past,
                &[
                    &format!("router.allocator={allocator}"),
                    &format!("router.allocator_iterations={iterations}"),
                ],
            ),
        );
        let s = &other.summary;
        assert_eq!(s.generated_total, s.delivered_total + s.in_flight_end, "{allocator} x{iterations}");
        // Measured: +2.6 % (input-first x3), +1.4 % (output-first x1), +3.0 % (x3).
        assert!(
            s.accepted_load > one.summary.accepted_load * 1.005,
            "{allocator} x{iterations}: accepted {} vs {} with one input-first pass",
            s.accepted_load,
            one.summary.accepted_load
        );
    }
}

#[test]
fn bad_router_options_name_the_key_and_the_choices() {
    let o = ["router.injection_vc=sideways".to_string()];
    let e = xnet_models::config::Config::parse(RRG, &o).unwrap_err();
    assert_eq!(e.key, "router.injection_vc", "{e}");
    assert!(e.message.contains("known: zero, any"), "{e}");
    let o = ["router.allocator_iterations=0".to_string()];
    let e = xnet_models::config::Config::parse(RRG, &o).unwrap_err();
    assert_eq!(e.key, "router.allocator_iterations", "{e}");
    assert!(e.message.contains("1..=8"), "{e}");
    let o = ["router.allocator=wavefront".to_string()];
    let e = xnet_models::config::Config::parse(RRG, &o).unwrap_err();
    assert_eq!(e.key, "router.allocator", "{e}");
    assert!(e.message.contains("known: input_first, output_first"), "{e}");
    let o = ["router.source_queue=-1".to_string()];
    let e = xnet_models::config::Config::parse(RRG, &o).unwrap_err();
    assert_eq!(e.key, "router.source_queue", "{e}");
}

#[test]
fn a_preset_fills_the_router_keys_the_config_leaves_out_and_is_spelled_out_in_the_text() {
    use xnet_models::config::Config;
    use xnet_models::router::{Arbitration, Crossbar, InjectionVc, PRESETS};
    let parse = |o: &[&str]| Config::parse(RRG, &o.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let cfg = parse(&["router.preset=caminos"]).unwrap();
    let r = &cfg.router;
    assert_eq!((r.router_delay, r.crossbar, r.arbitration), (0, Crossbar::Vc, Arbitration::Random));
    assert_eq!((r.reselect, r.injection_vc, r.source_queue), (true, InjectionVc::Any, 20));
    assert!(
        cfg.text.contains("crossbar = \"vc\"") && cfg.text.contains("preset = \"caminos\""),
        "{}",
        cfg.text
    );
    // A key the config gives wins over the preset.
    let cfg = parse(&["router.preset=caminos", "router.router_delay=2"]).unwrap();
    assert_eq!(cfg.router.router_delay, 2);
    // Every preset's values are valid router keys (on the RRG without its own packet size
    // and buffers, which a switch's preset sets).
    let bare = RRG
        .replace("packet_size = 4\n", "")
        .replace("input_buffer = 16\n", "")
        .replace("output_buffer = 8\n", "");
    for p in PRESETS {
        let o = vec![format!("router.preset={}", p.name)];
        let cfg = Config::parse(&bare, &o).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert_eq!(cfg.router.preset.as_deref(), Some(p.name));
    }
    // A switch's preset sets its MTU and header together; a packet size of the config's
    // own that leaves no room for the header is refused, naming the key.
    let e = parse(&["router.preset=slingshot"]).unwrap_err();
    assert_eq!(e.key, "router.header_phits");
    let e = parse(&["router.preset=gem5"]).unwrap_err();
    assert_eq!(e.key, "router.preset");
    assert!(e.message.contains("known: caminos, booksim"), "{e}");
}

#[test]
fn an_output_queued_switch_has_no_output_conflicts() {
    // Deep output buffers, so that room never limits: only input ports and links do.
    let past =
        plain(&["routing.algorithm=minimal", "router.vcs=4", "traffic.load=1.0", "router.output_buffer=256"]);
    let port = run_with(RRG, &with(&past, &[]));
    let queued = run_with(RRG, &with(&past, &["router.crossbar=output_queued"]));
    let s = &queued.summary;
    assert_eq!(s.generated_total, s.delivered_total + s.in_flight_end);
    // Measured: 0.662 against 0.512.
    assert!(
        s.accepted_load > port.summary.accepted_load * 1.02,
        "{} vs {}",
        s.accepted_load,
        port.summary.accepted_load
    );
}

#[test]
fn credits_taken_at_the_crossbar_keep_output_buffers_within_the_credit_loop() {
    // Deep output buffers (256 packets a VC) behind input buffers of 4 packets a VC, past
    // saturation.
    let past = plain(&[
        "routing.algorithm=minimal",
        "router.vcs=4",
        "traffic.load=1.0",
        "router.output_buffer=1024",
    ]);
    let at_link = run_with(RRG, &with(&past, &[]));
    let at_crossbar = run_with(RRG, &with(&past, &["router.credit_check=crossbar"]));
    for r in [&at_link, &at_crossbar] {
        assert_eq!(r.summary.generated_total, r.summary.delivered_total + r.summary.in_flight_end);
    }
    // What all input buffers hold: 32 switches of 5 network and 3 terminal ports, 4 VCs of
    // 16 phits, 4-phit packets.
    let input_capacity = 32 * 8 * 4 * 16 / 4;
    let in_network = |r: &RunResult| r.summary.in_flight_end - r.summary.source_queued_end;
    // Checked at the link, output buffers are storage of their own and fill up. Checked at
    // the crossbar, a packet outside an input buffer holds the credits of the one it goes
    // to (ejection buffers aside, which drain at link rate), so the network holds no more
    // than its input buffers. Measured: 6,066 and 924 packets.
    assert!(in_network(&at_link) > input_capacity, "{} packets", in_network(&at_link));
    assert!(in_network(&at_crossbar) <= input_capacity, "{} packets", in_network(&at_crossbar));
    // Less queued in the network, more at the sources: network latency falls.
    assert!(
        at_crossbar.summary.network_latency_mean < at_link.summary.network_latency_mean / 2.0,
        "{} vs {}",
        at_crossbar.summary.network_latency_mean,
        at_link.summary.network_latency_mean
    );
}
