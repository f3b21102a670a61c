//! What can be configured, in one place per family: topologies, routings, VC policies,
//! selections and traffic patterns.
//!
//! The description of an entry and of its settings is `base::settings` (every family
//! builds on it, so it sits below them all). Each family keeps its entries next to the code they describe (`topology::TOPOLOGIES`,
//! `router::PRESETS`, `router::INJECTION_VCS`, `router::EJECTION_VCS`, `router::CROSSBARS`, `router::ALLOCATORS`, `router::FLOW_CONTROLS`, `router::CREDIT_CHECKS`, `router::SWITCHINGS`, `router::ARBITRATIONS`, `routing::ROUTINGS`, `routing::VC_POLICIES`, `routing::SELECTIONS`,
//! `traffic::PATTERNS`, `workload::WORKLOADS`); this module holds the views generated from all of them: `xnet list`, the
//! "unknown name" errors, and the tables of docs/configuration.md (a test fails when the
//! file drifts from them).

pub use base::settings::{names, unknown, Choice, EntryDoc, Setting};

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
            entries: topology::TOPOLOGIES.iter().map(|t| t.doc()).collect(),
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
            title: "flow controls",
            key: "router.flow_control",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: crate::router::FLOW_CONTROLS.iter().map(|c| c.doc()).collect(),
        },
        FamilyDoc {
            title: "credit checks",
            key: "router.credit_check",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: crate::router::CREDIT_CHECKS.iter().map(|c| c.doc()).collect(),
        },
        FamilyDoc {
            title: "switchings",
            key: "router.switching",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: crate::router::SWITCHINGS.iter().map(|c| c.doc()).collect(),
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
            entries: routing::ROUTINGS.iter().map(|r| r.doc()).collect(),
        },
        FamilyDoc {
            title: "VC policies",
            key: "routing.vc_policy",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: routing::VC_POLICIES.iter().map(|c| c.doc()).collect(),
        },
        FamilyDoc {
            title: "selections",
            key: "routing.selection",
            settings_table: "",
            setting_columns: ("default", "meaning"),
            entries: routing::SELECTIONS.iter().map(|c| c.doc()).collect(),
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

/// `xnet list`: `families` with their entries and settings, each line wrapped to `width`
/// columns (a continuation indented under its text).
pub fn listing(families: &[FamilyDoc], width: usize) -> String {
    let mut out = String::new();
    for family in families {
        out.push_str(&format!("{}: values of {}\n", family.title, family.key));
        for e in &family.entries {
            let mut line = e.doc.to_string();
            for (label, text) in &e.details {
                line.push_str(&format!("; {label}: {text}"));
            }
            wrap_into(&mut out, &format!("  {:<18} ", e.name), &line, width);
            if !e.settings.is_empty() {
                wrap_into(&mut out, &" ".repeat(23), &family.settings_table.replace("NAME", e.name), width);
            }
            for s in e.settings {
                wrap_into(&mut out, &" ".repeat(25), &format!("{} ({}): {}", s.key, s.default, s.doc), width);
            }
        }
    }
    out
}

/// Appends `text` after `lead`, its words wrapped at `width` columns, continuation lines
/// indented two columns past `lead`; a word longer than the room is left whole.
fn wrap_into(out: &mut String, lead: &str, text: &str, width: usize) {
    let indent = " ".repeat(lead.chars().count() + 2);
    let mut line = lead.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        let len = line.chars().count();
        if !empty && len + 1 + word.chars().count() > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.clone();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// The families `xnet list WHAT` names: `what` is a family's title (`routings`, `traffic
/// patterns`), its key (`routing.algorithm`) or the key's last part (`algorithm`), in any
/// case, spaces or `_`, singular or plural. An unknown `what` is refused with the names.
pub fn select(families: Vec<FamilyDoc>, what: &str) -> Result<Vec<FamilyDoc>, String> {
    let plain = |s: &str| s.to_lowercase().replace([' ', '-'], "_");
    let given = plain(what);
    let singular =
        |t: &str| t.strip_suffix("ies").map(|t| format!("{t}y")).or(t.strip_suffix('s').map(str::to_string));
    // A family answers to its title, its title's last word (`patterns` for traffic
    // patterns), either in the singular, and its key or the key's last part.
    let names = |f: &FamilyDoc| {
        let title = plain(f.title);
        let last = title.rsplit('_').next().filter(|l| *l != title).map(str::to_string);
        let key = f.key.trim_end_matches("[].kind");
        [
            Some(title.clone()),
            singular(&title),
            last.as_deref().and_then(singular),
            last,
            Some(f.key.to_string()),
            key.rsplit('.').next().map(str::to_string),
        ]
    };
    let chosen: Vec<FamilyDoc> =
        families.iter().filter(|f| names(f).iter().flatten().any(|n| *n == given)).cloned().collect();
    if chosen.is_empty() {
        let titles: Vec<String> = families.iter().map(|f| plain(f.title)).collect();
        let all: Vec<String> = families.iter().flat_map(|f| names(f).into_iter().flatten()).collect();
        let hint = base::settings::closest(&given, all.iter().map(String::as_str))
            .map_or(String::new(), |c| format!(" did you mean `{c}`?"));
        return Err(format!("unknown `{what}`;{hint} known: {}", titles.join(", ")));
    }
    Ok(chosen)
}

/// The entries of `families` whose name, doc, details or settings contain `text` (case
/// aside); families left without entries are dropped.
pub fn filter(families: Vec<FamilyDoc>, text: &str) -> Vec<FamilyDoc> {
    let text = text.to_lowercase();
    let hit = |s: &str| s.to_lowercase().contains(&text);
    families
        .into_iter()
        .map(|mut f| {
            f.entries.retain(|e| {
                hit(e.name)
                    || hit(e.doc)
                    || e.details.iter().any(|(_, d)| hit(d))
                    || e.settings.iter().any(|s| hit(s.key) || hit(s.doc))
            });
            f
        })
        .filter(|f| !f.entries.is_empty())
        .collect()
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
