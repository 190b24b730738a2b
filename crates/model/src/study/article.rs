//! The article a study reproduces, as data: its setup, its reference stack and its tables in their own
//! layout and units. Each table cell resolves to a typed figure (stack, scenario, metric, value, unit)
//! that the report sets beside what this machine measured, converted to the article's unit.

use super::cells::{CellRef, StepRef, WorkerCount};
use crate::records::metric::Metric;
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};

/// The article a study reproduces: its setup, reference stack, notes and tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Article {
    /// The article's title.
    pub title: String,
    /// The article's machine, tool and load, in a sentence.
    pub setup: String,
    /// The stack every table is normalised to, so shapes compare across machines.
    pub reference: String,
    /// Where this study's setup differs from the article's, shown beside the figures.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Its tables, in the article's order.
    #[serde(default)]
    pub tables: Vec<ArticleTable>,
}

/// One of the article's tables: columns and rows each name part of a cell (a row a stack, a column a
/// scenario or a metric, `given` what they share); rows carry the article's values, one per column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArticleTable {
    /// The table's title.
    pub title: String,
    /// What every cell of the table shares.
    #[serde(default)]
    pub given: Axis,
    /// The columns, left to right.
    pub columns: Vec<Axis>,
    /// The rows, top to bottom, each with its values.
    pub rows: Vec<Axis>,
}

/// A row, a column or what a table's cells share. `nan` marks a value the article does not give.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// As the article prints it.
    #[serde(default)]
    pub label: String,
    /// The stack it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    /// The stack variant it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The worker count it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<WorkerCount>,
    /// The scenario it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<Scenario>,
    /// The step of a multi-step run it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<StepRef>,
    /// The metric its values are of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<Metric>,
    /// The unit the article prints them in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<Unit>,
    /// A row's values, one per column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<f64>>,
}

/// The units articles print. Each converts from a metric's own unit; `µs/request` is the article
/// convention 1,000,000 / (requests per second), a cost per request rather than a latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// Requests per second.
    #[serde(rename = "req/s")]
    RequestsPerSec,
    /// 1,000,000 / (requests per second).
    #[serde(rename = "µs/request")]
    MicrosPerRequest,
    /// Mebibytes per second.
    #[serde(rename = "MiB/s")]
    MibPerSec,
    /// Microseconds.
    #[serde(rename = "µs")]
    Micros,
    /// Milliseconds.
    #[serde(rename = "ms")]
    Millis,
    /// Seconds.
    #[serde(rename = "s")]
    Seconds,
    /// 2^20 bytes.
    #[serde(rename = "MiB")]
    Mib,
    /// 10^6 bytes.
    #[serde(rename = "MB")]
    Mb,
    /// Percent.
    #[serde(rename = "%")]
    Percent,
    /// A count the lab does not measure (e.g. total requests served); shown, never compared.
    #[serde(rename = "requests")]
    Requests,
}

impl Unit {
    /// As printed after a value.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::RequestsPerSec => "req/s",
            Unit::MicrosPerRequest => "µs/request",
            Unit::MibPerSec => "MiB/s",
            Unit::Micros => "µs",
            Unit::Millis => "ms",
            Unit::Seconds => "s",
            Unit::Mib => "MiB",
            Unit::Mb => "MB",
            Unit::Percent => "%",
            Unit::Requests => "requests",
        }
    }

    /// A value of `metric` in its own unit, in this unit; None when the two do not measure the same thing.
    pub fn convert(self, metric: Metric, x: f64) -> Option<f64> {
        use Metric::*;
        let latency = matches!(metric, P50Us | P90Us | P99Us | P999Us | P9999Us | MaxUs | MeanUs | Tm999Us | StddevUs | CpuUsPerRequest);
        let memory = matches!(metric, PeakRssMib | MeanRssMib | PeakPssMib | MeanPssMib);
        let percent = matches!(metric, ErrorPercent | ServerCpuPercent | ClientCpuPercent);
        match self {
            Unit::RequestsPerSec if metric == RequestsPerSec => Some(x),
            Unit::MicrosPerRequest if metric == RequestsPerSec => Some(1e6 / x),
            Unit::MibPerSec if metric == MibPerSec => Some(x),
            Unit::Micros if latency => Some(x),
            Unit::Millis if latency => Some(x / 1e3),
            Unit::Seconds if latency => Some(x / 1e6),
            Unit::Mib if memory => Some(x),
            Unit::Mb if memory => Some(x * 1.048_576),
            Unit::Percent if percent => Some(x),
            _ => None,
        }
    }

    /// Whether converting reverses order (a higher metric gives a lower value in this unit).
    pub fn inverts(self) -> bool {
        self == Unit::MicrosPerRequest
    }
}

/// One cell of an article table, resolved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// Its row in the table, from 0.
    pub row: usize,
    /// Its column in the table, from 0.
    pub column: usize,
    /// The measured cell it corresponds to (None where the table names no stack or scenario).
    pub cell: Option<CellRef>,
    /// None for a count the lab does not measure.
    pub metric: Option<Metric>,
    /// The unit of `value`.
    pub unit: Unit,
    /// The article's value; NaN where it gives none.
    pub value: f64,
}

impl ArticleTable {
    /// Every cell of the table, or what is wrong with the table and how to fix it.
    pub fn figures(&self) -> Result<Vec<Figure>, String> {
        let mut out = Vec::new();
        for (r, row) in self.rows.iter().enumerate() {
            let values = row.values.as_deref().unwrap_or(&[]);
            if values.len() != self.columns.len() {
                return Err(format!(
                    "row `{}` has {} values for {} columns (write nan where the article gives none)",
                    row.label,
                    values.len(),
                    self.columns.len()
                ));
            }
            for (c, col) in self.columns.iter().enumerate() {
                if col.values.is_some() {
                    return Err(format!("column `{}` has values: values belong to rows", col.label));
                }
                out.push(self.figure(r, row, c, col, values[c])?);
            }
        }
        Ok(out)
    }

    fn figure(&self, r: usize, row: &Axis, c: usize, col: &Axis, value: f64) -> Result<Figure, String> {
        let at = format!("row `{}`, column `{}`", row.label, col.label);
        fn pick<T: Clone>(at: &str, field: &str, g: &Option<T>, r: &Option<T>, c: &Option<T>) -> Result<Option<T>, String> {
            match (r, c) {
                (Some(_), Some(_)) => Err(format!("{at}: both name `{field}`; name it in one of them")),
                _ => Ok(c.clone().or(r.clone()).or(g.clone())),
            }
        }
        let g = &self.given;
        let stack = pick(&at, "stack", &g.stack, &row.stack, &col.stack)?;
        let scenario = pick(&at, "scenario", &g.scenario, &row.scenario, &col.scenario)?;
        let metric = pick(&at, "metric", &g.metric, &row.metric, &col.metric)?;
        let unit = pick(&at, "unit", &g.unit, &row.unit, &col.unit)?.ok_or_else(|| format!("{at}: no `unit`"))?;
        if let Some(m) = metric {
            if unit.convert(m, 1.0).is_none() {
                return Err(format!("{at}: unit `{}` does not measure metric `{}`", unit.symbol(), m.id()));
            }
        } else if unit != Unit::Requests {
            return Err(format!("{at}: unit `{}` needs a `metric`", unit.symbol()));
        }
        let cell = match (stack, scenario) {
            (Some(stack), Some(scenario)) => Some(CellRef {
                stack,
                scenario: Some(scenario),
                variant: pick(&at, "variant", &g.variant, &row.variant, &col.variant)?,
                workers: pick(&at, "workers", &g.workers, &row.workers, &col.workers)?,
                step: pick(&at, "step", &g.step, &row.step, &col.step)?,
            }),
            _ if metric.is_some() => return Err(format!("{at}: a figure with a metric needs a `stack` and a `scenario`")),
            _ => None,
        };
        Ok(Figure { row: r, column: c, cell, metric, unit, value })
    }
}
