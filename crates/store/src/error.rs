//! The store's errors, each with what to do about it; as a `ResultSink` it hands them on as a
//! `SinkError` that also says what was being saved.

use bakeoff_model::error::{Saving, SinkError};

/// What went wrong opening, reading or writing the results file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file's schema is newer than this build knows.
    #[error("{path} was written by a newer bakeoff (schema version {found}; this build reads up to {supported}); upgrade bakeoff or use another --db file")]
    NewerSchema {
        /// The results file.
        path: String,
        /// Its schema version.
        found: u32,
        /// The newest this build reads (`SCHEMA_VERSION`).
        supported: u32,
    },
    /// No run with this id.
    #[error("no run {0:?} in the results store\n  hint: `bakeoff runs` lists them")]
    RunNotFound(String),
    /// A run with this id is stored already.
    #[error("run {0:?} is already in the results store; run ids are unique")]
    DuplicateRun(String),
    /// A stored value that this build cannot read back.
    #[error("the results store is damaged: {0}")]
    Corrupt(String),
    /// The folder of a new results file could not be made.
    #[error("cannot create the folder of the results store {path}: {source}")]
    CreateDir {
        /// The folder.
        path: String,
        /// Why it could not be made.
        source: std::io::Error,
    },
    /// SQLite failed (the file is locked, full, unreadable...).
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// A JSON column does not parse or serialize.
    #[error("a stored JSON column does not parse: {0}")]
    Json(#[from] serde_json::Error),
}

impl StoreError {
    /// What to do when this error stops a write.
    pub fn hint(&self) -> &'static str {
        match self {
            StoreError::NewerSchema { .. } => "upgrade bakeoff, or write to another --db file",
            StoreError::RunNotFound(_) => "a run is begun before anything of it is saved; `bakeoff runs` lists the stored ones",
            StoreError::DuplicateRun(_) => "start a new run (ids are made fresh per run), or write to another --db file",
            StoreError::Corrupt(_) => "move the damaged file aside and write to a fresh --db file",
            StoreError::CreateDir { .. } => "check the permissions of the folder, or pass another --db path",
            StoreError::Sqlite(_) => "check the results file: free space beside it, its permissions, and no other program writing it",
            StoreError::Json(_) => "a result that does not serialize is a bug in bakeoff; please report it",
        }
    }

    /// This error as the `ResultSink` reports it: what was being saved, why it failed, what to do.
    pub fn saving(self, saving: Saving) -> SinkError {
        let hint = self.hint();
        SinkError::new(saving, self, hint)
    }
}
