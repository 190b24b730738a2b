//! A scenario file's own database (`[database]`): its schema and seed, read when the file is
//! checked so a run keeps exactly what it measured against; and SQL whose placeholders become SQL
//! literals (the `rows` expectation, a probe's change).

use super::template::{Template, Value};
use super::vars::{DataFile, Pick};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `[database]` table as the file writes it.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDatabase {
    schema: Option<String>,
    schema_postgres: Option<String>,
    seed: Option<String>,
    #[serde(default)]
    seed_csv: Vec<RawCsvSeed>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawCsvSeed {
    table: String,
    file: String,
}

/// A checked `[database]`: every file read.
#[derive(Debug, Clone, PartialEq)]
pub struct Database {
    /// The schema (`schema = "shop.sql"`).
    pub schema: SqlFile,
    /// The schema for PostgreSQL when it differs (`schema_postgres`); else `schema` serves both.
    pub schema_postgres: Option<SqlFile>,
    /// Seed statements (`seed = "seed.sql"`).
    pub seed: Option<SqlFile>,
    /// Rows of CSV files, each into a table (`seed_csv`), after `seed`.
    pub seed_csv: Vec<CsvSeed>,
}

/// A SQL file the scenario file names.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlFile {
    /// As the scenario file names it (relative to the scenario file).
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

/// A CSV file whose rows seed a table: its header line names the columns.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvSeed {
    /// The table.
    pub table: String,
    /// The rows.
    pub data: DataFile,
}

/// The engines a database is made in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// A SQLite file.
    Sqlite,
    /// A database of the lab's PostgreSQL service.
    Postgres,
}

type Problem = (String, &'static str);

impl RawDatabase {
    /// Reads the files it names (relative to `base`, the scenario file's folder).
    pub(super) fn check(&self, base: &Path) -> Result<Database, Problem> {
        let read = |name: &str, key: &str| -> Result<SqlFile, Problem> {
            let text = std::fs::read_to_string(base.join(name))
                .map_err(|e| (format!("{key} = \"{name}\": cannot read {}: {e}", base.join(name).display()), FILES_HINT))?;
            Ok(SqlFile { path: PathBuf::from(name), text })
        };
        let Some(schema) = &self.schema else {
            return Err(("no `schema`".into(), "write schema = \"schema.sql\": the CREATE TABLE statements, beside the scenario file"));
        };
        if self.seed.is_none() && self.seed_csv.is_empty() {
            return Err((
                "neither `seed` nor `seed_csv`: the database would start empty".into(),
                "write seed = \"seed.sql\" (INSERT statements) and/or seed_csv = [{ table = \"items\", file = \"items.csv\" }]",
            ));
        }
        let mut seed_csv = Vec::new();
        for c in &self.seed_csv {
            if !is_name(&c.table) {
                return Err((format!("seed_csv table `{}` is not a table name", c.table), "letters, digits and _ only"));
            }
            let data = DataFile::read(base, &c.file, Pick::Cycle).map_err(|e| (format!("seed_csv: {e}"), FILES_HINT))?;
            if let Some(bad) = data.columns.iter().find(|c| !is_name(c)) {
                return Err((format!("seed_csv {}: column `{bad}` is not a column name", c.file), "letters, digits and _ only"));
            }
            seed_csv.push(CsvSeed { table: c.table.clone(), data });
        }
        Ok(Database {
            schema: read(schema, "schema")?,
            schema_postgres: self.schema_postgres.as_deref().map(|p| read(p, "schema_postgres")).transpose()?,
            seed: self.seed.as_deref().map(|p| read(p, "seed")).transpose()?,
            seed_csv,
        })
    }
}

const FILES_HINT: &str = "paths are relative to the scenario file; check the name";

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Database {
    /// The script that makes the database in `engine`: the schema, the seed, then each CSV file's
    /// rows as INSERTs (an empty field is NULL; the others are text literals, which both engines
    /// convert to the column's type).
    pub fn script(&self, engine: Engine) -> String {
        let schema = match (engine, &self.schema_postgres) {
            (Engine::Postgres, Some(pg)) => pg,
            _ => &self.schema,
        };
        let mut out = format!("{}\n", schema.text);
        if let Some(seed) = &self.seed {
            out += &format!("{}\n", seed.text);
        }
        for c in &self.seed_csv {
            let columns: Vec<String> = c.data.columns.iter().map(|n| format!("\"{n}\"")).collect();
            for row in &c.data.rows {
                let values: Vec<String> = row.iter().map(|v| if v.is_empty() { "NULL".into() } else { literal(v) }).collect();
                out += &format!("INSERT INTO \"{}\" ({}) VALUES ({});\n", c.table, columns.join(", "), values.join(", "));
            }
        }
        out
    }

    /// FNV-1a 64 of every file's contents (schema, PostgreSQL schema, seed, CSV rows), kept with a
    /// run beside the scenario file's own text hash.
    pub fn hash(&self) -> String {
        let mut all = self.schema.text.clone();
        for text in self.schema_postgres.iter().chain(&self.seed).map(|f| &f.text) {
            all += "\n\u{0}";
            all += text;
        }
        all += &self.script(Engine::Sqlite);
        format!("{:016x}", bakeoff_load::fnv1a64(all.as_bytes()))
    }
}

/// `text` as a SQL string literal.
pub fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// `sql` with every placeholder a SQL literal: an integer as a number, anything else as a quoted
/// string, so `WHERE id = {{id}}` and `WHERE name = {{name}}` need no quotes of their own (and a
/// drawn value cannot break out of its literal).
pub fn render_sql(sql: &Template, values: &BTreeMap<String, Value>) -> String {
    sql.render_each(|p| match values.get(&p.var) {
        Some(Value::Int(n)) => n.to_string(),
        _ => literal(&p.render(values)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_literals_and_csv_rows_inserts() {
        let t = Template::parse("SELECT * FROM items WHERE id = {{id}} AND name = {{name}}").unwrap();
        let values = BTreeMap::from([("id".to_string(), Value::Int(3)), ("name".to_string(), Value::Text("o'k".into()))]);
        assert_eq!(render_sql(&t, &values), "SELECT * FROM items WHERE id = 3 AND name = 'o''k'");
        let data = DataFile {
            path: "items.csv".into(),
            columns: vec!["id".into(), "name".into()],
            rows: vec![vec!["1".into(), "".into()]],
            pick: Pick::Cycle,
        };
        let db = Database {
            schema: SqlFile { path: "s.sql".into(), text: "CREATE TABLE items (id INTEGER, name TEXT);".into() },
            schema_postgres: Some(SqlFile { path: "p.sql".into(), text: "CREATE TABLE items (id BIGINT, name TEXT);".into() }),
            seed: None,
            seed_csv: vec![CsvSeed { table: "items".into(), data }],
        };
        let script = db.script(Engine::Sqlite);
        assert!(script.starts_with("CREATE TABLE items (id INTEGER"), "{script}");
        assert!(script.contains("INSERT INTO \"items\" (\"id\", \"name\") VALUES ('1', NULL);"), "{script}");
        assert!(db.script(Engine::Postgres).contains("BIGINT"));
        let mut other = db.clone();
        other.seed_csv[0].data.rows[0][0] = "2".into();
        assert_ne!(db.hash(), other.hash(), "the seed's rows are part of the hash");
    }
}
