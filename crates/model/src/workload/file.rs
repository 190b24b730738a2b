//! A scenario file as TOML: the raw shape serde reads, turned into a checked [`Workload`] whose
//! every error names the file, the line and the fix.

use super::cost::{self, CostPair, RawCost};
use super::database::Database;
use super::database::RawDatabase;
use super::expect::{Expect, JsonIs, JsonRule, TemplatedJson};
use super::json_path::JsonPath;
use super::login::{Capture, LoginSpec};
use super::pattern::Pattern;
use super::probe::{ProbeSpec, RawProbe};
use super::rows::RowsRule;
use super::statements::{RawStatements, StatementsSpec};
use super::template::Template;
use super::vars::{DataFile, Generator, Pick};
use super::{Body, RequestSpec, Workload};
use crate::protocol::WireProtocol;
use crate::InputError;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use toml::Spanned;

/// Requests a deck holds unless the file says: a few passes of any mix within a kilobyte or so of
/// bytes each, small against the load generator's caches.
const DEFAULT_DECK: usize = 1000;
/// The most a deck may hold (each request's bytes are built once and kept).
const MAX_DECK: usize = 1_000_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    name: Option<String>,
    #[serde(default)]
    description: String,
    seed: Option<u64>,
    deck: Option<usize>,
    #[serde(default)]
    vars: BTreeMap<String, Spanned<RawVar>>,
    requests: Vec<Spanned<RawRequest>>,
    login: Option<Spanned<RawRequest>>,
    #[serde(default)]
    cost: Vec<Spanned<RawCost>>,
    database: Option<Spanned<RawDatabase>>,
    #[serde(default)]
    probes: Vec<Spanned<RawProbe>>,
    #[serde(default)]
    statements: Vec<Spanned<RawStatements>>,
    protocol: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVar {
    range: Option<[i64; 2]>,
    choice: Option<Vec<String>>,
    sequence: Option<[i64; 2]>,
    pattern: Option<String>,
    data: Option<String>,
    pick: Option<String>,
}

/// A `[[requests]]` entry or the `[login]`: one shape, so the two cannot drift apart; a request
/// has a name and a weight, the login has captures ([`Role`] checks which fields a role takes).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequest {
    name: Option<String>,
    weight: Option<u32>,
    method: Option<String>,
    path: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<String>,
    json_body: Option<toml::Value>,
    capture: Option<BTreeMap<String, String>>,
    #[serde(default)]
    expect: RawExpect,
}

/// What a [`RawRequest`] is in the file: one of the `[[requests]]` or the `[login]`.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    Request,
    Login,
}

impl RawRequest {
    /// Its name, weight and method, each defaulted for its role (a request is a GET of weight 1,
    /// the login a POST); a field its role does not take is an error naming it.
    fn resolved(&self, role: Role) -> Result<(String, u32, String), Problem> {
        match role {
            Role::Request => {
                if self.capture.is_some() {
                    return Err(("`capture` is the [login]'s".into(), "capture values in [login] and use them as {{name}} here"));
                }
                let name = self.name.clone().ok_or(("a request without a `name`".to_string(), "add e.g. name = \"item\""))?;
                Ok((name, self.weight.unwrap_or(1), self.method.clone().unwrap_or_else(|| "GET".into())))
            }
            Role::Login => {
                if self.name.is_some() || self.weight.is_some() {
                    return Err((
                        "`name` and `weight` are for [[requests]]".into(),
                        "remove them from [login]: it runs once per connection",
                    ));
                }
                Ok(("login".into(), 1, self.method.clone().unwrap_or_else(|| "POST".into())))
            }
        }
    }
}

#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    status: Option<u16>,
    content_type: Option<String>,
    body: Option<String>,
    regex: Option<String>,
    #[serde(default)]
    json: Vec<RawJson>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    rows: Option<String>,
    rows_one: Option<String>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawJson {
    path: String,
    equals: Option<toml::Value>,
    within: Option<[f64; 2]>,
    length: Option<[u64; 2]>,
}

/// Where a problem is: the file and the line of the byte offset `at`.
fn located(path: &Path, text: &str, at: usize, problem: String, hint: &str) -> InputError {
    let line = text[..at.min(text.len())].matches('\n').count() + 1;
    InputError { what: format!("{}:{line}", path.display()), problem, hint: hint.into() }
}

/// Reads and checks the scenario file at `path`.
pub(super) fn load(path: &Path) -> Result<Workload, InputError> {
    let whole = |problem: String, hint: &str| InputError { what: path.display().to_string(), problem, hint: hint.into() };
    let text = std::fs::read_to_string(path).map_err(|e| whole(format!("cannot read: {e}"), "give the path of a scenario file (TOML)"))?;
    parse(path, &text)
}

/// Checks `text`, the contents of the scenario file at `path` (data files are read relative to it).
pub(super) fn parse(path: &Path, text: &str) -> Result<Workload, InputError> {
    let example = "see docs/scenarios.md, \"Scenario files\", for a complete example";
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        located(path, text, at, e.message().trim().to_string(), example)
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut vars = BTreeMap::new();
    for (name, v) in &raw.vars {
        let g =
            generator(base, name, v.get_ref()).map_err(|(p, h)| located(path, text, v.span().start, format!("var `{name}`: {p}"), h))?;
        vars.insert(name.clone(), g);
    }
    if raw.requests.is_empty() {
        return Err(located(path, text, 0, "no [[requests]]".into(), example));
    }
    let login = match &raw.login {
        Some(l) => {
            let at = l.span().start;
            let spec = login(l.get_ref(), &vars).map_err(|(p, h)| located(path, text, at, format!("[login]: {p}"), h))?;
            Some(LoginSpec { request: RequestSpec { line: located(path, text, at, String::new(), "").what, ..spec.request }, ..spec })
        }
        None => None,
    };
    let captured: BTreeSet<String> = login.iter().flat_map(|l| l.names()).map(str::to_string).collect();
    let mut requests = Vec::new();
    for r in &raw.requests {
        let at = r.span().start;
        let named = |p: String| match &r.get_ref().name {
            Some(name) => format!("request `{name}`: {p}"),
            None => format!("[[requests]]: {p}"),
        };
        let spec = request(r.get_ref(), Role::Request, &vars, &captured).map_err(|(p, h)| located(path, text, at, named(p), h))?;
        if requests.iter().any(|s: &RequestSpec| s.name == spec.name) {
            return Err(located(path, text, at, format!("two requests are named `{}`", spec.name), "give each request its own name"));
        }
        requests.push(RequestSpec { line: located(path, text, at, String::new(), "").what, ..spec });
    }
    let names: Vec<&str> = requests.iter().map(|r| r.name.as_str()).collect();
    let mut costs = Vec::new();
    for c in &raw.cost {
        let at = c.span().start;
        let pair = cost::pair(c.get_ref(), &names).map_err(|(p, h)| located(path, text, at, format!("[[cost]]: {p}"), &h))?;
        costs.push(CostPair { line: located(path, text, at, String::new(), "").what, ..pair });
    }
    let (database, probes) = database_and_probes(path, text, &raw, &requests, login.as_ref())?;
    let mut statements = Vec::new();
    for c in &raw.statements {
        let at = c.span().start;
        let count = c
            .get_ref()
            .check(&requests, database.is_some())
            .map_err(|(e, h)| located(path, text, at, format!("[[statements]]: {e}"), h))?;
        statements.push(StatementsSpec { line: located(path, text, at, String::new(), "").what, ..count });
    }
    let deck = raw.deck.unwrap_or(DEFAULT_DECK);
    if deck == 0 || deck > MAX_DECK {
        return Err(located(path, text, 0, format!("`deck = {deck}` must be 1 to {MAX_DECK}"), "leave it out for 1000"));
    }
    let protocol = match &raw.protocol {
        None => WireProtocol::H1,
        Some(p) => p.get_ref().parse().map_err(|e: String| located(path, text, p.span().start, e, "use h1, h1-tls, h2 or h2c"))?,
    };
    let name = raw.name.unwrap_or_else(|| path.file_stem().map_or("scenario".into(), |s| s.to_string_lossy().into_owned()));
    Ok(Workload {
        name,
        description: raw.description,
        text: text.to_string(),
        seed: raw.seed.unwrap_or(1),
        deck_size: deck,
        vars,
        requests,
        login,
        costs,
        database,
        probes,
        statements,
        protocol,
    })
}

/// The `[database]` (its files read) and the `[[probes]]`; a `rows` expectation needs the one, a
/// probe both.
fn database_and_probes(
    path: &Path,
    text: &str,
    raw: &RawFile,
    requests: &[RequestSpec],
    login: Option<&LoginSpec>,
) -> Result<(Option<Database>, Vec<ProbeSpec>), InputError> {
    let base = path.parent().unwrap_or(Path::new("."));
    let database = match &raw.database {
        Some(d) => Some(d.get_ref().check(base).map_err(|(p, h)| located(path, text, d.span().start, format!("[database]: {p}"), h))?),
        None => None,
    };
    if let Some(l) = login.filter(|l| l.request.expect.rows.is_some()) {
        return Err(InputError {
            what: l.request.line.clone(),
            problem: "[login]: `rows` is not checked on a login".into(),
            hint: "hold the login to its status and json; put `rows` on a request".into(),
        });
    }
    if let (None, Some(r)) = (&database, requests.iter().find(|r| r.expect.rows.is_some())) {
        return Err(InputError {
            what: r.line.clone(),
            problem: format!("request `{}`: `rows` queries the file's database and the file has no [database]", r.name),
            hint: "add [database] with schema = \"schema.sql\" and seed = \"seed.sql\"".into(),
        });
    }
    let mut probes = Vec::new();
    for p in &raw.probes {
        let at = p.span().start;
        let probe =
            p.get_ref().check(requests, database.is_some()).map_err(|(e, h)| located(path, text, at, format!("[[probes]]: {e}"), h))?;
        probes.push(ProbeSpec { line: located(path, text, at, String::new(), "").what, ..probe });
    }
    Ok((database, probes))
}

type Problem = (String, &'static str);

fn generator(base: &Path, name: &str, v: &RawVar) -> Result<Generator, Problem> {
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(("a name of letters, digits and _ only".into(), "rename it, e.g. item_id"));
    }
    let kinds = [v.range.is_some(), v.choice.is_some(), v.sequence.is_some(), v.pattern.is_some(), v.data.is_some()];
    let hint =
        "give exactly one of range = [1, 100], choice = [\"a\", \"b\"], sequence = [1, 100], pattern = \"[a-z]{8}\", data = \"file.csv\"";
    if kinds.iter().filter(|&&k| k).count() != 1 {
        return Err(("needs exactly one generator".into(), hint));
    }
    if v.pick.is_some() && v.data.is_none() {
        return Err(("`pick` is for data files".into(), "remove `pick`, or use `data = \"file.csv\"`"));
    }
    let ordered =
        |[lo, hi]: [i64; 2]| if lo <= hi { Ok((lo, hi)) } else { Err((format!("[{lo}, {hi}] runs backwards"), "write [low, high]")) };
    Ok(match v {
        RawVar { range: Some(r), .. } => ordered(*r).map(|(lo, hi)| Generator::Range(lo, hi))?,
        RawVar { sequence: Some(r), .. } => ordered(*r).map(|(lo, hi)| Generator::Sequence(lo, hi))?,
        RawVar { choice: Some(c), .. } if c.is_empty() => return Err(("`choice` is empty".into(), "list at least one value")),
        RawVar { choice: Some(c), .. } => Generator::Choice(c.clone()),
        RawVar { pattern: Some(p), .. } => Generator::Pattern(Pattern::parse(p).map_err(|e| (format!("pattern: {e}"), hint))?),
        RawVar { data: Some(file), pick, .. } => {
            let pick: Pick = pick.as_deref().unwrap_or("cycle").parse().map_err(|e| (e, "pick = \"cycle\", \"random\" or \"unique\""))?;
            Generator::Data(
                DataFile::read(base, file, pick)
                    .map_err(|e| (e, "a CSV file whose first line names the columns, beside the scenario file"))?,
            )
        }
        _ => unreachable!("exactly one generator was checked above"),
    })
}

/// The `[login]`: a request like the others (its captured names not yet usable in it), and what it
/// captures, each name new and each path valid.
fn login(l: &RawRequest, vars: &BTreeMap<String, Generator>) -> Result<LoginSpec, Problem> {
    let request = request(l, Role::Login, vars, &BTreeSet::new())?;
    let mut captures = Vec::new();
    for (name, at) in l.capture.iter().flatten() {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err((format!("capture `{name}`: a name of letters, digits and _ only"), "rename it, e.g. token"));
        }
        if vars.contains_key(name) {
            return Err((
                format!("capture `{name}` has the name of a variable"),
                "rename the capture or the variable: `{{name}}` must say which it means",
            ));
        }
        let path = JsonPath::parse(at)
            .map_err(|p| (format!("capture `{name}`: {p}"), "write a JSON path into the login's answer, e.g. $.token"))?;
        captures.push(Capture { name: name.clone(), path });
    }
    Ok(LoginSpec { request, captures })
}

/// A `[[requests]]` entry or the login (`role`); `captured` are the names the login captures,
/// usable in headers only.
fn request(r: &RawRequest, role: Role, vars: &BTreeMap<String, Generator>, captured: &BTreeSet<String>) -> Result<RequestSpec, Problem> {
    let bad_template = |e: String| (e, "placeholders are {{var}} or {{var.column}}");
    let (name, weight, method) = r.resolved(role)?;
    if weight == 0 {
        return Err(("`weight = 0`: a request that is never sent".into(), "give it a weight of 1 or more, or remove it"));
    }
    if method.is_empty() || !method.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err((format!("method `{method}` is not an HTTP method"), "write e.g. GET, POST, PUT, DELETE"));
    }
    if !r.path.starts_with('/') {
        return Err((
            format!("path `{}` must start with /", r.path),
            "write the path only, e.g. /items/{{id}}; the server's address comes from the run",
        ));
    }
    let body = match (&r.body, &r.json_body) {
        (Some(_), Some(_)) => return Err(("both `body` and `json_body`".into(), "keep one")),
        (Some(b), None) => Some(Body::Text(Template::parse(b).map_err(bad_template)?)),
        (None, Some(j)) => Some(Body::Json(TemplatedJson::from_toml(j).map_err(bad_template)?)),
        (None, None) => None,
    };
    let headers =
        r.headers.iter().map(|(k, v)| Ok((k.clone(), Template::parse(v).map_err(bad_template)?))).collect::<Result<_, Problem>>()?;
    let spec = RequestSpec {
        name,
        weight,
        method: method.to_ascii_uppercase(),
        path: Template::parse(&r.path).map_err(bad_template)?,
        headers,
        body,
        expect: expect(&r.expect).map_err(|(p, h)| (format!("expect: {p}"), h))?,
        line: String::new(),
    };
    check_captured(&spec, captured)?;
    for p in spec.templates().into_iter().flat_map(Template::placeholders) {
        if captured.contains(&p.var) {
            continue;
        }
        let Some(g) = vars.get(&p.var) else {
            let also = if captured.is_empty() { " (and there is no [login] to capture it)" } else { "" };
            return Err((
                format!("`{{{{{}}}}}` names no variable{also}", p.var),
                "declare it under [vars], e.g. id = { range = [1, 100] }, or capture it from a [login]: capture = { token = \"$.token\" }",
            ));
        };
        match (g.columns(), &p.column) {
            (Some(cols), Some(c)) if !cols.contains(c) => {
                return Err((
                    format!("`{}` has no column `{c}` (it has {})", p.var, cols.join(", ")),
                    "name a column of the data file's header line",
                ))
            }
            (Some(_), None) => return Err((format!("`{{{{{}}}}}` is a data row", p.var), "name a column: {{var.column}}")),
            (None, Some(c)) => return Err((format!("`{}` is not a data file, so `.{c}` names nothing", p.var), "write {{var}}")),
            _ => {}
        }
    }
    Ok(spec)
}

/// A captured value is one per connection, spliced into headers only: the path, body and
/// expectations are fixed before the run.
fn check_captured(spec: &RequestSpec, captured: &BTreeSet<String>) -> Result<(), Problem> {
    let headers: Vec<_> = spec.headers.iter().map(|(_, t)| t).collect();
    for t in spec.templates().into_iter().filter(|t| !headers.iter().any(|h| std::ptr::eq(*h, *t))) {
        if let Some(p) = t.placeholders().find(|p| captured.contains(&p.var)) {
            return Err((
                format!("`{{{{{}}}}}` is captured by [login] and is used outside the headers", p.var),
                "use a captured value in headers only, e.g. headers = { Authorization = \"Bearer {{token}}\" }",
            ));
        }
    }
    if let Some(p) = headers.iter().flat_map(|t| t.placeholders()).find(|p| captured.contains(&p.var) && p.column.is_some()) {
        return Err((
            format!("`{}` is a captured value, so `.{}` names nothing", p.var, p.column.as_deref().unwrap_or("")),
            "write {{token}}",
        ));
    }
    Ok(())
}

fn expect(e: &RawExpect) -> Result<Expect, Problem> {
    let t =
        |s: &Option<String>| s.as_deref().map(Template::parse).transpose().map_err(|e| (e, "placeholders are {{var}} or {{var.column}}"));
    if let Some(re) = &e.regex {
        // A regex with placeholders is compiled once rendered; its shape is checked with them blanked.
        let blank = Template::parse(re).map(|t| t.render(&BTreeMap::new())).unwrap_or_default();
        regex::Regex::new(&blank).map_err(|err| (format!("regex /{re}/: {err}"), "write a regex the `regex` crate accepts"))?;
    }
    let mut json = Vec::new();
    for j in &e.json {
        let path = JsonPath::parse(&j.path).map_err(|p| (p, "write e.g. $.items[0].id"))?;
        let is = match (&j.equals, j.within, j.length) {
            (Some(v), None, None) => JsonIs::Equals(TemplatedJson::from_toml(v).map_err(|p| (p, "placeholders are {{var}}"))?),
            (None, Some([lo, hi]), None) if lo <= hi => JsonIs::Within(lo, hi),
            (None, None, Some([lo, hi])) if lo <= hi => JsonIs::Length(lo, hi),
            _ => {
                return Err((
                    format!("json `{}` needs exactly one of equals, within = [lo, hi], length = [lo, hi]", j.path),
                    "e.g. { path = \"$.id\", equals = \"{{id}}\" }",
                ))
            }
        };
        json.push(JsonRule { path, is });
    }
    let headers = e
        .headers
        .iter()
        .map(|(k, v)| Ok((k.clone(), Template::parse(v).map_err(|e| (e, "placeholders are {{var}}"))?)))
        .collect::<Result<_, Problem>>()?;
    let rows = match (&e.rows, &e.rows_one) {
        (Some(_), Some(_)) => {
            return Err(("both `rows` and `rows_one`".into(), "keep `rows` for an array of rows, `rows_one` for one object"))
        }
        (Some(sql), None) => Some(RowsRule { sql: Template::parse(sql).map_err(|e| (e, "placeholders are {{var}}"))?, one: false }),
        (None, Some(sql)) => Some(RowsRule { sql: Template::parse(sql).map_err(|e| (e, "placeholders are {{var}}"))?, one: true }),
        (None, None) => None,
    };
    Ok(Expect {
        status: e.status.unwrap_or(200),
        content_type: t(&e.content_type)?,
        body: t(&e.body)?,
        json,
        regex: t(&e.regex)?,
        headers,
        rows,
    })
}
