//! A bounded fuzzer of configurations: random mutations of a valid configuration (keys
//! added, removed or retyped, values at and past every range, unknown sections) and random
//! `--set` overrides, some malformed. Parsing and validation must never panic or hang, and
//! every error must name the key it is about.

use proptest::prelude::*;
use xnet_models::config::Config;
use xnet_models::memory;
use xnet_models::routing::ROUTINGS;
use xnet_models::topology::TOPOLOGIES;
use xnet_models::traffic::PATTERNS;

const BASE: &str = include_str!("../../configs/quick.toml");

/// Keys a mutation may touch, per section (known ones, plus one nobody knows).
const KEYS: &[(&str, &[&str])] = &[
    ("simulation", &["cycles", "warmup", "seed", "sample_period", "watchdog", "bogus"]),
    (
        "topology",
        &[
            "kind",
            "sides",
            "endpoints_per_switch",
            "link_latency",
            "terminal_latency",
            "p",
            "a",
            "h",
            "groups",
            "switches",
            "degree",
            "k",
            "n",
            "wrap",
            "failed_links",
            "bogus",
        ],
    ),
    ("router", &["vcs", "packet_size", "input_buffer", "output_buffer", "speedup", "router_delay", "bogus"]),
    (
        "routing",
        &[
            "algorithm",
            "selection",
            "vc_policy",
            "escape_vcs",
            "escape_root",
            "root",
            "nue_order",
            "nue",
            "up_down",
            "bogus",
        ],
    ),
    ("traffic", &["pattern", "load", "loads", "shift", "bogus"]),
    ("nonsense", &["x"]),
];

/// A TOML value of any type, with integers at and past the edges of the types the
/// configuration uses.
fn value() -> impl Strategy<Value = toml::Value> {
    let names: Vec<&'static str> = TOPOLOGIES
        .iter()
        .map(|t| t.name)
        .chain(ROUTINGS.iter().map(|r| r.name))
        .chain(PATTERNS.iter().map(|p| p.name))
        .chain(["", "x y", "é"])
        .collect();
    let edges =
        [0i64, 1, -1, 2, 16, 64, 65, 255, 256, 4096, 65_535, 65_536, 1 << 31, 1 << 32, i64::MAX, i64::MIN];
    let leaf = prop_oneof![
        proptest::sample::select(edges.to_vec()).prop_map(toml::Value::Integer),
        (-1_000_000i64..1_000_000).prop_map(toml::Value::Integer),
        proptest::sample::select(vec![0.0, 0.3, 1.0, 1.5, -0.1, f64::NAN, f64::INFINITY])
            .prop_map(toml::Value::Float),
        proptest::sample::select(names).prop_map(|s| toml::Value::String(s.to_string())),
        any::<bool>().prop_map(toml::Value::Boolean),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(toml::Value::Array),
            proptest::collection::vec(("[a-z]{1,3}", inner), 0..3)
                .prop_map(|kv| toml::Value::Table(kv.into_iter().collect())),
        ]
    })
}

/// One mutation: a section and key, and the new value (`None`: remove the key).
fn mutation() -> impl Strategy<Value = (usize, usize, Option<toml::Value>)> {
    (0..KEYS.len(), 0..16usize, proptest::option::weighted(0.85, value()))
}

/// A `--set` override, well-formed or not.
fn override_text() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..KEYS.len(), 0..16usize, value()).prop_map(|(s, k, v)| {
            let (section, keys) = KEYS[s];
            format!("{section}.{}={v}", keys[k % keys.len()])
        }),
        "[a-z._=\\[\\]{}\"' 0-9-]{0,24}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn any_configuration_parses_or_fails_naming_a_key(
        mutations in proptest::collection::vec(mutation(), 1..5),
        overrides in proptest::collection::vec(override_text(), 0..3),
    ) {
        let mut doc: toml::Table = toml::from_str(BASE).expect("the base config is TOML");
        for (s, k, v) in mutations {
            let (section, keys) = KEYS[s];
            let key = keys[k % keys.len()];
            let table = doc
                .entry(section)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let toml::Value::Table(t) = table {
                match v {
                    Some(v) => { t.insert(key.to_string(), v); }
                    None => { t.remove(key); }
                }
            }
        }
        let text = toml::to_string(&doc).expect("serialisable");
        // A valid config is also sized and estimated (item 5: before anything is built,
        // so any size validation allows must not panic or overflow there).
        match Config::parse(&text, &overrides).and_then(|cfg| memory::estimate(&cfg, 4, 2)) {
            Ok(estimate) => prop_assert!(estimate.per_rank() > 0),
            Err(e) => {
                prop_assert!(!e.key.is_empty(), "an error without a key: {e}");
                prop_assert!(e.to_string().contains(&e.key), "the message does not name {}: {e}", e.key);
                prop_assert!(!e.message.trim().is_empty(), "an empty message for {}", e.key);
            }
        }
    }
}
