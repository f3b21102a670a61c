//! `xnet study`: a grid of overrides expanded into runs, one result file each, resumable,
//! with `--status`, `--task` (what a Slurm array task runs) and `--slurm --no-submit`.
//! The Slurm array itself is tested in `slurm.rs`; the Python package reading the folder
//! in `python/tests`.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// Two routings x two patterns of the quick HyperX, two loads each.
const STUDY: &str = r#"
[study]
base = "base.toml"
loads = [0.1, 0.4]
threads = 1
[set]
"simulation.cycles" = 1000
"simulation.warmup" = 300
"simulation.sample_period" = 100
"router.vcs" = 4
[grid]
"routing.algorithm" = ["dor", "valiant"]
"traffic.pattern" = ["uniform", "tornado"]
"#;

const RUNS: [&str; 4] = ["000-dor-uniform", "001-dor-tornado", "002-valiant-uniform", "003-valiant-tornado"];

fn setup(d: &Path) {
    std::fs::copy(workspace().join("configs/quick.toml"), d.join("base.toml")).unwrap();
    write(d, "s.toml", STUDY);
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Rewrites a result file's `status` attribute (as a run that ended otherwise left it).
fn set_status(path: &Path, status: &str) {
    let f = hdf5::File::with_options().with_fapl(|p| p.file_locking(false)).open_rw(path).unwrap();
    f.delete_attr("status").unwrap();
    let v: hdf5::types::VarLenUnicode = status.parse().unwrap();
    f.new_attr::<hdf5::types::VarLenUnicode>().create("status").unwrap().write_scalar(&v).unwrap();
}

/// Waits up to `limit` for `what` to hold, checking every 100 ms.
fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether another process holds a lock on the file at `path` (a run writing it).
fn locked(path: &Path) -> bool {
    let f = std::fs::File::open(path).unwrap();
    let held = matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock));
    held
}

#[test]
fn a_study_runs_every_grid_point_and_resumes_what_is_missing() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    setup(d);
    let out = xnet_expect(d, &["study", "s.toml", "--dir", "st", "--no-report"], 0);
    assert!(stderr(&out).contains("4 runs x 2 loads"), "{}", describe(&out));
    let st = d.join("st");
    for run in RUNS {
        let file = open(&st.join(format!("runs/{run}.h5")));
        assert_eq!(attr_str(&file, "status"), "completed", "{run}");
        // The run is what its name says: the override reached the simulation.
        assert_eq!(attr_str(&file, "routing"), run.split('-').nth(1).unwrap(), "{run}");
        assert_eq!(file.group("points").unwrap().member_names().unwrap().len(), 2, "{run}");
        assert!(!st.join(format!("runs/{run}.partial.h5")).exists());
    }
    let manifest = std::fs::read_to_string(st.join("manifest.toml")).unwrap();
    assert!(manifest.contains("\"traffic.pattern\" = \"tornado\""), "{manifest}");

    // A second call finds everything done.
    let again = xnet_expect(d, &["study", "s.toml", "--dir", "st", "--no-report"], 0);
    assert!(stderr(&again).contains("(4 done, 0 to run"), "{}", describe(&again));

    // A lost result and an interrupted run (its partial file) are redone, nothing else; a
    // partial file holding a finished result (its run ended after its study was killed) is
    // kept as the result, not redone.
    let kept = st.join("runs/000-dor-uniform.h5");
    let before = std::fs::metadata(&kept).unwrap().modified().unwrap();
    std::fs::remove_file(st.join("runs/001-dor-tornado.h5")).unwrap();
    let interrupted = st.join("runs/003-valiant-tornado.partial.h5");
    std::fs::rename(st.join("runs/003-valiant-tornado.h5"), &interrupted).unwrap();
    set_status(&interrupted, "interrupted");
    let finished = st.join("runs/002-valiant-uniform.partial.h5");
    std::fs::rename(st.join("runs/002-valiant-uniform.h5"), &finished).unwrap();
    let finished_bytes = std::fs::read(&finished).unwrap();
    let status = xnet_expect(d, &["study", "--status", "st"], 0);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("4 runs: 1 done, 3 started, 0 pending"), "{text}");
    let resumed = xnet_expect(d, &["study", "s.toml", "--dir", "st", "--no-report"], 0);
    assert!(stderr(&resumed).contains("(2 done, 2 to run"), "{}", describe(&resumed));
    assert!(stderr(&resumed).contains("run 002-valiant-uniform: its file holds a finished result"));
    assert!(std::fs::read(st.join("runs/002-valiant-uniform.h5")).unwrap() == finished_bytes);
    assert_eq!(attr_str(&open(&st.join("runs/003-valiant-tornado.h5")), "status"), "completed");
    assert_eq!(std::fs::metadata(&kept).unwrap().modified().unwrap(), before, "a done run was redone");
    for run in RUNS {
        assert!(st.join(format!("runs/{run}.h5")).exists(), "{run}");
    }
}

/// In a terminal (util-linux's `script` gives the study one, 60 columns wide), every line
/// of the display stands alone: the heading is not written onto the bar's first line, and
/// the bar's message is cut to the width rather than wrapped (a wrapped line outlives the
/// redraw).
#[test]
fn the_progress_display_leaves_no_stale_line_in_a_terminal() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    setup(d);
    let command = format!("stty cols 60 rows 20; {XNET} study s.toml --dir st --no-report");
    let o = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(d)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("util-linux's script (Debian's bsdutils) runs the study in a terminal");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    // What the terminal shows on a line: the text after the last carriage return or erase.
    let shown =
        |line: &str| line.trim_end_matches('\r').rsplit(['\r', '\u{1b}']).next().unwrap_or("").to_string();
    let heading: Vec<&str> = text.split('\n').filter(|l| l.contains("study s: 4 runs x 2 loads")).collect();
    assert_eq!(heading.len(), 1, "{text:?}");
    assert!(shown(heading[0]).starts_with("study s: 4 runs"), "the heading shares a line: {:?}", heading[0]);
    let frames: Vec<&str> = text
        .split(['\r', '\n'])
        .map(|f| f.rsplit("\u{1b}[2K").next().unwrap_or(f))
        .filter(|f| f.starts_with("runs ") && f.contains(" ["))
        .collect();
    assert!(frames.len() >= 2, "no progress frames: {text:?}");
    for frame in frames {
        assert!(frame.trim_end().chars().count() <= 60, "a frame wider than the terminal: {frame:?}");
    }
}

#[test]
fn a_task_runs_one_run_as_a_slurm_array_task_does_and_gives_the_same_file() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    setup(d);
    // --slurm --no-submit prepares the folder and writes the array script.
    let out = xnet_expect(d, &["study", "s.toml", "--dir", "st", "--slurm", "--no-submit"], 0);
    let script = std::fs::read_to_string(d.join("st/slurm.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-3"), "{script}");
    assert!(script.contains("#SBATCH --cpus-per-task=1"), "{script}");
    assert!(script.contains("study --task \"$SLURM_ARRAY_TASK_ID\""), "{script}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("4 array tasks"));
    // Task 2 outside Slurm runs directly.
    xnet_expect(d, &["study", "--task", "2", "st"], 0);
    let status =
        String::from_utf8_lossy(&xnet_expect(d, &["study", "--status", "st"], 0).stdout).into_owned();
    assert!(status.contains("4 runs: 1 done, 0 started, 3 pending"), "{status}");
    // The same run made by `xnet sweep` by hand is identical.
    let by_hand = d.join("hand.h5");
    let quick = d.join("base.toml");
    xnet_expect(
        d,
        &[
            "sweep",
            s(&quick),
            "--loads",
            "0.1,0.4",
            "-t",
            "1",
            "-q",
            "-o",
            s(&by_hand),
            "--set",
            "simulation.cycles=1000",
            "--set",
            "simulation.warmup=300",
            "--set",
            "simulation.sample_period=100",
            "--set",
            "router.vcs=4",
            "--set",
            "routing.algorithm=valiant",
            "--set",
            "traffic.pattern=uniform",
        ],
        0,
    );
    let diff = differences(&dump(&by_hand), &dump(&d.join("st/runs/002-valiant-uniform.h5")));
    assert!(diff.is_empty(), "{diff:?}");
    xnet_expect(d, &["study", "--task", "9", "st"], 1);
}

#[test]
fn bad_studies_are_refused_before_anything_runs() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    setup(d);
    let cases: [(&str, &[&str]); 4] = [
        (
            "[study]\nbase = \"base.toml\"\n[grid]\n\"routing.algorithm\" = [\"dor\", \"nope\"]\n",
            &["run 001-nope", "routing.algorithm", "nope"],
        ),
        ("[study]\nbase = \"missing.toml\"\n", &["study.base", "missing.toml"]),
        ("[study]\nbase = \"base.toml\"\nlodas = [0.1]\n", &["lodas"]),
        (
            "[study]\nbase = \"base.toml\"\n[grid]\n\"traffic.load\" = 0.3\n",
            &["grid.\"traffic.load\"", "list"],
        ),
    ];
    for (k, (text, expected)) in cases.iter().enumerate() {
        let name = format!("bad{k}.toml");
        write(d, &name, text);
        let out = xnet_expect(d, &["study", &name, "--dir", "never"], 1);
        let err = stderr(&out);
        for e in *expected {
            assert!(err.contains(e), "case {k}: `{e}` missing from: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert!(!d.join("never").exists(), "case {k}: a folder was made");
    }
    // A folder holding another study is not mixed with this one.
    xnet_expect(d, &["study", "s.toml", "--dir", "st", "--slurm", "--no-submit"], 0);
    write(d, "other.toml", &STUDY.replace("[0.1, 0.4]", "[0.2]"));
    let out = xnet_expect(d, &["study", "other.toml", "--dir", "st"], 1);
    assert!(stderr(&out).contains("holds another study"), "{}", describe(&out));
}

/// A study keeps the files its base configuration names (here the fabric) in its copy of
/// the base: the runs use the fabric as it was when the study was created, and a study
/// whose fabric changed since is not mixed into the same folder. A fabric named in
/// `[set]` is read when each run starts instead.
#[test]
fn a_study_keeps_the_fabric_its_base_names() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    // A ring of four switches.
    write(d, "ring.edges", "a b\nb c\nc d\nd a\n");
    let quick = std::fs::read_to_string(workspace().join("configs/quick.toml")).unwrap();
    let (topology, router) = (quick.find("[topology]").unwrap(), quick.find("[router]").unwrap());
    let base_naming = |path: &str| {
        let fabric = format!("[topology]\nkind = \"file\"\npath = \"{path}\"\nendpoints_per_switch = 2\n\n");
        format!("{}{fabric}{}", &quick[..topology], &quick[router..])
    };
    let base = base_naming("ring.edges");
    write(d, "base.toml", &base);
    let study = STUDY.replace("\"routing.algorithm\" = [\"dor\", \"valiant\"]\n", "").replace(
        "\"traffic.pattern\" = [\"uniform\", \"tornado\"]",
        "\"routing.selection\" = [\"random\", \"adaptive\"]",
    );
    write(d, "s.toml", &study);
    let out = xnet_expect(d, &["study", "s.toml", "--dir", "st", "--no-report"], 0);
    let copy = std::fs::read_to_string(d.join("st/base.toml")).unwrap();
    let parsed: toml::Table = toml::from_str(&copy).unwrap();
    assert_eq!(parsed["topology"]["contents"].as_str(), Some("a b\nb c\nc d\nd a\n"), "{copy}");
    assert!(copy.contains("# phits/cycle/endpoint"), "the base's comments are kept: {copy}");
    for run in ["000-random", "001-adaptive"] {
        let file = open(&d.join(format!("st/runs/{run}.h5")));
        assert_eq!(attr_u64(&file, "switches"), 4, "{run}: {}", describe(&out));
    }
    // Unchanged, the study resumes in its folder.
    let again = xnet_expect(d, &["study", "s.toml", "--dir", "st", "--no-report"], 0);
    assert!(stderr(&again).contains("(2 done, 0 to run"), "{}", describe(&again));

    // The fabric changes: the study refuses to go on in the same folder, and a run made
    // from the folder alone (as a Slurm array task does) uses the copy.
    write(d, "ring.edges", "a b\nb c\nc a\n");
    std::fs::remove_file(d.join("st/runs/001-adaptive.h5")).unwrap();
    let refused = xnet_expect(d, &["study", "s.toml", "--dir", "st", "--no-report"], 1);
    assert!(stderr(&refused).contains("has changed since"), "{}", describe(&refused));
    let task = xnet_expect(d, &["study", "--task", "1", "st"], 0);
    let file = open(&d.join("st/runs/001-adaptive.h5"));
    assert_eq!(attr_u64(&file, "switches"), 4, "{}", describe(&task));

    // A folder made by an xnet that kept the base as given still resumes.
    write(d, "ring.edges", "a b\nb c\nc d\nd a\n");
    write(&d.join("st"), "base.toml", &base);
    let old = xnet_expect(d, &["study", "s.toml", "--dir", "st", "--no-report"], 0);
    assert!(stderr(&old).contains("(2 done, 0 to run"), "{}", describe(&old));

    // A fabric named in [set] replaces the base's (here a file that does not exist), and
    // is read by each run: the copy of the base is the base as given.
    write(d, "placeholder.toml", &base_naming("missing.edges"));
    write(
        d,
        "s2.toml",
        &study
            .replace("base.toml", "placeholder.toml")
            .replace("[set]\n", "[set]\n\"topology.path\" = \"ring.edges\"\n"),
    );
    xnet_expect(d, &["study", "s2.toml", "--dir", "st2", "--no-report"], 0);
    assert_eq!(std::fs::read_to_string(d.join("st2/base.toml")).unwrap(), base_naming("missing.edges"));
    assert_eq!(attr_u64(&open(&d.join("st2/runs/000-random.h5")), "switches"), 4);
    // Its status is read from the folder alone, wherever it is asked from.
    let status = xnet_expect(&d.join("st2"), &["study", "--status", "."], 0);
    assert!(String::from_utf8_lossy(&status.stdout).contains("2 runs: 2 done"), "{}", describe(&status));
}

/// A study's copy of its base holds the rank mapping files the base's jobs name
/// (`mapping_contents`), as it holds a fabric: the runs place the ranks as the file said
/// when the study was created, a mapping changed since is refused in the same folder, and
/// a run made from the folder alone needs no file.
#[test]
fn a_study_keeps_the_rank_mapping_its_base_names() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let mapping = "# endpoint per rank\n9\n3\n5\n1\n";
    write(d, "ranks.map", mapping);
    let quick = std::fs::read_to_string(workspace().join("configs/quick.toml")).unwrap();
    let jobs = "\n[workload]\n[[workload.jobs]]   # placed by the file\nkind = \"butterfly\"\nranks = 4\n\
                message_bytes = 64\nmapping = \"file\"\nmapping_file = \"ranks.map\"\n";
    write(d, "base.toml", &(quick + jobs));
    write(d, "s.toml", &STUDY.replace("\"traffic.pattern\" = [\"uniform\", \"tornado\"]\n", ""));
    let out = xnet_expect(d, &["study", "s.toml", "--dir", "st", "--no-report"], 0);
    let copy = std::fs::read_to_string(d.join("st/base.toml")).unwrap();
    let parsed: toml::Table = toml::from_str(&copy).unwrap();
    assert_eq!(parsed["workload"]["jobs"][0]["mapping_contents"].as_str(), Some(mapping), "{copy}");
    assert!(copy.contains("# placed by the file"), "the base's comments are kept: {copy}");
    for run in ["000-dor", "001-valiant"] {
        let file = open(&d.join(format!("st/runs/{run}.h5")));
        let config: toml::Table = toml::from_str(&attr_str(&file, "config")).unwrap();
        assert_eq!(config["workload"]["jobs"][0]["mapping_contents"].as_str(), Some(mapping), "{run}");
        assert_eq!(attr_str(&file, "status"), "completed", "{run}: {}", describe(&out));
    }
    // The mapping changes: refused in the same folder; the folder's runs use the copy.
    write(d, "ranks.map", "0\n1\n2\n3\n");
    let refused = xnet_expect(d, &["study", "s.toml", "--dir", "st", "--no-report"], 1);
    assert!(stderr(&refused).contains("has changed since"), "{}", describe(&refused));
    std::fs::remove_file(d.join("ranks.map")).unwrap();
    std::fs::remove_file(d.join("st/runs/001-valiant.h5")).unwrap();
    let task = xnet_expect(d, &["study", "--task", "1", "st"], 0);
    let file = open(&d.join("st/runs/001-valiant.h5"));
    let config: toml::Table = toml::from_str(&attr_str(&file, "config")).unwrap();
    assert_eq!(
        config["workload"]["jobs"][0]["mapping_contents"].as_str(),
        Some(mapping),
        "{}",
        describe(&task)
    );
}

#[test]
fn a_study_can_find_each_runs_saturation_load() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    write(d, "base.toml", HYPERX_2X2);
    let study = "[study]\nbase = \"base.toml\"\nloads = [0.2, 0.6]\nfind_saturation = true\n\
                 saturation_tolerance = 0.05\n[set]\n\"simulation.cycles\" = 4000\n\
                 \"simulation.warmup\" = 800\n[grid]\n\"routing.algorithm\" = [\"minimal\", \"dor\"]\n";
    write(d, "sat.toml", study);
    xnet_expect(d, &["study", "sat.toml", "--dir", "st", "--no-report"], 0);
    for run in ["000-minimal", "001-dor"] {
        let f = open(&d.join(format!("st/runs/{run}.h5")));
        assert_eq!(attr_str(&f, "saturation_search"), "bisection", "{run}");
        assert_eq!(attr_f64(&f, "saturation_tolerance"), 0.05, "{run}");
        let (low, high) = (attr_f64(&f, "saturation_low"), attr_f64(&f, "saturation_high"));
        assert!(low >= 0.2 && high <= 0.6 && high - low <= 0.05, "{run}: {low} {high}");
        assert!(f.group("points").unwrap().member_names().unwrap().len() > 2, "{run}: no bisection step");
    }
    // Settings that cannot go together, or a tolerance out of range, are refused by name.
    let cases: [(&str, &[&str]); 3] = [
        (
            "find_saturation = true\nstop_at_saturation = true\n",
            &["study.find_saturation", "study.stop_at_saturation"],
        ),
        ("saturation_tolerance = 0.01\n", &["study.saturation_tolerance", "find_saturation = true"]),
        (
            "find_saturation = true\nsaturation_tolerance = 0\n",
            &["study.saturation_tolerance", "at least 0.0001 and at most 0.5"],
        ),
    ];
    for (k, (section, expected)) in cases.iter().enumerate() {
        let name = format!("bad{k}.toml");
        write(d, &name, &format!("[study]\nbase = \"base.toml\"\n{section}"));
        let err = stderr(&xnet_expect(d, &["study", &name, "--dir", "never"], 1));
        for e in *expected {
            assert!(err.contains(e), "case {k}: `{e}` missing from: {err}");
        }
        assert!(!d.join("never").exists(), "case {k}: a folder was made");
    }
}

/// A study holds its folder: a second study on it is refused at once, computing nothing.
/// `kill -9` of the study ends its running sweep too (it stops as on SIGTERM, keeping what
/// it simulated) and frees the folder.
#[test]
fn a_study_locks_its_folder_and_its_runs_end_with_it() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    setup(d);
    let long = STUDY.replace("\"simulation.cycles\" = 1000", "\"simulation.cycles\" = 100000000");
    write(d, "long.toml", &long);
    let study = start(XNET, d, &["study", "long.toml", "--dir", "st", "-j", "1", "--no-report"], &[]);
    let partial = d.join("st/runs/000-dor-uniform.partial.h5");
    let progress = d.join("st/runs/000-dor-uniform.progress");
    wait_for(Duration::from_secs(60), "the first run simulating", || progress.exists());
    assert!(locked(&partial), "the running sweep does not hold its file");
    let log = std::fs::read(d.join("st/runs/000-dor-uniform.log")).unwrap();
    let second = xnet_expect(d, &["study", "long.toml", "--dir", "st", "--no-report"], 1);
    assert!(stderr(&second).contains("is in use by another `xnet study`"), "{}", describe(&second));
    assert!(std::fs::read(d.join("st/runs/000-dor-uniform.log")).unwrap() == log, "the second study ran");
    assert!(!d.join("st/runs/001-dor-tornado.log").exists(), "the second study started a run");
    let status = xnet_expect(d, &["study", "--status", "st"], 0);
    let running = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| l.starts_with("000-dor-uniform") && l.contains(" running"))
    };
    assert!(running(&status), "{}", describe(&status));
    let kill = Command::new("kill").args(["-KILL", &study.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let _ = wait_within(study, Duration::from_secs(10), "the killed study");
    // Its sweep stops (no orphan goes on writing the file) and records how it ended.
    wait_for(Duration::from_secs(60), "the killed study's run to stop", || !locked(&partial));
    assert_eq!(attr_str(&open(&partial), "status"), "interrupted");
    // The folder is free again.
    let status = xnet_expect(d, &["study", "--status", "st"], 0);
    assert!(String::from_utf8_lossy(&status.stdout).contains("1 started"), "{}", describe(&status));
    // Its progress file is left, but nothing holds its file: it is not shown as running.
    assert!(progress.exists());
    assert!(!running(&status), "{}", describe(&status));
    assert!(String::from_utf8_lossy(&status.stdout).contains("stopped at"), "{}", describe(&status));
}

/// Editing the folder's `base.toml` while the study runs would mix two configurations in
/// one study: no run starts after the edit, the running one finishes and is kept, and the
/// study fails naming the file.
#[test]
fn a_base_edited_while_the_study_runs_is_refused() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    setup(d);
    let grid = "[grid]\n\"simulation.cycles\" = [400000, 1000]\n";
    let text =
        STUDY.replace("\"simulation.cycles\" = 1000\n", "").replace("loads = [0.1, 0.4]", "loads = [0.1]");
    let text = format!("{}{grid}", &text[..text.find("[grid]").unwrap()]);
    write(d, "two.toml", &text);
    let study = start(XNET, d, &["study", "two.toml", "--dir", "st", "-j", "1", "--no-report"], &[]);
    let first = d.join("st/runs/000-400000.progress");
    wait_for(Duration::from_secs(60), "the first run's progress", || first.exists());
    let base = d.join("st/base.toml");
    let edited = std::fs::read_to_string(&base).unwrap().replace("load = 0.4", "load = 0.3");
    std::fs::write(&base, edited).unwrap();
    let (o, _) = wait_within(study, Duration::from_secs(600), "the study");
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(stderr(&o).contains("base.toml changed while the study ran"), "{}", describe(&o));
    assert_eq!(attr_str(&open(&d.join("st/runs/000-400000.h5")), "status"), "completed");
    assert!(!d.join("st/runs/001-1000.log").exists(), "a run started after the edit");
}

/// `-q` hides the progress, never a failure: each failed run and its log are named.
#[test]
fn a_quiet_study_names_its_failed_runs() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    setup(d);
    // A routing for another topology: the configuration parses, its build fails.
    let grid = "[grid]\n\"routing.algorithm\" = [\"dragonfly_valiant\"]\n";
    let text = format!("{}{grid}", &STUDY[..STUDY.find("[grid]").unwrap()]);
    write(d, "bad.toml", &text);
    let o = xnet_expect(d, &["study", "bad.toml", "--dir", "st", "-q", "--no-report"], 1);
    let err = stderr(&o);
    let run = "000-dragonfly_valiant";
    assert!(
        err.contains(&format!("run {run} failed")) && err.contains(&format!("{run}.log")),
        "{}",
        describe(&o)
    );
    assert!(err.contains(&format!("failed: {run}")), "{}", describe(&o));
}
