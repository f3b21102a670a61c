//! Reading a configuration: its file, its `--set` overrides, and the files it names (a
//! fabric, forwarding tables, rank mappings), read here because the models crates read no
//! files: the registries declare which keys name files (`models::files`), and the models
//! crate asks for their text through [`read_file`].

use anyhow::{Context, Result};
use models::config::Config;
use std::path::Path;

/// The text of the configuration file at `path`.
pub(crate) fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read config {}", path.display()))
}

/// The text of a file a configuration names (relative to the working directory).
pub(crate) fn read_file(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

/// Parses a configuration with its overrides, reading the files it names into their
/// contents keys (`topology.path` into `topology.contents`, ...), so that they are
/// recorded with the results.
pub(crate) fn parse_config(text: &str, set: &[String]) -> Result<Config> {
    Ok(Config::parse_with_files(text, set, &read_file)?)
}
