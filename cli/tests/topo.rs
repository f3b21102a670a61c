//! `xnet topo` and `xnet list`, and the resource checks: memory (estimate, refusal,
//! override) and a file that cannot grow.
//!
//! They run the real `xnet` executable and read back the HDF5 files it writes (layout:
//! docs/output-format.md); every run is small, in a temporary directory that is also its
//! working directory. Helpers and configurations shared by the test files: `common/`.

mod common;

use common::*;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// The value column of the line of `text` whose first word is `key`.
fn field<'a>(text: &'a str, key: &str) -> &'a str {
    let line = text.lines().find(|l| l.split_whitespace().next() == Some(key));
    let line = line.unwrap_or_else(|| panic!("no `{key}` line in:\n{text}"));
    line.split_whitespace().nth(1).unwrap_or("")
}

#[test]
fn topo_describes_the_quick_hyperx() {
    let quick = workspace().join("configs/quick.toml");
    let o = xnet_expect(&workspace(), &["topo", s(&quick)], 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(field(&out, "switches"), "64", "{out}");
    assert_eq!(field(&out, "endpoints"), "512", "{out}");
    assert_eq!(field(&out, "diameter"), "2", "{out}");
    assert_eq!(field(&out, "connected"), "true", "{out}");
}

#[test]
fn a_network_too_large_for_memory_is_refused_before_it_is_built() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    // A million switches of 2,006 ports: about 640 GiB, far more than any test machine.
    let huge = ["--set", "topology.sides=[1000, 1000]"];
    let started = Instant::now();
    let mut run = vec!["run", s(&quick)];
    run.extend(huge);
    expect_error(
        dir.path(),
        &run,
        &["needs about", "GiB per rank (routers ", "is available there", "--no-memory-check"],
    );
    // `topo` prints the estimate, then refuses to build the 45 GiB network description.
    let mut topo = vec!["topo", s(&quick)];
    topo.extend(huge);
    let o = xnet_expect(dir.path(), &topo, 1);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(out.starts_with("memory          ") && out.contains("GiB, network "), "{}", describe(&o));
    assert!(out.contains("past saturation: +"), "{}", describe(&o));
    assert!(err.contains("GiB to build the network"), "{}", describe(&o));
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn the_memory_check_follows_the_memory_available_and_can_be_overridden() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let out = dir.path().join("small.h5");
    let args = ["run", s(&quick), "-q", "-t", "1", "-o", s(&out)];
    // 20 MB is less than the program itself.
    let little = [("XNET_TEST_AVAILABLE_MEMORY", "20000000")];
    let (o, _) =
        wait_within(start(XNET, dir.path(), &args, &little), Duration::from_secs(30), "a refused run");
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("only 19.1 MiB is available there (XNET_TEST_AVAILABLE_MEMORY)"), "{err}");
    assert!(!out.exists());
    let mut anyway = args.to_vec();
    anyway.push("--no-memory-check");
    let (o, _) =
        wait_within(start(XNET, dir.path(), &anyway, &little), Duration::from_secs(30), "a forced run");
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert_eq!(attr_str(&open(&out), "status"), "completed");
}

#[test]
fn the_memory_estimate_is_close_to_the_measured_peak() {
    let dir = TempDir::new().unwrap();
    let short = [
        "simulation.cycles=300",
        "simulation.warmup=100",
        "simulation.sample_period=100",
        "traffic.load=0.1",
    ];
    let cases: [(&str, &[&str]); 2] = [
        ("quick.toml", &["topology.sides=[16,16,16]", "topology.endpoints_per_switch=16", "router.vcs=4"]),
        ("rrg-876-23-17.toml", &["topology.switches=4096"]),
    ];
    for (config, sets) in cases {
        let config = workspace().join("configs").join(config);
        let out = dir.path().join("peak.h5");
        let mut args = vec!["run", s(&config), "-q", "-t", "2", "-o", s(&out)];
        for set in short.iter().chain(sets) {
            args.extend(["--set", set]);
        }
        xnet_expect(dir.path(), &args, 0);
        let f = open(&out);
        let (estimate, peak) = (attr_u64(&f, "memory_estimate_bytes"), attr_u64(&f, "peak_rss_bytes"));
        let ratio = estimate as f64 / peak as f64;
        assert!((0.75..=1.35).contains(&ratio), "{args:?}: estimate {estimate}, peak {peak}");
    }
}

#[test]
fn a_file_that_cannot_grow_ends_the_run_and_stays_readable() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    // A file-size limit of 1.5 MiB stands in for a full disk (both are checked the same
    // way). UCX's shared-memory transport would hit the limit too: TCP instead.
    let script = format!(
        "trap '' XFSZ; ulimit -f 1500; exec {XNET} run {} -q -t 1 --set simulation.cycles=200000 \
         --set simulation.sample_period=2 -o full.h5",
        s(&quick)
    );
    let child = start("bash", dir.path(), &["-c", &script], &[("UCX_TLS", "self,tcp")]);
    let (o, _) = wait_within(child, Duration::from_secs(60), "a run whose file cannot grow");
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    // The small limit is named first, as a warning.
    let stderr = String::from_utf8_lossy(&o.stderr);
    let (warning, stderr) = stderr.split_once('\n').unwrap_or_default();
    assert!(warning.starts_with("warning: the file-size limit (ulimit -f) is 1.5 MiB"), "{}", describe(&o));
    assert!(
        stderr.starts_with("error: writing full.h5: writing the time series: the file cannot grow: ")
            && stderr.contains("(room under the file-size limit (ulimit -f))"),
        "{}",
        describe(&o)
    );
    let f = open(&dir.path().join("full.h5"));
    assert_eq!(attr_str(&f, "status"), "failed");
    assert!(attr_str(&f, "status_message").contains("the file cannot grow"));
    let rows = f.dataset("points/000/timeseries").unwrap().shape()[0];
    assert!(rows > 1000, "{rows} rows kept");
    drop(f);
    // The same run again, over that file: its new file (full.h5.new) cannot grow either,
    // and since no point finished, the earlier file is kept as it was and the new one goes.
    let earlier = std::fs::read(dir.path().join("full.h5")).unwrap();
    let child = start("bash", dir.path(), &["-c", &script], &[("UCX_TLS", "self,tcp")]);
    let (o, _) = wait_within(child, Duration::from_secs(60), "a second run whose file cannot grow");
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the earlier file full.h5 is kept as it was"),
        "{}",
        describe(&o)
    );
    assert!(std::fs::read(dir.path().join("full.h5")).unwrap() == earlier, "the earlier file changed");
    assert!(!dir.path().join("full.h5.new").exists());
}

/// The room check counts the point's tables as they are stored, compressed: a point whose
/// raw tables (2.7 MB for a 32x32 HyperX with 16 endpoints per switch) would not fit under
/// a 2 MB file-size limit, but whose file (under 0.5 MB) does, is written and completed.
#[test]
fn a_point_whose_compressed_tables_fit_is_written() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let script = format!(
        "trap '' XFSZ; ulimit -f 2000; exec {XNET} run {} -q -t 1 --set 'topology.sides=[32,32]' \
         --set topology.endpoints_per_switch=16 --set simulation.cycles=300 --set simulation.warmup=100 \
         --set simulation.sample_period=100 --set traffic.load=0.1 -o fits.h5",
        s(&quick)
    );
    let child = start("bash", dir.path(), &["-c", &script], &[("UCX_TLS", "self,tcp")]);
    let (o, _) = wait_within(child, Duration::from_secs(120), "a run under a file-size limit");
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let f = open(&dir.path().join("fits.h5"));
    assert_eq!(attr_str(&f, "status"), "completed");
    assert_eq!(f.dataset("points/000/links").unwrap().shape()[0], 32 * 32 * 62);
    assert!(std::fs::read_dir(dir.path()).unwrap().count() == 1, "a file besides fits.h5 was left");
}

#[test]
fn list_names_topologies_routings_and_patterns() {
    let o = xnet_expect(&workspace(), &["list"], 0);
    let out = String::from_utf8_lossy(&o.stdout);
    let firsts: Vec<&str> = out.lines().filter_map(|l| l.split_whitespace().next()).collect();
    for name in
        ["topologies:", "routings:", "dragonfly", "hyperx", "dor", "minimal", "dragonfly_ugal", "uniform"]
    {
        assert!(firsts.contains(&name), "`{name}` not listed:\n{out}");
    }
    // Not a terminal: wrapped to 100 columns.
    let widest = out.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!((90..=100).contains(&widest), "widest line {widest}:\n{out}");
    assert!(
        out.lines().any(|l| l.starts_with("which routing") && l.ends_with("docs/choosing.md")),
        "no pointer to docs/choosing.md:\n{out}"
    );
}

#[test]
fn list_shows_one_family_or_the_entries_matching_a_filter() {
    let list = |args: &[&str], code: i32| {
        let mut all = vec!["list"];
        all.extend(args);
        let o = xnet_expect(&workspace(), &all, code);
        (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let headers = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with(' '))
            .map(|l| l.split(':').next().unwrap().to_string())
            .collect()
    };
    let names = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    for what in ["routings", "routing", "routing.algorithm", "ALGORITHM"] {
        let (out, _) = list(&[what], 0);
        assert_eq!(headers(&out), ["routings"], "{what}: {out}");
        assert!(names(&out).contains(&"dragonfly_ugal".to_string()), "{out}");
    }
    let (out, _) = list(&["traffic_patterns"], 0);
    assert_eq!(headers(&out), ["traffic patterns"], "{out}");
    // A filter keeps the entries that mention it, in every family.
    let (out, _) = list(&["--filter", "Dragonfly"], 0);
    let listed = names(&out);
    for name in ["dragonfly", "dragonfly_min", "dragonfly_ugal"] {
        assert!(listed.contains(&name.to_string()), "{name}: {out}");
    }
    for name in ["hyperx", "dor", "up_down"] {
        assert!(!listed.contains(&name.to_string()), "{name}: {out}");
    }
    assert!(
        headers(&out).contains(&"topologies".to_string()) && headers(&out).contains(&"routings".to_string())
    );
    let (out, _) = list(&["routings", "--filter", "dragonfly"], 0);
    assert_eq!(headers(&out), ["routings"], "{out}");
    assert!(!names(&out).contains(&"minimal".to_string()), "{out}");
    // Unknown family, nothing matching: an error saying what is known.
    let (_, err) = list(&["patern"], 1);
    assert!(
        err.contains("unknown `patern`; did you mean `pattern`?") && err.contains("--filter patern"),
        "{err}"
    );
    let (_, err) = list(&["--filter", "zzzz"], 1);
    assert!(err.contains("no entry") && err.contains("zzzz"), "{err}");
}

/// `xnet topo --export` writes a network as an InfiniBand `.net` or an edge list, and
/// `topology.kind = "file"` reads either back as the same network: the same counts and
/// distances, and the same routes (minimal routing's link weights) as the original.
#[test]
fn a_network_exported_as_a_fabric_file_reads_back_as_the_same_network() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let network = |topology: &str| {
        format!(
            "[simulation]\ncycles = 1000\nseed = 4\n[topology]\n{topology}\nlink_latency = 10\n\
             [router]\nvcs = 8\n[routing]\nalgorithm = \"minimal\"\n[traffic]\npattern = \"uniform\"\nload = 0.1\n"
        )
    };
    let rrg = write(
        d,
        "rrg.toml",
        &network("kind = \"random_regular\"\nswitches = 64\ndegree = 6\nendpoints_per_switch = 3"),
    );
    let original =
        String::from_utf8_lossy(&xnet_expect(d, &["topo", s(&rrg), "--export", "f.net"], 0).stdout)
            .into_owned();
    xnet_expect(d, &["topo", s(&rrg), "--export", "f.edges"], 0);
    let net = std::fs::read_to_string(d.join("f.net")).unwrap();
    assert!(net.contains("Switch\t9 \"S0\"") && net.contains("Hca\t1 \"H0_0\""), "{}", &net[..300]);
    let routes = |cfg: &std::path::Path| {
        xnet_expect(d, &["routes", s(cfg), "-o", "r.h5"], 0);
        let f = open(&d.join("r.h5"));
        let weights = (attr_f64(&f, "link_weight_avg"), attr_f64(&f, "link_weight_std"));
        (attr_f64(&f, "average_routing_distance"), weights, attr_u64(&f, "link_weight_max"))
    };
    let want = routes(&rrg);
    for (name, topology) in [
        ("net.toml", "kind = \"file\"\npath = \"f.net\""),
        ("edges.toml", "kind = \"file\"\npath = \"f.edges\"\nendpoints_per_switch = 3"),
    ] {
        let cfg = write(d, name, &network(topology));
        let read = String::from_utf8_lossy(&xnet_expect(d, &["topo", s(&cfg)], 0).stdout).into_owned();
        for key in ["switches", "endpoints", "links", "diameter", "avg"] {
            assert_eq!(field(&read, key), field(&original, key), "{name}: {key}\n{read}\n{original}");
        }
        let got = routes(&cfg);
        // The same link weights; their std may differ in the last bit (summed in link order).
        assert_eq!((got.0, got.1 .0, got.2), (want.0, want.1 .0, want.2), "{name}");
        assert!((got.1 .1 - want.1 .1).abs() < 1e-9, "{name}: {got:?} vs {want:?}");
    }
    // A fabric file that cannot be read is named.
    let cfg = d.join("net.toml");
    let o = xnet_expect(d, &["topo", s(&cfg), "--set", "topology.path=missing.net"], 1);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("topology.path: cannot read the fabric file missing.net")
    );
    // And where a relative path was looked for.
    let expected = format!("(relative paths are read from the working directory, {})", d.display());
    assert!(String::from_utf8_lossy(&o.stderr).contains(&expected), "{}", describe(&o));
}

/// `--export` and `--csv` never write over the configuration they read (compared as files,
/// so another spelling of its path is caught too); the configuration is left as it was.
#[test]
fn an_export_or_csv_naming_the_config_is_refused_and_the_config_kept() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let text = std::fs::read_to_string(workspace().join("configs/quick.toml")).unwrap();
    let cfg = write(d, "net.toml", &text);
    for args in [
        vec!["topo", s(&cfg), "--export", s(&cfg)],
        vec!["topo", s(&cfg), "--export", "./net.toml"],
        vec!["partition", s(&cfg), "--csv", s(&cfg)],
        vec!["partition", s(&cfg), "--ranks", "2", "--csv", "./net.toml"],
    ] {
        let o = xnet(d, &args);
        let what = format!("xnet {}: {}", args.join(" "), describe(&o));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{what}");
        assert!(stderr.starts_with("error: ") && stderr.contains("is the input configuration"), "{what}");
        assert_eq!(std::fs::read_to_string(&cfg).unwrap(), text, "the configuration changed; {what}");
    }
    // Another file is written as before.
    xnet_expect(d, &["partition", s(&cfg), "--ranks", "2", "--csv", "ranks.csv"], 0);
    assert!(std::fs::read_to_string(d.join("ranks.csv")).unwrap().lines().count() >= 3);
}

/// A configuration, study or named file that never ends (`/dev/zero`) is refused before it
/// is read, and one larger than the cap (a sparse file) by its size, with an error naming
/// it, instead of being read forever or into memory.
#[test]
fn a_file_that_never_ends_or_is_too_large_is_refused_before_it_is_read() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let huge = d.join("huge.toml");
    std::fs::File::create(&huge).unwrap().set_len(300 << 20).unwrap();
    let named = write(
        d,
        "named.toml",
        "[topology]\nkind = \"file\"\npath = \"/dev/zero\"\n[routing]\nalgorithm = \"updown\"\n",
    );
    for (args, expected) in [
        (vec!["run", "/dev/zero", "-q"], "/dev/zero: it is a device or socket, not a file"),
        (vec!["topo", "/dev/zero"], "/dev/zero: it is a device or socket, not a file"),
        (vec!["study", "/dev/zero"], "/dev/zero: it is a device or socket, not a file"),
        (vec!["run", "."], "cannot read config .: it is a folder, not a file"),
        (vec!["topo", s(&named)], "topology.path: cannot read"),
        (vec!["run", s(&huge), "-q"], "larger than 256.0 MiB"),
    ] {
        let child = start(XNET, d, &args, &[]);
        let (o, waited) = wait_within(child, Duration::from_secs(60), "xnet reading a file that never ends");
        let what = format!("xnet {}: {}", args.join(" "), describe(&o));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{what}");
        assert!(!stderr.contains("panicked"), "{what}");
        assert!(stderr.contains(expected), "{what}");
        assert!(waited < Duration::from_secs(5), "{what}: it read for {waited:?}");
    }
}
