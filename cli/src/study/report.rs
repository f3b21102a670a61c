//! The study's HTML report, written by the Python package.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Writes the study's HTML report with the Python package (`python/xnet_study`): the
/// interpreter named by `XNET_PYTHON`, else the `.venv` of the current directory or of the
/// checkout the executable was built in (`scripts/bootstrap.sh` installs the package
/// there), else `python3`. Returns the page's path, or why there is none.
pub fn python_report(dir: &Path) -> std::result::Result<PathBuf, String> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("XNET_PYTHON") {
        candidates.push(p.into());
    }
    candidates.push(PathBuf::from(".venv/bin/python3"));
    if let Ok(exe) = std::env::current_exe() {
        // target/release/xnet -> the checkout's .venv
        if let Some(root) = exe.parent().and_then(Path::parent).and_then(Path::parent) {
            candidates.push(root.join(".venv/bin/python3"));
        }
    }
    candidates.push(PathBuf::from("python3"));
    let mut tried = Vec::new();
    for python in candidates {
        let out =
            Command::new(&python).args(["-m", "xnet_study", "report"]).arg(dir).stdin(Stdio::null()).output();
        match out {
            Ok(o) if o.status.success() => {
                let page = String::from_utf8_lossy(&o.stdout).trim().to_string();
                return Ok(PathBuf::from(page));
            }
            Ok(o) => {
                let err = String::from_utf8_lossy(&o.stderr);
                let last = err.trim().lines().last().unwrap_or("failed").to_string();
                if !err.contains("No module named") {
                    // The package is there and failed: that is the answer.
                    return Err(format!("{} -m xnet_study report failed: {last}", python.display()));
                }
                tried.push(format!("{}: {last}", python.display()));
            }
            Err(e) => tried.push(format!("{}: {e}", python.display())),
        }
    }
    Err(format!(
        "the Python package xnet_study was not found (bash scripts/bootstrap.sh installs it into .venv; \
         or set XNET_PYTHON): {}",
        tried.join("; ")
    ))
}
