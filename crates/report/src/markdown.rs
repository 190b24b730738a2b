//! The Markdown report: the text report's tables as GitHub pipe tables, for pasting into an article
//! or an issue.

use crate::article;
use crate::tables::{self, Table};
use crate::view::ReportView;
use std::fmt::Write;

pub fn render(view: &ReportView) -> String {
    let mut out = format!("# bakeoff run `{}`\n\n", view.data.run.id);
    out.push_str("| | |\n|---|---|\n");
    for (k, v) in tables::provenance(view) {
        let _ = writeln!(out, "| {k} | {} |", cell(&v));
    }
    if let Some(a) = &view.article {
        let _ = writeln!(out, "\n## The article vs this machine: {}\n\nThe article: {}\n", cell(&a.title), cell(&a.setup));
        for n in &a.notes {
            let _ = writeln!(out, "- Differs here: {}", cell(n));
        }
        for t in article::tables(a) {
            let _ = writeln!(out, "\n### {}\n\nThe article:\n", cell(&t.title));
            table(&mut out, &t.article);
            out.push_str("\nThis machine, median (95% interval):\n\n");
            table(&mut out, &t.here);
            let _ = writeln!(out, "\nNormalised to `{}`, article → here:\n", a.reference);
            table(&mut out, &t.normalised);
        }
    }
    if let Some(t) = tables::claims(view) {
        out.push_str("\n## The study's claims on this machine\n\n");
        table(&mut out, &t);
    }
    if let Some(p) = &view.precision {
        let _ = writeln!(out, "\n## Precision (ranked by {})\n", view.policy.primary.describe());
        for l in p.lines() {
            let _ = writeln!(out, "- {}", cell(&l));
        }
    }
    let lines = tables::noise_lines(view);
    if let Some(t) = tables::noise(view) {
        out.push_str("\n## The machine's noise\n\n");
        table(&mut out, &t);
        out.push('\n');
        for l in &lines {
            let _ = writeln!(out, "- {}", cell(l));
        }
    }
    if let Some(t) = tables::what_ran(view) {
        out.push_str("\n## What ran\n\n");
        table(&mut out, &t);
    }
    if let Some(s) = &view.slo {
        let _ = writeln!(out, "\n## {}\n", cell(&s.heading()));
        for l in s.lines() {
            let _ = writeln!(out, "- {}", cell(&l));
        }
        out.push('\n');
        table(&mut out, &s.table());
    }
    for sv in &view.scenarios {
        let _ = writeln!(out, "\n## Scenario `{}`\n", sv.scenario);
        table(&mut out, &tables::scenario(view, sv));
    }
    for s in &view.sweeps {
        let _ = writeln!(out, "\n## {}\n", crate::sweep::title(s));
        table(&mut out, &crate::sweep::table(s));
    }
    for s in &view.soaks {
        let _ = writeln!(out, "\n## {}\n", crate::soak::title(s));
        table(&mut out, &crate::soak::table(s));
    }
    if let Some(t) = tables::proxy_overhead(view) {
        out.push_str("\n## Proxy: latency overhead over the baseline (nginx direct)\n\n");
        table(&mut out, &t);
    }
    if let Some(t) = tables::proxy_max(view) {
        out.push_str("\n## Proxy: maximum throughput (closed model)\n\n");
        table(&mut out, &t);
    }
    let (fails, warns) = view.verification_counts();
    let _ = writeln!(out, "\n## Verification: {fails} failed, {warns} warned\n");
    table(&mut out, &tables::verification(view, false));
    out
}

pub(crate) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub(crate) fn table(out: &mut String, t: &Table) {
    let _ = writeln!(out, "| {} |", t.headers.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(t.headers.len()));
    for r in &t.rows {
        let _ = writeln!(out, "| {} |", r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
    }
    if !t.notes.is_empty() {
        out.push('\n');
        for (i, (msg, advice)) in t.notes.iter().enumerate() {
            let _ = writeln!(out, "{}. ⚠ {}: {}", i + 1, cell(msg), cell(advice));
        }
    }
}
