//! The store's contract: a run reads back exactly as written, a run whose process died keeps every
//! committed trial, and a file from a newer bakeoff is refused with a clear error.

use bakeoff_load::*;
use bakeoff_model::records::noise::{CpuSetNoise, HostNoise, OtherProcess, TrialNoise};
use bakeoff_model::records::results::*;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::slo::{LoadCurve, LoadPoint};
use bakeoff_model::statistics::pairing::JointSlice;
use bakeoff_model::RunStatus;
use bakeoff_store::{Store, StoreError, SCHEMA_VERSION};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn run(id: &str) -> RunInfo {
    RunInfo {
        id: id.into(),
        started_at: "2024-05-01T12:00:00Z".into(),
        git_commit: Some("abc123".into()),
        machine: MachineInfo {
            hostname: "h".into(),
            cpu_model: "cpu".into(),
            cores: 8,
            kernel: "6.1".into(),
            memory_bytes: 1 << 34,
            os: "Debian".into(),
        },
        study: "adhoc".into(),
        settings: serde_json::json!({"duration_s": 10.5, "nested": {"x": [1, 2]}}),
        services: vec!["postgres 15.18".into()],
    }
}

fn latency(base: f64) -> LatencyStats {
    LatencyStats {
        min_us: base * 0.5,
        mean_us: base * 1.1,
        stddev_us: base * 0.3,
        p50_us: base,
        p75_us: base * 1.2,
        p90_us: base * 1.5,
        p95_us: base * 2.0,
        p99_us: base * 3.0,
        p999_us: base * 7.0,
        p9999_us: base * 13.0,
        max_us: base * 40.0,
        tm99_us: base * 1.05,
        tm999_us: base * 1.07,
        count: 123_457,
    }
}

fn trial(run_id: &str, stack: &str, n: u32) -> TrialRecord {
    let step = StepReport {
        label: "64 connections".into(),
        connections: 64,
        target_rate: None,
        duration_s: 10.0,
        requests: 123_457,
        bytes: 9_876_543,
        requests_per_sec: 12_345.678_901_234_5,
        bytes_per_sec: 987_654.321_098_7,
        latency: latency(101.3 + n as f64),
        service_time: Some(latency(0.1 + 0.2)),
        errors: ErrorCounts { timeout: 2, status: BTreeMap::from([(500, 3)]), ..Default::default() },
        timeline: vec![TimelinePoint { second: 0, requests: 12_000, errors: 1, p50_us: 100.1, p99_us: 290.7 }],
        histogram: "HISTFAAAAB54nJNpmSzMwMDAxQABzFAaxmey+wBhAACGwwWd".into(),
        max_schedule_lag_ms: None,
        warnings: vec![Warning::HighErrorRate { step: "s".into(), errors: 5, attempts: 100, percent: 5.0 }],
        kinds: Vec::new(),
        logins: None,
        tls: None,
        h2: None,
    };
    TrialRecord {
        run_id: run_id.into(),
        cell: CellKey { stack: stack.into(), scenario: Scenario::Hello, variant: "default".into(), workers: 2, twin: n.is_multiple_of(2) },
        trial: n,
        started_at: format!("2024-05-01T12:0{n}:00Z"),
        load: LoadReport {
            schema_version: 1,
            plan: PlanSummary {
                urls: vec!["http://127.0.0.1:1/".into()],
                method: "GET".into(),
                connections: 64,
                threads: 2,
                schedule: ScheduleKind::Closed,
                rate: None,
                duration_s: Some(10.0),
                requests: None,
                warmup_s: 1.0 / 3.0,
                timeout_s: 10.0,
                pipeline: 1,
                close: false,
                requests_per_conn: None,
                tls: None,
                protocol: Default::default(),
                streams: None,
                expect_status: Some(200),
                expect_length: Some(12),
                expect_body_hash: Some("cafebabe".into()),
                pin_cpus: vec![2, 3],
                cancelled: false,
            },
            steps: vec![step],
            warnings: vec![Warning::ClientSaturated { cpu_percent: 97.5, threads: 2 }],
            client: ClientUsage { cpu_user_s: 1.1, cpu_system_s: 2.2, cpu_percent: 33.3, max_rss_bytes: 1 << 24, threads: 2 },
        },
        server: ServerUsage {
            cpu_s: 12.345,
            cpu_percent: 123.45,
            cpu_us_per_request: 0.1 + 0.2,
            peak_rss_bytes: 55 << 20,
            mean_rss_bytes: 50 << 20,
            peak_pss_bytes: 44 << 20,
            mean_pss_bytes: 40 << 20,
            rss_slope_mib_per_min: -0.012_345_678_9,
        },
        samples: (0..5)
            .map(|i| ProcessSample { t_ms: i * 250 - 500, rss_bytes: 50 << 20, pss_bytes: 0, cpu_s: i as f64 / 3.0, processes: 3 })
            .collect(),
        warnings: vec![LabWarning::BackgroundNoise { cpu_percent: 12.5 }, LabWarning::ServerDied { exit: "signal 9".into() }],
        noise: Some(TrialNoise {
            wall_s: 7.25,
            server: CpuSetNoise { cpus: vec![0], steal_percent: 0.1 + 0.2, other_percent: 12.5 },
            client: CpuSetNoise { cpus: vec![1], steal_percent: 0.0, other_percent: 1.0 / 3.0 },
            busiest_other: Some(OtherProcess { pid: 4242, name: "cc1plus (x)".into(), cpu_percent: 11.0 }),
            client_hosts: vec![HostNoise {
                host: "root@10.0.0.2:22".into(),
                noise: CpuSetNoise { cpus: vec![0, 1, 2, 3], steal_percent: 1.5, other_percent: 4.25 },
            }],
            energy_j: Some(41.5),
        }),
        elapsed_s: 9.75,
        slo: (!n.is_multiple_of(2)).then(|| slo_search(n)),
        launch: n.is_multiple_of(3).then_some(n / 3),
        step_usage: if n.is_multiple_of(2) {
            vec![StepUsage { cpu_percent: 45.5, cpu_us_per_request: 7.25 }, StepUsage { cpu_percent: 0.1 + 0.2, cpu_us_per_request: 9.0 }]
        } else {
            Vec::new()
        },
        joint: n.is_multiple_of(3).then_some(JointSlice {
            cells: 3,
            requests_per_sec: 1000.0 + 1.0 / 3.0,
            mib_per_sec: 0.1 + 0.2,
            cpu_us_per_request: 412.5,
            cpu_share: Some(1.0 / 3.0),
            server_cpus: Some(2),
        }),
        under_load: n.is_multiple_of(2).then(|| LoadCurve {
            capacity_rps: 1000.0 + 1.0 / 3.0,
            points: vec![LoadPoint {
                fraction: 0.25,
                offered_rps: 250.0 + 1.0 / 12.0,
                achieved_rps: 249.5,
                p50_us: 101.5,
                p99_us: 0.1 + 0.2,
                p999_us: 812.5,
                errors: 1,
                cpu_cores: Some(1.0 / 3.0),
            }],
        }),
    }
}

/// A real search over a made-up server whose p99 passes 10 ms above 700 req/s; fractions of a
/// request per second and a step that fell short of its rate must read back exactly.
fn slo_search(n: u32) -> bakeoff_model::slo::SloSearch {
    use bakeoff_model::slo::{search, SearchBudget, SloStep, StepMiss};
    let slo = "p99<=10ms".parse().unwrap();
    let step = |rate: f64| {
        let (achieved, miss) = if rate > 700.0 { (rate * 0.9, Some(StepMiss::RateShort)) } else { (rate - 0.1, None) };
        Ok::<_, ()>(SloStep {
            offered_rps: rate,
            achieved_rps: achieved,
            latency_us: 812.5,
            p99_us: 812.5,
            requests: 2_000,
            errors: n as u64,
            miss,
        })
    };
    search(&slo, 1000.0 + 1.0 / 3.0, &SearchBudget::default(), step).unwrap()
}

fn verify(stack: &str) -> VerifyReport {
    VerifyReport {
        stack: stack.into(),
        variant: "default".into(),
        checks: vec![
            Check {
                scenario: CheckScope::Scenario(Scenario::Hello),
                verdict: Verdict::Pass,
                what: "body".into(),
                url: "http://x/".into(),
                reason: String::new(),
            },
            Check {
                scenario: CheckScope::Stack,
                verdict: Verdict::Fail,
                what: "404".into(),
                url: "http://x/nope".into(),
                reason: "got 200".into(),
            },
            Check {
                scenario: CheckScope::Scenario(Scenario::Json),
                verdict: Verdict::Warn,
                what: "type".into(),
                url: "http://x/json".into(),
                reason: "text/html".into(),
            },
        ],
    }
}

fn ceiling(run_id: &str, store: StoreKind, p99: Option<f64>) -> CeilingRecord {
    CeilingRecord {
        run_id: run_id.into(),
        store,
        scenario: store.scenario(),
        client: "pgbench 15.18".into(),
        connections: 64,
        duration_s: 10.0,
        queries: 123_456,
        queries_per_sec: 12_345.678_901_234_5,
        mean_latency_us: 0.1 + 0.2,
        p99_latency_us: p99,
    }
}

#[test]
fn run_round_trips_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/folder/bakeoff.db");
    let mut s = Store::open(&path).unwrap();
    let info = run("r1");
    let trials = vec![trial("r1", "a", 1), trial("r1", "b", 1), trial("r1", "a", 2)];
    ResultSink::begin_run(&mut s, &info).unwrap();
    s.record_verification("r1", &verify("a")).unwrap();
    s.record_verification("r1", &VerifyReport { stack: "b".into(), variant: "v2".into(), checks: vec![] }).unwrap();
    for t in &trials {
        s.record_trial(t).unwrap();
    }
    let ceilings = vec![ceiling("r1", StoreKind::Postgres, Some(812.25)), ceiling("r1", StoreKind::Docstore, None)];
    for c in &ceilings {
        s.record_ceiling(c).unwrap();
    }
    s.record_what_ran("r1", &what_ran()).unwrap();
    s.finish_run("r1", &RunStatus::Complete).unwrap();
    drop(s);

    let s = Store::open(&path).unwrap();
    let d = s.load_run("r1").unwrap();
    assert_eq!(d.run, info);
    assert_eq!(d.status, RunStatus::Complete);
    assert!(d.finished_at.is_some() && d.is_finished());
    assert_eq!(d.verifications, vec![verify("a"), VerifyReport { stack: "b".into(), variant: "v2".into(), checks: vec![] }]);
    assert_eq!(d.trials, trials);
    assert_eq!(d.ceilings, ceilings);
    assert_eq!(d.what_ran, what_ran());
    assert_eq!(s.latest_run_id().unwrap().as_deref(), Some("r1"));
    let list = s.list_runs().unwrap();
    assert_eq!((list.len(), list[0].trials, &list[0].status), (1, 3, &RunStatus::Complete));
    assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
}

/// A new results file at `path` holding run `id` with one trial, finished with `status`, then
/// changed behind the store's back by `sql` (a name from elsewhere, an older schema).
fn file_edited_by(path: &std::path::Path, id: &str, status: &RunStatus, sql: &str) {
    let mut s = Store::open(path).unwrap();
    ResultSink::begin_run(&mut s, &run(id)).unwrap();
    s.record_trial(&trial(id, "a", 1)).unwrap();
    s.finish_run(id, status).unwrap();
    assert_eq!(&s.load_run(id).unwrap().status, status);
    drop(s);
    rusqlite::Connection::open(path).unwrap().execute_batch(sql).unwrap();
}

/// A name this build does not know (a scenario, store or status from elsewhere) is an error that
/// says which, never a default.
#[test]
fn unknown_stored_names_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("names.db");
    file_edited_by(&path, "r", &RunStatus::Failed("no stacks".into()), "UPDATE trials SET scenario = 'websocket';");
    let err = Store::open(&path).unwrap().load_run("r").unwrap_err().to_string();
    assert!(err.contains("unknown scenario `websocket`"), "{err}");
}

#[test]
fn errors_are_typed() {
    let mut s = Store::open_in_memory().unwrap();
    assert!(matches!(s.load_run("nope"), Err(StoreError::RunNotFound(_))));
    s.insert_run(&run("r")).unwrap();
    assert!(matches!(s.insert_run(&run("r")), Err(StoreError::DuplicateRun(_))));
    assert!(matches!(s.set_finished("other", &RunStatus::Complete), Err(StoreError::RunNotFound(_))));
    assert_eq!(s.latest_run_id().unwrap().as_deref(), Some("r"));
}

/// As a sink, a failed write says what it was saving and what to do, and keeps the store's error.
#[test]
fn a_failed_save_says_what_it_was_saving() {
    let mut s = Store::open_in_memory().unwrap();
    ResultSink::begin_run(&mut s, &run("r")).unwrap();
    let e = ResultSink::begin_run(&mut s, &run("r")).unwrap_err();
    assert_eq!(e.saving, bakeoff_model::error::Saving::Run { run_id: "r".into() });
    assert!(matches!(e.cause.downcast_ref::<StoreError>(), Some(StoreError::DuplicateRun(_))), "{e:?}");
    let text = e.to_string();
    assert!(text.starts_with("cannot save the start of run r: run \"r\" is already in the results store"), "{text}");
    assert!(text.contains("\n  hint: start a new run"), "{text}");
    let e = s.finish_run("other", &RunStatus::Complete).unwrap_err();
    assert!(e.to_string().starts_with("cannot save the end of run other: no run \"other\""), "{e}");
}

#[test]
fn latest_run_is_the_newest() {
    let mut s = Store::open_in_memory().unwrap();
    s.insert_run(&RunInfo { started_at: "2024-05-02T00:00:00Z".into(), ..run("new") }).unwrap();
    s.insert_run(&RunInfo { started_at: "2024-05-01T00:00:00Z".into(), ..run("old") }).unwrap();
    assert_eq!(s.latest_run_id().unwrap().as_deref(), Some("new"));
    assert_eq!(s.list_runs().unwrap().iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["new", "old"]);
}

#[test]
fn default_report_run_skips_runs_without_trials() {
    let mut s = Store::open_in_memory().unwrap();
    assert_eq!(s.default_report_run_id().unwrap(), None);
    s.insert_run(&RunInfo { started_at: "2024-05-01T00:00:00Z".into(), ..run("verify-only") }).unwrap();
    // Only runs of checks: the newest of them.
    assert_eq!(s.default_report_run_id().unwrap().as_deref(), Some("verify-only"));
    s.insert_run(&RunInfo { started_at: "2024-05-02T00:00:00Z".into(), ..run("study") }).unwrap();
    s.record_trial(&trial("study", "a", 1)).unwrap();
    s.insert_run(&RunInfo { started_at: "2024-05-03T00:00:00Z".into(), ..run("later-verify") }).unwrap();
    s.record_verification("later-verify", &verify("a")).unwrap();
    assert_eq!(s.latest_run_id().unwrap().as_deref(), Some("later-verify"));
    assert_eq!(s.default_report_run_id().unwrap().as_deref(), Some("study"));
}

#[test]
fn nan_server_numbers_read_back_as_nan() {
    let mut s = Store::open_in_memory().unwrap();
    s.insert_run(&run("r")).unwrap();
    let mut t = trial("r", "a", 1);
    t.server.cpu_us_per_request = f64::NAN;
    s.insert_trial(&t).unwrap();
    assert!(s.load_run("r").unwrap().trials[0].server.cpu_us_per_request.is_nan());
}

/// A scenario file's trial keeps each request kind's results: names in the deck's order, counts,
/// latency, errors by kind and the histogram, exactly as the load generator reported them.
#[test]
fn request_kinds_of_a_trial_read_back_exactly() {
    let mut s = Store::open_in_memory().unwrap();
    s.insert_run(&run("r")).unwrap();
    let mut t = trial("r", "a", 1);
    t.cell.scenario = "file:shop".parse().unwrap();
    let kind = |name: &str, requests: u64, base: f64, errors: ErrorCounts| KindReport {
        name: name.into(),
        requests,
        requests_per_sec: requests as f64 / 3.0,
        latency: latency(base),
        errors,
        histogram: "HISTFAAAAB54nJNpmSzMwMDAxQABzFAaxmey+wBhAACGwwWd".into(),
    };
    t.load.steps[0].kinds = vec![
        kind("item", 7_407, 101.3, ErrorCounts::default()),
        kind("search", 3_704, 0.1 + 0.2, ErrorCounts { status: BTreeMap::from([(500, 3)]), timeout: 1, ..Default::default() }),
        kind("cart", 1_235, 250.0, ErrorCounts { body_mismatch: 2, ..Default::default() }),
    ];
    s.insert_trial(&t).unwrap();
    let back = s.load_run("r").unwrap().trials;
    assert_eq!(back, [t]);
    let names: Vec<&str> = back[0].load.steps[0].kinds.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["item", "search", "cart"]);
    assert_eq!(back[0].load.steps[0].kinds[1].errors.total(), 4);
}

#[test]
fn unfinished_run_keeps_its_trials() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.db");
    {
        let mut s = Store::open(&path).unwrap();
        s.begin_run(&run("killed")).unwrap();
        s.record_trial(&trial("killed", "a", 1)).unwrap();
        s.record_trial(&trial("killed", "b", 1)).unwrap();
        // Dropped without finish_run, as when the lab panics.
    }
    let d = Store::open(&path).unwrap().load_run("killed").unwrap();
    assert_eq!(d.trials.len(), 2);
    assert_eq!((&d.status, d.finished_at.as_deref(), d.is_finished()), (&RunStatus::Running, None, false));
}

const CHILD_DB: &str = "BAKEOFF_STORE_TEST_CHILD_DB";

/// Not a test on its own: when the parent test below re-runs this binary with `CHILD_DB` set, this
/// writes one trial, says so, and waits to be killed in the middle of its run.
#[test]
fn child_writer_for_sigkill_test() {
    let Ok(path) = std::env::var(CHILD_DB) else { return };
    let mut s = Store::open(&path).unwrap();
    s.begin_run(&run("sigkilled")).unwrap();
    s.record_trial(&trial("sigkilled", "a", 1)).unwrap();
    println!("TRIAL-RECORDED");
    std::thread::sleep(std::time::Duration::from_secs(60));
    panic!("the parent should have killed this process");
}

#[test]
fn sigkilled_run_keeps_committed_trial() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["child_writer_for_sigkill_test", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_DB, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.map(|l| l.contains("TRIAL-RECORDED")).unwrap_or(false)), "child never wrote its trial");
    child.kill().unwrap(); // SIGKILL on Unix: no destructor, no checkpoint, no finish_run.
    let status = child.wait().unwrap();
    assert!(!status.success());
    let s = Store::open(&path).unwrap();
    let d = s.load_run("sigkilled").unwrap();
    assert_eq!(d.trials, vec![trial("sigkilled", "a", 1)]);
    assert!(!d.is_finished());
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE meta SET value = ?1 WHERE key = 'schema_version'", [(SCHEMA_VERSION + 1).to_string()]).unwrap();
    drop(conn);
    let err = Store::open(&path).err().expect("a newer file must not open");
    assert!(matches!(err, StoreError::NewerSchema { found, supported, .. } if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION));
    let msg = err.to_string();
    assert!(msg.contains("newer bakeoff") && msg.contains("future.db"), "{msg}");
}

#[test]
fn version_1_file_is_migrated_and_keeps_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    // A version 1 file is a version 9 file without the ceilings table (2), the trials' twin,
    // elapsed_s and noise_json columns (3), the what_ran table (4), the trials' slo_json (5),
    // their launch (6), their step_usage_json (7), their under_load_json (8) and their joint_json (9).
    file_edited_by(
        &path,
        "old",
        &RunStatus::Complete,
        "DROP TABLE ceilings; DROP TABLE what_ran; ALTER TABLE trials DROP COLUMN twin; ALTER TABLE trials DROP COLUMN elapsed_s;
         ALTER TABLE trials DROP COLUMN noise_json; ALTER TABLE trials DROP COLUMN slo_json;
         ALTER TABLE trials DROP COLUMN launch; ALTER TABLE trials DROP COLUMN step_usage_json;
         ALTER TABLE trials DROP COLUMN under_load_json; ALTER TABLE trials DROP COLUMN joint_json; UPDATE meta SET value = '1' WHERE key = 'schema_version';",
    );

    let mut s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
    let d = s.load_run("old").unwrap();
    assert_eq!((d.trials.len(), d.ceilings.len(), d.what_ran.len()), (1, 0, 0));
    let old = &d.trials[0];
    assert!(old.noise.is_none() && old.elapsed_s.is_nan() && !old.cell.twin, "an old trial has no noise record: {:?}", old.noise);
    assert!(old.slo.is_none(), "an old trial has no SLO search");
    assert_eq!(old.launch, None, "an old trial started its own server");
    assert!(old.step_usage.is_empty(), "an old trial has the trial's CPU only");
    assert!(old.under_load.is_none(), "an old trial has no latency under load");
    assert!(old.joint.is_none(), "an old trial has no joint slice");
    s.record_ceiling(&ceiling("old", StoreKind::Sqlite, Some(9.0))).unwrap();
    assert_eq!(s.load_run("old").unwrap().ceilings, vec![ceiling("old", StoreKind::Sqlite, Some(9.0))]);
    s.record_what_ran("old", &what_ran()).unwrap();
    assert_eq!(s.load_run("old").unwrap().what_ran, what_ran());
}

/// One stack variant with a profile and versions, one (a baseline) without either.
fn what_ran() -> Vec<bakeoff_model::records::profile::WhatRan> {
    use bakeoff_model::records::profile::{Component, ServerModel, StackProfile, WhatRan};
    vec![
        WhatRan {
            stack: "go/fasthttp".into(),
            variant: "sqlite".into(),
            runtime: "go 1.26".into(),
            framework: "fasthttprouter 0.1.1".into(),
            server: "fasthttp 1.74".into(),
            profile: Some(StackProfile {
                server_model: ServerModel::Goroutines,
                json: "encoding/json".into(),
                msgpack: "github.com/tinylib/msgp".into(),
                database: "database/sql".into(),
                pool: "POOL_SIZE per process".into(),
            }),
            workers: vec![1, 2],
            pool_size: 8,
            components: Component::parse_lines("go 1.26.8\ngithub.com/valyala/fasthttp v1.74.0"),
            protocol: bakeoff_model::protocol::WireProtocol::H2,
            tls: Some("TLS 1.3, TLS13_AES_128_GCM_SHA256, ECDSA P-256".into()),
        },
        WhatRan {
            stack: "c/baseline".into(),
            variant: "default".into(),
            runtime: "none".into(),
            framework: "none".into(),
            server: "nginx".into(),
            profile: None,
            workers: vec![1],
            pool_size: 8,
            components: vec![],
            protocol: Default::default(),
            tls: None,
        },
    ]
}
