//! `bakeoff scenario check`: the memory shop fixture file (tests/fixtures/shop) linted and sampled, a real server verified
//! against it, and servers that cache an item or ignore the search parameter refused with the
//! difference shown. Needs python3 (the shop fixture server).

use crate::common;

use common::{root, Fixture};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shop_file() -> PathBuf {
    root().join("tests/fixtures/shop/shop.toml")
}

fn bakeoff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(args).output().unwrap()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
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
    assert!(t.contains("work not proven: no cost pair or live-data probe"), "the shop proves no work: {t}");
    let work = root().join("tests/fixtures/shopcost/work.toml");
    let cost = bakeoff(&["scenario", "check", work.to_str().unwrap()]);
    let cost = text(&cost);
    assert!(cost.contains("login per connection: POST /login") && cost.contains("cost pair: work must cost at least 1.5x"), "{cost}");
    assert!(!cost.contains("work not proven"), "{cost}");
    // Twice the same: the deck is drawn from the file's seed.
    assert_eq!(t, text(&bakeoff(&["scenario", "check", shop_file().to_str().unwrap()])));
}

#[test]
fn an_honest_shop_is_verified_and_a_cached_item_or_an_ignored_search_is_not() {
    let honest = Fixture::shop("");
    let out = bakeoff(&["scenario", "check", shop_file().to_str().unwrap(), "--url", &honest.url()]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("verified: 10 requests answered as expected"), "{t}");
    drop(honest);
    for (cheat, kind, what) in [("cached-item", "item", "json $.id"), ("ignore-search", "search", "json $.q")] {
        let shop = Fixture::shop(cheat);
        // A kind's draws differ where its variables allow: never three searches for the one word
        // the cheat answers right.
        let out = bakeoff(&["scenario", "check", shop_file().to_str().unwrap(), "--url", &shop.url()]);
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

/// `bakeoff load --scenario` on the honest shop: verified, then two whole passes of the deck, so
/// each kind's count is its weight's share exactly, every answer checked, no mix warning. The
/// cached-item shop is refused before any load.
#[test]
fn load_sends_the_files_deck_with_results_per_kind_after_verifying() {
    let shop = Fixture::shop("");
    let file = shop_file();
    let out = bakeoff(&["load", "--scenario", file.to_str().unwrap(), "-n", "2000", "-c", "4", "--json", &shop.url()]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("shop: verified; its deck of 1000 requests is the load"), "{t}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the JSON report");
    let step = &report["steps"][0];
    let kinds: Vec<(String, u64, u64)> = step["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap().to_string(),
                k["requests"].as_u64().unwrap(),
                k["errors"]["status"].as_object().map_or(0, |m| m.len() as u64),
            )
        })
        .collect();
    assert_eq!(kinds, [("item".into(), 1200, 0), ("search".into(), 600, 0), ("cart".into(), 200, 0)], "{t}");
    assert!(report["warnings"].as_array().unwrap().iter().all(|w| w["kind"] != "mix_drift"), "{t}");
    drop(shop);
    let cached = Fixture::shop("cached-item");
    let out = bakeoff(&["load", "--scenario", file.to_str().unwrap(), "-n", "100", &cached.url()]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("fail item: GET /items/") && t.contains("nothing would be measured"), "{t}");
    assert!(!t.contains("Requests/sec"), "nothing was measured: {t}");
}

/// An ad-hoc run's requests saved as a file, which lints (with the warning that it cannot catch a
/// cache), verifies against the server and runs again as a scenario.
#[test]
fn an_ad_hoc_run_saved_as_a_scenario_runs_again_from_the_file() {
    let shop = Fixture::shop("");
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("mine.toml");
    let (item, search) = (format!("{}/items/3", shop.url()), format!("{}/search?q=red", shop.url()));
    let out =
        bakeoff(&["load", "-n", "40", "-c", "2", "--expect-status", "200", "--save-scenario", saved.to_str().unwrap(), &item, &search]);
    assert!(out.status.success(), "{}", text(&out));
    let out = bakeoff(&["scenario", "check", saved.to_str().unwrap(), "--url", &shop.url()]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.starts_with("mine: 2 request kinds") && t.contains("request1  GET /items/3") && t.contains("request2  GET /search?q=red"),
        "{t}"
    );
    assert!(t.contains("this scenario cannot catch a cached answer"), "{t}");
    let out = bakeoff(&["load", "--scenario", saved.to_str().unwrap(), "-n", "1000", "-c", "2", "--json", &shop.url()]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    let counts: Vec<u64> = report["steps"][0]["kinds"].as_array().unwrap().iter().map(|k| k["requests"].as_u64().unwrap()).collect();
    assert_eq!(counts, [500, 500]);
}

/// A shop that answers items right for 300 requests, then from a cache: verification before the
/// load passes (it sends 3 items), the load's status checks pass, and verification again after
/// the load fails with the difference, exit 1, after the numbers were printed.
#[test]
fn answers_that_go_wrong_under_load_fail_the_check_after_it() {
    let shop = Fixture::shop("late-cache");
    let out = bakeoff(&["load", "--scenario", shop_file().to_str().unwrap(), "-n", "2000", "-c", "2", &shop.url()]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("shop: verified; its deck of 1000 requests is the load"), "{t}");
    assert!(t.contains("Requests/sec:"), "the numbers are printed: {t}");
    assert!(t.contains("after the load, fail item: GET /items/"), "{t}");
    assert!(t.contains("the answers went wrong under load"), "{t}");
}

/// The stored trial kept its request kinds: the report's cell has each kind, in the file's order,
/// with the share the file's weights ask for beside the share sent, and the text report's request
/// kinds table has a row for each.
fn request_kinds_are_reported(cell: &serde_json::Value, db: &Path, bench_output: &str) {
    let kinds = cell["kinds"].as_array().unwrap_or_else(|| panic!("kinds of {cell}\n{bench_output}"));
    let asked: Vec<(&str, f64)> = kinds.iter().map(|k| (k["name"].as_str().unwrap(), k["asked_percent"].as_f64().unwrap())).collect();
    assert_eq!(asked, [("item", 60.0), ("search", 30.0), ("cart", 10.0)]);
    for k in kinds {
        assert!(k["requests"].as_f64().unwrap() > 0.0 && k["errors"] == 0.0, "{k}");
        let (share, asked) = (k["share_percent"].as_f64().unwrap(), k["asked_percent"].as_f64().unwrap());
        assert!((share - asked).abs() < 5.0, "a whole-deck load keeps the mix: {k}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(["report", "-f", "text", "--db"]).arg(db).output().unwrap();
    let report = text(&out);
    let section = report.split_once("== request kinds ==").unwrap_or_else(|| panic!("no request kinds section:\n{report}")).1;
    for kind in ["item", "search", "cart"] {
        assert!(section.lines().any(|l| l.contains(" file:shop ") && l.contains(&format!(" {kind} "))), "{kind}:\n{report}");
    }
}

/// `bench --scenario FILE` on a running shop: the file's workload is the cell `file:shop`,
/// verified per request kind, measured with the lab's trials, CPU and memory, and the file's text
/// and hash are stored with the run. A cached item fails verification and nothing is measured; a
/// cache that starts after 300 items fails the check after the load and the cell is not ranked.
#[test]
fn bench_measures_a_scenario_file_as_a_cell_with_the_lab_s_rigour() {
    let dir = tempfile::tempdir().unwrap();
    let run = |shop: &Fixture, db: &str| {
        let pid = shop.pid().to_string();
        let db = dir.path().join(db);
        let args = [
            "bench",
            "--url",
            &shop.url(),
            "--pid",
            &pid,
            "--scenario",
            "tests/fixtures/shop/shop.toml",
            "--trials",
            "1",
            "-d",
            "1s",
            "--warmup",
            "300ms",
            "-c",
            "4",
        ];
        let out = Command::new(env!("CARGO_BIN_EXE_bakeoff")).current_dir(root()).args(args).arg("--db").arg(&db).output().unwrap();
        let report = Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(["report", "-f", "json", "--db"]).arg(&db).output().unwrap();
        (text(&out), serde_json::from_slice::<serde_json::Value>(&report.stdout).ok())
    };
    let honest = Fixture::shop("");
    let (t, report) = run(&honest, "honest.db");
    let report = report.unwrap_or_else(|| panic!("{t}"));
    let cell = &report["cells"][0];
    assert_eq!(cell["scenario"], "file:shop", "{t}");
    assert_eq!(cell["unrankable"].as_array().map(Vec::len), Some(0), "{t}");
    assert!(cell["metrics"].to_string().contains("cpu_us_per_req"), "CPU per request is measured: {t}");
    let stored = &report["run"]["settings"]["load"]["scenario_files"][0];
    assert_eq!(stored["text"].as_str(), Some(std::fs::read_to_string(shop_file()).unwrap().as_str()));
    assert_eq!(stored["text_hash"].as_str().map(str::len), Some(16));
    let checks = report["verifications"].to_string();
    for kind in ["`item` answers as the file expects", "`search` answers as the file expects", "`cart` answers as the file expects"] {
        assert!(checks.contains(kind), "{kind}: {checks}");
    }
    request_kinds_are_reported(cell, &dir.path().join("honest.db"), &t);
    drop(honest);
    let cached = Fixture::shop("cached-item");
    let (t, report) = run(&cached, "cached.db");
    assert!(t.contains("`item` answers as the file expects") && t.contains("json $.id: expected"), "{t}");
    assert!(report.is_none_or(|r| r["cells"].as_array().is_none_or(Vec::is_empty)), "nothing measured: {t}");
    drop(cached);
    let late = Fixture::shop("late-cache");
    let (t, report) = run(&late, "late.db");
    let report = report.unwrap_or_else(|| panic!("{t}"));
    let unrankable = report["cells"][0]["unrankable"].to_string();
    assert!(unrankable.contains("stale") || unrankable.contains("json $.id"), "{unrankable}\n{t}");
}
