//! A scenario file's own database for one server start: made afresh from the file's schema and
//! seed before the server starts (a SQLite file in the start's directory, or for a variant of
//! `database = "postgres"` a database of the lab's PostgreSQL, dropped once the server stopped),
//! so nothing a trial writes reaches the next; and the handle verification queries and changes it
//! through.

use crate::contract::verify::{FileDatabase, SqliteDatabase};
use crate::error::LabError;
use crate::run::cell::bench::CellBench;
use crate::run::cell::dirs::LabDirs;
use crate::run::planning::settings::LoadSettings;
use crate::services::postgres::Postgres;
use crate::stacks::manifest::{Database, Stack, StackKind, Variant};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::workload::Workload;
use std::path::{Path, PathBuf};

/// The SQLite file of scenario file `name` in a start's directory (never `products.sqlite`, which
/// a stack of the built-in scenarios may be given beside it).
fn sqlite_path(cell_dir: &Path, name: &str) -> PathBuf {
    cell_dir.join(format!("file-{name}.sqlite"))
}

/// The PostgreSQL script of a start, written when its database is made there: its presence says
/// there is a database to drop.
fn postgres_script(cell_dir: &Path) -> PathBuf {
    cell_dir.join("file-database.postgres.sql")
}

/// The PostgreSQL database of the start `label`: `file_` and the label in lower case, letters,
/// digits and `_` only, within PostgreSQL's 63 bytes (the label's leading start number keeps it
/// unique).
fn postgres_name(label: &str) -> String {
    let clean: String = label.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    format!("file_{clean}").chars().take(63).collect()
}

/// The scenario files' databases as the run's starts get them: from the run's files, in its
/// PostgreSQL or in a start's directory.
pub(crate) struct FileDbs<'b> {
    settings: &'b LoadSettings,
    postgres: Option<&'b Postgres>,
    dirs: &'b LabDirs,
}

impl CellBench<'_> {
    /// The run's scenario files' databases.
    pub(crate) fn file_dbs(&self) -> FileDbs<'_> {
        FileDbs { settings: &self.settings, postgres: self.services.postgres.as_ref(), dirs: &self.dirs }
    }
}

impl<'b> FileDbs<'b> {
    /// The scenario file among `scenarios` that has a database of its own (a start serves at most
    /// one: [`CellBench::verify_variant`] starts each apart, a trial measures one scenario).
    pub(crate) fn file_of(&self, scenarios: &[Scenario]) -> Option<&'b Workload> {
        scenarios.iter().filter_map(|&s| self.settings.scenario_file(s)).map(|f| &*f.workload).find(|w| w.database.is_some())
    }

    /// Makes the database of the start `label` for the file among `scenarios` that has one, and
    /// returns its DATABASE_URL; None when no file needs one.
    pub(crate) fn make(&self, scenarios: &[Scenario], variant: &Variant, label: &str) -> Result<Option<String>, LabError> {
        let Some(workload) = self.file_of(scenarios) else { return Ok(None) };
        let database = workload.database.as_ref().expect("file_of finds a file with a database");
        let cell_dir = self.dirs.cell_dir(label);
        if variant.database == Some(Database::Postgres) {
            let pg = self.postgres.ok_or_else(|| {
                LabError::Selection(format!(
                    "scenario file `{}` needs PostgreSQL for {} and it was not started",
                    workload.name, variant.name
                ))
            })?;
            return pg.create_database(&postgres_name(label), database, &postgres_script(&cell_dir)).map(Some);
        }
        let path = sqlite_path(&cell_dir, &workload.name);
        SqliteDatabase::create(&path, database).map_err(|problem| LabError::Input {
            what: format!("scenario file `{}`: [database]", workload.name),
            problem,
            hint: "check the schema and seed with `sqlite3 :memory: < schema.sql`, then the seed".into(),
        })?;
        Ok(Some(format!("sqlite://{}", path.display())))
    }

    /// The database the start `label` of `stack` was given for a file among `scenarios`, for
    /// verification to query and change; None when there is none, or the lab did not start the
    /// server (an unmanaged one, a baseline), so the database is not the one it reads.
    pub(crate) fn handle(
        &self,
        stack: &Stack,
        variant: &Variant,
        label: &str,
        scenarios: &[Scenario],
    ) -> Option<Box<dyn FileDatabase + 'b>> {
        if stack.unmanaged.is_some() || stack.kind == StackKind::Baseline {
            return None;
        }
        let workload = self.file_of(scenarios)?;
        let cell_dir = self.dirs.cell_dir(label);
        if variant.database == Some(Database::Postgres) {
            let pg = self.postgres.filter(|_| postgres_script(&cell_dir).exists())?;
            return Some(Box::new(pg.database(&postgres_name(label))));
        }
        let path = sqlite_path(&cell_dir, &workload.name);
        path.exists().then(|| Box::new(SqliteDatabase { path }) as Box<dyn FileDatabase>)
    }

    /// Drops the PostgreSQL database of the start `label`, if one was made, once its server
    /// stopped (a SQLite file stays in the start's directory, with its log).
    pub(crate) fn drop(&self, label: &str) {
        if let (Some(pg), true) = (self.postgres, postgres_script(&self.dirs.cell_dir(label)).exists()) {
            // A database left behind costs disk only; the run goes on.
            let _ = pg.drop_database(&postgres_name(label));
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_postgres_name_is_the_label_made_an_identifier() {
        assert_eq!(super::postgres_name("003-go-nethttp-Pg"), "file_003_go_nethttp_pg");
        assert_eq!(super::postgres_name(&format!("001-{}", "x".repeat(100))).len(), 63);
    }
}
