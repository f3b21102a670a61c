//! `tables`: forwarding tables in OpenSM's dump format, in and out. xnet's own routes
//! written and read back give the same verifier report and the same simulation; OpenSM's
//! tables (MinHop, Up*/Down*, dumped on ibsim) read with every HCA LID routed on its own,
//! and bad tables are refused naming the switch and the LID.

mod common;
use common::{build, run};
use xnet_models::analysis::{analyse, path_tables, RoutesReport};
use xnet_models::config::Config;
use xnet_models::routing::tables::{write_lfts, write_sls};
use xnet_models::sim::Simulation;
use xnet_models::topology::ib::IbView;

const BASE: &str = r#"
[simulation]
cycles = 1500
warmup = 300
seed = 5
[topology]
TOPOLOGY
endpoints_per_switch = 2
[router]
vcs = 8
packet_size = 4
input_buffer = 16
output_buffer = 8
[routing]
algorithm = "lash"
[traffic]
pattern = "uniform"
load = 0.3
"#;

const TORUS: &str = "kind = \"torus\"\nsides = [4, 4]";
const RRG: &str = "kind = \"random_regular\"\nswitches = 24\ndegree = 4";
const MINHOP: &str = include_str!("data/opensm/torus4x4-t2-minhop.lfts");
const UPDN: &str = include_str!("data/opensm/torus4x4-t2-updn.lfts");

fn text(net: &str) -> String {
    BASE.replace("TOPOLOGY", net)
}

/// `routing.tables.*` overrides carrying `lfts` (and `sls`) inline.
fn tables_overrides(lfts: &str, sls: Option<&str>) -> Vec<String> {
    let mut o = vec![
        "routing.algorithm=\"tables\"".to_string(),
        format!("routing.tables.lfts_contents={}", toml::Value::String(lfts.into())),
    ];
    if let Some(sls) = sls {
        o.push(format!("routing.tables.sls_contents={}", toml::Value::String(sls.into())));
    }
    o
}

fn with_tables(net: &str, lfts: &str, sls: Option<&str>, extra: &[&str]) -> Result<Simulation, String> {
    let mut o = tables_overrides(lfts, sls);
    o.extend(extra.iter().map(|s| s.to_string()));
    let cfg = Config::parse(&text(net), &o).map_err(|e| e.to_string())?;
    Simulation::build(cfg).map_err(|e| e.to_string())
}

/// The report without what names the routing or times it.
fn normalized(mut r: RoutesReport) -> RoutesReport {
    r.routing.clear();
    r.seconds = 0.0;
    r
}

/// `sim`'s routes as (LFT dump, SL dump).
fn dumps(sim: &Simulation) -> (String, String) {
    let t = path_tables(&sim.net, &sim.routes(), sim.config.router.vcs, sim.config.simulation.seed)
        .expect("destination-based routes");
    let view = IbView::of(&sim.net);
    (write_lfts(&sim.net, &view, &t), write_sls(&sim.net, &view, &t))
}

#[test]
fn written_tables_read_back_give_the_same_report_and_run() {
    let cases: [(&str, &str, Vec<&str>); 5] = [
        (TORUS, "lash", vec!["router.vcs=8"]),
        (RRG, "lash", vec![]),
        (TORUS, "dfsssp", vec![]),
        (RRG, "nue", vec![]),
        (TORUS, "nue", vec![]),
    ];
    for (net, algo, extra) in cases {
        let mut o = vec![format!("routing.algorithm=\"{algo}\"")];
        o.extend(extra.iter().map(|s| s.to_string()));
        let o: Vec<&str> = o.iter().map(String::as_str).collect();
        let original = build(&text(net), &o);
        let (lfts, sls) = dumps(&original);
        let read = with_tables(net, &lfts, Some(&sls), &o[1..]).unwrap_or_else(|e| panic!("{algo}: {e}"));
        let (a, b) = (analyse(&original), analyse(&read));
        assert!(a.acyclic && a.unreachable_pairs == 0, "{algo} on {}", original.net.name);
        assert_eq!(
            normalized(a),
            normalized(b),
            "{algo} on {}: report of the tables read back",
            original.net.name
        );
        // Written again, the tables are the same text.
        assert_eq!(dumps(&read), (lfts, sls), "{algo}: second round trip");
        // The same routes on the same VCs: the same packets on the same links.
        let (x, y) = (run(&original, 2), run(&read, 2));
        assert!(x.summary.delivered_total > 0);
        assert_eq!(x.summary, y.summary, "{algo}");
        assert_eq!(x.links, y.links, "{algo}");
    }
}

#[test]
fn opensm_minhop_tables_route_each_lid_and_deadlock_on_a_torus() {
    let sim = with_tables(TORUS, MINHOP, None, &["router.vcs=1"]).expect("OpenSM's MinHop tables");
    // MinHop balances the LIDs of a switch over its ports: the two HCAs of a switch often
    // leave by different ports, so every LID keeps its own column.
    let summary = sim.routing().build_summary().unwrap();
    assert!(summary.starts_with("32 destination columns for 32 HCAs"), "{summary}");
    assert_eq!(sim.routing().vcs_required(), 1);
    let r = analyse(&sim);
    assert_eq!(r.unreachable_pairs, 0);
    // Minimal: 2 hops on average between the 16 switches of a 4x4 torus, 3 switches visited.
    assert!((r.average_routing_distance - 3.0).abs() < 1e-12, "{}", r.average_routing_distance);
    // Shortest paths on one VC around a ring of 4: the CDG has a cycle.
    assert!(!r.acyclic);
    // The ladder (a VC per hop) makes the same tables deadlock-free, and they simulate.
    let mut sim = with_tables(TORUS, MINHOP, None, &["routing.vc_policy=\"ladder\""]).unwrap();
    let r = analyse(&sim);
    assert!(r.acyclic && r.unreachable_pairs == 0);
    sim.record_deliveries = true;
    let r = run(&sim, 2);
    let s = &r.summary;
    assert!(s.delivered_total > 0);
    assert_eq!(s.generated_total, s.delivered_total + r.resident_end + r.on_wires_end);
    assert!(r.deliveries.iter().all(|d| d.received_by == d.dst));
}

#[test]
fn opensm_up_down_tables_are_deadlock_free_on_one_vc() {
    let sim = with_tables(TORUS, UPDN, None, &["router.vcs=1"]).expect("OpenSM's Up*/Down* tables");
    let r = analyse(&sim);
    assert!(r.acyclic, "OpenSM's Up*/Down* on one VC: {:?}", r.cycle);
    assert_eq!(r.unreachable_pairs, 0);
    // On a 4x4 torus rooted at S0 every Up*/Down* route is minimal.
    assert!((r.average_routing_distance - 3.0).abs() < 1e-12);
}

/// `lfts` with the entry for `lid` in `switch`'s table set to `port` (`None`: removed).
fn set(lfts: &str, switch: &str, lid: &str, port: Option<&str>) -> String {
    let block = lfts.find(&format!("('{switch}'):")).expect("switch");
    let line = block + lfts[block..].find(&format!("\n{lid} ")).expect("entry") + 1;
    let end = line + lfts[line..].find('\n').expect("line end") + 1;
    let new = port.map_or(String::new(), |p| format!("{lid} {p}\n"));
    format!("{}{new}{}", &lfts[..line], &lfts[end..])
}

#[test]
fn bad_tables_are_refused_naming_the_switch_and_lid() {
    let err = |lfts: &str| with_tables(TORUS, lfts, None, &[]).err().expect("refused");
    // A switch without a table.
    let cut = MINHOP.find("Unicast lids [0-95] of switch Lid 24").unwrap();
    let e = err(&MINHOP[..cut]);
    assert!(e.contains("routing.tables.lfts") && e.contains("no forwarding table for switch 'S15'"), "{e}");
    // A switch the fabric does not have.
    let e = err(&MINHOP.replace("('S3')", "('S99')"));
    assert!(e.contains("switch 'S99' (GUID 0x0000000000200003) is not in the fabric"), "{e}");
    // A missing entry on a route: S1 forgets H0_0's LID (0x0002).
    let e = err(&set(MINHOP, "S1", "0x0002", None));
    assert!(e.contains("switch 'S1' has no entry for LID 0x0002 (HCA 'H0_0')"), "{e}");
    // A loop: S1 sends H0_0 to S2 (its IB port 3), which sends it back (IB port 4).
    let looping = set(&set(MINHOP, "S1", "0x0002", Some("003")), "S2", "0x0002", Some("004"));
    let e = err(&looping);
    assert!(e.contains("to LID 0x0002 (HCA 'H0_0') loops"), "{e}");
    // A port the switch does not have.
    let e = err(&set(MINHOP, "S1", "0x0002", Some("042")));
    assert!(e.contains("switch 'S1' forwards LID 0x0002 on IB port 42, which it does not have"), "{e}");
    // Garbage in an entry.
    let e = err(&set(MINHOP, "S1", "0x0002", Some("abc")));
    assert!(e.contains("cannot read `0x0002 abc"), "{e}");
    // An SL beyond InfiniBand's 16.
    let sim = build(&text(TORUS), &[]);
    let (lfts, sls) = dumps(&sim);
    let bad = sls.replacen(" 001 #", " 016 #", 1);
    let e = with_tables(TORUS, &lfts, Some(&bad), &[]).err().expect("refused");
    assert!(e.contains("routing.tables.sls") && e.contains("SL 16"), "{e}");
    // More SLs than VCs.
    let e = with_tables(TORUS, &lfts, Some(&sls), &["router.vcs=2"]).err().expect("refused");
    assert!(e.contains("router.vcs") && e.contains("needs 8 layers, 2 available"), "{e}");
    // The file not read (a config naming a path, built without the xnet command).
    let e = Config::parse(
        &text(TORUS),
        &["routing.algorithm=\"tables\"".into(), "routing.tables.lfts=\"x.dump\"".into()],
    )
    .map_err(|e| e.to_string())
    .and_then(|c| Simulation::build(c).map(drop).map_err(|e| e.to_string()))
    .expect_err("refused");
    assert!(e.contains("routing.tables.lfts") && e.contains("was not read"), "{e}");
}

#[test]
fn routes_that_are_not_tables_are_refused_when_written() {
    // Torus DOR changes VC at the dateline: an SL cannot say that.
    let sim = build(&text(TORUS), &["routing.algorithm=\"dor\"", "router.vcs=2"]);
    let e = path_tables(&sim.net, &sim.routes(), 2, 5).expect_err("refused").to_string();
    assert!(e.contains("changes VC"), "{e}");
    // Up*/Down* picks the next hop by the route's phase (up or down), not by the
    // destination alone: a switch forwards two routes to one destination differently.
    let sim = build(&text(RRG), &["routing.algorithm=\"up_down\"", "router.vcs=1"]);
    let e = path_tables(&sim.net, &sim.routes(), 1, 5).expect_err("refused").to_string();
    assert!(e.contains("not destination-based"), "{e}");
}

#[test]
fn switches_are_matched_by_guid_as_ibnetdiscover_names_them() {
    // ibnetdiscover names a switch `S-<GUID>`; OpenSM's headers give the GUID and a node
    // description that need not be unique. Rename the 4x4 torus's switches so, give every
    // switch the same description in the dump, and the tables still read, with the same
    // routes as under the plain names (ibsim gave switch s the GUID 0x200000 + s).
    let native = build(&text(TORUS), &[]);
    let mut net_text = IbView::of(&native.net).net_text(&native.net);
    let mut dump = MINHOP.to_string();
    for s in 0..16 {
        let guid = format!("S-{:016x}", 0x0020_0000 + s);
        net_text = net_text.replace(&format!("\"S{s}\""), &format!("\"{guid}\""));
        dump = dump.replace(&format!("('S{s}')"), "('switch')");
    }
    let file = format!("kind = \"file\"\ncontents = {}", toml::Value::String(net_text));
    let text_file = BASE.replace("TOPOLOGY", &file).replace("endpoints_per_switch = 2\n", "");
    let mut o = tables_overrides(&dump, None);
    o.push("router.vcs=1".into());
    let cfg = Config::parse(&text_file, &o).expect("config");
    let by_guid = analyse(&Simulation::build(cfg).expect("tables matched by GUID"));
    let by_name = analyse(&with_tables(TORUS, MINHOP, None, &["router.vcs=1"]).unwrap());
    assert_eq!(by_guid.link_weights, by_name.link_weights);
    assert_eq!(by_guid.average_routing_distance, by_name.average_routing_distance);
    // Port 255 is "no route" (`ibroute -a`): an entry nobody uses may say so; a LID twice
    // in one table is refused.
    let unused = set(MINHOP, "S5", "0x0001", Some("255"));
    assert!(with_tables(TORUS, &unused, None, &[]).is_ok());
    let twice = MINHOP.replacen("0x0002 004 #", "0x0002 004\n0x0002 003 #", 1);
    let e = with_tables(TORUS, &twice, None, &[]).err().expect("refused");
    assert!(e.contains("a second entry for LID 0x0002"), "{e}");
}

/// The `tables` routing declares its files in its registry entry (`lfts` -> `lfts_contents`,
/// `sls` -> `sls_contents`): parsing with a reader (the xnet command's file access) reads
/// them when `tables` is selected, and only then, into the configuration recorded with the
/// results, which then builds without the files; errors name the key and the file.
#[test]
fn the_files_tables_declares_are_read_through_its_registry_entry() {
    let asked = std::cell::RefCell::new(Vec::new());
    let read = |path: &str| {
        asked.borrow_mut().push(path.to_string());
        match path {
            "t.lfts" => Ok(MINHOP.as_bytes().to_vec()),
            _ => Err("No such file or directory".to_string()),
        }
    };
    let o = |set: &[&str]| set.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let naming = o(&["routing.algorithm=\"tables\"", "routing.tables.lfts=\"t.lfts\"", "router.vcs=1"]);
    let cfg = Config::parse_with_files(&text(TORUS), &naming, &read).expect("tables read");
    assert_eq!(asked.borrow().as_slice(), ["t.lfts"]);
    let recorded: toml::Table = toml::from_str(&cfg.text).unwrap();
    assert_eq!(recorded["routing"]["tables"]["lfts_contents"].as_str(), Some(MINHOP));
    let by_file = analyse(&Simulation::build(cfg.clone()).expect("builds"));
    let inline = analyse(&with_tables(TORUS, MINHOP, None, &["router.vcs=1"]).unwrap());
    assert_eq!(normalized(by_file), normalized(inline));
    // The recorded configuration needs no file.
    asked.borrow_mut().clear();
    let again = Config::parse_with_files(&cfg.text, &[], &read).expect("recorded config");
    assert!(asked.borrow().is_empty());
    assert_eq!(again.text, cfg.text);
    // Another routing selected: its files are not read.
    Config::parse_with_files(&text(TORUS), &o(&["routing.tables.lfts=\"t.lfts\""]), &read).unwrap();
    assert!(asked.borrow().is_empty());
    // A file that cannot be read is named with its key.
    let mut missing = naming.clone();
    missing.push("routing.tables.sls=\"t.sls\"".into());
    let e = Config::parse_with_files(&text(TORUS), &missing, &read).unwrap_err().to_string();
    assert_eq!(e, "routing.tables.sls: cannot read the path SLs t.sls: No such file or directory");
}
