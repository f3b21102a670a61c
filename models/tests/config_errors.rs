//! Bad configurations give errors that name the offending key and say what is allowed.

use xnet_models::config::Config;
use xnet_models::sim::Simulation;

const BASE: &str = r#"
[simulation]
cycles = 1000
[topology]
kind = "hyperx"
sides = [4, 4]
endpoints_per_switch = 2
[router]
vcs = 2
[routing]
algorithm = "dor"
[traffic]
pattern = "uniform"
load = 0.3
"#;

/// The error message for BASE with `overrides`, from parsing or from building.
fn error(overrides: &[&str]) -> String {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match Config::parse(BASE, &o) {
        Err(e) => e.to_string(),
        Ok(cfg) => match Simulation::build(cfg) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{overrides:?} was accepted"),
        },
    }
}

fn assert_mentions(message: &str, parts: &[&str]) {
    for p in parts {
        assert!(message.contains(p), "`{message}` does not mention `{p}`");
    }
}

#[test]
fn the_base_config_is_valid() {
    Simulation::build(Config::parse(BASE, &[]).unwrap()).unwrap();
}

#[test]
fn unknown_keys_are_named() {
    assert_mentions(&error(&["router.vc=2"]), &["router", "unknown field `vc`", "vcs"]);
    assert_mentions(&error(&["simulation.cycels=5"]), &["simulation", "cycels"]);
    assert_mentions(&error(&["topology.sidez=[2]"]), &["topology", "sidez"]);
    assert_mentions(&error(&["traffic.fractoin=0.1"]), &["traffic", "fractoin"]);
    assert_mentions(&error(&["extra.key=1"]), &["extra", "unknown section"]);
}

#[test]
fn wrong_types_are_named() {
    assert_mentions(&error(&["router.vcs=\"two\""]), &["router", "vcs"]);
    assert_mentions(&error(&["traffic.load=\"high\""]), &["traffic.load", "number"]);
    assert_mentions(&error(&["topology.sides=4"]), &["topology", "sides"]);
}

#[test]
fn pattern_settings_are_named_with_their_key() {
    let hot = "traffic.pattern=\"hot_spot\"";
    for (overrides, expected) in [
        (vec!["traffic.pattern=3"], "traffic.pattern: must be a string, got integer"),
        (vec![hot, "traffic.fraction=\"x\""], "traffic.fraction: invalid type: string \"x\", expected f64"),
        (vec![hot, "traffic.fraction=0.5", "traffic.endpoint=-1"], "traffic.endpoint: must be a non-negative integer, got -1"),
        (vec![hot, "traffic.fraction=0.5", "traffic.zz=1"], "traffic.zz: unknown field `zz`, expected `fraction` or `endpoint`"),
        (vec![hot, "traffic.fraction=1.5"], "traffic.fraction: must be in [0, 1], got 1.5"),
        (vec![hot], "traffic: missing field `fraction`"),
        (vec!["traffic.pattern=\"tornado\"", "traffic.fraction=0.5"], "traffic.fraction: unknown key for pattern `tornado`; allowed: pattern, load, loads, phits_per_endpoint, change_at, change_to, packet_sizes"),
        (
            vec!["traffic.pattern=\"group_shift\"", "traffic.block_switches=3"],
            "traffic.block_switches: 3 must divide the 16 switches into at least 2 blocks",
        ),
    ] {
        assert_eq!(error(&overrides), expected, "{overrides:?}");
    }
}

#[test]
fn out_of_range_values_are_named_with_the_allowed_range() {
    assert_mentions(&error(&["router.vcs=0"]), &["router.vcs", "1..=64", "got 0"]);
    assert_mentions(&error(&["router.input_buffer=8"]), &["router.input_buffer", "packet"]);
    assert_mentions(&error(&["traffic.load=1.5"]), &["traffic.load", "[0, 1]"]);
    assert_mentions(&error(&["simulation.warmup=1000"]), &["simulation.warmup", "less than"]);
    assert_mentions(&error(&["topology.sides=[4, 1]"]), &["topology.sides[1]"]);
    assert_mentions(&error(&["traffic.loads=[0.1, 2.0]"]), &["traffic.loads[1]"]);
}

#[test]
fn unknown_names_list_the_known_ones() {
    assert_mentions(&error(&["topology.kind=\"ring\""]), &["topology.kind", "ring", "hyperx", "dragonfly"]);
    assert_mentions(
        &error(&["routing.algorithm=\"magic\""]),
        &["routing.algorithm", "magic", "dor", "minimal"],
    );
    assert_mentions(&error(&["traffic.pattern=\"chaos\""]), &["traffic.pattern", "chaos", "uniform"]);
    assert_mentions(&error(&["routing.selection=\"best\""]), &["routing", "best", "adaptive"]);
    assert_mentions(
        &error(&["routing.selection=\"ecmp\"", "routing.ecmp_flows=0"]),
        &["routing.ecmp_flows", "1..=1024", "got 0"],
    );
    assert_mentions(&error(&["routing.ecmp_flows=4"]), &["routing.ecmp_flows", "selection is \"adaptive\""]);
}

#[test]
fn missing_keys_are_named() {
    let e = Config::parse("[simulation]\ncycles = 10\n", &[]).unwrap_err().to_string();
    assert_mentions(&e, &["routing"]);
    let no_load = BASE.replace("load = 0.3", "");
    assert_mentions(&Config::parse(&no_load, &[]).unwrap_err().to_string(), &["traffic.load", "missing"]);
}

#[test]
fn routing_and_topology_must_fit() {
    assert_mentions(&error(&["routing.algorithm=\"dragonfly_min\""]), &["routing.algorithm", "dragonfly"]);
    let torus = ["topology.kind=\"torus\"", "router.vcs=1"];
    assert_mentions(&error(&torus), &["router.vcs", "needs 2 VCs, 1 available"]);
    assert_mentions(&error(&["routing.algorithm=\"minimal\"", "router.vcs=1"]), &["router.vcs", "ladder"]);
    assert_mentions(
        &error(&["traffic.pattern=\"bit_reversal\"", "topology.sides=[3, 3]"]),
        &["traffic.pattern", "power-of-two"],
    );
}

/// A routing that cannot run on the network names `routing.algorithm` and says what it
/// runs on, even where the limit is a topology parameter (Angara's routing graph handles
/// at most 6 dimensions; a 7-D torus is a valid topology).
#[test]
fn a_routing_the_topology_does_not_support_names_routing_algorithm() {
    let e = error(&[
        "topology.kind=\"torus\"",
        "topology.sides=[2, 2, 2, 2, 2, 2, 2]",
        "routing.algorithm=\"angara_bfs\"",
    ]);
    assert!(e.starts_with("routing.algorithm: "), "{e}");
    assert_mentions(&e, &["tori and meshes of at most 6 dimensions", "this one has 7"]);
    let e = error(&["routing.algorithm=\"angara_sssp\""]);
    assert!(e.starts_with("routing.algorithm: "), "{e}");
    assert_mentions(&e, &["angara_sssp", "needs a torus or mesh"]);
}

/// A bad value of a routing's own setting names `routing.NAME.SETTING`, whether the
/// settings' type refuses it or the routing's build does.
#[test]
fn bad_routing_settings_name_routing_name_setting() {
    for (overrides, key, says) in [
        (&["routing.algorithm=\"allpath\"", "routing.allpath.k=65"][..], "routing.allpath.k", "at most 64"),
        (
            &["routing.algorithm=\"up_down\"", "routing.up_down.root=16"],
            "routing.up_down.root",
            "16 switches",
        ),
        (
            &["routing.algorithm=\"nue\"", "routing.nue.order=\"random\""],
            "routing.nue.order",
            "farthest_first",
        ),
        (
            &["routing.algorithm=\"omniwar\"", "routing.omniwar.deroutes=33"],
            "routing.omniwar.deroutes",
            "at most 32",
        ),
        (&["routing.algorithm=\"lash\"", "routing.lash.paths=\"all\""], "routing.lash.paths", "balanced"),
    ] {
        let e = error(overrides);
        assert!(e.starts_with(&format!("{key}: ")), "{overrides:?}: {e}");
        assert_mentions(&e, &[says]);
    }
}

#[test]
fn malformed_overrides_and_syntax_errors_are_reported() {
    assert_mentions(&error(&["nonsense"]), &["nonsense", "section.key=value"]);
    assert_mentions(&error(&["load=0.3"]), &["load", "section.key"]);
    let e = Config::parse("[simulation\ncycles = 1", &[]).unwrap_err().to_string();
    assert_mentions(&e, &["config", "line 1"]);
}

#[test]
fn a_change_of_pattern_names_what_is_missing_or_wrong() {
    for (overrides, expected) in [
        (
            vec!["traffic.change_at=500"],
            "traffic.change_to: missing: `change_at` needs the pattern to change to",
        ),
        (
            vec!["traffic.change_to=\"tornado\""],
            "traffic.change_at: missing: `change_to` needs the cycle to change at",
        ),
        (
            vec!["traffic.change_at=0", "traffic.change_to=\"tornado\""],
            "traffic.change_at: must be a cycle >= 1, got 0",
        ),
        (
            vec!["traffic.change_at=500", "traffic.change_to=\"hot_spot\""],
            "traffic.change_to: missing field `fraction` (the pattern changed to takes its default settings)",
        ),
    ] {
        assert_eq!(error(&overrides), expected, "{overrides:?}");
    }
    let unknown = error(&["traffic.change_at=500", "traffic.change_to=\"nope\""]);
    assert!(unknown.starts_with("traffic.change_to: unknown"), "{unknown}");
}

#[test]
fn jobs_are_addressed_by_index_or_name_in_overrides() {
    let text = format!(
        "{BASE}[workload]\n[[workload.jobs]]\nname = \"halo\"\nkind = \"stencil2d\"\ngrid = [4, 4]\nhalo_bytes = 64\n\
         [[workload.jobs]]\nkind = \"allreduce\"\nranks = 8\nbytes = 64\n"
    );
    let iterations = |overrides: &[&str]| -> Vec<u32> {
        let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        let cfg = Config::parse(&text, &o).unwrap_or_else(|e| panic!("{overrides:?}: {e}"));
        cfg.workload.unwrap().jobs.iter().map(|j| j.iterations).collect()
    };
    assert_eq!(iterations(&[]), [1, 1]);
    // By index, as errors name keys, or as a dotted part; by name, or by the name a job
    // without one has (KIND-INDEX).
    assert_eq!(iterations(&["workload.jobs[1].iterations=3"]), [1, 3]);
    assert_eq!(iterations(&["workload.jobs.0.iterations=4"]), [4, 1]);
    assert_eq!(
        iterations(&["workload.jobs.halo.iterations=5", "workload.jobs.allreduce-1.iterations=6"]),
        [5, 6]
    );
    let error = |overrides: &[&str]| {
        let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        Config::parse(&text, &o).expect_err("refused").to_string()
    };
    assert_eq!(
        error(&["workload.jobs.fft.iterations=2"]),
        "workload.jobs.fft.iterations: `jobs` has no entry `fft`; its entries, by index (name): 0 (halo), 1 (allreduce-1)"
    );
    assert_mentions(&error(&["workload.jobs[2].iterations=2"]), &["`jobs` has no entry `2`"]);
    assert_mentions(&error(&["workload.jobs=2"]), &["workload.jobs"]);
    assert_mentions(
        &error(&["workload.jobs.halo.grid=[4, 5]", "workload.jobs.halo.ranks=3"]),
        &["workload.jobs[0]", "unknown field `ranks`"],
    );
}

#[test]
fn a_jobs_settings_are_named_down_to_the_field() {
    // A field of a collective, or of a kind's own settings, is named by its path from the
    // job (it was `workload.jobs[0]: invalid type ...`, naming neither).
    let job = |settings: &str| format!("workload.jobs=[{{kind = \"collectives\", ranks = 8, {settings}}}]");
    for (settings, expected) in [
        (
            "operations = [{collective = \"bcast\", bytes = 8}, {collective = \"allreduce\", bytes = \"big\"}]",
            "workload.jobs[0].operations[1].bytes: invalid type: string \"big\", expected u64",
        ),
        ("operations = [{collective = 5, bytes = 8}]", "workload.jobs[0].operations[0].collective: invalid type"),
        ("operations = [{collective = \"bcast\", bytes = 8, rot = 1}]", "workload.jobs[0].operations[0].rot: unknown field `rot`"),
    ] {
        assert_mentions(&error(&[&job(settings)]), &[expected]);
    }
    // A value past its type's bound gets the bound, not a range from 0 where 0 is refused.
    for (set, expected) in [
        (
            "topology.endpoints_per_switch=5000000000",
            "topology.endpoints_per_switch: must be at most 4294967295, got 5000000000",
        ),
        ("topology.endpoints_per_switch=0", "topology.endpoints_per_switch: must be >= 1, got 0"),
    ] {
        assert_mentions(&error(&[set]), &[expected]);
    }
    let stencil = "workload.jobs=[{kind = \"stencil2d\", grid = [2, \"x\"], halo_bytes = 8}]";
    assert_mentions(&error(&[stencil]), &["workload.jobs[0].grid[1]: invalid type: string \"x\""]);
}
