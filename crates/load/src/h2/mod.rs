//! HTTP/2 for the load generator (RFC 9113): framing, HPACK with its Huffman code, and one
//! connection's client session, written for the worker's own event loop as its HTTP/1.1 parser is
//! (no async runtime, no allocation per request once buffers have grown). Over TLS it is chosen by
//! ALPN `h2`; in cleartext it starts with the preface (h2c with prior knowledge).

pub(crate) mod frame;
pub(crate) mod hpack;
mod huffman;
pub(crate) mod session;
mod stats;

#[cfg(test)]
mod fuzz_tests;

pub(crate) use stats::H2Recorder;
