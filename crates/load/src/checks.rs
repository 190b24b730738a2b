//! What makes a response a success: the status, the decoded body's length and its hash, for a plan
//! or for each entry of a deck.

/// Response checks; any failure is counted as an error of its kind.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Checks {
    /// If set, only this status is a success; otherwise any 2xx/3xx is.
    pub expect_status: Option<u16>,
    /// Expected decoded body length in bytes.
    pub expect_length: Option<u64>,
    /// Expected 64-bit FNV-1a hash of the decoded body (see `parser::fnv1a64`).
    pub expect_body_hash: Option<u64>,
}

impl Checks {
    /// Whether `status` counts as a success.
    pub fn status_ok(&self, status: u16) -> bool {
        match self.expect_status {
            Some(s) => s == status,
            None => (200..400).contains(&status),
        }
    }
    /// Whether bodies must be hashed (a body hash is expected).
    pub fn wants_hash(&self) -> bool {
        self.expect_body_hash.is_some()
    }
}
