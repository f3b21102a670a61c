//! Reading a configuration: its file, its `--set` overrides, and the files it names (a
//! fabric, forwarding tables, rank mappings), read here because the models crates read no
//! files.

use anyhow::{Context, Result};
use models::config::Config;
use std::path::Path;

/// The text of the configuration file at `path`.
pub(crate) fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read config {}", path.display()))
}

/// Parses a configuration with its overrides and reads the files it names: the fabric of
/// `topology.kind = "file"` (`topology.path`, passed on as `topology.contents`) and the
/// workload's rank mappings. The models crate touches no files.
pub(crate) fn parse_config(text: &str, set: &[String]) -> Result<Config> {
    let set = with_named_files(text, set)?;
    with_mapping_files(Config::parse(text, &set)?)
}

/// `set` plus the contents of the files a configuration names, read here because the
/// models crate reads no files: `topology.contents` from `topology.path` for a fabric file,
/// `routing.tables.lfts_contents` and `.sls_contents` from `lfts` and `sls` for tables.
/// A key whose contents are given already is not read again, unless its file is named
/// with `--set`.
fn with_named_files(text: &str, set: &[String]) -> Result<Vec<String>> {
    let mut set = set.to_vec();
    let mut doc: toml::Table = match toml::from_str(text) {
        Ok(doc) => doc,
        Err(_) => return Ok(set), // Config::parse reports it
    };
    if models::config::apply_overrides(&mut doc, &set).is_err() {
        return Ok(set);
    }
    let table = |path: &[&str]| -> Option<&toml::Table> {
        path.iter().try_fold(&doc, |t, k| t.get(*k).and_then(|v| v.as_table()))
    };
    let mut read = Vec::new();
    for &NamedFile { when: (when_section, when_key, value), section, path_key, contents_key, what } in
        &NAMED_FILES
    {
        let selected = table(&[when_section]).and_then(|t| t.get(when_key)).and_then(|v| v.as_str());
        let Some(t) = table(section).filter(|_| selected == Some(value)) else { continue };
        // Contents given (e.g. a configuration recorded with results) are used, unless the
        // file is named on the command line.
        let prefix = section.join(".");
        let path_set = set.iter().any(|o| o.starts_with(&format!("{prefix}.{path_key}=")));
        if t.contains_key(contents_key) && !path_set {
            continue;
        }
        if let Some(path) = t.get(path_key).and_then(|p| p.as_str()) {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("{prefix}.{path_key}: cannot read {what} {path}"))?;
            read.push(format!("{prefix}.{contents_key}={}", toml::Value::String(text)));
        }
    }
    set.extend(read);
    Ok(set)
}

/// A key of a configuration that names a file, which the `xnet` command reads into
/// another key (the models crate reads no files).
pub(crate) struct NamedFile {
    /// `(section, key, value)`: the file is read when `section.key` is `value`.
    pub when: (&'static str, &'static str, &'static str),
    /// The table holding both keys.
    pub section: &'static [&'static str],
    /// The key naming the file.
    pub path_key: &'static str,
    /// The key taking its text.
    pub contents_key: &'static str,
    /// What the file is, for messages.
    pub what: &'static str,
}

/// The keys naming files: the fabric of `topology.kind = "file"` and the dumps of
/// `routing.algorithm = "tables"`.
pub(crate) const NAMED_FILES: [NamedFile; 3] = [
    NamedFile {
        when: ("topology", "kind", "file"),
        section: &["topology"],
        path_key: "path",
        contents_key: "contents",
        what: "the fabric file",
    },
    NamedFile {
        when: ("routing", "algorithm", "tables"),
        section: &["routing", "tables"],
        path_key: "lfts",
        contents_key: "lfts_contents",
        what: "the forwarding tables",
    },
    NamedFile {
        when: ("routing", "algorithm", "tables"),
        section: &["routing", "tables"],
        path_key: "sls",
        contents_key: "sls_contents",
        what: "the path SLs",
    },
];

/// Reads the files the workload's rank mappings name (`mapping = "file"`): the models
/// crate touches no files.
fn with_mapping_files(mut cfg: Config) -> Result<Config> {
    if let Some(w) = cfg.workload.as_mut() {
        w.load_files(&|path| std::fs::read_to_string(path).map_err(|e| e.to_string()))?;
    }
    Ok(cfg)
}
