//! "The article vs this machine": the article's tables in their own layout and units, the same tables
//! measured here, both normalised to the article's reference stack, and where the setups differ. The
//! rows are decided here once; text, Markdown and HTML only lay them out.

use crate::numbers::{grouped, sig3};
use crate::table::Table;
use bakeoff_model::study::{ArticleComparison, FigureComparison, TableComparison, Unit};

/// One article table in its three readings.
pub struct ArticleTables {
    pub title: String,
    pub article: Table,
    pub here: Table,
    pub normalised: Table,
}

pub fn tables(a: &ArticleComparison) -> Vec<ArticleTables> {
    a.tables
        .iter()
        .map(|t| ArticleTables {
            title: t.title.clone(),
            article: layout(t, |u, f| f.article.map(|v| value(v, u)).unwrap_or_else(|| "–".into())),
            here: here(t),
            normalised: normalised(t, &a.reference),
        })
        .collect()
}

/// The table's own layout: its row labels, then one column per article column, headed with its unit.
fn layout(t: &TableComparison, cell: impl Fn(Unit, &FigureComparison) -> String) -> Table {
    let mut headers = vec![String::new()];
    headers.extend(t.columns.iter().map(|(label, unit)| heading(label, *unit)));
    let rows = t
        .rows
        .iter()
        .map(|r| {
            std::iter::once(r.label.clone()).chain(r.cells.iter().zip(&t.columns).map(|(f, (_, u))| cell(*u, f))).map(Into::into).collect()
        })
        .collect();
    Table { headers, rows, notes: vec![] }
}

/// A column heading with its unit once: an article's own label often carries it already ("Memory (MB)").
fn heading(label: &str, unit: Unit) -> String {
    let suffix = format!("({})", unit.symbol());
    if label.trim_end().ends_with(&suffix) {
        label.to_string()
    } else {
        format!("{label} {suffix}")
    }
}

fn here(t: &TableComparison) -> Table {
    layout(t, |u, f| match f.here {
        Some((m, lo, hi)) => {
            if lo.is_finite() && hi == f64::INFINITY {
                format!("{} ({}–∞)", value(m, u), value(lo, u))
            } else if lo.is_finite() && hi.is_finite() && hi > lo {
                format!("{} ({}–{})", value(m, u), value(lo, u), value(hi, u))
            } else {
                value(m, u)
            }
        }
        None if f.article.is_some() => "not measured".into(),
        None => "–".into(),
    })
}

fn normalised(t: &TableComparison, reference: &str) -> Table {
    let mut table = layout(t, |_, f| match (f.article_normalised, f.here_normalised) {
        (Some(a), Some(h)) => format!("{} → {}", sig3(a), sig3(h)),
        (Some(a), None) => format!("{} → –", sig3(a)),
        (None, Some(h)) => format!("– → {}", sig3(h)),
        (None, None) => "–".into(),
    });
    table.headers[0] = format!("÷ {reference}");
    for h in table.headers.iter_mut().skip(1) {
        if let Some(i) = h.rfind(" (") {
            h.truncate(i);
        }
    }
    table
}

/// A value in an article's unit, written as articles write it.
fn value(v: f64, unit: Unit) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    match unit {
        Unit::RequestsPerSec | Unit::Requests => grouped(v),
        Unit::Seconds | Unit::Millis => format!("{v:.3}"),
        _ => sig3(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_names_its_unit_once() {
        assert_eq!(heading("Memory (MB)", Unit::Mb), "Memory (MB)");
        assert_eq!(heading("Memory", Unit::Mb), "Memory (MB)");
        assert_eq!(heading("RPS (MB)", Unit::RequestsPerSec), "RPS (MB) (req/s)");
    }
}
