//! The validated load plan: targets (pre-serialized requests), connections, threads, schedule, stop, checks.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use crate::error::PlanError;
use crate::schedule::{Ramp, Schedule, StepSpec, Stop};

/// One URL to hit, with its request bytes serialized once at plan time so the
/// hot path only copies bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub url: String,
    pub addr: SocketAddr,
    pub host_header: String,
    pub path: String,
    /// The complete request (line, headers, body), ready to write.
    pub request: Vec<u8>,
}

/// Response checks; any failure is counted as an error of its kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checks {
    /// If set, only this status is a success; otherwise any 2xx/3xx is.
    pub expect_status: Option<u16>,
    /// Expected decoded body length in bytes.
    pub expect_length: Option<u64>,
    /// Expected 64-bit FNV-1a hash of the decoded body (see `parser::fnv1a64`).
    pub expect_body_hash: Option<u64>,
}

impl Checks {
    pub fn status_ok(&self, status: u16) -> bool {
        match self.expect_status {
            Some(s) => s == status,
            None => (200..400).contains(&status),
        }
    }
    pub fn wants_hash(&self) -> bool {
        self.expect_body_hash.is_some()
    }
}

/// A validated plan. Construct with [`LoadPlan::builder`].
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPlan {
    pub targets: Vec<Target>,
    pub connections: u32,
    pub threads: u32,
    pub schedule: Schedule,
    /// Connection counts, one step each (`--conn-ladder`).
    pub conn_ladder: Option<Vec<u32>>,
    pub step_duration: Option<Duration>,
    pub stop: Stop,
    pub warmup: Duration,
    pub timeout: Duration,
    pub checks: Checks,
    pub pipeline: u32,
    pub close: bool,
    pub requests_per_conn: Option<u64>,
    pub pin_cpus: Vec<usize>,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

impl LoadPlan {
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
            error: None,
        }
    }

    /// The steps this plan runs, in order: one for a plain run, one per rate
    /// level for a ramp, one per connection count for a ladder.
    pub fn steps(&self) -> Vec<StepSpec> {
        crate::schedule::steps(self)
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
    error: Option<PlanError>,
}

impl LoadPlanBuilder {
    pub fn connections(mut self, n: u32) -> Self {
        self.connections = n;
        self
    }
    pub fn threads(mut self, n: u32) -> Self {
        self.threads = n;
        self
    }
    pub fn duration(mut self, d: Duration) -> Self {
        self.duration = d;
        self
    }
    pub fn requests(mut self, n: u64) -> Self {
        self.requests = Some(n);
        self
    }
    pub fn rate(mut self, r: f64) -> Self {
        self.rate = Some(r);
        self
    }
    pub fn ramp(mut self, r: Ramp) -> Self {
        self.ramp = Some(r);
        self
    }
    pub fn conn_ladder(mut self, l: Vec<u32>) -> Self {
        self.conn_ladder = Some(l);
        self
    }
    pub fn step_duration(mut self, d: Duration) -> Self {
        self.step_duration = Some(d);
        self
    }
    pub fn warmup(mut self, d: Duration) -> Self {
        self.warmup = d;
        self
    }
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d;
        self
    }
    pub fn pipeline(mut self, p: u32) -> Self {
        self.pipeline = p;
        self
    }
    pub fn close(mut self, c: bool) -> Self {
        self.close = c;
        self
    }
    pub fn requests_per_conn(mut self, k: u64) -> Self {
        self.requests_per_conn = Some(k);
        self
    }
    pub fn expect_status(mut self, s: u16) -> Self {
        self.checks.expect_status = Some(s);
        self
    }
    pub fn expect_length(mut self, n: u64) -> Self {
        self.checks.expect_length = Some(n);
        self
    }
    pub fn expect_body_hash(mut self, h: u64) -> Self {
        self.checks.expect_body_hash = Some(h);
        self
    }
    pub fn method(mut self, m: &str) -> Self {
        self.method = m.to_string();
        self
    }
    pub fn body(mut self, b: impl Into<Vec<u8>>) -> Self {
        self.body = Some(b.into());
        self
    }
    pub fn pin_cpus(mut self, cpus: Vec<usize>) -> Self {
        self.pin_cpus = cpus;
        self
    }
    /// Adds another URL; requests go round-robin over the URLs.
    pub fn url(mut self, u: &str) -> Self {
        self.urls.push(u.to_string());
        self
    }
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

    pub fn build(mut self) -> Result<LoadPlan, PlanError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.check_load()?;
        self.check_request()?;
        let method = self.method.to_ascii_uppercase();
        let mut targets = Vec::with_capacity(self.urls.len());
        for u in &self.urls {
            let (addr, host_header, path) = parse_url(u)?;
            let request = serialize_request(&method, &path, &host_header, &self.headers, self.body.as_deref(), self.close);
            targets.push(Target { url: u.clone(), addr, host_header, path, request });
        }
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
        })
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

/// Parses `http://HOST[:PORT][/PATH]` with HOST an IP literal or localhost.
/// No DNS on purpose: benchmarks must not depend on resolver latency or caches.
pub fn parse_url(url: &str) -> Result<(SocketAddr, String, String), PlanError> {
    let bad = |reason: &str| PlanError::BadUrl { url: url.to_string(), reason: reason.to_string() };
    let rest = match url.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
        Some((scheme, _)) => return Err(bad(&format!("scheme `{scheme}` is not supported, only http"))),
        None => return Err(bad("missing `http://`")),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let path = path.split('#').next().unwrap_or("");
    let path = if path.is_empty() {
        "/".to_string()
    } else if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    if authority.contains('@') {
        return Err(bad("user info is not supported"));
    }
    if authority.is_empty() {
        return Err(bad("missing host"));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed `[` in IPv6 address"))?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(|| bad("junk after IPv6 address"))?),
        };
        (h, port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port: u16 = match port {
        None => 80,
        Some(p) => p.parse().map_err(|_| bad(&format!("invalid port `{p}`")))?,
    };
    if port == 0 {
        return Err(bad("port 0"));
    }
    let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        host.parse().map_err(|_| bad("host must be an IPv4/IPv6 literal or localhost (no DNS)"))?
    };
    Ok((SocketAddr::new(ip, port), authority.to_string(), path))
}

fn serialize_request(method: &str, path: &str, host: &str, headers: &[(String, String)], body: Option<&[u8]>, close: bool) -> Vec<u8> {
    let mut r = Vec::with_capacity(128);
    r.extend_from_slice(format!("{method} {path} HTTP/1.1\r\n").as_bytes());
    let has = |n: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    if !has("host") {
        r.extend_from_slice(format!("Host: {host}\r\n").as_bytes());
    }
    for (k, v) in headers {
        r.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    if let Some(b) = body {
        if !has("content-length") {
            r.extend_from_slice(format!("Content-Length: {}\r\n", b.len()).as_bytes());
        }
    }
    if close && !has("connection") {
        r.extend_from_slice(b"Connection: close\r\n");
    }
    r.extend_from_slice(b"\r\n");
    if let Some(b) = body {
        r.extend_from_slice(b);
    }
    r
}

/// Parses `500ms`, `10s`, `2m`, `1h`, `1.5s`, `250us`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, PlanError> {
    let t = s.trim();
    let err = || PlanError::BadDuration(s.to_string());
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| err())?;
    let secs = match unit.trim() {
        "" | "s" | "sec" => v,
        "ms" => v / 1e3,
        "us" | "µs" => v / 1e6,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(err()),
    };
    if !secs.is_finite() || !(0.0..=1e7).contains(&secs) {
        return Err(err());
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let (a, h, p) = parse_url("http://127.0.0.1:8080/x?y=1").unwrap();
        assert_eq!(a.port(), 8080);
        assert_eq!(h, "127.0.0.1:8080");
        assert_eq!(p, "/x?y=1");
        let (a, _, p) = parse_url("http://[::1]:9000").unwrap();
        assert!(a.is_ipv6());
        assert_eq!(p, "/");
        let (a, _, _) = parse_url("http://localhost/").unwrap();
        assert_eq!(a.port(), 80);
        assert!(parse_url("https://127.0.0.1/").is_err());
        assert!(parse_url("ftp://x").is_err());
        assert!(parse_url("127.0.0.1:80").is_err());
        assert!(parse_url("http://example.com/").is_err());
        assert!(parse_url("http://127.0.0.1:99999/").is_err());
        assert!(parse_url("http://[::1/").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        for bad in ["", "s", "ten", "10x", "-1s", "1e400"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn absurd_flags() {
        let b = || LoadPlan::builder("http://127.0.0.1:1/");
        assert!(matches!(b().connections(0).build(), Err(PlanError::ZeroConnections(_))));
        assert!(matches!(b().connections(2).threads(3).build(), Err(PlanError::BadThreads { .. })));
        assert!(matches!(b().rate(0.0).build(), Err(PlanError::BadRate(_))));
        assert!(matches!(b().rate(f64::NAN).build(), Err(PlanError::BadRate(_))));
        assert!(matches!(b().pipeline(0).build(), Err(PlanError::BadPipeline(_))));
        assert!(matches!(b().header_line("nocolon").build(), Err(PlanError::BadHeader(_))));
        assert!(LoadPlan::builder("https://127.0.0.1/").build().is_err());
        assert!(b().build().is_ok());
    }

    #[test]
    fn request_bytes() {
        let p = LoadPlan::builder("http://127.0.0.1:8080/a").method("post").header("X-A", "1").body("hi").build().unwrap();
        let r = String::from_utf8(p.targets[0].request.clone()).unwrap();
        assert_eq!(r, "POST /a HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-A: 1\r\nContent-Length: 2\r\n\r\nhi");
    }
}
