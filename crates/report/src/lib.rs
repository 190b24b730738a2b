//! bakeoff's reports: one stored run rendered as a terminal table, Markdown, CSV, JSON or a single
//! self-contained HTML file. Every format reads the same derived view (`view::ReportView`), built once
//! from the store's `RunData` and the model's trial summaries, and walks the same sections in the same
//! order (`section::Section`).
//!
//! The public surface: `render` and `Format`, the view, `compare` (two runs), the proxy study's
//! arithmetic, and with the `test-support` feature a synthetic run for tests.

#![warn(missing_docs)]

mod article;
mod ceiling;
pub mod compare;
mod components;
mod csv;
mod format;
mod html;
mod json;
mod kinds;
mod markdown;
mod memory;
mod noise;
mod numbers;
pub mod overhead;
mod precision;
pub mod proxy;
pub mod scenario;
mod section;
mod settings;
mod slo;
mod soak;
mod summary;
mod sweep;
#[cfg(any(test, feature = "test-support"))]
pub mod synthetic;
mod table;
mod tables;
mod text;
mod under_load;
pub mod view;

pub use format::Format;
pub use numbers::sig3;
pub use view::ReportView;

use bakeoff_model::run_data::RunData;

/// Renders `data` in `format`. Deterministic: the same data gives the same bytes.
pub fn render(data: &RunData, format: Format) -> String {
    let view = ReportView::new(data);
    match format {
        Format::Text => text::render(&view),
        Format::Markdown => markdown::render(&view),
        Format::Csv => csv::render(&view),
        Format::Json => json::render(&view),
        Format::Html => html::render(&view),
    }
}
