//! Packets as long as their data: a message of `B` bytes is full packets of the MTU
//! (`router.packet_size`) and a last packet of what remains (at least one phit; every packet
//! with `router.header_phits` of header), so that on an idle network a message takes
//! exactly LogGP's `L + (s - 1) G`: `L` the latency of its first phit, `s` its phits and `G`
//! one cycle per phit (a link's rate), for messages of 1 byte to 1 MiB and MTUs of 256 bytes
//! and 4 KiB. A rendezvous adds the request's and the clear-to-send's `L` each: they are
//! one phit (and a header) long.

mod common;
use common::{build, CLIQUE};
use xnet_models::sim::{RunResult, Simulation, Status};

/// Bytes a phit carries here.
const BYTES_PER_PHIT: u64 = 16;

/// Cycles from a packet's first phit leaving its source endpoint to that phit reaching
/// the destination endpoint over one switch-to-switch hop of [`CLIQUE`]: 2 terminal links
/// of 3, a link of 5, 2 switches of router delay 2.
const L: u64 = 2 * 3 + 5 + 2 * 2;

/// Two ranks exchange one message of `bytes` each way at once (a butterfly of 2) on
/// [`CLIQUE`] with `mtu` phits per packet, `header` phits of header and the eager limit
/// `eager`.
fn exchange(bytes: u64, mtu: u16, header: u16, eager: u64) -> Simulation {
    let text = format!(
        "{CLIQUE}\n[workload]\nbytes_per_phit = {BYTES_PER_PHIT}\neager_limit = {eager}\n\
         [[workload.jobs]]\nkind = \"butterfly\"\nranks = 2\nmessage_bytes = {bytes}\n"
    );
    let buffers = (mtu as u32).max(16);
    let sets = [
        format!("router.packet_size={mtu}"),
        format!("router.header_phits={header}"),
        format!("router.input_buffer={buffers}"),
        format!("router.output_buffer={buffers}"),
        "simulation.cycles=1000000".to_string(),
    ];
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    build(&text, &sets)
}

fn run(sim: &Simulation) -> RunResult {
    let plan = sim.plan(1).unwrap();
    sim.run(sim.config.traffic.load, &plan.assignment, &mut |_| {}, None).unwrap()
}

fn completion(r: &RunResult) -> u64 {
    assert_eq!(r.status, Status::Completed);
    r.workload.as_ref().unwrap().jobs[0].completion_time.expect("finished")
}

/// Phits of a message of `bytes` in packets of `mtu` phits with `header` phits each.
fn phits(bytes: u64, mtu: u16, header: u16) -> u64 {
    let payload = (mtu - header) as u64 * BYTES_PER_PHIT;
    let packets = bytes.div_ceil(payload).max(1);
    bytes.div_ceil(BYTES_PER_PHIT).max(1) + packets * header as u64
}

const SIZES: &[u64] =
    &[1, 2, 15, 16, 17, 255, 256, 257, 1000, 4095, 4096, 4097, 65_535, 65_536, 100_000, 1 << 20];

#[test]
fn an_eager_message_takes_loggp_latency_plus_its_phits() {
    for mtu in [16u16, 256] {
        for &bytes in SIZES {
            let r = run(&exchange(bytes, mtu, 0, u64::MAX >> 1));
            let s = bytes.div_ceil(BYTES_PER_PHIT);
            assert_eq!(completion(&r), L + s - 1, "{bytes} bytes, MTU {} bytes", mtu as u64 * BYTES_PER_PHIT);
            // Every phit sent is a phit of data: the packets carry no padding.
            let job = &r.workload.as_ref().unwrap().jobs[0];
            assert_eq!(job.packets_received, 2 * bytes.div_ceil(mtu as u64 * BYTES_PER_PHIT).max(1));
        }
    }
}

#[test]
fn headers_are_counted_in_every_packet_and_shorten_the_data_a_packet_carries() {
    for (mtu, header) in [(16u16, 2u16), (256, 4)] {
        for &bytes in &[1u64, 224, 225, 4000, 1 << 20] {
            let r = run(&exchange(bytes, mtu, header, u64::MAX >> 1));
            assert_eq!(
                completion(&r),
                L + phits(bytes, mtu, header) - 1,
                "{bytes} bytes, MTU {mtu}, header {header}"
            );
        }
    }
}

#[test]
fn a_rendezvous_adds_a_one_phit_request_and_clear_to_send() {
    for &bytes in &[257u64, 4097, 1 << 20] {
        let r = run(&exchange(bytes, 16, 0, 256));
        // The request's first phit arrives at L, the clear-to-send's L later, and the data
        // goes when it arrives.
        assert_eq!(completion(&r), 3 * L + bytes.div_ceil(BYTES_PER_PHIT) - 1, "{bytes} bytes");
    }
}

/// A header at least as long as the packet is refused, naming the key.
#[test]
fn a_header_must_leave_room_for_data() {
    let text = format!("{CLIQUE}\n[traffic]\npattern = \"uniform\"\nload = 0.1\n");
    let e = xnet_models::config::Config::parse(&text, &["router.header_phits=4".to_string()]).unwrap_err();
    assert!(
        e.to_string().contains("router.header_phits")
            && e.to_string().contains("below router.packet_size (4)"),
        "{e}"
    );
}

/// Synthetic traffic of several packet lengths (`traffic.packet_sizes`): the offered load
/// stays the load in phits, the packets come at the load over their mean length, each
/// drawn with its weight; a size above the MTU is refused, naming the entry.
#[test]
fn synthetic_packets_of_several_lengths_offer_the_load_in_phits() {
    let text = format!(
        "{CLIQUE}\n[traffic]\npattern = \"uniform\"\nload = 0.3\n\
         packet_sizes = [{{ phits = 1, weight = 3 }}, {{ phits = 4, weight = 1 }}]\n"
    );
    let r = run(&build(&text, &["simulation.cycles=40000", "simulation.warmup=10000"]));
    let s = &r.summary;
    assert!((s.offered_load - 0.3).abs() < 0.01, "offered {}", s.offered_load);
    assert!((s.accepted_load - s.offered_load).abs() < 0.01, "{} of {}", s.accepted_load, s.offered_load);
    // The mean length: 3 of 4 packets are 1 phit, 1 of 4 is 4 phits: 1.75.
    let mean = s.offered_load * 30_000.0 * 8.0 / s.measured_packets as f64;
    assert!((mean - 1.75).abs() < 0.03, "mean packet {mean} phits");
    let e = xnet_models::config::Config::parse(
        &text.replace("phits = 4, weight = 1", "phits = 5, weight = 1"),
        &[],
    )
    .unwrap_err();
    assert_eq!(e.key, "traffic.packet_sizes[1].phits");
}
