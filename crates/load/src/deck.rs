//! A request deck: an ordered list of requests of named kinds, each with its own checks, that the
//! workers walk in order; validated and serialized once when the plan is built.

mod login;

pub use login::{Capture, JsonStep, Login, LoginRequest, PlanLogin, Splice, SHARED_SPAN};

use crate::checks::Checks;
use crate::error::PlanError;
use crate::target::{serialize_request, Target};

/// Most kinds a deck may name: an entry's kind is a `u16`.
pub const MAX_KINDS: usize = u16::MAX as usize;

/// An ordered list of requests against the plan's address. Every worker walks it in order, from
/// its own position, so over a run each entry is sent as often as any other up to one partial
/// pass per worker: the mix is the deck's, exactly, not a random draw at run time.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Deck {
    /// Names of the request kinds; an entry's `kind` indexes this list.
    pub kinds: Vec<String>,
    /// The requests, in the order they are sent.
    pub entries: Vec<DeckEntry>,
    /// A login every new connection sends first, if any; it is not one of the entries.
    pub login: Option<Login>,
}

/// One request of a deck.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeckEntry {
    /// Index into [`Deck::kinds`].
    pub kind: u16,
    /// The request method, any case (sent upper case).
    pub method: String,
    /// Path and query, starting with `/`.
    pub path: String,
    /// Request headers, in order (`Host` comes from the plan's URL unless given here).
    pub headers: Vec<(String, String)>,
    /// The request body, if any (`Content-Length` is added unless given).
    pub body: Option<Vec<u8>>,
    /// What makes this entry's response a success.
    pub checks: Checks,
}

impl Deck {
    /// The deck rotated to start `entries_by` entries (and its login `logins_by` requests) further
    /// on: one client host's copy of a deck walked from several hosts, so that their workers start
    /// spread over it as one client's would.
    pub fn rotated(&self, entries_by: usize, logins_by: usize) -> Deck {
        let mut d = self.clone();
        if !d.entries.is_empty() {
            let n = d.entries.len();
            d.entries.rotate_left(entries_by % n);
        }
        if let Some(login) = d.login.as_mut().filter(|l| !l.requests.is_empty()) {
            let n = login.requests.len();
            login.requests.rotate_left(logins_by % n);
        }
        d
    }
}

impl DeckEntry {
    /// A `GET` of `path` of kind `kind`, with the default checks (any 2xx/3xx).
    pub fn get(kind: u16, path: &str) -> DeckEntry {
        DeckEntry { kind, method: "GET".into(), path: path.into(), headers: Vec::new(), body: None, checks: Checks::default() }
    }
}

/// A deck as the workers use it: each entry serialized once, with its checks.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanDeck {
    /// Names of the request kinds, as given.
    pub kinds: Vec<String>,
    /// The entries in deck order.
    pub entries: Vec<DeckRequest>,
    /// Whether any entry is a HEAD request (whose response has no body whatever it says).
    pub has_head: bool,
    /// Whether any entry's checks need the body hashed.
    pub wants_hash: bool,
    /// The login each connection runs first, if any.
    pub login: Option<PlanLogin>,
    /// The deck as given, which a client host's agent builds its own from.
    pub source: Deck,
}

/// One serialized deck entry.
#[derive(Debug, Clone, PartialEq)]
pub struct DeckRequest {
    /// Index into [`PlanDeck::kinds`].
    pub kind: u16,
    /// The complete request (line, headers, body), ready to write.
    pub request: Vec<u8>,
    /// What makes its response a success.
    pub checks: Checks,
    /// A HEAD request.
    pub head: bool,
    /// Over HTTP/2, the request as frames (their stream ids written per stream).
    pub(crate) h2: Option<crate::h2::frame::RequestFrames>,
}

impl PlanDeck {
    /// Validates `deck` and serializes its entries against `target`'s address; `close` adds
    /// `Connection: close` as the plan's flag does for every request.
    pub fn new(deck: &Deck, target: &Target, close: bool) -> Result<PlanDeck, PlanError> {
        let bad = |reason: String| Err(PlanError::BadDeck(reason));
        if deck.entries.is_empty() {
            return bad("it has no entries".into());
        }
        if deck.kinds.is_empty() || deck.kinds.len() > MAX_KINDS {
            return bad(format!("it names {} kinds; between 1 and {MAX_KINDS} are allowed", deck.kinds.len()));
        }
        let mut entries = Vec::with_capacity(deck.entries.len());
        for (i, e) in deck.entries.iter().enumerate() {
            if usize::from(e.kind) >= deck.kinds.len() {
                return bad(format!("entry {i} has kind {} but only {} kinds are named", e.kind, deck.kinds.len()));
            }
            if e.method.is_empty() || !e.method.bytes().all(|b| b.is_ascii_alphabetic()) {
                return bad(format!("entry {i} has method `{}`", e.method));
            }
            if !e.path.starts_with('/') || e.path.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
                return bad(format!("entry {i} has path `{}`; a path starts with `/` and has no spaces", e.path));
            }
            if let Some((k, _)) = e.headers.iter().find(|(k, v)| bad_header(k, v)) {
                return bad(format!("entry {i} has header `{k}`"));
            }
            let method = e.method.to_ascii_uppercase();
            let request = serialize_request(&method, &e.path, &target.host_header, &e.headers, e.body.as_deref(), close);
            // Over HTTP/2 (the target has frames) each entry is encoded as frames too.
            let h2 = match &target.h2 {
                Some(_) => Some(
                    Target::frames(&method, target, &e.path, &e.headers, e.body.as_deref())
                        .map_err(|e| PlanError::BadDeck(format!("entry {i}: {e}")))?,
                ),
                None => None,
            };
            entries.push(DeckRequest { kind: e.kind, request, checks: e.checks.clone(), head: method == "HEAD", h2 });
        }
        if deck.login.is_some() && target.h2.is_some() {
            return bad("a login over HTTP/2: decks with a login are sent over HTTP/1.1 only".into());
        }
        let login = deck.login.as_ref().map(|l| PlanLogin::new(l, &entries, target)).transpose()?;
        Ok(PlanDeck {
            login,
            source: deck.clone(),
            kinds: deck.kinds.clone(),
            has_head: entries.iter().any(|e| e.head),
            wants_hash: entries.iter().any(|e| e.checks.wants_hash()),
            entries,
        })
    }

    /// Where worker `phase` (its index over the thread count, in [0, 1)) starts walking the deck:
    /// spread out, so the workers' partial passes at the end of a run cover different entries.
    pub fn start(&self, phase: f64) -> usize {
        ((phase * self.entries.len() as f64) as usize).min(self.entries.len() - 1)
    }
}

/// A header name that is empty or not a token, or a value that would break the request.
fn bad_header(name: &str, value: &str) -> bool {
    name.is_empty()
        || name.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control() || b == b':')
        || value.bytes().any(|b| b == b'\r' || b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target::new("http://127.0.0.1:8080/", "GET", &[], None, false).unwrap()
    }

    #[test]
    fn entries_serialize_like_plain_requests() {
        let mut post = DeckEntry::get(1, "/cart");
        post.method = "post".into();
        post.headers.push(("Content-Type".into(), "application/json".into()));
        post.body = Some(b"{\"id\":1}".to_vec());
        let deck = Deck { kinds: vec!["item".into(), "cart".into()], entries: vec![DeckEntry::get(0, "/items/17"), post], login: None };
        let d = PlanDeck::new(&deck, &target(), false).unwrap();
        assert_eq!(d.entries[0].request, b"GET /items/17 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n");
        let cart = "POST /cart HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{\"id\":1}";
        assert_eq!(String::from_utf8_lossy(&d.entries[1].request), cart);
        assert!(!d.has_head && !d.wants_hash);
        assert_eq!((d.start(0.0), d.start(0.5), d.start(0.99)), (0, 1, 1));
    }

    #[test]
    fn bad_decks_say_why() {
        let k = || vec!["a".to_string()];
        let cases = [
            Deck { kinds: k(), entries: vec![], login: None },
            Deck { kinds: vec![], entries: vec![DeckEntry::get(0, "/")], login: None },
            Deck { kinds: k(), entries: vec![DeckEntry::get(1, "/")], login: None },
            Deck { kinds: k(), entries: vec![DeckEntry::get(0, "x")], login: None },
            Deck { kinds: k(), entries: vec![DeckEntry::get(0, "/a b")], login: None },
            Deck { kinds: vec!["k".into(); MAX_KINDS + 1], entries: vec![DeckEntry::get(0, "/")], login: None },
        ];
        for deck in cases {
            let e = PlanDeck::new(&deck, &target(), false).unwrap_err();
            assert!(matches!(e, PlanError::BadDeck(_)), "{e}");
        }
        let mut e = DeckEntry::get(0, "/");
        e.headers.push(("X".into(), "a\r\nEvil: 1".into()));
        assert!(PlanDeck::new(&Deck { kinds: k(), entries: vec![e], login: None }, &target(), false).is_err());
    }
}
