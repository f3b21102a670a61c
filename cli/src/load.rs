//! Reading a configuration: its file, its `--set` overrides, and the files it names (a
//! fabric, forwarding tables, rank mappings), read here because the models crates read no
//! files: the registries declare which keys name files (`models::files`), and the models
//! crate asks for their bytes through [`read_file`].

use anyhow::{Context, Result};
use models::config::Config;
use models::files::{named_files, Scope};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest configuration or study file read: a configuration recorded by a run holds
/// the text of the files it named (a fabric, forwarding tables), so it may be large, but a
/// path that never ends (`/dev/zero`, a pipe left open) must not be read forever.
pub(crate) const MAX_CONFIG_BYTES: u64 = 256 << 20;

/// The largest file a configuration names (a fabric, OpenSM's forwarding tables, a rank
/// mapping): the tables of a large fabric run to hundreds of megabytes.
pub(crate) const MAX_NAMED_FILE_BYTES: u64 = 4 << 30;

/// The text of the file at `path`, refused once it passes `limit` bytes (read no further).
/// The error says why, for `what` (e.g. "config"), naming the file and the limit.
pub(crate) fn read_capped(path: &Path, limit: u64, what: &str) -> Result<String> {
    let bytes = read_capped_bytes(path, limit, what)?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "cannot read {what} {}: not UTF-8 text (byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// The bytes of the file at `path`, refused once they pass `limit` (read no further).
fn read_capped_bytes(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    use std::os::unix::fs::FileTypeExt;
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {what} {}", path.display()))?;
    let meta = file.metadata().with_context(|| format!("cannot read {what} {}", path.display()))?;
    let kind = meta.file_type();
    // A device (`/dev/zero`) never ends and a folder has no text: refused before reading.
    // A pipe is read, up to the limit.
    if !(kind.is_file() || kind.is_fifo()) {
        anyhow::bail!(
            "cannot read {what} {}: it is {}, not a file",
            path.display(),
            if kind.is_dir() { "a folder" } else { "a device or socket" }
        );
    }
    let too_large = |path: &Path| {
        anyhow::anyhow!(
            "cannot read {what} {}: it is larger than {} (the most xnet reads for a {what}); \
             is it the file you meant?",
            path.display(),
            models::memory::human(limit)
        )
    };
    if meta.len() > limit {
        return Err(too_large(path));
    }
    // Sized once for a regular file, so reading never holds twice its size.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path));
    }
    Ok(bytes)
}

/// The text of the configuration file at `path`.
pub(crate) fn read(path: &Path) -> Result<String> {
    read_capped(path, MAX_CONFIG_BYTES, "config")
}

/// The bytes of a file a configuration names (relative to the working directory).
pub(crate) fn read_file(path: &str) -> Result<Vec<u8>, String> {
    read_capped_bytes(Path::new(path), MAX_NAMED_FILE_BYTES, "file").map_err(|e| {
        // The caller names the key and the path: keep only the reason.
        let text = format!("{e:#}");
        let prefix = format!("cannot read file {path}: ");
        let reason = text.strip_prefix(&prefix).map(str::to_string).unwrap_or(text);
        // A relative path that is not found: say where it was looked for.
        let missing = !Path::new(path).exists() && Path::new(path).is_relative();
        match std::env::current_dir() {
            Ok(cwd) if missing => {
                format!("{reason} (relative paths are read from the working directory, {})", cwd.display())
            }
            _ => reason,
        }
    })
}

/// Parses a configuration with its overrides, reading the files it names into their
/// contents keys (`topology.path` into `topology.contents`, ...), so that they are
/// recorded with the results.
pub(crate) fn parse_config(text: &str, set: &[String]) -> Result<Config> {
    Ok(Config::parse_with_files(text, set, &read_file)?)
}

/// A file a command reads, which no output of it may replace.
pub(crate) struct Input {
    pub(crate) path: PathBuf,
    /// The key naming it (`workload.jobs[0].file`), or `None` for the configuration.
    pub(crate) key: Option<String>,
}

impl Input {
    /// As messages name it: `the input configuration net.toml`, `the input own.goal
    /// (workload.jobs[0].file)`.
    fn describe(&self) -> String {
        match &self.key {
            None => format!("the input configuration {}", self.path.display()),
            Some(key) => format!("the input {} ({key})", self.path.display()),
        }
    }
}

/// The files a command reads for the configuration `config` (its text, `set` applied):
/// the configuration itself and the files it names for the chosen entries (a fabric,
/// forwarding tables, traces, rank mappings). A text that does not parse gives the
/// configuration alone (parsing it reports the error).
pub(crate) fn input_files(config: &Path, text: &str, set: &[String]) -> Vec<Input> {
    let mut inputs = vec![Input { path: config.to_path_buf(), key: None }];
    if let Ok(mut doc) = toml::from_str::<toml::Table>(text) {
        if models::config::apply_overrides(&mut doc, set).is_ok() {
            inputs.extend(
                named_files(&doc, Scope::Selected)
                    .into_iter()
                    .map(|f| Input { key: Some(f.path_key()), path: PathBuf::from(f.path) }),
            );
        }
    }
    inputs
}

/// Refuses an output path (given with `option`, e.g. `--export`) that is one of the
/// command's `inputs` ([`input_files`]), so that writing the output never replaces them.
/// Paths are compared as files (device and inode), so `./net.toml` and `net.toml` are the
/// same.
pub(crate) fn refuse_output_over_inputs(output: &Path, option: &str, inputs: &[Input]) -> Result<()> {
    if let Some(input) = inputs.iter().find(|input| same_file(output, &input.path)) {
        anyhow::bail!(
            "{option} {} is {}: choose another file for {option}",
            output.display(),
            input.describe()
        );
    }
    Ok(())
}

/// Whether `a` and `b` name one existing file (same device and inode, so `./C.toml` and
/// `C.toml` or a link are caught); false when either does not exist.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}
