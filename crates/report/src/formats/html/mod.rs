//! The single-file HTML report: inline CSS and inline SVG charts, no scripts, fonts or links to load,
//! so it opens offline and can be mailed or attached to a bug report as one file.

mod charts;
mod sections;
mod summary;
mod under_load;

use crate::section::{self, Section};
use crate::sections::tables;
use crate::table::{Table, Tone};
use crate::view::ReportView;
use std::fmt::Write;

pub(crate) const CSS: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1560px;padding:0 24px 48px;color:#1d1d1f;background:#fafafa}
h1{font-size:26px;margin:24px 0 4px}h2{font-size:21px;margin:36px 0 8px;border-bottom:2px solid #ddd;padding-bottom:4px}
h3{font-size:16px;margin:20px 0 6px}
table{border-collapse:collapse;margin:8px 0;font-size:13px;background:#fff;display:block;max-width:100%;overflow-x:auto}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums;overflow-wrap:normal}
svg{max-width:100%;height:auto}
td.pass{color:#1a7f37}td.warn,span.warn,p.warn{color:#9a6700;font-weight:600}td.fail{color:#cf222e;font-weight:700}
.charts{display:flex;flex-wrap:wrap;gap:12px}.charts svg{background:#fff;border:1px solid #e3e3e3}
.banner{background:#fff4d6;border:1px solid #e0b000;padding:8px 12px;margin:12px 0}
ol.notes{font-size:13px;color:#57606a}ol.notes b{color:#9a6700}
.kv th{width:110px}code{font-size:12px}
p.how{font-size:13px;color:#57606a;max-width:900px}
details summary{cursor:pointer;font-size:13px;color:#57606a;margin:4px 0}
.summary{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:12px}
.summary>div{background:#fff;border:1px solid #ddd;padding:0 12px 8px;font-size:13px}.summary ul{margin:4px 0;padding-left:18px}
.summary h3{font-size:14px}.summary .pass{color:#1a7f37}.summary .fail{color:#cf222e;font-weight:700}
@media (max-width:760px){body{padding:0 12px 32px}.summary{grid-template-columns:minmax(0,1fr)}}
";

/// The HTML report: head and title, every section in `Section::ORDER`, then how to read it.
pub(crate) fn render(view: &ReportView) -> String {
    let r = &view.data.run;
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>bakeoff: {}</title><style>{CSS}</style></head><body>\n",
        esc(&r.id)
    );
    let _ = writeln!(out, "<h1>bakeoff run <code>{}</code></h1>", esc(&r.id));
    if !view.data.is_finished() {
        let _ = writeln!(out, "<div class=\"banner\">This run {}.</div>", esc(&view.status_line()));
    }
    section::write_all(&mut out, view, section);
    out.push_str(
        "<p class=\"how\">Numbers are medians over trials; ± is the half-width, relative to the median, of the \
         distribution-free 95% interval of the median (order statistics of the trials; with fewer than six trials \
         the range of the trials, its lower coverage in brackets). Latency percentiles come from HDR histograms, measured \
         from the intended send time in open-model steps. ⚠ marks a number with a measurement-quality warning; \
         the note under its table says what to do. Charts are described in docs/reports.md.</p>\n",
    );
    out.push_str("</body></html>\n");
    out
}

fn section(out: &mut String, view: &ReportView, s: Section) {
    match s {
        Section::Summary => summary::render(out, view),
        Section::SideBySide => {
            if let Some(title) = crate::sections::side_by_side::title(&view.side_by_side) {
                let how = format!("{}.", crate::sections::side_by_side::lines(&view.side_by_side).join(". "));
                explained(out, ("side-by-side", &title), &how, Some(crate::sections::side_by_side::table(&view.side_by_side)));
            }
        }
        Section::Provenance => provenance(out, view),
        Section::WhatRan => explained(out, ("what-ran", "What ran"), WHAT_RAN_HOW, tables::what_ran(view)),
        Section::Article => {
            if let Some(a) = &view.article {
                article_section(out, a);
            }
        }
        Section::Claims => explained(out, ("claims", "The study's claims on this machine"), CLAIMS_HOW, tables::claims(view)),
        Section::Verification => verification(out, view),
        Section::Precision => sections::precision(out, view),
        Section::Noise => sections::noise(out, view),
        Section::Slo => sections::slo(out, view),
        Section::UnderLoad => under_load::render(out, view),
        Section::Scenarios => view.scenarios.iter().for_each(|sv| sections::scenario(out, view, sv)),
        Section::Cost => {
            explained(out, ("cost", "What a request costs"), crate::sections::cost::COST_HOW, crate::sections::cost::table(view))
        }
        Section::Kinds => {
            if !view.kinds.is_empty() {
                let how = format!("{}.", crate::sections::kinds::lines(&view.kinds).join(". "));
                explained(out, ("kinds", "Request kinds"), &how, Some(crate::sections::kinds::table(&view.kinds)));
            }
        }
        Section::Sweeps => sections::sweeps(out, view),
        Section::Soaks => sections::soaks(out, view),
        Section::Proxy => sections::proxy(out, view),
        Section::Settings => {
            out.push_str("<section id=\"settings\"><h2>Run settings</h2><table class=\"kv\">\n");
            for (k, v) in tables::settings(view) {
                let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
            }
            out.push_str("</table></section>\n");
        }
    }
}

const WHAT_RAN_HOW: &str = "Per stack variant: how it runs request handlers, the WORKERS and POOL_SIZE it was given, its libraries, and the versions its setup found installed.";

const CLAIMS_HOW: &str = "Each claim measures one value with an interval and says how often such an interval covers the true value. Two cells of one scenario measured in the same blocks are compared on their paired ratios: one estimate per launch of the servers, Student's t over the launches (95%). Other comparisons take the median of all trial ratios with the exact Mann-Whitney interval (3 v 3 trials cover 90%). A claim holds when the whole interval lies where it allows, fails when none of it does, and is inconclusive otherwise, when the coverage is under the 90% a verdict needs, or when a cell has a single trial. The study's column judges the claims as one family (Holm's step-down, 5%): a verdict stands there only where its interval still decides at the stricter level its rank asks, so the chance that any of that column's verdicts is wrong is at most 5%.";

/// A section of one table under a sentence on how to read it; nothing without the table.
fn explained(out: &mut String, (id, title): (&str, &str), how: &str, t: Option<Table>) {
    let Some(t) = t else { return };
    open_explained(out, (id, title), how);
    table(out, &t);
    out.push_str("</section>\n");
}

/// Opens a section with its heading and a sentence on how to read it; the caller closes it.
fn open_explained(out: &mut String, (id, title): (&str, &str), how: &str) {
    let _ = writeln!(out, "<section id=\"{id}\"><h2>{}</h2>\n<p class=\"how\">{}</p>", esc(title), esc(how));
}

fn provenance(out: &mut String, view: &ReportView) {
    out.push_str("<section id=\"provenance\"><h2>Machine and provenance</h2><table class=\"kv\">\n");
    for (k, v) in tables::provenance(view) {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    }
    out.push_str("</table></section>\n");
}

/// Problems first, one line per stack that passed everything; the full evidence (every check with
/// its URL) stays in the page, folded, since a study checks hundreds of things.
fn verification(out: &mut String, view: &ReportView) {
    let (fails, warns) = view.verification_counts();
    let _ = writeln!(out, "<section id=\"verification\"><h2>Verification: {fails} failed, {warns} warned</h2>");
    out.push_str("<p class=\"how\">A stack whose check fails is not measured in that scenario.</p>\n");
    table(out, &tables::verification(view, false));
    let checks: usize = view.data.verifications.iter().map(|v| v.checks.len()).sum();
    let _ = writeln!(out, "<details><summary>All {checks} checks, with their URLs</summary>");
    table(out, &tables::verification(view, true));
    out.push_str("</details></section>\n");
}

/// The article's tables beside this machine's, and where the setups differ.
fn article_section(out: &mut String, a: &bakeoff_model::study::ArticleComparison) {
    let _ = writeln!(out, "<section id=\"article\"><h2>The article vs this machine: {}</h2>", esc(&a.title));
    let _ = writeln!(out, "<p class=\"how\">The article: {}</p>", esc(&a.setup));
    if !a.notes.is_empty() {
        out.push_str("<p class=\"how\">Where this setup differs:</p><ul class=\"notes\">\n");
        for n in &a.notes {
            let _ = writeln!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ul>\n");
    }
    for t in crate::sections::article::tables(a) {
        let _ = writeln!(out, "<h3>{}</h3><div class=\"charts\"><div><p class=\"how\">The article</p>", esc(&t.title));
        table(out, &t.article);
        out.push_str("</div><div><p class=\"how\">This machine, median (95% interval)</p>");
        table(out, &t.here);
        let _ = write!(out, "</div><div><p class=\"how\">Normalised to {}, article → here</p>", esc(&a.reference));
        table(out, &t.normalised);
        out.push_str("</div></div>\n");
    }
    out.push_str("</section>\n");
}

/// A history's trend (`bakeoff history`): the chain since the first run with its 95% band, and each
/// run's own B / A, over the runs in order.
pub(crate) fn trend_chart(title: &str, steps: &[crate::history::Step]) -> String {
    let x = |i: usize| (i + 1) as f64;
    let mut chained =
        charts::Series::line("since the first run".into(), 0, steps.iter().enumerate().map(|(i, s)| (x(i), s.chained)).collect());
    chained.band = steps.iter().enumerate().filter_map(|(i, s)| Some((x(i), s.chained_low?, s.chained_high?))).collect();
    let each = charts::Series::line("each run's B / A".into(), 1, steps.iter().enumerate().map(|(i, s)| (x(i), s.ratio)).collect());
    let axes = charts::Axes {
        title,
        x_desc: "run (oldest first)",
        y_desc: "B / A",
        x: charts::Scale::Linear,
        y: charts::Scale::Linear,
        x_fmt: &|v| format!("{v:.0}"),
        y_fmt: &|v| format!("{v:.2}"),
    };
    charts::lines(&axes, &[chained, each])
}

/// Text escaped for HTML content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            _ => o.push(c),
        }
    }
    o
}

/// A cell's class: its tone, else a number's.
fn cell_class(c: &crate::table::Cell) -> &'static str {
    match c.tone {
        Tone::Good => " class=\"pass\"",
        Tone::Warn => " class=\"warn\"",
        Tone::Bad => " class=\"fail\"",
        Tone::Plain if c.is_number() => " class=\"num\"",
        Tone::Plain => "",
    }
}

/// A shared table as HTML, warnings as a numbered list right under it.
pub(crate) fn table(out: &mut String, t: &Table) {
    out.push_str("<table><tr>");
    for h in &t.headers {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
    for r in &t.rows {
        out.push_str("<tr>");
        for c in r {
            let _ = write!(out, "<td{}>{}</td>", cell_class(c), esc(&c.text));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    if !t.notes.is_empty() {
        out.push_str("<ol class=\"notes\">");
        for (msg, advice) in &t.notes {
            let _ = write!(out, "<li><b>⚠ {}</b>: {}</li>", esc(msg), esc(advice));
        }
        out.push_str("</ol>\n");
    }
}
