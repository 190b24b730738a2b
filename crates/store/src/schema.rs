//! The store's schema as numbered migrations, and the check that refuses a file written by a newer
//! bakeoff (reading it with old code could silently drop columns it does not know).

use crate::StoreError;
use rusqlite::{Connection, OptionalExtension};

/// The schema version this build writes and reads. docs/results-schema.md documents each version.
pub const SCHEMA_VERSION: u32 = 10;

/// `MIGRATIONS[i]` takes a database from version `i` to `i + 1`. Append, never edit: files in the
/// wild were made by the old entries.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: the first schema.
    r#"
    CREATE TABLE runs (
        id            TEXT PRIMARY KEY,
        started_at    TEXT NOT NULL,
        finished_at   TEXT,
        status        TEXT NOT NULL,
        git_commit    TEXT,
        study         TEXT NOT NULL,
        hostname      TEXT NOT NULL,
        cpu_model     TEXT NOT NULL,
        cores         INTEGER NOT NULL,
        kernel        TEXT NOT NULL,
        memory_bytes  INTEGER NOT NULL,
        os            TEXT NOT NULL,
        settings_json TEXT NOT NULL,
        services_json TEXT NOT NULL
    );
    CREATE TABLE verifications (
        id      INTEGER PRIMARY KEY,
        run_id  TEXT NOT NULL REFERENCES runs(id),
        stack   TEXT NOT NULL,
        variant TEXT NOT NULL
    );
    CREATE INDEX verifications_run ON verifications(run_id);
    CREATE TABLE verification_checks (
        verification_id INTEGER NOT NULL REFERENCES verifications(id),
        seq      INTEGER NOT NULL,
        scenario TEXT NOT NULL,
        verdict  TEXT NOT NULL,
        what     TEXT NOT NULL,
        url      TEXT NOT NULL,
        reason   TEXT NOT NULL,
        PRIMARY KEY (verification_id, seq)
    );
    CREATE TABLE trials (
        id         INTEGER PRIMARY KEY,
        run_id     TEXT NOT NULL REFERENCES runs(id),
        stack      TEXT NOT NULL,
        scenario   TEXT NOT NULL,
        variant    TEXT NOT NULL,
        workers    INTEGER NOT NULL,
        trial      INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        load_json  TEXT NOT NULL,
        server_cpu_s                REAL,
        server_cpu_percent          REAL,
        server_cpu_us_per_request   REAL,
        server_peak_rss_bytes       INTEGER NOT NULL,
        server_mean_rss_bytes       INTEGER NOT NULL,
        server_peak_pss_bytes       INTEGER NOT NULL,
        server_mean_pss_bytes       INTEGER NOT NULL,
        server_rss_slope_mib_per_min REAL,
        warnings_json TEXT NOT NULL
    );
    CREATE INDEX trials_run ON trials(run_id);
    CREATE TABLE samples (
        trial_id  INTEGER NOT NULL REFERENCES trials(id),
        seq       INTEGER NOT NULL,
        t_ms      INTEGER NOT NULL,
        rss_bytes INTEGER NOT NULL,
        pss_bytes INTEGER NOT NULL,
        cpu_s     REAL,
        processes INTEGER NOT NULL,
        PRIMARY KEY (trial_id, seq)
    );
    "#,
    // 1 -> 2: store ceilings (a backing store's own throughput from a native client).
    r#"
    CREATE TABLE ceilings (
        id              INTEGER PRIMARY KEY,
        run_id          TEXT NOT NULL REFERENCES runs(id),
        store           TEXT NOT NULL,
        scenario        TEXT NOT NULL,
        client          TEXT NOT NULL,
        connections     INTEGER NOT NULL,
        duration_s      REAL,
        queries         INTEGER NOT NULL,
        queries_per_sec REAL,
        mean_latency_us REAL,
        p99_latency_us  REAL
    );
    CREATE INDEX ceilings_run ON ceilings(run_id);
    "#,
    // 2 -> 3: per-trial noise (steal and other processes' CPU on server and client CPUs), the
    // trial's wall time, and the A/A twin arm of a cell.
    r#"
    ALTER TABLE trials ADD COLUMN twin INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE trials ADD COLUMN elapsed_s REAL;
    ALTER TABLE trials ADD COLUMN noise_json TEXT;
    "#,
    // 3 -> 4: what ran per stack variant (server model, workers, pool, libraries, versions).
    r#"
    CREATE TABLE what_ran (
        id              INTEGER PRIMARY KEY,
        run_id          TEXT NOT NULL REFERENCES runs(id),
        stack           TEXT NOT NULL,
        variant         TEXT NOT NULL,
        runtime         TEXT NOT NULL,
        framework       TEXT NOT NULL,
        server          TEXT NOT NULL,
        server_model    TEXT,
        json_library    TEXT,
        msgpack_library TEXT,
        database_library TEXT,
        pool            TEXT,
        workers_json    TEXT NOT NULL,
        pool_size       INTEGER NOT NULL,
        components_json TEXT NOT NULL
    );
    CREATE INDEX what_ran_run ON what_ran(run_id);
    "#,
    // 4 -> 5: the SLO capacity search of a trial (objective, every step, what it found).
    "ALTER TABLE trials ADD COLUMN slo_json TEXT;",
    // 5 -> 6: the launch a block-schedule slice ran in (NULL for a trial with its own server).
    "ALTER TABLE trials ADD COLUMN launch INTEGER;",
    // 6 -> 7: the server's CPU per step of a multi-step trial (a ramp, a ladder).
    "ALTER TABLE trials ADD COLUMN step_usage_json TEXT;",
    // 7 -> 8: latency at fixed fractions of the trial's capacity (`latency_under_load`).
    "ALTER TABLE trials ADD COLUMN under_load_json TEXT;",
    // 8 -> 9: what a block-schedule slice's cell answered in its block's joint slice.
    "ALTER TABLE trials ADD COLUMN joint_json TEXT;",
    // 9 -> 10: the protocol a stack variant served, and over TLS what the lab set.
    r#"
    ALTER TABLE what_ran ADD COLUMN protocol TEXT;
    ALTER TABLE what_ran ADD COLUMN tls TEXT;
    "#,
];

/// Reads the file's version (0 for a new, empty file) and applies the missing migrations, each in
/// its own transaction with the version bump, so a crash mid-migration leaves the old version whole.
pub fn migrate(conn: &mut Connection, path: &str) -> Result<(), StoreError> {
    conn.execute_batch("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")?;
    let found = version(conn)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema { path: path.to_string(), found, supported: SCHEMA_VERSION });
    }
    for v in found..SCHEMA_VERSION {
        let tx = conn.transaction()?;
        tx.execute_batch(MIGRATIONS[v as usize])?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [(v + 1).to_string()],
        )?;
        tx.commit()?;
    }
    Ok(())
}

pub fn version(conn: &Connection) -> Result<u32, StoreError> {
    let v: Option<String> = conn.query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| r.get(0)).optional()?;
    match v {
        None => Ok(0),
        Some(s) => s.parse().map_err(|_| StoreError::Corrupt(format!("meta.schema_version is {s:?}"))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn there_is_one_migration_per_version() {
        assert_eq!(super::MIGRATIONS.len() as u32, super::SCHEMA_VERSION);
    }
}
