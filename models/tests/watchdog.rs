//! The deadlock watchdog: DOR on a ring with a single VC (no dateline) deadlocks at high
//! load; the run stops with status "deadlock", lists the blocked channels and keeps the
//! statistics gathered so far.

mod common;
use common::{build, DEADLOCKING_RING as RING};
use xnet_models::sim::Status;

#[test]
fn ring_without_dateline_deadlocks_and_is_caught() {
    let sim = build(RING, &[]);
    let plan = sim.plan(2).unwrap();
    let r = sim.run(1.0, &plan.assignment, &mut |_| {}, None).unwrap();
    assert_eq!(r.status, Status::Deadlock);
    assert!(r.time < 50000, "stopped at {}", r.time);
    assert!(!r.blocked.is_empty());
    // Network inputs (ports 2 and 3) wait for network outputs, which form the cycle.
    assert!(r.blocked.iter().any(|b| b.port >= 2 && b.wants_port >= 2));
    assert!(r.blocked.iter().all(|b| b.wants_port != u16::MAX));
    // What was gathered before the deadlock is kept.
    assert!(r.summary.delivered_total > 0);
    assert_eq!(r.samples.last().unwrap().time, r.time);
    assert_eq!(r.summary.generated_total, r.summary.delivered_total + r.resident_end + r.on_wires_end);
}

#[test]
fn the_same_ring_with_datelines_does_not_deadlock() {
    let sim = build(RING, &["router.vcs=2", "routing.vc_policy=routing", "simulation.cycles=20000"]);
    let plan = sim.plan(2).unwrap();
    let r = sim.run(1.0, &plan.assignment, &mut |_| {}, None).unwrap();
    assert_eq!(r.status, Status::Completed);
}
