//! Soaks: cells measured for minutes (a study's `[soak]`, or `bakeoff run --soak`), shown over time,
//! server RSS and requests/s of each trial, so memory growth and a throughput decline can be seen
//! where a one-number summary hides them. One chart per cell (HTML), a short table otherwise.

use crate::numbers::{grouped, sig3};
use crate::table::Table;
use bakeoff_model::records::results::{CellKey, TrialRecord};
use bakeoff_model::records::timeline::{over_time_rows, rps_points};
use bakeoff_model::study::TREND_MIN_MINUTES;
use std::collections::BTreeMap;

/// The rows of a soak's table: this many moments over the measurement.
const TABLE_ROWS: usize = 6;

/// One soaked cell: each trial's RSS and requests/s over time. JSON writes it as is (the series as
/// `[minute, value]` pairs); CSV as one row per point (`csv::soak_rows`).
#[derive(serde::Serialize)]
pub struct SoakCell {
    #[serde(flatten)]
    pub cell: CellKey,
    pub trials: Vec<SoakTrial>,
}

#[derive(serde::Serialize)]
pub struct SoakTrial {
    pub trial: u32,
    /// (minutes, RSS MiB), warm-up excluded.
    #[serde(rename = "rss_mib")]
    pub rss: Vec<(f64, f64)>,
    /// (minutes, requests/s), one point per second.
    #[serde(rename = "requests_per_sec")]
    pub rps: Vec<(f64, f64)>,
    /// The table's rows: (minute, RSS MiB, requests/s since the previous row).
    #[serde(skip)]
    pub rows: Vec<(f64, Option<f64>, Option<f64>)>,
}

/// The series of a soak trial, by the name CSV gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Series {
    RssMib,
    RequestsPerSec,
}

impl Series {
    pub const ALL: [Series; 2] = [Series::RssMib, Series::RequestsPerSec];

    pub fn id(self) -> &'static str {
        match self {
            Series::RssMib => "rss_mib",
            Series::RequestsPerSec => "requests_per_sec",
        }
    }

    pub fn of(self, t: &SoakTrial) -> &[(f64, f64)] {
        match self {
            Series::RssMib => &t.rss,
            Series::RequestsPerSec => &t.rps,
        }
    }
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
                    rss: crate::sections::memory::rss_points(t),
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
        table.push(row);
    }
    table
}

/// The heading of a soaked cell's table or chart.
pub fn title(s: &SoakCell) -> String {
    format!("{}: RSS and requests/s over the soak", s.cell.label())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_load::TimelinePoint;
    use bakeoff_model::records::results::ProcessSample;

    /// A two-minute trial: RSS growing 1 MiB per 10 s from 40 MiB, requests/s falling from 1,200 by 5 a second.
    fn soak_trial(trial: u32) -> TrialRecord {
        let h = crate::synthetic::latency_histogram(1000.0, 2.0, 1000);
        let mut t = crate::synthetic::trial("go/pocketbase", "products", trial, &[(None, h)]);
        let step = &mut t.load.steps[0];
        step.duration_s = 120.0;
        step.timeline = (0..120).map(|s| TimelinePoint { second: s, requests: 1200 - 5 * u64::from(s), ..Default::default() }).collect();
        let mib = 1024 * 1024;
        t.samples = (0..=480)
            .map(|i| ProcessSample { t_ms: i * 250, rss_bytes: (40 * mib) + (i as u64 * mib) / 40, pss_bytes: 0, cpu_s: 0.0, processes: 1 })
            .collect();
        t
    }

    #[test]
    fn a_two_minute_trial_is_a_soak_shown_at_six_moments() {
        let short = crate::synthetic::trial("go/fasthttp", "hello", 1, &[(None, crate::synthetic::latency_histogram(100.0, 2.0, 100))]);
        let soaks = soak_cells(&[soak_trial(1), soak_trial(2), short]);
        assert_eq!(soaks.len(), 1, "only the long cell is a soak");
        let t = table(&soaks[0]);
        assert_eq!(t.headers, ["time", "trial 1 RSS MiB", "trial 1 req/s", "trial 2 RSS MiB", "trial 2 req/s"]);
        assert_eq!(t.rows.len(), 6);
        // At 20 s: RSS 42 MiB; requests/s over the first 20 seconds average 1,200 - 5 x 9.5.
        let texts = |row: usize, n: usize| -> Vec<&str> { t.rows[row][..n].iter().map(|c| c.text.as_str()).collect() };
        assert_eq!(texts(0, 3), ["20s", "42.0", "1,153"]);
        // At the end of the samples (120 s): RSS 52 MiB.
        assert_eq!(texts(5, 2), ["120s", "52.0"]);
    }
}
