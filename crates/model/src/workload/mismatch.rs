//! One way an answer was not what a scenario file expected: what expectations and `rows` both
//! report.

/// One way an answer was not what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// What was compared: `status`, `body`, `json $.id`, `header X-A`, ….
    pub what: String,
    /// What was expected.
    pub expected: String,
    /// What came.
    pub got: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: expected {}, got {}", self.what, self.expected, self.got)
    }
}
