//! The deck: the measured requests drawn from a workload by its seed, every request's bytes fixed
//! before the run, so every server gets the same requests in the same order and the exact mix.

use super::expect::Expected;
use super::login::LOGIN_DRAWS;
use super::template::Value;
use super::vars::Draws;
use super::{Body, RequestSpec, Workload};
use std::collections::BTreeMap;

/// One drawn request.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    /// Its kind: an index into the workload's requests.
    pub kind: usize,
    /// The method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Headers, the body's content type included.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Option<Vec<u8>>,
    /// What its answer must be.
    pub expected: Expected,
    /// The values it drew, by variable (a probe's change uses them too).
    pub values: BTreeMap<String, Value>,
}

impl Workload {
    /// `size` requests drawn from `seed`: each kind's count is its share of the weights (largest
    /// remainder, so a deck of a multiple of the weights' sum is exact), in an order shuffled by
    /// the seed; each request draws its variables once. A `unique` data file out of rows is an
    /// error naming it.
    pub fn deck(&self, seed: u64, size: usize) -> Result<Vec<Drawn>, String> {
        let mut draws = Draws::new(seed);
        let mut kinds = self.kind_counts(size).into_iter().enumerate().flat_map(|(k, n)| std::iter::repeat_n(k, n)).collect::<Vec<_>>();
        draws.rng().shuffle(&mut kinds);
        kinds.into_iter().map(|k| self.draw(k, &mut draws)).collect()
    }

    /// One request of kind `kind` with fresh draws; a value the login captures is left as its
    /// `{{name}}`, which the load generator fills in per connection.
    pub fn draw(&self, kind: usize, draws: &mut Draws) -> Result<Drawn, String> {
        let markers = self.login.iter().flat_map(|l| l.names()).map(|n| (n.to_string(), format!("{{{{{n}}}}}"))).collect();
        self.draw_with(kind, draws, &markers)
    }

    /// One request of kind `kind` with fresh draws and the login's `captured` values.
    pub fn draw_with(&self, kind: usize, draws: &mut Draws, captured: &BTreeMap<String, String>) -> Result<Drawn, String> {
        self.render(&self.requests[kind], kind, draws, captured)
    }

    /// The login's request with fresh draws, if the file has a login (its kind is 0: it is no
    /// kind of the deck).
    pub fn draw_login(&self, draws: &mut Draws) -> Option<Result<Drawn, String>> {
        self.login.as_ref().map(|l| self.render(&l.request, 0, draws, &BTreeMap::new()))
    }

    fn render(&self, spec: &RequestSpec, kind: usize, draws: &mut Draws, captured: &BTreeMap<String, String>) -> Result<Drawn, String> {
        let mut values = BTreeMap::new();
        for var in spec.variables() {
            let value = match captured.get(var) {
                Some(v) => Value::Text(v.clone()),
                None => self.vars[var].draw(var, draws)?,
            };
            values.insert(var.to_string(), value);
        }
        let mut headers: Vec<(String, String)> = spec.headers.iter().map(|(n, t)| (n.clone(), t.render(&values))).collect();
        let body = spec.body.as_ref().map(|b| match b {
            Body::Text(t) => t.render(&values).into_bytes(),
            Body::Json(j) => {
                if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-type")) {
                    headers.push(("Content-Type".into(), "application/json".into()));
                }
                serde_json::to_vec(&j.render(&values)).expect("a JSON value serializes")
            }
        });
        Ok(Drawn {
            kind,
            method: spec.method.clone(),
            path: spec.path.render(&values),
            headers,
            body,
            expected: spec.expect.render(&values),
            values,
        })
    }

    /// Requests per kind in a deck of `size`: `size × weight / Σweights`, the remainders given to
    /// the kinds with the largest fractions (ties in file order).
    pub fn kind_counts(&self, size: usize) -> Vec<usize> {
        let total: u64 = self.requests.iter().map(|r| r.weight as u64).sum();
        let exact: Vec<(usize, u64)> = self
            .requests
            .iter()
            .map(|r| ((size as u64 * r.weight as u64 / total) as usize, size as u64 * r.weight as u64 % total))
            .collect();
        let mut counts: Vec<usize> = exact.iter().map(|(n, _)| *n).collect();
        let mut order: Vec<usize> = (0..exact.len()).collect();
        order.sort_by(|&a, &b| exact[b].1.cmp(&exact[a].1).then(a.cmp(&b)));
        let short = size - counts.iter().sum::<usize>();
        for &k in order.iter().take(short) {
            counts[k] += 1;
        }
        counts
    }
}

impl Drawn {
    /// The request for the load generator: its bytes, and its checks under load (the status, and
    /// the body's hash where the file gives the exact body).
    pub fn into_deck_entry(self) -> bakeoff_load::DeckEntry {
        bakeoff_load::DeckEntry {
            kind: self.kind as u16,
            method: self.method,
            path: self.path,
            headers: self.headers,
            body: self.body,
            checks: bakeoff_load::Checks {
                expect_status: Some(self.expected.status),
                expect_length: None,
                expect_body_hash: self.expected.body.as_deref().map(|b| bakeoff_load::fnv1a64(b.as_bytes())),
            },
        }
    }
}

impl Workload {
    /// The deck of the file's own seed and size for the load generator: each entry's bytes, and its
    /// checks under load (the status, and the body's hash where the file gives the exact body).
    pub fn load_deck(&self) -> Result<bakeoff_load::Deck, String> {
        let entries = self.deck(self.seed, self.deck_size)?.into_iter().map(Drawn::into_deck_entry).collect();
        Ok(bakeoff_load::Deck { kinds: self.requests.iter().map(|r| r.name.clone()).collect(), entries, login: self.load_login()? })
    }

    /// The login for the load generator: one request if it draws no variable, else
    /// [`LOGIN_DRAWS`] drawn from the file's seed that connections take in turn.
    pub(super) fn load_login(&self) -> Result<Option<bakeoff_load::Login>, String> {
        let Some(login) = &self.login else { return Ok(None) };
        let n = if login.request.variables().is_empty() { 1 } else { LOGIN_DRAWS };
        // Its own stream, so adding a login does not change the deck's draws.
        let mut draws = Draws::new(self.seed ^ 0x6c6f_6769_6e00);
        let mut requests = Vec::with_capacity(n);
        for _ in 0..n {
            let d = match self.render(&login.request, 0, &mut draws, &BTreeMap::new()) {
                Ok(d) => d,
                // A `unique` data file with fewer rows than draws: its rows, in turn.
                Err(_) if !requests.is_empty() => break,
                Err(e) => return Err(e),
            };
            requests.push(bakeoff_load::LoginRequest {
                method: d.method,
                path: d.path,
                headers: d.headers,
                body: d.body,
                expect_status: d.expected.status,
            });
        }
        Ok(Some(bakeoff_load::Login { requests, captures: login.load_captures() }))
    }
}
