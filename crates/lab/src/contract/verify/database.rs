//! A scenario file's database as verification reaches it: the rows a `rows` expectation's query
//! returns (each row a JSON object), and a probe's change; made in SQLite here from the file's
//! schema and seed (the PostgreSQL one lives with the service).

use bakeoff_model::workload::database::{Database, Engine};
use serde_json::{Map, Number, Value as Json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The database a server of a scenario file was started with.
pub trait FileDatabase {
    /// The rows `sql` returns, each an object of column name to value as the engine gives them
    /// (an integer column's values are numbers, a text column's strings).
    fn rows(&self, sql: &str) -> Result<Vec<Json>, String>;

    /// Runs `sql`, a change (a probe's UPDATE).
    fn execute(&self, sql: &str) -> Result<(), String>;

    /// The statements naming `table` the engine has run on this database so far, where it counts
    /// them (PostgreSQL's pg_stat_statements); None where it does not (SQLite).
    fn statements(&self, _table: &str) -> Option<Result<u64, String>> {
        None
    }
}

/// A SQLite file made from a scenario file's `[database]`.
pub struct SqliteDatabase {
    /// The file.
    pub path: PathBuf,
}

impl SqliteDatabase {
    /// Makes the database at `path` afresh (a file there is replaced): the schema, then the seed.
    pub fn create(path: &Path, database: &Database) -> Result<SqliteDatabase, String> {
        for stale in [path.to_path_buf(), path.with_extension("sqlite-wal"), path.with_extension("sqlite-shm")] {
            let _ = std::fs::remove_file(stale);
        }
        let db = rusqlite::Connection::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        db.execute_batch(&format!("BEGIN;\n{}\nCOMMIT;", database.script(Engine::Sqlite)))
            .map_err(|e| format!("the schema and seed of {} do not run in SQLite: {e}", database.schema.path.display()))?;
        // Write-ahead logging, as SQLite is run behind a web server: readers and the one writer do
        // not wait for each other. The mode is kept in the file, so every stack gets it alike.
        db.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())).map_err(|e| format!("{}: journal_mode WAL: {e}", path.display()))?;
        Ok(SqliteDatabase { path: path.to_path_buf() })
    }

    fn open(&self) -> Result<rusqlite::Connection, String> {
        let db = rusqlite::Connection::open(&self.path).map_err(|e| format!("{}: {e}", self.path.display()))?;
        // The server may be writing: wait for its lock rather than fail.
        db.busy_timeout(Duration::from_secs(5)).map_err(|e| e.to_string())?;
        Ok(db)
    }
}

impl FileDatabase for SqliteDatabase {
    fn rows(&self, sql: &str) -> Result<Vec<Json>, String> {
        let db = self.open()?;
        let mut statement = db.prepare(sql).map_err(|e| e.to_string())?;
        let columns: Vec<String> = statement.column_names().iter().map(|c| c.to_string()).collect();
        let mut rows = statement.query([]).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| e.to_string())? {
            let mut object = Map::new();
            for (i, name) in columns.iter().enumerate() {
                object.insert(name.clone(), json(row.get_ref(i).map_err(|e| e.to_string())?));
            }
            out.push(Json::Object(object));
        }
        Ok(out)
    }

    fn execute(&self, sql: &str) -> Result<(), String> {
        self.open()?.execute_batch(sql).map_err(|e| e.to_string())
    }
}

/// A SQLite value as JSON: a blob as its text (lossy), a non-finite real as null.
fn json(v: rusqlite::types::ValueRef<'_>) -> Json {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => Json::Null,
        ValueRef::Integer(n) => Json::from(n),
        ValueRef::Real(f) => Number::from_f64(f).map_or(Json::Null, Json::Number),
        ValueRef::Text(t) | ValueRef::Blob(t) => Json::String(String::from_utf8_lossy(t).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_model::workload::Workload;

    #[test]
    fn the_fixture_database_is_made_queried_as_json_and_changed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/shopdb/shop.toml");
        let workload = Workload::load(&root).unwrap();
        let path = std::env::temp_dir().join(format!("bakeoff-file-db-test-{}.sqlite", std::process::id()));
        let db = SqliteDatabase::create(&path, workload.database.as_ref().unwrap()).unwrap();
        let item = db.rows("SELECT id, name, price FROM items WHERE id = 3").unwrap();
        assert_eq!(item, [serde_json::json!({"id": 3, "name": "item 3", "price": 3.5})]);
        assert_eq!(db.rows("SELECT count(*) AS n FROM tags").unwrap(), [serde_json::json!({"n": 30})]);
        db.execute("INSERT INTO orders (item_id) VALUES (1)").unwrap();
        assert_eq!(db.rows("SELECT count(*) AS n FROM orders").unwrap(), [serde_json::json!({"n": 1})]);
        // Made again: the write is gone.
        let db = SqliteDatabase::create(&path, workload.database.as_ref().unwrap()).unwrap();
        assert_eq!(db.rows("SELECT count(*) AS n FROM orders").unwrap(), [serde_json::json!({"n": 0})]);
        assert!(db.rows("SELECT nosuch FROM items").unwrap_err().contains("nosuch"));
        std::fs::remove_file(&path).ok();
    }
}
