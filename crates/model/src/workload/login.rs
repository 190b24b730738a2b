//! The login a scenario file may run once per connection (`[login]`): its request, and the values
//! captured from its JSON answer that later requests' headers use as `{{name}}`.

use super::json_path::JsonPath;
use super::RequestSpec;
use std::collections::{BTreeMap, BTreeSet};

/// Login draws a deck holds when the login uses variables: connections take them in turn, so
/// several users log in without a draw per connection at run time.
pub const LOGIN_DRAWS: usize = 64;

/// A checked `[login]`.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginSpec {
    /// The request, named `login`; its expectations are the login's.
    pub request: RequestSpec,
    /// The values taken from its answer, in file order.
    pub captures: Vec<Capture>,
}

/// One captured value: `name = "$.path"`.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// The name requests' headers use as `{{name}}`.
    pub name: String,
    /// Where the value is in the login's JSON answer.
    pub path: JsonPath,
}

impl LoginSpec {
    /// The names it captures.
    pub fn names(&self) -> BTreeSet<&str> {
        self.captures.iter().map(|c| c.name.as_str()).collect()
    }

    /// The captured values in a login answer's `body`, as text; an error says which is missing
    /// or unusable in a header.
    pub fn capture(&self, body: &[u8]) -> Result<BTreeMap<String, String>, String> {
        let doc: serde_json::Value =
            serde_json::from_slice(body).map_err(|e| format!("the login's answer is not JSON ({e}), so nothing can be captured"))?;
        let mut out = BTreeMap::new();
        for c in &self.captures {
            let text = match c.path.find(&doc) {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(v @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => v.to_string(),
                Some(_) => return Err(format!("capture `{}`: {} is not a string or a number", c.name, c.path)),
                None => return Err(format!("capture `{}`: the login's answer has no {}", c.name, c.path)),
            };
            if text.bytes().any(|b| b == b'\r' || b == b'\n') {
                return Err(format!("capture `{}`: {} holds a line break, which no header may", c.name, c.path));
            }
            out.insert(c.name.clone(), text);
        }
        Ok(out)
    }

    /// The JSON path of each capture, for the load generator.
    pub fn load_captures(&self) -> Vec<bakeoff_load::Capture> {
        self.captures.iter().map(|c| bakeoff_load::Capture { name: c.name.clone(), path: c.path.load_steps() }).collect()
    }
}
