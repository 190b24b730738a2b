//! The requests of a command line (`load URL…`, `bench --get PATH…`) written as a scenario file,
//! so an ad-hoc run can be rerun exactly and checked with `bakeoff scenario check`.

/// One request the command line named.
#[derive(Debug, Clone, PartialEq)]
pub struct QuickRequest {
    /// The method, e.g. `GET`.
    pub method: String,
    /// The path with its query, starting with `/`.
    pub path: String,
    /// Headers as `(name, value)`.
    pub headers: Vec<(String, String)>,
    /// A body sent as is.
    pub body: Option<String>,
}

/// The command line's requests and what every answer must be.
#[derive(Debug, Clone, PartialEq)]
pub struct QuickScenario {
    /// The scenario's name.
    pub name: String,
    /// The command that wrote it, named in the file's first line.
    pub written_by: String,
    /// The requests, one kind each, sent round-robin (weight 1 each).
    pub requests: Vec<QuickRequest>,
    /// The status every answer must have; None when the run took any 2xx or 3xx.
    pub expect_status: Option<u16>,
    /// The body every answer must have, when given.
    pub expect_body: Option<String>,
    /// A line on expectations the command line had that a file cannot say.
    pub unsaid: Option<String>,
}

impl QuickScenario {
    /// The scenario file's text.
    pub fn to_toml(&self) -> String {
        let mut out = format!(
            "# Written by `{}`; check it with `bakeoff scenario check FILE --url URL`.\nname = {}\n",
            self.written_by,
            quote(&self.name)
        );
        if let Some(line) = &self.unsaid {
            out += &format!("# {line}\n");
        }
        for (i, r) in self.requests.iter().enumerate() {
            out += &format!(
                "\n[[requests]]\nname = {}\nweight = 1\nmethod = {}\npath = {}\n",
                quote(&format!("request{}", i + 1)),
                quote(&r.method.to_ascii_uppercase()),
                quote(&r.path)
            );
            if !r.headers.is_empty() {
                let pairs: Vec<String> = r.headers.iter().map(|(n, v)| format!("{} = {}", quote(n), quote(v))).collect();
                out += &format!("headers = {{ {} }}\n", pairs.join(", "));
            }
            if let Some(b) = &r.body {
                out += &format!("body = {}\n", quote(b));
            }
            out += "[requests.expect]\n";
            out += &match self.expect_status {
                Some(s) => format!("status = {s}\n"),
                None => "status = 200  # the run took any 2xx or 3xx; a file names the one status expected\n".to_string(),
            };
            if let Some(b) = &self.expect_body {
                out += &format!("body = {}\n", quote(b));
            }
        }
        out
    }
}

/// A TOML basic string: JSON's escapes are TOML's.
fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Workload;
    use std::path::Path;

    fn quick() -> QuickScenario {
        QuickScenario {
            name: "items".into(),
            written_by: "bakeoff bench --get".into(),
            requests: vec![
                QuickRequest {
                    method: "get".into(),
                    path: "/items/1?x=\"q\"".into(),
                    headers: vec![("Accept".into(), "text/plain".into())],
                    body: None,
                },
                QuickRequest { method: "POST".into(), path: "/cart".into(), headers: vec![], body: Some("{\"item\": 1}".into()) },
            ],
            expect_status: Some(200),
            expect_body: Some("ok\n".into()),
            unsaid: None,
        }
    }

    #[test]
    fn the_written_file_reads_back_as_the_same_requests_and_expectations() {
        let text = quick().to_toml();
        let w = Workload::parse(Path::new("items.toml"), &text).unwrap();
        assert_eq!(w.name, "items");
        assert_eq!(w.requests.len(), 2);
        assert_eq!(w.requests[0].method, "GET");
        let deck = w.load_deck().unwrap();
        let first = deck.entries.iter().find(|e| e.kind == 0).unwrap();
        assert_eq!((first.method.as_str(), first.path.as_str()), ("GET", "/items/1?x=\"q\""));
        assert_eq!(first.headers, vec![("Accept".to_string(), "text/plain".to_string())]);
        let cart = deck.entries.iter().find(|e| e.kind == 1).unwrap();
        assert_eq!((cart.method.as_str(), cart.body.as_deref()), ("POST", Some(&b"{\"item\": 1}"[..])));
        assert_eq!(cart.checks.expect_status, Some(200));
        assert_eq!(cart.checks.expect_body_hash, Some(bakeoff_load::fnv1a64(b"ok\n")), "the expected body is checked under load");
    }

    #[test]
    fn without_a_status_the_file_says_why_it_names_200() {
        let mut q = quick();
        q.expect_status = None;
        q.unsaid = Some("--expect-length has no form here".into());
        let text = q.to_toml();
        assert!(text.contains("status = 200  # the run took any 2xx or 3xx"));
        assert!(text.contains("# --expect-length has no form here\n"));
        Workload::parse(Path::new("q.toml"), &text).unwrap();
    }
}
