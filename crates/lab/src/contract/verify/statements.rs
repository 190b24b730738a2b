//! A scenario file's statement counts (`[[statements]]`) on the server's own PostgreSQL database:
//! a burst of one request kind, sent with fresh draws over several connections at once, must make
//! PostgreSQL run at least so many statements naming the table per request. A server that shares
//! one read among the requests that arrive together (a micro-cache a few milliseconds long, which
//! a live-data probe misses) or answers from memory runs fewer.

use super::database::FileDatabase;
use super::login::log_in;
use super::Client;
use bakeoff_model::records::results::Verdict;
use bakeoff_model::workload::statements::StatementsSpec;
use bakeoff_model::workload::vars::Draws;
use bakeoff_model::workload::Workload;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

/// Requests per connection in a burst.
const PER_CONNECTION: usize = 12;
/// Connections sending at once: requests that could share one read arrive together.
const CONNECTIONS: u64 = 4;

/// The burst's outcome: what it counted, or why it failed (the server: `Fail`) or could not be
/// counted (`Warn`). None when the database does not count statements (SQLite).
pub(super) fn count(
    addr: SocketAddr,
    workload: &Workload,
    spec: &StatementsSpec,
    seed: u64,
    db: &dyn FileDatabase,
) -> Option<Result<String, (Verdict, String)>> {
    let uncounted = |e: String| (Verdict::Warn, format!("could not count statements: {e}"));
    let before = match db.statements(&spec.table)? {
        Ok(n) => n,
        Err(e) => return Some(Err(uncounted(e))),
    };
    let answered = burst(addr, workload, spec.request, seed).map_err(|e| (Verdict::Fail, e));
    let after = match db.statements(&spec.table)? {
        Ok(n) => n,
        Err(e) => return Some(Err(uncounted(e))),
    };
    let name = &workload.requests[spec.request].name;
    Some(answered.and_then(|requests| judge(spec, name, after.saturating_sub(before), requests)))
}

fn judge(spec: &StatementsSpec, name: &str, ran: u64, requests: u64) -> Result<String, (Verdict, String)> {
    let per_request = ran as f64 / requests.max(1) as f64;
    let seen =
        format!("PostgreSQL ran {ran} statements naming `{}` for {requests} `{name}` requests ({per_request:.2} per request", spec.table);
    if per_request + 1e-9 >= spec.at_least {
        return Ok(format!("{seen}; at least {} asked)", spec.at_least));
    }
    Err((
        Verdict::Fail,
        format!(
            "{seen}, at least {} asked at {}): the answers were not each read from the database (shared among requests, or kept)",
            spec.at_least, spec.line
        ),
    ))
}

/// Sends the burst; the requests answered 2xx, or why the burst went wrong.
fn burst(addr: SocketAddr, workload: &Workload, kind: usize, seed: u64) -> Result<u64, String> {
    let results: Vec<Result<u64, String>> = std::thread::scope(|scope| {
        let threads: Vec<_> =
            (0..CONNECTIONS).map(|c| scope.spawn(move || connection(addr, workload, kind, seed.wrapping_add(c)))).collect();
        threads.into_iter().map(|t| t.join().unwrap_or_else(|_| Err("a burst connection panicked".into()))).collect()
    });
    results.into_iter().sum()
}

/// One connection's share of the burst: logged in first when the file has a login.
fn connection(addr: SocketAddr, workload: &Workload, kind: usize, seed: u64) -> Result<u64, String> {
    let mut client = Client::new(addr, Duration::from_secs(10));
    let mut draws = Draws::new(seed);
    let captured = match workload.login {
        Some(_) => log_in(&mut client, workload, &mut draws).1.ok_or("the login failed")?,
        None => BTreeMap::new(),
    };
    for _ in 0..PER_CONNECTION {
        let request = workload.draw_with(kind, &mut draws, &captured)?;
        let answer = client.send(&request.method, &request.path, &request.headers, request.body.as_deref())?;
        if !(200..300).contains(&answer.status) {
            return Err(format!("{} {} answered {} in the burst", request.method, request.path, answer.status));
        }
    }
    Ok(PER_CONNECTION as u64)
}
