//! The same config and seed give identical results for any number of partitions.

mod common;
use common::*;
use xnet_models::sim::RunResult;

/// Everything a run produces except wall-clock timings and engine counters.
fn fingerprint(r: &RunResult) -> String {
    format!(
        "{:?}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}|{}",
        r.status,
        r.time,
        r.summary,
        r.latency,
        r.network_latency,
        r.hops,
        r.endpoint_generated,
        r.endpoint_accepted,
        r.links,
        r.vc_phits,
        r.samples,
        r.resident_end,
        r.on_wires_end
    )
}

fn same_for_all_partitions(text: &str, overrides: &[&str]) {
    let sim = build(text, overrides);
    let reference = fingerprint(&run(&sim, 1));
    for parts in [2, 3, 4] {
        assert_eq!(fingerprint(&run(&sim, parts)), reference, "{parts} partitions differ from 1");
    }
}

#[test]
fn dragonfly_ugal_is_deterministic() {
    same_for_all_partitions(DRAGONFLY, &["traffic.load=0.5"]);
}

#[test]
fn dragonfly_par_adversarial_is_deterministic() {
    same_for_all_partitions(
        DRAGONFLY,
        &[
            "routing.algorithm=dragonfly_par",
            "router.vcs=4",
            "traffic.pattern=group_shift",
            "traffic.load=0.3",
        ],
    );
}

#[test]
fn dragonfly_routings_reading_remote_state_are_deterministic_when_it_crosses_partitions() {
    // UGAL-G and piggybacking read what the other routers of the source group reported
    // over the local links, Q-adaptive what its neighbours measured. Partitioned by groups
    // the local reports stay inside a partition; dealt out router by router, every report
    // crosses one, and the results must not change.
    for algorithm in ["dragonfly_ugal_g", "dragonfly_pb", "dragonfly_q"] {
        let sim = build(
            DRAGONFLY,
            &[
                &format!("routing.algorithm={algorithm}"),
                "router.vcs=4",
                "traffic.pattern=group_shift",
                "traffic.load=0.35",
            ],
        );
        let reference = fingerprint(&run(&sim, 1));
        for parts in [2, 3, 4] {
            assert_eq!(
                fingerprint(&run(&sim, parts)),
                reference,
                "{algorithm}: {parts} partitions differ from 1"
            );
            let dealt: Vec<u32> = (0..sim.net.num_switches() as u32).map(|s| s % parts).collect();
            let r = sim.run(sim.config.traffic.load, &dealt, &mut |_| {}, None).expect("run");
            assert_eq!(fingerprint(&r), reference, "{algorithm}: {parts} partitions, routers dealt out");
        }
    }
}

#[test]
fn dragonfly_imb_adversarial_is_deterministic() {
    same_for_all_partitions(
        DRAGONFLY,
        &[
            "routing.algorithm=dragonfly_imb",
            "router.vcs=4",
            "traffic.pattern=group_shift",
            "traffic.load=0.3",
        ],
    );
}

#[test]
fn dragonfly_ofar_on_its_escape_is_deterministic() {
    same_for_all_partitions(
        DRAGONFLY,
        &[
            "routing.algorithm=dragonfly_ofar",
            "router.vcs=3",
            "routing.vc_policy=any",
            "routing.escape_vcs=1",
            "traffic.pattern=group_shift",
            "traffic.load=0.3",
        ],
    );
}

#[test]
fn dragonfly_routings_around_failed_global_links_are_deterministic() {
    for (algorithm, vcs) in [("dragonfly_min", 3), ("dragonfly_par", 4), ("dragonfly_ofar", 7)] {
        same_for_all_partitions(
            DRAGONFLY,
            &[
                &format!("routing.algorithm={algorithm}"),
                &format!("router.vcs={vcs}"),
                "topology.failed_links=6",
                "topology.failed_link_class=\"global\"",
                "traffic.load=0.2",
            ],
        );
    }
}

#[test]
fn dragonfly_par_through_intermediate_routers_is_deterministic() {
    same_for_all_partitions(
        DRAGONFLY,
        &[
            "routing.algorithm=dragonfly_par",
            "routing.dragonfly_par.intermediate=router",
            "router.vcs=5",
            "traffic.pattern=group_shift",
            "traffic.load=0.3",
        ],
    );
}

#[test]
fn dragonfly_par_with_a_fallback_on_a_reselecting_router_is_deterministic() {
    // Decisions made again every cycle a head waits, on CAMINOS's router.
    same_for_all_partitions(
        DRAGONFLY,
        &[
            "routing.algorithm=dragonfly_par",
            "routing.dragonfly_par.fallback=true",
            "router.preset=\"caminos\"",
            "router.vcs=4",
            "traffic.pattern=group_shift",
            "traffic.load=0.3",
        ],
    );
}

#[test]
fn dragonfly_valiant_adversarial_is_deterministic() {
    same_for_all_partitions(
        DRAGONFLY,
        &["routing.algorithm=dragonfly_valiant", "traffic.pattern=group_shift"],
    );
}

#[test]
fn rrg_adaptive_is_deterministic() {
    same_for_all_partitions(RRG, &["traffic.load=0.7"]);
}

#[test]
fn hyperx_is_deterministic() {
    same_for_all_partitions(HYPERX, &["traffic.load=0.6"]);
}

#[test]
fn torus_is_deterministic() {
    same_for_all_partitions(TORUS, &["traffic.pattern=random_permutation"]);
}

#[test]
fn another_seed_gives_other_results() {
    let a = fingerprint(&run(&build(RRG, &[]), 1));
    let b = fingerprint(&run(&build(RRG, &["simulation.seed=12"]), 1));
    assert_ne!(a, b);
}

#[test]
fn escape_subnetwork_is_deterministic() {
    // Heads blocked in the routing VCs are re-decided every cycle: still independent of
    // the partitioning, also with faults.
    same_for_all_partitions(
        TORUS,
        &[
            "routing.algorithm=minimal",
            "routing.vc_policy=any",
            "routing.escape_vcs=1",
            "topology.failed_links=3",
            "traffic.load=0.9",
        ],
    );
}

#[test]
fn nue_is_deterministic() {
    same_for_all_partitions(RRG, &["routing.algorithm=nue", "traffic.load=0.6"]);
}
