//! The live status of a setup or a run: where it is, how long it took, how long is left. On a
//! terminal one line redrawn in place (indicatif); elsewhere (a pipe, CI, `NO_COLOR`, `--quiet`)
//! a plain line at most every few seconds, without control characters. The lab's events feed it;
//! the lines every event prints (progress.rs) still print, above the live line.

use bakeoff_lab::run::Event;
use bakeoff_lab::stacks::setup::SetupProgress;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A plain line at most this often, off a terminal.
pub const PLAIN_EVERY: Duration = Duration::from_secs(5);
/// The live line is redrawn (and the plain one considered) this often, events or not.
const TICK: Duration = Duration::from_millis(500);
/// A build's output line is cut to this many characters.
const OUTPUT_WIDTH: usize = 70;

/// What the status shows now.
#[derive(Debug, Default)]
enum Phase {
    #[default]
    Idle,
    /// A stack's setup: since when, its phase, its build's last line.
    Setup { stack: String, since: Duration, step: String, last: String },
    /// The noise floor's A/A measurement before a run: since when, how long it usually takes.
    Probe { since: Duration, expected: Duration },
    /// The run's measurements.
    Run(RunProgress),
}

/// A run's counts and clocks, from which its remaining time is estimated.
#[derive(Debug, Default, Clone)]
struct RunProgress {
    since: Duration,
    /// The plan's estimate of the whole run.
    estimate: Duration,
    total: usize,
    /// Trials started so far, the current one included (under the block schedule a slice is
    /// stored only when its launch ends, so starts, not stores, say how far the run is).
    started: usize,
    /// The plan's time for all its trials, precision rounds' included (their weights' sum).
    work: Duration,
    /// The weights of the trials done, and of the one running.
    done: Duration,
    current: Duration,
    /// When the first trial started: observed time per trial counts from here.
    first_trial: Option<Duration>,
    cell: String,
    trial: u32,
    trials: u32,
}

impl RunProgress {
    /// The plan's estimate until a trial is done; then the plan's time for the trials left at the
    /// pace observed so far, each trial weighed by what the plan counts for it: a run whose first
    /// trials are 90 s soaks and whose others are 1 s slices is not 90 times as long as it is.
    fn remaining(&self, now: Duration) -> Duration {
        match self.first_trial {
            Some(first) if !self.done.is_zero() => {
                let pace = now.saturating_sub(first).as_secs_f64() / self.done.as_secs_f64();
                let left = self.work.max(self.done + self.current).saturating_sub(self.done);
                Duration::from_secs_f64(pace * left.as_secs_f64())
            }
            _ => self.estimate.saturating_sub(now.saturating_sub(self.since)),
        }
    }
}

/// Where the status goes.
enum Out {
    Live(indicatif::ProgressBar),
    Plain { to: Box<dyn Write + Send>, last: Option<Duration> },
}

/// The status: its phase, the clock it reads, where it writes.
pub struct Status {
    phase: Phase,
    out: Out,
    clock: Box<dyn Fn() -> Duration + Send>,
}

/// Whether stderr is a terminal that wants a live line: not a pipe, not CI, no `NO_COLOR`, not
/// `--quiet`.
pub fn live_wanted(quiet: bool) -> bool {
    use std::io::IsTerminal;
    let set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
    !quiet && std::io::stderr().is_terminal() && !set("CI") && !set("NO_COLOR")
}

impl Status {
    /// A status that writes plain lines to `to`, reading time from `clock` (tests pass a fake one).
    pub fn plain(to: Box<dyn Write + Send>, clock: Box<dyn Fn() -> Duration + Send>) -> Status {
        Status { phase: Phase::Idle, out: Out::Plain { to, last: None }, clock }
    }

    fn live(clock: Box<dyn Fn() -> Duration + Send>) -> Status {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {wide_msg}").unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        Status { phase: Phase::Idle, out: Out::Live(bar), clock }
    }

    /// Takes in one event: the phase it starts or moves on.
    pub fn on_event(&mut self, event: &Event<'_>) {
        let now = (self.clock)();
        match event {
            Event::SetupProgress { stack, progress } => {
                if !matches!(&self.phase, Phase::Setup { stack: s, .. } if s == stack) {
                    self.phase = Phase::Setup { stack: stack.to_string(), since: now, step: String::new(), last: String::new() };
                }
                if let Phase::Setup { step, last, .. } = &mut self.phase {
                    match progress {
                        SetupProgress::InstallingPackages => *step = "installing packages".into(),
                        SetupProgress::Running { index, count, command } => {
                            *step = format!("step {index}/{count} `{}`", cut(command, 40));
                            last.clear();
                        }
                        SetupProgress::Output(line) => *last = cut(strip_ansi(line).trim(), OUTPUT_WIDTH),
                    }
                }
            }
            Event::SetupFinished { .. } | Event::NoiseFloor { .. } | Event::NoiseProbeSkipped(_) => self.phase = Phase::Idle,
            Event::NoiseProbeStarting { expected, .. } => self.phase = Phase::Probe { since: now, expected: *expected },
            Event::Planned { trials, estimate, work } => {
                self.phase =
                    Phase::Run(RunProgress { since: now, estimate: *estimate, total: *trials, work: *work, ..RunProgress::default() })
            }
            Event::TrialStarting { cell, trial, trials, weight } => {
                if let Phase::Run(r) = &mut self.phase {
                    r.first_trial.get_or_insert(now);
                    (r.cell, r.trial, r.trials) = (cell.label(), *trial, *trials);
                    r.started += 1;
                    r.done += std::mem::replace(&mut r.current, *weight);
                    // Precision rounds add trials the plan did not count.
                    r.total = r.total.max(r.started);
                }
            }
            Event::PrecisionRound { trials, work, .. } => {
                if let Phase::Run(r) = &mut self.phase {
                    r.total = r.total.max(r.started) + trials;
                    r.work = r.work.max(r.done + r.current) + *work;
                }
            }
            _ => {}
        }
        self.tick();
    }

    /// The line for now, if there is anything to say.
    fn line(&self, now: Duration) -> Option<String> {
        match &self.phase {
            Phase::Idle => None,
            Phase::Setup { stack, since, step, last } => {
                let mut s = format!("setup {stack}: {step}, {}", clock(now.saturating_sub(*since)));
                if !last.is_empty() {
                    s.push_str(&format!(": {last}"));
                }
                Some(s)
            }
            Phase::Probe { since, expected } => {
                Some(format!("noise floor: A/A pair, {} of about {}", clock(now.saturating_sub(*since)), clock(*expected)))
            }
            Phase::Run(r) if r.trials == 0 => {
                Some(format!("verifying, {} elapsed, ~{} left (estimated)", clock(now.saturating_sub(r.since)), clock(r.remaining(now))))
            }
            Phase::Run(r) => Some(format!(
                "trial {}/{} of {} | {}/{} trials | {} elapsed, ~{} left",
                r.trial,
                r.trials,
                r.cell,
                r.started,
                r.total,
                clock(now.saturating_sub(r.since)),
                clock(r.remaining(now))
            )),
        }
    }

    /// Redraws the live line, or writes a plain one when the last is old enough.
    pub fn tick(&mut self) {
        let now = (self.clock)();
        let line = self.line(now);
        match &mut self.out {
            Out::Live(bar) => match line {
                Some(l) => {
                    bar.set_message(l);
                    bar.tick();
                }
                None => bar.set_message(""),
            },
            Out::Plain { to, last } => {
                let Some(l) = line else { return };
                if last.is_none_or(|t| now.saturating_sub(t) >= PLAIN_EVERY) {
                    let _ = writeln!(to, "{}", l.replace(|c: char| c.is_control(), " "));
                    *last = Some(now);
                }
            }
        }
    }

    /// Prints `f`'s lines above the live line (or simply, off a terminal).
    pub fn above(&self, f: impl FnOnce()) {
        match &self.out {
            Out::Live(bar) => bar.suspend(f),
            Out::Plain { .. } => f(),
        }
    }

    fn clear(&mut self) {
        if let Out::Live(bar) = &self.out {
            bar.finish_and_clear();
        }
    }
}

/// `1m05s`, `42s`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// `s` without terminal escape sequences (a build tool's colours, `ESC [ ... letter`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn cut(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(width - 3).collect::<String>())
    }
}

/// The status of one command, redrawn by a thread of its own while the lab works; cleared when
/// dropped.
pub struct Shown {
    status: Arc<Mutex<Status>>,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Shown {
    /// Starts showing progress: live on a terminal that wants it, else plain lines on stderr.
    pub fn start(quiet: bool) -> Shown {
        let started = Instant::now();
        let clock = Box::new(move || started.elapsed());
        let status = if live_wanted(quiet) { Status::live(clock) } else { Status::plain(Box::new(std::io::stderr()), clock) };
        let status = Arc::new(Mutex::new(status));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (status.clone(), stop.clone());
        // Bounded by the flag Drop sets; a tick holds the lock for a redraw only.
        let ticker = std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                std::thread::sleep(TICK);
                if let Ok(mut s) = s.lock() {
                    s.tick();
                }
            }
        });
        Shown { status, stop, ticker: Some(ticker) }
    }

    /// Shows one event: its lines (progress.rs) above the live line, then the status it moves.
    pub fn event(&self, event: Event<'_>) {
        let Ok(mut s) = self.status.lock() else { return };
        let live = matches!(s.out, Out::Live(_));
        // The live line shows these; off a terminal the trial's own line still says where the run is.
        let silent = matches!(event, Event::SetupProgress { .. }) || (live && matches!(event, Event::TrialStarting { .. }));
        if !silent {
            s.above(|| crate::progress::print_event(&event));
        }
        s.on_event(&event);
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if let Ok(mut s) = self.status.lock() {
            s.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_model::records::results::CellKey;
    use bakeoff_model::scenario::Scenario;

    /// A writer the test reads back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);
    impl Write for Captured {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn fake() -> (Status, Captured, Arc<Mutex<Duration>>) {
        let out = Captured::default();
        let now = Arc::new(Mutex::new(Duration::ZERO));
        let n = now.clone();
        (Status::plain(Box::new(out.clone()), Box::new(move || *n.lock().unwrap())), out, now)
    }

    fn text(c: &Captured) -> String {
        String::from_utf8(c.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn off_a_terminal_setup_shows_plain_lines_at_most_once_per_interval() {
        let (mut status, out, now) = fake();
        status.on_event(&Event::SetupProgress {
            stack: "rust/actix",
            progress: SetupProgress::Running { index: 1, count: 1, command: "cargo build --release" },
        });
        // A build printing a line every 100 ms (with cargo's redraws and colour codes) for 12 s.
        for i in 0..120u64 {
            *now.lock().unwrap() = Duration::from_millis(100 * i);
            let line = format!("\u{1b}[1m   Compiling\u{1b}[0m crate{i} v1.0.{i}\r");
            status.on_event(&Event::SetupProgress { stack: "rust/actix", progress: SetupProgress::Output(&line) });
            status.tick();
        }
        let t = text(&out);
        let lines: Vec<&str> = t.lines().collect();
        // At 0 s, 5 s and 10 s: three lines in 12 s, never two within 5 s.
        assert_eq!(lines.len(), 3, "{t}");
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "no control characters: {t:?}");
        assert!(
            lines[1].starts_with("setup rust/actix: step 1/1 `cargo build --release`, 5s: ")
                && lines[1].contains("Compiling crate50 v1.0.50"),
            "{t}"
        );
    }

    #[test]
    fn a_run_counts_its_trials_and_refines_what_is_left() {
        let (mut status, out, now) = fake();
        let set = |s: u64| *now.lock().unwrap() = Duration::from_secs(s);
        let weight = Duration::from_secs(8);
        status.on_event(&Event::Planned { trials: 10, estimate: Duration::from_secs(100), work: weight * 10 });
        assert!(text(&out).contains("verifying, 0s elapsed, ~1m40s left (estimated)"), "{}", text(&out));
        let cell = CellKey { stack: "go/fasthttp".into(), scenario: Scenario::Hello, variant: "default".into(), workers: 1, twin: false };
        set(20);
        status.on_event(&Event::TrialStarting { cell: &cell, trial: 1, trials: 5, weight });
        assert!(text(&out).lines().count() == 2);
        // The third trial starts 30 s after the first: two done, 15 s each for the plan's 8 s, eight left.
        set(35);
        status.on_event(&Event::TrialStarting { cell: &cell, trial: 2, trials: 5, weight });
        set(50);
        status.on_event(&Event::TrialStarting { cell: &cell, trial: 3, trials: 5, weight });
        let last = text(&out).lines().last().unwrap().to_string();
        assert_eq!(last, "trial 3/5 of go/fasthttp hello w1 | 3/10 trials | 50s elapsed, ~2m00s left");
        // Within the interval nothing more is written.
        set(52);
        status.tick();
        assert_eq!(text(&out).lines().count(), 4, "at 0, 20, 35 and 50 s");
    }

    #[test]
    fn precision_rounds_add_trials_the_plan_did_not_count() {
        let s = Duration::from_secs;
        let mut status = Status::plain(Box::new(std::io::sink()), Box::new(|| Duration::ZERO));
        status.on_event(&Event::Planned { trials: 2, estimate: s(60), work: s(20) });
        let Phase::Run(mut r) = status.phase else { panic!("a run") };
        assert_eq!(r.remaining(s(10)), s(50), "the plan's estimate before any trial");
        // The second of two trials of 10 s started 20 s after the first: it and nothing more is left.
        (r.first_trial, r.started, r.done, r.current) = (Some(s(10)), 2, s(10), s(10));
        assert_eq!(r.remaining(s(30)), s(20));
        status.phase = Phase::Run(r);
        status.on_event(&Event::PrecisionRound { round: 3, cells: 3, trials: 3, work: s(30) });
        let Phase::Run(r) = &status.phase else { panic!("a run") };
        assert_eq!((r.total, r.remaining(s(30))), (5, s(80)), "three more of 10 s at 2 s a second of the plan");
    }

    /// Seed 002's soaks come first: 90 s trials, then 1 s slices. Counted, the first soak's pace
    /// said 170 minutes were left; weighed, what is left is the plan's, at the pace observed.
    #[test]
    fn trials_of_unequal_length_are_weighed_not_counted() {
        let s = Duration::from_secs;
        let (soak, slice) = (s(95), Duration::from_millis(1500));
        let mut r = RunProgress { estimate: s(480), total: 103, work: soak * 3 + slice * 100, ..RunProgress::default() };
        // The second soak starts 100 s after the first: 5% slower than planned, as is what is left.
        (r.first_trial, r.started, r.done, r.current) = (Some(s(10)), 2, soak, soak);
        let left = r.remaining(s(110)).as_secs_f64();
        assert!((left - 100.0 / 95.0 * (2.0 * 95.0 + 150.0)).abs() < 0.01, "{left} s");
    }
}
