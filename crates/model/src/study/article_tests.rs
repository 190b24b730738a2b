//! Article tables: cells resolved from rows, columns and what they share; units converted from the
//! metrics' own; the comparison normalised to the reference stack.

use super::*;
use crate::records::results::CellKey;
use crate::statistics::summary::{CellSummary, Estimate, Metric};
use std::collections::BTreeMap;

const TABLE: &str = r#"
title = "Requests per second"
given = { metric = "requests_per_sec", unit = "req/s", workers = "all" }
columns = [{ label = "HTTP", scenario = "hello" }, { label = "1Mill load", scenario = "loop" }]
rows = [
  { label = "Rust", stack = "rust", values = [128747.61, 1509.84] },
  { label = "Go", stack = "go", values = [116672.12, nan] },
]
"#;

fn summary(stack: &str, scenario: &str, workers: u32, rps: f64) -> CellSummary {
    let metrics: BTreeMap<Metric, Estimate> = Metric::ALL
        .iter()
        .map(|&m| (m, Estimate { median: rps, ci_low: rps * 0.9, ci_high: rps * 1.1, trials: 3, confidence: 0.95 }))
        .collect();
    let cell = CellKey { stack: stack.into(), scenario: scenario.parse().unwrap(), variant: "default".into(), workers, twin: false };
    CellSummary::plain(cell, 0, "main", None, metrics)
}

#[test]
fn rows_columns_and_given_resolve_to_typed_figures() {
    let t: ArticleTable = toml::from_str(TABLE).unwrap();
    let f = t.figures().unwrap();
    assert_eq!(f.len(), 4);
    let rust_loop = &f[1];
    let cell = rust_loop.cell.as_ref().unwrap();
    assert_eq!(
        (cell.stack.as_str(), cell.scenario, cell.workers),
        ("rust", Some(crate::scenario::Scenario::Loop), Some(WorkerCount::AllServerCpus))
    );
    assert_eq!((rust_loop.metric, rust_loop.unit, rust_loop.value), (Some(Metric::RequestsPerSec), Unit::RequestsPerSec, 1509.84));
    assert!(f[3].value.is_nan(), "nan marks a value the article does not give");
}

#[test]
fn table_mistakes_are_named() {
    let both = TABLE.replace(r#"{ label = "HTTP", scenario = "hello" }"#, r#"{ label = "HTTP", scenario = "hello", stack = "x" }"#);
    assert!(toml::from_str::<ArticleTable>(&both).unwrap().figures().unwrap_err().contains("both name `stack`"));
    let short = TABLE.replace("values = [116672.12, nan]", "values = [116672.12]");
    assert!(toml::from_str::<ArticleTable>(&short).unwrap().figures().unwrap_err().contains("1 values for 2 columns"));
    let unit = TABLE.replace(r#"unit = "req/s""#, r#"unit = "ms""#);
    assert!(toml::from_str::<ArticleTable>(&unit).unwrap().figures().unwrap_err().contains("does not measure metric"));
}

#[test]
fn units_convert_from_each_metric_and_refuse_mismatches() {
    assert_eq!(Unit::MicrosPerRequest.convert(Metric::RequestsPerSec, 128_000.0), Some(1e6 / 128_000.0));
    assert_eq!(Unit::Millis.convert(Metric::MeanUs, 11_729.0), Some(11.729));
    assert_eq!(Unit::Seconds.convert(Metric::MeanUs, 461_000.0), Some(0.461));
    assert!((Unit::Mb.convert(Metric::PeakRssMib, 100.0).unwrap() - 104.8576).abs() < 1e-9);
    assert_eq!(Unit::RequestsPerSec.convert(Metric::PeakRssMib, 1.0), None);
    assert_eq!(Unit::Requests.convert(Metric::RequestsPerSec, 1.0), None);
}

#[test]
fn comparison_normalises_both_sides_to_the_reference_stack() {
    let article = Article {
        title: "t".into(),
        setup: "s".into(),
        reference: "go".into(),
        notes: vec![],
        tables: vec![toml::from_str(TABLE).unwrap()],
    };
    // Two server CPUs: "all" workers are 2.
    let summaries = [summary("rust", "hello", 2, 150_000.0), summary("go", "hello", 2, 100_000.0), summary("rust", "loop", 2, 1000.0)];
    let c = compare(&article, &summaries, 2, vec![]);
    let t = &c.tables[0];
    assert_eq!(t.columns, vec![("HTTP".to_string(), Unit::RequestsPerSec), ("1Mill load".to_string(), Unit::RequestsPerSec)]);
    let rust_http = &t.rows[0].cells[0];
    assert_eq!(rust_http.article, Some(128747.61));
    assert_eq!(rust_http.here, Some((150_000.0, 135_000.0, 165_000.0)));
    assert!((rust_http.article_normalised.unwrap() - 128747.61 / 116672.12).abs() < 1e-12);
    assert!((rust_http.here_normalised.unwrap() - 1.5).abs() < 1e-12);
    let go_loop = &t.rows[1].cells[1];
    assert_eq!((go_loop.article, go_loop.here), (None, None), "neither the article nor this run has Go's loop");
    assert_eq!(t.rows[0].cells[1].here_normalised, None, "no reference figure in that column");
    // On one server CPU "all" is 1: cells measured with 2 workers are not the article's.
    assert_eq!(compare(&article, &summaries, 1, vec![]).tables[0].rows[0].cells[0].here, None);
}

#[test]
fn inverted_units_swap_the_interval() {
    let mut t: ArticleTable = toml::from_str(TABLE).unwrap();
    t.given.unit = Some(Unit::MicrosPerRequest);
    let article = Article { title: "t".into(), setup: "s".into(), reference: "go".into(), notes: vec![], tables: vec![t] };
    let c = compare(&article, &[summary("rust", "hello", 1, 100_000.0)], 1, vec![]);
    let (m, lo, hi) = c.tables[0].rows[0].cells[0].here.unwrap();
    assert!((m - 10.0).abs() < 1e-9 && lo < m && m < hi, "{lo} {m} {hi}");
}
