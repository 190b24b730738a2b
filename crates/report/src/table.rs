//! The table every human-facing format lays out: headings, rows of cells that carry their tone
//! (good, warning, bad) beside their text, and numbered notes. Reads nothing of a run.

/// How a cell reads at a glance: HTML colours it; text and Markdown print the text alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Tone {
    /// Nothing to say beyond the text.
    #[default]
    Plain,
    /// A pass, or the best of its column.
    Good,
    /// A measurement-quality warning, or a check that warned.
    Warn,
    /// A failed check.
    Bad,
}

/// One cell of a table: its text and its tone.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Cell {
    pub text: String,
    pub tone: Tone,
}

impl Cell {
    pub fn new(text: impl Into<String>, tone: Tone) -> Cell {
        Cell { text: text.into(), tone }
    }

    /// Whether the text reads as a number (a digit, a sign or a dash first): aligned right, and
    /// given HTML's number class.
    pub fn is_number(&self) -> bool {
        self.text.starts_with(|c: char| c.is_ascii_digit() || "+-–".contains(c))
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell { text, tone: Tone::Plain }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::from(text.to_string())
    }
}

pub(crate) struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// Footnotes referenced from the rows as [n]: (message, advice).
    pub notes: Vec<(String, String)>,
}

impl Table {
    pub fn new(headers: &[&str]) -> Table {
        Table { headers: headers.iter().map(|h| h.to_string()).collect(), rows: Vec::new(), notes: Vec::new() }
    }

    /// Appends a row of plain cells or toned ones.
    pub fn push<C: Into<Cell>>(&mut self, row: impl IntoIterator<Item = C>) {
        self.rows.push(row.into_iter().map(Into::into).collect());
    }

    /// Numbers the notes of a row, reusing the number of a message already noted: "⚠ [1][3]", a
    /// warning cell; an empty plain one without notes. Each message is noted as `prefix` + message.
    pub fn note_refs(&mut self, notes: impl IntoIterator<Item = (String, String)>, prefix: &str) -> Cell {
        let refs: Vec<String> = notes
            .into_iter()
            .map(|(msg, advice)| {
                let full = format!("{prefix}{msg}");
                let i = match self.notes.iter().position(|(m, _)| *m == full) {
                    Some(i) => i,
                    None => {
                        self.notes.push((full, advice));
                        self.notes.len() - 1
                    }
                };
                format!("[{}]", i + 1)
            })
            .collect();
        if refs.is_empty() {
            Cell::default()
        } else {
            Cell::new(format!("⚠ {}", refs.join("")), Tone::Warn)
        }
    }
}
