//! The report's sections in the one order every human-facing format prints them: text, Markdown
//! and HTML each walk `Section::ORDER` and say how they lay out each (or that they leave one out).

use crate::view::ReportView;

/// One section of a report, empty in runs that have nothing for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    /// The answer, the claims and what to distrust, on one screen (HTML; text and Markdown open
    /// with the provenance and keep the claims in their section).
    Summary,
    /// B against A, the verdict first, when the run measured two servers side by side (`bench`).
    SideBySide,
    /// The run, study, status, commit, machine and services (in text and Markdown also the settings).
    Provenance,
    /// Per stack variant: server model, WORKERS, pool, libraries and versions.
    WhatRan,
    /// The article the study reproduces, beside this machine's figures.
    Article,
    /// The study's claims and their verdicts here.
    Claims,
    /// Checks that did not pass (HTML: every check, folded).
    Verification,
    /// The precision goal's outcome.
    Precision,
    /// Other processes' CPU and steal over the run, and the A/A noise floor.
    Noise,
    /// Each cell's SLO capacity.
    Slo,
    /// Each cell's latency at fractions of its capacity, with the knee.
    UnderLoad,
    /// One table (HTML: charts and a table) per scenario.
    Scenarios,
    /// What a request costs: CPU per request, requests per core-second, the price of a million.
    Cost,
    /// Per cell-step of a scenario file: each request kind's results beside the share asked.
    Kinds,
    /// Concurrency sweeps.
    Sweeps,
    /// Soaks over time.
    Soaks,
    /// The proxy study: overheads over the baseline and maximum throughput.
    Proxy,
    /// The run's settings as rows (HTML; text and Markdown print a short list of them in the provenance).
    Settings,
}

impl Section {
    /// What a reader needs first comes first: the summary, an A/B's verdict, what ran and what the study claims, which checks
    /// kept a cell from being measured, how precise and quiet the run was, then the numbers.
    pub const ORDER: [Section; 18] = [
        Section::Summary,
        Section::SideBySide,
        Section::Provenance,
        Section::WhatRan,
        Section::Article,
        Section::Claims,
        Section::Verification,
        Section::Precision,
        Section::Noise,
        Section::Slo,
        Section::UnderLoad,
        Section::Scenarios,
        Section::Cost,
        Section::Kinds,
        Section::Sweeps,
        Section::Soaks,
        Section::Proxy,
        Section::Settings,
    ];
}

/// Writes every section in `Section::ORDER` with a format's own `write`.
pub(crate) fn write_all(out: &mut String, view: &ReportView, write: fn(&mut String, &ReportView, Section)) {
    for s in Section::ORDER {
        write(out, view, s);
    }
}
