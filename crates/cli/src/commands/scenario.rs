//! `bakeoff scenario check FILE`: a scenario file linted (its errors with file, line and fix), its
//! request kinds and mix, ten requests of its deck and its warnings printed; with `--url`, a
//! running server verified against it as a run would before measuring.

use crate::args::ScenarioCheckArgs;
use anyhow::{bail, Result};
use bakeoff_cli::load::{fresh_seed, verdicts};
use bakeoff_lab::contract::verify::verify_workload;
use bakeoff_model::workload::expect::{Expect, JsonIs};
use bakeoff_model::workload::vars::Generator;
use bakeoff_model::workload::Workload;
use std::process::ExitCode;
use std::time::Duration;

/// Requests of the deck printed as a sample.
const SAMPLE: usize = 10;

pub fn check(args: &ScenarioCheckArgs) -> Result<ExitCode> {
    let workload = Workload::load(&args.file)?;
    print!("{}", describe(&workload)?);
    let Some(url) = &args.url else { return Ok(ExitCode::SUCCESS) };
    let addr = crate::commands::bench::loopback_addr(url)?;
    let seed = fresh_seed();
    let verification = verify_workload(addr, &workload, seed, Duration::from_secs(5));
    print!("{}", verdicts(&verification));
    Ok(if verification.passed() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The file's kinds, variables, a sample of its deck and its warnings.
fn describe(w: &Workload) -> Result<String> {
    let total: u32 = w.requests.iter().map(|r| r.weight).sum();
    let mut out = format!(
        "{}: {} request kinds, a deck of {} drawn from seed {} (text {})\n",
        w.name,
        w.requests.len(),
        w.deck_size,
        w.seed,
        w.text_hash()
    );
    let width = w.requests.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for r in &w.requests {
        let share = 100.0 * r.weight as f64 / total as f64;
        out += &format!("  {:width$}  {share:5.1}%  {} {}  expects {}\n", r.name, r.method, r.path, expectations(&r.expect));
    }
    for (name, g) in &w.vars {
        out += &format!("  var {name}: {}\n", generator(g));
    }
    if let Some(db) = &w.database {
        let mut files: Vec<String> = [Some(&db.schema), db.schema_postgres.as_ref(), db.seed.as_ref()]
            .into_iter()
            .flatten()
            .map(|f| f.path.display().to_string())
            .collect();
        files.extend(db.seed_csv.iter().map(|c| format!("{} into {}", c.data.path.display(), c.table)));
        out += &format!("  database: {} (hash {})\n", files.join(", "), db.hash());
    }
    for p in &w.probes {
        out += &format!("  probe {}: {}\n", w.requests[p.request].name, p.change);
    }
    for c in &w.statements {
        let (name, table, n) = (&w.requests[c.request].name, &c.table, c.at_least);
        out += &format!("  statements {name}: at least {n} naming `{table}` per request, over a burst (counted on PostgreSQL)\n");
    }
    out += &proof_lines(w);
    let deck = match w.deck(w.seed, w.deck_size) {
        Ok(d) => d,
        Err(e) => {
            bail!("{}: the deck cannot be drawn: {e}\n  hint: add rows to the data file, pick cycle or random, or lower `deck`", w.name)
        }
    };
    out += &format!("the deck's first {SAMPLE} requests:\n");
    for d in deck.iter().take(SAMPLE) {
        let body = d.body.as_ref().map(|b| format!("  body {}", String::from_utf8_lossy(b))).unwrap_or_default();
        out += &format!("  {:width$}  {} {}{body}\n", w.requests[d.kind].name, d.method, d.path);
    }
    for warning in w.warnings() {
        out += &format!("warning: {warning}\n");
    }
    Ok(out)
}

/// The login each connection sends first, the cost pairs, and whether anything proves the work.
fn proof_lines(w: &Workload) -> String {
    let mut out = String::new();
    if let Some(login) = &w.login {
        let captures: Vec<String> = login.captures.iter().map(|c| format!("{} from {}", c.name, c.path)).collect();
        out += &format!(
            "  login per connection: {} {}  expects {}; captures {}\n",
            login.request.method,
            login.request.path,
            expectations(&login.request.expect),
            captures.join(", ")
        );
    }
    for c in &w.costs {
        out += &format!(
            "  cost pair: {} must cost at least {}x the CPU per request of {} ({})\n",
            w.requests[c.heavy].name, c.min_ratio, w.requests[c.light].name, c.question
        );
    }
    if !w.declares_proof() {
        out +=
            "  work not proven: no cost pair or live-data probe, so a run marks its cells work_not_proven and judges no claim about them\n";
    }
    out
}

fn expectations(e: &Expect) -> String {
    let mut parts = vec![format!("status {}", e.status)];
    if let Some(t) = &e.content_type {
        parts.push(format!("type {t}"));
    }
    if let Some(b) = &e.body {
        parts.push(format!("body `{b}`"));
    }
    if let Some(r) = &e.regex {
        parts.push(format!("/{r}/"));
    }
    for j in &e.json {
        parts.push(match &j.is {
            JsonIs::Equals(_) => format!("{} equals", j.path),
            JsonIs::Within(lo, hi) => format!("{} in {lo}..={hi}", j.path),
            JsonIs::Length(lo, hi) => format!("{} length {lo}..={hi}", j.path),
        });
    }
    parts.extend(e.headers.iter().map(|(n, _)| format!("header {n}")));
    if let Some(r) = &e.rows {
        parts.push(format!("{} `{}`", if r.one { "rows_one" } else { "rows" }, r.sql));
    }
    parts.join(", ")
}

fn generator(g: &Generator) -> String {
    match g {
        Generator::Range(lo, hi) => format!("range {lo}..={hi}"),
        Generator::Sequence(lo, hi) => format!("sequence {lo}..={hi}"),
        Generator::Choice(c) => format!("choice of {}", c.len()),
        Generator::Pattern(_) => "pattern".into(),
        Generator::Data(d) => format!("{} rows of {} ({:?})", d.rows.len(), d.path.display(), d.pick).to_lowercase(),
    }
}
