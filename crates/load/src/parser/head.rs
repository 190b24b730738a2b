//! A response head read with httparse: its status, its framing (RFC 9112 6.3) and whether the
//! connection closes after it. Once per response, off the per-byte path of the body decoder.

use super::{Chunk, Framing, ParseError, State, MAX_HEAD};

const MAX_HEADERS: usize = 64;

/// What a complete head says about the response that follows it.
pub(super) struct Head {
    /// Bytes of the head, status line to the empty line.
    pub(super) len: usize,
    pub(super) framing: Framing,
    pub(super) status: u16,
    pub(super) close: bool,
    /// The state the body starts in.
    pub(super) body: State,
    /// 1xx: a final response follows.
    pub(super) informational: bool,
}

/// The head at the start of `buf`, None while it is incomplete. `head_request`: the answer to a
/// HEAD request has no body whatever its headers say.
pub(super) fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<Head>, ParseError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(ParseError::Malformed),
    };
    // Checked on completion too, so the verdict does not depend on how the
    // bytes were split across reads.
    if len > MAX_HEAD {
        return Err(ParseError::HeadTooLarge);
    }
    let status = resp.code.ok_or(ParseError::Malformed)?;
    let version = resp.version.unwrap_or(1);
    let mut close = version == 0;
    let mut length: Option<u64> = None;
    let mut chunked = false;
    for h in resp.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let v = std::str::from_utf8(h.value).map_err(|_| ParseError::Malformed)?.trim();
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ParseError::Malformed);
            }
            let n: u64 = v.parse().map_err(|_| ParseError::Malformed)?;
            if length.is_some_and(|l| l != n) {
                return Err(ParseError::Malformed);
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            // Only the last coding decides the framing (RFC 9112 6.3).
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(b"");
            chunked = trim(last).eq_ignore_ascii_case(b"chunked");
        } else if name.eq_ignore_ascii_case(b"connection") {
            for tok in h.value.split(|&b| b == b',') {
                let tok = trim(tok);
                if tok.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if tok.eq_ignore_ascii_case(b"keep-alive") && version == 0 {
                    close = false;
                }
            }
        }
    }
    if status == 101 {
        // We never ask for an upgrade; a server that switches protocols anyway
        // is not answering HTTP/1.1 requests any more.
        return Err(ParseError::Malformed);
    }
    let informational = (100..200).contains(&status);
    let (body, framing) = if informational || head_request || status == 204 || status == 304 {
        (State::Length(0), Framing::NoBody)
    } else if chunked {
        (State::Chunked(Chunk::Size { value: 0, digits: 0 }), Framing::Chunked)
    } else if let Some(n) = length {
        (State::Length(n), Framing::ContentLength)
    } else {
        close = true;
        (State::UntilClose, Framing::UntilClose)
    };
    Ok(Some(Head { len, framing, status, close, body, informational }))
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}
