//! Application replay end to end: `xnet workload export` writes jobs as GOAL schedules that
//! run the same as the jobs they came from, its errors, and a schedule that can never
//! complete ending with exit code 4 and its diagnosis.

mod common;

use common::*;
use tempfile::TempDir;

/// A small HyperX with two generated jobs (one on random endpoints), 1 ns cycles so that
/// every computation is a whole number of nanoseconds, and a little background traffic.
const JOBS: &str = r#"
[simulation]
cycles = 400000
warmup = 0
sample_period = 200
[topology]
kind = "hyperx"
sides = [4, 4]
endpoints_per_switch = 2
[router]
vcs = 2
packet_size = 8
[routing]
algorithm = "dor"
[traffic]
pattern = "uniform"
load = 0.05
[workload]
ns_per_cycle = 1.0
[[workload.jobs]]
name = "halo"
kind = "stencil2d"
grid = [4, 4]
halo_bytes = 3000
iterations = 3
compute = 40
[[workload.jobs]]
name = "a2a"
kind = "alltoall"
ranks = 8
message_bytes = 200
mapping = "random"
"#;

#[test]
fn exported_jobs_run_as_goal_schedules_give_the_same_results() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let cfg = write(d, "jobs.toml", JOBS);
    let out = xnet_expect(d, &["workload", "export", s(&cfg), "-o", "goal"], 0);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("halo: 16 ranks") && said.contains("a2a: 8 ranks"), "{said}");
    // The same jobs, read from their schedules (kind, and so iterations, change).
    let replayed = JOBS
        .replace(
            "kind = \"stencil2d\"\ngrid = [4, 4]\nhalo_bytes = 3000\niterations = 3\ncompute = 40",
            "kind = \"goal\"\nfile = \"goal/halo.goal\"",
        )
        .replace(
            "kind = \"alltoall\"\nranks = 8\nmessage_bytes = 200",
            "kind = \"goal\"\nfile = \"goal/a2a.goal\"",
        );
    assert_eq!(replayed.matches("kind = \"goal\"").count(), 2);
    let goal_cfg = write(d, "goal.toml", &replayed);
    xnet_expect(d, &["run", s(&cfg), "-q", "-t", "1", "-o", "jobs.h5"], 0);
    xnet_expect(d, &["run", s(&goal_cfg), "-q", "-t", "2", "-o", "goal.h5"], 0);
    let (a, b) = (open(&d.join("jobs.h5")), open(&d.join("goal.h5")));
    for job in ["job_000", "job_001"] {
        let ranks = format!("points/000/workload/{job}/ranks");
        assert_eq!(rows::<RankRow>(&a, &ranks), rows::<RankRow>(&b, &ranks), "{job}");
    }
    for table in ["links", "latency_histogram", "workload/job_000/message_latency_histogram"] {
        let path = format!("points/000/{table}");
        assert_eq!(
            dataset_bytes(&a.dataset(&path).unwrap()),
            dataset_bytes(&b.dataset(&path).unwrap()),
            "{table}"
        );
    }
    // One job to a file.
    xnet_expect(d, &["workload", "export", s(&cfg), "--job", "1", "-o", "one.goal"], 0);
    let one = std::fs::read_to_string(d.join("one.goal")).unwrap();
    assert_eq!(one, std::fs::read_to_string(d.join("goal/a2a.goal")).unwrap());
}

/// `--format chakra` writes a training job as one `.et` file per rank and ASTRA-sim's
/// group file, which a `chakra` job runs; other kinds are refused, naming the job.
#[test]
fn a_training_job_exports_as_chakra_traces_that_run() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let training = "[[workload.jobs]]\nname = \"step\"\nkind = \"training\"\nlayers = 4\nhidden = 256\nheads = 4\n\
                    sequence = 128\nvocabulary = 1000\nglobal_batch = 8\ntensor = 2\npipeline = 2\ndata = 2\ngpu_tflops = 10\n";
    let base = JOBS
        .split("[[workload.jobs]]")
        .next()
        .unwrap()
        .replace("ns_per_cycle = 1.0", "")
        .replace("cycles = 400000", "cycles = 20000000");
    let cfg = write(d, "t.toml", &format!("{base}{training}"));
    let out = xnet_expect(d, &["workload", "export", s(&cfg), "--format", "chakra", "-o", "et"], 0);
    let said = String::from_utf8_lossy(&out.stdout);
    // Four tensor groups and four data groups.
    assert!(said.contains("step: 8 ranks, 8 process groups"), "{said}");
    assert!((0..8).all(|r| d.join(format!("et/step.{r}.et")).is_file()));
    let chakra =
        "[[workload.jobs]]\nkind = \"chakra\"\ntrace = \"et/step.0.et\"\ngroups = \"et/step.groups.json\"\n";
    let replay = write(d, "c.toml", &format!("{base}{chakra}"));
    let out = xnet_expect(d, &["run", s(&replay), "-t", "1", "-o", "c.h5"], 0);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("allreduce") && said.contains("exposed.ms"), "{said}");
    let cfg = write(d, "jobs.toml", JOBS);
    let o = xnet(d, &["workload", "export", s(&cfg), "--format", "chakra", "-o", "et2"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("job `halo` (stencil2d): only training jobs are exported as Chakra traces"), "{e}");
}

#[test]
fn export_refuses_what_it_cannot_write() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let cfg = write(d, "jobs.toml", JOBS);
    let o = xnet(d, &["workload", "export", s(&cfg), "--job", "fft", "-o", "x.goal"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("--job fft: no such job; the jobs are halo, a2a"), "{e}");
    let quick = workspace().join("configs/quick.toml");
    let o = xnet(d, &["workload", "export", s(&quick), "-o", "x.goal"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("no [workload]"), "{}", describe(&o));
    assert!(!d.join("x.goal").exists());
    // A job's own GOAL input is never replaced by its export (labels and comments kept).
    let own =
        "# mine\nnum_ranks 2\nrank 0 {\nsend_a: send 8b to 1 tag 1\n}\nrank 1 {\nrecv 8b from 0 tag 1\n}\n";
    let goal = write(d, "own.goal", own);
    let replay = write(
        d,
        "replay.toml",
        &JOBS.replace(
            "kind = \"stencil2d\"\ngrid = [4, 4]\nhalo_bytes = 3000\niterations = 3\ncompute = 40",
            "kind = \"goal\"\nfile = \"own.goal\"",
        ),
    );
    for output in [s(&goal), "./own.goal"] {
        let o = xnet(d, &["workload", "export", s(&replay), "--job", "halo", "-o", output]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains("is the input own.goal"), "{e}");
    }
    assert_eq!(std::fs::read_to_string(&goal).unwrap(), own);
    // Nor is a file written through a link; an earlier export is replaced, and said so.
    std::os::unix::fs::symlink(&goal, d.join("link.goal")).unwrap();
    let o = xnet(d, &["workload", "export", s(&cfg), "--job", "halo", "-o", "link.goal"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("link.goal is a symbolic link"), "{}", describe(&o));
    assert_eq!(std::fs::read_to_string(&goal).unwrap(), own);
    xnet_expect(d, &["workload", "export", s(&cfg), "--job", "halo", "-o", "x.goal"], 0);
    let o = xnet_expect(d, &["workload", "export", s(&cfg), "--job", "a2a", "-o", "x.goal"], 0);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("note: replaced the earlier x.goal"),
        "{}",
        describe(&o)
    );
    assert!(std::fs::read_to_string(d.join("x.goal")).unwrap().starts_with("num_ranks 8"));
    // Job names that would write outside the folder, or twice to one file, are refused.
    for (name, expected) in
        [("../../x", "workload.jobs[0].name"), ("a2a", "`a2a` is already the name of workload.jobs[0]")]
    {
        let named = write(d, "named.toml", &JOBS.replace("name = \"halo\"", &format!("name = \"{name}\"")));
        let o = xnet(d, &["workload", "export", s(&named), "-o", "out"]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains(expected), "{e}");
    }
    assert!(
        !d.join("out").exists() && !dir.path().parent().unwrap().parent().unwrap().join("x.goal").exists()
    );
    let leftovers: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_schedule_that_can_never_complete_exits_4_with_its_diagnosis() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    write(
        d,
        "stuck.goal",
        "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 1\n}\nrank 1 {\nl1: recv 8b from 0 tag 2\n}\n",
    );
    let text = JOBS.split("[[workload.jobs]]").next().unwrap().to_string()
        + "[[workload.jobs]]\nkind = \"goal\"\nfile = \"stuck.goal\"\n";
    let cfg = write(d, "stuck.toml", &text);
    let out = xnet_expect(d, &["run", s(&cfg), "-t", "1", "-o", "stuck.h5"], 4);
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("can never complete"), "{said}");
    // Ops are named by the file's labels (the receive is op 0 of rank 1, labelled l1).
    assert!(said.contains("(rank 1: l1 waits for a message from rank 0, tag 2"), "{said}");
    let f = open(&d.join("stuck.h5"));
    let w = f.group("points/000/workload").unwrap();
    assert!(attr_str(&w, "diagnosis").contains("rank 1: l1 waits for a message from rank 0, tag 2"));
}

/// What a sweep of jobs prints: one job table under one header, with each job's ideal time
/// and slowdown (completion over ideal); `-q` keeps only the saturation verdict.
#[test]
fn a_sweep_prints_each_jobs_slowdown_under_one_header() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let stencil = workspace().join("configs/workload-stencil.toml");
    let o = xnet_expect(d, &["sweep", s(&stencil), "-t", "1", "--loads", "0,0.2", "-o", "w.h5"], 0);
    let out = String::from_utf8_lossy(&o.stdout);
    let headers: Vec<&str> =
        out.lines().filter(|l| l.trim_start().starts_with("load") && l.contains(" job ")).collect();
    assert_eq!(headers.len(), 1, "{out}");
    let columns: Vec<&str> = headers[0].split_whitespace().collect();
    let at =
        |name: &str| columns.iter().position(|c| *c == name).unwrap_or_else(|| panic!("no {name}: {out}"));
    let (completion, ideal, slowdown) = (at("completion"), at("ideal"), at("slowdown"));
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() == columns.len() && (w[1] == "stencil" || w[1] == "fft"))
        .collect();
    assert_eq!(rows.len(), 4, "{out}");
    for row in &rows {
        let ideal: f64 = row[ideal].parse().unwrap();
        if ideal > 0.0 {
            let expected = row[completion].parse::<f64>().unwrap() / ideal;
            assert!((row[slowdown].parse::<f64>().unwrap() - expected).abs() < 1e-4, "{row:?}");
        } else {
            assert_eq!(row[slowdown], "-", "{row:?}");
        }
    }
    let quiet = xnet_expect(d, &["sweep", s(&stencil), "-q", "-t", "1", "--loads", "0,0.2", "-o", "q.h5"], 0);
    assert_eq!(
        String::from_utf8_lossy(&quiet.stdout),
        "no point saturated: the saturation load is above 0.2000, the highest load run\n"
    );
}
