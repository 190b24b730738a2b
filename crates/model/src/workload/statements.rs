//! Statement counts a scenario file declares (`[[statements]]`): over a burst of one request kind,
//! the statements naming a table that PostgreSQL ran on the server's database must be at least so
//! many per request. A server that shares one read among requests (a micro-cache) or answers from
//! memory runs fewer, which a live-data probe can miss when its cache lives shorter than a change.

use super::probe::{named_request, needs_database};
use super::RequestSpec;
use serde::Deserialize;

/// A `[[statements]]` entry as the file writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStatements {
    request: String,
    table: String,
    #[serde(default = "one")]
    at_least: f64,
}

fn one() -> f64 {
    1.0
}

/// A checked statement count.
#[derive(Debug, Clone, PartialEq)]
pub struct StatementsSpec {
    /// The request kind sent in the burst: an index into the workload's requests.
    pub request: usize,
    /// The table the counted statements name (as PostgreSQL's `pg_stat_statements` shows them).
    pub table: String,
    /// The statements per request the burst must reach at least.
    pub at_least: f64,
    /// Where the file declares it (`FILE:LINE`).
    pub line: String,
}

type Problem = (String, &'static str);

impl RawStatements {
    /// Checks it against the file's `requests`.
    pub(super) fn check(&self, requests: &[RequestSpec], has_database: bool) -> Result<StatementsSpec, Problem> {
        needs_database(has_database, "statements are counted on")?;
        let kind = named_request(requests, &self.request)?;
        let identifier = |s: &str| {
            s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if !identifier(&self.table) {
            return Err((
                format!("`table = \"{}\"` is not a table name", self.table),
                "write a table of the schema, e.g. table = \"items\"",
            ));
        }
        if !(self.at_least.is_finite() && self.at_least > 0.0) {
            return Err((format!("`at_least = {}` must be above 0", self.at_least), "leave it out for 1 statement per request"));
        }
        Ok(StatementsSpec { request: kind, table: self.table.clone(), at_least: self.at_least, line: String::new() })
    }
}
