//! What can be configured, in one place per family: topologies, routings, VC policies,
//! selections and traffic patterns.
//!
//! Each family keeps its entries next to the code they describe (`topology::TOPOLOGIES`,
//! `router::PRESETS`, `router::INJECTION_VCS`, `router::EJECTION_VCS`, `router::CROSSBARS`, `router::ALLOCATORS`, `router::CREDIT_CHECKS`, `router::ARBITRATIONS`, `routing::ROUTINGS`, `routing::VC_POLICIES`, `routing::SELECTIONS`,
//! `traffic::PATTERNS`, `workload::WORKLOADS`); this module holds what they share: the description of an entry
//! and of its settings, and the views generated from all of them: `xnet list`, the
//! "unknown name" errors, and the tables of docs/configuration.md (a test fails when the
//! file drifts from them).

use crate::config::ConfigError;

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

/// A family of entries as users see it.
#[derive(Clone, Debug)]
pub struct FamilyDoc {
    /// Plural title, e.g. `routings`.
    pub title: &'static str,
    /// The key that names an entry, e.g. `routing.algorithm`.
    pub key: &'static str,
    /// Where an entry's settings go, with `NAME` for its name, e.g. `[routing.NAME]`.
    pub settings_table: &'static str,
    /// The headers of a setting's default and meaning columns in the docs.
    pub setting_columns: (&'static str, &'static str),
    /// The entries, in registry order.
    pub entries: Vec<EntryDoc>,
}

/// Every family, in the order of a config file.
pub fn families() -> Vec<FamilyDoc> {
    vec![
        FamilyDoc {
            title: "topologies",
            key: "topology.kind",
            settings_table: "[topology]",
            setting_columns: ("default", "meaning"),
            entries: crate::topology::TOPOLOGIES.iter().map(|t| t.doc()).collect(),
        },
        FamilyDoc {
            title: "router presets",
            key: "router.preset",
            settings_table: "`preset = \"NAME\"` sets",
            setting_columns: ("value", "source"),
            entries: crate::router::PRESETS.iter().map(|p| p.doc()).collect(),
        },
        FamilyDoc {
            title: "injection VCs",
            key: "router.injection_vc",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: crate::router::INJECTION_VCS.iter().map(|c| c.doc()).collect(),
        },
        FamilyDoc {
            title: "ejection VCs",
            key: "router.ejection_vc",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: crate::router::EJECTION_VCS.iter().map(|c| c.doc()).collect(),
        },
        FamilyDoc {
            title: "crossbars",
            key: "router.crossbar",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: crate::router::CROSSBARS.iter().map(|c| c.doc()).collect(),
        },
        FamilyDoc {
            title: "allocators",
            key: "router.allocator",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: crate::router::ALLOCATORS.iter().map(|c| c.doc()).collect(),
        },
        FamilyDoc {
            title: "credit checks",
            key: "router.credit_check",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: crate::router::CREDIT_CHECKS.iter().map(|c| c.doc()).collect(),
        },
        FamilyDoc {
            title: "arbitrations",
            key: "router.arbitration",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: crate::router::ARBITRATIONS.iter().map(|c| c.doc()).collect(),
        },
        FamilyDoc {
            title: "routings",
            key: "routing.algorithm",
            settings_table: "[routing.NAME]",
            setting_columns: ("default", "meaning"),
            entries: crate::routing::ROUTINGS.iter().map(|r| r.doc()).collect(),
        },
        FamilyDoc {
            title: "VC policies",
            key: "routing.vc_policy",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: crate::routing::VC_POLICIES.iter().map(|c| c.doc()).collect(),
        },
        FamilyDoc {
            title: "selections",
            key: "routing.selection",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: crate::routing::SELECTIONS.iter().map(|c| c.doc()).collect(),
        },
        FamilyDoc {
            title: "traffic patterns",
            key: "traffic.pattern",
            settings_table: "[traffic]",
            setting_columns: ("default", "meaning"),
            entries: crate::traffic::PATTERNS.iter().map(|p| p.doc()).collect(),
        },
        FamilyDoc {
            title: "workloads",
            key: "workload.jobs[].kind",
            settings_table: "[[workload.jobs]]",
            setting_columns: ("default", "meaning"),
            entries: crate::workload::WORKLOADS.iter().map(|w| w.doc()).collect(),
        },
    ]
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
            .ok_or_else(|| format!("unknown `{name}`; known: {}", names(choices.iter().map(|c| c.name))))
    }

    /// The name of `value` in `choices`.
    pub fn name_of(choices: &[Choice<T>], value: T) -> &'static str {
        choices.iter().find(|c| c.value == value).map_or("?", |c| c.name)
    }
}

/// Gives a closed set `$type` listed in `$choices` (a `&[Choice<$type>]`) its `name()`
/// and serde as that name: configs spell every such value the way the registry lists it,
/// and an unknown name is refused with the list of known ones.
macro_rules! named_by_registry {
    ($type:ty, $choices:expr) => {
        impl $type {
            /// The name in configs.
            pub fn name(self) -> &'static str {
                $crate::registry::Choice::name_of($choices, self)
            }
        }
        impl serde::Serialize for $type {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }
        impl<'de> serde::Deserialize<'de> for $type {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = <String as serde::Deserialize>::deserialize(d)?;
                $crate::registry::Choice::parse($choices, &name).map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use named_by_registry;

/// `a, b, c`.
pub fn names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

/// The error for an unknown `given` name at `key`, listing what `known` offers.
pub fn unknown<'a>(key: &str, given: &str, known: impl Iterator<Item = &'a str>) -> ConfigError {
    ConfigError::new(key, format!("unknown `{given}`; known: {}", names(known)))
}

/// `xnet list`: every family with its entries and their settings.
pub fn listing() -> String {
    let mut out = String::new();
    for family in families() {
        out.push_str(&format!("{}: values of {}\n", family.title, family.key));
        for e in &family.entries {
            out.push_str(&format!("  {:<18} {}", e.name, e.doc));
            for (label, text) in &e.details {
                out.push_str(&format!("; {label}: {text}"));
            }
            out.push('\n');
            if !e.settings.is_empty() {
                out.push_str(&format!("  {:<18}   {}\n", "", family.settings_table.replace("NAME", e.name)));
            }
            for s in e.settings {
                out.push_str(&format!("  {:<18}     {} ({}): {}\n", "", s.key, s.default, s.doc));
            }
        }
    }
    out
}

/// The Markdown tables of `family` for docs/configuration.md: one row per entry, then one
/// table of settings per entry that has any.
pub fn markdown(family: &FamilyDoc) -> String {
    let column = family.key.rsplit('.').next().unwrap_or(family.key);
    let labels: Vec<&str> =
        family.entries.first().map_or(Vec::new(), |e| e.details.iter().map(|d| d.0).collect());
    let mut out = format!("| {column} | what it is |");
    for label in &labels {
        out.push_str(&format!(" {label} |"));
    }
    out.push_str(&format!("\n|{}\n", " --- |".repeat(2 + labels.len())));
    for e in &family.entries {
        out.push_str(&format!("| `{}` | {} |", e.name, cell(e.doc)));
        for (_, text) in &e.details {
            out.push_str(&format!(" {} |", cell(text)));
        }
        out.push('\n');
    }
    let (value, meaning) = family.setting_columns;
    for e in family.entries.iter().filter(|e| !e.settings.is_empty()) {
        let table = family.settings_table.replace("NAME", e.name);
        let heading = if table.contains('`') {
            format!("{table}:")
        } else if family.settings_table.contains("NAME") {
            format!("`{table}`:")
        } else {
            format!("`{table}` for `{}`:", e.name)
        };
        out.push_str(&format!("\n{heading}\n\n| key | {value} | {meaning} |\n| --- | --- | --- |\n"));
        for s in e.settings {
            out.push_str(&format!("| `{}` | {} | {} |\n", s.key, cell(s.default), cell(s.doc)));
        }
    }
    out
}

/// Text safe inside a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The generated block of `family` as it appears in docs/configuration.md, between marker
/// comments.
pub fn docs_block(family: &FamilyDoc) -> String {
    let tag = family.title.replace(' ', "-");
    format!("<!-- generated: {tag} (xnet list --markdown) -->\n{}<!-- end: {tag} -->\n", markdown(family))
}

/// Every generated block, for `xnet list --markdown`.
pub fn all_docs_blocks() -> String {
    families().iter().map(docs_block).collect::<Vec<_>>().join("\n")
}
