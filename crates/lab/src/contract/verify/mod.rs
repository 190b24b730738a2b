//! `bakeoff verify`: proves a running stack does the contract's work before anything is measured.
//! Every problem is returned at once, each a pass/warn/fail with the reason and the URL.

mod client;
mod cost;
mod database;
mod listen;
mod login;
mod probes;
mod protocol;
mod proxy;
mod scenarios;
mod sent;
mod statements;
mod workload;

pub(crate) use bakeoff_load::Framing;
pub(crate) use client::{http_version, LAB_CIPHER};
pub use client::{Client, Response, Wire};
pub use database::{FileDatabase, SqliteDatabase};
pub use listen::listening_addresses;
pub use workload::{verify_workload, verify_workload_on, Sent, WorkloadVerification, DRAWS_PER_KIND};

use crate::machine::cpu_meter::CpuReading;
use bakeoff_model::records::results::{Check, CheckScope, Verdict, VerifyReport};
use bakeoff_model::scenario::Scenario;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A backing store whose data the verifier can change, to prove a stack reads it on every request.
pub trait LiveData {
    /// Sets a text field of row/document `id`.
    fn set_text(&self, id: i64, field: &str, value: &str) -> Result<(), String>;

    /// How many reads of the data the store has served so far, where it can count them (None
    /// where it cannot, e.g. a SQLite file read in the stack's own process).
    fn reads(&self) -> Option<Result<u64, String>> {
        None
    }
}

/// The server's process tree as the verifier reads it, where it runs: on this machine, or on the
/// server host through its agent.
pub(crate) trait ServerTree {
    /// The tree's CPU, read now.
    fn cpu(&self) -> CpuReading;
    /// The addresses that listen on `port` in the tree's network namespace.
    fn listening_on(&self, port: u16) -> Vec<std::net::IpAddr>;
}

/// A tree of this machine, by its leader's pid.
pub(crate) struct TreeHere(pub(crate) u32);

impl ServerTree for TreeHere {
    fn cpu(&self) -> CpuReading {
        CpuReading::of_tree(self.0)
    }

    fn listening_on(&self, port: u16) -> Vec<std::net::IpAddr> {
        let pid = Some(self.0).filter(|p| std::path::Path::new(&format!("/proc/{p}/net")).exists());
        listen::listening_addresses(port, pid)
    }
}

/// What the verifier needs to know about a running stack.
pub(crate) struct Target<'a> {
    pub(crate) stack: &'a str,
    pub(crate) variant: &'a str,
    pub(crate) addr: SocketAddr,
    /// How the server is spoken to: the cell's protocol, and the run's CA for TLS.
    pub(crate) wire: Wire,
    pub(crate) scenarios: &'a [Scenario],
    pub(crate) products: Option<&'a dyn LiveData>,
    /// Why `products` has no handle when it has none: the reason the live-data probe is skipped.
    pub(crate) products_out_of_reach: Option<String>,
    pub(crate) documents: Option<&'a dyn LiveData>,
    /// nginx for proxy stacks: bodies through the proxy are compared with direct ones.
    pub(crate) upstream: Option<SocketAddr>,
    /// The server's process tree, whose CPU time proves the work and whose sockets show where it
    /// listens; None for a baseline, which has no process of its own.
    pub(crate) server: Option<&'a dyn ServerTree>,
    /// Where the verifier's bursts run (the load generator's CPUs).
    pub(crate) client_cpus: &'a [usize],
    /// The warm-up the stack's manifest asks for (a JIT's), which the cost bursts honour up to a bound.
    pub(crate) warmup: Duration,
    /// The scenario files the run measures, for their `file:NAME` scenarios.
    pub(crate) workloads: Vec<&'a bakeoff_model::workload::Workload>,
    /// The database the server was started with for a scenario file that has one (`[database]`):
    /// `rows` are held to it and the file's probes change it.
    pub(crate) file_db: Option<&'a dyn FileDatabase>,
    /// Set by Ctrl-C or SIGTERM: no further check starts, and the report is incomplete.
    pub(crate) cancel: &'a AtomicBool,
}

impl Target<'_> {
    /// A client of the server in the cell's protocol.
    pub(crate) fn client(&self, timeout: Duration) -> Client {
        Client::over(self.addr, self.wire.clone(), timeout)
    }

    /// The checks of this target, their URLs in its scheme.
    pub(crate) fn checks(&self) -> Checks {
        Checks { base: self.wire.base(self.addr), out: Vec::new() }
    }

    /// The run was stopped: what is left unchecked stays so.
    pub(crate) fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// Collects checks for one stack variant.
pub(crate) struct Checks {
    base: String,
    pub(crate) out: Vec<Check>,
}

impl Checks {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub(crate) fn add(&mut self, scenario: CheckScope, what: &str, path: &str, outcome: Result<(), (Verdict, String)>) {
        let (verdict, reason) = match outcome {
            Ok(()) => (Verdict::Pass, String::new()),
            Err((v, r)) => (v, r),
        };
        self.out.push(Check { scenario, verdict, what: what.into(), url: self.url(path), reason });
    }

    /// A check that passes with a measured figure (kept as its reason).
    pub(crate) fn add_measured(&mut self, scenario: CheckScope, what: &str, path: &str, outcome: Result<String, (Verdict, String)>) {
        let (verdict, reason) = match outcome {
            Ok(figure) => (Verdict::Pass, figure),
            Err((v, r)) => (v, r),
        };
        self.out.push(Check { scenario, verdict, what: what.into(), url: self.url(path), reason });
    }
}

pub(crate) fn fail<T>(reason: impl Into<String>) -> Result<T, (Verdict, String)> {
    Err((Verdict::Fail, reason.into()))
}

pub(crate) fn warn<T>(reason: impl Into<String>) -> Result<T, (Verdict, String)> {
    Err((Verdict::Warn, reason.into()))
}

/// Verifies every scenario of `target`, returning all checks.
pub(crate) fn verify(target: &Target<'_>) -> VerifyReport {
    let mut checks = target.checks();
    let mut client = target.client(Duration::from_secs(10));
    listen::check_own_address_only(&mut checks, target.addr, target.server);
    protocol::check(&mut checks, &mut client, target);
    if target.scenarios != [Scenario::Proxy] {
        scenarios::check_common(&mut checks, &mut client);
    }
    for &scenario in target.scenarios {
        if target.cancelled() {
            break;
        }
        scenarios::check(scenario, &mut checks, &mut client, target);
    }
    cost::check(&mut checks, target);
    VerifyReport { stack: target.stack.into(), variant: target.variant.into(), checks: checks.out }
}

/// The live-data probes alone (for the data scenarios among `target.scenarios`), run again on a
/// warm server after it was measured, on the very URL the load requested: an answer cached only
/// once warm, or after N requests, fails here. Returns the probes' checks.
pub(crate) fn probe_again(target: &Target<'_>) -> Vec<Check> {
    let mut checks = target.checks();
    let mut client = target.client(Duration::from_secs(10));
    for scenario in target.scenarios {
        match scenario {
            Scenario::Products => scenarios::probe_products(&mut checks, &mut client, target),
            // The load's own document: a cache of the load's answer holds that one, and a random
            // id would miss it 99 times in 100 (`/products` has one URL, the load's).
            Scenario::Document => scenarios::probe_documents(&mut checks, &mut client, target, scenarios::load_document_id()),
            // New draws on the warm server: an answer cached after N requests is wrong for them,
            // and the file's probes change its database under a cache filled by the load.
            Scenario::File(f) => workload::check(&mut checks, target, *f),
            _ => {}
        }
    }
    checks.out
}

/// The CPU-cost pairs alone (json, loop, msgpack, a scenario file's `[[cost]]` among
/// `target.scenarios`), run again on the warm
/// server after it was measured: work that stopped costing what it claims (an answer cached after
/// N requests, work done only while the verifier's light URL is seen) fails here. Returns the
/// pairs' checks.
pub(crate) fn cost_again(target: &Target<'_>) -> Vec<Check> {
    let mut checks = target.checks();
    cost::check_again(&mut checks, target);
    checks.out
}
