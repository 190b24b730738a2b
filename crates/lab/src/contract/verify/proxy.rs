//! Checks of a TCP proxy stack: bodies through the proxy equal nginx's own for several sizes, and the
//! proxy keeps serving after clients disconnect in the middle of a response.

use super::{fail, Checks, Client, Target};
use bakeoff_model::records::results::{CheckScope, Verdict};
use bakeoff_model::scenario::Scenario;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub(crate) const BODY_SIZES: [usize; 4] = [1, 10_240, 102_400, 1_048_576];

pub(super) fn check(checks: &mut Checks, target: &Target<'_>) {
    let Some(upstream) = target.upstream else {
        checks.add(CheckScope::Scenario(Scenario::Proxy), "proxy relays nginx", "/", fail("no upstream address given to the verifier"));
        return;
    };
    let mut via = Client::new(target.addr, Duration::from_secs(10));
    let mut direct = Client::new(upstream, Duration::from_secs(10));
    for size in BODY_SIZES {
        let path = format!("/bytes/{size}");
        let outcome = match (via.get(&path), direct.get(&path)) {
            (Ok(p), Ok(d)) if p.status == 200 && p.body == d.body && d.body.len() == size => Ok(()),
            (Ok(p), Ok(d)) => fail(format!(
                "through the proxy: status {} and {} bytes; direct: status {} and {} bytes",
                p.status,
                p.body.len(),
                d.status,
                d.body.len()
            )),
            (Err(e), _) => fail(format!("through the proxy: {e}")),
            (_, Err(e)) => fail(format!("nginx itself failed: {e}")),
        };
        checks.add(CheckScope::Scenario(Scenario::Proxy), "body through the proxy equals the direct one", &path, outcome);
    }
    let path = "/bytes/1048576";
    for _ in 0..20 {
        abandon_mid_response(target, path);
    }
    std::thread::sleep(Duration::from_millis(100));
    let mut after = Client::new(target.addr, Duration::from_secs(10));
    let outcome =
        after.get("/bytes/10240").map_err(|e| (Verdict::Fail, format!("after 20 clients left mid-response: {e}"))).and_then(|r| {
            if r.status == 200 && r.body.len() == 10_240 {
                Ok(())
            } else {
                fail(format!("after 20 clients left mid-response: status {}, {} bytes", r.status, r.body.len()))
            }
        });
    checks.add(CheckScope::Scenario(Scenario::Proxy), "survives clients that disconnect mid-response", path, outcome);
}

/// Sends a request for a large body, reads a little of it and closes the connection.
fn abandon_mid_response(target: &Target<'_>, path: &str) {
    let Ok(mut s) = TcpStream::connect_timeout(&target.addr, Duration::from_secs(2)) else { return };
    s.set_read_timeout(Some(Duration::from_secs(2))).ok();
    let _ = s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
    let mut buf = [0u8; 4096];
    let _ = s.read(&mut buf);
}
