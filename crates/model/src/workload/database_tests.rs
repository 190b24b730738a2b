//! `[database]`, `rows` and `[[probes]]` in a scenario file: the shopdb fixture read with every
//! file it names, and each mistake named with its file, line and fix.

use super::database::Engine;
use super::Workload;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/shopdb/shop.toml")
}

/// The fixture's text with `from` replaced by `to`, checked as if it were the fixture.
fn edited(from: &str, to: &str) -> Result<Workload, String> {
    let text = std::fs::read_to_string(fixture()).unwrap();
    assert!(text.contains(from), "the fixture has `{from}`");
    Workload::parse(&fixture(), &text.replacen(from, to, 1)).map_err(|e| e.to_string())
}

/// The line of the fixture that holds `what`.
fn line_of(what: &str) -> usize {
    std::fs::read_to_string(fixture()).unwrap().lines().position(|l| l.contains(what)).unwrap() + 1
}

#[test]
fn the_fixture_reads_its_schema_seed_and_csv_and_declares_a_probe() {
    let w = Workload::load(&fixture()).unwrap();
    let db = w.database.as_ref().expect("[database]");
    assert!(db.schema.text.contains("CREATE TABLE items"));
    assert_eq!(db.seed.as_ref().map(|s| s.path.display().to_string()).as_deref(), Some("seed.sql"));
    assert_eq!((db.seed_csv[0].table.as_str(), db.seed_csv[0].data.columns.clone()), ("tags", vec!["item_id".to_string(), "tag".into()]));
    let script = db.script(Engine::Sqlite);
    assert!(script.contains("INSERT INTO \"tags\" (\"item_id\", \"tag\") VALUES ('1', 'blue');"), "{script}");
    assert!(!script.contains("SERIAL") && db.script(Engine::Postgres).contains("id SERIAL PRIMARY KEY"), "schema_postgres for PostgreSQL");
    assert_eq!(w.database_hash().map(|h| h.len()), Some(16));
    assert!(w.declares_proof() && w.probes.len() == 1 && w.requests[w.probes[0].request].name == "item");
    assert!(w.probes[0].line.ends_with(&format!("shop.toml:{}", line_of("[[probes]]"))), "{}", w.probes[0].line);
    assert_eq!(w.warnings(), ["order: no expectation depends on an input, so a cached answer passes there"]);
    // A drawn item's query and the probe's change carry its id as a SQL number.
    let deck = w.deck(w.seed, 20).unwrap();
    let item = deck.iter().find(|d| d.kind == 0).unwrap();
    let id = item.path.rsplit('/').next().unwrap();
    let rows = item.expected.rows.as_ref().unwrap();
    assert_eq!((rows.sql.clone(), rows.one), (format!("SELECT id, name, price FROM items WHERE id = {id}"), true));
    assert_eq!(w.probes[0].change_sql(&item.values), format!("UPDATE items SET name = 'changed ' || id WHERE id = {id}"));
    // Without the probe the work is not proven, and the file says so.
    let unproven = edited("[[probes]]", "[[probes_]]").map(|_| ()).unwrap_err();
    assert!(unproven.contains("unknown field `probes_`"), "{unproven}");
    let text = std::fs::read_to_string(fixture()).unwrap();
    let without = Workload::parse(&fixture(), text.split("[[probes]]").next().unwrap()).unwrap();
    assert!(!without.declares_proof());
    assert!(without.warnings().iter().any(|w| w.contains("[database] without [[probes]]")), "{:?}", without.warnings());
}

#[test]
fn a_change_to_a_seed_file_changes_the_database_hash_not_the_text_hash() {
    let dir = tempfile_dir("hash");
    let fixtures = fixture().parent().unwrap().to_path_buf();
    for f in ["shop.toml", "schema.sql", "schema.postgres.sql", "seed.sql", "tags.csv"] {
        std::fs::copy(fixtures.join(f), dir.join(f)).unwrap();
    }
    let before = Workload::load(&dir.join("shop.toml")).unwrap();
    std::fs::write(dir.join("tags.csv"), "item_id,tag\n1,red\n").unwrap();
    let after = Workload::load(&dir.join("shop.toml")).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(before.text_hash(), after.text_hash());
    assert_ne!(before.database_hash(), after.database_hash());
}

fn tempfile_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bakeoff-db-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn database_mistakes_are_named_with_their_line_and_fix() {
    let at = |what: &str| format!("shop.toml:{}", line_of(what));
    let cases: [(&str, &str, String, &str, &str); 5] = [
        (
            "schema = \"schema.sql\"",
            "schema = \"nosuch.sql\"",
            at("[database]"),
            "schema = \"nosuch.sql\": cannot read",
            "relative to the scenario file",
        ),
        ("schema = \"schema.sql\"", "", at("[database]"), "no `schema`", "write schema = \"schema.sql\""),
        (
            "seed = \"seed.sql\"\nseed_csv = [{ table = \"tags\", file = \"tags.csv\" }]",
            "",
            at("[database]"),
            "neither `seed` nor `seed_csv`",
            "seed = \"seed.sql\"",
        ),
        (
            "seed = \"seed.sql\"",
            "seed = \"seed.sql\"\nengine = \"x\"",
            format!("shop.toml:{}", line_of("seed = \"seed.sql\"") + 1),
            "unknown field `engine`",
            "docs/scenarios.md",
        ),
        ("file = \"tags.csv\"", "file = \"nosuch.csv\"", at("[database]"), "seed_csv: data file", "relative to the scenario file"),
    ];
    for (from, to, line, problem, hint) in cases {
        let e = edited(from, to).unwrap_err();
        assert!(e.contains(&line) && e.contains(problem) && e.contains(hint), "{from} -> {to}: expected {line}, {problem}, {hint}:\n{e}");
    }
}

#[test]
fn rows_and_probe_mistakes_are_named_with_their_line_and_fix() {
    let both = edited("rows = \"SELECT tag", "rows_one = \"SELECT 1\"\nrows = \"SELECT tag").unwrap_err();
    assert!(both.contains("request `tags`: expect: both `rows` and `rows_one`") && both.contains("hint: keep `rows`"), "{both}");
    let text = std::fs::read_to_string(fixture()).unwrap();
    let start = text.find("[database]").unwrap();
    let end = text.find("[vars]").unwrap();
    let no_db = format!("{}{}", &text[..start], &text[end..]);
    let e = Workload::parse(&fixture(), &no_db).unwrap_err().to_string();
    assert!(e.contains("request `item`: `rows` queries the file's database and the file has no [database]"), "{e}");
    let e = edited("request = \"item\"", "request = \"nosuch\"").unwrap_err();
    assert!(
        e.contains(&format!("shop.toml:{}", line_of("[[probes]]")))
            && e.contains("names no request (the file has item, tags, order, count)"),
        "{e}"
    );
    let e = edited("request = \"item\"", "request = \"order\"").unwrap_err();
    assert!(e.contains("request `order` has no `rows` expectation") && e.contains("hint: add rows = "), "{e}");
    let e = edited("|| id WHERE id = {{id}}", "|| id WHERE id = {{other}}").unwrap_err();
    assert!(e.contains("the change's `{{other}}` is not drawn by request `item`"), "{e}");
}

#[test]
fn statement_counts_are_read_and_their_mistakes_named_with_their_line_and_fix() {
    let counted = "[[statements]]\nrequest = \"item\"\ntable = \"items\"\n\n[[probes]]";
    let w = edited("[[probes]]", counted).unwrap();
    assert_eq!(
        (w.statements.len(), w.statements[0].request, w.statements[0].table.as_str(), w.statements[0].at_least),
        (1, 0, "items", 1.0)
    );
    assert!(w.statements[0].line.ends_with(&format!("shop.toml:{}", line_of("[[probes]]"))), "{}", w.statements[0].line);
    for (to, problem, hint) in [
        (
            "[[statements]]\nrequest = \"nosuch\"\ntable = \"items\"\n\n[[probes]]",
            "`request = \"nosuch\"` names no request",
            "write the `name`",
        ),
        ("[[statements]]\nrequest = \"item\"\ntable = \"items; DROP\"\n\n[[probes]]", "is not a table name", "write a table of the schema"),
        (
            "[[statements]]\nrequest = \"item\"\ntable = \"items\"\nat_least = 0\n\n[[probes]]",
            "`at_least = 0` must be above 0",
            "leave it out",
        ),
    ] {
        let err = edited("[[probes]]", to).unwrap_err();
        assert!(err.contains("[[statements]]: ") && err.contains(problem) && err.contains(hint), "{err}");
    }
    let without_db = "name = \"t\"\n[[requests]]\nname = \"a\"\npath = \"/\"\n[[statements]]\nrequest = \"a\"\ntable = \"t\"\n";
    let err = Workload::parse(Path::new("t.toml"), without_db).unwrap_err().to_string();
    assert!(err.contains("t.toml:5") && err.contains("the file has no [database]"), "{err}");
    let proven = Workload::parse(Path::new("t.toml"), &without_db.replace("[[statements]]\nrequest = \"a\"\ntable = \"t\"\n", "")).unwrap();
    assert!(!proven.declares_proof(), "no probe, pair or count: work not proven");
}
