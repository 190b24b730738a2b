//! One request of a scenario file sent in verification and held to the file's expectations (and
//! its `rows` to the server's database): what the file's checks and its probes both send.

use super::database::FileDatabase;
use super::Client;
use bakeoff_model::workload::deck::Drawn;
use bakeoff_model::workload::expect::{Answer, Mismatch};

/// One request sent in verification and what came of it.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The request kind's name (`404` for the unknown path).
    pub kind: String,
    /// `METHOD PATH`.
    pub request: String,
    /// Empty when the answer was right.
    pub mismatches: Vec<Mismatch>,
    /// No answer at all, or one the parser refused (its framing), with why.
    pub failed: Option<String>,
}

impl Sent {
    /// Whether the answer was right.
    pub fn passed(&self) -> bool {
        self.failed.is_none() && self.mismatches.is_empty()
    }
}

/// Sends one drawn request and holds its answer to the expectations, `rows` to `database` (not
/// checked without one).
pub(super) fn send_checked(client: &mut Client, kind: &str, request: &Drawn, database: Option<&dyn FileDatabase>) -> Sent {
    let line = format!("{} {}", request.method, request.path);
    let answer = client.send(&request.method, &request.path, &request.headers, request.body.as_deref());
    let (mismatches, failed) = match answer {
        Ok(r) => {
            let mut mismatches = request.expected.check(&Answer { status: r.status, headers: &r.headers, body: &r.body });
            if let (Some(rows), Some(db)) = (&request.expected.rows, database) {
                mismatches.extend(rows.check(db.rows(&rows.sql), &r.body));
            }
            (mismatches, None)
        }
        Err(e) => (vec![], Some(e)),
    };
    Sent { kind: kind.into(), request: line, mismatches, failed }
}
