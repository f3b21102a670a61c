//! Reordering at the endpoints (`simulation.reordering`): a flow that keeps one path and
//! one queue per hop arrives in order, spraying does not; what is measured does not
//! depend on the partitioning, and nothing is reported when it is not asked for.

mod common;
use common::{build, run, HYPERX};

/// [`HYPERX`] under minimal routing with the ladder VC policy (one VC per hop, so a flow's
/// packets share each hop's queue), injected and ejected on VC 0, at a load that keeps
/// packets of a flow in flight together.
fn sprayed_or_hashed(selection: &str, extra: &[&str]) -> xnet_models::sim::RunResult {
    let selection = format!("routing.selection={selection}");
    let mut overrides = vec![
        "simulation.reordering=true",
        "routing.algorithm=minimal",
        selection.as_str(),
        "router.injection_vc=zero",
        "router.ejection_vc=zero",
        "traffic.load=0.6",
        "simulation.cycles=6000",
    ];
    overrides.extend_from_slice(extra);
    run(&build(HYPERX, &overrides), 1)
}

#[test]
fn a_hashed_flow_arrives_in_order_and_a_sprayed_one_does_not() {
    let ecmp = sprayed_or_hashed("ecmp", &[]);
    assert!(ecmp.summary.measured_delivered > 10_000);
    assert_eq!(ecmp.summary.reordered_share, 0.0, "one path, FIFO queues: {:?}", ecmp.summary);
    assert_eq!(ecmp.summary.reorder_late_max, 0);
    assert!(ecmp.summary.reorder_late_mean.is_nan());
    let sprayed = sprayed_or_hashed("adaptive", &[]);
    let s = &sprayed.summary;
    assert!(s.reordered_share > 0.0, "{s:?}");
    // A reordered packet left at least a cycle before the one that overtook it.
    assert!(s.reorder_late_mean >= 1.0 && s.reorder_late_max as f64 >= s.reorder_late_mean, "{s:?}");
    let series: u64 = sprayed.samples.iter().map(|x| x.counters.reordered_packets).sum();
    assert!(series > 0 && series as f64 >= s.reordered_share * s.measured_delivered as f64 * 0.99);
    // Injection or ejection on any VC lets packets of one flow pass each other on the
    // first or the last link.
    for any in ["router.injection_vc=any", "router.ejection_vc=any"] {
        let r = sprayed_or_hashed("ecmp", &[any]);
        assert!(r.summary.reordered_share > 0.0, "{any}");
    }
}

#[test]
fn reordering_figures_do_not_depend_on_the_partitioning() {
    let sim = build(HYPERX, &["simulation.reordering=true", "routing.algorithm=minimal", "traffic.load=0.6"]);
    let one = run(&sim, 1);
    assert!(one.summary.reordered_share > 0.0);
    for parts in [2, 3] {
        let r = run(&sim, parts);
        assert_eq!(format!("{:?}", r.summary), format!("{:?}", one.summary), "{parts} partitions");
    }
}

#[test]
fn without_the_key_nothing_is_reported() {
    let r = run(&build(HYPERX, &["routing.algorithm=minimal", "traffic.load=0.6"]), 1);
    assert!(r.summary.reordered_share.is_nan() && r.summary.reorder_late_mean.is_nan());
    assert_eq!(r.summary.reorder_late_max, 0);
}
