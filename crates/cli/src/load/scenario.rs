//! `bakeoff load --scenario FILE`: the server verified against the file with fresh draws (a wrong
//! answer and nothing is measured), then the file's deck sent as the load, results per request
//! kind. `--save-scenario FILE`: the request flags of an ad-hoc run written as a scenario file, so
//! any run can become a reproducible one.

use super::LoadArgs;
use bakeoff_lab::contract::deck::load_deck;
use bakeoff_lab::contract::verify::{verify_workload, WorkloadVerification};
use bakeoff_load::{Deck, Target};
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

/// The file's deck, after its server passed verification at `url`'s address.
pub(crate) fn verified_deck(file: &Path, url: &str) -> Result<(Workload, Deck), NotRun> {
    let workload = Workload::load(file).map_err(|e| NotRun::File(e.to_string()))?;
    let target = Target::new(url, "GET", &[], None, false).map_err(|e| NotRun::File(format!("{e}\n  hint: {}", e.hint())))?;
    let seed = fresh_seed();
    let verification = verify_workload(target.addr, &workload, seed, Duration::from_secs(5));
    if !verification.passed() {
        return Err(NotRun::Unverified(verdicts(&verification)));
    }
    let deck = load_deck(&workload).map_err(|e| {
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
    let quote = |s: &str| serde_json::to_string(s).expect("a string serializes");
    let mut out = format!(
        "# Written by `bakeoff load --save-scenario`; check it with `bakeoff scenario check FILE --url URL`.\nname = {}\n",
        quote(name)
    );
    if args.expect_length.is_some() || args.expect_body_hash.is_some() {
        out += "# --expect-length and --expect-body-hash have no form here: write the body under [requests.expect] as `body = \"...\"`.\n";
    }
    for (i, url) in args.urls.iter().enumerate() {
        let t = Target::new(url, "GET", &[], None, false).map_err(|e| e.to_string())?;
        out += &format!(
            "\n[[requests]]\nname = {}\nweight = 1\nmethod = {}\npath = {}\n",
            quote(&format!("request{}", i + 1)),
            quote(&args.method.to_ascii_uppercase()),
            quote(&t.path)
        );
        let headers: Vec<String> = args
            .headers
            .iter()
            .filter_map(|h| h.split_once(':'))
            .map(|(n, v)| format!("{} = {}", quote(n.trim()), quote(v.trim())))
            .collect();
        if !headers.is_empty() {
            out += &format!("headers = {{ {} }}\n", headers.join(", "));
        }
        if let Some(b) = &args.body {
            out += &format!("body = {}\n", quote(b));
        }
        let status = match args.expect_status {
            Some(s) => format!("status = {s}\n"),
            None => "status = 200  # the run took any 2xx or 3xx; a file names the one status expected\n".to_string(),
        };
        out += &format!("[requests.expect]\n{status}");
    }
    Ok(out)
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
    let failed = v.failures().count();
    out += &if failed == 0 {
        format!("verified: {} requests answered as expected (fresh draws from seed {})\n", v.sent.len(), v.seed)
    } else {
        format!("not verified: {failed} of {} answers wrong (fresh draws from seed {}): nothing would be measured\n", v.sent.len(), v.seed)
    };
    out
}
