//! Throughput against theory.

mod common;
use common::*;
use xnet_models::sim::Summary;

const HYPERX_8X8: &str = r#"
[simulation]
cycles = 6000
warmup = 1000
[topology]
kind = "hyperx"
sides = [8, 8]
endpoints_per_switch = 8
[router]
vcs = 2
packet_size = 8
input_buffer = 32
output_buffer = 16
[routing]
algorithm = "minimal"
selection = "adaptive"
[traffic]
pattern = "uniform"
load = 0.3
"#;

fn summary(text: &str, overrides: &[&str]) -> Summary {
    run(&build(text, overrides), 2).summary
}

#[test]
fn hyperx_uniform_accepts_offered_load_below_saturation() {
    let low = summary(HYPERX_8X8, &["traffic.load=0.3"]);
    let mid = summary(HYPERX_8X8, &["traffic.load=0.5"]);
    let over = summary(HYPERX_8X8, &["traffic.load=1.0"]);
    for s in [&low, &mid] {
        assert!((s.accepted_load - s.offered_load).abs() < 0.02 * s.offered_load, "{s:?}");
        assert!(!s.saturated && s.backlog_growth.abs() < 0.005, "{s:?}");
    }
    // Past saturation the backlog grows by what is offered and not accepted.
    assert!(over.saturated, "{over:?}");
    let excess = 1.0 - over.accepted_load / over.offered_load;
    assert!((over.backlog_growth - excess).abs() < 0.05, "{} vs {excess}: {over:?}", over.backlog_growth);
    // Past saturation the network accepts less than offered (input-queued switches with
    // speedup 1) and latency explodes.
    assert!(over.accepted_load < 0.9, "{over:?}");
    assert!(over.accepted_load > mid.accepted_load, "{over:?}");
    assert!(over.latency_mean > 10.0 * low.latency_mean, "{} vs {}", over.latency_mean, low.latency_mean);
    // Accepted load never exceeds link rate.
    assert!(over.accepted_load <= 1.0);
}

#[test]
fn dragonfly_adversarial_min_is_capped_at_one_over_a_p() {
    // a * p = 8 endpoints of a group share the one global link to the next group.
    let s = summary(
        DRAGONFLY,
        &[
            "routing.algorithm=dragonfly_min",
            "traffic.pattern=group_shift",
            "traffic.load=0.6",
            "simulation.cycles=8000",
            "simulation.warmup=2000",
        ],
    );
    assert!((s.accepted_load - 1.0 / 8.0).abs() < 0.01, "{s:?}");
    // Offered 0.6, accepted 1/8: the backlog grows by 1 - (1/8) / 0.6 of the generation.
    assert!(s.saturated && (s.backlog_growth - (1.0 - 0.125 / 0.6)).abs() < 0.03, "{s:?}");
}

#[test]
fn dragonfly_adversarial_valiant_and_ugal_go_well_beyond_min() {
    let common = [
        "traffic.pattern=group_shift",
        "traffic.load=0.6",
        "simulation.cycles=8000",
        "simulation.warmup=2000",
    ];
    let with = |algo: &str| {
        let mut o: Vec<&str> = common.to_vec();
        let a = format!("routing.algorithm={algo}");
        o.push(&a);
        summary(DRAGONFLY, &o)
    };
    let valiant = with("dragonfly_valiant");
    let ugal = with("dragonfly_ugal");
    // Valiant's bound is 1/2 of link rate; allocation losses keep it somewhat below.
    assert!(valiant.accepted_load > 0.3 && valiant.accepted_load <= 0.5, "{valiant:?}");
    assert!(ugal.accepted_load > 0.3, "{ugal:?}");
    // Below saturation Valiant delivers what is offered.
    let light = summary(
        DRAGONFLY,
        &["routing.algorithm=dragonfly_valiant", "traffic.pattern=group_shift", "traffic.load=0.2"],
    );
    assert!((light.accepted_load - light.offered_load).abs() < 0.02 * light.offered_load, "{light:?}");
    assert!(!light.saturated, "{light:?}");
}
