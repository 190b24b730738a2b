//! Soaks: cells measured for minutes (a study's `[soak]`, or `bakeoff run --soak`), shown over time,
//! server RSS and requests/s of each trial, so memory growth and a throughput decline can be seen
//! where a one-number summary hides them. One chart per cell (HTML), a short table otherwise.

use crate::numbers::{grouped, sig3};
use crate::tables::Table;
use bakeoff_model::results::{CellKey, TrialRecord};
use bakeoff_model::study::TREND_MIN_MINUTES;
use bakeoff_model::timeline::{over_time_rows, rps_points};
use std::collections::BTreeMap;

/// The rows of a soak's table: this many moments over the measurement.
const TABLE_ROWS: usize = 6;

/// One soaked cell: each trial's RSS and requests/s over time.
pub struct SoakCell {
    pub cell: CellKey,
    pub trials: Vec<SoakTrial>,
}

pub struct SoakTrial {
    pub trial: u32,
    /// (minutes, RSS MiB), warm-up excluded.
    pub rss: Vec<(f64, f64)>,
    /// (minutes, requests/s), one point per second.
    pub rps: Vec<(f64, f64)>,
    /// The table's rows: (minute, RSS MiB, requests/s since the previous row).
    pub rows: Vec<(f64, Option<f64>, Option<f64>)>,
}

/// The cells whose trials measured at least `TREND_MIN_MINUTES` in one step, in cell order.
pub fn soak_cells(trials: &[TrialRecord]) -> Vec<SoakCell> {
    let mut cells: BTreeMap<&CellKey, Vec<&TrialRecord>> = BTreeMap::new();
    let long = |t: &TrialRecord| t.load.steps.last().is_some_and(|s| s.duration_s >= 60.0 * TREND_MIN_MINUTES);
    for t in trials.iter().filter(|t| long(t)) {
        cells.entry(&t.cell).or_default().push(t);
    }
    cells
        .into_iter()
        .map(|(cell, ts)| SoakCell {
            cell: cell.clone(),
            trials: ts
                .into_iter()
                .map(|t| SoakTrial {
                    trial: t.trial,
                    rss: crate::memory::rss_points(t),
                    rps: rps_points(t),
                    rows: over_time_rows(t, TABLE_ROWS),
                })
                .collect(),
        })
        .collect()
}

/// A soaked cell's table: one row per moment, RSS and requests/s of each trial side by side.
pub fn table(s: &SoakCell) -> Table {
    let mut headers = vec!["time".to_string()];
    for t in &s.trials {
        headers.push(format!("trial {} RSS MiB", t.trial));
        headers.push(format!("trial {} req/s", t.trial));
    }
    let mut table = Table { headers, rows: vec![], notes: vec![] };
    let n = s.trials.iter().map(|t| t.rows.len()).max().unwrap_or(0);
    for i in 0..n {
        let minute = s.trials.iter().find_map(|t| t.rows.get(i)).map_or(0.0, |r| r.0);
        let mut row = vec![format!("{}s", (minute * 60.0).round())];
        for t in &s.trials {
            let r = t.rows.get(i);
            row.push(r.and_then(|r| r.1).map_or("–".into(), sig3));
            row.push(r.and_then(|r| r.2).map_or("–".into(), grouped));
        }
        table.rows.push(row);
    }
    table
}

/// The heading of a soaked cell's table or chart.
pub fn title(s: &SoakCell) -> String {
    format!("{}: RSS and requests/s over the soak", s.cell.label())
}
