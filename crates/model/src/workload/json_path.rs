//! The JSON paths of expectations: `$`, then `.key` and `[index]` steps (`$.items[0].id`). One
//! value per path, so an expectation says exactly what it compares.

use serde_json::Value;

/// A parsed path.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    text: String,
    steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

impl JsonPath {
    /// Parses `$.a.b[2]` (the leading `$` is optional); the error names the character at fault.
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let body = text.strip_prefix('$').unwrap_or(text);
        let chars: Vec<char> = body.chars().collect();
        let (mut steps, mut i) = (Vec::new(), 0);
        while i < chars.len() {
            match chars[i] {
                '.' => {
                    let end = chars[i + 1..].iter().position(|&c| c == '.' || c == '[').map_or(chars.len(), |p| p + i + 1);
                    let key: String = chars[i + 1..end].iter().collect();
                    if key.is_empty() {
                        return Err(format!("`{text}`: an empty key after `.` at {i}"));
                    }
                    steps.push(Step::Key(key));
                    i = end;
                }
                '[' => {
                    let end = chars[i..].iter().position(|&c| c == ']').ok_or_else(|| format!("`{text}`: `[` at {i} is not closed"))? + i;
                    let inner: String = chars[i + 1..end].iter().collect();
                    let index = inner.trim().parse().map_err(|_| format!("`{text}`: `[{inner}]` is not an array index"))?;
                    steps.push(Step::Index(index));
                    i = end + 1;
                }
                _ if i == 0 && !text.starts_with('$') => {
                    return JsonPath::parse(&format!("$.{body}")).map(|p| JsonPath { text: text.to_string(), ..p });
                }
                c => return Err(format!("`{text}`: `{c}` at {i}; write steps as .key or [index]")),
            }
        }
        Ok(JsonPath { text: text.to_string(), steps })
    }

    /// The same steps for the load generator, which reads a login's answer with them.
    pub fn load_steps(&self) -> Vec<bakeoff_load::JsonStep> {
        self.steps
            .iter()
            .map(|s| match s {
                Step::Key(k) => bakeoff_load::JsonStep::Key(k.clone()),
                Step::Index(i) => bakeoff_load::JsonStep::Index(*i),
            })
            .collect()
    }

    /// The value at the path in `root`, if there is one.
    pub fn find<'a>(&self, root: &'a Value) -> Option<&'a Value> {
        self.steps.iter().try_fold(root, |v, step| match step {
            Step::Key(k) => v.get(k),
            Step::Index(i) => v.get(*i),
        })
    }
}

impl std::fmt::Display for JsonPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::JsonPath;
    use serde_json::json;

    #[test]
    fn paths_find_keys_and_indices() {
        let doc = json!({"items": [{"id": 3}, {"id": 4}], "count": 2});
        assert_eq!(JsonPath::parse("$.items[1].id").unwrap().find(&doc), Some(&json!(4)));
        assert_eq!(JsonPath::parse("count").unwrap().find(&doc), Some(&json!(2)));
        assert_eq!(JsonPath::parse("$").unwrap().find(&doc), Some(&doc));
        assert_eq!(JsonPath::parse("$.items[5]").unwrap().find(&doc), None);
        for (bad, says) in [("$.a[x]", "not an array index"), ("$.a[1", "not closed"), ("$..a", "empty key"), ("$a", "`a`")] {
            let e = JsonPath::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
