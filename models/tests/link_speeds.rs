//! Links of different speeds (`topology.link_speeds`): exact zero-load times on paths of
//! mixed speeds, messages at the pace of their slowest link, throughput bounded by each
//! link's speed, the same results on 1 and 2 partitions, and clear errors.
//!
//! A packet of `S` phits holds a link of speed `r` for `s = ceil(S / r)` cycles. Cut-through
//! lets its head go on as soon as it is routed, except onto a faster link: there it waits
//! until its tail will not underrun, `s_in - s_out` cycles. So a lone packet over links of
//! serializations `s_0 .. s_k` takes `sum(latencies) + switches x router_delay + sum_i
//! max(0, s_(i-1) - s_i) + s_k - 1` cycles, head out to tail in: `s_max - 1` on paths whose
//! links get slower, then faster (NVLink, NIC, fabric, NIC, NVLink).

mod common;
use common::{build, check_zero_load as check, run, run_recorded as run_light, speed_cost, CLIQUE};
use xnet_models::config::Config;
use xnet_models::sim::{Simulation, Status};
use xnet_models::topology::Shape;

const DRAGONFLY: &str = r#"
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

/// Zero-load latency of every packet on the Dragonfly with its three classes at `speeds`
/// (terminal, local, global), on 1 and 2 partitions, which give the same deliveries.
fn dragonfly_zero_load(speeds: &str, serializations: [u64; 3]) {
    let text = DRAGONFLY
        .replace("global_latency = 17", &format!("global_latency = 17\nlink_speeds = {speeds}"))
        // Loads are against the endpoints' links: slower ones offer fewer packets.
        .replace("cycles = 20000", "cycles = 60000");
    let mut sim = build(&text, &[]);
    let Shape::Dragonfly(df) = sim.net.shape.clone() else { unreachable!() };
    let net = sim.net.clone();
    let [t, l, g] = serializations;
    let one = run_light(&mut sim, 1);
    check(&one, |d| {
        let (a, b) = (net.endpoint_location[d.src as usize].0, net.endpoint_location[d.dst as usize].0);
        let path: Vec<u64> = if a == b {
            vec![t, t]
        } else if df.group(a) == df.group(b) {
            vec![t, l, t]
        } else {
            let (out_gw, _) = df.gateway(df.group(a), df.group(b));
            let (in_gw, _) = df.gateway(df.group(b), df.group(a));
            let mut p = vec![t];
            p.extend((out_gw != a).then_some(l));
            p.push(g);
            p.extend((in_gw != b).then_some(l));
            p.push(t);
            p
        };
        let locals = path.iter().filter(|&&s| s == l).count() as u64;
        let globals = u64::from(path.contains(&g) && g != t && g != l);
        let hops = path.len() as u64 - 2;
        let latency = 2 + locals * 3 + globals * 17 + (hops + 1) * 2 + speed_cost(&path);
        (hops as u16, latency)
    });
    let two = run_light(&mut sim, 2);
    assert_eq!(one.deliveries, two.deliveries, "1 and 2 partitions differ");
}

#[test]
fn zero_load_on_a_path_that_gets_faster_then_slower_waits_at_each_faster_link() {
    // Packets of 8 phits: terminal at 1 (8 cycles), local at 4 (2), global at 1/2 (16).
    dragonfly_zero_load(r#"{ local = 4, global = "1/2" }"#, [8, 2, 16]);
}

#[test]
fn zero_load_with_the_endpoints_slowest_is_cut_through_at_their_pace() {
    // Terminal at 1/2 (16 cycles), local at 1 (8), global at 2.5 (4): the endpoint's link
    // is the slowest, the packet waits once, at the first switch.
    dragonfly_zero_load(r#"{ terminal = 0.5, local = 1, global = 2.5 }"#, [16, 8, 4]);
}

/// One switch-to-switch hop of [`CLIQUE`] without the speeds' part: 2 terminal links of 3,
/// a link of 5, 2 router delays of 2.
const L: u64 = 2 * 3 + 5 + 2 * 2;

/// [`CLIQUE`] with its link classes (`terminal`, `network`) at `speeds` (a TOML table).
fn clique(speeds: &str) -> String {
    CLIQUE.replace("link_latency = 5\n", &format!("link_latency = 5\nlink_speeds = {speeds}\n"))
}

/// Two ranks of [`CLIQUE`] exchange `packets` full packets (4 phits of 16 bytes) each way
/// at once with the links at `speeds`, on `parts` partitions; the completion time.
fn exchange(speeds: &str, packets: u64, parts: u32) -> u64 {
    let text = format!(
        "{}\n[workload]\nbytes_per_phit = 16\neager_limit = 1000000\n\
         [[workload.jobs]]\nkind = \"butterfly\"\nranks = 2\nmessage_bytes = {}\n",
        clique(speeds),
        packets * 64
    );
    let sim = build(&text, &[]);
    let r = run(&sim, parts);
    assert_eq!(r.status, Status::Completed);
    r.workload.as_ref().unwrap().jobs[0].completion_time.expect("finished")
}

#[test]
fn a_message_streams_at_its_slowest_link_whichever_segment_it_is() {
    for packets in [1, 2, 7] {
        for parts in [1, 2] {
            // Uniform: each packet 4 cycles on every link.
            assert_eq!(exchange("{}", packets, parts), L + 3 + 4 * (packets - 1));
            // Fast endpoint links (as NVLink into a switch), a slow fabric: [1, 8, 1].
            let fast_ends = exchange(r#"{ terminal = 4, network = "1/2" }"#, packets, parts);
            assert_eq!(fast_ends, L + speed_cost(&[1, 8, 1]) + 8 * (packets - 1), "{packets} packets");
            // Slow endpoint links, a fast fabric: [8, 1, 8]: the packet waits for its tail
            // before the fast link, and streams at the endpoints' pace.
            let slow_ends = exchange(r#"{ terminal = 0.5, network = 4 }"#, packets, parts);
            assert_eq!(slow_ends, L + speed_cost(&[8, 1, 8]) + 8 * (packets - 1), "{packets} packets");
        }
    }
}

#[test]
fn a_link_carries_its_speed_and_no_more() {
    // Every endpoint of an 8-switch clique sends to the endpoint 3 switches on (tornado) at
    // full load against its own link (speed 2): the one network link of its route, at 1/2,
    // carries a quarter of that, so the accepted load per endpoint, against its link, is 1/4.
    let text =
        clique(r#"{ terminal = 2, network = "1/2" }"#) + "[traffic]\npattern = \"tornado\"\nload = 1.0\n";
    let sim = build(&text, &["simulation.cycles=20000", "simulation.warmup=5000"]);
    let r = run(&sim, 1);
    let measured = (20000 - 5000) as f64;
    // Accepted phits per endpoint per cycle, then against the endpoint's speed.
    let accepted = r.endpoint_accepted.iter().sum::<u64>() as f64 / 8.0 / measured / 2.0;
    assert!((accepted - 0.25).abs() < 0.01, "accepted {accepted:.4} of the endpoints' speed, expected 0.25");
    // The network links ran full: half a phit a cycle each on the 8 links used.
    let busy: Vec<f64> = r.links.iter().filter(|l| l.phits > 0).map(|l| l.phits as f64 / measured).collect();
    assert_eq!(busy.len(), 8, "{busy:?}");
    assert!(busy.iter().all(|&b| (b - 0.5).abs() < 0.01), "{busy:?}");
}

#[test]
fn bad_speeds_name_the_key_and_what_is_allowed() {
    let err = |speeds: &str, sets: &[&str]| {
        let text = clique(speeds) + "[traffic]\npattern = \"uniform\"\nload = 0.1\n";
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let cfg = Config::parse(&text, &sets).map_err(|e| e.to_string());
        match cfg.and_then(|c| Simulation::build(c).map(|_| ()).map_err(|e| e.to_string())) {
            Ok(()) => panic!("{speeds} was accepted"),
            Err(e) => e,
        }
    };
    let e = err("{ global = 2 }", &[]);
    assert!(e.contains("topology.link_speeds.global") && e.contains("terminal, network"), "{e}");
    let e = err("{ network = 0 }", &[]);
    assert!(e.contains("topology.link_speeds.network") && e.contains("1/1024 to 1024"), "{e}");
    let e = err(r#"{ network = "two" }"#, &[]);
    assert!(e.contains("topology.link_speeds.network"), "{e}");
    let e = err("{ network = 0.3333 }", &[]);
    assert!(e.contains("\"p/q\""), "{e}");
    let e = err("2", &[]);
    assert!(e.contains("topology.link_speeds") && e.contains("table"), "{e}");
    // Buffers scale with speed and must still fit 16 bits.
    let e = err("{ network = 1024 }", &["router.input_buffer=1024"]);
    assert!(e.contains("topology.link_speeds.network") && e.contains("router.input_buffer"), "{e}");
}
