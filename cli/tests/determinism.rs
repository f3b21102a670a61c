//! `xnet` end to end: a run's HDF5 file is identical for 1, 2 and 4 threads.
//!
//! They run the real `xnet` executable and read back the HDF5 files it writes (layout:
//! docs/output-format.md); every run is small, in a temporary directory that is also its
//! working directory. Helpers and configurations shared by the test files: `common/`.

mod common;

use common::*;
use tempfile::TempDir;

fn check_determinism(config: &str) {
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "net.toml", config);
    let mut dumps = Vec::new();
    for threads in ["1", "2", "4"] {
        let out = dir.path().join(format!("t{threads}.h5"));
        xnet_expect(dir.path(), &["run", s(&cfg), "-q", "-t", threads, "-o", s(&out)], 0);
        dumps.push((threads, dump(&out)));
    }
    let (_, first) = &dumps[0];
    // The comparison is not vacuous: the file has its tables, traffic went through, and
    // the environment attributes were read (they differ between thread counts).
    for path in ["/summary", "/points/000/timeseries", "/points/000/links", "/points/000/endpoints"] {
        let (_, bytes) = first.datasets.get(path).unwrap_or_else(|| panic!("{path} missing"));
        assert!(!bytes.is_empty(), "{path} is empty");
    }
    for path in ["/points/000/latency_histogram", "/points/000/vc_phits", "/points/000/blocked_channels"] {
        assert!(first.datasets.contains_key(path), "{path} missing");
    }
    assert!(first.attrs.contains_key("/@status"), "root attributes not read: {:?}", first.attrs.keys());
    for (threads, d) in &dumps {
        assert_eq!(d.attrs["/@threads"], format!("uint32 shape [] = [{threads}]"));
    }
    let file = open(&dir.path().join("t1.h5"));
    assert_eq!(attr_str(&file, "status"), "completed");
    assert!(attr_u64(&file.group("points/000").unwrap(), "delivered_total") > 1000);
    for (threads, d) in &dumps[1..] {
        let diffs = differences(first, d);
        assert!(diffs.is_empty(), "-t 1 and -t {threads} differ:\n{}", diffs.join("\n"));
    }
    // ... and it would notice a different run: another seed changes the data.
    let other = dir.path().join("seed.h5");
    xnet_expect(
        dir.path(),
        &["run", s(&cfg), "-q", "-t", "1", "--set", "simulation.seed=99", "-o", s(&other)],
        0,
    );
    let diffs = differences(first, &dump(&other));
    assert!(diffs.iter().any(|d| d.starts_with("/points/000/timeseries")), "seed change not seen: {diffs:?}");
}

#[test]
fn dragonfly_ugal_results_are_identical_for_1_2_and_4_threads() {
    check_determinism(DRAGONFLY_UGAL);
}

#[test]
fn random_regular_minimal_results_are_identical_for_1_2_and_4_threads() {
    check_determinism(RANDOM_REGULAR);
}
