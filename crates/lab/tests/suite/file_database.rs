//! A scenario file's own database made by the lab for each server start: the shopdb fixture
//! (tests/fixtures/shopdb) as a stack with a SQLite and a PostgreSQL variant, verified through the
//! lab with its `rows` expectations and its probe on the database the server was given; the
//! PostgreSQL database is dropped once the server stopped. Needs python3, PostgreSQL and psql.

use crate::common;

use bakeoff_lab::contract::verify::FileDatabase;
use bakeoff_lab::run::ScenarioFile;
use bakeoff_model::records::results::{MemorySink, Verdict, VerifyReport};
use bakeoff_model::scenario::ServiceKind;
use bakeoff_model::workload::Workload;

fn shop_file() -> std::path::PathBuf {
    common::project_root().join("tests/fixtures/shopdb/shop.toml")
}

/// A stack folder in `scratch` that starts the fixture server, with variants `sqlite` and `pg`.
fn stack(scratch: &common::Scratch, mode: &str) -> bakeoff_lab::stacks::manifest::Stack {
    let dir = scratch.dir.join(format!("shopdb-stack-{mode}"));
    std::fs::create_dir_all(&dir).unwrap();
    let server = common::project_root().join("tests/fixtures/shopdb/server.py");
    let manifest = format!(
        "language = \"python\"\nruntime = \"CPython 3\"\nframework = \"none\"\nserver = \"http.server\"\n\
         description = \"The shopdb fixture\"\nkind = \"http\"\nscenarios = [\"file:shopdb\"]\nservices = []\n\
         toolchain = [\"python3\"]\napt = []\n\n[profile]\nserver_model = \"threads\"\njson = \"\"\nmsgpack = \"\"\n\
         database = \"sqlite3, psql\"\npool = \"\"\n\n[start]\ncommand = \"SHOPDB_MODE={mode} exec python3 {}\"\n\n\
         [[variants]]\nname = \"sqlite\"\ndatabase = \"sqlite\"\n\n[[variants]]\nname = \"pg\"\ndatabase = \"postgres\"\n",
        server.display()
    );
    std::fs::write(dir.join("stack.toml"), manifest).unwrap();
    bakeoff_lab::stacks::catalog::load_dir(&dir).unwrap()
}

fn failures(report: &VerifyReport) -> Vec<String> {
    report.checks.iter().filter(|c| c.verdict == Verdict::Fail).map(|c| format!("{}: {}", c.what, c.reason)).collect()
}

#[test]
fn each_variant_is_verified_on_a_database_of_its_own_and_a_cache_fails_the_probe_on_both() {
    let scratch = common::Scratch::new("file-db");
    let (mut sink, mut events) = (MemorySink::default(), common::ignore);
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    let file = ScenarioFile::load(&shop_file(), "test").unwrap();
    let scenario = file.scenario();
    lab.bench.settings_mut().scenario_files = vec![file];
    for variant in ["sqlite", "pg"] {
        let honest = stack(&scratch, "");
        let report = lab.bench.verify_variant(&honest, honest.variant(variant).unwrap(), &[scenario], 1);
        assert!(failures(&report).is_empty(), "{variant}: {:?}", failures(&report));
        assert!(report.checks.iter().any(|c| c.what.starts_with("probe `item`") && c.verdict == Verdict::Pass), "{variant}: {report:?}");
        let cached = stack(&scratch, "cached");
        let report = lab.bench.verify_variant(&cached, cached.variant(variant).unwrap(), &[scenario], 1);
        let failed = failures(&report);
        assert!(failed.len() == 1 && failed[0].contains("does not show it"), "{variant}: {failed:?}");
    }
    let pg = lab.bench.services().postgres.as_ref().expect("the pg variant started PostgreSQL");
    let left = pg.psql("postgres", &["-At", "-c", "SELECT datname FROM pg_database WHERE datname LIKE 'file_%'"]).unwrap();
    assert_eq!(left.trim(), "", "each start's database is dropped once its server stopped");
}

#[test]
fn a_postgres_database_is_made_from_the_postgres_schema_queried_as_json_changed_and_dropped() {
    let scratch = common::Scratch::new("file-db-pg");
    let services = common::services(&[ServiceKind::Postgres], &scratch, &[]);
    let pg = services.postgres.as_ref().unwrap();
    let workload = Workload::load(&shop_file()).unwrap();
    let script = scratch.dir.join("script.sql");
    let url = pg.create_database("file_test", workload.database.as_ref().unwrap(), &script).unwrap();
    assert!(url.ends_with("/file_test"), "{url}");
    let db = pg.database("file_test");
    assert_eq!(
        db.rows("SELECT id, name, price FROM items WHERE id = 3;").unwrap(),
        [serde_json::json!({"id": 3, "name": "item 3", "price": 3.5})]
    );
    db.execute("INSERT INTO orders (item_id) VALUES (2)").unwrap();
    assert_eq!(db.rows("SELECT count(*) AS n FROM orders").unwrap(), [serde_json::json!({"n": 1})]);
    db.execute("UPDATE items SET name = 'changed ' || id WHERE id = 3").unwrap();
    assert_eq!(db.rows("SELECT name FROM items WHERE id = 3").unwrap(), [serde_json::json!({"name": "changed 3"})]);
    assert!(db.rows("SELECT nosuch FROM items").unwrap_err().contains("nosuch"));
    // Made again: the writes are gone.
    pg.create_database("file_test", workload.database.as_ref().unwrap(), &script).unwrap();
    assert_eq!(db.rows("SELECT count(*) AS n FROM orders").unwrap(), [serde_json::json!({"n": 0})]);
    pg.drop_database("file_test").unwrap();
    assert!(db.rows("SELECT 1 AS one").is_err(), "dropped");
}
