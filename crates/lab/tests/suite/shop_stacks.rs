//! The shop of scenarios/shop.toml, on a database of its own, on the repository's four stacks that
//! serve it: each variant (SQLite and PostgreSQL) verified through the lab on a database made for
//! its start, every answer held to the rows its query returns there and both live-data probes
//! passing; and the Python stack wrapped to cache items, or to ignore the search word, refused.
//! Needs go, cargo, node, python3 and PostgreSQL.

use crate::common;

use bakeoff_lab::run::ScenarioFile;
use bakeoff_lab::stacks::manifest::Stack;
use bakeoff_lab::stacks::setup::{self, SetupJob};
use bakeoff_model::records::results::{MemorySink, Verdict, VerifyReport};
use bakeoff_model::scenario::Scenario;

/// The stacks whose manifests declare `file:shop`.
const SHOP_STACKS: [&str; 4] = ["go/nethttp", "rust/actix", "node/cluster-http", "python/wsgi-gunicorn-sync"];

/// Runs `f` with a lab given scenarios/shop.toml, the file's scenario and the lab's scratch folder.
fn with_shop_lab(name: &str, f: impl FnOnce(&mut bakeoff_lab::run::Lab<'_>, Scenario, &common::Scratch)) {
    let scratch = common::Scratch::new(name);
    let (mut sink, mut events) = (MemorySink::default(), common::ignore);
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    let file = ScenarioFile::load(&common::project_root().join("scenarios/shop.toml"), "test").expect("scenarios/shop.toml");
    let shop = file.scenario();
    lab.bench.settings_mut().scenario_files = vec![file];
    f(&mut lab, shop, &scratch);
}

fn failures(report: &VerifyReport) -> Vec<String> {
    report.checks.iter().filter(|c| c.verdict == Verdict::Fail).map(|c| format!("{}: {}", c.what, c.reason)).collect()
}

fn stack(name: &str) -> Stack {
    let root = common::project_root();
    let catalog = bakeoff_lab::stacks::catalog::discover(&root.join("stacks"));
    let stack = catalog.stacks.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name}: no such stack")).clone();
    if let Some(job) = SetupJob::for_stack(&stack) {
        setup::run(&job, &root, false).unwrap_or_else(|e| panic!("{name}: setup: {e}"));
    }
    stack
}

#[test]
fn the_shop_stacks_pass_the_shop_on_sqlite_and_on_postgres() {
    with_shop_lab("shop-stacks", |lab, shop, _| {
        let mut problems = Vec::new();
        for name in SHOP_STACKS {
            let stack = stack(name);
            for variant in ["sqlite", "postgres"] {
                let Some(v) = stack.variant(variant).filter(|v| v.scenarios.contains(&shop)) else {
                    problems.push(format!("{name} [{variant}]: no such variant declaring file:shop"));
                    continue;
                };
                let report = lab.bench.verify_variant(&stack, v, &[shop], 1);
                let probes = report.checks.iter().filter(|c| c.what.starts_with("probe `") && c.verdict == Verdict::Pass).count();
                match failures(&report) {
                    wrong if !wrong.is_empty() => problems.push(format!("{name} [{variant}]: {}", wrong.join("\n  "))),
                    _ if probes != 2 => problems.push(format!("{name} [{variant}]: {probes} probes passed, not 2: {report:?}")),
                    _ => eprintln!("{name:<28} [{variant}] verified, {} checks", report.checks.len()),
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    });
}

/// A stack folder in `scratch` that serves the Python stack's app through `cheat.py`, which wraps
/// the app's statement runner: `cache-items` answers each item from the first rows read for it,
/// `ignore-search` runs every search for "red".
fn cheating_python(scratch: &common::Scratch, mode: &str) -> Stack {
    let app = common::project_root().join("stacks/python/wsgi-gunicorn-sync");
    let dir = scratch.dir.join(format!("cheat-{mode}"));
    std::fs::create_dir_all(&dir).unwrap();
    let cheat = "import os\nimport app\n\nreal, seen = app.RUN, {}\n\n\ndef run(sql, *args):\n    \
                 if sql == app.ITEM_SQL and os.environ['CHEAT'] == 'cache-items':\n        \
                 return seen.setdefault(args, real(sql, *args))\n    \
                 if sql == app.SEARCH_SQL and os.environ['CHEAT'] == 'ignore-search':\n        \
                 return real(sql, 'red')\n    return real(sql, *args)\n\n\napp.RUN = run\napplication = app.application\n";
    std::fs::write(dir.join("cheat.py"), cheat).unwrap();
    let manifest = format!(
        "language = \"python\"\nruntime = \"CPython 3\"\nframework = \"none\"\nserver = \"gunicorn\"\n\
         description = \"The Python shop, cheating\"\nkind = \"http\"\nscenarios = [\"file:shop\"]\nservices = []\n\
         toolchain = [\"python3\"]\napt = []\n\n[profile]\nserver_model = \"prefork\"\njson = \"\"\nmsgpack = \"\"\n\
         database = \"sqlite3\"\npool = \"\"\n\n[start]\ncommand = \"CHEAT={mode} exec {venv}/bin/gunicorn --bind 127.0.0.1:$PORT \
         --workers 1 --pythonpath {app},{dir} --worker-tmp-dir $RUN_DIR --no-control-socket cheat:application\"\n\n\
         [[variants]]\nname = \"sqlite\"\ndatabase = \"sqlite\"\n",
        venv = app.join(".venv").display(),
        app = app.display(),
        dir = dir.display(),
    );
    std::fs::write(dir.join("stack.toml"), manifest).unwrap();
    bakeoff_lab::stacks::catalog::load_dir(&dir).unwrap()
}

#[test]
fn a_shop_that_caches_items_or_ignores_the_search_word_is_refused() {
    stack("python/wsgi-gunicorn-sync");
    with_shop_lab("shop-cheats", |lab, shop, scratch| {
        for (mode, wrong) in [("cache-items", "probe `item`"), ("ignore-search", "`search`")] {
            let cheat = cheating_python(scratch, mode);
            // A kind's draws differ where its variables allow: at most one of the three searches
            // is for "red", the word this cheat answers right.
            let failed = failures(&lab.bench.verify_variant(&cheat, &cheat.variants[0], &[shop], 1));
            assert!(!failed.is_empty() && failed.iter().all(|f| f.contains(wrong)), "{mode}: {failed:?}");
        }
    });
}
