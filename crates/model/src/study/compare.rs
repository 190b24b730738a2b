//! "The article vs this machine": the article's tables beside the same tables measured here, in the
//! article's units, both normalised to the article's reference stack, with every claim's verdict. One
//! typed result that every report format renders.

use super::article::{Article, Figure, Unit};
use super::judge::ClaimResult;
use crate::statistics::summary::CellSummary;
use serde::Serialize;

/// An article beside this machine's run: its tables side by side, and every claim judged.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ArticleComparison {
    /// The article's title.
    pub title: String,
    /// The article's setup, in a sentence.
    pub setup: String,
    /// The stack every table is normalised to.
    pub reference: String,
    /// Where this study's setup differs from the article's.
    pub notes: Vec<String>,
    /// One per article table with at least one figure.
    pub tables: Vec<TableComparison>,
    /// Every claim of the study, judged.
    pub claims: Vec<ClaimResult>,
}

/// One article table beside the same table measured here.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TableComparison {
    /// The table's title.
    pub title: String,
    /// Column labels with their units.
    pub columns: Vec<(String, Unit)>,
    /// The rows, in the article's order.
    pub rows: Vec<RowComparison>,
}

/// One row of a compared table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RowComparison {
    /// The row's label, as the article prints it.
    pub label: String,
    /// One per column.
    pub cells: Vec<FigureComparison>,
}

/// One figure of the article and its counterpart here, in the article's unit.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FigureComparison {
    /// The article's value; None where it gives none.
    pub article: Option<f64>,
    /// The median measured here and its 95% interval (low, high), in the article's unit.
    pub here: Option<(f64, f64, f64)>,
    /// Both divided by the reference stack's figure in the same column.
    pub article_normalised: Option<f64>,
    /// The median here over the reference stack's median here.
    pub here_normalised: Option<f64>,
}

/// Builds the comparison of a run (its summaries; `server_cpus` resolves "all" workers).
pub fn compare(article: &Article, summaries: &[CellSummary], server_cpus: u32, claims: Vec<ClaimResult>) -> ArticleComparison {
    let tables = article
        .tables
        .iter()
        .filter_map(|t| {
            let figures = t.figures().ok()?;
            let here: Vec<Option<(f64, f64, f64)>> = figures.iter().map(|f| measured(f, summaries, server_cpus)).collect();
            let rows = t
                .rows
                .iter()
                .enumerate()
                .map(|(r, row)| RowComparison {
                    label: row.label.clone(),
                    cells: (0..t.columns.len())
                        .map(|c| {
                            let i = r * t.columns.len() + c;
                            let reference = reference_of(&figures, i, &article.reference);
                            let value = Some(figures[i].value).filter(|v| v.is_finite());
                            let here_value = here[i].map(|h| h.0);
                            FigureComparison {
                                article: value,
                                here: here[i],
                                article_normalised: ratio(value, reference.and_then(|j| Some(figures[j].value).filter(|v| v.is_finite()))),
                                here_normalised: ratio(here_value, reference.and_then(|j| here[j].map(|h| h.0))),
                            }
                        })
                        .collect(),
                })
                .collect();
            let columns = figures.iter().take(t.columns.len()).zip(&t.columns).map(|(f, c)| (c.label.clone(), f.unit)).collect();
            Some(TableComparison { title: t.title.clone(), columns, rows })
        })
        .collect();
    ArticleComparison {
        title: article.title.clone(),
        setup: article.setup.clone(),
        reference: article.reference.clone(),
        notes: article.notes.clone(),
        tables,
        claims,
    }
}

/// This machine's value of a figure in the article's unit: (median, low, high).
fn measured(f: &Figure, summaries: &[CellSummary], server_cpus: u32) -> Option<(f64, f64, f64)> {
    let (cell, metric) = (f.cell.as_ref()?, f.metric?);
    let e = cell.find(summaries, server_cpus)?.get(metric);
    let (m, a, b) = (f.unit.convert(metric, e.median)?, f.unit.convert(metric, e.ci_low)?, f.unit.convert(metric, e.ci_high)?);
    // An interval reaching zero or below (few noisy trials) leaves an inverted unit unbounded above.
    Some(if f.unit.inverts() { (m, b, if e.ci_low > 0.0 { a } else { f64::INFINITY }) } else { (m, a, b) })
}

/// The figure of the reference stack in the same column: with the same worker count where there is one.
fn reference_of(figures: &[Figure], i: usize, reference: &str) -> Option<usize> {
    let f = &figures[i];
    let same_column = |j: &usize| {
        let g = &figures[*j];
        g.column == f.column && g.cell.as_ref().is_some_and(|c| c.stack == reference)
    };
    let candidates: Vec<usize> = (0..figures.len()).filter(same_column).collect();
    let workers = f.cell.as_ref().and_then(|c| c.workers);
    candidates.iter().copied().find(|&j| figures[j].cell.as_ref().and_then(|c| c.workers) == workers).or(candidates.first().copied())
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => Some(a / b),
        _ => None,
    }
}
