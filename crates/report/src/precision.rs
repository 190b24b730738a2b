//! What the run's precision goal achieved: the target, the cells that met it and those that did
//! not (with the precision they reached), and what the extra rounds cost in trials and time.

use bakeoff_model::results::{CellKey, TrialRecord};
use bakeoff_model::summary::{CellSummary, Policy};
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Missed {
    pub cell: CellKey,
    /// Relative half-width reached, as a fraction.
    pub achieved: f64,
    pub trials: u32,
    /// Coverage of the interval (below 0.95 with fewer than six trials).
    pub confidence: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PrecisionView {
    /// Target relative half-width, as a fraction.
    pub target: f64,
    /// Rounds every cell got before precision rounds began.
    pub min_trials: u32,
    pub met: usize,
    pub missed: Vec<Missed>,
    /// Trials beyond the first `min_trials` rounds, and their wall time in seconds.
    pub extra_trials: usize,
    pub extra_seconds: f64,
    pub total_seconds: f64,
}

/// None when the run set no precision target.
pub fn precision_view(policy: &Policy, min_trials: u32, cells: &[CellSummary], trials: &[TrialRecord]) -> Option<PrecisionView> {
    let target = policy.precision?;
    let metric = policy.primary.metric();
    // Judged on each cell's headline step (its last), as the ranking is.
    let headline = cells.iter().filter(|c| !cells.iter().any(|d| d.cell == c.cell && d.step > c.step));
    let (mut met, mut missed) = (0, Vec::new());
    for c in headline {
        let e = c.get(metric);
        if e.meets(target) {
            met += 1;
        } else {
            missed.push(Missed { cell: c.cell.clone(), achieved: e.relative_half_width(), trials: e.trials, confidence: e.confidence });
        }
    }
    let extra: Vec<&TrialRecord> = trials.iter().filter(|t| t.trial > min_trials).collect();
    let secs = |ts: &mut dyn Iterator<Item = &TrialRecord>| ts.map(|t| t.elapsed_s).filter(|s| s.is_finite()).fold(0.0, |a, b| a + b);
    Some(PrecisionView {
        target,
        min_trials,
        met,
        missed,
        extra_trials: extra.len(),
        extra_seconds: secs(&mut extra.iter().copied()),
        total_seconds: secs(&mut trials.iter()),
    })
}

impl PrecisionView {
    /// The lines every human-facing format prints.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "target ±{:.1}% on every cell's primary metric: {} cells met it, {} missed; precision rounds cost {} extra trials, {:.0} s of {:.0} s measuring",
            100.0 * self.target,
            self.met,
            self.missed.len(),
            self.extra_trials,
            self.extra_seconds,
            self.total_seconds
        )];
        for m in &self.missed {
            out.push(if m.confidence < bakeoff_model::robust::CONFIDENCE {
                format!(
                    "missed: {} has {} trials, too few for a 95% interval (its range covers {:.0}%)",
                    m.cell.label(),
                    m.trials,
                    100.0 * m.confidence
                )
            } else {
                format!("missed: {} reached ±{:.1}% after {} trials", m.cell.label(), 100.0 * m.achieved, m.trials)
            });
        }
        out
    }
}
