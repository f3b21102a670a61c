//! Zero-load latency equals the analytic value. A packet crossing `h` switch-to-switch
//! links (so `h + 1` switches) takes `2 * terminal + sum(link latencies) +
//! (h + 1) * router_delay + (packet_size - 1)` cycles from the head leaving the source to
//! the tail reaching the destination; store-and-forward switches add `packet_size - 1`
//! each.

mod common;
use common::{build, check_zero_load as check};
use xnet_models::sim::{RunResult, Simulation};
use xnet_models::topology::Shape;

fn run_light(sim: &mut Simulation) -> RunResult {
    sim.record_deliveries = true;
    let plan = sim.plan(1).unwrap();
    sim.run(sim.config.traffic.load, &plan.assignment, &mut |_| {}, None).unwrap()
}

#[test]
fn hyperx_dor_zero_load_latency() {
    let text = r#"
        [simulation]
        cycles = 20000
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
        [routing]
        algorithm = "dor"
        [traffic]
        pattern = "uniform"
        load = 0.002
    "#;
    // The formula holds for every router option (none adds delay to a lone packet).
    let options: [&[&str]; 12] = [
        &["router.flow_control=pfc", "router.input_buffer=64"],
        &["router.flow_control=none"],
        &["router.vcs=2", "router.crossbar=output_queued"],
        &["router.vcs=2", "router.credit_check=crossbar"],
        &[],
        &[
            "router.speedup=1",
            "router.injection_vc=zero",
            "router.ejection_vc=zero",
            "router.output_buffer=16",
        ],
        &["router.vcs=2", "router.allocator=output_first", "router.allocator_iterations=3"],
        &["router.vcs=2", "router.crossbar=vc"],
        &["router.vcs=2", "router.injection_vc=any"],
        &["router.vcs=2", "router.reselect=true"],
        &["router.source_queue=2"],
        &[
            "router.vcs=2",
            "router.crossbar=vc",
            "router.injection_vc=any",
            "router.reselect=true",
            "router.arbitration=random",
            "router.ejection_vc=any",
        ],
    ];
    // Store-and-forward: every switch waits for the tail, 5 cycles after the head.
    let store_and_forward: &[&str] = &["router.switching=store_and_forward"];
    for (overrides, wait) in options.iter().map(|o| (*o, 0)).chain([(store_and_forward, 5)]) {
        let mut sim = build(text, overrides);
        let Shape::HyperX(shape) = sim.net.shape.clone() else { unreachable!() };
        let net = sim.net.clone();
        let r = run_light(&mut sim);
        check(&r, |d| {
            let (a, b) = (net.endpoint_location[d.src as usize].0, net.endpoint_location[d.dst as usize].0);
            let hops = (0..3).filter(|&k| shape.coord(a, k) != shape.coord(b, k)).count() as u64;
            (hops as u16, 2 * 3 + hops * 4 + (hops + 1) * (3 + wait) + 5)
        });
    }
}

#[test]
fn torus_dor_zero_load_latency() {
    let text = r#"
        [simulation]
        cycles = 20000
        [topology]
        kind = "torus"
        sides = [6, 5]
        endpoints_per_switch = 2
        link_latency = 2
        [router]
        vcs = 2
        packet_size = 4
        input_buffer = 8
        output_buffer = 8
        router_delay = 1
        [routing]
        algorithm = "dor"
        [traffic]
        pattern = "uniform"
        load = 0.002
    "#;
    let mut sim = build(text, &[]);
    let Shape::Torus(shape) = sim.net.shape.clone() else { unreachable!() };
    let net = sim.net.clone();
    let r = run_light(&mut sim);
    check(&r, |d| {
        let (a, b) = (net.endpoint_location[d.src as usize].0, net.endpoint_location[d.dst as usize].0);
        let hops: u32 = (0..2)
            .map(|k| {
                let (x, y, n) = (shape.coord(a, k), shape.coord(b, k), shape.sides[k]);
                let f = (y + n - x) % n;
                f.min(n - f)
            })
            .sum();
        (hops as u16, 2 + hops as u64 * 2 + (hops as u64 + 1) + 3)
    });
}

#[test]
fn dragonfly_min_zero_load_latency() {
    let text = r#"
        [simulation]
        cycles = 20000
        [topology]
        kind = "dragonfly"
        p = 2
        a = 4
        h = 2
        arrangement = "palmtree"
        terminal_latency = 1
        local_latency = 3
        global_latency = 17
        [router]
        vcs = 2
        packet_size = 8
        input_buffer = 64
        output_buffer = 16
        router_delay = 2
        [routing]
        algorithm = "dragonfly_min"
        [traffic]
        pattern = "uniform"
        load = 0.002
    "#;
    let mut sim = build(text, &[]);
    let Shape::Dragonfly(df) = sim.net.shape.clone() else { unreachable!() };
    let net = sim.net.clone();
    let r = run_light(&mut sim);
    check(&r, |d| {
        let (a, b) = (net.endpoint_location[d.src as usize].0, net.endpoint_location[d.dst as usize].0);
        let (locals, globals) = if a == b {
            (0, 0)
        } else if df.group(a) == df.group(b) {
            (1, 0)
        } else {
            let (out_gw, _) = df.gateway(df.group(a), df.group(b));
            let (in_gw, _) = df.gateway(df.group(b), df.group(a));
            (u64::from(out_gw != a) + u64::from(in_gw != b), 1)
        };
        let hops = locals + globals;
        (hops as u16, 2 + locals * 3 + globals * 17 + (hops + 1) * 2 + 7)
    });
}
