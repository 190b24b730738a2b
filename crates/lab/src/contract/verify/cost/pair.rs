//! What a cost pair compares and sends: a built-in scenario's load URL against a light URL, or a
//! scenario file's `[[cost]]` kinds, each side a handful of the file's requests drawn fresh for
//! every check; and how the checks and their failures name a pair.

use super::super::workload::fresh_seed;
use super::super::{Checks, Target};
use super::{Builtin, PAIRS};
use bakeoff_model::records::results::{CheckScope, Verdict};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::workload::cost::{CostPair, SIDE_DRAWS};
use bakeoff_model::workload::vars::Draws;
use bakeoff_model::workload::Workload;

/// What one side of a pair sends in its bursts.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Requests {
    /// GET paths, round-robin (the built-in pairs).
    Paths(Vec<String>),
    /// A scenario file's requests, walked in order: each one's bytes (method, headers, body), its
    /// checks, and the file's login, which every new connection sends first.
    Deck(bakeoff_load::Deck),
}

impl Requests {
    /// The first request's path, which a check's URL and a burst's failure name.
    pub(super) fn first_path(&self) -> &str {
        match self {
            Requests::Paths(paths) => &paths[0],
            Requests::Deck(deck) => &deck.entries[0].path,
        }
    }

    /// `sides` as few loads as carry them all, in order: every path in one, the requests of one
    /// scenario file (its kinds and login) in one (a plan sends either URLs or one deck).
    pub(super) fn merged(sides: &[&Requests]) -> Vec<Requests> {
        let mut out: Vec<Requests> = Vec::new();
        for side in sides {
            let joined = out.iter_mut().any(|into| match (into, side) {
                (Requests::Paths(into), Requests::Paths(more)) => {
                    into.extend(more.iter().cloned());
                    true
                }
                (Requests::Deck(into), Requests::Deck(more)) if into.kinds == more.kinds && into.login == more.login => {
                    into.entries.extend(more.entries.iter().cloned());
                    true
                }
                _ => false,
            });
            if !joined {
                out.push((*side).clone());
            }
        }
        out
    }
}

/// How a pair's checks name its sides.
pub(super) enum Names {
    /// A built-in pair, by URL: `/json?n=1000 costs the same as n=1`.
    Urls { heavy: &'static str, light: &'static str },
    /// A file's pair, by request kind: `` `work` costs the same as `item` ``.
    Kinds { heavy: String, light: String },
}

/// One comparison: what each side sends, the least ratio of CPU per request that passes and the
/// question a failure asks.
pub(super) struct Pair {
    pub(super) scenario: Scenario,
    pub(super) heavy: Requests,
    pub(super) light: Requests,
    pub(super) min_ratio: f64,
    pub(super) question: String,
    pub(super) names: Names,
}

impl Pair {
    pub(super) fn builtin(b: &Builtin) -> Pair {
        Pair {
            scenario: b.scenario,
            heavy: Requests::Paths(vec![b.scenario.load_path().to_string()]),
            light: Requests::Paths(vec![b.light.to_string()]),
            min_ratio: b.min_ratio,
            question: b.question.to_string(),
            names: Names::Urls { heavy: b.scenario.load_path(), light: b.light },
        }
    }

    /// `heavy vs light`, as a check's title names the pair.
    pub(super) fn versus(&self) -> String {
        match &self.names {
            Names::Urls { heavy, light } => format!("{heavy} vs {light}"),
            Names::Kinds { heavy, light } => format!("`{heavy}` vs `{light}`"),
        }
    }

    /// The two sides as a failure compares them: the heavy URL and the light URL's input, or
    /// the kinds.
    pub(super) fn subjects(&self) -> (String, String) {
        match &self.names {
            Names::Urls { heavy, light } => (heavy.to_string(), light.split_once('?').map_or(*light, |(_, q)| q).to_string()),
            Names::Kinds { heavy, light } => (format!("`{heavy}`"), format!("`{light}`")),
        }
    }

    /// Who sets the threshold, before it in a message: the built-in's is below every honest stack
    /// measured; a file's is its author's.
    pub(super) fn threshold_source(&self) -> &'static str {
        match self.names {
            Names::Urls { .. } => "honest stacks measure",
            Names::Kinds { .. } => "the file asks for",
        }
    }
}

/// The pairs of `target.scenarios`: the built-in table's, then each scenario file's `[[cost]]`,
/// its sides drawn with a fresh seed. A side that cannot be drawn is a failed check titled
/// `title: HEAVY vs LIGHT` (the file declared a proof that cannot be made).
pub(super) fn pairs(checks: &mut Checks, target: &Target<'_>, title: &str) -> Vec<Pair> {
    let mut out: Vec<Pair> = PAIRS.iter().filter(|b| target.scenarios.contains(&b.scenario)).map(Pair::builtin).collect();
    for &scenario in target.scenarios {
        let Scenario::File(file) = scenario else { continue };
        // A file the run was not given fails its answers' check already.
        let Some(workload) = target.workloads.iter().find(|w| w.name == file.name()) else { continue };
        let seed = fresh_seed();
        for (i, c) in workload.costs.iter().enumerate() {
            let mut draws = Draws::new(seed.wrapping_add(i as u64));
            match file_pair(workload, c, &mut draws, scenario) {
                Ok(p) => out.push(p),
                Err(reason) => {
                    let (heavy, light) = (&workload.requests[c.heavy].name, &workload.requests[c.light].name);
                    let reason = format!("could not draw the requests of {} (draws from seed {seed}): {reason}", c.line);
                    checks.add(
                        CheckScope::Scenario(scenario),
                        &format!("{title}: `{heavy}` vs `{light}`"),
                        "/",
                        Err((Verdict::Fail, reason)),
                    );
                }
            }
        }
    }
    out
}

/// A file's pair with [`SIDE_DRAWS`] requests a side from `draws`, heavy side first.
fn file_pair(w: &Workload, c: &CostPair, draws: &mut Draws, scenario: Scenario) -> Result<Pair, String> {
    let heavy = w.side_deck(c.heavy, draws, SIDE_DRAWS)?;
    let light = w.side_deck(c.light, draws, SIDE_DRAWS)?;
    Ok(Pair {
        scenario,
        heavy: Requests::Deck(heavy),
        light: Requests::Deck(light),
        min_ratio: c.min_ratio,
        question: c.question.clone(),
        names: Names::Kinds { heavy: w.requests[c.heavy].name.clone(), light: w.requests[c.light].name.clone() },
    })
}

#[cfg(test)]
mod tests {
    use super::Requests;
    use bakeoff_load::{Deck, DeckEntry};

    fn deck(kinds: &[&str], paths: &[&str]) -> Requests {
        let entries = paths.iter().map(|p| DeckEntry::get(0, p)).collect();
        Requests::Deck(Deck { kinds: kinds.iter().map(|k| k.to_string()).collect(), entries, login: None })
    }

    /// Paths go together as the built-in warm-ups always sent them; one file's sides share a
    /// deck; another file's requests need a load of their own.
    #[test]
    fn sides_merge_into_one_load_per_kind_of_request() {
        let (light, heavy) = (Requests::Paths(vec!["/json?n=1".into()]), Requests::Paths(vec!["/json?n=1000".into()]));
        let (item, work) = (deck(&["item", "work"], &["/items/3"]), deck(&["item", "work"], &["/work?n=7"]));
        let other = deck(&["a"], &["/a"]);
        let merged = Requests::merged(&[&light, &item, &heavy, &work, &other]);
        assert_eq!(merged.len(), 3, "{merged:?}");
        assert_eq!(merged[0], Requests::Paths(vec!["/json?n=1".into(), "/json?n=1000".into()]));
        assert_eq!(merged[1], deck(&["item", "work"], &["/items/3", "/work?n=7"]));
        assert_eq!(merged[2], other);
        assert_eq!(merged[1].first_path(), "/items/3");
    }
}
