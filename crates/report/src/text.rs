//! The terminal report: each section as an aligned table with its warnings as numbered notes under
//! it, in the order every format keeps (`Section::ORDER`).

use crate::section::Section;
use crate::table::{Cell, Table};
use crate::tables;
use crate::view::ReportView;
use std::fmt::Write;

/// The terminal report: every section in `Section::ORDER`.
pub(crate) fn render(view: &ReportView) -> String {
    let mut out = String::new();
    for s in Section::ORDER {
        section(&mut out, view, s);
    }
    out
}

fn section(out: &mut String, view: &ReportView, s: Section) {
    match s {
        Section::Provenance => {
            for (k, v) in tables::provenance(view) {
                let _ = writeln!(out, "{k:>10}: {v}");
            }
        }
        Section::WhatRan => titled(out, "what ran", tables::what_ran(view)),
        Section::Article => article(out, view),
        Section::Claims => titled(out, "the study's claims on this machine", tables::claims(view)),
        Section::Verification => {
            let (fails, warns) = view.verification_counts();
            titled(out, &format!("verification: {fails} failed, {warns} warned"), Some(tables::verification(view, false)));
        }
        Section::Precision => {
            let Some(p) = &view.precision else { return };
            let _ = writeln!(out, "\n== precision (ranked by {}) ==", view.policy.primary.describe());
            for l in p.lines() {
                let _ = writeln!(out, "{l}");
            }
        }
        Section::Noise => noise(out, view),
        Section::Slo => {
            let Some(s) = &view.slo else { return };
            let _ = writeln!(out, "\n== {} ==", s.heading());
            for l in s.lines() {
                let _ = writeln!(out, "{l}");
            }
            layout(out, &s.table());
        }
        Section::Scenarios => view.scenarios.iter().for_each(|sv| titled(out, &sv.scenario.to_string(), Some(tables::scenario(view, sv)))),
        Section::Sweeps => view.sweeps.iter().for_each(|s| titled(out, &crate::sweep::title(s), Some(crate::sweep::table(s)))),
        Section::Soaks => view.soaks.iter().for_each(|s| titled(out, &crate::soak::title(s), Some(crate::soak::table(s)))),
        Section::Proxy => {
            titled(out, "proxy: latency overhead over the baseline (nginx direct)", tables::proxy_overhead(view));
            titled(out, "proxy: maximum throughput (closed model)", tables::proxy_max(view));
        }
        // The settings are the provenance's last line here.
        Section::Settings => {}
    }
}

/// "== title ==" and the table, when there is one.
fn titled(out: &mut String, title: &str, table: Option<Table>) {
    if let Some(t) = table {
        let _ = writeln!(out, "\n== {title} ==");
        layout(out, &t);
    }
}

fn article(out: &mut String, view: &ReportView) {
    let Some(a) = &view.article else { return };
    let _ = writeln!(out, "\n== the article vs this machine: {} ==", a.title);
    let _ = writeln!(out, "the article: {}", a.setup);
    for n in &a.notes {
        let _ = writeln!(out, "  differs here: {n}");
    }
    for t in crate::article::tables(a) {
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
