//! A scenario file's live-data probes (`[[probes]]`), run on the server's own database: the
//! request sent and held to its expectations, the file's change made to the database, the same
//! request sent again, whose answer must be the rows as they are now. A server that answers from
//! something filled before the change (a cache, a copy read at start) fails.

use super::database::FileDatabase;
use super::sent::{send_checked, Sent};
use super::Client;
use bakeoff_model::workload::probe::ProbeSpec;
use bakeoff_model::workload::vars::Draws;
use bakeoff_model::workload::Workload;
use std::collections::BTreeMap;

/// The kind a probe's answers are reported under, before its request's name.
pub(super) const PROBE: &str = "probe ";

/// Runs `probe` with fresh draws and the login's `captured` values: one [`Sent`], the second
/// request's, whose failure says which step went wrong.
pub(super) fn probe(
    client: &mut Client,
    workload: &Workload,
    probe: &ProbeSpec,
    draws: &mut Draws,
    captured: &BTreeMap<String, String>,
    db: &dyn FileDatabase,
) -> Sent {
    let kind = format!("{PROBE}{}", workload.requests[probe.request].name);
    let failed = |request: String, why: String| Sent { kind: kind.clone(), request, mismatches: vec![], failed: Some(why) };
    let request = match workload.draw_with(probe.request, draws, captured) {
        Ok(d) => d,
        Err(e) => return failed(String::new(), e),
    };
    let line = format!("{} {}", request.method, request.path);
    let first = send_checked(client, &kind, &request, Some(db));
    if !first.passed() {
        let why = first.failed.clone().unwrap_or_else(|| "its answer before the change was already wrong".into());
        return Sent { failed: Some(why), ..first };
    }
    let Some(rows) = &request.expected.rows else {
        return failed(line, "the request has no `rows` expectation to hold the second answer to".into());
    };
    let change = probe.change_sql(&request.values);
    let before = db.rows(&rows.sql);
    if let Err(e) = db.execute(&change) {
        return failed(line, format!("the change `{change}` failed on the database: {e} ({})", probe.line));
    }
    if db.rows(&rows.sql) == before {
        return failed(
            line,
            format!(
                "the change `{change}` altered none of the rows `{}` returns, so it proves nothing ({}): change a row the request reads",
                rows.sql, probe.line
            ),
        );
    }
    let second = send_checked(client, &kind, &request, Some(db));
    if second.passed() || second.failed.is_some() {
        return second;
    }
    Sent {
        failed: Some(format!(
            "after `{change}` the same request's answer does not show it: the answer was not read from the database (a cache filled before the change?)"
        )),
        ..second
    }
}
