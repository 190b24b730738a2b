//! Expectations: what an answer to one request must be (status, content type, exact body, JSON
//! values and ranges, a regex, headers), rendered per drawn request and checked against a
//! response; a mismatch says what was expected and what came.

use super::json_path::JsonPath;
pub use super::mismatch::Mismatch;
use super::rows::{ExpectedRows, RowsRule};
use super::template::{Template, Value};
use std::collections::BTreeMap;

/// A request's expectations as the file wrote them (templates not yet rendered).
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    /// The status every answer must have.
    pub status: u16,
    /// The `Content-Type`'s media type (parameters such as `charset` are not compared).
    pub content_type: Option<Template>,
    /// The exact body.
    pub body: Option<Template>,
    /// Values in a JSON body.
    pub json: Vec<JsonRule>,
    /// A regex the body must match.
    pub regex: Option<Template>,
    /// Headers that must be present with these values.
    pub headers: Vec<(String, Template)>,
    /// The body is what this query returns on the server's database (checked by the lab, which
    /// holds the database; under load only the status is checked).
    pub rows: Option<RowsRule>,
}

/// One check of a JSON body's value.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonRule {
    /// Where the value is.
    pub path: JsonPath,
    /// What it must be.
    pub is: JsonIs,
}

/// What a JSON value must be.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonIs {
    /// Equal to this (strings templated; a string that is one integer placeholder is a number).
    Equals(TemplatedJson),
    /// A number within `lo..=hi`.
    Within(f64, f64),
    /// An array or string whose length is within `lo..=hi`.
    Length(u64, u64),
}

/// A JSON value whose strings may hold placeholders.
#[derive(Debug, Clone, PartialEq)]
pub enum TemplatedJson {
    /// A string, rendered.
    Text(Template),
    /// Anything else, as is.
    Plain(serde_json::Value),
    /// An array of templated values.
    Array(Vec<TemplatedJson>),
    /// An object of templated values.
    Object(Vec<(String, TemplatedJson)>),
}

impl TemplatedJson {
    /// From a TOML value of the file.
    pub fn from_toml(v: &toml::Value) -> Result<TemplatedJson, String> {
        Ok(match v {
            toml::Value::String(s) => TemplatedJson::Text(Template::parse(s)?),
            toml::Value::Array(items) => TemplatedJson::Array(items.iter().map(TemplatedJson::from_toml).collect::<Result<_, _>>()?),
            toml::Value::Table(t) => {
                TemplatedJson::Object(t.iter().map(|(k, v)| Ok((k.clone(), TemplatedJson::from_toml(v)?))).collect::<Result<_, String>>()?)
            }
            toml::Value::Datetime(d) => TemplatedJson::Plain(serde_json::Value::String(d.to_string())),
            other => TemplatedJson::Plain(serde_json::to_value(other).map_err(|e| e.to_string())?),
        })
    }

    /// The value with every placeholder rendered; an integer variable alone in a string is a number.
    pub fn render(&self, values: &BTreeMap<String, Value>) -> serde_json::Value {
        match self {
            TemplatedJson::Text(t) => match t.sole_placeholder().and_then(|p| values.get(&p.var)) {
                Some(Value::Int(n)) => serde_json::Value::from(*n),
                _ => serde_json::Value::String(t.render(values)),
            },
            TemplatedJson::Plain(v) => v.clone(),
            TemplatedJson::Array(items) => items.iter().map(|i| i.render(values)).collect(),
            TemplatedJson::Object(fields) => fields.iter().map(|(k, v)| (k.clone(), v.render(values))).collect(),
        }
    }

    /// Whether a placeholder is in it.
    pub fn has_placeholders(&self) -> bool {
        match self {
            TemplatedJson::Text(t) => t.has_placeholders(),
            TemplatedJson::Plain(_) => false,
            TemplatedJson::Array(items) => items.iter().any(TemplatedJson::has_placeholders),
            TemplatedJson::Object(fields) => fields.iter().any(|(_, v)| v.has_placeholders()),
        }
    }

    /// The templates in it, for the file's check that every placeholder names a variable.
    pub fn templates(&self) -> Vec<&Template> {
        match self {
            TemplatedJson::Text(t) => vec![t],
            TemplatedJson::Plain(_) => vec![],
            TemplatedJson::Array(items) => items.iter().flat_map(TemplatedJson::templates).collect(),
            TemplatedJson::Object(fields) => fields.iter().flat_map(|(_, v)| v.templates()).collect(),
        }
    }
}

impl Expect {
    /// Whether any expectation depends on a drawn input: without one, a server that answers every
    /// request with one cached body passes every check.
    pub fn depends_on_input(&self) -> bool {
        let json = self.json.iter().any(|r| matches!(&r.is, JsonIs::Equals(v) if v.has_placeholders()));
        let texts = [&self.content_type, &self.body, &self.regex].into_iter().flatten().any(Template::has_placeholders);
        // The rows are read from the database, which writes and probes change under the server.
        let rows = self.rows.is_some();
        json || texts || rows || self.headers.iter().any(|(_, t)| t.has_placeholders())
    }

    /// Every template it holds.
    pub fn templates(&self) -> Vec<&Template> {
        let mut all: Vec<&Template> = [&self.content_type, &self.body, &self.regex].into_iter().flatten().collect();
        all.extend(self.headers.iter().map(|(_, t)| t));
        all.extend(self.rows.as_ref().map(|r| &r.sql));
        for r in &self.json {
            if let JsonIs::Equals(v) = &r.is {
                all.extend(v.templates());
            }
        }
        all
    }

    /// The expectations for one drawn request.
    pub fn render(&self, values: &BTreeMap<String, Value>) -> Expected {
        let render = |t: &Option<Template>| t.as_ref().map(|t| t.render(values));
        let json = self
            .json
            .iter()
            .map(|r| {
                let is = match &r.is {
                    JsonIs::Equals(v) => Rendered::Equals(v.render(values)),
                    JsonIs::Within(lo, hi) => Rendered::Within(*lo, *hi),
                    JsonIs::Length(lo, hi) => Rendered::Length(*lo, *hi),
                };
                (r.path.clone(), is)
            })
            .collect();
        Expected {
            status: self.status,
            content_type: render(&self.content_type),
            body: render(&self.body),
            json,
            regex: render(&self.regex),
            headers: self.headers.iter().map(|(n, t)| (n.clone(), t.render(values))).collect(),
            rows: self.rows.as_ref().map(|r| r.render(values)),
        }
    }
}

/// One drawn request's expectations, every value known.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// The status.
    pub status: u16,
    /// The media type.
    pub content_type: Option<String>,
    /// The exact body: under load, its hash is checked on every answer.
    pub body: Option<String>,
    /// JSON values, checked in verification.
    pub json: Vec<(JsonPath, Rendered)>,
    /// A regex the body must match.
    pub regex: Option<String>,
    /// Headers and their values.
    pub headers: Vec<(String, String)>,
    /// The query whose rows the body must be, checked by the lab against the server's database
    /// ([`ExpectedRows::check`]); [`Expected::check`] does not.
    pub rows: Option<ExpectedRows>,
}

/// A JSON rule with its value known.
#[derive(Debug, Clone, PartialEq)]
pub enum Rendered {
    /// Equal to this value (numbers compared as numbers).
    Equals(serde_json::Value),
    /// A number within the bounds.
    Within(f64, f64),
    /// A length within the bounds.
    Length(u64, u64),
}

/// An answer as a check sees it.
pub struct Answer<'a> {
    /// Its status.
    pub status: u16,
    /// Its headers (names in any case).
    pub headers: &'a [(String, String)],
    /// Its decoded body.
    pub body: &'a [u8],
}

impl Answer<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

impl Expected {
    /// Every way `answer` differs from what was expected (empty: it is right).
    pub fn check(&self, answer: &Answer<'_>) -> Vec<Mismatch> {
        let mut out = Vec::new();
        let mut miss = |what: &str, expected: String, got: String| out.push(Mismatch { what: what.into(), expected, got });
        if answer.status != self.status {
            miss("status", self.status.to_string(), answer.status.to_string());
        }
        if let Some(want) = &self.content_type {
            let got = answer.header("content-type").unwrap_or("");
            let media = |s: &str| s.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            if media(got) != media(want) {
                miss("content type", format!("`{want}`"), format!("`{got}`"));
            }
        }
        let text = String::from_utf8_lossy(answer.body);
        if let Some(want) = &self.body {
            if want.as_bytes() != answer.body {
                miss("body", quote(want), quote(&text));
            }
        }
        if let Some(re) = &self.regex {
            match regex::Regex::new(re) {
                Ok(r) if r.is_match(&text) => {}
                Ok(_) => miss("body", format!("to match /{re}/"), quote(&text)),
                Err(e) => miss("regex", format!("a valid regex (/{re}/)"), e.to_string()),
            }
        }
        for (name, want) in &self.headers {
            let got = answer.header(name);
            if got != Some(want.as_str()) {
                miss(&format!("header {name}"), format!("`{want}`"), got.map_or("no such header".into(), |g| format!("`{g}`")));
            }
        }
        if !self.json.is_empty() {
            match serde_json::from_slice::<serde_json::Value>(answer.body) {
                Ok(doc) => self.json.iter().for_each(|(path, rule)| json_mismatch(path, rule, &doc).into_iter().for_each(|m| out.push(m))),
                Err(e) => {
                    out.push(Mismatch { what: "json".into(), expected: "a JSON body".into(), got: format!("{e} in {}", quote(&text)) })
                }
            }
        }
        out
    }
}

fn json_mismatch(path: &JsonPath, rule: &Rendered, doc: &serde_json::Value) -> Option<Mismatch> {
    let what = format!("json {path}");
    let Some(got) = path.find(doc) else {
        return Some(Mismatch { what, expected: describe(rule), got: "nothing at that path".into() });
    };
    let ok = match rule {
        Rendered::Equals(want) => match (want.as_f64(), got.as_f64()) {
            (Some(a), Some(b)) => a == b,
            _ => want == got,
        },
        Rendered::Within(lo, hi) => got.as_f64().is_some_and(|v| *lo <= v && v <= *hi),
        Rendered::Length(lo, hi) => {
            let len = got.as_array().map(|a| a.len()).or(got.as_str().map(|s| s.chars().count()));
            len.is_some_and(|n| *lo <= n as u64 && n as u64 <= *hi)
        }
    };
    (!ok).then(|| Mismatch { what, expected: describe(rule), got: got.to_string() })
}

fn describe(rule: &Rendered) -> String {
    match rule {
        Rendered::Equals(v) => v.to_string(),
        Rendered::Within(lo, hi) => format!("a number within {lo}..={hi}"),
        Rendered::Length(lo, hi) => format!("a length within {lo}..={hi}"),
    }
}

/// A body for a message: quoted, cut at 200 characters.
fn quote(text: &str) -> String {
    let cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        format!("`{cut}…` ({} bytes)", text.len())
    } else {
        format!("`{cut}`")
    }
}
