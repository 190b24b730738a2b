//! Verification of a server against a scenario file: every request kind sent with fresh draws
//! (not the deck's, so an answer cannot be learnt from the measured requests), every answer held to
//! the file's expectations, a path no request names must answer 404, and every response framed as
//! the load generator reads it. A file with a `[login]` logs in first (again whenever the server
//! closed the connection), its answer held to the login's expectations, and the requests carry the
//! values it captured. A `rows` expectation is held to the server's database and the file's
//! `[[probes]]` change it between two identical requests ([`super::probes`]). Any failure means the
//! server is not measured.

use super::database::FileDatabase;
use super::login::{log_in, LOGIN};
use super::sent::send_checked;
pub use super::sent::Sent;
use super::{Checks, Client, Target, Wire};
use bakeoff_model::records::results::{CheckScope, Verdict};
use bakeoff_model::scenario::{FileScenario, Scenario};
use bakeoff_model::workload::deck::Drawn;
use bakeoff_model::workload::expect::Mismatch;
use bakeoff_model::workload::template::Value;
use bakeoff_model::workload::vars::Draws;
use bakeoff_model::workload::Workload;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

/// Fresh draws per request kind: a server that special-cases one input answers the others wrong.
pub const DRAWS_PER_KIND: usize = 3;

/// What verification of a scenario file found.
#[derive(Debug, Clone)]
pub struct WorkloadVerification {
    /// The seed of the fresh draws, so a failure can be drawn again.
    pub seed: u64,
    /// Every request sent, in order.
    pub sent: Vec<Sent>,
    /// Answers whose `rows` expectation was not checked: every one, when the server's database is
    /// not one the lab made.
    pub rows_unchecked: usize,
    /// The file's probes that did not run: all of them when the server's database is not one the
    /// lab made, or the login failed.
    pub probes_skipped: usize,
}

impl WorkloadVerification {
    /// Whether every answer was right.
    pub fn passed(&self) -> bool {
        self.sent.iter().all(Sent::passed)
    }

    /// The requests whose answers were wrong.
    pub fn failures(&self) -> impl Iterator<Item = &Sent> {
        self.sent.iter().filter(|s| !s.passed())
    }
}

/// Sends [`DRAWS_PER_KIND`] requests of every kind drawn from `seed`, then the unknown path, to
/// the server at `addr`; every read waits `timeout` at most. The server's database is not known
/// here (the lab did not make it), so no `rows` expectation is checked and no probe runs: both are
/// counted in the verification.
pub fn verify_workload(addr: SocketAddr, workload: &Workload, seed: u64, timeout: Duration) -> WorkloadVerification {
    verify_with(addr, workload, seed, timeout, None)
}

/// [`verify_workload`] on a server started with `database`: every `rows` expectation is held to
/// it, then each of the file's probes changes it between two identical requests.
pub fn verify_workload_on(
    addr: SocketAddr,
    workload: &Workload,
    seed: u64,
    timeout: Duration,
    database: &dyn FileDatabase,
) -> WorkloadVerification {
    verify_with(addr, workload, seed, timeout, Some(database))
}

fn verify_with(
    addr: SocketAddr,
    workload: &Workload,
    seed: u64,
    timeout: Duration,
    database: Option<&dyn FileDatabase>,
) -> WorkloadVerification {
    // The file's protocol: its checks travel as its load will (any certificate accepted, as under
    // load; the lab's own protocol checks verify the run's certificate).
    let mut client = Client::over(addr, Wire { protocol: workload.protocol, ca: None }, timeout);
    let mut draws = Draws::new(seed);
    let mut sent = Vec::new();
    let mut captured: Option<BTreeMap<String, String>> = None;
    let mut drawn: Vec<Vec<BTreeMap<String, Value>>> = vec![Vec::new(); workload.requests.len()];
    'draws: for _ in 0..DRAWS_PER_KIND {
        for (kind, spec) in workload.requests.iter().enumerate() {
            if workload.login.is_some() && (captured.is_none() || !client.connected()) {
                let (s, values) = log_in(&mut client, workload, &mut draws);
                sent.push(s);
                match values {
                    Some(v) => captured = Some(v),
                    // Every request needs the login's values: none is sent without them.
                    None => break 'draws,
                }
            }
            let request = match draw_unseen(workload, kind, &mut draws, captured.as_ref(), &mut drawn[kind]) {
                Ok(d) => d,
                Err(e) => {
                    sent.push(Sent { kind: spec.name.clone(), request: String::new(), mismatches: vec![], failed: Some(e) });
                    continue;
                }
            };
            sent.push(send_checked(&mut client, &spec.name, &request, database));
        }
    }
    // Every request needs the login's values: without them no probe is sent either.
    let logged_in = workload.login.is_none() || captured.is_some();
    if let (Some(db), true) = (database, logged_in) {
        let captured = captured.unwrap_or_default();
        sent.extend(workload.probes.iter().map(|p| super::probes::probe(&mut client, workload, p, &mut draws, &captured, db)));
    }
    sent.push(unknown_path(&mut client, seed));
    let probes_skipped = if database.is_some() && logged_in { 0 } else { workload.probes.len() };
    let with_rows = |s: &&Sent| workload.requests.iter().any(|r| r.name == s.kind && r.expect.rows.is_some());
    let rows_unchecked = if database.is_some() { 0 } else { sent.iter().filter(with_rows).count() };
    WorkloadVerification { seed, sent, rows_unchecked, probes_skipped }
}

/// Tries at drawing values of a kind not drawn before, where the variables have so few.
const UNSEEN_TRIES: usize = 16;

/// A request of `kind` whose drawn values differ from those of the kind's earlier draws in
/// `seen`, where the variables allow it (else the last draw): a server right for one value of a
/// choice (every search answered as if for "red") passes only if every draw falls on that value,
/// which distinct draws rule out.
fn draw_unseen(
    workload: &Workload,
    kind: usize,
    draws: &mut Draws,
    captured: Option<&BTreeMap<String, String>>,
    seen: &mut Vec<BTreeMap<String, Value>>,
) -> Result<Drawn, String> {
    let none = BTreeMap::new();
    let mut request = workload.draw_with(kind, draws, captured.unwrap_or(&none))?;
    for _ in 1..UNSEEN_TRIES {
        if !seen.contains(&request.values) {
            break;
        }
        request = workload.draw_with(kind, draws, captured.unwrap_or(&none))?;
    }
    seen.push(request.values.clone());
    Ok(request)
}

/// A path no request of the file names must answer 404: a server that answers anything with 200
/// would pass a request whose path it never routed.
fn unknown_path(client: &mut Client, seed: u64) -> Sent {
    let path = format!("/bakeoff-no-such-path-{seed:x}");
    let (mismatches, failed) = match client.get(&path) {
        Ok(r) if r.status == 404 => (vec![], None),
        Ok(r) => (vec![Mismatch { what: "status".into(), expected: "404".into(), got: r.status.to_string() }], None),
        Err(e) => (vec![], Some(e)),
    };
    Sent { kind: "404".into(), request: format!("GET {path}"), mismatches, failed }
}

/// The target's scenario file of `file` verified as checks of its `file:NAME` scenario: one per
/// request kind (its draws together) and the unknown path's; a file the run does not hold is a
/// failure.
pub(super) fn check(checks: &mut Checks, target: &Target<'_>, file: FileScenario) {
    let scope = CheckScope::Scenario(Scenario::File(file));
    let Some(workload) = target.workloads.iter().find(|w| w.name == file.name()) else {
        checks.add(
            scope,
            "the scenario file is loaded",
            "/",
            Err((Verdict::Fail, format!("{} names a scenario file this run was not given: pass --scenario FILE", file.id()))),
        );
        return;
    };
    let seed = fresh_seed();
    let timeout = Duration::from_secs(10);
    let verification = match target.file_db {
        Some(db) => verify_workload_on(target.addr, workload, seed, timeout, db),
        None => verify_workload(target.addr, workload, seed, timeout),
    };
    let mut kinds: Vec<&str> = Vec::new();
    for s in &verification.sent {
        if !kinds.contains(&s.kind.as_str()) {
            kinds.push(&s.kind);
        }
    }
    for kind in kinds {
        let sent: Vec<&Sent> = verification.sent.iter().filter(|s| s.kind == kind).collect();
        let Some(first) = sent.first() else { continue };
        let what = match kind {
            "404" => "a path no request names answers 404".to_string(),
            LOGIN => "the [login] answers as the file expects, with every value it captures".to_string(),
            _ => match kind.strip_prefix(super::probes::PROBE) {
                Some(request) => {
                    format!("probe `{request}`: the answer shows a change made to the database between two identical requests")
                }
                None => format!("`{kind}` answers as the file expects"),
            },
        };
        let wrong: Vec<String> = sent.iter().filter(|s| !s.passed()).map(|s| describe(s)).collect();
        let after = if kind == LOGIN { " (no request was verified after it: each needs the login's values)" } else { "" };
        let outcome = if wrong.is_empty() {
            Ok(())
        } else {
            Err((
                Verdict::Fail,
                format!("{} of {} answers wrong (draws from seed {seed}): {}{after}", wrong.len(), sent.len(), wrong.join("; ")),
            ))
        };
        let path = first.request.split_once(' ').map_or("/", |(_, p)| p);
        checks.add(scope, &what, path, outcome);
    }
    if let Some(db) = target.file_db {
        check_statements(checks, scope, target, workload, seed, db);
    }
    if target.file_db.is_none() && workload.database.is_some() {
        let reason = format!(
            "{} answers' `rows` were not checked and {} probe(s) did not run: the lab did not start this server with the file's \
             database (let the lab start it, e.g. `bakeoff bench --cmd ... --scenario FILE`)",
            verification.rows_unchecked, verification.probes_skipped
        );
        checks.add(scope, "the file's `rows` and probes are checked on its database", "/", Err((Verdict::Warn, reason)));
    }
}

/// The file's `[[statements]]` on the server's database, where it counts them (PostgreSQL).
fn check_statements(checks: &mut Checks, scope: CheckScope, target: &Target<'_>, workload: &Workload, seed: u64, db: &dyn FileDatabase) {
    for spec in &workload.statements {
        let Some(outcome) = super::statements::count(target.addr, workload, spec, seed, db) else { continue };
        let name = &workload.requests[spec.request].name;
        let what = format!("statements `{name}`: at least {} naming `{}` per request, over a burst", spec.at_least, spec.table);
        checks.add_measured(scope, &what, "/", outcome);
    }
}

/// A seed for fresh draws, new every call (the clock's nanoseconds), printed with a failure so it
/// can be drawn again.
pub(super) fn fresh_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
}

/// One wrong answer in a line: the request, then each difference.
fn describe(s: &Sent) -> String {
    let mut parts: Vec<String> = s.failed.iter().cloned().collect();
    parts.extend(s.mismatches.iter().map(|m| m.to_string()));
    format!("{}: {}", s.request, parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search over five words, each verification's draws of it distinct for every seed: a server
    /// right for one word cannot pass by luck (three draws of five words would all be that word
    /// once in 125 verifications).
    #[test]
    fn a_kind_s_draws_differ_where_its_variables_allow() {
        let text = "[vars]\nword = { choice = [\"red\", \"blue\", \"green\", \"oak\", \"steel\"] }\n\n\
                    [[requests]]\nname = \"search\"\npath = \"/search?q={{word}}\"\n\n\
                    [[requests]]\nname = \"all\"\npath = \"/all\"\n";
        let workload = Workload::parse(std::path::Path::new("t.toml"), text).unwrap();
        for seed in 0..2000 {
            let mut draws = Draws::new(seed);
            let (mut search, mut all) = (Vec::new(), Vec::new());
            let paths: Vec<String> =
                (0..DRAWS_PER_KIND).map(|_| draw_unseen(&workload, 0, &mut draws, None, &mut search).unwrap().path).collect();
            let distinct: std::collections::BTreeSet<&String> = paths.iter().collect();
            assert_eq!(distinct.len(), DRAWS_PER_KIND, "seed {seed}: {paths:?}");
            // A kind without variables is drawn as it is, every time.
            let fixed: Vec<String> = (0..2).map(|_| draw_unseen(&workload, 1, &mut draws, None, &mut all).unwrap().path).collect();
            assert_eq!(fixed, ["/all", "/all"]);
        }
    }
}
