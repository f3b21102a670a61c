//! Running `xnet` (and other programs) from a test and waiting for it.

use super::{describe, s, workspace, XNET};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `xnet args...` in `dir` and returns its output.
pub fn xnet(dir: &Path, args: &[&str]) -> Output {
    Command::new(XNET)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot start {XNET}: {e}"))
}

pub fn xnet_expect(dir: &Path, args: &[&str], code: i32) -> Output {
    let out = xnet(dir, args);
    assert_eq!(out.status.code(), Some(code), "xnet {}: {}", args.join(" "), describe(&out));
    out
}

/// Starts `program args...` in `dir` with `env` set and its output captured, without
/// waiting for it.
pub fn start(program: impl AsRef<std::ffi::OsStr>, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    let program = program.as_ref();
    Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start {program:?} (scripts/bootstrap.sh installs MPICH and h5py): {e}")
        })
}

/// Makes the quick HyperX run for hours: long enough to be interrupted.
pub const FOREVER: [&str; 2] = ["--set", "simulation.cycles=100000000"];

/// Starts a long `xnet run` of the quick HyperX in `dir` (`args` added, e.g. `-t 1 -o F`)
/// and checks 1.5 s later that it is still running.
pub fn start_long_run(dir: &Path, args: &[&str]) -> Child {
    let quick = workspace().join("configs/quick.toml");
    let mut all = vec!["run", s(&quick), "-q"];
    all.extend(FOREVER);
    all.extend(args);
    let mut child = start(XNET, dir, &all, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    if let Some(status) = child.try_wait().unwrap() {
        panic!("the long run ended by itself ({status}): {}", describe(&child.wait_with_output().unwrap()));
    }
    child
}

/// Waits up to `limit` for `child` to end; kills it and panics past that.
pub fn wait_within(mut child: Child, limit: Duration, what: &str) -> (Output, Duration) {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{what} did not end within {limit:?}: {}", describe(&child.wait_with_output().unwrap()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let waited = start.elapsed();
    (child.wait_with_output().unwrap(), waited)
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write config");
    path
}

/// Runs a command that must fail with exit code 1, a one-line `error:` naming each of
/// `expected`, no panic, and no output file.
pub fn expect_error(dir: &Path, args: &[&str], expected: &[&str]) {
    let out = dir.join("never.h5");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-q", "-o", s(&out)]);
    let o = xnet(dir, &all);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let what = format!("xnet {}: {}", all.join(" "), describe(&o));
    assert_eq!(o.status.code(), Some(1), "{what}");
    assert!(!stderr.contains("panicked"), "{what}");
    assert!(stderr.starts_with("error: "), "{what}");
    for e in expected {
        assert!(stderr.contains(e), "stderr lacks {e:?}; {what}");
    }
    assert!(!out.exists(), "an output file was created; {what}");
}
