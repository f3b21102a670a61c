//! The reliable connection (`transport.kind = "rc"`): a send ends at its acknowledgement;
//! one lost packet is recovered by going back to it after a NAK, a lost last packet after
//! a timeout, both at exactly the times go-back-N gives; a connection that keeps losing
//! gives up after its retries and the run says which; drops from full buffers are
//! recovered, nothing is lost or counted twice, and results do not depend on the
//! partitioning; bad settings name their key. The selective (UEC-like) transport resends
//! only what is lost, each packet on its own timer.

mod common;
use common::{build, build_error, run, CLIQUE};
use xnet_models::sim::{RunResult, Status};

/// Cycles from a packet's first phit leaving its source endpoint to that phit reaching the
/// destination endpoint across one switch-to-switch hop of [`CLIQUE`]: two terminal links
/// of 3, a link of 5, two switches of router delay 2.
const L: u64 = 2 * 3 + 5 + 2 * 2;

/// Phits of a packet here, and bytes a phit carries.
const MTU: u64 = 16;
const BYTES_PER_PHIT: u64 = 16;

/// Rank 0 sends one message of `packets` full packets to rank 1 on [`CLIQUE`].
fn one_message(packets: u64, overrides: &[&str]) -> RunResult {
    let bytes = packets * MTU * BYTES_PER_PHIT;
    let text = format!(
        "{CLIQUE}\n[workload]\nbytes_per_phit = {BYTES_PER_PHIT}\neager_limit = {bytes}\n\
         [[workload.jobs]]\nkind = \"goal\"\ncontents = \"\"\"\nnum_ranks 2\n\
         rank 0 {{\nl1: send {bytes}b to 1 tag 1\n}}\nrank 1 {{\nl1: recv {bytes}b from 0 tag 1\n}}\n\"\"\"\n"
    );
    let mut sets = vec![
        "router.packet_size=16",
        "router.input_buffer=64",
        "router.output_buffer=64",
        "simulation.cycles=2000000",
    ];
    sets.extend_from_slice(overrides);
    run(&build(&text, &sets), 1)
}

fn completion(r: &RunResult) -> u64 {
    assert_eq!(r.status, Status::Completed);
    r.workload.as_ref().unwrap().jobs[0].completion_time.expect("finished")
}

#[test]
fn a_send_ends_when_its_last_packet_is_acknowledged() {
    for packets in [1u64, 5] {
        let s = packets * MTU;
        // Without a transport the job ends when the last phit arrives.
        assert_eq!(completion(&one_message(packets, &[])), L + s - 1);
        // With one, the sender's send ends when the ACK of its last packet is back: a
        // 1-phit packet sent when that packet's tail arrives, L later.
        let r = one_message(packets, &["transport.kind=\"rc\""]);
        assert_eq!(completion(&r), L + s - 1 + L, "{packets} packets");
        // Every packet is acknowledged; nothing is sent twice.
        assert_eq!(r.summary.generated_total, 2 * packets);
        assert_eq!((r.summary.retransmitted_packets, r.summary.naks), (0, 0));
        // A longer ACK arrives later by its extra phits.
        let r = one_message(packets, &["transport.kind=\"rc\"", "transport.rc.ack_size=4"]);
        assert_eq!(completion(&r), L + s - 1 + L + 3);
        // Acknowledging every fourth packet still acknowledges the last at once.
        let r = one_message(packets, &["transport.kind=\"rc\"", "transport.rc.ack_every=4"]);
        assert_eq!(completion(&r), L + s - 1 + L);
        assert_eq!(r.summary.generated_total, packets + packets.div_ceil(4));
    }
}

/// Runs with bit errors dropped end to end at `ber`, one seed after another, until a run
/// loses exactly one packet, a data packet: the result and the overrides that gave it.
fn with_one_loss(packets: u64, ber: &str, timeout: u64) -> (RunResult, Vec<String>) {
    with_one_loss_on("rc", packets, ber, timeout)
}

/// [`with_one_loss`] under transport `kind`.
fn with_one_loss_on(kind: &str, packets: u64, ber: &str, timeout: u64) -> (RunResult, Vec<String>) {
    for seed in 1..400 {
        let mut sets = vec![
            format!("transport.kind=\"{kind}\""),
            format!("transport.{kind}.timeout={timeout}"),
            format!("router.link_errors.bit_error_rate={ber}"),
            "router.link_errors.recovery=\"end_to_end\"".to_string(),
            format!("simulation.seed={seed}"),
        ];
        if kind == "uec" {
            // Losses found only by their timeouts.
            sets.push("transport.uec.reorder_threshold=1000".to_string());
        }
        let r = one_message(packets, &sets.iter().map(String::as_str).collect::<Vec<_>>());
        if r.summary.dropped_total == 1 && r.summary.retransmitted_packets > 0 {
            return (r, sets);
        }
    }
    panic!("no seed lost exactly one data packet");
}

#[test]
fn go_back_n_recovers_one_lost_packet_at_the_time_it_gives() {
    let (n, timeout) = (20u64, 1_000_000);
    let mut seen = std::collections::BTreeSet::new();
    for ber in ["2e-5", "1e-5", "5e-6"] {
        let (r, _) = with_one_loss(n, ber, timeout);
        // Packet k is lost; k + 1 arrives out of sequence and its tail draws a NAK, back
        // at the sender 2L + 16 (k + 1) + 15 cycles after the start.
        let k = n - r.summary.retransmitted_packets;
        assert!(k + 1 < n, "the lost packet was not the last (that takes a timeout)");
        let t_nak = 2 * L + MTU * (k + 1) + MTU - 1;
        // Then the link finishes the packet it sends and the two the source queue holds,
        // and sends k to n - 1 again, back to back.
        let on_link = ((t_nak - 1) / MTU).min(n - 1);
        let queued = 2.min(n - 1 - on_link);
        let start = t_nak.max(MTU * (on_link + 1 + queued));
        let last_tail = start + MTU * (n - 1 - k) + L + MTU - 1;
        assert_eq!(completion(&r), last_tail + L, "packet {k} lost ({ber})");
        assert_eq!((r.summary.naks, r.summary.transport_timeouts), (1, 0));
        // The responder dropped the packets sent after k before it came again.
        assert_eq!(r.summary.discarded_packets, on_link + queued - k);
        // Nothing lost or counted twice: every copy sent was delivered or dropped.
        assert_eq!(r.summary.in_flight_end, 0);
        seen.insert(k);
    }
    assert!(seen.len() > 1, "the same packet was lost every time: {seen:?}");
}

#[test]
fn a_lost_last_packet_is_sent_again_after_the_timeout() {
    let timeout = 5_000;
    let (r, mut sets) = with_one_loss(1, "2e-4", timeout);
    // The timer ran from the packet's departure at 0.
    assert_eq!(completion(&r), timeout + L + MTU - 1 + L);
    assert_eq!((r.summary.transport_timeouts, r.summary.retransmitted_packets, r.summary.naks), (1, 1, 0));
    // A run that ends before the timeout says what it waited for.
    sets.push(format!("simulation.cycles={}", timeout - 10));
    let short = one_message(1, &sets.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(short.status, Status::Unfinished);
    let why = short.workload.as_ref().unwrap().diagnosis(short.summary.in_flight_end).unwrap();
    assert!(why.contains("waited for their timeout (0 timeouts in the run"), "{why}");
}

#[test]
fn the_selective_transport_times_each_packet_out_from_its_own_departure() {
    let (n, timeout) = (20u64, 5_000);
    let mut seen = std::collections::BTreeSet::new();
    for ber in ["2e-5", "1e-5", "5e-6"] {
        let (r, _) = with_one_loss_on("uec", n, ber, timeout);
        // Packets leave back to back, one every MTU cycles; which one was lost shows in
        // the completion: packet k goes again `timeout` after its departure at k MTU
        // (not after the last acknowledgement), and its ACK ends the send.
        let rest = completion(&r) - (timeout + L + MTU - 1 + L);
        assert_eq!(rest % MTU, 0, "{ber}");
        let k = rest / MTU;
        assert!(k < n, "{ber}: {}", completion(&r));
        assert_eq!((r.summary.transport_timeouts, r.summary.retransmitted_packets), (1, 1), "{ber}");
        assert_eq!((r.summary.naks, r.summary.in_flight_end), (0, 0));
        seen.insert(k);
    }
    assert!(seen.len() > 1, "the same packet was lost every time: {seen:?}");
}

#[test]
fn a_connection_that_keeps_losing_fails_and_the_run_names_it() {
    // One 256-phit packet of 128 bits a phit at a BER of 1e-3: every copy goes bad.
    let r = one_message(
        16,
        &[
            "transport.kind=\"rc\"",
            "transport.rc.timeout=1000",
            "transport.rc.retries=3",
            "router.packet_size=256",
            "router.input_buffer=256",
            "router.output_buffer=256",
            "router.link_errors.bit_error_rate=1e-3",
            "router.link_errors.recovery=\"end_to_end\"",
        ],
    );
    assert_eq!(r.status, Status::Unfinished, "the network emptied; the job did not finish");
    let w = r.workload.as_ref().unwrap();
    assert_eq!(w.jobs[0].completion_time, None);
    // Sent, then again after each of 3 timeouts; the fourth gives up.
    assert_eq!((r.summary.transport_timeouts, r.summary.retransmitted_packets), (4, 3));
    assert_eq!((r.summary.failed_connections, r.summary.dropped_total), (1, 4));
    let waits: Vec<&str> = w.stalled.iter().map(|s| s.waits.as_str()).collect();
    assert!(
        waits.iter().any(|w| w.contains("will never be acknowledged")
            && w.contains("connection to endpoint 1 failed after 4 timeouts")),
        "{waits:?}"
    );
}

/// Seven ranks send 16 KiB each to rank 0 at once: the incast overflows the input buffers
/// of rank 0's switch when links have no flow control, and the transport recovers every
/// drop.
const INCAST: &str = r#"
[workload]
bytes_per_phit = 16
[[workload.jobs]]
kind = "goal"
contents = """
num_ranks 8
rank 0 {
r1: recv 16384b from 1 tag 1
r2: recv 16384b from 2 tag 1
r3: recv 16384b from 3 tag 1
r4: recv 16384b from 4 tag 1
r5: recv 16384b from 5 tag 1
r6: recv 16384b from 6 tag 1
r7: recv 16384b from 7 tag 1
}
rank 1 {
s: send 16384b to 0 tag 1
}
rank 2 {
s: send 16384b to 0 tag 1
}
rank 3 {
s: send 16384b to 0 tag 1
}
rank 4 {
s: send 16384b to 0 tag 1
}
rank 5 {
s: send 16384b to 0 tag 1
}
rank 6 {
s: send 16384b to 0 tag 1
}
rank 7 {
s: send 16384b to 0 tag 1
}
"""
"#;

/// [`INCAST`] over links without flow control on the transport `kind`.
fn lossy(parts: u32, kind: &str, extra: &[&str]) -> RunResult {
    let text = format!("{CLIQUE}\n{INCAST}");
    let (kind, timeout) = (format!("transport.kind=\"{kind}\""), format!("transport.{kind}.timeout=20000"));
    let mut sets = vec![
        "router.flow_control=\"none\"",
        "router.packet_size=16",
        "router.input_buffer=32",
        "router.output_buffer=32",
        &kind,
        &timeout,
        "simulation.cycles=5000000",
    ];
    sets.extend_from_slice(extra);
    run(&build(&text, &sets), parts)
}

#[test]
fn drops_from_full_buffers_are_recovered_identically_on_any_partitioning() {
    let one = lossy(1, "rc", &[]);
    assert_eq!(one.status, Status::Completed);
    let job = &one.workload.as_ref().unwrap().jobs[0];
    assert!(job.completion_time.is_some(), "the job finished");
    let s = &one.summary;
    assert!(s.dropped_total > 0 && s.retransmitted_packets > 0 && s.naks > 0, "{s:?}");
    // Every copy sent was delivered or dropped; what the responders dropped was delivered.
    assert_eq!(s.in_flight_end, 0);
    assert_eq!(s.generated_total, s.delivered_total + s.dropped_total);
    assert!(s.discarded_packets <= s.delivered_total);
    // Each message arrived once: the ranks received what they would without losses.
    let lossless = lossy(1, "rc", &["router.flow_control=\"credits\""]);
    let l = &lossless.workload.as_ref().unwrap().jobs[0];
    assert_eq!(lossless.summary.dropped_total, 0);
    assert_eq!(job.messages, l.messages);
    assert!(job.completion_time > l.completion_time);
    for parts in [2, 4] {
        let other = lossy(parts, "rc", &[]);
        assert_eq!(other.summary, one.summary, "{parts} partitions");
        assert_eq!(other.workload.as_ref().unwrap().jobs[0].completion_time, job.completion_time);
    }
}

#[test]
fn bad_transport_settings_name_their_key() {
    let msg = |text: &str, sets: &[&str]| build_error(text, sets);
    let synthetic = format!("{CLIQUE}\n[traffic]\npattern = \"uniform\"\nload = 0.1\n");
    assert!(msg(&synthetic, &["transport.kind=\"rc\""])
        .contains("transport.kind: a transport carries application messages"));
    let app = format!("{CLIQUE}\n{INCAST}");
    assert!(msg(&app, &["transport.kind=\"tcp\""]).contains("transport"));
    let e = msg(&app, &["transport.rc.timeout=5"]);
    assert!(e.contains("transport.rc: sets the parameters of transport.kind = \"rc\""), "{e}");
    for (set, key) in [
        ("transport.rc.window=0", "transport.rc.window: must be in 1..=16383"),
        ("transport.rc.window=20000", "transport.rc.window: must be in 1..=16383"),
        ("transport.rc.ack_every=0", "transport.rc.ack_every"),
        ("transport.rc.timeout=0", "transport.rc.timeout"),
        ("transport.rc.ack_size=5", "transport.rc.ack_size: must be at most router.packet_size (4)"),
        ("transport.rc.tiemout=5", "tiemout"),
    ] {
        let e = msg(&app, &["transport.kind=\"rc\"", set]);
        assert!(e.contains(key), "{set}: {e}");
    }
    let e = msg(&app, &["transport.kind=\"rc\"", "routing.selection=\"ecmp\"", "routing.ecmp_flows=2"]);
    assert!(e.contains("routing.ecmp_flows: transport.kind = \"rc\" runs one connection per pair"), "{e}");
    // Losses an application cannot recover from without a transport.
    let e = msg(&app, &["router.flow_control=\"none\""]);
    assert!(e.contains("router.flow_control") && e.contains("transport.kind = \"rc\""), "{e}");
    let e =
        msg(&app, &["router.link_errors.bit_error_rate=1e-9", "router.link_errors.recovery=\"end_to_end\""]);
    assert!(e.contains("router.link_errors.recovery") && e.contains("transport.kind = \"rc\""), "{e}");
}

/// The port of switch `from` that leads to switch `to` in `sim`'s network.
fn port_towards(sim: &xnet_models::sim::Simulation, from: u32, to: u32) -> usize {
    sim.net
        .ports(from)
        .iter()
        .position(
            |p| matches!(p.target, xnet_models::topology::PortTarget::Switch { switch, .. } if switch == to),
        )
        .expect("a clique joins every two switches")
}

/// One message of 20 packets from rank 0 to rank 1 while their link flaps `down..up`.
fn over_a_flap(down: u64, up: u64, extra: &[&str]) -> RunResult {
    let probe = build(&format!("{CLIQUE}\n[traffic]\npattern = \"uniform\"\nload = 0.1\n"), &[]);
    let port = port_towards(&probe, 0, 1);
    let flap = format!("router.link_flaps=[{{ switch = 0, port = {port}, down = {down}, up = {up} }}]");
    let mut sets = vec!["transport.kind=\"rc\"", "transport.rc.timeout=2000", &flap];
    sets.extend_from_slice(extra);
    one_message(20, &sets)
}

#[test]
fn a_link_that_goes_down_and_comes_back_loses_packets_the_transport_sends_again() {
    // Down from cycle 100 (packet 5 on) to 5,000: everything sent meanwhile is lost, no
    // later packet draws a NAK, and timeouts every 2,000 cycles send again until the link
    // is back.
    let r = over_a_flap(100, 5_000, &[]);
    let s = &r.summary;
    assert!(completion(&r) > 5_000, "it finished after the link came back");
    assert!(s.down_link_drops > 0 && s.down_link_drops == s.dropped_total, "{s:?}");
    assert!(s.transport_timeouts >= 2 && s.retransmitted_packets >= 15, "{s:?}");
    assert_eq!(s.in_flight_end, 0);
    // The same flap after the message has passed loses nothing.
    let late = over_a_flap(5_000, 6_000, &[]);
    assert_eq!(late.summary.dropped_total, 0);
    assert_eq!(completion(&late), L + 20 * MTU - 1 + L);
    // A flap longer than the timeouts and retries allow fails the connection, and the
    // unfinished run names it.
    let long = over_a_flap(100, 1_000_000, &["transport.rc.retries=2"]);
    assert_eq!(long.status, Status::Unfinished);
    assert_eq!(long.summary.failed_connections, 1);
    // The lost ACKs (the link is down both ways) are counted out of flight like data: the
    // count the watchdog reads never goes below zero, and ends at zero.
    assert!(
        long.samples.iter().all(|s| s.in_flight <= 20),
        "{:?}",
        long.samples.iter().map(|s| s.in_flight).collect::<Vec<_>>()
    );
    assert_eq!(long.samples.last().unwrap().in_flight, 0);
    let why = long.workload.as_ref().unwrap().diagnosis(long.summary.in_flight_end).unwrap();
    assert!(
        why.contains("connection to endpoint 1 failed after 3 timeouts")
            && why.contains("1 connections failed"),
        "{why}"
    );
}

#[test]
fn synthetic_traffic_loses_packets_only_while_a_link_is_down_on_any_partitioning() {
    let text = format!("{CLIQUE}\n[traffic]\npattern = \"uniform\"\nload = 0.3\n");
    let probe = build(&text, &[]);
    let port = port_towards(&probe, 2, 5);
    let flap = format!("router.link_flaps=[{{ switch = 2, port = {port}, down = 3000, up = 6000 }}]");
    let sets = ["simulation.cycles=10000", "simulation.sample_period=1000", &flap];
    let one = run(&build(&text, &sets), 1);
    assert!(one.summary.down_link_drops > 0);
    for (k, sample) in one.samples.iter().enumerate() {
        // Samples end at 1000, 2000, ...: drops only in the three that cover the flap.
        let during = (3..6).contains(&k);
        assert_eq!(sample.counters.down_link_drops > 0, during, "sample {k} ending at {}", sample.time);
    }
    for parts in [2, 4] {
        assert_eq!(run(&build(&text, &sets), parts).summary, one.summary, "{parts} partitions");
    }
    // Bad entries name their key.
    for (flap, key) in [
        ("{ switch = 99, port = 1, down = 1, up = 2 }", "router.link_flaps[0].switch: no switch 99"),
        (
            "{ switch = 0, port = 0, down = 1, up = 2 }",
            "router.link_flaps[0].port: port 0 of switch 0 does not lead to a switch",
        ),
        ("{ switch = 0, port = 40, down = 1, up = 2 }", "router.link_flaps[0].port: switch 0 has ports 0..8"),
        (
            &format!("{{ switch = 0, port = {port}, down = 5, up = 5 }}"),
            "router.link_flaps[0].up: must be after down (5)",
        ),
        ("{ switch = 0, port = 1, down = 1 }", "up"),
    ] {
        let e = build_error(&text, &[&format!("router.link_flaps=[{flap}]")]);
        assert!(e.contains(key), "{flap}: {e}");
    }
    let e = build_error(&format!("{CLIQUE}\n{INCAST}"), &[&flap]);
    assert!(e.contains("router.link_flaps") && e.contains("transport.kind = \"rc\""), "{e}");
}

#[test]
fn the_selective_transport_acknowledges_every_packet_and_resends_only_the_lost_one() {
    for packets in [1u64, 5] {
        let r = one_message(packets, &["transport.kind=\"uec\""]);
        assert_eq!(completion(&r), L + packets * MTU - 1 + L, "{packets} packets");
        assert_eq!(r.summary.generated_total, 2 * packets);
    }
    // One packet k of 20 lost, found once 3 packets sent after it are acknowledged (the
    // acknowledgement of k + 3 back at the sender), sent again after the packet on the
    // link and the two the NIC holds; the others are not sent again.
    let n = 20u64;
    let mut seen = std::collections::BTreeSet::new();
    for seed in 1..400 {
        let seed = format!("simulation.seed={seed}");
        let r = one_message(
            n,
            &[
                "transport.kind=\"uec\"",
                "transport.uec.reorder_threshold=3",
                "router.link_errors.bit_error_rate=1e-5",
                "router.link_errors.recovery=\"end_to_end\"",
                &seed,
            ],
        );
        let s = &r.summary;
        if s.dropped_total != 1 || s.retransmitted_packets == 0 || s.transport_timeouts > 0 {
            // No loss, a lost acknowledgement, or one of the last 3 packets (a timeout).
            continue;
        }
        assert_eq!((s.retransmitted_packets, s.transport_timeouts, s.discarded_packets), (1, 0, 0), "{seed}");
        // Which packet: the responder held the ones after it sent before its copy (on the
        // link or in the NIC's queue when the loss was found), and only those.
        let t_detect = |k: u64| MTU * (k + 3) + MTU - 1 + 2 * L;
        let sent_before_copy = |k: u64| {
            let on_link = ((t_detect(k) - 1) / MTU).min(n - 1);
            on_link + 2.min(n - 1 - on_link)
        };
        let k = (0..n - 3).find(|&k| sent_before_copy(k) - k == s.out_of_order_packets);
        let Some(k) = k else { panic!("no lost packet holds {} back ({seed})", s.out_of_order_packets) };
        assert_eq!(completion(&r), (MTU * n).max(t_detect(k)) + L + MTU - 1 + L, "packet {k} lost ({seed})");
        seen.insert(k);
        if seen.len() == 3 {
            return;
        }
    }
    panic!("too few single losses to check: {seen:?}");
}

#[test]
fn the_selective_transport_recovers_an_incast_over_lossy_links_identically_on_any_partitioning() {
    let one = lossy(1, "uec", &[]);
    let job = &one.workload.as_ref().unwrap().jobs[0];
    assert!(job.completion_time.is_some(), "the job finished");
    let s = &one.summary;
    assert!(s.dropped_total > 0 && s.retransmitted_packets > 0 && s.naks == 0, "{s:?}");
    assert_eq!((s.in_flight_end, s.generated_total), (0, s.delivered_total + s.dropped_total));
    for parts in [2, 4] {
        assert_eq!(lossy(parts, "uec", &[]).summary, one.summary, "{parts} partitions");
    }
    let app = format!("{CLIQUE}\n{INCAST}");
    for (set, key) in [
        ("transport.uec.reorder_threshold=0", "transport.uec.reorder_threshold: must be at least 1"),
        ("transport.uec.window=0", "transport.uec.window: must be in 1..=16383"),
    ] {
        let e = build_error(&app, &["transport.kind=\"uec\"", set]);
        assert!(e.contains(key), "{set}: {e}");
    }
    let e = build_error(&app, &["transport.kind=\"rc\"", "transport.uec.window=5"]);
    assert!(e.contains("transport.uec: sets the parameters of transport.kind = \"uec\""), "{e}");
}

#[test]
fn recorded_sends_give_each_flow_its_completion_time_on_any_partitioning() {
    let record = "workload.record_sends=true";
    // One message: without a transport the send ends as its last packet leaves (the
    // sender's only op, so its finish); under RC at its last ACK, L after the tail lands.
    for packets in [1u64, 5] {
        let s = packets * MTU;
        for (transport, end) in [(None, None), (Some("transport.kind=\"rc\""), Some(L + s - 1 + L))] {
            let sets: Vec<&str> = std::iter::once(record).chain(transport).collect();
            let r = one_message(packets, &sets);
            let job = &r.workload.as_ref().unwrap().jobs[0];
            assert_eq!(job.sends.len(), 1, "{transport:?}");
            let e = job.sends[0];
            assert_eq!(
                (e.rank, e.to, e.bytes, e.iteration, e.start),
                (0, 1, packets * MTU * BYTES_PER_PHIT, 0, 0)
            );
            assert_eq!(e.end, job.rank_finish[0], "{transport:?}");
            if let Some(end) = end {
                assert_eq!(e.end, end);
            }
        }
    }
    // Without the key nothing is recorded.
    assert!(one_message(1, &[]).workload.unwrap().jobs[0].sends.is_empty());
    // The incast over lossy links: seven flows, each ending at its sender's finish (after
    // its retransmissions), the same rows on any partitioning.
    let one = lossy(1, "rc", &[record]);
    let job = &one.workload.as_ref().unwrap().jobs[0];
    let ranks: Vec<u32> = job.sends.iter().map(|e| e.rank).collect();
    assert_eq!(ranks, (1..8).collect::<Vec<u32>>());
    for e in &job.sends {
        assert_eq!((e.to, e.bytes, e.start), (0, 16384, 0));
        assert_eq!(e.end, job.rank_finish[e.rank as usize]);
    }
    let lossless = lossy(1, "rc", &[record, "router.flow_control=\"credits\""]);
    let fastest =
        |r: &RunResult| r.workload.as_ref().unwrap().jobs[0].sends.iter().map(|e| e.end).max().unwrap();
    assert!(fastest(&one) > fastest(&lossless), "losses delay the last flow");
    for parts in [2, 4] {
        let other = lossy(parts, "rc", &[record]);
        assert_eq!(other.workload.as_ref().unwrap().jobs[0].sends, job.sends, "{parts} partitions");
    }
}
