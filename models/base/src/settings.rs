//! Settings as users write them and as the registries describe them: the description of
//! a registry entry and its keys ([`Setting`], [`EntryDoc`]), closed sets of named values
//! ([`Choice`]), the keys that name files ([`FileKey`]), the configuration error that
//! names its key ([`ConfigError`]) and the reader of typed settings tables ([`typed`]).
//! Every family (topologies, routings, the router's options, traffic patterns, workloads)
//! builds on these; the views over all families (`xnet list`, the generated docs) live
//! above them, in `xnet-models`.

use serde::de::DeserializeOwned;
use toml::{Table, Value};

/// A configuration error; the message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ConfigError {
    /// Dotted key, e.g. `router.vcs`.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl ConfigError {
    /// Error naming `key`.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self { key: key.into(), message: message.into() }
    }
}

/// Deserializes `table` as section `name`; errors name the full key path.
pub fn typed<T: DeserializeOwned>(name: &str, table: &Table) -> Result<T, ConfigError> {
    typed_with_ranges(name, table, &[])
}

/// Like [`typed`], with the allowed ranges `(key, lo, hi)` of integer keys whose range is
/// narrower than their type's, named when a value does not even fit the type.
pub fn typed_with_ranges<T: DeserializeOwned>(
    name: &str,
    table: &Table,
    ranges: &[(&str, u64, u64)],
) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(Value::Table(table.clone())).map_err(|e| {
        let path = e.path().to_string();
        let key = if path == "." || path.is_empty() { name.to_string() } else { format!("{name}.{path}") };
        let range = ranges.iter().find(|(k, _, _)| *k == key).map(|&(_, lo, hi)| (lo, hi));
        let message = plain_message(range, e.into_inner().message().trim());
        ConfigError::new(key, message)
    })
}

/// Serde's message, with an integer that does not fit its type answered by the allowed
/// `range` (or the type's): "invalid value: integer `1000`, expected u8" becomes "must be
/// in 1..=64, got 1000" for `router.vcs`.
///
/// An integer too large for TOML's signed 64 bits comes as its digits (a string, see
/// `--set`), and is answered the same way.
fn plain_message(range: Option<(u64, u64)>, message: &str) -> String {
    let integer =
        message.strip_prefix("invalid value: integer `").and_then(|rest| rest.split_once("`, expected "));
    let digits = message
        .strip_prefix("invalid type: string \"")
        .and_then(|rest| rest.split_once("\", expected "))
        .filter(|(v, _)| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
    let Some((value, ty)) = integer.or(digits) else {
        return with_field_hint(message);
    };
    if let Some((lo, hi)) = range {
        return format!("must be in {lo}..={hi}, got {value}");
    }
    // Without the key's own range, only the type's bound is known: the key may refuse 0
    // too (checked later), so no range starting at 0 is claimed.
    let max = match ty {
        "u8" => u64::from(u8::MAX),
        "u16" => u64::from(u16::MAX),
        "u32" => u64::from(u32::MAX),
        "u64" | "usize" => u64::MAX,
        _ => return message.to_string(),
    };
    if value.starts_with('-') {
        format!("must be a non-negative integer, got {value}")
    } else {
        format!("must be at most {max}, got {value}")
    }
}

/// Serde's "unknown field `vc`, expected one of `vcs`, ..." (or "unknown variant") with
/// "did you mean `vcs`?"
/// when one of the fields is close (see [`closest`]).
fn with_field_hint(message: &str) -> String {
    let Some((given, expected)) = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .and_then(|rest| rest.split_once("`, expected "))
    else {
        return message.to_string();
    };
    let fields = expected.split('`').skip(1).step_by(2);
    match closest(given, fields) {
        Some(c) => format!("{message}; did you mean `{c}`?"),
        None => message.to_string(),
    }
}

/// A seed as a configuration gives it: an integer >= 0, or any `u64` as a string of its
/// decimal digits, since TOML integers stop at 2^63 - 1 (`seed = "18446744073709551615"`).
pub fn seed_of(value: &Value) -> Result<u64, String> {
    match value {
        Value::Integer(n) if *n >= 0 => Ok(*n as u64),
        Value::String(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse().map_err(|_| format!("must be in 0..={}, got {digits}", u64::MAX))
        }
        other => Err(format!(
            "must be an integer in 0..={} (from 2^63 on, as a string of digits: \"{}\"), got {other}",
            u64::MAX,
            u64::MAX
        )),
    }
}

/// Serde's reader of a seed (see [`seed_of`]): `#[serde(deserialize_with = "...")]`.
pub fn deserialize_seed<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let value = <Value as serde::Deserialize>::deserialize(d)?;
    seed_of(&value).map_err(serde::de::Error::custom)
}

/// Serde's reader of an optional seed (see [`seed_of`]), with `#[serde(default)]`.
pub fn deserialize_optional_seed<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    deserialize_seed(d).map(Some)
}

/// One setting of an entry: a key of its table (e.g. `threshold` of
/// `[routing.dragonfly_ugal]`).
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// Key.
    pub key: &'static str,
    /// Default, as shown to users (`required` when there is none).
    pub default: &'static str,
    /// What it means and what is allowed.
    pub doc: &'static str,
}

/// A setting that names a file, and the setting that takes the file's text: a registry
/// entry declares its own (the `file` topology's `path`, the `tables` routing's `lfts` and
/// `sls`, a job's `mapping_file`). The model's crates read no files: the `xnet` command
/// reads each file a configuration names into its contents key before the configuration
/// is checked (see `xnet_models::files`), so the text is recorded with the results and a
/// recorded configuration runs without the file (a trace, [`FileForm::Held`], is recorded
/// by its hash and read again). Contents given in the configuration are used as they are
/// unless the path is named on the command line.
#[derive(Clone, Copy, Debug)]
pub struct FileKey {
    /// The key naming the file, a path relative to the working directory (`lfts`).
    pub path: &'static str,
    /// The key that takes the file's text (`lfts_contents`).
    pub contents: &'static str,
    /// What the file is, for messages (`the forwarding tables`).
    pub what: &'static str,
    /// How the file becomes the contents key's text.
    pub form: FileForm,
}

/// How a named file becomes the text of its contents key.
#[derive(Clone, Copy, Debug)]
pub enum FileForm {
    /// Its text, as it is (UTF-8).
    Text,
    /// Loaded by the entry that declares it into a value the process holds once (a trace
    /// as a schedule): the crate that knows the format holds the reader, this one only the
    /// hook. The contents key takes the value's [`Held::record`], not the value: a trace of
    /// gigabytes is neither copied into the configuration's text nor recorded with the
    /// results.
    Held(FileLoader),
}

/// Reads the file at `path` (and the files it names, relative to its folder) with the
/// caller's file access `read`, and returns what it holds. `setting` gives the other
/// settings of the table that names the file as text (`library`), and the `[workload]`
/// section's as `workload.KEY`: what the loading depends on.
pub type FileLoader = fn(
    path: &str,
    read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
    setting: &dyn Fn(&str) -> Option<String>,
) -> Result<Held, FileError>;

/// What a [`FileLoader`] loaded.
#[derive(Clone)]
pub struct Held {
    /// What identifies the value, recorded in the contents key: it starts with
    /// [`HELD_PREFIX`] and names a hash of the value, so that a run recorded with it reads
    /// the file again and can tell whether it changed.
    pub record: String,
    /// The value the entry's kind takes when the configuration is built.
    pub value: std::sync::Arc<dyn std::any::Any + Send + Sync>,
}

/// How a contents key's record of a held value begins (contents that do not are the
/// file's text, given inline).
pub const HELD_PREFIX: &str = "held: ";

/// The values the process holds ([`FileForm::Held`]: traces as schedules), by record: each
/// read once, shared by every job, thread and run of the process that names it.
static HELD: std::sync::Mutex<Vec<Held>> = std::sync::Mutex::new(Vec::new());

/// The value of type `T` the process holds under `record` (a contents key's record), if it
/// does. (Two kinds may hold one schedule under one record, each in its own type: a
/// Chakra job's and the GOAL file exported from it.)
pub fn held<T: std::any::Any + Send + Sync>(record: &str) -> Option<std::sync::Arc<T>> {
    let held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    held.iter().filter(|h| h.record == record).find_map(|h| h.value.clone().downcast::<T>().ok())
}

/// Whether the process holds a value under `record`.
pub fn held_any(record: &str) -> bool {
    HELD.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|h| h.record == record)
}

/// Holds `value` under its record, for the rest of the process (once: the same record and
/// type are the same value).
pub fn hold(value: Held) {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let same = |h: &Held| h.record == value.record && (*h.value).type_id() == (*value.value).type_id();
    if !held.iter().any(same) {
        held.push(value);
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held").field("record", &self.record).finish()
    }
}

/// Why a named file gave no text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// The file at `path` (the named one or one it names) could not be read: `error` says
    /// why.
    Unreadable {
        /// The file that could not be read.
        path: String,
        /// Why.
        error: String,
    },
    /// The files were read but do not hold what they should: the message names the file
    /// and the place.
    Invalid(String),
}

/// The file at `path` read with `read` as UTF-8 text.
pub fn read_text(read: &dyn Fn(&str) -> Result<Vec<u8>, String>, path: &str) -> Result<String, FileError> {
    let unreadable = |error: String| FileError::Unreadable { path: path.to_string(), error };
    let bytes = read(path).map_err(unreadable)?;
    String::from_utf8(bytes)
        .map_err(|e| unreadable(format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to())))
}

/// An entry as users see it.
#[derive(Clone, Debug)]
pub struct EntryDoc {
    /// Name in configs.
    pub name: &'static str,
    /// One line on what it is.
    pub doc: &'static str,
    /// Further facts as (label, text), the same labels for every entry of a family (e.g.
    /// a routing's topologies and VCs): columns of the docs' table.
    pub details: Vec<(&'static str, &'static str)>,
    /// Its settings.
    pub settings: &'static [Setting],
}

/// A value of a closed set (a VC policy, a selection) with its name and doc.
#[derive(Clone, Copy, Debug)]
pub struct Choice<T: 'static> {
    /// The value.
    pub value: T,
    /// Its name in configs.
    pub name: &'static str,
    /// What it does.
    pub doc: &'static str,
}

impl<T: Copy + PartialEq> Choice<T> {
    /// As users see it.
    pub fn doc(&self) -> EntryDoc {
        EntryDoc { name: self.name, doc: self.doc, details: Vec::new(), settings: &[] }
    }

    /// The value named `name` in `choices`, or an error listing the names.
    pub fn parse(choices: &[Choice<T>], name: &str) -> Result<T, String> {
        choices
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.value)
            .ok_or_else(|| unknown_message(name, choices.iter().map(|c| c.name)))
    }

    /// The name of `value` in `choices`.
    pub fn name_of(choices: &[Choice<T>], value: T) -> &'static str {
        choices.iter().find(|c| c.value == value).map_or("?", |c| c.name)
    }
}

/// Gives a closed set `$type` listed in `$choices` (a `&[Choice<$type>]`) its `name()`
/// and serde as that name: configs spell every such value the way the registry lists it,
/// and an unknown name is refused with the list of known ones.
#[macro_export]
macro_rules! named_by_registry {
    ($type:ty, $choices:expr) => {
        impl $type {
            /// The name in configs.
            pub fn name(self) -> &'static str {
                $crate::settings::Choice::name_of($choices, self)
            }
        }
        impl $crate::__serde::Serialize for $type {
            fn serialize<S: $crate::__serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }
        impl<'de> $crate::__serde::Deserialize<'de> for $type {
            fn deserialize<D: $crate::__serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = <String as $crate::__serde::Deserialize>::deserialize(d)?;
                $crate::settings::Choice::parse($choices, &name).map_err($crate::__serde::de::Error::custom)
            }
        }
    };
}

/// `a, b, c`.
pub fn names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

/// The error for an unknown `given` name at `key`, listing what `known` offers (the
/// closest first, as a suggestion, when one is close: see [`closest`]).
pub fn unknown<'a>(key: &str, given: &str, known: impl Iterator<Item = &'a str>) -> ConfigError {
    ConfigError::new(key, unknown_message(given, known))
}

/// "unknown `given`; did you mean `x`? known: ...", the suggestion only when one is close.
pub fn unknown_message<'a>(given: &str, known: impl Iterator<Item = &'a str>) -> String {
    let known: Vec<&str> = known.collect();
    let hint =
        closest(given, known.iter().copied()).map_or(String::new(), |c| format!(" did you mean `{c}`?"));
    format!("unknown `{given}`;{hint} known: {}", names(known.into_iter()))
}

/// The name of `known` closest to `given` if it is close enough to be a slip: at most two
/// edits (insertions, deletions, substitutions, swaps of neighbours; case aside), and
/// fewer than the letters of the shorter of the two. `None` when nothing is that
/// close (a different name, not a typo).
pub fn closest<'a>(given: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let given = given.to_lowercase();
    known
        .map(|k| (strsim::damerau_levenshtein(&given, &k.to_lowercase()), k))
        .filter(|&(d, k)| d <= 2 && d < given.chars().count().min(k.chars().count()))
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}
