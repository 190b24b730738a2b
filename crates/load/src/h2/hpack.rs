//! HPACK (RFC 7541) for the client: requests encoded once at plan time (literals that never touch
//! the server's dynamic table, so one encoding serves every stream), and a response decoder that
//! keeps the dynamic table the server builds and reads `:status`; its buffers are reused, so it stops
//! allocating once the table has filled.

use std::collections::VecDeque;

use super::huffman;

/// RFC 7541 Appendix A: the static table, index 1 first.
const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// The table size the client allows the server (SETTINGS_HEADER_TABLE_SIZE's default).
pub(crate) const TABLE_SIZE: usize = 4096;
/// Headers HTTP/2 forbids (RFC 9113 8.2.2); `host` becomes `:authority`.
const CONNECTION_HEADERS: [&str; 6] = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"];

/// What is wrong with a header block: the connection cannot go on (its table is out of step).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HpackError(pub &'static str);

/// What a response's header block says that the load generator uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Fields {
    /// `:status`, if the block has one.
    pub status: Option<u16>,
    /// `content-length`, if given.
    pub content_length: Option<u64>,
}

struct Entry {
    name: Vec<u8>,
    value: Vec<u8>,
}

/// The response side's decoder: the dynamic table (newest first) and buffers kept between blocks.
pub(crate) struct Decoder {
    table: VecDeque<Entry>,
    /// RFC 7541 4.1: name + value + 32 per entry.
    size: usize,
    max_size: usize,
    /// Evicted entries, whose buffers the next insertions reuse.
    spare: Vec<Entry>,
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Decoder {
    pub(crate) fn new() -> Decoder {
        Decoder { table: VecDeque::new(), size: 0, max_size: TABLE_SIZE, spare: Vec::new(), name: Vec::new(), value: Vec::new() }
    }

    /// Decodes one complete header block, updating the table as the server did.
    pub(crate) fn decode(&mut self, block: &[u8]) -> Result<Fields, HpackError> {
        let mut fields = Fields::default();
        self.decode_each(block, |name, value| observe(name, value, &mut fields))?;
        Ok(fields)
    }

    /// Decodes one complete header block into every field, in order: for a check's whole
    /// response, not the load's path.
    pub(crate) fn decode_all(&mut self, block: &[u8]) -> Result<Vec<(String, String)>, HpackError> {
        let mut out = Vec::new();
        self.decode_each(block, |name, value| {
            out.push((String::from_utf8_lossy(name).into_owned(), String::from_utf8_lossy(value).into_owned()));
            Ok(())
        })?;
        Ok(out)
    }

    /// Decodes one complete header block, handing each field to `each`.
    fn decode_each(&mut self, mut block: &[u8], mut each: impl FnMut(&[u8], &[u8]) -> Result<(), HpackError>) -> Result<(), HpackError> {
        while let Some(&first) = block.first() {
            if first & 0x80 != 0 {
                let index = integer(&mut block, 7)?;
                self.copy_entry(index, true)?;
            } else if first & 0xe0 == 0x20 {
                let size = integer(&mut block, 5)?;
                if size > TABLE_SIZE {
                    return Err(HpackError("a table size update above the size allowed"));
                }
                self.max_size = size;
                self.evict(0);
                continue;
            } else {
                let (prefix, index_it) = if first & 0x40 != 0 { (6, true) } else { (4, false) };
                let index = integer(&mut block, prefix)?;
                if index == 0 {
                    self.name.clear();
                    string(&mut block, &mut self.name)?;
                } else {
                    self.copy_entry(index, false)?;
                }
                self.value.clear();
                string(&mut block, &mut self.value)?;
                if index_it {
                    self.insert();
                }
            }
            each(&self.name, &self.value)?;
        }
        Ok(())
    }

    /// Copies entry `index`'s name (and its value if `value`) into the buffers.
    fn copy_entry(&mut self, index: usize, value: bool) -> Result<(), HpackError> {
        self.name.clear();
        self.value.clear();
        match index {
            0 => return Err(HpackError("index 0")),
            1..=61 => {
                let (n, v) = STATIC[index - 1];
                self.name.extend_from_slice(n.as_bytes());
                if value {
                    self.value.extend_from_slice(v.as_bytes());
                }
            }
            _ => {
                let e = self.table.get(index - 62).ok_or(HpackError("an index beyond the table"))?;
                self.name.extend_from_slice(&e.name);
                if value {
                    self.value.extend_from_slice(&e.value);
                }
            }
        }
        Ok(())
    }

    /// Adds the buffers' field to the table, evicting the oldest entries to make room.
    fn insert(&mut self) {
        let need = self.name.len() + self.value.len() + 32;
        self.evict(need);
        if need > self.max_size {
            // Larger than the whole table: it empties the table and is not added (RFC 7541 4.4).
            return;
        }
        let mut e = self.spare.pop().unwrap_or_else(|| Entry { name: Vec::new(), value: Vec::new() });
        e.name.clear();
        e.name.extend_from_slice(&self.name);
        e.value.clear();
        e.value.extend_from_slice(&self.value);
        self.table.push_front(e);
        self.size += need;
    }

    /// Evicts until `room` more fits under the maximum size.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max_size {
            let Some(e) = self.table.pop_back() else { break };
            self.size -= e.name.len() + e.value.len() + 32;
            self.spare.push(e);
        }
    }
}

/// Keeps what the load generator needs of one field.
fn observe(name: &[u8], value: &[u8], fields: &mut Fields) -> Result<(), HpackError> {
    match name {
        b":status" => {
            let digits = std::str::from_utf8(value).ok().filter(|v| v.len() == 3);
            fields.status = Some(digits.and_then(|v| v.parse().ok()).ok_or(HpackError("a :status that is not three digits"))?);
        }
        b"content-length" => {
            let n = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            fields.content_length = Some(n.ok_or(HpackError("a content-length that is not a number"))?);
        }
        _ => {}
    }
    Ok(())
}

/// An integer with an N-bit prefix (RFC 7541 5.1), consumed from `input`.
fn integer(input: &mut &[u8], prefix: u32) -> Result<usize, HpackError> {
    let short = HpackError("a header block cut short");
    let (&first, rest) = input.split_first().ok_or(short.clone())?;
    *input = rest;
    let mask = (1usize << prefix) - 1;
    let mut value = usize::from(first) & mask;
    if value < mask {
        return Ok(value);
    }
    for shift in (0..28).step_by(7) {
        let (&b, rest) = input.split_first().ok_or(short.clone())?;
        *input = rest;
        value += usize::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(HpackError("an integer too large"))
}

/// A string literal (RFC 7541 5.2), decoded onto `out`.
fn string(input: &mut &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
    let huffman = input.first().is_some_and(|b| b & 0x80 != 0);
    let len = integer(input, 7)?;
    if len > input.len() {
        return Err(HpackError("a string longer than its header block"));
    }
    let (raw, rest) = input.split_at(len);
    *input = rest;
    if huffman {
        if !huffman::decode(raw, out) {
            return Err(HpackError("a malformed Huffman string"));
        }
    } else {
        out.extend_from_slice(raw);
    }
    Ok(())
}

/// `value` with an N-bit prefix after the flags in `first`.
fn put_integer(out: &mut Vec<u8>, prefix: u32, first: u8, value: usize) {
    let mask = (1usize << prefix) - 1;
    if value < mask {
        out.push(first | value as u8);
        return;
    }
    out.push(first | mask as u8);
    let mut rest = value - mask;
    while rest >= 0x80 {
        out.push((rest & 0x7f) as u8 | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    put_integer(out, 7, 0, s.len());
    out.extend_from_slice(s);
}

/// A literal field without indexing: by the static name `index`, or by name when `index` is 0.
fn put_literal(out: &mut Vec<u8>, index: usize, name: &str, value: &[u8]) {
    put_integer(out, 4, 0, index);
    if index == 0 {
        put_string(out, name.as_bytes());
    }
    put_string(out, value);
}

/// One request's header block: the pseudo-headers, then `headers` lower-cased without the
/// connection-specific ones (a `host` header becomes `:authority`), and `content-length` for a body
/// unless given. Nothing is added to the server's table, so the block is the same on every stream.
pub(crate) fn encode_request(
    method: &str,
    https: bool,
    authority: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<usize>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    match method {
        "GET" => out.push(0x82),
        "POST" => out.push(0x83),
        m => put_literal(&mut out, 2, "", m.as_bytes()),
    }
    out.push(if https { 0x87 } else { 0x86 });
    match path {
        "/" => out.push(0x84),
        p => put_literal(&mut out, 4, "", p.as_bytes()),
    }
    let host = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("host")).map_or(authority, |(_, v)| v.as_str());
    put_literal(&mut out, 1, "", host.as_bytes());
    let has = |n: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    for (k, v) in headers {
        let name = k.to_ascii_lowercase();
        if !CONNECTION_HEADERS.contains(&name.as_str()) {
            put_literal(&mut out, 0, &name, v.as_bytes());
        }
    }
    if let Some(n) = body.filter(|_| !has("content-length")) {
        put_literal(&mut out, 28, "", n.to_string().as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// RFC 7541 C.6: three responses with Huffman coding, a 256-byte table, evictions; `:status`
    /// read from each and the table left as the RFC shows it.
    #[test]
    fn decodes_the_rfcs_responses_with_their_evictions() {
        let mut d = Decoder::new();
        d.max_size = 256;
        let first = hex(
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        );
        assert_eq!(d.decode(&first).unwrap().status, Some(302));
        assert_eq!(d.size, 222);
        let second = hex("4883 640e ffc1 c0bf");
        assert_eq!(d.decode(&second).unwrap().status, Some(307));
        assert_eq!(d.size, 222);
        let third = hex(
            "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
        );
        assert_eq!(d.decode(&third).unwrap().status, Some(200));
        assert_eq!(d.size, 215);
        assert_eq!(d.table.len(), 3);
        assert_eq!(d.table[0].name, b"set-cookie");
        assert_eq!(d.table[2].value, b"Mon, 21 Oct 2013 20:13:22 GMT");
    }

    #[test]
    fn refuses_blocks_a_server_cannot_have_meant() {
        let mut d = Decoder::new();
        assert!(d.decode(&[0x80]).is_err(), "index 0");
        assert!(d.decode(&[0xbe]).is_err(), "index 62 with an empty table");
        assert!(d.decode(&[0x08, 0x03, b'2', b'0']).is_err(), "a string cut short");
        assert!(d.decode(&hex("3fe2 1f")).is_err(), "a table size of 4097");
        assert!(d.decode(&hex("3fe1 1f")).is_ok(), "a table size of 4096");
        assert_eq!(d.decode(&[0x08, 0x03, b'2', b'0', b'4']).unwrap().status, Some(204));
    }

    #[test]
    fn a_request_block_decodes_to_its_fields() {
        let headers =
            vec![("Host".to_string(), "example".to_string()), ("X-Id".to_string(), "7".to_string()), ("Connection".into(), "close".into())];
        let block = encode_request("PUT", true, "127.0.0.1:8443", "/items?a=1", &headers, Some(12));
        let mut seen = Vec::new();
        Decoder::new()
            .decode_each(&block, |n, v| {
                seen.push((String::from_utf8(n.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap()));
                Ok(())
            })
            .unwrap();
        let pairs = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
        assert_eq!(
            seen,
            pairs(&[
                (":method", "PUT"),
                (":scheme", "https"),
                (":path", "/items?a=1"),
                (":authority", "example"),
                ("x-id", "7"),
                ("content-length", "12")
            ])
        );
        let get = encode_request("GET", false, "127.0.0.1:80", "/", &[], None);
        assert_eq!(get[..3], [0x82, 0x86, 0x84], "GET, http and / are static indexes");
    }
}
