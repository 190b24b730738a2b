//! What the run's precision goal achieved: the target, the comparisons that met it and those that
//! did not (with the precision they reached), and what the extra rounds cost in trials and time.
//! Where cells were measured block by block, the goal is on the ratios the ranking prints (each
//! cell against the scenario's best, paired); elsewhere on each cell's own interval.

use crate::sections::scenario::ScenarioView;
use bakeoff_model::records::results::{CellKey, TrialRecord};
use bakeoff_model::statistics::summary::{CellSummary, Policy};
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Missed {
    pub cell: CellKey,
    /// The cell the ratio is against, when the goal was judged on a paired ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against: Option<CellKey>,
    /// Relative half-width reached, as a fraction.
    pub achieved: f64,
    /// Trials (or paired blocks) it rests on.
    pub trials: u32,
    /// Coverage of the interval (below 0.95 with fewer than six trials).
    pub confidence: f64,
}

impl Missed {
    /// A cell judged on its own interval, `e`.
    fn own(c: &bakeoff_model::statistics::summary::CellSummary, e: &bakeoff_model::statistics::summary::Estimate) -> Missed {
        Missed { cell: c.cell.clone(), against: None, achieved: e.relative_half_width(), trials: e.trials, confidence: e.confidence }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PrecisionView {
    /// Target relative half-width, as a fraction.
    pub target: f64,
    /// Rounds every cell got before precision rounds began.
    pub min_trials: u32,
    pub met: usize,
    pub missed: Vec<Missed>,
    /// Whether some comparison was judged on a paired ratio (cells measured block by block).
    pub paired: bool,
    /// Trials beyond the first `min_trials` rounds, and their wall time in seconds.
    pub extra_trials: usize,
    pub extra_seconds: f64,
    pub total_seconds: f64,
    /// The ranked pairs' variance parts (the largest of each over them), which the next run of
    /// the same study allocates its launches by; None without a ratio paired over two launches.
    pub components: Option<bakeoff_model::statistics::paired::Components>,
    /// Launches of the servers the run's blocks came from (the most of any cell).
    pub launches: u32,
    /// The figure of merit P of the ranked ratios (the 95% half-width in percent times the square
    /// root of the minutes both cells were measured): the median and the widest, with its pair;
    /// None without a paired ratio.
    pub merit: Option<Merit>,
}

/// P over the ranked ratios of a run: what its pairs of different servers resolve per minute.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Merit {
    /// Ratios it is over.
    pub ratios: usize,
    /// The median P.
    pub median: f64,
    /// The largest P, and the pair's label.
    pub max: f64,
    pub max_pair: String,
}

/// P of each ranked paired ratio: its half-width (%) × √(the minutes its two cells' trials took).
fn merit(scenarios: &[ScenarioView], trials: &[TrialRecord]) -> Option<Merit> {
    let minutes =
        |cell: &CellKey| trials.iter().filter(|t| &t.cell == cell).map(|t| t.elapsed_s).filter(|s| s.is_finite()).sum::<f64>() / 60.0;
    let mut each: Vec<(f64, String)> = Vec::new();
    for sv in scenarios {
        let Some(best) = sv.relative.iter().find(|r| r.fastest) else { continue };
        for r in sv.relative.iter().filter(|r| r.paired.is_some() && !r.fastest && !r.cell.twin) {
            let p = 100.0 * r.relative_half_width() * (minutes(&r.cell) + minutes(&best.cell)).sqrt();
            each.push((p, format!("{} / {}", r.cell.label(), best.cell.label())));
        }
    }
    each.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (max, max_pair) = each.last().cloned()?;
    let median = bakeoff_model::statistics::robust::median_of(&each.iter().map(|e| e.0).collect::<Vec<_>>());
    Some(Merit { ratios: each.len(), median, max, max_pair })
}

/// None when the run set no precision target.
pub fn precision_view(
    policy: &Policy,
    min_trials: u32,
    cells: &[CellSummary],
    scenarios: &[ScenarioView],
    trials: &[TrialRecord],
) -> Option<PrecisionView> {
    let target = policy.precision?;
    let (mut met, mut missed, mut any_paired) = (0, Vec::new(), false);
    for sv in scenarios {
        let ratios: Vec<&crate::sections::scenario::Relative> =
            sv.relative.iter().filter(|r| policy.paired && r.paired.is_some() && !r.fastest).collect();
        let best = sv.relative.iter().find(|r| r.fastest).map(|r| &r.cell);
        for r in &ratios {
            let achieved = (r.high - r.low) / 2.0 / r.ratio;
            if achieved <= target {
                met += 1;
            } else {
                let (blocks, _) = r.paired.unwrap_or_default();
                let confidence = r.short_coverage.unwrap_or(bakeoff_model::statistics::paired::PAIRED_CONFIDENCE);
                missed.push(Missed { cell: r.cell.clone(), against: best.cloned(), achieved, trials: blocks, confidence });
            }
        }
        // Cells no paired ratio speaks for (the trial schedule, a scenario of one cell): their own
        // interval. The best of a paired scenario is the others' reference; a twin is the noise floor.
        let paired = !ratios.is_empty();
        any_paired |= paired;
        let metric = sv.ranked_by.metric();
        for c in
            sv.headline.iter().filter(|c| !(paired && (c.cell.twin || best == Some(&c.cell) || ratios.iter().any(|r| r.cell == c.cell))))
        {
            if c.client_bound && metric == bakeoff_model::statistics::summary::Metric::RequestsPerSec {
                continue;
            }
            let e = c.get(metric);
            if e.meets(target) {
                met += 1;
            } else {
                missed.push(Missed::own(c, &e));
            }
        }
    }
    // Cells of no ranked scenario (the proxy study's maxima): their own interval, as before.
    let unranked = cells.iter().filter(|c| !scenarios.iter().any(|sv| sv.scenario == c.cell.scenario));
    for c in unranked.filter(|c| !cells.iter().any(|d| d.cell == c.cell && d.step > c.step)) {
        let e = c.get(policy.primary.metric());
        if e.meets(target) {
            met += 1;
        } else {
            missed.push(Missed::own(c, &e));
        }
    }
    missed.sort_by(|a, b| a.cell.cmp(&b.cell));
    let extra: Vec<&TrialRecord> = trials.iter().filter(|t| t.trial > min_trials).collect();
    let secs = |ts: &mut dyn Iterator<Item = &TrialRecord>| ts.map(|t| t.elapsed_s).filter(|s| s.is_finite()).fold(0.0, |a, b| a + b);
    Some(PrecisionView {
        target,
        min_trials,
        met,
        missed,
        paired: any_paired,
        extra_trials: extra.len(),
        extra_seconds: secs(&mut extra.iter().copied()),
        total_seconds: secs(&mut trials.iter()),
        components: crate::sections::scenario::ranked_components(scenarios),
        launches: trials.iter().filter_map(|t| t.launch).max().map_or(0, |l| l + 1),
        merit: if any_paired { merit(scenarios, trials) } else { None },
    })
}

impl PrecisionView {
    /// The lines every human-facing format prints.
    pub fn lines(&self) -> Vec<String> {
        let ratios = self.missed.iter().any(|m| m.against.is_some()) || self.paired;
        let on = if ratios { "every ranked ratio (paired) and unpaired cell" } else { "every cell's primary metric" };
        let mut out = vec![format!(
            "target ±{:.1}% on {on}: {} met it, {} missed; precision rounds cost {} extra trials, {:.0} s of {:.0} s measuring",
            100.0 * self.target,
            self.met,
            self.missed.len(),
            self.extra_trials,
            self.extra_seconds,
            self.total_seconds
        )];
        if let Some(c) = self.components {
            let parts = if c.block_df == 0 {
                format!(
                    "±{:.1}% from one launch of one block to the next (each launch held one block, so block and launch parts are one)",
                    100.0 * c.launch_sd
                )
            } else {
                format!("±{:.1}% block to block and ±{:.1}% launch to launch", 100.0 * c.block_sd, 100.0 * c.launch_sd)
            };
            out.push(format!(
                "the ranked ratios vary {parts} (sd of the log ratio, the largest over the pairs), over {} launches: every interval \
                 is Student's t over the launches, and the next run of this study spreads its blocks over launches by these parts",
                self.launches
            ));
        }
        if let Some(m) = &self.merit {
            out.push(format!(
                "figure of merit P (the 95% half-width in % x √ the minutes both cells were measured; lower is better): median {:.1} over {} ranked ratio(s), widest {:.1} ({})",
                m.median, m.ratios, m.max, m.max_pair
            ));
        }
        for m in &self.missed {
            let what = match &m.against {
                Some(best) => format!("{} / {}", m.cell.label(), best.label()),
                None => m.cell.label(),
            };
            let unit = if m.against.is_some() { "paired blocks" } else { "trials" };
            out.push(if m.confidence < bakeoff_model::statistics::robust::CONFIDENCE {
                format!(
                    "missed: {what} has {} {unit}, too few for a 95% interval (its range covers {:.0}%)",
                    m.trials,
                    100.0 * m.confidence
                )
            } else {
                format!("missed: {what} reached ±{:.1}% after {} {unit}", 100.0 * m.achieved, m.trials)
            });
        }
        out
    }
}
