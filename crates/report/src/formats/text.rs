//! The terminal report: each section as an aligned table with its warnings as numbered notes under
//! it, in the order every format keeps (`Section::ORDER`).

use crate::section::{self, Section};
use crate::sections::tables::{self, Heading};
use crate::table::{Cell, Table};
use crate::view::ReportView;
use std::fmt::Write;

/// The terminal report: every section in `Section::ORDER`.
pub(crate) fn render(view: &ReportView) -> String {
    let mut out = String::new();
    section::write_all(&mut out, view, section);
    out
}

fn section(out: &mut String, view: &ReportView, s: Section) {
    match s {
        Section::Provenance => {
            for (k, v) in tables::provenance(view).into_iter().chain(crate::sections::settings::readable(view)) {
                let _ = writeln!(out, "{k:>10}: {v}");
            }
        }
        Section::Article => article(out, view),
        Section::Precision => {
            let Some(p) = &view.precision else { return };
            let _ = writeln!(out, "\n== precision (ranked by {}) ==", view.policy.primary.describe());
            for l in p.lines() {
                let _ = writeln!(out, "{l}");
            }
        }
        Section::Noise => noise(out, view),
        Section::SideBySide => {
            let Some(title) = crate::sections::side_by_side::title(&view.side_by_side) else { return };
            let _ = writeln!(out, "== {title} ==");
            for l in crate::sections::side_by_side::lines(&view.side_by_side) {
                let _ = writeln!(out, "{l}");
            }
            layout(out, &crate::sections::side_by_side::table(&view.side_by_side));
            out.push('\n');
        }
        Section::Slo => {
            let Some(s) = &view.slo else { return };
            let _ = writeln!(out, "\n== {} ==", s.heading());
            for l in s.lines() {
                let _ = writeln!(out, "{l}");
            }
            layout(out, &s.table());
        }
        Section::UnderLoad => {
            let Some(u) = &view.under_load else { return };
            let _ = writeln!(out, "\n== latency under load ==");
            for l in u.lines() {
                let _ = writeln!(out, "{l}");
            }
            layout(out, &u.table());
        }
        Section::Kinds => {
            if view.kinds.is_empty() {
                return;
            }
            let _ = writeln!(out, "\n== request kinds ==");
            for l in crate::sections::kinds::lines(&view.kinds) {
                let _ = writeln!(out, "{l}");
            }
            layout(out, &crate::sections::kinds::table(&view.kinds));
        }
        // The settings are the provenance's last lines here (`settings::readable`).
        Section::Settings | Section::Summary => {}
        // Every other section is titled tables alone (`tables::titled_tables` says which).
        _ => {
            for (heading, t) in tables::titled_tables(view, s) {
                let title = match heading {
                    Heading::Phrase(p) | Heading::Named(p) => p,
                    Heading::Scenario(s) => s.to_string(),
                };
                let _ = writeln!(out, "\n== {title} ==");
                layout(out, &t);
            }
        }
    }
}

fn article(out: &mut String, view: &ReportView) {
    let Some(a) = &view.article else { return };
    let _ = writeln!(out, "\n== the article vs this machine: {} ==", a.title);
    let _ = writeln!(out, "the article: {}", a.setup);
    for n in &a.notes {
        let _ = writeln!(out, "  differs here: {n}");
    }
    for t in crate::sections::article::tables(a) {
        let _ = writeln!(out, "\n-- {}: the article --", t.title);
        layout(out, &t.article);
        let _ = writeln!(out, "\n-- {}: this machine, median (95% interval) --", t.title);
        layout(out, &t.here);
        let _ = writeln!(out, "\n-- {}: normalised to {}, article → here --", t.title, a.reference);
        layout(out, &t.normalised);
    }
}

fn noise(out: &mut String, view: &ReportView) {
    let lines = tables::noise_lines(view);
    let table = tables::noise(view);
    if table.is_none() && lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n== the machine's noise ==");
    if let Some(t) = table {
        layout(out, &t);
    }
    for l in lines {
        let _ = writeln!(out, "{l}");
    }
}

fn width(s: &str) -> usize {
    s.chars().count()
}

/// Left-aligned text columns, right-aligned numbers, two spaces apart; notes below.
pub(crate) fn layout(out: &mut String, t: &Table) {
    let n = t.headers.len();
    let mut w: Vec<usize> = t.headers.iter().map(|h| width(h)).collect();
    for r in &t.rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(width(&c.text));
        }
    }
    let numeric: Vec<bool> = (0..n).map(|i| t.rows.iter().all(|r| r[i].text.is_empty() || r[i].is_number())).collect();
    let line = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
        let mut s = String::new();
        for (i, c) in cells.enumerate() {
            let pad = " ".repeat(w[i] - width(c));
            if numeric[i] {
                s.push_str(&format!("{pad}{c}"))
            } else {
                s.push_str(&format!("{c}{pad}"))
            }
            s.push_str("  ");
        }
        let _ = writeln!(out, "{}", s.trim_end());
    };
    line(out, &mut t.headers.iter().map(String::as_str));
    let rule: Vec<String> = w.iter().map(|&x| "-".repeat(x)).collect();
    line(out, &mut rule.iter().map(String::as_str));
    for r in &t.rows {
        line(out, &mut r.iter().map(|c: &Cell| c.text.as_str()));
    }
    for (i, (msg, advice)) in t.notes.iter().enumerate() {
        let _ = writeln!(out, "  [{}] {msg}: {advice}", i + 1);
    }
}
