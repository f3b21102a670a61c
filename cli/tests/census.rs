//! `xnet run --census`: the run counted for other partitionings, in each point's `census`
//! group (docs/scaling.md), the same on any threads, and its bad inputs.

mod common;

use common::*;
use hdf5::File;
use std::process::{Command, Stdio};
use tempfile::TempDir;

/// A census dataset of `file`'s first point as `(rows, columns, values)`.
fn matrix(file: &File, group: &str, name: &str) -> (usize, usize, Vec<u64>) {
    let ds = file.dataset(&format!("points/000/census/{group}/{name}")).unwrap();
    let shape = ds.shape();
    let values: Vec<u64> = match name {
        "events" | "messages" => ds.read_raw::<u32>().unwrap().into_iter().map(u64::from).collect(),
        _ => ds.read_raw::<u64>().unwrap(),
    };
    (shape[0], shape.get(1).copied().unwrap_or(1), values)
}

fn column_sums(file: &File, group: &str, name: &str) -> Vec<u64> {
    let (_, cols, values) = matrix(file, group, name);
    let mut sums = vec![0u64; cols];
    for row in values.chunks(cols) {
        for (c, v) in row.iter().enumerate() {
            sums[c] += v;
        }
    }
    sums
}

fn attr_vec_u64(file: &File, path: &str, name: &str) -> Vec<u64> {
    file.group(path).unwrap().attr(name).unwrap().read_raw::<u64>().unwrap()
}

#[test]
fn a_census_counts_the_run_for_other_partitionings_on_any_threads() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let run = |threads: &str, out: &str| {
        let o = xnet_expect(
            dir.path(),
            &[
                "run",
                s(&quick),
                "-t",
                threads,
                "-o",
                out,
                "--set",
                "simulation.cycles=1500",
                "--set",
                "simulation.warmup=500",
                "--census",
                "4,16",
            ],
            0,
        );
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let stderr = run("4", "four.h5");
    assert!(stderr.contains("census: no blocks-4 (no natural blocks in this network)"), "{stderr}");
    assert!(stderr.contains("linear-16 (window 1)"), "{stderr}");
    run("1", "one.h5");
    let four = open(&dir.path().join("four.h5"));
    let one = open(&dir.path().join("one.h5"));
    let mut groups = four.group("points/000/census").unwrap().member_names().unwrap();
    groups.sort();
    assert_eq!(groups, ["linear-16", "linear-4", "multilevel-16", "multilevel-4"]);

    let events = attr_vec_u64(&four, "points/000", "partition_events");
    let boundary = attr_vec_u64(&four, "points/000", "partition_boundary_messages");
    // The 4-thread run was split by the method its file names: the census of that
    // partitioning counts what its partitions did.
    let running = format!("{}-4", attr_str(&four, "partition_method"));
    assert_eq!(column_sums(&four, &running, "events"), events, "{running}");
    assert_eq!(column_sums(&four, &running, "messages"), boundary, "{running}");

    for g in &groups {
        for name in ["events", "messages", "bytes", "windows", "pair_messages", "pair_bytes"] {
            assert_eq!(matrix(&four, g, name), matrix(&one, g, name), "{g}/{name}: 4 threads against 1");
        }
        let (rows, cols, _) = matrix(&four, g, "events");
        assert_eq!(
            (rows, cols),
            (1500, g.split('-').nth(1).unwrap().parse().unwrap()),
            "{g}: a window a cycle"
        );
        assert_eq!(column_sums(&four, g, "events").iter().sum::<u64>(), events.iter().sum::<u64>(), "{g}");
        let messages: u64 = column_sums(&four, g, "messages").iter().sum();
        assert!(messages > 0, "{g}");
        assert_eq!(column_sums(&four, g, "pair_messages")[0], messages, "{g}: pairs add up");
        let path = format!("points/000/census/{g}");
        let waits = attr_vec_u64(&four, &path, "wait_events");
        let neighbour = attr_vec_u64(&four, &path, "neighbour_wait_events");
        assert!(waits.iter().zip(&neighbour).all(|(w, n)| n <= w), "{g}: waiting for fewer is never longer");
    }
}

#[test]
fn bad_census_requests_are_refused_by_name() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let q = s(&quick);
    expect_error(dir.path(), &["run", q, "--census", "1"], &["--census 1", "at least 2 partitions"]);
    expect_error(dir.path(), &["run", q, "--census", "4,65"], &["--census 65", "64 routers"]);
    expect_error(dir.path(), &["run", q, "--census-method", "linear"], &["--census-method", "--census"]);

    let o = Command::new("mpiexec")
        .args(["-n", "2", XNET, "run", q, "-q", "--census", "4"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("mpiexec (scripts/bootstrap.sh installs MPICH)");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(stderr.contains("--census counts on one rank (2 ranks here)"), "{}", describe(&o));
    assert!(!stderr.contains("panicked"), "{}", describe(&o));
}

#[test]
fn blocks_are_counted_where_the_network_has_enough_of_them() {
    let dir = TempDir::new().unwrap();
    let dragonfly = workspace().join("configs/dragonfly-6-12-6.toml");
    let o = xnet_expect(
        dir.path(),
        &[
            "run",
            s(&dragonfly),
            "-t",
            "2",
            "-o",
            "d.h5",
            "--set",
            "simulation.cycles=400",
            "--set",
            "simulation.warmup=200",
            "--census",
            "8,100",
            "--census-method",
            "blocks,linear",
        ],
        0,
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("census: no blocks-100 (73 natural blocks in this network)"), "{stderr}");
    let f = open(&dir.path().join("d.h5"));
    let mut groups = f.group("points/000/census").unwrap().member_names().unwrap();
    groups.sort();
    assert_eq!(groups, ["blocks-8", "linear-100", "linear-8"]);
    // Whole groups: only global links are cut, so the window is the global latency.
    let blocks = f.group("points/000/census/blocks-8").unwrap();
    assert_eq!(attr_u64(&blocks, "window"), 100);
    assert_eq!(attr_str(&blocks, "method"), "blocks");
}

#[test]
fn a_run_splits_the_network_as_told_and_gives_the_same_results() {
    let dir = TempDir::new().unwrap();
    let dragonfly = workspace().join("configs/dragonfly-6-12-6.toml");
    let short = ["--set", "simulation.cycles=400", "--set", "simulation.warmup=200", "-t", "2", "-q"];
    for (method, out) in [("auto", "auto.h5"), ("linear", "linear.h5")] {
        let mut args = vec!["run", s(&dragonfly), "--partition-method", method, "-o", out];
        args.extend(short);
        xnet_expect(dir.path(), &args, 0);
    }
    let (auto, linear) = (open(&dir.path().join("auto.h5")), open(&dir.path().join("linear.h5")));
    // Two partitions of 73 groups balance: Auto takes whole groups, lookahead 100.
    assert_eq!((attr_str(&auto, "partition_method").as_str(), attr_u64(&auto, "lookahead")), ("blocks", 100));
    assert_eq!(attr_str(&linear, "partition_method"), "linear");
    let diff = differences(&dump(&dir.path().join("auto.h5")), &dump(&dir.path().join("linear.h5")));
    assert!(diff.is_empty(), "{diff:?}");
    // More partitions than groups (and a warning first, about 100 threads on this machine).
    let mut args = vec!["run", s(&dragonfly), "--partition-method", "blocks", "-t", "100", "-o", "never.h5"];
    args.extend(&short[..4]);
    let o = xnet(dir.path(), &args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        stderr.contains(
            "error: --partition-method: 100 partitions: cannot split 73 blocks into 100 partitions"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked") && !dir.path().join("never.h5").exists(), "{stderr}");
}
