//! bakeoff's reports: one stored run rendered as a terminal table, Markdown, CSV, JSON or a single
//! self-contained HTML file. Every format reads the same derived view (`view::ReportView`), built once
//! from the store's `RunData` and the model's trial summaries, and walks the same sections in the same
//! order (`section::Section`).
//!
//! The public surface: `render` and `Format`, the view, `compare` (two runs), `history` (the A/B
//! verdicts of successive runs), an A/B run's gates as JUnit XML (`junit`), the proxy study's
//! arithmetic, and with the `test-support` feature a synthetic run for tests.
//!
//! The folders: `formats/` holds each output format (text, Markdown, CSV, JSON, HTML) and
//! `sections/` the report's sections, each a file that derives its part of the view and the tables
//! the formats share; `section.rs` gives the one order they are walked in.

#![warn(missing_docs)]

pub mod compare;
mod formats;
pub mod history;
mod numbers;
mod section;
pub mod sections;
#[cfg(any(test, feature = "test-support"))]
pub mod synthetic;
mod table;
pub mod view;

pub use formats::junit::junit;
pub use formats::Format;
pub use numbers::sig3;
pub use sections::{overhead, proxy, scenario};
pub use view::ReportView;

use bakeoff_model::records::run_data::RunData;

/// Renders `data` in `format`. Deterministic: the same data gives the same bytes.
pub fn render(data: &RunData, format: Format) -> String {
    let view = ReportView::new(data);
    match format {
        Format::Text => formats::text::render(&view),
        Format::Markdown => formats::markdown::render(&view),
        Format::Csv => formats::csv::render(&view),
        Format::Json => formats::json::render(&view),
        Format::Html => formats::html::render(&view),
    }
}
