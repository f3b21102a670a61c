//! `--set key=value` overrides: dotted keys into the configuration's table, values read as
//! TOML or as a bare word.

use base::settings::ConfigError;
use toml::{Table, Value};

/// The value of `--set key=text`: TOML, or a bare word (letters, digits and `_-./:+`) taken
/// as a string, so that `routing.algorithm=nue` needs no quotes. Numbers TOML refuses are
/// read as users mean them: a decimal without a digit before or after its point (`.5`,
/// `5.`) as that number, an integer past TOML's signed 64 bits as its digits (a string,
/// which `simulation.seed` reads as a `u64` and every other integer key refuses with its
/// range). Anything else that is not TOML (e.g. `[0.3`) is an error rather than a string
/// nobody meant.
pub(super) fn parse_value(key: &str, text: &str) -> Result<Value, ConfigError> {
    match toml::from_str::<Table>(&format!("v = {text}")) {
        Ok(mut t) => Ok(t.remove("v").expect("the table has key v")),
        Err(_) if is_decimal(text) => match text.parse::<f64>() {
            Ok(x) => Ok(Value::Float(x)),
            Err(_) => Ok(Value::String(text.to_string())),
        },
        Err(_)
            if text.strip_prefix('+').unwrap_or(text).bytes().all(|b| b.is_ascii_digit())
                && !text.is_empty() =>
        {
            Ok(Value::String(text.strip_prefix('+').unwrap_or(text).to_string()))
        }
        Err(_) if !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || "_-./:+".contains(c)) => {
            Ok(Value::String(text.to_string()))
        }
        Err(e) => Err(ConfigError::new(
            key,
            format!(
                "cannot read `{text}` as a TOML value ({}); strings with characters other than \
                 letters, digits and _-./:+ need quotes: --set 'key=\"...\"'",
                e.message().trim()
            ),
        )),
    }
}

/// `.5`, `-5.`, `+5.25`: a decimal number with digits on at least one side of its point.
fn is_decimal(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let Some((int, frac)) = digits.split_once('.') else { return false };
    !(int.is_empty() && frac.is_empty())
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// Applies `key=value` overrides (dotted keys; the value is TOML, or a bare string).
pub fn apply_overrides(doc: &mut Table, overrides: &[String]) -> Result<(), ConfigError> {
    for o in overrides {
        let (key, value) = o.split_once('=').ok_or_else(|| {
            ConfigError::new(
                "--set",
                format!("`{o}` must look like section.key=value, e.g. traffic.load=0.3"),
            )
        })?;
        let key = key.trim();
        let path = key_path(key);
        if path.len() < 2 || path.iter().any(|p| p.is_empty()) {
            return Err(ConfigError::new(
                "--set",
                format!("`{key}`: the key must be section.key, e.g. traffic.load=0.3"),
            ));
        }
        let mut table = &mut *doc;
        let mut parts = path[..path.len() - 1].iter();
        while let Some(part) = parts.next() {
            let entry = table.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new()));
            table = match entry {
                Value::Table(t) => t,
                // An array of tables (`[[workload.jobs]]`): the next part picks one.
                Value::Array(items) => {
                    let Some(pick) = parts.next() else {
                        return Err(ConfigError::new(
                            key,
                            format!("`{part}` is a list: name one of its entries, e.g. {part}.0.KEY or {part}[0].KEY"),
                        ));
                    };
                    pick_entry(key, part, items, pick)?
                }
                _ => return Err(ConfigError::new(key, format!("`{part}` is not a table"))),
            };
        }
        table.insert(path[path.len() - 1].to_string(), parse_value(key, value.trim())?);
    }
    Ok(())
}

/// The parts of a dotted key, an index in brackets counting as a part of its own:
/// `workload.jobs[1].iterations` is `workload`, `jobs`, `1`, `iterations`.
fn key_path(key: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for part in key.split('.') {
        match part.split_once('[') {
            Some((name, rest)) if rest.ends_with(']') => {
                parts.push(name.to_string());
                parts.extend(rest[..rest.len() - 1].split("][").map(str::to_string));
            }
            _ => parts.push(part.to_string()),
        }
    }
    parts
}

/// The entry of the array of tables `list` (under the key's part `part`) that `pick`
/// names: an index from 0, or the `name` of a table (a table without one is named
/// `KIND-INDEX`, as a job is).
fn pick_entry<'a>(
    key: &str,
    part: &str,
    list: &'a mut [Value],
    pick: &str,
) -> Result<&'a mut Table, ConfigError> {
    let name_of = |i: usize, v: &Value| -> Option<String> {
        let t = v.as_table()?;
        match (t.get("name"), t.get("kind")) {
            (Some(Value::String(name)), _) => Some(name.clone()),
            (None, Some(Value::String(kind))) => Some(format!("{kind}-{i}")),
            _ => None,
        }
    };
    let names: Vec<Option<String>> = list.iter().enumerate().map(|(i, v)| name_of(i, v)).collect();
    let index = match pick.parse::<usize>() {
        Ok(i) if i < list.len() => Some(i),
        Ok(_) => None,
        Err(_) => names.iter().position(|n| n.as_deref() == Some(pick)),
    };
    let Some(i) = index else {
        let known: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(i, n)| n.as_ref().map_or(i.to_string(), |n| format!("{i} ({n})")))
            .collect();
        return Err(ConfigError::new(
            key,
            format!("`{part}` has no entry `{pick}`; its entries, by index (name): {}", known.join(", ")),
        ));
    };
    list[i].as_table_mut().ok_or_else(|| ConfigError::new(key, format!("`{part}[{i}]` is not a table")))
}
