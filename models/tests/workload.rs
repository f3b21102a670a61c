//! Application workloads: analytic completion times on an idle network, dependency order,
//! conservation of messages, determinism across partitions, and clear endings when a job
//! cannot finish.

mod common;
use common::{build, CLIQUE};
use std::collections::{HashMap, HashSet};
use xnet_models::config::Config;
use xnet_models::schedule::Op;
use xnet_models::sim::{RunResult, Simulation, Status};
use xnet_models::workload::{Workload, WORKLOADS, WORKLOAD_PACKET};

/// Zero-load latency of a message of one phit over one switch-to-switch hop in [`CLIQUE`]:
/// 2 terminal links + 1 link + 2 switches x router delay (a message of `s` phits takes
/// `s - 1` more, models/tests/message_timing.rs).
const ONE_HOP: u64 = 2 * 3 + 5 + 2 * 2;

fn with_jobs(base: &str, jobs: &str) -> String {
    format!("{base}\n[workload]\n{jobs}")
}

fn run(sim: &Simulation, parts: u32) -> RunResult {
    let plan = sim.plan(parts).unwrap();
    sim.run(sim.config.traffic.load, &plan.assignment, &mut |_| {}, None).unwrap()
}

fn completion(r: &RunResult, job: usize) -> u64 {
    let w = r.workload.as_ref().expect("workload results");
    w.jobs[job].completion_time.unwrap_or_else(|| panic!("job {job} unfinished: {:?}", w.diagnosis(0)))
}

#[test]
fn a_ring_exchange_on_an_idle_network_takes_its_steps_times_the_zero_load_latency() {
    // Ring all-reduce of 8 ranks: 2 x 7 steps, each 8 bytes (one phit) to the next rank; then
    // compute.
    let text = with_jobs(
        CLIQUE,
        "[[workload.jobs]]\nkind = \"allreduce\"\nranks = 8\nbytes = 64\nalgorithm = \"ring\"\ncompute = 37\n",
    );
    let r = run(&build(&text, &[]), 1);
    assert_eq!(r.status, Status::Completed);
    assert_eq!(completion(&r, 0), 14 * ONE_HOP + 37);
    let job = &r.workload.as_ref().unwrap().jobs[0];
    assert!(job.rank_finish.iter().all(|&t| t == 14 * ONE_HOP + 37), "{:?}", job.rank_finish);
    assert_eq!(job.iteration_end, vec![14 * ONE_HOP + 37]);
    // Every message took exactly the zero-load latency.
    assert_eq!(
        (job.messages, job.message_latency.max(), job.message_latency.mean()),
        (8 * 14, ONE_HOP, ONE_HOP as f64)
    );
}

#[test]
fn a_butterfly_without_contention_takes_log2_steps_per_iteration() {
    let text = with_jobs(
        CLIQUE,
        "[[workload.jobs]]\nkind = \"butterfly\"\nranks = 8\nmessage_bytes = 10\niterations = 3\ncompute = 100\n",
    );
    let r = run(&build(&text, &[]), 2);
    let per_iteration = 3 * ONE_HOP + 100;
    assert_eq!(completion(&r, 0), 3 * per_iteration);
    let job = &r.workload.as_ref().unwrap().jobs[0];
    assert_eq!(job.iteration_end, vec![per_iteration, 2 * per_iteration, 3 * per_iteration]);
    assert_eq!(job.iteration_mean_end[1], (2 * per_iteration) as f64);
}

#[test]
fn a_message_of_several_packets_streams_behind_its_first() {
    // 4 packets of 4 phits and one of 3 (44 bytes): the last leaves 4 x 4 cycles after the
    // first (link rate), so a step takes a phit's zero-load latency plus 18 cycles.
    let text = with_jobs(CLIQUE, "[[workload.jobs]]\nkind = \"butterfly\"\nranks = 2\nmessage_bytes = 300\n");
    let r = run(&build(&text, &[]), 1);
    assert_eq!(completion(&r, 0), ONE_HOP + 18);
    assert_eq!(r.workload.as_ref().unwrap().jobs[0].packets_received, 10);
}

/// A delivered workload packet: `(sender endpoint, receiver endpoint, step, created,
/// delivered)`.
type Arrival = (u32, u32, u32, u64, u64);

/// Every workload packet delivered in a run of `sim` on 2 partitions.
fn workload_deliveries(sim: &mut Simulation) -> (RunResult, Vec<Arrival>) {
    sim.record_deliveries = true;
    let r = run(sim, 2);
    let w: &Workload = sim.workload().unwrap();
    let job = &w.jobs[0];
    let rows = r
        .deliveries
        .iter()
        .filter(|d| d.id & WORKLOAD_PACKET != 0)
        .map(|d| {
            // A packet names its sender's op; a stencil's iteration is one step.
            let (_, rank) = w.rank_at(d.src).unwrap();
            let step = d.id as u32 / job.ops.graph.ops_per_iteration(rank);
            (d.src, d.dst, step, d.created, d.delivered)
        })
        .collect();
    (r, rows)
}

#[test]
fn no_rank_sends_before_the_messages_it_depends_on_arrive() {
    // A 2D stencil under load (exchange: a step's sends follow the previous step's
    // receives and computation) ...
    let text = with_jobs(
        common::HYPERX,
        "[[workload.jobs]]\nkind = \"stencil2d\"\ngrid = [8, 8]\nhalo_bytes = 600\niterations = 4\ncompute = 30\n",
    );
    let mut sim = build(&text, &["simulation.cycles=200000", "simulation.warmup=0", "traffic.load=0.3"]);
    let (r, rows) = workload_deliveries(&mut sim);
    assert_eq!(r.status, Status::Completed);
    let mut last_in: HashMap<(u32, u32), u64> = HashMap::new();
    for &(_, dst, step, _, delivered) in &rows {
        let t = last_in.entry((dst, step)).or_default();
        *t = (*t).max(delivered);
    }
    for &(src, _, step, created, _) in &rows {
        if step > 0 {
            assert!(
                created >= last_in[&(src, step - 1)] + 30,
                "endpoint {src} sent step {step} at {created} before its step {} was in and computed",
                step - 1
            );
        }
    }
    // ... and a waterfall (pipeline: a wave's sends follow the same wave's receives).
    let text = with_jobs(
        common::HYPERX,
        "[[workload.jobs]]\nkind = \"waterfall\"\ngrid = [8, 8]\nmessage_bytes = 16\niterations = 20\n",
    );
    let mut sim = build(&text, &["simulation.cycles=200000", "simulation.warmup=0", "traffic.load=0"]);
    let (r, rows) = workload_deliveries(&mut sim);
    assert_eq!(r.status, Status::Completed);
    let mut last_in: HashMap<(u32, u32), u64> = HashMap::new();
    for &(_, dst, step, _, delivered) in &rows {
        let t = last_in.entry((dst, step)).or_default();
        *t = (*t).max(delivered);
    }
    let mut forwarded = 0;
    for &(src, _, step, created, _) in &rows {
        if let Some(&t) = last_in.get(&(src, step)) {
            assert!(
                created >= t,
                "endpoint {src} forwarded wave {step} at {created}, before it arrived at {t}"
            );
            forwarded += 1;
        }
    }
    // Every rank but the first receives each wave: 2 x 8 x 7 messages per wave, of which
    // only those from rank 0 (2 per wave) were not forwarded.
    assert_eq!(rows.len(), 20 * 2 * 8 * 7);
    assert_eq!(forwarded, rows.len() - 20 * 2);
}

#[test]
fn every_message_is_delivered_once_and_every_rank_finishes() {
    // Two jobs on one network past saturation: a linear all-to-all of 4-packet messages on
    // random endpoints and a 3D stencil, with background traffic from the other endpoints.
    let text = with_jobs(
        common::RRG,
        "[[workload.jobs]]\nkind = \"alltoall\"\nranks = 40\nmessage_bytes = 200\nalgorithm = \"linear\"\niterations = 2\nmapping = \"random\"\n\
         [[workload.jobs]]\nkind = \"stencil3d\"\ngrid = [4, 4, 2]\nhalo_bytes = 100\niterations = 5\n",
    );
    let mut sim = build(&text, &["simulation.cycles=400000", "traffic.load=0.5"]);
    sim.record_deliveries = true;
    let r = run(&sim, 3);
    assert_eq!(r.status, Status::Completed);
    let w = r.workload.as_ref().unwrap();
    // 200 bytes in 64-byte packets (16 bytes x 4 phits): 4 packets per message.
    let (a2a, stencil) = (&w.jobs[0], &w.jobs[1]);
    assert_eq!(a2a.messages, 2 * 40 * 39);
    assert_eq!((a2a.packets_sent, a2a.packets_received), (4 * 2 * 40 * 39, 4 * 2 * 40 * 39));
    // A 4 x 4 x 2 periodic grid: the z neighbours coincide (two messages to one rank).
    assert_eq!(stencil.packets_sent, 5 * 32 * 6 * 2);
    assert_eq!(stencil.packets_received, stencil.packets_sent);
    assert!(a2a.rank_finish.iter().chain(&stencil.rank_finish).all(|&t| t > 0));
    assert!(w.stalled.is_empty());
    // A synthetic packet's id is unique; an application packet's names its message (its
    // sender and the sender's send op): each message's packets arrive, once each.
    let mut per_id: HashMap<u64, u64> = HashMap::new();
    for d in &r.deliveries {
        *per_id.entry(d.id).or_default() += 1;
    }
    let built = sim.workload().unwrap();
    for (&id, &n) in &per_id {
        if id & WORKLOAD_PACKET == 0 {
            assert_eq!(n, 1, "packet {id} was delivered {n} times");
            continue;
        }
        let src = r.deliveries.iter().find(|d| d.id == id).unwrap().src;
        let (j, rank) = built.rank_at(src).unwrap();
        let Op::Send { bytes, .. } = built.jobs[j as usize].ops.graph.op(rank, id as u32) else { panic!() };
        assert_eq!(n, built.packets(bytes) as u64, "message {id:#x}");
    }
    let workload_packets = r.deliveries.iter().filter(|d| d.id & WORKLOAD_PACKET != 0).count() as u64;
    assert_eq!(workload_packets, a2a.packets_sent + stencil.packets_sent);
    // The background kept flowing from the endpoints that run no rank.
    assert!(r.deliveries.len() as u64 > workload_packets);
    let ranks: HashSet<u32> = sim.workload().unwrap().jobs.iter().flat_map(|j| j.endpoints.clone()).collect();
    assert!(r.deliveries.iter().filter(|d| d.id & WORKLOAD_PACKET == 0).all(|d| !ranks.contains(&d.src)));
}

fn fingerprint(r: &RunResult) -> String {
    format!("{:?}|{}|{:?}|{:?}|{:?}|{:?}", r.status, r.time, r.summary, r.workload, r.links, r.samples)
}

#[test]
fn workload_results_are_identical_for_any_partitioning() {
    for (base, jobs) in [
        (
            common::DRAGONFLY,
            "[[workload.jobs]]\nkind = \"random_permutation\"\nranks = 50\nmessage_bytes = 500\niterations = 4\ncompute = 20\nmapping = \"random\"\n\
             [[workload.jobs]]\nkind = \"allreduce\"\nranks = 16\nbytes = 4096\nalgorithm = \"recursive_doubling\"\n",
        ),
        (common::HYPERX, "[[workload.jobs]]\nkind = \"alltoall\"\nranks = 64\nmessage_bytes = 64\n"),
    ] {
        let sim = build(&with_jobs(base, jobs), &["simulation.cycles=100000", "traffic.load=0.2"]);
        let reference = fingerprint(&run(&sim, 1));
        assert!(reference.contains("completion_time: Some("), "{reference}");
        for parts in [2, 4] {
            assert_eq!(fingerprint(&run(&sim, parts)), reference, "{parts} partitions differ from 1");
        }
    }
}

#[test]
fn a_job_that_cannot_finish_ends_with_a_diagnosis() {
    // Too few cycles: the run ends at the limit with status `unfinished`, naming the ranks.
    let text = with_jobs(
        CLIQUE,
        "[[workload.jobs]]\nkind = \"butterfly\"\nranks = 8\nmessage_bytes = 10\niterations = 50\n",
    );
    let r = run(&build(&text, &["simulation.cycles=300"]), 2);
    assert_eq!(r.status, Status::Unfinished);
    let w = r.workload.as_ref().unwrap();
    assert_eq!(w.jobs[0].completion_time, None);
    assert_eq!(w.stalled.len(), 8);
    let why = w.diagnosis(r.summary.in_flight_end).unwrap();
    assert!(why.contains("8 of 8 ranks unfinished") && why.contains("rank 0 in iteration"), "{why}");
    // A deadlocking network (a ring without datelines) stops at the watchdog.
    let ring = r#"
        [simulation]
        cycles = 200000
        sample_period = 100
        watchdog = 1000
        [topology]
        kind = "torus"
        sides = [8]
        endpoints_per_switch = 2
        [router]
        vcs = 1
        packet_size = 4
        input_buffer = 4
        output_buffer = 4
        [routing]
        algorithm = "dor"
        vc_policy = "any"
        [workload]
        [[workload.jobs]]
        kind = "alltoall"
        ranks = 16
        message_bytes = 4096
        algorithm = "linear"
    "#;
    let r = run(&build(ring, &[]), 1);
    assert_eq!(r.status, Status::Deadlock);
    assert!(!r.blocked.is_empty());
    let why = r.workload.as_ref().unwrap().diagnosis(r.summary.in_flight_end).unwrap();
    assert!(why.contains("still in flight"), "{why}");
}

#[test]
fn bad_workloads_are_refused_naming_the_key() {
    let err = |jobs: &str, set: &[&str]| {
        let o: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        match Config::parse(&with_jobs(CLIQUE, jobs), &o) {
            Err(e) => e.to_string(),
            Ok(cfg) => Simulation::build(cfg).err().expect("refused").to_string(),
        }
    };
    let e = err("[[workload.jobs]]\nkind = \"butterfly\"\nranks = 6\nmessage_bytes = 1\n", &[]);
    assert!(e.contains("workload.jobs[0].ranks") && e.contains("power-of-two"), "{e}");
    let e = err("[[workload.jobs]]\nkind = \"stencil2d\"\ngrid = [3, 3]\nhalo_bytes = 1\n", &[]);
    assert!(e.contains("9 ranks") && e.contains("only 8"), "{e}");
    let e = err(
        "[[workload.jobs]]\nkind = \"stencil2d\"\ngrid = [2, 2]\nhalo_bytes = 1\nfirst_endpoint = 6\n",
        &[],
    );
    assert!(e.contains("workload.jobs[0].first_endpoint"), "{e}");
    let e = err(
        "[[workload.jobs]]\nkind = \"butterfly\"\nranks = 4\nmessage_bytes = 1\n",
        &["traffic.phits_per_endpoint=16"],
    );
    assert!(e.contains("traffic"), "{e}");
    let e = err(
        "[[workload.jobs]]\nkind = \"alltoall\"\nranks = 4\nmessage_bytes = 100\niterations = 300000000\n",
        &[],
    );
    // 10 ops per iteration (3 steps of a receive, a send and their join; the computation).
    assert!(e.contains("workload.jobs[0]") && e.contains("3000000000 ops") && e.contains("2^31 - 1"), "{e}");
}

/// A rank mapping file (`mapping = "file"`) is read with the reader the xnet command passes
/// in (its file access) into `mapping_contents`: the configuration's text records the
/// mapping, a recorded configuration places the ranks without the file, and errors name
/// the key and the file.
#[test]
fn mapping_files_are_read_into_the_configuration_and_recorded() {
    let job = |mapping: &str| {
        with_jobs(
            CLIQUE,
            &format!("[[workload.jobs]]\nkind = \"butterfly\"\nranks = 4\nmessage_bytes = 8\n{mapping}"),
        )
    };
    let text = job("mapping = \"file\"\nmapping_file = \"ranks.map\"\n");
    let mapping = "# one endpoint per rank\n7\n5\n\n3\n1 # last\n";
    let asked = std::cell::RefCell::new(Vec::new());
    let read = |path: &str| {
        asked.borrow_mut().push(path.to_string());
        match path {
            "ranks.map" => Ok(mapping.as_bytes().to_vec()),
            "bad.map" => Ok(b"7\nfive\n".to_vec()),
            _ => Err("No such file or directory".to_string()),
        }
    };
    let placed = |cfg: &Config| {
        Workload::build(cfg.workload.as_ref().unwrap(), 8, 4.into(), None, 1)
            .map(|w| w.jobs[0].endpoints.clone())
    };
    let cfg = Config::parse_with_files(&text, &[], &read).expect("mapping read");
    assert_eq!(asked.borrow().as_slice(), ["ranks.map"]);
    assert_eq!(placed(&cfg).unwrap(), vec![7, 5, 3, 1]);
    let recorded: toml::Table = toml::from_str(&cfg.text).unwrap();
    assert_eq!(recorded["workload"]["jobs"][0]["mapping_contents"].as_str(), Some(mapping));
    // The recorded configuration: the same placement, the file not read again.
    asked.borrow_mut().clear();
    let again = Config::parse_with_files(&cfg.text, &[], &read).expect("recorded config");
    assert!(asked.borrow().is_empty());
    assert_eq!(placed(&again).unwrap(), vec![7, 5, 3, 1]);
    assert_eq!(placed(&Config::parse(&cfg.text, &[]).unwrap()).unwrap(), vec![7, 5, 3, 1]);
    // Inline, without a file.
    let inline =
        Config::parse(&job("mapping = \"file\"\nmapping_contents = \"0\\n2\\n4\\n6\"\n"), &[]).unwrap();
    assert_eq!(placed(&inline).unwrap(), vec![0, 2, 4, 6]);
    // Errors name the key and the file.
    let err = |text: &str| Config::parse_with_files(text, &[], &read).unwrap_err().to_string();
    let e = err(&job("mapping = \"file\"\nmapping_file = \"gone.map\"\n"));
    assert_eq!(
        e,
        "workload.jobs[0].mapping_file: cannot read the rank mapping gone.map: No such file or directory"
    );
    let e = err(&job("mapping = \"file\"\nmapping_file = \"bad.map\"\n"));
    assert!(e.starts_with("workload.jobs[0].mapping_file: `bad.map` line 2: `five`"), "{e}");
    let e = err(&job("mapping = \"random\"\nmapping_contents = \"1\"\n"));
    assert!(e.starts_with("workload.jobs[0].mapping_contents: only applies to mapping = \"file\""), "{e}");
    let e = err(&job("mapping = \"file\"\n"));
    assert!(e.contains("workload.jobs[0].mapping_file: missing"), "{e}");
    // Not read (parsed without the xnet command's reader): refused when placing the ranks.
    let e = placed(&Config::parse(&text, &[]).unwrap()).unwrap_err().to_string();
    assert!(e.contains("workload.jobs[0].mapping_file") && e.contains("was not read"), "{e}");
}

#[test]
fn every_workload_documents_exactly_its_keys() {
    for w in WORKLOADS {
        let text = with_jobs(CLIQUE, &format!("[[workload.jobs]]\nkind = \"{}\"\nzz_probe = 1\n", w.name));
        let e = Config::parse(&text, &[]).unwrap_err().to_string();
        // Serde lists them as "expected `a` or `b`" or "expected one of `a`, `b`, `c`".
        let listed = e.split("expected").nth(1).unwrap_or_else(|| panic!("{}: {e}", w.name));
        let mut keys: Vec<String> = listed
            .replace("one of", "")
            .replace(" or ", ",")
            .split(',')
            .map(|k| k.trim().trim_matches('`').to_string())
            .collect();
        keys.sort();
        let mut documented: Vec<String> = w.settings.iter().map(|s| s.key.to_string()).collect();
        documented.sort();
        assert_eq!(keys, documented, "workload {}", w.name);
    }
}

/// The memory estimate counts each job's ops without building them: within a small factor
/// of the ops built, for every kind (one iteration; a random permutation stores each).
#[test]
fn the_ops_estimate_is_close_to_the_ops_built() {
    use xnet_models::workload::{job_ops, JobContext};
    let jobs = [
        "kind = \"stencil2d\"\ngrid = [8, 8]\nhalo_bytes = 64",
        "kind = \"stencil3d\"\ngrid = [4, 4, 4]\nhalo_bytes = 64\nperiodic = true",
        "kind = \"butterfly\"\nranks = 64\nmessage_bytes = 64",
        "kind = \"waterfall\"\ngrid = [8, 8]\nmessage_bytes = 64",
        "kind = \"alltoall\"\nranks = 64\nmessage_bytes = 64",
        "kind = \"alltoall\"\nranks = 64\nmessage_bytes = 64\nalgorithm = \"linear\"",
        "kind = \"allreduce\"\nranks = 64\nbytes = 6400",
        "kind = \"random_permutation\"\nranks = 64\nmessage_bytes = 64\niterations = 5",
        "kind = \"collectives\"\nranks = 64\noperations = [{collective = \"bcast\", bytes = 64}, \
         {collective = \"gather\", bytes = 64, algorithm = \"linear\", root = 3}, \
         {collective = \"allreduce\", bytes = 65536, comm_size = 8}, {collective = \"alltoall\", bytes = 8}, \
         {collective = \"barrier\"}]",
        "kind = \"collectives\"\nranks = 16\noperations = [{collective = \"allreduce\", bytes = 1000000, \
         library = \"nccl\"}, {collective = \"bcast\", bytes = 100000, library = \"nccl\", protocol = \"ll\", root = 5}]",
        "kind = \"training\"\nlayers = 4\nhidden = 256\nheads = 4\nsequence = 128\nvocabulary = 1000\n\
         global_batch = 8\ntensor = 2\npipeline = 2\ndata = 2",
        "kind = \"goal\"\ncontents = \"\"\"\nnum_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 1\nl2: calc 5\nl2 requires l1\n}\n\
         rank 1 {\nrecv 8b from 0 tag 1\n}\n\"\"\"",
    ];
    let text: String = jobs.iter().map(|j| format!("[[workload.jobs]]\n{j}\n")).collect();
    let cfg = Config::parse(&with_jobs(CLIQUE, &text), &[]).unwrap();
    let section = cfg.workload.as_ref().unwrap();
    for (j, spec) in section.jobs.iter().enumerate() {
        let ops = job_ops(section, j, 1).unwrap();
        let built: u64 = (0..ops.graph.num_ranks()).map(|r| u64::from(ops.graph.ops_in_rank(r))).sum();
        let job = JobContext {
            index: j,
            iterations: spec.iterations,
            compute: spec.compute,
            seed: 1,
            ps_per_cycle: section.ps_per_cycle,
            bytes_per_phit: section.bytes_per_phit,
            node_gpus: section.node_gpus,
        };
        let estimate = spec.kind.ops_estimate(&job);
        // 640 built against 704 estimated for the stencil, 24,256 against 40,320 for the ring.
        assert!(
            10 * estimate >= 9 * built && estimate <= 2 * built,
            "{}: built {built}, estimated {estimate}",
            jobs[j]
        );
    }
}

/// A `collectives` job of one NCCL operation (`fields` of its table) on [`CLIQUE`].
fn nccl_job(ranks: u32, fields: &str) -> String {
    with_jobs(
        CLIQUE,
        &format!("[[workload.jobs]]\nkind = \"collectives\"\nranks = {ranks}\noperations = [{{library = \"nccl\", {fields}}}]\n"),
    )
}

#[test]
fn nccl_ring_allreduce_on_an_idle_network_streams_behind_the_first_posted_buffer() {
    // 8 ranks, one channel, Simple with a 64 KiB buffer: 16 KiB is one loop of 8 chunks of
    // 2 KiB, each sent as 2 slices of 1 KiB (64 cycles: 16 packets of 4 phits). Every
    // receiver posts its first 4 buffers at once; the first record (64 bytes: one packet of
    // 4 phits) reaches its sender ONE_HOP + 3 cycles later. From then on every NIC sends
    // without a pause: its 4 x 7 slices, and the 4 x 7 - 4 records it posts as its slots
    // free (4 cycles each). The last slice's last packet arrives ONE_HOP + 3 - 4 cycles
    // after it leaves.
    let slices = 4 * 7;
    let expected = (ONE_HOP + 3) + slices * 64 + (slices - 4) * 4 + (ONE_HOP + 3 - 4);
    let fields = "collective = \"allreduce\", bytes = 16384, algorithm = \"ring\", protocol = \"simple\", \
                  channels = 1, buffer = 65536, hop_ns = 0";
    for parts in [1, 2] {
        let r = run(&build(&nccl_job(8, &format!("{fields}, launch_ns = 0")), &[]), parts);
        assert_eq!(completion(&r, 0), expected, "{parts} partitions");
        // Each rank: a slice and a posted buffer per slice it receives.
        let job = &r.workload.as_ref().unwrap().jobs[0];
        assert_eq!(job.messages, 8 * 2 * slices);
        // The collective, timed: all of it; nccl-tests' bus bandwidth is 2 x 7/8 of the
        // algorithm's (16 KiB over its time).
        let c = &job.collectives[0];
        assert_eq!((c.iteration, c.index, c.start, c.end, c.parts), (0, 0, 0, expected, 8));
        assert_eq!((c.phase.name.as_str(), c.phase.bytes), ("allreduce (ring)", 16384));
        assert!((c.busbw() - 16384.0 / expected as f64 * 1.75).abs() < 1e-9);
    }
    // The launch (640 ns: 1,000 cycles of 0.64 ns) comes first.
    let r = run(&build(&nccl_job(8, &format!("{fields}, launch_ns = 640")), &[]), 1);
    assert_eq!(completion(&r, 0), expected + 1000);
}

#[test]
fn nccl_ring_broadcast_in_ll_pays_the_gpu_at_every_hop_and_twice_the_bytes() {
    // 4 ranks, root 0: a chain 0 -> 1 -> 2 -> 3 of one chunk. LL sends 512 bytes as 64
    // lines of 16 bytes: 1 KiB, 64 cycles. Each rank's GPU takes 64 ns (100 cycles) per
    // slice: the root before it sends, every other rank after its data is in. The posted
    // buffers (sent at once) arrive long before the data is ready.
    let fields =
        "collective = \"bcast\", bytes = 512, protocol = \"ll\", channels = 1, launch_ns = 0, hop_ns = 64";
    let r = run(&build(&nccl_job(4, fields), &[]), 2);
    let hop = 64 + (ONE_HOP + 3 - 4);
    assert_eq!(completion(&r, 0), 4 * 100 + 3 * hop);
    let job = &r.workload.as_ref().unwrap().jobs[0];
    assert_eq!((job.messages, job.packets_received), (3 + 3, 3 * 16 + 3));
}

#[test]
fn nccl_operations_refuse_what_nccl_does_not_run() {
    let error = |ranks: u32, fields: &str| {
        Config::parse(&nccl_job(ranks, fields), &[])
            .and_then(|c| {
                let section = c.workload.clone().unwrap();
                xnet_models::workload::job_ops(&section, 0, 1).map(|_| ())
            })
            .unwrap_err()
            .to_string()
    };
    let e = error(4, "collective = \"gather\", bytes = 8");
    assert!(e.contains("operations[0].library") && e.contains("not gather"), "{e}");
    let e = error(4, "collective = \"alltoall\", bytes = 8, protocol = \"ll\"");
    assert!(e.contains("operations[0].protocol") && e.contains("grouped sends"), "{e}");
    let e = error(4, "collective = \"allreduce\", bytes = 8, algorithm = \"nvls\"");
    assert!(e.contains("operations[0].algorithm") && e.contains("known: ring, tree"), "{e}");
    let e = error(4, "collective = \"bcast\", bytes = 8, algorithm = \"tree\"");
    assert!(e.contains("operations[0].algorithm") && e.contains("allreduce only"), "{e}");
    let e = error(4, "collective = \"allreduce\", bytes = 8, protocol = \"ll64\"");
    assert!(e.contains("operations[0].protocol") && e.contains("simple, ll, ll128"), "{e}");
    let e = error(4, "collective = \"allreduce\", bytes = 8, channels = 65");
    assert!(e.contains("operations[0].channels") && e.contains("1 to 64"), "{e}");
    let e = error(4, "collective = \"allreduce\", bytes = 8, buffer = 100");
    assert!(e.contains("operations[0].buffer") && e.contains("at least"), "{e}");
    let e = Config::parse(
        &with_jobs(
            CLIQUE,
            "[[workload.jobs]]\nkind = \"collectives\"\nranks = 4\noperations = [{collective = \"allreduce\", bytes = 8, channels = 2}]\n",
        ),
        &[],
    )
    .and_then(|c| xnet_models::workload::job_ops(c.workload.as_ref().unwrap(), 0, 1).map(|_| ()))
    .unwrap_err()
    .to_string();
    assert!(e.contains("operations[0].channels") && e.contains("library = \"nccl\""), "{e}");
}

#[test]
fn nccl_tree_allreduce_reduces_up_and_broadcasts_down_the_first_tree() {
    // 4 ranks: NCCL's first tree is 0 <- 2 <- {1, 3}. 16 bytes is one chunk of one packet
    // of one phit (a message takes ONE_HOP); every GPU takes 100 cycles (64 ns) per
    // slice. The leaves send up at 100; rank 2's two packets reach its one ejection port a
    // cycle apart, so it reduces at 101 + ONE_HOP and sends to the root; the root reduces
    // and sends down; rank 2 receives, copies and sends to 1, then to 3 a cycle later; the
    // leaves take the result 100 cycles after it arrives.
    let fields = "collective = \"allreduce\", bytes = 16, algorithm = \"tree\", protocol = \"simple\", \
                  channels = 1, launch_ns = 0, hop_ns = 64";
    for parts in [1, 2] {
        let r = run(&build(&nccl_job(4, fields), &[]), parts);
        assert_eq!(completion(&r, 0), 502 + 4 * ONE_HOP, "{parts} partitions");
        let job = &r.workload.as_ref().unwrap().jobs[0];
        let finish: Vec<u64> = job.rank_finish.clone();
        assert_eq!(
            finish,
            vec![301 + 2 * ONE_HOP, 501 + 4 * ONE_HOP, 401 + 3 * ONE_HOP + 1, 502 + 4 * ONE_HOP]
        );
        // 6 data messages (3 up, 3 down), each with its posted buffer.
        assert_eq!(job.messages, 12);
    }
    // Two channels run both trees (the second mirrors the first: root 3): twice the
    // messages, the same on any partitioning.
    let two = nccl_job(4, "collective = \"allreduce\", bytes = 4096, algorithm = \"tree\", channels = 2");
    // Named channels stand, however small the collective.
    let (a, b) = (run(&build(&two, &[]), 1), run(&build(&two, &[]), 2));
    assert_eq!(completion(&a, 0), completion(&b, 0));
    assert_eq!(a.workload.as_ref().unwrap().jobs[0].messages, 24);
}

#[test]
fn nccl_operations_run_what_nccl_s_tuning_model_chooses_unless_named() {
    use xnet_models::schedule::nccl::{tuning, Algorithm, NcclKind, Protocol};
    // The clique's links carry 16 bytes per 0.64 ns: 25 GB/s NICs.
    let mut picks = Vec::new();
    for bytes in [1024u64, 1 << 20] {
        let all = [Algorithm::Ring, Algorithm::Tree];
        let protocols = [Protocol::Ll, Protocol::Ll128, Protocol::Simple];
        let e = tuning::choose(NcclKind::AllReduce, bytes, 8, 25.0, 2, &all, &protocols).unwrap();
        let channels = tuning::channels_for(e.algorithm, e.protocol, bytes, 8, 2);
        let long = ["simulation.cycles=1000000"];
        let chosen =
            run(&build(&nccl_job(8, &format!("collective = \"allreduce\", bytes = {bytes}")), &long), 1);
        let named = format!(
            "collective = \"allreduce\", bytes = {bytes}, algorithm = \"{}\", protocol = \"{}\", channels = {channels}",
            e.algorithm.name(),
            e.protocol.name()
        );
        let r = run(&build(&nccl_job(8, &named), &long), 1);
        assert_eq!(completion(&chosen, 0), completion(&r, 0), "{bytes} bytes: {named}");
        picks.push((e.algorithm, e.protocol));
    }
    // The model picks differently at the two sizes: the test sees both paths.
    assert_ne!(picks[0], picks[1], "{picks:?}");
}

#[test]
fn nccl_all_to_all_sends_to_every_peer_at_once_in_ll_when_small() {
    // 4 ranks, 64 bytes to each peer: LL (at most 16 KiB per channel) puts them in 128
    // bytes, 2 packets of 4 phits. Rounds 1, 2, 3 (peers +1, +3, +2) are in one batch: each
    // send's GPU step takes 100 cycles, then the three messages leave back to back (8
    // cycles each) and reach three different receivers in turn; the last packet of the
    // third arrives ONE_HOP + 3 after it leaves, and its receiver's GPU step takes 100.
    let fields = "collective = \"alltoall\", bytes = 64, launch_ns = 0, hop_ns = 64";
    for parts in [1, 2] {
        let r = run(&build(&nccl_job(4, fields), &[]), parts);
        assert_eq!(completion(&r, 0), 100 + 5 * 4 + ONE_HOP + 3 + 100, "{parts} partitions");
        // 12 messages and the 12 buffers their receivers posted.
        assert_eq!(r.workload.as_ref().unwrap().jobs[0].messages, 24);
    }
    // 16 ranks: two groups of 8 rounds run one after the other on each channel.
    let wide = ["simulation.cycles=1000000", "topology.sides=[16]"];
    let r = run(&build(&nccl_job(16, "collective = \"alltoall\", bytes = 300000"), &wide), 2);
    // Each message: 4 chunks of 64 KiB and one of 37,856 bytes (half steps: under 8 steps),
    // 4,688 packets of 64 bytes, and 5 posted buffers; every rank finishes.
    assert_eq!(r.workload.as_ref().unwrap().jobs[0].packets_received, 16 * 15 * (4688 + 5));
    assert!(completion(&r, 0) > 0);
}

#[test]
fn a_training_step_runs_its_pipeline_to_the_end_on_any_partitioning() {
    // 8 ranks: tensor 2 x pipeline 2 x data 2, 4 micro-batches of one sequence each.
    let text = with_jobs(
        CLIQUE,
        "[[workload.jobs]]\nkind = \"training\"\nlayers = 4\nhidden = 256\nheads = 4\nsequence = 128\n\
         vocabulary = 1000\nglobal_batch = 8\ntensor = 2\npipeline = 2\ndata = 2\ngpu_tflops = 10\niterations = 2\n",
    );
    let long = ["simulation.cycles=20000000"];
    let (one, two) = (run(&build(&text, &long), 1), run(&build(&text, &long), 2));
    assert_eq!(completion(&one, 0), completion(&two, 0));
    let job = &one.workload.as_ref().unwrap().jobs[0];
    assert_eq!(job.iteration_end.len(), 2);
    // The network adds to the computation, never takes from it.
    let ideal = job.ideal_time.unwrap();
    assert!(ideal > 0.0 && completion(&one, 0) as f64 > ideal, "{ideal}");
    assert_eq!(format!("{:?}", one.workload), format!("{:?}", two.workload));
    // The steps: their times add up to the completion; no step is shorter than its
    // busiest rank's computation, which the last stage (the logits) is.
    let compute = job.compute.as_deref().unwrap();
    assert!(compute[..4].iter().all(|&c| c == compute[0]) && compute[4..].iter().all(|&c| c == compute[4]));
    assert!(compute[4] > compute[0] && compute[0] > 0, "{compute:?}");
    let steps = job.steps();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps.iter().map(|s| s.time).sum::<u64>(), completion(&one, 0));
    for s in &steps {
        assert_eq!((s.compute_max, s.exposed), (compute[4], s.time - compute[4]));
        assert_eq!(s.compute_mean, (compute[0] + compute[4]) as f64 / 2.0);
    }
    // Every collective timed, both members' parts ended: per step, 4 tensor groups x 2
    // layers x 4 micro-batches x 4 all-reduces of b s h = 32,768 values of 2 bytes, and
    // each of the 4 data groups' gradient buckets.
    let tensor: Vec<_> = job.collectives.iter().filter(|c| c.phase.name == "tensor allreduce").collect();
    assert_eq!(tensor.len(), 2 * 128);
    assert!(tensor.iter().all(|c| c.parts == 2 && c.end > c.start && c.phase.bytes == 65_536));
    let data: Vec<_> = job.collectives.iter().filter(|c| c.phase.name == "data allreduce").collect();
    assert!(!data.is_empty() && data.len() % 8 == 0 && data.iter().all(|c| c.parts == 2 && c.end > c.start));
    assert_eq!(tensor.len() + data.len(), job.collectives.len());
}

#[test]
fn sequence_parallelism_experts_and_zero_run_to_the_end_on_any_partitioning() {
    for extra in [
        "tensor = 2\npipeline = 2\ndata = 2\nsequence_parallel = true\ndistributed_optimizer = true",
        "pipeline = 2\ndata = 4\nexperts = 4\ntop_k = 2\nexpert_parallel = 2\nmoe_every = 2",
    ] {
        let text = with_jobs(
            CLIQUE,
            &format!(
                "[[workload.jobs]]\nkind = \"training\"\nlayers = 4\nhidden = 256\nheads = 4\nsequence = 128\n\
                 vocabulary = 1000\nglobal_batch = 8\ngpu_tflops = 10\n{extra}\n"
            ),
        );
        let long = ["simulation.cycles=20000000"];
        let (one, two) = (run(&build(&text, &long), 1), run(&build(&text, &long), 2));
        assert!(completion(&one, 0) > 0, "{extra}");
        assert_eq!(format!("{:?}", one.workload), format!("{:?}", two.workload), "{extra}");
    }
}

#[test]
fn nccl_pat_moves_each_part_once_along_its_trees() {
    // Two ranks: one message each way. Each receiver posts its buffer at once (a record of
    // one packet, ONE_HOP + 3); the part (1 KiB: 64 phits) then leaves and its last packet
    // arrives ONE_HOP + 63 later.
    for collective in ["allgather", "reduce_scatter"] {
        let fields = format!(
            "collective = \"{collective}\", bytes = 1024, algorithm = \"pat\", channels = 1, launch_ns = 0, hop_ns = 0"
        );
        for parts in [1, 2] {
            let r = run(&build(&nccl_job(2, &fields), &[]), parts);
            assert_eq!(completion(&r, 0), (ONE_HOP + 3) + (ONE_HOP + 63), "{collective}, {parts} partitions");
            assert_eq!(r.workload.as_ref().unwrap().jobs[0].messages, 4);
        }
    }
    // Four ranks, all-gather of 1 KiB: two parts per slot (NCCL aggregates when a part is
    // small). Each rank sends its part to r - 2 (64 phits) once r - 2's record for it has
    // come (ONE_HOP + 3), then its own part and r + 2's, received, to r - 1 in one message
    // (128 phits); the last packet of that arrives ONE_HOP + 127 after it leaves.
    let fields = "collective = \"allgather\", bytes = 1024, algorithm = \"pat\", channels = 1, launch_ns = 0, hop_ns = 0";
    for parts in [1, 2] {
        let r = run(&build(&nccl_job(4, fields), &[]), parts);
        assert_eq!(completion(&r, 0), (ONE_HOP + 3) + (ONE_HOP + 63) + (ONE_HOP + 127), "{parts} partitions");
        // Per rank 2 data messages and their 2 records.
        assert_eq!(r.workload.as_ref().unwrap().jobs[0].messages, 4 * 4);
    }
    // More ranks, one part or several per message: every rank receives each other rank's
    // part once (all-gather: n - 1 parts of data, besides the 64-byte records); every
    // part's partial sums go up a tree of n - 1 edges to its rank (reduce-scatter: n (n -
    // 1) parts in all on a power of two; more bytes otherwise, a slot carrying the holes
    // of the ranks beyond n as NCCL's FIFO records its size). The same on 1 and 2
    // partitions.
    for (n, part) in [(3u32, 1000u64), (4, 1000), (5, 100_000), (8, 1000), (8, 100_000), (6, 3000), (7, 5000)]
    {
        for collective in ["allgather", "reduce_scatter"] {
            let fields = format!("collective = \"{collective}\", bytes = {part}, algorithm = \"pat\"");
            let sim = build(&nccl_job(n, &fields), &["simulation.cycles=10000000"]);
            let g = &sim.workload().unwrap().jobs[0].ops.graph;
            let data = |r: u32| -> u64 {
                (0..g.ops_in_rank(r))
                    .filter_map(|o| match g.op(r, o) {
                        Op::Recv { bytes, .. } if bytes != 64 => Some(bytes),
                        _ => None,
                    })
                    .sum()
            };
            let n64 = u64::from(n);
            if collective == "allgather" {
                assert!((0..n).all(|r| data(r) == (n64 - 1) * part), "{collective} on {n}");
            }
            // Slots carry what their last step posts, holes of ranks beyond n included.
            let total: u64 = (0..n).map(data).sum();
            if n.is_power_of_two() {
                assert_eq!(total, n64 * (n64 - 1) * part, "{collective} on {n}");
            } else {
                assert!(total >= n64 * (n64 - 1) * part, "{collective} on {n}: {total}");
            }
            let (one, two) = (run(&sim, 1), run(&sim, 2));
            assert!(completion(&one, 0) > 0, "{collective} on {n}");
            assert_eq!(format!("{:?}", one.workload), format!("{:?}", two.workload), "{collective} on {n}");
        }
    }
}
