//! Reading side: runs listed, and one run loaded whole, exactly as the lab handed it over.

use crate::{Store, StoreError};
use bakeoff_model::records::profile::{ServerModel, StackProfile, WhatRan};
use bakeoff_model::records::results::{
    CeilingRecord, CellKey, Check, LabWarning, MachineInfo, ProcessSample, RunInfo, ServerUsage, TrialRecord, Verdict, VerifyReport,
};
use bakeoff_model::records::run_data::RunData;
use bakeoff_model::RunStatus;
use rusqlite::{OptionalExtension, Row};
use serde::{Deserialize, Serialize};

/// One line of `list_runs`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunListing {
    /// The run's id.
    pub id: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// RFC 3339 UTC; None while running, or when the run was killed.
    pub finished_at: Option<String>,
    /// How the run ended, or `running`.
    pub status: RunStatus,
    /// The study name, `adhoc` for a run from flags, `verify` for a run of checks only.
    pub study: String,
    /// The commit the run was made from, if known.
    pub git_commit: Option<String>,
    /// Trials stored for the run.
    pub trials: u64,
}

impl Store {
    /// Every run, newest first.
    pub fn list_runs(&self) -> Result<Vec<RunListing>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT r.id, r.started_at, r.finished_at, r.status, r.study, r.git_commit,
                    (SELECT COUNT(*) FROM trials t WHERE t.run_id = r.id)
             FROM runs r ORDER BY r.started_at DESC, r.rowid DESC",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(RunListing {
                id: r.get(0)?,
                started_at: r.get(1)?,
                finished_at: r.get(2)?,
                status: named(r, 3)?,
                study: r.get(4)?,
                git_commit: r.get(5)?,
                trials: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The run that started last, if any.
    pub fn latest_run_id(&self) -> Result<Option<String>, StoreError> {
        Ok(self.conn.query_row("SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1", [], |r| r.get(0)).optional()?)
    }

    /// The run a report shows by default: the newest run with at least one measured trial, so a
    /// `bakeoff verify` (a run of checks only) does not hide the last study; the newest run of any
    /// kind when none has trials.
    pub fn default_report_run_id(&self) -> Result<Option<String>, StoreError> {
        let measured = self
            .conn
            .query_row(
                "SELECT r.id FROM runs r WHERE EXISTS (SELECT 1 FROM trials t WHERE t.run_id = r.id)
                 ORDER BY r.started_at DESC, r.rowid DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?;
        match measured {
            Some(id) => Ok(Some(id)),
            None => self.latest_run_id(),
        }
    }

    /// Run `id` whole: its provenance, verifications, trials with their samples, ceilings and
    /// what ran, exactly as the lab handed them over.
    pub fn load_run(&self, id: &str) -> Result<RunData, StoreError> {
        let (run, status, finished_at) = self
            .conn
            .query_row(
                "SELECT id, started_at, finished_at, status, git_commit, study, hostname, cpu_model, cores, kernel,
                        memory_bytes, os, settings_json, services_json FROM runs WHERE id = ?1",
                [id],
                run_row,
            )
            .optional()?
            .ok_or_else(|| StoreError::RunNotFound(id.to_string()))?;
        let run = RunInfo { settings: serde_json::from_str(&run.settings)?, services: serde_json::from_str(&run.services)?, ..run.info };
        Ok(RunData {
            run,
            status,
            finished_at,
            verifications: self.verifications(id)?,
            trials: self.trials(id)?,
            ceilings: self.ceilings(id)?,
            what_ran: self.what_ran(id)?,
        })
    }

    fn what_ran(&self, run_id: &str) -> Result<Vec<WhatRan>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT stack, variant, runtime, framework, server, server_model, json_library, msgpack_library,
                    database_library, pool, workers_json, pool_size, components_json, protocol, tls
             FROM what_ran WHERE run_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            Ok((
                WhatRan {
                    stack: r.get(0)?,
                    variant: r.get(1)?,
                    runtime: r.get(2)?,
                    framework: r.get(3)?,
                    server: r.get(4)?,
                    profile: None,
                    workers: Vec::new(),
                    pool_size: r.get(11)?,
                    components: Vec::new(),
                    protocol: Default::default(),
                    tls: r.get(14)?,
                },
                (r.get::<_, Option<String>>(5)?, r.get::<_, Option<String>>(6)?, r.get::<_, Option<String>>(7)?),
                (r.get::<_, Option<String>>(8)?, r.get::<_, Option<String>>(9)?),
                (r.get::<_, String>(10)?, r.get::<_, String>(12)?, r.get::<_, Option<String>>(13)?),
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (mut w, (model, json, msgpack), (database, pool), (workers, components, protocol)) = row?;
            w.workers = serde_json::from_str(&workers)?;
            w.protocol = match protocol {
                Some(p) => p.parse().map_err(|e: String| StoreError::Corrupt(format!("what_ran.protocol: {e}")))?,
                None => Default::default(),
            };
            w.components = serde_json::from_str(&components)?;
            w.profile = match model {
                Some(m) => Some(StackProfile {
                    server_model: ServerModel::parse(&m).map_err(StoreError::Corrupt)?,
                    json: json.unwrap_or_default(),
                    msgpack: msgpack.unwrap_or_default(),
                    database: database.unwrap_or_default(),
                    pool: pool.unwrap_or_default(),
                }),
                None => None,
            };
            out.push(w);
        }
        Ok(out)
    }

    fn ceilings(&self, run_id: &str) -> Result<Vec<CeilingRecord>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT run_id, store, scenario, client, connections, duration_s, queries, queries_per_sec,
                    mean_latency_us, p99_latency_us
             FROM ceilings WHERE run_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            Ok(CeilingRecord {
                run_id: r.get(0)?,
                store: named(r, 1)?,
                scenario: named(r, 2)?,
                client: r.get(3)?,
                connections: r.get(4)?,
                duration_s: real(r, 5)?,
                queries: r.get(6)?,
                queries_per_sec: real(r, 7)?,
                mean_latency_us: real(r, 8)?,
                p99_latency_us: r.get(9)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn verifications(&self, run_id: &str) -> Result<Vec<VerifyReport>, StoreError> {
        let mut stmt = self.conn.prepare("SELECT id, stack, variant FROM verifications WHERE run_id = ?1 ORDER BY id")?;
        let heads: Vec<(i64, String, String)> =
            stmt.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<_, _>>()?;
        let mut checks = self
            .conn
            .prepare("SELECT scenario, verdict, what, url, reason FROM verification_checks WHERE verification_id = ?1 ORDER BY seq")?;
        let mut out = Vec::with_capacity(heads.len());
        for (id, stack, variant) in heads {
            let rows = checks.query_map([id], |r| Ok((named(r, 0)?, r.get::<_, String>(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?;
            let mut list = Vec::new();
            for row in rows {
                let (scenario, verdict, what, url, reason) = row?;
                list.push(Check { scenario, verdict: parse_verdict(&verdict)?, what, url, reason });
            }
            out.push(VerifyReport { stack, variant, checks: list });
        }
        Ok(out)
    }

    fn trials(&self, run_id: &str) -> Result<Vec<TrialRecord>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT id, run_id, stack, scenario, variant, workers, trial, started_at, load_json,
                    server_cpu_s, server_cpu_percent, server_cpu_us_per_request, server_peak_rss_bytes,
                    server_mean_rss_bytes, server_peak_pss_bytes, server_mean_pss_bytes,
                    server_rss_slope_mib_per_min, warnings_json, twin, elapsed_s, noise_json, slo_json, launch, step_usage_json, under_load_json,
                    joint_json
             FROM trials WHERE run_id = ?1 ORDER BY id",
        )?;
        let rows: Vec<(i64, StoredTrial)> = stmt.query_map([run_id], trial_row)?.collect::<Result<_, _>>()?;
        let mut samples =
            self.conn.prepare("SELECT t_ms, rss_bytes, pss_bytes, cpu_s, processes FROM samples WHERE trial_id = ?1 ORDER BY seq")?;
        let mut out = Vec::with_capacity(rows.len());
        for (id, t) in rows {
            let s: Vec<ProcessSample> = samples
                .query_map([id], |r| {
                    Ok(ProcessSample {
                        t_ms: r.get(0)?,
                        rss_bytes: r.get(1)?,
                        pss_bytes: r.get(2)?,
                        cpu_s: real(r, 3)?,
                        processes: r.get(4)?,
                    })
                })?
                .collect::<Result<_, _>>()?;
            let warnings: Vec<LabWarning> = serde_json::from_str(&t.warnings_json)?;
            out.push(TrialRecord {
                run_id: t.run_id,
                cell: t.cell,
                trial: t.trial,
                started_at: t.started_at,
                load: serde_json::from_str(&t.load_json)?,
                server: t.server,
                samples: s,
                warnings,
                noise: t.noise_json.as_deref().map(serde_json::from_str).transpose()?,
                // Trials stored before version 3 have no wall time: NULL reads back as NaN.
                elapsed_s: t.elapsed_s,
                slo: t.slo_json.as_deref().map(serde_json::from_str).transpose()?,
                launch: t.launch,
                step_usage: t.step_usage_json.as_deref().map(serde_json::from_str).transpose()?.unwrap_or_default(),
                under_load: t.under_load_json.as_deref().map(serde_json::from_str).transpose()?,
                joint: t.joint_json.as_deref().map(serde_json::from_str).transpose()?,
            });
        }
        Ok(out)
    }
}

struct StoredRun {
    info: RunInfo,
    settings: String,
    services: String,
}

fn run_row(r: &Row) -> rusqlite::Result<(StoredRun, RunStatus, Option<String>)> {
    let info = RunInfo {
        id: r.get(0)?,
        started_at: r.get(1)?,
        git_commit: r.get(4)?,
        study: r.get(5)?,
        machine: MachineInfo {
            hostname: r.get(6)?,
            cpu_model: r.get(7)?,
            cores: r.get(8)?,
            kernel: r.get(9)?,
            memory_bytes: r.get(10)?,
            os: r.get(11)?,
        },
        settings: serde_json::Value::Null,
        services: Vec::new(),
    };
    Ok((StoredRun { info, settings: r.get(12)?, services: r.get(13)? }, named(r, 3)?, r.get(2)?))
}

struct StoredTrial {
    run_id: String,
    cell: CellKey,
    trial: u32,
    started_at: String,
    load_json: String,
    server: ServerUsage,
    warnings_json: String,
    elapsed_s: f64,
    noise_json: Option<String>,
    slo_json: Option<String>,
    launch: Option<u32>,
    step_usage_json: Option<String>,
    under_load_json: Option<String>,
    joint_json: Option<String>,
}

fn trial_row(r: &Row) -> rusqlite::Result<(i64, StoredTrial)> {
    Ok((
        r.get(0)?,
        StoredTrial {
            run_id: r.get(1)?,
            cell: CellKey { stack: r.get(2)?, scenario: named(r, 3)?, variant: r.get(4)?, workers: r.get(5)?, twin: r.get(18)? },
            trial: r.get(6)?,
            started_at: r.get(7)?,
            load_json: r.get(8)?,
            server: ServerUsage {
                cpu_s: real(r, 9)?,
                cpu_percent: real(r, 10)?,
                cpu_us_per_request: real(r, 11)?,
                peak_rss_bytes: r.get(12)?,
                mean_rss_bytes: r.get(13)?,
                peak_pss_bytes: r.get(14)?,
                mean_pss_bytes: r.get(15)?,
                rss_slope_mib_per_min: real(r, 16)?,
            },
            warnings_json: r.get(17)?,
            elapsed_s: real(r, 19)?,
            noise_json: r.get(20)?,
            slo_json: r.get(21)?,
            launch: r.get(22)?,
            step_usage_json: r.get(23)?,
            under_load_json: r.get(24)?,
            joint_json: r.get(25)?,
        },
    ))
}

fn parse_verdict(s: &str) -> Result<Verdict, StoreError> {
    match s {
        "pass" => Ok(Verdict::Pass),
        "warn" => Ok(Verdict::Warn),
        "fail" => Ok(Verdict::Fail),
        other => Err(StoreError::Corrupt(format!("unknown verdict {other:?}"))),
    }
}

/// A TEXT column holding one of the model's names (scenario, store, status, check scope); a name
/// this build does not know is a conversion error naming the column, not a silent default.
fn named<T: std::str::FromStr<Err = String>>(r: &Row, i: usize) -> rusqlite::Result<T> {
    let text: String = r.get(i)?;
    text.parse().map_err(|e: String| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into()))
}

/// SQLite stores NaN as NULL, so REAL columns are nullable and NULL reads back as NaN.
fn real(r: &Row, i: usize) -> rusqlite::Result<f64> {
    Ok(r.get::<_, Option<f64>>(i)?.unwrap_or(f64::NAN))
}
