//! Schedules and stop conditions: which steps run, and when each request is *intended* to be sent.
//!
//! Every schedule reduces to a list of [`StepSpec`]s and, per worker thread, a
//! [`Pacer`] that answers one question: may a request go out now, and what is
//! its intended send time? The worker loop is the same for all of them.

use std::time::Duration;

use crate::duration::parse_duration;
use crate::error::PlanError;

/// How requests are released.
#[derive(Debug, Clone, PartialEq)]
pub enum Schedule {
    /// As fast as the connections allow (wrk's model).
    Closed,
    /// Constant arrival rate in requests per second (wrk2's model).
    Rate(f64),
    /// A ladder of constant rates (perf-gauge's model).
    Ramp(Ramp),
}

impl Schedule {
    /// The one arrival rate of a `Rate` schedule; None for closed runs and ramps (a ramp's rate is per step).
    pub fn constant_rate(&self) -> Option<f64> {
        match self {
            Schedule::Rate(r) => Some(*r),
            Schedule::Closed | Schedule::Ramp(_) => None,
        }
    }
}

/// When a step ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this long (warmup not included).
    Duration(Duration),
    /// Total requests over all threads (sent and answered or failed).
    Requests(u64),
}

/// `START:STEP:STEP_DURATION:MAX[:HOLD]`: rates START, START+STEP, ... below
/// MAX each held STEP_DURATION, then MAX held HOLD (default STEP_DURATION).
#[derive(Debug, Clone, PartialEq)]
pub struct Ramp {
    /// The first rate, requests/s.
    pub start: f64,
    /// What each level adds to the rate, requests/s.
    pub step: f64,
    /// How long each level below MAX is held.
    pub step_duration: Duration,
    /// The last rate, requests/s.
    pub max: f64,
    /// How long MAX is held (default: `step_duration`).
    pub hold: Option<Duration>,
}

/// The `START:STEP:STEP_DURATION:MAX[:HOLD]` text that `Ramp::parse` reads back.
impl std::fmt::Display for Ramp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dur = |d: Duration| if d.subsec_millis() == 0 { format!("{}s", d.as_secs()) } else { format!("{}ms", d.as_millis()) };
        write!(f, "{}:{}:{}:{}", self.start, self.step, dur(self.step_duration), self.max)?;
        match self.hold {
            Some(h) => write!(f, ":{}", dur(h)),
            None => Ok(()),
        }
    }
}

impl Ramp {
    /// Reads `START:STEP:STEP_DURATION:MAX[:HOLD]`, e.g. `100:100:5s:1000:10s`.
    pub fn parse(s: &str) -> Result<Ramp, PlanError> {
        let bad = || PlanError::BadRamp(s.to_string());
        let parts: Vec<&str> = s.split(':').collect();
        if !(4..=5).contains(&parts.len()) {
            return Err(bad());
        }
        let num = |p: &str| p.trim().parse::<f64>().map_err(|_| bad());
        let r = Ramp {
            start: num(parts[0])?,
            step: num(parts[1])?,
            step_duration: parse_duration(parts[2]).map_err(|_| bad())?,
            max: num(parts[3])?,
            hold: match parts.get(4) {
                Some(h) => Some(parse_duration(h).map_err(|_| bad())?),
                None => None,
            },
        };
        r.validate().map_err(|_| bad())?;
        Ok(r)
    }

    /// Positive finite rates, MAX at least START, a step duration, and under 10,000 levels.
    pub fn validate(&self) -> Result<(), PlanError> {
        let ok = self.start.is_finite()
            && self.start > 0.0
            && self.step.is_finite()
            && self.step > 0.0
            && self.max.is_finite()
            && self.max >= self.start
            && !self.step_duration.is_zero()
            && (self.max - self.start) / self.step < 10_000.0;
        if ok {
            Ok(())
        } else {
            Err(PlanError::BadRamp(format!("{self:?}")))
        }
    }

    /// The (rate, duration) levels in order.
    pub fn levels(&self) -> Vec<(f64, Duration)> {
        let mut v = Vec::new();
        let mut k = 0u32;
        loop {
            // Multiply instead of accumulating so 0.1-steps do not drift.
            let r = self.start + self.step * k as f64;
            if r >= self.max - 1e-9 {
                break;
            }
            v.push((r, self.step_duration));
            k += 1;
        }
        v.push((self.max, self.hold.unwrap_or(self.step_duration)));
        v
    }
}

/// One measured step: its own connections, rate and stop condition.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSpec {
    /// `main`, `rate 1000/s` or `64 connections`: how reports name the step.
    pub label: String,
    /// Connections over all threads.
    pub connections: u32,
    /// Arrival rate over all threads, requests/s; None: closed model.
    pub rate: Option<f64>,
    /// When the step's measured window ends.
    pub stop: Stop,
    /// Unmeasured lead-in before this step (only the first step gets the plan's warmup).
    pub warmup: Duration,
}

/// Splits `total` as evenly as possible into `parts`; part `i` gets its share.
pub fn share(total: u64, parts: u32, i: u32) -> u64 {
    let parts = parts as u64;
    total / parts + u64::from((i as u64) < total % parts)
}

/// Per-thread request release. Times are nanoseconds on the worker's clock.
#[derive(Debug, Clone)]
pub struct Pacer {
    /// None: closed model. Some: nanoseconds between intended sends.
    interval_ns: Option<f64>,
    start_ns: u64,
    /// Index of the next request to release.
    next: u64,
    /// How many requests may still be released (`-n` share), None = unlimited.
    budget: Option<u64>,
}

impl Pacer {
    /// `rate` is this thread's share in requests per second; `phase` in [0,1)
    /// staggers threads so they do not all fire at the same instant.
    pub fn new(rate: Option<f64>, start_ns: u64, phase: f64, budget: Option<u64>) -> Pacer {
        let interval_ns = rate.map(|r| 1e9 / r);
        let start_ns = start_ns + interval_ns.map(|i| (i * phase) as u64).unwrap_or(0);
        Pacer { interval_ns, start_ns, next: 0, budget }
    }

    /// Intended send time of the `k`-th request (open model).
    #[inline]
    pub fn intended(&self, k: u64) -> u64 {
        match self.interval_ns {
            Some(i) => self.start_ns + (k as f64 * i) as u64,
            None => self.start_ns,
        }
    }

    /// If a request may be sent at `now`, its intended send time. In the closed
    /// model that is `now` itself: nothing is owed to a schedule.
    #[inline]
    pub fn due(&self, now: u64) -> Option<u64> {
        if self.budget == Some(0) {
            return None;
        }
        match self.interval_ns {
            None => Some(now),
            Some(_) => {
                let t = self.intended(self.next);
                (t <= now).then_some(t)
            }
        }
    }

    /// Marks the request returned by `due` as released.
    #[inline]
    pub fn take(&mut self) {
        self.next += 1;
        if let Some(b) = &mut self.budget {
            *b -= 1;
        }
    }

    /// When the next request becomes due (open model), for the poll timeout.
    pub fn next_deadline(&self) -> Option<u64> {
        if self.budget == Some(0) || self.interval_ns.is_none() {
            return None;
        }
        Some(self.intended(self.next))
    }

    pub fn unlimited(&self) -> bool {
        self.budget.is_none()
    }

    /// Starts the request budget afresh (when warmup ends).
    pub fn restart_budget(&mut self, budget: Option<u64>) {
        self.budget = budget;
    }

    pub fn exhausted(&self) -> bool {
        self.budget == Some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ramp_prints_what_parse_reads() {
        for text in ["1000:1000:5s:10000", "400:150:1500ms:1000:10s", "2.5:0.5:1s:5"] {
            let ramp = Ramp::parse(text).unwrap();
            assert_eq!(ramp.to_string(), text);
            assert_eq!(Ramp::parse(&ramp.to_string()).unwrap(), ramp);
        }
    }

    #[test]
    fn constant_rate_intended_times() {
        let mut p = Pacer::new(Some(1000.0), 5_000, 0.0, None);
        assert_eq!(p.due(4_999), None);
        assert_eq!(p.due(5_000), Some(5_000));
        p.take();
        assert_eq!(p.due(5_000 + 999_999), None);
        assert_eq!(p.next_deadline(), Some(5_000 + 1_000_000));
        // A late loop owes every request since: they come out one by one with
        // their own intended times, not "now".
        let now = 5_000 + 10_000_000;
        let mut seen = vec![];
        while let Some(t) = p.due(now) {
            seen.push(t);
            p.take();
        }
        assert_eq!(seen.len(), 10);
        assert_eq!(seen[0], 5_000 + 1_000_000);
        assert_eq!(seen[9], 5_000 + 10_000_000);
    }

    #[test]
    fn phase_and_budget() {
        let mut p = Pacer::new(Some(100.0), 0, 0.5, Some(2));
        assert_eq!(p.intended(0), 5_000_000);
        assert_eq!(p.intended(1), 15_000_000);
        p.take();
        p.take();
        assert!(p.exhausted());
        assert_eq!(p.due(u64::MAX), None);
        let c = Pacer::new(None, 0, 0.0, None);
        assert_eq!(c.due(42), Some(42));
    }

    #[test]
    fn ramp_levels() {
        let r = Ramp::parse("100:100:5s:400:10s").unwrap();
        let l = r.levels();
        let rates: Vec<f64> = l.iter().map(|x| x.0).collect();
        assert_eq!(rates, vec![100.0, 200.0, 300.0, 400.0]);
        assert_eq!(l[0].1, Duration::from_secs(5));
        assert_eq!(l[3].1, Duration::from_secs(10));
        let r = Ramp::parse("100:150:1s:400").unwrap();
        let rates: Vec<f64> = r.levels().iter().map(|x| x.0).collect();
        assert_eq!(rates, vec![100.0, 250.0, 400.0]);
        assert_eq!(r.levels()[2].1, Duration::from_secs(1));
        for bad in ["", "1:2:3", "0:1:1s:10", "10:0:1s:20", "10:1:1s:5", "10:1:xs:20", "1:1:1s:2:3:4"] {
            assert!(Ramp::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shares() {
        let v: Vec<u64> = (0..3).map(|i| share(10, 3, i)).collect();
        assert_eq!(v, vec![4, 3, 3]);
        assert_eq!((0..7).map(|i| share(100, 7, i)).sum::<u64>(), 100);
    }
}
