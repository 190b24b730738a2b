//! A deck's login: the request every new connection sends before walking the deck, the values it
//! captures from the JSON answer, and where in the deck's request bytes each value goes, so a
//! connection's own bytes are built once, not per request.

use crate::deck::DeckRequest;
use crate::error::PlanError;
use crate::target::{serialize_request, Target};

/// The login a deck's connections run first. A header value of a deck entry holding `{{name}}`,
/// for a name captured here, gets the value the connection's login captured.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Login {
    /// The login requests; connections take them in turn (one, if the login draws no variable).
    pub requests: Vec<LoginRequest>,
    /// What is taken from the login's answer.
    pub captures: Vec<Capture>,
}

/// One login request.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LoginRequest {
    /// The method, any case (sent upper case).
    pub method: String,
    /// Path and query, starting with `/`.
    pub path: String,
    /// Request headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
    /// The status a successful login answers.
    pub expect_status: u16,
}

/// A value taken from the login's JSON answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Capture {
    /// The name deck entries' headers use as `{{name}}`.
    pub name: String,
    /// Where the value is: `$` then these steps.
    pub path: Vec<JsonStep>,
}

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum JsonStep {
    /// An object's member.
    Key(String),
    /// An array's element.
    Index(usize),
}

/// A login as the workers use it: requests serialized, the splice points found.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanLogin {
    /// Each login request, ready to write, with the status that makes it a success.
    pub requests: Vec<(Vec<u8>, u16)>,
    /// What is taken from the answer.
    pub captures: Vec<Capture>,
    /// Per deck entry, where captured values go in its bytes (empty: the shared bytes serve).
    pub splices: Vec<Vec<Splice>>,
}

/// Where one captured value goes in an entry's bytes: `len` bytes at `at` (its `{{name}}`) are
/// replaced by capture `capture`'s value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Splice {
    /// Offset of the placeholder.
    pub at: usize,
    /// Its length.
    pub len: usize,
    /// Index into [`PlanLogin::captures`].
    pub capture: usize,
}

/// The span of an entry whose shared bytes serve every connection.
pub const SHARED_SPAN: (u32, u32) = (u32::MAX, 0);

impl PlanLogin {
    /// Validates `login` and serializes it against `target`; finds each captured name's place in
    /// the `entries`' heads. A login never asks the server to close: the deck follows it.
    pub fn new(login: &Login, entries: &[DeckRequest], target: &Target) -> Result<PlanLogin, PlanError> {
        let bad = |reason: String| Err(PlanError::BadDeck(format!("login: {reason}")));
        if login.requests.is_empty() {
            return bad("it has no request".into());
        }
        let mut requests = Vec::with_capacity(login.requests.len());
        for r in &login.requests {
            if r.method.is_empty() || !r.method.bytes().all(|b| b.is_ascii_alphabetic()) {
                return bad(format!("method `{}`", r.method));
            }
            if !r.path.starts_with('/') || r.path.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
                return bad(format!("path `{}`", r.path));
            }
            if let Some((k, _)) = r.headers.iter().find(|(k, v)| super::bad_header(k, v)) {
                return bad(format!("header `{k}`"));
            }
            let method = r.method.to_ascii_uppercase();
            requests
                .push((serialize_request(&method, &r.path, &target.host_header, &r.headers, r.body.as_deref(), false), r.expect_status));
        }
        let mut splices = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            splices.push(find_splices(&e.request, &login.captures).map_err(|name| {
                PlanError::BadDeck(format!("entry {i} has `{{{{{name}}}}}` in its request line; a captured value goes in headers only"))
            })?);
        }
        Ok(PlanLogin { requests, captures: login.captures.clone(), splices })
    }

    /// Fills `values` with the captured values found in a login answer's `body`; false if the
    /// body is not JSON or a value is missing, not a string or number, or would break a header.
    pub fn capture(&self, body: &[u8], values: &mut Vec<Vec<u8>>) -> bool {
        values.clear();
        let Ok(doc) = serde_json::from_slice::<serde_json::Value>(body) else { return false };
        for c in &self.captures {
            let found = c.path.iter().try_fold(&doc, |v, step| match step {
                JsonStep::Key(k) => v.get(k),
                JsonStep::Index(i) => v.get(*i),
            });
            let text = match found {
                Some(serde_json::Value::String(s)) => s.clone().into_bytes(),
                Some(v @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => v.to_string().into_bytes(),
                _ => return false,
            };
            if text.iter().any(|&b| b == b'\r' || b == b'\n') {
                return false;
            }
            values.push(text);
        }
        true
    }

    /// Builds one connection's bytes of the entries that take captured values into `bytes`, and
    /// into `spans` each entry's range there ([`SHARED_SPAN`] for an entry whose shared bytes serve).
    pub fn build(&self, entries: &[DeckRequest], values: &[Vec<u8>], bytes: &mut Vec<u8>, spans: &mut Vec<(u32, u32)>) {
        bytes.clear();
        spans.clear();
        for (e, splices) in entries.iter().zip(&self.splices) {
            if splices.is_empty() {
                spans.push(SHARED_SPAN);
                continue;
            }
            let start = bytes.len();
            let mut from = 0;
            for s in splices {
                bytes.extend_from_slice(&e.request[from..s.at]);
                bytes.extend_from_slice(&values[s.capture]);
                from = s.at + s.len;
            }
            bytes.extend_from_slice(&e.request[from..]);
            spans.push((start as u32, bytes.len() as u32));
        }
    }
}

/// Every `{{name}}` of `captures` in the head of `request`, in order; a name in the request line
/// is the error.
fn find_splices(request: &[u8], captures: &[Capture]) -> Result<Vec<Splice>, String> {
    let head_end = request.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(request.len());
    let line_end = request.windows(2).position(|w| w == b"\r\n").unwrap_or(head_end);
    let mut out = Vec::new();
    for (ci, c) in captures.iter().enumerate() {
        let marker = format!("{{{{{}}}}}", c.name).into_bytes();
        let mut at = 0;
        while let Some(p) = request[at..head_end].windows(marker.len()).position(|w| w == marker.as_slice()) {
            if at + p < line_end {
                return Err(c.name.clone());
            }
            out.push(Splice { at: at + p, len: marker.len(), capture: ci });
            at += p + marker.len();
        }
    }
    out.sort_by_key(|s| s.at);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Checks;

    fn entry(request: &str) -> DeckRequest {
        DeckRequest { kind: 0, request: request.as_bytes().to_vec(), checks: Checks::default(), head: false, h2: None }
    }

    fn plan(entries: &[DeckRequest]) -> Result<PlanLogin, PlanError> {
        let target = Target::new("http://127.0.0.1:8080/", "GET", &[], None, false).unwrap();
        let request = LoginRequest { method: "post".into(), path: "/login".into(), headers: vec![], body: None, expect_status: 200 };
        let token = Capture { name: "token".into(), path: vec![JsonStep::Key("token".into())] };
        let user = Capture { name: "user".into(), path: vec![JsonStep::Key("ids".into()), JsonStep::Index(1)] };
        PlanLogin::new(&Login { requests: vec![request], captures: vec![token, user] }, entries, &target)
    }

    #[test]
    fn each_connection_s_bytes_take_its_captured_values() {
        let entries = [
            entry("GET /a HTTP/1.1\r\nAuthorization: Bearer {{token}}\r\nX-User: {{user}}\r\n\r\n"),
            entry("GET /b HTTP/1.1\r\n\r\n{{token}}"),
        ];
        let login = plan(&entries).unwrap();
        assert!(login.requests[0].0.starts_with(b"POST /login HTTP/1.1\r\n"));
        assert!(login.splices[1].is_empty(), "a body's text is not a header");
        let mut values = Vec::new();
        assert!(login.capture(br#"{"token":"t-1","ids":[5,7]}"#, &mut values));
        let (mut bytes, mut spans) = (Vec::new(), Vec::new());
        login.build(&entries, &values, &mut bytes, &mut spans);
        let (a, b) = spans[0];
        assert_eq!(&bytes[a as usize..b as usize], b"GET /a HTTP/1.1\r\nAuthorization: Bearer t-1\r\nX-User: 7\r\n\r\n");
        assert_eq!(spans[1], SHARED_SPAN);
        for body in [&br#"{"ids":[5,7]}"#[..], br#"{"token":{},"ids":[5,7]}"#, b"not json", br#"{"token":"a\nb","ids":[1,2]}"#] {
            assert!(!login.capture(body, &mut values), "{}", String::from_utf8_lossy(body));
        }
        assert!(plan(&[entry("GET /{{token}} HTTP/1.1\r\n\r\n")]).is_err());
    }
}
