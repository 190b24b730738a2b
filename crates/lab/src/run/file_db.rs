//! A scenario file's own database for one server start: made afresh from the file's schema and
//! seed before the server starts (a SQLite file in the start's directory), so nothing a trial
//! writes reaches the next; and the handle verification queries and changes it through.

use crate::contract::verify::{FileDatabase, SqliteDatabase};
use crate::error::LabError;
use crate::run::runner::Lab;
use crate::stacks::manifest::{Stack, StackKind, Variant};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::workload::Workload;
use std::path::{Path, PathBuf};

/// The SQLite file of scenario file `name` in a start's directory (never `products.sqlite`, which
/// a stack of the built-in scenarios may be given beside it).
fn sqlite_path(cell_dir: &Path, name: &str) -> PathBuf {
    cell_dir.join(format!("file-{name}.sqlite"))
}

impl Lab<'_> {
    /// The scenario file among `scenarios` that has a database of its own (a start serves at most
    /// one: [`Lab::verify_variant`] starts each apart, a trial measures one scenario).
    pub(crate) fn database_file(&self, scenarios: &[Scenario]) -> Option<&Workload> {
        scenarios.iter().filter_map(|&s| self.settings.scenario_file(s)).map(|f| &*f.workload).find(|w| w.database.is_some())
    }

    /// Makes the database of the start `label` for the file among `scenarios` that has one, and
    /// returns its DATABASE_URL; None when no file needs one.
    pub(crate) fn make_file_db(&self, scenarios: &[Scenario], _variant: &Variant, label: &str) -> Result<Option<String>, LabError> {
        let Some(workload) = self.database_file(scenarios) else { return Ok(None) };
        let database = workload.database.as_ref().expect("database_file finds a file with a database");
        let path = sqlite_path(&self.cell_dir(label), &workload.name);
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
    pub(crate) fn file_db(&self, stack: &Stack, _variant: &Variant, label: &str, scenarios: &[Scenario]) -> Option<Box<dyn FileDatabase>> {
        if stack.unmanaged.is_some() || stack.kind == StackKind::Baseline {
            return None;
        }
        let workload = self.database_file(scenarios)?;
        let path = sqlite_path(&self.cell_dir(label), &workload.name);
        path.exists().then(|| Box::new(SqliteDatabase { path }) as Box<dyn FileDatabase>)
    }
}
