//! OpenSM, the InfiniBand subnet manager, loads the forwarding tables `xnet routes
//! --dump-tables` writes, on a fabric simulated by ibsim, and xnet reads back what OpenSM
//! programmed: `scripts/validation/opensm_file_roundtrip.py` (LASH, DFSSSP and Nue on a torus and an
//! RRG; every entry equal, the same verifier report).
//!
//! Needs Debian's `opensm` and `ibsim-utils` (`.ci/run` installs them). Without them when
//! the tests are built (cli/build.rs), the test is ignored, with the reason; under
//! `XNET_REQUIRE_OPENSM=1` (set by `.ci/run`) their absence is a failure instead.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// One ibsim at a time: a second one cannot take its socket.
static IBSIM: Mutex<()> = Mutex::new(());

/// Why OpenSM and ibsim cannot be used here, if they cannot.
fn opensm_missing() -> Option<String> {
    if !Path::new("/usr/sbin/opensm").exists() {
        return Some("/usr/sbin/opensm is not installed (apt-get install opensm)".into());
    }
    match Command::new("sh").args(["-c", "command -v ibsim && command -v ibsim-run"]).output() {
        Ok(o) if o.status.success() => None,
        _ => Some("ibsim or ibsim-run is not on the PATH (apt-get install ibsim-utils)".into()),
    }
}

/// Under `XNET_REQUIRE_OPENSM=1` (`.ci/run`), the OpenSM test must not be ignored.
#[test]
fn opensm_is_found_when_xnet_require_opensm_is_set() {
    if std::env::var_os("XNET_REQUIRE_OPENSM").is_some() && !cfg!(has_opensm) {
        panic!(
            "XNET_REQUIRE_OPENSM is set but cli/build.rs found no OpenSM and ibsim when the tests \
             were built: {}",
            opensm_missing().unwrap_or_else(|| "they are here now: `touch cli/build.rs` and rerun".into())
        );
    }
}

/// Runs `scripts/validation/SCRIPT` with `args` on this build's xnet, one ibsim at a time;
/// its standard output, once it succeeded.
fn validation_script(script: &str, args: &[&str]) -> String {
    if let Some(why) = opensm_missing() {
        panic!("OpenSM and ibsim were there when the tests were built, and are not now: {why}");
    }
    let _ibsim = IBSIM.lock().unwrap_or_else(|e| e.into_inner());
    let root = workspace();
    let venv = root.join(".venv/bin/python3");
    let python = if venv.exists() { venv } else { "python3".into() };
    let out = Command::new(python)
        .arg(root.join("scripts/validation").join(script))
        .args(args)
        .env("XNET", XNET)
        .output()
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    assert!(out.status.success(), "{}", describe(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[cfg_attr(not(has_opensm), ignore = "needs OpenSM and ibsim: apt-get install opensm ibsim-utils")]
fn opensm_loads_xnet_tables_and_xnet_reads_back_what_it_programmed() {
    let text = validation_script("opensm_file_roundtrip.py", &[]);
    // Five fabric and routing rows, each loaded by OpenSM, no entry differing, the same report.
    let rows: Vec<&str> =
        text.lines().filter(|l| l.starts_with("| torus") || l.starts_with("| RRG")).collect();
    assert_eq!(rows.len(), 5, "{text}");
    for row in rows {
        assert!(row.contains("| yes |") && row.ends_with("| 0 | yes |"), "{row}");
    }
}

/// xnet's `ftree`, `dfsssp`, `minhop` and `lash` against OpenSM's engines of the same names
/// on a fat tree, a torus and an RRG with several HCAs per switch (ibsim): every HCA entry
/// xnet's routes use equals OpenSM's, and so do the link weights of both tables
/// (`scripts/validation/opensm_per_lid.py --quick`).
#[test]
#[cfg_attr(not(has_opensm), ignore = "needs OpenSM and ibsim: apt-get install opensm ibsim-utils")]
fn xnet_per_lid_engines_compute_opensms_tables() {
    let text = validation_script("opensm_per_lid.py", &["--quick"]);
    let exact: Vec<&str> = text
        .lines()
        .filter(|l| ["| ftree |", "| dfsssp |", "| minhop |", "| lash |"].iter().any(|e| l.contains(e)))
        .collect();
    assert_eq!(exact.len(), 10, "{text}");
    for row in exact {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (equal, total) = cells[4].split_once(" of ").expect("n of m");
        assert_eq!(equal, total, "{row}");
        assert_eq!(cells[5], cells[6], "link weights: {row}");
    }
}
