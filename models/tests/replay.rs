//! Application replay on the network: GOAL schedules and MPI's collective algorithms run to
//! the completion times that link latencies, packet counts and the MPI protocol (eager,
//! rendezvous) predict on an idle network, identically on any number of partitions; bad
//! schedules are refused naming the file, rank and line; a schedule that can never
//! complete is told apart from a network that deadlocked.

mod common;
use common::build;
use xnet_models::schedule::collectives::{AllreduceAlgo, Collective};
use xnet_models::schedule::{emit, write_goal, Comm, Op, ScheduleBuilder};
use xnet_models::sim::{RunResult, Simulation, Status};
use xnet_models::workload::{job_chakra, job_ops, AsGoal, WORKLOAD_PACKET};

/// A network of `topology` (a `[topology]` table's keys) with terminal links of 3 cycles,
/// switch-to-switch links of 5, packets of 4 phits and a router delay of 2, on an idle run
/// that stops when the jobs are done.
fn network(topology: &str) -> String {
    format!(
        "[simulation]\ncycles = 100000\nwarmup = 0\nsample_period = 100\n\
         [topology]\n{topology}\nendpoints_per_switch = 1\nterminal_latency = 3\nlink_latency = 5\n\
         [router]\nvcs = 2\npacket_size = 4\ninput_buffer = 16\noutput_buffer = 16\nrouter_delay = 2\n\
         [routing]\nalgorithm = \"dor\"\n"
    )
}

/// A complete graph of `n` switches (1D HyperX), one endpoint each: every pair of ranks is
/// one hop apart over its own link.
fn clique(n: u32) -> String {
    network(&format!("kind = \"hyperx\"\nsides = [{n}]"))
}

/// A ring of 8 switches (a 1D torus), one endpoint each.
fn ring() -> String {
    network("kind = \"torus\"\nsides = [8]")
}

/// Cycles the first phit of a packet takes over one switch-to-switch hop in [`clique`] and
/// [`ring`]: 2 terminal links + 1 link + 2 switches x router delay.
const L: u64 = 2 * 3 + 5 + 2 * 2;

/// Zero-load latency of a message of `phits` phits over one hop (LogGP's `L + (s - 1) G`,
/// a phit a cycle): its packets leave back to back, the last as long as its data.
const fn hop(phits: u64) -> u64 {
    L + phits - 1
}

/// Zero-load latency of one full packet (4 phits, 64 bytes) over one hop.
const ONE_HOP: u64 = hop(4);

/// Cycles between two packets of one message leaving an endpoint (a packet's 4 phits).
const PACKET: u64 = 4;

/// `base` with one job running the GOAL schedule `text` (inlined as its contents).
fn goal_job(base: &str, text: &str, workload_keys: &str) -> String {
    format!("{base}\n[workload]\n{workload_keys}\n[[workload.jobs]]\nkind = \"goal\"\ncontents = '''\n{text}'''\n")
}

fn run(sim: &Simulation, parts: u32) -> RunResult {
    common::run(sim, parts)
}

/// The job's completion time, the same on 1 and 2 partitions (threads).
fn completion(text: &str) -> u64 {
    let sim = build(text, &[]);
    let one = run(&sim, 1);
    let w = one.workload.as_ref().expect("a workload");
    let t = w.jobs[0].completion_time.unwrap_or_else(|| panic!("unfinished: {:?}", w.diagnosis(0)));
    let two = run(&sim, 2);
    assert_eq!(format!("{:?}", two.workload), format!("{:?}", one.workload), "2 threads differ from 1");
    t
}

#[test]
fn an_eager_ping_pong_takes_two_message_latencies() {
    let ping_pong = |bytes: u64| {
        format!(
            "num_ranks 2\nrank 0 {{\nl1: send {bytes}b to 1 tag 7\nl2: recv {bytes}b from 1 tag 7\nl2 requires l1\n}}\n\
             rank 1 {{\nl1: recv {bytes}b from 0 tag 7\nl2: send {bytes}b to 0 tag 7\nl2 requires l1\n}}\n"
        )
    };
    // 8 bytes: one packet of one phit each way.
    assert_eq!(completion(&goal_job(&clique(2), &ping_pong(8), "")), 2 * hop(1));
    // 300 bytes: 4 packets of 64 bytes (16 bytes per phit x 4 phits) and one of 3 phits
    // (44 bytes), 19 phits; the last leaves 4 x 4 cycles after the first.
    assert_eq!(completion(&goal_job(&clique(2), &ping_pong(300), "")), 2 * hop(19));
    assert_eq!(hop(19), ONE_HOP + 4 * PACKET - 1);
}

#[test]
fn a_rendezvous_waits_for_its_clear_to_send() {
    // Above the eager limit: a request (1 phit), a clear-to-send (1 phit), then the 5 data
    // packets (19 phits), each way. The second send's request leaves once the first send's data
    // has left rank 0 (its receive is posted after its send ends), but its clear-to-send
    // can only go once the request is in.
    let text =
        "num_ranks 2\nrank 0 {\nl1: send 300b to 1 tag 0\nl2: recv 300b from 1 tag 0\nl2 requires l1\n}\n\
                rank 1 {\nl1: recv 300b from 0 tag 0\nl2: send 300b to 0 tag 0\nl2 requires l1\n}\n";
    let one_way = 2 * hop(1) + hop(19);
    assert_eq!(completion(&goal_job(&clique(2), text, "eager_limit = 64")), 2 * one_way);
    // A request that arrives before its receive is posted waits, unexpected: the receiver
    // computes 100 ns (at 0.5 ns per cycle, 200 cycles) first, then clears it.
    let late = "num_ranks 2\nrank 0 {\nl1: send 300b to 1 tag 0\n}\n\
                rank 1 {\nl1: calc 100\nl2: recv 300b from 0 tag 0\nl2 requires l1\n}\n";
    let keys = "eager_limit = 64\nns_per_cycle = 0.5";
    assert_eq!(completion(&goal_job(&clique(2), late, keys)), 200 + hop(1) + hop(19));
}

#[test]
fn a_ring_allreduce_on_a_ring_of_switches_takes_its_rounds() {
    // MPICH's ring allreduce of 8 x 320 bytes over 8 ranks: 2 x 7 rounds, in each a rank
    // sends 320 bytes (5 packets) to its right neighbour and receives as much from its left.
    let comm = Comm::world(0, 8);
    let allreduce = Collective::Allreduce { bytes: 8 * 320, algo: AllreduceAlgo::Ring };
    let mut b = ScheduleBuilder::new();
    for me in 0..8 {
        b.add_rank();
        emit(&mut b, &allreduce, &comm, me, 0, None);
    }
    let mut text = Vec::new();
    write_goal(&b.build(), &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert_eq!(completion(&goal_job(&ring(), &text, "")), 14 * (ONE_HOP + 4 * PACKET));
}

#[test]
fn loggopsims_binomial_broadcast_takes_five_rounds_of_one_hop() {
    // LogGOPSim's sample schedule: a binomial broadcast of 1 byte to 32 ranks. A rank sends
    // to its children in order of increasing distance, all at once, so its endpoint sends
    // them a cycle apart (one phit each); the path through every first child is the
    // longest: 5 hops.
    let text = include_str!("../schedule/tests/data/binary_tree_32.goal");
    assert_eq!(completion(&goal_job(&clique(32), text, "")), 5 * hop(1));
}

#[test]
fn bad_schedules_are_refused_naming_the_file_rank_and_line() {
    let refused = |text: &str| {
        let cfg = xnet_models::config::Config::parse(&goal_job(&clique(2), text, ""), &[]).unwrap();
        Simulation::build(cfg).err().expect("refused").to_string()
    };
    let e = refused("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag\n}\nrank 1 {\n}\n");
    assert!(e.contains("workload.jobs[0].file") && e.contains("contents:3: rank 0:"), "{e}");
    let e = refused("num_ranks 2\nrank 0 {\nl1: send 8b to 5 tag 0\n}\nrank 1 {\n}\n");
    // Ops are named by the file's labels (this send is op 0, labelled l1).
    assert!(e.contains("rank 0: l1 names rank 5, but the schedule has 2 ranks"), "{e}");
    let e = refused("num_ranks 3\nrank 0 {\n}\n");
    assert!(e.contains("workload.jobs[0]") && e.contains("3 ranks"), "{e}");
}

#[test]
fn a_schedule_that_can_never_complete_is_told_from_a_deadlocked_network() {
    // Rank 1 waits for a message with a tag rank 0 never sends.
    let text = "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 1\n}\nrank 1 {\nl1: recv 8b from 0 tag 2\n}\n";
    let sim = build(&goal_job(&clique(2), text, ""), &[]);
    let r = run(&sim, 1);
    assert_eq!(r.status, Status::Unfinished);
    let w = r.workload.as_ref().unwrap();
    let why = w.diagnosis(r.summary.in_flight_end).unwrap();
    assert!(why.contains("can never complete, on any network"), "{why}");
    assert!(why.contains("rank 1: l1 waits for a message from rank 0, tag 2, comm 0"), "{why}");
    assert!(why.contains("1 of 2 ranks unfinished"), "{why}");
    assert!(w.jobs[0].slowdown().is_nan());
    // The run ends a sample period after rank 0 has finished and rank 1 stopped moving,
    // not at `simulation.cycles` (100,000), with background traffic or without.
    assert_eq!(r.samples.last().unwrap().time, 200);
    let busy = format!("{}\n[traffic]\npattern = \"uniform\"\nload = 0.3\n", goal_job(&clique(4), text, ""));
    let r = run(&build(&busy, &[]), 1);
    assert_eq!((r.status, r.samples.last().unwrap().time), (Status::Unfinished, 200));
    // And the forecast says so before the run.
    let forecast = sim.workload().unwrap().forecast(100_000);
    assert_eq!(forecast.len(), 1, "{forecast:?}");
    assert!(
        forecast[0].starts_with("warning: job `goal-0` (workload.jobs[0], goal) can never complete, on any network: 1 of its 2 ranks are stuck")
            && forecast[0].contains("(rank 1: l1 waits for a message from rank 0, tag 2, comm 0)"),
        "{}",
        forecast[0]
    );
}

#[test]
fn a_job_that_cannot_finish_in_time_is_told_before_the_run() {
    // Rank 0 computes 1,000 ns (2,000 cycles at 0.5 ns), then sends 64 KiB (1,024 packets
    // of 64 bytes: 4,096 phits) to rank 1.
    let text = "num_ranks 2\nrank 0 {\nl1: calc 1000\nl2: send 65536b to 1 tag 0\nl2 requires l1\n}\n\
                rank 1 {\nl1: recv 65536b from 0 tag 0\n}\n";
    let sim = build(&goal_job(&clique(2), text, "ns_per_cycle = 0.5"), &[]);
    let w = sim.workload().unwrap();
    assert_eq!((w.jobs[0].ideal_computing, w.jobs[0].ideal_rounds), (2000.0, 1));
    assert_eq!(w.jobs[0].sends.busiest, Some((0, 4096)));
    assert!(w.forecast(5000).is_empty(), "{:?}", w.forecast(5000));
    let forecast = w.forecast(3000);
    assert_eq!(
        forecast,
        ["warning: job `goal-0` (workload.jobs[0], goal) cannot finish within simulation.cycles = 3000: rank 0 sends \
          4096 phits, which take its endpoint's link at least as many cycles"]
    );
    let forecast = w.forecast(1000);
    assert_eq!(
        forecast,
        ["warning: job `goal-0` (workload.jobs[0], goal) cannot finish within simulation.cycles = 1000: on an ideal \
          network it takes 2000 cycles, 100 % of them computing on its busiest rank (NCCL's GPU latencies included)"]
    );
    // Run to the deadline, the ranks still account their time: rank 0 computed throughout,
    // rank 1 waited.
    let short = build(&goal_job(&clique(2), text, "ns_per_cycle = 0.5"), &["simulation.cycles=1000"]);
    let r = run(&short, 1);
    let job = &r.workload.as_ref().unwrap().jobs[0];
    assert_eq!(r.status, Status::Unfinished);
    assert_eq!((job.rank_computing[0], job.rank_sending[0], job.rank_waiting[0]), (1000, 0, 0));
    assert_eq!((job.rank_computing[1], job.rank_sending[1], job.rank_waiting[1]), (0, 0, 1000));
    // Computation of 10,000 cycles or more per message, and sends under a tenth of the
    // time: its slowdown will stay near 1.
    let long = text.replace("calc 1000", "calc 50000");
    let sim = build(&goal_job(&clique(2), &long, "ns_per_cycle = 0.5"), &[]);
    let forecast = sim.workload().unwrap().forecast(1_000_000);
    assert_eq!(forecast.len(), 1, "{forecast:?}");
    assert!(forecast[0]
        .starts_with("note: job `goal-0` (workload.jobs[0], goal) computes about 100000 cycles per message"));
    // The same computation of 10,000 cycles, but its message of 4,096 phits takes 40 % of
    // that on its link: no such note (a large collective is no small message).
    let sends = text.replace("calc 1000", "calc 5000");
    let sim = build(&goal_job(&clique(2), &sends, "ns_per_cycle = 0.5"), &[]);
    assert!(sim.workload().unwrap().forecast(1_000_000).is_empty());
}

#[test]
fn a_message_of_more_packets_than_a_run_counts_is_refused() {
    // 2^32 packets of 64 bytes, and one byte more: 2^32 + 1 packets.
    let bytes = (1u64 << 32) * 64 + 1;
    let text = format!("num_ranks 2\nrank 0 {{\nl1: send {bytes}b to 1 tag 0\n}}\nrank 1 {{\nl1: recv {bytes}b from 0 tag 0\n}}\n");
    let e =
        Simulation::build(xnet_models::config::Config::parse(&goal_job(&clique(2), &text, ""), &[]).unwrap())
            .err()
            .expect("refused");
    assert_eq!(e.key, "workload.jobs[0]");
    assert_eq!(
        e.message,
        "rank 0 of job `goal-0` sends a message of 274877906945 bytes (op l0): 4294967297 packets of 64 bytes \
         (router.packet_size and workload.bytes_per_phit); a message may be at most 2^32 - 1 packets, 274877906880 bytes"
    );
}

#[test]
fn ranks_account_their_time_and_the_slowdown_is_against_an_ideal_network() {
    // Rank 0 computes 40 ns (80 cycles at 0.5 ns), then sends 300 bytes (5 packets, 19
    // phits, the last leaving 16 cycles after the first); rank 1 waits for them.
    let text = "num_ranks 2\nrank 0 {\nl1: calc 40\nl2: send 300b to 1 tag 0\nl2 requires l1\n}\n\
                rank 1 {\nl1: recv 300b from 0 tag 0\n}\n";
    let sim = build(&goal_job(&clique(2), text, "ns_per_cycle = 0.5"), &[]);
    let r = run(&sim, 1);
    let job = &r.workload.as_ref().unwrap().jobs[0];
    let end = 80 + hop(19);
    assert_eq!(job.completion_time, Some(end));
    assert_eq!((job.rank_finish[0], job.rank_computing[0], job.rank_sending[0]), (80 + 4 * PACKET, 80, 16));
    assert_eq!((job.rank_finish[1], job.rank_computing[1], job.rank_sending[1]), (end, 0, 0));
    // On an ideal network the job takes its computation: 80 cycles.
    assert_eq!(job.ideal_time, Some(80.0));
    assert_eq!(job.slowdown(), end as f64 / 80.0);
}

/// A GOAL job with receives from any source and of any tag and messages above the eager
/// limit, beside two generated jobs and background traffic on a random regular graph.
fn mixed_jobs() -> String {
    let goal = include_str!("data/wildcard_ring.goal");
    let base = "[simulation]\ncycles = 400000\nwarmup = 500\nseed = 3\nsample_period = 100\n\
                [topology]\nkind = \"random_regular\"\nswitches = 32\ndegree = 5\nendpoints_per_switch = 3\n\
                [router]\nvcs = 4\npacket_size = 4\ninput_buffer = 16\noutput_buffer = 8\n\
                [routing]\nalgorithm = \"minimal\"\n[traffic]\npattern = \"uniform\"\nload = 0.4\n";
    let generated = "eager_limit = 512\n[[workload.jobs]]\nkind = \"allreduce\"\nranks = 16\nbytes = 2048\n\
                     [[workload.jobs]]\nkind = \"stencil2d\"\ngrid = [8, 8]\nhalo_bytes = 100\niterations = 10\n\
                     compute = 20\nmapping = \"random\"";
    goal_job(base, goal, generated)
}

#[test]
fn replay_is_identical_on_any_number_of_partitions() {
    let sim = build(&mixed_jobs(), &[]);
    let f = |r: &RunResult| format!("{:?}|{:?}|{:?}|{:?}", r.summary, r.workload, r.links, r.samples);
    let one = run(&sim, 1);
    assert!(one.workload.as_ref().unwrap().finished());
    let one = f(&one);
    for parts in [2, 3, 4, 8] {
        assert_eq!(f(&run(&sim, parts)), one, "{parts} partitions differ from 1");
    }
}

/// The jobs' outcome that a GOAL export must reproduce (a generated job's iterations and
/// kind are its own).
fn outcome(r: &RunResult) -> String {
    let jobs: Vec<String> = r
        .workload
        .as_ref()
        .unwrap()
        .jobs
        .iter()
        .map(|j| {
            format!(
                "{:?} {:?} {:?} {:?} {} {} {} {:?}",
                j.completion_time,
                j.rank_finish,
                j.rank_computing,
                j.rank_sending,
                j.messages,
                j.packets_sent,
                j.packets_received,
                j.message_latency
            )
        })
        .collect();
    format!("{jobs:?}|{:?}|{:?}|{:?}", r.summary, r.links, r.samples)
}

#[test]
fn generated_jobs_exported_as_goal_and_read_back_give_identical_results() {
    // Eager and rendezvous messages (8 KiB limit), computations, random placement and
    // permutations, beside background traffic; 1 ns cycles, so every computation is a whole
    // number of nanoseconds.
    let jobs = [
        (
            "kind = \"stencil2d\"\ngrid = [4, 4]\nhalo_bytes = 600\niterations = 3\ncompute = 50",
            "mapping = \"random\"",
        ),
        ("kind = \"butterfly\"\nranks = 8\nmessage_bytes = 20000\niterations = 2", ""),
        ("kind = \"waterfall\"\ngrid = [4, 2]\nmessage_bytes = 64\niterations = 3", ""),
        (
            "kind = \"random_permutation\"\nranks = 12\nmessage_bytes = 700\niterations = 3\ncompute = 7",
            "mapping = \"random\"",
        ),
    ];
    let base = common::HYPERX.replace("cycles = 3000", "cycles = 400000").replace("load = 0.3", "load = 0.1");
    let section = "[workload]\nns_per_cycle = 1.0\neager_limit = 8192\n";
    let generated: String = jobs
        .iter()
        .enumerate()
        .map(|(j, (kind, mapping))| format!("[[workload.jobs]]\nname = \"j{j}\"\n{kind}\n{mapping}\n"))
        .collect();
    let generated = format!("{base}\n{section}{generated}");
    let cfg = xnet_models::config::Config::parse(&generated, &[]).unwrap();
    let workload = cfg.workload.as_ref().unwrap();
    let exported: String = jobs
        .iter()
        .enumerate()
        .map(|(j, (_, mapping))| {
            let ops = job_ops(workload, j, cfg.simulation.seed).unwrap();
            let goal = AsGoal::new(&ops, workload.ps_per_cycle);
            assert_eq!(goal.inexact(), 0);
            let mut text = Vec::new();
            write_goal(&goal, &mut text).unwrap();
            let text = String::from_utf8(text).unwrap();
            format!(
                "[[workload.jobs]]\nname = \"j{j}\"\nkind = \"goal\"\ncontents = '''\n{text}'''\n{mapping}\n"
            )
        })
        .collect();
    let exported = format!("{base}\n{section}{exported}");
    let (a, b) = (run(&build(&generated, &[]), 2), run(&build(&exported, &[]), 2));
    assert!(a.workload.as_ref().unwrap().finished());
    assert_eq!(outcome(&b), outcome(&a));
}

/// LogGOPSim's sample schedule and schedules its generator wrote (MPI collectives on 16
/// ranks: ring and recursive-doubling allreduce, linear alltoall, a binomial broadcast of
/// 100 kB by rendezvous) replay to completion side by side on the Dragonfly, RRG and HyperX
/// example configurations, every message delivered, the same on 1 and 2 threads.
#[test]
fn loggopsim_schedules_replay_on_the_example_networks() {
    let schedules = [
        include_str!("../schedule/tests/data/binary_tree_32.goal"),
        include_str!("../schedule/tests/data/allreduce_ring_16.goal"),
        include_str!("../schedule/tests/data/allreduce_recdoub_16.goal"),
        include_str!("../schedule/tests/data/alltoall_linear_16.goal"),
        include_str!("../schedule/tests/data/bcast_binomial_16.goal"),
    ];
    let jobs: String = schedules
        .iter()
        .map(|text| format!("[[workload.jobs]]\nkind = \"goal\"\ncontents = '''\n{text}'''\n"))
        .collect();
    replay_on_example_networks(&jobs);
}

/// The jobs `jobs` (`[[workload.jobs]]` tables) run alone on the Dragonfly, RRG and HyperX
/// example configurations: every job finishes with one message delivered per send of its
/// schedule, the same on 1 and 2 threads.
fn replay_on_example_networks(jobs: &str) {
    for config in ["dragonfly-6-12-6", "rrg-876-23-17", "hyperx-2d-16"] {
        let text = std::fs::read_to_string(format!("../configs/{config}.toml")).unwrap();
        let overrides = [
            "traffic.load=0",
            "simulation.warmup=0",
            "simulation.cycles=10000000",
            "simulation.sample_period=1000",
        ];
        let sim = with_files(&format!("{text}\n[workload]\n{jobs}"), &overrides);
        let one = run(&sim, 1);
        let w = one.workload.as_ref().unwrap();
        assert!(w.finished(), "{config}: {:?}", w.diagnosis(one.summary.in_flight_end));
        for (job, built) in w.jobs.iter().zip(&sim.workload().unwrap().jobs) {
            let g = &built.ops.graph;
            let sends = (0..g.num_ranks())
                .flat_map(|r| (0..g.ops_in_rank(r)).map(move |o| (r, o)))
                .filter(|&(r, o)| matches!(g.op(r, o), Op::Send { .. }))
                .count();
            assert_eq!(job.messages as usize, sends, "{config}, {}", job.name);
        }
        assert_eq!(format!("{:?}", run(&sim, 2).workload), format!("{:?}", one.workload), "{config}");
    }
}

/// `base` with one `collectives` job of `ranks` ranks running `operations` (TOML tables).
fn collectives_job(base: &str, ranks: u32, operations: &str) -> String {
    format!("{base}\n[workload]\n[[workload.jobs]]\nkind = \"collectives\"\nranks = {ranks}\noperations = [{operations}]\n")
}

#[test]
fn a_sequence_of_collectives_takes_its_rounds_on_an_idle_clique() {
    // Recursive-doubling allreduce of 64 bytes (one full packet) on 8 ranks: 3 rounds; then
    // a dissemination barrier of empty messages (one phit each): 3 more; every round one hop.
    let ops = "{collective = \"allreduce\", bytes = 64, algorithm = \"recursive_doubling\"}, {collective = \"barrier\"}";
    assert_eq!(completion(&collectives_job(&clique(8), 8, ops)), 3 * ONE_HOP + 3 * hop(1));
    // MPICH's choice for 8 bytes is recursive doubling too.
    assert_eq!(
        completion(&collectives_job(&clique(8), 8, "{collective = \"allreduce\", bytes = 8}")),
        3 * hop(1)
    );
    // On communicators of 4 (rows, then columns): 2 rounds each.
    let ops = "{collective = \"allreduce\", bytes = 8, comm_size = 4}, {collective = \"allreduce\", bytes = 8, comm_size = 4, split = \"cyclic\"}";
    assert_eq!(completion(&collectives_job(&clique(8), 8, ops)), 4 * hop(1));
    // A broadcast from comm rank 1 within each column of a 4 x 2 grid (communicators {0, 2,
    // 4, 6} and {1, 3, 5, 7}): binomial, 2 rounds, 3 messages per column.
    let text = collectives_job(
        &clique(8),
        8,
        "{collective = \"bcast\", bytes = 8, root = 1, comm_size = 4, split = \"cyclic\"}",
    );
    let r = run(&build(&text, &[]), 1);
    let job = &r.workload.as_ref().unwrap().jobs[0];
    assert_eq!((job.completion_time, job.messages), (Some(2 * hop(1)), 6));
}

#[test]
fn bad_collectives_are_refused_naming_the_operation_and_field() {
    let refused = |ops: &str| {
        let cfg = xnet_models::config::Config::parse(&collectives_job(&clique(8), 8, ops), &[]).unwrap();
        Simulation::build(cfg).err().expect("refused").to_string()
    };
    let e = refused("{collective = \"allreduce\", bytes = 8}, {collective = \"allscatter\", bytes = 8}");
    assert!(
        e.contains("workload.jobs[0].operations")
            && e.contains("operations[1].collective")
            && e.contains("reduce_scatter"),
        "{e}"
    );
    let e = refused("{collective = \"alltoall\", bytes = 8, algorithm = \"ring\"}");
    assert!(e.contains("operations[0].algorithm") && e.contains("pairwise, linear, bruck"), "{e}");
    let e = refused("{collective = \"bcast\", bytes = 8, comm_size = 3}");
    assert!(e.contains("operations[0].comm_size: must divide the job's 8 ranks, got 3"), "{e}");
    let e = refused("{collective = \"gather\", bytes = 8, root = 4, comm_size = 4}");
    assert!(e.contains("operations[0].root"), "{e}");
    assert!(refused("{collective = \"reduce\"}").contains("operations[0].bytes: missing"));
    assert!(refused("{collective = \"barrier\", bytes = 8}").contains("operations[0].bytes"));
    assert!(refused("{collective = \"barrier\", split = \"diagonal\"}").contains("operations[0].split"));
}

/// `text` parsed with the files it names read from the working directory (the models
/// crate's folder), as the `xnet` command reads them.
fn with_files(text: &str, overrides: &[&str]) -> Simulation {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let read = |path: &str| std::fs::read(path).map_err(|e| e.to_string());
    let cfg =
        xnet_models::config::Config::parse_with_files(text, &o, &read).unwrap_or_else(|e| panic!("{e}"));
    Simulation::build(cfg).unwrap_or_else(|e| panic!("{e}"))
}

/// DUMPI traces written by sst-dumpi (a ring test on 4 ranks, a benchmark on 7 BlueGene/P
/// ranks with sub-communicators and all-to-alls, LULESH on 8 ranks) replay to completion side by side on the
/// Dragonfly, RRG and HyperX example configurations, every traced message delivered, the
/// same on 1 and 2 threads.
#[test]
fn dumpi_traces_replay_on_the_example_networks() {
    replay_on_example_networks(
        "[[workload.jobs]]\nkind = \"dumpi\"\nmeta = \"schedule/tests/data/dumpi/testtrace.meta\"\n\
         [[workload.jobs]]\nkind = \"dumpi\"\nmeta = \"schedule/tests/data/dumpi/testbgp.meta\"\ncompute_scale = 0.01\n\
         [[workload.jobs]]\nkind = \"dumpi\"\nmeta = \"schedule/tests/data/dumpi/lulesh8.meta\"\ncompute_scale = 0.001\n",
    );
}

/// OTF2 archives (Score-P's record of an MPI broadcast on 4 ranks; one written by the OTF2
/// library with blocking and non-blocking messages, sub-communicators and collectives;
/// LULESH on 8 ranks traced by xnet's PMPI tracer)
/// replay to completion on the Dragonfly, RRG and HyperX example configurations, every
/// message delivered, the same on 1 and 2 threads.
#[cfg(feature = "otf2")]
#[test]
fn otf2_archives_replay_on_the_example_networks() {
    replay_on_example_networks(
        "[[workload.jobs]]\nkind = \"otf2\"\narchive = \"otf2/tests/data/sst_bcast/traces.otf2\"\n\
         [[workload.jobs]]\nkind = \"otf2\"\narchive = \"otf2/tests/data/mixed/traces.otf2\"\n\
         [[workload.jobs]]\nkind = \"otf2\"\narchive = \"otf2/tests/data/lulesh8/traces.otf2\"\ncompute_scale = 0.001\n",
    );
}

#[test]
fn bad_traces_are_refused_naming_the_key_file_rank_and_byte() {
    let refused = |job: &str| {
        let read = |path: &str| match path {
            "t/bad.meta" => Ok(b"numprocs=2\nfileprefix=bad\n".to_vec()),
            "t/other.meta" => Ok(b"numprocs=3\nfileprefix=other\n".to_vec()),
            "t/bad-0000.bin" => {
                Ok(b"not a trace at all, not a trace at all, not a trace at all, not a trace at all".to_vec())
            }
            _ => Err("No such file or directory".to_string()),
        };
        let text = format!("{}\n[workload]\n[[workload.jobs]]\nkind = \"dumpi\"\n{job}\n", clique(2));
        xnet_models::config::Config::parse_with_files(&text, &[], &read).unwrap_err().to_string()
    };
    let e = refused("meta = \"t/none.meta\"");
    assert!(
        e.contains("workload.jobs[0].meta: cannot read the DUMPI trace t/none.meta: No such file"),
        "{e}"
    );
    let e = refused("meta = \"t/bad.meta\"");
    assert!(e.contains("workload.jobs[0].meta: t/bad-0000.bin: rank 0: byte 0: not a DUMPI trace"), "{e}");
    // A rank file that is not there is named with what the .meta file said.
    let e = refused("meta = \"t/other.meta\"");
    assert!(
        e.contains(
            "cannot read the DUMPI trace t/other-0000.bin: No such file or directory (the rank file of rank 0: \
             t/other.meta gives numprocs = 3 and fileprefix = other, read from its folder)"
        ),
        "{e}"
    );
}

#[cfg(feature = "otf2")]
#[test]
fn bad_otf2_archives_are_refused_naming_the_key_file_and_rank() {
    let refused = |archive: &str| {
        let read = |path: &str| std::fs::read(path).map_err(|e| e.to_string());
        let text = format!(
            "{}\n[workload]\n[[workload.jobs]]\nkind = \"otf2\"\narchive = \"{archive}\"\n",
            clique(4)
        );
        xnet_models::config::Config::parse_with_files(&text, &[], &read).unwrap_err().to_string()
    };
    let e = refused("t/none/traces.otf2");
    assert!(e.contains("workload.jobs[0].archive: cannot read the OTF2 archive t/none/traces.otf2: "), "{e}");
    // A DUMPI trace is not an OTF2 archive.
    let e = refused("schedule/tests/data/dumpi/testtrace.meta");
    assert!(
        e.contains("workload.jobs[0].archive: schedule/tests/data/dumpi/testtrace.meta: not an OTF2 archive"),
        "{e}"
    );
    // An archive whose rank 1 has no events file.
    let dir = tempfile::tempdir().unwrap();
    for f in ["traces.otf2", "traces.def", "traces/0.def", "traces/0.evt", "traces/1.def"] {
        let to = dir.path().join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(format!("otf2/tests/data/mixed/{f}"), to).unwrap();
    }
    let anchor = dir.path().join("traces.otf2");
    let e = refused(anchor.to_str().unwrap());
    assert!(e.contains(&format!("workload.jobs[0].archive: {}: rank 1: ", anchor.display())), "{e}");
}

#[test]
fn replicas_run_side_by_side_as_independent_copies() {
    // Two copies of a 4-rank recursive-doubling allreduce on a clique of 8: ranks 0-3 and
    // 4-7, never meeting: the time of one copy (2 rounds), twice its messages.
    let one = "{collective = \"allreduce\", bytes = 64, algorithm = \"recursive_doubling\"}";
    let text = collectives_job(&clique(8), 4, one).replace("ranks = 4\n", "ranks = 4\nreplicas = 2\n");
    let r = run(&build(&text, &[]), 2);
    let job = &r.workload.as_ref().unwrap().jobs[0];
    assert_eq!((job.ranks, job.completion_time, job.messages), (8, Some(2 * ONE_HOP), 16));
    // Three copies of sst-dumpi's 4-rank trace: 12 ranks, three times its 4 ring messages
    // and its collectives' messages.
    let trace = |copies: u32| {
        let text = format!(
            "{}\n[workload]\n[[workload.jobs]]\nkind = \"dumpi\"\nmeta = \"schedule/tests/data/dumpi/testtrace.meta\"\ncompute_scale = 0.001\nreplicas = {copies}\n",
            clique(12)
        );
        let r = run(&with_files(&text, &[]), 1);
        let job = r.workload.as_ref().unwrap().jobs[0].clone();
        (job.ranks, job.messages, job.completion_time.is_some())
    };
    let (ranks, messages, done) = trace(1);
    assert!(done);
    assert_eq!(trace(3), (3 * ranks, 3 * messages, true));
}

#[test]
fn background_traffic_can_be_kept_off_the_ranks_endpoints() {
    // Two ranks (endpoints 0 and 1) allreduce 40 times next to uniform background traffic
    // from the other six endpoints: by default some background packets go to the ranks'
    // endpoints; with `background = "free"` none does, and the congestors still send.
    let deliveries = |background: &str| {
        let text = format!(
            "{}\n[traffic]\npattern = \"uniform\"\nload = 0.3\n[workload]\nbackground = \"{background}\"\n\
             [[workload.jobs]]\nkind = \"collectives\"\nranks = 2\niterations = 40\n\
             operations = [{{collective = \"allreduce\", bytes = 8}}]\n",
            clique(8)
        );
        let mut sim = build(&text, &[]);
        sim.record_deliveries = true;
        let r = run(&sim, 1);
        assert!(r.workload.as_ref().unwrap().finished());
        let background: Vec<_> =
            r.deliveries.iter().filter(|d| d.id & WORKLOAD_PACKET == 0).cloned().collect();
        let to_ranks = background.iter().filter(|d| d.dst < 2).count();
        (background.len(), to_ranks)
    };
    let (any, any_to_ranks) = deliveries("any");
    assert!(any_to_ranks > 0, "{any_to_ranks} of {any}");
    let (free, free_to_ranks) = deliveries("free");
    assert_eq!(free_to_ranks, 0);
    assert!(free > 0);
    let refused = xnet_models::config::Config::parse(
        &format!("{}\n[workload]\nbackground = \"none\"\n[[workload.jobs]]\nkind = \"collectives\"\nranks = 2\noperations = [{{collective = \"barrier\"}}]\n", clique(8)),
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(refused.contains("workload.background") && refused.contains("\"free\""), "{refused}");
}

/// Chakra traces (ASTRA-sim's 4-rank microbenchmarks: one 1 MiB collective each; its
/// 8-rank ring all-reduce of sends, receives and computations) replay to completion on the
/// Dragonfly, RRG and HyperX example configurations, the collectives as NCCL runs them and
/// as MPICH does, every message delivered, the same on 1 and 2 threads.
#[test]
fn chakra_traces_replay_on_the_example_networks() {
    let micro = |kind: &str, library: &str| {
        format!(
            "[[workload.jobs]]\nkind = \"chakra\"\ntrace = \"schedule/tests/data/chakra/microbenchmarks/{kind}.0.et\"\n\
             library = \"{library}\"\n"
        )
    };
    let mut jobs: String = ["all_reduce", "all_gather", "all_to_all", "reduce_scatter"]
        .iter()
        .map(|k| micro(k, "nccl"))
        .collect();
    jobs += &micro("all_reduce", "mpich");
    jobs += "[[workload.jobs]]\nkind = \"chakra\"\n\
             trace = \"schedule/tests/data/chakra/custom_ring_allreduce_8npus_1MB/custom_allreduce.0.et\"\n";
    replay_on_example_networks(&jobs);
}

#[test]
fn a_chakra_trace_keeps_its_computations_and_messages() {
    // ASTRA-sim's custom ring all-reduce: per rank 7 computations of 7 us in a chain and
    // 14 messages of 128 KiB to the next rank; on an ideal network the computations are
    // the whole time, 49 us of 0.64 ns cycles.
    let text = format!(
        "{}\n[workload]\n[[workload.jobs]]\nkind = \"chakra\"\n\
         trace = \"schedule/tests/data/chakra/custom_ring_allreduce_8npus_1MB/custom_allreduce.0.et\"\n",
        clique(8)
    );
    let sim = with_files(&text, &["simulation.cycles=10000000"]);
    let job = &sim.workload().unwrap().jobs[0];
    assert_eq!(job.ideal.as_ref().ok().copied(), Some(49_000.0 / 0.64));
    let g = &job.ops.graph;
    let sends: Vec<(u32, u64)> = (0..g.ops_in_rank(3))
        .filter_map(|o| match g.op(3, o) {
            Op::Send { to, bytes, .. } => Some((to, bytes)),
            _ => None,
        })
        .collect();
    assert_eq!(sends, vec![(4, 131_072); 14]);
    let r = run(&sim, 2);
    let w = r.workload.as_ref().unwrap();
    assert!(w.finished() && w.jobs[0].messages == 8 * 14, "{:?}", w.diagnosis(0));
    // Its computation is known: 49 us on every rank, in cycles (rounded up).
    assert_eq!(w.jobs[0].compute.as_deref(), Some(&[76_563u64; 8][..]));
    let step = w.jobs[0].steps()[0];
    let end = w.jobs[0].completion_time.unwrap();
    assert_eq!((step.time, step.exposed), (end, end - 76_563));
}

#[test]
fn a_chakra_trace_s_collectives_are_timed() {
    // ASTRA-sim's all-reduce microbenchmark: one 1 MiB all-reduce on 4 ranks, no
    // computation.
    let text = format!(
        "{}
[workload]
[[workload.jobs]]
kind = \"chakra\"\n\
         trace = \"schedule/tests/data/chakra/microbenchmarks/all_reduce.0.et\"\n",
        clique(8)
    );
    let sim = with_files(&text, &["simulation.cycles=10000000"]);
    let r = run(&sim, 1);
    let job = &r.workload.as_ref().unwrap().jobs[0];
    assert_eq!(job.collectives.len(), 1);
    let c = &job.collectives[0];
    assert_eq!((c.phase.name.as_str(), c.phase.bytes, c.parts), ("allreduce", 1 << 20, 4));
    assert_eq!(c.phase.bus_factor, 1.5);
    assert!(c.start < c.end && c.end <= job.completion_time.unwrap());
    assert_eq!(job.compute.as_deref(), Some(&[0u64; 4][..]));
}

/// A generated training step exported as Chakra traces (collectives whole, on process
/// groups) and read back as a `chakra` job: every rank sends the same collective messages
/// (peer and size) as the step it came from, since both expand its collectives by NCCL's
/// tuning model, the same bytes to the other pipeline stage (whole and eagerly, as
/// ASTRA-sim sends them, where the step sends NCCL's chunks and posted-buffer records),
/// and computes as long, to the microsecond Chakra keeps.
#[test]
fn a_training_step_exported_as_chakra_reads_back_as_the_same_traffic() {
    for extra in [
        "tensor = 2\npipeline = 2\ndata = 2",
        "tensor = 2\npipeline = 2\ndata = 2\nsequence_parallel = true\ndistributed_optimizer = true",
        "pipeline = 2\ndata = 4\nexperts = 4\ntop_k = 2\nexpert_parallel = 2",
    ] {
        let training = format!(
            "{}\n[workload]\n[[workload.jobs]]\nname = \"step\"\nkind = \"training\"\nlayers = 4\nhidden = 256\n\
             heads = 4\nsequence = 128\nvocabulary = 1000\nglobal_batch = 8\ngpu_tflops = 10\n{extra}\n",
            clique(8)
        );
        let cfg = xnet_models::config::Config::parse(&training, &[]).unwrap();
        let section = cfg.workload.as_ref().unwrap();
        let traces = job_chakra(section, 0, 1).unwrap().unwrap();
        let dir = tempfile::TempDir::new().unwrap();
        for (r, bytes) in traces.ranks.iter().enumerate() {
            std::fs::write(dir.path().join(format!("step.{r}.et")), bytes).unwrap();
        }
        std::fs::write(dir.path().join("g.json"), traces.groups_json()).unwrap();
        let chakra = format!(
            "{}\n[workload]\n[[workload.jobs]]\nkind = \"chakra\"\ntrace = \"{}/step.0.et\"\ngroups = \"{}/g.json\"\n",
            clique(8),
            dir.path().display(),
            dir.path().display()
        );
        let read = with_files(&chakra, &[]);
        let generated = job_ops(section, 0, 1).unwrap();
        let replayed = &read.workload().unwrap().jobs[0].ops;
        let (g, c) = (&generated.graph, &replayed.graph);
        assert_eq!(g.num_ranks(), c.num_ranks());
        // Both shapes have 2 stages of 4 ranks.
        let stage = |rank: u32| rank / 4;
        for r in 0..g.num_ranks() {
            // Collective messages to the rank's stage; bytes of data to the other.
            let traffic = |graph: &std::sync::Arc<dyn xnet_models::schedule::Graph>| {
                let (mut sends, mut across) = (Vec::new(), 0);
                for o in 0..graph.ops_in_rank(r) {
                    match graph.op(r, o) {
                        Op::Send { to, bytes, .. } if stage(to) == stage(r) => sends.push((to, bytes)),
                        Op::Send { bytes, .. } if bytes > 64 => across += bytes,
                        _ => {}
                    }
                }
                sends.sort_unstable();
                (sends, across)
            };
            let (made, kept) = (traffic(g), traffic(c));
            assert!(made.1 > 0 && !made.0.is_empty(), "{extra}: rank {r}");
            assert_eq!(made, kept, "{extra}: rank {r}");
        }
        // The computation, microseconds rounded up per piece.
        let (made, kept) = (generated.compute.as_deref().unwrap(), replayed.compute.as_deref().unwrap());
        for (m, k) in made.iter().zip(kept) {
            assert!(
                k >= m && (*k as f64) < *m as f64 + 40.0 * 1000.0 / 0.64,
                "{extra}: {made:?} vs {kept:?}"
            );
        }
    }
}

#[test]
fn bad_chakra_jobs_are_refused_naming_the_key_and_the_file() {
    let refused = |job: &str| {
        let read = |path: &str| std::fs::read(path).map_err(|e| e.to_string());
        let text = format!("{}\n[workload]\n[[workload.jobs]]\nkind = \"chakra\"\n{job}\n", clique(8));
        xnet_models::config::Config::parse_with_files(&text, &[], &read).unwrap_err().to_string()
    };
    let dir = "schedule/tests/data/chakra/microbenchmarks";
    let e = refused(&format!("trace = \"{dir}/all_reduce.1.et\""));
    assert!(e.contains("workload.jobs[0].trace") && e.contains("name rank 0's file, PREFIX.0.et"), "{e}");
    let e = refused(&format!("trace = \"{dir}/none.0.et\""));
    assert!(e.contains("cannot read the Chakra trace") && e.contains("none.0.et"), "{e}");
    let e = refused(&format!("trace = \"{dir}/all_reduce.0.et\"\nlibrary = \"rccl\""));
    assert!(e.contains("workload.jobs[0].trace") && e.contains("library: unknown `rccl`"), "{e}");
    let e = refused(&format!("trace = \"{dir}/all_reduce.0.et\"\ngroups = \"{dir}/groups.json\""));
    assert!(e.contains("groups.json"), "{e}");
    // A file that is not a trace is named with its rank and byte.
    let e = refused("trace = \"schedule/tests/data/dumpi/testtrace-0000.bin\"");
    assert!(e.contains("PREFIX.0.et"), "{e}");
    let e = refused(&format!("trace = \"{dir}/all_reduce.0.et\"\nchannels = 0"));
    assert!(e.contains("channels: must be 1 to 64"), "{e}");
}

#[test]
fn a_binary_goal_file_runs_as_its_text_does() {
    // tests/data/wildcard_ring.bin is LogGOPSim's txt2bin (76451de) output of the .goal
    // beside it: wildcards, rendezvous messages, dependencies.
    let job = |file: &str| {
        let text = format!(
            "{}\n[workload]\neager_limit = 512\n[[workload.jobs]]\nkind = \"goal\"\nfile = \"tests/data/{file}\"\n",
            clique(8)
        );
        let r = run(&with_files(&text, &[]), 2);
        let w = r.workload.unwrap();
        (w.jobs[0].completion_time, w.jobs[0].messages, w.jobs[0].rank_finish.clone())
    };
    let text = job("wildcard_ring.goal");
    assert!(text.0.is_some() && text.1 == 16);
    assert_eq!(job("wildcard_ring.bin"), text);
}
