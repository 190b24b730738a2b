//! The store ceiling against real stores: pgbench against the lab's PostgreSQL, rusqlite threads on
//! the fixture's SQLite file, and the docstore jar's `bench` role against the real document store.
//! Every service started here is stopped when `Services` drops.

use crate::common;

use bakeoff_lab::services::ceiling::{self, CeilingStore};
use bakeoff_model::records::results::{MemorySink, ResultSink};
use bakeoff_model::scenario::ServiceKind;
use std::time::Duration;

fn server_cpus() -> Vec<usize> {
    bakeoff_lab::machine::provenance::default_cpu_split().0
}

#[test]
fn postgres_ceiling_from_pgbench() {
    let scratch = common::Scratch::new("ceiling-pg");
    let cpus = server_cpus();
    let services = common::services(&[ServiceKind::Postgres], &scratch, &cpus);
    let pg = services.postgres.as_ref().unwrap();
    let c = ceiling::measure(CeilingStore::Postgres(pg), "run-1", 4, Duration::from_secs(2), &cpus).unwrap();
    eprintln!("{c:?}");
    assert_eq!((c.store.id(), c.scenario.id(), c.connections, c.run_id.as_str()), ("postgres", "products", 4, "run-1"));
    assert!(c.client.starts_with("pgbench "), "{}", c.client);
    assert!(c.queries_per_sec > 100.0, "{c:?}");
    assert!(c.queries as f64 > 100.0 * 2.0 * 0.9, "{c:?}");
    assert!(c.mean_latency_us > 0.0 && c.p99_latency_us.unwrap() >= c.mean_latency_us * 0.5, "{c:?}");
    let mut sink = MemorySink::default();
    sink.record_ceiling(&c).unwrap();
    assert_eq!(sink.ceilings, vec![c]);
    let pid = pg.pid();
    drop(services);
    assert!(!bakeoff_lab::machine::process::group_alive(pid as i32), "postgres must be stopped");
}

#[test]
fn sqlite_ceiling_in_process() {
    let scratch = common::Scratch::new("ceiling-sqlite");
    let db = scratch.data.join("products.sqlite");
    let c = ceiling::measure(CeilingStore::Sqlite(&db), "run-2", 3, Duration::from_secs(1), &server_cpus()).unwrap();
    eprintln!("{c:?}");
    assert_eq!((c.store.id(), c.scenario.id(), c.connections), ("sqlite", "products", 3));
    assert!(c.client.starts_with("rusqlite (in-process, SQLite 3."), "{}", c.client);
    assert!(c.queries_per_sec > 100.0 && c.duration_s >= 1.0 && c.duration_s < 2.0, "{c:?}");
    assert!(c.p99_latency_us.unwrap() >= 1.0, "{c:?}");
    let missing = ceiling::measure(CeilingStore::Sqlite(&scratch.dir.join("nope.sqlite")), "r", 1, Duration::from_secs(1), &[]);
    assert!(missing.unwrap_err().to_string().contains("does not exist"));
}

#[test]
fn docstore_ceiling_from_the_java_driver() {
    let scratch = common::Scratch::new("ceiling-doc");
    let cpus = server_cpus();
    let services = common::services(&[ServiceKind::Docstore], &scratch, &cpus);
    let d = services.docstore.as_ref().unwrap();
    let c = ceiling::measure(CeilingStore::Docstore(d), "run-3", 4, Duration::from_secs(2), &cpus).unwrap();
    eprintln!("{c:?}");
    assert_eq!((c.store.id(), c.scenario.id(), c.connections), ("docstore", "document", 4));
    assert!(c.client.starts_with("mongodb-driver-sync "), "{}", c.client);
    assert!(c.queries_per_sec > 100.0 && (c.duration_s - 2.0).abs() < 0.5, "{c:?}");
    assert!(c.p99_latency_us.unwrap() > 0.0, "{c:?}");
    let pid = d.pid().unwrap();
    drop(services);
    assert!(!bakeoff_lab::machine::process::group_alive(pid as i32), "docstore must be stopped");
}
