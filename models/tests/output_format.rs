//! docs/output-format.md holds the tables the result schema generates (the `/summary`
//! columns, the point figures, the time-series columns). Run with `XNET_UPDATE_DOCS=1` to
//! rewrite them after changing the schema.

use xnet_models::sim::schema::docs_blocks;

#[test]
fn output_format_docs_hold_the_schema_tables() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/output-format.md");
    let mut docs = std::fs::read_to_string(path).expect("docs/output-format.md");
    let update = std::env::var_os("XNET_UPDATE_DOCS").is_some();
    for (tag, table) in docs_blocks() {
        let start = format!("<!-- generated: {tag} (the result schema, models/src/sim/schema.rs) -->\n");
        let end = format!("<!-- end: {tag} -->\n");
        let from = docs.find(&start).unwrap_or_else(|| panic!("docs/output-format.md has no `{tag}` block"));
        let to = docs[from..].find(&end).map(|i| from + i).expect("the block ends");
        let current = &docs[from + start.len()..to];
        if current != table {
            assert!(
                update,
                "docs/output-format.md's `{tag}` table differs from the result schema; rerun this test with \
                 XNET_UPDATE_DOCS=1 to rewrite it.\n--- schema ---\n{table}\n--- docs ---\n{current}"
            );
            docs.replace_range(from + start.len()..to, &table);
        }
    }
    if update {
        std::fs::write(path, docs).expect("write docs/output-format.md");
    }
}
