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
        let path: Vec<&str> = key.trim().split('.').collect();
        if path.len() < 2 || path.iter().any(|p| p.is_empty()) {
            return Err(ConfigError::new(
                "--set",
                format!("`{}`: the key must be section.key, e.g. traffic.load=0.3", key.trim()),
            ));
        }
        let mut table = &mut *doc;
        for part in &path[..path.len() - 1] {
            let entry = table.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new()));
            table = entry
                .as_table_mut()
                .ok_or_else(|| ConfigError::new(key.trim(), format!("`{part}` is not a table")))?;
        }
        table.insert(path[path.len() - 1].to_string(), parse_value(key.trim(), value.trim())?);
    }
    Ok(())
}
