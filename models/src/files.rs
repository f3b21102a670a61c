//! The files a configuration names, found through the registries that declare them.
//!
//! The model's crates read no files. A registry entry declares which of its keys name a
//! file and which key takes the file's text (a [`FileKey`]): the `file` topology's
//! `path` -> `contents` ([`TopologyEntry::files`](topology::TopologyEntry::files)), the
//! `tables` routing's `lfts` -> `lfts_contents` and `sls` -> `sls_contents`
//! ([`Settings::files`](routing::registry::Settings::files)), and a job's `mapping_file` ->
//! `mapping_contents` ([`JOB_FILES`]), and a trace job's file (`goal`'s `file`, `dumpi`'s
//! `meta`, `otf2`'s `archive`, `chakra`'s `trace`) -> `contents`. A trace is held
//! ([`FileForm::Held`]): its loader (`workload/traces.rs`, `workload/chakra.rs`) is handed
//! the reader and makes a schedule of the bytes, which the process keeps once ([`base::settings::held`]),
//! and `contents` takes only its record, the schedule's hash (an OTF2 archive is read by
//! the OTF2 library, the one place where a file is opened by path here, after the xnet
//! command's reader has read its anchor). [`named_files`] walks a configuration's table and
//! lists the files it names; [`read_named_files`] reads them with the reader the `xnet`
//! command passes in (its file access) and puts each text in its contents key, which is
//! how [`Config::parse_with_files`](crate::config::Config::parse_with_files) fills them
//! before checking the configuration. A study puts the texts in its copy of the base
//! configuration through the same walk.

use crate::workload::JOB_FILES;
use base::settings::{held_any, hold, read_text, ConfigError, FileError, FileForm, FileKey, HELD_PREFIX};
use toml::{Table, Value};

/// Which tables [`named_files`] looks in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The files a run reads: those of the family `topology.kind` selects, of the routing
    /// `routing.algorithm` selects, and of every job with `mapping = "file"`.
    Selected,
    /// Also the files that overrides may select later (a study's `[grid]` may switch
    /// `routing.algorithm`): the file keys of every family found in `[topology]`, and of
    /// every routing whose `[routing.NAME]` table is given.
    Any,
}

/// One step from the top of a configuration down to a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The table at this key.
    Key(&'static str),
    /// The table at this index of an array of tables.
    Index(usize),
}

/// A file a configuration names.
#[derive(Clone, Debug)]
pub struct NamedFile {
    /// The table holding the file's keys, from the top: `[Key("routing"), Key("tables")]`.
    pub table: Vec<Step>,
    /// The keys, as the entry declares them.
    pub key: FileKey,
    /// The file's path, as the configuration gives it.
    pub path: String,
    /// Whether the table holds the contents key already.
    pub has_contents: bool,
}

impl NamedFile {
    /// The table's name as errors write it: `routing.tables`, `workload.jobs[0]`.
    pub fn table_name(&self) -> String {
        let mut name = String::new();
        for step in &self.table {
            match step {
                Step::Key(key) if name.is_empty() => name.push_str(key),
                Step::Key(key) => {
                    name.push('.');
                    name.push_str(key);
                }
                Step::Index(i) => name.push_str(&format!("[{i}]")),
            }
        }
        name
    }

    /// The key naming the file: `routing.tables.lfts`.
    pub fn path_key(&self) -> String {
        format!("{}.{}", self.table_name(), self.key.path)
    }

    /// The key taking its text: `routing.tables.lfts_contents`.
    pub fn contents_key(&self) -> String {
        format!("{}.{}", self.table_name(), self.key.contents)
    }

    /// Whether an override of `key` (`--set KEY=...`, a study's `[set]` or `[grid]` key)
    /// gives this file's path: `key` is the path key or a table holding it.
    pub fn overridden_by(&self, key: &str) -> bool {
        let path_key = self.path_key();
        path_key == key
            || path_key.strip_prefix(key).is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    }

    /// The text for the contents key, from the file read with `read` (the caller's file
    /// access, bytes): the file's text, or the record of what the entry's loader made of
    /// it (a trace as a schedule), which the process then holds ([`base::settings::held`]). An error names
    /// the key and the file:
    /// `routing.tables.lfts: cannot read the forwarding tables PATH: ...`.
    pub fn read(
        &self,
        read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
        doc: &Table,
    ) -> Result<String, ConfigError> {
        let fail = |path: &str, e: String| {
            ConfigError::new(self.path_key(), format!("cannot read {} {path}: {e}", self.key.what))
        };
        let text = match self.key.form {
            FileForm::Text => read_text(read, &self.path),
            FileForm::Held(load) => load(&self.path, read, &|key| self.setting(doc, key)).map(|value| {
                let record = value.record.clone();
                hold(value);
                record
            }),
        };
        text.map_err(|e| match e {
            FileError::Unreadable { path, error } => fail(&path, error),
            FileError::Invalid(message) => ConfigError::new(self.path_key(), message),
        })
    }

    /// The setting `key` of the table that names the file in `doc` (or of `[workload]`, as
    /// `workload.KEY`, or of `[topology]`, as `topology.KEY.SUBKEY`), as text: a string as
    /// it is, a number or boolean as TOML writes it.
    fn setting(&self, doc: &Table, key: &str) -> Option<String> {
        let value = match (key.strip_prefix("workload."), key.strip_prefix("topology.")) {
            (Some(k), _) => doc.get("workload")?.get(k)?,
            (_, Some(path)) => {
                let mut value = doc.get("topology")?;
                for k in path.split('.') {
                    value = value.get(k)?;
                }
                value
            }
            (None, None) => {
                let mut value = doc.get(match self.table.first()? {
                    Step::Key(k) => *k,
                    Step::Index(_) => return None,
                })?;
                for step in &self.table[1..] {
                    value = match step {
                        Step::Key(k) => value.get(*k)?,
                        Step::Index(i) => value.get(*i)?,
                    };
                }
                value.get(key)?
            }
        };
        match value {
            Value::String(s) => Some(s.clone()),
            Value::Integer(_) | Value::Float(_) | Value::Boolean(_) => Some(value.to_string()),
            _ => None,
        }
    }

    /// The table holding the file's keys in `doc`.
    fn table_in<'a>(&self, doc: &'a mut Table) -> Option<&'a mut Table> {
        let (Step::Key(first), rest) = self.table.split_first()? else { return None };
        let mut value = doc.get_mut(*first)?;
        for step in rest {
            value = match (value, step) {
                (Value::Table(t), Step::Key(key)) => t.get_mut(*key)?,
                (Value::Array(a), Step::Index(i)) => a.get_mut(*i)?,
                _ => return None,
            };
        }
        value.as_table_mut()
    }
}

/// The files `doc` (a configuration's table, overrides applied) names within `scope`, in
/// order: the topology's, the routing's, the jobs'. A path that is not a string is left
/// out (checking the configuration reports it).
pub fn named_files(doc: &Table, scope: Scope) -> Vec<NamedFile> {
    let mut found = Vec::new();
    let mut add = |table: Vec<Step>, t: &Table, keys: &[FileKey]| {
        for key in keys {
            if let Some(Value::String(path)) = t.get(key.path) {
                let has_contents = t.contains_key(key.contents);
                found.push(NamedFile { table: table.clone(), key: *key, path: path.clone(), has_contents });
            }
        }
    };
    if let Some(Value::Table(t)) = doc.get("topology") {
        let families = topology::TOPOLOGIES.iter();
        let keys: Vec<FileKey> = match scope {
            Scope::Selected => {
                let kind = t.get("kind").and_then(Value::as_str);
                families.filter(|f| Some(f.name) == kind).flat_map(|f| f.files.iter().copied()).collect()
            }
            Scope::Any => {
                let mut keys: Vec<FileKey> = Vec::new();
                for key in families.flat_map(|f| f.files) {
                    if !keys.iter().any(|k| k.path == key.path) {
                        keys.push(*key);
                    }
                }
                keys
            }
        };
        add(vec![Step::Key("topology")], t, &keys);
    }
    if let Some(Value::Table(r)) = doc.get("routing") {
        let algorithm = r.get("algorithm").and_then(Value::as_str);
        for entry in routing::ROUTINGS {
            if scope == Scope::Selected && Some(entry.name) != algorithm {
                continue;
            }
            if let Some(Value::Table(t)) = r.get(entry.name) {
                add(vec![Step::Key("routing"), Step::Key(entry.name)], t, entry.settings.files);
            }
        }
    }
    if let Some(Value::Array(jobs)) = doc.get("workload").and_then(|w| w.get("jobs")) {
        for (i, job) in jobs.iter().enumerate() {
            if let Value::Table(t) = job {
                let at = vec![Step::Key("workload"), Step::Key("jobs"), Step::Index(i)];
                if t.get("mapping").and_then(Value::as_str) == Some("file") {
                    add(at.clone(), t, JOB_FILES);
                }
                let kind = t.get("kind").and_then(Value::as_str);
                for entry in crate::workload::WORKLOADS {
                    if scope == Scope::Any || Some(entry.name) == kind {
                        add(at.clone(), t, entry.files);
                    }
                }
            }
        }
    }
    found
}

/// Reads, with `read` (the `xnet` command's file access), each file `doc` names for a run
/// ([`Scope::Selected`]) into its contents key. Contents already given (a configuration
/// recorded with results, a fabric given inline) are kept, unless one of `overrides`
/// (`key=value`, as `--set` takes them) gives the file's path: then the file is read.
pub fn read_named_files(
    doc: &mut Table,
    overrides: &[String],
    read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
) -> Result<(), ConfigError> {
    let overridden: Vec<&str> =
        overrides.iter().filter_map(|o| o.split_once('=')).map(|(k, _)| k.trim()).collect();
    for file in named_files(doc, Scope::Selected) {
        if file.has_contents && !overridden.iter().any(|k| file.overridden_by(k)) {
            check_held(&file, doc, read)?;
            continue;
        }
        let text = file.read(read, doc)?;
        if let Some(table) = file.table_in(doc) {
            table.insert(file.key.contents.to_string(), Value::String(text));
        }
    }
    Ok(())
}

/// A held value's record given in `file`'s contents key (a configuration recorded with
/// results) that the process does not hold: the file is read again, and must hold what
/// the record says.
fn check_held(
    file: &NamedFile,
    doc: &mut Table,
    read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
) -> Result<(), ConfigError> {
    let FileForm::Held(_) = file.key.form else { return Ok(()) };
    let Some(Value::String(record)) = file.table_in(doc).and_then(|t| t.get(file.key.contents)) else {
        return Ok(());
    };
    if !record.starts_with(HELD_PREFIX) || held_any(record) {
        return Ok(());
    }
    let record = record.clone();
    let now = file.read(read, doc)?;
    if now != record {
        return Err(ConfigError::new(
            file.path_key(),
            format!(
                "{} {} is not what the recorded run read: the configuration records `{record}`, the file now \
                 gives `{now}`; remove {} to run what the file holds now",
                file.key.what,
                file.path,
                file.contents_key()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"
[topology]
kind = "file"
path = "ring.edges"
[routing]
algorithm = "tables"
[routing.tables]
lfts = "t.lfts"
sls = "t.sls"
sls_contents = "kept"
[workload]
[[workload.jobs]]
kind = "butterfly"
mapping = "file"
mapping_file = "a.map"
[[workload.jobs]]
kind = "butterfly"
[[workload.jobs]]
kind = "butterfly"
mapping = "file"
mapping_file = "b.map"
"#;

    #[test]
    fn the_walk_finds_the_files_of_the_selected_entries() {
        let doc: Table = toml::from_str(CONFIG).unwrap();
        let found = named_files(&doc, Scope::Selected);
        let keys: Vec<(String, String, bool)> =
            found.iter().map(|f| (f.path_key(), f.contents_key(), f.has_contents)).collect();
        let want = [
            ("topology.path", "topology.contents", false),
            ("routing.tables.lfts", "routing.tables.lfts_contents", false),
            ("routing.tables.sls", "routing.tables.sls_contents", true),
            ("workload.jobs[0].mapping_file", "workload.jobs[0].mapping_contents", false),
            ("workload.jobs[2].mapping_file", "workload.jobs[2].mapping_contents", false),
        ];
        let want: Vec<(String, String, bool)> =
            want.iter().map(|(p, c, h)| (p.to_string(), c.to_string(), *h)).collect();
        assert_eq!(keys, want);
        assert_eq!(found[3].path, "a.map");
        // Another routing selected: its tables are not read, unless any scope is asked for.
        let mut other = doc.clone();
        other["routing"].as_table_mut().unwrap().insert("algorithm".into(), "minimal".into());
        other["topology"].as_table_mut().unwrap().insert("kind".into(), "hyperx".into());
        assert!(named_files(&other, Scope::Selected).iter().all(|f| f.table[0] == Step::Key("workload")));
        assert_eq!(named_files(&other, Scope::Any).len(), 5);
    }

    #[test]
    fn files_are_read_into_their_contents_keys_unless_given() {
        let mut doc: Table = toml::from_str(CONFIG).unwrap();
        let read = |path: &str| match path {
            "missing" => Err("No such file".to_string()),
            _ => Ok(format!("text of {path}").into_bytes()),
        };
        read_named_files(&mut doc, &[], &read).unwrap();
        assert_eq!(doc["topology"]["contents"].as_str(), Some("text of ring.edges"));
        assert_eq!(doc["routing"]["tables"]["lfts_contents"].as_str(), Some("text of t.lfts"));
        assert_eq!(doc["routing"]["tables"]["sls_contents"].as_str(), Some("kept"));
        assert_eq!(doc["workload"]["jobs"][2]["mapping_contents"].as_str(), Some("text of b.map"));
        assert!(doc["workload"]["jobs"][1].get("mapping_contents").is_none());
        // A path given on the command line is read again.
        read_named_files(&mut doc, &["routing.tables.sls = x".into()], &read).unwrap();
        assert_eq!(doc["routing"]["tables"]["sls_contents"].as_str(), Some("text of t.sls"));
        // Errors name the key and the file.
        doc["topology"].as_table_mut().unwrap().insert("path".into(), "missing".into());
        let e = read_named_files(&mut doc, &["topology.path=missing".into()], &read).unwrap_err();
        assert_eq!(e.to_string(), "topology.path: cannot read the fabric file missing: No such file");
    }

    #[test]
    fn every_file_key_declared_is_a_documented_setting() {
        // Documented, and a contents key ends in `contents`: the study report
        // (python/xnet_study/report.py) shortens the file texts by that.
        let documented = |keys: &[base::settings::Setting], f: &FileKey| {
            f.contents.ends_with("contents")
                && [f.path, f.contents].iter().all(|k| keys.iter().any(|s| s.key == *k))
        };
        for t in topology::TOPOLOGIES {
            assert!(t.files.iter().all(|f| documented(t.settings, f)), "topology {}", t.name);
        }
        for r in routing::ROUTINGS {
            assert!(r.settings.files.iter().all(|f| documented(r.settings.keys, f)), "routing {}", r.name);
        }
        assert!(JOB_FILES.iter().all(|f| documented(crate::workload::JOB_SETTINGS, f)));
        // The walk knows the tables routing and the file topology by their entries alone.
        assert_eq!(routing::find("tables").unwrap().settings.files.len(), 2);
    }

    #[test]
    fn overrides_of_a_table_cover_its_files() {
        let doc: Table = toml::from_str(CONFIG).unwrap();
        let found = named_files(&doc, Scope::Selected);
        assert!(found[1].overridden_by("routing.tables.lfts"));
        assert!(found[1].overridden_by("routing.tables"));
        assert!(!found[1].overridden_by("routing.tables.lfts_contents"));
        assert!(!found[1].overridden_by("routing.tab"));
        assert!(found[3].overridden_by("workload.jobs"));
    }

    #[test]
    fn a_trace_is_held_once_and_recorded_by_its_hash() {
        use base::settings::held;
        let config = |contents: &str| -> Table {
            toml::from_str(&format!(
                "[workload]\n[[workload.jobs]]\nkind = \"goal\"\nfile = \"t.goal\"\n{contents}"
            ))
            .unwrap()
        };
        let goal = |bytes: u64| {
            format!("num_ranks 2\nrank 0 {{\nl1: send {bytes}b to 1\n}}\nrank 1 {{\nl1: recv {bytes}b from 0\n}}\n")
        };
        let reads = &std::cell::Cell::new(0);
        let read = |text: String| {
            move |_: &str| {
                reads.set(reads.get() + 1);
                Ok(text.clone().into_bytes())
            }
        };
        let mut doc = config("");
        read_named_files(&mut doc, &[], &read(goal(1111))).unwrap();
        let record = doc["workload"]["jobs"][0]["contents"].as_str().unwrap().to_string();
        // The SHA-256 of the schedule as GOAL text (64 hex digits), and its size.
        let hex = record.strip_prefix("held: sha256 ").unwrap().split(' ').next().unwrap();
        assert!(hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()), "{record}");
        assert!(record.ends_with("2 ops on 2 ranks"), "{record}");
        let schedule = held::<schedule::Schedule>(&record).unwrap();
        assert_eq!(schedule::Graph::num_ranks(&*schedule), 2);
        // Another schedule, another record; the same text, the same one.
        let mut other = config("");
        read_named_files(&mut other, &[], &read(goal(2222))).unwrap();
        assert_ne!(other["workload"]["jobs"][0]["contents"].as_str().unwrap(), record);
        let mut again = config("");
        read_named_files(&mut again, &[], &read(goal(1111))).unwrap();
        assert_eq!(again["workload"]["jobs"][0]["contents"].as_str().unwrap(), record);
        // A recorded configuration whose schedule the process holds is not read again.
        reads.set(0);
        let mut recorded = config(&format!("contents = {record:?}\n"));
        read_named_files(&mut recorded, &[], &read(goal(2222))).unwrap();
        assert_eq!(reads.get(), 0);
        // One it does not hold is read again, and refused if the file changed.
        let stale = format!("held: sha256 {} of the schedule as GOAL text, 2 ops on 2 ranks", "0".repeat(64));
        let mut recorded = config(&format!("contents = {stale:?}\n"));
        let e = read_named_files(&mut recorded, &[], &read(goal(1111))).unwrap_err();
        assert_eq!(e.key, "workload.jobs[0].file");
        assert!(
            e.message.contains("is not what the recorded run read") && e.message.contains(&record),
            "{e}"
        );
        assert!(e.message.contains("remove workload.jobs[0].contents"), "{e}");
        // Inline text is the job's own: kept, never read.
        reads.set(0);
        let mut inline = config(&format!("contents = {:?}\n", goal(5)));
        read_named_files(&mut inline, &[], &read(goal(1111))).unwrap();
        assert_eq!(reads.get(), 0);
    }
}
