//! HTTP/2 framing (RFC 9113 4 and 6): the frame header, the kinds and flags the client uses, the
//! connection preface with the client's SETTINGS, and a request as frames whose stream id is patched
//! in per stream.

/// What a client sends first on a connection (RFC 9113 3.4).
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// The frame header's length.
pub(crate) const HEAD: usize = 9;
/// The largest frame payload before SETTINGS say otherwise, and the largest the client accepts.
pub(crate) const MAX_FRAME: u32 = 16_384;
/// The window a connection and a stream start with (RFC 9113 6.9.2).
pub(crate) const DEFAULT_WINDOW: u32 = 65_535;
/// The client's receive windows, stream and connection: 2^30 - 1, as h2load's defaults (-w 30,
/// -W 30), so flow control never paces a benchmark's responses.
pub(crate) const CLIENT_WINDOW: u32 = (1 << 30) - 1;

/// Frame types (RFC 9113 6).
pub(crate) mod kind {
    pub const DATA: u8 = 0x0;
    pub const HEADERS: u8 = 0x1;
    pub const RST_STREAM: u8 = 0x3;
    pub const SETTINGS: u8 = 0x4;
    pub const PUSH_PROMISE: u8 = 0x5;
    pub const PING: u8 = 0x6;
    pub const GOAWAY: u8 = 0x7;
    pub const WINDOW_UPDATE: u8 = 0x8;
    pub const CONTINUATION: u8 = 0x9;
}

/// Frame flags.
pub(crate) mod flag {
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

/// SETTINGS identifiers (RFC 9113 6.5.2).
pub(crate) mod setting {
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    pub const ENABLE_PUSH: u16 = 0x2;
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    pub const MAX_FRAME_SIZE: u16 = 0x5;
    pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;
}

/// A frame's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameHead {
    pub len: u32,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl FrameHead {
    pub(crate) fn parse(b: &[u8; HEAD]) -> FrameHead {
        FrameHead {
            len: u32::from_be_bytes([0, b[0], b[1], b[2]]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        }
    }
}

/// Appends a frame header.
pub(crate) fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
}

/// The preface, the client's SETTINGS (no push, its stream window) and the connection window
/// raised to the client's.
pub(crate) fn put_preface(out: &mut Vec<u8>) {
    out.extend_from_slice(PREFACE);
    let settings = [(setting::ENABLE_PUSH, 0), (setting::INITIAL_WINDOW_SIZE, CLIENT_WINDOW)];
    put_head(out, settings.len() * 6, kind::SETTINGS, 0, 0);
    for (id, value) in settings {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
    put_window_update(out, 0, CLIENT_WINDOW - DEFAULT_WINDOW);
}

pub(crate) fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_head(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

/// One request as frames: HEADERS (its block in one frame), then the body in DATA frames of at most
/// [`MAX_FRAME`]; each frame's stream id is written per stream at `stream_at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestFrames {
    pub bytes: Vec<u8>,
    /// Offsets of the stream ids to patch.
    pub stream_at: Vec<usize>,
    /// Body bytes: what the request takes of the server's flow-control windows.
    pub body_len: u32,
}

impl RequestFrames {
    /// The frames of a request whose header block is `block`; None if the block does not fit one
    /// frame.
    pub(crate) fn new(block: &[u8], body: Option<&[u8]>) -> Option<RequestFrames> {
        if block.len() > MAX_FRAME as usize {
            return None;
        }
        let body = body.filter(|b| !b.is_empty());
        let mut bytes = Vec::with_capacity(HEAD + block.len() + body.map_or(0, |b| b.len() + HEAD));
        let mut stream_at = vec![5];
        let end = if body.is_none() { flag::END_STREAM } else { 0 };
        put_head(&mut bytes, block.len(), kind::HEADERS, flag::END_HEADERS | end, 0);
        bytes.extend_from_slice(block);
        if let Some(b) = body {
            let chunks: Vec<&[u8]> = b.chunks(MAX_FRAME as usize).collect();
            for (k, chunk) in chunks.iter().enumerate() {
                stream_at.push(bytes.len() + 5);
                let end = if k + 1 == chunks.len() { flag::END_STREAM } else { 0 };
                put_head(&mut bytes, chunk.len(), kind::DATA, end, 0);
                bytes.extend_from_slice(chunk);
            }
        }
        Some(RequestFrames { bytes, stream_at, body_len: body.map_or(0, |b| b.len() as u32) })
    }

    /// Appends the frames for stream `id`.
    #[inline]
    pub(crate) fn write(&self, out: &mut Vec<u8>, id: u32) {
        let start = out.len();
        out.extend_from_slice(&self.bytes);
        let id = id.to_be_bytes();
        for &at in &self.stream_at {
            out[start + at..start + at + 4].copy_from_slice(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_headers_then_data_frames_with_the_stream_patched() {
        let body = vec![7u8; 20_000];
        let r = RequestFrames::new(b"\x82\x86\x84", Some(&body)).unwrap();
        let mut out = Vec::new();
        r.write(&mut out, 5);
        let mut at = 0;
        let mut seen = Vec::new();
        while at < out.len() {
            let h = FrameHead::parse(out[at..at + HEAD].try_into().unwrap());
            seen.push((h.kind, h.flags, h.len, h.stream));
            at += HEAD + h.len as usize;
        }
        assert_eq!(
            seen,
            [
                (kind::HEADERS, flag::END_HEADERS, 3, 5),
                (kind::DATA, 0, MAX_FRAME, 5),
                (kind::DATA, flag::END_STREAM, 20_000 - MAX_FRAME, 5)
            ]
        );
        assert_eq!(r.body_len, 20_000);
        let get = RequestFrames::new(b"\x82", None).unwrap();
        assert_eq!(FrameHead::parse(get.bytes[..HEAD].try_into().unwrap()).flags, flag::END_HEADERS | flag::END_STREAM);
        assert!(RequestFrames::new(&vec![0; 20_000], None).is_none());
    }
}
