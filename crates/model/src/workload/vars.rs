//! Variables: what a placeholder draws from (integer ranges, choices, sequences, patterns and rows
//! of a CSV data file), and the state a deck's draws carry from one request to the next.

use super::pattern::Pattern;
use super::template::Value;
use crate::rng::SplitMix64;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where a variable's values come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Generator {
    /// A uniform integer in `lo..=hi`.
    Range(i64, i64),
    /// One of these, uniformly.
    Choice(Vec<String>),
    /// `lo, lo+1, …, hi`, then `lo` again: the draws repeat exactly.
    Sequence(i64, i64),
    /// A string the pattern matches.
    Pattern(Pattern),
    /// A row of a CSV file (its first line names the columns).
    Data(DataFile),
}

/// A CSV data file and how its rows are picked.
#[derive(Debug, Clone, PartialEq)]
pub struct DataFile {
    /// The file, as the scenario file names it (relative to the scenario file).
    pub path: PathBuf,
    /// The header line's names.
    pub columns: Vec<String>,
    /// The rows, each as long as `columns`.
    pub rows: Vec<Vec<String>>,
    /// How rows are picked.
    pub pick: Pick,
}

/// How a data variable picks its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// In file order, then from the top again.
    Cycle,
    /// Uniformly at random.
    Random,
    /// Each row at most once in a deck: no two requests share a row (a user, a coupon).
    Unique,
}

impl std::str::FromStr for Pick {
    type Err = String;
    fn from_str(s: &str) -> Result<Pick, String> {
        match s {
            "cycle" => Ok(Pick::Cycle),
            "random" => Ok(Pick::Random),
            "unique" => Ok(Pick::Unique),
            other => Err(format!("pick `{other}` is not known; write cycle, random or unique")),
        }
    }
}

impl DataFile {
    /// Reads `path` (resolved against `base`, the scenario file's folder).
    pub fn read(base: &Path, path: &str, pick: Pick) -> Result<DataFile, String> {
        let full = base.join(path);
        let mut reader = csv::Reader::from_path(&full).map_err(|e| format!("data file {}: {e}", full.display()))?;
        let columns: Vec<String> =
            reader.headers().map_err(|e| format!("data file {}: {e}", full.display()))?.iter().map(str::to_string).collect();
        let mut rows = Vec::new();
        for (i, record) in reader.records().enumerate() {
            let record = record.map_err(|e| format!("data file {}: row {}: {e}", full.display(), i + 2))?;
            rows.push(record.iter().map(str::to_string).collect());
        }
        if rows.is_empty() {
            return Err(format!("data file {} has a header but no rows", full.display()));
        }
        Ok(DataFile { path: PathBuf::from(path), columns, rows, pick })
    }
}

/// What the draws of one deck remember: the generator's stream and each sequence's and data
/// file's position.
#[derive(Debug, Clone)]
pub struct Draws {
    rng: SplitMix64,
    positions: BTreeMap<String, u64>,
}

impl Draws {
    /// Draws from `seed`.
    pub fn new(seed: u64) -> Draws {
        Draws { rng: SplitMix64(seed), positions: BTreeMap::new() }
    }

    /// The random stream, for choices a deck makes beside its variables (the order of kinds).
    pub fn rng(&mut self) -> &mut SplitMix64 {
        &mut self.rng
    }

    fn next_position(&mut self, name: &str) -> u64 {
        let p = self.positions.entry(name.to_string()).or_insert(0);
        *p += 1;
        *p - 1
    }
}

impl Generator {
    /// The next value of the variable `name`; a `unique` data file out of rows is an error that
    /// says how many there are.
    pub fn draw(&self, name: &str, draws: &mut Draws) -> Result<Value, String> {
        Ok(match self {
            Generator::Range(lo, hi) => Value::Int(draws.rng.between(*lo, *hi)),
            Generator::Choice(options) => Value::Text(options[draws.rng.below(options.len())].clone()),
            Generator::Sequence(lo, hi) => {
                let span = (*hi as i128 - *lo as i128 + 1) as u128;
                Value::Int((*lo as i128 + (draws.next_position(name) as u128 % span) as i128) as i64)
            }
            Generator::Pattern(p) => Value::Text(p.draw(&mut draws.rng)),
            Generator::Data(d) => {
                let n = d.rows.len() as u64;
                let i = match d.pick {
                    Pick::Cycle => draws.next_position(name) % n,
                    Pick::Random => draws.rng.below(n as usize) as u64,
                    Pick::Unique => {
                        let i = draws.next_position(name);
                        if i >= n {
                            return Err(format!("`{name}` picks unique rows of {} and its {} rows are used up", d.path.display(), n));
                        }
                        i
                    }
                };
                Value::Row(d.columns.iter().cloned().zip(d.rows[i as usize].iter().cloned()).collect())
            }
        })
    }

    /// The columns a placeholder may name: a data file's, none for the others.
    pub fn columns(&self) -> Option<&[String]> {
        match self {
            Generator::Data(d) => Some(&d.columns),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pick: Pick) -> Generator {
        let rows = (0..3).map(|i| vec![format!("u{i}")]).collect();
        Generator::Data(DataFile { path: "users.csv".into(), columns: vec!["name".into()], rows, pick })
    }

    fn names(g: &Generator, n: usize) -> Vec<String> {
        let mut d = Draws::new(1);
        (0..n)
            .map(|_| match g.draw("user", &mut d).unwrap() {
                Value::Row(r) => r["name"].clone(),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn sequences_and_cycles_repeat_in_order_and_unique_rows_run_out() {
        let mut d = Draws::new(1);
        let seq: Vec<_> = (0..5).map(|_| Generator::Sequence(7, 9).draw("n", &mut d).unwrap()).collect();
        assert_eq!(seq, [7, 8, 9, 7, 8].map(Value::Int));
        assert_eq!(names(&data(Pick::Cycle), 4), ["u0", "u1", "u2", "u0"]);
        assert_eq!(names(&data(Pick::Unique), 3), ["u0", "u1", "u2"]);
        let mut d = Draws::new(1);
        for _ in 0..3 {
            data(Pick::Unique).draw("user", &mut d).unwrap();
        }
        let e = data(Pick::Unique).draw("user", &mut d).unwrap_err();
        assert!(e.contains("its 3 rows are used up"), "{e}");
        let random = names(&data(Pick::Random), 60);
        assert!(["u0", "u1", "u2"].iter().all(|u| random.iter().any(|r| r == u)), "{random:?}");
    }
}
