//! One request in flight: when it was due and sent, what it sends, and over HTTP/2 its stream and
//! its response as far as it has arrived.

/// Timestamps of one request, worker clock in ns.
#[derive(Debug, Clone, Copy)]
pub struct InFlight {
    /// When the schedule wanted it sent (== `sent` in the closed model).
    pub intended: u64,
    pub sent: u64,
    /// The deck entry it sends (0 without a deck): its response is checked and counted by it.
    pub entry: u32,
    /// Its HTTP/2 stream (0 over HTTP/1.1).
    pub stream: u32,
    /// Its HTTP/2 response as far as it has arrived (HTTP/1.1's is in the parser).
    pub got: Got,
}

/// An HTTP/2 response under way on its stream.
#[derive(Debug, Clone, Copy)]
pub struct Got {
    /// The final status, 0 until its HEADERS.
    pub status: u16,
    pub body_len: u64,
    /// FNV-1a 64 of the body so far (the offset basis when hashing is off).
    pub body_hash: u64,
}

impl Got {
    pub const NONE: Got = Got { status: 0, body_len: 0, body_hash: crate::parser::FNV_OFFSET };
}
