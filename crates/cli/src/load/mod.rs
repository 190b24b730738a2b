//! The `bakeoff load` subcommand (and the standalone `bakeoff-load` binary): clap arguments, plan
//! building, running, printing.

mod clients;
mod hosts_output;
mod output;
mod scenario;

pub use clients::{run_clients, ClientArgs};
pub use scenario::{fresh_seed, header_pairs, verdicts};

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use clap::Args;

use bakeoff_load::{
    parse_duration, run_observed, write_hdr_log, Deck, DeckEntry, LoadPlan, PlanError, ProgressSnapshot, Protocol, Ramp, Target,
    TlsSettings, TlsVersion,
};

use output::{human_summary, logins_lines, progress_line};

/// Load-test HTTP/1.1 and HTTP/2 servers, plain or over TLS (wrk-like flags).
#[derive(Debug, Clone, Args)]
pub struct LoadArgs {
    /// Target URLs (http:// or https://; IP literal or localhost). Several are used round-robin.
    #[arg(required = true, num_args = 1..)]
    pub(crate) urls: Vec<String>,
    /// Connections to keep open.
    #[arg(short = 'c', long, default_value_t = 10)]
    pub(crate) connections: u32,
    /// Threads (one event loop each); at most the number of connections.
    #[arg(short = 't', long, default_value_t = 1)]
    pub(crate) threads: u32,
    /// Test duration (e.g. 10s, 1m).
    #[arg(short = 'd', long, default_value = "10s")]
    pub(crate) duration: String,
    /// Stop after this many requests instead of a duration.
    #[arg(short = 'n', long)]
    pub(crate) requests: Option<u64>,
    /// Open model: constant arrival rate in requests/s (latency corrected for coordinated omission).
    #[arg(long)]
    pub(crate) rate: Option<f64>,
    /// Rate ladder START:STEP:STEP_DURATION:MAX[:HOLD], e.g. 1000:1000:5s:10000:10s.
    #[arg(long)]
    pub(crate) ramp: Option<String>,
    /// Concurrency ladder: connection counts, one measured step each, e.g. 16,64,256.
    #[arg(long)]
    pub(crate) conn_ladder: Option<String>,
    /// Duration of each --conn-ladder step (default: -d).
    #[arg(long)]
    pub(crate) step_duration: Option<String>,
    /// Unmeasured warmup before the first step.
    #[arg(long)]
    pub(crate) warmup: Option<String>,
    /// A request unanswered after this is a timeout error (max 60s).
    #[arg(long, default_value = "10s")]
    pub(crate) timeout: String,
    /// Requests in flight per connection.
    #[arg(long, default_value_t = 1)]
    pub(crate) pipeline: u32,
    /// New connection for every request.
    #[arg(long)]
    pub(crate) close: bool,
    /// Reconnect after this many requests on a connection.
    #[arg(long)]
    pub(crate) requests_per_conn: Option<u64>,
    /// HTTP/2: over https:// by ALPN h2, over http:// with prior knowledge (h2c).
    #[arg(long)]
    pub(crate) h2: bool,
    /// HTTP/2 streams in flight per connection (with --h2; at most the server's
    /// MAX_CONCURRENT_STREAMS).
    #[arg(long, default_value_t = 1)]
    pub(crate) streams: u32,
    /// https:// only: the one TLS version offered, 1.2 or 1.3 (default 1.3).
    #[arg(long)]
    pub(crate) tls_version: Option<String>,
    /// https:// only: every connection makes a full handshake (by default a new connection resumes
    /// an earlier session of its thread, as HTTP clients do).
    #[arg(long)]
    pub(crate) no_tls_resumption: bool,
    /// https:// only: trust these PEM certificates and verify the server's chain and address against
    /// them (by default any certificate is accepted, as wrk and h2load do).
    #[arg(long)]
    pub(crate) cacert: Option<PathBuf>,
    /// HTTP method.
    #[arg(short = 'm', long, default_value = "GET")]
    pub(crate) method: String,
    /// Extra header `Name: value` (repeatable).
    #[arg(short = 'H', long = "header")]
    pub(crate) headers: Vec<String>,
    /// Request body.
    #[arg(long)]
    pub(crate) body: Option<String>,
    /// Only this status counts as success (default: any 2xx/3xx).
    #[arg(long)]
    pub(crate) expect_status: Option<u16>,
    /// Expected body length in bytes (decoded).
    #[arg(long)]
    pub(crate) expect_length: Option<u64>,
    /// Expected 64-bit FNV-1a hash of the decoded body, hex (e.g. `printf 'Hello World!' | ...`).
    #[arg(long)]
    pub(crate) expect_body_hash: Option<String>,
    /// Pin worker threads to these CPUs, round-robin, e.g. 1,2.
    #[arg(long)]
    pub(crate) pin_cpus: Option<String>,
    /// Print the JSON report (schema in docs/load-generator.md) instead of the summary.
    #[arg(long)]
    pub(crate) json: bool,
    /// Write an HdrHistogram interval log (V2) to this file.
    #[arg(long)]
    pub(crate) hdr_log: Option<PathBuf>,
    /// Development: send these URLs in turn as a request deck (one kind per distinct path, results
    /// per kind), on the first URL's address, with the method, headers, body and checks above.
    #[arg(long, hide = true, value_delimiter = ',')]
    pub(crate) deck_urls: Vec<String>,
    /// A scenario file (docs/scenarios.md, "Scenario files"): the server at the first URL's address
    /// is verified against it, then its deck is the load, with results per request kind
    #[arg(long, conflicts_with_all = ["deck_urls", "body", "headers", "expect_status", "expect_length", "expect_body_hash", "save_scenario"])]
    pub(crate) scenario: Option<PathBuf>,
    /// Write the requests of this run (URLs, method, headers, body, expected status) as a scenario
    /// file, so it can be rerun with --scenario and checked with `bakeoff scenario check`
    #[arg(long)]
    pub(crate) save_scenario: Option<PathBuf>,
}

fn list<T: std::str::FromStr>(s: &str) -> Option<Vec<T>> {
    s.split(',').map(|x| x.trim().parse().ok()).collect()
}

impl LoadArgs {
    /// The TLS flags' settings, if any TLS flag was given.
    fn tls_settings(&self) -> Result<Option<TlsSettings>, PlanError> {
        if self.tls_version.is_none() && !self.no_tls_resumption && self.cacert.is_none() {
            return Ok(None);
        }
        let version = self.tls_version.as_deref().map(TlsVersion::parse).transpose()?.unwrap_or_default();
        Ok(Some(TlsSettings { version, resumption: !self.no_tls_resumption, ca_file: self.cacert.clone(), cipher: None }))
    }

    /// Turns the flags into a validated plan.
    pub(crate) fn to_plan(&self) -> Result<LoadPlan, PlanError> {
        self.to_plan_with(None)
    }

    /// The flags' plan, sending `deck` (a scenario file's) when given.
    fn to_plan_with(&self, deck: Option<Deck>) -> Result<LoadPlan, PlanError> {
        let mut b = LoadPlan::builder(&self.urls[0])
            .connections(self.connections)
            .threads(self.threads)
            .duration(parse_duration(&self.duration)?)
            .timeout(parse_duration(&self.timeout)?)
            .pipeline(self.pipeline)
            .close(self.close)
            .method(&self.method);
        for u in &self.urls[1..] {
            b = b.url(u);
        }
        if let Some(n) = self.requests {
            b = b.requests(n);
        }
        if let Some(r) = self.rate {
            b = b.rate(r);
        }
        if let Some(r) = &self.ramp {
            b = b.ramp(Ramp::parse(r)?);
        }
        if let Some(l) = &self.conn_ladder {
            b = b.conn_ladder(list(l).ok_or_else(|| PlanError::BadLadder(l.clone()))?);
        }
        if let Some(d) = &self.step_duration {
            b = b.step_duration(parse_duration(d)?);
        }
        if let Some(w) = &self.warmup {
            b = b.warmup(parse_duration(w)?);
        }
        if let Some(k) = self.requests_per_conn {
            b = b.requests_per_conn(k);
        }
        if let Some(t) = self.tls_settings()? {
            b = b.tls(t);
        }
        if self.h2 {
            b = b.protocol(Protocol::Http2);
        }
        b = b.streams(self.streams);
        for h in &self.headers {
            b = b.header_line(h);
        }
        if let Some(body) = &self.body {
            b = b.body(body.as_bytes().to_vec());
        }
        if let Some(s) = self.expect_status {
            b = b.expect_status(s);
        }
        if let Some(n) = self.expect_length {
            b = b.expect_length(n);
        }
        let hash = match &self.expect_body_hash {
            Some(h) => Some(
                u64::from_str_radix(h.trim().trim_start_matches("0x"), 16)
                    .map_err(|_| PlanError::Invalid(format!("--expect-body-hash `{h}` is not a 64-bit hex number")))?,
            ),
            None => None,
        };
        if let Some(v) = hash {
            b = b.expect_body_hash(v);
        }
        if let Some(p) = &self.pin_cpus {
            b = b.pin_cpus(list(p).ok_or_else(|| PlanError::Invalid(format!("--pin-cpus `{p}`: expected e.g. 1,2")))?);
        }
        if !self.deck_urls.is_empty() {
            b = b.deck(self.url_deck(hash)?);
        }
        if let Some(d) = deck {
            b = b.deck(d);
        }
        b.build()
    }

    /// `--deck-urls` as a deck: each URL an entry, each distinct path a kind, every entry with the
    /// request and checks of the other flags.
    fn url_deck(&self, hash: Option<u64>) -> Result<Deck, PlanError> {
        let base = Target::new(&self.urls[0], "GET", &[], None, false)?;
        let headers = scenario::header_pairs(&self.headers);
        let mut deck = Deck::default();
        for u in &self.deck_urls {
            let t = Target::new(u, "GET", &[], None, false)?;
            if t.addr != base.addr {
                return Err(PlanError::Conflict(format!("--deck-urls `{u}` is not on {} (a deck is sent to one address)", base.addr)));
            }
            let kind = match deck.kinds.iter().position(|k| *k == t.path) {
                Some(k) => k,
                None => {
                    deck.kinds.push(t.path.clone());
                    deck.kinds.len() - 1
                }
            };
            let mut e = DeckEntry::get(u16::try_from(kind).unwrap_or(u16::MAX), &t.path);
            e.method = self.method.clone();
            e.headers = headers.clone();
            e.body = self.body.as_ref().map(|b| b.as_bytes().to_vec());
            e.checks.expect_status = self.expect_status;
            e.checks.expect_length = self.expect_length;
            e.checks.expect_body_hash = hash;
            deck.entries.push(e);
        }
        Ok(deck)
    }
}

/// Everything `bakeoff load` does. Exit code 0 if responses were measured,
/// 1 if none were, 2 for unusable flags.
pub fn run_cli(args: &LoadArgs) -> anyhow::Result<ExitCode> {
    let (workload, deck) = match &args.scenario {
        Some(file) => match scenario::verified_deck(file, &args.urls[0], args.h2) {
            Ok((workload, deck)) => {
                eprintln!("{}: verified; its deck of {} requests is the load", workload.name, deck.entries.len());
                (Some(workload), Some(deck))
            }
            Err(scenario::NotRun::File(e)) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(2));
            }
            Err(scenario::NotRun::Unverified(verdicts)) => {
                eprint!("{verdicts}");
                return Ok(ExitCode::from(1));
            }
        },
        None => (None, None),
    };
    let plan = match args.to_plan_with(deck) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}\nhint: {}", e.hint());
            return Ok(ExitCode::from(2));
        }
    };
    if let Some(path) = &args.save_scenario {
        save_scenario(args, path)?;
    }
    // Ctrl-C ends the run early but still prints what was measured.
    let interrupted = crate::cancel_on_ctrl_c();
    let start = SystemTime::now();
    let tty = std::io::stderr().is_terminal();
    let mut show = |p: &ProgressSnapshot| {
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r\x1b[2K{}", progress_line(p));
        let _ = e.flush();
    };
    let out = run_observed(&plan, interrupted, if tty { Some(&mut show) } else { None });
    if tty {
        eprint!("\r\x1b[2K");
    }
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}\nhint: {}", e.hint());
            return Ok(ExitCode::from(1));
        }
    };
    if let Some(path) = &args.hdr_log {
        write_hdr_log(path, &out.details, start).map_err(|e| anyhow::anyhow!("cannot write HDR log {}: {e}", path.display()))?;
    }
    let r = &out.report;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        writeln!(stdout, "{}", r.to_json())?;
    } else {
        write!(stdout, "{}", human_summary(r))?;
    }
    stdout.flush()?;
    // With --json they are each step's `logins`.
    if !args.json {
        write!(stdout, "{}", logins_lines(&out.report.steps))?;
    }
    if let Some(failures) = workload.and_then(|w| scenario::wrong_after_load(&w, plan.targets[0].addr)) {
        eprint!("after the load, {failures}");
        eprintln!("the answers went wrong under load: these numbers are not of a server doing the file's work");
        return Ok(ExitCode::from(1));
    }
    let any = r.steps.iter().any(|s| s.requests > 0);
    Ok(if any { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Writes the run's requests as a scenario file at `path`.
fn save_scenario(args: &LoadArgs, path: &std::path::Path) -> anyhow::Result<()> {
    let name = path.file_stem().map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    let text = scenario::scenario_text(args, &name).map_err(|e| anyhow::anyhow!("--save-scenario: {e}"))?;
    std::fs::write(path, text)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}\n  hint: give a writable path for --save-scenario", path.display()))?;
    eprintln!("wrote {}: rerun it with `bakeoff load --scenario {0} URL`", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::LoadArgs;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: LoadArgs,
    }

    #[test]
    fn flags_become_a_plan_and_bad_ones_a_typed_error() {
        let hash = format!("{:x}", bakeoff_load::fnv1a64(b"Hello World!"));
        let flags = ["x", "-c", "2", "-t", "1", "-d", "1200ms", "-H", "X-Test: 1", "--expect-status", "200", "--expect-body-hash", &hash];
        let cli = Cli::try_parse_from(flags.into_iter().chain(["http://127.0.0.1:9/"])).unwrap();
        let plan = cli.args.to_plan().unwrap();
        assert_eq!(plan.connections, 2);
        assert_eq!(plan.stop, bakeoff_load::Stop::Duration(std::time::Duration::from_millis(1200)));
        assert!(String::from_utf8_lossy(&plan.targets[0].request).contains("X-Test: 1\r\n"));
        assert_eq!((plan.checks.expect_status, plan.checks.expect_body_hash), (Some(200), Some(bakeoff_load::fnv1a64(b"Hello World!"))));
        let deck = ["x", "--deck-urls", "http://127.0.0.1:9/a,http://127.0.0.1:9/b?q=1,http://127.0.0.1:9/a", "http://127.0.0.1:9/"];
        let plan = Cli::try_parse_from(deck).unwrap().args.to_plan().unwrap();
        let d = plan.deck.expect("a deck");
        assert_eq!(d.kinds, ["/a", "/b?q=1"]);
        assert_eq!(d.entries.iter().map(|e| e.kind).collect::<Vec<_>>(), [0, 1, 0]);
        let elsewhere = Cli::try_parse_from(["x", "--deck-urls", "http://127.0.0.1:10/a", "http://127.0.0.1:9/"]).unwrap();
        assert!(matches!(elsewhere.args.to_plan(), Err(bakeoff_load::PlanError::Conflict(_))));
        let bad = Cli::try_parse_from(["x", "-d", "forever", "http://127.0.0.1:9/"]).unwrap();
        assert!(bad.args.to_plan().is_err());
    }

    #[test]
    fn protocol_flags_become_the_plans_tls_and_http2() {
        use bakeoff_load::{Protocol, TlsSettings, TlsVersion};
        let plan = |flags: &[&str]| Cli::try_parse_from(["x"].iter().chain(flags)).unwrap().args.to_plan();
        let p = plan(&["https://127.0.0.1:9/"]).unwrap();
        assert_eq!((p.tls, p.protocol, p.streams), (Some(TlsSettings::new()), Protocol::Http1, 1));
        let p = plan(&["--h2", "--streams", "32", "--tls-version", "1.2", "--no-tls-resumption", "https://127.0.0.1:9/"]).unwrap();
        let tls = TlsSettings { version: TlsVersion::Tls12, resumption: false, ca_file: None, cipher: None };
        assert_eq!((p.tls.clone(), p.protocol, p.in_flight()), (Some(tls), Protocol::Http2, 32));
        let h2c = plan(&["--h2", "http://127.0.0.1:9/"]).unwrap();
        assert_eq!((h2c.tls, h2c.protocol), (None, Protocol::Http2));
        for bad in [
            &["--tls-version", "1.1", "https://127.0.0.1:9/"][..],
            &["--cacert", "/x.pem", "http://127.0.0.1:9/"],
            &["--streams", "4", "http://127.0.0.1:9/"],
        ] {
            assert!(plan(bad).is_err(), "{bad:?}");
        }
    }
}
