//! The `rows` expectation: an answer's JSON body must be what a SQL query returns on the server's
//! database (`rows`: the array of rows, each an object of column name to value; `rows_one`: the
//! one row, as an object). The lab runs the query; this compares, and says where they differ.

use super::database::render_sql;
use super::mismatch::Mismatch;
use super::template::{Template, Value};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// A `rows` or `rows_one` expectation as the file wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct RowsRule {
    /// The query; its placeholders become SQL literals.
    pub sql: Template,
    /// `rows_one`: exactly one row, the body is that object.
    pub one: bool,
}

/// A rows expectation with its query rendered for one drawn request.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedRows {
    /// The query to run on the server's database.
    pub sql: String,
    /// The body is the one row, not an array.
    pub one: bool,
}

impl RowsRule {
    /// The query for one drawn request.
    pub fn render(&self, values: &BTreeMap<String, Value>) -> ExpectedRows {
        ExpectedRows { sql: render_sql(&self.sql, values), one: self.one }
    }
}

impl ExpectedRows {
    /// What the body must be, given the rows the query returned (each a JSON object).
    pub fn wanted(&self, rows: Vec<Json>) -> Result<Json, String> {
        if !self.one {
            return Ok(Json::Array(rows));
        }
        match <[Json; 1]>::try_from(rows) {
            Ok([row]) => Ok(row),
            Err(rows) => Err(format!("`rows_one` needs one row and the query returned {}: {}", rows.len(), self.sql)),
        }
    }

    /// How `body` differs from `rows` (the query's result, or why it could not run): None when
    /// equal as JSON values (numbers compared as numbers, so 2 equals 2.0).
    pub fn check(&self, rows: Result<Vec<Json>, String>, body: &[u8]) -> Option<Mismatch> {
        let what = format!("rows ({})", self.sql);
        let want = match rows.and_then(|r| self.wanted(r)) {
            Ok(w) => w,
            Err(e) => return Some(Mismatch { what, expected: "a query that runs on the database".into(), got: e }),
        };
        let got: Json = match serde_json::from_slice(body) {
            Ok(g) => g,
            Err(e) => return Some(Mismatch { what, expected: cut(&want.to_string()), got: format!("a body that is not JSON ({e})") }),
        };
        difference("$", &want, &got).map(|(at, expected, got)| Mismatch { what: format!("{what} at {at}"), expected, got })
    }
}

/// The first place `got` differs from `want`: its JSON path, what was expected there, what came.
fn difference(at: &str, want: &Json, got: &Json) -> Option<(String, String, String)> {
    let here = || (at.to_string(), cut(&want.to_string()), cut(&got.to_string()));
    match (want, got) {
        (Json::Number(a), Json::Number(b)) => (a.as_f64() != b.as_f64()).then(here),
        (Json::Array(a), Json::Array(b)) => {
            if let Some(d) = a.iter().zip(b).enumerate().find_map(|(i, (x, y))| difference(&format!("{at}[{i}]"), x, y)) {
                return Some(d);
            }
            (a.len() != b.len()).then(|| (format!("{at} (length)"), format!("{} rows", a.len()), format!("{} rows", b.len())))
        }
        (Json::Object(a), Json::Object(b)) => {
            for (k, x) in a {
                match b.get(k) {
                    Some(y) => {
                        if let Some(d) = difference(&format!("{at}.{k}"), x, y) {
                            return Some(d);
                        }
                    }
                    None => return Some((format!("{at}.{k}"), cut(&x.to_string()), "no such field".into())),
                }
            }
            b.keys().find(|k| !a.contains_key(*k)).map(|k| (format!("{at}.{k}"), "no such field".into(), cut(&b[k].to_string())))
        }
        _ => (want != got).then(here),
    }
}

/// A value for a message, cut at 200 characters.
fn cut(text: &str) -> String {
    let short: String = text.chars().take(200).collect();
    if short.len() < text.len() {
        format!("{short}…")
    } else {
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(one: bool) -> ExpectedRows {
        ExpectedRows { sql: "SELECT id, name FROM items WHERE id = 2".into(), one }
    }

    #[test]
    fn a_body_equal_to_the_rows_passes_and_numbers_compare_as_numbers() {
        let found = || Ok(vec![json!({"id": 2, "name": "pen"})]);
        assert_eq!(rows(false).check(found(), br#"[{"name": "pen", "id": 2.0}]"#), None);
        assert_eq!(rows(true).check(found(), br#"{"id": 2, "name": "pen"}"#), None);
    }

    #[test]
    fn a_difference_names_the_row_and_column() {
        let found = || Ok(vec![json!({"id": 2, "name": "pen"})]);
        let m = rows(false).check(found(), br#"[{"id": 2, "name": "cup"}]"#).unwrap();
        assert_eq!(
            (m.what.as_str(), m.expected.as_str(), m.got.as_str()),
            ("rows (SELECT id, name FROM items WHERE id = 2) at $[0].name", "\"pen\"", "\"cup\"")
        );
        let m = rows(false).check(found(), br#"[{"id": "2", "name": "pen"}]"#).unwrap();
        assert!(m.what.ends_with("$[0].id") && m.got == "\"2\"", "a string is not the number: {m}");
        let m = rows(false).check(found(), br#"[]"#).unwrap();
        assert!(m.what.ends_with("$ (length)") && m.expected == "1 rows" && m.got == "0 rows", "{m}");
        let m = rows(true).check(found(), br#"{"id": 2}"#).unwrap();
        assert!(m.what.ends_with("$.name") && m.got == "no such field", "{m}");
        let m = rows(true).check(Ok(vec![]), b"{}").unwrap();
        assert!(m.got.contains("needs one row and the query returned 0"), "{m}");
        let m = rows(true).check(Err("no such table: items".into()), b"{}").unwrap();
        assert_eq!(m.got, "no such table: items");
    }
}
