//! The report's one-screen summary, derived from the view: the answer (who leads each scenario and
//! by how much, from the paired "vs best" figures), the claims' verdicts, and what to distrust
//! (unfinished run, failed checks, missed precision, client-bound cells, cells with warnings).

use crate::sections::scenario::ScenarioView;
use crate::view::ReportView;
use bakeoff_model::study::ClaimVerdict;
use std::collections::BTreeMap;

/// What a reader needs before the detail, as plain sentences each format lays out.
pub(crate) struct Summary {
    /// One sentence per scenario: its leader and the margin over the runner-up, with its interval.
    pub answer: Vec<String>,
    /// How many claims came to each verdict, in `ClaimVerdict` order, zero counts left out.
    pub verdicts: Vec<(ClaimVerdict, usize)>,
    /// Each claim's statement and verdict.
    pub claims: Vec<(String, ClaimVerdict)>,
    /// What the numbers above should not be trusted for, most serious first; empty when nothing is.
    pub distrust: Vec<String>,
}

/// The summary of a view.
pub(crate) fn summary(view: &ReportView) -> Summary {
    let order =
        [ClaimVerdict::Held, ClaimVerdict::Failed, ClaimVerdict::Inconclusive, ClaimVerdict::NotMeasured, ClaimVerdict::NotTestable];
    let verdicts = order.iter().map(|&v| (v, view.claims.iter().filter(|c| c.verdict == v).count())).filter(|(_, n)| *n > 0).collect();
    Summary {
        answer: view.scenarios.iter().map(answer).collect(),
        verdicts,
        claims: view.claims.iter().map(|c| (c.claim.statement.clone(), c.verdict)).collect(),
        distrust: distrust(view),
    }
}

/// "hello: rust-actix leads by 1.62x (1.51-1.74, paired) over go-fasthttp, ranked by capacity (req/s)".
fn answer(sv: &ScenarioView) -> String {
    let by = sv.ranked_by.describe();
    let Some(best) = sv.relative.iter().find(|r| r.fastest) else {
        return format!("{}: no cell could be ranked", sv.scenario);
    };
    let leader = best.cell.stack.clone();
    let Some(next) = sv.relative.iter().find(|r| !r.fastest) else {
        return format!("{}: {leader} alone was ranked, by {by}", sv.scenario);
    };
    let paired = if next.paired.is_some() { format!(", {}", next.pairing()) } else { String::new() };
    // The leader's margin is the inverse of the runner-up's speed relative to it.
    let (margin, low, high) = (1.0 / next.ratio, 1.0 / next.high, 1.0 / next.low);
    let sentence = if next.within_noise() {
        format!("{}: {leader} and {} cannot be told apart ({margin:.2}x, {low:.2}-{high:.2}{paired})", sv.scenario, next.cell.stack)
    } else {
        format!("{}: {leader} leads by {margin:.2}x ({low:.2}-{high:.2}{paired}) over {}", sv.scenario, next.cell.stack)
    };
    format!("{sentence}, by {by}")
}

fn distrust(view: &ReportView) -> Vec<String> {
    let mut out = Vec::new();
    if !view.data.is_finished() {
        out.push(format!("the run {}", view.status_line()));
    }
    let (fails, _) = view.verification_counts();
    if fails > 0 {
        out.push(format!("failed verification checks: {fails}; their cells were not measured or not ranked"));
    }
    if let Some(p) = view.precision.as_ref().filter(|p| !p.missed.is_empty()) {
        let total = p.met + p.missed.len();
        out.push(format!(
            "{} of {total} cells missed the ±{:.0}% precision target: differences smaller than that are noise here",
            p.missed.len(),
            100.0 * p.target
        ));
    }
    let headline: Vec<&bakeoff_model::statistics::summary::CellSummary> = view.scenarios.iter().flat_map(|s| &s.headline).collect();
    let bound: Vec<String> = headline.iter().filter(|c| c.client_bound && c.target_rate.is_none()).map(|c| c.cell.label()).collect();
    if !bound.is_empty() {
        out.push(format!("client-bound, so their req/s is the load generator's limit: {}", bound.join(", ")));
    }
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    let mut warned = 0;
    for c in &headline {
        let mut any = false;
        // Missed precision has its own line above.
        for w in view.warnings_of(c).filter(|w| w.kind() != "precision_missed") {
            *kinds.entry(w.kind()).or_default() += 1;
            any = true;
        }
        warned += usize::from(any);
    }
    if warned > 0 {
        let list: Vec<String> = kinds.iter().map(|(k, n)| format!("{} ({n})", k.replace('_', " "))).collect();
        out.push(format!("{warned} of {} cells carry warnings: {}", headline.len(), list.join(", ")));
    }
    out
}
