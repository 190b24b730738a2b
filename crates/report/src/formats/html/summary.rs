//! The HTML report's first screen: the answer, the claims and what to distrust side by side, each
//! list cut short so the three fit one screen; the sections below carry the detail.

use super::esc;
use crate::sections::summary::summary;
use crate::view::ReportView;
use bakeoff_model::study::ClaimVerdict;
use std::fmt::Write;

/// Items a column shows before "and N more": with three columns of this many short lines the
/// summary stays within one 1280x800 screen (the headless-Chromium test holds it to that).
const MAX_ITEMS: usize = 7;

pub(super) fn render(out: &mut String, view: &ReportView) {
    let s = summary(view);
    out.push_str("<section id=\"summary\"><h2>Summary</h2><div class=\"summary\">\n");
    let first = view.scenarios.first().map_or(String::new(), |sv| format!("#scenario-{}", sv.scenario.id()));
    column(out, "The answer", &first, &s.answer.iter().map(|a| esc(a)).collect::<Vec<_>>());
    let counts: Vec<String> = s.verdicts.iter().map(|(v, n)| format!("{n} {}", v.label())).collect();
    let title = if counts.is_empty() { "The claims: none in this study".to_string() } else { format!("The claims: {}", counts.join(", ")) };
    let claims: Vec<String> =
        s.claims.iter().map(|(statement, v)| format!("{}: <span class=\"{}\">{}</span>", esc(statement), tone(*v), v.label())).collect();
    column(out, &title, "#claims", &claims);
    let distrust = if s.distrust.is_empty() { vec!["nothing flagged".to_string()] } else { s.distrust.iter().map(|d| esc(d)).collect() };
    column(out, "What to distrust", "#precision", &distrust);
    out.push_str("</div></section>\n");
}

/// A titled list of at most `MAX_ITEMS` items (already escaped HTML), the rest counted with a link
/// to the section that lists them all.
fn column(out: &mut String, title: &str, more: &str, items: &[String]) {
    let _ = write!(out, "<div><h3>{}</h3><ul>", esc(title));
    for i in items.iter().take(MAX_ITEMS) {
        let _ = write!(out, "<li>{i}</li>");
    }
    if items.len() > MAX_ITEMS {
        let _ = write!(out, "<li><a href=\"{more}\">and {} more</a></li>", items.len() - MAX_ITEMS);
    }
    out.push_str("</ul></div>\n");
}

fn tone(v: ClaimVerdict) -> &'static str {
    match v {
        ClaimVerdict::Held => "pass",
        ClaimVerdict::Failed => "fail",
        _ => "warn",
    }
}
