//! The deck: the measured requests drawn from a workload by its seed, every request's bytes fixed
//! before the run, so every server gets the same requests in the same order and the exact mix.

use super::expect::Expected;
use super::vars::Draws;
use super::{Body, Workload};
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

    /// One request of kind `kind` with fresh draws.
    pub fn draw(&self, kind: usize, draws: &mut Draws) -> Result<Drawn, String> {
        let spec = &self.requests[kind];
        let mut values = BTreeMap::new();
        for var in spec.variables() {
            values.insert(var.to_string(), self.vars[var].draw(var, draws)?);
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

impl Workload {
    /// The deck of the file's own seed and size for the load generator: each entry's bytes, and its
    /// checks under load (the status, and the body's hash where the file gives the exact body).
    pub fn load_deck(&self) -> Result<bakeoff_load::Deck, String> {
        let entries = self
            .deck(self.seed, self.deck_size)?
            .into_iter()
            .map(|d| bakeoff_load::DeckEntry {
                kind: d.kind as u16,
                method: d.method,
                path: d.path,
                headers: d.headers,
                body: d.body,
                checks: bakeoff_load::Checks {
                    expect_status: Some(d.expected.status),
                    expect_length: None,
                    expect_body_hash: d.expected.body.as_deref().map(|b| bakeoff_load::fnv1a64(b.as_bytes())),
                },
            })
            .collect();
        Ok(bakeoff_load::Deck { kinds: self.requests.iter().map(|r| r.name.clone()).collect(), entries })
    }
}
