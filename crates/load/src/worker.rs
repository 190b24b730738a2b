//! The per-thread event loop: one mio Poll owning its connections, one loop for every schedule.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll};

use crate::conn::{token, untoken, Conn, ConnState, InFlight, NOT_READY};
use crate::parser::Response;
use crate::plan::{Checks, LoadPlan};
use crate::report::ErrorKind;
use crate::schedule::Pacer;
use crate::stats::Recorder;
use crate::timer::SendTimer;

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
}

struct Worker<'a> {
    plan: &'a LoadPlan,
    groups: &'a [Group],
    checks: &'a Checks,
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
}

impl Worker<'_> {
    #[inline]
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn connect(&mut self, i: usize, now: u64) {
        let addr = self.groups[self.conns[i].group].addr;
        let res = mio::net::TcpStream::connect(addr).and_then(|mut s| {
            let _ = s.set_nodelay(true);
            let c = &self.conns[i];
            self.poll.registry().register(&mut s, token(i, c.generation), Interest::READABLE | Interest::WRITABLE)?;
            Ok(s)
        });
        let c = &mut self.conns[i];
        match res {
            Ok(s) => {
                c.stream = Some(s);
                c.state = ConnState::Connecting;
                c.since = now;
            }
            Err(_) => self.connect_failed(i, now),
        }
    }

    fn connect_failed(&mut self, i: usize, now: u64) {
        self.rec.error(now, ErrorKind::Connect, 1);
        // A request-count run must end even if nothing ever connects: a failed
        // connect uses up one attempt of the closed model's budget.
        if !self.open && self.pacer.due(now).is_some() && !self.pacer.unlimited() {
            self.pacer.take();
        }
        self.drop_socket(i);
        self.conns[i].retry_at = now + CONNECT_BACKOFF_NS;
    }

    fn drop_socket(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if let Some(mut s) = c.stream.take() {
            let _ = self.poll.registry().deregister(&mut s);
        }
        self.inflight -= c.inflight.len() as u64;
        c.reset_socket();
    }

    /// Ends the socket: in-flight requests count as `kind` errors (none if
    /// `kind` is None), then reconnect at once unless stopping.
    fn recycle(&mut self, i: usize, now: u64, kind: Option<ErrorKind>) {
        if let Some(k) = kind {
            let n = self.conns[i].inflight.len() as u64;
            self.rec.error(now, k, n.max(u64::from(k == ErrorKind::Malformed)));
        }
        self.drop_socket(i);
        if !self.stopping {
            self.connect(i, now);
        }
    }

    fn on_event(&mut self, ev: &mio::event::Event, rbuf: &mut [u8]) {
        if ev.token() == crate::timer::TIMER {
            // The send timer only wakes the loop; the pump after the wait sends what is due.
            return;
        }
        let (i, generation) = untoken(ev.token());
        if i >= self.conns.len() || self.conns[i].generation != generation {
            return;
        }
        let now = self.now();
        match self.conns[i].state {
            ConnState::Idle => {}
            ConnState::Connecting => {
                let s = self.conns[i].stream.as_ref().expect("connecting has a socket");
                let connected = match s.take_error() {
                    Ok(Some(_)) | Err(_) => Some(false),
                    Ok(None) => match s.peer_addr() {
                        Ok(_) => Some(true),
                        Err(e) if e.kind() == io::ErrorKind::NotConnected => None,
                        Err(_) => Some(false),
                    },
                };
                match connected {
                    Some(true) => {
                        self.conns[i].state = ConnState::Open;
                        self.fill(i, now);
                    }
                    Some(false) => self.connect_failed(i, now),
                    None => {}
                }
            }
            ConnState::Open => {
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.read(i, now, rbuf);
                }
                if self.conns[i].state == ConnState::Open && ev.is_writable() && !self.conns[i].wbuf.is_empty() {
                    self.write(i, now);
                }
            }
        }
    }

    fn read(&mut self, i: usize, now: u64, rbuf: &mut [u8]) {
        let generation = self.conns[i].generation;
        loop {
            let res = match self.conns[i].stream.as_mut() {
                Some(s) => s.read(rbuf),
                None => return,
            };
            match res {
                Ok(0) => {
                    self.eof(i, now);
                    return;
                }
                Ok(n) => {
                    self.rec.bytes(now, n);
                    self.process(i, now, &rbuf[..n]);
                    if self.conns[i].generation != generation || self.conns[i].state != ConnState::Open {
                        return;
                    }
                    // Edge-triggered: a short read means the socket is drained,
                    // and new data raises a new edge; skip the EAGAIN syscall.
                    if n < rbuf.len() {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.recycle(i, now, Some(ErrorKind::Read));
                    return;
                }
            }
        }
    }

    fn eof(&mut self, i: usize, now: u64) {
        match self.conns[i].parser.finish() {
            Ok(Some(resp)) => {
                self.respond(i, now, resp);
                if self.conns[i].state == ConnState::Open {
                    self.recycle(i, now, Some(ErrorKind::Read));
                }
            }
            // Closed between responses: only the unanswered requests failed.
            Ok(None) => self.recycle(i, now, Some(ErrorKind::Read)),
            Err(_) => self.recycle(i, now, Some(ErrorKind::Read)),
        }
    }

    fn process(&mut self, i: usize, now: u64, mut data: &[u8]) {
        let generation = self.conns[i].generation;
        while !data.is_empty() {
            match self.conns[i].parser.parse(data) {
                Ok((used, Some(resp))) => {
                    data = &data[used..];
                    self.respond(i, now, resp);
                    if self.conns[i].generation != generation {
                        return;
                    }
                }
                Ok((_, None)) => break,
                Err(_) => {
                    self.recycle(i, now, Some(ErrorKind::Malformed));
                    return;
                }
            }
        }
        // Refill once per event-loop pass, not once per response: every slot
        // freed by this read goes out in a single write, after every readable
        // connection of this pass was read. The server then finds a burst of
        // requests per wakeup, as it does with wrk, instead of one at a time.
        self.refill.push(i);
    }

    /// A complete response on connection `i`.
    fn respond(&mut self, i: usize, now: u64, resp: Response) {
        let Some(req) = self.conns[i].inflight.pop_front() else {
            // An answer to nothing we asked: the stream is out of sync.
            self.recycle(i, now, Some(ErrorKind::Malformed));
            return;
        };
        self.inflight -= 1;
        self.last_answer_ns = now;
        if now.saturating_sub(req.intended) > self.timeout_ns {
            // Past the timeout: an error, never a latency sample.
            self.rec.error(now, ErrorKind::Timeout, 1);
        } else {
            let c = self.checks;
            let verdict = if !c.status_ok(resp.status) {
                Some(ErrorKind::Status(resp.status))
            } else if c.expect_length.is_some_and(|l| l != resp.body_len) || c.expect_body_hash.is_some_and(|h| h != resp.body_hash) {
                Some(ErrorKind::BodyMismatch)
            } else {
                None
            };
            self.rec.response(now, req.intended, req.sent, verdict);
            if now >= self.measure_start_ns {
                self.conns[i].answered += 1;
            }
        }
        let c = &self.conns[i];
        if resp.close {
            // The server is done with this socket; anything still pipelined is lost.
            self.recycle(i, now, Some(ErrorKind::Read));
        } else if (c.draining || self.plan.close) && c.inflight.is_empty() {
            self.recycle(i, now, None);
        }
    }

    /// Hands connection `i` as many due requests as its pipeline allows and
    /// writes them in one syscall.
    fn fill(&mut self, i: usize, now: u64) {
        if self.stopping {
            return;
        }
        let c = &mut self.conns[i];
        if c.state != ConnState::Open || c.draining {
            return;
        }
        // Closed model with pipelining: a connection sends its P requests as
        // one batch and the next batch when all are answered. Topping up a
        // slot per response would turn each batch into many small writes,
        // and the server's cost per request (one read per write) would set
        // the throughput, not the pipeline depth.
        if !self.open && self.pipeline > 1 && !c.inflight.is_empty() {
            return;
        }
        let mut added = 0;
        while c.inflight.len() < self.pipeline {
            let Some(intended) = self.pacer.due(now) else { break };
            self.pacer.take();
            if now - intended > self.timeout_ns {
                // Owed for longer than the timeout: it would be an error
                // whenever it went out, so count it without sending it.
                self.rec.error(now, ErrorKind::Timeout, 1);
                continue;
            }
            if self.open && added == 0 && c.ready_since != NOT_READY {
                // The connection was free since `ready_since` and the request
                // due since `intended`: any delay past both is the client's.
                let lag = now.saturating_sub(intended.max(c.ready_since));
                if lag > self.rec.max_lag_ns && self.rec.measuring(now) {
                    self.rec.max_lag_ns = lag;
                }
            }
            let g = &self.groups[c.group];
            let t = g.targets[c.cursor];
            c.cursor = (c.cursor + 1) % g.targets.len();
            c.wbuf.extend_from_slice(&self.plan.targets[t].request);
            c.inflight.push_back(InFlight { intended, sent: now });
            c.sent_on_socket += 1;
            added += 1;
            if self.plan.requests_per_conn.is_some_and(|k| c.sent_on_socket >= k) || self.plan.close {
                c.draining = true;
                break;
            }
        }
        self.inflight += added;
        if added > 0 {
            self.write(i, now);
        }
        let c = &mut self.conns[i];
        if c.state == ConnState::Open && !c.draining && c.inflight.len() < self.pipeline {
            if c.ready_since == NOT_READY {
                c.ready_since = now;
            }
            // `in_ready` <=> on the stack: never pushed twice, so the stack
            // stays bounded by the connection count.
            if !c.in_ready {
                c.in_ready = true;
                self.ready.push(i);
            }
        } else {
            c.ready_since = NOT_READY;
        }
    }

    fn write(&mut self, i: usize, now: u64) {
        let c = &mut self.conns[i];
        let Some(s) = c.stream.as_mut() else { return };
        let failed = loop {
            if c.woff >= c.wbuf.len() {
                c.wbuf.clear();
                c.woff = 0;
                break false;
            }
            match s.write(&c.wbuf[c.woff..]) {
                Ok(0) => break true,
                Ok(n) => c.woff += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break true,
            }
        };
        if failed {
            self.recycle(i, now, Some(ErrorKind::Write));
        }
    }

    /// Open model: give due requests to connections that have room.
    fn pump(&mut self, now: u64) {
        while self.pacer.due(now).is_some() {
            let Some(i) = self.ready.pop() else { break };
            self.conns[i].in_ready = false;
            self.fill(i, now);
        }
    }

    fn housekeeping(&mut self, now: u64) {
        self.watch_stall(now);
        // Requests owed for longer than the timeout with no connection free to
        // carry them are timeouts; this also bounds the backlog of a dead server.
        while self.pacer.due(now.saturating_sub(self.timeout_ns)).is_some() && self.open {
            self.pacer.take();
            self.rec.error(now, ErrorKind::Timeout, 1);
        }
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            match c.state {
                ConnState::Idle => {
                    if now >= c.retry_at && !self.stopping && (self.open || !self.pacer.exhausted()) {
                        self.connect(i, now);
                    }
                }
                ConnState::Connecting => {
                    if now - c.since > self.timeout_ns {
                        self.connect_failed(i, now);
                    }
                }
                ConnState::Open => {
                    if c.inflight.front().is_some_and(|r| now - r.sent > self.timeout_ns) {
                        self.recycle(i, now, Some(ErrorKind::Timeout));
                    }
                }
            }
        }
    }
}

impl Worker<'_> {
    /// Notes the first silence of at least [`STALL_NS`] with requests outstanding in the measured
    /// window, and how long it lasted (to the last tick that was still silent).
    fn watch_stall(&mut self, now: u64) {
        if self.inflight == 0 {
            self.last_answer_ns = now;
            return;
        }
        let silent = now.saturating_sub(self.last_answer_ns);
        if silent < STALL_NS || now < self.measure_start_ns {
            return;
        }
        match &mut self.stall {
            None => self.stall = Some((self.last_answer_ns, now)),
            Some((start, end)) if *start == self.last_answer_ns => *end = now,
            Some(_) => {}
        }
    }

    /// At the end of a step that finds this thread stalled (no response for [`STALL_NS`]),
    /// requests that have waited at least that long are `unanswered` errors. Younger ones are the
    /// normal last requests of busy connections; and while responses still arrive, old requests
    /// are a slow or starving server (a loop of a second per request, one keep-alive connection
    /// per worker), which other numbers show, not a hang.
    fn count_unanswered(&mut self, now: u64) {
        if now.saturating_sub(self.last_answer_ns) < STALL_NS {
            return;
        }
        let old = self.conns.iter().flat_map(|c| c.inflight.iter()).filter(|r| now.saturating_sub(r.sent) >= STALL_NS).count();
        self.rec.error(now, ErrorKind::Unanswered, old as u64);
    }
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
        if budget_reset && w.pacer.exhausted() && w.inflight == 0 {
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
    Ok(WorkerResult { rec: w.rec, ended_ns, cpu: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1), starved, stall: w.stall })
}

impl<'a> Worker<'a> {
    /// A worker with its connections (not yet connected), pacer and recorder.
    fn new(spec: &WorkerSpec<'a>, now0: u64) -> Result<Worker<'a>, crate::LoadError> {
        let plan = spec.plan;
        let open = spec.rate.is_some();
        let head = plan.method == "HEAD";
        let poll = Poll::new().map_err(crate::LoadError::Poll)?;
        let timer = if open { Some(SendTimer::new(poll.registry()).map_err(crate::LoadError::Poll)?) } else { None };
        let conns = (0..spec.connections as usize)
            .map(|k| Conn::new((spec.first_conn + k) % spec.groups.len(), plan.pipeline, plan.checks.wants_hash(), head))
            .collect();
        Ok(Worker {
            plan,
            groups: spec.groups,
            checks: &plan.checks,
            poll,
            timer,
            conns,
            ready: Vec::with_capacity(spec.connections as usize * 2),
            refill: Vec::with_capacity((spec.connections as usize * 2).max(1024)),
            pacer: Pacer::new(spec.rate, now0, spec.phase, spec.budget),
            rec: Recorder::new(open, spec.measure_start_ns),
            measure_start_ns: spec.measure_start_ns,
            epoch: spec.epoch,
            timeout_ns: plan.timeout.as_nanos() as u64,
            pipeline: plan.pipeline as usize,
            inflight: 0,
            stopping: false,
            open,
            last_answer_ns: now0,
            stall: None,
        })
    }

    /// Waits for socket events until the next tick, the pacer's next send (when a connection is
    /// ready for it) or the end of the step, whichever comes first.
    fn wait(&mut self, events: &mut Events, next_tick: u64, end_ns: Option<u64>) -> Result<(), crate::LoadError> {
        let mut deadline = next_tick;
        let mut send_due = None;
        if !self.ready.is_empty() {
            send_due = self.pacer.next_deadline().filter(|&d| d < deadline);
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
