//! The registries: the docs are generated from them, every documented setting is a key of
//! the type that reads it (and no key is undocumented), old spellings are refused with the
//! new one, and every entry is reachable from a config.

use xnet_models::config::{Config, ConfigError};
use xnet_models::registry::{all_docs_blocks, docs_block, families, Choice, Setting};
use xnet_models::routing::{Selection, VcPolicy, ROUTINGS, SELECTIONS, VC_POLICIES};
use xnet_models::topology::{TopologySpec, TOPOLOGIES};
use xnet_models::traffic::PATTERNS;

const BASE: &str = r#"
[simulation]
cycles = 100
[topology]
kind = "hyperx"
sides = [4, 4]
endpoints_per_switch = 1
[routing]
algorithm = "minimal"
[traffic]
pattern = "uniform"
load = 0.1
"#;

fn parse(overrides: &[&str]) -> Result<Config, ConfigError> {
    Config::parse(BASE, &overrides.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

#[test]
fn the_configuration_reference_holds_the_generated_tables() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/configuration.md");
    let docs = std::fs::read_to_string(path).expect("docs/configuration.md");
    for family in families() {
        let block = docs_block(&family);
        assert!(
            docs.contains(&block),
            "docs/configuration.md is out of date for {}: run scripts/dev/update-config-docs.py, which \
             replaces its generated blocks with the output of `xnet list --markdown`:\n{}",
            family.title,
            all_docs_blocks()
        );
    }
}

/// The keys a `deny_unknown_fields` type accepts, read from serde's error for an unknown
/// key (`expected one of `a`, `b``, `expected `a``, or `there are no fields`).
fn accepted_keys(error: &ConfigError) -> Vec<String> {
    let m = &error.message;
    assert!(m.contains("unknown field `zz_probe`"), "{error}");
    if m.contains("there are no fields") {
        return Vec::new();
    }
    let list = m.split("expected").nth(1).expect("serde lists the fields");
    list.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

fn documented(settings: &[Setting]) -> Vec<String> {
    settings.iter().map(|s| s.key.to_string()).collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn every_routing_documents_exactly_the_settings_its_type_reads() {
    for r in ROUTINGS {
        let probe = format!("routing.{}.zz_probe=1", r.name);
        let e = parse(&[&probe]).expect_err("an unknown setting is refused");
        assert_eq!(e.key, format!("routing.{}.zz_probe", r.name), "{e}");
        assert_eq!(sorted(accepted_keys(&e)), sorted(documented(r.settings.keys)), "routing {}", r.name);
    }
}

#[test]
fn every_topology_documents_exactly_the_keys_its_type_reads() {
    for t in TOPOLOGIES {
        let table: toml::Table = toml::from_str(&format!("kind = \"{}\"\nzz_probe = 1", t.name)).unwrap();
        let e = TopologySpec::parse(&table, 1).err().expect("an unknown key is refused");
        let mut keys = accepted_keys(&e);
        if t.name == "mesh" {
            // A mesh is read as a torus whose `wrap` it sets itself (and refuses from users).
            keys.retain(|k| k != "wrap");
        }
        assert_eq!(sorted(keys), sorted(documented(t.settings)), "topology {}", t.name);
    }
}

#[test]
fn every_pattern_documents_exactly_the_keys_its_type_reads() {
    for p in PATTERNS {
        // The pattern's own parser: a pattern without settings says so in serde's words.
        let table: toml::Table = toml::from_str("zz_probe = 1").unwrap();
        let e = (p.parse)(&table).expect_err("an unknown key is refused");
        assert_eq!(e.key, "traffic.zz_probe", "{e}");
        assert_eq!(sorted(accepted_keys(&e)), sorted(documented(p.settings)), "pattern {}", p.name);
        // In a config, a pattern without settings names the keys of [traffic].
        let e = parse(&[&format!("traffic.pattern={}", p.name), "traffic.zz_probe=1"]).unwrap_err();
        assert_eq!(e.key, "traffic.zz_probe", "{e}");
        if p.settings.is_empty() {
            let expected = format!(
                "unknown key for pattern `{}`; allowed: pattern, load, loads, phits_per_endpoint, change_at, change_to, packet_sizes",
                p.name
            );
            assert_eq!(e.message, expected);
        } else {
            assert_eq!(sorted(accepted_keys(&e)), sorted(documented(p.settings)), "pattern {}", p.name);
        }
    }
}

#[test]
fn every_entry_is_reachable_by_name_and_unknown_names_list_the_registry() {
    for p in PATTERNS {
        let extra = if p.name == "hot_spot" { "traffic.fraction=0.5" } else { "traffic.load=0.1" };
        let cfg = parse(&[&format!("traffic.pattern={}", p.name), extra]).unwrap();
        assert_eq!(cfg.traffic.pattern.entry().name, p.name);
    }
    for r in ROUTINGS {
        assert_eq!(parse(&[&format!("routing.algorithm={}", r.name)]).unwrap().routing_entry().name, r.name);
    }
    for (key, names) in [
        ("routing.algorithm", ROUTINGS.iter().map(|r| r.name).collect::<Vec<_>>()),
        ("traffic.pattern", PATTERNS.iter().map(|p| p.name).collect()),
        ("routing.vc_policy", VC_POLICIES.iter().map(|c| c.name).collect()),
        ("routing.selection", SELECTIONS.iter().map(|c| c.name).collect()),
        ("topology.kind", TOPOLOGIES.iter().map(|t| t.name).collect()),
    ] {
        let e = match parse(&[&format!("{key}=nonesuch")]) {
            Err(e) => e,
            // The topology is parsed when it is sized or built.
            Ok(cfg) => cfg.network_size().unwrap_err(),
        };
        assert_eq!(e.key, key, "{e}");
        assert!(e.message.contains(&format!("known: {}", names.join(", "))), "{e}");
    }
}

#[test]
fn a_name_or_key_one_slip_away_gets_a_suggestion_and_a_different_one_none() {
    let message = |set: &str| match parse(&[set]) {
        Err(e) => e.to_string(),
        Ok(cfg) => cfg.network_size().unwrap_err().to_string(),
    };
    let families = [
        ("routing.algorithm", ROUTINGS.iter().map(|r| r.name).collect::<Vec<_>>()),
        ("traffic.pattern", PATTERNS.iter().map(|p| p.name).collect()),
        ("routing.vc_policy", VC_POLICIES.iter().map(|c| c.name).collect()),
        ("routing.selection", SELECTIONS.iter().map(|c| c.name).collect()),
        ("topology.kind", TOPOLOGIES.iter().map(|t| t.name).collect()),
    ];
    for (key, names) in families {
        for name in names.iter().filter(|n| n.len() >= 4) {
            // A letter typed twice, and the first two letters swapped, in capitals.
            let doubled = format!("{name}{}", name.chars().last().unwrap());
            let mut swapped: Vec<char> = name.to_uppercase().chars().collect();
            swapped.swap(0, 1);
            for typo in [doubled, swapped.into_iter().collect()] {
                let m = message(&format!("{key}={typo}"));
                assert!(m.contains(&format!("unknown `{typo}`; did you mean `{name}`? known: ")), "{m}");
            }
        }
        let m = message(&format!("{key}=nonesuch"));
        assert!(!m.contains("did you mean"), "{m}");
    }
    let m = message("router.vc=2");
    assert!(m.contains("unknown field `vc`") && m.ends_with("did you mean `vcs`?"), "{m}");
    let m = message("routing.selection=frist");
    assert!(m.contains("did you mean `first`?"), "{m}");
}

#[test]
fn choices_round_trip_through_their_names() {
    for c in VC_POLICIES {
        assert_eq!(Choice::parse(VC_POLICIES, c.name), Ok(c.value));
        assert_eq!(c.value.name(), c.name);
        let cfg = parse(&[&format!("routing.vc_policy={}", c.name)]).unwrap();
        assert_eq!(cfg.routing.vc_policy, c.value);
    }
    for c in SELECTIONS {
        assert_eq!(c.value.name(), c.name);
        assert_eq!(parse(&[&format!("routing.selection={}", c.name)]).unwrap().routing.selection, c.value);
    }
    assert_eq!(VcPolicy::default().name(), "routing");
    assert_eq!(Selection::default().name(), "adaptive");
}

#[test]
fn old_flat_routing_keys_give_the_new_spelling() {
    for (old, new) in [
        ("ugal_threshold=10", "[routing.dragonfly_ugal]"),
        ("allpath_k=2", "[routing.allpath]"),
        ("root=3", "[routing.up_down]"),
        ("root=3", "routing.escape_root"),
        ("nue_order=\"id\"", "[routing.nue]"),
    ] {
        let e = parse(&[&format!("routing.{old}")]).unwrap_err();
        assert_eq!(e.key, format!("routing.{}", old.split('=').next().unwrap()), "{e}");
        assert!(e.message.contains(new), "{e}");
    }
}

#[test]
fn settings_are_checked_for_every_routing_table_and_used_for_the_chosen_one() {
    // A table of another routing is checked...
    let e = parse(&["routing.nue.order=\"sideways\""]).unwrap_err();
    assert_eq!(e.key, "routing.nue.order", "{e}");
    // ...but only the chosen routing's settings are used.
    let cfg = parse(&["routing.nue.order=\"farthest_first\"", "routing.up_down.root=5"]).unwrap();
    assert_eq!(cfg.routing_entry().name, "minimal");
    // A routing's settings table must be a table.
    let e = parse(&["routing.nue=3"]).unwrap_err();
    assert_eq!(e.key, "routing.nue", "{e}");
    // Unknown keys of [routing] name what is allowed.
    let e = parse(&["routing.bogus=1"]).unwrap_err();
    assert!(e.message.contains("escape_root") && e.message.contains("[routing.NAME]"), "{e}");
    // A setting out of range is refused when the routing is built, naming the key.
    let cfg = parse(&["routing.algorithm=allpath", "routing.allpath.k=65"]).unwrap();
    let e = xnet_models::sim::Simulation::build(cfg).err().expect("k > 64 is refused");
    assert_eq!(e.key, "routing.allpath.k", "{e}");
    let cfg = parse(&["routing.algorithm=up_down", "routing.up_down.root=16"]).unwrap();
    let e = xnet_models::sim::Simulation::build(cfg).err().expect("switch 16 does not exist");
    assert_eq!(e.key, "routing.up_down.root", "{e}");
}

#[test]
fn a_family_is_listed_by_its_title_its_last_word_or_its_key() {
    use xnet_models::registry::{families, select};
    let titles = |what: &str| -> Vec<&str> {
        select(families(), what).unwrap_or_else(|e| panic!("{what}: {e}")).iter().map(|f| f.title).collect()
    };
    for what in ["traffic patterns", "traffic_pattern", "patterns", "pattern", "traffic.pattern"] {
        assert_eq!(titles(what), ["traffic patterns"], "{what}");
    }
    assert_eq!(titles("vcs"), ["injection VCs", "ejection VCs"]);
    assert_eq!(titles("topologies"), ["topologies"]);
    // An unknown name's suggestion is one that works (it suggested `pattern` before
    // `pattern` was listed).
    let e = select(families(), "patern").unwrap_err();
    let suggested = e.split('`').nth(3).expect("a suggestion");
    assert!(select(families(), suggested).is_ok(), "{e}");
}
