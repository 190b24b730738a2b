//! A scenario file's `[login]`: parsed, drawn into a deck whose headers wait for the captured
//! value, the value captured from an answer, and each mistake named with its line.

use super::Workload;
use std::collections::BTreeMap;
use std::path::Path;

const SHOP: &str = r#"
seed = 3
deck = 10

[vars]
user = { choice = ["ada", "bob"] }
id = { range = [1, 50] }

[login]
path = "/login"
json_body = { user = "{{user}}" }
capture = { token = "$.token", n = "$.ids[1]" }
[login.expect]
status = 200

[[requests]]
name = "item"
path = "/items/{{id}}"
headers = { Authorization = "Bearer {{token}}", X-N = "{{n}}" }
expect = { json = [{ path = "$.id", equals = "{{id}}" }] }
"#;

#[test]
fn a_login_captures_values_that_requests_headers_use() {
    let w = Workload::parse(Path::new("shop.toml"), SHOP).unwrap();
    let login = w.login.as_ref().unwrap();
    assert_eq!((login.request.method.as_str(), login.request.expect.status), ("POST", 200), "a login posts by default");
    assert_eq!(login.request.line, "shop.toml:9");
    assert!(w.warnings().is_empty(), "{:?}", w.warnings());
    let item = &w.deck(w.seed, w.deck_size).unwrap()[0];
    assert!(item.headers.contains(&("Authorization".into(), "Bearer {{token}}".into())), "{:?}", item.headers);
    let captured = login.capture(br#"{"token":"t-9","ids":[4,5]}"#).unwrap();
    assert_eq!(captured, BTreeMap::from([("n".to_string(), "5".to_string()), ("token".to_string(), "t-9".to_string())]));
    let item = w.draw_with(0, &mut super::vars::Draws::new(1), &captured).unwrap();
    assert!(item.headers.contains(&("Authorization".into(), "Bearer t-9".into())));
    assert!(login.capture(br#"{"ids":[4,5]}"#).unwrap_err().contains("has no $.token"));
    let drawn = w.draw_login(&mut super::vars::Draws::new(1)).unwrap().unwrap();
    let body: serde_json::Value = serde_json::from_slice(drawn.body.as_ref().unwrap()).unwrap();
    assert!(["ada", "bob"].contains(&body["user"].as_str().unwrap()));

    let deck = w.load_deck().unwrap();
    let l = deck.login.unwrap();
    assert_eq!(l.requests.len(), super::login::LOGIN_DRAWS, "a login with variables is drawn several times");
    assert_eq!(l.captures.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["n", "token"]);
    let plain = SHOP.replace("{ user = \"{{user}}\" }", "{ user = \"ada\" }").replace("user = { choice = [\"ada\", \"bob\"] }\n", "");
    let deck = Workload::parse(Path::new("shop.toml"), &plain).unwrap().load_deck().unwrap();
    assert_eq!(deck.login.unwrap().requests.len(), 1, "a login without variables is drawn once");
}

#[test]
fn login_mistakes_are_named_with_their_line_and_fix() {
    let cases = [
        (SHOP.replace("capture = { token", "capture = { id"), "t.toml:9", "capture `id` has the name of a variable"),
        (
            SHOP.replace("path = \"/items/{{id}}\"", "path = \"/items/{{token}}\""),
            "t.toml:16",
            "captured by [login] and is used outside the headers",
        ),
        (SHOP.replace("equals = \"{{id}}\"", "equals = \"{{token}}\""), "t.toml:16", "used outside the headers"),
        (SHOP.replace("\"$.token\"", "\"$.token[\""), "t.toml:9", "capture `token`: `$.token[`"),
        (SHOP.replace("[login]", "[nologin]"), "t.toml:9", "unknown field `nologin`"),
        (SHOP.replace("capture = {", "captur = {"), "t.toml:12", "unknown field `captur`"),
        (
            SHOP.replace("json_body = { user = \"{{user}}\" }", "json_body = { user = \"{{who}}\" }"),
            "t.toml:9",
            "[login]: `{{who}}` names no variable",
        ),
        (
            SHOP.replace("path = \"/login\"", "path = \"/login\"\nweight = 2"),
            "t.toml:9",
            "[login]: `name` and `weight` are for [[requests]]",
        ),
        (SHOP.replace("name = \"item\"", "capture = { x = \"$.x\" }"), "t.toml:16", "[[requests]]: `capture` is the [login]'s"),
        (SHOP.replace("name = \"item\"\n", ""), "t.toml:16", "[[requests]]: a request without a `name`"),
    ];
    for (text, at, says) in cases {
        let e = Workload::parse(Path::new("t.toml"), &text).unwrap_err();
        assert_eq!(e.what, at, "{text}: {e}");
        assert!(e.problem.contains(says), "{text}: {e}");
        assert!(!e.hint.is_empty(), "{text}");
    }
    let no_login = "[[requests]]\nname = \"a\"\npath = \"/\"\nheaders = { Authorization = \"Bearer {{token}}\" }\n";
    let e = Workload::parse(Path::new("t.toml"), no_login).unwrap_err();
    assert!(e.problem.contains("no [login] to capture it") && e.hint.contains("capture = {"), "{e}");
    let unused = SHOP.replace(", X-N = \"{{n}}\"", "");
    let w = Workload::parse(Path::new("t.toml"), &unused).unwrap();
    assert_eq!(w.warnings(), ["[login] captures `n` but no request's headers use it"]);
}

#[test]
fn a_login_of_unique_users_is_drawn_once_per_row() {
    let dir = std::env::temp_dir().join(format!("bakeoff-login-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("users.csv"), "name\nada\nbob\n").unwrap();
    let text = SHOP
        .replace("user = { choice = [\"ada\", \"bob\"] }", "user = { data = \"users.csv\", pick = \"unique\" }")
        .replace("{{user}}", "{{user.name}}");
    let w = Workload::parse(&dir.join("s.toml"), &text).unwrap();
    let login = w.load_deck().unwrap().login.unwrap();
    let users: Vec<String> = login.requests.iter().map(|r| String::from_utf8(r.body.clone().unwrap()).unwrap()).collect();
    assert_eq!(users, [r#"{"user":"ada"}"#, r#"{"user":"bob"}"#]);
    std::fs::remove_dir_all(&dir).unwrap();
}
