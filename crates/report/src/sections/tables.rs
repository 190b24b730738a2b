//! The tables shared by the text, Markdown and HTML formats, as plain rows of strings: what each table
//! says is decided here once, and each format only lays it out.

use crate::numbers::{estimate, grouped, latency, metric_value, mib, sig3, step_name};
use crate::section::Section;
use crate::sections::overhead::STATS;
use crate::sections::scenario::{scenario_view, ScenarioView};
use crate::sections::slo::SloView;
use crate::table::{Cell, Table, Tone};
use crate::view::ReportView;
use bakeoff_model::records::finding::{Finding, FindingKind};
use bakeoff_model::records::results::{LabWarning, Verdict};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::summary::{CellSummary, Metric};
use bakeoff_model::study::ClaimVerdict;

/// A table's heading as text and Markdown spell it.
pub(crate) enum Heading {
    /// A phrase: lowercase in text, its first letter capitalised in Markdown.
    Phrase(String),
    /// A title that starts with a name (a scenario, a cell): the same in both.
    Named(String),
    /// A scenario's table: "hello" in text, "Scenario `hello`" in Markdown.
    Scenario(Scenario),
}

/// The titled tables of the sections that text and Markdown print as tables alone, in order; none
/// for the other sections (each format lays those out itself) or when the run has nothing for one.
pub(crate) fn titled_tables(view: &ReportView, s: Section) -> Vec<(Heading, Table)> {
    let phrase = |p: &str, t: Option<Table>| t.map(|t| (Heading::Phrase(p.to_string()), t));
    match s {
        Section::WhatRan => phrase("what ran", what_ran(view)).into_iter().collect(),
        Section::Claims => phrase("the study's claims on this machine", claims(view)).into_iter().collect(),
        Section::Verification => {
            let (fails, warns) = view.verification_counts();
            phrase(&format!("verification: {fails} failed, {warns} warned"), Some(verification(view, false))).into_iter().collect()
        }
        Section::Scenarios => view.scenarios.iter().map(|sv| (Heading::Scenario(sv.scenario), scenario(view, sv))).collect(),
        Section::Cost => phrase("what a request costs", crate::sections::cost::table(view)).into_iter().collect(),
        Section::Sweeps => {
            view.sweeps.iter().map(|s| (Heading::Named(crate::sections::sweep::title(s)), crate::sections::sweep::table(s))).collect()
        }
        Section::Soaks => {
            view.soaks.iter().map(|s| (Heading::Named(crate::sections::soak::title(s)), crate::sections::soak::table(s))).collect()
        }
        Section::Proxy => [
            phrase("proxy: latency overhead over the baseline (nginx direct)", proxy_overhead(view)),
            phrase("proxy: maximum throughput (closed model)", proxy_max(view)),
        ]
        .into_iter()
        .flatten()
        .collect(),
        Section::Summary
        | Section::SideBySide
        | Section::Provenance
        | Section::Article
        | Section::Precision
        | Section::Noise
        | Section::Slo
        | Section::UnderLoad
        | Section::Kinds
        | Section::Settings => Vec::new(),
    }
}

/// The run's identity, machine and services as (key, value) lines (text and Markdown follow them with
/// `settings::readable`, HTML with a section of every setting).
pub fn provenance(view: &ReportView) -> Vec<(&'static str, String)> {
    let r = &view.data.run;
    let m = &r.machine;
    vec![
        ("run", r.id.clone()),
        ("study", r.study.clone()),
        ("status", view.status_line()),
        ("started", r.started_at.clone()),
        ("finished", view.data.finished_at.clone().unwrap_or_else(|| "–".into())),
        ("git commit", r.git_commit.clone().unwrap_or_else(|| "unknown (not a git checkout)".into())),
        ("machine", format!("{} ({} cores, {}, {} memory)", m.hostname, m.cores, m.cpu_model, mib_or_gib(m.memory_bytes))),
        ("os", format!("{}, kernel {}", m.os, m.kernel)),
        ("services", if r.services.is_empty() { "none".into() } else { r.services.join("; ") }),
    ]
}

/// The run's settings as the reports print them: the study's article and claims have sections of their
/// own, so they are left out here (the JSON report keeps every setting).
fn shown_settings(view: &ReportView) -> serde_json::Value {
    let mut settings = view.data.run.settings.clone();
    if let Some(all) = settings.as_object_mut() {
        if let Some(study) = all.get_mut("study").and_then(|s| s.as_object_mut()) {
            study.remove("article");
            study.remove("claims");
            if study.is_empty() {
                all.remove("study");
            }
        }
    }
    settings
}

fn mib_or_gib(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        mib(bytes)
    }
}

/// The scenario tables' throughput column (the SLO capacity column goes beside it).
const RPS_HEADING: &str = "req/s ± 95% CI";

/// Every step of every cell of a scenario, with the relative speed of the headline rows, then the
/// store ceilings and the SLO capacity column.
pub fn scenario(view: &ReportView, sv: &ScenarioView) -> Table {
    let vs = if sv.ranked_by == view.policy.primary {
        format!("vs best ({})", sv.ranked_by.id())
    } else {
        // The client capped a cell's requests/s: the scenario is ranked by what it cannot bias.
        format!("vs best ({}: the client capped req/s)", sv.ranked_by.id())
    };
    let mut t = Table::new(&[
        "stack",
        "variant",
        "workers",
        "step",
        RPS_HEADING,
        "CPU µs/req ± 95% CI",
        &vs,
        "p50",
        "p99",
        "p99.9",
        "max",
        "errors",
        "peak RSS MiB",
        "RSS MiB/min",
        "warnings",
    ]);
    for c in &sv.rows {
        let mut row: Vec<Cell> = [
            if c.cell.twin { format!("{} (A/A twin)", c.cell.stack) } else { c.cell.stack.clone() },
            c.cell.variant.clone(),
            c.cell.workers.to_string(),
            step_name(c),
        ]
        .map(Cell::from)
        .into();
        row.push(throughput_cell(c));
        // An unmanaged server without its pid: its zeros are no figures.
        let unmeasured = crate::sections::scenario::cpu_unmeasured(&view.data.trials, c);
        let server_figure = |text: String| if unmeasured { Cell::new("not measured", Tone::Warn) } else { Cell::from(text) };
        row.push(server_figure(estimate(Metric::CpuUsPerRequest, &c.get(Metric::CpuUsPerRequest))));
        row.push(relative_cell(sv, c));
        let medians = [Metric::P50Us, Metric::P99Us, Metric::P999Us, Metric::MaxUs, Metric::ErrorPercent];
        row.extend(medians.map(|m| Cell::from(metric_value(m, c.get(m).median))));
        row.push(server_figure(metric_value(Metric::PeakRssMib, c.get(Metric::PeakRssMib).median)));
        row.push(slope_cell(view, c));
        row.push(t.note_refs(row_notes(view, sv, c), &format!("{}: ", c.cell.label())));
        t.rows.push(row);
    }
    crate::sections::ceiling::add_rows(&mut t, view, sv);
    add_slo_column(&mut t, view, sv);
    t
}

/// Requests/s with its interval, or "≥ N" where the load generator was the ceiling: a lower bound.
fn throughput_cell(c: &CellSummary) -> Cell {
    let e = c.get(Metric::RequestsPerSec);
    if c.client_bound {
        Cell::new(format!("≥ {} (client-bound)", metric_value(Metric::RequestsPerSec, e.median)), Tone::Warn)
    } else {
        Cell::from(estimate(Metric::RequestsPerSec, &e))
    }
}

/// The speed relative to the scenario's best, on a cell's headline row: "best", "0.52 (0.49–0.55)"
/// ("paired" when measured block by block), "within noise" when the interval holds 1, or "not
/// ranked" for a cell that is shown but never compared.
fn relative_cell(sv: &ScenarioView, c: &CellSummary) -> Cell {
    let headline = sv.headline.iter().any(|h| h.cell == c.cell && h.step == c.step);
    match sv.relative.iter().find(|r| r.cell == c.cell && headline) {
        Some(r) if r.fastest => Cell::new("best", Tone::Good),
        Some(r) => Cell::from(relative_text(r)),
        None if c.rankable() && !c.client_bound => Cell::default(),
        None if c.rankable() => Cell::new("not ranked (client-bound)", Tone::Warn),
        None => Cell::from("not ranked"),
    }
}

/// "0.52 (0.49–0.55, paired)" or "0.99 (0.97–1.02, paired): within noise".
pub(crate) fn relative_text(r: &crate::sections::scenario::Relative) -> String {
    let how = match (r.paired, r.short_coverage) {
        (Some(_), Some(c)) => format!(", {}, {:.0}%", r.pairing(), 100.0 * c),
        (Some(_), None) => format!(", {}", r.pairing()),
        (None, _) => String::new(),
    };
    let noise = if r.within_noise() { ": within noise" } else { "" };
    format!("{:.2} ({:.2}–{:.2}{how}){noise}", r.ratio, r.low, r.high)
}

/// The fitted RSS slope, a warning when memory grows.
fn slope_cell(view: &ReportView, c: &CellSummary) -> Cell {
    match view.memory_of(&c.cell).and_then(|m| m.fit.map(|f| (f.slope, m.growing()))) {
        Some((slope, true)) => Cell::new(format!("{slope:+.2} ⚠ growing"), Tone::Warn),
        Some((slope, false)) => Cell::from(format!("{slope:+.2}")),
        None => Cell::from("–"),
    }
}

/// What a reader does about a cell that is shown but not ranked.
const NOT_RANKED_ADVICE: &str =
    "a server that died, hung, left processes behind, served stale answers or used more cores than its WORKERS is not compared: fix the stack and rerun";

/// A row's notes: the cell's warnings, why it is not ranked, and memory growth its fit found where
/// no trial warned of it.
fn row_notes(view: &ReportView, sv: &ScenarioView, c: &CellSummary) -> Vec<(String, String)> {
    let mut notes: Vec<(String, String)> = view.warnings_of(c).map(|w| (w.message(), w.advice().to_string())).collect();
    let headline = sv.headline.iter().any(|h| h.cell == c.cell && h.step == c.step);
    let disagreed = sv.relative.iter().filter(|r| r.cell == c.cell && headline).find_map(|r| r.disagreement_note());
    notes.extend(disagreed.map(|(message, advice)| (message, advice.to_string())));
    notes.extend(c.unrankable.iter().map(|r| (format!("not ranked: {}", r.tagged()), NOT_RANKED_ADVICE.to_string())));
    let grows = |f: &Finding| matches!(f.kind, FindingKind::Lab(LabWarning::MemoryGrowth { .. }));
    let fit = view.memory_of(&c.cell).filter(|m| m.growing()).and_then(|m| m.fit);
    if let Some(fit) = fit.filter(|_| !c.warnings.iter().any(grows)) {
        let w = LabWarning::MemoryGrowth { mib_per_min: fit.slope };
        notes.push((w.message(), w.advice().to_string()));
    }
    notes
}

/// Adds the SLO capacity column beside requests/s to a scenario table, whose first rows are
/// `sv.rows` in order (store ceilings follow them). The value stands on each cell's headline row,
/// as the relative speed does.
fn add_slo_column(t: &mut Table, view: &ReportView, sv: &ScenarioView) {
    let Some(slo) = &view.slo else { return };
    let at = t.headers.iter().position(|h| h == RPS_HEADING).map_or(t.headers.len(), |i| i + 1);
    t.headers.insert(at, slo.heading());
    for (i, row) in t.rows.iter_mut().enumerate() {
        let value = match sv.rows.get(i) {
            Some(c) if sv.headline.iter().any(|h| h.cell == c.cell && h.step == c.step) => {
                slo.of(&c.cell).map_or_else(|| "–".to_string(), SloView::capacity_text)
            }
            Some(_) => String::new(),
            None => "–".into(),
        };
        row.insert(at, Cell::from(value));
    }
}

/// The full table of the proxy scenario's cells (the proxy study shows it under its charts).
pub fn proxy_scenario(view: &ReportView) -> Option<Table> {
    view.proxy.as_ref()?;
    Some(scenario(view, &scenario_view(Scenario::Proxy, &view.cells, view.policy.primary, &view.data.trials)))
}

/// Every check that did not pass, plus one line per stack that passed everything.
pub fn verification(view: &ReportView, all_checks: bool) -> Table {
    let mut t = Table::new(&["stack", "variant", "scenario", "verdict", "check", "url", "reason"]);
    for v in &view.data.verifications {
        if !all_checks && v.verdict() == Verdict::Pass {
            t.push([
                Cell::from(v.stack.clone()),
                Cell::from(v.variant.clone()),
                Cell::from("*"),
                verdict_cell(Verdict::Pass),
                Cell::from(format!("all {} checks", v.checks.len())),
                Cell::default(),
                Cell::default(),
            ]);
            continue;
        }
        for c in v.checks.iter().filter(|c| all_checks || c.verdict != Verdict::Pass) {
            t.push([
                Cell::from(v.stack.clone()),
                Cell::from(v.variant.clone()),
                Cell::from(c.scenario.to_string()),
                verdict_cell(c.verdict),
                Cell::from(c.what.clone()),
                Cell::from(c.url.clone()),
                Cell::from(c.reason.clone()),
            ]);
        }
    }
    t
}

/// The study's claims and whether each held on this machine, with the value measured, its interval
/// and the interval's coverage beside what the claim allows; None when the study has none.
pub fn claims(view: &ReportView) -> Option<Table> {
    if view.claims.is_empty() {
        return None;
    }
    let mut t =
        Table::new(&["claim", "verdict", "of the study (Holm 5%)", "measured (interval, its coverage)", "claim allows", "cells compared"]);
    let label = |v: ClaimVerdict| match v {
        ClaimVerdict::Held => "held",
        ClaimVerdict::Failed => "FAILED",
        ClaimVerdict::Inconclusive => "inconclusive",
        ClaimVerdict::NotMeasured => "not measured",
        ClaimVerdict::NotTestable => "not testable here",
    };
    for c in &view.claims {
        let (verdict, family) = (label(c.verdict), label(c.family));
        let (measured, allows) = match &c.measured {
            Some(m) => {
                let interval = format!("{}–{}, {}", sig3(m.low), sig3(m.high), m.coverage());
                (format!("{}: {} ({interval})", m.quantity, sig3(m.value)), m.expected.clone())
            }
            None => ("–".into(), "–".into()),
        };
        t.push([c.claim.statement.clone(), verdict.into(), family.into(), measured, allows, c.detail.clone()]);
    }
    Some(t)
}

/// A check's verdict as a table shows it: "pass", "WARN" or "FAIL", in its tone.
fn verdict_cell(v: Verdict) -> Cell {
    match v {
        Verdict::Pass => Cell::new("pass", Tone::Good),
        Verdict::Warn => Cell::new("WARN", Tone::Warn),
        Verdict::Fail => Cell::new("FAIL", Tone::Bad),
    }
}

/// Proxy overhead per step: "+25 µs (+31%)" for each statistic.
pub fn proxy_overhead(view: &ReportView) -> Option<Table> {
    let p = view.proxy.as_ref()?;
    let mut headers = vec!["proxy", "rate"];
    headers.extend(STATS.iter().map(|s| s.label()));
    let mut t = Table::new(&headers);
    for row in &p.overheads {
        let mut r = vec![row.cell.label(), format!("{} req/s", grouped(row.target_rate))];
        r.extend(row.overheads.iter().map(overhead_text));
        t.push(r);
    }
    let coverages: Vec<f64> = p.overheads.iter().flat_map(|r| &r.overheads).filter_map(|o| o.interval.map(|i| i.confidence)).collect();
    if let Some(lowest) = coverages.iter().copied().reduce(f64::min) {
        t.notes.push((
            format!("±: half the Wilcoxon signed-rank interval of the round-by-round differences, in % of the baseline (lowest coverage here {:.1}%)", 100.0 * lowest),
            "\"within noise\": the interval holds zero, so no overhead is told from noise; more trials narrow it".to_string(),
        ));
    }
    // Said, not silently dropped: the steps whose latencies measured a queue.
    t.notes.extend(p.fell_short.iter().map(|s| (s.sentence(), SHORT_ADVICE.to_string())));
    t.notes.extend(p.placement.iter().map(|pl| (pl.sentence(), crate::sections::proxy::placement_advice(pl.placement).to_string())));
    Some(t)
}

/// "+25.0 µs (+31 ±9%)": the paired estimate, its share of the baseline and half its interval's
/// width in points of the baseline; "within noise (-5 ±20%)" when the interval holds zero; "+50.0 µs
/// (+50%, 1 round)" without an interval. The exact ends are in the JSON report.
fn overhead_text(o: &crate::sections::overhead::Overhead) -> String {
    let points = |us: f64| 100.0 * us / o.baseline_us;
    let Some(i) = o.interval.filter(|_| o.baseline_us > 0.0) else {
        let pct = if o.delta_percent.is_finite() { format!(" ({:+.0}%, 1 round)", o.delta_percent) } else { String::new() };
        return format!("{}{}{pct}", if o.delta_us >= 0.0 { "+" } else { "-" }, latency(o.delta_us.abs()));
    };
    let half = (points(i.high_us) - points(i.low_us)) / 2.0;
    if o.within_noise() {
        return format!("within noise ({:+.0} ±{half:.0}%)", o.delta_percent);
    }
    format!("{}{} ({:+.0} ±{half:.0}%)", if o.delta_us >= 0.0 { "+" } else { "-" }, latency(o.delta_us.abs()), o.delta_percent)
}

const SHORT_ADVICE: &str = "the rate was above what it sustains; its own maximum is in the throughput table";

pub fn proxy_max(view: &ReportView) -> Option<Table> {
    let p = view.proxy.as_ref()?;
    let mut t = Table::new(&["stack", "max req/s (95% CI)", "% of baseline"]);
    for m in &p.max {
        t.push([
            m.cell.label(),
            estimate(Metric::RequestsPerSec, &m.rps),
            m.percent_of_baseline.map(|p| format!("{p:.0}%")).unwrap_or_else(|| "–".into()),
        ]);
    }
    t.notes.extend(p.placement.iter().map(|pl| (pl.sentence(), crate::sections::proxy::placement_advice(pl.placement).to_string())));
    Some(t)
}

/// The machine's noise over the run: per CPU set, steal and other processes' CPU (median and
/// worst trial), in percent of one core. None when no trial carries a noise record.
pub fn noise(view: &ReportView) -> Option<Table> {
    let n = &view.noise;
    let mut t = Table::new(&["CPUs", "role", "other processes (median)", "(worst trial)", "steal (median)", "(worst trial)"]);
    let hosts = n.client_hosts.iter().map(|(host, s)| (format!("client host {host}"), Some(s)));
    for (role, side) in [("server".to_string(), n.server.as_ref()), ("client".to_string(), n.client.as_ref())].into_iter().chain(hosts) {
        let Some(s) = side else { continue };
        let cpus = s.cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
        let pct = |v: f64| format!("{v:.1}%");
        t.push([cpus, role, pct(s.other_median_percent), pct(s.other_max_percent), pct(s.steal_median_percent), pct(s.steal_max_percent)]);
    }
    (!t.rows.is_empty()).then_some(t)
}

/// The sentences under the noise table: the busiest other process and the A/A noise floor.
pub fn noise_lines(view: &ReportView) -> Vec<String> {
    let n = &view.noise;
    let mut out = Vec::new();
    if n.trials > 0 {
        out.push(format!(
            "percent of one core over {} trials; the measured server, its services and the load generator excluded",
            n.trials
        ));
    }
    if let Some(b) = &n.busiest {
        out.push(format!(
            "busiest other process: {} (pid {}) at {:.0}% of a core, during {} trial {}",
            b.process.name,
            b.process.pid,
            b.process.cpu_percent,
            b.cell.label(),
            b.trial
        ));
    }
    if let Some(f) = &n.floor {
        out.push(f.sentence());
    }
    if let Some(c) = &n.components {
        out.push(c.sentence());
    }
    out.extend(n.lengthened.iter().map(crate::sections::components::Lengthened::sentence));
    out
}
/// What ran, one row per stack variant: server model, WORKERS, pool, libraries and the versions
/// the stack's setup found installed, and where some variant left cleartext HTTP/1.1, each one's
/// protocol with what the lab set for TLS. None for runs recorded before this was kept.
pub fn what_ran(view: &ReportView) -> Option<Table> {
    if view.data.what_ran.is_empty() {
        return None;
    }
    let mut headers = vec!["stack", "variant", "server model", "workers", "POOL_SIZE", "pool", "json", "msgpack", "database", "versions"];
    let protocols = view.data.what_ran.iter().any(|w| w.protocol != bakeoff_model::protocol::WireProtocol::H1);
    if protocols {
        headers.push("protocol");
    }
    let mut t = Table::new(&headers);
    for w in &view.data.what_ran {
        let p = w.profile.as_ref();
        let text =
            |f: fn(&bakeoff_model::records::profile::StackProfile) -> &str| p.map(f).filter(|s| !s.is_empty()).unwrap_or("–").to_string();
        let workers: Vec<String> = w.workers.iter().map(u32::to_string).collect();
        let mut row = vec![
            w.stack.clone(),
            w.variant.clone(),
            p.map(|p| p.server_model.id().to_string()).unwrap_or_else(|| "–".into()),
            workers.join(", "),
            w.pool_size.to_string(),
            text(|p| &p.pool),
            text(|p| &p.json),
            text(|p| &p.msgpack),
            text(|p| &p.database),
            if w.components.is_empty() { format!("{} (not recorded)", w.runtime) } else { w.versions_line() },
        ];
        if protocols {
            row.push(match &w.tls {
                Some(tls) => format!("{} ({tls})", w.protocol),
                None => w.protocol.to_string(),
            });
        }
        t.push(row);
    }
    Some(t)
}

/// The run's settings as key/value rows: nested objects flattened to dotted keys, lists of plain
/// values joined, lists of objects numbered (`load.client_cpus`, `study.soak.cells.1.stack`); the
/// study's article and claims are left out, as in [`provenance`].
pub fn settings(view: &ReportView) -> Vec<(String, String)> {
    let mut out = Vec::new();
    flatten("", &shown_settings(view), &mut out);
    out
}

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    let key = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
    match v {
        Value::Object(map) if !map.is_empty() => map.iter().for_each(|(k, v)| flatten(&key(k), v, out)),
        Value::Array(items) if items.iter().any(|i| i.is_object() || i.is_array()) => {
            items.iter().enumerate().for_each(|(i, v)| flatten(&key(&(i + 1).to_string()), v, out))
        }
        Value::Array(items) => out.push((prefix.to_string(), items.iter().map(plain).collect::<Vec<_>>().join(", "))),
        other => out.push((prefix.to_string(), plain(other))),
    }
}

fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "–".into(),
        other => other.to_string(),
    }
}
