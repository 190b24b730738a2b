//! The load a scenario file sends: its deck, drawn from the file's seed, as the load generator's
//! entries, with the checks every answer gets under load (its status, and its body's hash where the
//! file gives the exact body). The CLI's `load --scenario` and the lab's tests send the same deck.

use bakeoff_load::{fnv1a64, Checks, Deck, DeckEntry};
use bakeoff_model::workload::Workload;

/// The deck of `workload` (its `deck` requests drawn from its `seed`), kinds named as in the file.
/// An error says why it cannot be drawn (a `unique` data file out of rows).
pub fn load_deck(workload: &Workload) -> Result<Deck, String> {
    let drawn = workload.deck(workload.seed, workload.deck_size)?;
    let entries = drawn
        .into_iter()
        .map(|d| DeckEntry {
            kind: d.kind as u16,
            method: d.method,
            path: d.path,
            headers: d.headers,
            body: d.body,
            checks: Checks {
                expect_status: Some(d.expected.status),
                expect_length: None,
                expect_body_hash: d.expected.body.as_deref().map(|b| fnv1a64(b.as_bytes())),
            },
        })
        .collect();
    let kinds = workload.requests.iter().map(|r| r.name.clone()).collect();
    Ok(Deck { kinds, entries })
}
