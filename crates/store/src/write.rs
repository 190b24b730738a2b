//! Writing side: the store as the lab's `ResultSink`. Every call is one transaction committed before
//! it returns, so whatever the lab was told is saved is on disk when the process dies.

use crate::{Store, StoreError};
use bakeoff_model::error::{Saving, SinkError};
use bakeoff_model::records::profile::WhatRan;
use bakeoff_model::records::results::{CeilingRecord, ResultSink, RunInfo, TrialRecord, Verdict, VerifyReport};
use bakeoff_model::RunStatus;
use rusqlite::params;

impl Store {
    /// A new run, marked running; a run id already stored is an error.
    pub fn insert_run(&mut self, run: &RunInfo) -> Result<(), StoreError> {
        let exists: bool = self.conn.query_row("SELECT EXISTS(SELECT 1 FROM runs WHERE id = ?1)", [&run.id], |r| r.get(0))?;
        if exists {
            return Err(StoreError::DuplicateRun(run.id.clone()));
        }
        let m = &run.machine;
        self.conn.execute(
            "INSERT INTO runs (id, started_at, finished_at, status, git_commit, study, hostname, cpu_model, cores,
                               kernel, memory_bytes, os, settings_json, services_json)
             VALUES (?1, ?2, NULL, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                run.id,
                run.started_at,
                RunStatus::Running.to_string(),
                run.git_commit,
                run.study,
                m.hostname,
                m.cpu_model,
                m.cores,
                m.kernel,
                m.memory_bytes,
                m.os,
                serde_json::to_string(&run.settings)?,
                serde_json::to_string(&run.services)?,
            ],
        )?;
        Ok(())
    }

    /// One stack variant's verification report with all its checks, in one transaction.
    pub fn insert_verification(&mut self, run_id: &str, report: &VerifyReport) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO verifications (run_id, stack, variant) VALUES (?1, ?2, ?3)",
            params![run_id, report.stack, report.variant],
        )?;
        let id = tx.last_insert_rowid();
        for (seq, c) in report.checks.iter().enumerate() {
            tx.execute(
                "INSERT INTO verification_checks (verification_id, seq, scenario, verdict, what, url, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![id, seq as i64, c.scenario.to_string(), verdict_str(c.verdict), c.what, c.url, c.reason],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// One transaction: the trial row and all its samples, or nothing.
    pub fn insert_trial(&mut self, t: &TrialRecord) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        let s = &t.server;
        tx.execute(
            "INSERT INTO trials (run_id, stack, scenario, variant, workers, trial, started_at, load_json,
                                 server_cpu_s, server_cpu_percent, server_cpu_us_per_request,
                                 server_peak_rss_bytes, server_mean_rss_bytes, server_peak_pss_bytes,
                                 server_mean_pss_bytes, server_rss_slope_mib_per_min, warnings_json,
                                 twin, elapsed_s, noise_json, slo_json, launch, step_usage_json, under_load_json,
                                 joint_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
            params![
                t.run_id,
                t.cell.stack,
                t.cell.scenario.id(),
                t.cell.variant,
                t.cell.workers,
                t.trial,
                t.started_at,
                serde_json::to_string(&t.load)?,
                s.cpu_s,
                s.cpu_percent,
                s.cpu_us_per_request,
                s.peak_rss_bytes,
                s.mean_rss_bytes,
                s.peak_pss_bytes,
                s.mean_pss_bytes,
                s.rss_slope_mib_per_min,
                serde_json::to_string(&t.warnings)?,
                t.cell.twin,
                t.elapsed_s,
                t.noise.as_ref().map(serde_json::to_string).transpose()?,
                t.slo.as_ref().map(serde_json::to_string).transpose()?,
                t.launch,
                (!t.step_usage.is_empty()).then(|| serde_json::to_string(&t.step_usage)).transpose()?,
                t.under_load.as_ref().map(serde_json::to_string).transpose()?,
                t.joint.as_ref().map(serde_json::to_string).transpose()?,
            ],
        )?;
        let id = tx.last_insert_rowid();
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO samples (trial_id, seq, t_ms, rss_bytes, pss_bytes, cpu_s, processes)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for (seq, p) in t.samples.iter().enumerate() {
                stmt.execute(params![id, seq as i64, p.t_ms, p.rss_bytes, p.pss_bytes, p.cpu_s, p.processes])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// One store ceiling of a run.
    pub fn insert_ceiling(&mut self, c: &CeilingRecord) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO ceilings (run_id, store, scenario, client, connections, duration_s, queries,
                                   queries_per_sec, mean_latency_us, p99_latency_us)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                c.run_id,
                c.store.id(),
                c.scenario.id(),
                c.client,
                c.connections,
                c.duration_s,
                c.queries,
                c.queries_per_sec,
                c.mean_latency_us,
                c.p99_latency_us,
            ],
        )?;
        Ok(())
    }

    /// What ran for each stack variant of a run.
    pub fn insert_what_ran(&mut self, run_id: &str, what: &[WhatRan]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        for w in what {
            let p = w.profile.as_ref();
            tx.execute(
                "INSERT INTO what_ran (run_id, stack, variant, runtime, framework, server, server_model, json_library,
                                       msgpack_library, database_library, pool, workers_json, pool_size, components_json,
                                       protocol, tls)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                params![
                    run_id,
                    w.stack,
                    w.variant,
                    w.runtime,
                    w.framework,
                    w.server,
                    p.map(|p| p.server_model.id()),
                    p.map(|p| &p.json),
                    p.map(|p| &p.msgpack),
                    p.map(|p| &p.database),
                    p.map(|p| &p.pool),
                    serde_json::to_string(&w.workers)?,
                    w.pool_size,
                    serde_json::to_string(&w.components)?,
                    w.protocol.id(),
                    w.tls,
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Marks the run finished now with `status`.
    pub fn set_finished(&mut self, run_id: &str, status: &RunStatus) -> Result<(), StoreError> {
        let n = self.conn.execute(
            "UPDATE runs SET status = ?2, finished_at = ?3 WHERE id = ?1",
            params![run_id, status.to_string(), crate::now_rfc3339()],
        )?;
        if n == 0 {
            return Err(StoreError::RunNotFound(run_id.to_string()));
        }
        Ok(())
    }
}

pub(crate) fn verdict_str(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Warn => "warn",
        Verdict::Fail => "fail",
    }
}

impl ResultSink for Store {
    fn begin_run(&mut self, run: &RunInfo) -> Result<(), SinkError> {
        self.insert_run(run).map_err(|e| e.saving(Saving::Run { run_id: run.id.clone() }))
    }
    fn record_verification(&mut self, run_id: &str, report: &VerifyReport) -> Result<(), SinkError> {
        self.insert_verification(run_id, report).map_err(|e| {
            e.saving(Saving::Verification { run_id: run_id.into(), stack: report.stack.clone(), variant: report.variant.clone() })
        })
    }
    fn record_trial(&mut self, trial: &TrialRecord) -> Result<(), SinkError> {
        self.insert_trial(trial).map_err(|e| {
            let c = &trial.cell;
            let cell = format!("{}[{}] {}", c.stack, c.variant, c.scenario.id());
            e.saving(Saving::Trial { run_id: trial.run_id.clone(), cell, trial: trial.trial })
        })
    }
    fn finish_run(&mut self, run_id: &str, status: &RunStatus) -> Result<(), SinkError> {
        self.set_finished(run_id, status).map_err(|e| e.saving(Saving::Finish { run_id: run_id.into() }))
    }
    fn record_ceiling(&mut self, c: &CeilingRecord) -> Result<(), SinkError> {
        self.insert_ceiling(c).map_err(|e| e.saving(Saving::Ceiling { run_id: c.run_id.clone(), store: c.store.id().into() }))
    }
    fn record_what_ran(&mut self, run_id: &str, what: &[WhatRan]) -> Result<(), SinkError> {
        self.insert_what_ran(run_id, what).map_err(|e| e.saving(Saving::WhatRan { run_id: run_id.into() }))
    }
}
