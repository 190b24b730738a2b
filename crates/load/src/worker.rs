//! The per-thread event loop: one mio Poll owning its connections, one loop for every schedule.
//! One `Worker` in six files: the loop here, the request path in `requests` (over TLS in
//! `tls_io`, HTTP/2's frames in `h2_io`), upkeep in `upkeep`, a deck's logins in `login`.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mio::{Events, Poll};

use crate::checks::Checks;
use crate::conn::Conn;
use crate::deck::{PlanDeck, PlanLogin};
use crate::h2::H2Recorder;
use crate::plan::LoadPlan;
use crate::schedule::Pacer;
use crate::stats::Recorder;
use crate::timer::SendTimer;
use crate::tls::{HandshakeRecorder, TlsClient};

mod h2_io;
mod login;
mod requests;
mod tls_io;
mod upkeep;

use login::Session;

/// Housekeeping period: timeouts, reconnects, cancel flag, progress counters.
/// Bounds how late a timeout or a cancel is noticed, off the request path.
const TICK_NS: u64 = 10_000_000;
/// Wait after a failed connect, so a refused port is not hammered in a spin.
const CONNECT_BACKOFF_NS: u64 = 10_000_000;
/// One read buffer per thread, shared by its connections.
const READ_BUF: usize = 64 * 1024;
/// Silence while requests wait that makes a stall, and the age that makes a request still waiting
/// at the end of a step `unanswered`.
const STALL_NS: u64 = (crate::warnings::STALL_S * 1e9) as u64;

/// Targets sharing one socket address; a connection serves one group.
#[derive(Debug, Clone)]
pub struct Group {
    pub addr: SocketAddr,
    pub targets: Vec<usize>,
}

/// Counters the coordinator reads for the progress line; written once per tick.
#[derive(Debug, Default)]
pub struct Progress {
    pub requests: AtomicU64,
    pub errors: AtomicU64,
}

pub struct WorkerSpec<'a> {
    pub plan: &'a LoadPlan,
    pub groups: &'a [Group],
    /// Global index of this thread's first connection (spreads groups evenly).
    pub first_conn: usize,
    pub connections: u32,
    pub rate: Option<f64>,
    pub phase: f64,
    pub budget: Option<u64>,
    pub epoch: Instant,
    pub measure_start_ns: u64,
    /// End of the step (duration stops); None for request-count stops.
    pub end_ns: Option<u64>,
    pub cancel: &'a AtomicBool,
    pub progress: &'a Progress,
    pub pin_cpu: Option<usize>,
}

pub struct WorkerResult {
    pub rec: Recorder,
    /// When this thread stopped, worker clock ns.
    pub ended_ns: u64,
    /// CPU seconds (user, system) of this thread.
    pub cpu: (f64, f64),
    /// Connections that received no response in the measured window.
    pub starved: u32,
    /// The first stall of the measured window: (last response before it, last tick still silent).
    pub stall: Option<(u64, u64)>,
    /// Logins sent and failed (a deck with a login).
    pub logins: crate::report::LoginCounts,
    /// The TLS handshakes of a TLS plan.
    pub handshakes: Option<HandshakeRecorder>,
    /// What the HTTP/2 connections of an HTTP/2 plan saw.
    pub h2: Option<H2Recorder>,
}

struct Worker<'a> {
    plan: &'a LoadPlan,
    groups: &'a [Group],
    checks: &'a Checks,
    /// The plan's deck, if any: requests and checks come from its entries instead.
    deck: Option<&'a PlanDeck>,
    /// The next deck entry this thread sends, whichever connection sends it.
    deck_cursor: usize,
    /// The deck's login, if any: every new connection sends it first.
    login: Option<&'a PlanLogin>,
    /// Per connection, its login state and own request bytes; empty without a login, so the
    /// request path's only extra work is one bounds check.
    sessions: Vec<Session>,
    /// The next login request (a login drawn several times is taken in turn).
    login_cursor: usize,
    logins: crate::report::LoginCounts,
    poll: Poll,
    /// Open model only: wakes the poll when the next request is due, to the nanosecond.
    timer: Option<SendTimer>,
    conns: Vec<Conn>,
    /// Open connections with spare pipeline capacity (open model hands due requests to them).
    ready: Vec<usize>,
    pacer: Pacer,
    rec: Recorder,
    epoch: Instant,
    timeout_ns: u64,
    pipeline: usize,
    inflight: u64,
    stopping: bool,
    open: bool,
    measure_start_ns: u64,
    /// Connections whose responses were read in this pass; refilled after all events.
    refill: Vec<usize>,
    /// When the last response arrived (or, with nothing outstanding, the last tick): one store
    /// per response; stalls are judged at housekeeping, off the request path.
    last_answer_ns: u64,
    stall: Option<(u64, u64)>,
    /// This thread's TLS client (a TLS plan), and its handshakes.
    tls: Option<TlsClient>,
    handshakes: Option<HandshakeRecorder>,
    /// An HTTP/2 plan's connections, what they saw.
    h2_stats: Option<H2Recorder>,
    /// Whether bodies are hashed (a check wants it).
    hash: bool,
    /// Intended send times of HTTP/2 requests the server refused without processing them (a
    /// graceful GOAWAY, REFUSED_STREAM): sent again, first, on any connection (RFC 9113 8.7).
    retry: std::collections::VecDeque<u64>,
}

impl Worker<'_> {
    #[inline]
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Counts `n` failures of `err` on the in-flight requests of connection `i`, by deck kind (the
    /// totals count them once, in `Recorder::error`).
    fn inflight_kind_errors(&mut self, i: usize, now: u64, err: crate::report::ErrorKind) {
        let Some(d) = self.deck else { return };
        for r in &self.conns[i].inflight {
            self.rec.kind_error(d.entries[r.entry as usize].kind, now, err, 1);
        }
    }
}

/// Moves a deck cursor on by one; the entry it pointed at.
#[inline]
fn advance(cursor: &mut usize, len: usize) -> usize {
    let e = *cursor;
    *cursor = if e + 1 == len { 0 } else { e + 1 };
    e
}

pub fn run_worker(spec: WorkerSpec<'_>) -> Result<WorkerResult, crate::LoadError> {
    if let Some(cpu) = spec.pin_cpu {
        crate::usage::pin_current_thread(cpu)?;
    }
    let cpu0 = crate::usage::thread_cpu();
    let now0 = spec.epoch.elapsed().as_nanos() as u64;
    let mut w = Worker::new(&spec, now0)?;
    let mut events = Events::with_capacity(1024);
    let mut rbuf = vec![0u8; READ_BUF];
    for i in 0..w.conns.len() {
        w.connect(i, now0);
    }
    let mut next_tick = now0 + TICK_NS;
    // Request-count runs count the measured window only: the budget restarts
    // when warmup ends.
    let mut budget_reset = spec.measure_start_ns <= now0;
    loop {
        let now = w.now();
        if spec.end_ns.is_some_and(|e| now >= e) {
            break;
        }
        if !budget_reset && now >= spec.measure_start_ns {
            budget_reset = true;
            w.pacer.restart_budget(spec.budget);
        }
        if budget_reset && w.pacer.exhausted() && w.inflight == 0 && w.retry.is_empty() {
            break;
        }
        if now >= next_tick {
            w.housekeeping(now);
            spec.progress.requests.store(w.rec.requests, Ordering::Relaxed);
            spec.progress.errors.store(w.rec.errors.total(), Ordering::Relaxed);
            if spec.cancel.load(Ordering::Relaxed) {
                break;
            }
            next_tick = now + TICK_NS;
        }
        w.pump(now);
        w.wait(&mut events, next_tick, spec.end_ns)?;
        for ev in events.iter() {
            w.on_event(ev, &mut rbuf);
        }
        let now = w.now();
        while let Some(i) = w.refill.pop() {
            w.fill(i, now);
        }
    }
    w.stopping = true;
    let ended_ns = w.now();
    if !spec.cancel.load(Ordering::Relaxed) {
        w.watch_stall(ended_ns);
        w.count_unanswered(ended_ns);
    }
    for i in 0..w.conns.len() {
        w.drop_socket(i);
    }
    spec.progress.requests.store(w.rec.requests, Ordering::Relaxed);
    spec.progress.errors.store(w.rec.errors.total(), Ordering::Relaxed);
    let cpu1 = crate::usage::thread_cpu();
    let starved = w.conns.iter().filter(|c| c.answered == 0).count() as u32;
    Ok(WorkerResult {
        rec: w.rec,
        ended_ns,
        cpu: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1),
        starved,
        stall: w.stall,
        logins: w.logins,
        handshakes: w.handshakes,
        h2: w.h2_stats,
    })
}

impl<'a> Worker<'a> {
    /// A worker with its connections (not yet connected), pacer and recorder.
    fn new(spec: &WorkerSpec<'a>, now0: u64) -> Result<Worker<'a>, crate::LoadError> {
        let plan = spec.plan;
        let open = spec.rate.is_some();
        let deck = plan.deck.as_ref();
        // A deck's HEAD entries set the parser per response (see `process`).
        let head = deck.is_none() && plan.method == "HEAD";
        let hash = deck.map_or(plan.checks.wants_hash(), |d| d.wants_hash);
        let poll = Poll::new().map_err(crate::LoadError::Poll)?;
        let timer = if open { Some(SendTimer::new(poll.registry()).map_err(crate::LoadError::Poll)?) } else { None };
        let login = deck.and_then(|d| d.login.as_ref());
        let tls =
            plan.tls.as_ref().map(|t| TlsClient::new(t, plan.protocol)).transpose().map_err(|e| crate::LoadError::Tls(e.to_string()))?;
        let conns = (0..spec.connections as usize)
            .map(|k| Conn::new((spec.first_conn + k) % spec.groups.len(), plan.in_flight(), hash, head))
            .collect();
        Ok(Worker {
            plan,
            groups: spec.groups,
            checks: &plan.checks,
            deck,
            deck_cursor: deck.map_or(0, |d| d.start(spec.phase)),
            login,
            sessions: login.map_or(Vec::new(), |_| (0..spec.connections).map(|_| Session::default()).collect()),
            login_cursor: login.map_or(0, |l| ((spec.phase * l.requests.len() as f64) as usize).min(l.requests.len() - 1)),
            logins: Default::default(),
            poll,
            timer,
            conns,
            ready: Vec::with_capacity(spec.connections as usize * 2),
            refill: Vec::with_capacity((spec.connections as usize * 2).max(1024)),
            pacer: Pacer::new(spec.rate, now0, spec.phase, spec.budget),
            rec: Recorder::new(open, spec.measure_start_ns, deck.map_or(0, |d| d.kinds.len())),
            measure_start_ns: spec.measure_start_ns,
            epoch: spec.epoch,
            timeout_ns: plan.timeout.as_nanos() as u64,
            pipeline: plan.in_flight() as usize,
            inflight: 0,
            stopping: false,
            open,
            last_answer_ns: now0,
            stall: None,
            handshakes: tls.as_ref().map(|_| HandshakeRecorder::new()),
            tls,
            h2_stats: (plan.protocol == crate::target::Protocol::Http2).then(H2Recorder::default),
            hash,
            retry: std::collections::VecDeque::new(),
        })
    }

    /// Waits for socket events until the next tick, the pacer's next send (when a connection is
    /// ready for it) or the end of the step, whichever comes first.
    fn wait(&mut self, events: &mut Events, next_tick: u64, end_ns: Option<u64>) -> Result<(), crate::LoadError> {
        let mut deadline = next_tick;
        let mut send_due = None;
        if !self.ready.is_empty() {
            send_due = if self.retry.is_empty() { self.pacer.next_deadline() } else { Some(self.now()) }.filter(|&d| d < deadline);
            deadline = send_due.unwrap_or(deadline);
        }
        if let Some(e) = end_ns {
            deadline = deadline.min(e);
        }
        let wait_ns = deadline.saturating_sub(self.now());
        if let (Some(due), Some(timer)) = (send_due.filter(|&d| d == deadline && wait_ns > 0), self.timer.as_mut()) {
            // The poll's timeout rounds up to a whole millisecond; the timer wakes it on time.
            timer.arm(due, wait_ns).map_err(crate::LoadError::Poll)?;
        }
        match self.poll.poll(events, Some(Duration::from_nanos(wait_ns))) {
            Err(e) if e.kind() != io::ErrorKind::Interrupted => Err(crate::LoadError::Poll(e)),
            _ => Ok(()),
        }
    }
}
