//! Deterministic fuzzing of the HTTP/2 session and the HPACK decoder: a server's bytes, valid and
//! mutated, fed whole and split at random points. No panic, no hang, and the same events, records
//! and verdict however the bytes are split.

use std::collections::VecDeque;

use super::frame::{flag, kind, put_head};
use super::hpack::Decoder;
use super::session::{Event, Session};
use crate::inflight::{Got, InFlight};

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    put_head(out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
}

/// A server's answer to streams 1, 3 and 5: SETTINGS, a PING, a response split over HEADERS and
/// CONTINUATION with a Huffman `:status` literal indexed into the table, a padded DATA frame,
/// trailers, a response that reuses the table entry, a reset, a window update and a GOAWAY.
fn valid_server_bytes() -> Vec<u8> {
    let mut b = Vec::new();
    frame(&mut b, kind::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100, 0, 4, 0, 1, 0, 0]);
    frame(&mut b, kind::SETTINGS, flag::ACK, 0, &[]);
    frame(&mut b, kind::PING, 0, 0, &[1, 2, 3, 4, 5, 6, 7, 8]);
    // `:status: 302` with incremental indexing (RFC 7541 C.6.1's first field), then a literal
    // `x-a: b` split off into a CONTINUATION.
    frame(&mut b, kind::HEADERS, 0, 1, &[0x48, 0x82, 0x64, 0x02]);
    frame(&mut b, kind::CONTINUATION, flag::END_HEADERS, 1, &[0x00, 0x03, b'x', b'-', b'a', 0x01, b'b']);
    frame(&mut b, kind::DATA, flag::PADDED, 1, &[3, b'h', b'e', b'y', 0, 0, 0]);
    frame(&mut b, kind::HEADERS, flag::END_HEADERS | flag::END_STREAM, 1, &[0x0f, 0x0d, 0x01, b'0']);
    // The table's entry 62 is `:status: 302`.
    frame(&mut b, kind::HEADERS, flag::END_HEADERS, 3, &[0xbe]);
    frame(&mut b, kind::DATA, flag::END_STREAM, 3, b"Hello World!");
    frame(&mut b, kind::RST_STREAM, 0, 5, &[0, 0, 0, 2]);
    frame(&mut b, kind::WINDOW_UPDATE, 0, 0, &[0, 0, 0x10, 0]);
    frame(&mut b, kind::GOAWAY, 0, 0, &[0, 0, 0, 5, 0, 0, 0, 0]);
    b
}

fn inflight() -> VecDeque<InFlight> {
    [1, 3, 5].into_iter().map(|stream| InFlight { intended: 0, sent: 0, entry: 0, stream, got: Got::NONE }).collect()
}

/// What a session made of `parts`: its events, each record's status, length and hash, the bytes it
/// owed the server, and whether it failed.
type Outcome = (Vec<Event>, Vec<(u16, u64, u64)>, Vec<u8>, bool);

fn feed(parts: &[&[u8]]) -> Outcome {
    let mut s = Session::new(true);
    let mut records = inflight();
    let (mut out, mut events, mut failed) = (Vec::new(), Vec::new(), false);
    for part in parts {
        if s.feed(part, &mut records, &mut out).is_err() {
            failed = true;
        }
        events.append(&mut s.events);
        if failed {
            break;
        }
    }
    (events, records.iter().map(|r| (r.got.status, r.got.body_len, r.got.body_hash)).collect(), out, failed)
}

fn split<'a>(data: &'a [u8], rng: &mut Rng) -> Vec<&'a [u8]> {
    let mut parts = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let n = 1 + rng.below(rest.len().min(23));
        let (a, b) = rest.split_at(n);
        parts.push(a);
        rest = b;
    }
    parts
}

#[test]
fn a_valid_stream_reads_the_same_however_it_is_split() {
    let bytes = valid_server_bytes();
    let whole = feed(&[&bytes]);
    let (events, records, out, failed) = &whole;
    assert!(!failed);
    assert_eq!(events, &[Event::Settled, Event::Done(1), Event::Done(3), Event::Reset(5, 2), Event::GoAway { last: 5, code: 0 }]);
    assert_eq!((records[0].0, records[0].1), (302, 3), "padding is not body; trailers do not change the status");
    assert_eq!((records[1].0, records[1].2), (302, crate::parser::fnv1a64(b"Hello World!")), "the indexed status from the table");
    // Owed: the SETTINGS acknowledgement and the PING's.
    assert_eq!(out.len(), 9 + 9 + 8);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..500 {
        assert_eq!(feed(&split(&bytes, &mut rng)), whole);
    }
}

#[test]
fn mutated_streams_never_panic_and_split_the_same() {
    let seed = valid_server_bytes();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for round in 0..3000 {
        let mut b = seed.clone();
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(b.len());
            match rng.below(4) {
                0 => b[at] = rng.next() as u8,
                1 => b[at] ^= 1 << rng.below(8),
                2 => b.insert(at, rng.next() as u8),
                _ => {
                    b.truncate(at.max(1));
                }
            }
        }
        let whole = feed(&[&b]);
        let parts = split(&b, &mut rng);
        assert_eq!(feed(&parts), whole, "round {round}: {b:02x?}");
    }
}

#[test]
fn the_hpack_decoder_survives_any_block() {
    let mut rng = Rng(7);
    let mut d = Decoder::new();
    for _ in 0..20_000 {
        let len = rng.below(40);
        let block: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        // Errors are fine; a panic is not.
        let _ = d.decode(&block);
    }
}
