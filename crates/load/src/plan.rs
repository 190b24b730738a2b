//! The validated load plan: targets (pre-serialized requests), connections, threads, schedule, stop, checks.

use std::time::Duration;

use crate::checks::Checks;
use crate::deck::{Deck, PlanDeck};
use crate::error::PlanError;
use crate::schedule::{Ramp, Schedule, StepSpec, Stop};
use crate::target::{Protocol, Scheme, Target};
use crate::tls::{TlsClient, TlsSettings};

/// A validated plan. Construct with [`LoadPlan::builder`].
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPlan {
    /// The URLs, requests go round-robin over them.
    pub targets: Vec<Target>,
    /// Connections over all threads (a ladder's steps set their own).
    pub connections: u32,
    /// Worker threads, each with its own event loop and share of the connections.
    pub threads: u32,
    /// How requests are released.
    pub schedule: Schedule,
    /// Connection counts, one step each (`--conn-ladder`).
    pub conn_ladder: Option<Vec<u32>>,
    /// How long each ladder step lasts, if not the plan's duration.
    pub step_duration: Option<Duration>,
    /// When a step ends.
    pub stop: Stop,
    /// Unmeasured lead-in before the first step.
    pub warmup: Duration,
    /// A request unanswered this long is a timeout error, never a latency sample.
    pub timeout: Duration,
    /// What makes a response a success.
    pub checks: Checks,
    /// Requests in flight per connection (1: no pipelining).
    pub pipeline: u32,
    /// One request per connection (`Connection: close`).
    pub close: bool,
    /// Requests before a connection is replaced by a new one, if limited.
    pub requests_per_conn: Option<u64>,
    /// CPUs the worker threads are pinned to, round-robin (empty: not pinned).
    pub pin_cpus: Vec<usize>,
    /// The request method, upper case.
    pub method: String,
    /// Extra request headers, in order.
    pub headers: Vec<(String, String)>,
    /// The request body, if any.
    pub body: Option<Vec<u8>>,
    /// The requests to send in turn instead of the URL's, if a deck was given; the step reports
    /// then hold results per kind.
    pub deck: Option<PlanDeck>,
    /// TLS, when the URLs are `https://` (all of them or none).
    pub tls: Option<TlsSettings>,
    /// HTTP/1.1 or HTTP/2.
    pub protocol: Protocol,
    /// HTTP/2: streams in flight per connection (at most the server's MAX_CONCURRENT_STREAMS).
    pub streams: u32,
}

impl LoadPlan {
    /// A builder for a plan against `url`, with the defaults: 10 connections, 1 thread, 10 s closed.
    pub fn builder(url: &str) -> LoadPlanBuilder {
        LoadPlanBuilder {
            urls: vec![url.to_string()],
            connections: 10,
            threads: 1,
            duration: Duration::from_secs(10),
            requests: None,
            rate: None,
            ramp: None,
            conn_ladder: None,
            step_duration: None,
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(10),
            checks: Checks::default(),
            pipeline: 1,
            close: false,
            requests_per_conn: None,
            pin_cpus: Vec::new(),
            method: "GET".into(),
            headers: Vec::new(),
            body: None,
            deck: None,
            tls: None,
            protocol: Protocol::Http1,
            streams: 1,
            error: None,
        }
    }

    /// The steps this plan runs, in order: one for a plain run, one per rate
    /// level for a ramp, one per connection count for a ladder.
    pub fn steps(&self) -> Vec<StepSpec> {
        let mut out = Vec::new();
        match (&self.schedule, &self.conn_ladder) {
            (Schedule::Ramp(r), _) => {
                for (rate, d) in r.levels() {
                    out.push(StepSpec {
                        label: format!("rate {rate}/s"),
                        connections: self.connections,
                        rate: Some(rate),
                        stop: Stop::Duration(d),
                        warmup: Duration::ZERO,
                    });
                }
            }
            (sched, Some(ladder)) => {
                let rate = sched.constant_rate();
                let stop = match (self.step_duration, self.stop) {
                    (Some(d), Stop::Duration(_)) => Stop::Duration(d),
                    (_, s) => s,
                };
                for &c in ladder {
                    out.push(StepSpec { label: format!("{c} connections"), connections: c, rate, stop, warmup: Duration::ZERO });
                }
            }
            (sched, None) => {
                let rate = sched.constant_rate();
                out.push(StepSpec { label: "main".into(), connections: self.connections, rate, stop: self.stop, warmup: Duration::ZERO });
            }
        }
        if let Some(first) = out.first_mut() {
            first.warmup = self.warmup;
        }
        out
    }

    /// Requests in flight per connection: the pipeline over HTTP/1.1, the streams over HTTP/2.
    pub fn in_flight(&self) -> u32 {
        match self.protocol {
            Protocol::Http1 => self.pipeline,
            Protocol::Http2 => self.streams,
        }
    }

    /// True for open (arrival-rate) schedules, where latency is corrected.
    pub fn is_open(&self) -> bool {
        !matches!(self.schedule, Schedule::Closed)
    }
}

/// Builder for [`LoadPlan`]; setters never fail, `build` validates everything.
#[derive(Debug, Clone)]
pub struct LoadPlanBuilder {
    urls: Vec<String>,
    connections: u32,
    threads: u32,
    duration: Duration,
    requests: Option<u64>,
    rate: Option<f64>,
    ramp: Option<Ramp>,
    conn_ladder: Option<Vec<u32>>,
    step_duration: Option<Duration>,
    warmup: Duration,
    timeout: Duration,
    checks: Checks,
    pipeline: u32,
    close: bool,
    requests_per_conn: Option<u64>,
    pin_cpus: Vec<usize>,
    method: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    deck: Option<Deck>,
    tls: Option<TlsSettings>,
    protocol: Protocol,
    streams: u32,
    error: Option<PlanError>,
}

impl LoadPlanBuilder {
    /// Connections over all threads (default 10).
    pub fn connections(mut self, n: u32) -> Self {
        self.connections = n;
        self
    }
    /// Worker threads (default 1; at most the connections).
    pub fn threads(mut self, n: u32) -> Self {
        self.threads = n;
        self
    }
    /// How long a timed step lasts (default 10 s).
    pub fn duration(mut self, d: Duration) -> Self {
        self.duration = d;
        self
    }
    /// Stop after this many requests in total instead of after a duration (`-n`).
    pub fn requests(mut self, n: u64) -> Self {
        self.requests = Some(n);
        self
    }
    /// A constant arrival rate, requests/s: the open model (`--rate`).
    pub fn rate(mut self, r: f64) -> Self {
        self.rate = Some(r);
        self
    }
    /// A ladder of constant rates (`--ramp`).
    pub fn ramp(mut self, r: Ramp) -> Self {
        self.ramp = Some(r);
        self
    }
    /// One step per connection count (`--conn-ladder`).
    pub fn conn_ladder(mut self, l: Vec<u32>) -> Self {
        self.conn_ladder = Some(l);
        self
    }
    /// How long each ladder step lasts (default: the duration).
    pub fn step_duration(mut self, d: Duration) -> Self {
        self.step_duration = Some(d);
        self
    }
    /// Unmeasured lead-in before the first step.
    pub fn warmup(mut self, d: Duration) -> Self {
        self.warmup = d;
        self
    }
    /// A request unanswered this long is a timeout error (above 0, at most 60 s; default 10 s).
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d;
        self
    }
    /// Requests in flight per connection (default 1).
    pub fn pipeline(mut self, p: u32) -> Self {
        self.pipeline = p;
        self
    }
    /// One request per connection (`Connection: close`).
    pub fn close(mut self, c: bool) -> Self {
        self.close = c;
        self
    }
    /// Replace a connection after this many requests.
    pub fn requests_per_conn(mut self, k: u64) -> Self {
        self.requests_per_conn = Some(k);
        self
    }
    /// Only this status is a success (default: any 2xx or 3xx).
    pub fn expect_status(mut self, s: u16) -> Self {
        self.checks.expect_status = Some(s);
        self
    }
    /// Responses must have a decoded body of this many bytes.
    pub fn expect_length(mut self, n: u64) -> Self {
        self.checks.expect_length = Some(n);
        self
    }
    /// Responses must have a body with this FNV-1a 64 hash (see `fnv1a64`).
    pub fn expect_body_hash(mut self, h: u64) -> Self {
        self.checks.expect_body_hash = Some(h);
        self
    }
    /// The request method (default GET; upper-cased).
    pub fn method(mut self, m: &str) -> Self {
        self.method = m.to_string();
        self
    }
    /// A request body (`Content-Length` is added unless given).
    pub fn body(mut self, b: impl Into<Vec<u8>>) -> Self {
        self.body = Some(b.into());
        self
    }
    /// Pin worker thread `i` to `cpus[i % len]`.
    pub fn pin_cpus(mut self, cpus: Vec<usize>) -> Self {
        self.pin_cpus = cpus;
        self
    }
    /// Sends the deck's requests in turn instead of the URL's, against the URL's address (one URL
    /// only); each entry brings its own method, headers, body and checks, so the plan's are unused.
    pub fn deck(mut self, d: Deck) -> Self {
        self.deck = Some(d);
        self
    }
    /// How `https://` URLs speak TLS (default: TLS 1.3, resumption on, any certificate accepted).
    pub fn tls(mut self, t: TlsSettings) -> Self {
        self.tls = Some(t);
        self
    }
    /// HTTP/2 (default HTTP/1.1): over TLS by ALPN `h2`, on `http://` as h2c with prior knowledge.
    pub fn protocol(mut self, p: Protocol) -> Self {
        self.protocol = p;
        self
    }
    /// HTTP/2 streams in flight per connection (default 1; `--streams`).
    pub fn streams(mut self, n: u32) -> Self {
        self.streams = n;
        self
    }
    /// Adds another URL; requests go round-robin over the URLs.
    pub fn url(mut self, u: &str) -> Self {
        self.urls.push(u.to_string());
        self
    }
    /// Adds a request header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.trim().to_string(), value.trim().to_string()));
        self
    }
    /// Adds a header written as `Name: value` (the `-H` form).
    pub fn header_line(mut self, line: &str) -> Self {
        match line.split_once(':') {
            Some((n, v)) if !n.trim().is_empty() && !n.contains(char::is_whitespace) => {
                self.headers.push((n.trim().to_string(), v.trim().to_string()))
            }
            _ => {
                if self.error.is_none() {
                    self.error = Some(PlanError::BadHeader(line.to_string()))
                }
            }
        }
        self
    }

    /// Validates everything and serializes the requests; the first problem is the error.
    pub fn build(mut self) -> Result<LoadPlan, PlanError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.check_load()?;
        self.check_request()?;
        let method = self.method.to_ascii_uppercase();
        let targets = self
            .urls
            .iter()
            .map(|u| {
                let t = Target::new(u, &method, &self.headers, self.body.as_deref(), self.close)?;
                match self.protocol {
                    Protocol::Http1 => Ok(t),
                    Protocol::Http2 => t.with_h2(&method, &self.headers, self.body.as_deref()),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let tls = self.check_tls(&targets)?;
        let deck = match &self.deck {
            Some(_) if targets.len() > 1 => {
                return Err(PlanError::Conflict("a deck and several URLs (a deck is sent to one address)".into()));
            }
            Some(d) => Some(PlanDeck::new(d, &targets[0], self.close)?),
            None => None,
        };
        let stop = match self.requests {
            Some(n) => Stop::Requests(n),
            None => Stop::Duration(self.duration),
        };
        Ok(LoadPlan {
            targets,
            connections: self.connections,
            threads: self.threads,
            schedule: match (self.rate, self.ramp) {
                (Some(r), _) => Schedule::Rate(r),
                (None, Some(r)) => Schedule::Ramp(r),
                _ => Schedule::Closed,
            },
            conn_ladder: self.conn_ladder,
            step_duration: self.step_duration,
            stop,
            warmup: self.warmup,
            timeout: self.timeout,
            checks: self.checks,
            pipeline: self.pipeline,
            close: self.close,
            requests_per_conn: self.requests_per_conn,
            pin_cpus: self.pin_cpus,
            method,
            headers: self.headers,
            body: self.body,
            deck,
            tls,
            protocol: self.protocol,
            streams: self.streams,
        })
    }

    /// TLS settings for `https://` targets (every target one scheme), their certificates readable.
    fn check_tls(&self, targets: &[Target]) -> Result<Option<TlsSettings>, PlanError> {
        let https = targets.iter().filter(|t| t.scheme == Scheme::Https).count();
        if https == 0 {
            return match self.tls {
                Some(_) => Err(PlanError::Conflict("TLS options with an http:// URL (use https://)".into())),
                None => Ok(None),
            };
        }
        if https < targets.len() {
            return Err(PlanError::Conflict("http:// and https:// URLs in one run (one scheme per run)".into()));
        }
        let settings = self.tls.clone().unwrap_or_default();
        TlsClient::new(&settings, self.protocol)?;
        Ok(Some(settings))
    }

    /// Connections, threads and the schedule: counts positive, one ladder at a time.
    fn check_load(&self) -> Result<(), PlanError> {
        if self.connections == 0 {
            return Err(PlanError::ZeroConnections(0));
        }
        let min_conns = match &self.conn_ladder {
            Some(l) => l.iter().copied().min().unwrap_or(0),
            None => self.connections,
        };
        if let Some(l) = &self.conn_ladder {
            if l.is_empty() || l.contains(&0) {
                return Err(PlanError::BadLadder(format!("{l:?}")));
            }
        }
        if self.threads == 0 || self.threads > min_conns {
            return Err(PlanError::BadThreads { threads: self.threads, connections: min_conns });
        }
        if let Some(r) = self.rate {
            if !(r.is_finite() && r > 0.0) {
                return Err(PlanError::BadRate(r));
            }
        }
        if self.rate.is_some() && self.ramp.is_some() {
            return Err(PlanError::Conflict("--rate and --ramp (a ramp sets its own rates)".into()));
        }
        if self.ramp.is_some() && self.conn_ladder.is_some() {
            return Err(PlanError::Conflict("--ramp and --conn-ladder (one ladder at a time)".into()));
        }
        if let Some(r) = &self.ramp {
            r.validate()?;
            if self.requests.is_some() {
                return Err(PlanError::Conflict("--ramp and -n (a ramp is timed by its steps)".into()));
            }
        }
        Ok(())
    }

    /// Pipelining, stop conditions, the timeout and the method.
    fn check_request(&self) -> Result<(), PlanError> {
        if self.pipeline == 0 {
            return Err(PlanError::BadPipeline(0));
        }
        if self.requests_per_conn == Some(0) {
            return Err(PlanError::BadRequestsPerConn(0));
        }
        if self.requests == Some(0) {
            return Err(PlanError::BadRequests(0));
        }
        if self.streams == 0 {
            return Err(PlanError::Invalid("--streams must be at least 1 (got 0)".into()));
        }
        if self.protocol == Protocol::Http1 && self.streams > 1 {
            return Err(PlanError::Conflict("--streams without --h2 (streams are HTTP/2's; HTTP/1.1 has --pipeline)".into()));
        }
        if self.protocol == Protocol::Http2 && self.pipeline > 1 {
            return Err(PlanError::Conflict("--pipeline with --h2 (HTTP/2 sends concurrent requests as --streams)".into()));
        }
        if self.close && self.pipeline > 1 {
            return Err(PlanError::Conflict("--close and --pipeline (one request per connection cannot be pipelined)".into()));
        }
        if self.duration.is_zero() && self.requests.is_none() {
            return Err(PlanError::BadDuration("0s".into()));
        }
        if self.timeout.is_zero() || self.timeout > Duration::from_secs(60) {
            return Err(PlanError::Invalid(format!(
                "--timeout must be between 1ms and 60s (got {:?}), the histogram tracks up to 60 s",
                self.timeout
            )));
        }
        if self.method.is_empty() || !self.method.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(PlanError::Invalid(format!("method `{}`", self.method)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_flags() {
        let b = || LoadPlan::builder("http://127.0.0.1:1/");
        assert!(matches!(b().connections(0).build(), Err(PlanError::ZeroConnections(_))));
        assert!(matches!(b().connections(2).threads(3).build(), Err(PlanError::BadThreads { .. })));
        assert!(matches!(b().rate(0.0).build(), Err(PlanError::BadRate(_))));
        assert!(matches!(b().rate(f64::NAN).build(), Err(PlanError::BadRate(_))));
        assert!(matches!(b().pipeline(0).build(), Err(PlanError::BadPipeline(_))));
        assert!(matches!(b().header_line("nocolon").build(), Err(PlanError::BadHeader(_))));
        assert!(LoadPlan::builder("ftp://127.0.0.1/").build().is_err());
        assert!(b().streams(4).build().is_err(), "streams are HTTP/2's");
        assert!(b().protocol(Protocol::Http2).pipeline(2).build().is_err());
        assert!(b().protocol(Protocol::Http2).streams(0).build().is_err());
        assert_eq!(b().protocol(Protocol::Http2).streams(8).build().unwrap().in_flight(), 8);
        assert!(b().build().is_ok());
    }

    #[test]
    fn request_bytes() {
        let p = LoadPlan::builder("http://127.0.0.1:8080/a").method("post").header("X-A", "1").body("hi").build().unwrap();
        let r = String::from_utf8(p.targets[0].request.clone()).unwrap();
        assert_eq!(r, "POST /a HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-A: 1\r\nContent-Length: 2\r\n\r\nhi");
    }
}
