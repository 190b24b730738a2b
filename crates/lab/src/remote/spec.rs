//! The load a client host's agent runs, as the protocol carries it: a `LoadPlan` in serializable
//! form (with the instant it starts at), and the finished load coming back with every histogram.

use std::time::Duration;

use bakeoff_load::{Deck, LoadPlan, LoadReport, PlanError, Protocol, Ramp, Schedule, Stop, TlsSettings};
use bakeoff_model::records::noise::TrialNoise;
use serde::{Deserialize, Serialize};

fn one() -> u32 {
    1
}

/// One client's share of a load, in serializable form: a `LoadPlan`, its rate ramp or connection
/// ladder included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Target URLs, round-robin.
    pub urls: Vec<String>,
    /// Request method.
    pub method: String,
    /// Extra headers, in order.
    pub headers: Vec<(String, String)>,
    /// Request body.
    pub body: Option<Vec<u8>>,
    /// This client's connections.
    pub connections: u32,
    /// This client's threads (at most its connections).
    pub threads: u32,
    /// This client's arrival rate (open model), requests/s.
    pub rate: Option<f64>,
    /// This client's rate ramp (open model, a step per level).
    #[serde(default)]
    pub ramp: Option<RampSpec>,
    /// This client's connections at each step of a connection ladder.
    #[serde(default)]
    pub conn_ladder: Option<Vec<u32>>,
    /// How long each ladder step lasts, ns (default: the duration).
    #[serde(default)]
    pub step_duration_ns: Option<u64>,
    /// Measured time, ns (a timed run).
    pub duration_ns: Option<u64>,
    /// This client's requests (a request-count run).
    pub requests: Option<u64>,
    /// Unmeasured lead-in, ns.
    pub warmup_ns: u64,
    /// Per-request timeout, ns.
    pub timeout_ns: u64,
    /// Requests in flight per connection.
    pub pipeline: u32,
    /// One request per connection.
    pub close: bool,
    /// Requests before a connection is replaced.
    pub requests_per_conn: Option<u64>,
    /// Only this status succeeds.
    pub expect_status: Option<u16>,
    /// Expected body length.
    pub expect_length: Option<u64>,
    /// Expected FNV-1a 64 body hash.
    pub expect_body_hash: Option<u64>,
    /// The requests to send in turn instead of the URL's (a scenario file's deck), as given.
    #[serde(default)]
    pub deck: Option<Deck>,
    /// TLS for `https://` URLs (a `ca_file` is a path on the client's host).
    #[serde(default)]
    pub tls: Option<TlsSettings>,
    /// HTTP/1.1 or HTTP/2.
    #[serde(default)]
    pub protocol: Protocol,
    /// HTTP/2 streams per connection.
    #[serde(default = "one")]
    pub streams: u32,
    /// CPUs on the agent's host the threads are pinned to.
    pub pin_cpus: Vec<usize>,
    /// When the load starts, in ns since the epoch on the *agent's* clock (the controller has
    /// added the measured offset).
    pub start_at_ns: u64,
}

/// A rate ramp as the protocol carries it (`Ramp`, its durations in ns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RampSpec {
    /// The first rate, requests/s.
    pub start: f64,
    /// What each level adds, requests/s.
    pub step: f64,
    /// How long each level below the last is held, ns.
    pub step_duration_ns: u64,
    /// The last rate, requests/s.
    pub max: f64,
    /// How long the last is held, ns (default: a step's).
    pub hold_ns: Option<u64>,
}

impl RampSpec {
    fn of(r: &Ramp) -> RampSpec {
        let ns = |d: Duration| d.as_nanos() as u64;
        RampSpec { start: r.start, step: r.step, step_duration_ns: ns(r.step_duration), max: r.max, hold_ns: r.hold.map(ns) }
    }

    fn ramp(&self) -> Ramp {
        let d = Duration::from_nanos;
        Ramp { start: self.start, step: self.step, step_duration: d(self.step_duration_ns), max: self.max, hold: self.hold_ns.map(d) }
    }

    /// One client's share of `n`: every rate over `n`, the same levels held as long.
    pub fn share(&self, n: usize) -> RampSpec {
        let k = n as f64;
        RampSpec { start: self.start / k, step: self.step / k, max: self.max / k, ..self.clone() }
    }

    /// Its levels, as the load generator runs them.
    pub fn levels(&self) -> usize {
        self.ramp().levels().len()
    }
}

impl RunSpec {
    /// The spec of `plan` as a whole (the caller splits it).
    pub fn from_plan(plan: &LoadPlan) -> RunSpec {
        let (rate, ramp) = match &plan.schedule {
            Schedule::Closed => (None, None),
            Schedule::Rate(r) => (Some(*r), None),
            Schedule::Ramp(r) => (None, Some(RampSpec::of(r))),
        };
        let (duration_ns, requests) = match plan.stop {
            Stop::Duration(d) => (Some(d.as_nanos() as u64), None),
            Stop::Requests(n) => (None, Some(n)),
        };
        RunSpec {
            urls: plan.targets.iter().map(|t| t.url.clone()).collect(),
            method: plan.method.clone(),
            headers: plan.headers.clone(),
            body: plan.body.clone(),
            connections: plan.connections,
            threads: plan.threads,
            rate,
            ramp,
            conn_ladder: plan.conn_ladder.clone(),
            step_duration_ns: plan.step_duration.map(|d| d.as_nanos() as u64),
            duration_ns,
            requests,
            warmup_ns: plan.warmup.as_nanos() as u64,
            timeout_ns: plan.timeout.as_nanos() as u64,
            pipeline: plan.pipeline,
            close: plan.close,
            requests_per_conn: plan.requests_per_conn,
            expect_status: plan.checks.expect_status,
            expect_length: plan.checks.expect_length,
            expect_body_hash: plan.checks.expect_body_hash,
            deck: plan.deck.as_ref().map(|d| d.source.clone()),
            tls: plan.tls.clone(),
            protocol: plan.protocol,
            streams: plan.streams,
            pin_cpus: plan.pin_cpus.clone(),
            start_at_ns: 0,
        }
    }

    /// The plan the agent runs, validated as `bakeoff load` validates its flags.
    pub fn to_plan(&self) -> Result<LoadPlan, PlanError> {
        let first = self.urls.first().map(String::as_str).unwrap_or("");
        let mut b = LoadPlan::builder(first)
            .connections(self.connections)
            .threads(self.threads)
            .warmup(Duration::from_nanos(self.warmup_ns))
            .timeout(Duration::from_nanos(self.timeout_ns))
            .pipeline(self.pipeline)
            .close(self.close)
            .method(&self.method)
            .pin_cpus(self.pin_cpus.clone());
        for u in self.urls.iter().skip(1) {
            b = b.url(u);
        }
        for (k, v) in &self.headers {
            b = b.header(k, v);
        }
        if let Some(body) = &self.body {
            b = b.body(body.clone());
        }
        if let Some(d) = self.duration_ns {
            b = b.duration(Duration::from_nanos(d));
        }
        if let Some(n) = self.requests {
            b = b.requests(n);
        }
        if let Some(r) = self.rate {
            b = b.rate(r);
        }
        if let Some(r) = &self.ramp {
            b = b.ramp(r.ramp());
        }
        if let Some(l) = &self.conn_ladder {
            b = b.conn_ladder(l.clone());
        }
        if let Some(d) = self.step_duration_ns {
            b = b.step_duration(Duration::from_nanos(d));
        }
        if let Some(k) = self.requests_per_conn {
            b = b.requests_per_conn(k);
        }
        if let Some(s) = self.expect_status {
            b = b.expect_status(s);
        }
        if let Some(n) = self.expect_length {
            b = b.expect_length(n);
        }
        if let Some(h) = self.expect_body_hash {
            b = b.expect_body_hash(h);
        }
        if let Some(d) = &self.deck {
            b = b.deck(d.clone());
        }
        if let Some(t) = &self.tls {
            b = b.tls(t.clone());
        }
        b.protocol(self.protocol).streams(self.streams).build()
    }
}

/// One client's finished load: its report (whose steps carry their latency histograms) and the
/// histograms the report does not carry, all V2-deflate base64, so nothing is lost on the way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientResult {
    /// The report as `bakeoff load` would have printed it on that host.
    pub report: LoadReport,
    /// Per step, in the report's order.
    pub steps: Vec<StepHistograms>,
    /// How late the load started after the agreed instant, ns on the agent's clock.
    pub started_late_ns: u64,
    /// Steal and other processes' CPU on the client's host over the load (every CPU, as one set;
    /// the agent, which is the load generator, is not noise).
    #[serde(default)]
    pub noise: Option<TrialNoise>,
}

/// A step's histograms beyond the latency one its report carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepHistograms {
    /// Service time (open schedules).
    pub service: Option<String>,
    /// One per measured second (2 significant digits).
    pub seconds: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenario_files_deck_its_checks_and_its_login_go_through_as_given() {
        let mut post = bakeoff_load::DeckEntry::get(1, "/b?n=2");
        (post.method, post.body, post.checks.expect_status) = ("POST".into(), Some(b"{}".to_vec()), Some(201));
        post.headers.push(("Authorization".into(), "Bearer {{token}}".into()));
        let login = bakeoff_load::Login {
            requests: vec![bakeoff_load::LoginRequest {
                method: "POST".into(),
                path: "/login".into(),
                headers: vec![],
                body: Some(b"{\"user\":\"u1\"}".to_vec()),
                expect_status: 200,
            }],
            captures: vec![bakeoff_load::Capture { name: "token".into(), path: vec![bakeoff_load::JsonStep::Key("token".into())] }],
        };
        let deck = bakeoff_load::Deck {
            kinds: vec!["a".into(), "b".into()],
            entries: vec![bakeoff_load::DeckEntry::get(0, "/a"), post],
            login: Some(login),
        };
        let plan = LoadPlan::builder("http://127.0.0.1:9/").deck(deck).build().unwrap();
        let line = serde_json::to_string(&RunSpec::from_plan(&plan)).unwrap();
        assert_eq!(serde_json::from_str::<RunSpec>(&line).unwrap().to_plan().unwrap(), plan);
    }

    #[test]
    fn tls_and_h2_travel_to_a_client_host() {
        let tls = bakeoff_load::TlsSettings { version: bakeoff_load::TlsVersion::Tls12, resumption: false, ca_file: None, cipher: None };
        let plan = LoadPlan::builder("https://127.0.0.1:9/").tls(tls).protocol(Protocol::Http2).streams(12).build().unwrap();
        let line = serde_json::to_string(&RunSpec::from_plan(&plan)).unwrap();
        assert_eq!(serde_json::from_str::<RunSpec>(&line).unwrap().to_plan().unwrap(), plan);
    }
}
