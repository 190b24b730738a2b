//! `bakeoff load --scenario FILE`: the server verified against the file with fresh draws (a wrong
//! answer and nothing is measured), then the file's deck sent as the load, results per request
//! kind. `--save-scenario FILE`: the request flags of an ad-hoc run written as a scenario file, so
//! any run can become a reproducible one.

use super::LoadArgs;
use bakeoff_lab::contract::verify::{verify_workload, WorkloadVerification};
use bakeoff_load::{Deck, Scheme, Target};
use bakeoff_model::workload::quick::{QuickRequest, QuickScenario};
use bakeoff_model::workload::Workload;
use std::path::Path;
use std::time::Duration;

/// Why a scenario run did not start: the file, or the server's answers.
pub(crate) enum NotRun {
    /// The file (or its deck) is unusable: exit 2, as for bad flags.
    File(String),
    /// The server answered wrongly: exit 1, nothing measured.
    Unverified(String),
}

/// The file's deck, after its server passed verification at `url`'s address; `http2` is `--h2`.
/// The URL's scheme and `--h2` must be the file's `protocol`.
pub(crate) fn verified_deck(file: &Path, url: &str, http2: bool) -> Result<(Workload, Deck), NotRun> {
    let workload = Workload::load(file).map_err(|e| NotRun::File(e.to_string()))?;
    let target = Target::new(url, "GET", &[], None, false).map_err(|e| NotRun::File(format!("{e}\n  hint: {}", e.hint())))?;
    let wanted = workload.protocol;
    if (target.scheme == Scheme::Https) != wanted.tls() || http2 != wanted.http2() {
        return Err(NotRun::File(format!(
            "{}: the file travels over {wanted} (its `protocol`), not as {url}{} asks\n  hint: use {}://…{}",
            file.display(),
            if http2 { " with --h2" } else { "" },
            wanted.scheme(),
            if wanted.http2() { " with --h2" } else { " without --h2" }
        )));
    }
    let seed = fresh_seed();
    let verification = verify_workload(target.addr, &workload, seed, Duration::from_secs(5));
    if !verification.passed() {
        return Err(NotRun::Unverified(verdicts(&verification)));
    }
    let deck = workload.load_deck().map_err(|e| {
        NotRun::File(format!(
            "{}: the deck cannot be drawn: {e}\n  hint: add rows to the data file, pick cycle or random, or lower `deck`",
            file.display()
        ))
    })?;
    Ok((workload, deck))
}

/// Verification again on the server that has just served the load, with new fresh draws: the
/// expectations the load cannot check on every answer (JSON values, regexes, headers) are checked
/// here, so an answer that goes wrong after N requests (a cache that starts late) is caught. The
/// wrong answers' verdicts, or None when all were right.
pub(crate) fn wrong_after_load(workload: &Workload, addr: std::net::SocketAddr) -> Option<String> {
    let again = verify_workload(addr, workload, fresh_seed(), Duration::from_secs(5));
    (!again.passed()).then(|| verdicts(&again))
}

/// The flags' requests as a scenario file: one request kind per URL, weight 1 each (the URLs are
/// sent round-robin), the method, headers and body, and the expected status.
pub(crate) fn scenario_text(args: &LoadArgs, name: &str) -> Result<String, String> {
    let mut requests = Vec::new();
    for url in &args.urls {
        let t = Target::new(url, "GET", &[], None, false).map_err(|e| e.to_string())?;
        requests.push(QuickRequest {
            method: args.method.clone(),
            path: t.path,
            headers: header_pairs(&args.headers),
            body: args.body.clone(),
        });
    }
    let unsaid = (args.expect_length.is_some() || args.expect_body_hash.is_some()).then(|| {
        "--expect-length and --expect-body-hash have no form here: write the body under [requests.expect] as `body = \"...\"`.".to_string()
    });
    let quick = QuickScenario {
        name: name.to_string(),
        written_by: "bakeoff load --save-scenario".into(),
        requests,
        expect_status: args.expect_status,
        expect_body: None,
        unsaid,
    };
    Ok(quick.to_toml())
}

/// `Name: value` flags as pairs (a flag without a colon is left out, as the load generator does);
/// `bench --get` reads its `--header` flags with it too.
pub fn header_pairs(headers: &[String]) -> Vec<(String, String)> {
    headers.iter().filter_map(|h| h.split_once(':')).map(|(n, v)| (n.trim().to_string(), v.trim().to_string())).collect()
}

/// A seed for verification's fresh draws: not the deck's, different each time, printed.
pub fn fresh_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
}

/// Each wrong answer with what was expected and what came, then the verdict.
pub fn verdicts(v: &WorkloadVerification) -> String {
    let mut out = String::new();
    for s in v.failures() {
        out += &format!("fail {}: {}\n", s.kind, s.request);
        if let Some(why) = &s.failed {
            out += &format!("    {why}\n");
        }
        for m in &s.mismatches {
            out += &format!("    {}\n      expected {}\n      got      {}\n", m.what, m.expected, m.got);
        }
    }
    if v.rows_unchecked + v.probes_skipped > 0 {
        out += &format!(
            "note: {} answers' `rows` were not checked and {} probe(s) did not run: they need the server's database, which the lab makes when it starts the server (`bakeoff bench --cmd ... --scenario FILE`)\n",
            v.rows_unchecked, v.probes_skipped
        );
    }
    let failed = v.failures().count();
    out += &if failed == 0 {
        format!("verified: {} requests answered as expected (fresh draws from seed {})\n", v.sent.len(), v.seed)
    } else {
        format!("not verified: {failed} of {} answers wrong (fresh draws from seed {}): nothing would be measured\n", v.sent.len(), v.seed)
    };
    out
}
