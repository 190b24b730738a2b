//! A scenario file's `[[cost]]` pairs: a heavy request kind that must cost the server more CPU
//! per request than a light one (docs/scenarios.md, "Scenario files"), checked when the file is
//! read, and the requests each side's bursts send, drawn fresh for every check.

use super::vars::Draws;
use super::Workload;
use serde::Deserialize;

/// A `[[cost]]` entry as the file writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCost {
    heavy: String,
    light: String,
    min_ratio: f64,
    question: Option<String>,
}

/// One checked cost pair: requests of kind `heavy` must cost the server's process tree more than
/// `min_ratio` times the CPU per request of kind `light`.
#[derive(Debug, Clone, PartialEq)]
pub struct CostPair {
    /// The heavy kind: an index into the workload's requests.
    pub heavy: usize,
    /// The light kind.
    pub light: usize,
    /// The least median ratio of CPU per request that passes; above 1.
    pub min_ratio: f64,
    /// What a failure asks the stack's author (the file's `question`, or one naming the kinds).
    pub question: String,
    /// Where the file declares it (`FILE:LINE`).
    pub line: String,
}

/// A problem with one `[[cost]]` entry and how to fix it.
pub(super) type Problem = (String, String);

/// Checks `raw` against the file's request kinds, `names` in file order.
pub(super) fn pair(raw: &RawCost, names: &[&str]) -> Result<CostPair, Problem> {
    let kind = |side: &str, name: &str| {
        names.iter().position(|n| *n == name).ok_or_else(|| {
            (format!("{side} = \"{name}\" names no request kind"), format!("name one of the file's [[requests]]: {}", names.join(", ")))
        })
    };
    let (heavy, light) = (kind("heavy", &raw.heavy)?, kind("light", &raw.light)?);
    if heavy == light {
        return Err((
            format!("heavy and light are both `{}`", raw.heavy),
            "compare a request that asks for more work with one that asks for less, e.g. heavy = \"search\", light = \"item\"".into(),
        ));
    }
    // NaN fails this comparison too.
    if !(raw.min_ratio > 1.0 && raw.min_ratio.is_finite()) {
        return Err((
            format!("min_ratio = {} must be above 1", raw.min_ratio),
            "the least ratio of CPU per request an honest server reaches with a wide margin, e.g. min_ratio = 1.5".into(),
        ));
    }
    let question = match &raw.question {
        Some(q) if q.trim().is_empty() => return Err(("`question` is empty".into(), "ask what a failure means, or leave it out".into())),
        Some(q) => q.trim().to_string(),
        None => format!("is the work of `{}` done on every request?", raw.heavy),
    };
    Ok(CostPair { heavy, light, min_ratio: raw.min_ratio, question, line: String::new() })
}

/// Requests per side of a pair that a check draws: a handful, sent in turn, so a memo of each
/// answer is hit again within every burst while the inputs still vary.
pub const SIDE_DRAWS: usize = 8;

impl Workload {
    /// What one side of a cost check sends: up to `n` requests of kind `kind` with fresh `draws`
    /// (fewer when a `unique` data file runs out, none is the error), as the load generator's deck
    /// with each request's bytes, its checks and the file's login.
    pub fn side_deck(&self, kind: usize, draws: &mut Draws, n: usize) -> Result<bakeoff_load::Deck, String> {
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            match self.draw(kind, draws) {
                Ok(d) => entries.push(d.into_deck_entry()),
                Err(_) if !entries.is_empty() => break,
                Err(e) => return Err(e),
            }
        }
        Ok(bakeoff_load::Deck { kinds: self.requests.iter().map(|r| r.name.clone()).collect(), entries, login: self.load_login()? })
    }
}

#[cfg(test)]
mod tests {
    use super::super::vars::Draws;
    use super::super::Workload;
    use std::path::Path;

    const WORK: &str = r#"
[vars]
n = { range = [100, 200] }
id = { range = [1, 9] }
[[requests]]
name = "work"
path = "/work?n={{n}}"
expect = { json = [{ path = "$.n", equals = "{{n}}" }] }
[[requests]]
name = "item"
path = "/items/{{id}}"
"#;

    fn with(cost: &str) -> Result<Workload, crate::InputError> {
        Workload::parse(Path::new("w.toml"), &format!("{WORK}{cost}"))
    }

    #[test]
    fn a_cost_pair_names_two_kinds_and_a_ratio_above_one() {
        let w = with("[[cost]]\nheavy = \"work\"\nlight = \"item\"\nmin_ratio = 1.5\nquestion = \"is the hashing done per request?\"\n")
            .unwrap();
        assert_eq!(w.costs.len(), 1);
        let c = &w.costs[0];
        assert_eq!((c.heavy, c.light, c.min_ratio), (0, 1, 1.5));
        assert_eq!(c.question, "is the hashing done per request?");
        assert_eq!(c.line, "w.toml:12");
        assert!(w.declares_proof());
        assert!(!with("").unwrap().declares_proof(), "no pair, no proof");
        let plain = with("[[cost]]\nheavy = \"work\"\nlight = \"item\"\nmin_ratio = 3\n").unwrap();
        assert_eq!(plain.costs[0].question, "is the work of `work` done on every request?");
    }

    #[test]
    fn cost_mistakes_are_named_with_their_line_and_fix() {
        let cases = [
            ("heavy = \"wrok\"\nlight = \"item\"\nmin_ratio = 2", "names no request kind", "work, item"),
            ("heavy = \"work\"\nlight = \"itme\"\nmin_ratio = 2", "light = \"itme\"", "work, item"),
            ("heavy = \"work\"\nlight = \"work\"\nmin_ratio = 2", "both `work`", "heavy = \"search\""),
            ("heavy = \"work\"\nlight = \"item\"\nmin_ratio = 1.0", "must be above 1", "min_ratio = 1.5"),
            ("heavy = \"work\"\nlight = \"item\"\nmin_ratio = 0.5", "must be above 1", "min_ratio = 1.5"),
            ("heavy = \"work\"\nlight = \"item\"\nmin_ratio = nan", "must be above 1", "min_ratio = 1.5"),
            ("heavy = \"work\"\nlight = \"item\"\nmin_ratio = 2\nquestion = \" \"", "`question` is empty", "leave it out"),
            ("heavy = \"work\"\nlight = \"item\"", "missing field `min_ratio`", "docs/scenarios.md"),
            ("heavy = \"work\"\nlight = \"item\"\nmin_ratio = 2\nratio = 3", "unknown field `ratio`", "docs/scenarios.md"),
        ];
        for (entry, says, hint) in cases {
            let e = with(&format!("\n[[cost]]\n{entry}\n")).unwrap_err();
            assert!(e.what.starts_with("w.toml:1"), "{entry}: {e}");
            assert!(e.problem.contains(says), "{entry}: {e}");
            assert!(e.hint.contains(hint), "{entry}: {e}");
        }
        let e = with("\n[[cost]]\nheavy = \"wrok\"\nlight = \"item\"\nmin_ratio = 2\n").unwrap_err();
        assert_eq!(e.what, "w.toml:13", "{e}");
        assert!(e.problem.starts_with("[[cost]]: heavy"), "{e}");
    }

    #[test]
    fn a_side_deck_holds_fresh_draws_of_its_kind_only() {
        let w = with("").unwrap();
        let deck = w.side_deck(0, &mut Draws::new(9), super::SIDE_DRAWS).unwrap();
        assert_eq!(deck.kinds, ["work", "item"]);
        assert_eq!(deck.entries.len(), super::SIDE_DRAWS);
        assert!(deck.entries.iter().all(|e| e.kind == 0 && e.path.starts_with("/work?n=")), "{:?}", deck.entries);
        assert!(deck.entries.iter().any(|e| e.path != deck.entries[0].path), "the inputs vary");
        assert_eq!(deck.entries[0].checks.expect_status, Some(200));
        assert_ne!(deck, w.side_deck(0, &mut Draws::new(10), super::SIDE_DRAWS).unwrap(), "another seed, other draws");
        assert!(deck.login.is_none());
    }
}
