//! `bakeoff verify`: proves a running stack does the contract's work before anything is measured.
//! Every problem is returned at once, each a pass/warn/fail with the reason and the URL.

mod client;
mod listen;
mod proxy;
mod scenarios;

pub use client::{Client, Framing, Response};
pub use listen::listening_addresses;

use bakeoff_model::results::{Check, CheckScope, Verdict, VerifyReport};
use bakeoff_model::scenario::Scenario;
use std::net::SocketAddr;
use std::time::Duration;

/// A backing store whose data the verifier can change, to prove a stack reads it on every request.
pub trait LiveData {
    /// Sets a text field of row/document `id`.
    fn set_text(&self, id: i64, field: &str, value: &str) -> Result<(), String>;
}

/// What the verifier needs to know about a running stack.
pub struct Target<'a> {
    pub stack: &'a str,
    pub variant: &'a str,
    pub addr: SocketAddr,
    pub scenarios: &'a [Scenario],
    pub products: Option<&'a dyn LiveData>,
    pub documents: Option<&'a dyn LiveData>,
    /// nginx for proxy stacks: bodies through the proxy are compared with direct ones.
    pub upstream: Option<SocketAddr>,
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
}

pub(crate) fn fail<T>(reason: impl Into<String>) -> Result<T, (Verdict, String)> {
    Err((Verdict::Fail, reason.into()))
}

pub(crate) fn warn<T>(reason: impl Into<String>) -> Result<T, (Verdict, String)> {
    Err((Verdict::Warn, reason.into()))
}

/// Verifies every scenario of `target`, returning all checks.
pub fn verify(target: &Target<'_>) -> VerifyReport {
    let mut checks = Checks { base: format!("http://{}", target.addr), out: Vec::new() };
    let mut client = Client::new(target.addr, Duration::from_secs(10));
    listen::check_loopback_only(&mut checks, target.addr.port());
    if target.scenarios != [Scenario::Proxy] {
        scenarios::check_common(&mut checks, &mut client);
    }
    for &scenario in target.scenarios {
        scenarios::check(scenario, &mut checks, &mut client, target);
    }
    VerifyReport { stack: target.stack.into(), variant: target.variant.into(), checks: checks.out }
}
