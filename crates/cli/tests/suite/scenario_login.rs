//! `bakeoff load --scenario` with a file that logs in: verified (the login first, its token in the
//! requests' headers), then one login per connection and no error under load; a server that
//! refuses the login is not measured. Needs python3 (the shop fixture server).

use crate::common;

use common::{root, Fixture};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Output};

fn login_file() -> PathBuf {
    root().join("tests/fixtures/shop/login.toml")
}

fn bakeoff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(args).output().unwrap()
}

/// Logins the shop issued, from its `GET /logins`.
fn logins(shop: &Fixture) -> u64 {
    let mut c = TcpStream::connect(("127.0.0.1", shop.port)).unwrap();
    c.write_all(b"GET /logins HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    c.read_to_string(&mut answer).unwrap();
    let body = answer.split("\r\n\r\n").nth(1).unwrap();
    serde_json::from_str::<serde_json::Value>(body).unwrap()["logins"].as_u64().unwrap()
}

#[test]
fn a_file_with_a_login_is_verified_and_each_connection_logs_in_once() {
    let shop = Fixture::shop("");
    let file = login_file();
    let out = bakeoff(&["load", "--scenario", file.to_str().unwrap(), "-n", "1000", "-c", "4", "--json", &shop.url()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("shop-login: verified"), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let step = &report["steps"][0];
    assert_eq!(step["requests"], 1000, "{step}");
    assert_eq!(step["errors"]["login"], 0);
    assert!(step["errors"]["status"].as_object().unwrap().is_empty(), "{}", step["errors"]);
    assert_eq!((step["logins"]["sent"].as_u64(), step["logins"]["failed"].as_u64()), (Some(4), Some(0)), "{step}");
    // Verification logs in before the load and again after it, on connections of its own.
    assert!(logins(&shop) >= 4 + 2, "{} logins", logins(&shop));
}

#[test]
fn reconnects_log_in_again_and_the_summary_says_so() {
    let shop = Fixture::shop("");
    let file = login_file();
    let out = bakeoff(&["load", "--scenario", file.to_str().unwrap(), "-n", "200", "-c", "2", "--requests-per-conn", "50", &shop.url()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("  Errors ("), "{text}");
    let line = text.lines().find(|l| l.starts_with("Logins")).unwrap_or_else(|| panic!("no logins line in {text}"));
    let sent: u64 = line.split(": ").nth(1).and_then(|s| s.split(' ').next()).unwrap().parse().unwrap();
    assert!((4..=6).contains(&sent), "200 requests, 50 per connection: 4 logins, and up to one per connection as the run ends: {line}");
}

#[test]
fn a_server_that_refuses_the_login_is_not_measured() {
    let shop = Fixture::shop("deny-login");
    let out = bakeoff(&["load", "--scenario", login_file().to_str().unwrap(), "-n", "100", &shop.url()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("fail login: POST /login"), "{err}");
    assert!(err.contains("expected 200") && err.contains("403"), "{err}");
    assert!(out.stdout.is_empty(), "nothing measured: {}", String::from_utf8_lossy(&out.stdout));
}
