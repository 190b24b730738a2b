//! A scenario file with its own database, measured as a user runs it: `bakeoff bench --cmd` of the
//! shopdb fixture (tests/fixtures/shopdb), whose database the lab makes afresh for every server
//! start; an honest server verified and measured with its work proven, a cached one refused by the
//! probe, one that caches only once warm caught after the load and not ranked, and a `rows`
//! difference named. Needs python3.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shopdb() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/shopdb").canonicalize().unwrap()
}

/// `bakeoff bench` of the fixture server in `mode` for `seconds` a trial, run from its folder.
fn bench(mode: &str, trials: &str, seconds: &str, db: &Path, starts: &Path) -> Output {
    let root = shopdb().join("../../..").canonicalize().unwrap();
    let db = db.display().to_string();
    let args = ["bench", "--db", &db, "--no-ceiling", "--workers", "1", "--cmd", "exec python3 server.py", "--scenario", "shop.toml"];
    let load = ["--trials", trials, "-d", seconds, "--warmup", "0s", "-c", "4"];
    Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(args)
        .args(load)
        .current_dir(shopdb())
        .env("BAKEOFF_ROOT", root)
        .env("SHOPDB_MODE", mode)
        .env("SHOPDB_STARTS", starts)
        .output()
        .expect("the bakeoff binary runs")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The JSON report of the newest run in `db`.
fn report(db: &Path) -> serde_json::Value {
    let db = db.display().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(["report", "--db", &db, "-f", "json"]).output().unwrap();
    serde_json::from_slice(&out.stdout).expect("the JSON report parses")
}

/// The kinds of the warnings of the report's one cell.
fn warning_kinds(json: &serde_json::Value) -> Vec<String> {
    let cell = &json["cells"][0];
    cell["warnings"].as_array().unwrap().iter().filter_map(|w| w["kind"].as_str().map(str::to_string)).collect()
}

/// The order counts the server noted at each start and stop.
fn noted(starts: &Path, when: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(starts).unwrap_or_default();
    text.lines().filter_map(|l| l.strip_prefix(&format!("orders at {when}: "))).map(|n| n.parse().unwrap()).collect()
}

#[test]
fn an_honest_shop_is_measured_with_its_database_made_afresh_for_every_start() {
    let dir = tempfile::tempdir().unwrap();
    let (db, starts) = (dir.path().join("r.db"), dir.path().join("starts.txt"));
    let out = bench("", "2", "1s", &db, &starts);
    assert!(out.status.success(), "{}", text(&out));
    let json = report(&db);
    let cell = &json["cells"][0];
    assert_eq!(cell["scenario"].as_str(), Some("file:shopdb"), "{cell}");
    assert!(cell["metrics"]["requests_per_sec"]["median"].as_f64().unwrap() > 0.0, "{cell}");
    let kinds = warning_kinds(&json);
    assert!(!kinds.iter().any(|k| k == "work_not_proven" || k == "stale_after_load"), "the probe proves the work: {kinds:?}");
    let file = &json["run"]["settings"]["load"]["scenario_files"][0];
    assert_eq!(file["database_hash"].as_str().map(str::len), Some(16), "{file}");
    // Verification's start and each trial's: every one began with the seed's empty orders, though
    // the orders the load posted were in the database when it stopped.
    let (at_start, at_stop) = (noted(&starts, "start"), noted(&starts, "stop"));
    assert!(at_start.len() >= 2 && at_start.len() == at_stop.len(), "{at_start:?} {at_stop:?}");
    assert!(at_start.iter().all(|&n| n == 0), "orders carried over from an earlier start: {at_start:?}");
    assert!(at_stop.iter().skip(1).all(|&n| n > 0), "the load posted orders: {at_stop:?}");
}

#[test]
fn a_cached_item_fails_the_probe_and_is_not_measured() {
    let dir = tempfile::tempdir().unwrap();
    let out = bench("cached", "1", "1s", &dir.path().join("r.db"), &dir.path().join("starts.txt"));
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("probe `item`: the answer shows a change made to the database"), "{t}");
    assert!(t.contains("the same request's answer does not show it") && t.contains("at $.name: expected \"changed "), "{t}");
    assert_eq!(noted(&dir.path().join("starts.txt"), "start").len(), 1, "only verification started it: {t}");
}

#[test]
fn a_cache_filled_under_load_is_caught_after_it_and_not_ranked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = bench("late-cache", "1", "2s", &db, &dir.path().join("starts.txt"));
    assert!(out.status.success(), "{}", text(&out));
    let kinds = warning_kinds(&report(&db));
    assert!(kinds.iter().any(|k| k == "stale_after_load"), "{kinds:?}\n{}", text(&out));
    assert!(text(&out).contains("not ranked"), "{}", text(&out));
}

#[test]
fn a_rows_mismatch_shows_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let out = bench("string-price", "1", "1s", &dir.path().join("r.db"), &dir.path().join("starts.txt"));
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    let line = t.lines().find(|l| l.contains("`item` answers as the file expects")).unwrap_or_else(|| panic!("{t}"));
    let id = line.rsplit("/items/").next().unwrap().trim();
    let want = format!("rows (SELECT id, name, price FROM items WHERE id = {id}) at $.price: expected {id}.5, got \"{id}.5\"");
    assert!(t.contains(&want), "{want}\n{t}");
}

/// The fixture's database made at `path` as a user would, with python3's sqlite3.
fn make_database(path: &Path) {
    let script = "import csv, sqlite3, sys\n\
        c = sqlite3.connect(sys.argv[1])\n\
        c.executescript(open('schema.sql').read() + open('seed.sql').read())\n\
        c.executemany('INSERT INTO tags VALUES (?, ?)', [(r['item_id'], r['tag']) for r in csv.DictReader(open('tags.csv'))])\n\
        c.commit()\n";
    let made = Command::new("python3").args(["-c", script]).arg(path).current_dir(shopdb()).status().unwrap();
    assert!(made.success());
}

#[test]
fn a_server_the_lab_did_not_start_is_verified_without_rows_or_probes_says_so_and_its_work_is_not_proven() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("own.sqlite");
    make_database(&database);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new("python3")
        .arg(shopdb().join("server.py"))
        .env("PORT", port.to_string())
        .env("DATABASE_URL", format!("sqlite://{}", database.display()))
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let file = shopdb().join("shop.toml");
    let url = format!("http://127.0.0.1:{port}");
    let out =
        Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(["scenario", "check", file.to_str().unwrap(), "--url", &url]).output().unwrap();
    let db = dir.path().join("r.db");
    let db_arg = db.display().to_string();
    let load = ["--trials", "1", "-d", "1s", "--warmup", "0s", "-c", "2", "--no-ceiling", "--db", &db_arg];
    let bench = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(["bench", "--url", &url, "--scenario", file.to_str().unwrap()])
        .args(load)
        .env("BAKEOFF_ROOT", shopdb().join("../../.."))
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let b = text(&bench);
    assert!(bench.status.success(), "{b}");
    assert!(b.contains("probe(s) did not run: the lab did not start this server with the file's database"), "{b}");
    assert!(warning_kinds(&report(&db)).iter().any(|k| k == "work_not_proven"), "no probe ran: the work is not proven\n{b}");
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    // 3 draws each of item, tags and count.
    assert!(t.contains("note: 9 answers' `rows` were not checked and 1 probe(s) did not run") && t.contains("verified: "), "{t}");
    assert!(t.contains("rows_one `SELECT id, name, price FROM items WHERE id = {{id}}`"), "the lint shows the rows: {t}");
}
