//! Where a job's ranks run: the mappings of ranks to endpoints (linear, random, or the
//! list in `mapping_contents`, which the `xnet` command fills from `mapping_file`).

use base::settings::ConfigError;
use topology::EndpointId;

/// Where a job's ranks run.
#[derive(Clone, Debug, PartialEq)]
pub enum Mapping {
    /// Consecutive endpoints from `first` (default: the lowest free endpoints).
    Linear {
        /// Endpoint of rank 0.
        first: Option<EndpointId>,
    },
    /// A random sample of the free endpoints, in random order.
    Random {
        /// Seed (default: the run's).
        seed: Option<u64>,
    },
    /// Listed in a file (`mapping_file`), whose text the `xnet` command puts in
    /// `mapping_contents` ([`JOB_FILES`](super::JOB_FILES)).
    File {
        /// The file's path as given (`None`: the mapping is given inline).
        path: Option<String>,
        /// The endpoints of `mapping_contents` (`None`: the file was not read).
        endpoints: Option<Vec<EndpointId>>,
    },
}

/// The endpoints a mapping's text lists, one per line (blank lines and `#` comments
/// ignored); errors name `mapping_file` and the file (`mapping_contents` for a mapping
/// given inline) and the line.
pub(super) fn mapping_endpoints(
    text: &str,
    path: Option<&str>,
    at: &dyn Fn(&str) -> String,
) -> Result<Vec<EndpointId>, ConfigError> {
    let (key, source) = match path {
        Some(path) => (at("mapping_file"), format!("`{path}`")),
        None => (at("mapping_contents"), "the mapping".to_string()),
    };
    let mut list = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let e = line.parse::<EndpointId>().map_err(|_| {
            ConfigError::new(
                &key,
                format!("{source} line {}: `{line}` is not an endpoint id (a whole number)", n + 1),
            )
        })?;
        list.push(e);
    }
    Ok(list)
}

/// The key errors about where a job's ranks are placed name: `mapping_file` (or
/// `mapping_contents` for a mapping given inline) or `mapping`.
pub(super) fn mapping_key(mapping: &Mapping, at: &dyn Fn(&str) -> String) -> String {
    match mapping {
        Mapping::File { path: Some(_), .. } => at("mapping_file"),
        Mapping::File { path: None, .. } => at("mapping_contents"),
        _ => at("mapping"),
    }
}
