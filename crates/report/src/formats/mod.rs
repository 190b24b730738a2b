//! The output formats: each in a file of its own (text, Markdown, CSV, JSON, and the HTML folder;
//! JUnit XML for an A/B run's gates),
//! and their names as the CLI's `--format` takes them (a clap `ValueEnum` with the `clap` feature,
//! so the names, aliases and `--help` list live here once).

pub(crate) mod csv;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod junit;
pub(crate) mod markdown;
pub(crate) mod text;

use std::fmt;

/// A report format: what `render` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Format {
    /// Aligned tables for a terminal.
    #[cfg_attr(feature = "clap", value(alias = "txt", alias = "terminal"))]
    Text,
    /// GitHub pipe tables, for pasting into an article.
    #[cfg_attr(feature = "clap", value(alias = "md"))]
    Markdown,
    /// One row per cell-step, every metric as median and interval.
    Csv,
    /// The whole report as one JSON document (docs/reports.md).
    Json,
    /// One self-contained HTML file with charts.
    Html,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 5] = [Format::Text, Format::Markdown, Format::Csv, Format::Json, Format::Html];

    /// The format's name, as `--format` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Markdown => "markdown",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Html => "html",
        }
    }

    /// File extension for `--out` defaults.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Markdown => "md",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Html => "html",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(all(test, feature = "clap"))]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// `--format` takes each format by the name it prints, and the short aliases.
    #[test]
    fn names_parse_back() {
        for f in Format::ALL {
            assert_eq!(Format::from_str(f.name(), false).unwrap(), f);
        }
        assert_eq!(Format::from_str("md", false).unwrap(), Format::Markdown);
        assert_eq!(Format::from_str("txt", false).unwrap(), Format::Text);
        assert!(Format::from_str("pdf", false).is_err());
    }
}
