//! The checks of each scenario contract (docs/scenarios.md): status, Content-Type, framing, exact
//! bodies for randomized inputs, 404s and 400s, and live-data probes for the data scenarios.

use super::{fail, proxy, warn, Checks, Client, Framing, Response, Target};
use crate::contract::fixtures;
use bakeoff_model::records::results::{CheckScope, Verdict};
use bakeoff_model::scenario::Scenario;
use rand::Rng;

type Outcome = Result<(), (Verdict, String)>;

pub(super) fn check_common(checks: &mut Checks, client: &mut Client) {
    let path = "/no-such-route";
    let outcome = client.get(path).map_err(|e| (Verdict::Fail, e)).and_then(|r| status_is(&r, 404));
    checks.add(CheckScope::Stack, "unknown route answers 404", path, outcome);
}

pub(super) fn check(scenario: Scenario, checks: &mut Checks, client: &mut Client, target: &Target<'_>) {
    match scenario {
        Scenario::Hello => {
            let outcome = ok_text(client, "/", scenario).and_then(|r| body_is(&r, "Hello World!"));
            checks.add(CheckScope::Scenario(Scenario::Hello), "body is `Hello World!`", "/", outcome);
            let first_conn_kept = client.connected();
            let again = client.get("/").map_err(|e| (Verdict::Fail, e)).and_then(|r| status_is(&r, 200));
            let outcome = again.and_then(|_| if first_conn_kept {
                Ok(())
            } else {
                warn("the server closes the connection after every response (as gunicorn's sync workers do): each request pays for a new TCP connection, and is measured that way")
            });
            checks.add(CheckScope::Scenario(Scenario::Hello), "keep-alive: two requests on one connection", "/", outcome);
        }
        Scenario::Greeting => greeting(checks, client),
        Scenario::Msgpack => {
            let expected = fixtures::count_sum().to_string();
            let outcome = ok_text(client, "/msgpack", scenario).and_then(|r| body_is(&r, &expected));
            checks.add(CheckScope::Scenario(Scenario::Msgpack), "body is the sum of decoded `count` fields", "/msgpack", outcome);
        }
        Scenario::Json => json(checks, client),
        Scenario::Transfer => {
            let expected = fixtures::records_json(fixtures::RECORDS);
            let outcome = ok_text(client, "/transfer", scenario).and_then(|r| body_is(&r, &expected));
            checks.add(CheckScope::Scenario(Scenario::Transfer), "body equals records.json byte for byte", "/transfer", outcome);
        }
        Scenario::Loop => loop_(checks, client),
        Scenario::Products => products(checks, client, target),
        Scenario::Document => documents(checks, client, target),
        Scenario::Proxy => proxy::check(checks, target),
        Scenario::File(f) => super::workload::check(checks, target, f),
    }
}

fn greeting(checks: &mut Checks, client: &mut Client) {
    let mut rng = rand::thread_rng();
    for _ in 0..3 {
        let len = rng.gen_range(1..=12);
        let name: String = (0..len).map(|_| rng.gen_range(b'a'..=b'z') as char).collect();
        let path = format!("/greeting/{name}");
        let outcome = ok_text(client, &path, Scenario::Greeting).and_then(|r| body_is(&r, &format!("Hello, {name}")));
        checks.add(CheckScope::Scenario(Scenario::Greeting), "greets the name in the path", &path, outcome);
    }
    for path in ["/greeting/", "/greeting/Abc", "/greeting/a1", "/greeting/a/b"] {
        let outcome = client.get(path).map_err(|e| (Verdict::Fail, e)).and_then(|r| status_is(&r, 404));
        checks.add(CheckScope::Scenario(Scenario::Greeting), "a name outside [a-z]+ answers 404", path, outcome);
    }
}

fn json(checks: &mut Checks, client: &mut Client) {
    let mut rng = rand::thread_rng();
    let mut ks = vec![1, 1000, rng.gen_range(2..=999), rng.gen_range(2..=999)];
    ks.dedup();
    for k in ks {
        let path = format!("/json?n={k}");
        let expected = fixtures::records_json(k).len().to_string();
        let outcome = ok_text(client, &path, Scenario::Json).and_then(|r| body_is(&r, &expected));
        checks.add(CheckScope::Scenario(Scenario::Json), "length of the canonical JSON of the first K records", &path, outcome);
    }
    let expected = fixtures::records_json(fixtures::RECORDS).len().to_string();
    let outcome = ok_text(client, "/json", Scenario::Json).and_then(|r| body_is(&r, &expected));
    checks.add(CheckScope::Scenario(Scenario::Json), "K defaults to 1000", "/json", outcome);
    bad_parameter(checks, client, Scenario::Json, &["/json?n=0", "/json?n=1001", "/json?n=abc"]);
}

fn loop_(checks: &mut Checks, client: &mut Client) {
    let mut rng = rand::thread_rng();
    for n in [0, 10, rng.gen_range(11..100_000), rng.gen_range(100_000..2_000_000)] {
        let path = format!("/loop?n={n}");
        let expected = fixtures::loop_count(n).to_string();
        let outcome = ok_text(client, &path, Scenario::Loop).and_then(|r| body_is(&r, &expected));
        checks.add(CheckScope::Scenario(Scenario::Loop), "count of i in [0, N) with (3i+1) % 7 == 0", &path, outcome);
    }
    let outcome = ok_text(client, "/loop", Scenario::Loop).and_then(|r| body_is(&r, "142857"));
    checks.add(CheckScope::Scenario(Scenario::Loop), "N defaults to 1,000,000", "/loop", outcome);
    bad_parameter(checks, client, Scenario::Loop, &["/loop?n=-1", "/loop?n=10000001", "/loop?n=x"]);
}

fn bad_parameter(checks: &mut Checks, client: &mut Client, scenario: Scenario, paths: &[&str]) {
    for path in paths {
        let outcome = client.get(path).map_err(|e| (Verdict::Fail, e)).and_then(|r| match r.status {
            400 => Ok(()),
            500..=599 => fail(format!("answered {} (a server error) for an invalid parameter; answer 400", r.status)),
            s => warn(format!("answered {s} for an invalid parameter; the contract says 400")),
        });
        checks.add(CheckScope::Scenario(scenario), "an invalid parameter answers 400", path, outcome);
    }
}

fn products(checks: &mut Checks, client: &mut Client, target: &Target<'_>) {
    let expected = serde_json::to_value(fixtures::products()).expect("products serialize");
    let outcome = ok_json(client, "/products", &expected);
    checks.add(CheckScope::Scenario(Scenario::Products), "the 20 rows of table product, in id order", "/products", outcome);
    probe_products(checks, client, target);
}

/// The live-data probe of `products`: a changed row must show in the next answer.
pub(super) fn probe_products(checks: &mut Checks, client: &mut Client, target: &Target<'_>) {
    let expected = serde_json::to_value(fixtures::products()).expect("products serialize");
    let Some(db) = target.products else {
        let why = target.products_out_of_reach.as_deref().unwrap_or("no database handle");
        checks.add(CheckScope::Scenario(Scenario::Products), "live-data probe", "/products", warn(format!("{why}; probe skipped")));
        return;
    };
    let id = rand::thread_rng().gen_range(1..=fixtures::PRODUCTS);
    let marker = format!("probe {}", rand::thread_rng().gen_range(100_000..999_999));
    let outcome = db.set_text(id, "name", &marker).map_err(|e| (Verdict::Fail, format!("could not change row {id}: {e}"))).and_then(|()| {
        let mut changed = expected.clone();
        changed[(id - 1) as usize]["name"] = marker.clone().into();
        ok_json(client, "/products", &changed)
            .map_err(|(v, r)| (v, format!("after row {id}'s name was set to `{marker}` in the database: {r} (is the answer cached?)")))
    });
    let restored = db.set_text(id, "name", &format!("Product {id}"));
    checks.add(CheckScope::Scenario(Scenario::Products), "live-data probe: a changed row shows at once", "/products", outcome);
    if let Err(e) = restored {
        checks.add(CheckScope::Scenario(Scenario::Products), "live-data probe restores the row", "/products", fail(e));
    }
}

fn documents(checks: &mut Checks, client: &mut Client, target: &Target<'_>) {
    let mut rng = rand::thread_rng();
    for id in [0, 99, rng.gen_range(1..99)] {
        let path = format!("/documents/{id}");
        let outcome = ok_json(client, &path, &fixtures::document(id));
        checks.add(CheckScope::Scenario(Scenario::Document), "the document with that id, without _id", &path, outcome);
    }
    for path in ["/documents/100", "/documents/abc"] {
        let outcome = client.get(path).map_err(|e| (Verdict::Fail, e)).and_then(|r| status_is(&r, 404));
        checks.add(CheckScope::Scenario(Scenario::Document), "an unknown id answers 404", path, outcome);
    }
    probe_documents(checks, client, target, rng.gen_range(0..fixtures::DOCUMENTS));
}

/// The id of the document the load reads (`/documents/42`): the one a cache of the load's own
/// answer holds, so the probe after a measurement changes that one.
pub(super) fn load_document_id() -> i64 {
    let path = Scenario::Document.load_path();
    path.rsplit('/').next().and_then(|id| id.parse().ok()).expect("the document scenario's load path ends with an id")
}

/// The live-data probe of `document`: document `id`, changed, must show in the next answer.
/// Verification picks a random id; the probe after a measurement the load's own.
pub(super) fn probe_documents(checks: &mut Checks, client: &mut Client, target: &Target<'_>, id: i64) {
    let mut rng = rand::thread_rng();
    let Some(store) = target.documents else {
        checks.add(
            CheckScope::Scenario(Scenario::Document),
            "live-data probe",
            "/documents/7",
            warn("no document store handle; probe skipped"),
        );
        return;
    };
    let path = format!("/documents/{id}");
    let marker = format!("probe {}", rng.gen_range(100_000..999_999));
    let outcome =
        store.set_text(id, "title", &marker).map_err(|e| (Verdict::Fail, format!("could not change document {id}: {e}"))).and_then(|()| {
            let mut changed = fixtures::document(id);
            changed["title"] = marker.clone().into();
            ok_json(client, &path, &changed)
                .map_err(|(v, r)| (v, format!("after the title was set to `{marker}`: {r} (is the answer cached?)")))
        });
    let restored = store.set_text(id, "title", &format!("Document {id}"));
    checks.add(CheckScope::Scenario(Scenario::Document), "live-data probe: a changed document shows at once", &path, outcome);
    if let Err(e) = restored {
        checks.add(CheckScope::Scenario(Scenario::Document), "live-data probe restores the document", &path, fail(e));
    }
}

/// GETs `path` and checks 200, the scenario's Content-Type and a length or chunked framing.
fn ok_text(client: &mut Client, path: &str, scenario: Scenario) -> Result<Response, (Verdict, String)> {
    let r = client.get(path).map_err(|e| (Verdict::Fail, e))?;
    status_is(&r, 200)?;
    let ct = r.header("content-type").unwrap_or("");
    let media = ct.split(';').next().unwrap_or("").trim();
    if !media.eq_ignore_ascii_case(scenario.content_type()) {
        return fail(format!("Content-Type is `{ct}`; the contract says `{}`", scenario.content_type()));
    }
    if r.framing == Framing::UntilClose {
        return fail("no Content-Length and not chunked: the body ends at connection close, so keep-alive is impossible");
    }
    Ok(r)
}

fn ok_json(client: &mut Client, path: &str, expected: &serde_json::Value) -> Outcome {
    let r = ok_text(client, path, Scenario::Products)?;
    let got: serde_json::Value = serde_json::from_slice(&r.body).map_err(|e| (Verdict::Fail, format!("body is not JSON: {e}")))?;
    if json_equal(&got, expected) {
        Ok(())
    } else {
        fail(format!("JSON differs: got {}, expected {}", clip(&got.to_string()), clip(&expected.to_string())))
    }
}

/// Equality of parsed JSON with numbers compared as float64 (so `3` equals `3.0`, key order free).
fn json_equal(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value::*;
    match (a, b) {
        (Number(x), Number(y)) => x.as_f64() == y.as_f64(),
        (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q)),
        (Object(x), Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).map(|w| json_equal(v, w)).unwrap_or(false)),
        _ => a == b,
    }
}

fn status_is(r: &Response, want: u16) -> Outcome {
    if r.status == want {
        Ok(())
    } else {
        fail(format!("status {}, expected {want}; body starts `{}`", r.status, clip(&r.text())))
    }
}

fn body_is(r: &Response, expected: &str) -> Outcome {
    if r.body == expected.as_bytes() {
        Ok(())
    } else if r.body.len() != expected.len() && expected.len() > 80 {
        fail(format!("body is {} bytes, expected {} bytes; starts `{}`", r.body.len(), expected.len(), clip(&r.text())))
    } else {
        fail(format!("body `{}`, expected `{}`", clip(&r.text()), clip(expected)))
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() <= 120 {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(120).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::json_equal;
    use serde_json::json;

    #[test]
    fn json_equality_ignores_key_order_and_int_float_spelling() {
        assert!(json_equal(&json!({"a": 1, "b": [2.5]}), &json!({"b": [2.5], "a": 1.0})));
        assert!(!json_equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!json_equal(&json!([1, 2]), &json!([2, 1])));
    }
}
