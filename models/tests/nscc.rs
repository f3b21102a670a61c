//! NSCC, Ultra Ethernet's congestion control, on the UEC-like transport
//! (`transport.uec.congestion = "nscc"`): the fabric's round trip it sizes itself by, a
//! lone flow it leaves at line rate, an incast whose queue it drains by the switches' ECN
//! marks, identically on any partitioning, and its settings' errors.

mod common;
use common::{build, build_error, run, CLIQUE};
use xnet_models::sim::{RunResult, Status};
use xnet_models::transport::fabric_rtt;

/// [`CLIQUE`]'s one-hop latency: two terminal links of 3, a link of 5, two switches of 2.
const L: u64 = 2 * 3 + 5 + 2 * 2;

const NSCC: &[&str] = &["transport.kind=\"uec\"", "transport.uec.congestion=\"nscc\""];

/// Senders 1..=`senders` each send `bytes` to rank 0 at once, on [`CLIQUE`] with 16-phit
/// packets of 16 bytes a phit and 128-phit output buffers.
fn incast(senders: u32, bytes: u64, parts: u32, extra: &[&str]) -> RunResult {
    let mut goal = format!("num_ranks {}\nrank 0 {{\n", senders + 1);
    for s in 1..=senders {
        goal += &format!("r{s}: recv {bytes}b from {s} tag 1\n");
    }
    goal += "}\n";
    for s in 1..=senders {
        goal += &format!("rank {s} {{\ns: send {bytes}b to 0 tag 1\n}}\n");
    }
    let text = format!(
        "{CLIQUE}\n[workload]\nbytes_per_phit = 16\neager_limit = {bytes}\n[[workload.jobs]]\nkind = \"goal\"\n\
         contents = \"\"\"\n{goal}\"\"\"\n"
    );
    let mut sets = vec![
        "router.packet_size=16",
        "router.input_buffer=64",
        "router.output_buffer=128",
        "simulation.cycles=2000000",
    ];
    sets.extend_from_slice(extra);
    run(&build(&text, &sets), parts)
}

/// Packets the switches marked over the run.
fn marked(r: &RunResult) -> u64 {
    r.samples.iter().map(|x| x.counters.marked_packets).sum()
}

fn completion(r: &RunResult) -> u64 {
    assert_eq!(r.status, Status::Completed);
    r.workload.as_ref().unwrap().jobs[0].completion_time.expect("finished")
}

/// [`CLIQUE`] with one message from rank 0 to rank 1.
fn one_message() -> String {
    format!(
        "{CLIQUE}\n[workload]\n[[workload.jobs]]\nkind = \"goal\"\ncontents = \"\"\"\nnum_ranks 2\n\
         rank 0 {{\ns: send 64b to 1 tag 1\n}}\nrank 1 {{\nr: recv 64b from 0 tag 1\n}}\n\"\"\"\n"
    )
}

#[test]
fn the_fabric_round_trip_is_a_full_packet_out_and_an_ack_back() {
    let sim = build(&one_message(), &[]);
    // Every endpoint is one hop from endpoint 0: a packet's tail lands L + S - 1 after its
    // head left, an ACK's likewise.
    assert_eq!(fabric_rtt(&sim.net, 2, false, 16, 2), (L + 15) + (L + 1));
    // Store-and-forward: each of the two switches waits for the tail too.
    assert_eq!(fabric_rtt(&sim.net, 2, true, 16, 2), (L + 3 * 15) + (L + 3));
}

#[test]
fn a_lone_flow_runs_at_line_rate_under_nscc() {
    // The window starts at 1.5 bandwidth-delay products: one flow is never held back.
    let without = completion(&incast(1, 64 * 256, 1, &["transport.kind=\"uec\""]));
    let with = incast(1, 64 * 256, 1, NSCC);
    assert_eq!(completion(&with), without);
    assert_eq!(marked(&with), 0);
}

#[test]
fn an_incast_is_drained_by_ecn_marks_identically_on_any_partitioning() {
    let bytes = 256 * 256; // 256 packets a sender
    let plain = incast(7, bytes, 1, &["transport.kind=\"uec\""]);
    let one = incast(7, bytes, 1, NSCC);
    let (p, n) = (&plain.summary, &one.summary);
    // Switches mark; the senders' windows shrink, and the queue at the receiver's switch
    // with them: the packets' time in the network falls.
    assert!(marked(&one) > 0, "{n:?}");
    assert_eq!(marked(&plain), 0);
    assert!(
        n.network_latency_mean < 0.5 * p.network_latency_mean,
        "network latency {} under NSCC against {} without",
        n.network_latency_mean,
        p.network_latency_mean
    );
    // The receiver's link stays busy: the job ends within 5 % of the same job without it,
    // and never before the link could carry it (7 x 256 packets of 16 phits).
    let (c_plain, c_nscc) = (completion(&plain), completion(&one));
    assert!(c_nscc >= 7 * 256 * 16, "{c_nscc}");
    assert!((c_nscc as f64) < 1.05 * c_plain as f64, "{c_nscc} against {c_plain}");
    // Nothing lost or sent twice on lossless links.
    assert_eq!((n.retransmitted_packets, n.in_flight_end), (0, 0));
    for parts in [2, 4] {
        let other = incast(7, bytes, parts, NSCC);
        assert_eq!(other.summary, one.summary, "{parts} partitions");
    }
}

#[test]
fn bad_nscc_settings_name_their_key() {
    let text = one_message();
    let with = |extra: &[&str]| {
        let mut sets = NSCC.to_vec();
        sets.extend_from_slice(extra);
        build_error(&text, &sets)
    };
    let e = with(&["congestion.control=\"infiniband\""]);
    assert!(e.contains("transport.uec.congestion"), "{e}");
    let e = with(&["transport.uec.ecn_kmax=17"]);
    assert!(e.contains("transport.uec.ecn_kmax") && e.contains("output_buffer = 16"), "{e}");
    let e = with(&["transport.uec.ecn_kmin=8", "transport.uec.ecn_kmax=4"]);
    assert!(e.contains("transport.uec.ecn_kmin") && e.contains("below ecn_kmax"), "{e}");
    // NSCC's keys without NSCC.
    let e = build_error(&text, &["transport.kind=\"uec\"", "transport.uec.rtt=100"]);
    assert!(e.contains("transport.uec.congestion") && e.contains("NSCC"), "{e}");
}
