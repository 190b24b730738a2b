//! A study that names a scenario file (studies/shop.toml): planned by `bakeoff studies`, refused
//! when no selected stack declares its file, and run on two of its stacks (Go and Python, on SQLite
//! and PostgreSQL, one short trial each), the file verified on its own database and measured as
//! `file:shop`; a run stored with the one `scenario_file` of older runs still reads back. Needs go,
//! python3 and PostgreSQL.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bakeoff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bakeoff")).current_dir(root()).args(args).output().unwrap()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn the_shop_study_is_planned_with_a_cell_per_stack() {
    let out = bakeoff(&["studies"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    let line = t.lines().find(|l| l.starts_with("shop ")).unwrap_or_else(|| panic!("no shop study: {t}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(fields[1..3], ["8", "3"], "4 stacks on SQLite and PostgreSQL x 3 trials: {line}");
}

#[test]
fn a_study_file_no_selected_stack_declares_is_refused_before_anything_starts() {
    let out = bakeoff(&["run", "--study", "studies/shop.toml", "--stacks", "go/fasthttp", "--db", "/nonexistent/never.db"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("studies/shop.toml: `scenario_files`") && t.contains("no selected stack declares `file:shop`"), "{t}");
    assert!(t.contains("hint: select a stack whose stack.toml lists \"file:shop\""), "{t}");
}

#[test]
fn the_shop_study_runs_on_two_stacks_and_an_older_stored_run_still_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    let db_arg = db.to_str().unwrap();
    let stacks = "go/nethttp,python/wsgi-gunicorn-sync";
    let args = ["run", "--study", "studies/shop.toml", "--stacks", stacks, "--trials", "1", "-d", "1s", "--warmup", "300ms", "-c", "4"];
    let run =
        Command::new(env!("CARGO_BIN_EXE_bakeoff")).current_dir(root()).args(args).args(["--quiet", "--db", db_arg]).output().unwrap();
    let t = text(&run);
    assert!(run.status.success(), "{t}");
    let report = |what: &str| {
        let out = bakeoff(&["report", "-f", "json", "--db", db_arg]);
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap_or_else(|e| panic!("{what}: {e}: {}", text(&out)))
    };
    let json = report("the run");
    let mut cells: Vec<String> = json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{} [{}] {}", c["stack"].as_str().unwrap(), c["variant"].as_str().unwrap(), c["scenario"].as_str().unwrap()))
        .collect();
    cells.sort();
    let mut want: Vec<String> = stacks.split(',').flat_map(|s| ["postgres", "sqlite"].map(|v| format!("{s} [{v}] file:shop"))).collect();
    want.sort();
    assert_eq!(cells, want, "{t}");
    let checks = json["verifications"].to_string();
    for kind in [
        "`item` answers as the file expects",
        "`search` answers as the file expects",
        "`cart` answers as the file expects",
        "probe `item`",
        "probe `search`",
    ] {
        assert_eq!(checks.matches(kind).count(), 4, "{kind} on both stacks and both engines: {checks}");
    }
    let stored = &json["run"]["settings"]["load"]["scenario_files"];
    assert_eq!((stored[0]["name"].as_str(), stored.as_array().map(Vec::len)), (Some("shop"), Some(1)), "{stored}");

    // As a run stored before there could be several files: one `scenario_file` in the settings.
    let rewrite = r#"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
(settings,) = db.execute("SELECT settings_json FROM runs").fetchone()
s = json.loads(settings)
s["load"]["scenario_file"] = s["load"].pop("scenario_files")[0]
db.execute("UPDATE runs SET settings_json = ?", (json.dumps(s),))
db.commit()
"#;
    let py = Command::new("python3").args(["-c", rewrite, db_arg]).output().unwrap();
    assert!(py.status.success(), "{}", text(&py));
    let older = report("the older run");
    assert_eq!(older["run"]["settings"]["load"]["scenario_file"]["name"], "shop");
    assert_eq!(older["cells"].as_array().map(Vec::len), Some(4));
    let shown = bakeoff(&["report", "--db", db_arg]);
    assert!(shown.status.success() && text(&shown).contains("== file:shop =="), "{}", text(&shown));
}
