//! The Markdown report: the text report's tables as GitHub pipe tables, for pasting into an article
//! or a README.

use crate::section::{self, Section};
use crate::sections::tables::{self, Heading};
use crate::table::Table;
use crate::view::ReportView;
use std::fmt::Write;

/// The Markdown report: a title, then every section in `Section::ORDER`.
pub(crate) fn render(view: &ReportView) -> String {
    let mut out = format!("# bakeoff run `{}`\n\n", view.data.run.id);
    section::write_all(&mut out, view, section);
    out
}

fn section(out: &mut String, view: &ReportView, s: Section) {
    match s {
        Section::Provenance => {
            out.push_str("| | |\n|---|---|\n");
            for (k, v) in tables::provenance(view).into_iter().chain(crate::sections::settings::readable(view)) {
                let _ = writeln!(out, "| {k} | {} |", cell(&v));
            }
        }
        Section::Article => article(out, view),
        Section::SideBySide => {
            let Some(title) = crate::sections::side_by_side::title(&view.side_by_side) else { return };
            let _ = writeln!(out, "## {}\n", cell(&title));
            bullets(out, &crate::sections::side_by_side::lines(&view.side_by_side));
            out.push('\n');
            table(out, &crate::sections::side_by_side::table(&view.side_by_side));
            out.push('\n');
        }
        Section::Precision => {
            let Some(p) = &view.precision else { return };
            let _ = writeln!(out, "\n## Precision (ranked by {})\n", view.policy.primary.describe());
            bullets(out, &p.lines());
        }
        Section::Noise => {
            let Some(t) = tables::noise(view) else { return };
            out.push_str("\n## The machine's noise\n\n");
            table(out, &t);
            out.push('\n');
            bullets(out, &tables::noise_lines(view));
        }
        Section::Slo => {
            let Some(s) = &view.slo else { return };
            let _ = writeln!(out, "\n## {}\n", cell(&s.heading()));
            bullets(out, &s.lines());
            out.push('\n');
            table(out, &s.table());
        }
        Section::UnderLoad => {
            let Some(u) = &view.under_load else { return };
            out.push_str("\n## Latency under load\n\n");
            bullets(out, &u.lines());
            out.push('\n');
            table(out, &u.table());
        }
        Section::Kinds => {
            if view.kinds.is_empty() {
                return;
            }
            out.push_str("\n## Request kinds\n\n");
            bullets(out, &crate::sections::kinds::lines(&view.kinds));
            out.push('\n');
            table(out, &crate::sections::kinds::table(&view.kinds));
        }
        // The settings are the provenance's last rows here (`settings::readable`).
        Section::Settings | Section::Summary => {}
        // Every other section is titled tables alone (`tables::titled_tables` says which).
        _ => {
            for (heading, t) in tables::titled_tables(view, s) {
                let _ = writeln!(out, "\n## {}\n", title(heading));
                table(out, &t);
            }
        }
    }
}

/// A heading in Markdown: a phrase capitalised, a scenario named in code.
fn title(heading: Heading) -> String {
    match heading {
        Heading::Phrase(p) => {
            let mut chars = p.chars();
            chars.next().map_or(String::new(), |first| first.to_uppercase().chain(chars).collect())
        }
        Heading::Named(n) => n,
        Heading::Scenario(s) => format!("Scenario `{s}`"),
    }
}

fn bullets(out: &mut String, lines: &[String]) {
    for l in lines {
        let _ = writeln!(out, "- {}", cell(l));
    }
}

fn article(out: &mut String, view: &ReportView) {
    let Some(a) = &view.article else { return };
    let _ = writeln!(out, "\n## The article vs this machine: {}\n\nThe article: {}\n", cell(&a.title), cell(&a.setup));
    for n in &a.notes {
        let _ = writeln!(out, "- Differs here: {}", cell(n));
    }
    for t in crate::sections::article::tables(a) {
        let _ = writeln!(out, "\n### {}\n\nThe article:\n", cell(&t.title));
        table(out, &t.article);
        out.push_str("\nThis machine, median (95% interval):\n\n");
        table(out, &t.here);
        let _ = writeln!(out, "\nNormalised to `{}`, article → here:\n", a.reference);
        table(out, &t.normalised);
    }
}

pub(crate) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub(crate) fn table(out: &mut String, t: &Table) {
    let _ = writeln!(out, "| {} |", t.headers.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(t.headers.len()));
    for r in &t.rows {
        let _ = writeln!(out, "| {} |", r.iter().map(|c| cell(&c.text)).collect::<Vec<_>>().join(" | "));
    }
    if !t.notes.is_empty() {
        out.push('\n');
        for (i, (msg, advice)) in t.notes.iter().enumerate() {
            let _ = writeln!(out, "{}. ⚠ {}: {}", i + 1, cell(msg), cell(advice));
        }
    }
}
