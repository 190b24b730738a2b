//! `bakeoff compare`: one typed `Comparison` of two runs rendered as text, Markdown, JSON or HTML.
//! The table's content is decided here once; each format only lays it out.

use crate::formats::Format;
use crate::numbers::metric_value;
use crate::table::{Cell, Table, Tone};
use bakeoff_model::statistics::comparison::{CellChange, Change, Comparison, MetricChange, RelativeChange};
use std::fmt::Write;

/// "1.08x (1.02–1.15)" or "1.08x (too few trials for an interval)".
fn ratio(c: &MetricChange) -> String {
    match (c.low, c.high) {
        (Some(l), Some(h)) => format!("{:.2}x ({l:.2}–{h:.2})", c.ratio),
        _ => format!("{:.2}x (no 95% interval: < 4 trials a side)", c.ratio),
    }
}

fn change_cell(c: Option<&MetricChange>) -> String {
    c.map(|c| {
        format!("{} → {}: {} {}", metric_value(c.metric, c.median_a), metric_value(c.metric, c.median_b), ratio(c), verdict_mark(c.verdict))
    })
    .unwrap_or_else(|| "–".into())
}

fn verdict_mark(v: Change) -> &'static str {
    match v {
        Change::Faster => "▲ faster",
        Change::Slower => "▼ slower",
        Change::NoDetectableChange => "=",
    }
}

/// "0.95x (0.91–0.99) ▼ slower against go-nethttp hello w1 (6/6 blocks, 3/3 launches)".
fn relative_cell(r: Option<&RelativeChange>) -> String {
    r.map(|r| {
        let interval = match (r.low, r.high) {
            (Some(l), Some(h)) => format!("{:.2}x ({l:.2}–{h:.2})", r.ratio),
            _ => format!("{:.2}x (no 95% interval)", r.ratio),
        };
        format!(
            "{interval} {} against {} ({}/{} blocks, {}/{} launches)",
            verdict_mark(r.verdict),
            r.reference.label(),
            r.blocks_a,
            r.blocks_b,
            r.launches_a,
            r.launches_b
        )
    })
    .unwrap_or_else(|| "–".into())
}

/// One row per shared cell: the three compared metrics, the primary verdict and agreement, and
/// the change against a peer where both runs paired the cell with one.
pub(crate) fn table(c: &Comparison) -> Table {
    let paired = c.cells.iter().any(|x| x.relative.is_some());
    let mut headers: Vec<&str> = vec!["cell", "trials A/B"];
    headers.extend(bakeoff_model::statistics::comparison::COMPARED.iter().map(|m| m.heading()));
    headers.extend(["verdict", "within precision"]);
    if paired {
        headers.push("against a peer, paired");
    }
    let mut t = Table::new(&headers);
    for cell in &c.cells {
        let mut row = vec![cell.cell.label(), format!("{}/{}", cell.trials_a, cell.trials_b)];
        row.extend(
            bakeoff_model::statistics::comparison::COMPARED.iter().map(|m| change_cell(cell.changes.iter().find(|x| x.metric == *m))),
        );
        row.push(format!("{}{}", cell.verdict.name(), if cell.regressed { " ✗ beyond threshold" } else { "" }));
        let peer = paired.then(|| Cell::from(relative_cell(cell.relative.as_ref())));
        t.push(row.into_iter().map(Cell::from).chain([agreement(cell)]).chain(peer));
    }
    t
}

/// Whether the two runs agree within their stated precision; a warning when they do not.
fn agreement(cell: &CellChange) -> Cell {
    let p = cell.precision;
    let apart = format!("({:.1}% apart, ±{:.1}%)", 100.0 * p.difference, 100.0 * p.stated);
    if p.agrees {
        Cell::from(format!("yes {apart}"))
    } else {
        Cell::new(format!("⚠ no {apart}"), Tone::Warn)
    }
}

/// The lines under the table: what was compared, the gate, the agreement count, and what only
/// one run has.
pub(crate) fn summary_lines(c: &Comparison) -> Vec<String> {
    let mut out = vec![format!(
        "A = run {}, B = run {}; ratios are B/A (Hodges-Lehmann, 95% Mann-Whitney interval, widened to Welch's t-interval over \
         each run's launch means where a launch holds several trials: they share its start); verdicts on {}",
        c.run_a,
        c.run_b,
        c.primary.describe()
    )];
    if c.cells.iter().any(|x| x.relative.is_some()) {
        out.push(format!(
            "against a peer, paired: the {} ratio to a peer measured in the same blocks, run B's over run A's (Hodges-Lehmann, \
             95% Mann-Whitney interval of the block ratios, widened over launches as above); the peer that moved least is used, so it holds where the peer is unchanged",
            c.primary.metric().heading()
        ));
        out.push(if c.on_ratios {
            "verdict: both runs loaded their cells at once, where a cell's own medians are its share of a shared machine: a cell \
             with such a peer is faster or slower when its ratio to the peer says so"
                .into()
        } else {
            "verdict: a cell with such a peer is faster or slower only when its own medians and its ratio to the peer both say so; \
             a move of every cell alike (the machine between the two runs) shows in the metric columns only"
                .into()
        });
    }
    let agree = c.cells.iter().filter(|x| x.precision.agrees).count();
    out.push(format!("{agree} of {} cells agree within their stated precision", c.cells.len()));
    if let Some(t) = c.threshold {
        let bad: Vec<String> = c.regressions().map(|x| x.cell.label()).collect();
        out.push(if bad.is_empty() {
            format!("gate --fail-if-slower {:.0}%: passed", 100.0 * t)
        } else {
            format!("gate --fail-if-slower {:.0}%: FAILED by {}", 100.0 * t, bad.join(", "))
        });
    }
    for (which, keys) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        if !keys.is_empty() {
            out.push(format!("only in {which}: {}", keys.iter().map(|k| k.label()).collect::<Vec<_>>().join(", ")));
        }
    }
    out
}

/// The comparison in `format`: its table and the lines under it (JSON: the comparison itself).
/// CSV has no layout of its own and is written as text.
pub fn render(c: &Comparison, format: Format) -> String {
    let t = table(c);
    let lines = summary_lines(c);
    match format {
        Format::Json => serde_json::to_string_pretty(c).expect("a comparison serializes") + "\n",
        Format::Markdown => {
            let mut out = format!("# bakeoff compare `{}` → `{}`\n\n", c.run_a, c.run_b);
            crate::formats::markdown::table(&mut out, &t);
            out.push('\n');
            for l in &lines {
                let _ = writeln!(out, "- {}", crate::formats::markdown::cell(l));
            }
            out
        }
        Format::Html => {
            let mut out = format!(
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>bakeoff compare</title><style>{}</style></head><body>\n<h1>bakeoff compare <code>{}</code> → <code>{}</code></h1>\n",
                crate::formats::html::CSS,
                crate::formats::html::esc(&c.run_a),
                crate::formats::html::esc(&c.run_b)
            );
            crate::formats::html::table(&mut out, &t);
            out.push_str("<ul>\n");
            for l in &lines {
                let _ = writeln!(out, "<li>{}</li>", crate::formats::html::esc(l));
            }
            out.push_str("</ul>\n</body></html>\n");
            out
        }
        Format::Text | Format::Csv => {
            let mut out = String::new();
            crate::formats::text::layout(&mut out, &t);
            for l in &lines {
                let _ = writeln!(out, "{l}");
            }
            out
        }
    }
}
