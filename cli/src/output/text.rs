//! The text files commands write besides the result file (`workload export`'s GOAL
//! schedules, `topo --export`, `partition --csv`, `routes --dump-tables`): each written
//! whole or not at all, never over one of the run's inputs and never through a link.

use crate::load::{refuse_output_over_inputs, Input};
use anyhow::{bail, Context, Result};
use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes the file at `path` with `write`, replacing a regular file that is there only
/// once the new one is complete: the text goes to a new file beside it (created afresh,
/// so nothing at that name is written through), is synced, then renamed over `path`. A
/// failure (a full disk, a signal) leaves the earlier file as it was. Refuses, naming it,
/// a `path` that is a link, a folder or another special file, or that is one of
/// `inputs` (the configuration and the files it names). Returns whether an earlier file
/// was replaced, for the caller to say so.
pub(crate) fn write_whole(
    path: &Path,
    option: &str,
    inputs: &[Input],
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<bool> {
    refuse_output_over_inputs(path, option, inputs)?;
    let earlier = match std::fs::symlink_metadata(path) {
        Err(_) => false,
        Ok(m) if m.file_type().is_symlink() => {
            bail!("{option} {} is a symbolic link: give the file's own path (or a new name)", path.display())
        }
        Ok(m) if !m.is_file() => bail!("{option} {} exists and is not a regular file", path.display()),
        Ok(_) => true,
    };
    let staged = beside(path);
    let written = (|| -> std::io::Result<()> {
        let file = OpenOptions::new().write(true).create_new(true).open(&staged)?;
        let mut out = BufWriter::new(file);
        write(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&staged, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&staged);
        return Err(e).with_context(|| {
            let kept = if earlier { " (the earlier file is kept as it was)" } else { "" };
            format!("cannot write {}{kept}", path.display())
        });
    }
    Ok(earlier)
}

/// A name of this process's own beside `path` (`.NAME.PID.tmp`), for a file written
/// there and then renamed over `path`, so that a reader never sees it half written.
pub(crate) fn beside(path: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".{}.tmp", std::process::id()));
    path.with_file_name(name)
}
