//! Findings: what a cell's summary notes beside its numbers (a measurement-quality warning, or a
//! reason the cell is not ranked), typed by what raised it, with its message and advice made here once.

use crate::plan::goal::PrimaryMetric;
use crate::records::lab_warning::LabWarning;
use bakeoff_load::Warning;
use serde::{Deserialize, Serialize};

/// One thing a summary notes about a cell: what raised it and in which of the cell's trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What raised it, with the figures of its worst instance.
    pub kind: FindingKind,
    /// Whether the cell's trials together raised it, or some of them each.
    pub seen: Seen,
}

/// What raised a finding: a warning of one trial (the load generator's or the lab's), or a reading
/// of the cell's trials (they disagree, miss the precision target, fail or leave requests unanswered).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// The load generator's own warning about its numbers.
    Load(Warning),
    /// A warning the lab raised around the load generator.
    Lab(LabWarning),
    /// Without a precision target: requests/s of the trials spread by more than the tolerance.
    TrialsDisagree {
        /// (max - min) / median of the trials' requests/s, in percent.
        spread_percent: f64,
    },
    /// With a precision target: the interval of the primary metric stayed wider than the target.
    PrecisionMissed {
        /// The metric the run ranks by, whose interval missed.
        metric: PrimaryMetric,
        /// The interval's half-width relative to the median, in percent.
        achieved_percent: f64,
        /// The target half-width, in percent.
        target_percent: f64,
        /// Trials the interval stands on.
        trials: u32,
        /// The interval's coverage, in percent (95 or more from six trials on).
        confidence_percent: f64,
    },
    /// Requests of a step that never got a response.
    Unanswered {
        /// How many requests waited until the step ended.
        requests: u64,
    },
    /// Trials failed more requests than a ranked cell may.
    Errors {
        /// The worst trial's failed requests, percent of its attempts.
        worst_percent: f64,
        /// The trial with that share.
        worst_trial: u32,
        /// How many trials failed more than `limit_percent`.
        failing_trials: u32,
        /// How many trials the cell has.
        trials: u32,
        /// The share of failed requests a ranked cell may have, percent.
        limit_percent: f64,
    },
}

/// Where in a cell's trials a finding was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Seen {
    /// In the cell's trials taken together (their spread, their interval, their error rates).
    Cell,
    /// In `raised` of the cell's `of` trials, each on its own; the worst instance is kept.
    Trials {
        /// Trials that raised it.
        raised: u32,
        /// Trials of the cell.
        of: u32,
    },
}

impl FindingKind {
    /// The kind's name: the warning's serialized `kind` tag, else the reading's own
    /// (`trials_disagree`, `precision_missed`, `unanswered`, `errors`). One finding per name a cell.
    pub fn id(&self) -> &'static str {
        match self {
            FindingKind::Load(w) => w.kind(),
            FindingKind::Lab(w) => w.kind(),
            FindingKind::TrialsDisagree { .. } => "trials_disagree",
            FindingKind::PrecisionMissed { .. } => "precision_missed",
            FindingKind::Unanswered { .. } => "unanswered",
            FindingKind::Errors { .. } => "errors",
        }
    }

    /// How bad this instance is, comparable only within one kind: of several trials' instances,
    /// a finding keeps the worst.
    pub fn severity(&self) -> f64 {
        match self {
            FindingKind::Load(w) => w.severity(),
            FindingKind::Lab(w) => w.severity(),
            FindingKind::TrialsDisagree { spread_percent } => *spread_percent,
            FindingKind::PrecisionMissed { achieved_percent, .. } => *achieved_percent,
            FindingKind::Unanswered { requests } => *requests as f64,
            FindingKind::Errors { worst_percent, .. } => *worst_percent,
        }
    }

    /// What happened, in a sentence with this instance's figures.
    pub fn message(&self) -> String {
        match self {
            FindingKind::Load(w) => w.message(),
            FindingKind::Lab(w) => w.message(),
            FindingKind::TrialsDisagree { spread_percent } => format!("trials disagree on requests/s by {spread_percent:.1}%"),
            FindingKind::PrecisionMissed { metric, achieved_percent, target_percent, trials, confidence_percent } => {
                let metric = metric.metric().heading();
                if *confidence_percent < 95.0 {
                    format!(
                        "precision target missed: {trials} trials give {metric} an interval of only {confidence_percent:.0}% coverage (a 95% interval needs {} trials)",
                        crate::statistics::robust::MIN_TRIALS_FOR_INTERVAL
                    )
                } else {
                    format!(
                        "precision target missed: ±{achieved_percent:.1}% on {metric} after {trials} trials (target ±{target_percent:.1}%)"
                    )
                }
            }
            FindingKind::Unanswered { requests } => format!("{requests} requests never got a response"),
            FindingKind::Errors { worst_percent, worst_trial, failing_trials, trials, limit_percent } => format!(
                "{worst_percent:.2}% of requests failed in trial {worst_trial} ({failing_trials} of {trials} trials over the {limit_percent}% a ranked cell may have)"
            ),
        }
    }

    /// What the reader should do about it.
    pub fn advice(&self) -> &'static str {
        match self {
            FindingKind::Load(w) => w.advice(),
            FindingKind::Lab(w) => w.advice(),
            FindingKind::TrialsDisagree { .. } => "run more trials or longer ones; check for thermal or background noise",
            FindingKind::PrecisionMissed { .. } => {
                "give the run a larger --budget, or quiet the machine; compare this cell only beyond its interval"
            }
            FindingKind::Unanswered { .. } => {
                "a request left without a response is a failure, not a slow answer: check the server's log before using these numbers"
            }
            FindingKind::Errors { .. } => {
                "latency and throughput of a failing server are not comparable: check the errors by kind before using these numbers"
            }
        }
    }
}

impl Finding {
    /// A finding about the cell's trials taken together.
    pub fn of_cell(kind: FindingKind) -> Finding {
        Finding { kind, seen: Seen::Cell }
    }

    /// The kind's name (see `FindingKind::id`).
    pub fn id(&self) -> &'static str {
        self.kind.id()
    }

    /// The message with the trials that raised it: "... (1 of 3 trials)", "... (3 of 3 trials; the
    /// worst shown)"; a cell of one trial, or the trials together, say no more.
    pub fn message(&self) -> String {
        let message = self.kind.message();
        match self.seen {
            Seen::Cell | Seen::Trials { of: 1, .. } => message,
            Seen::Trials { raised: 1, of } => format!("{message} (1 of {of} trials)"),
            Seen::Trials { raised, of } => format!("{message} ({raised} of {of} trials; the worst shown)"),
        }
    }

    /// What the reader should do about it.
    pub fn advice(&self) -> &'static str {
        self.kind.advice()
    }

    /// The message after the kind's name, as a reason a cell is not ranked reads:
    /// `"stopped_answering: [main] server stopped answering at ..."`.
    pub fn tagged(&self) -> String {
        format!("{}: {}", self.id(), self.message())
    }

    /// The variant reproduces a bug on purpose (a reason it is not ranked, but no fault of the lab's).
    pub fn is_deliberate_bug(&self) -> bool {
        matches!(self.kind, FindingKind::Lab(LabWarning::DeliberateBug { .. }))
    }

    /// Whether it says the cell's work was not proven (a scenario file's cell), so that no claim
    /// about the cell is judged.
    pub fn is_work_not_proven(&self) -> bool {
        matches!(self.kind, FindingKind::Lab(LabWarning::WorkNotProven { .. }))
    }
}

/// One finding per kind over a cell's trials, in order of first appearance: the worst instance,
/// with how many trials raised it. `per_trial` holds, for each trial, the kinds it raised; three
/// trials that each starved a few connections make one finding, not three.
pub fn merge(per_trial: impl IntoIterator<Item = Vec<FindingKind>>) -> Vec<Finding> {
    let mut found: Vec<(FindingKind, u32)> = Vec::new();
    let mut trials = 0;
    for kinds in per_trial {
        trials += 1;
        let mut in_this_trial: Vec<&'static str> = Vec::new();
        for kind in kinds {
            let first_here = !in_this_trial.contains(&kind.id());
            if first_here {
                in_this_trial.push(kind.id());
            }
            match found.iter_mut().find(|(k, _)| k.id() == kind.id()) {
                Some((worst, raised)) => {
                    *raised += u32::from(first_here);
                    if kind.severity() > worst.severity() {
                        *worst = kind;
                    }
                }
                None => found.push((kind, 1)),
            }
        }
    }
    found.into_iter().map(|(kind, raised)| Finding { kind, seen: Seen::Trials { raised, of: trials } }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(cpu_percent: f64) -> FindingKind {
        FindingKind::Lab(LabWarning::BackgroundNoise { cpu_percent })
    }

    #[test]
    fn one_finding_per_kind_keeps_the_worst_and_counts_trials_once() {
        let saturated = FindingKind::Load(Warning::ClientSaturated { cpu_percent: 95.0, threads: 1 });
        let merged = merge([vec![noise(10.0), noise(30.0)], vec![saturated], vec![noise(20.0)]]);
        assert_eq!(merged.len(), 2);
        assert_eq!((&merged[0].kind, merged[0].seen), (&noise(30.0), Seen::Trials { raised: 2, of: 3 }));
        assert_eq!(merged[0].message(), "other processes used 30% CPU during measurement (2 of 3 trials; the worst shown)");
        assert_eq!(merged[1].message(), "client saturated: 95% CPU over 1 thread(s) (1 of 3 trials)");
    }

    #[test]
    fn a_single_trial_or_the_cell_as_a_whole_adds_nothing_to_the_message() {
        assert_eq!(merge([vec![noise(14.0)]])[0].message(), "other processes used 14% CPU during measurement");
        let spread = Finding::of_cell(FindingKind::TrialsDisagree { spread_percent: 9.04 });
        assert_eq!(spread.tagged(), "trials_disagree: trials disagree on requests/s by 9.0%");
    }

    /// A finding reads back as it was stored: the kind with its figures, not its text.
    #[test]
    fn findings_round_trip_through_json() {
        let f = Finding { kind: FindingKind::Unanswered { requests: 64 }, seen: Seen::Trials { raised: 1, of: 3 } };
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["kind"]["unanswered"]["requests"], 64);
        assert_eq!(serde_json::from_value::<Finding>(json).unwrap(), f);
    }
}
