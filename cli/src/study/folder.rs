//! The study folder as a whole: `study.toml`, `base.toml` and `manifest.toml`, written when
//! the folder is created and checked when a study comes back to it, and a study read back
//! from them (`--status`, `--task`).

use super::{Study, StudyFile};
use anyhow::{bail, Context, Result};
use std::path::Path;
use toml::Value;

impl Study {
    /// The study's folder: creates it (with the study, base and manifest files) or checks
    /// that an existing one holds this same study.
    pub fn prepare(&self, dir: &Path) -> Result<()> {
        let study_file = dir.join("study.toml");
        if study_file.exists() {
            let there = std::fs::read_to_string(&study_file)
                .with_context(|| format!("cannot read {}", study_file.display()))?;
            let base = std::fs::read_to_string(dir.join("base.toml")).unwrap_or_default();
            // An older xnet kept the base as given, files out: its runs go on with it.
            if there == self.study_text && base == self.base_as_given && base != self.base_text {
                std::fs::create_dir_all(dir.join("runs"))?;
                return Ok(());
            }
            if there != self.study_text || base != self.base_text {
                bail!(
                    "{} holds another study (its study.toml or base.toml differ from these, or \
                     a file the base names, such as its fabric, has changed since); give \
                     another --dir, or remove the folder to start again",
                    dir.display()
                );
            }
        }
        std::fs::create_dir_all(dir.join("runs"))
            .with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(&study_file, &self.study_text)?;
        std::fs::write(dir.join("base.toml"), &self.base_text)?;
        std::fs::write(dir.join("manifest.toml"), self.manifest())
            .with_context(|| format!("cannot write {}", dir.join("manifest.toml").display()))?;
        Ok(())
    }

    /// Why the folder's `base.toml`, which every run reads when it starts, no longer holds
    /// this study's base (it was edited while the study ran); `None` while it does. Runs
    /// started after such an edit would mix configurations in one study, as a changed
    /// fabric would.
    pub(super) fn base_changed(&self, dir: &Path) -> Option<String> {
        let path = dir.join("base.toml");
        let now = std::fs::read_to_string(&path).unwrap_or_default();
        if now == self.base_text || now == self.base_as_given {
            return None;
        }
        Some(format!(
            "{} changed while the study ran: runs started after the change would use another \
             configuration than the runs done, so no more runs were started (those running \
             finished); put it back as it was, or start the changed study in another --dir",
            path.display()
        ))
    }

    /// `manifest.toml`: what the Python package needs to read the study.
    fn manifest(&self) -> String {
        let mut t = toml::Table::new();
        t.insert("study".into(), Value::String(self.name.clone()));
        t.insert("keys".into(), Value::Array(self.keys.iter().cloned().map(Value::String).collect()));
        t.insert("loads".into(), Value::Array(self.loads.iter().map(|&l| Value::Float(l)).collect()));
        let set: toml::Table = self.set.iter().cloned().collect();
        t.insert("set".into(), Value::Table(set));
        let runs = self
            .runs
            .iter()
            .map(|r| {
                let mut row = toml::Table::new();
                row.insert("name".into(), Value::String(r.name.clone()));
                row.insert("file".into(), Value::String(format!("runs/{}.h5", r.name)));
                row.insert("overrides".into(), Value::Table(r.overrides.iter().cloned().collect()));
                Value::Table(row)
            })
            .collect();
        t.insert("runs".into(), Value::Array(runs));
        format!(
            "# Written by `xnet study`; read by the Python package (python/xnet_study).\n{}",
            toml::to_string(&t).expect("a manifest serialises")
        )
    }

    /// A study from its folder's copies (`study.toml` names its base relative to where it
    /// was; the folder's `base.toml` stands in for it).
    pub(super) fn from_folder(dir: &Path) -> Result<Study> {
        let study_text = std::fs::read_to_string(dir.join("study.toml"))?;
        let base_text = std::fs::read_to_string(dir.join("base.toml"))?;
        let mut file: StudyFile = toml::from_str(&study_text)?;
        if file.study.loads.is_empty() {
            file.study.loads = read_manifest_loads(dir).unwrap_or_default();
        }
        let name = read_manifest_name(dir).unwrap_or_else(|| "study".into());
        Self::expand_checked(name, base_text, study_text, file, false)
    }
}

/// The loads every run of the folder's study sweeps, as its manifest lists them.
fn read_manifest_loads(dir: &Path) -> Option<Vec<f64>> {
    let text = std::fs::read_to_string(dir.join("manifest.toml")).ok()?;
    let t: toml::Table = toml::from_str(&text).ok()?;
    t.get("loads")?.as_array()?.iter().map(|v| v.as_float()).collect()
}

fn read_manifest_name(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("manifest.toml")).ok()?;
    let t: toml::Table = toml::from_str(&text).ok()?;
    t.get("study")?.as_str().map(str::to_string)
}
