//! `bakeoff scenario check`: the example shop file linted and sampled, a real server verified
//! against it, and servers that cache an item or ignore the search parameter refused with the
//! difference shown. Needs python3 (the shop fixture server).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shop_file() -> PathBuf {
    root().join("scenarios/shop.toml")
}

fn bakeoff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(args).output().unwrap()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The shop fixture on a free loopback port, stopped by its PID when dropped.
struct Shop {
    child: Child,
    url: String,
}

impl Shop {
    fn start(cheat: &str) -> Shop {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("python3")
            .arg(root().join("tests/fixtures/shop/server.py"))
            .env("PORT", port.to_string())
            .env("SHOP_CHEAT", cheat)
            .spawn()
            .expect("python3 runs");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the shop did not listen within 10 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        Shop { child, url: format!("http://127.0.0.1:{port}") }
    }
}

impl Drop for Shop {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_shop_file_is_linted_with_its_mix_and_a_sample_of_its_deck() {
    let out = bakeoff(&["scenario", "check", shop_file().to_str().unwrap()]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.starts_with("shop: 3 request kinds, a deck of 1000 drawn from seed 1"), "{t}");
    for line in ["item     60.0%  GET /items/{{id}}", "search   30.0%  GET /search?q={{word}}", "cart     10.0%  POST /cart"] {
        assert!(t.contains(line), "{line}\n{t}");
    }
    let sample: Vec<&str> = t.lines().skip_while(|l| !l.starts_with("the deck's first 10")).skip(1).take(10).collect();
    assert_eq!(sample.len(), 10, "{t}");
    assert!(sample.iter().all(|l| l.contains(" GET /items/") || l.contains(" GET /search?q=") || l.contains(" POST /cart")), "{t}");
    assert!(!t.contains("warning:"), "{t}");
    // Twice the same: the deck is drawn from the file's seed.
    assert_eq!(t, text(&bakeoff(&["scenario", "check", shop_file().to_str().unwrap()])));
}

#[test]
fn an_honest_shop_is_verified_and_a_cached_item_or_an_ignored_search_is_not() {
    let honest = Shop::start("");
    let out = bakeoff(&["scenario", "check", shop_file().to_str().unwrap(), "--url", &honest.url]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("verified: 10 requests answered as expected"), "{t}");
    drop(honest);
    for (cheat, kind, what) in [("cached-item", "item", "json $.id"), ("ignore-search", "search", "json $.q")] {
        let shop = Shop::start(cheat);
        let out = bakeoff(&["scenario", "check", shop_file().to_str().unwrap(), "--url", &shop.url]);
        let t = text(&out);
        assert!(!out.status.success(), "{cheat}: {t}");
        assert!(t.contains(&format!("fail {kind}: GET /")), "{cheat}: {t}");
        assert!(t.contains(&format!("    {what}\n      expected ")), "{cheat}: {t}");
        assert!(t.contains("nothing would be measured"), "{cheat}: {t}");
        assert!(!t.contains("fail cart"), "{cheat}: the other kinds pass: {t}");
    }
}

#[test]
fn a_broken_file_is_refused_with_its_line_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[vars]\nid = { range = [1, 9] }\n\n[[requests]]\nname = \"item\"\npath = \"/items/{{idd}}\"\n").unwrap();
    let out = bakeoff(&["scenario", "check", file.to_str().unwrap()]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains(&format!("{}:4: request `item`: `{{{{idd}}}}` names no variable", file.display())), "{t}");
    assert!(t.contains("hint: declare it under [vars]"), "{t}");
}
