//! Incremental HTTP/1.1 response parser: httparse for the head (head.rs), a hand-written
//! allocation-free chunked decoder, body bytes counted (and optionally hashed). The load
//! generator stores nothing; the lab's verifier passes a [`ParseSink`] that keeps the head and
//! the decoded body, so both decide framing with this one code.

mod head;

use head::{parse_head, Head};

/// Longest response head we accept; longer is a malformed response, not a hang.
pub const MAX_HEAD: usize = 64 * 1024;

/// One complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    /// The status code of the final (non-1xx) response.
    pub status: u16,
    /// Decoded body length (chunk framing excluded).
    pub body_len: u64,
    /// FNV-1a 64 of the decoded body, if hashing is on; else the FNV offset basis.
    pub body_hash: u64,
    /// The server will close the connection after this response.
    pub close: bool,
    /// How the body was delimited.
    pub framing: Framing,
}

/// How a response's body was delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body by rule: 204, 304, 1xx, or the answer to a HEAD request.
    NoBody,
    /// `Content-Length: N`.
    ContentLength,
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// The body ends when the server closes (no length, not chunked): no keep-alive possible.
    UntilClose,
    /// HTTP/2: DATA frames up to the stream's END_STREAM.
    Frames,
}

/// Receives what the parser decodes; the default methods ignore it, so the load generator's
/// `()` sink costs nothing.
pub trait ParseSink {
    /// The complete head of a final (non-1xx) response, status line to the empty line.
    fn head(&mut self, _head: &[u8]) {}
    /// A run of decoded body bytes (chunk framing removed).
    fn body(&mut self, _data: &[u8]) {}
}

impl ParseSink for () {}

/// Why a byte stream is not a valid response; the load generator counts it as `malformed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// Not HTTP: bad status line, header syntax, too many headers, bad Content-Length.
    Malformed,
    /// Head longer than `MAX_HEAD` (64 KiB).
    HeadTooLarge,
    /// Broken chunked framing.
    BadChunk,
    /// The connection ended in the middle of a response.
    Truncated,
}

pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a, the hash `--expect-body-hash` compares against. Chosen
/// because it streams byte by byte over split reads with no state but a u64.
#[inline]
pub fn fnv1a64_update(mut h: u64, data: &[u8]) -> u64 {
    for &b in data {
        h ^= b as u64;
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// 64-bit FNV-1a of `data` in one piece.
pub fn fnv1a64(data: &[u8]) -> u64 {
    fnv1a64_update(FNV_OFFSET, data)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    Size { value: u64, digits: u8 },
    Ext,
    SizeLf { value: u64 },
    Data(u64),
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    TrailerLf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Length(u64),
    Chunked(Chunk),
    UntilClose,
}

/// Parser for a stream of responses on one connection. Feed it whatever the
/// socket returned; it keeps only the bytes of an incomplete head.
#[derive(Debug, Clone)]
pub struct ResponseParser {
    state: State,
    /// Bytes of a head split across reads (rare: heads are small).
    carry: Vec<u8>,
    hash: bool,
    head_request: bool,
    status: u16,
    close: bool,
    framing: Framing,
    body_len: u64,
    body_hash: u64,
    /// Chunk size parked while skipping a chunk extension.
    pending: u64,
}

impl ResponseParser {
    /// A parser waiting for a response head; `hash` turns on FNV-1a hashing of bodies.
    pub fn new(hash: bool) -> Self {
        ResponseParser {
            state: State::Head,
            carry: Vec::new(),
            hash,
            head_request: false,
            status: 0,
            close: false,
            framing: Framing::NoBody,
            body_len: 0,
            body_hash: FNV_OFFSET,
            pending: 0,
        }
    }

    /// Responses to HEAD carry no body whatever their Content-Length says.
    pub fn set_head_request(&mut self, head: bool) {
        self.head_request = head;
    }

    /// Forget any partial response (new connection).
    pub fn reset(&mut self) {
        self.state = State::Head;
        self.carry.clear();
    }

    /// No partial response buffered.
    pub fn is_idle(&self) -> bool {
        self.state == State::Head && self.carry.is_empty()
    }

    /// Consumes a prefix of `input`. Returns the bytes consumed and the
    /// response completed by them, if any; without a response all of `input`
    /// was consumed. Call again with the rest for pipelined responses.
    pub fn parse(&mut self, input: &[u8]) -> Result<(usize, Option<Response>), ParseError> {
        self.parse_into(input, &mut ())
    }

    /// All of one read's bytes: every response they complete goes to `each`, in order; the rest of
    /// an incomplete one is kept for the next call. (The worker calls `parse` itself, to do its
    /// bookkeeping between responses.)
    pub fn parse_all(&mut self, mut input: &[u8], mut each: impl FnMut(Response)) -> Result<(), ParseError> {
        while !input.is_empty() {
            match self.parse(input)? {
                (used, Some(response)) => {
                    each(response);
                    input = &input[used..];
                }
                (_, None) => break,
            }
        }
        Ok(())
    }

    /// [`Self::parse`], handing the head and the decoded body to `sink`.
    pub fn parse_into<S: ParseSink>(&mut self, input: &[u8], sink: &mut S) -> Result<(usize, Option<Response>), ParseError> {
        let mut i = 0;
        loop {
            match self.state {
                State::Head => {
                    if i == input.len() {
                        return Ok((i, None));
                    }
                    let Some((used, head)) = self.read_head(&input[i..], sink)? else {
                        return Ok((input.len(), None));
                    };
                    i += used;
                    if head.informational {
                        continue;
                    }
                    self.status = head.status;
                    self.close = head.close;
                    self.framing = head.framing;
                    self.body_len = 0;
                    self.body_hash = FNV_OFFSET;
                    self.state = head.body;
                    if self.state == State::Length(0) {
                        return Ok((i, Some(self.complete())));
                    }
                }
                State::Length(rem) => {
                    let take = rem.min((input.len() - i) as u64) as usize;
                    self.body(&input[i..i + take], sink);
                    i += take;
                    let rem = rem - take as u64;
                    self.state = State::Length(rem);
                    if rem == 0 {
                        return Ok((i, Some(self.complete())));
                    }
                    return Ok((i, None));
                }
                State::UntilClose => {
                    self.body(&input[i..], sink);
                    return Ok((input.len(), None));
                }
                State::Chunked(c) => {
                    let (used, done) = self.chunked(c, &input[i..], sink)?;
                    i += used;
                    if done {
                        return Ok((i, Some(self.complete())));
                    }
                    return Ok((i, None));
                }
            }
        }
    }

    /// Parses a head from `rest`, joined to what earlier reads left in `carry`. Returns the bytes of
    /// `rest` it used and the head, or None when the head is still incomplete (all of `rest` is
    /// kept). The head of a final response goes to `sink`.
    #[inline]
    fn read_head<S: ParseSink>(&mut self, rest: &[u8], sink: &mut S) -> Result<Option<(usize, Head)>, ParseError> {
        if self.carry.is_empty() {
            return match parse_head(rest, self.head_request)? {
                Some(h) => {
                    if !h.informational {
                        sink.head(&rest[..h.len]);
                    }
                    Ok(Some((h.len, h)))
                }
                None if rest.len() > MAX_HEAD => Err(ParseError::HeadTooLarge),
                None => {
                    self.carry.extend_from_slice(rest);
                    Ok(None)
                }
            };
        }
        let old = self.carry.len();
        self.carry.extend_from_slice(rest);
        match parse_head(&self.carry, self.head_request)? {
            Some(h) => {
                if !h.informational {
                    sink.head(&self.carry[..h.len]);
                }
                self.carry.clear();
                Ok(Some((h.len - old, h)))
            }
            None if self.carry.len() > MAX_HEAD => Err(ParseError::HeadTooLarge),
            None => Ok(None),
        }
    }

    /// The peer closed the stream. A read-until-close body ends here; any other
    /// partial response is truncated.
    pub fn finish(&mut self) -> Result<Option<Response>, ParseError> {
        match self.state {
            State::UntilClose => {
                let r = self.complete();
                Ok(Some(Response { close: true, ..r }))
            }
            State::Head if self.carry.is_empty() => Ok(None),
            _ => {
                self.reset();
                Err(ParseError::Truncated)
            }
        }
    }

    #[inline]
    fn body<S: ParseSink>(&mut self, data: &[u8], sink: &mut S) {
        sink.body(data);
        self.body_len += data.len() as u64;
        if self.hash {
            self.body_hash = fnv1a64_update(self.body_hash, data);
        }
    }

    fn complete(&mut self) -> Response {
        self.state = State::Head;
        Response { status: self.status, body_len: self.body_len, body_hash: self.body_hash, close: self.close, framing: self.framing }
    }

    /// One byte of a chunk-size line: a hex digit, the line's end, or the start of an extension.
    #[inline]
    fn size_byte(&mut self, value: u64, digits: u8, b: u8) -> Result<Chunk, ParseError> {
        if let Some(d) = hex(b) {
            if digits >= 15 {
                return Err(ParseError::BadChunk);
            }
            return Ok(Chunk::Size { value: value * 16 + d as u64, digits: digits + 1 });
        }
        if digits == 0 {
            return Err(ParseError::BadChunk);
        }
        match b {
            b'\r' => Ok(Chunk::SizeLf { value }),
            b'\n' => Ok(size_done(value)),
            b';' | b' ' | b'\t' => {
                // Extensions are ignored; the size must survive a read split inside them.
                self.pending = value;
                Ok(Chunk::Ext)
            }
            _ => Err(ParseError::BadChunk),
        }
    }

    /// Runs the chunked state machine over `input`; returns bytes used and
    /// whether the body (incl. trailers) ended. Data runs are skipped in bulk.
    fn chunked<S: ParseSink>(&mut self, mut c: Chunk, input: &[u8], sink: &mut S) -> Result<(usize, bool), ParseError> {
        let mut i = 0;
        let result = loop {
            if i == input.len() {
                break (i, false);
            }
            let b = input[i];
            match c {
                Chunk::Size { value, digits } => {
                    i += 1;
                    c = self.size_byte(value, digits, b)?;
                }
                Chunk::Ext => match input[i..].iter().position(|&x| x == b'\n') {
                    Some(p) => {
                        i += p + 1;
                        c = size_done(std::mem::take(&mut self.pending));
                    }
                    None => i = input.len(),
                },
                Chunk::SizeLf { value } => {
                    i += 1;
                    if b != b'\n' {
                        return Err(ParseError::BadChunk);
                    }
                    c = size_done(value);
                }
                Chunk::Data(rem) => {
                    let take = rem.min((input.len() - i) as u64) as usize;
                    self.body(&input[i..i + take], sink);
                    i += take;
                    let rem = rem - take as u64;
                    c = if rem == 0 { Chunk::DataCr } else { Chunk::Data(rem) };
                }
                Chunk::DataCr => {
                    i += 1;
                    c = match b {
                        b'\r' => Chunk::DataLf,
                        b'\n' => Chunk::Size { value: 0, digits: 0 },
                        _ => return Err(ParseError::BadChunk),
                    };
                }
                Chunk::DataLf => {
                    i += 1;
                    if b != b'\n' {
                        return Err(ParseError::BadChunk);
                    }
                    c = Chunk::Size { value: 0, digits: 0 };
                }
                Chunk::TrailerStart => {
                    i += 1;
                    c = match b {
                        b'\r' => Chunk::TrailerLf,
                        b'\n' => break (i, true),
                        _ => Chunk::TrailerLine,
                    };
                }
                Chunk::TrailerLine => match input[i..].iter().position(|&x| x == b'\n') {
                    Some(p) => {
                        i += p + 1;
                        c = Chunk::TrailerStart;
                    }
                    None => i = input.len(),
                },
                Chunk::TrailerLf => {
                    i += 1;
                    if b != b'\n' {
                        return Err(ParseError::BadChunk);
                    }
                    break (i, true);
                }
            }
        };
        self.state = State::Chunked(c);
        Ok(result)
    }
}

#[inline]
fn size_done(value: u64) -> Chunk {
    if value == 0 {
        Chunk::TrailerStart
    } else {
        Chunk::Data(value)
    }
}

#[inline]
fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
