//! An article's findings as typed claims: each kind names the cells it compares and the range the
//! article's finding allows, so this machine can judge it (see judge.rs). A finding that cannot be
//! tested here stays in the study with `testable = false` and the reason, never silently dropped.

use super::cells::{CellRef, WorkerCount};
use crate::records::metric::Metric;
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};

/// One finding: its statement in the article's words, what checks it, and whether this lab can.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// The finding in the article's words.
    pub statement: String,
    /// What checks it.
    pub check: Check,
    /// Whether this lab can test it (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub testable: bool,
    /// Why a claim is not testable here (required when `testable = false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}

/// The kinds of claim. Cells name their scenario or take the claim's `scenario`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// `faster` beats `slower` on `metric` (requests/s unless said), by at least `by_percent`.
    Faster {
        /// The cell that should be faster.
        faster: CellRef,
        /// The cell it should beat.
        slower: CellRef,
        /// The cells' scenario where they name none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scenario: Option<Scenario>,
        /// The metric compared, where not the default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metric: Option<Metric>,
        /// The least margin, percent (0: any margin).
        #[serde(default)]
        by_percent: f64,
    },
    /// `a` / `b` on `metric` lies within `range`.
    Ratio {
        /// The numerator cell.
        a: CellRef,
        /// The denominator cell.
        b: CellRef,
        /// The cells' scenario where they name none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scenario: Option<Scenario>,
        /// The metric compared, where not the default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metric: Option<Metric>,
        /// The lowest and highest ratio the finding allows.
        range: [f64; 2],
    },
    /// The geometric mean of `a` / `b` over `scenarios` lies within `range`.
    Geomean {
        /// The numerator cell (its scenario comes from `scenarios`).
        a: CellRef,
        /// The denominator cell.
        b: CellRef,
        /// The scenarios the mean is over.
        scenarios: Vec<Scenario>,
        /// The metric compared, where not the default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metric: Option<Metric>,
        /// The lowest and highest mean ratio the finding allows.
        range: [f64; 2],
    },
    /// `less` uses less memory than `more` (peak RSS unless said).
    Memory {
        /// The cell that should use less memory.
        less: CellRef,
        /// The cell that should use more.
        more: CellRef,
        /// The cells' scenario where they name none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scenario: Option<Scenario>,
        /// The metric compared, where not the default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metric: Option<Metric>,
    },
    /// The cell's memory grows, or stays bounded, over its measurement (a soak).
    MemoryTrend {
        /// The cell watched.
        cell: CellRef,
        /// The cells' scenario where they name none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scenario: Option<Scenario>,
        /// What its memory should do.
        trend: Trend,
    },
    /// The cell's requests/s late in each trial over early in it (the last quarter's mean over the
    /// first quarter's) lies within `late_over_early`: a soak's throughput trend ("declines the
    /// longer the test runs" is e.g. [0.0, 0.9]).
    ThroughputTrend {
        /// The cell watched.
        cell: CellRef,
        /// The cells' scenario where they name none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scenario: Option<Scenario>,
        /// The lowest and highest late/early ratio the finding allows.
        late_over_early: [f64; 2],
    },
    /// The cell with `to` workers serves `efficiency` x (to / from) what it serves with `from`:
    /// 1.0 is linear scaling. An article's "2.5x-3.6x on 4 cores" is an efficiency of 0.62-0.9.
    Scaling {
        /// The cell scaled (its worker count comes from `from` and `to`).
        cell: CellRef,
        /// The cells' scenario where they name none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scenario: Option<Scenario>,
        /// The worker count scaled from (default 1).
        #[serde(default = "one_worker")]
        from: WorkerCount,
        /// The worker count scaled to (default: one per server CPU).
        #[serde(default = "all_workers")]
        to: WorkerCount,
        /// The metric compared, where not the default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metric: Option<Metric>,
        /// The lowest and highest efficiency the finding allows.
        efficiency: [f64; 2],
    },
    /// `steadier` has a smaller latency spread than `noisier`.
    Spread {
        /// The cell with the smaller spread.
        steadier: CellRef,
        /// The cell with the larger spread.
        noisier: CellRef,
        /// The cells' scenario where they name none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scenario: Option<Scenario>,
        /// How spread is measured.
        measure: SpreadMeasure,
    },
    /// A finding with no measurable shape (only with `testable = false`).
    Qualitative {},
}

fn one_worker() -> WorkerCount {
    WorkerCount::Count(1)
}
fn all_workers() -> WorkerCount {
    WorkerCount::AllServerCpus
}

/// What a cell's memory does over a soak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trend {
    /// It keeps growing (a leak, or a cache without bound).
    Grows,
    /// It levels off.
    Bounded,
}

/// How a latency spread is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpreadMeasure {
    /// The standard deviation of latency.
    Stddev,
    /// p99.99 over p50: how far the outliers reach beyond the typical request.
    TailRatio,
}

impl Check {
    /// The serialized `kind` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Check::Faster { .. } => "faster",
            Check::Ratio { .. } => "ratio",
            Check::Geomean { .. } => "geomean",
            Check::Memory { .. } => "memory",
            Check::MemoryTrend { .. } => "memory_trend",
            Check::ThroughputTrend { .. } => "throughput_trend",
            Check::Scaling { .. } => "scaling",
            Check::Spread { .. } => "spread",
            Check::Qualitative {} => "qualitative",
        }
    }

    /// Every cell the check needs, each with its scenario filled in from the claim's.
    pub fn cells(&self) -> Vec<CellRef> {
        let with = |c: &CellRef, s: &Option<Scenario>| c.with_scenario(*s);
        match self {
            Check::Faster { faster, slower, scenario, .. } => vec![with(faster, scenario), with(slower, scenario)],
            Check::Ratio { a, b, scenario, .. } => vec![with(a, scenario), with(b, scenario)],
            Check::Geomean { a, b, scenarios, .. } => {
                scenarios.iter().flat_map(|s| [a.with_scenario(Some(*s)), b.with_scenario(Some(*s))]).collect()
            }
            Check::Memory { less, more, scenario, .. } => vec![with(less, scenario), with(more, scenario)],
            Check::MemoryTrend { cell, scenario, .. } | Check::ThroughputTrend { cell, scenario, .. } => vec![with(cell, scenario)],
            Check::Scaling { cell, scenario, from, to, .. } => {
                let at = |w: WorkerCount| CellRef { workers: Some(w), ..with(cell, scenario) };
                vec![at(*from), at(*to)]
            }
            Check::Spread { steadier, noisier, scenario, .. } => vec![with(steadier, scenario), with(noisier, scenario)],
            Check::Qualitative {} => vec![],
        }
    }
}

impl Claim {
    /// What is wrong with the claim as written, if anything, with the fix.
    pub fn problem(&self) -> Option<(String, &'static str)> {
        let range_ok = |r: &[f64; 2]| r[0].is_finite() && r[1].is_finite() && r[0] <= r[1];
        match &self.check {
            _ if !self.testable && self.why.as_deref().is_none_or(|w| w.trim().is_empty()) => {
                Some(("`testable = false` needs `why`".into(), "say why this lab cannot test the finding"))
            }
            Check::Qualitative {} if self.testable => {
                Some(("a qualitative claim cannot be judged".into(), "add `testable = false` and `why = \"...\"`"))
            }
            Check::Ratio { range, .. } | Check::Geomean { range, .. } | Check::ThroughputTrend { late_over_early: range, .. }
                if !range_ok(range) =>
            {
                Some((format!("range {range:?} is not [low, high]"), "write e.g. range = [1.5, 3.0]"))
            }
            Check::Scaling { efficiency, .. } if !range_ok(efficiency) => {
                Some((format!("efficiency {efficiency:?} is not [low, high]"), "write e.g. efficiency = [0.6, 0.9]"))
            }
            Check::Geomean { scenarios, .. } if scenarios.len() < 2 => {
                Some(("a geometric mean needs two or more scenarios".into(), "list the scenarios, or use kind = \"ratio\""))
            }
            _ if self.testable && self.check.cells().iter().any(|c| c.scenario.is_none()) => {
                Some(("a cell has no scenario".into(), "give the claim a `scenario` or each cell its own"))
            }
            _ => None,
        }
    }
}

/// The claim format of runs stored before claims had kinds: "`faster` beats `slower`".
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredFasterClaim {
    statement: String,
    scenario: Scenario,
    faster: String,
    slower: String,
    #[serde(default)]
    metric: Option<Metric>,
    #[serde(default)]
    by_percent: f64,
}

/// The claims stored with a run's settings, in either format (claims that parse in neither are left
/// out: a report of an old run never fails on them).
pub fn claims_from_stored(value: &serde_json::Value) -> Vec<Claim> {
    let Some(items) = value.as_array() else { return vec![] };
    items
        .iter()
        .filter_map(|v| {
            serde_json::from_value::<Claim>(v.clone()).ok().or_else(|| {
                let old: StoredFasterClaim = serde_json::from_value(v.clone()).ok()?;
                let cell = |stack: String| CellRef { stack, ..CellRef::default() };
                let check = Check::Faster {
                    faster: cell(old.faster),
                    slower: cell(old.slower),
                    scenario: Some(old.scenario),
                    metric: old.metric,
                    by_percent: old.by_percent,
                };
                Some(Claim { statement: old.statement, check, testable: true, why: None })
            })
        })
        .collect()
}
