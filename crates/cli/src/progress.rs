//! The lab's progress as lines on stderr: each setup, verification, trial and round as it happens,
//! and the problems a verification found.

use bakeoff_lab::error::LabError;
use bakeoff_lab::run::noise_probe::{NoiseFloor, Outlook};
use bakeoff_lab::run::Event;
use bakeoff_lab::stacks::setup::SetupOutcome;
use bakeoff_model::plan::schedule::Schedule;
use bakeoff_model::records::results::{CellKey, Verdict, VerifyReport};
use bakeoff_model::scenario::Scenario;
use bakeoff_report::scenario::Relative;

/// One line per stack set up.
pub fn print_setup(stack: &str, outcome: &Result<SetupOutcome, LabError>) {
    match outcome {
        Ok(SetupOutcome::Cached) => eprintln!("setup {stack:<34} cached"),
        Ok(SetupOutcome::Done(t)) => eprintln!("setup {stack:<34} done in {:.0} s", t.as_secs_f64()),
        Ok(SetupOutcome::Nothing) => eprintln!("setup {stack:<34} nothing to do"),
        Ok(SetupOutcome::Restored) => eprintln!("setup {stack:<34} restored (this machine built the same inputs before)"),
        Err(e) => eprintln!("setup {stack:<34} FAILED\n{e}"),
    }
}

/// Prints lab events as progress lines on stderr.
pub fn print_event(event: &Event<'_>) {
    match event {
        // The live status shows these (status.rs).
        Event::SetupProgress { .. } => {}
        Event::Planned { trials, estimate, .. } => {
            eprintln!("planned: {trials} trials, about {} with verification (before any precision rounds)", minutes(*estimate))
        }
        Event::NoiseFloor { floor, reused } => print_noise_floor(floor, *reused),
        Event::NoiseProbeStarting { expected, site: None } => eprintln!(
            "measuring this machine's noise floor first (an A/A pair, about {} s; `bakeoff doctor` measures it too, and a run reuses it for 6 h)",
            expected.as_secs()
        ),
        Event::NoiseProbeStarting { expected, site: Some(site) } => eprintln!(
            "measuring the noise floor where the run measures first ({site}; an A/A pair, about {} s; runs placed alike reuse it for 6 h)",
            expected.as_secs()
        ),
        Event::NoiseProbeSkipped(why) => eprintln!("note: noise floor not measured: {why}"),
        Event::PrecisionOutlook(o) => {
            eprintln!("precision: {}", outlook_line(o));
            if let Some(why) = &o.allocation {
                eprintln!("launches: {why}");
            }
        }
        Event::SetupFinished { stack, outcome } => print_setup(stack, outcome),
        Event::RunStarting { run, cells, trials, scratch } => {
            eprintln!("run {} : {cells} cells x {trials} trials; scratch {}", run.id, scratch.display())
        }
        Event::ScratchKept(dir) => {
            eprintln!("logs and data kept in {} (cells/index.txt: what each cell directory ran)", dir.display())
        }
        Event::ServiceStarting(s) => eprintln!("starting service {s}"),
        Event::CeilingMeasured(c) => eprintln!(
            "store ceiling {} ({}, {} connections): {:.0} queries/s, mean {:.0} us",
            c.store, c.client, c.connections, c.queries_per_sec, c.mean_latency_us
        ),
        Event::CeilingFailed { store, error } => eprintln!("warning: store ceiling of {store} not measured: {error}"),
        Event::RampCalibrated { cell, ramp, max } => {
            eprintln!("{} maximum {max:.0} req/s: rate ramp {ramp} (START:STEP:STEP_DURATION:MAX)", cell.label())
        }
        Event::Verified(r) => {
            let fails = r.checks.iter().filter(|c| c.verdict == bakeoff_model::records::results::Verdict::Fail).count();
            let warns = r.checks.iter().filter(|c| c.verdict == bakeoff_model::records::results::Verdict::Warn).count();
            eprintln!("verified {} [{}]: {} checks, {fails} failed, {warns} warnings", r.stack, r.variant, r.checks.len());
            print_check_problems(r);
        }
        Event::TrialStarting { cell, trial, trials, .. } => eprintln!("measuring {} (trial {trial}/{trials})", cell.label()),
        Event::TrialDone(t) => print_trial(t),
        Event::CostRechecked { cell, checks } => print_rechecks(cell, checks),
        Event::CellFailed { cell, error } => eprintln!("FAILED {}: {error}", cell.label()),
        Event::PrecisionRound { round, cells, .. } => eprintln!("precision round {round}: {cells} cell(s) still wider than the target"),
        Event::SlicesLengthened { cell, factor, why } => {
            eprintln!("{}: {}, so its slices are {factor} times as long from its next launch on", cell.label(), why.reason())
        }
        Event::JointLengthened { cells, factor } => eprintln!(
            "the joint slice of {}: it left connections unanswered on each cell's share of the server CPUs (1/{}), \
             so it is {factor} times as long from the next block on; the cells' solo slices are unchanged",
            cells.iter().map(CellKey::label).collect::<Vec<_>>().join(", "),
            cells.len()
        ),
        Event::LoadedInTurn { cell, why, schedule: Schedule::AtOnce } => {
            eprintln!("{}: loaded on its own in each block, not at once: {}", cell.label(), why.reason())
        }
        Event::LoadedInTurn { cell, why, .. } => {
            eprintln!("{}: no joint slice in its blocks, its ratios rest on its solo slices: {}", cell.label(), why.reason())
        }
        Event::BudgetSpent { pending } => {
            eprintln!("budget: another launch of {pending} cell(s) does not fit, so they keep the precision they reached (what is left goes to scenarios nearer the target)")
        }
        Event::StillBusyAfterStart { stack, cores } => eprintln!(
            "  note: {stack} answers but still uses {:.0}% CPU while idle; warming up anyway \
             (a longer start.ready_timeout lets its start-up finish first)",
            cores * 100.0
        ),
    }
}

/// A trial's steps, its noise, its SLO and its warnings.
fn print_trial(t: &bakeoff_model::records::results::TrialRecord) {
    for (i, s) in t.load.steps.iter().enumerate() {
        // A ramp's or a ladder's steps each have their own CPU (the trial's when one step).
        eprintln!(
            "  {}: {:.0} req/s, p50 {:.0} us, p99 {:.0} us, errors {}, server CPU {:.0}%, peak RSS {:.1} MiB",
            s.label,
            s.requests_per_sec,
            s.latency.p50_us,
            s.latency.p99_us,
            s.errors.total(),
            bakeoff_model::statistics::summary::Metric::ServerCpuPercent.of(t, i),
            t.server.peak_rss_bytes as f64 / 1048576.0
        );
    }
    if let Some(n) = &t.noise {
        eprintln!(
            "  noise: other processes {:.1}% (server CPUs) / {:.1}% (client CPUs) of a core, steal {:.1}%",
            n.server.other_percent,
            n.client.other_percent,
            n.steal_percent()
        );
    }
    if let Some(s) = &t.slo {
        print_slo(s);
    }
    for w in &t.warnings {
        eprintln!("  warning: {} ({})", w.message(), w.advice());
    }
}

/// The cost checks repeated on a measured cell.
fn print_rechecks(cell: &bakeoff_model::records::results::CellKey, checks: &[bakeoff_model::records::results::Check]) {
    for c in checks {
        let v = match c.verdict {
            bakeoff_model::records::results::Verdict::Pass => "pass",
            bakeoff_model::records::results::Verdict::Warn => "warn",
            bakeoff_model::records::results::Verdict::Fail => "fail",
        };
        eprintln!("  {v} {}: {}: {}", cell.label(), c.what, c.reason);
    }
}

/// `5m30s`.
pub fn minutes(d: std::time::Duration) -> String {
    let s = d.as_secs();
    format!("{}m{:02}s", s / 60, s % 60)
}

/// The noise floor in two lines: the A/A ratio and what a minute of measuring resolves here.
pub fn print_noise_floor(f: &NoiseFloor, reused: bool) {
    let when = if reused { format!(" (kept from {})", f.measured_at) } else { String::new() };
    let site = f.site.as_ref().map(|s| format!(" ({s})")).unwrap_or_default();
    eprintln!("noise floor{site}{when}: {}", f.summary());
    eprintln!(
        "  {} resolves about ±{:.1}% per minute of a paired comparison; one slice's requests/s vary by ±{:.1}% (robust σ)",
        if f.site.is_some() { "this placement" } else { "this machine" },
        f.percent_per_minute(),
        100.0 * f.slice_spread
    );
}

/// What the study's precision target needs here, and what it will reach instead.
pub fn outlook_line(o: &Outlook) -> String {
    let target = format!("±{:.0}%", 100.0 * o.target);
    let needs = match o.needs {
        Some(t) => format!("~{} trials per cell, ~{}", o.trials_needed, minutes(t)),
        None => format!("~{} trials per cell, more than the lab's cap of 30", o.trials_needed),
    };
    let has = match o.budget {
        Some(b) => format!("it has {} (budget)", minutes(b)),
        None => format!("it plans {}", minutes(o.planned)),
    };
    let from = &o.from;
    if o.fits() {
        format!(
            "the study's {target} target needs {needs} here; {has}: expected to reach it (about ±{:.1}% with {} trials, \
             projected from {from})",
            100.0 * o.reaches,
            o.trials_possible
        )
    } else {
        // Loading the cells together sheds the slow stretches that slices one after another meet.
        let at_once = if o.schedule == Schedule::Blocks { ", or --schedule at-once" } else { "" };
        format!(
            "the study's {target} target needs {needs} here; {has}: expect about ±{:.1}% with {} trials instead, projected \
             from {from} (a longer --budget, or --precision {:.0}%{at_once}, fits this machine)",
            100.0 * o.reaches,
            o.trials_possible,
            (100.0 * o.reaches).ceil()
        )
    }
}

/// The study's earlier runs an outlook pooled: the newest's id, how many runs, how many pairs.
pub struct History<'a> {
    /// The newest earlier run's id.
    pub run_id: &'a str,
    /// Earlier runs pooled.
    pub runs: usize,
    /// Ranked pairs whose parts were pooled.
    pub pairs: usize,
}

/// What the newest earlier run of the same study (`from`) left its widest ranked ratio at
/// (`widest`, of `scenario`), and the widest this run's `blocks` can expect (`expect`, a fraction)
/// from its pairs' parts pooled over the earlier runs, against the `target`: the noisier cells of
/// a study need more than the pair the noise probe projects from.
pub fn history_line(from: &History<'_>, scenario: Scenario, widest: &Relative, blocks: u32, expect: f64, target: f64) -> String {
    let (then, blocks_then) = (100.0 * widest.relative_half_width(), widest.paired.map_or(0, |p| p.0));
    let verdict = if expect <= target { "within" } else { "short of" };
    let runs = if from.runs == 1 { "run".to_string() } else { format!("{} runs", from.runs) };
    format!(
        "the last run of this study here ({}) left its widest ranked ratio, {} against the best on {scenario}, at ±{then:.1}% \
         from {blocks_then} blocks; from its {} ranked pairs' parts pooled over the last {runs}, with {blocks} blocks expect \
         the widest about ±{:.1}%, {verdict} the ±{:.0}% target before any precision launch",
        from.run_id,
        widest.cell.label(),
        from.pairs,
        100.0 * expect,
        100.0 * target
    )
}

/// One line for a trial's SLO search: what it found and what it cost.
fn print_slo(s: &bakeoff_model::slo::SloSearch) {
    let found = match s.capacity_rps {
        Some(c) if s.converged => format!("{c:.0} req/s"),
        Some(c) => format!("at least {c:.0} req/s (step budget spent before the bracket closed)"),
        None => "no rate met it".into(),
    };
    let rates: Vec<String> = s.steps.iter().map(|st| format!("{:.0}{}", st.offered_rps, if st.passed() { "✓" } else { "✗" })).collect();
    eprintln!(
        "  SLO capacity ({}): {found}; {} steps from the maximum {:.0} req/s: {}",
        s.slo,
        s.steps.len(),
        s.start_rps,
        rates.join(" ")
    );
}

/// Prints the warnings and failures of a report, one per line with the URL and reason.
pub fn print_check_problems(r: &VerifyReport) {
    for c in r.checks.iter().filter(|c| c.verdict != Verdict::Pass) {
        let v = if c.verdict == Verdict::Fail { "fail" } else { "warn" };
        println!("  {v} {:<9} {}: {}\n       {}", c.scenario, c.what, c.url, c.reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_outlook_says_what_the_target_needs_and_what_the_budget_reaches() {
        let m = |s| Duration::from_secs(s);
        let short = Outlook {
            target: 0.05,
            trials_needed: 14,
            needs: Some(m(760)),
            planned: m(330),
            budget: Some(m(540)),
            trials_possible: 10,
            reaches: 0.061,
            schedule: Schedule::Trials,
            from: "go/fasthttp vs rust/actix hello".into(),
            allocation: None,
        };
        assert_eq!(
            outlook_line(&short),
            "the study's ±5% target needs ~14 trials per cell, ~12m40s here; it has 9m00s (budget): expect about ±6.1% \
             with 10 trials instead, projected from go/fasthttp vs rust/actix hello (a longer --budget, or --precision 7%, fits \
             this machine)"
        );
        let blocks = Outlook { schedule: Schedule::Blocks, ..short.clone() };
        assert!(outlook_line(&blocks).ends_with("(a longer --budget, or --precision 7%, or --schedule at-once, fits this machine)"));
        let enough = Outlook { trials_needed: 6, needs: Some(m(330)), trials_possible: 10, reaches: 0.03, ..short };
        assert_eq!(
            outlook_line(&enough),
            "the study's ±5% target needs ~6 trials per cell, ~5m30s here; it has 9m00s (budget): expected to reach it \
             (about ±3.0% with 10 trials, projected from go/fasthttp vs rust/actix hello)"
        );
    }

    #[test]
    fn the_last_runs_widest_ratio_says_what_this_run_can_expect() {
        let cell = bakeoff_model::records::results::CellKey {
            stack: "python/werkzeug-uwsgi".into(),
            scenario: Scenario::Hello,
            variant: "sqlite".into(),
            workers: 1,
            twin: false,
        };
        let widest = Relative {
            cell,
            ratio: 0.1,
            low: 0.0932,
            high: 0.1068,
            fastest: false,
            paired: Some((10, 3)),
            short_coverage: None,
            source: bakeoff_model::statistics::pairing::PairSource::Joint,
            joint_disagreed: None,
            components: None,
            solo_because: None,
        };
        let from = History { run_id: "20261128T185848Z-1", runs: 3, pairs: 6 };
        assert_eq!(
            history_line(&from, Scenario::Hello, &widest, 8, 0.077, 0.05),
            "the last run of this study here (20261128T185848Z-1) left its widest ranked ratio, python/werkzeug-uwsgi[sqlite] \
             hello w1 against the best on hello, at ±6.8% from 10 blocks; from its 6 ranked pairs' parts pooled over the last 3 \
             runs, with 8 blocks expect the widest about ±7.7%, short of the ±5% target before any precision launch"
        );
        let one = History { runs: 1, ..from };
        let line = history_line(&one, Scenario::Hello, &widest, 16, 0.049, 0.05);
        assert!(
            line.contains("pooled over the last run,") && line.contains("expect the widest about ±4.9%, within the ±5% target"),
            "{line}"
        );
    }
}
