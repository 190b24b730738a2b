//! Live-data probes a scenario file declares (`[[probes]]`): a request sent, a change the lab
//! makes to the server's database, the same request again, whose answer must show the change. A
//! server that answers from a cache filled before the change fails.

use super::database::render_sql;
use super::template::{Template, Value};
use super::{RequestSpec, Workload};
use serde::Deserialize;
use std::collections::BTreeMap;

/// A `[[probes]]` entry as the file writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProbe {
    request: String,
    change: String,
}

/// A checked probe.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeSpec {
    /// The request kind it sends: an index into the workload's requests (one with `rows`).
    pub request: usize,
    /// The SQL the lab runs on the server's database between the two requests; its placeholders
    /// are the request's drawn values, as SQL literals.
    pub change: Template,
    /// Where the file declares it (`FILE:LINE`).
    pub line: String,
}

type Problem = (String, &'static str);

impl RawProbe {
    /// Checks it against the file's `requests` (captured login values are not drawn, so a change
    /// cannot use them).
    pub(super) fn check(&self, requests: &[RequestSpec], has_database: bool) -> Result<ProbeSpec, Problem> {
        needs_database(has_database, "a probe changes")?;
        let kind = named_request(requests, &self.request)?;
        if requests[kind].expect.rows.is_none() {
            return Err((
                format!("request `{}` has no `rows` expectation, so its second answer cannot be held to the change", self.request),
                "add rows = \"SELECT ...\" (or rows_one) under its [requests.expect]",
            ));
        }
        let change = Template::parse(&self.change).map_err(|e| (e, "placeholders are {{var}} or {{var.column}}"))?;
        let drawn = requests[kind].variables();
        if let Some(p) = change.placeholders().find(|p| !drawn.contains(p.var.as_str())) {
            return Err((
                format!("the change's `{{{{{}}}}}` is not drawn by request `{}`", p.var, self.request),
                "use the variables of the request's path, headers, body or expectations",
            ));
        }
        Ok(ProbeSpec { request: kind, change, line: String::new() })
    }
}

/// The index of the request kind `name`, or what is wrong: shared by the entries that name one.
pub(super) fn named_request(requests: &[RequestSpec], name: &str) -> Result<usize, Problem> {
    requests.iter().position(|r| r.name == name).ok_or_else(|| {
        let names: Vec<&str> = requests.iter().map(|r| r.name.as_str()).collect();
        (
            format!("`request = \"{name}\"` names no request (the file has {})", names.join(", ")),
            "write the `name` of one of the file's [[requests]]",
        )
    })
}

/// An entry that works on the file's database (`what`: "a probe changes") needs a `[database]`.
pub(super) fn needs_database(has_database: bool, what: &str) -> Result<(), Problem> {
    if has_database {
        return Ok(());
    }
    Err((
        format!("{what} the file's database and the file has no [database]"),
        "add [database] with schema = \"schema.sql\" and seed = \"seed.sql\"",
    ))
}

impl ProbeSpec {
    /// The change for one drawn request's `values`.
    pub fn change_sql(&self, values: &BTreeMap<String, Value>) -> String {
        render_sql(&self.change, values)
    }
}

impl Workload {
    /// Whether the file declares something that proves the work behind its answers (a live-data
    /// probe, a cost pair or a statement count): without it, a cell of the file is marked as
    /// work not proven.
    pub fn declares_proof(&self) -> bool {
        !self.probes.is_empty() || !self.costs.is_empty() || !self.statements.is_empty()
    }

    /// The fingerprint of the database's files (schema and seed), kept with a run beside
    /// [`Workload::text_hash`]; None without a `[database]`.
    pub fn database_hash(&self) -> Option<String> {
        self.database.as_ref().map(|d| d.hash())
    }
}
