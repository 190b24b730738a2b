//! Request kinds as every format shows them: per cell-step of a scenario file, each kind's
//! responses, its share of the cell's responses beside the share the file's weights ask for, p50,
//! p99 and errors, each the median over the cell's trials; one table in text, Markdown and HTML,
//! a `kinds` array per cell in JSON and a row per cell and kind in CSV.

use crate::numbers::{grouped, latency};
use crate::table::{Cell, Table, Tone};
use bakeoff_load::{StepReport, Warning};
use bakeoff_model::records::results::{CellKey, TrialRecord};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::summary::{CellSummary, Estimate};
use serde::{Deserialize, Serialize};

/// One kind of request in one cell-step, medians over the trials that measured it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KindRow {
    /// The kind's name, as the scenario file gives it.
    pub name: String,
    /// Responses completed (successful or not).
    pub requests: f64,
    /// Percent of the cell-step's responses that were of this kind.
    pub share_percent: f64,
    /// Percent the file asks for: the kind's weight over the sum of weights; None when the run's
    /// settings do not hold the file.
    pub asked_percent: Option<f64>,
    /// Median latency of its successful responses; None when none succeeded.
    pub p50_us: Option<f64>,
    /// 99th percentile latency of its successful responses; None when none succeeded.
    pub p99_us: Option<f64>,
    /// Failed requests of this kind, every error kind together.
    pub errors: f64,
    /// A trial sent it more than a percentage point off its share of the deck (`mix_drift`).
    pub mix_drift: bool,
}

/// The kinds of one cell-step of a scenario file.
#[derive(Debug, Clone, PartialEq)]
pub struct CellKinds {
    /// The cell.
    pub cell: CellKey,
    /// The step's index in the cell's plan.
    pub step: usize,
    /// The step's name, as the scenario tables print it.
    pub step_name: String,
    /// Trials behind the medians.
    pub trials: usize,
    /// In the deck's order of kinds.
    pub kinds: Vec<KindRow>,
}

/// Every cell-step that measured request kinds, in cell order; empty when none did.
pub fn kinds_view(cells: &[CellSummary], trials: &[TrialRecord], settings: &serde_json::Value) -> Vec<CellKinds> {
    cells
        .iter()
        .filter_map(|c| {
            let Scenario::File(file) = c.cell.scenario else { return None };
            let steps: Vec<&StepReport> = trials
                .iter()
                .filter(|t| t.cell == c.cell)
                .filter_map(|t| t.load.steps.get(c.step))
                .filter(|s| !s.kinds.is_empty())
                .collect();
            let asked = asked_shares(settings, file.name());
            let names = kind_names(&steps);
            let kinds: Vec<KindRow> = names.iter().map(|n| kind_row(n, &steps, asked.as_deref())).collect();
            (!kinds.is_empty()).then(|| CellKinds {
                cell: c.cell.clone(),
                step: c.step,
                step_name: crate::numbers::step_name(c),
                trials: steps.len(),
                kinds,
            })
        })
        .collect()
}

/// Every kind any trial reported, in the order first reported (every trial of a cell sends the same deck).
fn kind_names(steps: &[&StepReport]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for k in steps.iter().flat_map(|s| &s.kinds) {
        if !names.contains(&k.name) {
            names.push(k.name.clone());
        }
    }
    names
}

/// One kind's medians over the steps that reported it; a step's share is of that step's responses.
fn kind_row(name: &str, steps: &[&StepReport], asked: Option<&[(String, f64)]>) -> KindRow {
    let median = |v: Vec<f64>| Estimate::from_values(&v).median;
    let present: Vec<(&StepReport, &bakeoff_load::KindReport)> =
        steps.iter().filter_map(|s| s.kinds.iter().find(|k| k.name == name).map(|k| (*s, k))).collect();
    let share = |s: &StepReport, n: u64| {
        let all: u64 = s.kinds.iter().map(|k| k.requests).sum();
        if all == 0 {
            f64::NAN
        } else {
            100.0 * n as f64 / all as f64
        }
    };
    // Latency only from the trials where the kind had successful responses: zeros are no figures.
    let answered = || present.iter().filter(|(_, k)| k.latency.count > 0);
    let finite = |v: f64| v.is_finite().then_some(v);
    KindRow {
        name: name.to_string(),
        requests: median(present.iter().map(|(_, k)| k.requests as f64).collect()),
        share_percent: median(present.iter().map(|(s, k)| share(s, k.requests)).collect()),
        asked_percent: asked.and_then(|a| a.iter().find(|(n, _)| n == name)).map(|(_, p)| *p),
        p50_us: finite(median(answered().map(|(_, k)| k.latency.p50_us).collect())),
        p99_us: finite(median(answered().map(|(_, k)| k.latency.p99_us).collect())),
        errors: median(present.iter().map(|(_, k)| k.errors.total() as f64).collect()),
        mix_drift: steps
            .iter()
            .flat_map(|s| &s.warnings)
            .any(|w| matches!(w, Warning::MixDrift { request_kind, .. } if request_kind == name)),
    }
}

/// The part of a scenario file the shares need: each request's name and weight.
#[derive(Deserialize)]
struct AskedFile {
    requests: Vec<AskedKind>,
}

#[derive(Deserialize)]
struct AskedKind {
    name: String,
    /// A request without a weight weighs 1, as the file format says (docs/scenarios.md).
    #[serde(default = "one")]
    weight: u32,
}

fn one() -> u32 {
    1
}

/// Each kind's percent of the requests as the file named `name` asks, from its text kept in the
/// run's settings (`load.scenario_files`, or `load.scenario_file` in runs stored when a run held
/// one file). The text is read for the weights alone: the whole check would need the file's data
/// files, which need not be where they were when the run measured.
fn asked_shares(settings: &serde_json::Value, name: &str) -> Option<Vec<(String, f64)>> {
    let named = |f: &&serde_json::Value| f.get("name").and_then(|n| n.as_str()) == Some(name);
    let listed = settings.pointer("/load/scenario_files").and_then(|l| l.as_array()).and_then(|l| l.iter().find(named));
    let file = listed.or_else(|| settings.pointer("/load/scenario_file").filter(named))?;
    let parsed: AskedFile = toml::from_str(file.get("text")?.as_str()?).ok()?;
    let total: u64 = parsed.requests.iter().map(|r| u64::from(r.weight)).sum();
    (total > 0).then(|| parsed.requests.into_iter().map(|r| (r.name, 100.0 * f64::from(r.weight) / total as f64)).collect())
}

/// "60.1%".
fn percent(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}%")
    } else {
        "–".into()
    }
}

/// The sentence every human-facing format prints above the table.
pub(crate) fn lines(cells: &[CellKinds]) -> Vec<String> {
    let trials = cells.iter().map(|c| c.trials).max().unwrap_or(0);
    vec![format!(
        "each kind of a scenario file's requests: its responses, their share of the cell's responses beside the share the file's weights ask for (⚠ where a trial sent it more than a percentage point off its share of the deck), latency of its successful responses and its failed requests; medians over {trials} trial(s)"
    )]
}

/// One row per cell-step and kind.
pub(crate) fn table(cells: &[CellKinds]) -> Table {
    let mut t = Table::new(&["cell", "step", "kind", "requests", "share", "asked", "p50", "p99", "errors"]);
    for c in cells {
        for k in &c.kinds {
            let share = if k.mix_drift {
                Cell::new(format!("{} ⚠", percent(k.share_percent)), Tone::Warn)
            } else {
                percent(k.share_percent).into()
            };
            let lat = |v: Option<f64>| v.map_or("–".into(), latency);
            t.rows.push(vec![
                Cell::from(c.cell.label()),
                Cell::from(c.step_name.clone()),
                Cell::from(k.name.clone()),
                Cell::from(grouped(k.requests)),
                share,
                Cell::from(k.asked_percent.map_or("–".into(), percent)),
                Cell::from(lat(k.p50_us)),
                Cell::from(lat(k.p99_us)),
                Cell::new(grouped(k.errors), if k.errors > 0.0 { Tone::Warn } else { Tone::Plain }),
            ]);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asked_shares_follow_the_weights_and_a_missing_weight_is_one() {
        let text = "name = \"shop\"\n[[requests]]\nname = \"item\"\nweight = 6\npath = \"/\"\n[[requests]]\nname = \"search\"\nweight = 3\npath = \"/s\"\n[[requests]]\nname = \"cart\"\npath = \"/c\"\n";
        let settings = serde_json::json!({"load": {"scenario_files": [{"name": "other", "text": ""}, {"name": "shop", "text": text}]}});
        let shares = asked_shares(&settings, "shop").expect("the file's shares");
        let stored_before = serde_json::json!({"load": {"scenario_file": {"name": "shop", "text": text}}});
        assert_eq!(asked_shares(&stored_before, "shop"), Some(shares.clone()), "a run stored with one file reads the same");
        let want = [("item", 60.0), ("search", 30.0), ("cart", 10.0)];
        assert_eq!(shares.len(), 3);
        for ((n, p), (wn, wp)) in shares.iter().zip(want) {
            assert_eq!(n, wn);
            assert!((p - wp).abs() < 1e-9, "{n}: {p}");
        }
        // Another file's cells, or a run without the file's text, ask for nothing known.
        assert!(asked_shares(&settings, "other").is_none());
        assert!(asked_shares(&serde_json::json!({"load": {}}), "shop").is_none());
    }

    #[test]
    fn a_file_cell_has_its_kinds_and_a_built_in_one_none() {
        let data = crate::synthetic::run_data();
        let view = crate::view::ReportView::new(&data);
        assert!(!view.kinds.is_empty(), "the demo run has a scenario file");
        for c in &view.kinds {
            assert!(matches!(c.cell.scenario, Scenario::File(_)), "{}", c.cell.label());
            let names: Vec<&str> = c.kinds.iter().map(|k| k.name.as_str()).collect();
            assert_eq!(names, ["item", "search", "cart"]);
            let shares: f64 = c.kinds.iter().map(|k| k.share_percent).sum();
            assert!((shares - 100.0).abs() < 1.0, "shares of {} add up to {shares}", c.cell.label());
            assert_eq!(c.kinds.iter().map(|k| k.asked_percent).collect::<Vec<_>>(), [Some(60.0), Some(30.0), Some(10.0)]);
        }
        let drift: Vec<&KindRow> = view.kinds.iter().flat_map(|c| &c.kinds).filter(|k| k.mix_drift).collect();
        assert!(!drift.is_empty() && drift.iter().all(|k| k.name == "cart"), "the demo's drift is on cart only");
    }
}
