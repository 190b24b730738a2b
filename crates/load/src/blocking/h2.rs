//! HTTP/2 exchanges over a blocking stream for the lab's checks: the preface and SETTINGS, then
//! requests one at a time or several streams at once, each response read whole (headers decoded
//! with the load generator's HPACK decoder, DATA gathered, the connection window given back), the
//! server's SETTINGS and PINGs answered. Streams are told apart, so a server that answers one
//! stream with another's frames or resets it is caught.

use std::collections::BTreeMap;
use std::io::{Read, Write};

use super::Stream;
use crate::h2::frame::{self, flag, kind, setting, FrameHead, HEAD, MAX_FRAME};
use crate::h2::hpack::{self, Decoder};

/// What a read says when the server closed the connection (the HTTP/1.1 client's words too).
pub const CLOSED: &str = "connection closed without a response";

/// Bodies over this are refused (a check never needs more).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// One request of an exchange.
pub struct H2Request<'a> {
    /// The method, e.g. `GET`.
    pub method: &'a str,
    /// Path and query.
    pub path: &'a str,
    /// Extra headers (connection-specific ones are dropped, `host` becomes `:authority`).
    pub headers: &'a [(String, String)],
    /// The body, if any.
    pub body: Option<&'a [u8]>,
}

/// A whole HTTP/2 response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct H2Response {
    /// `:status`.
    pub status: u16,
    /// The regular header fields, in order (pseudo-headers left out).
    pub headers: Vec<(String, String)>,
    /// The DATA frames' bytes, padding removed.
    pub body: Vec<u8>,
    /// Where its stream ended among the exchange's streams (0 = first): a server that serves
    /// streams at once may end them in any order, one that serves them one at a time in the order
    /// they were sent.
    pub finished: usize,
}

/// A stream under way.
#[derive(Default)]
struct Open {
    status: Option<u16>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// One HTTP/2 connection of a check.
pub struct H2Exchange {
    stream: Stream,
    decoder: Decoder,
    authority: String,
    https: bool,
    next_stream: u32,
    /// The server's MAX_CONCURRENT_STREAMS, if it set one.
    max_streams: Option<u32>,
    /// A header block being continued: its stream, whether it ends the stream, its bytes.
    continuing: Option<(u32, bool, Vec<u8>)>,
}

impl H2Exchange {
    /// Opens HTTP/2 on `stream` (TLS with ALPN h2 done, or cleartext with prior knowledge): the
    /// preface and the client's SETTINGS, then the server's SETTINGS awaited and acknowledged.
    pub fn start(mut stream: Stream, authority: &str, https: bool) -> Result<H2Exchange, String> {
        let mut out = Vec::new();
        frame::put_preface(&mut out);
        stream.write_all(&out).map_err(|e| format!("write: {e}"))?;
        let mut x = H2Exchange {
            stream,
            decoder: Decoder::new(),
            authority: authority.to_string(),
            https,
            next_stream: 1,
            max_streams: None,
            continuing: None,
        };
        let (head, payload) = x.read_frame(true)?;
        if head.flags & flag::ACK != 0 {
            return Err("the server's first SETTINGS was an acknowledgement, not its own (RFC 9113 3.4)".into());
        }
        x.settings(&payload)?;
        Ok(x)
    }

    /// The server's MAX_CONCURRENT_STREAMS (None: it set no limit).
    pub fn max_concurrent_streams(&self) -> Option<u32> {
        self.max_streams
    }

    /// Sends one request and reads its whole response.
    pub fn send(&mut self, request: &H2Request<'_>) -> Result<H2Response, String> {
        self.send_all(std::slice::from_ref(request)).map(|mut r| r.remove(0))
    }

    /// Sends every request, each on a stream of its own, before reading any response; returns the
    /// responses in the order of `requests`, each with its place in the order streams ended.
    pub fn send_all(&mut self, requests: &[H2Request<'_>]) -> Result<Vec<H2Response>, String> {
        let mut out = Vec::new();
        let mut open: BTreeMap<u32, Open> = BTreeMap::new();
        let mut ids = Vec::with_capacity(requests.len());
        for r in requests {
            let id = self.next_stream;
            self.next_stream += 2;
            let block = hpack::encode_request(r.method, self.https, &self.authority, r.path, r.headers, r.body.map(<[u8]>::len));
            let frames = frame::RequestFrames::new(&block, r.body).ok_or("the request's headers do not fit one HTTP/2 frame")?;
            frames.write(&mut out, id);
            open.insert(id, Open::default());
            ids.push(id);
        }
        self.stream.write_all(&out).map_err(|e| format!("write: {e}"))?;
        let mut done: BTreeMap<u32, H2Response> = BTreeMap::new();
        while !open.is_empty() {
            let (head, payload) = self.read_frame(false)?;
            if let Some(id) = self.on_frame(head, &payload, &mut open)? {
                let o = open.remove(&id).unwrap_or_default();
                let status = o.status.ok_or(format!("stream {id} ended without a :status"))?;
                done.insert(id, H2Response { status, headers: o.headers, body: o.body, finished: done.len() });
            }
        }
        Ok(ids.iter().filter_map(|id| done.remove(id)).collect())
    }

    /// Acts on one frame; Some(stream) when that stream of ours has ended.
    fn on_frame(&mut self, head: FrameHead, payload: &[u8], open: &mut BTreeMap<u32, Open>) -> Result<Option<u32>, String> {
        let ends = head.flags & flag::END_STREAM != 0;
        match head.kind {
            kind::DATA => {
                let body = unpad(head, payload)?;
                if head.len > 0 {
                    let mut out = Vec::new();
                    frame::put_window_update(&mut out, 0, head.len);
                    self.stream.write_all(&out).map_err(|e| format!("write: {e}"))?;
                }
                let o = open.get_mut(&head.stream).ok_or(format!("DATA on stream {}, which is not open", head.stream))?;
                if o.status.is_none() {
                    return Err(format!("DATA on stream {} before its HEADERS", head.stream));
                }
                if o.body.len() + body.len() > MAX_BODY {
                    return Err("body over 64 MiB".into());
                }
                o.body.extend_from_slice(body);
                Ok(ends.then_some(head.stream))
            }
            kind::HEADERS => {
                let mut block = unpad(head, payload)?;
                if head.flags & flag::PRIORITY != 0 {
                    block = block.get(5..).ok_or("a HEADERS frame too short for its priority")?;
                }
                self.header_block(head.stream, ends, head.flags & flag::END_HEADERS != 0, block, open)
            }
            kind::CONTINUATION => {
                let Some((stream, ends, mut bytes)) = self.continuing.take() else {
                    return Err("CONTINUATION without a header block under way".into());
                };
                if stream != head.stream {
                    return Err("CONTINUATION on another stream than its HEADERS".into());
                }
                bytes.extend_from_slice(payload);
                self.header_block(stream, ends, head.flags & flag::END_HEADERS != 0, &bytes, open)
            }
            kind::RST_STREAM if open.contains_key(&head.stream) => {
                let code = payload.get(..4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                Err(format!("the server reset stream {} (error code {code})", head.stream))
            }
            kind::SETTINGS if head.flags & flag::ACK == 0 => self.settings(payload).map(|()| None),
            kind::PING if head.flags & flag::ACK == 0 => {
                let mut out = Vec::new();
                frame::put_head(&mut out, payload.len(), kind::PING, flag::ACK, 0);
                out.extend_from_slice(payload);
                self.stream.write_all(&out).map_err(|e| format!("write: {e}"))?;
                Ok(None)
            }
            kind::GOAWAY => {
                let code = payload.get(4..8).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                Err(format!("the server sent GOAWAY (error code {code}) with streams open"))
            }
            kind::PUSH_PROMISE => Err("the server pushed a stream though the client's SETTINGS disabled push".into()),
            _ => Ok(None),
        }
    }

    /// A header block complete (or begun, awaiting CONTINUATION): the response's head, or its
    /// trailers, or an informational head that another follows.
    fn header_block(
        &mut self,
        stream: u32,
        ends: bool,
        complete: bool,
        block: &[u8],
        open: &mut BTreeMap<u32, Open>,
    ) -> Result<Option<u32>, String> {
        if !complete {
            self.continuing = Some((stream, ends, block.to_vec()));
            return Ok(None);
        }
        let fields = self.decoder.decode_all(block).map_err(|e| format!("HPACK: {}", e.0))?;
        let o = open.get_mut(&stream).ok_or(format!("HEADERS on stream {stream}, which is not open"))?;
        if o.status.is_none() {
            let status = fields.iter().find(|(k, _)| k == ":status").and_then(|(_, v)| v.parse::<u16>().ok());
            let status = status.ok_or(format!("the response on stream {stream} has no valid :status"))?;
            if (100..200).contains(&status) {
                return Ok(None);
            }
            o.status = Some(status);
            o.headers = fields.into_iter().filter(|(k, _)| !k.starts_with(':')).collect();
        }
        Ok(ends.then_some(stream))
    }

    /// Records the server's SETTINGS and acknowledges them.
    fn settings(&mut self, payload: &[u8]) -> Result<(), String> {
        if !payload.len().is_multiple_of(6) {
            return Err("a SETTINGS frame whose length is not a multiple of 6".into());
        }
        for pair in payload.chunks(6) {
            let id = u16::from_be_bytes([pair[0], pair[1]]);
            let value = u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]);
            if id == setting::MAX_CONCURRENT_STREAMS {
                self.max_streams = Some(value);
            }
        }
        let mut out = Vec::new();
        frame::put_head(&mut out, 0, kind::SETTINGS, flag::ACK, 0);
        self.stream.write_all(&out).map_err(|e| format!("write: {e}"))
    }

    /// Reads one whole frame. `first`: the server's first bytes, which must be a SETTINGS frame;
    /// anything else (an HTTP/1.1 answer to the preface) says the port does not speak HTTP/2.
    fn read_frame(&mut self, first: bool) -> Result<(FrameHead, Vec<u8>), String> {
        let mut raw = [0u8; HEAD];
        self.read_exact(&mut raw)?;
        let head = FrameHead::parse(&raw);
        if first && (head.kind != kind::SETTINGS || head.len > MAX_FRAME) {
            let shown: String = raw.iter().map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '.' }).collect();
            return Err(format!(
                "the server did not answer the HTTP/2 preface with SETTINGS (its first bytes: `{shown}`): it does not speak HTTP/2 on this port"
            ));
        }
        if head.len > MAX_FRAME {
            return Err(format!("a frame of {} bytes, above the 16384 the client allows", head.len));
        }
        let mut payload = vec![0u8; head.len as usize];
        self.read_exact(&mut payload)?;
        Ok((head, payload))
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), String> {
        self.stream.read_exact(buf).map_err(|e| match e.kind() {
            // The verifier's client reads this wording as an idle connection closed, and asks again.
            std::io::ErrorKind::UnexpectedEof => CLOSED.to_string(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => "timed out waiting for the response".to_string(),
            _ => format!("read: {e}"),
        })
    }
}

/// A DATA or HEADERS payload without its padding.
fn unpad(head: FrameHead, payload: &[u8]) -> Result<&[u8], String> {
    if head.flags & flag::PADDED == 0 {
        return Ok(payload);
    }
    let pad = usize::from(*payload.first().ok_or("a padded frame without its pad length")?);
    payload.get(1..payload.len().saturating_sub(pad)).filter(|_| pad < payload.len()).ok_or_else(|| "padding longer than the frame".into())
}
