//! A scenario file's `[login]` as verification runs it: sent with fresh draws, held to its
//! expectations, its values captured for the requests that follow on the same connection.

use super::sent::Sent;
use super::Client;
use bakeoff_model::workload::expect::{Answer, Mismatch};
use bakeoff_model::workload::vars::Draws;
use bakeoff_model::workload::Workload;
use std::collections::BTreeMap;

/// Logs in with fresh draws: the answer held to the login's expectations, then its values
/// captured; None with the failure in the [`Sent`] when either fails.
pub(super) fn log_in(client: &mut Client, workload: &Workload, draws: &mut Draws) -> (Sent, Option<BTreeMap<String, String>>) {
    let fail = |request: String, mismatches: Vec<Mismatch>, failed: Option<String>| {
        (Sent { kind: LOGIN.into(), request, mismatches, failed }, None)
    };
    let (Some(login), Some(drawn)) = (&workload.login, workload.draw_login(draws)) else {
        return fail(String::new(), vec![], Some("the file has no [login]".into()));
    };
    let request = match drawn {
        Ok(d) => d,
        Err(e) => return fail(String::new(), vec![], Some(e)),
    };
    let line = format!("{} {}", request.method, request.path);
    let answer = match client.send(&request.method, &request.path, &request.headers, request.body.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(line, vec![], Some(format!("the login got no answer: {e}"))),
    };
    let mismatches = request.expected.check(&Answer { status: answer.status, headers: &answer.headers, body: &answer.body });
    if !mismatches.is_empty() {
        return fail(line, mismatches, None);
    }
    match login.capture(&answer.body) {
        Ok(values) => (Sent { kind: LOGIN.into(), request: line, mismatches: vec![], failed: None }, Some(values)),
        Err(e) => fail(line, vec![], Some(e)),
    }
}

/// The kind the login's answers are reported under.
pub(super) const LOGIN: &str = "login";
