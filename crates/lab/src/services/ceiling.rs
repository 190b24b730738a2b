//! The store ceiling: the backing store's own throughput for a scenario's query, from a native client
//! with the run's connection count, so a report shows when the database and not the language is the
//! limit. PostgreSQL: `pgbench` with the products query as a prepared custom script. SQLite: rusqlite
//! in-process, one connection per thread, every row read into a struct. Document store: the docstore
//! jar's `bench` role (the official MongoDB Java sync driver). Each client is pinned to the CPUs it is
//! given (the lab passes the server CPUs, where the stacks run) and every step is bounded in time.

use crate::error::LabError;
use crate::install::run_bounded;
use crate::services::docstore::Docstore;
use crate::services::postgres::Postgres;
use bakeoff_load::CpuSet;
use bakeoff_model::records::results::{CeilingRecord, StoreKind};
use hdrhistogram::Histogram;
use serde::Deserialize;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The products scenario's query, as every products stack runs it.
pub(crate) const PRODUCTS_QUERY: &str = "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id;";

/// Which store to measure, borrowed from the run's running services (or the run's SQLite file).
pub enum CeilingStore<'a> {
    /// A `products.sqlite` file (the run's fixture, or a cell's copy).
    Sqlite(&'a Path),
    /// The run's PostgreSQL, measured with `pgbench`.
    Postgres(&'a Postgres),
    /// The run's document store, measured with its jar's `bench` role.
    Docstore(&'a Docstore),
}

impl CeilingStore<'_> {
    pub(crate) fn kind(&self) -> StoreKind {
        match self {
            CeilingStore::Sqlite(_) => StoreKind::Sqlite,
            CeilingStore::Postgres(_) => StoreKind::Postgres,
            CeilingStore::Docstore(_) => StoreKind::Docstore,
        }
    }
}

/// Measures `store`'s ceiling with `connections` concurrent clients for `duration`, pinned to `cpus`
/// (empty: not pinned). Bounded: the measurement plus at most 90 s of start-up and shutdown.
pub fn measure(
    store: CeilingStore<'_>,
    run_id: &str,
    connections: u32,
    duration: Duration,
    cpus: &[usize],
) -> Result<CeilingRecord, LabError> {
    let connections = connections.max(1);
    let duration = duration.max(Duration::from_millis(200));
    let mut record = match &store {
        CeilingStore::Sqlite(path) => sqlite(path, connections, duration, cpus),
        CeilingStore::Postgres(pg) => pgbench(pg, connections, duration, cpus),
        CeilingStore::Docstore(d) => docstore(d, connections, duration, cpus),
    }
    .map_err(|reason| LabError::Service {
        service: format!("{} ceiling", store.kind()),
        reason,
        hint: "the stacks' numbers stand; only the store ceiling beside them is missing".into(),
    })?;
    record.run_id = run_id.to_string();
    record.connections = connections;
    Ok(record)
}

/// A record of `store` with the client's figures; the run id and connections are set by `measure`.
fn record(
    store: StoreKind,
    client: String,
    duration_s: f64,
    queries: u64,
    mean_latency_us: f64,
    p99_latency_us: Option<f64>,
) -> CeilingRecord {
    CeilingRecord {
        run_id: String::new(),
        store,
        scenario: store.scenario(),
        client,
        connections: 0,
        duration_s,
        queries,
        queries_per_sec: if duration_s > 0.0 { queries as f64 / duration_s } else { 0.0 },
        mean_latency_us,
        p99_latency_us,
    }
}

fn pinned(mut c: Command, cpus: &[usize]) -> Result<Command, String> {
    let cpus = CpuSet::new(cpus).map_err(|e| e.to_string())?;
    // SAFETY: the set was made before fork; the closure makes one sched_setaffinity call.
    unsafe {
        c.pre_exec(move || cpus.apply_to_current());
    }
    Ok(c)
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid histogram bounds")
}

// ---- SQLite ----------------------------------------------------------------------------------

/// A product row decoded whole (id, name, description, price, stock, created_at): the work a
/// stack's ORM does per row.
type ProductRow = (i64, String, String, f64, i64, String);

fn product_row(r: &rusqlite::Row) -> rusqlite::Result<ProductRow> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
}

fn sqlite(path: &Path, connections: u32, duration: Duration, cpus: &[usize]) -> Result<CeilingRecord, String> {
    if !path.exists() {
        return Err(format!("{} does not exist", path.display()));
    }
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(connections as usize));
    let start = std::sync::Arc::new(std::sync::OnceLock::<Instant>::new());
    let cpus = CpuSet::new(cpus).map_err(|e| e.to_string())?;
    let threads: Vec<_> = (0..connections)
        .map(|_| {
            let (path, barrier, start) = (path.to_path_buf(), barrier.clone(), start.clone());
            std::thread::spawn(move || -> Result<(Histogram<u64>, u64), String> {
                let pinned = cpus.apply_to_current().map_err(|e| format!("cannot pin to the server CPUs: {e}"));
                let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let opened = rusqlite::Connection::open_with_flags(&path, flags).map_err(|e| e.to_string());
                // Every thread reaches the barrier, even one whose open failed, so none waits forever.
                barrier.wait();
                pinned?;
                let db = opened?;
                db.busy_timeout(Duration::from_secs(5)).map_err(|e| e.to_string())?;
                let mut stmt = db.prepare(PRODUCTS_QUERY).map_err(|e| e.to_string())?;
                let t0 = *start.get_or_init(Instant::now);
                let deadline = t0 + duration;
                let mut h = histogram();
                let mut n = 0u64;
                loop {
                    let q0 = Instant::now();
                    if q0 >= deadline {
                        break;
                    }
                    let rows: Vec<ProductRow> =
                        stmt.query_map([], product_row).and_then(|rows| rows.collect()).map_err(|e| e.to_string())?;
                    if rows.len() != 20 {
                        return Err(format!("the products query returned {} rows, not 20", rows.len()));
                    }
                    std::hint::black_box(&rows);
                    h.saturating_record(q0.elapsed().as_micros().max(1) as u64);
                    n += 1;
                }
                Ok((h, n))
            })
        })
        .collect();
    let mut merged = histogram();
    let mut queries = 0;
    for t in threads {
        let (h, n) = t.join().map_err(|_| "a SQLite ceiling thread panicked".to_string())??;
        merged.add(&h).map_err(|e| e.to_string())?;
        queries += n;
    }
    let elapsed = start.get().map(|s| s.elapsed().as_secs_f64()).unwrap_or(0.0);
    let client = format!("rusqlite (in-process, SQLite {})", rusqlite::version());
    Ok(record(StoreKind::Sqlite, client, elapsed, queries, merged.mean(), Some(merged.value_at_quantile(0.99) as f64)))
}

// ---- PostgreSQL ------------------------------------------------------------------------------

fn pgbench(pg: &Postgres, connections: u32, duration: Duration, cpus: &[usize]) -> Result<CeilingRecord, String> {
    let bin = crate::services::postgres::program("pgbench").ok_or("no pgbench (it comes with the Debian postgresql package)")?;
    let version = Command::new(&bin)
        .arg("--version")
        .output()
        .ok()
        .map(|o| {
            // "pgbench (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)" -> "pgbench 15.18"
            let v = String::from_utf8_lossy(&o.stdout).replace("pgbench (PostgreSQL) ", "");
            format!("pgbench {}", v.split_whitespace().next().unwrap_or("?"))
        })
        .unwrap_or_else(|| "pgbench".into());
    let dir = tempdir("pgbench")?;
    let script = dir.join("products.sql");
    std::fs::write(&script, format!("{PRODUCTS_QUERY}\n")).map_err(|e| e.to_string())?;
    let secs = duration.as_secs_f64().ceil().max(1.0) as u64;
    let mut c = Command::new(&bin);
    c.current_dir(&dir)
        .args(["-n", "-c", &connections.to_string(), "-j", "1", "-T", &secs.to_string(), "-M", "prepared"])
        .arg("-f")
        .arg(&script)
        .args(["-l", "--log-prefix", "tx"])
        .args(["-h", &pg.host.to_string(), "-p", &pg.port.to_string(), "-U", "postgres", "bakeoff"]);
    let mut c = pinned(c, cpus)?;
    let out = run_bounded(&mut c, Duration::from_secs(secs + 60));
    let p99 = transaction_log_p99(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let out = out?;
    let mut r = parse_pgbench(&out).ok_or_else(|| format!("cannot read pgbench's output:\n{out}"))?;
    r.client = version;
    r.duration_s = secs as f64;
    r.p99_latency_us = p99;
    Ok(r)
}

/// tps, latency average and transaction count from pgbench's summary.
pub(crate) fn parse_pgbench(out: &str) -> Option<CeilingRecord> {
    let mut tps = None;
    let mut mean_ms = None;
    let mut processed = None;
    for line in out.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("tps = ") {
            tps = rest.split_whitespace().next().and_then(|v| v.parse::<f64>().ok());
        } else if let Some(rest) = line.strip_prefix("latency average = ") {
            mean_ms = rest.split_whitespace().next().and_then(|v| v.parse::<f64>().ok());
        } else if let Some(rest) = line.strip_prefix("number of transactions actually processed: ") {
            processed = rest.split(['/', ' ']).next().and_then(|v| v.parse::<u64>().ok());
        }
    }
    let tps = tps?;
    let mut r = record(StoreKind::Postgres, String::new(), 0.0, processed.unwrap_or(0), mean_ms? * 1000.0, None);
    r.queries_per_sec = tps;
    Some(r)
}

/// p99 from pgbench's per-transaction logs (`-l`): the third field of each line is the latency in µs.
fn transaction_log_p99(dir: &Path) -> Option<f64> {
    let mut h = histogram();
    for entry in std::fs::read_dir(dir).ok()?.filter_map(Result::ok) {
        if !entry.file_name().to_string_lossy().starts_with("tx.") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).ok()?;
        for line in text.lines() {
            if let Some(us) = line.split_whitespace().nth(2).and_then(|v| v.parse::<u64>().ok()) {
                h.saturating_record(us.max(1));
            }
        }
    }
    (!h.is_empty()).then(|| h.value_at_quantile(0.99) as f64)
}

fn tempdir(name: &str) -> Result<PathBuf, String> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!("bakeoff-ceiling-{name}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

// ---- Document store --------------------------------------------------------------------------

#[derive(Deserialize)]
struct BenchLine {
    queries: u64,
    seconds: f64,
    mean_us: f64,
    p99_us: f64,
}

fn docstore(d: &Docstore, connections: u32, duration: Duration, cpus: &[usize]) -> Result<CeilingRecord, String> {
    let mut c = Command::new("java");
    c.arg("-Xmx512m").arg("-jar").arg(d.jar_path()).args([
        "bench",
        &d.url,
        &connections.to_string(),
        &format!("{}", duration.as_secs_f64()),
    ]);
    let mut c = pinned(c, cpus)?;
    let out = run_bounded(&mut c, duration + Duration::from_secs(90))?;
    let line = out
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| format!("no result line from `docstore bench`:\n{out}"))?;
    let b: BenchLine = serde_json::from_str(line).map_err(|e| format!("cannot read `docstore bench`'s line {line:?}: {e}"))?;
    Ok(record(StoreKind::Docstore, format!("mongodb-driver-sync {}", DOCSTORE_DRIVER), b.seconds, b.queries, b.mean_us, Some(b.p99_us)))
}

/// The MongoDB Java sync driver the docstore jar is built with (services/docstore/pom.xml).
pub(crate) const DOCSTORE_DRIVER: &str = "5.2.1";

#[cfg(test)]
mod tests {
    #[test]
    fn reads_pgbench_15_summary() {
        let out = "transaction type: products.sql\nscaling factor: 1\nquery mode: prepared\nnumber of clients: 8\nnumber of threads: 1\nmaximum number of tries: 1\nduration: 2 s\nnumber of transactions actually processed: 24680\nnumber of failed transactions: 0 (0.000%)\nlatency average = 0.648 ms\ninitial connection time = 12.345 ms\ntps = 12340.123456 (without initial connection time)\n";
        let r = super::parse_pgbench(out).unwrap();
        assert_eq!(r.queries, 24_680);
        assert_eq!(r.queries_per_sec, 12_340.123456);
        assert!((r.mean_latency_us - 648.0).abs() < 1e-9);
        assert!(super::parse_pgbench("nothing").is_none());
    }
}
