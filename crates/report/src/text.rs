//! The terminal report: provenance, then per scenario an aligned table with warnings as numbered
//! notes under it, the proxy study, and verification problems.

use crate::article;
use crate::tables::{self, Table};
use crate::view::ReportView;
use std::fmt::Write;

pub fn render(view: &ReportView) -> String {
    let mut out = String::new();
    for (k, v) in tables::provenance(view) {
        let _ = writeln!(out, "{k:>10}: {v}");
    }
    if let Some(a) = &view.article {
        let _ = writeln!(out, "\n== the article vs this machine: {} ==", a.title);
        let _ = writeln!(out, "the article: {}", a.setup);
        for n in &a.notes {
            let _ = writeln!(out, "  differs here: {n}");
        }
        for t in article::tables(a) {
            let _ = writeln!(out, "\n-- {}: the article --", t.title);
            layout(&mut out, &t.article);
            let _ = writeln!(out, "\n-- {}: this machine, median (95% interval) --", t.title);
            layout(&mut out, &t.here);
            let _ = writeln!(out, "\n-- {}: normalised to {}, article → here --", t.title, a.reference);
            layout(&mut out, &t.normalised);
        }
    }
    if let Some(t) = tables::claims(view) {
        let _ = writeln!(out, "\n== the study's claims on this machine ==");
        layout(&mut out, &t);
    }
    if let Some(p) = &view.precision {
        let _ = writeln!(out, "\n== precision (ranked by {}) ==", view.policy.primary.describe());
        for l in p.lines() {
            let _ = writeln!(out, "{l}");
        }
    }
    noise(&mut out, view);
    if let Some(t) = tables::what_ran(view) {
        let _ = writeln!(out, "\n== what ran ==");
        layout(&mut out, &t);
    }
    if let Some(s) = &view.slo {
        let _ = writeln!(out, "\n== {} ==", s.heading());
        for l in s.lines() {
            let _ = writeln!(out, "{l}");
        }
        layout(&mut out, &s.table());
    }
    for sv in &view.scenarios {
        let _ = writeln!(out, "\n== {} ==", sv.scenario);
        layout(&mut out, &tables::scenario(view, sv));
    }
    for s in &view.sweeps {
        let _ = writeln!(out, "\n== {} ==", crate::sweep::title(s));
        layout(&mut out, &crate::sweep::table(s));
    }
    for s in &view.soaks {
        let _ = writeln!(out, "\n== {} ==", crate::soak::title(s));
        layout(&mut out, &crate::soak::table(s));
    }
    if let Some(t) = tables::proxy_overhead(view) {
        let _ = writeln!(out, "\n== proxy: latency overhead over the baseline (nginx direct) ==");
        layout(&mut out, &t);
    }
    if let Some(t) = tables::proxy_max(view) {
        let _ = writeln!(out, "\n== proxy: maximum throughput (closed model) ==");
        layout(&mut out, &t);
    }
    let (fails, warns) = view.verification_counts();
    let _ = writeln!(out, "\n== verification: {fails} failed, {warns} warned ==");
    layout(&mut out, &tables::verification(view, false));
    out
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
pub fn layout(out: &mut String, t: &Table) {
    let n = t.headers.len();
    let mut w: Vec<usize> = t.headers.iter().map(|h| width(h)).collect();
    for r in &t.rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(width(c));
        }
    }
    let numeric: Vec<bool> =
        (0..n).map(|i| t.rows.iter().all(|r| r[i].chars().next().is_none_or(|c| c.is_ascii_digit() || "+-–".contains(c)))).collect();
    let line = |out: &mut String, cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
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
    line(out, &t.headers);
    let rule: Vec<String> = w.iter().map(|&x| "-".repeat(x)).collect();
    line(out, &rule);
    for r in &t.rows {
        line(out, r);
    }
    for (i, (msg, advice)) in t.notes.iter().enumerate() {
        let _ = writeln!(out, "  [{}] {msg}: {advice}", i + 1);
    }
}
