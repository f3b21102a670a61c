//! The scripted list of bad inputs and faults (`cli/tests/data/bad-inputs.toml`): every
//! case a defect found once, run against the real `xnet`, each in a folder of its own.
//! A case passes when xnet exits as expected within its time, says what it should, and
//! leaves the files it must not touch as they were. `scripts/dev/bad-inputs.sh` runs it;
//! `XNET_BIN=PATH` runs the list against another build (an earlier release, to see a
//! case fail before its fix).

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};
use tempfile::TempDir;

const CASES: &str = include_str!("data/bad-inputs.toml");

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct List {
    defaults: BTreeMap<String, String>,
    case: Vec<Case>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    why: String,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    copy: BTreeMap<String, String>,
    #[serde(default)]
    truncate: BTreeMap<String, u64>,
    #[serde(default)]
    before: Vec<Vec<String>>,
    #[serde(default)]
    links: BTreeMap<String, String>,
    args: Vec<String>,
    #[serde(default)]
    launcher: Vec<String>,
    exit: i32,
    #[serde(default)]
    stderr: Vec<String>,
    #[serde(default)]
    unchanged: Vec<String>,
    #[serde(default)]
    absent: Vec<String>,
    seconds: Option<u64>,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The xnet under test: this build's, or `XNET_BIN`'s.
fn xnet_bin() -> String {
    std::env::var("XNET_BIN").unwrap_or_else(|_| XNET.to_string())
}

/// Runs one case; the reasons it failed, if any.
fn run(case: &Case, defaults: &BTreeMap<String, String>) -> Vec<String> {
    let bin = xnet_bin();
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let root = workspace();
    for (name, path) in &case.copy {
        copy_dir(&root.join(path), &d.join(name));
    }
    let mut written = BTreeMap::new();
    for (name, text) in &case.files {
        let text = defaults.iter().fold(text.clone(), |t, (k, v)| t.replace(&format!("{{{k}}}"), v));
        let path = d.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        written.insert(name.clone(), text.into_bytes());
    }
    for (name, cut) in &case.truncate {
        let path = d.join(name);
        let len = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len - cut).unwrap();
    }
    let mut failures = Vec::new();
    for args in &case.before {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (o, _) =
            wait_within(start(&bin, d, &args, &[]), Duration::from_secs(120), "a command before the case");
        if o.status.code() != Some(0) {
            failures.push(format!("before: xnet {}: {}", args.join(" "), describe(&o)));
            return failures;
        }
    }
    for (name, target) in &case.links {
        std::os::unix::fs::symlink(target, d.join(name)).unwrap();
    }
    let args: Vec<String> = case.args.iter().map(|a| a.replace("{root}", s(&root))).collect();
    let (program, mut full) = match case.launcher.split_first() {
        Some((launcher, rest)) => (launcher.clone(), rest.to_vec()),
        None => (bin.clone(), Vec::new()),
    };
    if !case.launcher.is_empty() {
        full.push(bin.clone());
    }
    full.extend(args);
    let full: Vec<&str> = full.iter().map(String::as_str).collect();
    let limit = Duration::from_secs(case.seconds.unwrap_or(60));
    let started = Instant::now();
    let child = start(&program, d, &full, &[]);
    let (o, _) = wait_within(child, limit + Duration::from_secs(30), &case.name);
    let took = started.elapsed();
    let said = format!("{}{}", String::from_utf8_lossy(&o.stderr), String::from_utf8_lossy(&o.stdout));
    if o.status.code() != Some(case.exit) {
        failures.push(format!("exit {:?}, expected {}", o.status.code(), case.exit));
    }
    if took > limit {
        failures.push(format!("took {took:?}, more than {limit:?}"));
    }
    if said.contains("panicked") {
        failures.push("panicked".into());
    }
    failures.extend(
        case.stderr.iter().filter(|e| !said.contains(e.as_str())).map(|e| format!("does not say {e:?}")),
    );
    for name in &case.unchanged {
        if std::fs::read(d.join(name)).ok().as_ref() != written.get(name) {
            failures.push(format!("{name} changed"));
        }
    }
    failures.extend(case.absent.iter().filter(|n| d.join(n).exists()).map(|n| format!("{n} was left")));
    if !failures.is_empty() {
        failures.push(format!("{program} {}: {}", full.join(" "), describe(&o)));
    }
    failures
}

#[test]
fn every_bad_input_in_the_list_is_refused_or_survived() {
    let list: List = toml::from_str(CASES).expect("cli/tests/data/bad-inputs.toml reads");
    let mut failed = Vec::new();
    for case in &list.case {
        assert!(!case.why.is_empty(), "{}: say which defect it was", case.name);
        let failures = run(case, &list.defaults);
        if !failures.is_empty() {
            failed.push(format!("{} ({}):\n  {}", case.name, case.why, failures.join("\n  ")));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} cases failed:\n{}",
        failed.len(),
        list.case.len(),
        failed.join("\n\n")
    );
}

/// The list's names are unique, and each case runs something.
#[test]
fn the_list_is_well_formed() {
    let list: List = toml::from_str(CASES).expect("cli/tests/data/bad-inputs.toml reads");
    let mut names: Vec<&str> = list.case.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "two cases share a name");
    assert!(list.case.iter().all(|c| !c.args.is_empty()));
}
