//! bakeoff's results store: one SQLite file (default `results/bakeoff.db`) holding every run with its
//! provenance, verifications, trials and memory samples. Each trial is committed on its own (WAL), so
//! a killed run keeps every trial that finished. The reports read it back through `load_run`.

#![warn(missing_docs)]

mod error;
mod read;
mod schema;
mod write;

pub use bakeoff_model::now_rfc3339;
pub use bakeoff_model::records::run_data::RunData;
pub use error::StoreError;
pub use read::RunListing;
pub use schema::SCHEMA_VERSION;

use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// Where `bakeoff run` writes and `bakeoff report` reads unless told otherwise.
pub const DEFAULT_PATH: &str = "results/bakeoff.db";

/// An open results file. Implements `bakeoff_model::records::results::ResultSink` for writing.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating it and its parent folders if needed) and migrates the file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir { path: parent.display().to_string(), source })?;
        }
        let conn = Connection::open(&path)?;
        Store::setup(conn, path)
    }

    /// Opens `DEFAULT_PATH` relative to the current directory.
    pub fn open_default() -> Result<Store, StoreError> {
        Store::open(DEFAULT_PATH)
    }

    /// A store that lives in memory only (tests, dry runs).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Store::setup(Connection::open_in_memory()?, PathBuf::from(":memory:"))
    }

    fn setup(mut conn: Connection, path: PathBuf) -> Result<Store, StoreError> {
        // WAL: a commit is one append to the log, readers (a report during a run) don't block the
        // writer. synchronous=FULL because a trial costs seconds to make and microseconds to sync.
        // busy_timeout: a concurrent reader or writer waits instead of failing at once.
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        schema::migrate(&mut conn, &path.display().to_string())?;
        Ok(Store { conn, path })
    }

    /// The file this store reads and writes (`:memory:` for an in-memory store).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open file (always `SCHEMA_VERSION` once opened).
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        schema::version(&self.conn)
    }
}
