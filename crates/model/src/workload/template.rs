//! Templates: a request's path, headers, body and expectations with `{{var}}` or `{{var.column}}`
//! placeholders, parsed once when the file is read and rendered per drawn request.

use std::collections::BTreeMap;

/// Text with placeholders.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Var(Placeholder),
}

/// One `{{var}}` or `{{var.column}}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Placeholder {
    /// The variable's name.
    pub var: String,
    /// A column of a data variable's row.
    pub column: Option<String>,
}

/// A drawn value: what a placeholder renders to.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// From a range or a sequence; a JSON body writes it as a number.
    Int(i64),
    /// From a choice or a pattern.
    Text(String),
    /// A data file's row, by column.
    Row(BTreeMap<String, String>),
}

impl Template {
    /// Parses `text`; an unclosed or empty placeholder is an error.
    pub fn parse(text: &str) -> Result<Template, String> {
        let (mut parts, mut rest) = (Vec::new(), text);
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                parts.push(Part::Text(rest[..open].to_string()));
            }
            let after = &rest[open + 2..];
            let close = after.find("}}").ok_or_else(|| format!("`{{{{` without `}}}}` in `{text}`"))?;
            let name = after[..close].trim();
            let (var, column) = match name.split_once('.') {
                Some((v, c)) => (v.trim(), Some(c.trim().to_string())),
                None => (name, None),
            };
            if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("`{{{{{name}}}}}` in `{text}` is not a variable name (letters, digits, _)"));
            }
            parts.push(Part::Var(Placeholder { var: var.to_string(), column }));
            rest = &after[close + 2..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_string()));
        }
        Ok(Template { parts })
    }

    /// The placeholders it uses, in order.
    pub fn placeholders(&self) -> impl Iterator<Item = &Placeholder> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v),
            Part::Text(_) => None,
        })
    }

    /// Whether it depends on a drawn value.
    pub fn has_placeholders(&self) -> bool {
        self.placeholders().next().is_some()
    }

    /// The placeholder it is made of alone, if that is all it is (`"{{id}}"`): a JSON body writes
    /// an integer variable there as a number.
    pub fn sole_placeholder(&self) -> Option<&Placeholder> {
        match self.parts.as_slice() {
            [Part::Var(v)] => Some(v),
            _ => None,
        }
    }

    /// The text with every placeholder replaced by its value in `values` (which the file's checks
    /// guarantee holds every variable and column a template names).
    pub fn render(&self, values: &BTreeMap<String, Value>) -> String {
        self.render_each(|p| p.render(values))
    }

    /// The text with every placeholder replaced by what `fill` makes of it (SQL writes values as
    /// literals, not as bare text).
    pub fn render_each(&self, mut fill: impl FnMut(&Placeholder) -> String) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Var(p) => out.push_str(&fill(p)),
            }
        }
        out
    }
}

impl std::fmt::Display for Template {
    /// As the file wrote it, placeholders normalized to `{{var}}` / `{{var.column}}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for part in &self.parts {
            match part {
                Part::Text(t) => f.write_str(t)?,
                Part::Var(Placeholder { var, column: Some(c) }) => write!(f, "{{{{{var}.{c}}}}}")?,
                Part::Var(Placeholder { var, column: None }) => write!(f, "{{{{{var}}}}}")?,
            }
        }
        Ok(())
    }
}

impl Placeholder {
    /// Its value in `values` as text.
    pub fn render(&self, values: &BTreeMap<String, Value>) -> String {
        match (values.get(&self.var), &self.column) {
            (Some(Value::Int(n)), _) => n.to_string(),
            (Some(Value::Text(t)), _) => t.clone(),
            (Some(Value::Row(row)), Some(c)) => row.get(c).cloned().unwrap_or_default(),
            (Some(Value::Row(_)), None) | (None, _) => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_render_values_and_columns() {
        let t = Template::parse("/items/{{id}}?user={{ user.name }}&x=1").unwrap();
        let names: Vec<_> = t.placeholders().map(|p| (p.var.as_str(), p.column.clone())).collect();
        assert_eq!(names, [("id", None), ("user", Some("name".to_string()))]);
        let row = BTreeMap::from([("name".to_string(), "ada".to_string())]);
        let values = BTreeMap::from([("id".to_string(), Value::Int(17)), ("user".to_string(), Value::Row(row))]);
        assert_eq!(t.render(&values), "/items/17?user=ada&x=1");
        assert_eq!(t.to_string(), "/items/{{id}}?user={{user.name}}&x=1");
        assert!(!Template::parse("/plain").unwrap().has_placeholders());
        assert_eq!(Template::parse("{{id}}").unwrap().sole_placeholder().map(|p| p.var.as_str()), Some("id"));
    }

    #[test]
    fn broken_placeholders_are_named() {
        assert!(Template::parse("/x/{{id").unwrap_err().contains("without"));
        assert!(Template::parse("/x/{{}}").unwrap_err().contains("not a variable name"));
        assert!(Template::parse("/x/{{a b}}").unwrap_err().contains("not a variable name"));
    }
}
