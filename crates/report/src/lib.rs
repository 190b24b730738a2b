//! bakeoff's reports: one stored run rendered as a terminal table, Markdown, CSV, JSON or a single
//! self-contained HTML file. Every format reads the same derived view (`view::ReportView`), built once
//! from the store's `RunData` and the lab's trial summaries.

pub mod article;
pub mod ceiling;
pub mod compare;
pub mod csv;
pub mod format;
pub mod html;
pub mod json;
pub mod markdown;
pub mod memory;
pub mod noise;
pub mod numbers;
pub mod overhead;
pub mod precision;
pub mod proxy;
pub mod slo;
pub mod soak;
pub mod sweep;
pub mod synthetic;
pub mod tables;
pub mod text;
pub mod view;

pub use format::Format;
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
