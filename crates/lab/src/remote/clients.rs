//! Several load clients as one: each host gets its share of the load (connections in the closed
//! model, the rate in the open one), all start at one instant agreed through their sessions, and
//! their results are merged exactly. A host lost mid-run stops the others and names the host.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bakeoff_load::{LoadPlan, RunOutput, Stop};
use bakeoff_model::plan::place::Place;
use bakeoff_model::records::noise::TrialNoise;

use super::error::HostError;
use super::merge::{decode_result, merge};
use super::protocol::{wall_ns, Identity, Reply, Request, RunSpec};
use super::session::{ClockOffset, Session, SessionOptions};

/// How long before the agreed start the run requests leave: room for the slowest session's round
/// trip and the agents' plan building.
const START_LEAD: Duration = Duration::from_millis(250);

/// Open sessions to every client host, in the order they were placed.
pub struct ClientSet {
    sessions: Vec<Session>,
}

/// One client's part of a merged run.
#[derive(Debug, Clone)]
pub struct ClientRun {
    /// The host as messages name it.
    pub host: String,
    /// Its clock against the controller's.
    pub clock: ClockOffset,
    /// How late it started after the agreed instant, by its own clock, ns.
    pub started_late_ns: u64,
    /// Its own report and histograms, read back exactly as it sent them.
    pub output: RunOutput,
    /// Steal and other processes' CPU on its host over the load.
    pub noise: Option<TrialNoise>,
}

/// A load run from several clients: the merged run and each client's own.
#[derive(Debug, Clone)]
pub struct MergedRun {
    /// The clients' runs as one (histograms added).
    pub merged: RunOutput,
    /// Each client's, in placement order.
    pub clients: Vec<ClientRun>,
}

impl ClientSet {
    /// Opens a session to every place at once; the first that fails is the error, and the sessions
    /// already open are closed.
    pub fn open(places: &[Place], opts: &SessionOptions, expect: &Identity) -> Result<ClientSet, HostError> {
        let opened: Vec<Result<Session, HostError>> = std::thread::scope(|s| {
            let handles: Vec<_> = places.iter().map(|p| s.spawn(move || Session::open(p, opts, expect))).collect();
            handles.into_iter().map(|h| h.join().expect("a session opener panicked")).collect()
        });
        let mut sessions = Vec::new();
        let mut first_error = None;
        for o in opened {
            match o {
                Ok(s) => sessions.push(s),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(ClientSet { sessions }),
        }
    }

    /// The sessions, in placement order.
    pub fn sessions(&self) -> &[Session] {
        &self.sessions
    }

    /// The sessions, to ask each host something of its own (the path to the server).
    pub fn sessions_mut(&mut self) -> &mut [Session] {
        &mut self.sessions
    }

    /// An instant, on the controller's clock, every client can start at: now, the lead, and four
    /// clock bounds of the slowest host (or of `other_bound_ns`, another host's, if larger).
    pub fn next_start(&self, other_bound_ns: u64) -> u64 {
        let slowest = self.sessions.iter().map(|s| s.clock().bound_ns).max().unwrap_or(0).max(other_bound_ns);
        wall_ns() + START_LEAD.as_nanos() as u64 + 4 * slowest
    }

    /// Runs `plan` split across the clients, all starting together; `cancel` stops every client
    /// early (their partial results are still merged). A lost session ends every other one and is
    /// the error, naming its host.
    pub fn run(&mut self, plan: &LoadPlan, cancel: &AtomicBool) -> Result<MergedRun, HostError> {
        let start = self.next_start(0);
        self.run_from(plan, cancel, start)
    }

    /// As `run`, starting at `start` (ns since the epoch on the controller's clock, from
    /// `next_start`), so that another host can be told the same instant.
    pub fn run_from(&mut self, plan: &LoadPlan, cancel: &AtomicBool, start: u64) -> Result<MergedRun, HostError> {
        let mut specs = split(plan, self.sessions.len())?;
        // Open model: client i starts i arrivals after client 0, so with each client's threads on
        // their own phases the clients' arrivals interleave into the one schedule of the whole rate.
        // A ramp's clients are staggered at its first level's rate.
        let steps = plan.steps();
        let stagger_ns = steps.first().and_then(|s| s.rate).map_or(0.0, |r| 1e9 / r);
        for (i, (spec, s)) in specs.iter_mut().zip(&self.sessions).enumerate() {
            let at = start as i64 + (i as f64 * stagger_ns) as i64;
            spec.start_at_ns = (at + s.clock().offset_ns) as u64;
        }
        for (spec, s) in specs.into_iter().zip(self.sessions.iter_mut()) {
            if let Err(e) = s.send(&Request::Run { spec: Box::new(spec) }) {
                self.close_all();
                return Err(e);
            }
        }
        let limit = run_limit(plan);
        match self.collect(cancel, limit) {
            Ok(runs) => {
                let outputs: Vec<RunOutput> = runs.iter().map(|r| r.output.clone()).collect();
                let requests = match plan.stop {
                    Stop::Requests(n) => Some(n),
                    Stop::Duration(_) => None,
                };
                let labels: Vec<String> = steps.into_iter().map(|s| s.label).collect();
                let merged = merge(&outputs, (plan.connections, plan.schedule.constant_rate(), requests), &labels);
                Ok(MergedRun { merged, clients: runs })
            }
            Err(e) => {
                self.close_all();
                Err(e)
            }
        }
    }

    /// Waits for every client's reply, passing a cancel on; the first failure is returned at once.
    fn collect(&mut self, cancel: &AtomicBool, limit: Duration) -> Result<Vec<ClientRun>, HostError> {
        let deadline = Instant::now() + limit;
        let mut runs: Vec<Option<ClientRun>> = vec![None; self.sessions.len()];
        let mut cancelled = false;
        while runs.iter().any(Option::is_none) {
            if cancel.load(Ordering::Relaxed) && !cancelled {
                cancelled = true;
                for s in &mut self.sessions {
                    s.send(&Request::Cancel)?;
                }
            }
            for (i, s) in self.sessions.iter_mut().enumerate() {
                if runs[i].is_some() {
                    continue;
                }
                match s.try_recv()? {
                    None => {}
                    Some(Reply::Ran { result }) => {
                        let output = decode_result(&result).map_err(|e| HostError::SessionLost {
                            host: s.host(),
                            cause: format!("its histograms do not read back: {e}"),
                            hint: "install the controller's build there".into(),
                        })?;
                        let (clock, started_late_ns, noise) = (s.clock(), result.started_late_ns, result.noise.clone());
                        runs[i] = Some(ClientRun { host: s.host(), clock, started_late_ns, output, noise });
                    }
                    Some(Reply::Error { message }) => {
                        let hint = "check the URL is reachable from that host and the clock offset is small (`bakeoff load` alone there)";
                        return Err(HostError::Agent { host: s.host(), message, hint: hint.into() });
                    }
                    Some(other) => {
                        return Err(HostError::SessionLost {
                            host: s.host(),
                            cause: format!("unexpected reply {other:?}"),
                            hint: "install the controller's build there".into(),
                        })
                    }
                }
            }
            if Instant::now() > deadline {
                let late = self.sessions.iter().zip(&runs).find(|(_, r)| r.is_none()).map(|(s, _)| s.host()).unwrap_or_default();
                return Err(HostError::SessionLost {
                    host: late,
                    cause: format!("no result within {limit:?}"),
                    hint: "the host may be overloaded or hung".into(),
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(runs.into_iter().map(|r| r.expect("every run arrived")).collect())
    }

    /// Ends every session: the agents see their input end, stop any load and exit.
    pub fn close_all(&mut self) {
        for s in self.sessions.drain(..) {
            drop(s);
        }
    }

    /// Says bye to every agent and ends the sessions.
    pub fn close(mut self) {
        for s in self.sessions.drain(..) {
            s.close();
        }
    }
}

/// How long a run may take before a silent client counts as lost: its planned time, the warmup,
/// the start lead, a timeout's worth of draining, and slack.
fn run_limit(plan: &LoadPlan) -> Duration {
    let planned = plan
        .steps()
        .iter()
        .map(|s| match s.stop {
            Stop::Duration(d) => d,
            // A request-count run has no planned length: allow it the longest a study would take.
            Stop::Requests(_) => Duration::from_secs(3600),
        })
        .sum::<Duration>();
    planned + plan.warmup + plan.timeout + START_LEAD + Duration::from_secs(10)
}

/// `plan` as `n` specs: connections split (each client needs one), threads at most a client's
/// connections, the rate and a request budget split; the remainder goes to the first clients.
pub fn split(plan: &LoadPlan, n: usize) -> Result<Vec<RunSpec>, HostError> {
    let whole = RunSpec::from_plan(plan);
    if n == 0 || (whole.connections as usize) < n {
        return Err(HostError::Split {
            clients: n,
            problem: format!("{} connections for {n} clients", whole.connections),
            hint: format!("give at least one connection per client (-c {n} or more)"),
        });
    }
    if let Some(&fewest) = whole.conn_ladder.as_ref().and_then(|l| l.iter().min()).filter(|&&c| (c as usize) < n) {
        return Err(HostError::Split {
            clients: n,
            problem: format!("a ladder step of {fewest} connections for {n} clients"),
            hint: format!("start the ladder at {n} connections or more"),
        });
    }
    let ramp = whole.ramp.as_ref().map(|r| r.share(n));
    if let (Some(whole_ramp), Some(part)) = (&whole.ramp, &ramp) {
        // Each client must run the whole's levels, or its steps would not line up with the others'.
        if whole_ramp.levels() != part.levels() {
            return Err(HostError::Split {
                clients: n,
                problem: format!("the ramp's rates over {n} clients round to other levels"),
                hint: "give the ramp whole requests/s per client (START, STEP and MAX multiples of the client count)".into(),
            });
        }
    }
    Ok((0..n)
        .map(|i| {
            let mut s = whole.clone();
            s.connections = share(whole.connections as u64, n, i) as u32;
            s.conn_ladder = whole.conn_ladder.as_ref().map(|l| l.iter().map(|&c| share(c as u64, n, i) as u32).collect());
            let fewest = s.conn_ladder.as_ref().and_then(|l| l.iter().copied().min()).unwrap_or(s.connections);
            s.threads = whole.threads.min(fewest);
            s.rate = whole.rate.map(|r| r / n as f64);
            s.ramp = ramp.clone();
            s.requests = whole.requests.map(|r| share(r, n, i));
            s.deck = whole.deck.as_ref().map(|d| rotated_for(d, n, i, s.threads));
            s
        })
        .collect())
}

/// Client `i`'s copy of a deck walked from `n` clients of `threads` workers each: a client's
/// worker `w` starts at `w / threads` of its copy, so rotating client `i`'s by `i / (n threads)`
/// of the deck starts every client's workers interleaved over it, as `n threads` workers of one
/// client would; a login's requests (taken by connections in turn) are spread over the clients
/// the same way.
fn rotated_for(deck: &bakeoff_load::Deck, n: usize, i: usize, threads: u32) -> bakeoff_load::Deck {
    let slots = n * threads.max(1) as usize;
    let logins = deck.login.as_ref().map_or(0, |l| l.requests.len());
    deck.rotated(i * deck.entries.len() / slots, i * logins / n)
}

/// Client `i`'s share of `total` over `n`: equal parts, the remainder to the first ones.
fn share(total: u64, n: usize, i: usize) -> u64 {
    total / n as u64 + u64::from((i as u64) < total % n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_rate_and_requests_are_split_without_loss() {
        let plan = LoadPlan::builder("http://127.0.0.1:9/").connections(7).threads(3).rate(1000.0).build().unwrap();
        let specs = split(&plan, 3).unwrap();
        assert_eq!(specs.iter().map(|s| s.connections).collect::<Vec<_>>(), [3, 2, 2]);
        assert_eq!(specs.iter().map(|s| s.threads).collect::<Vec<_>>(), [3, 2, 2]);
        assert!(specs.iter().all(|s| (s.rate.unwrap() - 1000.0 / 3.0).abs() < 1e-9));
        let counted = LoadPlan::builder("http://127.0.0.1:9/").connections(4).requests(1001).build().unwrap();
        assert_eq!(split(&counted, 2).unwrap().iter().map(|s| s.requests.unwrap()).sum::<u64>(), 1001);
        assert!(matches!(split(&counted, 5), Err(HostError::Split { .. })));
    }

    #[test]
    fn a_ramps_rates_and_a_ladders_connections_are_split_step_by_step() {
        let ramp = bakeoff_load::Ramp::parse("300:300:1s:900").unwrap();
        let plan = LoadPlan::builder("http://127.0.0.1:9/").connections(6).ramp(ramp).build().unwrap();
        let specs = split(&plan, 3).unwrap();
        for s in &specs {
            let levels: Vec<f64> = s.to_plan().unwrap().steps().iter().filter_map(|st| st.rate).collect();
            assert_eq!(levels, [100.0, 200.0, 300.0], "each client runs a third of every level");
        }
        let plan = LoadPlan::builder("http://127.0.0.1:9/").connections(3).threads(3).conn_ladder(vec![3, 8, 64]).build().unwrap();
        let specs = split(&plan, 3).unwrap();
        let ladders: Vec<Vec<u32>> = specs.iter().map(|s| s.conn_ladder.clone().unwrap()).collect();
        assert_eq!(ladders, [vec![1, 3, 22], vec![1, 3, 21], vec![1, 2, 21]], "every step's connections, without loss");
        assert!(specs.iter().all(|s| s.threads == 1), "threads at most a client's fewest connections");
        let plan = LoadPlan::builder("http://127.0.0.1:9/").connections(8).threads(1).conn_ladder(vec![3, 8]).build().unwrap();
        let e = split(&plan, 4).unwrap_err().to_string();
        assert!(e.contains("a ladder step of 3 connections for 4 clients"), "{e}");
    }

    #[test]
    fn every_client_walks_the_whole_deck_from_between_the_others_workers() {
        let entries: Vec<bakeoff_load::DeckEntry> = (0..8).map(|i| bakeoff_load::DeckEntry::get(0, &format!("/{i}"))).collect();
        let deck = bakeoff_load::Deck { kinds: vec!["k".into()], entries, login: None };
        let plan = LoadPlan::builder("http://127.0.0.1:9/").connections(4).threads(2).deck(deck).build().unwrap();
        let specs = split(&plan, 2).unwrap();
        let firsts: Vec<&str> = specs.iter().map(|s| s.deck.as_ref().unwrap().entries[0].path.as_str()).collect();
        // Two clients of two workers: client 1's copy starts a quarter on, so the four workers
        // start at entries 0, 2 (client 1), 4 (client 0's second), 6, as four of one client would.
        assert_eq!(firsts, ["/0", "/2"]);
        assert!(specs.iter().all(|s| s.deck.as_ref().unwrap().entries.len() == 8), "each copy is the whole deck");
        let back = specs[1].to_plan().unwrap();
        assert_eq!(back.deck.unwrap().entries.len(), 8, "the agent builds the deck it was sent");
    }
}
