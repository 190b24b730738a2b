//! The scenario file end to end: parsed, drawn into decks, checked against answers, and every
//! mistake a user can make named with its line.

use super::expect::Answer;
use super::Workload;
use std::path::{Path, PathBuf};

const SHOP: &str = r#"
name = "shop"
seed = 7
deck = 100

[vars]
id = { range = [1, 50] }
q = { choice = ["shoe", "hat"] }
token = { pattern = "[a-f0-9]{8}" }

[[requests]]
name = "item"
weight = 6
path = "/items/{{id}}"
expect = { status = 200, content_type = "application/json", json = [{ path = "$.id", equals = "{{id}}" }] }

[[requests]]
name = "search"
weight = 3
path = "/search?q={{q}}"
headers = { X-Token = "{{token}}" }
expect = { json = [{ path = "$.items", length = [0, 20] }], regex = "\"q\":\"{{q}}\"" }

[[requests]]
name = "cart"
weight = 1
method = "post"
path = "/cart"
json_body = { item = "{{id}}", qty = 1, note = "id {{id}}" }
expect = { status = 201, body = "added {{id}}" }
"#;

fn shop() -> Workload {
    Workload::parse(Path::new("shop.toml"), SHOP).unwrap()
}

#[test]
fn a_deck_holds_the_exact_mix_in_one_seeded_order() {
    let w = shop();
    let deck = w.deck(w.seed, w.deck_size).unwrap();
    let count = |k| deck.iter().filter(|d| d.kind == k).count();
    assert_eq!((count(0), count(1), count(2)), (60, 30, 10));
    assert_eq!(deck, w.deck(w.seed, w.deck_size).unwrap(), "one seed, one deck");
    assert_ne!(deck, w.deck(w.seed + 1, w.deck_size).unwrap());
    // Shuffled: the first ten are not all one kind.
    assert!(deck[..10].iter().any(|d| d.kind != deck[0].kind));
    assert_eq!(w.kind_counts(7), [4, 2, 1], "largest remainder: 4.2, 2.1, 0.7");
    assert!(w.warnings().is_empty(), "{:?}", w.warnings());
}

#[test]
fn a_drawn_request_uses_one_value_per_variable_everywhere() {
    let w = shop();
    let deck = w.deck(3, 200).unwrap();
    let cart = deck.iter().find(|d| d.kind == 2).unwrap();
    assert_eq!(cart.method, "POST");
    let body: serde_json::Value = serde_json::from_slice(cart.body.as_ref().unwrap()).unwrap();
    let id = body["item"].as_i64().expect("an integer placeholder alone is a number");
    assert!((1..=50).contains(&id));
    assert_eq!(body["note"], format!("id {id}"));
    assert_eq!(cart.expected.body.as_deref(), Some(format!("added {id}").as_str()));
    assert!(cart.headers.contains(&("Content-Type".into(), "application/json".into())));
    let item = deck.iter().find(|d| d.kind == 0).unwrap();
    let n: i64 = item.path.strip_prefix("/items/").unwrap().parse().unwrap();
    let right = format!("{{\"id\":{n},\"name\":\"x\"}}");
    let headers = [("Content-Type".to_string(), "application/json; charset=utf-8".to_string())];
    assert!(item.expected.check(&Answer { status: 200, headers: &headers, body: right.as_bytes() }).is_empty());
    // A cached item: another id's answer.
    let cached = format!("{{\"id\":{},\"name\":\"x\"}}", n % 50 + 1);
    let miss = item.expected.check(&Answer { status: 200, headers: &headers, body: cached.as_bytes() });
    assert_eq!(miss.len(), 1, "{miss:?}");
    assert_eq!(miss[0].to_string(), format!("json $.id: expected {n}, got {}", n % 50 + 1));
    let search = deck.iter().find(|d| d.kind == 1).unwrap();
    let token = &search.headers.iter().find(|(h, _)| h == "X-Token").unwrap().1;
    assert!(token.len() == 8 && token.chars().all(|c| c.is_ascii_hexdigit()), "{token}");
    let q = search.path.split('=').nth(1).unwrap();
    let ignored = r#"{"q":"sock","items":[]}"#;
    let miss = search.expected.check(&Answer { status: 200, headers: &[], body: ignored.as_bytes() });
    assert!(miss.len() == 1 && miss[0].what == "body" && miss[0].expected.contains(q), "{miss:?}");
}

#[test]
fn a_file_travels_over_http1_unless_it_names_its_protocol() {
    assert_eq!(shop().protocol, crate::protocol::WireProtocol::H1);
    let h2 = Workload::parse(Path::new("shop.toml"), &format!("protocol = \"h2\"\n{SHOP}")).unwrap();
    assert_eq!(h2.protocol, crate::protocol::WireProtocol::H2);
}

#[test]
fn mistakes_are_named_with_their_line_and_fix() {
    let cases = [
        ("[[requests]]\nname = \"a\"\npath = \"/{{nope}}\"\n", "t.toml:1", "`{{nope}}` names no variable"),
        ("[vars]\nid = { range = [5, 1] }\n[[requests]]\nname = \"a\"\npath = \"/\"\n", "t.toml:2", "runs backwards"),
        (
            "[vars]\nid = { range = [1, 2], choice = [\"a\"] }\n[[requests]]\nname = \"a\"\npath = \"/\"\n",
            "t.toml:2",
            "exactly one generator",
        ),
        ("[[requests]]\nname = \"a\"\npath = \"/\"\nweight = 0\n", "t.toml:1", "never sent"),
        ("[[requests]]\nname = \"a\"\npath = \"x\"\n", "t.toml:1", "must start with /"),
        ("\n\n[[requests]]\nname = \"a\"\npth = \"/\"\n", "t.toml:5", "unknown field `pth`"),
        ("[[requests]]\nname = \"a\"\npath = \"/\"\n[[requests]]\nname = \"a\"\npath = \"/b\"\n", "t.toml:4", "two requests are named `a`"),
        ("[[requests]]\nname = \"a\"\npath = \"/\"\nexpect = { json = [{ path = \"$.a[\", equals = 1 }] }\n", "t.toml:1", "not closed"),
        ("[[requests]]\nname = \"a\"\npath = \"/\"\nexpect = { regex = \"(\" }\n", "t.toml:1", "regex /(/"),
        ("[vars]\nu = { data = \"missing.csv\" }\n[[requests]]\nname = \"a\"\npath = \"/{{u.x}}\"\n", "t.toml:2", "missing.csv"),
        ("\nprotocol = \"h3\"\n[[requests]]\nname = \"a\"\npath = \"/\"\n", "t.toml:2", "expected one of h1, h1-tls, h2, h2c"),
    ];
    for (text, at, says) in cases {
        let e = Workload::parse(Path::new("t.toml"), text).unwrap_err();
        assert_eq!(e.what, at, "{text}: {e}");
        assert!(e.problem.contains(says), "{text}: {e}");
        assert!(!e.hint.is_empty(), "{text}");
    }
}

#[test]
fn a_file_whose_checks_ignore_the_inputs_is_told_it_cannot_catch_a_cache() {
    let text = "[vars]\nid = { range = [1, 9] }\nunused = { sequence = [1, 3] }\n[[requests]]\nname = \"a\"\npath = \"/items/{{id}}\"\nexpect = { status = 200 }\n";
    let w = Workload::parse(Path::new("t.toml"), text).unwrap();
    let warnings = w.warnings().join("\n");
    assert!(warnings.contains("cannot catch a cached answer"), "{warnings}");
    assert!(warnings.contains("var `unused` is declared but no request uses it"), "{warnings}");
}

#[test]
fn data_files_are_read_beside_the_scenario_and_unique_rows_run_out() {
    let dir = std::env::temp_dir().join(format!("bakeoff-workload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("users.csv"), "name,pass\nada,a1\nbob,b2\n").unwrap();
    let text = "deck = 2\n[vars]\nu = { data = \"users.csv\", pick = \"unique\" }\n[[requests]]\nname = \"login\"\nmethod = \"POST\"\npath = \"/login\"\nbody = \"{{u.name}}:{{u.pass}}\"\nexpect = { body = \"hi {{u.name}}\" }\n";
    let path: PathBuf = dir.join("s.toml");
    let w = Workload::parse(&path, text).unwrap();
    let deck = w.deck(1, 2).unwrap();
    let bodies: Vec<String> = deck.iter().map(|d| String::from_utf8(d.body.clone().unwrap()).unwrap()).collect();
    assert_eq!(bodies, ["ada:a1", "bob:b2"]);
    let e = w.deck(1, 3).unwrap_err();
    assert!(e.contains("its 2 rows are used up"), "{e}");
    let e = Workload::parse(&path, &text.replace("u.name}}:", "u.nam}}:")).unwrap_err();
    assert!(e.problem.contains("no column `nam` (it has name, pass)"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
