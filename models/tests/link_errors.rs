//! Bit errors on switch-to-switch links (`[router.link_errors]`): each bad packet is
//! replayed by its link after its serialization and the round trip of the report, so a
//! lone packet arrives late by a whole number of replays; replays happen at the rate the
//! bit error rate gives; nothing is lost; results do not depend on the partitioning; bad
//! settings name their key.

mod common;
use common::{build, run, run_recorded, HYPERX};
use xnet_models::sim::{RunResult, Simulation};
use xnet_models::topology::Shape;

/// A 3D HyperX, one VC, dimension order: a lone packet's zero-load latency is
/// `2 x 3 + hops x 4 + (hops + 1) x 3 + 5` cycles (packets of 6 phits).
const LIGHT: &str = r#"
[simulation]
cycles = 40000
seed = 11
[topology]
kind = "hyperx"
sides = [4, 3, 5]
endpoints_per_switch = 2
terminal_latency = 3
link_latency = 4
[router]
vcs = 1
packet_size = 6
input_buffer = 12
output_buffer = 12
router_delay = 3
[router.link_errors]
bit_error_rate = 1e-4
bits_per_phit = 128
replay_delay = 5
[routing]
algorithm = "dor"
[traffic]
pattern = "uniform"
load = 0.002
"#;

/// Probability that a packet of `phits` phits of `bits` bits has a bad bit at `ber`.
fn packet_error(ber: f64, bits: f64, phits: f64) -> f64 {
    1.0 - (1.0 - ber).powf(bits * phits)
}

#[test]
fn a_bad_packet_arrives_late_by_whole_replays() {
    let mut sim = build(LIGHT, &[]);
    let Shape::HyperX(shape) = sim.net.shape.clone() else { unreachable!() };
    let net = sim.net.clone();
    let r = run_recorded(&mut sim, 1);
    // A replay costs the bad copy's 6 cycles, the report's and the replay's way back and
    // forth over the link (2 x 4) and the sender's delay (5).
    let replay = 6 + 2 * 4 + 5;
    let (mut exact, mut late, mut hop_sum) = (0usize, 0usize, 0u64);
    for d in &r.deliveries {
        let (a, b) = (net.endpoint_location[d.src as usize].0, net.endpoint_location[d.dst as usize].0);
        let hops = (0..3).filter(|&k| shape.coord(a, k) != shape.coord(b, k)).count() as u64;
        let zero_load = 2 * 3 + hops * 4 + (hops + 1) * 3 + 5;
        let got = d.delivered - d.injected;
        assert!(got >= zero_load, "{d:?} faster than {zero_load}");
        let extra = got - zero_load;
        if extra.is_multiple_of(replay) {
            exact += 1;
            late += usize::from(extra > 0);
        }
        hop_sum += hops;
    }
    let n = r.deliveries.len();
    assert!(n > 1000, "{n} packets");
    assert!(exact as f64 > 0.97 * n as f64, "only {exact} of {n} packets late by whole replays");
    // About one packet-hop in 13 goes wrong (1 - (1 - 1e-4)^(6 x 128)).
    let p = packet_error(1e-4, 128.0, 6.0);
    let expected = p * hop_sum as f64;
    assert!(
        late as f64 > 0.8 * expected && (late as f64) < 1.2 * expected,
        "{late} late, {expected:.0} expected"
    );
    // Every packet generated arrives: replays lose nothing.
    assert_eq!(r.summary.generated_total, r.summary.delivered_total + r.summary.in_flight_end);
}

/// [`HYPERX`] at a moderate load with errors on every link.
fn loaded(ber: &str, extra: &[&str]) -> Simulation {
    let rate = format!("router.link_errors.bit_error_rate={ber}");
    let mut overrides = vec![rate.as_str(), "traffic.load=0.4", "simulation.warmup=0"];
    overrides.extend_from_slice(extra);
    build(HYPERX, &overrides)
}

fn replays_per_transmission(r: &RunResult) -> f64 {
    let transmissions: u64 = r.links.iter().map(|l| l.phits / 8).sum();
    r.summary.link_retries as f64 / transmissions as f64
}

#[test]
fn replays_follow_the_bit_error_rate_and_lose_nothing() {
    for ber in [1e-5, 1e-4] {
        let r = run(&loaded(&ber.to_string(), &[]), 1);
        // Replays of a packet are geometric: p / (1 - p) per transmission on average.
        let p = packet_error(ber, 128.0, 8.0);
        let (got, want) = (replays_per_transmission(&r), p / (1.0 - p));
        assert!((got / want - 1.0).abs() < 0.1, "BER {ber}: {got:.5} replays per packet, {want:.5} expected");
        assert_eq!(r.links.iter().map(|l| l.retries).sum::<u64>(), r.summary.link_retries);
        assert_eq!(r.summary.generated_total, r.summary.delivered_total + r.summary.in_flight_end);
        assert_eq!(r.summary.dropped_total, 0);
    }
    // A rate of zero is no errors at all.
    let none = run(&build(HYPERX, &["traffic.load=0.4", "simulation.warmup=0"]), 1);
    let zero = run(&loaded("0.0", &[]), 1);
    assert_eq!(format!("{:?}", zero.summary), format!("{:?}", none.summary));
}

#[test]
fn errors_by_class_touch_only_their_class() {
    let text = common::DRAGONFLY;
    let r =
        run(&build(text, &["router.link_errors.bit_error_rate={ global = 1e-4 }", "simulation.warmup=0"]), 1);
    assert!(r.summary.link_retries > 0);
    for l in &r.links {
        assert!(l.retries == 0 || l.class == 2, "{l:?}: only global links (class 2) have errors");
    }
}

#[test]
fn link_error_results_do_not_depend_on_the_partitioning() {
    for extra in [&[][..], &["router.flow_control=pfc", "router.input_buffer=64"]] {
        let sim = loaded("1e-4", extra);
        let one = run(&sim, 1);
        assert!(one.summary.link_retries > 0);
        for parts in [2, 3, 4] {
            let r = run(&sim, parts);
            assert_eq!(
                format!("{:?}", r.summary),
                format!("{:?}", one.summary),
                "{extra:?}, {parts} partitions"
            );
            assert_eq!(r.links, one.links, "{extra:?}, {parts} partitions");
        }
    }
}

/// The error of building [`HYPERX`] with `overrides`.
fn error(overrides: &[&str]) -> String {
    common::build_error(HYPERX, overrides)
}

#[test]
fn bad_link_error_settings_name_their_key() {
    for (overrides, expected) in [
        (vec!["router.link_errors.bit_error_rate=0.01"], "router.link_errors.bit_error_rate: must be in 0..=0.001, got 0.01"),
        (vec!["router.link_errors.bit_error_rate=\"high\""], "router.link_errors.bit_error_rate: must be a number, got string"),
        (
            vec!["router.link_errors.bit_error_rate={ global = 1e-9 }"],
            "router.link_errors.bit_error_rate.global: no switch-to-switch links of class `global`; this network's: network",
        ),
        (
            vec!["router.link_errors.bit_error_rate={ terminal = 1e-9 }"],
            "router.link_errors.bit_error_rate.terminal: the `terminal` links lead to endpoints",
        ),
        (vec!["router.link_errors.bit_error_rate=1e-9", "router.link_errors.bits_per_phit=0"], "router.link_errors.bits_per_phit: must be in 1..=65536, got 0"),
        (vec!["router.link_errors.replay_delay=3"], "router.link_errors: missing field `bit_error_rate`"),
    ] {
        let message = error(&overrides);
        assert!(message.contains(expected), "{overrides:?}: `{message}` lacks `{expected}`");
    }
}
