//! The layers of every crate, checked on the source: ARCHITECTURE.md's section "Layers"
//! lists, for each crate, its top-level modules from the lowest layer to the highest, and
//! this test fails when a module uses one of a higher layer or when modules form a cycle.
//! Between crates Cargo enforces the order; within a crate only this test does.
//!
//! A node is a top-level module of a crate (a file or folder directly under `src/`; a
//! folder's files are one node) or the crate root (`lib.rs`/`main.rs`, named `root` in
//! the table). A node uses another when its code names it: `crate::x`, `super::x`, a
//! child module's name, or an item the root re-exports from `x`. The root's `mod` and
//! `pub use` lines are the crate's table of contents, not uses. Test code (`#[cfg(test)]`
//! items) is left out: tests may use anything.
//!
//! Also here: a source file over 600 lines must say why it is one file.
//!
//! One file: the source scanner and the checks that use it are read together, and the
//! scanner is too small to be worth a crate of its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cli/ has a parent").to_path_buf()
}

/// One crate's row of the table: its folder and its layers, lowest first.
struct CrateLayers {
    folder: String,
    layers: Vec<Vec<String>>,
}

/// The table between the `layers` markers of ARCHITECTURE.md: rows
/// `` | `folder` | `a`, `b` < `c` < ... | ``.
fn declared_layers(architecture: &str) -> Vec<CrateLayers> {
    let start = architecture.find("<!-- layers:").expect("ARCHITECTURE.md has the layers table");
    let end = architecture[start..].find("<!-- end: layers -->").expect("the layers table ends") + start;
    let mut rows = Vec::new();
    for line in architecture[start..end].lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[1].starts_with('`') {
            continue;
        }
        let folder = cells[1].trim_matches('`').to_string();
        let layers = cells[2]
            .split('<')
            .map(|layer| layer.split(',').map(|m| m.trim().trim_matches('`').to_string()).collect())
            .collect();
        rows.push(CrateLayers { folder, layers });
    }
    rows
}

/// `text` with comments, string and character literals blanked (lengths kept).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            let mut j = i;
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if b[i] == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
            let body = i + 2 + hashes;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, (j + 1).min(b.len()));
            i = j + 1;
        } else if b[i] == b'\'' {
            // A character literal ('a', '\n', '\u{..}'), or a lifetime (left alone).
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&c| c == b'\'').map(|p| i + 2 + p + 1)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 3)
            } else {
                std::str::from_utf8(&b[i + 1..]).ok().and_then(|rest| {
                    let c = rest.chars().next()?;
                    (rest[c.len_utf8()..].starts_with('\'') && !c.is_ascii())
                        .then(|| i + 1 + c.len_utf8() + 1)
                })
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8 (only ASCII replaced whole characters)")
}

/// `code` without the items marked `#[cfg(test)]` (a module with a body, a `mod x;`
/// line, a function); the names of test modules kept in files of their own.
fn without_tests(code: &str) -> (String, Vec<String>) {
    let mut out = code.to_string();
    let mut test_files = Vec::new();
    let mut from = 0;
    while let Some(p) = out[from..].find("#[cfg(test)]") {
        let at = from + p;
        let rest = &out[at..];
        let brace = rest.find('{');
        let semi = rest.find(';');
        let end = match (brace, semi) {
            (Some(b), Some(s)) if s < b => {
                // `mod tests;`
                let decl = &rest[..s];
                if let Some(name) = decl.split_whitespace().last() {
                    test_files.push(name.to_string());
                }
                at + s + 1
            }
            (Some(b), _) => {
                let mut depth = 0;
                let mut end = out.len();
                for (k, c) in out[at + b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = at + b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            _ => out.len(),
        };
        let blanked: String = out[at..end].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect();
        out.replace_range(at..end, &blanked);
        from = at;
    }
    (out, test_files)
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths of a `use` tree (`a::{b, c::{d, e}}`, `a::b as c`, `a::*`) as segment lists;
/// a renamed path ends with `#` and the name it binds.
fn use_tree_paths(tree: &str) -> Vec<Vec<String>> {
    fn expand(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
        let tree = tree.trim();
        if tree.is_empty() {
            return;
        }
        if let Some(open) = tree.find('{') {
            let head: Vec<String> =
                tree[..open].split("::").map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
            let mut prefix = prefix.to_vec();
            prefix.extend(head);
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut depth = 0;
            let mut start = 0;
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&prefix, &inner[start..k], out);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            expand(&prefix, &inner[start..], out);
        } else {
            // `a::b as c` binds `c`: kept as the path's last segment after a `#`.
            let (path, alias) = match tree.split_once(" as ") {
                Some((path, alias)) => (path, Some(alias.trim())),
                None => (tree, None),
            };
            let mut full = prefix.to_vec();
            full.extend(path.split("::").map(str::trim).filter(|s| !s.is_empty()).map(String::from));
            if let Some(alias) = alias {
                full.push(format!("#{alias}"));
            }
            out.push(full);
        }
    }
    let mut out = Vec::new();
    expand(&[], tree, &mut out);
    out
}

/// A `use` declaration: its paths and whether it is `pub` (a re-export).
struct Use {
    public: bool,
    paths: Vec<Vec<String>>,
    span: (usize, usize),
}

fn uses(code: &str) -> Vec<Use> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(p) = code[from..].find("use ") {
        let at = from + p;
        from = at + 4;
        if at > 0 && is_ident(code[..at].chars().next_back().unwrap_or(' ')) {
            continue;
        }
        // Only at the start of an item: after `;`, `{`, `}`, `]` or a visibility.
        let before = code[..at].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let head =
            if public { before.rsplit_once("pub").map_or(before, |(h, _)| h).trim_end() } else { before };
        if !(head.is_empty() || head.ends_with([';', '{', '}', ']'])) {
            continue;
        }
        let Some(end) = code[at..].find(';') else { break };
        let tree = &code[at + 4..at + end];
        found.push(Use { public, paths: use_tree_paths(tree), span: (at, at + end) });
    }
    found
}

/// Paths in expressions and types that start with `crate`, `super`, `self` or one of
/// `children`, outside the `use` declarations at `spans`.
fn other_paths(code: &str, spans: &[(usize, usize)], children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (at, c) = chars[k];
        let starts_word = is_ident(c) && (k == 0 || !is_ident(chars[k - 1].1) && chars[k - 1].1 != ':');
        if !starts_word || spans.iter().any(|&(a, b)| at >= a && at < b) {
            k += 1;
            continue;
        }
        // Read `seg::seg::...`.
        let mut segs = Vec::new();
        let mut j = k;
        loop {
            let start = j;
            while j < chars.len() && is_ident(chars[j].1) {
                j += 1;
            }
            if start == j {
                break;
            }
            segs.push(chars[start..j].iter().map(|&(_, c)| c).collect::<String>());
            let mut n = j;
            while n < chars.len() && chars[n].1 == ' ' {
                n += 1;
            }
            if n + 1 < chars.len() && chars[n].1 == ':' && chars[n + 1].1 == ':' {
                j = n + 2;
                while j < chars.len() && chars[j].1 == ' ' {
                    j += 1;
                }
            } else {
                break;
            }
        }
        let first = segs[0].as_str();
        if segs.len() > 1 && (["crate", "super", "self"].contains(&first) || children.contains(first)) {
            paths.push(segs);
        }
        k = j.max(k + 1);
    }
    paths
}

/// A source file of a crate.
struct SourceFile {
    /// Module path from the crate root (`[]` for the root, `["router", "app"]`).
    module: Vec<String>,
    code: String,
}

fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("file under src");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs").to_string();
    if !(["mod", "lib", "main"].contains(&stem.as_str()) && !parts.is_empty()
        || parts.is_empty() && (stem == "lib" || stem == "main"))
    {
        parts.push(stem);
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source folder") {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Who uses whom: node -> (used node -> an example path).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// The uses between the nodes of the crate in `src`, and within each folder module the
/// uses between its files (a child's use of its folder's `mod.rs` left out: a parent and
/// its children are one unit, but siblings must not form a cycle).
fn crate_graph(src: &Path) -> (Graph, BTreeMap<String, Graph>) {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    let mut files = Vec::new();
    let mut test_modules: BTreeSet<Vec<String>> = BTreeSet::new();
    for path in &paths {
        let module = module_of(src, path);
        let text = std::fs::read_to_string(path).expect("readable source");
        let (code, tests) = without_tests(&code_only(&text));
        for t in tests {
            let mut m = module.clone();
            m.push(t);
            test_modules.insert(m);
        }
        files.push(SourceFile { module, code });
    }
    files.retain(|f| !test_modules.iter().any(|t| f.module.starts_with(t)));
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let children_of = |m: &[String]| -> BTreeSet<String> {
        modules
            .iter()
            .filter(|c| c.len() == m.len() + 1 && c.starts_with(m))
            .map(|c| c[m.len()].clone())
            .collect()
    };
    // What each module re-exports: (module, name) -> the module the name comes from; and
    // the names re-exported from other crates (`pub use serde as __serde`), which lead out.
    let mut reexports: BTreeMap<(Vec<String>, String), Vec<String>> = BTreeMap::new();
    let mut external: BTreeSet<(Vec<String>, String)> = BTreeSet::new();
    for f in &files {
        let children = children_of(&f.module);
        for u in uses(&f.code).iter().filter(|u| u.public) {
            for p in &u.paths {
                let bound = p.last().map(|s| s.trim_start_matches('#').to_string()).unwrap_or_default();
                let p: Vec<&String> = p.iter().filter(|s| !s.starts_with('#')).collect();
                let (base, rest): (Vec<String>, &[&String]) = match p.first().map(|s| s.as_str()) {
                    Some("crate") => (Vec::new(), &p[1..]),
                    Some("self") => (f.module.clone(), &p[1..]),
                    Some(c) if children.contains(c) => (f.module.clone(), &p[..]),
                    Some("super") => continue,
                    _ => {
                        external.insert((f.module.clone(), bound));
                        continue;
                    }
                };
                if rest.len() >= 2 && rest[rest.len() - 1] != "*" {
                    let mut from = base;
                    from.extend(rest[..rest.len() - 1].iter().map(|s| s.to_string()));
                    reexports.insert((f.module.clone(), bound), from);
                }
            }
        }
    }
    // The module a path from the crate root names: the deepest module on it, following
    // re-exports; `None` for a name re-exported from another crate.
    let resolve = |path: &[String]| -> Option<Vec<String>> {
        let mut at: Vec<String> = Vec::new();
        for seg in path {
            let mut next = at.clone();
            next.push(seg.clone());
            if modules.contains(&next) {
                at = next;
            } else if external.contains(&(at.clone(), seg.clone())) {
                return None;
            } else if let Some(from) = reexports.get(&(at.clone(), seg.clone())) {
                at = from.clone();
                break;
            } else {
                break;
            }
        }
        Some(at)
    };
    let node = |m: &[String]| m.first().cloned().unwrap_or_else(|| "root".to_string());
    let mut graph = Graph::new();
    let mut inner: BTreeMap<String, Graph> = BTreeMap::new();
    for f in &files {
        let me = node(&f.module);
        let children = children_of(&f.module);
        let declared = uses(&f.code);
        let spans: Vec<(usize, usize)> = declared.iter().map(|u| u.span).collect();
        let mut all: Vec<Vec<String>> = Vec::new();
        for u in &declared {
            if f.module.len() <= 1 && u.public && !children.is_empty() {
                continue; // a folder's (or the root's) table of contents
            }
            all.extend(u.paths.iter().map(|p| p.iter().filter(|s| !s.starts_with('#')).cloned().collect()));
        }
        all.extend(other_paths(&f.code, &spans, &children));
        for p in all {
            // Make it a path from the crate root.
            let mut at: Vec<String> = match p[0].as_str() {
                "crate" => Vec::new(),
                "self" | "super" => f.module.clone(),
                c if children.contains(c) => f.module.clone(),
                _ => continue, // another crate, std, or a local name
            };
            let mut rest = &p[..];
            if rest[0] == "crate" || rest[0] == "self" {
                rest = &rest[1..];
            }
            while rest.first().is_some_and(|s| s == "super") {
                at.pop();
                rest = &rest[1..];
            }
            at.extend(rest.iter().cloned());
            let Some(target) = resolve(&at) else { continue };
            let to = node(&target);
            if to != me {
                graph.entry(me.clone()).or_default().entry(to).or_insert_with(|| p.join("::"));
            } else if f.module.len() >= 2 && target.len() >= 2 && target[1] != f.module[1] {
                inner
                    .entry(me.clone())
                    .or_default()
                    .entry(f.module[1].clone())
                    .or_default()
                    .entry(target[1].clone())
                    .or_insert_with(|| p.join("::"));
            }
        }
    }
    (graph, inner)
}

/// The cycles (strongly connected components of more than one node) of `graph`.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = graph.keys().chain(graph.values().flat_map(|m| m.keys())).collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    // Kosaraju: reachability both ways is enough at this size.
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for m in graph.get(&n).map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
                if seen.insert(m.clone()) {
                    stack.push(m);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = nodes.iter().map(|&n| (n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for &n in &nodes {
        if done.contains(n) || !reaches[n].contains(n) {
            continue;
        }
        let component: Vec<String> = nodes
            .iter()
            .filter(|&&m| reaches[n].contains(m) && reaches[m].contains(n))
            .map(|m| m.to_string())
            .collect();
        done.extend(component.iter().cloned());
        out.push(component);
    }
    out
}

#[test]
fn every_crate_keeps_its_layers_and_has_no_cycle() {
    let ws = workspace();
    let architecture = std::fs::read_to_string(ws.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let table = declared_layers(&architecture);
    // The workspace's members, as Cargo.toml lists them (lowest first there too).
    let cargo = std::fs::read_to_string(ws.join("Cargo.toml")).expect("Cargo.toml");
    let line = cargo.lines().find(|l| l.starts_with("members = [")).expect("Cargo.toml lists its members");
    let members: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
    assert!(members.len() >= 8, "{line}");
    let listed: Vec<&str> = table.iter().map(|c| c.folder.as_str()).collect();
    assert_eq!(listed, members, "ARCHITECTURE.md's layers table lists every crate, lowest first");
    let mut problems = Vec::new();
    for c in &table {
        let src = ws.join(&c.folder).join("src");
        let (graph, inner) = crate_graph(&src);
        for (folder, files) in &inner {
            for cycle in cycles(files) {
                problems.push(format!("{}: files of `{folder}` in a cycle: {}", c.folder, cycle.join(", ")));
            }
        }
        if std::env::var_os("XNET_PRINT_LAYERS").is_some() {
            for (from, targets) in &graph {
                eprintln!(
                    "{}: {from} -> {}",
                    c.folder,
                    targets.keys().cloned().collect::<Vec<_>>().join(" ")
                );
            }
        }
        let mut nodes: BTreeSet<String> = BTreeSet::new();
        for entry in std::fs::read_dir(&src).expect("src") {
            let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
            let name = name.trim_end_matches(".rs").to_string();
            nodes.insert(if name == "lib" || name == "main" { "root".into() } else { name });
        }
        let layer_of: BTreeMap<&str, usize> =
            c.layers.iter().enumerate().flat_map(|(i, l)| l.iter().map(move |m| (m.as_str(), i))).collect();
        for n in &nodes {
            if !layer_of.contains_key(n.as_str()) {
                problems
                    .push(format!("{}: module `{n}` is in no layer of ARCHITECTURE.md's table", c.folder));
            }
        }
        for m in layer_of.keys() {
            if !nodes.contains(*m) {
                problems.push(format!("{}: the table lists `{m}`, which is not a module", c.folder));
            }
        }
        for (from, targets) in &graph {
            for (to, example) in targets {
                let (Some(&a), Some(&b)) = (layer_of.get(from.as_str()), layer_of.get(to.as_str())) else {
                    continue;
                };
                if b > a {
                    problems.push(format!(
                        "{}: `{from}` (layer {a}) uses `{to}` (layer {b}, higher): {example}",
                        c.folder
                    ));
                }
            }
        }
        for cycle in cycles(&graph) {
            let detail: Vec<String> = cycle
                .iter()
                .flat_map(|a| {
                    graph[a]
                        .iter()
                        .filter(|(b, _)| cycle.contains(b))
                        .map(move |(b, e)| format!("{a} -> {b} ({e})"))
                })
                .collect();
            problems.push(format!("{}: modules in a cycle: {}", c.folder, detail.join("; ")));
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_checker_sees_uses_of_every_form() {
    let code = code_only(
        "use crate::a::{b, c::{d, e}};\n// use crate::zz;\nfn f() { super::x::y(); let s = \"crate::q\"; child::z(); }\n\
         #[cfg(test)]\nmod tests { use crate::t; }\npub use self::w as v;",
    );
    let (code, _) = without_tests(&code);
    let u = uses(&code);
    let paths: Vec<String> = u.iter().flat_map(|u| u.paths.iter().map(|p| p.join("::"))).collect();
    assert_eq!(paths, ["crate::a::b", "crate::a::c::d", "crate::a::c::e", "self::w::#v"]);
    assert!(u[1].public && !u[0].public);
    let spans: Vec<(usize, usize)> = u.iter().map(|u| u.span).collect();
    let children: BTreeSet<String> = ["child".to_string()].into();
    let other: Vec<String> = other_paths(&code, &spans, &children).iter().map(|p| p.join("::")).collect();
    assert_eq!(other, ["super::x::y", "child::z"]);
}

#[test]
fn the_checker_finds_cycles_and_follows_reexports() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    std::fs::create_dir(src.join("d")).expect("folder module");
    let files = [
        ("lib.rs", "mod a; mod b; mod c; mod d; pub use c::Thing;"),
        ("a.rs", "use crate::b::f;"),
        ("b.rs", "pub fn f() { crate::a::g(); }"),
        // `crate::Thing` is c's, through the root's re-export.
        ("c.rs", "pub struct Thing; fn h() -> crate::Thing { crate::Thing }"),
        ("d/mod.rs", "mod x; mod y; pub use x::X; use crate::Thing;"),
        ("d/x.rs", "pub struct X; fn k() { super::y::Y; }"),
        ("d/y.rs", "pub struct Y; fn m() -> super::X { super::X }"),
    ];
    for (name, text) in files {
        std::fs::write(src.join(name), text).expect("write");
    }
    let (graph, inner) = crate_graph(src);
    assert_eq!(cycles(&graph), [vec!["a".to_string(), "b".to_string()]]);
    assert!(graph["d"].contains_key("c"), "{graph:?}");
    assert!(!graph.contains_key("c"), "c uses only itself: {graph:?}");
    assert_eq!(cycles(&inner["d"]), [vec!["x".to_string(), "y".to_string()]]);
}

/// Lines above which a source file must say why it is one file.
const LONG_FILE: usize = 600;

#[test]
fn a_long_source_file_says_why_it_is_one_file() {
    let ws = workspace();
    let mut unexplained = Vec::new();
    for folder in
        ["engine", "partitioner", "models/base", "models/topology", "models/routing", "models", "cli"]
    {
        let mut files = Vec::new();
        rust_files(&ws.join(folder).join("src"), &mut files);
        for path in files {
            let text = std::fs::read_to_string(&path).expect("readable source");
            let lines = text.lines().count();
            let says_why =
                text.lines().take_while(|l| l.starts_with("//!")).any(|l| l.starts_with("//! One file:"));
            if lines > LONG_FILE && !says_why {
                unexplained
                    .push(format!("{} ({lines} lines)", path.strip_prefix(&ws).unwrap_or(&path).display()));
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "source files over {LONG_FILE} lines must split or say at the top of their module doc why they are one \
         file (a paragraph starting `//! One file:`):\n{}",
        unexplained.join("\n")
    );
}

/// The files of the router's switch half (models/src/router/).
const SWITCH_FILES: &[&str] = &[
    "switch.rs",
    "allocator.rs",
    "route.rs",
    "link.rs",
    "separable.rs",
    "buffers.rs",
    "sharing.rs",
    "cc_switch.rs",
];

/// The files of its endpoints' half.
const ENDPOINT_FILES: &[&str] = &["endpoints.rs", "nic.rs", "app.rs", "cc.rs"];

/// What the switch half may do with its endpoints (`RouterState::ends`): the crossings
/// `endpoints.rs` defines, nothing of their state.
const ENDPOINT_CROSSINGS: &[&str] = &["return_credits", "eject"];

/// What the endpoints' half may do with the switch (`RouterState::sw`): the crossings
/// `switch.rs` defines.
const SWITCH_CROSSINGS: &[&str] = &["nic_credits", "vc_with_credits", "link_latency"];

/// The uses of `HALF.NAME` in `code` (`half` is `ends` or `sw`) whose NAME is not one of
/// `crossings`.
fn reaches_into(code: &str, half: &str, crossings: &[&str]) -> Vec<String> {
    let prefix = format!("{half}.");
    code.match_indices(&prefix)
        .filter(|(at, _)| *at == 0 || !code[..*at].ends_with(|c: char| is_ident(c)))
        .map(|(at, _)| code[at + prefix.len()..].chars().take_while(|&c| is_ident(c)).collect::<String>())
        .filter(|name| !crossings.contains(&name.as_str()))
        .collect()
}

#[test]
fn each_half_of_the_router_reaches_the_other_only_at_the_crossings() {
    let router = workspace().join("models/src/router");
    let mut found = Vec::new();
    for (files, half, crossings) in
        [(SWITCH_FILES, "ends", ENDPOINT_CROSSINGS), (ENDPOINT_FILES, "sw", SWITCH_CROSSINGS)]
    {
        for file in files {
            let text = std::fs::read_to_string(router.join(file)).expect("a router file");
            let (code, _) = without_tests(&code_only(&text));
            for name in reaches_into(&code, half, crossings) {
                found.push(format!("{file}: {half}.{name} (crossings: {})", crossings.join(", ")));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a half of the router uses the other's state, not a crossing:\n{}",
        found.join("\n")
    );
    // The check sees a reach, and lets a crossing and other names through.
    let sample = "self.ends.nics[0].port; self.ends.eject(at, nic, p, false); friends.x; ends.apps.len()";
    assert_eq!(reaches_into(sample, "ends", ENDPOINT_CROSSINGS), ["nics", "apps"]);
    assert_eq!(
        reaches_into("self.sw.ports[0]; *self.sw.nic_credits(p, 0, 2) += 1", "sw", SWITCH_CROSSINGS),
        ["ports"]
    );
}
