//! The regex-like generator of a `pattern` variable: literals, `\d`, `\w`, `[a-z0-9_]` classes and
//! the quantifiers `{n}`, `{m,n}`, `?`: enough to write ids, tokens and search words, small enough
//! that every string it can draw is obvious from the pattern (no alternation, no nesting).

use crate::rng::SplitMix64;

/// A parsed pattern: a sequence of character sets, each repeated a range of times.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    atoms: Vec<Atom>,
}

#[derive(Debug, Clone, PartialEq)]
struct Atom {
    chars: Vec<char>,
    min: u32,
    max: u32,
}

/// Repetitions a quantifier may ask for: a pattern draws strings, not documents.
const MAX_REPEAT: u32 = 1000;

impl Pattern {
    /// Parses `text`; the error says which character is not understood.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let chars: Vec<char> = text.chars().collect();
        let (mut atoms, mut i) = (Vec::new(), 0);
        while i < chars.len() {
            let set;
            (set, i) = match chars[i] {
                '\\' => (escape(chars.get(i + 1).copied())?, i + 2),
                '[' => class(&chars, i)?,
                c @ ('{' | '}' | '?' | '*' | '+' | '(' | ')' | '|' | ']') => {
                    return Err(format!("`{c}` at {i} is not understood here (literals, \\d, \\w, [a-z], {{n}}, {{m,n}} and ? are)"))
                }
                '.' => (printable(), i + 1),
                c => (vec![c], i + 1),
            };
            let (min, max);
            (min, max, i) = quantifier(&chars, i)?;
            atoms.push(Atom { chars: set, min, max });
        }
        if atoms.is_empty() {
            return Err("the pattern is empty".into());
        }
        Ok(Pattern { atoms })
    }

    /// One string the pattern matches.
    pub fn draw(&self, rng: &mut SplitMix64) -> String {
        let mut out = String::new();
        for a in &self.atoms {
            let n = rng.between(a.min as i64, a.max as i64);
            for _ in 0..n {
                out.push(a.chars[rng.below(a.chars.len())]);
            }
        }
        out
    }
}

fn printable() -> Vec<char> {
    (' '..='~').collect()
}

fn escape(c: Option<char>) -> Result<Vec<char>, String> {
    match c {
        Some('d') => Ok(('0'..='9').collect()),
        Some('w') => Ok(('a'..='z').chain('A'..='Z').chain('0'..='9').chain(['_']).collect()),
        Some(c) if !c.is_alphanumeric() => Ok(vec![c]),
        Some(c) => Err(format!("`\\{c}` is not understood (\\d, \\w and escaped punctuation are)")),
        None => Err("the pattern ends with `\\`".into()),
    }
}

/// `[...]` from `start`: ranges and single characters; returns the set and the index after `]`.
fn class(chars: &[char], start: usize) -> Result<(Vec<char>, usize), String> {
    let (mut set, mut i) = (Vec::new(), start + 1);
    while i < chars.len() && chars[i] != ']' {
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|&c| c != ']') {
            let (lo, hi) = (chars[i], chars[i + 2]);
            if lo > hi {
                return Err(format!("range `{lo}-{hi}` runs backwards"));
            }
            set.extend(lo..=hi);
            i += 3;
        } else {
            set.push(chars[i]);
            i += 1;
        }
    }
    if i >= chars.len() {
        return Err(format!("`[` at {start} is not closed"));
    }
    if set.is_empty() {
        return Err(format!("`[]` at {start} is empty"));
    }
    Ok((set, i + 1))
}

/// `{n}`, `{m,n}` or `?` at `i`, else exactly once.
fn quantifier(chars: &[char], i: usize) -> Result<(u32, u32, usize), String> {
    match chars.get(i) {
        Some('?') => Ok((0, 1, i + 1)),
        Some('{') => {
            let end = chars[i..].iter().position(|&c| c == '}').ok_or_else(|| format!("`{{` at {i} is not closed"))? + i;
            let inner: String = chars[i + 1..end].iter().collect();
            let num = |s: &str| s.trim().parse::<u32>().map_err(|_| format!("`{{{inner}}}` needs whole numbers"));
            let (min, max) = match inner.split_once(',') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => (num(&inner)?, num(&inner)?),
            };
            if min > max || max > MAX_REPEAT {
                return Err(format!("`{{{inner}}}` must be m <= n <= {MAX_REPEAT}"));
            }
            Ok((min, max, end + 1))
        }
        _ => Ok((1, 1, i)),
    }
}

#[cfg(test)]
mod tests {
    use super::Pattern;
    use crate::rng::SplitMix64;

    #[test]
    fn drawn_strings_match_their_pattern() {
        let p = Pattern::parse(r"sku-[A-F0-9]{4}\d?x{2,3}").unwrap();
        let mut rng = SplitMix64(5);
        for _ in 0..200 {
            let s = p.draw(&mut rng);
            let rest = s.strip_prefix("sku-").unwrap_or_else(|| panic!("{s}"));
            assert!(rest[..4].chars().all(|c| c.is_ascii_digit() || ('A'..='F').contains(&c)), "{s}");
            let tail = &rest[4..];
            let xs = tail.trim_start_matches(|c: char| c.is_ascii_digit());
            assert!(tail.len() - xs.len() <= 1 && (xs == "xx" || xs == "xxx"), "{s}");
        }
    }

    #[test]
    fn what_a_pattern_cannot_say_is_named() {
        for (bad, says) in
            [("a|b", "`|`"), ("[a-", "not closed"), ("x{3,1}", "m <= n"), (r"\q", r"\q"), ("", "empty"), ("[z-a]", "backwards")]
        {
            let e = Pattern::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
