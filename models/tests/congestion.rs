//! Victims and aggressors: the congestion's targets (`congestion.targets`, by default the
//! hot spot's endpoint) and what the results say of the traffic to them and of the rest.

mod common;
use common::*;
use xnet_models::config::Config;
use xnet_models::sim::Simulation;

const FAT_TREE: &str = r#"
[simulation]
cycles = 5000
warmup = 1000
seed = 4
[topology]
kind = "fat_tree"
k = 4
n = 3
[router]
vcs = 1
packet_size = 8
input_buffer = 32
output_buffer = 16
[routing]
algorithm = "up_down"
[traffic]
pattern = "uniform"
load = 0.5
"#;

#[test]
fn without_targets_every_packet_is_a_victim() {
    let s = run(&build(DRAGONFLY, &[]), 2).summary;
    assert_eq!((s.victim_offered_load, s.victim_accepted_load), (s.offered_load, s.accepted_load));
    assert_eq!(s.victim_latency_mean, s.latency_mean);
    assert_eq!((s.aggressor_offered_load, s.aggressor_accepted_load), (0.0, 0.0));
    assert!(s.aggressor_latency_mean.is_nan());
}

#[test]
fn a_hot_spot_splits_the_traffic_into_aggressors_and_victims_that_add_up() {
    // Dragonfly(2, 4, 2): 72 endpoints; 10 % of the packets go to endpoint 5, which can
    // take one phit a cycle: 1/72 per endpoint at most.
    let hot = ["traffic.pattern=hot_spot", "traffic.fraction=0.1", "traffic.endpoint=5"];
    let r = run(&build(DRAGONFLY, &hot), 2);
    let s = &r.summary;
    let endpoints = 72.0;
    // Offered: 0.1 of the load, plus the uniform share that happens to pick endpoint 5.
    let expected = 0.3 * (0.1 + 0.9 / (endpoints - 1.0));
    assert!((s.aggressor_offered_load - expected).abs() < 0.15 * expected, "{s:?}");
    assert!((s.victim_offered_load + s.aggressor_offered_load - s.offered_load).abs() < 1e-12);
    assert!((s.victim_accepted_load + s.aggressor_accepted_load - s.accepted_load).abs() < 1e-12);
    // At most a phit a cycle over the 2,500-cycle window, and the tail of one 8-phit
    // packet that straddles its start.
    assert!(s.aggressor_accepted_load <= (2500.0 + 8.0) / 2500.0 / endpoints, "{s:?}");
    assert!(s.aggressor_accepted_load > 0.95 / endpoints, "the hot link is busy: {s:?}");
    // The hot endpoint's link is the bottleneck: its packets wait longest (measured 697
    // cycles against the victims' 218, who wait behind them: tree saturation).
    assert!(s.aggressor_latency_mean > 2.0 * s.victim_latency_mean, "{s:?}");
    // The series: what was delivered to the target, period by period, adds up to the
    // whole run's share of it.
    let delivered: u64 = r.samples.iter().map(|x| x.counters.aggressor_delivered_phits).sum();
    let all: u64 = r.samples.iter().map(|x| x.counters.delivered_phits).sum();
    assert!(delivered > 0 && delivered < all);
}

#[test]
fn a_hot_spot_victimises_the_uniform_traffic_on_a_dragonfly_and_a_fat_tree() {
    // Without congestion control, the hot spot's backlog fills the buffers on the way to
    // it (and the source queues behind its packets), and the uniform traffic, which alone
    // these networks carry in full, loses throughput and waits.
    for (name, text, load) in
        [("dragonfly", DRAGONFLY, "traffic.load=0.4"), ("fat tree", FAT_TREE, "traffic.load=0.5")]
    {
        let alone = run(&build(text, &[load]), 2).summary;
        assert!(
            !alone.saturated && alone.victim_accepted_load > 0.98 * alone.victim_offered_load,
            "{name}: {alone:?}"
        );
        let hot = ["traffic.pattern=hot_spot", "traffic.fraction=0.05", load];
        let s = run(&build(text, &hot), 2).summary;
        assert!(s.victim_accepted_load < 0.9 * s.victim_offered_load, "{name}: {s:?}");
    }
}

#[test]
fn targets_can_be_named_and_must_exist() {
    let targets = ["traffic.pattern=uniform", "congestion.targets=[3, 3, 9]"];
    let s = run(&build(DRAGONFLY, &targets), 1).summary;
    // Two of the 72 endpoints: 2/71 of the uniform traffic.
    let expected = 0.3 * 2.0 / 71.0;
    assert!((s.aggressor_offered_load - expected).abs() < 0.2 * expected, "{s:?}");
    let cfg = Config::parse(DRAGONFLY, &["congestion.targets=[72]".to_string()]).expect("parses");
    let e = Simulation::build(cfg).err().expect("endpoint 72 does not exist").to_string();
    assert_eq!(e, "congestion.targets: endpoint 72 does not exist: the network has 72 (0 to 71)");
    let e = Config::parse(DRAGONFLY, &["congestion.target=[1]".to_string()]).unwrap_err().to_string();
    assert!(e.contains("congestion") && e.contains("target"), "{e}");
}

#[test]
fn the_split_is_the_same_on_any_partitioning() {
    let hot = ["traffic.pattern=hot_spot", "traffic.fraction=0.1"];
    let sim = build(DRAGONFLY, &hot);
    let one = run(&sim, 1).summary;
    for parts in [2, 3] {
        let s = run(&sim, parts).summary;
        assert_eq!(
            (s.aggressor_accepted_load, s.victim_accepted_load, s.aggressor_latency_mean.to_bits()),
            (one.aggressor_accepted_load, one.victim_accepted_load, one.aggressor_latency_mean.to_bits())
        );
    }
}

#[test]
fn links_into_a_hot_spot_stall_for_want_of_credits() {
    // A link is sending (`phits`, a phit a cycle), stalled (free, packets waiting, no
    // credits) or idle: never more than the 2,500-cycle window, give or take a packet at
    // its edges. At load 0.05 credits hardly ever run out; under a hot spot at endpoint 0
    // (switch 0, group 0: switches 0 to 3) the links into the hot group wait most: its
    // buffers drain only as fast as the hot endpoint takes packets (tree saturation;
    // measured: a global link into switch 2, stalled 2,182 of the 2,500 cycles).
    let window = 2500;
    let low = run(&build(DRAGONFLY, &["traffic.load=0.05"]), 2);
    let hot = run(&build(DRAGONFLY, &["traffic.pattern=hot_spot", "traffic.fraction=0.1"]), 2);
    for l in low.links.iter().chain(&hot.links) {
        assert!(l.phits + l.stall_cycles <= window + 8, "{l:?}");
    }
    let stalled = |r: &xnet_models::sim::RunResult| r.links.iter().map(|l| l.stall_cycles).sum::<u64>();
    assert!(stalled(&hot) > 20 * stalled(&low).max(1), "{} vs {}", stalled(&hot), stalled(&low));
    let worst = hot.links.iter().max_by_key(|l| l.stall_cycles).expect("links");
    assert!(worst.peer < 4, "{worst:?}");
    assert!(worst.stall_cycles > window / 2, "{worst:?}");
    // The same on any partitioning.
    let three = run(&build(DRAGONFLY, &["traffic.pattern=hot_spot", "traffic.fraction=0.1"]), 3);
    assert_eq!(three.links, hot.links);
}

#[test]
fn infiniband_congestion_control_gives_the_victims_back_their_throughput() {
    // A 5 % hot spot at load 0.4, 10,000 cycles measured after 10,000, on the Dragonfly
    // and the fat tree: without congestion control the congestion tree roughly halves
    // what the victims get (measured 0.196 of 0.376 and 0.221 of 0.375) and they wait
    // 2,300 and 260 cycles; with InfiniBand's the switches mark, the hot endpoint's
    // sources slow their flows to it (and only those), the tree drains and the victims get
    // all they offer (0.389 and 0.375, the first with the warm-up's backlog) and wait 61
    // and 56 cycles. The price with these settings: the hot endpoint's link is used 64 %
    // and 55 % of the time (a shorter timer keeps it busier and the victims poorer:
    // docs/congestion.md).
    let hot = [
        "traffic.pattern=hot_spot",
        "traffic.fraction=0.05",
        "traffic.load=0.4",
        "simulation.cycles=20000",
        "simulation.warmup=10000",
    ];
    let marked =
        |r: &xnet_models::sim::RunResult| r.samples.iter().map(|x| x.counters.marked_packets).sum::<u64>();
    let notified =
        |r: &xnet_models::sim::RunResult| r.samples.iter().map(|x| x.counters.notifications).sum::<u64>();
    for (name, text) in [("dragonfly", DRAGONFLY), ("fat tree", FAT_TREE)] {
        let without = run(&build(text, &hot), 2);
        let s = &without.summary;
        assert!(s.victim_accepted_load < 0.65 * s.victim_offered_load, "{name}: {s:?}");
        assert_eq!((marked(&without), notified(&without)), (0, 0));
        let mut with_cc = hot.to_vec();
        with_cc.extend([
            "congestion.control=\"infiniband\"",
            "congestion.infiniband.threshold=16",
            "congestion.infiniband.ipd_step=64",
        ]);
        let sim = build(text, &with_cc);
        let with = run(&sim, 2);
        let s = &with.summary;
        assert!(s.victim_accepted_load > 0.95 * s.victim_offered_load, "{name}: {s:?}");
        assert!(s.victim_latency_mean < without.summary.victim_latency_mean, "{name}: {s:?}");
        // Every notification answers a mark (some are still on their way at the end).
        let (m, n) = (marked(&with), notified(&with));
        assert!(n > 0 && n <= m, "{name}: {n} notifications, {m} marks");
        // Nothing lost: every packet, notifications included, is delivered or still held.
        assert_eq!(s.generated_total, s.delivered_total + with.resident_end + with.on_wires_end, "{name}");
        // The same on any partitioning.
        let three = run(&sim, 3);
        assert_eq!(three.summary, with.summary, "{name}");
        assert_eq!(three.links, with.links, "{name}");
    }
}

/// The error the Dragonfly's configuration with `extra` settings is refused with.
fn config_error(extra: &[&str]) -> String {
    let o: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    Config::parse(DRAGONFLY, &o).unwrap_err().to_string()
}

#[test]
fn infiniband_settings_are_checked() {
    // A scheme's settings may stand while it is off (a study varies congestion.control
    // alone): checked, not used, and noted.
    let off = Config::parse(DRAGONFLY, &["congestion.infiniband.threshold=8".to_string()]).unwrap();
    assert!(off.congestion.scheme(64, 64).unwrap().is_none());
    assert_eq!(
        off.congestion.unused_tables(),
        ["note: congestion.infiniband is set but congestion.control is \"none\": its settings are not used \
          (congestion.control = \"infiniband\" uses them)"]
    );
    assert_eq!(
        config_error(&["congestion.infiniband.ccti_timer=0"]),
        "congestion.infiniband.ccti_timer: must be at least 1 (cycles between the timer's steps)"
    );
    let on = "congestion.control=\"infiniband\"";
    assert_eq!(
        config_error(&[on, "congestion.infiniband.cnp_size=0"]),
        "congestion.infiniband.cnp_size: must be at least 1 and fit the router's buffers (16 phits), got 0"
    );
    assert_eq!(
        config_error(&[on, "congestion.infiniband.ccti_timer=0"]),
        "congestion.infiniband.ccti_timer: must be at least 1 (cycles between the timer's steps)"
    );
    assert!(config_error(&[on, "congestion.infiniband.treshold=8"]).contains("treshold"));
    assert!(config_error(&["congestion.control=\"dcqcnn\""]).contains("dcqcnn"));
}

/// Rank 0 of the clique (`common::CLIQUE`) sends ten 4-phit packets to rank 1 under
/// InfiniBand CC, its notifications as packets. Zero-load latency over the one hop: 18
/// cycles for data, 15 for a 1-phit notification.
const TEN_PACKETS: &str = r#"
[workload]
bytes_per_phit = 16
[[workload.jobs]]
kind = "goal"
contents = """
num_ranks 2
rank 0 {
l1: send 640b to 1 tag 1
}
rank 1 {
l1: recv 640b from 0 tag 1
}
"""
[congestion]
control = "infiniband"
[congestion.infiniband]
ccti_increase = 1
ipd_step = 10
cnp_size = 1
notification = "packet"
"#;

/// Injection times of the ten packets rank 0 sends, relative to the first.
fn injections(overrides: &[&str]) -> (Vec<u64>, u64, u64) {
    let mut sim = build(&format!("{CLIQUE}{TEN_PACKETS}"), overrides);
    sim.record_deliveries = true;
    let r = run(&sim, 1);
    let mut t: Vec<u64> = r.deliveries.iter().filter(|d| d.src == 0).map(|d| d.injected).collect();
    t.sort_unstable();
    let first = t[0];
    let marked = r.samples.iter().map(|x| x.counters.marked_packets).sum();
    let notified = r.samples.iter().map(|x| x.counters.notifications).sum();
    (t.iter().map(|x| x - first).collect(), marked, notified)
}

#[test]
fn marking_notification_and_recovery_at_zero_load_take_the_cycles_they_should() {
    // Marking: at zero load an output buffer holds one packet (4 phits) at a time, so
    // with threshold 16 nothing is marked and the ten packets go back to back.
    let (t, marked, notified) = injections(&["congestion.infiniband.threshold=16"]);
    assert_eq!(t, (0..10).map(|k| 4 * k).collect::<Vec<_>>());
    assert_eq!((marked, notified), (0, 0));
    // With threshold 0 every data packet is marked. Notification: packet 0 (injected at
    // 0) is delivered at 18; the destination's notification reaches the source at
    // 18 + 15 = 33, one every 4 cycles after it. Packets 0 to 8 left at 0, 4, ..., 32;
    // packet 9 waits for the flow's delay: at 36 one notification had come (delay 10:
    // until 46), at 46 four (until 76), at 76 all nine (index 9, delay 90): it leaves
    // at 32 + 4 + 90 = 126. Ten marks, ten notifications.
    let never = "congestion.infiniband.ccti_timer=1000000";
    let (t, marked, notified) = injections(&["congestion.infiniband.threshold=0", never]);
    let mut expected: Vec<u64> = (0..9).map(|k| 4 * k).collect();
    expected.push(126);
    assert_eq!(t, expected);
    assert_eq!((marked, notified), (10, 10));
    // Recovery: with a timer of 25 cycles the index steps down 25 cycles after the last
    // notification (the ninth, at 65) and every 25 after: 8 at 90, 7 at 115, when
    // 36 + 70 = 106 has passed: packet 9 leaves at 115.
    let (t, _, _) = injections(&["congestion.infiniband.threshold=0", "congestion.infiniband.ccti_timer=25"]);
    assert_eq!(t[9], 115, "{t:?}");
    // A direct notification (outside the buffers) takes the terminal links and the switch
    // link only: back at 18 + 3 + 5 + 3 = 29, one every 4 cycles after. Packets 0 to 7
    // leave at 0 to 28; packet 8 finds one notification at 32 (delay 10: until 42), four
    // at 42 (until 72), all eight at 72 (until 28 + 4 + 80 = 112) and leaves at 112;
    // packet 9 waits for 112 + 4 + 80 = 196, when packet 8's notification (back at
    // 112 + 29 = 141) has made the delay 90: it leaves at 206.
    let direct = "congestion.infiniband.notification=\"direct\"";
    let (t, marked, notified) = injections(&["congestion.infiniband.threshold=0", never, direct]);
    let mut expected: Vec<u64> = (0..8).map(|k| 4 * k).collect();
    expected.extend([112, 206]);
    assert_eq!(t, expected);
    assert_eq!((marked, notified), (10, 10));
}

#[test]
fn per_destination_throttling_gives_the_victims_back_their_throughput_and_keeps_the_hot_link_busy() {
    // The hot spot of the InfiniBand test above, with per-destination throttling: the hot
    // endpoint counts the endpoints sending to it (all the others, the uniform traffic's
    // included) and tells each its share of `link_share` (0.9) of its link. Measured:
    // victims 0.376 of 0.376 on the Dragonfly and 0.375 of 0.375 on the fat tree, waiting
    // 41 and 30 cycles, the hot link busy 90 % of the time on both, where InfiniBand's
    // leaves it 64 % and 55 % busy; with a window of 4 packets in flight the same.
    let hot = [
        "traffic.pattern=hot_spot",
        "traffic.fraction=0.05",
        "traffic.load=0.4",
        "simulation.cycles=20000",
        "simulation.warmup=10000",
        "congestion.control=\"per_destination\"",
    ];
    let notified =
        |r: &xnet_models::sim::RunResult| r.samples.iter().map(|x| x.counters.notifications).sum::<u64>();
    for (name, text, endpoints) in [("dragonfly", DRAGONFLY, 72.0), ("fat tree", FAT_TREE, 64.0)] {
        let sim = build(text, &hot);
        let with = run(&sim, 2);
        let s = &with.summary;
        assert!(s.victim_accepted_load > 0.98 * s.victim_offered_load, "{name}: {s:?}");
        let busy = s.aggressor_accepted_load * endpoints;
        assert!(
            busy > 0.85 && busy < 0.95,
            "{name}: the hot link is busy about link_share of the time: {busy}"
        );
        assert!(notified(&with) > 0, "{name}");
        assert_eq!(s.generated_total, s.delivered_total + with.resident_end + with.on_wires_end, "{name}");
        let three = run(&sim, 3);
        assert_eq!(three.summary, with.summary, "{name}");
        // A window of outstanding packets, acknowledged: as good, and as deterministic.
        let windowed = build(text, &[&hot[..], &["congestion.per_destination.max_outstanding=4"]].concat());
        let w = run(&windowed, 2);
        assert!(
            w.summary.victim_accepted_load > 0.98 * w.summary.victim_offered_load,
            "{name}: {:?}",
            w.summary
        );
        assert_eq!(
            w.summary.generated_total,
            w.summary.delivered_total + w.resident_end + w.on_wires_end,
            "{name}"
        );
        assert_eq!(run(&windowed, 3).summary, w.summary, "{name}");
    }
}

/// Seven endpoints of the clique above each send forty 4-phit packets to endpoint 0, under
/// per-destination throttling (`overrides` on top).
fn incast(overrides: &[&str]) -> xnet_models::sim::RunResult {
    run(&incast_sim(overrides), 1)
}

/// The incast's network and job.
fn incast_sim(overrides: &[&str]) -> Simulation {
    let mut goal = String::from("num_ranks 8\nrank 0 {\n");
    for r in 1..8 {
        goal += &format!("l{r}: recv 2560b from {r} tag 1\n");
    }
    goal += "}\n";
    for r in 1..8 {
        goal += &format!("rank {r} {{\nl1: send 2560b to 0 tag 1\n}}\n");
    }
    let text = format!(
        "{CLIQUE}[workload]\nbytes_per_phit = 16\n[[workload.jobs]]\nkind = \"goal\"\ncontents = \"\"\"\n{goal}\"\"\"\n\
         [congestion]\ncontrol = \"per_destination\"\n"
    );
    let mut sim = build(&text, overrides);
    sim.record_deliveries = true;
    sim
}

#[test]
fn an_incast_is_counted_and_each_sender_sends_its_share_at_exact_intervals() {
    // Seven senders, forty 4-phit packets each, to one endpoint, whose link is then busy
    // from cycle 18 on: the interval [100, 200) is full (the first, [0, 100), held 82
    // phits: under 85 %), so the destination counts its senders from its first packet
    // after 200 and tells the sixth it counts 6, then each 7 with its next packet (from
    // cycle 222 to 250). Before, they send back to back until the network
    // holds them back to 7 x 4 = 28 cycles apart (the link's share); after, one packet per
    // ceil(7 x 4 / 0.9) = 32 cycles each.
    let gaps = |r: &xnet_models::sim::RunResult, src| {
        let mut t: Vec<u64> = r.deliveries.iter().filter(|d| d.src == src).map(|d| d.injected).collect();
        t.sort_unstable();
        assert_eq!(t.len(), 40, "sender {src}");
        t.windows(2).map(|w| w[1] - w[0]).collect::<Vec<u64>>()
    };
    let notices =
        |r: &xnet_models::sim::RunResult| r.samples.iter().map(|x| x.counters.notifications).sum::<u64>();
    let r = incast(&["congestion.per_destination.interval=100"]);
    for src in 1..8 {
        let g = gaps(&r, src);
        assert!(g[..12].iter().all(|&x| x == 4), "sender {src}: back to back at first: {g:?}");
        assert!(g[12..20].iter().all(|&x| x <= 28), "sender {src}: held back by the network: {g:?}");
        assert!(g[21..].iter().all(|&x| x == 32), "sender {src}: its share once told: {g:?}");
    }
    // 8 notices as the counts change, then each sender told again once a window (4 gaps,
    // 128 cycles) while the incast lasts.
    assert_eq!(notices(&r), 50);
    // With 8 senders needed none is told: they send as without congestion control.
    let r = incast(&["congestion.per_destination.interval=100", "congestion.per_destination.min_senders=8"]);
    let without = incast(&["congestion.control=\"none\""]);
    assert_eq!(notices(&r), 0);
    assert!((1..8).all(|src| gaps(&r, src) == gaps(&without, src)));
    assert!(gaps(&r, 1)[21..].iter().all(|&x| x == 28));
}

#[test]
fn a_window_of_outstanding_packets_holds_each_sender_to_its_round_trip() {
    // The incast with one packet in flight per sender and destination: a sender's next
    // packet waits for the acknowledgement of its last, a round trip of 18 (the packet's
    // zero-load latency) + 3 + 5 + 3 (the acknowledgement, outside the buffers) = 29
    // cycles. Seven senders of 4 phits per 29 cycles nearly fill the link, so nothing
    // waits: every gap is exactly 29, but the first of sender k, whose first packet
    // arrives 4 (k - 1) cycles behind the others' at the destination's link. Once the
    // destination has counted its seven senders their share takes over: 32.
    let r = incast(&["congestion.per_destination.max_outstanding=1"]);
    for src in 1..8u64 {
        let mut t: Vec<u64> =
            r.deliveries.iter().filter(|d| d.src == src as u32).map(|d| d.injected).collect();
        t.sort_unstable();
        let g: Vec<u64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(g[0], 29 + 4 * (src - 1), "sender {src}: {g:?}");
        assert!(g[1..19].iter().all(|&x| x == 29), "sender {src}: {g:?}");
        assert!(g[20..].iter().all(|&x| x == 32), "sender {src}: {g:?}");
    }
    // Acknowledgements and notices cross partitions as link messages: the same on three.
    let three = run(&incast_sim(&["congestion.per_destination.max_outstanding=1"]), 3);
    assert_eq!(three.summary, r.summary);
    assert_eq!(three.deliveries.len(), r.deliveries.len());
}

#[test]
fn per_destination_settings_are_checked() {
    let on = "congestion.control=\"per_destination\"";
    assert_eq!(
        config_error(&[on, "congestion.per_destination.min_senders=1"]),
        "congestion.per_destination.min_senders: must be at least 2 (one sender cannot oversubscribe a link), got 1"
    );
    assert_eq!(
        config_error(&[on, "congestion.per_destination.link_share=1.5"]),
        "congestion.per_destination.link_share: must be at least 0.01 and at most 1 (a share of the link), got 1.5"
    );
    assert_eq!(
        config_error(&[on, "congestion.per_destination.busy=0"]),
        "congestion.per_destination.busy: must be at least 0.01 and at most 1 (a share of the link), got 0"
    );
    assert_eq!(
        config_error(&[on, "congestion.per_destination.interval=0"]),
        "congestion.per_destination.interval: must be at least 1 cycle"
    );
    assert_eq!(
        config_error(&[on, "congestion.per_destination.window=0"]),
        "congestion.per_destination.window: must be at least 1 (gaps between a sender's packets)"
    );
    let both =
        Config::parse(DRAGONFLY, &[on.to_string(), "congestion.infiniband.threshold=2".to_string()]).unwrap();
    assert_eq!(
        both.congestion.unused_tables(),
        ["note: congestion.infiniband is set but congestion.control is \"per_destination\": its settings are not \
          used (congestion.control = \"infiniband\" uses them)"]
    );
}

/// Seven ranks of the clique (`common::CLIQUE`) send 256 KiB each to rank 0 at once: the
/// output to rank 0 queues.
fn dcqcn_incast(parts: u32, control: &str) -> xnet_models::sim::RunResult {
    let mut goal = String::from("num_ranks 8\nrank 0 {\n");
    for r in 1..8 {
        goal += &format!("r{r}: recv 262144b from {r} tag 1\n");
    }
    goal += "}\n";
    for r in 1..8 {
        goal += &format!("rank {r} {{\ns: send 262144b to 0 tag 1\n}}\n");
    }
    let text = format!(
        "{CLIQUE}[workload]\nbytes_per_phit = 16\n[[workload.jobs]]\nkind = \"goal\"\ncontents = \"\"\"\n{goal}\"\"\"\n\
         [congestion]\ncontrol = \"{control}\"\n[congestion.dcqcn]\nkmin = 32\nkmax = 512\npmax = 0.5\n\
         cnp_interval = 200\nrate_timer = 1000\nalpha_timer = 1000\nbyte_counter = 100000\n"
    );
    let sets = [
        "router.packet_size=16",
        "router.input_buffer=64",
        "router.output_buffer=1024",
        "simulation.cycles=3000000",
        "simulation.sample_period=1000",
    ];
    common::run(&common::build(&text, &sets), parts)
}

#[test]
fn dcqcn_marks_the_incast_cuts_its_flows_and_drains_the_queue() {
    let none = dcqcn_incast(1, "none");
    let dcqcn = dcqcn_incast(1, "dcqcn");
    for r in [&none, &dcqcn] {
        assert_eq!(r.status, xnet_models::sim::Status::Completed);
        assert!(r.workload.as_ref().unwrap().jobs[0].completion_time.is_some());
    }
    let marked: u64 = dcqcn.samples.iter().map(|s| s.counters.marked_packets).sum();
    let notified: u64 = dcqcn.samples.iter().map(|s| s.counters.notifications).sum();
    assert!(marked > 0 && notified > 0, "{marked} marked, {notified} notifications");
    // At most one CNP per flow per cnp_interval (7 flows).
    let end = dcqcn.workload.as_ref().unwrap().jobs[0].completion_time.unwrap();
    assert!(notified <= 7 * (end / 200 + 1), "{notified} notifications in {end} cycles");
    assert!(notified < marked, "the notification point coalesces marks: {notified} of {marked}");
    // The sources slow down: the queue at the incast's output drains, so packets cross the
    // network far faster (and wait at their sources instead).
    assert!(
        dcqcn.summary.network_latency_mean * 10.0 < none.summary.network_latency_mean,
        "{} against {}",
        dcqcn.summary.network_latency_mean,
        none.summary.network_latency_mean
    );
    assert_eq!(none.samples.iter().map(|s| s.counters.marked_packets).sum::<u64>(), 0);
    for parts in [2, 4] {
        assert_eq!(dcqcn_incast(parts, "dcqcn").summary, dcqcn.summary, "{parts} partitions");
    }
}

#[test]
fn dcqcn_settings_are_checked() {
    let on = "congestion.control=\"dcqcn\"";
    let big = "router.output_buffer=1024";
    let ok = Config::parse(DRAGONFLY, &[on.to_string(), big.to_string()]).unwrap();
    assert!(ok.congestion.scheme(64, 1024).unwrap().is_some());
    for (set, key) in [
        ("congestion.dcqcn.kmin=600", "congestion.dcqcn.kmin: must be below kmax"),
        ("congestion.dcqcn.pmax=0", "congestion.dcqcn.pmax: must be above 0 and at most 1"),
        ("congestion.dcqcn.g=2", "congestion.dcqcn.g"),
        ("congestion.dcqcn.rate_timer=0", "congestion.dcqcn.rate_timer: must be at least 1"),
        ("congestion.dcqcn.kmnx=3", "kmnx"),
    ] {
        let e = config_error(&[on, big, "congestion.dcqcn.kmax=500", set]);
        assert!(e.contains(key), "{set}: {e}");
    }
    // An output buffer that never reaches kmin would never mark.
    let e = config_error(&[on, "router.output_buffer=256"]);
    assert!(e.contains("congestion.dcqcn.kmin") && e.contains("never marks"), "{e}");
}
