//! Reading a study file: its sections, its base configuration with the text of the files
//! the base names put in, and the grid expanded into runs, every run's configuration
//! checked before anything runs.

use super::{Run, Study, StudyFile};
use crate::load::{read_capped, MAX_CONFIG_BYTES};
use anyhow::{bail, Context, Result};
use models::files::{named_files, NamedFile, Scope, Step};
use std::path::Path;
use toml::Value;

/// The keys of the `[grid]` section of `text` in the order they are written
/// (`toml::Table` sorts its keys).
fn grid_key_order(text: &str) -> Vec<String> {
    let doc = text.parse::<toml_edit::DocumentMut>().ok();
    let grid = doc.as_ref().and_then(|d| d.get("grid")).and_then(|g| g.as_table_like());
    grid.map(|g| g.iter().map(|(key, _)| key.to_string()).collect()).unwrap_or_default()
}

/// The base configuration with the text of each file it names (a fabric, OpenSM dumps,
/// rank mappings) put in beside its path (`topology.contents`, ...), so that the study's
/// copy holds them and every run uses them as they were when the study was created, like
/// the base itself. The files are those the registries declare (`models::files`), found
/// whatever the base's routing (a grid may select another: [`Scope::Any`]), unless the base
/// holds the text already or `[set]` or `[grid]` name another file (`overridden`: then
/// each run reads the file it names when it starts). Paths are read relative to the
/// working directory, as `xnet run` reads them. The text comes back unchanged when nothing
/// is put in, or when it does not parse (the runs' checks report it).
fn with_named_contents(base_text: &str, overridden: &dyn Fn(&NamedFile) -> bool) -> Result<String> {
    let (Ok(table), Ok(mut doc)) =
        (toml::from_str::<toml::Table>(base_text), base_text.parse::<toml_edit::DocumentMut>())
    else {
        return Ok(base_text.to_string());
    };
    let mut put = false;
    for file in named_files(&table, Scope::Any) {
        if file.has_contents || overridden(&file) {
            continue;
        }
        let text = file.read(&crate::load::read_file, &table)?;
        let mut item = Some(doc.as_item_mut());
        for step in &file.table {
            item = match step {
                Step::Key(key) => item.and_then(|i| i.get_mut(key)),
                Step::Index(index) => item.and_then(|i| i.get_mut(index)),
            };
        }
        if let Some(table) = item.and_then(|t| t.as_table_like_mut()) {
            table.insert(file.key.contents, toml_edit::value(text));
            put = true;
        }
    }
    Ok(if put { doc.to_string() } else { base_text.to_string() })
}

/// One value of a grid axis: the keys it sets, each with its value (one key for a plain
/// axis; several for a paired one).
type Choice = Vec<(String, Value)>;

/// The grid's axes in the order they are written (the first varies slowest), each with its
/// choices, and every key they set (in order of first appearance). An axis is a dotted key
/// with a list of values, or a label (no dot) with a list of tables, each setting several
/// keys together: `cc = [{ "congestion.control" = "none" }, { "congestion.control" =
/// "infiniband", "congestion.infiniband.threshold" = 16 }]` (nested tables read as dotted
/// keys). Refuses a key that is not `section.key`, names the loads, or has no list of values.
fn grid_axes(grid: &toml::Table, study_text: &str) -> Result<(Vec<String>, Vec<Vec<Choice>>)> {
    let mut keys: Vec<String> = Vec::new();
    let mut axes: Vec<Vec<Choice>> = Vec::new();
    // `toml::Table` sorts its keys; the grid varies the first key written slowest.
    let mut grid: Vec<(&String, &Value)> = grid.iter().collect();
    let order = grid_key_order(study_text);
    grid.sort_by_key(|(key, _)| order.iter().position(|k| k == *key).unwrap_or(usize::MAX));
    let check = |axis: &str, key: &str| -> Result<()> {
        if key.split('.').count() < 2 || key.split('.').any(str::is_empty) {
            bail!("grid.\"{axis}\": keys are section.key, quoted, e.g. \"routing.algorithm\" = [...]");
        }
        if key == "traffic.load" || key == "traffic.loads" {
            bail!("grid.\"{axis}\": every run sweeps study.loads; give the loads there");
        }
        Ok(())
    };
    for (axis, values) in grid {
        let Value::Array(values) = values else {
            bail!("grid.\"{axis}\": must be a list of values, e.g. [\"a\", \"b\"]");
        };
        if values.is_empty() {
            bail!("grid.\"{axis}\": the list is empty");
        }
        let paired = !axis.contains('.');
        let mut choices = Vec::with_capacity(values.len());
        for value in values {
            let choice: Choice = match value {
                Value::Table(table) if paired => {
                    let mut set = Vec::new();
                    flatten("", table, &mut set);
                    if set.is_empty() {
                        bail!("grid.{axis}: an empty table sets nothing");
                    }
                    set
                }
                _ if paired => bail!(
                    "grid.{axis}: a key without a dot pairs settings: its values are tables, e.g. \
                     {axis} = [{{ \"congestion.control\" = \"none\" }}, {{ \"congestion.control\" = \"infiniband\", \
                     \"congestion.infiniband.threshold\" = 16 }}]; a single key is section.key, quoted"
                ),
                value => vec![(axis.clone(), value.clone())],
            };
            for (key, _) in &choice {
                check(axis, key)?;
                if !keys.contains(key) {
                    keys.push(key.clone());
                }
            }
            choices.push(choice);
        }
        axes.push(choices);
    }
    Ok((keys, axes))
}

/// Appends the leaves of `table` to `out` as dotted keys under `prefix`: `{ congestion =
/// { control = "none" } }` and `{ "congestion.control" = "none" }` both set
/// `congestion.control`.
fn flatten(prefix: &str, table: &toml::Table, out: &mut Choice) {
    for (key, value) in table {
        let key = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
        match value {
            Value::Table(inner) => flatten(&key, inner, out),
            value => out.push((key, value.clone())),
        }
    }
}

/// Every combination of the `axes`' choices, the last axis varying fastest: run `index`,
/// named `NNN-value-value` after its index and values.
fn grid_runs(axes: &[Vec<Choice>]) -> Vec<Run> {
    let total: usize = axes.iter().map(Vec::len).product();
    let mut runs = Vec::with_capacity(total);
    for index in 0..total {
        let mut rest = index;
        let mut picked: Vec<&Choice> = Vec::with_capacity(axes.len());
        for axis in axes.iter().rev() {
            picked.push(&axis[rest % axis.len()]);
            rest /= axis.len();
        }
        picked.reverse();
        let mut name = format!("{index:03}");
        for choice in &picked {
            name.push('-');
            name.push_str(&choice.iter().map(|(_, v)| slug(v)).collect::<Vec<_>>().join("-"));
        }
        runs.push(Run { name, overrides: picked.into_iter().flatten().cloned().collect() });
    }
    runs
}

/// `key=value` as `--set` takes it (the value as TOML).
pub(super) fn set_arg(key: &str, value: &Value) -> String {
    format!("{key}={value}")
}

/// A value as it reads in a run name: strings bare, anything else as TOML, reduced to
/// characters that are safe in file names.
fn slug(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        // [16, 16] -> 16x16
        Value::Array(items) => items.iter().map(slug).collect::<Vec<_>>().join("x"),
        other => other.to_string(),
    };
    let mut out: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() || "._".contains(c) { c } else { '_' }).collect();
    out.truncate(40);
    out
}

impl Study {
    /// Reads and checks the study file at `path`: its sections, the base configuration,
    /// and every run's configuration, so that a bad key or value is reported (naming the
    /// run) before anything runs.
    pub fn load(path: &Path) -> Result<Study> {
        let study_text = read_capped(path, MAX_CONFIG_BYTES, "study")?;
        let file: StudyFile = toml::from_str(&study_text)
            .map_err(|e| anyhow::anyhow!("study {}: {}", path.display(), e.to_string().trim()))?;
        let base_path = path.parent().unwrap_or(Path::new(".")).join(&file.study.base);
        let base_text =
            read_capped(&base_path, MAX_CONFIG_BYTES, "base configuration").context("study.base")?;
        let (grid_keys, _) = grid_axes(&file.grid, &study_text)?;
        let overridden = |f: &NamedFile| file.set.keys().chain(&grid_keys).any(|k| f.overridden_by(k));
        let kept = with_named_contents(&base_text, &overridden)?;
        let name = path.file_stem().map_or("study".into(), |s| s.to_string_lossy().into_owned());
        let mut study = Self::expand(name, kept, study_text, file)?;
        study.base_as_given = base_text;
        Ok(study)
    }

    fn expand(name: String, base_text: String, study_text: String, file: StudyFile) -> Result<Study> {
        Self::expand_checked(name, base_text, study_text, file, true)
    }

    /// [`Study::expand`]; `check` parses every run's configuration (a folder's study was
    /// checked when it was created, and its fabric files may live elsewhere).
    pub(super) fn expand_checked(
        name: String,
        base_text: String,
        study_text: String,
        file: StudyFile,
        check: bool,
    ) -> Result<Study> {
        if file.study.threads == 0 {
            bail!("study.threads must be at least 1");
        }
        if file.study.jobs == Some(0) {
            bail!("study.jobs must be at least 1");
        }
        if file.study.find_saturation && file.study.stop_at_saturation {
            bail!("study.find_saturation and study.stop_at_saturation: give one (find_saturation also stops, then bisects)");
        }
        if let Some(t) = file.study.saturation_tolerance {
            if !file.study.find_saturation {
                bail!("study.saturation_tolerance: only with study.find_saturation = true");
            }
            crate::search::check_tolerance("study.saturation_tolerance", t)?;
        }
        let (keys, axes) = grid_axes(&file.grid, &study_text)?;
        let runs = grid_runs(&axes);
        if let Some(key) = file.set.keys().find(|k| *k == "traffic.load" || *k == "traffic.loads") {
            bail!("set.\"{key}\": every run sweeps study.loads; give the loads there");
        }
        let set: Vec<(String, Value)> = file.set.into_iter().collect();
        let loads = Self::check_runs(&base_text, &set, &runs, &file.study.loads, check)?;
        let slurm = file.slurm.unwrap_or_default();
        if slurm.ranks == 0 {
            bail!("slurm.ranks must be at least 1");
        }
        let base_as_given = base_text.clone();
        Ok(Study {
            name,
            base_text,
            base_as_given,
            study_text,
            section: file.study,
            slurm,
            set,
            keys,
            runs,
            loads,
        })
    }

    /// Parses the runs' configurations, naming the run whose configuration is refused, and
    /// returns the loads every run sweeps: `loads` (study.loads), else the `traffic.loads`
    /// of the first run parsed that gives some. Unless `check`, only the first run is
    /// parsed, and only when `loads` is empty.
    fn check_runs(
        base_text: &str,
        set: &[(String, Value)],
        runs: &[Run],
        loads: &[f64],
        check: bool,
    ) -> Result<Vec<f64>> {
        let mut loads = loads.to_vec();
        // Unchecked (a folder), a run is parsed only for loads the folder does not list:
        // parsing reads the files `[set]` and `[grid]` name, which may live elsewhere.
        let parsed = if check { usize::MAX } else { usize::from(loads.is_empty()) };
        for run in runs.iter().take(parsed) {
            let cfg = crate::load::parse_config(base_text, &Self::overrides_of(set, run))
                .map_err(|e| anyhow::anyhow!("run {}: {e:#}", run.name))?;
            if loads.is_empty() {
                loads = cfg.traffic.loads.clone();
            }
        }
        if loads.is_empty() {
            bail!("study.loads: no loads (give study.loads or traffic.loads in the base configuration)");
        }
        if let Some(bad) = loads.iter().find(|l| !(0.0..=1.0).contains(*l)) {
            bail!("study.loads: {bad} is outside [0, 1] phits/cycle/endpoint");
        }
        Ok(loads)
    }

    pub(super) fn overrides_of(set: &[(String, Value)], run: &Run) -> Vec<String> {
        set.iter().chain(&run.overrides).map(|(k, v)| set_arg(k, v)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = include_str!("../../../configs/quick.toml");

    fn study(text: &str) -> Result<Study> {
        let file: StudyFile = toml::from_str(text)?;
        Study::expand("t".into(), BASE.into(), text.into(), file)
    }

    #[test]
    fn the_grid_expands_to_every_combination_first_key_slowest() {
        let s = study(
            r#"
            [study]
            base = "x.toml"
            loads = [0.1]
            [grid]
            "routing.algorithm" = ["minimal", "dor"]
            "simulation.seed" = [1, 2, 3]
            "#,
        )
        .unwrap();
        let names: Vec<&str> = s.runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["000-minimal-1", "001-minimal-2", "002-minimal-3", "003-dor-1", "004-dor-2", "005-dor-3"]
        );
        assert_eq!(s.runs[4].overrides[1], ("simulation.seed".to_string(), Value::Integer(2)));
    }

    /// The first key written varies slowest whatever the keys' names, and text elsewhere
    /// (a comment naming a key) does not count.
    #[test]
    fn the_grid_keys_keep_the_order_they_are_written_in() {
        let s = study(
            r#"
            [study]
            base = "x.toml"
            loads = [0.1]
            [grid]
            # "routing.algorithm" varies fastest
            "simulation.seed"=[1, 2]
            "routing.algorithm" = ["minimal", "dor"]
            "#,
        )
        .unwrap();
        let names: Vec<&str> = s.runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["000-1-minimal", "001-1-dor", "002-2-minimal", "003-2-dor"]);
    }

    #[test]
    fn bad_studies_are_refused_naming_the_key_or_run() {
        let err = |text: &str| study(text).err().map(|e| format!("{e:#}")).unwrap_or_default();
        assert!(err("[study]\nbase = \"x\"\nloads = [0.1]\n[grid]\n\"routing.algorithm\" = \"dor\"\n")
            .contains("grid.\"routing.algorithm\": must be a list"));
        assert!(err("[study]\nbase = \"x\"\nloads = [0.1]\n[grid]\n\"routing.algorithm\" = [\"nope\"]\n")
            .contains("run 000-nope"));
        assert!(err("[study]\nbase = \"x\"\nloads = [1.5]\n").contains("study.loads: 1.5"));
        assert!(err("[study]\nbase = \"x\"\nthreds = 2\n").contains("threds"));
    }

    #[test]
    fn the_first_grid_key_written_varies_slowest_whatever_its_name() {
        let s = study(
            "[study]\nbase = \"x.toml\"\nloads = [0.1]\n[grid]\n\"traffic.pattern\" = [\"uniform\", \"tornado\"]\n\
             \"routing.algorithm\" = [\"minimal\", \"dor\"]\n",
        )
        .unwrap();
        assert_eq!(s.keys, ["traffic.pattern", "routing.algorithm"]);
        assert_eq!(s.runs[1].name, "001-uniform-dor");
        let loads = study("[study]\nbase = \"x\"\n[grid]\n\"traffic.loads\" = [[0.1], [0.2]]\n");
        assert!(format!("{:#}", loads.err().unwrap()).contains("study.loads"));
    }

    #[test]
    fn a_paired_axis_sets_several_keys_together() {
        let s = study(
            r#"
            [study]
            base = "x.toml"
            loads = [0.1]
            [grid]
            cc = [{ "congestion.control" = "none" }, { congestion = { control = "infiniband", infiniband = { threshold = 16 } } }]
            "simulation.seed" = [1, 2]
            "#,
        )
        .unwrap();
        let names: Vec<&str> = s.runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["000-none-1", "001-none-2", "002-infiniband-16-1", "003-infiniband-16-2"]);
        assert_eq!(s.keys, ["congestion.control", "congestion.infiniband.threshold", "simulation.seed"]);
        let set = |k: &str, v: Value| (k.to_string(), v);
        assert_eq!(
            s.runs[3].overrides,
            [
                set("congestion.control", Value::String("infiniband".into())),
                set("congestion.infiniband.threshold", Value::Integer(16)),
                set("simulation.seed", Value::Integer(2)),
            ]
        );
        let err = |text: &str| study(text).err().map(|e| format!("{e:#}")).unwrap_or_default();
        let head = "[study]\nbase = \"x\"\nloads = [0.1]\n[grid]\n";
        assert!(
            err(&format!("{head}cc = [\"none\"]\n")).contains("grid.cc: a key without a dot pairs settings")
        );
        assert!(err(&format!("{head}cc = [{{}}]\n")).contains("grid.cc: an empty table sets nothing"));
        assert!(err(&format!("{head}cc = [{{ \"traffic.load\" = 0.1 }}]\n"))
            .contains("every run sweeps study.loads"));
        assert!(err(&format!("{head}cc = [{{ control = 1 }}]\n")).contains("keys are section.key"));
    }

    #[test]
    fn slugs_are_safe_file_names() {
        assert_eq!(slug(&Value::String("a b/c".into())), "a_b_c");
        assert_eq!(slug(&Value::Float(0.5)), "0.5");
        assert_eq!(slug(&Value::Array(vec![Value::Integer(16), Value::Integer(8)])), "16x8");
    }
}
