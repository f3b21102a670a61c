//! `xnet routes` end to end: routings compared side by side, cyclic ones flagged, and an
//! escape subnetwork checked on a sample of destinations.
//!
//! They run the real `xnet` executable and read back the HDF5 files it writes (layout:
//! docs/output-format.md); every run is small, in a temporary directory that is also its
//! working directory. Helpers and configurations shared by the test files: `common/`.

mod common;

use common::*;
use tempfile::TempDir;

#[test]
fn routes_compares_routings_side_by_side_and_flags_cyclic_ones() {
    let dir = TempDir::new().unwrap();
    let mesh = write(
        dir.path(),
        "mesh.toml",
        r#"
[simulation]
cycles = 100
[topology]
kind = "mesh"
sides = [4, 4]
endpoints_per_switch = 1
[router]
vcs = 4
packet_size = 4
input_buffer = 8
output_buffer = 8
[routing]
algorithm = "dor"
[traffic]
pattern = "uniform"
load = 0.1
"#,
    );
    let out = dir.path().join("cmp.h5");
    let o = xnet_expect(dir.path(), &["routes", s(&mesh), "--compare", "dor,up_down,lash", "-o", s(&out)], 0);
    let text = String::from_utf8_lossy(&o.stdout);
    for name in ["dor", "up_down", "lash", "average routing distance", "VCs used"] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    let f = open(&out);
    assert_eq!(attr_str(&f, "routings"), "dor,up_down,lash");
    // `--threads` sets the tables' thread pool, here to 1 on any machine.
    let one = dir.path().join("one.h5");
    let o = xnet_expect(dir.path(), &["routes", s(&mesh), "-t", "1", "-o", s(&one)], 0);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.lines().any(|l| l.split_whitespace().eq(["threads", "1"])), "{text}");
    assert_eq!(attr_u64(&open(&one), "threads"), 1);
    for (i, routing) in ["dor", "up_down", "lash"].iter().enumerate() {
        let g = f.group(&format!("routings/{i:03}")).unwrap();
        assert_eq!(&attr_str(&g, "routing"), routing);
        // Every routing here is minimal on a mesh: the survey's ARD for 4x4 is 3.5.
        assert_eq!(attr_f64(&g, "average_routing_distance"), 3.5);
    }
    // DOR on a torus ring with one VC and no datelines is cyclic: exit code 4.
    let ring = write(
        dir.path(),
        "ring.toml",
        &std::fs::read_to_string(&mesh)
            .unwrap()
            .replace("kind = \"mesh\"", "kind = \"torus\"")
            .replace("[4, 4]", "[6]"),
    );
    let bad = dir.path().join("ring.h5");
    let args = ["routes", s(&ring), "--set", "router.vcs=1", "--compare", "dor:any", "-o", s(&bad)];
    let o = xnet_expect(dir.path(), &args, 4);
    assert!(String::from_utf8_lossy(&o.stdout).contains("NO"), "{}", describe(&o));
}

const MESH_4X4_1VC: &str = r#"
[simulation]
cycles = 100
[topology]
kind = "mesh"
sides = [4, 4]
endpoints_per_switch = 1
[router]
vcs = 1
packet_size = 4
input_buffer = 8
output_buffer = 8
[routing]
algorithm = "up_down"
[traffic]
pattern = "uniform"
load = 0.1
"#;

#[test]
fn compare_shows_a_routing_that_does_not_fit_with_its_reason_and_goes_on() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let mesh = write(d, "mesh.toml", MESH_4X4_1VC);
    // The ladder needs a VC per hop (6 here), and a Dragonfly routing a Dragonfly: both
    // rows say why, and up_down and lash, after them, are still analysed.
    let args = ["routes", s(&mesh), "--compare", "minimal:ladder,dragonfly_min,up_down,lash", "-o", "cmp.h5"];
    let o = xnet_expect(d, &args, 4);
    let text = String::from_utf8_lossy(&o.stdout);
    let cells = |label: &str| -> Vec<String> {
        let line = text.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or("");
        line.trim_start()[label.len()..].split_whitespace().map(str::to_string).collect()
    };
    assert_eq!(cells("built"), ["NO", "NO", "yes", "yes"], "{text}");
    assert_eq!(cells("average routing distance"), ["-", "-", "3.5000", "3.5000"], "{text}");
    assert!(text.contains("minimal:ladder not built: router.vcs: the ladder VC policy needs"), "{text}");
    assert!(
        text.contains("dragonfly_min not built: routing.algorithm: `dragonfly_min` needs a dragonfly"),
        "{text}"
    );
    let f = open(&d.join("cmp.h5"));
    let g = f.group("routings/000").unwrap();
    assert_eq!(attr_str(&g, "routing"), "minimal:ladder");
    assert!(attr_str(&g, "error").starts_with("router.vcs: "), "{}", attr_str(&g, "error"));
    assert_eq!(attr_f64(&f.group("routings/003").unwrap(), "average_routing_distance"), 3.5);
    // None fits: an error listing each reason; an unknown name: an error before any build.
    let o =
        xnet_expect(d, &["routes", s(&mesh), "--compare", "dor:ladder,dragonfly_min", "-o", "none.h5"], 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no routing could be built") && err.contains("dor:ladder: router.vcs"), "{err}");
    assert!(!d.join("none.h5").exists());
    let o = xnet_expect(d, &["routes", s(&mesh), "--compare", "up_down,lahs", "-o", "typo.h5"], 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--compare lahs: routing.algorithm: unknown `lahs`; did you mean `lash`?"), "{err}");
}

#[test]
fn the_vcs_a_routing_needs_are_told_apart_from_the_vcs_its_routes_use() {
    let dir = TempDir::new().unwrap();
    let mesh = write(dir.path(), "mesh.toml", &MESH_4X4_1VC.replace("vcs = 1", "vcs = 3"));
    let line = |text: &str, label: &str| -> String {
        text.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or("").trim_start()[label.len()..]
            .trim()
            .to_string()
    };
    // LASH needs one layer here and spreads its routes over the three VCs it is given.
    let o =
        xnet_expect(dir.path(), &["routes", s(&mesh), "--set", "routing.algorithm=lash", "-o", "l.h5"], 0);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(line(&text, "VCs used"), "3 of 3", "{text}");
    assert_eq!(
        line(&text, "VCs the routing needs"),
        "1 at least (router.vcs may go as low; given 3, it spreads its routes over 3)",
        "{text}"
    );
    // DOR on a mesh uses the one VC it needs.
    let o = xnet_expect(dir.path(), &["routes", s(&mesh), "--set", "routing.algorithm=dor", "-o", "d.h5"], 0);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(line(&text, "VCs used"), "1 of 3", "{text}");
    assert_eq!(line(&text, "VCs the routing needs"), "1", "{text}");
}

#[test]
fn routes_checks_an_escape_subnetwork_on_a_sample_of_destinations() {
    let dir = TempDir::new().unwrap();
    let torus = write(
        dir.path(),
        "torus.toml",
        r#"
[simulation]
cycles = 100
[topology]
kind = "torus"
sides = [5, 4]
endpoints_per_switch = 1
failed_links = 2
[router]
vcs = 2
packet_size = 4
input_buffer = 8
output_buffer = 8
[routing]
algorithm = "minimal"
vc_policy = "any"
escape_vcs = 1
[traffic]
pattern = "uniform"
load = 0.1
"#,
    );
    let out = dir.path().join("esc.h5");
    let args = ["routes", s(&torus), "--destinations", "5", "-t", "1", "-o", s(&out)];
    let o = xnet_expect(dir.path(), &args, 0);
    let text = String::from_utf8_lossy(&o.stdout);
    for line in [
        "escape CDG acyclic (Duato)   yes",
        "whole CDG acyclic            no",
        "destinations checked",
        "routing tables built in",
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    let f = open(&out);
    assert_eq!(attr_u64(&f, "destinations_checked"), 5);
    assert_eq!(attr_u64(&f, "switches"), 20);
    // Without the escape the same routes are cyclic: exit status 4.
    let bad = dir.path().join("bad.h5");
    let args = ["routes", s(&torus), "--set", "routing.escape_vcs=0", "--destinations", "5", "-o", s(&bad)];
    xnet_expect(dir.path(), &args, 4);
    // A sample of zero destinations is refused.
    xnet_expect(dir.path(), &["routes", s(&torus), "--destinations", "0", "-o", s(&bad)], 1);
}

/// The OpenSM-format round trip: `xnet routes --dump-tables` writes a routing's tables,
/// `routing.algorithm = "tables"` reads them back from the files, and the verifier's report
/// is the same.
#[test]
fn tables_written_in_opensm_format_read_back_give_the_same_report() {
    let dir = TempDir::new().unwrap();
    let cfg = write(
        dir.path(),
        "rrg.toml",
        r#"
[simulation]
cycles = 100
[topology]
kind = "random_regular"
switches = 20
degree = 4
endpoints_per_switch = 2
[router]
vcs = 8
[routing]
algorithm = "lash"
[traffic]
pattern = "uniform"
load = 0.1
"#,
    );
    let o = xnet_expect(dir.path(), &["routes", s(&cfg), "-o", "lash.h5", "--dump-tables", "tables"], 0);
    let written = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(written.contains("tables written to tables"), "{written}");
    let lfts = std::fs::read_to_string(dir.path().join("tables/opensm-lfts.dump")).unwrap();
    assert!(lfts.starts_with("Unicast lids [0-60] of switch Lid 1 guid 0x"), "{}", &lfts[..80]);
    assert!(dir.path().join("tables/xnet-sls.dump").exists());
    let o = xnet_expect(
        dir.path(),
        &[
            "routes",
            s(&cfg),
            "-o",
            "tables.h5",
            "--set",
            "routing.algorithm=tables",
            "--set",
            "routing.tables.lfts=tables/opensm-lfts.dump",
            "--set",
            "routing.tables.sls=tables/xnet-sls.dump",
        ],
        0,
    );
    let read = String::from_utf8_lossy(&o.stdout).into_owned();
    // Every line of the verifier's report but the routing's name, times and build notes.
    let report = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("  "))
            .filter(|l| {
                !["time", "routing", "VCs the routing needs", "peak memory"]
                    .iter()
                    .any(|k| l.trim_start().starts_with(k))
            })
            .map(str::to_string)
            .collect()
    };
    assert!(report(&written).len() >= 10, "{written}");
    assert_eq!(report(&written), report(&read), "written:\n{written}\nread back:\n{read}");
    for h5 in ["lash.h5", "tables.h5"] {
        let f = open(&dir.path().join(h5));
        assert_eq!(
            attr_f64(&f, "average_routing_distance"),
            attr_f64(&open(&dir.path().join("lash.h5")), "average_routing_distance")
        );
    }
    // A missing file is named.
    let o = xnet_expect(
        dir.path(),
        &[
            "routes",
            s(&cfg),
            "--set",
            "routing.algorithm=tables",
            "--set",
            "routing.tables.lfts=nowhere.dump",
        ],
        1,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("routing.tables.lfts: cannot read the forwarding tables nowhere.dump"), "{err}");
}
