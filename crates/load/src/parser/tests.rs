//! The response parser against framings, splits at every byte, pipelining and garbage.

use super::*;

/// Feeds `parts` in order, as reads would deliver them; returns the responses and how the stream
/// ended.
fn feed(parts: &[&[u8]]) -> (Vec<Response>, Result<Option<Response>, ParseError>) {
    let mut p = ResponseParser::new(true);
    let mut out = Vec::new();
    for part in parts {
        if let Err(e) = p.parse_all(part, |r| out.push(r)) {
            return (out, Err(e));
        }
    }
    (out, p.finish())
}

const CL: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!";
const CHUNKED: &[u8] =
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nHello\r\n7;ext=1\r\n World!\r\n0\r\nX-Trailer: a\r\n\r\n";

#[test]
fn content_length() {
    let (r, end) = feed(&[CL]);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].status, 200);
    assert_eq!(r[0].body_len, 12);
    assert_eq!(r[0].body_hash, fnv1a64(b"Hello World!"));
    assert!(!r[0].close);
    assert_eq!(end, Ok(None));
}

#[test]
fn chunked_with_extensions_and_trailers() {
    let (r, end) = feed(&[CHUNKED]);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].body_len, 12);
    assert_eq!(r[0].body_hash, fnv1a64(b"Hello World!"));
    assert_eq!(end, Ok(None));
    let (r, _) = feed(&[b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nA\n0123456789\n0\n\n"]);
    assert_eq!(r[0].body_len, 10);
}

#[test]
fn pipelined_in_one_buffer_and_split_everywhere() {
    let mut all = Vec::new();
    all.extend_from_slice(CL);
    all.extend_from_slice(CHUNKED);
    all.extend_from_slice(b"HTTP/1.1 204 No Content\r\n\r\n");
    all.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    let (whole, end) = feed(&[&all]);
    assert_eq!(whole.iter().map(|r| r.status).collect::<Vec<_>>(), vec![200, 200, 204, 404]);
    assert!(whole[3].close);
    assert_eq!(end, Ok(None));
    for i in 0..=all.len() {
        let (a, b) = all.split_at(i);
        assert_eq!(feed(&[a, b]), (whole.clone(), Ok(None)), "split at {i}");
    }
    let bytes: Vec<&[u8]> = all.chunks(1).collect();
    assert_eq!(feed(&bytes).0, whole);
}

#[test]
fn read_until_close_and_http10() {
    let (r, end) = feed(&[b"HTTP/1.1 200 OK\r\n\r\nabc", b"def"]);
    assert!(r.is_empty());
    let end = end.unwrap().unwrap();
    assert_eq!(end.body_len, 6);
    assert!(end.close);
    let (r, _) = feed(&[b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx"]);
    assert!(r[0].close);
    let (r, _) = feed(&[b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx"]);
    assert!(!r[0].close);
}

#[derive(Default)]
struct Keep {
    head: Vec<u8>,
    body: Vec<u8>,
}

impl ParseSink for Keep {
    fn head(&mut self, head: &[u8]) {
        self.head.extend_from_slice(head);
    }
    fn body(&mut self, data: &[u8]) {
        self.body.extend_from_slice(data);
    }
}

#[test]
fn a_sink_gets_the_final_head_and_the_decoded_body_however_the_bytes_are_split() {
    let mut all = b"HTTP/1.1 100 Continue\r\n\r\n".to_vec();
    all.extend_from_slice(CHUNKED);
    for i in 0..=all.len() {
        let (mut p, mut keep) = (ResponseParser::new(false), Keep::default());
        let (a, b) = all.split_at(i);
        let mut got = None;
        for part in [a, b] {
            let (_, r) = p.parse_into(part, &mut keep).unwrap();
            got = got.or(r);
        }
        let r = got.unwrap_or_else(|| panic!("split at {i}"));
        assert_eq!((r.framing, keep.body.as_slice()), (Framing::Chunked, &b"Hello World!"[..]), "split at {i}");
        assert!(keep.head.starts_with(b"HTTP/1.1 200 OK\r\n") && keep.head.ends_with(b"\r\n\r\n"), "split at {i}");
    }
    let (mut p, mut keep) = (ResponseParser::new(false), Keep::default());
    assert_eq!(p.parse_into(b"HTTP/1.1 200 OK\r\n\r\nabc", &mut keep).unwrap().1, None);
    assert_eq!(p.finish().unwrap().unwrap().framing, Framing::UntilClose);
    assert_eq!(keep.body, b"abc");
}

#[test]
fn head_responses_have_no_body() {
    let mut p = ResponseParser::new(false);
    p.set_head_request(true);
    let (used, r) = p.parse(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n").unwrap();
    assert_eq!(used, 40);
    assert_eq!(r.unwrap().body_len, 0);
}

#[test]
fn garbage_and_partial() {
    assert_eq!(feed(&[b"SSH-2.0-OpenSSH\r\n\r\n"]).1, Err(ParseError::Malformed));
    assert_eq!(feed(&[b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"]).1, Err(ParseError::Malformed));
    assert_eq!(feed(&[b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"]).1, Err(ParseError::Malformed));
    assert_eq!(feed(&[b"HTTP/1.1 101 Switching\r\n\r\n"]).1, Err(ParseError::Malformed));
    assert_eq!(feed(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]).1, Err(ParseError::BadChunk));
    assert_eq!(feed(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\n"]).1, Err(ParseError::BadChunk));
    assert_eq!(feed(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab"]).1, Err(ParseError::BadChunk));
    // partial responses end as truncated, never as a response
    assert_eq!(feed(&[b"HTTP/1.1 200 OK\r\nContent-Le"]).1, Err(ParseError::Truncated));
    assert_eq!(feed(&[b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello"]).1, Err(ParseError::Truncated));
    assert_eq!(feed(&[&CHUNKED[..CHUNKED.len() - 2]]).1, Err(ParseError::Truncated));
    let big = vec![b'a'; MAX_HEAD + 10];
    let mut head = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
    head.extend_from_slice(&big);
    assert_eq!(feed(&[&head]).1, Err(ParseError::HeadTooLarge));
    assert_eq!(feed(&[&head[..100], &head[100..]]).1, Err(ParseError::HeadTooLarge));
}
