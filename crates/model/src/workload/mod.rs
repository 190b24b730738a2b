//! A workload written as a file: requests with weights, variables and data they draw from, and the
//! expectations every answer must meet (docs/scenarios.md, "Scenario files"). The file is checked
//! once ([`Workload::load`]); a [`deck`] is drawn from it by seed, so every server gets the same
//! requests in the same order.

pub mod cost;
pub mod database;
pub mod deck;
pub mod expect;
mod file;
pub mod json_path;
pub mod login;
mod mismatch;
pub mod pattern;
pub mod probe;
pub mod quick;
pub mod rows;
pub mod statements;
pub mod template;
pub mod vars;

use crate::InputError;
use cost::CostPair;
use database::Database;
use expect::{Expect, TemplatedJson};
use login::LoginSpec;
use probe::ProbeSpec;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use template::Template;
use vars::Generator;

/// A checked scenario file.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// Its name (`name`, else the file's stem).
    pub name: String,
    /// What it stands for.
    pub description: String,
    /// The file's text, kept with a run so a report can show exactly what was measured.
    pub text: String,
    /// The seed the deck is drawn from.
    pub seed: u64,
    /// Requests in the deck.
    pub deck_size: usize,
    /// The variables, by name.
    pub vars: BTreeMap<String, Generator>,
    /// The request kinds, in file order.
    pub requests: Vec<RequestSpec>,
    /// The login each connection runs first, if the file has one.
    pub login: Option<LoginSpec>,
    /// The `[[cost]]` pairs: kinds whose CPU per request must differ, in file order.
    pub costs: Vec<CostPair>,
    /// The file's own database (`[database]`), which the lab makes afresh for every server start.
    pub database: Option<Database>,
    /// The live-data probes (`[[probes]]`), in file order.
    pub probes: Vec<ProbeSpec>,
    /// The statement counts (`[[statements]]`), checked on PostgreSQL, in file order.
    pub statements: Vec<statements::StatementsSpec>,
    /// How its requests travel (`protocol`, HTTP/1.1 in cleartext unless the file says otherwise):
    /// the servers that serve it speak this.
    pub protocol: crate::protocol::WireProtocol,
}

/// One kind of request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSpec {
    /// Its name, which results are reported under.
    pub name: String,
    /// Its share of the deck: weight over the sum of weights.
    pub weight: u32,
    /// The method, upper case.
    pub method: String,
    /// Path and query.
    pub path: Template,
    /// Extra headers.
    pub headers: Vec<(String, Template)>,
    /// The body, if any.
    pub body: Option<Body>,
    /// What every answer must be.
    pub expect: Expect,
    /// Where the file declares it (`FILE:LINE`).
    pub line: String,
}

/// A request body.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// Text, sent as is once rendered.
    Text(Template),
    /// JSON, sent with `Content-Type: application/json` unless a header says otherwise.
    Json(TemplatedJson),
}

impl RequestSpec {
    /// Every template of the request and its expectations.
    pub fn templates(&self) -> Vec<&Template> {
        let mut all = vec![&self.path];
        all.extend(self.headers.iter().map(|(_, t)| t));
        match &self.body {
            Some(Body::Text(t)) => all.push(t),
            Some(Body::Json(j)) => all.extend(j.templates()),
            None => {}
        }
        all.extend(self.expect.templates());
        all
    }

    /// The names its placeholders use, each once: variables it draws once per request, and
    /// values a login captured.
    pub fn variables(&self) -> BTreeSet<&str> {
        self.templates().into_iter().flat_map(Template::placeholders).map(|p| p.var.as_str()).collect()
    }
}

impl Workload {
    /// Reads and checks the scenario file at `path`; an error names the file, the line and the fix.
    pub fn load(path: &Path) -> Result<Workload, InputError> {
        file::load(path)
    }

    /// Checks `text` as if read from `path` (data files relative to it).
    pub fn parse(path: &Path, text: &str) -> Result<Workload, InputError> {
        file::parse(path, text)
    }

    /// The SHA-free fingerprint of the file's text (FNV-1a 64, as the load generator hashes bodies).
    pub fn text_hash(&self) -> String {
        format!("{:016x}", bakeoff_load::fnv1a64(self.text.as_bytes()))
    }

    /// What the file cannot do that a user should know before measuring with it.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let blind: Vec<&str> = self.requests.iter().filter(|r| !r.expect.depends_on_input()).map(|r| r.name.as_str()).collect();
        if blind.len() == self.requests.len() {
            out.push(
                "no expectation depends on an input: this scenario cannot catch a cached answer (expect e.g. json = [{ path = \"$.id\", equals = \"{{id}}\" }])"
                    .to_string(),
            );
        } else if !blind.is_empty() {
            out.push(format!("{}: no expectation depends on an input, so a cached answer passes there", blind.join(", ")));
        }
        let used: BTreeSet<&str> =
            self.requests.iter().chain(self.login.as_ref().map(|l| &l.request)).flat_map(RequestSpec::variables).collect();
        for name in self.login.iter().flat_map(LoginSpec::names).filter(|n| !used.contains(n)) {
            out.push(format!("[login] captures `{name}` but no request's headers use it"));
        }
        if self.database.is_some() && self.probes.is_empty() {
            out.push(
                "[database] without [[probes]]: nothing proves the answers are read from it per request (add [[probes]] request = \"...\" change = \"UPDATE ...\")"
                    .to_string(),
            );
        }
        for name in self.vars.keys().filter(|v| !used.contains(v.as_str())) {
            out.push(format!("var `{name}` is declared but no request uses it"));
        }
        let total: u64 = self.requests.iter().map(|r| r.weight as u64).sum();
        if !(self.deck_size as u64).is_multiple_of(total) {
            out.push(format!(
                "deck = {} is not a multiple of the weights' sum ({total}): each pass of the deck is within one request of the weights, not exact",
                self.deck_size
            ));
        }
        out
    }
}

#[cfg(test)]
mod database_tests;
#[cfg(test)]
mod login_tests;
#[cfg(test)]
mod tests;
