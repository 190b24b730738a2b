//! Protocols against real servers: go/nethttp's h1-tls, h2 and h2c variants verify over their own
//! protocol, with what they negotiated proved (TLS 1.3, the lab's one cipher suite, ALPN, HTTP/2
//! streams at once) and measured over it; a server that speaks another protocol than its variant
//! claims (the tls-stack fixture: HTTP/1.1 over TLS only) is refused with what it said, and
//! stopped.

use crate::common;

use bakeoff_model::records::results::{MemorySink, Verdict, VerifyReport};
use bakeoff_model::scenario::Scenario;

fn reason_of<'a>(report: &'a VerifyReport, what: &str) -> &'a str {
    report.checks.iter().find(|c| c.what.contains(what)).map_or("", |c| c.reason.as_str())
}

#[test]
fn go_nethttp_proves_each_protocol_it_claims_and_is_measured_over_it() {
    let root = common::project_root();
    let stack = bakeoff_lab::stacks::catalog::load_dir(&root.join("stacks/go/nethttp")).unwrap();
    let scratch = common::Scratch::new("protocols-go");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    for (name, negotiated) in [("h1-tls", Some("ALPN http/1.1")), ("h2", Some("ALPN h2")), ("h2c", None)] {
        let variant = stack.variants.iter().find(|v| v.name == name).unwrap();
        let report = lab.bench.verify_variant(&stack, variant, &[Scenario::Hello, Scenario::Json], 1);
        let dump = serde_json::to_string_pretty(&report).unwrap();
        assert_eq!(report.verdict(), Verdict::Pass, "{name}:\n{dump}");
        if let Some(alpn) = negotiated {
            let tls = reason_of(&report, "TLS 1.3");
            assert!(tls.contains("TLS13_AES_128_GCM_SHA256") && tls.contains(alpn), "{name}: {tls}");
        }
        if name != "h1-tls" {
            assert!(reason_of(&report, "streams answered at once").starts_with("8 of 8 streams"), "{name}:\n{dump}");
        }
        // Every check's URL is in the protocol's scheme: the contracts were checked over it.
        let scheme = if name == "h2c" { "http://" } else { "https://" };
        assert!(report.checks.iter().filter(|c| !c.url.is_empty()).all(|c| c.url.starts_with(scheme)), "{name}:\n{dump}");
    }
    // Measured over HTTP/2 inside TLS 1.3 with the lab's cipher, every answer right.
    let cell = common::cell(&stack, "h2", Scenario::Hello);
    let trial = lab.bench.measure(&cell, 1).expect("the h2 cell is measured");
    let step = &trial.load.steps[0];
    assert!(step.requests > 1000 && step.errors.total() == 0, "{} requests, {:?}", step.requests, step.errors);
    let tls = step.tls.as_ref().expect("a TLS report");
    assert_eq!((tls.alpn.as_deref(), tls.cipher.as_deref()), (Some("h2"), Some("TLS13_AES_128_GCM_SHA256")));
    assert_eq!(step.h2.as_ref().map(|h| h.streams_asked), Some(1), "one stream per connection, as HTTP/1.1's one request");
}

#[test]
fn a_server_that_speaks_another_protocol_than_its_variant_is_refused_with_what_it_said() {
    let stack = common::fixture_stack("tls-stack");
    let scratch = common::Scratch::new("protocols-refused");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    let variant = |name: &str| stack.variants.iter().find(|v| v.name == name).unwrap().clone();
    // HTTP/1.1 over TLS is what it speaks: that passes, with the run's certificate and cipher.
    let ok = lab.bench.verify_variant(&stack, &variant("h1-tls"), &[Scenario::Hello], 1);
    assert_eq!(ok.verdict(), Verdict::Pass, "{}", serde_json::to_string_pretty(&ok).unwrap());
    let certificate = scratch.dir.join("tls/cert.pem");
    assert!(std::fs::read_to_string(&certificate).is_ok_and(|c| c.contains("BEGIN CERTIFICATE")), "the run made its certificate");
    // A server that ignores PROTOCOL and answers in cleartext where TLS was asked.
    let report = lab.bench.verify_variant(&stack, &variant("cleartext"), &[Scenario::Hello], 1);
    let reason = reason_of(&report, "starts and listens");
    assert!(reason.contains("the server answered in cleartext; it does not speak TLS on this port"), "cleartext: {reason}");
    // A certificate that is not the run's: refused at the handshake, with rustls's reason.
    let report = lab.bench.verify_variant(&stack, &variant("wrong-cert"), &[Scenario::Hello], 1);
    let reason = reason_of(&report, "starts and listens");
    assert!(reason.contains("TLS handshake") && reason.contains("certificate"), "wrong-cert: {reason}");
    for name in ["h2", "h2c"] {
        let report = lab.bench.verify_variant(&stack, &variant(name), &[Scenario::Hello], 1);
        let reason = reason_of(&report, "starts and listens");
        assert_eq!(report.verdict(), Verdict::Fail, "{name}: {reason}");
        assert!(reason.contains(&format!("no {name} (GET /) answer")) && reason.contains("PROTOCOL"), "{name}: {reason}");
        assert!(reason.contains("does not speak HTTP/2 on this port") || reason.contains("closed"), "{name}: {reason}");
    }
}
